/*
 * Allgatherv, recursive doubling with counts (p a power of two).
 *
 * Displacements are each rank's own business (they need not agree between
 * ranks, nor be in rank order), so the exchange runs in a scratch buffer
 * where block i sits at the prefix sum of rcounts[0 .. i), which every rank
 * computes alike. At distance d = 1, 2, 4, ... rank r holds the blocks of
 * its aligned group [r & ~(d-1), +d), contiguous in scratch, exchanges them
 * with r XOR d in one message each way and so holds 2d blocks; at the end
 * every block is copied to its displacement in rbuf.
 *
 * Cost (m = the mean block): log2 p·α + (p-1)mβ + p·m·λ.
 */
#include "allgather.h"

#include <stdlib.h>

static int allgatherv_rdbl_can_serve(const ucoll_coll_args_t *a, int p)
{
    return ucoll__is_pow2(p);
}

static double allgatherv_rdbl_cost(const ucoll_coll_args_t *a, int p,
                                   const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__ceil_log2(p) * m->alpha + (p - 1) * bytes * m->beta + p * bytes * m->lambda;
}

static int allgatherv_rdbl_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                 const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t es = a->esize;
    char *rb = a->rbuf;
    size_t *off; /* off[i]: element offset of block i in tmp; off[p]: total */
    char *tmp;
    int st = UCOLL_OK, d, i, peer, mine, theirs;

    off = malloc(((size_t)p + 1) * sizeof(*off));
    if (off == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    off[0] = 0;
    for (i = 0; i < p; i++) {
        off[i + 1] = off[i] + a->rcounts[i];
    }
    if (off[p] == 0) {
        goto out;
    }
    tmp = ucoll__sched_scratch(s, off[p] * es);
    if (tmp == NULL) {
        st = UCOLL_ERR_NOMEM;
        goto out;
    }
    if ((st = ucoll__sched_copy(s, tmp + off[r] * es, a->sbuf, a->scount * es)) != UCOLL_OK) {
        goto out;
    }
    for (d = 1; d < p; d <<= 1) {
        peer = r ^ d;
        mine = r & ~(d - 1);
        theirs = peer & ~(d - 1);
        if (off[mine + d] > off[mine] &&
            (st = ucoll__sched_send(s, tmp + off[mine] * es, (off[mine + d] - off[mine]) * es,
                                    peer)) != UCOLL_OK) {
            goto out;
        }
        if (off[theirs + d] > off[theirs] &&
            (st = ucoll__sched_recv(s, tmp + off[theirs] * es, (off[theirs + d] - off[theirs]) * es,
                                    peer)) != UCOLL_OK) {
            goto out;
        }
        if ((st = ucoll__sched_round(s)) != UCOLL_OK) {
            goto out;
        }
    }
    for (i = 0; i < p && st == UCOLL_OK; i++) {
        if (i != r || !a->in_place) {
            st = ucoll__sched_copy(s, rb + a->rdispls[i] * es, tmp + off[i] * es,
                                   a->rcounts[i] * es);
        }
    }
out:
    free(off);
    return st;
}

const ucoll_algo_t ucoll__allgatherv_rdbl = {
    .id = "rdbl",
    .desc = "recursive doubling with counts, through a packed scratch (power of two ranks)",
    .can_serve = allgatherv_rdbl_can_serve,
    .cost = allgatherv_rdbl_cost,
    .build = allgatherv_rdbl_build,
};

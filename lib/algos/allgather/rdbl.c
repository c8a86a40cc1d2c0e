/*
 * Allgather, recursive doubling (p a power of two).
 *
 * At distance d = 1, 2, 4, ... rank r holds the d blocks of its aligned
 * group [r & ~(d-1), +d), exchanges them with r XOR d, and so holds 2d
 * blocks. Everything stays in place in rbuf: both groups are contiguous.
 *
 * Cost (m = one rank's block): log2 p·α + (p-1)mβ.
 */
#include "allgather.h"

static int allgather_rdbl_can_serve(const ucoll_coll_args_t *a, int p)
{
    return ucoll__is_pow2(p);
}

static double allgather_rdbl_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                  const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__ceil_log2(p) * m->alpha + (p - 1) * bytes * m->beta;
}

static int allgather_rdbl_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t bytes = a->count * a->esize;
    char *rb = a->rbuf;
    int st, d, peer;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if ((st = ucoll__sched_copy_if(s, rb + (size_t)r * bytes, a->sbuf, bytes)) != UCOLL_OK) {
        return st;
    }
    for (d = 1; d < p; d <<= 1) {
        /* the own block alone first, from sbuf (see allgather.h) */
        const char *src = d == 1 ? (const char *)a->sbuf : rb + (size_t)(r & ~(d - 1)) * bytes;

        peer = r ^ d;
        if ((st = ucoll__sched_send(s, src, d * bytes, peer)) != UCOLL_OK ||
            (st = ucoll__sched_recv(s, rb + (size_t)(peer & ~(d - 1)) * bytes, d * bytes, peer)) !=
                UCOLL_OK ||
            (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__allgather_rdbl = {
    .id = "rdbl",
    .desc = "recursive doubling (power of two ranks)",
    .can_serve = allgather_rdbl_can_serve,
    .cost = allgather_rdbl_cost,
    .build = allgather_rdbl_build,
};

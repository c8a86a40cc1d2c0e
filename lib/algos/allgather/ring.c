/*
 * Allgather, ring.
 *
 * Rank r places its block, then in step i = 0 .. p-2 sends block (r - i)
 * to r + 1 and receives block (r - i - 1) from r - 1, all in place in rbuf:
 * each step forwards the block that arrived in the step before.
 *
 * Cost (m = one rank's block): (p-1)(α + mβ).
 */
#include "allgather.h"

static double allgather_ring_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                  const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (p - 1) * (m->alpha + bytes * m->beta);
}

static int allgather_ring_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t bytes = a->count * a->esize;
    char *rb = a->rbuf;
    int st, i;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if ((st = ucoll__sched_copy_if(s, rb + (size_t)r * bytes, a->sbuf, bytes)) != UCOLL_OK) {
        return st;
    }
    for (i = 0; i < p - 1; i++) {
        /* the own block from sbuf (see allgather.h) */
        const char *src = i == 0 ? (const char *)a->sbuf : rb + (size_t)((r - i + p) % p) * bytes;

        if ((st = ucoll__sched_send(s, src, bytes, (r + 1) % p)) != UCOLL_OK ||
            (st = ucoll__sched_recv(s, rb + (size_t)((r - i - 1 + p) % p) * bytes, bytes,
                                    (r - 1 + p) % p)) != UCOLL_OK ||
            (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__allgather_ring = {
    .id = "ring",
    .desc = "pass blocks around the ring",
    .can_serve = NULL,
    .cost = allgather_ring_cost,
    .build = allgather_ring_build,
};

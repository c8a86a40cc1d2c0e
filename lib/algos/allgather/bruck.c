/*
 * Allgather, Bruck (any p).
 *
 * Rank r works in a rotated buffer tmp where tmp[j] is block (r + j) % p;
 * it starts with tmp[0] = its own block. At distance d = 1, 2, 4, ... it
 * sends tmp[0, c) to r - d and receives tmp[d, d + c) from r + d, with
 * c = min(d, p - d); after ⌈log2 p⌉ steps tmp holds all p blocks and a
 * final local rotation puts them in rank order in rbuf. Rank 0's rotation
 * is the identity, so it works in rbuf directly.
 *
 * Cost (m = one rank's block): ⌈log2 p⌉α + (p-1)mβ + p·m·λ.
 */
#include "allgather.h"

static double allgather_bruck_cost(const ucoll_coll_args_t *a, int p,
                                   const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__ceil_log2(p) * m->alpha + (p - 1) * bytes * m->beta + p * bytes * m->lambda;
}

static int allgather_bruck_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                 const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t bytes = a->count * a->esize;
    char *rb = a->rbuf;
    char *tmp;
    size_t c;
    int st, d;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    tmp = (r == 0) ? rb : ucoll__sched_scratch(s, (size_t)p * bytes);
    if (tmp == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if ((st = ucoll__sched_copy_if(s, tmp, a->sbuf, bytes)) != UCOLL_OK) {
        return st;
    }
    for (d = 1; d < p; d <<= 1) {
        c = (size_t)UCOLL_MIN(d, p - d) * bytes;
        if ((st = ucoll__sched_send(s, tmp, c, (r - d + p) % p)) != UCOLL_OK ||
            (st = ucoll__sched_recv(s, tmp + (size_t)d * bytes, c, (r + d) % p)) != UCOLL_OK ||
            (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    if (r == 0) {
        return UCOLL_OK;
    }
    /* tmp[0, p - r) are blocks r .. p-1, tmp[p - r, p) are blocks 0 .. r-1 */
    if ((st = ucoll__sched_copy(s, rb + (size_t)r * bytes, tmp, (size_t)(p - r) * bytes)) !=
        UCOLL_OK) {
        return st;
    }
    return ucoll__sched_copy(s, rb, tmp + (size_t)(p - r) * bytes, (size_t)r * bytes);
}

const ucoll_algo_t ucoll__allgather_bruck = {
    .id = "bruck",
    .desc = "Bruck, any p, final local rotation",
    .can_serve = NULL,
    .cost = allgather_bruck_cost,
    .build = allgather_bruck_build,
};

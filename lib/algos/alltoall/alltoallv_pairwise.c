/*
 * Alltoallv, pairwise exchange.
 *
 * As the alltoall pairwise: p - 1 steps, in step i rank r exchanges with
 * r XOR i (power of two) or sends to (r + i) % p and receives from
 * (r - i) % p, with each block at its own count and displacement. Empty
 * blocks move no message (sender and receiver agree on each count).
 *
 * Cost (m = the largest block): (p-1)(α + mβ).
 */
#include "alltoall.h"

static double alltoallv_pairwise_cost(const ucoll_coll_args_t *a, int p,
                                      const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (p - 1) * (m->alpha + bytes * m->beta);
}

/* Bytes of rbuf an in-place call keeps its blocks in. */
static size_t alltoallv_extent(const ucoll_coll_args_t *a, int p)
{
    size_t max = 0;
    int i;

    for (i = 0; i < p; i++) {
        max = UCOLL_MAX(max, (a->rdispls[i] + a->rcounts[i]) * a->esize);
    }
    return max;
}

static int alltoallv_pairwise_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                    const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int pow2 = ucoll__is_pow2(p);
    size_t es = a->esize;
    char *rb = a->rbuf;
    const char *src;
    int st, i, to, from;

    if ((src = ucoll__alltoall_source(s, a, alltoallv_extent(a, p))) == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (!a->in_place &&
        (st = ucoll__sched_copy_if(s, rb + a->rdispls[r] * es, src + a->sdispls[r] * es,
                                   a->scounts[r] * es)) != UCOLL_OK) {
        return st;
    }
    for (i = 1; i < p; i++) {
        to = pow2 ? (r ^ i) : (r + i) % p;
        from = pow2 ? (r ^ i) : (r - i + p) % p;
        if (a->scounts[to] != 0 && (st = ucoll__sched_send(s, src + a->sdispls[to] * es,
                                                           a->scounts[to] * es, to)) != UCOLL_OK) {
            return st;
        }
        if (a->rcounts[from] != 0 &&
            (st = ucoll__sched_recv(s, rb + a->rdispls[from] * es, a->rcounts[from] * es, from)) !=
                UCOLL_OK) {
            return st;
        }
        if ((st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__alltoallv_pairwise = {
    .id = "pairwise",
    .desc = "p-1 pairwise exchanges (XOR partners for a power of two)",
    .can_serve = NULL,
    .cost = alltoallv_pairwise_cost,
    .build = alltoallv_pairwise_build,
};

/*
 * Alltoall, pairwise exchange.
 *
 * p - 1 steps, one exchange each: in step i rank r sends its block for
 * partner and receives partner's block for r, with partner = r XOR i when p
 * is a power of two (a perfect matching every step), else it sends to
 * (r + i) % p and receives from (r - i) % p. Each step waits for the one
 * before, so at most one message is in flight each way.
 *
 * Cost (m = one pair's block): (p-1)(α + mβ) + mλ (the own block; in
 * place, the whole input copied aside: pmλ).
 */
#include "alltoall.h"

static double alltoall_pairwise_cost(const ucoll_coll_args_t *a, int p,
                                     const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (p - 1) * (m->alpha + bytes * m->beta) + ucoll__alltoall_local_copy(a, p, m);
}

static int alltoall_pairwise_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                   const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int pow2 = ucoll__is_pow2(p);
    size_t bytes = a->count * a->esize;
    char *rb = a->rbuf;
    const char *src;
    int st, i, to, from;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if ((src = ucoll__alltoall_source(s, a, (size_t)p * bytes)) == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (!a->in_place && (st = ucoll__sched_copy(s, rb + (size_t)r * bytes, src + (size_t)r * bytes,
                                                bytes)) != UCOLL_OK) {
        return st;
    }
    for (i = 1; i < p; i++) {
        to = pow2 ? (r ^ i) : (r + i) % p;
        from = pow2 ? (r ^ i) : (r - i + p) % p;
        if ((st = ucoll__sched_send(s, src + (size_t)to * bytes, bytes, to)) != UCOLL_OK ||
            (st = ucoll__sched_recv(s, rb + (size_t)from * bytes, bytes, from)) != UCOLL_OK ||
            (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__alltoall_pairwise = {
    .id = "pairwise",
    .desc = "p-1 pairwise exchanges (XOR partners for a power of two)",
    .can_serve = NULL,
    .cost = alltoall_pairwise_cost,
    .build = alltoall_pairwise_build,
};

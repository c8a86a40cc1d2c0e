/*
 * Allgather, gather then broadcast.
 *
 * A binomial gather of all blocks to rank 0 (the gather's own algorithm),
 * then a binomial broadcast of the p·m result from rank 0: rank r receives
 * it from r - lowbit(r) and forwards it to r + 2^i for every 2^i below
 * lowbit(r), largest first.
 *
 * Cost (m = one rank's block): 2⌈log2 p⌉α + (p-1)mβ + ⌈log2 p⌉·p·mβ.
 */
#include "allgather.h"
#include "algos/gather/gather.h"

static double allgather_gather_bcast_cost(const ucoll_coll_args_t *a, int p,
                                          const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    int lg = ucoll__ceil_log2(p);

    return 2 * lg * m->alpha + (p - 1) * bytes * m->beta + lg * p * bytes * m->beta;
}

static int allgather_gather_bcast_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                        const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t total = (size_t)p * a->count * a->esize;
    ucoll_coll_args_t ga = *a;
    int span, mask, st;

    if (total == 0) {
        return UCOLL_OK;
    }
    ga.coll = UCOLL_COLL_GATHER;
    ga.root = 0;
    if ((st = ucoll__gather_binomial.build(s, &ga, prm)) != UCOLL_OK ||
        (st = ucoll__sched_round(s)) != UCOLL_OK) {
        return st;
    }
    span = ucoll__binomial_span(r, p);
    if (r != 0) {
        if ((st = ucoll__sched_recv(s, a->rbuf, total, r - span)) != UCOLL_OK ||
            (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    for (mask = span >> 1; mask > 0; mask >>= 1) {
        if (r + mask < p && (st = ucoll__sched_send(s, a->rbuf, total, r + mask)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__allgather_gather_bcast = {
    .id = "gather_bcast",
    .desc = "binomial gather to rank 0, then binomial broadcast",
    .can_serve = NULL,
    .cost = allgather_gather_bcast_cost,
    .build = allgather_gather_bcast_build,
};

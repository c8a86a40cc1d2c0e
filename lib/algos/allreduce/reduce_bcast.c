/*
 * Allreduce as a binomial reduce to rank 0 followed by a binomial
 * broadcast from rank 0, in one schedule.
 *
 * Cost: 2⌈log2 p⌉(α + mβ) + ⌈log2 p⌉mγ.
 */
#include "allreduce.h"
#include "algos/bcast/bcast.h"
#include "algos/reduce/reduce.h"

static double reduce_bcast_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__ceil_log2(p) * (2 * (m->alpha + bytes * m->beta) + bytes * m->gamma);
}

static int reduce_bcast_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                              const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    ucoll_coll_args_t ra = *a;
    size_t bytes = a->count * a->esize;
    int st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    ra.coll = UCOLL_COLL_REDUCE;
    ra.root = 0;
    if ((st = ucoll__reduce_binomial.build(s, &ra, prm)) || (st = ucoll__sched_round(s))) {
        return st;
    }
    return comm->size > 1 ? ucoll__bcast_binomial_steps(s, a->rbuf, bytes, 0) : UCOLL_OK;
}

const ucoll_algo_t ucoll__allreduce_reduce_bcast = {
    .id = "reduce_bcast",
    .desc = "binomial reduce to rank 0, then binomial broadcast",
    .cost = reduce_bcast_cost,
    .build = reduce_bcast_build,
};

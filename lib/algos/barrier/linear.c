/*
 * Barrier, linear: every rank signals rank 0; once rank 0 has heard from
 * all, it releases each of them.
 *
 * Cost: 2(p-1)α (rank 0 handles p-1 messages each way, one at a time; one
 * wake per direction: ucoll__model_fanout).
 */
#include "barrier.h"

static double linear_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                          const ucoll_model_t *m)
{
    return 2.0 * ucoll__model_fanout(m, p - 1);
}

static int linear_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                        const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int st;

    if (r != 0) {
        if ((st = ucoll__sched_send(s, NULL, 0, 0)) || (st = ucoll__sched_round(s))) {
            return st;
        }
        return ucoll__sched_recv(s, NULL, 0, 0);
    }
    for (int i = 1; i < p; i++) {
        if ((st = ucoll__sched_recv(s, NULL, 0, i))) {
            return st;
        }
    }
    if ((st = ucoll__sched_round(s))) {
        return st;
    }
    for (int i = 1; i < p; i++) {
        if ((st = ucoll__sched_send(s, NULL, 0, i))) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__barrier_linear = {
    .id = "linear",
    .desc = "fan-in to rank 0 and fan-out, one message per rank",
    .cost = linear_cost,
    .build = linear_build,
};

/*
 * Broadcast, linear (flat tree): the root sends the whole message to every
 * other rank in turn.
 *
 * Cost: (p-1)(α + mβ) (one wake for the round: ucoll__model_fanout).
 */
#include "bcast.h"

static double linear_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                          const ucoll_model_t *m)
{
    return ucoll__model_fanout(m, p - 1) + (p - 1) * (double)a->count * a->esize * m->beta;
}

static int linear_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                        const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    size_t bytes = a->count * a->esize;
    int st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (comm->rank != a->root) {
        return ucoll__sched_recv(s, a->rbuf, bytes, a->root);
    }
    for (int i = 1; i < p; i++) {
        if ((st = ucoll__sched_send(s, a->rbuf, bytes, ucoll__rank_of(i, a->root, p)))) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__bcast_linear = {
    .id = "linear",
    .desc = "root sends to every rank in turn",
    .cost = linear_cost,
    .build = linear_build,
};

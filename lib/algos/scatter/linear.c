/*
 * Scatter, linear (flat tree).
 *
 * The root posts a send of every other rank's block at once, straight from
 * sbuf, and copies its own; every other rank receives its block. One round.
 *
 * Cost (m = one rank's block): (p-1)(α + mβ) at the root (one wake for
 * the round when oversubscribed: ucoll__model_fanout).
 */
#include "scatter.h"

static double scatter_linear_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                  const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__model_fanout(m, p - 1) + (p - 1) * bytes * m->beta;
}

static int scatter_linear_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    size_t bytes = a->count * a->esize;
    const char *sb = a->sbuf;
    int st, i;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (comm->rank != a->root) {
        return ucoll__sched_recv(s, a->rbuf, bytes, a->root);
    }
    for (i = 0; i < comm->size; i++) {
        if (i == a->root) {
            st = ucoll__sched_copy_if(s, a->rbuf, sb + i * bytes, bytes);
        } else {
            st = ucoll__sched_send(s, sb + i * bytes, bytes, i);
        }
        if (st != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__scatter_linear = {
    .id = "linear",
    .desc = "root sends every block directly",
    .can_serve = NULL,
    .cost = scatter_linear_cost,
    .build = scatter_linear_build,
};

/*
 * Scatterv, linear (flat tree).
 *
 * The root posts a send of every non-empty block at once, straight from sbuf
 * at its displacement, and copies its own; every other rank with a non-empty
 * block receives it. Empty blocks move no message.
 *
 * Cost (m = the largest block): (p-1)(α + mβ) at the root (one wake for
 * the round when oversubscribed: ucoll__model_fanout).
 */
#include "scatter.h"

static double scatterv_linear_cost(const ucoll_coll_args_t *a, int p,
                                   const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__model_fanout(m, p - 1) + (p - 1) * bytes * m->beta;
}

static int scatterv_linear_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                 const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    size_t es = a->esize;
    const char *sb = a->sbuf;
    int st, i;

    if (comm->rank != a->root) {
        return (a->rcount == 0) ? UCOLL_OK : ucoll__sched_recv(s, a->rbuf, a->rcount * es, a->root);
    }
    for (i = 0; i < comm->size; i++) {
        if (i == a->root) {
            st = ucoll__sched_copy_if(s, a->rbuf, sb + a->sdispls[i] * es, a->scounts[i] * es);
        } else if (a->scounts[i] != 0) {
            st = ucoll__sched_send(s, sb + a->sdispls[i] * es, a->scounts[i] * es, i);
        } else {
            st = UCOLL_OK;
        }
        if (st != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__scatterv_linear = {
    .id = "linear",
    .desc = "root sends every block directly",
    .can_serve = NULL,
    .cost = scatterv_linear_cost,
    .build = scatterv_linear_build,
};

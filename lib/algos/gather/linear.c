/*
 * Gather, linear (flat tree).
 *
 * Every non-root sends its block to the root; the root posts the p-1
 * receives at once, straight into their places in rbuf, and copies its own
 * block. One round.
 *
 * Cost (m = one rank's block): (p-1)(α + mβ) at the root (one wake for
 * the round when oversubscribed: ucoll__model_fanout).
 */
#include "gather.h"

static double gather_linear_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                 const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__model_fanout(m, p - 1) + (p - 1) * bytes * m->beta;
}

static int gather_linear_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                               const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    size_t bytes = a->count * a->esize;
    int st, i;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (comm->rank != a->root) {
        return ucoll__sched_send(s, a->sbuf, bytes, a->root);
    }
    for (i = 0; i < comm->size; i++) {
        if (i == a->root) {
            st = ucoll__sched_copy_if(s, (char *)a->rbuf + i * bytes, a->sbuf, bytes);
        } else {
            st = ucoll__sched_recv(s, (char *)a->rbuf + i * bytes, bytes, i);
        }
        if (st != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__gather_linear = {
    .id = "linear",
    .desc = "root receives every block directly",
    .can_serve = NULL,
    .cost = gather_linear_cost,
    .build = gather_linear_build,
};

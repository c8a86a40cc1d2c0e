/*
 * Gatherv, linear (flat tree).
 *
 * Every non-root with a non-empty block sends it to the root; the root posts
 * a receive for every non-empty block at once, straight into rbuf at its
 * displacement, and copies its own. Empty blocks move no message (the
 * sender's count and the root's count for it agree, as MPI requires).
 *
 * Cost (m = the largest block): (p-1)(α + mβ) at the root (one wake for
 * the round when oversubscribed: ucoll__model_fanout).
 */
#include "gather.h"

static double gatherv_linear_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                  const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__model_fanout(m, p - 1) + (p - 1) * bytes * m->beta;
}

static int gatherv_linear_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    size_t es = a->esize;
    char *rb = a->rbuf;
    int st, i;

    if (comm->rank != a->root) {
        return (a->scount == 0) ? UCOLL_OK : ucoll__sched_send(s, a->sbuf, a->scount * es, a->root);
    }
    for (i = 0; i < comm->size; i++) {
        if (i == a->root) {
            st = ucoll__sched_copy_if(s, rb + a->rdispls[i] * es, a->sbuf, a->scount * es);
        } else if (a->rcounts[i] != 0) {
            st = ucoll__sched_recv(s, rb + a->rdispls[i] * es, a->rcounts[i] * es, i);
        } else {
            st = UCOLL_OK;
        }
        if (st != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__gatherv_linear = {
    .id = "linear",
    .desc = "root receives every block directly",
    .can_serve = NULL,
    .cost = gatherv_linear_cost,
    .build = gatherv_linear_build,
};

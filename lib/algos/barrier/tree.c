/*
 * Barrier, binomial tree: fan-in to rank 0, then fan-out.
 *
 * Every rank waits for all its children (one round), signals its parent,
 * waits for the parent's release and releases its children. The tree is the
 * binomial tree of ucoll__binomial_span rooted at 0.
 *
 * Cost: 2⌈log2 p⌉α.
 */
#include "barrier.h"

static double tree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    return 2 * ucoll__ceil_log2(p) * m->alpha;
}

static int tree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int span = ucoll__binomial_span(r, p);
    int parent = ucoll__binomial_parent(r);
    int st;

    for (int c = 1; c < span; c *= 2) {
        if (r + c < p && (st = ucoll__sched_recv(s, NULL, 0, r + c))) {
            return st;
        }
    }
    if (parent >= 0) {
        if ((st = ucoll__sched_round(s)) || (st = ucoll__sched_send(s, NULL, 0, parent)) ||
            (st = ucoll__sched_round(s)) || (st = ucoll__sched_recv(s, NULL, 0, parent))) {
            return st;
        }
    }
    if ((st = ucoll__sched_round(s))) {
        return st;
    }
    for (int c = span / 2; c >= 1; c /= 2) {
        if (r + c < p && (st = ucoll__sched_send(s, NULL, 0, r + c))) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__barrier_tree = {
    .id = "tree",
    .desc = "binomial fan-in to rank 0, then fan-out",
    .cost = tree_cost,
    .build = tree_build,
};

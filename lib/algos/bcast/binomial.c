/*
 * Broadcast, binomial tree.
 *
 * Over sranks: srank r receives the message from r - lowbit(r), then sends
 * it to r + 2^i for every 2^i below lowbit(r) (the root: every 2^i < p),
 * largest subtree first.
 *
 * Cost: ⌈log2 p⌉(α + mβ), optimal for small m.
 */
#include "bcast.h"

static double binomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    return ucoll__ceil_log2(p) * (m->alpha + (double)a->count * a->esize * m->beta);
}

int ucoll__bcast_binomial_steps(ucoll_sched_t *s, void *buf, size_t bytes, int root)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, root, p);
    int span = ucoll__binomial_span(sr, p);
    int st;

    if (sr != 0) {
        int parent = ucoll__rank_of(ucoll__binomial_parent(sr), root, p);
        if ((st = ucoll__sched_recv(s, buf, bytes, parent)) || (st = ucoll__sched_round(s))) {
            return st;
        }
    }
    for (int d = span / 2; d >= 1; d /= 2) {
        if (sr + d < p &&
            (st = ucoll__sched_send(s, buf, bytes, ucoll__rank_of(sr + d, root, p)))) {
            return st;
        }
    }
    return ucoll__sched_round(s);
}

static int binomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    size_t bytes = a->count * a->esize;

    return bytes ? ucoll__bcast_binomial_steps(s, a->rbuf, bytes, a->root) : UCOLL_OK;
}

const ucoll_algo_t ucoll__bcast_binomial = {
    .id = "binomial",
    .desc = "binomial tree, largest subtree first",
    .cost = binomial_cost,
    .build = binomial_build,
};

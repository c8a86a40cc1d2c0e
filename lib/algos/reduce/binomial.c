/*
 * Reduce, binomial tree: the mirror of the binomial broadcast over sranks.
 *
 * A rank receives the partial result of each child's subtree, smallest
 * subtree (nearest child) first, into one scratch vector, folds it into its
 * accumulator (acc = acc op child) and, once all children are in, sends the
 * accumulator to its parent. Leaves send their input directly. Commutative
 * ops (every predefined op is).
 *
 * Cost: ⌈log2 p⌉(α + mβ + mγ).
 */
#include "reduce.h"

static double binomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__ceil_log2(p) * (m->alpha + bytes * m->beta + bytes * m->gamma);
}

static int binomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, a->root, p);
    int span = ucoll__binomial_span(sr, p);
    size_t bytes = a->count * a->esize;
    const char *acc = a->sbuf; /* the running value: the input until the first reduction */
    char *dst = NULL, *tmp = NULL;
    int st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, a->rbuf, a->sbuf, bytes);
    }
    if (sr == 0 || (sr + 1 < p && span > 1)) { /* a child at least: sr + 1 */
        dst = (sr == 0) ? a->rbuf : ucoll__sched_scratch(s, bytes);
        if (dst == NULL) {
            return UCOLL_ERR_NOMEM;
        }
    }
    for (int d = 1; d < span && sr + d < p; d *= 2) {
        if (tmp == NULL && (tmp = ucoll__sched_scratch(s, bytes)) == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        if ((st = ucoll__sched_recv(s, tmp, bytes, ucoll__rank_of(sr + d, a->root, p))) ||
            (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, dst, acc, tmp, a->count, a->dt, a->op))) {
            return st;
        }
        acc = dst;
    }
    if (sr != 0) {
        return ucoll__sched_send(s, acc, bytes,
                                 ucoll__rank_of(ucoll__binomial_parent(sr), a->root, p));
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__reduce_binomial = {
    .id = "binomial",
    .desc = "binomial tree, nearest child first",
    .cost = binomial_cost,
    .build = binomial_build,
};

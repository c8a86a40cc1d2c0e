/*
 * Reduce, linear: the root receives the p-1 other vectors one at a time
 * and combines them in rank order, v0 op v1 op ... op v(p-1), so the
 * result is the same for any root and for non-commutative ops.
 *
 * Cost: (p-1)(α + mβ + mγ).
 */
#include "reduce.h"

static double linear_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                          const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (p - 1) * (m->alpha + bytes * m->beta + bytes * m->gamma);
}

static int linear_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                        const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank, root = a->root;
    size_t bytes = a->count * a->esize;
    const char *own = a->sbuf;
    char *acc = a->rbuf, *tmp;
    int st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (r != root) {
        return ucoll__sched_send(s, a->sbuf, bytes, root);
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, acc, own, bytes);
    }
    tmp = ucoll__sched_scratch(s, bytes);
    if (tmp == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (root != 0) {
        if (own == acc) {
            /* in place: keep the root's vector before rank 0's lands on it */
            char *keep = ucoll__sched_scratch(s, bytes);
            if (keep == NULL || (st = ucoll__sched_copy(s, keep, own, bytes))) {
                return keep ? st : UCOLL_ERR_NOMEM;
            }
            own = keep;
        }
        if ((st = ucoll__sched_recv(s, acc, bytes, 0)) || (st = ucoll__sched_round(s))) {
            return st;
        }
    }
    for (int i = 1; i < p; i++) {
        /* root 0 does not copy its input into acc first: the first
         * reduction reads it */
        const char *x = i == 1 && root == 0 ? own : acc;

        if (i == root) {
            st = ucoll__sched_reduce(s, acc, x, own, a->count, a->dt, a->op);
        } else if ((st = ucoll__sched_recv(s, tmp, bytes, i)) == UCOLL_OK &&
                   (st = ucoll__sched_round(s)) == UCOLL_OK) {
            st = ucoll__sched_reduce(s, acc, x, tmp, a->count, a->dt, a->op);
        }
        if (st) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__reduce_linear = {
    .id = "linear",
    .desc = "root receives and combines every vector in rank order",
    .cost = linear_cost,
    .build = linear_build,
};

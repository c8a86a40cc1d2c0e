/*
 * Scatter, binomial tree.
 *
 * Over sranks (srank = rank relative to the root), srank r owns the sranks
 * [r, r + lowbit(r)) clipped to p. The root sends each child the blocks of
 * the child's whole subtree in one message, largest subtree first; an inner
 * rank receives its subtree's blocks from its parent r - lowbit(r) into
 * scratch, then forwards each child's part and keeps its own block. Leaves
 * receive straight into rbuf.
 *
 * At the root the blocks of a subtree are contiguous in sbuf except for the
 * one subtree that straddles the wrap of rank order when root != 0: only
 * that one is packed into scratch first (the textbook rotates everything).
 *
 * Cost (m = one rank's block): ⌈log2 p⌉α + (p-1)mβ, plus at most p·m·λ for
 * packing when root != 0.
 */
#include "scatter.h"

static double scatter_binomial_cost(const ucoll_coll_args_t *a, int p,
                                    const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    double t = ucoll__ceil_log2(p) * m->alpha + (p - 1) * bytes * m->beta;

    if (a->root != 0) {
        t += bytes * p * m->lambda;
    }
    return t;
}

static int scatter_binomial_root(ucoll_sched_t *s, const ucoll_coll_args_t *a, int p, size_t bytes)
{
    int root = a->root;
    int span = ucoll__binomial_span(0, p);
    const char *sb = a->sbuf;
    int mask, n, first, st;
    size_t head;
    char *tmp;

    for (mask = span >> 1; mask > 0; mask >>= 1) {
        if (mask >= p) {
            continue;
        }
        n = UCOLL_MIN(mask, p - mask);
        first = mask + root;
        if (first < p && first + n > p) {
            head = (size_t)(p - first);
            tmp = ucoll__sched_scratch(s, (size_t)n * bytes);
            if (tmp == NULL) {
                return UCOLL_ERR_NOMEM;
            }
            if ((st = ucoll__sched_copy(s, tmp, sb + (size_t)first * bytes, head * bytes)) !=
                    UCOLL_OK ||
                (st = ucoll__sched_copy(s, tmp + head * bytes, sb, (n - head) * bytes)) !=
                    UCOLL_OK ||
                (st = ucoll__sched_send(s, tmp, (size_t)n * bytes, first)) != UCOLL_OK) {
                return st;
            }
        } else {
            st = ucoll__sched_send(s, sb + (size_t)(first % p) * bytes, (size_t)n * bytes,
                                   first % p);
            if (st != UCOLL_OK) {
                return st;
            }
        }
    }
    return ucoll__sched_copy_if(s, a->rbuf, sb + (size_t)root * bytes, bytes);
}

static int scatter_binomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                  const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t bytes = a->count * a->esize;
    int span, n, mask, parent, st;
    char *buf;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (sr == 0) {
        return scatter_binomial_root(s, a, p, bytes);
    }
    span = ucoll__binomial_span(sr, p);
    n = UCOLL_MIN(span, p - sr);
    parent = ucoll__rank_of(sr - span, a->root, p);
    if (n == 1) {
        return ucoll__sched_recv(s, a->rbuf, bytes, parent);
    }
    buf = ucoll__sched_scratch(s, (size_t)n * bytes);
    if (buf == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if ((st = ucoll__sched_recv(s, buf, (size_t)n * bytes, parent)) != UCOLL_OK ||
        (st = ucoll__sched_round(s)) != UCOLL_OK ||
        (st = ucoll__sched_copy(s, a->rbuf, buf, bytes)) != UCOLL_OK) {
        return st;
    }
    for (mask = span >> 1; mask > 0; mask >>= 1) {
        if (sr + mask >= p) {
            continue;
        }
        st = ucoll__sched_send(s, buf + (size_t)mask * bytes,
                               (size_t)UCOLL_MIN(mask, p - sr - mask) * bytes,
                               ucoll__rank_of(sr + mask, a->root, p));
        if (st != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__scatter_binomial = {
    .id = "binomial",
    .desc = "binomial tree, each child gets its whole subtree",
    .can_serve = NULL,
    .cost = scatter_binomial_cost,
    .build = scatter_binomial_build,
};

/*
 * Gather, binomial tree.
 *
 * Mirror of the binomial scatter over sranks (srank = rank relative to the
 * root). Srank r owns the sranks [r, r + lowbit(r)) clipped to p. A rank
 * gathers its subtree in srank order in a scratch buffer (own block first,
 * then each child's subtree as one message, all receives posted at once),
 * and when all have arrived sends the whole subtree to its parent
 * r - lowbit(r) in one message. Leaves send their block straight from sbuf.
 *
 * The root receives each child's subtree directly into its place in rbuf;
 * when root != 0 the sranks map to ranks with a wrap at srank p - root, and
 * the one subtree that straddles it is received into scratch and then
 * copied in two pieces (the "rotation" of the textbook, here limited to the
 * one straddling subtree).
 *
 * Cost (m = one rank's block): ⌈log2 p⌉α + (p-1)mβ, plus at most p·m·λ for
 * the copies when root != 0.
 */
#include "gather.h"

static double gather_binomial_cost(const ucoll_coll_args_t *a, int p,
                                   const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    double t = ucoll__ceil_log2(p) * m->alpha + (p - 1) * bytes * m->beta;

    if (a->root != 0) {
        t += bytes * p * m->lambda;
    }
    return t;
}

/* The root: children's subtrees go straight into rbuf, except one that
 * straddles the wrap of rank order, which goes through scratch. */
static int gather_binomial_root(ucoll_sched_t *s, const ucoll_coll_args_t *a, int p, size_t bytes)
{
    int root = a->root;
    int span = ucoll__binomial_span(0, p);
    char *rb = a->rbuf;
    char *tmp = NULL;
    int wrap_lo = 0, wrap_n = 0;
    int mask, n, first, st;

    st = ucoll__sched_copy_if(s, rb + (size_t)root * bytes, a->sbuf, bytes);
    if (st != UCOLL_OK) {
        return st;
    }
    for (mask = span >> 1; mask > 0; mask >>= 1) {
        if (mask >= p) {
            continue;
        }
        n = UCOLL_MIN(mask, p - mask);
        first = mask + root; /* rank of the child, before wrapping */
        if (first < p && first + n > p) {
            tmp = ucoll__sched_scratch(s, (size_t)n * bytes);
            if (tmp == NULL) {
                return UCOLL_ERR_NOMEM;
            }
            wrap_lo = mask;
            wrap_n = n;
            st = ucoll__sched_recv(s, tmp, (size_t)n * bytes, first);
        } else {
            st = ucoll__sched_recv(s, rb + (size_t)(first % p) * bytes, (size_t)n * bytes,
                                   first % p);
        }
        if (st != UCOLL_OK) {
            return st;
        }
    }
    if (tmp != NULL) {
        /* sranks [wrap_lo, p - root) are ranks [wrap_lo + root, p), the rest
         * are ranks [0, ...) */
        size_t head = (size_t)(p - root - wrap_lo);

        if ((st = ucoll__sched_round(s)) != UCOLL_OK ||
            (st = ucoll__sched_copy(s, rb + (size_t)(wrap_lo + root) * bytes, tmp, head * bytes)) !=
                UCOLL_OK ||
            (st = ucoll__sched_copy(s, rb, tmp + head * bytes, (wrap_n - head) * bytes)) !=
                UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

static int gather_binomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
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
        return gather_binomial_root(s, a, p, bytes);
    }
    span = ucoll__binomial_span(sr, p);
    n = UCOLL_MIN(span, p - sr);
    parent = ucoll__rank_of(sr - span, a->root, p);
    if (n == 1) {
        return ucoll__sched_send(s, a->sbuf, bytes, parent);
    }
    buf = ucoll__sched_scratch(s, (size_t)n * bytes);
    if (buf == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if ((st = ucoll__sched_copy(s, buf, a->sbuf, bytes)) != UCOLL_OK) {
        return st;
    }
    for (mask = span >> 1; mask > 0; mask >>= 1) {
        if (sr + mask >= p) {
            continue;
        }
        st = ucoll__sched_recv(s, buf + (size_t)mask * bytes,
                               (size_t)UCOLL_MIN(mask, p - sr - mask) * bytes,
                               ucoll__rank_of(sr + mask, a->root, p));
        if (st != UCOLL_OK) {
            return st;
        }
    }
    if ((st = ucoll__sched_round(s)) != UCOLL_OK) {
        return st;
    }
    return ucoll__sched_send(s, buf, (size_t)n * bytes, parent);
}

const ucoll_algo_t ucoll__gather_binomial = {
    .id = "binomial",
    .desc = "binomial tree, subtrees forwarded whole",
    .can_serve = NULL,
    .cost = gather_binomial_cost,
    .build = gather_binomial_build,
};

/*
 * Reduce, in-order binary tree: keeps rank order, so the result is
 * v0 op v1 op ... op v(p-1) bracketed the same way for every root.
 *
 * The tree over ranks [0, p): the node of a range [lo, hi) is its middle
 * rank ⌊(lo+hi)/2⌋, its left subtree the range's lower part and its right
 * subtree the upper part. A node receives both subtrees' results, combines
 * left op own op right and sends that to its parent; the tree's root sends
 * the result to the user's root when they differ.
 *
 * Cost: ≈ 2⌈log2 p⌉(α + mβ + mγ).
 */
#include "reduce.h"

static double inorder_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return 2 * ucoll__ceil_log2(p) * (m->alpha + bytes * (m->beta + m->gamma)) +
           (p > 1 ? m->alpha + bytes * m->beta : 0);
}

/* Parent (-1 for the tree root) and children (-1 when absent) of rank r. */
static void inorder_node(int r, int p, int *parent, int *left, int *right)
{
    int lo = 0, hi = p, mid;

    *parent = -1;
    for (;;) {
        mid = lo + (hi - lo) / 2;
        if (r == mid) {
            break;
        }
        *parent = mid;
        if (r < mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    *left = (lo < mid) ? lo + (mid - lo) / 2 : -1;
    *right = (mid + 1 < hi) ? mid + 1 + (hi - mid - 1) / 2 : -1;
}

static int inorder_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t bytes = a->count * a->esize;
    const char *res = a->sbuf;
    char *tl = NULL, *tr = NULL, *acc;
    int parent, left, right, troot, st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    inorder_node(r, p, &parent, &left, &right);
    troot = p / 2;
    if (left >= 0 && ((tl = ucoll__sched_scratch(s, bytes)) == NULL ||
                      (st = ucoll__sched_recv(s, tl, bytes, left)))) {
        return tl ? st : UCOLL_ERR_NOMEM;
    }
    if (right >= 0 && ((tr = ucoll__sched_scratch(s, bytes)) == NULL ||
                       (st = ucoll__sched_recv(s, tr, bytes, right)))) {
        return tr ? st : UCOLL_ERR_NOMEM;
    }
    if ((st = ucoll__sched_round(s))) {
        return st;
    }
    if (left >= 0 || right >= 0 || (r == troot && r == a->root)) {
        acc = (r == troot && r == a->root) ? a->rbuf : ucoll__sched_scratch(s, bytes);
        if (acc == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        st = (left >= 0) ? ucoll__sched_reduce(s, acc, tl, a->sbuf, a->count, a->dt, a->op)
                         : ucoll__sched_copy_if(s, acc, a->sbuf, bytes);
        if (st == UCOLL_OK && right >= 0) {
            st = ucoll__sched_reduce(s, acc, acc, tr, a->count, a->dt, a->op);
        }
        if (st) {
            return st;
        }
        res = acc;
    }
    if (parent >= 0) {
        st = ucoll__sched_send(s, res, bytes, parent);
    } else if (r != a->root) {
        st = ucoll__sched_send(s, res, bytes, a->root);
    }
    if (st == UCOLL_OK && r == a->root && r != troot) {
        /* a round of its own: an in-place input may still be on its way up */
        if ((st = ucoll__sched_round(s)) == UCOLL_OK) {
            st = ucoll__sched_recv(s, a->rbuf, bytes, troot);
        }
    }
    return st;
}

const ucoll_algo_t ucoll__reduce_inorder_bintree = {
    .id = "inorder_bintree",
    .desc = "in-order binary tree, keeps rank order",
    .cost = inorder_cost,
    .build = inorder_build,
};

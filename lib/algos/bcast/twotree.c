/*
 * Broadcast down two complementary binary trees (Sanders, Speck, Träff
 * 2009; the "double binary tree").
 *
 * The N = p - 1 non-root sranks carry labels 1..N in each tree. Tree A
 * labels srank r as r, tree B as r % N + 1 (a shift by one). Over labels,
 * the tree is in order: the root of an interval of labels is the one label
 * in it with the most trailing zero bits, and its halves hang below it.
 * Only singleton intervals hold an odd label, so every interior node has an
 * even label: interior in A means r even, interior in B means r odd, and no
 * rank forwards in both trees. Depth ≤ ⌊log2 N⌋ + 1.
 *
 * The message is cut into n segments of s bytes; even segments go down A,
 * odd ones down B, and srank 0 feeds both tree roots. Rounds are global
 * steps: a rank at depth d of a tree receives that tree's i-th segment in
 * round i + d - 1 and forwards it in round i + d (srank 0: depth 0), so
 * every message is matched within one round on both sides, no rank sends
 * a segment before the round after it arrived, and within a round steps go
 * tree A first, then tree B, on every rank.
 *
 * Cost: a step moves one segment per tree, so up to two sends of s bytes
 * per rank; with n segments split between the trees the model charges
 * (2⌈log2 p⌉ + n - 1)(α + sβ) ≈ mβ + O(α log p) for large m.
 */
#include "bcast.h"

/* The label with the most trailing zero bits in [lo, hi] (unique). */
static int maxlow(int lo, int hi)
{
    int t = 1;

    while (t <= hi / 2) {
        t *= 2;
    }
    while ((hi / t) * t < lo) {
        t /= 2;
    }
    return (hi / t) * t;
}

typedef struct {
    int depth;    /* 1 for the tree root */
    int parent;   /* label; 0 = srank 0 */
    int child[2]; /* labels; 0 = none */
} tt_node_t;

static void tt_node(int q, int n, tt_node_t *nd)
{
    int lo = 1, hi = n;

    nd->depth = 1;
    nd->parent = 0;
    for (;;) {
        int m = maxlow(lo, hi);
        if (q == m) {
            nd->child[0] = (lo <= m - 1) ? maxlow(lo, m - 1) : 0;
            nd->child[1] = (m + 1 <= hi) ? maxlow(m + 1, hi) : 0;
            return;
        }
        nd->parent = m;
        if (q < m) {
            hi = m - 1;
        } else {
            lo = m + 1;
        }
        nd->depth++;
    }
}

/* Label of srank sr (1..n) in tree b (0 = A, 1 = B), and back. */
static int tt_label(int sr, int n, int b)
{
    return b ? sr % n + 1 : sr;
}
static int tt_srank(int q, int n, int b)
{
    if (q == 0) {
        return 0;
    }
    return b ? (q == 1 ? n : q - 1) : q;
}

static size_t twotree_seg(const ucoll_algo_params_t *prm, size_t bytes, int p)
{
    return ucoll__pipeline_seg(prm, bytes, 2 * ucoll__ceil_log2(p));
}

static double twotree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    size_t bytes = a->count * a->esize;
    size_t seg;
    double n;

    if (p == 1 || bytes == 0) {
        return 0;
    }
    seg = twotree_seg(prm, bytes, p);
    n = (double)((bytes + seg - 1) / seg);
    return (2 * ucoll__ceil_log2(p) + n - 1) * (m->alpha + (double)UCOLL_MIN(seg, bytes) * m->beta);
}

void ucoll__twotree_node(int sr, int p, int root, int b, ucoll_twotree_t *t)
{
    int n = p - 1;
    tt_node_t nd;

    t->nchild = 0;
    t->parent = -1;
    if (sr == 0) {
        t->depth = 0;
        t->child[t->nchild++] = ucoll__rank_of(tt_srank(maxlow(1, n), n, b), root, p);
        return;
    }
    tt_node(tt_label(sr, n, b), n, &nd);
    t->depth = nd.depth;
    t->parent = ucoll__rank_of(tt_srank(nd.parent, n, b), root, p);
    for (int c = 0; c < 2; c++) {
        if (nd.child[c]) {
            t->child[t->nchild++] = ucoll__rank_of(tt_srank(nd.child[c], n, b), root, p);
        }
    }
}

int ucoll__twotree_height(int p)
{
    int h = 0;

    /* the label tree over 1..p-1 is ⌊log2(p-1)⌋ + 1 deep */
    for (int n = p - 1; n > 0; n /= 2) {
        h++;
    }
    return h;
}

int ucoll__bcast_twotree_steps(ucoll_sched_t *s, char *buf, size_t bytes, size_t seg, int root)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, root, p);
    size_t nseg = (bytes + seg - 1) / seg, nt[2], last = 0;
    ucoll_twotree_t t[2];
    int st;

    nt[0] = (nseg + 1) / 2;
    nt[1] = nseg / 2;
    for (int b = 0; b < 2; b++) {
        ucoll__twotree_node(sr, p, root, b, &t[b]);
        if (nt[b] > 0) {
            last = UCOLL_MAX(last, nt[b] + (size_t)t[b].depth);
        }
    }
    for (size_t k = 0; k <= last; k++) {
        for (int b = 0; b < 2; b++) {
            size_t d = (size_t)t[b].depth;
            /* receive segment i = k - d + 1, forward segment i = k - d */
            if (d > 0 && k + 1 >= d && k + 1 - d < nt[b]) {
                size_t off = (2 * (k + 1 - d) + b) * seg;
                if ((st = ucoll__sched_recv(s, buf + off, UCOLL_MIN(seg, bytes - off),
                                            t[b].parent))) {
                    return st;
                }
            }
            if (k >= d && k - d < nt[b]) {
                size_t off = (2 * (k - d) + b) * seg;
                for (int c = 0; c < t[b].nchild; c++) {
                    if ((st = ucoll__sched_send(s, buf + off, UCOLL_MIN(seg, bytes - off),
                                                t[b].child[c]))) {
                        return st;
                    }
                }
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

static int twotree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    size_t bytes = a->count * a->esize;
    int p = ucoll__sched_comm(s)->size;

    if (bytes == 0 || p == 1) {
        return UCOLL_OK;
    }
    return ucoll__bcast_twotree_steps(s, a->rbuf, bytes, twotree_seg(prm, bytes, p), a->root);
}

const ucoll_algo_t ucoll__bcast_twotree = {
    .id = "twotree",
    .desc = "two complementary binary trees, segments alternating",
    .cost = twotree_cost,
    .build = twotree_build,
};

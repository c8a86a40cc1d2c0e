/*
 * Reduce up the two complementary binary trees of the two-tree broadcast
 * (bcast/twotree.c), run backwards; not on that broadcast's edge
 * colouring, though: each step moves a segment up each tree, as below.
 *
 * The vector is cut into n segments of s elements; even segments are
 * reduced up tree A, odd ones up tree B, and srank 0 (the root) folds what
 * the two tree roots send into its own vector. No rank is interior in both
 * trees, so each forwards the partial results of at most two children.
 * Rounds are global steps: with h the height of the trees, a rank at depth
 * d receives its children's i-th segment of a tree in step i + h - d - 1,
 * folds them into its own (own op child op child) and sends the result to
 * its parent in step i + h - d; a leaf sends its input segment. Every
 * message is matched within one step on both sides, so the schedule needs
 * no eager buffering. Two receive slots per child let the next segment
 * land while the last one is being folded. Commutative ops (every
 * predefined op is), as the other trees.
 *
 * Cost, n segments of s bytes (the last one r ≤ s), a message of s bytes
 * costing c = α + sβ and its fold g = sγ, h = ⌈log2 p⌉.
 *
 * p = 2: the trees are one edge, srank 1 a leaf of both. Its n sends have
 * nothing to wait for and leave back to back, segment j reaching srank 0
 * at U_j = (j + 1)c (the last one c_r = α + rβ); srank 0 folds them in
 * order, one after the other. Two stages in tandem, so the last fold ends
 * at the largest over j of U_j + the folds of segments j … n - 1:
 * max over j of Σ_{i≤j} c_i + Σ_{i≥j} g_i, reached at j = 0, n - 2 or
 * n - 1 (the segments but the last are alike); when a fold is quicker
 * than a message, j = n - 1: (n - 1)c + c_r + rγ ≈ mβ + nα.
 *
 * p ≥ 3: per step a rank sends up to two segments (one up each tree) and
 * receives up to two (two children in one tree, or the two tree roots at
 * srank 0), and an interior rank folds two. Segment 0 climbs tree A alone:
 * a rank receives its two children one after the other, so 2(h - 1)
 * messages up to A's root and one more to srank 0, 2h - 1 in all, with one
 * fold per level; the other n - 1 follow one message apart at srank 0's
 * receive port:
 * (2h + n - 2)(α + sβ) + (h + n)sγ ≈ mβ + mγ + O(α log p) for large m.
 * At n = 1 that is the simulator's time where every level of A below its
 * root has two children (p = 4, 8, 64; p = 3 and 5 have lone children and
 * are quicker). It idealises the ports beyond: a leaf's segments are ready
 * at once and leave ahead of the folded ones behind the same send port,
 * and two children contend for one receive port, so with many segments
 * the simulator comes out above it, nearer 2mβ (1.3-1.6 times it at 64 KiB
 * to 4 MiB for p = 8, 64 with α = 0.84 µs, β = 0.165 ns/B).
 */
#include "reduce.h"
#include "algos/bcast/bcast.h"

size_t ucoll__twotree_seg_elems(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    size_t seg = ucoll__pipeline_seg(prm, a->count * a->esize, 2 * ucoll__ceil_log2(p)) / a->esize;

    return UCOLL_MAX(seg, (size_t)1);
}

/* p = 2 (see the header comment): segment j reaches srank 0 at
 * Σ_{i≤j} c_i and the folds of segments j … n - 1 follow; the latest over
 * j = 0, n - 2, n - 1 (linear in j between 0 and n - 2). */
static double twotree_pair_cost(size_t n, double c, double c_r, double g, double g_r)
{
    size_t cand[3] = {0, n >= 2 ? n - 2 : 0, n - 1};
    double t = 0;

    for (int k = 0; k < 3; k++) {
        size_t j = cand[k];
        double up = j + 1 < n ? (double)(j + 1) * c : (double)(n - 1) * c + c_r;
        t = UCOLL_MAX(t, up + (double)(n - 1 - j) * g + g_r);
    }
    return t;
}

double ucoll__twotree_reduce_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                  const ucoll_model_t *m)
{
    size_t seg, n;
    double sb, rb;
    int h;

    if (p == 1 || a->count == 0) {
        return 0;
    }
    seg = ucoll__twotree_seg_elems(a, prm, p);
    n = (a->count + seg - 1) / seg;
    sb = (double)UCOLL_MIN(seg, a->count) * a->esize;
    if (p == 2) {
        rb = (double)(a->count - (n - 1) * seg) * a->esize;
        return twotree_pair_cost(n, m->alpha + sb * m->beta, m->alpha + rb * m->beta, sb * m->gamma,
                                 rb * m->gamma);
    }
    h = ucoll__ceil_log2(p);
    return (2 * h + (double)n - 2) * (m->alpha + sb * m->beta) + (h + (double)n) * sb * m->gamma;
}

int ucoll__reduce_twotree_steps(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t seg, char *acc)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, h = ucoll__twotree_height(p);
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t es = a->esize, count = a->count, nseg = (count + seg - 1) / seg, nt[2], last = 0;
    const char *in = a->sbuf;
    char *tmp[2] = {NULL, NULL};
    ucoll_twotree_t t[2];
    int st;

    nt[0] = (nseg + 1) / 2;
    nt[1] = nseg / 2;
    for (int b = 0; b < 2; b++) {
        ucoll__twotree_node(sr, p, a->root, b, &t[b]);
        if (nt[b] > 0) {
            last = UCOLL_MAX(last, nt[b] + (size_t)(h - t[b].depth));
        }
        /* two slots per child: [slot][child] */
        if (t[b].nchild > 0 &&
            (tmp[b] = ucoll__sched_scratch(s, 2 * (size_t)t[b].nchild * seg * es)) == NULL) {
            return UCOLL_ERR_NOMEM;
        }
    }
    if (sr == 0) {
        acc = a->rbuf;
    } else if ((t[0].nchild > 0 || t[1].nchild > 0) && acc == NULL &&
               (acc = ucoll__sched_scratch(s, count * es)) == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (size_t k = 0; k < last; k++) {
        for (int b = 0; b < 2; b++) {
            size_t up = (size_t)(h - t[b].depth); /* steps before segment 0 leaves */
            /* fold and send segment i = k - up */
            if (k >= up && k - up < nt[b]) {
                size_t i = k - up, off = (2 * i + b) * seg, len = UCOLL_MIN(seg, count - off);
                const char *src = in + off * es;
                for (int c = 0; c < t[b].nchild; c++) {
                    const char *child = tmp[b] + ((i & 1) * t[b].nchild + c) * seg * es;
                    if ((st = ucoll__sched_reduce(s, acc + off * es, src, child, len, a->dt,
                                                  a->op))) {
                        return st;
                    }
                    src = acc + off * es;
                }
                if (sr != 0 && (st = ucoll__sched_send(s, src, len * es, t[b].parent))) {
                    return st;
                }
            }
            /* receive the children's segment i = k + 1 - up */
            if (t[b].nchild > 0 && k + 1 >= up && k + 1 - up < nt[b]) {
                size_t i = k + 1 - up, off = (2 * i + b) * seg, len = UCOLL_MIN(seg, count - off);
                for (int c = 0; c < t[b].nchild; c++) {
                    char *child = tmp[b] + ((i & 1) * t[b].nchild + c) * seg * es;
                    if ((st = ucoll__sched_recv(s, child, len * es, t[b].child[c]))) {
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
    int p = ucoll__sched_comm(s)->size;

    if (a->count == 0) {
        return UCOLL_OK;
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, a->rbuf, a->sbuf, a->count * a->esize);
    }
    return ucoll__reduce_twotree_steps(s, a, ucoll__twotree_seg_elems(a, prm, p), NULL);
}

static void twotree_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           char *buf, size_t len)
{
    ucoll__params_words(buf, len, ucoll__twotree_seg_elems(a, prm, p) * a->esize, 0);
}

const ucoll_algo_t ucoll__reduce_twotree = {
    .id = "twotree",
    .desc = "two complementary binary trees, segments alternating",
    .cost = ucoll__twotree_reduce_cost,
    .build = twotree_build,
    .params = twotree_params,
};

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
 * Cost: per step a rank sends up to two segments (one up each tree) and
 * receives up to two (two children in one tree, or the two tree roots at
 * srank 0), and an interior rank folds two; as the broadcast, a pair of
 * segments per step over the tree height and the pipeline:
 * (2⌈log2 p⌉ + n - 1)(α + sβ) + (⌈log2 p⌉ + n)sγ ≈ mβ + mγ + O(α log p)
 * for large m. It idealises the ports: a leaf's segments are ready at
 * once and leave ahead of the folded ones behind the same send port, and
 * two children contend for one receive port: the simulator comes out at
 * 0.86-1.09 times it from 64 KiB to 16 MiB at p = 64 … 1024, and nearer
 * 2mβ when the segments are many more than the model picks.
 */
#include "reduce.h"
#include "algos/bcast/bcast.h"

size_t ucoll__twotree_seg_elems(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    size_t seg = ucoll__pipeline_seg(prm, a->count * a->esize, 2 * ucoll__ceil_log2(p)) / a->esize;

    return UCOLL_MAX(seg, (size_t)1);
}

double ucoll__twotree_reduce_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                  const ucoll_model_t *m)
{
    size_t seg, n;
    double sb;

    if (p == 1 || a->count == 0) {
        return 0;
    }
    seg = ucoll__twotree_seg_elems(a, prm, p);
    n = (a->count + seg - 1) / seg;
    sb = (double)UCOLL_MIN(seg, a->count) * a->esize;
    return (2 * ucoll__ceil_log2(p) + (double)n - 1) * (m->alpha + sb * m->beta) +
           (ucoll__ceil_log2(p) + (double)n) * sb * m->gamma;
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

const ucoll_algo_t ucoll__reduce_twotree = {
    .id = "twotree",
    .desc = "two complementary binary trees, segments alternating",
    .cost = ucoll__twotree_reduce_cost,
    .build = twotree_build,
};

/*
 * Broadcast down a complete binary tree in level order over sranks:
 * children 2r+1, 2r+2, parent ⌊(r-1)/2⌋, left child first; whole message
 * (bintree) or segmented (pipe_bintree: segment j+1 comes in while segment
 * j goes to both children).
 *
 * Cost: bintree U(α + mβ), U the message times on the slowest path (a
 * second child costs two: 2⌊log2 p⌋ at most, bintree_units); pipe_bintree
 * with n segments (U + 2(n - 1))(α + sβ), (U + n - 1)(α + sβ) at p = 2.
 */
#include "bcast.h"

static int depth(int p)
{
    int d = 0;

    while ((2 << d) - 1 < p) {
        d++;
    }
    return d; /* levels below the root */
}

/* Message times on the slowest path from the root: a parent sends to its
 * first child, then to its second, so a second child is reached after two.
 * The path to srank v follows the bits of v + 1 after the leading one
 * (0: first child, 1: second), so it costs (depth) + (ones among them); the
 * worst node of each level is the one with the most ones that exists. */
static int bintree_units(int p)
{
    int best = 0;

    for (int d = 1; (1 << d) <= p; d++) {
        unsigned lo = 1u << d, hi = UCOLL_MIN((unsigned)p, (2u << d) - 1);
        unsigned q = hi - lo; /* the largest tail of this level */
        int bits = 0, ones = __builtin_popcount(q);

        while ((q >> bits) != 0) {
            bits++;
        }
        best = UCOLL_MAX(best, d + (q ? UCOLL_MAX(ones, bits - 1) : 0));
    }
    return best;
}

static double bintree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    return bintree_units(p) * (m->alpha + (double)a->count * a->esize * m->beta);
}

static double pipe_bintree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                const ucoll_model_t *m)
{
    size_t bytes = a->count * a->esize;
    size_t seg = ucoll__pipeline_seg(prm, bytes, 2 * depth(p));
    double n = (double)((bytes + seg - 1) / seg);

    if (p == 1) {
        return 0;
    }
    /* the root sends each segment to its children (two, one at p = 2);
     * the last one then takes the slowest path */
    return (bintree_units(p) + (p > 2 ? 2 : 1) * (UCOLL_MAX(n, 1.0) - 1)) *
           (m->alpha + (double)UCOLL_MIN(seg, bytes) * m->beta);
}

static int bintree_steps(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t seg)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, a->root, p);
    int parent = (sr == 0) ? -1 : ucoll__rank_of((sr - 1) / 2, a->root, p);
    int children[2], n = 0;

    for (int c = 2 * sr + 1; c <= 2 * sr + 2 && c < p; c++) {
        children[n++] = ucoll__rank_of(c, a->root, p);
    }
    return ucoll__bcast_tree_steps(s, a->rbuf, a->count * a->esize, seg, parent, children, n);
}

static int bintree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    size_t bytes = a->count * a->esize;

    return bytes ? bintree_steps(s, a, bytes) : UCOLL_OK;
}

static int pipe_bintree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                              const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    size_t bytes = a->count * a->esize;

    return bytes ? bintree_steps(s, a, ucoll__pipeline_seg(prm, bytes, 2 * depth(comm->size)))
                 : UCOLL_OK;
}

const ucoll_algo_t ucoll__bcast_bintree = {
    .id = "bintree",
    .desc = "complete binary tree, level order, whole message",
    .cost = bintree_cost,
    .build = bintree_build,
};

static void pipe_bintree_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                char *buf, size_t len)
{
    ucoll__params_words(buf, len, ucoll__pipeline_seg(prm, a->count * a->esize, 2 * depth(p)), 0);
}

const ucoll_algo_t ucoll__bcast_pipe_bintree = {
    .id = "pipe_bintree",
    .desc = "complete binary tree, segmented",
    .cost = pipe_bintree_cost,
    .build = pipe_bintree_build,
    .params = pipe_bintree_params,
};

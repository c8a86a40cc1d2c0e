/*
 * Allreduce over two complementary binary trees: the two-tree reduce to
 * rank 0 (reduce/twotree.c), then the two-tree broadcast from rank 0
 * (bcast/twotree.c), both cutting the vector into the same segments, in
 * one schedule. Even segments go up and back down tree A, odd ones tree B.
 * The executor starts each step once what it needs is there, so rank 0
 * sends a segment down as soon as it has folded it, while the later ones
 * are still on their way up: the two halves run as one pipeline.
 *
 * Every rank accumulates in its own rbuf (a leaf sends its input straight
 * from sbuf), and rank 0's result overwrites all of them, so every rank
 * ends with the same bits.
 *
 * Cost: the reduce pipeline, then the broadcast's: the first segment comes
 * back down after 2⌈log2 p⌉ steps, the others follow one pair per step; a
 * rank interior in a tree sends and receives four segments per step
 * (reduce and broadcast traffic together), so in the steady state a pair
 * of segments costs 4(α + sβ) + 2sγ:
 * (4⌈log2 p⌉ + 2n - 2)(α + sβ) + (⌈log2 p⌉ + n)sγ ≈ 2mβ + mγ +
 * O(α log p) for large m; the simulator comes out at 0.88-1.12 times it
 * from 64 KiB to 16 MiB at p = 64 … 1024 (the port contention of the
 * reduce, see there).
 */
#include "allreduce.h"
#include "algos/bcast/bcast.h"
#include "algos/reduce/reduce.h"

/* The reduce up the two trees, then the broadcast down them, which costs
 * what the reduce costs without its reductions. */
static double twotree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    ucoll_model_t down = *m;

    down.gamma = 0;
    return ucoll__twotree_reduce_cost(a, p, prm, m) + ucoll__twotree_reduce_cost(a, p, prm, &down);
}

static int twotree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    int p = ucoll__sched_comm(s)->size;
    ucoll_coll_args_t ra = *a;
    size_t seg;
    int st;

    if (a->count == 0) {
        return UCOLL_OK;
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, a->rbuf, a->sbuf, a->count * a->esize);
    }
    seg = ucoll__twotree_seg_elems(a, prm, p);
    ra.coll = UCOLL_COLL_REDUCE;
    ra.root = 0;
    if ((st = ucoll__reduce_twotree_steps(s, &ra, seg, a->rbuf)) || (st = ucoll__sched_round(s))) {
        return st;
    }
    return ucoll__bcast_twotree_steps(s, a->rbuf, a->count * a->esize, seg * a->esize, 0);
}

const ucoll_algo_t ucoll__allreduce_twotree = {
    .id = "twotree",
    .desc = "two-tree reduce to rank 0, then two-tree broadcast, pipelined",
    .cost = twotree_cost,
    .build = twotree_build,
};

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
 * Cost, with the segments of the reduce (n of s bytes, the last r ≤ s;
 * c = α + sβ a message, g = sγ a fold; h = ⌈log2 p⌉), the broadcast
 * cutting the vector the same way.
 *
 * p = 2: the two trees are one edge each way and the halves use opposite
 * ports: srank 1 only sends up and only receives down, srank 0 the
 * reverse. Three stages in tandem, one segment at a time each: srank 1's
 * n sends up, back to back from its input; srank 0's folds; srank 0's
 * sends down, each once its segment is folded. The last segment lands at
 * the largest over j ≤ k of Σ_{i≤j} c_i + Σ_{j≤i≤k} g_i + Σ_{i≥k} c_i,
 * reached at j, k ∈ {0, n - 2, n - 1}; when a fold is quicker than a
 * message, j = k = 0: segment 0 up and folded, then n messages down,
 * (n + 1)(α + sβ) + sγ with the last of them r bytes ≈ mβ + O(α n).
 * That holds while the schedule runs by its dependency graph: past about
 * 200 segments sealing falls back to rounds and the halves no longer
 * overlap (about 2nc).
 *
 * p ≥ 3: the reduce (reduce/twotree.c), (2h + n - 2)c + (h + n)g, then
 * the broadcast (bcast/twotree.c), (n + F)c, in full: the last segment
 * goes up, then down after srank 0 has folded it (2h - 1 messages, then
 * F + 1), and in between a rank interior in a tree sends and receives four
 * segments per pair of them (reduce and broadcast traffic together), so
 * the pipeline costs 2c a segment:
 * (2h + F + 2n - 2)(α + sβ) + (h + n)sγ ≈ 2mβ + mγ + O(α log p) for
 * large m, F = 2h - 2 or 2h - 3. At n = 1 that is the simulator's time
 * where tree A's levels have two children each (p = 4, 8, 64); with more
 * segments the simulator comes out above it (the port contention of the
 * reduce, see there): 1.07-1.5 times it from 64 KiB to 4 MiB at p = 8, 64
 * with α = 0.84 µs, β = 0.165 ns/B.
 */
#include "allreduce.h"
#include "algos/bcast/bcast.h"
#include "algos/reduce/reduce.h"

/* p = 2 (see the header comment): segment j is at srank 0 after
 * Σ_{i≤j} c_i, the folds of j … k follow, then segment k and the ones
 * after it go down; the latest over j ≤ k in {0, n - 2, n - 1} (the sum is
 * linear in j and in k between 0 and n - 2). */
static double twotree_pair_cost(size_t n, double c, double c_r, double g, double g_r)
{
    size_t cand[3] = {0, n >= 2 ? n - 2 : 0, n - 1};
    double t = 0;

    for (int x = 0; x < 3; x++) {
        for (int y = x; y < 3; y++) {
            size_t j = cand[x], k = cand[y];
            double up = j + 1 < n ? (double)(j + 1) * c : (double)(n - 1) * c + c_r;
            double fold = k + 1 < n ? (double)(k - j + 1) * g : (double)(n - 1 - j) * g + g_r;
            double down = (double)(n - 1 - k) * c + c_r;
            t = UCOLL_MAX(t, up + fold + down);
        }
    }
    return t;
}

/* The reduce up the two trees, then the broadcast down them, each on the
 * segments the schedule cuts (the broadcast's in bytes). */
static double twotree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    ucoll_algo_params_t bprm = *prm;
    ucoll_coll_args_t ba = *a;
    size_t seg, n;
    double sb, rb;

    if (p == 1 || a->count == 0) {
        return 0;
    }
    seg = ucoll__twotree_seg_elems(a, prm, p);
    if (p == 2) {
        double c, c_r, t;

        n = (a->count + seg - 1) / seg;
        sb = (double)UCOLL_MIN(seg, a->count) * a->esize;
        rb = (double)(a->count - (n - 1) * seg) * a->esize;
        c = m->alpha + sb * m->beta;
        c_r = m->alpha + rb * m->beta;
        t = twotree_pair_cost(n, c, c_r, sb * m->gamma, rb * m->gamma);
        /* Inside a node (shared memory there: prm->shm_data) each message
         * is a copy through the one memory both ranks share, so the two
         * streams do not overlap as two ports would: up and down in turn,
         * 2(n - 1) + 2 messages and the last fold. Measured at p = 2, the
         * overlapping form was 1.16-1.94x short of the time from 64 KiB to
         * 32 MiB, and ranked this row first at 16-64 MiB where it took
         * 1.1-1.6x shm's time. */
        if (prm->shm_data > 0) {
            t = UCOLL_MAX(t, 2 * (double)(n - 1) * c + c + c_r + rb * m->gamma);
        }
        return t;
    }
    ba.coll = UCOLL_COLL_BCAST;
    ba.root = 0;
    bprm.seg_size = seg * a->esize;
    return ucoll__twotree_reduce_cost(a, p, prm, m) + ucoll__bcast_twotree.cost(&ba, p, &bprm, m);
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

static void twotree_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           char *buf, size_t len)
{
    ucoll__params_words(buf, len, ucoll__twotree_seg_elems(a, prm, p) * a->esize, 0);
}

const ucoll_algo_t ucoll__allreduce_twotree = {
    .id = "twotree",
    .desc = "two-tree reduce to rank 0, then two-tree broadcast, pipelined",
    .cost = twotree_cost,
    .build = twotree_build,
    .params = twotree_params,
};

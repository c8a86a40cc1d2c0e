/*
 * Broadcast: the algorithm rows (registry in bcast.c) and the pieces that
 * other operations reuse.
 */
#ifndef UCOLL_ALGOS_BCAST_H
#define UCOLL_ALGOS_BCAST_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__bcast_binomial;
extern const ucoll_algo_t ucoll__bcast_linear;
extern const ucoll_algo_t ucoll__bcast_chain;
extern const ucoll_algo_t ucoll__bcast_pipeline;
extern const ucoll_algo_t ucoll__bcast_knomial;
extern const ucoll_algo_t ucoll__bcast_bintree;
extern const ucoll_algo_t ucoll__bcast_pipe_bintree;
extern const ucoll_algo_t ucoll__bcast_scag_ring;
extern const ucoll_algo_t ucoll__bcast_scag_rdbl;
extern const ucoll_algo_t ucoll__bcast_kchain;
extern const ucoll_algo_t ucoll__bcast_twotree;
extern const ucoll_algo_t ucoll__bcast_shm;
extern const ucoll_algo_t ucoll__bcast_karytree;
extern const ucoll_algo_t ucoll__bcast_balanced;
extern const ucoll_algo_t ucoll__bcast_vchain;
extern const ucoll_algo_t ucoll__bcast_kchain_opt;
extern const ucoll_algo_t ucoll__bcast_pipe_knomial;
extern const ucoll_algo_t ucoll__bcast_circulant;

/* Binomial broadcast of bytes at buf from root (no segmentation); usable
 * inside another schedule (allreduce reduce_bcast). */
int ucoll__bcast_binomial_steps(ucoll_sched_t *s, void *buf, size_t bytes, int root);

/* Segmented broadcast down any tree: the parent (comm rank, -1 at the
 * root) and the children (comm ranks, in sending order). Round j receives
 * segment j and forwards segment j-1. */
int ucoll__bcast_tree_steps(ucoll_sched_t *s, char *buf, size_t bytes, size_t seg, int parent,
                            const int *children, int nchildren);

/* Binomial scatter of the p2 byte blocks of buf (block partition) among
 * sranks 0..p2-1 of a communicator of p ranks: srank sr ends up holding the
 * blocks of its subtree. */
int ucoll__bcast_scatter_steps(ucoll_sched_t *s, char *buf, size_t bytes, int sr, int p2, int root,
                               int p);

/* The two complementary binary trees of the twotree rows (twotree.c),
 * over sranks of root: srank 0 feeds both tree roots, and every other
 * srank is a node of tree b = 0 (A) and b = 1 (B), interior in at most one
 * of them. A rank's place in tree b: its depth (0 at srank 0, 1 at the
 * tree's root), parent and children as comm ranks (parent -1 at srank 0),
 * and the edge colouring's timetable: tree b's i-th segment reaches the
 * rank in round 2i + first (first = -1 at srank 0) and child c in round
 * 2i + cfirst[c]. A rank's two firsts, and its children's cfirsts, have
 * different parities: one segment in and one out per round. p >= 2. */
typedef struct ucoll_twotree {
    int depth;
    int parent;
    int first;
    int child[2];
    int cfirst[2];
    int nchild;
} ucoll_twotree_t;
void ucoll__twotree_node(int sr, int p, int root, int b, ucoll_twotree_t *t);
/* The greatest depth of a rank in either tree: ⌈log2 p⌉ (p >= 2). */
int ucoll__twotree_height(int p);
/* Two-tree broadcast of bytes at buf from root, cut into segments of seg
 * bytes: even segments down tree A, odd ones down tree B, each rank
 * receiving at most one and sending at most one per round (see
 * twotree.c); usable inside another schedule (allreduce twotree).
 * p >= 2, bytes > 0. */
int ucoll__bcast_twotree_steps(ucoll_sched_t *s, char *buf, size_t bytes, size_t seg, int root);

/* Segment size for a pipelined broadcast of m bytes over a path of depth
 * hops: prm->seg_size when set, else s* = sqrt(m·α / (depth·β)) clamped to
 * [4 KiB, 1 MiB]. */
size_t ucoll__pipeline_seg(const ucoll_algo_params_t *prm, size_t m, int depth);
/* Elements per segment of a pipelined chain over p ranks (at least 1). */
size_t ucoll__chain_seg_elems(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p);
/* Cost of a segmented chain that reduces as it goes (reduce and scan
 * pipelines): (p-2+n)(α + sβ + sγ), n = ⌈m/s⌉. */
double ucoll__chain_reduce_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                const ucoll_model_t *m);

#endif

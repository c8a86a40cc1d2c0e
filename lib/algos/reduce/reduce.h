/*
 * Reduce: the algorithm rows, listed in the registry in reduce.c.
 * Every algorithm reads its input from a->sbuf (== a->rbuf at an in-place
 * root) and writes the result to a->rbuf at the root only.
 */
#ifndef UCOLL_ALGOS_REDUCE_H
#define UCOLL_ALGOS_REDUCE_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__reduce_binomial;
extern const ucoll_algo_t ucoll__reduce_linear;
extern const ucoll_algo_t ucoll__reduce_rabenseifner;
extern const ucoll_algo_t ucoll__reduce_pipeline;
extern const ucoll_algo_t ucoll__reduce_inorder_bintree;
extern const ucoll_algo_t ucoll__reduce_shm;
extern const ucoll_algo_t ucoll__reduce_knomial;
extern const ucoll_algo_t ucoll__reduce_twotree;

/* Two-tree reduce (twotree.c), also the first half of allreduce twotree.
 * Elements per segment for a call on p ranks (at least 1). */
size_t ucoll__twotree_seg_elems(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p);
/* The reduce's predicted time under m. */
double ucoll__twotree_reduce_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                  const ucoll_model_t *m);
/* Reduce a->sbuf over the ranks into a->rbuf at a->root, in segments of seg
 * elements up the two trees. A rank other than the root that forwards
 * partial results folds them into acc (a->count elements; NULL: scratch).
 * p >= 2, a->count > 0. */
int ucoll__reduce_twotree_steps(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t seg,
                                char *acc);

#endif

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

#endif

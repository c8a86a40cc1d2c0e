/*
 * Reduce_scatter and reduce_scatter_block share their algorithms: both see
 * the vector as p consecutive blocks, block i (for rank i) having
 * rcounts[i] elements, or count for the block variant.
 *
 * The input vector is a->sbuf (== a->rbuf in place, where the result then
 * goes to the start of rbuf); the result block goes to a->rbuf.
 */
#ifndef UCOLL_ALGOS_REDUCE_SCATTER_H
#define UCOLL_ALGOS_REDUCE_SCATTER_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__reduce_scatter_rhalving;
extern const ucoll_algo_t ucoll__reduce_scatter_pairwise;
extern const ucoll_algo_t ucoll__reduce_scatter_ring;
extern const ucoll_algo_t ucoll__reduce_scatter_shm;

/* Element offsets of the p blocks and the end: p + 1 entries, malloc'ed
 * (the caller frees); NULL when out of memory. */
size_t *ucoll__rs_offsets(const ucoll_coll_args_t *a, int p);

#endif

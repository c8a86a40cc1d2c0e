/*
 * Alltoall and alltoallv: the algorithm rows, shared with the registries in
 * alltoall.c / alltoallv.c, and the in-place helper.
 */
#ifndef UCOLL_ALGOS_ALLTOALL_H
#define UCOLL_ALGOS_ALLTOALL_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__alltoall_pairwise;
extern const ucoll_algo_t ucoll__alltoall_bruck;
extern const ucoll_algo_t ucoll__alltoall_scattered;
extern const ucoll_algo_t ucoll__alltoall_shm;
extern const ucoll_algo_t ucoll__alltoallv_pairwise;
extern const ucoll_algo_t ucoll__alltoallv_scattered;

/* Blocks in flight per round of the scattered algorithms when the selection
 * passes no radix. */
#define UCOLL_ALLTOALL_SCATTERED_WINDOW 8

/*
 * The buffer the blocks to send are read from. For an in-place call (the
 * entry point sets sbuf = rbuf, and for alltoallv sdispls/scounts =
 * rdispls/rcounts) the first `extent` bytes of rbuf are copied into scratch
 * in the current round, before any receive can overwrite them, and the
 * scratch is returned; otherwise sbuf. NULL when out of memory.
 */
const char *ucoll__alltoall_source(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t extent);

/* Model: the copies of the exchanges' own data (the own block, or in place
 * the input copied aside), for the rows built on ucoll__alltoall_source. */
static inline double ucoll__alltoall_local_copy(const ucoll_coll_args_t *a, int p,
                                                const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize, lambda = m->lambda > 0 ? m->lambda : 8e-11;

    return (a->in_place ? p : 1) * bytes * lambda;
}

#endif

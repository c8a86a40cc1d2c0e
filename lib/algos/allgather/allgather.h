/*
 * Allgather and allgatherv: the algorithm rows, shared with the registries
 * in allgather.c / allgatherv.c.
 */
#ifndef UCOLL_ALGOS_ALLGATHER_H
#define UCOLL_ALGOS_ALLGATHER_H

#include "algos/algos.h"

/*
 * The first send of a rank's own block reads it from sbuf, not from its
 * copy in rbuf that the same round writes (in place they are the same
 * memory). Over shared memory a block sent right after this rank wrote it
 * crossed slowly: at p = 2, 1 MiB, an exchange from the just-copied block
 * took 264-275 us where the same exchange with the copy beside it, from
 * the input, took 117 (UCX's rendezvous, 500 calls); the ring allgather
 * went from 252-320 us to 100-139 at 1 MiB (5 alternations, slowest rank).
 */

extern const ucoll_algo_t ucoll__allgather_ring;
extern const ucoll_algo_t ucoll__allgather_rdbl;
extern const ucoll_algo_t ucoll__allgather_bruck;
extern const ucoll_algo_t ucoll__allgather_neighbor;
extern const ucoll_algo_t ucoll__allgather_gather_bcast;
extern const ucoll_algo_t ucoll__allgather_shm;
extern const ucoll_algo_t ucoll__allgatherv_ring;
extern const ucoll_algo_t ucoll__allgatherv_rdbl;

#endif

/*
 * Allgather and allgatherv: the algorithm rows, shared with the registries
 * in allgather.c / allgatherv.c.
 */
#ifndef UCOLL_ALGOS_ALLGATHER_H
#define UCOLL_ALGOS_ALLGATHER_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__allgather_ring;
extern const ucoll_algo_t ucoll__allgather_rdbl;
extern const ucoll_algo_t ucoll__allgather_bruck;
extern const ucoll_algo_t ucoll__allgather_neighbor;
extern const ucoll_algo_t ucoll__allgather_gather_bcast;
extern const ucoll_algo_t ucoll__allgather_shm;
extern const ucoll_algo_t ucoll__allgatherv_ring;
extern const ucoll_algo_t ucoll__allgatherv_rdbl;

#endif

/*
 * Barrier: the algorithm rows, listed in the registry in barrier.c.
 */
#ifndef UCOLL_ALGOS_BARRIER_H
#define UCOLL_ALGOS_BARRIER_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__barrier_dissemination;
extern const ucoll_algo_t ucoll__barrier_tree;
extern const ucoll_algo_t ucoll__barrier_linear;
extern const ucoll_algo_t ucoll__barrier_rdbl;
extern const ucoll_algo_t ucoll__barrier_knomial;
extern const ucoll_algo_t ucoll__barrier_knomial_tree;
extern const ucoll_algo_t ucoll__barrier_shm;
extern const ucoll_algo_t ucoll__barrier_shm_release;

#endif

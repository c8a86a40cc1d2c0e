/*
 * Gather and gatherv: the algorithm rows, shared with the registries in
 * gather.c / gatherv.c and with allgather's gather_bcast.
 */
#ifndef UCOLL_ALGOS_GATHER_H
#define UCOLL_ALGOS_GATHER_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__gather_linear;
extern const ucoll_algo_t ucoll__gather_binomial;
extern const ucoll_algo_t ucoll__gatherv_linear;
extern const ucoll_algo_t ucoll__gatherv_binomial;

#endif

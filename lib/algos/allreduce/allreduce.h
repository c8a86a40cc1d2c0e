/*
 * Allreduce: the algorithm rows, listed in the registry in allreduce.c.
 * Input in a->sbuf (== a->rbuf in place), result in a->rbuf everywhere.
 */
#ifndef UCOLL_ALGOS_ALLREDUCE_H
#define UCOLL_ALGOS_ALLREDUCE_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__allreduce_rdbl;
extern const ucoll_algo_t ucoll__allreduce_rabenseifner;
extern const ucoll_algo_t ucoll__allreduce_ring;
extern const ucoll_algo_t ucoll__allreduce_reduce_bcast;
extern const ucoll_algo_t ucoll__allreduce_knomial;
extern const ucoll_algo_t ucoll__allreduce_sra_knomial;

#endif

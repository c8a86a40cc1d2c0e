/*
 * Scatter and scatterv: the algorithm rows, shared with the registries in
 * scatter.c / scatterv.c.
 */
#ifndef UCOLL_ALGOS_SCATTER_H
#define UCOLL_ALGOS_SCATTER_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__scatter_linear;
extern const ucoll_algo_t ucoll__scatter_binomial;
extern const ucoll_algo_t ucoll__scatterv_linear;
extern const ucoll_algo_t ucoll__scatterv_binomial;

#endif

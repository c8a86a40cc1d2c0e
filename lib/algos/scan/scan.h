/*
 * Scan and exscan share their algorithms; a->coll tells which. Input in
 * a->sbuf (== a->rbuf in place), result in a->rbuf; exscan leaves rank 0's
 * rbuf untouched. Received partials are always combined on the left
 * (received op own), so rank order is kept.
 */
#ifndef UCOLL_ALGOS_SCAN_H
#define UCOLL_ALGOS_SCAN_H

#include "algos/algos.h"

extern const ucoll_algo_t ucoll__scan_rdbl;
extern const ucoll_algo_t ucoll__scan_linear;
extern const ucoll_algo_t ucoll__scan_pipeline;

/* The chain of linear.c with the vector cut into segments of seg elements
 * (seg >= count: one piece); shared by linear and pipeline. */
int ucoll__scan_chain_steps(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t seg);

#endif

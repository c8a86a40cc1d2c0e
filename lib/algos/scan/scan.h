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

#endif

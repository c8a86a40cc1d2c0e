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
extern const ucoll_algo_t ucoll__allreduce_twotree;
extern const ucoll_algo_t ucoll__allreduce_shm;

/* The shared-memory engine (shm.c), also reduce's shm row: root < 0 for
 * an allreduce, else only the root gets the result (in a->rbuf). */
int ucoll__allreduce_shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                               const ucoll_algo_params_t *prm, ucoll_req_t *req, int root);
/* The shm row's way and chunk for the call (ucoll_algo_t.params). */
void ucoll__allreduce_shm_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                 char *buf, size_t len);
double ucoll__allreduce_shm_cost(const ucoll_coll_args_t *a, int p,
                                 const ucoll_algo_params_t *prm, const ucoll_model_t *m);

#endif

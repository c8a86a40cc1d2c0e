/*
 * Barrier: API entry points and the registry.
 */
#include "barrier.h"

const ucoll_algo_t *const ucoll__barrier_algos[] = {
    &ucoll__barrier_dissemination, &ucoll__barrier_tree,    &ucoll__barrier_linear,
    &ucoll__barrier_rdbl,          &ucoll__barrier_knomial, &ucoll__barrier_knomial_tree,
    &ucoll__barrier_shm_release,   &ucoll__barrier_shm,
    &ucoll__barrier_hier,
    NULL,
};

int ucoll_ibarrier(ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__coll_check_req("barrier", req))) {
        return st;
    }
    a.coll = UCOLL_COLL_BARRIER;
    a.dt = UCOLL_BYTE;
    a.esize = 1;
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_barrier(ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ibarrier(comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

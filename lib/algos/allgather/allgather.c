/*
 * Allgather: API entry points and the registry; the argument checks, shared
 * with alltoall, are in algos/entry.c.
 *
 * sbuf = UCOLL_IN_PLACE means each rank's block is already in its place in
 * rbuf.
 */
#include "allgather.h"

const ucoll_algo_t *const ucoll__allgather_algos[] = {
    &ucoll__allgather_ring,     &ucoll__allgather_rdbl,         &ucoll__allgather_bruck,
    &ucoll__allgather_neighbor, &ucoll__allgather_gather_bcast, &ucoll__allgather_shm,
    &ucoll__allgather_hier,
    NULL,
};

int ucoll_iallgather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                     ucoll_comm_t *comm, ucoll_req_t **req)
{
    return ucoll__allgather_alltoall_start(UCOLL_COLL_ALLGATHER, sbuf, rbuf, count, dt, comm, req);
}

int ucoll_allgather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                    ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iallgather(sbuf, rbuf, count, dt, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

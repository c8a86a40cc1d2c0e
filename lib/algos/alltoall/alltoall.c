/*
 * Alltoall: API entry points, the registry and the in-place helper shared
 * with alltoallv; the argument checks, shared with allgather, are in
 * algos/entry.c.
 *
 * sbuf = UCOLL_IN_PLACE means the blocks to send are in rbuf and are
 * replaced by the blocks received.
 */
#include "alltoall.h"

const ucoll_algo_t *const ucoll__alltoall_algos[] = {
    &ucoll__alltoall_pairwise,
    &ucoll__alltoall_bruck,
    &ucoll__alltoall_scattered,
    &ucoll__alltoall_shm,
    NULL,
};

const char *ucoll__alltoall_source(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t extent)
{
    char *copy;

    if (!a->in_place || extent == 0) {
        return a->sbuf;
    }
    copy = ucoll__sched_scratch(s, extent);
    if (copy == NULL || ucoll__sched_copy(s, copy, a->rbuf, extent) != UCOLL_OK) {
        return NULL;
    }
    return copy;
}

int ucoll_ialltoall(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                    ucoll_comm_t *comm, ucoll_req_t **req)
{
    return ucoll__allgather_alltoall_start(UCOLL_COLL_ALLTOALL, sbuf, rbuf, count, dt, comm, req);
}

int ucoll_alltoall(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ialltoall(sbuf, rbuf, count, dt, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

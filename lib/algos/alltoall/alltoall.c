/*
 * Alltoall: API entry points, argument checks, the registry and the
 * in-place helper shared with alltoallv.
 *
 * sbuf = UCOLL_IN_PLACE means the blocks to send are in rbuf and are
 * replaced by the blocks received.
 */
#include "alltoall.h"

#include <stdint.h>

const ucoll_algo_t *const ucoll__alltoall_algos[] = {
    &ucoll__alltoall_pairwise,
    &ucoll__alltoall_bruck,
    &ucoll__alltoall_scattered,
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
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) != UCOLL_OK || (st = ucoll__check_dtype(dt)) != UCOLL_OK) {
        return st;
    }
    if (req == NULL) {
        ucoll_debug("alltoall: NULL request pointer");
        return UCOLL_ERR_ARG;
    }
    a.coll = UCOLL_COLL_ALLTOALL;
    a.count = count;
    a.dt = dt;
    a.esize = ucoll_dtype_size(dt);
    a.root = -1;
    if (count > SIZE_MAX / a.esize / (size_t)comm->size) {
        ucoll_debug("alltoall: count %zu times %d ranks overflows", count, comm->size);
        return UCOLL_ERR_ARG;
    }
    if (rbuf == UCOLL_IN_PLACE) {
        ucoll_debug("alltoall: rbuf cannot be UCOLL_IN_PLACE");
        return UCOLL_ERR_ARG;
    }
    if ((st = ucoll__check_buf(rbuf, count * comm->size, "alltoall rbuf")) != UCOLL_OK) {
        return st;
    }
    a.rbuf = rbuf;
    if (sbuf == UCOLL_IN_PLACE) {
        a.in_place = 1;
        a.sbuf = rbuf;
    } else if ((st = ucoll__check_buf(sbuf, count * comm->size, "alltoall sbuf")) != UCOLL_OK) {
        return st;
    } else {
        a.sbuf = sbuf;
    }
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_alltoall(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ialltoall(sbuf, rbuf, count, dt, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll_wait(req, NULL);
}

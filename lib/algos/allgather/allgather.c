/*
 * Allgather: API entry points, argument checks and the registry.
 *
 * sbuf = UCOLL_IN_PLACE means each rank's block is already in its place in
 * rbuf.
 */
#include "allgather.h"

#include <stdint.h>

const ucoll_algo_t *const ucoll__allgather_algos[] = {
    &ucoll__allgather_ring,     &ucoll__allgather_rdbl,         &ucoll__allgather_bruck,
    &ucoll__allgather_neighbor, &ucoll__allgather_gather_bcast, NULL,
};

int ucoll_iallgather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                     ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) != UCOLL_OK || (st = ucoll__check_dtype(dt)) != UCOLL_OK) {
        return st;
    }
    if (req == NULL) {
        ucoll_debug("allgather: NULL request pointer");
        return UCOLL_ERR_ARG;
    }
    a.coll = UCOLL_COLL_ALLGATHER;
    a.count = count;
    a.dt = dt;
    a.esize = ucoll_dtype_size(dt);
    a.root = -1;
    if (count > SIZE_MAX / a.esize / (size_t)comm->size) {
        ucoll_debug("allgather: count %zu times %d ranks overflows", count, comm->size);
        return UCOLL_ERR_ARG;
    }
    if (rbuf == UCOLL_IN_PLACE) {
        ucoll_debug("allgather: rbuf cannot be UCOLL_IN_PLACE");
        return UCOLL_ERR_ARG;
    }
    if ((st = ucoll__check_buf(rbuf, count * comm->size, "allgather rbuf")) != UCOLL_OK) {
        return st;
    }
    a.rbuf = rbuf;
    if (sbuf == UCOLL_IN_PLACE) {
        a.in_place = 1;
        a.sbuf = (char *)rbuf + (size_t)comm->rank * count * a.esize;
    } else if ((st = ucoll__check_buf(sbuf, count, "allgather sbuf")) != UCOLL_OK) {
        return st;
    } else {
        a.sbuf = sbuf;
    }
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_allgather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                    ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iallgather(sbuf, rbuf, count, dt, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll_wait(req, NULL);
}

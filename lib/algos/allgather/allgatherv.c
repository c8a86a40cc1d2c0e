/*
 * Allgatherv: API entry points, argument checks and the registry.
 *
 * sbuf = UCOLL_IN_PLACE means each rank's block (rcounts[rank] elements) is
 * already at displs[rank] in rbuf; otherwise scount may not exceed
 * rcounts[rank] (UCOLL_ERR_TRUNCATE). The selection sees count = the mean
 * block, which every rank computes alike from rcounts.
 */
#include "allgather.h"
#include "dtype.h"

const ucoll_algo_t *const ucoll__allgatherv_algos[] = {
    &ucoll__allgatherv_ring,
    &ucoll__allgatherv_rdbl,
    NULL,
};

int ucoll_iallgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                      const size_t *displs, ucoll_dtype_t dt, ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    size_t total = 0;
    int st, i, r;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__coll_check_req("allgatherv", req))) {
        return st;
    }
    if (rcounts == NULL || displs == NULL) {
        ucoll_debug("allgatherv: rcounts and displs are required");
        return UCOLL_ERR_ARG;
    }
    r = comm->rank;
    for (i = 0; i < comm->size; i++) {
        total += rcounts[i];
    }
    a.coll = UCOLL_COLL_ALLGATHERV;
    a.count = total / comm->size;
    a.dt = dt;
    a.esize = ucoll__dtype_size(dt);
    a.root = -1;
    if ((st = ucoll__coll_check_not_in_place("allgatherv", "rbuf", rbuf)) ||
        (st = ucoll__check_buf(rbuf, ucoll__blocks_extent(rcounts, displs, comm->size),
                               "allgatherv rbuf"))) {
        return st;
    }
    if (sbuf == UCOLL_IN_PLACE) {
        a.in_place = 1;
        sbuf = (char *)rbuf + displs[r] * a.esize;
        scount = rcounts[r];
    } else if ((st = ucoll__check_buf(sbuf, scount, "allgatherv sbuf")) != UCOLL_OK) {
        return st;
    } else if (scount > rcounts[r]) {
        ucoll_debug("allgatherv: rank %d sends %zu elements, rcounts says %zu", r, scount,
                    rcounts[r]);
        return UCOLL_ERR_TRUNCATE;
    }
    a.sbuf = sbuf;
    a.scount = scount;
    a.rbuf = rbuf;
    a.rcounts = rcounts;
    a.rdispls = displs;
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                     const size_t *displs, ucoll_dtype_t dt, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iallgatherv(sbuf, scount, rbuf, rcounts, displs, dt, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

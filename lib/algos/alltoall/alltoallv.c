/*
 * Alltoallv: API entry points, argument checks and the registry.
 *
 * sbuf = UCOLL_IN_PLACE means the blocks to send are in rbuf at rdispls
 * with rcounts (scounts and sdispls are ignored) and are replaced by the
 * blocks received. A rank's block to itself may not be longer than the room
 * for it (UCOLL_ERR_TRUNCATE). The selection sees count = 0: each rank has
 * its own counts, and all must still pick the same algorithm.
 */
#include "alltoall.h"
#include "dtype.h"

const ucoll_algo_t *const ucoll__alltoallv_algos[] = {
    &ucoll__alltoallv_pairwise,
    &ucoll__alltoallv_scattered,
    NULL,
};

int ucoll_ialltoallv(const void *sbuf, const size_t *scounts, const size_t *sdispls, void *rbuf,
                     const size_t *rcounts, const size_t *rdispls, ucoll_dtype_t dt,
                     ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    size_t rextent;
    int st, p, r;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__coll_check_req("alltoallv", req))) {
        return st;
    }
    p = comm->size;
    r = comm->rank;
    if (rcounts == NULL || rdispls == NULL) {
        ucoll_debug("alltoallv: rcounts and rdispls are required");
        return UCOLL_ERR_ARG;
    }
    rextent = ucoll__blocks_extent(rcounts, rdispls, p);
    if ((st = ucoll__coll_check_not_in_place("alltoallv", "rbuf", rbuf)) ||
        (st = ucoll__check_buf(rbuf, rextent, "alltoallv rbuf"))) {
        return st;
    }
    a.coll = UCOLL_COLL_ALLTOALLV;
    a.dt = dt;
    a.esize = ucoll__dtype_size(dt);
    a.root = -1;
    if (sbuf == UCOLL_IN_PLACE) {
        a.in_place = 1;
        sbuf = rbuf;
        scounts = rcounts;
        sdispls = rdispls;
    } else {
        if (scounts == NULL || sdispls == NULL) {
            ucoll_debug("alltoallv: scounts and sdispls are required");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(sbuf, ucoll__blocks_extent(scounts, sdispls, p),
                                   "alltoallv sbuf"))) {
            return st;
        }
        if (scounts[r] > rcounts[r]) {
            ucoll_debug("alltoallv: rank %d sends %zu elements to itself, room for %zu", r,
                        scounts[r], rcounts[r]);
            return UCOLL_ERR_TRUNCATE;
        }
    }
    a.sbuf = sbuf;
    a.scounts = scounts;
    a.sdispls = sdispls;
    a.rbuf = rbuf;
    a.rcounts = rcounts;
    a.rdispls = rdispls;
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_alltoallv(const void *sbuf, const size_t *scounts, const size_t *sdispls, void *rbuf,
                    const size_t *rcounts, const size_t *rdispls, ucoll_dtype_t dt,
                    ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ialltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, dt, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

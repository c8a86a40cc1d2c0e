/*
 * Scatterv: API entry points and the registry; the argument checks, shared
 * with gatherv, are in algos/entry.c.
 *
 * sbuf, scounts and displs matter at the root only (NULL is fine
 * elsewhere). At the root, rbuf = UCOLL_IN_PLACE means it keeps its block
 * where it is in sbuf; otherwise scounts[root] may not exceed rcount
 * (UCOLL_ERR_TRUNCATE). The selection sees count = 0, the one size every
 * rank agrees on.
 */
#include "scatter.h"

const ucoll_algo_t *const ucoll__scatterv_algos[] = {
    &ucoll__scatterv_linear,
    &ucoll__scatterv_binomial,
    NULL,
};

int ucoll_iscatterv(const void *sbuf, const size_t *scounts, const size_t *displs, void *rbuf,
                    size_t rcount, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                    ucoll_req_t **req)
{
    return ucoll__gatherv_scatterv_start(UCOLL_COLL_SCATTERV, sbuf, rbuf, rcount, scounts, displs,
                                         dt, root, comm, req);
}

int ucoll_scatterv(const void *sbuf, const size_t *scounts, const size_t *displs, void *rbuf,
                   size_t rcount, ucoll_dtype_t dt, int root, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iscatterv(sbuf, scounts, displs, rbuf, rcount, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

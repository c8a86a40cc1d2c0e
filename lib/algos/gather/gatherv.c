/*
 * Gatherv: API entry points and the registry; the argument checks, shared
 * with scatterv, are in algos/entry.c.
 *
 * rbuf, rcounts and displs matter at the root only (NULL is fine elsewhere).
 * At the root, sbuf = UCOLL_IN_PLACE means its block (rcounts[root]
 * elements) is already at displs[root] in rbuf; otherwise its scount may not
 * exceed rcounts[root] (UCOLL_ERR_TRUNCATE). The selection sees count = 0,
 * the one size every rank agrees on.
 */
#include "gather.h"

const ucoll_algo_t *const ucoll__gatherv_algos[] = {
    &ucoll__gatherv_linear,
    &ucoll__gatherv_binomial,
    NULL,
};

int ucoll_igatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                   const size_t *displs, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                   ucoll_req_t **req)
{
    return ucoll__gatherv_scatterv_start(UCOLL_COLL_GATHERV, sbuf, rbuf, scount, rcounts, displs,
                                         dt, root, comm, req);
}

int ucoll_gatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                  const size_t *displs, ucoll_dtype_t dt, int root, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_igatherv(sbuf, scount, rbuf, rcounts, displs, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

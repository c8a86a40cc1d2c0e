/*
 * Scatter: API entry points and the registry; the argument checks, shared
 * with gather, are in algos/entry.c.
 *
 * Root-only arguments (sbuf) are ignored on the other ranks. At the root,
 * rbuf = UCOLL_IN_PLACE means it keeps its block where it is in sbuf.
 */
#include "scatter.h"

const ucoll_algo_t *const ucoll__scatter_algos[] = {
    &ucoll__scatter_binomial,
    &ucoll__scatter_linear,
    NULL,
};

int ucoll_iscatter(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                   ucoll_comm_t *comm, ucoll_req_t **req)
{
    return ucoll__gather_scatter_start(UCOLL_COLL_SCATTER, sbuf, rbuf, count, dt, root, comm, req);
}

int ucoll_scatter(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                  ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iscatter(sbuf, rbuf, count, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

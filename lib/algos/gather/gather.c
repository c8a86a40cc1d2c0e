/*
 * Gather: API entry points and the registry; the argument checks, shared
 * with scatter, are in algos/entry.c.
 *
 * Root-only arguments (rbuf) are ignored on the other ranks. At the root,
 * sbuf = UCOLL_IN_PLACE means its block is already in its place in rbuf.
 */
#include "gather.h"

const ucoll_algo_t *const ucoll__gather_algos[] = {
    &ucoll__gather_binomial,
    &ucoll__gather_linear,
    NULL,
};

int ucoll_igather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                  ucoll_comm_t *comm, ucoll_req_t **req)
{
    return ucoll__gather_scatter_start(UCOLL_COLL_GATHER, sbuf, rbuf, count, dt, root, comm, req);
}

int ucoll_gather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                 ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_igather(sbuf, rbuf, count, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

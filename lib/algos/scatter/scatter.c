/*
 * Scatter: API entry points, argument checks and the registry.
 *
 * Root-only arguments (sbuf) are ignored on the other ranks. At the root,
 * rbuf = UCOLL_IN_PLACE means it keeps its block where it is in sbuf.
 */
#include "scatter.h"

#include <stdint.h>

const ucoll_algo_t *const ucoll__scatter_algos[] = {
    &ucoll__scatter_binomial,
    &ucoll__scatter_linear,
    NULL,
};

int ucoll_iscatter(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                   ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) != UCOLL_OK || (st = ucoll__check_dtype(dt)) != UCOLL_OK) {
        return st;
    }
    if (req == NULL) {
        ucoll_debug("scatter: NULL request pointer");
        return UCOLL_ERR_ARG;
    }
    if (root < 0 || root >= comm->size) {
        ucoll_debug("scatter: root %d not in [0, %d)", root, comm->size);
        return UCOLL_ERR_ARG;
    }
    a.coll = UCOLL_COLL_SCATTER;
    a.count = count;
    a.dt = dt;
    a.esize = ucoll_dtype_size(dt);
    a.root = root;
    if (count > SIZE_MAX / a.esize / (size_t)comm->size) {
        ucoll_debug("scatter: count %zu times %d ranks overflows", count, comm->size);
        return UCOLL_ERR_ARG;
    }
    if (comm->rank == root) {
        if (sbuf == UCOLL_IN_PLACE) {
            ucoll_debug("scatter: sbuf cannot be UCOLL_IN_PLACE");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(sbuf, count * comm->size, "scatter sbuf")) != UCOLL_OK) {
            return st;
        }
        a.sbuf = sbuf;
        if (rbuf == UCOLL_IN_PLACE) {
            a.in_place = 1;
            a.rbuf = (char *)sbuf + (size_t)root * count * a.esize;
        } else if ((st = ucoll__check_buf(rbuf, count, "scatter rbuf")) != UCOLL_OK) {
            return st;
        } else {
            a.rbuf = rbuf;
        }
    } else {
        if (rbuf == UCOLL_IN_PLACE) {
            ucoll_debug("scatter: UCOLL_IN_PLACE is only allowed at the root");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(rbuf, count, "scatter rbuf")) != UCOLL_OK) {
            return st;
        }
        a.rbuf = rbuf;
    }
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_scatter(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                  ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iscatter(sbuf, rbuf, count, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll_wait(req, NULL);
}

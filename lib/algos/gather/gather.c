/*
 * Gather: API entry points, argument checks and the registry.
 *
 * Root-only arguments (rbuf) are ignored on the other ranks. At the root,
 * sbuf = UCOLL_IN_PLACE means its block is already in its place in rbuf.
 */
#include "gather.h"

#include <stdint.h>

const ucoll_algo_t *const ucoll__gather_algos[] = {
    &ucoll__gather_binomial,
    &ucoll__gather_linear,
    NULL,
};

int ucoll_igather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                  ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) != UCOLL_OK || (st = ucoll__check_dtype(dt)) != UCOLL_OK) {
        return st;
    }
    if (req == NULL) {
        ucoll_debug("gather: NULL request pointer");
        return UCOLL_ERR_ARG;
    }
    if (root < 0 || root >= comm->size) {
        ucoll_debug("gather: root %d not in [0, %d)", root, comm->size);
        return UCOLL_ERR_ARG;
    }
    a.coll = UCOLL_COLL_GATHER;
    a.count = count;
    a.dt = dt;
    a.esize = ucoll_dtype_size(dt);
    a.root = root;
    if (count > SIZE_MAX / a.esize / (size_t)comm->size) {
        ucoll_debug("gather: count %zu times %d ranks overflows", count, comm->size);
        return UCOLL_ERR_ARG;
    }
    if (comm->rank == root) {
        if (rbuf == UCOLL_IN_PLACE) {
            ucoll_debug("gather: rbuf cannot be UCOLL_IN_PLACE");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(rbuf, count * comm->size, "gather rbuf")) != UCOLL_OK) {
            return st;
        }
        a.rbuf = rbuf;
        if (sbuf == UCOLL_IN_PLACE) {
            a.in_place = 1;
            a.sbuf = (char *)rbuf + (size_t)root * count * a.esize;
        } else if ((st = ucoll__check_buf(sbuf, count, "gather sbuf")) != UCOLL_OK) {
            return st;
        } else {
            a.sbuf = sbuf;
        }
    } else {
        if (sbuf == UCOLL_IN_PLACE) {
            ucoll_debug("gather: UCOLL_IN_PLACE is only allowed at the root");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(sbuf, count, "gather sbuf")) != UCOLL_OK) {
            return st;
        }
        a.sbuf = sbuf;
    }
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_gather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                 ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_igather(sbuf, rbuf, count, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll_wait(req, NULL);
}

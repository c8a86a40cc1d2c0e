/*
 * Gatherv: API entry points, argument checks and the registry.
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
    NULL,
};

int ucoll_igatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                   const size_t *displs, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                   ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    size_t max = 0;
    int st, i;

    if ((st = ucoll__check_comm(comm)) != UCOLL_OK || (st = ucoll__check_dtype(dt)) != UCOLL_OK) {
        return st;
    }
    if (req == NULL) {
        ucoll_debug("gatherv: NULL request pointer");
        return UCOLL_ERR_ARG;
    }
    if (root < 0 || root >= comm->size) {
        ucoll_debug("gatherv: root %d not in [0, %d)", root, comm->size);
        return UCOLL_ERR_ARG;
    }
    a.coll = UCOLL_COLL_GATHERV;
    a.dt = dt;
    a.esize = ucoll_dtype_size(dt);
    a.root = root;
    if (comm->rank == root) {
        if (rcounts == NULL || displs == NULL) {
            ucoll_debug("gatherv: rcounts and displs are required at the root");
            return UCOLL_ERR_ARG;
        }
        for (i = 0; i < comm->size; i++) {
            max = UCOLL_MAX(max, displs[i] + rcounts[i]);
        }
        if (rbuf == UCOLL_IN_PLACE) {
            ucoll_debug("gatherv: rbuf cannot be UCOLL_IN_PLACE");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(rbuf, max, "gatherv rbuf")) != UCOLL_OK) {
            return st;
        }
        if (sbuf == UCOLL_IN_PLACE) {
            a.in_place = 1;
            sbuf = (char *)rbuf + displs[root] * a.esize;
            scount = rcounts[root];
        } else if ((st = ucoll__check_buf(sbuf, scount, "gatherv sbuf")) != UCOLL_OK) {
            return st;
        } else if (scount > rcounts[root]) {
            ucoll_debug("gatherv: root sends %zu elements to itself, receives %zu", scount,
                        rcounts[root]);
            return UCOLL_ERR_TRUNCATE;
        }
        a.rbuf = rbuf;
        a.rcounts = rcounts;
        a.rdispls = displs;
    } else {
        if (sbuf == UCOLL_IN_PLACE) {
            ucoll_debug("gatherv: UCOLL_IN_PLACE is only allowed at the root");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(sbuf, scount, "gatherv sbuf")) != UCOLL_OK) {
            return st;
        }
    }
    a.sbuf = sbuf;
    a.scount = scount;
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_gatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                  const size_t *displs, ucoll_dtype_t dt, int root, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_igatherv(sbuf, scount, rbuf, rcounts, displs, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll_wait(req, NULL);
}

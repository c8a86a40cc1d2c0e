/*
 * Scatterv: API entry points, argument checks and the registry.
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
    NULL,
};

int ucoll_iscatterv(const void *sbuf, const size_t *scounts, const size_t *displs, void *rbuf,
                    size_t rcount, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                    ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    size_t max = 0;
    int st, i;

    if ((st = ucoll__check_comm(comm)) != UCOLL_OK || (st = ucoll__check_dtype(dt)) != UCOLL_OK) {
        return st;
    }
    if (req == NULL) {
        ucoll_debug("scatterv: NULL request pointer");
        return UCOLL_ERR_ARG;
    }
    if (root < 0 || root >= comm->size) {
        ucoll_debug("scatterv: root %d not in [0, %d)", root, comm->size);
        return UCOLL_ERR_ARG;
    }
    a.coll = UCOLL_COLL_SCATTERV;
    a.dt = dt;
    a.esize = ucoll_dtype_size(dt);
    a.root = root;
    if (comm->rank == root) {
        if (scounts == NULL || displs == NULL) {
            ucoll_debug("scatterv: scounts and displs are required at the root");
            return UCOLL_ERR_ARG;
        }
        for (i = 0; i < comm->size; i++) {
            max = UCOLL_MAX(max, displs[i] + scounts[i]);
        }
        if (sbuf == UCOLL_IN_PLACE) {
            ucoll_debug("scatterv: sbuf cannot be UCOLL_IN_PLACE");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(sbuf, max, "scatterv sbuf")) != UCOLL_OK) {
            return st;
        }
        if (rbuf == UCOLL_IN_PLACE) {
            a.in_place = 1;
            rbuf = (char *)sbuf + displs[root] * a.esize;
            rcount = scounts[root];
        } else if ((st = ucoll__check_buf(rbuf, rcount, "scatterv rbuf")) != UCOLL_OK) {
            return st;
        } else if (scounts[root] > rcount) {
            ucoll_debug("scatterv: root sends %zu elements to itself, receives %zu", scounts[root],
                        rcount);
            return UCOLL_ERR_TRUNCATE;
        }
        a.sbuf = sbuf;
        a.scounts = scounts;
        a.sdispls = displs;
    } else {
        if (rbuf == UCOLL_IN_PLACE) {
            ucoll_debug("scatterv: UCOLL_IN_PLACE is only allowed at the root");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(rbuf, rcount, "scatterv rbuf")) != UCOLL_OK) {
            return st;
        }
    }
    a.rbuf = rbuf;
    a.rcount = rcount;
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_scatterv(const void *sbuf, const size_t *scounts, const size_t *displs, void *rbuf,
                   size_t rcount, ucoll_dtype_t dt, int root, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iscatterv(sbuf, scounts, displs, rbuf, rcount, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll_wait(req, NULL);
}

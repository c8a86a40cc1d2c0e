/*
 * Reduce_scatter and reduce_scatter_block: API entry points, argument
 * checks and the registries (the same rows serve both).
 */
#include "reduce_scatter.h"
#include "dtype.h"

#include <stdint.h>

/* shm serves the block variant only (progress/shm.h's ops cannot keep the
 * caller's counts). pairwise first: at p = 2 it and rhalving are one exchange each and cost
 * the same in the model, and the first listed wins a tie; pairwise, which
 * folds into rbuf directly, measured 0.55-0.95x rhalving's time there
 * (1 KiB - 64 MiB; alike below), which reduces whole vectors in scratch */
const ucoll_algo_t *const ucoll__reduce_scatter_block_algos[] = {
    &ucoll__reduce_scatter_pairwise,
    &ucoll__reduce_scatter_rhalving,
    &ucoll__reduce_scatter_ring,
    &ucoll__reduce_scatter_shm,
    NULL,
};

const ucoll_algo_t *const ucoll__reduce_scatter_algos[] = {
    &ucoll__reduce_scatter_pairwise,
    &ucoll__reduce_scatter_rhalving,
    &ucoll__reduce_scatter_ring,
    NULL,
};

size_t *ucoll__rs_offsets(const ucoll_coll_args_t *a, int p)
{
    size_t *off = malloc(sizeof(size_t) * (size_t)(p + 1));

    if (off == NULL) {
        return NULL;
    }
    off[0] = 0;
    for (int i = 0; i < p; i++) {
        off[i + 1] = off[i] + (a->rcounts ? a->rcounts[i] : a->count);
    }
    return off;
}

static int rs_start(ucoll_coll_t coll, const void *sbuf, void *rbuf, size_t count,
                    const size_t *rcounts, ucoll_dtype_t dt, ucoll_op_t op, ucoll_comm_t *comm,
                    ucoll_req_t **req)
{
    const char *name = ucoll__coll_name(coll);
    ucoll_coll_args_t a = {0};
    size_t mine, total = 0;
    int st;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__check_op(op, dt)) || (st = ucoll__coll_check_req(name, req))) {
        return st;
    }
    a.esize = ucoll__dtype_size(dt);
    if (coll == UCOLL_COLL_REDUCE_SCATTER) {
        if (rcounts == NULL) {
            ucoll_debug("%s: NULL rcounts", name);
            return UCOLL_ERR_ARG;
        }
        for (int i = 0; i < comm->size; i++) {
            if (rcounts[i] > SIZE_MAX / a.esize - total) {
                ucoll_debug("%s: counts overflow", name);
                return UCOLL_ERR_ARG;
            }
            total += rcounts[i];
        }
        mine = rcounts[comm->rank];
    } else {
        if ((st = ucoll__coll_check_count(name, comm, count, a.esize))) {
            return st;
        }
        total = count * (size_t)comm->size;
        mine = count;
    }
    if ((st = ucoll__coll_check_not_in_place(name, "rbuf", rbuf))) {
        return st;
    }
    if (sbuf == UCOLL_IN_PLACE) {
        if ((st = ucoll__check_buf(rbuf, total, "in-place rbuf"))) {
            return st;
        }
        a.in_place = 1;
        a.sbuf = rbuf;
    } else if ((st = ucoll__check_buf(sbuf, total, "sbuf")) ||
               (st = ucoll__check_buf(rbuf, mine, "rbuf"))) {
        return st;
    } else {
        a.sbuf = sbuf;
    }
    a.coll = coll;
    a.rbuf = rbuf;
    a.count = count;
    a.rcounts = rcounts;
    a.rcount = mine;
    a.dt = dt;
    a.op = op;
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_ireduce_scatter_block(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                                ucoll_op_t op, ucoll_comm_t *comm, ucoll_req_t **req)
{
    return rs_start(UCOLL_COLL_REDUCE_SCATTER_BLOCK, sbuf, rbuf, count, NULL, dt, op, comm, req);
}

int ucoll_ireduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts, ucoll_dtype_t dt,
                          ucoll_op_t op, ucoll_comm_t *comm, ucoll_req_t **req)
{
    return rs_start(UCOLL_COLL_REDUCE_SCATTER, sbuf, rbuf, 0, rcounts, dt, op, comm, req);
}

int ucoll_reduce_scatter_block(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                               ucoll_op_t op, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ireduce_scatter_block(sbuf, rbuf, count, dt, op, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

int ucoll_reduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts, ucoll_dtype_t dt,
                         ucoll_op_t op, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ireduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

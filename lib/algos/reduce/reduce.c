/*
 * Reduce: API entry points, argument checks and the registry.
 *
 * rbuf matters at the root only. At the root sbuf = UCOLL_IN_PLACE means
 * the root's contribution is in rbuf.
 */
#include "reduce.h"
#include "dtype.h"

const ucoll_algo_t *const ucoll__reduce_algos[] = {
    &ucoll__reduce_binomial, &ucoll__reduce_rabenseifner,    &ucoll__reduce_linear,
    &ucoll__reduce_pipeline, &ucoll__reduce_inorder_bintree, &ucoll__reduce_knomial,
    &ucoll__reduce_twotree,
    &ucoll__reduce_shm,
    &ucoll__reduce_hier,
    NULL,
};

int ucoll_ireduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                  int root, ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__check_op(op, dt)) || (st = ucoll__coll_check_req("reduce", req)) ||
        (st = ucoll__coll_check_root("reduce", comm, root))) {
        return st;
    }
    a.coll = UCOLL_COLL_REDUCE;
    a.count = count;
    a.dt = dt;
    a.op = op;
    a.root = root;
    a.esize = ucoll__dtype_size(dt);
    if (comm->rank == root) {
        if (rbuf == UCOLL_IN_PLACE || (st = ucoll__check_buf(rbuf, count, "reduce rbuf"))) {
            ucoll_debug("reduce: invalid rbuf at the root");
            return UCOLL_ERR_ARG;
        }
        a.rbuf = rbuf;
        if (sbuf == UCOLL_IN_PLACE) {
            a.in_place = 1;
            a.sbuf = rbuf;
        } else if ((st = ucoll__check_buf(sbuf, count, "reduce sbuf"))) {
            return st;
        } else {
            a.sbuf = sbuf;
        }
    } else {
        if (sbuf == UCOLL_IN_PLACE) {
            ucoll_debug("reduce: UCOLL_IN_PLACE is only allowed at the root");
            return UCOLL_ERR_ARG;
        }
        if ((st = ucoll__check_buf(sbuf, count, "reduce sbuf"))) {
            return st;
        }
        a.sbuf = sbuf;
    }
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_reduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                 int root, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ireduce(sbuf, rbuf, count, dt, op, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

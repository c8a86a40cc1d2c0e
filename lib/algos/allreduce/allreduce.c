/*
 * Allreduce: API entry points, argument checks and the registry.
 * sbuf = UCOLL_IN_PLACE means every rank's input is in its rbuf.
 */
#include "allreduce.h"
#include "dtype.h"

const ucoll_algo_t *const ucoll__allreduce_algos[] = {
    &ucoll__allreduce_rdbl,
    &ucoll__allreduce_rabenseifner,
    &ucoll__allreduce_ring,
    &ucoll__allreduce_reduce_bcast,
    &ucoll__allreduce_knomial,
    &ucoll__allreduce_sra_knomial,
    &ucoll__allreduce_twotree,
    &ucoll__allreduce_shm,
    &ucoll__allreduce_hier,
    NULL,
};

int ucoll_iallreduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                     ucoll_comm_t *comm, ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__check_op(op, dt)) || (st = ucoll__check_buf(rbuf, count, "allreduce rbuf"))) {
        return st;
    }
    if (req == NULL || rbuf == UCOLL_IN_PLACE) {
        ucoll_debug("allreduce: %s", req ? "rbuf cannot be UCOLL_IN_PLACE" : "NULL request");
        return UCOLL_ERR_ARG;
    }
    a.coll = UCOLL_COLL_ALLREDUCE;
    a.count = count;
    a.dt = dt;
    a.op = op;
    a.esize = ucoll__dtype_size(dt);
    a.rbuf = rbuf;
    if (sbuf == UCOLL_IN_PLACE) {
        a.in_place = 1;
        a.sbuf = rbuf;
    } else if ((st = ucoll__check_buf(sbuf, count, "allreduce sbuf"))) {
        return st;
    } else {
        a.sbuf = sbuf;
    }
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_allreduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                    ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iallreduce(sbuf, rbuf, count, dt, op, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

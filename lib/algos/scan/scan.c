/*
 * Scan and exscan: API entry points, argument checks and the registries.
 */
#include "scan.h"
#include "dtype.h"

const ucoll_algo_t *const ucoll__scan_algos[] = {
    &ucoll__scan_rdbl,
    &ucoll__scan_linear,
    &ucoll__scan_pipeline,
    NULL,
};

const ucoll_algo_t *const ucoll__exscan_algos[] = {
    &ucoll__scan_rdbl,
    &ucoll__scan_linear,
    &ucoll__scan_pipeline,
    NULL,
};

static int scan_start(ucoll_coll_t coll, const void *sbuf, void *rbuf, size_t count,
                      ucoll_dtype_t dt, ucoll_op_t op, ucoll_comm_t *comm, ucoll_req_t **req)
{
    const char *name = ucoll__coll_name(coll);
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__check_op(op, dt)) || (st = ucoll__check_buf(rbuf, count, "rbuf"))) {
        return st;
    }
    if (req == NULL || rbuf == UCOLL_IN_PLACE) {
        ucoll_debug("%s: %s", name, req ? "rbuf cannot be UCOLL_IN_PLACE" : "NULL request");
        return UCOLL_ERR_ARG;
    }
    if (sbuf == UCOLL_IN_PLACE) {
        a.in_place = 1;
        a.sbuf = rbuf;
    } else if ((st = ucoll__check_buf(sbuf, count, "sbuf"))) {
        return st;
    } else {
        a.sbuf = sbuf;
    }
    a.coll = coll;
    a.rbuf = rbuf;
    a.count = count;
    a.dt = dt;
    a.op = op;
    a.esize = ucoll__dtype_size(dt);
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_iscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                ucoll_comm_t *comm, ucoll_req_t **req)
{
    return scan_start(UCOLL_COLL_SCAN, sbuf, rbuf, count, dt, op, comm, req);
}

int ucoll_iexscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                  ucoll_comm_t *comm, ucoll_req_t **req)
{
    return scan_start(UCOLL_COLL_EXSCAN, sbuf, rbuf, count, dt, op, comm, req);
}

int ucoll_scan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
               ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iscan(sbuf, rbuf, count, dt, op, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

int ucoll_exscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                 ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_iexscan(sbuf, rbuf, count, dt, op, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

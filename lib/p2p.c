/*
 * The public point-to-point calls: argument checks, then the engine in
 * lib/progress/p2p.c (requests, protocols, matching) does the work.
 *
 * Every call checks its arguments and says what is wrong (debug log) before
 * anything starts. Blocking calls whose arguments are plainly valid skip the
 * full checks (plain_args, no function call), and a small blocking send that
 * UCX can complete on the spot needs no request at all
 * (ucoll__p2p_send_now).
 */
#include "core.h"
#include "dtype.h"
#include "progress/p2p.h"
#include "progress/request.h"

#include <stdint.h>

static int p2p_args(const void *buf, size_t count, ucoll_dtype_t dt, int peer, int tag,
                    ucoll_comm_t *comm, void *req_p, int recv, size_t *bytes_p)
{
    size_t dsize;
    int ret;

    if ((ret = ucoll__check_comm(comm)) != UCOLL_OK || (ret = ucoll__check_dtype(dt)) != UCOLL_OK ||
        (ret = ucoll__check_buf(buf, count, recv ? "receive buffer" : "send buffer")) != UCOLL_OK) {
        return ret;
    }
    if (req_p == NULL) {
        ucoll_debug("NULL request pointer");
        return UCOLL_ERR_ARG;
    }
    if (!(peer >= 0 && peer < comm->size) && !(recv && peer == UCOLL_ANY_SOURCE)) {
        ucoll_debug("invalid %s rank %d (communicator of %d)", recv ? "source" : "destination",
                    peer, comm->size);
        return UCOLL_ERR_ARG;
    }
    if (!(tag >= 0 && tag <= UCOLL_TAG_UB) && !(recv && tag == UCOLL_ANY_TAG)) {
        ucoll_debug("invalid tag %d (0..%d)", tag, UCOLL_TAG_UB);
        return UCOLL_ERR_ARG;
    }
    dsize = ucoll_dtype_size(dt);
    if (dsize == 0 || (count && SIZE_MAX / count < dsize)) {
        ucoll_debug("invalid datatype or count");
        return UCOLL_ERR_ARG;
    }
    if (comm->ctx->p2p == NULL) {
        ucoll_debug("point-to-point needs a UCX context");
        return UCOLL_ERR_UNSUPPORTED;
    }
    *bytes_p = count * dsize;
    return UCOLL_OK;
}

/* Whether the arguments of a send (recv = 0) or receive are plainly valid,
 * checked without a call: blocking calls then skip p2p_args, which checks
 * the same and says what is wrong. count * 8 (the largest datatype) cannot
 * overflow. */
static inline int plain_args(const void *buf, size_t count, ucoll_dtype_t dt, int peer, int tag,
                             const ucoll_comm_t *comm, int recv)
{
    return ucoll_likely(
        comm != NULL && comm->ctx->p2p != NULL && (unsigned)dt < UCOLL_DTYPE_LAST &&
        ((unsigned)peer < (unsigned)comm->size || (recv && peer == UCOLL_ANY_SOURCE)) &&
        ((unsigned)tag <= UCOLL_TAG_UB || (recv && tag == UCOLL_ANY_TAG)) &&
        (buf != NULL || count == 0) && count <= SIZE_MAX / 8);
}

static int start(ucoll_comm_t *comm, int kind, void *buf, size_t bytes, int peer, int tag,
                 ucoll_req_t **req_p)
{
    ucoll_req_t *req = ucoll__p2p_req(comm, kind, buf, bytes, peer, tag);

    if (req == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ucoll__p2p_start(req);
    *req_p = req;
    return UCOLL_OK;
}

int ucoll_isend(const void *buf, size_t count, ucoll_dtype_t dt, int dst, int tag,
                ucoll_comm_t *comm, ucoll_req_t **req_p)
{
    size_t bytes;
    int ret = p2p_args(buf, count, dt, dst, tag, comm, req_p, 0, &bytes);

    if (ret != UCOLL_OK) {
        return ret;
    }
    return start(comm, UCOLL_REQ_SEND, (void *)buf, bytes, dst, tag, req_p);
}

int ucoll_irecv(void *buf, size_t count, ucoll_dtype_t dt, int src, int tag, ucoll_comm_t *comm,
                ucoll_req_t **req_p)
{
    size_t bytes;
    int ret = p2p_args(buf, count, dt, src, tag, comm, req_p, 1, &bytes);

    if (ret != UCOLL_OK) {
        return ret;
    }
    return start(comm, UCOLL_REQ_RECV, buf, bytes, src, tag, req_p);
}

/* ucoll_send for everything ucoll__p2p_send_now does not take. */
static __attribute__((noinline)) int send_wait(const void *buf, size_t count, ucoll_dtype_t dt,
                                               int dst, int tag, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int ret = ucoll_isend(buf, count, dt, dst, tag, comm, &req);

    return ret != UCOLL_OK ? ret : ucoll__p2p_wait_blocking(req, NULL);
}

int ucoll_send(const void *buf, size_t count, ucoll_dtype_t dt, int dst, int tag,
               ucoll_comm_t *comm)
{
    /* a small message with plainly valid arguments goes straight out;
     * anything else takes the full checks (and their messages) */
    if (plain_args(buf, count, dt, dst, tag, comm, 0) &&
        ucoll__p2p_send_now(comm, buf, count * ucoll__dtype_size(dt), dst, tag)) {
        return UCOLL_OK;
    }
    return send_wait(buf, count, dt, dst, tag, comm);
}

int ucoll_recv(void *buf, size_t count, ucoll_dtype_t dt, int src, int tag, ucoll_comm_t *comm,
               ucoll_status_t *status)
{
    ucoll_req_t *req;
    int ret;

    /* plainly valid arguments skip the full checks (and their messages) */
    if (plain_args(buf, count, dt, src, tag, comm, 1)) {
        ret = start(comm, UCOLL_REQ_RECV, buf, count * ucoll__dtype_size(dt), src, tag, &req);
    } else {
        ret = ucoll_irecv(buf, count, dt, src, tag, comm, &req);
    }
    return ret != UCOLL_OK ? ret : ucoll__p2p_wait_blocking(req, status);
}

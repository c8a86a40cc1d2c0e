/*
 * Transport operations of the UCX backend (see ucx.h): active messages,
 * tagged send and receive, RMA get, the data of AM rendezvous descriptors,
 * and the UCP completion callbacks that report them to tl->op_done.
 */
#include "transport/ucx_int.h"

#include <string.h>

/* An operation on the endpoint to rank ended with status. UNREACHABLE, and
 * CANCELED on an endpoint operation (UCX purges an endpoint it has given up
 * on with it; the only operation ucoll cancels itself is a tagged receive,
 * which belongs to no endpoint), say the peer is gone even when no endpoint
 * error callback comes (same-node endpoints have none): mark it failed, so
 * that everything else waiting for it fails too instead of hanging. */
static void op_peer_status(ucoll_tl_t *tl, int rank, ucs_status_t status)
{
    if (rank >= 0 && rank != tl->ctx->rank &&
        (status == UCS_ERR_UNREACHABLE || status == UCS_ERR_CANCELED)) {
        ucoll__tl_set_failed(tl->ctx, rank, UCOLL_ERR_PEER);
    }
}

/* A UCX call that starts an operation, with tl->in_call raised around it
 * (see ucx.h: a peer failing inside it is reported at the next progress). */
#define UCX_CALL(_tl, _call)    \
    ({                          \
        ucoll_tl_t *_t = (_tl); \
        ucs_status_ptr_t _r;    \
        _t->in_call++;          \
        _r = (_call);           \
        _t->in_call--;          \
        _r;                     \
    })

/* The UCP request of op is done: free both, then report to the op's
 * request unless it was detached, then mark the peer failed if the status
 * says so (after the report: the failure handler must not find the op). */
static void op_complete(void *request, ucs_status_t status, ucoll_tl_op_t *op)
{
    ucoll_tl_t *tl = op->tl;
    void *req = op->req;
    int what = op->what, rank = op->rank;

    ucp_request_free(request);
    if (op->rkey) {
        ucp_rkey_destroy(op->rkey);
        op->rkey = NULL;
    }
    ucoll__tl_op_free(tl, op);
    if (req != NULL) {
        tl->op_done(req, what, ucoll__tl_status(status));
    }
    op_peer_status(tl, rank, status);
}

static void send_cb(void *request, ucs_status_t status, void *user_data)
{
    op_complete(request, status, user_data);
}

static void tag_recv_cb(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info,
                        void *user_data)
{
    (void)info;
    op_complete(request, status, user_data);
}

static void am_recv_cb(void *request, ucs_status_t status, size_t length, void *user_data)
{
    (void)length;
    op_complete(request, status, user_data);
}

/* What a *_nbx call returned for op: in flight, or done (op freed). */
static int op_track(ucoll_tl_op_t *op, ucs_status_ptr_t r)
{
    if (UCS_PTR_IS_PTR(r)) {
        op->ucp_req = r;
        return UCOLL_TL_INPROGRESS;
    }
    if (op->rkey) {
        ucp_rkey_destroy(op->rkey);
        op->rkey = NULL;
    }
    /* an immediate failure is only returned: marking the peer failed here
     * would fail the caller's request under its feet */
    ucoll__tl_op_free(op->tl, op);
    return ucoll__tl_status(UCS_PTR_STATUS(r));
}

static void op_param(ucp_request_param_t *param, ucoll_tl_op_t *op, int type)
{
    op->type = type;
    memset(param, 0, sizeof(*param));
    param->op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param->user_data = op;
}

/* An operation that cannot start: op goes back, nothing is reported. */
static int op_fail(ucoll_tl_op_t *op, int err)
{
    ucoll__tl_op_free(op->tl, op);
    return err;
}

/* The endpoint to rank for op, or the error with op given back. */
static int op_ep(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, ucp_ep_h *ep_p)
{
    int ret = ucoll__tl_ep(ctx, rank, ep_p);

    return ret == UCOLL_OK ? UCOLL_OK : op_fail(op, ret);
}

void ucoll__tl_set_op_done(ucoll_tl_t *tl, void (*op_done)(void *req, int what, int status))
{
    tl->op_done = op_done;
}

static ucs_status_t am_cb(void *arg, const void *header, size_t header_length, void *data,
                          size_t length, const ucp_am_recv_param_t *param)
{
    const ucoll_tl_am_t *am = arg;
    int rndv = !!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);

    return am->cb(am->arg, header, header_length, data, length, rndv) ? UCS_INPROGRESS : UCS_OK;
}

int ucoll__tl_set_am_handler(ucoll_tl_t *tl, int am_id, ucoll_tl_am_cb_t cb, void *arg)
{
    ucp_am_handler_param_t hp = {0};
    ucs_status_t st;

    tl->am[am_id].cb = cb;
    tl->am[am_id].arg = arg;
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    hp.id = (unsigned)am_id;
    hp.cb = am_cb;
    hp.arg = &tl->am[am_id];
    st = ucp_worker_set_am_recv_handler(tl->worker, &hp);
    if (st != UCS_OK) {
        ucoll_error("cannot register active message handler %d: %s", am_id, ucs_status_string(st));
        return UCOLL_ERR_TRANSPORT;
    }
    return UCOLL_OK;
}

int ucoll__tl_am_send(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, int am_id, const void *hdr,
                      size_t hdr_len, const void *data, size_t len, unsigned flags)
{
    ucp_request_param_t param;
    ucp_ep_h ep;
    int ret;

    if ((ret = op_ep(ctx, rank, op, &ep)) != UCOLL_OK) {
        return ret;
    }
    if (am_id == UCOLL_AM_MSG && !(flags & UCOLL_TL_AM_RNDV) &&
        ucoll__tl_fifo_put(ctx->tl, &ctx->tl->peers[rank], am_id, hdr, hdr_len, data, len)) {
        ucoll__tl_op_free(ctx->tl, op);
        return UCOLL_OK;
    }
    op_param(&param, op, UCOLL_TL_OP_AM_SEND);
    op->rank = rank;
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send = send_cb;
    param.flags = (flags & UCOLL_TL_AM_RNDV)    ? UCP_AM_SEND_FLAG_RNDV
                  : (flags & UCOLL_TL_AM_EAGER) ? UCP_AM_SEND_FLAG_EAGER
                                                : 0;
    return op_track(op, UCX_CALL(ctx->tl, ucp_am_send_nbx(ep, (unsigned)am_id, hdr, hdr_len, data,
                                                          len, &param)));
}

int ucoll__tl_am_send_imm(ucoll_ctx_t *ctx, int rank, int am_id, const void *data, size_t len)
{
    ucp_request_param_t param;
    ucs_status_ptr_t r;
    ucp_ep_h ep;
    int ret;

    ret = ucoll__tl_ep(ctx, rank, &ep);
    if (ret != UCOLL_OK) {
        return ret;
    }
    if (am_id == UCOLL_AM_MSG &&
        ucoll__tl_fifo_put(ctx->tl, &ctx->tl->peers[rank], am_id, NULL, 0, data, len)) {
        return UCOLL_OK;
    }
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    param.flags = UCP_AM_SEND_FLAG_EAGER;
    r = UCX_CALL(ctx->tl, ucp_am_send_nbx(ep, (unsigned)am_id, NULL, 0, data, len, &param));
    if (ucoll_likely(r == NULL)) {
        return UCOLL_OK;
    }
    if (UCS_PTR_IS_PTR(r)) {
        ucp_request_free(r); /* cannot happen with FORCE_IMM_CMPL */
        return UCOLL_ERR_TRANSPORT;
    }
    return ucoll__tl_status(UCS_PTR_STATUS(r));
}

int ucoll__tl_tag_send(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, const void *buf, size_t len,
                       uint64_t tag)
{
    ucp_request_param_t param;
    ucp_ep_h ep;
    int ret;

    if ((ret = op_ep(ctx, rank, op, &ep)) != UCOLL_OK) {
        return ret;
    }
    op_param(&param, op, UCOLL_TL_OP_TAG_SEND);
    op->rank = rank;
    param.cb.send = send_cb;
    return op_track(op, UCX_CALL(ctx->tl, ucp_tag_send_nbx(ep, buf, len, tag, &param)));
}

int ucoll__tl_tag_recv(ucoll_tl_t *tl, ucoll_tl_op_t *op, void *buf, size_t len, uint64_t tag)
{
    ucp_request_param_t param;

    op_param(&param, op, UCOLL_TL_OP_TAG_RECV);
    param.cb.recv = tag_recv_cb;
    return op_track(op,
                    UCX_CALL(tl, ucp_tag_recv_nbx(tl->worker, buf, len, tag, UINT64_MAX, &param)));
}

int ucoll__tl_get(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, void *buf, size_t len,
                  uint64_t raddr, const void *rkey_buf)
{
    ucp_request_param_t param;
    ucp_rkey_h rkey;
    ucp_ep_h ep;
    int ret;

    if ((ret = op_ep(ctx, rank, op, &ep)) != UCOLL_OK) {
        return ret;
    }
    if (ucp_ep_rkey_unpack(ep, rkey_buf, &rkey) != UCS_OK) {
        return op_fail(op, UCOLL_ERR_TRANSPORT);
    }
    op->rkey = rkey;
    op_param(&param, op, UCOLL_TL_OP_GET);
    op->rank = rank;
    param.cb.send = send_cb;
    return op_track(op, UCX_CALL(ctx->tl, ucp_get_nbx(ep, buf, len, raddr, rkey, &param)));
}

int ucoll__tl_am_recv_data(ucoll_tl_t *tl, ucoll_tl_op_t *op, void *desc, void *buf, size_t len)
{
    ucp_request_param_t param;

    op_param(&param, op, UCOLL_TL_OP_AM_RECV);
    param.cb.recv_am = am_recv_cb;
    return op_track(op, UCX_CALL(tl, ucp_am_recv_data_nbx(tl->worker, desc, buf, len, &param)));
}

void ucoll__tl_am_release(ucoll_tl_t *tl, void *desc)
{
    ucp_am_data_release(tl->worker, desc);
}

void ucoll__tl_op_detach(ucoll_tl_t *tl, ucoll_tl_op_t *op)
{
    op->req = NULL;
    if (op->rkey) {
        ucp_rkey_destroy(op->rkey);
        op->rkey = NULL;
    }
    /* last: the cancelled receive completes (and frees op) at once */
    if (op->type == UCOLL_TL_OP_TAG_RECV && op->ucp_req) {
        tl->in_call++;
        ucp_request_cancel(tl->worker, op->ucp_req);
        tl->in_call--;
    }
}

void ucoll__tl_op_cancel(ucoll_tl_t *tl, ucoll_tl_op_t *op)
{
    /* UCP 1.13 cancels only receives that are still waiting for a match;
     * everything else runs to completion, which is then reported */
    if (op->type == UCOLL_TL_OP_TAG_RECV && op->ucp_req) {
        tl->in_call++;
        ucp_request_cancel(tl->worker, op->ucp_req);
        tl->in_call--;
    }
}

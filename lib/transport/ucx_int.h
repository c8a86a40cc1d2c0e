/*
 * What the UCX backend's own files (ucx.c, ucx_ops.c) share and nothing
 * above the transport may include: the UCX headers, endpoint handles, and
 * the mapping of UCX status codes.
 */
#ifndef UCOLL_TRANSPORT_UCX_INT_H
#define UCOLL_TRANSPORT_UCX_INT_H

#include "transport/ucx.h"

#include <ucp/api/ucp.h>

/* ucoll_tl_op_t.type: the UCP operation an op carries. */
enum {
    UCOLL_TL_OP_AM_SEND,
    UCOLL_TL_OP_TAG_SEND,
    UCOLL_TL_OP_TAG_RECV,
    UCOLL_TL_OP_GET,
    UCOLL_TL_OP_AM_RECV
};

/* The endpoint to job rank `rank`, created on first use (see
 * ucoll__tl_connect for the errors). */
static inline int ucoll__tl_ep(ucoll_ctx_t *ctx, int rank, ucp_ep_h *ep_p)
{
    const ucoll_tl_peer_t *peer = &ctx->tl->peers[rank];

    if (ucoll_likely(peer->state == UCOLL_TL_EP_UP)) {
        *ep_p = peer->ep;
        return UCOLL_OK;
    }
    return ucoll__tl_ep_connect(ctx, rank, ep_p);
}

/* Map a UCX status to a ucoll status (peer-related errors to
 * UCOLL_ERR_PEER, the rest to UCOLL_ERR_TRANSPORT). */
int ucoll__tl_status(ucs_status_t status);

#endif

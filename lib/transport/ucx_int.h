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

/* ---- rings of small messages to same-node peers (ucx_fifo.c) ---- */
/* Register the handler of UCOLL_AM_FIFO; set tl->fifo_on. */
int ucoll__tl_fifo_init(ucoll_tl_t *tl);
/* Detach the rings polled and unmap the rings written (before the
 * endpoints close). */
void ucoll__tl_fifo_cleanup(ucoll_tl_t *tl);
/* Put a packet for active message am_id, its user header (hdr_len bytes,
 * at most 255) then its len bytes of data, into the ring to peer
 * (connected): 1 when it is there, 0 when UCX must carry it (no ring yet,
 * which the first call offers, the packet larger than a ring takes, or the
 * ring full). */
int ucoll__tl_fifo_put(ucoll_tl_t *tl, ucoll_tl_peer_t *peer, int am_id, const void *hdr,
                       size_t hdr_len, const void *data, size_t len);
/* Deliver what the rings hold to the handlers of tl->am; the number taken. */
int ucoll__tl_fifo_poll(ucoll_tl_t *tl);
/* Attach the rings offered since the last call (outside UCX progress). */
void ucoll__tl_fifo_offers(ucoll_tl_t *tl);
/* Before sleeping on the worker fd: ask the writers for a wake-up; 1 when
 * a ring holds a packet already (do not sleep). disarm: awake again. */
int ucoll__tl_fifo_arm(ucoll_tl_t *tl);
void ucoll__tl_fifo_disarm(ucoll_tl_t *tl);

/* Map a UCX status to a ucoll status (peer-related errors to
 * UCOLL_ERR_PEER, the rest to UCOLL_ERR_TRANSPORT). */
int ucoll__tl_status(ucs_status_t status);

#endif

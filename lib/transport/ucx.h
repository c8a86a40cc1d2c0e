/*
 * UCX wiring internals shared by the transport and the point-to-point layer:
 * the UCP context and worker of a ucoll context, one lazily connected
 * endpoint per job rank, failure detection, and the mapping of UCX status
 * codes.
 *
 * Failure detection. Endpoints to peers on other nodes use
 * UCP_ERR_HANDLING_MODE_PEER: UCX reports their failure through the endpoint
 * error callback. UCX 1.13's shared-memory transports (posix, sysv, self)
 * cannot serve that mode (they only offer ep_check), and asking for it would
 * push same-node traffic onto TCP loopback; so when shared memory is
 * available, same-node endpoints use UCP_ERR_HANDLING_MODE_NONE and the
 * peer's liveness is watched through its process id (published next to the
 * worker address) at most every UCOLL_TL_WATCH_NS. Either way the peer is
 * marked failed and tl->on_failure runs once for it.
 *
 * UCX operations whose completion callback may outlive the request that
 * started them (the request is failed early when its peer dies) carry a
 * ucoll_tl_op_t as user data: the request is detached by clearing op->req,
 * and the op itself is freed by the callback or at cleanup after the worker
 * is gone.
 */
#ifndef UCOLL_TRANSPORT_UCX_H
#define UCOLL_TRANSPORT_UCX_H

#include "core.h"
#include "transport/tl.h"

#include <sys/types.h>
#include <ucp/api/ucp.h>

#define UCOLL_TL_WATCH_NS 100000000ull
#define UCOLL_TL_OP_HDR   192

typedef enum { UCOLL_TL_EP_NONE, UCOLL_TL_EP_UP, UCOLL_TL_EP_FAILED } ucoll_tl_ep_state_t;

/* Transport family of an endpoint, used to pick the rendezvous mechanism. */
typedef enum { UCOLL_TL_KIND_SHM, UCOLL_TL_KIND_NET } ucoll_tl_kind_t;

typedef struct ucoll_tl_peer {
    struct ucoll_tl *tl;
    int rank;     /* in the job */
    int state;    /* ucoll_tl_ep_state_t */
    int kind;     /* ucoll_tl_kind_t, valid once UP */
    int local;    /* on this node */
    int watched;  /* liveness checked through pid */
    int err_peer; /* endpoint uses UCP_ERR_HANDLING_MODE_PEER */
    pid_t pid;
    ucp_ep_h ep;
    void *addr; /* worker address, malloc'ed; NULL until fetched */
    size_t addr_len;
} ucoll_tl_peer_t;

typedef struct ucoll_tl_op {
    ucoll_list_t link; /* tl->ops_live or tl->ops_free */
    struct ucoll_tl *tl;
    void *req; /* ucoll_req_t, NULL once detached */
    int what;  /* meaning chosen by the user of the op */
    void *ucp_req;
    /* AM header of a send: UCP 1.13 reads it until the send completes */
    uint64_t hdr[UCOLL_TL_OP_HDR / 8];
} ucoll_tl_op_t;

typedef struct ucoll_tl {
    ucoll_ctx_t *ctx;
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *addr;
    size_t addr_len;
    int efd;                /* worker event fd (wakeup feature) */
    int have_shm;           /* a shared-memory transport is enabled */
    ucoll_tl_peer_t *peers; /* ctx->size of them */
    unsigned nwatched;
    uint64_t watch_last;
    unsigned watch_tick;
    ucoll_list_t ops_live;
    ucoll_list_t ops_free;
    /* Called once per failed rank, from progress. */
    void (*on_failure)(ucoll_ctx_t *ctx, int rank, int status);
} ucoll_tl_t;

/* Active message ids of the wire protocol (lib/transport/wire.h). */
enum { UCOLL_AM_MSG = 0, UCOLL_AM_CTL = 1 };

/* The endpoint to job rank `rank`, created on first use (fetching the
 * peer's address first with direct modex). UCOLL_ERR_PEER when that peer has
 * failed, UCOLL_ERR_TRANSPORT / _BOOTSTRAP when it cannot be reached.
 * The connected case is inline; the rest is ucoll__tl_ep_connect. */
int ucoll__tl_ep_connect(ucoll_ctx_t *ctx, int rank, ucp_ep_h *ep_p);
static inline int ucoll__tl_ep(ucoll_ctx_t *ctx, int rank, ucp_ep_h *ep_p)
{
    const ucoll_tl_peer_t *peer = &ctx->tl->peers[rank];

    if (ucoll_likely(peer->state == UCOLL_TL_EP_UP)) {
        *ep_p = peer->ep;
        return UCOLL_OK;
    }
    return ucoll__tl_ep_connect(ctx, rank, ep_p);
}

/* Whether rank has been reported failed. */
static inline int ucoll__tl_failed(const ucoll_ctx_t *ctx, int rank)
{
    return ctx->tl->peers[rank].state == UCOLL_TL_EP_FAILED;
}

/* Transport family used to reach rank (connects if needed); SHM on error. */
int ucoll__tl_kind(ucoll_ctx_t *ctx, int rank);

/* Mark rank failed (once) and run tl->on_failure. */
void ucoll__tl_set_failed(ucoll_ctx_t *ctx, int rank, int status);

/* Map a UCX status to a ucoll status (peer-related errors to
 * UCOLL_ERR_PEER, the rest to UCOLL_ERR_TRANSPORT). */
int ucoll__tl_status(ucs_status_t status);

/* Close every endpoint (at finalize, once every rank has passed the final
 * bootstrap barrier, so no traffic is left to flush): endpoints with peer
 * error handling and failed ones are closed by force, because a flushing
 * close waits for a peer that may already be gone; the others (shared
 * memory, where flushing is local) with a flush. Gives up after a few
 * seconds. */
void ucoll__tl_close_eps(ucoll_ctx_t *ctx);

/* Check the liveness of watched peers now. */
void ucoll__tl_watch(ucoll_ctx_t *ctx);
/* Monotonic clock in nanoseconds. */
uint64_t ucoll__tl_now_ns(void);

/* One pass of UCX progress plus, now and then, the liveness watch of
 * same-node peers; returns the number of events. */
static inline int ucoll__tl_progress(ucoll_ctx_t *ctx)
{
    ucoll_tl_t *tl = ctx->tl;
    int n = (int)ucp_worker_progress(tl->worker);

    if (ucoll_unlikely(tl->nwatched && (++tl->watch_tick & 1023) == 0) &&
        ucoll__tl_now_ns() - tl->watch_last >= UCOLL_TL_WATCH_NS) {
        ucoll__tl_watch(ctx);
    }
    return n;
}

/* Prepare to sleep on the worker's event fd: 0 when the caller may poll()
 * ctx->tl->efd, 1 when events are pending (progress again instead). */
int ucoll__tl_arm(ucoll_ctx_t *ctx);

/* Operation records (see the header comment). alloc returns NULL when out of
 * memory; free puts it back (also when called from a UCX callback). */
ucoll_tl_op_t *ucoll__tl_op_alloc(ucoll_tl_t *tl, void *req, int what);
void ucoll__tl_op_free(ucoll_tl_t *tl, ucoll_tl_op_t *op);

#endif

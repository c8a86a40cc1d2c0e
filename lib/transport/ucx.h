/*
 * UCX wiring internals shared by the transport and the point-to-point layer:
 * the UCP context and worker of a ucoll context, one lazily connected
 * endpoint per job rank, failure detection, and the transport operations
 * the point-to-point engine (lib/progress/p2p.c) is built on. This header
 * includes no UCX header: UCP handles are opaque here, and everything that
 * needs UCX types lives in lib/transport/ucx_int.h.
 *
 * Failure detection. Endpoints to peers on other nodes use
 * UCP_ERR_HANDLING_MODE_PEER: UCX reports their failure through the endpoint
 * error callback. UCX 1.13's shared-memory transports (posix, sysv, self)
 * cannot serve that mode ("no peer failure handler" in UCX's own words; cma
 * offers no active messages at all), so a PEER endpoint to a same-node peer
 * runs over TCP loopback alone, or cannot be created when UCX_TLS has
 * nothing but shared memory. Over TCP, the mode costs large messages
 * bandwidth: UCX 1.13 then carries a rendezvous on one lane of one
 * interface, as active messages, where without it UCX puts the payload
 * (zero copy) and stripes it over every interface, which pays off from
 * about 1 MiB (below, the one lane is the quicker; UCOLL_LIVENESS=ucx
 * keeps it). So a same-node endpoint, over whatever
 * transport, uses UCP_ERR_HANDLING_MODE_NONE and the peer's liveness is
 * watched through its process (UCOLL_LIVENESS=ucx gives every peer UCX's
 * peer error handling instead), at most every UCOLL_TL_WATCH_NS,
 * by the identity it publishes next to its worker address
 * (ucoll_tl_ident_t): its pid, the pid and time namespaces that pid means
 * something in, and its start time. A pid is only as good as its namespace:
 * a rank in a container's pid namespace publishes a pid that names nothing,
 * or someone else, here; and a pid outlives its process to be reused. So
 * the pid watch serves a pair of ranks only when both run in one pid
 * namespace and one time namespace (where start times read alike), with a
 * /proc that shows that pid namespace, and it takes a peer for alive only
 * while /proc/PID/stat shows a live process with the published start time:
 * a reused pid, a zombie and a vanished pid all read as dead. Any other
 * same-node pair (namespaces differ, or either rank cannot read its own
 * identity or sees another namespace's /proc) falls back on UCX's peer
 * error handling, and with it on TCP; both ranks of a pair decide alike,
 * from both identities, as their endpoints must agree on the mode. Where
 * UCX_TLS offers nothing but shared memory, such a pair cannot connect at
 * all: ucoll__tl_ep_connect says so. Either way the peer is marked failed
 * and tl->on_failure runs once for it. A process that has begun to exit
 * counts as dead: its memory may be gone before it is a zombie. UCX 1.13
 * aborts the process when a zero-copy (CMA) transfer with a same-node peer
 * without peer error handling fails; ucx.c keeps that one failure from
 * aborting (cma_failure_filter), so a peer that dies in the middle of a
 * large message fails the transfer, and ucoll__tl_check_failed names it.
 *
 * Operations. A transport operation that may complete later carries a
 * ucoll_tl_op_t: the caller allocates it (naming the request it serves and
 * what it is for), the operation call takes it over, and the transport
 * frees it, either before the call returns (the operation finished or
 * failed on the spot: the return value says how, and nothing is reported)
 * or when UCX completes it, after which tl->op_done reports the request,
 * its `what` and a ucoll status. Because that completion may outlive the
 * request (the request is failed early when its peer dies), the request is
 * detached with ucoll__tl_op_detach: the op is then freed by its completion
 * without a report, or at cleanup after the worker is gone.
 */
#ifndef UCOLL_TRANSPORT_UCX_H
#define UCOLL_TRANSPORT_UCX_H

#include "core.h"
#include "transport/tl.h"

#include <stdint.h>

/* UCP handles, opaque outside lib/transport/ucx*.c */
struct ucp_context;
struct ucp_worker;
struct ucp_ep;
struct ucp_address;

#define UCOLL_TL_WATCH_NS 100000000ull
#define UCOLL_TL_OP_HDR   192

typedef enum { UCOLL_TL_EP_NONE, UCOLL_TL_EP_UP, UCOLL_TL_EP_FAILED } ucoll_tl_ep_state_t;

/* Transport family of an endpoint, used to pick the rendezvous mechanism. */
typedef enum { UCOLL_TL_KIND_SHM, UCOLL_TL_KIND_NET } ucoll_tl_kind_t;

/* Who a process is on this node, as far as the liveness watch is concerned
 * (see "Failure detection"); published in every rank's address, so fixed
 * in size and layout. Namespaces are named by the st_dev and st_ino of
 * /proc/self/ns/{pid,time}. */
typedef struct ucoll_tl_ident {
    uint64_t pidns[2];
    uint64_t timens[2]; /* 0, 0 on a kernel without time namespaces */
    uint64_t start;     /* clock ticks after boot (field 22 of /proc/PID/stat) */
    uint32_t pid;       /* in pidns */
    uint32_t watchable; /* all of the above is known, and /proc shows pidns */
} ucoll_tl_ident_t;

typedef struct ucoll_tl_peer {
    struct ucoll_tl *tl;
    int rank;            /* in the job */
    int state;           /* ucoll_tl_ep_state_t */
    int kind;            /* ucoll_tl_kind_t, valid once UP */
    int local;           /* on this node */
    int watched;         /* liveness checked through pid */
    int err_peer;        /* endpoint uses UCP_ERR_HANDLING_MODE_PEER */
    int fail_status;     /* a failure seen inside a UCX call, reported at the next progress */
    ucoll_tl_ident_t id; /* valid once addr is */
    struct ucp_ep *ep;
    void *addr; /* worker address, malloc'ed; NULL until fetched */
    size_t addr_len;
    /* the ring of small messages to this peer (ucx_fifo.c): offered, then
     * in use once the peer has attached it */
    int fifo_state;
    struct ucoll_tl_fifo *fifo_offered;
    struct ucoll_tl_fifo *fifo; /* non-NULL once in use */
} ucoll_tl_peer_t;

typedef struct ucoll_tl_op {
    ucoll_list_t link; /* tl->ops_live or tl->ops_free */
    struct ucoll_tl *tl;
    void *req;     /* ucoll_req_t, NULL once detached */
    int what;      /* meaning chosen by the user of the op */
    int type;      /* the transport operation (ucx_int.h), set when started */
    int rank;      /* job rank of the endpoint it runs on; -1 for worker-level ops */
    void *ucp_req; /* UCP request while in flight */
    void *rkey;    /* get: the unpacked remote key, destroyed at completion */
    /* AM header of a send: UCP 1.13 reads it until the send completes */
    uint64_t hdr[UCOLL_TL_OP_HDR / 8];
} ucoll_tl_op_t;

/* Handler of the active messages of one id: header and data as UCX
 * delivers them (a message sent without a user header arrives with
 * header_length 0), rndv when data is a rendezvous descriptor rather than
 * the payload. Returns 1 to keep such a descriptor (fetch it later with
 * ucoll__tl_am_recv_data, or drop it with ucoll__tl_am_release), else 0. */
typedef int (*ucoll_tl_am_cb_t)(void *arg, const void *header, size_t header_length, void *data,
                                size_t length, int rndv);

typedef struct ucoll_tl_am {
    ucoll_tl_am_cb_t cb;
    void *arg;
} ucoll_tl_am_t;

typedef struct ucoll_tl {
    ucoll_ctx_t *ctx;
    struct ucp_context *context;
    struct ucp_worker *worker;
    struct ucp_address *addr;
    size_t addr_len;
    int efd;                  /* worker event fd (wakeup feature) */
    int have_shm;             /* a shared-memory transport is enabled */
    int peer_mode;            /* UCP_ERR_HANDLING_MODE_PEER reaches this node: -1 not known yet */
    ucoll_tl_ident_t id;      /* this process's */
    const char *no_pid_watch; /* why id is not watchable; NULL when it is */
    ucoll_tl_peer_t *peers;   /* ctx->size of them */
    unsigned nwatched;
    uint64_t watch_last;
    unsigned watch_tick;
    ucoll_list_t ops_live;
    ucoll_list_t ops_free;
    /* UCX calls under way that start or withdraw an operation (ucx_ops.c),
     * and whether a peer failed inside one: UCX may complete other
     * requests of a failing endpoint inside such a call, but on_failure
     * must not run there, as it completes requests (the caller's own, on
     * its way out with its own error, among them) */
    int in_call;
    int fail_deferred;
    /* inside ucp_worker_progress (ucoll__tl_progress): callbacks must not
     * fetch or release an active message's data descriptor there */
    int progressing;
    /* Called once per failed rank, from progress. */
    void (*on_failure)(ucoll_ctx_t *ctx, int rank, int status);
    /* Completion of an operation whose request is still attached (see the
     * header comment): status UCOLL_OK or an error. */
    void (*op_done)(void *req, int what, int status);
    ucoll_tl_am_t am[2]; /* by active message id */
    /* rings of small messages from same-node peers (ucx_fifo.c) */
    int fifo_on;                   /* UCOLL_P2P_SHM=auto and a shared-memory transport */
    int fifo_armed;                /* sleep flags raised in the peers' rings */
    struct ucoll_tl_shm *fifo_shm; /* the region of the rings this rank writes */
    int fifo_rings, fifo_used;     /* rings in it, rings offered */
    int nfifo_in;                  /* rings polled */
    struct ucoll_tl_fifo_in **fifo_in;
    ucoll_list_t fifo_offers;     /* offers to attach, taken outside UCX progress */
    uint64_t fifo_refused;        /* slots with an impossible header, dropped */
    uint64_t fifo_sent, fifo_got; /* packets through rings, written and taken */
    uint64_t fifo_full;           /* packets UCX carried because the ring was full */
} ucoll_tl_t;

/* Active message ids of the wire protocol (lib/transport/wire.h). */
/* UCOLL_AM_FIFO is the transport's own: a ring offered, accepted or refused,
 * or a wake-up for a peer asleep with a ring (ucx_fifo.c). */
enum { UCOLL_AM_MSG = 0, UCOLL_AM_CTL = 1, UCOLL_AM_FIFO = 2 };

/* What an operation call returns, besides UCOLL_OK and errors, when the
 * operation is in flight: tl->op_done reports it. */
#define UCOLL_TL_INPROGRESS 1

/* Flags of ucoll__tl_am_send: the UCX protocol to use. */
enum { UCOLL_TL_AM_EAGER = 1, UCOLL_TL_AM_RNDV = 2 };

/* Connect to job rank `rank` unless connected (fetching the peer's address
 * first with direct modex). UCOLL_ERR_PEER when that peer has failed,
 * UCOLL_ERR_TRANSPORT / _BOOTSTRAP when it cannot be reached. The connected
 * case is inline; the rest is ucoll__tl_ep_connect. */
int ucoll__tl_ep_connect(ucoll_ctx_t *ctx, int rank, struct ucp_ep **ep_p);
static inline int ucoll__tl_connect(ucoll_ctx_t *ctx, int rank)
{
    struct ucp_ep *ep;

    if (ucoll_likely(ctx->tl->peers[rank].state == UCOLL_TL_EP_UP)) {
        return UCOLL_OK;
    }
    return ucoll__tl_ep_connect(ctx, rank, &ep);
}

/* Whether rank has been reported failed. */
static inline int ucoll__tl_failed(const ucoll_ctx_t *ctx, int rank)
{
    return ctx->tl->peers[rank].state == UCOLL_TL_EP_FAILED;
}

/* An operation with rank failed: whether rank is gone. A watched peer's
 * process is looked at now, not at the next watch tick (a failed copy from
 * a peer that just died says "transport error" on its own); a dead one is
 * reported (tl->on_failure) at the next progress, not under the caller. */
int ucoll__tl_check_failed(ucoll_ctx_t *ctx, int rank);

/* Mark rank failed (once) and run tl->on_failure. */
void ucoll__tl_set_failed(ucoll_ctx_t *ctx, int rank, int status);

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
int ucoll__tl_progress(ucoll_ctx_t *ctx);
static inline int ucoll__tl_progressing(const ucoll_tl_t *tl)
{
    return tl->progressing;
}

/* Prepare to sleep on the worker's event fd: 0 when the caller may poll()
 * ctx->tl->efd, 1 when events are pending (progress again instead). */
int ucoll__tl_arm(ucoll_ctx_t *ctx);

/* Operation records (see the header comment). alloc returns NULL when out of
 * memory; free puts back one that was never passed to an operation. */
ucoll_tl_op_t *ucoll__tl_op_alloc(ucoll_tl_t *tl, void *req, int what);
void ucoll__tl_op_free(ucoll_tl_t *tl, ucoll_tl_op_t *op);

/* ---- operations (lib/transport/ucx_ops.c) ---------------------------------
 * Those that take an op return UCOLL_TL_INPROGRESS (tl->op_done reports the
 * completion unless the op is detached first), UCOLL_OK (done now), or an
 * error (UCOLL_ERR_PEER for peer-related UCX errors, UCOLL_ERR_TRANSPORT for
 * the others, UCOLL_ERR_NOMEM, UCOLL_ERR_TRUNCATE, or the endpoint's error);
 * in the last two cases the op has been freed and nothing is reported. */

/* Install the completion callback of operations and the handler of active
 * message id am_id (UCOLL_AM_MSG or UCOLL_AM_CTL), which gets arg.
 * UCOLL_ERR_TRANSPORT when UCX refuses the handler. */
void ucoll__tl_set_op_done(ucoll_tl_t *tl, void (*op_done)(void *req, int what, int status));
int ucoll__tl_set_am_handler(ucoll_tl_t *tl, int am_id, ucoll_tl_am_cb_t cb, void *arg);

/* Send active message am_id to job rank `rank`: user header hdr (NULL, 0
 * for none) and payload data, with the protocol of flags (UCOLL_TL_AM_*).
 * hdr must stay valid until the operation completes: op->hdr is the place
 * for it. */
int ucoll__tl_am_send(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, int am_id, const void *hdr,
                      size_t hdr_len, const void *data, size_t len, unsigned flags);

/* Send active message am_id to rank, eager, without a user header, only if
 * UCX can complete it at once (no request, no op): UCOLL_OK when sent;
 * anything else means nothing was sent (no resources now, not connected,
 * or an error). */
int ucoll__tl_am_send_imm(ucoll_ctx_t *ctx, int rank, int am_id, const void *data, size_t len);

/* Tagged send of buf to rank with the full 64-bit UCX tag `tag`. */
int ucoll__tl_tag_send(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, const void *buf, size_t len,
                       uint64_t tag);

/* Tagged receive into buf of the message with exactly this tag. Detaching
 * the op cancels it. */
int ucoll__tl_tag_recv(ucoll_tl_t *tl, ucoll_tl_op_t *op, void *buf, size_t len, uint64_t tag);

/* Get len bytes at raddr of rank, whose memory is described by the packed
 * remote key rkey_buf, into buf. A key that cannot be unpacked gives
 * UCOLL_ERR_TRANSPORT. The unpacked key lives until the operation completes
 * or is detached. */
int ucoll__tl_get(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, void *buf, size_t len,
                  uint64_t raddr, const void *rkey_buf);

/* Receive into buf the payload of the rendezvous descriptor desc that an
 * active message handler kept; desc is consumed whatever the outcome. Not
 * from inside UCX progress (an active message handler). */
int ucoll__tl_am_recv_data(ucoll_tl_t *tl, ucoll_tl_op_t *op, void *desc, void *buf, size_t len);

/* Drop a rendezvous descriptor that an active message handler kept. */
void ucoll__tl_am_release(ucoll_tl_t *tl, void *desc);

/* Detach op from its request: no completion will be reported. A tagged
 * receive is cancelled, a get's remote key destroyed. */
void ucoll__tl_op_detach(ucoll_tl_t *tl, ucoll_tl_op_t *op);

/* Ask UCX to end op early, leaving it attached: a tagged receive not yet
 * matched is cancelled (tl->op_done reports it, possibly before this
 * returns); anything else (sends, gets, fetches of rendezvous data, a tagged
 * receive whose data flows) cannot be stopped and is reported when UCX
 * completes it. Only after that report has UCX let go of op's buffer. */
void ucoll__tl_op_cancel(ucoll_tl_t *tl, ucoll_tl_op_t *op);

#endif

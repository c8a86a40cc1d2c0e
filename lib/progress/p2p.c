/*
 * Point-to-point over UCX: eager and rendezvous protocols, flow control,
 * peer failure, and what the public send/receive calls (lib/p2p.c, which
 * checks their arguments) and the collective executor (the net ops) start.
 * Matching (which posted receive a message goes to, which unexpected
 * message a receive takes) lives in match.c; this file owns the requests
 * and messages whose entries it queues there.
 *
 * Order. Each (sender, receiver) job-rank pair numbers its messages; a
 * message that arrives early waits on the pair's reorder list, so matching
 * sees messages in send order whatever protocol carried them.
 *
 * Flow control. A sender may have eager_credits bytes (payload + header) of
 * eager messages not yet consumed by the receiver; beyond that it announces
 * messages rendezvous-style, which costs the receiver only the announcement.
 * The receiver returns consumed bytes piggybacked on any message it sends
 * to that peer, or in a CREDIT message once a quarter of the window has
 * accumulated.
 *
 * No send queue: UCP accepts every operation (queuing internally what it
 * cannot start yet), so a request only waits on UCX or on its peer.
 *
 * Re-entrancy. Completions run user and executor callbacks, which may post
 * new operations from inside UCX progress: every queue is consistent before
 * a request is completed. AM rendezvous descriptors matched inside UCX
 * progress are fetched right after the transport's progress returns.
 *
 * Input from outside. Every active message is decoded by
 * lib/transport/wire.c, which checks it against the lengths UCX delivered
 * and the ranges of its fields; what the decoder cannot know is checked
 * here before anything changes: credits returned beyond what was lent, a
 * sequence number already delivered or queued. A cookie in CTS/FIN is a
 * handle looked up in a table with generations (never a pointer taken on
 * trust). A refused packet is dropped whole, counted by reason
 * (UCOLL_STATS) and reported with a warning whose rate halves as refusals
 * accumulate. Whether the sender is the member of the communicator it names
 * is checked when a receive of that communicator is about to take the
 * message (the receive knows its communicator; a message may come before
 * this process has created it): one that is not is dropped then.
 *
 * UCX itself is reached only through the transport operations of
 * lib/transport/ucx.h.
 */
#include "progress/p2p.h"
#include "dtype.h"
#include "progress/match.h"
#include "transport/net.h"
#include "progress/request.h"
#include "progress/sched.h"
#include "transport/rcache.h"
#include "transport/ucx.h"
#include "transport/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* eager payloads up to this size travel packed behind the header */
#define PACK_MAX        (UCOLL_TL_OP_HDR - sizeof(wire_hdr_t))
#define CLEANUP_SEND_NS 3000000000ull

typedef struct ucoll_p2p ucoll_p2p_t;

enum { OP_SEND, OP_RECV_TAG, OP_RECV_AM, OP_GET, OP_CTL };

typedef struct {
    uint32_t send_seq;
    uint32_t recv_seq;
    ucoll_list_t ooo;      /* early messages, by seq */
    size_t credits;        /* eager bytes we may still send there */
    size_t credit_return;  /* consumed here, not yet handed back */
    ucoll_list_t inflight; /* requests that depend on this peer */
    int rndv_mode;         /* -1 until resolved */
} p2p_peer_t;

typedef struct {
    ucoll_match_msg_t match; /* match.link: peer's ooo list while early */
    wire_rts_t rts;          /* hdr, and cookie/raddr for RNDV_TAG/GET */
    void *desc;              /* RNDV_AM: the transport's data descriptor */
    size_t cost;             /* EAGER: credit bytes */
    char data[];             /* EAGER payload or RNDV_GET packed rkey */
} p2p_msg_t;

typedef struct {
    uint64_t msgs[2], bytes[2];   /* sent: [eager, rndv] */
    uint64_t rmsgs[2], rbytes[2]; /* received */
    uint64_t fallback;            /* eager-sized messages sent rendezvous (no credits) */
    uint64_t credit_msgs;
    uint64_t ooo;
    uint64_t nbad, bad[UCOLL_WIRE_NERR]; /* packets refused, in all and by reason */
    uint64_t stale;                      /* CTS/FIN for a send that stopped waiting */
} p2p_stats_t;

/* A slot of the table of rendezvous sends waiting for CTS/FIN. Their cookie
 * is generation << 32 | slot; the generation changes when the slot is
 * freed, so a late or forged cookie finds nothing. */
typedef struct {
    ucoll_req_t *req;   /* NULL when free */
    uint32_t gen;       /* of the cookie handed out last or next; never 0 */
    uint32_t next_free; /* free list, HANDLE_NONE at its end */
} p2p_handle_t;

#define HANDLE_NONE UINT32_MAX

struct ucoll_p2p {
    ucoll_ctx_t *ctx;
    ucoll_tl_t *tl;
    p2p_peer_t *peers;
    ucoll_match_t match; /* posted receives and unexpected messages */
    int nfailed;
    int closed;             /* finalizing: new operations fail at once ... */
    int closed_status;      /* ... with this */
    ucoll_list_t deferred;  /* RNDV_AM receives to fetch after progress */
    ucoll_list_t discard;   /* messages to discard after progress (msg_drop) */
    ucoll_rcache_t *rcache; /* RNDV_GET send buffers; created on first use */
    size_t credit_batch;
    p2p_handle_t *handles; /* rendezvous sends waiting for CTS/FIN */
    uint32_t nhandles, handle_free;
    p2p_stats_t st;
};

static void start_recv(ucoll_p2p_t *p, ucoll_req_t *req, p2p_msg_t *msg);

/* ---- helpers ------------------------------------------------------------- */

/* memcpy for the few bytes of a small message without a library call
 * (overlapping word moves); larger copies go to memcpy. */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    uint64_t a, b;
    uint32_t c, d;

    if (n > 16) {
        memcpy(dst, src, n);
    } else if (n >= 8) {
        memcpy(&a, src, 8);
        memcpy(&b, (const char *)src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy((char *)dst + n - 8, &b, 8);
    } else if (n >= 4) {
        memcpy(&c, src, 4);
        memcpy(&d, (const char *)src + n - 4, 4);
        memcpy(dst, &c, 4);
        memcpy((char *)dst + n - 4, &d, 4);
    } else if (n) {
        ((char *)dst)[0] = ((const char *)src)[0];
        ((char *)dst)[n / 2] = ((const char *)src)[n / 2];
        ((char *)dst)[n - 1] = ((const char *)src)[n - 1];
    }
}

static void inflight_add(ucoll_p2p_t *p, ucoll_req_t *req, int world)
{
    ucoll_list_add_tail(&p->peers[world].inflight, &req->u.p2p.peer_link);
    req->u.p2p.inflight = 1;
}

static void inflight_del(ucoll_req_t *req)
{
    if (req->u.p2p.inflight) {
        ucoll_list_del(&req->u.p2p.peer_link);
        req->u.p2p.inflight = 0;
    }
}

/* A get-rendezvous send is done with its registration. */
static void reg_put(ucoll_p2p_t *p, ucoll_req_t *req)
{
    if (req->u.p2p.reg) {
        ucoll__rcache_put(p->rcache, req->u.p2p.reg);
        req->u.p2p.reg = NULL;
    }
}

static void msg_free(ucoll_p2p_t *p, p2p_msg_t *msg)
{
    if (msg->desc) {
        ucoll__tl_am_release(p->tl, msg->desc);
    }
    free(msg);
}

/* ---- input from outside -------------------------------------------------- */

/* A packet refused for reason why (UCOLL_WIRE_E*): count it, and warn on
 * the 1st, 2nd, 4th, 8th... refusal so that a flood cannot flood the log. */
static void refuse(ucoll_p2p_t *p, int am_id, int why)
{
    uint64_t n = ++p->st.nbad;

    p->st.bad[why]++;
    if ((n & (n - 1)) == 0) {
        ucoll_warn("dropped a malformed %s packet (%s); %" PRIu64 " dropped so far",
                   am_id == UCOLL_AM_MSG ? "message" : "control", ucoll__wire_strerror(why), n);
    }
}

/* Whether job rank world is rank src of comm. */
static inline int comm_sender_ok(const ucoll_comm_t *comm, int src, uint32_t world)
{
    return src >= 0 && src < comm->size && (uint32_t)ucoll__comm_world_rank(comm, src) == world;
}

/* What a decoded message must agree with here: the credits it returns
 * were lent, and its sequence number is not behind. */
static int msg_check(ucoll_p2p_t *p, const ucoll_wire_msg_t *m)
{
    const p2p_peer_t *peer = &p->peers[m->h.src_world];

    if (ucoll_unlikely(m->h.credits > p->ctx->cfg.eager_credits - peer->credits)) {
        return UCOLL_WIRE_ECREDITS;
    }
    if (ucoll_unlikely((int32_t)(m->h.seq - peer->recv_seq) < 0)) {
        return UCOLL_WIRE_ESEQ;
    }
    return UCOLL_WIRE_OK;
}

/* A handle for rendezvous send req, which waits for CTS/FIN: its cookie
 * (never 0) in req->u.p2p.handle, or 0 when out of memory. */
static uint64_t handle_get(ucoll_p2p_t *p, ucoll_req_t *req)
{
    p2p_handle_t *h;
    uint32_t i, n;

    if (p->handle_free == HANDLE_NONE) {
        n = p->nhandles ? p->nhandles * 2 : 64;
        h = n > p->nhandles ? realloc(p->handles, (size_t)n * sizeof(*h)) : NULL;
        if (h == NULL) {
            return 0;
        }
        for (i = p->nhandles; i < n; i++) {
            h[i].req = NULL;
            h[i].gen = 1;
            h[i].next_free = i + 1 < n ? i + 1 : HANDLE_NONE;
        }
        p->handles = h;
        p->handle_free = p->nhandles;
        p->nhandles = n;
    }
    i = p->handle_free;
    h = &p->handles[i];
    p->handle_free = h->next_free;
    h->req = req;
    req->u.p2p.handle = (uint64_t)h->gen << 32 | i;
    return req->u.p2p.handle;
}

/* Send req no longer waits for CTS/FIN: free its handle, if it has one. */
static void handle_put(ucoll_p2p_t *p, ucoll_req_t *req)
{
    uint32_t i = (uint32_t)req->u.p2p.handle;
    p2p_handle_t *h;

    if (req->u.p2p.handle == 0) {
        return;
    }
    h = &p->handles[i];
    h->req = NULL;
    h->gen = h->gen + 1 ? h->gen + 1 : 1;
    h->next_free = p->handle_free;
    p->handle_free = i;
    req->u.p2p.handle = 0;
}

/* The send that a CTS/FIN's cookie names, checked against what the packet
 * says; *req_p is NULL when that send stopped waiting (a late answer).
 * UCOLL_WIRE_EHANDLE for a cookie never handed out or one that another
 * peer or message was given, UCOLL_WIRE_EPROTO for an answer that is not
 * that of the send's protocol. */
static int handle_find(ucoll_p2p_t *p, const wire_ctl_t *ctl, ucoll_req_t **req_p)
{
    uint32_t i = (uint32_t)ctl->cookie, gen = (uint32_t)(ctl->cookie >> 32);
    const p2p_handle_t *h;
    ucoll_req_t *req;

    if (i >= p->nhandles || gen == 0) {
        return UCOLL_WIRE_EHANDLE;
    }
    h = &p->handles[i];
    if (h->gen != gen || h->req == NULL) {
        if ((int32_t)(h->gen - gen) <= 0) {
            return UCOLL_WIRE_EHANDLE; /* not handed out yet */
        }
        p->st.stale++;
        *req_p = NULL;
        return UCOLL_WIRE_OK;
    }
    req = h->req;
    if (req->u.p2p.world != (int)ctl->src_world || req->u.p2p.seq != ctl->seq) {
        return UCOLL_WIRE_EHANDLE;
    }
    if ((ctl->type == UCOLL_CTL_CTS) != (req->u.p2p.proto == UCOLL_PROTO_RNDV_TAG)) {
        return UCOLL_WIRE_EPROTO;
    }
    *req_p = req;
    return UCOLL_WIRE_OK;
}

/* ---- sending helpers ----------------------------------------------------- */

/* Fire-and-forget control message; failures only matter through the peer's
 * failure, which is handled elsewhere. */
static void send_ctl(ucoll_p2p_t *p, int world, int type, uint64_t cookie, uint32_t seq, int status)
{
    p2p_peer_t *peer = &p->peers[world];
    ucoll_tl_op_t *op;
    wire_ctl_t *ctl;

    if (ucoll__tl_connect(p->ctx, world) != UCOLL_OK) {
        return;
    }
    op = ucoll__tl_op_alloc(p->tl, NULL, OP_CTL);
    if (op == NULL) {
        return;
    }
    ctl = (wire_ctl_t *)op->hdr;
    memset(ctl, 0, sizeof(*ctl));
    ctl->type = (uint32_t)type;
    ctl->src_world = (uint32_t)p->ctx->rank;
    ctl->credits = (uint32_t)peer->credit_return;
    peer->credit_return = 0;
    ctl->cookie = cookie;
    ctl->seq = seq;
    ctl->status = status;
    (void)ucoll__tl_am_send(p->ctx, world, op, UCOLL_AM_CTL, ctl, sizeof(*ctl), NULL, 0,
                            UCOLL_TL_AM_EAGER);
}

/* Bytes of an eager message consumed here: hand them back eventually. */
static inline void credits_consumed(ucoll_p2p_t *p, int world, size_t cost)
{
    p2p_peer_t *peer = &p->peers[world];

    if (world == p->ctx->rank) {
        /* never past the window: a packet from outside may claim to come
         * from this rank */
        peer->credits = UCOLL_MIN(peer->credits + cost, p->ctx->cfg.eager_credits);
        return;
    }
    peer->credit_return += cost;
    if (ucoll_unlikely(peer->credit_return >= p->credit_batch) &&
        !ucoll__tl_failed(p->ctx, world)) {
        p->st.credit_msgs++;
        send_ctl(p, world, UCOLL_CTL_CREDIT, 0, 0, UCOLL_OK);
    }
}

/* A receive of a communicator in which msg's sender is not the rank it
 * claims was about to take msg: drop it (its eager bytes count as
 * consumed). */
static void msg_foreign(ucoll_p2p_t *p, p2p_msg_t *msg)
{
    refuse(p, UCOLL_AM_MSG, UCOLL_WIRE_ECOMM);
    credits_consumed(p, (int)msg->rts.h.src_world, msg->cost);
    msg_free(p, msg);
}

/* A message that no receive will ever take (its communicator was freed
 * here): its sender gets back what it waits for, eager credits or an answer
 * to its announcement (UCOLL_ERR_TRUNCATE: the data was not taken, and the
 * send completes, as for a receive too small); an AM rendezvous descriptor
 * is released, which completes the sender. */
static void msg_discard(ucoll_p2p_t *p, p2p_msg_t *msg)
{
    const wire_hdr_t *h = &msg->rts.h;
    int world = (int)h->src_world;

    if ((h->proto == UCOLL_PROTO_RNDV_TAG || h->proto == UCOLL_PROTO_RNDV_GET) &&
        !ucoll__tl_failed(p->ctx, world)) {
        send_ctl(p, world, h->proto == UCOLL_PROTO_RNDV_TAG ? UCOLL_CTL_CTS : UCOLL_CTL_FIN,
                 msg->rts.cookie, h->seq, UCOLL_ERR_TRUNCATE);
    }
    if (msg->cost) {
        credits_consumed(p, world, msg->cost);
    }
    msg_free(p, msg);
}

/* msg_discard, but for an AM rendezvous descriptor found inside UCX
 * progress (where it is neither fetched nor released): then after the
 * progress, by p2p_progress. */
static void msg_drop(ucoll_p2p_t *p, p2p_msg_t *msg)
{
    if (msg->desc && ucoll__tl_progressing(p->tl)) {
        ucoll_list_add_tail(&p->discard, &msg->match.link);
        p->ctx->net_deferred = 1;
        return;
    }
    msg_discard(p, msg);
}

/* Drop (msg_drop) every unexpected message that pred(msg, arg) selects. */
static void unexp_drop(ucoll_p2p_t *p, int (*pred)(const ucoll_match_msg_t *, void *), void *arg)
{
    ucoll_list_t drop;

    ucoll_list_init(&drop);
    ucoll__match_unexp_take(&p->match, pred, arg, &drop);
    while (!ucoll_list_empty(&drop)) {
        p2p_msg_t *msg = ucoll_list_first(&drop, p2p_msg_t, match.link);

        ucoll_list_del(&msg->match.link);
        msg_drop(p, msg);
    }
}

/* Whether matching space ctx_id belongs to a communicator this process has
 * freed: its id was handed out here (ids only grow, and every member of a
 * new communicator moves past its id: lib/comm_split.c) and no live
 * communicator has it. A message for one that is still to be created here
 * (id not handed out yet) waits in the unexpected queue. */
static int comm_retired(const ucoll_p2p_t *p, uint32_t ctx_id)
{
    const ucoll_list_t *pos;
    uint32_t id = ctx_id / 2;

    if (id >= p->ctx->next_comm_id) {
        return 0;
    }
    ucoll_list_for_each(pos, &p->ctx->comms)
    {
        if (ucoll_container_of(pos, ucoll_comm_t, link)->id == id) {
            return 0;
        }
    }
    return 1;
}

static int comm_has_failed(ucoll_p2p_t *p, const ucoll_comm_t *comm, int only)
{
    int r, w;

    if (p->nfailed == 0) {
        return 0;
    }
    for (r = 0; r < comm->size; r++) {
        w = ucoll__comm_world_rank(comm, r);
        if (only >= 0 ? w == only : ucoll__tl_failed(p->ctx, w)) {
            return 1;
        }
    }
    return 0;
}

/* Whether matching space ctx_id is the collective space of a live
 * communicator one of whose members has failed. No collective on it can
 * complete (a new one fails at start, a running one is withdrawn), so no
 * receive will ever take such a message; kept, it would hold its sender:
 * an AM rendezvous send completes only when its descriptor is taken or
 * released, a tagged one only on an answer to its announcement. */
static int coll_space_dead(ucoll_p2p_t *p, uint32_t ctx_id)
{
    const ucoll_list_t *pos;

    if (p->nfailed == 0 || (ctx_id & 1) != UCOLL_SPACE_COLL) {
        return 0;
    }
    ucoll_list_for_each(pos, &p->ctx->comms)
    {
        const ucoll_comm_t *comm = ucoll_container_of(pos, ucoll_comm_t, link);

        if (ucoll__comm_owns_id(comm, ctx_id / 2)) {
            return comm_has_failed(p, ucoll__comm_scope(comm), -1);
        }
    }
    return 0;
}

static void fill_hdr(ucoll_p2p_t *p, ucoll_req_t *req, wire_hdr_t *h, int proto)
{
    p2p_peer_t *peer = &p->peers[req->u.p2p.world];

    h->ctx_id = req->u.p2p.ctx_id;
    h->src = req->u.p2p.comm->rank;
    h->tag = req->u.p2p.tag;
    h->seq = req->u.p2p.seq;
    h->src_world = (uint32_t)p->ctx->rank;
    h->proto = (uint16_t)proto;
    h->rkey_len = 0;
    h->credits = (uint32_t)UCOLL_MIN(peer->credit_return, UINT32_MAX);
    peer->credit_return -= h->credits;
    h->pad = 0;
    h->len = req->u.p2p.bytes;
}

/* The status a CTS/FIN carries for a receive that could not take the data
 * because of err (the wire allows only a few: wire.h). */
static int ctl_status(int err)
{
    return err == UCOLL_ERR_NOMEM || err == UCOLL_ERR_TRUNCATE ? err : UCOLL_ERR_TRANSPORT;
}

/* A get is done: tell the sender (FIN), with the get's status when it
 * failed (the sender would otherwise wait forever with its buffer pinned),
 * unless the sender itself has failed. */
static void get_done(ucoll_p2p_t *p, ucoll_req_t *req, int err)
{
    if (req->u.p2p.peer_cookie && !ucoll__tl_failed(p->ctx, req->u.p2p.world)) {
        send_ctl(p, req->u.p2p.world, UCOLL_CTL_FIN, req->u.p2p.peer_cookie, req->u.p2p.seq,
                 err == UCOLL_OK ? UCOLL_OK : ctl_status(err));
    }
    req->u.p2p.peer_cookie = 0;
}

static void track(ucoll_p2p_t *p, ucoll_req_t *req, ucoll_tl_op_t *op, int what, int ret);

static void discard_done(ucoll_req_t *req)
{
    free(req->u.p2p.buf);
    ucoll__req_release(req);
}

/*
 * A tagged receive of the RNDV_TAG protocol ended without its data (it was
 * withdrawn: its call failed or timed out) after its CTS had gone out. The
 * sender's tagged send is on its way or already waiting in UCX, which
 * cannot cancel a send: it would hold the sender's buffer, and the
 * sender's call, forever. Such a send gets a receive of its own, into a
 * buffer that is freed when it completes (or when the sender fails). Not
 * for a sender that has failed, nor while finalizing (the sender's own
 * finalize gives up on the send within seconds), nor for such a receive
 * itself (comm NULL).
 */
static void rndv_tag_discard(ucoll_p2p_t *p, const ucoll_req_t *req)
{
    const struct ucoll_p2p_req *s = &req->u.p2p;
    ucoll_tl_op_t *op;
    ucoll_req_t *d;
    int ret;

    if (s->comm == NULL || p->closed || ucoll__tl_failed(p->ctx, s->world)) {
        return;
    }
    d = ucoll__req_alloc(p->ctx, UCOLL_REQ_RECV);
    if (d == NULL) {
        return;
    }
    d->cb = discard_done;
    d->u.p2p.world = s->world;
    d->u.p2p.seq = s->seq;
    d->u.p2p.ctx_id = UINT32_MAX; /* no communicator's: no call waits for it */
    d->u.p2p.bytes = d->u.p2p.rlen = s->rlen;
    d->u.p2p.buf = malloc(s->rlen ? s->rlen : 1);
    op = d->u.p2p.buf ? ucoll__tl_op_alloc(p->tl, d, OP_RECV_TAG) : NULL;
    if (op == NULL) {
        ucoll_warn("no memory to take a withdrawn receive's data from rank %d: its send may "
                   "wait until finalize", s->world);
        discard_done(d);
        return;
    }
    ucoll_debug("receive of %zu bytes from rank %d withdrawn after its CTS: its data is taken "
                "and dropped", s->rlen, s->world);
    ret = ucoll__tl_tag_recv(p->tl, op, d->u.p2p.buf, s->rlen,
                             ((uint64_t)s->world << 32) | s->seq);
    track(p, d, op, OP_RECV_TAG, ret);
}

/* tl->op_done: completion of a transport operation started for a request
 * (the transport has freed the op). */
static void op_done(void *arg, int what, int err)
{
    ucoll_req_t *req = arg;
    ucoll_p2p_t *p = req->ctx->p2p;

    req->u.p2p.op = NULL;
    inflight_del(req);
    if (err != UCOLL_OK && ucoll__tl_check_failed(req->ctx, req->u.p2p.world)) {
        err = UCOLL_ERR_PEER;
    }
    if (what == OP_GET) {
        get_done(p, req, err);
    }
    if (what == OP_RECV_TAG && err != UCOLL_OK) {
        rndv_tag_discard(p, req);
    }
    ucoll__req_complete(req, err);
}

/* Track what a transport operation started with op for req returned:
 * completes req when the operation is already done or failed (the
 * transport has freed op then). */
static void track(ucoll_p2p_t *p, ucoll_req_t *req, ucoll_tl_op_t *op, int what, int ret)
{
    if (ret == UCOLL_TL_INPROGRESS) {
        req->u.p2p.op = op;
        if (!req->u.p2p.inflight) {
            inflight_add(p, req, req->u.p2p.world);
        }
        return;
    }
    req->u.p2p.op = NULL;
    inflight_del(req);
    if (ret != UCOLL_OK && ucoll__tl_check_failed(p->ctx, req->u.p2p.world)) {
        ret = UCOLL_ERR_PEER;
    }
    if (what == OP_GET) {
        get_done(p, req, ret);
    }
    ucoll__req_complete(req, ret);
}

static int rndv_mode(ucoll_p2p_t *p, int world)
{
    p2p_peer_t *peer = &p->peers[world];

    if (peer->rndv_mode < 0) {
        switch (p->ctx->cfg.rndv_mode) {
        case UCOLL_RNDV_TAG: peer->rndv_mode = UCOLL_PROTO_RNDV_TAG; break;
        case UCOLL_RNDV_AM: peer->rndv_mode = UCOLL_PROTO_RNDV_AM; break;
        case UCOLL_RNDV_GET: peer->rndv_mode = UCOLL_PROTO_RNDV_GET; break;
        default:
            /* measured with ucoll_bench bw/latency, UCX 1.13.1. Shared
             * memory, MB/s at 64K/1M/4M: tag 10.6-11.1k/17.5-17.8k/14.8-
             * 15.3k, am 10.4-11.1k/13.9-17.8k/11.0-13.4k, get (registration
             * cached) 10.0-12.6k/11.1-12.6k/11.1-13.1k; get has the lowest
             * latency at 16K (4.2 vs 5.8 us for am) but needs
             * RMA in the UCP context, which slows every small message, so it is
             * only used when asked for. TCP, 4M, 9 alternations: on one
             * node (no UCX error handling, see lib/transport/ucx.h) tag
             * 3230-4760 (median 3830), am 3440-4620 (3810); with UCX's
             * peer error handling, as between nodes (UCOLL_LIVENESS=ucx),
             * tag 2050-3890 (2780), am 2020-3760 (3180); get 830-1090
             * (UCX 1.13 emulates get over TCP). AM and tag trade places
             * between runs, on shared memory and on TCP alike; on TCP
             * tag's median 4 MiB latency was the lower in both modes
             * (1420 against 1630 us, 1610 against 1700). Latency over
             * TCP on one node, 64K-4M, medians of 7 alternations in one
             * run, against ucx_perftest -t tag_lat: tag 1.14-1.20x at
             * 128K-1M, 1.00 at 4M; am 1.01-1.10x at 128K-1M (one
             * handshake, not two), 0.99 at 4M. So every transport uses
             * am. A send UCX holds until its receiver lets go (a
             * timed-out collective's) ends when the receiver finalizes,
             * which releases what it never took; if that comes after the
             * sender's finalize stopped waiting (CLEANUP_SEND_NS), the
             * call's state is settled when the sender's context goes
             * (ucoll__req_pool_cleanup). */
            peer->rndv_mode = UCOLL_PROTO_RNDV_AM;
            break;
        }
    }
    return peer->rndv_mode;
}

/* Send req (kind SEND; comm, buf, bytes, world, tag, ctx_id set). Always
 * completes req, now or later. */
static void start_send(ucoll_p2p_t *p, ucoll_req_t *req)
{
    struct ucoll_p2p_req *s = &req->u.p2p;
    p2p_peer_t *peer = &p->peers[s->world];
    ucoll_tl_op_t *op;
    wire_rts_t *rts;
    size_t cost, rkey_len = 0;
    int ret, proto;

    req->status.source = s->peer;
    req->status.tag = s->tag;
    req->status.bytes = s->bytes;
    if (ucoll_unlikely(p->closed)) {
        ucoll__req_complete(req, p->closed_status);
        return;
    }
    ret = ucoll__tl_connect(p->ctx, s->world);
    if (ret != UCOLL_OK) {
        ucoll__req_complete(req, ret);
        return;
    }
    op = ucoll__tl_op_alloc(p->tl, req, OP_SEND);
    if (op == NULL) {
        ucoll__req_complete(req, UCOLL_ERR_NOMEM);
        return;
    }
    s->seq = peer->send_seq++;
    rts = (wire_rts_t *)op->hdr;
    cost = s->bytes + sizeof(wire_hdr_t);

    if (s->bytes <= p->ctx->cfg.eager_limit && cost <= peer->credits) {
        peer->credits -= cost;
        s->proto = UCOLL_PROTO_EAGER;
        p->st.msgs[0]++;
        p->st.bytes[0] += s->bytes;
        fill_hdr(p, req, &rts->h, UCOLL_PROTO_EAGER);
        if (s->bytes <= PACK_MAX) {
            /* small: header and payload as one AM payload, which takes
             * UCX's plain short path (no user-header iov) */
            if (s->bytes) {
                memcpy(&rts->h + 1, s->buf, s->bytes);
            }
            ret = ucoll__tl_am_send(p->ctx, s->world, op, UCOLL_AM_MSG, NULL, 0, &rts->h,
                                    sizeof(rts->h) + s->bytes, UCOLL_TL_AM_EAGER);
            track(p, req, op, OP_SEND, ret);
            return;
        }
        ret = ucoll__tl_am_send(p->ctx, s->world, op, UCOLL_AM_MSG, &rts->h, sizeof(rts->h), s->buf,
                                s->bytes, UCOLL_TL_AM_EAGER);
        track(p, req, op, OP_SEND, ret);
        return;
    }

    p->st.msgs[1]++;
    p->st.bytes[1] += s->bytes;
    if (s->bytes <= p->ctx->cfg.eager_limit) {
        /* out of credits: announce it; a tagged transfer copes with 0 bytes */
        p->st.fallback++;
        proto = UCOLL_PROTO_RNDV_TAG;
    } else {
        proto = rndv_mode(p, s->world);
    }
    if (proto == UCOLL_PROTO_RNDV_GET) {
        ucoll_reg_t *reg;

        if (p->rcache == NULL) {
            p->rcache = ucoll__rcache_create(p->tl->context);
        }
        reg = p->rcache ? ucoll__rcache_get(p->rcache, s->buf, s->bytes) : NULL;
        if (reg == NULL) {
            proto = UCOLL_PROTO_RNDV_TAG;
        } else if (sizeof(*rts) + reg->rkey_len > UCOLL_TL_OP_HDR) {
            ucoll__rcache_put(p->rcache, reg);
            proto = UCOLL_PROTO_RNDV_TAG;
        } else {
            s->reg = reg;
            rkey_len = reg->rkey_len;
            memcpy(rts + 1, reg->rkey_buf, rkey_len);
            fill_hdr(p, req, &rts->h, proto);
            rts->h.rkey_len = (uint16_t)rkey_len;
            rts->raddr = (uint64_t)(uintptr_t)s->buf;
        }
    }
    s->proto = proto;
    switch (proto) {
    case UCOLL_PROTO_RNDV_AM:
        fill_hdr(p, req, &rts->h, proto);
        ret = ucoll__tl_am_send(p->ctx, s->world, op, UCOLL_AM_MSG, &rts->h, sizeof(rts->h), s->buf,
                                s->bytes, UCOLL_TL_AM_RNDV);
        track(p, req, op, OP_SEND, ret);
        return;
    case UCOLL_PROTO_RNDV_TAG:
        fill_hdr(p, req, &rts->h, proto);
        rts->raddr = 0;
        break;
    default: break;
    }
    /* TAG/GET: the announcement goes now; the request waits for CTS/FIN
     * under a handle that the receiver echoes */
    rts->cookie = handle_get(p, req);
    if (rts->cookie == 0) {
        /* nothing has left: take back the sequence number and the credits
         * the header was to carry */
        peer->send_seq--;
        peer->credit_return += rts->h.credits;
        ucoll__tl_op_free(p->tl, op);
        reg_put(p, req);
        ucoll__req_complete(req, UCOLL_ERR_NOMEM);
        return;
    }
    op->req = NULL;
    op->what = OP_CTL;
    inflight_add(p, req, s->world);
    ret = ucoll__tl_am_send(p->ctx, s->world, op, UCOLL_AM_MSG, rts, sizeof(*rts) + rts->h.rkey_len,
                            NULL, 0, UCOLL_TL_AM_EAGER);
    if (ret < 0) {
        inflight_del(req);
        handle_put(p, req);
        reg_put(p, req);
        ucoll__req_complete(req, ret);
    }
}

/* ---- receiving ----------------------------------------------------------- */

static void am_fetch(ucoll_p2p_t *p, ucoll_req_t *req, p2p_msg_t *msg)
{
    ucoll_tl_op_t *op = ucoll__tl_op_alloc(p->tl, req, OP_RECV_AM);
    void *desc = msg->desc;
    int ret;

    msg->desc = NULL;
    free(msg);
    if (op == NULL) {
        ucoll__tl_am_release(p->tl, desc);
        ucoll__req_complete(req, UCOLL_ERR_NOMEM);
        return;
    }
    ret = ucoll__tl_am_recv_data(p->tl, op, desc, req->u.p2p.buf, req->status.bytes);
    track(p, req, op, OP_RECV_AM, ret);
}

/* A receive matched a message: deliver or start fetching the payload. */
static void start_recv(ucoll_p2p_t *p, ucoll_req_t *req, p2p_msg_t *msg)
{
    struct ucoll_p2p_req *s = &req->u.p2p;
    const wire_hdr_t *h = &msg->rts.h;
    int world = (int)h->src_world, truncated, ret;
    ucoll_tl_op_t *op;

    req->status.source = h->src;
    req->status.tag = h->tag;
    req->status.bytes = h->len;
    s->world = world;
    s->proto = h->proto;
    if (h->proto == UCOLL_PROTO_RNDV_AM && ucoll__tl_progressing(p->tl)) {
        /* descriptors are neither fetched nor released from inside UCX
         * progress; p2p_progress resumes here right after */
        s->msg = msg;
        ucoll_list_add_tail(&p->deferred, &req->link);
        p->ctx->net_deferred = 1;
        return;
    }
    truncated = h->len > s->bytes;
    p->st.rmsgs[h->proto != UCOLL_PROTO_EAGER]++;
    p->st.rbytes[h->proto != UCOLL_PROTO_EAGER] += h->len;

    if (h->proto == UCOLL_PROTO_EAGER) {
        if (msg->match.data_len && s->bytes) {
            memcpy(s->buf, msg->data, UCOLL_MIN(msg->match.data_len, s->bytes));
        }
        credits_consumed(p, world, msg->cost);
        free(msg);
        ucoll__req_complete(req, truncated ? UCOLL_ERR_TRUNCATE : UCOLL_OK);
        return;
    }
    if (ucoll__tl_failed(p->ctx, world)) {
        msg_free(p, msg);
        ucoll__req_complete(req, UCOLL_ERR_PEER);
        return;
    }
    if (truncated) {
        /* the sender's buffer must still be released: AM descriptors are
         * dropped (UCX completes the sender), TAG/GET senders are told */
        if (h->proto != UCOLL_PROTO_RNDV_AM) {
            send_ctl(p, world, h->proto == UCOLL_PROTO_RNDV_TAG ? UCOLL_CTL_CTS : UCOLL_CTL_FIN,
                     msg->rts.cookie, h->seq, UCOLL_ERR_TRUNCATE);
        }
        msg_free(p, msg);
        ucoll__req_complete(req, UCOLL_ERR_TRUNCATE);
        return;
    }
    switch (h->proto) {
    case UCOLL_PROTO_RNDV_AM: am_fetch(p, req, msg); return;
    case UCOLL_PROTO_RNDV_TAG:
        op = ucoll__tl_op_alloc(p->tl, req, OP_RECV_TAG);
        if (op == NULL) {
            send_ctl(p, world, UCOLL_CTL_CTS, msg->rts.cookie, h->seq, UCOLL_ERR_NOMEM);
            free(msg);
            ucoll__req_complete(req, UCOLL_ERR_NOMEM);
            return;
        }
        s->seq = h->seq;
        s->rlen = h->len;
        ret =
            ucoll__tl_tag_recv(p->tl, op, s->buf, h->len, ((uint64_t)h->src_world << 32) | h->seq);
        /* clear to send only with a receive posted: a receive that failed on
         * the spot tells the sender so, which then fails instead of sending
         * into nothing */
        send_ctl(p, world, UCOLL_CTL_CTS, msg->rts.cookie, h->seq,
                 ret < 0 ? ctl_status(ret) : UCOLL_OK);
        free(msg);
        track(p, req, op, OP_RECV_TAG, ret);
        return;
    case UCOLL_PROTO_RNDV_GET:
        if (ucoll__tl_connect(p->ctx, world) != UCOLL_OK) {
            msg_free(p, msg);
            ucoll__req_complete(req, ucoll__tl_failed(p->ctx, world) ? UCOLL_ERR_PEER
                                                                     : UCOLL_ERR_TRANSPORT);
            return;
        }
        op = ucoll__tl_op_alloc(p->tl, req, OP_GET);
        if (op == NULL) {
            send_ctl(p, world, UCOLL_CTL_FIN, msg->rts.cookie, h->seq, UCOLL_ERR_NOMEM);
            free(msg);
            ucoll__req_complete(req, UCOLL_ERR_NOMEM);
            return;
        }
        s->seq = h->seq;
        s->peer_cookie = msg->rts.cookie; /* echoed in FIN */
        /* a key that cannot be unpacked fails the receive with
         * UCOLL_ERR_TRANSPORT, and the FIN tells the sender (get_done) */
        ret = ucoll__tl_get(p->ctx, world, op, s->buf, h->len, msg->rts.raddr, msg->data);
        free(msg);
        track(p, req, op, OP_GET, ret);
        return;
    default:
        ucoll_error("message with unknown protocol %u from rank %d", h->proto, world);
        msg_free(p, msg);
        ucoll__req_complete(req, UCOLL_ERR_TRANSPORT);
    }
}

/* Post receive req (kind RECV; comm, buf, bytes, peer, tag set). */
static void post_recv(ucoll_p2p_t *p, ucoll_req_t *req)
{
    struct ucoll_p2p_req *s = &req->u.p2p;
    ucoll_match_msg_t *queued;
    int r;

    ucoll__match_recv_init(&p->match, &s->match, s->ctx_id, s->peer, s->tag, s->any_tag);
    s->world = s->peer == UCOLL_ANY_SOURCE ? -1 : ucoll__comm_world_rank(s->comm, s->peer);
    if (ucoll_unlikely(p->closed)) {
        ucoll__req_complete(req, p->closed_status);
        return;
    }
    while ((queued = ucoll__match_unexp(&p->match, &s->match)) != NULL) {
        p2p_msg_t *msg = ucoll_container_of(queued, p2p_msg_t, match);

        if (ucoll_likely(comm_sender_ok(s->comm, msg->rts.h.src, msg->rts.h.src_world))) {
            start_recv(p, req, msg);
            return;
        }
        msg_foreign(p, msg);
    }
    if (s->world >= 0) {
        /* connecting lets UCX notice a dead peer even if we never send */
        if (ucoll__tl_connect(p->ctx, s->world) == UCOLL_ERR_PEER) {
            ucoll__req_complete(req, UCOLL_ERR_PEER);
            return;
        }
    } else {
        if (ucoll_unlikely(!s->comm->wired)) {
            /* any member may be the sender: connect to them all once, so
             * that a member which dies is noticed (UCX's error callback,
             * or the pid watch on this node) even if nothing else ever
             * talks to it */
            for (r = 0; r < s->comm->size; r++) {
                (void)ucoll__tl_connect(p->ctx, ucoll__comm_world_rank(s->comm, r));
            }
            s->comm->wired = 1;
        }
        if (comm_has_failed(p, s->comm, -1)) {
            ucoll__req_complete(req, UCOLL_ERR_PEER);
            return;
        }
    }
    if (ucoll__match_post(&p->match, &s->match) != UCOLL_OK) {
        ucoll__req_complete(req, UCOLL_ERR_NOMEM);
    }
}

/* A message whose turn has come (in sequence order). */
static void deliver(ucoll_p2p_t *p, p2p_msg_t *msg)
{
    const wire_hdr_t *h = &msg->rts.h;
    ucoll_match_recv_t *e = ucoll__match_posted_peek(&p->match, h->ctx_id, h->src, h->tag);
    ucoll_req_t *req;

    if (e) {
        req = ucoll_container_of(e, ucoll_req_t, u.p2p.match);
        if (ucoll_unlikely(!comm_sender_ok(req->u.p2p.comm, h->src, h->src_world))) {
            msg_foreign(p, msg); /* the receive stays posted */
            return;
        }
        ucoll__match_unpost(&p->match, e);
        start_recv(p, req, msg);
    } else if (ucoll_unlikely(comm_retired(p, h->ctx_id))) {
        msg_drop(p, msg); /* sent before its sender freed the communicator too */
    } else if (ucoll_unlikely(coll_space_dead(p, h->ctx_id))) {
        msg_drop(p, msg); /* a collective that a failure ended, here or to come */
    } else if (ucoll__match_unexp_add(&p->match, &msg->match) != UCOLL_OK) {
        ucoll_error("out of memory queueing a message from rank %u: dropped", msg->rts.h.src_world);
        msg_free(p, msg);
    }
}

/* An in-order eager message with a posted receive: credit the sender, copy
 * straight into the user's buffer and complete. Returns 0 (and changes
 * nothing) when the message has to take the general path. */
static inline int eager_fast(ucoll_p2p_t *p, const ucoll_wire_msg_t *m)
{
    const wire_hdr_t *h = &m->h;
    size_t length = m->length;
    p2p_peer_t *peer = &p->peers[h->src_world];
    ucoll_match_recv_t *e;
    ucoll_req_t *req;

    if (ucoll_unlikely(h->seq != peer->recv_seq || !ucoll_list_empty(&peer->ooo))) {
        return 0;
    }
    e = ucoll__match_posted_peek(&p->match, h->ctx_id, h->src, h->tag);
    if (ucoll_unlikely(e == NULL)) {
        return 0;
    }
    req = ucoll_container_of(e, ucoll_req_t, u.p2p.match);
    if (ucoll_unlikely(!comm_sender_ok(req->u.p2p.comm, h->src, h->src_world))) {
        return 0; /* deliver drops it */
    }
    ucoll__match_unpost(&p->match, e);
    peer->credits += h->credits;
    peer->recv_seq++;
    req->status.source = h->src;
    req->status.tag = h->tag;
    req->status.bytes = length;
    req->u.p2p.world = (int)h->src_world;
    req->u.p2p.proto = UCOLL_PROTO_EAGER;
    copy_bytes(req->u.p2p.buf, m->data, UCOLL_MIN(length, req->u.p2p.bytes));
    p->st.rmsgs[0]++;
    p->st.rbytes[0] += length;
    credits_consumed(p, (int)h->src_world, length + sizeof(wire_hdr_t));
    ucoll__req_complete(req, length > req->u.p2p.bytes ? UCOLL_ERR_TRUNCATE : UCOLL_OK);
    return 1;
}

/* Every message that eager_fast did not take (checked: decoded and
 * msg_check): copied and queued, reordered, or announced for rendezvous.
 * Returns 1 when it keeps the rendezvous descriptor. */
static __attribute__((noinline)) int am_msg_slow(ucoll_p2p_t *p, const ucoll_wire_msg_t *m)
{
    const wire_hdr_t *h = &m->h;
    p2p_peer_t *peer = &p->peers[h->src_world];
    int rndv = h->proto == UCOLL_PROTO_RNDV_AM;
    ucoll_list_t *pos = &peer->ooo;
    p2p_msg_t *msg;
    size_t copy;

    if (h->seq != peer->recv_seq) {
        /* early: its place in the reorder list, by seq; one already there
         * is a duplicate */
        ucoll_list_for_each(pos, &peer->ooo)
        {
            const p2p_msg_t *o = ucoll_container_of(pos, p2p_msg_t, match.link);
            int32_t d = (int32_t)(o->rts.h.seq - h->seq);

            if (d == 0) {
                refuse(p, UCOLL_AM_MSG, UCOLL_WIRE_ESEQ);
                return 0;
            }
            if (d > 0) {
                break;
            }
        }
    }
    peer->credits += h->credits;

    /* the payload of an eager message, the packed rkey of a get */
    copy = h->proto == UCOLL_PROTO_EAGER ? m->length : h->rkey_len;
    msg = malloc(sizeof(*msg) + copy);
    if (msg == NULL) {
        ucoll_error("out of memory receiving a message from rank %u", h->src_world);
        return 0;
    }
    msg->rts.h = *h;
    msg->rts.cookie = m->cookie;
    msg->rts.raddr = m->raddr;
    msg->desc = rndv ? m->data : NULL;
    ucoll__match_msg_init(&msg->match, h->ctx_id, h->src, h->tag, copy);
    msg->cost = h->proto == UCOLL_PROTO_EAGER ? m->length + sizeof(wire_hdr_t) : 0;
    if (copy) {
        memcpy(msg->data, h->proto == UCOLL_PROTO_EAGER ? m->data : m->rkey, copy);
    }

    if (h->seq != peer->recv_seq) {
        p->st.ooo++;
        ucoll_list_insert_between(&msg->match.link, pos->prev, pos);
        ucoll_list_init(&msg->match.ctx_link);
        return rndv;
    }
    peer->recv_seq++;
    deliver(p, msg);
    while (!ucoll_list_empty(&peer->ooo)) {
        msg = ucoll_list_first(&peer->ooo, p2p_msg_t, match.link);
        if (msg->rts.h.seq != peer->recv_seq) {
            break;
        }
        ucoll_list_del(&msg->match.link);
        peer->recv_seq++;
        deliver(p, msg);
    }
    return rndv;
}

/* UCOLL_AM_MSG. Eager messages carry wire_hdr_t as the AM user header, or,
 * when small, packed ahead of the payload (no user header). The common case
 * (an eager message, in order, whose receive is posted) is kept short: it is
 * on the latency path of every small message. */
static int am_msg_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                     int rndv)
{
    ucoll_ctx_t *ctx = arg;
    ucoll_p2p_t *p = ctx->p2p;
    ucoll_wire_msg_t m;
    int ret;

    if (ucoll_unlikely(p == NULL)) {
        return 0;
    }
    ret =
        ucoll__wire_decode_msg(header, header_length, data, length, rndv, (uint32_t)ctx->size, &m);
    if (ucoll_likely(ret == UCOLL_WIRE_OK)) {
        ret = msg_check(p, &m);
    }
    if (ucoll_unlikely(ret != UCOLL_WIRE_OK)) {
        refuse(p, UCOLL_AM_MSG, ret);
        return 0; /* a rendezvous descriptor is dropped by UCX */
    }
    if (ucoll_likely(m.h.proto == UCOLL_PROTO_EAGER) && eager_fast(p, &m)) {
        return 0;
    }
    return am_msg_slow(p, &m);
}

/* Rank src reports job rank world failed. The report is believed (ranks
 * fail by stopping, not by lying): world is failed here too, which tells
 * every other live rank in turn (on_peer_failure). A report that names
 * this rank means src can no longer reach it: src is as good as failed
 * to this rank, so that neither side waits for the other. */
static void peer_reported_down(ucoll_p2p_t *p, int src, int world)
{
    ucoll_ctx_t *ctx = p->ctx;

    if (world == ctx->rank) {
        if (!ucoll__tl_failed(ctx, src)) {
            ucoll_warn("rank %d reports this rank failed: treating rank %d as failed", src, src);
            ucoll__tl_set_failed(ctx, src, UCOLL_ERR_PEER);
        }
        return;
    }
    if (!ucoll__tl_failed(ctx, world)) {
        ucoll_debug("rank %d reports rank %d failed", src, world);
        ucoll__tl_set_failed(ctx, world, UCOLL_ERR_PEER);
    }
}

/* UCOLL_AM_CTL: returned credits, the receiver's answer to an
 * announcement (CTS: post the tagged send; FIN: the get is done), or a
 * failure report (DOWN). */
static int am_ctl_cb(void *arg, const void *header, size_t header_length, void *data, size_t length,
                     int rndv)
{
    ucoll_ctx_t *ctx = arg;
    ucoll_p2p_t *p = ctx->p2p;
    ucoll_req_t *req = NULL;
    p2p_peer_t *peer;
    ucoll_tl_op_t *op;
    wire_ctl_t ctl;
    int ret;

    if (p == NULL) {
        return 0;
    }
    ret = ucoll__wire_decode_ctl(header, header_length, data, length, rndv, (uint32_t)ctx->size,
                                 &ctl);
    if (ret == UCOLL_WIRE_OK &&
        ctl.credits > ctx->cfg.eager_credits - p->peers[ctl.src_world].credits) {
        ret = UCOLL_WIRE_ECREDITS;
    }
    if (ret == UCOLL_WIRE_OK && (ctl.type == UCOLL_CTL_CTS || ctl.type == UCOLL_CTL_FIN)) {
        ret = handle_find(p, &ctl, &req);
    }
    if (ret != UCOLL_WIRE_OK) {
        refuse(p, UCOLL_AM_CTL, ret);
        return 0;
    }
    peer = &p->peers[ctl.src_world];
    peer->credits += ctl.credits;
    if (ctl.type == UCOLL_CTL_DOWN) {
        peer_reported_down(p, (int)ctl.src_world, (int)ctl.seq);
        return 0;
    }
    if (req == NULL) {
        return 0; /* CREDIT, or an answer to a send that failed meanwhile */
    }
    handle_put(p, req);
    if (ctl.type == UCOLL_CTL_FIN || ctl.status != UCOLL_OK) {
        /* done, or not taken: a receive too small is the receiver's error
         * (the send succeeds, as in MPI); one that failed fails the send */
        inflight_del(req);
        reg_put(p, req);
        ucoll__req_complete(req, ctl.status == UCOLL_ERR_TRUNCATE ? UCOLL_OK : ctl.status);
        return 0;
    }
    /* CTS: the receiver has posted the tagged receive */
    if (ucoll__tl_connect(ctx, req->u.p2p.world) != UCOLL_OK ||
        (op = ucoll__tl_op_alloc(p->tl, req, OP_SEND)) == NULL) {
        inflight_del(req);
        ucoll__req_complete(req, ucoll__tl_failed(ctx, req->u.p2p.world) ? UCOLL_ERR_PEER
                                                                         : UCOLL_ERR_NOMEM);
        return 0;
    }
    ret = ucoll__tl_tag_send(ctx, req->u.p2p.world, op, req->u.p2p.buf, req->u.p2p.bytes,
                             ((uint64_t)ctx->rank << 32) | req->u.p2p.seq);
    track(p, req, op, OP_SEND, ret);
    return 0;
}

/* ---- peer failure -------------------------------------------------------- */

static void fail_list_add(ucoll_list_t *fail, ucoll_req_t *req)
{
    ucoll_list_add_tail(fail, &req->link);
}

typedef struct {
    ucoll_p2p_t *p;
    int rank;
} p2p_failed_t;

/* Whether posted receive e can no longer complete now that job rank
 * f->rank has failed: it is from that rank, or it is an ANY_SOURCE receive
 * on a communicator that has it. */
static int recv_hit_by_failure(const ucoll_match_recv_t *e, void *arg)
{
    const p2p_failed_t *f = arg;
    const ucoll_req_t *req = ucoll_container_of(e, ucoll_req_t, u.p2p.match);

    return e->src == UCOLL_ANY_SOURCE ? comm_has_failed(f->p, req->u.p2p.comm, f->rank)
                                      : req->u.p2p.world == f->rank;
}

/* Unexpected messages of collectives that a failure ended (coll_space_dead). */
static int msg_coll_dead(const ucoll_match_msg_t *m, void *arg)
{
    return coll_space_dead(arg, m->ctx_id);
}

static void on_peer_failure(ucoll_ctx_t *ctx, int rank, int status)
{
    ucoll_p2p_t *p = ctx->p2p;
    p2p_peer_t *peer;
    ucoll_list_t fail, dead, *pos, *tmp;
    p2p_failed_t f = {p, rank};
    ucoll_req_t *req;

    if (p == NULL) {
        return;
    }
    p->nfailed++;
    peer = &p->peers[rank];
    ucoll_list_init(&fail);

    ucoll_list_for_each_safe(pos, tmp, &peer->inflight)
    {
        req = ucoll_container_of(pos, ucoll_req_t, u.p2p.peer_link);
        inflight_del(req);
        handle_put(p, req);
        if (req->u.p2p.op) {
            ucoll_tl_op_t *op = req->u.p2p.op;

            req->u.p2p.op = NULL;
            ucoll__tl_op_detach(p->tl, op);
        }
        reg_put(p, req);
        fail_list_add(&fail, req);
    }
    ucoll_list_for_each_safe(pos, tmp, &p->deferred)
    {
        req = ucoll_container_of(pos, ucoll_req_t, link);
        if (req->u.p2p.world == rank) {
            ucoll_list_del(&req->link);
            msg_free(p, req->u.p2p.msg);
            req->u.p2p.msg = NULL;
            fail_list_add(&fail, req);
        }
    }
    ucoll_list_init(&dead);
    ucoll__match_posted_take(&p->match, recv_hit_by_failure, &f, &dead);
    while (!ucoll_list_empty(&dead)) {
        ucoll_match_recv_t *e = ucoll_list_first(&dead, ucoll_match_recv_t, link);

        ucoll_list_del(&e->link);
        fail_list_add(&fail, ucoll_container_of(e, ucoll_req_t, u.p2p.match));
    }
    /* announcements past a gap that will never fill */
    ucoll_list_for_each_safe(pos, tmp, &peer->ooo)
    {
        p2p_msg_t *msg = ucoll_container_of(pos, p2p_msg_t, match.link);
        ucoll_list_del(&msg->match.link);
        msg_free(p, msg);
    }
    /* complete only now: callbacks may post new operations */
    while (!ucoll_list_empty(&fail)) {
        req = ucoll_list_first(&fail, ucoll_req_t, link);
        ucoll_list_del(&req->link);
        ucoll__req_complete(req, UCOLL_ERR_PEER);
    }
    /* the collectives of every communicator holding the rank can no longer
     * complete, also on ranks that never talk to it: they end here (the
     * executor's runs; shared-memory ops see the failure themselves), and
     * every live rank hears of it, once from each rank that learns it (a
     * reliable broadcast: a report still goes round if its first teller
     * dies while telling). Their messages waiting here unexpected are
     * discarded, answering their senders (coll_space_dead). Not while
     * finalizing: ranks that leave then close their endpoints, which is
     * no news to anyone. */
    ucoll__exec_peer_failed(ctx, rank);
    unexp_drop(p, msg_coll_dead, p);
    if (!ctx->finalizing && !p->closed && rank != ctx->rank) {
        for (int w = 0; w < ctx->size; w++) {
            if (w != ctx->rank && w != rank && !ucoll__tl_failed(ctx, w)) {
                send_ctl(p, w, UCOLL_CTL_DOWN, 0, (uint32_t)rank, UCOLL_OK);
            }
        }
    }
}

/* ---- cancellation ---------------------------------------------------------- */

/* What a cancellation withdraws: everything (finalize), or the operations
 * of one communicator's matching space under one tag (a collective run). */
typedef struct {
    const ucoll_comm_t *comm; /* NULL: everything */
    int space, tag;
} p2p_sel_t;

static int sel_hit(const p2p_sel_t *sel, const ucoll_req_t *req)
{
    return sel->comm == NULL || (req->u.p2p.comm == sel->comm && req->u.p2p.space == sel->space &&
                                 req->u.p2p.tag == sel->tag);
}

static int recv_selected(const ucoll_match_recv_t *e, void *arg)
{
    return sel_hit(arg, ucoll_container_of(e, ucoll_req_t, u.p2p.match));
}

/*
 * Withdraw the requests sel names and complete them with status, except
 * those whose buffer UCX holds: a tagged receive still unmatched is
 * cancelled in UCX, the rest (data flowing, sends) run on, and each
 * completes when UCX reports it. Nothing is written to a withdrawn
 * request's buffer after its completion. Returns how many UCX still holds.
 */
static size_t p2p_cancel(ucoll_p2p_t *p, const p2p_sel_t *sel, int status)
{
    ucoll_list_t fail, held, *pos, *tmp;
    ucoll_req_t *req;
    size_t nheld = 0;
    int i;

    ucoll_list_init(&fail);
    ucoll_list_init(&held);
    /* posted receives: taken by their match entries, failed by their link */
    ucoll__match_posted_take(&p->match, recv_selected, (void *)sel, &held);
    while (!ucoll_list_empty(&held)) {
        ucoll_match_recv_t *e = ucoll_list_first(&held, ucoll_match_recv_t, link);

        ucoll_list_del(&e->link);
        fail_list_add(&fail, ucoll_container_of(e, ucoll_req_t, u.p2p.match));
    }
    ucoll_list_for_each_safe(pos, tmp, &p->deferred)
    {
        req = ucoll_container_of(pos, ucoll_req_t, link);
        if (sel_hit(sel, req)) {
            ucoll_list_del(&req->link);
            msg_free(p, req->u.p2p.msg); /* UCX completes the sender */
            req->u.p2p.msg = NULL;
            fail_list_add(&fail, req);
        }
    }
    for (i = 0; i < p->ctx->size; i++) {
        ucoll_list_for_each_safe(pos, tmp, &p->peers[i].inflight)
        {
            req = ucoll_container_of(pos, ucoll_req_t, u.p2p.peer_link);
            if (!sel_hit(sel, req)) {
                continue;
            }
            if (req->u.p2p.op) {
                /* req->link is free while the request waits on UCX */
                ucoll_list_add_tail(&held, &req->link);
                nheld++;
                continue;
            }
            /* a rendezvous send waiting for CTS/FIN: nothing of it is in
             * UCX; a late answer finds its handle gone */
            inflight_del(req);
            handle_put(p, req);
            reg_put(p, req);
            fail_list_add(&fail, req);
        }
    }
    /* cancelling in UCX may complete at once, and completions may post: one
     * at a time, each taken off the list first */
    while (!ucoll_list_empty(&held)) {
        req = ucoll_list_first(&held, ucoll_req_t, link);
        ucoll_list_del(&req->link);
        if (req->u.p2p.op) {
            ucoll__tl_op_cancel(p->tl, req->u.p2p.op);
        }
    }
    while (!ucoll_list_empty(&fail)) {
        req = ucoll_list_first(&fail, ucoll_req_t, link);
        ucoll_list_del(&req->link);
        ucoll__req_complete(req, status);
    }
    return nheld;
}

/* Requests whose buffer UCX still holds. */
static size_t ops_held(ucoll_p2p_t *p)
{
    ucoll_list_t *pos;
    size_t n = 0;

    ucoll_list_for_each(pos, &p->tl->ops_live)
    {
        n += ucoll_container_of(pos, ucoll_tl_op_t, link)->req != NULL;
    }
    return n;
}

/* ---- freeing a communicator --------------------------------------------- */

typedef struct {
    const ucoll_comm_t *comm;
    size_t hits;
} p2p_count_t;

/* Counts the posted receives of a communicator; takes none. */
static int recv_on_comm(const ucoll_match_recv_t *e, void *arg)
{
    p2p_count_t *c = arg;

    c->hits += ucoll__comm_owns_id(c->comm, e->ctx_id / 2);
    return 0;
}

int ucoll__p2p_comm_busy(const ucoll_comm_t *comm)
{
    ucoll_p2p_t *p = comm->ctx->p2p;
    p2p_count_t count = {comm, 0};
    ucoll_list_t none, *pos;
    int i;

    if (p == NULL) {
        return 0;
    }
    ucoll_list_for_each(pos, &p->deferred)
    {
        if (ucoll__comm_owns_id(comm,
                                ucoll_container_of(pos, ucoll_req_t, link)->u.p2p.ctx_id / 2)) {
            return 1;
        }
    }
    for (i = 0; i < p->ctx->size; i++) {
        ucoll_list_for_each(pos, &p->peers[i].inflight)
        {
            const ucoll_req_t *req = ucoll_container_of(pos, ucoll_req_t, u.p2p.peer_link);

            if (ucoll__comm_owns_id(comm, req->u.p2p.ctx_id / 2)) {
                return 1;
            }
        }
    }
    ucoll_list_init(&none);
    ucoll__match_posted_take(&p->match, recv_on_comm, &count, &none);
    return count.hits > 0;
}

static int msg_on_comm(const ucoll_match_msg_t *m, void *arg)
{
    return ucoll__comm_owns_id(arg, m->ctx_id / 2);
}

void ucoll__p2p_comm_drop(ucoll_comm_t *comm)
{
    ucoll_p2p_t *p = comm->ctx->p2p;

    if (p != NULL) {
        unexp_drop(p, msg_on_comm, comm);
    }
}

/* ---- progress ------------------------------------------------------------ */

static int p2p_progress(ucoll_ctx_t *ctx)
{
    ucoll_p2p_t *p = ctx->p2p;
    ucoll_req_t *req;
    p2p_msg_t *msg;
    int n;

    n = ucoll__tl_progress(ctx);
    if (!ucoll__tl_progressing(p->tl)) {
        while (!ucoll_list_empty(&p->deferred)) {
            req = ucoll_list_first(&p->deferred, ucoll_req_t, link);
            ucoll_list_del(&req->link);
            msg = req->u.p2p.msg;
            req->u.p2p.msg = NULL;
            start_recv(p, req, msg);
            n++;
        }
        while (!ucoll_list_empty(&p->discard)) {
            msg = ucoll_list_first(&p->discard, p2p_msg_t, match.link);
            ucoll_list_del(&msg->match.link);
            msg_discard(p, msg);
            n++;
        }
        ctx->net_deferred = 0;
    }
    return n;
}

/* ---- init / cleanup ------------------------------------------------------ */

int ucoll__p2p_init(ucoll_ctx_t *ctx)
{
    ucoll_p2p_t *p;
    int ret, i;

    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    p->peers = calloc((size_t)ctx->size, sizeof(*p->peers));
    if (p->peers == NULL) {
        free(p);
        return UCOLL_ERR_NOMEM;
    }
    p->ctx = ctx;
    p->tl = ctx->tl;
    ucoll__match_init(&p->match);
    ucoll_list_init(&p->deferred);
    ucoll_list_init(&p->discard);
    p->handle_free = HANDLE_NONE;
    p->credit_batch = UCOLL_MAX(ctx->cfg.eager_credits / 4, (size_t)1);
    for (i = 0; i < ctx->size; i++) {
        ucoll_list_init(&p->peers[i].ooo);
        ucoll_list_init(&p->peers[i].inflight);
        p->peers[i].credits = ctx->cfg.eager_credits;
        p->peers[i].rndv_mode = -1;
    }
    ucoll__tl_set_op_done(p->tl, op_done);
    ret = ucoll__tl_set_am_handler(p->tl, UCOLL_AM_MSG, am_msg_cb, ctx);
    if (ret == UCOLL_OK) {
        ret = ucoll__tl_set_am_handler(p->tl, UCOLL_AM_CTL, am_ctl_cb, ctx);
    }
    if (ret != UCOLL_OK) {
        free(p->peers);
        free(p);
        return ret;
    }
    p->tl->on_failure = on_peer_failure;
    ctx->p2p = p;
    return UCOLL_OK;
}

static int sends_pending(ucoll_p2p_t *p)
{
    ucoll_list_t *pos;
    int i;

    for (i = 0; i < p->ctx->size; i++) {
        ucoll_list_for_each(pos, &p->peers[i].inflight)
        {
            ucoll_req_t *req = ucoll_container_of(pos, ucoll_req_t, u.p2p.peer_link);
            if (req->kind == UCOLL_REQ_SEND) {
                return 1;
            }
        }
    }
    return 0;
}

static void print_stats(ucoll_p2p_t *p)
{
    const p2p_stats_t *s = &p->st;
    const ucoll_match_stats_t *ms = &p->match.st;

    fprintf(stderr,
            "ucoll[%d] stats: sent eager %" PRIu64 " msgs %" PRIu64 " B, rndv %" PRIu64
            " msgs %" PRIu64 " B (%" PRIu64 " for lack of credits); received eager %" PRIu64
            " msgs %" PRIu64 " B, rndv %" PRIu64 " msgs %" PRIu64 " B; credit msgs %" PRIu64
            "; unexpected peak %zu msgs %zu B; posted peak %zu; reordered %" PRIu64
            "; ring sent %" PRIu64 " received %" PRIu64 " full %" PRIu64 "\n",
            p->ctx->rank, s->msgs[0], s->bytes[0], s->msgs[1], s->bytes[1], s->fallback,
            s->rmsgs[0], s->rbytes[0], s->rmsgs[1], s->rbytes[1], s->credit_msgs, ms->unexp_peak,
            ms->unexp_bytes_peak, ms->posted_peak, s->ooo, p->tl->fifo_sent, p->tl->fifo_got,
            p->tl->fifo_full);
    if (s->nbad || s->stale) {
        char why[512];
        size_t n = 0;
        int i;

        why[0] = '\0';
        for (i = 1; i < UCOLL_WIRE_NERR && n < sizeof(why); i++) {
            if (s->bad[i]) {
                n += (size_t)snprintf(why + n, sizeof(why) - n, "%s%s %" PRIu64, n ? ", " : "",
                                      ucoll__wire_strerror(i), s->bad[i]);
            }
        }
        fprintf(stderr,
                "ucoll[%d] stats: malformed packets dropped %" PRIu64 " (%s); late answers %" PRIu64
                "\n",
                p->ctx->rank, s->nbad, why, s->stale);
    }
    if (p->rcache) {
        ucoll_rcache_stats_t rs;

        ucoll__rcache_stats(p->rcache, &rs);
        fprintf(stderr,
                "ucoll[%d] stats: registration cache %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
                " evictions, %" PRIu64 " invalidations\n",
                p->ctx->rank, rs.hits, rs.misses, rs.evictions, rs.invalidations);
    }
}

static void net_req_done(ucoll_req_t *req);

/* The executor's operations that UCX still holds once finalize stopped
 * waiting for them (a send whose receiver never took it, until that
 * receiver finalizes too): the executor frees their runs next, so their
 * completion, if it ever comes, must no longer reach a run. */
static void orphan_net_reqs(ucoll_p2p_t *p)
{
    ucoll_list_t *pos;

    ucoll_list_for_each(pos, &p->tl->ops_live)
    {
        ucoll_req_t *req = ucoll_container_of(pos, ucoll_tl_op_t, link)->req;

        if (req != NULL && req->cb == net_req_done) {
            req->u.p2p.net_cb = NULL;
        }
    }
}

void ucoll__p2p_quiesce(ucoll_ctx_t *ctx, int status)
{
    ucoll_p2p_t *p = ctx->p2p;
    const p2p_sel_t all = {NULL, 0, 0};
    uint64_t deadline;
    size_t held;

    if (p == NULL || p->closed) {
        return;
    }
    deadline = ucoll__tl_now_ns() + CLEANUP_SEND_NS;
    while (sends_pending(p) && ucoll__tl_now_ns() < deadline) {
        p2p_progress(ctx);
    }
    p->closed = 1;
    p->closed_status = status;
    p2p_cancel(p, &all, status);
    /* what UCX cannot cancel (data already flowing, sends) ends by itself;
     * freeing the memory under it first would let UCX write into freed
     * scratch or into a user buffer after finalize returns */
    deadline = ucoll__tl_now_ns() + CLEANUP_SEND_NS;
    while ((held = ops_held(p)) > 0 && ucoll__tl_now_ns() < deadline) {
        p2p_progress(ctx);
    }
    if (held) {
        ucoll_warn("finalize: UCX still holds the buffers of %zu operations", held);
        orphan_net_reqs(p);
    }
}

void ucoll__p2p_cleanup(ucoll_ctx_t *ctx)
{
    ucoll_p2p_t *p = ctx->p2p;
    ucoll_list_t unexp, *pos, *tmp;
    uint64_t deadline;
    int i;

    if (p == NULL) {
        return;
    }
    deadline = ucoll__tl_now_ns() + CLEANUP_SEND_NS;
    while (sends_pending(p) && ucoll__tl_now_ns() < deadline) {
        p2p_progress(ctx);
    }
    if (sends_pending(p)) {
        ucoll_warn("finalize: sends still waiting for their receivers are dropped");
    }
    /* no request outlives the engine: detach every UCX operation */
    ucoll_list_for_each_safe(pos, tmp, &p->tl->ops_live)
    {
        ucoll_tl_op_t *op = ucoll_container_of(pos, ucoll_tl_op_t, link);
        if (op->req) {
            ucoll_req_t *req = op->req;

            req->u.p2p.op = NULL;
            ucoll__tl_op_detach(p->tl, op);
        }
    }
    for (i = 0; i < ctx->size; i++) {
        ucoll_list_for_each_safe(pos, tmp, &p->peers[i].inflight)
        {
            ucoll_req_t *req = ucoll_container_of(pos, ucoll_req_t, u.p2p.peer_link);
            inflight_del(req);
            handle_put(p, req);
            reg_put(p, req);
            if (req->cb == discard_done) {
                discard_done(req); /* the engine's own: its buffer goes with it */
            }
        }
        ucoll_list_for_each_safe(pos, tmp, &p->peers[i].ooo)
        {
            p2p_msg_t *msg = ucoll_container_of(pos, p2p_msg_t, match.link);
            msg_free(p, msg);
        }
    }
    ucoll_list_for_each_safe(pos, tmp, &p->deferred)
    {
        ucoll_req_t *req = ucoll_container_of(pos, ucoll_req_t, link);
        msg_free(p, req->u.p2p.msg);
    }
    ucoll_list_for_each_safe(pos, tmp, &p->discard)
    {
        msg_free(p, ucoll_container_of(pos, p2p_msg_t, match.link));
    }
    ucoll_list_init(&unexp);
    ucoll__match_unexp_take(&p->match, NULL, NULL, &unexp);
    ucoll_list_for_each_safe(pos, tmp, &unexp)
    {
        msg_free(p, ucoll_container_of(pos, p2p_msg_t, match.link));
    }
    ucoll__match_fini(&p->match);
    if (ctx->cfg.stats) {
        print_stats(p);
    }
    ucoll__rcache_destroy(p->rcache);
    p->tl->on_failure = NULL;
    free(p->handles);
    free(p->peers);
    free(p);
    ctx->p2p = NULL;
}

uint64_t ucoll__p2p_refused(const ucoll_ctx_t *ctx, int why)
{
    const ucoll_p2p_t *p = ctx->p2p;

    if (p == NULL || why < 0 || why >= UCOLL_WIRE_NERR) {
        return 0;
    }
    return why ? p->st.bad[why] : p->st.nbad;
}

/* ---- net ops for the collective executor ---------------------------------- */

static void net_req_done(ucoll_req_t *req)
{
    void (*cb)(void *, int) = req->u.p2p.net_cb;
    void *arg = req->u.p2p.net_arg;
    int err = req->status.error;

    ucoll__req_release(req);
    if (cb != NULL) { /* NULL: orphaned at finalize (orphan_net_reqs) */
        cb(arg, err);
    }
}

static ucoll_req_t *net_req(ucoll_comm_t *comm, int kind, void *buf, size_t bytes, int peer,
                            int tag, ucoll_net_cb_t cb, void *arg)
{
    ucoll_req_t *req = ucoll__req_alloc(comm->ctx, kind);

    if (req == NULL) {
        return NULL;
    }
    req->cb = net_req_done;
    req->u.p2p.comm = comm;
    req->u.p2p.buf = buf;
    req->u.p2p.bytes = bytes;
    req->u.p2p.peer = peer;
    req->u.p2p.tag = tag;
    req->u.p2p.space = UCOLL_SPACE_COLL;
    req->u.p2p.ctx_id = comm->id * 2 + UCOLL_SPACE_COLL;
    req->u.p2p.world = ucoll__comm_world_rank(comm, peer);
    req->u.p2p.net_cb = cb;
    req->u.p2p.net_arg = arg;
    return req;
}

static int net_isend(ucoll_comm_t *comm, const void *buf, size_t bytes, int dst, int tag,
                     ucoll_net_cb_t cb, void *arg)
{
    ucoll_req_t *req = net_req(comm, UCOLL_REQ_SEND, (void *)buf, bytes, dst, tag, cb, arg);

    if (req == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    start_send(comm->ctx->p2p, req);
    return UCOLL_OK;
}

static int net_irecv(ucoll_comm_t *comm, void *buf, size_t bytes, int src, int tag,
                     ucoll_net_cb_t cb, void *arg)
{
    ucoll_req_t *req = net_req(comm, UCOLL_REQ_RECV, buf, bytes, src, tag, cb, arg);

    if (req == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    post_recv(comm->ctx->p2p, req);
    return UCOLL_OK;
}

static void net_cancel(ucoll_comm_t *comm, int tag, int status)
{
    const p2p_sel_t sel = {comm, UCOLL_SPACE_COLL, tag};

    if (comm->ctx->p2p) {
        p2p_cancel(comm->ctx->p2p, &sel, status);
    }
}

static int net_comm_failed(const ucoll_comm_t *comm)
{
    ucoll_p2p_t *p = comm->ctx->p2p;

    return p != NULL && p->nfailed != 0 && comm_has_failed(p, ucoll__comm_scope(comm), -1);
}

const ucoll_net_ops_t ucoll__net_ucx = {
    .name = "ucx",
    .isend = net_isend,
    .irecv = net_irecv,
    .cancel = net_cancel,
    .comm_failed = net_comm_failed,
    .progress = p2p_progress,
};

/* ---- calls of the API layer (lib/p2p.c) ---------------------------------- */

ucoll_req_t *ucoll__p2p_req(ucoll_comm_t *comm, int kind, void *buf, size_t bytes, int peer,
                            int tag)
{
    ucoll_req_t *req = ucoll__req_alloc(comm->ctx, kind);

    if (req == NULL) {
        return NULL;
    }
    req->user = 1;
    req->u.p2p.comm = comm;
    req->u.p2p.buf = buf;
    req->u.p2p.bytes = bytes;
    req->u.p2p.peer = peer;
    req->u.p2p.tag = tag;
    req->u.p2p.any_tag = tag == UCOLL_ANY_TAG;
    req->u.p2p.space = UCOLL_SPACE_P2P;
    req->u.p2p.ctx_id = comm->id * 2 + UCOLL_SPACE_P2P;
    if (kind == UCOLL_REQ_SEND) {
        req->u.p2p.world = ucoll__comm_world_rank(comm, peer);
    }
    return req;
}

void ucoll__p2p_start(ucoll_req_t *req)
{
    ucoll_p2p_t *p = req->u.p2p.comm->ctx->p2p;

    if (req->kind == UCOLL_REQ_SEND) {
        start_send(p, req);
    } else {
        post_recv(p, req);
    }
}

/*
 * A blocking send of a small eager message that UCX can complete on the
 * spot needs no request and no operation record: build the packet on the
 * stack and ask UCP for immediate completion. Returns 1 when sent; 0 when
 * the caller must take the general path (nothing has changed then: the
 * sequence number and credits are taken only on success).
 */
int ucoll__p2p_send_now(ucoll_comm_t *comm, const void *buf, size_t bytes, int dst, int tag)
{
    ucoll_p2p_t *p = comm->ctx->p2p;
    int world = ucoll__comm_world_rank(comm, dst);
    p2p_peer_t *peer = &p->peers[world];
    size_t cost = bytes + sizeof(wire_hdr_t);
    uint64_t pkt[UCOLL_TL_OP_HDR / 8];
    wire_hdr_t *h = (wire_hdr_t *)pkt;

    if (bytes > PACK_MAX || bytes > p->ctx->cfg.eager_limit || cost > peer->credits) {
        return 0;
    }
    h->ctx_id = comm->id * 2 + UCOLL_SPACE_P2P;
    h->src = comm->rank;
    h->tag = tag;
    h->seq = peer->send_seq;
    h->src_world = (uint32_t)p->ctx->rank;
    h->proto = UCOLL_PROTO_EAGER;
    h->rkey_len = 0;
    h->credits = (uint32_t)UCOLL_MIN(peer->credit_return, UINT32_MAX);
    h->pad = 0;
    h->len = bytes;
    copy_bytes(h + 1, buf, bytes);
    if (ucoll__tl_am_send_imm(p->ctx, world, UCOLL_AM_MSG, pkt, sizeof(*h) + bytes) != UCOLL_OK) {
        /* not connected, not now (no resources) or an error: the general
         * path decides */
        return 0;
    }
    peer->send_seq++;
    peer->credit_return -= h->credits;
    peer->credits -= cost;
    p->st.msgs[0]++;
    p->st.bytes[0] += bytes;
    return 1;
}

static void orphan_done(ucoll_req_t *req)
{
    ucoll__req_release(req);
}

/*
 * Wait for the request of a blocking call and free it. When the wait times
 * out the caller has no handle to try again with: a receive still waiting in
 * a posted queue is withdrawn (nothing will be written to its buffer), and
 * an operation already under way is left to finish on its own and freed
 * then (a rendezvous may still complete into the buffer).
 */
int ucoll__p2p_wait_blocking(ucoll_req_t *req, ucoll_status_t *status)
{
    ucoll_p2p_t *p = req->ctx->p2p;
    int ret = ucoll__wait_flag(p->ctx, &req->complete);

    if (ucoll_unlikely(ret != UCOLL_OK)) {
        if (req->u.p2p.match.posted) {
            ucoll__match_unpost(&p->match, &req->u.p2p.match);
            ucoll__req_release(req);
        } else {
            req->cb = orphan_done;
            if (req->kind == UCOLL_REQ_RECV && req->u.p2p.op) {
                /* matched, but its data not flowing yet (RNDV_TAG's tagged
                 * receive, still waiting in UCX): withdrawn there too, so
                 * nothing lands in the buffer; the sender's data is taken
                 * and dropped (rndv_tag_discard). Anything else runs on. */
                ucoll__tl_op_cancel(p->tl, req->u.p2p.op);
            }
        }
        return ret;
    }
    return ucoll__req_finish(req, status);
}

/*
 * The fake transport of fake_tl.h: lib/transport/ucx.h's operations and the
 * registration cache (rcache.h) without UCX. Operations live in
 * tl->ops_live as the real ones do; each is PENDING (waiting for its match,
 * its descriptor, or the test) or READY (finished at the next progress with
 * its status), so that completions, as in UCX, only ever run from progress.
 */
#include "tests/fuzz/fake_tl.h"
#include "progress/p2p.h"
#include "progress/request.h"
#include "progress/sched.h"
#include "transport/net.h"
#include "transport/rcache.h"
#include "transport/ucx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RTS_KEEP   16
#define DESC_MAGIC 0x64657363u
#define RKEY_MAGIC 0xa5

enum { FK_AM_SEND, FK_TAG_SEND, FK_TAG_RECV, FK_GET, FK_AM_RECV };
enum { ST_PENDING, ST_READY };

typedef struct fake_op {
    ucoll_tl_op_t op; /* first: what the engine sees */
    int kind;         /* FK_* */
    int rank;         /* peer of a send or get; a tagged receive's sender */
    int state;        /* ST_* */
    int status;       /* when READY */
    void *buf;        /* receive/get destination, tagged send source */
    size_t len;
    uint64_t tag;
    struct fake_op **ref; /* the packet or descriptor pointing here, if any */
} fake_op_t;

typedef struct {
    uint32_t magic;
    fake_op_t *send; /* the AM rendezvous send to this rank it came from, or NULL */
    size_t len;
    char data[];
} fake_desc_t;

typedef struct {
    ucoll_list_t link;
    int am_id, rndv;
    fake_op_t *send; /* rndv: completed when the descriptor is consumed */
    size_t hlen, len;
    char bytes[]; /* header, then data */
} fake_pkt_t;

struct ucoll_rcache {
    ucoll_list_t regs;
};

typedef struct {
    ucoll_tl_t tl; /* first: ctx->tl */
    fake_cfg_t cfg;
    ucoll_list_t pkts; /* to this rank, delivered at the next progress */
    ucoll_rcache_t *rcache;
    struct {
        int rank;
        wire_rts_t rts;
    } rts[RTS_KEEP];
    unsigned nrts;
    wire_ctl_t ctl; /* the last control message to another rank */
    int ctl_rank;   /* its destination; -1 before the first */
    fake_stats_t st;
} fake_t;

static uint64_t fake_clock;

static fake_t *fake_of(ucoll_tl_t *tl)
{
    return (fake_t *)tl;
}

static void die(const char *what)
{
    fprintf(stderr, "fake transport: %s\n", what);
    abort();
}

/* ---- descriptors and packets --------------------------------------------- */

static fake_desc_t *desc_new(fake_t *f, fake_op_t *send, const void *data, size_t len)
{
    fake_desc_t *d = malloc(sizeof(*d) + len);

    if (d == NULL) {
        die("out of memory");
    }
    d->magic = DESC_MAGIC;
    d->send = send;
    if (send) {
        send->ref = &d->send;
    }
    d->len = len;
    if (len) {
        memcpy(d->data, data, len);
    }
    f->st.descs++;
    return d;
}

/* The descriptor is consumed: the send it came from is done. */
static void desc_free(fake_t *f, fake_desc_t *d)
{
    if (d == NULL || d->magic != DESC_MAGIC) {
        die("the engine handed back something that is not a live descriptor");
    }
    if (d->send) {
        d->send->ref = NULL;
        d->send->state = ST_READY;
        d->send->status = UCOLL_OK;
    }
    d->magic = 0;
    f->st.descs--;
    free(d);
}

int fake_deliver(ucoll_ctx_t *ctx, int am_id, const void *header, size_t header_length,
                 const void *data, size_t length, int rndv)
{
    fake_t *f = fake_of(ctx->tl);
    const ucoll_tl_am_t *am = &f->tl.am[am_id];
    fake_desc_t *d;
    void *h, *b;
    int kept;

    /* exact-size copies: a read past what UCX delivered shows under ASan */
    h = malloc(header_length ? header_length : 1);
    if (h == NULL) {
        die("out of memory");
    }
    if (header_length) {
        memcpy(h, header, header_length);
    }
    if (rndv) {
        d = desc_new(f, NULL, data, length);
        kept = am->cb(am->arg, header_length ? h : NULL, header_length, d, length, 1);
        if (!kept) {
            desc_free(f, d); /* UCX drops it */
        }
    } else {
        b = malloc(length ? length : 1);
        if (b == NULL) {
            die("out of memory");
        }
        if (length) {
            memcpy(b, data, length);
        }
        kept = am->cb(am->arg, header_length ? h : NULL, header_length, b, length, 0);
        if (kept) {
            die("a handler kept data that is not a descriptor");
        }
        free(b);
    }
    free(h);
    return kept;
}

/* Deliver pkt to this rank's handler, as UCX does from progress. */
static void pkt_deliver(ucoll_ctx_t *ctx, fake_pkt_t *pkt)
{
    fake_t *f = fake_of(ctx->tl);
    const ucoll_tl_am_t *am = &f->tl.am[pkt->am_id];
    const char *data = pkt->bytes + pkt->hlen;
    fake_desc_t *d;

    if (!pkt->rndv) {
        fake_deliver(ctx, pkt->am_id, pkt->bytes, pkt->hlen, data, pkt->len, 0);
        return;
    }
    d = desc_new(f, pkt->send, data, pkt->len);
    if (!am->cb(am->arg, pkt->hlen ? pkt->bytes : NULL, pkt->hlen, d, pkt->len, 1)) {
        desc_free(f, d);
    }
}

/* Everything the engine sends must pass the engine's own decoders. */
static void check_packet(fake_t *f, int am_id, const void *hdr, size_t hlen, const void *data,
                         size_t len, int rndv)
{
    ucoll_wire_msg_t m;
    wire_ctl_t ctl;
    int ret;

    if (am_id == UCOLL_AM_MSG) {
        ret = ucoll__wire_decode_msg(hdr, hlen, (void *)data, len, rndv, (uint32_t)f->cfg.size, &m);
    } else {
        ret = ucoll__wire_decode_ctl(hdr, hlen, data, len, rndv, (uint32_t)f->cfg.size, &ctl);
    }
    if (ret != UCOLL_WIRE_OK) {
        fprintf(stderr, "fake transport: the engine sent a packet its decoder refuses: %s\n",
                ucoll__wire_strerror(ret));
        abort();
    }
}

/* ---- operation records --------------------------------------------------- */

ucoll_tl_op_t *ucoll__tl_op_alloc(ucoll_tl_t *tl, void *req, int what)
{
    fake_op_t *fop = calloc(1, sizeof(*fop));

    if (fop == NULL) {
        return NULL;
    }
    fop->op.tl = tl;
    fop->op.req = req;
    fop->op.what = what;
    fop->rank = -1;
    ucoll_list_add_tail(&tl->ops_live, &fop->op.link);
    return &fop->op;
}

void ucoll__tl_op_free(ucoll_tl_t *tl, ucoll_tl_op_t *op)
{
    fake_op_t *fop = (fake_op_t *)op;

    (void)tl;
    if (fop->ref) {
        *fop->ref = NULL; /* finished (failed) before its descriptor was consumed */
    }
    ucoll_list_del(&op->link);
    free(op);
}

/* Finish a READY operation: free it, then report it unless detached. */
static void op_finish(fake_t *f, fake_op_t *fop)
{
    void *req = fop->op.req;
    int what = fop->op.what, status = fop->status;

    ucoll__tl_op_free(&f->tl, &fop->op);
    if (req != NULL) {
        f->tl.op_done(req, what, status);
    }
}

/* An operation that is done: at once, or at the next progress. */
static int op_now(fake_t *f, fake_op_t *fop)
{
    if (f->cfg.async) {
        fop->state = ST_READY;
        fop->status = UCOLL_OK;
        return UCOLL_TL_INPROGRESS;
    }
    ucoll__tl_op_free(&f->tl, &fop->op);
    return UCOLL_OK;
}

static int peer_failed(ucoll_ctx_t *ctx, int rank)
{
    return ctx->tl->peers[rank].state == UCOLL_TL_EP_FAILED;
}

/* The pending operation of kind with this tag (a tagged send to this rank
 * or a tagged receive), or NULL. */
static fake_op_t *tag_find(fake_t *f, int kind, uint64_t tag)
{
    ucoll_list_t *pos;

    ucoll_list_for_each(pos, &f->tl.ops_live)
    {
        fake_op_t *o = (fake_op_t *)ucoll_container_of(pos, ucoll_tl_op_t, link);
        if (o->kind == kind && o->state == ST_PENDING && o->tag == tag &&
            (kind == FK_TAG_RECV || o->rank == f->cfg.rank)) {
            return o;
        }
    }
    return NULL;
}

static void tag_meet(fake_op_t *send, fake_op_t *recv)
{
    if (send->len) {
        memcpy(recv->buf, send->buf, UCOLL_MIN(send->len, recv->len));
    }
    send->state = recv->state = ST_READY;
    send->status = UCOLL_OK;
    recv->status = send->len > recv->len ? UCOLL_ERR_TRUNCATE : UCOLL_OK;
}

/* ---- the operations of ucx.h --------------------------------------------- */

void ucoll__tl_set_op_done(ucoll_tl_t *tl, void (*op_done)(void *req, int what, int status))
{
    tl->op_done = op_done;
}

int ucoll__tl_set_am_handler(ucoll_tl_t *tl, int am_id, ucoll_tl_am_cb_t cb, void *arg)
{
    tl->am[am_id].cb = cb;
    tl->am[am_id].arg = arg;
    return UCOLL_OK;
}

int ucoll__tl_ep_connect(ucoll_ctx_t *ctx, int rank, struct ucp_ep **ep_p)
{
    if (rank < 0 || rank >= ctx->size) {
        die("connect to a rank out of range");
    }
    if (peer_failed(ctx, rank)) {
        return UCOLL_ERR_PEER;
    }
    ctx->tl->peers[rank].state = UCOLL_TL_EP_UP;
    *ep_p = NULL;
    return UCOLL_OK;
}

/* The point-to-point engine alone runs no schedule: a failure has no
 * collective run to end (lib/progress/sched.c is not part of the harness). */
void ucoll__exec_peer_failed(ucoll_ctx_t *ctx, int world)
{
    (void)ctx;
    (void)world;
}

void ucoll__tl_set_failed(ucoll_ctx_t *ctx, int rank, int status)
{
    ucoll_tl_t *tl = ctx->tl;
    ucoll_list_t *pos;

    if (peer_failed(ctx, rank)) {
        return;
    }
    tl->peers[rank].state = UCOLL_TL_EP_FAILED;
    if (tl->on_failure) {
        tl->on_failure(ctx, rank, status);
    }
    /* what was under way towards it fails, as UCX reports it */
    ucoll_list_for_each(pos, &tl->ops_live)
    {
        fake_op_t *o = (fake_op_t *)ucoll_container_of(pos, ucoll_tl_op_t, link);
        if (o->rank == rank && o->kind != FK_TAG_RECV && o->state == ST_PENDING) {
            o->state = ST_READY;
            o->status = UCOLL_ERR_PEER;
        }
    }
}

/* no process to look at: a peer is gone once marked so */
int ucoll__tl_check_failed(ucoll_ctx_t *ctx, int rank)
{
    return rank >= 0 && peer_failed(ctx, rank);
}

uint64_t ucoll__tl_now_ns(void)
{
    /* a second per look: bounded waits (finalize) end at once */
    return fake_clock += 1000000000ull;
}

int ucoll__tl_progress(ucoll_ctx_t *ctx)
{
    fake_t *f = fake_of(ctx->tl);
    ucoll_list_t pkts, *pos;
    int n = 0, found;

    /* packets sent during this round wait for the next one */
    ucoll_list_init(&pkts);
    if (!ucoll_list_empty(&f->pkts)) {
        pkts = f->pkts;
        pkts.next->prev = &pkts;
        pkts.prev->next = &pkts;
        ucoll_list_init(&f->pkts);
    }
    f->tl.progressing++; /* as UCX's callbacks run inside its progress */
    while (!ucoll_list_empty(&pkts)) {
        fake_pkt_t *pkt = ucoll_list_first(&pkts, fake_pkt_t, link);

        ucoll_list_del(&pkt->link);
        pkt_deliver(ctx, pkt);
        free(pkt);
        n++;
    }
    do {
        found = 0;
        ucoll_list_for_each(pos, &f->tl.ops_live)
        {
            fake_op_t *o = (fake_op_t *)ucoll_container_of(pos, ucoll_tl_op_t, link);
            if (o->state == ST_READY) {
                op_finish(f, o);
                found = 1;
                n++;
                break;
            }
        }
    } while (found);
    f->tl.progressing--;
    return n;
}

int ucoll__tl_am_send(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, int am_id, const void *hdr,
                      size_t hdr_len, const void *data, size_t len, unsigned flags)
{
    fake_t *f = fake_of(ctx->tl);
    fake_op_t *fop = (fake_op_t *)op;
    int rndv = !!(flags & UCOLL_TL_AM_RNDV);
    fake_pkt_t *pkt;

    if (peer_failed(ctx, rank)) {
        ucoll__tl_op_free(&f->tl, op);
        return UCOLL_ERR_PEER;
    }
    check_packet(f, am_id, hdr, hdr_len, data, len, rndv);
    f->st.sent[am_id]++;
    if (am_id == UCOLL_AM_MSG && hdr_len >= sizeof(wire_rts_t)) {
        f->st.rts++;
    }
    fop->kind = FK_AM_SEND;
    fop->rank = rank;
    if (rank == ctx->rank) {
        /* UCX copies an eager payload; a rendezvous one is read when fetched
         * (the sender's buffer is stable until then): copy both now */
        pkt = malloc(sizeof(*pkt) + hdr_len + len);
        if (pkt == NULL) {
            die("out of memory");
        }
        pkt->am_id = am_id;
        pkt->rndv = rndv;
        pkt->send = rndv ? fop : NULL;
        if (rndv) {
            fop->ref = &pkt->send;
        }
        pkt->hlen = hdr_len;
        pkt->len = len;
        if (hdr_len) {
            memcpy(pkt->bytes, hdr, hdr_len);
        }
        if (len) {
            memcpy(pkt->bytes + hdr_len, data, len);
        }
        ucoll_list_add_tail(&f->pkts, &pkt->link);
    } else if (am_id == UCOLL_AM_CTL && hdr_len == sizeof(wire_ctl_t)) {
        memcpy(&f->ctl, hdr, sizeof(f->ctl));
        f->ctl_rank = rank;
    } else if (am_id == UCOLL_AM_MSG && hdr_len >= sizeof(wire_rts_t)) {
        f->rts[f->nrts % RTS_KEEP].rank = rank;
        memcpy(&f->rts[f->nrts % RTS_KEEP].rts, hdr, sizeof(wire_rts_t));
        f->nrts++;
    }
    if (rndv) {
        fop->state = ST_PENDING; /* until the descriptor is consumed, or the test says */
        return UCOLL_TL_INPROGRESS;
    }
    return op_now(f, fop);
}

int ucoll__tl_am_send_imm(ucoll_ctx_t *ctx, int rank, int am_id, const void *data, size_t len)
{
    fake_t *f = fake_of(ctx->tl);
    fake_pkt_t *pkt;

    if (peer_failed(ctx, rank)) {
        return UCOLL_ERR_PEER;
    }
    if (f->cfg.async) {
        return UCOLL_ERR_NOMEM; /* "no resources now": the engine takes its general path */
    }
    check_packet(f, am_id, NULL, 0, data, len, 0);
    f->st.sent[am_id]++;
    if (rank == ctx->rank) {
        pkt = malloc(sizeof(*pkt) + len);
        if (pkt == NULL) {
            die("out of memory");
        }
        pkt->am_id = am_id;
        pkt->rndv = 0;
        pkt->send = NULL;
        pkt->hlen = 0;
        pkt->len = len;
        memcpy(pkt->bytes, data, len);
        ucoll_list_add_tail(&f->pkts, &pkt->link);
    }
    return UCOLL_OK;
}

int ucoll__tl_tag_send(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, const void *buf, size_t len,
                       uint64_t tag)
{
    fake_t *f = fake_of(ctx->tl);
    fake_op_t *fop = (fake_op_t *)op, *recv;

    if (peer_failed(ctx, rank)) {
        ucoll__tl_op_free(&f->tl, op);
        return UCOLL_ERR_PEER;
    }
    f->st.tag_sends++;
    fop->kind = FK_TAG_SEND;
    fop->rank = rank;
    fop->buf = (void *)buf;
    fop->len = len;
    fop->tag = tag;
    fop->state = ST_PENDING;
    if (rank == ctx->rank && (recv = tag_find(f, FK_TAG_RECV, tag)) != NULL) {
        tag_meet(fop, recv);
    }
    return UCOLL_TL_INPROGRESS;
}

int ucoll__tl_tag_recv(ucoll_tl_t *tl, ucoll_tl_op_t *op, void *buf, size_t len, uint64_t tag)
{
    fake_t *f = fake_of(tl);
    fake_op_t *fop = (fake_op_t *)op, *send;

    fop->kind = FK_TAG_RECV;
    fop->rank = (int)(tag >> 32);
    fop->buf = buf;
    fop->len = len;
    fop->tag = tag;
    fop->state = ST_PENDING;
    send = tag_find(f, FK_TAG_SEND, tag);
    if (send) {
        tag_meet(send, fop);
    }
    return UCOLL_TL_INPROGRESS;
}

int ucoll__tl_get(ucoll_ctx_t *ctx, int rank, ucoll_tl_op_t *op, void *buf, size_t len,
                  uint64_t raddr, const void *rkey_buf)
{
    fake_t *f = fake_of(ctx->tl);
    fake_op_t *fop = (fake_op_t *)op;
    ucoll_list_t *pos;

    if (peer_failed(ctx, rank)) {
        ucoll__tl_op_free(&f->tl, op);
        return UCOLL_ERR_PEER;
    }
    if (*(const unsigned char *)rkey_buf != RKEY_MAGIC) {
        ucoll__tl_op_free(&f->tl, op); /* the key does not unpack */
        return UCOLL_ERR_TRANSPORT;
    }
    f->st.gets++;
    fop->kind = FK_GET;
    fop->rank = rank;
    fop->buf = buf;
    fop->len = len;
    fop->state = ST_PENDING;
    if (rank != ctx->rank) {
        return UCOLL_TL_INPROGRESS;
    }
    /* from this rank: only inside a live registration, as RMA allows */
    fop->state = ST_READY;
    fop->status = UCOLL_ERR_TRANSPORT;
    if (f->rcache) {
        ucoll_list_for_each(pos, &f->rcache->regs)
        {
            const ucoll_reg_t *reg = ucoll_container_of(pos, ucoll_reg_t, link);
            if (raddr >= reg->start && raddr <= reg->end && len <= reg->end - raddr) {
                if (len) {
                    memmove(buf, (const void *)(uintptr_t)raddr, len);
                }
                fop->status = UCOLL_OK;
                break;
            }
        }
    }
    return UCOLL_TL_INPROGRESS;
}

int ucoll__tl_am_recv_data(ucoll_tl_t *tl, ucoll_tl_op_t *op, void *desc, void *buf, size_t len)
{
    fake_t *f = fake_of(tl);
    fake_op_t *fop = (fake_op_t *)op;
    fake_desc_t *d = desc;
    int truncated;

    if (d == NULL || d->magic != DESC_MAGIC) {
        die("the engine fetched something that is not a live descriptor");
    }
    truncated = d->len > len;
    if (d->len) {
        memcpy(buf, d->data, UCOLL_MIN(d->len, len));
    }
    desc_free(f, d);
    fop->kind = FK_AM_RECV;
    if (truncated) {
        ucoll__tl_op_free(tl, op);
        return UCOLL_ERR_TRUNCATE;
    }
    return op_now(f, fop);
}

void ucoll__tl_am_release(ucoll_tl_t *tl, void *desc)
{
    desc_free(fake_of(tl), desc);
}

void ucoll__tl_op_detach(ucoll_tl_t *tl, ucoll_tl_op_t *op)
{
    fake_op_t *fop = (fake_op_t *)op;

    op->req = NULL;
    if (fop->kind == FK_TAG_RECV) {
        ucoll__tl_op_free(tl, op); /* cancelled: completes at once, unreported */
    }
}

void ucoll__tl_op_cancel(ucoll_tl_t *tl, ucoll_tl_op_t *op)
{
    fake_op_t *fop = (fake_op_t *)op;

    /* as UCP: only a tagged receive still waiting for its send; reported
     * at once, with what UCS_ERR_CANCELED maps to */
    if (fop->kind == FK_TAG_RECV && fop->state == ST_PENDING) {
        fop->status = UCOLL_ERR_PEER;
        op_finish(fake_of(tl), fop);
    }
}

/* Never reached by the tests: nothing waits. */
int ucoll__wait_flag(ucoll_ctx_t *ctx, const volatile int *flag)
{
    (void)ctx;
    (void)flag;
    return UCOLL_ERR_TIMEOUT;
}

/* ---- registration cache -------------------------------------------------- */

ucoll_rcache_t *ucoll__rcache_create(struct ucp_context *context)
{
    fake_t *f = (fake_t *)context; /* the fake's tl->context is the fake */
    ucoll_rcache_t *rc = calloc(1, sizeof(*rc));

    if (rc) {
        ucoll_list_init(&rc->regs);
        f->rcache = rc;
    }
    return rc;
}

ucoll_reg_t *ucoll__rcache_get(ucoll_rcache_t *rc, void *addr, size_t len)
{
    ucoll_reg_t *reg = calloc(1, sizeof(*reg) + 1);

    if (reg == NULL) {
        return NULL;
    }
    reg->start = (uintptr_t)addr;
    reg->end = (uintptr_t)addr + len;
    reg->rkey_buf = reg + 1;
    *(unsigned char *)reg->rkey_buf = RKEY_MAGIC;
    reg->rkey_len = 1;
    reg->refs = 1;
    ucoll_list_add_tail(&rc->regs, &reg->link);
    return reg;
}

void ucoll__rcache_put(ucoll_rcache_t *rc, ucoll_reg_t *reg)
{
    (void)rc;
    if (--reg->refs == 0) {
        ucoll_list_del(&reg->link);
        free(reg);
    }
}

void ucoll__rcache_destroy(ucoll_rcache_t *rc)
{
    ucoll_list_t *pos, *tmp;

    if (rc == NULL) {
        return;
    }
    ucoll_list_for_each_safe(pos, tmp, &rc->regs)
    {
        free(ucoll_container_of(pos, ucoll_reg_t, link));
    }
    free(rc);
}

void ucoll__rcache_stats(ucoll_rcache_t *rc, ucoll_rcache_stats_t *st)
{
    (void)rc;
    memset(st, 0, sizeof(*st));
}

/* ---- the context ----------------------------------------------------------- */

ucoll_comm_t *fake_comm_add(ucoll_ctx_t *ctx, uint32_t id, int n, const int *world_ranks)
{
    ucoll_comm_t *comm;
    int r, me = -1;

    for (r = 0; r < n; r++) {
        if (world_ranks[r] == ctx->rank) {
            me = r;
        }
    }
    if (me < 0 || (comm = calloc(1, sizeof(*comm))) == NULL) {
        return NULL;
    }
    comm->world = malloc((size_t)n * sizeof(int));
    if (comm->world == NULL) {
        free(comm);
        return NULL;
    }
    memcpy(comm->world, world_ranks, (size_t)n * sizeof(int));
    comm->ctx = ctx;
    comm->id = id;
    comm->rank = me;
    comm->size = n;
    ucoll_list_add_tail(&ctx->comms, &comm->link);
    return comm;
}

ucoll_ctx_t *fake_ctx_create(const fake_cfg_t *cfg)
{
    ucoll_ctx_t *ctx = calloc(1, sizeof(*ctx));
    fake_t *f = calloc(1, sizeof(*f));
    ucoll_comm_t *world = calloc(1, sizeof(*world));

    ucoll__log_level = cfg->log_level;
    if (ctx == NULL || f == NULL || world == NULL) {
        goto err;
    }
    f->cfg = *cfg;
    f->ctl_rank = -1;
    f->tl.ctx = ctx;
    f->tl.context = (struct ucp_context *)f;
    f->tl.peers = calloc((size_t)cfg->size, sizeof(*f->tl.peers));
    if (f->tl.peers == NULL) {
        goto err;
    }
    ucoll_list_init(&f->tl.ops_live);
    ucoll_list_init(&f->tl.ops_free);
    ucoll_list_init(&f->pkts);

    ctx->rank = cfg->rank;
    ctx->size = cfg->size;
    ctx->cfg.eager_limit = cfg->eager_limit;
    ctx->cfg.eager_credits = cfg->eager_credits;
    ctx->cfg.rndv_mode = cfg->rndv_mode;
    ctx->cfg.stats = cfg->stats;
    ctx->tl = &f->tl;
    ctx->net = &ucoll__net_ucx;
    ucoll_list_init(&ctx->comms);
    ucoll_list_init(&ctx->req_free);
    ucoll_list_init(&ctx->req_chunks);
    world->ctx = ctx;
    world->rank = cfg->rank;
    world->size = cfg->size;
    ucoll_list_add_tail(&ctx->comms, &world->link);
    ctx->world = world;
    ctx->next_comm_id = 1;
    if (ucoll__p2p_init(ctx) != UCOLL_OK) {
        goto err;
    }
    return ctx;
err:
    if (f) {
        free(f->tl.peers);
    }
    free(world);
    free(f);
    free(ctx);
    return NULL;
}

void fake_ctx_destroy(ucoll_ctx_t *ctx)
{
    fake_t *f = fake_of(ctx->tl);
    ucoll_list_t *pos, *tmp;

    ctx->finalizing = 1;
    ucoll__p2p_cleanup(ctx);
    /* the worker goes: undelivered packets and every operation with it */
    ucoll_list_for_each_safe(pos, tmp, &f->pkts)
    {
        free(ucoll_container_of(pos, fake_pkt_t, link));
    }
    ucoll_list_for_each_safe(pos, tmp, &f->tl.ops_live)
    {
        free(ucoll_container_of(pos, ucoll_tl_op_t, link));
    }
    if (f->st.descs != 0) {
        fprintf(stderr, "fake transport: %llu descriptors never fetched nor released\n",
                (unsigned long long)f->st.descs);
        abort();
    }
    ucoll_list_for_each_safe(pos, tmp, &ctx->comms)
    {
        ucoll_comm_t *comm = ucoll_container_of(pos, ucoll_comm_t, link);
        ucoll_list_del(&comm->link);
        free(comm->world);
        free(comm);
    }
    ucoll__req_pool_cleanup(ctx);
    free(f->tl.peers);
    free(f);
    free(ctx);
}

int fake_last_ctl(ucoll_ctx_t *ctx, int *rank_p, wire_ctl_t *ctl_p)
{
    fake_t *f = fake_of(ctx->tl);

    if (f->ctl_rank < 0) {
        return 0;
    }
    *rank_p = f->ctl_rank;
    *ctl_p = f->ctl;
    return 1;
}

int fake_progress(ucoll_ctx_t *ctx)
{
    return ctx->net->progress(ctx);
}

int fake_complete(ucoll_ctx_t *ctx, unsigned which, int status)
{
    fake_t *f = fake_of(ctx->tl);
    ucoll_list_t *pos;
    unsigned n = 0, i = 0;

    /* what only the test can finish: operations towards other ranks */
#define WAITING(o)                                          \
    ((o)->state == ST_PENDING && (o)->kind != FK_AM_RECV && \
     !(((o)->kind == FK_AM_SEND || (o)->kind == FK_TAG_SEND) && (o)->rank == ctx->rank))
    ucoll_list_for_each(pos, &f->tl.ops_live)
    {
        fake_op_t *o = (fake_op_t *)ucoll_container_of(pos, ucoll_tl_op_t, link);
        n += WAITING(o);
    }
    if (n == 0) {
        return 0;
    }
    which %= n;
    ucoll_list_for_each(pos, &f->tl.ops_live)
    {
        fake_op_t *o = (fake_op_t *)ucoll_container_of(pos, ucoll_tl_op_t, link);
        if (WAITING(o) && i++ == which) {
            if (status == UCOLL_OK && (o->kind == FK_TAG_RECV || o->kind == FK_GET) && o->len) {
                memset(o->buf, 0x5a, o->len); /* the whole length, as the peer may send it */
            }
            o->state = ST_READY;
            o->status = status;
            return 1;
        }
    }
#undef WAITING
    return 0;
}

void fake_fail(ucoll_ctx_t *ctx, int rank)
{
    ucoll__tl_set_failed(ctx, rank, UCOLL_ERR_PEER);
}

int fake_rts(ucoll_ctx_t *ctx, unsigned which, int *rank_p, wire_rts_t *rts_p)
{
    fake_t *f = fake_of(ctx->tl);
    unsigned n = UCOLL_MIN(f->nrts, RTS_KEEP);

    if (n == 0) {
        return 0;
    }
    which = (f->nrts - 1 - which % n) % RTS_KEEP; /* 0: the latest */
    *rank_p = f->rts[which].rank;
    *rts_p = f->rts[which].rts;
    return 1;
}

void fake_stats(ucoll_ctx_t *ctx, fake_stats_t *st)
{
    *st = fake_of(ctx->tl)->st;
}

uint64_t fake_refused(ucoll_ctx_t *ctx, int why)
{
    return ucoll__p2p_refused(ctx, why);
}

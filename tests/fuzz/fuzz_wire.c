/*
 * libFuzzer target: the point-to-point engine's active-message handlers
 * (am_msg_cb, am_ctl_cb of lib/progress/p2p.c, through the wire decoders of
 * lib/transport/wire.c) fed random and mutated packets, mixed with the
 * engine's own traffic: receives and sends posted by "the application",
 * messages to this rank looped back, answers to its announcements, completed
 * and failed transport operations, and peers that die. The transport is the
 * fake of fake_tl.h; everything above it is the real code.
 *
 * What counts as a finding: any crash or sanitizer report; a packet the
 * engine sends that its own decoder refuses, or a rendezvous descriptor it
 * loses (both abort in the fake); a receive that completes with a status
 * that cannot be (more bytes than its buffer, a source outside the
 * communicator, a source or tag it did not ask for); memory left at the end.
 *
 * The input language is in fuzz_wire.h. Built by tests/fuzz/meson.build
 * with clang and -fsanitize=fuzzer; run with tests/fuzz/run_fuzz.sh.
 */
#include "tests/fuzz/fake_tl.h"
#include "tests/fuzz/fuzz_wire.h"
#include "progress/p2p.h"
#include "progress/request.h"
#include "transport/net.h"
#include "transport/ucx.h"
#include "transport/wire.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 64

typedef struct {
    const uint8_t *p;
    size_t n;
} input_t;

typedef struct {
    int used;
    int net; /* posted through the net ops (collective space) */
    int recv;
    ucoll_req_t *req; /* user requests */
    int done, err;    /* net requests: set by the callback */
    ucoll_comm_t *comm;
    int peer, tag;
    size_t size;
    void *buf;
} slot_t;

typedef struct {
    ucoll_ctx_t *ctx;
    ucoll_comm_t *comm[4];
    uint32_t next_seq[FZ_SIZE];
    slot_t slot[SLOTS];
} run_t;

static uint8_t u8(input_t *in)
{
    uint8_t v = 0;

    if (in->n) {
        v = *in->p++;
        in->n--;
    }
    return v;
}

static uint16_t u16(input_t *in)
{
    uint16_t lo = u8(in);

    return (uint16_t)(lo | (uint16_t)u8(in) << 8);
}

/* Up to n bytes of the input (fewer when it ends): *len_p is how many. */
static const uint8_t *take(input_t *in, size_t n, size_t *len_p)
{
    const uint8_t *p = in->p;

    n = n < in->n ? n : in->n;
    in->p += n;
    in->n -= n;
    *len_p = n;
    return p;
}

static void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_wire: %s\n", what);
        abort();
    }
}

static ucoll_comm_t *pick_comm(run_t *r, unsigned i)
{
    ucoll_comm_t *comm = r->comm[i % 3];

    return comm ? comm : r->comm[0];
}

static slot_t *slot_new(run_t *r)
{
    int i;

    for (i = 0; i < SLOTS; i++) {
        if (!r->slot[i].used) {
            memset(&r->slot[i], 0, sizeof(r->slot[i]));
            r->slot[i].used = 1;
            return &r->slot[i];
        }
    }
    return NULL;
}

static void net_cb(void *arg, int status)
{
    slot_t *s = arg;

    s->done = 1;
    s->err = status;
}

/* A completed user receive says what it may. */
static void check_status(const slot_t *s, const ucoll_status_t *st, int err)
{
    if (!s->recv) {
        return;
    }
    if (err == UCOLL_OK) {
        check(st->bytes <= s->size, "a receive got more bytes than its buffer holds");
    } else if (err == UCOLL_ERR_TRUNCATE) {
        check(st->bytes > s->size, "a truncated receive says it fitted");
    }
    if (err == UCOLL_OK || err == UCOLL_ERR_TRUNCATE) {
        check(st->source >= 0 && st->source < s->comm->size, "a source outside the communicator");
        check(s->peer == UCOLL_ANY_SOURCE || st->source == s->peer, "a source not asked for");
        check(st->tag >= 0 && st->tag <= UCOLL_TAG_UB, "a tag outside the user's range");
        check(s->tag == UCOLL_ANY_TAG || st->tag == s->tag, "a tag not asked for");
    }
}

static void reap(run_t *r)
{
    ucoll_status_t st;
    int i, err;

    for (i = 0; i < SLOTS; i++) {
        slot_t *s = &r->slot[i];

        if (!s->used) {
            continue;
        }
        if (s->net ? s->done : s->req->complete) {
            if (!s->net) {
                err = ucoll__req_finish(s->req, &st);
                check_status(s, &st, err);
            }
            free(s->buf);
            s->used = 0;
        }
    }
}

static void op_post(run_t *r, input_t *in, int send)
{
    uint8_t flags = u8(in), peer = u8(in), tag = u8(in);
    size_t size = u16(in) % FZ_MAX_SIZE;
    ucoll_comm_t *comm = pick_comm(r, (flags >> 1) & 3);
    slot_t *s;

    s = slot_new(r);
    if (s == NULL) {
        return;
    }
    s->comm = comm;
    s->recv = !send;
    s->size = size;
    s->buf = malloc(size); /* exactly: a write past it shows */
    if (s->buf == NULL && size) {
        s->used = 0;
        return;
    }
    if (send && size) {
        memset(s->buf, 0x3c, size);
    }
    if (flags & 1) {
        /* the collective executor's way: specific peer, any tag value */
        s->net = 1;
        s->peer = peer % comm->size;
        s->tag = (int)(int8_t)tag;
        if (send) {
            (void)ucoll__net_ucx.isend(comm, s->buf, size, s->peer, s->tag, net_cb, s);
        } else {
            (void)ucoll__net_ucx.irecv(comm, s->buf, size, s->peer, s->tag, net_cb, s);
        }
        return;
    }
    s->peer = peer == 0xff && !send ? UCOLL_ANY_SOURCE : peer % comm->size;
    s->tag = tag == 0xff && !send ? UCOLL_ANY_TAG : tag;
    if (send && (flags & 16) && ucoll__p2p_send_now(comm, s->buf, size, s->peer, s->tag)) {
        free(s->buf);
        s->used = 0;
        return;
    }
    s->req =
        ucoll__p2p_req(comm, send ? UCOLL_REQ_SEND : UCOLL_REQ_RECV, s->buf, size, s->peer, s->tag);
    if (s->req == NULL) {
        free(s->buf);
        s->used = 0;
        return;
    }
    ucoll__p2p_start(s->req);
}

static void op_raw(run_t *r, input_t *in, int am_id)
{
    uint8_t flags = u8(in);
    size_t hlen = u8(in), dlen = am_id == UCOLL_AM_MSG ? u16(in) : u8(in), hn, dn;
    const uint8_t *h = take(in, hlen, &hn), *d = take(in, dlen, &dn);

    fake_deliver(r->ctx, am_id, h, hn, d, dn, flags & 1);
}

static void op_hdr(run_t *r, input_t *in)
{
    static const uint32_t ids[4] = {0, 1, 2, 7};
    uint8_t proto = u8(in), c = u8(in), src = u8(in), tag = u8(in);
    int8_t delta = (int8_t)u8(in);
    uint16_t len = u16(in) % FZ_MAX_SIZE;
    uint8_t credits = u8(in), cookie = u8(in);
    ucoll_comm_t *comm = r->comm[c & 3] && (c & 3) < 3 ? r->comm[c & 3] : NULL;
    uint8_t buf[sizeof(wire_rts_t) + 1];
    wire_rts_t *rts = (wire_rts_t *)buf;
    size_t hlen = sizeof(wire_hdr_t);
    uint8_t *data;
    int world, rndv = 0;

    memset(buf, 0, sizeof(buf));
    rts->h.proto = proto & 3;
    rts->h.ctx_id = ids[c & 3] * 2 + ((c >> 2) & 1);
    rts->h.src = comm ? src % comm->size : src % FZ_SIZE;
    world = comm ? ucoll__comm_world_rank(comm, rts->h.src) : src % FZ_SIZE;
    if (proto & 8) {
        world = (world + 1) % FZ_SIZE;
    }
    rts->h.src_world = (uint32_t)world;
    rts->h.tag = tag;
    rts->h.seq = r->next_seq[world] + (uint32_t)(int32_t)delta;
    if (delta == 0) {
        r->next_seq[world]++;
    }
    rts->h.credits = (uint32_t)credits * 16;
    rts->h.len = len;
    switch (rts->h.proto) {
    case UCOLL_PROTO_RNDV_AM: rndv = 1; break;
    case UCOLL_PROTO_RNDV_TAG:
        hlen = sizeof(wire_rts_t);
        rts->cookie = (uint64_t)cookie + 1;
        break;
    case UCOLL_PROTO_RNDV_GET:
        hlen = sizeof(wire_rts_t) + 1;
        rts->h.rkey_len = 1;
        rts->cookie = (uint64_t)cookie + 1;
        rts->raddr = 0x1000;
        buf[sizeof(wire_rts_t)] = cookie & 1 ? 0xa5 : 0; /* a key that unpacks, or not */
        break;
    default: break;
    }
    if (rts->h.proto == UCOLL_PROTO_RNDV_TAG || rts->h.proto == UCOLL_PROTO_RNDV_GET) {
        fake_deliver(r->ctx, UCOLL_AM_MSG, buf, hlen, NULL, 0, 0);
        return;
    }
    data = malloc(sizeof(wire_hdr_t) + len);
    if (data == NULL) {
        return;
    }
    memset(data + sizeof(wire_hdr_t), 0x77, len);
    if ((proto & 4) && !rndv) {
        memcpy(data, &rts->h, sizeof(wire_hdr_t)); /* packed */
        fake_deliver(r->ctx, UCOLL_AM_MSG, NULL, 0, data, sizeof(wire_hdr_t) + len, 0);
    } else {
        fake_deliver(r->ctx, UCOLL_AM_MSG, &rts->h, hlen, data + sizeof(wire_hdr_t), len, rndv);
    }
    free(data);
}

static void op_answer(run_t *r, input_t *in)
{
    uint8_t which = u8(in), type = u8(in), status = u8(in), at = u8(in), mask = u8(in);
    wire_rts_t rts;
    wire_ctl_t ctl;
    int rank;

    if (!fake_rts(r->ctx, which, &rank, &rts)) {
        return;
    }
    memset(&ctl, 0, sizeof(ctl));
    ctl.type = type % 4;
    ctl.src_world = (uint32_t)rank;
    if (ctl.type == UCOLL_CTL_DOWN) {
        /* a failure report: about this rank or another, seldom (it
         * ends every later operation with the rank named) */
        if ((status & 7) != 0) {
            return;
        }
        ctl.seq = (uint32_t)(at % r->ctx->size);
        if (ctl.seq == ctl.src_world) {
            return;
        }
    } else if (ctl.type != UCOLL_CTL_CREDIT) {
        ctl.seq = rts.h.seq;
        ctl.cookie = rts.cookie;
        /* every status a CTS/FIN may carry: taken, too small, failed */
        static const int32_t statuses[4] = {UCOLL_OK, UCOLL_ERR_TRUNCATE, UCOLL_ERR_NOMEM,
                                            UCOLL_ERR_TRANSPORT};
        ctl.status = statuses[status & 3];
    }
    ((uint8_t *)&ctl)[at % sizeof(ctl)] ^= mask;
    fake_deliver(r->ctx, UCOLL_AM_CTL, &ctl, sizeof(ctl), NULL, 0, 0);
}

static void op_comm(run_t *r, input_t *in)
{
    uint8_t order = u8(in);
    int me = r->ctx->rank, ranks[3], i, t;

    if (r->comm[2]) {
        return;
    }
    ranks[0] = me;
    ranks[1] = (me + 1) % FZ_SIZE;
    ranks[2] = (me + 3) % FZ_SIZE;
    for (i = 2; i > 0; i--) {
        int j = order % (i + 1);
        order /= 3;
        t = ranks[i];
        ranks[i] = ranks[j];
        ranks[j] = t;
    }
    r->comm[2] = fake_comm_add(r->ctx, 2, 3, ranks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t eager_limit[2] = {4096, 256}, credits[2] = {262144, 1024};
    input_t in = {data, size};
    fake_cfg_t cfg;
    uint8_t c = u8(&in);
    int reverse[FZ_SIZE], i, steps = 0;
    run_t *r = calloc(1, sizeof(*r));

    if (r == NULL) {
        return 0;
    }
    cfg.rndv_mode = c & 3;
    cfg.eager_limit = eager_limit[(c >> 2) & 1];
    cfg.eager_credits = credits[(c >> 3) & 1];
    cfg.async = (c >> 4) & 1; /* bit 5 unused */
    cfg.rank = c >> 6;
    cfg.size = FZ_SIZE;
    cfg.log_level = -1;
    cfg.stats = 0;
    r->ctx = fake_ctx_create(&cfg);
    if (r->ctx == NULL) {
        free(r);
        return 0;
    }
    for (i = 0; i < FZ_SIZE; i++) {
        reverse[i] = FZ_SIZE - 1 - i;
    }
    r->comm[0] = r->ctx->world;
    r->comm[1] = fake_comm_add(r->ctx, 1, FZ_SIZE, reverse);

    while (in.n && steps++ < 4096) {
        switch (u8(&in) % FZ_NOPS) {
        case FZ_MSG: op_raw(r, &in, UCOLL_AM_MSG); break;
        case FZ_CTL: op_raw(r, &in, UCOLL_AM_CTL); break;
        case FZ_HDR: op_hdr(r, &in); break;
        case FZ_RECV: op_post(r, &in, 0); break;
        case FZ_SEND: op_post(r, &in, 1); break;
        case FZ_ANSWER: op_answer(r, &in); break;
        case FZ_PROGRESS: fake_progress(r->ctx); break;
        case FZ_COMPLETE: {
            uint8_t which = u8(&in), st = u8(&in);
            fake_complete(r->ctx, which, st & 1 ? UCOLL_ERR_TRANSPORT : UCOLL_OK);
            break;
        }
        case FZ_FAIL: fake_fail(r->ctx, u8(&in) % FZ_SIZE); break;
        case FZ_COMM: op_comm(r, &in); break;
        case FZ_REAP: reap(r); break;
        }
    }
    /* let what can finish finish, then check it */
    for (i = 0; i < 4 && fake_progress(r->ctx); i++) {
    }
    reap(r);
    fake_ctx_destroy(r->ctx);
    for (i = 0; i < SLOTS; i++) {
        if (r->slot[i].used) {
            free(r->slot[i].buf);
        }
    }
    free(r);
    return 0;
}

/*
 * Unit test of what the point-to-point engine's active-message handlers
 * (lib/progress/p2p.c) check against their own state, on crafted packets
 * delivered through the fake transport of tests/fuzz/fake_tl.h: credits
 * returned beyond what was lent, sequence numbers already delivered or
 * queued, a sender that is not the member of the communicator it names
 * (known at arrival, or created later), and CTS/FIN cookies that name no
 * waiting send. Each refused packet must change nothing (the receive it
 * could match stays posted) and be counted under its reason; the warning
 * about it is rate-limited.
 */
#include "tests/fuzz/fake_tl.h"
#include "progress/p2p.h"
#include "progress/request.h"
#include "transport/ucx.h"
#include "transport/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/expect.h"

#define SIZE 4

static ucoll_ctx_t *setup(int rank, size_t eager_limit, int log_level, int stats)
{
    fake_cfg_t cfg;
    ucoll_ctx_t *ctx;

    memset(&cfg, 0, sizeof(cfg));
    cfg.rank = rank;
    cfg.size = SIZE;
    cfg.eager_limit = eager_limit;
    cfg.eager_credits = 1024;
    cfg.rndv_mode = UCOLL_RNDV_TAG;
    cfg.log_level = log_level;
    cfg.stats = stats;
    ctx = fake_ctx_create(&cfg);
    if (ctx == NULL) {
        fprintf(stderr, "cannot create the context\n");
        exit(1);
    }
    return ctx;
}

/* An eager message as a peer sends it, delivered with its header as the AM
 * header; returns what the handler returned. */
static int eager(ucoll_ctx_t *ctx, uint32_t comm_id, int src, uint32_t src_world, int tag,
                 uint32_t seq, uint32_t credits, size_t len)
{
    char data[256];
    wire_hdr_t h;

    memset(&h, 0, sizeof(h));
    memset(data, 0x42, sizeof(data));
    h.ctx_id = comm_id * 2 + UCOLL_SPACE_P2P;
    h.src = src;
    h.tag = tag;
    h.seq = seq;
    h.src_world = src_world;
    h.proto = UCOLL_PROTO_EAGER;
    h.credits = credits;
    h.len = len;
    return fake_deliver(ctx, UCOLL_AM_MSG, &h, sizeof(h), data, len, 0);
}

static ucoll_req_t *post(ucoll_comm_t *comm, void *buf, size_t size, int src, int tag)
{
    ucoll_req_t *req = ucoll__p2p_req(comm, UCOLL_REQ_RECV, buf, size, src, tag);

    if (req == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    ucoll__p2p_start(req);
    return req;
}

static void finish(ucoll_req_t *req, int expect_err, int expect_src, size_t expect_bytes)
{
    ucoll_status_t st;

    EXPECT(req->complete);
    if (req->complete) {
        EXPECT(ucoll__req_finish(req, &st) == expect_err);
        EXPECT(st.source == expect_src);
        EXPECT(st.bytes == expect_bytes);
    }
}

/* Credits: a peer may hand back only what it was lent. */
static void test_credits(void)
{
    ucoll_ctx_t *ctx = setup(0, 4096, -1, 0);
    char buf[64], out[100];
    ucoll_req_t *req, *send;

    /* nothing lent to rank 1 yet: any credit back is a lie */
    req = post(ctx->world, buf, sizeof(buf), 1, 7);
    eager(ctx, 0, 1, 1, 7, 0, 16, 8);
    EXPECT(!req->complete);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ECREDITS) == 1);

    /* lend 140 bytes (100 + header) by sending to it */
    memset(out, 1, sizeof(out));
    send = ucoll__p2p_req(ctx->world, UCOLL_REQ_SEND, out, sizeof(out), 1, 3);
    ucoll__p2p_start(send);
    EXPECT(send->complete);
    ucoll__req_finish(send, NULL);

    /* more than that back: refused; exactly that: taken */
    eager(ctx, 0, 1, 1, 7, 0, 141, 8);
    EXPECT(!req->complete);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ECREDITS) == 2);
    eager(ctx, 0, 1, 1, 7, 0, 140, 8);
    finish(req, UCOLL_OK, 1, 8);

    /* a CREDIT control message is held to the same bound */
    {
        wire_ctl_t c;

        memset(&c, 0, sizeof(c));
        c.type = UCOLL_CTL_CREDIT;
        c.src_world = 1;
        c.credits = 1;
        fake_deliver(ctx, UCOLL_AM_CTL, &c, sizeof(c), NULL, 0, 0);
        EXPECT(fake_refused(ctx, UCOLL_WIRE_ECREDITS) == 3);
    }
    EXPECT(fake_refused(ctx, 0) == 3);
    fake_ctx_destroy(ctx);

    /* a message that claims to come from this very rank gives back to its
     * own window no more than the window */
    ctx = setup(0, 4096, -1, 0);
    {
        static char big[1024 - sizeof(wire_hdr_t) + 8];
        fake_stats_t st;

        req = post(ctx->world, buf, sizeof(buf), 0, 7);
        eager(ctx, 0, 0, 0, 7, 0, 0, 8);
        finish(req, UCOLL_OK, 0, 8);
        send = ucoll__p2p_req(ctx->world, UCOLL_REQ_SEND, big, sizeof(big), 0, 3);
        ucoll__p2p_start(send);
        fake_stats(ctx, &st);
        EXPECT(st.rts == 1); /* past the window: announced, not eager */
        fake_ctx_destroy(ctx);
    }
}

/* Sequence numbers: one already delivered, or one already waiting. */
static void test_seq(void)
{
    ucoll_ctx_t *ctx = setup(0, 4096, -1, 0);
    char buf[64];
    ucoll_req_t *a, *b, *c;

    a = post(ctx->world, buf, sizeof(buf), 2, 1);
    eager(ctx, 0, 2, 2, 1, 0, 0, 4);
    finish(a, UCOLL_OK, 2, 4);

    /* seq 0 again: behind the next expected (1) */
    b = post(ctx->world, buf, sizeof(buf), 2, 1);
    eager(ctx, 0, 2, 2, 1, 0, 0, 5);
    EXPECT(!b->complete);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ESEQ) == 1);
    eager(ctx, 0, 2, 2, 1, (uint32_t)-5, 0, 5);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ESEQ) == 2);

    /* seq 2 early, twice: the second is a duplicate */
    eager(ctx, 0, 2, 2, 1, 2, 0, 6);
    eager(ctx, 0, 2, 2, 1, 2, 0, 7);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ESEQ) == 3);
    EXPECT(!b->complete);
    /* seq 1 fills the gap: 1 then 2, and nothing after them */
    eager(ctx, 0, 2, 2, 1, 1, 0, 5);
    finish(b, UCOLL_OK, 2, 5);
    c = post(ctx->world, buf, sizeof(buf), 2, 1);
    finish(c, UCOLL_OK, 2, 6);
    c = post(ctx->world, buf, sizeof(buf), 2, 1);
    EXPECT(!c->complete);
    fake_ctx_destroy(ctx); /* frees the posted receive */
}

/* The sender must be who it says in the communicator of the receive that
 * would take its message. */
static void test_comm(void)
{
    ucoll_ctx_t *ctx = setup(0, 4096, -1, 0);
    static const int reverse[SIZE] = {3, 2, 1, 0}, pair[2] = {0, 2};
    ucoll_comm_t *rev = fake_comm_add(ctx, 1, SIZE, reverse), *two;
    char buf[64];
    ucoll_req_t *req, *spec;

    /* world: rank 1 is job rank 1, not 2; the receives stay posted */
    req = post(ctx->world, buf, sizeof(buf), UCOLL_ANY_SOURCE, 5);
    eager(ctx, 0, 1, 2, 5, 0, 0, 3);
    EXPECT(!req->complete);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ECOMM) == 1);
    spec = post(ctx->world, buf, sizeof(buf), 1, 6);
    eager(ctx, 0, 1, 2, 6, 1, 0, 3); /* the eager fast path, then queued */
    EXPECT(!spec->complete);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ECOMM) == 2);
    eager(ctx, 0, 2, 2, 5, 2, 0, 3);
    finish(req, UCOLL_OK, 2, 3);
    eager(ctx, 0, 1, 1, 6, 0, 0, 4);
    finish(spec, UCOLL_OK, 1, 4);

    /* the reversed world: rank 1 is job rank 2 */
    req = post(rev, buf, sizeof(buf), UCOLL_ANY_SOURCE, 5);
    eager(ctx, 1, 1, 1, 5, 1, 0, 3);
    EXPECT(!req->complete);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ECOMM) == 3);
    eager(ctx, 1, 1, 2, 5, 3, 0, 3);
    finish(req, UCOLL_OK, 1, 3);

    /* unexpected first, then taken by a receive: the same check */
    eager(ctx, 1, 0, 0, 8, 0, 0, 2); /* rank 0 of the reversed world is job rank 3 */
    req = post(rev, buf, sizeof(buf), UCOLL_ANY_SOURCE, 8);
    EXPECT(!req->complete);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ECOMM) == 4);
    eager(ctx, 1, 0, 3, 8, 0, 0, 2);
    finish(req, UCOLL_OK, 0, 2);

    /* a communicator this process creates only after its messages came:
     * rank 1 of {0, 2} is job rank 2 */
    EXPECT(eager(ctx, 2, 1, 3, 9, 1, 0, 4) == 0); /* claims job rank 3 */
    EXPECT(eager(ctx, 2, 1, 2, 9, 4, 0, 5) == 0);
    EXPECT(fake_refused(ctx, 0) == 4);
    two = fake_comm_add(ctx, 2, 2, pair);
    req = post(two, buf, sizeof(buf), UCOLL_ANY_SOURCE, 9);
    finish(req, UCOLL_OK, 1, 5); /* the first one was dropped */
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ECOMM) == 5);
    req = post(two, buf, sizeof(buf), UCOLL_ANY_SOURCE, 9);
    EXPECT(!req->complete);
    fake_ctx_destroy(ctx);

    /* early (out of order) for a communicator not created yet, delivered
     * once it exists and a receive waits (found by the fuzzer: a check at
     * arrival only let this through) */
    ctx = setup(0, 4096, -1, 0);
    EXPECT(eager(ctx, 2, 1, 3, 9, 1, 0, 4) == 0); /* seq 1 of job rank 3: waits for 0 */
    two = fake_comm_add(ctx, 2, 2, pair);
    req = post(two, buf, sizeof(buf), UCOLL_ANY_SOURCE, 9);
    eager(ctx, 0, 3, 3, 1, 0, 0, 4); /* seq 0 on the world: both delivered */
    EXPECT(!req->complete);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ECOMM) == 1);
    fake_ctx_destroy(ctx);
}

static void ctl_to(ucoll_ctx_t *ctx, int type, uint32_t src_world, uint32_t seq, uint64_t cookie,
                   int status)
{
    wire_ctl_t c;

    memset(&c, 0, sizeof(c));
    c.type = (uint32_t)type;
    c.src_world = src_world;
    c.seq = seq;
    c.cookie = cookie;
    c.status = status;
    fake_deliver(ctx, UCOLL_AM_CTL, &c, sizeof(c), NULL, 0, 0);
}

/* CTS/FIN cookies are handles looked up in a table, never pointers. */
static void test_handles(void)
{
    ucoll_ctx_t *ctx = setup(0, 256, -1, 0);
    static char big[1000];
    fake_stats_t st;
    wire_rts_t rts;
    ucoll_req_t *send;
    int rank;

    send = ucoll__p2p_req(ctx->world, UCOLL_REQ_SEND, big, sizeof(big), 1, 4);
    ucoll__p2p_start(send);
    EXPECT(!send->complete);
    EXPECT(fake_rts(ctx, 0, &rank, &rts) && rank == 1);
    EXPECT(rts.cookie != 0 && rts.cookie != (uint64_t)(uintptr_t)send);

    /* forged: the request's address, a slot never used, the next
     * generation, another peer, another message, the wrong answer */
    ctl_to(ctx, UCOLL_CTL_CTS, 1, rts.h.seq, (uint64_t)(uintptr_t)send, UCOLL_OK);
    ctl_to(ctx, UCOLL_CTL_CTS, 1, rts.h.seq, 0xdeadbeefdeadbeefull, UCOLL_OK);
    ctl_to(ctx, UCOLL_CTL_CTS, 1, rts.h.seq, rts.cookie + 1, UCOLL_OK);
    ctl_to(ctx, UCOLL_CTL_CTS, 1, rts.h.seq, rts.cookie + (1ull << 32), UCOLL_OK);
    ctl_to(ctx, UCOLL_CTL_CTS, 2, rts.h.seq, rts.cookie, UCOLL_OK);
    ctl_to(ctx, UCOLL_CTL_CTS, 1, rts.h.seq + 1, rts.cookie, UCOLL_OK);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_EHANDLE) == 6);
    ctl_to(ctx, UCOLL_CTL_FIN, 1, rts.h.seq, rts.cookie, UCOLL_OK);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_EPROTO) == 1);
    fake_stats(ctx, &st);
    EXPECT(st.tag_sends == 0 && !send->complete);

    /* the real answer starts the transfer, once */
    ctl_to(ctx, UCOLL_CTL_CTS, 1, rts.h.seq, rts.cookie, UCOLL_OK);
    fake_stats(ctx, &st);
    EXPECT(st.tag_sends == 1);
    ctl_to(ctx, UCOLL_CTL_CTS, 1, rts.h.seq, rts.cookie, UCOLL_OK); /* late: ignored */
    fake_stats(ctx, &st);
    EXPECT(st.tag_sends == 1);
    EXPECT(fake_refused(ctx, 0) == 7);
    EXPECT(fake_complete(ctx, 0, UCOLL_OK) == 1);
    fake_progress(ctx);
    EXPECT(send->complete);
    ucoll__req_finish(send, NULL);
    fake_ctx_destroy(ctx);
}

/*
 * A get rendezvous that fails at the receiver tells the sender, with a FIN
 * carrying the status: the sender stops waiting (its buffer pinned) and
 * fails with it. Here the rkey does not unpack (the get, failing later,
 * takes the same path through the FIN).
 */
static void test_get_fail(void)
{
    ucoll_ctx_t *ctx = setup(0, 256, -1, 0);
    ucoll_req_t *recv, *send;
    static char buf[1000], big[1000];
    unsigned char rkey = 0; /* not the fake's magic: does not unpack */
    uint8_t pkt[sizeof(wire_rts_t) + 1];
    wire_rts_t rts;
    wire_ctl_t ctl;
    int rank;

    /* receiver: an announcement from rank 1 with a key that is no key */
    memset(&rts, 0, sizeof(rts));
    rts.h.ctx_id = 0 * 2 + UCOLL_SPACE_P2P;
    rts.h.src = 1;
    rts.h.tag = 6;
    rts.h.seq = 0;
    rts.h.src_world = 1;
    rts.h.proto = UCOLL_PROTO_RNDV_GET;
    rts.h.rkey_len = 1;
    rts.h.len = sizeof(buf);
    rts.cookie = 77;
    rts.raddr = 4096;
    memcpy(pkt, &rts, sizeof(rts));
    pkt[sizeof(rts)] = rkey;
    recv = post(ctx->world, buf, sizeof(buf), 1, 6);
    fake_deliver(ctx, UCOLL_AM_MSG, pkt, sizeof(pkt), NULL, 0, 0);
    fake_progress(ctx);
    EXPECT(recv->complete && recv->status.error == UCOLL_ERR_TRANSPORT);
    EXPECT(fake_last_ctl(ctx, &rank, &ctl) && rank == 1);
    EXPECT(ctl.type == UCOLL_CTL_FIN && ctl.cookie == 77 && ctl.seq == 0 &&
           ctl.status == UCOLL_ERR_TRANSPORT);
    if (recv->complete) {
        ucoll__req_finish(recv, NULL);
    }

    /* sender: such a FIN ends its send with the receiver's error */
    send = ucoll__p2p_req(ctx->world, UCOLL_REQ_SEND, big, sizeof(big), 2, 4);
    ucoll__p2p_start(send);
    EXPECT(fake_rts(ctx, 0, &rank, &rts) && rank == 2);
    EXPECT(!send->complete);
    ctl_to(ctx, UCOLL_CTL_CTS, 2, rts.h.seq, rts.cookie, UCOLL_ERR_TRANSPORT);
    EXPECT(fake_refused(ctx, 0) == 0);
    EXPECT(send->complete && send->status.error == UCOLL_ERR_TRANSPORT);
    if (send->complete) {
        ucoll__req_finish(send, NULL);
    }
    fake_ctx_destroy(ctx);
}

/* A refused rendezvous descriptor is not kept; a good one is. */
static void test_descriptor(void)
{
    ucoll_ctx_t *ctx = setup(0, 256, -1, 0);
    static char big[1000];
    fake_stats_t st;
    wire_hdr_t h;

    memset(&h, 0, sizeof(h));
    h.src = h.src_world = 3;
    h.proto = UCOLL_PROTO_RNDV_AM;
    h.len = sizeof(big) + 1; /* more than UCX announces */
    EXPECT(fake_deliver(ctx, UCOLL_AM_MSG, &h, sizeof(h), big, sizeof(big), 1) == 0);
    EXPECT(fake_refused(ctx, UCOLL_WIRE_ELEN) == 1);
    h.len = sizeof(big);
    EXPECT(fake_deliver(ctx, UCOLL_AM_MSG, &h, sizeof(h), big, sizeof(big), 1) == 1);
    fake_stats(ctx, &st);
    EXPECT(st.descs == 1);
    fake_ctx_destroy(ctx); /* aborts if it were lost */
}

/* Run fn with stderr in a file; return how many lines contain needle. */
static int count_stderr(void (*fn)(void), const char *needle)
{
    char path[] = "/tmp/test_p2p_input.XXXXXX", line[1024];
    int fd = mkstemp(path), saved, n = 0;
    FILE *f;

    fflush(stderr);
    saved = dup(2);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    f = fdopen(fd, "r");
    rewind(f);
    while (fgets(line, sizeof(line), f)) {
        n += strstr(line, needle) != NULL;
    }
    fclose(f);
    unlink(path);
    return n;
}

static void refuse_ten(void)
{
    ucoll_ctx_t *ctx = setup(0, 4096, UCOLL_LOG_WARN, 1);
    int i;

    for (i = 0; i < 10; i++) {
        eager(ctx, 0, 1, 1, -1, 0, 0, 1); /* a negative point-to-point tag */
    }
    fake_ctx_destroy(ctx);
}

/* Warned on the 1st, 2nd, 4th and 8th of 10; all counted in the stats. */
static void test_warnings(void)
{
    EXPECT(count_stderr(refuse_ten, "dropped a malformed message packet (tag out of range)") == 4);
    EXPECT(count_stderr(refuse_ten, "malformed packets dropped 10 (tag out of range 10)") == 1);
}

int main(void)
{
    test_credits();
    test_seq();
    test_comm();
    test_handles();
    test_get_fail();
    test_descriptor();
    test_warnings();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("p2p input: all checks passed\n");
    return 0;
}

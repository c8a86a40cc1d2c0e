/*
 * Seed corpus of fuzz_wire: a few dozen inputs (fuzz_wire.h) in which every
 * protocol runs to completion at least once: eager (with a header and
 * packed), AM, tagged and get rendezvous, in both directions and to this
 * rank itself, in the point-to-point and collective spaces, out of order,
 * through a communicator created late, with a peer failing, plus raw valid
 * packets for the byte-level mutations to start from.
 *
 * Usage: fuzz_seeds DIR (writes DIR/seed-NNN, DIR must exist).
 */
#include "tests/fuzz/fuzz_wire.h"
#include "core.h"
#include "transport/wire.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    uint8_t b[4096];
    size_t n;
} seed_t;

static const char *dir;
static int nseeds;

static void put(seed_t *s, const void *p, size_t n)
{
    if (s->n + n <= sizeof(s->b)) {
        memcpy(s->b + s->n, p, n);
        s->n += n;
    }
}

static void b1(seed_t *s, unsigned v)
{
    uint8_t x = (uint8_t)v;

    put(s, &x, 1);
}

static void b2(seed_t *s, unsigned v)
{
    b1(s, v & 0xff);
    b1(s, v >> 8);
}

static void start(seed_t *s, unsigned cfg)
{
    s->n = 0;
    b1(s, cfg);
}

static void save(const seed_t *s)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/seed-%03d", dir, nseeds++);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(s->b, 1, s->n, f) != s->n || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

/* configuration byte: rndv mode, small eager limit, small window, async, net, rank */
static unsigned cfg(int rndv, int small_eager, int small_credits, int async, int net, int rank)
{
    return (unsigned)(rndv | small_eager << 2 | small_credits << 3 | async << 4 | net << 5 |
                      rank << 6);
}

static void recv_(seed_t *s, unsigned flags, unsigned src, unsigned tag, unsigned size)
{
    b1(s, FZ_RECV);
    b1(s, flags);
    b1(s, src);
    b1(s, tag);
    b2(s, size);
}

static void send_(seed_t *s, unsigned flags, unsigned dst, unsigned tag, unsigned size)
{
    b1(s, FZ_SEND);
    b1(s, flags);
    b1(s, dst);
    b1(s, tag);
    b2(s, size);
}

static void hdr(seed_t *s, unsigned proto, unsigned comm, unsigned src, unsigned tag, int delta,
                unsigned len, unsigned credits, unsigned cookie)
{
    b1(s, FZ_HDR);
    b1(s, proto);
    b1(s, comm);
    b1(s, src);
    b1(s, tag);
    b1(s, (unsigned)(uint8_t)(int8_t)delta);
    b2(s, len);
    b1(s, credits);
    b1(s, cookie);
}

static void op(seed_t *s, unsigned code)
{
    b1(s, code);
}

static void op2(seed_t *s, unsigned code, unsigned a, unsigned b)
{
    b1(s, code);
    b1(s, a);
    b1(s, b);
}

static void answer(seed_t *s, unsigned which, unsigned type, unsigned status)
{
    b1(s, FZ_ANSWER);
    b1(s, which);
    b1(s, type);
    b1(s, status);
    b1(s, 0);
    b1(s, 0);
}

/* A raw MSG whose header says what it is (a valid packet from rank src). */
static void raw_msg(seed_t *s, int packed, unsigned proto, unsigned src, unsigned tag, unsigned seq,
                    unsigned len)
{
    uint8_t pkt[sizeof(wire_rts_t) + 8];
    wire_rts_t rts;
    size_t hlen = proto >= UCOLL_PROTO_RNDV_TAG ? sizeof(wire_rts_t) : sizeof(wire_hdr_t);
    unsigned i;

    memset(&rts, 0, sizeof(rts));
    rts.h.ctx_id = 0;
    rts.h.src = (int32_t)src;
    rts.h.tag = (int32_t)tag;
    rts.h.seq = seq;
    rts.h.src_world = src;
    rts.h.proto = (uint16_t)proto;
    rts.h.len = len;
    if (proto >= UCOLL_PROTO_RNDV_TAG) {
        rts.cookie = 1;
    }
    if (proto == UCOLL_PROTO_RNDV_GET) {
        rts.h.rkey_len = 1;
        rts.raddr = 0x1000;
        hlen += 1;
    }
    memcpy(pkt, &rts, sizeof(rts));
    pkt[sizeof(wire_rts_t)] = 0xa5;
    b1(s, FZ_MSG);
    b1(s, proto == UCOLL_PROTO_RNDV_AM);
    if (packed) {
        b1(s, 0);
        b2(s, (unsigned)(hlen + len));
        put(s, pkt, hlen);
    } else {
        b1(s, (unsigned)hlen);
        b2(s, proto >= UCOLL_PROTO_RNDV_TAG ? 0 : len);
        put(s, pkt, hlen);
    }
    for (i = 0; i < len && proto < UCOLL_PROTO_RNDV_TAG; i++) {
        b1(s, i);
    }
}

/* A control message from rank src; seq: DOWN's failed rank, else 0. */
static void raw_ctl(seed_t *s, unsigned type, unsigned src, unsigned credits, uint64_t cookie,
                    unsigned seq)
{
    wire_ctl_t ctl;

    memset(&ctl, 0, sizeof(ctl));
    ctl.type = type;
    ctl.src_world = src;
    ctl.credits = credits;
    ctl.cookie = cookie;
    ctl.seq = seq;
    b1(s, FZ_CTL);
    b1(s, 0);
    b1(s, sizeof(ctl));
    b1(s, 0);
    put(s, &ctl, sizeof(ctl));
}

int main(int argc, char **argv)
{
    seed_t s;
    int mode, rank, async;

    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];

    for (async = 0; async < 2; async++) {
        /* eager from rank 1, expected and unexpected, header and packed */
        start(&s, cfg(0, 0, 0, async, 0, 0));
        recv_(&s, 0, 1, 5, 100);
        hdr(&s, UCOLL_PROTO_EAGER, 0, 1, 5, 0, 100, 0, 0);
        hdr(&s, UCOLL_PROTO_EAGER | 4, 0, 1, 6, 0, 20, 0, 0);
        recv_(&s, 0, 0xff, 0xff, 20);
        op(&s, FZ_REAP);
        save(&s);

        /* out of order, then the gap fills */
        start(&s, cfg(0, 0, 0, async, 0, 2));
        hdr(&s, UCOLL_PROTO_EAGER, 0, 3, 1, 1, 8, 0, 0);
        hdr(&s, UCOLL_PROTO_EAGER, 0, 3, 1, 0, 8, 0, 0);
        recv_(&s, 0, 3, 1, 8);
        recv_(&s, 0, 3, 1, 8);
        op(&s, FZ_REAP);
        save(&s);

        /* every rendezvous from another rank, each receive posted first
         * and last, then completed */
        for (mode = UCOLL_PROTO_RNDV_AM; mode <= UCOLL_PROTO_RNDV_GET; mode++) {
            start(&s, cfg(0, 1, 0, async, 0, 1));
            recv_(&s, 0, 2, 9, 5000);
            hdr(&s, (unsigned)mode, 0, 2, 9, 0, 4000, 1, 1);
            hdr(&s, (unsigned)mode, 0, 2, 9, 0, 6000, 0, 3);
            op(&s, FZ_PROGRESS);
            recv_(&s, 0, 2, 9, 5000); /* truncated */
            op(&s, FZ_PROGRESS);
            op2(&s, FZ_COMPLETE, 0, 0);
            op2(&s, FZ_COMPLETE, 0, 0);
            op(&s, FZ_PROGRESS);
            op(&s, FZ_REAP);
            save(&s);
        }

        /* sends to another rank in every rendezvous mode, answered */
        for (mode = 0; mode < 4; mode++) {
            start(&s, cfg(mode, 1, 0, async, mode == 0, 0));
            send_(&s, 0, 1, 4, 3000);
            send_(&s, 0, 2, 4, 100);
            send_(&s, 16, 3, 4, 10);
            answer(&s, 0, UCOLL_CTL_CTS, 0);
            answer(&s, 0, UCOLL_CTL_FIN, 0);
            op(&s, FZ_PROGRESS);
            op2(&s, FZ_COMPLETE, 0, 0);
            op2(&s, FZ_COMPLETE, 1, 0);
            op(&s, FZ_PROGRESS);
            op(&s, FZ_REAP);
            save(&s);
        }

        /* to this rank itself: eager, immediate, and each rendezvous */
        for (mode = 0; mode < 4; mode++) {
            rank = mode;
            start(&s, cfg(mode, 1, 1, async, 0, rank));
            recv_(&s, 0, (unsigned)rank, 3, 4000);
            send_(&s, 0, (unsigned)rank, 3, 4000);
            send_(&s, 16, (unsigned)rank, 3, 16);
            send_(&s, 0, (unsigned)rank, 3, 900);
            op(&s, FZ_PROGRESS);
            op(&s, FZ_PROGRESS);
            recv_(&s, 0, 0xff, 3, 16);
            recv_(&s, 0, (unsigned)rank, 0xff, 100); /* truncated */
            op(&s, FZ_PROGRESS);
            op(&s, FZ_PROGRESS);
            op(&s, FZ_PROGRESS);
            op(&s, FZ_REAP);
            save(&s);
        }
    }

    /* the collective space through the net ops, to itself and from rank 3 */
    start(&s, cfg(0, 0, 0, 0, 0, 0));
    send_(&s, 1, 0, 200, 64);
    recv_(&s, 1, 0, 200, 64);
    recv_(&s, 1, 3, 7, 64);
    hdr(&s, UCOLL_PROTO_EAGER, 4, 3, 7, 0, 64, 0, 0);
    op(&s, FZ_PROGRESS);
    save(&s);

    /* a communicator created after its first message; the reversed world */
    start(&s, cfg(0, 0, 0, 0, 0, 1));
    hdr(&s, UCOLL_PROTO_EAGER, 2, 1, 1, 0, 10, 0, 0);
    hdr(&s, UCOLL_PROTO_EAGER | 8, 2, 2, 1, 0, 10, 0, 0);
    b1(&s, FZ_COMM);
    b1(&s, 0);
    recv_(&s, 4, 0xff, 1, 10);
    recv_(&s, 4, 0xff, 1, 10);
    recv_(&s, 2, 0, 2, 10);
    hdr(&s, UCOLL_PROTO_EAGER, 1, 0, 2, 0, 10, 0, 0);
    op(&s, FZ_REAP);
    save(&s);

    /* a peer fails with work under way both ways */
    start(&s, cfg(1, 1, 0, 0, 0, 0));
    send_(&s, 0, 2, 1, 1000);
    recv_(&s, 0, 2, 1, 1000);
    recv_(&s, 0, 0xff, 0xff, 10);
    hdr(&s, UCOLL_PROTO_RNDV_TAG, 0, 2, 1, 0, 1000, 0, 9);
    b1(&s, FZ_FAIL);
    b1(&s, 2);
    op(&s, FZ_PROGRESS);
    op(&s, FZ_REAP);
    save(&s);

    /* rendezvous sends the receiver could not take: a CTS and a FIN that
     * carry the receiver's failure (NOMEM, TRANSPORT) */
    for (mode = UCOLL_RNDV_TAG; mode <= UCOLL_RNDV_GET; mode += 2) {
        start(&s, cfg(mode, 1, 0, 0, 0, 0));
        send_(&s, 0, 1, 4, 3000);
        send_(&s, 0, 1, 5, 3000);
        answer(&s, 0, mode == UCOLL_RNDV_TAG ? UCOLL_CTL_CTS : UCOLL_CTL_FIN, 3);
        answer(&s, 1, mode == UCOLL_RNDV_TAG ? UCOLL_CTL_CTS : UCOLL_CTL_FIN, 2);
        op(&s, FZ_PROGRESS);
        op(&s, FZ_REAP);
        save(&s);
    }

    /* out of credits: a small window, many eager sends */
    start(&s, cfg(0, 0, 1, 0, 0, 0));
    for (mode = 0; mode < 8; mode++) {
        send_(&s, 0, 1, 2, 200);
    }
    raw_ctl(&s, UCOLL_CTL_CREDIT, 1, 960, 0, 0);
    answer(&s, 0, UCOLL_CTL_CTS, 0);
    op(&s, FZ_PROGRESS);
    save(&s);

    /* a failure report while operations wait on the rank it names, and
     * one that names this rank (its sender is then failed) */
    start(&s, cfg(0, 0, 0, 0, 0, 0));
    recv_(&s, 0, 1, 1, 64);
    send_(&s, 0, 1, 2, 3000);
    raw_ctl(&s, UCOLL_CTL_DOWN, 1, 0, 0, 2);
    raw_ctl(&s, UCOLL_CTL_DOWN, 2, 0, 0, 0);
    op(&s, FZ_PROGRESS);
    op(&s, FZ_REAP);
    save(&s);

    /* raw packets, valid, for the byte-level mutations */
    start(&s, cfg(0, 0, 0, 0, 0, 0));
    recv_(&s, 0, 1, 1, 64);
    raw_msg(&s, 0, UCOLL_PROTO_EAGER, 1, 1, 0, 16);
    raw_msg(&s, 1, UCOLL_PROTO_EAGER, 1, 1, 1, 16);
    raw_msg(&s, 0, UCOLL_PROTO_RNDV_AM, 1, 1, 2, 16);
    raw_msg(&s, 0, UCOLL_PROTO_RNDV_TAG, 1, 1, 3, 16);
    raw_msg(&s, 0, UCOLL_PROTO_RNDV_GET, 1, 1, 4, 16);
    recv_(&s, 0, 1, 1, 64);
    recv_(&s, 0, 1, 1, 64);
    recv_(&s, 0, 1, 1, 64);
    recv_(&s, 0, 1, 1, 64);
    raw_ctl(&s, UCOLL_CTL_CREDIT, 1, 0, 0, 0);
    raw_ctl(&s, UCOLL_CTL_CTS, 1, 0, (uint64_t)1 << 32, 0);
    op(&s, FZ_PROGRESS);
    op(&s, FZ_REAP);
    save(&s);

    printf("%d seeds in %s\n", nseeds, dir);
    return 0;
}

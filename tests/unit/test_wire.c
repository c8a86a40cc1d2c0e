/*
 * Unit test of the wire decoders (lib/transport/wire.c) on crafted packets:
 * each valid form once, then each way of being malformed, one field or one
 * length at a time, checking the reason given. Every packet is handed over
 * in a buffer of exactly its length, so a read past it shows under ASan.
 */
#include "core.h"
#include "transport/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/expect.h"

#define SIZE 8 /* ranks in the job */

static char payload[64];

/* decode_msg on exact-size copies of header and data */
static int msg(const void *hdr, size_t hlen, const void *data, size_t len, int rndv,
               ucoll_wire_msg_t *m_p)
{
    /* a rendezvous descriptor is opaque: its length is only announced */
    void *h = malloc(hlen ? hlen : 1), *d = malloc(len && !rndv ? len : 1);
    ucoll_wire_msg_t m;
    int ret;

    if (hlen) {
        memcpy(h, hdr, hlen);
    }
    if (len && !rndv) {
        memcpy(d, data, len);
    }
    memset(&m, 0xee, sizeof(m));
    ret = ucoll__wire_decode_msg(hlen ? h : NULL, hlen, d, len, rndv, SIZE, &m);
    if (ret == UCOLL_WIRE_OK) {
        EXPECT(m.data == NULL || m.data == d ||
               (!rndv && m.data >= d && (char *)m.data <= (char *)d + len));
        EXPECT(m.rkey == NULL || (m.rkey >= h && (const char *)m.rkey < (char *)h + hlen));
    } else {
        /* nothing is written on failure */
        ucoll_wire_msg_t poison;

        memset(&poison, 0xee, sizeof(poison));
        EXPECT(memcmp(&m, &poison, sizeof(m)) == 0);
    }
    if (m_p) {
        *m_p = m;
    }
    free(h);
    free(d);
    return ret;
}

static int ctl(const void *hdr, size_t hlen, size_t len, int rndv, wire_ctl_t *c_p)
{
    void *h = malloc(hlen ? hlen : 1);
    char data[8] = {0};
    wire_ctl_t c;
    int ret;

    memcpy(h, hdr, hlen);
    memset(&c, 0xee, sizeof(c));
    ret = ucoll__wire_decode_ctl(h, hlen, len ? data : NULL, len, rndv, SIZE, &c);
    if (c_p) {
        *c_p = c;
    }
    free(h);
    return ret;
}

static wire_hdr_t hdr(int proto, size_t len)
{
    wire_hdr_t h;

    memset(&h, 0, sizeof(h));
    h.ctx_id = 2 * 3 + UCOLL_SPACE_P2P;
    h.src = 2;
    h.tag = 17;
    h.seq = 5;
    h.src_world = 6;
    h.proto = (uint16_t)proto;
    h.credits = 100;
    h.len = len;
    return h;
}

static wire_rts_t rts(int proto, size_t len, uint16_t rkey_len)
{
    wire_rts_t r;

    memset(&r, 0, sizeof(r));
    r.h = hdr(proto, len);
    r.h.rkey_len = rkey_len;
    r.cookie = 0x100000003ull;
    r.raddr = proto == UCOLL_PROTO_RNDV_GET ? 0x7f0000001000ull : 0;
    return r;
}

static void test_eager(void)
{
    wire_hdr_t h = hdr(UCOLL_PROTO_EAGER, 10);
    char packed[sizeof(h) + 10];
    ucoll_wire_msg_t m;

    /* header as AM header */
    EXPECT(msg(&h, sizeof(h), payload, 10, 0, &m) == UCOLL_WIRE_OK);
    EXPECT(m.h.src == 2 && m.h.tag == 17 && m.h.seq == 5 && m.h.src_world == 6);
    EXPECT(m.length == 10 && m.cookie == 0 && m.rkey == NULL);

    /* packed ahead of the payload */
    memcpy(packed, &h, sizeof(h));
    memcpy(packed + sizeof(h), payload, 10);
    EXPECT(msg(NULL, 0, packed, sizeof(packed), 0, &m) == UCOLL_WIRE_OK);
    EXPECT(m.length == 10 && m.h.len == 10);

    /* zero bytes, packed and not */
    h = hdr(UCOLL_PROTO_EAGER, 0);
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_OK);
    EXPECT(msg(NULL, 0, &h, sizeof(h), 0, NULL) == UCOLL_WIRE_OK);

    /* truncated header: packed, and as AM header */
    EXPECT(msg(NULL, 0, packed, sizeof(wire_hdr_t) - 1, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(msg(NULL, 0, NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(msg(&h, sizeof(h) - 1, NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(msg(&h, 1, NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);

    /* a header longer than the protocol's */
    {
        wire_rts_t r = rts(UCOLL_PROTO_EAGER, 0, 0);
        EXPECT(msg(&r, sizeof(wire_hdr_t) + 8, NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    }

    /* size disagreeing with the data: larger, smaller, packed larger */
    h = hdr(UCOLL_PROTO_EAGER, 11);
    EXPECT(msg(&h, sizeof(h), payload, 10, 0, NULL) == UCOLL_WIRE_ELEN);
    h = hdr(UCOLL_PROTO_EAGER, 9);
    EXPECT(msg(&h, sizeof(h), payload, 10, 0, NULL) == UCOLL_WIRE_ELEN);
    h = hdr(UCOLL_PROTO_EAGER, (size_t)1 << 40);
    memcpy(packed, &h, sizeof(h));
    EXPECT(msg(NULL, 0, packed, sizeof(packed), 0, NULL) == UCOLL_WIRE_ELEN);

    /* an eager message that arrives as a rendezvous descriptor */
    h = hdr(UCOLL_PROTO_EAGER, 10);
    EXPECT(msg(&h, sizeof(h), payload, 10, 1, NULL) == UCOLL_WIRE_ERNDV);
}

static void test_fields(void)
{
    wire_hdr_t h;

    /* unknown protocol */
    h = hdr(UCOLL_PROTO_EAGER, 0);
    h.proto = UCOLL_PROTO_RNDV_GET + 1;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_EPROTO);
    h.proto = 0xffff;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 1, NULL) == UCOLL_WIRE_EPROTO);

    /* padding */
    h = hdr(UCOLL_PROTO_EAGER, 0);
    h.pad = 1;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_EPAD);

    /* ranks: job rank, communicator rank, both ends of the range */
    h = hdr(UCOLL_PROTO_EAGER, 0);
    h.src_world = SIZE;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_ERANK);
    h.src_world = UINT32_MAX;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_ERANK);
    h = hdr(UCOLL_PROTO_EAGER, 0);
    h.src = -1;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_ERANK);
    h.src = SIZE;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_ERANK);
    h.src = INT32_MIN;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_ERANK);
    h.src = SIZE - 1;
    h.src_world = SIZE - 1;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_OK);
    h.src = 0;
    h.src_world = 0;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_OK);

    /* tags: the user's range in the point-to-point space, anything in the
     * collective one */
    h = hdr(UCOLL_PROTO_EAGER, 0);
    h.tag = -1;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_ETAG);
    h.tag = UCOLL_TAG_UB + 1;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_ETAG);
    h.tag = UCOLL_TAG_UB;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_OK);
    h.ctx_id |= UCOLL_SPACE_COLL;
    h.tag = -5;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_OK);

    /* a remote key where the protocol has none */
    h = hdr(UCOLL_PROTO_EAGER, 0);
    h.rkey_len = 1;
    EXPECT(msg(&h, sizeof(h), NULL, 0, 0, NULL) == UCOLL_WIRE_ERKEY);
}

static void test_rndv(void)
{
    wire_hdr_t h = hdr(UCOLL_PROTO_RNDV_AM, 100000);
    wire_rts_t r;
    char get[sizeof(wire_rts_t) + 12];
    ucoll_wire_msg_t m;

    /* AM rendezvous: a descriptor whose size UCX announces */
    EXPECT(msg(&h, sizeof(h), payload, 100000, 1, &m) == UCOLL_WIRE_OK);
    EXPECT(m.length == 100000);
    EXPECT(msg(&h, sizeof(h), payload, 99999, 1, NULL) == UCOLL_WIRE_ELEN);
    EXPECT(msg(&h, sizeof(h), payload, 10, 0, NULL) == UCOLL_WIRE_ERNDV);
    EXPECT(msg(NULL, 0, payload, 10, 1, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(msg(&h, sizeof(h) - 8, payload, 100000, 1, NULL) == UCOLL_WIRE_ESIZE);

    /* tagged rendezvous: the announcement alone */
    r = rts(UCOLL_PROTO_RNDV_TAG, 1 << 20, 0);
    EXPECT(msg(&r, sizeof(r), NULL, 0, 0, &m) == UCOLL_WIRE_OK);
    EXPECT(m.cookie == r.cookie && m.h.len == 1 << 20 && m.data == NULL && m.length == 0);
    EXPECT(msg(&r, sizeof(wire_hdr_t), NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(msg(&r, sizeof(r) - 1, NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(msg(&r, sizeof(r), payload, 1, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(msg(&r, sizeof(r), payload, 16, 1, NULL) == UCOLL_WIRE_ERNDV);
    r.cookie = 0;
    EXPECT(msg(&r, sizeof(r), NULL, 0, 0, NULL) == UCOLL_WIRE_ECOOKIE);
    r = rts(UCOLL_PROTO_RNDV_TAG, 1 << 20, 0);
    r.raddr = 1;
    EXPECT(msg(&r, sizeof(r), NULL, 0, 0, NULL) == UCOLL_WIRE_ECOOKIE);
    r = rts(UCOLL_PROTO_RNDV_TAG, 1 << 20, 3);
    EXPECT(msg(&r, sizeof(r), NULL, 0, 0, NULL) == UCOLL_WIRE_ERKEY);

    /* get rendezvous: the packed key follows, exactly rkey_len bytes */
    r = rts(UCOLL_PROTO_RNDV_GET, 4096, 12);
    memcpy(get, &r, sizeof(r));
    memset(get + sizeof(r), 0xab, 12);
    EXPECT(msg(get, sizeof(get), NULL, 0, 0, &m) == UCOLL_WIRE_OK);
    EXPECT(m.raddr == r.raddr && m.cookie == r.cookie && m.h.rkey_len == 12);
    EXPECT(msg(get, sizeof(get) - 1, NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(msg(get, sizeof(r), NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    r.h.rkey_len = 0xffff; /* far more than was delivered */
    memcpy(get, &r, sizeof(r));
    EXPECT(msg(get, sizeof(get), NULL, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    r.h.rkey_len = 0;
    memcpy(get, &r, sizeof(r));
    EXPECT(msg(get, sizeof(r), NULL, 0, 0, NULL) == UCOLL_WIRE_ERKEY);
    r = rts(UCOLL_PROTO_RNDV_GET, 4096, 12);
    r.cookie = 0;
    memcpy(get, &r, sizeof(r));
    EXPECT(msg(get, sizeof(get), NULL, 0, 0, NULL) == UCOLL_WIRE_ECOOKIE);
}

static wire_ctl_t mkctl(int type)
{
    wire_ctl_t c;

    memset(&c, 0, sizeof(c));
    c.type = (uint32_t)type;
    c.src_world = 3;
    c.credits = 4096;
    if (type == UCOLL_CTL_DOWN) {
        c.seq = 5; /* the rank found failed */
    } else if (type != UCOLL_CTL_CREDIT) {
        c.seq = 9;
        c.cookie = 0x200000001ull;
    }
    return c;
}

static void test_ctl(void)
{
    wire_ctl_t c = mkctl(UCOLL_CTL_CTS), out;

    EXPECT(ctl(&c, sizeof(c), 0, 0, &out) == UCOLL_WIRE_OK);
    EXPECT(memcmp(&c, &out, sizeof(c)) == 0);
    c.status = UCOLL_ERR_TRUNCATE;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_OK);
    c = mkctl(UCOLL_CTL_FIN);
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_OK);
    c = mkctl(UCOLL_CTL_CREDIT);
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_OK);
    c = mkctl(UCOLL_CTL_DOWN);
    EXPECT(ctl(&c, sizeof(c), 0, 0, &out) == UCOLL_WIRE_OK);
    EXPECT(out.seq == 5 && out.src_world == 3);

    /* lengths and the rendezvous flag */
    c = mkctl(UCOLL_CTL_CTS);
    memset(&out, 0xee, sizeof(out));
    EXPECT(ucoll__wire_decode_ctl(NULL, 0, NULL, 0, 0, SIZE, &out) == UCOLL_WIRE_ESIZE);
    EXPECT(ctl(&c, sizeof(c) - 1, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(ctl(&c, 4, 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(ctl(&c, sizeof(c), 1, 0, NULL) == UCOLL_WIRE_ESIZE);
    EXPECT(ctl(&c, sizeof(c), 0, 1, NULL) == UCOLL_WIRE_ERNDV);
    {
        char longer[sizeof(c) + 8] = {0};
        memcpy(longer, &c, sizeof(c));
        EXPECT(ctl(longer, sizeof(longer), 0, 0, NULL) == UCOLL_WIRE_ESIZE);
    }

    /* fields */
    c.type = UCOLL_CTL_DOWN + 1;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_EPROTO);
    c = mkctl(UCOLL_CTL_CTS);
    c.pad = 7;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_EPAD);
    c = mkctl(UCOLL_CTL_CTS);
    c.src_world = SIZE;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ERANK);
    c = mkctl(UCOLL_CTL_FIN);
    c.cookie = 0;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ECOOKIE);
    /* a CTS/FIN says why the data was not taken: too small, or a failure
     * at the receiver; nothing else */
    c = mkctl(UCOLL_CTL_CTS);
    c.status = UCOLL_ERR_TRANSPORT;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_OK);
    c = mkctl(UCOLL_CTL_FIN);
    c.status = UCOLL_ERR_NOMEM;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_OK);
    c.status = UCOLL_ERR_PEER;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ESTATUS);
    c.status = UCOLL_ERR_ARG;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ESTATUS);
    c.status = 1;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ESTATUS);
    c = mkctl(UCOLL_CTL_CREDIT);
    c.cookie = 5;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ECOOKIE);
    c = mkctl(UCOLL_CTL_CREDIT);
    c.seq = 5;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ECOOKIE);
    c = mkctl(UCOLL_CTL_CREDIT);
    c.status = UCOLL_ERR_TRUNCATE;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ESTATUS);
    c.status = UCOLL_ERR_TRANSPORT;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ESTATUS);
    /* DOWN names another rank of the job, and carries nothing else */
    c = mkctl(UCOLL_CTL_DOWN);
    c.seq = SIZE;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ERANK);
    c.seq = c.src_world;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ERANK);
    c = mkctl(UCOLL_CTL_DOWN);
    c.cookie = 1;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ECOOKIE);
    c = mkctl(UCOLL_CTL_DOWN);
    c.status = UCOLL_ERR_PEER;
    EXPECT(ctl(&c, sizeof(c), 0, 0, NULL) == UCOLL_WIRE_ESTATUS);
}

static void test_unaligned(void)
{
    wire_hdr_t h = hdr(UCOLL_PROTO_EAGER, 3);
    char buf[1 + sizeof(h) + 3];
    ucoll_wire_msg_t m;

    /* UCX promises no alignment: a header at an odd address decodes */
    memcpy(buf + 1, &h, sizeof(h));
    memcpy(buf + 1 + sizeof(h), "abc", 3);
    EXPECT(ucoll__wire_decode_msg(NULL, 0, buf + 1, sizeof(h) + 3, 0, SIZE, &m) == UCOLL_WIRE_OK);
    EXPECT(m.h.seq == 5 && m.length == 3 && memcmp(m.data, "abc", 3) == 0);
}

static void test_strerror(void)
{
    int i, j;

    for (i = 0; i < UCOLL_WIRE_NERR; i++) {
        EXPECT(strcmp(ucoll__wire_strerror(i), "unknown reason") != 0);
        for (j = 0; j < i; j++) {
            EXPECT(strcmp(ucoll__wire_strerror(i), ucoll__wire_strerror(j)) != 0);
        }
    }
    EXPECT(strcmp(ucoll__wire_strerror(UCOLL_WIRE_NERR), "unknown reason") == 0);
}

int main(void)
{
    test_eager();
    test_fields();
    test_rndv();
    test_ctl();
    test_unaligned();
    test_strerror();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("wire: all checks passed\n");
    return 0;
}

/*
 * Point-to-point tests over the public API, run under a launcher with 2..8
 * ranks:
 *   p2p_test [all]   every case below
 *   p2p_test kill    rank 1 dies without finalize while rank 0 waits on it
 *   p2p_test killwild  the other ranks die at once; rank 0's ANY_SOURCE
 *                    receive (no endpoint to them yet) must fail
 *   p2p_test killrndv  rank 1 dies in the middle of a large rendezvous send
 *                    to rank 0, whose receive must fail, not crash
 *   p2p_test killrndv-recv  the same with rank 1 receiving from rank 0
 *   p2p_test timeout with UCOLL_TIMEOUT=1, a wait for a message not sent yet
 *                    times out, the request stays valid and completes later;
 *                    a rendezvous receive withdrawn after its CTS does not
 *                    leave its sender waiting (run_timeout_rndv)
 * Cases: argument errors, self, zero bytes, sizes 0..64 MiB across the
 * eager/rendezvous threshold and the sizes of one-slot and several-slot
 * packets of the same-node rings (content checked), wildcards (and the
 * specific-vs-wildcard posting order), order across the eager/rendezvous
 * boundary with ANY_TAG, truncation (eager and rendezvous, then a message
 * to prove the pair is still consistent), 10,000 outstanding requests both
 * ways, and an unexpected-queue flood of 20,000 messages.
 * Prints "p2p_test: PASS" on rank 0 and exits 0 when every check held.
 */
#include <ucoll.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int me, np, failures;
static ucoll_comm_t *world;

#define FAIL(...)                                                    \
    do {                                                             \
        fprintf(stderr, "rank %d: %s:%d: ", me, __func__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                \
        fprintf(stderr, "\n");                                       \
        failures++;                                                  \
    } while (0)

#define OK(_call)                                       \
    do {                                                \
        int _r = (_call);                               \
        if (_r != UCOLL_OK) {                           \
            FAIL("%s: %s", #_call, ucoll_strerror(_r)); \
            return;                                     \
        }                                               \
    } while (0)

#define EXPECT(_call, _want)                                                                  \
    do {                                                                                      \
        int _r = (_call);                                                                     \
        if (_r != (_want)) {                                                                  \
            FAIL("%s returned %d (%s), expected %s", #_call, _r, ucoll_strerror(_r), #_want); \
        }                                                                                     \
    } while (0)

static unsigned char pat(int src, size_t i, size_t salt)
{
    return (unsigned char)((size_t)src * 131 + i * 7 + salt * 13 + (i >> 8));
}

static void fill(void *buf, size_t n, int src, size_t salt)
{
    unsigned char *b = buf;
    size_t i;

    for (i = 0; i < n; i++) {
        b[i] = pat(src, i, salt);
    }
}

static int check(const void *buf, size_t n, int src, size_t salt)
{
    const unsigned char *b = buf;
    size_t i;

    for (i = 0; i < n; i++) {
        if (b[i] != pat(src, i, salt)) {
            FAIL("byte %zu of %zu from %d (salt %zu): %u != %u", i, n, src, salt, b[i],
                 pat(src, i, salt));
            return -1;
        }
    }
    return 0;
}

/* Zero-byte exchange with everyone: a barrier made of point-to-point. */
static void sync_all(int tag)
{
    ucoll_req_t *r[2 * 64];
    int i, n = 0;

    for (i = 0; i < np; i++) {
        if (i != me) {
            OK(ucoll_irecv(NULL, 0, UCOLL_BYTE, i, tag, world, &r[n++]));
            OK(ucoll_isend(NULL, 0, UCOLL_BYTE, i, tag, world, &r[n++]));
        }
    }
    OK(ucoll_waitall((size_t)n, r));
}

static void test_args(void)
{
    ucoll_req_t *r = NULL;
    char b[8] = {0};

    EXPECT(ucoll_isend(b, 1, UCOLL_BYTE, -1, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(b, 1, UCOLL_BYTE, np, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(b, 1, UCOLL_BYTE, UCOLL_ANY_SOURCE, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(b, 1, UCOLL_BYTE, 0, -1, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(b, 1, UCOLL_BYTE, 0, UCOLL_TAG_UB + 1, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(NULL, 1, UCOLL_BYTE, 0, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(b, 1, UCOLL_DTYPE_LAST, 0, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(b, 1, (ucoll_dtype_t)-5, 0, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(b, 1, UCOLL_BYTE, 0, 0, NULL, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_isend(b, 1, UCOLL_BYTE, 0, 0, world, NULL), UCOLL_ERR_ARG);
    EXPECT(ucoll_irecv(b, 1, UCOLL_BYTE, np, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_irecv(b, 1, UCOLL_BYTE, -2, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_irecv(b, 1, UCOLL_BYTE, 0, -2, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_irecv(NULL, 2, UCOLL_INT32, 0, 0, world, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_irecv(b, 1, UCOLL_BYTE, 0, 0, NULL, &r), UCOLL_ERR_ARG);
    EXPECT(ucoll_send(b, 1, UCOLL_BYTE, np + 3, 0, world), UCOLL_ERR_ARG);
    EXPECT(ucoll_recv(b, 1, UCOLL_DTYPE_LAST, 0, 0, world, NULL), UCOLL_ERR_ARG);
    EXPECT(ucoll_wait(NULL, NULL), UCOLL_ERR_ARG);
    if (r != NULL) {
        FAIL("a failed call set the request");
    }
}

static void test_self(void)
{
    static const size_t sizes[] = {0, 1, 100, 8192, 8193, 65536, 65537, 300000};
    ucoll_status_t st;
    ucoll_req_t *r[2];
    size_t i, n;
    char *s, *d;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        n = sizes[i];
        s = malloc(n + 1);
        d = malloc(n + 1);
        fill(s, n, me, n);
        /* receive posted after the send, then before */
        OK(ucoll_isend(s, n, UCOLL_BYTE, me, 7, world, &r[0]));
        OK(ucoll_irecv(d, n, UCOLL_BYTE, me, 7, world, &r[1]));
        OK(ucoll_wait(r[1], &st));
        OK(ucoll_wait(r[0], NULL));
        if (st.source != me || st.tag != 7 || st.bytes != n) {
            FAIL("self status %d/%d/%zu for %zu", st.source, st.tag, st.bytes, n);
        }
        check(d, n, me, n);
        /* wildcards, each with the other field fixed: other ranks may
         * already be sending to us */
        memset(d, 0, n + 1);
        OK(ucoll_irecv(d, n, UCOLL_BYTE, UCOLL_ANY_SOURCE, 8, world, &r[1]));
        OK(ucoll_isend(s, n, UCOLL_BYTE, me, 8, world, &r[0]));
        OK(ucoll_waitall(2, r));
        check(d, n, me, n);
        memset(d, 0, n + 1);
        OK(ucoll_isend(s, n, UCOLL_BYTE, me, 9, world, &r[0]));
        OK(ucoll_irecv(d, n, UCOLL_BYTE, me, UCOLL_ANY_TAG, world, &r[1]));
        OK(ucoll_wait(r[1], &st));
        OK(ucoll_wait(r[0], NULL));
        if (st.tag != 9 || st.bytes != n) {
            FAIL("self ANY_TAG status %d/%zu", st.tag, st.bytes);
        }
        check(d, n, me, n);
        free(s);
        free(d);
    }
}

/* Ring: each rank sends to me+1 and receives from me-1, every size. */
static void test_sizes(void)
{
    static const size_t sizes[] = {0,     1,     7,      100,     192,     193,    248,
                                   249,   500,   744,    1000,    1024,    1200,   4095,
                                   8191,  8192,  8193,   16384,   65535,   65536,  65537,
                                   100003, 1 << 20, 4 << 20};
    int to = (me + 1) % np, from = (me - 1 + np) % np;
    ucoll_status_t st;
    ucoll_req_t *r[2];
    size_t i, n;
    char *s, *d;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        n = sizes[i];
        s = malloc(n + 1);
        d = malloc(n + 1);
        fill(s, n, me, n);
        memset(d, 0xee, n + 1);
        OK(ucoll_irecv(d, n, UCOLL_BYTE, from, 3, world, &r[0]));
        OK(ucoll_isend(s, n, UCOLL_BYTE, to, 3, world, &r[1]));
        OK(ucoll_wait(r[0], &st));
        OK(ucoll_wait(r[1], NULL));
        if (st.source != from || st.tag != 3 || st.bytes != n || st.error != UCOLL_OK) {
            FAIL("status %d/%d/%zu/%d for %zu", st.source, st.tag, st.bytes, st.error, n);
        }
        check(d, n, from, n);
        if ((unsigned char)d[n] != 0xee) {
            FAIL("wrote past the message of %zu bytes", n);
        }
        free(s);
        free(d);
    }
}

/* 64 MiB between ranks 0 and 1, both directions, typed as int32. */
static void test_huge(void)
{
    size_t n = 64u << 20;
    char *s, *d;

    if (me > 1) {
        return;
    }
    s = malloc(n);
    d = malloc(n);
    fill(s, n, me, 64);
    if (me == 0) {
        OK(ucoll_send(s, n / 4, UCOLL_INT32, 1, 9, world));
        OK(ucoll_recv(d, n / 4, UCOLL_INT32, 1, 9, world, NULL));
    } else {
        OK(ucoll_recv(d, n / 4, UCOLL_INT32, 0, 9, world, NULL));
        OK(ucoll_send(s, n / 4, UCOLL_INT32, 0, 9, world));
    }
    check(d, n, 1 - me, 64);
    free(s);
    free(d);
}

/* Rank 0 takes one message from every other rank with ANY_SOURCE/ANY_TAG;
 * then the older posted receive wins between a wildcard and a specific. */
static void test_wildcard(void)
{
    ucoll_status_t st;
    ucoll_req_t *r[2];
    int i, seen[64] = {0}, v, a = -1, b = -1;

    if (me == 0) {
        for (i = 1; i < np; i++) {
            OK(ucoll_recv(&v, 1, UCOLL_INT32, UCOLL_ANY_SOURCE, UCOLL_ANY_TAG, world, &st));
            if (st.source < 1 || st.source >= np || seen[st.source]++ || st.tag != 40 + st.source ||
                v != st.source * 1000) {
                FAIL("wildcard got src %d tag %d value %d", st.source, st.tag, v);
            }
        }
        OK(ucoll_irecv(&a, 1, UCOLL_INT32, UCOLL_ANY_SOURCE, 5, world, &r[0]));
        OK(ucoll_irecv(&b, 1, UCOLL_INT32, 1, 5, world, &r[1]));
        OK(ucoll_send(&v, 0, UCOLL_BYTE, 1, 6, world)); /* go */
        OK(ucoll_waitall(2, r));
        if (a != 1 || b != 2) {
            FAIL("older posted receive must match first: got %d, %d", a, b);
        }
        /* release the others only now: their next messages would match the
         * ANY_TAG receives above */
        for (i = 2; i < np; i++) {
            OK(ucoll_send(&v, 0, UCOLL_BYTE, i, 41, world));
        }
    } else {
        v = me * 1000;
        OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 40 + me, world));
        if (me > 1) {
            OK(ucoll_recv(&v, 0, UCOLL_BYTE, 0, 41, world, NULL));
        } else {
            OK(ucoll_recv(&v, 0, UCOLL_BYTE, 0, 6, world, NULL));
            v = 1;
            OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 5, world));
            v = 2;
            OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 5, world));
        }
    }
}

/* Mixed sizes on one pair; receiver posts in order with ANY_TAG, part of
 * them before the messages arrive and part after. */
static void test_order(void)
{
    static const size_t sizes[] = {0,     10,      8192, 8193,    40000, 65536, 65537,
                                   3,     200000,  8191, 1 << 20, 64,    300,   1000};
    enum { NS = sizeof(sizes) / sizeof(sizes[0]), N = 10 * NS };
    int peer = me ^ 1, i;
    ucoll_req_t *r[N];
    ucoll_status_t st;
    char *buf[N];

    if (peer >= np) {
        return;
    }
    for (i = 0; i < N; i++) {
        size_t n = sizes[i % NS];
        buf[i] = malloc(n + 1);
        if (me & 1) {
            fill(buf[i], n, me, (size_t)i);
        }
    }
    if (me & 1) {
        for (i = 0; i < N; i++) {
            OK(ucoll_isend(buf[i], sizes[i % NS], UCOLL_BYTE, peer, i, world, &r[i]));
        }
        OK(ucoll_waitall(N, r));
    } else {
        for (i = 0; i < N / 2; i++) {
            OK(ucoll_irecv(buf[i], sizes[i % NS], UCOLL_BYTE, peer, UCOLL_ANY_TAG, world, &r[i]));
        }
        usleep(50000);
        for (; i < N; i++) {
            OK(ucoll_irecv(buf[i], sizes[i % NS], UCOLL_BYTE, peer, UCOLL_ANY_TAG, world, &r[i]));
        }
        for (i = 0; i < N; i++) {
            OK(ucoll_wait(r[i], &st));
            if (st.tag != i || st.bytes != sizes[i % NS]) {
                FAIL("message %d arrived as tag %d, %zu bytes", i, st.tag, st.bytes);
                break;
            }
            check(buf[i], sizes[i % NS], peer, (size_t)i);
        }
    }
    for (i = 0; i < N; i++) {
        free(buf[i]);
    }
}

static void test_truncate(void)
{
    static const size_t sizes[] = {100, 8000, 1 << 20};
    int peer = me ^ 1;
    ucoll_status_t st;
    size_t i, n;
    char *s, *d;

    if (peer >= np) {
        return;
    }
    for (i = 0; i < 3; i++) {
        n = sizes[i];
        s = malloc(n);
        d = malloc(n);
        fill(s, n, me, n);
        if (me & 1) {
            OK(ucoll_send(s, n, UCOLL_BYTE, peer, 11, world));
            OK(ucoll_send(s, n, UCOLL_BYTE, peer, 12, world));
        } else {
            memset(d, 0, n);
            EXPECT(ucoll_recv(d, n / 2, UCOLL_BYTE, peer, 11, world, &st), UCOLL_ERR_TRUNCATE);
            if (st.bytes != n || st.error != UCOLL_ERR_TRUNCATE || st.tag != 11) {
                FAIL("truncated status: %zu bytes, error %d", st.bytes, st.error);
            }
            if ((unsigned char)d[n / 2] != 0) {
                FAIL("truncated receive wrote past the buffer");
            }
            /* the pair still works, in order */
            OK(ucoll_recv(d, n, UCOLL_BYTE, peer, UCOLL_ANY_TAG, world, &st));
            if (st.tag != 12) {
                FAIL("after truncation got tag %d", st.tag);
            }
            check(d, n, peer, n);
        }
        free(s);
        free(d);
    }
}

/* 10,000 outstanding requests: receives posted first one way, sends first
 * the other way. */
static void test_many(void)
{
    enum { N = 10000 };
    int peer = me ^ 1, i, phase;
    ucoll_req_t **r;
    int *v;

    if (peer >= np) {
        return;
    }
    r = malloc(N * sizeof(*r));
    v = malloc(N * sizeof(*v));
    for (phase = 0; phase < 2; phase++) {
        int recv_side = (me & 1) == phase;
        if (recv_side) {
            for (i = 0; i < N; i++) {
                v[i] = -1;
                OK(ucoll_irecv(&v[i], 1, UCOLL_INT32, peer, i % 7, world, &r[i]));
            }
            OK(ucoll_send(NULL, 0, UCOLL_BYTE, peer, 20, world));
        } else {
            OK(ucoll_recv(NULL, 0, UCOLL_BYTE, peer, 20, world, NULL));
            for (i = 0; i < N; i++) {
                v[i] = i;
                OK(ucoll_isend(&v[i], 1, UCOLL_INT32, peer, i % 7, world, &r[i]));
            }
        }
        OK(ucoll_waitall(N, r));
        for (i = 0; recv_side && i < N; i++) {
            if (v[i] != i) {
                FAIL("outstanding receive %d got %d", i, v[i]);
                break;
            }
        }
    }
    free(r);
    free(v);
}

/* The sender floods 20,000 small messages before the receiver posts any. */
static void test_flood(void)
{
    enum { N = 20000, SZ = 64 };
    int peer = me ^ 1, i;
    ucoll_req_t **r;
    ucoll_status_t st;
    char *buf;

    if (peer >= np) {
        return;
    }
    r = malloc(N * sizeof(*r));
    buf = malloc((size_t)N * SZ);
    if (me & 1) {
        for (i = 0; i < N; i++) {
            fill(buf + (size_t)i * SZ, SZ, me, (size_t)i);
            OK(ucoll_isend(buf + (size_t)i * SZ, SZ, UCOLL_BYTE, peer, i & 0xffff, world, &r[i]));
        }
        OK(ucoll_send(NULL, 0, UCOLL_BYTE, peer, 0x7fff0, world));
        OK(ucoll_waitall(N, r));
    } else {
        OK(ucoll_recv(NULL, 0, UCOLL_BYTE, peer, 0x7fff0, world, NULL));
        for (i = 0; i < N; i++) {
            OK(ucoll_irecv(buf + (size_t)i * SZ, SZ, UCOLL_BYTE, peer, UCOLL_ANY_TAG, world,
                           &r[i]));
        }
        for (i = 0; i < N; i++) {
            OK(ucoll_wait(r[i], &st));
            if (st.tag != (i & 0xffff)) {
                FAIL("flood message %d came as tag %d", i, st.tag);
                break;
            }
            if (check(buf + (size_t)i * SZ, SZ, peer, (size_t)i)) {
                break;
            }
        }
    }
    free(r);
    free(buf);
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * Rank 0 outlives peers that exit without finalizing. kill: rank 1 dies once
 * everyone is connected; a receive from it, a wildcard receive and a send to
 * it must fail with UCOLL_ERR_PEER. killwild (wild = 1): the others die at
 * once, before any endpoint to them exists, and rank 0 only posts a wildcard
 * receive, which must still fail with UCOLL_ERR_PEER.
 */
static int run_kill(int wild)
{
    struct timespec t0;
    ucoll_status_t st;
    ucoll_req_t *r, *w;
    double secs;
    int v = 0, ret = UCOLL_ERR_PEER, ret2;

    /* the launcher may end the job once a rank exits without finalizing:
     * rank 0 outlives its SIGTERM long enough to report (it is SIGKILLed
     * after a grace period) */
    signal(SIGTERM, SIG_IGN);
    if (!wild) {
        sync_all(1);
    }
    if (me != 0) {
        if (me == 1 && !wild) {
            usleep(100000);
        }
        _exit(0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!wild) {
        ret = ucoll_irecv(&v, 1, UCOLL_INT32, 1, 0, world, &r);
        if (ret == UCOLL_OK) {
            ret = ucoll_wait(r, &st);
        }
    }
    ret2 = ucoll_irecv(&v, 1, UCOLL_INT32, UCOLL_ANY_SOURCE, 0, world, &w);
    if (ret2 == UCOLL_OK) {
        ret2 = ucoll_wait(w, NULL);
    }
    secs = seconds_since(&t0);
    if (ret != UCOLL_ERR_PEER || ret2 != UCOLL_ERR_PEER || secs > 20) {
        FAIL("receive from a dead peer: %s / %s after %.2f s", ucoll_strerror(ret),
             ucoll_strerror(ret2), secs);
    } else {
        printf("p2p_test: dead peer detected%s in %.2f s\n", wild ? " by a wildcard receive" : "",
               secs);
    }
    if (!wild) {
        ret = ucoll_send(&v, 1, UCOLL_INT32, 1, 0, world);
        if (ret != UCOLL_ERR_PEER) {
            FAIL("send to a dead peer: %s", ucoll_strerror(ret));
        }
    }
    /* the job has lost a rank: no collective finalize */
    printf("p2p_test: %s\n", failures ? "FAIL" : "PASS");
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

static void die_now(int sig)
{
    (void)sig;
    raise(SIGKILL);
}

static int all_bytes(const char *buf, size_t len, char c)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != c) {
            return 0;
        }
    }
    return 1;
}

/*
 * killrndv: rank 1 dies in the middle of a large rendezvous transfer to
 * rank 0, which fetches the data from rank 1's memory (on one node with
 * CMA, process_vm_readv of a process that is gone). killrndv-recv: rank 1
 * dies in the middle of receiving one from rank 0 (which, with
 * UCX_RNDV_SCHEME=put_zcopy, writes into the memory of a process that is
 * gone). Rank 0's call must end with UCOLL_ERR_PEER (or complete, with the
 * data, if it was done in time), never take the process down; a receive
 * from rank 1 then fails at once.
 */
static void run_killrndv(int recv_dies)
{
    enum { BIG = 256 << 20 };
    char *big = malloc(BIG);
    const char *what = recv_dies ? "send to" : "receive from";
    struct timespec t0;
    ucoll_req_t *r;
    double secs;
    int ret, done = 0, v = 0;

    signal(SIGTERM, SIG_IGN);
    if (big == NULL) {
        FAIL("no memory");
        _exit(1);
    }
    memset(big, (me == 1) != recv_dies ? 0x33 : 0, BIG);
    sync_all(1);
    if (me == 1) {
        /* dies 2 ms in (long enough for the announcement to leave, far
         * shorter than the transfer), by a timer: one progress call may
         * push all the data over TCP */
        signal(SIGALRM, die_now);
        if (recv_dies) {
            OK(ucoll_irecv(big, BIG, UCOLL_BYTE, 0, 5, world, &r));
        } else {
            OK(ucoll_isend(big, BIG, UCOLL_BYTE, 0, 5, world, &r));
        }
        ualarm(2000, 0);
        while (!done) {
            ucoll_test(r, &done, NULL);
        }
        for (;;) {
            pause();
        }
    }
    if (me != 0) {
        _exit(0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ret = recv_dies ? ucoll_send(big, BIG, UCOLL_BYTE, 1, 5, world)
                    : ucoll_recv(big, BIG, UCOLL_BYTE, 1, 5, world, NULL);
    secs = seconds_since(&t0);
    if ((ret != UCOLL_ERR_PEER && ret != UCOLL_OK) || secs > 20) {
        FAIL("a rendezvous %s a peer that died in it: %s after %.2f s", what, ucoll_strerror(ret),
             secs);
    } else if (ret == UCOLL_OK && !recv_dies && !all_bytes(big, BIG, 0x33)) {
        FAIL("a rendezvous receive that completed holds other data than was sent");
    } else {
        printf("p2p_test: rendezvous %s a dying peer: %s in %.2f s\n", what, ucoll_strerror(ret),
               secs);
    }
    ret = ucoll_recv(&v, 1, UCOLL_INT32, 1, 6, world, NULL);
    if (ret != UCOLL_ERR_PEER) {
        FAIL("a receive from the dead peer afterwards: %s", ucoll_strerror(ret));
    }
    free(big);
    printf("p2p_test: %s\n", failures ? "FAIL" : "PASS");
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

/* A rendezvous receive withdrawn after it answered the announcement (CTS;
 * only with UCOLL_RNDV_MODE=tag): rank 1 announces 1 MiB and then sleeps without
 * progress, so that its send starts only after rank 0's receive timed out.
 * UCX cannot cancel that send; rank 0 must take and drop its data, or
 * rank 1's send never completes. Nothing may land in rank 0's buffer. */
static void run_timeout_rndv(void)
{
    enum { BIG = 1 << 20 };
    char *big = malloc(BIG);
    ucoll_req_t *r;
    int ret, tries = 0;

    if (big == NULL) {
        FAIL("no memory");
        return;
    }
    if (getenv("UCOLL_RNDV_MODE") == NULL || strcmp(getenv("UCOLL_RNDV_MODE"), "tag") != 0) {
        free(big); /* other mechanisms take the data without the sender */
        return;
    }
    memset(big, me == 0 ? 0x5a : 0x33, BIG);
    if (me == 0) {
        ret = ucoll_recv(big, BIG, UCOLL_BYTE, 1, 96, world, NULL);
        if (ret != UCOLL_ERR_TIMEOUT) {
            FAIL("rendezvous receive returned %s, expected a timeout", ucoll_strerror(ret));
        }
        sleep(3); /* rank 1's send goes out meanwhile */
        sync_all(1);
        for (size_t i = 0; i < BIG; i++) {
            if (big[i] != 0x5a) {
                FAIL("a withdrawn rendezvous receive was written to at byte %zu", i);
                break;
            }
        }
    } else if (me == 1) {
        OK(ucoll_isend(big, BIG, UCOLL_BYTE, 0, 96, world, &r));
        sleep(2); /* no progress: the CTS waits, rank 0 times out */
        while ((ret = ucoll_wait(r, NULL)) == UCOLL_ERR_TIMEOUT && ++tries < 5) {
        }
        if (ret != UCOLL_OK) {
            FAIL("a send whose receive was withdrawn after its CTS: %s after %d s",
                 ucoll_strerror(ret), tries + 1);
        }
        sync_all(1);
    } else {
        sync_all(1);
    }
    free(big);
}

static void run_timeout(void)
{
    struct timespec t0;
    ucoll_req_t *r;
    double secs;
    int v = 0, w = -1, ret;

    if (me == 0) {
        /* a blocking receive that times out is withdrawn: the message sent
         * later lands in the unexpected queue, not in w */
        ret = ucoll_recv(&w, 1, UCOLL_INT32, 1, 97, world, NULL);
        if (ret != UCOLL_ERR_TIMEOUT || w != -1) {
            FAIL("blocking receive returned %s (w = %d), expected a timeout", ucoll_strerror(ret),
                 w);
        }
        OK(ucoll_irecv(&v, 1, UCOLL_INT32, 1, 99, world, &r));
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ret = ucoll_wait(r, NULL);
        secs = seconds_since(&t0);
        if (ret != UCOLL_ERR_TIMEOUT || secs < 0.9 || secs > 5) {
            FAIL("wait returned %s after %.2f s, expected a timeout after 1 s", ucoll_strerror(ret),
                 secs);
        }
        OK(ucoll_send(&v, 0, UCOLL_BYTE, 1, 98, world));
        OK(ucoll_wait(r, NULL));
        if (v != 1234) {
            FAIL("late message carried %d", v);
        }
        if (w != -1) {
            FAIL("a withdrawn receive was written to (%d)", w);
        }
        OK(ucoll_recv(&w, 1, UCOLL_INT32, 1, 97, world, NULL));
        if (w != 4321) {
            FAIL("message to the withdrawn receive carried %d, expected 4321", w);
        }
    } else if (me == 1) {
        /* rank 0 only says go after its own timeout: wait through ours */
        OK(ucoll_irecv(&v, 0, UCOLL_BYTE, 0, 98, world, &r));
        while ((ret = ucoll_wait(r, NULL)) == UCOLL_ERR_TIMEOUT) {
        }
        OK(ret);
        v = 1234;
        OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 99, world));
        v = 4321;
        OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 97, world));
    }
    run_timeout_rndv();
}

/* Rendezvous sends whose receiver finalizes at once, as in an OSU
 * bandwidth run: windows of FIN_WINDOW messages of FIN_BYTES from rank 0
 * to rank 1, each acknowledged, and rank 1 goes to finalize after the
 * last. The receiver's answers to the last window (a FIN per message
 * under UCOLL_RNDV_MODE=get) may still be queued inside UCX then: its
 * finalize must push them out before it sits in the final fence, or rank
 * 0's sends never complete and the job hangs (without that, 5 jobs of 30
 * hung here under get). The messages of a window carry the same bytes and
 * land in one buffer, as in OSU's test: the buffer is checked after each
 * window. */
static void run_finalize_held(void)
{
    enum { FIN_WINDOW = 64, FIN_BYTES = 4 << 20, FIN_ROUNDS = 10 };
    ucoll_req_t *r[FIN_WINDOW];
    char *buf = malloc(FIN_BYTES);
    int i, k, ack = 0;

    if (buf == NULL) {
        FAIL("no memory");
        return;
    }
    sync_all(1);
    for (k = 0; k < FIN_ROUNDS && me < 2; k++) {
        memset(buf, me == 0 ? 'a' + k : 0, FIN_BYTES);
        for (i = 0; i < FIN_WINDOW; i++) {
            if (me == 0) {
                OK(ucoll_isend(buf, FIN_BYTES, UCOLL_BYTE, 1, 7, world, &r[i]));
            } else {
                OK(ucoll_irecv(buf, FIN_BYTES, UCOLL_BYTE, 0, 7, world, &r[i]));
            }
        }
        OK(ucoll_waitall(FIN_WINDOW, r));
        if (me == 0) {
            OK(ucoll_recv(&ack, 1, UCOLL_INT32, 1, 8, world, NULL));
        } else {
            if (!all_bytes(buf, FIN_BYTES, 'a' + k)) {
                FAIL("window %d: rendezvous messages hold other data than was sent", k);
            }
            OK(ucoll_send(&ack, 1, UCOLL_INT32, 0, 8, world));
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    ucoll_ctx_t *ctx;
    int ret;

    if (!strcmp(mode, "timeout")) {
        setenv("UCOLL_TIMEOUT", "1", 1);
    }
    ret = ucoll_init(&ctx);
    if (ret != UCOLL_OK) {
        fprintf(stderr, "ucoll_init: %s\n", ucoll_strerror(ret));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    me = ucoll_comm_rank(world);
    np = ucoll_comm_size(world);
    if (np > 64) {
        fprintf(stderr, "p2p_test: at most 64 ranks\n");
        return 1;
    }
    if (!strcmp(mode, "kill") || !strcmp(mode, "killwild")) {
        if (np < 2) {
            fprintf(stderr, "p2p_test %s needs 2 ranks\n", mode);
            return 1;
        }
        return run_kill(!strcmp(mode, "killwild"));
    }
    if (!strcmp(mode, "killrndv") || !strcmp(mode, "killrndv-recv")) {
        if (np < 2) {
            fprintf(stderr, "p2p_test %s needs 2 ranks\n", mode);
            return 1;
        }
        run_killrndv(!strcmp(mode, "killrndv-recv"));
    }
    if (!strcmp(mode, "timeout")) {
        if (np > 1) {
            run_timeout();
        }
        goto out;
    }
    if (!strcmp(mode, "finalize")) {
        if (np > 1) {
            run_finalize_held();
        }
        goto out;
    }
    test_args();
    test_self();
    sync_all(1);
    test_sizes();
    sync_all(1);
    if (np > 1) {
        test_wildcard();
        sync_all(1);
        test_order();
        test_truncate();
        test_many();
        test_flood();
        sync_all(1);
        test_huge();
        sync_all(1);
    }
out:
    ret = ucoll_finalize(ctx);
    if (ret != UCOLL_OK) {
        FAIL("ucoll_finalize: %s", ucoll_strerror(ret));
    }
    if (me == 0 || failures) {
        printf("p2p_test rank %d (%d ranks): %s\n", me, np, failures ? "FAIL" : "PASS");
    }
    return failures ? 1 : 0;
}

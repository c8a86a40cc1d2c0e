/*
 * Lifetimes at the edges: what finalize, a timed-out blocking collective and
 * ucoll_comm_free leave behind. Two ranks (more are told to sit out where a
 * case needs exactly two); every case prints "lifetimes: PASS" on rank 0
 * when it holds. Modes:
 *
 *   finalize-cts  rank 1 refuses a rendezvous message (receive too small),
 *                 which it answers with a CTS it sends without a request,
 *                 and finalizes at once; rank 0's blocking send needs that
 *                 CTS. The announcement is taken from the unexpected queue,
 *                 so over TCP the CTS is the first thing rank 1 sends to
 *                 rank 0, on a connection still being set up: unless
 *                 finalize flushes UCX before its fence, it is still queued
 *                 there when rank 1 stops progressing, and rank 0 waits in
 *                 vain (UCOLL_TIMEOUT turns that into an error, not a hang).
 *   finalize-dead rank 1 exits without finalizing; rank 0 notices and must
 *                 finalize within seconds (the final fence is over the live
 *                 ranks only).
 *   unwaited      each rank starts a large nonblocking allreduce (and a
 *                 receive) and finalizes without waiting, rank 1 later than
 *                 rank 0: rank 1's data reaches rank 0 while rank 0
 *                 finalizes. Nothing may be written into freed scratch or
 *                 reach a freed schedule (run under ASan or valgrind), and
 *                 nothing into the user's buffers after finalize returns.
 *   timeout-coll  rank 0's blocking bcast times out (UCOLL_TIMEOUT=1) before
 *                 the root, rank 1, sends; afterwards the root's data must
 *                 not land in rank 0's buffer. Argument: element count.
 *   timeout-gatherv the same with a gatherv to rank 0 (UCOLL_GATHERV_ALGO
 *                 picks the algorithm; binomial times out in its first
 *                 schedule, the counts): afterwards nothing of rank 1's
 *                 late call lands in rank 0's buffer. Argument: count.
 *                 With LIFETIMES_LATE_FINALIZE=S rank 0 finalizes S
 *                 seconds late: rank 1's finalize gives up on its held
 *                 send first, and must still free that call's state (run
 *                 under AddressSanitizer: no leak).
 *   comm-free     ucoll_comm_free of a split communicator with a receive
 *                 still pending fails with UCOLL_ERR_BUSY and changes
 *                 nothing; once the receive completes it succeeds, and the
 *                 messages still queued on it (eager and rendezvous), or
 *                 arriving after, are dropped: the rendezvous sends complete
 *                 instead of waiting forever (UCOLL_TIMEOUT=10 bounds it).
 */
#include <ucoll.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int me, np, failures;
static ucoll_comm_t *world;

#define FAIL(...)                                                          \
    do {                                                                   \
        fprintf(stderr, "lifetimes[%d]: FAIL at line %d: ", me, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                      \
        fprintf(stderr, "\n");                                             \
        failures++;                                                        \
    } while (0)

#define OK(_call)                                       \
    do {                                                \
        int _r = (_call);                               \
        if (_r != UCOLL_OK) {                           \
            FAIL("%s: %s", #_call, ucoll_strerror(_r)); \
        }                                               \
    } while (0)

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A receive that outlasts UCOLL_TIMEOUT: wait again while it times out. */
static int recv_patient(void *buf, size_t count, ucoll_dtype_t dt, int src, int tag,
                        ucoll_comm_t *comm)
{
    ucoll_req_t *r;
    int ret = ucoll_irecv(buf, count, dt, src, tag, comm, &r);

    if (ret != UCOLL_OK) {
        return ret;
    }
    while ((ret = ucoll_wait(r, NULL)) == UCOLL_ERR_TIMEOUT) {
    }
    return ret;
}

static int finish(ucoll_ctx_t *ctx)
{
    int ret = ucoll_finalize(ctx);

    if (ret != UCOLL_OK) {
        FAIL("ucoll_finalize: %s", ucoll_strerror(ret));
    }
    if (me == 0) {
        printf("lifetimes: %s\n", failures ? "FAIL" : "PASS");
    }
    return failures ? 1 : 0;
}

/* ---- finalize-cts ---------------------------------------------------------- */

static int run_finalize_cts(ucoll_ctx_t *ctx)
{
    const size_t n = 1 << 20;
    char *big = calloc(n, 1);
    char small[8];
    int ret;

    if (me == 0) {
        ucoll_req_t *req;
        double t0 = now_s();

        /* the announcement goes out; then this rank looks away while rank 1
         * answers, so that the connection rank 1 opens for its CTS is not
         * accepted before rank 1 has entered finalize */
        OK(ucoll_isend(big, n, UCOLL_BYTE, 1, 5, world, &req));
        while (now_s() - t0 < 0.3) {
            ucoll_progress(ctx);
        }
        usleep(1500000);
        ret = ucoll_wait(req, NULL);
        if (ret != UCOLL_OK) {
            FAIL("send to a receiver that truncates and finalizes: %s (its CTS was lost)",
                 ucoll_strerror(ret));
        }
    } else if (me == 1) {
        double t0 = now_s();

        /* take the announcement in first: matched from the unexpected
         * queue, the receive connects to rank 0 only to answer it */
        while (now_s() - t0 < 0.5) {
            ucoll_progress(ctx);
        }
        ret = ucoll_recv(small, sizeof(small), UCOLL_BYTE, 0, 5, world, NULL);
        if (ret != UCOLL_ERR_TRUNCATE) {
            FAIL("receive into a small buffer: %s, expected truncation", ucoll_strerror(ret));
        }
    }
    free(big);
    return finish(ctx);
}

/* ---- finalize-dead --------------------------------------------------------- */

static int run_finalize_dead(ucoll_ctx_t *ctx)
{
    double t0, secs;
    int v = 0, ret;

    /* the launcher ends the job once a rank exits without finalizing: rank
     * 0 outlives its SIGTERM long enough to finalize and report (SIGKILL
     * comes 2 s later under ucollrun) */
    signal(SIGTERM, SIG_IGN);
    OK(ucoll_barrier(world));
    if (me != 0) {
        _exit(0);
    }
    ret = ucoll_recv(&v, 1, UCOLL_INT32, 1, 0, world, NULL);
    if (ret != UCOLL_ERR_PEER) {
        FAIL("receive from a dead peer: %s", ucoll_strerror(ret));
    }
    t0 = now_s();
    ret = ucoll_finalize(ctx);
    secs = now_s() - t0;
    if (ret != UCOLL_OK || secs > 1.5) {
        FAIL("finalize with a dead peer: %s after %.2f s", ucoll_strerror(ret), secs);
    }
    printf("lifetimes: finalize with a dead peer took %.2f s\n", secs);
    printf("lifetimes: %s\n", failures ? "FAIL" : "PASS");
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

/* ---- unwaited -------------------------------------------------------------- */

static int run_unwaited(ucoll_ctx_t *ctx)
{
    const size_t n = 1 << 18; /* 1 MiB of floats: rendezvous, scratch */
    float *s = malloc(n * sizeof(float)), *r = malloc(n * sizeof(float));
    float *copy = malloc(n * sizeof(float));
    int v = -1, v_after;
    ucoll_req_t *req, *rreq;

    for (size_t i = 0; i < n; i++) {
        s[i] = (float)(me + 1);
        r[i] = -1.0f;
    }
    if (np != 2) {
        return finish(ctx);
    }
    OK(ucoll_barrier(world));
    if (me == 1) {
        usleep(300000); /* rank 0 is finalizing by now */
    }
    OK(ucoll_iallreduce(s, r, n, UCOLL_FLOAT32, UCOLL_SUM, world, &req));
    /* a receive that rank 1's message matches while rank 0 finalizes */
    OK(ucoll_irecv(&v, 1, UCOLL_INT32, 1 - me, 3, world, &rreq));
    if (me == 1) {
        int one = 1;

        OK(ucoll_send(&one, 1, UCOLL_INT32, 0, 3, world));
    }
    (void)req;
    (void)rreq;
    if (ucoll_finalize(ctx) != UCOLL_OK) {
        FAIL("finalize with requests outstanding");
    }
    /* nothing may write into the buffers once finalize has returned */
    memcpy(copy, r, n * sizeof(float));
    v_after = v;
    usleep(200000);
    if (memcmp(copy, r, n * sizeof(float)) != 0 || v != v_after) {
        FAIL("a buffer was written after finalize returned");
    }
    if (me == 0) {
        printf("lifetimes: %s\n", failures ? "FAIL" : "PASS");
    }
    free(s);
    free(r);
    free(copy);
    return failures ? 1 : 0;
}

/* ---- timeout-coll, timeout-gatherv ----------------------------------------- */

/* The collective under test on n ints per rank: bcast from rank 1, or
 * gatherv to rank 0 (whose buf holds both blocks). */
static int timed_call(int gatherv, int *buf, size_t n)
{
    size_t counts[2] = {n, n}, displs[2] = {0, n};

    if (!gatherv) {
        return ucoll_bcast(buf, n, UCOLL_INT32, 1, world);
    }
    return me == 0 ? ucoll_gatherv(buf, n, buf, counts, displs, UCOLL_INT32, 0, world)
                   : ucoll_gatherv(buf, n, NULL, NULL, NULL, UCOLL_INT32, 0, world);
}

/* Rank 0 calls first and must time out; rank 1 calls 2 s later. Its data
 * then arrives at rank 0, and nothing may land in rank 0's buffer. */
static int run_timeout_coll(ucoll_ctx_t *ctx, size_t n, int gatherv)
{
    const char *name = gatherv ? "gatherv" : "bcast";
    size_t len = gatherv ? 2 * n : n;
    int *buf = malloc(len * sizeof(int)), go = 0, ret;

    if (np == 2 && me == 0) {
        for (size_t i = 0; i < len; i++) {
            buf[i] = -1;
        }
        ret = timed_call(gatherv, buf, n);
        if (ret != UCOLL_ERR_TIMEOUT) {
            FAIL("%s before rank 1: %s, expected a timeout", name, ucoll_strerror(ret));
        }
        for (size_t i = 0; i < len; i++) {
            buf[i] = 7;
        }
        /* rank 1's go comes after its call's messages (messages between
         * two ranks match in order): once go is in, they have arrived */
        OK(recv_patient(&go, 1, UCOLL_INT32, 1, 9, world));
        for (size_t i = 0; i < 20; i++) {
            ucoll_progress(ctx);
        }
        for (size_t i = 0; i < len; i++) {
            if (buf[i] != 7) {
                FAIL("the timed-out %s wrote %d into element %zu afterwards", name, buf[i], i);
                break;
            }
        }
    } else if (np == 2 && me == 1) {
        for (size_t i = 0; i < n; i++) {
            buf[i] = 42;
        }
        usleep(2000000);
        /* small: sent eagerly, done here; large: a rendezvous the other side
         * never answers, so this times out too */
        ret = timed_call(gatherv, buf, n);
        if (ret != UCOLL_OK && ret != UCOLL_ERR_TIMEOUT) {
            FAIL("rank 1's %s: %s", name, ucoll_strerror(ret));
        }
        go = 1;
        OK(ucoll_send(&go, 1, UCOLL_INT32, 0, 9, world));
    }
    if (me == 0 && getenv("LIFETIMES_LATE_FINALIZE")) {
        /* rank 1's large send, which UCX holds until rank 0 lets go, is
         * still held when rank 1's finalize stops waiting for it */
        sleep((unsigned)atoi(getenv("LIFETIMES_LATE_FINALIZE")));
    }
    free(buf);
    return finish(ctx);
}

/* ---- comm-free ------------------------------------------------------------- */

static int run_comm_free(ucoll_ctx_t *ctx)
{
    const size_t big = 1 << 20;
    char *data = calloc(big, 1);
    ucoll_comm_t *sub = NULL;
    ucoll_req_t *r, *s1, *s2, *s3;
    int v = 0, ret;

    (void)ctx;
    OK(ucoll_comm_split(world, me < 2 ? 0 : -1, 0, &sub));
    if (me >= 2) {
        OK(ucoll_barrier(world));
        free(data);
        return finish(ctx);
    }
    if (me == 0) {
        OK(ucoll_irecv(&v, 1, UCOLL_INT32, 1, 1, sub, &r));
        ret = ucoll_comm_free(sub);
        if (ret != UCOLL_ERR_BUSY) {
            FAIL("comm_free with a receive pending: %s, expected UCOLL_ERR_BUSY",
                 ucoll_strerror(ret));
        }
        OK(ucoll_send(&v, 1, UCOLL_INT32, 1, 100, world)); /* rank 1 sends now */
        OK(ucoll_wait(r, NULL));                           /* the communicator still works */
        OK(recv_patient(&v, 1, UCOLL_INT32, 1, 1, sub));
        if (v != 11) {
            FAIL("message on the communicator after a refused free: %d", v);
        }
        /* messages between two ranks arrive in order: once this is in,
         * rank 1's unreceived messages on sub are queued here */
        OK(recv_patient(&v, 1, UCOLL_INT32, 1, 101, world));
        OK(ucoll_comm_free(sub));
        OK(ucoll_send(&v, 1, UCOLL_INT32, 1, 102, world));
        OK(recv_patient(&v, 1, UCOLL_INT32, 1, 103, world)); /* answering late ones meanwhile */
    } else {
        OK(recv_patient(&v, 1, UCOLL_INT32, 0, 100, world));
        v = 11;
        OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 1, sub));
        OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 1, sub));
        /* never received: one eager, one rendezvous, which waits for an
         * answer from rank 0 and must get one once rank 0 frees sub */
        OK(ucoll_isend(&v, 1, UCOLL_INT32, 0, 2, sub, &s1));
        OK(ucoll_isend(data, big, UCOLL_BYTE, 0, 3, sub, &s2));
        OK(ucoll_wait(s1, NULL));
        OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 101, world));
        OK(recv_patient(&v, 1, UCOLL_INT32, 0, 102, world));
        ret = ucoll_wait(s2, NULL);
        if (ret != UCOLL_OK) {
            FAIL("rendezvous send queued on a communicator its receiver freed: %s",
                 ucoll_strerror(ret));
        }
        /* and one that arrives after the free */
        OK(ucoll_isend(data, big, UCOLL_BYTE, 0, 4, sub, &s3));
        ret = ucoll_wait(s3, NULL);
        if (ret != UCOLL_OK) {
            FAIL("rendezvous send to a communicator its receiver had freed: %s",
                 ucoll_strerror(ret));
        }
        OK(ucoll_comm_free(sub));
        OK(ucoll_send(&v, 1, UCOLL_INT32, 0, 103, world));
    }
    OK(ucoll_barrier(world));
    free(data);
    return finish(ctx);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    ucoll_ctx_t *ctx;
    int ret;

    if (!strcmp(mode, "timeout-coll") || !strcmp(mode, "timeout-gatherv")) {
        setenv("UCOLL_TIMEOUT", "1", 1);
    } else if (!strcmp(mode, "finalize-cts") || !strcmp(mode, "comm-free")) {
        setenv("UCOLL_TIMEOUT", "10", 1);
    }
    ret = ucoll_init(&ctx);
    if (ret != UCOLL_OK) {
        fprintf(stderr, "ucoll_init: %s\n", ucoll_strerror(ret));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    me = ucoll_comm_rank(world);
    np = ucoll_comm_size(world);
    if (!strcmp(mode, "finalize-cts")) {
        return run_finalize_cts(ctx);
    }
    if (!strcmp(mode, "finalize-dead")) {
        return run_finalize_dead(ctx);
    }
    if (!strcmp(mode, "unwaited")) {
        return run_unwaited(ctx);
    }
    if (!strcmp(mode, "timeout-coll")) {
        return run_timeout_coll(ctx, argc > 2 ? (size_t)atol(argv[2]) : 4, 0);
    }
    if (!strcmp(mode, "timeout-gatherv")) {
        return run_timeout_coll(ctx, argc > 2 ? (size_t)atol(argv[2]) : 4, 1);
    }
    if (!strcmp(mode, "comm-free")) {
        return run_comm_free(ctx);
    }
    fprintf(stderr, "usage: lifetimes finalize-cts|finalize-dead|unwaited|timeout-coll "
                    "[COUNT]|timeout-gatherv [COUNT]|comm-free\n");
    ucoll_finalize(ctx);
    return 2;
}

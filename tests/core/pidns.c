/*
 * Liveness of a same-node peer that lives in another pid namespace (run by
 * run_pidns.sh, which starts one rank under `unshare --pid`):
 *   pidns DEAD_RANK
 * Every rank talks to every other one (so every endpoint is wired, and the
 * transport logs how it watches each peer), then all run broadcasts for
 * LIVE_S, long enough for several rounds of the liveness watch, which must
 * take no live peer for dead; rank DEAD_RANK then exits without finalizing, and every other rank's
 * receive from it, broadcast from it and barrier must fail with
 * UCOLL_ERR_PEER within seconds. The job has lost a rank, so the survivors
 * print "pidns: rank R: PASS ..." (or FAIL) and exit without a collective
 * finalize.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucoll.h>
#include <unistd.h>

#define DETECT_MAX_S 10.0
#define LIVE_S       0.5

static int rank = -1;

#define CHECK(_cond, ...)                                    \
    do {                                                     \
        if (!(_cond)) {                                      \
            fprintf(stderr, "pidns: rank %d: FAIL: ", rank); \
            fprintf(stderr, __VA_ARGS__);                    \
            fprintf(stderr, "\n");                           \
            fflush(stderr);                                  \
            _exit(1);                                        \
        }                                                    \
    } while (0)

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
    ucoll_ctx_t *ctx;
    ucoll_comm_t *world;
    struct timespec t0;
    int size, dead, st, st_recv, st_bcast, st_barrier;
    int32_t v = 0;
    double secs;

    dead = argc > 1 ? atoi(argv[1]) : 1;
    st = ucoll_init(&ctx);
    if (st != UCOLL_OK) {
        fprintf(stderr, "pidns: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    CHECK(size >= 2 && dead >= 0 && dead < size, "dead rank %d in a world of %d", dead, size);
    /* the launcher ends the job once a rank exits without finalizing: the
     * survivors outlive its SIGTERM long enough to report (they are
     * SIGKILLed after a grace period) */
    signal(SIGTERM, SIG_IGN);

    /* everyone talks to everyone: round d exchanges with rank +-d */
    for (int d = 1; d < size; d++) {
        int to = (rank + d) % size, from = (rank - d + size) % size;
        int32_t out = rank, in = -1;
        ucoll_req_t *req;

        CHECK(ucoll_irecv(&in, 1, UCOLL_INT32, from, d, world, &req) == UCOLL_OK, "irecv");
        CHECK(ucoll_send(&out, 1, UCOLL_INT32, to, d, world) == UCOLL_OK, "send to %d", to);
        CHECK(ucoll_wait(req, NULL) == UCOLL_OK && in == from, "receive from %d", from);
    }
    printf("pidns: rank %d: pid %ld, wired to %d peers\n", rank, (long)getpid(), size - 1);
    fflush(stdout);
    /* rank 0 says when LIVE_S are over, so that all run as many */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int32_t go = 1, n = 0; go; n++) {
        go = rank == 0 ? seconds_since(&t0) < LIVE_S : -1;
        st = ucoll_bcast(&go, 1, UCOLL_INT32, 0, world);
        CHECK(st == UCOLL_OK && go >= 0, "broadcast %d among live ranks: %s", n,
              ucoll_strerror(st));
    }
    CHECK(ucoll_barrier(world) == UCOLL_OK, "first barrier");
    if (rank == dead) {
        usleep(100000);
        _exit(0);
    }

    clock_gettime(CLOCK_MONOTONIC, &t0);
    st_recv = ucoll_recv(&v, 1, UCOLL_INT32, dead, 7, world, NULL);
    st_bcast = ucoll_bcast(&v, 1, UCOLL_INT32, dead, world);
    st_barrier = ucoll_barrier(world);
    secs = seconds_since(&t0);
    CHECK(st_recv == UCOLL_ERR_PEER && st_bcast == UCOLL_ERR_PEER && st_barrier == UCOLL_ERR_PEER &&
              secs < DETECT_MAX_S,
          "dead rank %d: receive %s, bcast %s, barrier %s after %.2f s", dead,
          ucoll_strerror(st_recv), ucoll_strerror(st_bcast), ucoll_strerror(st_barrier), secs);
    printf("pidns: rank %d: PASS: dead rank %d detected in %.2f s\n", rank, dead, secs);
    fflush(stdout);
    _exit(0);
}

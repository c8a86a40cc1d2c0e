/*
 * A rank dies in the middle of a collective: every survivor must come out
 * of the call within seconds, without UCOLL_TIMEOUT, whether or not it
 * talks to the dead rank (the failure travels through the job: DOWN in
 * lib/transport/wire.h), and the job must go on where it can.
 *
 *   kill OP MODE [COUNT]
 *     OP     allreduce | bcast | allgather (the algorithm forced by
 *            UCOLL_<OP>_ALGO, as the runner sets it)
 *     MODE   absent: the victim never enters the call; it dies while the
 *                    others are in it (every survivor depends on it: each
 *                    must return UCOLL_ERR_PEER)
 *            mid:    the victim starts the call (nonblocking: its first
 *                    messages leave), drives it a little (three tests)
 *                    and dies; a survivor may
 *                    still finish with the right result if it had all it
 *                    needed, or returns UCOLL_ERR_PEER
 *            bcast's victim is rank 1, the root when absent (every rank
 *            depends on it), else an inner node of most trees and chains
 *            under root 0; for the others the victim is the last rank
 *     COUNT  int32 elements (default 16384: segmented, rendezvous sizes)
 *   KILL_VICTIM=R  the rank that dies (1..p-1) instead of the above
 *
 * Each survivor then checks that:
 *  - a barrier on the world fails at once (UCOLL_ERR_PEER): a communicator
 *    with a failed member runs no collective;
 *  - the communicator of the survivors (split before the failure) still
 *    works: an allreduce on it gives the right sum;
 *  - ucoll_finalize returns UCOLL_OK.
 * It prints "kill: rank R ok" when all held. The victim gets SIGKILL from
 * itself: no finalize, no goodbye.
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int root; /* bcast's root */

enum { OP_ALLREDUCE, OP_BCAST, OP_ALLGATHER };

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Element i of rank r's contribution. */
static int32_t val(int r, size_t i)
{
    return (int32_t)(r * 1000 + (int)(i % 997));
}

/* Start (nonblocking) or run (req_p NULL) the call on comm. */
static int call(int op, ucoll_comm_t *comm, int32_t *sbuf, int32_t *rbuf, size_t count,
                ucoll_req_t **req_p)
{
    switch (op) {
    case OP_ALLREDUCE:
        return req_p ? ucoll_iallreduce(sbuf, rbuf, count, UCOLL_INT32, UCOLL_SUM, comm, req_p)
                     : ucoll_allreduce(sbuf, rbuf, count, UCOLL_INT32, UCOLL_SUM, comm);
    case OP_BCAST:
        return req_p ? ucoll_ibcast(rbuf, count, UCOLL_INT32, root, comm, req_p)
                     : ucoll_bcast(rbuf, count, UCOLL_INT32, root, comm);
    default:
        return req_p ? ucoll_iallgather(sbuf, rbuf, count, UCOLL_INT32, comm, req_p)
                     : ucoll_allgather(sbuf, rbuf, count, UCOLL_INT32, comm);
    }
}

/* Whether rbuf holds the call's right result on a world of size ranks. */
static int result_ok(int op, const int32_t *rbuf, size_t count, int size)
{
    for (size_t i = 0; i < count; i++) {
        int32_t want = 0;

        if (op == OP_ALLREDUCE) {
            for (int r = 0; r < size; r++) {
                want += val(r, i);
            }
        } else {
            want = val(op == OP_BCAST ? root : 0, i);
        }
        if (rbuf[i] != want) {
            return 0;
        }
    }
    if (op == OP_ALLGATHER) {
        for (int r = 0; r < size; r++) {
            for (size_t i = 0; i < count; i++) {
                if (rbuf[(size_t)r * count + i] != val(r, i)) {
                    return 0;
                }
            }
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    int op, mid, size, victim, st, color, srank, ssize;
    size_t count = 16384, rcount;
    ucoll_comm_t *world, *surv;
    ucoll_ctx_t *ctx;
    ucoll_req_t *req = NULL;
    int32_t *sbuf, *rbuf, one, sum;
    double t0, t_call, t_barrier;

    if (argc < 3) {
        fprintf(stderr, "usage: kill allreduce|bcast|allgather absent|mid [COUNT]\n");
        return 2;
    }
    op = !strcmp(argv[1], "allreduce") ? OP_ALLREDUCE
         : !strcmp(argv[1], "bcast")   ? OP_BCAST
         : !strcmp(argv[1], "allgather") ? OP_ALLGATHER
                                         : -1;
    mid = !strcmp(argv[2], "mid");
    if (op < 0 || (!mid && strcmp(argv[2], "absent"))) {
        fprintf(stderr, "kill: unknown op %s or mode %s\n", argv[1], argv[2]);
        return 2;
    }
    if (argc > 3) {
        count = strtoul(argv[3], NULL, 0);
    }
    st = ucoll_init(&ctx);
    if (st != UCOLL_OK) {
        fprintf(stderr, "kill: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    if (size < 3) {
        fprintf(stderr, "kill: needs 3 ranks or more\n");
        return 2;
    }
    victim = getenv("KILL_VICTIM") ? atoi(getenv("KILL_VICTIM")) : op == OP_BCAST ? 1 : size - 1;
    if (victim < 1 || victim >= size) {
        fprintf(stderr, "kill: KILL_VICTIM must be in 1..%d\n", size - 1);
        return 2;
    }
    root = mid ? 0 : victim;

    rcount = op == OP_ALLGATHER ? count * (size_t)size : count;
    sbuf = malloc(count * sizeof(*sbuf));
    rbuf = malloc(rcount * sizeof(*rbuf));
    if (sbuf == NULL || rbuf == NULL) {
        return 1;
    }
    for (size_t i = 0; i < count; i++) {
        sbuf[i] = val(rank, i);
    }
    for (size_t i = 0; i < rcount; i++) {
        rbuf[i] = op == OP_BCAST && rank == root ? val(root, i) : -1;
    }

    /* the survivors' communicator, made while everyone lives */
    color = rank == victim ? 1 : 0;
    st = ucoll_comm_split(world, color, rank, &surv);
    CHECK(st == UCOLL_OK, "split: %s", ucoll_strerror(st));
    /* one good call first: endpoints wired, schedules cached, the
     * algorithm forced is the one running */
    st = call(op, world, sbuf, rbuf, count, NULL);
    CHECK(st == UCOLL_OK && result_ok(op, rbuf, count, size), "first call: %s",
          ucoll_strerror(st));
    /* the victim may leave this barrier and die before its last message
     * of it has left the process (UCX queues sends): a survivor may see
     * the barrier fail, and then its call below fails at once */
    st = ucoll_barrier(world);
    CHECK(st == UCOLL_OK || (st == UCOLL_ERR_PEER && rank != victim), "barrier: %s",
          ucoll_strerror(st));
    if (failures) {
        return 1;
    }

    if (rank == victim) {
        if (mid) {
            int done = 0;

            st = call(op, world, sbuf, rbuf, count, &req);
            for (int i = 0; i < 3 && st == UCOLL_OK && !done; i++) {
                st = ucoll_test(req, &done, NULL);
            }
        } else {
            usleep(200000); /* the others are in the call by now */
        }
        fflush(stdout);
        raise(SIGKILL);
    }

    for (size_t i = 0; i < rcount; i++) {
        rbuf[i] = op == OP_BCAST && rank == root ? val(root, i) : -1;
    }
    t0 = now();
    st = call(op, world, sbuf, rbuf, count, NULL);
    t_call = now() - t0;
    if (mid) {
        CHECK(st == UCOLL_ERR_PEER || (st == UCOLL_OK && result_ok(op, rbuf, count, size)),
              "%s with rank %d dying in it: %s%s", argv[1], victim, ucoll_strerror(st),
              st == UCOLL_OK ? " and a wrong result" : "");
    } else {
        CHECK(st == UCOLL_ERR_PEER, "%s with rank %d absent: %s", argv[1], victim,
              ucoll_strerror(st));
    }
    CHECK(t_call < 20, "the call took %.1f s", t_call);

    t0 = now();
    st = ucoll_barrier(world);
    t_barrier = now() - t0;
    CHECK(st == UCOLL_ERR_PEER, "barrier after the failure: %s", ucoll_strerror(st));

    srank = ucoll_comm_rank(surv);
    ssize = ucoll_comm_size(surv);
    one = srank + 1;
    sum = -1;
    st = ucoll_allreduce(&one, &sum, 1, UCOLL_INT32, UCOLL_SUM, surv);
    CHECK(st == UCOLL_OK && sum == ssize * (ssize + 1) / 2,
          "allreduce among the %d survivors: %s, sum %d", ssize, ucoll_strerror(st), (int)sum);
    st = ucoll_barrier(surv);
    CHECK(st == UCOLL_OK, "barrier among the survivors: %s", ucoll_strerror(st));

    printf("kill: rank %d: %s %s, rank %d dead: call %.3f s, barrier after %.3f s\n", rank,
           argv[1], argv[2], victim, t_call, t_barrier);
    fflush(stdout);
    st = ucoll_comm_free(surv);
    CHECK(st == UCOLL_OK, "comm_free: %s", ucoll_strerror(st));
    st = ucoll_finalize(ctx);
    CHECK(st == UCOLL_OK, "finalize: %s", ucoll_strerror(st));
    free(sbuf);
    free(rbuf);
    printf("kill: rank %d %s\n", rank, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

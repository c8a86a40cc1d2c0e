/*
 * A collective's message that no receive will ever take, because a failure
 * ended the collective on its receiver, must not hold its sender.
 *
 * Three ranks; the bcast forced to linear (UCOLL_BCAST_ALGO=linear, as the
 * test sets it), 1 MiB, so that the root's messages are rendezvous ones.
 *  - rank 0 starts the bcast (it sends to ranks 1 and 2), then tells rank 2
 *    to die;
 *  - rank 1 is not in the bcast: it waits for a message from rank 2, so
 *    rank 0's message reaches it unexpected; its receive fails when rank 2
 *    dies, and then its bcast fails at once (a communicator with a failed
 *    member runs no collective), without taking rank 0's message;
 *  - rank 2 dies (SIGKILL) once told.
 * Rank 0's bcast must end with UCOLL_ERR_PEER within seconds. Over shared
 * memory its message to rank 1 is an AM rendezvous that completes only
 * when rank 1 takes or releases it: kept in rank 1's unexpected queue, it
 * held rank 0 until rank 1 finalized, while rank 1 waited for rank 0 in
 * the next collective. Then ranks 0 and 1 run an allreduce on their own
 * communicator (split before the failure) and finalize; each prints
 * "kill_held: rank R ok".
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define COUNT   (256 * 1024) /* int32: 1 MiB */
#define TAG_GO  7
#define TAG_NOT 8

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
    ucoll_comm_t *world, *surv;
    ucoll_req_t *req;
    ucoll_ctx_t *ctx;
    int32_t *buf, go = 1, one, sum;
    double t0, t;
    int st;

    st = ucoll_init(&ctx);
    if (st != UCOLL_OK) {
        fprintf(stderr, "kill_held: ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    if (ucoll_comm_size(world) != 3) {
        fprintf(stderr, "kill_held: needs 3 ranks\n");
        return 2;
    }
    buf = calloc(COUNT, sizeof(*buf));
    if (buf == NULL) {
        return 1;
    }
    st = ucoll_comm_split(world, rank == 2, rank, &surv);
    CHECK(st == UCOLL_OK, "split: %s", ucoll_strerror(st));
    /* a good one first: every endpoint wired, the schedule cached */
    st = ucoll_bcast(buf, COUNT, UCOLL_INT32, 0, world);
    CHECK(st == UCOLL_OK, "first bcast: %s", ucoll_strerror(st));
    st = ucoll_allreduce(&go, &sum, 1, UCOLL_INT32, UCOLL_SUM, world);
    CHECK(st == UCOLL_OK && sum == 3, "allreduce: %s", ucoll_strerror(st));
    if (failures) {
        return 1;
    }

    switch (rank) {
    case 2:
        st = ucoll_recv(&go, 1, UCOLL_INT32, 0, TAG_GO, world, NULL);
        fflush(stdout);
        raise(SIGKILL);
        return 1;
    case 0:
        st = ucoll_ibcast(buf, COUNT, UCOLL_INT32, 0, world, &req);
        CHECK(st == UCOLL_OK, "ibcast: %s", ucoll_strerror(st));
        if (st == UCOLL_OK) {
            st = ucoll_send(&go, 1, UCOLL_INT32, 2, TAG_GO, world);
            CHECK(st == UCOLL_OK, "telling rank 2 to die: %s", ucoll_strerror(st));
            t0 = now();
            st = ucoll_wait(req, NULL);
            t = now() - t0;
            CHECK(st == UCOLL_ERR_PEER, "bcast with rank 2 dying: %s", ucoll_strerror(st));
            CHECK(t < 20, "the bcast took %.1f s", t);
        }
        break;
    default:
        st = ucoll_recv(&go, 1, UCOLL_INT32, 2, TAG_NOT, world, NULL);
        CHECK(st == UCOLL_ERR_PEER, "receive from the dying rank 2: %s", ucoll_strerror(st));
        st = ucoll_bcast(buf, COUNT, UCOLL_INT32, 0, world);
        CHECK(st == UCOLL_ERR_PEER, "bcast after rank 2 died: %s", ucoll_strerror(st));
        break;
    }

    one = rank + 1;
    sum = -1;
    st = ucoll_allreduce(&one, &sum, 1, UCOLL_INT32, UCOLL_SUM, surv);
    CHECK(st == UCOLL_OK && sum == 3, "allreduce of ranks 0 and 1: %s, sum %d", ucoll_strerror(st),
          (int)sum);
    st = ucoll_comm_free(surv);
    CHECK(st == UCOLL_OK, "comm_free: %s", ucoll_strerror(st));
    st = ucoll_finalize(ctx);
    CHECK(st == UCOLL_OK, "finalize: %s", ucoll_strerror(st));
    free(buf);
    printf("kill_held: rank %d %s\n", rank, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

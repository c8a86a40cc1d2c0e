/*
 * Calls that the shm row duels against a message-based row
 * (UCOLL_SHM_DUEL, progress/shm.h ucoll__shm_duel_arm): every rank must
 * take the same row at every call, or the call hangs or moves the wrong
 * data. Run with UCOLL_SHM_DUEL=turn, the row changes every 32 calls of
 * a size, so both rows run here, and their changes fall:
 *   - between blocking calls (alltoall, reduce_scatter_block, in place and
 *     not, alternating buffers), with small calls on the communicator
 *     between them;
 *   - inside a run of nonblocking calls that every rank posts at once,
 *     with rank 0 late by 50 ms: the others take the rows of calls 32 and
 *     64 before rank 0 has posted any; and a small ibcast behind them;
 *   - inside such a run that a rank posts before it sends the message
 *     that rank 0 waits for before it posts its own: a call's start may
 *     not wait for a peer;
 *   - on a communicator freed right after a call that took the rival
 *     (the third and fourth calls of a size do): nothing of it may be
 *     left there.
 * The same runs of nonblocking calls for the shm allreduce whose way
 * changes every 32 calls (UCOLL_SHM_WAY_ADAPT=turn, with
 * UCOLL_ALLREDUCE_ALGO=shm), which every rank must take alike too.
 * Every result is checked.
 *
 *   duel [elements]   (int32 a pair or a block; default 32768: 128 KiB)
 *
 * Prints "duel: rank R of P: N cases, F failed".
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int size;

#define RUN 80 /* nonblocking calls posted at once: rounds 0, 1 and 2 */

static int32_t sval(long it, int r, size_t i)
{
    return (int32_t)((it * 31 + r * 7919 + (long)i * 17) % 100003);
}

/* alltoall input of call it: block q of rank r from sval(it, r * p + q, .) */
static void a2a_fill(long it, size_t n, int32_t *sbuf, int32_t *rbuf)
{
    for (int q = 0; q < size; q++) {
        for (size_t i = 0; i < n; i++) {
            sbuf[(size_t)q * n + i] = sval(it, rank * size + q, i);
            if (rbuf) {
                rbuf[(size_t)q * n + i] = -1;
            }
        }
    }
}

static void a2a_check(long it, size_t n, const int32_t *rbuf)
{
    for (int q = 0; q < size; q++) {
        for (size_t i = 0; i < n; i++) {
            if (rbuf[(size_t)q * n + i] != sval(it, q * size + rank, i)) {
                CHECK(0, "alltoall it %ld n %zu: block %d element %zu is %d, not %d", it, n, q, i,
                      rbuf[(size_t)q * n + i], sval(it, q * size + rank, i));
                return;
            }
        }
    }
    checks++;
}

static void rsb_fill(long it, size_t n, int32_t *sbuf)
{
    for (size_t i = 0; i < n * (size_t)size; i++) {
        sbuf[i] = sval(it, rank, i);
    }
}

static void rsb_check(long it, size_t n, const int32_t *rbuf)
{
    for (size_t i = 0; i < n; i++) {
        int32_t want = 0;

        for (int q = 0; q < size; q++) {
            want += sval(it, q, (size_t)rank * n + i);
        }
        if (rbuf[i] != want) {
            CHECK(0, "reduce_scatter_block it %ld n %zu: element %zu is %d, not %d", it, n, i,
                  rbuf[i], want);
            return;
        }
    }
    checks++;
}

/* RUN ialltoall of n posted at once, then waited for; rank 0 posts late
 * by delay_us, or (p2p) only after a message from the last rank, which
 * that rank sends once its own calls are posted. Then a small ibcast is
 * posted before the wait too (it runs after them). */
static void a2a_run(ucoll_comm_t *comm, long it0, size_t n, int32_t *sb, int32_t *rb, int delay_us,
                    int p2p)
{
    ucoll_req_t *req[RUN + 1];
    size_t blk = n * (size_t)size;
    int32_t token = 0, small[4];

    for (long j = 0; j < RUN; j++) {
        a2a_fill(it0 + j, n, sb + (size_t)j * blk, rb + (size_t)j * blk);
    }
    if (rank == 0 && delay_us) {
        usleep((useconds_t)delay_us);
    }
    if (rank == 0 && p2p && size > 1) {
        CHECK(ucoll_recv(&token, 1, UCOLL_INT32, size - 1, 7, comm, NULL) == UCOLL_OK, "recv");
        CHECK(token == 4242, "token %d", token);
    }
    for (long j = 0; j < RUN; j++) {
        CHECK(ucoll_ialltoall(sb + (size_t)j * blk, rb + (size_t)j * blk, n, UCOLL_INT32, comm,
                              &req[j]) == UCOLL_OK,
              "ialltoall it %ld", it0 + j);
    }
    for (int i = 0; i < 4; i++) {
        small[i] = rank == 0 ? (int32_t)(it0 + i) : -1;
    }
    CHECK(ucoll_ibcast(small, 4, UCOLL_INT32, 0, comm, &req[RUN]) == UCOLL_OK, "ibcast");
    if (rank == size - 1 && p2p && size > 1) {
        token = 4242;
        CHECK(ucoll_send(&token, 1, UCOLL_INT32, 0, 7, comm) == UCOLL_OK, "send");
    }
    CHECK(ucoll_waitall(RUN + 1, req) == UCOLL_OK, "waitall it %ld", it0);
    for (long j = 0; j < RUN; j++) {
        a2a_check(it0 + j, n, rb + (size_t)j * blk);
    }
    for (int i = 0; i < 4; i++) {
        CHECK(small[i] == (int32_t)(it0 + i), "ibcast element %d is %d", i, small[i]);
    }
}

/* RUN iallreduce (sum) of n int32 posted at once, rank 0 late by
 * delay_us */
static void ar_run(ucoll_comm_t *comm, long it0, size_t n, int32_t *sb, int32_t *rb, int delay_us)
{
    ucoll_req_t *req[RUN];

    for (long j = 0; j < RUN; j++) {
        for (size_t i = 0; i < n; i++) {
            sb[(size_t)j * n + i] = sval(it0 + j, rank, i);
        }
    }
    if (rank == 0 && delay_us) {
        usleep((useconds_t)delay_us);
    }
    for (long j = 0; j < RUN; j++) {
        CHECK(ucoll_iallreduce(sb + (size_t)j * n, rb + (size_t)j * n, n, UCOLL_INT32, UCOLL_SUM,
                               comm, &req[j]) == UCOLL_OK,
              "iallreduce it %ld", it0 + j);
    }
    CHECK(ucoll_waitall(RUN, req) == UCOLL_OK, "waitall it %ld", it0);
    for (long j = 0; j < RUN; j++) {
        for (size_t i = 0; i < n; i++) {
            int32_t want = 0;

            for (int q = 0; q < size; q++) {
                want += sval(it0 + j, q, i);
            }
            if (rb[(size_t)j * n + i] != want) {
                CHECK(0, "iallreduce it %ld: element %zu is %d, not %d", it0 + j, i,
                      rb[(size_t)j * n + i], want);
                break;
            }
        }
        checks++;
    }
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 32768;
    ucoll_comm_t *world;
    ucoll_ctx_t *ctx;
    int32_t *sb, *rb, *sb2, *rb2;
    int st;

    if ((st = ucoll_init(&ctx)) != UCOLL_OK) {
        fprintf(stderr, "ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    sb = malloc(n * (size_t)size * RUN * sizeof(int32_t));
    rb = malloc(n * (size_t)size * RUN * sizeof(int32_t));
    sb2 = malloc(n * (size_t)size * sizeof(int32_t));
    rb2 = malloc(n * (size_t)size * sizeof(int32_t));
    if (!sb || !rb || !sb2 || !rb2) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* blocking calls through three rounds and more, on two buffers each */
    for (long it = 0; it < 120; it++) {
        int32_t *s = (it & 1) ? sb2 : sb, *r = (it & 1) ? rb2 : rb;
        int32_t x = rank == 0 ? (int32_t)it : -1;

        a2a_fill(it, n, s, r);
        CHECK(ucoll_alltoall(s, r, n, UCOLL_INT32, world) == UCOLL_OK, "alltoall it %ld", it);
        a2a_check(it, n, r);
        rsb_fill(it, n, s);
        CHECK(ucoll_reduce_scatter_block(s, r, n, UCOLL_INT32, UCOLL_SUM, world) == UCOLL_OK,
              "reduce_scatter_block it %ld", it);
        rsb_check(it, n, r);
        if (it % 8 == 3) {
            /* in place */
            a2a_fill(it, n, r, NULL);
            CHECK(ucoll_alltoall(UCOLL_IN_PLACE, r, n, UCOLL_INT32, world) == UCOLL_OK,
                  "alltoall in place it %ld", it);
            a2a_check(it, n, r);
        }
        CHECK(ucoll_bcast(&x, 1, UCOLL_INT32, 0, world) == UCOLL_OK && x == (int32_t)it,
              "bcast it %ld", it);
    }
    a2a_run(world, 1000, n, sb, rb, 50000, 0);
    a2a_run(world, 2000, n, sb, rb, 0, 1);
    ar_run(world, 4000, n, sb, rb, 50000);
    {
        ucoll_comm_t *dup;

        CHECK(ucoll_comm_split(world, 0, rank, &dup) == UCOLL_OK, "split");
        for (long it = 0; it < 4; it++) {
            a2a_fill(3000 + it, n, sb, rb);
            CHECK(ucoll_alltoall(sb, rb, n, UCOLL_INT32, dup) == UCOLL_OK, "alltoall dup");
            a2a_check(3000 + it, n, rb);
        }
        CHECK(ucoll_comm_free(dup) == UCOLL_OK, "free after a call through the rival");
    }
    printf("duel: rank %d of %d: %ld cases, %d failed\n", rank, size, checks, failures);
    fflush(stdout);
    free(sb);
    free(rb);
    free(sb2);
    free(rb2);
    st = ucoll_finalize(ctx);
    return failures || st != UCOLL_OK ? 1 : 0;
}

/*
 * The schedule cache under repetition: many identical small collectives
 * (which run one cached schedule again and again) interleaved with others
 * of different shapes, on alternating buffers, in place and not, several
 * of the same shape in flight at once, bursts of small collectives back to
 * back, a bcast that a rank enters only after a message the root sends
 * once its bcast is over, and a split communicator freed while its cache
 * is full, after a call it forgot is made again. Every result is checked.
 *
 *   coll_repeat [iterations]   (default 10000)
 *
 * Prints "coll_repeat: rank R of P: N cases, F failed".
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int size;

#define SMALL 8
#define BIG   3000 /* elements; more than a few segments at 1 KiB */

static int32_t val(long it, int r, size_t i)
{
    return (int32_t)(it * 1000003 + r * 7919 + (long)i * 31);
}

/* The identical call: bcast of SMALL int32 from root 0, on one of two
 * buffers (the cached schedule runs on both). */
static void small_bcast(ucoll_comm_t *comm, long it, int32_t *buf)
{
    for (size_t i = 0; i < SMALL; i++) {
        buf[i] = ucoll_comm_rank(comm) == 0 ? val(it, 0, i) : -1;
    }
    CHECK(ucoll_bcast(buf, SMALL, UCOLL_INT32, 0, comm) == UCOLL_OK, "bcast it %ld", it);
    for (size_t i = 0; i < SMALL; i++) {
        if (buf[i] != val(it, 0, i)) {
            CHECK(0, "bcast it %ld: element %zu is %d, not %d", it, i, buf[i], val(it, 0, i));
            return;
        }
    }
}

static void allreduce_case(ucoll_comm_t *comm, long it, size_t n, int in_place, int32_t *sbuf,
                           int32_t *rbuf)
{
    int p = ucoll_comm_size(comm), r = ucoll_comm_rank(comm);

    for (size_t i = 0; i < n; i++) {
        (in_place ? rbuf : sbuf)[i] = val(it, r, i);
        if (!in_place) {
            rbuf[i] = -7;
        }
    }
    CHECK(ucoll_allreduce(in_place ? UCOLL_IN_PLACE : sbuf, rbuf, n, UCOLL_INT32, UCOLL_SUM,
                          comm) == UCOLL_OK,
          "allreduce it %ld n %zu", it, n);
    for (size_t i = 0; i < n; i++) {
        int32_t want = 0;
        for (int q = 0; q < p; q++) {
            want = (int32_t)((uint32_t)want + (uint32_t)val(it, q, i));
        }
        if (rbuf[i] != want) {
            CHECK(0, "allreduce it %ld n %zu%s: element %zu is %d, not %d", it, n,
                  in_place ? " in place" : "", i, rbuf[i], want);
            return;
        }
    }
}

static void reduce_case(ucoll_comm_t *comm, long it, size_t n, int root, int in_place,
                        int32_t *sbuf, int32_t *rbuf)
{
    int p = ucoll_comm_size(comm), r = ucoll_comm_rank(comm);

    in_place = in_place && r == root;
    for (size_t i = 0; i < n; i++) {
        (in_place ? rbuf : sbuf)[i] = val(it, r, i);
        if (!in_place) {
            rbuf[i] = -7;
        }
    }
    CHECK(ucoll_reduce(in_place ? UCOLL_IN_PLACE : sbuf, rbuf, n, UCOLL_INT32, UCOLL_SUM, root,
                       comm) == UCOLL_OK,
          "reduce it %ld n %zu root %d", it, n, root);
    for (size_t i = 0; i < n; i++) {
        int32_t want = -7;
        if (r == root) {
            want = 0;
            for (int q = 0; q < p; q++) {
                want = (int32_t)((uint32_t)want + (uint32_t)val(it, q, i));
            }
        }
        if (rbuf[i] != want) {
            CHECK(0, "reduce it %ld n %zu root %d%s: element %zu is %d, not %d", it, n, root,
                  in_place ? " in place" : "", i, rbuf[i], want);
            return;
        }
    }
}

static void allgather_case(ucoll_comm_t *comm, long it, size_t n, int32_t *sbuf, int32_t *rbuf);

/* Small values, whose sums over the ranks stay far from overflow. */
static int32_t sval(long it, int r, size_t i)
{
    return (int32_t)((it * 31 + r * 7919 + (long)i * 17) % 100003);
}

/* alltoall of n int32 a pair: rank r sends block q = sval(it, r * p + q, .) */
static void alltoall_case(ucoll_comm_t *comm, long it, size_t n, int32_t *sbuf, int32_t *rbuf)
{
    int p = ucoll_comm_size(comm), r = ucoll_comm_rank(comm);

    for (int q = 0; q < p; q++) {
        for (size_t i = 0; i < n; i++) {
            sbuf[(size_t)q * n + i] = sval(it, r * p + q, i);
            rbuf[(size_t)q * n + i] = -1;
        }
    }
    CHECK(ucoll_alltoall(sbuf, rbuf, n, UCOLL_INT32, comm) == UCOLL_OK, "alltoall it %ld", it);
    for (int q = 0; q < p; q++) {
        for (size_t i = 0; i < n; i++) {
            if (rbuf[(size_t)q * n + i] != sval(it, q * p + r, i)) {
                CHECK(0, "alltoall it %ld n %zu: block %d element %zu wrong", it, n, q, i);
                return;
            }
        }
    }
}

/* reduce_scatter_block (sum) of n int32 a rank */
static void rsb_case(ucoll_comm_t *comm, long it, size_t n, int32_t *sbuf, int32_t *rbuf)
{
    int p = ucoll_comm_size(comm), r = ucoll_comm_rank(comm);

    for (size_t i = 0; i < n * (size_t)p; i++) {
        sbuf[i] = sval(it, r, i);
    }
    for (size_t i = 0; i < n; i++) {
        rbuf[i] = -1;
    }
    CHECK(ucoll_reduce_scatter_block(sbuf, rbuf, n, UCOLL_INT32, UCOLL_SUM, comm) == UCOLL_OK,
          "reduce_scatter_block it %ld", it);
    for (size_t i = 0; i < n; i++) {
        int32_t want = 0;

        for (int q = 0; q < p; q++) {
            want += sval(it, q, (size_t)r * n + i);
        }
        if (rbuf[i] != want) {
            CHECK(0, "reduce_scatter_block it %ld n %zu: element %zu is %d, not %d", it, n, i,
                  rbuf[i], want);
            return;
        }
    }
}

/* bcast of n int32 from root */
static void bcast_case(ucoll_comm_t *comm, long it, size_t n, int root, int32_t *buf)
{
    int r = ucoll_comm_rank(comm);

    for (size_t i = 0; i < n; i++) {
        buf[i] = r == root ? sval(it, root, i) : -1;
    }
    CHECK(ucoll_bcast(buf, n, UCOLL_INT32, root, comm) == UCOLL_OK, "bcast it %ld", it);
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != sval(it, root, i)) {
            CHECK(0, "bcast it %ld n %zu root %d: element %zu is %d, not %d", it, n, root, i,
                  buf[i], sval(it, root, i));
            return;
        }
    }
}

/* Small collectives back to back, nothing between them (their payloads
 * through shared memory alternate two places then, whatever the
 * collective, and a reduce's non-roots run a call ahead of the root):
 * reductions and bcasts with roots turning, in place and not, allgathers,
 * alltoalls and reduce_scatter_blocks, on alternating buffers, up to just past the
 * inline payload (30 int32 are 120 bytes; an alltoall's or a
 * reduce_scatter_block's p blocks together). */
static void small_burst(ucoll_comm_t *comm, long it, int32_t *sbuf, int32_t *rbuf)
{
    int p = ucoll_comm_size(comm), k = 3 + (int)(it / 16) % 6;

    for (int j = 0; j < k; j++) {
        size_t n = 1 + (size_t)(it / 16 + (long)j * 7) % 31, off = (size_t)(j & 1) * 1024;
        int in_place = (int)((it / 16 + j) % 3 == 0);

        switch ((it / 16 + j) % 9) {
        case 7:
        case 8: bcast_case(comm, it + j, n, (int)((it / 16 + (long)j * 3) % p), rbuf + off); break;
        case 3: allreduce_case(comm, it + j, n, in_place, sbuf + off, rbuf + off); break;
        case 4: allgather_case(comm, it + j, n, sbuf + off, rbuf + off); break;
        case 5: alltoall_case(comm, it + j, 1 + n / 2, sbuf + off, rbuf + off); break;
        case 6: rsb_case(comm, it + j, 1 + n / 2, sbuf + off, rbuf + off); break;
        default:
            reduce_case(comm, it + j, n, (int)((it / 16 + (long)j) % p), in_place, sbuf + off,
                        rbuf + off);
            break;
        }
    }
}

static void allgather_case(ucoll_comm_t *comm, long it, size_t n, int32_t *sbuf, int32_t *rbuf)
{
    int p = ucoll_comm_size(comm), r = ucoll_comm_rank(comm);

    for (size_t i = 0; i < n; i++) {
        sbuf[i] = val(it, r, i);
    }
    CHECK(ucoll_allgather(sbuf, rbuf, n, UCOLL_INT32, comm) == UCOLL_OK, "allgather it %ld", it);
    for (int q = 0; q < p; q++) {
        for (size_t i = 0; i < n; i++) {
            if (rbuf[(size_t)q * n + i] != val(it, q, i)) {
                CHECK(0, "allgather it %ld: block %d element %zu wrong", it, q, i);
                return;
            }
        }
    }
}

/* A small allgather, then a bcast of 1024 int32 from rank 0 that rank 1
 * enters only after a message rank 0 sends once its bcast is over. Through
 * shared memory rank 1 leaves the allgather with its end owed, not posted
 * (lib/progress/shm.h, ucoll__shm_owe_end), and the bcast's root waits for
 * that end before it writes: rank 1's wait for the message must pay it,
 * or the two wait for each other. The other ranks enter the bcast at
 * once. */
static void owed_then_p2p(ucoll_comm_t *comm, long it, int32_t *sbuf, int32_t *rbuf, int32_t *buf)
{
    int r = ucoll_comm_rank(comm);
    int32_t token = -1;

    allgather_case(comm, it, 2, sbuf, rbuf);
    if (r == 1) {
        CHECK(ucoll_recv(&token, 1, UCOLL_INT32, 0, 77, comm, NULL) == UCOLL_OK && token == 5,
              "recv before the bcast it %ld (token %d)", it, token);
    }
    bcast_case(comm, it, 1024, 0, buf);
    if (r == 0) {
        token = 5;
        CHECK(ucoll_send(&token, 1, UCOLL_INT32, 1, 77, comm) == UCOLL_OK,
              "send after the bcast it %ld", it);
    }
}

/* Several bcasts of one shape in flight at once: concurrent runs of one
 * cached schedule, each on its own buffer. */
static void concurrent_bcasts(ucoll_comm_t *comm, long it, int32_t (*bufs)[BIG], int k, size_t n,
                              int root)
{
    ucoll_req_t *req[8];

    for (int j = 0; j < k; j++) {
        for (size_t i = 0; i < n; i++) {
            bufs[j][i] = rank == root ? val(it + j, root, i) : -1;
        }
        CHECK(ucoll_ibcast(bufs[j], n, UCOLL_INT32, root, comm, &req[j]) == UCOLL_OK,
              "ibcast it %ld #%d", it, j);
    }
    CHECK(ucoll_waitall((size_t)k, req) == UCOLL_OK, "waitall it %ld", it);
    for (int j = 0; j < k; j++) {
        for (size_t i = 0; i < n; i++) {
            if (bufs[j][i] != val(it + j, root, i)) {
                CHECK(0, "ibcast it %ld #%d n %zu root %d: element %zu wrong", it, j, n, root,
                      i);
                break;
            }
        }
    }
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 10000;
    static int32_t a[2][SMALL], s1[BIG * 8], r1[BIG * 8], cb[8][BIG];
    ucoll_comm_t *world, *half;
    ucoll_ctx_t *ctx;
    int st;

    if ((st = ucoll_init(&ctx)) != UCOLL_OK) {
        fprintf(stderr, "ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    for (long it = 0; it < iters; it++) {
        small_bcast(world, it, a[it & 1]);
        switch (it % 16) {
        case 3: allreduce_case(world, it, 1 + (size_t)(it / 16) % 40, 0, s1, r1); break;
        case 5: allreduce_case(world, it, SMALL, (int)(it / 16) & 1, s1 + (it & 7), r1); break;
        case 7: allgather_case(world, it, 1 + (size_t)(it % 3), s1, r1); break;
        case 9:
            concurrent_bcasts(world, it, cb, 2 + (int)(it / 16) % 4, (it & 32) ? BIG : SMALL,
                              (int)(it / 16) % size);
            break;
        case 11:
            if (it % 64 == 11 && size > 1) {
                owed_then_p2p(world, it, s1, r1, cb[0]);
            }
            CHECK(ucoll_barrier(world) == UCOLL_OK, "barrier it %ld", it);
            break;
        case 13: allreduce_case(world, it, BIG, 0, s1 + (it & 1) * BIG, r1 + (it & 2) * BIG); break;
        case 15: small_burst(world, it, s1, r1); break;
        default: break;
        }
        if (it % 2000 == 1000) {
            /* a communicator that fills its cache, then goes */
            CHECK(ucoll_comm_split(world, rank & 1, rank, &half) == UCOLL_OK, "split");
            for (long j = 0; j < 40; j++) {
                allreduce_case(half, it + j, 1 + (size_t)j, 0, s1, r1);
                small_bcast(half, it + j, a[j & 1]);
            }
            /* a call the cache forgets while it is one of the last two
             * (found by its key once, then 40 new shapes replace every
             * entry), then made again */
            allreduce_case(half, it, 100, 0, s1, r1);
            allreduce_case(half, it + 1, 100, 0, s1, r1);
            for (long j = 0; j < 40; j++) {
                bcast_case(half, it + j, 1 + (size_t)j, 0, cb[0]);
            }
            allreduce_case(half, it + 2, 100, 0, s1, r1);
            CHECK(ucoll_comm_free(half) == UCOLL_OK, "comm free");
        }
    }
    printf("coll_repeat: rank %d of %d: %ld cases, %d failed\n", rank, size, checks, failures);
    fflush(stdout);
    st = ucoll_finalize(ctx);
    return failures || st != UCOLL_OK ? 1 : 0;
}

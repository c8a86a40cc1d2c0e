/*
 * Inputs that repeat: the shared-memory rows leave a stretch of their
 * region unwritten when it already holds the bytes they would write
 * (progress/shm.h, ucoll__shm_put), so a call whose input did not change
 * since the last one, or changed in a few places, must still deliver
 * exactly its own input. For bcast, reduce, allreduce, allgather, alltoall
 * and reduce_scatter_block, at sizes below, at and across the compared
 * stretch (4 KiB) and of several chunks, each rank runs its input through
 * a sequence of calls:
 *   the input; the same again; one element changed in the first stretch;
 *   one in a later stretch; the last element; a run of stretches in the
 *   middle; the first input again; the same input on a second buffer;
 *   every element changed;
 * and checks every result against a local reference. Run it under each
 * shared-memory way (UCOLL_SHM_WAY) and with the rows forced to shm.
 *
 *   coll_same [max_bytes]   (default 3 MiB: larger than a region's data)
 *
 * Prints "coll_same: rank R of P: N cases, F failed".
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V_BASE, V_FIRST, V_LATER, V_LAST, V_RUN, V_ALL, V_COUNT };

static int size;

/* Rank r's element i of block b (alltoall: the block for rank b; else 0)
 * in version v of the input: V_BASE everywhere, another value only at
 * the places version v changes. */
static int32_t val(int v, int r, int b, size_t i, size_t n)
{
    const size_t stretch = 4096 / sizeof(int32_t);
    int changed;
    uint32_t x;

    switch (v) {
    case V_FIRST: changed = i == 3; break;
    case V_LATER: changed = i == stretch + stretch / 2 || i == n / 2 + 1; break;
    case V_LAST: changed = i + 1 == n; break;
    case V_RUN: changed = i >= n / 3 && i < n / 3 + 3 * stretch; break;
    case V_ALL: changed = 1; break;
    default: changed = 0; break;
    }
    x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(r * 40503 + b * 977);
    return (int32_t)((x >> 8) % 1000) + (changed ? 1000 * (v + 1) : 0);
}

static void fill(int32_t *buf, int v, int r, int nblocks, size_t n)
{
    for (int b = 0; b < nblocks; b++) {
        for (size_t i = 0; i < n; i++) {
            buf[(size_t)b * n + i] = val(v, r, b, i, n);
        }
    }
}

static int32_t sum(int v, int b, size_t i, size_t n)
{
    int32_t s = 0;

    for (int r = 0; r < size; r++) {
        s += val(v, r, b, i, n);
    }
    return s;
}

/* The first mismatch of one call's result, if any. */
static void check(const char *what, int v, size_t n, const int32_t *out, size_t len,
                  int32_t (*want)(int v, size_t k, size_t n))
{
    for (size_t k = 0; k < len; k++) {
        if (out[k] != want(v, k, n)) {
            CHECK(0, "%s of %zu B, version %d: element %zu is %d, not %d", what,
                  n * sizeof(int32_t), v, k, out[k], want(v, k, n));
            return;
        }
    }
    CHECK(1, "%s", what);
}

static int32_t want_bcast(int v, size_t k, size_t n)
{
    return val(v, 0, 0, k, n);
}

static int32_t want_reduce(int v, size_t k, size_t n)
{
    return sum(v, 0, k, n);
}

static int32_t want_allgather(int v, size_t k, size_t n)
{
    return val(v, (int)(k / n), 0, k % n, n);
}

static int32_t want_alltoall(int v, size_t k, size_t n)
{
    return val(v, (int)(k / n), rank, k % n, n);
}

static int32_t want_rsb(int v, size_t k, size_t n)
{
    return sum(v, rank, k, n);
}

/* One call of op with version v of the input, from sbuf into rbuf. */
static void run(ucoll_comm_t *comm, const char *op, int v, size_t n, int32_t *sbuf, int32_t *rbuf)
{
    size_t p = (size_t)size;
    int st;

    if (strcmp(op, "bcast") == 0) {
        if (rank == 0) {
            fill(rbuf, v, 0, 1, n);
        } else {
            memset(rbuf, 0xee, n * sizeof(int32_t));
        }
        st = ucoll_bcast(rbuf, n, UCOLL_INT32, 0, comm);
        CHECK(st == UCOLL_OK, "bcast: %s", ucoll_strerror(st));
        check(op, v, n, rbuf, n, want_bcast);
        return;
    }
    memset(rbuf, 0xee, p * n * sizeof(int32_t));
    if (strcmp(op, "allreduce") == 0 || strcmp(op, "reduce") == 0) {
        fill(sbuf, v, rank, 1, n);
        st = op[0] == 'a' ? ucoll_allreduce(sbuf, rbuf, n, UCOLL_INT32, UCOLL_SUM, comm)
                          : ucoll_reduce(sbuf, rbuf, n, UCOLL_INT32, UCOLL_SUM, 0, comm);
        CHECK(st == UCOLL_OK, "%s: %s", op, ucoll_strerror(st));
        if (op[0] == 'a' || rank == 0) {
            check(op, v, n, rbuf, n, want_reduce);
        }
    } else if (strcmp(op, "allgather") == 0) {
        fill(sbuf, v, rank, 1, n);
        st = ucoll_allgather(sbuf, rbuf, n, UCOLL_INT32, comm);
        CHECK(st == UCOLL_OK, "%s: %s", op, ucoll_strerror(st));
        check(op, v, n, rbuf, p * n, want_allgather);
    } else if (strcmp(op, "alltoall") == 0) {
        fill(sbuf, v, rank, size, n);
        st = ucoll_alltoall(sbuf, rbuf, n, UCOLL_INT32, comm);
        CHECK(st == UCOLL_OK, "%s: %s", op, ucoll_strerror(st));
        check(op, v, n, rbuf, p * n, want_alltoall);
    } else {
        /* reduce_scatter_block: block b of every rank's input is val(.., b, ..) */
        fill(sbuf, v, rank, size, n);
        st = ucoll_reduce_scatter_block(sbuf, rbuf, n, UCOLL_INT32, UCOLL_SUM, comm);
        CHECK(st == UCOLL_OK, "%s: %s", op, ucoll_strerror(st));
        check(op, v, n, rbuf, n, want_rsb);
    }
}

int main(int argc, char **argv)
{
    static const char *const ops[] = {"bcast",    "allreduce", "reduce",
                                      "allgather", "alltoall", "reduce_scatter_block"};
    static const int seq[] = {V_BASE, V_BASE,  V_FIRST, V_LATER, V_LAST,
                              V_RUN,  V_BASE, -V_BASE - 1, V_ALL};
    size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 3 << 20;
    size_t sizes[] = {4096, 4100, 8192, 12300, 65536, 300000, 1 << 20, 3 << 20};
    int32_t *sbuf[2], *rbuf[2];
    ucoll_ctx_t *ctx;
    ucoll_comm_t *world;
    int st;

    if ((st = ucoll_init(&ctx)) != UCOLL_OK) {
        fprintf(stderr, "ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    for (int b = 0; b < 2; b++) {
        sbuf[b] = malloc(max * (size_t)size + 64);
        rbuf[b] = malloc(max * (size_t)size + 64);
        if (sbuf[b] == NULL || rbuf[b] == NULL) {
            fprintf(stderr, "coll_same: no memory\n");
            return 1;
        }
    }
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && sizes[s] <= max; s++) {
            size_t n = sizes[s] / sizeof(int32_t);

            /* the rooted and reducing ops' vector is the size; the others'
             * total stays near it */
            if (strcmp(ops[o], "alltoall") == 0 || strcmp(ops[o], "reduce_scatter_block") == 0 ||
                strcmp(ops[o], "allgather") == 0) {
                n = n / (size_t)size + 1;
            }
            for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
                int other = seq[i] < 0, v = other ? -seq[i] - 1 : seq[i];

                run(world, ops[o], v, n, sbuf[other], rbuf[other]);
            }
        }
    }
    printf("coll_same: rank %d of %d: %ld cases, %d failed\n", rank, size, checks, failures);
    fflush(stdout);
    for (int b = 0; b < 2; b++) {
        free(sbuf[b]);
        free(rbuf[b]);
    }
    st = ucoll_finalize(ctx);
    return failures || st != UCOLL_OK ? 1 : 0;
}

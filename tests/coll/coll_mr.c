/*
 * Multi-rank test of the reducing and synchronising collectives, public API
 * only; run under a launcher (run_coll.sh) with the algorithms forced by
 * UCOLL_<OP>_ALGO.
 *
 *   coll_mr [-L] [-N] [op ...]
 *
 * ops: barrier bcast reduce allreduce reduce_scatter_block reduce_scatter
 * scan exscan (default: all). For each: counts {0, 1, 7, 3p+1, 4099}, every
 * root (p <= 5; else 0, 1, p/2, p-1), in place or not, several
 * datatype/op pairs, compared with a local reference. -L adds a 64 MiB
 * case to bcast, reduce, allreduce and reduce_scatter_block;
 * -N runs the nonblocking test instead: dozens of outstanding collectives
 * on the world and on a split communicator, interleaved with
 * point-to-point traffic; -K kills the last rank once the collectives of
 * the world are under way: a broadcast from it and a barrier must then
 * fail with UCOLL_ERR_PEER on the others, within seconds (run with the shm
 * rows forced, it checks that a dead peer ends a wait on shared memory).
 * Prints "coll_mr: rank R of P: N cases, F failed" (-K: the survivors).
 */
#include "coll_ref.h"
#include "tests/rank_check.h"
#include "ucoll.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POISON 0xa5

static int size, cases;

typedef struct {
    ucoll_dtype_t dt;
    ucoll_op_t op;
} pair_t;

static const pair_t pairs[] = {
    {UCOLL_INT32, UCOLL_SUM},    {UCOLL_FLOAT32, UCOLL_SUM}, {UCOLL_FLOAT16, UCOLL_SUM},
    {UCOLL_BFLOAT16, UCOLL_MAX}, {UCOLL_UINT8, UCOLL_BXOR},  {UCOLL_INT64, UCOLL_MIN},
    {UCOLL_FLOAT64, UCOLL_PROD}, {UCOLL_UINT16, UCOLL_LOR},
};
#define NPAIRS ((int)(sizeof(pairs) / sizeof(pairs[0])))

enum { OP_BARRIER, OP_BCAST, OP_REDUCE, OP_ALLREDUCE, OP_RSB, OP_RS, OP_SCAN, OP_EXSCAN, NOPS };
static const char *op_names[NOPS] = {
    "barrier",        "bcast", "reduce", "allreduce", "reduce_scatter_block",
    "reduce_scatter", "scan",  "exscan"};

static void rs_counts(int p, size_t base, size_t *rc)
{
    for (int i = 0; i < p; i++) {
        rc[i] = base == 0 ? 0 : base + (size_t)(i % 3) - 1;
    }
}

/* Elements checked: all, or for 64 MiB vectors a sample (every 4099th and
 * the tail), since the reference is slow. */
static size_t sample_step;

static int checked(size_t i, size_t len)
{
    return sample_step <= 1 || i % sample_step == 0 || i + 64 >= len;
}

/* One collective call on comm with all ranks; checks this rank's result. */
static void one_case(ucoll_comm_t *comm, int op, int root, size_t n, int in_place, pair_t pr)
{
    int p = ucoll_comm_size(comm), r = ucoll_comm_rank(comm);
    size_t es = ucoll_dtype_size(pr.dt), total = n, len = n, bad = 0;
    size_t *rc = calloc((size_t)p, sizeof(size_t)), off = 0;
    char *sb, *rb, *expect;
    int st = UCOLL_OK, check = 1;

    cases++;
    if (op == OP_RS) {
        rs_counts(p, n, rc);
        total = 0;
        for (int i = 0; i < p; i++) {
            off += (i < r) ? rc[i] : 0;
            total += rc[i];
        }
        len = rc[r];
    } else if (op == OP_RSB) {
        total = n * (size_t)p;
        off = n * (size_t)r;
    }
    sb = malloc(total * es + 8);
    rb = malloc(total * es + 8);
    expect = malloc(total * es + 8);
    if (sb == NULL || rb == NULL || expect == NULL) {
        CHECK(0, "out of memory for %zu elements", total);
        exit(1);
    }
    ref_fill(sb, total, pr.dt, pr.op, r, 0);
    memset(rb, POISON, total * es + 8);
    if (in_place) {
        memcpy(rb, sb, total * es);
    }
    switch (op) {
    case OP_BARRIER:
        st = ucoll_barrier(comm);
        check = 0;
        break;
    case OP_BCAST:
        if (r == root) {
            memcpy(rb, sb, n * es);
        }
        st = ucoll_bcast(rb, n, pr.dt, root, comm);
        ref_fill(expect, n, pr.dt, pr.op, root, 0);
        break;
    case OP_REDUCE:
        st = ucoll_reduce((in_place && r == root) ? UCOLL_IN_PLACE : sb, r == root ? rb : NULL, n,
                          pr.dt, pr.op, root, comm);
        check = (r == root);
        for (size_t i = 0; check && i < n; i++) {
            if (checked(i, n))
                ref_elem(expect, i, pr.dt, pr.op, 0, p, i);
        }
        break;
    case OP_ALLREDUCE:
        st = ucoll_allreduce(in_place ? UCOLL_IN_PLACE : sb, rb, n, pr.dt, pr.op, comm);
        for (size_t i = 0; i < n; i++) {
            if (checked(i, n))
                ref_elem(expect, i, pr.dt, pr.op, 0, p, i);
        }
        break;
    case OP_RSB:
    case OP_RS:
        st = (op == OP_RS)
                 ? ucoll_reduce_scatter(in_place ? UCOLL_IN_PLACE : sb, rb, rc, pr.dt, pr.op, comm)
                 : ucoll_reduce_scatter_block(in_place ? UCOLL_IN_PLACE : sb, rb, n, pr.dt, pr.op,
                                              comm);
        for (size_t i = 0; i < len; i++) {
            if (checked(i, len))
                ref_elem(expect, i, pr.dt, pr.op, 0, p, off + i);
        }
        break;
    case OP_SCAN:
        st = ucoll_scan(in_place ? UCOLL_IN_PLACE : sb, rb, n, pr.dt, pr.op, comm);
        for (size_t i = 0; i < n; i++) {
            if (checked(i, n))
                ref_elem(expect, i, pr.dt, pr.op, 0, r + 1, i);
        }
        break;
    case OP_EXSCAN:
        st = ucoll_exscan(in_place ? UCOLL_IN_PLACE : sb, rb, n, pr.dt, pr.op, comm);
        if (r == 0) {
            check = 2;
            if (in_place) {
                memcpy(expect, sb, n * es);
            } else {
                memset(expect, POISON, n * es);
            }
        }
        for (size_t i = 0; r > 0 && i < n; i++) {
            if (checked(i, n))
                ref_elem(expect, i, pr.dt, pr.op, 0, r, i);
        }
        break;
    }
    CHECK(st == UCOLL_OK, "%s root %d count %zu: %s", op_names[op], root, n, ucoll_strerror(st));
    if (st == UCOLL_OK && check == 2) {
        CHECK(memcmp(rb, expect, n * es) == 0, "exscan wrote rank 0's buffer");
    } else if (st == UCOLL_OK && check && sample_step > 1) {
        for (size_t i = 0; i < len; i++) {
            if (checked(i, len) && !ref_same(rb + i * es, expect + i * es, 1, pr.dt, &bad)) {
                CHECK(0, "%s root %d count %zu: element %zu", op_names[op], root, n, i);
                break;
            }
        }
    } else if (st == UCOLL_OK && check) {
        CHECK(ref_same(rb, expect, len, pr.dt, &bad), "%s root %d count %zu %s: element %zu",
              op_names[op], root, n, in_place ? "in place" : "", bad);
    }
    free(sb);
    free(rb);
    free(expect);
    free(rc);
}

static double mono_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts); /* one clock for every process of the machine */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A barrier must hold every rank until the last one has entered: each rank
 * in turn enters 20 ms late, and no rank may leave before it entered (the
 * times go round with an allgather, after the barrier under test). */
static void barrier_holds(ucoll_comm_t *comm)
{
    int p = ucoll_comm_size(comm), r = ucoll_comm_rank(comm);
    double *all = calloc(2 * (size_t)p, sizeof(double)), mine[2];
    struct timespec late = {0, 20 * 1000 * 1000};

    for (int turn = 0; turn < (p < 4 ? p : 4) && all; turn++) {
        cases++;
        if (r == turn) {
            nanosleep(&late, NULL);
        }
        mine[0] = mono_s();
        CHECK(ucoll_barrier(comm) == UCOLL_OK, "barrier (rank %d late)", turn);
        mine[1] = mono_s();
        CHECK(ucoll_allgather(mine, all, 2, UCOLL_FLOAT64, comm) == UCOLL_OK, "allgather of times");
        for (int i = 0; i < p; i++) {
            CHECK(mine[1] >= all[2 * i], "barrier: rank %d left %.3f ms before rank %d entered", r,
                  (all[2 * i] - mine[1]) * 1e3, i);
        }
    }
    free(all);
}

static void sweep(ucoll_comm_t *comm, int op, int large)
{
    if (op == OP_BARRIER) {
        barrier_holds(comm);
    }
    int p = ucoll_comm_size(comm);
    size_t counts[] = {0, 1, 7, (size_t)(3 * p + 1), 4099};
    unsigned rot = 0;

    for (int root = 0; root < p; root++) {
        if ((op != OP_BCAST && op != OP_REDUCE && root > 0) ||
            (p > 5 && root != 0 && root != 1 && root != p / 2 && root != p - 1)) {
            continue;
        }
        for (int k = 0; k < 5; k++) {
            int ipmax = (op == OP_BARRIER || op == OP_BCAST) ? 0 : 1;
            if (op == OP_BARRIER && k > 0) {
                break;
            }
            for (int ip = 0; ip <= ipmax; ip++) {
                pair_t pr = pairs[rot++ % NPAIRS];
                one_case(comm, op, root, counts[k], ip, pr);
                if (k == 2 && root == 0 && ip == 0 && op != OP_BARRIER) {
                    for (int q = 0; q < NPAIRS; q++) {
                        one_case(comm, op, root, counts[k], ip, pairs[q]);
                    }
                }
            }
        }
    }
    if (large && (op == OP_BCAST || op == OP_REDUCE || op == OP_ALLREDUCE || op == OP_RSB)) {
        /* one 64 MiB vector (for reduce_scatter_block: 64 MiB in all) */
        size_t n = (op == OP_RSB) ? (16u << 20) / (size_t)p : 16u << 20;
        sample_step = 4099;
        one_case(comm, op, p - 1, n, op == OP_REDUCE || op == OP_ALLREDUCE, pairs[op % 2]);
        sample_step = 0;
    }
}

/* Dozens of outstanding collectives on the world and on a split
 * communicator, completed in reverse, with point-to-point messages
 * between them. */
static void nonblocking(ucoll_comm_t *world)
{
    enum { K = 32, C = 129 };
    ucoll_comm_t *half = NULL;
    ucoll_req_t *reqs[2 * K + 4] = {0};
    static int32_t in[2 * K][C], out[2 * K][C];
    int32_t token = rank, got = -1;
    int p = size, st, nreq = 0;

    st = ucoll_comm_split(world, rank % 2, -rank, &half);
    CHECK(st == UCOLL_OK && half != NULL, "comm_split: %s", ucoll_strerror(st));
    if (half == NULL) {
        return;
    }
    CHECK(ucoll_comm_size(half) == (p + 1 - rank % 2) / 2, "split size");
    /* key -rank: reversed order */
    CHECK(ucoll_comm_rank(half) == ucoll_comm_size(half) - 1 - rank / 2, "split rank order");
    for (int k = 0; k < 2 * K; k++) {
        ucoll_comm_t *c = (k % 2) ? half : world;
        int cp = ucoll_comm_size(c);
        for (int i = 0; i < C; i++) {
            in[k][i] = ucoll_comm_rank(c) + k * 100 + i;
            out[k][i] = -7;
        }
        switch ((k / 2) % 4) {
        case 0:
            st = ucoll_iallreduce(in[k], out[k], C, UCOLL_INT32, UCOLL_SUM, c, &reqs[nreq]);
            break;
        case 1:
            memcpy(out[k], in[k], sizeof(out[k]));
            st = ucoll_ibcast(out[k], C, UCOLL_INT32, k % cp, c, &reqs[nreq]);
            break;
        case 2: st = ucoll_iscan(in[k], out[k], C, UCOLL_INT32, UCOLL_SUM, c, &reqs[nreq]); break;
        default: st = ucoll_ibarrier(c, &reqs[nreq]); break;
        }
        CHECK(st == UCOLL_OK, "start %d: %s", k, ucoll_strerror(st));
        nreq++;
        if (k == K) {
            /* a ring of point-to-point messages in the middle */
            ucoll_req_t *pr[2];
            ucoll_irecv(&got, 1, UCOLL_INT32, (rank - 1 + p) % p, 5, world, &pr[0]);
            ucoll_isend(&token, 1, UCOLL_INT32, (rank + 1) % p, 5, world, &pr[1]);
            CHECK(ucoll_waitall(2, pr) == UCOLL_OK && got == (rank - 1 + p) % p, "p2p ring");
        }
    }
    for (int k = nreq - 1; k >= 0; k--) {
        CHECK(ucoll_wait(reqs[k], NULL) == UCOLL_OK, "wait %d", k);
    }
    for (int k = 0; k < 2 * K; k++) {
        ucoll_comm_t *c = (k % 2) ? half : world;
        int cp = ucoll_comm_size(c), cr = ucoll_comm_rank(c);
        for (int i = 0; i < C; i++) {
            int32_t e;
            switch ((k / 2) % 4) {
            case 0: e = cp * (cp - 1) / 2 + cp * (k * 100 + i); break;
            case 1: e = k % cp + k * 100 + i; break;
            case 2: e = cr * (cr + 1) / 2 + (cr + 1) * (k * 100 + i); break;
            default: e = -7; break;
            }
            if (out[k][i] != e) {
                CHECK(0, "nonblocking op %d element %d: %d, expected %d", k, i, out[k][i], e);
                break;
            }
        }
    }
    /* errors on the calling rank do not consume a sequence number */
    CHECK(ucoll_ibcast(in[0], 1, UCOLL_INT32, p, world, &reqs[0]) == UCOLL_ERR_ARG, "bad root");
    CHECK(ucoll_allreduce(in[0], out[0], 1, UCOLL_FLOAT32, UCOLL_BAND, world) == UCOLL_ERR_ARG,
          "band on float");
    CHECK(ucoll_barrier(world) == UCOLL_OK, "barrier after errors");
    cases += 2 * K + 3;
    ucoll_comm_free(half);
}

/* -K: the last rank dies without finalizing, once every rank is past a
 * first barrier (the world's collectives are set up); the others' broadcast
 * from it and barrier must fail with UCOLL_ERR_PEER. The job has lost a
 * rank, so the survivors report and exit without a collective finalize. */
static void killed(ucoll_comm_t *world)
{
    struct timespec t0, t1;
    int32_t v = 0;
    int st1, st2;
    double secs;

    /* the launcher ends the job once a rank exits without finalizing: the
     * survivors outlive its SIGTERM long enough to report */
    signal(SIGTERM, SIG_IGN);
    CHECK(ucoll_barrier(world) == UCOLL_OK, "first barrier");
    cases++;
    if (rank == size - 1) {
        usleep(100000);
        _exit(0);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st1 = ucoll_bcast(&v, 1, UCOLL_INT32, size - 1, world);
    st2 = ucoll_barrier(world);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cases += 2;
    CHECK(st1 == UCOLL_ERR_PEER && st2 == UCOLL_ERR_PEER && secs < 20,
          "dead rank %d: bcast %s, barrier %s after %.2f s", size - 1, ucoll_strerror(st1),
          ucoll_strerror(st2), secs);
    printf("coll_mr: rank %d: dead rank %d detected in %.2f s\n", rank, size - 1, secs);
    printf("coll_mr: rank %d of %d: %d cases, %d failed\n", rank, size, cases, failures);
    fflush(stdout);
    _exit(failures ? 1 : 0);
}

int main(int argc, char **argv)
{
    ucoll_ctx_t *ctx;
    ucoll_comm_t *world;
    int want[NOPS] = {0}, any = 0, large = 0, nb = 0, kill = 0, st;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-L") == 0) {
            large = 1;
            continue;
        }
        if (strcmp(argv[i], "-N") == 0) {
            nb = 1;
            continue;
        }
        if (strcmp(argv[i], "-K") == 0) {
            kill = 1;
            continue;
        }
        for (int o = 0; o < NOPS; o++) {
            if (strcmp(argv[i], op_names[o]) == 0) {
                want[o] = any = 1;
            }
        }
    }
    st = ucoll_init(&ctx);
    if (st != UCOLL_OK) {
        fprintf(stderr, "ucoll_init: %s\n", ucoll_strerror(st));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    if (kill && size > 1) {
        killed(world);
    } else if (nb) {
        nonblocking(world);
    } else {
        for (int o = 0; o < NOPS; o++) {
            if (!any || want[o]) {
                sweep(world, o, large);
            }
        }
    }
    printf("coll_mr: rank %d of %d: %d cases, %d failed\n", rank, size, cases, failures);
    fflush(stdout);
    st = ucoll_finalize(ctx);
    return (failures || st != UCOLL_OK) ? 1 : 0;
}

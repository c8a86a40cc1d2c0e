/*
 * ucoll_bench: the collective modes (every mode other than the
 * point-to-point latency / bw / bibw).
 *
 * OSU-style: for every message size (powers of two from --min-size to
 * --max-size), warm-up iterations, then timed iterations, each call timed on
 * its own and separated from the next by a barrier. Each rank averages its
 * own latency; rank 0 prints the mean, minimum and maximum of those averages
 * over the ranks. "bytes" is the size OSU prints for the collective: the
 * block of one rank (gather, scatter, allgather) or of one pair (alltoall),
 * the whole vector otherwise (bcast, reduce, allreduce, scan, and the input
 * vector of reduce_scatter(_block)).
 *
 * --algo ID forces the algorithm on this context only: it is written into
 * the context's configuration (as UCOLL_<OP>_ALGO would be), after checking
 * that the collective has an algorithm of that name.
 *
 * --chain runs the calls back to back instead, with no barrier between
 * them, and every rank divides the time of the whole timed loop by the
 * number of calls; a rooted collective alternates its root between rank 0
 * and rank p-1. For a bcast this is its latency end to end: call i+1
 * cannot start at its root before call i's data has reached that rank, so
 * at p = 2 it is a ping-pong of broadcasts (comparable with ucoll_bench
 * latency), and above it each call costs at least the time for data to
 * travel from one end to the other. For another collective it is what a
 * loop of calls costs when nothing separates them: a rank that finishes
 * its part early may start the next call.
 *
 * --check refills the inputs before every call (outside the timed region;
 * the values of moving collectives change from call to call)
 * and compares every result with a reference computed locally: inputs are
 * small integers that every datatype represents exactly, so the expected
 * bytes are known without talking to anyone.
 *
 * --fresh rewrites the input before every call, outside the timed region
 * and followed by a barrier (a root's rewrite is no peer's wait), as an
 * application that produces new data for each call does (a gradient,
 * a weight): without it the input lines stay unchanged from call to call,
 * so a peer that reads them in place (a single-copy rendezvous) may find
 * them still in its own cache, where in an application each call's input
 * was just written by its owner's CPU.
 *
 * The rewrite's bytes vary along the vector (varied.h). --varied fills
 * the first input so too: by default it repeats every few elements (a
 * reduction's every 4, as --check needs), so equal stretches sit at
 * different offsets of the vector, which a row that leaves unwritten the
 * bytes its shared memory already holds (progress/shm.h, ucoll__shm_put)
 * finds where unchanged weights would not let it.
 */
#include "bench.h"
#include "varied.h"

#include "algos/algos.h"
#include "core.h"
#include "dtype.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POISON          0xee
#define DEFAULT_MAX     ((size_t)1 << 20)
#define LARGE_THRESHOLD ((size_t)8 << 10) /* fewer iterations above, as OSU */

typedef struct bench_opts {
    ucoll_coll_t coll;
    const char *algo;
    int check;
    int chain;         /* no barrier between calls; roots alternate between 0 and p-1 */
    int fresh;         /* rewrite the input before each call, untimed */
    int varied;        /* input bytes that vary along the vector (no repeats) */
    int iters, warmup; /* -1: by size */
    size_t min_size, max_size;
    ucoll_dtype_t dt;
    ucoll_op_t op;
} bench_opts_t;

typedef struct bench_bufs {
    char *sbuf, *rbuf, *ref;
    size_t cap;              /* bytes of each buffer */
    size_t *counts, *displs; /* p entries: equal blocks */
} bench_bufs_t;

static const char *dtype_names[UCOLL_DTYPE_LAST] = {
    "byte",  "int8",   "uint8",   "int16",    "uint16",  "int32",  "uint32",
    "int64", "uint64", "float16", "bfloat16", "float32", "float64"};
static const char *op_names[UCOLL_OP_LAST] = {"sum", "prod", "min",  "max", "land",
                                              "lor", "lxor", "band", "bor", "bxor"};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int is_reducing(ucoll_coll_t c)
{
    return c == UCOLL_COLL_REDUCE || c == UCOLL_COLL_ALLREDUCE ||
           c == UCOLL_COLL_REDUCE_SCATTER_BLOCK || c == UCOLL_COLL_REDUCE_SCATTER ||
           c == UCOLL_COLL_SCAN || c == UCOLL_COLL_EXSCAN;
}

/* The element count of one call for a size in bytes (0: skip the size). */
static size_t call_count(ucoll_coll_t c, size_t bytes, size_t esize, int p)
{
    size_t n = bytes / esize;

    if (c == UCOLL_COLL_REDUCE_SCATTER_BLOCK || c == UCOLL_COLL_REDUCE_SCATTER) {
        n /= (size_t)p; /* per rank */
    }
    return n;
}

/* ---- element values ------------------------------------------------------ */

static void elem_set(void *buf, ucoll_dtype_t dt, size_t i, int64_t v)
{
    switch (dt) {
    case UCOLL_BYTE:
    case UCOLL_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case UCOLL_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case UCOLL_INT16: ((int16_t *)buf)[i] = (int16_t)v; break;
    case UCOLL_UINT16: ((uint16_t *)buf)[i] = (uint16_t)v; break;
    case UCOLL_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case UCOLL_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    case UCOLL_INT64: ((int64_t *)buf)[i] = v; break;
    case UCOLL_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
    case UCOLL_FLOAT16: ((uint16_t *)buf)[i] = ucoll__float_to_f16((float)v); break;
    case UCOLL_BFLOAT16: ((uint16_t *)buf)[i] = ucoll__float_to_bf16((float)v); break;
    case UCOLL_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case UCOLL_FLOAT64: ((double *)buf)[i] = (double)v; break;
    default: break;
    }
}

/* What rank r holds at element k of its send buffer for the data-moving
 * collectives: small, so every datatype holds it exactly. */
/* Added to the values the moving collectives carry (and to the element
 * index of the reductions' values), changed by --check at every call, so
 * that a call that left data of the call before in place (the same values
 * otherwise) is caught. */
static int64_t move_salt;

static int64_t move_val(int r, size_t k)
{
    return (int64_t)((r * 7 + k * 3 + 1 + (size_t)move_salt) % 61);
}

/* What rank r contributes at element k to a reduction with op. */
static int64_t red_val(ucoll_op_t op, int r, size_t k)
{
    k += (size_t)move_salt;
    switch (op) {
    case UCOLL_PROD: return (r % 5 == 1 && k % 3 == 0) ? 2 : 1;
    case UCOLL_LAND:
    case UCOLL_LOR:
    case UCOLL_LXOR: return (r + k) % 3 == 0 ? 0 : 1;
    default: return (int64_t)((r + k) % 4);
    }
}

static int64_t red_fold(ucoll_op_t op, int64_t a, int64_t b)
{
    switch (op) {
    case UCOLL_SUM: return a + b;
    case UCOLL_PROD: return a * b;
    case UCOLL_MIN: return a < b ? a : b;
    case UCOLL_MAX: return a > b ? a : b;
    case UCOLL_LAND: return a && b;
    case UCOLL_LOR: return a || b;
    case UCOLL_LXOR: return !a != !b;
    case UCOLL_BAND: return a & b;
    case UCOLL_BOR: return a | b;
    case UCOLL_BXOR: return a ^ b;
    default: return 0;
    }
}

/* Reduction of ranks [lo, hi) at element k. */
static int64_t red_ref(ucoll_op_t op, int lo, int hi, size_t k)
{
    int64_t v = red_val(op, lo, k);

    for (int r = lo + 1; r < hi; r++) {
        v = red_fold(op, v, red_val(op, r, k));
    }
    return v;
}

/* ---- one call ------------------------------------------------------------ */

static int run_call(const bench_opts_t *o, bench_bufs_t *b, size_t n, int root, ucoll_comm_t *comm)
{
    void *s = b->sbuf, *r = b->rbuf;
    ucoll_dtype_t dt = o->dt;

    switch (o->coll) {
    case UCOLL_COLL_BARRIER: return ucoll_barrier(comm);
    case UCOLL_COLL_BCAST: return ucoll_bcast(r, n, dt, root, comm);
    case UCOLL_COLL_REDUCE: return ucoll_reduce(s, r, n, dt, o->op, 0, comm);
    case UCOLL_COLL_ALLREDUCE: return ucoll_allreduce(s, r, n, dt, o->op, comm);
    case UCOLL_COLL_GATHER: return ucoll_gather(s, r, n, dt, 0, comm);
    case UCOLL_COLL_GATHERV: return ucoll_gatherv(s, n, r, b->counts, b->displs, dt, 0, comm);
    case UCOLL_COLL_SCATTER: return ucoll_scatter(s, r, n, dt, 0, comm);
    case UCOLL_COLL_SCATTERV: return ucoll_scatterv(s, b->counts, b->displs, r, n, dt, 0, comm);
    case UCOLL_COLL_ALLGATHER: return ucoll_allgather(s, r, n, dt, comm);
    case UCOLL_COLL_ALLGATHERV: return ucoll_allgatherv(s, n, r, b->counts, b->displs, dt, comm);
    case UCOLL_COLL_ALLTOALL: return ucoll_alltoall(s, r, n, dt, comm);
    case UCOLL_COLL_ALLTOALLV:
        return ucoll_alltoallv(s, b->counts, b->displs, r, b->counts, b->displs, dt, comm);
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return ucoll_reduce_scatter_block(s, r, n, dt, o->op, comm);
    case UCOLL_COLL_REDUCE_SCATTER: return ucoll_reduce_scatter(s, r, b->counts, dt, o->op, comm);
    case UCOLL_COLL_SCAN: return ucoll_scan(s, r, n, dt, o->op, comm);
    case UCOLL_COLL_EXSCAN: return ucoll_exscan(s, r, n, dt, o->op, comm);
    default: return UCOLL_ERR_ARG;
    }
}

/* Elements of the send buffer a call of count n reads on this rank. */
static size_t send_elems(ucoll_coll_t c, size_t n, int p)
{
    switch (c) {
    case UCOLL_COLL_SCATTER:
    case UCOLL_COLL_SCATTERV:
    case UCOLL_COLL_ALLTOALL:
    case UCOLL_COLL_ALLTOALLV:
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_REDUCE_SCATTER: return n * (size_t)p;
    default: return n;
    }
}

/* Fill the inputs of a call of count n and poison the outputs. */
static void fill(const bench_opts_t *o, bench_bufs_t *b, size_t n, int rank, int p)
{
    size_t ns = send_elems(o->coll, n, p);

    memset(b->rbuf, POISON, b->cap);
    if (o->coll == UCOLL_COLL_BCAST) {
        for (size_t k = 0; rank == 0 && k < n; k++) {
            elem_set(b->rbuf, o->dt, k, move_val(0, k));
        }
        return;
    }
    for (size_t k = 0; k < ns; k++) {
        elem_set(b->sbuf, o->dt, k,
                 is_reducing(o->coll) ? red_val(o->op, rank, k) : move_val(rank, k));
    }
}

/* This rank's input bytes: the root's buffer of a bcast (others: none),
 * else the send buffer. */
static void *input_of(const bench_opts_t *o, bench_bufs_t *b, size_t n, int rank, int p,
                      size_t *len)
{
    if (o->coll == UCOLL_COLL_BCAST) {
        *len = rank == 0 ? n * ucoll_dtype_size(o->dt) : 0;
        return b->rbuf;
    }
    *len = send_elems(o->coll, n, p) * ucoll_dtype_size(o->dt);
    return b->sbuf;
}

/* fill, with --varied's input */
static void fill_input(const bench_opts_t *o, bench_bufs_t *b, size_t n, int rank, int p)
{
    size_t len;
    void *in;

    fill(o, b, n, rank, p);
    if (o->varied) {
        in = input_of(o, b, n, rank, p, &len);
        ucoll_bench_vary(in, len, (uint64_t)rank << 32);
    }
}

/* --fresh: write every byte of this rank's input (the root's buffer of a
 * bcast), bytes that change along the vector and from call to call
 * (varied.h: an application's new data, not one byte value). */
static void refresh(const bench_opts_t *o, bench_bufs_t *b, size_t n, int rank, int p, int it)
{
    size_t len;
    void *in = input_of(o, b, n, rank, p, &len);

    ucoll_bench_vary(in, len, (uint64_t)rank << 32 | (uint64_t)(it + 1));
}

/* Write the expected result into b->ref; returns the bytes to compare (0:
 * nothing to check on this rank). */
static size_t reference(const bench_opts_t *o, bench_bufs_t *b, size_t n, int rank, int p)
{
    void *ref = b->ref;
    size_t es = ucoll_dtype_size(o->dt);
    ucoll_op_t op = o->op;

    switch (o->coll) {
    case UCOLL_COLL_BARRIER: return 0;
    case UCOLL_COLL_BCAST:
        for (size_t k = 0; k < n; k++) {
            elem_set(ref, o->dt, k, move_val(0, k));
        }
        return n * es;
    case UCOLL_COLL_REDUCE:
        if (rank != 0) {
            return 0;
        }
        /* fall through */
    case UCOLL_COLL_ALLREDUCE:
        for (size_t k = 0; k < n; k++) {
            elem_set(ref, o->dt, k, red_ref(op, 0, p, k));
        }
        return n * es;
    case UCOLL_COLL_GATHER:
    case UCOLL_COLL_GATHERV:
        if (rank != 0) {
            return 0;
        }
        /* fall through */
    case UCOLL_COLL_ALLGATHER:
    case UCOLL_COLL_ALLGATHERV:
        for (int s = 0; s < p; s++) {
            for (size_t k = 0; k < n; k++) {
                elem_set(ref, o->dt, (size_t)s * n + k, move_val(s, k));
            }
        }
        return (size_t)p * n * es;
    case UCOLL_COLL_SCATTER:
    case UCOLL_COLL_SCATTERV:
        for (size_t k = 0; k < n; k++) {
            elem_set(ref, o->dt, k, move_val(0, (size_t)rank * n + k));
        }
        return n * es;
    case UCOLL_COLL_ALLTOALL:
    case UCOLL_COLL_ALLTOALLV:
        for (int s = 0; s < p; s++) {
            for (size_t k = 0; k < n; k++) {
                elem_set(ref, o->dt, (size_t)s * n + k, move_val(s, (size_t)rank * n + k));
            }
        }
        return (size_t)p * n * es;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_REDUCE_SCATTER:
        for (size_t k = 0; k < n; k++) {
            elem_set(ref, o->dt, k, red_ref(op, 0, p, (size_t)rank * n + k));
        }
        return n * es;
    case UCOLL_COLL_SCAN:
        for (size_t k = 0; k < n; k++) {
            elem_set(ref, o->dt, k, red_ref(op, 0, rank + 1, k));
        }
        return n * es;
    case UCOLL_COLL_EXSCAN:
        if (rank == 0) {
            return 0;
        }
        for (size_t k = 0; k < n; k++) {
            elem_set(ref, o->dt, k, red_ref(op, 0, rank, k));
        }
        return n * es;
    default: return 0;
    }
}

/* ---- options ------------------------------------------------------------- */

static int parse_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(s, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static void usage(FILE *f)
{
    fprintf(f, "collective modes: ");
    for (int c = 0; c < UCOLL_COLL_LAST; c++) {
        fprintf(f, "%s ", ucoll__coll_name((ucoll_coll_t)c));
    }
    fprintf(f, "\noptions: --algo ID  --check  --chain  --fresh  --varied  --iters N  --warmup N  "
               "--min-size B  --max-size B  --dtype NAME  --op NAME\n");
}

static int parse_opts(const char *mode, int argc, char **argv, bench_opts_t *o)
{
    int c = -1, v;

    for (int i = 0; i < UCOLL_COLL_LAST; i++) {
        if (strcmp(mode, ucoll__coll_name((ucoll_coll_t)i)) == 0) {
            c = i;
        }
    }
    if (c < 0) {
        fprintf(stderr, "ucoll_bench: unknown mode '%s'\n", mode);
        usage(stderr);
        return -1;
    }
    memset(o, 0, sizeof(*o));
    o->coll = (ucoll_coll_t)c;
    o->iters = -1;
    o->warmup = -1;
    o->min_size = 1;
    o->max_size = DEFAULT_MAX;
    o->dt = is_reducing(o->coll) ? UCOLL_FLOAT32 : UCOLL_BYTE;
    o->op = UCOLL_SUM;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *val = (i + 1 < argc) ? argv[i + 1] : NULL;

        if (strcmp(a, "--check") == 0) {
            o->check = 1;
            continue;
        }
        if (strcmp(a, "--chain") == 0) {
            o->chain = 1;
            continue;
        }
        if (strcmp(a, "--fresh") == 0) {
            o->fresh = 1;
            continue;
        }
        if (strcmp(a, "--varied") == 0) {
            o->varied = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (val == NULL) {
            fprintf(stderr, "ucoll_bench: %s needs a value (or is unknown)\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--algo") == 0) {
            o->algo = val;
        } else if (strcmp(a, "--iters") == 0 && (v = atoi(val)) > 0) {
            o->iters = v;
        } else if (strcmp(a, "--warmup") == 0 && (v = atoi(val)) >= 0) {
            o->warmup = v;
        } else if (strcmp(a, "--min-size") == 0 && ucoll__parse_size(val, &o->min_size) == 0) {
        } else if (strcmp(a, "--max-size") == 0 && ucoll__parse_size(val, &o->max_size) == 0) {
        } else if (strcmp(a, "--dtype") == 0 &&
                   (v = parse_name(val, dtype_names, UCOLL_DTYPE_LAST)) >= 0) {
            o->dt = (ucoll_dtype_t)v;
        } else if (strcmp(a, "--op") == 0 && (v = parse_name(val, op_names, UCOLL_OP_LAST)) >= 0) {
            o->op = (ucoll_op_t)v;
        } else {
            fprintf(stderr, "ucoll_bench: bad option %s %s\n", a, val);
            usage(stderr);
            return -1;
        }
    }
    if (o->min_size == 0) {
        o->min_size = 1;
    }
    if (o->chain && (o->check || o->fresh)) {
        fprintf(stderr, "ucoll_bench: --chain runs without --check or --fresh\n");
        return -1;
    }
    if (o->check && o->varied) {
        fprintf(stderr, "ucoll_bench: --check sets its own inputs, without --varied\n");
        return -1;
    }
    if (o->max_size < o->min_size) {
        fprintf(stderr, "ucoll_bench: --max-size below --min-size\n");
        return -1;
    }
    return 0;
}

/* Force o->algo on this context, as UCOLL_<OP>_ALGO would. */
static int force_algo(ucoll_ctx_t *ctx, const bench_opts_t *o)
{
    char *id;

    if (o->algo == NULL) {
        return 0;
    }
    if (ucoll__algo_find(o->coll, o->algo) == NULL) {
        if (ucoll_comm_rank(ucoll_comm_world(ctx)) != 0) {
            return -1;
        }
        fprintf(stderr, "ucoll_bench: %s has no algorithm '%s'; it has:", ucoll__coll_name(o->coll),
                o->algo);
        for (const ucoll_algo_t *const *a = ucoll__algos(o->coll); a && *a; a++) {
            fprintf(stderr, " %s", (*a)->id);
        }
        fprintf(stderr, "\n");
        return -1;
    }
    if ((id = strdup(o->algo)) == NULL) {
        return -1;
    }
    free(ctx->cfg.algo[o->coll]);
    ctx->cfg.algo[o->coll] = id;
    ucoll__ctx_config_changed(ctx);
    return 0;
}

/* ---- the benchmark ------------------------------------------------------- */

/* Buffers for calls of up to max_elems elements (call_count): p blocks of
 * them where a call moves one block per rank (gather, allgather, alltoall,
 * reduce_scatter, and their v-variants), one vector otherwise, so a bcast
 * of a large model's size fits where p copies would not. */
static int bufs_alloc(bench_bufs_t *b, ucoll_coll_t c, size_t max_elems, size_t esize, int p)
{
    int whole = c == UCOLL_COLL_BARRIER || c == UCOLL_COLL_BCAST || c == UCOLL_COLL_REDUCE ||
                c == UCOLL_COLL_ALLREDUCE || c == UCOLL_COLL_SCAN || c == UCOLL_COLL_EXSCAN;

    memset(b, 0, sizeof(*b));
    b->cap = (max_elems * (whole ? 1 : (size_t)p) + 1) * esize;
    b->sbuf = malloc(b->cap);
    b->rbuf = malloc(b->cap);
    b->ref = malloc(b->cap);
    b->counts = calloc((size_t)p, sizeof(size_t));
    b->displs = calloc((size_t)p, sizeof(size_t));
    if (!b->sbuf || !b->rbuf || !b->ref || !b->counts || !b->displs) {
        return -1;
    }
    memset(b->sbuf, 0, b->cap);
    return 0;
}

static void bufs_free(bench_bufs_t *b)
{
    free(b->sbuf);
    free(b->rbuf);
    free(b->ref);
    free(b->counts);
    free(b->displs);
}

/* --chain: roots alternate between 0 and p-1, no barrier between calls;
 * the timed loop starts after a barrier and every rank divides its time by
 * the number of calls. */
static int bench_chain(const bench_opts_t *o, bench_bufs_t *b, size_t n, int warmup, int iters,
                       ucoll_comm_t *comm, double *lat_p, int64_t *bad_p)
{
    int p = ucoll_comm_size(comm), st = UCOLL_OK;
    double t0 = 0;

    for (int it = 0; it < warmup + iters && st == UCOLL_OK; it++) {
        if (it == warmup) {
            if ((st = ucoll_barrier(comm)) != UCOLL_OK) {
                break;
            }
            t0 = now_s();
        }
        st = run_call(o, b, n, (it & 1) ? p - 1 : 0, comm);
    }
    if (st != UCOLL_OK) {
        fprintf(stderr, "ucoll_bench: rank %d: chained %s: %s\n", ucoll_comm_rank(comm),
                ucoll__coll_name(o->coll), ucoll_strerror(st));
        return st;
    }
    *lat_p = (now_s() - t0) / iters;
    *bad_p = 0;
    return ucoll_barrier(comm);
}

/* Time one size; *lat_p = this rank's mean latency in seconds, *bad_p the
 * number of wrong results it saw. */
static int bench_size(const bench_opts_t *o, bench_bufs_t *b, size_t n, size_t bytes,
                      ucoll_comm_t *comm, double *lat_p, int64_t *bad_p)
{
    int rank = ucoll_comm_rank(comm), p = ucoll_comm_size(comm);
    int large = bytes > LARGE_THRESHOLD;
    int iters = o->iters > 0 ? o->iters : (large ? 100 : 1000);
    int warmup = o->warmup >= 0 ? o->warmup : (large ? 10 : 100);
    double total = 0;
    int64_t bad = 0;
    size_t cmp = 0;
    int st;

    for (int i = 0; i < p; i++) {
        b->counts[i] = n;
        b->displs[i] = (size_t)i * n;
    }
    if (o->check) {
        cmp = reference(o, b, n, rank, p);
    }
    fill_input(o, b, n, rank, p);
    if (o->chain) {
        return bench_chain(o, b, n, warmup, iters, comm, lat_p, bad_p);
    }
    for (int it = 0; it < warmup + iters; it++) {
        double t0;

        if (o->check && it > 0) {
            move_salt = it % 60;
            cmp = reference(o, b, n, rank, p);
            fill(o, b, n, rank, p);
        } else if (o->fresh && !o->check) { /* --check refills from the second call */
            /* then a barrier, so that no rank's timed call waits for
             * another's rewrite (a bcast's root rewrites alone) */
            refresh(o, b, n, rank, p, it);
            if ((st = ucoll_barrier(comm)) != UCOLL_OK) {
                return st;
            }
        }
        t0 = now_s();
        st = run_call(o, b, n, 0, comm);
        if (it >= warmup) {
            total += now_s() - t0;
        }
        if (st != UCOLL_OK) {
            fprintf(stderr, "ucoll_bench: rank %d: %s of %zu bytes: %s\n", rank,
                    ucoll__coll_name(o->coll), bytes, ucoll_strerror(st));
            return st;
        }
        if (cmp && memcmp(b->rbuf, b->ref, cmp) != 0) {
            if (bad++ == 0) {
                fprintf(stderr, "ucoll_bench: rank %d: %s of %zu bytes: wrong result\n", rank,
                        ucoll__coll_name(o->coll), bytes);
            }
        }
        if ((st = ucoll_barrier(comm)) != UCOLL_OK) {
            return st;
        }
    }
    *lat_p = total / iters;
    *bad_p = bad;
    return UCOLL_OK;
}

int ucoll_bench_coll(ucoll_ctx_t *ctx, const char *mode, int argc, char **argv)
{
    ucoll_comm_t *comm = ucoll_comm_world(ctx);
    int rank = ucoll_comm_rank(comm), p = ucoll_comm_size(comm);
    size_t esize, maxn;
    int64_t bad_total = 0;
    bench_opts_t o;
    bench_bufs_t b;
    int st;

    if ((st = parse_opts(mode, argc, argv, &o)) != 0) {
        return st < 0 ? 1 : 0;
    }
    if (force_algo(ctx, &o) != 0) {
        return 1;
    }
    esize = ucoll_dtype_size(o.dt);
    maxn = call_count(o.coll, o.max_size, esize, p);
    if (bufs_alloc(&b, o.coll, maxn + 1, esize, p) != 0) {
        fprintf(stderr, "ucoll_bench: out of memory for %zu-byte buffers\n", b.cap);
        bufs_free(&b);
        return 1;
    }
    if (rank == 0) {
        printf("# ucoll_bench %s p=%d algo=%s", ucoll__coll_name(o.coll), p,
               o.algo ? o.algo : "default");
        if (o.coll != UCOLL_COLL_BARRIER) {
            printf(" dtype=%s", dtype_names[o.dt]);
        }
        if (is_reducing(o.coll)) {
            printf(" op=%s", op_names[o.op]);
        }
        printf("%s%s%s%s\n# %-10s %12s %12s %12s\n", o.check ? " check=on" : "",
               o.chain ? " chain=on" : "", o.fresh ? " fresh=on" : "", o.varied ? " varied=on" : "",
               "bytes", "avg_us", "min_us", "max_us");
        fflush(stdout);
    }
    for (size_t bytes = o.min_size; bytes <= o.max_size; bytes *= 2) {
        size_t n = call_count(o.coll, bytes, esize, p);
        double lat, sum, mn, mx;
        int64_t bad, bad_all;

        if (o.coll == UCOLL_COLL_BARRIER) {
            bytes = 0;
            n = 0;
        } else if (n == 0) {
            continue; /* smaller than one element (per rank) */
        }
        st = bench_size(&o, &b, n, bytes, comm, &lat, &bad);
        if (st != UCOLL_OK) {
            break;
        }
        if ((st = ucoll_reduce(&lat, &sum, 1, UCOLL_FLOAT64, UCOLL_SUM, 0, comm)) ||
            (st = ucoll_reduce(&lat, &mn, 1, UCOLL_FLOAT64, UCOLL_MIN, 0, comm)) ||
            (st = ucoll_reduce(&lat, &mx, 1, UCOLL_FLOAT64, UCOLL_MAX, 0, comm)) ||
            (st = ucoll_allreduce(&bad, &bad_all, 1, UCOLL_INT64, UCOLL_SUM, comm))) {
            fprintf(stderr, "ucoll_bench: reducing the timings: %s\n", ucoll_strerror(st));
            break;
        }
        bad_total += bad_all;
        if (rank == 0) {
            printf("%-12zu %12.3f %12.3f %12.3f%s\n", bytes, sum / p * 1e6, mn * 1e6, mx * 1e6,
                   bad_all ? "  CHECK FAILED" : "");
            fflush(stdout);
        }
        if (o.coll == UCOLL_COLL_BARRIER) {
            break;
        }
        if (bytes > o.max_size / 2) {
            break;
        }
    }
    bufs_free(&b);
    if (st == UCOLL_OK && o.check && rank == 0) {
        printf("# check: %s (%" PRId64 " wrong results)\n", bad_total ? "FAILED" : "passed",
               bad_total);
    }
    return (st != UCOLL_OK || bad_total != 0) ? 1 : 0;
}

/*
 * ucoll_tune: measure this job and write a tuning file (UCOLL_TUNE_FILE).
 *
 *   ucoll_tune --calibrate [-o FILE]
 *       Fit the model to this job: alpha and beta from a ping-pong of rank 0
 *       with a rank of its node and with one of another node (when there
 *       is one), over sizes; gamma (float32 sum) and lambda (memcpy) from
 *       timed kernels. Writes "model:" (inside a node) and "model.net:"
 *       (across nodes) lines. When ranks outnumber processing units, the
 *       node's ping-pong runs again with the other ranks asleep, and the
 *       line gets wake= the difference in alpha (the wait for descheduled
 *       peers, which the runtime then does not add a second time).
 *   ucoll_tune OP[,OP...] [-o FILE] [--min-size B] [--max-size B] [--iters N]
 *              [--same-input]
 *       Run every algorithm of each operation that can serve, over sizes
 *       (powers of 4), three times in alternation (medians of
 *       measurements of about 20 ms of calls each, 10-2000 calls), with the
 *       default parameters and, for the fastest, a few segment sizes,
 *       radices, shm ways, and for the shm bcast, allgather and alltoall
 *       rows streaming their copies into the region or not; measure the
 *       default selection against the best again, in 5 to 15 alternations
 *       (more while the two are close), and where the best won by more
 *       than 5%, once more after the whole sweep (a rule must win both
 *       looks); write rules (op, size range, this p -> algorithm and
 *       parameters) with the measured times as comments, and print the
 *       default selection's time against the best. Each call's input is
 *       rewritten before it, untimed (as ucoll_bench --fresh): rules are
 *       for an application, which produces new data for every call, so a
 *       peer reading the input in place cannot find it in its own cache
 *       from the call before. --same-input leaves it alone (the OSU
 *       method): at p = 2 with the CPUs far apart, message-based rows that
 *       read their peers' input in place then looked up to 1.7x quicker
 *       than the shm row, and with the input rewritten were no quicker
 *       far apart and half as quick close.
 *   ucoll_tune --merge FILE FILE... -o OUT
 *       No launcher: one tuning file from those of several jobs, a rule
 *       where more than half of them chose alike (tune_merge.c).
 * Both append to FILE (default ucoll-tune.txt); run them under a launcher,
 * e.g. ucollrun -n 4 ucoll_tune --calibrate && ucollrun -n 4 ucoll_tune
 * bcast,allreduce, then export UCOLL_TUNE_FILE=$PWD/ucoll-tune.txt. Every
 * rank of a job must see the same file (ucoll_init checks).
 *
 * Times are the slowest rank's mean over the iterations, collected with
 * point-to-point messages (a collective would run the algorithm under test).
 */
#include "algos/algos.h"
#include "core.h"
#include "dtype.h"
#include "transport/bootstrap.h"
#include "tune_merge.h"
#include "../bench/varied.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SIZES  32
#define TAG_TIME   77
#define REPS       3    /* measurements of each candidate, median taken */
#define FINAL_REPS 5    /* default and best measured again, alternating, at least */
#define FINAL_MAX  15   /* and at most, while the two stay close */
#define MEASURE_S  0.02 /* seconds of calls a measurement lasts, about */
/* The threshold a rule that turns streaming on gives: the default. */
#define STREAM_ON 32768

static int rank, size;
static int fresh = 1; /* 0: --same-input */
/* The job's UCOLL_SHM_STREAM_MIN and UCOLL_SHM_STREAM_ADAPT, which
 * set_params restores. */
static size_t stream_setting;
static int adapt_setting;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The median of n values (n odd), v left as it was. */
static double median(const double *v, int n)
{
    double t[FINAL_MAX];

    memcpy(t, v, (size_t)n * sizeof(*v));
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return t[n / 2];
}

/* The slowest rank's value, at rank 0 (others get their own back). */
static double max_at_root(ucoll_comm_t *w, double mine)
{
    double v = mine, o;

    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            ucoll_recv(&o, 1, UCOLL_FLOAT64, r, TAG_TIME, w, NULL);
            v = UCOLL_MAX(v, o);
        }
    } else {
        ucoll_send(&mine, 1, UCOLL_FLOAT64, 0, TAG_TIME, w);
    }
    return v;
}

/* ---- calibration ------------------------------------------------------- */

/* Half round trip of bytes between rank 0 and peer, median of 5 batches. */
static double pingpong(ucoll_comm_t *w, int peer, char *buf, size_t bytes)
{
    int iters = bytes >= ((size_t)1 << 20) ? 20 : bytes >= 65536 ? 100 : 1000;
    double batch[5];

    for (int b = 0; b < 5; b++) {
        double t0 = now();

        for (int i = 0; i < iters + (b == 0 ? iters / 10 : 0); i++) {
            if (rank == 0) {
                ucoll_send(buf, bytes, UCOLL_BYTE, peer, 1, w);
                ucoll_recv(buf, bytes, UCOLL_BYTE, peer, 1, w, NULL);
            } else {
                ucoll_recv(buf, bytes, UCOLL_BYTE, 0, 1, w, NULL);
                ucoll_send(buf, bytes, UCOLL_BYTE, 0, 1, w);
            }
        }
        batch[b] = (now() - t0) / (2.0 * (iters + (b == 0 ? iters / 10 : 0)));
    }
    qsort(batch, 5, sizeof(double), cmp_double);
    return batch[2];
}

/* alpha and beta of the path between rank 0 and peer: beta from the slope
 * between the two largest sizes (where start-up is noise), alpha the
 * median over the small sizes of time - bytes * beta. */
static void fit_path(ucoll_comm_t *w, int peer, double *alpha, double *beta, FILE *f)
{
    static const size_t sizes[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20};
    enum { N = sizeof(sizes) / sizeof(sizes[0]) };
    double t[N], small[4];
    char *buf = calloc(1, sizes[N - 1]);

    if (buf) {
        memset(buf, 1, sizes[N - 1]); /* no zero page (see sweep) */
    }
    for (int i = 0; i < N; i++) {
        ucoll_barrier(w);
        t[i] = (rank == 0 || rank == peer) ? pingpong(w, peer, buf, sizes[i]) : 0;
    }
    free(buf);
    *beta = UCOLL_MAX((t[N - 1] - t[N - 2]) / (double)(sizes[N - 1] - sizes[N - 2]), 1e-13);
    for (int i = 0; i < 4; i++) {
        small[i] = UCOLL_MAX(t[i] - (double)sizes[i] * *beta, 1e-8);
    }
    qsort(small, 4, sizeof(double), cmp_double);
    *alpha = (small[1] + small[2]) / 2;
    if (f) {
        fprintf(f, "# ping-pong rank 0 <-> %d, half round trip:", peer);
        for (int i = 0; i < N; i++) {
            fprintf(f, " %zuB %.3gus", sizes[i], t[i] * 1e6);
        }
        fprintf(f, "\n");
    }
}

/* Seconds per byte of a float32 sum and of memcpy over 1 MiB (out of the
 * first-level caches, as collectives of that size see them). */
static void kernels(double *gamma, double *lambda)
{
    size_t bytes = 1 << 20, n = bytes / 4;
    float *a = malloc(bytes), *b = malloc(bytes);
    double g = 1e30, l = 1e30;

    for (size_t i = 0; i < n; i++) {
        a[i] = 1.0f;
        b[i] = 2.0f;
    }
    for (int rep = 0; rep < 7; rep++) {
        double t0 = now();

        for (int k = 0; k < 20; k++) {
            ucoll__reduce(a, a, b, n, UCOLL_FLOAT32, UCOLL_SUM);
        }
        g = UCOLL_MIN(g, (now() - t0) / 20 / (double)bytes);
        t0 = now();
        for (int k = 0; k < 20; k++) {
            memcpy(a, b, bytes);
        }
        l = UCOLL_MIN(l, (now() - t0) / 20 / (double)bytes);
    }
    free(a);
    free(b);
    *gamma = g;
    *lambda = l;
}

static int calibrate(ucoll_ctx_t *ctx, FILE *f)
{
    ucoll_comm_t *w = ucoll_comm_world(ctx);
    const ucoll_boot_t *b = ctx->boot;
    int local = -1, remote = -1;
    double al = 0, bl = 0, an = 0, bn = 0, g, l, wake = 0;

    if (size < 2) {
        fprintf(stderr, "ucoll_tune --calibrate: run it on 2 or more ranks (a launcher)\n");
        return 1;
    }
    /* a peer of rank 0's node and one of another node: the same answer on
     * every rank, from rank 0's view (broadcast) */
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            int same = 0;

            for (int i = 0; b->locality_known && i < b->local_size; i++) {
                same |= b->local_peers[i] == r;
            }
            if (same && local < 0) {
                local = r;
            } else if (!same && remote < 0) {
                remote = r;
            }
        }
    }
    {
        int pr[2] = {local, remote};

        ucoll_bcast(pr, 2, UCOLL_INT32, 0, w);
        local = pr[0];
        remote = pr[1];
    }
    if (local > 0) {
        fit_path(w, local, &al, &bl, rank == 0 ? f : NULL);
        if (ctx->oversub) {
            /* ranks outnumber processing units: the ping-pong above waited
             * for peers descheduled by the ranks polling meanwhile, as
             * collectives do. Again with those ranks asleep (block mode)
             * gives alpha without the waits; the difference is the wake
             * (lib/algos/algos.c, tune_model) */
            int mode = ctx->cfg.wait_mode;
            double a0, b0;

            if (rank != 0 && rank != local) {
                ctx->cfg.wait_mode = UCOLL_WAIT_BLOCK;
            }
            fit_path(w, local, &a0, &b0, NULL);
            ctx->cfg.wait_mode = mode;
            wake = UCOLL_MAX(al - a0, 0.0);
            if (rank == 0 && f) {
                fprintf(f,
                        "# oversubscribed: alpha %.3gus with the other ranks polling, %.3gus "
                        "with them asleep\n",
                        al * 1e6, a0 * 1e6);
            }
        }
    }
    if (remote > 0) {
        fit_path(w, remote, &an, &bn, rank == 0 ? f : NULL);
    }
    kernels(&g, &l);
    g = max_at_root(w, g);
    l = max_at_root(w, l);
    if (rank == 0) {
        if (local > 0) {
            if (wake > 0) {
                fprintf(f, "model:alpha=%.4g:beta=%.4g:gamma=%.4g:lambda=%.4g:wake=%.4g\n", al, bl,
                        g, l, wake);
            } else {
                fprintf(f, "model:alpha=%.4g:beta=%.4g:gamma=%.4g:lambda=%.4g\n", al, bl, g, l);
            }
            printf("inside a node:  alpha %.3g us, beta %.3g ns/B (%.2f GB/s), gamma %.3g ns/B, "
                   "lambda %.3g ns/B\n",
                   al * 1e6, bl * 1e9, 1e-9 / bl, g * 1e9, l * 1e9);
            if (wake > 0) {
                printf("oversubscribed: %.3g us of alpha is waiting for descheduled peers\n",
                       wake * 1e6);
            }
        }
        if (remote > 0) {
            fprintf(f, "model.net:alpha=%.4g:beta=%.4g:gamma=%.4g:lambda=%.4g\n", an, bn, g, l);
            printf("across nodes:   alpha %.3g us, beta %.3g ns/B (%.2f GB/s)\n", an * 1e6,
                   bn * 1e9, 1e-9 / bn);
        }
        if (local < 0 && remote < 0) {
            printf("no peer measured\n");
        }
    }
    return 0;
}

/* ---- algorithm sweep ----------------------------------------------------- */

typedef struct {
    ucoll_coll_t coll;
    char *sbuf, *rbuf;
    size_t cap;
} sweep_t;

static int supported(ucoll_coll_t c)
{
    switch (c) {
    case UCOLL_COLL_BARRIER:
    case UCOLL_COLL_BCAST:
    case UCOLL_COLL_REDUCE:
    case UCOLL_COLL_ALLREDUCE:
    case UCOLL_COLL_GATHER:
    case UCOLL_COLL_SCATTER:
    case UCOLL_COLL_ALLGATHER:
    case UCOLL_COLL_ALLTOALL:
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case UCOLL_COLL_SCAN:
    case UCOLL_COLL_EXSCAN: return 1;
    default: return 0;
    }
}

/* Elements per call for a vector of bytes (as ucoll_coll_bytes counts). */
static size_t elems(ucoll_coll_t c, size_t bytes)
{
    size_t n = bytes / 4;

    if (c == UCOLL_COLL_REDUCE_SCATTER_BLOCK) {
        n /= (size_t)size;
    }
    return UCOLL_MAX(n, (size_t)1);
}

static int call(const sweep_t *s, size_t n, ucoll_comm_t *w)
{
    switch (s->coll) {
    case UCOLL_COLL_BARRIER: return ucoll_barrier(w);
    case UCOLL_COLL_BCAST: return ucoll_bcast(s->rbuf, n, UCOLL_FLOAT32, 0, w);
    case UCOLL_COLL_REDUCE:
        return ucoll_reduce(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, UCOLL_SUM, 0, w);
    case UCOLL_COLL_ALLREDUCE:
        return ucoll_allreduce(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, UCOLL_SUM, w);
    case UCOLL_COLL_GATHER: return ucoll_gather(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, 0, w);
    case UCOLL_COLL_SCATTER: return ucoll_scatter(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, 0, w);
    case UCOLL_COLL_ALLGATHER: return ucoll_allgather(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, w);
    case UCOLL_COLL_ALLTOALL: return ucoll_alltoall(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, w);
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return ucoll_reduce_scatter_block(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, UCOLL_SUM, w);
    case UCOLL_COLL_SCAN: return ucoll_scan(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, UCOLL_SUM, w);
    case UCOLL_COLL_EXSCAN: return ucoll_exscan(s->sbuf, s->rbuf, n, UCOLL_FLOAT32, UCOLL_SUM, w);
    default: return UCOLL_ERR_UNSUPPORTED;
    }
}

/* Write this rank's input of a call of n elements, bytes that change
 * along it and from call to call (bench/varied.h: an application's data;
 * one byte value would let the shm rows skip rewriting equal stretches of
 * their regions where such data would not). */
static void refresh(const sweep_t *s, size_t n, int i)
{
    size_t in = n * sizeof(float);
    uint64_t salt = (uint64_t)rank << 32 | (uint64_t)(i + 1);

    switch (s->coll) {
    case UCOLL_COLL_BARRIER: return;
    case UCOLL_COLL_BCAST:
        if (rank == 0) {
            ucoll_bench_vary(s->rbuf, in, salt);
        }
        return;
    case UCOLL_COLL_SCATTER:
        if (rank != 0) {
            return;
        }
        /* fall through */
    case UCOLL_COLL_ALLTOALL:
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK: in *= (size_t)size; break;
    default: break;
    }
    ucoll_bench_vary(s->sbuf, in, salt);
}

/* Select algo (NULL: the default selection), seg and radix (0: model),
 * the shm way (0: model) and the shm streaming threshold (-1: the job's
 * UCOLL_SHM_STREAM_MIN and UCOLL_SHM_STREAM_ADAPT; else that threshold,
 * fixed, as a rule's stream= gives it) on every rank. */
static void set_params(ucoll_ctx_t *ctx, ucoll_coll_t c, const char *algo, size_t seg,
                       unsigned radix, int way, long stream)
{
    free(ctx->cfg.algo[c]);
    ctx->cfg.algo[c] = algo ? strdup(algo) : NULL;
    ctx->cfg.seg_size = seg;
    ctx->cfg.radix = radix;
    ctx->cfg.shm_way = way;
    ctx->cfg.shm_stream_min = stream < 0 ? stream_setting : (size_t)stream;
    ctx->cfg.shm_stream_adapt = stream < 0 ? adapt_setting : 0;
    ucoll__ctx_config_changed(ctx);
}

/* Slowest rank's mean time per call (1e30 on an error), each call timed
 * on its own after a barrier: the OSU method, as ucoll_bench and the model
 * (latency). Back to back, without the barrier, a rooted tree whose root
 * fires and forgets looked up to 20x faster than the shared-memory rows
 * that wait for their readers (8-byte bcast at p = 4), a rate of calls
 * that the model does not predict. */
static double measure(ucoll_ctx_t *ctx, const sweep_t *s, size_t bytes, int iters)
{
    ucoll_comm_t *w = ucoll_comm_world(ctx);
    size_t n = elems(s->coll, bytes);
    double t = 0, t0;
    int st = UCOLL_OK;

    for (int i = 0; i < 2 && st == UCOLL_OK; i++) {
        st = call(s, n, w);
    }
    for (int i = 0; i < iters && st == UCOLL_OK; i++) {
        if (fresh && s->coll != UCOLL_COLL_BARRIER) {
            /* every rank through its call first: a rank done early (a
             * reduce's non-root) rewrote its input beside the others'
             * timed call, on their core where ranks outnumber cores
             * (p = 4 on 2, reduce of 2 MiB: every row 4-5 ms, the shm
             * row 5.1 ms where ucoll_bench --fresh, which has this
             * barrier, measured 0.6-1.4 ms) */
            st = ucoll_barrier(w);
            refresh(s, n, i);
        }
        if (s->coll != UCOLL_COLL_BARRIER && st == UCOLL_OK) {
            st = ucoll_barrier(w);
        }
        t0 = now();
        st = st == UCOLL_OK ? call(s, n, w) : st;
        t += now() - t0;
    }
    t = st == UCOLL_OK ? t / iters : 1e30;
    return max_at_root(w, t);
}

/* Calls per measurement at this size: enough for MEASURE_S seconds of
 * the default selection (3 calls timed), within 10-2000. A measurement of
 * 10 calls of 4 ms or less spanned only a few of the scheduler's slices
 * where ranks outnumber cores, and the same one-shot allreduce (p = 3, 2
 * MiB) measured 1.41x apart in alternation. The same on every rank. */
static int iters_for(ucoll_ctx_t *ctx, ucoll_coll_t c, const sweep_t *s, size_t bytes)
{
    double t;
    int iters;

    set_params(ctx, c, NULL, 0, 0, 0, -1);
    t = measure(ctx, s, bytes, 3);
    iters = t <= 0 || t >= 1e30 ? 10 : (int)UCOLL_MIN(UCOLL_MAX(MEASURE_S / t, 10.0), 2000.0);
    ucoll_bcast(&iters, sizeof(iters), UCOLL_BYTE, 0, ucoll_comm_world(ctx));
    return iters;
}

typedef struct {
    size_t bytes;
    char algo[32];
    size_t seg;
    unsigned radix;
    int way;                  /* shm reduce/allreduce: the way (ucoll_shm_way_t), 0: model's */
    long stream;              /* shm bcast/allgather/alltoall: streaming threshold, -1: the job's */
    double best, dflt, again; /* again: the best measured beside the default */
    int reps;                 /* pairs of default and best measured */
    int iters;                /* calls a measurement of this size makes */
    double dflt2, again2;     /* the later look (dflt2 0: not taken) */
    int reps2;                /* its pairs */
    char dalgo[32];           /* the default selection's algorithm */
    int same;                 /* the default chose the best's algorithm and parameters */
    char others[512];         /* the measured times, for the comment */
    char kept[32];            /* the best of the sweep, when the default was kept */
} point_t;

/* Whether the row's cost formula moves with these parameters (the
 * selection's inputs otherwise): parameters it ignores (a radix for the
 * shm rows, a segment size for an unsegmented tree, the way the model
 * takes anyway) are not measured, where noise alone could win them a
 * rule. The same on every rank. */
static int params_matter(ucoll_comm_t *w, const ucoll_coll_args_t *a, const char *id, size_t seg,
                         unsigned radix, int way)
{
    const ucoll_algo_t *al = ucoll__algo_find(a->coll, id);
    ucoll_algo_params_t prm, alt;
    double t0, t1;

    if (al == NULL || al->cost == NULL) {
        return 1;
    }
    (void)ucoll__algo_select(w, a, &prm); /* the inputs, with no parameter set */
    alt = prm;
    alt.seg_size = seg ? seg : alt.seg_size;
    alt.radix = radix ? radix : alt.radix;
    alt.shm_way = way ? way : alt.shm_way;
    t0 = al->cost(a, w->size, &prm, &prm.model);
    t1 = al->cost(a, w->size, &alt, &alt.model);
    return t0 != t1;
}

/* The default selection against the point's best (algorithm and
 * parameters, the same on every rank), measured in alternation: at least
 * FINAL_REPS pairs, two more at a time (up to FINAL_MAX) while the
 * default's median stays within 1.00-1.12x the best's and they are not the
 * same choice. Medians of each into *dflt and *best, the pairs into *reps. */
static void confirm(ucoll_ctx_t *ctx, ucoll_coll_t c, const sweep_t *s, const point_t *pt,
                    double *dflt, double *best, int *reps)
{
    ucoll_comm_t *w = ucoll_comm_world(ctx);
    double td[FINAL_MAX], tb[FINAL_MAX];
    int n = 0, more = 1;

    while (more) {
        set_params(ctx, c, NULL, 0, 0, 0, -1);
        td[n] = measure(ctx, s, pt->bytes, pt->iters);
        set_params(ctx, c, pt->algo, pt->seg, pt->radix, pt->way, pt->stream);
        tb[n] = measure(ctx, s, pt->bytes, pt->iters);
        n++;
        if (n < FINAL_REPS || (n - FINAL_REPS) % 2 != 0) {
            continue;
        }
        if (rank == 0) {
            double r = median(td, n) / median(tb, n);

            more = n < FINAL_MAX && !pt->same && r > 1.0 && r < 1.12;
        }
        ucoll_bcast(&more, sizeof(more), UCOLL_BYTE, 0, w);
    }
    set_params(ctx, c, NULL, 0, 0, 0, -1);
    *dflt = median(td, n);
    *best = median(tb, n);
    *reps = n;
}

static int sweep(ucoll_ctx_t *ctx, ucoll_coll_t c, size_t lo, size_t hi, int iters_opt, FILE *f)
{
    ucoll_comm_t *w = ucoll_comm_world(ctx);
    const ucoll_algo_t *const *reg = ucoll__algos(c);
    static const size_t segs[] = {16 << 10, 64 << 10, 256 << 10};
    static const unsigned radices[] = {2, 4, 8};
    static const int ways[] = {UCOLL_SHM_WAY_ONESHOT, UCOLL_SHM_WAY_SLICED, UCOLL_SHM_WAY_ROOT,
                               UCOLL_SHM_WAY_PIPE};
    point_t pts[MAX_SIZES];
    int np = 0, within = 0, within2 = 0;
    double worst = 0;
    char worst_at[32] = "-";
    sweep_t s = {c, NULL, NULL, 0};

    s.cap = UCOLL_MAX(hi, (size_t)64) * (size_t)size;
    s.sbuf = malloc(s.cap);
    s.rbuf = malloc(s.cap);
    if (s.sbuf == NULL || s.rbuf == NULL) {
        fprintf(stderr, "ucoll_tune: no memory for %zu-byte buffers\n", s.cap);
        return 1;
    }
    /* Written, as a user's buffers are: untouched memory reads as
     * the kernel's zero page, and with it (p = 3 on 2 cores, reduce of
     * 4 MiB) the shm row measured 2520 us where ucoll_bench's filled
     * buffers gave 580, while linear's time stayed (1590 against 2110
     * us): the sweep wrote a rule for linear from 2 MiB up. Filled, shm
     * took 547 us and was both the best and the default. Both buffers
     * get data, not zeros: the zeroing memset of a calloc'd buffer was a
     * store the compiler dropped, and the bcast root's buffer (rbuf)
     * stayed the zero page; there its shm row measured 1094 us at 8 MiB
     * and p = 2, against 310 under ucoll_bench. */
    for (size_t i = 0; i < s.cap / sizeof(float); i++) {
        ((float *)s.sbuf)[i] = (float)(i % 251);
        ((float *)s.rbuf)[i] = (float)(i % 241);
    }
    if (c == UCOLL_COLL_BARRIER) {
        hi = lo; /* no size */
    }
    for (size_t bytes = lo; bytes <= hi && np < MAX_SIZES; bytes *= 4) {
        point_t *pt = &pts[np++];
        int iters = iters_opt;
        size_t len = 0;
        ucoll_coll_args_t a = {0};

        memset(pt, 0, sizeof(*pt));
        pt->stream = -1;
        pt->bytes = bytes;
        pt->best = 1e30;
        a.coll = c;
        a.dt = UCOLL_FLOAT32;
        a.op = UCOLL_SUM;
        a.esize = 4;
        a.count = elems(c, bytes);
        a.sbuf = s.sbuf;
        a.rbuf = s.rbuf;
        if (iters == 0) {
            iters = iters_for(ctx, c, &s, bytes);
        }
        /* every algorithm REPS times, in alternation, the median of each:
         * a machine that drifts moves all of them alike */
        {
            double t[64][REPS];
            int na = 0;

            for (int rep = 0; rep < REPS; rep++) {
                na = 0;
                for (const ucoll_algo_t *const *al = reg; al && *al && na < 64; al++, na++) {
                    t[na][0 + rep] = 1e30;
                    if ((*al)->can_serve && !(*al)->can_serve(&a, size)) {
                        continue;
                    }
                    /* two levels only where the job spans nodes (forced
                     * elsewhere, the call would measure the fallback) */
                    if (((*al)->flags & UCOLL_ALGO_HIER) && !w->hier_able) {
                        continue;
                    }
                    set_params(ctx, c, (*al)->id, 0, 0, 0, -1);
                    t[na][rep] = measure(ctx, &s, bytes, iters);
                }
            }
            for (int k = 0; k < na && rank == 0; k++) {
                double med;

                qsort(t[k], REPS, sizeof(double), cmp_double);
                med = t[k][REPS / 2];
                if (med >= 1e30) {
                    continue;
                }
                len += (size_t)snprintf(pt->others + len,
                                        len < sizeof(pt->others) ? sizeof(pt->others) - len : 0,
                                        " %s %.3g", reg[k]->id, med * 1e6);
                if (med < pt->best) {
                    pt->best = med;
                    snprintf(pt->algo, sizeof(pt->algo), "%s", reg[k]->id);
                }
            }
        }
        /* everyone needs the winner to try its parameters */
        ucoll_bcast(pt->algo, sizeof(pt->algo), UCOLL_BYTE, 0, w);
        /* then its parameters: segment sizes, radices, the ways of the
         * shm reduce and allreduce rows, which differ by up to 2x where
         * ranks outnumber cores (the model's way is the first figure), and
         * for the shm rows whose copies into a region only get copied out
         * (bcast, allgather, alltoall), those copies fixed plain (k = 10)
         * and fixed streamed from the job's UCOLL_SHM_STREAM_MIN, or the
         * default 32 KiB where it is 0 (k = 11), from that size up, each
         * where the job does not do so already: by default the runtime
         * chooses per call by measurement (UCOLL_SHM_STREAM_ADAPT), which
         * a fixed choice must beat by 5% to make a rule. alltoall streams
         * only where every rank has a processing unit (shm_xchg.c). */
        for (int k = 0; c != UCOLL_COLL_BARRIER && k < 12; k++) {
            size_t seg = k < 3 ? segs[k] : 0;
            unsigned radix = k >= 3 && k < 6 ? radices[k - 3] : 0;
            int way = k >= 6 && k < 10 ? ways[k - 6] : 0;
            long stream = k == 10   ? 0
                          : k == 11 ? (long)(stream_setting ? stream_setting : STREAM_ON)
                                    : -1;
            double t;

            if (seg && seg >= bytes) {
                continue;
            }
            if ((k == 10 && stream_setting == 0) || (k == 11 && stream_setting && !adapt_setting)) {
                continue; /* the job's own choice */
            }
            if (k >= 10) {
                ucoll_algo_params_t prm = {0};

                (void)ucoll__algo_select(w, &a, &prm);
                if (strcmp(pt->algo, "shm") != 0 ||
                    (c != UCOLL_COLL_BCAST && c != UCOLL_COLL_ALLGATHER &&
                     c != UCOLL_COLL_ALLTOALL) ||
                    bytes < (size_t)(stream_setting ? stream_setting : STREAM_ON) ||
                    (c == UCOLL_COLL_ALLTOALL && prm.model.wake > 0)) {
                    continue;
                }
            }
            if (k >= 6 && k < 10 &&
                (strcmp(pt->algo, "shm") != 0 ||
                 (c != UCOLL_COLL_REDUCE && c != UCOLL_COLL_ALLREDUCE) ||
                 (way == UCOLL_SHM_WAY_ROOT && c != UCOLL_COLL_REDUCE) ||
                 (way == UCOLL_SHM_WAY_PIPE && c != UCOLL_COLL_ALLREDUCE))) {
                continue;
            }
            set_params(ctx, c, pt->algo, 0, 0, 0, -1);
            if (k < 10 && !params_matter(w, &a, pt->algo, seg, radix, way)) {
                continue;
            }
            double tr[REPS];

            set_params(ctx, c, pt->algo, seg, radix, way, stream);
            for (int rep = 0; rep < REPS; rep++) {
                tr[rep] = measure(ctx, &s, bytes, iters);
            }
            qsort(tr, REPS, sizeof(double), cmp_double);
            t = tr[REPS / 2];
            if (rank == 0 && t < pt->best * 0.95) { /* a parameter must earn its rule */
                pt->best = t;
                pt->seg = seg;
                pt->radix = radix;
                pt->way = way;
                pt->stream = stream;
            }
        }
        /* the default's choice, from the runtime's own selection */
        set_params(ctx, c, NULL, 0, 0, 0, -1);
        {
            ucoll_algo_params_t prm = {0};
            const ucoll_algo_t *d = ucoll__algo_select(w, &a, &prm);

            snprintf(pt->dalgo, sizeof(pt->dalgo), "%s", d ? d->id : "-");
            pt->same = d && !strcmp(d->id, pt->algo) && prm.seg_size == pt->seg &&
                       prm.radix == pt->radix && prm.shm_way == pt->way &&
                       prm.shm_stream == (pt->stream < 0 ? stream_setting : (size_t)pt->stream) &&
                       prm.shm_stream_adapt == (pt->stream < 0 ? adapt_setting : 0);
        }
        /* default against best, measured afresh and in alternation: the
         * best's own figure is the least of several noisy medians, biased
         * low, which would charge the default with noise. Pairs are added
         * while the two stay close: there a point's medians of 5 still
         * moved by 5-10% from run to run, as much as the 5% a rule must
         * win by */
        ucoll_bcast(&pt->seg, sizeof(pt->seg), UCOLL_BYTE, 0, w);
        ucoll_bcast(&pt->radix, sizeof(pt->radix), UCOLL_BYTE, 0, w);
        ucoll_bcast(&pt->way, sizeof(pt->way), UCOLL_BYTE, 0, w);
        ucoll_bcast(&pt->stream, sizeof(pt->stream), UCOLL_BYTE, 0, w);
        ucoll_bcast(&pt->same, sizeof(pt->same), UCOLL_BYTE, 0, w);
        pt->iters = iters;
        confirm(ctx, c, &s, pt, &pt->dflt, &pt->again, &pt->reps);
        if (rank == 0) {
            printf("%-22s %10zu  best %-14s %10.2f us%s%s%s%s%s  default %-14s %10.2f us  "
                   "default/best %.2f%s, %d pairs\n",
                   ucoll__coll_name(c), bytes, pt->algo, pt->again * 1e6, pt->seg ? " seg" : "",
                   pt->radix ? " radix" : "", pt->way ? " way=" : "",
                   pt->way ? ucoll__shm_way_names[pt->way] : "",
                   pt->stream < 0 ? ""
                   : pt->stream   ? " stream=on"
                                  : " stream=off",
                   pt->dalgo, pt->dflt * 1e6, pt->dflt / pt->again,
                   pt->same ? " (same choice)" : "", pt->reps);
            fflush(stdout);
            if (pt->same || pt->dflt <= 1.10 * pt->again) {
                within++;
            }
            if (!pt->same && pt->dflt / pt->again > worst) {
                worst = pt->dflt / pt->again;
                snprintf(worst_at, sizeof(worst_at), "%zu B", bytes);
            }
        }
    }
    /* A later look at every point where the best beat the default by more
     * than 5%: the same pairs again, after the whole sweep. A burst of noise
     * on the machine moves one stretch of time: at p = 2 it once had a
     * 32 KiB allreduce measure 7.8 us by shm (4.3-5.0 in three other runs)
     * and 10.6 against 7.8 by rabenseifner in the pairs, which then won a
     * rule for an algorithm that measured 1.4x the default's time in other
     * jobs. */
    for (int i = 0; i < np; i++) {
        point_t *pt = &pts[i];
        int again = rank == 0 && !pt->same && pt->dflt > 1.05 * pt->again;

        ucoll_bcast(&again, sizeof(again), UCOLL_BYTE, 0, w);
        if (!again) {
            continue;
        }
        confirm(ctx, c, &s, pt, &pt->dflt2, &pt->again2, &pt->reps2);
        if (rank == 0) {
            printf("%-22s %10zu  later look: best %.2f us, default %.2f us, ratio %.2f, "
                   "%d pairs\n",
                   ucoll__coll_name(c), pt->bytes, pt->again2 * 1e6, pt->dflt2 * 1e6,
                   pt->dflt2 / pt->again2, pt->reps2);
            fflush(stdout);
        }
    }
    for (int i = 0; i < np && rank == 0; i++) {
        point_t *pt = &pts[i];

        if (pt->same || pt->dflt <= 1.10 * pt->again ||
            (pt->dflt2 > 0 && pt->dflt2 <= 1.10 * pt->again2)) {
            within2++;
        }
        /* a best that does not beat the default by 5% in both looks, each
         * measured side by side, won by noise: the rule keeps the default's
         * algorithm with the model's parameters (p = 2-4, 6 ops, 8 B-32 MiB:
         * rules written without the first look left the default within 5%
         * of the best at 203 of 216 points, 200 untuned; with it 206, one
         * run each) */
        if (!pt->same && (pt->again > 0.95 * pt->dflt || pt->again2 > 0.95 * pt->dflt2)) {
            snprintf(pt->kept, sizeof(pt->kept), "%s", pt->algo);
            snprintf(pt->algo, sizeof(pt->algo), "%s", pt->dalgo);
            pt->seg = 0;
            pt->radix = 0;
            pt->way = 0;
            pt->stream = -1;
        }
    }
    if (rank == 0) {
        printf("# %s at p = %d: default within 1.10x of the best at %d of %d sizes "
               "(the same choice counts), %d with the later looks; worst other %.2f at %s\n",
               ucoll__coll_name(c), size, within, np, within2, worst, worst_at);
        fflush(stdout);
        /* size i covers [geometric middle with i-1, with i+1); equal
         * neighbours merge */
        fprintf(f, "# %s at p = %d, us per call (slowest rank):\n", ucoll__coll_name(c), size);
        for (int i = 0; i < np; i++) {
            size_t from =
                i == 0 ? 0 : (size_t)sqrt((double)pts[i - 1].bytes * (double)pts[i].bytes);
            int j = i;

            while (j + 1 < np && !strcmp(pts[j + 1].algo, pts[i].algo) &&
                   pts[j + 1].seg == pts[i].seg && pts[j + 1].radix == pts[i].radix &&
                   pts[j + 1].way == pts[i].way && pts[j + 1].stream == pts[i].stream) {
                j++;
            }
            for (int k = i; k <= j; k++) {
                fprintf(f, "#   %zu B:%s%s%s%s\n", pts[k].bytes, pts[k].others,
                        pts[k].kept[0] ? " (default kept: " : "", pts[k].kept,
                        pts[k].kept[0] ? " did not confirm)" : "");
            }
            fprintf(f, "%s:%zu-", ucoll__coll_name(c), from);
            if (j + 1 < np) {
                fprintf(f, "%zu", (size_t)sqrt((double)pts[j].bytes * (double)pts[j + 1].bytes));
            } else {
                fprintf(f, "inf");
            }
            fprintf(f, ":@%s:np=%d-%d", pts[i].algo, size, size);
            if (pts[i].seg) {
                fprintf(f, ":seg=%zu", pts[i].seg);
            }
            if (pts[i].radix) {
                fprintf(f, ":radix=%u", pts[i].radix);
            }
            if (pts[i].way) {
                fprintf(f, ":way=%s", ucoll__shm_way_names[pts[i].way]);
            }
            if (pts[i].stream >= 0) {
                fprintf(f, ":stream=%ld", pts[i].stream);
            }
            fprintf(f, "\n");
            i = j;
        }
        fflush(f);
    }
    free(s.sbuf);
    free(s.rbuf);
    return 0;
}

/* Whether paths a and b name the same existing file. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;

    return a && a[0] && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: ucoll_tune --calibrate [-o FILE]\n"
               "       ucoll_tune OP[,OP...] [-o FILE] [--min-size B] [--max-size B] [--iters N]\n"
               "                  [--same-input]\n"
               "  under a launcher; appends to FILE (default ucoll-tune.txt), for\n"
               "  UCOLL_TUNE_FILE; with UCOLL_TUNE_FILE set (another file), the sweep's default\n"
               "  is the selection under its rules. Each call's input is rewritten before it,\n"
               "  untimed (an application's new data every call); --same-input keeps it.\n"
               "  OP: barrier bcast reduce allreduce gather scatter allgather\n"
               "  alltoall reduce_scatter_block scan exscan\n"
               "       ucoll_tune --merge FILE FILE... -o OUT\n"
               "  without a launcher: writes OUT (anew) with, per operation, rank range\n"
               "  and size, the rule more than half of the files (of several jobs) agree\n"
               "  on, none where they do not (the model's choice), and per model field\n"
               "  the median.\n");
}

int main(int argc, char **argv)
{
    const char *out = "ucoll-tune.txt", *ops = NULL;
    size_t lo = 8, hi = 4 << 20;
    int iters = 0, cal = 0, rc = 0;
    ucoll_ctx_t *ctx;
    FILE *f = NULL;

    if (argc > 1 && !strcmp(argv[1], "--merge")) {
        char **files = calloc((size_t)argc, sizeof(*files));
        const char *mout = NULL;
        int nf = 0;

        if (files == NULL) {
            return 1;
        }
        for (int i = 2; i < argc; i++) {
            if (!strcmp(argv[i], "-o") && i + 1 < argc) {
                mout = argv[++i];
            } else if (argv[i][0] == '-') {
                mout = NULL;
                nf = 0;
                break;
            } else {
                files[nf++] = argv[i];
            }
        }
        for (int i = 0; i < nf && mout; i++) {
            if (same_file(files[i], mout)) {
                fprintf(stderr, "ucoll_tune --merge: %s is both an input and the output\n", mout);
                free(files);
                return 2;
            }
        }
        if (mout == NULL || nf < 2) {
            usage(stderr);
            free(files);
            return 2;
        }
        rc = ucoll_tune_merge(nf, files, mout);
        if (rc == 0) {
            printf("written to %s: export UCOLL_TUNE_FILE=%s to use it\n", mout, mout);
        }
        free(files);
        return rc;
    }
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(argv[i], "--calibrate")) {
            cal = 1;
        } else if (!strcmp(argv[i], "-o") && v) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--min-size") && v && ucoll__parse_size(v, &lo) == 0) {
            i++;
        } else if (!strcmp(argv[i], "--max-size") && v && ucoll__parse_size(v, &hi) == 0) {
            i++;
        } else if (!strcmp(argv[i], "--iters") && v) {
            iters = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--same-input")) {
            fresh = 0;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && ops == NULL) {
            ops = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!cal && ops == NULL) {
        usage(stderr);
        return 2;
    }
    lo = UCOLL_MAX(lo, (size_t)4);
    /* The calibration measures the plain runtime. A sweep forces each
     * candidate itself (a forced algorithm goes before any rule), and its
     * "default" is what the runtime selects: with UCOLL_TUNE_FILE set,
     * under that file's rules and model, which checks a tuning. Never the
     * file being written: its ranks would read different rules. */
    if (cal) {
        unsetenv("UCOLL_TUNE_FILE");
    } else if (same_file(getenv("UCOLL_TUNE_FILE"), out)) {
        fprintf(stderr,
                "ucoll_tune: UCOLL_TUNE_FILE is the output file %s; write the sweep's rules to "
                "another (-o FILE)\n",
                out);
        return 2;
    }
    if (ucoll_init(&ctx) != UCOLL_OK) {
        return 1;
    }
    rank = ucoll_comm_rank(ucoll_comm_world(ctx));
    stream_setting = ctx->cfg.shm_stream_min;
    adapt_setting = ctx->cfg.shm_stream_adapt;
    size = ucoll_comm_size(ucoll_comm_world(ctx));
    if (rank == 0) {
        f = fopen(out, "a");
        if (f == NULL) {
            perror(out);
            rc = 1;
        } else {
            time_t t = time(NULL);
            char host[64] = "?";

            gethostname(host, sizeof(host) - 1);
            fprintf(f, "# ucoll_tune %s on %s, %d ranks (%d on rank 0's node),%s %s",
                    ucoll_version(), host, size, ucoll_local_size(ctx),
                    fresh ? " input rewritten before each call,"
                          : " input unchanged between calls,",
                    ctime(&t));
        }
    }
    ucoll_bcast(&rc, 1, UCOLL_INT32, 0, ucoll_comm_world(ctx));
    if (rc == 0 && cal) {
        rc = calibrate(ctx, f);
    }
    if (rc == 0 && ops) {
        char *save = NULL, *list = strdup(ops);

        for (char *tok = list ? strtok_r(list, ",", &save) : NULL; rc == 0 && tok;
             tok = strtok_r(NULL, ",", &save)) {
            int c;

            for (c = 0; c < UCOLL_COLL_LAST; c++) {
                if (!strcmp(tok, ucoll__coll_name((ucoll_coll_t)c))) {
                    break;
                }
            }
            if (c == UCOLL_COLL_LAST || !supported((ucoll_coll_t)c)) {
                if (rank == 0) {
                    fprintf(stderr, "ucoll_tune: cannot tune '%s'\n", tok);
                }
                rc = 2;
                break;
            }
            rc = sweep(ctx, (ucoll_coll_t)c, lo, hi, iters, f);
        }
        free(list);
    }
    if (f) {
        fclose(f);
        if (rc == 0) {
            printf("written to %s: export UCOLL_TUNE_FILE=%s to use it\n", out, out);
        }
    }
    ucoll_finalize(ctx);
    return rc;
}

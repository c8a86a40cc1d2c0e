/*
 * ucoll_bench: point-to-point benchmarks in the OSU manner, plus the
 * collective modes of bench_coll.c.
 *
 *   ucoll_bench latency|bw|bibw [--min-size B] [--max-size B] [--iters N] [--warmup N]
 *   ucoll_bench <collective> [options of bench_coll.c]
 *
 * latency: ping-pong between ranks 0 and 1, half the round trip (osu_latency).
 * bw:      rank 0 posts a window of 64 isends, rank 1 the matching irecvs,
 *          then a 4-byte ack; MB/s = 1e6 B/s (osu_bw).
 * bibw:    both ranks do the window in both directions (osu_bibw).
 * All messages of a window share one buffer, as in OSU.
 * Output: '#' comment lines (benchmark, ranks, transport), then "size figure"
 * rows. Sizes above 8 KiB use fewer iterations, as the OSU suite does.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW 64
#define LARGE  8192

typedef struct {
    size_t min_size, max_size;
    int iters, warmup;
    int iters_set, warmup_set;
} p2p_opts_t;

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (end == s) {
        return -1;
    }
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default: break;
    }
    if (*end) {
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

static int parse_opts(int argc, char **argv, p2p_opts_t *o)
{
    int i;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (v == NULL) {
            fprintf(stderr, "ucoll_bench: %s needs a value\n", a);
            return -1;
        }
        if (!strcmp(a, "--min-size")) {
            if (parse_size(v, &o->min_size))
                goto bad;
        } else if (!strcmp(a, "--max-size")) {
            if (parse_size(v, &o->max_size))
                goto bad;
        } else if (!strcmp(a, "--iters")) {
            o->iters = atoi(v);
            o->iters_set = 1;
        } else if (!strcmp(a, "--warmup")) {
            o->warmup = atoi(v);
            o->warmup_set = 1;
        } else {
            fprintf(stderr, "ucoll_bench: unknown option %s\n", a);
            return -1;
        }
        i++;
        continue;
    bad:
        fprintf(stderr, "ucoll_bench: bad size '%s' for %s\n", v, a);
        return -1;
    }
    if (o->iters <= 0 || o->warmup < 0 || o->min_size > o->max_size) {
        fprintf(stderr, "ucoll_bench: bad iteration count or size range\n");
        return -1;
    }
    return 0;
}

static void iters_for(const p2p_opts_t *o, size_t size, int *iters, int *warmup)
{
    *iters = o->iters;
    *warmup = o->warmup;
    if (size > LARGE) {
        if (!o->iters_set)
            *iters = o->iters / 10 > 0 ? o->iters / 10 : 1;
        if (!o->warmup_set)
            *warmup = o->warmup / 10;
    }
}

#define CHECK(_call)                                                                     \
    do {                                                                                 \
        int _r = (_call);                                                                \
        if (_r != UCOLL_OK) {                                                            \
            fprintf(stderr, "ucoll_bench: %s failed: %s\n", #_call, ucoll_strerror(_r)); \
            return -1;                                                                   \
        }                                                                                \
    } while (0)

static int run_latency(ucoll_comm_t *w, char *sbuf, char *rbuf, size_t size, int iters, int warmup,
                       double *fig)
{
    int me = ucoll_comm_rank(w), i;
    double t0 = 0;

    for (i = 0; i < warmup + iters; i++) {
        if (i == warmup) {
            t0 = now_us();
        }
        if (me == 0) {
            CHECK(ucoll_send(sbuf, size, UCOLL_BYTE, 1, 1, w));
            CHECK(ucoll_recv(rbuf, size, UCOLL_BYTE, 1, 1, w, NULL));
        } else if (me == 1) {
            CHECK(ucoll_recv(rbuf, size, UCOLL_BYTE, 0, 1, w, NULL));
            CHECK(ucoll_send(sbuf, size, UCOLL_BYTE, 0, 1, w));
        }
    }
    *fig = (now_us() - t0) / (2.0 * iters);
    return 0;
}

/* One window: `dir` 1 = rank 0 sends, 2 = rank 1 sends, 3 = both. */
static int window(ucoll_comm_t *w, char *sbuf, char *rbuf, size_t size, int dir)
{
    ucoll_req_t *reqs[2 * WINDOW];
    int me = ucoll_comm_rank(w), peer = 1 - me, n = 0, j, ack = 0;
    int sends = (dir & (me == 0 ? 1 : 2)) != 0, recvs = (dir & (me == 0 ? 2 : 1)) != 0;

    for (j = 0; recvs && j < WINDOW; j++) {
        CHECK(ucoll_irecv(rbuf, size, UCOLL_BYTE, peer, 100, w, &reqs[n++]));
    }
    for (j = 0; sends && j < WINDOW; j++) {
        CHECK(ucoll_isend(sbuf, size, UCOLL_BYTE, peer, 100, w, &reqs[n++]));
    }
    CHECK(ucoll_waitall((size_t)n, reqs));
    if (dir == 3) {
        return 0;
    }
    if (sends) {
        CHECK(ucoll_recv(&ack, 4, UCOLL_BYTE, peer, 101, w, NULL));
    } else {
        CHECK(ucoll_send(&ack, 4, UCOLL_BYTE, peer, 101, w));
    }
    return 0;
}

/* Zero-byte exchange between ranks 0 and 1 (others return at once). */
static int sync01(ucoll_comm_t *w)
{
    int me = ucoll_comm_rank(w);
    ucoll_req_t *r[2];

    if (me > 1) {
        return 0;
    }
    CHECK(ucoll_irecv(NULL, 0, UCOLL_BYTE, 1 - me, 102, w, &r[0]));
    CHECK(ucoll_isend(NULL, 0, UCOLL_BYTE, 1 - me, 102, w, &r[1]));
    CHECK(ucoll_waitall(2, r));
    return 0;
}

static int run_bw(ucoll_comm_t *w, char *sbuf, char *rbuf, size_t size, int iters, int warmup,
                  int bi, double *fig)
{
    double t0 = 0, t;
    int i;

    for (i = 0; i < warmup + iters; i++) {
        if (i == warmup) {
            t0 = now_us();
        }
        if (window(w, sbuf, rbuf, size, bi ? 3 : 1)) {
            return -1;
        }
    }
    if (bi && sync01(w)) {
        return -1;
    }
    t = now_us() - t0;
    *fig = (double)size * WINDOW * iters * (bi ? 2 : 1) / t; /* B/us = MB/s */
    return 0;
}

static int bench_p2p(ucoll_ctx_t *ctx, const char *mode, int argc, char **argv)
{
    p2p_opts_t o = {.min_size = 0, .max_size = 4u << 20, .iters = 1000, .warmup = 100};
    ucoll_comm_t *w = ucoll_comm_world(ctx);
    int me = ucoll_comm_rank(w), p = ucoll_comm_size(w), lat = !strcmp(mode, "latency");
    int bi = !strcmp(mode, "bibw"), iters, warmup;
    char tls[256] = "?";
    char *sbuf, *rbuf;
    size_t size, bufsize;
    double fig;

    if (parse_opts(argc, argv, &o)) {
        return 1;
    }
    if (p < 2) {
        fprintf(stderr, "ucoll_bench %s needs 2 ranks (got %d)\n", mode, p);
        return 1;
    }
    bufsize = o.max_size; /* every message of a window uses it, as in OSU */
    sbuf = malloc(bufsize ? bufsize : 1);
    rbuf = malloc(bufsize ? bufsize : 1);
    if (sbuf == NULL || rbuf == NULL) {
        fprintf(stderr, "ucoll_bench: out of memory\n");
        return 1;
    }
    memset(sbuf, 'a', bufsize);
    memset(rbuf, 'b', bufsize);
    if (me <= 1) {
        ucoll_peer_transports(ctx, 1 - me, tls, sizeof(tls));
    }
    if (me == 0) {
        printf("# ucoll_bench %s (OSU %s method)\n", mode,
               lat  ? "osu_latency"
               : bi ? "osu_bibw"
                    : "osu_bw");
        printf("# p %d (ranks 0 and 1 measure)\n", p);
        printf("# transport %s\n", tls);
        printf("# %-10s %s\n", "size", lat ? "latency(us)" : "bandwidth(MB/s)");
        fflush(stdout);
    }
    for (size = o.min_size;; size = size ? size * 2 : 1) {
        iters_for(&o, size, &iters, &warmup);
        if (sync01(w)) {
            return 1;
        }
        if (me <= 1) {
            if ((lat ? run_latency(w, sbuf, rbuf, size, iters, warmup, &fig)
                     : run_bw(w, sbuf, rbuf, size, iters, warmup, bi, &fig))) {
                return 1;
            }
            if (me == 0) {
                printf(lat ? "%-12zu %.3f\n" : "%-12zu %.2f\n", size, fig);
                fflush(stdout);
            }
        }
        if (size >= o.max_size) {
            break;
        }
    }
    free(sbuf);
    free(rbuf);
    return 0;
}

#ifdef UCOLL_BENCH_NO_COLL
int ucoll_bench_coll(ucoll_ctx_t *ctx, const char *mode, int argc, char **argv)
{
    fprintf(stderr, "ucoll_bench: unknown mode '%s' (this build has latency, bw, bibw)\n", mode);
    return 1;
}
#endif

static void usage(void)
{
    fprintf(stderr,
            "usage: ucoll_bench latency|bw|bibw [--min-size B] [--max-size B] [--iters N] "
            "[--warmup N]\n"
            "       ucoll_bench <collective> [options]   (barrier, bcast, allreduce, ...)\n");
}

int main(int argc, char **argv)
{
    ucoll_ctx_t *ctx;
    const char *mode;
    int ret, rc;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage();
        return argc < 2;
    }
    mode = argv[1];
    ret = ucoll_init(&ctx);
    if (ret != UCOLL_OK) {
        fprintf(stderr, "ucoll_bench: ucoll_init: %s\n", ucoll_strerror(ret));
        return 1;
    }
    if (!strcmp(mode, "latency") || !strcmp(mode, "bw") || !strcmp(mode, "bibw")) {
        rc = bench_p2p(ctx, mode, argc - 2, argv + 2);
    } else {
        rc = ucoll_bench_coll(ctx, mode, argc - 2, argv + 2);
    }
    ret = ucoll_finalize(ctx);
    if (ret != UCOLL_OK && rc == 0) {
        fprintf(stderr, "ucoll_bench: ucoll_finalize: %s\n", ucoll_strerror(ret));
        rc = 1;
    }
    return rc;
}

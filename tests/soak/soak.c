/*
 * Soak: a long random mix of point-to-point and collective operations,
 * every result checked, resident memory sampled as it goes.
 *
 *   soak [operations] [seed]      (default 1000000, 1)
 *
 * Every rank draws the same pseudo-random sequence (one seed), so all agree
 * on each operation, its size, root and algorithm without talking:
 *   - collectives: bcast, reduce, allreduce, allgather, alltoall, gather,
 *     scatter, reduce_scatter_block, scan, barrier, blocking or
 *     nonblocking (a few in flight at once), in place where it applies;
 *     sizes log-uniform from 1 to 32k int32 elements (rarely up to 256k);
 *   - point-to-point: a random pair swaps messages of random size (eager
 *     and rendezvous), sometimes received with UCOLL_ANY_SOURCE/ANY_TAG;
 *   - every 1000 operations the forced algorithm of one collective changes
 *     to a random one of its registry (or back to the model's choice),
 *     exercising schedule building and the cache.
 * Inputs are small integers, so the expected bytes of every result are
 * computed locally. Every 100,000 operations each rank reads its resident
 * set size (/proc/self/statm) and rank 0 prints the largest and the sum.
 *
 * Prints "soak: N operations, F failed, RSS first/last/max KiB" on rank 0
 * and exits non-zero if a result was wrong, a call failed, or the largest
 * resident set of any rank grew by more than 16 MiB between the first
 * sample and the last.
 */
#include "ucoll.h"

#include "algos/algos.h"
#include "core.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXN       (256 * 1024) /* elements */
#define INFLIGHT   4
#define SAMPLE     100000
#define GROWTH_KIB (16 * 1024)

static int rank, size, failures;
static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* splitmix64: the same sequence on every rank */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rnd_count(void)
{
    int bits = (int)(rnd() % 16); /* 1 .. 32k, log-uniform */
    size_t n = ((size_t)1 << bits) + rnd() % ((size_t)1 << bits);

    if (rnd() % 200 == 0) {
        n = MAXN / 2 + rnd() % (MAXN / 2); /* now and then a large one */
    }
    return UCOLL_MIN(n, (size_t)MAXN);
}

static int32_t v(long op, int r, size_t i)
{
    return (int32_t)((op * 7 + r * 131 + (long)i * 3) % 1000);
}

#define FAIL(...)                            \
    do {                                     \
        if (failures++ < 20) {               \
            printf("soak: rank %d: ", rank); \
            printf(__VA_ARGS__);             \
            printf("\n");                    \
            fflush(stdout);                  \
        }                                    \
    } while (0)

static long rss_kib(void)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2) {
            res = 0;
        }
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* A pending nonblocking collective and how to check it. */
typedef struct {
    ucoll_req_t *req;
    int kind;
    long op;
    size_t n;
    int root;
    int32_t *sbuf, *rbuf;
} pend_t;

enum {
    K_BCAST,
    K_REDUCE,
    K_ALLREDUCE,
    K_ALLGATHER,
    K_ALLTOALL,
    K_GATHER,
    K_SCATTER,
    K_RSB,
    K_SCAN,
    K_BARRIER,
    K_LAST
};
static const ucoll_coll_t kind_coll[K_LAST] = {
    UCOLL_COLL_BCAST,    UCOLL_COLL_REDUCE, UCOLL_COLL_ALLREDUCE, UCOLL_COLL_ALLGATHER,
    UCOLL_COLL_ALLTOALL, UCOLL_COLL_GATHER, UCOLL_COLL_SCATTER,   UCOLL_COLL_REDUCE_SCATTER_BLOCK,
    UCOLL_COLL_SCAN,     UCOLL_COLL_BARRIER};

/* Inputs of operation op for this rank; n elements per block. */
static void fill(const pend_t *c)
{
    size_t n = c->n, p = (size_t)size;

    switch (c->kind) {
    case K_BCAST:
        for (size_t i = 0; i < n; i++) {
            c->rbuf[i] = rank == c->root ? v(c->op, c->root, i) : -1;
        }
        break;
    case K_ALLTOALL:
    case K_SCATTER:
    case K_RSB:
        for (size_t i = 0; i < n * p; i++) {
            c->sbuf[i] = v(c->op, rank, i);
        }
        break;
    default:
        for (size_t i = 0; i < n; i++) {
            c->sbuf[i] = v(c->op, rank, i);
        }
        break;
    }
}

static int32_t sum_over(long op, int upto, size_t i)
{
    int32_t s = 0;

    for (int r = 0; r < upto; r++) {
        s += v(op, r, i);
    }
    return s;
}

static void check(const pend_t *c)
{
    size_t n = c->n, p = (size_t)size;
    int32_t want;

    switch (c->kind) {
    case K_BCAST:
        for (size_t i = 0; i < n; i++) {
            if (c->rbuf[i] != v(c->op, c->root, i)) {
                FAIL("op %ld bcast n %zu root %d: [%zu] = %d", c->op, n, c->root, i, c->rbuf[i]);
                return;
            }
        }
        break;
    case K_REDUCE:
    case K_ALLREDUCE:
        if (c->kind == K_REDUCE && rank != c->root) {
            return;
        }
        for (size_t i = 0; i < n; i++) {
            if (c->rbuf[i] != (want = sum_over(c->op, size, i))) {
                FAIL("op %ld %s n %zu: [%zu] = %d, not %d", c->op,
                     c->kind == K_REDUCE ? "reduce" : "allreduce", n, i, c->rbuf[i], want);
                return;
            }
        }
        break;
    case K_ALLGATHER:
    case K_GATHER:
        if (c->kind == K_GATHER && rank != c->root) {
            return;
        }
        for (size_t r = 0; r < p; r++) {
            for (size_t i = 0; i < n; i++) {
                if (c->rbuf[r * n + i] != v(c->op, (int)r, i)) {
                    FAIL("op %ld %s n %zu: block %zu [%zu] = %d", c->op,
                         c->kind == K_GATHER ? "gather" : "allgather", n, r, i, c->rbuf[r * n + i]);
                    return;
                }
            }
        }
        break;
    case K_ALLTOALL:
        for (size_t r = 0; r < p; r++) {
            for (size_t i = 0; i < n; i++) {
                if (c->rbuf[r * n + i] != v(c->op, (int)r, (size_t)rank * n + i)) {
                    FAIL("op %ld alltoall n %zu: from %zu [%zu] = %d", c->op, n, r, i,
                         c->rbuf[r * n + i]);
                    return;
                }
            }
        }
        break;
    case K_SCATTER:
        for (size_t i = 0; i < n; i++) {
            if (c->rbuf[i] != v(c->op, c->root, (size_t)rank * n + i)) {
                FAIL("op %ld scatter n %zu: [%zu] = %d", c->op, n, i, c->rbuf[i]);
                return;
            }
        }
        break;
    case K_RSB:
        for (size_t i = 0; i < n; i++) {
            want = 0;
            for (int r = 0; r < size; r++) {
                want += v(c->op, r, (size_t)rank * n + i);
            }
            if (c->rbuf[i] != want) {
                FAIL("op %ld reduce_scatter_block n %zu: [%zu] = %d, not %d", c->op, n, i,
                     c->rbuf[i], want);
                return;
            }
        }
        break;
    case K_SCAN:
        for (size_t i = 0; i < n; i++) {
            if (c->rbuf[i] != (want = sum_over(c->op, rank + 1, i))) {
                FAIL("op %ld scan n %zu: [%zu] = %d, not %d", c->op, n, i, c->rbuf[i], want);
                return;
            }
        }
        break;
    default: break;
    }
}

static int start(pend_t *c, ucoll_comm_t *comm, int blocking)
{
    int32_t *s = c->sbuf, *r = c->rbuf;
    size_t n = c->n;
    ucoll_req_t **q = blocking ? NULL : &c->req;

#define CALL(_blk, _nb) (blocking ? (_blk) : (_nb))
    switch (c->kind) {
    case K_BCAST:
        return CALL(ucoll_bcast(r, n, UCOLL_INT32, c->root, comm),
                    ucoll_ibcast(r, n, UCOLL_INT32, c->root, comm, q));
    case K_REDUCE:
        return CALL(ucoll_reduce(s, r, n, UCOLL_INT32, UCOLL_SUM, c->root, comm),
                    ucoll_ireduce(s, r, n, UCOLL_INT32, UCOLL_SUM, c->root, comm, q));
    case K_ALLREDUCE:
        return CALL(ucoll_allreduce(s, r, n, UCOLL_INT32, UCOLL_SUM, comm),
                    ucoll_iallreduce(s, r, n, UCOLL_INT32, UCOLL_SUM, comm, q));
    case K_ALLGATHER:
        return CALL(ucoll_allgather(s, r, n, UCOLL_INT32, comm),
                    ucoll_iallgather(s, r, n, UCOLL_INT32, comm, q));
    case K_ALLTOALL:
        return CALL(ucoll_alltoall(s, r, n, UCOLL_INT32, comm),
                    ucoll_ialltoall(s, r, n, UCOLL_INT32, comm, q));
    case K_GATHER:
        return CALL(ucoll_gather(s, r, n, UCOLL_INT32, c->root, comm),
                    ucoll_igather(s, r, n, UCOLL_INT32, c->root, comm, q));
    case K_SCATTER:
        return CALL(ucoll_scatter(s, r, n, UCOLL_INT32, c->root, comm),
                    ucoll_iscatter(s, r, n, UCOLL_INT32, c->root, comm, q));
    case K_RSB:
        return CALL(ucoll_reduce_scatter_block(s, r, n, UCOLL_INT32, UCOLL_SUM, comm),
                    ucoll_ireduce_scatter_block(s, r, n, UCOLL_INT32, UCOLL_SUM, comm, q));
    case K_SCAN:
        return CALL(ucoll_scan(s, r, n, UCOLL_INT32, UCOLL_SUM, comm),
                    ucoll_iscan(s, r, n, UCOLL_INT32, UCOLL_SUM, comm, q));
    default: return CALL(ucoll_barrier(comm), ucoll_ibarrier(comm, q));
    }
#undef CALL
}

/* A random pair swaps a message each way; the receiver sometimes takes it
 * with one wildcard: ANY_SOURCE with the operation's own tag (a later
 * operation's sender uses another tag), or ANY_TAG from the peer (whose
 * later messages cannot overtake this one). */
static void p2p_swap(ucoll_comm_t *comm, long op, int32_t *sbuf, int32_t *rbuf)
{
    int a = (int)(rnd() % (uint64_t)size), b = (int)(rnd() % (uint64_t)size);
    size_t n = rnd_count() / 4 + (rnd() % 2);
    int wild = (int)(rnd() % 6), tag = (int)(op % 30000), peer, st;
    ucoll_req_t *rq[2];
    ucoll_status_t status;

    if (a == b || (rank != a && rank != b)) {
        return;
    }
    peer = rank == a ? b : a;
    for (size_t i = 0; i < n; i++) {
        sbuf[i] = v(op, rank, i);
        rbuf[i] = -1;
    }
    st = ucoll_irecv(rbuf, n, UCOLL_INT32, wild == 0 ? UCOLL_ANY_SOURCE : peer,
                     wild == 1 ? UCOLL_ANY_TAG : tag, comm, &rq[0]);
    if (st == UCOLL_OK) {
        st = ucoll_isend(sbuf, n, UCOLL_INT32, peer, tag, comm, &rq[1]);
        if (st == UCOLL_OK) {
            st = ucoll_wait(rq[1], NULL);
        }
        if (st == UCOLL_OK) {
            st = ucoll_wait(rq[0], &status);
        }
    }
    if (st != UCOLL_OK) {
        FAIL("op %ld p2p with %d: %s", op, peer, ucoll_strerror(st));
        return;
    }
    if (status.source != peer || status.tag != tag || status.bytes != n * 4) {
        FAIL("op %ld p2p: status source %d tag %d bytes %zu", op, status.source, status.tag,
             status.bytes);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (rbuf[i] != v(op, peer, i)) {
            FAIL("op %ld p2p from %d n %zu: [%zu] = %d", op, peer, n, i, rbuf[i]);
            return;
        }
    }
}

/* Force a random algorithm of a random collective (or give it back to the
 * model): the same on every rank. */
static void switch_algo(ucoll_ctx_t *ctx)
{
    ucoll_coll_t coll = kind_coll[rnd() % K_LAST];
    const ucoll_algo_t *const *reg = ucoll__algos(coll);
    int n = 0, k;

    while (reg && reg[n]) {
        n++;
    }
    k = (int)(rnd() % (uint64_t)(n + 1)); /* n: the model */
    free(ctx->cfg.algo[coll]);
    ctx->cfg.algo[coll] = k < n ? strdup(reg[k]->id) : NULL;
    ucoll__ctx_config_changed(ctx);
}

int main(int argc, char **argv)
{
    long nops = argc > 1 ? atol(argv[1]) : 1000000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    long rss_first = -1, rss_last = 0, rss_max = 0, mine, agg[2];
    pend_t pend[INFLIGHT];
    int npend = 0, st;
    ucoll_ctx_t *ctx;
    ucoll_comm_t *world;

    if ((st = ucoll_init(&ctx)) != UCOLL_OK) {
        fprintf(stderr, "soak: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    rng_state = seed;
    memset(pend, 0, sizeof(pend));
    for (int i = 0; i < INFLIGHT; i++) {
        pend[i].sbuf = malloc((size_t)MAXN * (size_t)size * sizeof(int32_t));
        pend[i].rbuf = malloc((size_t)MAXN * (size_t)size * sizeof(int32_t));
        if (!pend[i].sbuf || !pend[i].rbuf) {
            fprintf(stderr, "soak: out of memory\n");
            return 2;
        }
    }
    for (long op = 0; op < nops; op++) {
        uint64_t what = rnd() % 100;

        if (op % 1000 == 999) {
            /* no collective may be in flight while the selection changes */
            for (int i = 0; i < npend; i++) {
                if ((st = ucoll_wait(pend[i].req, NULL)) != UCOLL_OK) {
                    FAIL("op %ld wait: %s", pend[i].op, ucoll_strerror(st));
                }
                check(&pend[i]);
            }
            npend = 0;
            switch_algo(ctx);
        }
        if (what < 20) {
            p2p_swap(world, op, pend[INFLIGHT - 1].sbuf, pend[INFLIGHT - 1].rbuf);
        } else {
            int blocking = what < 70 || npend == INFLIGHT - 1;
            pend_t *c = &pend[npend];

            c->kind = (int)(rnd() % K_LAST);
            c->op = op;
            c->n = rnd_count();
            c->root = (int)(rnd() % (uint64_t)size);
            if (c->kind == K_ALLTOALL || c->kind == K_ALLGATHER || c->kind == K_GATHER ||
                c->kind == K_SCATTER || c->kind == K_RSB) {
                c->n = UCOLL_MAX(c->n / (size_t)size, (size_t)1);
            }
            fill(c);
            st = start(c, world, blocking);
            if (st != UCOLL_OK) {
                FAIL("op %ld kind %d n %zu: %s", op, c->kind, c->n, ucoll_strerror(st));
            } else if (blocking) {
                check(c);
            } else {
                npend++;
            }
            if (npend == INFLIGHT - 1 || (npend && rnd() % 3 == 0)) {
                for (int i = 0; i < npend; i++) {
                    if ((st = ucoll_wait(pend[i].req, NULL)) != UCOLL_OK) {
                        FAIL("op %ld wait: %s", pend[i].op, ucoll_strerror(st));
                    }
                    check(&pend[i]);
                }
                npend = 0;
            }
        }
        if ((op + 1) % SAMPLE == 0 || op + 1 == nops) {
            for (int i = 0; i < npend; i++) {
                if ((st = ucoll_wait(pend[i].req, NULL)) != UCOLL_OK) {
                    FAIL("op %ld wait: %s", pend[i].op, ucoll_strerror(st));
                }
                check(&pend[i]);
            }
            npend = 0;
            mine = rss_kib();
            ucoll_allreduce(&mine, &agg[0], 1, UCOLL_INT64, UCOLL_MAX, world);
            ucoll_allreduce(&mine, &agg[1], 1, UCOLL_INT64, UCOLL_SUM, world);
            if (rss_first < 0) {
                rss_first = agg[0];
            }
            rss_last = agg[0];
            rss_max = UCOLL_MAX(rss_max, agg[0]);
            if (rank == 0) {
                printf("soak: %ld operations, RSS largest rank %ld KiB, all ranks %ld KiB\n",
                       op + 1, agg[0], agg[1]);
                fflush(stdout);
            }
        }
    }
    {
        long f = failures, all = 0;
        ucoll_allreduce(&f, &all, 1, UCOLL_INT64, UCOLL_SUM, world);
        if (rank == 0) {
            printf("soak: %ld operations on %d ranks, %ld failed, RSS first %ld / last %ld / max "
                   "%ld KiB (growth %ld KiB, limit %d)\n",
                   nops, size, all, rss_first, rss_last, rss_max, rss_last - rss_first, GROWTH_KIB);
        }
        failures = (int)all;
    }
    for (int i = 0; i < INFLIGHT; i++) {
        free(pend[i].sbuf);
        free(pend[i].rbuf);
    }
    st = ucoll_finalize(ctx);
    return (failures || st != UCOLL_OK || rss_last - rss_first > GROWTH_KIB) ? 1 : 0;
}

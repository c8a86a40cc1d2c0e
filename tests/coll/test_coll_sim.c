/*
 * In-process test of the reducing and synchronising collectives over the
 * simulated network: every operation x every algorithm x p in
 * {1,2,3,4,5,7,8,16,33} x roots x counts {0, 1, 7, 3p+1, large} x in place
 * or not x several datatype/op pairs, compared with a locally computed
 * reference.
 *
 * Checks besides the values: result buffers start poisoned and scratch is
 * poisoned when handed out (a schedule that sends data before receiving it
 * sends poison and gets caught: see the early-send self-test), every
 * request completes OK, no message or receive is left unmatched, no send
 * buffer changes while in flight, nothing is truncated, all ranks' sequence
 * numbers agree, root-only and rank-0-untouched rules hold. Also: argument
 * errors consume no sequence number, selection (forced, fallback, tuning
 * file), many outstanding collectives at once, the simulated clock
 * against the cost formulas, and the rows whose schedules depend on p in a
 * subtle way at every p up to 40.
 */
#include "algos/algos.h"
#include "algos/bcast/bcast.h"
#include "dtype.h"
#include "progress/request.h"
#include "progress/sched.h"
#include "transport/simnet.h"
#include "coll_ref.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define POISON 0xa5

static int failures, cases;
static int sim_rndv; /* worlds get rendezvous semantics (sends complete when matched) */

#define CHECK(_cond, ...)                                   \
    do {                                                    \
        if (!(_cond)) {                                     \
            if (failures++ < 30) {                          \
                printf("FAIL %s:%d: ", __FILE__, __LINE__); \
                printf(__VA_ARGS__);                        \
                printf("\n");                               \
            }                                               \
        }                                                   \
    } while (0)

/* ---- a world of p simulated ranks -------------------------------------- */

typedef struct {
    int p;
    ucoll_simnet_t *net;
    ucoll_ctx_t **ctx;
} world_t;

static world_t *world_create(int p, int dry)
{
    ucoll_simnet_params_t prm = {1e-6, 1e-9, 2e-10, 1e-10, dry, sim_rndv};
    world_t *w = calloc(1, sizeof(*w));

    w->p = p;
    w->ctx = calloc((size_t)p, sizeof(*w->ctx));
    if (ucoll__simnet_create(p, &prm, &w->net) != UCOLL_OK) {
        abort();
    }
    for (int r = 0; r < p; r++) {
        if (ucoll__ctx_create_sim(r, p, &ucoll__net_sim, w->net, &w->ctx[r]) != UCOLL_OK) {
            abort();
        }
        ucoll__exec_set_poison(w->ctx[r], 1);
        w->ctx[r]->cfg.seg_size = 256;
        ucoll__ctx_config_changed(w->ctx[r]);
    }
    return w;
}

static void world_destroy(world_t *w)
{
    for (int r = 0; r < w->p; r++) {
        ucoll__ctx_destroy_sim(w->ctx[r]);
    }
    ucoll__simnet_destroy(w->net);
    free(w->ctx);
    free(w);
}

static void world_force(world_t *w, ucoll_coll_t coll, const char *id)
{
    for (int r = 0; r < w->p; r++) {
        free(w->ctx[r]->cfg.algo[coll]);
        w->ctx[r]->cfg.algo[coll] = id ? strdup(id) : NULL;
        ucoll__ctx_config_changed(w->ctx[r]);
    }
}

/* Deliver every event; then check and free the requests. */
static double world_run(world_t *w, ucoll_req_t **reqs, int nreq, const char *what)
{
    ucoll_simnet_stats_t st;
    ucoll_ctx_t *ctx;
    double t;

    while ((ctx = ucoll__simnet_advance(w->net)) != NULL) {
        ucoll__exec_progress(ctx);
    }
    t = ucoll__simnet_max_clock(w->net);
    for (int i = 0; i < nreq; i++) {
        if (reqs[i] == NULL) {
            continue;
        }
        CHECK(reqs[i]->complete, "%s: request %d never completed (hang)", what, i);
        if (reqs[i]->complete) {
            CHECK(reqs[i]->status.error == UCOLL_OK, "%s: request %d failed: %s", what, i,
                  ucoll_strerror(reqs[i]->status.error));
            ucoll__req_release(reqs[i]);
        }
        reqs[i] = NULL;
    }
    ucoll__simnet_stats(w->net, &st);
    CHECK(ucoll__simnet_unmatched(w->net) == 0, "%s: %zu unmatched messages/receives", what,
          ucoll__simnet_unmatched(w->net));
    CHECK(st.violations == 0, "%s: %zu send buffers modified in flight", what, st.violations);
    CHECK(st.truncated == 0, "%s: %zu truncated receives", what, st.truncated);
    for (int r = 1; r < w->p; r++) {
        CHECK(w->ctx[r]->world->coll_seq == w->ctx[0]->world->coll_seq,
              "%s: sequence numbers differ (rank %d)", what, r);
    }
    ucoll__simnet_reset(w->net);
    return t;
}

/* ---- values and the reference ------------------------------------------ */

typedef struct {
    ucoll_dtype_t dt;
    ucoll_op_t op;
} pair_t;

static const pair_t pairs[] = {
    {UCOLL_INT32, UCOLL_SUM},    {UCOLL_FLOAT32, UCOLL_SUM}, {UCOLL_FLOAT16, UCOLL_SUM},
    {UCOLL_BFLOAT16, UCOLL_MAX}, {UCOLL_UINT8, UCOLL_BXOR},  {UCOLL_INT64, UCOLL_MIN},
    {UCOLL_FLOAT64, UCOLL_PROD}, {UCOLL_INT16, UCOLL_LAND},  {UCOLL_UINT32, UCOLL_BOR},
    {UCOLL_INT8, UCOLL_PROD},    {UCOLL_UINT64, UCOLL_LXOR}, {UCOLL_BFLOAT16, UCOLL_SUM},
};
#define NPAIRS ((int)(sizeof(pairs) / sizeof(pairs[0])))

#define is_float ref_is_float
#define fill     ref_fill
#define same     ref_same

/* ---- one case ----------------------------------------------------------- */

typedef struct {
    ucoll_coll_t coll;
    const char *algo;
    int root, in_place;
    size_t count;
    pair_t pr;
} case_t;

static void rs_counts(int p, size_t base, size_t *rc)
{
    for (int i = 0; i < p; i++) {
        rc[i] = base == 0 ? 0 : (base + (size_t)(i % 3) >= 1 ? base + (size_t)(i % 3) - 1 : 0);
    }
}

static void run_case(world_t *w, const case_t *c)
{
    int p = w->p;
    size_t es = ucoll_dtype_size(c->pr.dt), n = c->count, total = n;
    ucoll_req_t **reqs = calloc((size_t)p, sizeof(*reqs));
    char **sb = calloc((size_t)p, sizeof(char *)), **rb = calloc((size_t)p, sizeof(char *));
    size_t *rc = calloc((size_t)p, sizeof(size_t)), *off = calloc((size_t)p + 1, sizeof(size_t));
    char what[160];
    char *expect;

    snprintf(what, sizeof(what), "%s/%s p=%d root=%d count=%zu %s %s/%s", ucoll__coll_name(c->coll),
             c->algo, p, c->root, n, c->in_place ? "in-place" : "", ucoll__dtype_name(c->pr.dt),
             ucoll__op_name(c->pr.op));
    cases++;
    if (c->coll == UCOLL_COLL_REDUCE_SCATTER) {
        rs_counts(p, n, rc);
    } else {
        for (int i = 0; i < p; i++) {
            rc[i] = n;
        }
    }
    for (int i = 0; i < p; i++) {
        off[i + 1] = off[i] + rc[i];
    }
    if (c->coll == UCOLL_COLL_REDUCE_SCATTER || c->coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK) {
        total = off[p];
    }
    world_force(w, c->coll, c->algo);
    expect = malloc(total * es + 8);
    for (int r = 0; r < p; r++) {
        int st = UCOLL_OK;
        ucoll_comm_t *comm = w->ctx[r]->world;
        sb[r] = malloc(total * es + 8);
        rb[r] = malloc(total * es + 8);
        fill(sb[r], total, c->pr.dt, c->pr.op, r, 0);
        memset(rb[r], POISON, total * es + 8);
        switch (c->coll) {
        case UCOLL_COLL_BARRIER: st = ucoll_ibarrier(comm, &reqs[r]); break;
        case UCOLL_COLL_BCAST:
            if (r == c->root) {
                memcpy(rb[r], sb[r], n * es);
            }
            st = ucoll_ibcast(rb[r], n, c->pr.dt, c->root, comm, &reqs[r]);
            break;
        case UCOLL_COLL_REDUCE:
            if (c->in_place && r == c->root) {
                memcpy(rb[r], sb[r], n * es);
                st = ucoll_ireduce(UCOLL_IN_PLACE, rb[r], n, c->pr.dt, c->pr.op, c->root, comm,
                                   &reqs[r]);
            } else {
                st = ucoll_ireduce(sb[r], r == c->root ? rb[r] : NULL, n, c->pr.dt, c->pr.op,
                                   c->root, comm, &reqs[r]);
            }
            break;
        case UCOLL_COLL_ALLREDUCE:
        case UCOLL_COLL_SCAN:
        case UCOLL_COLL_EXSCAN: {
            const void *s = sb[r];
            if (c->in_place) {
                memcpy(rb[r], sb[r], n * es);
                s = UCOLL_IN_PLACE;
            }
            if (c->coll == UCOLL_COLL_ALLREDUCE) {
                st = ucoll_iallreduce(s, rb[r], n, c->pr.dt, c->pr.op, comm, &reqs[r]);
            } else if (c->coll == UCOLL_COLL_SCAN) {
                st = ucoll_iscan(s, rb[r], n, c->pr.dt, c->pr.op, comm, &reqs[r]);
            } else {
                st = ucoll_iexscan(s, rb[r], n, c->pr.dt, c->pr.op, comm, &reqs[r]);
            }
            break;
        }
        case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        case UCOLL_COLL_REDUCE_SCATTER: {
            const void *s = sb[r];
            if (c->in_place) {
                memcpy(rb[r], sb[r], total * es);
                s = UCOLL_IN_PLACE;
            }
            st = (c->coll == UCOLL_COLL_REDUCE_SCATTER)
                     ? ucoll_ireduce_scatter(s, rb[r], rc, c->pr.dt, c->pr.op, comm, &reqs[r])
                     : ucoll_ireduce_scatter_block(s, rb[r], n, c->pr.dt, c->pr.op, comm, &reqs[r]);
            break;
        }
        default: abort();
        }
        CHECK(st == UCOLL_OK, "%s: rank %d start failed: %s", what, r, ucoll_strerror(st));
    }
    world_run(w, reqs, p, what);

    for (int r = 0; r < p; r++) {
        size_t bad = 0, len = n;
        const char *got = rb[r];
        int check = 1;
        switch (c->coll) {
        case UCOLL_COLL_BARRIER: check = 0; break;
        case UCOLL_COLL_BCAST: fill(expect, n, c->pr.dt, c->pr.op, c->root, 0); break;
        case UCOLL_COLL_REDUCE:
            check = (r == c->root);
            for (size_t i = 0; check && i < n; i++) {
                ref_elem(expect, i, c->pr.dt, c->pr.op, 0, p, i);
            }
            break;
        case UCOLL_COLL_ALLREDUCE:
            for (size_t i = 0; i < n; i++) {
                ref_elem(expect, i, c->pr.dt, c->pr.op, 0, p, i);
            }
            break;
        case UCOLL_COLL_SCAN:
            for (size_t i = 0; i < n; i++) {
                ref_elem(expect, i, c->pr.dt, c->pr.op, 0, r + 1, i);
            }
            break;
        case UCOLL_COLL_EXSCAN:
            if (r == 0) {
                /* untouched: poison, or the input when in place */
                if (c->in_place) {
                    memcpy(expect, sb[0], n * es);
                } else {
                    memset(expect, POISON, n * es);
                }
                check = 2;
            } else {
                for (size_t i = 0; i < n; i++) {
                    ref_elem(expect, i, c->pr.dt, c->pr.op, 0, r, i);
                }
            }
            break;
        default: /* reduce_scatter(_block) */
            len = rc[r];
            for (size_t i = 0; i < len; i++) {
                ref_elem(expect, i, c->pr.dt, c->pr.op, 0, p, off[r] + i);
            }
            break;
        }
        if (check == 2) {
            CHECK(memcmp(got, expect, n * es) == 0, "%s: rank 0's exscan buffer was written", what);
        } else if (check) {
            CHECK(same(got, expect, len, c->pr.dt, &bad), "%s: rank %d element %zu wrong", what, r,
                  bad);
        }
        if (!c->in_place && c->coll != UCOLL_COLL_BARRIER) {
            unsigned char *tail = (unsigned char *)rb[r] + len * es;
            CHECK(tail[0] == POISON && tail[7] == POISON, "%s: rank %d wrote past its result", what,
                  r);
        }
        free(sb[r]);
        free(rb[r]);
    }
    free(expect);
    free(sb);
    free(rb);
    free(rc);
    free(off);
    free(reqs);
}

/* ---- the sweeps --------------------------------------------------------- */

static const ucoll_coll_t colls[] = {
    UCOLL_COLL_BARRIER,
    UCOLL_COLL_BCAST,
    UCOLL_COLL_REDUCE,
    UCOLL_COLL_ALLREDUCE,
    UCOLL_COLL_REDUCE_SCATTER_BLOCK,
    UCOLL_COLL_REDUCE_SCATTER,
    UCOLL_COLL_SCAN,
    UCOLL_COLL_EXSCAN,
};

static int rooted(ucoll_coll_t c)
{
    return c == UCOLL_COLL_BCAST || c == UCOLL_COLL_REDUCE;
}

static int has_in_place(ucoll_coll_t c)
{
    return c != UCOLL_COLL_BARRIER && c != UCOLL_COLL_BCAST;
}

static void sweep(int p)
{
    world_t *w = world_create(p, 0);
    size_t large = (p <= 8) ? 3001 : 601;
    size_t counts[5] = {0, 1, 7, (size_t)(3 * p + 1), large};
    unsigned rot = 0;

    for (size_t ci = 0; ci < sizeof(colls) / sizeof(colls[0]); ci++) {
        ucoll_coll_t coll = colls[ci];
        const ucoll_algo_t *const *reg = ucoll__algos(coll);
        for (; *reg; reg++) {
            int nroots = rooted(coll) ? p : 1;
            if ((*reg)->build == NULL) {
                continue; /* shared memory, no schedule: tests/coll runs it */
            }
            for (int root = 0; root < nroots; root++) {
                if (p > 8 && root != 0 && root != 1 && root != p / 2 && root != p - 1) {
                    continue;
                }
                for (int k = 0; k < 5; k++) {
                    if (coll == UCOLL_COLL_BARRIER && k > 0) {
                        break;
                    }
                    for (int ip = 0; ip <= has_in_place(coll); ip++) {
                        case_t c = {coll, (*reg)->id, root, ip, counts[k], pairs[0]};
                        if (coll == UCOLL_COLL_BCAST) {
                            c.pr.dt = (k == 4) ? UCOLL_BYTE : pairs[rot % NPAIRS].dt;
                        } else if (k != 4 || (rot & 1)) {
                            c.pr = pairs[rot % NPAIRS];
                        }
                        rot++;
                        run_case(w, &c);
                        /* every pair at count 7 */
                        if (k == 2 && root == 0 && ip == 0 && coll != UCOLL_COLL_BARRIER) {
                            for (int q = 1; q < NPAIRS; q++) {
                                c.pr = pairs[q];
                                run_case(w, &c);
                            }
                        }
                    }
                }
            }
        }
    }
    world_destroy(w);
}

/* ---- the checker catches a schedule that sends too early --------------- */

/* A broken broadcast: every non-root forwards to its binomial children in
 * the same round as it receives from its parent. */
static int bad_bcast_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                           const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, sr = ucoll__srank(comm->rank, a->root, p);
    int span = ucoll__binomial_span(sr, p);
    size_t bytes = a->count * a->esize;

    if (sr != 0) {
        ucoll__sched_recv(s, a->rbuf, bytes,
                          ucoll__rank_of(ucoll__binomial_parent(sr), a->root, p));
    }
    for (int d = span / 2; d >= 1; d /= 2) {
        if (sr + d < p) {
            ucoll__sched_send(s, a->rbuf, bytes, ucoll__rank_of(sr + d, a->root, p));
        }
    }
    return UCOLL_OK;
}

static void test_early_send_caught(void)
{
    world_t *w = world_create(8, 0);
    ucoll_algo_t bad = {.id = "bad", .build = bad_bcast_build};
    ucoll_coll_args_t a = {0};
    size_t n = 64;
    char *buf[8];
    ucoll_req_t *reqs[8];
    int wrong = 0;
    ucoll_ctx_t *ctx;

    for (int r = 0; r < 8; r++) {
        ucoll_sched_t *s;
        ucoll_req_t *req = ucoll__req_alloc(w->ctx[r], UCOLL_REQ_COLL);
        buf[r] = malloc(n);
        memset(buf[r], r == 0 ? 7 : POISON, n);
        a.coll = UCOLL_COLL_BCAST;
        a.rbuf = buf[r];
        a.sbuf = buf[r];
        a.count = n;
        a.esize = 1;
        a.dt = UCOLL_BYTE;
        ucoll__sched_create(w->ctx[r]->world, 0, &s);
        bad.build(s, &a, NULL);
        req->user = 1;
        ucoll__sched_start(s, req);
        reqs[r] = req;
    }
    while ((ctx = ucoll__simnet_advance(w->net)) != NULL) {
        ucoll__exec_progress(ctx);
    }
    for (int r = 0; r < 8; r++) {
        for (size_t i = 0; i < n; i++) {
            wrong += (buf[r][i] != 7);
        }
        free(buf[r]);
        ucoll__req_release(reqs[r]);
    }
    CHECK(wrong > 0, "the checker did not catch a broadcast that sends before it receives");
    world_destroy(w);
}

/* ---- a failing operation fails the collective, after draining ---------- */

/* Rank 1 truncates rank 0's message in round 0 while a long message from
 * rank 2 is still on its way in the same round: the request must fail with
 * UCOLL_ERR_TRUNCATE only after that message has landed, and round 1 must
 * never be posted. */
static void test_error_drain(void)
{
    world_t *w = world_create(3, 0);
    static char big[1 << 20], got[1 << 20];
    char small[8] = "abcdefg", tiny[4];
    ucoll_sched_t *s[3];
    ucoll_req_t *req[3];
    ucoll_ctx_t *ctx;
    int landed_before = -1;

    memset(big, 'z', sizeof(big));
    memset(got, 0, sizeof(got));
    for (int r = 0; r < 3; r++) {
        ucoll__sched_create(w->ctx[r]->world, 77, &s[r]);
        req[r] = ucoll__req_alloc(w->ctx[r], UCOLL_REQ_COLL);
        req[r]->user = 1;
    }
    ucoll__sched_send(s[0], small, sizeof(small), 1);
    ucoll__sched_round(s[0]);
    ucoll__sched_send(s[0], small, sizeof(small), 1);
    ucoll__sched_recv(s[1], tiny, sizeof(tiny), 0);
    ucoll__sched_recv(s[1], got, sizeof(got), 2);
    ucoll__sched_round(s[1]);
    ucoll__sched_recv(s[1], tiny, sizeof(tiny), 0);
    ucoll__sched_send(s[2], big, sizeof(big), 1);
    for (int r = 0; r < 3; r++) {
        ucoll__sched_start(s[r], req[r]);
    }
    while ((ctx = ucoll__simnet_advance(w->net)) != NULL) {
        ucoll__exec_progress(ctx);
        if (landed_before < 0 && req[1]->complete) {
            landed_before = (got[0] == 'z' && got[sizeof(got) - 1] == 'z');
        }
    }
    CHECK(req[1]->complete && req[1]->status.error == UCOLL_ERR_TRUNCATE,
          "truncation did not fail the collective (%d)", req[1]->status.error);
    CHECK(landed_before == 1, "the failed collective completed before its other receive landed");
    CHECK(req[0]->complete && req[2]->complete, "the peers did not complete");
    CHECK(ucoll__simnet_unmatched(w->net) == 1, "round 1 was posted after the error");
    for (int r = 0; r < 3; r++) {
        ucoll__req_release(req[r]);
    }
    world_destroy(w);
}

/* ---- argument errors, selection, many outstanding, the clock ---------- */

static void test_errors(void)
{
    world_t *w = world_create(3, 0);
    ucoll_comm_t *comm = w->ctx[0]->world;
    ucoll_req_t *req = NULL;
    uint32_t seq = comm->coll_seq;
    int x[4] = {0}, y[4];
    size_t rc[3] = {1, 1, 1};

    CHECK(ucoll_ibcast(x, 4, UCOLL_INT32, 3, comm, &req) == UCOLL_ERR_ARG, "bad root");
    CHECK(ucoll_ibcast(x, 4, UCOLL_INT32, -1, comm, &req) == UCOLL_ERR_ARG, "negative root");
    CHECK(ucoll_ibcast(NULL, 4, UCOLL_INT32, 0, comm, &req) == UCOLL_ERR_ARG, "NULL buffer");
    CHECK(ucoll_ibcast(x, 4, UCOLL_DTYPE_LAST, 0, comm, &req) == UCOLL_ERR_ARG, "bad dtype");
    CHECK(ucoll_iallreduce(x, y, 4, UCOLL_FLOAT32, UCOLL_BXOR, comm, &req) == UCOLL_ERR_ARG,
          "bxor on float");
    CHECK(ucoll_iallreduce(x, y, 4, UCOLL_FLOAT16, UCOLL_LAND, comm, &req) == UCOLL_ERR_ARG,
          "land on float16");
    CHECK(ucoll_iallreduce(x, y, 4, UCOLL_INT32, UCOLL_OP_LAST, comm, &req) == UCOLL_ERR_ARG,
          "bad op");
    CHECK(ucoll_ireduce(x, NULL, 4, UCOLL_INT32, UCOLL_SUM, 0, comm, &req) == UCOLL_ERR_ARG,
          "NULL rbuf at root");
    CHECK(ucoll_ireduce(UCOLL_IN_PLACE, y, 4, UCOLL_INT32, UCOLL_SUM, 1, comm, &req) ==
              UCOLL_ERR_ARG,
          "in place at a non-root");
    CHECK(ucoll_ireduce_scatter(x, y, NULL, UCOLL_INT32, UCOLL_SUM, comm, &req) == UCOLL_ERR_ARG,
          "NULL rcounts");
    CHECK(ucoll_ireduce_scatter(NULL, y, rc, UCOLL_INT32, UCOLL_SUM, comm, &req) == UCOLL_ERR_ARG,
          "NULL sbuf");
    CHECK(ucoll_iscan(x, NULL, 4, UCOLL_INT32, UCOLL_SUM, comm, &req) == UCOLL_ERR_ARG,
          "NULL scan rbuf");
    CHECK(ucoll_ibarrier(NULL, &req) == UCOLL_ERR_ARG, "NULL comm");
    CHECK(ucoll_ibarrier(comm, NULL) == UCOLL_ERR_ARG, "NULL request pointer");
    CHECK(comm->coll_seq == seq, "an argument error consumed a sequence number");
    CHECK(ucoll_dtype_size(UCOLL_BFLOAT16) == 2 && ucoll_dtype_size(UCOLL_DTYPE_LAST) == 0,
          "dtype sizes");
    world_destroy(w);
}

static void test_selection(void)
{
    world_t *w = world_create(4, 0);
    ucoll_ctx_t *ctx = w->ctx[0];
    ucoll_coll_args_t a = {.coll = UCOLL_COLL_BCAST, .count = 100, .esize = 4, .dt = UCOLL_INT32};
    ucoll_algo_params_t prm;
    const ucoll_algo_t *al;
    char path[] = "/tmp/ucoll_tune_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");

    world_force(w, UCOLL_COLL_BCAST, "kchain");
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "kchain") == 0, "forced algorithm not used");
    world_force(w, UCOLL_COLL_BCAST, "no_such_algo");
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al != NULL, "no fallback for an unknown forced algorithm");
    world_force(w, UCOLL_COLL_BCAST, NULL);

    fprintf(f, "# rules\nbcast:0-1k:@linear bcast:1k-inf:np=1-4:@chain:seg=4k\n"
               "allreduce:0-:@ring:radix=3 garbage\n"
               "reduce:0-:@binomial:way=root allgather:0-:@gather_bcast:way=bogus\n"
               "alltoall:0-1k:@pairwise:stream=0 alltoall:1k-2k:@bruck:stream=4k\n"
               "alltoall:2k-:@bruck:stream=63 alltoall:2k-:@pairwise\n");
    fclose(f);
    ctx->cfg.tune_file = strdup(path);
    ucoll__ctx_config_changed(ctx);
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "linear") == 0, "tuning rule 1 not applied (%s)",
          al ? al->id : "none");
    a.count = 1000;
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "chain") == 0 && prm.seg_size == 4096,
          "tuning rule 2 not applied (%s)", al ? al->id : "none");
    a.coll = UCOLL_COLL_ALLREDUCE;
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "ring") == 0 && prm.radix == 3, "tuning rule 3 not applied");
    CHECK(prm.shm_way == UCOLL_SHM_WAY_AUTO, "a rule without way= set one");
    a.coll = UCOLL_COLL_REDUCE;
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "binomial") == 0 && prm.shm_way == UCOLL_SHM_WAY_ROOT,
          "tuning rule with way=root not applied");
    a.coll = UCOLL_COLL_ALLGATHER;
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "gather_bcast") != 0, "a rule naming an unknown way applied");
    CHECK(prm.shm_stream == ctx->cfg.shm_stream_min &&
              prm.shm_stream_adapt == ctx->cfg.shm_stream_adapt,
          "a rule without stream= set it");
    a.coll = UCOLL_COLL_ALLTOALL;
    a.count = 16; /* 64 B a block */
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "pairwise") == 0 && prm.shm_stream == 0,
          "tuning rule with stream=0 not applied");
    a.count = 300;
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "bruck") == 0 && prm.shm_stream == 4096 &&
              ctx->cfg.shm_stream_adapt && !prm.shm_stream_adapt,
          "tuning rule with stream=4k not applied, or not fixed");
    a.count = 1000; /* stream=63 is below 64: that rule is refused, the next applies */
    al = ucoll__algo_select(ctx->world, &a, &prm);
    CHECK(al && strcmp(al->id, "pairwise") == 0 && prm.shm_stream == ctx->cfg.shm_stream_min,
          "a rule with stream=63 applied");
    unlink(path);
    world_destroy(w);
}

/* Many outstanding collectives of different kinds at once. */
static void test_outstanding(void)
{
    enum { P = 5, N = 24, C = 37 };
    world_t *w = world_create(P, 0);
    static int32_t in[P][N][C], out[P][N][C];
    ucoll_req_t *reqs[P * N];

    for (int r = 0; r < P; r++) {
        for (int k = 0; k < N; k++) {
            ucoll_comm_t *comm = w->ctx[r]->world;
            for (int i = 0; i < C; i++) {
                in[r][k][i] = r * 1000 + k * 10 + i;
                out[r][k][i] = -1;
            }
            switch (k % 4) {
            case 0:
                ucoll_iallreduce(in[r][k], out[r][k], C, UCOLL_INT32, UCOLL_SUM, comm,
                                 &reqs[r * N + k]);
                break;
            case 1:
                memcpy(out[r][k], in[r][k], sizeof(out[r][k]));
                ucoll_ibcast(out[r][k], C, UCOLL_INT32, k % P, comm, &reqs[r * N + k]);
                break;
            case 2:
                ucoll_iscan(in[r][k], out[r][k], C, UCOLL_INT32, UCOLL_MAX, comm, &reqs[r * N + k]);
                break;
            default: ucoll_ibarrier(comm, &reqs[r * N + k]); break;
            }
        }
    }
    world_run(w, reqs, P * N, "outstanding");
    for (int r = 0; r < P; r++) {
        for (int k = 0; k < N; k++) {
            for (int i = 0; i < C; i++) {
                int32_t e;
                switch (k % 4) {
                case 0: e = 1000 * (P * (P - 1) / 2) + P * (k * 10 + i); break;
                case 1: e = (k % P) * 1000 + k * 10 + i; break;
                case 2: e = r * 1000 + k * 10 + i; break;
                default: e = -1; break;
                }
                CHECK(out[r][k][i] == e, "outstanding: rank %d op %d element %d: %d != %d", r, k, i,
                      out[r][k][i], e);
            }
        }
    }
    world_destroy(w);
}

/* The simulated clock agrees with the cost formulas where the model is
 * exact: binomial bcast and recursive-doubling allreduce on a power of two. */
static void test_clock(void)
{
    world_t *w = world_create(8, 1);
    ucoll_req_t *reqs[8];
    ucoll_model_t m = {1e-6, 1e-9, 2e-10, 1e-10, 0};
    ucoll_coll_args_t a = {.coll = UCOLL_COLL_BCAST, .count = 1000, .esize = 4, .dt = UCOLL_INT32};
    ucoll_algo_params_t prm = {0};
    void *fake = (void *)(uintptr_t)4096;
    double t;

    world_force(w, UCOLL_COLL_BCAST, "binomial");
    for (int r = 0; r < 8; r++) {
        ucoll__exec_set_dry(w->ctx[r], 1);
        ucoll_ibcast(fake, 1000, UCOLL_INT32, 0, w->ctx[r]->world, &reqs[r]);
    }
    t = world_run(w, reqs, 0, "clock");
    for (int r = 0; r < 8; r++) {
        ucoll__req_release(reqs[r]);
    }
    CHECK(fabs(t - ucoll__algo_find(UCOLL_COLL_BCAST, "binomial")->cost(&a, 8, &prm, &m)) < 1e-9,
          "simulated binomial bcast %g s differs from the formula", t);
    world_destroy(w);

    w = world_create(8, 1);
    world_force(w, UCOLL_COLL_ALLREDUCE, "rdbl");
    for (int r = 0; r < 8; r++) {
        ucoll__exec_set_dry(w->ctx[r], 1);
        ucoll_iallreduce(fake, fake, 1000, UCOLL_INT32, UCOLL_SUM, w->ctx[r]->world, &reqs[r]);
    }
    t = world_run(w, reqs, 0, "clock");
    for (int r = 0; r < 8; r++) {
        ucoll__req_release(reqs[r]);
    }
    a.coll = UCOLL_COLL_ALLREDUCE;
    CHECK(fabs(t - ucoll__algo_find(UCOLL_COLL_ALLREDUCE, "rdbl")->cost(&a, 8, &prm, &m)) < 1e-9,
          "simulated rdbl allreduce %g s differs from the formula", t);
    world_destroy(w);
}

/* The rows whose schedules hang on p in a subtle way (the circulant
 * graph's skips, the two trees' labels), at every p up to 40 and a few
 * beyond, with 1 to about 3⌈log2 p⌉ + 1 segments (the sweep's segments are
 * 256 bytes) and a short last one. */
static void test_more_p(void)
{
    static const int extra[] = {63, 64, 65, 100, 129};
    static const struct {
        ucoll_coll_t coll;
        const char *algo;
    } rows[] = {
        {UCOLL_COLL_BCAST, "circulant"},
        {UCOLL_COLL_BCAST, "twotree"},
        {UCOLL_COLL_REDUCE, "twotree"},
        {UCOLL_COLL_ALLREDUCE, "twotree"},
    };

    for (int i = 0; i < 39 + (int)(sizeof(extra) / sizeof(extra[0])); i++) {
        int p = i < 39 ? i + 2 : extra[i - 39], q = ucoll__ceil_log2(p), before = failures;
        size_t nseg[] = {1, (size_t)q, (size_t)q + 1, 2 * (size_t)q + 3, 3 * (size_t)q + 1};
        world_t *w = world_create(p, 0);

        for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
            for (size_t k = 0; k < sizeof(nseg) / sizeof(nseg[0]); k++) {
                case_t c = {.coll = rows[r].coll, .algo = rows[r].algo};

                c.root = k % 2 ? p - 1 : 0;
                c.count = (nseg[k] - 1) * 64 + 37;
                c.pr.dt = UCOLL_INT32;
                c.pr.op = UCOLL_SUM;
                run_case(w, &c);
            }
        }
        world_destroy(w);
        if (failures != before) {
            printf("p=%-3d circulant/twotree FAILED\n", p);
        }
    }
}

/* One two-tree broadcast from root in nseg segments of 64 bytes (the last
 * one short), its schedules built for every rank and inspected: see
 * test_twotree_rounds. */
static void twotree_rounds_case(world_t *w, int root, size_t nseg)
{
    const ucoll_algo_t *al = ucoll__algo_find(UCOLL_COLL_BCAST, "twotree");
    int p = w->p, q = ucoll__ceil_log2(p), limit = 2 * q + (int)nseg - 1, changed, over = 0;
    ucoll_algo_params_t prm = {.seg_size = 64};
    ucoll_coll_args_t a = {0};
    ucoll_sched_t **s = calloc((size_t)p, sizeof(*s));
    int **g = calloc((size_t)p, sizeof(*g)); /* the global round of each round of a rank */
    /* per (sender, receiver), its messages in order: the sender's round and
     * the receiver's, and how many */
    size_t npair = (size_t)p * p;
    int *send = malloc(npair * nseg * sizeof(int)), *recv = malloc(npair * nseg * sizeof(int));
    size_t *nsend = calloc(npair, sizeof(size_t)), *nrecv = calloc(npair, sizeof(size_t));
    char what[80];

    snprintf(what, sizeof(what), "bcast/twotree rounds p=%d root=%d segments=%zu", p, root, nseg);
    cases++;
    a.coll = UCOLL_COLL_BCAST;
    a.count = (nseg - 1) * 64 + 37;
    a.esize = 1;
    a.dt = UCOLL_BYTE;
    a.root = root;
    a.sbuf = a.rbuf = (void *)(uintptr_t)4096; /* never touched */
    for (int r = 0; r < p; r++) {
        size_t nr;
        CHECK(ucoll__sched_create(w->ctx[r]->world, 0, &s[r]) == UCOLL_OK &&
                  al->build(s[r], &a, &prm) == UCOLL_OK,
              "%s: building rank %d failed", what, r);
        nr = ucoll__sched_nrounds(s[r]);
        g[r] = malloc((nr + 1) * sizeof(int));
        for (size_t j = 0; j < nr; j++) {
            const ucoll_step_t *st = ucoll__sched_round_steps(s[r], j);
            int ns = 0, nv = 0;
            g[r][j] = (int)j;
            for (size_t i = 0; i < ucoll__sched_round_nsteps(s[r], j); i++) {
                int tx = st[i].kind == UCOLL_STEP_SEND;
                size_t pair = tx ? (size_t)r * p + st[i].peer : (size_t)st[i].peer * p + r;
                if (!tx && st[i].kind != UCOLL_STEP_RECV) {
                    CHECK(0, "%s: rank %d round %zu: a step that is neither send nor receive", what,
                          r, j);
                    continue;
                }
                ns += tx;
                nv += !tx;
                if ((tx ? nsend : nrecv)[pair] < nseg) {
                    (tx ? send : recv)[pair * nseg + (tx ? nsend : nrecv)[pair]] = (int)j;
                }
                (tx ? nsend : nrecv)[pair]++;
            }
            CHECK(ns <= 1 && nv <= 1, "%s: rank %d round %zu sends %d and receives %d", what, r, j,
                  ns, nv);
        }
    }
    for (size_t pair = 0; pair < npair; pair++) {
        CHECK(nsend[pair] == nrecv[pair] && nsend[pair] <= nseg,
              "%s: %zu sends from %zu to %zu, %zu receives", what, nsend[pair], pair / p, pair % p,
              nrecv[pair]);
    }
    /* the least numbering in which a rank's rounds follow each other and a
     * message's two rounds are one: raise until nothing changes, or until
     * past the formula's rounds (no such numbering, or too late) */
    do {
        changed = 0;
        for (int r = 0; r < p; r++) {
            for (size_t j = 1; j < ucoll__sched_nrounds(s[r]); j++) {
                if (g[r][j] <= g[r][j - 1]) {
                    g[r][j] = g[r][j - 1] + 1;
                    changed = 1;
                }
            }
        }
        for (size_t pair = 0; pair < npair; pair++) {
            int from = (int)(pair / p), to = (int)(pair % p);
            for (size_t k = 0; k < nsend[pair] && k < nrecv[pair] && k < nseg; k++) {
                int *x = &g[from][send[pair * nseg + k]], *y = &g[to][recv[pair * nseg + k]];
                if (*x != *y) {
                    *x = *y = UCOLL_MAX(*x, *y);
                    changed = 1;
                }
            }
        }
        for (int r = 0; r < p; r++) {
            size_t nr = ucoll__sched_nrounds(s[r]);
            over |= nr > 0 && g[r][nr - 1] >= limit;
        }
    } while (changed && !over);
    CHECK(!over, "%s: no numbering of its rounds matches every message within %d rounds", what,
          limit);
    for (int r = 0; r < p; r++) {
        ucoll__sched_destroy(s[r]);
        free(g[r]);
    }
    free(s);
    free(g);
    free(recv);
    free(send);
    free(nrecv);
    free(nsend);
}

/* The two-tree broadcast's edge colouring at every p up to 40 and a few
 * beyond: every round of every rank's schedule sends at most one segment
 * and receives at most one, and its rounds are global steps: they can be
 * numbered (a rank's empty rounds are dropped from its schedule, so the
 * test finds the numbering) such that every message is received in the
 * round it is sent, all within the cost formula's 2⌈log2 p⌉ + n - 1
 * rounds. Also that no rank is deeper in a tree than
 * ucoll__twotree_height, which reduce twotree's timetable needs. */
static void test_twotree_rounds(void)
{
    static const int extra[] = {63, 64, 65, 100, 129};

    for (int i = 0; i < 39 + (int)(sizeof(extra) / sizeof(extra[0])); i++) {
        int p = i < 39 ? i + 2 : extra[i - 39], q = ucoll__ceil_log2(p), before = failures;
        size_t nseg[] = {1, 2, (size_t)q, (size_t)q + 1, 2 * (size_t)q + 3, 3 * (size_t)q + 1};
        world_t *w = world_create(p, 1);

        for (size_t k = 0; k < sizeof(nseg) / sizeof(nseg[0]); k++) {
            twotree_rounds_case(w, 0, nseg[k]);
            twotree_rounds_case(w, p - 1, nseg[k]);
            twotree_rounds_case(w, p / 2, nseg[k]);
        }
        for (int r = 0; r < p; r++) {
            for (int b = 0; b < 2; b++) {
                ucoll_twotree_t t;
                ucoll__twotree_node(ucoll__srank(r, 1, p), p, 1, b, &t);
                CHECK(t.depth <= ucoll__twotree_height(p), "p=%d: rank %d at depth %d of tree %d",
                      p, r, t.depth, b);
            }
        }
        world_destroy(w);
        if (failures != before) {
            printf("p=%-3d twotree rounds FAILED\n", p);
        }
    }
}

/* Half-precision conversions: round to nearest even, specials. */
static void test_half(void)
{
    CHECK(ucoll__float_to_f16(1.0f) == 0x3c00, "f16(1)");
    CHECK(ucoll__float_to_f16(65504.0f) == 0x7bff, "f16 max");
    CHECK(ucoll__float_to_f16(65520.0f) == 0x7c00, "f16 overflow rounds to inf");
    CHECK(ucoll__float_to_f16(1.0f + 1.0f / 2048) == 0x3c00, "f16 tie to even (down)");
    CHECK(ucoll__float_to_f16(1.0f + 3.0f / 2048) == 0x3c02, "f16 tie to even (up)");
    CHECK(ucoll__float_to_f16(5.9604645e-8f) == 0x0001, "f16 smallest subnormal");
    CHECK(ucoll__f16_to_float(0x0001) == 5.9604645e-8f, "f16 subnormal back");
    CHECK(ucoll__f16_to_float(0xfc00) == -INFINITY, "f16 -inf");
    CHECK(isnan(ucoll__f16_to_float(ucoll__float_to_f16(NAN))), "f16 NaN");
    CHECK(ucoll__float_to_bf16(1.0f + 1.0f / 256) == 0x3f80, "bf16 tie to even (down)");
    CHECK(ucoll__float_to_bf16(1.0f + 3.0f / 256) == 0x3f82, "bf16 tie to even (up)");
    CHECK(isnan(ucoll__bf16_to_float(ucoll__float_to_bf16(NAN))), "bf16 NaN");
    for (uint32_t h = 0; h < 0x7c00; h++) {
        if (ucoll__float_to_f16(ucoll__f16_to_float((uint16_t)h)) != h) {
            CHECK(0, "f16 round trip of 0x%x", h);
            break;
        }
    }
}

/* Every kernel, with dst distinct, dst == a and dst == b, against the
 * reference (ranks 0 and 1 of the generator). */
static void test_kernels(void)
{
    enum { N = 37 };
    char a[N * 8], b[N * 8], d[N * 8], e[N * 8];

    for (int dt = 0; dt < UCOLL_DTYPE_LAST; dt++) {
        for (int op = 0; op < UCOLL_OP_LAST; op++) {
            size_t bad = 0;
            if (ucoll__check_op((ucoll_op_t)op, (ucoll_dtype_t)dt) != UCOLL_OK) {
                CHECK(dt >= UCOLL_FLOAT16 && op >= UCOLL_LAND, "op %d rejected on dtype %d", op,
                      dt);
                continue;
            }
            for (size_t i = 0; i < N; i++) {
                ref_elem(e, i, (ucoll_dtype_t)dt, (ucoll_op_t)op, 0, 2, i);
            }
            for (int mode = 0; mode < 3; mode++) {
                fill(a, N, (ucoll_dtype_t)dt, (ucoll_op_t)op, 0, 0);
                fill(b, N, (ucoll_dtype_t)dt, (ucoll_op_t)op, 1, 0);
                char *dst = mode == 0 ? d : mode == 1 ? a : b;
                ucoll__reduce(dst, a, b, N, (ucoll_dtype_t)dt, (ucoll_op_t)op);
                CHECK(same(dst, e, N, (ucoll_dtype_t)dt, &bad), "kernel %s %s mode %d element %zu",
                      ucoll__op_name((ucoll_op_t)op), ucoll__dtype_name((ucoll_dtype_t)dt), mode,
                      bad);
            }
        }
    }
}

/* A schedule that needs eager buffering: both ranks send first, then
 * receive into the buffer they sent from. It completes on an eager network
 * and must hang (visibly) under rendezvous semantics. */
static void test_rndv_catches_eager_reliance(void)
{
    for (int rndv = 0; rndv <= 1; rndv++) {
        world_t *w;
        ucoll_sched_t *s[2];
        ucoll_req_t *req[2];
        ucoll_ctx_t *ctx;
        static char buf[2][64];

        sim_rndv = rndv;
        w = world_create(2, 0);
        for (int r = 0; r < 2; r++) {
            ucoll__sched_create(w->ctx[r]->world, 5, &s[r]);
            ucoll__sched_send(s[r], buf[r], sizeof(buf[r]), 1 - r);
            ucoll__sched_round(s[r]);
            ucoll__sched_recv(s[r], buf[r], sizeof(buf[r]), 1 - r);
            req[r] = ucoll__req_alloc(w->ctx[r], UCOLL_REQ_COLL);
            req[r]->user = 1;
            ucoll__sched_start(s[r], req[r]);
        }
        while ((ctx = ucoll__simnet_advance(w->net)) != NULL) {
            ucoll__exec_progress(ctx);
        }
        if (rndv) {
            CHECK(!req[0]->complete && !req[1]->complete &&
                      ucoll__simnet_unmatched(w->net) == 2,
                  "rendezvous: a send-send exchange completed (%d %d, %zu unmatched)",
                  req[0]->complete, req[1]->complete, ucoll__simnet_unmatched(w->net));
        } else {
            CHECK(req[0]->complete && req[1]->complete && ucoll__simnet_unmatched(w->net) == 0,
                  "eager: the send-send exchange did not complete");
        }
        cases++;
        ucoll__req_release(req[0]);
        ucoll__req_release(req[1]);
        world_destroy(w); /* frees the stuck runs too */
    }
    sim_rndv = 0;
}

int main(int argc, char **argv)
{
    static const int ps[] = {1, 2, 3, 4, 5, 7, 8, 16, 33};

    test_half();
    test_kernels();
    test_errors();
    test_selection();
    test_early_send_caught();
    test_error_drain();
    test_rndv_catches_eager_reliance();
    test_outstanding();
    test_clock();
    test_more_p();
    test_twotree_rounds();
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        int before = failures;
        sweep(ps[i]);
        printf("p=%-3d %s (%d cases so far)\n", ps[i], failures == before ? "ok" : "FAILED", cases);
        fflush(stdout);
    }
    /* the whole catalog again where a send completes only when matched: a
     * schedule that relies on eager buffering hangs, and world_run says so */
    sim_rndv = 1;
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        int before = failures;
        sweep(ps[i]);
        printf("p=%-3d rendezvous %s (%d cases so far)\n", ps[i],
               failures == before ? "ok" : "FAILED", cases);
        fflush(stdout);
    }
    printf("%d cases, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}

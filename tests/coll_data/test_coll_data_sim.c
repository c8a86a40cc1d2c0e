/*
 * The data-movement collectives on the simulated network: every op × every
 * algorithm of its registry × p in {1,2,3,4,5,7,8,16,33} × every root ×
 * counts {0, 1, 7, 3p+1, large} × in place or not × two datatypes, each
 * compared byte for byte with a locally computed reference (dm_case.c).
 * Scratch is poisoned, so a schedule that forwards data it has not received
 * yet delivers garbage; the simnet also reports send buffers modified in
 * flight, truncations and unmatched messages.
 *
 * Also: argument checks (UCOLL_ERR_ARG without consuming a sequence
 * number), several collectives in flight at once, and 64 MiB blocks.
 *
 *   test_coll_data_sim [-q] [-v] [op ...]
 */
#include "algos/algos.h"
#include "core.h"
#include "dm_case.h"
#include "progress/sched.h"
#include "transport/simnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ucoll_coll_t op_coll[DM_NOPS] = {
    UCOLL_COLL_GATHER,    UCOLL_COLL_GATHERV,    UCOLL_COLL_SCATTER,  UCOLL_COLL_SCATTERV,
    UCOLL_COLL_ALLGATHER, UCOLL_COLL_ALLGATHERV, UCOLL_COLL_ALLTOALL, UCOLL_COLL_ALLTOALLV};

static const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 16, 33};

typedef struct sim {
    int p;
    ucoll_simnet_t *net;
    ucoll_ctx_t **ctx;
} sim_t;

static int verbose;
static long ncases, nfail, nskipped;

static int sim_create(int p, sim_t *s)
{
    ucoll_simnet_params_t prm = {.alpha = 1e-6, .beta = 1e-9, .gamma = 1e-9, .lambda = 1e-10};

    s->p = p;
    s->ctx = calloc((size_t)p, sizeof(*s->ctx));
    if (s->ctx == NULL || ucoll__simnet_create(p, &prm, &s->net) != UCOLL_OK) {
        return -1;
    }
    for (int r = 0; r < p; r++) {
        if (ucoll__ctx_create_sim(r, p, &ucoll__net_sim, s->net, &s->ctx[r]) != UCOLL_OK) {
            return -1;
        }
        ucoll__exec_set_poison(s->ctx[r], 1);
    }
    return 0;
}

static void sim_destroy(sim_t *s)
{
    for (int r = 0; r < s->p; r++) {
        if (s->ctx[r]) {
            ucoll__ctx_destroy_sim(s->ctx[r]);
        }
    }
    ucoll__simnet_destroy(s->net);
    free(s->ctx);
}

static void sim_force(sim_t *s, ucoll_coll_t coll, const char *id)
{
    for (int r = 0; r < s->p; r++) {
        free(s->ctx[r]->cfg.algo[coll]);
        s->ctx[r]->cfg.algo[coll] = id ? strdup(id) : NULL;
        ucoll__ctx_config_changed(s->ctx[r]);
    }
}

/* Fire every pending completion; then every request must be complete.
 * msgs >= 0: the number of messages the schedules must have sent. */
static int sim_drain(sim_t *s, long msgs, char *msg, size_t len)
{
    ucoll_simnet_stats_t st;
    ucoll_ctx_t *ctx;

    while ((ctx = ucoll__simnet_advance(s->net)) != NULL) {
        ucoll__exec_progress(ctx);
    }
    ucoll__simnet_stats(s->net, &st);
    if (ucoll__simnet_unmatched(s->net) != 0) {
        snprintf(msg, len, "%zu unmatched messages or receives", ucoll__simnet_unmatched(s->net));
        return -1;
    }
    if (msgs >= 0 && st.messages != (size_t)msgs) {
        snprintf(msg, len, "%zu messages sent, the algorithm sends %ld", st.messages, msgs);
        return -1;
    }
    if (st.violations || st.truncated) {
        snprintf(msg, len, "%zu send buffers modified in flight, %zu truncations", st.violations,
                 st.truncated);
        return -1;
    }
    return 0;
}

/* Run n cases at once (all started before any completes), check all;
 * msgs as for sim_drain. */
static int run_cases(sim_t *s, const dm_case_t *cs, int n, const char *algo, long msgs)
{
    int p = s->p, bad = 0;
    dm_bufs_t *b = calloc((size_t)(p * n), sizeof(*b));
    ucoll_req_t **rq = calloc((size_t)(p * n), sizeof(*rq));
    char msg[256] = "", desc[160];
    int st, done;

    if (b == NULL || rq == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (int i = 0; i < n; i++) {
        for (int r = 0; r < p; r++) {
            if (dm_setup(&cs[i], r, &b[i * p + r]) != 0) {
                fprintf(stderr, "out of memory for a case\n");
                exit(2);
            }
        }
    }
    for (int i = 0; i < n && !bad; i++) {
        for (int r = 0; r < p; r++) {
            st = dm_start(&cs[i], r, s->ctx[r]->world, &b[i * p + r], &rq[i * p + r]);
            if (st != UCOLL_OK) {
                snprintf(msg, sizeof(msg), "rank %d: start: %s", r, ucoll_strerror(st));
                bad = 1;
                break;
            }
        }
    }
    if (!bad && sim_drain(s, msgs, msg, sizeof(msg)) != 0) {
        bad = 1;
    }
    for (int i = 0; i < n; i++) {
        for (int r = 0; r < p; r++) {
            if (rq[i * p + r] == NULL) {
                continue;
            }
            st = ucoll_test(rq[i * p + r], &done, NULL);
            if (!bad && (!done || st != UCOLL_OK)) {
                snprintf(msg, sizeof(msg), "rank %d: %s", r,
                         done ? ucoll_strerror(st) : "request never completed");
                bad = 1;
            }
            if (!bad) {
                char why[200];
                if (dm_check(&cs[i], r, &b[i * p + r], why, sizeof(why)) != 0) {
                    snprintf(msg, sizeof(msg), "rank %d: %s", r, why);
                    bad = 1;
                }
            }
            dm_free(&b[i * p + r]);
        }
    }
    ncases += n;
    if (bad) {
        nfail++;
        dm_describe(&cs[0], desc, sizeof(desc));
        fprintf(stderr, "FAIL %s algo=%s%s: %s\n", desc, algo, n > 1 ? " (with others)" : "", msg);
        /* a failed case may leave the net dirty: start the next on a fresh one */
        sim_destroy(s);
        if (sim_create(p, s) != 0) {
            exit(2);
        }
    } else {
        ucoll__simnet_reset(s->net);
        if (verbose) {
            dm_describe(&cs[0], desc, sizeof(desc));
            printf("ok %s algo=%s\n", desc, algo);
        }
    }
    free(b);
    free(rq);
    return bad ? -1 : 0;
}

/* Messages all p ranks send together in one call of op with algorithm id
 * and a non-zero count, as the algorithm's structure says; -1 where it
 * depends on the counts (v-variants other than the linear ones). */
static long expected_msgs(dm_op_t op, const char *id, int p)
{
    long lg = 0, pp = p;

    while ((1L << lg) < pp) {
        lg++;
    }
    switch (op) {
    case DM_GATHER:
    case DM_SCATTER: return pp - 1; /* linear and binomial alike */
    case DM_ALLGATHER:
        if (strcmp(id, "ring") == 0) {
            return pp * (pp - 1);
        }
        if (strcmp(id, "rdbl") == 0 || strcmp(id, "bruck") == 0) {
            return pp * lg;
        }
        if (strcmp(id, "neighbor") == 0) {
            return pp * (pp / 2);
        }
        if (strcmp(id, "gather_bcast") == 0) {
            return 2 * (pp - 1);
        }
        return -1;
    case DM_ALLTOALL: return strcmp(id, "bruck") == 0 ? pp * lg : pp * (pp - 1);
    default: return -1;
    }
}

/* Every algorithm of op on p ranks, every root, count, in place, dtype. */
static void sweep(sim_t *s, dm_op_t op, unsigned *seed)
{
    const ucoll_algo_t *const *reg = ucoll__algos(op_coll[op]);
    int p = s->p;
    size_t counts[] = {0, 1, 7, (size_t)(3 * p + 1), 2053};
    const ucoll_dtype_t dts[] = {UCOLL_UINT8, UCOLL_FLOAT64};
    int nroots = dm_rooted(op) ? p : 1;

    for (; reg && *reg; reg++) {
        const ucoll_algo_t *al = *reg;
        ucoll_coll_args_t probe = {.coll = op_coll[op], .count = 1, .esize = 1};

        if ((al->flags & (UCOLL_ALGO_SHM | UCOLL_ALGO_HIER)) ||
            (al->can_serve && !al->can_serve(&probe, p))) {
            /* shared memory or two levels (tests/coll_data and tests/coll
             * run them), or cannot serve; rows that start schedules of
             * their own (the binomial v-variants) run here */
            nskipped++;
            continue;
        }
        sim_force(s, op_coll[op], al->id);
        for (int root = 0; root < nroots; root++) {
            for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
                for (int ip = 0; ip < 2; ip++) {
                    for (int di = 0; di < 2; di++) {
                        dm_case_t c = {.op = op,
                                       .p = p,
                                       .root = root,
                                       .count = counts[ci],
                                       .dt = dts[di],
                                       .in_place = ip,
                                       .seed = (*seed)++};
                        /* the large count once per root, in one dtype */
                        if (ci == 4 && di == 1) {
                            continue;
                        }
                        run_cases(s, &c, 1, al->id, ci == 2 ? expected_msgs(op, al->id, p) : -1);
                    }
                }
            }
        }
    }
    sim_force(s, op_coll[op], NULL);
}

/* ---- argument checks ----------------------------------------------------- */

#define EXPECT(_call, _want)                                                                    \
    do {                                                                                        \
        int _st = (_call);                                                                      \
        ncases++;                                                                               \
        if (_st != (_want) || comm->coll_seq != seq) {                                          \
            nfail++;                                                                            \
            fprintf(stderr, "FAIL line %d: %s returned %d (want %d), seq %u -> %u\n", __LINE__, \
                    #_call, _st, _want, seq, comm->coll_seq);                                   \
        }                                                                                       \
    } while (0)

#define CHECK_ST(_got, _want, _what)                                                       \
    do {                                                                                   \
        long _g = (long)(_got), _w = (long)(_want);                                        \
        ncases++;                                                                          \
        if (_g != _w) {                                                                    \
            nfail++;                                                                       \
            fprintf(stderr, "FAIL line %d: %s: %ld, want %ld\n", __LINE__, _what, _g, _w); \
        }                                                                                  \
    } while (0)

static void check_args(void)
{
    sim_t s;
    ucoll_comm_t *comm;
    ucoll_req_t *req = NULL;
    char buf[64] = {0};
    size_t cnt[2] = {1, 1}, dsp[2] = {0, 1}, one[2] = {1, 1};
    uint32_t seq;
    const int E = UCOLL_ERR_ARG;

    if (sim_create(2, &s) != 0) {
        exit(2);
    }
    comm = s.ctx[0]->world;
    seq = comm->coll_seq;
    /* invalid root */
    EXPECT(ucoll_igather(buf, buf, 1, UCOLL_BYTE, 2, comm, &req), E);
    EXPECT(ucoll_igather(buf, buf, 1, UCOLL_BYTE, -1, comm, &req), E);
    EXPECT(ucoll_igatherv(buf, 1, buf, cnt, dsp, UCOLL_BYTE, 5, comm, &req), E);
    EXPECT(ucoll_iscatter(buf, buf, 1, UCOLL_BYTE, 2, comm, &req), E);
    EXPECT(ucoll_iscatterv(buf, cnt, dsp, buf, 1, UCOLL_BYTE, -3, comm, &req), E);
    /* bad datatype */
    EXPECT(ucoll_igather(buf, buf, 1, UCOLL_DTYPE_LAST, 0, comm, &req), E);
    EXPECT(ucoll_iallgather(buf, buf, 1, (ucoll_dtype_t)99, comm, &req), E);
    EXPECT(ucoll_ialltoall(buf, buf, 1, UCOLL_DTYPE_LAST, comm, &req), E);
    EXPECT(ucoll_ialltoallv(buf, cnt, dsp, buf, cnt, dsp, UCOLL_DTYPE_LAST, comm, &req), E);
    /* null buffers with non-zero counts */
    EXPECT(ucoll_igather(NULL, buf, 1, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_igather(buf, NULL, 1, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_iscatter(NULL, buf, 1, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_iscatter(buf, NULL, 1, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_iallgather(buf, NULL, 1, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_iallgather(NULL, buf, 1, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_ialltoall(NULL, buf, 1, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_ialltoall(buf, NULL, 1, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_igatherv(buf, 1, NULL, cnt, dsp, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_iscatterv(NULL, cnt, dsp, buf, 1, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_iallgatherv(buf, 1, NULL, cnt, dsp, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_ialltoallv(buf, cnt, dsp, NULL, cnt, dsp, UCOLL_BYTE, comm, &req), E);
    /* missing counts or displacements */
    EXPECT(ucoll_igatherv(buf, 1, buf, NULL, dsp, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_igatherv(buf, 1, buf, cnt, NULL, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_iscatterv(buf, NULL, dsp, buf, 1, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_iallgatherv(buf, 1, buf, NULL, dsp, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_iallgatherv(buf, 1, buf, cnt, NULL, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_ialltoallv(buf, NULL, dsp, buf, cnt, dsp, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_ialltoallv(buf, cnt, dsp, buf, cnt, NULL, UCOLL_BYTE, comm, &req), E);
    /* in place where MPI does not allow it */
    EXPECT(ucoll_igather(buf, UCOLL_IN_PLACE, 1, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_igather(UCOLL_IN_PLACE, buf, 1, UCOLL_BYTE, 1, comm, &req), E);
    EXPECT(ucoll_iscatter(buf, UCOLL_IN_PLACE, 1, UCOLL_BYTE, 1, comm, &req), E);
    EXPECT(ucoll_iscatter(UCOLL_IN_PLACE, buf, 1, UCOLL_BYTE, 0, comm, &req), E);
    EXPECT(ucoll_iallgather(buf, UCOLL_IN_PLACE, 1, UCOLL_BYTE, comm, &req), E);
    EXPECT(ucoll_ialltoall(buf, UCOLL_IN_PLACE, 1, UCOLL_BYTE, comm, &req), E);
    /* a count whose total overflows */
    EXPECT(ucoll_iallgather(buf, buf, SIZE_MAX / 2, UCOLL_INT32, comm, &req), E);
    /* the root's own block longer than its room */
    cnt[0] = 2;
    EXPECT(ucoll_igatherv(buf, 3, buf, cnt, dsp, UCOLL_BYTE, 0, comm, &req), UCOLL_ERR_TRUNCATE);
    EXPECT(ucoll_iscatterv(buf, cnt, dsp, buf, 1, UCOLL_BYTE, 0, comm, &req), UCOLL_ERR_TRUNCATE);
    EXPECT(ucoll_ialltoallv(buf, cnt, dsp, buf, one, dsp, UCOLL_BYTE, comm, &req),
           UCOLL_ERR_TRUNCATE);
    /* NULL request */
    EXPECT(ucoll_iallgather(buf, buf, 1, UCOLL_BYTE, comm, NULL), E);
    sim_destroy(&s);
}

/* Counts that disagree between the root and a rank (erroneous in MPI's
 * terms) under the binomial v-variants: the call ends in
 * UCOLL_ERR_TRUNCATE where the disagreement is seen (gatherv: the root;
 * scatterv: the rank whose block is too long), the others complete with
 * their data, no message is left unmatched, and the next call works. */
static void mismatch(void)
{
    enum { P = 5 };
    size_t cnt[P] = {1, 1, 1, 1, 1}, scnt[P] = {1, 1, 2, 1, 1}, dsp[P] = {0, 1, 2, 3, 4};
    size_t sdsp[P] = {0, 1, 2, 4, 5};
    int32_t in[P][2], out[P][8], want[P];
    ucoll_req_t *rq[P];
    char msg[256] = "";
    sim_t s;

    if (sim_create(P, &s) != 0) {
        exit(2);
    }
    sim_force(&s, UCOLL_COLL_GATHERV, "binomial");
    sim_force(&s, UCOLL_COLL_SCATTERV, "binomial");
    /* gatherv: rank 3 sends 2 elements where the root expects 1 */
    for (int r = 0; r < P; r++) {
        in[r][0] = in[r][1] = 100 + r;
        memset(out[r], 0xa5, sizeof(out[r]));
        CHECK_ST(ucoll_igatherv(in[r], r == 3 ? 2 : 1, out[r], cnt, dsp, UCOLL_INT32, 0,
                                s.ctx[r]->world, &rq[r]),
                 UCOLL_OK, "gatherv mismatch: start");
    }
    CHECK_ST(sim_drain(&s, -1, msg, sizeof(msg)), 0, msg);
    for (int r = 0; r < P; r++) {
        int done = 0, st = ucoll_test(rq[r], &done, NULL);
        CHECK_ST(done ? st : -1000, r == 0 ? UCOLL_ERR_TRUNCATE : UCOLL_OK,
                 "gatherv mismatch: a rank's result");
    }
    /* scatterv: the root sends rank 2 (which has a child, rank 3) 2
     * elements where it receives 1; rank 3 still gets its block */
    int32_t sb[8] = {10, 11, 12, 13, 14, 15, 16, 17};
    for (int r = 0; r < P; r++) {
        memset(out[r], 0xa5, sizeof(out[r]));
        CHECK_ST(
            ucoll_iscatterv(sb, scnt, sdsp, out[r], 1, UCOLL_INT32, 0, s.ctx[r]->world, &rq[r]),
            UCOLL_OK, "scatterv mismatch: start");
    }
    CHECK_ST(sim_drain(&s, -1, msg, sizeof(msg)), 0, msg);
    want[0] = 10, want[1] = 11, want[2] = 12, want[3] = 14, want[4] = 15;
    for (int r = 0; r < P; r++) {
        int done = 0, st = ucoll_test(rq[r], &done, NULL);
        CHECK_ST(done ? st : -1000, r == 2 ? UCOLL_ERR_TRUNCATE : UCOLL_OK,
                 "scatterv mismatch: a rank's result");
        CHECK_ST(out[r][0], want[r], "scatterv mismatch: a rank's block");
    }
    /* and the communicator goes on: a gatherv with agreeing counts */
    for (int r = 0; r < P; r++) {
        memset(out[r], 0xa5, sizeof(out[r]));
        CHECK_ST(
            ucoll_igatherv(in[r], 1, out[r], cnt, dsp, UCOLL_INT32, 0, s.ctx[r]->world, &rq[r]),
            UCOLL_OK, "gatherv after a mismatch: start");
    }
    CHECK_ST(sim_drain(&s, -1, msg, sizeof(msg)), 0, msg);
    for (int r = 0; r < P; r++) {
        int done = 0, st = ucoll_test(rq[r], &done, NULL);
        CHECK_ST(done ? st : -1000, UCOLL_OK, "gatherv after a mismatch");
        CHECK_ST(r == 0 ? out[0][r] : 100 + r, 100 + r, "gatherv after a mismatch: a block");
    }
    for (int r = 1; r < P; r++) {
        CHECK_ST(out[0][r], 100 + r, "gatherv after a mismatch: a block");
    }
    sim_destroy(&s);
}

/* Every op at once on every rank, default algorithms. */
static void overlap(int p, unsigned *seed)
{
    sim_t s;
    dm_case_t cs[DM_NOPS];

    if (sim_create(p, &s) != 0) {
        exit(2);
    }
    for (int i = 0; i < DM_NOPS; i++) {
        cs[i] = (dm_case_t){.op = (dm_op_t)i,
                            .p = p,
                            .root = (i * 5) % p,
                            .count = 5 + i,
                            .dt = UCOLL_INT16,
                            .in_place = i % 2,
                            .seed = (*seed)++};
    }
    run_cases(&s, cs, DM_NOPS, "default", -1);
    sim_destroy(&s);
}

/* 64 MiB per rank's receive buffer, each op once with its default algorithm
 * and once with every other algorithm, on 3 ranks. */
static void large(unsigned *seed)
{
    const int p = 3;
    sim_t s;

    if (sim_create(p, &s) != 0) {
        exit(2);
    }
    for (int op = 0; op < DM_NOPS; op++) {
        const ucoll_algo_t *const *reg = ucoll__algos(op_coll[op]);
        for (; reg && *reg; reg++) {
            ucoll_coll_args_t probe = {.coll = op_coll[op], .count = 1, .esize = 1};
            dm_case_t c = {.op = (dm_op_t)op,
                           .p = p,
                           .root = 1,
                           .count = ((size_t)64 << 20) / p / 4,
                           .dt = UCOLL_INT32,
                           .in_place = (int)(*seed % 2),
                           .seed = (*seed)++};
            if (((*reg)->flags & (UCOLL_ALGO_SHM | UCOLL_ALGO_HIER)) ||
                ((*reg)->can_serve && !(*reg)->can_serve(&probe, p))) {
                continue;
            }
            sim_force(&s, op_coll[op], (*reg)->id);
            run_cases(&s, &c, 1, (*reg)->id, -1);
        }
        sim_force(&s, op_coll[op], NULL);
    }
    sim_destroy(&s);
}

int main(int argc, char **argv)
{
    unsigned seed = 1;
    int only[DM_NOPS] = {0}, any = 0, quick = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) {
            verbose = 1;
            continue;
        }
        if (strcmp(argv[i], "-q") == 0) {
            quick = 1;
            continue;
        }
        for (int op = 0; op < DM_NOPS; op++) {
            if (strcmp(argv[i], dm_op_names[op]) == 0) {
                only[op] = any = 1;
            }
        }
    }
    check_args();
    mismatch();
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        sim_t s;

        if (quick && sizes[i] > 8) {
            continue;
        }
        if (sim_create(sizes[i], &s) != 0) {
            fprintf(stderr, "cannot create a simulated net of %d ranks\n", sizes[i]);
            return 2;
        }
        for (int op = 0; op < DM_NOPS; op++) {
            if (!any || only[op]) {
                sweep(&s, (dm_op_t)op, &seed);
            }
        }
        sim_destroy(&s);
        overlap(sizes[i], &seed);
        printf("p=%d done: %ld cases so far, %ld failed\n", sizes[i], ncases, nfail);
        fflush(stdout);
    }
    if (!quick) {
        large(&seed);
    }
    printf("%ld cases, %ld failed, %ld algorithm/size pairs skipped (cannot serve)\n", ncases,
           nfail, nskipped);
    return nfail ? 1 : 0;
}

/*
 * ucoll_sim: collective algorithms at scale, on the SIMULATED network.
 *
 * Runs the real schedules of an algorithm for p virtual ranks (up to
 * 10^4-10^5) in one process over simnet in dry mode (no bytes move, buffers
 * are never touched) and prints, per (collective, algorithm, p, m): rounds
 * (the critical path in messages: the completion time when a message costs
 * 1 and nothing else costs anything, a second simulation), messages, the
 * most sends of one rank, the simulated time under the Hockney model, and
 * the cost formula of ALGORITHMS.md (the algorithm's cost()) for the same
 * α, β, γ, λ. Where they differ the formula idealises something (port
 * contention, the fold of non-powers of two, segment start-up). Segment
 * size and radix come from the simulated model, as the runtime's come from
 * its own, unless UCOLL_SEGMENT_SIZE / UCOLL_RADIX or -S / -R set them.
 *
 *   ucoll_sim [-c coll] [-a algo] [-m bytes] [-p p1,p2,...]
 *             [-A alpha] [-B beta] [-G gamma] [-L lambda] [-S seg] [-R radix]
 *             [-P L,o,g,G] [-k]
 *
 * -P simulates a LogGP network instead of Hockney's (the formulas then use
 * alpha = L + 2o, beta = G: what a sender that waits for nothing sees).
 * -n skips the second simulation that gives rounds (printed as -1): half
 * the time at 10^5 ranks.
 *
 * -c: barrier, bcast, reduce, allreduce, reduce_scatter_block,
 *     reduce_scatter, scan, exscan, or any registered collective
 *     (default: allreduce); -a: one algorithm id (default: all);
 * -m: bytes of the vector (default 1m); -p: sizes (default
 *     8,64,1024,10000); -k: time the local kernels instead (γ, λ) and exit.
 * Algorithms needing more than 3·10^7 messages at a size are skipped.
 */
#include "algos/algos.h"
#include "dtype.h"
#include "progress/request.h"
#include "progress/sched.h"
#include "transport/simnet.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_MESSAGES 30000000.0

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- kernels: γ for float32 sum, λ for memcpy ----------------------------- */

static double time_kernel(size_t bytes, int reduce)
{
    size_t n = bytes / 4;
    float *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes);
    double best = 1e30;
    int reps = (int)UCOLL_MAX((size_t)3, ((size_t)1 << 30) / bytes);

    for (size_t i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 1.0f;
    }
    for (int t = 0; t < 5; t++) {
        double t0 = now();
        for (int r = 0; r < reps; r++) {
            if (reduce) {
                ucoll__reduce(a, a, b, n, UCOLL_FLOAT32, UCOLL_SUM);
            } else {
                memcpy(a, b, bytes);
            }
        }
        best = UCOLL_MIN(best, (now() - t0) / reps);
    }
    free(a);
    free(b);
    return best / (double)bytes;
}

static void kernels(void)
{
    size_t sizes[] = {16 << 10, 256 << 10, 64 << 20};

    printf("# local kernels, seconds per byte of the vector (best of 5)\n");
    printf("%-12s %14s %14s %14s %14s\n", "bytes", "gamma_f32sum", "GB/s", "lambda_memcpy", "GB/s");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        double g = time_kernel(sizes[i], 1), l = time_kernel(sizes[i], 0);
        printf("%-12zu %14.3e %14.2f %14.3e %14.2f\n", sizes[i], g, 1e-9 / g, l, 1e-9 / l);
    }
    for (int dt = 0; dt < UCOLL_DTYPE_LAST; dt++) {
        size_t bytes = 16 << 10, n = bytes / ucoll_dtype_size((ucoll_dtype_t)dt);
        char *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes);
        int reps = 20000;
        double t0;
        memset(a, 0, bytes);
        memset(b, 0, bytes);
        t0 = now();
        for (int r = 0; r < reps; r++) {
            ucoll__reduce(a, a, b, n, (ucoll_dtype_t)dt, UCOLL_SUM);
        }
        printf("sum %-9s in cache: %.3e s/byte\n", ucoll__dtype_name((ucoll_dtype_t)dt),
               (now() - t0) / reps / (double)bytes);
        free(a);
        free(b);
    }
}

/* ---- the scale study -------------------------------------------------- */

typedef struct {
    ucoll_coll_t coll;
    size_t bytes;
    ucoll_model_t m;
    ucoll_algo_params_t prm; /* segment size and radix (0: from the model m) */
    int loggp;
    double L, o, g, G; /* LogGP, when loggp */
    int no_rounds;     /* -n: skip the second simulation (rounds) */
} study_t;

/* Call arguments for a count-based run with fake buffers (never touched). */
static void make_args(const study_t *st, int p, size_t *rcounts, ucoll_coll_args_t *a)
{
    void *fake = (void *)(uintptr_t)4096;

    memset(a, 0, sizeof(*a));
    a->coll = st->coll;
    a->dt = UCOLL_FLOAT32;
    a->op = UCOLL_SUM;
    a->esize = 4;
    a->sbuf = fake;
    a->rbuf = fake;
    a->count = st->bytes / 4;
    if (st->coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK || st->coll == UCOLL_COLL_REDUCE_SCATTER) {
        a->count = UCOLL_MAX((size_t)1, st->bytes / 4 / (size_t)p);
        for (int i = 0; i < p; i++) {
            rcounts[i] = a->count;
        }
        if (st->coll == UCOLL_COLL_REDUCE_SCATTER) {
            a->rcounts = rcounts;
        }
    }
    if (st->coll == UCOLL_COLL_GATHER || st->coll == UCOLL_COLL_SCATTER ||
        st->coll == UCOLL_COLL_ALLGATHER || st->coll == UCOLL_COLL_ALLTOALL) {
        a->count = UCOLL_MAX((size_t)1, st->bytes / 4);
    }
}

static size_t sched_messages(ucoll_sched_t *s, size_t *rounds)
{
    size_t n = 0, nr = ucoll__sched_nrounds(s);

    for (size_t i = 0; i < nr; i++) {
        const ucoll_step_t *stp = ucoll__sched_round_steps(s, i);
        for (size_t j = 0; j < ucoll__sched_round_nsteps(s, i); j++) {
            n += (stp[j].kind == UCOLL_STEP_SEND);
        }
    }
    *rounds = nr;
    return n;
}

typedef struct {
    double time;       /* the largest clock */
    size_t messages;   /* sends posted in all */
    size_t max_sends;  /* the most sends of one rank */
    int incomplete;    /* ranks not done, or messages unmatched */
} pass_t;

/* One simulation of the algorithm's real schedules on p ranks under sp,
 * built with prm. */
static void sim_pass(const study_t *st, const ucoll_algo_t *al, int p,
                     const ucoll_algo_params_t *prm, const ucoll_simnet_params_t *sp,
                     const ucoll_coll_args_t *a, pass_t *out)
{
    ucoll_simnet_t *net;
    ucoll_ctx_t **ctx = calloc((size_t)p, sizeof(*ctx)), *c;
    ucoll_req_t *req = calloc((size_t)p, sizeof(*req)); /* ours: 10^5 pools are large */
    ucoll_simnet_stats_t stats;

    memset(out, 0, sizeof(*out));
    if (ctx == NULL || req == NULL || ucoll__simnet_create(p, sp, &net) != UCOLL_OK) {
        fprintf(stderr, "out of memory for %d ranks\n", p);
        exit(1);
    }
    for (int r = 0; r < p; r++) {
        ucoll_sched_t *s;
        size_t nr, sends;

        if (ucoll__ctx_create_sim(r, p, &ucoll__net_sim, net, &ctx[r]) != UCOLL_OK) {
            fprintf(stderr, "cannot create simulated rank %d\n", r);
            exit(1);
        }
        ucoll__exec_set_dry(ctx[r], 1);
        req[r].ctx = ctx[r];
        req[r].kind = UCOLL_REQ_COLL;
        if (ucoll__sched_create(ctx[r]->world, 0, &s) != UCOLL_OK ||
            al->build(s, a, prm) != UCOLL_OK) {
            fprintf(stderr, "building rank %d failed\n", r);
            exit(1);
        }
        sends = sched_messages(s, &nr);
        out->max_sends = UCOLL_MAX(out->max_sends, sends);
        ucoll__sched_start(s, &req[r]);
    }
    while ((c = ucoll__simnet_advance(net)) != NULL) {
        ucoll__exec_progress(c);
    }
    for (int r = 0; r < p; r++) {
        out->incomplete += !req[r].complete;
    }
    out->incomplete += ucoll__simnet_unmatched(net) != 0;
    ucoll__simnet_stats(net, &stats);
    out->messages = stats.messages;
    out->time = ucoll__simnet_max_clock(net);
    for (int r = 0; r < p; r++) {
        ucoll__ctx_destroy_sim(ctx[r]);
    }
    ucoll__simnet_destroy(net);
    free(ctx);
    free(req);
}

static int run_one(const study_t *st, const ucoll_algo_t *al, int p)
{
    ucoll_simnet_params_t sp = {st->m.alpha, st->m.beta, st->m.gamma, st->m.lambda, 1, 0,
                                st->loggp, st->L, st->o, st->g, st->G};
    /* rounds: the completion time when a message costs 1 and nothing else
     * costs anything: the critical path in messages, port contention
     * included (a root sending to k children one after the other pays k) */
    ucoll_simnet_params_t unit = {1, 0, 0, 0, 1};
    ucoll_algo_params_t prm = st->prm;
    size_t *rcounts = calloc((size_t)p, sizeof(size_t));
    ucoll_coll_args_t a;
    pass_t sim, hops;
    double t0, formula;

    make_args(st, p, rcounts, &a);
    if (al->can_serve && !al->can_serve(&a, p)) {
        printf("%-22s %-16s %8d %10zu   (cannot serve)\n", ucoll__coll_name(st->coll), al->id, p,
               st->bytes);
        free(rcounts);
        return 0;
    }
    /* ranks 0 and p/2 as a sample of the work, to skip the hopeless */
    {
        ucoll_simnet_t *net;
        ucoll_ctx_t *c;
        double est = 0;

        if (ucoll__simnet_create(p, &sp, &net) != UCOLL_OK) {
            return -1;
        }
        for (int k = 0; k < 2; k++) {
            int r = k ? p / 2 : 0;
            size_t msgs0, r0;
            ucoll_sched_t *s;

            if (ucoll__ctx_create_sim(r, p, &ucoll__net_sim, net, &c) != UCOLL_OK) {
                return -1;
            }
            ucoll__sched_create(c->world, 0, &s);
            al->build(s, &a, &prm);
            msgs0 = sched_messages(s, &r0);
            ucoll__sched_destroy(s);
            ucoll__ctx_destroy_sim(c);
            est += (double)UCOLL_MAX(msgs0, r0) * (k ? p - 1 : 1);
        }
        ucoll__simnet_destroy(net);
        if (est > MAX_MESSAGES) {
            printf("%-22s %-16s %8d %10zu   (skipped: ~%.1e messages)\n",
                   ucoll__coll_name(st->coll), al->id, p, st->bytes, est);
            free(rcounts);
            return 0;
        }
    }
    t0 = now();
    sim_pass(st, al, p, &prm, &sp, &a, &sim);
    if (st->no_rounds) {
        memset(&hops, 0, sizeof(hops));
        hops.time = -1;
    } else {
        sim_pass(st, al, p, &prm, &unit, &a, &hops);
    }
    formula = al->cost ? al->cost(&a, p, &prm, &st->m) : 0;
    printf("%-22s %-16s %8d %10zu %7.0f %11zu %9zu %12.4e %12.4e %7.3f %8.2f%s\n",
           ucoll__coll_name(st->coll), al->id, p, st->bytes, hops.time, sim.messages,
           sim.max_sends, sim.time, formula, formula > 0 ? sim.time / formula : 0.0, now() - t0,
           sim.incomplete || hops.incomplete ? "  INCOMPLETE" : "");
    fflush(stdout);
    free(rcounts);
    return 0;
}

int main(int argc, char **argv)
{
    study_t st = {UCOLL_COLL_ALLREDUCE, 1 << 20, {0}, {0}};
    ucoll_config_t cfg;
    const char *algo = NULL;
    char plist[4096] = "8,64,1024,10000";
    int opt;

    ucoll__model_default(&st.m);
    /* UCOLL_SEGMENT_SIZE and UCOLL_RADIX as the runtime reads them */
    if (ucoll__config_read(&cfg) != UCOLL_OK) {
        return 1;
    }
    st.prm.seg_size = cfg.seg_size;
    st.prm.radix = cfg.radix;
    ucoll__config_release(&cfg);
    while ((opt = getopt(argc, argv, "c:a:m:p:A:B:G:L:S:R:P:nkh")) != -1) {
        switch (opt) {
        case 'c': {
            int c;
            for (c = 0; c < UCOLL_COLL_LAST; c++) {
                if (strcmp(optarg, ucoll__coll_name((ucoll_coll_t)c)) == 0) {
                    break;
                }
            }
            if (c == UCOLL_COLL_LAST) {
                fprintf(stderr, "unknown collective %s\n", optarg);
                return 1;
            }
            st.coll = (ucoll_coll_t)c;
            break;
        }
        case 'a': algo = optarg; break;
        case 'm':
            if (ucoll__parse_size(optarg, &st.bytes) != 0) {
                fprintf(stderr, "bad size %s\n", optarg);
                return 1;
            }
            break;
        case 'p': snprintf(plist, sizeof(plist), "%s", optarg); break;
        case 'A': st.m.alpha = atof(optarg); break;
        case 'B': st.m.beta = atof(optarg); break;
        case 'G': st.m.gamma = atof(optarg); break;
        case 'L': st.m.lambda = atof(optarg); break;
        case 'S':
            if (ucoll__parse_size(optarg, &st.prm.seg_size) != 0) {
                fprintf(stderr, "bad segment size %s\n", optarg);
                return 1;
            }
            break;
        case 'R': st.prm.radix = (unsigned)atoi(optarg); break;
        case 'n': st.no_rounds = 1; break;
        case 'P':
            /* LogGP: the simulated network; the formulas and the selection
             * see its Hockney reading, alpha = L + 2o, beta = G */
            if (sscanf(optarg, "%lf,%lf,%lf,%lf", &st.L, &st.o, &st.g, &st.G) != 4) {
                fprintf(stderr, "-P wants L,o,g,G (seconds, seconds per byte)\n");
                return 1;
            }
            st.loggp = 1;
            st.m.alpha = st.L + 2 * st.o;
            st.m.beta = st.G;
            break;
        case 'k': kernels(); return 0;
        default:
            fprintf(stderr,
                    "usage: %s [-c coll] [-a algo] [-m bytes] [-p p1,p2,..] "
                    "[-A alpha] [-B beta] [-G gamma] [-L lambda] [-S seg] [-R radix] [-P L,o,g,G] [-n] "
                    "[-k]\n",
                    argv[0]);
            return opt == 'h' ? 0 : 1;
        }
    }
    if (st.loggp) {
        printf("# SIMULATED network (LogGP model): L %.3g s, o %.3g s, g %.3g s, G %.3g s/B; "
               "formulas with alpha = L + 2o = %.3g s, beta = G; gamma %.3g s/B, lambda %.3g s/B\n",
               st.L, st.o, st.g, st.G, st.m.alpha, st.m.gamma, st.m.lambda);
    } else {
        printf("# SIMULATED network (Hockney model): alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, "
               "lambda %.3g s/B\n",
               st.m.alpha, st.m.beta, st.m.gamma, st.m.lambda);
    }
    /* the algorithms choose segment size and radix from the simulated model,
     * as the runtime does from its own */
    st.prm.model = st.m;
    printf("%-22s %-16s %8s %10s %7s %11s %9s %12s %12s %7s %8s\n", "# coll", "algorithm", "p",
           "bytes", "rounds", "messages", "max_sends", "sim_time_s", "formula_s", "ratio",
           "wall_s");
    for (char *save = NULL, *tok = strtok_r(plist, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int p = atoi(tok);
        const ucoll_algo_t *const *reg = ucoll__algos(st.coll);
        if (p < 1) {
            continue;
        }
        for (; reg && *reg; reg++) {
            if (algo != NULL && strcmp(algo, (*reg)->id) != 0) {
                continue;
            }
            if ((*reg)->build == NULL) {
                /* no schedule: it runs through one node's shared memory */
                if (algo != NULL) {
                    printf("# %s/%s runs through shared memory, not messages: nothing to "
                           "simulate\n",
                           ucoll__coll_name(st.coll), (*reg)->id);
                }
                continue;
            }
            run_one(&st, *reg, p);
        }
    }
    return 0;
}

/*
 * Algorithm registries and selection.
 *
 * Selection, in order:
 *   1. forced: UCOLL_<OP>_ALGO names an algorithm; used if it can serve the
 *      call, else the call falls back to the steps below (debug log says so);
 *   2. tuning file (UCOLL_TUNE_FILE): the first rule matching the call, one
 *      rule per whitespace-separated word, '#' starts a comment:
 *          <op>:<lo>-<hi>[:np=<lo>-<hi>]:@<algo>[:seg=<size>][:radix=<k>][:way=<w>]
 *      bytes in [lo, hi) (sizes take k/m/g; hi may be "inf" or empty), e.g.
 *          bcast:0-32k:@binomial  bcast:32k-inf:@scag_ring
 *          allreduce:0-inf:np=1-8:@rdbl  allreduce:1m-:@ring:seg=256k
 *      m is count * esize as in ALGORITHMS.md (sum of counts for
 *      reduce_scatter); np bounds the communicator size, inclusive; way
 *      names the way of the shm reduce and allreduce rows (UCOLL_SHM_WAY);
 *   3. the cheapest algorithm by its cost formula under the context's model
 *      (UCOLL_MODEL_* settings; alpha grows when ranks outnumber cores).
 * The choice depends only on arguments every rank shares, so all ranks of a
 * communicator pick the same algorithm.
 */
#include "algos/algos.h"
#include "progress/shm.h"
#include "topo.h"
#include "progress/request.h"
#include "transport/net.h"
#include "dtype.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Measured on the development machine (2 cores, UCX shared memory, block
 * wait mode): α = one-way latency of a small ping-pong (~2 us); β from
 * ucoll_bench bw (7 GB/s at 1-4 MiB, 2.3 GB/s at 64 MiB); γ = float32 sum
 * (ucoll_sim -k: 3.5e-11 s/B in cache, 0.9-1.3e-10 out of cache);
 * λ = memcpy (1e-11 in cache, 8-10e-11 out of cache). The middle of each
 * range, as selection sees every size. */
#define MODEL_ALPHA  2.0e-6
#define MODEL_BETA   2.0e-10
#define MODEL_GAMMA  1.0e-10
#define MODEL_LAMBDA 8.0e-11
/* Shared memory (lib/progress/shm.h): a flag stored by one rank and seen
 * by another polling it, one cache line between cores; measured with
 * ucoll_bench barrier --algo shm at p = 2 (see lib/algos/barrier/shm.c). */
#define MODEL_SHM_ALPHA 0.3e-6

void ucoll__model_default(ucoll_model_t *m)
{
    m->alpha = MODEL_ALPHA;
    m->beta = MODEL_BETA;
    m->gamma = MODEL_GAMMA;
    m->lambda = MODEL_LAMBDA;
    m->wake = 0;
    m->shm_alpha = MODEL_SHM_ALPHA;
}

int ucoll__radix_choose(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        ucoll_algo_cost_t cost)
{
    ucoll_algo_params_t q = *prm;
    int best = 2, kmax = UCOLL_MIN(UCOLL_RADIX_MAX, UCOLL_MAX(p, 2));
    double best_t = 0;

    if (prm->radix >= 2) {
        return (int)prm->radix;
    }
    if (!(q.model.alpha > 0 && q.model.beta > 0)) {
        ucoll__model_default(&q.model);
    }
    for (int k = 2; k <= kmax; k++) {
        double t;

        q.radix = (unsigned)k;
        t = cost(a, p, &q, &q.model);
        if (k == 2 || t < best_t) {
            best = k;
            best_t = t;
        }
    }
    return best;
}

/* The context's model: the settings (whose defaults are the constants
 * above), with alpha raised when ranks outnumber processing units on some
 * node of the job (agreed at init, so every rank selects alike). Then
 * every round of an algorithm waits for a descheduled peer to run, so
 * algorithms with many rounds (pipelines) lose; that wait (wake) is paid
 * once per round, so a round of several messages sent together costs one
 * wake, not one per message (measured at p = 4 on 2 cores, yield waiting:
 * the one-round radix-4 barrier 9.4 us, the two-round dissemination 13.4). */
typedef struct tune tune_t;
static tune_t *tune_load(ucoll_ctx_t *ctx);
static int tune_model(const tune_t *t, int net, int oversub, ucoll_model_t *m);

static void model_of(ucoll_ctx_t *ctx, int net, ucoll_model_t *m);

static void ctx_model(ucoll_comm_t *comm, ucoll_model_t *m)
{
    model_of(comm->ctx, comm->spans_nodes, m);
}

/* The model of the paths between nodes (net) or inside one. */
static void model_of(ucoll_ctx_t *ctx, int net, ucoll_model_t *m)
{

    ucoll__model_default(m);
    m->alpha = ctx->cfg.model_alpha;
    m->beta = ctx->cfg.model_beta;
    m->gamma = ctx->cfg.model_gamma;
    /* measured parameters (ucoll_tune --calibrate) replace the settings'
     * for the kind of path this communicator's messages take */
    if (ctx->cfg.tune_file && ctx->cfg.tune_file[0]) {
        tune_t *t = tune_load(ctx);

        if (t && tune_model(t, net, ctx->oversub, m)) {
            return; /* calibrated as oversubscribed as this job: nothing to add */
        }
    }
    if (ctx->oversub) {
        m->alpha += ctx->cfg.model_oversub_alpha;
        m->wake = ctx->cfg.model_oversub_alpha;
    }
}

const ucoll_algo_t *const *ucoll__algos(ucoll_coll_t coll)
{
    switch (coll) {
    case UCOLL_COLL_BARRIER: return ucoll__barrier_algos;
    case UCOLL_COLL_BCAST: return ucoll__bcast_algos;
    case UCOLL_COLL_REDUCE: return ucoll__reduce_algos;
    case UCOLL_COLL_ALLREDUCE: return ucoll__allreduce_algos;
    case UCOLL_COLL_GATHER: return ucoll__gather_algos;
    case UCOLL_COLL_GATHERV: return ucoll__gatherv_algos;
    case UCOLL_COLL_SCATTER: return ucoll__scatter_algos;
    case UCOLL_COLL_SCATTERV: return ucoll__scatterv_algos;
    case UCOLL_COLL_ALLGATHER: return ucoll__allgather_algos;
    case UCOLL_COLL_ALLGATHERV: return ucoll__allgatherv_algos;
    case UCOLL_COLL_ALLTOALL: return ucoll__alltoall_algos;
    case UCOLL_COLL_ALLTOALLV: return ucoll__alltoallv_algos;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK: return ucoll__reduce_scatter_block_algos;
    case UCOLL_COLL_REDUCE_SCATTER: return ucoll__reduce_scatter_algos;
    case UCOLL_COLL_SCAN: return ucoll__scan_algos;
    case UCOLL_COLL_EXSCAN: return ucoll__exscan_algos;
    default: return NULL;
    }
}

const ucoll_algo_t *ucoll__algo_find(ucoll_coll_t coll, const char *id)
{
    const ucoll_algo_t *const *reg = ucoll__algos(coll);

    for (; reg && *reg; reg++) {
        if (strcmp((*reg)->id, id) == 0) {
            return *reg;
        }
    }
    return NULL;
}

size_t ucoll__coll_bytes(const ucoll_coll_args_t *a, int p)
{
    size_t n = 0;

    if (a->coll == UCOLL_COLL_REDUCE_SCATTER && a->rcounts) {
        for (int i = 0; i < p; i++) {
            n += a->rcounts[i];
        }
        return n * a->esize;
    }
    if (a->coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK) {
        return a->count * (size_t)p * a->esize;
    }
    return a->count * a->esize;
}

/* ---- argument checks -------------------------------------------------- */

int ucoll__coll_bad_req(const char *name)
{
    ucoll_debug("%s: NULL request pointer", name);
    return UCOLL_ERR_ARG;
}

int ucoll__coll_bad_root(const char *name, const ucoll_comm_t *comm, int root)
{
    ucoll_debug("%s: root %d not in [0, %d)", name, root, comm->size);
    return UCOLL_ERR_ARG;
}

int ucoll__coll_bad_count(const char *name, const ucoll_comm_t *comm, size_t count)
{
    ucoll_debug("%s: count %zu times %d ranks overflows", name, count, comm->size);
    return UCOLL_ERR_ARG;
}

int ucoll__coll_bad_in_place(const char *name, const char *param)
{
    ucoll_debug("%s: %s cannot be UCOLL_IN_PLACE", name, param);
    return UCOLL_ERR_ARG;
}

size_t ucoll__blocks_extent(const size_t *counts, const size_t *displs, int p)
{
    size_t max = 0;

    for (int i = 0; i < p; i++) {
        max = UCOLL_MAX(max, displs[i] + counts[i]);
    }
    return max;
}

/* ---- tuning file -------------------------------------------------------- */

typedef struct tune_rule {
    ucoll_coll_t coll;
    size_t lo, hi; /* bytes, [lo, hi) */
    int plo, phi;  /* communicator size, inclusive */
    char algo[32];
    size_t seg;
    unsigned radix;
    int way; /* ucoll_shm_way_t */
    int has_stream;
    size_t stream; /* shm streaming threshold (0 never, else 64 or more) */
} tune_rule_t;

/* A model line of the tuning file (ucoll_tune --calibrate writes them):
 * "model:alpha=A:beta=B:gamma=G:lambda=L[:wake=W]" for communicators
 * inside one node, "model.net:..." for those that span nodes; wake when
 * the calibration ran oversubscribed (see tune_model). */
enum { TUNE_MODEL_NODE, TUNE_MODEL_NET };

typedef struct tune {
    tune_rule_t *rules;
    size_t n;
    int has_model[2];
    ucoll_model_t model[2]; /* fields left 0 keep the settings' values */
} tune_t;

static void tune_free(void *arg)
{
    tune_t *t = arg;

    free(t->rules);
    free(t);
}

static int parse_range(const char *s, size_t *lo, size_t *hi)
{
    char buf[64];
    const char *dash = strchr(s, '-');

    if (dash == NULL || (size_t)(dash - s) >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, s, (size_t)(dash - s));
    buf[dash - s] = '\0';
    if (ucoll__parse_size(buf, lo) != 0) {
        return -1;
    }
    if (dash[1] == '\0' || strcmp(dash + 1, "inf") == 0) {
        *hi = SIZE_MAX;
        return 0;
    }
    return ucoll__parse_size(dash + 1, hi);
}

/* A way's value by name; -1 when none is called so (auto is not a way to
 * put in a rule). */
static int way_parse(const char *s)
{
    for (int i = UCOLL_SHM_WAY_AUTO + 1; i < UCOLL_SHM_WAY_LAST; i++) {
        if (strcmp(s, ucoll__shm_way_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static int tune_parse_word(char *w, tune_rule_t *r)
{
    char *save = NULL, *f;
    int c;

    memset(r, 0, sizeof(*r));
    r->phi = 0x7fffffff;
    f = strtok_r(w, ":", &save);
    for (c = 0; c < UCOLL_COLL_LAST; c++) {
        if (f && strcmp(f, ucoll__coll_name((ucoll_coll_t)c)) == 0) {
            break;
        }
    }
    if (c == UCOLL_COLL_LAST) {
        return -1;
    }
    r->coll = (ucoll_coll_t)c;
    f = strtok_r(NULL, ":", &save);
    if (f == NULL || parse_range(f, &r->lo, &r->hi) != 0) {
        return -1;
    }
    while ((f = strtok_r(NULL, ":", &save)) != NULL) {
        size_t lo, hi;
        if (f[0] == '@') {
            snprintf(r->algo, sizeof(r->algo), "%s", f + 1);
        } else if (strncmp(f, "np=", 3) == 0 && parse_range(f + 3, &lo, &hi) == 0) {
            r->plo = (int)UCOLL_MIN(lo, (size_t)0x7fffffff);
            r->phi = (int)UCOLL_MIN(hi, (size_t)0x7fffffff);
        } else if (strncmp(f, "seg=", 4) == 0 && ucoll__parse_size(f + 4, &r->seg) == 0) {
        } else if (strncmp(f, "radix=", 6) == 0 && ucoll__parse_size(f + 6, &lo) == 0) {
            r->radix = (unsigned)lo;
        } else if (strncmp(f, "way=", 4) == 0 && (r->way = way_parse(f + 4)) > 0) {
        } else if (strncmp(f, "stream=", 7) == 0 && ucoll__parse_size(f + 7, &r->stream) == 0 &&
                   (r->stream == 0 || r->stream >= 64)) {
            r->has_stream = 1;
        } else {
            return -1;
        }
    }
    return r->algo[0] ? 0 : -1;
}

int ucoll__tune_rule_check(const char *word)
{
    char w[256];
    tune_rule_t r;

    if (strlen(word) >= sizeof(w)) {
        return -1; /* as tune_load */
    }
    snprintf(w, sizeof(w), "%s", word);
    return tune_parse_word(w, &r);
}

/* The calibrated parameters of a path into m. A calibration made with
 * ranks outnumbering processing units (wake=W on its line) measured alpha
 * with the waits for descheduled peers in it: in a job that is
 * oversubscribed too, that alpha and W stand as they are, and 1 is
 * returned (the runtime's UCOLL_MODEL_OVERSUB_ALPHA must not be added on
 * top: it would count the wake-ups twice); in one that is not, that alpha
 * does not apply and the settings' stays. 0 otherwise. */
static int tune_model(const tune_t *t, int net, int oversub, ucoll_model_t *m)
{
    int k = net ? TUNE_MODEL_NET : TUNE_MODEL_NODE;
    const ucoll_model_t *f = &t->model[k];

    if (!t->has_model[k]) {
        return 0;
    }
    if (f->alpha > 0 && (f->wake == 0 || oversub)) {
        m->alpha = f->alpha;
    }
    m->beta = f->beta > 0 ? f->beta : m->beta;
    m->gamma = f->gamma > 0 ? f->gamma : m->gamma;
    m->lambda = f->lambda > 0 ? f->lambda : m->lambda;
    if (f->wake > 0 && oversub) {
        m->wake = UCOLL_MIN(f->wake, m->alpha);
        return 1;
    }
    return 0;
}

/* "model[.net]:key=value:..." into t; 0, or -1 when it is not a model line
 * or does not parse. */
static int tune_parse_model(char *w, tune_t *t)
{
    char *save = NULL, *f = strtok_r(w, ":", &save);
    int k;
    ucoll_model_t m = {0};

    if (f == NULL || (strcmp(f, "model") != 0 && strcmp(f, "model.net") != 0)) {
        return -1;
    }
    k = strcmp(f, "model") == 0 ? TUNE_MODEL_NODE : TUNE_MODEL_NET;
    while ((f = strtok_r(NULL, ":", &save)) != NULL) {
        char *eq = strchr(f, '='), *end;
        double v;

        if (eq == NULL) {
            return -1;
        }
        *eq = '\0';
        v = strtod(eq + 1, &end);
        if (*end != '\0' || !(v >= 0 && v < 1)) {
            return -1;
        }
        if (!strcmp(f, "alpha")) {
            m.alpha = v;
        } else if (!strcmp(f, "beta")) {
            m.beta = v;
        } else if (!strcmp(f, "gamma")) {
            m.gamma = v;
        } else if (!strcmp(f, "lambda")) {
            m.lambda = v;
        } else if (!strcmp(f, "wake")) {
            m.wake = v;
        } else {
            return -1;
        }
    }
    t->model[k] = m;
    t->has_model[k] = 1;
    return 0;
}

static tune_t *tune_load(ucoll_ctx_t *ctx)
{
    tune_t *t = ucoll__exec_sel_state(ctx);
    char line[1024];
    size_t cap = 0;
    FILE *f;

    if (t != NULL) {
        return t;
    }
    t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    ucoll__exec_set_sel_state(ctx, t, tune_free);
    f = fopen(ctx->cfg.tune_file, "r");
    if (f == NULL) {
        ucoll_warn("UCOLL_TUNE_FILE %s: %s; using the model", ctx->cfg.tune_file, strerror(errno));
        return t;
    }
    for (int lineno = 1; fgets(line, sizeof(line), f); lineno++) {
        char *save = NULL, *w;
        char *hash = strchr(line, '#');
        if (hash) {
            *hash = '\0';
        }
        for (w = strtok_r(line, " \t\r\n;", &save); w; w = strtok_r(NULL, " \t\r\n;", &save)) {
            tune_rule_t r;
            char word[256];
            if (strlen(w) >= sizeof(word)) {
                ucoll_warn("%s:%d: word of %zu characters; ignored", ctx->cfg.tune_file, lineno,
                           strlen(w));
                continue;
            }
            snprintf(word, sizeof(word), "%s", w);
            if (strncmp(word, "model", 5) == 0) {
                if (tune_parse_model(word, t) != 0) {
                    ucoll_warn("%s:%d: cannot parse model '%s'; ignored", ctx->cfg.tune_file,
                               lineno, w);
                }
                continue;
            }
            if (tune_parse_word(word, &r) != 0) {
                ucoll_warn("%s:%d: cannot parse rule '%s'; ignored", ctx->cfg.tune_file, lineno, w);
                continue;
            }
            if (t->n == cap) {
                size_t ncap = cap ? 2 * cap : 16;
                tune_rule_t *nr = realloc(t->rules, ncap * sizeof(*nr));
                if (nr == NULL) {
                    break;
                }
                t->rules = nr;
                cap = ncap;
            }
            t->rules[t->n++] = r;
        }
    }
    fclose(f);
    ucoll_debug("loaded %zu selection rules from %s", t->n, ctx->cfg.tune_file);
    return t;
}

/* ---- selection ---------------------------------------------------------- */

/* A shared-memory row serves only where comm's shared memory is on (the
 * same on every member once its setup is over), or is taken as on. */
static int algo_can_serve(const ucoll_algo_t *al, const ucoll_coll_args_t *a,
                          const ucoll_comm_t *comm)
{
    if ((al->flags & UCOLL_ALGO_SHM) && !ucoll__shm_on(comm) && !comm->shm_assumed) {
        return 0;
    }
    if ((al->flags & UCOLL_ALGO_HIER) && !comm->hier_able) {
        return 0;
    }
    return al->can_serve == NULL || al->can_serve(a, comm->size);
}

/* The inputs of selection on comm (all agreed by its members): settings,
 * model, shared-memory size, and for two-level rows the node structure. */
static void sel_params(ucoll_comm_t *comm, ucoll_algo_params_t *prm, ucoll_model_t *m)
{
    ucoll_ctx_t *ctx = comm->ctx;

    memset(prm, 0, sizeof(*prm));
    prm->seg_size = ctx->cfg.seg_size;
    prm->radix = ctx->cfg.radix;
    prm->shm_way = ctx->cfg.shm_way;
    prm->shm_stream = ctx->cfg.shm_stream_min;
    prm->shm_stream_adapt = ctx->cfg.shm_stream_adapt;
    prm->shm_way_adapt = ctx->cfg.shm_way_adapt;
    prm->shm_data = ucoll__shm_data_size(ctx);
    ctx_model(comm, m);
    prm->model = *m;
    if (comm->hier_able) {
        prm->nnodes = comm->nodes;
        prm->ppn = comm->node_max;
        prm->node_shm = ctx->cfg.shm == UCOLL_SHM_MODE_AUTO;
        model_of(ctx, 0, &prm->node_model);
    }
}

/* On a communicator that spans nodes with several members on a node, a
 * one-level row's bandwidth-bound steps have the members of a node send
 * across at once, over the node's one link: its time per byte is β times
 * the members of the largest node (an agreed input). The two-level rows
 * send across from one leader per node and price their levels themselves.
 * Without it the model ranked rabenseifner, ring and circulant before the
 * two levels at 2 nodes x 2 ranks, which measured 2.3x (allreduce) and
 * 3.1x (bcast) the two levels' time at 1 MiB over TCP. */
static double algo_cost(const ucoll_algo_t *al, const ucoll_coll_args_t *a, int p,
                        const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    ucoll_model_t shared;

    if (al->cost == NULL) {
        return 1e30;
    }
    if (prm->ppn > 1 && !(al->flags & (UCOLL_ALGO_HIER | UCOLL_ALGO_SHM))) {
        shared = *m;
        shared.beta *= prm->ppn;
        return al->cost(a, p, prm, &shared);
    }
    return al->cost(a, p, prm, m);
}

static void explain_ranking(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                            const ucoll_algo_params_t *prm, const ucoll_model_t *m, FILE *f);

/* Whether a call that the model gives the shm row is timed against the
 * best message-based row (UCOLL_SHM_DUEL, progress/shm.h
 * ucoll__shm_duel_arm): an alltoall or reduce_scatter_block from
 * UCOLL_SHM_DUEL_MIN bytes, contiguous. The model ranks the shm rows'
 * two copies against a message's one by constants, where the machine's
 * state moves their times: at p = 4 here a 512 KiB alltoall took 387 us
 * through shm and 465 pairwise with the CPUs close, and 698 against 450
 * far apart, a state the host changes every few seconds. */
static int duel_able(const ucoll_ctx_t *ctx, const ucoll_coll_args_t *a, size_t bytes)
{
    return ctx->cfg.shm_duel != UCOLL_SHM_DUEL_OFF && a->iov == NULL &&
           (a->coll == UCOLL_COLL_ALLTOALL || a->coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK) &&
           bytes >= UCOLL_SHM_DUEL_MIN;
}

/* The rival of a duelled call: the model's best of the message-based
 * rows that build a schedule (NULL: none). */
static const ucoll_algo_t *rival_of(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                                    const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    const ucoll_algo_t *rival = NULL;
    double rival_t = 0;

    for (const ucoll_algo_t *const *reg = ucoll__algos(a->coll); *reg; reg++) {
        const ucoll_algo_t *al = *reg;
        double t;

        if ((al->flags & (UCOLL_ALGO_SHM | UCOLL_ALGO_HIER)) || al->build == NULL ||
            !algo_can_serve(al, a, comm)) {
            continue;
        }
        t = algo_cost(al, a, comm->size, prm, m);
        if (rival == NULL || t < rival_t) {
            rival = al;
            rival_t = t;
        }
    }
    return rival;
}

const ucoll_algo_t *ucoll__algo_select(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                                       ucoll_algo_params_t *prm_p)
{
    ucoll_ctx_t *ctx = comm->ctx;
    const ucoll_algo_t *const *reg = ucoll__algos(a->coll);
    const char *cname = ucoll__coll_name(a->coll);
    const char *forced = ctx->cfg.algo[a->coll];
    const ucoll_algo_t *best = NULL, *al;
    int p = comm->size;
    size_t bytes = ucoll__coll_bytes(a, p);
    double best_t = 0;
    ucoll_model_t m;

    sel_params(comm, prm_p, &m);
    if (reg == NULL || reg[0] == NULL) {
        return NULL;
    }
    if (forced && forced[0]) {
        al = ucoll__algo_find(a->coll, forced);
        if (al && algo_can_serve(al, a, comm)) {
            ucoll_debug("%s: %s (forced), %zu bytes, p %d", cname, al->id, bytes, p);
            return al;
        }
        ucoll_debug("%s: forced algorithm '%s' %s for %zu bytes on %d ranks; falling back", cname,
                    forced, al ? "cannot serve" : "does not exist", bytes, p);
    }
    if (ctx->cfg.tune_file && ctx->cfg.tune_file[0]) {
        tune_t *t = tune_load(ctx);
        for (size_t i = 0; t && i < t->n; i++) {
            const tune_rule_t *r = &t->rules[i];
            if (r->coll != a->coll || bytes < r->lo || bytes >= r->hi || p < r->plo || p > r->phi) {
                continue;
            }
            al = ucoll__algo_find(a->coll, r->algo);
            if (al && algo_can_serve(al, a, comm)) {
                if (r->seg) {
                    prm_p->seg_size = r->seg;
                }
                if (r->radix) {
                    prm_p->radix = r->radix;
                }
                if (r->way) {
                    prm_p->shm_way = r->way;
                }
                if (r->has_stream) {
                    prm_p->shm_stream = r->stream;
                    prm_p->shm_stream_adapt = 0;
                }
                /* a rule that names the shm row with the model's segment
                 * and radix keeps its duel, as it keeps the choice of
                 * streaming: what the rule measured best is the row that
                 * the duel starts from, and the state it measured in
                 * passes (rules written with shm fixed took 1.2-1.5x the
                 * pairwise alltoall's time at p = 3 and 4 in a later job) */
                if ((al->flags & UCOLL_ALGO_SHM) && !r->seg && !r->radix &&
                    duel_able(ctx, a, bytes)) {
                    prm_p->rival = rival_of(comm, a, prm_p, &m);
                }
                ucoll_debug("%s: %s (tuning rule %zu)%s%s, %zu bytes, p %d", cname, al->id, i,
                            prm_p->rival ? ", timed against " : "",
                            prm_p->rival ? prm_p->rival->id : "", bytes, p);
                return al;
            }
            ucoll_debug("%s: tuning rule %zu names '%s', which %s; next rule", cname, i, r->algo,
                        al ? "cannot serve" : "does not exist");
        }
    }
    for (; *reg; reg++) {
        double t;
        al = *reg;
        if (!algo_can_serve(al, a, comm)) {
            continue;
        }
        t = algo_cost(al, a, p, prm_p, &m);
        if (best == NULL || t < best_t) {
            best = al;
            best_t = t;
        }
    }
    if (best && (best->flags & UCOLL_ALGO_SHM) && duel_able(ctx, a, bytes)) {
        prm_p->rival = rival_of(comm, a, prm_p, &m);
    }
    if (best) {
        ucoll_debug("%s: %s (model: %.3g us)%s%s, %zu bytes, p %d", cname, best->id, best_t * 1e6,
                    prm_p->rival ? ", timed against " : "", prm_p->rival ? prm_p->rival->id : "",
                    bytes, p);
        if (ucoll__log_level >= UCOLL_LOG_DEBUG) {
            explain_ranking(comm, a, prm_p, &m, NULL);
        }
    }
    return best;
}

static int rank_cmp(const void *x, const void *y)
{
    const ucoll_algo_rank_t *a = x, *b = y;

    if (a->serves != b->serves) {
        return b->serves - a->serves;
    }
    return (a->t > b->t) - (a->t < b->t);
}

int ucoll__algo_rank(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_algo_rank_t *out,
                     int max)
{
    const ucoll_algo_t *const *reg = ucoll__algos(a->coll);
    ucoll_algo_params_t prm;
    ucoll_model_t m;
    int n = 0;

    sel_params(comm, &prm, &m);
    for (; reg && *reg && n < max; reg++, n++) {
        out[n].al = *reg;
        out[n].serves = algo_can_serve(*reg, a, comm);
        out[n].t = out[n].serves ? algo_cost(*reg, a, comm->size, &prm, &m) : 0;
        out[n].params[0] = '\0';
        if (out[n].serves && (*reg)->params) {
            (*reg)->params(a, comm->size, &prm, out[n].params, sizeof(out[n].params));
        }
    }
    qsort(out, (size_t)n, sizeof(*out), rank_cmp);
    return n;
}

/* The model's ranking of every algorithm for the call, to f (NULL: the
 * debug log), with the selection's inputs. */
static void explain_ranking(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                            const ucoll_algo_params_t *prm, const ucoll_model_t *m, FILE *f)
{
    ucoll_algo_rank_t rk[64];
    int n = ucoll__algo_rank(comm, a, rk, 64);
    char seg[32] = "model", radix[32] = "model", stream[64] = "never";

    if (prm->seg_size) {
        snprintf(seg, sizeof(seg), "%zu", prm->seg_size);
    }
    if (prm->radix) {
        snprintf(radix, sizeof(radix), "%u", prm->radix);
    }
    if (prm->shm_stream) {
        snprintf(stream, sizeof(stream), "from %zu B%s", prm->shm_stream,
                 prm->shm_stream_adapt ? " where measured quicker" : "");
    }
    for (int i = 0; i < n; i++) {
        char line[200];

        if (rk[i].serves) {
            snprintf(line, sizeof(line), "%2d. %-16s %12.3f us%s  %-24s", i + 1, rk[i].al->id,
                     rk[i].t * 1e6, rk[i].al->cost ? "" : " (not modelled)", rk[i].params);
        } else {
            snprintf(line, sizeof(line), "    %-16s %12s     %-24s", rk[i].al->id, "cannot serve",
                     "");
        }
        if (f) {
            fprintf(f, "  %s  %s\n", line, rk[i].al->desc ? rk[i].al->desc : "");
        } else {
            size_t n = strlen(line);

            while (n > 0 && line[n - 1] == ' ') { /* the columns' padding: no description follows */
                line[--n] = '\0';
            }
            ucoll_debug("  %s", line);
        }
    }
    if (f) {
        fprintf(f,
                "model: alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, lambda %.3g s/B, wake %.3g s; "
                "segment size %s, radix %s, shm way %s, shm stream %s\n",
                m->alpha, m->beta, m->gamma, m->lambda, m->wake, seg, radix,
                prm->shm_way ? ucoll__shm_way_names[prm->shm_way]
                : ucoll__shm_way_adapt_on(prm) && prm->seg_size == 0
                    ? "model's or another, from 65536 B where measured quicker"
                    : "model",
                stream);
    }
}

int ucoll__algo_explain(ucoll_comm_t *comm, const ucoll_coll_args_t *a, FILE *f)
{
    ucoll_algo_params_t prm;
    const ucoll_algo_t *al = ucoll__algo_select(comm, a, &prm);

    if (al == NULL) {
        return UCOLL_ERR_UNSUPPORTED;
    }
    fprintf(f, "%s of %zu bytes on %d ranks (%s): the default selection takes %s\n",
            ucoll__coll_name(a->coll), ucoll__coll_bytes(a, comm->size), comm->size,
            comm->spans_nodes ? "across nodes" : "one node", al->id);

    explain_ranking(comm, a, &prm, &prm.model, f);
    return UCOLL_OK;
}

/* ---- the schedule cache ------------------------------------------------
 *
 * Per communicator, the sealed schedules of the last call shapes, so that a
 * repeated call selects nothing and builds nothing: it runs the cached
 * schedule on its own buffers under its own tag. A shape is everything a
 * schedule depends on besides the buffers' addresses: operation, datatype,
 * op, root, count, whether and how the send buffer lies in the receive
 * buffer (in place), and the context's selection settings (sel_gen). The
 * v-variants (counts per rank, read through the caller's arrays) and
 * schedules that address memory outside the declared buffers are not
 * cached. Eviction is least recently used; a schedule still running when
 * evicted is freed when its run ends. A call served by a row without a
 * schedule (shared memory) caches the row and its parameters instead, and
 * where the shm row duels a message-based one (UCOLL_SHM_DUEL) the
 * latter's schedule beside them.
 */
#define CACHE_MAX 32

typedef struct cache_key {
    uint32_t coll, dt, op, in_place;
    int root;
    uint32_t gen;
    size_t count;
    ptrdiff_t delta; /* sbuf - rbuf when sbuf lies in rbuf */
    int contained;
} cache_key_t;

typedef struct cache_entry {
    cache_key_t key;
    ucoll_sched_t *s;        /* the schedule, or NULL: */
    const ucoll_algo_t *al;  /* a row that starts without one, */
    ucoll_algo_params_t prm; /* with these parameters */
    ucoll_sched_t *rival;    /* al the shm row, duelled against this (NULL: not) */
    uint64_t used;
} cache_entry_t;

typedef struct ucoll_coll_cache {
    cache_entry_t e[CACHE_MAX];
    int n;
    int last;  /* the entry hit or added last */
    int last2; /* and the one before it: two calls that alternate (a
                * collective and a barrier) are found at once */
    uint64_t clock;
    /* The last two calls served from the cache (a collective and the
     * barrier between, or two roots in turn), as the caller passed them,
     * and their entries (e < 0: none). A call equal to one of them field
     * by field has the same key, so it skips the key's arithmetic; an
     * entry replaced forgets its call. */
    struct cache_rep {
        ucoll_coll_t coll;
        ucoll_dtype_t dt;
        ucoll_op_t op;
        int root, in_place;
        uint32_t gen;
        const void *sbuf;
        void *rbuf;
        size_t count;
        int e;
    } rep[2];
    int rep_next; /* the one to replace */
} ucoll_coll_cache_t;

static inline int rep_eq(const struct cache_rep *r, const ucoll_coll_args_t *a, uint32_t gen)
{
    return r->e >= 0 && a->sbuf == r->sbuf && a->rbuf == r->rbuf && a->count == r->count &&
           a->coll == r->coll && a->dt == r->dt && a->op == r->op && a->root == r->root &&
           a->in_place == r->in_place && gen == r->gen && a->iov == NULL;
}

/* The entry of a call equal to one of the last two, or NULL. */
static inline cache_entry_t *rep_find(ucoll_coll_cache_t *c, const ucoll_coll_args_t *a,
                                      uint32_t gen)
{
    for (int j = 0; j < 2; j++) {
        if (rep_eq(&c->rep[j], a, gen)) {
            c->rep_next = !j;
            c->e[c->rep[j].e].used = ++c->clock;
            return &c->e[c->rep[j].e];
        }
    }
    return NULL;
}

static void rep_set(ucoll_coll_cache_t *c, const ucoll_coll_args_t *a, uint32_t gen, int i)
{
    struct cache_rep *r = &c->rep[c->rep_next];

    r->coll = a->coll;
    r->dt = a->dt;
    r->op = a->op;
    r->root = a->root;
    r->in_place = a->in_place;
    r->gen = gen;
    r->sbuf = a->sbuf;
    r->rbuf = a->rbuf;
    r->count = a->count;
    r->e = i;
    c->rep_next = !c->rep_next;
}

/* Bytes of the send and receive buffers on this rank (0 where the buffer
 * means nothing here); 0 when the call is not cached. */
static int coll_extents(const ucoll_coll_args_t *a, const ucoll_comm_t *comm, size_t *sb,
                        size_t *rb)
{
    size_t blk = a->count * a->esize, all = blk * (size_t)comm->size;
    int root = comm->rank == a->root;

    switch (a->coll) {
    case UCOLL_COLL_BARRIER: *sb = *rb = 0; return 1;
    case UCOLL_COLL_BCAST:
    case UCOLL_COLL_ALLREDUCE:
    case UCOLL_COLL_SCAN:
    case UCOLL_COLL_EXSCAN: *sb = *rb = blk; return 1;
    case UCOLL_COLL_REDUCE:
        *sb = blk;
        *rb = root ? blk : 0;
        return 1;
    case UCOLL_COLL_GATHER:
        *sb = blk;
        *rb = root ? all : 0;
        return 1;
    case UCOLL_COLL_SCATTER:
        *sb = root ? all : 0;
        *rb = blk;
        return 1;
    case UCOLL_COLL_ALLGATHER:
        *sb = blk;
        *rb = all;
        return 1;
    case UCOLL_COLL_ALLTOALL: *sb = *rb = all; return 1;
    case UCOLL_COLL_REDUCE_SCATTER_BLOCK:
        *sb = all;
        *rb = a->in_place ? all : blk;
        return 1;
    default: return 0;
    }
}

static void cache_key(const ucoll_comm_t *comm, const ucoll_coll_args_t *a, size_t sb, size_t rb,
                      cache_key_t *k)
{
    uintptr_t s = (uintptr_t)a->sbuf, r = (uintptr_t)a->rbuf;

    k->coll = a->coll;
    k->dt = a->dt;
    k->op = a->op;
    k->in_place = a->in_place;
    k->root = a->root;
    k->gen = comm->ctx->sel_gen;
    k->count = a->count;
    k->contained = 0; /* key_eq compares fields, so the padding may stay */
    k->delta = 0;
    if (sb && rb && s >= r && s + sb <= r + rb) {
        k->contained = 1;
        k->delta = (ptrdiff_t)(s - r);
    } else if (sb && rb && s < r + rb && r < s + sb) {
        k->contained = 2; /* partial overlap: not relocatable anyway */
    }
}

static int key_eq(const cache_key_t *x, const cache_key_t *y)
{
    return x->coll == y->coll && x->count == y->count && x->root == y->root && x->dt == y->dt &&
           x->op == y->op && x->in_place == y->in_place && x->gen == y->gen &&
           x->contained == y->contained && x->delta == y->delta;
}

static const cache_entry_t *cache_find(ucoll_comm_t *comm, const cache_key_t *k)
{
    ucoll_coll_cache_t *c = comm->coll_cache;

    if (c == NULL || c->n == 0) {
        return NULL;
    }
    if (key_eq(&c->e[c->last].key, k)) {
        c->e[c->last].used = ++c->clock;
        return &c->e[c->last];
    }
    if (key_eq(&c->e[c->last2].key, k)) {
        int i = c->last2;

        c->last2 = c->last;
        c->last = i;
        c->e[i].used = ++c->clock;
        return &c->e[i];
    }
    for (int i = 0; i < c->n; i++) {
        if (key_eq(&c->e[i].key, k)) {
            c->last2 = c->last;
            c->last = i;
            c->e[i].used = ++c->clock;
            return &c->e[i];
        }
    }
    return NULL;
}

/* Keep s (or, s NULL, the row al with prm) under k; returns 0 (and keeps
 * nothing) when out of memory. */
static int cache_add(ucoll_comm_t *comm, const cache_key_t *k, ucoll_sched_t *s,
                     const ucoll_algo_t *al, const ucoll_algo_params_t *prm, ucoll_sched_t *rival)
{
    ucoll_coll_cache_t *c = comm->coll_cache;
    int i;

    if (c == NULL) {
        c = comm->coll_cache = calloc(1, sizeof(*c));
        if (c == NULL) {
            return 0;
        }
        c->rep[0].e = c->rep[1].e = -1;
    }
    if (c->n < CACHE_MAX) {
        i = c->n++;
    } else {
        i = 0;
        for (int j = 1; j < c->n; j++) {
            if (c->e[j].used < c->e[i].used) {
                i = j;
            }
        }
        if (c->e[i].s) {
            ucoll__sched_release(c->e[i].s);
        }
        if (c->e[i].rival) {
            ucoll__sched_release(c->e[i].rival);
        }
        for (int j = 0; j < 2; j++) {
            if (c->rep[j].e == i) {
                c->rep[j].e = -1;
            }
        }
    }
    c->e[i].key = *k;
    c->e[i].s = s;
    c->e[i].rival = rival;
    c->e[i].al = al;
    if (prm) {
        c->e[i].prm = *prm;
    }
    c->e[i].used = ++c->clock;
    if (c->last != i) {
        c->last2 = c->last;
    }
    c->last = i;
    return 1;
}

void ucoll__coll_cache_free(ucoll_comm_t *comm)
{
    ucoll_coll_cache_t *c = comm->coll_cache;

    if (c == NULL) {
        return;
    }
    for (int i = 0; i < c->n; i++) {
        if (c->e[i].s) {
            ucoll__sched_release(c->e[i].s);
        }
        if (c->e[i].rival) {
            ucoll__sched_release(c->e[i].rival);
        }
    }
    free(c);
    comm->coll_cache = NULL;
}

/* An entry whose shm row duels e->rival (out of line: the repeated
 * call's path stays as short). */
static __attribute__((noinline)) int entry_duel(ucoll_comm_t *comm, const cache_entry_t *e,
                                                const ucoll_coll_args_t *a, ucoll_req_t *req,
                                                uint32_t tag)
{
    return ucoll__shm_xchg_duel(comm, a, &e->prm, req,
                                a->coll == UCOLL_COLL_ALLTOALL ? UCOLL_SHM_XCHG_COPY
                                                               : UCOLL_SHM_XCHG_REDUCE,
                                e->rival, (int)tag);
}

static inline int entry_run(ucoll_comm_t *comm, const cache_entry_t *e, const ucoll_coll_args_t *a,
                            ucoll_req_t *req, uint32_t tag)
{
    if (e->s) {
        return ucoll__sched_run(e->s, req, a->sbuf, a->rbuf, (int)tag);
    }
    if (ucoll_unlikely(e->rival != NULL)) {
        return entry_duel(comm, e, a, req, tag);
    }
    return e->al->start(comm, a, &e->prm, req);
}

/* The rival of a duelled call (prm->rival): its schedule for the call's
 * shape, sealed and relocatable, or NULL (the call is not duelled). */
static ucoll_sched_t *rival_build(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                                  const ucoll_algo_params_t *prm, size_t sb, size_t rb,
                                  uint32_t tag)
{
    ucoll_algo_params_t rp = *prm;
    ucoll_sched_t *s;

    rp.rival = NULL;
    if (ucoll__sched_create(comm, (int)tag, &s) != UCOLL_OK) {
        return NULL;
    }
    ucoll__sched_set_bufs(s, a->sbuf, sb, a->rbuf, rb);
    if (prm->rival->build(s, a, &rp) != UCOLL_OK || ucoll__sched_seal(s) != UCOLL_OK ||
        !ucoll__sched_relocatable(s)) {
        ucoll_debug("%s: the rival %s could not be built; the shm row runs alone",
                    ucoll__coll_name(a->coll), prm->rival->id);
        ucoll__sched_destroy(s);
        return NULL;
    }
    return s;
}

/* A call that is not one of the last two: the cache by key, else
 * selection and a new entry. Out of line, so that a repeated call's path
 * saves no registers. */
static __attribute__((noinline)) int coll_run_new(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                                                  ucoll_req_t *req, uint32_t tag)
{
    ucoll_coll_cache_t *c;
    const cache_entry_t *e;
    const ucoll_algo_t *al;
    ucoll_algo_params_t prm;
    ucoll_sched_t *s;
    cache_key_t key;
    size_t sb = 0, rb = 0;
    int st, cacheable;

    /* a coalesced bcast runs only where selection takes shared memory
     * (bcast.c), decided again here: no cached schedule may take it */
    cacheable = a->iov == NULL && coll_extents(a, comm, &sb, &rb);
    if (cacheable) {
        cache_key(comm, a, sb, rb, &key);
        e = cache_find(comm, &key);
        if (e) {
            c = comm->coll_cache;
            rep_set(c, a, key.gen, (int)(e - c->e));
            return entry_run(comm, e, a, req, tag);
        }
    }

    al = ucoll__algo_select(comm, a, &prm);
    if (al == NULL || (a->iov && !(al->flags & UCOLL_ALGO_SHM))) {
        ucoll_debug("%s: no algorithm can serve the call", ucoll__coll_name(a->coll));
        return UCOLL_ERR_UNSUPPORTED;
    }
    if (al->start) {
        prm.tag = (int)tag;
        if (prm.rival && cacheable) {
            /* a duelled call: it runs from its entry */
            ucoll_sched_t *rival = rival_build(comm, a, &prm, sb, rb, tag);

            if (rival && cache_add(comm, &key, NULL, al, &prm, rival)) {
                c = comm->coll_cache;
                return entry_run(comm, &c->e[c->last], a, req, tag);
            }
            if (rival) {
                ucoll__sched_destroy(rival);
            }
        }
        st = al->start(comm, a, &prm, req);
        if (st == UCOLL_OK && cacheable) {
            cache_add(comm, &key, NULL, al, &prm, NULL);
        }
        return st;
    }
    st = ucoll__sched_create(comm, (int)tag, &s);
    if (st != UCOLL_OK) {
        return st;
    }
    if (cacheable) {
        ucoll__sched_set_bufs(s, a->sbuf, sb, a->rbuf, rb);
    }
    st = al->build(s, a, &prm);
    if (st == UCOLL_OK) {
        st = ucoll__sched_seal(s);
    }
    if (st != UCOLL_OK) {
        ucoll_debug("%s/%s: building the schedule failed: %s", ucoll__coll_name(a->coll), al->id,
                    ucoll_strerror(st));
        goto err_sched;
    }
    if (cacheable && ucoll__sched_relocatable(s) && cache_add(comm, &key, s, NULL, NULL, NULL)) {
        return ucoll__sched_run(s, req, a->sbuf, a->rbuf, (int)tag);
    }
    st = ucoll__sched_start(s, req);
    if (st != UCOLL_OK) {
        goto err_sched;
    }
    return UCOLL_OK;

err_sched:
    ucoll__sched_destroy(s);
    return st;
}

int ucoll__coll_run(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t *req, uint32_t tag)
{
    ucoll_coll_cache_t *c = comm->coll_cache;
    const cache_entry_t *e;

    if (c != NULL && (e = rep_find(c, a, comm->ctx->sel_gen)) != NULL) {
        return entry_run(comm, e, a, req, tag);
    }
    return coll_run_new(comm, a, req, tag);
}

/* The call's sequence number is taken even when the call cannot start on
 * this rank (out of memory here, no algorithm): the arguments were checked
 * alike everywhere, so the other members took it, and this rank's next
 * call must pair with their next one, not with this one. */
void ucoll__coll_seq_skip(ucoll_comm_t *comm)
{
    comm->coll_seq = (comm->coll_seq >= UCOLL_TAG_UB) ? 0 : comm->coll_seq + 1;
}

int ucoll__coll_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t **req_p)
{
    ucoll_req_t *req;
    uint32_t tag;
    int st, deferred = 0;

    if (ucoll_unlikely(comm->ctx->net->comm_failed && comm->ctx->net->comm_failed(comm))) {
        /* a member has failed: no collective on comm can complete, on any
         * live member (see ucoll.h) */
        ucoll__coll_seq_skip(comm);
        return UCOLL_ERR_PEER;
    }
    req = ucoll__req_alloc(comm->ctx, UCOLL_REQ_COLL);
    if (req == NULL) {
        ucoll__coll_seq_skip(comm);
        return UCOLL_ERR_NOMEM;
    }
    req->user = 1;
    if (ucoll_unlikely(!ucoll__shm_settled(comm)) &&
        (st = ucoll__shm_coll_gate(comm, a, req, &deferred)) != UCOLL_OK) {
        goto err_req;
    }
    if (!deferred) {
        tag = comm->coll_seq;
        st = ucoll__coll_run(comm, a, req, tag);
        if (st != UCOLL_OK) {
            goto err_req;
        }
        /* the call is committed: it owns this sequence number */
        comm->coll_seq = (tag >= UCOLL_TAG_UB) ? 0 : tag + 1;
    }
    *req_p = req;
    return UCOLL_OK;

err_req:
    if (!deferred) {
        ucoll__coll_seq_skip(comm);
    }
    ucoll_debug("%s could not start here: %s; its sequence number is spent",
                ucoll__coll_name(a->coll), ucoll_strerror(st));
    ucoll__req_release(req);
    return st;
}

#include "config.h"
#include "algos/algos.h"
#include "log.h"
#include "ucoll.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

const char *const ucoll__coll_names[UCOLL_COLL_LAST] = {"barrier",
                                                        "bcast",
                                                        "reduce",
                                                        "allreduce",
                                                        "gather",
                                                        "gatherv",
                                                        "scatter",
                                                        "scatterv",
                                                        "allgather",
                                                        "allgatherv",
                                                        "alltoall",
                                                        "alltoallv",
                                                        "reduce_scatter_block",
                                                        "reduce_scatter",
                                                        "scan",
                                                        "exscan"};

typedef enum { CFG_INT, CFG_UINT, CFG_SIZE, CFG_BOOL, CFG_ENUM, CFG_DOUBLE, CFG_STRING } cfg_type_t;

typedef struct {
    const char *name; /* without the UCOLL_ prefix */
    cfg_type_t type;
    const char *dflt;
    const char *help;
    size_t offset;       /* into ucoll_config_t */
    const char **values; /* CFG_ENUM: NULL-terminated names, index = value */
    /* numeric rows: accepted range [lo, hi] when hi > 0 (0 also accepted
     * when zero_ok: "from the model"); range is how the error says it */
    double lo, hi;
    int zero_ok;
    const char *range;
} cfg_row_t;

static const char *log_levels[] = {"error", "warn", "info", "debug", "trace", NULL};
static const char *modex_names[] = {"fence", "direct", NULL};
static const char *boot_names[] = {"auto", "pmix", "singleton", "env", NULL};
static const char *wait_names[] = {"spin", "block", "hybrid", "yield", "auto", NULL};
static const char *rndv_names[] = {"auto", "tag", "am", "get", NULL};
static const char *shm_names[] = {"auto", "off", NULL};
static const char *way_adapt_names[] = {"0", "1", "turn", "auto", NULL};
static const char *duel_names[] = {"0", "1", "turn", NULL};
static const char *liveness_names[] = {"auto", "ucx", NULL};
const char *ucoll__shm_way_names[] = {"auto", "oneshot", "sliced", "root", "pipelined", NULL};

#define OFF(_f) offsetof(ucoll_config_t, _f)
#define ALGO_ROW(_c, _lc)                                                                 \
    {                                                                                     \
#_c "_ALGO", CFG_STRING, "",                                                      \
            "force the " _lc " algorithm by id (ucoll_info -a lists them); empty: model", \
            OFF(algo[UCOLL_COLL_##_c]), NULL                                              \
    }

static const cfg_row_t cfg_table[] = {
    {"LOG_LEVEL", CFG_ENUM, "warn", "log level: error, warn, info, debug, trace", OFF(log_level),
     log_levels},
    {"BOOTSTRAP", CFG_ENUM, "auto",
     "auto (PMIx when started by a launcher, else env when RANK, WORLD_SIZE and MASTER_ADDR are "
     "set, else a singleton of size 1), pmix, singleton, env (TCP rendezvous at MASTER_ADDR)",
     OFF(bootstrap), boot_names},
    /* not torch's MASTER_PORT (29500), which torchrun or torch owns, nor the
     * c10d rendezvous default (29400) */
    {"BOOTSTRAP_PORT", CFG_INT, "29600", "env bootstrap: TCP port rank 0 listens on at MASTER_ADDR",
     OFF(boot_port), NULL, 1, 65535, 0, "1 to 65535"},
    {"BOOTSTRAP_TIMEOUT", CFG_DOUBLE, "60",
     "env bootstrap: seconds for every rank to reach rank 0 before UCOLL_ERR_BOOTSTRAP",
     OFF(boot_timeout), NULL, 0.1, 1e6, 0, "0.1 to 1e6 seconds"},
    {"MODEX", CFG_ENUM, "fence",
     "address exchange: fence (all at init) or direct (fetch a peer's on first use)", OFF(modex),
     modex_names},
    /* 64k: measured with ucoll_bench at p = 2 and 4 (UCX 1.13.1), a 16-64 KiB
     * allreduce costs 3-4x less eager than announced, over shared memory and
     * TCP alike (an announcement costs a round trip that a copy of up to
     * 64 KiB does not); at 128k, pipelined bcast segments go eager and large
     * bcasts slow down by 1.7x. */
    {"EAGER_LIMIT", CFG_SIZE, "64k", "largest message sent eagerly; larger go rendezvous",
     OFF(eager_limit), NULL, 0, 64 << 20, 0, "0 to 64m"},
    {"EAGER_CREDITS", CFG_SIZE, "256k",
     "eager bytes a sender may have unconsumed at one receiver before it falls back to rendezvous",
     OFF(eager_credits), NULL, 0, 1 << 30, 0, "0 to 1g"},
    {"RNDV_MODE", CFG_ENUM, "auto",
     "rendezvous payload mechanism: auto (am, the fastest measured on shared memory and TCP), "
     "tag (tagged transfer), am (AM rendezvous), get (RMA get from a cached registration; "
     "enables UCX RMA, which slows small messages)",
     OFF(rndv_mode), rndv_names},
    {"WAIT", CFG_ENUM, "auto",
     "waiting: auto (spin with a processing unit per local rank, else yield), spin (busy poll), "
     "yield (poll, giving the core away between idle polls), block (sleep on the worker fd), "
     "hybrid (poll for UCOLL_SPIN_TIME, then sleep)",
     OFF(wait_mode), wait_names},
    {"SPIN_TIME", CFG_UINT, "50", "microseconds of idle polling before a hybrid wait sleeps",
     OFF(spin_time), NULL, 0, 1e7, 0, "0 to 10000000 (10 s)"},
    {"STATS", CFG_BOOL, "0", "print per-rank message counters at finalize", OFF(stats), NULL},
    {"TIMEOUT", CFG_DOUBLE, "0",
     "seconds a blocking wait may last before UCOLL_ERR_TIMEOUT; 0 = no limit", OFF(timeout), NULL,
     0, 1e7, 0, "0 to 1e7 seconds"},
    {"SEGMENT_SIZE", CFG_SIZE, "0", "segment size of pipelined algorithms; 0 = from the model",
     OFF(seg_size), NULL, 64, 1 << 30, 1, "0 (from the model) or 64 to 1g"},
    {"RADIX", CFG_UINT, "0", "radix of k-nomial and k-chain algorithms; 0 = from the model",
     OFF(radix), NULL, 2, 1024, 1, "0 (from the model) or 2 to 1024"},
    {"MODEL_ALPHA", CFG_DOUBLE, "2e-6", "selection model: seconds of start-up per message (alpha)",
     OFF(model_alpha), NULL, 0, 1, 0, "0 to 1 (seconds)"},
    {"MODEL_BETA", CFG_DOUBLE, "2e-10", "selection model: seconds per byte on the wire (beta)",
     OFF(model_beta), NULL, 0, 1, 0, "0 to 1 (seconds)"},
    {"MODEL_GAMMA", CFG_DOUBLE, "1e-10",
     "selection model: seconds per byte of a local reduction (gamma)", OFF(model_gamma), NULL, 0, 1,
     0, "0 to 1 (seconds)"},
    {"MODEL_OVERSUB_ALPHA", CFG_DOUBLE, "40e-6",
     "added to alpha when ranks outnumber processing units (each round then costs a sleep and "
     "a wake-up)",
     OFF(model_oversub_alpha), NULL, 0, 1, 0, "0 to 1 (seconds)"},
    {"TUNE_FILE", CFG_STRING, "", "file of selection rules 'op:lo-hi:@algo' overriding the model",
     OFF(tune_file), NULL},
    {"SHM", CFG_ENUM, "auto",
     "collectives through shared memory mapped by UCX: auto (on communicators whose ranks share "
     "a node and reach each other's memory), off",
     OFF(shm), shm_names},
    /* 0: 1m, or 4m where ranks outnumber processing units on some node
     * (progress/shm.c, ucoll__shm_size, which says why). The memory: that
     * and a 128-byte control line per rank per communicator that uses it. */
    {"SHM_SIZE", CFG_SIZE, "0",
     "bytes of the data area of each rank's shared-memory region per communicator (larger "
     "messages go through it in pieces; the region adds a 128-byte control line); 0 = 1m, or "
     "4m where ranks outnumber processing units",
     OFF(shm_size), NULL, 4096, 1 << 30, 1, "0 (1m or 4m) or 4k to 1g"},
    {"SHM_STREAM_MIN", CFG_SIZE, "32k",
     "copies of this many bytes and more into a rank's shared-memory region that other ranks "
     "only copy out (bcast, allgather, alltoall) bypass this core's cache (non-temporal stores, "
     "x86-64); 0 = never",
     OFF(shm_stream_min), NULL, 64, 1e15, 1, "0 (never) or 64 and more"},
    {"SHM_STREAM_ADAPT", CFG_BOOL, "1",
     "where copies would stream (UCOLL_SHM_STREAM_MIN), calls are timed streamed and plain, per "
     "operation and size, and the quicker way is taken, the other tried every 32nd call (a "
     "bcast's root decides, rank 0 for allgather and alltoall); 0 = always stream there",
     OFF(shm_stream_adapt), NULL},
    {"SHM_WAY", CFG_ENUM, "auto",
     "way of the shared-memory reduce and allreduce rows: auto (the model's), oneshot, sliced, "
     "root (pipelined to the root; reduce), pipelined (allreduce); a way the call cannot take "
     "falls back to the model's; it does not select the shm row (UCOLL_ALLREDUCE_ALGO=shm "
     "or UCOLL_REDUCE_ALGO=shm does)",
     OFF(shm_way), ucoll__shm_way_names},
    {"SHM_WAY_ADAPT", CFG_ENUM, "0",
     "1: where UCOLL_SHM_WAY is auto, the shm reduce (root 0) and allreduce rows from 64 KiB "
     "time calls the model's way and another, per operation and size, and take the quicker, the "
     "other tried every 32nd call (every 128th when 1.25x slower); rank 0 measures and every "
     "rank changes way at the same call (at most every 32nd); auto = 1 where every rank has a "
     "processing unit, else 0; 0 (the default) = the model's way; turn = the way changes every "
     "32 calls (tests)",
     OFF(shm_way_adapt), way_adapt_names},
    {"SHM_DUEL", CFG_ENUM, "1",
     "1 (the default): where the model takes the shm row of alltoall or reduce_scatter_block "
     "from 64 KiB (a block; the whole vector; also under a tuning rule naming it without seg= "
     "or radix=), calls are timed through it and through the best "
     "message-based row, per operation and size, and the quicker is taken, the other tried in "
     "runs of 5 calls every 32 (every 128 when 1.25x slower); rank 0 measures and every rank "
     "changes row at the same call; 0 = the model's row; turn = the row changes every 32 calls "
     "(tests)",
     OFF(shm_duel), duel_names},
    {"P2P_SHM", CFG_ENUM, "auto",
     "small point-to-point messages to a peer on this node through a ring in shared memory "
     "mapped by UCX: auto (where UCX can map it), off (all through UCX)",
     OFF(p2p_shm), shm_names},
    {"LIVENESS", CFG_ENUM, "auto",
     "how the death of a peer on this node is found: auto (its process is watched where both "
     "ranks see one pid namespace, over any transport; UCX's peer error handling otherwise), "
     "ucx (UCX's peer error handling for every peer; on one node only TCP offers it, and over "
     "TCP it keeps a rendezvous to active messages on one lane: quicker than UCX's striped "
     "zero-copy one below about 1 MiB, slower above)",
     OFF(liveness), liveness_names},
    ALGO_ROW(BARRIER, "barrier"),
    ALGO_ROW(BCAST, "bcast"),
    ALGO_ROW(REDUCE, "reduce"),
    ALGO_ROW(ALLREDUCE, "allreduce"),
    ALGO_ROW(GATHER, "gather"),
    ALGO_ROW(GATHERV, "gatherv"),
    ALGO_ROW(SCATTER, "scatter"),
    ALGO_ROW(SCATTERV, "scatterv"),
    ALGO_ROW(ALLGATHER, "allgather"),
    ALGO_ROW(ALLGATHERV, "allgatherv"),
    ALGO_ROW(ALLTOALL, "alltoall"),
    ALGO_ROW(ALLTOALLV, "alltoallv"),
    ALGO_ROW(REDUCE_SCATTER_BLOCK, "reduce_scatter_block"),
    ALGO_ROW(REDUCE_SCATTER, "reduce_scatter"),
    ALGO_ROW(SCAN, "scan"),
    ALGO_ROW(EXSCAN, "exscan"),
};

/* The algorithm rows were written in ucoll_coll_t order; keep them so. */
_Static_assert(sizeof(cfg_table) / sizeof(cfg_table[0]) == 28 + UCOLL_COLL_LAST,
               "one ALGO row per collective");

#define NROWS (sizeof(cfg_table) / sizeof(cfg_table[0]))

static const char *type_names[] = {"int", "uint", "size", "bool", "enum", "double", "string"};

int ucoll__parse_size(const char *s, size_t *out_p)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-') {
        return -1;
    }
    switch (tolower((unsigned char)*end)) {
    case 'k':
        v <<= 10;
        end++;
        break;
    case 'm':
        v <<= 20;
        end++;
        break;
    case 'g':
        v <<= 30;
        end++;
        break;
    default: break;
    }
    if (*end == 'b' || *end == 'B') {
        end++;
    }
    if (*end != '\0') {
        return -1;
    }
    *out_p = (size_t)v;
    return 0;
}

static int parse_value(const cfg_row_t *row, const char *s, void *field)
{
    char *end;
    long long iv;
    size_t sz;
    double dv;
    int i;

    switch (row->type) {
    case CFG_INT:
    case CFG_UINT:
        errno = 0;
        iv = strtoll(s, &end, 10);
        if (errno || end == s || *end || (row->type == CFG_UINT && (iv < 0 || iv > 0xffffffffLL)) ||
            (row->type == CFG_INT && (iv < -0x80000000LL || iv > 0x7fffffffLL))) {
            return -1;
        }
        if (row->type == CFG_INT) {
            *(int *)field = (int)iv;
        } else {
            *(unsigned *)field = (unsigned)iv;
        }
        return 0;
    case CFG_SIZE:
        if (ucoll__parse_size(s, &sz)) {
            return -1;
        }
        *(size_t *)field = sz;
        return 0;
    case CFG_BOOL:
        if (!strcmp(s, "1") || !strcasecmp(s, "y") || !strcasecmp(s, "yes") ||
            !strcasecmp(s, "true") || !strcasecmp(s, "on")) {
            *(int *)field = 1;
        } else if (!strcmp(s, "0") || !strcasecmp(s, "n") || !strcasecmp(s, "no") ||
                   !strcasecmp(s, "false") || !strcasecmp(s, "off")) {
            *(int *)field = 0;
        } else {
            return -1;
        }
        return 0;
    case CFG_ENUM:
        for (i = 0; row->values[i]; i++) {
            if (!strcasecmp(s, row->values[i])) {
                *(int *)field = i;
                return 0;
            }
        }
        return -1;
    case CFG_DOUBLE:
        errno = 0;
        dv = strtod(s, &end);
        if (errno || end == s || *end || dv < 0) {
            return -1;
        }
        *(double *)field = dv;
        return 0;
    case CFG_STRING:
        free(*(char **)field);
        *(char **)field = s[0] ? strdup(s) : NULL;
        return 0;
    }
    return -1;
}

/* The numeric value of a parsed row's field (for the range check). */
static double numeric(const cfg_row_t *row, const void *field)
{
    switch (row->type) {
    case CFG_INT: return *(const int *)field;
    case CFG_UINT: return *(const unsigned *)field;
    case CFG_SIZE: return (double)*(const size_t *)field;
    case CFG_DOUBLE: return *(const double *)field;
    default: return 0;
    }
}

static int in_range(const cfg_row_t *row, const void *field)
{
    double v = numeric(row, field);

    return row->hi <= 0 || (row->zero_ok && v == 0) || (v >= row->lo && v <= row->hi);
}

/* UCOLL_<OP>_ALGO must name an algorithm of that operation. */
static int check_algos(const ucoll_config_t *cfg)
{
    char list[512];
    size_t n;

    for (int c = 0; c < UCOLL_COLL_LAST; c++) {
        const char *id = cfg->algo[c];
        if (id == NULL || ucoll__algo_find((ucoll_coll_t)c, id) != NULL) {
            continue;
        }
        n = 0;
        list[0] = '\0';
        for (const ucoll_algo_t *const *a = ucoll__algos((ucoll_coll_t)c); a && *a; a++) {
            n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, " %s",
                                  (*a)->id);
            n = UCOLL_MIN(n, sizeof(list) - 1);
        }
        for (size_t i = 0; i < NROWS; i++) {
            if (cfg_table[i].offset == offsetof(ucoll_config_t, algo[c])) {
                ucoll_error("UCOLL_%s='%s' names no %s algorithm (one of:%s)", cfg_table[i].name,
                            id, ucoll__coll_name((ucoll_coll_t)c), list);
            }
        }
        return UCOLL_ERR_ARG;
    }
    return UCOLL_OK;
}

static void expected(const cfg_row_t *row, char *buf, size_t len)
{
    size_t n = 0;
    int i;

    if (row->type != CFG_ENUM) {
        snprintf(buf, len, "%s", type_names[row->type]);
        return;
    }
    buf[0] = '\0';
    for (i = 0; row->values[i] && n < len; i++) {
        n += snprintf(buf + n, len - n, "%s%s", i ? "|" : "", row->values[i]);
    }
}

int ucoll__config_read(ucoll_config_t *cfg)
{
    char name[128], want[128];
    const char *val;
    char **env;
    size_t i, plen;
    int ok;

    memset(cfg, 0, sizeof(*cfg));
    for (i = 0; i < NROWS; i++) {
        if (parse_value(&cfg_table[i], cfg_table[i].dflt, (char *)cfg + cfg_table[i].offset)) {
            ucoll_error("internal: bad default for UCOLL_%s", cfg_table[i].name);
            return UCOLL_ERR_ARG;
        }
    }
    for (i = 0; i < NROWS; i++) {
        snprintf(name, sizeof(name), "UCOLL_%s", cfg_table[i].name);
        val = getenv(name);
        if (val == NULL) {
            continue;
        }
        if (parse_value(&cfg_table[i], val, (char *)cfg + cfg_table[i].offset)) {
            expected(&cfg_table[i], want, sizeof(want));
            ucoll_error("%s='%s' is not a valid value (expected %s)", name, val, want);
            ucoll__config_release(cfg);
            return UCOLL_ERR_ARG;
        }
        if (!in_range(&cfg_table[i], (char *)cfg + cfg_table[i].offset)) {
            ucoll_error("%s='%s' is out of range (%s)", name, val, cfg_table[i].range);
            ucoll__config_release(cfg);
            return UCOLL_ERR_ARG;
        }
    }
    if (check_algos(cfg) != UCOLL_OK) {
        ucoll__config_release(cfg);
        return UCOLL_ERR_ARG;
    }
    /* warn about typos: UCOLL_* variables that no row declares */
    for (env = environ; *env; env++) {
        if (strncmp(*env, "UCOLL_", 6)) {
            continue;
        }
        /* UCOLL_LIBRARY is the Python package's (which libucoll to load) */
        ok = !strncmp(*env + 6, "LIBRARY=", 8);
        for (i = 0; i < NROWS && !ok; i++) {
            plen = strlen(cfg_table[i].name);
            ok = !strncmp(*env + 6, cfg_table[i].name, plen) && (*env)[6 + plen] == '=';
        }
        if (!ok) {
            ucoll_warn("unknown setting %.*s ignored (ucoll_info -c lists them)",
                       (int)strcspn(*env, "="), *env);
        }
    }
    return UCOLL_OK;
}

void ucoll__config_release(ucoll_config_t *cfg)
{
    size_t i;

    for (i = 0; i < NROWS; i++) {
        if (cfg_table[i].type == CFG_STRING) {
            char **s = (char **)((char *)cfg + cfg_table[i].offset);
            free(*s);
            *s = NULL;
        }
    }
}

static void format_value(const cfg_row_t *row, const void *field, char *buf, size_t len)
{
    switch (row->type) {
    case CFG_INT: snprintf(buf, len, "%d", *(const int *)field); break;
    case CFG_UINT: snprintf(buf, len, "%u", *(const unsigned *)field); break;
    case CFG_SIZE: snprintf(buf, len, "%zu", *(const size_t *)field); break;
    case CFG_BOOL: snprintf(buf, len, "%d", *(const int *)field); break;
    case CFG_ENUM: snprintf(buf, len, "%s", row->values[*(const int *)field]); break;
    case CFG_DOUBLE: snprintf(buf, len, "%g", *(const double *)field); break;
    case CFG_STRING:
        snprintf(buf, len, "%s", *(char *const *)field ? *(char *const *)field : "");
        break;
    }
}

void ucoll__config_print(FILE *out, const ucoll_config_t *cfg)
{
    char want[128], cur[256];
    size_t i;

    for (i = 0; i < NROWS; i++) {
        const cfg_row_t *row = &cfg_table[i];
        expected(row, want, sizeof(want));
        fprintf(out, "UCOLL_%-24s %-22s default '%s'", row->name, want, row->dflt);
        if (cfg) {
            format_value(row, (const char *)cfg + row->offset, cur, sizeof(cur));
            fprintf(out, ", now '%s'", cur);
        }
        fprintf(out, "\n    %s%s%s%s\n", row->help, row->range ? " [" : "",
                row->range ? row->range : "", row->range ? "]" : "");
    }
}

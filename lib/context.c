/*
 * The context: ucoll_init brings up, in order, the settings, the bootstrap,
 * UCX, the point-to-point engine, the collective executor and the world
 * communicator; ucoll_finalize takes them down in reverse.
 */
#include "core.h"
#include "dtype.h"
#include "topo.h"
#include "transport/net.h"
#include "progress/p2p.h"
#include "progress/request.h"
#include "progress/sched.h"
#include "transport/bootstrap.h"
#include "transport/tl.h"
#include "ucoll_version.h"

#include <ctype.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>

const char *ucoll_strerror(int status)
{
    switch (status) {
    case UCOLL_OK: return "success";
    case UCOLL_ERR_ARG: return "invalid argument";
    case UCOLL_ERR_NOMEM: return "out of memory";
    case UCOLL_ERR_TRUNCATE: return "message truncated: longer than the receive buffer";
    case UCOLL_ERR_TRANSPORT: return "transport (UCX) error";
    case UCOLL_ERR_BOOTSTRAP: return "bootstrap error (PMIx, env rendezvous or the caller's allgather)";
    case UCOLL_ERR_TIMEOUT: return "timed out";
    case UCOLL_ERR_PEER: return "peer process failed or is unreachable";
    case UCOLL_ERR_UNSUPPORTED: return "operation not supported";
    case UCOLL_ERR_BUSY: return "operations still in progress on the object";
    default: return "unknown status code";
    }
}

const char *ucoll_version(void)
{
    return UCOLL_VERSION;
}

int ucoll_local_rank(const ucoll_ctx_t *ctx)
{
    return ctx->boot ? ctx->boot->local_rank : 0;
}

int ucoll_local_size(const ucoll_ctx_t *ctx)
{
    return ctx->boot ? ctx->boot->local_size : 1;
}

/* Settings and the state every kind of context shares. */
static int ctx_alloc(ucoll_ctx_t **ctx_p)
{
    ucoll_ctx_t *ctx = calloc(1, sizeof(*ctx));
    int status;

    if (ctx == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    status = ucoll__config_read(&ctx->cfg);
    if (status != UCOLL_OK) {
        free(ctx);
        return status;
    }
    ucoll__log_level = ctx->cfg.log_level;
    ucoll_list_init(&ctx->comms);
    ucoll_list_init(&ctx->req_free);
    ucoll_list_init(&ctx->req_chunks);
    ucoll_list_init(&ctx->shm_active);
    ucoll_list_init(&ctx->shm_parked);
    ucoll_list_init(&ctx->shm_owing);
    *ctx_p = ctx;
    return UCOLL_OK;
}

static void ctx_free(ucoll_ctx_t *ctx)
{
    free(ctx->topo);
    free(ctx->node_of);
    ucoll__req_pool_cleanup(ctx);
    ucoll__config_release(&ctx->cfg);
    free(ctx);
}

/* Free every communicator, the world last. */
static void ctx_free_comms(ucoll_ctx_t *ctx)
{
    ucoll_list_t *pos, *tmp;

    ucoll_list_for_each_safe(pos, tmp, &ctx->comms)
    {
        ucoll_comm_t *comm = ucoll_container_of(pos, ucoll_comm_t, link);
        if (comm != ctx->world) {
            ucoll_debug("communicator %u was not freed by the user; freeing it", comm->id);
            ucoll__comm_destroy(comm);
        }
    }
    if (ctx->world) {
        ucoll__comm_destroy(ctx->world);
        ctx->world = NULL;
    }
}

/* Where this process runs, and the wait mode that suits it. */
static void ctx_topology(ucoll_ctx_t *ctx)
{
    int mode;

    ctx->topo = calloc(1, sizeof(*ctx->topo));
    if (ctx->topo == NULL || ucoll__topo_query(ctx->topo) != UCOLL_OK) {
        if (ctx->cfg.wait_mode == UCOLL_WAIT_AUTO) {
            ctx->cfg.wait_mode = UCOLL_WAIT_YIELD; /* safe when oversubscribed, cheap if not */
        }
        ucoll_debug("no hwloc topology; waiting mode %d", ctx->cfg.wait_mode);
        return;
    }
    /* unknown locality: assume the worst for waiting (yield costs little
     * when nobody else wants the core) */
    mode = ucoll__topo_wait_mode(ctx->topo, ctx->cfg.wait_mode,
                                 ctx->boot->locality_known ? ctx->boot->local_size : INT_MAX);
    if (mode != ctx->cfg.wait_mode) {
        ucoll_info("%d local ranks on %d processing units: waiting in %s mode",
                   ctx->boot->local_size, ctx->topo->npus_machine,
                   mode == UCOLL_WAIT_YIELD ? "yield" : "spin");
        ctx->cfg.wait_mode = mode;
    }
    ucoll_debug("bound to %s, NUMA node %d, %d PUs / %d cores on the machine", ctx->topo->binding,
                ctx->topo->numa_node, ctx->topo->npus_machine, ctx->topo->ncores_machine);
}

/* FNV-1a, for comparing settings between ranks. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;

    for (size_t i = 0; i < n; i++) {
        h = (h ^ c[i]) * 0x100000001b3ULL;
    }
    return h;
}

static uint64_t hash_str(const char *s)
{
    /* unset and empty are the same setting */
    return hash_bytes(0xcbf29ce484222325ULL, s ? s : "", s ? strlen(s) : 0);
}

/* The tuning file by its contents: two nodes may hold different files
 * under one path. */
static uint64_t hash_file(const char *path)
{
    uint64_t h = hash_str(path);
    FILE *f;
    char buf[4096];
    size_t n;

    if (path == NULL || (f = fopen(path, "r")) == NULL) {
        return h;
    }
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        h = hash_bytes(h, buf, n);
    }
    fclose(f);
    return h;
}

#define AGREE_FIXED 12

/* What names this rank's node in the job: the launcher's node id when it
 * told locality (the smallest rank of the node when it gave no id; both
 * are the same for every rank of a node), else a value of this rank alone
 * (no locality: every rank is its own node). */
static uint64_t node_key(const ucoll_boot_t *b)
{
    if (b->locality_known && b->node_id >= 0) {
        return (uint64_t)b->node_id;
    }
    return (1ull << 63) | (uint64_t)b->rank;
}

/* ctx->node_of and ctx->nnodes from the node keys of all ranks (the
 * column 'stride - 1' of all, rank after rank): nodes numbered in the order
 * of their first rank, so every rank computes the same table. */
static int nodes_number(ucoll_ctx_t *ctx, const uint64_t *all, size_t stride)
{
    int n = ctx->size;

    ctx->node_of = malloc(sizeof(int) * (size_t)n);
    if (ctx->node_of == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ctx->nnodes = 0;
    for (int r = 0; r < n; r++) {
        uint64_t key = all[(size_t)r * stride + stride - 1];
        int q = 0;

        while (q < r && all[(size_t)q * stride + stride - 1] != key) {
            q++;
        }
        ctx->node_of[r] = q < r ? ctx->node_of[q] : ctx->nnodes++;
    }
    return UCOLL_OK;
}

/*
 * Every input of algorithm selection must be the same on every rank, or two
 * ranks can choose different algorithms for one call and hang. The settings
 * must agree (a difference fails init on every rank, naming the variable
 * and two ranks); whether a node is oversubscribed is a fact of each node,
 * so the job takes the worst: when any node has more ranks than processing
 * units, every rank's model charges for waking peers.
 */
static int ctx_agree(ucoll_ctx_t *ctx)
{
    enum { N = AGREE_FIXED + UCOLL_COLL_LAST };
    static const char *names[AGREE_FIXED] = {"UCOLL_MODEL_ALPHA",
                                             "UCOLL_MODEL_BETA",
                                             "UCOLL_MODEL_GAMMA",
                                             "UCOLL_MODEL_OVERSUB_ALPHA",
                                             "UCOLL_SEGMENT_SIZE",
                                             "UCOLL_RADIX",
                                             "UCOLL_TUNE_FILE (its contents)",
                                             "UCOLL_SHM",
                                             "UCOLL_SHM_SIZE",
                                             "UCOLL_SHM_WAY",
                                             "UCOLL_SHM_WAY_ADAPT",
                                             "UCOLL_SHM_DUEL"};
    const ucoll_config_t *c = &ctx->cfg;
    uint64_t mine[2 + N], *all;
    int status = UCOLL_OK, k, r;

    mine[0] = ctx->topo && ucoll_local_size(ctx) > ctx->topo->npus_machine;
    mine[1] = hash_bytes(1, &c->model_alpha, sizeof(double));
    mine[2] = hash_bytes(2, &c->model_beta, sizeof(double));
    mine[3] = hash_bytes(3, &c->model_gamma, sizeof(double));
    mine[4] = hash_bytes(4, &c->model_oversub_alpha, sizeof(double));
    mine[5] = hash_bytes(5, &c->seg_size, sizeof(size_t));
    mine[6] = hash_bytes(6, &c->radix, sizeof(unsigned));
    mine[7] = hash_file(c->tune_file);
    /* whether and how a communicator sets up shared memory decides what
     * its collectives send */
    mine[8] = hash_bytes(8, &c->shm, sizeof(int));
    mine[9] = hash_bytes(9, &c->shm_size, sizeof(size_t));
    /* the way of an shm reduction decides its protocol */
    mine[10] = hash_bytes(10, &c->shm_way, sizeof(int));
    mine[11] = hash_bytes(11, &c->shm_way_adapt, sizeof(int));
    /* so does the row of a call that the shm row duels */
    mine[12] = hash_bytes(12, &c->shm_duel, sizeof(int));
    for (k = 0; k < UCOLL_COLL_LAST; k++) {
        mine[1 + AGREE_FIXED + k] = hash_str(c->algo[k]);
    }
    /* not a setting: where this rank lives, for two-level collectives */
    mine[1 + N] = node_key(ctx->boot);
    if (ctx->size == 1) {
        ctx->oversub = (int)mine[0];
        return nodes_number(ctx, mine, 2 + N);
    }
    all = malloc(sizeof(mine) * (size_t)ctx->size);
    if (all == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    status = ucoll__boot_allgather(ctx->boot, mine, sizeof(mine), all);
    if (status != UCOLL_OK) {
        free(all);
        return status;
    }
    ctx->oversub = 0;
    for (r = 0; r < ctx->size; r++) {
        const uint64_t *v = all + (size_t)r * (2 + N);

        ctx->oversub |= v[0] != 0;
        for (k = 0; k < N && status == UCOLL_OK; k++) {
            if (v[1 + k] != all[1 + k]) {
                char var[64];

                if (k < AGREE_FIXED) {
                    snprintf(var, sizeof(var), "%s", names[k]);
                } else {
                    snprintf(var, sizeof(var), "UCOLL_%s_ALGO",
                             ucoll__coll_name((ucoll_coll_t)(k - AGREE_FIXED)));
                    for (char *q = var; *q; q++) {
                        *q = (char)toupper((unsigned char)*q);
                    }
                }
                ucoll_error("%s differs between rank 0 and rank %d: every rank must select "
                            "algorithms alike, so selection settings must be equal on all",
                            var, r);
                status = UCOLL_ERR_ARG;
            }
        }
    }
    if (status == UCOLL_OK) {
        status = nodes_number(ctx, all, 2 + N);
    }
    free(all);
    if (ctx->oversub && !mine[0]) {
        ucoll_debug("another node is oversubscribed: selecting as if this one were");
    }
    return status;
}

/* Everything after the bootstrap: UCX, point to point, the executor and
 * the world. On failure the bootstrap is finalized and ctx freed. */
static int ctx_start(ucoll_ctx_t *ctx)
{
    int status;

    ctx->rank = ctx->boot->rank;
    ctx->size = ctx->boot->size;
    ucoll__log_rank = ctx->rank;
    ucoll_debug("bootstrap %s: rank %d of %d, local %d of %d, node %d", ctx->boot->name, ctx->rank,
                ctx->size, ctx->boot->local_rank, ctx->boot->local_size, ctx->boot->node_id);
    ctx_topology(ctx);
    status = ctx_agree(ctx);
    if (status != UCOLL_OK) {
        goto err_boot;
    }

    status = ucoll__tl_init(ctx);
    if (status != UCOLL_OK) {
        goto err_boot;
    }
    status = ucoll__p2p_init(ctx);
    if (status != UCOLL_OK) {
        goto err_tl;
    }
    ctx->net = &ucoll__net_ucx;
    status = ucoll__exec_init(ctx);
    if (status != UCOLL_OK) {
        goto err_p2p;
    }
    status = ucoll__comm_create_world(ctx);
    if (status != UCOLL_OK) {
        goto err_exec;
    }
    return UCOLL_OK;

err_exec:
    ucoll__exec_cleanup(ctx);
err_p2p:
    ucoll__p2p_cleanup(ctx);
err_tl:
    ucoll__tl_cleanup(ctx);
err_boot:
    ctx->boot->ops->finalize(ctx->boot);
    ctx_free(ctx);
    return status;
}

int ucoll_init(ucoll_ctx_t **ctx_p)
{
    ucoll_ctx_t *ctx;
    int status;

    if (ctx_p == NULL) {
        return UCOLL_ERR_ARG;
    }
    status = ctx_alloc(&ctx);
    if (status != UCOLL_OK) {
        return status;
    }
    status = ucoll__boot_init(&ctx->cfg, &ctx->boot);
    if (status != UCOLL_OK) {
        ctx_free(ctx);
        return status;
    }
    status = ctx_start(ctx);
    if (status == UCOLL_OK) {
        *ctx_p = ctx;
    }
    return status;
}

int ucoll_init_oob(const ucoll_oob_t *oob, ucoll_ctx_t **ctx_p)
{
    ucoll_ctx_t *ctx;
    int status;

    if (ctx_p == NULL || oob == NULL || oob->allgather == NULL || oob->size < 1 ||
        oob->rank < 0 || oob->rank >= oob->size) {
        ucoll_error("ucoll_init_oob: %s",
                    ctx_p == NULL                 ? "ctx is NULL"
                    : oob == NULL                 ? "oob is NULL"
                    : oob->allgather == NULL      ? "oob->allgather is NULL"
                    : oob->size < 1               ? "oob->size must be at least 1"
                                                  : "oob->rank is outside 0..size-1");
        return UCOLL_ERR_ARG;
    }
    status = ctx_alloc(&ctx);
    if (status != UCOLL_OK) {
        return status;
    }
    status = ucoll__boot_oob_create(oob, 0, NULL, &ctx->boot);
    if (status != UCOLL_OK) {
        ctx_free(ctx);
        return status;
    }
    status = ctx_start(ctx);
    if (status == UCOLL_OK) {
        *ctx_p = ctx;
    }
    return status;
}

/*
 * Every rank has finished sending before anyone closes an endpoint. Control
 * messages sent without a request (CTS, FIN, returned credits) may still be
 * queued inside UCX (which queues what it cannot start at once): a peer
 * blocked on one of them would wait forever for a rank that sits in the
 * fence, so the worker is flushed first. The fence is over the
 * ranks not known to have failed: one that waits for a dead rank never ends.
 */
static int ctx_final_fence(ucoll_ctx_t *ctx)
{
    int *live, n, status;

    (void)ucoll__tl_flush(ctx);
    live = malloc((size_t)ctx->size * sizeof(*live));
    if (live == NULL) {
        return ucoll__boot_barrier(ctx->boot);
    }
    n = ucoll__tl_live_ranks(ctx, live);
    if (n < ctx->size) {
        ucoll_debug("final fence over the %d live ranks of %d", n, ctx->size);
    }
    status = ucoll__boot_barrier_live(ctx->boot, live, n);
    free(live);
    return status;
}

int ucoll_finalize(ucoll_ctx_t *ctx)
{
    int status;

    if (ctx == NULL || ctx->boot == NULL) {
        return UCOLL_ERR_ARG;
    }
    ctx->finalizing = 1;
    /* outstanding requests are cancelled while the communicators and runs
     * their callbacks reach still exist, and UCX lets go of their buffers
     * before scratch is freed or finalize returns (their status is seen by
     * nobody: the requests go with the context) */
    ucoll__p2p_quiesce(ctx, UCOLL_ERR_PEER);
    /* a run whose last operation ended during the quiesce (a send that UCX
     * held until its receiver let go) ends now: its request completes and
     * the call's state is freed; a call it would start next fails at once */
    (void)ucoll__exec_progress(ctx);
    ctx_free_comms(ctx);
    /* the runs go now, but their scratch stays until the transport is gone:
     * a send that finalize gave up on may still be read from it by a
     * receiver that takes it late (while the engine's cleanup progresses) */
    ucoll__exec_stop(ctx);
    ucoll__p2p_cleanup(ctx);
    status = ctx_final_fence(ctx);
    ucoll__tl_cleanup(ctx);
    ucoll__exec_cleanup(ctx);
    ctx->boot->ops->finalize(ctx->boot);
    ctx_free(ctx);
    return status;
}

int ucoll__ctx_create_sim(int rank, int size, const ucoll_net_ops_t *net, void *net_priv,
                          ucoll_ctx_t **ctx_p)
{
    ucoll_ctx_t *ctx;
    int status;

    if (rank < 0 || size < 1 || rank >= size || net == NULL) {
        return UCOLL_ERR_ARG;
    }
    status = ctx_alloc(&ctx);
    if (status != UCOLL_OK) {
        return status;
    }
    ctx->rank = rank;
    ctx->size = size;
    ctx->net = net;
    ctx->net_priv = net_priv;
    status = ucoll__exec_init(ctx);
    if (status != UCOLL_OK) {
        goto err_free_ctx;
    }
    status = ucoll__comm_create_world(ctx);
    if (status != UCOLL_OK) {
        goto err_exec;
    }
    *ctx_p = ctx;
    return UCOLL_OK;

err_exec:
    ucoll__exec_cleanup(ctx);
err_free_ctx:
    ctx_free(ctx);
    return status;
}

void ucoll__ctx_destroy_sim(ucoll_ctx_t *ctx)
{
    ctx->finalizing = 1;
    ctx_free_comms(ctx);
    ucoll__exec_cleanup(ctx);
    ctx_free(ctx);
}

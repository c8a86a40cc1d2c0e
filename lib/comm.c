/*
 * Communicators: the world, creation from a rank list (used by split), and
 * the argument checks every entry point shares.
 */
#include "core.h"
#include "algos/algos.h"
#include "progress/p2p.h"
#include "progress/sched.h"
#include "progress/shm.h"
#include "transport/bootstrap.h"

#include <string.h>

ucoll_comm_t *ucoll_comm_world(ucoll_ctx_t *ctx)
{
    return ctx ? ctx->world : NULL;
}

int ucoll_comm_rank(const ucoll_comm_t *comm)
{
    return comm ? comm->rank : UCOLL_ERR_ARG;
}

int ucoll_comm_size(const ucoll_comm_t *comm)
{
    return comm ? comm->size : UCOLL_ERR_ARG;
}

/* Whether comm's members live on more than one node. Every member computes
 * the same answer from the launcher's locality (each member of a node
 * knows the same list of its node's ranks), so selection that depends on it
 * agrees. Without locality every rank is its own node; a simulated context
 * is one node. */
static int spans_nodes(const ucoll_ctx_t *ctx, const ucoll_comm_t *comm)
{
    const ucoll_boot_t *b = ctx->boot;

    if (b == NULL || comm->size == 1) {
        return 0;
    }
    if (!b->locality_known || b->local_peers == NULL) {
        return 1;
    }
    for (int r = 0; r < comm->size; r++) {
        int w = ucoll__comm_world_rank(comm, r), local = 0;

        for (int i = 0; i < b->local_size && !local; i++) {
            local = b->local_peers[i] == w;
        }
        if (!local) {
            return 1;
        }
    }
    return 0;
}

/* Whether comm may run two-level collectives: its members are on two
 * nodes or more and some node holds two of them or more (else one level
 * is all there is). From the agreed node table, so every member answers
 * alike. Ids of the internal communicators are derived from comm's
 * (lib/algos/hier.c), which bounds it. */
static int hier_able(const ucoll_ctx_t *ctx, ucoll_comm_t *comm)
{
    int *members;

    comm->hier_able = 0;
    if (ctx->node_of == NULL || comm->size < 3 || comm->id >= UCOLL_COMM_ID_HIER_MAX) {
        return UCOLL_OK;
    }
    members = calloc((size_t)ctx->nnodes, sizeof(int));
    if (members == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    comm->nodes = comm->node_max = 0;
    for (int r = 0; r < comm->size; r++) {
        int n = ctx->node_of[ucoll__comm_world_rank(comm, r)];

        comm->nodes += members[n]++ == 0;
        comm->node_max = UCOLL_MAX(comm->node_max, members[n]);
    }
    free(members);
    comm->hier_able = comm->nodes > 1 && comm->node_max > 1;
    return UCOLL_OK;
}

/* A communicator of ctx; internal ones (two-level collectives' parts) are
 * not in ctx->comms, leave ctx->next_comm_id alone and never go two-level
 * themselves. */
static int comm_new(ucoll_ctx_t *ctx, uint32_t id, int rank, int size, const int *world_ranks,
                    int internal, ucoll_comm_t **comm_p)
{
    ucoll_comm_t *comm = calloc(1, sizeof(*comm));

    if (comm == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (world_ranks) {
        comm->world = malloc((size_t)size * sizeof(int));
        if (comm->world == NULL) {
            free(comm);
            return UCOLL_ERR_NOMEM;
        }
        memcpy(comm->world, world_ranks, (size_t)size * sizeof(int));
    }
    comm->ctx = ctx;
    comm->id = id;
    comm->rank = rank;
    comm->size = size;
    comm->spans_nodes = spans_nodes(ctx, comm);
    ucoll_list_init(&comm->link);
    if (internal) {
        *comm_p = comm;
        return UCOLL_OK;
    }
    if (hier_able(ctx, comm) != UCOLL_OK) {
        free(comm->world);
        free(comm);
        return UCOLL_ERR_NOMEM;
    }
    ucoll_list_add_tail(&ctx->comms, &comm->link);
    if (id >= ctx->next_comm_id) {
        ctx->next_comm_id = id + 1;
    }
    *comm_p = comm;
    return UCOLL_OK;
}

int ucoll__comm_create(ucoll_ctx_t *ctx, uint32_t id, int rank, int size, const int *world_ranks,
                       ucoll_comm_t **comm_p)
{
    return comm_new(ctx, id, rank, size, world_ranks, 0, comm_p);
}

int ucoll__comm_create_internal(ucoll_ctx_t *ctx, uint32_t id, int rank, int size,
                                const int *world_ranks, ucoll_comm_t **comm_p)
{
    return comm_new(ctx, id, rank, size, world_ranks, 1, comm_p);
}

int ucoll__comm_create_world(ucoll_ctx_t *ctx)
{
    return ucoll__comm_create(ctx, 0, ctx->rank, ctx->size, NULL, &ctx->world);
}

void ucoll__comm_destroy(ucoll_comm_t *comm)
{
    ucoll__hier_destroy(comm);
    ucoll__shm_destroy(comm);
    ucoll__coll_cache_free(comm);
    ucoll_list_del(&comm->link);
    free(comm->world);
    free(comm);
}

int ucoll_comm_free(ucoll_comm_t *comm)
{
    if (comm == NULL || comm == comm->ctx->world) {
        ucoll_debug("ucoll_comm_free: %s", comm ? "the world cannot be freed" : "NULL");
        return UCOLL_ERR_ARG;
    }
    /* an operation under way still reaches the communicator (and writes
     * into its caller's buffers): refuse, and change nothing */
    if (ucoll__p2p_comm_busy(comm) || ucoll__exec_comm_busy(comm) || ucoll__shm_busy(comm) ||
        ucoll__hier_busy(comm)) {
        ucoll_debug("ucoll_comm_free: communicator %u has operations in progress", comm->id);
        return UCOLL_ERR_BUSY;
    }
    ucoll__p2p_comm_drop(comm);
    ucoll__comm_destroy(comm);
    return UCOLL_OK;
}

int ucoll__bad_comm(void)
{
    ucoll_debug("invalid argument: NULL communicator");
    return UCOLL_ERR_ARG;
}

int ucoll__bad_dtype(ucoll_dtype_t dt)
{
    ucoll_debug("invalid argument: datatype %d", (int)dt);
    return UCOLL_ERR_ARG;
}

int ucoll__bad_buf(size_t count, const char *what)
{
    ucoll_debug("invalid argument: %s is NULL with count %zu", what, count);
    return UCOLL_ERR_ARG;
}

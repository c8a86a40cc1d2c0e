/*
 * Communicators: the world, creation from a rank list (used by split), and
 * the argument checks every entry point shares.
 */
#include "core.h"
#include "algos/algos.h"

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

int ucoll__comm_create(ucoll_ctx_t *ctx, uint32_t id, int rank, int size, const int *world_ranks,
                       ucoll_comm_t **comm_p)
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
    ucoll_list_add_tail(&ctx->comms, &comm->link);
    if (id >= ctx->next_comm_id) {
        ctx->next_comm_id = id + 1;
    }
    *comm_p = comm;
    return UCOLL_OK;
}

int ucoll__comm_create_world(ucoll_ctx_t *ctx)
{
    return ucoll__comm_create(ctx, 0, ctx->rank, ctx->size, NULL, &ctx->world);
}

void ucoll__comm_destroy(ucoll_comm_t *comm)
{
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
    ucoll__comm_destroy(comm);
    return UCOLL_OK;
}

int ucoll__check_comm(const ucoll_comm_t *comm)
{
    if (comm == NULL) {
        ucoll_debug("invalid argument: NULL communicator");
        return UCOLL_ERR_ARG;
    }
    return UCOLL_OK;
}

int ucoll__check_dtype(ucoll_dtype_t dt)
{
    if ((unsigned)dt >= UCOLL_DTYPE_LAST) {
        ucoll_debug("invalid argument: datatype %d", (int)dt);
        return UCOLL_ERR_ARG;
    }
    return UCOLL_OK;
}

int ucoll__check_buf(const void *buf, size_t count, const char *what)
{
    if (buf == NULL && count > 0) {
        ucoll_debug("invalid argument: %s is NULL with count %zu", what, count);
        return UCOLL_ERR_ARG;
    }
    return UCOLL_OK;
}

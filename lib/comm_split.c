/*
 * ucoll_comm_split, built on the runtime's own allgather.
 *
 * Every rank of the parent contributes (color, key, next_comm_id). The new
 * communicator of color c gets the id max(next_comm_id over the parent) +
 * the index of c among the distinct non-negative colors, so that all its
 * members agree on it without another round, and every parent rank then
 * moves its next_comm_id past all the ids handed out. Members are ordered
 * by (key, rank in the parent).
 */
#include "core.h"

#include <string.h>

typedef struct {
    int key, rank;
} member_t;

static int member_cmp(const void *a, const void *b)
{
    const member_t *x = a, *y = b;

    if (x->key != y->key) {
        return x->key < y->key ? -1 : 1;
    }
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

int ucoll_comm_split(ucoll_comm_t *comm, int color, int key, ucoll_comm_t **out)
{
    int p, n = 0, ncolors = 0, idx = 0, myrank = -1, st;
    uint32_t mine[3], maxid = 0;
    uint32_t *all;
    int *colors, *world;
    member_t *mem;
    ucoll_ctx_t *ctx;

    if ((st = ucoll__check_comm(comm)) != UCOLL_OK) {
        return st;
    }
    if (out == NULL) {
        ucoll_debug("comm_split: NULL output pointer");
        return UCOLL_ERR_ARG;
    }
    ctx = comm->ctx;
    p = comm->size;
    if (color < 0) {
        color = -1;
    }
    all = malloc(sizeof(uint32_t) * 3 * (size_t)p);
    colors = malloc(sizeof(int) * (size_t)p);
    mem = malloc(sizeof(member_t) * (size_t)p);
    world = malloc(sizeof(int) * (size_t)p);
    if (all == NULL || colors == NULL || mem == NULL || world == NULL) {
        st = UCOLL_ERR_NOMEM;
        goto out;
    }
    mine[0] = (uint32_t)color;
    mine[1] = (uint32_t)key;
    mine[2] = ctx->next_comm_id;
    st = ucoll_allgather(mine, all, 3, UCOLL_UINT32, comm);
    if (st != UCOLL_OK) {
        goto out;
    }
    for (int i = 0; i < p; i++) {
        int c = (int)all[3 * i];
        maxid = UCOLL_MAX(maxid, all[3 * i + 2]);
        if (c >= 0) {
            colors[ncolors++] = c;
        }
        if (c == color && color >= 0) {
            mem[n].key = (int)all[3 * i + 1];
            mem[n].rank = i;
            n++;
        }
    }
    qsort(colors, (size_t)ncolors, sizeof(int), int_cmp);
    {
        int distinct = 0;
        for (int i = 0; i < ncolors; i++) {
            if (i == 0 || colors[i] != colors[i - 1]) {
                if (colors[i] == color) {
                    idx = distinct;
                }
                distinct++;
            }
        }
        ctx->next_comm_id = UCOLL_MAX(ctx->next_comm_id, maxid + (uint32_t)distinct);
    }
    if (color < 0) {
        *out = NULL;
        goto out;
    }
    qsort(mem, (size_t)n, sizeof(member_t), member_cmp);
    for (int i = 0; i < n; i++) {
        world[i] = ucoll__comm_world_rank(comm, mem[i].rank);
        if (mem[i].rank == comm->rank) {
            myrank = i;
        }
    }
    st = ucoll__comm_create(ctx, maxid + (uint32_t)idx, myrank, n, world, out);
    if (st == UCOLL_OK) {
        ucoll_debug("comm_split: color %d key %d -> communicator %u, rank %d of %d", color, key,
                    (*out)->id, myrank, n);
    }
out:
    free(all);
    free(colors);
    free(mem);
    free(world);
    return st;
}

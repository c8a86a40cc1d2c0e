/*
 * The request pool: requests are carved from chunks owned by the context and
 * recycled through a free list, so posting an operation never calls malloc
 * in the steady state. Chunks live until the context is destroyed, which is
 * also what makes a stale handle (a CTS naming a request that failed
 * meanwhile) safe to inspect.
 */
#include "progress/request.h"

#include <stddef.h>
#include <string.h>

#define REQ_CHUNK 256

typedef struct {
    ucoll_list_t link; /* ctx->req_chunks */
    ucoll_req_t reqs[REQ_CHUNK];
} req_chunk_t;

ucoll_req_t *ucoll__req_alloc(ucoll_ctx_t *ctx, ucoll_req_kind_t kind)
{
    req_chunk_t *chunk;
    ucoll_req_t *req;
    int i;

    if (ucoll_list_empty(&ctx->req_free)) {
        chunk = malloc(sizeof(*chunk));
        if (chunk == NULL) {
            return NULL;
        }
        ucoll_list_add_tail(&ctx->req_chunks, &chunk->link);
        for (i = 0; i < REQ_CHUNK; i++) {
            ucoll_list_add_tail(&ctx->req_free, &chunk->reqs[i].link);
            chunk->reqs[i].kind = -1;
        }
    }
    req = ucoll_list_first(&ctx->req_free, ucoll_req_t, link);
    ucoll_list_del(&req->link);
    if (kind == UCOLL_REQ_COLL) {
        /* a collective's request uses the common part and u.coll alone:
         * not zeroing the point-to-point state, two thirds of the request,
         * saves every call of a small collective 30 instructions */
        memset(req, 0, offsetof(ucoll_req_t, u) + sizeof(req->u.coll));
    } else {
        memset(req, 0, sizeof(*req));
    }
    ucoll_list_init(&req->link);
    req->ctx = ctx;
    req->kind = kind;
    ctx->req_outstanding++;
    return req;
}

void ucoll__req_pool_cleanup(ucoll_ctx_t *ctx)
{
    ucoll_list_t *pos, *tmp;

    /* A request still out here never completed: a timed-out call left to
     * end by itself whose send UCX held to the end (its receiver finalized
     * after this rank's finalize stopped waiting for it). The transport is
     * gone by now, so nothing can reach its buffers any more: settle the
     * state its call keeps (fini), as failed, instead of leaking it. */
    ucoll_list_for_each(pos, &ctx->req_chunks)
    {
        req_chunk_t *chunk = ucoll_container_of(pos, req_chunk_t, link);

        for (int i = 0; i < REQ_CHUNK; i++) {
            ucoll_req_t *req = &chunk->reqs[i];

            if (req->kind != -1 && !req->complete && req->fini != NULL) {
                void (*fini)(ucoll_req_t *) = req->fini;

                req->status.error = UCOLL_ERR_PEER;
                req->fini = NULL;
                fini(req);
            }
        }
    }
    ucoll_list_for_each_safe(pos, tmp, &ctx->req_chunks)
    {
        free(ucoll_container_of(pos, req_chunk_t, link));
    }
    ucoll_list_init(&ctx->req_chunks);
    ucoll_list_init(&ctx->req_free);
    ctx->req_outstanding = 0;
}

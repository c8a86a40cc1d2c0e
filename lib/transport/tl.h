/*
 * UCX wiring: the UCP context, the one worker of a ucoll context, worker
 * address exchange through the bootstrap, and endpoints created lazily on
 * first use with peer error handling.
 */
#ifndef UCOLL_TL_H
#define UCOLL_TL_H

#include "core.h"

#include <stdio.h>

/* Create the UCP context (features of the p2p layer + wakeup) and worker,
 * publish the worker address through ctx->boot and, with UCOLL_MODEX=fence,
 * collect every peer's address now (with direct, on first use). Sets
 * ctx->tl on success. */
int ucoll__tl_init(ucoll_ctx_t *ctx);
/* Flush and close endpoints, destroy worker and context. */
void ucoll__tl_cleanup(ucoll_ctx_t *ctx);

/* Complete every operation started on the worker, fire-and-forget control
 * messages included (progress until UCX holds no send, then
 * ucp_worker_flush_nbx, progressed until it completes), so that nothing a
 * peer waits for is still queued inside UCX when this process stops
 * progressing (the final fence). Gives up after a few seconds
 * (a peer that stopped progressing without failing): UCOLL_ERR_TIMEOUT.
 * UCOLL_OK without a UCX context. */
int ucoll__tl_flush(ucoll_ctx_t *ctx);

/* The job ranks not known to have failed, in increasing order, this one
 * included: written to ranks (room for ctx->size), their number returned. */
int ucoll__tl_live_ranks(const ucoll_ctx_t *ctx, int *ranks);

/* Print the UCX transports/devices this context would use (ucoll_info -t). */
void ucoll__tl_describe(ucoll_ctx_t *ctx, FILE *out);

#endif

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

/* Print the UCX transports/devices this context would use (ucoll_info -t). */
void ucoll__tl_describe(ucoll_ctx_t *ctx, FILE *out);

#endif

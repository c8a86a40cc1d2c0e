/*
 * The point-to-point engine over UCX: MPI-style matching on (communicator
 * context id, source, tag) with wildcards and non-overtaking order, eager
 * and rendezvous protocols with credit-based flow control
 * (lib/transport/wire.h), and the UCX-backed net ops used by the
 * collective executor.
 */
#ifndef UCOLL_P2P_H
#define UCOLL_P2P_H

#include "core.h"

/* Set up matching queues and register the active-message handlers on the
 * worker of ctx->tl (ucoll__tl_init first). Sets ctx->p2p. */
int ucoll__p2p_init(ucoll_ctx_t *ctx);

/* Let outstanding sends finish (bounded), drop posted receives and
 * unexpected messages, print the UCOLL_STATS counters, free everything.
 * Endpoints stay open until ucoll__tl_cleanup. Safe when ucoll__p2p_init
 * did not run or failed. */
void ucoll__p2p_cleanup(ucoll_ctx_t *ctx);

#endif

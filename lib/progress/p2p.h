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

/* Packets the active-message handlers refused since init for reason why
 * (UCOLL_WIRE_E*, lib/transport/wire.h), or in all when why is 0. */
uint64_t ucoll__p2p_refused(const ucoll_ctx_t *ctx, int why);

/* ---- for the public calls (lib/p2p.c), arguments already checked ---- */

/* A user request (kind UCOLL_REQ_SEND or UCOLL_REQ_RECV) of bytes to or
 * from comm rank peer (UCOLL_ANY_SOURCE, UCOLL_ANY_TAG allowed for a
 * receive), in the communicator's point-to-point space. NULL: no memory. */
ucoll_req_t *ucoll__p2p_req(ucoll_comm_t *comm, int kind, void *buf, size_t bytes, int peer,
                            int tag);

/* Start a request from ucoll__p2p_req: the send goes out, the receive is
 * matched or posted. It always completes, now or later. */
void ucoll__p2p_start(ucoll_req_t *req);

/* Send a small message at once without a request, if UCX can complete it on
 * the spot and eager credits allow: 1 when sent, 0 when the caller must
 * take the general path (nothing has changed then). */
int ucoll__p2p_send_now(ucoll_comm_t *comm, const void *buf, size_t bytes, int dst, int tag);

/* Wait for a blocking call's request and free it. On UCOLL_ERR_TIMEOUT a
 * receive still posted is withdrawn (nothing will be written to its
 * buffer) and an operation under way is freed when it finishes. */
int ucoll__p2p_wait_blocking(ucoll_req_t *req, ucoll_status_t *status);

#endif

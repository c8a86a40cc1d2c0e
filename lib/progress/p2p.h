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

/*
 * The first step of finalize, while communicators and collective runs still
 * exist: let outstanding sends finish (bounded, as ucoll__p2p_cleanup),
 * then cancel every request still outstanding: posted receives are
 * withdrawn, rendezvous sends stop waiting, UCX operations are cancelled
 * where UCX can and otherwise awaited, and each request completes with
 * status, its callback included. From then on new operations complete at
 * once with status. Returns once UCX holds no buffer of any request (or,
 * after a few seconds, with a warning: those are detached at cleanup, and
 * the executor's no longer complete their run, which finalize frees next;
 * the state of a call they leave unfinished is settled when the context's
 * requests go, ucoll__req_pool_cleanup).
 */
void ucoll__p2p_quiesce(ucoll_ctx_t *ctx, int status);

/* Whether an operation of the engine on comm or one of its internal
 * communicators (a receive posted or being fetched, a send under way or
 * waiting for its receiver) is not complete. */
int ucoll__p2p_comm_busy(const ucoll_comm_t *comm);

/* comm is being freed: drop the messages queued for it that no receive
 * took, giving their senders back what they wait for (eager credits, an
 * answer to a rendezvous announcement, which completes the send); ones that
 * arrive later are dropped the same way on arrival. */
void ucoll__p2p_comm_drop(ucoll_comm_t *comm);

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

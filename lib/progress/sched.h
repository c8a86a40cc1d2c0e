/*
 * Schedules: an algorithm is data, not control flow.
 *
 * An algorithm builds, for its calling rank, a schedule: steps (send,
 * receive, copy, reduce) grouped in rounds, as the textbook describes it.
 * The rounds give the meaning; they are not how the schedule runs. Sealing
 * a schedule turns it into a dependency graph, and the executor starts each
 * step as soon as what it needs is done:
 *
 *  - memory: a step that reads a range waits for the last step that wrote
 *    it; a step that writes a range waits for the steps that read or wrote
 *    it before. So a receive into a fresh segment is posted at once (ahead of
 *    the data), a send of a segment leaves as soon as that segment has
 *    arrived, and a reduction overlaps the next transfer. Within a round the
 *    local steps (copy, reduce) come before its sends and receives, and the
 *    sends and receives of one round never wait for each other, exactly as
 *    when rounds ran one after the other;
 *  - order: the sends to one peer start in schedule order, and so are the
 *    receives from one peer posted, so messages match as written;
 *  - synchronisation: a send or receive of zero bytes carries no data, only
 *    the fact that it happened (barriers): a round holding one runs after
 *    everything before it and before everything after it.
 * Every dependency of the graph is also one of the round-by-round order, so
 * a schedule that completes round by round completes here too. When the
 * memory bookkeeping would grow too large (one range read by very many
 * steps), the schedule runs round by round instead.
 *
 * Relocation. The user's buffers are declared with ucoll__sched_set_bufs and
 * scratch is addressed through ucoll__sched_scratch, which hands out
 * addresses of its own that no user memory can have. Sealing records every
 * pointer as (buffer, offset), so one sealed schedule runs any number of
 * times, on other user buffers and with fresh scratch, each run an
 * instance with its own counters: the thousandth identical call builds
 * nothing (see ucoll__sched_run).
 *
 * Ownership: a schedule started with ucoll__sched_start belongs to the
 * executor, which frees it when it completes. A schedule run with
 * ucoll__sched_run stays the caller's (a cache); ucoll__sched_release drops
 * the caller's hold, and the schedule goes once no run uses it.
 */
#ifndef UCOLL_SCHED_H
#define UCOLL_SCHED_H

#include "core.h"

typedef enum {
    UCOLL_STEP_SEND,
    UCOLL_STEP_RECV,
    UCOLL_STEP_COPY,
    UCOLL_STEP_REDUCE,
    UCOLL_STEP_NOP /* internal: a join point of the dependency graph */
} ucoll_step_kind_t;

typedef struct ucoll_step {
    uint8_t kind;     /* ucoll_step_kind_t */
    uint8_t dt;       /* REDUCE: ucoll_dtype_t */
    uint8_t op;       /* REDUCE: ucoll_op_t */
    int peer;         /* SEND/RECV: comm rank */
    void *dst;        /* RECV/COPY/REDUCE destination */
    const void *src;  /* SEND/COPY source; REDUCE: left operand */
    const void *src2; /* REDUCE: right operand (dst = src op src2) */
    size_t len;       /* SEND/RECV/COPY: bytes; REDUCE: elements */
} ucoll_step_t;

typedef struct ucoll_sched ucoll_sched_t;

/* An empty schedule for collective calls on comm; tag is the sequence
 * number ucoll__sched_start runs it under (ucoll__sched_run takes its own). */
int ucoll__sched_create(ucoll_comm_t *comm, int tag, ucoll_sched_t **sched_p);
/* Free a schedule that was never started (or drop it; see release). */
void ucoll__sched_destroy(ucoll_sched_t *sched);

/* The communicator sched was created for: algorithms read their rank and
 * the size from it (comm->rank, comm->size). */
ucoll_comm_t *ucoll__sched_comm(const ucoll_sched_t *s);

/* Declare the call's user buffers (before building): the send buffer spans
 * sbytes from sbuf, the receive buffer rbytes from rbuf (0 where the
 * buffer means nothing on this rank). Steps that address them can then be
 * rerun on other buffers. Without it, user memory is absolute. */
void ucoll__sched_set_bufs(ucoll_sched_t *s, const void *sbuf, size_t sbytes, const void *rbuf,
                           size_t rbytes);

/* Add a step to the current round. Return UCOLL_OK or UCOLL_ERR_NOMEM.
 * Zero-length sends/receives are still posted: they carry the
 * synchronisation some algorithms need (barriers; see the header comment). */
int ucoll__sched_send(ucoll_sched_t *s, const void *buf, size_t bytes, int peer);
int ucoll__sched_recv(ucoll_sched_t *s, void *buf, size_t bytes, int peer);
int ucoll__sched_copy(ucoll_sched_t *s, void *dst, const void *src, size_t bytes);
/* dst[i] = a[i] op b[i] for count elements; dst may alias a or b. The order
 * matters for non-associative floating point and is kept as written. */
int ucoll__sched_reduce(ucoll_sched_t *s, void *dst, const void *a, const void *b, size_t count,
                        ucoll_dtype_t dt, ucoll_op_t op);
/* Close the current round; further steps go to a new one. Empty rounds are
 * dropped. */
int ucoll__sched_round(ucoll_sched_t *s);

/* Scratch memory living as long as a run of the schedule (64-byte aligned,
 * not zeroed). The address is the schedule's own: valid in steps, never to
 * be dereferenced while building. NULL when out of memory. */
void *ucoll__sched_scratch(ucoll_sched_t *s, size_t bytes);

/* Build the dependency graph (once; ucoll__sched_start and _run seal a
 * schedule that is not sealed yet). UCOLL_ERR_NOMEM on failure. */
int ucoll__sched_seal(ucoll_sched_t *s);
/* Whether a sealed schedule can run on other buffers than those it was
 * built with: every pointer of its steps lies in a declared buffer or in
 * scratch, and the declared buffers do not partly overlap. */
int ucoll__sched_relocatable(const ucoll_sched_t *s);

/* Inspection, for tests and the simulator: the steps as built, by round. */
size_t ucoll__sched_nrounds(const ucoll_sched_t *s);
size_t ucoll__sched_round_nsteps(const ucoll_sched_t *s, size_t round);
const ucoll_step_t *ucoll__sched_round_steps(const ucoll_sched_t *s, size_t round);
/* After sealing: 1 when the schedule runs by its dependency graph, 0 when
 * it fell back to running round by round; and the graph's size (steps,
 * join points included, and edges). */
int ucoll__sched_is_dataflow(const ucoll_sched_t *s);
void ucoll__sched_graph_size(const ucoll_sched_t *s, size_t *nodes_p, size_t *edges_p);

/* Run sched once for the collective request req (kind COLL); req
 * completes when every step has, or with the first error. The executor
 * takes ownership of sched. */
int ucoll__sched_start(ucoll_sched_t *s, ucoll_req_t *req);

/* Run a sealed schedule that the caller keeps, on the buffers sbuf and
 * rbuf (in place of those declared when it was built), under tag; req as
 * for ucoll__sched_start. The schedule must be relocatable unless the
 * buffers are the ones it was built with. */
int ucoll__sched_run(ucoll_sched_t *s, ucoll_req_t *req, const void *sbuf, const void *rbuf,
                     int tag);
/* The caller no longer holds s: it is freed now, or when its last run ends. */
void ucoll__sched_release(ucoll_sched_t *s);
/* Keep s alive for a run to come, as a run does (a queued call that may
 * run it: progress/shm.c's duel), until ucoll__sched_unhold: a release
 * meanwhile frees it only then. */
void ucoll__sched_hold(ucoll_sched_t *s);
void ucoll__sched_unhold(ucoll_sched_t *s);

/* Cancel the schedule run of collective request req: no further step
 * starts, the operations in flight are withdrawn (net->cancel), and req
 * completes with status once the network has let go of every buffer of the
 * run, which may be at once. 0 when req has no run (not started, or served
 * by shared memory), else 1. */
int ucoll__sched_cancel(ucoll_req_t *req, int status);

/* Wait for the request of a blocking collective and free it. When the wait
 * times out (UCOLL_TIMEOUT) the caller has no handle to try again with:
 * the call is cancelled (schedule: ucoll__sched_cancel; shared memory:
 * withdrawn from its queue) and this waits, UCOLL_TIMEOUT again but 5 s at
 * most, until nothing of it can write into the caller's buffers any more.
 * Only if UCX keeps a buffer longer (a send its receiver never takes) is
 * the request left to free itself when it ends, with a warning. Returns
 * UCOLL_ERR_TIMEOUT, or the call's own result if it ended meanwhile. */
int ucoll__coll_wait_blocking(ucoll_req_t *req);

/* Whether a schedule run on comm (or one of its internal communicators)
 * has not finished. */
int ucoll__exec_comm_busy(const ucoll_comm_t *comm);

/* Job rank world has failed: every run on a communicator that holds it
 * (itself or through its parent, ucoll__comm_scope) fails with
 * UCOLL_ERR_PEER, its operations in flight withdrawn, at the next
 * progress, whether or not the run talks to world. */
void ucoll__exec_peer_failed(ucoll_ctx_t *ctx, int world);

/* Run ready schedules; called by ucoll_progress. Returns work done. */
int ucoll__exec_progress(ucoll_ctx_t *ctx);
/* Whether schedules are ready to advance: the executor's state starts with
 * its ready list, so the progress loop can look without a call. */
static inline int ucoll__exec_pending(const ucoll_ctx_t *ctx)
{
    return ctx->exec && !ucoll_list_empty((const ucoll_list_t *)ctx->exec);
}
int ucoll__exec_init(ucoll_ctx_t *ctx);
/* Free any run still going (their requests are not completed: the context
 * is going away), but hold every scratch block, pooled or the runs', until
 * ucoll__exec_cleanup: a send UCX still holds may read one until the
 * transport is gone. */
void ucoll__exec_stop(ucoll_ctx_t *ctx);
/* ucoll__exec_stop if not done, then free the scratch and the executor. */
void ucoll__exec_cleanup(ucoll_ctx_t *ctx);

/* Dry run, for the simulator at scale: local steps are charged to the net's
 * clock (net->local_work) but not executed, and no scratch is allocated:
 * every scratch block is one shared dummy that must never be dereferenced. */
void ucoll__exec_set_dry(ucoll_ctx_t *ctx, int dry);
/* Fill every scratch block with a recognisable byte pattern at the start of
 * each run, so that a schedule that sends data it has not received sends
 * garbage that a test notices. */
void ucoll__exec_set_poison(ucoll_ctx_t *ctx, int poison);

/* A slot for the selection layer's per-context cache (parsed tuning rules).
 * free_fn(state) runs at ucoll__exec_cleanup. */
void *ucoll__exec_sel_state(ucoll_ctx_t *ctx);
void ucoll__exec_set_sel_state(ucoll_ctx_t *ctx, void *state, void (*free_fn)(void *));

#endif

/*
 * Schedules: an algorithm is data, not control flow.
 *
 * An algorithm builds, for its calling rank, a schedule: a list of rounds,
 * each round a list of steps. When a round starts, its local steps (copy,
 * reduce) run first, in the order they were added; then all its sends and
 * receives are posted at once; the next round starts when every send and
 * receive of this round has completed. A schedule holds its own scratch
 * memory. One executor (sched.c) runs every schedule, blocking or not,
 * over ctx->net, so the same algorithm code runs over UCX and in the
 * simulator, and tests can inspect a schedule without any network.
 *
 * Ownership: the executor frees the schedule (and its scratch) when it
 * completes or fails.
 */
#ifndef UCOLL_SCHED_H
#define UCOLL_SCHED_H

#include "core.h"

typedef enum {
    UCOLL_STEP_SEND,
    UCOLL_STEP_RECV,
    UCOLL_STEP_COPY,
    UCOLL_STEP_REDUCE
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

/* An empty schedule for one collective call on comm; tag is that call's
 * sequence number, shared by all its messages. */
int ucoll__sched_create(ucoll_comm_t *comm, int tag, ucoll_sched_t **sched_p);
void ucoll__sched_destroy(ucoll_sched_t *sched);

/* The communicator sched was created for: algorithms read their rank and
 * the size from it (comm->rank, comm->size). */
ucoll_comm_t *ucoll__sched_comm(const ucoll_sched_t *s);

/* Add a step to the current round. Return UCOLL_OK or UCOLL_ERR_NOMEM.
 * Zero-length sends/receives are still posted (they carry the
 * synchronisation some algorithms need, e.g. barriers). */
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

/* Scratch memory living as long as the schedule (64-byte aligned, not
 * zeroed); NULL when out of memory. Drawn from the context's reusable
 * scratch pool. */
void *ucoll__sched_scratch(ucoll_sched_t *s, size_t bytes);

/* Inspection, for tests and the simulator. */
size_t ucoll__sched_nrounds(const ucoll_sched_t *s);
size_t ucoll__sched_round_nsteps(const ucoll_sched_t *s, size_t round);
const ucoll_step_t *ucoll__sched_round_steps(const ucoll_sched_t *s, size_t round);

/* Start executing sched for the collective request req (kind COLL); req
 * completes when the last round completes, or with the first error. The
 * executor takes ownership of sched. */
int ucoll__sched_start(ucoll_sched_t *s, ucoll_req_t *req);

/* Run ready schedules; called by ucoll_progress. Returns work done. */
int ucoll__exec_progress(ucoll_ctx_t *ctx);
/* Whether schedules are ready to advance: the executor's state starts with
 * its ready list, so the progress loop can look without a call. */
static inline int ucoll__exec_pending(const ucoll_ctx_t *ctx)
{
    return ctx->exec && !ucoll_list_empty((const ucoll_list_t *)ctx->exec);
}
int ucoll__exec_init(ucoll_ctx_t *ctx);
/* Free the scratch pool and any schedule still running (their requests are
 * not completed: the context is going away). */
void ucoll__exec_cleanup(ucoll_ctx_t *ctx);

/* Dry run, for the simulator at scale: local steps are charged to the net's
 * clock (net->local_work) but not executed, and ucoll__sched_scratch returns
 * a shared dummy pointer that must never be dereferenced. */
void ucoll__exec_set_dry(ucoll_ctx_t *ctx, int dry);
/* Fill every scratch block with a recognisable byte pattern when handed out,
 * so that a schedule that sends data it has not received sends garbage that
 * a test notices. */
void ucoll__exec_set_poison(ucoll_ctx_t *ctx, int poison);

/* A slot for the selection layer's per-context cache (parsed tuning rules).
 * free_fn(state) runs at ucoll__exec_cleanup. */
void *ucoll__exec_sel_state(ucoll_ctx_t *ctx);
void ucoll__exec_set_sel_state(ucoll_ctx_t *ctx, void *state, void (*free_fn)(void *));

#endif

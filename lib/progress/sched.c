/*
 * Schedules and the collective executor (contract in sched.h).
 *
 * A schedule is one flat array of steps cut into rounds by an index array.
 * Executing a round: run its local steps in order, then post every send and
 * receive through ctx->net. A posted operation's completion callback may run
 * inside the posting call, so the pending count carries one extra reference
 * while posting; callbacks only count down and, at zero, put the schedule on
 * the context's ready list. ucoll__exec_progress (and ucoll__sched_start)
 * drain that list and advance schedules, so completions never recurse into
 * the executor.
 *
 * Errors: the first error (from posting or from a completion) is kept; no
 * further round starts, but the schedule waits until every operation it
 * posted has completed (a receive may still write into scratch or user
 * memory) before it frees itself and completes the request with the error.
 *
 * Scratch comes from a per-context pool of power-of-two size classes, kept
 * across collectives and released by ucoll__exec_cleanup.
 */
#include "progress/sched.h"
#include "progress/net.h"
#include "progress/request.h"
#include "dtype.h"

#include <string.h>

#define SCRATCH_ALIGN   64
#define SCRATCH_CLASSES 48
/* Scratch blocks larger than this are freed rather than pooled. */
#define SCRATCH_POOL_MAX ((size_t)256 << 20)
#define POISON_BYTE      0xa5

typedef struct scratch_hdr {
    ucoll_list_t link; /* in the schedule's list, then in the pool */
    size_t size;       /* usable bytes (the class size) */
    int cls;
    char pad[SCRATCH_ALIGN - sizeof(ucoll_list_t) - sizeof(size_t) - sizeof(int)];
} scratch_hdr_t;

_Static_assert(sizeof(scratch_hdr_t) == SCRATCH_ALIGN, "scratch header keeps alignment");

typedef struct ucoll_exec {
    ucoll_list_t ready;  /* schedules whose round has completed */
    ucoll_list_t active; /* every started schedule */
    ucoll_list_t pool[SCRATCH_CLASSES];
    size_t pool_bytes;
    int draining;
    int dry;
    int poison;
    void *dummy; /* dry-run scratch */
    void *sel_state;
    void (*sel_free)(void *);
} ucoll_exec_t;

_Static_assert(offsetof(ucoll_exec_t, ready) == 0, "ucoll__exec_pending reads the ready list");

struct ucoll_sched {
    ucoll_list_t link;  /* in exec->ready while ready */
    ucoll_list_t alink; /* in exec->active once started */
    ucoll_ctx_t *ctx;   /* kept apart from comm: cleanup may outlive it */
    ucoll_comm_t *comm;
    int tag;
    ucoll_step_t *steps;
    size_t nsteps, steps_cap;
    size_t *rounds; /* rounds[i] = index of round i's first step */
    size_t nrounds, rounds_cap;
    ucoll_list_t scratch;
    ucoll_req_t *req;
    size_t cur;  /* next round to run */
    int pending; /* posted operations not yet completed (+1 while posting) */
    int error;
    int on_ready;
    int started;
};

/* ---- building ----------------------------------------------------------- */

int ucoll__sched_create(ucoll_comm_t *comm, int tag, ucoll_sched_t **sched_p)
{
    ucoll_sched_t *s = calloc(1, sizeof(*s));

    if (s == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    s->ctx = comm->ctx;
    s->comm = comm;
    s->tag = tag;
    ucoll_list_init(&s->link);
    ucoll_list_init(&s->alink);
    ucoll_list_init(&s->scratch);
    *sched_p = s;
    return UCOLL_OK;
}

static void scratch_release(ucoll_exec_t *ex, scratch_hdr_t *h)
{
    if (h->cls >= SCRATCH_CLASSES || ex->pool_bytes + h->size > SCRATCH_POOL_MAX) {
        free(h);
        return;
    }
    ucoll_list_add_head(&ex->pool[h->cls], &h->link);
    ex->pool_bytes += h->size;
}

void ucoll__sched_destroy(ucoll_sched_t *s)
{
    ucoll_exec_t *ex = s->ctx->exec;
    ucoll_list_t *pos, *tmp;

    ucoll_list_for_each_safe(pos, tmp, &s->scratch)
    {
        scratch_hdr_t *h = ucoll_container_of(pos, scratch_hdr_t, link);
        ucoll_list_del(pos);
        scratch_release(ex, h);
    }
    ucoll_list_del(&s->link);
    ucoll_list_del(&s->alink);
    free(s->steps);
    free(s->rounds);
    free(s);
}

static int sched_open_round(ucoll_sched_t *s)
{
    size_t *r;

    if (s->nrounds > 0 && s->rounds[s->nrounds - 1] == s->nsteps) {
        return UCOLL_OK; /* the current round is still empty */
    }
    if (s->nrounds == s->rounds_cap) {
        size_t cap = s->rounds_cap ? 2 * s->rounds_cap : 8;
        r = realloc(s->rounds, cap * sizeof(*r));
        if (r == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        s->rounds = r;
        s->rounds_cap = cap;
    }
    s->rounds[s->nrounds++] = s->nsteps;
    return UCOLL_OK;
}

static ucoll_step_t *sched_add(ucoll_sched_t *s, int kind)
{
    ucoll_step_t *st;

    if (s->nrounds == 0 && sched_open_round(s) != UCOLL_OK) {
        return NULL;
    }
    if (s->nsteps == s->steps_cap) {
        size_t cap = s->steps_cap ? 2 * s->steps_cap : 16;
        st = realloc(s->steps, cap * sizeof(*st));
        if (st == NULL) {
            return NULL;
        }
        s->steps = st;
        s->steps_cap = cap;
    }
    st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = (uint8_t)kind;
    return st;
}

int ucoll__sched_send(ucoll_sched_t *s, const void *buf, size_t bytes, int peer)
{
    ucoll_step_t *st = sched_add(s, UCOLL_STEP_SEND);

    if (st == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    st->src = buf;
    st->len = bytes;
    st->peer = peer;
    return UCOLL_OK;
}

int ucoll__sched_recv(ucoll_sched_t *s, void *buf, size_t bytes, int peer)
{
    ucoll_step_t *st = sched_add(s, UCOLL_STEP_RECV);

    if (st == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    st->dst = buf;
    st->len = bytes;
    st->peer = peer;
    return UCOLL_OK;
}

int ucoll__sched_copy(ucoll_sched_t *s, void *dst, const void *src, size_t bytes)
{
    ucoll_step_t *st;

    if (bytes == 0 || dst == src) {
        return UCOLL_OK;
    }
    st = sched_add(s, UCOLL_STEP_COPY);
    if (st == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    st->dst = dst;
    st->src = src;
    st->len = bytes;
    return UCOLL_OK;
}

int ucoll__sched_reduce(ucoll_sched_t *s, void *dst, const void *a, const void *b, size_t count,
                        ucoll_dtype_t dt, ucoll_op_t op)
{
    ucoll_step_t *st;

    if (count == 0) {
        return UCOLL_OK;
    }
    st = sched_add(s, UCOLL_STEP_REDUCE);
    if (st == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    st->dst = dst;
    st->src = a;
    st->src2 = b;
    st->len = count;
    st->dt = (uint8_t)dt;
    st->op = (uint8_t)op;
    return UCOLL_OK;
}

int ucoll__sched_round(ucoll_sched_t *s)
{
    return sched_open_round(s);
}

static int size_class(size_t bytes)
{
    int c = 0;

    while (((size_t)1 << c) < bytes) {
        c++;
    }
    return c;
}

void *ucoll__sched_scratch(ucoll_sched_t *s, size_t bytes)
{
    ucoll_exec_t *ex = s->ctx->exec;
    scratch_hdr_t *h;
    int cls;

    if (ex->dry) {
        return ex->dummy;
    }
    cls = size_class(bytes < SCRATCH_ALIGN ? SCRATCH_ALIGN : bytes);
    if (cls < SCRATCH_CLASSES && !ucoll_list_empty(&ex->pool[cls])) {
        h = ucoll_list_first(&ex->pool[cls], scratch_hdr_t, link);
        ucoll_list_del(&h->link);
        ex->pool_bytes -= h->size;
    } else {
        size_t size = (cls < SCRATCH_CLASSES) ? ((size_t)1 << cls) : bytes;
        h = aligned_alloc(SCRATCH_ALIGN,
                          sizeof(*h) + ((size + SCRATCH_ALIGN - 1) & ~(size_t)(SCRATCH_ALIGN - 1)));
        if (h == NULL) {
            ucoll_error("out of memory for %zu bytes of collective scratch", bytes);
            return NULL;
        }
        h->size = size;
        h->cls = cls;
    }
    ucoll_list_add_tail(&s->scratch, &h->link);
    if (ex->poison) {
        memset(h + 1, POISON_BYTE, bytes);
    }
    return h + 1;
}

size_t ucoll__sched_nrounds(const ucoll_sched_t *s)
{
    return (s->nrounds > 0 && s->rounds[s->nrounds - 1] == s->nsteps) ? s->nrounds - 1 : s->nrounds;
}

size_t ucoll__sched_round_nsteps(const ucoll_sched_t *s, size_t round)
{
    size_t end = (round + 1 < s->nrounds) ? s->rounds[round + 1] : s->nsteps;
    return end - s->rounds[round];
}

const ucoll_step_t *ucoll__sched_round_steps(const ucoll_sched_t *s, size_t round)
{
    return &s->steps[s->rounds[round]];
}

/* ---- execution ---------------------------------------------------------- */

static void sched_op_done(void *arg, int status)
{
    ucoll_sched_t *s = arg;

    if (status != UCOLL_OK && s->error == UCOLL_OK) {
        s->error = status;
    }
    if (--s->pending == 0 && !s->on_ready) {
        ucoll_exec_t *ex = s->ctx->exec;
        s->on_ready = 1;
        ucoll_list_add_tail(&ex->ready, &s->link);
    }
}

static void sched_run_local(ucoll_sched_t *s, const ucoll_step_t *st, size_t n)
{
    ucoll_ctx_t *ctx = s->ctx;
    ucoll_exec_t *ex = ctx->exec;

    for (size_t i = 0; i < n; i++) {
        if (st[i].kind == UCOLL_STEP_COPY) {
            if (ctx->net->local_work) {
                ctx->net->local_work(ctx, st[i].len, 0);
            }
            if (!ex->dry) {
                memmove(st[i].dst, st[i].src, st[i].len);
            }
        } else if (st[i].kind == UCOLL_STEP_REDUCE) {
            if (ctx->net->local_work) {
                ctx->net->local_work(ctx, st[i].len * ucoll_dtype_size(st[i].dt), 1);
            }
            if (!ex->dry) {
                ucoll__reduce(st[i].dst, st[i].src, st[i].src2, st[i].len, st[i].dt, st[i].op);
            }
        }
    }
}

/* Post the round's sends and receives; the caller holds one pending
 * reference, so no callback can make the schedule ready meanwhile. */
static void sched_post(ucoll_sched_t *s, const ucoll_step_t *st, size_t n)
{
    const ucoll_net_ops_t *net = s->ctx->net;
    int status;

    for (size_t i = 0; i < n && s->error == UCOLL_OK; i++) {
        if (st[i].kind == UCOLL_STEP_SEND) {
            s->pending++;
            status =
                net->isend(s->comm, st[i].src, st[i].len, st[i].peer, s->tag, sched_op_done, s);
        } else if (st[i].kind == UCOLL_STEP_RECV) {
            s->pending++;
            status =
                net->irecv(s->comm, st[i].dst, st[i].len, st[i].peer, s->tag, sched_op_done, s);
        } else {
            continue;
        }
        if (status != UCOLL_OK) {
            /* a failed post never calls back */
            s->pending--;
            s->error = status;
            ucoll_debug("collective tag %d on comm %u: posting to peer %d failed: %s", s->tag,
                        s->comm->id, st[i].peer, ucoll_strerror(status));
        }
    }
}

static void sched_finish(ucoll_sched_t *s)
{
    ucoll_req_t *req = s->req;
    int error = s->error;

    if (error != UCOLL_OK) {
        ucoll_debug("collective tag %d on comm %u failed: %s", s->tag, s->comm->id,
                    ucoll_strerror(error));
    }
    ucoll__sched_destroy(s);
    if (req) {
        req->u.coll.sched = NULL;
        ucoll__req_complete(req, error);
    }
}

/* Advance s, whose previous round has completed, as far as it can go. */
static void sched_advance(ucoll_sched_t *s)
{
    size_t nrounds = ucoll__sched_nrounds(s);

    while (s->pending == 0) {
        const ucoll_step_t *st;
        size_t n;

        if (s->error != UCOLL_OK || s->cur >= nrounds) {
            sched_finish(s);
            return;
        }
        st = ucoll__sched_round_steps(s, s->cur);
        n = ucoll__sched_round_nsteps(s, s->cur);
        s->cur++;
        sched_run_local(s, st, n);
        s->pending = 1;
        sched_post(s, st, n);
        s->pending--;
    }
}

static int exec_drain(ucoll_exec_t *ex)
{
    int count = 0;

    if (ex->draining) {
        return 0;
    }
    ex->draining = 1;
    while (!ucoll_list_empty(&ex->ready)) {
        ucoll_sched_t *s = ucoll_list_first(&ex->ready, ucoll_sched_t, link);
        ucoll_list_del(&s->link);
        s->on_ready = 0;
        sched_advance(s);
        count++;
    }
    ex->draining = 0;
    return count;
}

int ucoll__sched_start(ucoll_sched_t *s, ucoll_req_t *req)
{
    ucoll_exec_t *ex = s->ctx->exec;

    s->req = req;
    if (req) {
        req->u.coll.sched = s;
    }
    s->started = 1;
    s->on_ready = 1;
    ucoll_list_add_tail(&ex->active, &s->alink);
    ucoll_list_add_tail(&ex->ready, &s->link);
    exec_drain(ex);
    return UCOLL_OK;
}

int ucoll__exec_progress(ucoll_ctx_t *ctx)
{
    ucoll_exec_t *ex = ctx->exec;

    if (ex == NULL || ucoll_list_empty(&ex->ready)) {
        return 0;
    }
    return exec_drain(ex);
}

int ucoll__exec_init(ucoll_ctx_t *ctx)
{
    ucoll_exec_t *ex = calloc(1, sizeof(*ex));

    if (ex == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ex->dummy = aligned_alloc(SCRATCH_ALIGN, SCRATCH_ALIGN);
    if (ex->dummy == NULL) {
        free(ex);
        return UCOLL_ERR_NOMEM;
    }
    ucoll_list_init(&ex->ready);
    ucoll_list_init(&ex->active);
    for (int i = 0; i < SCRATCH_CLASSES; i++) {
        ucoll_list_init(&ex->pool[i]);
    }
    ctx->exec = ex;
    return UCOLL_OK;
}

void ucoll__exec_cleanup(ucoll_ctx_t *ctx)
{
    ucoll_exec_t *ex = ctx->exec;
    ucoll_list_t *pos, *tmp;

    if (ex == NULL) {
        return;
    }
    ucoll_list_for_each_safe(pos, tmp, &ex->active)
    {
        ucoll_sched_t *s = ucoll_container_of(pos, ucoll_sched_t, alink);
        ucoll_debug("freeing collective tag %d still running at cleanup", s->tag);
        if (s->req) {
            s->req->u.coll.sched = NULL;
        }
        ucoll__sched_destroy(s);
    }
    for (int i = 0; i < SCRATCH_CLASSES; i++) {
        ucoll_list_for_each_safe(pos, tmp, &ex->pool[i])
        {
            ucoll_list_del(pos);
            free(ucoll_container_of(pos, scratch_hdr_t, link));
        }
    }
    if (ex->sel_free && ex->sel_state) {
        ex->sel_free(ex->sel_state);
    }
    free(ex->dummy);
    free(ex);
    ctx->exec = NULL;
}

void ucoll__exec_set_dry(ucoll_ctx_t *ctx, int dry)
{
    ctx->exec->dry = dry;
}

void ucoll__exec_set_poison(ucoll_ctx_t *ctx, int poison)
{
    ctx->exec->poison = poison;
}

void *ucoll__exec_sel_state(ucoll_ctx_t *ctx)
{
    return ctx->exec->sel_state;
}

void ucoll__exec_set_sel_state(ucoll_ctx_t *ctx, void *state, void (*free_fn)(void *))
{
    ctx->exec->sel_state = state;
    ctx->exec->sel_free = free_fn;
}

ucoll_comm_t *ucoll__sched_comm(const ucoll_sched_t *s)
{
    return s->comm;
}

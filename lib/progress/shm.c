/*
 * Shared-memory regions of a communicator and the engine of the ops that
 * run through them (contract and protocol in shm.h).
 */
#include "progress/shm.h"
#include "progress/request.h"
#include "progress/sched.h"
#include "transport/tl_shm.h"
#include "transport/ucx.h"

#include <string.h>

/* What a rank tells the others about its region (the setup's allgather). */
typedef struct shm_slot {
    uint32_t ok;       /* 1: mapped, the rest is valid */
    uint32_t rkey_len; /* bytes of rkey */
    uint64_t addr;     /* the region's address in its owner */
    uint64_t size;     /* its bytes (equal on all: ucoll__shm_size is agreed) */
    char rkey[];
} shm_slot_t;

_Static_assert(sizeof(shm_slot_t) == 24, "slot header");

/* Polls of a waiting op between two looks at the members' liveness. */
#define FAIL_CHECK_EVERY 256

/* sh on none of its context's lists, on the polled ones (ops queued), or
 * parked (its first op waits for a run of messages only). */
static void sh_unlist(ucoll_shm_t *sh)
{
    if (sh->active || sh->parked) {
        ucoll_list_del(&sh->link);
    }
    sh->active = sh->parked = 0;
}
static void sh_activate(ucoll_shm_t *sh)
{
    if (!sh->active) {
        sh_unlist(sh);
        sh->active = 1;
        ucoll_list_add_tail(&sh->comm->ctx->shm_active, &sh->link);
    }
}
static void sh_park(ucoll_shm_t *sh)
{
    if (!sh->parked) {
        sh_unlist(sh);
        sh->parked = 1;
        ucoll_list_add_tail(&sh->comm->ctx->shm_parked, &sh->link);
    }
}

ucoll_shm_t *ucoll__shm_get(ucoll_comm_t *comm)
{
    ucoll_shm_t *sh = comm->shm;

    if (sh != NULL) {
        return sh;
    }
    sh = calloc(1, sizeof(*sh));
    if (sh == NULL) {
        return NULL;
    }
    sh->comm = comm;
    sh->state = UCOLL_SHM_NONE;
    sh->rank = comm->rank;
    sh->p = comm->size;
    ucoll_list_init(&sh->ops);
    ucoll_list_init(&sh->free_ops);
    ucoll_list_init(&sh->link);
    comm->shm = sh;
    return sh;
}

/* Whether every member of comm is on this node, by the bootstrap's
 * locality (a context without it sees only itself there). */
static int all_local(const ucoll_comm_t *comm)
{
    const ucoll_ctx_t *ctx = comm->ctx;

    for (int r = 0; r < comm->size; r++) {
        if (!ctx->tl->peers[ucoll__comm_world_rank(comm, r)].local) {
            return 0;
        }
    }
    return 1;
}

/*
 * The data area: UCOLL_SHM_SIZE, or by default 1 MiB, and 4 MiB where ranks
 * outnumber processing units on some node (ctx->oversub, agreed by the job,
 * so every member maps the same size and selection sees the same area).
 * There every piece of a pipeline waits for descheduled ranks, so fewer,
 * larger pieces (and more of them in flight) win; with a core per rank the
 * pieces of 4 MiB regions leave the cache. Measured, 2 cores, 3-5
 * alternations: at p = 4 against 1 MiB, alltoall 512 KiB-4 MiB took
 * 0.76-0.87x the time, reduce_scatter_block 2-4 MiB 0.66-0.75x, allgather
 * 2-4 MiB 0.71-0.78x, reduce 1-4 MiB 0.65-0.86x, allreduce 64 KiB-2 MiB
 * 0.67-0.96x, bcast (same 128 KiB pieces) 2-4 MiB 0.58-0.66x, smaller
 * sizes within noise; at p = 2, 2 and 4 MiB took reduce 1-4 MiB 1.3-1.4x.
 */
size_t ucoll__shm_size(const ucoll_ctx_t *ctx)
{
    if (ctx->cfg.shm_size != 0) {
        return ctx->cfg.shm_size;
    }
    return ctx->oversub ? (size_t)4 << 20 : (size_t)1 << 20;
}

void ucoll__shm_prepare(ucoll_shm_t *sh, void *slot)
{
    ucoll_ctx_t *ctx = sh->comm->ctx;
    /* the data area is a power of two by default, so that its halves, quarters
     * and eighths (the pieces of the algorithms) are powers of two when it
     * is one, and a power-of-two message goes in whole pieces, not in
     * whole ones plus a last one of a few bytes that costs a round of
     * flags of its own; the control line and the trailer come on top, the
     * trailer's words aligned */
    size_t data = (ucoll__shm_size(ctx) + 63) & ~(size_t)63, klen;
    size_t size = data + UCOLL_SHM_DATA_OFF + UCOLL_SHM_TRAILER;
    shm_slot_t *me = slot;
    const void *rkey;
    uint64_t *ctl;

    memset(slot, 0, UCOLL_SHM_SLOT);
    if (!ucoll__tl_shm_capable(ctx) || !all_local(sh->comm)) {
        ucoll_debug("comm %u: no shared memory here (%s)", sh->comm->id,
                    !ucoll__tl_shm_capable(ctx) ? "no shared-memory transport"
                                                : "members on other nodes");
        return;
    }
    sh->base = calloc((size_t)sh->p, sizeof(*sh->base));
    sh->keys = calloc((size_t)sh->p, sizeof(*sh->keys));
    if (sh->base == NULL || sh->keys == NULL ||
        ucoll__tl_shm_map(ctx, size, &sh->mine) != UCOLL_OK) {
        return; /* enable(0) frees the arrays */
    }
    rkey = ucoll__tl_shm_rkey(sh->mine, &klen);
    if (klen > UCOLL_SHM_SLOT - sizeof(*me)) {
        ucoll_debug("comm %u: packed key of %zu bytes does not fit the setup record", sh->comm->id,
                    klen);
        return;
    }
    sh->base[sh->rank] = ucoll__tl_shm_addr(sh->mine);
    sh->data_size = size - UCOLL_SHM_DATA_OFF - UCOLL_SHM_TRAILER;
    for (int k = 0; k < UCOLL_SHM_ADAPT_STREAM_KINDS; k++) {
        /* streaming everywhere until rank 0 has measured */
        atomic_store_explicit(ucoll__shm_trailer(sh, sh->rank, k), ~(uint64_t)0,
                              memory_order_relaxed);
    }
    for (int k = UCOLL_SHM_ADAPT_STREAM_KINDS; k < UCOLL_SHM_ADAPT_KINDS; k++) {
        for (int c = 0; c < UCOLL_SHM_ADAPT_CLASSES; c++) { /* no round's way yet */
            atomic_store_explicit(ucoll__shm_way_word(sh, sh->rank, k, c), 0, memory_order_relaxed);
        }
    }
    for (int k = 0; k < UCOLL_SHM_DUEL_KINDS; k++) {
        for (int c = 0; c < UCOLL_SHM_ADAPT_CLASSES; c++) {
            atomic_store_explicit(ucoll__shm_duel_word(sh, sh->rank, k, c), 0,
                                  memory_order_relaxed);
        }
    }
    /* nothing done yet: "done with call 0". The peers read it only after the
     * setup's exchanges, which order this store before their loads. */
    ctl = (uint64_t *)(void *)sh->base[sh->rank];
    atomic_store_explicit((_Atomic uint64_t *)ctl, ucoll__shm_end(0), memory_order_release);
    me->ok = 1;
    me->rkey_len = (uint32_t)klen;
    me->addr = (uint64_t)(uintptr_t)sh->base[sh->rank];
    me->size = size;
    memcpy(me->rkey, rkey, klen);
}

int ucoll__shm_attach(ucoll_shm_t *sh, const void *slots)
{
    ucoll_ctx_t *ctx = sh->comm->ctx;
    const shm_slot_t *mine =
        (const shm_slot_t *)((const char *)slots + (size_t)sh->rank * UCOLL_SHM_SLOT);

    if (!mine->ok || sh->mine == NULL) {
        return 0;
    }
    for (int r = 0; r < sh->p; r++) {
        const shm_slot_t *o =
            (const shm_slot_t *)((const char *)slots + (size_t)r * UCOLL_SHM_SLOT);
        void *ptr;
        int st;

        if (r == sh->rank) {
            continue;
        }
        if (!o->ok || o->size != mine->size || o->rkey_len > UCOLL_SHM_SLOT - sizeof(*o)) {
            ucoll_debug("comm %u: rank %d has no shared region for us", sh->comm->id, r);
            return 0;
        }
        st = ucoll__tl_shm_attach(ctx, ucoll__comm_world_rank(sh->comm, r), o->rkey, o->addr, &ptr,
                                  &sh->keys[r]);
        if (st != UCOLL_OK) {
            ucoll_debug("comm %u: cannot map rank %d's region: %s", sh->comm->id, r,
                        ucoll_strerror(st));
            return 0;
        }
        sh->base[r] = ptr;
    }
    return 1;
}

/* Give back what prepare and attach took. */
static void shm_release(ucoll_shm_t *sh)
{
    ucoll_ctx_t *ctx = sh->comm->ctx;

    for (int r = 0; sh->keys && r < sh->p; r++) {
        ucoll__tl_shm_detach(sh->keys[r]);
    }
    if (sh->mine) {
        ucoll__tl_shm_unmap(ctx, sh->mine);
    }
    free(sh->keys);
    free(sh->base);
    sh->keys = NULL;
    sh->base = NULL;
    sh->mine = NULL;
}

void ucoll__shm_enable(ucoll_shm_t *sh, int on)
{
    if (on && sh->base != NULL) {
        sh->state = UCOLL_SHM_ON;
        return;
    }
    shm_release(sh);
    sh->state = UCOLL_SHM_OFF;
}

void ucoll__shm_destroy(ucoll_comm_t *comm)
{
    ucoll_shm_t *sh = comm->shm;
    ucoll_list_t *pos, *tmp;

    if (sh == NULL) {
        return;
    }
    if (sh->setup && sh->setup_free) {
        sh->setup_free(sh->setup);
    }
    sh_unlist(sh);
    if (sh->owing) {
        ucoll_list_del(&sh->owe_link);
    }
    if (sh->owed != 0 && sh->base != NULL) {
        ucoll__shm_pay(sh); /* a peer's call after the last may wait for it */
    }
    ucoll_list_for_each_safe(pos, tmp, &sh->ops)
    {
        ucoll_shm_op_t *op = ucoll_container_of(pos, ucoll_shm_op_t, link);
        ucoll_debug("comm %u: dropping shared-memory call %llu still queued", comm->id,
                    (unsigned long long)op->seq);
        if (op->duel == UCOLL_SHM_DUEL_UNDECIDED) {
            ucoll__sched_unhold(op->u.duel.rival);
        } else if (op->duel == UCOLL_SHM_DUEL_RIVAL) {
            op->req->fini = NULL; /* its run ends it; op goes now */
        }
        free(op);
    }
    ucoll_list_for_each_safe(pos, tmp, &sh->free_ops)
    {
        free(ucoll_container_of(pos, ucoll_shm_op_t, link));
    }
    shm_release(sh);
    free(sh);
    comm->shm = NULL;
}

ucoll_shm_op_t *ucoll__shm_op_get(ucoll_shm_t *sh, ucoll_req_t *req)
{
    ucoll_shm_op_t *op;

    if (!ucoll_list_empty(&sh->free_ops)) {
        op = ucoll_list_first(&sh->free_ops, ucoll_shm_op_t, link);
        ucoll_list_del(&op->link);
        memset(op, 0, offsetof(ucoll_shm_op_t, u)); /* u: set where used */
    } else {
        op = calloc(1, sizeof(*op));
        if (op == NULL) {
            return NULL;
        }
    }
    op->sh = sh;
    op->req = req;
    return op;
}

void ucoll__shm_stream_adapt(ucoll_shm_op_t *op, int kind, size_t bytes)
{
    ucoll_shm_adapt_t *ad;
    int cls, c, follow;

    if (op->stream_min == 0 || bytes < op->stream_min) {
        return;
    }
    cls = UCOLL_MIN(63 - __builtin_clzll((unsigned long long)bytes), UCOLL_SHM_ADAPT_CLASSES - 1);
    ad = &op->sh->adapt[kind][cls];
    follow = kind != UCOLL_SHM_ADAPT_BCAST && op->sh->rank != 0;
    if (follow) {
        uint64_t w =
            atomic_load_explicit(ucoll__shm_trailer(op->sh, 0, kind), memory_order_relaxed);

        ad->best = (uint8_t)((w >> cls) & 1);
    }
    c = ucoll__shm_adapt_pick(ad);
    if (c == 0) {
        op->stream_min = 0;
    }
    if (c < 0 || follow) {
        return; /* not timed here */
    }
    op->adapt = ad;
    op->adapt_kind = kind;
    op->adapt_cls = cls;
    op->streamed = c;
    op->adapt_bytes = bytes;
}

int ucoll__shm_way_adapt(ucoll_shm_t *sh, int kind, size_t bytes, int turn, ucoll_shm_adapt_t **adp)
{
    int cls =
        UCOLL_MIN(63 - __builtin_clzll((unsigned long long)bytes), UCOLL_SHM_ADAPT_CLASSES - 1);
    ucoll_shm_adapt_t *ad = &sh->adapt[kind][cls];
    uint32_t n = ad->calls;
    int c = ucoll__shm_way_pick(ad, sh->rank == 0, ucoll__shm_way_word(sh, 0, kind, cls), turn);

    /* timed: the first calls, and in each round its try and the
     * UCOLL_SHM_ADAPT_KEEP calls after it, enough for the choice in the
     * middle of the round; the others cost no clock and no record (rank
     * 0's look at the records reads a line from every other rank) */
    *adp = c >= 0 && (n < 2 + 2 * UCOLL_SHM_ADAPT_KEEP ||
                      n % UCOLL_SHM_ADAPT_TRY <= UCOLL_SHM_ADAPT_KEEP)
               ? ad
               : NULL;
    return c;
}

void ucoll__shm_op_timed(ucoll_shm_op_t *op, ucoll_shm_adapt_t *ad, int c, size_t bytes)
{
    op->adapt = ad;
    op->adapt_kind = UCOLL_SHM_ADAPT_REDUCE; /* a way, not streaming: see op_finish */
    op->adapt_cls = 0;
    op->streamed = c;
    op->adapt_bytes = bytes;
    op->t0 = ucoll__tl_now_ns(); /* at its first poll (ucoll__shm_way_adapt) */
}

static void timed_end(ucoll_shm_t *sh, ucoll_shm_adapt_t *ad, int c, size_t bytes, uint64_t t0,
                      int status);

/* The duelled call op has ended with status through row way (1 the shm
 * row, 0 the rival): where timed, its record (timed_end): rank 0 takes
 * the collective's time, from the last rank's start to the last rank's
 * end, not its own, which at p = 4 on 2 cores measured the ranks' arrival
 * more than the row (128 KiB alltoall with the CPUs close: 110-240 us
 * either row, where the shm row took 64 us a call and the rival 120). */
static void duel_record(ucoll_shm_op_t *op, int way, int status)
{
    if (op->u.duel.ad != NULL) {
        timed_end(op->sh, op->u.duel.ad, way, op->count * op->esize, op->u.duel.t0, status);
    }
}

/* The rival of a duelled call has completed its request (the request's
 * fini). Inside the op's own poll (a run that ended in its start), the
 * poll ends the op; otherwise the op, first in the queue, goes now, so
 * that the communicator holds nothing once the call is complete (a
 * ucoll_comm_free right after it), and the ops queued behind it are
 * polled again. */
static void duel_rival_done(ucoll_req_t *req)
{
    ucoll_shm_op_t *op = req->fini_arg;
    ucoll_shm_t *sh = op->sh;

    req->fini_arg = NULL;
    duel_record(op, 0, req->status.error);
    if (op->duel == UCOLL_SHM_DUEL_RIVAL_START) {
        op->duel = UCOLL_SHM_DUEL_RIVAL_DONE;
        return;
    }
    ucoll_list_del(&op->link);
    ucoll_list_add_head(&sh->free_ops, &op->link);
    if (ucoll_list_empty(&sh->ops)) {
        sh_unlist(sh);
    } else {
        sh_activate(sh);
    }
}

/* A duelled op's poll until it has its row, then while the rival runs. */
static int duel_poll(ucoll_shm_op_t *op)
{
    ucoll_shm_t *sh = op->sh;
    ucoll_sched_t *rival = op->u.duel.rival;
    ucoll_req_t *req = op->req;
    int c, cls, st, timed;

    if (op->duel == UCOLL_SHM_DUEL_RIVAL) {
        /* nothing here to poll until the run ends (duel_rival_done) */
        sh_park(sh);
        return UCOLL_SHM_AGAIN;
    }
    /* every earlier shared-memory call of the communicator has ended here */
    cls = UCOLL_MIN(63 - __builtin_clzll((unsigned long long)(op->count * op->esize)),
                    UCOLL_SHM_ADAPT_CLASSES - 1);
    c = ucoll__shm_duel_pick(op->u.duel.ad, sh->rank == 0,
                             ucoll__shm_duel_word(sh, 0, op->u.duel.kind, cls), op->u.duel.turn,
                             &timed);
    if (!timed) {
        op->u.duel.ad = NULL;
    }
    op->u.duel.rival = NULL;
    op->u.duel.t0 = ucoll__tl_now_ns();
    ucoll_debug("comm %u: call %llu (%s, %zu bytes) duelled: %s", sh->comm->id,
                (unsigned long long)op->seq,
                op->u.duel.kind == UCOLL_SHM_DUEL_ALLTOALL ? "alltoall" : "reduce_scatter_block",
                op->count * op->esize, c != 0 ? "shm" : "rival");
    if (c != 0) { /* the shm row: from here on, its own poll */
        ucoll__sched_unhold(rival);
        op->duel = op->u.duel.ad ? UCOLL_SHM_DUEL_SHM_TIMED : UCOLL_SHM_DUEL_SHM;
        op->poll = op->u.duel.poll;
        if (op->u.duel.stream) {
            ucoll__shm_stream_adapt(op, UCOLL_SHM_ADAPT_ALLTOALL, op->count * op->esize);
            op->t0 = op->u.duel.t0;
        }
        return op->poll(op);
    }
    /* the rival, on the call's request; this call's part of the shared
     * memory is done (the rival writes in no region), so its end goes out
     * now, and the op stays queued until the request completes: the calls
     * after it start only then (see ucoll__shm_duel_arm) */
    op->duel = UCOLL_SHM_DUEL_RIVAL_START;
    ucoll__shm_post(sh, ucoll__shm_end(op->seq));
    req->fini = duel_rival_done;
    req->fini_arg = op;
    st = ucoll__sched_run(rival, req, op->sbuf, op->rbuf, op->u.duel.tag);
    ucoll__sched_unhold(rival);
    if (st != UCOLL_OK) {
        req->fini = NULL;
        req->fini_arg = NULL;
        op->duel = UCOLL_SHM_DUEL_NONE; /* op_finish completes the request */
        return st;
    }
    if (op->duel == UCOLL_SHM_DUEL_RIVAL_DONE) {
        return UCOLL_OK; /* the run ended in its start */
    }
    /* nothing here to poll until the run ends (duel_rival_done): the
     * communicator leaves the polled ones, so that waits drive UCX alone,
     * as for any message-based call (while polled, UCX had a pass in four
     * and the rival took up to 2x its time) */
    op->duel = UCOLL_SHM_DUEL_RIVAL;
    sh_park(sh);
    return UCOLL_SHM_AGAIN;
}

void ucoll__shm_duel_arm(ucoll_shm_op_t *op, int kind, ucoll_sched_t *rival, int tag, int turn,
                         int stream)
{
    size_t bytes = op->count * op->esize;
    int cls =
        UCOLL_MIN(63 - __builtin_clzll((unsigned long long)bytes), UCOLL_SHM_ADAPT_CLASSES - 1);

    ucoll__sched_hold(rival);
    op->duel = UCOLL_SHM_DUEL_UNDECIDED;
    op->u.duel.kind = kind;
    op->u.duel.turn = turn;
    op->u.duel.stream = stream;
    op->u.duel.ad = &op->sh->duel[kind][cls];
    op->u.duel.poll = op->poll;
    op->u.duel.rival = rival;
    op->u.duel.tag = tag;
    op->poll = duel_poll;
}

/* Rank 0: the time of timed reduction sh->way_last from every rank's
 * record, into its measurement (ucoll__shm_way_adapt). A record that is
 * not the call's (a rank whose call failed) drops the measurement. */
static void way_collect(ucoll_shm_t *sh)
{
    uint32_t m = sh->way_last.m;
    uint64_t b = 0, e = 0;

    for (int r = 0; r < sh->p; r++) {
        ucoll_shm_way_rec_t *rec = ucoll__shm_way_rec(sh, r, m);
        uint64_t t0, t1;

        if (atomic_load_explicit(&rec->m, memory_order_acquire) != (uint64_t)m + 1) {
            return;
        }
        t0 = atomic_load_explicit(&rec->t0, memory_order_relaxed);
        t1 = atomic_load_explicit(&rec->t1, memory_order_relaxed);
        b = UCOLL_MAX(b, t0);
        e = UCOLL_MAX(e, t1);
    }
    if (e > b) {
        ucoll__shm_adapt_record(sh->way_last.ad, sh->way_last.c,
                                (float)(e - b) / (float)sh->way_last.bytes);
    }
}

/* A timed call (a reduction whose way is chosen, or a duelled call) has
 * ended here with status, taking way c of ad (bytes; it began at t0, its
 * first poll): its record into the trailer; at rank 0, the time of the
 * one before taken, and this one kept for the next. */
static void timed_end(ucoll_shm_t *sh, ucoll_shm_adapt_t *ad, int c, size_t bytes, uint64_t t0,
                      int status)
{
    uint32_t m = sh->way_timed++;
    ucoll_shm_way_rec_t *rec = ucoll__shm_way_rec(sh, sh->rank, m);

    if (status == UCOLL_OK) {
        atomic_store_explicit(&rec->t0, t0, memory_order_relaxed);
        atomic_store_explicit(&rec->t1, ucoll__tl_now_ns(), memory_order_relaxed);
        atomic_store_explicit(&rec->m, (uint64_t)m + 1, memory_order_release);
    }
    if (sh->rank != 0) {
        return;
    }
    if (sh->way_last.ad != NULL && status == UCOLL_OK) {
        way_collect(sh);
    }
    sh->way_last.ad = status == UCOLL_OK ? ad : NULL;
    sh->way_last.m = m;
    sh->way_last.c = c;
    sh->way_last.bytes = bytes;
}

static void way_finish(ucoll_shm_op_t *op, int status)
{
    timed_end(op->sh, op->adapt, op->streamed, op->adapt_bytes, op->t0, status);
}

/* A duelled op is over: through the shm row, its time kept (rank 0),
 * and 0 returned, for op_finish to go on; through the rival, the record
 * back to the list, the request left to its run (completed already, or
 * ending by itself: a member dead), and 1 returned. */
static __attribute__((noinline)) int duel_finish(ucoll_shm_op_t *op, int status)
{
    ucoll_shm_t *sh = op->sh;

    switch (op->duel) {
    case UCOLL_SHM_DUEL_SHM_TIMED: duel_record(op, 1, status); return 0;
    case UCOLL_SHM_DUEL_UNDECIDED: /* failed before its first poll */
        ucoll__sched_unhold(op->u.duel.rival);
        return 0;
    case UCOLL_SHM_DUEL_RIVAL: /* a member dead: the run ends by itself */
        op->req->fini = NULL;
        op->req->fini_arg = NULL;
        /* fall through */
    case UCOLL_SHM_DUEL_RIVAL_DONE: ucoll_list_add_head(&sh->free_ops, &op->link); return 1;
    default: return 0;
    }
}

/* The op is over: its record back to the list, then its request completed
 * (a callback may start the next op and reuse the record). */
static void op_finish(ucoll_shm_op_t *op, int status)
{
    ucoll_shm_t *sh = op->sh;
    ucoll_req_t *req = op->req;

    if (ucoll_unlikely(op->duel != UCOLL_SHM_DUEL_NONE) && duel_finish(op, status)) {
        return;
    }
    if (op->adapt != NULL && op->adapt_kind >= UCOLL_SHM_ADAPT_STREAM_KINDS) {
        way_finish(op, status);
    } else if (op->adapt != NULL && status == UCOLL_OK) {
        ucoll__shm_adapt_record(op->adapt, op->streamed,
                                (float)(ucoll__tl_now_ns() - op->t0) / (float)op->adapt_bytes);
        if (op->adapt_kind == UCOLL_SHM_ADAPT_ALLGATHER ||
            op->adapt_kind == UCOLL_SHM_ADAPT_ALLTOALL) { /* rank 0: for the others to read */
            _Atomic uint64_t *w = ucoll__shm_trailer(sh, sh->rank, op->adapt_kind);
            uint64_t bit = (uint64_t)1 << op->adapt_cls;
            uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
            uint64_t nv = op->adapt->best ? v | bit : v & ~bit;

            if (nv != v) { /* else the line stays in the readers' caches */
                atomic_store_explicit(w, nv, memory_order_relaxed);
            }
        }
    }
    if (status != UCOLL_OK) {
        ucoll_debug("comm %u: shared-memory call %llu failed: %s", sh->comm->id,
                    (unsigned long long)op->seq, ucoll_strerror(status));
    }
    ucoll_list_add_head(&sh->free_ops, &op->link);
    ucoll__req_complete(req, status);
}

/* Withdraw req's op from the communicators on list (see ucoll__shm_cancel). */
static int cancel_in(ucoll_list_t *list, ucoll_req_t *req, int status)
{
    ucoll_list_t *pos, *opos;

    ucoll_list_for_each(pos, list)
    {
        ucoll_shm_t *sh = ucoll_container_of(pos, ucoll_shm_t, link);

        ucoll_list_for_each(opos, &sh->ops)
        {
            ucoll_shm_op_t *op = ucoll_container_of(opos, ucoll_shm_op_t, link);

            if (op->req == req) {
                ucoll_list_del(&op->link);
                sh->dead = 1;
                op_finish(op, status);
                return 1;
            }
        }
    }
    return 0;
}

int ucoll__shm_cancel(ucoll_req_t *req, int status)
{
    /* a parked communicator's queue too: a call behind a duelled one */
    return cancel_in(&req->ctx->shm_active, req, status) ||
           cancel_in(&req->ctx->shm_parked, req, status);
}

/* Poll op. An op that took no small place pays the end of the call
 * before it, if owed (ucoll__shm_owe_end), after its poll: a small one
 * handles it in its first poll (ucoll__shm_small_place), and ops that took
 * a place owe their own end after theirs. */
static inline int op_poll(ucoll_shm_op_t *op)
{
    int st = op->poll(op);

    if (ucoll_unlikely(op->sh->owed != 0) && op->place == 0) {
        ucoll__shm_pay(op->sh);
    }
    return st;
}

void ucoll__shm_pay_all(ucoll_ctx_t *ctx)
{
    while (!ucoll_list_empty(&ctx->shm_owing)) {
        ucoll_shm_t *sh = ucoll_list_first(&ctx->shm_owing, ucoll_shm_t, owe_link);

        ucoll_list_del(&sh->owe_link);
        sh->owing = 0;
        if (sh->owed != 0) {
            ucoll__shm_pay(sh);
        }
    }
}

void ucoll__shm_op_start(ucoll_shm_op_t *op)
{
    ucoll_shm_t *sh = op->sh;
    int st;

    op->seq = ++sh->seq;
    if (ucoll_list_empty(&sh->ops)) {
        if (op->adapt != NULL) {
            op->t0 = ucoll__tl_now_ns();
        }
        st = op_poll(op);
        if (st != UCOLL_SHM_AGAIN) {
            op_finish(op, st);
            return;
        }
    }
    ucoll_list_add_tail(&sh->ops, &op->link);
    if (!sh->parked) {
        sh_activate(sh);
    }
}

/* A member the liveness watch, an endpoint error or another rank's report
 * (lib/progress/p2p.c, DOWN) has found dead. */
static int member_failed(const ucoll_shm_t *sh)
{
    const ucoll_comm_t *scope = ucoll__comm_scope(sh->comm);
    ucoll_ctx_t *ctx = scope->ctx;

    /* of an internal communicator: any member of its parent, because the
     * parent's call that this op is part of has failed everywhere else */
    for (int r = 0; r < scope->size; r++) {
        if (r != scope->rank && ucoll__tl_failed(ctx, ucoll__comm_world_rank(scope, r))) {
            return 1;
        }
    }
    return 0;
}

/* Advance sh's ops in order; returns how many completed. */
static int shm_drive(ucoll_shm_t *sh)
{
    int n = 0;

    while (!ucoll_list_empty(&sh->ops)) {
        ucoll_shm_op_t *op = ucoll_list_first(&sh->ops, ucoll_shm_op_t, link);
        uint64_t k = op->k;
        int phase = op->phase, cur = op->cur;
        int st;

        if (op->adapt != NULL && op->t0 == 0) {
            op->t0 = ucoll__tl_now_ns(); /* its first poll: the calls before it are done */
        }
        st = op_poll(op);

        if (st == UCOLL_SHM_AGAIN) {
            if (op->k != k || op->phase != phase || op->cur != cur) {
                /* a piece moved: the waits that sleep must not take a
                 * long op for an idle one (lib/progress/wait.c) */
                sh->comm->ctx->shm_moved++;
            }
            if (!sh->dead &&
                ((++sh->polls % FAIL_CHECK_EVERY) != 0 || !(sh->dead = member_failed(sh)))) {
                break;
            }
            /* a member is gone: an op still waiting may wait for it, and
             * would never complete (one that can complete still does) */
            st = UCOLL_ERR_PEER;
        }
        ucoll_list_del(&op->link);
        op_finish(op, st);
        n++;
    }
    return n;
}

int ucoll__shm_progress(ucoll_ctx_t *ctx)
{
    ucoll_list_t *pos, *tmp;
    int n = 0;

    ucoll_list_for_each_safe(pos, tmp, &ctx->shm_active)
    {
        ucoll_shm_t *sh = ucoll_container_of(pos, ucoll_shm_t, link);

        n += shm_drive(sh);
        if (ucoll_list_empty(&sh->ops)) {
            sh_unlist(sh);
        }
    }
    return n;
}

/*
 * Shared-memory collectives: a communicator's setup, the calls that wait
 * for it, and what the shared-memory rows (<op>/shm.c) share.
 *
 * Setup. The first call on a communicator that may run through shared
 * memory (its operation has a shared-memory row, and the call is not forced
 * to a message-based row that can serve it) sets the communicator up,
 * without blocking, unless UCOLL_SHM=off or it has one rank:
 *   1. each rank maps its region when it can (a shared-memory transport,
 *      every member on this node by the bootstrap's locality) and
 *      describes it, or that it has none, in a fixed-size record
 *      (progress/shm.c: ucoll__shm_prepare);
 *   2. an allgather of the records (ring), after which each rank asks UCX
 *      for a pointer to every peer's region (ucoll__shm_attach);
 *   3. an allreduce (recursive doubling, MIN) of "I have them all", so
 *      shared memory is on for all members or for none: two members that
 *      chose differently would wait for each other forever.
 * The two exchanges take two sequence numbers before the call's own, on
 * every rank alike, and run on the executor like any collective; the call
 * that started the setup and every later call that may use shared memory
 * wait (deferred, each with its sequence number) and start, in call order,
 * when the setup ends: through shared memory if it is on, else as if it had
 * never been tried. Nothing here depends on what one rank alone knows, so
 * every member defers, and later selects, alike. Calls that cannot use
 * shared memory (a forced message-based row, other operations) go on
 * meanwhile.
 */
#include "algos/algos.h"
#include "progress/request.h"
#include "progress/shm.h"

#include <string.h>

/* A call waiting for the setup. */
typedef struct shm_deferred {
    ucoll_list_t link;
    ucoll_coll_args_t a;
    ucoll_req_t *req;
    uint32_t tag;
} shm_deferred_t;

typedef struct shm_setup {
    ucoll_comm_t *comm;
    char *slots;        /* every member's record, in comm rank order */
    uint32_t ok;        /* this rank attached every peer */
    uint32_t agreed;    /* MIN of ok */
    uint32_t tag2;      /* sequence number of the allreduce */
    ucoll_req_t *req;   /* the exchange in flight */
    ucoll_list_t calls; /* deferred, in call order */
} shm_setup_t;

static uint32_t next_tag(uint32_t tag)
{
    return tag >= UCOLL_TAG_UB ? 0 : tag + 1;
}

size_t ucoll__shm_data_size(const ucoll_ctx_t *ctx)
{
    return ucoll__shm_size(ctx); /* the region adds its control line (progress/shm.c) */
}

/* Whether selection may take a shared-memory row for the call: its
 * operation has one, and the call is not forced to another row that can
 * serve it (a forced row that cannot serve falls back to the model, which
 * may take shared memory: such a call must wait for the setup too, or a
 * rank whose setup ended and one whose setup still runs would select
 * differently). */
static int may_use_shm(const ucoll_comm_t *comm, const ucoll_coll_args_t *a)
{
    const ucoll_algo_t *const *reg = ucoll__algos(a->coll);
    const char *forced = comm->ctx->cfg.algo[a->coll];
    const ucoll_algo_t *al;
    int has = 0;

    for (; reg && *reg && !has; reg++) {
        has = ((*reg)->flags & UCOLL_ALGO_SHM) != 0;
    }
    if (!has) {
        return 0;
    }
    if (forced == NULL || forced[0] == '\0') {
        return 1;
    }
    al = ucoll__algo_find(a->coll, forced);
    return al == NULL || (al->flags & UCOLL_ALGO_SHM) ||
           (al->can_serve != NULL && !al->can_serve(a, comm->size));
}

static void setup_free(void *arg)
{
    shm_setup_t *su = arg;
    ucoll_list_t *pos, *tmp;

    if (su->req) {
        su->req->cb = NULL; /* the exchange's run is dropped with the context */
    }
    ucoll_list_for_each_safe(pos, tmp, &su->calls)
    {
        free(ucoll_container_of(pos, shm_deferred_t, link));
    }
    free(su->slots);
    free(su);
}

/* The setup is over on this rank: shared memory on or off, then the calls
 * that waited, in call order. */
static void setup_finish(shm_setup_t *su, int on)
{
    ucoll_comm_t *comm = su->comm;
    ucoll_shm_t *sh = comm->shm;

    ucoll__shm_enable(sh, on);
    sh->setup = NULL;
    ucoll_debug("comm %u: shared-memory collectives %s", comm->id, on ? "on" : "off");
    while (!ucoll_list_empty(&su->calls)) {
        shm_deferred_t *d = ucoll_list_first(&su->calls, shm_deferred_t, link);
        int st;

        ucoll_list_del(&d->link);
        d->req->u.coll.withdraw = NULL;
        st = ucoll__coll_run(comm, &d->a, d->req, d->tag);
        if (st != UCOLL_OK) {
            ucoll_debug("%s after the shared-memory setup: %s", ucoll__coll_name(d->a.coll),
                        ucoll_strerror(st));
            ucoll__req_complete(d->req, st);
        }
        free(d);
    }
    free(su->slots);
    free(su);
}

static void setup_gathered(ucoll_req_t *req);
static void setup_agreed(ucoll_req_t *req);

/* Start one exchange of the setup under tag: the allgather of the records
 * (gather) or the allreduce of ok. Fixed rows, whatever is forced or
 * tuned: every member runs the same. */
static int setup_exchange(shm_setup_t *su, int gather, uint32_t tag)
{
    ucoll_comm_t *comm = su->comm;
    ucoll_coll_args_t a = {0};
    ucoll_algo_params_t prm = {0};
    const ucoll_algo_t *al;
    ucoll_sched_t *s;
    ucoll_req_t *req;
    int st;

    if (gather) {
        a.coll = UCOLL_COLL_ALLGATHER;
        a.rbuf = su->slots;
        a.sbuf = su->slots + (size_t)comm->rank * UCOLL_SHM_SLOT;
        a.in_place = 1;
        a.count = UCOLL_SHM_SLOT;
        a.dt = UCOLL_BYTE;
        a.esize = 1;
        a.root = -1;
        al = ucoll__algo_find(UCOLL_COLL_ALLGATHER, "ring");
    } else {
        a.coll = UCOLL_COLL_ALLREDUCE;
        a.sbuf = &su->ok;
        a.rbuf = &su->agreed;
        a.count = 1;
        a.dt = UCOLL_UINT32;
        a.op = UCOLL_MIN;
        a.esize = sizeof(uint32_t);
        al = ucoll__algo_find(UCOLL_COLL_ALLREDUCE, "rdbl");
    }
    ucoll__model_default(&prm.model);
    req = ucoll__req_alloc(comm->ctx, UCOLL_REQ_COLL);
    if (req == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    req->cb = gather ? setup_gathered : setup_agreed;
    req->cb_arg = su;
    st = ucoll__sched_create(comm, (int)tag, &s);
    if (st != UCOLL_OK) {
        goto err_req;
    }
    st = al->build(s, &a, &prm);
    if (st == UCOLL_OK) {
        su->req = req;
        st = ucoll__sched_start(s, req); /* may call back before it returns */
    }
    if (st != UCOLL_OK) {
        su->req = NULL;
        ucoll__sched_destroy(s);
        goto err_req;
    }
    return UCOLL_OK;

err_req:
    ucoll__req_release(req);
    return st;
}

static void setup_gathered(ucoll_req_t *req)
{
    shm_setup_t *su = req->cb_arg;
    int st = req->status.error;

    su->req = NULL;
    ucoll__req_release(req);
    /* a failed allgather still takes part in the allreduce, which the
     * others run whatever happened here */
    su->ok = st == UCOLL_OK && ucoll__shm_attach(su->comm->shm, su->slots);
    st = setup_exchange(su, 0, su->tag2);
    if (st != UCOLL_OK) {
        ucoll_error("comm %u: shared-memory setup: %s", su->comm->id, ucoll_strerror(st));
        setup_finish(su, 0);
    }
}

static void setup_agreed(ucoll_req_t *req)
{
    shm_setup_t *su = req->cb_arg;
    int st = req->status.error;

    su->req = NULL;
    ucoll__req_release(req);
    if (st != UCOLL_OK) {
        ucoll_debug("comm %u: shared-memory agreement: %s", su->comm->id, ucoll_strerror(st));
    }
    setup_finish(su, st == UCOLL_OK && su->agreed == 1);
}

/* Begin comm's setup (state NONE): OFF at once where no member can share
 * memory by the settings alone, else PENDING with the exchanges started. */
static int setup_start(ucoll_comm_t *comm, ucoll_shm_t *sh)
{
    ucoll_ctx_t *ctx = comm->ctx;
    shm_setup_t *su;
    uint32_t tag;
    int st;

    if (ctx->cfg.shm == UCOLL_SHM_MODE_OFF || comm->size == 1 || ctx->tl == NULL) {
        sh->state = UCOLL_SHM_OFF;
        ucoll_debug("comm %u: shared-memory collectives off (%s)", comm->id,
                    ctx->cfg.shm == UCOLL_SHM_MODE_OFF ? "UCOLL_SHM=off"
                    : comm->size == 1                  ? "one rank"
                                                       : "simulated network");
        return UCOLL_OK;
    }
    su = calloc(1, sizeof(*su));
    if (su == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    su->slots = calloc((size_t)comm->size, UCOLL_SHM_SLOT);
    if (su->slots == NULL) {
        free(su);
        return UCOLL_ERR_NOMEM;
    }
    su->comm = comm;
    ucoll_list_init(&su->calls);
    ucoll__shm_prepare(sh, su->slots + (size_t)comm->rank * UCOLL_SHM_SLOT);
    tag = comm->coll_seq;
    su->tag2 = next_tag(tag);
    comm->coll_seq = next_tag(su->tag2);
    sh->setup = su;
    sh->setup_free = setup_free;
    sh->state = UCOLL_SHM_PENDING;
    st = setup_exchange(su, 1, tag);
    if (st != UCOLL_OK) {
        /* the others may be exchanging already: this communicator's
         * collectives cannot be trusted any more */
        ucoll_error("comm %u: cannot start the shared-memory setup: %s", comm->id,
                    ucoll_strerror(st));
        sh->setup = NULL;
        setup_free(su);
        ucoll__shm_enable(sh, 0);
        return st;
    }
    return UCOLL_OK;
}

/* A deferred call whose blocking wait timed out: it leaves the queue and
 * never starts (its sequence number stays taken, so later calls still pair
 * with the other ranks'). */
static void deferred_withdraw(ucoll_req_t *req, int status)
{
    shm_deferred_t *d = req->u.coll.withdraw_arg;

    ucoll_list_del(&d->link);
    free(d);
    req->u.coll.withdraw = NULL;
    req->u.coll.withdraw_arg = NULL;
    ucoll__req_complete(req, status);
}

int ucoll__shm_coll_gate(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t *req,
                         int *deferred_p)
{
    ucoll_shm_t *sh = comm->shm;
    shm_deferred_t *d;
    int st;

    *deferred_p = 0;
    if (ucoll_likely(sh != NULL && sh->state >= UCOLL_SHM_ON)) {
        return UCOLL_OK; /* settled */
    }
    if (!may_use_shm(comm, a)) {
        return UCOLL_OK;
    }
    if (sh == NULL && (sh = ucoll__shm_get(comm)) == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (sh->state == UCOLL_SHM_NONE && (st = setup_start(comm, sh)) != UCOLL_OK) {
        return st;
    }
    if (sh->state != UCOLL_SHM_PENDING) {
        return UCOLL_OK; /* off, or the setup already ended */
    }
    d = malloc(sizeof(*d));
    if (d == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    d->a = *a;
    d->req = req;
    d->tag = comm->coll_seq;
    comm->coll_seq = next_tag(d->tag);
    ucoll_list_add_tail(&((shm_setup_t *)sh->setup)->calls, &d->link);
    req->u.coll.withdraw = deferred_withdraw;
    req->u.coll.withdraw_arg = d;
    ucoll_debug("comm %u: %s waits for the shared-memory setup", comm->id,
                ucoll__coll_name(a->coll));
    *deferred_p = 1;
    return UCOLL_OK;
}

ucoll_shm_op_t *ucoll__shm_op_new(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t *req,
                                  ucoll_shm_poll_t poll)
{
    ucoll_shm_op_t *op = ucoll__shm_op_get(comm->shm, req);

    if (op == NULL) {
        return NULL;
    }
    op->poll = poll;
    op->sbuf = a->sbuf;
    op->rbuf = a->rbuf;
    op->count = a->count;
    op->esize = a->esize;
    op->dt = a->dt;
    op->op = a->op;
    op->root = a->root;
    op->in_place = a->in_place;
    op->iov = a->iov;
    op->niov = a->niov;
    op->stream_min = 0;
    return op;
}

size_t ucoll__shm_piece(const ucoll_algo_params_t *prm, size_t deflt, size_t unit)
{
    size_t data = prm->shm_data, piece = prm->seg_size ? prm->seg_size : deflt;

    piece = UCOLL_MIN(piece, data);
    piece -= piece % unit;
    return UCOLL_MAX(piece, unit);
}

double ucoll__shm_hop(const ucoll_model_t *m)
{
    ucoll_model_t d;

    if (m->shm_alpha > 0) {
        return m->shm_alpha + m->wake;
    }
    ucoll__model_default(&d);
    return d.shm_alpha + m->wake;
}

/*
 * A call run as two schedules, one after the other, under the call's
 * sequence number: the first learns what the second needs to be built
 * (the binomial gatherv and scatterv learn the counts of their subtrees,
 * which only the root is given), the second moves the data. The user's
 * request waits on the first through a request of its own, then on the
 * second's run directly; the algorithm's state (arg) lives until the user's
 * request completes.
 *
 * The binomial v-variants' shared part is here too (ucoll__vtree_*): their
 * state, set up and settled alike, and the root's check for subtrees whose
 * blocks it can move without packing.
 *
 * Both schedules use one tag. That is safe: between any two ranks the
 * first schedule's messages are sent before the second's, and its receives
 * are posted before the second's, so non-overtaking pairs them as written.
 */
#include "algos/algos.h"
#include "progress/request.h"
#include "progress/sched.h"

#include <stdlib.h>

typedef struct phased {
    ucoll_comm_t *comm;
    ucoll_req_t *req; /* the user's */
    ucoll_req_t *sub; /* the first schedule's, while it runs */
    int tag;
    ucoll_coll_t coll;
    ucoll_phase_build_t second;
    void *arg;
    void (*fini)(void *arg, ucoll_req_t *req);
} phased_t;

/* The user's request completes: the algorithm settles its result and frees
 * its state, then this. */
static void phased_fini(ucoll_req_t *req)
{
    phased_t *ph = req->fini_arg;

    req->fini_arg = NULL;
    ph->fini(ph->arg, req);
    free(ph);
}

/* Build a schedule on ph's communicator and tag with build. */
static int phase_build(phased_t *ph, ucoll_phase_build_t build, ucoll_sched_t **s_p)
{
    ucoll_sched_t *s;
    int st = ucoll__sched_create(ph->comm, ph->tag, &s);

    if (st != UCOLL_OK) {
        return st;
    }
    st = build(s, ph->arg);
    if (st == UCOLL_OK) {
        st = ucoll__sched_seal(s);
    }
    if (st != UCOLL_OK) {
        ucoll__sched_destroy(s);
        return st;
    }
    *s_p = s;
    return UCOLL_OK;
}

/* Start the second schedule on the user's request, or complete it with the
 * first error. */
static void phase_two(phased_t *ph, int err)
{
    ucoll_req_t *req = ph->req;
    ucoll_sched_t *s;

    req->u.coll.withdraw = NULL;
    req->u.coll.withdraw_arg = NULL;
    if (err == UCOLL_OK) {
        err = phase_build(ph, ph->second, &s);
    }
    if (err == UCOLL_OK) {
        err = ucoll__sched_start(s, req);
        if (err != UCOLL_OK) {
            ucoll__sched_destroy(s);
        }
    }
    if (err != UCOLL_OK) {
        ucoll_debug("%s: its second schedule: %s", ucoll__coll_name(ph->coll), ucoll_strerror(err));
        ucoll__req_complete(req, err); /* frees ph (phased_fini) */
    }
}

static void phase_one_done(ucoll_req_t *sub)
{
    phased_t *ph = sub->cb_arg;
    int err = sub->status.error;

    ucoll__req_release(sub);
    ph->sub = NULL;
    phase_two(ph, err);
}

/* A blocking call timed out in its first schedule: that one is cancelled,
 * and the call ends with status once it has (phase_one_done). */
static void phased_withdraw(ucoll_req_t *req, int status)
{
    phased_t *ph = req->u.coll.withdraw_arg;

    req->u.coll.withdraw = NULL;
    req->u.coll.withdraw_arg = NULL;
    if (ph->sub != NULL) {
        (void)ucoll__sched_cancel(ph->sub, status);
    }
}

int ucoll__phased_start(ucoll_comm_t *comm, ucoll_coll_t coll, ucoll_req_t *req, int tag,
                        ucoll_phase_build_t first, ucoll_phase_build_t second, void *arg,
                        void (*fini)(void *arg, ucoll_req_t *req))
{
    phased_t *ph = calloc(1, sizeof(*ph));
    ucoll_sched_t *s;
    ucoll_req_t *sub;
    int st;

    if (ph == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ph->comm = comm;
    ph->coll = coll;
    ph->req = req;
    ph->tag = tag;
    ph->second = second;
    ph->arg = arg;
    ph->fini = fini;
    st = phase_build(ph, first, &s);
    if (st != UCOLL_OK) {
        free(ph);
        return st;
    }
    if (ucoll__sched_nrounds(s) == 0) { /* nothing to learn here */
        ucoll__sched_destroy(s);
        req->fini = phased_fini;
        req->fini_arg = ph;
        phase_two(ph, UCOLL_OK);
        return UCOLL_OK;
    }
    sub = ucoll__req_alloc(comm->ctx, UCOLL_REQ_COLL);
    if (sub == NULL) {
        ucoll__sched_destroy(s);
        free(ph);
        return UCOLL_ERR_NOMEM;
    }
    st = ucoll__sched_start(s, sub);
    if (st != UCOLL_OK) {
        ucoll__sched_destroy(s);
        ucoll__req_release(sub);
        free(ph);
        return st;
    }
    /* committed: from here on the user's request ends the call, and its
     * completion frees the state */
    req->fini = phased_fini;
    req->fini_arg = ph;
    if (sub->complete) { /* the first schedule ended inside its start */
        st = sub->status.error;
        ucoll__req_release(sub);
        phase_two(ph, st);
        return UCOLL_OK;
    }
    sub->user = 0;
    sub->cb = phase_one_done;
    sub->cb_arg = ph;
    ph->sub = sub;
    req->u.coll.withdraw = phased_withdraw;
    req->u.coll.withdraw_arg = ph;
    return UCOLL_OK;
}

static void vtree_fini(void *arg, ucoll_req_t *req)
{
    ucoll_vtree_t *v = arg;

    if (v->truncated && req->status.error == UCOLL_OK) {
        req->status.error = UCOLL_ERR_TRUNCATE;
    }
    free(v->cnt);
    free(v);
}

int ucoll__vtree_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, int tag, ucoll_req_t *req,
                       ucoll_phase_build_t first, ucoll_phase_build_t second)
{
    ucoll_vtree_t *v = calloc(1, sizeof(*v));
    int st;

    if (v == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    v->a = *a;
    v->p = comm->size;
    v->sr = ucoll__srank(comm->rank, a->root, v->p);
    v->n = ucoll__binomial_size(v->sr, v->p);
    v->cnt = calloc((size_t)v->n, sizeof(uint64_t));
    if (v->cnt == NULL) {
        free(v);
        return UCOLL_ERR_NOMEM;
    }
    if (a->coll == UCOLL_COLL_GATHERV) {
        v->cnt[0] = a->scount;
    } else if (v->sr == 0) {
        for (int i = 0; i < v->p; i++) {
            v->cnt[i] = a->scounts[ucoll__rank_of(i, a->root, v->p)];
        }
    }
    st = ucoll__phased_start(comm, a->coll, req, tag, first, second, v, vtree_fini);
    if (st != UCOLL_OK) {
        free(v->cnt);
        free(v);
    }
    return st;
}

int ucoll__vtree_in_order(const ucoll_vtree_t *v, int c, int n)
{
    const ucoll_coll_args_t *a = &v->a;
    const size_t *counts = a->coll == UCOLL_COLL_GATHERV ? a->rcounts : a->scounts;
    const size_t *displs = a->coll == UCOLL_COLL_GATHERV ? a->rdispls : a->sdispls;
    int first = ucoll__rank_of(c, a->root, v->p);

    if (first + n > v->p) {
        return 0;
    }
    for (int r = first; r + 1 < first + n; r++) {
        if (displs[r + 1] != displs[r] + counts[r]) {
            return 0;
        }
    }
    return 1;
}

/*
 * Requests: one struct for point-to-point and collective operations, taken
 * from a per-context pool. A request handed to the user is freed by
 * ucoll_test/ucoll_wait once complete; an internal one is freed by its owner
 * (usually in its completion callback).
 */
#ifndef UCOLL_REQUEST_H
#define UCOLL_REQUEST_H

#include "core.h"
#include "progress/p2p_req.h"

struct ucoll_run;

typedef enum { UCOLL_REQ_SEND, UCOLL_REQ_RECV, UCOLL_REQ_COLL } ucoll_req_kind_t;

struct ucoll_req {
    ucoll_list_t link; /* owner's queue, or the pool's free list */
    ucoll_ctx_t *ctx;
    int kind;              /* ucoll_req_kind_t */
    int complete;          /* set once, by ucoll__req_complete */
    int user;              /* 1: the user frees it through test/wait */
    ucoll_status_t status; /* status.error is the result */
    /* internal completion callback, run by ucoll__req_complete; may free req */
    void (*cb)(ucoll_req_t *req);
    void *cb_arg;
    /* the call's own state to settle once it completes (a coalesced
     * bcast's buffers list, its staging unpack), run by ucoll__req_complete
     * before cb and once: whoever waits (cb) need not know it */
    void (*fini)(ucoll_req_t *req);
    void *fini_arg;
    union {
        struct ucoll_p2p_req p2p; /* lib/progress/p2p_req.h */
        struct {
            struct ucoll_run *run; /* the schedule run it waits for */
            /* set while whoever holds a call not started yet (the shared-
             * memory setup's queue) can withdraw it: completes req with
             * status, and the call never starts */
            void (*withdraw)(ucoll_req_t *req, int status);
            void *withdraw_arg;
        } coll; /* lib/progress/sched.h */
    } u;
};

/* Take a zeroed request from ctx's pool (NULL when out of memory); one of
 * kind UCOLL_REQ_COLL has u.p2p left as it was (it never uses it). */
ucoll_req_t *ucoll__req_alloc(ucoll_ctx_t *ctx, ucoll_req_kind_t kind);
/* Return a request to the pool. */
static inline void ucoll__req_release(ucoll_req_t *req)
{
    ucoll_ctx_t *ctx = req->ctx;

    /* a released request must not look like a live send to a late CTS */
    req->kind = -1;
    req->complete = 1;
    ctx->req_outstanding--;
    ucoll_list_add_head(&ctx->req_free, &req->link);
}

/* Mark complete with error (UCOLL_OK or an error) and run the callback. */
static inline void ucoll__req_complete(ucoll_req_t *req, int error)
{
    req->status.error = error;
    if (req->fini) {
        void (*fini)(ucoll_req_t *) = req->fini;

        req->fini = NULL;
        fini(req);
    }
    req->complete = 1;
    if (req->cb) {
        req->cb(req);
    }
}
/* A completed request handed to test/wait: its status out, the request back
 * to the pool, its result returned. */
static inline int ucoll__req_finish(ucoll_req_t *req, ucoll_status_t *status)
{
    int err = req->status.error;

    if (status) {
        *status = req->status;
    }
    ucoll__req_release(req);
    return err;
}

/* Free every pool chunk; called at context destruction, after the
 * transport's: the requests still out have their call's state settled
 * (fini) first. */
void ucoll__req_pool_cleanup(ucoll_ctx_t *ctx);

/*
 * Wait until *flag becomes non-zero, driving ucoll_progress and sleeping as
 * ctx->cfg.wait_mode says (spin, yield, block on the UCP worker's event fd,
 * hybrid; see wait.c).
 * Returns UCOLL_ERR_TIMEOUT when UCOLL_TIMEOUT seconds pass first.
 */
int ucoll__wait_flag(ucoll_ctx_t *ctx, const volatile int *flag);

#endif

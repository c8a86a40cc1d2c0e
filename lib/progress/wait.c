/*
 * The progress loop and waiting.
 *
 * ucoll_progress drives the network (UCX, or the simulator's net) and then
 * the collective executor. Waiting polls; in block mode, and in hybrid mode
 * after UCOLL_SPIN_COUNT idle polls, it arms the UCP worker and sleeps in
 * poll() on the worker's event fd. The sleep is capped so that the liveness
 * watch of same-node peers and UCOLL_TIMEOUT still run while nothing
 * arrives.
 */
#include "progress/request.h"
#include "progress/net.h"
#include "progress/sched.h"
#include "transport/ucx.h"

#include <poll.h>
#include <sched.h>

#define SLEEP_CAP_MS 100

int ucoll_progress(ucoll_ctx_t *ctx)
{
    int n = 0;

    if (ctx == NULL) {
        return UCOLL_ERR_ARG;
    }
    if (ctx->net) {
        n += ctx->net->progress(ctx);
    }
    if (ucoll__exec_pending(ctx)) {
        n += ucoll__exec_progress(ctx);
    }
    return n;
}

static void sleep_on_worker(ucoll_ctx_t *ctx, uint64_t deadline)
{
    struct pollfd pfd;
    uint64_t now;
    int ms = SLEEP_CAP_MS;

    if (ctx->tl == NULL) {
        sched_yield();
        return;
    }
    if (ucoll__tl_arm(ctx)) {
        return; /* events pending: progress again */
    }
    if (deadline) {
        now = ucoll__tl_now_ns();
        ms = now >= deadline ? 0 : (int)UCOLL_MIN((deadline - now) / 1000000 + 1, (uint64_t)ms);
    }
    pfd.fd = ctx->tl->efd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    if (poll(&pfd, 1, ms) == 0 && ctx->tl->nwatched &&
        ucoll__tl_now_ns() - ctx->tl->watch_last >= UCOLL_TL_WATCH_NS) {
        ucoll__tl_watch(ctx);
    }
}

int ucoll__wait_flag(ucoll_ctx_t *ctx, const volatile int *flag)
{
    uint64_t deadline = 0;
    unsigned idle = 0, spins, iter = 0;
    int mode = ctx->cfg.wait_mode;

    if (*flag) {
        return UCOLL_OK;
    }
    if (ctx->cfg.timeout > 0) {
        deadline = ucoll__tl_now_ns() + (uint64_t)(ctx->cfg.timeout * 1e9);
    }
    spins = mode == UCOLL_WAIT_HYBRID ? ctx->cfg.spin_count : 1;
    for (;;) {
        if (ucoll_progress(ctx) > 0) {
            idle = 0;
        } else {
            idle++;
        }
        if (*flag) {
            return UCOLL_OK;
        }
        if (deadline && (++iter & 255) == 0 && ucoll__tl_now_ns() >= deadline) {
            ucoll_debug("wait timed out after %g s", ctx->cfg.timeout);
            return UCOLL_ERR_TIMEOUT;
        }
        if (mode != UCOLL_WAIT_SPIN && idle >= spins) {
            sleep_on_worker(ctx, deadline);
            idle = 0;
            if (deadline && ucoll__tl_now_ns() >= deadline) {
                ucoll_progress(ctx);
                if (*flag) {
                    return UCOLL_OK;
                }
                ucoll_debug("wait timed out after %g s", ctx->cfg.timeout);
                return UCOLL_ERR_TIMEOUT;
            }
        }
    }
}

int ucoll_test(ucoll_req_t *req, int *done, ucoll_status_t *status)
{
    if (req == NULL || done == NULL) {
        return UCOLL_ERR_ARG;
    }
    if (!req->complete) {
        ucoll_progress(req->ctx);
    }
    if (!req->complete) {
        *done = 0;
        return UCOLL_OK;
    }
    *done = 1;
    return ucoll__req_finish(req, status);
}

int ucoll_wait(ucoll_req_t *req, ucoll_status_t *status)
{
    int ret;

    if (req == NULL) {
        return UCOLL_ERR_ARG;
    }
    ret = ucoll__wait_flag(req->ctx, &req->complete);
    if (ret != UCOLL_OK) {
        return ret; /* timed out: the request stays valid */
    }
    return ucoll__req_finish(req, status);
}

int ucoll_waitall(size_t n, ucoll_req_t **reqs)
{
    int first = UCOLL_OK, ret;
    size_t i;

    if (n && reqs == NULL) {
        return UCOLL_ERR_ARG;
    }
    for (i = 0; i < n; i++) {
        if (reqs[i] == NULL) {
            continue;
        }
        ret = ucoll__wait_flag(reqs[i]->ctx, &reqs[i]->complete);
        if (ret != UCOLL_OK) {
            return ret;
        }
        ret = ucoll__req_finish(reqs[i], NULL);
        reqs[i] = NULL;
        if (first == UCOLL_OK) {
            first = ret;
        }
    }
    return first;
}

/*
 * The progress loop and waiting.
 *
 * ucoll_progress drives the network (UCX, or the simulator's net) and then
 * the collective executor. Waiting polls, and between idle polls does what
 * the wait mode says (ucoll__wait_flag). Sleeping arms the UCP worker and
 * sleeps in poll() on the worker's event fd; the sleep is capped so that
 * the liveness watch of same-node peers and UCOLL_TIMEOUT still run while
 * nothing arrives.
 */
#include "progress/request.h"
#include "transport/net.h"
#include "progress/sched.h"
#include "progress/shm.h"
#include "transport/ucx.h"

#include <poll.h>
#include <sched.h>
#include <time.h>

#define SLEEP_CAP_MS 100
/* Shared-memory ops queued: the sleeping modes nap this long between idle
 * polls instead of sleeping on the worker fd (a flag in shared memory
 * wakes nobody), after polling and yielding for UCOLL_SPIN_TIME. */
#define SHM_NAP_NS 20000
/* ... and before yielding, poll without a system call this long: a
 * sched_yield costs about a microsecond here, which a flag that flips
 * within that time would wait for (8-byte shm bcast at p = 2, block mode:
 * 1.3 us with yields from the start, 0.5 us like this). */
#define SHM_POLL_NS 2000

int ucoll_progress(ucoll_ctx_t *ctx)
{
    int n = 0;

    if (ctx == NULL) {
        return UCOLL_ERR_ARG;
    }
    if (ucoll_unlikely(ucoll__shm_owing(ctx))) {
        ucoll__shm_pay_all(ctx); /* ends owed since the last pass */
    }
    if (ucoll__shm_pending(ctx)) {
        /* flags in shared memory first, and three passes in four without
         * UCX: a pass of UCX costs several times a look at the flags
         * (measured: a quarter of a waiting reader's time), which delayed
         * seeing them; messages wait a few tens of nanoseconds longer */
        n = ucoll__shm_progress(ctx);
        if (n == 0 && (++ctx->shm_polls & 3) != 0) {
            return ucoll__exec_pending(ctx) ? ucoll__exec_progress(ctx) : 0;
        }
    }
    if (ctx->net) {
        n += ctx->net->progress(ctx);
    }
    if (ucoll__exec_pending(ctx)) {
        n += ucoll__exec_progress(ctx);
    }
    if (ucoll__shm_pending(ctx)) {
        n += ucoll__shm_progress(ctx); /* ops the network or the executor started */
    }
    return n;
}

/* Only UCX needs polling: no shared-memory op queued, no end owed by one
 * (ucoll_progress pays it), no schedule ready, no receive the
 * point-to-point layer deferred. */
static inline int ucx_only(const ucoll_ctx_t *ctx)
{
    return ctx->tl && !ctx->net_deferred && !ucoll__shm_pending(ctx) && !ucoll__shm_owing(ctx) &&
           !ucoll__exec_pending(ctx);
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

/* Run the liveness watch of same-node peers when it is due (the sleeping
 * modes run it when a sleep times out; the polling ones come here). */
static void watch_if_due(ucoll_ctx_t *ctx)
{
    if (ctx->tl && ctx->tl->nwatched &&
        ucoll__tl_now_ns() - ctx->tl->watch_last >= UCOLL_TL_WATCH_NS) {
        ucoll__tl_watch(ctx);
    }
}

static int timed_out(ucoll_ctx_t *ctx, const volatile int *flag)
{
    ucoll_progress(ctx);
    if (*flag) {
        return 0;
    }
    ucoll_debug("wait timed out after %g s", ctx->cfg.timeout);
    return 1;
}

/* Idle while shared-memory ops are queued, in the sleeping modes: their
 * flags raise no event, so poll (SHM_POLL_NS without a system call, then
 * giving the core away with sched_yield) for spin_ns since the idle
 * stretch began, then take short naps, which leave the core to peers that
 * share it and still see a flag within tens of microseconds. The liveness
 * watch runs here as in the polling modes. */
static void shm_idle(ucoll_ctx_t *ctx, uint64_t *idle_since, uint64_t spin_ns)
{
    uint64_t now = ucoll__tl_now_ns();
    struct timespec nap = {0, SHM_NAP_NS};

    if (*idle_since == 0) {
        *idle_since = now;
    }
    if (now - *idle_since < SHM_POLL_NS) {
        return;
    }
    watch_if_due(ctx);
    if (now - *idle_since < UCOLL_MAX(spin_ns, SHM_POLL_NS)) {
        sched_yield();
        return;
    }
    nanosleep(&nap, NULL);
}

/*
 * The modes (UCOLL_WAIT; auto was resolved at init by ucoll__topo_wait_mode):
 *  spin   poll without pause: the lowest latency, when each rank has a core;
 *  yield  poll, and after each idle poll give the core to whoever else is
 *         runnable on it (sched_yield), as MPI libraries do when
 *         oversubscribed: a peer that shares the core runs at once, not
 *         after a time slice, and nothing sleeps on a file descriptor;
 *  block  sleep on the worker's event fd after each idle poll (the least
 *         CPU, a wake-up per message);
 *  hybrid poll for UCOLL_SPIN_TIME microseconds of idleness, then sleep.
 * Block and hybrid do not sleep on the worker fd while shared-memory ops
 * are queued (shm_idle).
 */
int ucoll__wait_flag(ucoll_ctx_t *ctx, const volatile int *flag)
{
    uint64_t deadline = 0, idle_since = 0, spin_ns, moved = ctx->shm_moved;
    unsigned iter = 0;
    int mode = ctx->cfg.wait_mode;

    if (*flag) {
        return UCOLL_OK;
    }
    if (mode == UCOLL_WAIT_AUTO) {
        mode = UCOLL_WAIT_YIELD; /* not resolved (no topology): the safe choice */
    }
    if (ctx->cfg.timeout > 0 && mode != UCOLL_WAIT_SPIN) {
        deadline = ucoll__tl_now_ns() + (uint64_t)(ctx->cfg.timeout * 1e9);
    }
    /* spin: the deadline is set at the first check, 1024 polls on (well
     * under a millisecond with a core per rank), not now: reading the
     * clock took 26 ns here (kvm-clock), as long as a small collective's
     * flag can take to cross between cores, and most waits end sooner */
    spin_ns = (uint64_t)ctx->cfg.spin_time * 1000;
    for (;;) {
        int busy;

        if ((mode == UCOLL_WAIT_SPIN || mode == UCOLL_WAIT_YIELD) && ucx_only(ctx)) {
            /* nothing but UCX to drive: poll the worker directly and look
             * at the flag after each poll. Through ucoll_progress and the
             * net's progress an 8-byte ping-pong at p = 2 took 0.04 us
             * more per message (0.651 against 0.611 us, medians of 16
             * alternations) */
            do {
                busy = ucoll__tl_progress(ctx) > 0;
                if (*flag) {
                    return UCOLL_OK;
                }
                if (!busy && mode == UCOLL_WAIT_YIELD) {
                    sched_yield();
                }
            } while ((++iter & 1023) != 0 && ucx_only(ctx));
            busy = 1;
        } else {
            busy = ucoll_progress(ctx) > 0;
            if (*flag) {
                return UCOLL_OK;
            }
            ++iter;
        }
        if ((iter & 1023) == 0) {
            if (deadline == 0 && ctx->cfg.timeout > 0) {
                deadline = ucoll__tl_now_ns() + (uint64_t)(ctx->cfg.timeout * 1e9);
            } else if (deadline && ucoll__tl_now_ns() >= deadline) {
                if (timed_out(ctx, flag)) {
                    return UCOLL_ERR_TIMEOUT;
                }
                return UCOLL_OK;
            }
            if (mode == UCOLL_WAIT_SPIN || mode == UCOLL_WAIT_YIELD) {
                watch_if_due(ctx);
            }
        }
        if (busy) {
            idle_since = 0;
            continue;
        }
        switch (mode) {
        case UCOLL_WAIT_SPIN: continue;
        case UCOLL_WAIT_YIELD: sched_yield(); continue;
        default: break;
        }
        if (ucoll__shm_pending(ctx)) {
            /* block, hybrid; the deadline is checked above. An op that
             * moved a piece is not idle: a long one would otherwise nap
             * between its pieces once UCOLL_SPIN_TIME has passed since it
             * began */
            if (ctx->shm_moved != moved) {
                moved = ctx->shm_moved;
                idle_since = 0;
                continue;
            }
            shm_idle(ctx, &idle_since, spin_ns);
            continue;
        }
        switch (mode) {
        case UCOLL_WAIT_HYBRID:
            if (idle_since == 0) {
                idle_since = ucoll__tl_now_ns();
                continue;
            }
            if ((iter & 15) || ucoll__tl_now_ns() - idle_since < spin_ns) {
                continue;
            }
            break;
        default: break;
        }
        sleep_on_worker(ctx, deadline);
        idle_since = 0;
        if (deadline && ucoll__tl_now_ns() >= deadline) {
            return timed_out(ctx, flag) ? UCOLL_ERR_TIMEOUT : UCOLL_OK;
        }
    }
}

/* How long a timed-out blocking collective waits for UCX to let go of its
 * buffers: UCOLL_TIMEOUT again, at most this. Withdrawn receives and sends
 * still waiting for their receiver end at once; what already runs in UCX
 * (data flowing) ends within transfer times; a send whose receiver never
 * takes it does not end at all. */
#define CANCEL_WAIT_MAX_NS 5000000000ull

static void orphan_done(ucoll_req_t *req)
{
    ucoll__req_release(req);
}

int ucoll__coll_wait_blocking(ucoll_req_t *req)
{
    ucoll_ctx_t *ctx = req->ctx;
    uint64_t deadline;
    int ret;

    if (req->complete) { /* a small call through shared memory ends in its start */
        return ucoll__req_finish(req, NULL);
    }
    ret = ucoll__wait_flag(ctx, &req->complete);

    if (ucoll_likely(ret == UCOLL_OK)) {
        return ucoll__req_finish(req, NULL);
    }
    /* timed out: nothing of the call may write into the caller's buffers
     * once this returns */
    if (req->u.coll.withdraw) {
        req->u.coll.withdraw(req, ret);
    } else if (!ucoll__sched_cancel(req, ret)) {
        (void)ucoll__shm_cancel(req, ret);
    }
    deadline =
        ucoll__tl_now_ns() + UCOLL_MIN((uint64_t)(ctx->cfg.timeout * 1e9), CANCEL_WAIT_MAX_NS);
    while (!req->complete && ucoll__tl_now_ns() < deadline) {
        ucoll_progress(ctx);
    }
    if (req->complete) {
        /* finished meanwhile after all: its own result */
        int err = req->status.error;

        ucoll__req_release(req);
        return err == UCOLL_OK ? UCOLL_OK : ret;
    } else {
        ucoll_warn("a timed-out collective could not be withdrawn: UCX still holds its "
                   "buffers (a send its receiver never took, or data still flowing); it is "
                   "left to end by itself");
        req->cb = orphan_done;
    }
    return ret;
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

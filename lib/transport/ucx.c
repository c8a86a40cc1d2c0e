/*
 * UCX wiring: UCP context and worker, worker-address exchange through the
 * bootstrap, endpoints created on first use, failure detection (see ucx.h).
 */
#include "transport/ucx_int.h"
#include "transport/bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ucs/debug/log_def.h>

#define ADDR_KEY         "ucoll.addr"
#define CLOSE_TIMEOUT_NS 5000000000ull
#define FLUSH_TIMEOUT_NS 5000000000ull

/* What a rank publishes: a header with who it is (for the same-node
 * liveness watch, see ucx.h), then its UCP worker address. The magic names
 * this layout, so that a blob of another one is refused by name rather
 * than misread. */
#define BLOB_MAGIC 0x75636c32u /* "ucl2" */
typedef struct {
    uint32_t magic;
    uint32_t len; /* bytes of worker address after the header */
    ucoll_tl_ident_t id;
    char addr[];
} tl_blob_t;

uint64_t ucoll__tl_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ucoll__tl_status(ucs_status_t status)
{
    switch (status) {
    case UCS_OK: return UCOLL_OK;
    case UCS_ERR_NO_MEMORY: return UCOLL_ERR_NOMEM;
    case UCS_ERR_MESSAGE_TRUNCATED: return UCOLL_ERR_TRUNCATE;
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_CANCELED: return UCOLL_ERR_PEER;
    default: return UCOLL_ERR_TRANSPORT;
    }
}

/* Print something UCX writes to a FILE into a malloc'ed string. */
static char *ucx_print(void (*print)(void *obj, FILE *f), void *obj)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (f == NULL) {
        return NULL;
    }
    print(obj, f);
    fclose(f);
    return buf;
}

static void print_context(void *obj, FILE *f)
{
    ucp_context_print_info(obj, f);
}
static void print_ep(void *obj, FILE *f)
{
    ucp_ep_print_info(obj, f);
}

static int has_shm_resource(const char *info)
{
    return info && (strstr(info, " posix/") || strstr(info, " sysv/") || strstr(info, " xpmem/"));
}

/* ---- who a process is, and whether it still runs ------------------------ */

/* The kernel's per-task flag for a task that has begun to exit (its memory
 * may already be gone), field 9 of /proc/PID/stat. */
#define PROC_PF_EXITING 0x4u

/* State (field 3), flags (field 9) and start time (field 22) of a process
 * from its /proc/PID/stat, where path names that file. 0, or the errno of
 * the failure (EINVAL for a line that does not parse). */
static int proc_stat_read(const char *path, char *state_p, unsigned *flags_p, uint64_t *start_p)
{
    char buf[1024], *p, *end;
    unsigned long long v = 0;
    ssize_t n;
    int fd, i;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return errno;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    i = errno;
    close(fd);
    if (n < 0) {
        return i;
    }
    buf[n] = '\0';
    /* "pid (comm) S f4 ... f22 ...": comm may hold spaces and parentheses,
     * the last ')' ends it */
    p = strrchr(buf, ')');
    if (p == NULL || p[1] != ' ' || p[2] == '\0') {
        return EINVAL;
    }
    *state_p = p[2];
    p += 3;
    for (i = 4; i <= 22; i++) {
        errno = 0;
        v = strtoull(p, &end, 10);
        if (end == p || errno != 0) {
            return EINVAL;
        }
        p = end;
        if (i == 9) {
            *flags_p = (unsigned)v;
        }
    }
    *start_p = v;
    return 0;
}

/* The identity of one of this process's namespaces (/proc/self/ns/NAME). */
static int ns_read(const char *name, uint64_t ns[2])
{
    char path[64];
    struct stat sb;

    snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
    if (stat(path, &sb) != 0) {
        return errno;
    }
    ns[0] = (uint64_t)sb.st_dev;
    ns[1] = (uint64_t)sb.st_ino;
    return 0;
}

/* Whether /proc is the procfs of our pid namespace: /proc/self names our
 * pid there. In a container that kept its host's /proc mounted, it names
 * the pid the host sees, and /proc/PID would show other processes. */
static int procfs_ours(uint32_t pid)
{
    char link[32], *end;
    ssize_t n;

    n = readlink("/proc/self", link, sizeof(link) - 1);
    if (n <= 0) {
        return 0;
    }
    link[n] = '\0';
    return strtoul(link, &end, 10) == pid && *end == '\0';
}

/* This process's identity (*id), watchable when all of it could be read
 * and /proc is ours. NULL when watchable, else why not. */
static const char *ident_self(ucoll_tl_ident_t *id)
{
    const char *why = NULL;
    char state;
    unsigned flags;
    int err;

    memset(id, 0, sizeof(*id));
    id->pid = (uint32_t)getpid();
    if ((err = ns_read("pid", id->pidns)) != 0) {
        why = "/proc/self/ns/pid is unreadable";
    } else if ((err = ns_read("time", id->timens)) != 0 && err != ENOENT) {
        why = "/proc/self/ns/time is unreadable";
    } else if (!procfs_ours(id->pid)) {
        why = "/proc shows another pid namespace than ours";
    } else if (proc_stat_read("/proc/self/stat", &state, &flags, &id->start) != 0 ||
               id->start == 0) {
        why = "no start time in /proc/self/stat";
    }
    if (why != NULL) {
        memset(id, 0, sizeof(*id));
        id->pid = (uint32_t)getpid();
        return why;
    }
    id->watchable = 1;
    return NULL;
}

/* Why this process and a peer on its node, of identity *peer, cannot watch
 * each other through pids; NULL when they can. Both of them decide alike
 * (the two endpoints of a pair must agree on their error handling mode),
 * only the reason given differs. */
static const char *ident_unwatchable(const ucoll_tl_t *tl, const ucoll_tl_ident_t *peer)
{
    if (!tl->id.watchable) {
        return tl->no_pid_watch;
    }
    if (!peer->watchable) {
        return "it cannot be watched through its pid (its debug log says why)";
    }
    if (memcmp(tl->id.pidns, peer->pidns, sizeof(peer->pidns)) != 0) {
        return "it runs in another pid namespace";
    }
    if (memcmp(tl->id.timens, peer->timens, sizeof(peer->timens)) != 0) {
        return "it runs in another time namespace, where start times read otherwise";
    }
    return NULL;
}

/* Whether the process id names is alive: /proc/PID/stat shows a process
 * that has not exited (an exited child that nobody reaped yet is a zombie,
 * and still answers kill()) nor begun to (its memory may be gone already,
 * which a copy from it finds before the process is a zombie) with the
 * start time it published (else its pid has been reused). Only for a
 * watchable peer in our namespaces. */
static int pid_alive(const ucoll_tl_ident_t *id)
{
    char path[64], state;
    unsigned flags = 0;
    uint64_t start;
    int err;

    snprintf(path, sizeof(path), "/proc/%u/stat", id->pid);
    err = proc_stat_read(path, &state, &flags, &start);
    if (err == ENOENT || err == ESRCH) {
        return 0;
    }
    if (err != 0) {
        /* unreadable for a reason that says nothing of the process: only a
         * pid that is gone is sure to be dead */
        return !(kill((pid_t)id->pid, 0) != 0 && errno == ESRCH);
    }
    return state != 'Z' && state != 'X' && !(flags & PROC_PF_EXITING) && start == id->start;
}

/*
 * A peer on this node that dies in the middle of a zero-copy transfer
 * (CMA: process_vm_readv/writev of its memory, UCX's rendezvous between
 * processes of one node) makes the copy fail with ESRCH. UCX 1.13 then
 * fails the transfer's request, but first logs the failure at FATAL level,
 * which aborts the process, because the endpoint has no UCX peer error
 * handling (no same-node endpoint of ours can have it, see ucx.h). So a
 * rank that dies while sending a large message would take its receiver
 * with it. This log handler stops that one message, from that one
 * function, before UCX's default handler aborts on it: the request fails
 * (op_complete), and the pid watch says whether the peer is gone. UCX's
 * log handlers are per process, so it is installed once and stays (the
 * library is linked -z nodelete: the handler outlives no unloading).
 */
static ucs_log_func_rc_t cma_failure_filter(const char *file, unsigned line, const char *function,
                                            ucs_log_level_t level,
                                            const ucs_log_component_config_t *comp,
                                            const char *message, va_list ap)
{
    (void)file;
    (void)line;
    (void)comp;
    (void)message;
    (void)ap;
    if (level == UCS_LOG_LEVEL_FATAL && function != NULL &&
        strcmp(function, "uct_cma_ep_tx_error") == 0) {
        return UCS_LOG_FUNC_RC_STOP;
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

static pthread_once_t cma_filter_once = PTHREAD_ONCE_INIT;

static void cma_filter_install(void)
{
    ucs_log_push_handler(cma_failure_filter);
}

int ucoll__tl_init(ucoll_ctx_t *ctx)
{
    ucp_params_t params = {0};
    ucp_worker_params_t wparams = {0};
    ucp_config_t *config;
    ucoll_boot_t *boot = ctx->boot;
    tl_blob_t *blob;
    ucoll_tl_t *tl;
    ucs_status_t st;
    size_t blob_len;
    char *info;
    int ret, i;

    tl = calloc(1, sizeof(*tl));
    if (tl == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    pthread_once(&cma_filter_once, cma_filter_install);
    tl->ctx = ctx;
    tl->efd = -1;
    tl->peer_mode = -1;
    tl->no_pid_watch = ident_self(&tl->id);
    if (tl->no_pid_watch == NULL && ctx->cfg.liveness == UCOLL_LIVENESS_UCX) {
        /* published unwatchable, so that our peers decide alike */
        tl->id.watchable = 0;
        tl->no_pid_watch = "UCOLL_LIVENESS=ucx";
    }
    if (tl->no_pid_watch) {
        ucoll_debug("liveness: no pid watch for same-node peers (UCX peer error handling "
                    "instead): %s",
                    tl->no_pid_watch);
    } else {
        ucoll_debug("liveness: pid %u in pid namespace %llu:%llu, started at tick %llu", tl->id.pid,
                    (unsigned long long)tl->id.pidns[0], (unsigned long long)tl->id.pidns[1],
                    (unsigned long long)tl->id.start);
    }
    ucoll_list_init(&tl->ops_live);
    ucoll_list_init(&tl->ops_free);
    tl->peers = calloc((size_t)ctx->size, sizeof(*tl->peers));
    if (tl->peers == NULL) {
        ret = UCOLL_ERR_NOMEM;
        goto err_free_tl;
    }

    st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) {
        ucoll_error("cannot read the UCX configuration: %s", ucs_status_string(st));
        ret = UCOLL_ERR_TRANSPORT;
        goto err_free_peers;
    }
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_ESTIMATED_NUM_EPS |
                        UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    /* RMA only for the get rendezvous: asking for it wires extra lanes
     * (and polls more interfaces), which costs ~0.02-0.03 us of shared-
     * memory latency; AM and tag rendezvous do their own zero-copy gets */
    params.features = UCP_FEATURE_AM | UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
    if (ctx->cfg.rndv_mode == UCOLL_RNDV_GET) {
        params.features |= UCP_FEATURE_RMA;
    }
    params.estimated_num_eps = (size_t)ctx->size;
    params.mt_workers_shared = 0;
    st = ucp_init(&params, config, &tl->context);
    ucp_config_release(config);
    if (st != UCS_OK) {
        ucoll_error("ucp_init failed: %s", ucs_status_string(st));
        ret = UCOLL_ERR_TRANSPORT;
        goto err_free_peers;
    }

    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    st = ucp_worker_create(tl->context, &wparams, &tl->worker);
    if (st != UCS_OK) {
        ucoll_error("ucp_worker_create failed: %s", ucs_status_string(st));
        ret = UCOLL_ERR_TRANSPORT;
        goto err_cleanup_context;
    }
    st = ucp_worker_get_efd(tl->worker, &tl->efd);
    if (st != UCS_OK) {
        ucoll_error("ucp_worker_get_efd failed: %s", ucs_status_string(st));
        ret = UCOLL_ERR_TRANSPORT;
        goto err_destroy_worker;
    }
    st = ucp_worker_get_address(tl->worker, &tl->addr, &tl->addr_len);
    if (st != UCS_OK) {
        ucoll_error("ucp_worker_get_address failed: %s", ucs_status_string(st));
        ret = UCOLL_ERR_TRANSPORT;
        goto err_destroy_worker;
    }
    info = ucx_print(print_context, tl->context);
    tl->have_shm = has_shm_resource(info);
    free(info);
    ret = ucoll__tl_fifo_init(tl);
    if (ret != UCOLL_OK) {
        goto err_release_addr;
    }

    for (i = 0; i < ctx->size; i++) {
        tl->peers[i].tl = tl;
        tl->peers[i].rank = i;
    }
    if (boot->local_peers) {
        for (i = 0; i < boot->local_size; i++) {
            if (boot->local_peers[i] >= 0 && boot->local_peers[i] < ctx->size) {
                tl->peers[boot->local_peers[i]].local = 1;
            }
        }
    }
    tl->peers[ctx->rank].local = 1;

    blob_len = sizeof(*blob) + tl->addr_len;
    blob = malloc(blob_len);
    if (blob == NULL) {
        ret = UCOLL_ERR_NOMEM;
        goto err_release_addr;
    }
    blob->magic = BLOB_MAGIC;
    blob->len = (uint32_t)tl->addr_len;
    blob->id = tl->id;
    memcpy(blob->addr, tl->addr, tl->addr_len);
    ret = boot->ops->publish(boot, ADDR_KEY, blob, blob_len);
    free(blob);
    if (ret != UCOLL_OK) {
        goto err_release_addr;
    }
    if ((ctx->cfg.modex == UCOLL_MODEX_FENCE || boot->needs_fence) && ctx->size > 1) {
        ret = boot->ops->fence(boot, 1);
        if (ret != UCOLL_OK) {
            goto err_release_addr;
        }
    }
    ctx->tl = tl;
    ucoll_debug("UCX ready: %s shared memory, modex %s", tl->have_shm ? "with" : "without",
                ctx->cfg.modex == UCOLL_MODEX_FENCE ? "fence" : "direct");
    return UCOLL_OK;

err_release_addr:
    ucp_worker_release_address(tl->worker, tl->addr);
err_destroy_worker:
    ucp_worker_destroy(tl->worker);
err_cleanup_context:
    ucp_cleanup(tl->context);
err_free_peers:
    free(tl->peers);
err_free_tl:
    free(tl);
    return ret;
}

static int fetch_addr(ucoll_ctx_t *ctx, ucoll_tl_peer_t *peer)
{
    ucoll_boot_t *boot = ctx->boot;
    tl_blob_t hdr;
    void *data;
    size_t len;
    int ret;

    if (peer->rank == ctx->rank) {
        peer->addr = malloc(ctx->tl->addr_len);
        if (peer->addr == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        memcpy(peer->addr, ctx->tl->addr, ctx->tl->addr_len);
        peer->addr_len = ctx->tl->addr_len;
        peer->id = ctx->tl->id;
        return UCOLL_OK;
    }
    ret = boot->ops->fetch(boot, peer->rank, ADDR_KEY, &data, &len);
    if (ret != UCOLL_OK) {
        ucoll_error("cannot fetch the address of rank %d", peer->rank);
        return ret;
    }
    /* copied out: the bootstrap promises no alignment */
    if (len < sizeof(hdr)) {
        ucoll_error("rank %d published a malformed address (%zu bytes, less than the %zu of "
                    "its header)",
                    peer->rank, len, sizeof(hdr));
        goto err_free_data;
    }
    memcpy(&hdr, data, sizeof(hdr));
    if (hdr.magic != BLOB_MAGIC) {
        ucoll_error("rank %d published an address of another format (tag %#x, expected %#x): "
                    "a different ucoll library?",
                    peer->rank, hdr.magic, BLOB_MAGIC);
        goto err_free_data;
    }
    if (hdr.len == 0 || len - sizeof(hdr) != hdr.len || hdr.id.watchable > 1) {
        ucoll_error("rank %d published a malformed address (%zu bytes, header says %u + %zu)",
                    peer->rank, len, hdr.len, sizeof(hdr));
        goto err_free_data;
    }
    peer->addr = malloc(hdr.len);
    if (peer->addr == NULL) {
        free(data);
        return UCOLL_ERR_NOMEM;
    }
    memcpy(peer->addr, (const char *)data + sizeof(hdr), hdr.len);
    peer->addr_len = hdr.len;
    peer->id = hdr.id;
    free(data);
    return UCOLL_OK;

err_free_data:
    free(data);
    return UCOLL_ERR_BOOTSTRAP;
}

void ucoll__tl_set_failed(ucoll_ctx_t *ctx, int rank, int status)
{
    ucoll_tl_t *tl = ctx->tl;
    ucoll_tl_peer_t *peer = &tl->peers[rank];

    if (peer->state == UCOLL_TL_EP_FAILED) {
        return;
    }
    if (tl->in_call) {
        /* inside a UCX call (see ucx.h): at the next progress */
        if (peer->fail_status == 0) {
            peer->fail_status = status != UCOLL_OK ? status : UCOLL_ERR_PEER;
            tl->fail_deferred = 1;
        }
        return;
    }
    if (peer->watched) {
        peer->watched = 0;
        tl->nwatched--;
    }
    peer->state = UCOLL_TL_EP_FAILED;
    if (!ctx->finalizing) {
        ucoll_error("rank %d is unreachable (%s): failing operations that depend on it", rank,
                    ucoll_strerror(status));
    }
    if (tl->on_failure) {
        tl->on_failure(ctx, rank, status);
    }
}

static void ep_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    ucoll_tl_peer_t *peer = arg;

    ucoll_debug("endpoint to rank %d failed: %s", peer->rank, ucs_status_string(status));
    ucoll__tl_set_failed(peer->tl->ctx, peer->rank, ucoll__tl_status(status));
}

/* Shared memory when any lane runs over a shared-memory transport; lanes are
 * printed as "N:tl/dev.idx". */
static int ep_kind(ucp_ep_h ep)
{
    char *info = ucx_print(print_ep, ep);
    int shm;

    shm = info == NULL || strstr(info, ":posix/") || strstr(info, ":sysv/") ||
          strstr(info, ":self/") || strstr(info, ":xpmem/");
    free(info);
    return shm ? UCOLL_TL_KIND_SHM : UCOLL_TL_KIND_NET;
}

static void probe_error_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    (void)arg;
    (void)ep;
    (void)status;
}

/* Whether an endpoint with UCP_ERR_HANDLING_MODE_PEER can reach this node
 * at all, found out once by creating one to our own worker. UCX 1.13 serves
 * that mode with none of its shared-memory transports, nor with self ("no
 * peer failure handler"), so under UCX_TLS=sm,self it cannot, while with
 * TCP it can, over loopback. Tells a same-node peer that is gone from a
 * transport that is missing when such an endpoint to that peer cannot be
 * created: UCX says UCS_ERR_UNREACHABLE for both. */
static int peer_mode_reaches_node(ucoll_tl_t *tl)
{
    ucp_ep_params_t params = {0};
    ucp_request_param_t cparam = {0};
    ucs_status_ptr_t r;
    ucp_ep_h ep;

    if (tl->peer_mode >= 0) {
        return tl->peer_mode;
    }
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = tl->addr;
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = probe_error_cb;
    tl->peer_mode = ucp_ep_create(tl->worker, &params, &ep) == UCS_OK;
    if (tl->peer_mode) {
        /* no progress here (this may run inside a UCX callback): a close
         * still in flight is UCX's to finish */
        cparam.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        cparam.flags = UCP_EP_CLOSE_FLAG_FORCE;
        r = ucp_ep_close_nbx(ep, &cparam);
        if (UCS_PTR_IS_PTR(r)) {
            ucp_request_free(r);
        }
    }
    return tl->peer_mode;
}

/* The connecting half of ucoll__tl_ep, kept out of line so that the hot
 * path (an endpoint that is up) does not pay for setting up parameters. */
int ucoll__tl_ep_connect(ucoll_ctx_t *ctx, int rank, ucp_ep_h *ep_p)
{
    ucoll_tl_t *tl = ctx->tl;
    ucoll_tl_peer_t *peer = &tl->peers[rank];
    ucp_ep_params_t params = {0};
    const char *unwatchable = NULL;
    ucs_status_t st;
    int ret, watch, dead;

    if (peer->state == UCOLL_TL_EP_FAILED) {
        return UCOLL_ERR_PEER;
    }
    if (peer->addr == NULL) {
        ret = fetch_addr(ctx, peer);
        if (ret != UCOLL_OK) {
            return ret;
        }
    }
    /* see ucx.h: a same-node peer is watched through its pid where the
     * pid means the same to both of us, any other peer gets UCX's peer
     * error handling */
    if (peer->local && rank != ctx->rank) {
        unwatchable = ident_unwatchable(tl, &peer->id);
    }
    watch = rank == ctx->rank || (peer->local && unwatchable == NULL);
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    params.address = peer->addr;
    if (watch) {
        params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
    } else {
        params.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
        params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        params.err_handler.cb = ep_error_cb;
        params.err_handler.arg = peer;
    }
    st = ucp_ep_create(tl->worker, &params, &peer->ep);
    if (st != UCS_OK) {
        /* a peer that died before anyone connected to it: on this node its
         * process is gone (and its shared memory or socket with it); on
         * another node its socket refuses the connection */
        if (rank == ctx->rank) {
            dead = 0;
        } else if (peer->local && unwatchable == NULL) {
            dead = !pid_alive(&peer->id);
        } else if (peer->local && st == UCS_ERR_UNREACHABLE && !peer_mode_reaches_node(tl)) {
            ucoll_error("cannot connect to rank %d on this node: its liveness can only be "
                        "watched by UCX's peer error handling (%s), which no transport in "
                        "UCX_TLS offers on one node (UCX %s's shared-memory transports do not; "
                        "tcp does)",
                        rank, unwatchable, ucp_get_version_string());
            return UCOLL_ERR_TRANSPORT;
        } else {
            dead = ucoll__tl_status(st) == UCOLL_ERR_PEER;
        }
        if (dead) {
            ucoll_debug("connecting to rank %d: %s", rank, ucs_status_string(st));
            ucoll__tl_set_failed(ctx, rank, UCOLL_ERR_PEER);
            return UCOLL_ERR_PEER;
        }
        ucoll_error("cannot connect to rank %d: %s", rank, ucs_status_string(st));
        return UCOLL_ERR_TRANSPORT;
    }
    peer->state = UCOLL_TL_EP_UP;
    peer->err_peer = !watch;
    peer->kind = ep_kind(peer->ep);
    if (watch && rank != ctx->rank) {
        peer->watched = 1;
        tl->nwatched++;
    }
    ucoll_debug("connected to rank %d (%s, %s%s%s)", rank,
                peer->kind == UCOLL_TL_KIND_SHM ? "shm" : "net",
                rank == ctx->rank ? "self"
                : watch           ? "pid watch"
                                  : "peer error handling",
                unwatchable ? ": same node, no pid watch: " : "", unwatchable ? unwatchable : "");
    *ep_p = peer->ep;
    return UCOLL_OK;
}

void ucoll__tl_watch(ucoll_ctx_t *ctx)
{
    ucoll_tl_t *tl = ctx->tl;
    int i;

    tl->watch_last = ucoll__tl_now_ns();
    for (i = 0; i < ctx->size && tl->nwatched; i++) {
        if (tl->peers[i].watched && !pid_alive(&tl->peers[i].id)) {
            ucoll__tl_set_failed(ctx, i, UCOLL_ERR_PEER);
        }
    }
}

int ucoll__tl_check_failed(ucoll_ctx_t *ctx, int rank)
{
    ucoll_tl_peer_t *peer;

    if (rank < 0 || rank >= ctx->size) {
        return 0;
    }
    peer = &ctx->tl->peers[rank];
    if (peer->state != UCOLL_TL_EP_FAILED && peer->fail_status == 0 && peer->watched &&
        !pid_alive(&peer->id)) {
        /* reported at the next progress, as from inside a UCX call: the
         * caller is completing a request of its own, which on_failure
         * must not find */
        peer->fail_status = UCOLL_ERR_PEER;
        ctx->tl->fail_deferred = 1;
    }
    return peer->state == UCOLL_TL_EP_FAILED || peer->fail_status != 0;
}

/* Report the failures seen inside UCX calls (ucoll__tl_set_failed). */
static void fail_deferred(ucoll_ctx_t *ctx)
{
    ucoll_tl_t *tl = ctx->tl;

    tl->fail_deferred = 0;
    for (int i = 0; i < ctx->size; i++) {
        int status = tl->peers[i].fail_status;

        if (status != 0) {
            tl->peers[i].fail_status = 0;
            ucoll__tl_set_failed(ctx, i, status);
        }
    }
}

int ucoll__tl_progress(ucoll_ctx_t *ctx)
{
    ucoll_tl_t *tl = ctx->tl;
    int n;

    if (ucoll_unlikely(tl->fail_deferred) && !tl->in_call) {
        fail_deferred(ctx);
    }
    if (ucoll_unlikely(tl->fifo_armed)) {
        ucoll__tl_fifo_disarm(tl);
    }
    n = tl->nfifo_in ? ucoll__tl_fifo_poll(tl) : 0;
    tl->progressing++;
    n += (int)ucp_worker_progress(tl->worker);
    tl->progressing--;
    if (ucoll_unlikely(!ucoll_list_empty(&tl->fifo_offers))) {
        ucoll__tl_fifo_offers(tl);
    }

    if (ucoll_unlikely(tl->nwatched && (++tl->watch_tick & 1023) == 0) &&
        ucoll__tl_now_ns() - tl->watch_last >= UCOLL_TL_WATCH_NS) {
        ucoll__tl_watch(ctx);
    }
    return n;
}

int ucoll__tl_arm(ucoll_ctx_t *ctx)
{
    ucs_status_t st;

    if (ctx->tl->nfifo_in && ucoll__tl_fifo_arm(ctx->tl)) {
        return 1;
    }
    st = ucp_worker_arm(ctx->tl->worker);

    if (st == UCS_OK) {
        return 0;
    }
    if (st != UCS_ERR_BUSY) {
        ucoll_debug("ucp_worker_arm: %s", ucs_status_string(st));
    }
    return 1;
}

ucoll_tl_op_t *ucoll__tl_op_alloc(ucoll_tl_t *tl, void *req, int what)
{
    ucoll_tl_op_t *op;

    if (!ucoll_list_empty(&tl->ops_free)) {
        op = ucoll_list_first(&tl->ops_free, ucoll_tl_op_t, link);
        ucoll_list_del(&op->link);
    } else {
        op = malloc(sizeof(*op));
        if (op == NULL) {
            return NULL;
        }
    }
    op->tl = tl;
    op->req = req;
    op->what = what;
    op->type = UCOLL_TL_OP_AM_SEND;
    op->rank = -1;
    op->ucp_req = NULL;
    op->rkey = NULL;
    ucoll_list_add_tail(&tl->ops_live, &op->link);
    return op;
}

void ucoll__tl_op_free(ucoll_tl_t *tl, ucoll_tl_op_t *op)
{
    ucoll_list_del(&op->link);
    ucoll_list_add_head(&tl->ops_free, &op->link);
}

void ucoll__tl_close_eps(ucoll_ctx_t *ctx)
{
    ucoll_tl_t *tl = ctx->tl;
    ucp_request_param_t param = {0};
    void **reqs;
    uint64_t deadline;
    int i, pending;

    if (tl == NULL) {
        return;
    }
    reqs = calloc((size_t)ctx->size, sizeof(*reqs));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    for (i = 0; i < ctx->size; i++) {
        ucoll_tl_peer_t *peer = &tl->peers[i];
        void *r;

        if (peer->ep == NULL) {
            continue;
        }
        param.flags =
            (peer->state == UCOLL_TL_EP_FAILED || peer->err_peer) ? UCP_EP_CLOSE_FLAG_FORCE : 0;
        r = ucp_ep_close_nbx(peer->ep, &param);
        peer->ep = NULL;
        if (peer->state == UCOLL_TL_EP_UP) {
            peer->state = UCOLL_TL_EP_NONE;
        }
        if (peer->watched) {
            peer->watched = 0;
            tl->nwatched--;
        }
        if (UCS_PTR_IS_PTR(r)) {
            if (reqs) {
                reqs[i] = r;
            } else {
                ucp_request_free(r);
            }
        }
    }
    deadline = ucoll__tl_now_ns() + CLOSE_TIMEOUT_NS;
    do {
        pending = 0;
        ucp_worker_progress(tl->worker);
        for (i = 0; reqs && i < ctx->size; i++) {
            if (reqs[i] == NULL) {
                continue;
            }
            if (ucp_request_check_status(reqs[i]) == UCS_INPROGRESS) {
                pending++;
            } else {
                ucp_request_free(reqs[i]);
                reqs[i] = NULL;
            }
        }
    } while (pending && ucoll__tl_now_ns() < deadline);
    if (pending) {
        ucoll_warn("%d endpoint(s) did not close in time", pending);
        for (i = 0; i < ctx->size; i++) {
            if (reqs[i]) {
                ucp_request_free(reqs[i]);
            }
        }
    }
    free(reqs);
}

/* Whether UCX still holds a send started here. ucp_worker_flush covers RMA
 * and not sends, and a send that UCX returned in flight goes out only as
 * this worker progresses: a control message without a request (a FIN
 * after a get, returned credits) or a packet that found its ring full,
 * left there by a rank that then sits in the job's final fence, would hold
 * its peer, and the fence, forever (seen: get-mode windows of 64 messages
 * of 4 MiB, where UCX returned about a quarter of the FINs in flight, and
 * 4 were still in flight when the receiver entered the fence). */
static int sends_held(const ucoll_tl_t *tl)
{
    const ucoll_list_t *pos;

    ucoll_list_for_each(pos, &tl->ops_live)
    {
        const ucoll_tl_op_t *op = ucoll_container_of(pos, ucoll_tl_op_t, link);

        if (op->ucp_req != NULL &&
            (op->type == UCOLL_TL_OP_AM_SEND || op->type == UCOLL_TL_OP_TAG_SEND)) {
            return 1;
        }
    }
    return 0;
}

int ucoll__tl_flush(ucoll_ctx_t *ctx)
{
    ucoll_tl_t *tl = ctx->tl;
    ucp_request_param_t param = {0};
    ucs_status_ptr_t r;
    ucs_status_t st = UCS_OK;
    uint64_t deadline;

    if (tl == NULL) {
        return UCOLL_OK;
    }
    /* progress with the liveness watch: a same-node peer that dies meanwhile
     * fails its endpoint's operations rather than holding the flush */
    deadline = ucoll__tl_now_ns() + FLUSH_TIMEOUT_NS;
    while (sends_held(tl) && ucoll__tl_now_ns() < deadline) {
        ucoll__tl_progress(ctx);
    }
    r = ucp_worker_flush_nbx(tl->worker, &param);
    if (UCS_PTR_IS_ERR(r)) {
        ucoll_debug("ucp_worker_flush_nbx: %s", ucs_status_string(UCS_PTR_STATUS(r)));
        return ucoll__tl_status(UCS_PTR_STATUS(r));
    }
    if (r != NULL) {
        while ((st = ucp_request_check_status(r)) == UCS_INPROGRESS &&
               ucoll__tl_now_ns() < deadline) {
            ucoll__tl_progress(ctx);
        }
        ucp_request_free(r); /* released by UCX once complete, if it is not */
    }
    if (st == UCS_INPROGRESS || sends_held(tl)) {
        ucoll_warn("finalize: UCX did not complete its outstanding operations in %llu s",
                   (unsigned long long)(FLUSH_TIMEOUT_NS / 1000000000ull));
        return UCOLL_ERR_TIMEOUT;
    }
    if (st != UCS_OK) {
        ucoll_debug("worker flush: %s", ucs_status_string(st));
        return ucoll__tl_status(st);
    }
    return UCOLL_OK;
}

int ucoll__tl_live_ranks(const ucoll_ctx_t *ctx, int *ranks)
{
    int n = 0;

    for (int r = 0; r < ctx->size; r++) {
        if (ctx->tl == NULL || ctx->tl->peers[r].state != UCOLL_TL_EP_FAILED) {
            ranks[n++] = r;
        }
    }
    return n;
}

void ucoll__tl_cleanup(ucoll_ctx_t *ctx)
{
    ucoll_tl_t *tl = ctx->tl;
    ucoll_list_t *pos, *tmp;
    int i;

    if (tl == NULL) {
        return;
    }
    ucoll__tl_fifo_cleanup(tl);
    ucoll__tl_close_eps(ctx);
    ucp_worker_release_address(tl->worker, tl->addr);
    ucp_worker_destroy(tl->worker);
    ucp_cleanup(tl->context);
    /* the worker is gone: no callback can reach an op any more */
    ucoll_list_for_each_safe(pos, tmp, &tl->ops_live)
    {
        free(ucoll_container_of(pos, ucoll_tl_op_t, link));
    }
    ucoll_list_for_each_safe(pos, tmp, &tl->ops_free)
    {
        free(ucoll_container_of(pos, ucoll_tl_op_t, link));
    }
    for (i = 0; i < ctx->size; i++) {
        free(tl->peers[i].addr);
    }
    free(tl->peers);
    free(tl);
    ctx->tl = NULL;
}

void ucoll__tl_describe(ucoll_ctx_t *ctx, FILE *out)
{
    ucoll_tl_t *tl = ctx->tl;

    if (tl == NULL) {
        fprintf(out, "# no UCX context (simulated network)\n");
        return;
    }
    ucp_context_print_info(tl->context, out);
    ucp_worker_print_info(tl->worker, out);
    fprintf(out, "# same-node peers: %s\n",
            tl->have_shm ? "shared memory, liveness watched by pid (in one pid namespace; "
                           "else UCX peer error handling, over TCP)"
                         : "no shared memory transport, UCX peer error handling");
}

int ucoll_peer_transports(ucoll_ctx_t *ctx, int world_rank, char *buf, size_t len)
{
    char *info, *p, *q, *out;
    size_t n = 0;
    ucp_ep_h ep;
    int ret;

    if (ctx == NULL || buf == NULL || len == 0 || world_rank < 0 || world_rank >= ctx->size) {
        return UCOLL_ERR_ARG;
    }
    if (ctx->tl == NULL) {
        snprintf(buf, len, "sim");
        return UCOLL_OK;
    }
    ret = ucoll__tl_ep(ctx, world_rank, &ep);
    if (ret != UCOLL_OK) {
        return ret;
    }
    info = ucx_print(print_ep, ep);
    if (info == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    out = malloc(strlen(info) + 1);
    if (out == NULL) {
        free(info);
        return UCOLL_ERR_NOMEM;
    }
    out[0] = '\0';
    /* lanes are printed as "lane[i]:  N:tl/dev.idx md[..] ..." */
    for (p = strstr(info, "lane["); p; p = strstr(p + 1, "lane[")) {
        char name[128];
        size_t k = 0;

        q = strchr(p, ':');
        if (q == NULL) {
            break;
        }
        q++;
        while (*q == ' ') {
            q++;
        }
        q = strchr(q, ':');
        if (q == NULL) {
            break;
        }
        q++;
        while (q[k] && q[k] != ' ' && q[k] != '\n' && k < sizeof(name) - 1) {
            name[k] = q[k];
            k++;
        }
        name[k] = '\0';
        if (k > 2 && name[k - 2] == '.') {
            name[k - 2] = '\0'; /* drop the ".idx" of the device */
        }
        if (name[0] && !strstr(out, name)) {
            n += (size_t)sprintf(out + n, "%s%s", n ? " " : "", name);
        }
    }
    snprintf(buf, len, "%s", n ? out : "unknown");
    free(out);
    free(info);
    return UCOLL_OK;
}

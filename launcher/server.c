/*
 * The PMIx side of ucollrun: server module callbacks and job registration.
 *
 * Everything runs on one host, which shapes the module:
 *  - fence_nb: the PMIx server library collects the contributions of its
 *    local clients itself; the host's part is the exchange between servers.
 *    PMIx 4.2 completes a fence whose participants are all local without
 *    calling the host at all (seen in the tests); a library that does call
 *    has only this server's blob to exchange, so it comes straight back.
 *    The library hands ownership of the blob to the host on the call, hence
 *    the release callback that frees it.
 *  - direct_modex: the library answers requests for local procs (waiting
 *    for their commit when needed) and asks the host only about procs on
 *    other servers. There are none, so the answer is "not supported".
 *  - client callbacks run on PMIx's progress thread. They only post an
 *    event to the main loop through a pipe and acknowledge.
 */
#include "ucollrun.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UCR_FINI_TIMEOUT_MS 5000 /* how long ucr_server_fini waits for PMIx */

/* Blocks the main thread until a PMIx operation calls back. */
typedef struct ucr_wait {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    pmix_status_t status;
} ucr_wait_t;

static void wait_init(ucr_wait_t *w)
{
    pthread_condattr_t attr;

    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->cond, &attr);
    pthread_condattr_destroy(&attr);
    w->done = false;
    w->status = PMIX_SUCCESS;
}

static void wait_op_done(pmix_status_t status, void *cbdata)
{
    ucr_wait_t *w = cbdata;

    pthread_mutex_lock(&w->lock);
    w->status = status;
    w->done = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/*
 * Waits for the callback, at most timeout_ms (-1: forever), then destroys w
 * and returns the status it reported. On timeout returns PMIX_ERR_TIMEOUT
 * and leaves w alone: the callback may still come.
 */
static pmix_status_t wait_finish_timed(ucr_wait_t *w, int timeout_ms)
{
    struct timespec deadline;
    pmix_status_t status;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&w->cond, &w->lock);
        } else if (ETIMEDOUT == pthread_cond_timedwait(&w->cond, &w->lock, &deadline)) {
            pthread_mutex_unlock(&w->lock);
            return PMIX_ERR_TIMEOUT;
        }
    }
    status = w->status;
    pthread_mutex_unlock(&w->lock);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->cond);
    return status;
}

static pmix_status_t wait_finish(ucr_wait_t *w)
{
    return wait_finish_timed(w, -1);
}

/* ---- module callbacks (PMIx progress thread) ---------------------------- */

static void post_event(void *server_object, ucr_event_type_t type, int status, const char *msg)
{
    const ucr_client_t *cl = server_object;
    ucr_event_t ev = {.type = type, .status = status};
    const char *p = (const char *)&ev;
    size_t left = sizeof(ev);
    ssize_t n;

    if (NULL == cl) {
        return; /* not one of our ranks */
    }
    ev.rank = cl->rank;
    if (UCR_EV_ABORT == type) {
        ev.msg = strdup(NULL != msg ? msg : "");
    }
    while (left > 0) {
        n = write(cl->srv->ev_fd, p, left);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            free(ev.msg); /* main loop is gone; nobody to tell */
            return;
        }
        p += n;
        left -= (size_t)n;
    }
}

static pmix_status_t module_client_connected(const pmix_proc_t *proc, void *server_object,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    post_event(server_object, UCR_EV_CONNECTED, 0, NULL);
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

static pmix_status_t module_client_finalized(const pmix_proc_t *proc, void *server_object,
                                             pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    post_event(server_object, UCR_EV_FINALIZED, 0, NULL);
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

/*
 * The event is posted before the client is released, so the main loop sees
 * the abort before it can see the rank exit.
 */
static pmix_status_t module_abort(const pmix_proc_t *proc, void *server_object, int status,
                                  const char msg[], pmix_proc_t procs[], size_t nprocs,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    post_event(server_object, UCR_EV_ABORT, status, msg);
    if (NULL != cbfunc) {
        cbfunc(PMIX_SUCCESS, cbdata);
    }
    return PMIX_SUCCESS;
}

static void release_blob(void *cbdata)
{
    free(cbdata);
}

static pmix_status_t module_fence_nb(const pmix_proc_t procs[], size_t nprocs,
                                     const pmix_info_t info[], size_t ninfo, char *data,
                                     size_t ndata, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    if (NULL == cbfunc) {
        free(data);
        return PMIX_SUCCESS;
    }
    /* the one server's contribution is the whole result */
    cbfunc(PMIX_SUCCESS, data, ndata, cbdata, release_blob, data);
    return PMIX_SUCCESS;
}

static pmix_status_t module_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                         size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    return PMIX_ERR_NOT_SUPPORTED; /* no remote servers; cbfunc never runs */
}

static pmix_server_module_t ucr_module = {
    .client_connected = module_client_connected,
    .client_finalized = module_client_finalized,
    .abort = module_abort,
    .fence_nb = module_fence_nb,
    .direct_modex = module_direct_modex,
};

/* ---- main thread -------------------------------------------------------- */

int ucr_server_init(ucr_server_t *srv, const char *tmpdir, int ev_fd)
{
    pmix_info_t info[3];
    bool no = false;
    pmix_status_t rc;

    memset(srv, 0, sizeof(*srv));
    srv->ev_fd = ev_fd;
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[2], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
    rc = PMIx_server_init(&ucr_module, info, 3);
    for (int i = 0; i < 3; ++i) {
        PMIX_INFO_DESTRUCT(&info[i]);
    }
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, UCR_NAME ": PMIx_server_init failed: %s\n", PMIx_Error_string(rc));
        return -1;
    }
    srv->initialized = true;
    return 0;
}

/* "0,1,...,n-1" */
static char *rank_list(int n)
{
    size_t cap = (size_t)n * 12 + 1, len = 0;
    char *s = malloc(cap);

    if (NULL == s) {
        return NULL;
    }
    s[0] = '\0';
    for (int r = 0; r < n; ++r) {
        len += (size_t)snprintf(s + len, cap - len, "%s%d", r ? "," : "", r);
    }
    return s;
}

/* Add one key to an info list, or leave through `out` with rc set. */
#define INFO_ADD(_list, _key, _val, _type)                 \
    do {                                                   \
        rc = PMIx_Info_list_add(_list, _key, _val, _type); \
        if (PMIX_SUCCESS != rc) {                          \
            goto out;                                      \
        }                                                  \
    } while (0)

/* Convert list into a data array and add it to parent under key; frees list. */
static pmix_status_t add_array(void *parent, const char *key, void *list)
{
    pmix_data_array_t darray;
    pmix_status_t rc;

    rc = PMIx_Info_list_convert(list, &darray);
    PMIx_Info_list_release(list);
    if (PMIX_SUCCESS != rc) {
        return rc;
    }
    rc = PMIx_Info_list_add(parent, key, &darray, PMIX_DATA_ARRAY); /* copies */
    PMIX_DATA_ARRAY_DESTRUCT(&darray);
    return rc;
}

/* Add the per-rank info arrays (rank first, as PMIx requires) to job. */
static pmix_status_t add_proc_arrays(void *job, int nprocs, const char *host)
{
    pmix_status_t rc = PMIX_SUCCESS;
    uint32_t zero = 0;
    void *pl = NULL;

    for (int r = 0; r < nprocs; ++r) {
        pmix_rank_t rank = (pmix_rank_t)r;
        uint16_t lrank = (uint16_t)r;

        if (NULL == (pl = PMIx_Info_list_start())) {
            return PMIX_ERR_NOMEM;
        }
        INFO_ADD(pl, PMIX_RANK, &rank, PMIX_PROC_RANK);
        INFO_ADD(pl, PMIX_LOCAL_RANK, &lrank, PMIX_UINT16);
        INFO_ADD(pl, PMIX_NODE_RANK, &lrank, PMIX_UINT16);
        INFO_ADD(pl, PMIX_NODEID, &zero, PMIX_UINT32);
        INFO_ADD(pl, PMIX_HOSTNAME, host, PMIX_STRING);
        INFO_ADD(pl, PMIX_APPNUM, &zero, PMIX_UINT32);
        INFO_ADD(pl, PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
        INFO_ADD(pl, PMIX_APP_RANK, &rank, PMIX_PROC_RANK);
        rc = add_array(job, PMIX_PROC_INFO_ARRAY, pl);
        pl = NULL;
        if (PMIX_SUCCESS != rc) {
            break;
        }
    }
    return rc;

out:
    PMIx_Info_list_release(pl);
    return rc;
}

/*
 * The job description, shaped like what Open MPI's mpirun registers
 * (tests/launcher compares the two), except that PMIX_UNIV_SIZE and
 * PMIX_MAX_PROCS are the job size (mpirun reports its slot count).
 */
static pmix_status_t build_job_info(void *job, const char *nspace, int nprocs, const char *host,
                                    const char *tmpdir, const char *nsdir)
{
    uint32_t size = (uint32_t)nprocs, one = 1, zero = 0;
    pmix_rank_t rank0 = 0;
    bool no = false;
    char *peers = rank_list(nprocs), *node_regex = NULL, *proc_regex = NULL, cwd[PATH_MAX];
    void *node = NULL, *app = NULL;
    pmix_status_t rc = PMIX_ERR_NOMEM;

    if (NULL == peers) {
        goto out;
    }
    if (PMIX_SUCCESS != (rc = PMIx_generate_regex(host, &node_regex)) ||
        PMIX_SUCCESS != (rc = PMIx_generate_ppn(peers, &proc_regex))) {
        goto out;
    }
    if (NULL == getcwd(cwd, sizeof(cwd))) {
        strcpy(cwd, "/");
    }
    INFO_ADD(job, PMIX_JOBID, nspace, PMIX_STRING);
    INFO_ADD(job, PMIX_JOB_SIZE, &size, PMIX_UINT32);
    INFO_ADD(job, PMIX_UNIV_SIZE, &size, PMIX_UINT32);
    INFO_ADD(job, PMIX_MAX_PROCS, &size, PMIX_UINT32);
    INFO_ADD(job, PMIX_NUM_NODES, &one, PMIX_UINT32);
    INFO_ADD(job, PMIX_JOB_NUM_APPS, &one, PMIX_UINT32);
    INFO_ADD(job, PMIX_SPAWNED, &no, PMIX_BOOL);
    INFO_ADD(job, PMIX_APPNUM, &zero, PMIX_UINT32);
    INFO_ADD(job, PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    INFO_ADD(job, PMIX_NODE_SIZE, &size, PMIX_UINT32);
    INFO_ADD(job, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    INFO_ADD(job, PMIX_LOCALLDR, &rank0, PMIX_PROC_RANK);
    INFO_ADD(job, PMIX_NODE_MAP, node_regex, PMIX_REGEX);
    INFO_ADD(job, PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
    INFO_ADD(job, PMIX_TMPDIR, tmpdir, PMIX_STRING);
    INFO_ADD(job, PMIX_NSDIR, nsdir, PMIX_STRING);

    rc = PMIX_ERR_NOMEM;
    if (NULL == (node = PMIx_Info_list_start())) {
        goto out;
    }
    INFO_ADD(node, PMIX_NODEID, &zero, PMIX_UINT32);
    INFO_ADD(node, PMIX_HOSTNAME, host, PMIX_STRING);
    INFO_ADD(node, PMIX_LOCAL_SIZE, &size, PMIX_UINT32);
    INFO_ADD(node, PMIX_NODE_SIZE, &size, PMIX_UINT32);
    INFO_ADD(node, PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    INFO_ADD(node, PMIX_LOCALLDR, &rank0, PMIX_PROC_RANK);
    rc = add_array(job, PMIX_NODE_INFO_ARRAY, node);
    node = NULL;
    if (PMIX_SUCCESS != rc) {
        goto out;
    }

    rc = PMIX_ERR_NOMEM;
    if (NULL == (app = PMIx_Info_list_start())) {
        goto out;
    }
    INFO_ADD(app, PMIX_APPNUM, &zero, PMIX_UINT32);
    INFO_ADD(app, PMIX_APP_SIZE, &size, PMIX_UINT32);
    INFO_ADD(app, PMIX_APPLDR, &rank0, PMIX_PROC_RANK);
    INFO_ADD(app, PMIX_WDIR, cwd, PMIX_STRING);
    rc = add_array(job, PMIX_APP_INFO_ARRAY, app);
    app = NULL;
    if (PMIX_SUCCESS != rc) {
        goto out;
    }

    rc = add_proc_arrays(job, nprocs, host);

out:
    if (NULL != node) {
        PMIx_Info_list_release(node);
    }
    if (NULL != app) {
        PMIx_Info_list_release(app);
    }
    free(node_regex);
    free(proc_regex);
    free(peers);
    return rc;
}

int ucr_server_register_job(ucr_server_t *srv, const char *nspace, int nprocs, const char *tmpdir,
                            const char *nsdir)
{
    char host[256];
    pmix_data_array_t info = PMIX_DATA_ARRAY_STATIC_INIT;
    void *job;
    ucr_wait_t w;
    pmix_status_t rc;

    srv->clients = calloc((size_t)nprocs, sizeof(*srv->clients));
    if (NULL == srv->clients) {
        fprintf(stderr, UCR_NAME ": out of memory\n");
        goto err;
    }
    for (int r = 0; r < nprocs; ++r) {
        srv->clients[r].srv = srv;
        srv->clients[r].rank = r;
    }
    srv->nprocs = nprocs;
    PMIX_LOAD_NSPACE(srv->nspace, nspace);

    if (0 != gethostname(host, sizeof(host))) {
        strcpy(host, "localhost");
    }
    host[sizeof(host) - 1] = '\0';
    if (NULL == (job = PMIx_Info_list_start())) {
        rc = PMIX_ERR_NOMEM;
        goto err_rc;
    }
    rc = build_job_info(job, nspace, nprocs, host, tmpdir, nsdir);
    if (PMIX_SUCCESS == rc) {
        rc = PMIx_Info_list_convert(job, &info);
    }
    PMIx_Info_list_release(job);
    if (PMIX_SUCCESS != rc) {
        goto err_rc;
    }

    wait_init(&w);
    rc = PMIx_server_register_nspace(srv->nspace, nprocs, info.array, info.size, wait_op_done, &w);
    if (PMIX_SUCCESS == rc) {
        rc = wait_finish(&w);
    }
    PMIX_DATA_ARRAY_DESTRUCT(&info);
    if (PMIX_SUCCESS != rc) {
        goto err_rc;
    }
    srv->nspace_registered = true;
    return 0;

err_rc:
    fprintf(stderr, UCR_NAME ": registering the job with PMIx failed: %s\n", PMIx_Error_string(rc));
err:
    return -1;
}

int ucr_server_setup_rank(ucr_server_t *srv, int rank, char ***env_p)
{
    pmix_proc_t proc;
    ucr_wait_t w;
    pmix_status_t rc;

    PMIX_LOAD_PROCID(&proc, srv->nspace, (pmix_rank_t)rank);
    wait_init(&w);
    rc = PMIx_server_register_client(&proc, geteuid(), getegid(), &srv->clients[rank], wait_op_done,
                                     &w);
    if (PMIX_SUCCESS == rc) {
        rc = wait_finish(&w);
    }
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, UCR_NAME ": registering rank %d with PMIx failed: %s\n", rank,
                PMIx_Error_string(rc));
        return -1;
    }
    srv->nregistered = rank + 1;
    rc = PMIx_server_setup_fork(&proc, env_p);
    if (PMIX_SUCCESS != rc) {
        fprintf(stderr, UCR_NAME ": PMIx_server_setup_fork for rank %d failed: %s\n", rank,
                PMIx_Error_string(rc));
        return -1;
    }
    return 0;
}

/* The shutdown work of ucr_server_fini, on a thread of its own. */
typedef struct ucr_fini {
    ucr_server_t *srv;
    bool ranks_gone;
    ucr_wait_t done;
} ucr_fini_t;

static void *fini_thread(void *arg)
{
    ucr_fini_t *f = arg;
    ucr_server_t *srv = f->srv;
    pmix_proc_t proc;
    ucr_wait_t w;

    for (int r = 0; f->ranks_gone && r < srv->nregistered; ++r) {
        PMIX_LOAD_PROCID(&proc, srv->nspace, (pmix_rank_t)r);
        wait_init(&w);
        PMIx_server_deregister_client(&proc, wait_op_done, &w);
        wait_finish(&w);
    }
    if (f->ranks_gone && srv->nspace_registered) {
        wait_init(&w);
        PMIx_server_deregister_nspace(srv->nspace, wait_op_done, &w);
        wait_finish(&w);
    }
    PMIx_server_finalize();
    wait_op_done(PMIX_SUCCESS, &f->done);
    return NULL;
}

/*
 * The shutdown runs on a helper thread that the main thread waits for with
 * a deadline, because PMIx 4.2 can deadlock in its own thread when a client
 * dies during a fence (see ucollrun.h): the launcher must still end the job.
 */
int ucr_server_fini(ucr_server_t *srv, bool ranks_gone)
{
    pthread_t tid;
    ucr_fini_t *f;

    if (!srv->initialized) {
        return srv->stuck ? -1 : 0;
    }
    srv->initialized = false;
    f = calloc(1, sizeof(*f));
    if (NULL == f) {
        srv->stuck = true; /* cannot even try; leave PMIx running */
        return -1;
    }
    f->srv = srv;
    f->ranks_gone = ranks_gone;
    wait_init(&f->done);
    if (0 != pthread_create(&tid, NULL, fini_thread, f)) {
        fini_thread(f); /* no thread to spare: no deadline either */
        wait_finish(&f->done);
    } else if (PMIX_ERR_TIMEOUT == wait_finish_timed(&f->done, UCR_FINI_TIMEOUT_MS)) {
        fprintf(stderr,
                UCR_NAME ": warning: the PMIx server did not shut down in %d s; "
                         "leaving it behind\n",
                UCR_FINI_TIMEOUT_MS / 1000);
        pthread_detach(tid);
        srv->stuck = true; /* f and srv->clients stay: PMIx may still use them */
        return -1;
    } else {
        pthread_join(tid, NULL);
    }
    free(f);
    free(srv->clients);
    srv->clients = NULL;
    srv->nregistered = 0;
    srv->nspace_registered = false;
    return 0;
}

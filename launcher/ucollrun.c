/*
 * ucollrun: start N ranks of a program on this machine under a PMIx server,
 * forward their output, and end the job as a whole.
 *
 *   ucollrun -n N [options] PROGRAM [ARGS...]
 *
 * Life of a job:
 *   1. the launcher blocks the signals it handles (before any thread
 *      exists, so PMIx's thread inherits the mask) and reads them from a
 *      signalfd;
 *   2. a private directory $TMPDIR/ucollrun.XXXXXX holds the PMIx server's
 *      rendezvous files; it is removed when the launcher ends (unless the
 *      launcher itself is SIGKILLed);
 *   3. the namespace and each rank are registered with the PMIx server, and
 *      the ranks are forked, each in its own process group, with stdout and
 *      stderr on pipes;
 *   4. one poll() loop forwards output, reaps ranks (SIGCHLD), receives
 *      PMIx events (connect, finalize, abort) from PMIx's thread through a
 *      pipe, and handles timeouts. It sleeps until one of those happens.
 *   5. the first failure (non-zero exit, signal, PMIx_Abort, exit without
 *      PMIx_Finalize after PMIx_Init, timeout, a signal to the launcher) is
 *      reported in one line; the remaining ranks are stopped, the PMIx
 *      server is shut down under them (PMIx 4.2 must not watch them die,
 *      see ucr_server_fini), and they get SIGTERM (or the forwarded
 *      signal), then SIGKILL after a grace period.
 *      With --enable-recovery a rank's own failure (non-zero exit, signal,
 *      exit without PMIx_Finalize) is reported the same way but ends only
 *      that rank: the others are not signalled and the PMIx server stays
 *      up for them (their PMIx_Finalize is acknowledged as usual; a fence
 *      the dead rank never joined ends in an error for them). PMIx_Abort,
 *      a timeout and a signal to the launcher still end the whole job.
 *   6. when the launcher's own stdout or stderr reader goes away, the
 *      ranks' pipes are closed, so they get SIGPIPE like any pipeline.
 *   7. once every rank has been reaped, the PMIx server is shut down (with
 *      a deadline, see ucr_server_fini) and the directory removed.
 *
 * Exit status: 0 when every rank exited 0; otherwise the failing rank's
 * exit status, 128+signal for a signal, the abort status (or 1) for
 * PMIx_Abort, 1 for an exit without PMIx_Finalize, 124 for a timeout, 1 for
 * launcher errors, 2 for usage errors, 126/127 for a program that cannot be
 * run or found. With --enable-recovery several failures can happen: the
 * status is that of the first one (also when a later timeout, abort or
 * signal ends the job).
 */
#include "ucollrun.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define UCR_KILL_GRACE_MS 2000 /* SIGTERM (or forwarded signal) to SIGKILL */
/* A PMIx client gives up waiting for the server's finalize ack after 2 s
 * and exits; the server still reads the finalize request before the closed
 * socket, so its upcall can come after we reaped the rank. Wait this long
 * before calling an exit-0-without-finalize a failure. */
#define UCR_FINALIZE_GRACE_MS 3000
#define UCR_QUIESCE_MS        50 /* before stopping PMIx under failed ranks */
#define UCR_MAX_PROCS         4096
#define UCR_TURN_READS        4  /* reads per stream per loop turn */
#define UCR_DRAIN_READS       64 /* reads of an exited rank's pipe; more only from its children */
#define UCR_EXIT_LAUNCHER     1
#define UCR_EXIT_USAGE        2
#define UCR_EXIT_TIMEOUT      124

typedef struct ucr_opts {
    int nprocs;
    bool tag_output;
    bool bind_core;
    bool report_bindings;
    bool recovery;  /* --enable-recovery: a failed rank does not end the job */
    double timeout; /* seconds; 0: none */
    char **xvars;   /* -x arguments, in order */
    int nxvars;
    char **argv; /* the program and its arguments (points into main's argv) */
} ucr_opts_t;

typedef struct ucr_rank {
    pid_t pid; /* 0 until started */
    bool alive;
    bool connected;             /* PMIx_Init reached the server */
    bool finalized;             /* PMIx_Finalize reached the server */
    bool unfinalized_exit;      /* exited 0 before its finalize was seen */
    struct timespec verdict_at; /* when an unfinalized exit becomes a failure */
    ucr_stream_t out;
    ucr_stream_t err;
} ucr_rank_t;

/* One job; lives on main's stack. ucr_job_cleanup releases everything. */
typedef struct ucr_job {
    const ucr_opts_t *opts;
    char *path; /* resolved program */
    ucr_rank_t *ranks;
    int nstarted;
    int nlive;
    int npending; /* ranks with an unfinalized exit awaiting verdict */
    char tmpdir[PATH_MAX];
    char nsdir[PATH_MAX + 8];
    char nspace[PMIX_MAX_NSLEN + 1];
    int sig_fd;
    int ev_rd, ev_wr;
    int null_fd;
    ucr_server_t srv;
    hwloc_topology_t topo;    /* NULL unless binding or reporting */
    struct timespec deadline; /* --timeout, valid when opts->timeout > 0 */
    bool ending;              /* the job ends; ranks are being stopped */
    bool killed;              /* SIGKILL sent */
    struct timespec kill_at;  /* when ending: SIGKILL the survivors */
    int exit_code;            /* of the first failure; 0 while none */
} ucr_job_t;

/* ---- options ------------------------------------------------------------ */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " UCR_NAME " -n N [options] PROGRAM [ARGS...]\n"
            "Start N ranks of PROGRAM on this machine under a PMIx server.\n"
            "\n"
            "  -n, -np N              number of ranks (1..%d)\n"
            "  -x VAR[=VALUE]         set VAR for the ranks (VAR alone: pass the current\n"
            "                         value; the whole environment is passed anyway)\n"
            "  --tag-output           prefix each output line with [rank]\n"
            "  --bind-to core|none    bind ranks round-robin to cores (default none)\n"
            "  --report-bindings      print each rank's binding on stderr\n"
            "  --timeout SECONDS      kill the job if it runs longer (exit status 124)\n"
            "  --enable-recovery      let the other ranks run on when a rank fails\n"
            "  -h, --help             this help\n"
            "\n"
            "Ranks read stdin from /dev/null. When a rank fails (non-zero exit, signal,\n"
            "PMIx_Abort, or exit without PMIx_Finalize after PMIx_Init) the others are\n"
            "killed and " UCR_NAME " exits non-zero. With --enable-recovery only\n"
            "PMIx_Abort, --timeout and signals to " UCR_NAME " end the whole job; other\n"
            "failures are reported, the remaining ranks run to their end, and the exit\n"
            "status is that of the first failure.\n",
            UCR_MAX_PROCS);
}

/* Returns 0, or UCR_EXIT_USAGE after printing why; -1 for --help. */
static int parse_opts(int argc, char **argv, ucr_opts_t *opts)
{
    enum { OPT_TAG = 256, OPT_BIND, OPT_REPORT, OPT_TIMEOUT, OPT_RECOVERY };
    static const struct option longopts[] = {
        {"np", required_argument, NULL, 'n'},
        {"tag-output", no_argument, NULL, OPT_TAG},
        {"bind-to", required_argument, NULL, OPT_BIND},
        {"report-bindings", no_argument, NULL, OPT_REPORT},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"enable-recovery", no_argument, NULL, OPT_RECOVERY},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char *end;
    long n;
    int c;

    memset(opts, 0, sizeof(*opts));
    opts->xvars = calloc((size_t)argc, sizeof(char *));
    if (NULL == opts->xvars) {
        fprintf(stderr, UCR_NAME ": out of memory\n");
        return UCR_EXIT_LAUNCHER;
    }
    /* '+': stop at the program; long_only: accept mpirun's "-np 4" */
    while (-1 != (c = getopt_long_only(argc, argv, "+hn:x:", longopts, NULL))) {
        switch (c) {
        case 'n':
            errno = 0;
            n = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || n < 1 || n > UCR_MAX_PROCS) {
                fprintf(stderr, UCR_NAME ": -n '%s': the number of ranks must be 1..%d\n", optarg,
                        UCR_MAX_PROCS);
                return UCR_EXIT_USAGE;
            }
            opts->nprocs = (int)n;
            break;
        case 'x':
            if ('\0' == optarg[0] || '=' == optarg[0]) {
                fprintf(stderr, UCR_NAME ": -x '%s': expected VAR or VAR=VALUE\n", optarg);
                return UCR_EXIT_USAGE;
            }
            opts->xvars[opts->nxvars++] = optarg;
            break;
        case OPT_TAG: opts->tag_output = true; break;
        case OPT_BIND:
            if (0 == strcmp(optarg, "core")) {
                opts->bind_core = true;
            } else if (0 == strcmp(optarg, "none")) {
                opts->bind_core = false;
            } else {
                fprintf(stderr, UCR_NAME ": --bind-to '%s': expected core or none\n", optarg);
                return UCR_EXIT_USAGE;
            }
            break;
        case OPT_REPORT: opts->report_bindings = true; break;
        case OPT_RECOVERY: opts->recovery = true; break;
        case OPT_TIMEOUT:
            errno = 0;
            opts->timeout = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(opts->timeout > 0) ||
                !isfinite(opts->timeout)) {
                fprintf(stderr,
                        UCR_NAME ": --timeout '%s': expected a positive number of seconds\n",
                        optarg);
                return UCR_EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout); return -1;
        default: fprintf(stderr, "Try '" UCR_NAME " --help'.\n"); return UCR_EXIT_USAGE;
        }
    }
    if (0 == opts->nprocs) {
        fprintf(stderr, UCR_NAME ": the number of ranks is missing (-n N)\n");
        fprintf(stderr, "Try '" UCR_NAME " --help'.\n");
        return UCR_EXIT_USAGE;
    }
    if (optind >= argc) {
        fprintf(stderr, UCR_NAME ": no program to run\n");
        fprintf(stderr, "Try '" UCR_NAME " --help'.\n");
        return UCR_EXIT_USAGE;
    }
    opts->argv = &argv[optind];
    return 0;
}

/* ---- environment -------------------------------------------------------- */

static void env_free(char **env)
{
    if (NULL != env) {
        for (char **e = env; *e; ++e) {
            free(*e);
        }
        free(env);
    }
}

/* A malloc'ed copy of env (PMIx_server_setup_fork grows it with realloc). */
static char **env_dup(char *const *env)
{
    size_t n = 0;
    char **copy;

    while (env[n]) {
        ++n;
    }
    copy = calloc(n + 1, sizeof(char *));
    if (NULL == copy) {
        return NULL;
    }
    for (size_t i = 0; i < n; ++i) {
        if (NULL == (copy[i] = strdup(env[i]))) {
            env_free(copy);
            return NULL;
        }
    }
    return copy;
}

/* Set "NAME=VALUE" in *env_p, replacing an existing NAME. Returns 0 or -1. */
static int env_put(char ***env_p, const char *assignment)
{
    size_t namelen = (size_t)(strchr(assignment, '=') - assignment), n = 0;
    char **env = *env_p, *copy = strdup(assignment);

    if (NULL == copy) {
        return -1;
    }
    for (; env[n]; ++n) {
        if (0 == strncmp(env[n], assignment, namelen + 1)) {
            free(env[n]);
            env[n] = copy;
            return 0;
        }
    }
    env = realloc(env, (n + 2) * sizeof(char *));
    if (NULL == env) {
        free(copy);
        return -1;
    }
    env[n] = copy;
    env[n + 1] = NULL;
    *env_p = env;
    return 0;
}

/* The environment every rank starts from: ours plus the -x settings. */
static char **make_base_env(const ucr_opts_t *opts)
{
    char **env = env_dup(environ);

    if (NULL == env) {
        goto err_nomem;
    }
    for (int i = 0; i < opts->nxvars; ++i) {
        const char *x = opts->xvars[i];

        if (NULL == strchr(x, '=')) {
            /* already in the copied environment when set */
            if (NULL == getenv(x)) {
                fprintf(stderr, UCR_NAME ": warning: -x %s: not set in the environment\n", x);
            }
            continue;
        }
        if (0 != env_put(&env, x)) {
            goto err_free;
        }
    }
    return env;

err_free:
    env_free(env);
err_nomem:
    fprintf(stderr, UCR_NAME ": out of memory\n");
    return NULL;
}

/* ---- time --------------------------------------------------------------- */

static struct timespec now_plus_ms(double ms)
{
    struct timespec t;
    double ns;

    clock_gettime(CLOCK_MONOTONIC, &t);
    ns = (double)t.tv_nsec + ms * 1e6;
    t.tv_sec += (time_t)(ns / 1e9);
    t.tv_nsec = (long)fmod(ns, 1e9);
    return t;
}

/* Milliseconds from now until t, rounded up, at least 0. */
static int ms_until(const struct timespec *t)
{
    struct timespec now;
    double ms;

    clock_gettime(CLOCK_MONOTONIC, &now);
    ms = (double)(t->tv_sec - now.tv_sec) * 1e3 + (double)(t->tv_nsec - now.tv_nsec) / 1e6;
    if (ms <= 0) {
        return 0;
    }
    return ms > INT_MAX - 1 ? INT_MAX - 1 : (int)ceil(ms);
}

/* ---- ending the job ----------------------------------------------------- */

/* Send sig to every rank's process group (the rank and what it started). */
static void signal_ranks(ucr_job_t *job, int sig)
{
    for (int r = 0; r < job->nstarted; ++r) {
        if (job->ranks[r].alive && 0 != kill(-job->ranks[r].pid, sig)) {
            kill(job->ranks[r].pid, sig);
        }
    }
}

/*
 * The job failed with exit_code: stop the ranks with sig now and SIGKILL
 * after the grace period. Only the first failure counts (with
 * --enable-recovery, a rank may have failed before).
 *
 * The PMIx server goes first, so that it never watches the ranks die
 * together (see ucr_server_fini). The ranks are stopped meanwhile: they
 * get the signal before they can notice that the server is gone.
 */
static void job_fail(ucr_job_t *job, int exit_code, int sig)
{
    if (job->ending) {
        return;
    }
    job->ending = true;
    if (0 == job->exit_code) {
        job->exit_code = exit_code;
    }
    signal_ranks(job, SIGSTOP); /* nobody runs on without the server */
    /* PMIx 4.2 can deadlock when its finalize races with work its thread
     * is still doing for a rank that just died (lost connection, failed
     * fence). With the ranks stopped nothing new comes in, so a moment
     * lets that work finish; ucr_server_fini's deadline covers the rest. */
    nanosleep(&(struct timespec){.tv_nsec = UCR_QUIESCE_MS * 1000000L}, NULL);
    ucr_server_fini(&job->srv, false);
    signal_ranks(job, sig);
    signal_ranks(job, SIGCONT);
    job->kill_at = now_plus_ms(UCR_KILL_GRACE_MS);
}

/*
 * A rank failed on its own (already reported): end the job, or with
 * --enable-recovery only remember the first failure. The others then run
 * on under the PMIx server, which saw the rank's connection go: PMIx 4.2
 * ends the fences the rank had not joined with an error for the others
 * (PMIX_ERR_PARTIAL_SUCCESS) and acknowledges their finalize as usual.
 * Should a death still upset PMIx's thread (see ucollrun.h), the
 * shutdown's deadline and --timeout bound what it costs.
 */
static void rank_failed(ucr_job_t *job, int exit_code)
{
    if (!job->opts->recovery) {
        job_fail(job, exit_code, SIGTERM);
    } else if (0 == job->exit_code) {
        job->exit_code = exit_code;
    }
}

/* ---- main loop handlers ------------------------------------------------- */

/* After the rank exited: what it wrote is in the pipes (up to 64 KiB each). */
static void drain_rank_output(ucr_rank_t *rank)
{
    ucr_stream_pump(&rank->out, UCR_DRAIN_READS);
    ucr_stream_pump(&rank->err, UCR_DRAIN_READS);
}

static void handle_events(ucr_job_t *job)
{
    ucr_event_t ev;
    ssize_t n;

    while ((n = read(job->ev_rd, &ev, sizeof(ev))) == (ssize_t)sizeof(ev)) {
        if (ev.rank < 0 || ev.rank >= job->opts->nprocs) {
            free(ev.msg);
            continue;
        }
        switch (ev.type) {
        case UCR_EV_CONNECTED: job->ranks[ev.rank].connected = true; break;
        case UCR_EV_FINALIZED:
            job->ranks[ev.rank].finalized = true;
            if (job->ranks[ev.rank].unfinalized_exit) {
                job->ranks[ev.rank].unfinalized_exit = false;
                --job->npending;
            }
            break;
        case UCR_EV_ABORT:
            if (!job->ending) {
                fprintf(stderr, UCR_NAME ": rank %d called abort (status %d): %s\n", ev.rank,
                        ev.status, ev.msg);
                job_fail(job, 0 != (ev.status & 0xff) ? ev.status & 0xff : 1, SIGTERM);
            }
            break;
        }
        free(ev.msg);
    }
}

static void rank_exited(ucr_job_t *job, int r, int status)
{
    ucr_rank_t *rank = &job->ranks[r];
    char name[32];

    rank->alive = false;
    --job->nlive;
    drain_rank_output(rank); /* its last words come before our verdict */
    if (job->ending) {
        return;
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, UCR_NAME ": rank %d killed by signal %s%s\n", r,
                ucr_signame(WTERMSIG(status), name, sizeof(name)),
                WCOREDUMP(status) ? " (core dumped)" : "");
        rank_failed(job, 128 + WTERMSIG(status));
    } else if (0 != WEXITSTATUS(status)) {
        fprintf(stderr, UCR_NAME ": rank %d exited with status %d\n", r, WEXITSTATUS(status));
        rank_failed(job, WEXITSTATUS(status));
    } else if (rank->connected && !rank->finalized) {
        /* its peers may wait for it forever in a collective; but its
         * finalize may still be on its way (see UCR_FINALIZE_GRACE_MS) */
        rank->unfinalized_exit = true;
        rank->verdict_at = now_plus_ms(UCR_FINALIZE_GRACE_MS);
        ++job->npending;
    }
}

static void handle_signals(ucr_job_t *job)
{
    struct signalfd_siginfo si;
    char name[32];
    int status;

    /* PMIx events were posted before the exits they explain */
    handle_events(job);
    while (read(job->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;

        if (SIGCHLD == sig) {
            for (int r = 0; r < job->nstarted; ++r) {
                if (job->ranks[r].alive &&
                    job->ranks[r].pid == waitpid(job->ranks[r].pid, &status, WNOHANG)) {
                    rank_exited(job, r, status);
                }
            }
        } else if (!job->ending) {
            fprintf(stderr, UCR_NAME ": received %s; forwarding it to %d ranks\n",
                    ucr_signame(sig, name, sizeof(name)), job->nlive);
            job_fail(job, 128 + sig, sig);
        } else if (!job->killed) {
            /* asked twice: no more grace */
            signal_ranks(job, SIGKILL);
            job->killed = true;
        }
    }
}

static void check_timers(ucr_job_t *job)
{
    if (!job->ending && job->opts->timeout > 0 && 0 == ms_until(&job->deadline)) {
        fprintf(stderr, UCR_NAME ": job timed out after %g s; killing %d ranks\n",
                job->opts->timeout, job->nlive);
        job_fail(job, UCR_EXIT_TIMEOUT, SIGTERM);
    }
    for (int r = 0; r < job->nstarted && !job->ending; ++r) {
        if (job->ranks[r].unfinalized_exit && 0 == ms_until(&job->ranks[r].verdict_at)) {
            fprintf(stderr,
                    UCR_NAME ": rank %d exited with status 0 without calling PMIx_Finalize\n", r);
            job->ranks[r].unfinalized_exit = false;
            --job->npending;
            rank_failed(job, 1);
        }
    }
    if (job->ending && !job->killed && 0 == ms_until(&job->kill_at)) {
        signal_ranks(job, SIGKILL);
        job->killed = true;
    }
}

static int poll_timeout(const ucr_job_t *job)
{
    int ms;

    if (job->ending) {
        return job->killed ? -1 : ms_until(&job->kill_at);
    }
    ms = job->opts->timeout > 0 ? ms_until(&job->deadline) : -1;
    for (int r = 0; r < job->nstarted; ++r) {
        if (job->ranks[r].unfinalized_exit) {
            int v = ms_until(&job->ranks[r].verdict_at);
            ms = (ms < 0 || v < ms) ? v : ms;
        }
    }
    return ms;
}

/*
 * The one loop: sleep in poll() until a signal, a PMIx event, rank output
 * or a deadline, handle it, and go on until every rank has been reaped.
 */
static int run_loop(ucr_job_t *job)
{
    int nstreams = 2 * job->opts->nprocs;
    struct pollfd *pfds = calloc((size_t)nstreams + 2, sizeof(*pfds));
    ucr_stream_t **streams = calloc((size_t)nstreams, sizeof(*streams));
    int ret = 0;

    if (NULL == pfds || NULL == streams) {
        fprintf(stderr, UCR_NAME ": out of memory\n");
        ret = -1;
        goto out;
    }
    while (job->nlive > 0 || (job->npending > 0 && !job->ending)) {
        int nfds = 2, n;

        pfds[0] = (struct pollfd){.fd = job->sig_fd, .events = POLLIN};
        pfds[1] = (struct pollfd){.fd = job->ev_rd, .events = POLLIN};
        for (int r = 0; r < job->nstarted; ++r) {
            ucr_stream_t *pair[2] = {&job->ranks[r].out, &job->ranks[r].err};

            for (int i = 0; i < 2; ++i) {
                if (pair[i]->fd >= 0) {
                    streams[nfds - 2] = pair[i];
                    pfds[nfds++] = (struct pollfd){.fd = pair[i]->fd, .events = POLLIN};
                }
            }
        }
        n = poll(pfds, (nfds_t)nfds, poll_timeout(job));
        if (n < 0 && EINTR != errno) {
            fprintf(stderr, UCR_NAME ": poll failed: %s\n", strerror(errno));
            ret = -1;
            goto out;
        }
        for (int i = 2; n > 0 && i < nfds; ++i) {
            if (pfds[i].revents) {
                ucr_stream_pump(streams[i - 2], UCR_TURN_READS);
            }
        }
        if (n > 0 && pfds[1].revents) {
            handle_events(job);
        }
        if (n > 0 && pfds[0].revents) {
            handle_signals(job);
        }
        check_timers(job);
    }

out:
    free(streams);
    free(pfds);
    return ret;
}

/* ---- setting up --------------------------------------------------------- */

static void report_binding(const ucr_job_t *job, int r, hwloc_obj_t core)
{
    char *cpus = NULL;

    if (NULL == core) {
        fprintf(stderr, UCR_NAME ": rank %d not bound\n", r);
        return;
    }
    hwloc_bitmap_list_asprintf(&cpus, core->cpuset);
    fprintf(stderr, UCR_NAME ": rank %d bound to %s %u (cpus %s)\n", r,
            hwloc_obj_type_string(core->type), core->logical_index, cpus ? cpus : "?");
    free(cpus);
}

/* Register, fork and exec rank r. Returns 0 or -1 after printing why. */
static int start_rank(ucr_job_t *job, int r, char *const *base_env)
{
    ucr_rank_t *rank = &job->ranks[r];
    hwloc_obj_t core = NULL;
    ucr_spawn_t sp = {.path = job->path, .argv = job->opts->argv, .stdin_fd = job->null_fd};
    int out[2], err[2];
    char **env = env_dup(base_env);
    pid_t pid;

    if (NULL == env) {
        fprintf(stderr, UCR_NAME ": out of memory\n");
        goto err;
    }
    if (0 != ucr_server_setup_rank(&job->srv, r, &env)) {
        goto err_free_env;
    }
    if (0 != pipe2(out, O_CLOEXEC)) {
        fprintf(stderr, UCR_NAME ": pipe: %s\n", strerror(errno));
        goto err_free_env;
    }
    if (0 != pipe2(err, O_CLOEXEC)) {
        fprintf(stderr, UCR_NAME ": pipe: %s\n", strerror(errno));
        goto err_close_out;
    }
    if (job->opts->bind_core) {
        int ncores = hwloc_get_nbobjs_by_type(job->topo, HWLOC_OBJ_CORE);
        hwloc_obj_type_t type = ncores > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;

        core = hwloc_get_obj_by_type(
            job->topo, type, (unsigned)r % (unsigned)hwloc_get_nbobjs_by_type(job->topo, type));
        if (NULL != core) {
            sp.topo = job->topo;
            sp.cpuset = core->cpuset;
        }
    }
    sp.env = env;
    sp.out_fd = out[1];
    sp.err_fd = err[1];
    pid = ucr_spawn(&sp);
    close(out[1]);
    close(err[1]);
    if (pid < 0) {
        close(err[0]);
        goto err_close_out_rd;
    }
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    ucr_stream_init(&rank->out, out[0], STDOUT_FILENO, r, job->opts->tag_output);
    ucr_stream_init(&rank->err, err[0], STDERR_FILENO, r, job->opts->tag_output);
    rank->pid = pid;
    rank->alive = true;
    ++job->nstarted;
    ++job->nlive;
    env_free(env);
    if (job->opts->report_bindings) {
        report_binding(job, r, core);
    }
    return 0;

err_close_out:
    close(out[1]);
err_close_out_rd:
    close(out[0]);
err_free_env:
    env_free(env);
err:
    return -1;
}

/*
 * Everything before the ranks start. Returns 0, or -1 after printing why;
 * ucr_job_cleanup undoes whatever was done either way.
 */
static int job_setup(ucr_job_t *job)
{
    const char *base = getenv("TMPDIR");
    int ev[2];

    if (NULL == base || '\0' == base[0]) {
        base = "/tmp";
    }
    if ((size_t)snprintf(job->tmpdir, sizeof(job->tmpdir), "%s/" UCR_NAME ".XXXXXX", base) >=
        sizeof(job->tmpdir)) {
        fprintf(stderr, UCR_NAME ": TMPDIR is too long\n");
        return -1;
    }
    if (NULL == mkdtemp(job->tmpdir)) {
        fprintf(stderr, UCR_NAME ": cannot create a directory in %s: %s\n", base, strerror(errno));
        job->tmpdir[0] = '\0';
        return -1;
    }
    snprintf(job->nspace, sizeof(job->nspace), UCR_NAME ".%ld", (long)getpid());
    snprintf(job->nsdir, sizeof(job->nsdir), "%s/job", job->tmpdir);
    if (0 != mkdir(job->nsdir, 0700)) {
        fprintf(stderr, UCR_NAME ": mkdir %s: %s\n", job->nsdir, strerror(errno));
        return -1;
    }
    if (0 != pipe2(ev, O_CLOEXEC)) {
        fprintf(stderr, UCR_NAME ": pipe: %s\n", strerror(errno));
        return -1;
    }
    job->ev_rd = ev[0];
    job->ev_wr = ev[1];
    fcntl(job->ev_rd, F_SETFL, O_NONBLOCK);
    job->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->null_fd < 0) {
        fprintf(stderr, UCR_NAME ": /dev/null: %s\n", strerror(errno));
        return -1;
    }
    job->ranks = calloc((size_t)job->opts->nprocs, sizeof(*job->ranks));
    if (NULL == job->ranks) {
        fprintf(stderr, UCR_NAME ": out of memory\n");
        return -1;
    }
    for (int r = 0; r < job->opts->nprocs; ++r) {
        job->ranks[r].out.fd = job->ranks[r].err.fd = -1;
    }
    if (job->opts->bind_core || job->opts->report_bindings) {
        if (0 != hwloc_topology_init(&job->topo)) {
            fprintf(stderr, UCR_NAME ": hwloc_topology_init failed\n");
            return -1;
        }
        if (0 != hwloc_topology_load(job->topo)) {
            fprintf(stderr, UCR_NAME ": hwloc_topology_load failed\n");
            return -1;
        }
    }
    if (0 != ucr_server_init(&job->srv, job->tmpdir, job->ev_wr)) {
        return -1;
    }
    if (0 != ucr_server_register_job(&job->srv, job->nspace, job->opts->nprocs, job->tmpdir,
                                     job->nsdir)) {
        return -1;
    }
    return 0;
}

static void job_cleanup(ucr_job_t *job)
{
    if (NULL != job->ranks) {
        for (int r = 0; r < job->nstarted; ++r) {
            /* the ranks are gone: what is in the pipes is all there is */
            drain_rank_output(&job->ranks[r]);
            ucr_stream_close(&job->ranks[r].out);
            ucr_stream_close(&job->ranks[r].err);
        }
    }
    ucr_server_fini(&job->srv, true); /* no PMIx callback runs after this */
    if (NULL != job->topo) {
        hwloc_topology_destroy(job->topo);
    }
    if (job->null_fd >= 0) {
        close(job->null_fd);
    }
    if (job->ev_rd >= 0) {
        ucr_event_t ev;

        while (read(job->ev_rd, &ev, sizeof(ev)) == (ssize_t)sizeof(ev)) {
            free(ev.msg);
        }
        close(job->ev_rd);
    }
    if (job->ev_wr >= 0 && !job->srv.stuck) {
        close(job->ev_wr); /* PMIx is down: nobody writes any more */
    }
    if ('\0' != job->tmpdir[0]) {
        ucr_rmtree(job->tmpdir);
    }
    free(job->ranks);
}

/* Run the job described by opts; returns the launcher's exit status. */
static int job_run(const ucr_opts_t *opts, char *path, int sig_fd)
{
    ucr_job_t job = {
        .opts = opts, .path = path, .sig_fd = sig_fd, .ev_rd = -1, .ev_wr = -1, .null_fd = -1};
    char **base_env = NULL;

    job.srv.ev_fd = -1;
    if (0 != job_setup(&job) || NULL == (base_env = make_base_env(opts))) {
        job.exit_code = UCR_EXIT_LAUNCHER;
        goto out;
    }
    if (opts->timeout > 0) {
        job.deadline = now_plus_ms(opts->timeout * 1e3);
    }
    for (int r = 0; r < opts->nprocs; ++r) {
        if (0 != start_rank(&job, r, base_env)) {
            job_fail(&job, UCR_EXIT_LAUNCHER, SIGTERM);
            break;
        }
    }
    if (0 != run_loop(&job)) {
        /* cannot watch the ranks any more: make sure none survives */
        signal_ranks(&job, SIGKILL);
        for (int r = 0; r < job.nstarted; ++r) {
            if (job.ranks[r].alive) {
                waitpid(job.ranks[r].pid, NULL, 0);
            }
        }
        job.exit_code = UCR_EXIT_LAUNCHER;
    }

out:
    env_free(base_env);
    job_cleanup(&job);
    if (job.srv.stuck) {
        /* PMIx's threads are still there, maybe holding locks that exit()
         * would wait for: leave without running any exit handler */
        fflush(NULL);
        _exit(job.exit_code ? job.exit_code : UCR_EXIT_LAUNCHER);
    }
    return job.exit_code;
}

int main(int argc, char **argv)
{
    static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    ucr_opts_t opts;
    sigset_t handled;
    char *path;
    int sig_fd, ret;

    ret = parse_opts(argc, argv, &opts);
    if (0 != ret) {
        free(opts.xvars);
        return ret < 0 ? 0 : ret;
    }
    path = ucr_find_program(opts.argv[0]);
    if (NULL == path) {
        ret = ENOENT == errno ? 127 : 126;
        fprintf(stderr, UCR_NAME ": %s: %s\n", opts.argv[0],
                127 == ret ? "command not found" : strerror(errno));
        goto out_opts;
    }

    /* before any thread exists, so that PMIx's thread inherits the mask and
     * these signals are only ever read from the signalfd. A signal we were
     * started with ignored (nohup, a background job) stays ignored, for us
     * and for the ranks. */
    sigemptyset(&handled);
    sigaddset(&handled, SIGCHLD);
    for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); ++i) {
        struct sigaction old;

        if (0 == sigaction(forwarded[i], NULL, &old) && SIG_IGN != old.sa_handler) {
            sigaddset(&handled, forwarded[i]);
        }
    }
    sigprocmask(SIG_BLOCK, &handled, NULL);
    signal(SIGPIPE, SIG_IGN);
    sig_fd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sig_fd < 0) {
        fprintf(stderr, UCR_NAME ": signalfd: %s\n", strerror(errno));
        ret = UCR_EXIT_LAUNCHER;
        goto out_path;
    }

    ret = job_run(&opts, path, sig_fd);
    close(sig_fd);

out_path:
    free(path);
out_opts:
    free(opts.xvars);
    return ret;
}

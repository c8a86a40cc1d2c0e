/*
 * ucollrun internals: a single-machine PMIx server that starts N ranks of a
 * program, forwards their output and watches them.
 *
 * Threads: the main thread runs one poll() loop (ucollrun.c) over a signalfd,
 * the rank output pipes and the event pipe. PMIx's own progress thread runs
 * the server module callbacks (server.c); they touch no launcher state and
 * only post ucr_event_t records into the event pipe, so nothing is shared
 * between the two threads except that pipe.
 */
#ifndef UCOLLRUN_H
#define UCOLLRUN_H

#include <pmix.h>
#include <pmix_server.h>

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define UCR_NAME "ucollrun"

/* ---- server.c: the PMIx server ---------------------------------------- */

typedef enum {
    UCR_EV_CONNECTED, /* a rank's PMIx_Init reached the server */
    UCR_EV_FINALIZED, /* a rank called PMIx_Finalize */
    UCR_EV_ABORT      /* a rank called PMIx_Abort */
} ucr_event_type_t;

/*
 * One event from PMIx's thread to the main loop, written whole into a pipe
 * (smaller than PIPE_BUF, so writes never tear). msg is set for
 * UCR_EV_ABORT only; it is malloc'ed and the reader frees it.
 */
typedef struct ucr_event {
    ucr_event_type_t type;
    int rank;
    int status;
    char *msg;
} ucr_event_t;

typedef struct ucr_server ucr_server_t;

/* What PMIx hands back to the module as server_object for a client. */
typedef struct ucr_client {
    const ucr_server_t *srv;
    int rank;
} ucr_client_t;

/*
 * The server state. Owned by the main thread; the PMIx thread reads only
 * ev_fd and the ucr_client_t array (both immutable while clients run).
 */
struct ucr_server {
    char nspace[PMIX_MAX_NSLEN + 1];
    int nprocs;
    int ev_fd;             /* write end of the event pipe */
    ucr_client_t *clients; /* nprocs entries */
    int nregistered;       /* clients registered so far */
    bool nspace_registered;
    bool initialized;
    bool stuck; /* PMIx did not shut down: its threads may still run */
};

/*
 * Start the PMIx server library with its rendezvous files in tmpdir (which
 * must exist and be private to this job); ev_fd is the write end of the
 * event pipe. On failure prints why and returns -1, and the server needs no
 * ucr_server_fini.
 */
int ucr_server_init(ucr_server_t *srv, const char *tmpdir, int ev_fd);

/*
 * Register the job's namespace for nprocs ranks, all on this host, with the
 * job, node, app and per-rank information PMIx clients query. Returns 0 or
 * -1 after printing why.
 */
int ucr_server_register_job(ucr_server_t *srv, const char *nspace, int nprocs, const char *tmpdir,
                            const char *nsdir);

/*
 * Register rank as a client and add the variables it needs to reach the
 * server to *env_p (a malloc'ed, NULL-terminated array of malloc'ed strings
 * that PMIx may grow). Must complete before the rank is forked. Returns 0
 * or -1 after printing why.
 */
int ucr_server_setup_rank(ucr_server_t *srv, int rank, char ***env_p);

/*
 * Stop the server. Returns 0 once it is down and no module callback can run
 * any more. Returns -1 and sets srv->stuck when PMIx did not shut down
 * within a few seconds: its threads may then still run, and may still use
 * srv->clients and the event pipe, so the caller keeps both and should
 * leave with _exit(). Idempotent; safe on a partly set up server.
 *
 * ranks_gone: every rank has been reaped, so the clients and the namespace
 * are deregistered first. Pass false to stop the server under live ranks
 * that are about to be killed: PMIx 4.2 must then see no client die.
 * When several clients of an unfinished local fence die at once, its
 * lost-connection handling completes the fence once per dead client and
 * frees the tracker twice (use after free, crash or deadlock in PMIx's
 * thread). Deregistering the namespace under live clients is not safe
 * either, so it is skipped: the process exits right after anyway.
 */
int ucr_server_fini(ucr_server_t *srv, bool ranks_gone);

/* ---- io.c: line-buffered forwarding of rank output --------------------- */

/*
 * Forwards one rank's stdout or stderr pipe to the launcher's own fd, whole
 * lines at a time, optionally tagged "[rank] ". buf is owned by the stream
 * and released by ucr_stream_close.
 */
typedef struct ucr_stream {
    int fd;     /* read end, non-blocking; -1 once closed */
    int out_fd; /* STDOUT_FILENO or STDERR_FILENO */
    int rank;
    bool tag;
    bool broken; /* out_fd's reader is gone */
    char *buf;   /* bytes of a line not yet complete */
    size_t len;
    size_t cap;
} ucr_stream_t;

void ucr_stream_init(ucr_stream_t *s, int fd, int out_fd, int rank, bool tag);

/*
 * Read what the pipe has now, at most max_reads chunks of 64 KiB (so that
 * a rank that writes without pause cannot starve the main loop), and write
 * out every complete line. Returns true while the pipe is open, false once
 * it reached end of file (the stream is then closed, its last partial line
 * written with a newline).
 */
bool ucr_stream_pump(ucr_stream_t *s, int max_reads);

/* Write out a partial line (newline added), close the pipe, free buffers. */
void ucr_stream_close(ucr_stream_t *s);

/* write(2) all of buf, retrying on EINTR. Returns 0, or -1 with errno set. */
int ucr_write_all(int fd, const char *buf, size_t len);

/* ---- proc.c: starting ranks -------------------------------------------- */

/*
 * Find program the way execvp would (a name with a '/' is taken as is,
 * otherwise each PATH entry is tried). Returns a malloc'ed path of an
 * executable regular file, or NULL with errno set.
 */
char *ucr_find_program(const char *program);

/* What the child needs to become rank `rank`. */
typedef struct ucr_spawn {
    const char *path;  /* resolved program */
    char *const *argv; /* argv[0] as the user typed it */
    char *const *env;
    int stdin_fd;                /* dup'ed to 0 */
    int out_fd;                  /* write end of the stdout pipe, dup'ed to 1 */
    int err_fd;                  /* write end of the stderr pipe, dup'ed to 2 */
    hwloc_topology_t topo;       /* NULL: no binding */
    hwloc_const_cpuset_t cpuset; /* set when topo is */
} ucr_spawn_t;

/*
 * Fork a rank in its own process group, with the default signal mask and
 * dispositions, bound to sp->cpuset when given, and exec the program. In
 * the child, failures print on the rank's stderr and exit 127. Returns the
 * pid, or -1 after printing why.
 */
pid_t ucr_spawn(const ucr_spawn_t *sp);

/* "SIGSEGV" for SIGSEGV; "signal 77" style for unknown ones. buf >= 32. */
const char *ucr_signame(int sig, char *buf, size_t len);

/* Remove path and everything below it; errors are ignored. */
void ucr_rmtree(const char *path);

#endif

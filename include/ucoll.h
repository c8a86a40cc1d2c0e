/*
 * ucoll: a collectives runtime on OpenUCX (UCP), bootstrapped through PMIx.
 *
 * This is the only header users include. Every function returns UCOLL_OK (0)
 * or a negative UCOLL_ERR_* code; ucoll_strerror() turns a code into text.
 * Counts are element counts of the given datatype.
 *
 * Threading: a context and everything made from it are used by one thread at
 * a time. Several contexts may live in one process.
 */
#ifndef UCOLL_H
#define UCOLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ------------------------------------------------------ */

enum {
    UCOLL_OK = 0,
    UCOLL_ERR_ARG = -1,        /* invalid argument (rank, root, count, type, op, buffer) */
    UCOLL_ERR_NOMEM = -2,      /* out of memory */
    UCOLL_ERR_TRUNCATE = -3,   /* message longer than the receive buffer */
    UCOLL_ERR_TRANSPORT = -4,  /* UCX reported an error */
    UCOLL_ERR_BOOTSTRAP = -5,  /* PMIx (or the launcher) is not reachable or failed */
    UCOLL_ERR_TIMEOUT = -6,    /* an operation did not complete in time */
    UCOLL_ERR_PEER = -7,       /* a peer process died or became unreachable */
    UCOLL_ERR_UNSUPPORTED = -8, /* the operation or combination is not supported */
    UCOLL_ERR_BUSY = -9         /* the object still has operations in progress */
};

/* A static string describing status; never NULL, also for unknown codes. */
const char *ucoll_strerror(int status);

/* ---- datatypes and reduction ops -------------------------------------- */

typedef enum {
    UCOLL_BYTE,
    UCOLL_INT8,
    UCOLL_UINT8,
    UCOLL_INT16,
    UCOLL_UINT16,
    UCOLL_INT32,
    UCOLL_UINT32,
    UCOLL_INT64,
    UCOLL_UINT64,
    UCOLL_FLOAT16,
    UCOLL_BFLOAT16,
    UCOLL_FLOAT32,
    UCOLL_FLOAT64,
    UCOLL_DTYPE_LAST
} ucoll_dtype_t;

typedef enum {
    UCOLL_SUM,
    UCOLL_PROD,
    UCOLL_MIN,
    UCOLL_MAX,
    UCOLL_LAND,
    UCOLL_LOR,
    UCOLL_LXOR,
    UCOLL_BAND,
    UCOLL_BOR,
    UCOLL_BXOR,
    UCOLL_OP_LAST
} ucoll_op_t;

/* Size in bytes of one element of dt; 0 for an invalid datatype. */
size_t ucoll_dtype_size(ucoll_dtype_t dt);

/* Passed as the send buffer of a collective where MPI allows MPI_IN_PLACE. */
#define UCOLL_IN_PLACE   ((void *)(intptr_t)1)
#define UCOLL_ANY_SOURCE (-1)
#define UCOLL_ANY_TAG    (-1)

/* Largest tag a user may pass (tags are 0..UCOLL_TAG_UB). */
#define UCOLL_TAG_UB 0x3fffffff

/* ---- life cycle -------------------------------------------------------- */

typedef struct ucoll_ctx ucoll_ctx_t;
typedef struct ucoll_comm ucoll_comm_t;
typedef struct ucoll_req ucoll_req_t;

/*
 * Bootstrap through PMIx (or run as a singleton of size 1 when the process
 * was started without any launcher), create the UCP context and worker and
 * exchange worker addresses. On success *ctx holds a context that the caller
 * releases with ucoll_finalize(). On failure *ctx is untouched and the error
 * (UCOLL_ERR_BOOTSTRAP, UCOLL_ERR_TRANSPORT, UCOLL_ERR_NOMEM) has been
 * explained on stderr.
 */
int ucoll_init(ucoll_ctx_t **ctx);

/*
 * Bootstrap through the caller instead of a launcher: a framework that has
 * its own rendezvous (torch's store, an MPI library, a job script) gives its
 * rank, size and an allgather. Everything ucoll_init does after the
 * bootstrap is the same.
 */
typedef struct ucoll_oob {
    int rank; /* this process, 0 <= rank < size */
    int size; /* number of processes */
    /*
     * Collective over the size processes: each contributes len bytes from
     * in; out receives size * len bytes, rank r's at offset r * len. Every
     * process calls it the same number of times with the same len (ucoll
     * calls it during ucoll_init_oob, ucoll_comm_split is not among the
     * callers, and once in ucoll_finalize). Return 0 on success; anything
     * else fails the ucoll call in progress with UCOLL_ERR_BOOTSTRAP.
     */
    int (*allgather)(void *arg, const void *in, void *out, size_t len);
    void *arg; /* passed to allgather */
    /*
     * The node this process runs on: equal for the processes of one node,
     * different between nodes. Negative: ucoll finds out itself (host name
     * and kernel boot id, exchanged through allgather).
     */
    long node_id;
} ucoll_oob_t;

/*
 * As ucoll_init, bootstrapped by oob (copied; oob->allgather and oob->arg
 * must stay usable until ucoll_finalize returns). UCOLL_ERR_ARG for a bad
 * rank/size or a NULL callback; UCOLL_ERR_BOOTSTRAP when allgather fails or
 * the processes disagree on the size.
 */
int ucoll_init_oob(const ucoll_oob_t *oob, ucoll_ctx_t **ctx);

/*
 * Flush and close every endpoint, free every communicator, destroy the UCP
 * worker and context and finalize PMIx. Outstanding requests are cancelled:
 * sends still waiting get a few seconds to complete, then everything still
 * posted is withdrawn, and nothing is written into any request's buffer
 * once this returns; the requests are freed with the context. Ranks known
 * to have failed are not waited for.
 */
int ucoll_finalize(ucoll_ctx_t *ctx);

/* The communicator of all ranks of the job; owned by the context. */
ucoll_comm_t *ucoll_comm_world(ucoll_ctx_t *ctx);
int ucoll_comm_rank(const ucoll_comm_t *comm);
int ucoll_comm_size(const ucoll_comm_t *comm);

/*
 * Collective over comm: ranks with the same color form a new communicator,
 * ordered by (key, rank in comm). color < 0 leaves the rank out: *out = NULL.
 * The new communicator is freed with ucoll_comm_free().
 */
int ucoll_comm_split(ucoll_comm_t *comm, int color, int key, ucoll_comm_t **out);

/*
 * Free a communicator made by ucoll_comm_split (not the world). Local: it
 * does not wait for the other members.
 *
 * Operations on comm that are not complete yet (point-to-point or
 * collective, and what a blocking call that timed out could not withdraw)
 * make it fail with UCOLL_ERR_BUSY and change nothing: complete them first
 * (ucoll_wait, ucoll_test), then free. Requests that are complete but not
 * yet handed to ucoll_test/ucoll_wait do not count and stay valid.
 *
 * Messages that other members sent on comm and no receive took are dropped,
 * those already queued here and those that arrive later alike: an eager
 * message's credits go back to its sender, and a rendezvous sender is
 * answered, so that its send completes (with UCOLL_OK, as for a receive too
 * small) instead of waiting forever with its buffer pinned.
 */
int ucoll_comm_free(ucoll_comm_t *comm);

/* One pass of the progress engine: drives UCX and completes requests.
 * Returns how many things moved (UCX events, executor steps, shared-memory
 * steps; 0 when nothing did, so a caller polling in a loop can back off),
 * or UCOLL_ERR_ARG for a NULL context. Never blocks. */
int ucoll_progress(ucoll_ctx_t *ctx);

/* ---- point to point ---------------------------------------------------- */

typedef struct {
    int source; /* rank in the communicator that sent the message */
    int tag;
    size_t bytes; /* size of the message as sent (also when truncated) */
    int error;    /* UCOLL_OK or the request's error */
} ucoll_status_t;

int ucoll_isend(const void *buf, size_t count, ucoll_dtype_t dt, int dst, int tag,
                ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_irecv(void *buf, size_t count, ucoll_dtype_t dt, int src, int tag, ucoll_comm_t *comm,
                ucoll_req_t **req);
int ucoll_send(const void *buf, size_t count, ucoll_dtype_t dt, int dst, int tag,
               ucoll_comm_t *comm);
/* status may be NULL */
int ucoll_recv(void *buf, size_t count, ucoll_dtype_t dt, int src, int tag, ucoll_comm_t *comm,
               ucoll_status_t *status);
/* *done = 1 when complete; then the request is freed and its error returned. */
int ucoll_test(ucoll_req_t *req, int *done, ucoll_status_t *status);
/* Waits for completion, frees req and returns its error. */
int ucoll_wait(ucoll_req_t *req, ucoll_status_t *status);
/* Waits for all n requests (NULL entries are skipped), frees them and sets
 * each entry to NULL; returns the first error met. */
int ucoll_waitall(size_t n, ucoll_req_t **reqs);

/* ---- collectives ------------------------------------------------------- */
/* Semantics follow MPI's: root-only arguments, UCOLL_IN_PLACE rules,
 * displacements in elements, rank order in gathered buffers, exscan leaves
 * rank 0's buffer untouched. Every rank calls the same collectives in the
 * same order.
 *
 * Peer failure. When a process of the job dies (or becomes unreachable),
 * the first rank to notice tells every other live rank, and each of them
 * tells the rest once (so the news survives the death of its teller). From
 * then on, on every live rank:
 *  - a collective in progress on a communicator that has the dead process
 *    as a member ends with UCOLL_ERR_PEER, also where this rank never
 *    exchanges data with it; its buffers are no longer written once the
 *    call has returned (or its request completed). A rank that had
 *    everything it needed before the death may return UCOLL_OK with the
 *    right result instead (a bcast leaf, say): like MPI, failure is not
 *    reported uniformly for a call already under way;
 *  - a new collective on such a communicator fails at once with
 *    UCOLL_ERR_PEER, with no communication;
 *  - communicators without the dead process (split before the failure)
 *    go on working, point-to-point between live ranks too.
 * No UCOLL_TIMEOUT is needed for this: detection takes about 0.1 s on one
 * node (liveness watch) and the time UCX takes to see a closed connection
 * elsewhere. ucoll_finalize on the survivors then completes (under a
 * launcher that lets them live on: ucollrun --enable-recovery, or Open
 * MPI's mpirun --enable-recovery). */

int ucoll_barrier(ucoll_comm_t *comm);
int ucoll_bcast(void *buf, size_t count, ucoll_dtype_t dt, int root, ucoll_comm_t *comm);

/* Coalesced broadcast: the bytes of niov buffers, taken in order as one
 * message, from root to every rank, as a single bcast of their total (a
 * model's tensors without flattening them into one buffer). The total must
 * be the same on every rank; the split may differ (entries of 0 bytes are
 * allowed, and their buf may then be NULL). Where the broadcast goes through
 * shared memory the pieces are copied straight from root's buffers into the
 * region and out into the others'; elsewhere the library packs them into
 * one staging buffer (root) and unpacks it (the others). The iov array
 * itself may be reused as soon as the call returns. UCOLL_ERR_ARG: iov
 * NULL with niov > 0, an entry with NULL buf and len > 0. */
typedef struct ucoll_iov {
    void *buf;
    size_t len; /* bytes */
} ucoll_iov_t;
int ucoll_bcast_iov(const ucoll_iov_t *iov, size_t niov, int root, ucoll_comm_t *comm);
int ucoll_reduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                 int root, ucoll_comm_t *comm);
int ucoll_allreduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                    ucoll_comm_t *comm);
int ucoll_gather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                 ucoll_comm_t *comm);
int ucoll_gatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                  const size_t *displs, ucoll_dtype_t dt, int root, ucoll_comm_t *comm);
int ucoll_scatter(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                  ucoll_comm_t *comm);
int ucoll_scatterv(const void *sbuf, const size_t *scounts, const size_t *displs, void *rbuf,
                   size_t rcount, ucoll_dtype_t dt, int root, ucoll_comm_t *comm);
int ucoll_allgather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                    ucoll_comm_t *comm);
int ucoll_allgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                     const size_t *displs, ucoll_dtype_t dt, ucoll_comm_t *comm);
int ucoll_alltoall(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                   ucoll_comm_t *comm);
int ucoll_alltoallv(const void *sbuf, const size_t *scounts, const size_t *sdispls, void *rbuf,
                    const size_t *rcounts, const size_t *rdispls, ucoll_dtype_t dt,
                    ucoll_comm_t *comm);
int ucoll_reduce_scatter_block(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                               ucoll_op_t op, ucoll_comm_t *comm);
int ucoll_reduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts, ucoll_dtype_t dt,
                         ucoll_op_t op, ucoll_comm_t *comm);
int ucoll_scan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
               ucoll_comm_t *comm);
int ucoll_exscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                 ucoll_comm_t *comm);

/* Nonblocking twins: same arguments plus the request, completed by
 * ucoll_test/ucoll_wait. Buffers must stay valid until completion. */
int ucoll_ibarrier(ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_ibcast(void *buf, size_t count, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                 ucoll_req_t **req);
int ucoll_ibcast_iov(const ucoll_iov_t *iov, size_t niov, int root, ucoll_comm_t *comm,
                     ucoll_req_t **req);
int ucoll_ireduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                  int root, ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iallreduce(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                     ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_igather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                  ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_igatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                   const size_t *displs, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                   ucoll_req_t **req);
int ucoll_iscatter(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, int root,
                   ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iscatterv(const void *sbuf, const size_t *scounts, const size_t *displs, void *rbuf,
                    size_t rcount, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                    ucoll_req_t **req);
int ucoll_iallgather(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                     ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iallgatherv(const void *sbuf, size_t scount, void *rbuf, const size_t *rcounts,
                      const size_t *displs, ucoll_dtype_t dt, ucoll_comm_t *comm,
                      ucoll_req_t **req);
int ucoll_ialltoall(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                    ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_ialltoallv(const void *sbuf, const size_t *scounts, const size_t *sdispls, void *rbuf,
                     const size_t *rcounts, const size_t *rdispls, ucoll_dtype_t dt,
                     ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_ireduce_scatter_block(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt,
                                ucoll_op_t op, ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_ireduce_scatter(const void *sbuf, void *rbuf, const size_t *rcounts, ucoll_dtype_t dt,
                          ucoll_op_t op, ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                ucoll_comm_t *comm, ucoll_req_t **req);
int ucoll_iexscan(const void *sbuf, void *rbuf, size_t count, ucoll_dtype_t dt, ucoll_op_t op,
                  ucoll_comm_t *comm, ucoll_req_t **req);

/* ---- introspection ----------------------------------------------------- */

/* Version string of ucoll ("0.1.0"). */
const char *ucoll_version(void);

/* Number of ranks on this node and this rank's index among them. */
int ucoll_local_rank(const ucoll_ctx_t *ctx);
int ucoll_local_size(const ucoll_ctx_t *ctx);

/* Names of the UCX transports used to reach the given world rank, e.g.
 * "posix/memory cma/memory" (connects the endpoint if needed). Writes at most
 * len bytes including the terminating zero. */
int ucoll_peer_transports(ucoll_ctx_t *ctx, int world_rank, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* UCOLL_H */

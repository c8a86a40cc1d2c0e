/*
 * Collective algorithms: a registry per operation and the selection logic.
 *
 * Each algorithm lives in lib/algos/<op>/<id>.c and exposes one
 * ucoll_algo_t row; lib/algos/<op>/<op>.c holds the operation's registry
 * (its rows), the API entry points (ucoll_<op>, ucoll_i<op>) and its default
 * selection. An algorithm only builds a schedule (progress/sched.h) for the
 * calling rank from (rank, p, root, counts, parameters); it never touches
 * the network.
 */
#ifndef UCOLL_ALGOS_H
#define UCOLL_ALGOS_H

#include "core.h"

#include <stdio.h>
#include "progress/sched.h"

/* Everything a collective call said, normalised by the API entry point. */
typedef struct ucoll_coll_args {
    ucoll_coll_t coll;
    const void *sbuf; /* already resolved: never UCOLL_IN_PLACE */
    void *rbuf;
    int in_place;                    /* the caller passed UCOLL_IN_PLACE */
    size_t count;                    /* elements: whole vector, or per rank/block */
    size_t scount, rcount;           /* v-variants: this rank's counts */
    const size_t *scounts, *sdispls; /* v-variants (elements) */
    const size_t *rcounts, *rdispls;
    ucoll_dtype_t dt;
    ucoll_op_t op;
    int root;
    size_t esize; /* ucoll_dtype_size(dt) */
    /* bcast_iov through shared memory: the buffers (rbuf NULL, count the
     * total bytes); owned by the request until it completes */
    const ucoll_iov_t *iov;
    size_t niov;
} ucoll_coll_args_t;

/* Parameters the selection passes to an algorithm (0 = algorithm's own
 * default). */
/* Hockney model parameters, seconds and seconds per byte. wake is the part
 * of alpha paid once per round rather than once per message: the wait for a
 * descheduled peer when ranks outnumber processing units (0 otherwise).
 * Messages that one rank sends or receives together in a round overlap
 * their wake-ups, so such a round costs ucoll__model_fanout(m, n). */
typedef struct ucoll_model {
    double alpha, beta, gamma, lambda;
    double wake;
    /* shared memory (UCOLL_ALGO_SHM rows): seconds until a flag one rank
     * stores is seen by another that polls it; copies cost lambda */
    double shm_alpha;
} ucoll_model_t;

/* Start-up time of a round of n messages sent (or received) together:
 * alpha + (n - 1)(alpha - wake). Equal to n·alpha when wake = 0. */
static inline double ucoll__model_fanout(const ucoll_model_t *m, int n)
{
    return n <= 0 ? 0 : m->alpha + (n - 1) * (m->alpha - m->wake);
}

typedef struct ucoll_algo_params {
    size_t seg_size;     /* bytes per segment for pipelined algorithms */
    unsigned radix;      /* k for k-nomial, k-ary, k-chain */
    ucoll_model_t model; /* the selection's model; all zero: ucoll__model_default */
    size_t shm_data;     /* bytes of a rank's shared data area (UCOLL_SHM_SIZE less
                          * the control lines); 0 without shared memory */
    int shm_way;         /* shm reduce/allreduce rows: ucoll_shm_way_t, AUTO = model */
    size_t shm_stream;   /* shm bcast, allgather, alltoall rows: copies into a region
                          * from this many bytes stream past the cache (0: never);
                          * UCOLL_SHM_STREAM_MIN or a tuning rule's stream= */
    int shm_stream_adapt; /* ... chosen per call by measurement (UCOLL_SHM_STREAM_ADAPT;
                           * not under a rule's stream=, which fixes it) */
    int shm_way_adapt;    /* shm reduce/allreduce rows with shm_way AUTO: the way chosen
                           * per call by measurement (ucoll_shm_way_adapt_t) */
    /* the call's sequence number, for rows with start that send messages
     * (ucoll__phased_start); set where the call selects, and such rows
     * serve only calls that are not cached (v-variants) */
    int tag;
    /* two-level rows (UCOLL_ALGO_HIER) on a communicator across nodes: its
     * nodes, the members of the largest, whether node levels may use shared
     * memory, and the model of a path inside a node */
    int nnodes, ppn, node_shm;
    ucoll_model_t node_model;
    /* set by selection where the model took the shm row of a call that
     * UCOLL_SHM_DUEL times against a message-based row: that row, the
     * model's best of them (NULL: none) */
    const struct ucoll_algo *rival;
} ucoll_algo_params_t;

/* Whether the shm reduce and allreduce rows choose their way per call
 * (UCOLL_SHM_WAY_ADAPT; auto: where the model has no wake-up cost, every
 * rank with a processing unit). From agreed inputs only. */
static inline int ucoll__shm_way_adapt_on(const ucoll_algo_params_t *prm)
{
    return prm->shm_way_adapt == UCOLL_SHM_WAY_ADAPT_ON ||
           prm->shm_way_adapt == UCOLL_SHM_WAY_ADAPT_TURN ||
           (prm->shm_way_adapt == UCOLL_SHM_WAY_ADAPT_AUTO && prm->model.wake == 0);
}

typedef struct ucoll_algo {
    const char *id;   /* as in ALGORITHMS.md, e.g. "binomial" */
    const char *desc; /* one line */
    /* 1 if the algorithm can serve this call on p ranks (e.g. needs a power
     * of two, count >= p); NULL means always. */
    int (*can_serve)(const ucoll_coll_args_t *a, int p);
    /* Predicted time in seconds under model m; NULL = not modelled. */
    double (*cost)(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                   const ucoll_model_t *m);
    /* Append this rank's steps for the call to s. NULL for the rows that
     * run without a schedule (start). */
    int (*build)(ucoll_sched_t *s, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm);
    /* Rows without a schedule (flag UCOLL_ALGO_SHM): start the call on comm
     * for req, which completes when the call does. UCOLL_OK or an error
     * (then req is untouched). */
    int (*start)(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                 ucoll_req_t *req);
    unsigned flags; /* UCOLL_ALGO_* */
    /* The parameters the call runs with on p ranks (those prm leaves to
     * the model: segment size, radix, way), written to buf in the tuning
     * file's words ("seg=65536 radix=2"); NULL where the row has none. */
    void (*params)(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm, char *buf,
                   size_t len);
} ucoll_algo_t;

/* The row runs through the communicator's shared memory (lib/algos/shm.c):
 * selection considers it only where that is on (the same on every rank). */
#define UCOLL_ALGO_SHM 1u
/* The row runs in two levels, inside nodes and between their leaders
 * (lib/algos/hier.c): considered only on communicators that can
 * (comm->hier_able, the same on every member). */
#define UCOLL_ALGO_HIER 2u

/* The two-level rows (lib/algos/hier.c). */
extern const ucoll_algo_t ucoll__barrier_hier, ucoll__bcast_hier, ucoll__reduce_hier,
    ucoll__allreduce_hier, ucoll__allgather_hier;
/* Free comm's two-level state (its internal communicators); calls still
 * pending end with an error. */
void ucoll__hier_destroy(ucoll_comm_t *comm);
/* comm has two-level calls not yet complete. */
int ucoll__hier_busy(const ucoll_comm_t *comm);

/* ucoll_algo_t.params's words: "seg=S" when seg, "radix=R" when radix. */
static inline void ucoll__params_words(char *buf, size_t len, size_t seg, int radix)
{
    if (seg && radix) {
        snprintf(buf, len, "seg=%zu radix=%d", seg, radix);
    } else if (seg) {
        snprintf(buf, len, "seg=%zu", seg);
    } else if (radix) {
        snprintf(buf, len, "radix=%d", radix);
    }
}

/* The registry of one operation: NULL-terminated list of algorithms. */
const ucoll_algo_t *const *ucoll__algos(ucoll_coll_t coll);

/* Registries of the data-movement collectives, one per operation, each
 * NULL-terminated, defined in lib/algos/<op>/<op>.c (gatherv in
 * gather/gatherv.c, and so on); ucoll__algos() returns them. */
extern const ucoll_algo_t *const ucoll__gather_algos[];
extern const ucoll_algo_t *const ucoll__gatherv_algos[];
extern const ucoll_algo_t *const ucoll__scatter_algos[];
extern const ucoll_algo_t *const ucoll__scatterv_algos[];
extern const ucoll_algo_t *const ucoll__allgather_algos[];
extern const ucoll_algo_t *const ucoll__allgatherv_algos[];
extern const ucoll_algo_t *const ucoll__alltoall_algos[];
extern const ucoll_algo_t *const ucoll__alltoallv_algos[];

/* Pick the algorithm for a call: forced by UCOLL_<OP>_ALGO if it can serve
 * (else fall back and log why at debug level), else the tuning file's rule,
 * else the cheapest by the model. Logs the choice at debug level. */
const ucoll_algo_t *ucoll__algo_select(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                                       ucoll_algo_params_t *prm_p);

/* One line of the model's ranking for a call. */
typedef struct ucoll_algo_rank {
    const ucoll_algo_t *al;
    int serves; /* can_serve */
    double t;   /* predicted seconds (1e30: not modelled); 0 when it cannot serve */
    char params[48]; /* the parameters it would run with (al->params), or "" */
} ucoll_algo_rank_t;

/* Every algorithm of the call's operation (at most max), ranked by the
 * model selection uses for comm: those that can serve first, fastest
 * first. Returns how many were written. */
int ucoll__algo_rank(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_algo_rank_t *out,
                     int max);
/* Print what the default selection does for the call on comm (forced
 * algorithm, tuning rule or model) and the model's ranking. */
int ucoll__algo_explain(ucoll_comm_t *comm, const ucoll_coll_args_t *a, FILE *f);

/* Build and start a collective: select, build the schedule, start it, and
 * hand back the request. Used by every ucoll_i<op> entry point. */
int ucoll__coll_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t **req_p);
/* Spend comm's next sequence number without a call: a call that cannot
 * start here, while the other members started theirs. */
void ucoll__coll_seq_skip(ucoll_comm_t *comm);
/* Start the call a for req under sequence number tag (from the schedule
 * cache, or selecting and building); the part of ucoll__coll_start after
 * the sequence number is taken, also used for calls that waited for the
 * communicator's shared-memory setup. UCOLL_OK or an error (req untouched). */
int ucoll__coll_run(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t *req, uint32_t tag);

/* ---- shared memory (algos/shm.c) ----------------------------------------- */

/* Called by ucoll__coll_start first. When the call may run through shared
 * memory and comm has not settled whether it can, the first such call
 * starts comm's setup (two small collectives, nonblocking) and every such
 * call waits for its end: it takes its sequence number now and runs once
 * the setup is over; *deferred_p = 1 then, and req completes later. The
 * decision depends only on what every rank shares (the call, the agreed
 * settings, comm's size), so all ranks defer alike. */
int ucoll__shm_coll_gate(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t *req,
                         int *deferred_p);
/* Bytes of a rank's shared data area under ctx's settings (the same on all
 * ranks), for selection. */
size_t ucoll__shm_data_size(const ucoll_ctx_t *ctx);
/* For the shared-memory rows' start: an op of comm's shared memory for
 * the call a and req, polled by poll (progress/shm.h); NULL when out of
 * memory. The row sets op->chunk if it cuts the call, then starts it with
 * ucoll__shm_op_start. */
struct ucoll_shm_op;
struct ucoll_shm_op *ucoll__shm_op_new(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                                       ucoll_req_t *req, int (*poll)(struct ucoll_shm_op *op));
/* Bytes of the pieces a shared-memory row cuts large calls into: the
 * segment size when set (UCOLL_SEGMENT_SIZE, a tuning rule), else deflt;
 * at most the data area, a multiple of unit, at least unit. */
size_t ucoll__shm_piece(const ucoll_algo_params_t *prm, size_t deflt, size_t unit);
/* Model: one wait for a flag in shared memory, shm_alpha plus the wake-up
 * of a descheduled peer when ranks outnumber processing units. */
double ucoll__shm_hop(const ucoll_model_t *m);
/* Personalized exchange through shared memory (algos/shm_xchg.c), the
 * engine of reduce_scatter_block's and alltoall's shm rows: the input is p
 * blocks of count elements, block r for rank r. how: UCOLL_SHM_XCHG_REDUCE
 * (this rank's block of every input, reduced in rank order, into rbuf) or
 * UCOLL_SHM_XCHG_COPY (block r of rbuf from rank r's block for this rank).
 * chunk: elements of a block per piece (0: the regions cannot hold one
 * element a piece); waits: the model's time of its waits for flags (the
 * row adds the data's); start: as an ucoll_algo_t's start. */
enum { UCOLL_SHM_XCHG_REDUCE = 0, UCOLL_SHM_XCHG_COPY = 1, UCOLL_SHM_XCHG_ALLREDUCE = 2 };
size_t ucoll__shm_xchg_chunk(size_t count, size_t esize, int p, const ucoll_algo_params_t *prm,
                             int how);
double ucoll__shm_xchg_waits(size_t count, size_t esize, int p, const ucoll_algo_params_t *prm,
                             const ucoll_model_t *m, int how);
int ucoll__shm_xchg_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm, ucoll_req_t *req, int how);
/* The same call duelled against rival, a sealed relocatable schedule of
 * the best message-based row, run under tag if the call takes it
 * (ucoll__shm_duel_arm; UCOLL_SHM_DUEL): for the call cache's entries
 * whose selection set prm->rival (ucoll__algo_select). */
int ucoll__shm_xchg_duel(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm, ucoll_req_t *req, int how,
                         ucoll_sched_t *rival, int tag);
/* The engine's poll, for allreduce's pipelined way, which makes its own op
 * (op->root = UCOLL_SHM_XCHG_ALLREDUCE, op->aux = bytes from one slot to
 * the next, op->chunk = elements a chunk; count: the whole vector). */
struct ucoll_shm_op;
int ucoll__shm_xchg_poll(struct ucoll_shm_op *op);
/* Drop comm's cached schedules (at comm destruction). */
void ucoll__coll_cache_free(ucoll_comm_t *comm);

/* Argument checks of the entry points. Each logs the reason at debug level,
 * prefixed with name (the operation, as ucoll__coll_name), and returns
 * UCOLL_ERR_ARG; all pass before the call takes a sequence number. */
int ucoll__coll_bad_req(const char *name);
int ucoll__coll_bad_root(const char *name, const ucoll_comm_t *comm, int root);
int ucoll__coll_bad_count(const char *name, const ucoll_comm_t *comm, size_t count);
int ucoll__coll_bad_in_place(const char *name, const char *param);

/* req is somewhere to put the request. */
static inline int ucoll__coll_check_req(const char *name, ucoll_req_t **req)
{
    return ucoll_likely(req != NULL) ? UCOLL_OK : ucoll__coll_bad_req(name);
}

/* root is a rank of comm (comm already checked). */
static inline int ucoll__coll_check_root(const char *name, const ucoll_comm_t *comm, int root)
{
    return ucoll_likely(root >= 0 && root < comm->size) ? UCOLL_OK
                                                        : ucoll__coll_bad_root(name, comm, root);
}

/* count elements of esize bytes for each rank of comm fit in a size_t
 * (without the two 64-bit divisions it took on every call). */
static inline int ucoll__coll_check_count(const char *name, const ucoll_comm_t *comm, size_t count,
                                          size_t esize)
{
    size_t total;

    if (ucoll_unlikely(__builtin_mul_overflow(count, esize, &total) ||
                       __builtin_mul_overflow(total, (size_t)comm->size, &total))) {
        return ucoll__coll_bad_count(name, comm, count);
    }
    return UCOLL_OK;
}

/* buf, passed as the parameter called param, is not UCOLL_IN_PLACE. */
static inline int ucoll__coll_check_not_in_place(const char *name, const char *param,
                                                 const void *buf)
{
    return ucoll_likely(buf != UCOLL_IN_PLACE) ? UCOLL_OK : ucoll__coll_bad_in_place(name, param);
}

/* Elements spanned by p blocks, block i being counts[i] at displs[i]. */
size_t ucoll__blocks_extent(const size_t *counts, const size_t *displs, int p);

/* The entry points of collectives that mirror each other (algos/entry.c):
 * each checks the arguments, as above and per operation, and starts the
 * call. coll names the operation of the pair.
 *
 * Gather and scatter, gatherv and scatterv: at the root one buffer, "big"
 * (gather's rbuf, scatter's sbuf), has a block for every rank; the other,
 * "small", has the root's own block, or is UCOLL_IN_PLACE for the root's
 * block where it is in big. Elsewhere only small matters. */
int ucoll__gather_scatter_start(ucoll_coll_t coll, const void *sbuf, void *rbuf, size_t count,
                                ucoll_dtype_t dt, int root, ucoll_comm_t *comm, ucoll_req_t **req);
/* count is small's count (gatherv's scount, scatterv's rcount); counts and
 * displs lay out big (gatherv's rcounts, scatterv's scounts) and, like big,
 * matter at the root only. Unless small is UCOLL_IN_PLACE, the root's block
 * may not be longer in sbuf than in rbuf (UCOLL_ERR_TRUNCATE). */
int ucoll__gatherv_scatterv_start(ucoll_coll_t coll, const void *sbuf, void *rbuf, size_t count,
                                  const size_t *counts, const size_t *displs, ucoll_dtype_t dt,
                                  int root, ucoll_comm_t *comm, ucoll_req_t **req);
/* Allgather and alltoall: rbuf has a block for every rank; sbuf has one
 * block (allgather) or one for every rank (alltoall), or is UCOLL_IN_PLACE
 * for the data already in rbuf. */
int ucoll__allgather_alltoall_start(ucoll_coll_t coll, const void *sbuf, void *rbuf, size_t count,
                                    ucoll_dtype_t dt, ucoll_comm_t *comm, ucoll_req_t **req);

/* A copy step unless there is nothing to move: len 0, or dst == src (a
 * rank's own block already in place). */
static inline int ucoll__sched_copy_if(ucoll_sched_t *s, void *dst, const void *src, size_t len)
{
    return (len == 0 || dst == src) ? UCOLL_OK : ucoll__sched_copy(s, dst, src, len);
}

/* Run a call as two schedules on comm under tag (algos/phased.c): first
 * (which may learn what the second needs, e.g. counts only the root was
 * given), then, once it has completed here, second, built then; both get
 * arg. fini(arg, req) runs when req completes, whatever the outcome: it may
 * set req->status.error (a mismatch found on the way) and frees arg. On
 * an error return nothing has started and arg is still the caller's. */
typedef int (*ucoll_phase_build_t)(ucoll_sched_t *s, void *arg);
int ucoll__phased_start(ucoll_comm_t *comm, ucoll_coll_t coll, ucoll_req_t *req, int tag,
                        ucoll_phase_build_t first, ucoll_phase_build_t second, void *arg,
                        void (*fini)(void *arg, ucoll_req_t *req));

/* A binomial v-variant's call (gatherv, scatterv), run by
 * ucoll__vtree_start as two schedules that get it as their arg: the call,
 * this rank's place in the binomial tree over sranks, and the counts of
 * its subtree, which the first schedule learns. */
typedef struct ucoll_vtree {
    ucoll_coll_args_t a;
    int p, sr;
    int n;         /* sranks in this rank's subtree */
    uint64_t *cnt; /* their counts in srank order: cnt[0] this rank's own
                    * (gatherv: scount; scatterv's root: every scounts) */
    int truncated; /* a count disagrees here: the call ends in
                    * UCOLL_ERR_TRUNCATE once every block has moved */
} ucoll_vtree_t;
int ucoll__vtree_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, int tag, ucoll_req_t *req,
                       ucoll_phase_build_t first, ucoll_phase_build_t second);
/* The root: whether the blocks of sranks [c, c + n) lie in its vector
 * (gatherv's rbuf, scatterv's sbuf) one after another in srank order: no
 * wrap of rank order inside, displacements chained. */
int ucoll__vtree_in_order(const ucoll_vtree_t *v, int c, int n);

/* Shared tree and peer math (algos/pattern.c). srank = (rank - root + p) % p. */
static inline int ucoll__srank(int rank, int root, int p)
{
    return (rank - root + p) % p;
}
static inline int ucoll__rank_of(int srank, int root, int p)
{
    return (srank + root) % p;
}
int ucoll__ceil_log2(int p);
/* Binomial tree over sranks, rooted at srank 0: srank r > 0 owns the sranks
 * [r, r + lowbit(r)) clipped to p, its parent is r - lowbit(r) and its
 * children are r + 2^i for every 2^i < lowbit(r) (that are < p); the root
 * owns [0, p) and its children are every 2^i < p. Returns the span, the
 * power of two bounding the subtree of srank: lowbit(srank), or for the root
 * the smallest power of two >= p. The subtree holds min(span, p - srank)
 * sranks; the children are srank + m for m = span/2, span/4, ..., 1. */
static inline int ucoll__binomial_span(int srank, int p)
{
    int span = 1;

    if (srank != 0) {
        return srank & -srank;
    }
    while (span < p) {
        span <<= 1;
    }
    return span;
}

int ucoll__is_pow2(int p);

/* Registries of the reducing and synchronising collectives (barrier, bcast,
 * reduce, allreduce, reduce_scatter(_block), scan, exscan). */
extern const ucoll_algo_t *const ucoll__barrier_algos[];
extern const ucoll_algo_t *const ucoll__bcast_algos[];
extern const ucoll_algo_t *const ucoll__reduce_algos[];
extern const ucoll_algo_t *const ucoll__allreduce_algos[];
extern const ucoll_algo_t *const ucoll__reduce_scatter_block_algos[];
extern const ucoll_algo_t *const ucoll__reduce_scatter_algos[];
extern const ucoll_algo_t *const ucoll__scan_algos[];
extern const ucoll_algo_t *const ucoll__exscan_algos[];

/* The model parameters selection uses by default (measured on the
 * development machine: shared memory through UCX, float32 sum). */
void ucoll__model_default(ucoll_model_t *m);

/* Largest radix the k-nomial rows take from the model. */
#define UCOLL_RADIX_MAX 8

/* The radix of a k-nomial row for a call on p ranks: prm->radix when 2 or
 * more, else the k from 2 to UCOLL_RADIX_MAX and max(p, 2) for which the
 * row's cost (called with that radix) is least under the selection's
 * model, the smallest on ties. Its inputs are agreed by the communicator's
 * members, so each takes the same. */
typedef double (*ucoll_algo_cost_t)(const ucoll_coll_args_t *a, int p,
                                    const ucoll_algo_params_t *prm, const ucoll_model_t *m);
int ucoll__radix_choose(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        ucoll_algo_cost_t cost);
/* Find an algorithm of coll by id; NULL when there is none. */
const ucoll_algo_t *ucoll__algo_find(ucoll_coll_t coll, const char *id);
/* Bytes of the call's vector as ALGORITHMS.md's m: count * esize for the
 * rooted and reducing collectives, sum of rcounts for reduce_scatter. */
size_t ucoll__coll_bytes(const ucoll_coll_args_t *a, int p);
/* Whether the runtime reads the word as a rule of a tuning file
 * ("op:lo-hi:@algo[:np=a-b][:seg=S][:radix=R][:way=W]"), with the parser
 * UCOLL_TUNE_FILE is read with: 0 when it does, -1 when it would warn and
 * ignore it. ucoll_tune --merge refuses what it refuses. */
int ucoll__tune_rule_check(const char *word);

/* ---- more shared math (algos/pattern.c) -------------------------------- */

/* Largest power of two <= p (p >= 1). */
int ucoll__floor_pow2(int p);
/* Smallest d with k^d >= p (p >= 1, k >= 2). */
int ucoll__ceil_logk(int p, int k);

/* Block partition of n items into p blocks: block i has n / p items, and
 * the first n % p blocks one more. */
static inline size_t ucoll__block_count(size_t n, int p, int i)
{
    return n / (size_t)p + ((size_t)i < n % (size_t)p ? 1 : 0);
}
static inline size_t ucoll__block_offset(size_t n, int p, int i)
{
    size_t q = n / (size_t)p, r = n % (size_t)p;
    return (size_t)i * q + ((size_t)i < r ? (size_t)i : r);
}

/* Binomial tree over sranks (see ucoll__binomial_span): parent of srank
 * (-1 for the root) and the number of sranks in its subtree. */
static inline int ucoll__binomial_parent(int srank)
{
    return srank == 0 ? -1 : srank - (srank & -srank);
}
static inline int ucoll__binomial_size(int srank, int p)
{
    return UCOLL_MIN(ucoll__binomial_span(srank, p), p - srank);
}

/* Bytes of entries [from, from + n) of counts (elements of esize bytes). */
static inline size_t ucoll__counts_bytes(const uint64_t *counts, size_t esize, int from, int n)
{
    size_t b = 0;

    for (int i = from; i < from + n; i++) {
        b += (size_t)counts[i] * esize;
    }
    return b;
}

/* k-nomial tree over sranks, radix k >= 2. The parent clears the lowest
 * non-zero base-k digit of srank (-1 for the root). The children set one
 * digit, 1..k-1, in a position below that digit; children[] receives them
 * ordered by increasing subtree (position, then digit) and sizes[] their
 * subtree sizes (either may be NULL); returns how many. Both arrays need
 * (k-1) * ucoll__ceil_logk(p, k) entries. The subtree of a child c set at
 * position i is [c, c + k^i) clipped to p. */
int ucoll__knomial_parent(int srank, int p, int k);
int ucoll__knomial_children(int srank, int p, int k, int *children, int *sizes);

/*
 * Recursive doubling on any p: p2 = largest power of two <= p and
 * rem = p - p2. Ranks below 2*rem fold in pairs: the odd one of each pair
 * hands its data to the even one (its "partner", rank - 1) and sits out;
 * the p2 survivors have newranks 0..p2-1, in rank order. Indices here are in
 * whatever rank space the caller uses (comm ranks or sranks).
 */
typedef struct ucoll_rd {
    int p2, rem;
    int newrank; /* -1 for a rank that sits out */
} ucoll_rd_t;
void ucoll__rd_init(int rank, int p, ucoll_rd_t *rd);
/* The rank of newrank nr. */
static inline int ucoll__rd_rank(const ucoll_rd_t *rd, int nr)
{
    return nr < rd->rem ? 2 * nr : nr + rd->rem;
}

/*
 * Shared schedule pieces. Groups: the vector (esize-byte elements) is cut
 * into p2 contiguous groups, group g being elements [goff[g], goff[g+1]).
 * to_rank maps a newrank to the comm rank to talk to (with arg).
 */
typedef int (*ucoll_rank_map_t)(int newrank, const void *arg);

/* Recursive halving reduce-scatter among rd's p2 survivors: at distance
 * d = p2/2 .. 1 exchange the half of the current group range that the
 * partner (newrank ^ d) keeps. src holds this rank's whole vector; the
 * first step reads it and writes the kept half to acc (src may be acc), so
 * nobody copies the input first. tmp has room for the largest range.
 * Afterwards newrank v's group v in acc is fully reduced; its last reduce
 * step is left at the start of the current (open) round. Commutative ops. */
int ucoll__sched_rhalving(ucoll_sched_t *s, const ucoll_rd_t *rd, char *acc, const char *src,
                          char *tmp, const size_t *goff, size_t esize, ucoll_dtype_t dt,
                          ucoll_op_t op, ucoll_rank_map_t to_rank, const void *arg);
/* Recursive doubling allgather of the groups, the mirror of rhalving: at
 * distance d = 1 .. p2/2 newrank v sends the groups it holds and receives
 * the partner's, into acc. */
int ucoll__sched_rdoubling(ucoll_sched_t *s, const ucoll_rd_t *rd, char *acc, const size_t *goff,
                           size_t esize, ucoll_rank_map_t to_rank, const void *arg);

#endif

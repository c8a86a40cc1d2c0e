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
#include "progress/sched.h"

/* Everything a collective call said, normalised by the API entry point. */
typedef struct ucoll_coll_args {
    ucoll_coll_t   coll;
    const void    *sbuf;      /* already resolved: never UCOLL_IN_PLACE */
    void          *rbuf;
    int            in_place;  /* the caller passed UCOLL_IN_PLACE */
    size_t         count;     /* elements: whole vector, or per rank/block */
    size_t         scount, rcount;     /* v-variants: this rank's counts */
    const size_t  *scounts, *sdispls;  /* v-variants (elements) */
    const size_t  *rcounts, *rdispls;
    ucoll_dtype_t  dt;
    ucoll_op_t     op;
    int            root;
    size_t         esize;     /* ucoll_dtype_size(dt) */
} ucoll_coll_args_t;

/* Parameters the selection passes to an algorithm (0 = algorithm's own
 * default). */
typedef struct ucoll_algo_params {
    size_t   seg_size;  /* bytes per segment for pipelined algorithms */
    unsigned radix;     /* k for k-nomial, k-ary, k-chain */
} ucoll_algo_params_t;

/* Hockney model parameters, seconds and seconds per byte. */
typedef struct ucoll_model {
    double alpha, beta, gamma, lambda;
} ucoll_model_t;

typedef struct ucoll_algo {
    const char *id;    /* as in ALGORITHMS.md, e.g. "binomial" */
    const char *desc;  /* one line */
    /* 1 if the algorithm can serve this call on p ranks (e.g. needs a power
     * of two, count >= p); NULL means always. */
    int    (*can_serve)(const ucoll_coll_args_t *a, int p);
    /* Predicted time in seconds under model m; NULL = not modelled. */
    double (*cost)(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                   const ucoll_model_t *m);
    /* Append this rank's steps for the call to s. */
    int    (*build)(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                    const ucoll_algo_params_t *prm);
} ucoll_algo_t;

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

/* Build and start a collective: select, build the schedule, start it, and
 * hand back the request. Used by every ucoll_i<op> entry point. */
int ucoll__coll_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t **req_p);

/* A copy step unless there is nothing to move: len 0, or dst == src (a
 * rank's own block already in place). */
static inline int ucoll__sched_copy_if(ucoll_sched_t *s, void *dst, const void *src,
                                       size_t len)
{
    return (len == 0 || dst == src) ? UCOLL_OK : ucoll__sched_copy(s, dst, src, len);
}

/* Shared tree and peer math (algos/pattern.c). srank = (rank - root + p) % p. */
static inline int ucoll__srank(int rank, int root, int p) { return (rank - root + p) % p; }
static inline int ucoll__rank_of(int srank, int root, int p) { return (srank + root) % p; }
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

#endif

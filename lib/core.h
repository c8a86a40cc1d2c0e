/*
 * The context and the communicator: the objects every layer shares.
 * Nothing in ucoll is global; everything hangs off a ucoll_ctx_t.
 *
 * Layers (dependencies point one way): lib/algos -> lib/progress ->
 * lib/transport. Files at lib/ top level (context, comm, config, log,
 * datatypes, ops) may be used by all of them.
 */
#ifndef UCOLL_CORE_H
#define UCOLL_CORE_H

#include "ucoll.h"
#include "config.h"
#include "list.h"
#include "log.h"

#include <stdint.h>
#include <stdlib.h>

struct ucoll_boot;
struct ucoll_tl;
struct ucoll_p2p;
struct ucoll_exec;
struct ucoll_net_ops;

/* Matching spaces: every communicator has two, so that collective traffic
 * never matches a user's point-to-point receive. The wire carries
 * ctx_id = comm->id * 2 + space. */
enum { UCOLL_SPACE_P2P = 0, UCOLL_SPACE_COLL = 1 };

/*
 * A communicator. The world is created by the context and freed with it;
 * others come from ucoll_comm_split and are freed by ucoll_comm_free (and,
 * if the user forgot, at finalize).
 */
struct ucoll_comm {
    ucoll_ctx_t *ctx;
    uint32_t id; /* unique among this process's communicators */
    int rank;    /* this process's rank in the communicator */
    int size;
    int *world;        /* world rank of each rank; NULL for the world itself */
    uint32_t coll_seq; /* collective calls so far: the tag of the next one */
    int wired;         /* an endpoint to every member exists (first ANY_SOURCE) */
    int spans_nodes;   /* members on more than one node (or locality unknown) */
    void *coll_cache;  /* sealed schedules by call shape (lib/algos/algos.c) */
    struct ucoll_shm *shm; /* shared-memory state, made at the first call that may use it
                            * (lib/progress/shm.h); NULL until then */
    int shm_assumed;       /* selection takes shared memory as on (ucoll_info --explain's
                            * one-node communicator: no region, nothing runs) */
    /* two-level collectives (lib/algos/hier.c): possible on this
     * communicator (members on two nodes or more, one node with two members
     * or more; the same on every member), and their state, made at the
     * first such call; NULL until then */
    int hier_able;
    int nodes, node_max; /* when hier_able: nodes, members of the largest */
    struct ucoll_hier *hier;
    /* an internal communicator (lib/algos/hier.c): the one whose calls it
     * serves; NULL otherwise. A failure of any member of the parent ends
     * the internal one's collectives too: they are parts of the parent's. */
    struct ucoll_comm *parent;
    ucoll_list_t link; /* in ctx->comms */
};

/* The communicator whose members a collective on comm depends on: comm,
 * or for an internal one its parent. */
static inline const struct ucoll_comm *ucoll__comm_scope(const struct ucoll_comm *comm)
{
    return comm->parent ? comm->parent : comm;
}

/* World rank of rank r of comm. */
static inline int ucoll__comm_world_rank(const ucoll_comm_t *comm, int r)
{
    return comm->world ? comm->world[r] : r;
}

/*
 * The context. Created by ucoll_init (PMIx + UCX) or, for the simulator, by
 * ucoll__ctx_create_sim (no PMIx, no UCX: a simulated network). Freed by
 * ucoll_finalize / ucoll__ctx_destroy_sim, which release everything below.
 */
struct ucoll_ctx {
    ucoll_config_t cfg;
    struct ucoll_topo *topo;         /* hwloc view of this process */
    int rank, size;                  /* in the job */
    struct ucoll_boot *boot;         /* NULL when simulated */
    struct ucoll_tl *tl;             /* UCX state; NULL when simulated */
    struct ucoll_p2p *p2p;           /* matching engine and protocols */
    const struct ucoll_net_ops *net; /* how schedules reach point-to-point */
    void *net_priv;                  /* the net's own state */
    struct ucoll_exec *exec;         /* collective executor state */
    ucoll_comm_t *world;
    ucoll_list_t comms; /* every live communicator, world first */
    uint32_t next_comm_id;
    ucoll_list_t req_free;   /* request pool: free list */
    ucoll_list_t req_chunks; /* request pool: allocated chunks */
    size_t req_outstanding;
    int finalizing;
    uint32_t sel_gen; /* bumped when a selection setting changes */
    /* agreed by every rank at init (ctx_agree): some node of the job has more
     * ranks than processing units, so the model charges for waking peers */
    int oversub;
    /* communicators with shared-memory collectives queued (lib/progress/shm.c) */
    ucoll_list_t shm_active;
    /* ... whose first queued call waits for a run of messages only (a
     * duelled call's rival), not polled until it ends */
    ucoll_list_t shm_parked;
    /* communicators whose last shared-memory call's end is owed (maybe
     * paid since; lib/progress/shm.h, ucoll__shm_owe_end) */
    ucoll_list_t shm_owing;
    unsigned shm_polls; /* progress passes while they wait (lib/progress/wait.c) */
    uint64_t shm_moved; /* steps their ops took short of finishing: pieces, phases */
    /* the network has work to resume outside UCX progress (receives the
     * point-to-point layer deferred): waits poll through the layers */
    int net_deferred;
    /* node of every job rank, 0..nnodes-1 numbered by first appearance in
     * rank order, agreed at init (ctx_agree) from the bootstrap's locality:
     * a rank whose launcher said nothing is a node of its own; NULL when
     * simulated */
    int *node_of;
    int nnodes;
};

/* Selection settings of ctx->cfg (algorithm, segment size, radix, model,
 * tuning file) changed after init: cached schedules no longer apply. */
static inline void ucoll__ctx_config_changed(ucoll_ctx_t *ctx)
{
    ctx->sel_gen++;
}

/* Create the world communicator of ctx (rank, size already set). */
int ucoll__comm_create_world(ucoll_ctx_t *ctx);
/* Create a communicator from a list of world ranks (this process included);
 * id must be agreed by all members. */
int ucoll__comm_create(ucoll_ctx_t *ctx, uint32_t id, int rank, int size, const int *world_ranks,
                       ucoll_comm_t **comm_p);
/* The same for a communicator the runtime uses inside another's calls
 * (lib/algos/hier.c): not in ctx->comms, its id from a range that
 * ucoll_comm_split never hands out (UCOLL_COMM_ID_HIER up), freed by
 * ucoll__comm_destroy with its owner. */
int ucoll__comm_create_internal(ucoll_ctx_t *ctx, uint32_t id, int rank, int size,
                                const int *world_ranks, ucoll_comm_t **comm_p);
/* Ids of the internal communicators of communicator c (c's id below
 * UCOLL_COMM_ID_HIER_MAX): UCOLL_COMM_ID_HIER + 2 c + 0 (its node part) or
 * + 1 (the node leaders); ctx_id on the wire is id * 2 + space, 32 bits. */
#define UCOLL_COMM_ID_HIER 0x40000000u
#define UCOLL_COMM_ID_HIER_MAX 0x10000000u

/* Whether id is comm's or one of its internal communicators' (the traffic
 * of comm's calls, for ucoll_comm_free's check that none is under way). */
static inline int ucoll__comm_owns_id(const ucoll_comm_t *comm, uint32_t id)
{
    return id == comm->id ||
           (comm->id < UCOLL_COMM_ID_HIER_MAX && (id == UCOLL_COMM_ID_HIER + 2 * comm->id ||
                                                  id == UCOLL_COMM_ID_HIER + 2 * comm->id + 1));
}
void ucoll__comm_destroy(ucoll_comm_t *comm);

/* Simulated context: rank r of size, with the given network; used by
 * ucoll_sim and unit tests. No PMIx, no UCX. */
int ucoll__ctx_create_sim(int rank, int size, const struct ucoll_net_ops *net, void *net_priv,
                          ucoll_ctx_t **ctx_p);
void ucoll__ctx_destroy_sim(ucoll_ctx_t *ctx);

#define ucoll_likely(_x)   __builtin_expect(!!(_x), 1)
#define ucoll_unlikely(_x) __builtin_expect(!!(_x), 0)

/* Argument checks shared by every API entry point: they log the reason at
 * debug level and return UCOLL_ERR_ARG. The test is inline, so a valid
 * call pays a compare and no call; the report is out of line. */
int ucoll__bad_comm(void);
int ucoll__bad_dtype(ucoll_dtype_t dt);
int ucoll__bad_buf(size_t count, const char *what);

static inline int ucoll__check_comm(const ucoll_comm_t *comm)
{
    return ucoll_likely(comm != NULL) ? UCOLL_OK : ucoll__bad_comm();
}

static inline int ucoll__check_dtype(ucoll_dtype_t dt)
{
    return ucoll_likely((unsigned)dt < UCOLL_DTYPE_LAST) ? UCOLL_OK : ucoll__bad_dtype(dt);
}

static inline int ucoll__check_buf(const void *buf, size_t count, const char *what)
{
    return ucoll_likely(buf != NULL || count == 0) ? UCOLL_OK : ucoll__bad_buf(count, what);
}

#define UCOLL_MIN(_a, _b) ((_a) < (_b) ? (_a) : (_b))
#define UCOLL_MAX(_a, _b) ((_a) > (_b) ? (_a) : (_b))

#endif

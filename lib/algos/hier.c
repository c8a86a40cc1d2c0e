/*
 * Two-level collectives: the part inside each node, then the node leaders
 * among themselves, then inside each node again, for barrier, bcast,
 * reduce, allreduce and allgather on a communicator whose members live on
 * several nodes (comm->hier_able).
 *
 * Each level is a collective of its own on an internal communicator made
 * at the first two-level call, without a message (ids derived from the
 * communicator's, node table agreed at init):
 *   node     the members on this rank's node, in communicator rank order;
 *            its rank 0 (the smallest communicator rank) is the node's
 *            leader. Its collectives go through shared memory when the node
 *            has it (algos/shm.c), else through messages, chosen by the
 *            same selection as any call.
 *   leaders  the leaders, node i being leader rank i (nodes numbered in
 *            the order of their first member); only leaders hold it. Its
 *            collectives run any message-based algorithm of the catalog.
 * So the traffic between nodes is one contribution per node, not per rank.
 *
 * Each level is a nonblocking call on its internal communicator, started
 * when the level before it is done (from that one's completion callback,
 * as the shared-memory setup starts deferred calls).
 *
 *   barrier   node barrier; leaders' barrier; node bcast of one byte
 *   bcast     root's node: node bcast from the root, then (leader) leaders'
 *             bcast from the root's node; other nodes: leaders' bcast, then
 *             node bcast from the leader
 *   reduce    other nodes: node reduce to the leader, then leaders' reduce
 *             to the root's node; root's node: leaders' reduce (its leader
 *             brings its own vector only), then node reduce to the root, the
 *             leader bringing the leaders' result (predefined ops commute)
 *   allreduce node reduce to the leader; leaders' allreduce in place; node
 *             bcast of the result: every rank gets the same bits
 *   allgather node gather to the leader; leaders' allgatherv in place of the
 *             node blocks; node bcast of the whole vector (blocks of nodes
 *             whose ranks are not contiguous go through a scratch vector in
 *             node order and are put in rank order by the leader)
 * A node of one member skips its node levels.
 *
 * Cost (selection): the sum of the cheapest algorithm of each level under
 * the model of its path, the node levels at p = the largest node's size
 * with shared-memory rows counted when UCOLL_SHM allows them, the leaders'
 * level at p = the number of nodes under the communicator's (network)
 * model; in chunks, the first chunk's levels plus the slowest level once
 * per further chunk.
 *
 * Large bcast, reduce and allreduce go in chunks (hier_chunk), each chunk
 * its own calls of the levels, so chunk c crosses between the leaders
 * while chunk c+1 is summed inside the nodes and chunk c-1 spread. The
 * calls of a call's chunks, and of several calls in flight, are started on
 * each internal communicator in one order, (call, chunk, level), on every
 * member, each once the level before it in its chunk is done: sequence
 * numbers match, and the order has no cycle.
 */
#include "algos/algos.h"
#include "progress/request.h"
#include "progress/sched.h"
#include "progress/shm.h"

#include <string.h>

typedef struct ucoll_hier {
    ucoll_comm_t *node;    /* this rank's node */
    ucoll_comm_t *leaders; /* NULL unless this rank leads its node */
    int nnodes, mynode;
    int *node_of;     /* node of each communicator rank */
    int *node_lrank;  /* each rank's rank in its node */
    int *node_size;   /* members of each node */
    int *node_first;  /* where each node's blocks start in node order */
    int contiguous;   /* every node's members are consecutive ranks */
    ucoll_list_t ops; /* calls not yet complete, in call order */
    /* steps not yet started, per internal communicator (0 node, 1
     * leaders), in the order every member starts them */
    ucoll_list_t queue[2];
    int driving, again;
} ucoll_hier_t;

#define HIER_LEVELS 3

struct hier_op;

/* One level of one chunk of a call, on one internal communicator. */
typedef struct hier_step {
    ucoll_list_t link;      /* in h->queue[which] until started */
    struct hier_op *op;
    struct hier_step *after; /* the step of the same chunk it waits for, or NULL */
    ucoll_req_t *sub;       /* in flight */
    int which, chunk, level;
    int done;
} hier_step_t;

typedef struct hier_op {
    ucoll_list_t link;
    ucoll_comm_t *comm;
    ucoll_coll_args_t a;
    ucoll_req_t *req;  /* the caller's */
    int error;
    size_t chunk;      /* elements per chunk */
    int nsteps, pending; /* steps of this rank, those not done */
    hier_step_t *steps;
    char *tmp;         /* scratch: reduce's partial, allgather's node-order vector */
    size_t *counts, *displs; /* allgather: the leaders' allgatherv */
    char token;        /* barrier's release */
} hier_op_t;

/* ---- the internal communicators ---------------------------------------- */

static void hier_free(ucoll_hier_t *h)
{
    if (h->node) {
        ucoll__comm_destroy(h->node);
    }
    if (h->leaders) {
        ucoll__comm_destroy(h->leaders);
    }
    free(h->node_of);
    free(h->node_lrank);
    free(h->node_size);
    free(h->node_first);
    free(h);
}

static int hier_make(ucoll_comm_t *comm, ucoll_hier_t **h_p)
{
    ucoll_ctx_t *ctx = comm->ctx;
    int p = comm->size, nn = 0, *ranks = NULL, *map = NULL, st = UCOLL_ERR_NOMEM;
    ucoll_hier_t *h = calloc(1, sizeof(*h));

    if (h == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ucoll_list_init(&h->ops);
    ucoll_list_init(&h->queue[0]);
    ucoll_list_init(&h->queue[1]);
    h->node_of = calloc((size_t)p, sizeof(int));
    h->node_lrank = malloc(sizeof(int) * (size_t)p);
    h->node_size = calloc((size_t)p, sizeof(int));
    h->node_first = calloc((size_t)p + 1, sizeof(int));
    ranks = malloc(sizeof(int) * (size_t)p);
    map = malloc(sizeof(int) * (size_t)ctx->nnodes);
    if (!h->node_of || !h->node_lrank || !h->node_size || !h->node_first || !ranks || !map) {
        goto out;
    }
    /* the context's node numbers, renumbered by first member here */
    for (int i = 0; i < ctx->nnodes; i++) {
        map[i] = -1;
    }
    h->contiguous = 1;
    for (int r = 0; r < p; r++) {
        int n = ctx->node_of[ucoll__comm_world_rank(comm, r)];

        if (map[n] < 0) {
            map[n] = nn++;
        } else if (r > 0 && h->node_of[r - 1] != map[n]) {
            h->contiguous = 0;
        }
        h->node_of[r] = map[n];
        h->node_lrank[r] = h->node_size[map[n]]++;
    }
    h->nnodes = nn;
    h->mynode = h->node_of[comm->rank];
    for (int n = 0; n < nn; n++) {
        h->node_first[n + 1] = h->node_first[n] + h->node_size[n];
    }
    /* node: world ranks of my node's members */
    {
        int k = 0;
        for (int r = 0; r < p; r++) {
            if (h->node_of[r] == h->mynode) {
                ranks[k++] = ucoll__comm_world_rank(comm, r);
            }
        }
        st = ucoll__comm_create_internal(ctx, UCOLL_COMM_ID_HIER + 2 * comm->id,
                                         h->node_lrank[comm->rank], k, ranks, &h->node);
        if (st != UCOLL_OK) {
            goto out;
        }
        h->node->parent = comm;
    }
    if (h->node_lrank[comm->rank] == 0) {
        int k = 0;
        for (int r = 0; r < p; r++) {
            if (h->node_lrank[r] == 0) {
                ranks[k++] = ucoll__comm_world_rank(comm, r);
            }
        }
        st = ucoll__comm_create_internal(ctx, UCOLL_COMM_ID_HIER + 2 * comm->id + 1, h->mynode,
                                         k, ranks, &h->leaders);
        if (st != UCOLL_OK) {
            goto out;
        }
        h->leaders->parent = comm;
    }
    ucoll_debug("comm %u: two levels, %d nodes, this node %d of %d members, %s", comm->id, nn,
                h->mynode, h->node->size, h->contiguous ? "contiguous" : "interleaved");
    st = UCOLL_OK;
out:
    free(ranks);
    free(map);
    if (st != UCOLL_OK) {
        hier_free(h);
        return st;
    }
    *h_p = h;
    return UCOLL_OK;
}

static void op_free(hier_op_t *op)
{
    free(op->steps);
    free(op->tmp);
    free(op->counts);
    free(op);
}

int ucoll__hier_busy(const ucoll_comm_t *comm)
{
    return comm->hier != NULL && !ucoll_list_empty(&comm->hier->ops);
}

void ucoll__hier_destroy(ucoll_comm_t *comm)
{
    ucoll_hier_t *h = comm->hier;
    ucoll_list_t *pos, *tmp;

    if (h == NULL) {
        return;
    }
    /* calls still pending (freeing a communicator with calls pending): they
     * end with an error; a level in flight belongs to the executor until
     * the context ends, and calls nobody back */
    ucoll_list_for_each_safe(pos, tmp, &h->ops)
    {
        hier_op_t *op = ucoll_container_of(pos, hier_op_t, link);

        ucoll_list_del(&op->link);
        for (int i = 0; i < op->nsteps; i++) {
            if (op->steps[i].sub) {
                op->steps[i].sub->cb = NULL;
            }
        }
        ucoll_debug("comm %u: dropping a two-level %s still pending", comm->id,
                    ucoll__coll_name(op->a.coll));
        ucoll__req_complete(op->req, UCOLL_ERR_ARG);
        op_free(op);
    }
    hier_free(h);
    comm->hier = NULL;
}

/* ---- the levels --------------------------------------------------------- */

/* IN_PLACE for the sub-call when its send buffer is its receive buffer. */
static const void *sb(const void *s, const void *r)
{
    return s == r ? UCOLL_IN_PLACE : s;
}

/* Level k of op on this rank for the part of the call in a (a chunk: its
 * count and buffers, tmp its part of the scratch): *sub the call started,
 * NULL when it needed none (a local copy). */
static int level_start(hier_op_t *op, const ucoll_coll_args_t *a, char *tmp, int k,
                       ucoll_req_t **sub)
{
    ucoll_hier_t *h = op->comm->hier;
    ucoll_comm_t *node = h->node, *lead = h->leaders;
    int single = node->size == 1, leader = lead != NULL;
    size_t bytes = a->count * a->esize;

    *sub = NULL;
    switch (a->coll) {
    case UCOLL_COLL_BARRIER:
        if (k == 0 && !single) {
            return ucoll_ibarrier(node, sub);
        }
        if (k == 1 && leader) {
            return ucoll_ibarrier(lead, sub);
        }
        if (k == 2 && !single) {
            return ucoll_ibcast(&op->token, 1, UCOLL_BYTE, 0, node, sub);
        }
        return UCOLL_OK;

    case UCOLL_COLL_BCAST: {
        int rnode = h->node_of[a->root], mine = rnode == h->mynode;
        void *buf = a->rbuf;

        if (k == 0 && mine && !single) {
            return ucoll_ibcast(buf, a->count, a->dt, h->node_lrank[a->root], node, sub);
        }
        if (k == 1 && leader) {
            return ucoll_ibcast(buf, a->count, a->dt, rnode, lead, sub);
        }
        if (k == 2 && !mine && !single) {
            return ucoll_ibcast(buf, a->count, a->dt, 0, node, sub);
        }
        return UCOLL_OK;
    }

    case UCOLL_COLL_REDUCE: {
        int rnode = h->node_of[a->root], mine = rnode == h->mynode;
        int iroot = op->comm->rank == a->root;

        if (mine) {
            /* k 1: the leaders' reduce, this node's leader bringing its own
             * vector, the result in tmp (the root's rbuf when the root is
             * the leader); k 2: node reduce to the root */
            if (k == 1 && leader) {
                void *res = single ? a->rbuf : tmp;
                const void *in = (single && a->in_place) ? UCOLL_IN_PLACE : a->sbuf;
                return ucoll_ireduce(in, res, a->count, a->dt, a->op, rnode, lead, sub);
            }
            if (k == 2 && !single) {
                const void *in = leader ? tmp : a->sbuf;
                if (iroot && !leader && a->in_place) {
                    in = UCOLL_IN_PLACE;
                }
                return ucoll_ireduce(in, iroot ? a->rbuf : NULL, a->count, a->dt, a->op,
                                     h->node_lrank[a->root], node, sub);
            }
            return UCOLL_OK;
        }
        if (k == 0 && !single) {
            return ucoll_ireduce(a->sbuf, leader ? tmp : NULL, a->count, a->dt, a->op, 0,
                                 node, sub);
        }
        if (k == 1 && leader) {
            return ucoll_ireduce(single ? a->sbuf : tmp, NULL, a->count, a->dt, a->op, rnode,
                                 lead, sub);
        }
        return UCOLL_OK;
    }

    case UCOLL_COLL_ALLREDUCE:
        if (k == 0 && !single) {
            return ucoll_ireduce(leader ? sb(a->sbuf, a->rbuf) : a->sbuf, leader ? a->rbuf : NULL,
                                 a->count, a->dt, a->op, 0, node, sub);
        }
        if (k == 1 && leader) {
            return ucoll_iallreduce(single ? sb(a->sbuf, a->rbuf) : UCOLL_IN_PLACE, a->rbuf,
                                    a->count, a->dt, a->op, lead, sub);
        }
        if (k == 2 && !single) {
            return ucoll_ibcast(a->rbuf, a->count, a->dt, 0, node, sub);
        }
        return UCOLL_OK;

    case UCOLL_COLL_ALLGATHER: {
        int p = op->comm->size;
        char *vec = h->contiguous ? a->rbuf : tmp; /* blocks in node order */
        char *mine = vec + (size_t)h->node_first[h->mynode] * bytes;

        if (k == 0) {
            /* the leader's own block where the node's go (alone on its
             * node, that is all) */
            if ((leader && !h->contiguous) || (single && !a->in_place)) {
                memcpy(mine, a->sbuf, bytes);
            }
            if (single) {
                return UCOLL_OK;
            }
            if (leader) {
                const void *in = (!h->contiguous || a->in_place) ? UCOLL_IN_PLACE : a->sbuf;
                return ucoll_igather(in, mine, a->count, a->dt, 0, node, sub);
            }
            return ucoll_igather(a->sbuf, NULL, a->count, a->dt, 0, node, sub);
        }
        if (k == 1 && leader) {
            return ucoll_iallgatherv(UCOLL_IN_PLACE, 0, vec, op->counts, op->displs, a->dt, lead,
                                     sub);
        }
        if (k == 2) {
            if (leader && !h->contiguous) {
                /* node order to rank order */
                for (int r = 0; r < p; r++) {
                    size_t at = (size_t)(h->node_first[h->node_of[r]] + h->node_lrank[r]);
                    memcpy((char *)a->rbuf + (size_t)r * bytes, tmp + at * bytes, bytes);
                }
            }
            if (!single) {
                return ucoll_ibcast(a->rbuf, a->count * (size_t)p, a->dt, 0, node, sub);
            }
        }
        return UCOLL_OK;
    }

    default: return UCOLL_ERR_UNSUPPORTED;
    }
}

/* Where this rank takes part in level k of op: HIER_NODE, HIER_LEADERS,
 * HIER_LOCAL (a copy of its own, no call), HIER_NONE. Every member of an
 * internal communicator gives the same answer for it: it depends only on
 * the call and on facts of the node. */
enum { HIER_NONE = -1, HIER_NODE = 0, HIER_LEADERS = 1, HIER_LOCAL = 2 };

static int level_where(const hier_op_t *op, int k)
{
    const ucoll_hier_t *h = op->comm->hier;
    const ucoll_coll_args_t *a = &op->a;
    int single = h->node->size == 1, leader = h->leaders != NULL;
    int node = single ? HIER_NONE : HIER_NODE, lead = leader ? HIER_LEADERS : HIER_NONE;
    int mine = a->root >= 0 && h->node_of[a->root] == h->mynode;

    if (k == 1) {
        return lead;
    }
    switch (a->coll) {
    case UCOLL_COLL_BCAST: return (k == 0) == mine ? node : HIER_NONE;
    case UCOLL_COLL_REDUCE: return (k == 2) == mine ? node : HIER_NONE;
    case UCOLL_COLL_ALLGATHER:
        if (!single) {
            return HIER_NODE;
        }
        return (k == 0 || !h->contiguous) ? HIER_LOCAL : HIER_NONE;
    default: return node; /* barrier, allreduce */
    }
}

static void drive(ucoll_hier_t *h);

static void step_done(ucoll_req_t *req)
{
    hier_step_t *st = req->cb_arg;
    hier_op_t *op = st->op;
    int err = req->status.error;

    ucoll__req_release(req);
    st->sub = NULL;
    st->done = 1;
    op->pending--;
    if (err != UCOLL_OK && op->error == UCOLL_OK) {
        op->error = err;
    }
    drive(op->comm->hier);
}

/* Start step st (its chunk's earlier step done). */
static void step_start(hier_step_t *st)
{
    hier_op_t *op = st->op;
    ucoll_coll_args_t a = op->a;
    ucoll_req_t *sub = NULL;
    char *tmp = op->tmp;
    int err = UCOLL_OK;

    if (op->error != UCOLL_OK && st->which != HIER_LOCAL) {
        /* the call failed here (or was withdrawn): this level starts
         * nothing, but its sequence number is spent, as the other members
         * spent theirs, so that the communicator's next calls pair up */
        ucoll__coll_seq_skip(st->which == HIER_NODE ? op->comm->hier->node
                                                    : op->comm->hier->leaders);
    }
    if (op->error == UCOLL_OK) {
        /* the chunk: its elements of every vector (one chunk: the call) */
        size_t first = (size_t)st->chunk * op->chunk, off = first * a.esize;

        if (a.coll != UCOLL_COLL_ALLGATHER && a.coll != UCOLL_COLL_BARRIER) {
            a.count = UCOLL_MIN(op->chunk, a.count - first);
            a.sbuf = a.sbuf ? (const char *)a.sbuf + off : NULL;
            a.rbuf = a.rbuf ? (char *)a.rbuf + off : NULL;
            tmp = tmp ? tmp + off : NULL;
        }
        err = level_start(op, &a, tmp, st->level, &sub);
        if (err != UCOLL_OK) {
            ucoll_debug("two-level %s, level %d: %s", ucoll__coll_name(op->a.coll), st->level,
                        ucoll_strerror(err));
        }
    }
    if (err == UCOLL_OK && sub != NULL && !sub->complete) {
        sub->user = 0;
        sub->cb = step_done;
        sub->cb_arg = st;
        st->sub = sub;
        return;
    }
    if (sub != NULL) { /* done before it returned */
        err = err != UCOLL_OK ? err : sub->status.error;
        ucoll__req_release(sub);
    }
    st->done = 1;
    op->pending--;
    if (err != UCOLL_OK && op->error == UCOLL_OK) {
        op->error = err; /* the later steps start nothing */
    }
}

/* A blocking two-level call timed out (ucoll__coll_wait_blocking): the
 * levels in flight are withdrawn like any call, those not started yet
 * start nothing, and the call ends once UCX has let go of them; after
 * that nothing of it writes into the caller's buffers. */
static void hier_withdraw(ucoll_req_t *req, int status)
{
    hier_op_t *op = req->u.coll.withdraw_arg;
    ucoll_hier_t *h = op->comm->hier;

    req->u.coll.withdraw = NULL;
    if (op->error == UCOLL_OK) {
        op->error = status;
    }
    /* a level withdrawn may complete at once, into drive: op must outlive
     * this loop */
    h->driving = 1;
    for (int i = 0; i < op->nsteps; i++) {
        ucoll_req_t *sub = op->steps[i].sub;

        if (sub == NULL || sub->complete) {
            continue;
        }
        if (sub->u.coll.withdraw) {
            sub->u.coll.withdraw(sub, status);
        } else if (!ucoll__sched_cancel(sub, status)) {
            (void)ucoll__shm_cancel(sub, status);
        }
    }
    h->driving = 0;
    h->again = 0;
    drive(h);
}

/* Start every step whose turn has come: at the head of its communicator's
 * queue (members start their calls on it in the same order) and its
 * chunk's earlier step done; local steps need only the latter. Then end
 * the calls all of whose steps are done. Reentrant calls (a step
 * completing while another starts) only ask the running one to look
 * again. */
static void drive(ucoll_hier_t *h)
{
    ucoll_list_t *pos, *tmp;

    if (h->driving) {
        h->again = 1;
        return;
    }
    h->driving = 1;
    do {
        h->again = 0;
        ucoll_list_for_each_safe(pos, tmp, &h->ops)
        {
            hier_op_t *op = ucoll_container_of(pos, hier_op_t, link);

            for (int i = 0; i < op->nsteps; i++) {
                hier_step_t *st = &op->steps[i];

                if (st->which == HIER_LOCAL && !st->done && (!st->after || st->after->done)) {
                    step_start(st);
                    h->again = 1;
                }
            }
        }
        for (int q = 0; q < 2; q++) {
            while (!ucoll_list_empty(&h->queue[q])) {
                hier_step_t *st = ucoll_list_first(&h->queue[q], hier_step_t, link);

                if (st->after && !st->after->done) {
                    break;
                }
                ucoll_list_del(&st->link);
                step_start(st);
                h->again = 1;
            }
        }
        ucoll_list_for_each_safe(pos, tmp, &h->ops)
        {
            hier_op_t *op = ucoll_container_of(pos, hier_op_t, link);

            if (op->pending == 0) {
                ucoll_list_del(&op->link);
                op->req->u.coll.withdraw = NULL;
                ucoll__req_complete(op->req, op->error);
                op_free(op);
            }
        }
    } while (h->again);
    h->driving = 0;
}

/* ---- the rows ----------------------------------------------------------- */

/* Elements per chunk of a call of bytes bytes: large bcast, reduce and
 * allreduce go in pieces, so that one piece crosses the network while the
 * previous one is spread (or the next one summed) inside the nodes. The
 * segment size when set, else an eighth of the call, at least 1 MiB (each
 * chunk's level is a whole call, with a handshake per large message: with
 * 256 KiB chunks a 1 MiB bcast across two netns nodes over TCP took 1.19x
 * the flat binomial's time, with 1 MiB ones 1.05x, and the allreduce 0.61x
 * the best flat row); never more than HIER_MAX_CHUNKS pieces; the same on
 * every rank. */
#define HIER_MAX_CHUNKS 64

static size_t hier_chunk(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    size_t bytes = a->count * a->esize, c;

    if (a->coll == UCOLL_COLL_ALLGATHER || a->coll == UCOLL_COLL_BARRIER || a->esize == 0) {
        return a->count ? a->count : 1;
    }
    c = prm->seg_size ? prm->seg_size : UCOLL_MAX(bytes / 8, (size_t)1 << 20);
    c = UCOLL_MAX(c / a->esize, (size_t)1);
    c = UCOLL_MAX(c, (a->count + HIER_MAX_CHUNKS - 1) / HIER_MAX_CHUNKS);
    return UCOLL_MIN(c, UCOLL_MAX(a->count, (size_t)1));
}

static int hier_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                      const ucoll_algo_params_t *prm, ucoll_req_t *req)
{
    ucoll_hier_t *h;
    hier_op_t *op;
    size_t bytes = a->count * a->esize, nchunks;
    int st, need_tmp, n = 0;

    if (comm->hier == NULL) {
        if ((st = hier_make(comm, &comm->hier)) != UCOLL_OK) {
            return st;
        }
    }
    h = comm->hier;
    op = calloc(1, sizeof(*op));
    if (op == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    op->comm = comm;
    op->a = *a;
    op->req = req;
    op->chunk = hier_chunk(a, prm);
    nchunks = a->count ? (a->count + op->chunk - 1) / op->chunk : 1;
    if (a->coll == UCOLL_COLL_ALLGATHER || a->coll == UCOLL_COLL_BARRIER) {
        nchunks = 1;
    }
    op->steps = calloc(nchunks * HIER_LEVELS, sizeof(hier_step_t));
    need_tmp = h->leaders && ((a->coll == UCOLL_COLL_REDUCE && h->node->size > 1) ||
                              (a->coll == UCOLL_COLL_ALLGATHER && !h->contiguous));
    if (need_tmp) {
        op->tmp = malloc(a->coll == UCOLL_COLL_REDUCE ? bytes + 1
                                                       : bytes * (size_t)comm->size + 1);
    }
    if (a->coll == UCOLL_COLL_ALLGATHER && h->leaders) {
        op->counts = malloc(2 * sizeof(size_t) * (size_t)h->nnodes);
        if (op->counts) {
            op->displs = op->counts + h->nnodes;
            for (int i = 0; i < h->nnodes; i++) {
                op->counts[i] = (size_t)h->node_size[i] * a->count;
                op->displs[i] = (size_t)h->node_first[i] * a->count;
            }
        }
    }
    if (op->steps == NULL || (need_tmp && op->tmp == NULL) ||
        (a->coll == UCOLL_COLL_ALLGATHER && h->leaders && op->counts == NULL)) {
        op_free(op);
        return UCOLL_ERR_NOMEM;
    }
    /* this rank's steps, chunk by chunk, level by level: the order in which
     * every member of an internal communicator queues its calls there */
    for (size_t c = 0; c < nchunks; c++) {
        hier_step_t *prev = NULL;

        for (int k = 0; k < HIER_LEVELS; k++) {
            int where = level_where(op, k);
            hier_step_t *s;

            if (where == HIER_NONE) {
                continue;
            }
            s = &op->steps[n++];
            s->op = op;
            s->which = where;
            s->chunk = (int)c;
            s->level = k;
            s->after = prev;
            if (a->coll == UCOLL_COLL_BCAST && comm->rank == a->root) {
                s->after = NULL; /* the root has the data: its node and the
                                  * other leaders get it at once */
            }
            ucoll_list_init(&s->link);
            if (where != HIER_LOCAL) {
                ucoll_list_add_tail(&h->queue[where], &s->link);
            }
            prev = s;
        }
    }
    op->nsteps = op->pending = n;
    req->u.coll.withdraw = hier_withdraw;
    req->u.coll.withdraw_arg = op;
    ucoll_list_add_tail(&h->ops, &op->link);
    drive(h);
    return UCOLL_OK;
}

/* The cheapest row of coll for a level (two-level rows excluded; shared
 * memory rows only for a node level where UCOLL_SHM allows them). */
static double level_cost(ucoll_coll_t coll, const ucoll_coll_args_t *a, int p, int node,
                         const ucoll_algo_params_t *prm)
{
    const ucoll_algo_t *const *reg = ucoll__algos(coll);
    ucoll_algo_params_t lp = *prm;
    double best = 1e30;

    if (p <= 1) {
        return 0;
    }
    if (node) {
        lp.model = prm->node_model;
    }
    for (; reg && *reg; reg++) {
        const ucoll_algo_t *al = *reg;
        double t;

        if ((al->flags & UCOLL_ALGO_HIER) || al->cost == NULL ||
            ((al->flags & UCOLL_ALGO_SHM) && !(node && prm->node_shm)) ||
            (al->can_serve && !al->can_serve(a, p))) {
            continue;
        }
        t = al->cost(a, p, &lp, &lp.model);
        if (t < best) {
            best = t;
        }
    }
    return best;
}

/* Levels of one chunk of x (lv[k]: level k's time), for the pipelined
 * operations. */
static void chunk_levels(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, double lv[3])
{
    ucoll_coll_args_t x = *a;
    int ppn = prm->ppn, nn = prm->nnodes;

    x.root = 0;
    switch (a->coll) {
    case UCOLL_COLL_BCAST:
        lv[0] = level_cost(UCOLL_COLL_BCAST, &x, ppn, 1, prm);
        lv[1] = level_cost(UCOLL_COLL_BCAST, &x, nn, 0, prm);
        lv[2] = lv[0];
        break;
    case UCOLL_COLL_REDUCE:
        lv[0] = level_cost(UCOLL_COLL_REDUCE, &x, ppn, 1, prm);
        lv[1] = level_cost(UCOLL_COLL_REDUCE, &x, nn, 0, prm);
        lv[2] = lv[0];
        break;
    default: /* allreduce */
        x.coll = UCOLL_COLL_REDUCE;
        lv[0] = level_cost(UCOLL_COLL_REDUCE, &x, ppn, 1, prm);
        lv[1] = level_cost(UCOLL_COLL_ALLREDUCE, a, nn, 0, prm);
        x.coll = UCOLL_COLL_BCAST;
        lv[2] = level_cost(UCOLL_COLL_BCAST, &x, ppn, 1, prm);
        break;
    }
}

/* The levels one after the other for the first chunk, then one chunk per
 * slowest level: chunks overlap across levels. */
static double hier_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    ucoll_coll_args_t x = *a;
    int ppn = prm->ppn, nn = prm->nnodes;
    double t = 0, lv[3];
    size_t ce, n;

    (void)m;
    if (nn < 2 || ppn < 2) {
        return 1e30;
    }
    switch (a->coll) {
    case UCOLL_COLL_BARRIER:
        t = level_cost(UCOLL_COLL_BARRIER, a, ppn, 1, prm) +
            level_cost(UCOLL_COLL_BARRIER, a, nn, 0, prm);
        x.coll = UCOLL_COLL_BCAST;
        x.count = 1;
        x.esize = 1;
        x.root = 0;
        return t + level_cost(UCOLL_COLL_BCAST, &x, ppn, 1, prm);
    case UCOLL_COLL_BCAST:
    case UCOLL_COLL_REDUCE:
    case UCOLL_COLL_ALLREDUCE:
        ce = hier_chunk(a, prm);
        n = a->count ? (a->count + ce - 1) / ce : 1;
        x.count = UCOLL_MIN(ce, a->count);
        chunk_levels(&x, prm, lv);
        return lv[0] + lv[1] + lv[2] + (double)(n - 1) * UCOLL_MAX(lv[0], UCOLL_MAX(lv[1], lv[2]));
    case UCOLL_COLL_ALLGATHER:
        x.coll = UCOLL_COLL_GATHER;
        x.root = 0;
        t = level_cost(UCOLL_COLL_GATHER, &x, ppn, 1, prm);
        x.coll = UCOLL_COLL_ALLGATHER; /* blocks of a node each */
        x.count = a->count * (size_t)ppn;
        t += level_cost(UCOLL_COLL_ALLGATHER, &x, nn, 0, prm);
        x.coll = UCOLL_COLL_BCAST;
        x.count = a->count * (size_t)p;
        return t + level_cost(UCOLL_COLL_BCAST, &x, ppn, 1, prm);
    default: return 1e30;
    }
}

#define HIER_ROW(op, what)                                                                     \
    const ucoll_algo_t ucoll__##op##_hier = {                                                  \
        .id = "hier",                                                                          \
        .desc = "two levels: " what,                                                           \
        .cost = hier_cost,                                                                     \
        .start = hier_start,                                                                   \
        .flags = UCOLL_ALGO_HIER,                                                              \
    }

HIER_ROW(barrier, "node barrier, leaders' barrier, node release");
HIER_ROW(bcast, "root's node, node leaders, the other nodes");
HIER_ROW(reduce, "node reduce, leaders' reduce, root's node");
HIER_ROW(allreduce, "node reduce, leaders' allreduce, node bcast");
HIER_ROW(allgather, "node gather, leaders' allgatherv, node bcast");

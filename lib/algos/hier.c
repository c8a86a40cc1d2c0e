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
 * The levels of one call run one after the other, each a nonblocking call
 * started when the previous one completes (from its completion callback,
 * as the shared-memory setup starts deferred calls). Two-level calls of
 * one communicator run one at a time, in call order: each takes sequence
 * numbers of the internal communicators when its level starts, and only
 * that order makes the members take them alike.
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
 * model. Not done: pipelining the levels by segment for large messages.
 */
#include "algos/algos.h"
#include "progress/request.h"

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
    ucoll_list_t ops; /* calls in call order, the first one running */
    int driving, again;
} ucoll_hier_t;

typedef struct hier_op {
    ucoll_list_t link;
    ucoll_comm_t *comm;
    ucoll_coll_args_t a;
    ucoll_req_t *req;  /* the caller's */
    ucoll_req_t *sub;  /* the level in flight */
    int level, error;
    char *tmp;         /* scratch: reduce's partial, allgather's node-order vector */
    size_t *counts, *displs; /* allgather: the leaders' allgatherv */
    char token;        /* barrier's release */
} hier_op_t;

#define HIER_LEVELS 3

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

void ucoll__hier_destroy(ucoll_comm_t *comm)
{
    ucoll_hier_t *h = comm->hier;
    ucoll_list_t *pos, *tmp;

    if (h == NULL) {
        return;
    }
    /* calls still queued (freeing a communicator with calls pending): they
     * end with an error; a level in flight belongs to the executor until
     * the context ends, and calls nobody back */
    ucoll_list_for_each_safe(pos, tmp, &h->ops)
    {
        hier_op_t *op = ucoll_container_of(pos, hier_op_t, link);

        ucoll_list_del(&op->link);
        if (op->sub) {
            op->sub->cb = NULL;
        }
        ucoll_debug("comm %u: dropping a two-level %s still pending", comm->id,
                    ucoll__coll_name(op->a.coll));
        ucoll__req_complete(op->req, UCOLL_ERR_ARG);
        free(op->tmp);
        free(op->counts);
        free(op);
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

/* Start level k of op on this rank: *sub the call in flight, NULL when
 * this rank has no part in level k. */
static int level_start(hier_op_t *op, int k, ucoll_req_t **sub)
{
    ucoll_hier_t *h = op->comm->hier;
    const ucoll_coll_args_t *a = &op->a;
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
                void *res = single ? a->rbuf : op->tmp;
                const void *in = (single && a->in_place) ? UCOLL_IN_PLACE : a->sbuf;
                return ucoll_ireduce(in, res, a->count, a->dt, a->op, rnode, lead, sub);
            }
            if (k == 2 && !single) {
                const void *in = leader ? op->tmp : a->sbuf;
                if (iroot && !leader && a->in_place) {
                    in = UCOLL_IN_PLACE;
                }
                return ucoll_ireduce(in, iroot ? a->rbuf : NULL, a->count, a->dt, a->op,
                                     h->node_lrank[a->root], node, sub);
            }
            return UCOLL_OK;
        }
        if (k == 0 && !single) {
            return ucoll_ireduce(a->sbuf, leader ? op->tmp : NULL, a->count, a->dt, a->op, 0,
                                 node, sub);
        }
        if (k == 1 && leader) {
            return ucoll_ireduce(single ? a->sbuf : op->tmp, NULL, a->count, a->dt, a->op, rnode,
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
        char *vec = h->contiguous ? a->rbuf : op->tmp; /* blocks in node order */
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
                    memcpy((char *)a->rbuf + (size_t)r * bytes, op->tmp + at * bytes, bytes);
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

static void drive(ucoll_hier_t *h);

static void level_done(ucoll_req_t *req)
{
    hier_op_t *op = req->cb_arg;
    int st = req->status.error;

    ucoll__req_release(req);
    op->sub = NULL;
    if (st != UCOLL_OK && op->error == UCOLL_OK) {
        op->error = st;
    }
    drive(op->comm->hier);
}

/* Start op's levels until one is in flight or all are done. 1 when op is
 * over. */
static int advance(hier_op_t *op)
{
    while (op->sub == NULL && op->level < HIER_LEVELS && op->error == UCOLL_OK) {
        ucoll_req_t *sub = NULL;
        int st = level_start(op, op->level++, &sub);

        if (st != UCOLL_OK) {
            ucoll_debug("two-level %s, level %d: %s", ucoll__coll_name(op->a.coll), op->level - 1,
                        ucoll_strerror(st));
            op->error = st;
            break;
        }
        if (sub == NULL) {
            continue;
        }
        if (sub->complete) { /* done before it returned */
            st = sub->status.error;
            ucoll__req_release(sub);
            if (st != UCOLL_OK) {
                op->error = st;
            }
            continue;
        }
        sub->user = 0;
        sub->cb = level_done;
        sub->cb_arg = op;
        op->sub = sub;
    }
    return op->sub == NULL;
}

/* Run the calls of h in order. Reentrant calls (a level completing while
 * another is being started) only ask the running one to look again. */
static void drive(ucoll_hier_t *h)
{
    if (h->driving) {
        h->again = 1;
        return;
    }
    h->driving = 1;
    do {
        h->again = 0;
        while (!ucoll_list_empty(&h->ops)) {
            hier_op_t *op = ucoll_list_first(&h->ops, hier_op_t, link);

            if (!advance(op)) {
                break;
            }
            ucoll_list_del(&op->link);
            ucoll__req_complete(op->req, op->error);
            free(op->tmp);
            free(op->counts);
            free(op);
        }
    } while (h->again);
    h->driving = 0;
}

/* ---- the rows ----------------------------------------------------------- */

static int hier_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                      const ucoll_algo_params_t *prm, ucoll_req_t *req)
{
    ucoll_hier_t *h;
    hier_op_t *op;
    size_t bytes = a->count * a->esize;
    int st;

    (void)prm;
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
    if (h->leaders && h->node->size > 1 && a->coll == UCOLL_COLL_REDUCE) {
        op->tmp = malloc(bytes ? bytes : 1);
    } else if (a->coll == UCOLL_COLL_ALLGATHER) {
        if (h->leaders && !h->contiguous) {
            op->tmp = malloc(bytes * (size_t)comm->size + 1);
        }
        if (h->leaders) {
            op->counts = malloc(2 * sizeof(size_t) * (size_t)h->nnodes);
            if (op->counts) {
                op->displs = op->counts + h->nnodes;
                for (int n = 0; n < h->nnodes; n++) {
                    op->counts[n] = (size_t)h->node_size[n] * a->count;
                    op->displs[n] = (size_t)h->node_first[n] * a->count;
                }
            }
        }
    }
    if ((op->tmp == NULL && ((h->leaders && h->node->size > 1 && a->coll == UCOLL_COLL_REDUCE) ||
                             (a->coll == UCOLL_COLL_ALLGATHER && h->leaders && !h->contiguous))) ||
        (a->coll == UCOLL_COLL_ALLGATHER && h->leaders && op->counts == NULL)) {
        free(op->tmp);
        free(op->counts);
        free(op);
        return UCOLL_ERR_NOMEM;
    }
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

static double hier_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    ucoll_coll_args_t x = *a;
    int ppn = prm->ppn, nn = prm->nnodes;
    double t = 0;

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
        x.root = 0;
        return 2 * level_cost(UCOLL_COLL_BCAST, &x, ppn, 1, prm) +
               level_cost(UCOLL_COLL_BCAST, &x, nn, 0, prm);
    case UCOLL_COLL_REDUCE:
        x.root = 0;
        return 2 * level_cost(UCOLL_COLL_REDUCE, &x, ppn, 1, prm) +
               level_cost(UCOLL_COLL_REDUCE, &x, nn, 0, prm);
    case UCOLL_COLL_ALLREDUCE:
        x.coll = UCOLL_COLL_REDUCE;
        x.root = 0;
        t = level_cost(UCOLL_COLL_REDUCE, &x, ppn, 1, prm);
        t += level_cost(UCOLL_COLL_ALLREDUCE, a, nn, 0, prm);
        x.coll = UCOLL_COLL_BCAST;
        return t + level_cost(UCOLL_COLL_BCAST, &x, ppn, 1, prm);
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

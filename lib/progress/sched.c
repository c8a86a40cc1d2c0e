/*
 * Schedules and the collective executor (contract in sched.h).
 *
 * Building: steps go into one flat array cut into rounds by an index array,
 * exactly as the algorithm wrote them. Scratch is handed out as virtual
 * addresses (block k at SCRATCH_VBASE + k * SCRATCH_VSPAN), which no user
 * pointer can take, so sealing can tell scratch from user memory.
 *
 * Sealing compiles the steps into nodes: every pointer becomes (base,
 * offset), base 0 being absolute memory, 1 the send buffer, 2 the receive
 * buffer and 3 + k scratch block k. Each round contributes its local steps
 * first, then its sends and receives, so that one round means what it meant
 * when rounds ran one after the other. Dependencies (edges) come from:
 *  - memory, per base, through a list of live accesses: a read depends on
 *    the last writer of the bytes it reads; a write on the last writer and
 *    on every reader since. A write drops the accesses it covers (whoever
 *    comes later depends on the write, and the write on them). The sends
 *    and receives of one round are all checked against the state before
 *    any of them is recorded, so they never wait for each other;
 *  - synchronisation: a round holding a zero-length send or receive is
 *    fenced by two join nodes (kind NOP), one after everything before it,
 *    one after everything in it; everything later depends on the latter;
 *  - issue order: the sends to one peer are issued in schedule order, and
 *    the receives from one peer are posted in order. This is a weaker edge
 *    (node->pnext): it is satisfied when the earlier one is issued, not when
 *    it completes, so messages match as written and still overlap.
 * When the live access lists grow too long to scan (one range read by many
 * steps, at large p), sealing falls back to round-by-round edges: a join
 * node between rounds, local steps chained, sends and receives after them.
 * Every edge is one the round-by-round order implies, so no schedule that
 * completes round by round can deadlock here.
 *
 * Running: a run is one instance of a sealed schedule, with its own
 * countdown per node (a copy of ndeps), a FIFO of ready nodes, the bases
 * of this call and its own scratch. Nodes become ready in completion order
 * and are issued in that order. Completion callbacks only count down and
 * queue; a run whose queue gained work goes on the context's ready list,
 * drained by ucoll__exec_progress (callbacks never recurse into the
 * executor). A sealed schedule keeps one spare run, so a cached schedule
 * runs again without allocating.
 *
 * Errors: the first error (from posting or from a completion) is kept and
 * nothing new is issued; the run ends once every operation it posted has
 * completed (a receive may still write into scratch or user memory).
 *
 * Scratch comes from a per-context pool of power-of-two size classes, kept
 * across collectives and released by ucoll__exec_cleanup.
 */
#include "progress/sched.h"
#include "transport/net.h"
#include "progress/request.h"
#include "dtype.h"

#include <string.h>

#define SCRATCH_ALIGN   64
#define SCRATCH_CLASSES 48
/* Scratch blocks larger than this are freed rather than pooled. */
#define SCRATCH_POOL_MAX ((size_t)256 << 20)
#define POISON_BYTE      0xa5
/* Virtual scratch addresses: above any user-space pointer of today's 48- and
 * 57-bit address spaces, each block with 2^40 bytes of room. */
#define SCRATCH_VBASE  ((uintptr_t)1 << 58)
#define SCRATCH_VSHIFT 40
#define SCRATCH_VMAX   ((size_t)1 << 17) /* blocks per schedule */
/* Memory analysis budget: live accesses scanned per step, on average,
 * before sealing falls back to rounds. */
#define SEAL_SCAN_PER_STEP 64
#define SEAL_SCAN_MIN      ((size_t)1 << 16)

enum { BASE_ABS = 0, BASE_SBUF = 1, BASE_RBUF = 2, BASE_SCRATCH = 3 };

typedef struct scratch_hdr {
    ucoll_list_t link; /* in the pool */
    size_t size;       /* usable bytes (the class size) */
    int cls;
    char pad[SCRATCH_ALIGN - sizeof(ucoll_list_t) - sizeof(size_t) - sizeof(int)];
} scratch_hdr_t;

_Static_assert(sizeof(scratch_hdr_t) == SCRATCH_ALIGN, "scratch header keeps alignment");

typedef struct ucoll_exec {
    ucoll_list_t ready;  /* runs with ready nodes, or done */
    ucoll_list_t active; /* every started run */
    ucoll_list_t pool[SCRATCH_CLASSES];
    size_t pool_bytes;
    int draining;
    int stopped; /* ucoll__exec_stop: scratch is held, not reused or freed */
    ucoll_list_t held;
    int dry;
    int poison;
    void *dummy; /* dry-run scratch */
    void *sel_state;
    void (*sel_free)(void *);
} ucoll_exec_t;

_Static_assert(offsetof(ucoll_exec_t, ready) == 0, "ucoll__exec_pending reads the ready list");

/* A compiled step. */
typedef struct node {
    uint8_t kind; /* ucoll_step_kind_t */
    uint8_t dt, op;
    int peer;
    int32_t pnext;    /* next send to / receive from the same peer, or -1 */
    uint32_t base[3]; /* dst, src, src2 */
    uintptr_t off[3];
    size_t len;
    uint32_t succ; /* first successor in sched->succ */
    uint32_t nsucc;
} node_t;

typedef struct ucoll_run ucoll_run_t;

/* The callback argument of one posted node. */
typedef struct slot {
    ucoll_run_t *run;
    uint32_t node;
} slot_t;

struct ucoll_run {
    ucoll_list_t link;  /* in exec->ready while queued there */
    ucoll_list_t alink; /* in exec->active while started */
    ucoll_sched_t *s;
    ucoll_req_t *req;
    int tag;
    int32_t *cnt;    /* unmet dependencies per node */
    uint32_t *queue; /* ready nodes, FIFO; each node enters once */
    uint32_t qhead, qtail;
    slot_t *slots;
    uintptr_t *bases;
    scratch_hdr_t **scratch; /* one block per scratch block of s */
    uint32_t ndone;          /* nodes completed */
    int inflight;            /* posted, not yet called back */
    int error;
    int cancelled; /* after an error: what is in flight has been withdrawn */
    int on_ready;
    int running;
};

struct ucoll_sched {
    ucoll_ctx_t *ctx; /* kept apart from comm: cleanup may outlive it */
    ucoll_comm_t *comm;
    int tag;
    /* as built */
    ucoll_step_t *steps;
    size_t nsteps, steps_cap;
    size_t *rounds; /* rounds[i] = index of round i's first step */
    size_t nrounds, rounds_cap;
    size_t *scr_size; /* bytes of each scratch block */
    size_t nscr, scr_cap;
    uintptr_t sbuf, rbuf;
    size_t sbytes, rbytes;
    /* sealed */
    int sealed;
    int dataflow;
    int relocatable;
    node_t *nodes;
    uint32_t nnodes;
    int32_t *ndeps;
    uint32_t *succ;
    size_t nedges;
    /* life */
    int owned;        /* nobody else holds it: freed when its last run ends */
    int refs;         /* runs started and not finished */
    ucoll_run_t *spare;
};

/* ---- building ----------------------------------------------------------- */

int ucoll__sched_create(ucoll_comm_t *comm, int tag, ucoll_sched_t **sched_p)
{
    ucoll_sched_t *s = calloc(1, sizeof(*s));

    if (s == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    s->ctx = comm->ctx;
    s->comm = comm;
    s->tag = tag;
    *sched_p = s;
    return UCOLL_OK;
}

static void run_free(ucoll_run_t *run)
{
    if (run == NULL) {
        return;
    }
    free(run->cnt);
    free(run->queue);
    free(run->slots);
    free(run->bases);
    free(run->scratch);
    free(run);
}

static void sched_free(ucoll_sched_t *s)
{
    run_free(s->spare);
    free(s->steps);
    free(s->rounds);
    free(s->scr_size);
    free(s->nodes);
    free(s->ndeps);
    free(s->succ);
    free(s);
}

void ucoll__sched_destroy(ucoll_sched_t *s)
{
    if (s->refs > 0) {
        s->owned = 1;
        return;
    }
    sched_free(s);
}

void ucoll__sched_release(ucoll_sched_t *s)
{
    ucoll__sched_destroy(s);
}

void ucoll__sched_hold(ucoll_sched_t *s)
{
    s->refs++;
}

void ucoll__sched_unhold(ucoll_sched_t *s)
{
    if (--s->refs == 0 && s->owned) {
        sched_free(s);
    }
}

void ucoll__sched_set_bufs(ucoll_sched_t *s, const void *sbuf, size_t sbytes, const void *rbuf,
                           size_t rbytes)
{
    s->sbuf = (uintptr_t)sbuf;
    s->sbytes = sbuf ? sbytes : 0;
    s->rbuf = (uintptr_t)rbuf;
    s->rbytes = rbuf ? rbytes : 0;
}

static int sched_open_round(ucoll_sched_t *s)
{
    size_t *r;

    if (s->nrounds > 0 && s->rounds[s->nrounds - 1] == s->nsteps) {
        return UCOLL_OK; /* the current round is still empty */
    }
    if (s->nrounds == s->rounds_cap) {
        size_t cap = s->rounds_cap ? 2 * s->rounds_cap : 8;
        r = realloc(s->rounds, cap * sizeof(*r));
        if (r == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        s->rounds = r;
        s->rounds_cap = cap;
    }
    s->rounds[s->nrounds++] = s->nsteps;
    return UCOLL_OK;
}

static ucoll_step_t *sched_add(ucoll_sched_t *s, int kind)
{
    ucoll_step_t *st;

    if (s->sealed) {
        ucoll_error("a step added to a sealed schedule");
        return NULL;
    }
    if (s->nrounds == 0 && sched_open_round(s) != UCOLL_OK) {
        return NULL;
    }
    if (s->nsteps == s->steps_cap) {
        size_t cap = s->steps_cap ? 2 * s->steps_cap : 16;
        st = realloc(s->steps, cap * sizeof(*st));
        if (st == NULL) {
            return NULL;
        }
        s->steps = st;
        s->steps_cap = cap;
    }
    st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = (uint8_t)kind;
    return st;
}

int ucoll__sched_send(ucoll_sched_t *s, const void *buf, size_t bytes, int peer)
{
    ucoll_step_t *st = sched_add(s, UCOLL_STEP_SEND);

    if (st == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    st->src = buf;
    st->len = bytes;
    st->peer = peer;
    return UCOLL_OK;
}

int ucoll__sched_recv(ucoll_sched_t *s, void *buf, size_t bytes, int peer)
{
    ucoll_step_t *st = sched_add(s, UCOLL_STEP_RECV);

    if (st == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    st->dst = buf;
    st->len = bytes;
    st->peer = peer;
    return UCOLL_OK;
}

int ucoll__sched_copy(ucoll_sched_t *s, void *dst, const void *src, size_t bytes)
{
    ucoll_step_t *st;

    if (bytes == 0 || dst == src) {
        return UCOLL_OK;
    }
    st = sched_add(s, UCOLL_STEP_COPY);
    if (st == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    st->dst = dst;
    st->src = src;
    st->len = bytes;
    return UCOLL_OK;
}

int ucoll__sched_reduce(ucoll_sched_t *s, void *dst, const void *a, const void *b, size_t count,
                        ucoll_dtype_t dt, ucoll_op_t op)
{
    ucoll_step_t *st;

    if (count == 0) {
        return UCOLL_OK;
    }
    st = sched_add(s, UCOLL_STEP_REDUCE);
    if (st == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    st->dst = dst;
    st->src = a;
    st->src2 = b;
    st->len = count;
    st->dt = (uint8_t)dt;
    st->op = (uint8_t)op;
    return UCOLL_OK;
}

int ucoll__sched_round(ucoll_sched_t *s)
{
    return sched_open_round(s);
}

void *ucoll__sched_scratch(ucoll_sched_t *s, size_t bytes)
{
    if (s->sealed || s->nscr >= SCRATCH_VMAX || bytes >= ((size_t)1 << SCRATCH_VSHIFT)) {
        ucoll_error("collective scratch: %zu bytes in block %zu is beyond the schedule's room",
                    bytes, s->nscr);
        return NULL;
    }
    if (s->nscr == s->scr_cap) {
        size_t cap = s->scr_cap ? 2 * s->scr_cap : 4;
        size_t *n = realloc(s->scr_size, cap * sizeof(*n));
        if (n == NULL) {
            return NULL;
        }
        s->scr_size = n;
        s->scr_cap = cap;
    }
    s->scr_size[s->nscr] = bytes;
    return (void *)(SCRATCH_VBASE + ((uintptr_t)s->nscr++ << SCRATCH_VSHIFT));
}

size_t ucoll__sched_nrounds(const ucoll_sched_t *s)
{
    return (s->nrounds > 0 && s->rounds[s->nrounds - 1] == s->nsteps) ? s->nrounds - 1 : s->nrounds;
}

size_t ucoll__sched_round_nsteps(const ucoll_sched_t *s, size_t round)
{
    size_t end = (round + 1 < s->nrounds) ? s->rounds[round + 1] : s->nsteps;
    return end - s->rounds[round];
}

const ucoll_step_t *ucoll__sched_round_steps(const ucoll_sched_t *s, size_t round)
{
    return &s->steps[s->rounds[round]];
}

ucoll_comm_t *ucoll__sched_comm(const ucoll_sched_t *s)
{
    return s->comm;
}

/* ---- sealing: pointers ---------------------------------------------------- */

static int is_comm(int kind)
{
    return kind == UCOLL_STEP_SEND || kind == UCOLL_STEP_RECV;
}

/* Bytes a step touches through each pointer. */
static size_t step_bytes(const ucoll_step_t *st)
{
    return st->kind == UCOLL_STEP_REDUCE ? st->len * ucoll_dtype_size(st->dt) : st->len;
}

/* Classify [p, p + len) as (base, off); user_abs: no user buffer is
 * declared usable (everything outside scratch is absolute). Returns 0 when
 * a pointer with bytes behind it lies in no declared buffer. */
static int classify(const ucoll_sched_t *s, uintptr_t p, size_t len, int user_abs, uint32_t *base,
                    uintptr_t *off)
{
    if (p >= SCRATCH_VBASE) {
        size_t k = (p - SCRATCH_VBASE) >> SCRATCH_VSHIFT;
        if (k < s->nscr) {
            *base = BASE_SCRATCH + (uint32_t)k;
            *off = (p - SCRATCH_VBASE) & (((uintptr_t)1 << SCRATCH_VSHIFT) - 1);
            return 1;
        }
    }
    *base = BASE_ABS;
    *off = p;
    if (len == 0) {
        return 1;
    }
    if (user_abs) {
        return 0;
    }
    if (s->rbytes && p >= s->rbuf && p + len <= s->rbuf + s->rbytes) {
        *base = BASE_RBUF;
        *off = p - s->rbuf;
        return 1;
    }
    if (s->sbytes && p >= s->sbuf && p + len <= s->sbuf + s->sbytes) {
        *base = BASE_SBUF;
        *off = p - s->sbuf;
        return 1;
    }
    return 0;
}

/* Fill node n from step st; returns 0 when some pointer is absolute. */
static int compile_step(const ucoll_sched_t *s, const ucoll_step_t *st, int user_abs, node_t *n)
{
    const void *ptr[3] = {st->dst, st->src, st->src2};
    size_t len = step_bytes(st);
    int ok = 1;

    memset(n, 0, sizeof(*n));
    n->kind = st->kind;
    n->dt = st->dt;
    n->op = st->op;
    n->peer = st->peer;
    n->len = st->len;
    n->pnext = -1;
    for (int i = 0; i < 3; i++) {
        ok &= classify(s, (uintptr_t)ptr[i], ptr[i] ? len : 0, user_abs, &n->base[i], &n->off[i]);
    }
    return ok;
}

/* ---- sealing: the graph ------------------------------------------------------ */

typedef struct access {
    uintptr_t lo, hi;
    uint32_t node;
    int write;
} access_t;

typedef struct acclist {
    access_t *a;
    size_t n, cap;
} acclist_t;

typedef struct builder {
    ucoll_sched_t *s;
    uint32_t (*edges)[2]; /* from, to */
    size_t nedges, ecap;
    uint32_t *mark; /* mark[from] == to + 1: edge from -> to exists */
    acclist_t *acc; /* per base */
    uint32_t nbases;
    size_t scanned, budget;
    int32_t join; /* the latest join node, or -1 */
    uint32_t since_join; /* first node after it */
    /* issue order: last send / receive node per peer (open addressing) */
    struct {
        int peer;
        int32_t last[2];
    } *ph;
    uint32_t phmask;
    int failed; /* out of memory */
    int over;   /* over the scan budget */
} builder_t;

static void add_edge(builder_t *b, uint32_t from, uint32_t to)
{
    if (from == to || b->mark[from] == to + 1) {
        return;
    }
    b->mark[from] = to + 1;
    if (b->nedges == b->ecap) {
        size_t cap = b->ecap ? 2 * b->ecap : 64;
        void *e = realloc(b->edges, cap * sizeof(*b->edges));
        if (e == NULL) {
            b->failed = 1;
            return;
        }
        b->edges = e;
        b->ecap = cap;
    }
    b->edges[b->nedges][0] = from;
    b->edges[b->nedges][1] = to;
    b->nedges++;
}

/* Dependencies of node x's access of [lo, hi) in base (0-length: none). */
static void query(builder_t *b, uint32_t x, uint32_t base, uintptr_t lo, size_t len, int write)
{
    acclist_t *l = &b->acc[base];
    uintptr_t hi = lo + len;

    if (len == 0) {
        return;
    }
    b->scanned += l->n;
    for (size_t i = 0; i < l->n; i++) {
        const access_t *a = &l->a[i];
        if (a->lo < hi && lo < a->hi && (write || a->write)) {
            add_edge(b, a->node, x);
        }
    }
}

static int acc_push(builder_t *b, acclist_t *l, uintptr_t lo, uintptr_t hi, uint32_t x, int write)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        access_t *a = realloc(l->a, cap * sizeof(*a));
        if (a == NULL) {
            b->failed = 1;
            return -1;
        }
        l->a = a;
        l->cap = cap;
    }
    l->a[l->n++] = (access_t){lo, hi, x, write};
    return 0;
}

/* Record node x's access; a write replaces whatever it covers. */
static void record(builder_t *b, uint32_t x, uint32_t base, uintptr_t lo, size_t len, int write)
{
    acclist_t *l = &b->acc[base];
    uintptr_t hi = lo + len;

    if (len == 0) {
        return;
    }
    if (write) {
        /* drop what [lo, hi) covers, keep what sticks out of it (pushed at
         * the end, where the scan meets them again and passes) */
        for (size_t i = 0; i < l->n;) {
            access_t a = l->a[i];
            if (!(a.lo < hi && lo < a.hi)) {
                i++;
                continue;
            }
            l->a[i] = l->a[--l->n];
            if (a.lo < lo) {
                acc_push(b, l, a.lo, lo, a.node, a.write);
            }
            if (hi < a.hi) {
                acc_push(b, l, hi, a.hi, a.node, a.write);
            }
        }
    }
    acc_push(b, l, lo, hi, x, write);
}

static void node_memory(builder_t *b, uint32_t x, int do_record)
{
    const node_t *n = &b->s->nodes[x];
    size_t bytes = n->kind == UCOLL_STEP_REDUCE ? n->len * ucoll_dtype_size(n->dt) : n->len;
    void (*f)(builder_t *, uint32_t, uint32_t, uintptr_t, size_t, int) = do_record ? record
                                                                                     : query;

    switch (n->kind) {
    case UCOLL_STEP_SEND:
        f(b, x, n->base[1], n->off[1], bytes, 0);
        break;
    case UCOLL_STEP_RECV:
        f(b, x, n->base[0], n->off[0], bytes, 1);
        break;
    case UCOLL_STEP_COPY:
        f(b, x, n->base[1], n->off[1], bytes, 0);
        f(b, x, n->base[0], n->off[0], bytes, 1);
        break;
    case UCOLL_STEP_REDUCE:
        f(b, x, n->base[1], n->off[1], bytes, 0);
        f(b, x, n->base[2], n->off[2], bytes, 0);
        f(b, x, n->base[0], n->off[0], bytes, 1);
        break;
    default:
        break;
    }
}

static void clear_memory(builder_t *b)
{
    for (uint32_t i = 0; i < b->nbases; i++) {
        b->acc[i].n = 0;
    }
}

/* The issue-order chain: x follows the last node of its kind and peer. */
static void chain_peer(builder_t *b, uint32_t x)
{
    node_t *nodes = b->s->nodes;
    int peer = nodes[x].peer;
    int k = nodes[x].kind == UCOLL_STEP_RECV;
    uint32_t h = ((uint32_t)peer * 2654435761u) & b->phmask;

    while (b->ph[h].peer != peer && b->ph[h].peer != -1) {
        h = (h + 1) & b->phmask;
    }
    if (b->ph[h].peer == -1) {
        b->ph[h].peer = peer;
        b->ph[h].last[0] = b->ph[h].last[1] = -1;
    }
    if (b->ph[h].last[k] >= 0) {
        nodes[b->ph[h].last[k]].pnext = (int32_t)x;
    }
    b->ph[h].last[k] = (int32_t)x;
}

static uint32_t add_join(builder_t *b, uint32_t *pos)
{
    node_t *n = &b->s->nodes[*pos];

    memset(n, 0, sizeof(*n));
    n->kind = UCOLL_STEP_NOP;
    n->pnext = -1;
    return (*pos)++;
}

/* Make a join after every node in [from, to), and after the previous join. */
static uint32_t join_all(builder_t *b, uint32_t from, uint32_t to, uint32_t *pos)
{
    uint32_t j = add_join(b, pos);

    if (b->join >= 0) {
        add_edge(b, (uint32_t)b->join, j);
    }
    for (uint32_t i = from; i < to; i++) {
        add_edge(b, i, j);
    }
    b->join = (int32_t)j;
    b->since_join = j + 1;
    return j;
}

static int round_syncs(const ucoll_step_t *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (is_comm(st[i].kind) && st[i].len == 0) {
            return 1;
        }
    }
    return 0;
}

/* Compile and connect every round; dataflow 0: round by round. */
static void build_graph(builder_t *b, int dataflow, int user_abs)
{
    ucoll_sched_t *s = b->s;
    size_t nr = ucoll__sched_nrounds(s);
    uint32_t pos = 0;

    b->join = -1;
    b->since_join = 0;
    b->nedges = 0;
    for (size_t r = 0; r < nr && !b->failed && !b->over; r++) {
        const ucoll_step_t *st = ucoll__sched_round_steps(s, r);
        size_t n = ucoll__sched_round_nsteps(s, r);
        int sync = !dataflow || round_syncs(st, n);
        uint32_t first, last_local = UINT32_MAX, comm0;

        if (sync && pos > b->since_join) {
            join_all(b, b->since_join, pos, &pos);
            clear_memory(b);
        }
        first = pos;
        /* local steps, in order */
        for (size_t i = 0; i < n; i++) {
            uint32_t x;
            if (is_comm(st[i].kind)) {
                continue;
            }
            x = pos++;
            compile_step(s, &st[i], user_abs, &s->nodes[x]);
            if (b->join >= 0) {
                add_edge(b, (uint32_t)b->join, x);
            }
            if (sync && last_local != UINT32_MAX) {
                add_edge(b, last_local, x);
            }
            if (dataflow) {
                node_memory(b, x, 0);
                node_memory(b, x, 1);
            }
            last_local = x;
        }
        /* sends and receives: all checked, then all recorded */
        comm0 = pos;
        for (size_t i = 0; i < n; i++) {
            uint32_t x;
            if (!is_comm(st[i].kind)) {
                continue;
            }
            x = pos++;
            compile_step(s, &st[i], user_abs, &s->nodes[x]);
            if (b->join >= 0) {
                add_edge(b, (uint32_t)b->join, x);
            }
            if (sync && last_local != UINT32_MAX) {
                add_edge(b, last_local, x);
            }
            if (dataflow) {
                node_memory(b, x, 0);
            }
            chain_peer(b, x);
        }
        if (dataflow) {
            for (uint32_t x = comm0; x < pos; x++) {
                node_memory(b, x, 1);
            }
        }
        if (sync && r + 1 < nr) {
            join_all(b, first, pos, &pos);
            clear_memory(b);
        }
        if (b->scanned > b->budget) {
            b->over = 1;
        }
    }
    s->nnodes = pos;
}

static int make_csr(ucoll_sched_t *s, builder_t *b)
{
    uint32_t *fill;

    s->ndeps = calloc(s->nnodes ? s->nnodes : 1, sizeof(*s->ndeps));
    s->succ = malloc((b->nedges ? b->nedges : 1) * sizeof(*s->succ));
    fill = calloc(s->nnodes ? s->nnodes : 1, sizeof(*fill));
    if (s->ndeps == NULL || s->succ == NULL || fill == NULL) {
        free(fill);
        return UCOLL_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < s->nnodes; i++) {
        s->nodes[i].nsucc = 0;
    }
    for (size_t e = 0; e < b->nedges; e++) {
        s->nodes[b->edges[e][0]].nsucc++;
        s->ndeps[b->edges[e][1]]++;
    }
    for (uint32_t i = 0, at = 0; i < s->nnodes; i++) {
        s->nodes[i].succ = at;
        at += s->nodes[i].nsucc;
    }
    for (size_t e = 0; e < b->nedges; e++) {
        uint32_t from = b->edges[e][0];
        s->succ[s->nodes[from].succ + fill[from]++] = b->edges[e][1];
    }
    /* the issue-order chain counts as one more dependency */
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (s->nodes[i].pnext >= 0) {
            s->ndeps[s->nodes[i].pnext]++;
        }
    }
    s->nedges = b->nedges;
    free(fill);
    return UCOLL_OK;
}

/* Whether the declared buffers can be told apart: disjoint, or the send
 * buffer inside the receive buffer (then everything is rbuf-relative). */
static int bufs_separable(const ucoll_sched_t *s)
{
    if (s->sbytes == 0 || s->rbytes == 0) {
        return 1;
    }
    if (s->sbuf + s->sbytes <= s->rbuf || s->rbuf + s->rbytes <= s->sbuf) {
        return 1;
    }
    return s->sbuf >= s->rbuf && s->sbuf + s->sbytes <= s->rbuf + s->rbytes;
}

int ucoll__sched_seal(ucoll_sched_t *s)
{
    size_t nr = ucoll__sched_nrounds(s);
    size_t maxnodes = s->nsteps + 2 * nr + 1;
    builder_t b;
    int user_abs, st = UCOLL_OK;
    size_t ncomm = 0;

    if (s->sealed) {
        return UCOLL_OK;
    }
    if (maxnodes >= INT32_MAX / 2) {
        return UCOLL_ERR_NOMEM;
    }
    /* relocatable when every pointer with bytes behind it lies in a
     * declared buffer or scratch, and the buffers do not partly overlap */
    user_abs = !bufs_separable(s);
    s->relocatable = !user_abs;
    for (size_t i = 0; i < s->nsteps && s->relocatable; i++) {
        node_t n;
        if (!compile_step(s, &s->steps[i], 0, &n)) {
            s->relocatable = 0;
        }
    }
    if (!s->relocatable) {
        user_abs = 1; /* one address space for user memory: correct aliasing */
    }
    for (size_t i = 0; i < s->nsteps; i++) {
        ncomm += is_comm(s->steps[i].kind);
    }

    memset(&b, 0, sizeof(b));
    b.s = s;
    b.nbases = BASE_SCRATCH + (uint32_t)s->nscr;
    b.budget = SEAL_SCAN_PER_STEP * s->nsteps + SEAL_SCAN_MIN;
    b.phmask = 1;
    while (b.phmask + 1 < 2 * ncomm + 2) {
        b.phmask = 2 * b.phmask + 1;
    }
    s->nodes = malloc(maxnodes * sizeof(*s->nodes));
    b.mark = calloc(maxnodes, sizeof(*b.mark));
    b.acc = calloc(b.nbases, sizeof(*b.acc));
    b.ph = malloc((b.phmask + 1) * sizeof(*b.ph));
    if (s->nodes == NULL || b.mark == NULL || b.acc == NULL || b.ph == NULL) {
        st = UCOLL_ERR_NOMEM;
        goto out;
    }
    for (int dataflow = 1; dataflow >= 0; dataflow--) {
        memset(b.mark, 0, maxnodes * sizeof(*b.mark));
        for (uint32_t i = 0; i <= b.phmask; i++) {
            b.ph[i].peer = -1;
        }
        clear_memory(&b);
        b.scanned = 0;
        b.over = 0;
        build_graph(&b, dataflow, user_abs);
        if (b.failed) {
            st = UCOLL_ERR_NOMEM;
            goto out;
        }
        if (!b.over) {
            s->dataflow = dataflow;
            break;
        }
        ucoll_debug("schedule of %zu steps: memory analysis over budget, running by rounds",
                    s->nsteps);
    }
    st = make_csr(s, &b);
    if (st == UCOLL_OK) {
        s->sealed = 1;
    }
out:
    for (uint32_t i = 0; b.acc && i < b.nbases; i++) {
        free(b.acc[i].a);
    }
    free(b.acc);
    free(b.mark);
    free(b.ph);
    free(b.edges);
    if (st != UCOLL_OK) {
        free(s->nodes);
        free(s->ndeps);
        free(s->succ);
        s->nodes = NULL;
        s->ndeps = NULL;
        s->succ = NULL;
    }
    return st;
}

int ucoll__sched_relocatable(const ucoll_sched_t *s)
{
    return s->sealed && s->relocatable;
}

int ucoll__sched_is_dataflow(const ucoll_sched_t *s)
{
    return s->sealed && s->dataflow;
}

void ucoll__sched_graph_size(const ucoll_sched_t *s, size_t *nodes_p, size_t *edges_p)
{
    *nodes_p = s->sealed ? s->nnodes : 0;
    *edges_p = s->sealed ? s->nedges : 0;
}

/* ---- scratch ------------------------------------------------------------------ */

static int size_class(size_t bytes)
{
    int c = 0;

    while (((size_t)1 << c) < bytes) {
        c++;
    }
    return c;
}

static scratch_hdr_t *scratch_get(ucoll_exec_t *ex, size_t bytes)
{
    scratch_hdr_t *h;
    int cls = size_class(bytes < SCRATCH_ALIGN ? SCRATCH_ALIGN : bytes);

    if (cls < SCRATCH_CLASSES && !ucoll_list_empty(&ex->pool[cls])) {
        h = ucoll_list_first(&ex->pool[cls], scratch_hdr_t, link);
        ucoll_list_del(&h->link);
        ex->pool_bytes -= h->size;
        return h;
    }
    size_t size = (cls < SCRATCH_CLASSES) ? ((size_t)1 << cls) : bytes;
    h = aligned_alloc(SCRATCH_ALIGN,
                      sizeof(*h) + ((size + SCRATCH_ALIGN - 1) & ~(size_t)(SCRATCH_ALIGN - 1)));
    if (h == NULL) {
        ucoll_error("out of memory for %zu bytes of collective scratch", bytes);
        return NULL;
    }
    h->size = size;
    h->cls = cls;
    return h;
}

static void scratch_put(ucoll_exec_t *ex, scratch_hdr_t *h)
{
    if (ex->stopped) {
        ucoll_list_add_head(&ex->held, &h->link); /* UCX may still read it */
        return;
    }
    if (h->cls >= SCRATCH_CLASSES || ex->pool_bytes + h->size > SCRATCH_POOL_MAX) {
        free(h);
        return;
    }
    ucoll_list_add_head(&ex->pool[h->cls], &h->link);
    ex->pool_bytes += h->size;
}

/* ---- running ------------------------------------------------------------------ */

static ucoll_run_t *run_get(ucoll_sched_t *s)
{
    ucoll_run_t *run = s->spare;
    size_t n = s->nnodes ? s->nnodes : 1;

    if (run) {
        s->spare = NULL;
        return run;
    }
    run = calloc(1, sizeof(*run));
    if (run == NULL) {
        return NULL;
    }
    run->s = s;
    run->cnt = malloc(n * sizeof(*run->cnt));
    run->queue = malloc(n * sizeof(*run->queue));
    run->slots = malloc(n * sizeof(*run->slots));
    run->bases = malloc((BASE_SCRATCH + s->nscr) * sizeof(*run->bases));
    run->scratch = calloc(s->nscr ? s->nscr : 1, sizeof(*run->scratch));
    if (!run->cnt || !run->queue || !run->slots || !run->bases || !run->scratch) {
        run_free(run);
        return NULL;
    }
    ucoll_list_init(&run->link);
    ucoll_list_init(&run->alink);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        run->slots[i].run = run;
        run->slots[i].node = i;
    }
    return run;
}

/* A finished run gives back its scratch and its hold on the schedule. */
static void run_put(ucoll_exec_t *ex, ucoll_run_t *run)
{
    ucoll_sched_t *s = run->s;

    for (size_t k = 0; k < s->nscr; k++) {
        if (run->scratch[k]) {
            scratch_put(ex, run->scratch[k]);
            run->scratch[k] = NULL;
        }
    }
    ucoll_list_del(&run->link);
    ucoll_list_del(&run->alink);
    run->req = NULL;
    s->refs--;
    if (s->spare == NULL) {
        s->spare = run;
    } else {
        run_free(run);
    }
    if (s->refs == 0 && s->owned) {
        sched_free(s);
    }
}

static inline void *resolve(const ucoll_run_t *run, const node_t *n, int i)
{
    return (void *)(run->bases[n->base[i]] + n->off[i]);
}

static void run_queue_ready(ucoll_run_t *run)
{
    if (!run->running && !run->on_ready) {
        ucoll_exec_t *ex = run->s->ctx->exec;
        run->on_ready = 1;
        ucoll_list_add_tail(&ex->ready, &run->link);
    }
}

static inline void node_done(ucoll_run_t *run, uint32_t x)
{
    const ucoll_sched_t *s = run->s;
    const node_t *n = &s->nodes[x];
    const uint32_t *succ = &s->succ[n->succ];

    for (uint32_t i = 0; i < n->nsucc; i++) {
        if (--run->cnt[succ[i]] == 0) {
            run->queue[run->qtail++] = succ[i];
        }
    }
    run->ndone++;
}

static void run_op_done(void *arg, int status)
{
    slot_t *slot = arg;
    ucoll_run_t *run = slot->run;

    run->inflight--;
    if (status != UCOLL_OK) {
        if (run->error == UCOLL_OK) {
            run->error = status;
        }
    } else {
        node_done(run, slot->node);
    }
    run_queue_ready(run);
}

static void run_local(ucoll_run_t *run, const node_t *n)
{
    ucoll_ctx_t *ctx = run->s->ctx;
    int dry = ((ucoll_exec_t *)ctx->exec)->dry;

    if (n->kind == UCOLL_STEP_COPY) {
        if (ctx->net->local_work) {
            ctx->net->local_work(ctx, n->len, 0);
        }
        if (!dry) {
            memmove(resolve(run, n, 0), resolve(run, n, 1), n->len);
        }
    } else if (n->kind == UCOLL_STEP_REDUCE) {
        if (ctx->net->local_work) {
            ctx->net->local_work(ctx, n->len * ucoll_dtype_size(n->dt), 1);
        }
        if (!dry) {
            ucoll__reduce(resolve(run, n, 0), resolve(run, n, 1), resolve(run, n, 2), n->len, n->dt,
                          n->op);
        }
    }
}

static void run_issue(ucoll_run_t *run, uint32_t x)
{
    const ucoll_sched_t *s = run->s;
    const node_t *n = &s->nodes[x];
    const ucoll_net_ops_t *net = s->ctx->net;
    int status;

    if (n->pnext >= 0 && --run->cnt[n->pnext] == 0) {
        run->queue[run->qtail++] = (uint32_t)n->pnext;
    }
    run->inflight++;
    if (n->kind == UCOLL_STEP_SEND) {
        status = net->isend(s->comm, resolve(run, n, 1), n->len, n->peer, run->tag, run_op_done,
                            &run->slots[x]);
    } else {
        status = net->irecv(s->comm, resolve(run, n, 0), n->len, n->peer, run->tag, run_op_done,
                            &run->slots[x]);
    }
    if (status != UCOLL_OK) {
        /* a failed post never calls back */
        run->inflight--;
        if (run->error == UCOLL_OK) {
            run->error = status;
        }
        ucoll_debug("collective tag %d on comm %u: posting to peer %d failed: %s", run->tag,
                    s->comm->id, n->peer, ucoll_strerror(status));
    }
}

static void run_finish(ucoll_run_t *run)
{
    ucoll_req_t *req = run->req;
    int error = run->error;

    if (error != UCOLL_OK) {
        ucoll_debug("collective tag %d on comm %u failed: %s", run->tag, run->s->comm->id,
                    ucoll_strerror(error));
    }
    run_put(run->s->ctx->exec, run);
    if (req) {
        req->u.coll.run = NULL;
        ucoll__req_complete(req, error);
    }
}

/* Issue every ready node; finish the run when it is over. */
static void run_advance(ucoll_run_t *run)
{
    const node_t *nodes = run->s->nodes;

    run->running = 1;
    while (run->qhead < run->qtail && run->error == UCOLL_OK) {
        uint32_t x = run->queue[run->qhead++];
        const node_t *n = &nodes[x];
        if (is_comm(n->kind)) {
            run_issue(run, x);
        } else {
            run_local(run, n);
            node_done(run, x);
        }
    }
    if (run->error != UCOLL_OK && run->inflight && !run->cancelled) {
        /* the run cannot succeed: what it still waits for (a receive from
         * a live peer that has given up the call too, say) is withdrawn,
         * so that it ends now rather than when that would have come */
        const ucoll_net_ops_t *net = run->s->ctx->net;

        run->cancelled = 1;
        if (net->cancel) {
            net->cancel(run->s->comm, run->tag, run->error);
        }
    }
    run->running = 0;
    if (run->ndone == run->s->nnodes || (run->error != UCOLL_OK && run->inflight == 0)) {
        run_finish(run);
    }
}

static int exec_drain(ucoll_exec_t *ex)
{
    int count = 0;

    if (ex->draining) {
        return 0;
    }
    ex->draining = 1;
    while (!ucoll_list_empty(&ex->ready)) {
        ucoll_run_t *run = ucoll_list_first(&ex->ready, ucoll_run_t, link);
        ucoll_list_del(&run->link);
        run->on_ready = 0;
        run_advance(run);
        count++;
    }
    ex->draining = 0;
    return count;
}

int ucoll__sched_run(ucoll_sched_t *s, ucoll_req_t *req, const void *sbuf, const void *rbuf,
                     int tag)
{
    ucoll_exec_t *ex = s->ctx->exec;
    ucoll_run_t *run;
    int st;

    if (!s->sealed && (st = ucoll__sched_seal(s)) != UCOLL_OK) {
        return st;
    }
    if (!s->relocatable && ((uintptr_t)sbuf != s->sbuf || (uintptr_t)rbuf != s->rbuf)) {
        ucoll_error("a schedule bound to its buffers was run on others");
        return UCOLL_ERR_ARG;
    }
    run = run_get(s);
    if (run == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    run->bases[BASE_ABS] = 0;
    run->bases[BASE_SBUF] = (uintptr_t)sbuf;
    run->bases[BASE_RBUF] = (uintptr_t)rbuf;
    for (size_t k = 0; k < s->nscr; k++) {
        if (ex->dry) {
            run->bases[BASE_SCRATCH + k] = (uintptr_t)ex->dummy;
            continue;
        }
        run->scratch[k] = scratch_get(ex, s->scr_size[k]);
        if (run->scratch[k] == NULL) {
            for (size_t j = 0; j < k; j++) {
                scratch_put(ex, run->scratch[j]);
                run->scratch[j] = NULL;
            }
            run_free(run);
            return UCOLL_ERR_NOMEM;
        }
        run->bases[BASE_SCRATCH + k] = (uintptr_t)(run->scratch[k] + 1);
        if (ex->poison) {
            memset(run->scratch[k] + 1, POISON_BYTE, s->scr_size[k]);
        }
    }
    s->refs++;
    run->req = req;
    run->tag = tag;
    /* a member has failed: the call ends with that, starting nothing (the
     * other live members end theirs alike) */
    run->error = s->ctx->net->comm_failed && s->ctx->net->comm_failed(s->comm) ? UCOLL_ERR_PEER
                                                                                : UCOLL_OK;
    run->cancelled = 0;
    run->inflight = 0;
    run->ndone = 0;
    run->qhead = run->qtail = 0;
    run->on_ready = 0;
    memcpy(run->cnt, s->ndeps, s->nnodes * sizeof(*run->cnt));
    for (uint32_t i = 0; i < s->nnodes; i++) {
        if (s->ndeps[i] == 0) {
            run->queue[run->qtail++] = i;
        }
    }
    if (req) {
        req->u.coll.run = run;
    }
    ucoll_list_add_tail(&ex->active, &run->alink);
    run->on_ready = 1;
    ucoll_list_add_tail(&ex->ready, &run->link);
    exec_drain(ex);
    return UCOLL_OK;
}

int ucoll__sched_start(ucoll_sched_t *s, ucoll_req_t *req)
{
    int st;

    if (!s->sealed) {
        st = ucoll__sched_seal(s);
        if (st != UCOLL_OK) {
            return st;
        }
    }
    s->owned = 1;
    st = ucoll__sched_run(s, req, (const void *)s->sbuf, (const void *)s->rbuf, s->tag);
    if (st != UCOLL_OK) {
        s->owned = 0; /* still the caller's to destroy */
    }
    return st;
}

int ucoll__sched_cancel(ucoll_req_t *req, int status)
{
    ucoll_run_t *run = req->u.coll.run;
    const ucoll_net_ops_t *net;

    if (run == NULL) {
        return 0;
    }
    net = run->s->ctx->net;
    /* no step is issued once the run has an error; it finishes when the
     * last operation in flight has called back */
    if (run->error == UCOLL_OK) {
        run->error = status;
    }
    if (run->inflight && !run->cancelled && net->cancel) {
        run->cancelled = 1;
        net->cancel(run->s->comm, run->tag, status);
    }
    run_queue_ready(run);
    exec_drain(run->s->ctx->exec);
    return 1;
}

int ucoll__exec_comm_busy(const ucoll_comm_t *comm)
{
    ucoll_exec_t *ex = comm->ctx->exec;
    ucoll_list_t *pos;

    ucoll_list_for_each(pos, &ex->active)
    {
        if (ucoll__comm_owns_id(comm, ucoll_container_of(pos, ucoll_run_t, alink)->s->comm->id)) {
            return 1;
        }
    }
    return 0;
}

void ucoll__exec_peer_failed(ucoll_ctx_t *ctx, int world)
{
    ucoll_exec_t *ex = ctx->exec;
    ucoll_list_t *pos;

    if (ex == NULL) {
        return;
    }
    ucoll_list_for_each(pos, &ex->active)
    {
        ucoll_run_t *run = ucoll_container_of(pos, ucoll_run_t, alink);
        const ucoll_comm_t *scope = ucoll__comm_scope(run->s->comm);

        if (run->error != UCOLL_OK) {
            continue;
        }
        for (int r = 0; r < scope->size; r++) {
            if (ucoll__comm_world_rank(scope, r) == world) {
                run->error = UCOLL_ERR_PEER; /* withdrawn by run_advance */
                run_queue_ready(run);
                break;
            }
        }
    }
}

int ucoll__exec_progress(ucoll_ctx_t *ctx)
{
    ucoll_exec_t *ex = ctx->exec;

    if (ex == NULL || ucoll_list_empty(&ex->ready)) {
        return 0;
    }
    return exec_drain(ex);
}

int ucoll__exec_init(ucoll_ctx_t *ctx)
{
    ucoll_exec_t *ex = calloc(1, sizeof(*ex));

    if (ex == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ex->dummy = aligned_alloc(SCRATCH_ALIGN, SCRATCH_ALIGN);
    if (ex->dummy == NULL) {
        free(ex);
        return UCOLL_ERR_NOMEM;
    }
    ucoll_list_init(&ex->ready);
    ucoll_list_init(&ex->active);
    ucoll_list_init(&ex->held);
    for (int i = 0; i < SCRATCH_CLASSES; i++) {
        ucoll_list_init(&ex->pool[i]);
    }
    ctx->exec = ex;
    return UCOLL_OK;
}

void ucoll__exec_stop(ucoll_ctx_t *ctx)
{
    ucoll_exec_t *ex = ctx->exec;
    ucoll_list_t *pos, *tmp;

    if (ex == NULL) {
        return;
    }
    ex->stopped = 1;
    ucoll_list_for_each_safe(pos, tmp, &ex->active)
    {
        ucoll_run_t *run = ucoll_container_of(pos, ucoll_run_t, alink);
        ucoll_debug("freeing collective tag %d still running at cleanup", run->tag);
        if (run->req) {
            run->req->u.coll.run = NULL;
        }
        run_put(ex, run);
    }
}

void ucoll__exec_cleanup(ucoll_ctx_t *ctx)
{
    ucoll_exec_t *ex = ctx->exec;
    ucoll_list_t *pos, *tmp;

    if (ex == NULL) {
        return;
    }
    ucoll__exec_stop(ctx);
    ucoll_list_for_each_safe(pos, tmp, &ex->held)
    {
        ucoll_list_del(pos);
        free(ucoll_container_of(pos, scratch_hdr_t, link));
    }
    for (int i = 0; i < SCRATCH_CLASSES; i++) {
        ucoll_list_for_each_safe(pos, tmp, &ex->pool[i])
        {
            ucoll_list_del(pos);
            free(ucoll_container_of(pos, scratch_hdr_t, link));
        }
    }
    if (ex->sel_free && ex->sel_state) {
        ex->sel_free(ex->sel_state);
    }
    free(ex->dummy);
    free(ex);
    ctx->exec = NULL;
}

void ucoll__exec_set_dry(ucoll_ctx_t *ctx, int dry)
{
    ctx->exec->dry = dry;
}

void ucoll__exec_set_poison(ucoll_ctx_t *ctx, int poison)
{
    ctx->exec->poison = poison;
}

void *ucoll__exec_sel_state(ucoll_ctx_t *ctx)
{
    return ctx->exec->sel_state;
}

void ucoll__exec_set_sel_state(ucoll_ctx_t *ctx, void *state, void (*free_fn)(void *))
{
    ctx->exec->sel_state = state;
    ctx->exec->sel_free = free_fn;
}

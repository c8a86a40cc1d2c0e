/*
 * simnet: the SIMULATED network (see simnet.h). Nothing here touches UCX.
 *
 * Matching: per destination rank, a FIFO of posted receives and a FIFO of
 * unexpected messages, matched on (communicator id, source, tag) in order,
 * so two messages between the same pair never overtake each other.
 */
#include "transport/simnet.h"

#include <string.h>

typedef struct blob {
    int refs;
    char data[];
} blob_t;

typedef struct sim_msg {
    ucoll_list_t link; /* in the sender's queue, then the receiver's */
    uint32_t comm_id;
    int src, tag;
    int wsrc, wdst;    /* world ranks */
    ucoll_net_cb_t cb; /* the send's completion */
    void *arg;
    const void *sbuf;
    size_t bytes;
    blob_t *blob; /* snapshot of the payload; NULL when dry */
    double arrival;
    int send_pending; /* rndv: the send's completion waits for the match */
} sim_msg_t;

typedef struct sim_recv {
    ucoll_list_t link;
    uint32_t comm_id;
    int src, tag;
    void *buf;
    size_t bytes;
    double posted;
    ucoll_net_cb_t cb;
    void *arg;
} sim_recv_t;

typedef struct sim_event {
    double time;
    uint64_t seq;
    int rank;
    int start; /* rank's send port is free: start its next send */
    int status;
    ucoll_net_cb_t cb;
    void *arg;
    int is_recv;
    const void *sbuf; /* send: the user's buffer, to check against blob */
    void *rbuf;       /* receive: where blob's bytes land, at this time */
    blob_t *blob;     /* the payload snapshot */
    size_t bytes;
} sim_event_t;

typedef struct sim_rank {
    ucoll_ctx_t *ctx;
    double clock, send_free, recv_free;
    ucoll_list_t sendq; /* posted sends waiting for the send port */
    int sending;        /* a start event is queued */
    ucoll_list_t posted;
    ucoll_list_t unexpected;
} sim_rank_t;

struct ucoll_simnet {
    ucoll_simnet_params_t prm;
    int nranks;
    sim_rank_t *ranks;
    sim_event_t *heap;
    size_t nheap, heap_cap;
    uint64_t seq;
    ucoll_simnet_stats_t stats;
};

static void blob_put(blob_t *b)
{
    if (b && --b->refs == 0) {
        free(b);
    }
}

/* ---- event queue (binary min-heap on (time, seq)) ----------------------- */

static int ev_less(const sim_event_t *a, const sim_event_t *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static int ev_push(ucoll_simnet_t *net, sim_event_t *ev)
{
    size_t i;

    if (net->nheap == net->heap_cap) {
        size_t cap = net->heap_cap ? 2 * net->heap_cap : 1024;
        sim_event_t *h = realloc(net->heap, cap * sizeof(*h));
        if (h == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        net->heap = h;
        net->heap_cap = cap;
    }
    ev->seq = net->seq++;
    i = net->nheap++;
    while (i > 0 && ev_less(ev, &net->heap[(i - 1) / 2])) {
        net->heap[i] = net->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    net->heap[i] = *ev;
    return UCOLL_OK;
}

static void ev_pop(ucoll_simnet_t *net, sim_event_t *out)
{
    sim_event_t last;
    size_t i = 0;

    *out = net->heap[0];
    last = net->heap[--net->nheap];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= net->nheap) {
            break;
        }
        if (c + 1 < net->nheap && ev_less(&net->heap[c + 1], &net->heap[c])) {
            c++;
        }
        if (!ev_less(&net->heap[c], &last)) {
            break;
        }
        net->heap[i] = net->heap[c];
        i = c;
    }
    if (net->nheap > 0) {
        net->heap[i] = last;
    }
}

/* ---- matching ----------------------------------------------------------- */

static ucoll_simnet_t *sim_of(ucoll_comm_t *comm)
{
    return comm->ctx->net_priv;
}

/* Match msg with the receive: its bytes land when the receive completes
 * (not now), so a schedule that forwards data in the round it receives it
 * forwards the old contents and gets caught. */
static int sim_deliver(ucoll_simnet_t *net, int dst, sim_msg_t *msg, sim_recv_t *rv)
{
    sim_event_t ev = {0};
    int st;

    ev.is_recv = 1;
    ev.rbuf = rv->buf;
    ev.bytes = UCOLL_MIN(msg->bytes, rv->bytes);
    ev.blob = msg->blob;
    ev.time = UCOLL_MAX(msg->arrival, rv->posted);
    ev.rank = dst;
    ev.cb = rv->cb;
    ev.arg = rv->arg;
    ev.status = UCOLL_OK;
    if (msg->bytes > rv->bytes) {
        ev.status = UCOLL_ERR_TRUNCATE;
        net->stats.truncated++;
    }
    if (msg->send_pending) {
        /* rendezvous: the send completes with the match */
        sim_event_t sev = {0};
        sev.time = ev.time;
        sev.rank = msg->wsrc;
        sev.cb = msg->cb;
        sev.arg = msg->arg;
        sev.sbuf = msg->sbuf;
        sev.blob = msg->blob;
        sev.bytes = msg->bytes;
        if (ev_push(net, &sev) != UCOLL_OK) {
            blob_put(sev.blob);
        }
    }
    free(msg);
    free(rv);
    st = ev_push(net, &ev);
    if (st != UCOLL_OK) {
        blob_put(ev.blob);
    }
    return st;
}

/*
 * Sends leave one at a time, in posting order, through the sender's send
 * port; a message occupies the sender's send port and the receiver's
 * receive port for α + mβ from the moment both are free. Ports are booked
 * by "start" events taken in time order, so ranks that post at the same
 * time start their first sends together.
 */
static int sim_isend(ucoll_comm_t *comm, const void *buf, size_t bytes, int dst, int tag,
                     ucoll_net_cb_t cb, void *arg)
{
    ucoll_simnet_t *net = sim_of(comm);
    int s = ucoll__comm_world_rank(comm, comm->rank);
    sim_rank_t *rs = &net->ranks[s];
    sim_msg_t *msg;

    if (dst < 0 || dst >= comm->size) {
        return UCOLL_ERR_ARG;
    }
    rs->ctx = comm->ctx;
    msg = calloc(1, sizeof(*msg));
    if (msg == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (!net->prm.dry) {
        /* the payload as it is now: data that arrives later is not in it */
        msg->blob = malloc(sizeof(blob_t) + bytes);
        if (msg->blob == NULL) {
            free(msg);
            return UCOLL_ERR_NOMEM;
        }
        msg->blob->refs = 2; /* the message and the send's completion */
        if (bytes) {
            memcpy(msg->blob->data, buf, bytes);
        }
    }
    msg->comm_id = comm->id;
    msg->src = comm->rank;
    msg->tag = tag;
    msg->bytes = bytes;
    msg->wsrc = s;
    msg->wdst = ucoll__comm_world_rank(comm, dst);
    msg->cb = cb;
    msg->arg = arg;
    msg->sbuf = buf;
    net->stats.messages++;
    net->stats.bytes += bytes;
    if (!rs->sending) {
        sim_event_t ev = {0};
        ev.time = UCOLL_MAX(rs->clock, rs->send_free);
        ev.rank = s;
        ev.start = 1;
        if (ev_push(net, &ev) != UCOLL_OK) {
            blob_put(msg->blob);
            blob_put(msg->blob);
            free(msg);
            return UCOLL_ERR_NOMEM;
        }
        rs->sending = 1;
    }
    ucoll_list_add_tail(&rs->sendq, &msg->link);
    return UCOLL_OK;
}

/* Rank's send port is free at time t: transfer its next message. */
static void sim_start_send(ucoll_simnet_t *net, int rank, double t)
{
    sim_rank_t *rs = &net->ranks[rank];
    sim_msg_t *msg = ucoll_list_first(&rs->sendq, sim_msg_t, link);
    sim_rank_t *rd = &net->ranks[msg->wdst];
    sim_event_t ev = {0};
    ucoll_list_t *pos;
    double start, end;

    ucoll_list_del(&msg->link);
    if (net->prm.loggp) {
        double bytes = msg->bytes ? (double)msg->bytes - 1 : 0;
        double inject = t + net->prm.o + bytes * net->prm.G;
        double first = UCOLL_MAX(t + net->prm.o + net->prm.L, rd->recv_free);

        end = first + bytes * net->prm.G + net->prm.o; /* the receiver has it */
        rs->send_free = UCOLL_MAX(t + net->prm.g, inject);
        rd->recv_free = UCOLL_MAX(first + net->prm.g, end);
        msg->arrival = end;
        start = inject; /* the send completes once injected */
    } else {
        start = UCOLL_MAX(t, rd->recv_free);
        end = start + net->prm.alpha + (double)msg->bytes * net->prm.beta;
        rs->send_free = end;
        rd->recv_free = end;
        msg->arrival = end;
        start = end;
    }

    ev.time = start; /* the send's completion */
    ev.rank = rank;
    ev.cb = msg->cb;
    ev.arg = msg->arg;
    ev.sbuf = msg->sbuf;
    ev.blob = msg->blob;
    ev.bytes = msg->bytes;
    if (net->prm.rndv) {
        msg->send_pending = 1;
    } else {
        ev_push(net, &ev);
    }
    if (!ucoll_list_empty(&rs->sendq)) {
        sim_event_t nx = {0};
        nx.time = rs->send_free;
        nx.rank = rank;
        nx.start = 1;
        ev_push(net, &nx);
    } else {
        rs->sending = 0;
    }

    ucoll_list_for_each(pos, &rd->posted)
    {
        sim_recv_t *rv = ucoll_container_of(pos, sim_recv_t, link);
        if (rv->comm_id == msg->comm_id && rv->src == msg->src && rv->tag == msg->tag) {
            ucoll_list_del(&rv->link);
            sim_deliver(net, msg->wdst, msg, rv);
            return;
        }
    }
    ucoll_list_add_tail(&rd->unexpected, &msg->link);
}

static int sim_irecv(ucoll_comm_t *comm, void *buf, size_t bytes, int src, int tag,
                     ucoll_net_cb_t cb, void *arg)
{
    ucoll_simnet_t *net = sim_of(comm);
    int d = ucoll__comm_world_rank(comm, comm->rank);
    sim_rank_t *rd = &net->ranks[d];
    ucoll_list_t *pos;
    sim_recv_t *rv;

    if (src < 0 || src >= comm->size) {
        return UCOLL_ERR_ARG;
    }
    rd->ctx = comm->ctx;
    rv = calloc(1, sizeof(*rv));
    if (rv == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    rv->comm_id = comm->id;
    rv->src = src;
    rv->tag = tag;
    rv->buf = buf;
    rv->bytes = bytes;
    rv->posted = rd->clock;
    rv->cb = cb;
    rv->arg = arg;
    ucoll_list_for_each(pos, &rd->unexpected)
    {
        sim_msg_t *msg = ucoll_container_of(pos, sim_msg_t, link);
        if (msg->comm_id == rv->comm_id && msg->src == src && msg->tag == tag) {
            ucoll_list_del(&msg->link);
            return sim_deliver(net, d, msg, rv);
        }
    }
    ucoll_list_add_tail(&rd->posted, &rv->link);
    return UCOLL_OK;
}

static int sim_progress(ucoll_ctx_t *ctx)
{
    return ucoll__simnet_advance(ctx->net_priv) != NULL;
}

static void sim_local_work(ucoll_ctx_t *ctx, size_t bytes, int is_reduce)
{
    ucoll_simnet_t *net = ctx->net_priv;

    net->ranks[ctx->rank].clock += (double)bytes * (is_reduce ? net->prm.gamma : net->prm.lambda);
}

const ucoll_net_ops_t ucoll__net_sim = {
    .name = "simnet",
    .isend = sim_isend,
    .irecv = sim_irecv,
    .progress = sim_progress,
    .local_work = sim_local_work,
};

/* ---- driver ------------------------------------------------------------- */

ucoll_ctx_t *ucoll__simnet_advance(ucoll_simnet_t *net)
{
    sim_event_t ev;
    sim_rank_t *r;

    do {
        if (net->nheap == 0) {
            return NULL;
        }
        ev_pop(net, &ev);
        if (ev.start) {
            sim_start_send(net, ev.rank, ev.time);
        }
    } while (ev.start);
    r = &net->ranks[ev.rank];
    r->clock = UCOLL_MAX(r->clock, ev.time);
    if (ev.blob) {
        if (ev.is_recv) {
            if (ev.bytes) {
                memcpy(ev.rbuf, ev.blob->data, ev.bytes);
            }
        } else if (ev.bytes && memcmp(ev.sbuf, ev.blob->data, ev.bytes) != 0) {
            net->stats.violations++;
        }
        blob_put(ev.blob);
    }
    net->stats.events++;
    ev.cb(ev.arg, ev.status);
    return r->ctx;
}

int ucoll__simnet_create(int nranks, const ucoll_simnet_params_t *prm, ucoll_simnet_t **net_p)
{
    ucoll_simnet_t *net = calloc(1, sizeof(*net));

    if (net == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    net->ranks = calloc((size_t)nranks, sizeof(*net->ranks));
    if (net->ranks == NULL) {
        free(net);
        return UCOLL_ERR_NOMEM;
    }
    net->prm = *prm;
    net->nranks = nranks;
    for (int i = 0; i < nranks; i++) {
        ucoll_list_init(&net->ranks[i].posted);
        ucoll_list_init(&net->ranks[i].sendq);
        ucoll_list_init(&net->ranks[i].unexpected);
    }
    *net_p = net;
    return UCOLL_OK;
}

void ucoll__simnet_destroy(ucoll_simnet_t *net)
{
    ucoll_list_t *pos, *tmp;

    for (int i = 0; i < net->nranks; i++) {
        ucoll_list_for_each_safe(pos, tmp, &net->ranks[i].posted)
        {
            free(ucoll_container_of(pos, sim_recv_t, link));
        }
        ucoll_list_for_each_safe(pos, tmp, &net->ranks[i].sendq)
        {
            sim_msg_t *msg = ucoll_container_of(pos, sim_msg_t, link);
            blob_put(msg->blob);
            blob_put(msg->blob);
            free(msg);
        }
        ucoll_list_for_each_safe(pos, tmp, &net->ranks[i].unexpected)
        {
            sim_msg_t *msg = ucoll_container_of(pos, sim_msg_t, link);
            blob_put(msg->blob);
            if (msg->send_pending) {
                blob_put(msg->blob);
            }
            free(msg);
        }
    }
    for (size_t i = 0; i < net->nheap; i++) {
        blob_put(net->heap[i].blob);
    }
    free(net->heap);
    free(net->ranks);
    free(net);
}

double ucoll__simnet_clock(const ucoll_simnet_t *net, int rank)
{
    return net->ranks[rank].clock;
}

double ucoll__simnet_max_clock(const ucoll_simnet_t *net)
{
    double t = 0;

    for (int i = 0; i < net->nranks; i++) {
        t = UCOLL_MAX(t, net->ranks[i].clock);
    }
    return t;
}

size_t ucoll__simnet_unmatched(const ucoll_simnet_t *net)
{
    size_t n = 0;
    ucoll_list_t *pos;

    for (int i = 0; i < net->nranks; i++) {
        ucoll_list_for_each(pos, &net->ranks[i].posted)
        {
            n++;
        }
        ucoll_list_for_each(pos, &net->ranks[i].unexpected)
        {
            n++;
        }
        ucoll_list_for_each(pos, &net->ranks[i].sendq)
        {
            n++;
        }
    }
    return n;
}

void ucoll__simnet_stats(const ucoll_simnet_t *net, ucoll_simnet_stats_t *stats)
{
    *stats = net->stats;
}

void ucoll__simnet_reset(ucoll_simnet_t *net)
{
    for (int i = 0; i < net->nranks; i++) {
        net->ranks[i].clock = net->ranks[i].send_free = net->ranks[i].recv_free = 0;
    }
    memset(&net->stats, 0, sizeof(net->stats));
}

/*
 * Rings of small messages between the ranks of one node, in memory mapped
 * by UCP (tl_shm.h): the short path under the point-to-point layer's small
 * active messages to a same-node peer.
 *
 * Why. An 8-byte message through UCP's active messages costs what UCX's
 * shared-memory transport, its AM protocol and its callback cost on top of
 * the cache-line transfer that carries it. A single-producer ring that the
 * receiver polls costs the line transfer and little else.
 *
 * Ring. A ring is FIFO_CTL bytes of control lines and FIFO_SLOTS slots of
 * FIFO_SLOT bytes each. A rank maps one region with room for a ring to each
 * of its same-node peers on its first message to any of them (one mapping
 * per rank, not per pair: shared-memory segments are a system-wide resource,
 * 4096 System V segments by default; the pages of a ring are touched only
 * once it is offered). On its first message to a same-node peer R, sender S
 * offers R the next ring of its region (UCOLL_AM_FIFO, through UCX): its
 * address and the region's packed key. R attaches it (ucp_rkey_ptr) outside UCX progress and
 * answers ACCEPT, or REFUSE when it cannot; only after ACCEPT does S write to it. Until then, and
 * whenever the ring is full, messages go through UCX as before: the point-to-point layer numbers
 * every message of a pair and hands them to matching in that order, so mixing the two paths cannot
 * reorder anything.
 *
 * Slot n (n = 0, 1, ...) sits at n mod FIFO_SLOTS; each starts with a
 * word. A packet (an active message's user header, then its data) takes
 * one slot, or up to FIFO_PKT_SLOTS in a row when larger. S writes the
 * later slots of a packet first, each with its word (sequence, and the id
 * FIFO_CONT), then the first slot, and publishes the packet with a release
 * store of the first slot's word: sequence (n + 1, low 32 bits), length,
 * active message id and header length. R polls the word of its next slot
 * with an acquire load; the sequence tells a new packet from what was
 * left there a lap ago, and since every slot begins with a word written as
 * one, never with payload, nothing left there can pass for the packet
 * expected: no slot is ever cleared. R copies the packet out, advances by
 * its slots, and publishes how many it has consumed (release) in a control
 * line that only R writes; S reads it (acquire) only when its cached count
 * says the ring is full. No line has two writers.
 *
 * Waking a sleeper. A rank that sleeps on the worker's event fd would not
 * see a slot being written. Before it sleeps, R raises a flag in the sleep
 * line of every ring it polls, issues a full fence and looks at the rings
 * once more; S, after publishing a slot, issues a full fence and reads the
 * flag: if raised, it sends a WAKE through UCX, whose arrival wakes R's fd.
 * With the fences on both sides, either S sees the flag or R sees the slot
 * (the store-buffer case of Dekker's algorithm). R lowers the flags at its
 * next progress.
 *
 * Failure. A peer that dies leaves its ring behind: R's mapping of it stays
 * valid (tl_shm.h), and R stops polling it once the peer is reported
 * failed. A dead R stops consuming: S's ring fills and its messages go to
 * UCX, whose endpoint reports the failure. Everything that arrives from a
 * ring is checked by the point-to-point layer's decoders like any message;
 * a slot word with an impossible length or id is dropped and counted.
 */
#include "transport/tl_shm.h"
#include "transport/ucx_int.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define FIFO_LINE  64
#define FIFO_CTL   256 /* control lines, then the slots */
#define FIFO_SLOT  256
#define FIFO_SLOTS 64
#define FIFO_MAX   (FIFO_SLOT - sizeof(uint64_t)) /* packet bytes per slot */
/* Most slots one packet takes: two, an eager message of up to 456 bytes
 * behind its 40-byte header. At p = 2 (3 alternations against the same
 * messages through UCX) a 256-byte message in two slots measured 0.64x the
 * half round trip and 1.31x the streaming bandwidth; packets of five slots
 * (1 KiB messages) still 0.8x the latency, but in a stream the receiver's
 * misses on every slot cost more than UCX's path: 0.69-0.79x the bandwidth
 * at 512 B and 1 KiB. */
#define FIFO_PKT_SLOTS 2
#define FIFO_PKT_MAX   (FIFO_PKT_SLOTS * FIFO_MAX)
#define FIFO_CONT      0xff /* the id in the word of a packet's later slots */
/* slots taken from one ring per poll, so that one busy sender cannot keep
 * the caller from everything else */
#define FIFO_BURST 16

_Static_assert(UCOLL_TL_OP_HDR <= FIFO_MAX, "a small active message fits a slot");
_Static_assert(FIFO_PKT_MAX < 65536 && UCOLL_AM_CTL < FIFO_CONT, "the fields of a slot word");
_Static_assert(16 * FIFO_PKT_SLOTS <= FIFO_SLOTS, "many of the largest packets fit a ring");

enum { FIFO_NONE, FIFO_OFFERED, FIFO_ACTIVE, FIFO_NEVER };
enum { FIFO_MSG_OFFER = 1, FIFO_MSG_ACCEPT, FIFO_MSG_REFUSE, FIFO_MSG_WAKE };

/* The control lines at the start of a ring. */
typedef struct {
    _Alignas(FIFO_LINE) _Atomic uint64_t consumed; /* written by the receiver */
    _Alignas(FIFO_LINE) _Atomic uint64_t sleep;    /* written by the receiver */
} fifo_ctl_t;

_Static_assert(sizeof(fifo_ctl_t) <= FIFO_CTL, "control lines fit");

/* What travels as UCOLL_AM_FIFO; an OFFER is followed by the packed key. */
typedef struct {
    uint32_t type;
    uint32_t src; /* sender's job rank */
    uint32_t nslots;
    uint32_t slot;
    uint64_t raddr; /* the ring's address at its owner */
    uint32_t rkey_len;
    uint32_t pad;
} fifo_msg_t;

#define FIFO_RING (FIFO_CTL + FIFO_SLOTS * FIFO_SLOT)

/* A ring this rank writes. */
struct ucoll_tl_fifo {
    fifo_ctl_t *ctl;
    uint8_t *slots;
    uint64_t head;  /* slots written */
    uint64_t limit; /* head may reach this without looking at consumed */
};

/* A ring this rank polls. */
struct ucoll_tl_fifo_in {
    int rank;
    fifo_ctl_t *ctl;
    const uint8_t *slots;
    uint64_t tail; /* slots consumed */
    void *key;
};

typedef struct {
    ucoll_list_t link;
    size_t len;
    uint64_t msg[]; /* fifo_msg_t and key */
} fifo_offer_t;

static inline _Atomic uint64_t *slot_word(const uint8_t *slots, uint64_t n)
{
    return (_Atomic uint64_t *)(uintptr_t)(slots + (n & (FIFO_SLOTS - 1)) * FIFO_SLOT);
}

/* Send a UCOLL_AM_FIFO message of len bytes (at most UCOLL_TL_OP_HDR)
 * through UCX, fire and forget: the op carries the bytes until UCX is done. */
static int fifo_msg_send(ucoll_tl_t *tl, int rank, const void *msg, size_t len)
{
    ucoll_tl_op_t *op = ucoll__tl_op_alloc(tl, NULL, 0);
    int ret;

    if (op == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    memcpy(op->hdr, msg, len);
    ret = ucoll__tl_am_send(tl->ctx, rank, op, UCOLL_AM_FIFO, NULL, 0, op->hdr, len,
                            UCOLL_TL_AM_EAGER);
    return ret < 0 ? ret : UCOLL_OK;
}

/* The region of this rank's rings, mapped on first use; 0 when there is none. */
static int fifo_region(ucoll_tl_t *tl)
{
    int i, n = 0;

    if (tl->fifo_shm != NULL) {
        return 1;
    }
    for (i = 0; i < tl->ctx->size; i++) {
        n += tl->peers[i].local && i != tl->ctx->rank;
    }
    if (n == 0 || ucoll__tl_shm_map(tl->ctx, (size_t)n * FIFO_RING, &tl->fifo_shm) != UCOLL_OK) {
        tl->fifo_on = 0;
        return 0;
    }
    tl->fifo_rings = n;
    return 1;
}

/* First message to peer: offer it a ring if it may have one. */
static void fifo_offer(ucoll_tl_t *tl, ucoll_tl_peer_t *peer)
{
    uint64_t buf[UCOLL_TL_OP_HDR / 8];
    fifo_msg_t *m = (fifo_msg_t *)buf;
    struct ucoll_tl_fifo *f;
    const void *rkey;
    size_t rkey_len;

    peer->fifo_state = FIFO_NEVER;
    if (!tl->fifo_on || !peer->local || peer->rank == tl->ctx->rank ||
        peer->state != UCOLL_TL_EP_UP || peer->kind != UCOLL_TL_KIND_SHM) {
        return;
    }
    if (!fifo_region(tl) || tl->fifo_used == tl->fifo_rings) {
        return;
    }
    rkey = ucoll__tl_shm_rkey(tl->fifo_shm, &rkey_len);
    if (sizeof(*m) + rkey_len > sizeof(buf)) {
        ucoll_debug("no rings: a key of %zu bytes", rkey_len);
        tl->fifo_on = 0;
        return;
    }
    f = calloc(1, sizeof(*f));
    if (f == NULL) {
        return;
    }
    f->ctl = (fifo_ctl_t *)((uint8_t *)ucoll__tl_shm_addr(tl->fifo_shm) +
                            (size_t)tl->fifo_used * FIFO_RING);
    f->slots = (uint8_t *)f->ctl + FIFO_CTL;
    f->limit = FIFO_SLOTS;
    memset(f->ctl, 0, FIFO_RING); /* a region from the heap need not be zero */
    memset(m, 0, sizeof(*m));
    m->type = FIFO_MSG_OFFER;
    m->src = (uint32_t)tl->ctx->rank;
    m->nslots = FIFO_SLOTS;
    m->slot = FIFO_SLOT;
    m->raddr = (uint64_t)(uintptr_t)f->ctl;
    m->rkey_len = (uint32_t)rkey_len;
    memcpy(m + 1, rkey, rkey_len);
    if (fifo_msg_send(tl, peer->rank, m, sizeof(*m) + rkey_len) != UCOLL_OK) {
        free(f);
        return;
    }
    tl->fifo_used++; /* not reused even if refused: the peer may hold it */
    peer->fifo_offered = f;
    peer->fifo_state = FIFO_OFFERED;
}

/* Bytes [off, off + n) of the packet hdr || data into dst. */
static inline void pkt_copy(uint8_t *dst, const void *hdr, size_t hdr_len, const void *data,
                            size_t off, size_t n)
{
    if (off < hdr_len) {
        size_t h = UCOLL_MIN(n, hdr_len - off);

        memcpy(dst, (const uint8_t *)hdr + off, h);
        dst += h;
        off += h;
        n -= h;
    }
    if (n) {
        memcpy(dst, (const uint8_t *)data + (off - hdr_len), n);
    }
}

int ucoll__tl_fifo_put(ucoll_tl_t *tl, ucoll_tl_peer_t *peer, int am_id, const void *hdr,
                       size_t hdr_len, const void *data, size_t len)
{
    struct ucoll_tl_fifo *f = peer->fifo;
    size_t total = hdr_len + len, n;
    uint8_t *slot;

    if (ucoll_unlikely(f == NULL)) {
        if (peer->fifo_state == FIFO_NONE) {
            fifo_offer(tl, peer);
        }
        return 0;
    }
    if (ucoll_unlikely(total > FIFO_PKT_MAX || hdr_len > 0xff)) {
        return 0;
    }
    n = total <= FIFO_MAX ? 1 : (total + FIFO_MAX - 1) / FIFO_MAX;
    if (ucoll_unlikely(f->head + n > f->limit)) {
        f->limit = atomic_load_explicit(&f->ctl->consumed, memory_order_acquire) + FIFO_SLOTS;
        if (f->head + n > f->limit) {
            tl->fifo_full++;
            return 0; /* full: UCX carries it */
        }
    }
    /* the later slots first, each with its own word (so that a slot's
     * first bytes are always a word, never a payload that a lap later
     * could pass for one); the first slot's word last, which publishes
     * them all */
    for (size_t i = n - 1; i > 0; i--) {
        slot = f->slots + ((f->head + i) & (FIFO_SLOTS - 1)) * FIFO_SLOT;
        pkt_copy(slot + sizeof(uint64_t), hdr, hdr_len, data, i * FIFO_MAX,
                 UCOLL_MIN(FIFO_MAX, total - i * FIFO_MAX));
        atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)slot,
                              (uint32_t)(f->head + i + 1) | (uint64_t)FIFO_CONT << 48,
                              memory_order_relaxed);
    }
    slot = f->slots + (f->head & (FIFO_SLOTS - 1)) * FIFO_SLOT;
    pkt_copy(slot + sizeof(uint64_t), hdr, hdr_len, data, 0, UCOLL_MIN(FIFO_MAX, total));
    atomic_store_explicit((_Atomic uint64_t *)(uintptr_t)slot,
                          (uint32_t)(f->head + 1) | (uint64_t)total << 32 | (uint64_t)am_id << 48 |
                              (uint64_t)hdr_len << 56,
                          memory_order_release);
    f->head += n;
    tl->fifo_sent++;
    /* see "Waking a sleeper" */
    atomic_thread_fence(memory_order_seq_cst);
    if (ucoll_unlikely(atomic_load_explicit(&f->ctl->sleep, memory_order_relaxed))) {
        fifo_msg_t m = {.type = FIFO_MSG_WAKE, .src = (uint32_t)tl->ctx->rank};

        (void)fifo_msg_send(tl, peer->rank, &m, sizeof(m));
    }
    return 1;
}

int ucoll__tl_fifo_poll(ucoll_tl_t *tl)
{
    uint64_t buf[FIFO_PKT_MAX / 8 + 1];
    int n = 0;

    for (int i = 0; i < tl->nfifo_in; i++) {
        /* fetched again after each delivery: a handler may reach progress,
         * which may add rings */
        for (int k = 0; k < FIFO_BURST; k++) {
            struct ucoll_tl_fifo_in *in = tl->fifo_in[i];
            _Atomic uint64_t *w = slot_word(in->slots, in->tail);
            uint64_t word = atomic_load_explicit(w, memory_order_acquire);
            size_t total = (size_t)(word >> 32) & 0xffff, hl = (size_t)(word >> 56), ns = 1;
            unsigned am_id = (unsigned)(word >> 48) & 0xff;
            int ok;

            if ((uint32_t)word != (uint32_t)(in->tail + 1)) {
                break;
            }
            if (ucoll_unlikely(tl->peers[in->rank].state == UCOLL_TL_EP_FAILED)) {
                break;
            }
            ok = total <= FIFO_PKT_MAX && hl <= total && am_id <= UCOLL_AM_CTL &&
                 tl->am[am_id].cb != NULL;
            if (ucoll_likely(ok)) {
                ns = total <= FIFO_MAX ? 1 : (total + FIFO_MAX - 1) / FIFO_MAX;
                for (size_t j = 0; j < ns; j++) {
                    memcpy((uint8_t *)buf + j * FIFO_MAX,
                           (const uint8_t *)slot_word(in->slots, in->tail + j) + sizeof(uint64_t),
                           UCOLL_MIN(FIFO_MAX, total - j * FIFO_MAX));
                }
            }
            in->tail += ns; /* a word that makes no sense: that slot only */
            atomic_store_explicit(&in->ctl->consumed, in->tail, memory_order_release);
            n++;
            if (ucoll_unlikely(!ok)) {
                tl->fifo_refused++;
                continue;
            }
            tl->fifo_got++;
            tl->am[am_id].cb(tl->am[am_id].arg, hl ? (const void *)buf : NULL, hl,
                             (uint8_t *)buf + hl, total - hl, 0);
        }
    }
    return n;
}

int ucoll__tl_fifo_arm(ucoll_tl_t *tl)
{
    int i;

    for (i = 0; i < tl->nfifo_in; i++) {
        atomic_store_explicit(&tl->fifo_in[i]->ctl->sleep, 1, memory_order_relaxed);
    }
    tl->fifo_armed = 1;
    atomic_thread_fence(memory_order_seq_cst);
    for (i = 0; i < tl->nfifo_in; i++) {
        const struct ucoll_tl_fifo_in *in = tl->fifo_in[i];
        uint64_t word = atomic_load_explicit(slot_word(in->slots, in->tail), memory_order_acquire);

        if ((uint32_t)word == (uint32_t)(in->tail + 1) &&
            tl->peers[in->rank].state != UCOLL_TL_EP_FAILED) {
            return 1;
        }
    }
    return 0;
}

void ucoll__tl_fifo_disarm(ucoll_tl_t *tl)
{
    for (int i = 0; i < tl->nfifo_in; i++) {
        atomic_store_explicit(&tl->fifo_in[i]->ctl->sleep, 0, memory_order_relaxed);
    }
    tl->fifo_armed = 0;
}

/* An offer taken outside UCX progress: attach the ring, answer. */
static void fifo_attach(ucoll_tl_t *tl, const fifo_msg_t *m)
{
    fifo_msg_t a = {.type = FIFO_MSG_REFUSE, .src = (uint32_t)tl->ctx->rank, .raddr = m->raddr};
    struct ucoll_tl_fifo_in *in = NULL, **grown;
    int rank = (int)m->src;
    void *ptr, *key;

    if (tl->peers[rank].state == UCOLL_TL_EP_FAILED) {
        return;
    }
    for (int i = 0; i < tl->nfifo_in; i++) {
        if (tl->fifo_in[i]->rank == rank) {
            goto answer; /* one ring per sender */
        }
    }
    if (m->nslots != FIFO_SLOTS || m->slot != FIFO_SLOT) {
        ucoll_debug("rank %d offers a ring of %u slots of %u bytes, not %d of %d: refused", rank,
                    m->nslots, m->slot, FIFO_SLOTS, FIFO_SLOT);
        goto answer;
    }
    if (ucoll__tl_shm_attach(tl->ctx, rank, m + 1, m->raddr, &ptr, &key) != UCOLL_OK) {
        goto answer;
    }
    in = calloc(1, sizeof(*in));
    grown = in ? realloc(tl->fifo_in, (size_t)(tl->nfifo_in + 1) * sizeof(*grown)) : NULL;
    if (grown == NULL) {
        free(in);
        ucoll__tl_shm_detach(key);
        goto answer;
    }
    tl->fifo_in = grown;
    in->rank = rank;
    in->ctl = ptr;
    in->slots = (const uint8_t *)ptr + FIFO_CTL;
    in->key = key;
    if (tl->fifo_armed) {
        atomic_store_explicit(&in->ctl->sleep, 1, memory_order_relaxed);
    }
    tl->fifo_in[tl->nfifo_in++] = in;
    a.type = FIFO_MSG_ACCEPT;
    ucoll_debug("rank %d: its ring of small messages attached", rank);
answer:
    (void)fifo_msg_send(tl, rank, &a, sizeof(a));
}

void ucoll__tl_fifo_offers(ucoll_tl_t *tl)
{
    while (!ucoll_list_empty(&tl->fifo_offers)) {
        fifo_offer_t *o = ucoll_list_first(&tl->fifo_offers, fifo_offer_t, link);

        ucoll_list_del(&o->link);
        fifo_attach(tl, (const fifo_msg_t *)o->msg);
        free(o);
    }
}

static ucs_status_t fifo_am_cb(void *arg, const void *header, size_t header_length, void *data,
                               size_t length, const ucp_am_recv_param_t *param)
{
    ucoll_tl_t *tl = arg;
    ucoll_tl_peer_t *peer;
    fifo_msg_t m;
    fifo_offer_t *o;

    (void)header;
    if (header_length != 0 || (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
        length < sizeof(m)) {
        return UCS_OK;
    }
    memcpy(&m, data, sizeof(m));
    if (m.src >= (uint32_t)tl->ctx->size || (int)m.src == tl->ctx->rank ||
        !tl->peers[m.src].local) {
        return UCS_OK;
    }
    peer = &tl->peers[m.src];
    switch (m.type) {
    case FIFO_MSG_OFFER:
        if (!tl->fifo_on || m.rkey_len > length - sizeof(m)) {
            break; /* no answer: the sender keeps to UCX */
        }
        o = malloc(sizeof(*o) + sizeof(m) + m.rkey_len);
        if (o == NULL) {
            break;
        }
        o->len = sizeof(m) + m.rkey_len;
        memcpy(o->msg, data, o->len);
        ucoll_list_add_tail(&tl->fifo_offers, &o->link);
        break;
    case FIFO_MSG_ACCEPT:
        if (peer->fifo_state == FIFO_OFFERED &&
            m.raddr == (uint64_t)(uintptr_t)peer->fifo_offered->ctl) {
            peer->fifo = peer->fifo_offered;
            peer->fifo_state = FIFO_ACTIVE;
        }
        break;
    case FIFO_MSG_REFUSE:
        if (peer->fifo_state == FIFO_OFFERED &&
            m.raddr == (uint64_t)(uintptr_t)peer->fifo_offered->ctl) {
            peer->fifo_state = FIFO_NEVER; /* the region goes at cleanup */
        }
        break;
    default: break; /* WAKE: its arrival was the point */
    }
    return UCS_OK;
}

int ucoll__tl_fifo_init(ucoll_tl_t *tl)
{
    ucp_am_handler_param_t hp = {0};
    ucs_status_t st;

    ucoll_list_init(&tl->fifo_offers);
    tl->fifo_on = tl->have_shm && tl->ctx->cfg.p2p_shm == UCOLL_SHM_MODE_AUTO;
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.flags = UCP_AM_FLAG_WHOLE_MSG;
    hp.id = UCOLL_AM_FIFO;
    hp.cb = fifo_am_cb;
    hp.arg = tl;
    st = ucp_worker_set_am_recv_handler(tl->worker, &hp);
    if (st != UCS_OK) {
        ucoll_error("cannot register active message handler %d: %s", UCOLL_AM_FIFO,
                    ucs_status_string(st));
        return UCOLL_ERR_TRANSPORT;
    }
    return UCOLL_OK;
}

void ucoll__tl_fifo_cleanup(ucoll_tl_t *tl)
{
    ucoll_list_t *pos, *tmp;
    int i;

    for (i = 0; i < tl->nfifo_in; i++) {
        ucoll__tl_shm_detach(tl->fifo_in[i]->key);
        free(tl->fifo_in[i]);
    }
    free(tl->fifo_in);
    tl->fifo_in = NULL;
    tl->nfifo_in = 0;
    ucoll_list_for_each_safe(pos, tmp, &tl->fifo_offers)
    {
        free(ucoll_container_of(pos, fifo_offer_t, link));
    }
    ucoll_list_init(&tl->fifo_offers);
    if (tl->fifo_refused) {
        ucoll_debug("%llu ring slot(s) with an impossible header dropped",
                    (unsigned long long)tl->fifo_refused);
    }
    for (i = 0; i < tl->ctx->size; i++) {
        ucoll_tl_peer_t *peer = &tl->peers[i];

        free(peer->fifo_offered);
        peer->fifo_offered = peer->fifo = NULL;
        peer->fifo_state = FIFO_NEVER;
    }
    ucoll__tl_shm_unmap(tl->ctx, tl->fifo_shm);
    tl->fifo_shm = NULL;
}

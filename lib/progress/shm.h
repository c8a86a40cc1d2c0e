/*
 * Shared-memory collectives: the regions of a communicator and the engine
 * that runs calls through them.
 *
 * Regions. When the ranks of a communicator share a node, each maps a region
 * of 128 + UCOLL_SHM_SIZE bytes (lib/transport/tl_shm.h) and holds a pointer to
 * every other member's. A region is laid out as
 *     [0, 8)       the control word
 *     [8, 128)     inline data: a payload of up to UCOLL_SHM_INLINE bytes
 *                  beside the control word, so that a reader that sees the
 *                  word has the data in the same cache line, or the next
 *                  one, which the adjacent-line prefetcher brings along
 *                  (measured at p = 2: 64 B broadcast in 0.39 us from the
 *                  data area, 0.28 us inline)
 *     [128, size - UCOLL_SHM_TRAILER)  the data area
 *     [size - UCOLL_SHM_TRAILER, size) the trailer: rank 0's is where it
 *                  publishes the way (streamed or not) it measured
 *                  quicker for each kind and size of call that every rank
 *                  writes (ucoll__shm_stream_adapt), and from byte 64 on, the way
 *                  of the reductions that every rank takes from a numbered
 *                  round of calls on (ucoll__shm_way_adapt); from byte
 *                  UCOLL_SHM_WAY_REC_OFF on, every rank's, when its last
 *                  few timed calls (reductions whose way is chosen,
 *                  duelled calls) began and ended; from byte
 *                  UCOLL_SHM_DUEL_OFF on, rank 0's, the row of the
 *                  calls that the shm row duels (ucoll__shm_duel_arm)
 * Every byte of a region is written by its owner only; the others only read
 * it. So no line has two writers and nothing needs a lock.
 *
 * Sequence. Every rank calls the collectives of a communicator in the same
 * order and selects the same algorithm for each, so the calls that go
 * through shared memory are numbered alike everywhere: s = 1, 2, ... A
 * control word holds a position, ucoll__shm_pos(s, k) = (s << 24) + k, "in
 * call s, k steps done", and ucoll__shm_end(s) = (s + 1) << 24, "done with
 * call s and all before it". Positions only grow, so waiting for rank r to
 * reach v is a >= comparison that cannot miss a value. What a step is
 * belongs to the algorithm (a segment written, a segment copied); region
 * reuse is safe by two rules:
 *   - a rank writes its data for call s only once every peer has reached
 *     end(s-1), so nobody still reads what an earlier call left there; and
 *     within a call, only once the readers of what it overwrites have said,
 *     by their position, that they are through with it (one exception:
 *     small calls in a row alternate two places, so call s waits for
 *     end(s-2), the readers of the place it writes; see
 *     ucoll__shm_small_place);
 *   - a rank reads a peer's data for step k only once the peer's position
 *     says that step k is written.
 * Any later position says "done with call s" as well as end(s) does, since
 * positions only grow: pos(s + 1, 1) >= end(s). A small call that every
 * rank publishes into (allgather, alltoall, reduce_scatter_block, the
 * one-shot allreduce) leaves its end owed rather than posted, when the
 * next small call's publication will say it (ucoll__shm_owe_end).
 *
 * Memory ordering (C11). The owner writes its data with plain stores and
 * then publishes its position with a release store; a reader loads the
 * position with an acquire load and only then reads the data: the
 * release/acquire pair makes the data stores happen before those reads.
 * The other way round, a reader publishes its own position (release) after
 * its copies, and the owner loads it (acquire) before it overwrites the
 * data, which orders the reads before the overwrite. The control words are
 * lock-free 64-bit atomics, which are address-free, so this holds between
 * processes that map the same page at different addresses.
 *
 * Ops. A call is an op, a small state machine (the algorithm's poll
 * function) that the progress engine advances: ucoll_progress polls the
 * first op of each communicator's queue, so the ops of one communicator run
 * in call order, one at a time, as every rank calls them. An op that can
 * finish at once (a broadcast's root) finishes in its start. Shared memory
 * raises no UCX event, so ucoll__wait_flag keeps polling (with short sleeps
 * in block mode) while ops are queued; a member that the liveness watch
 * reports dead fails the queued ops with UCOLL_ERR_PEER.
 */
#ifndef UCOLL_PROGRESS_SHM_H
#define UCOLL_PROGRESS_SHM_H

#include "core.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#define UCOLL_SHM_INLINE    120 /* bytes of inline data beside the control word */
#define UCOLL_SHM_DATA_OFF  128 /* offset of the data area in a region */
#define UCOLL_SHM_TRAILER   2048 /* bytes of the trailer after it */
#define UCOLL_SHM_STEP_BITS 24
#define UCOLL_SHM_MAX_STEPS (((uint64_t)1 << UCOLL_SHM_STEP_BITS) - 1)
/* Bytes of one rank's setup record (ucoll__shm_prepare): fits a packed key
 * of every shared-memory domain UCX 1.13 has (25 bytes for sysv + posix). */
#define UCOLL_SHM_SLOT 512

/* Position "call s, k steps done" and "done with call s". */
static inline uint64_t ucoll__shm_pos(uint64_t s, uint64_t k)
{
    return (s << UCOLL_SHM_STEP_BITS) + k;
}
static inline uint64_t ucoll__shm_end(uint64_t s)
{
    return (s + 1) << UCOLL_SHM_STEP_BITS;
}

/* ucoll_shm_t.state: NONE until the first call that may use shared memory,
 * PENDING while the setup runs (lib/algos/shm.c), then ON or OFF for good,
 * the same on every member. */
enum { UCOLL_SHM_NONE, UCOLL_SHM_PENDING, UCOLL_SHM_ON, UCOLL_SHM_OFF };

/* What a poll function returns besides UCOLL_OK and errors. */
#define UCOLL_SHM_AGAIN 1

typedef struct ucoll_shm_op ucoll_shm_op_t;
typedef int (*ucoll_shm_poll_t)(ucoll_shm_op_t *op);

/* Choices by measurement: the kinds of call that stream
 * (ucoll__shm_stream_adapt), those whose way is chosen
 * (ucoll__shm_way_adapt), and per kind the classes of size (log2 of the
 * bytes). */
enum {
    UCOLL_SHM_ADAPT_BCAST,
    UCOLL_SHM_ADAPT_ALLGATHER,
    UCOLL_SHM_ADAPT_ALLTOALL,
    UCOLL_SHM_ADAPT_REDUCE,
    UCOLL_SHM_ADAPT_ALLREDUCE,
    UCOLL_SHM_ADAPT_KINDS
};
#define UCOLL_SHM_ADAPT_STREAM_KINDS 3  /* the first three */
#define UCOLL_SHM_ADAPT_CLASSES      48 /* fits a trailer word */
/* One kind and class: the times per byte of the last UCOLL_SHM_ADAPT_KEEP
 * timed calls of each way, plain [0] and streamed [1] (0: none), and the
 * calls so far. A way's time is the least of its last few: what disturbs
 * a call (a peer late, the process descheduled) only adds time; and as
 * many of each, since the least of more draws is lower whatever the way,
 * which would keep the way taken most. */
#define UCOLL_SHM_ADAPT_KEEP 4
/* Every this many calls, the way that is not the best. */
#define UCOLL_SHM_ADAPT_TRY 32
typedef struct ucoll_shm_adapt {
    float t[2][UCOLL_SHM_ADAPT_KEEP];
    uint32_t calls;
    uint8_t next[2]; /* where each way's next time goes in t */
    uint8_t best;    /* the way with the lower time */
    uint8_t agreed;  /* ucoll__shm_way_pick: the way every rank takes */
    uint8_t skip;    /* ucoll__shm_way_pick: no try in this round */
    uint8_t second;  /* ucoll__shm_way_pick: a way's time is its second least */
} ucoll_shm_adapt_t;

/* The way of ad's next call: 1 streamed, 0 plain, -1 streamed but not
 * timed. The first two calls warm up (pages touched, lines cold: the
 * second one measured 3x the later ones at 64 KiB), the next
 * 2 * UCOLL_SHM_ADAPT_KEEP alternate the ways, then the best way is taken
 * but every UCOLL_SHM_ADAPT_TRY-th call, which takes the other. The way
 * taken between tries is *taken: the best, or the agreed one
 * (ucoll__shm_way_pick). */
static inline int ucoll__shm_adapt_order(ucoll_shm_adapt_t *ad, const uint8_t *taken)
{
    uint32_t n = ad->calls++;

    if (n < 2) {
        ad->best = 1;
        return -1;
    }
    if (n < 2 + 2 * UCOLL_SHM_ADAPT_KEEP) {
        return (int)(n & 1) ^ 1;
    }
    return n % UCOLL_SHM_ADAPT_TRY == 0 && !ad->skip ? !*taken : *taken;
}
static inline int ucoll__shm_adapt_pick(ucoll_shm_adapt_t *ad)
{
    return ucoll__shm_adapt_order(ad, &ad->best);
}

/* The least of way c's kept times, or where ad->second is set the second
 * least (0: none yet, or only one). */
static inline float ucoll__shm_adapt_time(const ucoll_shm_adapt_t *ad, int c)
{
    float m = 0, m2 = 0;

    for (int i = 0; i < UCOLL_SHM_ADAPT_KEEP; i++) {
        float x = ad->t[c][i];

        if (x <= 0) {
            continue;
        }
        if (m == 0 || x < m) {
            m2 = m;
            m = x;
        } else if (m2 == 0 || x < m2) {
            m2 = x;
        }
    }
    return ad->second ? m2 : m;
}

/* A timed call of ad's went the way streamed and took x (time per byte):
 * kept, and the best way changed where the other is quicker by more than
 * 1/UCOLL_SHM_ADAPT_MARGIN (noise between two ways a few percent apart, as
 * here where every rank has a core, then does not turn it). */
#define UCOLL_SHM_ADAPT_MARGIN 16
static inline void ucoll__shm_adapt_record(ucoll_shm_adapt_t *ad, int streamed, float x)
{
    float t0, t1, tb, to;

    ad->t[streamed][ad->next[streamed]] = x;
    ad->next[streamed] = (uint8_t)((ad->next[streamed] + 1) % UCOLL_SHM_ADAPT_KEEP);
    t0 = ucoll__shm_adapt_time(ad, 0);
    t1 = ucoll__shm_adapt_time(ad, 1);
    tb = ad->best ? t1 : t0;
    to = ad->best ? t0 : t1;
    if (tb > 0 && to > 0 && to < tb * (1.0f - 1.0f / UCOLL_SHM_ADAPT_MARGIN)) {
        ad->best = !ad->best;
    }
}

/* The way of a reduction's next call where every rank must take the same
 * (ucoll__shm_way_adapt): 1 the model's way, 0 the other, -1 the model's
 * but not timed. The order is ucoll__shm_adapt_pick's, on the agreed way
 * instead of this rank's best: rank 0 (leader) measures, and in the middle
 * of each round of UCOLL_SHM_ADAPT_TRY calls publishes in word the way
 * for the next round with the round's number; at the first call of a
 * round every rank reads it there. A rank picks a call's way at the
 * call's first poll, once every earlier shared-memory call of the
 * communicator has ended on it (lib/algos/allreduce/shm.c), among them
 * the one in the middle of the round before, which ended only with rank
 * 0 in it, after rank 0 wrote the word; so each rank has the word when it
 * reads it, even one that posts many nonblocking calls before rank 0 posts
 * any, and rank 0 writes the next one only after every rank has read it.
 * A word of another round (none yet) leaves the way as it was, on every
 * rank alike. The word also says whether the round skips its try of the
 * other way: where that way measured more than UCOLL_SHM_ADAPT_FAR times
 * the taken one's time, it is tried in one round of UCOLL_SHM_ADAPT_SPARSE
 * only (a try of a way 1.3-3x slower every 32nd call cost 1-6% of the
 * time at p = 2). A way's time here is the second least of its kept
 * times (ad->second), not the least: with the least, one call of the
 * other way that ran quick by chance turned the choice for a round or
 * more, and with the CPUs close the choice took 1.09-1.33x the model's
 * time at 64-256 KiB at p = 2 in runs of 100 calls. Two such calls are
 * needed now, and a real change is followed once two tries have seen it.
 * turn
 * (UCOLL_SHM_WAY_ADAPT=turn, for tests): rank 0 publishes the other way
 * at every round, so calls change ways every round whatever the times. */
#define UCOLL_SHM_ADAPT_FAR    1.25f
#define UCOLL_SHM_ADAPT_SPARSE 4
/* Call n of ad's rounds (ucoll__shm_way_pick, ucoll__shm_duel_pick): at a
 * round's first call, the round's way (and whether it skips its try) from
 * word, where it is the round's; in the middle of the round, the leader
 * publishes the next round's there. */
static inline void ucoll__shm_round_word(ucoll_shm_adapt_t *ad, int leader, _Atomic uint64_t *word,
                                         int turn, uint32_t n)
{
    uint32_t round = n / UCOLL_SHM_ADAPT_TRY;

    if (n % UCOLL_SHM_ADAPT_TRY == 0) {
        uint64_t v = atomic_load_explicit(word, memory_order_acquire);

        ad->skip = 0;
        if (v >> 2 == round) {
            ad->agreed = (uint8_t)(v & 1);
            ad->skip = (uint8_t)((v >> 1) & 1);
        }
    } else if (leader && n % UCOLL_SHM_ADAPT_TRY == UCOLL_SHM_ADAPT_TRY / 2) {
        uint64_t way = turn ? !ad->agreed : ad->best;
        float tw = ucoll__shm_adapt_time(ad, (int)way), to = ucoll__shm_adapt_time(ad, !way);
        uint64_t skip = !turn && tw > 0 && to > tw * UCOLL_SHM_ADAPT_FAR &&
                        (round + 1) % UCOLL_SHM_ADAPT_SPARSE != 0;

        atomic_store_explicit(word, ((uint64_t)(round + 1) << 2) | skip << 1 | way,
                              memory_order_release);
    }
}
static inline int ucoll__shm_way_pick(ucoll_shm_adapt_t *ad, int leader, _Atomic uint64_t *word,
                                      int turn)
{
    uint32_t n = ad->calls;

    if (n < 2) {
        ad->agreed = 1;
        ad->second = 1;
    } else if (n >= 2 + 2 * UCOLL_SHM_ADAPT_KEEP) {
        ucoll__shm_round_word(ad, leader, word, turn, n);
    }
    return ucoll__shm_adapt_order(ad, &ad->agreed);
}

/* Calls whose row, the shm row or the best message-based one, is chosen
 * by measurement (ucoll__shm_duel_arm), per kind and size class. */
enum { UCOLL_SHM_DUEL_ALLTOALL, UCOLL_SHM_DUEL_RSB, UCOLL_SHM_DUEL_KINDS };
/* The smallest call that duels (bytes as selection counts them: an
 * alltoall's block, a reduce_scatter_block's whole vector): below it the
 * message-based rows' start-ups cost more than the shm row's two copies
 * on any state of this machine (alltoall at p = 4, 32 KiB: 34-55 us
 * through shm, 62-100 pairwise). */
#define UCOLL_SHM_DUEL_MIN ((size_t)64 << 10)

/* The row of a duelled call (1 the shm row, 0 the rival) and in *timed
 * whether it is timed; ucoll__shm_way_pick's rounds and agreement, with
 * tries of UCOLL_SHM_DUEL_TRY calls in a row, the first not timed: the
 * rival's first call after shm ones took 1.4-1.7x its later ones (p = 4,
 * 512 KiB alltoall, CPUs far apart: 870-1040 us, then 600), so a try of
 * one call, or calls that alternate, compared a cold row with a warm one
 * and the shm row kept its place at 1.6x the rival's time; the shm row's
 * first call after a try is not timed either, for the same reason. The
 * first calls: two that warm up (shm row), then a try of each row, the
 * rival first. leader: rank 0, which publishes the row in word. */
#define UCOLL_SHM_DUEL_TRY 5
static inline int ucoll__shm_duel_pick(ucoll_shm_adapt_t *ad, int leader, _Atomic uint64_t *word,
                                       int turn, int *timed)
{
    uint32_t n = ad->calls++, i = n % UCOLL_SHM_ADAPT_TRY;

    if (n < 2) {
        ad->agreed = 1;
        ad->second = 1;
        *timed = 0;
        return 1;
    }
    if (n < 2 + 2 * UCOLL_SHM_DUEL_TRY) {
        *timed = (n - 2) % UCOLL_SHM_DUEL_TRY != 0;
        return n >= 2 + UCOLL_SHM_DUEL_TRY;
    }
    ucoll__shm_round_word(ad, leader, word, turn, n);
    if (i < UCOLL_SHM_DUEL_TRY && !ad->skip && !turn) {
        *timed = i != 0;
        return !ad->agreed;
    }
    /* the first call of a round may change rows, and so does the first
     * after a try */
    *timed = i != 0 && (i != UCOLL_SHM_DUEL_TRY || ad->skip || turn);
    return ad->agreed;
}

/* The shared-memory state of one communicator; created at its first call
 * that may use shared memory, freed with the communicator. */
typedef struct ucoll_shm {
    ucoll_comm_t *comm;
    int state;
    int rank, p;      /* comm->rank, comm->size */
    size_t data_size; /* bytes of each region's data area */
    char **base;      /* the region of every member, this rank's included */
    struct ucoll_tl_shm *mine;
    void **keys;           /* attached peers' keys (transport handles) */
    uint64_t seq;          /* shared-memory calls started */
    ucoll_list_t ops;      /* queued ops, in call order */
    ucoll_list_t free_ops; /* op records for reuse */
    ucoll_list_t link;     /* in ctx->shm_active while ops are queued, or in
                            * ctx->shm_parked while the first op waits for a
                            * run of messages only (a duelled call's rival) */
    int active;            /* on ctx->shm_active */
    int parked;            /* on ctx->shm_parked */
    unsigned polls;        /* unsuccessful polls, to pace the failure check */
    /* the last small call that took a payload place (ucoll__shm_small_place)
     * and the place it took: such calls in a row alternate two places */
    uint64_t small_seq;
    int small_area;
    int small_pair;        /* its payload was of at most UCOLL_SHM_SMALL_PAIR bytes */
    int dead;              /* a member has failed: waiting ops fail */
    /* the end of this rank's last call, not posted yet (0: none): see
     * ucoll__shm_owe_end; while set, sh is on ctx->shm_owing */
    uint64_t owed;
    ucoll_list_t owe_link;
    int owing; /* on ctx->shm_owing (it may stay there paid, until the next pass) */
    /* the setup while it runs (lib/algos/shm.c); setup_free(setup) runs if
     * the communicator goes first */
    void *setup;
    void (*setup_free)(void *setup);
    /* this rank's measurements of its streamed and plain calls */
    ucoll_shm_adapt_t adapt[UCOLL_SHM_ADAPT_KINDS][UCOLL_SHM_ADAPT_CLASSES];
    /* timed reductions so far (the same count on every rank), and at rank
     * 0 the last one, whose time it takes from every rank's record once
     * the next one ends (ucoll__shm_way_adapt) */
    uint32_t way_timed;
    struct {
        ucoll_shm_adapt_t *ad; /* NULL: none */
        uint32_t m;
        int c;
        size_t bytes;
    } way_last;
    /* the measurements of the duelled calls: way 1 the shm row, 0 its
     * rival (only rank 0's times count) */
    ucoll_shm_adapt_t duel[UCOLL_SHM_DUEL_KINDS][UCOLL_SHM_ADAPT_CLASSES];
} ucoll_shm_t;

/* A way of a reduction through shared memory: what its op starts with
 * (lib/algos/allreduce/shm.c). */
typedef struct ucoll_shm_way_cfg {
    ucoll_shm_poll_t poll;
    int root, way;
    uint64_t aux;
    size_t chunk;
} ucoll_shm_way_cfg_t;

/*
 * One call. The algorithm's start fills the call's part and poll; the
 * state part is zero when poll first runs.
 */
struct ucoll_shm_op {
    ucoll_list_t link;
    ucoll_shm_t *sh;
    ucoll_req_t *req;
    ucoll_shm_poll_t poll; /* UCOLL_SHM_AGAIN, UCOLL_OK or an error */
    uint64_t seq;          /* this call's s */
    /* the call */
    const void *sbuf;
    void *rbuf;
    size_t count, esize;
    int dt, op, root, in_place;
    size_t chunk;           /* elements (or bytes) per piece, as the algorithm decides */
    size_t stream_min;      /* ucoll__shm_publish streams copies from this size (0: never) */
    const ucoll_iov_t *iov; /* bcast_iov: rbuf's place (NULL otherwise) */
    size_t niov;
    /* state */
    int phase;
    int cur;    /* next member to look at in a wait over several */
    uint64_t k; /* piece in progress */
    uint64_t aux;
    int slots;             /* slots of the data area the algorithm uses (0: its own rule) */
    size_t iov_i, iov_off; /* bcast_iov: where the next piece starts */
    /* a call whose streaming (or way) is chosen by measurement: its
     * record, whether it streams (takes the model's way), its bytes and
     * when its first poll ran (ns) */
    ucoll_shm_adapt_t *adapt;
    int adapt_kind, adapt_cls;
    int streamed;
    size_t adapt_bytes;
    uint64_t t0;
    int place;   /* ucoll__shm_small_place: 0 before its first poll */
    int changed; /* a copy into the region found this call's data changed (ucoll__shm_put) */
    int duel;  /* a duelled call (ucoll__shm_duel_arm): UCOLL_SHM_DUEL_* below, 0: not */
    /* not zeroed by ucoll__shm_op_get (the call's own state, set where it
     * is used): the op of a small call stays a few stores shorter */
    union {
        /* a reduction whose way is chosen per call (ucoll__shm_way_adapt):
         * the model's way [0] and the other [1], the kind and whether the
         * way turns every round; the way is taken at the first poll */
        struct {
            ucoll_shm_way_cfg_t cfg[2];
            int kind, turn;
        } way;
        /* a duelled call: its measurement, the shm row's poll, the rival's
         * schedule (held until the call takes a row) and tag, whether the
         * shm row's copies would choose their streaming, and when the
         * call took its row (ns) */
        struct {
            int kind, turn, stream, tag;
            ucoll_shm_adapt_t *ad;
            ucoll_shm_poll_t poll;
            struct ucoll_sched *rival;
            uint64_t t0;
        } duel;
    } u;
};
enum {
    UCOLL_SHM_DUEL_NONE,
    UCOLL_SHM_DUEL_UNDECIDED,   /* queued: takes its row at its first poll */
    UCOLL_SHM_DUEL_SHM,         /* through shared memory, untimed */
    UCOLL_SHM_DUEL_SHM_TIMED,   /* through shared memory, timed */
    UCOLL_SHM_DUEL_RIVAL_START, /* the rival's run is being started */
    UCOLL_SHM_DUEL_RIVAL,       /* the rival runs on the call's request */
    UCOLL_SHM_DUEL_RIVAL_DONE   /* ... and completed it in its start */
};

/* The shared-memory state of comm, created (state NONE) on first use;
 * NULL when out of memory. */
ucoll_shm_t *ucoll__shm_get(ucoll_comm_t *comm);
/* Free comm's state: queued ops are dropped without completing their
 * requests (the communicator or the context is going away), the peers'
 * regions detached, this rank's unmapped. */
void ucoll__shm_destroy(ucoll_comm_t *comm);

/* Withdraw the queued shared-memory call of request req (one whose blocking
 * wait timed out) and complete req with status: its buffers are not touched
 * again. The members no longer agree on where the communicator's calls
 * stand, so its later calls that wait for a peer fail (UCOLL_ERR_PEER)
 * rather than pair with the wrong call. 1 when req was queued, else 0. */
int ucoll__shm_cancel(ucoll_req_t *req, int status);

/* Whether comm has shared-memory calls queued or its setup under way. */
static inline int ucoll__shm_busy(const ucoll_comm_t *comm)
{
    return comm->shm != NULL && (!ucoll_list_empty(&comm->shm->ops) || comm->shm->setup != NULL);
}

/* Setup, in three local steps around two collective exchanges (run by
 * lib/algos/shm.c):
 * prepare: map this rank's region when the context can share memory and
 * every member is on this node, and describe it in slot (UCOLL_SHM_SLOT
 * bytes, always written: a rank that cannot share says so there);
 * attach: with every member's slot (in comm rank order), get a pointer to
 * each peer's region; 1 when all of them could be had, else 0;
 * enable: on = every member attached everything (agreed by all): ON;
 * otherwise release what was mapped and attached: OFF. */
/* bytes of a rank's data area on this context (UCOLL_SHM_SIZE or its default) */
size_t ucoll__shm_size(const ucoll_ctx_t *ctx);
void ucoll__shm_prepare(ucoll_shm_t *sh, void *slot);
int ucoll__shm_attach(ucoll_shm_t *sh, const void *slots);
void ucoll__shm_enable(ucoll_shm_t *sh, int on);

static inline int ucoll__shm_on(const ucoll_comm_t *comm)
{
    return comm->shm != NULL && comm->shm->state == UCOLL_SHM_ON;
}

/* comm has settled whether its collectives may use shared memory (ON or
 * OFF): a call need not pass ucoll__shm_coll_gate. */
static inline int ucoll__shm_settled(const ucoll_comm_t *comm)
{
    return comm->shm != NULL && comm->shm->state >= UCOLL_SHM_ON;
}

/* A zeroed op of sh for req, or NULL when out of memory. */
ucoll_shm_op_t *ucoll__shm_op_get(ucoll_shm_t *sh, ucoll_req_t *req);
/* Number op as the next call of its communicator and run it: at once when
 * nothing is queued before it (it may complete its request before this
 * returns), else after the queued ones. */
void ucoll__shm_op_start(ucoll_shm_op_t *op);

/* Where this rank's copies of a call of kind (UCOLL_SHM_ADAPT_*) and bytes
 * would stream (op->stream_min set, bytes at least that), choose whether
 * they do by measurement: calls of each kind and size class are timed both
 * ways (ucoll__shm_adapt_pick), and the way with the lower recent time is
 * taken, the other tried now and then, so a machine whose state changes
 * (a VM whose virtual CPUs the host moves between cores that share a cache
 * and cores that do not) is followed. op->stream_min = 0 when it goes
 * plain. Only the writer's copies change, never what is written, so a
 * rank that takes another way than the others is only slower. A bcast's
 * root, its only writer, times and decides alone. Where every rank writes
 * (allgather, alltoall), each one's time depends on the others' ways too:
 * ranks deciding each on its own time turned each other back and forth
 * (p = 2, 4 MiB allgather: 1.2x the time of streaming always), so rank 0
 * times and decides, and publishes the best way in its trailer; the others
 * read it there at each call, and take the same turns through the first
 * calls and the tries, which fall on the same calls everywhere (every rank
 * makes the calls of a communicator in the same order). */
void ucoll__shm_stream_adapt(ucoll_shm_op_t *op, int kind, size_t bytes);

/* A reduction of kind (UCOLL_SHM_ADAPT_REDUCE or _ALLREDUCE) and bytes
 * whose way is chosen by measurement between the model's and another:
 * ucoll__shm_way_pick's answer for the call (1 or -1 the model's way, 0
 * the other), the same on every rank. Where the call is timed (the same
 * calls on every rank), *ad is set: pass it to ucoll__shm_op_timed with
 * the op. Every rank writes when the call began and ended into its
 * trailer, and rank 0 takes the call's time as the last end less the last
 * beginning: the time of the collective once every rank is in it, which
 * rank 0's own time is not (a reduce's root that arrives last finds the
 * inputs there; one that arrives first waits for the others). It does so
 * when its next timed call ends, by which time every rank has written the
 * record (each has posted its input for that next call, so has finished
 * the one before), and none has written over it: a rank is at most two
 * timed calls ahead of rank 0. turn: see ucoll__shm_way_pick. Called at
 * the op's first poll, not at the call's start (see ucoll__shm_way_pick). */
int ucoll__shm_way_adapt(ucoll_shm_t *sh, int kind, size_t bytes, int turn, ucoll_shm_adapt_t **ad);
/* Time op, which takes way c (1: the model's) of the measurement ad for
 * bytes (ucoll__shm_way_adapt), from now: its first poll. */
void ucoll__shm_op_timed(ucoll_shm_op_t *op, ucoll_shm_adapt_t *ad, int c, size_t bytes);

/* Duel op, an alltoall or reduce_scatter_block (kind UCOLL_SHM_DUEL_*)
 * set up for the shm row (its poll set, not started), against the
 * message-based row whose sealed, relocatable schedule is rival, to run
 * under tag: the call takes one of the two, the same on every rank, and
 * is timed as the reductions' ways are (ucoll__shm_way_adapt: every
 * rank's record, rank 0 taking the collective's time), its row's time
 * kept in sh->duel (the second least of the last few). The row is taken
 * at the op's first poll, once every earlier shared-memory call of the
 * communicator has ended here, and ucoll__shm_duel_pick gives it, with
 * ucoll__shm_way_pick's rounds: rank 0 publishes in its
 * trailer, in the middle of each round of calls of the kind and size
 * class, the row of the next round, which every rank reads at the
 * round's first call. Each has the word by then: a rank's calls in the
 * middle of the round have ended here, and such a call ends only with
 * every rank's part in it, rank 0's included, which rank 0 sends after
 * its store; duelled calls stay queued until they end, through either row,
 * so "ended here" holds for all of them (a rank that posts many calls
 * without waiting takes each one's row only once those before it ended).
 * Through the rival the op starts the schedule on the call's request and
 * stays queued, its shared-memory part (end(s) posted) done, until the
 * request completes, when it leaves the queue. turn: the row changes every round. stream: the shm
 * row's copies choose their streaming (ucoll__shm_stream_adapt) when it
 * is taken. The op holds rival until its first poll. */
void ucoll__shm_duel_arm(ucoll_shm_op_t *op, int kind, struct ucoll_sched *rival, int tag, int turn,
                         int stream);

/* Poll the first op of every communicator with ops queued; returns the
 * number completed. Called by ucoll_progress. */
int ucoll__shm_progress(ucoll_ctx_t *ctx);
/* Post the ends that this rank's communicators owe (ucoll__shm_owe_end).
 * ucoll_progress calls it on entry, so that a rank that waits for anything
 * else, or calls in at all, does not hold peers that wait for its end. */
void ucoll__shm_pay_all(ucoll_ctx_t *ctx);
static inline int ucoll__shm_owing(const ucoll_ctx_t *ctx)
{
    return !ucoll_list_empty(&ctx->shm_owing);
}
/* Whether shared-memory ops are queued (they need polling, not sleep). */
static inline int ucoll__shm_pending(const ucoll_ctx_t *ctx)
{
    return !ucoll_list_empty(&ctx->shm_active);
}

/* ---- what poll functions use -------------------------------------------- */

static inline _Atomic uint64_t *ucoll__shm_ctl(const ucoll_shm_t *sh, int r)
{
    return (_Atomic uint64_t *)(void *)sh->base[r];
}
/* Rank r's position (acquire: its data written before it is visible). */
static inline uint64_t ucoll__shm_load(const ucoll_shm_t *sh, int r)
{
    return atomic_load_explicit(ucoll__shm_ctl(sh, r), memory_order_acquire);
}
/* Publish this rank's position (release: everything it wrote or read
 * before is done). */
static inline void ucoll__shm_post(const ucoll_shm_t *sh, uint64_t v)
{
    atomic_store_explicit(ucoll__shm_ctl(sh, sh->rank), v, memory_order_release);
}
/* Post sh's owed end now, unless this rank has posted a later position
 * (which says as much). */
static inline void ucoll__shm_pay(ucoll_shm_t *sh)
{
    if (atomic_load_explicit(ucoll__shm_ctl(sh, sh->rank), memory_order_relaxed) < sh->owed) {
        ucoll__shm_post(sh, sh->owed);
    }
    sh->owed = 0;
}
/*
 * End call op without posting end(s): owe it. Only for a small call (one
 * that took a place, ucoll__shm_small_place) that posted pos(s, 1) during
 * it. The next small call in a row waits for end(s - 1) only, which
 * pos(s, 1) says, and its own first post says end(s); posting end(s) too
 * sent this rank's control line to the readers and back once more per
 * call: at p = 2 a loop of 8-byte allgathers took 0.62 us a call with it
 * and 0.42 with it owed (CPUs far apart). Any other next op pays it
 * (ucoll__shm_pay) at its first poll, and ucoll_progress pays it on entry
 * (ucoll__shm_pay_all): a rank whose next collective on the communicator
 * is far off holds the peers that wait for its end only until it calls
 * into the library again, as a collective may.
 */
static inline void ucoll__shm_owe_end(ucoll_shm_op_t *op)
{
    ucoll_shm_t *sh = op->sh;

    sh->owed = ucoll__shm_end(op->seq);
    if (!sh->owing) {
        sh->owing = 1;
        ucoll_list_add_tail(&sh->comm->ctx->shm_owing, &sh->owe_link);
    }
}
static inline char *ucoll__shm_inline(const ucoll_shm_t *sh, int r)
{
    return sh->base[r] + sizeof(uint64_t);
}
static inline char *ucoll__shm_data(const ucoll_shm_t *sh, int r)
{
    return sh->base[r] + UCOLL_SHM_DATA_OFF;
}

/* Rank r's payload place `area` (ucoll__shm_small_place) for a payload of
 * `bytes` in each region: the second place of a payload of up to
 * UCOLL_SHM_SMALL_PAIR bytes follows the first in the control word's line,
 * where a reader takes both in one transfer, and a larger one's starts the
 * data area. */
#define UCOLL_SHM_SMALL_PAIR 24
_Static_assert(sizeof(uint64_t) + 2 * UCOLL_SHM_SMALL_PAIR <= 64,
               "both places of a small payload in the control word's line");
static inline char *ucoll__shm_small_buf(const ucoll_shm_t *sh, int r, int area, size_t bytes)
{
    if (area == 0) {
        return ucoll__shm_inline(sh, r);
    }
    return bytes <= UCOLL_SHM_SMALL_PAIR ? ucoll__shm_inline(sh, r) + UCOLL_SHM_SMALL_PAIR
                                         : ucoll__shm_data(sh, r);
}

/*
 * The payload place of a small call, one that puts at most
 * UCOLL_SHM_INLINE bytes in each region (the one-shot allreduce and
 * reduce, allgather, alltoall, reduce_scatter_block, bcast): 0 inline, beside the
 * control word, or 1 the second place (ucoll__shm_small_buf); and the call whose
 * readers must be done before this rank writes it (*since). Small calls in
 * a row alternate the two places, so call s writes the place that call s-1
 * left alone and waits only for the readers of call s-2, done long before
 * in a loop of calls: without it each call of such a loop waited a hop for
 * the others' end of the call before, besides the hop for their data (at
 * p = 2, a loop of 8-byte reduces waited for the root's end of each call,
 * one hop more than the linear algorithm's message). The two places of a
 * payload of up to UCOLL_SHM_SMALL_PAIR bytes both lie in the control
 * word's line (ucoll__shm_small_buf); the places of the two sizes overlap,
 * so only calls of one size class alternate. Every rank sees the same
 * calls in the same order, so all agree on each call's place; a call after
 * one that took no place (a barrier, a large call) or one of the other
 * class starts again inline, and waits for the call before. `bytes`
 * is the call's payload in each region. Set once per call, at its
 * first poll (the calls of a communicator run one at a time, in order), and
 * kept in op->place: 1 + the place, plus 2 when the call follows such a
 * call.
 */
static inline void ucoll__shm_small_place(ucoll_shm_op_t *op, size_t bytes, int *area,
                                          uint64_t *since)
{
    ucoll_shm_t *sh = op->sh;
    uint64_t s = op->seq;

    if (op->place == 0) {
        int pair = bytes <= UCOLL_SHM_SMALL_PAIR;
        int chain = sh->small_seq != 0 && sh->small_seq + 1 == s && sh->small_pair == pair;

        if (sh->owed != 0) { /* the call before's end (ucoll__shm_owe_end) */
            if (chain) {
                sh->owed = 0; /* this call's first post says it */
            } else {
                ucoll__shm_pay(sh); /* before waiting for the others' */
            }
        }

        sh->small_area = chain ? !sh->small_area : 0;
        sh->small_seq = s;
        sh->small_pair = pair;
        op->place = 1 + sh->small_area + (chain ? 2 : 0);
    }
    *area = (op->place - 1) & 1;
    *since = op->place > 2 ? s - 2 : s - 1;
}

/* Rank r's trailer word for kind (UCOLL_SHM_ADAPT_*, one that streams):
 * bit c set where size class c streams. */
static inline _Atomic uint64_t *ucoll__shm_trailer(const ucoll_shm_t *sh, int r, int kind)
{
    return (_Atomic uint64_t *)(void *)(sh->base[r] + UCOLL_SHM_DATA_OFF + sh->data_size) + kind;
}
/* Rank r's trailer word of the way of kind (a reduction) and size class
 * cls (ucoll__shm_way_pick). */
static inline _Atomic uint64_t *ucoll__shm_way_word(const ucoll_shm_t *sh, int r, int kind, int cls)
{
    return (_Atomic uint64_t *)(void *)(sh->base[r] + UCOLL_SHM_DATA_OFF + sh->data_size + 64) +
           (kind - UCOLL_SHM_ADAPT_STREAM_KINDS) * UCOLL_SHM_ADAPT_CLASSES + cls;
}
/* Rank r's record of its timed reduction number m (ucoll__shm_way_adapt),
 * one of the last UCOLL_SHM_WAY_RECS: m + 1 once written, and when the
 * call began and ended on it (ns). */
#define UCOLL_SHM_WAY_REC_OFF \
    (64 + (UCOLL_SHM_ADAPT_KINDS - UCOLL_SHM_ADAPT_STREAM_KINDS) * UCOLL_SHM_ADAPT_CLASSES * 8)
#define UCOLL_SHM_WAY_RECS 4
typedef struct {
    _Atomic uint64_t m, t0, t1;
} ucoll_shm_way_rec_t;
_Static_assert(UCOLL_SHM_WAY_REC_OFF + UCOLL_SHM_WAY_RECS * sizeof(ucoll_shm_way_rec_t) <=
                   UCOLL_SHM_TRAILER,
               "the trailer holds the records");
static inline ucoll_shm_way_rec_t *ucoll__shm_way_rec(const ucoll_shm_t *sh, int r, uint32_t m)
{
    return (ucoll_shm_way_rec_t *)(void *)(sh->base[r] + UCOLL_SHM_DATA_OFF + sh->data_size +
                                           UCOLL_SHM_WAY_REC_OFF) +
           m % UCOLL_SHM_WAY_RECS;
}
/* Rank r's trailer word of the row of duelled kind (UCOLL_SHM_DUEL_*) and
 * size class cls (ucoll__shm_duel_arm). */
#define UCOLL_SHM_DUEL_OFF 1024
_Static_assert(UCOLL_SHM_WAY_REC_OFF + UCOLL_SHM_WAY_RECS * sizeof(ucoll_shm_way_rec_t) <=
                       UCOLL_SHM_DUEL_OFF &&
                   UCOLL_SHM_DUEL_OFF + UCOLL_SHM_DUEL_KINDS * UCOLL_SHM_ADAPT_CLASSES * 8 <=
                       UCOLL_SHM_TRAILER,
               "the trailer holds the duel words");
static inline _Atomic uint64_t *ucoll__shm_duel_word(const ucoll_shm_t *sh, int r, int kind,
                                                     int cls)
{
    return (_Atomic uint64_t *)(void *)(sh->base[r] + UCOLL_SHM_DATA_OFF + sh->data_size +
                                        UCOLL_SHM_DUEL_OFF) +
           kind * UCOLL_SHM_ADAPT_CLASSES + cls;
}
/* Payload place of rank r for bytes of data: inline when they fit. */
static inline char *ucoll__shm_buf(const ucoll_shm_t *sh, int r, size_t bytes)
{
    return bytes <= UCOLL_SHM_INLINE ? ucoll__shm_inline(sh, r) : ucoll__shm_data(sh, r);
}

/* memcpy in slices of less than 1 MiB; every copy into or out of a region
 * goes through it but those ucoll__shm_publish streams (pieces reach 1 MiB
 * with a large UCOLL_SHM_SIZE or UCOLL_SEGMENT_SIZE, and allgather's whole
 * area at the default). Here (glibc 2.36, AMD EPYC) one
 * memcpy of 1 MiB or more takes another way than a shorter one: between a
 * rank's buffers and regions that another rank reads meanwhile it
 * measured 2.5x the time (an allgather of 1 MiB blocks at p = 2, one
 * piece: 210 us; pieces of 1 MiB - 64 B: 80 us, as with these slices);
 * within one process the step at 1 MiB was 1.25x (16 us for 1 MiB - 128 B,
 * 20 us for 1 MiB). Slices of 512 KiB measured 1.1x slower at 4 MiB. */
#define UCOLL_SHM_COPY_SLICE (((size_t)1 << 20) - 4096)
static inline void ucoll__shm_copy(void *dst, const void *src, size_t len)
{
    char *d = dst;
    const char *s = src;

    if (len <= 16) {
        /* a small call's payload: moves of 8 (or 4) bytes from both ends,
         * which may overlap, not a call of memcpy (13 instructions here) */
        uint64_t a, b;
        uint32_t x, y;

        if (len >= 8) {
            memcpy(&a, s, 8);
            memcpy(&b, s + len - 8, 8);
            memcpy(d, &a, 8);
            memcpy(d + len - 8, &b, 8);
        } else if (len >= 4) {
            memcpy(&x, s, 4);
            memcpy(&y, s + len - 4, 4);
            memcpy(d, &x, 4);
            memcpy(d + len - 4, &y, 4);
        } else {
            for (size_t i = 0; i < len; i++) {
                d[i] = s[i];
            }
        }
        return;
    }
    while (len > UCOLL_SHM_COPY_SLICE) {
        memcpy(d, s, UCOLL_SHM_COPY_SLICE);
        d += UCOLL_SHM_COPY_SLICE;
        s += UCOLL_SHM_COPY_SLICE;
        len -= UCOLL_SHM_COPY_SLICE;
    }
    memcpy(d, s, len);
}

/* Into this rank's region, len bytes from src, but stretches that already
 * hold the same bytes, which stay unwritten: a line written is taken from
 * every other cache that holds it, and the next reader brings it back
 * across, where a line left alone stays in the readers' caches. Calls
 * that move the same data through the same places (an input unchanged
 * since the last call, weights broadcast again) then cost the readers
 * local reads. Changed data costs one compare a call, which stops at the
 * first differing bytes, of lines this rank wrote last: when the first
 * stretch differs, all is written, and so are the call's later pieces
 * (comparing each stretch, or each piece, would read the first line of
 * every page in turn, each a miss where the region left the cache, and
 * turn the copy's writes into upgrades of lines just read); when it does
 * not, the rest goes stretch by stretch, runs of changed ones written at
 * once. */
#define UCOLL_SHM_SAME_STRETCH 4096
static inline void ucoll__shm_put_same(ucoll_shm_op_t *op, char *d, const char *s, size_t len)
{
    if (memcmp(d, s, UCOLL_SHM_SAME_STRETCH) != 0) {
        op->changed = 1;
        ucoll__shm_copy(d, s, len);
        return;
    }
    d += UCOLL_SHM_SAME_STRETCH;
    s += UCOLL_SHM_SAME_STRETCH;
    len -= UCOLL_SHM_SAME_STRETCH;
    while (len > 0) {
        size_t n = 0, m;

        /* equal stretches, skipped */
        while (len - n >= UCOLL_SHM_SAME_STRETCH &&
               memcmp(d + n, s + n, UCOLL_SHM_SAME_STRETCH) == 0) {
            n += UCOLL_SHM_SAME_STRETCH;
        }
        d += n;
        s += n;
        len -= n;
        if (len < UCOLL_SHM_SAME_STRETCH) {
            if (len > 0 && memcmp(d, s, len) != 0) {
                ucoll__shm_copy(d, s, len);
            }
            return;
        }
        /* the run of changed stretches that follows, written at once */
        m = UCOLL_SHM_SAME_STRETCH;
        while (len - m >= UCOLL_SHM_SAME_STRETCH &&
               memcmp(d + m, s + m, UCOLL_SHM_SAME_STRETCH) != 0) {
            m += UCOLL_SHM_SAME_STRETCH;
        }
        if (len - m < UCOLL_SHM_SAME_STRETCH) {
            m = len;
        }
        ucoll__shm_copy(d, s, m);
        d += m;
        s += m;
        len -= m;
    }
}

/* ucoll__shm_copy into this rank's region for op's call, unchanged
 * stretches skipped */
static inline void ucoll__shm_put(ucoll_shm_op_t *op, void *dst, const void *src, size_t len)
{
    if (len < UCOLL_SHM_SAME_STRETCH || op->changed) {
        ucoll__shm_copy(dst, src, len);
        return;
    }
    ucoll__shm_put_same(op, dst, src, len);
}

/* Copy into this rank's region, for other ranks to copy out: from
 * op->stream_min bytes (UCOLL_SHM_STREAM_MIN, or a tuning rule's stream=:
 * the call's algorithm sets it; 0 for a call that ucoll__shm_stream_adapt
 * sends plain) with non-temporal stores on
 * x86-64, which send the lines to memory instead of keeping them in this
 * core's cache, where the reader would take them one by one. Here (AMD
 * EPYC, 2 cores, p = 2, medians of 5-7 alternations) that took
 * 0.85-0.97x the time from 64 KiB to 8 MiB in allgather, and from 128 KiB
 * 0.85-0.95x in alltoall and 0.88-0.99x in bcast (0.85-1.05x at 16-64
 * KiB, 1.05-1.07x at 8 KiB). Not for data that a reduction reads: reduce,
 * allreduce and reduce_scatter_block took 1.00-1.18x the time from 1 to 8
 * MiB with it. The fence orders the stores before the post that says the
 * data is there. Plain copies skip unchanged stretches (ucoll__shm_put);
 * streamed ones do not: the last call's streamed lines left this core's
 * cache and sit in the readers', so the compare would bring one back
 * across for each piece (a bcast of 64 KiB to 1 MiB at p = 2 with new data
 * each call took 1.06-1.34x the time so, medians of 15 alternations).
 * Where the data stays the same, the plain way with its skipped stores is
 * the quicker, and ucoll__shm_stream_adapt finds it. */
static inline void ucoll__shm_publish(ucoll_shm_op_t *op, void *dst, const void *src, size_t len)
{
#if defined(__x86_64__)
    if (op->stream_min > 0 && len >= op->stream_min) {
        char *d = dst;
        const char *s = src;
        size_t head = (size_t)(-(uintptr_t)d & 63);

        memcpy(d, s, head); /* len >= 64 (UCOLL_SHM_STREAM_MIN), so head < len */
        d += head;
        s += head;
        len -= head;
        for (; len >= 64; len -= 64, d += 64, s += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)s);
            __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
            __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

            _mm_stream_si128((__m128i *)d, a);
            _mm_stream_si128((__m128i *)(d + 16), b);
            _mm_stream_si128((__m128i *)(d + 32), c);
            _mm_stream_si128((__m128i *)(d + 48), e);
        }
        memcpy(d, s, len);
        _mm_sfence();
        return;
    }
#endif
    ucoll__shm_put(op, dst, src, len);
}

/* Whether every member but this rank has reached v. Resumes where the last
 * unsuccessful call stopped (op->cur), positions never going back, and
 * rewinds op->cur when it succeeds. */
static inline int ucoll__shm_all_reached(ucoll_shm_op_t *op, uint64_t v)
{
    const ucoll_shm_t *sh = op->sh;

    for (; op->cur < sh->p; op->cur++) {
        if (op->cur != sh->rank && ucoll__shm_load(sh, op->cur) < v) {
            return 0;
        }
    }
    op->cur = 0;
    return 1;
}

/* bcast_iov: copy the next len bytes of op's buffers list out
 * (gather: into region) or in from region (scatter), advancing its place. */
static inline void ucoll__shm_iov_copy(ucoll_shm_op_t *op, char *region, size_t len, int gather)
{
    while (len > 0 && op->iov_i < op->niov) {
        const ucoll_iov_t *v = &op->iov[op->iov_i];
        size_t n = v->len - op->iov_off;

        if (n > len) {
            n = len;
        }
        if (n > 0) {
            if (gather) {
                ucoll__shm_publish(op, region, (const char *)v->buf + op->iov_off, n);
            } else {
                ucoll__shm_copy((char *)v->buf + op->iov_off, region, n);
            }
        }
        region += n;
        len -= n;
        op->iov_off += n;
        if (op->iov_off == v->len) {
            op->iov_i++;
            op->iov_off = 0;
        }
    }
}

#endif

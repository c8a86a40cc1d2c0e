/*
 * A stand-in for the UCX transport (lib/transport/ucx*.c) under the real
 * point-to-point engine (lib/progress/p2p.c, match.c, request.c and the
 * wire decoders), so that the fuzzer and the unit tests can feed the real
 * active-message handlers without UCX, processes or a network.
 *
 * It implements the operations of lib/transport/ucx.h the way UCX behaves
 * for them, in one process: messages to this process's own rank come back
 * through the handlers at the next progress (eager ones as data, AM
 * rendezvous ones as descriptors); tagged sends and receives to itself meet
 * by tag; gets from itself read the registered buffer. Operations towards
 * other ranks stay in flight until the test completes them (writing the
 * whole receive length into the buffer, so that a receive posted for more
 * than its buffer holds shows under AddressSanitizer) or fails their peer.
 * Every packet the engine sends is decoded with the real decoders: one they
 * refuse aborts, and so does a rendezvous descriptor that is never fetched
 * or released.
 *
 * Memory: fake_ctx_create returns a context that fake_ctx_destroy frees
 * with everything under it; requests and their buffers belong to the test.
 */
#ifndef UCOLL_TESTS_FAKE_TL_H
#define UCOLL_TESTS_FAKE_TL_H

#include "core.h"
#include "transport/wire.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int rank, size;
    size_t eager_limit, eager_credits;
    int rndv_mode; /* UCOLL_RNDV_* */
    int async;     /* operations complete at the next progress, not at once */
    int log_level; /* ucoll__log_level for the run; -1 silences */
    int stats;     /* print the engine's counters when destroyed */
} fake_cfg_t;

/* A context of cfg->size ranks with this process at cfg->rank, the world
 * (comm id 0) and the point-to-point engine over the fake transport. NULL
 * when out of memory. */
ucoll_ctx_t *fake_ctx_create(const fake_cfg_t *cfg);

/* Tear down the engine, then check that no descriptor was leaked (abort
 * otherwise) and free the context. */
void fake_ctx_destroy(ucoll_ctx_t *ctx);

/* Add a communicator with id and the given world ranks (this process among
 * them); NULL when out of memory or when this process is not a member. */
ucoll_comm_t *fake_comm_add(ucoll_ctx_t *ctx, uint32_t id, int n, const int *world_ranks);

/* Hand a packet to the handler of am_id (UCOLL_AM_MSG or UCOLL_AM_CTL) as
 * UCX would: header, data (copied into a descriptor when rndv). Returns
 * what the handler returned (1: it kept the descriptor). */
int fake_deliver(ucoll_ctx_t *ctx, int am_id, const void *header, size_t header_length,
                 const void *data, size_t length, int rndv);

/* One round of the engine's progress (ucoll__net_ucx.progress). */
int fake_progress(ucoll_ctx_t *ctx);

/* Complete the which-th (modulo their number) operation towards another
 * rank still in flight, with status (UCOLL_OK or an error); 0 when none. */
int fake_complete(ucoll_ctx_t *ctx, unsigned which, int status);

/* Report rank failed, as UCX's endpoint error would. */
void fake_fail(ucoll_ctx_t *ctx, int rank);

/* A rendezvous announcement (RNDV_TAG/GET) the engine sent to another rank:
 * the which-th (modulo) of the last ones; 0 when none. */
int fake_rts(ucoll_ctx_t *ctx, unsigned which, int *rank_p, wire_rts_t *rts_p);

/* The last control message (CTS, FIN, CREDIT) the engine sent to another
 * rank; 0 when none yet. */
int fake_last_ctl(ucoll_ctx_t *ctx, int *rank_p, wire_ctl_t *ctl_p);

/* Counters of what the engine did through the fake transport. */
typedef struct {
    uint64_t sent[2];   /* AM packets by id */
    uint64_t rts;       /* rendezvous announcements (RNDV_TAG/GET) sent */
    uint64_t tag_sends; /* tagged sends started */
    uint64_t gets;
    uint64_t descs; /* rendezvous descriptors alive */
} fake_stats_t;

void fake_stats(ucoll_ctx_t *ctx, fake_stats_t *st);

/* Packets refused by the engine for reason why (UCOLL_WIRE_E*), 0 for all. */
uint64_t fake_refused(ucoll_ctx_t *ctx, int why);

#endif

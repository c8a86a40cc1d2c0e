/*
 * The narrow interface between the collective executor and point-to-point.
 * It sits in the transport layer so that both of its implementations can
 * include it without reaching up: the executor (lib/progress/sched.c) calls
 * it, and a network implements it.
 *
 * The executor never talks to UCP: it posts sends and receives of bytes in
 * the collective matching space of a communicator through these ops and is
 * told of completion by a callback. The UCX implementation is the runtime's
 * own tag matching (lib/progress/p2p.c); the simulator brings another one
 * (lib/transport/simnet.c) that runs 10^4-10^5 virtual ranks in one process.
 */
#ifndef UCOLL_NET_H
#define UCOLL_NET_H

#include "core.h"

/* Completion of one posted operation. status is UCOLL_OK or an error
 * (UCOLL_ERR_PEER, UCOLL_ERR_TRUNCATE, ...). May run before the posting call
 * returns (a receive that matches an already arrived message), or later from
 * net->progress. */
typedef void (*ucoll_net_cb_t)(void *arg, int status);

typedef struct ucoll_net_ops {
    const char *name;
    /* Send bytes to comm rank dst, matched by (comm, space COLL, tag). */
    int (*isend)(ucoll_comm_t *comm, const void *buf, size_t bytes, int dst, int tag,
                 ucoll_net_cb_t cb, void *arg);
    /* Receive at most bytes from comm rank src (never a wildcard here). */
    int (*irecv)(ucoll_comm_t *comm, void *buf, size_t bytes, int src, int tag, ucoll_net_cb_t cb,
                 void *arg);
    /* Optional (NULL where operations cannot outlive their run): withdraw
     * the operations posted on comm under tag. Each still completes exactly
     * once through its callback (status, or its own error), at once when
     * it had not started and otherwise when the network has let go of its
     * buffer; nothing is written to the buffer after that callback. */
    void (*cancel)(ucoll_comm_t *comm, int tag, int status);
    /* Optional (NULL where no rank fails): whether a member of
     * ucoll__comm_scope(comm) has failed, so that no collective on comm can
     * complete. Cheap while no rank of the job has failed. */
    int (*comm_failed)(const ucoll_comm_t *comm);
    /* Drive the network once; returns the number of events processed. */
    int (*progress)(ucoll_ctx_t *ctx);
    /* Optional (NULL for real networks): told of the local work a schedule
     * does at a round start (bytes copied, or reduced when is_reduce), so
     * a simulated clock can charge it. */
    void (*local_work)(ucoll_ctx_t *ctx, size_t bytes, int is_reduce);
} ucoll_net_ops_t;

/* The UCX-backed net (the runtime's own point-to-point layer). */
extern const ucoll_net_ops_t ucoll__net_ucx;

#endif

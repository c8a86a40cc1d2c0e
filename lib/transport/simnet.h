/*
 * simnet: a SIMULATED network, not a real transport. It implements
 * ucoll_net_ops_t for N virtual ranks living in one process (one simulated
 * context each, see ucoll__ctx_create_sim) and moves bytes by memcpy.
 *
 * Time is virtual, under the Hockney model: a message of m bytes occupies
 * the sender's send port and the receiver's receive port for α + mβ (full
 * duplex: a rank sends one message and receives one at a time), or under
 * LogGP: the sender spends o + (m-1)G injecting it (and starts the next no
 * sooner than g later), its first byte arrives L after injection begins
 * (o after the start) or when the receive port is free, the last (m-1)G
 * later, and the receiver spends o on it: o + (m-1)G + L + o alone; local
 * copies cost λ per byte and reductions γ per byte (through
 * net->local_work). Sends are eager: a send completes when its bytes have
 * left, whether or not the receive is posted; with prm.rndv a send
 * completes only when its receive is matched (as a rendezvous protocol
 * does), so a schedule that needs eager buffering to make progress hangs
 * here, and the check of unmatched messages catches it. The simulator predicts
 * the time of a schedule on p ranks without running p processes.
 *
 * Completions are never delivered inside isend/irecv: they wait in a time
 * ordered event queue, and the driver (a test, ucoll_sim) fires them one by
 * one with ucoll__simnet_advance, then runs the executor of the context it
 * names. Checks made on the way: truncation, and a send buffer modified
 * while its send was in flight.
 */
#ifndef UCOLL_SIMNET_H
#define UCOLL_SIMNET_H

#include "transport/net.h"

typedef struct ucoll_simnet ucoll_simnet_t;

typedef struct ucoll_simnet_params {
    double alpha, beta, gamma, lambda; /* seconds, seconds per byte */
    int dry;                           /* move no bytes (ranks' buffers may be fake); time only */
    int rndv; /* rendezvous semantics: a send completes only once its receive is matched */
    /* LogGP instead of Hockney when loggp is set: L latency, o overhead at
     * each end, g the least gap between two messages at one port, G per
     * byte (alpha and beta are then unused) */
    int loggp;
    double L, o, g, G;
} ucoll_simnet_params_t;

typedef struct ucoll_simnet_stats {
    size_t messages;   /* sends posted */
    size_t bytes;      /* bytes sent */
    size_t truncated;  /* receives shorter than their message */
    size_t violations; /* send buffers modified while in flight */
    size_t events;     /* completions delivered */
} ucoll_simnet_stats_t;

/* The ops to pass to ucoll__ctx_create_sim, with the simnet as net_priv. */
extern const ucoll_net_ops_t ucoll__net_sim;

/* A network of nranks virtual ranks; ranks are world ranks of the
 * simulated contexts. */
int ucoll__simnet_create(int nranks, const ucoll_simnet_params_t *prm, ucoll_simnet_t **net_p);
/* Free the network (messages and receives still queued are dropped). */
void ucoll__simnet_destroy(ucoll_simnet_t *net);

/* Fire the earliest pending completion and return the context whose
 * operation completed (the caller then runs ucoll__exec_progress on it);
 * NULL when nothing is pending. */
ucoll_ctx_t *ucoll__simnet_advance(ucoll_simnet_t *net);

/* Virtual time of rank (when its last completion or local work ended). */
double ucoll__simnet_clock(const ucoll_simnet_t *net, int rank);
/* Largest clock over all ranks. */
double ucoll__simnet_max_clock(const ucoll_simnet_t *net);
/* Posted receives and unexpected messages still waiting for a match: not
 * zero after the queue drained means the schedules do not match. */
size_t ucoll__simnet_unmatched(const ucoll_simnet_t *net);
void ucoll__simnet_stats(const ucoll_simnet_t *net, ucoll_simnet_stats_t *stats);
/* Clocks, ports and counters back to zero (queues must be empty). */
void ucoll__simnet_reset(ucoll_simnet_t *net);

#endif

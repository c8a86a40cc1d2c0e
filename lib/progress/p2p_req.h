/*
 * Point-to-point part of a request (see request.h). Owned by the
 * point-to-point engine (lib/progress/p2p.c); a receive's match entry is
 * linked into the matching queues (lib/progress/match.h) while posted.
 */
#ifndef UCOLL_P2P_REQ_H
#define UCOLL_P2P_REQ_H

#include "list.h"
#include "progress/match.h"

#include <stddef.h>
#include <stdint.h>

struct ucoll_comm;

struct ucoll_p2p_req {
    struct ucoll_comm *comm;
    void *buf;
    size_t bytes;                          /* buffer size (receive) or message size (send) */
    int peer;                              /* comm rank, or UCOLL_ANY_SOURCE */
    int tag;                               /* or UCOLL_ANY_TAG */
    int space;                             /* UCOLL_SPACE_P2P or _COLL */
    void (*net_cb)(void *arg, int status); /* executor completion */
    void *net_arg;
    /* matching and protocol state */
    int world; /* job rank of peer; -1 for ANY_SOURCE */
    int any_tag;
    uint32_t ctx_id;
    uint32_t seq;             /* send: sequence number of the message; RNDV_TAG
                               * receive: the announced message's */
    size_t rlen;              /* RNDV_TAG receive: the announced message's size */
    int proto;                /* UCOLL_PROTO_* once chosen or matched */
    int inflight;             /* peer_link is in a peer's in-flight list */
    ucoll_match_recv_t match; /* receive: its entry in the matching queues */
    ucoll_list_t peer_link;   /* in the peer's in-flight list */
    void *op;                 /* ucoll_tl_op_t of the transport operation in flight */
    void *msg;                /* matched announcement awaiting its fetch */
    uint64_t handle;          /* RNDV_TAG/GET send: its cookie while it waits for CTS/FIN */
    uint64_t peer_cookie;     /* RNDV_GET receive: the sender's cookie, echoed in FIN */
    void *reg;                /* RNDV_GET send: ucoll_reg_t from the registration cache */
};

#endif

/*
 * Point-to-point part of a request (see request.h). Owned by the matching
 * engine and the wire protocol.
 */
#ifndef UCOLL_P2P_REQ_H
#define UCOLL_P2P_REQ_H

#include <stddef.h>
#include <stdint.h>

struct ucoll_comm;

struct ucoll_p2p_req {
    struct ucoll_comm *comm;
    void              *buf;
    size_t             bytes;   /* buffer size (receive) or message size (send) */
    int                peer;    /* comm rank, or UCOLL_ANY_SOURCE */
    int                tag;     /* or UCOLL_ANY_TAG */
    int                space;   /* UCOLL_SPACE_P2P or _COLL */
    void             (*net_cb)(void *arg, int status); /* executor completion */
    void              *net_arg;
};

#endif

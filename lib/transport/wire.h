/*
 * The point-to-point wire protocol: what travels in the UCP active messages
 * of lib/progress/p2p.c.
 *
 * UCOLL_AM_MSG carries one message announcement or one eager message:
 *   EAGER     wire_hdr_t as the AM header, payload as AM data (one active
 *             message); payloads that fit an operation record travel as AM
 *             data right behind the header, with no AM header, which keeps
 *             UCX on its plain short-message path
 *   RNDV_AM   wire_hdr_t as the AM header of a UCP AM rendezvous send; the
 *             receiver keeps UCP's data descriptor until the receive is
 *             matched, then pulls the payload into the user buffer
 *             (ucp_am_recv_data_nbx) or releases it on truncation
 *   RNDV_TAG  wire_rts_t; once matched the receiver posts ucp_tag_recv_nbx
 *             under the tag (sender world rank << 32 | seq) and answers CTS;
 *             the sender then ucp_tag_send_nbx's the payload under that tag
 *   RNDV_GET  wire_rts_t followed by the packed rkey of the sender's
 *             registered buffer; the receiver ucp_get_nbx's the payload and
 *             answers FIN
 * UCOLL_AM_CTL carries wire_ctl_t: CTS, FIN, or a batch of returned credits.
 *
 * Every MSG carries the sender's sequence number for the (sender, receiver)
 * pair: the receiver hands messages to matching strictly in that order, so
 * non-overtaking holds whatever the protocol and even if the transport
 * reorders. Any message may also return eager credits (piggybacked).
 */
#ifndef UCOLL_TRANSPORT_WIRE_H
#define UCOLL_TRANSPORT_WIRE_H

#include <stdint.h>

enum { UCOLL_PROTO_EAGER, UCOLL_PROTO_RNDV_AM, UCOLL_PROTO_RNDV_TAG, UCOLL_PROTO_RNDV_GET };

enum { UCOLL_CTL_CTS, UCOLL_CTL_FIN, UCOLL_CTL_CREDIT };

typedef struct {
    uint32_t ctx_id; /* communicator id * 2 + matching space */
    int32_t src;     /* sender's rank in the communicator */
    int32_t tag;
    uint32_t seq;       /* per (sender, receiver) job-rank pair */
    uint32_t src_world; /* sender's job rank */
    uint16_t proto;     /* UCOLL_PROTO_* */
    uint16_t rkey_len;  /* RNDV_GET: packed rkey bytes after wire_rts_t */
    uint32_t credits;   /* eager bytes the sender hands back to the receiver */
    uint32_t pad;       /* zero: no byte of a header leaves uninitialised */
    uint64_t len;       /* message size in bytes */
} wire_hdr_t;

_Static_assert(sizeof(wire_hdr_t) == 40, "wire_hdr_t has no implicit padding");

typedef struct {
    wire_hdr_t h;
    uint64_t cookie; /* sender's handle, echoed in CTS/FIN */
    uint64_t raddr;  /* RNDV_GET: address of the payload at the sender */
} wire_rts_t;

typedef struct {
    uint32_t type; /* UCOLL_CTL_* */
    uint32_t src_world;
    uint32_t credits;
    uint32_t seq;   /* CTS/FIN: seq of the message, checked with the cookie */
    int32_t status; /* CTS/FIN: UCOLL_OK, or UCOLL_ERR_TRUNCATE (data not taken) */
    uint32_t pad;
    uint64_t cookie;
} wire_ctl_t;

#endif

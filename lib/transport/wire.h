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
 *             answers FIN, also when the get (or unpacking the rkey) fails:
 *             then with that status, so that the sender stops waiting and
 *             unpins its buffer
 * UCOLL_AM_CTL carries wire_ctl_t: CTS, FIN, a batch of returned credits, or
 * DOWN: the sender has found job rank `seq` failed (its own endpoint's
 * error, the liveness watch, or another rank's DOWN), and tells every live
 * rank once, so that a failure reaches ranks that never talk to the dead
 * one (the collectives of every communicator holding it then fail).
 *
 * Every MSG carries the sender's sequence number for the (sender, receiver)
 * pair: the receiver hands messages to matching strictly in that order, so
 * non-overtaking holds whatever the protocol and even if the transport
 * reorders. Any message may also return eager credits (piggybacked).
 */
#ifndef UCOLL_TRANSPORT_WIRE_H
#define UCOLL_TRANSPORT_WIRE_H

#include <stddef.h>
#include <stdint.h>

enum { UCOLL_PROTO_EAGER, UCOLL_PROTO_RNDV_AM, UCOLL_PROTO_RNDV_TAG, UCOLL_PROTO_RNDV_GET };

enum { UCOLL_CTL_CTS, UCOLL_CTL_FIN, UCOLL_CTL_CREDIT, UCOLL_CTL_DOWN };

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
    uint32_t seq;   /* CTS/FIN: seq of the message, checked with the cookie;
                     * DOWN: the job rank found failed */
    int32_t status; /* CTS/FIN: UCOLL_OK; else the data was not taken, because
                     * the receive was too small (UCOLL_ERR_TRUNCATE: the send
                     * succeeds, as in MPI) or failed at the receiver
                     * (UCOLL_ERR_NOMEM, UCOLL_ERR_TRANSPORT: the send fails
                     * with it) */
    uint32_t pad;
    uint64_t cookie;
} wire_ctl_t;

_Static_assert(sizeof(wire_rts_t) == 56, "wire_rts_t has no implicit padding");
_Static_assert(sizeof(wire_ctl_t) == 32, "wire_ctl_t has no implicit padding");

/*
 * Decoding. Every byte of an active message comes from outside the process:
 * a peer with a bug, a mismatched build, or anyone who can reach the worker.
 * The handlers of lib/progress/p2p.c therefore read a header only through
 * these decoders, which check it against what UCX delivered (the lengths of
 * the AM header and data, and whether the data is a rendezvous descriptor)
 * and against the ranges its fields may take, and refuse anything else.
 * They are pure functions of their arguments (no UCX, no context), so that
 * unit tests and the fuzzer (tests/fuzz) can drive them directly.
 *
 * What the decoders cannot know, the handlers check against their state
 * before any of it changes: credits never returned beyond what was lent,
 * sequence numbers not already delivered or queued, a cookie naming a send
 * that waits for this peer; and, when a receive is about to take a message,
 * that its sender is the member of the receive's communicator it claims to
 * be. A refused packet is dropped whole and counted; its reason is one of
 * ucoll_wire_err_t.
 */

/* Why a packet was refused; UCOLL_WIRE_OK (0) when it was not. */
typedef enum {
    UCOLL_WIRE_OK = 0,
    UCOLL_WIRE_ESIZE,   /* header or data length not what the protocol sends */
    UCOLL_WIRE_EPROTO,  /* unknown protocol or control type */
    UCOLL_WIRE_ERNDV,   /* UCX's rendezvous flag disagrees with the protocol */
    UCOLL_WIRE_EPAD,    /* a field that must be zero is not */
    UCOLL_WIRE_ERANK,   /* sender's job rank or communicator rank out of range */
    UCOLL_WIRE_ETAG,    /* point-to-point tag outside 0..UCOLL_TAG_UB */
    UCOLL_WIRE_ELEN,    /* message size disagrees with the data delivered */
    UCOLL_WIRE_ERKEY,   /* remote key length wrong for the protocol */
    UCOLL_WIRE_ECOOKIE, /* cookie missing, or set where none is sent */
    UCOLL_WIRE_ESTATUS, /* control status not one a CTS/FIN may carry */
    /* checked by the handlers against their state */
    UCOLL_WIRE_ECREDITS, /* returns more eager credits than were lent */
    UCOLL_WIRE_ESEQ,     /* sequence number already delivered or queued */
    UCOLL_WIRE_ECOMM,    /* sender is not that rank of the communicator */
    UCOLL_WIRE_EHANDLE,  /* cookie that no send of ours was ever given */
    UCOLL_WIRE_NERR
} ucoll_wire_err_t;

/* Short text of a reason ("header or data length", ...). */
const char *ucoll__wire_strerror(int err);

/* A decoded UCOLL_AM_MSG. */
typedef struct {
    wire_hdr_t h;     /* the header, checked; h.len is the message size */
    uint64_t cookie;  /* RNDV_TAG/GET: the sender's handle, never 0 */
    uint64_t raddr;   /* RNDV_GET: address of the payload at the sender */
    const void *rkey; /* RNDV_GET: h.rkey_len bytes of packed rkey, inside the AM header */
    void *data;       /* EAGER: the payload; RNDV_AM: UCX's data descriptor; else NULL */
    size_t length;    /* EAGER, RNDV_AM: h.len; else 0 */
} ucoll_wire_msg_t;

/*
 * Decode a UCOLL_AM_MSG as UCX delivered it: AM header and its length (0
 * when the packet is packed: wire_hdr_t at the start of data), data and its
 * length, rndv when data is a rendezvous descriptor (length then is the size
 * UCX announces), from a job of world_size ranks. Checks, per protocol:
 *   EAGER     header exactly wire_hdr_t, not rndv, h.len == bytes of data
 *   RNDV_AM   header exactly wire_hdr_t, rndv, h.len == length
 *   RNDV_TAG  header exactly wire_rts_t, no data, cookie != 0, raddr == 0
 *   RNDV_GET  header exactly wire_rts_t + rkey_len > 0 bytes, no data,
 *             cookie != 0
 * and for all: src_world and src in [0, world_size), a tag of the
 * point-to-point space in 0..UCOLL_TAG_UB, pad == 0, rkey_len == 0 but for
 * RNDV_GET. UCOLL_WIRE_OK and *msg_p filled, or the reason (msg_p
 * untouched). msg_p->rkey and ->data point into header and data.
 */
int ucoll__wire_decode_msg(const void *header, size_t header_length, void *data, size_t length,
                           int rndv, uint32_t world_size, ucoll_wire_msg_t *msg_p);

/*
 * Decode a UCOLL_AM_CTL: header exactly wire_ctl_t, no data, not rndv, a
 * known type, src_world in [0, world_size), pad == 0; CREDIT with cookie,
 * seq and status 0; DOWN with cookie and status 0 and a seq in
 * [0, world_size) other than src_world; CTS and FIN with a cookie != 0
 * and status UCOLL_OK, UCOLL_ERR_TRUNCATE, UCOLL_ERR_NOMEM or
 * UCOLL_ERR_TRANSPORT. UCOLL_WIRE_OK and *ctl_p filled, or the reason.
 */
int ucoll__wire_decode_ctl(const void *header, size_t header_length, const void *data,
                           size_t length, int rndv, uint32_t world_size, wire_ctl_t *ctl_p);

#endif

/*
 * Decoding of the wire protocol (wire.h): every check a header has to pass
 * before the point-to-point engine looks at it. Headers are copied out
 * before they are read: UCX does not promise any alignment for them.
 */
#include "transport/wire.h"
#include "core.h"

#include <string.h>

const char *ucoll__wire_strerror(int err)
{
    switch (err) {
    case UCOLL_WIRE_OK: return "no error";
    case UCOLL_WIRE_ESIZE: return "header or data length";
    case UCOLL_WIRE_EPROTO: return "unknown protocol or type";
    case UCOLL_WIRE_ERNDV: return "rendezvous flag";
    case UCOLL_WIRE_EPAD: return "non-zero padding";
    case UCOLL_WIRE_ERANK: return "rank out of range";
    case UCOLL_WIRE_ETAG: return "tag out of range";
    case UCOLL_WIRE_ELEN: return "message size";
    case UCOLL_WIRE_ERKEY: return "remote key length";
    case UCOLL_WIRE_ECOOKIE: return "cookie";
    case UCOLL_WIRE_ESTATUS: return "control status";
    case UCOLL_WIRE_ECREDITS: return "credits beyond the window";
    case UCOLL_WIRE_ESEQ: return "sequence number already seen";
    case UCOLL_WIRE_ECOMM: return "sender not in the communicator";
    case UCOLL_WIRE_EHANDLE: return "unknown send handle";
    default: return "unknown reason";
    }
}

/* Fields every message header shares. */
static int check_hdr(const wire_hdr_t *h, uint32_t world_size)
{
    if (h->pad != 0) {
        return UCOLL_WIRE_EPAD;
    }
    if (h->src_world >= world_size || h->src < 0 || (uint32_t)h->src >= world_size) {
        return UCOLL_WIRE_ERANK;
    }
    /* collective tags are sequence numbers and take any value */
    if ((h->ctx_id & 1) == UCOLL_SPACE_P2P && (h->tag < 0 || h->tag > UCOLL_TAG_UB)) {
        return UCOLL_WIRE_ETAG;
    }
    if (h->proto != UCOLL_PROTO_RNDV_GET && h->rkey_len != 0) {
        return UCOLL_WIRE_ERKEY;
    }
    return UCOLL_WIRE_OK;
}

int ucoll__wire_decode_msg(const void *header, size_t header_length, void *data, size_t length,
                           int rndv, uint32_t world_size, ucoll_wire_msg_t *msg_p)
{
    ucoll_wire_msg_t m;
    int ret;

    if (header_length == 0 && !rndv) {
        /* packed: the header travels at the start of the data */
        if (length < sizeof(wire_hdr_t)) {
            return UCOLL_WIRE_ESIZE;
        }
        header = data;
        header_length = sizeof(wire_hdr_t);
        data = (char *)data + sizeof(wire_hdr_t);
        length -= sizeof(wire_hdr_t);
    }
    if (header_length < sizeof(wire_hdr_t)) {
        return UCOLL_WIRE_ESIZE;
    }
    memcpy(&m.h, header, sizeof(m.h));
    m.cookie = m.raddr = 0;
    m.rkey = NULL;
    m.data = NULL;
    m.length = 0;
    if (m.h.proto > UCOLL_PROTO_RNDV_GET) {
        return UCOLL_WIRE_EPROTO;
    }
    if (!!rndv != (m.h.proto == UCOLL_PROTO_RNDV_AM)) {
        return UCOLL_WIRE_ERNDV;
    }
    ret = check_hdr(&m.h, world_size);
    if (ret != UCOLL_WIRE_OK) {
        return ret;
    }
    switch (m.h.proto) {
    case UCOLL_PROTO_EAGER:
    case UCOLL_PROTO_RNDV_AM:
        if (header_length != sizeof(wire_hdr_t)) {
            return UCOLL_WIRE_ESIZE;
        }
        if (m.h.len != length) {
            return UCOLL_WIRE_ELEN;
        }
        m.data = data;
        m.length = length;
        break;
    default: /* RNDV_TAG, RNDV_GET: the announcement alone */
        if (m.h.proto == UCOLL_PROTO_RNDV_GET && m.h.rkey_len == 0) {
            return UCOLL_WIRE_ERKEY;
        }
        if (header_length != sizeof(wire_rts_t) + m.h.rkey_len || length != 0) {
            return UCOLL_WIRE_ESIZE;
        }
        memcpy(&m.cookie, (const char *)header + offsetof(wire_rts_t, cookie), sizeof(m.cookie));
        memcpy(&m.raddr, (const char *)header + offsetof(wire_rts_t, raddr), sizeof(m.raddr));
        if (m.cookie == 0 || (m.h.proto == UCOLL_PROTO_RNDV_TAG && m.raddr != 0)) {
            return UCOLL_WIRE_ECOOKIE;
        }
        if (m.h.rkey_len) {
            m.rkey = (const char *)header + sizeof(wire_rts_t);
        }
        break;
    }
    *msg_p = m;
    return UCOLL_WIRE_OK;
}

int ucoll__wire_decode_ctl(const void *header, size_t header_length, const void *data,
                           size_t length, int rndv, uint32_t world_size, wire_ctl_t *ctl_p)
{
    wire_ctl_t ctl;

    (void)data;
    if (rndv) {
        return UCOLL_WIRE_ERNDV;
    }
    if (header_length != sizeof(ctl) || length != 0) {
        return UCOLL_WIRE_ESIZE;
    }
    memcpy(&ctl, header, sizeof(ctl));
    if (ctl.type > UCOLL_CTL_DOWN) {
        return UCOLL_WIRE_EPROTO;
    }
    if (ctl.pad != 0) {
        return UCOLL_WIRE_EPAD;
    }
    if (ctl.src_world >= world_size) {
        return UCOLL_WIRE_ERANK;
    }
    if (ctl.type == UCOLL_CTL_DOWN) {
        if (ctl.cookie != 0) {
            return UCOLL_WIRE_ECOOKIE;
        }
        if (ctl.seq >= world_size || ctl.seq == ctl.src_world) {
            return UCOLL_WIRE_ERANK;
        }
        if (ctl.status != UCOLL_OK) {
            return UCOLL_WIRE_ESTATUS;
        }
    } else if (ctl.type == UCOLL_CTL_CREDIT) {
        if (ctl.cookie != 0 || ctl.seq != 0) {
            return UCOLL_WIRE_ECOOKIE;
        }
        if (ctl.status != UCOLL_OK) {
            return UCOLL_WIRE_ESTATUS;
        }
    } else {
        if (ctl.cookie == 0) {
            return UCOLL_WIRE_ECOOKIE;
        }
        if (ctl.status != UCOLL_OK && ctl.status != UCOLL_ERR_TRUNCATE &&
            ctl.status != UCOLL_ERR_NOMEM && ctl.status != UCOLL_ERR_TRANSPORT) {
            return UCOLL_WIRE_ESTATUS;
        }
    }
    *ctl_p = ctl;
    return UCOLL_WIRE_OK;
}

/*
 * The input language of the fuzz_wire target (fuzz_wire.c), shared with the
 * seed generator (fuzz_seeds.c).
 *
 * An input is a configuration byte, then records until the input ends; a
 * record is an opcode byte (taken modulo FZ_NOPS) and its arguments, read
 * as far as the input goes (missing bytes read as 0). Multi-byte numbers are
 * little-endian.
 *
 * Configuration: bits 0-1 the rendezvous mode (UCOLL_RNDV_AUTO, TAG, AM,
 * GET), bit 2 an eager limit of 256 B (else 4 KiB), bit 3 a credit window
 * of 1 KiB (else 256 KiB), bit 4 a transport that completes operations at
 * the next progress (else at once), bit 5 peers that look like TCP (else
 * shared memory), bits 6-7 this process's rank in a job of FZ_SIZE.
 *
 * Communicators: 0 is the world (id 0), 1 the world in reverse order (id 1),
 * 2 a subset created by FZ_COMM (id 2; until then unknown here), 3 an id
 * (7) this process never has.
 */
#ifndef UCOLL_TESTS_FUZZ_WIRE_H
#define UCOLL_TESTS_FUZZ_WIRE_H

#define FZ_SIZE 4
/* sizes of messages and buffers are taken modulo this: past the small
 * eager limit, and small enough to keep runs fast */
#define FZ_MAX_SIZE 8192

enum {
    /* raw UCOLL_AM_MSG as UCX delivers it: u8 flags (bit 0 rndv), u8 header
     * length, u16 data length, then the header and data bytes */
    FZ_MSG,
    /* raw UCOLL_AM_CTL: u8 flags (bit 0 rndv), u8 header length, u8 data
     * length, then the bytes */
    FZ_CTL,
    /* a UCOLL_AM_MSG built from fields, so that matching is reached without
     * guessing every byte: u8 proto (low 2 bits; bit 2 packed, bit 3 a
     * sender inconsistent with the communicator), u8 comm (low 2 bits; bit 2
     * the collective space), u8 comm rank of the sender, u8 tag, i8 sequence
     * offset (0: the next one of that sender), u16 size, u8 credits/16, u8
     * cookie */
    FZ_HDR,
    /* post a receive: u8 flags (bit 0 collective space through the net ops,
     * bits 1-2 comm), u8 source (0xff any), u8 tag (0xff
     * any), u16 size */
    FZ_RECV,
    /* start a send: u8 flags (as FZ_RECV; bit 4 try the immediate path
     * first), u8 destination, u8 tag, u16 size */
    FZ_SEND,
    /* answer one of the last announcements sent to another rank: u8 which,
     * u8 type (UCOLL_CTL_*, modulo 3), u8 status (bit 0 truncated), u8
     * byte to flip, u8 xor mask */
    FZ_ANSWER,
    /* one round of progress */
    FZ_PROGRESS,
    /* complete an operation towards another rank: u8 which, u8 status (bit
     * 0 failed) */
    FZ_COMPLETE,
    /* a peer fails: u8 rank */
    FZ_FAIL,
    /* create communicator 2: u8 order of its members */
    FZ_COMM,
    /* take the completed requests back, checking their status */
    FZ_REAP,
    FZ_NOPS
};

#endif

/* Test cases of the data-movement collectives: see dm_case.h. */
#include "dm_case.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD   64   /* poisoned bytes after every receive extent */
#define RPOISON 0x5a /* receive buffers (scratch poison is different) */
#define SGAP    0x33 /* send-buffer bytes that belong to no block */

const char *const dm_op_names[DM_NOPS] = {"gather",    "gatherv",    "scatter",  "scatterv",
                                          "allgather", "allgatherv", "alltoall", "alltoallv"};

int dm_rooted(dm_op_t op)
{
    return op <= DM_SCATTERV;
}

int dm_is_v(dm_op_t op)
{
    return op == DM_GATHERV || op == DM_SCATTERV || op == DM_ALLGATHERV || op == DM_ALLTOALLV;
}

/* Byte k of the block src sends to dst (dst = 0 where every rank gets the
 * same block). A hash, so a block put in the wrong place or at the wrong
 * offset never matches by accident. */
static uint8_t dm_byte(unsigned seed, int src, int dst, size_t k)
{
    uint32_t x = (uint32_t)(k >> 2) * 0x9e3779b1u;

    x ^= seed * 0x85ebca77u + (uint32_t)(src + 1) * 0xc2b2ae3du + (uint32_t)(dst + 5) * 0x27d4eb2fu;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    x *= 0x297a2d39u;
    x ^= x >> 15;
    return (uint8_t)(x >> (8 * (k & 3)));
}

static void fill_block(char *dst, size_t n, unsigned seed, int src, int to)
{
    for (size_t k = 0; k < n; k++) {
        dst[k] = (char)dm_byte(seed, src, to, k);
    }
}

/* Elements rank i contributes in gatherv / scatterv / allgatherv. */
static size_t vcount(const dm_case_t *c, int i)
{
    if (c->count == 0 || (i * 7 + c->seed) % 5 == 2) {
        return 0;
    }
    return c->count + (size_t)((i * 3 + c->seed) % 4);
}

/* Elements src sends to dst in alltoallv; symmetric when in place, as MPI
 * requires there. */
static size_t acount(const dm_case_t *c, int s, int d)
{
    if (c->in_place && s > d) {
        int t = s;
        s = d;
        d = t;
    }
    if (c->count == 0 || (s * 3 + d * 5 + c->seed) % 6 == 1) {
        return 0;
    }
    return c->count + (size_t)((s + 2 * d + c->seed) % 3);
}

/* Displacements in reverse rank order (forward when flip), with a gap
 * before the first and after every odd rank's block; returns the extent in
 * elements. Ranks flip differently, as displacements are each rank's own. */
static size_t layout(const size_t *counts, size_t *displs, int p, int flip)
{
    size_t off = 1;

    for (int j = 0; j < p; j++) {
        int i = flip ? j : p - 1 - j;
        displs[i] = off;
        off += counts[i] + (size_t)(i % 2);
    }
    return off;
}

static char *alloc_poisoned(size_t bytes)
{
    char *p = malloc(bytes + GUARD);

    if (p != NULL) {
        memset(p, RPOISON, bytes + GUARD);
    }
    return p;
}

static size_t *alloc_counts(int p)
{
    return calloc((size_t)p, sizeof(size_t));
}

void dm_free(dm_bufs_t *b)
{
    free(b->sbuf);
    free(b->rbuf);
    free(b->scounts);
    free(b->sdispls);
    free(b->rcounts);
    free(b->rdispls);
    memset(b, 0, sizeof(*b));
}

/* Fill the v-blocks of a send buffer: block j (to rank `to(j)`) at
 * displs[j]. */
static void fill_vblocks(char *buf, size_t extent, const size_t *counts, const size_t *displs,
                         int p, size_t es, unsigned seed, int src, int per_dest)
{
    memset(buf, SGAP, extent);
    for (int j = 0; j < p; j++) {
        fill_block(buf + displs[j] * es, counts[j] * es, seed, src, per_dest ? j : 0);
    }
}

int dm_setup(const dm_case_t *c, int rank, dm_bufs_t *b)
{
    int p = c->p, root = c->root, i;
    size_t es = ucoll_dtype_size(c->dt);
    size_t B = c->count * es;
    int am_root = dm_rooted(c->op) && rank == root;
    int in_place = c->in_place && (am_root || !dm_rooted(c->op));

    memset(b, 0, sizeof(*b));
    switch (c->op) {
    case DM_GATHER:
        if (!in_place) {
            b->sbytes = B;
            b->sbuf = malloc(B + GUARD);
            if (b->sbuf) {
                fill_block(b->sbuf, B, c->seed, rank, 0);
            }
        }
        if (am_root) {
            b->rbytes = (size_t)p * B;
            b->rbuf = alloc_poisoned(b->rbytes);
            if (b->rbuf && in_place) {
                fill_block(b->rbuf + (size_t)root * B, B, c->seed, root, 0);
            }
        }
        break;
    case DM_GATHERV:
        b->scount = vcount(c, rank);
        if (!in_place) {
            b->sbytes = b->scount * es;
            b->sbuf = malloc(b->sbytes + GUARD);
            if (b->sbuf) {
                fill_block(b->sbuf, b->sbytes, c->seed, rank, 0);
            }
        }
        if (am_root) {
            b->rcounts = alloc_counts(p);
            b->rdispls = alloc_counts(p);
            if (!b->rcounts || !b->rdispls) {
                break;
            }
            for (i = 0; i < p; i++) {
                b->rcounts[i] = vcount(c, i);
            }
            b->rbytes = layout(b->rcounts, b->rdispls, p, root % 2) * es;
            b->rbuf = alloc_poisoned(b->rbytes);
            if (b->rbuf && in_place) {
                fill_block(b->rbuf + b->rdispls[root] * es, b->rcounts[root] * es, c->seed, root,
                           0);
            }
        }
        break;
    case DM_SCATTER:
        if (am_root) {
            b->sbytes = (size_t)p * B;
            b->sbuf = malloc(b->sbytes + GUARD);
            for (i = 0; b->sbuf && i < p; i++) {
                fill_block(b->sbuf + (size_t)i * B, B, c->seed, root, i);
            }
        }
        if (!in_place) {
            b->rbytes = B;
            b->rbuf = alloc_poisoned(B);
        }
        break;
    case DM_SCATTERV:
        if (am_root) {
            b->scounts = alloc_counts(p);
            b->sdispls = alloc_counts(p);
            if (!b->scounts || !b->sdispls) {
                break;
            }
            for (i = 0; i < p; i++) {
                b->scounts[i] = vcount(c, i);
            }
            b->sbytes = layout(b->scounts, b->sdispls, p, (root + 1) % 2) * es;
            b->sbuf = malloc(b->sbytes + GUARD);
            if (b->sbuf) {
                fill_vblocks(b->sbuf, b->sbytes, b->scounts, b->sdispls, p, es, c->seed, root, 1);
            }
        }
        b->rcount = vcount(c, rank);
        if (!in_place) {
            b->rbytes = b->rcount * es;
            b->rbuf = alloc_poisoned(b->rbytes);
        }
        break;
    case DM_ALLGATHER:
        if (!in_place) {
            b->sbytes = B;
            b->sbuf = malloc(B + GUARD);
            if (b->sbuf) {
                fill_block(b->sbuf, B, c->seed, rank, 0);
            }
        }
        b->rbytes = (size_t)p * B;
        b->rbuf = alloc_poisoned(b->rbytes);
        if (b->rbuf && in_place) {
            fill_block(b->rbuf + (size_t)rank * B, B, c->seed, rank, 0);
        }
        break;
    case DM_ALLGATHERV:
        b->scount = vcount(c, rank);
        b->rcounts = alloc_counts(p);
        b->rdispls = alloc_counts(p);
        if (!b->rcounts || !b->rdispls) {
            break;
        }
        for (i = 0; i < p; i++) {
            b->rcounts[i] = vcount(c, i);
        }
        b->rbytes = layout(b->rcounts, b->rdispls, p, rank % 2) * es;
        b->rbuf = alloc_poisoned(b->rbytes);
        if (!in_place) {
            b->sbytes = b->scount * es;
            b->sbuf = malloc(b->sbytes + GUARD);
            if (b->sbuf) {
                fill_block(b->sbuf, b->sbytes, c->seed, rank, 0);
            }
        } else if (b->rbuf) {
            fill_block(b->rbuf + b->rdispls[rank] * es, b->scount * es, c->seed, rank, 0);
        }
        break;
    case DM_ALLTOALL:
        b->rbytes = (size_t)p * B;
        b->rbuf = alloc_poisoned(b->rbytes);
        if (!in_place) {
            b->sbytes = (size_t)p * B;
            b->sbuf = malloc(b->sbytes + GUARD);
        }
        for (i = 0; i < p && b->rbuf; i++) {
            char *dst = in_place ? b->rbuf : b->sbuf;
            if (dst) {
                fill_block(dst + (size_t)i * B, B, c->seed, rank, i);
            }
        }
        break;
    case DM_ALLTOALLV:
        b->rcounts = alloc_counts(p);
        b->rdispls = alloc_counts(p);
        if (!b->rcounts || !b->rdispls) {
            break;
        }
        for (i = 0; i < p; i++) {
            b->rcounts[i] = acount(c, i, rank);
        }
        b->rbytes = layout(b->rcounts, b->rdispls, p, (rank + 1) % 2) * es;
        b->rbuf = alloc_poisoned(b->rbytes);
        if (in_place) {
            /* the blocks to send are in rbuf, the one for j where j's
             * block will land (the counts are symmetric) */
            if (b->rbuf) {
                fill_vblocks(b->rbuf, b->rbytes, b->rcounts, b->rdispls, p, es, c->seed, rank, 1);
            }
            break;
        }
        b->scounts = alloc_counts(p);
        b->sdispls = alloc_counts(p);
        if (!b->scounts || !b->sdispls) {
            break;
        }
        for (i = 0; i < p; i++) {
            b->scounts[i] = acount(c, rank, i);
        }
        b->sbytes = layout(b->scounts, b->sdispls, p, rank % 2) * es;
        b->sbuf = malloc(b->sbytes + GUARD);
        if (b->sbuf) {
            fill_vblocks(b->sbuf, b->sbytes, b->scounts, b->sdispls, p, es, c->seed, rank, 1);
        }
        break;
    default: return -1;
    }
    /* whatever the case expected to allocate must be there */
    if ((b->sbytes && !b->sbuf) || (b->rbytes && !b->rbuf)) {
        dm_free(b);
        return -1;
    }
    /* a zero count may come with NULL buffers: try that on odd seeds */
    if (c->count == 0 && (c->seed & 1) && !dm_is_v(c->op)) {
        free(b->sbuf);
        free(b->rbuf);
        b->sbuf = b->rbuf = NULL;
    }
    return 0;
}

int dm_start(const dm_case_t *c, int rank, ucoll_comm_t *comm, dm_bufs_t *b, ucoll_req_t **req)
{
    int am_root = dm_rooted(c->op) && rank == c->root;
    int in_place = c->in_place && (am_root || !dm_rooted(c->op));
    const void *sb = in_place ? UCOLL_IN_PLACE : b->sbuf;
    void *rb = b->rbuf;

    switch (c->op) {
    case DM_GATHER: return ucoll_igather(sb, rb, c->count, c->dt, c->root, comm, req);
    case DM_GATHERV:
        return ucoll_igatherv(sb, b->scount, rb, b->rcounts, b->rdispls, c->dt, c->root, comm, req);
    case DM_SCATTER:
        return ucoll_iscatter(b->sbuf, in_place ? UCOLL_IN_PLACE : rb, c->count, c->dt, c->root,
                              comm, req);
    case DM_SCATTERV:
        return ucoll_iscatterv(b->sbuf, b->scounts, b->sdispls, in_place ? UCOLL_IN_PLACE : rb,
                               b->rcount, c->dt, c->root, comm, req);
    case DM_ALLGATHER: return ucoll_iallgather(sb, rb, c->count, c->dt, comm, req);
    case DM_ALLGATHERV:
        return ucoll_iallgatherv(sb, b->scount, rb, b->rcounts, b->rdispls, c->dt, comm, req);
    case DM_ALLTOALL: return ucoll_ialltoall(sb, rb, c->count, c->dt, comm, req);
    case DM_ALLTOALLV:
        return ucoll_ialltoallv(sb, b->scounts, b->sdispls, rb, b->rcounts, b->rdispls, c->dt, comm,
                                req);
    default: return UCOLL_ERR_ARG;
    }
}

/* Compare got with want over n bytes; describe the first difference. */
static int compare(const char *what, const char *got, const char *want, size_t n, char *msg,
                   size_t len)
{
    for (size_t k = 0; k < n; k++) {
        if (got[k] != want[k]) {
            snprintf(msg, len, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, k, n,
                     (unsigned char)got[k], (unsigned char)want[k]);
            return -1;
        }
    }
    return 0;
}

int dm_check(const dm_case_t *c, int rank, const dm_bufs_t *b, char *msg, size_t len)
{
    int p = c->p, root = c->root, i, rc;
    size_t es = ucoll_dtype_size(c->dt);
    size_t B = c->count * es;
    int am_root = dm_rooted(c->op) && rank == root;
    int in_place = c->in_place && (am_root || !dm_rooted(c->op));
    char *want;

    if (b->rbuf == NULL) {
        if (c->op == DM_SCATTER && in_place && B) {
            /* the root keeps its block in sbuf: nothing may change there */
            want = malloc(b->sbytes);
            if (want == NULL) {
                snprintf(msg, len, "out of memory");
                return -1;
            }
            for (i = 0; i < p; i++) {
                fill_block(want + (size_t)i * B, B, c->seed, root, i);
            }
            rc = compare("in-place root sbuf", b->sbuf, want, b->sbytes, msg, len);
            free(want);
            return rc;
        }
        return 0;
    }
    want = malloc(b->rbytes + GUARD);
    if (want == NULL) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    memset(want, RPOISON, b->rbytes + GUARD);
    switch (c->op) {
    case DM_GATHER:
    case DM_ALLGATHER:
        for (i = 0; i < p; i++) {
            fill_block(want + (size_t)i * B, B, c->seed, i, 0);
        }
        break;
    case DM_GATHERV:
    case DM_ALLGATHERV:
        for (i = 0; i < p; i++) {
            fill_block(want + b->rdispls[i] * es, b->rcounts[i] * es, c->seed, i, 0);
        }
        break;
    case DM_SCATTER: fill_block(want, B, c->seed, root, rank); break;
    case DM_SCATTERV: fill_block(want, b->rcount * es, c->seed, root, rank); break;
    case DM_ALLTOALL:
        for (i = 0; i < p; i++) {
            fill_block(want + (size_t)i * B, B, c->seed, i, rank);
        }
        break;
    case DM_ALLTOALLV:
        if (in_place) {
            /* gaps keep what the rank put there */
            memset(want, SGAP, b->rbytes);
        }
        for (i = 0; i < p; i++) {
            fill_block(want + b->rdispls[i] * es, b->rcounts[i] * es, c->seed, i, rank);
        }
        break;
    default: break;
    }
    rc = compare("rbuf (with gaps and guard)", b->rbuf, want, b->rbytes + GUARD, msg, len);
    free(want);
    return rc;
}

void dm_describe(const dm_case_t *c, char *buf, size_t len)
{
    static const char *dtn[] = {"byte",     "int8",    "uint8",  "int16",  "uint16",
                                "int32",    "uint32",  "int64",  "uint64", "float16",
                                "bfloat16", "float32", "float64"};

    char root[32] = "";

    if (dm_rooted(c->op)) {
        snprintf(root, sizeof(root), " root=%d", c->root);
    }
    snprintf(buf, len, "%s p=%d%s count=%zu dtype=%s%s seed=%u", dm_op_names[c->op], c->p, root,
             c->count, (unsigned)c->dt < sizeof(dtn) / sizeof(dtn[0]) ? dtn[c->dt] : "?",
             c->in_place ? " in-place" : "", c->seed);
}

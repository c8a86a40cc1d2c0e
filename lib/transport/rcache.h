/*
 * Registration cache for the get rendezvous: a send buffer is registered
 * with UCP (ucp_mem_map) and its rkey packed once, then reused by every
 * later send from the same pages. Registering is what costs on RDMA
 * hardware (pinning, a call into the driver), and applications send from
 * the same buffers over and over.
 *
 * Entries cover whole pages and are kept in least-recently-used order, at
 * most UCOLL_RCACHE_ENTRIES of them; an entry in use by a send in flight is
 * never evicted. Memory that goes back to the system (munmap, a shrinking
 * brk, ...) invalidates the entries over it: UCX's memory hooks (libucm)
 * report those ranges, and a stale entry is dropped once no send uses it.
 * When the hooks cannot be installed, the cache registers per send.
 *
 * The hook may run on any thread (any free() can unmap memory), so the
 * entry list is under a mutex, and nothing that could unmap memory runs
 * while the mutex is held.
 */
#ifndef UCOLL_TRANSPORT_RCACHE_H
#define UCOLL_TRANSPORT_RCACHE_H

#include "list.h"

#include <stddef.h>
#include <stdint.h>

/* UCP handles, opaque here (ucp_context_h, ucp_mem_h) */
struct ucp_context;
struct ucp_mem;

#define UCOLL_RCACHE_ENTRIES 128

typedef struct ucoll_rcache ucoll_rcache_t;

typedef struct ucoll_reg {
    ucoll_list_t link;    /* cache's LRU list (most recent first) */
    uintptr_t start, end; /* registered range, page aligned */
    struct ucp_mem *memh;
    void *rkey_buf; /* packed rkey, rkey_len bytes */
    size_t rkey_len;
    int refs;   /* sends using it */
    int stale;  /* the range was unmapped: drop when unused */
    int cached; /* on the list (else a one-off registration) */
} ucoll_reg_t;

typedef struct {
    uint64_t hits, misses, evictions, invalidations;
} ucoll_rcache_stats_t;

/* A cache for registrations in ctx. Returns NULL only when out of memory. */
ucoll_rcache_t *ucoll__rcache_create(struct ucp_context *ctx);
/* Release every registration; entries still in use are released anyway
 * (the worker is going away). */
void ucoll__rcache_destroy(ucoll_rcache_t *rc);

/* A registration covering [addr, addr + len), with its packed rkey; NULL
 * when registration fails. Every get is matched by a put. */
ucoll_reg_t *ucoll__rcache_get(ucoll_rcache_t *rc, void *addr, size_t len);
void ucoll__rcache_put(ucoll_rcache_t *rc, ucoll_reg_t *reg);

void ucoll__rcache_stats(ucoll_rcache_t *rc, ucoll_rcache_stats_t *st);

#endif

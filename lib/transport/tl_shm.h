/*
 * Memory that the ranks of one node load and store directly, mapped by UCP.
 *
 * A rank maps a region with ucp_mem_map(UCP_MEM_MAP_ALLOCATE), so that UCX
 * allocates it from a shareable memory domain (sysv or posix), and packs
 * its remote key. A peer on the same node unpacks the key on its endpoint
 * to that rank and asks ucp_rkey_ptr for a local pointer to the region:
 * from then on both processes see the same bytes, with no message and no
 * UCX call. UCX 1.13.1 gives such pointers without UCP_FEATURE_RMA in the
 * context (checked on this machine: posix, sysv, "sm" and "shm"); where it
 * cannot (no shared-memory transport, e.g. UCX_TLS=tcp,self or cma alone,
 * or a peer on another node), attaching fails with UCOLL_ERR_UNSUPPORTED
 * and the caller does without.
 *
 * The memory stays valid in a peer that attached it until that peer
 * detaches, even after its owner unmapped it or died (the mapping is the
 * peer's own), so a late reader never faults.
 */
#ifndef UCOLL_TL_SHM_H
#define UCOLL_TL_SHM_H

#include "core.h"

typedef struct ucoll_tl_shm ucoll_tl_shm_t;

/* Whether this context has a shared-memory transport at all (no point in
 * mapping otherwise). 0 for a simulated context. */
int ucoll__tl_shm_capable(const ucoll_ctx_t *ctx);

/* Map at least size bytes of shareable memory and pack its remote key.
 * UCOLL_ERR_NOMEM / UCOLL_ERR_TRANSPORT (logged at debug level) when UCX
 * cannot. Freed by ucoll__tl_shm_unmap. */
int ucoll__tl_shm_map(ucoll_ctx_t *ctx, size_t size, ucoll_tl_shm_t **shm_p);
/* The region's address in this process. */
void *ucoll__tl_shm_addr(const ucoll_tl_shm_t *shm);
/* The packed remote key (*len_p bytes), valid until unmap. */
const void *ucoll__tl_shm_rkey(const ucoll_tl_shm_t *shm, size_t *len_p);
/* Release the key and unmap. */
void ucoll__tl_shm_unmap(ucoll_ctx_t *ctx, ucoll_tl_shm_t *shm);

/* A pointer in this process to the region that job rank `rank` mapped at
 * its address raddr, whose packed key is rkey (connects to rank if
 * needed). On success *ptr_p is the pointer and *key_p the handle that
 * ucoll__tl_shm_detach releases; UCOLL_ERR_UNSUPPORTED when UCX cannot
 * give a pointer to that peer's memory, or the endpoint's error. */
int ucoll__tl_shm_attach(ucoll_ctx_t *ctx, int rank, const void *rkey, uint64_t raddr, void **ptr_p,
                         void **key_p);
void ucoll__tl_shm_detach(void *key);

#endif

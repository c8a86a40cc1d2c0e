/*
 * Shared memory mapped by UCP (contract in tl_shm.h).
 */
#include "transport/tl_shm.h"
#include "transport/ucx_int.h"

struct ucoll_tl_shm {
    ucp_mem_h memh;
    void *addr;
    size_t len;
    void *rkey;
    size_t rkey_len;
};

int ucoll__tl_shm_capable(const ucoll_ctx_t *ctx)
{
    return ctx->tl != NULL && ctx->tl->have_shm;
}

int ucoll__tl_shm_map(ucoll_ctx_t *ctx, size_t size, ucoll_tl_shm_t **shm_p)
{
    ucp_mem_map_params_t mp = {0};
    ucp_mem_attr_t attr = {0};
    ucoll_tl_shm_t *shm;
    ucs_status_t st;

    shm = calloc(1, sizeof(*shm));
    if (shm == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    /* ALLOCATE: UCX takes the memory from the first memory domain of
     * UCX_ALLOC_PRIO that can (md:sysv, md:posix by default), which is what
     * makes it shareable; memory we allocated and registered would not be */
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.length = size;
    mp.flags = UCP_MEM_MAP_ALLOCATE;
    st = ucp_mem_map(ctx->tl->context, &mp, &shm->memh);
    if (st != UCS_OK) {
        ucoll_debug("ucp_mem_map of %zu bytes: %s", size, ucs_status_string(st));
        free(shm);
        return ucoll__tl_status(st) == UCOLL_ERR_NOMEM ? UCOLL_ERR_NOMEM : UCOLL_ERR_TRANSPORT;
    }
    attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    st = ucp_mem_query(shm->memh, &attr);
    if (st == UCS_OK) {
        shm->addr = attr.address;
        shm->len = attr.length;
        st = ucp_rkey_pack(ctx->tl->context, shm->memh, &shm->rkey, &shm->rkey_len);
    }
    if (st != UCS_OK || shm->len < size) {
        ucoll_debug("mapped region unusable: %s, %zu of %zu bytes", ucs_status_string(st), shm->len,
                    size);
        ucp_mem_unmap(ctx->tl->context, shm->memh);
        free(shm);
        return UCOLL_ERR_TRANSPORT;
    }
    *shm_p = shm;
    return UCOLL_OK;
}

void *ucoll__tl_shm_addr(const ucoll_tl_shm_t *shm)
{
    return shm->addr;
}

const void *ucoll__tl_shm_rkey(const ucoll_tl_shm_t *shm, size_t *len_p)
{
    *len_p = shm->rkey_len;
    return shm->rkey;
}

void ucoll__tl_shm_unmap(ucoll_ctx_t *ctx, ucoll_tl_shm_t *shm)
{
    if (shm == NULL) {
        return;
    }
    ucp_rkey_buffer_release(shm->rkey);
    ucp_mem_unmap(ctx->tl->context, shm->memh);
    free(shm);
}

int ucoll__tl_shm_attach(ucoll_ctx_t *ctx, int rank, const void *rkey, uint64_t raddr, void **ptr_p,
                         void **key_p)
{
    ucp_rkey_h key;
    ucp_ep_h ep;
    ucs_status_t st;
    void *ptr;
    int ret;

    ret = ucoll__tl_ep(ctx, rank, &ep);
    if (ret != UCOLL_OK) {
        return ret;
    }
    st = ucp_ep_rkey_unpack(ep, rkey, &key);
    if (st != UCS_OK) {
        ucoll_debug("rank %d: cannot unpack its shared-memory key: %s", rank,
                    ucs_status_string(st));
        return UCOLL_ERR_UNSUPPORTED;
    }
    /* UCS_ERR_UNREACHABLE: no memory domain of ours can map that key (the
     * peer's memory is not shareable with us); the key is still ours to
     * destroy */
    st = ucp_rkey_ptr(key, raddr, &ptr);
    if (st != UCS_OK) {
        ucoll_debug("rank %d: no pointer to its shared memory: %s", rank, ucs_status_string(st));
        ucp_rkey_destroy(key);
        return UCOLL_ERR_UNSUPPORTED;
    }
    *ptr_p = ptr;
    *key_p = key;
    return UCOLL_OK;
}

void ucoll__tl_shm_detach(void *key)
{
    if (key != NULL) {
        ucp_rkey_destroy(key);
    }
}

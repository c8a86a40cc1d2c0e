/*
 * Registration cache (see rcache.h).
 */
#include "transport/rcache.h"
#include "log.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <ucm/api/ucm.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#define RCACHE_EVENT_PRIORITY 1000

struct ucoll_rcache {
    ucp_context_h ctx;
    pthread_mutex_t lock;
    ucoll_list_t lru;   /* ucoll_reg_t, most recent first */
    int nentries;       /* on lru */
    int nstale;         /* of them, stale */
    int hooked;         /* unmap events arrive: caching is safe */
    uint64_t unmap_gen; /* bumped by every unmap event */
    uintptr_t page;
    ucoll_rcache_stats_t st;
};

static void reg_release(ucoll_rcache_t *rc, ucoll_reg_t *reg)
{
    ucp_rkey_buffer_release(reg->rkey_buf);
    ucp_mem_unmap(rc->ctx, reg->memh);
    free(reg);
}

static void release_list(ucoll_rcache_t *rc, ucoll_list_t *list)
{
    while (!ucoll_list_empty(list)) {
        ucoll_reg_t *reg = ucoll_list_first(list, ucoll_reg_t, link);

        ucoll_list_del(&reg->link);
        reg_release(rc, reg);
    }
}

/* Called by libucm before memory leaves the address space, on whatever
 * thread unmaps it: only marks entries (no allocation, no UCX calls). */
static void on_unmap(ucm_event_type_t type, ucm_event_t *event, void *arg)
{
    ucoll_rcache_t *rc = arg;
    uintptr_t start = (uintptr_t)event->vm_unmapped.address;
    uintptr_t end = start + event->vm_unmapped.size;
    ucoll_list_t *pos;

    (void)type;
    pthread_mutex_lock(&rc->lock);
    rc->unmap_gen++;
    ucoll_list_for_each(pos, &rc->lru)
    {
        ucoll_reg_t *reg = ucoll_container_of(pos, ucoll_reg_t, link);

        if (!reg->stale && reg->start < end && start < reg->end) {
            reg->stale = 1;
            rc->nstale++;
            rc->st.invalidations++;
        }
    }
    pthread_mutex_unlock(&rc->lock);
}

ucoll_rcache_t *ucoll__rcache_create(ucp_context_h ctx)
{
    ucoll_rcache_t *rc = calloc(1, sizeof(*rc));
    ucs_status_t st;

    if (rc == NULL) {
        return NULL;
    }
    rc->ctx = ctx;
    rc->page = (uintptr_t)sysconf(_SC_PAGESIZE);
    pthread_mutex_init(&rc->lock, NULL);
    ucoll_list_init(&rc->lru);
    st = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, RCACHE_EVENT_PRIORITY, on_unmap, rc);
    rc->hooked = st == UCS_OK;
    if (!rc->hooked) {
        ucoll_debug("no memory hooks (%s): registrations are not cached", ucs_status_string(st));
    }
    return rc;
}

void ucoll__rcache_destroy(ucoll_rcache_t *rc)
{
    if (rc == NULL) {
        return;
    }
    if (rc->hooked) {
        ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmap, rc);
    }
    ucoll_debug("registration cache: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
                " evictions, %" PRIu64 " invalidations",
                rc->st.hits, rc->st.misses, rc->st.evictions, rc->st.invalidations);
    release_list(rc, &rc->lru);
    pthread_mutex_destroy(&rc->lock);
    free(rc);
}

/* Unlink stale and surplus unused entries onto `out` (lock held). Walks the
 * list only when there is something to drop. */
static void trim_locked(ucoll_rcache_t *rc, ucoll_list_t *out)
{
    ucoll_list_t *pos, *tmp;

    if (rc->nstale == 0 && rc->nentries <= UCOLL_RCACHE_ENTRIES) {
        return;
    }
    ucoll_list_for_each_safe(pos, tmp, &rc->lru)
    {
        ucoll_reg_t *reg = ucoll_container_of(pos, ucoll_reg_t, link);

        if (reg->refs == 0 && reg->stale) {
            ucoll_list_del(&reg->link);
            ucoll_list_add_tail(out, &reg->link);
            rc->nentries--;
            rc->nstale--;
        }
    }
    /* least recently used first */
    for (pos = rc->lru.prev; rc->nentries > UCOLL_RCACHE_ENTRIES && pos != &rc->lru; pos = tmp) {
        ucoll_reg_t *reg = ucoll_container_of(pos, ucoll_reg_t, link);

        tmp = pos->prev;
        if (reg->refs == 0) {
            ucoll_list_del(&reg->link);
            ucoll_list_add_tail(out, &reg->link);
            rc->nentries--;
            rc->st.evictions++;
        }
    }
}

static ucoll_reg_t *reg_create(ucoll_rcache_t *rc, uintptr_t start, uintptr_t end)
{
    ucp_mem_map_params_t mp;
    ucoll_reg_t *reg = calloc(1, sizeof(*reg));

    if (reg == NULL) {
        return NULL;
    }
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = (void *)start;
    mp.length = end - start;
    if (ucp_mem_map(rc->ctx, &mp, &reg->memh) != UCS_OK) {
        free(reg);
        return NULL;
    }
    if (ucp_rkey_pack(rc->ctx, reg->memh, &reg->rkey_buf, &reg->rkey_len) != UCS_OK) {
        ucp_mem_unmap(rc->ctx, reg->memh);
        free(reg);
        return NULL;
    }
    reg->start = start;
    reg->end = end;
    ucoll_list_init(&reg->link);
    return reg;
}

ucoll_reg_t *ucoll__rcache_get(ucoll_rcache_t *rc, void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr, start = a & ~(rc->page - 1);
    uintptr_t end = (a + (len ? len : 1) + rc->page - 1) & ~(rc->page - 1);
    ucoll_list_t dead, *pos;
    ucoll_reg_t *reg = NULL;
    uint64_t gen;

    ucoll_list_init(&dead);
    pthread_mutex_lock(&rc->lock);
    ucoll_list_for_each(pos, &rc->lru)
    {
        ucoll_reg_t *r = ucoll_container_of(pos, ucoll_reg_t, link);

        if (!r->stale && r->start <= start && end <= r->end) {
            reg = r;
            break;
        }
    }
    if (reg) {
        reg->refs++;
        rc->st.hits++;
        ucoll_list_del(&reg->link);
        ucoll_list_add_head(&rc->lru, &reg->link);
    } else {
        rc->st.misses++;
    }
    trim_locked(rc, &dead);
    gen = rc->unmap_gen;
    pthread_mutex_unlock(&rc->lock);
    release_list(rc, &dead);
    if (reg) {
        return reg;
    }

    reg = reg_create(rc, start, end);
    if (reg == NULL) {
        return NULL;
    }
    reg->refs = 1;
    pthread_mutex_lock(&rc->lock);
    /* memory unmapped while registering might be part of this range: keep
     * such a registration for this send only */
    if (rc->hooked && rc->unmap_gen == gen) {
        reg->cached = 1;
        ucoll_list_add_head(&rc->lru, &reg->link);
        rc->nentries++;
    }
    pthread_mutex_unlock(&rc->lock);
    return reg;
}

void ucoll__rcache_put(ucoll_rcache_t *rc, ucoll_reg_t *reg)
{
    ucoll_list_t dead;

    if (!reg->cached) {
        reg_release(rc, reg);
        return;
    }
    ucoll_list_init(&dead);
    pthread_mutex_lock(&rc->lock);
    reg->refs--;
    trim_locked(rc, &dead);
    pthread_mutex_unlock(&rc->lock);
    release_list(rc, &dead);
}

void ucoll__rcache_stats(ucoll_rcache_t *rc, ucoll_rcache_stats_t *st)
{
    pthread_mutex_lock(&rc->lock);
    *st = rc->st;
    pthread_mutex_unlock(&rc->lock);
}

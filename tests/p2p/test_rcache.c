/*
 * Unit test of the registration cache (lib/transport/rcache.c) on a real UCP
 * context: hits for buffers inside a registered range, misses outside it,
 * invalidation when the memory is unmapped (through libucm's hooks), no
 * eviction of a registration in use, and the bound on cached entries.
 */
#include "transport/rcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include "tests/expect.h"

static ucoll_rcache_stats_t stats(ucoll_rcache_t *rc)
{
    ucoll_rcache_stats_t st;

    ucoll__rcache_stats(rc, &st);
    return st;
}

int main(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = 64 * page;
    ucp_params_t params = {0};
    ucp_context_h ctx;
    ucoll_rcache_t *rc;
    ucoll_reg_t *a, *b, *held, *regs[UCOLL_RCACHE_ENTRIES + 8];
    char *buf, *buf2;
    int i;

    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_RMA;
    if (ucp_init(&params, NULL, &ctx) != UCS_OK) {
        fprintf(stderr, "ucp_init failed\n");
        return 1;
    }
    rc = ucoll__rcache_create(ctx);
    EXPECT(rc != NULL);

    buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT(buf != MAP_FAILED);

    /* first use registers; a buffer inside the same pages hits */
    a = ucoll__rcache_get(rc, buf + 100, 10 * page);
    EXPECT(a != NULL && a->rkey_len > 0);
    EXPECT(stats(rc).misses == 1 && stats(rc).hits == 0);
    b = ucoll__rcache_get(rc, buf + page, page);
    EXPECT(b == a);
    EXPECT(stats(rc).hits == 1);
    ucoll__rcache_put(rc, b);
    ucoll__rcache_put(rc, a);
    /* beyond the registered range: a new registration */
    a = ucoll__rcache_get(rc, buf, 40 * page);
    EXPECT(a != NULL && stats(rc).misses == 2);
    ucoll__rcache_put(rc, a);

    /* unmapping invalidates; memory mapped again at the same place misses */
    EXPECT(munmap(buf, len) == 0);
    EXPECT(stats(rc).invalidations == 2);
    buf2 = mmap(buf, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    EXPECT(buf2 == buf);
    a = ucoll__rcache_get(rc, buf2, page);
    EXPECT(a != NULL && stats(rc).misses == 3 && stats(rc).hits == 1);

    /* a registration in use survives its invalidation until put */
    EXPECT(munmap(buf2, len) == 0);
    EXPECT(a->stale == 1);
    ucoll__rcache_put(rc, a);

    /* the number of cached entries is bounded; the one in use stays */
    buf = mmap(NULL, (UCOLL_RCACHE_ENTRIES + 9) * page, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT(buf != MAP_FAILED);
    held = ucoll__rcache_get(rc, buf, page);
    EXPECT(held != NULL);
    for (i = 0; i < UCOLL_RCACHE_ENTRIES + 8; i++) {
        regs[i] = ucoll__rcache_get(rc, buf + (size_t)(i + 1) * page, page);
        EXPECT(regs[i] != NULL);
        if (regs[i]) {
            ucoll__rcache_put(rc, regs[i]);
        }
    }
    EXPECT(stats(rc).evictions >= 8);
    b = ucoll__rcache_get(rc, buf, page);
    EXPECT(b == held);
    ucoll__rcache_put(rc, b);
    ucoll__rcache_put(rc, held);
    EXPECT(munmap(buf, (UCOLL_RCACHE_ENTRIES + 9) * page) == 0);

    ucoll__rcache_destroy(rc);
    ucp_cleanup(ctx);
    if (failures) {
        fprintf(stderr, "rcache: %d failures\n", failures);
        return 1;
    }
    printf("rcache: ok\n");
    return 0;
}

/*
 * A collective that cannot start on one rank only (out of memory there)
 * must not leave that rank's collective sequence behind the others': its
 * next calls must still pair with theirs.
 *   seq_skip       (3 ranks or more; run with UCOLL_TIMEOUT set, e.g. 3,
 *                   UCOLL_ALLREDUCE_ALGO=ring and UCOLL_SEGMENT_SIZE=64, so
 *                   that a 4 MiB allreduce's schedule needs megabytes)
 * Rank 1 caps its address space at what it maps now and calls the large
 * allreduce: UCOLL_ERR_NOMEM at once. The others wait for it until
 * UCOLL_TIMEOUT (at most 4 s: rank 1 waits 5 s for them). Then every rank
 * lifts the cap and runs an allreduce, a
 * bcast and a barrier, whose results must be right.
 * Prints "seq_skip: rank R ok".
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* Bytes of address space this process maps now. */
static size_t mapped_now(void)
{
    unsigned long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) {
            pages = 0;
        }
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

int main(void)
{
    size_t n = (4u << 20) / sizeof(float);
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    ucoll_ctx_t *ctx;
    ucoll_comm_t *w;
    int p, st;

    if (x == NULL || y == NULL || ucoll_init(&ctx) != UCOLL_OK) {
        fprintf(stderr, "seq_skip: init failed\n");
        return 1;
    }
    w = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(w);
    p = ucoll_comm_size(w);
    for (size_t i = 0; i < n; i++) {
        x[i] = 1.0f;
        y[i] = 0.0f;
    }
    CHECK(ucoll_barrier(w) == UCOLL_OK, "first barrier");
    if (rank == 1) {
        struct rlimit old, cap;

        getrlimit(RLIMIT_AS, &old);
        cap = old;
        cap.rlim_cur = mapped_now() + (1u << 16);
        CHECK(setrlimit(RLIMIT_AS, &cap) == 0, "setrlimit");
        st = ucoll_allreduce(x, y, n, UCOLL_FLOAT32, UCOLL_SUM, w);
        setrlimit(RLIMIT_AS, &old);
        CHECK(st == UCOLL_ERR_NOMEM, "the capped allreduce returned %d, not UCOLL_ERR_NOMEM", st);
        /* the others give up on it after UCOLL_TIMEOUT; meanwhile this
         * rank's next wait would time out too */
        sleep(5);
    } else {
        st = ucoll_allreduce(x, y, n, UCOLL_FLOAT32, UCOLL_SUM, w);
        CHECK(st == UCOLL_ERR_TIMEOUT, "the allreduce without rank 1 returned %d", st);
    }
    /* everyone again, in step: nonblocking calls polled with ucoll_test,
     * which has no timeout (the ranks come back from the failed call
     * seconds apart) */
    {
        long v = rank + 1, sum = 0, b = rank == 0 ? 4242 : -1;
        ucoll_req_t *r[3];

        CHECK(ucoll_iallreduce(&v, &sum, 1, UCOLL_INT64, UCOLL_SUM, w, &r[0]) == UCOLL_OK,
              "allreduce");
        CHECK(ucoll_ibcast(&b, 1, UCOLL_INT64, 0, w, &r[1]) == UCOLL_OK, "bcast");
        CHECK(ucoll_ibarrier(w, &r[2]) == UCOLL_OK, "barrier");
        for (int i = 0; i < 3 && failures == 0; i++) {
            int done = 0;
            for (int k = 0; !done && k < 3000000; k++) {
                CHECK(ucoll_test(r[i], &done, NULL) == UCOLL_OK, "call %d", i);
                if (!done) {
                    usleep(10);
                }
            }
            CHECK(done, "call %d never ended", i);
        }
        CHECK(sum == (long)p * (p + 1) / 2, "allreduce: %ld", sum);
        CHECK(b == 4242, "bcast: %ld", b);
    }
    ucoll_finalize(ctx);
    free(x);
    free(y);
    if (failures) {
        return 1;
    }
    printf("seq_skip: rank %d ok\n", rank);
    return 0;
}

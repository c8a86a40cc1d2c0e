/*
 * Two-level collectives on one machine: a second context over
 * ucoll_init_oob whose node ids the test chooses, so its ranks form
 * several nodes (shared memory inside each, as on real ones: the ranks do
 * share this machine).
 *   hier LAYOUT [K]
 *     block K    node = rank / K
 *     cyclic K   node = rank % K (nodes' ranks interleaved)
 *     lone       rank 0 alone, the others two by two
 * Barrier, bcast (every root), reduce (every root, in place at the root
 * too), allreduce (in place too) and allgather (in place too) over sizes
 * from 0 to past the shared-memory region and the eager limit, blocking,
 * then the same calls all in flight together, interleaved with calls on
 * the first context; the same on a split. Every result checked exactly.
 * Run it with UCOLL_<OP>_ALGO=hier to force the two-level rows, or without
 * to let the model choose.
 * Prints "hier: rank R of N ok" on success.
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int allgather_on_comm(void *arg, const void *in, void *out, size_t len)
{
    return ucoll_allgather(in, out, len, UCOLL_BYTE, arg) == UCOLL_OK ? 0 : -1;
}

/* The value rank r contributes at index i of call salt. */
static int32_t val(int r, size_t i, int salt)
{
    return (int32_t)((r + 1) * 7 + (int)(i % 13) * 3 + salt);
}

static int64_t sum_of(int n, size_t i, int salt)
{
    int64_t s = 0;

    for (int r = 0; r < n; r++) {
        s += val(r, i, salt);
    }
    return s;
}

static const size_t counts[] = {0, 1, 3, 1000, 70001};
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

static void blocking(ucoll_comm_t *comm, int salt)
{
    int me = ucoll_comm_rank(comm), n = ucoll_comm_size(comm);

    CHECK(ucoll_barrier(comm) == UCOLL_OK, "barrier");
    for (size_t c = 0; c < NCOUNTS; c++) {
        size_t cnt = counts[c];
        int32_t *x = malloc((cnt + 1) * sizeof(int32_t));
        int32_t *y = malloc((cnt + 1) * sizeof(int32_t));
        int32_t *all = malloc(((size_t)n * cnt + 1) * sizeof(int32_t));

        for (int root = 0; root < n; root++) {
            for (size_t i = 0; i < cnt; i++) {
                x[i] = me == root ? val(root, i, salt) : -1;
            }
            CHECK(ucoll_bcast(x, cnt, UCOLL_INT32, root, comm) == UCOLL_OK, "bcast");
            for (size_t i = 0; i < cnt; i++) {
                CHECK(x[i] == val(root, i, salt), "bcast root %d count %zu [%zu] %d", root, cnt,
                      i, x[i]);
            }
            for (int ip = 0; ip < 2; ip++) {
                for (size_t i = 0; i < cnt; i++) {
                    x[i] = val(me, i, salt);
                    y[i] = -5;
                }
                if (ip && me == root) {
                    CHECK(ucoll_reduce(UCOLL_IN_PLACE, x, cnt, UCOLL_INT32, UCOLL_SUM, root,
                                       comm) == UCOLL_OK,
                          "reduce in place");
                    memcpy(y, x, cnt * sizeof(int32_t));
                } else {
                    CHECK(ucoll_reduce(x, y, cnt, UCOLL_INT32, UCOLL_SUM, root, comm) ==
                              UCOLL_OK,
                          "reduce");
                }
                for (size_t i = 0; me == root && i < cnt; i++) {
                    CHECK(y[i] == (int32_t)sum_of(n, i, salt), "reduce root %d count %zu [%zu]",
                          root, cnt, i);
                }
            }
        }
        for (int ip = 0; ip < 2; ip++) {
            for (size_t i = 0; i < cnt; i++) {
                x[i] = val(me, i, salt);
            }
            if (ip) {
                CHECK(ucoll_allreduce(UCOLL_IN_PLACE, x, cnt, UCOLL_INT32, UCOLL_SUM, comm) ==
                          UCOLL_OK,
                      "allreduce in place");
                memcpy(y, x, cnt * sizeof(int32_t));
            } else {
                CHECK(ucoll_allreduce(x, y, cnt, UCOLL_INT32, UCOLL_SUM, comm) == UCOLL_OK,
                      "allreduce");
            }
            for (size_t i = 0; i < cnt; i++) {
                CHECK(y[i] == (int32_t)sum_of(n, i, salt), "allreduce count %zu [%zu]", cnt, i);
            }
            for (size_t i = 0; i < (size_t)n * cnt; i++) {
                all[i] = -9;
            }
            for (size_t i = 0; i < cnt; i++) {
                x[i] = val(me, i, salt);
                if (ip) {
                    all[(size_t)me * cnt + i] = x[i];
                }
            }
            CHECK(ucoll_allgather(ip ? UCOLL_IN_PLACE : x, all, cnt, UCOLL_INT32, comm) ==
                      UCOLL_OK,
                  "allgather");
            for (int r = 0; r < n; r++) {
                for (size_t i = 0; i < cnt; i++) {
                    CHECK(all[(size_t)r * cnt + i] == val(r, i, salt),
                          "allgather count %zu block %d [%zu]", cnt, r, i);
                }
            }
        }
        free(x);
        free(y);
        free(all);
    }
    CHECK(ucoll_barrier(comm) == UCOLL_OK, "barrier");
}

/* Every operation in flight at once (the two-level ones queue behind each
 * other), and a call on the other context in between. */
static void nonblocking(ucoll_comm_t *comm, ucoll_comm_t *other, int salt)
{
    int me = ucoll_comm_rank(comm), n = ucoll_comm_size(comm);
    size_t cnt = 1000;
    int32_t *b = malloc(cnt * sizeof(int32_t)), *x = malloc(cnt * sizeof(int32_t));
    int32_t *y = malloc(cnt * sizeof(int32_t)), *z = malloc(cnt * sizeof(int32_t));
    int32_t *all = malloc((size_t)n * cnt * sizeof(int32_t));
    int root = n - 1;
    int64_t o = 1, osum = 0;
    ucoll_req_t *req[6];

    for (size_t i = 0; i < cnt; i++) {
        b[i] = me == 1 ? val(1, i, salt) : 0;
        x[i] = val(me, i, salt);
    }
    CHECK(ucoll_ibcast(b, cnt, UCOLL_INT32, 1, comm, &req[0]) == UCOLL_OK, "ibcast");
    CHECK(ucoll_iallreduce(x, y, cnt, UCOLL_INT32, UCOLL_SUM, comm, &req[1]) == UCOLL_OK,
          "iallreduce");
    CHECK(ucoll_iallreduce(&o, &osum, 1, UCOLL_INT64, UCOLL_SUM, other, &req[2]) == UCOLL_OK,
          "iallreduce other");
    CHECK(ucoll_ireduce(x, z, cnt, UCOLL_INT32, UCOLL_SUM, root, comm, &req[3]) == UCOLL_OK,
          "ireduce");
    CHECK(ucoll_iallgather(x, all, cnt, UCOLL_INT32, comm, &req[4]) == UCOLL_OK, "iallgather");
    CHECK(ucoll_ibarrier(comm, &req[5]) == UCOLL_OK, "ibarrier");
    for (int i = 5; i >= 0; i--) {
        CHECK(ucoll_wait(req[i], NULL) == UCOLL_OK, "wait %d", i);
    }
    CHECK(osum == ucoll_comm_size(other), "other context");
    for (size_t i = 0; i < cnt; i++) {
        CHECK(b[i] == val(1, i, salt), "ibcast [%zu]", i);
        CHECK(y[i] == (int32_t)sum_of(n, i, salt), "iallreduce [%zu]", i);
        CHECK(me != root || z[i] == (int32_t)sum_of(n, i, salt), "ireduce [%zu]", i);
        for (int r = 0; r < n; r++) {
            CHECK(all[(size_t)r * cnt + i] == val(r, i, salt), "iallgather %d [%zu]", r, i);
        }
    }
    free(b);
    free(x);
    free(y);
    free(z);
    free(all);
}

/* "timeout" mode (run with UCOLL_TIMEOUT=2 and the two-level rows forced):
 * rank 0 joins a large allreduce only once the others have timed out; their
 * calls must be withdrawn, so its late part changes nothing in their
 * buffers after their calls returned. */
static void late_rank(ucoll_ctx_t *ctx, ucoll_comm_t *comm)
{
    int me = ucoll_comm_rank(comm);
    size_t cnt = 70001;
    int32_t *x = malloc(cnt * sizeof(int32_t)), *y = malloc(cnt * sizeof(int32_t));
    int st;

    for (size_t i = 0; i < cnt; i++) {
        x[i] = me + 1;
        y[i] = -1;
    }
    if (me == 0) {
        sleep(6); /* the others time out at 2 s, and withdraw within 2 more */
        st = ucoll_allreduce(x, y, cnt, UCOLL_INT32, UCOLL_SUM, comm);
        printf("hier: rank 0 came late: %s\n", ucoll_strerror(st));
        sleep(5); /* the others watch their buffers until about then */
    } else {
        int32_t *at_return = malloc(cnt * sizeof(int32_t));

        st = ucoll_allreduce(x, y, cnt, UCOLL_INT32, UCOLL_SUM, comm);
        CHECK(st == UCOLL_ERR_TIMEOUT, "allreduce without rank 0: %s", ucoll_strerror(st));
        /* a leader may hold its node's partial sum by now: what matters is
         * that nothing changes after the call returned */
        memcpy(at_return, y, cnt * sizeof(int32_t));
        for (int k = 0; k < 1200; k++) { /* 12 s: past rank 0's own call */
            ucoll_progress(ctx);
            usleep(10000);
        }
        for (size_t i = 0; i < cnt; i++) {
            if (y[i] != at_return[i]) {
                CHECK(0, "the timed-out allreduce wrote %d over %d into element %zu afterwards",
                      y[i], at_return[i], i);
                break;
            }
        }
        free(at_return);
    }
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    ucoll_ctx_t *a = NULL, *b = NULL;
    ucoll_comm_t *wa, *wb, *half = NULL;
    ucoll_oob_t oob = {0};
    const char *layout = argc > 1 ? argv[1] : "block";
    int k = argc > 2 ? atoi(argv[2]) : 2, n;

    if (ucoll_init(&a) != UCOLL_OK) {
        fprintf(stderr, "hier: ucoll_init failed\n");
        return 1;
    }
    wa = ucoll_comm_world(a);
    rank = ucoll_comm_rank(wa);
    n = ucoll_comm_size(wa);
    if (k < 1) {
        k = 1;
    }
    oob.rank = rank;
    oob.size = n;
    oob.allgather = allgather_on_comm;
    oob.arg = wa;
    if (strcmp(layout, "cyclic") == 0) {
        oob.node_id = rank % k;
    } else if (strcmp(layout, "lone") == 0) {
        oob.node_id = rank == 0 ? 0 : 1 + (rank - 1) / 2;
    } else {
        oob.node_id = rank / k;
    }
    if (ucoll_init_oob(&oob, &b) != UCOLL_OK) {
        fprintf(stderr, "hier: rank %d: ucoll_init_oob failed\n", rank);
        ucoll_finalize(a);
        return 1;
    }
    wb = ucoll_comm_world(b);
    if (argc > 3 && strcmp(argv[3], "timeout") == 0) {
        late_rank(b, wb);
        ucoll_finalize(b);
        ucoll_finalize(a);
        if (failures) {
            return 1;
        }
        printf("hier: rank %d of %d ok\n", rank, n);
        return 0;
    }
    for (int rep = 0; rep < 2; rep++) {
        blocking(wb, rep);
    }
    nonblocking(wb, wa, 3);
    /* a split: odd and even ranks, each still across nodes in most layouts */
    CHECK(ucoll_comm_split(wb, rank % 2, n - rank, &half) == UCOLL_OK, "split");
    if (half) {
        blocking(half, 5);
        if (ucoll_comm_size(half) > 1) {
            nonblocking(half, wa, 6);
        }
        CHECK(ucoll_comm_free(half) == UCOLL_OK, "comm_free");
    }
    blocking(wb, 7);
    CHECK(ucoll_finalize(b) == UCOLL_OK, "finalize b");
    CHECK(ucoll_finalize(a) == UCOLL_OK, "finalize a");
    if (failures) {
        fprintf(stderr, "hier: rank %d: %d failures\n", rank, failures);
        return 1;
    }
    printf("hier: rank %d of %d ok\n", rank, n);
    return 0;
}

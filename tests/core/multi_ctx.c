/*
 * Several contexts in one process, as a framework makes them (one per
 * process group):
 *   A: ucoll_init (PMIx, or env under a torchrun-style start)
 *   B: ucoll_init_oob, its allgather run on A's world
 *   C: ucoll_init again
 * Collectives and point to point on all three, interleaved (nonblocking ones
 * in flight on several contexts at once), each result checked; a split of B
 * and C. Then the OOB init's errors: a bad argument, a rank given twice, a
 * size that the ranks disagree on, an allgather that fails: each a clear
 * error on every rank, and A still works afterwards.
 *   multi_ctx
 * Prints "multi_ctx: rank R of N ok" on success.
 */
#include "ucoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1, failures;

#define CHECK(_cond)                                                                      \
    do {                                                                                  \
        if (!(_cond)) {                                                                   \
            fprintf(stderr, "rank %d FAIL %s:%d: %s\n", rank, __FILE__, __LINE__, #_cond); \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

typedef struct {
    ucoll_comm_t *comm; /* the allgather's communicator */
    int calls;
    int fail; /* return this instead of running the allgather */
} ag_arg_t;

static int allgather_on_comm(void *arg, const void *in, void *out, size_t len)
{
    ag_arg_t *a = arg;

    a->calls++;
    if (a->fail) {
        return a->fail;
    }
    return ucoll_allgather(in, out, len, UCOLL_BYTE, a->comm) == UCOLL_OK ? 0 : -1;
}

/* Allreduce, bcast and allgather on comm, with values that name the
 * context (salt), so a message crossing contexts shows as a wrong value. */
static void exercise(ucoll_comm_t *comm, int salt)
{
    int r = ucoll_comm_rank(comm), n = ucoll_comm_size(comm);
    long v = salt * 1000 + r, sum = 0, b = r == 0 ? salt : -1;
    long *all = malloc((size_t)n * sizeof(long));

    CHECK(ucoll_allreduce(&v, &sum, 1, UCOLL_INT64, UCOLL_SUM, comm) == UCOLL_OK);
    CHECK(sum == (long)salt * 1000 * n + (long)n * (n - 1) / 2);
    CHECK(ucoll_bcast(&b, 1, UCOLL_INT64, 0, comm) == UCOLL_OK);
    CHECK(b == salt);
    CHECK(ucoll_allgather(&v, all, 1, UCOLL_INT64, comm) == UCOLL_OK);
    for (int i = 0; i < n; i++) {
        CHECK(all[i] == salt * 1000 + i);
    }
    free(all);
}

int main(void)
{
    ucoll_ctx_t *a = NULL, *b = NULL, *c = NULL, *bad = NULL;
    ucoll_comm_t *wa, *wb, *wc, *sb = NULL, *sc = NULL;
    ag_arg_t arg = {0};
    ucoll_oob_t oob = {0};
    int n, st;

    if (ucoll_init(&a) != UCOLL_OK) {
        fprintf(stderr, "multi_ctx: ucoll_init failed\n");
        return 1;
    }
    wa = ucoll_comm_world(a);
    rank = ucoll_comm_rank(wa);
    n = ucoll_comm_size(wa);

    arg.comm = wa;
    oob.rank = rank;
    oob.size = n;
    oob.allgather = allgather_on_comm;
    oob.arg = &arg;
    oob.node_id = -1;
    st = ucoll_init_oob(&oob, &b);
    CHECK(st == UCOLL_OK);
    if (st != UCOLL_OK) {
        ucoll_finalize(a);
        return 1;
    }
    CHECK(arg.calls >= (n > 1 ? 2 : 1)); /* the hello, and the address fence when n > 1 */
    wb = ucoll_comm_world(b);
    CHECK(ucoll_comm_rank(wb) == rank && ucoll_comm_size(wb) == n);
    /* the OOB bootstrap found the nodes itself: one machine here */
    CHECK(ucoll_local_size(b) == ucoll_local_size(a) || ucoll_local_size(a) == 1);
    CHECK(ucoll_local_size(b) == n);
    CHECK(ucoll_local_rank(b) == rank);

    CHECK(ucoll_init(&c) == UCOLL_OK);
    if (c == NULL) {
        ucoll_finalize(b);
        ucoll_finalize(a);
        return 1;
    }
    wc = ucoll_comm_world(c);

    /* interleaved blocking collectives */
    for (int i = 0; i < 20; i++) {
        exercise(wa, 1 + i);
        exercise(wb, 2 + i);
        exercise(wc, 3 + i);
    }

    /* nonblocking ones in flight on the three contexts at once, same tags
     * and shapes, so only the context keeps them apart */
    {
        long x[3], y[3] = {0}, bc[3];
        ucoll_req_t *req[6];
        ucoll_comm_t *w[3] = {wa, wb, wc};

        for (int k = 0; k < 3; k++) {
            x[k] = (k + 1) * 100 + rank;
            bc[k] = rank == 0 ? (k + 1) * 7 : 0;
            CHECK(ucoll_iallreduce(&x[k], &y[k], 1, UCOLL_INT64, UCOLL_SUM, w[k], &req[k]) ==
                  UCOLL_OK);
            CHECK(ucoll_ibcast(&bc[k], 1, UCOLL_INT64, 0, w[k], &req[3 + k]) == UCOLL_OK);
        }
        /* the requests of each context progress only when it is waited on:
         * wait in the reverse order of posting */
        for (int k = 5; k >= 0; k--) {
            CHECK(ucoll_wait(req[k], NULL) == UCOLL_OK);
        }
        for (int k = 0; k < 3; k++) {
            CHECK(y[k] == (long)(k + 1) * 100 * n + (long)n * (n - 1) / 2);
            CHECK(bc[k] == (k + 1) * 7);
        }
    }

    /* point to point with the same tag on two contexts */
    if (n > 1) {
        int peer = rank ^ 1;

        if (peer < n) {
            int sa = 10 + rank, sb_ = 20 + rank, ra = -1, rb = -1;
            ucoll_req_t *rq[4];

            CHECK(ucoll_irecv(&rb, 1, UCOLL_INT32, peer, 5, wb, &rq[0]) == UCOLL_OK);
            CHECK(ucoll_irecv(&ra, 1, UCOLL_INT32, peer, 5, wa, &rq[1]) == UCOLL_OK);
            CHECK(ucoll_isend(&sa, 1, UCOLL_INT32, peer, 5, wa, &rq[2]) == UCOLL_OK);
            CHECK(ucoll_isend(&sb_, 1, UCOLL_INT32, peer, 5, wb, &rq[3]) == UCOLL_OK);
            CHECK(ucoll_waitall(4, rq) == UCOLL_OK);
            CHECK(ra == 10 + peer && rb == 20 + peer);
        }
    }

    /* splits of B and C, used interleaved */
    CHECK(ucoll_comm_split(wb, rank % 2, -rank, &sb) == UCOLL_OK);
    CHECK(ucoll_comm_split(wc, rank % 2, rank, &sc) == UCOLL_OK);
    if (sb && sc) {
        for (int i = 0; i < 5; i++) {
            exercise(sb, 40 + i);
            exercise(sc, 50 + i);
        }
        CHECK(ucoll_comm_free(sb) == UCOLL_OK);
        CHECK(ucoll_comm_free(sc) == UCOLL_OK);
    }

    /* OOB errors: bad arguments are local */
    {
        ucoll_oob_t o = oob;

        o.allgather = NULL;
        CHECK(ucoll_init_oob(&o, &bad) == UCOLL_ERR_ARG && bad == NULL);
        o = oob;
        o.rank = n;
        CHECK(ucoll_init_oob(&o, &bad) == UCOLL_ERR_ARG && bad == NULL);
        CHECK(ucoll_init_oob(NULL, &bad) == UCOLL_ERR_ARG);
        CHECK(ucoll_init_oob(&oob, NULL) == UCOLL_ERR_ARG);
    }
    if (n > 1) {
        ucoll_oob_t o = oob;

        /* rank 1 says it is rank 0: every rank fails the same way */
        o.rank = rank == 1 ? 0 : rank;
        CHECK(ucoll_init_oob(&o, &bad) == UCOLL_ERR_BOOTSTRAP && bad == NULL);
        /* the last rank disagrees on the size */
        o = oob;
        o.size = rank == n - 1 ? n + 1 : n;
        CHECK(ucoll_init_oob(&o, &bad) == UCOLL_ERR_BOOTSTRAP && bad == NULL);
        /* node ids from some ranks only */
        o = oob;
        o.node_id = rank == 0 ? 7 : -1;
        CHECK(ucoll_init_oob(&o, &bad) == UCOLL_ERR_BOOTSTRAP && bad == NULL);
    }
    {
        /* an allgather that fails (on every rank, as a failed collective
         * does) */
        arg.fail = 3;
        CHECK(ucoll_init_oob(&oob, &bad) == UCOLL_ERR_BOOTSTRAP && bad == NULL);
        arg.fail = 0;
    }
    {
        /* node ids given: each rank its own node */
        ucoll_oob_t o = oob;
        ucoll_ctx_t *d = NULL;

        o.node_id = 1000 + rank;
        CHECK(ucoll_init_oob(&o, &d) == UCOLL_OK);
        if (d) {
            CHECK(ucoll_local_size(d) == 1 && ucoll_local_rank(d) == 0);
            exercise(ucoll_comm_world(d), 60);
            CHECK(ucoll_finalize(d) == UCOLL_OK);
        }
    }
    /* A is still in step after all that */
    exercise(wa, 70);

    CHECK(ucoll_finalize(c) == UCOLL_OK);
    exercise(wb, 80);
    CHECK(ucoll_finalize(b) == UCOLL_OK); /* its last allgather runs on A */
    exercise(wa, 90);
    CHECK(ucoll_finalize(a) == UCOLL_OK);
    if (failures == 0) {
        printf("multi_ctx: rank %d of %d ok\n", rank, n);
    }
    return failures ? 1 : 0;
}

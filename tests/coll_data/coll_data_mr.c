/*
 * The data-movement collectives between real processes (public API only),
 * run under a launcher with the algorithms forced by UCOLL_<OP>_ALGO:
 *
 *   coll_data_mr [-L] [op ...]
 *
 * For each op (all when none is named): every root, counts {0, 1, 7, 3p+1,
 * 5000}, in place or not, two datatypes, each checked byte for byte against
 * the locally computed reference (dm_case.c); then all ops in flight at
 * once; then the argument checks that fail on every rank (so nothing is
 * left half-called) followed by a collective that must still match. -L
 * adds 64 MiB receive buffers per rank. Prints one summary line per rank;
 * exits 1 if any case failed on this rank.
 */
#include "dm_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, p;
static long ncases, nfail;

static void report(const dm_case_t *c, const char *what)
{
    char desc[160];

    dm_describe(c, desc, sizeof(desc));
    fprintf(stderr, "coll_data: rank %d: FAIL %s: %s\n", rank, desc, what);
    nfail++;
}

/* Run n cases at once; every rank takes part in every case. */
static void run(ucoll_comm_t *comm, const dm_case_t *cs, int n)
{
    dm_bufs_t b[16];
    ucoll_req_t *rq[16];
    char msg[256];
    int st;

    for (int i = 0; i < n; i++) {
        if (dm_setup(&cs[i], rank, &b[i]) != 0) {
            fprintf(stderr, "coll_data: rank %d: out of memory\n", rank);
            exit(2);
        }
        /* a start that fails locally leaves the others waiting for this
         * rank's messages: nothing sensible can follow */
        st = dm_start(&cs[i], rank, comm, &b[i], &rq[i]);
        if (st != UCOLL_OK) {
            report(&cs[i], ucoll_strerror(st));
            exit(1);
        }
    }
    for (int i = 0; i < n; i++) {
        st = ucoll_wait(rq[i], NULL);
        ncases++;
        if (st != UCOLL_OK) {
            report(&cs[i], ucoll_strerror(st));
        } else if (dm_check(&cs[i], rank, &b[i], msg, sizeof(msg)) != 0) {
            report(&cs[i], msg);
        }
        dm_free(&b[i]);
    }
}

static void sweep(ucoll_comm_t *comm, dm_op_t op, unsigned *seed)
{
    size_t counts[] = {0, 1, 7, (size_t)(3 * p + 1), 5000};
    const ucoll_dtype_t dts[] = {UCOLL_BYTE, UCOLL_INT32};
    int nroots = dm_rooted(op) ? p : 1;

    for (int root = 0; root < nroots; root++) {
        for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
            for (int ip = 0; ip < 2; ip++) {
                dm_case_t c = {.op = op,
                               .p = p,
                               .root = root,
                               .count = counts[ci],
                               .dt = dts[(ci + ip) % 2],
                               .in_place = ip,
                               .seed = (*seed)++};
                run(comm, &c, 1);
            }
        }
    }
}

static void check_errors(ucoll_comm_t *comm, unsigned *seed)
{
    char buf[16];
    size_t *cnt = calloc((size_t)p, sizeof(size_t)); /* zero counts: valid */
    ucoll_req_t *req;
    dm_case_t c = {.op = DM_ALLGATHER, .p = p, .count = 3, .dt = UCOLL_INT32, .seed = (*seed)++};

#define EXPECT_ARG(_call)                                                                    \
    do {                                                                                     \
        int _st = (_call);                                                                   \
        ncases++;                                                                            \
        if (_st != UCOLL_ERR_ARG) {                                                          \
            fprintf(stderr, "coll_data: rank %d: FAIL %s returned %d\n", rank, #_call, _st); \
            nfail++;                                                                         \
        }                                                                                    \
    } while (0)

    EXPECT_ARG(ucoll_gather(buf, buf, 1, UCOLL_BYTE, p, comm));
    EXPECT_ARG(ucoll_iscatter(buf, buf, 1, UCOLL_BYTE, -1, comm, &req));
    EXPECT_ARG(ucoll_allgather(buf, buf, 1, UCOLL_DTYPE_LAST, comm));
    EXPECT_ARG(ucoll_alltoall(buf, NULL, 1, UCOLL_BYTE, comm));
    EXPECT_ARG(ucoll_allgatherv(buf, 0, buf, NULL, cnt, UCOLL_BYTE, comm));
    EXPECT_ARG(ucoll_alltoallv(buf, cnt, NULL, buf, cnt, cnt, UCOLL_BYTE, comm));
    /* none of those may have consumed a sequence number: this must match */
    run(comm, &c, 1);
    free(cnt);
}

int main(int argc, char **argv)
{
    ucoll_ctx_t *ctx;
    ucoll_comm_t *comm;
    unsigned seed = 1;
    int only[DM_NOPS] = {0}, any = 0, big = 0, st;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-L") == 0) {
            big = 1;
            continue;
        }
        for (int op = 0; op < DM_NOPS; op++) {
            if (strcmp(argv[i], dm_op_names[op]) == 0) {
                only[op] = any = 1;
            }
        }
    }
    st = ucoll_init(&ctx);
    if (st != UCOLL_OK) {
        fprintf(stderr, "coll_data: ucoll_init: %s\n", ucoll_strerror(st));
        return 2;
    }
    comm = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(comm);
    p = ucoll_comm_size(comm);
    for (int op = 0; op < DM_NOPS; op++) {
        if (!any || only[op]) {
            sweep(comm, (dm_op_t)op, &seed);
        }
    }
    {
        dm_case_t cs[DM_NOPS];
        int n = 0;
        for (int op = 0; op < DM_NOPS; op++) {
            if (!any || only[op]) {
                cs[n] = (dm_case_t){.op = (dm_op_t)op,
                                    .p = p,
                                    .root = op % p,
                                    .count = 3 + op,
                                    .dt = UCOLL_INT16,
                                    .in_place = op % 2,
                                    .seed = seed++};
                n++;
            }
        }
        run(comm, cs, n);
    }
    if (big) {
        for (int op = 0; op < DM_NOPS; op++) {
            if (!any || only[op]) {
                dm_case_t c = {.op = (dm_op_t)op,
                               .p = p,
                               .root = p - 1,
                               .count = ((size_t)64 << 20) / (size_t)p / 8,
                               .dt = UCOLL_FLOAT64,
                               .in_place = op % 2,
                               .seed = seed++};
                run(comm, &c, 1);
            }
        }
    }
    check_errors(comm, &seed);
    printf("coll_data: rank %d of %d: %ld cases, %ld failed\n", rank, p, ncases, nfail);
    fflush(stdout);
    ucoll_finalize(ctx);
    return nfail ? 1 : 0;
}

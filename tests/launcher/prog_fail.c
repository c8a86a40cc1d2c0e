/*
 * prog_fail: a PMIx client that fails on purpose, for the launcher's error
 * handling tests. Uses only the PMIx client API.
 *
 *   prog_fail MODE [RANK]
 *
 * Rank RANK (default 1, or 0 in a one-rank job) does MODE; every other rank
 * waits in PMIx_Fence, which can only end when the launcher kills it:
 *   exit        exit with status 3
 *   segv        raise SIGSEGV
 *   abort       PMIx_Abort(5, "prog_fail abort from rank RANK")
 *   hang        sleep forever (the others wait in the fence: a hung job)
 *   nofinalize  exit 0 without PMIx_Finalize
 *   ok          no failure: everybody fences, finalizes and exits 0
 */
#include <pmix.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    pmix_value_t *val = NULL;
    pmix_proc_t me, wild;
    pmix_rank_t victim = 1;
    uint32_t size = 1;
    pmix_status_t rc;

    if (PMIX_SUCCESS != (rc = PMIx_Init(&me, NULL, 0))) {
        fprintf(stderr, "prog_fail: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIX_SUCCESS == PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val)) {
        size = val->data.uint32;
        PMIX_VALUE_RELEASE(val);
    }
    victim = argc > 2 ? (pmix_rank_t)atoi(argv[2]) : (size > 1 ? 1 : 0);

    if (me.rank == victim && 0 != strcmp(mode, "ok")) {
        printf("prog_fail rank=%u mode=%s\n", me.rank, mode);
        fflush(stdout);
        if (0 == strcmp(mode, "exit")) {
            exit(3);
        } else if (0 == strcmp(mode, "segv")) {
            raise(SIGSEGV);
        } else if (0 == strcmp(mode, "abort")) {
            char msg[64];

            snprintf(msg, sizeof(msg), "prog_fail abort from rank %u", me.rank);
            PMIx_Abort(5, msg, NULL, 0);
            sleep(60); /* PMIx_Abort may return; the launcher must kill us */
            return 9;
        } else if (0 == strcmp(mode, "hang")) {
            for (;;) {
                pause();
            }
        } else if (0 == strcmp(mode, "nofinalize")) {
            _exit(0);
        } else {
            fprintf(stderr, "prog_fail: unknown mode '%s'\n", mode);
            return 2;
        }
    }
    /* everybody else: a collective the victim never joins */
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    printf("prog_fail rank=%u done\n", me.rank);
    return 0;
}

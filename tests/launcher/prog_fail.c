/*
 * prog_fail: a PMIx client that fails on purpose, for the launcher's error
 * handling tests. Uses only the PMIx client API.
 *
 *   prog_fail [--sleep] MODE [RANK]
 *
 * Rank RANK (default 1, or 0 in a one-rank job) does MODE; every other rank
 * waits in PMIx_Fence, which can only end when the launcher kills it (or,
 * under ucollrun --enable-recovery, when the victim's death ends the fence
 * in an error), then finalizes and prints "prog_fail rank=R done":
 *   exit        exit with status 3
 *   segv        raise SIGSEGV
 *   kill        raise SIGKILL
 *   abort       PMIx_Abort(5, "prog_fail abort from rank RANK")
 *   hang        sleep forever (the others wait in the fence: a hung job)
 *   nofinalize  exit 0 without PMIx_Finalize
 *   ok          no failure: everybody fences, finalizes and exits 0
 *
 * --sleep: the other ranks sleep 1 s instead of fencing (for ucollrun
 * --enable-recovery, where they outlive the victim), and their line then
 * also gives PMIx_Finalize's status: "prog_fail rank=R done finalize=STATUS",
 * with " slow" added when the server did not acknowledge it.
 */
#include <pmix.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    bool sleep_instead = argc > 1 && 0 == strcmp(argv[1], "--sleep");
    const char *mode;
    pmix_value_t *val = NULL;
    pmix_proc_t me, wild;
    pmix_rank_t victim = 1;
    uint32_t size = 1;
    pmix_status_t rc;

    if (sleep_instead) {
        --argc;
        ++argv;
    }
    mode = argc > 1 ? argv[1] : "ok";
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
        } else if (0 == strcmp(mode, "kill")) {
            raise(SIGKILL);
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
    if (sleep_instead) {
        struct timespec t0, t1;
        long ms;

        sleep(1); /* outlive the victim, then leave normally */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = PMIx_Finalize(NULL, 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        /* PMIx_Finalize returns success also when the server never
         * acknowledges it, after waiting 2 s for the ack: say so */
        printf("prog_fail rank=%u done finalize=%s%s\n", me.rank, PMIx_Error_string(rc),
               ms >= 1000 ? " slow" : "");
        return 0;
    }
    /* everybody else: a collective the victim never joins */
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    printf("prog_fail rank=%u done\n", me.rank);
    return 0;
}

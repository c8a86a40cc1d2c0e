/*
 * The check of the multi-rank tests: a failed condition prints the rank,
 * the place and a message (the first CHECK_PRINT_MAX failures of a rank;
 * on stdout, flushed, so that a line arrives whole through the launcher)
 * and is counted in `failures`; every check counts in `checks`. The test
 * sets `rank` once it knows it, and its main returns non-zero when
 * failures > 0.
 *
 *   CHECK(cond, "format", args...)
 */
#ifndef UCOLL_TESTS_RANK_CHECK_H
#define UCOLL_TESTS_RANK_CHECK_H

#include <stdio.h>

#define CHECK_PRINT_MAX 20

static int rank = -1, failures;
static long checks __attribute__((unused));

#define CHECK(_cond, ...)                                                     \
    do {                                                                      \
        checks++;                                                             \
        if (!(_cond)) {                                                       \
            if (failures++ < CHECK_PRINT_MAX) {                               \
                printf("rank %d FAIL %s:%d: ", rank, __FILE__, __LINE__);     \
                printf(__VA_ARGS__);                                          \
                printf("\n");                                                 \
                fflush(stdout);                                               \
            }                                                                 \
        }                                                                     \
    } while (0)

#endif

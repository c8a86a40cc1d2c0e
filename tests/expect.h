/*
 * The check of the single-process unit tests: a failed condition is printed
 * with its place (and a message, EXPECT_MSG) and counted; main returns
 * non-zero when failures > 0.
 */
#ifndef UCOLL_TESTS_EXPECT_H
#define UCOLL_TESTS_EXPECT_H

#include <stdio.h>

static int failures;

#define EXPECT(_cond)                                                        \
    do {                                                                     \
        if (!(_cond)) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #_cond); \
            failures++;                                                      \
        }                                                                    \
    } while (0)

/* The same with a message: EXPECT_MSG(cond, "format", args...) */
#define EXPECT_MSG(_cond, ...)                                                \
    do {                                                                      \
        if (!(_cond)) {                                                       \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #_cond); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                           \
            failures++;                                                       \
        }                                                                     \
    } while (0)

#endif

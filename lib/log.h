/*
 * Level-checked logging. The level comes from UCOLL_LOG_LEVEL; the macros
 * test it before formatting anything, so a disabled debug line costs one
 * compare. Messages go to stderr prefixed with "ucoll[rank]".
 */
#ifndef UCOLL_LOG_H
#define UCOLL_LOG_H

#include <stdarg.h>

typedef enum {
    UCOLL_LOG_ERROR,
    UCOLL_LOG_WARN,
    UCOLL_LOG_INFO,
    UCOLL_LOG_DEBUG,
    UCOLL_LOG_TRACE
} ucoll_log_level_t;

/* Process-wide: the level is read once from the environment by the first
 * context and the rank prefix is that of the most recent context. */
extern int ucoll__log_level;
extern int ucoll__log_rank;

void ucoll__log(ucoll_log_level_t level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define UCOLL_LOG(_lvl, ...)                                     \
    do {                                                         \
        if ((int)(_lvl) <= ucoll__log_level)                     \
            ucoll__log((_lvl), __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

#define ucoll_error(...) UCOLL_LOG(UCOLL_LOG_ERROR, __VA_ARGS__)
#define ucoll_warn(...)  UCOLL_LOG(UCOLL_LOG_WARN, __VA_ARGS__)
#define ucoll_info(...)  UCOLL_LOG(UCOLL_LOG_INFO, __VA_ARGS__)
#define ucoll_debug(...) UCOLL_LOG(UCOLL_LOG_DEBUG, __VA_ARGS__)
#define ucoll_trace(...) UCOLL_LOG(UCOLL_LOG_TRACE, __VA_ARGS__)

#endif

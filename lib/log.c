#include "log.h"

#include <stdio.h>
#include <string.h>

int ucoll__log_level = UCOLL_LOG_WARN;
int ucoll__log_rank = -1;

static const char *level_names[] = {"error", "warn", "info", "debug", "trace"};

void ucoll__log(ucoll_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    const char *base = strrchr(file, '/');

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* one fprintf so that lines of different ranks do not interleave */
    if (level >= UCOLL_LOG_DEBUG) {
        fprintf(stderr, "ucoll[%d] %s %s:%d: %s\n", ucoll__log_rank, level_names[level],
                base ? base + 1 : file, line, msg);
    } else {
        fprintf(stderr, "ucoll[%d] %s: %s\n", ucoll__log_rank, level_names[level], msg);
    }
}

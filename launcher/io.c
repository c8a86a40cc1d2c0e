/*
 * Line-buffered forwarding of rank output.
 *
 * Each rank's stdout and stderr is a pipe. The launcher writes only whole
 * lines, each batch in one write(2) to its own fd, so lines of different
 * ranks never mix. A line longer than UCR_LINE_MAX is cut there, since a
 * rank that never prints a newline must not grow the launcher forever.
 */
#include "ucollrun.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define UCR_READ_CHUNK 65536
#define UCR_LINE_MAX   (1024 * 1024)

int ucr_write_all(int fd, const char *buf, size_t len)
{
    ssize_t n;

    while (len > 0) {
        n = write(fd, buf, len);
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/*
 * Write to the launcher's own fd. When its reader is gone (EPIPE, as in
 * "ucollrun ... | head"), the stream stops forwarding: ucr_stream_pump then
 * closes the rank's pipe, so the rank gets SIGPIPE like any writer into a
 * closed pipeline instead of running on with nobody listening.
 */
static void stream_write(ucr_stream_t *s, const char *buf, size_t len)
{
    if (!s->broken && 0 != ucr_write_all(s->out_fd, buf, len) && EPIPE == errno) {
        s->broken = true;
    }
}

void ucr_stream_init(ucr_stream_t *s, int fd, int out_fd, int rank, bool tag)
{
    memset(s, 0, sizeof(*s));
    s->fd = fd;
    s->out_fd = out_fd;
    s->rank = rank;
    s->tag = tag;
}

/*
 * Write lines [start, end) of s->buf (end is just past a newline) in one
 * write, each prefixed with the tag when asked for.
 */
static void emit(ucr_stream_t *s, const char *start, const char *end)
{
    char prefix[32], *out, *o;
    size_t plen, nlines = 0;

    if (!s->tag) {
        stream_write(s, start, (size_t)(end - start));
        return;
    }
    plen = (size_t)snprintf(prefix, sizeof(prefix), "[%d] ", s->rank);
    for (const char *p = start; p < end; ++p) {
        nlines += '\n' == *p;
    }
    out = malloc((size_t)(end - start) + nlines * plen);
    if (NULL == out) {
        stream_write(s, start, (size_t)(end - start));
        return;
    }
    o = out;
    for (const char *p = start; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));

        memcpy(o, prefix, plen);
        o += plen;
        memcpy(o, p, (size_t)(nl + 1 - p));
        o += nl + 1 - p;
        p = nl + 1;
    }
    stream_write(s, out, (size_t)(o - out));
    free(out);
}

/* Emit every complete line in the buffer and keep the rest. */
static void flush_lines(ucr_stream_t *s)
{
    char *last_nl = NULL;
    size_t done;

    for (size_t i = s->len; i > 0; --i) {
        if ('\n' == s->buf[i - 1]) {
            last_nl = &s->buf[i - 1];
            break;
        }
    }
    if (NULL == last_nl) {
        if (s->len < UCR_LINE_MAX) {
            return;
        }
        s->buf[s->len++] = '\n'; /* cut an overlong line; cap has room */
        last_nl = &s->buf[s->len - 1];
    }
    done = (size_t)(last_nl + 1 - s->buf);
    emit(s, s->buf, last_nl + 1);
    memmove(s->buf, s->buf + done, s->len - done);
    s->len -= done;
}

bool ucr_stream_pump(ucr_stream_t *s, int max_reads)
{
    ssize_t n;

    if (s->fd < 0) {
        return false;
    }
    while (max_reads-- > 0) {
        if (s->cap - s->len < UCR_READ_CHUNK + 1) {
            size_t cap = s->len + UCR_READ_CHUNK + 1;
            char *buf = realloc(s->buf, cap);

            if (NULL == buf) {
                /* out of memory: give up on this stream rather than the job */
                ucr_stream_close(s);
                return false;
            }
            s->buf = buf;
            s->cap = cap;
        }
        n = read(s->fd, s->buf + s->len, UCR_READ_CHUNK);
        if (n > 0) {
            s->len += (size_t)n;
            flush_lines(s);
            if (s->broken) {
                s->len = 0;
                ucr_stream_close(s);
                return false;
            }
            continue;
        }
        if (n < 0 && EINTR == errno) {
            continue;
        }
        if (n < 0 && (EAGAIN == errno || EWOULDBLOCK == errno)) {
            return true;
        }
        ucr_stream_close(s); /* EOF or a real error */
        return false;
    }
    return true; /* more to read, but let the others have a turn */
}

void ucr_stream_close(ucr_stream_t *s)
{
    if (s->len > 0 && !s->broken) {
        s->buf[s->len++] = '\n'; /* buffer always has a spare byte */
        emit(s, s->buf, s->buf + s->len);
        s->len = 0;
    }
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

/*
 * The env bootstrap: processes started the torchrun way (RANK, WORLD_SIZE,
 * MASTER_ADDR in the environment, no PMIx server) meet over TCP. Rank 0
 * listens on MASTER_ADDR:UCOLL_BOOTSTRAP_PORT (its own port: MASTER_PORT
 * belongs to torchrun's agent or to torch), every other rank connects and
 * says who it is, and rank 0 answers once all are there. The connections
 * stay open as a star, and the allgather of boot_oob.c runs over them:
 * every rank sends its part to rank 0, which answers with the whole table.
 *
 * Everything that can go wrong ends in UCOLL_ERR_BOOTSTRAP with a message
 * within UCOLL_BOOTSTRAP_TIMEOUT: rank 0 unreachable, a rank missing, a
 * wrong size or a duplicate rank (rank 0 tells the ranks that reached it),
 * something that is not a ucoll rank talking on the port (ignored by rank 0
 * with a warning; a rank that reaches a stranger instead of rank 0 fails).
 * Rank 0 closes its listening socket before it answers, so the next
 * context of the process can listen on the same port.
 */
#include "transport/bootstrap.h"
#include "core.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ENV_MAGIC   0x75636f6c6c656e76ULL /* "ucollenv" */
#define ENV_VERSION 1
#define ENV_FAILED  UINT64_MAX /* a length that says: the allgather failed */

enum { ENV_OK, ENV_BAD_SIZE, ENV_BAD_RANK, ENV_DUP_RANK, ENV_BAD_VERSION };

typedef struct {
    uint64_t magic;
    uint32_t version;
    int32_t rank;
    int32_t size;
    int32_t pad;
} env_hello_t;

typedef struct {
    uint64_t magic;
    int32_t status; /* ENV_* */
    int32_t pad;
} env_welcome_t;

typedef struct {
    int rank, size;
    int fd;   /* rank > 0: the connection to rank 0 */
    int *fds; /* rank 0: the connection to each rank (fds[0] unused) */
    char where[300];
} env_t;

static const char *env_status_str(int st)
{
    switch (st) {
    case ENV_BAD_SIZE: return "ranks disagree on WORLD_SIZE";
    case ENV_BAD_RANK: return "a RANK outside 0..WORLD_SIZE-1";
    case ENV_DUP_RANK: return "two processes with the same RANK";
    case ENV_BAD_VERSION: return "different versions of ucoll";
    default: return "unknown";
    }
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Move len bytes over fd, waiting at most until deadline (< 0: no limit).
 * 0, or -1 on an error or end of stream, -2 on the deadline. */
static int io_full(int fd, void *buf, size_t len, int out, double deadline)
{
    char *p = buf;

    while (len > 0) {
        struct pollfd pfd = {.fd = fd, .events = out ? POLLOUT : POLLIN};
        int ms = -1;
        ssize_t n;

        if (deadline >= 0) {
            double left = deadline - now();
            if (left <= 0) {
                return -2;
            }
            ms = (int)(left * 1e3) + 1;
        }
        n = poll(&pfd, 1, ms);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return -1;
        }
        if (n == 0) {
            continue; /* the deadline is checked above */
        }
        n = out ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, p, len, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int env_int(const char *name, int lo, int hi, int *out_p)
{
    const char *s = getenv(name); /* the launcher's contract, not a setting */
    char *end;
    long v;

    if (s == NULL || *s == '\0') {
        ucoll_error("env bootstrap: %s is not set", name);
        return UCOLL_ERR_BOOTSTRAP;
    }
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < lo || v > hi) {
        ucoll_error("env bootstrap: %s='%s' is not an integer in %d..%d", name, s, lo, hi);
        return UCOLL_ERR_BOOTSTRAP;
    }
    *out_p = (int)v;
    return UCOLL_OK;
}

int ucoll__boot_env_present(void)
{
    return getenv("RANK") && getenv("WORLD_SIZE") && getenv("MASTER_ADDR");
}

static void env_release(void *arg)
{
    env_t *e = arg;

    if (e->fd >= 0) {
        close(e->fd);
    }
    for (int r = 1; e->fds && r < e->size; r++) {
        if (e->fds[r] >= 0) {
            close(e->fds[r]);
        }
    }
    free(e->fds);
    free(e);
}

static void tune_socket(int fd)
{
    int one = 1;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- the allgather over the star --------------------------------------- */

static int env_allgather(void *arg, const void *in, void *out, size_t len)
{
    env_t *e = arg;
    uint64_t hdr = len, total = (uint64_t)len * (uint64_t)e->size;

    if (e->rank != 0) {
        if (io_full(e->fd, &hdr, sizeof(hdr), 1, -1) || io_full(e->fd, (void *)in, len, 1, -1) ||
            io_full(e->fd, &hdr, sizeof(hdr), 0, -1)) {
            ucoll_error("env bootstrap: lost the connection to rank 0 at %s", e->where);
            return -1;
        }
        if (hdr != total) {
            ucoll_error("env bootstrap: rank 0 reports a failed exchange (%s)",
                        hdr == ENV_FAILED ? "a rank failed or gave a different length"
                                          : "unexpected length");
            return -1;
        }
        if (io_full(e->fd, out, total, 0, -1)) {
            ucoll_error("env bootstrap: lost the connection to rank 0 at %s", e->where);
            return -1;
        }
        return 0;
    }

    int failed = 0;

    memcpy(out, in, len);
    for (int r = 1; r < e->size; r++) {
        if (e->fds[r] < 0) {
            failed = 1;
            continue;
        }
        if (io_full(e->fds[r], &hdr, sizeof(hdr), 0, -1)) {
            ucoll_error("env bootstrap: lost the connection to rank %d", r);
            close(e->fds[r]);
            e->fds[r] = -1;
            failed = 1;
            continue;
        }
        if (hdr != len) {
            ucoll_error("env bootstrap: rank %d contributed %llu bytes, expected %zu", r,
                        (unsigned long long)hdr, len);
            close(e->fds[r]); /* its stream is out of step now */
            e->fds[r] = -1;
            failed = 1;
            continue;
        }
        if (io_full(e->fds[r], (char *)out + (size_t)r * len, len, 0, -1)) {
            ucoll_error("env bootstrap: lost the connection to rank %d", r);
            close(e->fds[r]);
            e->fds[r] = -1;
            failed = 1;
        }
    }
    hdr = failed ? ENV_FAILED : total;
    for (int r = 1; r < e->size; r++) {
        if (e->fds[r] >= 0 && (io_full(e->fds[r], &hdr, sizeof(hdr), 1, -1) ||
                               (!failed && io_full(e->fds[r], out, total, 1, -1)))) {
            close(e->fds[r]);
            e->fds[r] = -1;
            failed = 1;
        }
    }
    return failed ? -1 : 0;
}

/* ---- rendezvous --------------------------------------------------------- */

static struct addrinfo *resolve(const char *host, int port, int passive)
{
    struct addrinfo hints = {0}, *res = NULL;
    char pstr[16];
    int rc;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    snprintf(pstr, sizeof(pstr), "%d", port);
    rc = getaddrinfo(host, pstr, &hints, &res);
    if (rc != 0) {
        ucoll_error("env bootstrap: cannot resolve MASTER_ADDR '%s': %s", host ? host : "",
                    gai_strerror(rc));
        return NULL;
    }
    return res;
}

static int listen_on(env_t *e, const char *host, int port)
{
    struct addrinfo *res = resolve(host, port, 0), *ai;
    int fd = -1, one = 1, err = 0;

    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            /* MASTER_ADDR may name this host from outside (NAT, a proxy):
             * then listen on every address of its family */
            struct sockaddr_storage any = {0};

            err = errno;
            any.ss_family = (sa_family_t)ai->ai_family;
            if (ai->ai_family == AF_INET) {
                ((struct sockaddr_in *)&any)->sin_port = htons((uint16_t)port);
            } else {
                ((struct sockaddr_in6 *)&any)->sin6_port = htons((uint16_t)port);
            }
            if (err != EADDRNOTAVAIL || bind(fd, (struct sockaddr *)&any, ai->ai_addrlen) != 0) {
                err = err == EADDRNOTAVAIL ? errno : err;
                close(fd);
                fd = -1;
                continue;
            }
        }
        if (listen(fd, 1024) != 0) {
            err = errno;
            close(fd);
            fd = -1;
            continue;
        }
        break;
    }
    if (res) {
        freeaddrinfo(res);
        if (fd < 0) {
            ucoll_error("env bootstrap: rank 0 cannot listen on %s: %s%s", e->where, strerror(err),
                        err == EADDRINUSE ? " (choose another port with UCOLL_BOOTSTRAP_PORT)"
                                          : "");
        }
    }
    return fd;
}

/* Rank 0: wait for every other rank's hello. */
static int rendezvous_root(env_t *e, const char *host, int port, double deadline)
{
    int lfd = listen_on(e, host, port), joined = 1, status = ENV_OK, r;
    env_welcome_t w = {.magic = ENV_MAGIC};

    if (lfd < 0) {
        return UCOLL_ERR_BOOTSTRAP;
    }
    while (joined < e->size && status == ENV_OK) {
        struct pollfd pfd = {.fd = lfd, .events = POLLIN};
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        char who[INET6_ADDRSTRLEN + 8] = "?";
        env_hello_t h;
        double left = deadline - now();
        int fd, rc;

        if (left <= 0) {
            break;
        }
        rc = poll(&pfd, 1, (int)(left * 1e3) + 1);
        if (rc <= 0) {
            continue;
        }
        fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
        if (fd < 0) {
            continue;
        }
        if (ss.ss_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, who, sizeof(who));
        } else if (ss.ss_family == AF_INET6) {
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, who, sizeof(who));
        }
        tune_socket(fd);
        /* a hello comes at once; a silent stranger costs at most 2 s */
        rc = io_full(fd, &h, sizeof(h), 0, UCOLL_MIN(deadline, now() + 2.0));
        if (rc != 0 || h.magic != ENV_MAGIC) {
            ucoll_warn("env bootstrap: a connection from %s to %s is not a ucoll rank: ignored",
                       who, e->where);
            close(fd);
            continue;
        }
        if (h.version != ENV_VERSION) {
            status = ENV_BAD_VERSION;
        } else if (h.size != e->size) {
            status = ENV_BAD_SIZE;
        } else if (h.rank <= 0 || h.rank >= e->size) {
            status = ENV_BAD_RANK;
        } else if (e->fds[h.rank] >= 0) {
            status = ENV_DUP_RANK;
        }
        if (status != ENV_OK) {
            ucoll_error("env bootstrap: the process at %s says it is rank %d of %d (version %u), "
                        "rank 0 is rank 0 of %d (version %d): %s",
                        who, (int)h.rank, (int)h.size, h.version, e->size, ENV_VERSION,
                        env_status_str(status));
            w.status = status;
            io_full(fd, &w, sizeof(w), 1, now() + 1.0);
            close(fd);
            break;
        }
        e->fds[h.rank] = fd;
        joined++;
    }
    close(lfd);
    if (status == ENV_OK && joined < e->size) {
        char missing[256] = "";
        size_t off = 0;

        for (r = 1; r < e->size && off + 16 < sizeof(missing); r++) {
            if (e->fds[r] < 0) {
                off += (size_t)snprintf(missing + off, sizeof(missing) - off, "%s%d",
                                        off ? "," : "", r);
            }
        }
        ucoll_error("env bootstrap: %d of %d ranks reached rank 0 at %s within "
                    "UCOLL_BOOTSTRAP_TIMEOUT; missing ranks %s",
                    joined, e->size, e->where, missing);
        status = -1;
    }
    w.status = status;
    for (r = 1; r < e->size; r++) {
        if (e->fds[r] >= 0 && io_full(e->fds[r], &w, sizeof(w), 1, deadline + 1.0) != 0) {
            ucoll_error("env bootstrap: lost rank %d before the answer", r);
            status = -1;
        }
    }
    return status == ENV_OK ? UCOLL_OK : UCOLL_ERR_BOOTSTRAP;
}

/* Connect to host:port within the deadline; refused connections (rank 0
 * not listening yet) are retried. */
static int connect_to(env_t *e, const char *host, int port, double deadline)
{
    double pause = 0.01;
    int last_err = 0;

    while (now() < deadline) {
        struct addrinfo *res = resolve(host, port, 0), *ai;

        if (res == NULL) {
            return -1;
        }
        for (ai = res; ai; ai = ai->ai_next) {
            int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
            struct pollfd pfd = {.events = POLLOUT};
            int err = 0;
            socklen_t el = sizeof(err);

            if (fd < 0) {
                last_err = errno;
                continue;
            }
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
                last_err = errno;
                close(fd);
                continue;
            }
            pfd.fd = fd;
            if (poll(&pfd, 1, (int)(UCOLL_MAX(deadline - now(), 0) * 1e3) + 1) == 1 &&
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0) {
                fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
                tune_socket(fd);
                freeaddrinfo(res);
                return fd;
            }
            last_err = err ? err : ETIMEDOUT;
            close(fd);
        }
        freeaddrinfo(res);
        usleep((useconds_t)(pause * 1e6));
        pause = UCOLL_MIN(pause * 2, 0.25);
    }
    ucoll_error("env bootstrap: cannot reach rank 0 at %s within UCOLL_BOOTSTRAP_TIMEOUT: %s "
                "(is rank 0 running, and MASTER_ADDR right?)",
                e->where, strerror(last_err ? last_err : ETIMEDOUT));
    return -1;
}

static int rendezvous_peer(env_t *e, const char *host, int port, double deadline)
{
    env_hello_t h = {.magic = ENV_MAGIC, .version = ENV_VERSION, .rank = e->rank,
                     .size = e->size};
    env_welcome_t w;
    int rc;

    e->fd = connect_to(e, host, port, deadline);
    if (e->fd < 0) {
        return UCOLL_ERR_BOOTSTRAP;
    }
    if (io_full(e->fd, &h, sizeof(h), 1, deadline) != 0) {
        ucoll_error("env bootstrap: cannot send to rank 0 at %s", e->where);
        return UCOLL_ERR_BOOTSTRAP;
    }
    rc = io_full(e->fd, &w, sizeof(w), 0, deadline + 1.0);
    if (rc == -2) {
        ucoll_error("env bootstrap: rank 0 at %s did not answer within UCOLL_BOOTSTRAP_TIMEOUT",
                    e->where);
        return UCOLL_ERR_BOOTSTRAP;
    }
    if (rc != 0) {
        ucoll_error("env bootstrap: %s closed the connection without an answer (rank 0 gave up, "
                    "or it is not a ucoll rank 0)",
                    e->where);
        return UCOLL_ERR_BOOTSTRAP;
    }
    if (w.magic != ENV_MAGIC) {
        ucoll_error("env bootstrap: %s answered with bytes that are not ucoll's: another service "
                    "on that port? Set UCOLL_BOOTSTRAP_PORT to a free port",
                    e->where);
        return UCOLL_ERR_BOOTSTRAP;
    }
    if (w.status != ENV_OK) {
        ucoll_error("env bootstrap: rank 0 at %s refused this rank (%d of %d): %s", e->where,
                    e->rank, e->size,
                    w.status > 0 ? env_status_str(w.status) : "not every rank arrived in time");
        return UCOLL_ERR_BOOTSTRAP;
    }
    return UCOLL_OK;
}

int ucoll__boot_env_init(const ucoll_config_t *cfg, ucoll_boot_t **boot_p)
{
    const char *host = getenv("MASTER_ADDR"); /* the launcher's contract, not a setting */
    double deadline = now() + cfg->boot_timeout;
    ucoll_oob_t oob = {0};
    env_t *e;
    int status, rank, size;

    if (host == NULL || *host == '\0') {
        ucoll_error("env bootstrap: MASTER_ADDR is not set");
        return UCOLL_ERR_BOOTSTRAP;
    }
    if ((status = env_int("WORLD_SIZE", 1, 1 << 24, &size)) != UCOLL_OK ||
        (status = env_int("RANK", 0, size - 1, &rank)) != UCOLL_OK) {
        return status;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL || (rank == 0 && (e->fds = malloc((size_t)size * sizeof(int))) == NULL)) {
        free(e);
        return UCOLL_ERR_NOMEM;
    }
    e->rank = rank;
    e->size = size;
    e->fd = -1;
    for (int r = 0; rank == 0 && r < size; r++) {
        e->fds[r] = -1;
    }
    snprintf(e->where, sizeof(e->where), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host,
             cfg->boot_port);
    if (size > 1) {
        status = rank == 0 ? rendezvous_root(e, host, cfg->boot_port, deadline)
                           : rendezvous_peer(e, host, cfg->boot_port, deadline);
        if (status != UCOLL_OK) {
            env_release(e);
            return status;
        }
    }
    oob.rank = rank;
    oob.size = size;
    oob.allgather = env_allgather;
    oob.arg = e;
    oob.node_id = -1;
    return ucoll__boot_oob_create(&oob, 1, env_release, boot_p);
}

/*
 * Alltoall, Bruck (any p; for small blocks).
 *
 * 1. Local rotation: tmp[j] = the block for rank (r + j) % p.
 * 2. For d = 1, 2, 4, ... < p: pack every tmp[j] whose index has bit d set,
 *    send the pack to (r + d) % p, receive the same set of positions from
 *    (r - d) % p and unpack it into those positions. A block at position j
 *    thereby travels j ranks forward in total, so at the end tmp[j] holds
 *    the block that rank (r - j) % p sent to r.
 * 3. Local inverse rotation: rbuf[(r - j) % p] = tmp[j].
 * The positions with bit d set come in runs of d consecutive blocks, which
 * are packed and unpacked one run per copy.
 *
 * In place needs no extra copy: step 1 reads rbuf before anything is
 * received, and only step 3 writes it.
 *
 * Cost (m = one pair's block): ⌈log2 p⌉α + (p/2)⌈log2 p⌉·mβ
 * + (2p + p⌈log2 p⌉)·m·λ for the rotations and packing.
 */
#include "alltoall.h"

static double alltoall_bruck_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                  const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    int lg = ucoll__ceil_log2(p);

    return lg * m->alpha + (p / 2.0) * lg * bytes * m->beta +
           (2.0 * p + (double)p * lg) * bytes * m->lambda;
}

/* Copy the runs of positions with bit d set between tmp and a packed
 * buffer: pack = 1 gathers them into buf, else scatters buf back. */
static int bruck_runs(ucoll_sched_t *s, char *tmp, char *buf, int d, int p, size_t bytes, int pack,
                      size_t *packed_p)
{
    size_t off = 0, len;
    int j, st;

    for (j = d; j < p; j += 2 * d) {
        len = (size_t)UCOLL_MIN(d, p - j) * bytes;
        st = pack ? ucoll__sched_copy(s, buf + off, tmp + (size_t)j * bytes, len)
                  : ucoll__sched_copy(s, tmp + (size_t)j * bytes, buf + off, len);
        if (st != UCOLL_OK) {
            return st;
        }
        off += len;
    }
    *packed_p = off;
    return UCOLL_OK;
}

static int alltoall_bruck_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t bytes = a->count * a->esize;
    const char *sb = a->sbuf;
    char *rb = a->rbuf;
    char *tmp, *sendb, *recvb;
    size_t half, len;
    int st, d, j;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, rb, sb, bytes);
    }
    half = (size_t)(p / 2 + 1) * bytes; /* no pack holds more than p/2 + 1 blocks */
    tmp = ucoll__sched_scratch(s, (size_t)p * bytes);
    sendb = ucoll__sched_scratch(s, half);
    recvb = ucoll__sched_scratch(s, half);
    if (tmp == NULL || sendb == NULL || recvb == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if ((st = ucoll__sched_copy(s, tmp, sb + (size_t)r * bytes, (size_t)(p - r) * bytes)) !=
            UCOLL_OK ||
        (st = ucoll__sched_copy_if(s, tmp + (size_t)(p - r) * bytes, sb, (size_t)r * bytes)) !=
            UCOLL_OK) {
        return st;
    }
    for (d = 1; d < p; d <<= 1) {
        if (d > 1 && (st = bruck_runs(s, tmp, recvb, d >> 1, p, bytes, 0, &len)) != UCOLL_OK) {
            return st;
        }
        if ((st = bruck_runs(s, tmp, sendb, d, p, bytes, 1, &len)) != UCOLL_OK ||
            (st = ucoll__sched_send(s, sendb, len, (r + d) % p)) != UCOLL_OK ||
            (st = ucoll__sched_recv(s, recvb, len, (r - d + p) % p)) != UCOLL_OK ||
            (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    if ((st = bruck_runs(s, tmp, recvb, d >> 1, p, bytes, 0, &len)) != UCOLL_OK) {
        return st;
    }
    for (j = 0; j < p; j++) {
        st = ucoll__sched_copy(s, rb + (size_t)((r - j + p) % p) * bytes, tmp + (size_t)j * bytes,
                               bytes);
        if (st != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__alltoall_bruck = {
    .id = "bruck",
    .desc = "Bruck log-step exchange with local rotations (small blocks)",
    .can_serve = NULL,
    .cost = alltoall_bruck_cost,
    .build = alltoall_bruck_build,
};

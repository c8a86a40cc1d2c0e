/*
 * Broadcast, scatter + ring allgather (van de Geijn).
 *
 * The message is cut into p blocks of bytes (block partition: the first
 * m mod p blocks one byte longer; blocks may be empty when m < p), block b
 * belonging to srank b. A binomial scatter gives every srank the blocks of
 * its subtree, [r, r + size(r)): the parent sends each child its subtree's
 * blocks, which are contiguous. Then p-1 ring steps: at step j srank r
 * sends block r-j to r+1 and receives block r-j-1 from r-1 (mod p).
 *
 * Cost: (⌈log2 p⌉ + p - 1)α + 2((p-1)/p)mβ.
 */
#include "bcast.h"

static double scag_ring_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                             const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (ucoll__ceil_log2(p) + p - 1) * m->alpha + 2.0 * (p - 1) / p * bytes * m->beta;
}

int ucoll__bcast_scatter_steps(ucoll_sched_t *s, char *buf, size_t bytes, int sr, int p2, int root,
                               int p)
{
    int span = ucoll__binomial_span(sr, p2);
    int st;

    if (sr != 0) {
        int n = ucoll__binomial_size(sr, p2);
        size_t lo = ucoll__block_offset(bytes, p2, sr);
        size_t hi = ucoll__block_offset(bytes, p2, sr + n);
        int parent = ucoll__rank_of(ucoll__binomial_parent(sr), root, p);
        if ((st = ucoll__sched_recv(s, buf + lo, hi - lo, parent)) ||
            (st = ucoll__sched_round(s))) {
            return st;
        }
    }
    for (int d = span / 2; d >= 1; d /= 2) {
        int c = sr + d;
        size_t lo, hi;
        if (c >= p2) {
            continue;
        }
        lo = ucoll__block_offset(bytes, p2, c);
        hi = ucoll__block_offset(bytes, p2, c + UCOLL_MIN(d, p2 - c));
        if ((st = ucoll__sched_send(s, buf + lo, hi - lo, ucoll__rank_of(c, root, p)))) {
            return st;
        }
    }
    return ucoll__sched_round(s);
}

static int scag_ring_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                           const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t bytes = a->count * a->esize;
    char *buf = a->rbuf;
    int next = ucoll__rank_of((sr + 1) % p, a->root, p);
    int prev = ucoll__rank_of((sr - 1 + p) % p, a->root, p);
    int st;

    if (bytes == 0 || p == 1) {
        return UCOLL_OK;
    }
    if ((st = ucoll__bcast_scatter_steps(s, buf, bytes, sr, p, a->root, p))) {
        return st;
    }
    for (int j = 0; j < p - 1; j++) {
        int sb = (sr - j + p) % p, rb = (sr - j - 1 + 2 * p) % p;
        size_t so = ucoll__block_offset(bytes, p, sb), ro = ucoll__block_offset(bytes, p, rb);
        if ((st = ucoll__sched_send(s, buf + so, ucoll__block_count(bytes, p, sb), next)) ||
            (st = ucoll__sched_recv(s, buf + ro, ucoll__block_count(bytes, p, rb), prev)) ||
            (st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__bcast_scag_ring = {
    .id = "scag_ring",
    .desc = "binomial scatter, then ring allgather",
    .cost = scag_ring_cost,
    .build = scag_ring_build,
};

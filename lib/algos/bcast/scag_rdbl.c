/*
 * Broadcast, scatter + recursive-doubling allgather.
 *
 * p2 = largest power of two <= p. The message is cut into p2 byte blocks;
 * sranks 0..p2-1 run a binomial scatter of them (as scag_ring), then a
 * recursive-doubling allgather: at distance d = 1, 2, ..., p2/2 srank r
 * swaps its d blocks [r & ~(d-1), +d) with srank r ^ d. When p is not a
 * power of two, srank r >= p2 then receives the whole message from srank
 * r - p2.
 *
 * Cost: 2·log2 p2·α + 2((p2-1)/p2)mβ, plus α + mβ when p != p2.
 */
#include "bcast.h"

static double scag_rdbl_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                             const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    int p2 = ucoll__floor_pow2(p);
    double t = 2 * ucoll__ceil_log2(p2) * m->alpha + 2.0 * (p2 - 1) / p2 * bytes * m->beta;

    return t + (p != p2 ? m->alpha + bytes * m->beta : 0);
}

typedef struct {
    int root, p;
} map_arg_t;

static int map_rank(int nr, const void *arg)
{
    const map_arg_t *ma = arg;

    return ucoll__rank_of(nr, ma->root, ma->p);
}

static int scag_rdbl_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                           const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, p2 = ucoll__floor_pow2(p);
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t bytes = a->count * a->esize;
    char *buf = a->rbuf;
    map_arg_t ma = {a->root, p};
    ucoll_rd_t rd = {p2, 0, sr};
    size_t *goff;
    int st;

    if (bytes == 0 || p == 1) {
        return UCOLL_OK;
    }
    if (sr >= p2) {
        return ucoll__sched_recv(s, buf, bytes, ucoll__rank_of(sr - p2, a->root, p));
    }
    goff = malloc(sizeof(size_t) * (size_t)(p2 + 1));
    if (goff == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (int g = 0; g <= p2; g++) {
        goff[g] = ucoll__block_offset(bytes, p2, g);
    }
    st = ucoll__bcast_scatter_steps(s, buf, bytes, sr, p2, a->root, p);
    if (st == UCOLL_OK) {
        st = ucoll__sched_rdoubling(s, &rd, buf, goff, 1, map_rank, &ma);
    }
    free(goff);
    if (st == UCOLL_OK && sr + p2 < p) {
        st = ucoll__sched_send(s, buf, bytes, ucoll__rank_of(sr + p2, a->root, p));
    }
    return st;
}

const ucoll_algo_t ucoll__bcast_scag_rdbl = {
    .id = "scag_rdbl",
    .desc = "binomial scatter, then recursive-doubling allgather",
    .cost = scag_rdbl_cost,
    .build = scag_rdbl_build,
};

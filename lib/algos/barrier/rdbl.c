/*
 * Barrier, recursive doubling.
 *
 * p2 = largest power of two <= p. The odd ranks below 2(p - p2) first
 * signal their even neighbour and sit out; the p2 survivors exchange with
 * newrank ^ 2^k for k = 0 .. log2 p2 - 1; then each even neighbour releases
 * the rank that sat out.
 *
 * Cost: log2 p·α for a power of two, 2α more otherwise.
 */
#include "barrier.h"

static double rdbl_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    int p2 = ucoll__floor_pow2(p);

    return (ucoll__ceil_log2(p2) + (p2 != p ? 2 : 0)) * m->alpha;
}

static int map_rank(int nr, const void *arg)
{
    return ucoll__rd_rank(arg, nr);
}

static int rdbl_build(ucoll_sched_t *s, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    ucoll_rd_t rd;
    int st;

    ucoll__rd_init(r, p, &rd);
    if (rd.newrank < 0) {
        if ((st = ucoll__sched_send(s, NULL, 0, r - 1)) || (st = ucoll__sched_round(s))) {
            return st;
        }
        return ucoll__sched_recv(s, NULL, 0, r - 1);
    }
    if (r < 2 * rd.rem &&
        ((st = ucoll__sched_recv(s, NULL, 0, r + 1)) || (st = ucoll__sched_round(s)))) {
        return st;
    }
    for (int d = 1; d < rd.p2; d *= 2) {
        int peer = map_rank(rd.newrank ^ d, &rd);
        if ((st = ucoll__sched_send(s, NULL, 0, peer)) ||
            (st = ucoll__sched_recv(s, NULL, 0, peer)) || (st = ucoll__sched_round(s))) {
            return st;
        }
    }
    if (r < 2 * rd.rem) {
        return ucoll__sched_send(s, NULL, 0, r + 1);
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__barrier_rdbl = {
    .id = "rdbl",
    .desc = "recursive doubling, extra ranks folded in and out",
    .cost = rdbl_cost,
    .build = rdbl_build,
};

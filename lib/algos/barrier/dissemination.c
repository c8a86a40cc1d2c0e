/*
 * Barrier, dissemination (Hensgen, Finkel, Manber).
 *
 * Round k = 0, 1, ...: send an empty message to (rank + 2^k) mod p and
 * receive one from (rank - 2^k) mod p. After round k a rank has heard,
 * directly or not, from the 2^(k+1) - 1 ranks before it, so ⌈log2 p⌉ rounds
 * cover everyone, for any p.
 *
 * Cost: ⌈log2 p⌉α.
 */
#include "barrier.h"

static double dissemination_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                 const ucoll_model_t *m)
{
    return ucoll__ceil_log2(p) * m->alpha;
}

static int dissemination_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                               const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int st;

    for (int d = 1; d < p; d *= 2) {
        if ((st = ucoll__sched_send(s, NULL, 0, (r + d) % p)) ||
            (st = ucoll__sched_recv(s, NULL, 0, (r - d + p) % p)) || (st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__barrier_dissemination = {
    .id = "dissemination",
    .desc = "round k: signal rank+2^k, hear from rank-2^k; any p",
    .cost = dissemination_cost,
    .build = dissemination_build,
};

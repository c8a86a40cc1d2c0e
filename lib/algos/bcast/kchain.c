/*
 * Broadcast, k parallel chains (k: UCOLL_RADIX, default ⌈√(p-1)⌉, the
 * kchain_opt choice).
 *
 * Sranks 1..p-1 are split into k chains of consecutive sranks, the first
 * (p-1) mod k chains one longer. The root sends to the chain leaders in
 * turn; every other rank receives from its predecessor in the chain and
 * sends to its successor.
 *
 * Cost: max over chains j (1-based) of (j + L_j - 1)(α + mβ)
 *       ≈ (k + (p-1)/k - 1)(α + mβ).
 */
#include "bcast.h"

#include <math.h>

static int nchains(const ucoll_algo_params_t *prm, int p)
{
    int k = prm->radix ? (int)prm->radix : (int)ceil(sqrt((double)(p - 1)));

    return UCOLL_MAX(1, UCOLL_MIN(k, p - 1));
}

static double kchain_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                          const ucoll_model_t *m)
{
    int k = nchains(prm, p), worst = 0;

    if (p == 1) {
        return 0;
    }
    for (int j = 0; j < k; j++) {
        int len = (p - 1) / k + (j < (p - 1) % k ? 1 : 0);
        worst = UCOLL_MAX(worst, j + len);
    }
    return worst * (m->alpha + (double)a->count * a->esize * m->beta);
}

static int kchain_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                        const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, k = nchains(prm, p);
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t bytes = a->count * a->esize;
    int q = (p - 1) / k, r = (p - 1) % k;
    int st;

    if (bytes == 0 || p == 1) {
        return UCOLL_OK;
    }
    if (sr == 0) {
        for (int j = 0; j < k; j++) {
            int lead = 1 + j * q + UCOLL_MIN(j, r);
            if ((st = ucoll__sched_send(s, a->rbuf, bytes, ucoll__rank_of(lead, a->root, p)))) {
                return st;
            }
        }
        return UCOLL_OK;
    }
    {
        /* chain j holds sranks [start_j, start_j + len_j) */
        int i = sr - 1, j, start, len;
        j = (i < r * (q + 1)) ? i / (q + 1) : r + (i - r * (q + 1)) / q;
        start = 1 + j * q + UCOLL_MIN(j, r);
        len = q + (j < r ? 1 : 0);
        if ((st = ucoll__sched_recv(s, a->rbuf, bytes,
                                    ucoll__rank_of(sr == start ? 0 : sr - 1, a->root, p))) ||
            (st = ucoll__sched_round(s))) {
            return st;
        }
        if (sr + 1 < start + len) {
            return ucoll__sched_send(s, a->rbuf, bytes, ucoll__rank_of(sr + 1, a->root, p));
        }
    }
    return UCOLL_OK;
}

static void kchain_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                          char *buf, size_t len)
{
    (void)a;
    ucoll__params_words(buf, len, 0, nchains(prm, p));
}

const ucoll_algo_t ucoll__bcast_kchain = {
    .id = "kchain",
    .desc = "k parallel chains fed by the root (UCOLL_RADIX, default sqrt(p-1))",
    .cost = kchain_cost,
    .build = kchain_build,
    .params = kchain_params,
};

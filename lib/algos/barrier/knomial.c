/*
 * Barrier, k-nomial dissemination (radix k: UCOLL_RADIX, else the model's
 * best).
 *
 * Round i = 0, 1, ...: with w = k^i, send an empty message to rank + j·w
 * and receive one from rank - j·w (mod p), j = 1 .. k-1, for each j·w < p.
 * After round i a rank has heard from the k^(i+1) - 1 ranks before it.
 *
 * Cost: ⌈log_k p⌉ rounds of k-1 messages: ⌈log_k p⌉(k-1)α when sends
 * serialise, ⌈log_k p⌉α when they overlap; the model takes them as
 * serialised except for the per-round wake (ucoll__model_fanout).
 */
#include "barrier.h"

static double knomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m);

static int knomial_radix(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    int k = prm->radix ? (int)prm->radix : ucoll__radix_choose(a, p, prm, knomial_cost);

    return UCOLL_MAX(2, UCOLL_MIN(k, UCOLL_MAX(p, 2)));
}

static double knomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    int k = knomial_radix(a, prm, p);

    return ucoll__ceil_logk(p, k) * ucoll__model_fanout(m, k - 1);
}

static int knomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int k = knomial_radix(a, prm, p);
    int st;

    for (long long w = 1; w < p; w *= k) {
        for (int j = 1; j < k && j * w < p; j++) {
            int d = (int)(j * w);
            if ((st = ucoll__sched_send(s, NULL, 0, (r + d) % p)) ||
                (st = ucoll__sched_recv(s, NULL, 0, (r - d + p) % p))) {
                return st;
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

static void knomial_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           char *buf, size_t len)
{
    ucoll__params_words(buf, len, 0, knomial_radix(a, prm, p));
}

const ucoll_algo_t ucoll__barrier_knomial = {
    .id = "knomial",
    .desc = "radix-k dissemination (UCOLL_RADIX, else the model's best)",
    .cost = knomial_cost,
    .build = knomial_build,
    .params = knomial_params,
};

/*
 * Allreduce, radix-k recursive exchange.
 *
 * k = prm->radix or the model's best (ucoll__radix_choose; at least 2, at
 * most p). p' = largest power of k <= p. Fold: rank r >= p' hands its vector to its proxy (r - p')
 * % p' and waits for the result; a proxy folds its extras in, in rank order. Then log_k p' steps:
 * at step s the k ranks that differ only in base-k digit s swap whole vectors, and each combines
 * the k vectors of the group in group order (v_0 op v_1 op ... op v_{k-1}), so all members hold the
 * same bits afterwards, floats included. Unfold: proxies send the result back.
 *
 * Cost: log_k p'·(k-1)(α + mβ + mγ), plus, when p' < p, with e = ⌈(p-p')/p'⌉
 * extras per proxy, 2e(α + mβ) + e·mγ.
 */
#include "allreduce.h"

static double knomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m);

static int knomial_radix(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    int k = prm->radix ? (int)prm->radix : ucoll__radix_choose(a, p, prm, knomial_cost);

    k = UCOLL_MAX(k, 2);
    return UCOLL_MIN(k, UCOLL_MAX(p, 2));
}

static int knomial_pow(int p, int k, int *steps)
{
    int pw = 1, d = 0;

    while ((long long)pw * k <= p) {
        pw *= k;
        d++;
    }
    *steps = d;
    return pw;
}

static double knomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    int k = knomial_radix(a, prm, p), d;
    int pp = knomial_pow(p, k, &d);
    int e = (p - pp + pp - 1) / pp;
    double t = d * (k - 1) * (m->alpha + bytes * (m->beta + m->gamma));

    return t + (e ? 2 * e * (m->alpha + bytes * m->beta) + e * bytes * m->gamma : 0);
}

static int knomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int k = knomial_radix(a, prm, p), d;
    int pp = knomial_pow(p, k, &d);
    size_t bytes = a->count * a->esize;
    char *acc = a->rbuf, *tmp;
    const char *mine = a->sbuf; /* this rank's value: the input until acc is written */
    int st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (r >= pp) {
        int proxy = (r - pp) % pp;
        if ((st = ucoll__sched_send(s, a->sbuf, bytes, proxy)) || (st = ucoll__sched_round(s))) {
            return st;
        }
        return ucoll__sched_recv(s, acc, bytes, proxy);
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, acc, a->sbuf, bytes);
    }
    /* k - 1 slots: one per peer of a step, and enough for the extras of a
     * proxy (at most k - 1 per proxy since p < k·p') */
    tmp = ucoll__sched_scratch(s, (size_t)(k - 1) * bytes);
    if (tmp == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (r + pp < p) {
        int ne = 0;
        for (int x = r + pp; x < p; x += pp, ne++) {
            if ((st = ucoll__sched_recv(s, tmp + (size_t)ne * bytes, bytes, x))) {
                return st;
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
        for (int j = 0; j < ne; j++) {
            if ((st = ucoll__sched_reduce(s, acc, mine, tmp + (size_t)j * bytes, a->count, a->dt,
                                          a->op))) {
                return st;
            }
            mine = acc;
        }
    }
    for (int pw = 1, step = 0; step < d; step++, pw *= k) {
        int c = (r / pw) % k, base = r - c * pw;
        const char *cur;

        /* peers in rotated order (c+1, c+2, ...): at any moment each rank
         * sends to a different peer, where in group order every rank would
         * start with member 0 and queue at its receive port (measured in
         * the simulator at p = 64, k = 4: 1.21x the formula, now 1.00) */
        for (int i = 1; i < k; i++) {
            int j = (c + i) % k;

            if ((st = ucoll__sched_send(s, mine, bytes, base + j * pw)) ||
                (st = ucoll__sched_recv(s, tmp + (size_t)(j < c ? j : j - 1) * bytes, bytes,
                                        base + j * pw))) {
                return st;
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
        /* v_0 op v_1 op ... in group order; the running value lives in acc
         * when this rank is v_0, else in v_0's slot until the last step,
         * and this rank's value (v_c) is read before acc is written; the
         * input is not copied into acc first: until a step or an extra's
         * value has written acc, this rank's value is the input */
        cur = (c == 0) ? mine : tmp;
        for (int j = 1; j < k; j++) {
            const char *v = (j == c) ? mine : tmp + (size_t)(j < c ? j : j - 1) * bytes;
            char *dst = (j == k - 1 || c == 0) ? acc : tmp;
            if ((st = ucoll__sched_reduce(s, dst, cur, v, a->count, a->dt, a->op))) {
                return st;
            }
            cur = dst;
        }
        mine = acc; /* the step's last reduction wrote it */
    }
    for (int x = r + pp; x < p; x += pp) {
        if ((st = ucoll__sched_send(s, acc, bytes, x))) {
            return st;
        }
    }
    return UCOLL_OK;
}

static void knomial_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           char *buf, size_t len)
{
    (void)a;
    ucoll__params_words(buf, len, 0, knomial_radix(a, prm, p));
}

const ucoll_algo_t ucoll__allreduce_knomial = {
    .id = "knomial",
    .desc = "radix-k recursive exchange, extra ranks folded in and out",
    .cost = knomial_cost,
    .build = knomial_build,
    .params = knomial_params,
};

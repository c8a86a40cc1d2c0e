/*
 * Allreduce, scatter-reduce-allgather with radix k (k: UCOLL_RADIX, else
 * the model's best, ucoll__radix_choose): Rabenseifner's algorithm with k-way instead of two-way
 * steps.
 *
 * Fold as in knomial: p' = the largest power of k <= p; rank r >= p' hands
 * its vector to its proxy (r - p') % p', which reduces its extras in (in
 * rank order) and sends them the result at the end. Among the p' = k^d
 * ranks the vector is cut into p' groups of elements (block partition).
 * Reduce-scatter, step s = 0..d-1 over base-k digit d-1-s (pw = k^(d-1-s)):
 * the range of groups a rank still works on is cut into k parts; the k
 * ranks that differ only in that digit each keep the part of their digit c,
 * send part j to member j and reduce the parts they receive into theirs.
 * After d steps rank r holds group r reduced over all ranks. Allgather:
 * the steps backwards, each member sending its part to the k-1 others.
 * Peers in rotated order (c+1, c+2, ...), so no receive port is queued on,
 * and parts are reduced in the order they arrive. Each group is reduced by
 * exactly one rank and copied to the others, so every rank holds the same
 * bits.
 *
 * Cost: 2d(k-1)α + (1 - 1/p')m(2β + γ), plus with e extras per proxy
 * 2e(α + mβ) + e·mγ.
 */
#include "allreduce.h"

static double sra_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                       const ucoll_model_t *m);

static int sra_radix(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    int k = prm->radix ? (int)prm->radix : ucoll__radix_choose(a, p, prm, sra_cost);

    k = UCOLL_MAX(k, 2);
    return UCOLL_MIN(k, UCOLL_MAX(p, 2));
}

static int sra_pow(int p, int k, int *d)
{
    int pw = 1;

    *d = 0;
    while ((long long)pw * k <= p) {
        pw *= k;
        (*d)++;
    }
    return pw;
}

static double sra_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                       const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize, part = bytes, t = 0;
    int k = sra_radix(a, prm, p), d, pp = sra_pow(p, k, &d);
    int e = (p - pp + pp - 1) / pp;

    if (p == 1) {
        return 0;
    }
    for (int step = 0; step < d; step++) {
        double msg, red;

        part /= k;
        msg = m->alpha + part * m->beta;
        red = part * m->gamma;
        /* reduce-scatter: k-1 parts in, then their reductions (a rank's
         * local work and its receives do not overlap in the model);
         * allgather: k-1 parts out */
        t += (k - 1) * (msg + red) + (k - 1) * msg;
    }
    return t + (e ? 2 * e * (m->alpha + bytes * m->beta) + e * bytes * m->gamma : 0);
}

static int sra_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                     const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int k = sra_radix(a, prm, p), d, pp = sra_pow(p, k, &d);
    size_t bytes = a->count * a->esize, es = a->esize, *goff = NULL;
    char *acc = a->rbuf, *tmp;
    const char *src = a->sbuf;
    int st = UCOLL_OK, ne = 0;

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
    /* k - 1 slots: the parts of a step (at most a k-th of the vector, one
     * group more), and the extras of a proxy (at most k - 1) */
    tmp = ucoll__sched_scratch(s, (size_t)(k - 1) * bytes);
    if (tmp == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (int x = r + pp; x < p; x += pp, ne++) {
        if ((st = ucoll__sched_recv(s, tmp + (size_t)ne * bytes, bytes, x))) {
            return st;
        }
    }
    if (ne > 0) {
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
        for (int j = 0; j < ne; j++) {
            if ((st = ucoll__sched_reduce(s, acc, j == 0 ? a->sbuf : acc, tmp + (size_t)j * bytes,
                                          a->count, a->dt, a->op))) {
                return st;
            }
        }
        src = acc;
    }
    goff = malloc(sizeof(size_t) * (size_t)(pp + 1));
    if (goff == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (int g = 0; g <= pp; g++) {
        goff[g] = ucoll__block_offset(a->count, pp, g) * es;
    }
    /* reduce-scatter: the range [lo, lo + len) of groups shrinks k-fold */
    {
        int lo = 0, len = pp;

        for (int step = 0, pw = pp / k; step < d; step++, pw /= k) {
            int c = (r / pw) % k, base = r - c * pw, part = len / k;
            size_t mine = goff[lo + (c + 1) * part] - goff[lo + c * part];

            for (int i = 1; i < k; i++) {
                int j = (c + i) % k;
                size_t off = goff[lo + j * part], n = goff[lo + (j + 1) * part] - off;

                if ((st = ucoll__sched_send(s, src + off, n, base + j * pw)) ||
                    (st = ucoll__sched_recv(s, tmp + (size_t)(i - 1) * bytes, mine,
                                            base + j * pw))) {
                    goto out;
                }
            }
            if ((st = ucoll__sched_round(s))) {
                goto out;
            }
            /* mine = src_c op the members' parts, in the order they arrive
             * (c+1, c+2, ...): each reduction overlaps the next receive.
             * One rank reduces each group, so every rank still ends with
             * the same bits. */
            {
                size_t off = goff[lo + c * part];
                const char *cur = src + off;

                for (int i = 1; i < k; i++) {
                    if ((st = ucoll__sched_reduce(s, acc + off, cur, tmp + (size_t)(i - 1) * bytes,
                                                  mine / es, a->dt, a->op))) {
                        goto out;
                    }
                    cur = acc + off;
                }
            }
            src = acc;
            lo += c * part;
            len = part;
        }
    }
    /* allgather: the steps backwards */
    {
        int lo = r, len = 1;

        for (int step = d - 1, pw = 1; step >= 0; step--, pw *= k) {
            int c = (r / pw) % k, base = r - c * pw;
            int glo = lo - c * len; /* the range of this step, k parts of len */
            size_t off = goff[lo], n = goff[lo + len] - off;

            for (int i = 1; i < k; i++) {
                int j = (c + i) % k;
                size_t joff = goff[glo + j * len], jn = goff[glo + (j + 1) * len] - joff;

                if ((st = ucoll__sched_send(s, acc + off, n, base + j * pw)) ||
                    (st = ucoll__sched_recv(s, acc + joff, jn, base + j * pw))) {
                    goto out;
                }
            }
            if ((st = ucoll__sched_round(s))) {
                goto out;
            }
            lo = glo;
            len *= k;
        }
    }
    for (int x = r + pp; x < p; x += pp) {
        if ((st = ucoll__sched_send(s, acc, bytes, x))) {
            goto out;
        }
    }
out:
    free(goff);
    return st;
}

static void sra_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm, char *buf,
                       size_t len)
{
    (void)a;
    ucoll__params_words(buf, len, 0, sra_radix(a, prm, p));
}

const ucoll_algo_t ucoll__allreduce_sra_knomial = {
    .id = "sra_knomial",
    .desc =
        "radix-k reduce-scatter then allgather (UCOLL_RADIX, else the model's best), extras folded",
    .cost = sra_cost,
    .build = sra_build,
    .params = sra_params,
};

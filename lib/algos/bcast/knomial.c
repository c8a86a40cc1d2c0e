/*
 * Broadcast, k-nomial tree (radix k: UCOLL_RADIX, else the model's best,
 * ucoll__radix_choose).
 *
 * Over sranks in base k: the parent clears the lowest non-zero digit; a
 * rank sends to the children that set one digit 1..k-1 below that digit,
 * largest subtree first. k = 2 is the binomial tree.
 *
 * Cost: (k-1)⌈log_k p⌉(α + mβ) for p a power of k (one wake per round:
 * ucoll__model_fanout); the top round has only ⌈p / k^(d-1)⌉ - 1 children.
 */
#include "bcast.h"

static double knomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m);

static int radix(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm)
{
    return ucoll__radix_choose(a, p, prm, knomial_cost);
}

static double knomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    int k = radix(a, p, prm), d = ucoll__ceil_logk(p, k);
    double mb = (double)a->count * a->esize * m->beta, t = 0;
    long stride = 1;

    /* the root's rounds, lowest digit last: k - 1 children below every
     * digit but the top one, where only the sranks below p exist
     * (⌈p / k^(d-1)⌉ - 1 of them: one at p = 2) */
    for (int j = 0; j < d - 1; j++) {
        stride *= k;
    }
    for (int j = d - 1; j >= 0; j--, stride /= k) {
        int c = j == d - 1 ? (int)((p + stride - 1) / stride) - 1 : k - 1;

        t += ucoll__model_fanout(m, c) + c * mb;
    }
    return t;
}

static int knomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, k = radix(a, p, prm);
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t bytes = a->count * a->esize;
    int *children, n, st = UCOLL_OK;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    children = malloc(sizeof(int) * (size_t)((k - 1) * ucoll__ceil_logk(p, k) + 1));
    if (children == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    n = ucoll__knomial_children(sr, p, k, children, NULL);
    if (sr != 0) {
        int parent = ucoll__rank_of(ucoll__knomial_parent(sr, p, k), a->root, p);
        if ((st = ucoll__sched_recv(s, a->rbuf, bytes, parent)) || (st = ucoll__sched_round(s))) {
            goto out;
        }
    }
    for (int i = n - 1; i >= 0; i--) {
        if ((st = ucoll__sched_send(s, a->rbuf, bytes, ucoll__rank_of(children[i], a->root, p)))) {
            goto out;
        }
    }
out:
    free(children);
    return st;
}

static void knomial_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           char *buf, size_t len)
{
    (void)a;
    (void)p;
    ucoll__params_words(buf, len, 0, radix(a, p, prm));
}

const ucoll_algo_t ucoll__bcast_knomial = {
    .id = "knomial",
    .desc = "k-nomial tree (UCOLL_RADIX, else the model's best)",
    .cost = knomial_cost,
    .build = knomial_build,
    .params = knomial_params,
};

/*
 * Barrier, k-nomial tree (radix k: UCOLL_RADIX, else the model's best):
 * fan-in to rank 0 along the k-nomial tree, then fan-out along it. Every
 * rank waits for all its children in one round, signals its parent, waits
 * for the release and releases its children (largest subtree first).
 * Fewer, fuller rounds than the binomial tree: each round of k-1 messages
 * costs one wake-up when ranks outnumber processing units.
 *
 * Cost: 2⌈log_k p⌉ rounds of k-1 messages at the root:
 * 2⌈log_k p⌉·fanout(k-1) (= 2⌈log_k p⌉(k-1)α when not oversubscribed).
 */
#include "barrier.h"

static double knomial_tree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                const ucoll_model_t *m);

static int radix(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    int k = ucoll__radix_choose(a, p, prm, knomial_tree_cost);

    return UCOLL_MIN(k, UCOLL_MAX(p, 2));
}

static double knomial_tree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                const ucoll_model_t *m)
{
    int k = radix(a, prm, p);

    if (p == 1) {
        return 0;
    }
    return 2 * ucoll__ceil_logk(p, k) * ucoll__model_fanout(m, k - 1);
}

static int knomial_tree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                              const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank, k = radix(a, prm, p);
    int parent = ucoll__knomial_parent(r, p, k), n, st = UCOLL_OK;
    int *kids;

    if (p == 1) {
        return UCOLL_OK;
    }
    kids = malloc(sizeof(int) * (size_t)((k - 1) * ucoll__ceil_logk(p, k) + 1));
    if (kids == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    n = ucoll__knomial_children(r, p, k, kids, NULL);
    for (int i = 0; i < n; i++) {
        if ((st = ucoll__sched_recv(s, NULL, 0, kids[i]))) {
            goto out;
        }
    }
    if (parent >= 0) {
        if ((st = ucoll__sched_round(s)) || (st = ucoll__sched_send(s, NULL, 0, parent)) ||
            (st = ucoll__sched_round(s)) || (st = ucoll__sched_recv(s, NULL, 0, parent))) {
            goto out;
        }
    }
    if ((st = ucoll__sched_round(s))) {
        goto out;
    }
    for (int i = n - 1; i >= 0; i--) {
        if ((st = ucoll__sched_send(s, NULL, 0, kids[i]))) {
            goto out;
        }
    }
out:
    free(kids);
    return st;
}

static void knomial_tree_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                char *buf, size_t len)
{
    ucoll__params_words(buf, len, 0, radix(a, prm, p));
}

const ucoll_algo_t ucoll__barrier_knomial_tree = {
    .id = "knomial_tree",
    .desc = "k-nomial fan-in to rank 0, then fan-out (UCOLL_RADIX, else the model's best)",
    .cost = knomial_tree_cost,
    .build = knomial_tree_build,
    .params = knomial_tree_params,
};

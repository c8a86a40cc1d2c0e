/*
 * Reduce, k-nomial tree (radix k: UCOLL_RADIX, else the model's best):
 * the mirror of the k-nomial broadcast over sranks. Level by level from
 * the nearest children (smallest subtrees) up, a rank receives the partial
 * results of the up to k-1 children of the level into k-1 scratch slots
 * (reused by the next level) and folds each into its accumulator as it
 * arrives; once every level is in, it sends the accumulator to its parent.
 * Commutative ops (every predefined op is). k = 2 is the binomial tree.
 *
 * Cost: ⌈log_k p⌉ levels, each k-1 messages at the receive port and, after
 * the last of them, its reduction: d((k-1)(α + mβ) + mγ) when p is a power
 * of k; otherwise the levels are computed over the tree's shape
 * (subtree_time), partial subtrees finishing early (one wake per level when
 * oversubscribed).
 */
#include "reduce.h"

static double knomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m);

static int radix(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    int k = ucoll__radix_choose(a, p, prm, knomial_cost);

    return UCOLL_MIN(k, UCOLL_MAX(p, 2));
}

/* Finish time of a node whose subtree holds size ranks (sranks r..r+size-1,
 * children r + j·k^i). Each child's partial result is sent when its subtree
 * is done and goes through this node's receive port in the order they are
 * ready (they are eager: a level's receives need not be posted yet); the
 * node reduces them level by level in schedule order. full[i] memoizes
 * full subtrees of k^i ranks; only the last child of a level can be
 * partial. */
static double subtree_time(long long size, int k, double msg, double red, double *full)
{
    double done[64 * 8], arrive[64 * 8], t = 0;
    int n = 0, order[64 * 8];

    for (long long pw = 1, lvl = 0; pw < size && n + k < 64 * 8; pw *= k, lvl++) {
        for (int j = 1; j < k && j * pw < size; j++) {
            long long csize = UCOLL_MIN(pw, size - j * pw);

            done[n] = csize == pw && full[lvl] >= 0 ? full[lvl]
                                                    : subtree_time(csize, k, msg, red, full);
            if (csize == pw) {
                full[lvl] = done[n];
            }
            order[n] = n;
            n++;
        }
        if (pw > size / k) {
            break;
        }
    }
    /* the port, in order of readiness (schedule order among equals; ties
     * between subtrees that end at the same time may go either way in a
     * real network, and in the simulator: up to a message time apart) */
    for (int i = 1; i < n; i++) {
        for (int j = i; j > 0 && done[order[j]] < done[order[j - 1]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    }
    for (int i = 0; i < n; i++) {
        arrive[order[i]] = UCOLL_MAX(i ? arrive[order[i - 1]] : 0, done[order[i]]) + msg;
    }
    for (int i = 0; i < n; i++) {
        t = UCOLL_MAX(t, arrive[i]) + red;
    }
    return t;
}

static double knomial_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize, full[64];
    int k = radix(a, prm, p);

    if (p == 1) {
        return 0;
    }
    for (int i = 0; i < 64; i++) {
        full[i] = -1;
    }
    /* the wake of an oversubscribed node is paid once per level */
    return subtree_time(p, k, m->alpha - m->wake + bytes * m->beta, bytes * m->gamma, full) +
           ucoll__ceil_logk(p, k) * m->wake;
}

static int knomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, k = radix(a, prm, p);
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t bytes = a->count * a->esize;
    int *kids, *sizes, n, st = UCOLL_OK;
    const char *acc = a->sbuf; /* the running value: the input until the first reduction */
    char *dst = NULL, *tmp = NULL;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    kids = malloc(sizeof(int) * (size_t)((k - 1) * ucoll__ceil_logk(UCOLL_MAX(p, 2), k) + 1));
    sizes = malloc(sizeof(int) * (size_t)((k - 1) * ucoll__ceil_logk(UCOLL_MAX(p, 2), k) + 1));
    if (kids == NULL || sizes == NULL) {
        st = UCOLL_ERR_NOMEM;
        goto out;
    }
    /* children by level (subtree size k^i), nearest first */
    n = ucoll__knomial_children(sr, p, k, kids, sizes);
    if (n == 0 && sr == 0) { /* p = 1 */
        st = ucoll__sched_copy_if(s, a->rbuf, a->sbuf, bytes);
        goto out;
    }
    if (n > 0) {
        dst = (sr == 0) ? a->rbuf : ucoll__sched_scratch(s, bytes);
        if (dst == NULL) {
            st = UCOLL_ERR_NOMEM;
            goto out;
        }
    }
    if (n > 0 && (tmp = ucoll__sched_scratch(s, (size_t)(k - 1) * bytes)) == NULL) {
        st = UCOLL_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < n;) {
        int lvl = i, cnt = 0;

        /* one level: children whose subtrees start at the same power */
        while (i < n && (cnt == 0 || kids[i] - sr < (kids[lvl] - sr) * k)) {
            if ((st = ucoll__sched_recv(s, tmp + (size_t)cnt * bytes, bytes,
                                        ucoll__rank_of(kids[i], a->root, p)))) {
                goto out;
            }
            cnt++;
            i++;
        }
        if ((st = ucoll__sched_round(s))) {
            goto out;
        }
        for (int j = 0; j < cnt; j++) {
            if ((st = ucoll__sched_reduce(s, dst, acc, tmp + (size_t)j * bytes, a->count, a->dt,
                                          a->op))) {
                goto out;
            }
            acc = dst;
        }
    }
    if (sr != 0) {
        st = ucoll__sched_send(s, acc, bytes,
                               ucoll__rank_of(ucoll__knomial_parent(sr, p, k), a->root, p));
    }
out:
    free(kids);
    free(sizes);
    return st;
}

static void knomial_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           char *buf, size_t len)
{
    (void)a;
    ucoll__params_words(buf, len, 0, radix(a, prm, p));
}

const ucoll_algo_t ucoll__reduce_knomial = {
    .id = "knomial",
    .desc = "k-nomial tree, nearest level first (UCOLL_RADIX, else the model's best)",
    .cost = knomial_cost,
    .build = knomial_build,
    .params = knomial_params,
};

/*
 * Broadcast down more trees of the catalog, each given by the children of
 * every srank in sending order (the parent follows), all run by
 * ucoll__bcast_tree_steps (whole message, or segmented for pipe_knomial):
 *
 *  karytree    complete k-ary tree in level order: children k·r+1 … k·r+k
 *              (k: UCOLL_RADIX, default 3, the integer optimum of
 *              k·log_k p).
 *  balanced    the tree balanced by node count: level l holds k^l ranks,
 *              from (k^l-1)/(k-1); rank r of level l has children
 *              r + i·k^l, i = 1..k (k: UCOLL_RADIX, default 2), so the
 *              subtrees of one node differ by at most one rank per level.
 *  vchain      chains of decreasing length k, k-1, …, 1 fed by the root in
 *              that order, k the smallest with k(k+1)/2 ≥ p-1 (the first
 *              chains take what is left over): every chain ends by step k.
 *  kchain_opt  k parallel chains with k = ⌈√(p-1)⌉ whatever UCOLL_RADIX
 *              says (kchain.c).
 *  pipe_knomial  the k-nomial tree (knomial.c), segmented.
 *
 * Cost: the whole-message trees pay U(α + mβ), U the message times on the
 * slowest path when every node sends to its children one after the other
 * (computed over the tree, O(p)); the segmented tree
 * (n-1)·D(α + sβ) + U(α + s_n β), D the root's children (its send port is
 * the bottleneck) and s_n the last segment.
 */
#include "bcast.h"

#include <math.h>

typedef int (*tree_children_fn)(int sr, int p, int k, int *out);

/* ---- the trees (sranks) ----------------------------------------------- */

static int karytree_children(int sr, int p, int k, int *out)
{
    int n = 0;

    for (long long c = (long long)k * sr + 1; c <= (long long)k * sr + k && c < p; c++) {
        out[n++] = (int)c;
    }
    return n;
}

/* First srank of level l and k^l, for the level of sr. */
static void balanced_level(int sr, int k, long long *first, long long *width)
{
    long long f = 0, w = 1;

    while (f + w <= sr) {
        f += w;
        w *= k;
    }
    *first = f;
    *width = w;
}

static int balanced_children(int sr, int p, int k, int *out)
{
    long long first, w;
    int n = 0;

    balanced_level(sr, k, &first, &w);
    for (int i = 1; i <= k; i++) {
        long long c = sr + (long long)i * w;
        if (c < p) {
            out[n++] = (int)c;
        }
    }
    return n;
}

/* vchain: chain j (0-based, fed j-th) holds min(k - j, what is left)
 * consecutive sranks. */
static int vchain_k(int p)
{
    int k = 0;

    while ((long long)k * (k + 1) / 2 < p - 1) {
        k++;
    }
    return k;
}

static int vchain_children(int sr, int p, int k_unused, int *out)
{
    int k = vchain_k(p), start = 1;

    for (int j = 0; j < k && start < p; j++) {
        int len = UCOLL_MIN(k - j, p - start);

        if (sr == 0) {
            out[j] = start;
        } else if (sr >= start && sr < start + len) {
            if (sr + 1 < start + len) {
                out[0] = sr + 1;
                return 1;
            }
            return 0;
        }
        start += len;
        if (sr == 0 && (start >= p || j + 1 == k)) {
            return j + 1;
        }
    }
    return 0;
}

static int knomial_children(int sr, int p, int k, int *out)
{
    int n = ucoll__knomial_children(sr, p, k, out, NULL);

    /* largest subtree first, as the knomial broadcast sends */
    for (int i = 0; i < n / 2; i++) {
        int t = out[i];
        out[i] = out[n - 1 - i];
        out[n - 1 - i] = t;
    }
    return n;
}

static int max_children(int p, int k)
{
    return UCOLL_MAX(UCOLL_MAX(k, 2 * (int)sqrt((double)p) + 2),
                     (k - 1) * ucoll__ceil_logk(UCOLL_MAX(p, 2), UCOLL_MAX(k, 2)) + 1);
}

/* The parent of sr: the node whose children hold it (the trees here are
 * cheap to walk from the root's side: search the level above). */
static int tree_parent(tree_children_fn fn, int sr, int p, int k, int *buf)
{
    if (sr == 0) {
        return -1;
    }
    if (fn == karytree_children) {
        return (sr - 1) / k;
    }
    if (fn == balanced_children) {
        long long first, w;

        balanced_level(sr, k, &first, &w);
        return (int)(sr - ((sr - first) / (w / k) + 1) * (w / k));
    }
    if (fn == knomial_children) {
        return ucoll__knomial_parent(sr, p, k);
    }
    /* vchain: the chain's predecessor, or the root for a leader */
    {
        int n = vchain_children(0, p, k, buf);

        for (int i = 0; i < n; i++) {
            if (buf[i] == sr) {
                return 0;
            }
        }
        return sr - 1;
    }
}

/* Message times on the slowest path (whole message: each node sends to its
 * children in order), and the most children of a node. */
static int tree_units(tree_children_fn fn, int p, int k, int *maxdeg)
{
    int *arrive = calloc((size_t)p, sizeof(int)), *kids = malloc(sizeof(int) * max_children(p, k));
    int worst = 0, deg = 0;

    if (arrive == NULL || kids == NULL) {
        free(arrive);
        free(kids);
        *maxdeg = 1;
        return p; /* unknown: as slow as a chain */
    }
    /* every tree here numbers a child after its parent, so one pass in
     * srank order sees each parent's arrival before its children's */
    for (int v = 0; v < p; v++) {
        int n = fn(v, p, k, kids);

        deg = UCOLL_MAX(deg, n);
        for (int i = 0; i < n; i++) {
            arrive[kids[i]] = arrive[v] + i + 1;
            worst = UCOLL_MAX(worst, arrive[kids[i]]);
        }
    }
    free(arrive);
    free(kids);
    *maxdeg = UCOLL_MAX(deg, 1);
    return worst;
}

static int tree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a, tree_children_fn fn, int k,
                      size_t seg)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, sr = ucoll__srank(comm->rank, a->root, p);
    size_t bytes = a->count * a->esize;
    int *kids, n, parent, st;

    if (bytes == 0 || p == 1) {
        return UCOLL_OK;
    }
    kids = malloc(sizeof(int) * (size_t)max_children(p, k));
    if (kids == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    parent = tree_parent(fn, sr, p, k, kids);
    n = fn(sr, p, k, kids);
    for (int i = 0; i < n; i++) {
        kids[i] = ucoll__rank_of(kids[i], a->root, p);
    }
    st = ucoll__bcast_tree_steps(s, a->rbuf, bytes, seg ? seg : bytes,
                                 parent < 0 ? -1 : ucoll__rank_of(parent, a->root, p), kids, n);
    free(kids);
    return st;
}

static double whole_cost(tree_children_fn fn, int k, const ucoll_coll_args_t *a, int p,
                         const ucoll_model_t *m)
{
    int deg;

    if (p == 1) {
        return 0;
    }
    return tree_units(fn, p, k, &deg) * (m->alpha + (double)a->count * a->esize * m->beta);
}

/* ---- karytree ----------------------------------------------------------- */

static int kary_k(const ucoll_algo_params_t *prm)
{
    return prm->radix >= 2 ? (int)prm->radix : 3;
}

static double karytree_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    return whole_cost(karytree_children, kary_k(prm), a, p, m);
}

static int karytree_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    return tree_build(s, a, karytree_children, kary_k(prm), 0);
}

static void karytree_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            char *buf, size_t len)
{
    (void)a;
    (void)p;
    ucoll__params_words(buf, len, 0, kary_k(prm));
}

const ucoll_algo_t ucoll__bcast_karytree = {
    .id = "karytree",
    .desc = "complete k-ary tree, level order (UCOLL_RADIX, default 3)",
    .cost = karytree_cost,
    .build = karytree_build,
    .params = karytree_params,
};

/* ---- balanced ----------------------------------------------------------- */

static int balanced_k(const ucoll_algo_params_t *prm)
{
    return prm->radix >= 2 ? (int)prm->radix : 2;
}

static double balanced_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    return whole_cost(balanced_children, balanced_k(prm), a, p, m);
}

static int balanced_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    return tree_build(s, a, balanced_children, balanced_k(prm), 0);
}

static void balanced_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            char *buf, size_t len)
{
    (void)a;
    (void)p;
    ucoll__params_words(buf, len, 0, balanced_k(prm));
}

const ucoll_algo_t ucoll__bcast_balanced = {
    .id = "balanced",
    .desc = "tree balanced by node count, children r + i k^level (UCOLL_RADIX, default 2)",
    .cost = balanced_cost,
    .build = balanced_build,
    .params = balanced_params,
};

/* ---- vchain --------------------------------------------------------------- */

static double vchain_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                          const ucoll_model_t *m)
{
    return whole_cost(vchain_children, 2, a, p, m);
}

static int vchain_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                        const ucoll_algo_params_t *prm)
{
    return tree_build(s, a, vchain_children, 2, 0);
}

const ucoll_algo_t ucoll__bcast_vchain = {
    .id = "vchain",
    .desc = "chains of decreasing length k, k-1, ..., 1 fed in turn: k steps",
    .cost = vchain_cost,
    .build = vchain_build,
};

/* ---- kchain_opt ---------------------------------------------------------- */

static void kopt_params(const ucoll_algo_params_t *prm, int p, ucoll_algo_params_t *out)
{
    *out = *prm;
    out->radix = (unsigned)UCOLL_MAX(1, (int)ceil(sqrt((double)UCOLL_MAX(p - 1, 1))));
}

static double kchain_opt_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                              const ucoll_model_t *m)
{
    ucoll_algo_params_t q;

    kopt_params(prm, p, &q);
    return ucoll__bcast_kchain.cost(a, p, &q, m);
}

static int kchain_opt_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                            const ucoll_algo_params_t *prm)
{
    ucoll_algo_params_t q;

    kopt_params(prm, ucoll__sched_comm(s)->size, &q);
    return ucoll__bcast_kchain.build(s, a, &q);
}

static void kchain_opt_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                              char *buf, size_t len)
{
    ucoll_algo_params_t q;

    kopt_params(prm, p, &q);
    ucoll__bcast_kchain.params(a, p, &q, buf, len);
}

const ucoll_algo_t ucoll__bcast_kchain_opt = {
    .id = "kchain_opt",
    .desc = "k parallel chains, k = ceil(sqrt(p-1)) always",
    .cost = kchain_opt_cost,
    .build = kchain_opt_build,
    .params = kchain_opt_params,
};

/* ---- pipe_knomial ---------------------------------------------------------- */

static int pk_k(const ucoll_algo_params_t *prm)
{
    return prm->radix >= 2 ? (int)prm->radix : 2;
}

/* The segment size: T(s) ≈ (U - D)(α + sβ) + (m/s)·D(α + sβ) is least at
 * s = √(m·D·α / ((U - D)β)), ucoll__pipeline_seg's form with depth
 * (U - D)/D. */
static size_t pk_seg(const ucoll_algo_params_t *prm, size_t bytes, int p, int *units, int *deg)
{
    *units = tree_units(knomial_children, p, pk_k(prm), deg);
    return ucoll__pipeline_seg(prm, bytes, UCOLL_MAX(1, (*units - *deg) / *deg));
}

static double pipe_knomial_cost(const ucoll_coll_args_t *a, int p,
                                const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    size_t bytes = a->count * a->esize, seg;
    int units, deg;
    double n;

    if (p == 1 || bytes == 0) {
        return 0;
    }
    seg = UCOLL_MIN(pk_seg(prm, bytes, p, &units, &deg), bytes);
    n = (double)((bytes + seg - 1) / seg);
    /* the root sends n-1 full segments to each child, then the last one
     * (the remainder) travels the slowest path */
    return (n - 1) * deg * (m->alpha + (double)seg * m->beta) +
           units * (m->alpha + ((double)bytes - (n - 1) * (double)seg) * m->beta);
}

static int pipe_knomial_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                              const ucoll_algo_params_t *prm)
{
    int units, deg, p = ucoll__sched_comm(s)->size;
    size_t bytes = a->count * a->esize;

    if (p == 1 || bytes == 0) {
        return UCOLL_OK;
    }
    return tree_build(s, a, knomial_children, pk_k(prm), pk_seg(prm, bytes, p, &units, &deg));
}

static void pipe_knomial_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                char *buf, size_t len)
{
    int units, deg;
    size_t seg = pk_seg(prm, a->count * a->esize, p, &units, &deg);

    ucoll__params_words(buf, len, seg, pk_k(prm));
}

const ucoll_algo_t ucoll__bcast_pipe_knomial = {
    .id = "pipe_knomial",
    .desc = "k-nomial tree, segmented (UCOLL_RADIX, default 2; UCOLL_SEGMENT_SIZE)",
    .cost = pipe_knomial_cost,
    .build = pipe_knomial_build,
    .params = pipe_knomial_params,
};

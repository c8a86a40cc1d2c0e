/*
 * Reduce, Rabenseifner: recursive-halving reduce-scatter, then a binomial
 * gather of the pieces to the root.
 *
 * Over sranks (the root is srank 0). p2 = largest power of two <= p; the
 * odd sranks below 2(p - p2) first send their vector to srank - 1 and sit
 * out, so srank 0 always takes part, as newrank 0. The vector is cut into
 * p2 groups of elements (block partition). Halving: at distance
 * d = p2/2 .. 1, newrank v swaps with v ^ d the half of its current group
 * range the partner keeps and reduces the half it keeps; at the end v holds
 * group v reduced over everyone. Gather: v receives from each child v + d
 * (d below lowbit(v)) its groups [v+d, v+2d) and sends [v, v + lowbit(v))
 * to v - lowbit(v); newrank 0 ends with the whole vector in rbuf.
 * Commutative ops.
 *
 * Cost: 2⌈log2 p⌉α + 2((p-1)/p)mβ + ((p-1)/p)mγ (+ α + mβ + mγ to fold
 * when p is not a power of two).
 */
#include "reduce.h"

static double rabenseifner_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    int p2 = ucoll__floor_pow2(p);
    double t =
        2 * ucoll__ceil_log2(p2) * m->alpha + (p2 - 1.0) / p2 * bytes * (2 * m->beta + m->gamma);

    return t + (p != p2 ? m->alpha + bytes * (m->beta + m->gamma) : 0);
}

typedef struct {
    ucoll_rd_t rd;
    int root, p;
} map_arg_t;

static int map_rank(int nr, const void *arg)
{
    const map_arg_t *ma = arg;

    return ucoll__rank_of(ucoll__rd_rank(&ma->rd, nr), ma->root, ma->p);
}

static int rabenseifner_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                              const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t bytes = a->count * a->esize, es = a->esize;
    map_arg_t ma = {.root = a->root, .p = p};
    size_t *goff = NULL;
    char *acc, *tmp;
    const char *src;
    int v, span, st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, a->rbuf, a->sbuf, bytes);
    }
    ucoll__rd_init(sr, p, &ma.rd);
    if (ma.rd.newrank < 0) {
        return ucoll__sched_send(s, a->sbuf, bytes, ucoll__rank_of(sr - 1, a->root, p));
    }
    acc = (sr == 0) ? a->rbuf : ucoll__sched_scratch(s, bytes);
    tmp = ucoll__sched_scratch(s, bytes);
    if (acc == NULL || tmp == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    src = a->sbuf;
    if (sr < 2 * ma.rd.rem) {
        if ((st = ucoll__sched_recv(s, tmp, bytes, ucoll__rank_of(sr + 1, a->root, p))) ||
            (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, acc, a->sbuf, tmp, a->count, a->dt, a->op))) {
            return st;
        }
        src = acc;
    }
    goff = malloc(sizeof(size_t) * (size_t)(ma.rd.p2 + 1));
    if (goff == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (int g = 0; g <= ma.rd.p2; g++) {
        goff[g] = ucoll__block_offset(a->count, ma.rd.p2, g);
    }
    st = ucoll__sched_rhalving(s, &ma.rd, acc, src, tmp, goff, es, a->dt, a->op, map_rank, &ma);
    if (st) {
        goto out;
    }
    v = ma.rd.newrank;
    span = ucoll__binomial_span(v, ma.rd.p2);
    for (int d = 1; d < span && v + d < ma.rd.p2; d *= 2) {
        size_t lo = goff[v + d], hi = goff[v + 2 * d];
        if ((st = ucoll__sched_recv(s, acc + lo * es, (hi - lo) * es, map_rank(v + d, &ma)))) {
            goto out;
        }
    }
    if ((st = ucoll__sched_round(s))) {
        goto out;
    }
    if (v != 0) {
        size_t lo = goff[v], hi = goff[v + span];
        st = ucoll__sched_send(s, acc + lo * es, (hi - lo) * es, map_rank(v - span, &ma));
    }
out:
    free(goff);
    return st;
}

const ucoll_algo_t ucoll__reduce_rabenseifner = {
    .id = "rabenseifner",
    .desc = "recursive-halving reduce-scatter, then binomial gather",
    .cost = rabenseifner_cost,
    .build = rabenseifner_build,
};

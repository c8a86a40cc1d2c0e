/*
 * Allreduce, Rabenseifner: recursive-halving reduce-scatter, then
 * recursive-doubling allgather (its mirror).
 *
 * Fold and unfold as in rdbl (odd ranks below 2(p - p2) hand their vector
 * to rank - 1 and get the result back). The vector is cut into p2 groups
 * of elements; after halving newrank v holds group v reduced over all, and
 * doubling at distance 1, 2, ..., p2/2 swaps the groups held so far.
 * Commutative ops.
 *
 * Cost: 2·log2 p·α + 2((p-1)/p)mβ + ((p-1)/p)mγ (+ fold: 2(α + mβ) + mγ).
 */
#include "allreduce.h"

static double rabenseifner_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    int p2 = ucoll__floor_pow2(p);
    double t =
        2 * ucoll__ceil_log2(p2) * m->alpha + (p2 - 1.0) / p2 * bytes * (2 * m->beta + m->gamma);

    return t + (p != p2 ? 2 * (m->alpha + bytes * m->beta) + bytes * m->gamma : 0);
}

static int map_rank(int nr, const void *arg)
{
    return ucoll__rd_rank(arg, nr);
}

static int rabenseifner_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                              const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t bytes = a->count * a->esize;
    char *acc = a->rbuf, *tmp;
    const char *src;
    size_t *goff;
    ucoll_rd_t rd;
    int st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    ucoll__rd_init(r, p, &rd);
    if (rd.newrank < 0) {
        if ((st = ucoll__sched_send(s, a->sbuf, bytes, r - 1)) || (st = ucoll__sched_round(s))) {
            return st;
        }
        return ucoll__sched_recv(s, acc, bytes, r - 1);
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, acc, a->sbuf, bytes);
    }
    tmp = ucoll__sched_scratch(s, bytes);
    if (tmp == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    /* the input is read where it is: no copy into rbuf first */
    src = a->sbuf;
    if (r < 2 * rd.rem) {
        if ((st = ucoll__sched_recv(s, tmp, bytes, r + 1)) || (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, acc, a->sbuf, tmp, a->count, a->dt, a->op))) {
            return st;
        }
        src = acc;
    }
    goff = malloc(sizeof(size_t) * (size_t)(rd.p2 + 1));
    if (goff == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (int g = 0; g <= rd.p2; g++) {
        goff[g] = ucoll__block_offset(a->count, rd.p2, g);
    }
    if ((st = ucoll__sched_rhalving(s, &rd, acc, src, tmp, goff, a->esize, a->dt, a->op, map_rank,
                                    &rd)) == UCOLL_OK) {
        st = ucoll__sched_rdoubling(s, &rd, acc, goff, a->esize, map_rank, &rd);
    }
    free(goff);
    if (st == UCOLL_OK && r < 2 * rd.rem) {
        st = ucoll__sched_send(s, acc, bytes, r + 1);
    }
    return st;
}

const ucoll_algo_t ucoll__allreduce_rabenseifner = {
    .id = "rabenseifner",
    .desc = "recursive-halving reduce-scatter, recursive-doubling allgather",
    .cost = rabenseifner_cost,
    .build = rabenseifner_build,
};

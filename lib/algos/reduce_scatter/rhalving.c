/*
 * Reduce_scatter, recursive halving.
 *
 * p2 = largest power of two <= p. Fold: the odd ranks below 2(p - p2) send
 * their whole vector to rank - 1 and later get their block back from it.
 * Survivor newrank g stands for the blocks of the ranks it represents
 * (2g and 2g+1 for g < p - p2, else g + p - p2), a contiguous group of
 * elements. Halving at distance d = p2/2 .. 1 swaps with newrank ^ d the
 * half of the current group range the partner keeps; newrank g ends with
 * its group reduced over all ranks. Commutative ops.
 *
 * Cost: log2 p·α + ((p-1)/p)m(β + γ) (+ fold: 2α + mβ + mγ + (m/p)β).
 */
#include "reduce_scatter.h"

static double rhalving_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    double bytes = (double)ucoll__coll_bytes(a, p);
    int p2 = ucoll__floor_pow2(p);
    double t = ucoll__ceil_log2(p2) * m->alpha + (p2 - 1.0) / p2 * bytes * (m->beta + m->gamma);

    return t + (p != p2 ? 2 * m->alpha + bytes * (m->beta + m->gamma) + bytes / p * m->beta : 0);
}

static int map_rank(int nr, const void *arg)
{
    return ucoll__rd_rank(arg, nr);
}

static int rhalving_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t es = a->esize, total;
    size_t *off = ucoll__rs_offsets(a, p), *goff = NULL;
    char *acc, *tmp;
    const char *src;
    ucoll_rd_t rd;
    int st = UCOLL_OK;

    if (off == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    total = off[p];
    if (total == 0) {
        goto out;
    }
    if (p == 1) {
        st = ucoll__sched_copy_if(s, a->rbuf, a->sbuf, total * es);
        goto out;
    }
    ucoll__rd_init(r, p, &rd);
    if (rd.newrank < 0) {
        if ((st = ucoll__sched_send(s, a->sbuf, total * es, r - 1)) == UCOLL_OK &&
            (st = ucoll__sched_round(s)) == UCOLL_OK) {
            st = ucoll__sched_recv(s, a->rbuf, (off[r + 1] - off[r]) * es, r - 1);
        }
        goto out;
    }
    acc = ucoll__sched_scratch(s, total * es);
    tmp = ucoll__sched_scratch(s, total * es);
    goff = malloc(sizeof(size_t) * (size_t)(rd.p2 + 1));
    if (acc == NULL || tmp == NULL || goff == NULL) {
        st = UCOLL_ERR_NOMEM;
        goto out;
    }
    for (int g = 0; g < rd.p2; g++) {
        goff[g] = off[ucoll__rd_rank(&rd, g)];
    }
    goff[rd.p2] = total;
    src = a->sbuf;
    if (r < 2 * rd.rem) {
        if ((st = ucoll__sched_recv(s, tmp, total * es, r + 1)) || (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, acc, a->sbuf, tmp, total, a->dt, a->op))) {
            goto out;
        }
        src = acc;
    }
    st = ucoll__sched_rhalving(s, &rd, acc, src, tmp, goff, es, a->dt, a->op, map_rank, &rd);
    if (st) {
        goto out;
    }
    /* the last halving reduce runs first in this round, then these */
    if ((st = ucoll__sched_copy(s, a->rbuf, acc + off[r] * es, (off[r + 1] - off[r]) * es))) {
        goto out;
    }
    if (r < 2 * rd.rem) {
        st = ucoll__sched_send(s, acc + off[r + 1] * es, (off[r + 2] - off[r + 1]) * es, r + 1);
    }
out:
    free(goff);
    free(off);
    return st;
}

const ucoll_algo_t ucoll__reduce_scatter_rhalving = {
    .id = "rhalving",
    .desc = "recursive halving, extra ranks folded in and out",
    .cost = rhalving_cost,
    .build = rhalving_build,
};

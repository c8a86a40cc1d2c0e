/*
 * Reduce_scatter, pairwise exchange: in step j = 1 .. p-1 rank r sends its
 * input's block r+j to rank r+j and receives rank (r-j)'s contribution to
 * block r, folding it into its own (acc = acc op received).
 *
 * Cost: (p-1)α + ((p-1)/p)m(β + γ). The sends read the input only, so
 * all p-1 leave at once; a step's receive waits for the previous step's
 * fold (they share tmp), not for its peer. Where ranks outnumber
 * processing units, the wait for descheduled peers (wake, part of α) is
 * therefore paid once, not once per step: measured at p = 4 on 2 cores,
 * 8 B - 32 MiB, pairwise took 0.55-0.95x rhalving's time (two steps),
 * which the per-step charge ranked the other way.
 */
#include "reduce_scatter.h"

static double pairwise_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    double bytes = (double)ucoll__coll_bytes(a, p);

    return (p - 1) * m->alpha - (p - 2) * m->wake + (p - 1.0) / p * bytes * (m->beta + m->gamma);
}

static int pairwise_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t es = a->esize, mine;
    size_t *off = ucoll__rs_offsets(a, p);
    const char *in = a->sbuf;
    char *acc, *tmp;
    int st = UCOLL_OK;

    if (off == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (off[p] == 0) {
        goto out;
    }
    mine = off[r + 1] - off[r];
    /* in place, rbuf's head is other ranks' input until the last send */
    acc = a->in_place ? ucoll__sched_scratch(s, mine * es + 1) : a->rbuf;
    tmp = ucoll__sched_scratch(s, mine * es + 1);
    if (acc == NULL || tmp == NULL) {
        st = UCOLL_ERR_NOMEM;
        goto out;
    }
    for (int j = 1; j < p; j++) {
        int dst = (r + j) % p, src = (r - j + p) % p;
        /* the first step reduces from the input, as ring does, rather
         * than copying it into acc first: a pass over the block less
         * (p = 2, 512 KiB - 2 MiB: pairwise took 1.09-1.17x ring's time) */
        const char *x = j == 1 ? in + off[r] * es : acc;

        if ((st = ucoll__sched_send(s, in + off[dst] * es, (off[dst + 1] - off[dst]) * es, dst)) ||
            (st = ucoll__sched_recv(s, tmp, mine * es, src)) || (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, acc, x, tmp, mine, a->dt, a->op))) {
            goto out;
        }
    }
    st = ucoll__sched_copy_if(s, a->rbuf, p == 1 ? in + off[r] * es : acc, mine * es);
out:
    free(off);
    return st;
}

const ucoll_algo_t ucoll__reduce_scatter_pairwise = {
    .id = "pairwise",
    .desc = "p-1 pairwise exchange steps",
    .cost = pairwise_cost,
    .build = pairwise_build,
};

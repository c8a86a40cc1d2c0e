/*
 * Reduce_scatter, ring: step j = 0 .. p-2 rank r sends to r+1 the partial
 * sum of block r-j-1 (its own input's block at step 0, then own op the
 * partial received in the previous step) and receives from r-1 the partial
 * of block r-j-2. After p-1 steps the partial received is block r's over
 * everyone but r; folding in its own input gives the result.
 *
 * Cost: (p-1)α + ((p-1)/p)m(β + γ).
 */
#include "reduce_scatter.h"

static double ring_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    double bytes = (double)ucoll__coll_bytes(a, p);

    return (p - 1) * m->alpha + (p - 1.0) / p * bytes * (m->beta + m->gamma);
}

static int ring_build(ucoll_sched_t *s, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int next = (r + 1) % p, prev = (r - 1 + p) % p;
    size_t es = a->esize, maxc = 0;
    size_t *off = ucoll__rs_offsets(a, p);
    const char *in = a->sbuf;
    char *sbuf, *rbuf;
    int st = UCOLL_OK;

    if (off == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (off[p] == 0) {
        goto out;
    }
    if (p == 1) {
        st = ucoll__sched_copy_if(s, a->rbuf, in, off[1] * es);
        goto out;
    }
    for (int i = 0; i < p; i++) {
        maxc = UCOLL_MAX(maxc, off[i + 1] - off[i]);
    }
    sbuf = ucoll__sched_scratch(s, maxc * es);
    rbuf = ucoll__sched_scratch(s, maxc * es);
    if (sbuf == NULL || rbuf == NULL) {
        st = UCOLL_ERR_NOMEM;
        goto out;
    }
    for (int j = 0; j < p - 1; j++) {
        int sb = (r - j - 1 + 2 * p) % p, rb = (r - j - 2 + 2 * p) % p;
        size_t sc = off[sb + 1] - off[sb];
        const char *src = in + off[sb] * es;
        if (j > 0) {
            if ((st = ucoll__sched_reduce(s, sbuf, src, rbuf, sc, a->dt, a->op))) {
                goto out;
            }
            src = sbuf;
        }
        if ((st = ucoll__sched_send(s, src, sc * es, next)) ||
            (st = ucoll__sched_recv(s, rbuf, (off[rb + 1] - off[rb]) * es, prev)) ||
            (st = ucoll__sched_round(s))) {
            goto out;
        }
    }
    {
        size_t mine = off[r + 1] - off[r];
        if (a->in_place) {
            /* rbuf's head overlaps the input block r: reduce aside first */
            if ((st = ucoll__sched_reduce(s, sbuf, in + off[r] * es, rbuf, mine, a->dt, a->op)) ==
                UCOLL_OK) {
                st = ucoll__sched_copy_if(s, a->rbuf, sbuf, mine * es);
            }
        } else {
            st = ucoll__sched_reduce(s, a->rbuf, in + off[r] * es, rbuf, mine, a->dt, a->op);
        }
    }
out:
    free(off);
    return st;
}

const ucoll_algo_t ucoll__reduce_scatter_ring = {
    .id = "ring",
    .desc = "ring of partial sums, one block per step",
    .cost = ring_cost,
    .build = ring_build,
};

/*
 * Scan / exscan, linear chain: rank r receives the prefix over 0..r-1 from
 * r-1, combines it on the left with its own input and sends the prefix over
 * 0..r to r+1. Exscan keeps the received prefix as its result.
 *
 * Cost: (p-1)(α + mβ + mγ).
 */
#include "scan.h"

static double linear_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                          const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (p - 1) * (m->alpha + bytes * (m->beta + m->gamma));
}

/* The pipelined variant with segments of seg elements (linear: seg = count). */
int ucoll__scan_chain_steps(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t seg)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int ex = (a->coll == UCOLL_COLL_EXSCAN);
    size_t es = a->esize, count = a->count;
    size_t n = (count + seg - 1) / seg;
    const char *in = a->sbuf;
    char *out = a->rbuf, *tmp = NULL;
    int st;

    if (count == 0) {
        return UCOLL_OK;
    }
    if (r == 0) {
        if (!ex && (st = ucoll__sched_copy_if(s, out, in, count * es))) {
            return st;
        }
        for (size_t j = 0; j < n && p > 1; j++) {
            size_t lo = j * seg, len = UCOLL_MIN(seg, count - lo);
            if ((st = ucoll__sched_send(s, (ex ? in : out) + lo * es, len * es, 1)) ||
                (st = ucoll__sched_round(s))) {
                return st;
            }
        }
        return UCOLL_OK;
    }
    if (ex) {
        if (a->in_place) {
            /* own input is in rbuf, where the received prefix lands */
            char *keep = ucoll__sched_scratch(s, count * es);
            if (keep == NULL || (st = ucoll__sched_copy(s, keep, in, count * es))) {
                return keep ? st : UCOLL_ERR_NOMEM;
            }
            in = keep;
        }
        if (r + 1 < p && (tmp = ucoll__sched_scratch(s, count * es)) == NULL) {
            return UCOLL_ERR_NOMEM;
        }
    } else if ((tmp = ucoll__sched_scratch(s, UCOLL_MIN(seg, count) * es)) == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (size_t j = 0; j <= n; j++) {
        if (j > 0) {
            size_t lo = (j - 1) * seg, len = UCOLL_MIN(seg, count - lo);
            if (ex) {
                /* out holds prefix(0..r-1); forward prefix(0..r) */
                if (r + 1 < p && ((st = ucoll__sched_reduce(s, tmp + lo * es, out + lo * es,
                                                            in + lo * es, len, a->dt, a->op)) ||
                                  (st = ucoll__sched_send(s, tmp + lo * es, len * es, r + 1)))) {
                    return st;
                }
            } else {
                if ((st = ucoll__sched_reduce(s, out + lo * es, tmp, in + lo * es, len, a->dt,
                                              a->op)) ||
                    (r + 1 < p && (st = ucoll__sched_send(s, out + lo * es, len * es, r + 1)))) {
                    return st;
                }
            }
        }
        if (j < n) {
            size_t lo = j * seg, len = UCOLL_MIN(seg, count - lo);
            if ((st = ucoll__sched_recv(s, ex ? out + lo * es : tmp, len * es, r - 1))) {
                return st;
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

static int linear_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                        const ucoll_algo_params_t *prm)
{
    return ucoll__scan_chain_steps(s, a, UCOLL_MAX(a->count, (size_t)1));
}

const ucoll_algo_t ucoll__scan_linear = {
    .id = "linear",
    .desc = "chain: prefix from rank-1, combined and passed to rank+1",
    .cost = linear_cost,
    .build = linear_build,
};

/*
 * Allreduce, recursive doubling.
 *
 * p2 = largest power of two <= p. Fold: the odd ranks below 2(p - p2)
 * send their vector to rank - 1 and wait for the result. The p2 survivors
 * swap whole vectors with newrank ^ 2^k, k = 0 .. log2 p2 - 1, and fold the
 * received one in (acc = acc op received: both partners compute the same
 * bits, as the predefined ops are commutative). Unfold: the even ranks send
 * the result back to rank + 1.
 *
 * Cost: ⌈log2 p⌉(α + mβ + mγ), plus 2(α + mβ) + mγ when p is not a power
 * of two.
 */
#include "allreduce.h"

static double rdbl_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    int p2 = ucoll__floor_pow2(p);
    double t = ucoll__ceil_log2(p2) * (m->alpha + bytes * (m->beta + m->gamma));

    return t + (p != p2 ? 2 * (m->alpha + bytes * m->beta) + bytes * m->gamma : 0);
}

static int rdbl_build(ucoll_sched_t *s, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t bytes = a->count * a->esize;
    char *acc = a->rbuf, *tmp;
    const char *cur = a->sbuf; /* the running value: the input until the first reduction */
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
    if (r < 2 * rd.rem) {
        if ((st = ucoll__sched_recv(s, tmp, bytes, r + 1)) || (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, acc, cur, tmp, a->count, a->dt, a->op))) {
            return st;
        }
        cur = acc;
    }
    /* p >= 2: at least one step, so acc ends written */
    for (int d = 1; d < rd.p2; d *= 2) {
        int peer = ucoll__rd_rank(&rd, rd.newrank ^ d);
        if ((st = ucoll__sched_send(s, cur, bytes, peer)) ||
            (st = ucoll__sched_recv(s, tmp, bytes, peer)) || (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, acc, cur, tmp, a->count, a->dt, a->op))) {
            return st;
        }
        cur = acc;
    }
    if (r < 2 * rd.rem) {
        return ucoll__sched_send(s, acc, bytes, r + 1);
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__allreduce_rdbl = {
    .id = "rdbl",
    .desc = "recursive doubling, extra ranks folded in and out",
    .cost = rdbl_cost,
    .build = rdbl_build,
};

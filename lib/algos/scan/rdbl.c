/*
 * Scan / exscan, recursive doubling (Hillis–Steele).
 *
 * Two buffers per rank: w, the partial passed on (the combination over the
 * window of ranks ending at r), and the result. At distance d = 1, 2, 4, ...
 * rank r sends w to r+d (if it exists) and receives w' from r-d (if it
 * exists); then w = w' op w and the result = w' op result. Both combine the
 * received value on the left: w' covers ranks just before w's, so rank
 * order is kept. For scan the result is w itself (kept in rbuf); for
 * exscan the result starts empty (the first w' is copied in) and w lives
 * in scratch, so rank 0's rbuf is never written.
 *
 * Cost: ⌈log2 p⌉(α + mβ + mγ).
 */
#include "scan.h"

static double rdbl_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return ucoll__ceil_log2(p) * (m->alpha + bytes * (m->beta + m->gamma));
}

static int rdbl_build(ucoll_sched_t *s, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    int ex = (a->coll == UCOLL_COLL_EXSCAN);
    size_t bytes = a->count * a->esize;
    char *w, *tmp;
    int have = 0, st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if (!ex) {
        w = a->rbuf;
        if ((st = ucoll__sched_copy_if(s, w, a->sbuf, bytes)) || p == 1) {
            return st;
        }
    } else {
        if (p == 1) {
            return UCOLL_OK;
        }
        w = ucoll__sched_scratch(s, bytes);
        if (w == NULL || (st = ucoll__sched_copy(s, w, a->sbuf, bytes))) {
            return w ? st : UCOLL_ERR_NOMEM;
        }
    }
    tmp = ucoll__sched_scratch(s, bytes);
    if (tmp == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (int d = 1; d < p; d *= 2) {
        if (r + d < p && (st = ucoll__sched_send(s, w, bytes, r + d))) {
            return st;
        }
        if (r - d >= 0 && (st = ucoll__sched_recv(s, tmp, bytes, r - d))) {
            return st;
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
        if (r - d < 0) {
            continue;
        }
        if (ex) {
            st = have ? ucoll__sched_reduce(s, a->rbuf, tmp, a->rbuf, a->count, a->dt, a->op)
                      : ucoll__sched_copy(s, a->rbuf, tmp, bytes);
            have = 1;
            if (st == UCOLL_OK && r + 2 * d < p) {
                st = ucoll__sched_reduce(s, w, tmp, w, a->count, a->dt, a->op);
            }
        } else {
            st = ucoll__sched_reduce(s, w, tmp, w, a->count, a->dt, a->op);
        }
        if (st) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__scan_rdbl = {
    .id = "rdbl",
    .desc = "recursive doubling (Hillis-Steele), received partial on the left",
    .cost = rdbl_cost,
    .build = rdbl_build,
};

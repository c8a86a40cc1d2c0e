/*
 * Alltoallv, scattered.
 *
 * As the alltoall scattered: exchanges with (r + i) % p / (r - i) % p
 * posted W at a time (W = the radix parameter, default 8), each block at its
 * own count and displacement; empty blocks move no message.
 *
 * Cost (m = the largest block): (p-1)(α + mβ), as pairwise (see the
 * alltoall scattered).
 */
#include "alltoall.h"

static unsigned scattered_window(const ucoll_algo_params_t *prm)
{
    return (prm != NULL && prm->radix != 0) ? prm->radix : UCOLL_ALLTOALL_SCATTERED_WINDOW;
}

static double alltoallv_scattered_cost(const ucoll_coll_args_t *a, int p,
                                       const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (p - 1) * (m->alpha + bytes * m->beta);
}

static int alltoallv_scattered_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                     const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    unsigned w = scattered_window(prm);
    size_t es = a->esize, extent = 0;
    char *rb = a->rbuf;
    const char *src;
    int st, i, to, from;

    for (i = 0; a->in_place && i < p; i++) {
        extent = UCOLL_MAX(extent, (a->rdispls[i] + a->rcounts[i]) * es);
    }
    if ((src = ucoll__alltoall_source(s, a, extent)) == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (!a->in_place &&
        (st = ucoll__sched_copy_if(s, rb + a->rdispls[r] * es, src + a->sdispls[r] * es,
                                   a->scounts[r] * es)) != UCOLL_OK) {
        return st;
    }
    for (i = 1; i < p; i++) {
        to = (r + i) % p;
        from = (r - i + p) % p;
        if (a->scounts[to] != 0 && (st = ucoll__sched_send(s, src + a->sdispls[to] * es,
                                                           a->scounts[to] * es, to)) != UCOLL_OK) {
            return st;
        }
        if (a->rcounts[from] != 0 &&
            (st = ucoll__sched_recv(s, rb + a->rdispls[from] * es, a->rcounts[from] * es, from)) !=
                UCOLL_OK) {
            return st;
        }
        if ((unsigned)i % w == 0 && (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__alltoallv_scattered = {
    .id = "scattered",
    .desc = "exchanges posted W at a time (W = radix, default 8)",
    .can_serve = NULL,
    .cost = alltoallv_scattered_cost,
    .build = alltoallv_scattered_build,
};

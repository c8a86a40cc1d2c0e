/*
 * Alltoall, scattered.
 *
 * Like pairwise with partners (r + i) % p / (r - i) % p, but the exchanges
 * are posted W at a time (W = the radix parameter, default 8): a round
 * holds W sends and W receives and the next W start when they are all done.
 * W >= p - 1 posts everything at once. Bounding W keeps a rank from being
 * flooded by p - 1 senders at once while still overlapping messages.
 *
 * Cost (m = one pair's block): (p-1)(α + mβ) + the own data's copy, as
 * pairwise (but one wake
 * per window when oversubscribed: ucoll__model_fanout): in the
 * full-duplex Hockney model a rank's sends share one port, so posting them
 * together gains nothing on paper (in practice it hides some latency; the
 * model keeps pairwise, listed first, as the default).
 */
#include "alltoall.h"

static unsigned scattered_window(const ucoll_algo_params_t *prm)
{
    return (prm != NULL && prm->radix != 0) ? prm->radix : UCOLL_ALLTOALL_SCATTERED_WINDOW;
}

static double alltoall_scattered_cost(const ucoll_coll_args_t *a, int p,
                                      const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;
    int w = (int)UCOLL_MIN(scattered_window(prm), (unsigned)UCOLL_MAX(p - 1, 1));

    /* one wake per window of exchanges posted together (ucoll__model_fanout) */
    return (p - 1) / w * ucoll__model_fanout(m, w) + ucoll__model_fanout(m, (p - 1) % w) +
           (p - 1) * bytes * m->beta + ucoll__alltoall_local_copy(a, p, m);
}

static int alltoall_scattered_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                    const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    unsigned w = scattered_window(prm);
    size_t bytes = a->count * a->esize;
    char *rb = a->rbuf;
    const char *src;
    int st, i, to, from;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if ((src = ucoll__alltoall_source(s, a, (size_t)p * bytes)) == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (!a->in_place && (st = ucoll__sched_copy(s, rb + (size_t)r * bytes, src + (size_t)r * bytes,
                                                bytes)) != UCOLL_OK) {
        return st;
    }
    for (i = 1; i < p; i++) {
        to = (r + i) % p;
        from = (r - i + p) % p;
        if ((st = ucoll__sched_send(s, src + (size_t)to * bytes, bytes, to)) != UCOLL_OK ||
            (st = ucoll__sched_recv(s, rb + (size_t)from * bytes, bytes, from)) != UCOLL_OK) {
            return st;
        }
        if ((unsigned)i % w == 0 && (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__alltoall_scattered = {
    .id = "scattered",
    .desc = "exchanges posted W at a time (W = radix, default 8)",
    .can_serve = NULL,
    .cost = alltoall_scattered_cost,
    .build = alltoall_scattered_build,
};

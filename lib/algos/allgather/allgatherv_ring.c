/*
 * Allgatherv, ring.
 *
 * As the allgather ring: in step i = 0 .. p-2 rank r sends block (r - i) to
 * r + 1 and receives block (r - i - 1) from r - 1, each block at its own
 * count and displacement in rbuf. Empty blocks move no message (every rank
 * knows every count).
 *
 * Cost (m = the largest block): (p-1)(α + mβ).
 */
#include "allgather.h"

static double allgatherv_ring_cost(const ucoll_coll_args_t *a, int p,
                                   const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (p - 1) * (m->alpha + bytes * m->beta);
}

static int allgatherv_ring_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                 const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t es = a->esize;
    char *rb = a->rbuf;
    const char *src;
    int st, i, sb, rcv;

    st = ucoll__sched_copy_if(s, rb + a->rdispls[r] * es, a->sbuf, a->scount * es);
    if (st != UCOLL_OK) {
        return st;
    }
    for (i = 0; i < p - 1; i++) {
        sb = (r - i + p) % p;
        rcv = (r - i - 1 + p) % p;
        /* the own block from sbuf (see allgather.h) */
        src = sb == r && a->scount == a->rcounts[r] ? (const char *)a->sbuf
                                                    : rb + a->rdispls[sb] * es;
        if (a->rcounts[sb] != 0 &&
            (st = ucoll__sched_send(s, src, a->rcounts[sb] * es, (r + 1) % p)) != UCOLL_OK) {
            return st;
        }
        if (a->rcounts[rcv] != 0 &&
            (st = ucoll__sched_recv(s, rb + a->rdispls[rcv] * es, a->rcounts[rcv] * es,
                                    (r - 1 + p) % p)) != UCOLL_OK) {
            return st;
        }
        if ((st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__allgatherv_ring = {
    .id = "ring",
    .desc = "pass blocks around the ring",
    .can_serve = NULL,
    .cost = allgatherv_ring_cost,
    .build = allgatherv_ring_build,
};

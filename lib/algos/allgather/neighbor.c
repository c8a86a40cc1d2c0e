/*
 * Allgather, neighbour exchange (Chen et al.; even p).
 *
 * Ranks pair up as (2k, 2k+1). Step 0: each rank swaps its block with its
 * pair partner, so both hold the pair's two blocks (2k, 2k+1), which are
 * adjacent in rbuf. Then p/2 - 1 steps alternate between the two ring
 * neighbours: an even rank talks to r - 1 on odd steps and to r + 1 on even
 * steps, an odd rank the other way round; each step sends the pair of
 * blocks received in the step before (at first: its own pair) and receives
 * the next pair, which lies two blocks further away in the direction of
 * that neighbour.
 *
 * Cost (m = one rank's block): (p/2)α + (p-1)mβ.
 */
#include "allgather.h"

static int allgather_neighbor_can_serve(const ucoll_coll_args_t *a, int p)
{
    return p % 2 == 0;
}

static double allgather_neighbor_cost(const ucoll_coll_args_t *a, int p,
                                      const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (p / 2) * m->alpha + (p - 1) * bytes * m->beta;
}

static int allgather_neighbor_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                                    const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t bytes = a->count * a->esize;
    char *rb = a->rbuf;
    int even = (r % 2 == 0);
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    /* [0]: the pair partner, talked to on even steps; [1]: the other side */
    int nb[2] = {even ? right : left, even ? left : right};
    int step[2] = {even ? 2 : -2, even ? -2 : 2};
    int from[2], send_from, par, i, st;

    if (bytes == 0) {
        return UCOLL_OK;
    }
    if ((st = ucoll__sched_copy_if(s, rb + (size_t)r * bytes, a->sbuf, bytes)) != UCOLL_OK ||
        (st = ucoll__sched_send(s, a->sbuf, bytes, nb[0])) != UCOLL_OK || /* allgather.h */
        (st = ucoll__sched_recv(s, rb + (size_t)nb[0] * bytes, bytes, nb[0])) != UCOLL_OK ||
        (st = ucoll__sched_round(s)) != UCOLL_OK) {
        return st;
    }
    /* first block of the pair held after step 0, and of the last pair
     * received from each side */
    send_from = r & ~1;
    from[0] = from[1] = send_from;
    for (i = 1; i < p / 2; i++) {
        par = i % 2;
        from[par] = (from[par] + step[par] + p) % p;
        if ((st = ucoll__sched_send(s, rb + (size_t)send_from * bytes, 2 * bytes, nb[par])) !=
                UCOLL_OK ||
            (st = ucoll__sched_recv(s, rb + (size_t)from[par] * bytes, 2 * bytes, nb[par])) !=
                UCOLL_OK ||
            (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
        send_from = from[par];
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__allgather_neighbor = {
    .id = "neighbor",
    .desc = "neighbour exchange of block pairs (even p)",
    .can_serve = allgather_neighbor_can_serve,
    .cost = allgather_neighbor_cost,
    .build = allgather_neighbor_build,
};

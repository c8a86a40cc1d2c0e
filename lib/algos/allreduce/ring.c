/*
 * Allreduce, ring: ring reduce-scatter, then ring allgather.
 *
 * The vector is cut into p blocks of elements (block partition). Reduce-
 * scatter, step j = 0 .. p-2: send block r-j to r+1, receive block r-j-1
 * from r-1 and fold it into the own copy; rank r ends with block r+1
 * reduced over all. Allgather, step j: send block r+1-j, receive block r-j
 * in place. Each block is reduced by exactly one rank, so every rank gets
 * the same bits. Every message is one block; the blocks themselves are the
 * segments, so large m needs no extra cut.
 *
 * Cost: 2(p-1)α + 2((p-1)/p)mβ + ((p-1)/p)mγ.
 */
#include "allreduce.h"

static double ring_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return 2.0 * (p - 1) * m->alpha + (p - 1.0) / p * bytes * (2 * m->beta + m->gamma);
}

static int ring_build(ucoll_sched_t *s, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size, r = comm->rank;
    size_t n = a->count, es = a->esize;
    int next = (r + 1) % p, prev = (r - 1 + p) % p;
    char *acc = a->rbuf, *tmp[2];
    int st;

    if (n == 0) {
        return UCOLL_OK;
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, acc, a->sbuf, n * es);
    }
    /* two receive buffers: the next block's receive is posted while this
     * one is being reduced */
    tmp[0] = ucoll__sched_scratch(s, ucoll__block_count(n, p, 0) * es);
    tmp[1] = ucoll__sched_scratch(s, ucoll__block_count(n, p, 0) * es);
    if (tmp[0] == NULL || tmp[1] == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    /* the input is not copied into acc first: the first send is the
     * input's own block, and each other block is reduced once, from the
     * input into acc (the allgather then writes the own block) */
    for (int j = 0; j < p - 1; j++) {
        int sb = (r - j + p) % p, rb = (r - j - 1 + 2 * p) % p;
        size_t so = ucoll__block_offset(n, p, sb), ro = ucoll__block_offset(n, p, rb);
        size_t rc = ucoll__block_count(n, p, rb);
        const char *from = j == 0 ? a->sbuf : acc;

        if ((st = ucoll__sched_send(s, from + so * es, ucoll__block_count(n, p, sb) * es, next)) ||
            (st = ucoll__sched_recv(s, tmp[j & 1], rc * es, prev)) ||
            (st = ucoll__sched_round(s)) ||
            (st = ucoll__sched_reduce(s, acc + ro * es, (const char *)a->sbuf + ro * es, tmp[j & 1],
                                      rc, a->dt, a->op))) {
            return st;
        }
    }
    for (int j = 0; j < p - 1; j++) {
        int sb = (r + 1 - j + p) % p, rb = (r - j + p) % p;
        size_t so = ucoll__block_offset(n, p, sb), ro = ucoll__block_offset(n, p, rb);
        if ((st = ucoll__sched_send(s, acc + so * es, ucoll__block_count(n, p, sb) * es, next)) ||
            (st = ucoll__sched_recv(s, acc + ro * es, ucoll__block_count(n, p, rb) * es, prev)) ||
            (st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__allreduce_ring = {
    .id = "ring",
    .desc = "ring reduce-scatter, then ring allgather",
    .cost = ring_cost,
    .build = ring_build,
};

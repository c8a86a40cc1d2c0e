/*
 * Reduce, pipelined chain: srank p-1 -> p-2 -> ... -> 0 (the root), the
 * vector cut into segments of s bytes (UCOLL_SEGMENT_SIZE, default from
 * the model). In round j an inner srank folds segment j-1, received in the
 * previous round, into its own (own op received), sends it on and receives
 * segment j; the last srank just sends its segments.
 *
 * Cost: (p-2+n)(α + sβ + sγ), n = ⌈m/s⌉.
 */
#include "reduce.h"
#include "algos/bcast/bcast.h"

static int pipeline_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, a->root, p);
    size_t es = a->esize, count = a->count;
    size_t seg = ucoll__chain_seg_elems(a, prm, p);
    size_t n = (count + seg - 1) / seg;
    const char *in = a->sbuf;
    int prev = ucoll__rank_of(sr + 1, a->root, p); /* upstream: sends to us */
    int next = ucoll__rank_of(sr - 1, a->root, p);
    char *acc, *tmp;
    int st;

    if (count == 0) {
        return UCOLL_OK;
    }
    if (p == 1) {
        return ucoll__sched_copy_if(s, a->rbuf, a->sbuf, count * es);
    }
    if (sr == p - 1) {
        for (size_t j = 0; j < n; j++) {
            size_t lo = j * seg, len = UCOLL_MIN(seg, count - lo);
            if ((st = ucoll__sched_send(s, in + lo * es, len * es, next)) ||
                (st = ucoll__sched_round(s))) {
                return st;
            }
        }
        return UCOLL_OK;
    }
    acc = (sr == 0) ? a->rbuf : ucoll__sched_scratch(s, count * es);
    tmp = ucoll__sched_scratch(s, seg * es);
    if (acc == NULL || tmp == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    for (size_t j = 0; j <= n; j++) {
        if (j > 0) {
            size_t lo = (j - 1) * seg, len = UCOLL_MIN(seg, count - lo);
            if ((st =
                     ucoll__sched_reduce(s, acc + lo * es, in + lo * es, tmp, len, a->dt, a->op))) {
                return st;
            }
            if (sr != 0 && (st = ucoll__sched_send(s, acc + lo * es, len * es, next))) {
                return st;
            }
        }
        if (j < n) {
            size_t lo = j * seg, len = UCOLL_MIN(seg, count - lo);
            if ((st = ucoll__sched_recv(s, tmp, len * es, prev))) {
                return st;
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

static void pipeline_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            char *buf, size_t len)
{
    ucoll__params_words(buf, len, ucoll__chain_seg_elems(a, prm, p) * a->esize, 0);
}

const ucoll_algo_t ucoll__reduce_pipeline = {
    .id = "pipeline",
    .desc = "segmented chain towards the root",
    .cost = ucoll__chain_reduce_cost,
    .build = pipeline_build,
    .params = pipeline_params,
};

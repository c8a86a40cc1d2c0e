/*
 * Broadcast along a chain of sranks 0 -> 1 -> ... -> p-1, whole (chain) or
 * cut into segments (pipeline): inner ranks receive segment j+1 while they
 * forward segment j.
 *
 * Cost: chain (p-1)(α + mβ); pipeline with n = ⌈m/s⌉ segments
 * (p-2+n)(α + sβ), which tends to mβ for large m; s* = √(mα / ((p-2)β)).
 */
#include "bcast.h"

static double chain_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                         const ucoll_model_t *m)
{
    return (p - 1) * (m->alpha + (double)a->count * a->esize * m->beta);
}

static double pipeline_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    size_t bytes = a->count * a->esize;
    size_t seg = ucoll__pipeline_seg(prm, bytes, p - 2);
    double n = (double)((bytes + seg - 1) / seg);
    double s = (double)UCOLL_MIN(seg, bytes);

    if (p == 1) {
        return 0;
    }
    return (p - 2 + UCOLL_MAX(n, 1.0)) * (m->alpha + s * m->beta);
}

static int chain_steps(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t seg)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    int p = comm->size;
    int sr = ucoll__srank(comm->rank, a->root, p);
    int parent = (sr == 0) ? -1 : ucoll__rank_of(sr - 1, a->root, p);
    int child = ucoll__rank_of(sr + 1, a->root, p);

    return ucoll__bcast_tree_steps(s, a->rbuf, a->count * a->esize, seg, parent, &child,
                                   sr + 1 < p ? 1 : 0);
}

static int chain_build(ucoll_sched_t *s, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    size_t bytes = a->count * a->esize;

    return bytes ? chain_steps(s, a, bytes) : UCOLL_OK;
}

static int pipeline_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    ucoll_comm_t *comm = ucoll__sched_comm(s);
    size_t bytes = a->count * a->esize;

    return bytes ? chain_steps(s, a, ucoll__pipeline_seg(prm, bytes, comm->size - 2)) : UCOLL_OK;
}

const ucoll_algo_t ucoll__bcast_chain = {
    .id = "chain",
    .desc = "chain of ranks, whole message",
    .cost = chain_cost,
    .build = chain_build,
};

static void pipeline_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            char *buf, size_t len)
{
    ucoll__params_words(buf, len, ucoll__pipeline_seg(prm, a->count * a->esize, p - 2), 0);
}

const ucoll_algo_t ucoll__bcast_pipeline = {
    .id = "pipeline",
    .desc = "segmented chain (UCOLL_SEGMENT_SIZE, default from the model)",
    .cost = pipeline_cost,
    .build = pipeline_build,
    .params = pipeline_params,
};

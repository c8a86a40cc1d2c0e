/*
 * Scan / exscan, pipelined chain: the linear chain with the vector cut into
 * segments of s bytes (UCOLL_SEGMENT_SIZE, default from the model), so
 * rank r combines and forwards segment j-1 while segment j arrives.
 *
 * Cost: (p-2+n)(α + sβ + sγ), n = ⌈m/s⌉.
 */
#include "scan.h"
#include "algos/bcast/bcast.h"

int ucoll__scan_chain_steps(ucoll_sched_t *s, const ucoll_coll_args_t *a, size_t seg);

static size_t seg_elems(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    size_t seg = ucoll__pipeline_seg(prm, a->count * a->esize, p - 2) / a->esize;

    return UCOLL_MAX(seg, (size_t)1);
}

static double pipeline_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    size_t seg = seg_elems(a, prm, p);
    double n = (double)((a->count + seg - 1) / seg);
    double sb = (double)UCOLL_MIN(seg, a->count) * a->esize;

    if (p == 1) {
        return 0;
    }
    return (p - 2 + UCOLL_MAX(n, 1.0)) * (m->alpha + sb * (m->beta + m->gamma));
}

static int pipeline_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    return ucoll__scan_chain_steps(s, a, seg_elems(a, prm, ucoll__sched_comm(s)->size));
}

const ucoll_algo_t ucoll__scan_pipeline = {
    .id = "pipeline",
    .desc = "segmented chain",
    .cost = pipeline_cost,
    .build = pipeline_build,
};

/*
 * Scan / exscan, pipelined chain: the linear chain with the vector cut into
 * segments of s bytes (UCOLL_SEGMENT_SIZE, default from the model), so
 * rank r combines and forwards segment j-1 while segment j arrives.
 *
 * Cost: (p-2+n)(α + sβ + sγ), n = ⌈m/s⌉.
 */
#include "scan.h"
#include "algos/bcast/bcast.h"

static int pipeline_build(ucoll_sched_t *s, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm)
{
    return ucoll__scan_chain_steps(s, a,
                                   ucoll__chain_seg_elems(a, prm, ucoll__sched_comm(s)->size));
}

const ucoll_algo_t ucoll__scan_pipeline = {
    .id = "pipeline",
    .desc = "segmented chain",
    .cost = ucoll__chain_reduce_cost,
    .build = pipeline_build,
};

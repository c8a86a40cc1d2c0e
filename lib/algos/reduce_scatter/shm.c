/*
 * Reduce_scatter_block, shm: through the communicator's shared memory, on
 * the personalized-exchange engine (algos/shm_xchg.c). Every rank copies
 * the blocks of its input that belong to the others into its region, and
 * reduces its own block, in rank order, reading every other rank's copy in
 * place and its own part from sbuf, straight into rbuf: no message, and no
 * copy of its own block; in pieces of 128 KiB of a block by default.
 *
 * Cost, m the whole vector's bytes, n chunks: 2·α_shm' + wake
 * + 2(n-1)·α_shm' + ((p-1)/p)·m·(λ + γ) (α_shm' without a wake-up: a
 * descheduled peer is waited for once, as in the other shared-memory rows;
 * measured at p = 4 on 2 cores, 64 B - 256 KiB: 10.3-34 us, against
 * pairwise's 12.1-460 and rhalving's 16.7-93, where two wake-ups in the
 * cost had pairwise chosen).
 *
 * Only the block variant: reduce_scatter's counts live in the caller's
 * array, which a queued op cannot keep.
 */
#include "reduce_scatter.h"

static int shm_can_serve(const ucoll_coll_args_t *a, int p)
{
    (void)p;
    return a->coll == UCOLL_COLL_REDUCE_SCATTER_BLOCK;
}

static double shm_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                       const ucoll_model_t *m)
{
    double bytes = (double)ucoll__coll_bytes(a, p), f = (p - 1.0) / p;
    double lambda = m->lambda > 0 ? m->lambda : 8e-11, gamma = m->gamma > 0 ? m->gamma : 1e-10;

    if (a->coll != UCOLL_COLL_REDUCE_SCATTER_BLOCK) {
        return 1e30;
    }
    return ucoll__shm_xchg_waits(a->count, a->esize, p, prm, m, UCOLL_SHM_XCHG_REDUCE) +
           f * bytes * (lambda + gamma);
}

static int shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                     ucoll_req_t *req)
{
    return ucoll__shm_xchg_start(comm, a, prm, req, UCOLL_SHM_XCHG_REDUCE);
}

const ucoll_algo_t ucoll__reduce_scatter_shm = {
    .id = "shm",
    .desc = "through shared memory: the others' blocks into the region, each rank reduces its "
            "own reading every region in place (one node; block variant)",
    .cost = shm_cost,
    .can_serve = shm_can_serve,
    .start = shm_start,
    .flags = UCOLL_ALGO_SHM,
};

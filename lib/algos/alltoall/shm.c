/*
 * Alltoall, shm: through the communicator's shared memory, on the
 * personalized-exchange engine (algos/shm_xchg.c). Every rank copies the
 * blocks meant for the others into its region and copies the block each
 * other rank left for it out of that rank's region into rbuf: the two
 * copies a message-based exchange makes too on one node, without the
 * messages' start-up and handshakes, in pieces of 256 KiB of a block by
 * default (they stay in the caches between the two copies), with one
 * wait per piece for all peers rather than one exchange per peer. In
 * place needs no scratch copy of the input (see shm_xchg.c).
 *
 * Cost (m = one pair's block, n chunks): 2·α_shm' + wake + 2(n-1)·α_shm'
 * + (2(p-1) + 1)·m·λ (the own block copied once; in place, not at all).
 */
#include "alltoall.h"

static double shm_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                       const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize, lambda = m->lambda > 0 ? m->lambda : 8e-11;

    return ucoll__shm_xchg_waits(a->count, a->esize, p, prm, m, UCOLL_SHM_XCHG_COPY) +
           (2.0 * (p - 1) + (a->in_place ? 0 : 1)) * bytes * lambda;
}

static int shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                     ucoll_req_t *req)
{
    return ucoll__shm_xchg_start(comm, a, prm, req, UCOLL_SHM_XCHG_COPY);
}

const ucoll_algo_t ucoll__alltoall_shm = {
    .id = "shm",
    .desc = "through shared memory: the others' blocks into the region, each rank copies its "
            "own out of every region (one node)",
    .cost = shm_cost,
    .start = shm_start,
    .flags = UCOLL_ALGO_SHM,
};

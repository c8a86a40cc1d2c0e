/*
 * Reduce, shm: through the communicator's shared memory, by the engine of
 * allreduce's shm row (lib/algos/allreduce/shm.c) with the root alone
 * taking the result: small vectors one-shot (every other rank copies its
 * input into its region, the root reduces all p in rank order, read in
 * place, its own from sbuf);
 * larger ones sliced (every rank reduces its slice of each chunk in place,
 * the root copies the slices). Same cost as allreduce's shm row.
 */
#include "reduce.h"
#include "algos/allreduce/allreduce.h"

static int shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                     ucoll_req_t *req)
{
    return ucoll__allreduce_shm_start(comm, a, prm, req, a->root);
}

const ucoll_algo_t ucoll__reduce_shm = {
    .id = "shm",
    .desc = "through shared memory: inputs in the regions, reduced in rank order in place, "
            "sliced when large (one node)",
    .cost = ucoll__allreduce_shm_cost,
    .start = shm_start,
    .flags = UCOLL_ALGO_SHM,
    .params = ucoll__allreduce_shm_params,
};

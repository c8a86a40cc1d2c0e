/*
 * Barrier, shm: through the communicator's shared memory (progress/shm.h).
 * In call s each rank publishes end(s) in its control word and waits until
 * every other rank's word has reached it: one flag per rank, no message.
 * Publishing end(s) on arrival is right: a barrier reads nothing, so an
 * arrived rank is done with the call.
 *
 * Cost: one flag seen by the others, plus reading p-1 flags:
 * (1 + (p-1)/4)·α_shm (+ a wake-up when ranks outnumber processing units).
 * Measured at p = 2 on the development machine (2 cores, spin): 0.2-0.3 us.
 */
#include "barrier.h"
#include "progress/shm.h"

static double shm_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                       const ucoll_model_t *m)
{
    (void)a;
    (void)prm;
    return ucoll__shm_hop(m) + (ucoll__shm_hop(m) - m->wake) * (p - 1) / 4.0;
}

static int shm_poll(ucoll_shm_op_t *op)
{
    uint64_t end = ucoll__shm_end(op->seq);

    if (op->phase == 0) {
        ucoll__shm_post(op->sh, end);
        op->phase = 1;
    }
    return ucoll__shm_all_reached(op, end) ? UCOLL_OK : UCOLL_SHM_AGAIN;
}

static int shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                     ucoll_req_t *req)
{
    ucoll_shm_op_t *op = ucoll__shm_op_new(comm, a, req, shm_poll);

    (void)prm;
    if (op == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ucoll__shm_op_start(op);
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__barrier_shm = {
    .id = "shm",
    .desc = "flags in shared memory: each rank marks its arrival and waits for all (one node)",
    .cost = shm_cost,
    .start = shm_start,
    .flags = UCOLL_ALGO_SHM,
};

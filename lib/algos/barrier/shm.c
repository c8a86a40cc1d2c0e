/*
 * Barrier through the communicator's shared memory (progress/shm.h), two
 * ways; no message either way.
 *
 * shm: in call s each rank publishes end(s) in its control word and waits
 * until every other rank's word has reached it: one flag per rank.
 * Publishing end(s) on arrival is right: a barrier reads nothing, so an
 * arrived rank is done with the call.
 * Cost: one flag seen by the others, plus reading p-1 flags:
 * (1 + (p-1)/4)·α_shm (+ a wake-up when ranks outnumber processing units).
 * Measured at p = 2 on the development machine (2 cores, spin): 0.2-0.3 us.
 *
 * shm_release (gather, then release): the others publish end(s) on
 * arrival and wait for rank 0's word only; rank 0 waits for all of them,
 * then publishes end(s). Rank 0 therefore leaves first, and a rank leaves
 * only once rank 0 has left. One flag more on the critical path than shm:
 * (2 + (p-1)/4)·α_shm with a processing unit per rank. Where ranks
 * outnumber processing units, what both cost is the wake-ups of the
 * descheduled ranks (each sees its last flag when it runs again, whichever
 * rank posted it), and the selection charges them the same, preferring
 * shm_release (listed first) for its exit order: with shm, the ranks that
 * run first leave first and carry the wait for the others into the next
 * call. At p = 4 on 2 cores (yield waiting), a barrier and an 8-byte bcast
 * from rank 0, per iteration: shm 4.4 us in the bcast (its readers wait
 * for a descheduled root) and 10 in the barrier; shm_release 0.14 and
 * 10.4-13.2. A loop of barriers alone: shm 5.4-9.2 us, shm_release
 * 10.3-12.5 (Open MPI's 12.2-13.2, p = 3, 4).
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

/* the second flag is hidden behind the wake-ups when there are any */
static double shm_release_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                               const ucoll_model_t *m)
{
    return shm_cost(a, p, prm, m) + (m->wake > 0 ? 0 : ucoll__shm_hop(m));
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

static int shm_release_poll(ucoll_shm_op_t *op)
{
    const ucoll_shm_t *sh = op->sh;
    uint64_t end = ucoll__shm_end(op->seq);

    if (sh->rank != 0) {
        if (op->phase == 0) {
            ucoll__shm_post(sh, end);
            op->phase = 1;
        }
        return ucoll__shm_load(sh, 0) >= end ? UCOLL_OK : UCOLL_SHM_AGAIN;
    }
    if (!ucoll__shm_all_reached(op, end)) {
        return UCOLL_SHM_AGAIN;
    }
    ucoll__shm_post(sh, end);
    return UCOLL_OK;
}

static int start_with(ucoll_comm_t *comm, const ucoll_coll_args_t *a, ucoll_req_t *req,
                      ucoll_shm_poll_t poll)
{
    ucoll_shm_op_t *op = ucoll__shm_op_new(comm, a, req, poll);

    if (op == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ucoll__shm_op_start(op);
    return UCOLL_OK;
}

static int shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                     ucoll_req_t *req)
{
    (void)prm;
    return start_with(comm, a, req, shm_poll);
}

static int shm_release_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                             const ucoll_algo_params_t *prm, ucoll_req_t *req)
{
    (void)prm;
    return start_with(comm, a, req, shm_release_poll);
}

const ucoll_algo_t ucoll__barrier_shm = {
    .id = "shm",
    .desc = "flags in shared memory: each rank marks its arrival and waits for all (one node)",
    .cost = shm_cost,
    .start = shm_start,
    .flags = UCOLL_ALGO_SHM,
};

const ucoll_algo_t ucoll__barrier_shm_release = {
    .id = "shm_release",
    .desc = "flags in shared memory: ranks mark their arrival, rank 0 releases them (one node)",
    .cost = shm_release_cost,
    .start = shm_release_start,
    .flags = UCOLL_ALGO_SHM,
};

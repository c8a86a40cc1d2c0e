/*
 * Allgather, shm: through the communicator's shared memory
 * (progress/shm.h). Every rank copies its block into its region and copies
 * every other rank's block out of theirs: no message. Blocks of up to
 * UCOLL_SHM_INLINE bytes travel in the control word's line (in calls that
 * follow each other, it and a second place alternate:
 * ucoll__shm_small_place); larger blocks go in chunks that fit the data
 * area, two steps per chunk k:
 *   pos 2k+1  this rank's chunk k is in its region (written once every
 *             rank has copied chunk k-1 out of it: reached 2k);
 *   pos 2k+2  this rank has copied chunk k of every other block.
 *
 * Cost: 2n·α_shm + m·λ + (p-1)·m·λ, n = chunks of a block (measured at
 * p = 8 on 2 cores, 1 MiB blocks: 2.4 ms, against 4.3 for rdbl).
 */
#include "allgather.h"
#include "progress/request.h"
#include "progress/shm.h"

#include <string.h>

/*
 * The chunk: the segment size when set; else, with a processing unit per
 * rank (no wake-up in the model), SHM_CHUNK_CORE for blocks of
 * SHM_CHUNK_CORE_MIN and more, and the whole data area otherwise (where
 * ranks outnumber processing units a step less is a wake-up less).
 * Chunks of the whole area (1 MiB) left the region's lines out of the
 * cores' caches: at p = 2, 256 KiB chunks took 0.74-0.75x their time at
 * 16 and 32 MiB (slowest rank, 5 alternations; 128 KiB ones 0.70-0.81x,
 * 512 KiB ones 0.89-0.93x), and against the build before them (7
 * alternations) 0.90x at 2 MiB, 0.91x at 4 MiB, 0.76x at 8 MiB, but
 * 1.03-1.07x at 512 KiB and 1 MiB (0.96-1.06x in two other runs). At p = 3 and 4 on
 * 2 cores (4 MiB areas) they went both ways, 0.75-1.74x.
 */
#define SHM_CHUNK_CORE     ((size_t)256 << 10)
#define SHM_CHUNK_CORE_MIN ((size_t)2 << 20)

static size_t shm_chunk(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                        const ucoll_model_t *m)
{
    size_t bytes = a->count * a->esize;

    if (bytes <= UCOLL_SHM_INLINE) {
        return bytes;
    }
    return ucoll__shm_piece(
        prm, m->wake > 0 || bytes < SHM_CHUNK_CORE_MIN ? prm->shm_data : SHM_CHUNK_CORE, 64);
}

static double shm_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                       const ucoll_model_t *m)
{
    double bytes = (double)(a->count * a->esize), lambda = m->lambda > 0 ? m->lambda : 8e-11;
    size_t c = prm->shm_data ? shm_chunk(a, prm, m) : 0;
    double n = c ? (double)((a->count * a->esize + c - 1) / c) : 1;

    /* wake-ups of descheduled peers: for the first chunk only, as in
     * allreduce's shm row */
    return 2 * ucoll__shm_hop(m) + 2 * (UCOLL_MAX(n, 1.0) - 1) * (ucoll__shm_hop(m) - m->wake) +
           bytes * lambda + (p - 1) * bytes * lambda;
}

static int shm_poll(ucoll_shm_op_t *op)
{
    const ucoll_shm_t *sh = op->sh;
    size_t m = op->count * op->esize, c = op->chunk;
    uint64_t s = op->seq, n = m <= c ? 1 : (m + c - 1) / c; /* no division for one piece */
    uint64_t since = s - 1;
    int me = sh->rank, area = 1;
    char *rbuf = op->rbuf;

    if (m <= UCOLL_SHM_INLINE) {
        ucoll__shm_small_place(op, m, &area, &since); /* one chunk */
    }
    for (;;) {
        uint64_t k = op->k;
        size_t off = (size_t)k * c, len = UCOLL_MIN(c, m - off);

        if (op->phase == 0) {
            if (!ucoll__shm_all_reached(op, k == 0 ? ucoll__shm_end(since)
                                                   : ucoll__shm_pos(s, 2 * k))) {
                return UCOLL_SHM_AGAIN;
            }
            ucoll__shm_publish(op, ucoll__shm_small_buf(sh, me, area, m),
                               (const char *)op->sbuf + off, len);
            ucoll__shm_post(sh, ucoll__shm_pos(s, 2 * k + 1));
            if (!op->in_place) {
                ucoll__shm_copy(rbuf + (size_t)me * m + off, (const char *)op->sbuf + off, len);
            }
            op->phase = 1;
        }
        /* every other block's chunk k, in rank order, each once it is there */
        for (; op->cur < sh->p; op->cur++) {
            int r = op->cur;

            if (r == me) {
                continue;
            }
            if (ucoll__shm_load(sh, r) < ucoll__shm_pos(s, 2 * k + 1)) {
                return UCOLL_SHM_AGAIN;
            }
            ucoll__shm_copy(rbuf + (size_t)r * m + off, ucoll__shm_small_buf(sh, r, area, m), len);
        }
        op->cur = 0;
        op->phase = 0;
        op->k = ++k;
        if (k == n) {
            if (m <= UCOLL_SHM_INLINE) {
                ucoll__shm_owe_end(op); /* its pos(s, 1) is out */
            } else {
                ucoll__shm_post(sh, ucoll__shm_end(s));
            }
            return UCOLL_OK;
        }
        ucoll__shm_post(sh, ucoll__shm_pos(s, 2 * k));
    }
}

static int shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                     ucoll_req_t *req)
{
    ucoll_shm_op_t *op;
    size_t bytes = a->count * a->esize;

    if (bytes == 0) {
        ucoll__req_complete(req, UCOLL_OK); /* every rank knows: nothing to do */
        return UCOLL_OK;
    }
    op = ucoll__shm_op_new(comm, a, req, shm_poll);
    if (op == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    op->chunk = shm_chunk(a, prm, &prm->model);
    op->stream_min = prm->shm_stream;
    if (prm->shm_stream_adapt) {
        ucoll__shm_stream_adapt(op, UCOLL_SHM_ADAPT_ALLGATHER, bytes);
    }
    if (bytes > op->chunk * (UCOLL_SHM_MAX_STEPS / 2 - 1)) { /* more pieces than that */
        op->chunk = UCOLL_MIN(bytes / (UCOLL_SHM_MAX_STEPS / 2 - 2) + 64, comm->shm->data_size);
    }
    ucoll__shm_op_start(op);
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__allgather_shm = {
    .id = "shm",
    .desc = "through shared memory: each rank copies its block in and the others' out (one node)",
    .cost = shm_cost,
    .start = shm_start,
    .flags = UCOLL_ALGO_SHM,
};

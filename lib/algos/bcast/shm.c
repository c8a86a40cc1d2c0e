/*
 * Bcast, shm: through the communicator's shared memory (progress/shm.h).
 * The root copies the message into its region and the others copy it out:
 * two copies, no message. Up to UCOLL_SHM_INLINE bytes travel in the
 * control word's cache line (small calls in a row alternate two places, so
 * a root need not wait for the readers of the call before:
 * ucoll__shm_small_place). Larger messages go in pieces of q bytes
 * through the data area used as a ring of K = ⌊data/q⌋ slots, pipelined:
 * the root writes piece j+1 while the others copy piece j.
 *
 *   root, piece j:   wait until every other rank has copied piece j-K (for
 *                    j < K: is done with the previous call), write it into
 *                    slot j mod K, publish pos(s, j+1);
 *   others, piece j: wait until the root's position reaches pos(s, j+1),
 *                    copy slot j mod K out, publish pos(s, j+1).
 * The last piece publishes end(s).
 *
 * Cost: α_shm + (m + q)·λ·(1 + (p-2)/4): the first flag, then the copies
 * of the pipeline (q = m for one piece), readers sharing the memory
 * bandwidth; q by size (shm_q) unless the segment size is set.
 */
#include "bcast.h"
#include "progress/request.h"
#include "progress/shm.h"

#include <string.h>

#define SHM_Q_MIN ((size_t)16 << 10)
#define SHM_Q_MAX ((size_t)64 << 10)

/*
 * The piece: the segment size when set; else a quarter of the message
 * within 16-64 KiB (and at most an eighth of the data area), so that from
 * 64 KiB the copies overlap over four pieces or more and no piece's flag
 * is paid for less than 16 KiB. Forced piece sizes, slowest rank, 7
 * alternations, against the previous rule (16 KiB pieces up to 128 KiB,
 * then 128 KiB): 32 KiB pieces took 0.87-0.91x the time at 64-256 KiB at
 * p = 4 (at p = 2 from 128 KiB); 64 KiB pieces 0.84-1.00x from 256 KiB
 * to 2 MiB at p = 2, 3, 4, where 32 KiB ones were even with them
 * (0.90-1.13x, no side consistent); one 32 KiB piece took 1.11x the time
 * of two of 16 KiB. The default bcast, new rule against old (mean over
 * ranks, 5 alternations): 0.81-0.91x at 128 KiB (p = 2, 3, 4), 0.84-0.88x
 * at 64-256 KiB at p = 4, 0.94-1.02x from 512 KiB (9 alternations).
 */
static size_t shm_q(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    size_t bytes = a->count * a->esize, cap;

    if (bytes <= UCOLL_SHM_INLINE) {
        return bytes;
    }
    cap = UCOLL_MIN(prm->shm_data / 8, SHM_Q_MAX);
    return ucoll__shm_piece(prm, UCOLL_MIN(UCOLL_MAX(bytes / 4, SHM_Q_MIN), cap), 64);
}

static double shm_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                       const ucoll_model_t *m)
{
    double bytes = (double)(a->count * a->esize);
    double q = prm->shm_data ? (double)UCOLL_MIN((double)shm_q(a, prm), bytes) : bytes;
    double lambda = m->lambda > 0 ? m->lambda : 8e-11;

    return ucoll__shm_hop(m) + (bytes + q) * lambda * (1.0 + (p - 2) / 4.0);
}

static int shm_poll(ucoll_shm_op_t *op)
{
    const ucoll_shm_t *sh = op->sh;
    size_t bytes = op->count * op->esize, q = op->chunk;
    /* one piece in one slot, without a division, for the small call */
    uint64_t s = op->seq, n = bytes <= q ? 1 : (bytes + q - 1) / q, since = s - 1;
    uint64_t slots = bytes <= UCOLL_SHM_INLINE ? 1 : sh->data_size / q;
    char *ring = ucoll__shm_data(sh, op->root), *buf = op->rbuf;

    if (bytes <= UCOLL_SHM_INLINE) { /* one piece, in a place that calls in a row alternate */
        int area;

        ucoll__shm_small_place(op, bytes, &area, &since);
        ring = ucoll__shm_small_buf(sh, op->root, area, bytes);
    }

    if (sh->rank == op->root) {
        for (; op->k < n; op->k++) {
            uint64_t j = op->k;
            size_t off = j * q, len = UCOLL_MIN(q, bytes - off);

            if (!ucoll__shm_all_reached(op, j < slots ? ucoll__shm_end(since)
                                                      : ucoll__shm_pos(s, j - slots + 1))) {
                return UCOLL_SHM_AGAIN;
            }
            if (op->iov) {
                ucoll__shm_iov_copy(op, ring + (slots > 1 ? j % slots : 0) * q, len, 1);
            } else {
                ucoll__shm_publish(op, ring + (slots > 1 ? j % slots : 0) * q, buf + off, len);
            }
            ucoll__shm_post(sh, j + 1 < n ? ucoll__shm_pos(s, j + 1) : ucoll__shm_end(s));
        }
        return UCOLL_OK;
    }
    while (op->k < n) {
        uint64_t have = ucoll__shm_load(sh, op->root);

        if (have < ucoll__shm_pos(s, op->k + 1)) {
            return UCOLL_SHM_AGAIN;
        }
        /* every piece the root has published so far */
        for (; op->k < n && have >= ucoll__shm_pos(s, op->k + 1); op->k++) {
            size_t off = op->k * q, len = UCOLL_MIN(q, bytes - off);

            if (op->iov) {
                ucoll__shm_iov_copy(op, ring + (slots > 1 ? op->k % slots : 0) * q, len, 0);
            } else {
                ucoll__shm_copy(buf + off, ring + (slots > 1 ? op->k % slots : 0) * q, len);
            }
        }
        ucoll__shm_post(sh, op->k < n ? ucoll__shm_pos(s, op->k) : ucoll__shm_end(s));
    }
    return UCOLL_OK;
}

static int shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                     ucoll_req_t *req)
{
    ucoll_shm_op_t *op;

    if (a->count == 0) {
        ucoll__req_complete(req, UCOLL_OK); /* every rank knows: nothing to do */
        return UCOLL_OK;
    }
    op = ucoll__shm_op_new(comm, a, req, shm_poll);
    if (op == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    op->chunk = shm_q(a, prm);
    op->stream_min = prm->shm_stream;
    if (prm->shm_stream_adapt && comm->rank == a->root) { /* the root alone writes */
        ucoll__shm_stream_adapt(op, UCOLL_SHM_ADAPT_BCAST, a->count * a->esize);
    }
    if (a->count * a->esize > op->chunk * UCOLL_SHM_MAX_STEPS) { /* more pieces than that */
        op->chunk = (a->count * a->esize) / (UCOLL_SHM_MAX_STEPS - 1) + 64;
    }
    ucoll__shm_op_start(op);
    return UCOLL_OK;
}

const ucoll_algo_t ucoll__bcast_shm = {
    .id = "shm",
    .desc = "through shared memory: the root copies in, the others copy out, pipelined (one node)",
    .cost = shm_cost,
    .start = shm_start,
    .flags = UCOLL_ALGO_SHM,
};

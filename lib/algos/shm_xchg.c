/*
 * Personalized exchange through shared memory: the engine of
 * reduce_scatter_block's and alltoall's shm rows (progress/shm.h). Every
 * rank's input is p blocks of count elements, block r meant for rank r.
 * Each rank copies the blocks meant for the others into its region; then,
 * for every other rank r, it takes the piece r left for it, reading r's
 * region in place:
 *   reduce (reduce_scatter_block): its block, reduced in rank order (its
 *           own part read from sbuf) straight into rbuf;
 *   copy (alltoall): into block r of rbuf; its own block is copied from
 *           sbuf to rbuf directly (in place, it is already there). Where
 *           every rank has a processing unit (two slots), chunk by chunk
 *           right after it posted its pieces, while the others may still
 *           be writing theirs (p = 2, 64 KiB to 4 MiB: 0.91-0.97x the time
 *           of copying it with the others' pieces); where ranks outnumber
 *           them, with the others' pieces (early, it took 1.07-1.13x the
 *           time at p = 4 on 2 cores, 128 KiB to 2 MiB).
 * No message; the only copies are the one into the region and the one out
 * of it (for reduce, the reduction reads the region instead).
 * The same two-step loop serves allreduce's pipelined shm way (a third
 * form, UCOLL_SHM_XCHG_ALLREDUCE, lib/algos/allreduce/shm.c): there a
 * chunk is one piece of the whole vector, read by every rank, and every
 * rank reduces all p of them (its own from sbuf, from its slot in place:
 * rbuf is written before rank order reads it) into rbuf.
 *
 * Large blocks go in chunks of ce elements of every block. The data area
 * holds S slots of p pieces each (piece r: chunk k of block r): S = 2
 * where every rank has a processing unit, so a rank writes chunk k while
 * the others may still read chunk k-1, and S = 1 where ranks outnumber
 * them (xchg_slots); two steps per chunk:
 *   pos 2k+1  this rank's pieces of chunk k are in slot k mod S (written
 *             once every rank has taken chunk k-S, which read that slot:
 *             reached 2(k-S)+2; the first S once everyone is done with the
 *             previous call);
 *   pos 2k+2  this rank has taken its pieces of chunk k from every region.
 * Payloads of up to UCOLL_SHM_INLINE bytes in all (p pieces) travel in the
 * control word's line (in calls that follow each other, it and a second
 * place alternate: ucoll__shm_small_place).
 *
 * In place, the input is rbuf. Reduce puts the result at its head (block
 * 0), copy puts block r where the input's block r was: either way, what
 * chunk k writes is chunk k of input blocks that this rank has copied into
 * its region (or, as the block's owner, reads in the same reduction, element
 * by element) before it writes there, and later chunks are not touched.
 */
#include "algos/algos.h"
#include "dtype.h"
#include "progress/request.h"
#include "progress/shm.h"

#include <string.h>

#define ALIGN64(_x) (((_x) + 63) & ~(size_t)63)

/* Bytes of a piece by default (UCOLL_SEGMENT_SIZE sets it), where every
 * rank has a processing unit (two slots; else see xchg_slots): at most
 * what the region allows, 256 KiB at p = 2 with 1 MiB regions. Measured
 * for reduce_scatter_block at p = 2 (slowest rank, 7 alternations):
 * 256 KiB pieces took 0.90-0.97x the time of 128 KiB ones from 512 KiB
 * to 8 MiB, and ucoll_tune chose them at 1-32 MiB in three sweeps. An
 * earlier measurement (medians of 3) had found 128 KiB pieces 0.50-0.91x
 * the time of 256 KiB ones; the two placements of this machine's two
 * virtual cores (8-byte ping-pong 0.13 or 0.55 us) move such figures. */
#define XCHG_PIECE (256 * 1024)

/* The same for alltoall's copies (nothing to reduce: a piece is copied in
 * and out once each, and fewer, longer pieces halve the waits). Measured
 * at p = 2 (shm,self, medians of 9 alternations): 256 KiB pieces took
 * 0.90-0.96x the time of 128 KiB ones from 1 to 8 MiB, 0.84-0.90x from
 * 256 KiB to 2 MiB in another run of 7. */
#define XCHG_PIECE_COPY (256 * 1024)

/* Bytes from one piece to the next: 64-byte aligned where `slots` slots of
 * p such pieces of ce elements fit the data area, else packed. */
static size_t xchg_stride(size_t ce, size_t es, int p, size_t data, int slots)
{
    size_t al = ALIGN64(ce * es);

    return (size_t)slots * (size_t)p * al <= data ? al : ce * es;
}

/* Slots of the data area: two where every rank has a processing unit, so
 * that a rank writes chunk k while the others read chunk k-1; one where
 * ranks outnumber them (the model's wake-up, agreed by all), with pieces
 * of the whole area, not capped at XCHG_PIECE: every chunk needs every
 * rank scheduled, twice, and fewer chunks weigh more than the overlap.
 * Measured against two slots (1 MiB regions, 5 alternations): at p = 4
 * alltoall 0.72-0.97x the time from 256 KiB to 4 MiB, rsb 0.77-0.93x from
 * 1 to 4 MiB; at p = 3 alltoall 0.78-0.98x, rsb 0.79-0.94x from 512 KiB;
 * smaller sizes go in one chunk either way. */
static int xchg_slots(const ucoll_algo_params_t *prm)
{
    return prm->model.wake > 0 ? 1 : 2;
}

static int xchg_inline(size_t count, size_t es, int p)
{
    return count * es * (size_t)p <= UCOLL_SHM_INLINE;
}

size_t ucoll__shm_xchg_chunk(size_t count, size_t es, int p, const ucoll_algo_params_t *prm,
                             int how)
{
    int slots = xchg_slots(prm);
    size_t per, ce, cap;

    if (xchg_inline(count, es, p)) {
        return count; /* before any division: a small call's path */
    }
    per = prm->shm_data / (size_t)slots / (size_t)p;
    ce = (per >= 64 ? per & ~(size_t)63 : per) / es;
    cap = prm->seg_size                ? prm->seg_size
          : slots == 1                 ? per
          : how == UCOLL_SHM_XCHG_COPY ? XCHG_PIECE_COPY
                                       : XCHG_PIECE;
    ce = UCOLL_MIN(ce, UCOLL_MAX(cap / es, (size_t)1));
    if (ce == 0) {
        return 0;
    }
    ce = UCOLL_MIN(ce, count);
    if (count / ce + 2 >= UCOLL_SHM_MAX_STEPS / 2) {
        return 0;
    }
    return ce;
}

double ucoll__shm_xchg_waits(size_t count, size_t es, int p, const ucoll_algo_params_t *prm,
                             const ucoll_model_t *m, int how)
{
    size_t ce = ucoll__shm_xchg_chunk(count, es, p, prm, how);
    double n;

    if (ce == 0) {
        return 1e30;
    }
    n = (double)((count + ce - 1) / ce);
    /* the wait for the previous call's readers (end(s-1)) finds them done
     * in a loop of calls, which wait at the copies' step: one wake-up */
    return 2 * ucoll__shm_hop(m) - m->wake + 2 * (n - 1) * (ucoll__shm_hop(m) - m->wake);
}

static uint64_t xchg_op_slots(const ucoll_shm_op_t *op)
{
    return op->slots ? (uint64_t)op->slots : 2; /* allreduce's way: two */
}

/* Start of piece r of chunk k in rank rr's region (op->aux: the stride
 * between pieces, 0 when they are packed inline; allreduce: one piece a
 * slot). */
static inline char *piece(const ucoll_shm_op_t *op, int rr, uint64_t k, int r, size_t stride)
{
    const ucoll_shm_t *sh = op->sh;
    size_t per_slot;
    uint64_t slot;

    if (op->aux == 0) { /* its place is set (ucoll__shm_small_place) */
        return ucoll__shm_small_buf(sh, rr, (op->place - 1) & 1, (size_t)sh->p * stride) +
               (size_t)r * stride;
    }
    per_slot = op->root == UCOLL_SHM_XCHG_ALLREDUCE ? 1 : (size_t)sh->p;
    slot = k % xchg_op_slots(op);
    return ucoll__shm_data(sh, rr) + ((size_t)slot * per_slot + (size_t)r) * stride;
}

/* This rank's piece into its region: alltoall's pieces are only copied
 * out, so ucoll__shm_publish streams them where every rank has a
 * processing unit (two slots; where ranks outnumber them, a reader may run
 * next on the writer's core: at p = 4 on 2 cores it took 1.01-1.17x the
 * time at 2 and 4 MiB). reduce_scatter_block's pieces are read by a
 * reduction, which took them faster from the writer's cache (p = 2, 1-8
 * MiB: 1.03-1.09x the time streamed). */
static void put_piece(ucoll_shm_op_t *op, char *dst, const char *src, size_t len)
{
    if (op->root == UCOLL_SHM_XCHG_COPY && op->slots == 2) {
        ucoll__shm_publish(op, dst, src, len);
    } else {
        ucoll__shm_put(op, dst, src, len);
    }
}

/* Rank order: dst = x(0) op x(1) op ... op x(p-1), len elements, where
 * x(r) is piece pr of chunk k in rank r's region, but for this rank: own. */
static void reduce_pieces(ucoll_shm_op_t *op, char *dst, const char *own, uint64_t k, int pr,
                          size_t len, size_t stride)
{
    int me = op->sh->rank, p = op->sh->p;
    const void *x0 = me == 0 ? own : piece(op, 0, k, pr, stride);
    const void *x1 = me == 1 ? own : piece(op, 1, k, pr, stride);

    ucoll__reduce(dst, x0, x1, len, (ucoll_dtype_t)op->dt, (ucoll_op_t)op->op);
    for (int r = 2; r < p; r++) {
        const void *xr = r == me ? own : piece(op, r, k, pr, stride);

        ucoll__reduce(dst, dst, xr, len, (ucoll_dtype_t)op->dt, (ucoll_op_t)op->op);
    }
}

/* alltoall: this rank's own block, elements off..off+len, from sbuf to rbuf */
static void own_copy(ucoll_shm_op_t *op, size_t off, size_t len)
{
    size_t es = op->esize, at = ((size_t)op->sh->rank * op->count + off) * es;

    ucoll__shm_copy((char *)op->rbuf + at, (const char *)op->sbuf + at, len * es);
}

/* Take this rank's pieces of chunk k (off, len: elements within a block). */
static void take(ucoll_shm_op_t *op, uint64_t k, size_t off, size_t len, size_t stride)
{
    const ucoll_shm_t *sh = op->sh;
    size_t es = op->esize, bc = op->count;
    int me = sh->rank, p = sh->p;
    const char *in = op->sbuf;
    char *out = op->rbuf;

    if (op->root == UCOLL_SHM_XCHG_ALLREDUCE) {
        reduce_pieces(op, out + off * es,
                      op->in_place ? piece(op, me, k, 0, stride) : in + off * es, k, 0, len,
                      stride);
        return;
    }
    if (op->root == UCOLL_SHM_XCHG_COPY) {
        for (int r = 0; r < p; r++) {
            if (r != me) {
                ucoll__shm_copy(out + ((size_t)r * bc + off) * es, piece(op, r, k, me, stride),
                                len * es);
            } else if (!op->in_place && op->slots == 1) {
                own_copy(op, off, len);
            }
        }
        return;
    }
    reduce_pieces(op, out + off * es, in + ((size_t)me * bc + off) * es, k, me, len, stride);
}

int ucoll__shm_xchg_poll(ucoll_shm_op_t *op)
{
    const ucoll_shm_t *sh = op->sh;
    size_t es = op->esize, ce = op->chunk, bc = op->count;
    size_t stride = op->aux ? (size_t)op->aux : bc * es;
    uint64_t s = op->seq, n = bc <= ce ? 1 : (bc + ce - 1) / ce, since = s - 1;
    int me = sh->rank, p = sh->p, area;
    const char *in = op->sbuf;

    if (op->aux == 0) {
        ucoll__shm_small_place(op, (size_t)p * bc * es, &area, &since); /* one chunk */
    }
    for (;;) {
        uint64_t k = op->k;
        size_t off = (size_t)k * ce, len = UCOLL_MIN(ce, bc - off);

        if (op->phase == 0) {
            uint64_t S = xchg_op_slots(op);

            if (!ucoll__shm_all_reached(op, k < S ? ucoll__shm_end(since)
                                                  : ucoll__shm_pos(s, 2 * (k - S) + 2))) {
                return UCOLL_SHM_AGAIN;
            }
            if (op->root == UCOLL_SHM_XCHG_ALLREDUCE) {
                ucoll__shm_put(op, piece(op, me, k, 0, stride), in + off * es, len * es);
            }
            for (int r = 0; r < p && op->root != UCOLL_SHM_XCHG_ALLREDUCE; r++) {
                if (r != me) {
                    put_piece(op, piece(op, me, k, r, stride), in + ((size_t)r * bc + off) * es,
                              len * es);
                }
            }
            ucoll__shm_post(sh, ucoll__shm_pos(s, 2 * k + 1));
            if (op->root == UCOLL_SHM_XCHG_COPY && !op->in_place && op->slots == 2) {
                own_copy(op, off, len); /* while the others write theirs */
            }
            op->phase = 1;
        }
        if (!ucoll__shm_all_reached(op, ucoll__shm_pos(s, 2 * k + 1))) {
            return UCOLL_SHM_AGAIN;
        }
        take(op, k, off, len, stride);
        op->phase = 0;
        op->k = ++k;
        if (k == n) {
            if (op->aux == 0) {
                ucoll__shm_owe_end(op); /* a small call: its pos(s, 1) is out */
            } else {
                ucoll__shm_post(sh, ucoll__shm_end(s));
            }
            return UCOLL_OK;
        }
        ucoll__shm_post(sh, ucoll__shm_pos(s, 2 * k));
    }
}

static int xchg_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                      const ucoll_algo_params_t *prm, ucoll_req_t *req, int how,
                      ucoll_sched_t *rival, int tag)
{
    size_t ce = ucoll__shm_xchg_chunk(a->count, a->esize, comm->size, prm, how);
    ucoll_shm_op_t *op;
    int stream;

    if (a->count == 0) {
        ucoll__req_complete(req, UCOLL_OK); /* every rank knows: nothing to do */
        return UCOLL_OK;
    }
    if (ce == 0) {
        /* the model never picks it then (its cost); forced, say why */
        ucoll_error("%s shm: %d pieces of %zu bytes do not fit the %zu-byte regions "
                    "(UCOLL_SHM_SIZE)",
                    ucoll__coll_name(a->coll), 2 * comm->size, a->esize, prm->shm_data);
        return UCOLL_ERR_ARG;
    }
    op = ucoll__shm_op_new(comm, a, req, ucoll__shm_xchg_poll);
    if (op == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    op->root = how;
    op->chunk = ce;
    op->slots = xchg_slots(prm);
    op->stream_min = prm->shm_stream;
    op->aux = xchg_inline(a->count, a->esize, comm->size)
                  ? 0
                  : xchg_stride(ce, a->esize, comm->size, prm->shm_data, op->slots);
    /* the only form that streams (put_piece) */
    stream = prm->shm_stream_adapt && how == UCOLL_SHM_XCHG_COPY && op->slots == 2;
    if (rival != NULL) {
        ucoll__shm_duel_arm(
            op, how == UCOLL_SHM_XCHG_COPY ? UCOLL_SHM_DUEL_ALLTOALL : UCOLL_SHM_DUEL_RSB, rival,
            tag, comm->ctx->cfg.shm_duel == UCOLL_SHM_DUEL_TURN, stream);
    } else if (stream) {
        ucoll__shm_stream_adapt(op, UCOLL_SHM_ADAPT_ALLTOALL, a->count * a->esize);
    }
    ucoll__shm_op_start(op);
    return UCOLL_OK;
}

int ucoll__shm_xchg_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                          const ucoll_algo_params_t *prm, ucoll_req_t *req, int how)
{
    return xchg_start(comm, a, prm, req, how, NULL, 0);
}

int ucoll__shm_xchg_duel(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                         const ucoll_algo_params_t *prm, ucoll_req_t *req, int how,
                         ucoll_sched_t *rival, int tag)
{
    return xchg_start(comm, a, prm, req, how, rival, tag);
}

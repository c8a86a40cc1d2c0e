/*
 * Allreduce, shm: through the communicator's shared memory
 * (progress/shm.h). Also the engine of reduce's shm row (the root alone
 * gathers). Four ways, all reducing in rank order (in_0 op in_1 op ... op
 * in_{p-1}), so every rank gets bit-identical results:
 *
 * one-shot (small vectors): every rank copies its input into its region
 * and publishes pos(s, 1); once all have, every rank reduces all p inputs,
 * read in place from the regions, into its rbuf, and publishes end(s).
 * A reduce's root copies nothing: nobody else reads its input, which it
 * reads from sbuf (the others publish end(s) at once: they are done).
 * Inputs of at most UCOLL_SHM_INLINE bytes in calls that follow each
 * other alternate two places (ucoll__shm_small_place).
 *   Cost: 2·α_shm + m·λ + (p-1)·m·(γ + λ); for reduce one α_shm less (only
 *   the root waits, and only for the inputs).
 *
 * sliced (larger): the vector goes in chunks that fit a region as input
 * plus a 1/p result slice; chunk k takes three steps:
 *   A  (pos 3k+1) copy the chunk of the input into the region, but for
 *      this rank's own slice, which no other rank reads, once every rank is
 *      through reading the previous chunk's (pos 3k-1);
 *   B  (pos 3k+2) once every input is there, reduce this rank's slice of
 *      the chunk, reading every other region in place and its own input
 *      from sbuf, into its result slot;
 *   C  (pos 3k+3) once every slice is reduced, copy all slices into rbuf
 *      (reduce: the root only; the others just move on).
 * A rank's result slot is rewritten in B of chunk k+1 only after every
 * rank has reached 3k+4, i.e. finished C of chunk k.
 *   Cost: 3n·α_shm + m·λ + ((p-1)/p)·m·(γ + 2λ), n = chunks (the wake-up
 *   of descheduled peers, when ranks outnumber processing units, counted
 *   for the first chunk only). The copy in is (p-1)/p·m since a rank's
 *   own slice stays in sbuf (0.95-0.99x the time at p = 4, 4-16 MiB, 5
 *   alternations), but the charge keeps m·λ: the cross-overs with the
 *   pipelined ways were set against it, and the model already
 *   undercharged this way against the pipelined one at p = 2.
 *
 * pipelined to the root (reduce only): the region's data area is S >= 2
 * slots of a chunk; the others copy chunk k of their input into slot
 * k mod S and publish pos(s, k+1) (end(s) for the last chunk: they are
 * then done), once the root is through chunk k-S (its pos(s, k-S+1)), so
 * a vector the area holds keeps each chunk in one place from call to call
 * (an unchanged input then leaves the slots unwritten, ucoll__shm_put;
 * with two slots, chunks of 128 KiB made an unchanged 512 KiB alternate
 * and rewrite every line); the root reduces
 * chunk k straight into rbuf, in rank order, its own input read from
 * sbuf, as soon as every other rank has published chunk k, then publishes
 * pos(s, k+1), and end(s) after the last. The root copies nothing (but
 * its own chunk, into its slot, when it reduces in place and is not rank
 * 0: rank order would overwrite its input before reading it), and its
 * reductions overlap the others' copies: with c bytes a chunk and n
 * chunks, a two-stage pipeline,
 *   Cost: 2·α_shm + (n-1)·α_shm' + c·λ + (p-1)·c·γ
 *         + (n-1)·max(c·λ, (p-1)·c·γ)         (α_shm' without a wake-up).
 *   At p = 2 the sliced way costs the root a copy of its input, half a
 *   reduction and a copy of the result per chunk, this one a reduction.
 *
 * pipelined (allreduce only; run by the exchange engine's loop,
 * algos/shm_xchg.c): the data area is two slots; every rank
 * copies chunk k of its input into slot k mod 2 and publishes pos(s, 2k+1)
 * (once every rank has reduced chunk k-2, reached 2k-2, which read that
 * slot); once every rank has, it reduces chunk k in rank order straight
 * into rbuf, the others' inputs read from their slots and its own from
 * sbuf (from its slot in place: rbuf is written before rank order reads
 * it), and publishes pos(s, 2k+2). One copy of the input and the whole
 * reduction per rank, no result slots and no copy out:
 *   Cost: 2·α_shm + 2(n-1)·α_shm' + m·λ + (p-1)·m·γ.
 *   Against sliced ((p-1)/p of the reduction, but a copy of the result and
 *   a third step per chunk) it wins at p = 2 at every size (measured 0.47-
 *   0.65x its time from 512 KiB to 8 MiB) and, where ranks outnumber
 *   cores, up to where one wake-up less no longer pays for the larger
 *   reduction (measured at p = 3 up to 1 MiB, p = 4 up to 256 KiB; the
 *   cost puts the cross-overs at about 1.5 MiB and 380 KiB).
 *
 * Which one runs depends on m, p, the region size and the segment size
 * (when set, one-shot up to one segment): inputs every rank shares (the
 * root's in-place flag is not one of them: it only decides that copy).
 */
#include "allreduce.h"
#include "dtype.h"
#include "progress/request.h"
#include "progress/shm.h"

#include <string.h>

#define ALIGN64(_x) (((_x) + 63) & ~(size_t)63)
/* Largest chunk of the pipelined allreduce (bytes): with 1 MiB regions a
 * slot, 512 KiB less 64 B (at p = 2, 256 KiB to 512 KiB chunks measured
 * within 7% of each other, 64 KiB ones 1.2x slower). */
#define ALLPIPE_MAX (512 * 1024)

/* Most of the data area the sliced way fills per chunk: with the 4 MiB areas
 * of oversubscribed nodes, chunks of a whole area made 4 MiB at p = 3 and 4
 * take 1.14x the time of 1 MiB-area chunks (7 alternations; three ranks'
 * 3 MiB chunks leave the cache). */
#define SLICED_AREA (1024 * 1024)

/* From this size up, a reduce where ranks outnumber processing units goes
 * pipelined to the root whatever the model says. The model charges each
 * rank's reduction as if all ran at once, so the sliced way's 1/p of the
 * reduction a rank looked cheaper; but only as many ranks as processing
 * units run at a time, and each of the sliced way's three steps a chunk
 * waits for every rank to be scheduled, where the pipeline's others only
 * copy and wait for the root. Measured on 2 cores, p = 4, the mean over
 * ranks (OSU's figure; 5 alternations, pipelined / sliced): 0.30-0.45x
 * from 256 KiB to 1 MiB, 0.62x at 2 MiB, 0.87x at 4 MiB; the default,
 * new / old, 0.41-0.96x from 512 KiB to 16 MiB (3 alternations). The
 * slowest rank (the root) gains less, new / old 0.76-0.91x from 512 KiB
 * to 16 MiB, 1.04x at 256 KiB (5 alternations): the others no longer wait
 * for the whole reduction. p = 3 took this way already, by the model.
 * The row then costs what this way's model says: below 256 KiB its
 * overestimated reduction would hand the call to knomial, though it
 * measured 0.82-0.88x one-shot's time at p = 3 from 64 to 128 KiB. */
#define ROOTPIPE_OVERSUB_MIN (256 * 1024)

/* From this size up, an allreduce where ranks outnumber processing units
 * goes sliced whatever the model says. The model charges the sliced way
 * one wake-up more than the pipelined one (three steps to its two), but
 * the ranks that a chunk's first step woke are running for the next two.
 * Measured on 2 cores (slowest rank, a job each, 7 alternations, sliced
 * against the default, then pipelined): p = 3 0.98x at 256 KiB, 0.89x at
 * 512 KiB, 0.94x at 1 MiB, and all three tuner jobs ranked sliced first
 * at 512 KiB; p = 4 0.84x at 256 KiB, even from 512 KiB (sliced already).
 * From 128 KiB the model's one-shot lost too: sliced / default 0.98x at
 * p = 3 and 0.77x at p = 4 at 128 KiB, 0.89x and 0.75x at 192 KiB, 0.44x
 * at p = 6, 0.99x at p = 8 (medians of 8 alternations, 4 at p = 6 and 8),
 * and the tuner ranked sliced first at 128 KiB at p = 3 and 4 in each of
 * its runs, the default 1.35-1.51x its time. Below, sliced's three steps,
 * each waiting for every rank to be scheduled, lose: 3-4x one-shot's time
 * at 64 KiB and up to 96 KiB at p = 4, so the model's choice stays. */
#define SLICED_OVERSUB_MIN (128 * 1024)

/* Smallest chunk the pipelined-to-root way cuts a vector into that a
 * quarter slot holds whole, where each rank has a processing unit.
 * Measured (slowest rank, 7 alternations): at p = 2 (512 KiB slots),
 * 32-128 KiB went as one chunk: in chunks of 16 or 32 KiB they took
 * 0.86-0.93x the time (8 KiB chunks were slower again, 1.06-1.13x 16 KiB
 * ones). */
#define ROOTPIPE_SPLIT_MIN (16 * 1024)

/* The pipelined-to-root way's chunk where ranks outnumber processing
 * units. The model's choice among a slot and its halves (down to half the
 * vector, 256 KiB at least) made 512 KiB to 32 MiB go in chunks of 256 KiB
 * to 2 MiB, so the root reduced little while the others were descheduled
 * and then all of a chunk at once. ucoll_bench reduce --fresh --varied,
 * slowest rank, chunks of 64 KiB against the model's (medians of 4-10
 * alternations, 2 cores): p = 3 0.53x at 256 KiB, 0.72-0.87x at 512 KiB to
 * 2 MiB, 0.95-0.98x at 4-32 MiB; p = 4 0.89-0.97x at 256 KiB to 2 MiB,
 * 0.91-0.93x at 4-16 MiB, 1.03x at 32 MiB; p = 8 0.98-1.07x. Chunks of
 * 128 and 256 KiB lost at p = 4 (1.00-1.17x from 4 MiB), 32 KiB ones were
 * alike (0.84-1.11x). */
#define ROOTPIPE_OVERSUB_CHUNK (64 * 1024)

/* op->aux: the way; op->root: the reduce's root, or -1 (pipelined: the engine's
 * form and slot stride instead, see ucoll__allreduce_shm_start). */
enum { WAY_ONESHOT = 0, WAY_SLICED = 1, WAY_ROOTPIPE = 2, WAY_ALLPIPE = 3 };

/* Smallest vector whose way is chosen per call by measurement
 * (UCOLL_SHM_WAY_ADAPT): below it a call takes a few microseconds, of
 * which the choice's own work (the tries, the timed calls' clocks and
 * records) took 5-15% at 16-32 KiB at p = 2, the same way taken. */
#define WAY_ADAPT_MIN (64 * 1024)

/* Elements per chunk of the sliced way: input plus the largest slice fit
 * the data area. */
static size_t sliced_chunk(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm)
{
    size_t es = a->esize, data = UCOLL_MIN(prm->shm_data, (size_t)SLICED_AREA), ce;

    if (data < 256 + 2 * es) {
        return 1;
    }
    ce = (size_t)((double)(data - 64) * p / ((double)(p + 1) * (double)es));
    if (prm->seg_size) {
        ce = UCOLL_MIN(ce, UCOLL_MAX(prm->seg_size / es, (size_t)1));
    }
    ce = UCOLL_MAX(ce, a->count / (UCOLL_SHM_MAX_STEPS / 3 - 1) + 1);
    while (ce > 1 && ALIGN64(ce * es) + (ce + (size_t)p - 1) / (size_t)p * es > data) {
        ce--;
    }
    return UCOLL_MAX(ce, (size_t)1);
}

static double lambda_of(const ucoll_model_t *m)
{
    return m->lambda > 0 ? m->lambda : 8e-11;
}

static double gamma_of(const ucoll_model_t *m)
{
    return m->gamma > 0 ? m->gamma : 1e-10;
}

/* Reduce (a->coll): the others only publish their input, the root alone
 * waits: one wait, not two. */
static double oneshot_cost(const ucoll_coll_args_t *a, int p, const ucoll_model_t *m)
{
    double bytes = (double)(a->count * a->esize);
    int waits = a->coll == UCOLL_COLL_REDUCE ? 1 : 2;

    return waits * ucoll__shm_hop(m) + bytes * lambda_of(m) +
           (p - 1) * bytes * (gamma_of(m) + lambda_of(m));
}

static double sliced_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                          const ucoll_model_t *m)
{
    double bytes = (double)(a->count * a->esize), f = (p - 1.0) / p;
    size_t ce = sliced_chunk(a, p, prm);
    double n = (double)((a->count + ce - 1) / ce);

    /* a descheduled peer is waited for once: the chunks after the first
     * find the others running (p = 8 on 2 cores: 16 MiB in 14.7 ms, where
     * charging every step a wake-up had rabenseifner, 23.2 ms, chosen) */
    return 3 * ucoll__shm_hop(m) + 3 * (n - 1) * (ucoll__shm_hop(m) - m->wake) +
           bytes * lambda_of(m) + f * bytes * (gamma_of(m) + 2 * lambda_of(m));
}

static double rootpipe_time(const ucoll_coll_args_t *a, int p, const ucoll_model_t *m, size_t ce)
{
    double n = (double)((a->count + ce - 1) / ce);
    double c = (double)(UCOLL_MIN(ce, a->count) * a->esize), lam = lambda_of(m);
    double red = (p - 1) * c * gamma_of(m);

    return 2 * ucoll__shm_hop(m) + (n - 1) * (ucoll__shm_hop(m) - m->wake) + c * lam + red +
           (n - 1) * UCOLL_MAX(c * lam, red);
}

/* Whether rootpipe_chunk weighs half of a chunk of ce elements after h
 * halvings: never below 8 KiB; the first two halvings of a slot always;
 * further ones while the chunk holds more than half the vector and its half
 * stays ROOTPIPE_SPLIT_MIN bytes or more. */
static int rootpipe_halve(int h, size_t ce, size_t es, size_t count)
{
    if (ce <= 1 || ce * es < 8192) {
        return 0;
    }
    return h < 2 || (ce > count / 2 && ce / 2 * es >= ROOTPIPE_SPLIT_MIN);
}

/* Elements per chunk of the pipelined-to-root way: two fit the data area;
 * the segment size when set; ROOTPIPE_OVERSUB_CHUNK where ranks outnumber
 * processing units; else the quickest under the model of a slot, a half
 * and a quarter of it (smaller chunks lost here: 64 KiB ones made 1-4 MiB
 * at p = 2 1.1-1.4x slower than 128-512 KiB ones, whose times were alike
 * but at 512 KiB, which a whole slot cut in two unequal chunks), and
 * halves of those down to half the vector while they stay
 * ROOTPIPE_SPLIT_MIN or more; 0 where the positions of one call would run
 * out. */
static size_t rootpipe_chunk(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                             const ucoll_model_t *m)
{
    size_t es = a->esize, slot = (prm->shm_data / 2) & ~(size_t)63, ce, best;

    if (slot < es || a->count == 0) {
        return 0;
    }
    ce = slot / es;
    if (prm->seg_size) {
        ce = UCOLL_MIN(ce, UCOLL_MAX(prm->seg_size / es, (size_t)1));
    } else if (m->wake > 0) {
        ce = UCOLL_MIN(ce, UCOLL_MAX((size_t)ROOTPIPE_OVERSUB_CHUNK / es, (size_t)1));
    } else {
        best = ce;
        for (int h = 0; rootpipe_halve(h, ce, es, a->count); h++) {
            ce /= 2;
            if (rootpipe_time(a, p, m, ce) < rootpipe_time(a, p, m, best)) {
                best = ce;
            }
        }
        ce = best;
    }
    if (a->count / ce + 2 >= UCOLL_SHM_MAX_STEPS) {
        return 0;
    }
    return ce;
}

static double rootpipe_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                            const ucoll_model_t *m)
{
    size_t ce = rootpipe_chunk(a, p, prm, m);

    return ce == 0 ? 1e30 : rootpipe_time(a, p, m, ce);
}

/* Elements per chunk of the pipelined way (allreduce): two fit the data
 * area, at most ALLPIPE_MAX bytes, at most the segment size when set; 0
 * where the positions of one call would run out. */
static size_t allpipe_chunk(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm)
{
    size_t es = a->esize, slot = (prm->shm_data / 2) & ~(size_t)63, ce;

    ce = UCOLL_MIN(slot, (size_t)ALLPIPE_MAX) / es;
    if (prm->seg_size) {
        ce = UCOLL_MIN(ce, UCOLL_MAX(prm->seg_size / es, (size_t)1));
    }
    if (ce == 0 || a->count / ce + 2 >= UCOLL_SHM_MAX_STEPS / 2) {
        return 0;
    }
    return UCOLL_MIN(ce, a->count);
}

static double allpipe_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                           const ucoll_model_t *m)
{
    size_t ce = allpipe_chunk(a, prm);
    double bytes = (double)(a->count * a->esize), n;

    if (ce == 0) {
        return 1e30;
    }
    n = (double)((a->count + ce - 1) / ce);
    return 2 * ucoll__shm_hop(m) + 2 * (n - 1) * (ucoll__shm_hop(m) - m->wake) +
           bytes * lambda_of(m) + (p - 1) * bytes * gamma_of(m);
}

/* The way UCOLL_SHM_WAY or a tuning rule asks for, where the call can
 * take it (else the model's, `way`): one-shot when the vector fits a
 * region; pipelined to the root for a reduce, pipelined for an allreduce
 * beyond the inline payload, each while the positions of one call last.
 * Every input is agreed by the communicator's ranks. */
static int way_asked(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                     const ucoll_model_t *m, int way)
{
    size_t bytes = a->count * a->esize;
    int reduce = a->coll == UCOLL_COLL_REDUCE;

    switch (prm->shm_way) {
    case UCOLL_SHM_WAY_ONESHOT: return bytes <= prm->shm_data ? WAY_ONESHOT : way;
    case UCOLL_SHM_WAY_SLICED: return WAY_SLICED;
    case UCOLL_SHM_WAY_ROOT:
        return reduce && rootpipe_chunk(a, p, prm, m) != 0 ? WAY_ROOTPIPE : way;
    case UCOLL_SHM_WAY_PIPE:
        return a->coll == UCOLL_COLL_ALLREDUCE && bytes > UCOLL_SHM_INLINE &&
                       allpipe_chunk(a, prm) != 0
                   ? WAY_ALLPIPE
                   : way;
    default: return way;
    }
}

/* The way for the call: one-shot when the vector fits a region (one
 * segment when the segment size is set) and the model prefers it; for a
 * reduce, pipelined to the root where the model prefers that; for an
 * allreduce beyond the inline payload, pipelined where the model prefers
 * that. */
static int shm_way(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                   const ucoll_model_t *m)
{
    size_t bytes = a->count * a->esize;
    int way;

    if (bytes <= UCOLL_SHM_INLINE && bytes <= prm->shm_data && prm->seg_size == 0 &&
        ucoll__shm_hop(m) >= (p - 1) * (double)bytes * (gamma_of(m) + lambda_of(m))) {
        /* what the costs below come to, without computing them on every
         * small call (they took a tenth of an 8-byte reduce's root): one
         * chunk each, the sliced way costs at least a hop minus
         * (p-1)·bytes·(γ+λ) more than one-shot, the pipelined to the root
         * a hop minus (p-1)·bytes·λ more (a reduce), and the pipelined
         * allreduce needs more than the inline payload */
        return way_asked(a, p, prm, m, WAY_ONESHOT);
    }
    if (bytes > prm->shm_data) {
        way = WAY_SLICED;
    } else if (prm->seg_size) {
        way = bytes <= prm->seg_size ? WAY_ONESHOT : WAY_SLICED;
    } else {
        way = oneshot_cost(a, p, m) <= sliced_cost(a, p, prm, m) ? WAY_ONESHOT : WAY_SLICED;
    }
    if (a->coll == UCOLL_COLL_REDUCE && m->wake > 0 && bytes >= ROOTPIPE_OVERSUB_MIN &&
        rootpipe_chunk(a, p, prm, m) != 0) {
        way = WAY_ROOTPIPE; /* ranks outnumber processing units: see ROOTPIPE_OVERSUB_MIN */
    } else if (a->coll == UCOLL_COLL_REDUCE &&
               rootpipe_cost(a, p, prm, m) <
                   (way == WAY_ONESHOT ? oneshot_cost(a, p, m) : sliced_cost(a, p, prm, m))) {
        way = WAY_ROOTPIPE;
    }
    if (a->coll == UCOLL_COLL_ALLREDUCE && m->wake > 0 && bytes >= SLICED_OVERSUB_MIN &&
        prm->seg_size == 0) {
        way = WAY_SLICED; /* ranks outnumber processing units: see SLICED_OVERSUB_MIN */
    } else if (a->coll == UCOLL_COLL_ALLREDUCE && bytes > UCOLL_SHM_INLINE &&
               allpipe_cost(a, p, prm, m) <
                   (way == WAY_ONESHOT ? oneshot_cost(a, p, m) : sliced_cost(a, p, prm, m))) {
        way = WAY_ALLPIPE;
    }
    return way_asked(a, p, prm, m, way);
}

double ucoll__allreduce_shm_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                 const ucoll_model_t *m)
{
    switch (shm_way(a, p, prm, m)) {
    case WAY_ONESHOT: return oneshot_cost(a, p, m);
    case WAY_ROOTPIPE: return rootpipe_cost(a, p, prm, m);
    case WAY_ALLPIPE: return allpipe_cost(a, p, prm, m);
    default: return sliced_cost(a, p, prm, m);
    }
}

/* dst = in_0 op in_1 op ... op in_{p-1}, n elements at byte offset off of
 * every rank's data area (place < 0) or its one-shot payload place `place`
 * (ucoll__shm_small_place), but rank `own_rank`'s input read from `own`
 * (no rank when own_rank < 0). */
static void reduce_all(const ucoll_shm_op_t *op, void *dst, int place, size_t off, size_t n,
                       int own_rank, const void *own)
{
    const ucoll_shm_t *sh = op->sh;
    size_t bytes = op->count * op->esize;
#define IN(_r)                                                          \
    ((_r) == own_rank ? own                                             \
     : place < 0      ? (const void *)(ucoll__shm_data(sh, (_r)) + off) \
                      : (const void *)(ucoll__shm_small_buf(sh, (_r), place, bytes) + off))

    ucoll__reduce(dst, IN(0), IN(1), n, (ucoll_dtype_t)op->dt, (ucoll_op_t)op->op);
    for (int r = 2; r < sh->p; r++) {
        ucoll__reduce(dst, dst, IN(r), n, (ucoll_dtype_t)op->dt, (ucoll_op_t)op->op);
    }
#undef IN
}

static int oneshot_poll(ucoll_shm_op_t *op)
{
    const ucoll_shm_t *sh = op->sh;
    size_t bytes = op->count * op->esize;
    uint64_t s = op->seq, since = s - 1;
    int root = op->root, inl = bytes <= UCOLL_SHM_INLINE, area = 1, own;

    if (inl) {
        ucoll__shm_small_place(op, bytes, &area, &since);
    }
    if (sh->rank == root && (op->sbuf != op->rbuf || root < 2)) {
        /* reduce: nobody reads the root's region, so the root neither
         * copies its input there nor publishes that it did; it reads it
         * from sbuf (in place, rank order would overwrite it before
         * reading it from rank 2 on) */
        if (!ucoll__shm_all_reached(op, ucoll__shm_pos(s, 1))) {
            return UCOLL_SHM_AGAIN;
        }
        reduce_all(op, op->rbuf, area, 0, op->count, root, op->sbuf);
        ucoll__shm_post(sh, ucoll__shm_end(s));
        return UCOLL_OK;
    }
    if (op->phase == 0) {
        if (!ucoll__shm_all_reached(op, ucoll__shm_end(since))) {
            return UCOLL_SHM_AGAIN;
        }
        ucoll__shm_put(op, ucoll__shm_small_buf(sh, sh->rank, area, bytes), op->sbuf, bytes);
        if (root >= 0 && sh->rank != root) {
            /* reduce: the root reads it before it is done with call s,
             * and nobody writes this place again before that */
            ucoll__shm_post(sh, ucoll__shm_end(s));
            return UCOLL_OK;
        }
        ucoll__shm_post(sh, ucoll__shm_pos(s, 1));
        op->phase = 1;
    }
    if (!ucoll__shm_all_reached(op, ucoll__shm_pos(s, 1))) {
        return UCOLL_SHM_AGAIN;
    }
    /* this rank's own input from sbuf, as the root of a reduce does, not
     * from its region: the same bits, and its region's first line stays
     * with the peers that read it (8-byte allreduce at p = 2, CPUs far
     * apart: 0.42 us against 0.56, medians of 8 alternations). In place
     * from rank 2 on, the first reductions into rbuf overwrite it first */
    own = (op->sbuf != op->rbuf || sh->rank < 2) ? sh->rank : -1;
    reduce_all(op, op->rbuf, area, 0, op->count, own, op->sbuf);
    if (inl) {
        ucoll__shm_owe_end(op); /* its pos(s, 1) is out */
    } else {
        ucoll__shm_post(sh, ucoll__shm_end(s));
    }
    return UCOLL_OK;
}

static int sliced_poll(ucoll_shm_op_t *op)
{
    const ucoll_shm_t *sh = op->sh;
    size_t es = op->esize, ce = op->chunk;
    uint64_t s = op->seq, nch = (op->count + ce - 1) / ce;
    int me = sh->rank, p = sh->p;
    size_t res_off = ALIGN64(ce * es); /* result slot, after the input */

    for (;;) {
        uint64_t k = op->k;
        size_t off = (size_t)k * ce, len = UCOLL_MIN(ce, op->count - off);

        switch (op->phase) {
        case 0: { /* A: my chunk of input into my region, but my own slice */
            size_t so = ucoll__block_offset(len, p, me), sc = ucoll__block_count(len, p, me);
            const char *in = (const char *)op->sbuf + off * es;

            if (!ucoll__shm_all_reached(op, k == 0 ? ucoll__shm_end(s - 1)
                                                   : ucoll__shm_pos(s, 3 * k - 1))) {
                return UCOLL_SHM_AGAIN;
            }
            ucoll__shm_put(op, ucoll__shm_data(sh, me), in, so * es);
            ucoll__shm_put(op, ucoll__shm_data(sh, me) + (so + sc) * es, in + (so + sc) * es,
                           (len - so - sc) * es);
            ucoll__shm_post(sh, ucoll__shm_pos(s, 3 * k + 1));
            op->phase = 1;
        }
            /* fall through */
        case 1: { /* B: my slice, reduced over every region */
            size_t so = ucoll__block_offset(len, p, me), sc = ucoll__block_count(len, p, me);

            if (!ucoll__shm_all_reached(op, ucoll__shm_pos(s, 3 * k + 1))) {
                return UCOLL_SHM_AGAIN;
            }
            if (sc) {
                reduce_all(op, ucoll__shm_data(sh, me) + res_off, -1, so * es, sc, me,
                           (const char *)op->sbuf + (off + so) * es);
            }
            ucoll__shm_post(sh, ucoll__shm_pos(s, 3 * k + 2));
            op->phase = 2;
        }
            /* fall through */
        default: /* C: every slice into rbuf */
            if (op->root < 0 || op->root == me) {
                if (!ucoll__shm_all_reached(op, ucoll__shm_pos(s, 3 * k + 2))) {
                    return UCOLL_SHM_AGAIN;
                }
                for (int r = 0; r < p; r++) {
                    size_t ro = ucoll__block_offset(len, p, r), rc = ucoll__block_count(len, p, r);
                    ucoll__shm_copy((char *)op->rbuf + (off + ro) * es,
                                    ucoll__shm_data(sh, r) + res_off, rc * es);
                }
            }
            op->k = ++k;
            op->phase = 0;
            if (k == nch) {
                ucoll__shm_post(sh, ucoll__shm_end(s));
                return UCOLL_OK;
            }
            ucoll__shm_post(sh, ucoll__shm_pos(s, 3 * k));
        }
    }
}

static int rootpipe_poll(ucoll_shm_op_t *op)
{
    const ucoll_shm_t *sh = op->sh;
    size_t es = op->esize, ce = op->chunk, slot = ALIGN64(ce * es);
    uint64_t s = op->seq, nch = (op->count + ce - 1) / ce;
    uint64_t S = sh->data_size / slot; /* slots: 2 or more (rootpipe_chunk) */
    int me = sh->rank, p = sh->p, root = op->root;

    for (; op->k < nch; op->k++) {
        uint64_t k = op->k;
        size_t off = (size_t)k * ce, len = UCOLL_MIN(ce, op->count - off);
        char *mine = ucoll__shm_data(sh, me) + (k % S) * slot;

        if (me != root) {
            /* my slot k mod S is free once the root is through chunk k-S
             * (and, for the first S, once everyone is done with s-1) */
            if (k < S ? !ucoll__shm_all_reached(op, ucoll__shm_end(s - 1))
                      : ucoll__shm_load(sh, root) < ucoll__shm_pos(s, k - S + 1)) {
                return UCOLL_SHM_AGAIN;
            }
            ucoll__shm_put(op, mine, (const char *)op->sbuf + off * es, len * es);
            ucoll__shm_post(sh, k + 1 == nch ? ucoll__shm_end(s) : ucoll__shm_pos(s, k + 1));
            continue;
        }
        if (!ucoll__shm_all_reached(op, ucoll__shm_pos(s, k + 1))) {
            return UCOLL_SHM_AGAIN;
        }
        {
            const char *own = (const char *)op->sbuf + off * es;
            char *dst = (char *)op->rbuf + off * es;
            const void *x0, *x1;

            if (op->sbuf == op->rbuf && root != 0) {
                /* rank order writes dst before reading it */
                ucoll__shm_put(op, mine, own, len * es);
                own = mine;
            }
            x0 = root == 0 ? own : ucoll__shm_data(sh, 0) + (k % S) * slot;
            x1 = root == 1 ? own : ucoll__shm_data(sh, 1) + (k % S) * slot;
            ucoll__reduce(dst, x0, x1, len, (ucoll_dtype_t)op->dt, (ucoll_op_t)op->op);
            for (int r = 2; r < p; r++) {
                const void *xr = r == root ? own : ucoll__shm_data(sh, r) + (k % S) * slot;

                ucoll__reduce(dst, dst, xr, len, (ucoll_dtype_t)op->dt, (ucoll_op_t)op->op);
            }
        }
        ucoll__shm_post(sh, k + 1 == nch ? ucoll__shm_end(s) : ucoll__shm_pos(s, k + 1));
    }
    return UCOLL_OK;
}

/* The way measured against the model's `way` where the way is chosen per
 * call (UCOLL_SHM_WAY_ADAPT): sliced, or where the model takes sliced,
 * pipelined (to the root for a reduce), else one-shot; -1 where the call
 * can take none of them. Measured at p = 2 with the tuner's method (each
 * call after a barrier), a reduce of 128 KiB took 0.87x the model's time
 * sliced while the host ran the two virtual CPUs on cores that share a
 * cache, and 1.35x on cores that do not; an allreduce of 8 MiB 0.84-0.88x
 * and 1.28-1.55x. */
static int alt_way(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                   const ucoll_model_t *m, int way)
{
    size_t bytes = a->count * a->esize;

    if (way != WAY_SLICED) {
        return WAY_SLICED;
    }
    if (a->coll == UCOLL_COLL_REDUCE && rootpipe_chunk(a, p, prm, m) != 0) {
        return WAY_ROOTPIPE;
    }
    if (a->coll == UCOLL_COLL_ALLREDUCE && bytes > UCOLL_SHM_INLINE && allpipe_chunk(a, prm) != 0) {
        return WAY_ALLPIPE;
    }
    return bytes <= prm->shm_data ? WAY_ONESHOT : -1;
}

/* The poll, root, aux and chunk of way for the call a (op's fields). */
static void way_cfg(ucoll_shm_way_cfg_t *w, const ucoll_coll_args_t *a, int p,
                    const ucoll_algo_params_t *prm, int root, int way)
{
    w->way = way;
    w->poll = way == WAY_ONESHOT   ? oneshot_poll
              : way == WAY_SLICED  ? sliced_poll
              : way == WAY_ALLPIPE ? ucoll__shm_xchg_poll
                                   : rootpipe_poll;
    w->root = root;
    w->aux = (uint64_t)way;
    w->chunk = way == WAY_ALLPIPE    ? allpipe_chunk(a, prm)
               : way == WAY_SLICED   ? sliced_chunk(a, p, prm)
               : way == WAY_ROOTPIPE ? rootpipe_chunk(a, p, prm, &prm->model)
                                     : a->count;
    if (way == WAY_ALLPIPE) { /* the exchange engine's third form (algos/shm_xchg.c) */
        w->root = UCOLL_SHM_XCHG_ALLREDUCE;
        w->aux = ALIGN64(w->chunk * a->esize);
    }
}

static void way_take(ucoll_shm_op_t *op, const ucoll_shm_way_cfg_t *w)
{
    op->poll = w->poll;
    op->root = w->root;
    op->aux = w->aux;
    op->chunk = w->chunk;
    ucoll_debug("comm %u: %s through shared memory, %s, %zu elements a chunk", op->sh->comm->id,
                op->root == UCOLL_SHM_XCHG_ALLREDUCE || op->root < 0 ? "allreduce" : "reduce",
                w->way == WAY_ONESHOT   ? "one-shot"
                : w->way == WAY_SLICED  ? "sliced"
                : w->way == WAY_ALLPIPE ? "pipelined"
                                        : "pipelined to the root",
                op->chunk);
}

/* The first poll of a call whose way is chosen per call: the way taken
 * here, not at the call's start, once every earlier shared-memory call of
 * the communicator has ended on this rank, the one in the middle of the
 * round before among them, so rank 0's word for this round is there
 * (ucoll__shm_way_pick). At the start, a rank that posts many nonblocking
 * calls before rank 0 posts any would read the word before rank 0 wrote
 * it, and take another way than rank 0. */
static int way_first_poll(ucoll_shm_op_t *op)
{
    size_t bytes = op->count * op->esize;
    ucoll_shm_adapt_t *ad = NULL;
    int c = ucoll__shm_way_adapt(op->sh, op->u.way.kind, bytes, op->u.way.turn, &ad);

    way_take(op, &op->u.way.cfg[c == 0]);
    if (ad != NULL) {
        ucoll__shm_op_timed(op, ad, c, bytes);
    }
    return op->poll(op);
}

int ucoll__allreduce_shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                               const ucoll_algo_params_t *prm, ucoll_req_t *req, int root)
{
    int way = shm_way(a, comm->size, prm, &prm->model), alt = -1;
    size_t bytes = a->count * a->esize;
    ucoll_shm_op_t *op;

    if (a->count == 0) {
        ucoll__req_complete(req, UCOLL_OK); /* every rank knows: nothing to do */
        return UCOLL_OK;
    }
    op = ucoll__shm_op_new(comm, a, req, NULL);
    if (op == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    way_cfg(&op->u.way.cfg[0], a, comm->size, prm, root, way);
    /* every input agreed by the ranks: they count the same calls */
    if (ucoll__shm_way_adapt_on(prm) && prm->shm_way == UCOLL_SHM_WAY_AUTO && prm->seg_size == 0 &&
        bytes >= WAY_ADAPT_MIN && root <= 0 &&
        (alt = alt_way(a, comm->size, prm, &prm->model, way)) >= 0) {
        way_cfg(&op->u.way.cfg[1], a, comm->size, prm, root, alt);
        op->u.way.kind = root == 0 ? UCOLL_SHM_ADAPT_REDUCE : UCOLL_SHM_ADAPT_ALLREDUCE;
        op->u.way.turn = prm->shm_way_adapt == UCOLL_SHM_WAY_ADAPT_TURN;
        op->poll = way_first_poll;
    } else {
        way_take(op, &op->u.way.cfg[0]);
    }
    ucoll__shm_op_start(op);
    return UCOLL_OK;
}

static int shm_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm,
                     ucoll_req_t *req)
{
    return ucoll__allreduce_shm_start(comm, a, prm, req, -1);
}

void ucoll__allreduce_shm_params(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                 char *buf, size_t len)
{
    /* the tuning file's words (ucoll__shm_way_names) for WAY_* */
    static const char *const names[] = {"oneshot", "sliced", "root", "pipelined"};
    int way = shm_way(a, p, prm, &prm->model);
    ucoll_shm_way_cfg_t w;

    way_cfg(&w, a, p, prm, -1, way);
    if (way == WAY_ONESHOT) {
        snprintf(buf, len, "way=%s", names[way]);
    } else {
        snprintf(buf, len, "way=%s seg=%zu", names[way], w.chunk * a->esize);
    }
}

const ucoll_algo_t ucoll__allreduce_shm = {
    .id = "shm",
    .desc = "through shared memory: inputs in the regions, reduced in rank order in place, "
            "sliced when large (one node)",
    .cost = ucoll__allreduce_shm_cost,
    .start = shm_start,
    .flags = UCOLL_ALGO_SHM,
    .params = ucoll__allreduce_shm_params,
};

/*
 * Broadcast: API entry points, the registry and the segmented-tree piece
 * shared by chain, pipeline, bintree and pipe_bintree.
 */
#include "bcast.h"
#include "dtype.h"
#include "progress/request.h"
#include "progress/shm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
const ucoll_algo_t *const ucoll__bcast_algos[] = {
    &ucoll__bcast_binomial,
    &ucoll__bcast_scag_ring,
    &ucoll__bcast_scag_rdbl,
    &ucoll__bcast_linear,
    &ucoll__bcast_chain,
    &ucoll__bcast_pipeline,
    &ucoll__bcast_knomial,
    &ucoll__bcast_bintree,
    &ucoll__bcast_pipe_bintree,
    &ucoll__bcast_kchain,
    &ucoll__bcast_twotree,
    &ucoll__bcast_karytree,
    &ucoll__bcast_balanced,
    &ucoll__bcast_vchain,
    &ucoll__bcast_kchain_opt,
    &ucoll__bcast_pipe_knomial,
    &ucoll__bcast_circulant,
    &ucoll__bcast_shm,
    &ucoll__bcast_hier,
    NULL,
};
/* clang-format on */

size_t ucoll__pipeline_seg(const ucoll_algo_params_t *prm, size_t m, int depth)
{
    ucoll_model_t md;
    double s;

    if (prm->seg_size) {
        return prm->seg_size;
    }
    if (prm->model.alpha > 0 && prm->model.beta > 0) {
        md = prm->model;
    } else {
        ucoll__model_default(&md);
    }
    s = sqrt((double)m * md.alpha / (UCOLL_MAX(depth, 1) * md.beta));
    return (size_t)UCOLL_MAX(4096.0, UCOLL_MIN(s, 1048576.0));
}

size_t ucoll__chain_seg_elems(const ucoll_coll_args_t *a, const ucoll_algo_params_t *prm, int p)
{
    size_t seg = ucoll__pipeline_seg(prm, a->count * a->esize, p - 2) / a->esize;

    return UCOLL_MAX(seg, (size_t)1);
}

double ucoll__chain_reduce_cost(const ucoll_coll_args_t *a, int p, const ucoll_algo_params_t *prm,
                                const ucoll_model_t *m)
{
    size_t seg = ucoll__chain_seg_elems(a, prm, p);
    double n = (double)((a->count + seg - 1) / seg);
    double sb = (double)UCOLL_MIN(seg, a->count) * a->esize;

    if (p == 1) {
        return 0;
    }
    return (p - 2 + UCOLL_MAX(n, 1.0)) * (m->alpha + sb * (m->beta + m->gamma));
}

int ucoll__bcast_tree_steps(ucoll_sched_t *s, char *buf, size_t bytes, size_t seg, int parent,
                            const int *children, int nchildren)
{
    size_t n = (bytes + seg - 1) / seg;
    int st;

    if (n == 0) {
        n = 1;
    }
    for (size_t j = 0; j <= n; j++) {
        if (parent >= 0 && j < n) {
            size_t off = j * seg;
            if ((st = ucoll__sched_recv(s, buf + off, UCOLL_MIN(seg, bytes - off), parent))) {
                return st;
            }
        }
        if (j > 0 || parent < 0) {
            size_t sj = (parent < 0) ? j : j - 1;
            size_t off;
            if (sj >= n) {
                break;
            }
            off = sj * seg;
            for (int c = 0; c < nchildren; c++) {
                if ((st = ucoll__sched_send(s, buf + off, UCOLL_MIN(seg, bytes - off),
                                            children[c]))) {
                    return st;
                }
            }
        }
        if ((st = ucoll__sched_round(s))) {
            return st;
        }
    }
    return UCOLL_OK;
}

int ucoll_ibcast(void *buf, size_t count, ucoll_dtype_t dt, int root, ucoll_comm_t *comm,
                 ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    int st;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__check_dtype(dt)) ||
        (st = ucoll__check_buf(buf, count, "bcast buf")) ||
        (st = ucoll__coll_check_req("bcast", req)) ||
        (st = ucoll__coll_check_root("bcast", comm, root)) ||
        (st = ucoll__coll_check_not_in_place("bcast", "buf", buf))) {
        return st;
    }
    a.coll = UCOLL_COLL_BCAST;
    a.sbuf = buf;
    a.rbuf = buf;
    a.count = count;
    a.dt = dt;
    a.esize = ucoll__dtype_size(dt);
    a.root = root;
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_bcast(void *buf, size_t count, ucoll_dtype_t dt, int root, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ibcast(buf, count, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

/* ---- coalesced bcast (ucoll_ibcast_iov) ------------------------------------ */

/* What a coalesced call keeps until its request completes: its own copy of
 * the buffers list, and on the packed way the staging buffer. */
typedef struct {
    ucoll_iov_t *iov;
    size_t niov;
    char *staging; /* NULL: through shared memory, straight */
    int unpack;    /* a non-root rank on the packed way */
} bcast_iov_t;

/* The packed way: the buffers' bytes into staging (pack) or back out. */
static void iov_pack(const ucoll_iov_t *iov, size_t niov, char *staging, int pack)
{
    for (size_t i = 0; i < niov; i++) {
        if (iov[i].len) {
            if (pack) {
                memcpy(staging, iov[i].buf, iov[i].len);
            } else {
                memcpy(iov[i].buf, staging, iov[i].len);
            }
            staging += iov[i].len;
        }
    }
}

static void bcast_iov_fini(ucoll_req_t *req)
{
    bcast_iov_t *c = req->fini_arg;

    if (c->unpack && req->status.error == UCOLL_OK) {
        iov_pack(c->iov, c->niov, c->staging, 0);
    }
    free(c->staging);
    free(c->iov);
    free(c);
}

int ucoll_ibcast_iov(const ucoll_iov_t *iov, size_t niov, int root, ucoll_comm_t *comm,
                     ucoll_req_t **req)
{
    ucoll_coll_args_t a = {0};
    ucoll_algo_params_t prm;
    const ucoll_algo_t *al;
    bcast_iov_t *c;
    size_t total = 0;
    int st, nonempty = 0;

    if ((st = ucoll__check_comm(comm)) || (st = ucoll__coll_check_req("bcast_iov", req)) ||
        (st = ucoll__coll_check_root("bcast_iov", comm, root))) {
        return st;
    }
    if (niov > 0 && iov == NULL) {
        ucoll_error("bcast_iov: iov is NULL with %zu entries", niov);
        return UCOLL_ERR_ARG;
    }
    for (size_t i = 0; i < niov; i++) {
        if (iov[i].len && iov[i].buf == NULL) {
            ucoll_error("bcast_iov: entry %zu has NULL buf and %zu bytes", i, iov[i].len);
            return UCOLL_ERR_ARG;
        }
        if (iov[i].len > SIZE_MAX - total) {
            ucoll_error("bcast_iov: the entries' bytes overflow size_t");
            return UCOLL_ERR_ARG;
        }
        total += iov[i].len;
        nonempty += iov[i].len > 0;
    }
    if (nonempty <= 1) {
        /* one buffer (or none): a plain bcast, the same call on every rank
         * whatever their splits, since both take the bcast of total bytes */
        void *buf = NULL;

        for (size_t i = 0; i < niov; i++) {
            buf = iov[i].len ? iov[i].buf : buf;
        }
        return ucoll_ibcast(buf, total, UCOLL_BYTE, root, comm, req);
    }
    a.coll = UCOLL_COLL_BCAST;
    a.count = total;
    a.dt = UCOLL_BYTE;
    a.esize = 1;
    a.root = root;
    c = calloc(1, sizeof(*c));
    if (c == NULL || (c->iov = malloc(niov * sizeof(*iov))) == NULL) {
        free(c);
        ucoll__coll_seq_skip(comm);
        return UCOLL_ERR_NOMEM;
    }
    memcpy(c->iov, iov, niov * sizeof(*iov));
    c->niov = niov;
    /* Straight through shared memory when it is on and selection takes the
     * shm row for a bcast of total bytes: every rank decides alike, since
     * a rank that finds the setup still running takes the packed way, whose
     * plain bcast of the same bytes is deferred until the setup ends and
     * then takes the same row, with the same pieces. */
    al = ucoll__shm_on(comm) ? ucoll__algo_select(comm, &a, &prm) : NULL;
    if (al && (al->flags & UCOLL_ALGO_SHM)) {
        a.iov = c->iov;
        a.niov = niov;
        ucoll_debug("bcast_iov: %zu buffers, %zu bytes, straight through shared memory", niov,
                    total);
        st = ucoll__coll_start(comm, &a, req);
    } else {
        c->staging = malloc(total);
        if (c->staging == NULL) {
            free(c->iov);
            free(c);
            ucoll__coll_seq_skip(comm);
            return UCOLL_ERR_NOMEM;
        }
        if (comm->rank == root) {
            iov_pack(iov, niov, c->staging, 1);
        }
        c->unpack = comm->rank != root;
        ucoll_debug("bcast_iov: %zu buffers, %zu bytes, packed into a staging buffer", niov, total);
        st = ucoll_ibcast(c->staging, total, UCOLL_BYTE, root, comm, req);
    }
    if (st != UCOLL_OK) {
        free(c->staging);
        free(c->iov);
        free(c);
        return st;
    }
    if ((*req)->complete) {
        /* done within the call (one rank, or the last piece already in) */
        (*req)->fini_arg = c;
        bcast_iov_fini(*req);
    } else {
        (*req)->fini = bcast_iov_fini;
        (*req)->fini_arg = c;
    }
    return UCOLL_OK;
}

int ucoll_bcast_iov(const ucoll_iov_t *iov, size_t niov, int root, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ibcast_iov(iov, niov, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

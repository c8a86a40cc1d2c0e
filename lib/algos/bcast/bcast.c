/*
 * Broadcast: API entry points, the registry and the segmented-tree piece
 * shared by chain, pipeline, bintree and pipe_bintree.
 */
#include "bcast.h"

#include <math.h>

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
    a.esize = ucoll_dtype_size(dt);
    a.root = root;
    return ucoll__coll_start(comm, &a, req);
}

int ucoll_bcast(void *buf, size_t count, ucoll_dtype_t dt, int root, ucoll_comm_t *comm)
{
    ucoll_req_t *req;
    int st = ucoll_ibcast(buf, count, dt, root, comm, &req);

    return (st != UCOLL_OK) ? st : ucoll__coll_wait_blocking(req);
}

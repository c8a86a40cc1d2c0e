/*
 * Scatterv, binomial tree (the scatter's tree over sranks, algos.h), in two
 * schedules (algos/phased.c), because only the root is given the counts:
 *
 *   counts  the root sends each child with a subtree of its own the counts
 *           of that subtree (srank order), and every such rank passes its
 *           children theirs; leaves know their count (rcount) and take
 *           part in nothing;
 *   data    the root sends each child its subtree's blocks in one message,
 *           straight from sbuf where they lie there in srank order one
 *           after another, else packed in scratch; a rank with children
 *           receives its subtree's blocks in scratch, keeps its own and
 *           passes each child its part; a leaf receives into rbuf.
 * As in the linear scatterv, a block longer than its receiver's rcount ends
 * the call there in UCOLL_ERR_TRUNCATE (a rank with children still passes
 * its children their parts); a shorter one is received as it is.
 *
 * Cost (m = a block; selection sees m = 0, the only size every rank knows):
 * (2⌈log2 p⌉ - 1)α + (p-1)mβ, plus the copies through scratch.
 */
#include "scatter.h"

static int sv_counts(ucoll_sched_t *s, void *arg)
{
    ucoll_vtree_t *v = arg;
    int root = v->a.root, sr = v->sr, p = v->p, st;
    int span = ucoll__binomial_span(sr, p);

    if (v->n == 1) {
        return UCOLL_OK; /* a leaf: nothing to learn */
    }
    if (sr != 0) {
        st = ucoll__sched_recv(s, v->cnt, (size_t)v->n * sizeof(uint64_t),
                               ucoll__rank_of(ucoll__binomial_parent(sr), root, p));
        if (st != UCOLL_OK || (st = ucoll__sched_round(s)) != UCOLL_OK) {
            return st;
        }
    }
    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        int nc;

        if (sr + mask >= p || (nc = ucoll__binomial_size(sr + mask, p)) == 1) {
            continue;
        }
        st = ucoll__sched_send(s, &v->cnt[mask], (size_t)nc * sizeof(uint64_t),
                               ucoll__rank_of(sr + mask, root, p));
        if (st != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

static int sv_root(ucoll_sched_t *s, ucoll_vtree_t *v)
{
    const ucoll_coll_args_t *a = &v->a;
    int p = v->p, root = a->root, span = ucoll__binomial_span(0, p), st;
    size_t es = a->esize;
    const char *sb = a->sbuf;

    st = ucoll__sched_copy_if(s, a->rbuf, sb + a->sdispls[root] * es, a->scounts[root] * es);
    if (st != UCOLL_OK) {
        return st;
    }
    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        int c = mask, n, peer;
        size_t bytes;
        char *tmp, *at;

        if (c >= p) {
            continue;
        }
        n = ucoll__binomial_size(mask, p);
        bytes = ucoll__counts_bytes(v->cnt, v->a.esize, c, n);
        peer = ucoll__rank_of(c, root, p);
        if (ucoll__vtree_in_order(v, c, n)) {
            if ((st = ucoll__sched_send(s, sb + a->sdispls[peer] * es, bytes, peer)) != UCOLL_OK) {
                return st;
            }
            continue;
        }
        tmp = ucoll__sched_scratch(s, UCOLL_MAX(bytes, (size_t)1));
        if (tmp == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        at = tmp;
        for (int i = c; i < c + n; i++) {
            int r = ucoll__rank_of(i, root, p);
            size_t b = a->scounts[r] * es;

            if ((st = ucoll__sched_copy_if(s, at, sb + a->sdispls[r] * es, b)) != UCOLL_OK) {
                return st;
            }
            at += b;
        }
        if ((st = ucoll__sched_send(s, tmp, bytes, peer)) != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

static int sv_data(ucoll_sched_t *s, void *arg)
{
    ucoll_vtree_t *v = arg;
    const ucoll_coll_args_t *a = &v->a;
    int sr = v->sr, p = v->p, span, parent, st;
    size_t total, own, es = a->esize;
    char *buf;

    if (sr == 0) {
        return sv_root(s, v);
    }
    parent = ucoll__rank_of(ucoll__binomial_parent(sr), a->root, p);
    if (v->n == 1) {
        return ucoll__sched_recv(s, a->rbuf, a->rcount * es, parent);
    }
    total = ucoll__counts_bytes(v->cnt, v->a.esize, 0, v->n);
    own = (size_t)v->cnt[0] * es;
    if (v->cnt[0] > a->rcount) {
        ucoll_debug("scatterv: the root sends %llu elements, rank %d receives %zu",
                    (unsigned long long)v->cnt[0], ucoll__rank_of(sr, a->root, p), a->rcount);
        v->truncated = 1;
        own = a->rcount * es;
    }
    buf = ucoll__sched_scratch(s, UCOLL_MAX(total, (size_t)1));
    if (buf == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if ((st = ucoll__sched_recv(s, buf, total, parent)) != UCOLL_OK ||
        (st = ucoll__sched_round(s)) != UCOLL_OK ||
        (st = ucoll__sched_copy_if(s, a->rbuf, buf, own)) != UCOLL_OK) {
        return st;
    }
    span = ucoll__binomial_span(sr, p);
    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        if (sr + mask >= p) {
            continue;
        }
        st = ucoll__sched_send(
            s, buf + ucoll__counts_bytes(v->cnt, v->a.esize, 0, mask),
            ucoll__counts_bytes(v->cnt, v->a.esize, mask, ucoll__binomial_size(sr + mask, p)),
            ucoll__rank_of(sr + mask, a->root, p));
        if (st != UCOLL_OK) {
            return st;
        }
    }
    return UCOLL_OK;
}

static int scatterv_binomial_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                                   const ucoll_algo_params_t *prm, ucoll_req_t *req)
{
    return ucoll__vtree_start(comm, a, prm->tag, req, sv_counts, sv_data);
}

static double scatterv_binomial_cost(const ucoll_coll_args_t *a, int p,
                                     const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return (2 * ucoll__ceil_log2(p) - 1) * m->alpha + (p - 1) * bytes * m->beta;
}

const ucoll_algo_t ucoll__scatterv_binomial = {
    .id = "binomial",
    .desc = "binomial tree: the counts down to the inner ranks, then the subtrees' blocks",
    .can_serve = NULL,
    .cost = scatterv_binomial_cost,
    .start = scatterv_binomial_start,
};

/*
 * Gatherv, binomial tree (the gather's tree over sranks, algos.h), in two
 * schedules (algos/phased.c), because only the root is given the counts:
 *
 *   counts  every rank receives the counts of its children's subtrees
 *           (one message per child, the subtree's counts in srank order)
 *           and sends its whole subtree's to its parent, the root's
 *           children included: the root checks them against rcounts;
 *   data    a rank gathers its subtree's blocks in srank order (its own
 *           first, then each child's subtree as one message) in scratch and
 *           sends them to its parent in one message; a leaf sends straight
 *           from sbuf. The root receives each child's subtree into rbuf
 *           where its ranks' blocks lie there in that order, one after
 *           another, else into scratch, then copies each block to its
 *           displacement.
 * A count that disagrees with the root's rcounts (an erroneous call in
 * MPI's terms) still has every block received, so that no message is left
 * behind, and the call ends in UCOLL_ERR_TRUNCATE at the root, nothing
 * written to rbuf.
 *
 * Cost (m = a block; selection sees m = 0, the only size every rank knows):
 * 2⌈log2 p⌉α + (p-1)mβ, plus the copies through scratch.
 */
#include "gather.h"

static int gv_counts(ucoll_sched_t *s, void *arg)
{
    ucoll_vtree_t *g = arg;
    int root = g->a.root, sr = g->sr, p = g->p;
    int span = ucoll__binomial_span(sr, p), st;

    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        if (sr + mask >= p) {
            continue;
        }
        st = ucoll__sched_recv(s, &g->cnt[mask],
                               (size_t)ucoll__binomial_size(sr + mask, p) * sizeof(uint64_t),
                               ucoll__rank_of(sr + mask, root, p));
        if (st != UCOLL_OK) {
            return st;
        }
    }
    if (sr == 0) {
        return UCOLL_OK;
    }
    if ((st = ucoll__sched_round(s)) != UCOLL_OK) {
        return st;
    }
    return ucoll__sched_send(s, g->cnt, (size_t)g->n * sizeof(uint64_t),
                             ucoll__rank_of(ucoll__binomial_parent(sr), root, p));
}

static int gv_root(ucoll_sched_t *s, ucoll_vtree_t *g)
{
    const ucoll_coll_args_t *a = &g->a;
    int p = g->p, root = a->root, span = ucoll__binomial_span(0, p), st;
    size_t es = a->esize;
    char *rb = a->rbuf, *via[32] = {0}; /* by child (log2 of its mask): scratch */

    for (int s_ = 1; s_ < p; s_++) {
        if (g->cnt[s_] != a->rcounts[ucoll__rank_of(s_, root, p)]) {
            ucoll_debug("gatherv: rank %d sends %llu elements, the root expects %zu",
                        ucoll__rank_of(s_, root, p), (unsigned long long)g->cnt[s_],
                        a->rcounts[ucoll__rank_of(s_, root, p)]);
            g->truncated = 1;
        }
    }
    if (!g->truncated && (st = ucoll__sched_copy_if(s, rb + a->rdispls[root] * es, a->sbuf,
                                                    a->scount * es)) != UCOLL_OK) {
        return st;
    }
    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        int n, c = mask, peer;
        size_t bytes;
        char *tmp;

        if (c >= p) {
            continue;
        }
        n = ucoll__binomial_size(mask, p);
        bytes = ucoll__counts_bytes(g->cnt, g->a.esize, c, n);
        peer = ucoll__rank_of(c, root, p);
        if (!g->truncated && ucoll__vtree_in_order(g, c, n)) {
            st = ucoll__sched_recv(s, rb + a->rdispls[peer] * es, bytes, peer);
            if (st != UCOLL_OK) {
                return st;
            }
            continue;
        }
        tmp = ucoll__sched_scratch(s, UCOLL_MAX(bytes, (size_t)1));
        if (tmp == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        if ((st = ucoll__sched_recv(s, tmp, bytes, peer)) != UCOLL_OK) {
            return st;
        }
        via[ucoll__ceil_log2(mask)] = tmp;
    }
    if (g->truncated) {
        return UCOLL_OK; /* drained, not placed */
    }
    /* then the blocks received in scratch, to their displacements (a later
     * round: a round's copies come before its receives) */
    if ((st = ucoll__sched_round(s)) != UCOLL_OK) {
        return st;
    }
    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        char *tmp = mask < p ? via[ucoll__ceil_log2(mask)] : NULL;

        for (int i = mask; tmp && i < mask + ucoll__binomial_size(mask, p); i++) {
            int r = ucoll__rank_of(i, root, p);
            size_t b = a->rcounts[r] * es;

            if ((st = ucoll__sched_copy_if(s, rb + a->rdispls[r] * es, tmp, b)) != UCOLL_OK) {
                return st;
            }
            tmp += b;
        }
    }
    return UCOLL_OK;
}

static int gv_data(ucoll_sched_t *s, void *arg)
{
    ucoll_vtree_t *g = arg;
    const ucoll_coll_args_t *a = &g->a;
    int sr = g->sr, p = g->p, span, parent, st;
    size_t total;
    char *buf;

    if (sr == 0) {
        return gv_root(s, g);
    }
    parent = ucoll__rank_of(ucoll__binomial_parent(sr), a->root, p);
    if (g->n == 1) {
        return ucoll__sched_send(s, a->sbuf, a->scount * a->esize, parent);
    }
    total = ucoll__counts_bytes(g->cnt, g->a.esize, 0, g->n);
    buf = ucoll__sched_scratch(s, UCOLL_MAX(total, (size_t)1));
    if (buf == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if ((st = ucoll__sched_copy_if(s, buf, a->sbuf, a->scount * a->esize)) != UCOLL_OK) {
        return st;
    }
    span = ucoll__binomial_span(sr, p);
    for (int mask = span >> 1; mask > 0; mask >>= 1) {
        if (sr + mask >= p) {
            continue;
        }
        st = ucoll__sched_recv(
            s, buf + ucoll__counts_bytes(g->cnt, g->a.esize, 0, mask),
            ucoll__counts_bytes(g->cnt, g->a.esize, mask, ucoll__binomial_size(sr + mask, p)),
            ucoll__rank_of(sr + mask, a->root, p));
        if (st != UCOLL_OK) {
            return st;
        }
    }
    if ((st = ucoll__sched_round(s)) != UCOLL_OK) {
        return st;
    }
    return ucoll__sched_send(s, buf, total, parent);
}

static int gatherv_binomial_start(ucoll_comm_t *comm, const ucoll_coll_args_t *a,
                                  const ucoll_algo_params_t *prm, ucoll_req_t *req)
{
    return ucoll__vtree_start(comm, a, prm->tag, req, gv_counts, gv_data);
}

static double gatherv_binomial_cost(const ucoll_coll_args_t *a, int p,
                                    const ucoll_algo_params_t *prm, const ucoll_model_t *m)
{
    double bytes = (double)a->count * a->esize;

    return 2 * ucoll__ceil_log2(p) * m->alpha + (p - 1) * bytes * m->beta;
}

const ucoll_algo_t ucoll__gatherv_binomial = {
    .id = "binomial",
    .desc = "binomial tree: the counts up the tree, then the subtrees' blocks",
    .can_serve = NULL,
    .cost = gatherv_binomial_cost,
    .start = gatherv_binomial_start,
};

/*
 * Message matching (see match.h): the per-ctx_id queues, their per-source
 * buckets, and everything but the lookup of every arriving message, which
 * is inline in match.h.
 *
 * A ctx_id's queues live in a hash of UCOLL_MATCH_HASH chains, with the
 * last one looked up cached: traffic mostly stays on one communicator for a
 * while. Its buckets are an array indexed by source, grown by doubling (from
 * 8) to the highest source seen; a bucket is allocated on its source's first
 * receive or message and kept until fini.
 */
#include "progress/match.h"

#include <stdlib.h>
#include <string.h>

void ucoll__match_init(ucoll_match_t *m)
{
    memset(m, 0, sizeof(*m));
}

void ucoll__match_fini(ucoll_match_t *m)
{
    ucoll_match_cq_t *cq, *next;
    int h, i;

    for (h = 0; h < UCOLL_MATCH_HASH; h++) {
        for (cq = m->cq[h]; cq; cq = next) {
            next = cq->next;
            for (i = 0; i < cq->nsrc; i++) {
                free(cq->src[i]);
            }
            free(cq->src);
            free(cq);
        }
        m->cq[h] = NULL;
    }
    m->cq_last = NULL;
}

ucoll_match_cq_t *ucoll__match_cq_get(ucoll_match_t *m, uint32_t ctx_id, int create)
{
    ucoll_match_cq_t *cq;

    if (m->cq_last && m->cq_last->ctx_id == ctx_id) {
        return m->cq_last;
    }
    for (cq = m->cq[ctx_id % UCOLL_MATCH_HASH]; cq; cq = cq->next) {
        if (cq->ctx_id == ctx_id) {
            return m->cq_last = cq;
        }
    }
    if (!create) {
        return NULL;
    }
    cq = calloc(1, sizeof(*cq));
    if (cq == NULL) {
        return NULL;
    }
    cq->ctx_id = ctx_id;
    ucoll_list_init(&cq->wild);
    ucoll_list_init(&cq->unexp);
    cq->next = m->cq[ctx_id % UCOLL_MATCH_HASH];
    m->cq[ctx_id % UCOLL_MATCH_HASH] = cq;
    return m->cq_last = cq;
}

static ucoll_match_bucket_t *bucket_get(ucoll_match_cq_t *cq, int src, int create)
{
    ucoll_match_bucket_t **nsrc, *b;
    int n;

    if (src < cq->nsrc && cq->src[src]) {
        return cq->src[src];
    }
    if (!create) {
        return NULL;
    }
    if (src >= cq->nsrc) {
        n = cq->nsrc ? cq->nsrc : 8;
        while (n <= src) {
            n *= 2;
        }
        nsrc = realloc(cq->src, (size_t)n * sizeof(*nsrc));
        if (nsrc == NULL) {
            return NULL;
        }
        memset(nsrc + cq->nsrc, 0, (size_t)(n - cq->nsrc) * sizeof(*nsrc));
        cq->src = nsrc;
        cq->nsrc = n;
    }
    b = malloc(sizeof(*b));
    if (b == NULL) {
        return NULL;
    }
    ucoll_list_init(&b->posted);
    ucoll_list_init(&b->unexp);
    cq->src[src] = b;
    return b;
}

void ucoll__match_recv_init(ucoll_match_t *m, ucoll_match_recv_t *e, uint32_t ctx_id, int src,
                            int tag, int any_tag)
{
    e->post_seq = ++m->post_seq;
    e->ctx_id = ctx_id;
    e->src = src;
    e->tag = tag;
    e->any_tag = any_tag;
    e->posted = 0;
}

int ucoll__match_post(ucoll_match_t *m, ucoll_match_recv_t *e)
{
    ucoll_match_cq_t *cq = ucoll__match_cq_get(m, e->ctx_id, 1);
    ucoll_match_bucket_t *b;

    if (cq == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    if (e->src != UCOLL_ANY_SOURCE) {
        b = bucket_get(cq, e->src, 1);
        if (b == NULL) {
            return UCOLL_ERR_NOMEM;
        }
        ucoll_list_add_tail(&b->posted, &e->link);
    } else {
        ucoll_list_add_tail(&cq->wild, &e->link);
    }
    e->posted = 1;
    m->st.posted_depth++;
    m->st.posted_peak = UCOLL_MAX(m->st.posted_peak, m->st.posted_depth);
    return UCOLL_OK;
}

int ucoll__match_unexp_add(ucoll_match_t *m, ucoll_match_msg_t *msg)
{
    ucoll_match_cq_t *cq = ucoll__match_cq_get(m, msg->ctx_id, 1);
    ucoll_match_bucket_t *b = cq ? bucket_get(cq, msg->src, 1) : NULL;

    if (b == NULL) {
        return UCOLL_ERR_NOMEM;
    }
    ucoll_list_add_tail(&b->unexp, &msg->link);
    ucoll_list_add_tail(&cq->unexp, &msg->ctx_link);
    m->st.unexp_depth++;
    m->st.unexp_bytes += msg->data_len;
    m->st.unexp_peak = UCOLL_MAX(m->st.unexp_peak, m->st.unexp_depth);
    m->st.unexp_bytes_peak = UCOLL_MAX(m->st.unexp_bytes_peak, m->st.unexp_bytes);
    return UCOLL_OK;
}

static void unexp_del(ucoll_match_t *m, ucoll_match_msg_t *msg)
{
    ucoll_list_del(&msg->link);
    ucoll_list_del(&msg->ctx_link);
    m->st.unexp_depth--;
    m->st.unexp_bytes -= msg->data_len;
}

ucoll_match_msg_t *ucoll__match_unexp(ucoll_match_t *m, const ucoll_match_recv_t *e)
{
    ucoll_match_cq_t *cq = ucoll__match_cq_get(m, e->ctx_id, 0);
    ucoll_match_bucket_t *b;
    ucoll_list_t *pos;
    ucoll_match_msg_t *msg;

    if (cq == NULL) {
        return NULL;
    }
    if (e->src == UCOLL_ANY_SOURCE) {
        ucoll_list_for_each(pos, &cq->unexp)
        {
            msg = ucoll_container_of(pos, ucoll_match_msg_t, ctx_link);
            if (ucoll__match_tag(e, msg->tag)) {
                goto found;
            }
        }
        return NULL;
    }
    b = bucket_get(cq, e->src, 0);
    if (b == NULL) {
        return NULL;
    }
    ucoll_list_for_each(pos, &b->unexp)
    {
        msg = ucoll_container_of(pos, ucoll_match_msg_t, link);
        if (ucoll__match_tag(e, msg->tag)) {
            goto found;
        }
    }
    return NULL;
found:
    unexp_del(m, msg);
    return msg;
}

static size_t posted_take_list(ucoll_match_t *m, ucoll_list_t *list,
                               int (*pred)(const ucoll_match_recv_t *, void *), void *arg,
                               ucoll_list_t *out)
{
    ucoll_list_t *pos, *tmp;
    size_t n = 0;

    ucoll_list_for_each_safe(pos, tmp, list)
    {
        ucoll_match_recv_t *e = ucoll_container_of(pos, ucoll_match_recv_t, link);
        if (pred == NULL || pred(e, arg)) {
            ucoll__match_unpost(m, e);
            ucoll_list_add_tail(out, &e->link);
            n++;
        }
    }
    return n;
}

size_t ucoll__match_posted_take(ucoll_match_t *m,
                                int (*pred)(const ucoll_match_recv_t *e, void *arg), void *arg,
                                ucoll_list_t *out)
{
    ucoll_match_cq_t *cq;
    size_t n = 0;
    int h, i;

    for (h = 0; h < UCOLL_MATCH_HASH; h++) {
        for (cq = m->cq[h]; cq; cq = cq->next) {
            for (i = 0; i < cq->nsrc; i++) {
                if (cq->src[i]) {
                    n += posted_take_list(m, &cq->src[i]->posted, pred, arg, out);
                }
            }
            n += posted_take_list(m, &cq->wild, pred, arg, out);
        }
    }
    return n;
}

size_t ucoll__match_unexp_take(ucoll_match_t *m,
                               int (*pred)(const ucoll_match_msg_t *msg, void *arg), void *arg,
                               ucoll_list_t *out)
{
    ucoll_list_t *pos, *tmp;
    ucoll_match_cq_t *cq;
    size_t n = 0;
    int h;

    for (h = 0; h < UCOLL_MATCH_HASH; h++) {
        for (cq = m->cq[h]; cq; cq = cq->next) {
            ucoll_list_for_each_safe(pos, tmp, &cq->unexp)
            {
                ucoll_match_msg_t *msg = ucoll_container_of(pos, ucoll_match_msg_t, ctx_link);
                if (pred == NULL || pred(msg, arg)) {
                    unexp_del(m, msg);
                    ucoll_list_add_tail(out, &msg->link);
                    n++;
                }
            }
        }
    }
    return n;
}

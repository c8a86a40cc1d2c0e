/*
 * Message matching for point-to-point: which posted receive an arriving
 * message goes to, and which queued unexpected message a new receive takes.
 * Pure bookkeeping on entries embedded in their owners (a receive request,
 * a received message): nothing here knows about UCX, the wire protocol or
 * requests. The owner (lib/progress/p2p.c) finds its objects again with
 * ucoll_container_of.
 *
 * Queues are bucketed by (ctx_id, source): a message from s on ctx_id c
 * only ever looks at bucket (c, s)'s posted receives and at c's ANY_SOURCE
 * receives; a receive from s only at bucket (c, s)'s unexpected messages,
 * and an ANY_SOURCE receive at c's arrival-ordered unexpected list. Posted
 * receives carry a posting number so that the older of the two candidates
 * (specific vs wildcard) wins, as MPI requires. Unrelated traffic (other
 * communicators, other sources) never lengthens a search.
 *
 * Memory: a ucoll_match_t is embedded in its owner, which calls
 * ucoll__match_init and ucoll__match_fini. The per-ctx_id queues and
 * per-source buckets are allocated on first use and freed by fini; entries
 * belong to their owners and are only linked here.
 */
#ifndef UCOLL_PROGRESS_MATCH_H
#define UCOLL_PROGRESS_MATCH_H

#include "core.h"
#include "list.h"

#include <stddef.h>
#include <stdint.h>

/* buckets of the ctx_id hash */
#define UCOLL_MATCH_HASH 64

/* A posted receive: the key it waits for and its place in the queues. */
typedef struct ucoll_match_recv {
    ucoll_list_t link; /* bucket's posted list, or the ANY_SOURCE list; owner's once taken */
    uint64_t post_seq; /* posting order, from ucoll__match_recv_init */
    uint32_t ctx_id;
    int src;     /* sender's rank, or UCOLL_ANY_SOURCE */
    int tag;     /* ignored when any_tag */
    int any_tag; /* nonzero: every tag matches */
    int posted;  /* in a posted queue */
} ucoll_match_recv_t;

/* An unexpected message: the key it carries and its place in the queues.
 * Outside the queues, link is the owner's to use. */
typedef struct ucoll_match_msg {
    ucoll_list_t link;     /* bucket's unexpected list, arrival order */
    ucoll_list_t ctx_link; /* the ctx_id's unexpected list, arrival order */
    uint32_t ctx_id;
    int src;
    int tag;
    size_t data_len; /* bytes it holds, counted in unexp_bytes */
} ucoll_match_msg_t;

/* One (ctx_id, source) pair. */
typedef struct {
    ucoll_list_t posted; /* receives from this source, posting order */
    ucoll_list_t unexp;  /* messages from this source, arrival order */
} ucoll_match_bucket_t;

/* One ctx_id. */
typedef struct ucoll_match_cq {
    struct ucoll_match_cq *next; /* hash chain */
    uint32_t ctx_id;
    ucoll_list_t wild;          /* ANY_SOURCE receives, posting order */
    ucoll_list_t unexp;         /* every unexpected message, arrival order */
    ucoll_match_bucket_t **src; /* by source; NULL where none yet */
    int nsrc;
} ucoll_match_cq_t;

typedef struct {
    size_t unexp_depth, unexp_peak;       /* unexpected messages queued, most ever */
    size_t unexp_bytes, unexp_bytes_peak; /* their data_len, summed */
    size_t posted_depth, posted_peak;     /* posted receives queued, most ever */
} ucoll_match_stats_t;

typedef struct ucoll_match {
    ucoll_match_cq_t *cq[UCOLL_MATCH_HASH];
    ucoll_match_cq_t *cq_last; /* the last one looked up */
    uint64_t post_seq;
    ucoll_match_stats_t st;
} ucoll_match_t;

/* Empty queues. */
void ucoll__match_init(ucoll_match_t *m);

/* Free the queues. Entries still queued are left as they are (they belong
 * to their owners): take them out first (ucoll__match_*_take). */
void ucoll__match_fini(ucoll_match_t *m);

/* The queues of ctx_id, created when create is set and they do not exist
 * (NULL when out of memory, or absent and !create). Remembered in cq_last. */
ucoll_match_cq_t *ucoll__match_cq_get(ucoll_match_t *m, uint32_t ctx_id, int create);

/* Set up receive entry e for key (ctx_id, src or UCOLL_ANY_SOURCE, tag or
 * any_tag) and give it the next posting number. Not queued yet: look for a
 * message first (ucoll__match_unexp), then ucoll__match_post. */
void ucoll__match_recv_init(ucoll_match_t *m, ucoll_match_recv_t *e, uint32_t ctx_id, int src,
                            int tag, int any_tag);

/* Queue receive e (set up by ucoll__match_recv_init) behind the receives
 * posted before it. UCOLL_ERR_NOMEM when its queue cannot be created (e is
 * not queued then). */
int ucoll__match_post(ucoll_match_t *m, ucoll_match_recv_t *e);

/* Take posted receive e out of its queue. */
static inline void ucoll__match_unpost(ucoll_match_t *m, ucoll_match_recv_t *e)
{
    ucoll_list_del(&e->link);
    e->posted = 0;
    m->st.posted_depth--;
}

static inline int ucoll__match_tag(const ucoll_match_recv_t *e, int tag)
{
    return e->any_tag || e->tag == tag;
}

/* The first receive of list whose tag matches, or NULL. */
static inline ucoll_match_recv_t *ucoll__match_first(ucoll_list_t *list, int tag)
{
    ucoll_list_t *pos;

    ucoll_list_for_each(pos, list)
    {
        ucoll_match_recv_t *e = ucoll_container_of(pos, ucoll_match_recv_t, link);
        if (ucoll__match_tag(e, tag)) {
            return e;
        }
    }
    return NULL;
}

/* The oldest posted receive matching a message with key (ctx_id, src, tag),
 * left in its queue (ucoll__match_unpost takes it); NULL when none matches.
 * Inline: it is on the latency path of every arriving message. */
static inline ucoll_match_recv_t *ucoll__match_posted_peek(ucoll_match_t *m, uint32_t ctx_id,
                                                           int src, int tag)
{
    ucoll_match_cq_t *cq = m->cq_last;
    ucoll_match_bucket_t *b;
    ucoll_match_recv_t *e = NULL, *wild;

    if (ucoll_unlikely(cq == NULL || cq->ctx_id != ctx_id)) {
        cq = ucoll__match_cq_get(m, ctx_id, 0);
        if (cq == NULL) {
            return NULL;
        }
    }
    if ((unsigned)src < (unsigned)cq->nsrc && (b = cq->src[src]) != NULL) {
        e = ucoll__match_first(&b->posted, tag);
    }
    if (ucoll_unlikely(!ucoll_list_empty(&cq->wild))) {
        wild = ucoll__match_first(&cq->wild, tag);
        if (wild && (!e || wild->post_seq < e->post_seq)) {
            e = wild;
        }
    }
    return e;
}

/* The same, taken out of its queue. */
static inline ucoll_match_recv_t *ucoll__match_posted(ucoll_match_t *m, uint32_t ctx_id, int src,
                                                      int tag)
{
    ucoll_match_recv_t *e = ucoll__match_posted_peek(m, ctx_id, src, tag);

    if (e) {
        ucoll__match_unpost(m, e);
    }
    return e;
}

/* Set up message entry msg for key (ctx_id, src, tag), holding data_len
 * bytes. */
static inline void ucoll__match_msg_init(ucoll_match_msg_t *msg, uint32_t ctx_id, int src, int tag,
                                         size_t data_len)
{
    msg->ctx_id = ctx_id;
    msg->src = src;
    msg->tag = tag;
    msg->data_len = data_len;
}

/* Queue msg (set up by ucoll__match_msg_init) as the latest unexpected
 * message of its key. UCOLL_ERR_NOMEM when its queue cannot be created (msg
 * is not queued then). */
int ucoll__match_unexp_add(ucoll_match_t *m, ucoll_match_msg_t *msg);

/* The earliest unexpected message that receive e (set up by
 * ucoll__match_recv_init, not posted) matches, taken out of the queues;
 * NULL when none does. */
ucoll_match_msg_t *ucoll__match_unexp(ucoll_match_t *m, const ucoll_match_recv_t *e);

/* Take every posted receive for which pred(e, arg) is nonzero (every one
 * when pred is NULL) out of the queues and append it to out by its link.
 * Order: ctx_id by ctx_id; within one, the specific receives source by
 * source in posting order, then the ANY_SOURCE ones in posting order. pred
 * must not change the queues. Returns how many were taken. */
size_t ucoll__match_posted_take(ucoll_match_t *m,
                                int (*pred)(const ucoll_match_recv_t *e, void *arg), void *arg,
                                ucoll_list_t *out);

/* Take every unexpected message for which pred(msg, arg) is nonzero (every
 * one when pred is NULL) out of the queues and append it to out by its
 * link: ctx_id by ctx_id, in arrival order. pred must not change the
 * queues. Returns how many were taken. */
size_t ucoll__match_unexp_take(ucoll_match_t *m,
                               int (*pred)(const ucoll_match_msg_t *msg, void *arg), void *arg,
                               ucoll_list_t *out);

#endif

/*
 * Unit test of message matching (lib/progress/match.c) on plain structs: no
 * UCX, no processes. Receives and messages are small records with an id
 * around the embedded entries; every check compares the id that came back
 * with the one expected.
 */
#include "progress/match.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/expect.h"

/* not at offset 0, so that a wrong container_of shows */
typedef struct {
    int id;
    ucoll_match_recv_t e;
} recv_t;

typedef struct {
    int id;
    ucoll_match_msg_t e;
} msg_t;

#define ANY UCOLL_ANY_SOURCE

static void post(ucoll_match_t *m, recv_t *r, int id, uint32_t ctx_id, int src, int tag)
{
    memset(r, 0, sizeof(*r));
    r->id = id;
    ucoll__match_recv_init(m, &r->e, ctx_id, src, tag < 0 ? 0 : tag, tag == UCOLL_ANY_TAG);
    EXPECT(ucoll__match_post(m, &r->e) == UCOLL_OK);
    EXPECT(r->e.posted);
}

static void add(ucoll_match_t *m, msg_t *g, int id, uint32_t ctx_id, int src, int tag, size_t len)
{
    memset(g, 0, sizeof(*g));
    g->id = id;
    ucoll__match_msg_init(&g->e, ctx_id, src, tag, len);
    EXPECT(ucoll__match_unexp_add(m, &g->e) == UCOLL_OK);
}

/* id of the posted receive a message (ctx_id, src, tag) takes, or -1 */
static int arrive(ucoll_match_t *m, uint32_t ctx_id, int src, int tag)
{
    ucoll_match_recv_t *e = ucoll__match_posted(m, ctx_id, src, tag);

    if (e == NULL) {
        return -1;
    }
    EXPECT(!e->posted);
    return ucoll_container_of(e, recv_t, e)->id;
}

/* id of the unexpected message a new receive (ctx_id, src, tag) takes, or -1 */
static int receive(ucoll_match_t *m, uint32_t ctx_id, int src, int tag)
{
    ucoll_match_recv_t r;
    ucoll_match_msg_t *g;

    ucoll__match_recv_init(m, &r, ctx_id, src, tag < 0 ? 0 : tag, tag == UCOLL_ANY_TAG);
    g = ucoll__match_unexp(m, &r);
    return g ? ucoll_container_of(g, msg_t, e)->id : -1;
}

static void test_specific(void)
{
    ucoll_match_t m;
    recv_t r[4];

    ucoll__match_init(&m);
    EXPECT(arrive(&m, 1, 2, 5) == -1); /* no queues at all yet */
    post(&m, &r[0], 10, 1, 2, 5);
    EXPECT(arrive(&m, 1, 3, 5) == -1); /* other source */
    EXPECT(arrive(&m, 2, 2, 5) == -1); /* other ctx_id */
    EXPECT(arrive(&m, 1, 2, 6) == -1); /* other tag */
    EXPECT(m.st.posted_depth == 1);
    EXPECT(arrive(&m, 1, 2, 5) == 10);
    EXPECT(arrive(&m, 1, 2, 5) == -1);
    EXPECT(m.st.posted_depth == 0 && m.st.posted_peak == 1);

    /* same key: posting order; different tags: the one that matches */
    post(&m, &r[0], 10, 1, 2, 5);
    post(&m, &r[1], 11, 1, 2, 5);
    post(&m, &r[2], 12, 1, 2, 7);
    post(&m, &r[3], 13, 1, 2, 8);
    EXPECT(m.st.posted_depth == 4 && m.st.posted_peak == 4);
    EXPECT(arrive(&m, 1, 2, 8) == 13);
    EXPECT(arrive(&m, 1, 2, 5) == 10);
    EXPECT(arrive(&m, 1, 2, 7) == 12);
    EXPECT(arrive(&m, 1, 2, 5) == 11);
    EXPECT(m.st.posted_depth == 0);
    ucoll__match_fini(&m);
}

static void test_any_tag(void)
{
    ucoll_match_t m;
    recv_t r[3];

    ucoll__match_init(&m);
    post(&m, &r[0], 20, 4, 1, 3);
    post(&m, &r[1], 21, 4, 1, UCOLL_ANY_TAG);
    post(&m, &r[2], 22, 4, 1, 3);
    EXPECT(arrive(&m, 4, 1, 99) == 21); /* skips the tag-3 one before it */
    EXPECT(arrive(&m, 4, 1, 99) == -1);
    EXPECT(arrive(&m, 4, 1, 3) == 20);
    EXPECT(arrive(&m, 4, 1, 3) == 22);
    post(&m, &r[0], 23, 4, 1, UCOLL_ANY_TAG);
    EXPECT(r[0].e.any_tag);
    EXPECT(arrive(&m, 4, 1, UCOLL_TAG_UB) == 23);
    ucoll__match_fini(&m);
}

static void test_any_source(void)
{
    ucoll_match_t m;
    recv_t r[4];

    ucoll__match_init(&m);
    post(&m, &r[0], 30, 5, ANY, 1);
    EXPECT(arrive(&m, 6, 3, 1) == -1); /* other ctx_id */
    EXPECT(arrive(&m, 5, 3, 2) == -1); /* other tag */
    EXPECT(arrive(&m, 5, 9, 1) == 30); /* any source, even beyond every bucket */
    EXPECT(arrive(&m, 5, 0, 1) == -1);

    /* wildcard older than the specific receive: the wildcard wins */
    post(&m, &r[0], 31, 5, ANY, 1);
    post(&m, &r[1], 32, 5, 2, 1);
    EXPECT(arrive(&m, 5, 2, 1) == 31);
    EXPECT(arrive(&m, 5, 2, 1) == 32);
    /* specific older than the wildcard: the specific one wins */
    post(&m, &r[1], 33, 5, 2, 1);
    post(&m, &r[0], 34, 5, ANY, 1);
    EXPECT(arrive(&m, 5, 2, 1) == 33);
    EXPECT(arrive(&m, 5, 2, 1) == 34);
    /* an older wildcard whose tag does not match does not take it */
    post(&m, &r[0], 35, 5, ANY, 9);
    post(&m, &r[1], 36, 5, 2, 1);
    post(&m, &r[2], 37, 5, ANY, UCOLL_ANY_TAG);
    EXPECT(arrive(&m, 5, 2, 1) == 36);
    EXPECT(arrive(&m, 5, 2, 1) == 37);
    EXPECT(arrive(&m, 5, 7, 9) == 35);
    EXPECT(m.st.posted_depth == 0);
    /* several wildcards: posting order among them */
    post(&m, &r[0], 38, 5, ANY, 1);
    post(&m, &r[1], 39, 5, ANY, 1);
    EXPECT(arrive(&m, 5, 4, 1) == 38);
    EXPECT(arrive(&m, 5, 1, 1) == 39);
    ucoll__match_fini(&m);
}

static void test_unexp(void)
{
    ucoll_match_t m;
    msg_t g[6];

    ucoll__match_init(&m);
    EXPECT(receive(&m, 1, 1, 1) == -1);
    EXPECT(receive(&m, 1, ANY, UCOLL_ANY_TAG) == -1);
    add(&m, &g[0], 40, 1, 1, 7, 100);
    add(&m, &g[1], 41, 1, 1, 7, 10);
    add(&m, &g[2], 42, 1, 2, 7, 1);
    EXPECT(m.st.unexp_depth == 3 && m.st.unexp_bytes == 111);
    EXPECT(m.st.unexp_peak == 3 && m.st.unexp_bytes_peak == 111);
    /* per source, in arrival order */
    EXPECT(receive(&m, 1, 1, 7) == 40);
    EXPECT(m.st.unexp_depth == 2 && m.st.unexp_bytes == 11);
    EXPECT(receive(&m, 1, 1, 7) == 41);
    EXPECT(receive(&m, 1, 1, 7) == -1);
    EXPECT(receive(&m, 1, 3, 7) == -1);
    EXPECT(receive(&m, 1, 2, 7) == 42);
    EXPECT(m.st.unexp_depth == 0 && m.st.unexp_bytes == 0);
    EXPECT(m.st.unexp_peak == 3 && m.st.unexp_bytes_peak == 111);

    /* ANY_SOURCE: arrival order across sources */
    add(&m, &g[0], 50, 1, 3, 7, 0);
    add(&m, &g[1], 51, 1, 1, 7, 0);
    add(&m, &g[2], 52, 1, 3, 8, 0);
    add(&m, &g[3], 53, 1, 0, 7, 0);
    EXPECT(receive(&m, 1, ANY, 7) == 50);
    EXPECT(receive(&m, 1, ANY, 7) == 51);
    EXPECT(receive(&m, 1, ANY, UCOLL_ANY_TAG) == 52);
    EXPECT(receive(&m, 1, ANY, 8) == -1);
    /* taken through ANY_SOURCE, gone from its source's queue too */
    add(&m, &g[4], 54, 1, 0, 7, 0);
    EXPECT(receive(&m, 1, ANY, 7) == 53);
    EXPECT(receive(&m, 1, 0, 7) == 54);
    EXPECT(receive(&m, 1, ANY, UCOLL_ANY_TAG) == -1);

    /* specific receive skipping earlier messages of other tags, and a
     * message taken by a specific receive gone from the ANY_SOURCE view */
    add(&m, &g[0], 60, 1, 1, 1, 0);
    add(&m, &g[1], 61, 1, 1, 2, 0);
    add(&m, &g[2], 62, 1, 1, 1, 0);
    EXPECT(receive(&m, 1, 1, 2) == 61);
    EXPECT(receive(&m, 1, 1, UCOLL_ANY_TAG) == 60);
    EXPECT(receive(&m, 1, ANY, 2) == -1);
    EXPECT(receive(&m, 1, ANY, 1) == 62);
    EXPECT(m.st.unexp_depth == 0);
    ucoll__match_fini(&m);
}

static void test_ctx_isolation(void)
{
    ucoll_match_t m;
    recv_t r[4];
    msg_t g[4];

    ucoll__match_init(&m);
    /* 3 and 3 + UCOLL_MATCH_HASH share a hash chain */
    add(&m, &g[0], 70, 3, 1, 1, 0);
    add(&m, &g[1], 71, 3 + UCOLL_MATCH_HASH, 1, 1, 0);
    EXPECT(receive(&m, 4, 1, 1) == -1);
    EXPECT(receive(&m, 4, ANY, UCOLL_ANY_TAG) == -1);
    EXPECT(receive(&m, 3 + UCOLL_MATCH_HASH, ANY, 1) == 71);
    EXPECT(receive(&m, 3 + UCOLL_MATCH_HASH, 1, 1) == -1);
    EXPECT(receive(&m, 3, 1, 1) == 70);

    post(&m, &r[0], 72, 3, 1, 1);
    post(&m, &r[1], 73, 3 + UCOLL_MATCH_HASH, 1, 1);
    post(&m, &r[2], 74, 3 + 2 * UCOLL_MATCH_HASH, ANY, 1);
    /* alternate so that the last-used cache misses every time */
    EXPECT(arrive(&m, 3 + 2 * UCOLL_MATCH_HASH, 1, 1) == 74);
    EXPECT(arrive(&m, 3 + UCOLL_MATCH_HASH, 1, 1) == 73);
    EXPECT(arrive(&m, 3 + 2 * UCOLL_MATCH_HASH, 1, 1) == -1);
    EXPECT(arrive(&m, 3 + UCOLL_MATCH_HASH, 1, 1) == -1);
    EXPECT(arrive(&m, 3, 1, 1) == 72);
    EXPECT(m.st.posted_depth == 0);
    /* the last ctx_id looked up is the one cached */
    EXPECT(m.cq_last != NULL && m.cq_last->ctx_id == 3);
    EXPECT(arrive(&m, 3 + UCOLL_MATCH_HASH, 1, 1) == -1);
    EXPECT(m.cq_last != NULL && m.cq_last->ctx_id == 3 + UCOLL_MATCH_HASH);
    /* a receive posted on one ctx_id does not see a message of another */
    post(&m, &r[3], 75, 7, ANY, UCOLL_ANY_TAG);
    add(&m, &g[2], 76, 8, 1, 1, 0);
    EXPECT(r[3].e.posted);
    EXPECT(receive(&m, 7, ANY, UCOLL_ANY_TAG) == -1);
    EXPECT(arrive(&m, 7, 1, 1) == 75);
    EXPECT(receive(&m, 8, 1, 1) == 76);
    ucoll__match_fini(&m);
}

static void test_unpost(void)
{
    ucoll_match_t m;
    recv_t r[4];

    ucoll__match_init(&m);
    post(&m, &r[0], 80, 1, 2, 1);
    post(&m, &r[1], 81, 1, 2, 1);
    post(&m, &r[2], 82, 1, ANY, 1);
    post(&m, &r[3], 83, 1, 2, 1);
    ucoll__match_unpost(&m, &r[1].e);
    ucoll__match_unpost(&m, &r[2].e);
    EXPECT(!r[1].e.posted && !r[2].e.posted && r[3].e.posted);
    EXPECT(m.st.posted_depth == 2 && m.st.posted_peak == 4);
    EXPECT(arrive(&m, 1, 2, 1) == 80);
    EXPECT(arrive(&m, 1, 2, 1) == 83);
    EXPECT(arrive(&m, 1, 5, 1) == -1); /* the wildcard is gone */
    EXPECT(m.st.posted_depth == 0);
    ucoll__match_fini(&m);
}

/* More ctx_ids than hash chains, sources well past the first bucket array
 * (8), and every (ctx_id, source) pair with its own receive and message. */
#define NCTX 200
#define NSRC 70

static void test_many(void)
{
    static recv_t r[NCTX][NSRC];
    static msg_t g[NCTX][NSRC];
    ucoll_match_t m;
    int c, s, ok;

    ucoll__match_init(&m);
    for (c = 0; c < NCTX; c++) {
        /* sources in descending order: the first one grows the array */
        for (s = NSRC - 1; s >= 0; s--) {
            post(&m, &r[c][s], c * NSRC + s, (uint32_t)c * 3, s, c);
        }
    }
    EXPECT(m.st.posted_depth == NCTX * NSRC);
    for (c = 0; c < NCTX; c++) {
        for (s = 0; s < NSRC; s++) {
            add(&m, &g[c][s], c * NSRC + s, (uint32_t)c * 3 + 1, s, c, 1);
        }
    }
    EXPECT(m.st.unexp_depth == NCTX * NSRC && m.st.unexp_bytes == NCTX * NSRC);
    ok = 1;
    for (s = 0; s < NSRC; s++) {
        for (c = NCTX - 1; c >= 0; c--) {
            ok &= arrive(&m, (uint32_t)c * 3, s, c + 1) == -1;
            ok &= arrive(&m, (uint32_t)c * 3, s, c) == c * NSRC + s;
            ok &= receive(&m, (uint32_t)c * 3 + 1, s, c) == c * NSRC + s;
        }
    }
    EXPECT(ok);
    EXPECT(m.st.posted_depth == 0 && m.st.unexp_depth == 0 && m.st.unexp_bytes == 0);
    /* a source far above the others grows the array in one step */
    post(&m, &r[0][0], 90, 0, 1000, 0);
    EXPECT(arrive(&m, 0, 1000, 0) == 90);
    ucoll__match_fini(&m);
}

typedef struct {
    int src;
} pred_arg_t;

static int recv_from(const ucoll_match_recv_t *e, void *arg)
{
    return e->src == ((pred_arg_t *)arg)->src || e->src == UCOLL_ANY_SOURCE;
}

static int msg_from(const ucoll_match_msg_t *g, void *arg)
{
    return g->src == ((pred_arg_t *)arg)->src;
}

/* ids on list (linked by the entries' links), in order, into ids */
static int recv_ids(ucoll_list_t *list, int *ids, int max)
{
    ucoll_list_t *pos;
    int n = 0;

    ucoll_list_for_each(pos, list)
    {
        if (n < max) {
            ids[n] = ucoll_container_of(pos, recv_t, e.link)->id;
        }
        n++;
    }
    return n;
}

static int msg_ids(ucoll_list_t *list, int *ids, int max)
{
    ucoll_list_t *pos;
    int n = 0;

    ucoll_list_for_each(pos, list)
    {
        if (n < max) {
            ids[n] = ucoll_container_of(pos, msg_t, e.link)->id;
        }
        n++;
    }
    return n;
}

static void test_take(void)
{
    pred_arg_t a = {3};
    ucoll_list_t out;
    ucoll_match_t m;
    recv_t r[7];
    msg_t g[6];
    int ids[8];

    ucoll__match_init(&m);
    post(&m, &r[0], 100, 1, 3, 1);
    post(&m, &r[1], 101, 1, 2, 1);
    post(&m, &r[2], 102, 1, ANY, 1);
    post(&m, &r[3], 103, 1, 3, 2);
    post(&m, &r[4], 104, 1, 10, 1);
    post(&m, &r[5], 105, 2, 3, 1);
    post(&m, &r[6], 106, 1, 1, 1);
    ucoll_list_init(&out);
    /* ctx_id 1 (sources in order, then wildcards), then ctx_id 2 */
    EXPECT(ucoll__match_posted_take(&m, recv_from, &a, &out) == 4);
    EXPECT(recv_ids(&out, ids, 8) == 4);
    EXPECT(ids[0] == 100 && ids[1] == 103 && ids[2] == 102 && ids[3] == 105);
    EXPECT(!r[0].e.posted && !r[2].e.posted && !r[3].e.posted && !r[5].e.posted);
    EXPECT(r[1].e.posted && r[4].e.posted && r[6].e.posted);
    EXPECT(m.st.posted_depth == 3);
    /* what is left still matches; what was taken does not */
    EXPECT(arrive(&m, 1, 3, 1) == -1);
    EXPECT(arrive(&m, 2, 3, 1) == -1);
    EXPECT(arrive(&m, 1, 2, 1) == 101);
    /* NULL takes everything left */
    ucoll_list_init(&out);
    EXPECT(ucoll__match_posted_take(&m, NULL, NULL, &out) == 2);
    EXPECT(recv_ids(&out, ids, 8) == 2 && ids[0] == 106 && ids[1] == 104);
    EXPECT(m.st.posted_depth == 0);
    EXPECT(arrive(&m, 1, 10, 1) == -1);
    ucoll_list_init(&out);
    EXPECT(ucoll__match_posted_take(&m, NULL, NULL, &out) == 0 && ucoll_list_empty(&out));

    add(&m, &g[0], 110, 1, 3, 1, 5);
    add(&m, &g[1], 111, 1, 2, 1, 6);
    add(&m, &g[2], 112, 1, 3, 2, 7);
    add(&m, &g[3], 113, 2, 3, 1, 8);
    add(&m, &g[4], 114, 2, 4, 1, 9);
    add(&m, &g[5], 115, 1, 3, 1, 10);
    ucoll_list_init(&out);
    /* ctx_id by ctx_id, in arrival order */
    EXPECT(ucoll__match_unexp_take(&m, msg_from, &a, &out) == 4);
    EXPECT(msg_ids(&out, ids, 8) == 4);
    EXPECT(ids[0] == 110 && ids[1] == 112 && ids[2] == 115 && ids[3] == 113);
    EXPECT(m.st.unexp_depth == 2 && m.st.unexp_bytes == 15);
    EXPECT(m.st.unexp_peak == 6 && m.st.unexp_bytes_peak == 45);
    EXPECT(receive(&m, 1, ANY, UCOLL_ANY_TAG) == 111);
    EXPECT(receive(&m, 1, 3, UCOLL_ANY_TAG) == -1);
    ucoll_list_init(&out);
    EXPECT(ucoll__match_unexp_take(&m, NULL, NULL, &out) == 1);
    EXPECT(msg_ids(&out, ids, 8) == 1 && ids[0] == 114);
    EXPECT(m.st.unexp_depth == 0 && m.st.unexp_bytes == 0);
    EXPECT(receive(&m, 2, 4, 1) == -1);
    ucoll__match_fini(&m);
}

/* fini with entries still queued leaves them alone; with nothing, nothing */
static void test_fini(void)
{
    ucoll_match_t m;
    recv_t r;
    msg_t g;

    ucoll__match_init(&m);
    ucoll__match_fini(&m);
    post(&m, &r, 120, 9, 100, 1);
    add(&m, &g, 121, 9, 50, 1, 4);
    ucoll__match_fini(&m);
    EXPECT(r.id == 120 && g.id == 121 && g.e.data_len == 4);
    /* usable again after fini */
    post(&m, &r, 122, 9, 1, 1);
    EXPECT(arrive(&m, 9, 1, 1) == 122);
    ucoll__match_fini(&m);
}

int main(void)
{
    test_specific();
    test_any_tag();
    test_any_source();
    test_unexp();
    test_ctx_isolation();
    test_unpost();
    test_many();
    test_take();
    test_fini();
    if (failures) {
        printf("test_match: %d failed\n", failures);
        return 1;
    }
    printf("test_match: all passed\n");
    return 0;
}

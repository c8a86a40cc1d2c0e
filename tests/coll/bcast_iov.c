/*
 * Coalesced broadcast (ucoll_bcast_iov, ucoll_ibcast_iov): the bytes of a
 * list of buffers, split differently on every rank, from each root in turn,
 * checked byte for byte on every rank.
 *   bcast_iov    (any number of ranks)
 * Totals from 0 bytes to 3 MiB + 5 (inline payloads, one piece, many
 * pieces), lists with empty entries (NULL buf), 1 to 40 entries; then
 * several nonblocking ones in flight with plain bcasts between them; then
 * bad arguments, which must fail alike on every rank and leave the next
 * calls paired. Prints "bcast_iov: rank R ok".
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* one call's buffers on this rank */
typedef struct {
    ucoll_iov_t *iov;
    size_t n, total;
} list_t;

static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static unsigned char pattern(size_t i, int root, size_t total)
{
    return (unsigned char)((i * 131u + (size_t)root * 17u + total) % 251u + 1u);
}

/* Split total bytes into entries in a way of this rank's own (seed), with
 * empty entries among them; every entry its own allocation. */
static int make_list(list_t *l, size_t total, uint64_t seed)
{
    size_t left = total, cap = 1 + next(&seed) % 40;

    l->iov = calloc(cap + 1, sizeof(*l->iov));
    l->n = 0;
    l->total = total;
    if (l->iov == NULL) {
        return -1;
    }
    while (l->n < cap) {
        size_t len = l->n + 1 == cap ? left : (left ? next(&seed) % (left + 1) : 0);

        if (next(&seed) % 5 == 0) {
            len = 0; /* an empty entry */
        }
        if (l->n + 1 == cap) {
            len = left;
        }
        l->iov[l->n].len = len;
        l->iov[l->n].buf = len ? malloc(len) : NULL;
        if (len && l->iov[l->n].buf == NULL) {
            return -1;
        }
        left -= len;
        l->n++;
    }
    return 0;
}

static void fill(list_t *l, int me, int root)
{
    size_t off = 0;

    for (size_t k = 0; k < l->n; k++) {
        unsigned char *b = l->iov[k].buf;

        for (size_t i = 0; i < l->iov[k].len; i++) {
            b[i] = me == root ? pattern(off + i, root, l->total) : 0xEE;
        }
        off += l->iov[k].len;
    }
}

static void verify(list_t *l, int root, const char *what)
{
    size_t off = 0;

    for (size_t k = 0; k < l->n; k++) {
        const unsigned char *b = l->iov[k].buf;

        for (size_t i = 0; i < l->iov[k].len; i++) {
            if (b[i] != pattern(off + i, root, l->total)) {
                CHECK(0,
                      "%s: %zu bytes from root %d in %zu entries: byte %zu (entry %zu) is %u, "
                      "not %u",
                      what, l->total, root, l->n, off + i, k, b[i],
                      pattern(off + i, root, l->total));
                return;
            }
        }
        off += l->iov[k].len;
    }
}

static void free_list(list_t *l)
{
    for (size_t k = 0; k < l->n; k++) {
        free(l->iov[k].buf);
    }
    free(l->iov);
}

int main(void)
{
    static const size_t totals[] = {
        0, 1, 7, 40, 100, 1000, 16384, 65536 + 3, 200000, (1u << 20) + 5, (3u << 20) + 5};
    const size_t nt = sizeof(totals) / sizeof(totals[0]);
    ucoll_ctx_t *ctx;
    ucoll_comm_t *w;
    int p, st;

    if (ucoll_init(&ctx) != UCOLL_OK) {
        fprintf(stderr, "bcast_iov: init failed\n");
        return 1;
    }
    w = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(w);
    p = ucoll_comm_size(w);

    /* blocking: every total from every root (roots in turn for the large) */
    for (size_t t = 0; t < nt; t++) {
        for (int root = 0; root < p; root++) {
            list_t l;

            if (totals[t] > 100000 && root != (int)(t % (size_t)p)) {
                continue;
            }
            CHECK(make_list(&l, totals[t], 1000u * t + 7u * (uint64_t)rank + (uint64_t)root) == 0,
                  "out of memory");
            fill(&l, rank, root);
            st = ucoll_bcast_iov(l.iov, l.n, root, w);
            CHECK(st == UCOLL_OK, "bcast_iov of %zu bytes from %d: %s", totals[t], root,
                  ucoll_strerror(st));
            verify(&l, root, "blocking");
            free_list(&l);
        }
    }

    /* nonblocking: four in flight, a plain bcast between each two; the
     * iov arrays are overwritten right after the calls return */
    {
        enum { K = 4 };
        list_t l[K];
        ucoll_req_t *reqs[2 * K];
        int plain[K];

        for (int k = 0; k < K; k++) {
            int root = (k + 1) % p;

            CHECK(make_list(&l[k], totals[(5 + 2 * (size_t)k) % nt],
                            99u * (uint64_t)k + (uint64_t)rank) == 0,
                  "out of memory");
            fill(&l[k], rank, root);
            st = ucoll_ibcast_iov(l[k].iov, l[k].n, root, w, &reqs[2 * k]);
            CHECK(st == UCOLL_OK, "ibcast_iov %d: %s", k, ucoll_strerror(st));
            plain[k] = rank == k % p ? 1000 + k : -1;
            st = ucoll_ibcast(&plain[k], 1, UCOLL_INT32, k % p, w, &reqs[2 * k + 1]);
            CHECK(st == UCOLL_OK, "ibcast %d: %s", k, ucoll_strerror(st));
        }
        /* the list array is the caller's again: scribble on a copy's worth */
        {
            ucoll_iov_t *saved[K];

            for (int k = 0; k < K; k++) {
                saved[k] = malloc(l[k].n * sizeof(ucoll_iov_t));
                if (saved[k]) {
                    memcpy(saved[k], l[k].iov, l[k].n * sizeof(ucoll_iov_t));
                    memset(l[k].iov, 0, l[k].n * sizeof(ucoll_iov_t));
                }
            }
            st = ucoll_waitall(2 * K, reqs);
            CHECK(st == UCOLL_OK, "waitall: %s", ucoll_strerror(st));
            for (int k = 0; k < K; k++) {
                if (saved[k]) {
                    memcpy(l[k].iov, saved[k], l[k].n * sizeof(ucoll_iov_t));
                    free(saved[k]);
                }
                verify(&l[k], (k + 1) % p, "nonblocking");
                CHECK(plain[k] == 1000 + k, "plain bcast %d between them: %d", k, plain[k]);
                free_list(&l[k]);
            }
        }
    }

    /* bad arguments: the same on every rank, none of them takes a call */
    {
        char x[8];
        ucoll_iov_t bad[2] = {{x, sizeof(x)}, {NULL, 5}};
        ucoll_req_t *req = NULL;
        int v = rank == 0 ? 77 : 0;

        CHECK(ucoll_bcast_iov(NULL, 2, 0, w) == UCOLL_ERR_ARG, "NULL iov");
        CHECK(ucoll_bcast_iov(bad, 2, 0, w) == UCOLL_ERR_ARG, "NULL buf with 5 bytes");
        CHECK(ucoll_bcast_iov(bad, 1, p, w) != UCOLL_OK, "root %d of %d ranks", p, p);
        CHECK(ucoll_ibcast_iov(bad, 1, 0, w, NULL) != UCOLL_OK, "NULL request pointer");
        CHECK(ucoll_ibcast_iov(bad, 1, 0, NULL, &req) != UCOLL_OK, "NULL communicator");
        CHECK(ucoll_bcast(&v, 1, UCOLL_INT32, 0, w) == UCOLL_OK && v == 77,
              "the bcast after the bad calls: %d", v);
    }
    CHECK(ucoll_barrier(w) == UCOLL_OK, "last barrier");
    ucoll_finalize(ctx);
    if (failures == 0) {
        printf("bcast_iov: rank %d ok\n", rank);
    }
    return failures != 0;
}

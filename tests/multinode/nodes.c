/*
 * A job over several nodes: what each rank learns about locality, the
 * transports UCX picks, and every collective across nodes.
 *   nodes EXPECTED_NODES [iterations]
 * Checks, on every rank:
 *   - the launcher's locality agrees with the host names (gathered from
 *     every rank): local size = ranks with this host name, local rank = the
 *     index among them;
 *   - EXPECTED_NODES distinct host names;
 *   - to a peer of another node UCX uses the network (tcp), to a peer of
 *     this node shared memory;
 *   - allreduce, bcast, allgather, alltoall, reduce, barrier with each
 *     root, results checked, over the world and over a split per node and
 *     one across nodes.
 * Prints "nodes: rank R of N on HOST (local L of LS): ok".
 */
#include "tests/rank_check.h"
#include "ucoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOST_LEN 64

static void collectives(ucoll_comm_t *comm, int salt)
{
    int r = ucoll_comm_rank(comm), n = ucoll_comm_size(comm);
    size_t big = 100000; /* rendezvous and pipelines too */
    double *v = malloc(big * sizeof(double)), *w = malloc(big * sizeof(double));
    long *a = malloc((size_t)n * 2 * sizeof(long)), *b = malloc((size_t)n * 2 * sizeof(long));
    long x, y;

    for (size_t i = 0; i < big; i++) {
        v[i] = (double)(r + 1) * (double)(i % 7) + salt;
    }
    CHECK(ucoll_allreduce(v, w, big, UCOLL_FLOAT64, UCOLL_SUM, comm) == UCOLL_OK, "allreduce");
    for (size_t i = 0; i < big; i += 997) {
        double e = (double)n * (n + 1) / 2 * (double)(i % 7) + (double)salt * n;
        CHECK(w[i] == e, "allreduce[%zu] %g, expected %g", i, w[i], e);
    }
    for (int root = 0; root < n; root++) {
        for (size_t i = 0; i < big; i++) {
            w[i] = r == root ? (double)i + root + salt : -1;
        }
        CHECK(ucoll_bcast(w, big, UCOLL_FLOAT64, root, comm) == UCOLL_OK, "bcast");
        CHECK(w[0] == root + salt && w[big - 1] == (double)(big - 1) + root + salt,
              "bcast from %d", root);
        x = r + salt;
        y = -1;
        CHECK(ucoll_reduce(&x, &y, 1, UCOLL_INT64, UCOLL_MAX, root, comm) == UCOLL_OK, "reduce");
        CHECK(r != root || y == n - 1 + salt, "reduce to %d: %ld", root, y);
    }
    x = r * 10 + salt;
    CHECK(ucoll_allgather(&x, a, 1, UCOLL_INT64, comm) == UCOLL_OK, "allgather");
    for (int i = 0; i < n; i++) {
        CHECK(a[i] == i * 10 + salt, "allgather[%d] %ld", i, a[i]);
    }
    for (int i = 0; i < n; i++) {
        a[2 * i] = r * 100 + i;
        a[2 * i + 1] = salt;
    }
    CHECK(ucoll_alltoall(a, b, 2, UCOLL_INT64, comm) == UCOLL_OK, "alltoall");
    for (int i = 0; i < n; i++) {
        CHECK(b[2 * i] == i * 100 + r && b[2 * i + 1] == salt, "alltoall from %d", i);
    }
    CHECK(ucoll_barrier(comm) == UCOLL_OK, "barrier");
    free(v);
    free(w);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    ucoll_ctx_t *ctx;
    ucoll_comm_t *world, *node = NULL, *across = NULL;
    int size, expected = argc > 1 ? atoi(argv[1]) : -1, iters = argc > 2 ? atoi(argv[2]) : 3;
    int lsize = 0, lrank = -1, nnodes = 0, node_idx = -1;
    char host[HOST_LEN] = {0}, *hosts, tl[256];

    if (ucoll_init(&ctx) != UCOLL_OK) {
        fprintf(stderr, "nodes: ucoll_init failed\n");
        return 2;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    gethostname(host, sizeof(host) - 1);
    hosts = calloc((size_t)size, HOST_LEN);
    CHECK(ucoll_allgather(host, hosts, HOST_LEN, UCOLL_BYTE, world) == UCOLL_OK, "allgather");
    for (int r = 0; r < size; r++) {
        const char *h = hosts + (size_t)r * HOST_LEN;
        int first = 1;

        for (int q = 0; q < r; q++) {
            first &= strcmp(hosts + (size_t)q * HOST_LEN, h) != 0;
        }
        if (first && !strcmp(h, host)) {
            node_idx = nnodes;
        }
        nnodes += first;
        if (!strcmp(h, host)) {
            if (r == rank) {
                lrank = lsize;
            }
            lsize++;
        }
    }
    CHECK(expected < 0 || nnodes == expected, "%d host names, expected %d", nnodes, expected);
    CHECK(ucoll_local_size(ctx) == lsize, "local size %d, %d ranks on %s",
          ucoll_local_size(ctx), lsize, host);
    CHECK(ucoll_local_rank(ctx) == lrank, "local rank %d, expected %d", ucoll_local_rank(ctx),
          lrank);
    for (int r = 0; r < size; r++) {
        int same = !strcmp(hosts + (size_t)r * HOST_LEN, host);

        if (r == rank) {
            continue;
        }
        CHECK(ucoll_peer_transports(ctx, r, tl, sizeof(tl)) == UCOLL_OK, "transports to %d", r);
        if (same) {
            CHECK(strstr(tl, "memory") != NULL, "to rank %d on this node via '%s'", r, tl);
        } else {
            CHECK(strstr(tl, "tcp") != NULL && strstr(tl, "memory") == NULL,
                  "to rank %d on another node via '%s'", r, tl);
        }
        if (rank == 0 || r == (rank + 1) % size) {
            printf("nodes: rank %d -> %d (%s node): %s\n", rank, r, same ? "same" : "other", tl);
        }
    }
    CHECK(ucoll_comm_split(world, node_idx, rank, &node) == UCOLL_OK, "split per node");
    CHECK(ucoll_comm_split(world, lrank, rank, &across) == UCOLL_OK, "split across nodes");
    for (int i = 0; i < iters; i++) {
        collectives(world, i);
        if (node) {
            collectives(node, 100 + i);
        }
        if (across) {
            collectives(across, 200 + i);
        }
    }
    if (node) {
        ucoll_comm_free(node);
    }
    if (across) {
        ucoll_comm_free(across);
    }
    free(hosts);
    CHECK(ucoll_finalize(ctx) == UCOLL_OK, "finalize");
    if (failures == 0) {
        printf("nodes: rank %d of %d on %s (local %d of %d): ok\n", rank, size, host, lrank, lsize);
    }
    return failures ? 1 : 0;
}

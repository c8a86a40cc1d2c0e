/*
 * The main job: every rank bootstraps, says where it runs and how it reaches
 * its neighbour, rank 0 broadcasts a "model" of float32 weights, every rank
 * computes a "gradient" and the gradients are summed with an allreduce.
 * Each rank checks the results against what they must be.
 *
 *   ucollrun -n 4 build/examples/demo [elements]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucoll.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : (1u << 20);
    ucoll_ctx_t *ctx;
    ucoll_comm_t *world;
    int rank, size, status, bad = 0;
    char host[64], tl[256] = "-";
    float *w, *g;
    double t0, t_bcast, t_allreduce;

    status = ucoll_init(&ctx);
    if (status != UCOLL_OK) {
        fprintf(stderr, "demo: ucoll_init: %s\n", ucoll_strerror(status));
        return 1;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    gethostname(host, sizeof(host));
    if (size > 1) {
        ucoll_peer_transports(ctx, (rank + 1) % size, tl, sizeof(tl));
    }
    printf("rank %d of %d on %s (local rank %d of %d); to rank %d via %s\n", rank, size, host,
           ucoll_local_rank(ctx), ucoll_local_size(ctx), (rank + 1) % size, tl);
    fflush(stdout);

    w = malloc(n * sizeof(float));
    g = malloc(n * sizeof(float));
    if (!w || !g) {
        fprintf(stderr, "demo: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        w[i] = rank == 0 ? (float)(i % 1000) * 0.5f : -1.0f;
    }
    /* the first call also connects endpoints and warms caches: time the
     * second one */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (size_t i = 0; i < n; i++) {
                w[i] = rank == 0 ? (float)(i % 1000) * 0.5f : -1.0f;
            }
        }
        ucoll_barrier(world);
        t0 = now();
        status = ucoll_bcast(w, n, UCOLL_FLOAT32, 0, world);
        t_bcast = now() - t0;
        if (status != UCOLL_OK) {
            break;
        }
    }
    if (status != UCOLL_OK) {
        fprintf(stderr, "demo: rank %d: bcast: %s\n", rank, ucoll_strerror(status));
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        bad += w[i] != (float)(i % 1000) * 0.5f;
        g[i] = (float)(rank + 1) * (float)(i % 7);
    }
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (size_t i = 0; i < n; i++) {
                g[i] = (float)(rank + 1) * (float)(i % 7);
            }
        }
        ucoll_barrier(world);
        t0 = now();
        status = ucoll_allreduce(UCOLL_IN_PLACE, g, n, UCOLL_FLOAT32, UCOLL_SUM, world);
        t_allreduce = now() - t0;
        if (status != UCOLL_OK) {
            break;
        }
    }
    if (status != UCOLL_OK) {
        fprintf(stderr, "demo: rank %d: allreduce: %s\n", rank, ucoll_strerror(status));
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        float want = (float)size * (size + 1) / 2 * (float)(i % 7);
        bad += fabsf(g[i] - want) > 1e-3f * fabsf(want);
    }
    if (bad) {
        printf("rank %d: %d wrong elements\n", rank, bad);
    }
    status = ucoll_allreduce(UCOLL_IN_PLACE, &bad, 1, UCOLL_INT32, UCOLL_SUM, world);
    if (rank == 0) {
        printf("broadcast of %zu float32 weights (%.1f MB) from rank 0: %.3f ms (second call)\n", n,
               n * 4 / 1e6, t_bcast * 1e3);
        printf("allreduce (sum) of %zu float32 gradients: %.3f ms; g[6] = %g (expected %g)\n", n,
               t_allreduce * 1e3, g[6 % n], (double)size * (size + 1) / 2 * 6);
        printf("%s: %d ranks agree on the weights and the summed gradients\n",
               bad == 0 ? "OK" : "FAILED", size);
    }
    free(w);
    free(g);
    ucoll_finalize(ctx);
    return bad != 0 || status != UCOLL_OK;
}

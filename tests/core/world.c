/*
 * Bootstrap and wiring check, run under a launcher with N ranks:
 *   world EXPECTED_SIZE
 * Every rank checks rank/size/local rank/local size, then exchanges a
 * message with every other rank (so every endpoint is wired and used),
 * prints one line and finalizes. Exit 0 only if all of it held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucoll.h>

#define CHECK(_cond, ...)                              \
    do {                                               \
        if (!(_cond)) {                                \
            fprintf(stderr, "world: rank %d: ", rank); \
            fprintf(stderr, __VA_ARGS__);              \
            fprintf(stderr, "\n");                     \
            return 1;                                  \
        }                                              \
    } while (0)

int main(int argc, char **argv)
{
    ucoll_ctx_t *ctx;
    ucoll_comm_t *world;
    int rank = -1, size, expected, status, peer;
    char tl[256];

    expected = argc > 1 ? atoi(argv[1]) : -1;
    status = ucoll_init(&ctx);
    if (status != UCOLL_OK) {
        fprintf(stderr, "world: ucoll_init: %s\n", ucoll_strerror(status));
        return 2;
    }
    world = ucoll_comm_world(ctx);
    rank = ucoll_comm_rank(world);
    size = ucoll_comm_size(world);
    CHECK(expected < 0 || size == expected, "size %d, expected %d", size, expected);
    CHECK(rank >= 0 && rank < size, "rank %d out of 0..%d", rank, size - 1);
    CHECK(ucoll_local_size(ctx) == size, "local size %d on one node of %d ranks",
          ucoll_local_size(ctx), size);
    CHECK(ucoll_local_rank(ctx) == rank, "local rank %d, rank %d", ucoll_local_rank(ctx), rank);

    /* Everyone talks to everyone: round d exchanges with rank +-d. */
    for (int d = 1; d < size; d++) {
        int to = (rank + d) % size, from = (rank - d + size) % size;
        long out[2] = {rank, d}, in[2] = {-1, -1};
        ucoll_req_t *req;
        ucoll_status_t st;

        status = ucoll_irecv(in, 2, UCOLL_INT64, from, d, world, &req);
        CHECK(status == UCOLL_OK, "irecv from %d: %s", from, ucoll_strerror(status));
        status = ucoll_send(out, 2, UCOLL_INT64, to, d, world);
        CHECK(status == UCOLL_OK, "send to %d: %s", to, ucoll_strerror(status));
        status = ucoll_wait(req, &st);
        CHECK(status == UCOLL_OK, "wait for %d: %s", from, ucoll_strerror(status));
        CHECK(in[0] == from && in[1] == d && st.source == from && st.tag == d &&
                  st.bytes == sizeof(in),
              "from %d got (%ld, %ld), status source %d tag %d bytes %zu", from, in[0], in[1],
              st.source, st.tag, st.bytes);
    }
    peer = (rank + 1) % size;
    status = ucoll_peer_transports(ctx, peer, tl, sizeof(tl));
    CHECK(status == UCOLL_OK, "transports to %d: %s", peer, ucoll_strerror(status));
    printf("world: rank %d of %d, local %d of %d, reached %d peers, to rank %d via %s\n", rank,
           size, ucoll_local_rank(ctx), ucoll_local_size(ctx), size - 1, peer, tl);
    fflush(stdout);
    status = ucoll_finalize(ctx);
    CHECK(status == UCOLL_OK, "finalize: %s", ucoll_strerror(status));
    return 0;
}

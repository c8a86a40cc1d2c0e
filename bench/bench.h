/*
 * ucoll_bench: the modes, shared between main (ucoll_bench.c) and the
 * collective modes (bench_coll.c).
 */
#ifndef UCOLL_BENCH_H
#define UCOLL_BENCH_H

#include <ucoll.h>

/*
 * Run the collective benchmark `mode` (a collective's name: barrier, bcast,
 * reduce, ..., exscan) on the world communicator of ctx, with the options in
 * argv (argc of them, the mode itself not included): --algo ID, --check,
 * --iters N, --warmup N, --min-size B, --max-size B, --dtype NAME, --op NAME.
 * Rank 0 prints the table. Returns the process exit code: 0 on success, 1 on
 * a bad option, an error, or (with --check) a wrong result.
 */
int ucoll_bench_coll(ucoll_ctx_t *ctx, const char *mode, int argc, char **argv);

#endif

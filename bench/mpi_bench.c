/*
 * mpi_bench: the reference side of bench/vs_mpi.sh. The same method and
 * columns as ucoll_bench's collective modes (bench_coll.c), for an MPI
 * library, so that ucoll and Open MPI / MPICH are measured alike:
 *
 *   for every size (powers of two from --min-size to --max-size): warm-up
 *   calls, then timed calls, each timed on its own and followed by a
 *   barrier; each rank averages its own latency; rank 0 prints the mean,
 *   minimum and maximum of those averages over the ranks. 1000 calls (100
 *   warm-up) up to 8 KiB, 100 (10) above, unless --iters / --warmup say.
 *
 * "bytes" means what ucoll_bench means: the whole vector for bcast, reduce,
 * allreduce and the input of reduce_scatter_block; one rank's block for
 * gather, scatter, allgather; one pair's block for alltoall.
 * --chain (bcast): roots alternate between 0 and p-1 with no barrier between
 * calls, every rank dividing the time of the timed loop by the calls, as
 * ucoll_bench --chain.
 * Point-to-point modes: latency (ping-pong, half round trip) and bw (window
 * of 64, MB/s = 1e6 B/s), as ucoll_bench's.
 *
 * Built only when an MPI compiler wrapper is installed (bench/meson.build),
 * never linked into the runtime. Rows are "bytes avg_us min_us max_us".
 */
#include "varied.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE  8192
#define WINDOW 64

typedef enum {
    M_BARRIER,
    M_BCAST,
    M_REDUCE,
    M_ALLREDUCE,
    M_GATHER,
    M_SCATTER,
    M_ALLGATHER,
    M_ALLTOALL,
    M_RSB,
    M_LATENCY,
    M_BW
} mode_t_;

static const char *names[] = {"barrier",   "bcast",    "reduce",
                              "allreduce", "gather",   "scatter",
                              "allgather", "alltoall", "reduce_scatter_block",
                              "latency",   "bw"};

static size_t parse_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);

    switch (*end) {
    case 'k':
    case 'K': v <<= 10; break;
    case 'm':
    case 'M': v <<= 20; break;
    case 'g':
    case 'G': v <<= 30; break;
    default: break;
    }
    return v;
}

static int call(int mode, char *s, char *r, size_t bytes, int p, int root)
{
    int n = (int)(bytes / 4);

    switch (mode) {
    case M_BARRIER: return MPI_Barrier(MPI_COMM_WORLD);
    case M_BCAST: return MPI_Bcast(r, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD);
    case M_REDUCE: return MPI_Reduce(s, r, n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    case M_ALLREDUCE: return MPI_Allreduce(s, r, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    case M_GATHER:
        return MPI_Gather(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    case M_SCATTER:
        return MPI_Scatter(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    case M_ALLGATHER:
        return MPI_Allgather(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    case M_ALLTOALL:
        return MPI_Alltoall(s, (int)bytes, MPI_BYTE, r, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    case M_RSB: return MPI_Reduce_scatter_block(s, r, n / p, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    default: return MPI_ERR_OTHER;
    }
}

/* --fresh: write this rank's input before a call, untimed, with bytes that
 * change along it and from call to call (as ucoll_bench --fresh). */
static void refresh(int mode, char *s, char *r, size_t bytes, int p, int rank, int i)
{
    uint64_t salt = (uint64_t)rank << 32 | (uint64_t)(i + 1);

    switch (mode) {
    case M_BARRIER: break;
    case M_BCAST:
        if (rank == 0) {
            ucoll_bench_vary(r, bytes, salt);
        }
        break;
    case M_SCATTER:
        if (rank == 0) {
            ucoll_bench_vary(s, bytes * (size_t)p, salt);
        }
        break;
    case M_ALLTOALL: ucoll_bench_vary(s, bytes * (size_t)p, salt); break;
    default: ucoll_bench_vary(s, bytes, salt); break;
    }
}

static double p2p(int mode, char *s, char *r, size_t bytes, int iters, int warmup, int rank)
{
    MPI_Request reqs[WINDOW];
    MPI_Status sts[WINDOW];
    double t0 = 0;
    int peer = 1 - rank;

    for (int i = 0; i < iters + warmup; i++) {
        if (i == warmup) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (mode == M_LATENCY) {
            if (rank == 0) {
                MPI_Send(s, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(r, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(r, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(s, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
            continue;
        }
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++) {
                MPI_Isend(s, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[w]);
            }
            MPI_Waitall(WINDOW, reqs, sts);
            MPI_Recv(r, 4, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < WINDOW; w++) {
                MPI_Irecv(r, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[w]);
            }
            MPI_Waitall(WINDOW, reqs, sts);
            MPI_Send(s, 4, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    if (mode == M_LATENCY) {
        return t * 1e6 / (2.0 * iters);
    }
    return (double)bytes * WINDOW * iters / t / 1e6;
}

int main(int argc, char **argv)
{
    size_t min = 1, max = (size_t)1 << 20, cap;
    int mode = -1, iters = -1, warmup = -1, chain = 0, fresh = 0, varied = 0, rank, p;
    char *s, *r;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--min-size") == 0 && i + 1 < argc) {
            min = parse_size(argv[++i]);
        } else if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc) {
            max = parse_size(argv[++i]);
        } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
            iters = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
            warmup = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--chain") == 0) {
            chain = 1;
        } else if (strcmp(argv[i], "--fresh") == 0) {
            fresh = 1;
        } else if (strcmp(argv[i], "--varied") == 0) {
            varied = 1;
        } else {
            for (int m = 0; m <= M_BW; m++) {
                if (strcmp(argv[i], names[m]) == 0) {
                    mode = m;
                }
            }
        }
    }
    if (mode < 0) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpi_bench MODE [--min-size B] [--max-size B] [--iters N] "
                            "[--warmup N] [--chain] [--fresh] [--varied]; modes:");
            for (int m = 0; m <= M_BW; m++) {
                fprintf(stderr, " %s", names[m]);
            }
            fprintf(stderr, "\n");
        }
        MPI_Finalize();
        return 1;
    }
    if (min == 0) {
        min = 1;
    }
    if (chain && mode != M_BCAST) {
        if (rank == 0) {
            fprintf(stderr, "mpi_bench: --chain is a bcast mode\n");
        }
        MPI_Finalize();
        return 1;
    }
    cap = max * (size_t)p + 64;
    s = malloc(cap);
    r = malloc(cap);
    if (s == NULL || r == NULL) {
        fprintf(stderr, "mpi_bench: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(s, 1, cap);
    memset(r, 0, cap);
    if (varied) { /* as ucoll_bench --varied: the input varies along it */
        ucoll_bench_vary(s, cap, (uint64_t)rank << 32);
        if (rank == 0) {
            ucoll_bench_vary(r, cap, (uint64_t)rank << 32); /* the bcast root's */
        }
    }
    if (rank == 0) {
        printf("# mpi_bench %s%s%s%s p=%d\n# %-10s %12s %12s %12s\n", names[mode],
               chain ? " chain" : "", fresh ? " fresh" : "", varied ? " varied" : "", p, "bytes",
               mode == M_BW ? "MB/s" : "avg_us", "min_us", "max_us");
        fflush(stdout);
    }
    for (size_t bytes = min; bytes <= max; bytes *= 2) {
        int large = bytes > LARGE;
        int it = iters > 0 ? iters : (large ? 100 : 1000);
        int wu = warmup >= 0 ? warmup : (large ? 10 : 100);
        double total = 0, sum, mn, mx;

        if (mode == M_LATENCY || mode == M_BW) {
            double v =
                p2p(mode, s, r, bytes, mode == M_BW ? (iters > 0 ? iters : 20) : it, wu, rank);
            if (rank == 0) {
                printf("%-12zu %12.3f\n", bytes, v);
                fflush(stdout);
            }
            if (bytes > max / 2) {
                break;
            }
            continue;
        }
        if (mode == M_BARRIER) {
            bytes = 0;
        } else if ((mode == M_REDUCE || mode == M_ALLREDUCE) && bytes < 4) {
            continue;
        } else if (mode == M_RSB && bytes < 4 * (size_t)p) {
            continue;
        }
        if (chain) {
            double t0 = 0;

            for (int i = 0; i < wu + it; i++) {
                if (i == wu) {
                    MPI_Barrier(MPI_COMM_WORLD);
                    t0 = MPI_Wtime();
                }
                call(mode, s, r, bytes, p, (i & 1) ? p - 1 : 0);
            }
            total = MPI_Wtime() - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            for (int i = 0; i < wu + it; i++) {
                double t0;

                if (fresh) { /* then a barrier: a root's rewrite is no peer's wait */
                    refresh(mode, s, r, bytes, p, rank, i);
                    MPI_Barrier(MPI_COMM_WORLD);
                }
                t0 = MPI_Wtime();
                call(mode, s, r, bytes, p, 0);
                if (i >= wu) {
                    total += MPI_Wtime() - t0;
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
        total /= it;
        MPI_Reduce(&total, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&total, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        MPI_Reduce(&total, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%-12zu %12.3f %12.3f %12.3f\n", bytes, sum / p * 1e6, mn * 1e6, mx * 1e6);
            fflush(stdout);
        }
        if (mode == M_BARRIER || bytes > max / 2) {
            break;
        }
    }
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}

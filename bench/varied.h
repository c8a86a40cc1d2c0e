/*
 * Input bytes for the benchmarks and the tuner that vary along a buffer,
 * no two 8-byte words alike by construction of a pattern and no two
 * 64-byte lines alike in practice, and with a salt (a rank, a call), each
 * byte 0x30-0x3f: a normal float and double in every pattern.
 *
 * A uniform input (one byte value, or a short period) has equal stretches
 * at different offsets of the vector, which a shared-memory row that
 * leaves unwritten the bytes its region already holds
 * (lib/progress/shm.h, ucoll__shm_put) would skip where an application's
 * data (weights, a gradient) would not let it: rewritten inputs that
 * stand for an application's new data are written with this.
 */
#ifndef UCOLL_BENCH_VARIED_H
#define UCOLL_BENCH_VARIED_H

#include <stddef.h>
#include <stdint.h>

static inline void ucoll_bench_vary(void *buf, size_t len, uint64_t salt)
{
    unsigned char *c = buf;

    for (size_t w = 0; w < len; w += 8) {
        uint64_t x = (w / 8 + 1) * 0x9e3779b97f4a7c15ULL ^ salt * 0xbf58476d1ce4e5b9ULL;

        x ^= x >> 31;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 29;
        for (size_t i = 0; i < 8 && w + i < len; i++) {
            c[w + i] = (unsigned char)(0x30 | ((x >> (8 * i)) & 0x0f));
        }
    }
}

#endif

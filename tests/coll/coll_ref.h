/*
 * Test inputs and a reference for the reducing collectives, written apart
 * from the library (its own half-precision conversions, arithmetic in
 * 64 bits): gen() gives small values so that sums are exact in every type,
 * float16 included; ref_elem() combines ranks lo..hi-1 in rank order.
 */
#ifndef UCOLL_TEST_COLL_REF_H
#define UCOLL_TEST_COLL_REF_H

#include "ucoll.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int ref_is_float(ucoll_dtype_t dt)
{
    return dt == UCOLL_FLOAT16 || dt == UCOLL_BFLOAT16 || dt == UCOLL_FLOAT32 ||
           dt == UCOLL_FLOAT64;
}

static inline int ref_is_signed(ucoll_dtype_t dt)
{
    return dt == UCOLL_INT8 || dt == UCOLL_INT16 || dt == UCOLL_INT32 || dt == UCOLL_INT64;
}

/* Exact for the values gen() makes (small integers, infinities). */
static inline uint16_t ref_to_f16(double v)
{
    uint16_t sign = v < 0 ? 0x8000 : 0;
    int e;
    double m;

    v = fabs(v);
    if (v == 0) {
        return sign;
    }
    if (v >= 65520.0) {
        return sign | 0x7c00;
    }
    m = frexp(v, &e); /* v = m 2^e, m in [0.5, 1) */
    return sign | (uint16_t)((e + 14) << 10) | (uint16_t)(llround(m * 2048) - 1024);
}

static inline double ref_from_f16(uint16_t h)
{
    int e = (h >> 10) & 0x1f, f = h & 0x3ff;
    double v = (e == 0)    ? ldexp(f, -24)
               : (e == 31) ? (f ? NAN : INFINITY)
                           : ldexp(1024 + f, e - 25);
    return (h & 0x8000) ? -v : v;
}

static inline uint16_t ref_to_bf16(double v)
{
    float f = (float)v;
    uint32_t u;

    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16); /* exact for gen()'s values */
}

static inline double ref_from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;

    memcpy(&f, &u, 4);
    return f;
}

static inline long long ref_gen(ucoll_op_t op, int r, size_t i)
{
    static const int prodv[] = {1, 2, 1, -1, 1};
    switch (op) {
    case UCOLL_SUM: return (long long)((r * 7 + i * 3) % 11) - 5;
    case UCOLL_PROD: return prodv[(r + i) % 5];
    case UCOLL_MIN:
    case UCOLL_MAX: return (long long)((r * 13 + i * 7) % 101) - 50;
    case UCOLL_LAND:
    case UCOLL_LOR:
    case UCOLL_LXOR: return ((r + i) % 3 == 0) ? 0 : (long long)((r + i) % 5);
    default: return (long long)((r * 37 + i * 11) & 0xff);
    }
}

static inline void ref_put(void *buf, size_t i, ucoll_dtype_t dt, double fv, long long iv)
{
    switch (dt) {
    case UCOLL_BYTE:
    case UCOLL_UINT8:
    case UCOLL_INT8: ((uint8_t *)buf)[i] = (uint8_t)iv; break;
    case UCOLL_INT16:
    case UCOLL_UINT16: ((uint16_t *)buf)[i] = (uint16_t)iv; break;
    case UCOLL_INT32:
    case UCOLL_UINT32: ((uint32_t *)buf)[i] = (uint32_t)iv; break;
    case UCOLL_INT64:
    case UCOLL_UINT64: ((uint64_t *)buf)[i] = (uint64_t)iv; break;
    case UCOLL_FLOAT16: ((uint16_t *)buf)[i] = ref_to_f16(fv); break;
    case UCOLL_BFLOAT16: ((uint16_t *)buf)[i] = ref_to_bf16(fv); break;
    case UCOLL_FLOAT32: ((float *)buf)[i] = (float)fv; break;
    default: ((double *)buf)[i] = fv; break;
    }
}

static inline double ref_getf(const void *buf, size_t i, ucoll_dtype_t dt)
{
    switch (dt) {
    case UCOLL_FLOAT16: return ref_from_f16(((const uint16_t *)buf)[i]);
    case UCOLL_BFLOAT16: return ref_from_bf16(((const uint16_t *)buf)[i]);
    case UCOLL_FLOAT32: return ((const float *)buf)[i];
    default: return ((const double *)buf)[i];
    }
}

static inline long long ref_geti(const void *buf, size_t i, ucoll_dtype_t dt)
{
    switch (dt) {
    case UCOLL_INT8: return ((const int8_t *)buf)[i];
    case UCOLL_BYTE:
    case UCOLL_UINT8: return ((const uint8_t *)buf)[i];
    case UCOLL_INT16: return ((const int16_t *)buf)[i];
    case UCOLL_UINT16: return ((const uint16_t *)buf)[i];
    case UCOLL_INT32: return ((const int32_t *)buf)[i];
    case UCOLL_UINT32: return ((const uint32_t *)buf)[i];
    default: return ((const int64_t *)buf)[i];
    }
}

/* n elements of rank r's input, starting at element first. */
static inline void ref_fill(void *buf, size_t n, ucoll_dtype_t dt, ucoll_op_t op, int r,
                            size_t first)
{
    for (size_t i = 0; i < n; i++) {
        long long v = ref_gen(op, r, first + i);
        if (!ref_is_signed(dt) && !ref_is_float(dt) && v < 0) {
            v = -v;
        }
        ref_put(buf, i, dt, (double)v, v);
    }
}

/* out[j] = element i of the inputs of ranks lo..hi-1 combined in order. */
static inline void ref_elem(void *out, size_t j, ucoll_dtype_t dt, ucoll_op_t op, int lo, int hi,
                            size_t i)
{
    char one[8], t[8];
    double f = 0;
    unsigned long long u = 0;

    for (int r = lo; r < hi; r++) {
        ref_fill(one, 1, dt, op, r, i);
        if (ref_is_float(dt)) {
            double x = ref_getf(one, 0, dt);
            if (r == lo) {
                f = x;
            } else if (op == UCOLL_SUM) {
                f += x;
            } else if (op == UCOLL_PROD) {
                f *= x;
            } else if (op == UCOLL_MIN) {
                f = x < f ? x : f;
            } else {
                f = x > f ? x : f;
            }
            continue;
        }
        {
            long long xs = ref_geti(one, 0, dt), us = (long long)u;
            unsigned long long x = (unsigned long long)xs;
            if (r == lo) {
                u = x;
                continue;
            }
            switch (op) {
            case UCOLL_SUM: u += x; break;
            case UCOLL_PROD: u *= x; break;
            case UCOLL_MIN:
                if (ref_is_signed(dt) ? xs < us : x < u)
                    u = x;
                break;
            case UCOLL_MAX:
                if (ref_is_signed(dt) ? xs > us : x > u)
                    u = x;
                break;
            case UCOLL_LAND: u = (u != 0) && (x != 0); break;
            case UCOLL_LOR: u = (u != 0) || (x != 0); break;
            case UCOLL_LXOR: u = (u != 0) != (x != 0); break;
            case UCOLL_BAND: u &= x; break;
            case UCOLL_BOR: u |= x; break;
            default: u ^= x; break;
            }
            ref_put(t, 0, dt, 0, (long long)u); /* back to the type's width */
            u = (unsigned long long)ref_geti(t, 0, dt);
        }
    }
    ref_put(out, j, dt, f, (long long)u);
}

/* 1 if a[0..n) equals b (floats within a relative 1e-3); else 0 and *bad. */
static inline int ref_same(const void *a, const void *b, size_t n, ucoll_dtype_t dt, size_t *bad)
{
    for (size_t i = 0; i < n; i++) {
        if (ref_is_float(dt)) {
            double x = ref_getf(a, i, dt), y = ref_getf(b, i, dt);
            if (!(x == y || fabs(x - y) <= 1e-3 * fabs(y) + 1e-6)) {
                *bad = i;
                return 0;
            }
        } else if (ref_geti(a, i, dt) != ref_geti(b, i, dt)) {
            *bad = i;
            return 0;
        }
    }
    return 1;
}

#endif

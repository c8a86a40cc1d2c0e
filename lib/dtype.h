/*
 * Predefined datatypes and reduction ops: sizes, validity, and the local
 * reduction kernels (written so that the compiler vectorizes them).
 * float16 and bfloat16 accumulate each element in float and round to
 * nearest even on store.
 */
#ifndef UCOLL_DTYPE_H
#define UCOLL_DTYPE_H

#include "core.h"

extern const size_t ucoll__dtype_sizes[UCOLL_DTYPE_LAST];

/* Size of a valid datatype, without a call (hot paths check dt first). */
static inline size_t ucoll__dtype_size(ucoll_dtype_t dt)
{
    return ucoll__dtype_sizes[dt];
}

const char *ucoll__dtype_name(ucoll_dtype_t dt);
const char *ucoll__op_name(ucoll_op_t op);
/* UCOLL_OK if op applies to dt (logical and bitwise ops on floating types
 * do not), else UCOLL_ERR_ARG with the reason logged at debug level. */
int ucoll__check_op(ucoll_op_t op, ucoll_dtype_t dt);
/* dst[i] = a[i] op b[i], i < count; dst may alias a or b. */
void ucoll__reduce(void *dst, const void *a, const void *b, size_t count, ucoll_dtype_t dt,
                   ucoll_op_t op);

/* Half-precision conversions (round to nearest even). */
float ucoll__f16_to_float(uint16_t h);
uint16_t ucoll__float_to_f16(float f);
float ucoll__bf16_to_float(uint16_t h);
uint16_t ucoll__float_to_bf16(float f);

#endif

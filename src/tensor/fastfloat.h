/* Internal to src/tensor: the correctly rounded double nearest to a decimal
 * w * 10^q (Eisel-Lemire, fastfloat.c), for the value scanner in textio.c. */
#ifndef TESSEL_TENSOR_FASTFLOAT_H
#define TESSEL_TENSOR_FASTFLOAT_H

#include <stdint.h>

/* 1 with *out the double nearest w * 10^q (ties to even; w any 64-bit
 * integer, +0 when it is 0), or 0 when the caller must fall back to strtod
 * (q past the double range, an overflow to infinity, or no 128-bit integer
 * type). */
int fastfloat_decimal(uint64_t w, int q, double *out);

#endif

/* Decimal to double, correctly rounded, without big integers: the
 * Eisel-Lemire algorithm (D. Lemire, "Number Parsing at a Gigabyte per
 * Second", Software: Practice and Experience 51(8), 2021, section 5,
 * algorithm 1; with the refinement of N. Mushtak and D. Lemire, "Fast number
 * parsing without fallback", SPE 53(6), 2023, which proves that one or two
 * 64x64-bit products with the 128-bit normalized 5^q always decide the
 * rounding of a 19-digit w, except exact ties, handled below). The powers
 * of five are computed by src/tensor/gen_pow5.py into pow5_table.h. */
#include <string.h>

#include "fastfloat.h"
#include "pow5_table.h"

#if defined(__SIZEOF_INT128__)

typedef unsigned __int128 u128;

/* The 128 high bits of w * 5^q (w normalized, 5^q's 128-bit approximation):
 * the second product only when the first leaves the 55 bits that decide
 * the rounding uncertain (its low 9 bits of the high word all ones), as in
 * section 5 of Lemire 2021. */
static void product(uint64_t w, int q, uint64_t *hi, uint64_t *lo)
{
    const uint64_t *t = pow5_128[q - POW5_SMALLEST];
    u128 first = (u128)w * t[0];
    uint64_t h = (uint64_t)(first >> 64), l = (uint64_t)first;
    if ((h & 0x1FF) == 0x1FF) {
        u128 second = (u128)w * t[1];
        uint64_t carry = (uint64_t)(second >> 64);
        l += carry;
        if (l < carry)
            h++;
    }
    *hi = h;
    *lo = l;
}

/* floor(log2(10^q)) + 63, for q in [-342, 308]: the binary exponent of the
 * normalized product (Lemire 2021, section 5, "(217706 q) >> 16"). */
static int power2_of(int q)
{
    return (int)(((152170 + 65536) * (int64_t)q) >> 16) + 63;
}

int fastfloat_decimal(uint64_t w, int q, double *out)
{
    if (w == 0 || q < POW5_SMALLEST) {
        /* 0, or below half the smallest subnormal for any 19-digit w */
        *out = 0.0;
        return 1;
    }
    if (q > POW5_LARGEST)
        return 0; /* infinity: strtod reports the overflow */
    int lz = __builtin_clzll(w);
    w <<= lz;
    uint64_t hi, lo;
    product(w, q, &hi, &lo);
    int upper = (int)(hi >> 63);
    int shift = upper + 64 - 52 - 3; /* keep 54 bits: 53 and one to round */
    uint64_t m = hi >> shift;
    int e2 = power2_of(q) + upper - lz + 1023; /* biased exponent */
    if (e2 <= 0) {
        /* subnormal: shift to the fixed exponent, round half up then to even
         * by the same one-bit trick; exact ties cannot occur below 2^-1022
         * for w * 10^q with q < 0 (5^-q does not divide into 2^k) */
        if (-e2 + 1 >= 64)
            m = 0;
        else
            m >>= -e2 + 1;
        m += m & 1;
        m >>= 1;
        e2 = m < (1ull << 52) ? 0 : 1;
        m &= ~(1ull << 52);
    } else {
        /* An exact tie (the dropped bits exactly one half) can only occur for
         * -4 <= q <= 23 (Lemire 2021, section 6); there round to even. */
        if (lo <= 1 && q >= -4 && q <= 23 && (m & 3) == 1 && (m << shift) == hi)
            m &= ~1ull;
        m += m & 1;
        m >>= 1;
        if (m >= (2ull << 52)) {
            m = 1ull << 52;
            e2++;
        }
        m &= ~(1ull << 52);
        if (e2 >= 0x7FF)
            return 0; /* infinity: strtod reports the overflow */
    }
    uint64_t bits = m | ((uint64_t)e2 << 52);
    memcpy(out, &bits, sizeof(*out));
    return 1;
}

#else

int fastfloat_decimal(uint64_t w, int q, double *out)
{
    (void)w;
    (void)q;
    (void)out;
    return 0;
}

#endif

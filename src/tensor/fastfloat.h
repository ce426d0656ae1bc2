/* Internal to src/tensor: decimal text to the correctly rounded double.
 * fastfloat_decimal is the Eisel-Lemire conversion of w * 10^q (its table
 * in fastfloat.c); fastfloat_scan reads the common decimal token (at most 19
 * significant digits) inline, for the value scanner in textio.c and the
 * chunked reader's line scanner (mtx_fastline.h). */
#ifndef TESSEL_TENSOR_FASTFLOAT_H
#define TESSEL_TENSOR_FASTFLOAT_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

/* The Eisel-Lemire conversion (D. Lemire, "Number Parsing at a Gigabyte per
 * Second", Software: Practice and Experience 51(8), 2021, section 5,
 * algorithm 1; with the refinement of N. Mushtak and D. Lemire, "Fast
 * number parsing without fallback", SPE 53(6), 2023, which proves that one
 * or two 64x64-bit products with the 128-bit normalized 5^q always decide
 * the rounding of a 19-digit w, except exact ties, handled below). Inline
 * here, so the value scanners pay no call; the powers of five
 * 5^FASTFLOAT_Q_MIN..5^FASTFLOAT_Q_MAX are fastfloat.c's (from
 * src/tensor/gen_pow5.py's pow5_table.h). */
#define FASTFLOAT_Q_MIN (-342)
#define FASTFLOAT_Q_MAX 308
extern const uint64_t (*const fastfloat_pow5)[2];

#if defined(__SIZEOF_INT128__)

/* The 128 high bits of w * 5^q (w normalized, 5^q's 128-bit approximation):
 * the second product only when the first leaves the 55 bits that decide
 * the rounding uncertain (its low 9 bits of the high word all ones), as in
 * section 5 of Lemire 2021. */
static inline void fastfloat_product(uint64_t w, int q, uint64_t *hi, uint64_t *lo)
{
    const uint64_t *t = fastfloat_pow5[q - FASTFLOAT_Q_MIN];
    unsigned __int128 first = (unsigned __int128)w * t[0];
    uint64_t h = (uint64_t)(first >> 64), l = (uint64_t)first;
    if ((h & 0x1FF) == 0x1FF) {
        unsigned __int128 second = (unsigned __int128)w * t[1];
        uint64_t carry = (uint64_t)(second >> 64);
        l += carry;
        if (l < carry)
            h++;
    }
    *hi = h;
    *lo = l;
}

/* 1 with *out the double nearest w * 10^q (ties to even; w any 64-bit
 * integer, +0 when it is 0), or 0 when the caller must fall back to strtod
 * (q past the double range, an overflow to infinity, or no 128-bit integer
 * type). */
static inline int fastfloat_decimal(uint64_t w, int q, double *out)
{
    if (w == 0 || q < FASTFLOAT_Q_MIN) {
        /* 0, or below half the smallest subnormal for any 19-digit w */
        *out = 0.0;
        return 1;
    }
    if (q > FASTFLOAT_Q_MAX)
        return 0; /* infinity: strtod reports the overflow */
    int lz = __builtin_clzll(w);
    w <<= lz;
    uint64_t hi, lo;
    fastfloat_product(w, q, &hi, &lo);
    int upper = (int)(hi >> 63);
    int shift = upper + 64 - 52 - 3; /* keep 54 bits: 53 and one to round */
    uint64_t m = hi >> shift;
    /* the biased exponent: floor(log2(10^q)) + 63 (Lemire 2021, section
     * 5, "(217706 q) >> 16"), the product's top bit, the normalization */
    int e2 = (int)(((152170 + 65536) * (int64_t)q) >> 16) + 63 + upper - lz + 1023;
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

static inline int fastfloat_decimal(uint64_t w, int q, double *out)
{
    (void)w;
    (void)q;
    (void)out;
    return 0;
}

#endif

/* Whether the 8 bytes of w (little-endian) are all ASCII digits: a byte is
 * one iff its high nibble is 3 and adding 6 keeps it 3 (no carry reaches
 * a digit's byte from the bytes below when they are digits too). */
static inline int fastfloat_eight_digits(uint64_t w)
{
    return ((w & 0xF0F0F0F0F0F0F0F0ull) |
            (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
           0x3333333333333333ull;
}

/* The value of 8 ASCII digits (p[0] the most significant, the low byte of
 * the little-endian word w) in three multiplies: pairs of digits, then
 * both halves' pairs weighted at once (the "eight digits" conversion of
 * D. Lemire's fast_float, from his "Quickly parsing eight digits", 2018,
 * and simdjson: Langdale and Lemire, VLDB Journal 28(6), 2019). */
static inline uint32_t fastfloat_eight_value(uint64_t w)
{
    w -= 0x3030303030303030ull;
    w = w * 10 + (w >> 8); /* byte 2k: the two-digit number of bytes 2k, 2k+1 */
    w = (((w & 0x000000FF000000FFull) * 0x000F424000000064ull) + /* x100, x1000000 */
         (((w >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> /* x1, x10000 */
        32;
    return (uint32_t)w;
}

#if defined(__SSE2__) && defined(__x86_64__)
/* The two 8-byte halves of d (each byte a digit value 0-9, the first byte
 * of a half its most significant) as two 8-digit numbers: the low half's
 * in bits 0-31, the high half's in bits 32-63. fastfloat_eight_value's
 * conversion on both halves at once in 16-bit and 32-bit lanes (pmullw,
 * pmaddwd); fastfloat_sixteen and mtx_fastline.h's fast_pair read it. */
static inline uint64_t fastfloat_eights(__m128i d)
{
    __m128i pairs = _mm_add_epi16(
        _mm_mullo_epi16(_mm_and_si128(d, _mm_set1_epi16(0xFF)), _mm_set1_epi16(10)),
        _mm_srli_epi16(d, 8));
    __m128i quads = _mm_madd_epi16(pairs, _mm_set1_epi32(0x00010064));  /* x100 + 1 */
    __m128i eights = _mm_madd_epi16(_mm_packs_epi32(quads, quads),
                                    _mm_set1_epi32(0x00012710)); /* x10000 + 1 */
    return (uint64_t)_mm_cvtsi128_si64(eights);
}

/* The value of the 16 bytes at p when all are digits (p[0] the most
 * significant), else -1: one compare finds them, fastfloat_eights converts. */
static inline int64_t fastfloat_sixteen(const char *p)
{
    __m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)p), _mm_set1_epi8('0'));
    /* a digit's byte d is 0..9, the only ones that d -| 9 (saturating) zeroes */
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_subs_epu8(d, _mm_set1_epi8(9)),
                                         _mm_setzero_si128())) != 0xFFFF)
        return -1;
    uint64_t both = fastfloat_eights(d);
    return (int64_t)((uint64_t)(uint32_t)both * 100000000u + (both >> 32));
}
#endif

/* The digits at p (before end) appended to *m: sixteen in one step where
 * SSE2 is the baseline (x86-64) and sixteen digits lead, then eight per
 * step while eight lead, then one by one; *m wraps past 19 digits (callers
 * count them). */
static inline const char *fastfloat_digits(const char *p, const char *end, uint64_t *m)
{
    if (p == end || (unsigned)(*p - '0') >= 10u)
        return p; /* no digit ("5." or "5.e3" after the point) */
    uint64_t v = *m, w;
#if defined(__SSE2__) && defined(__x86_64__)
    int64_t sixteen;
    if (end - p >= 16 && (sixteen = fastfloat_sixteen(p)) >= 0) {
        v = v * 10000000000000000u + (uint64_t)sixteen;
        p += 16; /* then 3 more digits at most are worth reading fast (19) */
    } else
#endif
    {
        while (end - p >= 8) {
            memcpy(&w, p, 8);
            if (!fastfloat_eight_digits(w))
                break;
            v = v * 100000000u + fastfloat_eight_value(w);
            p += 8;
        }
    }
    while (p < end && (unsigned)(*p - '0') < 10u)
        v = v * 10 + (uint64_t)(*p++ - '0');
    *m = v;
    return p;
}

/* A decimal token at p, [+-]digits[.digits][(e|E)[+-]digits], with at
 * least one mantissa digit, at most 19 significant ones and at most 5
 * exponent digits, read only before end: *out is the correctly rounded
 * double (what strtod gives) and the return the byte after the token, which
 * the caller checks is a separator. NULL for any other token, or when
 * fastfloat_decimal cannot decide; the caller's general path then reads it.
 * W. D. Clinger's fast path ("How to Read Floating Point Numbers
 * Accurately", PLDI 1990) where the mantissa is at most 2^53 and |q| <= 22
 * (both exact doubles, one rounding), Eisel-Lemire otherwise. */
static inline const char *fastfloat_scan(const char *p, const char *end, double *out)
{
    static const double pow10[23] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
    int neg = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+'))
        p++;
    const char *first = p;
    while (p < end && *p == '0')
        p++; /* leading zeros are no significant digits */
    const char *sig = p;
    uint64_t m = 0;
    if (p < end && *p != '.')
        p = fastfloat_digits(p, end, &m); /* (not for "0.", the common case) */
    int64_t digits = p - sig, q = 0;
    int any = p != first;
    if (p < end && *p == '.') {
        const char *frac = ++p;
        if (!digits)
            while (p < end && *p == '0')
                p++;
        const char *fsig = p;
        p = fastfloat_digits(p, end, &m);
        digits += p - fsig;
        q = -(int64_t)(p - frac);
        any |= p != frac;
    }
    if (!any || digits > 19)
        return NULL;
    if (p < end && (*p | 0x20) == 'e') {
        p++;
        int eneg = p < end && *p == '-';
        if (p < end && (*p == '-' || *p == '+'))
            p++;
        const char *e0 = p;
        int64_t e = 0;
        while (p < end && (unsigned)(*p - '0') < 10u && p - e0 < 6)
            e = e * 10 + (*p++ - '0');
        if (p == e0 || p - e0 > 5)
            return NULL; /* no exponent digit, or 6 and more: strtod says */
        q += eneg ? -e : e;
    }
    double v;
    if (m <= (1ull << 53) && q >= -22 && q <= 22) {
        v = (double)m;
        v = q < 0 ? v / pow10[-q] : v * pow10[q];
    } else {
        /* beyond +-400 a 19-digit mantissa is 0 or infinity in any case */
        int qc = q < -400 ? -400 : q > 400 ? 400 : (int)q;
        if (!fastfloat_decimal(m, qc, &v))
            return NULL;
    }
    *out = neg ? -v : v;
    return p;
}

#endif

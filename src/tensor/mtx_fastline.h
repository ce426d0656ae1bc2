/* Internal to src/tensor: the chunked reader's scanner of the common
 * entry line of a general matrix ("ROW COL[ VALUE]", single spaces),
 * inline in its loops (mtx_chunked.c, mtx_direct.c). */
#ifndef TESSEL_TENSOR_MTX_FASTLINE_H
#define TESSEL_TENSOR_MTX_FASTLINE_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "fastfloat.h"
#include "mtx_chunked.h"
#include "textio.h"

/* Bytes a line read by the chunked reader's fast_lines must leave before
 * the block's end: its two indices' words (p + 16) lie inside, so a line
 * cut by the block is never mistaken for a whole one. */
#define FAST_TAIL 32

/* The two indices of "ROW COL" at p, one space between them, 1 to 7
 * digits each, as values (not checked against the extents): the offset
 * of the byte after COL, or 0 for any other form. Needs 16 readable bytes
 * at p. With SSE2 (the x86-64 baseline) the 16 bytes' digits are found by
 * one compare and both words converted together, the conversion of
 * scan_swar_digits in 16-bit and 32-bit lanes (pmullw, pmaddwd). */
static inline unsigned fast_pair(const char *p, uint64_t *row, uint64_t *col)
{
    uint64_t a, b;
#if defined(__SSE2__) && defined(__x86_64__)
    __m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)p), _mm_set1_epi8('0'));
    /* a digit's byte d is 0..9, the only ones that d -| 9 (saturating) zeroes */
    unsigned digit = (unsigned)_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_subs_epu8(d, _mm_set1_epi8(9)), _mm_setzero_si128()));
    unsigned n1 = (unsigned)__builtin_ctz(~digit);
    if (n1 - 1u >= 7u || p[n1] != ' ')
        return 0; /* no digit, 8 or more, or another separator */
    unsigned n2 = (unsigned)__builtin_ctz(~digit >> (n1 + 1));
    if (n2 - 1u >= 7u)
        return 0;
    memcpy(&a, p, 8);
    memcpy(&b, p + n1 + 1, 8);
    /* the digits at the top of each word, leading zero bytes below */
    a = (a - 0x3030303030303030ull) << (64 - 8 * n1);
    b = (b - 0x3030303030303030ull) << (64 - 8 * n2);
    uint64_t both = fastfloat_eights(_mm_set_epi64x((long long)b, (long long)a));
    *row = (uint32_t)both;
    *col = both >> 32;
    return n1 + 1 + n2;
#else
    unsigned n1 = scan_swar_digits(p, &a);
    if (n1 - 1u >= 7u || p[n1] != ' ')
        return 0;
    unsigned n2 = scan_swar_digits(p + n1 + 1, &b);
    if (n2 - 1u >= 7u)
        return 0;
    *row = a;
    *col = b;
    return n1 + 1 + n2;
#endif
}

/* The line breaks ahead of the fast loops, found 64 bytes at a time
 * (bit k of mask: blk[k] is '\n'), so that where a line starts never
 * waits for the parse of the line before it: the loops' only chain from
 * one line to the next is the mask's lowest bit cleared, and the lines'
 * scans overlap (issue 27: a pattern line was a chain of about 20 cycles,
 * load, compare, two bit counts, through its own length). */
typedef struct line_breaks {
    const char *blk;
    uint64_t mask;
} line_breaks;

/* The line breaks among the 64 bytes at q, one bit each. */
static inline uint64_t line_break_mask(const char *q)
{
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i nl = _mm_set1_epi8('\n');
    uint64_t m = 0;
    for (int k = 0; k < 4; k++)
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(
                 _mm_loadu_si128((const __m128i *)(q + 16 * k)), nl))
             << (16 * k);
    return m;
#else
    uint64_t m = 0;
    for (int k = 0; k < 64; k++)
        m |= (uint64_t)(q[k] == '\n') << k;
    return m;
#endif
}

/* The breaks from p on; no byte at or after stop is read. */
static inline line_breaks line_breaks_at(const char *p, const char *stop)
{
    line_breaks b = { p, stop - p >= 64 ? line_break_mask(p) : 0 };
    return b;
}

/* The first line break at or after p (p just after the last one this
 * returned, or where line_breaks_at started), NULL if none before stop:
 * from the mask, or searched when the next 64 bytes would pass stop. */
static inline char *line_break_next(line_breaks *b, const char *p, const char *stop)
{
    while (!b->mask) {
        if (stop - b->blk < 128)
            return memchr(p, '\n', (size_t)(stop - p));
        b->blk += 64;
        b->mask = line_break_mask(b->blk);
    }
    const char *e = b->blk + __builtin_ctzll(b->mask);
    b->mask &= b->mask - 1;
    return (char *)e;
}

/* The common entry line [p, e], e its break (the first '\n' at or after
 * p, before stop): "ROW COL" for a pattern matrix, "ROW COL VALUE"
 * otherwise (fast_pair's indices, both in range, one space before the
 * value); a real value that ends the line is read by fastfloat_scan, any
 * other by mtx_scan_value up to the break (`skip`: not read, for pass 1,
 * which needs the row alone). 1, or 0 for any other form or a value that
 * does not scan (chunk_line then reads the line). p must have FAST_TAIL
 * readable bytes before stop. */
typedef struct fast_form {
    uint64_t rows, cols;
    enum mtx_field field;
} fast_form; /* the job's, in the caller's locals (stores cannot alias them) */

static inline int fast_line(char *p, char *e, const char *stop, fast_form f, int skip,
                            uint32_t *i, uint32_t *j, double *v)
{
    uint64_t vi, vj;
    unsigned n = fast_pair(p, &vi, &vj);
    if (!n || vi - 1u >= f.rows || vj - 1u >= f.cols)
        return 0; /* an index 0 wraps round to the largest value */
    *i = (uint32_t)(vi - 1);
    *j = (uint32_t)(vj - 1);
    if (f.field == FIELD_PATTERN)
        return p + n == e;
    char *r = p + n + 1;
    if (p[n] != ' ')
        return 0; /* also a break right after COL: r is then past e */
    /* the common value ends the line: scanned up to its break, which it
     * reaches (it reads no '\n', so never past e) */
    if (!skip && f.field == FIELD_REAL && fastfloat_scan(r, stop, v) == e)
        return 1;
    if (e[-1] == '\r')
        return 0;
    if (!skip) {
        const char *q = r;
        *e = '\0'; /* strtod, in scan_double's fallback, stops here */
        int ok = mtx_scan_value(&q, e, f.field, v) && (q == e || scan_at_end(q, e));
        *e = '\n';
        return ok;
    }
    return 1;
}

#endif

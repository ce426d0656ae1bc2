/* Internal to src/tensor: a buffered line reader over plain, gzipped or
 * in-memory text, and the number scanners the text readers share. */
#ifndef TESSEL_TENSOR_TEXTIO_H
#define TESSEL_TENSOR_TEXTIO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tessel/base.h"

/* Lines longer than this are an error (no valid tensor line comes close). */
#define TEXT_READER_MAX_LINE (1u << 20)

typedef struct text_reader {
    const tessel_allocator *alloc;
    const char *name;
    int fd;                /* plain file, or -1 */
    struct gz_source *gz;  /* gzip input (gzsource.h), or NULL */
    struct gz_pipe *pipe;  /* gz read ahead on a thread (gzpipe.h), or NULL */
    const unsigned char *mem;
    size_t mem_size, mem_pos;
    char *buf;
    size_t cap, len, pos;
    uint64_t line;         /* number of the line last returned */
    uint64_t bytes_read;   /* bytes consumed from the source so far */
    int eof;
    int truncated;         /* the gzip stream ended early */
    int compressed;        /* gzip input */
    uint64_t source_bytes; /* size of the file or memory block */
} text_reader;

int text_reader_open_file(text_reader *r, const char *path, const tessel_allocator *a,
                          tessel_diag *diag);
void text_reader_open_memory(text_reader *r, const char *name, const void *data, size_t size,
                             const tessel_allocator *a);
/* 1: *line (NUL-terminated in place, without the line break) and *len are
 * set; 0: end of input; < 0: error (diag filled). */
int text_reader_next(text_reader *r, char **line, size_t *len, tessel_diag *diag);
void text_reader_close(text_reader *r);
/* An upper estimate of how many lines of at least min_line_bytes the input
 * can hold (for sizing buffers from a header's claim without trusting it). */
uint64_t text_reader_max_lines(const text_reader *r, unsigned min_line_bytes);

/* Scanners: skip leading blanks, parse one token ending at a blank or at
 * `end`; advance *p. Return 0 on success, SCAN_NONE if no token is left,
 * SCAN_BAD if the token is not a number of that kind, SCAN_OVERFLOW if it
 * does not fit. */
enum { SCAN_OK = 0, SCAN_NONE = 1, SCAN_BAD = 2, SCAN_OVERFLOW = 3 };
int scan_u64(const char **p, const char *end, uint64_t *out);
int scan_i64(const char **p, const char *end, int64_t *out);
int scan_double(const char **p, const char *end, double *out);
/* Up to 8 leading decimal digits of [p, p + 8) in one word (SWAR: the
 * digit test and the conversion of all eight bytes at once, the technique
 * of Lemire's and Langdale's simdjson number parser, "Parsing Gigabytes of
 * JSON per Second", VLDB J. 2019, section 6). Needs 8 readable bytes at p;
 * returns how many digits lead (0..8) and their value in *val. */
static inline unsigned scan_swar_digits(const char *p, uint64_t *val)
{
    uint64_t w;
    memcpy(&w, p, 8); /* little-endian: p[0] is the low byte */
    /* A byte is a digit iff its high nibble is 3 and adding 6 keeps it 3;
     * a carry out of a byte only starts at a non-digit, past the first
     * one found here. */
    uint64_t t = (w & 0xF0F0F0F0F0F0F0F0ull) |
                 (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4);
    uint64_t bad = t ^ 0x3333333333333333ull;
    unsigned n = bad ? (unsigned)__builtin_ctzll(bad) >> 3 : 8u;
    if (n == 0)
        return 0;
    /* The n digits at the top as n low bytes shifted up: the bytes below
     * are zero, i.e. leading zeros, so the 8-digit conversion applies. */
    uint64_t d = (w - 0x3030303030303030ull) << (8 * (8 - n));
    d = (d * 10 + (d >> 8)) & 0x00FF00FF00FF00FFull;
    d = (d * 100 + (d >> 16)) & 0x0000FFFF0000FFFFull;
    d = (d * 10000 + (d >> 32)) & 0xFFFFFFFFull;
    *val = d;
    return n;
}

/* Bytes past a line's terminating NUL that the readers' line buffers keep
 * allocated and zeroed (the text reader's and each chunk's), so that
 * scan_index_padded may load a whole word at any digit of the line: the
 * NUL ends the digits before the word's bytes past it matter. */
#define TEXT_PAD 8

/* A 1-based index in 1..limit, as a 0-based one; 0 when it is not one.
 * The common form (spaces or tabs, then up to 18 digits ending the token)
 * is read inline, saving scan_u64's call and overflow checks on every
 * index, and up to 7 digits in one word (scan_swar_digits) when 8 bytes
 * of the line remain or, `padded`, always (the line NUL-terminated in a
 * buffer with TEXT_PAD bytes after it); anything else goes to scan_u64,
 * which decides as it always has. */
static inline int scan_index_word(const char **pp, const char *end, uint64_t limit,
                                  uint32_t *out, int padded)
{
    const char *p = *pp;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    const char *digits = p;
    uint64_t v = 0;
    unsigned n;
    /* Up to 7 digits in one word. */
    if ((padded || end - p >= 8) && (n = scan_swar_digits(p, &v)) < 8) {
        p += n;
    } else {
        v = 0;
        while (p < end && (unsigned)(*p - '0') < 10u && p - digits < 18)
            v = v * 10 + (uint64_t)(*p++ - '0');
    }
    int ends = p == end || *p == ' ' || *p == '\t' || *p == '\r' || *p == '\v' || *p == '\f';
    if (p == digits || !ends) {
        uint64_t general; /* its own variable: v stays in a register */
        p = *pp;
        if (scan_u64(&p, end, &general) != SCAN_OK)
            return 0;
        v = general;
    }
    if (v == 0 || v > limit)
        return 0;
    *pp = p;
    *out = (uint32_t)(v - 1);
    return 1;
}

/* Any line (8 bytes read only within it). */
static inline int scan_index_fast(const char **pp, const char *end, uint64_t limit, uint32_t *out)
{
    return scan_index_word(pp, end, limit, out, 0);
}

/* A line NUL-terminated at end in a buffer with TEXT_PAD bytes after the
 * NUL: one word read for up to 7 digits even at the line's end (a pattern
 * line's column). */
static inline int scan_index_padded(const char **pp, const char *end, uint64_t limit,
                                    uint32_t *out)
{
    return scan_index_word(pp, end, limit, out, 1);
}

/* A word of letters/digits/'-' (for headers); copies at most cap-1 chars. */
int scan_word(const char **p, const char *end, char *out, size_t cap);
/* 1 if only blanks remain. */
int scan_at_end(const char *p, const char *end);
/* 1-based column of p within line. */
uint32_t scan_column(const char *line, const char *p);
/* The line breaks ('\n') in b[0..n). */
uint64_t text_count_newlines(const char *b, size_t n);

#endif

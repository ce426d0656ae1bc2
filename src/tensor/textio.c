/* Line reader and number scanners for the text formats. The scanners are
 * hand-written because strtod/strtoull dominate parse time otherwise: the
 * common decimal forms take a fast exact path (Clinger's: a mantissa below
 * 2^53 and a power of ten up to 22 are both exact doubles, so one multiply
 * or divide rounds correctly; other mantissas, their first 19 significant
 * digits exact, and exponents within the double range through Eisel-Lemire,
 * fastfloat.c); the rest (overflow, a truncated mantissa whose bracket
 * straddles two doubles, hexadecimal, inf, nan) falls back to strtod. */
#include <errno.h>
#include <float.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif
#include "fastfloat.h"
#include "gzpipe.h"
#include "gzsource.h"
#include "textio.h"

#define READ_CHUNK (1u << 20)
/* The first read, which holds the header: a chunked parse (mtx_chunked.c)
 * keeps this buffer through its passes, and a whole READ_CHUNK of text there
 * was a megabyte of the pattern parse's peak (issue 27: 1.35x the tensor). */
#define FIRST_READ (64u << 10)

/* Plain files are read with read(2) straight into the line buffer; zlib's
 * transparent mode would copy every byte once more. */
static int is_gzip(int fd)
{
    unsigned char magic[2];
    ssize_t n = pread(fd, magic, 2, 0);
    return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

int text_reader_open_file(text_reader *r, const char *path, const tessel_allocator *a,
                          tessel_diag *diag)
{
    memset(r, 0, sizeof(*r));
    r->alloc = a;
    r->name = path;
    r->fd = tessel_input_open(path, diag);
    if (r->fd < 0) {
        int rc = r->fd;
        r->fd = -1;
        return rc;
    }
    struct stat st;
    if (fstat(r->fd, &st) == 0)
        r->source_bytes = (uint64_t)st.st_size;
    if (!is_gzip(r->fd))
        return TESSEL_OK;
    gz_source *gz = NULL;
    if (gz_source_open(r->fd, a, &gz) != TESSEL_OK) {
        close(r->fd);
        r->fd = -1;
        return tessel_diag_oom(diag, path, "opening a gzip stream (its input buffer)",
                               GZ_IN_BYTES);
    }
    r->fd = -1; /* owned by gz now */
    r->compressed = 1;
    r->gz = gz;
    if (r->source_bytes >= GZ_PIPE_MIN_BYTES)
        r->pipe = gz_pipe_open(gz, path, a);
    return TESSEL_OK;
}

void text_reader_open_memory(text_reader *r, const char *name, const void *data, size_t size,
                             const tessel_allocator *a)
{
    memset(r, 0, sizeof(*r));
    r->alloc = a;
    r->name = name;
    r->fd = -1;
    r->mem = data;
    r->mem_size = size;
    r->source_bytes = size;
}

void text_reader_close(text_reader *r)
{
    gz_pipe_close(r->pipe);
    r->pipe = NULL;
    gz_source_close(r->gz);
    r->gz = NULL;
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    tessel_dealloc(r->alloc, r->buf);
    r->buf = NULL;
}

/* Appends up to `want` bytes from the source at buf+len; returns bytes read
 * (0 at end) or < 0 on error. A gzip stream that stops early still hands
 * over what it decompressed; the truncation is reported when the reader
 * reaches it (see text_reader_next). */
static long source_read(text_reader *r, size_t want, tessel_diag *diag)
{
    if (r->fd >= 0) {
        ssize_t n;
        do
            n = read(r->fd, r->buf + r->len, want);
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return tessel_diag_set(diag, TESSEL_EIO, r->name, r->line + 1, 0, NULL,
                                   "read failed: %s", strerror(errno));
        return (long)n;
    }
    if (!r->gz) {
        size_t left = r->mem_size - r->mem_pos;
        size_t n = left < want ? left : want;
        memcpy(r->buf + r->len, r->mem + r->mem_pos, n);
        r->mem_pos += n;
        return (long)n;
    }
    if (r->pipe)
        return gz_pipe_read(r->pipe, r->buf + r->len, want, r->line + 1, &r->truncated, diag);
    gz_context c = { r->name, r->line + 1, &r->truncated };
    return gz_source_read(r->gz, r->buf + r->len, want, &c, diag);
}

static int refill(text_reader *r, tessel_diag *diag)
{
    if (!r->buf) {
        /* Memory input never needs more than itself (fuzzers feed tiny ones). */
        r->cap = READ_CHUNK + TEXT_READER_MAX_LINE;
        if (r->mem && r->mem_size < r->cap)
            r->cap = r->mem_size;
        r->buf = tessel_alloc(r->alloc, r->cap + 1 + TEXT_PAD);
        if (!r->buf)
            return tessel_diag_oom(diag, r->name, "allocating the text reader's buffer",
                                   r->cap + 1 + TEXT_PAD);
        memset(r->buf + r->cap + 1, 0, TEXT_PAD); /* textio.h's TEXT_PAD */
    }
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    size_t want = r->cap - r->len;
    if (want > READ_CHUNK)
        want = READ_CHUNK;
    if (r->bytes_read == 0 && want > FIRST_READ)
        want = FIRST_READ;
    long n = source_read(r, want, diag);
    if (n < 0)
        return (int)n;
    if (n == 0)
        r->eof = 1;
    r->len += (size_t)n;
    r->bytes_read += (uint64_t)n;
    return TESSEL_OK;
}

uint64_t text_reader_max_lines(const text_reader *r, unsigned min_line_bytes)
{
    /* gzip rarely beats 16:1 on text tensors; this is a bound for buffer
     * sizing, not a limit on the input. */
    uint64_t bytes = r->source_bytes;
    if (r->compressed)
        bytes = bytes > UINT64_MAX / 16 ? UINT64_MAX : bytes * 16;
    return bytes / min_line_bytes + 1;
}

int text_reader_next(text_reader *r, char **line, size_t *len, tessel_diag *diag)
{
    for (;;) {
        char *start = r->buf ? r->buf + r->pos : NULL;
        size_t avail = r->len - r->pos;
        char *nl = avail ? memchr(start, '\n', avail) : NULL;
        if (!nl && r->eof && r->truncated)
            return tessel_diag_set(diag, TESSEL_EIO, r->name, r->line + 1, 0, NULL,
                                   "the compressed file is truncated (the gzip stream ends "
                                   "early)");
        if (nl || (r->eof && avail)) {
            size_t n = nl ? (size_t)(nl - start) : avail;
            if (n > TEXT_READER_MAX_LINE)
                break;
            r->pos += nl ? n + 1 : n;
            if (n && start[n - 1] == '\r')
                n--;
            start[n] = '\0';
            r->line++;
            *line = start;
            *len = n;
            return 1;
        }
        if (r->eof)
            return 0;
        if (avail > TEXT_READER_MAX_LINE)
            break;
        int rc = refill(r, diag);
        if (rc)
            return rc;
    }
    return tessel_diag_set(diag, TESSEL_EPARSE, r->name, r->line + 1, 0, NULL,
                           "line longer than %u bytes (is this a text tensor file?)",
                           TEXT_READER_MAX_LINE);
}

/* ------------------------------------------------------------------ */

/* ' ', '\t', '\v', '\f' or '\r' (two tests for the common space or digit) */
static int is_blank(char c)
{
    return c == ' ' || ((unsigned)(c - '\t') < 5u && c != '\n');
}

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && is_blank(*p))
        p++;
    return p;
}

int scan_at_end(const char *p, const char *end)
{
    return skip_blanks(p, end) == end;
}

uint32_t scan_column(const char *line, const char *p)
{
    return (uint32_t)(p - line) + 1;
}

static int token_ends(const char *p, const char *end)
{
    return p == end || is_blank(*p);
}

int scan_u64(const char **pp, const char *end, uint64_t *out)
{
    const char *p = skip_blanks(*pp, end);
    *pp = p;
    if (p == end)
        return SCAN_NONE;
    if (*p == '+')
        p++;
    if (p == end || *p < '0' || *p > '9')
        return SCAN_BAD;
    uint64_t v = 0;
    int overflow = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            overflow = 1;
        else
            v = v * 10 + d;
        p++;
    }
    if (!token_ends(p, end))
        return SCAN_BAD;
    *pp = p;
    if (overflow)
        return SCAN_OVERFLOW;
    *out = v;
    return SCAN_OK;
}

int scan_i64(const char **pp, const char *end, int64_t *out)
{
    const char *p = skip_blanks(*pp, end);
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    if (p == end || *p < '0' || *p > '9') {
        *pp = p;
        return p == end && !neg ? SCAN_NONE : SCAN_BAD;
    }
    uint64_t mag;
    int rc = scan_u64(&p, end, &mag);
    *pp = p;
    if (rc)
        return rc;
    if (mag > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return SCAN_OVERFLOW;
    *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    return SCAN_OK;
}

static const double exact_pow10[23] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

static const uint64_t pow10_u64[9] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
                                        100000000 };

/* The digits at p (up to end) appended to *mant, eight per step where 8
 * bytes of the line remain (scan_swar_digits), then one by one; *mant
 * wraps modulo 2^64 past 19 digits (the caller counts them and then reads
 * them again with truncated_mantissa). Returns the end of the digits. */
static inline const char *mantissa_digits(const char *p, const char *end, uint64_t *mant)
{
    uint64_t m = *mant, chunk;
    for (;;) {
        if (end - p < 8) {
            while (p < end && (unsigned)(*p - '0') < 10u)
                m = m * 10 + (uint64_t)(*p++ - '0');
            break;
        }
        unsigned n;
        if ((unsigned)(*p - '0') >= 10u || !(n = scan_swar_digits(p, &chunk)))
            break; /* no digit: the test saves the word's conversion */
        m = m * pow10_u64[n] + chunk;
        p += n;
        if (n < 8)
            break;
    }
    *mant = m;
    return p;
}

/* The first 19 digits of [p, end) (digits, the first one nonzero, and at
 * most one '.', which is skipped) as *mant; 1 when a later digit is
 * nonzero (the mantissa is truncated). */
static int truncated_mantissa(const char *p, const char *end, uint64_t *mant)
{
    uint64_t m = 0;
    int digits = 0, dropped = 0;
    for (; p < end; p++) {
        if (*p == '.')
            continue;
        if (digits < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            digits++;
        } else {
            dropped |= *p != '0';
        }
    }
    *mant = m;
    return dropped;
}

/* Fast path; returns 0 and leaves *pp alone when the token needs strtod.
 * A token of at most 19 significant digits ending at a separator is
 * fastfloat_scan's (fastfloat.h); the others are read here. The digits are
 * gathered into a 64-bit word and counted afterwards (as Lemire's
 * fast_float does): up to 19 significant digits the word is the exact
 * mantissa (10^19 - 1 < 2^64). Past 19, the first 19 are read again
 * and a nonzero digit among the later ones marks the mantissa truncated:
 * the value then lies in [w, w + 1) x 10^q, and when both ends round to
 * the same double that double is the answer (Lemire 2021, section 11),
 * else strtod decides. */
static int scan_double_fast(const char **pp, const char *end, double *out)
{
    const char *p = fastfloat_scan(*pp, end, out);
    if (p && token_ends(p, end)) {
        *pp = p; /* the common token: at most 19 significant digits */
        return 1;
    }
    p = *pp;
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    const char *first = p;
    while (p < end && *p == '0')
        p++; /* leading zeros: no significant digit */
    uint64_t mant = 0;
    const char *sig = p;
    p = mantissa_digits(p, end, &mant);
    long int_digits = p - sig, digits = int_digits; /* significant ones */
    int exp10 = 0;
    const char *digits_end = p, *fsig = p;
    if (p < end && *p == '.') {
        const char *frac = ++p;
        if (!int_digits)
            while (p < end && *p == '0')
                p++; /* zeros before the first significant digit */
        fsig = p;
        p = mantissa_digits(p, end, &mant);
        digits += p - fsig;
        if (p - frac > 100000)
            return 0; /* strtod takes such a fraction */
        exp10 = -(int)(p - frac);
        if (p == frac && sig == first)
            return 0; /* "." or "-.": no digit */
        digits_end = p;
    } else if (p == first) {
        return 0; /* no digit */
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, edig = 0;
        long e = 0;
        if (p < end && (*p == '-' || *p == '+'))
            eneg = *p++ == '-';
        while (p < end && *p >= '0' && *p <= '9') {
            if (e >= 100000)
                return 0; /* far outside the double range: strtod says how */
            e = e * 10 + (*p - '0');
            edig = 1;
            p++;
        }
        if (!edig)
            return 0;
        exp10 += (int)(eneg ? -e : e);
    }
    if (!token_ends(p, end))
        return 0;
    int dropped = 0;
    if (digits > 19) {
        /* the value is S x 10^exp10 for the significant digits S; their
         * first 19 as w give S = w x 10^(digits - 19) + the rest */
        dropped = truncated_mantissa(int_digits ? sig : fsig, digits_end, &mant);
        exp10 += (int)(digits - 19);
    }
    double v;
    if (!dropped && mant <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) {
        v = (double)mant;
        v = exp10 < 0 ? v / exact_pow10[-exp10] : v * exact_pow10[exp10];
    } else if (!fastfloat_decimal(mant, exp10, &v)) {
        return 0;
    } else if (dropped) {
        double above;
        if (!fastfloat_decimal(mant + 1, exp10, &above) || memcmp(&v, &above, sizeof(v)) != 0)
            return 0;
    }
    *out = neg ? -v : v;
    *pp = p;
    return 1;
}

int scan_double(const char **pp, const char *end, double *out)
{
    const char *p = skip_blanks(*pp, end);
    *pp = p;
    if (p == end)
        return SCAN_NONE;
    if (scan_double_fast(pp, end, out))
        return SCAN_OK;
    /* strtod stops at the line's NUL at the latest (lines are terminated). */
    char *stop = NULL;
    errno = 0;
    double v = strtod(p, &stop);
    if (stop == p || stop > end || !token_ends(stop, end))
        return SCAN_BAD;
    *pp = stop;
    if (errno == ERANGE && isinf(v))
        return SCAN_OVERFLOW;
    *out = v;
    return SCAN_OK;
}

int scan_word(const char **pp, const char *end, char *out, size_t cap)
{
    const char *p = skip_blanks(*pp, end);
    size_t n = 0;
    while (p < end && !is_blank(*p)) {
        if (n + 1 < cap)
            out[n++] = *p;
        p++;
    }
    out[n] = '\0';
    int none = p == skip_blanks(*pp, end);
    *pp = p;
    return none ? SCAN_NONE : SCAN_OK;
}

/* The line breaks in b[0..n), eight bytes per step: a byte of x = w ^
 * 0x0a0a.. is zero exactly where b holds '\n', and ((x & 0x7f..) + 0x7f..)
 * | x has its high bit clear exactly in x's zero bytes (no carry crosses a
 * byte). */
uint64_t text_count_newlines(const char *b, size_t n)
{
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7Full, nl = 0x0A0A0A0A0A0A0A0Aull;
    uint64_t count = 0;
    size_t k = 0;
#if defined(__SSE2__) && defined(__x86_64__)
    /* Sixteen bytes per step where SSE2 is the baseline (x86-64): a byte
     * compare gives -1 per line break, subtracted into 16 byte counters
     * that are summed (psadbw) before any can pass 255. */
    const __m128i nlv = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (n - k >= 16) {
        size_t steps = (n - k) / 16 < 255 ? (n - k) / 16 : 255;
        __m128i acc = zero;
        for (size_t s = 0; s < steps; s++, k += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(b + k)), nlv));
        __m128i sum = _mm_sad_epu8(acc, zero);
        count += (uint64_t)_mm_cvtsi128_si64(sum) + (uint64_t)_mm_extract_epi16(sum, 4);
    }
#endif
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, b + k, 8);
        uint64_t x = w ^ nl;
        uint64_t t = ((x & low7) + low7) | x;
        /* one bit per line break, at the bottom of its byte, summed by
         * the multiply into the top byte */
        count += (((~t & ~low7) >> 7) * 0x0101010101010101ull) >> 56;
    }
    for (; k < n; k++)
        count += b[k] == '\n';
    return count;
}

/* Matrix Market entry lines parsed in chunks on several threads, the
 * compressed rows built in place (issue 27 item 1).
 *
 * The entry lines are cut at line boundaries into one contiguous byte range
 * per thread. Pass 1 parses the indices only and counts, per thread, the
 * entries of every row; the row pointers and, per thread, where its entries
 * of each row start follow from those counts (thread 0's entries of a row
 * first), so pass 2 parses again and writes every entry straight to its
 * final place: rows hold their entries in file order, exactly as the
 * coordinate builder's stable counting sort leaves them, and the builder's
 * own slice sort and duplicate merge (builder_internal.h) finish the tensor.
 * There is no coordinate staging copy: beyond the tensor, memory is one
 * 32-bit counter per row and thread and a read buffer per thread.
 *
 * Anything unexpected in the entries (a malformed line, a count that does
 * not match the size line, a file that changed between the passes) returns
 * MTX_CHUNKED_FALLBACK: the single-pass reader then reads the file again
 * and reports the error exactly as it always has.
 *
 * A FROSTT .tns file (job->tns) declares neither its extents nor its count:
 * pass 1 also keeps every mode's largest coordinate, and its row counters
 * start at a guess from the text's size (threads never allocate: the
 * allocator hook need not be thread-safe). A chunk that meets a row beyond
 * its counters stops counting; once pass 1 has given the first mode's
 * extent, the calling thread gives it counters for every row and runs its
 * pass 1 again. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "builder_internal.h"
#include "mtx_chunked.h"
#include "textio.h"

/* Bytes read per block; a line longer than this sends the file to the
 * single-pass reader (which refuses lines over TEXT_READER_MAX_LINE). */
#define CHUNK_BLOCK (256u << 10)
/* Automatic thread counts give every thread at least this much text. */
#define CHUNK_MIN_BYTES (1u << 20)
#define CHUNK_MAX_THREADS 64
/* The passes: 1 counts the rows, 2 places the entries; PASS_DIRECT does
 * both at once for rows that do not decrease (falling back to counting),
 * and PASS_LINES counts a chunk's lines to give the next one its slots. */
#define PASS_DIRECT 3
#define PASS_LINES 4
/* A chunk's status when PASS_DIRECT stopped at an entry it cannot place
 * (pass 1 and 2 then read the file). */
#define CHUNK_TURNED 2
/* Bytes searched per read for the line break that ends a chunk. */
#define BOUNDARY_WINDOW 65536u
/* Row counters per thread for a .tns file whose first and last lines give
 * no guess of its first mode's extent (16 MiB). */
#define TNS_GUESS_ROWS (1u << 22)

typedef struct chunk {
    const mtx_chunk_job *job;
    uint64_t lo, hi;     /* byte range, whole lines */
    char *buf;           /* cap + 1 + TEXT_PAD bytes */
    size_t cap;          /* CHUNK_BLOCK, or less for a shorter range */
    uint32_t *row_count; /* pass 1: entries per row; pass 2: next slot per row */
    uint64_t count_rows; /* row_count's length */
    uint64_t need_rows;  /* .tns pass 1: rows seen beyond count_rows (0: none) */
    uint64_t maxc[TESSEL_MAX_ORDER]; /* .tns pass 1: largest coordinate + 1 */
    tessel_tensor *t;    /* pass 2 and PASS_DIRECT: the arrays being filled */
    int pass;
    /* PASS_DIRECT (a general matrix): entries go to slots base.. below
     * limit in file order while their rows stay in row_lo..row_hi and do
     * not decrease; the chunk writes the start of each row after row_lo
     * it enters into the row pointers, and stops (CHUNK_TURNED) at the
     * first entry that breaks this. */
    uint64_t base, limit;
    uint32_t row_lo, row_hi;
    uint32_t first_row, last_row; /* of its entries, when stored > 0 */
    uint32_t first_col, last_col;
    int strict;          /* PASS_DIRECT: columns rise strictly within rows */
    /* PASS_LINES: the thread's piece of the text after the first chunk,
     * and its line breaks in each chunk (all: the n_all chunks) */
    const struct chunk *all;
    int n_all;
    uint64_t piece_lo, piece_hi;
    uint64_t nl_in[CHUNK_MAX_THREADS];
    uint64_t lines;      /* entry lines seen */
    uint64_t stored;     /* entries placed (mirrors included) */
    int status;          /* TESSEL_OK, MTX_CHUNKED_FALLBACK or < 0 */
    int read_errno;
} chunk;

/* ------------------------------------------------------------------ */
/* Reading */

/* n bytes at offset off into dst; 0, or -1 with errno (short read: EIO). */
static int read_at(const mtx_chunk_job *job, char *dst, size_t n, uint64_t off)
{
    if (job->mem) {
        memcpy(dst, job->mem + off, n);
        return 0;
    }
    while (n > 0) {
        ssize_t got = pread(job->fd, dst, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = EIO;
            return -1;
        }
        dst += got;
        n -= (size_t)got;
        off += (uint64_t)got;
    }
    return 0;
}

/* The first byte after the line break at or after `from` (job->end if
 * none): chunks start there. < 0 on a read error. */
static int64_t line_start_after(const mtx_chunk_job *job, uint64_t from, char *window)
{
    while (from < job->end) {
        uint64_t n = job->end - from < BOUNDARY_WINDOW ? job->end - from : BOUNDARY_WINDOW;
        if (read_at(job, window, (size_t)n, from))
            return -1;
        const char *nl = memchr(window, '\n', (size_t)n);
        if (nl)
            return (int64_t)(from + (uint64_t)(nl - window) + 1);
        from += n;
    }
    return (int64_t)job->end;
}

/* ------------------------------------------------------------------ */
/* Lines */

/* As the single-pass readers skip lines: mtx.c's blanks are scan_at_end's
 * (\v, \f and \r too), tns.c's only spaces and tabs. */
static int is_comment_or_blank(const mtx_chunk_job *job, const char *p, const char *end)
{
    if (p < end && (unsigned)(*p - '0') < 10u)
        return 0; /* the common entry line */
    if (!job->tns && scan_at_end(p, end))
        return 1;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (job->tns)
        return p == end || *p == '#' || *p == '%';
    return *p == '%';
}

/* A 1-based index in 1..limit (textio.h): on a chunk's lines, which end
 * in a NUL with TEXT_PAD bytes after it, one word at the line's end too;
 * on the windows' lines, only within the line. */
#define read_index scan_index_padded
#define read_window_index scan_index_fast

/* Pass 1: counts the entry of the line at the rows it lands in. A general
 * matrix needs only the row here; pass 2 checks the rest of the line. */
static int count_line(chunk *c, const char *p, const char *end)
{
    const mtx_chunk_job *job = c->job;
    uint32_t i, j = 0;
    if (!read_index(&p, end, job->rows, &i) ||
        (job->symmetry != SYM_GENERAL && !read_index(&p, end, job->cols, &j)))
        return MTX_CHUNKED_FALLBACK;
    if (job->symmetry == SYM_SKEW && i == j)
        return MTX_CHUNKED_FALLBACK;
    if (c->row_count[i] == UINT32_MAX)
        return MTX_CHUNKED_FALLBACK;
    c->row_count[i]++;
    c->stored++;
    if (job->symmetry != SYM_GENERAL && i != j) {
        if (c->row_count[j] == UINT32_MAX)
            return MTX_CHUNKED_FALLBACK;
        c->row_count[j]++;
        c->stored++;
    }
    return TESSEL_OK;
}

/* Pass 2: the entry (and its mirror) written to its slot in its row. */
static int place_line(chunk *c, const char *p, const char *end)
{
    const mtx_chunk_job *job = c->job;
    tessel_tensor *t = c->t;
    uint32_t i, j;
    double v;
    if (!read_index(&p, end, job->rows, &i) || !read_index(&p, end, job->cols, &j) ||
        !mtx_scan_value(&p, end, job->field, &v) || !(p == end || scan_at_end(p, end)))
        return MTX_CHUNKED_FALLBACK;
    uint64_t dst = t->ptr[i] + c->row_count[i]++;
    if (dst >= t->ptr[i + 1])
        return MTX_CHUNKED_FALLBACK; /* the file changed since pass 1 */
    t->idx[1][dst] = j;
    if (t->values)
        t->values[dst] = v;
    c->stored++;
    if (job->symmetry != SYM_GENERAL && i != j) {
        dst = t->ptr[j] + c->row_count[j]++;
        if (dst >= t->ptr[j + 1])
            return MTX_CHUNKED_FALLBACK;
        t->idx[1][dst] = i;
        if (t->values)
            t->values[dst] = job->symmetry == SYM_SKEW ? -v : v;
        c->stored++;
    }
    return TESSEL_OK;
}

/* PASS_DIRECT: entry (i, j, v) to the chunk's next slot, and the start of
 * every row after its last one up to i into the row pointers. */
static inline void direct_store(chunk *c, uint32_t i, uint32_t j, double v)
{
    tessel_tensor *t = c->t;
    uint64_t dst = c->base + c->stored;
    for (uint64_t r = (uint64_t)c->last_row + 1; r <= i; r++)
        t->ptr[r] = dst;
    t->idx[1][dst] = j;
    if (t->values)
        t->values[dst] = v;
    if (!c->stored) {
        c->first_row = i;
        c->first_col = j;
    } else if (i == c->last_row && j <= c->last_col) {
        c->strict = 0; /* a duplicate or a column out of order */
    }
    c->last_row = i;
    c->last_col = j;
    c->stored++;
}

/* PASS_DIRECT: while the chunk's rows do not decrease, stay within its
 * bounds and its slots last, the entry is written to the next slot in
 * file order (a general matrix's entries are then already grouped by
 * row); the first entry that breaks this stops the chunk (CHUNK_TURNED). */
static int direct_line(chunk *c, const char *p, const char *end)
{
    const mtx_chunk_job *job = c->job;
    uint32_t i, j;
    double v;
    if (!read_index(&p, end, job->rows, &i) || !read_index(&p, end, job->cols, &j) ||
        !mtx_scan_value(&p, end, job->field, &v) || !(p == end || scan_at_end(p, end)))
        return MTX_CHUNKED_FALLBACK;
    if (i < c->last_row || i > c->row_hi || c->base + c->stored >= c->limit)
        return CHUNK_TURNED;
    direct_store(c, i, j, v);
    return TESSEL_OK;
}

/* Bytes a line read by fast_lines must leave before the block's end: its
 * two indices' words (p + 16) lie inside, so a line cut by the block is
 * never mistaken for a whole one. */
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
    __m128i x = _mm_set_epi64x((long long)b, (long long)a);
    __m128i pairs = _mm_add_epi16(
        _mm_mullo_epi16(_mm_and_si128(x, _mm_set1_epi16(0xFF)), _mm_set1_epi16(10)),
        _mm_srli_epi16(x, 8));
    __m128i quads = _mm_madd_epi16(pairs, _mm_set1_epi32(0x00010064));  /* x100 + 1 */
    __m128i eights = _mm_madd_epi16(_mm_packs_epi32(quads, quads),
                                    _mm_set1_epi32(0x00012710)); /* x10000 + 1 */
    uint64_t both = (uint64_t)_mm_cvtsi128_si64(eights);
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

/* One common entry line at p: "ROW COL\n" for a pattern matrix, "ROW COL
 * VALUE\n" otherwise (fast_pair's indices, both in range, one space before
 * the value), and a pattern line's break found by the indices; a value is
 * read by mtx_scan_value up to the line break (`skip`: only found, for
 * pass 1, which needs the row alone). The line's length, or 0 for any
 * other form or a value that does not scan (chunk_line then reads the
 * line). p must have FAST_TAIL readable bytes before stop. */
typedef struct fast_form {
    uint64_t rows, cols;
    enum mtx_field field;
} fast_form; /* the job's, in the caller's locals (stores cannot alias them) */

static inline unsigned fast_line(char *p, const char *stop, fast_form f, int skip, uint32_t *i,
                                 uint32_t *j, double *v)
{
    uint64_t vi, vj;
    unsigned n = fast_pair(p, &vi, &vj);
    if (!n || vi - 1u >= f.rows || vj - 1u >= f.cols)
        return 0; /* an index 0 wraps round to the largest value */
    *i = (uint32_t)(vi - 1);
    *j = (uint32_t)(vj - 1);
    if (f.field == FIELD_PATTERN)
        return p[n] == '\n' ? n + 1 : 0;
    char *r = p + n + 1, *nl;
    if (p[n] != ' ' || !(nl = memchr(r, '\n', (size_t)(stop - r))) || nl[-1] == '\r')
        return 0;
    if (!skip) {
        const char *e = r;
        *nl = '\0'; /* strtod, in scan_double's fallback, stops here */
        int ok = mtx_scan_value(&e, nl, f.field, v) && (e == nl || scan_at_end(e, nl));
        *nl = '\n';
        if (!ok)
            return 0;
    }
    return (unsigned)(nl + 1 - p);
}

/* fast_lines for PASS_DIRECT: direct_line's work, on the chunk's fields
 * kept in locals (the index stores could otherwise alias them); a line it
 * cannot place is left to direct_line. Returns where it stopped. */
static char *fast_direct(chunk *c, char *p, const char *stop)
{
    const mtx_chunk_job *job = c->job;
    const uint64_t entries = job->entries, base = c->base, room = c->limit - c->base;
    const fast_form form = { job->rows, job->cols, job->field };
    uint64_t *restrict ptr = c->t->ptr;
    uint32_t *restrict idx = c->t->idx[1] + base;
    double *restrict val = c->t->values ? c->t->values + base : NULL;
    double v = 0;
    uint64_t stored = c->stored, lines = c->lines;
    uint32_t last_row = c->last_row, last_col = c->last_col, row_hi = c->row_hi;
    int strict = c->strict;
    uint32_t i, j;
    unsigned len;
    while (stop - p >= FAST_TAIL && lines < entries && stored < room &&
           (len = fast_line(p, stop, form, 0, &i, &j, &v)) && i >= last_row && i <= row_hi) {
        if (i != last_row) {
            for (uint64_t r = (uint64_t)last_row + 1; r <= i; r++)
                ptr[r] = base + stored;
        } else if (stored && j <= last_col) {
            strict = 0;
        }
        if (!stored) {
            c->first_row = i;
            c->first_col = j;
        }
        idx[stored] = j;
        if (val)
            val[stored] = v;
        last_row = i;
        last_col = j;
        stored++;
        lines++;
        p += len;
    }
    c->stored = stored;
    c->lines = lines;
    c->last_row = last_row;
    c->last_col = last_col;
    c->strict = strict;
    return p;
}

/* The common lines of a general matrix (fast_line) from p on
 * while FAST_TAIL bytes remain before stop, in passes 1, 2 and
 * PASS_DIRECT, without chunk_line's memchr and checks: the entries
 * count_line, place_line and direct_line would store. Returns where it
 * stopped: the start of a line it does not read (any other form, or one
 * chunk_line must refuse), which chunk_line then reads as always. */
static char *fast_lines(chunk *c, char *p, const char *stop)
{
    if (c->pass == PASS_DIRECT)
        return fast_direct(c, p, stop);
    const mtx_chunk_job *job = c->job;
    const uint64_t entries = job->entries;
    const fast_form form = { job->rows, job->cols, job->field };
    uint32_t *restrict rc = c->row_count;
    uint64_t n = 0, lines = c->lines;
    double v = 0;
    uint32_t i, j;
    unsigned len;
    if (c->pass == 2) {
        const uint64_t *ptr = c->t->ptr;
        uint32_t *restrict idx = c->t->idx[1];
        double *restrict val = c->t->values;
        while (stop - p >= FAST_TAIL && lines + n < entries &&
               (len = fast_line(p, stop, form, 0, &i, &j, &v)) && ptr[i] + rc[i] < ptr[i + 1]) {
            if (val)
                val[ptr[i] + rc[i]] = v;
            idx[ptr[i] + rc[i]++] = j;
            n++;
            p += len;
        }
    } else {
        while (stop - p >= FAST_TAIL && lines + n < entries &&
               (len = fast_line(p, stop, form, 1, &i, &j, &v)) && rc[i] != UINT32_MAX) {
            rc[i]++;
            n++;
            p += len;
        }
    }
    c->lines = lines + n;
    c->stored += n;
    return p;
}

/* .tns pass 1: the line's coordinates widen the extents and its first
 * counts its row (when the counters reach it). */
static int count_tns_line(chunk *c, const char *p, const char *end)
{
    const mtx_chunk_job *job = c->job;
    uint32_t x[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < job->order; m++) {
        if (!read_index(&p, end, TESSEL_MAX_DIM, &x[m]))
            return MTX_CHUNKED_FALLBACK;
        if (x[m] + 1ull > c->maxc[m])
            c->maxc[m] = x[m] + 1ull;
    }
    if (x[0] >= c->count_rows) {
        if (x[0] + 1ull > c->need_rows)
            c->need_rows = x[0] + 1ull;
    } else if (c->row_count[x[0]]++ == UINT32_MAX) {
        return MTX_CHUNKED_FALLBACK;
    }
    c->stored++;
    return TESSEL_OK;
}

/* .tns pass 2: the entry written to its slot in its row. */
static int place_tns_line(chunk *c, const char *p, const char *end)
{
    const mtx_chunk_job *job = c->job;
    tessel_tensor *t = c->t;
    uint32_t x[TESSEL_MAX_ORDER];
    double v;
    for (unsigned m = 0; m < job->order; m++)
        if (!read_index(&p, end, t->dims[m], &x[m]))
            return MTX_CHUNKED_FALLBACK; /* malformed, or the file changed */
    if (scan_double(&p, end, &v) != SCAN_OK || !scan_at_end(p, end) ||
        x[0] >= c->count_rows)
        return MTX_CHUNKED_FALLBACK;
    uint64_t dst = t->ptr[x[0]] + c->row_count[x[0]]++;
    if (dst >= t->ptr[x[0] + 1])
        return MTX_CHUNKED_FALLBACK;
    for (unsigned m = 1; m < job->order; m++)
        t->idx[m][dst] = x[m];
    t->values[dst] = v;
    c->stored++;
    return TESSEL_OK;
}

/* One line [p, end), *end writable: blank and comment lines are skipped as
 * the single-pass reader skips them. */
static int chunk_line(chunk *c, char *p, char *end)
{
    if (end > p && end[-1] == '\r')
        end--;
    *end = '\0'; /* strtod, in scan_double's fallback, stops here */
    /* a line starting with a digit (nearly all) without the call */
    if (!(p < end && (unsigned)(*p - '0') < 10u) && is_comment_or_blank(c->job, p, end))
        return TESSEL_OK;
    if (++c->lines > c->job->entries)
        return MTX_CHUNKED_FALLBACK;
    if (c->job->tns)
        return c->pass == 1 ? count_tns_line(c, p, end) : place_tns_line(c, p, end);
    if (c->pass == PASS_DIRECT)
        return direct_line(c, p, end);
    return c->pass == 1 ? count_line(c, p, end) : place_line(c, p, end);
}

/* Every line of the chunk's range, read block by block. */
static int chunk_run(chunk *c)
{
    uint64_t pos = c->lo;
    size_t carry = 0;
    const mtx_chunk_job *job = c->job;
    /* fast_lines reads a general matrix's lines in passes 1, 2 and direct */
    int fast = !job->tns && job->symmetry == SYM_GENERAL && c->pass != PASS_LINES;
    for (;;) {
        size_t room = c->cap - carry;
        size_t n = c->hi - pos < room ? (size_t)(c->hi - pos) : room;
        if (n && read_at(c->job, c->buf + carry, n, pos)) {
            c->read_errno = errno;
            return TESSEL_EIO;
        }
        pos += n;
        size_t len = carry + n;
        int last = pos == c->hi;
        char *p = c->buf, *stop = c->buf + len;
        char *nl;
        for (;;) {
            if (fast)
                p = fast_lines(c, p, stop);
            if (!(nl = memchr(p, '\n', (size_t)(stop - p))))
                break;
            int rc = chunk_line(c, p, nl);
            if (rc)
                return rc;
            p = nl + 1;
        }
        carry = (size_t)(stop - p);
        if (last)
            return carry ? chunk_line(c, p, stop) : TESSEL_OK;
        if (carry == c->cap)
            return MTX_CHUNKED_FALLBACK; /* a line longer than a block */
        memmove(c->buf, p, carry);
    }
}

/* The line breaks in b[0..n), eight bytes per step: a byte of x = w ^
 * 0x0a0a.. is zero exactly where b holds '\n', and ((x & 0x7f..) + 0x7f..)
 * | x has its high bit clear exactly in x's zero bytes (no carry crosses a
 * byte). */
static uint64_t count_newlines(const char *b, size_t n)
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

/* PASS_LINES: the line breaks in this thread's piece [piece_lo,
 * piece_hi) of the text after the first chunk, counted per chunk the
 * piece meets into nl_in (direct_setup sums them over the threads). */
static int count_lines(chunk *c)
{
    char local[4096]; /* an empty chunk has no buffer */
    char *buf = c->cap ? c->buf : local;
    size_t cap = c->cap ? c->cap : sizeof(local);
    for (int k = 0; k < c->n_all; k++) {
        const chunk *o = &c->all[k];
        uint64_t lo = o->lo > c->piece_lo ? o->lo : c->piece_lo;
        uint64_t hi = o->hi < c->piece_hi ? o->hi : c->piece_hi;
        c->nl_in[k] = 0;
        for (uint64_t pos = lo; pos < hi;) {
            size_t n = hi - pos < cap ? (size_t)(hi - pos) : cap;
            if (read_at(c->job, buf, n, pos)) {
                c->read_errno = errno;
                return TESSEL_EIO;
            }
            c->nl_in[k] += count_newlines(buf, n);
            pos += n;
        }
    }
    return TESSEL_OK;
}

static void *chunk_main(void *arg)
{
    chunk *c = arg;
    c->lines = c->stored = c->need_rows = 0;
    memset(c->maxc, 0, sizeof(c->maxc));
    c->status = c->pass == PASS_LINES ? count_lines(c) : chunk_run(c);
    return NULL;
}

/* Runs the current pass of every chunk that `only` selects (NULL: all),
 * the first on the calling thread. */
static void run_pass(chunk *ch, int n, int pass, const unsigned char *only)
{
    pthread_t tid[CHUNK_MAX_THREADS];
    int started[CHUNK_MAX_THREADS] = { 0 }, first = -1;
    for (int k = 0; k < n; k++) {
        ch[k].pass = pass;
        if (first < 0 && (!only || only[k]))
            first = k;
    }
    for (int k = first + 1; first >= 0 && k < n; k++)
        if (!only || only[k])
            started[k] = pthread_create(&tid[k], NULL, chunk_main, &ch[k]) == 0;
    if (first >= 0)
        chunk_main(&ch[first]);
    for (int k = first + 1; first >= 0 && k < n; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else if (!only || only[k])
            chunk_main(&ch[k]); /* no thread to spare: run it here */
    }
}

/* The first failure in file order, TESSEL_OK if none. */
static int pass_status(const chunk *ch, int n, tessel_diag *diag)
{
    for (int k = 0; k < n; k++) {
        if (ch[k].status == TESSEL_EIO)
            return tessel_diag_set(diag, TESSEL_EIO, ch[k].job->name, 0, 0, NULL,
                                   "read failed: %s", strerror(ch[k].read_errno));
        if (ch[k].status)
            return ch[k].status;
    }
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Setup */

static int thread_count(const mtx_chunk_job *job)
{
    long n = job->threads;
    if (n <= 0) {
        n = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t by_size = (job->end - job->begin) / CHUNK_MIN_BYTES;
        if (n < 1)
            n = 1;
        if ((uint64_t)n > by_size)
            n = by_size ? (long)by_size : 1;
    }
    return n > CHUNK_MAX_THREADS ? CHUNK_MAX_THREADS : (int)n;
}

static void free_chunks(const tessel_allocator *a, chunk *ch, int n)
{
    for (int k = 0; k < n; k++) {
        tessel_dealloc(a, ch[k].buf);
        tessel_dealloc(a, ch[k].row_count);
    }
    tessel_dealloc(a, ch);
}

/* Issue 25 item 9: the step and the bytes it asked for. */
static int oom(const mtx_chunk_job *job, tessel_diag *diag, const char *step, uint64_t bytes)
{
    return tessel_diag_oom(diag, job->name, step, (size_t)bytes);
}

/* The largest first coordinate + 1 on the whole lines of [lo, hi) (read
 * into window), 0 if none parses; a cut first line is skipped unless lo
 * starts the entries. */
static uint64_t window_rows(const mtx_chunk_job *job, uint64_t lo, uint64_t hi, char *window)
{
    if (hi <= lo || read_at(job, window, (size_t)(hi - lo), lo))
        return 0;
    const char *p = window, *end = window + (hi - lo), *nl;
    if (lo > job->begin && (nl = memchr(p, '\n', (size_t)(end - p))))
        p = nl + 1;
    uint64_t most = 0;
    while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
        const char *q = p;
        uint32_t row;
        if (!is_comment_or_blank(job, p, nl) && read_window_index(&q, nl, TESSEL_MAX_DIM, &row) &&
            row + 1ull > most)
            most = row + 1ull;
        p = nl + 1;
    }
    return most;
}

/* Row counters a chunk starts with: the declared rows, or for .tns a guess:
 * the largest first coordinate on the first and last 64 KiB of entries,
 * and an eighth more (exact for a file sorted by its first mode, close for
 * one in random order); without any, what the text could hold, capped so a
 * big file does not claim counters for rows it may not have. */
static uint64_t first_count_rows(const mtx_chunk_job *job, char *window)
{
    if (!job->tns)
        return job->rows ? job->rows : 1;
    uint64_t fit = (job->end - job->begin) / (2u * (job->order + 1u)) + 1;
    uint64_t head = job->end - job->begin < BOUNDARY_WINDOW ? job->end : job->begin + BOUNDARY_WINDOW;
    uint64_t tail = job->end - job->begin < BOUNDARY_WINDOW ? job->begin : job->end - BOUNDARY_WINDOW;
    uint64_t a = window_rows(job, job->begin, head, window);
    uint64_t b = window_rows(job, tail, job->end, window);
    uint64_t seen = a > b ? a : b;
    uint64_t guess = seen ? seen + seen / 8 + 1024 : TNS_GUESS_ROWS;
    return guess < fit ? guess : fit;
}

/* Zeroed row counters of count_rows rows for every chunk. */
static int alloc_counters(const mtx_chunk_job *job, const tessel_allocator *a, chunk *ch, int n,
                          uint64_t count_rows, tessel_diag *diag)
{
    for (int k = 0; k < n; k++) {
        ch[k].count_rows = count_rows;
        ch[k].row_count = tessel_alloc_array(a, count_rows, sizeof(uint32_t));
        if (!ch[k].row_count)
            return oom(job, diag, "allocating a chunk's row counts",
                       count_rows * sizeof(uint32_t));
        memset(ch[k].row_count, 0, count_rows * sizeof(uint32_t));
    }
    return TESSEL_OK;
}

/* n chunks over whole lines of the entry range, each with its buffer and,
 * with `counters`, zeroed row counters (PASS_DIRECT needs none). */
static int make_chunks(const mtx_chunk_job *job, const tessel_allocator *a, int n, int counters,
                       chunk **out, tessel_diag *diag)
{
    chunk *ch = tessel_alloc_array(a, (uint64_t)n, sizeof(*ch));
    if (!ch)
        return oom(job, diag, "splitting a Matrix Market file into chunks",
                   (uint64_t)n * sizeof(*ch));
    memset(ch, 0, (size_t)n * sizeof(*ch));
    int rc = TESSEL_OK;
    uint64_t span = job->end - job->begin, prev = job->begin;
    int need_window = n > 1 || job->tns;
    char *window = need_window ? tessel_alloc(a, BOUNDARY_WINDOW) : NULL;
    if (need_window && !window)
        rc = oom(job, diag, "splitting a Matrix Market file into chunks", BOUNDARY_WINDOW);
    for (int k = 0; k < n && !rc; k++) {
        ch[k].job = job;
        ch[k].lo = prev;
        uint64_t hi = job->end;
        if (k + 1 < n) {
            int64_t at = line_start_after(job, job->begin + span / (uint64_t)n * (uint64_t)(k + 1),
                                          window);
            if (at < 0)
                rc = tessel_diag_set(diag, TESSEL_EIO, job->name, 0, 0, NULL, "read failed: %s",
                                     strerror(errno));
            hi = at < (int64_t)prev ? prev : (uint64_t)at;
        }
        ch[k].hi = hi;
        prev = hi;
    }
    uint64_t count_rows = rc ? 1 : first_count_rows(job, window);
    tessel_dealloc(a, window);
    for (int k = 0; k < n && !rc; k++) {
        /* Small inputs (tests, fuzzers) get small buffers. */
        ch[k].cap = ch[k].hi - ch[k].lo < CHUNK_BLOCK ? (size_t)(ch[k].hi - ch[k].lo) : CHUNK_BLOCK;
        ch[k].buf = tessel_alloc(a, ch[k].cap + 1 + TEXT_PAD);
        if (ch[k].buf)
            memset(ch[k].buf + ch[k].cap + 1, 0, TEXT_PAD);
        else
            rc = oom(job, diag, "allocating a chunk's read buffer", ch[k].cap + 1 + TEXT_PAD);
    }
    if (!rc && counters)
        rc = alloc_counters(job, a, ch, n, count_rows, diag);
    if (rc) {
        free_chunks(a, ch, n);
        return rc;
    }
    *out = ch;
    return TESSEL_OK;
}

/* Row pointers from the per-chunk counts, which become each chunk's first
 * slot (relative to the row's start) in every row. MTX_CHUNKED_FALLBACK if
 * a row holds 2^32 entries or more. */
static int row_pointers(chunk *ch, int n, tessel_tensor *t)
{
    uint64_t total = 0;
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        uint64_t in_row = 0;
        for (int k = 0; k < n; k++) {
            if (r >= ch[k].count_rows)
                continue; /* .tns: the chunk has no entry in this row */
            uint64_t c = ch[k].row_count[r];
            ch[k].row_count[r] = (uint32_t)in_row;
            in_row += c;
        }
        if (in_row > UINT32_MAX)
            return MTX_CHUNKED_FALLBACK;
        t->ptr[r] = total;
        total += in_row;
    }
    t->ptr[t->dims[0]] = total;
    return TESSEL_OK;
}

/* The arrays of an order-`order` tensor of extents dims holding nnz entries. */
static int alloc_tensor(const mtx_chunk_job *job, const tessel_allocator *a, unsigned order,
                        const uint64_t *dims, uint64_t nnz, tessel_tensor **out)
{
    tessel_tensor *t = tessel_alloc(a, sizeof(*t));
    if (!t)
        return TESSEL_ENOMEM;
    memset(t, 0, sizeof(*t));
    t->alloc = a;
    t->order = order;
    memcpy(t->dims, dims, order * sizeof(uint64_t));
    t->nnz = nnz;
    int has_values = job->field != FIELD_PATTERN;
    strcpy(t->field, has_values ? "real" : "pattern");
    strcpy(t->symmetry, "general");
    *out = t;
    t->ptr = tessel_alloc_array(a, dims[0] + 1, sizeof(uint64_t));
    if (!t->ptr)
        return TESSEL_ENOMEM;
    if (nnz == 0)
        return TESSEL_OK;
    for (unsigned m = 1; m < order; m++)
        if (!(t->idx[m] = tessel_alloc_array(a, nnz, sizeof(uint32_t))))
            return TESSEL_ENOMEM;
    if (has_values && !(t->values = tessel_alloc_array(a, nnz, sizeof(double))))
        return TESSEL_ENOMEM;
    return TESSEL_OK;
}

static int same_file_state(const mtx_chunk_job *job, const struct stat *before)
{
    struct stat now;
    if (job->mem)
        return 1;
    return fstat(job->fd, &now) == 0 && now.st_size == before->st_size &&
           now.st_mtim.tv_sec == before->st_mtim.tv_sec &&
           now.st_mtim.tv_nsec == before->st_mtim.tv_nsec;
}

/* .tns after pass 1: the extents (largest coordinates) into dims, and
 * pass 1 again, with counters for every row, for each chunk that met a row
 * beyond its first counters. MTX_CHUNKED_FALLBACK when the rows would be
 * refused as hypersparse (the single-pass reader says so). */
static int tns_extents(const mtx_chunk_job *job, const tessel_allocator *a, chunk *ch, int n,
                       uint64_t nnz, uint64_t *dims, tessel_diag *diag)
{
    for (unsigned m = 0; m < job->order; m++) {
        dims[m] = 0;
        for (int k = 0; k < n; k++)
            if (ch[k].maxc[m] > dims[m])
                dims[m] = ch[k].maxc[m];
    }
    if (tensor_check_ptr_size(job->order, dims[0], nnz, 1, NULL) != TESSEL_OK)
        return MTX_CHUNKED_FALLBACK;
    unsigned char again[CHUNK_MAX_THREADS] = { 0 };
    int any = 0;
    for (int k = 0; k < n; k++) {
        if (!ch[k].need_rows)
            continue;
        tessel_dealloc(a, ch[k].row_count);
        ch[k].count_rows = dims[0];
        ch[k].row_count = tessel_alloc_array(a, dims[0], sizeof(uint32_t));
        if (!ch[k].row_count) {
            ch[k].count_rows = 0;
            return oom(job, diag, "allocating a chunk's row counts", dims[0] * sizeof(uint32_t));
        }
        memset(ch[k].row_count, 0, dims[0] * sizeof(uint32_t));
        again[k] = 1;
        any = 1;
    }
    if (!any)
        return TESSEL_OK;
    run_pass(ch, n, 1, again);
    int rc = pass_status(ch, n, diag);
    for (int k = 0; k < n && !rc; k++)
        if (ch[k].need_rows)
            rc = MTX_CHUNKED_FALLBACK; /* the file changed */
    return rc;
}

/* Whether the rows of the whole entry lines in the first BOUNDARY_WINDOW
 * bytes never decrease: a file whose rows fall early (a column-major
 * export) is not worth PASS_DIRECT's line count. 1 also when the bytes
 * cannot be read or the window cannot be allocated (pass 1 then says). */
static int head_rows_rise(const mtx_chunk_job *job, const tessel_allocator *a)
{
    uint64_t n = job->end - job->begin < BOUNDARY_WINDOW ? job->end - job->begin
                                                         : BOUNDARY_WINDOW;
    char *w = n ? tessel_alloc(a, (size_t)n) : NULL;
    if (!w || read_at(job, w, (size_t)n, job->begin)) {
        tessel_dealloc(a, w);
        return 1;
    }
    const char *p = w, *end = w + n, *nl;
    uint32_t last = 0, row;
    int rise = 1;
    while (rise && p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
        const char *q = p;
        if (!is_comment_or_blank(job, p, nl) && read_window_index(&q, nl, TESSEL_MAX_DIM, &row)) {
            rise = row >= last;
            last = row;
        }
        p = nl + 1;
    }
    tessel_dealloc(a, w);
    return rise;
}

/* The row of the line at [lo, hi)'s start, or -1 when it is no entry line
 * (a comment, a blank, a malformed index) or cannot be read. */
static int64_t first_row_at(const mtx_chunk_job *job, uint64_t lo, uint64_t hi)
{
    char w[64];
    size_t n = hi - lo < sizeof(w) ? (size_t)(hi - lo) : sizeof(w);
    if (!n || read_at(job, w, n, lo))
        return -1;
    const char *end = memchr(w, '\n', n), *q = w;
    if (!end && n == sizeof(w))
        return -1; /* a long line: its index might be cut */
    end = end ? end : w + n;
    uint32_t row;
    if (is_comment_or_blank(job, w, end) || !read_window_index(&q, end, job->rows, &row))
        return -1;
    return row;
}

/* PASS_DIRECT's slots and bounds: chunk k's entries fill [base, limit) in
 * file order, after those of the chunks before it, from the lines of the
 * chunks after it (PASS_LINES); its rows run from the first row of its
 * first line (row 0 for the first chunk) to that of the next chunk, so
 * that the chunks write disjoint row pointers. 1 when the pass can run; 0
 * when the lines exceed the entries or a chunk does not start with an
 * entry line, or the first rows fall (passes 1 and 2 then read the file). */
static int direct_setup(const mtx_chunk_job *job, chunk *ch, int n, tessel_tensor *t, int *ok,
                        tessel_diag *diag)
{
    *ok = 0;
    if (n > 1) {
        /* the text after the first chunk in n equal pieces, one a thread */
        uint64_t from = ch[1].lo, span = job->end - from;
        for (int k = 0; k < n; k++) {
            ch[k].all = ch;
            ch[k].n_all = n;
            ch[k].piece_lo = from + span / (uint64_t)n * (uint64_t)k;
            ch[k].piece_hi = k + 1 < n ? from + span / (uint64_t)n * (uint64_t)(k + 1) : job->end;
        }
        run_pass(ch, n, PASS_LINES, NULL);
        int rc = pass_status(ch, n, diag);
        if (rc)
            return rc;
        char last = '\n';
        if (job->end > job->begin && read_at(job, &last, 1, job->end - 1))
            return tessel_diag_set(diag, TESSEL_EIO, job->name, 0, 0, NULL, "read failed: %s",
                                   strerror(errno));
        for (int k = 1; k < n; k++) {
            ch[k].lines = 0;
            for (int r = 0; r < n; r++)
                ch[k].lines += ch[r].nl_in[k];
            /* a last line without a break, in the chunk that ends the text */
            ch[k].lines += ch[k].hi == job->end && ch[k].lo < ch[k].hi && last != '\n';
        }
    }
    uint64_t end = job->entries, hi = job->rows ? job->rows - 1 : 0;
    for (int k = n - 1; k >= 0; k--) {
        uint64_t lines = k ? ch[k].lines : end;
        if (lines > end)
            return TESSEL_OK; /* more lines than entries: pass 1, then 2 */
        ch[k].base = end - lines;
        ch[k].limit = end;
        end -= lines;
        int64_t lo = k ? first_row_at(job, ch[k].lo, ch[k].hi) : 0;
        if (ch[k].lo == ch[k].hi)
            continue; /* no lines: no rows */
        if (lo < 0 || (uint64_t)lo > hi)
            return TESSEL_OK;
        ch[k].row_lo = ch[k].last_row = (uint32_t)lo;
        ch[k].row_hi = (uint32_t)hi;
        hi = (uint64_t)lo;
    }
    for (int k = 0; k < n; k++) {
        ch[k].t = t;
        ch[k].strict = 1;
    }
    *ok = 1;
    return TESSEL_OK;
}

/* After PASS_DIRECT: 0 unless every chunk filled its slots exactly (rows
 * that never decrease, also from one chunk to the next: the entries are
 * then the rows' in file order, and no other pass is needed), and then
 * the row pointers the chunks did not write, those of the rows up to each
 * chunk's first (its start) and after the last chunk's last row (the
 * end). 2 when the columns also rise strictly within every row: no row
 * needs sorting and no entry is a duplicate. 0 too if a row holds 2^32
 * entries or more, as row_pointers refuses. */
static int direct_complete(const chunk *ch, int n, tessel_tensor *t)
{
    const chunk *prev = NULL;
    int strict = 1;
    uint64_t unset = 0; /* the first row whose start no chunk wrote yet */
    for (int k = 0; k < n; k++) {
        if (ch[k].status || ch[k].stored != ch[k].limit - ch[k].base)
            return 0;
        if (!ch[k].stored)
            continue;
        if (prev && prev->last_row > ch[k].first_row)
            return 0;
        strict &= ch[k].strict && !(prev && prev->last_row == ch[k].first_row &&
                                     prev->last_col >= ch[k].first_col);
        for (uint64_t r = unset; r <= ch[k].row_lo; r++)
            t->ptr[r] = ch[k].base;
        unset = (uint64_t)ch[k].last_row + 1;
        prev = &ch[k];
    }
    for (uint64_t r = unset; r <= t->dims[0]; r++)
        t->ptr[r] = t->nnz;
    for (uint64_t r = 0; r < t->dims[0]; r++)
        if (t->ptr[r + 1] - t->ptr[r] > UINT32_MAX)
            return 0;
    return strict ? 2 : 1;
}

/* Both passes over the chunks and the finishing sort and merge: the tensor,
 * or why not (see mtx_chunked.h). */
int mtx_chunked_read(const mtx_chunk_job *job, const tessel_allocator *a, tessel_tensor **out,
                     tessel_diag *diag)
{
    *out = NULL;
    int has_values = job->field != FIELD_PATTERN;
    /* The size line's count, bounded by what the text can hold (a false
     * claim must not size the row counters). */
    uint64_t most = (job->end - job->begin) / 4 + 1;
    if (job->entries < most)
        most = job->entries;
    if (job->symmetry != SYM_GENERAL)
        most *= 2;
    /* Refusals and their messages stay the single-pass reader's. */
    if (job->field == FIELD_COMPLEX || job->symmetry == SYM_HERMITIAN ||
        (job->tns && (job->order < 1 || job->order > TESSEL_MAX_ORDER || !has_values)) ||
        (!job->tns && tensor_check_ptr_size(2, job->rows, most, has_values, NULL) != TESSEL_OK))
        return MTX_CHUNKED_FALLBACK;
    struct stat before;
    memset(&before, 0, sizeof(before));
    if (!job->mem && fstat(job->fd, &before) != 0)
        return MTX_CHUNKED_FALLBACK;
    int n = thread_count(job);
    chunk *ch = NULL;
    /* A general matrix has as many entries as the size line declares (or
     * the single-pass reader says why not): its arrays are allocated first
     * and filled by one pass where its rows allow, without row counters. */
    int direct = !job->tns && job->symmetry == SYM_GENERAL && job->entries <= most &&
                 head_rows_rise(job, a);
    int rc = make_chunks(job, a, n, !direct, &ch, diag);
    if (rc)
        return rc;
    tessel_tensor *t = NULL;
    uint64_t dims[TESSEL_MAX_ORDER] = { job->rows, job->cols };
    if (direct && alloc_tensor(job, a, 2, dims, job->entries, &t) != TESSEL_OK)
        rc = oom(job, diag, "allocating the matrix's row pointers, indices and values",
                 (dims[0] + 1) * sizeof(uint64_t) +
                     job->entries * (sizeof(uint32_t) + (has_values ? sizeof(double) : 0)));
    int complete = 0, ok = 0;
    if (!rc && direct)
        rc = direct_setup(job, ch, n, t, &ok, diag);
    if (!rc && ok) {
        run_pass(ch, n, PASS_DIRECT, NULL);
        rc = pass_status(ch, n, diag);
        if (rc == CHUNK_TURNED)
            rc = TESSEL_OK; /* not complete: passes 1 and 2 follow */
        complete = rc ? 0 : direct_complete(ch, n, t);
    }
    if (!rc && direct && !complete)
        rc = alloc_counters(job, a, ch, n, job->rows ? job->rows : 1, diag);
    if (!rc && !complete) {
        run_pass(ch, n, 1, NULL);
        rc = pass_status(ch, n, diag);
    }
    uint64_t lines = 0, nnz = 0;
    for (int k = 0; k < n; k++) {
        lines += ch[k].lines;
        nnz += ch[k].stored;
    }
    if (!rc && !job->tns && lines != job->entries)
        rc = MTX_CHUNKED_FALLBACK;
    unsigned order = job->tns ? job->order : 2;
    if (!rc && job->tns)
        rc = tns_extents(job, a, ch, n, nnz, dims, diag);
    if (!rc && !t && alloc_tensor(job, a, order, dims, nnz, &t) != TESSEL_OK)
        rc = oom(job, diag,
                 job->tns ? "allocating the tensor's pointers, indices and values"
                          : "allocating the matrix's row pointers, indices and values",
                 (dims[0] + 1) * sizeof(uint64_t) +
                     nnz * ((order - 1) * sizeof(uint32_t) + (has_values ? sizeof(double) : 0)));
    if (!rc && !complete)
        rc = row_pointers(ch, n, t);
    if (!rc && !complete) {
        for (int k = 0; k < n; k++)
            ch[k].t = t;
        run_pass(ch, n, 2, NULL);
        rc = pass_status(ch, n, diag);
    }
    uint64_t placed = 0;
    for (int k = 0; k < n; k++)
        placed += ch[k].stored;
    free_chunks(a, ch, n);
    if (!rc && (placed != nnz || !same_file_state(job, &before)))
        rc = MTX_CHUNKED_FALLBACK;
    /* sorted, duplicate-free rows: the finish would change nothing but
     * drop zeros */
    if (!rc && !(complete == 2 && !(job->flags & TESSEL_BUILD_DROP_ZEROS)))
        rc = tensor_finish_slices(t, job->flags, diag);
    if (rc) {
        tessel_tensor_free(&t);
        return rc;
    }
    *out = t;
    return TESSEL_OK;
}

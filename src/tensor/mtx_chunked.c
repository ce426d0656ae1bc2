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
 * pass 1 again.
 *
 * A general matrix whose rows never decrease is read in one pass
 * (mtx_direct.c), and the common line forms of a general matrix are read
 * by mtx_fastline.h's scanner without chunk_line's per-line split. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder_internal.h"
#include "mtx_chunk_internal.h"
#include "mtx_fastline.h"

/* ------------------------------------------------------------------ */
/* Reading */

/* n bytes at offset off into dst; 0, or -1 with errno (short read: EIO). */
int chunk_read_at(const mtx_chunk_job *job, char *dst, size_t n, uint64_t off)
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
        if (chunk_read_at(job, window, (size_t)n, from))
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
int chunk_is_comment_or_blank(const mtx_chunk_job *job, const char *p, const char *end)
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

/* The common lines of a general matrix (fast_line) from p on
 * while FAST_TAIL bytes remain before stop, in passes 1, 2 and
 * PASS_DIRECT, without chunk_line's memchr and checks: the entries
 * count_line, place_line and mtx_direct_line would store. Returns where it
 * stopped: the start of a line it does not read (any other form, or one
 * chunk_line must refuse), which chunk_line then reads as always. */
static char *fast_lines(chunk *c, char *p, const char *stop)
{
    if (c->pass == PASS_DIRECT)
        return mtx_direct_fast(c, p, stop);
    const mtx_chunk_job *job = c->job;
    const uint64_t entries = job->entries;
    const fast_form form = { job->rows, job->cols, job->field };
    uint32_t *restrict rc = c->row_count;
    uint64_t n = 0, lines = c->lines;
    double v = 0;
    uint32_t i, j;
    line_breaks nl = line_breaks_at(p, stop);
    char *e;
    if (c->pass == 2) {
        const uint64_t *ptr = c->t->ptr;
        uint32_t *restrict idx = c->t->idx[1];
        double *restrict val = c->t->values;
        while (lines + n < entries && (e = line_break_next(&nl, p, stop)) &&
               stop - p >= FAST_TAIL && fast_line(p, e, stop, form, 0, &i, &j, &v) &&
               ptr[i] + rc[i] < ptr[i + 1]) {
            if (val)
                val[ptr[i] + rc[i]] = v;
            idx[ptr[i] + rc[i]++] = j;
            n++;
            p = e + 1;
        }
    } else {
        while (lines + n < entries && (e = line_break_next(&nl, p, stop)) &&
               stop - p >= FAST_TAIL && fast_line(p, e, stop, form, 1, &i, &j, &v) &&
               rc[i] != UINT32_MAX) {
            rc[i]++;
            n++;
            p = e + 1;
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

static int chunk_line_nul(chunk *c, char *p, char *end);

/* One line [p, end), *end writable: blank and comment lines are skipped as
 * the single-pass reader skips them. */
static int chunk_line(chunk *c, char *p, char *end)
{
    if (end > p && end[-1] == '\r')
        end--;
    /* the byte is put back: a mapped file (job->in_place) is read again by
     * the next pass */
    char saved = *end;
    *end = '\0'; /* strtod, in scan_double's fallback, stops here */
    int rc = chunk_line_nul(c, p, end);
    *end = saved;
    return rc;
}

/* chunk_line's line, NUL-terminated at end. */
static int chunk_line_nul(chunk *c, char *p, char *end)
{
    if (c->job->in_place && end - p >= (ptrdiff_t)CHUNK_BLOCK)
        return MTX_CHUNKED_FALLBACK; /* as chunk_run refuses it from a buffer */
    /* a line starting with a digit (nearly all) without the call */
    if (!(p < end && (unsigned)(*p - '0') < 10u) && chunk_is_comment_or_blank(c->job, p, end))
        return TESSEL_OK;
    if (++c->lines > c->job->entries)
        return MTX_CHUNKED_FALLBACK;
    if (c->job->tns)
        return c->pass == 1 ? count_tns_line(c, p, end) : place_tns_line(c, p, end);
    if (c->pass == PASS_DIRECT)
        return mtx_direct_line(c, p, end);
    return c->pass == 1 ? count_line(c, p, end) : place_line(c, p, end);
}

/* The whole lines of [*pp, stop), *pp left at the first byte after them. */
static int whole_lines(chunk *c, char **pp, char *stop, int fast)
{
    char *p = *pp, *nl;
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
    *pp = p;
    return TESSEL_OK;
}

/* Bytes of a mapped file parsed between two drops of the pages behind. */
#define MAP_PIECE (256u << 10)

/* The pages wholly inside [from, to) of the mapped file dropped from the
 * process (MADV_DONTNEED, a private mapping's pages come back from the
 * file if read again). */
static void drop_pages(const void *from, const void *to)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)from + page - 1) & ~(page - 1), hi = (uintptr_t)to & ~(page - 1);
    if (page > 1 && hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Every line of the chunk's range in place in the mapped file (job->in_place),
 * MAP_PIECE bytes at a time: the pages wholly inside the range that the
 * parse has left are dropped from the process (MADV_DONTNEED; they come back
 * from the page cache if a later pass reads them), so the mapping adds
 * little to the peak resident memory. Pages shared with a neighbour chunk
 * stay: its thread may have a NUL in them (chunk_line). */
static int chunk_run_mapped(chunk *c, int fast)
{
    char *text = (char *)c->job->mem;
    char *p = text + c->lo, *hi = text + c->hi, *dropped = p;
    while (p < hi) {
        char *start = p, *stop = (size_t)(hi - p) > MAP_PIECE ? p + MAP_PIECE : hi;
        int rc = whole_lines(c, &p, stop, fast);
        if (rc)
            return rc;
        if (stop == hi)
            return p < hi ? chunk_line(c, p, hi) : TESSEL_OK;
        if (p == start || (size_t)(stop - p) >= CHUNK_BLOCK)
            return MTX_CHUNKED_FALLBACK; /* a line longer than a block */
        drop_pages(dropped, p);
        dropped = p;
    }
    return TESSEL_OK;
}

/* Every line of the chunk's range, read block by block. */
static int chunk_run(chunk *c)
{
    uint64_t pos = c->lo;
    size_t carry = 0;
    const mtx_chunk_job *job = c->job;
    /* fast_lines reads a general matrix's lines in passes 1, 2 and direct */
    int fast = !job->tns && job->symmetry == SYM_GENERAL && c->pass != PASS_LINES;
    if (job->in_place)
        return chunk_run_mapped(c, fast);
    for (;;) {
        size_t room = c->cap - carry;
        size_t n = c->hi - pos < room ? (size_t)(c->hi - pos) : room;
        if (n && chunk_read_at(c->job, c->buf + carry, n, pos)) {
            c->read_errno = errno;
            return TESSEL_EIO;
        }
        pos += n;
        size_t len = carry + n;
        int last = pos == c->hi;
        char *p = c->buf, *stop = c->buf + len;
        int rc = whole_lines(c, &p, stop, fast);
        if (rc)
            return rc;
        carry = (size_t)(stop - p);
        if (last)
            return carry ? chunk_line(c, p, stop) : TESSEL_OK;
        if (carry == c->cap)
            return MTX_CHUNKED_FALLBACK; /* a line longer than a block */
        memmove(c->buf, p, carry);
    }
}

/* PASS_LINES: the line breaks in this thread's piece [piece_lo,
 * piece_hi) of the text after the first chunk, counted per chunk the
 * piece meets into nl_in (mtx_direct_setup sums them over the threads). */
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
        for (uint64_t pos = lo; c->job->in_place && pos < hi;) {
            size_t n = hi - pos < MAP_PIECE ? (size_t)(hi - pos) : MAP_PIECE;
            c->nl_in[k] += text_count_newlines((const char *)c->job->mem + pos, n);
            /* no thread writes during this pass: any page may go */
            drop_pages(c->job->mem + pos, c->job->mem + pos + n);
            pos += n;
        }
        if (c->job->in_place)
            continue;
        for (uint64_t pos = lo; pos < hi;) {
            size_t n = hi - pos < cap ? (size_t)(hi - pos) : cap;
            if (chunk_read_at(c->job, buf, n, pos)) {
                c->read_errno = errno;
                return TESSEL_EIO;
            }
            c->nl_in[k] += text_count_newlines(buf, n);
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
void chunk_run_pass(chunk *ch, int n, int pass, const unsigned char *only)
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
int chunk_pass_status(const chunk *ch, int n, tessel_diag *diag)
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
    if (hi <= lo || chunk_read_at(job, window, (size_t)(hi - lo), lo))
        return 0;
    const char *p = window, *end = window + (hi - lo), *nl;
    if (lo > job->begin && (nl = memchr(p, '\n', (size_t)(end - p))))
        p = nl + 1;
    uint64_t most = 0;
    while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
        const char *q = p;
        uint32_t row;
        if (!chunk_is_comment_or_blank(job, p, nl) &&
            read_window_index(&q, nl, TESSEL_MAX_DIM, &row) && row + 1ull > most)
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
    if (job->mem && !job->in_place)
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
    chunk_run_pass(ch, n, 1, again);
    int rc = chunk_pass_status(ch, n, diag);
    for (int k = 0; k < n && !rc; k++)
        if (ch[k].need_rows)
            rc = MTX_CHUNKED_FALLBACK; /* the file changed */
    return rc;
}

/* The plain file mapped privately and writable, its bytes followed by at
 * least TEXT_PAD zero bytes: an anonymous reservation a page longer than the
 * file, the file mapped over its start (the rest of the file's last page
 * reads as zeros, the extra page is anonymous). NULL when mmap fails (the
 * chunks then pread into their buffers). *len: the reservation's size. */
static unsigned char *map_text(const mtx_chunk_job *job, size_t *len)
{
    long page = sysconf(_SC_PAGESIZE);
    if (job->mem || job->fd < 0 || job->end == 0 || page <= 0 ||
        job->end > SIZE_MAX - 2 * (uint64_t)page)
        return NULL;
    struct stat st;
    if (fstat(job->fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != job->end)
        return NULL; /* not a regular file, or changed since it was opened */
    size_t size = (size_t)job->end;
    *len = (size + 2 * (size_t)page - 1) / (size_t)page * (size_t)page;
    void *res = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (res == MAP_FAILED)
        return NULL;
    void *m = mmap(res, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, job->fd, 0);
    if (m == MAP_FAILED) {
        munmap(res, *len);
        return NULL;
    }
    madvise(m, size, MADV_SEQUENTIAL);
    return m;
}

static int chunked_read(const mtx_chunk_job *job, const tessel_allocator *a,
                        tessel_tensor **out, tessel_diag *diag);

/* The text read in place through a private mapping where mmap allows
 * (issue 27 item 1: no copy from the page cache), else with pread. */
int mtx_chunked_read(const mtx_chunk_job *job, const tessel_allocator *a, tessel_tensor **out,
                     tessel_diag *diag)
{
    size_t len = 0;
    /* Only a general matrix's lines are read without a write (fast_lines):
     * chunk_line's NUL would copy every page of a private mapping (a .tns
     * or symmetric file read 0.27 -> 0.45 CPU s through one). */
    int fast = !job->tns && job->symmetry == SYM_GENERAL;
    unsigned char *map = fast ? map_text(job, &len) : NULL;
    if (!map)
        return chunked_read(job, a, out, diag);
    mtx_chunk_job mapped = *job;
    mapped.mem = map;
    mapped.in_place = 1;
    int rc = chunked_read(&mapped, a, out, diag);
    munmap(map, len);
    return rc;
}

/* Both passes over the chunks and the finishing sort and merge: the tensor,
 * or why not (see mtx_chunked.h). */
static int chunked_read(const mtx_chunk_job *job, const tessel_allocator *a, tessel_tensor **out,
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
    if ((!job->mem || job->in_place) && fstat(job->fd, &before) != 0)
        return MTX_CHUNKED_FALLBACK;
    int n = thread_count(job);
    chunk *ch = NULL;
    /* A general matrix has as many entries as the size line declares (or
     * the single-pass reader says why not): its arrays are allocated first
     * and filled by one pass where its rows allow, without row counters. */
    int direct = !job->tns && job->symmetry == SYM_GENERAL && job->entries <= most &&
                 mtx_direct_rows_rise(job, a);
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
        rc = mtx_direct_setup(job, ch, n, t, &ok, diag);
    if (!rc && ok) {
        chunk_run_pass(ch, n, PASS_DIRECT, NULL);
        rc = chunk_pass_status(ch, n, diag);
        if (rc == CHUNK_TURNED)
            rc = TESSEL_OK; /* not complete: passes 1 and 2 follow */
        complete = rc ? 0 : mtx_direct_complete(ch, n, t);
    }
    if (!rc && direct && !complete)
        rc = alloc_counters(job, a, ch, n, job->rows ? job->rows : 1, diag);
    if (!rc && !complete) {
        chunk_run_pass(ch, n, 1, NULL);
        rc = chunk_pass_status(ch, n, diag);
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
        chunk_run_pass(ch, n, 2, NULL);
        rc = chunk_pass_status(ch, n, diag);
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

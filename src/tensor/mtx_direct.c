/* The chunked reader's one pass over a general matrix whose rows never
 * decrease (issue 27): each thread writes its entries to its own run of
 * slots in file order and the starts of the rows it enters into the row
 * pointers, bounded by the first rows of its chunk and the next, so no row
 * counters are needed (docs/data.md, "Parsing"). */
#include <errno.h>
#include <string.h>

#include "mtx_chunk_internal.h"
#include "mtx_fastline.h"

/* Stores of the two chunks of a two-thread pass meet only in a file with
 * more entry lines than its size line declares (the pass then fails and
 * passes 1 and 2 write every slot again); as atomic stores, which are plain
 * moves on x86-64, that case is no data race. */
static inline void slot_store(uint32_t *idx, double *val, uint64_t dst, uint32_t j, double v)
{
    __atomic_store_n(&idx[dst], j, __ATOMIC_RELAXED);
    if (val)
        __atomic_store(&val[dst], &v, __ATOMIC_RELAXED);
}

/* PASS_DIRECT: entry (i, j, v) to the chunk's next slot, and the start of
 * every row after its last one up to i into the row pointers. */
static inline void direct_store(chunk *c, uint32_t i, uint32_t j, double v)
{
    tessel_tensor *t = c->t;
    uint64_t dst = c->reversed ? c->limit - 1 - c->stored : c->base + c->stored;
    for (uint64_t r = (uint64_t)c->last_row + 1; r <= i; r++)
        t->ptr[r] = c->reversed ? c->stored : dst;
    slot_store(t->idx[1], t->values, dst, j, v);
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
int mtx_direct_line(chunk *c, const char *p, const char *end)
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

/* fast_lines for PASS_DIRECT: mtx_direct_line's work, on the chunk's fields
 * kept in locals (the index stores could otherwise alias them); a line it
 * cannot place is left to mtx_direct_line. Returns where it stopped.
 * Always inlined, so that mtx_direct_fast compiles a loop of its own for
 * a pattern matrix, without the value's tests. */
static inline __attribute__((always_inline)) char *direct_loop(chunk *c, char *p,
                                                               const char *stop,
                                                               enum mtx_field field, int rev)
{
    const mtx_chunk_job *job = c->job;
    const uint64_t entries = job->entries, base = c->base, room = c->limit - c->base;
    const fast_form form = { job->rows, job->cols, field };
    uint64_t *restrict ptr = c->t->ptr;
    uint64_t stored = c->stored, lines = c->lines;
    /* entry `stored` goes to slot base + stored, or reversed top - stored */
    const uint64_t top = c->limit - 1;
    uint32_t *idx = c->t->idx[1];
    /* a pattern matrix has no values (alloc_tensor): no test in its loop */
    double *val = field != FIELD_PATTERN ? c->t->values : NULL;
    double v = 0;
    /* lines and stored rise together: one bound for both */
    const uint64_t left = lines < entries ? entries - lines : 0;
    const uint64_t free_slots = stored < room ? room - stored : 0;
    const uint64_t end = stored + (left < free_slots ? left : free_slots);
    uint32_t last_row = c->last_row, last_col = c->last_col, row_hi = c->row_hi;
    int strict = c->strict;
    uint32_t i, j;
    line_breaks nl = line_breaks_at(p, stop);
    char *e;
    while (stored < end && (e = line_break_next(&nl, p, stop)) &&
           stop - p >= FAST_TAIL && fast_line(p, e, stop, form, 0, &i, &j, &v) &&
           i >= last_row && i <= row_hi) {
        if (i != last_row) {
            for (uint64_t r = (uint64_t)last_row + 1; r <= i; r++)
                ptr[r] = rev ? stored : base + stored;
        } else if (stored && j <= last_col) {
            strict = 0;
        }
        if (!stored) {
            c->first_row = i;
            c->first_col = j;
        }
        slot_store(idx, val, rev ? top - stored : base + stored, j, v);
        last_row = i;
        last_col = j;
        stored++;
        p = e + 1;
    }
    c->lines = lines + (stored - c->stored);
    c->stored = stored;
    c->last_row = last_row;
    c->last_col = last_col;
    c->strict = strict;
    return p;
}

char *mtx_direct_fast(chunk *c, char *p, const char *stop)
{
    if (c->reversed)
        return c->job->field == FIELD_PATTERN ? direct_loop(c, p, stop, FIELD_PATTERN, 1)
                                              : direct_loop(c, p, stop, c->job->field, 1);
    if (c->job->field == FIELD_PATTERN)
        return direct_loop(c, p, stop, FIELD_PATTERN, 0);
    return direct_loop(c, p, stop, c->job->field, 0);
}

/* Whether the rows of the whole entry lines in the first BOUNDARY_WINDOW
 * bytes never decrease: a file whose rows fall early (a column-major
 * export) is not worth PASS_DIRECT's line count. 1 also when the bytes
 * cannot be read or the window cannot be allocated (pass 1 then says). */
int mtx_direct_rows_rise(const mtx_chunk_job *job, const tessel_allocator *a)
{
    uint64_t n = job->end - job->begin < BOUNDARY_WINDOW ? job->end - job->begin
                                                         : BOUNDARY_WINDOW;
    char *w = n ? tessel_alloc(a, (size_t)n) : NULL;
    if (!w || chunk_read_at(job, w, (size_t)n, job->begin)) {
        tessel_dealloc(a, w);
        return 1;
    }
    const char *p = w, *end = w + n, *nl;
    uint32_t last = 0, row;
    int rise = 1;
    while (rise && p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
        const char *q = p;
        if (!chunk_is_comment_or_blank(job, p, nl) &&
            read_window_index(&q, nl, TESSEL_MAX_DIM, &row)) {
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
    if (!n || chunk_read_at(job, w, n, lo))
        return -1;
    const char *end = memchr(w, '\n', n), *q = w;
    if (!end && n == sizeof(w))
        return -1; /* a long line: its index might be cut */
    end = end ? end : w + n;
    uint32_t row;
    if (chunk_is_comment_or_blank(job, w, end) || !read_window_index(&q, end, job->rows, &row))
        return -1;
    return row;
}

/* PASS_LINES for PASS_DIRECT on three threads or more: the lines of every
 * chunk after the first (ch[k].lines), counted in n equal pieces of the
 * text after the first chunk, one a thread. */
static int later_lines(const mtx_chunk_job *job, chunk *ch, int n, tessel_diag *diag)
{
    uint64_t from = ch[1].lo, span = job->end - from;
    for (int k = 0; k < n; k++) {
        ch[k].all = ch;
        ch[k].n_all = n;
        ch[k].piece_lo = from + span / (uint64_t)n * (uint64_t)k;
        ch[k].piece_hi = k + 1 < n ? from + span / (uint64_t)n * (uint64_t)(k + 1) : job->end;
    }
    chunk_run_pass(ch, n, PASS_LINES, NULL);
    int rc = chunk_pass_status(ch, n, diag);
    if (rc)
        return rc;
    char last = '\n';
    if (job->end > job->begin && chunk_read_at(job, &last, 1, job->end - 1))
        return tessel_diag_set(diag, TESSEL_EIO, job->name, 0, 0, NULL, "read failed: %s",
                               strerror(errno));
    for (int k = 1; k < n; k++) {
        ch[k].lines = 0;
        for (int r = 0; r < n; r++)
            ch[k].lines += ch[r].nl_in[k];
        /* a last line without a break, in the chunk that ends the text */
        ch[k].lines += ch[k].hi == job->end && ch[k].lo < ch[k].hi && last != '\n';
    }
    return TESSEL_OK;
}

/* PASS_DIRECT's slots and bounds: chunk k's entries fill [base, limit) in
 * file order, after those of the chunks before it, from the lines of the
 * chunks after it (later_lines); on two threads the second chunk instead
 * fills the slots from the last one down (reversed) and the first from
 * slot 0 up, so no line is counted (issue 27: the count read half the text
 * once more, 14 % of a pattern parse's CPU). A chunk's rows run from the
 * first row of its first line (row 0 for the first chunk) to that of the
 * next chunk, so that the chunks write disjoint row pointers. 1 when the
 * pass can run; 0 when the lines exceed the entries or a chunk does not
 * start with an entry line, or the first rows fall (passes 1 and 2 then
 * read the file). */
int mtx_direct_setup(const mtx_chunk_job *job, chunk *ch, int n, tessel_tensor *t, int *ok,
                     tessel_diag *diag)
{
    *ok = 0;
    int two = n == 2;
    if (n > 2) {
        int rc = later_lines(job, ch, n, diag);
        if (rc)
            return rc;
    }
    uint64_t end = job->entries, hi = job->rows ? job->rows - 1 : 0;
    for (int k = n - 1; k >= 0; k--) {
        uint64_t lines = k && !two ? ch[k].lines : end;
        if (lines > end)
            return TESSEL_OK; /* more lines than entries: pass 1, then 2 */
        ch[k].base = end - lines;
        ch[k].limit = end;
        end -= two ? 0 : lines; /* two: both may fill [0, entries) */
        ch[k].reversed = two && k == 1;
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

/* After a two-thread PASS_DIRECT: when both chunks read all their lines
 * and their entries fill the slots exactly, the reversed chunk's slots
 * (the last `stored`) put back in file order and its row starts made
 * absolute; then it is an ordinary chunk after the first. 0 otherwise. */
static int unreverse(chunk *ch, tessel_tensor *t)
{
    chunk *c = &ch[1];
    if (ch[0].status || c->status || ch[0].stored + c->stored != c->limit)
        return 0;
    uint64_t base = c->limit - c->stored;
    uint32_t *idx = t->idx[1];
    for (uint64_t a = base, b = c->limit; b > a + 1; a++) {
        uint32_t x = idx[a];
        idx[a] = idx[--b];
        idx[b] = x;
    }
    for (uint64_t a = base, b = c->limit; t->values && b > a + 1; a++) {
        double x = t->values[a];
        t->values[a] = t->values[--b];
        t->values[b] = x;
    }
    for (uint64_t r = (uint64_t)c->row_lo + 1; c->stored && r <= c->last_row; r++)
        t->ptr[r] += base;
    c->base = base;
    c->reversed = 0;
    ch[0].limit = base;
    return 1;
}

/* After PASS_DIRECT: 0 unless every chunk filled its slots exactly (rows
 * that never decrease, also from one chunk to the next: the entries are
 * then the rows' in file order, and no other pass is needed), and then
 * the row pointers the chunks did not write, those of the rows up to each
 * chunk's first (its start) and after the last chunk's last row (the
 * end). 2 when the columns also rise strictly within every row: no row
 * needs sorting and no entry is a duplicate. 0 too if a row holds 2^32
 * entries or more, as row_pointers refuses. A reversed chunk is first put
 * in order (unreverse). */
int mtx_direct_complete(chunk *ch, int n, tessel_tensor *t)
{
    if (n == 2 && ch[1].reversed && !unreverse(ch, t))
        return 0;
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


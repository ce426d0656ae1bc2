/* FROSTT .tns reader: one nonzero per line, N 1-based coordinates then the
 * value, separated by blanks. Lines starting with '#' (or '%') are comments.
 * The order comes from the first entry line; each mode's extent is its
 * largest coordinate. */
#include <stdio.h>
#include <string.h>

#include "builder_internal.h"
#include "mtx_chunked.h"
#include "textio.h"
#include "tessel/tensor.h"

static int tns_error(const text_reader *r, int code, const char *field, tessel_diag *diag,
                     const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int tns_error(const text_reader *r, int code, const char *field, tessel_diag *diag,
                     const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tessel_diag_vset(diag, code, r->name, r->line, 0, field, fmt, ap);
    va_end(ap);
    return rc;
}

static int next_entry_line(text_reader *r, char **line, size_t *len, tessel_diag *diag)
{
    for (;;) {
        int rc = text_reader_next(r, line, len, diag);
        if (rc <= 0)
            return rc;
        const char *p = *line, *end = *line + *len;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p == end || *p == '#' || *p == '%')
            continue;
        return 1;
    }
}

/* Number of blank-separated fields on the line. */
static unsigned count_fields(const char *p, const char *end)
{
    unsigned n = 0;
    char word[2];
    while (scan_word(&p, end, word, sizeof(word)) == SCAN_OK)
        n++;
    return n;
}

static int parse_entry(text_reader *r, const char *line, size_t len, unsigned order,
                       uint32_t *coords, double *value, tessel_diag *diag)
{
    const char *p = line, *end = line + len;
    for (unsigned m = 0; m < order; m++) {
        uint64_t v = 0;
        int rc = scan_u64(&p, end, &v);
        if (rc == SCAN_NONE)
            return tns_error(r, TESSEL_EPARSE, "index", diag,
                             "entry has %u fields, expected %u (%u indices and a value)", m,
                             order + 1, order);
        if (rc == SCAN_BAD && count_fields(line, end) != order + 1)
            return tns_error(r, TESSEL_EPARSE, NULL, diag,
                             "entry has %u fields, expected %u (%u indices and a value, as on "
                             "the first entry line)",
                             count_fields(line, end), order + 1, order);
        if (rc == SCAN_BAD)
            return tns_error(r, TESSEL_EPARSE, "index", diag,
                             "index %u is not a positive integer", m + 1);
        if (rc == SCAN_OVERFLOW || v > TESSEL_MAX_DIM)
            return tns_error(r, TESSEL_ERANGE, "index", diag,
                             "index %u exceeds tessel's limit of %llu per mode", m + 1,
                             (unsigned long long)TESSEL_MAX_DIM);
        if (v == 0)
            return tns_error(r, TESSEL_EPARSE, "index", diag,
                             "index %u is 0: .tns coordinates start at 1", m + 1);
        coords[m] = (uint32_t)(v - 1);
    }
    int rc = scan_double(&p, end, value);
    if (rc == SCAN_NONE)
        return tns_error(r, TESSEL_EPARSE, "value", diag,
                         "entry has %u fields, expected %u (%u indices and a value)", order,
                         order + 1, order);
    if (rc != SCAN_OK)
        return tns_error(r, TESSEL_EPARSE, "value", diag, "value is not a %snumber",
                         rc == SCAN_OVERFLOW ? "finite " : "");
    if (!scan_at_end(p, end))
        return tns_error(r, TESSEL_EPARSE, NULL, diag,
                         "entry has more than %u fields (%u indices and a value, as on the "
                         "first entry line)",
                         order + 1, order);
    return TESSEL_OK;
}

/* Row-blocked reading (tessel_tns_read_rows, tessel_tns_row_counts), as
 * mtx.c's row filter: keep only the entries whose first coordinate lies in
 * [lo, hi), or only count the entries of every row into counts (grown as
 * rows appear, since a .tns file declares no extents). */
typedef struct tns_filter {
    uint64_t lo, hi;
    uint64_t reserve;  /* entries to reserve room for (the caller's count) */
    int counting;      /* counting pass: no tensor is built */
    uint64_t *counts;  /* counts[cap] */
    uint64_t cap;
    tessel_entry_sink emit; /* tessel_tns_for_each_entry: every entry to emit */
    void *ctx;
    unsigned order;    /* out: the file's order */
    uint64_t dims[TESSEL_MAX_ORDER]; /* out, counting: the extents */
} tns_filter;

/* counts[row]++, growing counts (zeroed) to hold the row. */
static int count_row(text_reader *r, tns_filter *f, const tessel_allocator *a, uint32_t row,
                     tessel_diag *diag)
{
    if (row >= f->cap) {
        uint64_t cap = f->cap ? f->cap : 1024;
        while (cap <= row)
            cap *= 2;
        uint64_t *grown = tessel_alloc_array(a, cap, sizeof(uint64_t));
        if (!grown)
            return tessel_diag_oom(diag, r->name, "counting the entries of every row",
                                   (size_t)(cap * sizeof(uint64_t)));
        if (f->cap)
            memcpy(grown, f->counts, f->cap * sizeof(uint64_t));
        memset(grown + f->cap, 0, (cap - f->cap) * sizeof(uint64_t));
        tessel_dealloc(a, f->counts);
        f->counts = grown;
        f->cap = cap;
    }
    f->counts[row]++;
    return TESSEL_OK;
}

/* The entries through mtx_chunked.c when the input allows (uncompressed,
 * parse_threads >= 0): it reads the whole text with pread from its start
 * (the comments before the first entry are skipped there too) and leaves
 * r where it is, so MTX_CHUNKED_FALLBACK goes on with the single-pass
 * reader from the first entry line, which reports any error. */
static int tns_read_chunked(text_reader *r, const tessel_load_options *opt, unsigned order,
                            const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    if ((opt && opt->parse_threads < 0) || r->gz || (r->fd < 0 && !r->mem))
        return MTX_CHUNKED_FALLBACK;
    mtx_chunk_job job;
    memset(&job, 0, sizeof(job));
    job.name = r->name;
    job.fd = r->fd;
    job.mem = r->mem;
    job.begin = 0;
    job.end = r->source_bytes;
    job.entries = UINT64_MAX;
    job.field = FIELD_REAL;
    job.symmetry = SYM_GENERAL;
    job.threads = opt ? opt->parse_threads : 0;
    job.flags = opt && opt->drop_zeros ? TESSEL_BUILD_DROP_ZEROS : 0;
    job.tns = 1;
    job.order = order;
    int rc = mtx_chunked_read(&job, a, out, diag);
    if (rc < 0 && diag && !diag->file[0])
        tessel_diag_set_file(diag, r->name);
    return rc;
}

/* The tensor of a .tns text (through f, when not NULL, only some rows or
 * only the row counts); the chunked reader first when it may. */
static int tns_read(text_reader *r, const tessel_load_options *opt, tns_filter *f,
                    const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    char *line;
    size_t len;
    int rc = next_entry_line(r, &line, &len, diag);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (r->line == 0)
            r->line = 1;
        return tns_error(r, TESSEL_EPARSE, NULL, diag, "empty file: no tensor entries");
    }
    unsigned fields = count_fields(line, line + len);
    if (fields < 2 || fields > TESSEL_MAX_ORDER + 1)
        return tns_error(r, TESSEL_EPARSE, NULL, diag,
                         "first entry has %u fields; a .tns line holds 1 to %u indices and a "
                         "value",
                         fields, TESSEL_MAX_ORDER);
    unsigned order = fields - 1;
    rc = f ? MTX_CHUNKED_FALLBACK : tns_read_chunked(r, opt, order, a, out, diag);
    if (rc != MTX_CHUNKED_FALLBACK)
        return rc;
    if (f)
        f->order = order;
    uint64_t dims[TESSEL_MAX_ORDER], maxc[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < order; m++) {
        dims[m] = TESSEL_MAX_DIM;
        maxc[m] = 0;
    }
    tessel_coo_builder *b = NULL;
    rc = f && (f->counting || f->emit) ? TESSEL_OK
                                       : tessel_coo_builder_create(order, dims, 1, a, &b, diag);
    if (!rc && f && f->reserve && tessel_coo_builder_reserve(b, f->reserve) != TESSEL_OK)
        rc = tns_error(r, TESSEL_ENOMEM, NULL, diag, "out of memory while reserving room for "
                       "%llu entries (asked for %llu bytes)", (unsigned long long)f->reserve,
                       (unsigned long long)tensor_builder_grow_bytes(b, f->reserve));
    if (rc) {
        tessel_coo_builder_free(&b);
        if (diag)
            tessel_diag_set_file(diag, r->name);
        return rc;
    }
    uint64_t count = 0;
    do {
        uint32_t coords[TESSEL_MAX_ORDER];
        double value;
        if ((rc = parse_entry(r, line, len, order, coords, &value, diag)))
            break;
        for (unsigned m = 0; m < order; m++)
            if (coords[m] + 1ull > maxc[m])
                maxc[m] = coords[m] + 1ull;
        if (f && f->counting) {
            if ((rc = count_row(r, f, a, coords[0], diag)))
                break;
            continue;
        }
        if (f && f->emit) {
            if ((rc = f->emit(f->ctx, coords, value)))
                break;
            continue;
        }
        if (f && (coords[0] < f->lo || coords[0] >= f->hi))
            continue;
        if (tessel_coo_builder_add(b, coords, value) != TESSEL_OK) {
            rc = tns_error(r, TESSEL_ENOMEM, NULL, diag, "out of memory while storing the "
                           "entries after %llu of them (asked for %llu bytes)",
                           (unsigned long long)count,
                           (unsigned long long)tensor_builder_grow_bytes(b, 0));
            break;
        }
        count++;
    } while ((rc = next_entry_line(r, &line, &len, diag)) > 0);
    if (rc == 0 && f && (f->counting || f->emit)) {
        memcpy(f->dims, maxc, sizeof(maxc));
    } else if (rc == 0) {
        tessel_coo_builder_set_dims(b, maxc);
        rc = tessel_coo_builder_finish(b, opt && opt->drop_zeros ? TESSEL_BUILD_DROP_ZEROS : 0,
                                       out, diag);
        if (rc && diag && !diag->file[0])
            tessel_diag_set_file(diag, r->name);
    }
    tessel_coo_builder_free(&b);
    return rc;
}

/* Reads the file at path, through f when not NULL. */
static int read_path(const char *path, const tessel_load_options *opt, tns_filter *f,
                     const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    text_reader r;
    int rc = text_reader_open_file(&r, path, a, diag);
    if (rc)
        return rc;
    rc = tns_read(&r, opt, f, a, out, diag);
    text_reader_close(&r);
    if (rc && diag && !diag->file[0])
        tessel_diag_set_file(diag, path);
    return rc;
}

int tessel_tensor_read_tns(const char *path, const tessel_load_options *opt,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    return read_path(path, opt, NULL, a, out, diag);
}

int tessel_tensor_parse_tns(const char *name, const void *data, size_t size,
                            const tessel_load_options *opt, const tessel_allocator *a,
                            tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    text_reader r;
    text_reader_open_memory(&r, name, data, size, a);
    int rc = tns_read(&r, opt, NULL, a, out, diag);
    text_reader_close(&r);
    return rc;
}

/* Reads the file at path through f; with `matrix`, a file of other than
 * two modes is refused (the entry walk serves the 2-mode spill). */
static int read_filtered(const char *path, const tessel_load_options *opt, tns_filter *f,
                         int matrix, const tessel_allocator *a, tessel_tensor **out,
                         tessel_diag *diag)
{
    int rc = read_path(path, opt, f, a, out, diag);
    if (!rc && matrix && f->order != 2) {
        if (out)
            tessel_tensor_free(out);
        rc = tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, NULL,
                             "%u modes: this entry walk takes a matrix (2 modes)", f->order);
    }
    return rc;
}

int tessel_tns_read_rows(const char *path, const tessel_load_options *opt, uint64_t row_begin,
                         uint64_t row_end, uint64_t reserve, const tessel_allocator *a,
                         tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    tns_filter f;
    memset(&f, 0, sizeof(f));
    f.lo = row_begin;
    f.hi = row_end;
    f.reserve = reserve;
    return read_filtered(path, opt, &f, 0, a, out, diag);
}

int tessel_tns_row_counts(const char *path, const tessel_load_options *opt,
                          const tessel_allocator *a, unsigned *order, uint64_t *dims,
                          uint64_t **counts, tessel_diag *diag)
{
    *counts = NULL;
    tns_filter f;
    memset(&f, 0, sizeof(f));
    f.counting = 1;
    int rc = read_filtered(path, opt, &f, 0, a, NULL, diag);
    if (rc) {
        tessel_dealloc(a, f.counts);
        return rc;
    }
    /* counts[dims[0]] exactly (rows past the last entry's are empty) */
    uint64_t *exact = tessel_alloc_array(a, f.dims[0] ? f.dims[0] : 1, sizeof(uint64_t));
    if (!exact) {
        tessel_dealloc(a, f.counts);
        return tessel_diag_oom(diag, path, "counting the entries of every row",
                               (size_t)(f.dims[0] * sizeof(uint64_t)));
    }
    if (f.dims[0])
        memcpy(exact, f.counts, f.dims[0] * sizeof(uint64_t));
    tessel_dealloc(a, f.counts);
    *order = f.order;
    memcpy(dims, f.dims, f.order * sizeof(uint64_t));
    *counts = exact;
    return TESSEL_OK;
}

int tessel_tns_for_each_entry(const char *path, const tessel_load_options *opt,
                              const tessel_allocator *a, tessel_entry_sink emit, void *ctx,
                              tessel_entry_info *info, tessel_diag *diag)
{
    tns_filter f;
    memset(&f, 0, sizeof(f));
    f.emit = emit;
    f.ctx = ctx;
    int rc = read_filtered(path, opt, &f, 1, a, NULL, diag);
    if (rc)
        return rc;
    memset(info, 0, sizeof(*info));
    info->order = f.order;
    memcpy(info->dims, f.dims, sizeof(f.dims));
    info->has_values = 1;
    strcpy(info->field, "real");
    strcpy(info->symmetry, "general");
    return TESSEL_OK;
}

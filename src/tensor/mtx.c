/* Matrix Market coordinate reader (plain or gzipped, or from memory).
 *
 * Accepted: object `matrix`; format `coordinate` (`array` is refused with a
 * message: it is dense and tessel models sparse data); field `real` (also
 * `double`), `integer`, `pattern`, `complex` (kept as magnitude, or refused
 * with TESSEL_COMPLEX_REJECT); symmetry `general`, `symmetric`,
 * `skew-symmetric`, `hermitian`, expanded to the full pattern.
 * Duplicates are summed; explicit zeros are kept unless drop_zeros. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "builder_internal.h"
#include "csr_stream.h"
#include "mtx_chunked.h"
#include "textio.h"
#include "tessel/tensor.h"


typedef struct mtx_header {
    enum mtx_field field;
    enum mtx_symmetry symmetry;
    char field_name[16];
    char symmetry_name[16];
    uint64_t rows, cols, entries;
    uint64_t size_line;
} mtx_header;

/* The shortest entry line, "1 1\n". */
#define MTX_MIN_ENTRY_BYTES 4u

/* Row-blocked reading (tessel_mtx_read_rows, tessel_mtx_row_counts): keep
 * only the entries whose row (after symmetric expansion) lies in [lo, hi),
 * or only count the entries of every row into counts[rows]. */
typedef struct row_filter {
    uint64_t lo, hi;
    uint64_t reserve; /* entries to reserve room for (the caller's count) */
    uint64_t *counts; /* counting pass: no tensor is built */
    tessel_entry_sink emit; /* tessel_mtx_for_each_entry: every entry to emit */
    void *ctx;
    csr_stream *stream; /* the whole matrix, built in place (csr_stream.h) */
} row_filter;

static int parse_error(const text_reader *r, const char *field, tessel_diag *diag,
                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int parse_error(const text_reader *r, const char *field, tessel_diag *diag,
                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tessel_diag_vset(diag, TESSEL_EPARSE, r->name, r->line, 0, field, fmt, ap);
    va_end(ap);
    return rc;
}

/* Next line that is neither blank nor a % comment; 0 at end of input. */
static int next_content_line(text_reader *r, char **line, size_t *len, tessel_diag *diag)
{
    for (;;) {
        int rc = text_reader_next(r, line, len, diag);
        if (rc <= 0)
            return rc;
        const char *p = *line, *end = *line + *len;
        if (p < end && (unsigned)(*p - '0') < 10u)
            return 1; /* a line starting with a digit (nearly all) at once */
        if (scan_at_end(p, end))
            continue;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (*p == '%')
            continue;
        return 1;
    }
}

static int banner_word(const text_reader *r, const char **p, const char *end, const char *what,
                       const char *expected, char *word, size_t cap, tessel_diag *diag)
{
    if (scan_word(p, end, word, cap) != SCAN_OK)
        return parse_error(r, what, diag, "Matrix Market banner lacks the %s (expected %s)",
                           what, expected);
    for (char *c = word; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    return TESSEL_OK;
}

/* The %%MatrixMarket banner: object, format, field and symmetry, each checked. */
static int parse_banner(text_reader *r, const tessel_load_options *opt, mtx_header *h,
                        tessel_diag *diag)
{
    char *line;
    size_t len;
    int rc = text_reader_next(r, &line, &len, diag);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        r->line = 1;
        return parse_error(r, NULL, diag, "empty file (expected a '%%%%MatrixMarket' banner)");
    }
    const char *p = line, *end = line + len;
    if (len < 14 || strncasecmp(line, "%%MatrixMarket", 14) != 0)
        return parse_error(r, "banner", diag,
                           "not a Matrix Market file: the first line must be '%%%%MatrixMarket "
                           "matrix coordinate <field> <symmetry>'");
    p += 14;
    char object[32], format[32], field[32], symmetry[32];
    if ((rc = banner_word(r, &p, end, "object", "'matrix'", object, sizeof(object), diag)) ||
        (rc = banner_word(r, &p, end, "format", "'coordinate'", format, sizeof(format), diag)) ||
        (rc = banner_word(r, &p, end, "field", "real, integer, pattern or complex", field,
                          sizeof(field), diag)) ||
        (rc = banner_word(r, &p, end, "symmetry",
                          "general, symmetric, skew-symmetric or hermitian", symmetry,
                          sizeof(symmetry), diag)))
        return rc;
    if (strcmp(object, "matrix") != 0)
        return parse_error(r, "object", diag,
                           "unsupported Matrix Market object '%s' (tessel reads 'matrix')", object);
    if (strcmp(format, "array") == 0)
        return parse_error(r, "format", diag,
                           "Matrix Market 'array' (dense) format is not supported: tessel models "
                           "sparse data; convert the file to 'coordinate' format");
    if (strcmp(format, "coordinate") != 0)
        return parse_error(r, "format", diag,
                           "unknown Matrix Market format '%s' (expected 'coordinate')", format);
    if (strcmp(field, "real") == 0 || strcmp(field, "double") == 0)
        h->field = FIELD_REAL;
    else if (strcmp(field, "integer") == 0)
        h->field = FIELD_INTEGER;
    else if (strcmp(field, "pattern") == 0)
        h->field = FIELD_PATTERN;
    else if (strcmp(field, "complex") == 0)
        h->field = FIELD_COMPLEX;
    else
        return parse_error(r, "field", diag,
                           "unknown Matrix Market field '%s' (expected real, integer, pattern or "
                           "complex)",
                           field);
    if (strcmp(symmetry, "general") == 0)
        h->symmetry = SYM_GENERAL;
    else if (strcmp(symmetry, "symmetric") == 0)
        h->symmetry = SYM_SYMMETRIC;
    else if (strcmp(symmetry, "skew-symmetric") == 0)
        h->symmetry = SYM_SKEW;
    else if (strcmp(symmetry, "hermitian") == 0)
        h->symmetry = SYM_HERMITIAN;
    else
        return parse_error(r, "symmetry", diag,
                           "unknown Matrix Market symmetry '%s' (expected general, symmetric, "
                           "skew-symmetric or hermitian)",
                           symmetry);
    if (!scan_at_end(p, end))
        return parse_error(r, "banner", diag, "unexpected text after the symmetry in the banner");
    if (h->field == FIELD_COMPLEX && opt->complex_policy == TESSEL_COMPLEX_REJECT)
        return parse_error(r, "field", diag,
                           "complex matrices are rejected (--complex=reject); use "
                           "--complex=magnitude to keep |value|");
    if (h->symmetry == SYM_HERMITIAN && h->field != FIELD_COMPLEX)
        return parse_error(r, "symmetry", diag, "'hermitian' symmetry requires a complex field");
    if (h->symmetry == SYM_SKEW && h->field == FIELD_PATTERN)
        return parse_error(r, "symmetry", diag,
                           "'skew-symmetric' symmetry cannot have a pattern field");
    strcpy(h->field_name, h->field == FIELD_REAL      ? "real"
                          : h->field == FIELD_INTEGER ? "integer"
                          : h->field == FIELD_PATTERN ? "pattern"
                                                      : "complex");
    strcpy(h->symmetry_name, symmetry);
    return TESSEL_OK;
}

static int size_number(text_reader *r, const char **p, const char *end, const char *what,
                       uint64_t *out, tessel_diag *diag)
{
    int rc = scan_u64(p, end, out);
    if (rc == SCAN_NONE)
        return parse_error(r, "size", diag,
                           "size line must hold three integers: rows, columns, entries (the %s "
                           "is missing)",
                           what);
    if (rc == SCAN_OVERFLOW)
        return parse_error(r, "size", diag, "the %s on the size line is too large", what);
    if (rc != SCAN_OK)
        return parse_error(r, "size", diag,
                           "the %s on the size line is not a non-negative integer", what);
    return TESSEL_OK;
}

static int parse_size_line(text_reader *r, mtx_header *h, tessel_diag *diag)
{
    char *line;
    size_t len;
    int rc = next_content_line(r, &line, &len, diag);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return parse_error(r, "size", diag, "file ends before the size line (rows cols entries)");
    const char *p = line, *end = line + len;
    if ((rc = size_number(r, &p, end, "row count", &h->rows, diag)) ||
        (rc = size_number(r, &p, end, "column count", &h->cols, diag)) ||
        (rc = size_number(r, &p, end, "entry count", &h->entries, diag)))
        return rc;
    if (!scan_at_end(p, end))
        return parse_error(r, "size", diag,
                           "size line must hold exactly three integers: rows, columns, entries");
    h->size_line = r->line;
    if (h->rows > TESSEL_MAX_DIM || h->cols > TESSEL_MAX_DIM)
        return tessel_diag_set(diag, TESSEL_ERANGE, r->name, r->line, 0, "size",
                               "matrix of %llu x %llu exceeds tessel's limit of %llu per "
                               "dimension",
                               (unsigned long long)h->rows, (unsigned long long)h->cols,
                               (unsigned long long)TESSEL_MAX_DIM);
    if (h->symmetry != SYM_GENERAL && h->rows != h->cols)
        return parse_error(r, "size", diag, "a %s matrix must be square, not %llu x %llu",
                           h->symmetry_name, (unsigned long long)h->rows,
                           (unsigned long long)h->cols);
    if (h->entries > h->rows * h->cols)
        return parse_error(r, "size", diag,
                           "%llu entries declared for a %llu x %llu matrix, which has only %llu "
                           "positions",
                           (unsigned long long)h->entries, (unsigned long long)h->rows,
                           (unsigned long long)h->cols,
                           (unsigned long long)(h->rows * h->cols));
    return TESSEL_OK;
}

static int entry_index(text_reader *r, const char **p, const char *end, const char *what,
                       uint64_t limit, uint32_t *out, tessel_diag *diag)
{
    uint64_t v = 0;
    int rc = scan_u64(p, end, &v);
    if (rc == SCAN_NONE)
        return parse_error(r, what, diag, "entry lacks its %s index", what);
    if (rc == SCAN_BAD)
        return parse_error(r, what, diag, "%s index is not a positive integer", what);
    if (rc == SCAN_OVERFLOW)
        return parse_error(r, what, diag, "%s index is too large (the matrix has %llu)", what,
                           (unsigned long long)limit);
    if (v > limit)
        return parse_error(r, what, diag, "%s index %llu is out of range 1..%llu", what,
                           (unsigned long long)v, (unsigned long long)limit);
    if (v == 0)
        return parse_error(r, what, diag,
                           "%s index 0 is invalid: Matrix Market indices start at 1", what);
    *out = (uint32_t)(v - 1);
    return TESSEL_OK;
}

static int entry_value(text_reader *r, const char **p, const char *end, const mtx_header *h,
                       double *value, tessel_diag *diag)
{
    if (h->field == FIELD_PATTERN) {
        *value = 1.0;
        return TESSEL_OK;
    }
    int rc;
    if (h->field == FIELD_INTEGER) {
        int64_t iv = 0;
        rc = scan_i64(p, end, &iv);
        if (rc == SCAN_OK) {
            *value = (double)iv;
            return TESSEL_OK;
        }
        if (rc == SCAN_NONE)
            return parse_error(r, "value", diag, "entry lacks its value (the field is integer)");
        return parse_error(r, "value", diag, "value is not %s integer",
                           rc == SCAN_OVERFLOW ? "a 64-bit" : "an");
    }
    double re = 0, im = 0;
    rc = scan_double(p, end, &re);
    if (rc == SCAN_NONE)
        return parse_error(r, "value", diag, "entry lacks its value (the field is %s)",
                           h->field_name);
    if (rc != SCAN_OK)
        return parse_error(r, "value", diag, "value is not a %snumber",
                           rc == SCAN_OVERFLOW ? "finite " : "");
    if (h->field == FIELD_COMPLEX) {
        rc = scan_double(p, end, &im);
        if (rc == SCAN_NONE)
            return parse_error(r, "value", diag, "complex entry lacks its imaginary part");
        if (rc != SCAN_OK)
            return parse_error(r, "value", diag, "imaginary part is not a number");
        re = hypot(re, im);
    }
    *value = re;
    return TESSEL_OK;
}

static int add_entry(text_reader *r, tessel_coo_builder *b, const row_filter *f, uint32_t i,
                     uint32_t j, double v, tessel_diag *diag)
{
    if (f && f->stream) {
        if (csr_stream_add(f->stream, i, j, v) != TESSEL_OK)
            return tessel_diag_set(diag, TESSEL_ENOMEM, r->name, r->line, 0, NULL,
                                   "out of memory while storing the entries after %llu of them "
                                   "(asked for %llu bytes)",
                                   (unsigned long long)f->stream->count,
                                   (unsigned long long)csr_stream_grow_bytes(f->stream));
        return TESSEL_OK;
    }
    if (f && f->counts) {
        f->counts[i]++;
        return TESSEL_OK;
    }
    if (f && f->emit) {
        uint32_t c[2] = { i, j };
        int rc = f->emit(f->ctx, c, v);
        if (rc && diag && !diag->file[0])
            tessel_diag_set_file(diag, r->name);
        return rc;
    }
    if (f && (i < f->lo || i >= f->hi))
        return TESSEL_OK;
    uint32_t c[2] = { i, j };
    if (tessel_coo_builder_add(b, c, v) != TESSEL_OK)
        return tessel_diag_set(diag, TESSEL_ENOMEM, r->name, r->line, 0, NULL,
                               "out of memory while storing the entries after %llu of them "
                               "(asked for %llu bytes)",
                               (unsigned long long)tessel_coo_builder_count(b),
                               (unsigned long long)tensor_builder_grow_bytes(b, 0));
    return TESSEL_OK;
}

static int read_entries(text_reader *r, const mtx_header *h, tessel_coo_builder *b,
                        const row_filter *f, tessel_diag *diag)
{
    uint64_t seen = 0;
    char *line;
    size_t len;
    int rc;
    while ((rc = next_content_line(r, &line, &len, diag)) > 0) {
        if (seen == h->entries)
            return parse_error(r, NULL, diag,
                               "more entries than the %llu declared on the size line (line "
                               "%llu)",
                               (unsigned long long)h->entries, (unsigned long long)h->size_line);
        const char *p = line, *end = line + len;
        uint32_t i = 0, j = 0;
        double v = 0;
        /* A well-formed line of a real, integer or pattern matrix the fast
         * way (as the chunked reader reads it, the same values); anything
         * else, and so every error and its message, the careful way. */
        if (!(h->field != FIELD_COMPLEX && scan_index_padded(&p, end, h->rows, &i) &&
              scan_index_padded(&p, end, h->cols, &j) && mtx_scan_value(&p, end, h->field, &v) &&
              (p == end || scan_at_end(p, end)))) {
            p = line;
            if ((rc = entry_index(r, &p, end, "row", h->rows, &i, diag)) ||
                (rc = entry_index(r, &p, end, "column", h->cols, &j, diag)) ||
                (rc = entry_value(r, &p, end, h, &v, diag)))
                return rc;
            if (!scan_at_end(p, end))
                return parse_error(r, NULL, diag, "unexpected extra field after the %s",
                                   h->field == FIELD_PATTERN
                                       ? "column index (the field is pattern)"
                                       : "value");
        }
        if (h->symmetry == SYM_SKEW && i == j)
            return parse_error(r, NULL, diag,
                               "skew-symmetric matrices have no diagonal entries (row = column "
                               "= %u)",
                               i + 1);
        if ((rc = add_entry(r, b, f, i, j, v, diag)))
            return rc;
        if (h->symmetry != SYM_GENERAL && i != j &&
            (rc = add_entry(r, b, f, j, i, h->symmetry == SYM_SKEW ? -v : v, diag)))
            return rc;
        seen++;
    }
    if (rc < 0)
        return rc;
    if (seen < h->entries)
        return parse_error(r, NULL, diag,
                           "file ends after %llu of the %llu entries declared on line %llu (is "
                           "it truncated?)",
                           (unsigned long long)seen, (unsigned long long)h->entries,
                           (unsigned long long)h->size_line);
    return TESSEL_OK;
}

/* The entries through mtx_chunked.c when the input allows (uncompressed,
 * not complex, parse_threads >= 0); MTX_CHUNKED_FALLBACK leaves r just after
 * the size line for the single-pass reader (mtx_chunked.c reads with
 * pread, never moving r). */
static int mtx_read_chunked(text_reader *r, const tessel_load_options *opt, const mtx_header *h,
                            const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    if (opt->parse_threads < 0 || r->gz || (r->fd < 0 && !r->mem) ||
        h->field == FIELD_COMPLEX)
        return MTX_CHUNKED_FALLBACK;
    mtx_chunk_job job;
    memset(&job, 0, sizeof(job));
    job.name = r->name;
    job.fd = r->fd;
    job.mem = r->mem;
    job.begin = r->bytes_read - (r->len - r->pos);
    job.end = r->source_bytes;
    if (job.begin > job.end)
        return MTX_CHUNKED_FALLBACK;
    job.rows = h->rows;
    job.cols = h->cols;
    job.entries = h->entries;
    job.field = h->field;
    job.symmetry = h->symmetry;
    job.threads = opt->parse_threads;
    job.flags = opt->drop_zeros ? TESSEL_BUILD_DROP_ZEROS : 0;
    int rc = mtx_chunked_read(&job, a, out, diag);
    if (rc == TESSEL_OK) {
        strcpy((*out)->field, h->field_name);
        strcpy((*out)->symmetry, h->symmetry_name);
    } else if (rc < 0 && diag && !diag->file[0]) {
        tessel_diag_set_file(diag, r->name);
    }
    return rc;
}

/* The rows f selects (a tensor with the file's dims holding only them), or
 * with f->counts the entries per row and no tensor. */
static int mtx_read_filtered(text_reader *r, const tessel_load_options *opt,
                             const mtx_header *h, const row_filter *f, const tessel_allocator *a,
                             tessel_tensor **out, tessel_diag *diag)
{
    uint64_t dims[2] = { h->rows, h->cols };
    tessel_coo_builder *b = NULL;
    int rc = TESSEL_OK;
    if (f->counts || f->emit) {
        if (f->counts)
            memset(f->counts, 0, (size_t)(h->rows * sizeof(uint64_t)));
        return read_entries(r, h, NULL, f, diag);
    }
    rc = tessel_coo_builder_create(2, dims, h->field != FIELD_PATTERN, a, &b, diag);
    if (!rc && f->reserve && tessel_coo_builder_reserve(b, f->reserve) != TESSEL_OK)
        rc = tessel_diag_set(diag, TESSEL_ENOMEM, r->name, r->line, 0, NULL,
                             "out of memory while reserving room for %llu entries (asked for "
                             "%llu bytes)", (unsigned long long)f->reserve,
                             (unsigned long long)tensor_builder_grow_bytes(b, f->reserve));
    if (!rc)
        rc = read_entries(r, h, b, f, diag);
    if (!rc)
        rc = tessel_coo_builder_finish(b, opt->drop_zeros ? TESSEL_BUILD_DROP_ZEROS : 0, out,
                                       diag);
    tessel_coo_builder_free(&b);
    if (!rc) {
        strcpy((*out)->field, h->field_name);
        strcpy((*out)->symmetry, h->symmetry_name);
    }
    return rc;
}

/* The banner and the size line, with the default options when *opt is
 * NULL (*opt then points at defaults). */
static int read_header(text_reader *r, const tessel_load_options **opt,
                       tessel_load_options *defaults, mtx_header *h, tessel_diag *diag)
{
    if (!*opt) {
        tessel_load_options_init(defaults);
        *opt = defaults;
    }
    memset(h, 0, sizeof(*h));
    int rc = parse_banner(r, *opt, h, diag);
    return rc ? rc : parse_size_line(r, h, diag);
}

static int mtx_read_stream(text_reader *r, const tessel_load_options *opt, const mtx_header *h,
                           uint64_t reserve, const tessel_allocator *a, tessel_tensor **out,
                           tessel_diag *diag);

static int mtx_read(text_reader *r, const tessel_load_options *opt, const row_filter *f,
                    const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    tessel_load_options defaults;
    mtx_header h;
    int rc = read_header(r, &opt, &defaults, &h, diag);
    if (rc)
        return rc;
    rc = f ? MTX_CHUNKED_FALLBACK : mtx_read_chunked(r, opt, &h, a, out, diag);
    if (rc != MTX_CHUNKED_FALLBACK)
        return rc;
    uint64_t dims[2] = { h.rows, h.cols };
    if (f)
        return mtx_read_filtered(r, opt, &h, f, a, out, diag);
    /* Reserving the declared count up front saves regrowing (and copying)
     * the arrays; a huge claim with a small body must not allocate
     * gigabytes, so the file's size bounds the reservation. */
    uint64_t reserve = h.entries;
    uint64_t fits = text_reader_max_lines(r, MTX_MIN_ENTRY_BYTES);
    if (reserve > fits)
        reserve = fits;
    if (h.symmetry != SYM_GENERAL)
        reserve = reserve > UINT64_MAX / 2 ? UINT64_MAX : reserve * 2;
    uint64_t most = h.symmetry != SYM_GENERAL && h.entries <= UINT64_MAX / 2 ? 2 * h.entries
                                                                              : h.entries;
    if (csr_stream_fits(h.rows, reserve, most, h.field != FIELD_PATTERN))
        return mtx_read_stream(r, opt, &h, reserve, a, out, diag);
    tessel_coo_builder *b = NULL;
    rc = tessel_coo_builder_create(2, dims, h.field != FIELD_PATTERN, a, &b, diag);
    if (!rc && reserve && tessel_coo_builder_reserve(b, reserve) != TESSEL_OK)
        rc = tessel_diag_set(diag, TESSEL_ENOMEM, r->name, r->line, 0, NULL,
                             "out of memory while reserving room for %llu entries (asked for "
                             "%llu bytes)", (unsigned long long)reserve,
                             (unsigned long long)tensor_builder_grow_bytes(b, reserve));
    if (!rc)
        rc = read_entries(r, &h, b, NULL, diag);
    if (!rc) {
        rc = tessel_coo_builder_finish(b, opt->drop_zeros ? TESSEL_BUILD_DROP_ZEROS : 0, out,
                                       diag);
    }
    tessel_coo_builder_free(&b);
    if (rc && diag && !diag->file[0]) {
        tessel_diag_set_file(diag, r->name);
        /* The builder's limits (hypersparse row pointers) come from the
         * dimensions on the size line. */
        if (rc == TESSEL_ERANGE && !diag->line)
            diag->line = h.size_line;
    }
    if (!rc) {
        strcpy((*out)->field, h.field_name);
        strcpy((*out)->symmetry, h.symmetry_name);
    }
    return rc;
}

/* The single-pass reader's entries straight into the tensor's arrays
 * (csr_stream.h): the coordinate builder's tensor, without its staging
 * copy. */
static int mtx_read_stream(text_reader *r, const tessel_load_options *opt, const mtx_header *h,
                           uint64_t reserve, const tessel_allocator *a, tessel_tensor **out,
                           tessel_diag *diag)
{
    csr_stream s;
    row_filter f = { 0, 0, 0, NULL, NULL, NULL, &s };
    int rc = TESSEL_OK;
    if (csr_stream_init(&s, h->rows, h->cols, h->field != FIELD_PATTERN, reserve, a) != TESSEL_OK)
        rc = tessel_diag_set(diag, TESSEL_ENOMEM, r->name, r->line, 0, NULL,
                             "out of memory while reserving room for %llu entries (asked for "
                             "%llu bytes)", (unsigned long long)reserve,
                             (unsigned long long)((h->rows + 1) * sizeof(uint64_t) +
                                                  reserve * (sizeof(uint32_t) +
                                                             (s.has_values ? sizeof(double) : 0))));
    if (!rc)
        rc = read_entries(r, h, NULL, &f, diag);
    if (!rc)
        rc = csr_stream_finish(&s, opt->drop_zeros ? TESSEL_BUILD_DROP_ZEROS : 0, out, diag);
    csr_stream_free(&s);
    if (rc && diag && !diag->file[0]) {
        tessel_diag_set_file(diag, r->name);
        if (rc == TESSEL_ERANGE && !diag->line)
            diag->line = h->size_line;
    }
    if (!rc) {
        strcpy((*out)->field, h->field_name);
        strcpy((*out)->symmetry, h->symmetry_name);
    }
    return rc;
}

/* Reads the file at path, through the row filter f when not NULL. */
static int read_file(const char *path, const tessel_load_options *opt, row_filter *f,
                        const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    text_reader r;
    int rc = text_reader_open_file(&r, path, a, diag);
    if (rc)
        return rc;
    rc = mtx_read(&r, opt, f, a, out, diag);
    text_reader_close(&r);
    if (rc && diag && !diag->file[0])
        tessel_diag_set_file(diag, path);
    return rc;
}

int tessel_tensor_read_mtx(const char *path, const tessel_load_options *opt,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    return read_file(path, opt, NULL, a, out, diag);
}

int tessel_tensor_parse_mtx(const char *name, const void *data, size_t size,
                            const tessel_load_options *opt, const tessel_allocator *a,
                            tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    text_reader r;
    text_reader_open_memory(&r, name, data, size, a);
    int rc = mtx_read(&r, opt, NULL, a, out, diag);
    text_reader_close(&r);
    return rc;
}

int tessel_mtx_read_rows(const char *path, const tessel_load_options *opt, uint64_t row_begin,
                         uint64_t row_end, uint64_t reserve, const tessel_allocator *a,
                         tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    row_filter f = { row_begin, row_end, reserve, NULL, NULL, NULL, NULL };
    return read_file(path, opt, &f, a, out, diag);
}

/* What a scan of a whole file sets up from the header, before its entries
 * run through the filter. */
typedef int (*scan_setup)(const mtx_header *h, row_filter *f, void *ctx, tessel_diag *diag);

/* Opens path, reads its header, lets setup prepare f from it, then runs
 * the entries through f (counts or emit) without building a tensor. */
static int scan_file(const char *path, const tessel_load_options *opt, const tessel_allocator *a,
                     row_filter *f, scan_setup setup, void *ctx, tessel_diag *diag)
{
    text_reader r;
    int rc = text_reader_open_file(&r, path, a, diag);
    if (rc)
        return rc;
    tessel_load_options defaults;
    mtx_header h;
    rc = read_header(&r, &opt, &defaults, &h, diag);
    if (!rc)
        rc = setup(&h, f, ctx, diag);
    if (!rc)
        rc = mtx_read_filtered(&r, opt, &h, f, NULL, NULL, diag);
    text_reader_close(&r);
    if (rc && diag && !diag->file[0])
        tessel_diag_set_file(diag, path);
    return rc;
}

typedef struct {
    const char *path;
    const tessel_allocator *a;
    uint64_t *dims;
} count_setup_ctx;

static int count_setup(const mtx_header *h, row_filter *f, void *ctx, tessel_diag *diag)
{
    count_setup_ctx *c = ctx;
    c->dims[0] = h->rows;
    c->dims[1] = h->cols;
    f->counts = tessel_alloc_array(c->a, h->rows ? h->rows : 1, sizeof(uint64_t));
    if (!f->counts)
        return tessel_diag_oom(diag, c->path, "counting the entries of every row",
                               (size_t)(h->rows * sizeof(uint64_t)));
    return TESSEL_OK;
}

int tessel_mtx_row_counts(const char *path, const tessel_load_options *opt,
                          const tessel_allocator *a, uint64_t *dims, uint64_t **counts,
                          tessel_diag *diag)
{
    *counts = NULL;
    row_filter f = { 0, 0, 0, NULL, NULL, NULL, NULL };
    count_setup_ctx c = { path, a, dims };
    int rc = scan_file(path, opt, a, &f, count_setup, &c, diag);
    if (rc) {
        tessel_dealloc(a, f.counts);
        return rc;
    }
    *counts = f.counts;
    return TESSEL_OK;
}

static int info_setup(const mtx_header *h, row_filter *f, void *ctx, tessel_diag *diag)
{
    (void)f;
    (void)diag;
    tessel_entry_info *info = ctx;
    memset(info, 0, sizeof(*info));
    info->order = 2;
    info->dims[0] = h->rows;
    info->dims[1] = h->cols;
    info->has_values = h->field != FIELD_PATTERN;
    strcpy(info->field, h->field_name);
    strcpy(info->symmetry, h->symmetry_name);
    return TESSEL_OK;
}

int tessel_mtx_for_each_entry(const char *path, const tessel_load_options *opt,
                              const tessel_allocator *a, tessel_entry_sink emit, void *ctx,
                              tessel_entry_info *info, tessel_diag *diag)
{
    row_filter f = { 0, 0, 0, NULL, emit, ctx, NULL };
    return scan_file(path, opt, a, &f, info_setup, info, diag);
}

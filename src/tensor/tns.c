/* FROSTT .tns reader: one nonzero per line, N 1-based coordinates then the
 * value, separated by blanks. Lines starting with '#' (or '%') are comments.
 * The order comes from the first entry line; each mode's extent is its
 * largest coordinate. */
#include <stdio.h>
#include <string.h>

#include "builder_internal.h"
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

static int tns_read(text_reader *r, const tessel_load_options *opt, const tessel_allocator *a,
                    tessel_tensor **out, tessel_diag *diag)
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
    uint64_t dims[TESSEL_MAX_ORDER], maxc[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < order; m++) {
        dims[m] = TESSEL_MAX_DIM;
        maxc[m] = 0;
    }
    tessel_coo_builder *b = NULL;
    rc = tessel_coo_builder_create(order, dims, 1, a, &b, diag);
    if (rc) {
        if (diag)
            snprintf(diag->file, sizeof(diag->file), "%s", r->name);
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
        if (tessel_coo_builder_add(b, coords, value) != TESSEL_OK) {
            rc = tns_error(r, TESSEL_ENOMEM, NULL, diag, "out of memory while storing the "
                           "entries after %llu of them (asked for %llu bytes)",
                           (unsigned long long)count,
                           (unsigned long long)tensor_builder_grow_bytes(b, 0));
            break;
        }
        count++;
    } while ((rc = next_entry_line(r, &line, &len, diag)) > 0);
    if (rc == 0) {
        tessel_coo_builder_set_dims(b, maxc);
        rc = tessel_coo_builder_finish(b, opt && opt->drop_zeros ? TESSEL_BUILD_DROP_ZEROS : 0,
                                       out, diag);
        if (rc && diag && !diag->file[0])
            snprintf(diag->file, sizeof(diag->file), "%s", r->name);
    }
    tessel_coo_builder_free(&b);
    return rc;
}

int tessel_tensor_read_tns(const char *path, const tessel_load_options *opt,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    text_reader r;
    int rc = text_reader_open_file(&r, path, a, diag);
    if (rc)
        return rc;
    rc = tns_read(&r, opt, a, out, diag);
    text_reader_close(&r);
    return rc;
}

int tessel_tensor_parse_tns(const char *name, const void *data, size_t size,
                            const tessel_load_options *opt, const tessel_allocator *a,
                            tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    text_reader r;
    text_reader_open_memory(&r, name, data, size, a);
    int rc = tns_read(&r, opt, a, out, diag);
    text_reader_close(&r);
    return rc;
}

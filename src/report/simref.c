/* Simulator references (tessel_simref_*): the entry points, and what the
 * three readers share: notes, positions, numbers, lines, the row builder. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "simref_internal.h"

/* ------------------------------------------------------------------ */
/* Notes and errors. */

static int push_note(simref_ctx *c, const char *file, uint64_t line, uint32_t col,
                     const char *fmt, va_list ap)
{
    if (!c->notes)
        return 0;
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_diag_vset(&d, 0, file, line, col, NULL, fmt, ap);
    if (tessel_diag_list_push(c->notes, &d))
        return simref_out_of_memory(c);
    return 0;
}

int simref_note(simref_ctx *c, const char *file, uint64_t line, uint32_t col, const char *fmt,
                ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = push_note(c, file, line, col, fmt, ap);
    va_end(ap);
    return rc;
}

int simref_note_unknown(simref_ctx *c, const char *file, uint64_t line, uint32_t col,
                        const char *what, const char *name)
{
    char key[SIMREF_NAME_MAX];
    snprintf(key, sizeof(key), "%s", name);
    for (size_t i = 0; i < c->nnoted; i++)
        if (strcmp(c->noted[i], key) == 0)
            return 0;
    if (c->nnoted == TESSEL_SIMREF_MAX_NOTES) {
        c->unlisted++;
        return 0;
    }
    memcpy(c->noted[c->nnoted++], key, sizeof(key));
    return simref_note(c, file, line, col, "unknown %s '%.200s' (ignored)", what, name);
}

int simref_error(simref_ctx *c, int code, const char *file, uint64_t line, uint32_t col,
                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tessel_diag_vset(c->diag, code, file, line, col, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int simref_out_of_memory(simref_ctx *c)
{
    return tessel_diag_set(c->diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
}

void simref_end_position(const char *data, size_t size, uint64_t *line, uint32_t *col)
{
    uint64_t l = 1;
    size_t start = 0;
    for (size_t i = 0; i < size; i++)
        if (data[i] == '\n') {
            l++;
            start = i + 1;
        }
    size_t c = size - start + 1;
    *line = l;
    *col = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

int simref_missing(simref_ctx *c, const tessel_simref_input *in, const char *field,
                   const char *where)
{
    uint64_t line;
    uint32_t col;
    simref_end_position(in->data, in->size, &line, &col);
    return simref_error(c, TESSEL_EPARSE, in->name, line, col, "missing field '%s'%s%s", field,
                        where && where[0] ? " " : "", where ? where : "");
}

/* ------------------------------------------------------------------ */
/* Numbers. */

static int is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

int simref_parse_count(const char *s, size_t len, uint64_t *v)
{
    if (len == 0)
        return SIMREF_COUNT_NOT_WHOLE;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (!is_digit(s[i]))
            return SIMREF_COUNT_NOT_WHOLE;
        unsigned d = (unsigned)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return SIMREF_COUNT_TOO_LARGE;
        x = x * 10 + d;
    }
    *v = x;
    return SIMREF_COUNT_OK;
}

size_t simref_number_length(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && s[i] == '-')
        i++;
    size_t digits = i;
    while (i < len && is_digit(s[i]))
        i++;
    if (i == digits)
        return 0;
    if (i + 1 < len && s[i] == '.' && is_digit(s[i + 1])) {
        i++;
        while (i < len && is_digit(s[i]))
            i++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < len && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j < len && is_digit(s[j])) {
            while (j < len && is_digit(s[j]))
                j++;
            i = j;
        }
    }
    return i;
}

int simref_parse_real(const char *s, size_t len, double *v)
{
    if (len == 0 || len > 64 || simref_number_length(s, len) != len)
        return 0;
    char buf[72];
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    char *end = NULL;
    double x = strtod(buf, &end);
    if (end != buf + len || !isfinite(x))
        return 0;
    *v = x;
    return 1;
}

int simref_add(uint64_t a, uint64_t b, uint64_t *sum)
{
    if (a > UINT64_MAX - b)
        return 0;
    *sum = a + b;
    return 1;
}

int simref_json_count(simref_ctx *c, const char *file, const json_doc *doc, const json_node *n,
                      const char *field, uint64_t *v)
{
    if (n->type != JSON_NUMBER)
        return simref_error(c, TESSEL_EPARSE, file, n->line, n->col,
                            "field '%s': expected a whole number, found %s", field,
                            json_type_name(n->type));
    const char *t = json_text(doc, n);
    int rc = simref_parse_count(t, strlen(t), v);
    if (rc == SIMREF_COUNT_TOO_LARGE)
        return simref_error(c, TESSEL_ERANGE, file, n->line, n->col,
                            "field '%s': %s is larger than 2^64 - 1", field, t);
    if (rc)
        return simref_error(c, TESSEL_EPARSE, file, n->line, n->col,
                            "field '%s': expected a whole number >= 0, found %s", field, t);
    return 0;
}

int simref_json_expect(simref_ctx *c, const char *file, const json_node *n, json_type type,
                       const char *path)
{
    if (n->type == type || (type == JSON_TRUE && n->type == JSON_FALSE))
        return 0;
    return simref_error(c, TESSEL_EPARSE, file, n->line, n->col,
                        "field '%s': expected %s, found %s", path, json_type_name(type),
                        json_type_name(n->type));
}

int simref_json_missing(simref_ctx *c, const char *file, const json_node *obj,
                        const char *path, const char *key)
{
    if (path && path[0])
        return simref_error(c, TESSEL_EPARSE, file, obj->line, obj->col,
                            "missing field '%s.%s' (this object has no '%s')", path, key, key);
    return simref_error(c, TESSEL_EPARSE, file, obj->line, obj->col, "missing field '%s'", key);
}

int simref_json_members(simref_ctx *c, const char *file, const json_doc *doc,
                        const json_node *obj, const char *path, const char *what,
                        const simref_member *members, size_t nmembers, const json_node **found,
                        size_t nslots)
{
    for (size_t i = 0; i < nslots; i++)
        found[i] = NULL;
    int rc = simref_json_expect(c, file, obj, JSON_OBJECT, path && path[0] ? path : "(top)");
    for (const json_node *m = json_at(doc, obj->first); !rc && m; m = json_at(doc, m->next)) {
        const char *key = json_key(doc, m);
        const simref_member *known = NULL;
        for (size_t i = 0; i < nmembers && !known; i++)
            if (strcmp(members[i].key, key) == 0)
                known = &members[i];
        if (!known) {
            char name[SIMREF_NAME_MAX * 4];
            snprintf(name, sizeof(name), "%s%s%.200s", path, path[0] ? "." : "", key);
            rc = simref_note_unknown(c, file, m->key_line, m->key_col, what, name);
            continue;
        }
        if (known->slot < 0)
            continue;
        const json_node *prev = found[known->slot];
        if (prev)
            rc = simref_error(c, TESSEL_EPARSE, file, m->key_line, m->key_col,
                              "field '%s%s%s' appears twice in one object (first at line %llu)",
                              path, path[0] ? "." : "", key, (unsigned long long)prev->key_line);
        else
            found[known->slot] = m;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Lines and names. */

void simref_lines_init(simref_lines *l, const tessel_simref_input *in)
{
    l->in = in;
    l->pos = 0;
    l->line = 0;
}

int simref_next_line(simref_ctx *c, simref_lines *l, const char **text, size_t *len)
{
    const char *s = l->in->data;
    size_t size = l->in->size;
    if (l->pos >= size)
        return 0;
    size_t start = l->pos;
    const char *nl = memchr(s + start, '\n', size - start);
    size_t end = nl ? (size_t)(nl - s) : size;
    l->pos = nl ? end + 1 : size;
    l->line++;
    const char *nul = memchr(s + start, '\0', end - start);
    if (nul) {
        size_t col = (size_t)(nul - (s + start)) + 1;
        return simref_error(c, TESSEL_EPARSE, l->in->name, l->line,
                            col > UINT32_MAX ? UINT32_MAX : (uint32_t)col, "NUL byte in the text");
    }
    if (end > start && s[end - 1] == '\r')
        end--;
    *text = s + start;
    *len = end - start;
    return 1;
}

const char *simref_trim(const char *s, size_t *len)
{
    size_t n = *len;
    while (n && (*s == ' ' || *s == '\t')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    *len = n;
    return s;
}

void simref_stem(const char *name, char *buf, size_t n)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t len = strcspn(base, ".");
    if (len == 0) {
        snprintf(buf, n, "run");
        return;
    }
    snprintf(buf, n, "%.*s", (int)(len < 1000 ? len : 1000), base);
}

/* ------------------------------------------------------------------ */
/* The row builder. */

void simref_builder_init(simref_builder *b, const tessel_allocator *a,
                         const char *const *columns, size_t ncols, size_t nkeys)
{
    memset(b, 0, sizeof(*b));
    b->alloc = a;
    b->columns = columns;
    b->ncols = ncols;
    b->nkeys = nkeys;
}

void simref_builder_for_grain(simref_builder *b, const tessel_allocator *a,
                              tessel_simref_grain grain, const char *const *summary,
                              size_t nsummary, const char *const *traffic, size_t ntraffic)
{
    if (grain == TESSEL_SIMREF_SUMMARY)
        simref_builder_init(b, a, summary, nsummary, 2);
    else
        simref_builder_init(b, a, traffic, ntraffic, 4);
}

void simref_builder_free(simref_builder *b)
{
    for (size_t i = 0; i < b->nrows * b->ncols; i++)
        tessel_dealloc(b->alloc, b->cells[i]);
    tessel_dealloc(b->alloc, b->cells);
    tessel_dealloc(b->alloc, b->lines);
    b->cells = NULL;
    b->lines = NULL;
    b->nrows = b->cap = 0;
}

int simref_builder_add_row(simref_ctx *c, simref_builder *b, uint64_t line, size_t *row)
{
    if (b->nrows == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 8;
        if (cap > SIZE_MAX / b->ncols)
            return simref_out_of_memory(c);
        char **cells = tessel_realloc_array(b->alloc, b->cells, cap * b->ncols, sizeof(*cells));
        if (!cells)
            return simref_out_of_memory(c);
        b->cells = cells;
        uint64_t *lines = tessel_realloc_array(b->alloc, b->lines, cap, sizeof(*lines));
        if (!lines)
            return simref_out_of_memory(c);
        b->lines = lines;
        b->cap = cap;
    }
    memset(b->cells + b->nrows * b->ncols, 0, b->ncols * sizeof(*b->cells));
    b->lines[b->nrows] = line;
    *row = b->nrows++;
    return 0;
}

int simref_builder_set(simref_ctx *c, simref_builder *b, size_t row, size_t col,
                       const char *text)
{
    char *copy = tessel_strdup(b->alloc, text);
    if (!copy)
        return simref_out_of_memory(c);
    char **cell = &b->cells[row * b->ncols + col];
    tessel_dealloc(b->alloc, *cell);
    *cell = copy;
    return 0;
}

int simref_builder_set_u64(simref_ctx *c, simref_builder *b, size_t row, size_t col,
                           uint64_t v)
{
    char text[24];
    snprintf(text, sizeof(text), "%llu", (unsigned long long)v);
    return simref_builder_set(c, b, row, col, text);
}

static int column_used(const simref_builder *b, size_t col)
{
    if (col < b->nkeys)
        return 1;
    for (size_t r = 0; r < b->nrows; r++)
        if (b->cells[r * b->ncols + col])
            return 1;
    return 0;
}

int simref_builder_finish(simref_ctx *c, simref_builder *b, const char *name,
                          tessel_report_csv **out)
{
    if (!b->columns) /* a reader that never set up its columns */
        return tessel_diag_set(c->diag, TESSEL_EINVAL, name, 0, 0, NULL, "no columns");
    size_t keep = 0;
    for (size_t col = 0; col < b->ncols; col++)
        keep += column_used(b, col);
    const char **cells = tessel_alloc_array(b->alloc, b->nrows + 1, keep * sizeof(*cells));
    if (!cells)
        return simref_out_of_memory(c);
    size_t k = 0;
    for (size_t col = 0; col < b->ncols; col++) {
        if (!column_used(b, col))
            continue;
        cells[k] = b->columns[col];
        for (size_t r = 0; r < b->nrows; r++)
            cells[(r + 1) * keep + k] = b->cells[r * b->ncols + col];
        k++;
    }
    int rc = tessel_report_csv_from_cells(name, keep, b->nrows, cells, b->lines, b->alloc, out,
                                          c->diag);
    tessel_dealloc(b->alloc, cells);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Entry points. */

static const char *const format_names[] = { "csv", "drt", "stonne", "sam" };

int tessel_simref_format_parse(const char *name, tessel_simref_format *out)
{
    for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
        if (name && strcmp(name, format_names[i]) == 0) {
            *out = (tessel_simref_format)i;
            return 0;
        }
    return TESSEL_EINVAL;
}

const char *tessel_simref_format_name(tessel_simref_format format)
{
    size_t i = (size_t)format;
    return i < sizeof(format_names) / sizeof(format_names[0]) ? format_names[i] : "?";
}

/* After the notes of a reader: one saying how many names were not listed. */
static int note_unlisted(simref_ctx *c, const tessel_simref_input *in)
{
    if (!c->unlisted)
        return 0;
    return simref_note(c, in->name, 0, 0, "%zu more unknown name%s not listed", c->unlisted,
                      c->unlisted == 1 ? "" : "s");
}

int tessel_simref_parse(tessel_simref_format format, tessel_simref_grain grain,
                        const tessel_simref_input *inputs, size_t n, const tessel_allocator *a,
                        tessel_report_csv **out, tessel_diag_list *notes, tessel_diag *diag)
{
    *out = NULL;
    if (n == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "no reference file given");
    if (format == TESSEL_SIMREF_CSV) {
        if (n != 1)
            return tessel_diag_set(diag, TESSEL_EINVAL, inputs[1].name, 0, 0, NULL,
                                   "the csv reference format reads one file, not %zu", n);
        return tessel_report_csv_parse(inputs[0].name, inputs[0].data, inputs[0].size, a, out,
                                       diag);
    }
    simref_ctx *c = tessel_alloc(a, sizeof(*c));
    if (!c)
        return tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    memset(c, 0, sizeof(*c));
    c->alloc = a;
    c->notes = notes;
    c->diag = diag;
    simref_builder b;
    simref_builder_init(&b, a, NULL, 1, 1);
    int rc;
    switch (format) {
    case TESSEL_SIMREF_DRT:
        rc = simref_read_drt(c, grain, inputs, n, &b);
        break;
    case TESSEL_SIMREF_STONNE:
        rc = simref_read_stonne(c, grain, inputs, n, &b);
        break;
    case TESSEL_SIMREF_SAM:
        rc = simref_read_sam(c, grain, inputs, n, &b);
        break;
    default:
        rc = tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL, "unknown reference format");
        break;
    }
    if (!rc)
        rc = note_unlisted(c, &inputs[0]);
    if (!rc)
        rc = simref_builder_finish(c, &b, b.name ? b.name : inputs[0].name, out);
    simref_builder_free(&b);
    tessel_dealloc(a, c);
    return rc;
}

int tessel_simref_load(tessel_simref_format format, tessel_simref_grain grain,
                       const char *const *paths, size_t n, const tessel_allocator *a,
                       tessel_report_csv **out, tessel_diag_list *notes, tessel_diag *diag)
{
    *out = NULL;
    if (format == TESSEL_SIMREF_CSV && n == 1)
        return tessel_report_csv_load(paths[0], a, out, diag);
    tessel_simref_input *in = tessel_alloc_array(a, n ? n : 1, sizeof(*in));
    char **bufs = tessel_alloc_array(a, n ? n : 1, sizeof(*bufs));
    int rc = 0;
    if (!in || !bufs)
        rc = tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    size_t loaded = 0;
    for (; !rc && loaded < n; loaded++) {
        size_t size = 0;
        rc = report_read_file(paths[loaded], a, &bufs[loaded], &size, diag);
        if (rc)
            break;
        in[loaded] = (tessel_simref_input){ paths[loaded], bufs[loaded], size };
    }
    if (!rc)
        rc = tessel_simref_parse(format, grain, in, n, a, out, notes, diag);
    for (size_t i = 0; bufs && i < loaded; i++)
        tessel_dealloc(a, bufs[i]);
    tessel_dealloc(a, bufs);
    tessel_dealloc(a, in);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Derived columns of tessel's own tables. */

static int derive_total_bytes(tessel_report_csv *pred, tessel_diag *diag)
{
    long data = tessel_report_csv_find(pred, "data_bytes");
    long meta = tessel_report_csv_find(pred, "metadata_bytes");
    if (data < 0 || meta < 0 || tessel_report_csv_find(pred, "total_bytes") >= 0)
        return 0;
    size_t rows = tessel_report_csv_rows(pred);
    /* Whole byte counts stay exact as integers; anything else is summed as
     * doubles and written in the shortest form that reads back. */
    const tessel_allocator *a = report_csv_allocator(pred);
    char(*text)[48] = tessel_alloc_array(a, rows ? rows : 1, sizeof(*text));
    const char **values = tessel_alloc_array(a, rows ? rows : 1, sizeof(*values));
    int rc = 0;
    if (!text || !values)
        rc = tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (size_t r = 0; !rc && r < rows; r++) {
        const char *x = tessel_report_csv_cell(pred, r, (size_t)data);
        const char *y = tessel_report_csv_cell(pred, r, (size_t)meta);
        uint64_t u, v, sum;
        double dx, dy;
        values[r] = text[r];
        text[r][0] = '\0';
        if (!simref_parse_count(x, strlen(x), &u) && !simref_parse_count(y, strlen(y), &v) &&
            simref_add(u, v, &sum)) {
            snprintf(text[r], sizeof(text[r]), "%llu", (unsigned long long)sum);
        } else if (tessel_validate_parse_number(x, &dx) && tessel_validate_parse_number(y, &dy) &&
                   isfinite(dx + dy)) {
            for (int prec = 15; prec <= 17; prec++) {
                snprintf(text[r], sizeof(text[r]), "%.*g", prec, dx + dy);
                if (strtod(text[r], NULL) == dx + dy)
                    break;
            }
        }
    }
    if (!rc)
        rc = tessel_report_csv_add_column(pred, "total_bytes", values, diag);
    tessel_dealloc(a, text);
    tessel_dealloc(a, values);
    return rc;
}

int tessel_simref_derive_columns(tessel_report_csv *pred, const tessel_report_csv *ref,
                                 tessel_diag *diag)
{
    if (tessel_report_csv_find(ref, "total_bytes") >= 0)
        return derive_total_bytes(pred, diag);
    return 0;
}

/* CSV tables for `tessel validate` (RFC 4180 with the usual tolerances:
 * CRLF or LF, a UTF-8 BOM, blank lines, blanks around fields).
 *
 * The file is copied once and every field is decoded in place: removing
 * quotes and collapsing doubled quotes only ever shortens a field, and the
 * NUL that ends a field overwrites its delimiter (already looked at), so
 * the table costs the file's bytes plus one small record per field and no
 * line or field has a length limit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_internal.h"
#include "tessel/report.h"

typedef struct csv_cell {
    size_t off;    /* decoded text in buf */
    uint64_t line; /* where the field starts in the file */
    uint32_t col;
} csv_cell;

struct tessel_report_csv {
    const tessel_allocator *alloc;
    char *name;
    char *buf;       /* the decoded fields, NUL-terminated, in place */
    size_t buf_used, buf_cap; /* bytes of buf in use and allocated (edits append) */
    csv_cell *cells; /* header first, then rows; ncols per record */
    size_t ncols, nrows;
    /* Column numbers in the order of their names (check_header's sort):
     * finding a column by name is a binary search, so that validating a
     * table of n columns is not quadratic in n (issue 25 item 7). NULL
     * until the header is checked (a linear search then). */
    size_t *by_name;
};

void tessel_report_csv_free(tessel_report_csv **t)
{
    if (!t || !*t)
        return;
    tessel_report_csv *c = *t;
    tessel_dealloc(c->alloc, c->name);
    tessel_dealloc(c->alloc, c->buf);
    tessel_dealloc(c->alloc, c->cells);
    tessel_dealloc(c->alloc, c->by_name);
    tessel_dealloc(c->alloc, c);
    *t = NULL;
}

typedef struct parser {
    tessel_report_csv *t;
    const char *name;
    size_t size, pos;
    uint64_t line;
    size_t line_start;
    size_t ncells, cap;
    tessel_diag *diag;
} parser;

static uint32_t column_of(const parser *p, size_t pos)
{
    size_t c = pos - p->line_start + 1;
    return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

static int push_cell(parser *p, size_t off, uint64_t line, uint32_t col)
{
    if (p->ncells == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        csv_cell *c = tessel_realloc_array(p->t->alloc, p->t->cells, cap, sizeof(*c));
        if (!c)
            return tessel_diag_oom(p->diag, p->name, "reading a CSV table's fields",
                                   cap * sizeof(*c));
        p->t->cells = c;
        p->cap = cap;
    }
    p->t->cells[p->ncells++] = (csv_cell){ off, line, col };
    return 0;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* A line ends at LF or CRLF; a lone CR is an ordinary character, so a
 * field never silently loses one. */
static int at_line_end(const parser *p)
{
    const char *b = p->t->buf;
    return p->pos < p->size &&
           (b[p->pos] == '\n' || (b[p->pos] == '\r' && p->pos + 1 < p->size && b[p->pos + 1] == '\n'));
}

static int parse_error(parser *p, uint64_t line, uint32_t col, const char *msg)
{
    return tessel_diag_set(p->diag, TESSEL_EPARSE, p->name, line, col, NULL, "%s", msg);
}

/* One field starting at p->pos; leaves p->pos on its delimiter and sets
 * *delim to it: ',', '\n', '\r' (of a CRLF) or '\0' at the end of the data.
 * Sets *quoted when the field was quoted. */
static int parse_field(parser *p, int *quoted, char *delim)
{
    char *b = p->t->buf;
    while (p->pos < p->size && is_blank(b[p->pos]))
        p->pos++;
    uint64_t line = p->line;
    uint32_t col = column_of(p, p->pos);
    size_t start = p->pos, w = p->pos;
    *quoted = p->pos < p->size && b[p->pos] == '"';
    if (*quoted) {
        p->pos++;
        for (;;) {
            if (p->pos >= p->size)
                return parse_error(p, line, col, "unterminated quoted field (it starts here)");
            char c = b[p->pos];
            if (c == '\0')
                return parse_error(p, p->line, column_of(p, p->pos), "NUL byte in the data");
            if (c == '"') {
                if (p->pos + 1 < p->size && b[p->pos + 1] == '"') {
                    b[w++] = '"';
                    p->pos += 2;
                    continue;
                }
                p->pos++;
                break;
            }
            b[w++] = c;
            p->pos++;
            if (c == '\n') {
                p->line++;
                p->line_start = p->pos;
            }
        }
        while (p->pos < p->size && is_blank(b[p->pos]))
            p->pos++;
        if (p->pos < p->size && b[p->pos] != ',' && !at_line_end(p))
            return parse_error(p, p->line, column_of(p, p->pos),
                               "unexpected character after a closing quote (a quote inside a "
                               "quoted field is written as two quotes)");
    } else {
        while (p->pos < p->size && b[p->pos] != ',' && !at_line_end(p)) {
            char c = b[p->pos];
            if (c == '\0')
                return parse_error(p, p->line, column_of(p, p->pos), "NUL byte in the data");
            if (c == '"')
                return parse_error(p, p->line, column_of(p, p->pos),
                                   "quote inside an unquoted field (quote the whole field and "
                                   "double the quote)");
            p->pos++;
        }
        w = p->pos;
        while (w > start && is_blank(b[w - 1]))
            w--;
    }
    /* The delimiter is saved before the field's NUL may overwrite it
     * (w <= p->pos; buf has a spare byte past the data for the last field). */
    *delim = p->pos < p->size ? b[p->pos] : '\0';
    b[w] = '\0';
    return push_cell(p, start, line, col);
}

static int check_header(parser *p)
{
    tessel_report_csv *t = p->t;
    for (size_t i = 0; i < t->ncols; i++)
        if (!t->buf[t->cells[i].off])
            return tessel_diag_set(p->diag, TESSEL_EPARSE, p->name, t->cells[i].line,
                                   t->cells[i].col, NULL, "empty column name (column %zu)",
                                   i + 1);
    /* Sorted copies find a repeated name in O(n log n), even for a header
     * of a million columns. */
    size_t *idx = tessel_alloc_array(t->alloc, t->ncols, sizeof(*idx));
    if (!idx)
        return tessel_diag_oom(p->diag, p->name, "indexing a CSV header",
                               t->ncols * sizeof(*idx));
    for (size_t i = 0; i < t->ncols; i++)
        idx[i] = i;
    /* Insertion into a sorted prefix would be quadratic; a merge sort with
     * a scratch array keeps the index order stable. */
    size_t *tmp = tessel_alloc_array(t->alloc, t->ncols, sizeof(*tmp));
    if (!tmp) {
        tessel_dealloc(t->alloc, idx);
        return tessel_diag_oom(p->diag, p->name, "indexing a CSV header",
                               t->ncols * sizeof(*tmp));
    }
    for (size_t width = 1; width < t->ncols; width *= 2) {
        for (size_t lo = 0; lo < t->ncols; lo += 2 * width) {
            size_t mid = lo + width < t->ncols ? lo + width : t->ncols;
            size_t hi = lo + 2 * width < t->ncols ? lo + 2 * width : t->ncols;
            size_t a = lo, c = mid, k = lo;
            while (a < mid && c < hi) {
                const char *x = t->buf + t->cells[idx[a]].off, *y = t->buf + t->cells[idx[c]].off;
                tmp[k++] = strcmp(x, y) <= 0 ? idx[a++] : idx[c++];
            }
            while (a < mid)
                tmp[k++] = idx[a++];
            while (c < hi)
                tmp[k++] = idx[c++];
        }
        size_t *s = idx;
        idx = tmp;
        tmp = s;
        if (width > t->ncols / 2) /* the last pass; also keeps 2 * width from overflowing */
            break;
    }
    int rc = 0;
    for (size_t i = 1; i < t->ncols && !rc; i++) {
        const csv_cell *a = &t->cells[idx[i - 1]], *c = &t->cells[idx[i]];
        if (strcmp(t->buf + a->off, t->buf + c->off) == 0)
            rc = tessel_diag_set(p->diag, TESSEL_EPARSE, p->name, c->line, c->col, NULL,
                                 "column '%s' appears twice (columns %zu and %zu)",
                                 t->buf + c->off, idx[i - 1] + 1, idx[i] + 1);
    }
    tessel_dealloc(t->alloc, tmp);
    if (rc) {
        tessel_dealloc(t->alloc, idx);
        return rc;
    }
    tessel_dealloc(t->alloc, t->by_name);
    t->by_name = idx; /* the sorted order is the name index */
    return 0;
}

static int parse(parser *p)
{
    tessel_report_csv *t = p->t;
    const char *b = t->buf;
    /* Spreadsheets often start a UTF-8 CSV with a byte-order mark. */
    if (p->size >= 3 && memcmp(b, "\xEF\xBB\xBF", 3) == 0)
        p->pos = p->line_start = 3;
    int have_header = 0;
    while (p->pos < p->size) {
        uint64_t rec_line = p->line;
        size_t first = p->ncells, nfields = 0;
        int quoted = 0, any_quoted = 0;
        char delim = '\0';
        for (;;) {
            int rc = parse_field(p, &quoted, &delim);
            if (rc)
                return rc;
            any_quoted |= quoted;
            nfields++;
            if (delim != ',')
                break;
            p->pos++;
        }
        if (delim) { /* LF or CRLF */
            p->pos += delim == '\r' ? 2 : 1;
            p->line++;
            p->line_start = p->pos;
        }
        /* A blank line (nothing but blanks) is one empty unquoted field. */
        if (nfields == 1 && !any_quoted && !b[t->cells[first].off]) {
            p->ncells = first;
            continue;
        }
        if (!have_header) {
            have_header = 1;
            t->ncols = nfields;
            int rc = check_header(p);
            if (rc)
                return rc;
            continue;
        }
        if (nfields != t->ncols) {
            uint32_t col = nfields > t->ncols ? t->cells[first + t->ncols].col : 0;
            uint64_t line = nfields > t->ncols ? t->cells[first + t->ncols].line : rec_line;
            return tessel_diag_set(p->diag, TESSEL_EPARSE, p->name, line, col, NULL,
                                   "row has %zu field%s but the header has %zu", nfields,
                                   nfields == 1 ? "" : "s", t->ncols);
        }
        t->nrows++;
    }
    if (!have_header)
        return tessel_diag_set(p->diag, TESSEL_EPARSE, p->name, 0, 0, NULL,
                               "no header row (the file is empty)");
    return 0;
}

/* An empty table named `name` with a text buffer of `bytes` and, when
 * ncells > 0, room for that many cells; NULL when out of memory. */
static tessel_report_csv *table_new(const char *name, size_t bytes, size_t ncells,
                                    const tessel_allocator *a)
{
    tessel_report_csv *t = tessel_alloc(a, sizeof(*t));
    if (!t)
        return NULL;
    memset(t, 0, sizeof(*t));
    t->alloc = a;
    t->name = tessel_strdup(a, name);
    t->buf = tessel_alloc(a, bytes);
    if (ncells)
        t->cells = tessel_alloc_array(a, ncells, sizeof(*t->cells));
    if (!t->name || !t->buf || (ncells && !t->cells))
        tessel_report_csv_free(&t);
    return t;
}

int tessel_report_csv_parse(const char *name, const void *data, size_t size,
                            const tessel_allocator *a, tessel_report_csv **out, tessel_diag *diag)
{
    *out = NULL;
    if (!name)
        name = "";
    /* One spare byte: the NUL of a last field that ends with the data. */
    tessel_report_csv *t = size < SIZE_MAX ? table_new(name, size + 1, 0, a) : NULL;
    if (!t)
        return tessel_diag_oom(diag, name, "copying a CSV table", size + 1);
    if (size)
        memcpy(t->buf, data, size);
    t->buf[size] = '\0';
    t->buf_used = t->buf_cap = size + 1;
    parser p = { .t = t, .name = name, .size = size, .line = 1, .diag = diag };
    int rc = parse(&p);
    if (rc) {
        tessel_report_csv_free(&t);
        return rc;
    }
    *out = t;
    return 0;
}

int report_read_file(const char *path, const tessel_allocator *a, char **data, size_t *size,
                     tessel_diag *diag)
{
    *data = NULL;
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "cannot open: %s",
                               strerror(errno));
    /* Read to the end in growing chunks: works for pipes too. */
    size_t cap = 1 << 16, n = 0, asked = cap;
    char *buf = tessel_alloc(a, cap);
    int rc = 0;
    while (buf) {
        if (n == cap) {
            asked = cap <= SIZE_MAX / 2 ? 2 * cap : SIZE_MAX;
            char *grown = cap <= SIZE_MAX / 2 ? tessel_realloc_array(a, buf, 2, cap) : NULL;
            if (!grown) {
                tessel_dealloc(a, buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (!buf)
        rc = tessel_diag_oom(diag, path, "reading a CSV file", asked);
    else if (ferror(f))
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "read error");
    fclose(f);
    if (rc) {
        tessel_dealloc(a, buf);
        return rc;
    }
    *data = buf;
    *size = n;
    return 0;
}

int tessel_report_csv_load(const char *path, const tessel_allocator *a, tessel_report_csv **out,
                           tessel_diag *diag)
{
    *out = NULL;
    char *data = NULL;
    size_t n = 0;
    int rc = report_read_file(path, a, &data, &n, diag);
    if (!rc)
        rc = tessel_report_csv_parse(path, data, n, a, out, diag);
    tessel_dealloc(a, data);
    return rc;
}

const tessel_allocator *report_csv_allocator(const tessel_report_csv *t)
{
    return t->alloc;
}

uint64_t report_csv_header_line(const tessel_report_csv *t, size_t col)
{
    return col < t->ncols ? t->cells[col].line : 0;
}

uint32_t report_csv_header_column(const tessel_report_csv *t, size_t col)
{
    return col < t->ncols ? t->cells[col].col : 0;
}

const char *tessel_report_csv_name(const tessel_report_csv *t)
{
    return t->name;
}

size_t tessel_report_csv_columns(const tessel_report_csv *t)
{
    return t->ncols;
}

size_t tessel_report_csv_rows(const tessel_report_csv *t)
{
    return t->nrows;
}

const char *tessel_report_csv_column_name(const tessel_report_csv *t, size_t col)
{
    return col < t->ncols ? t->buf + t->cells[col].off : NULL;
}

long tessel_report_csv_find(const tessel_report_csv *t, const char *name)
{
    if (t->by_name) {
        size_t lo = 0, hi = t->ncols;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            int c = strcmp(t->buf + t->cells[t->by_name[mid]].off, name);
            if (c == 0)
                return (long)t->by_name[mid];
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        return -1;
    }
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->buf + t->cells[i].off, name) == 0)
            return (long)i;
    return -1;
}

static const csv_cell *cell_at(const tessel_report_csv *t, size_t row, size_t col)
{
    if (row >= t->nrows || col >= t->ncols)
        return NULL;
    return &t->cells[(row + 1) * t->ncols + col];
}

const char *tessel_report_csv_cell(const tessel_report_csv *t, size_t row, size_t col)
{
    const csv_cell *c = cell_at(t, row, col);
    return c ? t->buf + c->off : NULL;
}

uint64_t tessel_report_csv_line(const tessel_report_csv *t, size_t row)
{
    const csv_cell *c = cell_at(t, row, 0);
    return c ? c->line : 0;
}

uint64_t tessel_report_csv_cell_line(const tessel_report_csv *t, size_t row, size_t col)
{
    const csv_cell *c = cell_at(t, row, col);
    return c ? c->line : 0;
}

uint32_t tessel_report_csv_cell_column(const tessel_report_csv *t, size_t row, size_t col)
{
    const csv_cell *c = cell_at(t, row, col);
    return c ? c->col : 0;
}

/* ------------------------------------------------------------------ */
/* Tables built in memory, and edits. Edited text is appended to buf (the
 * old text stays, unreferenced), so cells keep offsets and no field moves. */

static int out_of_memory(const tessel_report_csv *t, tessel_diag *diag)
{
    return tessel_diag_set(diag, TESSEL_ENOMEM, t->name, 0, 0, NULL, "out of memory");
}

/* Makes room for `more` bytes at the end of buf. */
static int reserve_text(tessel_report_csv *t, size_t more, tessel_diag *diag)
{
    if (more <= t->buf_cap - t->buf_used)
        return 0;
    if (more > SIZE_MAX / 2 - t->buf_used)
        return out_of_memory(t, diag);
    size_t cap = t->buf_used + more;
    if (cap < 2 * t->buf_cap)
        cap = 2 * t->buf_cap;
    char *grown = tessel_realloc_array(t->alloc, t->buf, cap, 1);
    if (!grown)
        return out_of_memory(t, diag);
    t->buf = grown;
    t->buf_cap = cap;
    return 0;
}

/* Copies s (NULL: "") to the end of buf, which has room; returns its offset. */
static size_t append_text(tessel_report_csv *t, const char *s)
{
    size_t off = t->buf_used, n = s ? strlen(s) : 0;
    if (n)
        memcpy(t->buf + off, s, n);
    t->buf[off + n] = '\0';
    t->buf_used += n + 1;
    return off;
}

int tessel_report_csv_from_cells(const char *name, size_t ncols, size_t nrows,
                                 const char *const *cells, const uint64_t *lines,
                                 const tessel_allocator *a, tessel_report_csv **out,
                                 tessel_diag *diag)
{
    *out = NULL;
    if (!name)
        name = "";
    if (ncols == 0 || nrows >= SIZE_MAX / ncols - 1)
        return tessel_diag_set(diag, TESSEL_EINVAL, name, 0, 0, NULL,
                               "a table needs at least one column");
    size_t ncells = (nrows + 1) * ncols, text = 1;
    for (size_t i = 0; i < ncells; i++)
        text += (cells[i] ? strlen(cells[i]) : 0) + 1;
    tessel_report_csv *t = table_new(name, text, ncells, a);
    if (!t)
        return tessel_diag_set(diag, TESSEL_ENOMEM, name, 0, 0, NULL, "out of memory");
    t->buf_cap = text;
    t->ncols = ncols;
    for (size_t i = 0; i < ncells; i++) {
        size_t row = i / ncols;
        uint64_t line = row == 0 ? 1 : lines ? lines[row - 1] : row + 1;
        t->cells[i] = (csv_cell){ append_text(t, cells[i]), line, 0 };
    }
    parser p = { .t = t, .name = name, .diag = diag };
    int rc = check_header(&p);
    if (rc) {
        tessel_report_csv_free(&t);
        return rc == TESSEL_EPARSE ? TESSEL_EINVAL : rc;
    }
    t->nrows = nrows;
    *out = t;
    return 0;
}

int tessel_report_csv_add_column(tessel_report_csv *t, const char *name,
                                 const char *const *values, tessel_diag *diag)
{
    if (!name || !name[0])
        return tessel_diag_set(diag, TESSEL_EINVAL, t->name, 0, 0, NULL, "empty column name");
    if (tessel_report_csv_find(t, name) >= 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, t->name, 0, 0, NULL,
                               "column '%s' exists already", name);
    size_t more = strlen(name) + 1;
    for (size_t r = 0; r < t->nrows; r++)
        more += (values && values[r] ? strlen(values[r]) : 0) + 1;
    size_t width = t->ncols + 1;
    if (t->nrows >= SIZE_MAX / width - 1)
        return out_of_memory(t, diag);
    int rc = reserve_text(t, more, diag);
    if (rc)
        return rc;
    csv_cell *cells = tessel_alloc_array(t->alloc, (t->nrows + 1) * width, sizeof(*cells));
    size_t *by_name = t->by_name ? tessel_realloc_array(t->alloc, t->by_name, width,
                                                        sizeof(*by_name))
                                 : NULL;
    if (by_name)
        t->by_name = by_name;
    if (!cells || (t->by_name && !by_name)) {
        tessel_dealloc(t->alloc, cells);
        return out_of_memory(t, diag);
    }
    if (by_name) {
        /* the new column's place in name order */
        size_t at = t->ncols;
        while (at > 0 && strcmp(t->buf + t->cells[by_name[at - 1]].off, name) > 0) {
            by_name[at] = by_name[at - 1];
            at--;
        }
        by_name[at] = t->ncols;
    }
    for (size_t r = 0; r <= t->nrows; r++) {
        memcpy(cells + r * width, t->cells + r * t->ncols, t->ncols * sizeof(*cells));
        const csv_cell *first = &t->cells[r * t->ncols];
        const char *text = r == 0 ? name : values ? values[r - 1] : NULL;
        cells[r * width + t->ncols] = (csv_cell){ append_text(t, text), first->line, 0 };
    }
    tessel_dealloc(t->alloc, t->cells);
    t->cells = cells;
    t->ncols = width;
    return 0;
}

int tessel_report_csv_set_cell(tessel_report_csv *t, size_t row, size_t col, const char *value,
                               tessel_diag *diag)
{
    if (row >= t->nrows || col >= t->ncols)
        return tessel_diag_set(diag, TESSEL_EINVAL, t->name, 0, 0, NULL,
                               "no field at row %zu, column %zu", row + 1, col + 1);
    int rc = reserve_text(t, (value ? strlen(value) : 0) + 1, diag);
    if (rc)
        return rc;
    t->cells[(row + 1) * t->ncols + col].off = append_text(t, value);
    return 0;
}

/* The text of a field known to be in range. */
static const char *field_text(const tessel_report_csv *t, size_t row, size_t col)
{
    return t->buf + t->cells[(row + 1) * t->ncols + col].off;
}

/* "a, b, c" of up to five distinct values of a column, for messages. */
static void distinct_values(const tessel_report_csv *t, size_t col, char *buf, size_t n)
{
    size_t len = 0, shown = 0;
    buf[0] = '\0';
    for (size_t r = 0; r < t->nrows && shown < 5; r++) {
        const char *v = field_text(t, r, col);
        int seen = 0;
        for (size_t q = 0; q < r && !seen; q++)
            seen = strcmp(field_text(t, q, col), v) == 0;
        if (seen)
            continue;
        int w = snprintf(buf + len, n - len, "%s'%s'", shown ? ", " : "", v);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
        shown++;
    }
}

int tessel_report_csv_set_key(tessel_report_csv *t, const char *column, const char *from,
                              const char *value, tessel_diag *diag)
{
    if (!column || !column[0] || !value)
        return tessel_diag_set(diag, TESSEL_EINVAL, t->name, 0, 0, NULL,
                               "--set-key needs NAME=VALUE or NAME:OLD=VALUE");
    long col = tessel_report_csv_find(t, column);
    if (col < 0 && !from) {
        /* A new key column holding `value` in every row. */
        const char **values = tessel_alloc_array(t->alloc, t->nrows ? t->nrows : 1,
                                                 sizeof(*values));
        if (!values)
            return out_of_memory(t, diag);
        for (size_t r = 0; r < t->nrows; r++)
            values[r] = value;
        int rc = tessel_report_csv_add_column(t, column, values, diag);
        tessel_dealloc(t->alloc, values);
        return rc;
    }
    if (col < 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, t->name, 0, 0, NULL,
                               "--set-key %s:%s: the table has no column '%s'", column, from,
                               column);
    size_t matched = 0;
    for (size_t r = 0; r < t->nrows; r++)
        matched += !from || strcmp(field_text(t, r, (size_t)col), from) == 0;
    if (from && !matched) {
        char values[400];
        distinct_values(t, (size_t)col, values, sizeof(values));
        return tessel_diag_set(diag, TESSEL_EINVAL, t->name, 0, 0, NULL,
                               "--set-key %s:%s: no row has %s '%s' (its values: %s)", column,
                               from, column, from, values);
    }
    int rc = reserve_text(t, strlen(value) + 1, diag);
    if (rc)
        return rc;
    /* One copy of the text, shared by every matched field. */
    size_t off = append_text(t, value);
    for (size_t r = 0; r < t->nrows; r++) {
        csv_cell *c = &t->cells[(r + 1) * t->ncols + (size_t)col];
        if (!from || strcmp(t->buf + c->off, from) == 0)
            c->off = off;
    }
    return 0;
}

void tessel_report_csv_column_list(const tessel_report_csv *t, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < tessel_report_csv_columns(t); i++) {
        const char *c = tessel_report_csv_column_name(t, i);
        size_t need = strlen(c) + (i ? 2 : 0);
        if (len + need + 4 >= n) {
            snprintf(buf + len, n - len, "%s...", i ? ", " : "");
            return;
        }
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", c);
    }
}

const char *tessel_report_csv_nearest_column(const tessel_report_csv *t, const char *word,
                                             const tessel_allocator *a)
{
    size_t n = tessel_report_csv_columns(t);
    const char **names = tessel_alloc_array(a, n, sizeof(*names));
    if (!names)
        return NULL; /* only the hint is lost */
    for (size_t i = 0; i < n; i++)
        names[i] = tessel_report_csv_column_name(t, i);
    const char *near = tessel_nearest_word(word, names, n);
    tessel_dealloc(a, names);
    return near;
}

/* Error codes and the tessel_diag record. */
#include <stdio.h>
#include <string.h>

#include "tessel/base.h"

const char *tessel_strerror(int code)
{
    switch (code) {
    case TESSEL_OK: return "success";
    case TESSEL_ENOMEM: return "out of memory";
    case TESSEL_EIO: return "input/output error";
    case TESSEL_EPARSE: return "malformed input";
    case TESSEL_EINVAL: return "invalid argument";
    case TESSEL_ERANGE: return "value out of range";
    case TESSEL_ECORRUPT: return "corrupt file";
    case TESSEL_ESTALE: return "stale cache";
    case TESSEL_EUNSUPPORTED: return "unsupported input";
    case TESSEL_EWRITE: return "output not written";
    default: return "unknown error";
    }
}

void tessel_diag_clear(tessel_diag *d)
{
    if (d)
        memset(d, 0, sizeof(*d));
}

static void copy_bounded(char *dst, size_t cap, const char *src)
{
    if (!src) {
        dst[0] = '\0';
        return;
    }
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void tessel_diag_set_file(tessel_diag *d, const char *file)
{
    if (d)
        copy_bounded(d->file, sizeof(d->file), file);
}

int tessel_diag_vset(tessel_diag *d, int code, const char *file, uint64_t line, uint32_t column,
                     const char *field, const char *fmt, va_list ap)
{
    if (!d)
        return code;
    d->code = code;
    copy_bounded(d->file, sizeof(d->file), file);
    d->line = line;
    d->column = column;
    copy_bounded(d->field, sizeof(d->field), field);
    vsnprintf(d->message, sizeof(d->message), fmt, ap);
    return code;
}

int tessel_diag_set(tessel_diag *d, int code, const char *file, uint64_t line, uint32_t column,
                    const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tessel_diag_vset(d, code, file, line, column, field, fmt, ap);
    va_end(ap);
    return code;
}

int tessel_diag_oom(tessel_diag *d, const char *file, const char *step, size_t bytes)
{
    if (bytes)
        return tessel_diag_set(d, TESSEL_ENOMEM, file, 0, 0, "", "out of memory while %s "
                               "(asked for %zu bytes)", step, bytes);
    return tessel_diag_set(d, TESSEL_ENOMEM, file, 0, 0, "", "out of memory while %s", step);
}

/* Appends text to buf[0..*len) within cap bytes (the rest is cut). */
static void append_cut(char *buf, size_t *len, size_t cap, const char *text)
{
    size_t n = strlen(text);
    if (n > cap - *len)
        n = cap - *len;
    memcpy(buf + *len, text, n);
    *len += n;
}

void tessel_diag_prefix(tessel_diag *d, const char *fmt, ...)
{
    char head[sizeof(d->message)], old[sizeof(d->message)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof(head), fmt, ap);
    va_end(ap);
    snprintf(old, sizeof(old), "%s", d->message[0] ? d->message : tessel_strerror(d->code));
    size_t len = 0, cap = sizeof(d->message) - 1;
    append_cut(d->message, &len, cap, head);
    append_cut(d->message, &len, cap, ": ");
    append_cut(d->message, &len, cap, old);
    d->message[len] = '\0';
}

int tessel_diag_format(const tessel_diag *d, char *buf, size_t n)
{
    const char *msg = d->message[0] ? d->message : tessel_strerror(d->code);
    if (d->file[0] && d->line && d->column)
        return snprintf(buf, n, "%s:%llu:%u: error: %s", d->file, (unsigned long long)d->line,
                        (unsigned)d->column, msg);
    if (d->file[0] && d->line)
        return snprintf(buf, n, "%s:%llu: error: %s", d->file, (unsigned long long)d->line, msg);
    if (d->file[0])
        return snprintf(buf, n, "%s: error: %s", d->file, msg);
    return snprintf(buf, n, "error: %s", msg);
}

void tessel_diag_list_init(tessel_diag_list *l, const tessel_allocator *a)
{
    memset(l, 0, sizeof(*l));
    l->alloc = a;
}

int tessel_diag_list_push(tessel_diag_list *l, const tessel_diag *d)
{
    if (l->count == l->capacity) {
        size_t cap = l->capacity ? 2 * l->capacity : 8;
        tessel_diag *items = tessel_realloc_array(l->alloc, l->items, cap, sizeof(*items));
        if (!items) {
            l->dropped++;
            return TESSEL_ENOMEM;
        }
        l->items = items;
        l->capacity = cap;
    }
    l->items[l->count++] = *d;
    return TESSEL_OK;
}

int tessel_diag_list_add(tessel_diag_list *l, int code, const char *file, uint64_t line,
                         uint32_t column, const char *field, const char *fmt, ...)
{
    tessel_diag d;
    va_list ap;
    va_start(ap, fmt);
    tessel_diag_vset(&d, code, file, line, column, field, fmt, ap);
    va_end(ap);
    tessel_diag_list_push(l, &d);
    return code;
}

void tessel_diag_list_free(tessel_diag_list *l)
{
    tessel_dealloc(l->alloc, l->items);
    l->items = NULL;
    l->count = l->capacity = 0;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return SIZE_MAX; /* never a suggestion, whatever the limit */
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *tessel_nearest_word(const char *word, const char *const *candidates, size_t n)
{
    size_t limit = strlen(word) / 3;
    if (limit < 2)
        limit = 2;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}

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

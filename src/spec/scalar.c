/* Typed reading of YAML scalars, and sizes ("256KiB"). Only plain
 * scalars are typed: a quoted "128" is a string, as in YAML 1.2. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "yaml_internal.h"

static int plain_scalar(const tessel_yaml_node *n)
{
    return n && n->kind == TESSEL_YAML_SCALAR && !n->quoted;
}

/* strtod/strtoull accept leading blanks, "inf", "nan" and hex; a number in
 * a spec starts with a digit, a sign or a point. A scalar holding a NUL
 * byte (possible through "\0" escapes, but then it is quoted) or trailing
 * text fails the full-length check. */
static int number_start(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (*p == '.')
        p++;
    return *p >= '0' && *p <= '9';
}

int tessel_yaml_double(const tessel_yaml_node *n, double *out)
{
    if (!plain_scalar(n) || n->length == 0 || !number_start(n->value))
        return TESSEL_EPARSE;
    if (n->length > 1 && n->value[0] == '0' && (n->value[1] == 'x' || n->value[1] == 'X'))
        return TESSEL_EPARSE;
    char *end = NULL;
    errno = 0;
    double v = strtod(n->value, &end);
    if (end != n->value + n->length || !isfinite(v))
        return TESSEL_EPARSE;
    *out = v;
    return TESSEL_OK;
}

int tessel_yaml_u64(const tessel_yaml_node *n, uint64_t *out)
{
    if (!plain_scalar(n) || n->length == 0)
        return TESSEL_EPARSE;
    for (size_t i = 0; i < n->length; i++)
        if (n->value[i] < '0' || n->value[i] > '9')
            return TESSEL_EPARSE;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(n->value, &end, 10);
    if (errno == ERANGE || end != n->value + n->length || v > UINT64_MAX)
        return TESSEL_EPARSE;
    *out = (uint64_t)v;
    return TESSEL_OK;
}

int tessel_yaml_bool(const tessel_yaml_node *n, int *out)
{
    static const char *const truths[] = { "true", "yes", "on" };
    static const char *const lies[] = { "false", "no", "off" };
    if (!plain_scalar(n))
        return TESSEL_EPARSE;
    for (size_t i = 0; i < 3; i++) {
        if (n->length == strlen(truths[i]) && strcasecmp(n->value, truths[i]) == 0) {
            *out = 1;
            return TESSEL_OK;
        }
        if (n->length == strlen(lies[i]) && strcasecmp(n->value, lies[i]) == 0) {
            *out = 0;
            return TESSEL_OK;
        }
    }
    return TESSEL_EPARSE;
}

int tessel_yaml_is_null(const tessel_yaml_node *n)
{
    if (!plain_scalar(n))
        return 0;
    return n->length == 0 || (n->length == 1 && n->value[0] == '~') ||
           (n->length == 4 && strcasecmp(n->value, "null") == 0);
}

/* ------------------------------------------------------------------ */
/* Sizes */

typedef struct size_unit {
    const char *name;
    uint64_t bytes;
} size_unit;

static const size_unit size_units[] = {
    { "B", 1 },
    { "KB", 1000 },
    { "kB", 1000 },
    { "MB", 1000000 },
    { "GB", 1000000000 },
    { "TB", 1000000000000 },
    { "PB", 1000000000000000 },
    { "EB", 1000000000000000000 },
    { "KiB", (uint64_t)1 << 10 },
    { "MiB", (uint64_t)1 << 20 },
    { "GiB", (uint64_t)1 << 30 },
    { "TiB", (uint64_t)1 << 40 },
    { "PiB", (uint64_t)1 << 50 },
    { "EiB", (uint64_t)1 << 60 },
};

/* Exact integer arithmetic, no floating point: "1.5MiB" is 1572864 bytes
 * and "0.3KiB" (307.2 bytes) is refused rather than rounded. */
int tessel_parse_size(const char *text, uint64_t *bytes)
{
    if (!text)
        return TESSEL_EPARSE;
    const char *p = text;
    if (*p < '0' || *p > '9')
        return TESSEL_EPARSE;
    uint64_t whole = 0;
    int overflow = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (whole > (UINT64_MAX - d) / 10)
            overflow = 1;
        else
            whole = whole * 10 + d;
    }
    /* Fraction digits, trailing zeros dropped: frac / 10^ndig. */
    uint64_t frac = 0, scale = 1;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return TESSEL_EPARSE;
        const char *start = p;
        while (*p >= '0' && *p <= '9')
            p++;
        const char *last = p;
        while (last > start && last[-1] == '0')
            last--;
        if (last - start > 19)
            return TESSEL_EPARSE; /* finer than any unit can make whole */
        for (const char *q = start; q < last; q++) {
            frac = frac * 10 + (uint64_t)(*q - '0');
            scale *= 10;
        }
    }
    while (*p == ' ' || *p == '\t')
        p++;
    uint64_t mult = 1;
    if (*p) {
        size_t i, nunits = sizeof(size_units) / sizeof(size_units[0]);
        for (i = 0; i < nunits; i++)
            if (strcmp(p, size_units[i].name) == 0)
                break;
        if (i == nunits)
            return TESSEL_EPARSE;
        mult = size_units[i].bytes;
    }
    if (overflow || (whole && mult > UINT64_MAX / whole))
        return TESSEL_ERANGE;
    uint64_t total = whole * mult;
    if (frac) {
        /* frac * mult / scale must be whole: cancel the common factor
         * first, so nothing overflows (the result is below mult). */
        uint64_t g = tessel_gcd(mult, scale);
        uint64_t den = scale / g;
        if (frac % den)
            return TESSEL_EPARSE;
        uint64_t part = frac / den * (mult / g);
        if (total > UINT64_MAX - part)
            return TESSEL_ERANGE;
        total += part;
    }
    *bytes = total;
    return TESSEL_OK;
}

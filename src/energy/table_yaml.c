/* Typed readers of energy-table YAML fields (tessel tables and Accelergy
 * ERT/ART): every problem becomes a diagnostic with the node's file, line
 * and column and the field path, and reading goes on, so one pass reports
 * all of them (energy_internal.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy_internal.h"

int en_error(en_ctx *c, int code, const tessel_yaml_node *n, const char *field, const char *fmt,
             ...)
{
    tessel_diag d;
    va_list ap;
    va_start(ap, fmt);
    tessel_diag_vset(&d, code, n && n->file ? n->file : c->file, n ? n->line : 0,
                     n ? n->column : 0, field, fmt, ap);
    va_end(ap);
    if (c->errors)
        tessel_diag_list_push(c->errors, &d);
    if (!c->first)
        c->first = code;
    return code;
}

int tessel_energy_fmt(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    return n;
}

int en_oom(en_ctx *c)
{
    return en_error(c, TESSEL_ENOMEM, NULL, NULL, "out of memory while reading the table");
}

/* Copies src into dst[cap], truncating; returns 1 when it had to truncate. */
int en_copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    int cut = n >= cap;
    if (cut)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return cut;
}

void en_join_field(char *out, size_t cap, const char *prefix, const char *key)
{
    if (prefix && prefix[0])
        tessel_energy_fmt(out, cap, "%s.%s", prefix, key);
    else
        tessel_energy_fmt(out, cap, "%s", key);
}

const char *en_scalar_text(const tessel_yaml_node *n)
{
    return n && n->kind == TESSEL_YAML_SCALAR && n->value ? n->value : NULL;
}

/* Unknown keys are errors (a typo must not silently fall back to a
 * default), with the nearest allowed key as suggestion. */
void en_check_keys(en_ctx *c, const tessel_yaml_node *m, const char *const *allowed, size_t n,
                   const char *prefix)
{
    for (size_t i = 0; i < m->count; i++) {
        const char *k = en_scalar_text(m->keys[i]);
        if (!k)
            continue;
        size_t j = 0;
        while (j < n && strcmp(k, allowed[j]) != 0)
            j++;
        if (j < n)
            continue;
        char field[128];
        en_join_field(field, sizeof(field), prefix, k);
        const char *near = tessel_nearest_word(k, allowed, n);
        if (near)
            en_error(c, TESSEL_EPARSE, m->keys[i], field, "unknown key '%s' (did you mean '%s'?)",
                     k, near);
        else
            en_error(c, TESSEL_EPARSE, m->keys[i], field, "unknown key '%s'", k);
    }
}


/* Reads m[key] as a finite number >= 0 (> 0 with NUM_POSITIVE). Returns 1
 * when a value was stored, 0 when absent (an error if required), -1 on a
 * bad value (reported). */
int en_get_number(en_ctx *c, const tessel_yaml_node *m, const tessel_yaml_node *at,
                  const char *prefix, const char *key, unsigned flags, double *out)
{
    char field[128];
    en_join_field(field, sizeof(field), prefix, key);
    const tessel_yaml_node *n = tessel_yaml_get(m, key);
    if (!n || tessel_yaml_is_null(n)) {
        if (flags & NUM_REQUIRED) {
            en_error(c, TESSEL_EPARSE, n ? n : at, field, "missing '%s'", key);
            return -1;
        }
        return 0;
    }
    double v;
    if (tessel_yaml_double(n, &v) != 0 || !isfinite(v)) {
        en_error(c, TESSEL_EPARSE, n, field, "'%s' must be a number", key);
        return -1;
    }
    if (v < 0 || ((flags & NUM_POSITIVE) && v == 0)) {
        en_error(c, TESSEL_EPARSE, n, field, "'%s' must be %s", key,
                 (flags & NUM_POSITIVE) ? "positive" : "zero or positive");
        return -1;
    }
    if ((flags & NUM_INTEGER) && (v != floor(v) || v > 4294967295.0)) {
        en_error(c, TESSEL_EPARSE, n, field, "'%s' must be a whole number below 2^32", key);
        return -1;
    }
    *out = v;
    return 1;
}

int en_get_uint(en_ctx *c, const tessel_yaml_node *m, const char *prefix, const char *key,
                unsigned flags, unsigned *out)
{
    double v = 0;
    int r = en_get_number(c, m, m, prefix, key, flags | NUM_INTEGER, &v);
    if (r == 1)
        *out = (unsigned)v;
    return r;
}

/* A non-empty string under key, copied into dst (truncated to cap). */
int en_get_string(en_ctx *c, const tessel_yaml_node *m, const char *prefix, const char *key,
                  int required, char *dst, size_t cap)
{
    char field[128];
    en_join_field(field, sizeof(field), prefix, key);
    const tessel_yaml_node *n = tessel_yaml_get(m, key);
    if (!n || tessel_yaml_is_null(n)) {
        if (required && strcmp(key, "source") == 0)
            en_error(c, TESSEL_EPARSE, n ? n : m, field,
                     "missing 'source': every number in a table needs its source");
        else if (required)
            en_error(c, TESSEL_EPARSE, n ? n : m, field, "missing '%s'", key);
        return required ? -1 : 0;
    }
    const char *s = en_scalar_text(n);
    if (!s || !s[0]) {
        en_error(c, TESSEL_EPARSE, n, field, "'%s' must be a non-empty string", key);
        return -1;
    }
    en_copy_str(dst, cap, s);
    return 1;
}

int tessel_energy_parse_node(const char *text, double *nm)
{
    if (!text)
        return -1;
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v <= 0)
        return -1;
    while (*end == ' ')
        end++;
    if (strcmp(end, "nm") != 0 && *end != '\0')
        return -1;
    *nm = v;
    return 0;
}

/* Reading the spec tree's scalars for validate.c and its parts: typed
 * values with errors naming the field, unknown keys with a did-you-mean,
 * formats, and the name lists messages show. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validate_internal.h"

/* Format names and their tessel_format numbers (stats.h); tiled-csf is
 * the spec's own code (spec.h). */
static const char *const format_names[] = { "coo", "csr", "cp", "bitmap", "b",
                                            "uop-cp", "uop", "rle", "tiled-csf" };
static const int format_codes[] = { 0, 1, 1, 2, 2, 3, 3, 4, TESSEL_SPEC_FORMAT_TILED_CSF };

/* ------------------------------------------------------------------ */
/* Helpers */

/* Appends src to out (capacity n), truncating: field paths are for
 * messages, and a cut one still says where. */
void spec_append(char *out, size_t n, const char *src)
{
    size_t len = strlen(out), add = strlen(src);
    if (len + add >= n)
        add = n - 1 - len;
    memcpy(out + len, src, add);
    out[len + add] = '\0';
}

/* out = "a.b" ("b" when a is empty). */
void spec_join(char *out, size_t n, const char *a, const char *b)
{
    size_t len = 0;
    if (a && a[0]) {
        size_t na = strlen(a);
        len = na < n - 1 ? na : n - 1;
        memcpy(out, a, len);
        if (len < n - 1)
            out[len++] = '.';
    }
    size_t nb = strlen(b);
    if (nb > n - 1 - len)
        nb = n - 1 - len;
    memcpy(out + len, b, nb);
    out[len + nb] = '\0';
}

/* A scalar's text for messages: short and printable. */
const char *spec_shown(const tessel_yaml_node *n)
{
    return n && n->kind == TESSEL_YAML_SCALAR ? n->value : "";
}

int spec_is_string(const tessel_yaml_node *n)
{
    return n && n->kind == TESSEL_YAML_SCALAR && !tessel_yaml_is_null(n) &&
           strlen(n->value) == n->length;
}

int spec_err(vctx *v, const tessel_yaml_node *n, const char *field, const char *fmt, ...)
{
    tessel_diag d;
    va_list ap;
    va_start(ap, fmt);
    tessel_diag_vset(&d, TESSEL_EINVAL, n ? n->file : NULL, n ? n->line : 0, n ? n->column : 0,
                     field, fmt, ap);
    va_end(ap);
    spec_error_diag(v->c, &d);
    return TESSEL_EINVAL;
}

/* "unknown key 'capcity' (did you mean 'capacity'?)" for every key of m
 * not in valid. */
void spec_check_keys(vctx *v, const tessel_yaml_node *m, const char *field,
                       const char *const *valid, size_t n)
{
    if (!m || m->kind != TESSEL_YAML_MAPPING)
        return;
    for (size_t i = 0; i < m->count; i++) {
        const tessel_yaml_node *k = m->keys[i];
        size_t j;
        for (j = 0; j < n; j++)
            if (tessel_yaml_scalar_is(k, valid[j]))
                break;
        if (j < n)
            continue;
        char f[128];
        spec_join(f, sizeof(f), field, k->value);
        const char *near = tessel_nearest_word(k->value, valid, n);
        if (near)
            spec_err(v, k, f, "unknown key '%.60s' (did you mean '%s'?)", k->value, near);
        else
            spec_err(v, k, f, "unknown key '%.60s'", k->value);
    }
}

/* A mapping, or NULL when absent or null; anything else is an error. */
const tessel_yaml_node *spec_mapping_of(vctx *v, const tessel_yaml_node *n, const char *field,
                                          const char *name)
{
    if (!n || tessel_yaml_is_null(n))
        return NULL;
    if (n->kind != TESSEL_YAML_MAPPING) {
        spec_err(v, n, field, "'%s' must be a mapping", name);
        return NULL;
    }
    return n;
}

int spec_read_string(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                       char *out, size_t cap)
{
    if (!spec_is_string(n) || n->length == 0)
        return spec_err(v, n, field, "'%s' must be a non-empty string", name);
    if (n->length >= cap)
        return spec_err(v, n, field, "'%s' is longer than %zu characters", name, cap - 1);
    memcpy(out, n->value, n->length + 1);
    return TESSEL_OK;
}

int spec_read_size(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                     uint64_t *out)
{
    uint64_t b = 0;
    int rc = n && n->kind == TESSEL_YAML_SCALAR ? tessel_parse_size(n->value, &b)
                                               : TESSEL_EPARSE;
    if (n && n->kind == TESSEL_YAML_SCALAR && n->value[0] == '-')
        return spec_err(v, n, field, "'%s' must be greater than zero", name);
    if (rc == TESSEL_ERANGE)
        return spec_err(v, n, field, "'%s' is too large (less than 16 EiB)", name);
    if (rc || strlen(n->value) != n->length)
        return spec_err(v, n, field, "'%s' must be a size such as 256KiB", name);
    if (b == 0)
        return spec_err(v, n, field, "'%s' must be greater than zero", name);
    *out = b;
    return TESSEL_OK;
}

int spec_read_count(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                      uint64_t max, unsigned *out)
{
    uint64_t x = 0;
    if (tessel_yaml_u64(n, &x) || x == 0)
        return spec_err(v, n, field, "'%s' must be a positive integer", name);
    if (x > max)
        return spec_err(v, n, field, "'%s' must be at most %llu", name, (unsigned long long)max);
    *out = (unsigned)x;
    return TESSEL_OK;
}

int spec_read_positive(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                         const char *what, double *out)
{
    double x = 0;
    if (tessel_yaml_double(n, &x) || !(x > 0))
        return spec_err(v, n, field, "'%s' must be a positive number (%s)", name, what);
    *out = x;
    return TESSEL_OK;
}

/* Rank formats, in tessel_rank_format order (stats.h). */
static const char *const rank_format_names[] = { "UOP", "CP", "B", "RLE", "UB" };

const char *spec_format_name(int code)
{
    for (size_t i = 0; i < N_OF(format_names); i++) /* the first spelling of a code */
        if (format_codes[i] == code)
            return format_names[i];
    return "?";
}

const char *spec_rank_format_name(unsigned code)
{
    return code < N_OF(rank_format_names) ? rank_format_names[code] : "?";
}

/* A list of rank formats, outermost first: [UOP, CP]. */
static int rank_formats(vctx *v, const tessel_yaml_node *n, const char *field, int *out,
                        unsigned *nranks, unsigned char *ranks)
{
    if (n->count == 0 || n->count > TESSEL_SPEC_MAX_INDICES)
        return spec_err(v, n, field, "a per-rank format lists 1 to %u ranks, outermost first",
                   TESSEL_SPEC_MAX_INDICES);
    int bad = 0;
    for (size_t i = 0; i < n->count; i++) {
        const tessel_yaml_node *r = n->items[i];
        int code = -1;
        for (size_t f = 0; spec_is_string(r) && f < N_OF(rank_format_names); f++)
            if (strcasecmp(r->value, rank_format_names[f]) == 0)
                code = (int)f;
        if (code >= 0) {
            ranks[i] = (unsigned char)code;
            continue;
        }
        bad = 1;
        const char *near = spec_is_string(r) ? tessel_nearest_word(r->value, rank_format_names,
                                                              N_OF(rank_format_names))
                                        : NULL;
        if (near)
            spec_err(v, r, field, "unknown rank format '%.60s' (did you mean '%s'?)", r->value, near);
        else
            spec_err(v, r, field, "unknown rank format '%.60s' (rank formats: UOP, CP, B, RLE, UB)",
                spec_shown(r));
    }
    if (bad)
        return TESSEL_EINVAL;
    *nranks = (unsigned)n->count;
    *out = TESSEL_SPEC_FORMAT_RANKS;
    return TESSEL_OK;
}

int spec_format_code(vctx *v, const tessel_yaml_node *n, const char *field, int *out,
                       unsigned *nranks, unsigned char *ranks)
{
    if (n->kind == TESSEL_YAML_SEQUENCE)
        return rank_formats(v, n, field, out, nranks, ranks);
    if (spec_is_string(n)) {
        for (size_t i = 0; i < N_OF(format_names); i++) {
            if (strcasecmp(n->value, format_names[i]) == 0) {
                *out = format_codes[i];
                return TESSEL_OK;
            }
        }
        const char *near = tessel_nearest_word(n->value, format_names, N_OF(format_names));
        if (near)
            return spec_err(v, n, field, "unknown format '%.60s' (did you mean '%s'?)", n->value,
                       near);
    }
    return spec_err(v, n, field,
               "unknown format '%.60s' (formats: coo, csr, bitmap, uop-cp, rle, or a list of "
               "rank formats such as [UOP, CP])", spec_shown(n));
}

tessel_spec_pos spec_pos_of(const tessel_yaml_node *n)
{
    tessel_spec_pos p = { NULL, 0, 0 };
    if (n) {
        p.file = n->file;
        p.line = n->line;
        p.column = n->column;
    }
    return p;
}

/* "i, k, j": the workload's index names, for messages. */
void spec_index_list(const tessel_spec *s, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < s->workload.nindices && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "",
                                s->workload.index_name[i]);
}

void spec_tensor_list(const tessel_spec *s, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (unsigned t = 0; t < s->workload.ntensors && len < n; t++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", t ? ", " : "",
                                s->workload.tensor[t].name);
}

/* Names as a candidate array for tessel_nearest_word. */
size_t spec_index_names(const tessel_spec *s, const char **out)
{
    for (unsigned i = 0; i < s->workload.nindices; i++)
        out[i] = s->workload.index_name[i];
    return s->workload.nindices;
}

size_t spec_tensor_names(const tessel_spec *s, const char **out)
{
    for (unsigned t = 0; t < s->workload.ntensors; t++)
        out[t] = s->workload.tensor[t].name;
    return s->workload.ntensors;
}

int spec_read_u64(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                    uint64_t *out)
{
    uint64_t x = 0;
    if (tessel_yaml_u64(n, &x) || x == 0)
        return spec_err(v, n, field, "'%s' must be a positive integer", name);
    *out = x;
    return TESSEL_OK;
}

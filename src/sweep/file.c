/* The sweep file (docs/sweep.md): every error is collected with
 * its position before giving up. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sweep_internal.h"

typedef struct sweep_ctx {
    tessel_sweep *s;
    tessel_diag_list *errors;
    int first_code;
    int oom;
} sweep_ctx;

static int fail(sweep_ctx *c, int code, const tessel_yaml_node *n, const char *field,
                const char *fmt, const char *a1, const char *a2)
{
    if (code == TESSEL_ENOMEM)
        c->oom = 1;
    if (!c->first_code)
        c->first_code = code;
    if (c->errors)
        tessel_diag_list_add(c->errors, code, n ? n->file : c->s->path, n ? n->line : 0,
                             n ? n->column : 0, field, fmt, a1 ? a1 : "", a2 ? a2 : "");
    return code;
}

/* Names the step and the size asked for (issue 25 item 9). */
static int oom(sweep_ctx *c, const char *step, size_t bytes)
{
    char size[64];
    snprintf(size, sizeof(size), " (asked for %zu bytes)", bytes);
    return fail(c, TESSEL_ENOMEM, NULL, "", "out of memory while %s%s", step, size);
}

static char *dup_text(sweep_ctx *c, const char *text)
{
    char *d = tessel_strdup(c->s->alloc, text);
    if (!d)
        oom(c, "copying a value of the sweep file", strlen(text) + 1);
    return d;
}

/* "path=value", the value single-quoted when it was quoted in the file (so
 * that '1e3' stays a string), as tessel_spec_derive reads it. */
char *sweep_make_set(const tessel_allocator *a, const char *path, const char *value, int quoted)
{
    size_t n = strlen(path) + 2 * strlen(value) + 4;
    char *out = tessel_alloc(a, n);
    if (!out)
        return NULL;
    char *p = out + sprintf(out, "%s=", path);
    if (quoted)
        *p++ = '\'';
    for (const char *v = value; *v; v++) {
        if (quoted && *v == '\'')
            *p++ = '\'';
        *p++ = *v;
    }
    if (quoted)
        *p++ = '\'';
    *p = '\0';
    return out;
}

static char *make_set(sweep_ctx *c, const char *path, const char *value, int quoted)
{
    char *out = sweep_make_set(c->s->alloc, path, value, quoted);
    if (!out)
        oom(c, "building a spec override", strlen(path) + 2 * strlen(value) + 4);
    return out;
}

static char *join_dir(sweep_ctx *c, const char *path)
{
    const char *dir = c->s->dir;
    if (path[0] == '/' || !dir[0])
        return dup_text(c, path);
    size_t n = strlen(dir) + strlen(path) + 2;
    char *out = tessel_alloc(c->s->alloc, n);
    if (!out) {
        oom(c, "resolving a data path", n);
        return NULL;
    }
    snprintf(out, n, "%s/%s", dir, path);
    return out;
}

/* ------------------------------------------------------------------ */
/* Values of an axis */

static int add_value(sweep_ctx *c, sweep_axis *ax, const char *text, int quoted)
{
    if (ax->nvalues >= SWEEP_MAX_VALUES)
        return TESSEL_ERANGE;
    if (ax->nvalues == ax->cap) {
        size_t cap = ax->cap ? 2 * ax->cap : 8;
        char **v = tessel_realloc_array(c->s->alloc, ax->values, cap, sizeof(*v));
        if (!v)
            return oom(c, "storing an axis's values", cap * sizeof(*v));
        ax->values = v;
        char **sets = tessel_realloc_array(c->s->alloc, ax->sets, cap, sizeof(*sets));
        if (!sets)
            return oom(c, "storing an axis's values", cap * sizeof(*sets));
        ax->sets = sets;
        ax->cap = cap;
    }
    ax->values[ax->nvalues] = dup_text(c, text);
    ax->sets[ax->nvalues] = make_set(c, ax->path, text, quoted);
    ax->nvalues++;
    return ax->values[ax->nvalues - 1] && ax->sets[ax->nvalues - 1] ? TESSEL_OK : TESSEL_ENOMEM;
}

/* A range bound: a number, or a size ("4MiB") read as bytes. */
static int range_number(const tessel_yaml_node *n, double *v, int *is_size)
{
    uint64_t bytes;
    if (n && n->kind == TESSEL_YAML_SCALAR && tessel_yaml_double(n, v) == 0 && isfinite(*v))
        return 0;
    if (n && n->kind == TESSEL_YAML_SCALAR && tessel_parse_size(n->value, &bytes) == 0) {
        *v = (double)bytes;
        *is_size = 1;
        return 0;
    }
    return -1;
}

/* {from: A, to: B, step: S} (A, A+S, ... <= B) or {from: A, to: B,
 * times: F} (A, A*F, ... <= B); sizes give whole bytes. */
static int parse_range(sweep_ctx *c, sweep_axis *ax, const tessel_yaml_node *m)
{
    static const char *const keys[] = { "from", "to", "step", "times" };
    for (size_t i = 0; i < m->count; i++) {
        const char *k = m->keys[i]->value;
        int known = 0;
        for (size_t j = 0; j < 4; j++)
            known |= strcmp(k, keys[j]) == 0;
        if (!known) {
            const char *near = tessel_nearest_word(k, keys, 4);
            return fail(c, TESSEL_EINVAL, m->keys[i], ax->path,
                        near ? "unknown range key '%s'; did you mean '%s'?"
                             : "unknown range key '%s'%s (a range has from, to and step or "
                               "times)",
                        k, near ? near : "");
        }
    }
    const tessel_yaml_node *from = tessel_yaml_get(m, "from"), *to = tessel_yaml_get(m, "to");
    const tessel_yaml_node *step = tessel_yaml_get(m, "step"), *times = tessel_yaml_get(m, "times");
    double a, b, s;
    int size = 0, ignored = 0;
    if (range_number(from, &a, &size) || range_number(to, &b, &size))
        return fail(c, TESSEL_EINVAL, from ? from : m, ax->path,
                    "a range needs numbers (or sizes) 'from' and 'to'%s%s", NULL, NULL);
    if ((step != NULL) == (times != NULL))
        return fail(c, TESSEL_EINVAL, m, ax->path, "a range needs exactly one of 'step' and "
                    "'times'%s%s", NULL, NULL);
    if (range_number(step ? step : times, &s, &ignored))
        return fail(c, TESSEL_EINVAL, step ? step : times, ax->path,
                    "'%s' must be a number%s", step ? "step" : "times", NULL);
    if (b < a || (step && !(s > 0)) || (times && !(s > 1)) || (times && !(a > 0)))
        return fail(c, TESSEL_EINVAL, m, ax->path,
                    "empty or endless range: need from <= to, step > 0, or times > 1 with from "
                    "> 0%s%s", NULL, NULL);
    double count = step ? floor((b - a) / s * (1 + 1e-12)) + 1
                        : floor(log(b / a) / log(s) * (1 + 1e-12)) + 1;
    if (!(count <= SWEEP_MAX_VALUES))
        return fail(c, TESSEL_ERANGE, m, ax->path, "a range of more than 100,000 values%s%s",
                    NULL, NULL);
    /* Values are computed from the index, not by accumulation, so that
     * rounding does not drift (a relative slack admits the end point). */
    for (uint64_t i = 0;; i++) {
        double v = step ? a + (double)i * s : a * pow(s, (double)i);
        if (v > b * (1 + 1e-12) || !isfinite(v))
            break;
        char buf[48];
        if (size)
            snprintf(buf, sizeof(buf), "%.0f", floor(v + 0.5));
        else
            tessel_report_format_double(buf, v);
        int rc = add_value(c, ax, buf, 0);
        if (rc == TESSEL_ERANGE)
            return fail(c, rc, m, ax->path, "a range of more than 100,000 values%s%s", NULL,
                        NULL);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

static int parse_axis(sweep_ctx *c, const tessel_yaml_node *key, const tessel_yaml_node *v)
{
    tessel_sweep *s = c->s;
    if (s->naxes == TESSEL_SWEEP_MAX_AXES)
        return fail(c, TESSEL_ERANGE, key, "axes", "more than 16 axes%s%s", NULL, NULL);
    sweep_axis *ax = &s->axis[s->naxes++];
    ax->pos = (tessel_spec_pos){ key->file, key->line, key->column };
    if (!(ax->path = dup_text(c, key->value)))
        return TESSEL_ENOMEM;
    if (strncmp(ax->path, "workload.einsum", 15) == 0 || strcmp(ax->path, "workload") == 0)
        return fail(c, TESSEL_EINVAL, key, ax->path, "the einsum is fixed in a sweep (the "
                    "statistics belong to it); sweep '%s' by running one sweep per einsum%s",
                    ax->path, NULL);
    if (v->kind == TESSEL_YAML_MAPPING)
        return parse_range(c, ax, v);
    if (v->kind == TESSEL_YAML_SCALAR)
        return add_value(c, ax, v->value, v->quoted);
    if (v->count == 0)
        return fail(c, TESSEL_EINVAL, v, ax->path, "an axis needs at least one value%s%s", NULL,
                    NULL);
    for (size_t i = 0; i < v->count; i++) {
        const tessel_yaml_node *item = v->items[i];
        if (item->kind != TESSEL_YAML_SCALAR)
            return fail(c, TESSEL_EINVAL, item, ax->path,
                        "axis values must be scalars (a number, size, name or \"i:64,k:64\" "
                        "text)%s%s", NULL, NULL);
        int rc = add_value(c, ax, item->value, item->quoted);
        if (rc == TESSEL_ERANGE)
            return fail(c, rc, v, ax->path, "more than 100,000 values%s%s", NULL, NULL);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

static int parse_axes(sweep_ctx *c, const tessel_yaml_node *m)
{
    if (m->kind != TESSEL_YAML_MAPPING)
        return fail(c, TESSEL_EINVAL, m, "axes",
                    "'axes' must map spec paths to value lists or ranges%s%s", NULL, NULL);
    for (size_t i = 0; i < m->count && !c->oom; i++)
        parse_axis(c, m->keys[i], m->items[i]);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Data entries */

static int is_name(const char *s)
{
    if (!s[0] || strlen(s) >= TESSEL_SPEC_NAME_MAX)
        return 0;
    for (const char *p = s; *p; p++)
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (p != s && *p >= '0' && *p <= '9')))
            return 0;
    return 1;
}

static int add_binding(sweep_ctx *c, sweep_data *d, const char *name,
                       const tessel_yaml_node *v)
{
    if (v->kind != TESSEL_YAML_SCALAR || !v->value[0])
        return fail(c, TESSEL_EINVAL, v, "data",
                    "a binding is a file name, another tensor's name, NAME^T or dense%s%s", NULL,
                    NULL);
    sweep_binding *b = &d->binding[d->nbindings++];
    snprintf(b->name, sizeof(b->name), "%s", name);
    /* Tensor names, transposes and `dense` are not files; anything else is
     * resolved against the sweep file's directory. */
    size_t n = strlen(v->value);
    int ref = strcmp(v->value, "dense") == 0 || is_name(v->value) ||
              (n > 2 && strcmp(v->value + n - 2, "^T") == 0);
    b->value = ref ? dup_text(c, v->value) : join_dir(c, v->value);
    return b->value ? TESSEL_OK : TESSEL_ENOMEM;
}

static int parse_data_entry(sweep_ctx *c, sweep_data *d, const tessel_yaml_node *n)
{
    d->pos = (tessel_spec_pos){ n->file, n->line, n->column };
    if (n->kind == TESSEL_YAML_SCALAR)
        return add_binding(c, d, "", n);
    if (n->kind != TESSEL_YAML_MAPPING)
        return fail(c, TESSEL_EINVAL, n, "data",
                    "a data entry is a file (bound to the first input) or a mapping "
                    "{A: FILE, B: A}%s%s", NULL, NULL);
    if (n->count == 0 || n->count > TESSEL_SPEC_MAX_TENSORS - 1)
        return fail(c, TESSEL_EINVAL, n, "data", "a data mapping binds one to three inputs%s%s",
                    NULL, NULL);
    for (size_t i = 0; i < n->count; i++) {
        if (!is_name(n->keys[i]->value))
            return fail(c, TESSEL_EINVAL, n->keys[i], "data", "'%s' is not a tensor name%s",
                        n->keys[i]->value, NULL);
        int rc = add_binding(c, d, n->keys[i]->value, n->items[i]);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

static int parse_data(sweep_ctx *c, const tessel_yaml_node *n)
{
    tessel_sweep *s = c->s;
    size_t count = n->kind == TESSEL_YAML_SEQUENCE ? n->count : 1;
    if (count == 0)
        return fail(c, TESSEL_EINVAL, n, "data", "an empty data list (leave 'data' out to use "
                    "the spec's own bindings)%s%s", NULL, NULL);
    if (count > SWEEP_MAX_DATA)
        return fail(c, TESSEL_ERANGE, n, "data", "more than 100,000 data entries%s%s", NULL,
                    NULL);
    s->data = tessel_alloc_array(s->alloc, count, sizeof(*s->data));
    if (!s->data)
        return oom(c, "storing the data entries", count * sizeof(*s->data));
    memset(s->data, 0, count * sizeof(*s->data));
    s->ndata = count;
    for (size_t i = 0; i < count && !c->oom; i++)
        parse_data_entry(c, &s->data[i], n->kind == TESSEL_YAML_SEQUENCE ? n->items[i] : n);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Points: the cross product (default), a random sample, or a list */

static int parse_point_list(sweep_ctx *c, const tessel_yaml_node *n)
{
    tessel_sweep *s = c->s;
    if (n->count == 0)
        return fail(c, TESSEL_EINVAL, n, "points", "an empty list of points%s%s", NULL, NULL);
    s->mode = SWEEP_LIST;
    /* Each listed point is a mapping path -> value; every path becomes an
     * axis (added here when 'axes' does not name it). */
    for (size_t p = 0; p < n->count; p++) {
        const tessel_yaml_node *m = n->items[p];
        if (m->kind != TESSEL_YAML_MAPPING)
            return fail(c, TESSEL_EINVAL, m, "points",
                        "a listed point maps spec paths to values%s%s", NULL, NULL);
        for (size_t i = 0; i < m->count; i++) {
            size_t a = 0;
            while (a < s->naxes && strcmp(s->axis[a].path, m->keys[i]->value) != 0)
                a++;
            if (a == s->naxes && parse_axis(c, m->keys[i], m->items[i]))
                return c->first_code;
        }
    }
    s->list = tessel_alloc_array(s->alloc, n->count * (s->naxes ? s->naxes : 1),
                                 sizeof(*s->list));
    if (!s->list)
        return oom(c, "storing the listed points",
                   n->count * (s->naxes ? s->naxes : 1) * sizeof(*s->list));
    for (size_t p = 0; p < n->count; p++) {
        const tessel_yaml_node *m = n->items[p];
        for (size_t a = 0; a < s->naxes; a++) {
            const tessel_yaml_node *v = tessel_yaml_get(m, s->axis[a].path);
            uint32_t idx = SWEEP_NO_VALUE;
            if (v && v->kind != TESSEL_YAML_SCALAR)
                return fail(c, TESSEL_EINVAL, v, s->axis[a].path,
                            "a listed point's values must be scalars%s%s", NULL, NULL);
            for (size_t k = 0; v && k < s->axis[a].nvalues && idx == SWEEP_NO_VALUE; k++)
                if (strcmp(s->axis[a].values[k], v->value) == 0)
                    idx = (uint32_t)k;
            if (v && idx == SWEEP_NO_VALUE) {
                if (add_value(c, &s->axis[a], v->value, v->quoted))
                    return c->first_code ? c->first_code : fail(c, TESSEL_ERANGE, v, "points",
                                                                 "too many values%s%s", NULL,
                                                                 NULL);
                idx = (uint32_t)(s->axis[a].nvalues - 1);
            }
            s->list[p * s->naxes + a] = idx;
        }
    }
    s->per_data = n->count;
    return TESSEL_OK;
}

static int cross_size(sweep_ctx *c, const tessel_yaml_node *at, uint64_t *out)
{
    uint64_t n = 1;
    for (size_t a = 0; a < c->s->naxes; a++) {
        uint64_t v = c->s->axis[a].nvalues;
        if (v == 0)
            return TESSEL_EINVAL; /* reported where the axis was read */
        if (n > SWEEP_MAX_POINTS / v)
            return fail(c, TESSEL_ERANGE, at, "axes", "the cross product of the axes has more "
                        "than 2^40 points; use points: {random: N}%s%s", NULL, NULL);
        n *= v;
    }
    *out = n;
    return TESSEL_OK;
}

static int parse_points(sweep_ctx *c, const tessel_yaml_node *n, const tessel_yaml_node *root)
{
    tessel_sweep *s = c->s;
    if (n && n->kind == TESSEL_YAML_SEQUENCE)
        return parse_point_list(c, n);
    uint64_t cross;
    if (cross_size(c, n ? n : root, &cross))
        return c->first_code;
    s->per_data = cross;
    if (!n || (n->kind == TESSEL_YAML_SCALAR && strcmp(n->value, "all") == 0))
        return TESSEL_OK;
    const tessel_yaml_node *k = tessel_yaml_get(n, "random"), *seed = tessel_yaml_get(n, "seed");
    uint64_t count, seed_value = 1;
    if (n->kind != TESSEL_YAML_MAPPING || !k || n->count != 1u + (seed != NULL))
        return fail(c, TESSEL_EINVAL, n, "points", "points is 'all' (the cross product), "
                    "{random: N, seed: S} or a list of points%s%s", NULL, NULL);
    if (tessel_yaml_u64(k, &count) || count == 0)
        return fail(c, TESSEL_EINVAL, k, "points.random", "a positive whole number of points, "
                    "not '%s'%s", k->kind == TESSEL_YAML_SCALAR ? k->value : "?", NULL);
    if (seed && tessel_yaml_u64(seed, &seed_value))
        return fail(c, TESSEL_EINVAL, seed, "points.seed", "a whole number, not '%s'%s",
                    seed->kind == TESSEL_YAML_SCALAR ? seed->value : "?", NULL);
    if (count >= cross)
        return TESSEL_OK; /* all of them */
    /* Nothing is drawn here: point q is perm(q), computed when it is
     * evaluated, so N is bounded only by the cross product (2^40). */
    s->mode = SWEEP_RANDOM;
    s->per_data = count;
    sweep_perm_init(&s->perm, cross, seed_value);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Small sections */

static int parse_estimator(sweep_ctx *c, const tessel_yaml_node *n)
{
    static const char *const names[] = { "stat", "exact", "analytic" };
    for (int i = 0; n->kind == TESSEL_YAML_SCALAR && i < 3; i++)
        if (strcmp(n->value, names[i]) == 0) {
            c->s->estimator = (tessel_sweep_estimator)i;
            return TESSEL_OK;
        }
    return fail(c, TESSEL_EINVAL, n, "estimator", "the estimator is stat, exact or analytic, "
                "not '%s'%s", n->kind == TESSEL_YAML_SCALAR ? n->value : "?", NULL);
}

static int parse_base(sweep_ctx *c, const tessel_yaml_node *n)
{
    unsigned long long r, col;
    char tail;
    int k = n->kind == TESSEL_YAML_SCALAR ? sscanf(n->value, "%llux%llu%c", &r, &col, &tail) : 0;
    if (k == 1 && n->kind == TESSEL_YAML_SCALAR && sscanf(n->value, "%llu%c", &r, &tail) == 1)
        col = r;
    else if (k != 2)
        return fail(c, TESSEL_EINVAL, n, "stat.base", "the base grid is RxC or N, not '%s'%s",
                    n->kind == TESSEL_YAML_SCALAR ? n->value : "?", NULL);
    if (r == 0 || col == 0)
        return fail(c, TESSEL_EINVAL, n, "stat.base", "base tile edges must be positive%s%s",
                    NULL, NULL);
    c->s->stat.base[0] = r;
    c->s->stat.base[1] = col;
    return TESSEL_OK;
}

static int parse_stat(sweep_ctx *c, const tessel_yaml_node *m)
{
    if (m->kind != TESSEL_YAML_MAPPING)
        return fail(c, TESSEL_EINVAL, m, "stat", "'stat' is a mapping {base: 128x128, sample: "
                    "0.01, seed: 1, output_sample: 0.1}%s%s", NULL, NULL);
    static const char *const keys[] = { "base", "sample", "seed", "output_sample" };
    tessel_stat_options *o = &c->s->stat;
    for (size_t i = 0; i < m->count; i++) {
        const char *k = m->keys[i]->value;
        const tessel_yaml_node *v = m->items[i];
        double f;
        if (strcmp(k, "base") == 0)
            parse_base(c, v);
        else if (strcmp(k, "sample") == 0) {
            if (tessel_yaml_double(v, &f) || !(f > 0 && f <= 1))
                fail(c, TESSEL_EINVAL, v, "stat.sample", "the Corrs sample is a fraction in "
                     "(0, 1]%s%s", NULL, NULL);
            else
                o->sample_fraction = f;
        } else if (strcmp(k, "seed") == 0) {
            if (tessel_yaml_u64(v, &o->seed))
                fail(c, TESSEL_EINVAL, v, "stat.seed", "a whole number%s%s", NULL, NULL);
        } else if (strcmp(k, "output_sample") == 0) {
            if (tessel_yaml_double(v, &f) || !(f >= 0 && f <= 1))
                fail(c, TESSEL_EINVAL, v, "stat.output_sample", "a fraction in [0, 1]%s%s",
                     NULL, NULL);
            else {
                o->output_fraction = f;
                o->output_min_flops = 0;
            }
        } else {
            const char *near = tessel_nearest_word(k, keys, 4);
            fail(c, TESSEL_EINVAL, m->keys[i], "stat",
                 near ? "unknown key '%s'; did you mean '%s'?"
                      : "unknown key '%s'%s (stat has base, sample, seed, output_sample)",
                 k, near ? near : "");
        }
    }
    return TESSEL_OK;
}

static int parse_sets(sweep_ctx *c, const tessel_yaml_node *m)
{
    tessel_sweep *s = c->s;
    if (m->kind != TESSEL_YAML_MAPPING)
        return fail(c, TESSEL_EINVAL, m, "set", "'set' maps spec paths to values%s%s", NULL,
                    NULL);
    s->sets = tessel_alloc_array(s->alloc, m->count ? m->count : 1, sizeof(*s->sets));
    if (!s->sets)
        return oom(c, "storing the fixed overrides", (m->count ? m->count : 1) * sizeof(*s->sets));
    for (size_t i = 0; i < m->count; i++) {
        if (m->items[i]->kind != TESSEL_YAML_SCALAR)
            return fail(c, TESSEL_EINVAL, m->items[i], m->keys[i]->value,
                        "fixed overrides are scalars%s%s", NULL, NULL);
        s->sets[s->nsets] = make_set(c, m->keys[i]->value, m->items[i]->value,
                                     m->items[i]->quoted);
        if (!s->sets[s->nsets])
            return TESSEL_ENOMEM;
        s->nsets++;
    }
    return TESSEL_OK;
}

static int parse_objectives(sweep_ctx *c, const tessel_yaml_node *n)
{
    tessel_sweep *s = c->s;
    size_t count = n->kind == TESSEL_YAML_SEQUENCE ? n->count : 0;
    if (count < 2 || count > TESSEL_SWEEP_MAX_OBJECTIVES)
        return fail(c, TESSEL_EINVAL, n, "pareto", "pareto names two or three summary.csv "
                    "columns, e.g. [energy_pj, cycles]%s%s", NULL, NULL);
    for (size_t i = 0; i < count; i++) {
        const tessel_yaml_node *v = n->items[i];
        if (v->kind != TESSEL_YAML_SCALAR || !v->value[0] || strlen(v->value) >= 64 ||
            strpbrk(v->value, " \t\r\n,"))
            return fail(c, TESSEL_EINVAL, v, "pareto", "an objective is a column name (no "
                        "blanks or commas)%s%s", NULL, NULL);
        if (!(s->objectives[i] = dup_text(c, v->value)))
            return TESSEL_ENOMEM;
        s->objective_view[i] = s->objectives[i];
        s->nobjectives++;
    }
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */

static const char *const top_keys[] = { "name", "spec", "data", "estimator", "stat",
                                        "set", "axes", "points", "pareto" };

static int check_keys(sweep_ctx *c, const tessel_yaml_node *root)
{
    size_t nkeys = sizeof(top_keys) / sizeof(top_keys[0]);
    for (size_t i = 0; i < root->count; i++) {
        const char *k = root->keys[i]->value;
        size_t j = 0;
        while (j < nkeys && strcmp(k, top_keys[j]) != 0)
            j++;
        if (j == nkeys) {
            const char *near = tessel_nearest_word(k, top_keys, nkeys);
            fail(c, TESSEL_EINVAL, root->keys[i], k, near ? "unknown key '%s'; did you mean "
                 "'%s'?" : "unknown key '%s'%s", k, near ? near : "");
        }
    }
    return c->first_code;
}

/* The statistics (stat) and the loaded data (exact) belong to one data
 * entry: its workload is fixed. Density models (analytic) may vary. */
static void check_workload_axes(sweep_ctx *c)
{
    const tessel_sweep *s = c->s;
    if (s->estimator == TESSEL_SWEEP_ANALYTIC || c->oom)
        return; /* out of memory: an axis may lack its path */
    for (size_t a = 0; a < s->naxes; a++)
        if (strncmp(s->axis[a].path, "workload.", 9) == 0) {
            tessel_yaml_node at = { .file = s->axis[a].pos.file, .line = s->axis[a].pos.line,
                                    .column = s->axis[a].pos.column };
            fail(c, TESSEL_EINVAL, &at, s->axis[a].path,
                 "the workload is fixed per data entry with the %s estimator: list data "
                 "files under 'data' instead of an axis on '%s'",
                 s->estimator == TESSEL_SWEEP_STAT ? "stat" : "exact", s->axis[a].path);
        }
}

static void parse_root(sweep_ctx *c, const tessel_yaml_node *root)
{
    tessel_sweep *s = c->s;
    if (!root || root->kind != TESSEL_YAML_MAPPING) {
        fail(c, TESSEL_EINVAL, root, "", "a sweep file is a mapping with 'spec', 'axes' and "
             "optionally 'data', 'estimator', 'stat', 'set', 'points', 'pareto'%s%s", NULL,
             NULL);
        return;
    }
    check_keys(c, root);
    const tessel_yaml_node *spec = tessel_yaml_get(root, "spec"), *n;
    if (!spec || spec->kind != TESSEL_YAML_SCALAR || !spec->value[0])
        fail(c, TESSEL_EINVAL, spec ? spec : root, "spec", "'spec' names the base spec file "
             "(relative to the sweep file)%s%s", NULL, NULL);
    else
        s->spec_path = join_dir(c, spec->value);
    if ((n = tessel_yaml_get(root, "estimator")))
        parse_estimator(c, n);
    if ((n = tessel_yaml_get(root, "stat")))
        parse_stat(c, n);
    if ((n = tessel_yaml_get(root, "set")) && !c->oom)
        parse_sets(c, n);
    if ((n = tessel_yaml_get(root, "data")) && !c->oom)
        parse_data(c, n);
    if ((n = tessel_yaml_get(root, "axes")) && !c->oom)
        parse_axes(c, n);
    if ((n = tessel_yaml_get(root, "pareto")) && !c->oom)
        parse_objectives(c, n);
    if (!c->oom)
        parse_points(c, tessel_yaml_get(root, "points"), root);
    check_workload_axes(c);
}

static uint64_t fingerprint(const tessel_sweep *s, const void *data, size_t size)
{
    tessel_checksum ck;
    tessel_checksum_init(&ck);
    tessel_checksum_update(&ck, data, size);
    /* A random sample's points depend on the sampler as well as the seed:
     * since they are drawn by a permutation (not Floyd's sampling), a
     * sweep.state of the old sampler must not be resumed. */
    if (s->mode == SWEEP_RANDOM)
        tessel_checksum_update(&ck, "sampler feistel-6", 17);
    /* The base spec's text: a changed spec makes old outputs stale. Only
     * a regular file is read, and at most 64 MiB of it (a spec path naming
     * a device or a pipe must not hang the load). */
    struct stat sb;
    FILE *f = s->spec_path && stat(s->spec_path, &sb) == 0 && S_ISREG(sb.st_mode)
                  ? fopen(s->spec_path, "rb")
                  : NULL;
    if (f) {
        char buf[8192];
        size_t n, total = 0;
        while (total < (64u << 20) && (n = fread(buf, 1, sizeof(buf), f)) > 0) {
            tessel_checksum_update(&ck, buf, n);
            total += n;
        }
        fclose(f);
    }
    return tessel_checksum_final(&ck);
}

static char *dir_of(const tessel_allocator *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (slash && n == 0)
        n = 1; /* "/x.yaml" */
    char *d = tessel_alloc(a, n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

/* Out of memory before there is a context to record it in. */
static int out_of_memory(tessel_diag_list *errors, const char *name, size_t bytes)
{
    if (errors)
        tessel_diag_list_add(errors, TESSEL_ENOMEM, name, 0, 0, "", "out of memory while "
                             "reading the sweep file (asked for %zu bytes)", bytes);
    return TESSEL_ENOMEM;
}

static int sweep_build(const char *name, const void *data, size_t size, int from_file,
                       const tessel_allocator *a, tessel_sweep **out, tessel_diag_list *errors)
{
    *out = NULL;
    tessel_sweep *s = tessel_alloc(a, sizeof(*s));
    if (!s)
        return out_of_memory(errors, name, sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->alloc = a;
    tessel_stat_options_init(&s->stat);
    sweep_ctx c = { s, errors, 0, 0 };
    s->path = tessel_strdup(a, name);
    s->dir = from_file ? dir_of(a, name) : tessel_strdup(a, "");
    if (!s->path || !s->dir) {
        tessel_sweep_free(&s);
        return out_of_memory(errors, name, strlen(name) + 1);
    }
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_yaml_parse(name, data, size, a, &doc, &d);
    if (rc) {
        if (errors)
            tessel_diag_list_push(errors, &d);
        tessel_sweep_free(&s);
        return rc;
    }
    parse_root(&c, tessel_yaml_root(doc));
    /* Positions outlive the YAML tree: they point at the sweep's own name. */
    for (size_t i = 0; i < s->naxes; i++)
        s->axis[i].pos.file = s->path;
    for (size_t i = 0; i < s->ndata; i++)
        s->data[i].pos.file = s->path;
    tessel_yaml_free(&doc);
    if (c.first_code) {
        tessel_sweep_free(&s);
        return c.oom ? TESSEL_ENOMEM : c.first_code;
    }
    s->fingerprint = fingerprint(s, data, size);
    *out = s;
    return TESSEL_OK;
}

int tessel_sweep_parse(const char *name, const void *data, size_t size, const tessel_allocator *a,
                       tessel_sweep **out, tessel_diag_list *errors)
{
    return sweep_build(name ? name : "<sweep>", data ? data : "", size, 0, a, out, errors);
}

int tessel_sweep_load(const char *path, const tessel_allocator *a, tessel_sweep **out,
                      tessel_diag_list *errors)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errors)
            tessel_diag_list_add(errors, TESSEL_EIO, path, 0, 0, "", "cannot open the sweep "
                                 "file");
        return TESSEL_EIO;
    }
    char *buf = NULL;
    size_t size = 0, cap = 0, n;
    int rc = TESSEL_OK;
    for (;;) {
        if (size == cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *nb = ncap > (64u << 20) ? NULL : tessel_realloc_array(a, buf, ncap, 1);
            if (!nb) {
                rc = ncap > (64u << 20) ? TESSEL_ERANGE : TESSEL_ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        n = fread(buf + size, 1, cap - size, f);
        size += n;
        if (n == 0)
            break;
    }
    if (!rc && ferror(f))
        rc = TESSEL_EIO;
    fclose(f);
    if (rc == TESSEL_ENOMEM) {
        if (errors)
            tessel_diag_list_add(errors, rc, path, 0, 0, "", "out of memory while reading the "
                                 "sweep file (asked for %zu bytes)", cap ? 2 * cap : 65536);
    } else if (rc) {
        if (errors)
            tessel_diag_list_add(errors, rc, path, 0, 0, "", "%s",
                                 rc == TESSEL_ERANGE ? "a sweep file over 64 MiB"
                                                     : tessel_strerror(rc));
    } else {
        rc = sweep_build(path, buf, size, 1, a, out, errors);
    }
    tessel_dealloc(a, buf);
    return rc;
}

void tessel_sweep_free(tessel_sweep **sp)
{
    if (!sp || !*sp)
        return;
    tessel_sweep *s = *sp;
    const tessel_allocator *a = s->alloc;
    for (size_t i = 0; i < s->naxes; i++) {
        for (size_t k = 0; k < s->axis[i].nvalues; k++) {
            tessel_dealloc(a, s->axis[i].values[k]);
            tessel_dealloc(a, s->axis[i].sets[k]);
        }
        tessel_dealloc(a, s->axis[i].values);
        tessel_dealloc(a, s->axis[i].sets);
        tessel_dealloc(a, s->axis[i].path);
    }
    for (size_t i = 0; i < s->ndata; i++)
        for (size_t b = 0; b < s->data[i].nbindings; b++)
            tessel_dealloc(a, s->data[i].binding[b].value);
    for (size_t i = 0; i < s->nsets; i++)
        tessel_dealloc(a, s->sets[i]);
    for (size_t i = 0; i < s->nobjectives; i++)
        tessel_dealloc(a, s->objectives[i]);
    tessel_dealloc(a, s->sets);
    tessel_dealloc(a, s->data);
    tessel_dealloc(a, s->list);
    tessel_dealloc(a, s->spec_path);
    tessel_dealloc(a, s->dir);
    tessel_dealloc(a, s->path);
    tessel_dealloc(a, s);
    *sp = NULL;
}

/* ------------------------------------------------------------------ */
/* Accessors */

const char *tessel_sweep_spec_path(const tessel_sweep *s)
{
    return s->spec_path;
}

tessel_sweep_estimator tessel_sweep_get_estimator(const tessel_sweep *s)
{
    return s->estimator;
}

size_t tessel_sweep_data_count(const tessel_sweep *s)
{
    return s->ndata ? s->ndata : 1;
}

size_t tessel_sweep_axis_count(const tessel_sweep *s)
{
    return s->naxes;
}

const char *tessel_sweep_axis_path(const tessel_sweep *s, size_t axis)
{
    return axis < s->naxes ? s->axis[axis].path : NULL;
}

uint64_t tessel_sweep_points_per_data(const tessel_sweep *s)
{
    return s->per_data;
}

uint64_t tessel_sweep_point_count(const tessel_sweep *s)
{
    return s->per_data * tessel_sweep_data_count(s);
}

uint64_t tessel_sweep_fingerprint(const tessel_sweep *s)
{
    return s->fingerprint;
}

size_t tessel_sweep_objectives(const tessel_sweep *s, const char *const **names)
{
    *names = s->objective_view;
    return s->nobjectives;
}

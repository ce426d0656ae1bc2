/* The merged YAML tree -> tessel_spec, checking everything on the way.
 * Every problem is recorded and the walk goes on, so one run shows all
 * the mistakes of a spec; parts that depend on a broken part (e.g. tile
 * keys when the einsum does not parse) are skipped rather than reported
 * twice. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spec_internal.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define BITS_MAX 4096u

typedef struct vctx {
    spec_ctx *c;
    tessel_spec *s;
    int einsum_ok;
    const tessel_yaml_node *level_node[TESSEL_SPEC_MAX_LEVELS];
    const tessel_yaml_node *tensors_node[TESSEL_SPEC_MAX_LEVELS];
} vctx;

static const char *const top_keys[] = { "name", "include", "workload", "architecture",
                                        "mapping", "template", "template_options" };
static const char *const workload_keys[] = { "einsum", "data", "dims" };
static const char *const arch_keys[] = { "technology", "energy_tables", "levels", "compute" };
static const char *const level_keys[] = { "name",       "capacity",    "bandwidth",
                                          "instances",  "word_bits",   "value_bits",
                                          "coord_bits", "offset_bits", "run_bits",
                                          "format",     "class",       "attributes",
                                          "tensors" };
static const char *const tensor_level_keys[] = { "partition", "format", "skip_on", "gate_on" };
static const char *const compute_keys[] = { "pes",   "macs_per_pe", "clock",
                                            "class", "attributes",  "intersect" };
static const char *const component_keys[] = { "class", "attributes" };
static const char *const mapping_keys[] = { "order", "tile" };

/* Format names and their tessel_format numbers (stats.h). */
static const char *const format_names[] = { "coo", "csr", "cp", "bitmap", "b",
                                            "uop-cp", "uop", "rle" };
static const int format_codes[] = { 0, 1, 1, 2, 2, 3, 3, 4 };

/* ------------------------------------------------------------------ */
/* Helpers */

/* Appends src to out (capacity n), truncating: field paths are for
 * messages, and a cut one still says where. */
static void append(char *out, size_t n, const char *src)
{
    size_t len = strlen(out), add = strlen(src);
    if (len + add >= n)
        add = n - 1 - len;
    memcpy(out + len, src, add);
    out[len + add] = '\0';
}

/* out = "a.b" ("b" when a is empty). */
static void join(char *out, size_t n, const char *a, const char *b)
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
static const char *shown(const tessel_yaml_node *n)
{
    return n && n->kind == TESSEL_YAML_SCALAR ? n->value : "";
}

static int is_string(const tessel_yaml_node *n)
{
    return n && n->kind == TESSEL_YAML_SCALAR && !tessel_yaml_is_null(n) &&
           strlen(n->value) == n->length;
}

static int err(vctx *v, const tessel_yaml_node *n, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static int err(vctx *v, const tessel_yaml_node *n, const char *field, const char *fmt, ...)
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
static void check_keys(vctx *v, const tessel_yaml_node *m, const char *field,
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
        join(f, sizeof(f), field, k->value);
        const char *near = tessel_nearest_word(k->value, valid, n);
        if (near)
            err(v, k, f, "unknown key '%.60s' (did you mean '%s'?)", k->value, near);
        else
            err(v, k, f, "unknown key '%.60s'", k->value);
    }
}

/* A mapping, or NULL when absent or null; anything else is an error. */
static const tessel_yaml_node *mapping_of(vctx *v, const tessel_yaml_node *n, const char *field,
                                          const char *name)
{
    if (!n || tessel_yaml_is_null(n))
        return NULL;
    if (n->kind != TESSEL_YAML_MAPPING) {
        err(v, n, field, "'%s' must be a mapping", name);
        return NULL;
    }
    return n;
}

static int read_string(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                       char *out, size_t cap)
{
    if (!is_string(n) || n->length == 0)
        return err(v, n, field, "'%s' must be a non-empty string", name);
    if (n->length >= cap)
        return err(v, n, field, "'%s' is longer than %zu characters", name, cap - 1);
    memcpy(out, n->value, n->length + 1);
    return TESSEL_OK;
}

static int read_size(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                     uint64_t *out)
{
    uint64_t b = 0;
    int rc = n && n->kind == TESSEL_YAML_SCALAR ? tessel_parse_size(n->value, &b)
                                               : TESSEL_EPARSE;
    if (n && n->kind == TESSEL_YAML_SCALAR && n->value[0] == '-')
        return err(v, n, field, "'%s' must be greater than zero", name);
    if (rc == TESSEL_ERANGE)
        return err(v, n, field, "'%s' is too large (less than 16 EiB)", name);
    if (rc || strlen(n->value) != n->length)
        return err(v, n, field, "'%s' must be a size such as 256KiB", name);
    if (b == 0)
        return err(v, n, field, "'%s' must be greater than zero", name);
    *out = b;
    return TESSEL_OK;
}

static int read_count(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                      uint64_t max, unsigned *out)
{
    uint64_t x = 0;
    if (tessel_yaml_u64(n, &x) || x == 0)
        return err(v, n, field, "'%s' must be a positive integer", name);
    if (x > max)
        return err(v, n, field, "'%s' must be at most %llu", name, (unsigned long long)max);
    *out = (unsigned)x;
    return TESSEL_OK;
}

static int read_positive(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                         const char *what, double *out)
{
    double x = 0;
    if (tessel_yaml_double(n, &x) || !(x > 0))
        return err(v, n, field, "'%s' must be a positive number (%s)", name, what);
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
        return err(v, n, field, "a per-rank format lists 1 to %u ranks, outermost first",
                   TESSEL_SPEC_MAX_INDICES);
    int bad = 0;
    for (size_t i = 0; i < n->count; i++) {
        const tessel_yaml_node *r = n->items[i];
        int code = -1;
        for (size_t f = 0; is_string(r) && f < N_OF(rank_format_names); f++)
            if (strcasecmp(r->value, rank_format_names[f]) == 0)
                code = (int)f;
        if (code >= 0) {
            ranks[i] = (unsigned char)code;
            continue;
        }
        bad = 1;
        const char *near = is_string(r) ? tessel_nearest_word(r->value, rank_format_names,
                                                              N_OF(rank_format_names))
                                        : NULL;
        if (near)
            err(v, r, field, "unknown rank format '%.60s' (did you mean '%s'?)", r->value, near);
        else
            err(v, r, field, "unknown rank format '%.60s' (rank formats: UOP, CP, B, RLE, UB)",
                shown(r));
    }
    if (bad)
        return TESSEL_EINVAL;
    *nranks = (unsigned)n->count;
    *out = TESSEL_SPEC_FORMAT_RANKS;
    return TESSEL_OK;
}

static int format_code(vctx *v, const tessel_yaml_node *n, const char *field, int *out,
                       unsigned *nranks, unsigned char *ranks)
{
    if (n->kind == TESSEL_YAML_SEQUENCE)
        return rank_formats(v, n, field, out, nranks, ranks);
    if (is_string(n)) {
        for (size_t i = 0; i < N_OF(format_names); i++) {
            if (strcasecmp(n->value, format_names[i]) == 0) {
                *out = format_codes[i];
                return TESSEL_OK;
            }
        }
        const char *near = tessel_nearest_word(n->value, format_names, N_OF(format_names));
        if (near)
            return err(v, n, field, "unknown format '%.60s' (did you mean '%s'?)", n->value,
                       near);
    }
    return err(v, n, field,
               "unknown format '%.60s' (formats: coo, csr, bitmap, uop-cp, rle, or a list of "
               "rank formats such as [UOP, CP])", shown(n));
}

static tessel_spec_pos pos_of(const tessel_yaml_node *n)
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
static void index_list(const tessel_spec *s, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < s->workload.nindices && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "",
                                s->workload.index_name[i]);
}

static void tensor_list(const tessel_spec *s, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (unsigned t = 0; t < s->workload.ntensors && len < n; t++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", t ? ", " : "",
                                s->workload.tensor[t].name);
}

/* Names as a candidate array for tessel_nearest_word. */
static size_t index_names(const tessel_spec *s, const char **out)
{
    for (unsigned i = 0; i < s->workload.nindices; i++)
        out[i] = s->workload.index_name[i];
    return s->workload.nindices;
}

static size_t tensor_names(const tessel_spec *s, const char **out)
{
    for (unsigned t = 0; t < s->workload.ntensors; t++)
        out[t] = s->workload.tensor[t].name;
    return s->workload.ntensors;
}

/* ------------------------------------------------------------------ */
/* Workload */

static void read_einsum(vctx *v, const tessel_yaml_node *w)
{
    tessel_spec_workload *wl = &v->s->workload;
    const tessel_yaml_node *e = tessel_yaml_get(w, "einsum");
    if (!e) {
        err(v, w, "workload.einsum", "missing 'einsum' (e.g. \"Z[i,j] = A[i,k] * B[k,j]\")");
        return;
    }
    if (!is_string(e)) {
        err(v, e, "workload.einsum", "'einsum' must be a string such as \"Z[i,j] = A[i,k] * B[k,j]\"");
        return;
    }
    size_t offset = 0;
    char msg[256];
    if (spec_einsum_parse(e->value, wl, &offset, msg, sizeof(msg))) {
        /* Point inside the string: past the opening quote when quoted. */
        spec_error_at(v->c, TESSEL_EINVAL, e->file, e->line,
                      e->column + (e->quoted ? 1u : 0u) + (uint32_t)offset, "workload.einsum",
                      "%s", msg);
        wl->ntensors = 0;
        wl->nindices = 0;
        return;
    }
    if (!(wl->einsum = tessel_strdup(v->c->alloc, e->value))) {
        spec_oom(v->c);
        return;
    }
    /* The einsum lands in reports: no trailing newline from `einsum: >`. */
    size_t len = strlen(wl->einsum);
    while (len && (wl->einsum[len - 1] == '\n' || wl->einsum[len - 1] == '\r' ||
                   wl->einsum[len - 1] == ' ' || wl->einsum[len - 1] == '\t'))
        wl->einsum[--len] = '\0';
    for (unsigned t = 0; t < wl->ntensors; t++)
        wl->tensor[t].pos = pos_of(e);
    v->einsum_ok = 1;
}

/* A binding that names another tensor ("A", "A^T"): that tensor's number,
 * else -1. */
static int binding_target(const tessel_spec *s, const char *text, int *transposed)
{
    size_t len = strlen(text);
    *transposed = 0;
    if (len > 2 && strcmp(text + len - 2, "^T") == 0) {
        *transposed = 1;
        len -= 2;
    }
    for (unsigned t = 1; t < s->workload.ntensors; t++)
        if (strlen(s->workload.tensor[t].name) == len &&
            strncmp(s->workload.tensor[t].name, text, len) == 0)
            return (int)t;
    return -1;
}

static const char *const model_keys[] = { "model", "rows", "cols", "density", "nnz",
                                           "bandwidth", "n", "m", "seed" };
static const char *const model_kinds[] = { "uniform", "banded", "nm" };

static int read_u64(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                    uint64_t *out)
{
    uint64_t x = 0;
    if (tessel_yaml_u64(n, &x) || x == 0)
        return err(v, n, field, "'%s' must be a positive integer", name);
    *out = x;
    return TESSEL_OK;
}

/* data: {A: {model: uniform, rows: R, cols: C, density: D | nnz: N}},
 * {model: banded, rows, cols, bandwidth, density}, {model: nm, rows, cols,
 * n, m}; seed optional. */
static void read_model(vctx *v, const tessel_yaml_node *m, const char *field,
                       tessel_spec_tensor *st)
{
    check_keys(v, m, field, model_keys, N_OF(model_keys));
    char f[160];
    const tessel_yaml_node *n = tessel_yaml_get(m, "model");
    join(f, sizeof(f), field, "model");
    st->model.present = 1;
    st->model.kind = -1;
    for (size_t i = 0; n && is_string(n) && i < N_OF(model_kinds); i++)
        if (strcmp(n->value, model_kinds[i]) == 0)
            st->model.kind = (int)i;
    if (!n) {
        err(v, m, f, "a density model needs 'model' (uniform, banded or nm)");
        return;
    }
    if (st->model.kind < 0) {
        const char *near = is_string(n) ? tessel_nearest_word(n->value, model_kinds,
                                                               N_OF(model_kinds))
                                        : NULL;
        if (near)
            err(v, n, f, "unknown density model '%.60s' (did you mean '%s'?)", n->value, near);
        else
            err(v, n, f, "unknown density model '%.60s' (uniform, banded or nm)", shown(n));
        return;
    }
    if (st->rank != 2)
        err(v, m, field, "density models describe matrices, but '%s' has rank %u", st->name,
            st->rank);
    static const char *const dims[2] = { "rows", "cols" };
    uint64_t *dim_out[2] = { &st->model.rows, &st->model.cols };
    for (int d = 0; d < 2; d++) {
        join(f, sizeof(f), field, dims[d]);
        if ((n = tessel_yaml_get(m, dims[d])))
            read_u64(v, n, f, dims[d], dim_out[d]);
        else
            err(v, m, f, "the %s model needs '%s'", model_kinds[st->model.kind], dims[d]);
    }
    const tessel_yaml_node *dn = tessel_yaml_get(m, "density");
    join(f, sizeof(f), field, "density");
    if (dn && !read_positive(v, dn, f, "density", "a fraction in (0, 1]", &st->model.density) &&
        st->model.density > 1)
        err(v, dn, f, "'density' must be at most 1");
    if ((n = tessel_yaml_get(m, "seed"))) {
        join(f, sizeof(f), field, "seed");
        read_u64(v, n, f, "seed", &st->model.seed);
    } else {
        st->model.seed = 1;
    }
    switch (st->model.kind) {
    case 0:
        if ((n = tessel_yaml_get(m, "nnz"))) {
            join(f, sizeof(f), field, "nnz");
            read_u64(v, n, f, "nnz", &st->model.nnz);
        } else if (!dn) {
            err(v, m, field, "the uniform model needs 'density' or 'nnz'");
        }
        break;
    case 1:
        if ((n = tessel_yaml_get(m, "bandwidth"))) {
            uint64_t bw = 0;
            join(f, sizeof(f), field, "bandwidth");
            if (tessel_yaml_u64(n, &bw))
                err(v, n, f, "'bandwidth' must be an integer >= 0");
            st->model.bandwidth = bw;
        } else {
            err(v, m, field, "the banded model needs 'bandwidth'");
        }
        if (!dn)
            err(v, m, field, "the banded model needs 'density' (the keep probability)");
        break;
    default: {
        const tessel_yaml_node *nn = tessel_yaml_get(m, "n"), *mm = tessel_yaml_get(m, "m");
        join(f, sizeof(f), field, "n");
        if (nn)
            read_count(v, nn, f, "n", 1u << 16, &st->model.n);
        join(f, sizeof(f), field, "m");
        if (mm)
            read_count(v, mm, f, "m", 1u << 16, &st->model.m);
        if (!nn || !mm)
            err(v, m, field, "the nm model needs 'n' and 'm'");
        else if (st->model.n > st->model.m)
            err(v, nn, field, "'n' (%u) must be at most 'm' (%u)", st->model.n, st->model.m);
        break;
    }
    }
}

/* workload.data: binds each input to a file, another tensor (optionally ^T), dense, or
 * a density model; every error collected. */
static void read_data(vctx *v, const tessel_yaml_node *w)
{
    tessel_spec *s = v->s;
    tessel_spec_workload *wl = &s->workload;
    const tessel_yaml_node *data = mapping_of(v, tessel_yaml_get(w, "data"), "workload.data",
                                              "data");
    const tessel_yaml_node *bound[TESSEL_SPEC_MAX_TENSORS] = { NULL };
    int named[TESSEL_SPEC_MAX_TENSORS] = { 0 };
    for (size_t i = 0; data && i < data->count; i++) {
        const tessel_yaml_node *k = data->keys[i], *val = data->items[i];
        char f[128];
        join(f, sizeof(f), "workload.data", k->value);
        int t = tessel_spec_tensor_index(s, k->value);
        if (t < 0) {
            const char *cand[TESSEL_SPEC_MAX_TENSORS];
            size_t n = tensor_names(s, cand);
            const char *near = tessel_nearest_word(k->value, cand + 1, n - 1);
            if (near)
                err(v, k, f, "'%.60s' is not an input of the einsum (did you mean '%s'?)",
                    k->value, near);
            else
                err(v, k, f, "'%.60s' is not an input of the einsum", k->value);
            continue;
        }
        if (t == 0) {
            err(v, k, f, "'%s' is the output of the einsum: only inputs are bound to data",
                k->value);
            continue;
        }
        named[t] = 1; /* a broken binding is reported once, not also as missing */
        if (val->kind == TESSEL_YAML_MAPPING) {
            read_model(v, val, f, &wl->tensor[t]);
            char *label = tessel_strdup(v->c->alloc, "model");
            if (!label) {
                spec_oom(v->c);
                return;
            }
            tessel_dealloc(v->c->alloc, wl->tensor[t].data);
            wl->tensor[t].data = label;
            wl->tensor[t].pos = pos_of(val);
            bound[t] = val;
            continue;
        }
        if (!is_string(val) || val->length == 0) {
            err(v, val, f, "'%s' must be a file name, another input's name, NAME^T, dense, or a density "
                "model such as {model: uniform, rows: 1000, cols: 1000, density: 0.01}",
                k->value);
            continue;
        }
        int transposed = 0;
        int target = binding_target(s, val->value, &transposed);
        char *stored = NULL;
        if (target == t) {
            err(v, val, f, "'%s' is bound to itself", k->value);
            continue;
        } else if (target > 0) {
            unsigned ra = wl->tensor[t].rank, rb = wl->tensor[target].rank;
            if (transposed && (ra != 2 || rb != 2)) {
                err(v, val, f, "'%s^T' needs two matrices, but '%s' has rank %u and '%s' %u",
                    wl->tensor[target].name, k->value, ra, wl->tensor[target].name, rb);
                continue;
            }
            if (ra != rb) {
                err(v, val, f, "'%s' (rank %u) is bound to '%s' of rank %u", k->value, ra,
                    wl->tensor[target].name, rb);
                continue;
            }
            stored = tessel_strdup(v->c->alloc, val->value);
        } else if (strcmp(val->value, "dense") == 0) {
            stored = tessel_strdup(v->c->alloc, val->value);
        } else {
            /* A file: relative to the spec file that named it (--set and
             * in-memory specs: to the current directory). */
            stored = spec_resolve(v->c, val->file, val->value);
        }
        if (!stored) {
            spec_oom(v->c);
            return;
        }
        tessel_dealloc(v->c->alloc, wl->tensor[t].data);
        wl->tensor[t].data = stored;
        wl->tensor[t].pos = pos_of(val);
        bound[t] = val;
    }
    for (unsigned t = 1; t < wl->ntensors; t++) {
        if (!wl->tensor[t].data && !named[t]) {
            char f[128];
            join(f, sizeof(f), "workload.data", wl->tensor[t].name);
            err(v, data ? data : w, f,
                "input tensor '%s' has no data (add workload.data.%s, or --tensor %s=FILE)",
                wl->tensor[t].name, wl->tensor[t].name, wl->tensor[t].name);
        }
    }
    /* Bindings by name must end at a file or `dense`. */
    for (unsigned t = 1; t < wl->ntensors; t++) {
        int cur = (int)t, steps = 0, transposed;
        while (cur > 0 && wl->tensor[cur].data && steps <= (int)wl->ntensors) {
            cur = binding_target(s, wl->tensor[cur].data, &transposed);
            steps++;
        }
        if (cur > 0 && wl->tensor[cur].data && bound[t]) {
            char f[128];
            join(f, sizeof(f), "workload.data", wl->tensor[t].name);
            err(v, bound[t], f, "the data of '%s' refer back to themselves through other "
                "tensors' bindings", wl->tensor[t].name);
        }
    }
}

static void read_dims(vctx *v, const tessel_yaml_node *w)
{
    tessel_spec *s = v->s;
    const tessel_yaml_node *dims = mapping_of(v, tessel_yaml_get(w, "dims"), "workload.dims",
                                              "dims");
    for (size_t i = 0; dims && i < dims->count; i++) {
        const tessel_yaml_node *k = dims->keys[i];
        char f[128];
        join(f, sizeof(f), "workload.dims", k->value);
        int idx = tessel_spec_index(s, k->value);
        if (idx < 0) {
            const char *cand[TESSEL_SPEC_MAX_INDICES];
            char list[256];
            index_list(s, list, sizeof(list));
            const char *near = tessel_nearest_word(k->value, cand, index_names(s, cand));
            if (near)
                err(v, k, f, "'%.60s' is not an index of the einsum (did you mean '%s'?)",
                    k->value, near);
            else
                err(v, k, f, "'%.60s' is not an index of the einsum (indices: %s)", k->value,
                    list);
            continue;
        }
        uint64_t x = 0;
        if (tessel_yaml_u64(dims->items[i], &x) || x == 0 || x > UINT32_MAX)
            err(v, dims->items[i], f, "'%s' must be an extent from 1 to 4294967295",
                k->value);
        else
            s->workload.extent[idx] = x;
    }
}

static void read_workload(vctx *v, const tessel_yaml_node *root)
{
    const tessel_yaml_node *w = tessel_yaml_get(root, "workload");
    if (!w) {
        err(v, root, "workload", "missing 'workload' (the einsum and its data)");
        return;
    }
    if (!(w = mapping_of(v, w, "workload", "workload")))
        return;
    v->s->workload.pos = pos_of(w);
    check_keys(v, w, "workload", workload_keys, N_OF(workload_keys));
    read_einsum(v, w);
    if (!v->einsum_ok)
        return;
    read_data(v, w);
    read_dims(v, w);
}

/* ------------------------------------------------------------------ */
/* Architecture */

static void read_component(vctx *v, const tessel_yaml_node *m, const char *field,
                           tessel_spec_component *comp)
{
    char f[128];
    const tessel_yaml_node *cls = tessel_yaml_get(m, "class");
    join(f, sizeof(f), field, "class");
    comp->pos = pos_of(cls ? cls : m);
    if (!cls)
        err(v, m, f, "missing energy class ('class')");
    else
        read_string(v, cls, f, "class", comp->cls, sizeof(comp->cls));
    join(f, sizeof(f), field, "attributes");
    comp->attributes = mapping_of(v, tessel_yaml_get(m, "attributes"), f, "attributes");
}

/* skip_on / gate_on: a tensor name or a list of them -> mask. */
static int read_mask(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                     unsigned self, uint32_t *mask)
{
    const tessel_spec *s = v->s;
    uint32_t m = 0;
    size_t count = n->kind == TESSEL_YAML_SEQUENCE ? n->count : 1;
    if (n->kind == TESSEL_YAML_MAPPING)
        return err(v, n, field, "'%s' must be a list of tensor names", name);
    if (n->kind == TESSEL_YAML_SCALAR && tessel_yaml_is_null(n))
        count = 0;
    int rc = TESSEL_OK;
    for (size_t i = 0; i < count; i++) {
        const tessel_yaml_node *it = n->kind == TESSEL_YAML_SEQUENCE ? n->items[i] : n;
        int t = is_string(it) ? tessel_spec_tensor_index(s, it->value) : -1;
        if (t < 0) {
            char list[256];
            tensor_list(s, list, sizeof(list));
            rc = err(v, it, field, "'%.60s' in '%s' is not a tensor of the einsum (%s)",
                     shown(it), name, list);
            continue;
        }
        if ((unsigned)t == self) {
            rc = err(v, it, field, "a tensor cannot %s on itself",
                     strcmp(name, "skip_on") == 0 ? "skip" : "gate");
            continue;
        }
        m |= 1u << t;
    }
    if (!rc)
        *mask = m;
    return rc;
}

/* partition: "25%", 0.25 (a plain number <= 1) or a size. */
static void read_partition(vctx *v, const tessel_yaml_node *n, const char *field,
                           tessel_spec_tensor_level *tl)
{
    static const char *const shape =
        "'partition' must be a percentage (25%), a fraction (0.25) or a size (1MiB)";
    if (!n || n->kind != TESSEL_YAML_SCALAR || strlen(n->value) != n->length) {
        err(v, n, field, "%s", shape);
        return;
    }
    const char *text = n->value;
    size_t len = n->length;
    if (len > 1 && text[len - 1] == '%') {
        char *end = NULL;
        double pct = strtod(text, &end);
        if (end != text + len - 1 || !(text[0] >= '0' && text[0] <= '9') || !isfinite(pct)) {
            err(v, n, field, "%s", shape);
        } else if (!(pct > 0) || pct > 100) {
            err(v, n, field, "'partition' must be more than 0%% and at most 100%%");
        } else {
            tl->partition_fraction = pct / 100.0;
        }
        return;
    }
    double x = 0;
    if (!tessel_yaml_double(n, &x) && x <= 1) {
        if (!(x > 0))
            err(v, n, field, "'partition' must be greater than zero");
        else
            tl->partition_fraction = x;
        return;
    }
    uint64_t b = 0;
    if (text[0] == '-') {
        err(v, n, field, "'partition' must be greater than zero");
    } else if (tessel_parse_size(text, &b)) {
        err(v, n, field, "%s", shape);
    } else {
        tl->partition_bytes = b; /* > 1 here: 0 and 1 read as fractions */
    }
}

static void read_level_tensors(vctx *v, unsigned l, const tessel_yaml_node *lv,
                               const char *field)
{
    tessel_spec *s = v->s;
    char f[128];
    join(f, sizeof(f), field, "tensors");
    const tessel_yaml_node *ts = mapping_of(v, tessel_yaml_get(lv, "tensors"), f, "tensors");
    v->tensors_node[l] = ts;
    if (!ts || !v->einsum_ok)
        return;
    for (size_t i = 0; i < ts->count; i++) {
        const tessel_yaml_node *k = ts->keys[i];
        char tf[128];
        join(tf, sizeof(tf), f, k->value);
        int t = tessel_spec_tensor_index(s, k->value);
        if (t < 0) {
            const char *cand[TESSEL_SPEC_MAX_TENSORS];
            const char *near = tessel_nearest_word(k->value, cand, tensor_names(s, cand));
            if (near)
                err(v, k, tf, "'%.60s' is not a tensor of the einsum (did you mean '%s'?)",
                    k->value, near);
            else
                err(v, k, tf, "'%.60s' is not a tensor of the einsum", k->value);
            continue;
        }
        tessel_spec_tensor_level *tl = &s->level[l].tensor[t];
        tl->pos = pos_of(ts->items[i]);
        const tessel_yaml_node *m = mapping_of(v, ts->items[i], tf, k->value);
        if (!m)
            continue;
        check_keys(v, m, tf, tensor_level_keys, N_OF(tensor_level_keys));
        char kf[128];
        const tessel_yaml_node *n;
        if ((n = tessel_yaml_get(m, "partition"))) {
            join(kf, sizeof(kf), tf, "partition");
            read_partition(v, n, kf, tl);
        }
        if ((n = tessel_yaml_get(m, "format"))) {
            join(kf, sizeof(kf), tf, "format");
            format_code(v, n, kf, &tl->format, &tl->nranks, tl->ranks);
        }
        if ((n = tessel_yaml_get(m, "skip_on"))) {
            join(kf, sizeof(kf), tf, "skip_on");
            read_mask(v, n, kf, "skip_on", (unsigned)t, &tl->sparse.skip_on);
        }
        if ((n = tessel_yaml_get(m, "gate_on"))) {
            join(kf, sizeof(kf), tf, "gate_on");
            read_mask(v, n, kf, "gate_on", (unsigned)t, &tl->sparse.gate_on);
        }
    }
}

static void level_defaults(tessel_spec *s, tessel_spec_level *L)
{
    L->instances = 1;
    L->word_bits = 64;
    L->value_bits = 64;
    L->coord_bits = 32;
    L->offset_bits = 32;
    L->run_bits = 32;
    L->format = 1;
    uint32_t inputs = 0;
    for (unsigned t = 1; t < s->workload.ntensors; t++)
        inputs |= 1u << t;
    for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
        L->tensor[t].format = -1;
        /* docs/semantics.md traffic rules: nothing moves for an ineffectual
         * iteration, i.e. every input skips on the others, the output on
         * all inputs. */
        L->tensor[t].sparse.skip_on = t == 0 ? inputs : inputs & ~(1u << t);
        L->tensor[t].sparse.gate_on = 0;
    }
    for (unsigned i = 0; i < TESSEL_SPEC_MAX_INDICES; i++)
        L->order[i] = i;
}

static void read_level(vctx *v, unsigned l, const tessel_yaml_node *lv)
{
    tessel_spec *s = v->s;
    tessel_spec_level *L = &s->level[l];
    char field[128], f[128];
    const tessel_yaml_node *name = tessel_yaml_get(lv, "name");
    if (is_string(name) && name->length < TESSEL_SPEC_NAME_MAX) {
        join(field, sizeof(field), "architecture.levels", name->value);
    } else {
        char num[32];
        snprintf(num, sizeof(num), "[%u]", l);
        join(field, sizeof(field), "", "architecture.levels");
        append(field, sizeof(field), num);
    }
    L->pos = pos_of(lv);
    v->level_node[l] = lv;
    check_keys(v, lv, field, level_keys, N_OF(level_keys));
    join(f, sizeof(f), field, "name");
    if (!name) {
        err(v, lv, f, "a level needs a 'name'");
    } else if (!read_string(v, name, f, "name", L->name, sizeof(L->name))) {
        if (strcmp(L->name, "strategy") == 0 || strcmp(L->name, "strategy_options") == 0)
            err(v, name, f, "'%s' is reserved (mapping.%s): name the level otherwise", L->name,
                L->name);
        for (unsigned k = 0; k < l; k++) {
            if (strcmp(s->level[k].name, L->name) == 0) {
                err(v, name, f, "duplicate level name '%s' (first at line %llu)", L->name,
                    (unsigned long long)v->level_node[k]->line);
                break;
            }
        }
    }
    const tessel_yaml_node *n;
    join(f, sizeof(f), field, "capacity");
    n = tessel_yaml_get(lv, "capacity");
    if (n && !tessel_yaml_is_null(n))
        read_size(v, n, f, "capacity", &L->capacity);
    else if (l > 0)
        err(v, n ? n : lv, f,
            "missing 'capacity' (required on every level below the backing store)");
    join(f, sizeof(f), field, "bandwidth");
    if ((n = tessel_yaml_get(lv, "bandwidth")))
        read_positive(v, n, f, "bandwidth", "GB/s", &L->bandwidth);
    join(f, sizeof(f), field, "instances");
    if ((n = tessel_yaml_get(lv, "instances")))
        read_count(v, n, f, "instances", UINT32_MAX, &L->instances);
    static const char *const bit_keys[] = { "word_bits", "value_bits", "coord_bits",
                                            "offset_bits", "run_bits" };
    unsigned *bits[] = { &L->word_bits, &L->value_bits, &L->coord_bits, &L->offset_bits,
                         &L->run_bits };
    for (size_t i = 0; i < N_OF(bit_keys); i++) {
        join(f, sizeof(f), field, bit_keys[i]);
        if ((n = tessel_yaml_get(lv, bit_keys[i])))
            read_count(v, n, f, bit_keys[i], BITS_MAX, bits[i]);
    }
    join(f, sizeof(f), field, "format");
    if ((n = tessel_yaml_get(lv, "format")))
        format_code(v, n, f, &L->format, &L->nranks, L->ranks);
    read_component(v, lv, field, &L->energy);
    read_level_tensors(v, l, lv, field);
}

static void read_tables(vctx *v, const tessel_yaml_node *arch)
{
    tessel_spec *s = v->s;
    const tessel_yaml_node *t = tessel_yaml_get(arch, "energy_tables");
    if (!t || tessel_yaml_is_null(t))
        return;
    const char *f = "architecture.energy_tables";
    size_t count = t->kind == TESSEL_YAML_SEQUENCE ? t->count : 1;
    if (t->kind == TESSEL_YAML_MAPPING) {
        err(v, t, f, "'energy_tables' must be a file name or a list of file names");
        return;
    }
    if (count > N_OF(s->table)) {
        spec_error(v->c, TESSEL_ERANGE, t, f, "more than %zu energy tables", N_OF(s->table));
        count = N_OF(s->table);
    }
    for (size_t i = 0; i < count; i++) {
        const tessel_yaml_node *it = t->kind == TESSEL_YAML_SEQUENCE ? t->items[i] : t;
        if (!is_string(it) || it->length == 0) {
            err(v, it, f, "'energy_tables' must be a file name or a list of file names");
            continue;
        }
        char *path = spec_resolve(v->c, it->file, it->value);
        if (!path) {
            spec_oom(v->c);
            return;
        }
        s->table[s->ntables++] = path;
    }
}

/* clock: a number in GHz, or "1GHz" / "800 MHz". */
static void read_clock(vctx *v, const tessel_yaml_node *n, const char *field, double *ghz)
{
    double x = 0;
    if (!tessel_yaml_double(n, &x)) {
        if (x > 0)
            *ghz = x;
        else
            err(v, n, field, "'clock' must be greater than zero");
        return;
    }
    if (is_string(n) && n->value[0] >= '0' && n->value[0] <= '9') {
        char *end = NULL;
        x = strtod(n->value, &end);
        while (*end == ' ')
            end++;
        double scale = strcasecmp(end, "GHz") == 0 ? 1.0 : strcasecmp(end, "MHz") == 0 ? 1e-3 : 0;
        if (scale > 0 && isfinite(x) && x > 0) {
            *ghz = x * scale;
            return;
        }
    }
    err(v, n, field, "'clock' must be a frequency such as 1GHz or 800MHz (a number is GHz)");
}

static void read_compute(vctx *v, const tessel_yaml_node *arch)
{
    tessel_spec_compute *cp = &v->s->compute;
    cp->pes = 1;
    cp->macs_per_pe = 1;
    cp->clock_ghz = 1.0;
    const char *field = "architecture.compute";
    const tessel_yaml_node *c = tessel_yaml_get(arch, "compute");
    if (!c) {
        err(v, arch, field, "missing 'compute' (PEs, clock and the MAC's energy class)");
        return;
    }
    if (!(c = mapping_of(v, c, field, "compute"))) {
        if (tessel_yaml_is_null(tessel_yaml_get(arch, "compute")))
            err(v, tessel_yaml_get(arch, "compute"), field, "'compute' must be a mapping");
        return;
    }
    cp->pos = pos_of(c);
    check_keys(v, c, field, compute_keys, N_OF(compute_keys));
    const tessel_yaml_node *n;
    if ((n = tessel_yaml_get(c, "pes")))
        read_count(v, n, "architecture.compute.pes", "pes", UINT32_MAX, &cp->pes);
    if ((n = tessel_yaml_get(c, "macs_per_pe")))
        read_count(v, n, "architecture.compute.macs_per_pe", "macs_per_pe", UINT32_MAX,
                   &cp->macs_per_pe);
    if ((n = tessel_yaml_get(c, "clock")))
        read_clock(v, n, "architecture.compute.clock", &cp->clock_ghz);
    read_component(v, c, field, &cp->mac);
    const tessel_yaml_node *in = tessel_yaml_get(c, "intersect");
    const char *inf = "architecture.compute.intersect";
    if (in && (in = mapping_of(v, in, inf, "intersect"))) {
        check_keys(v, in, inf, component_keys, N_OF(component_keys));
        read_component(v, in, inf, &cp->intersect);
    }
}

static void read_architecture(vctx *v, const tessel_yaml_node *root)
{
    tessel_spec *s = v->s;
    const tessel_yaml_node *arch = tessel_yaml_get(root, "architecture");
    if (!arch) {
        err(v, root, "architecture", "missing 'architecture' (levels and compute)");
        return;
    }
    if (!(arch = mapping_of(v, arch, "architecture", "architecture"))) {
        if (tessel_yaml_is_null(tessel_yaml_get(root, "architecture")))
            err(v, tessel_yaml_get(root, "architecture"), "architecture",
                "'architecture' must be a mapping");
        return;
    }
    check_keys(v, arch, "architecture", arch_keys, N_OF(arch_keys));
    const tessel_yaml_node *n = tessel_yaml_get(arch, "technology");
    if (n)
        read_string(v, n, "architecture.technology", "technology", s->technology,
                    sizeof(s->technology));
    read_tables(v, arch);
    const tessel_yaml_node *levels = tessel_yaml_get(arch, "levels");
    const char *lf = "architecture.levels";
    if (!levels) {
        err(v, arch, lf, "missing 'levels' (the storage levels, backing store first)");
    } else if (levels->kind != TESSEL_YAML_SEQUENCE) {
        err(v, levels, lf, "'levels' must be a list of levels");
    } else if (levels->count == 0) {
        err(v, levels, lf, "'levels' must list at least one level");
    } else {
        size_t count = levels->count;
        if (count > TESSEL_SPEC_MAX_LEVELS) {
            spec_error(v->c, TESSEL_ERANGE, levels->items[TESSEL_SPEC_MAX_LEVELS], lf,
                       "more than %u levels", TESSEL_SPEC_MAX_LEVELS);
            count = TESSEL_SPEC_MAX_LEVELS;
        }
        for (size_t l = 0; l < count; l++) {
            const tessel_yaml_node *lv = levels->items[l];
            level_defaults(s, &s->level[l]);
            s->nlevels = (unsigned)l + 1;
            if (lv->kind != TESSEL_YAML_MAPPING) {
                err(v, lv, lf, "a level must be a mapping (name, capacity, class, ...)");
                continue;
            }
            read_level(v, (unsigned)l, lv);
        }
    }
    read_compute(v, arch);
}

/* ------------------------------------------------------------------ */
/* Mapping */

static int index_by_name(const tessel_spec *s, const char *name, size_t len, int fold)
{
    for (unsigned i = 0; i < s->workload.nindices; i++) {
        const char *x = s->workload.index_name[i];
        if (strlen(x) == len && (fold ? strncasecmp(x, name, len) : strncmp(x, name, len)) == 0)
            return (int)i;
    }
    return -1;
}

/* Exact match first, then case-insensitive ("IKJ" for i, k, j). */
static int find_index(const tessel_spec *s, const char *name, size_t len)
{
    int i = index_by_name(s, name, len, 0);
    return i >= 0 ? i : index_by_name(s, name, len, 1);
}

static void unknown_index(vctx *v, const tessel_yaml_node *n, uint32_t column, const char *field,
                          const char *what, const char *name, size_t len)
{
    char list[256];
    index_list(v->s, list, sizeof(list));
    spec_error_at(v->c, TESSEL_EINVAL, n->file, n->line, column, field,
                  "'%.*s' in '%s' is not an index of the einsum (indices: %s)",
                  (int)(len > 60 ? 60 : len), name, what, list);
}

/* "i:128,k:128,j:128" */
static void read_tile_string(vctx *v, const tessel_yaml_node *n, const char *field,
                             tessel_spec_level *L)
{
    const char *text = n->value, *p = text;
    uint32_t base = n->column + (n->quoted ? 1u : 0u);
    while (*p) {
        while (*p == ' ')
            p++;
        const char *name = p;
        while (*p && *p != ':' && *p != ',' && *p != ' ')
            p++;
        size_t len = (size_t)(p - name);
        while (*p == ' ')
            p++;
        if (len == 0 || *p != ':') {
            spec_error_at(v->c, TESSEL_EINVAL, n->file, n->line, base + (uint32_t)(name - text),
                          field, "'tile' must look like i:128,k:64 (index:size, comma separated)");
            return;
        }
        p++;
        while (*p == ' ')
            p++;
        const char *num = p;
        uint64_t x = 0;
        int overflow = 0;
        while (*p >= '0' && *p <= '9') {
            unsigned d = (unsigned)(*p - '0');
            if (x > (UINT64_MAX - d) / 10)
                overflow = 1;
            else
                x = x * 10 + d;
            p++;
        }
        const char *num_end = p;
        while (*p == ' ')
            p++;
        if (num_end == num || overflow || x == 0 || (*p && *p != ',')) {
            spec_error_at(v->c, TESSEL_EINVAL, n->file, n->line, base + (uint32_t)(num - text),
                          field, "tile size of '%.*s' must be a positive integer",
                          (int)(len > 60 ? 60 : len), name);
            return;
        }
        int idx = find_index(v->s, name, len);
        if (idx < 0)
            unknown_index(v, n, base + (uint32_t)(name - text), field, "tile", name, len);
        else
            L->tile[idx] = x;
        if (*p == ',') {
            p++;
            if (!*p) {
                spec_error_at(v->c, TESSEL_EINVAL, n->file, n->line,
                              base + (uint32_t)(p - text), field,
                              "'tile' must look like i:128,k:64 (index:size, comma separated)");
                return;
            }
        }
    }
}

static void read_tile(vctx *v, const tessel_yaml_node *n, const char *field,
                      tessel_spec_level *L)
{
    if (is_string(n)) {
        read_tile_string(v, n, field, L);
        return;
    }
    if (n->kind != TESSEL_YAML_MAPPING) {
        err(v, n, field, "'tile' must be \"i:128,k:64\" or a mapping {i: 128, k: 64}");
        return;
    }
    for (size_t i = 0; i < n->count; i++) {
        const tessel_yaml_node *k = n->keys[i];
        char f[128];
        join(f, sizeof(f), field, k->value);
        int idx = find_index(v->s, k->value, k->length);
        if (idx < 0) {
            unknown_index(v, k, k->column, f, "tile", k->value, k->length);
            continue;
        }
        uint64_t x = 0;
        if (tessel_yaml_u64(n->items[i], &x) || x == 0)
            err(v, n->items[i], f, "tile size of '%s' must be a positive integer", k->value);
        else
            L->tile[idx] = x;
    }
}

/* order: "IKJ" (single-letter indices, any case), "i,k,j", or a list. */
static void read_order(vctx *v, const tessel_yaml_node *n, const char *field,
                       tessel_spec_level *L)
{
    tessel_spec *s = v->s;
    unsigned nidx = s->workload.nindices;
    int got[TESSEL_SPEC_MAX_INDICES];
    unsigned ngot = 0, seen = 0;
    int bad = 0;
    char list[256];
    index_list(s, list, sizeof(list));
    if (is_string(n)) {
        const char *p = n->value;
        int separated = strchr(p, ',') || strchr(p, ' ');
        while (*p && !bad) {
            while (*p == ' ' || *p == ',')
                p++;
            if (!*p)
                break;
            const char *name = p;
            if (separated)
                while (*p && *p != ' ' && *p != ',')
                    p++;
            else
                p++;
            int idx = find_index(s, name, (size_t)(p - name));
            if (idx < 0 || ngot == TESSEL_SPEC_MAX_INDICES)
                bad = 1;
            else
                got[ngot++] = idx;
        }
    } else if (n->kind == TESSEL_YAML_SEQUENCE) {
        for (size_t i = 0; i < n->count && !bad; i++) {
            const tessel_yaml_node *it = n->items[i];
            int idx = is_string(it) ? find_index(s, it->value, it->length) : -1;
            if (idx < 0 || ngot == TESSEL_SPEC_MAX_INDICES)
                bad = 1;
            else
                got[ngot++] = idx;
        }
    } else {
        bad = 1;
    }
    for (unsigned i = 0; i < ngot && !bad; i++) {
        if (seen & (1u << got[i]))
            bad = 1;
        seen |= 1u << got[i];
    }
    if (bad || ngot != nidx) {
        err(v, n, field, "'order' must be a permutation of the einsum's indices (%s)", list);
        return;
    }
    for (unsigned i = 0; i < nidx; i++)
        L->order[i] = (unsigned)got[i];
}

/* ------------------------------------------------------------------ */
/* mapping.strategy and mapping.strategy_options (spec.h). */

static const char *const strategy_names[] = { "fixed", "conservative", "prescient",
                                              "swiftiles", "drt", "d2t2" };
static const char *const strategy_option_keys[] = { "overbooking", "tail_samples", "rounds", "seed",
                                                    "worst", "micro_tile", "growth",
                                                    "levels", "order" };
static const char *const strategy_order_names[] = { "outer-first", "inner-first" };
static const char *const strategy_worst_names[] = { "stats", "dense" };
static const char *const drt_growth_names[] = { "contracted-first", "alternating" };

/* One of `names` (exactly), with a did-you-mean; -1 otherwise. */
static int read_choice(vctx *v, const tessel_yaml_node *n, const char *field, const char *name,
                       const char *const *names, size_t count)
{
    if (is_string(n))
        for (size_t i = 0; i < count; i++)
            if (strcmp(n->value, names[i]) == 0)
                return (int)i;
    char list[160] = "";
    for (size_t i = 0; i < count; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
                 names[i]);
    const char *near = is_string(n) ? tessel_nearest_word(n->value, names, count) : NULL;
    if (near)
        err(v, n, field, "unknown %s '%.60s' (did you mean '%s'?)", name, n->value, near);
    else
        err(v, n, field, "'%s' must be one of: %s", name, list);
    return -1;
}

/* "10%" or 0.1: a fraction strictly between 0 and 1. */
static void read_open_fraction(vctx *v, const tessel_yaml_node *n, const char *field,
                               const char *name, double *out)
{
    double x = -1;
    if (n && n->kind == TESSEL_YAML_SCALAR && n->length > 1 && n->value[n->length - 1] == '%') {
        char *end = NULL;
        double pct = strtod(n->value, &end);
        if (end == n->value + n->length - 1 && isfinite(pct))
            x = pct / 100.0;
    } else if (tessel_yaml_double(n, &x)) {
        x = -1;
    }
    if (!(x > 0 && x < 1)) {
        err(v, n, field, "'%s' must be a fraction between 0 and 1 (10%% or 0.1)", name);
        return;
    }
    *out = x;
}

/* "32x32" or 32 (square). */
static void read_micro_tile(vctx *v, const tessel_yaml_node *n, const char *field,
                            uint64_t *micro)
{
    unsigned long long r = 0, c = 0;
    char tail = 0;
    int got = is_string(n) ? sscanf(n->value, "%llux%llu%c", &r, &c, &tail) : 0;
    if (got == 1 && strspn(n->value, "0123456789") == n->length)
        c = r;
    else if (got != 2)
        r = 0;
    if (!r || !c || r > UINT32_MAX || c > UINT32_MAX) {
        err(v, n, field, "'micro_tile' must be ROWSxCOLS (32x32) or one positive edge");
        return;
    }
    micro[0] = r;
    micro[1] = c;
}

static void read_strategy_levels(vctx *v, const tessel_yaml_node *n, const char *field)
{
    tessel_spec *s = v->s;
    if (!n || n->kind != TESSEL_YAML_SEQUENCE || n->count == 0) {
        err(v, n, field, "'levels' must be a list of level names, e.g. [LLB]");
        return;
    }
    for (size_t i = 0; i < n->count; i++) {
        const tessel_yaml_node *it = n->items[i];
        int l = is_string(it) ? tessel_spec_level_index(s, it->value) : -1;
        if (l <= 0) {
            err(v, it, field, "'%.60s' is not a level below the backing store", shown(it));
            continue;
        }
        s->strategy.levels |= 1u << l;
    }
}

static void read_strategy(vctx *v, const tessel_yaml_node *name, const tessel_yaml_node *opts)
{
    tessel_spec_strategy *st = &v->s->strategy;
    if (name) {
        st->pos = (tessel_spec_pos){ name->file, name->line, name->column };
        int k = read_choice(v, name, "mapping.strategy", "strategy", strategy_names,
                            N_OF(strategy_names));
        if (k >= 0)
            snprintf(st->name, sizeof(st->name), "%s", strategy_names[k]);
    }
    opts = mapping_of(v, opts, "mapping.strategy_options", "strategy_options");
    if (!opts)
        return;
    check_keys(v, opts, "mapping.strategy_options", strategy_option_keys,
               N_OF(strategy_option_keys));
    const tessel_yaml_node *n;
    if ((n = tessel_yaml_get(opts, "overbooking")))
        read_open_fraction(v, n, "mapping.strategy_options.overbooking", "overbooking",
                           &st->overbooking);
    if ((n = tessel_yaml_get(opts, "tail_samples")))
        read_count(v, n, "mapping.strategy_options.tail_samples", "tail_samples", 1000000,
                   &st->tail_samples);
    if ((n = tessel_yaml_get(opts, "rounds")))
        read_count(v, n, "mapping.strategy_options.rounds", "rounds", 100, &st->rounds);
    if ((n = tessel_yaml_get(opts, "seed")))
        read_u64(v, n, "mapping.strategy_options.seed", "seed", &st->seed);
    if ((n = tessel_yaml_get(opts, "worst"))) {
        int k = read_choice(v, n, "mapping.strategy_options.worst", "worst",
                            strategy_worst_names, N_OF(strategy_worst_names));
        if (k >= 0)
            st->dense_worst = k;
    }
    if ((n = tessel_yaml_get(opts, "micro_tile")))
        read_micro_tile(v, n, "mapping.strategy_options.micro_tile", st->micro);
    if ((n = tessel_yaml_get(opts, "growth"))) {
        int k = read_choice(v, n, "mapping.strategy_options.growth", "growth", drt_growth_names,
                            N_OF(drt_growth_names));
        if (k >= 0)
            st->growth = k;
    }
    if ((n = tessel_yaml_get(opts, "levels")))
        read_strategy_levels(v, n, "mapping.strategy_options.levels");
    if ((n = tessel_yaml_get(opts, "order"))) {
        int k = read_choice(v, n, "mapping.strategy_options.order", "order",
                            strategy_order_names, N_OF(strategy_order_names));
        if (k >= 0)
            st->order = k + 1;
    }
}

const char *spec_worst_name(int dense)
{
    return strategy_worst_names[dense ? 1 : 0];
}

const char *spec_growth_name(int growth)
{
    return drt_growth_names[growth ? 1 : 0];
}

static const char *const template_names[] = { "none", "extensor", "gamma", "outerspace",
                                              "matraptor", "sparsepipe" };

static void read_template(vctx *v, const tessel_yaml_node *root)
{
    tessel_spec_template *t = &v->s->template_;
    snprintf(t->name, sizeof(t->name), "none");
    const tessel_yaml_node *n = tessel_yaml_get(root, "template");
    if (n && !tessel_yaml_is_null(n)) {
        t->pos = (tessel_spec_pos){ n->file, n->line, n->column };
        int k = read_choice(v, n, "template", "template", template_names, N_OF(template_names));
        if (k >= 0)
            snprintf(t->name, sizeof(t->name), "%s", template_names[k]);
    }
    t->options = mapping_of(v, tessel_yaml_get(root, "template_options"), "template_options",
                            "template_options");
}

static void read_mapping(vctx *v, const tessel_yaml_node *root)
{
    tessel_spec *s = v->s;
    const tessel_yaml_node *m = mapping_of(v, tessel_yaml_get(root, "mapping"), "mapping",
                                           "mapping");
    if (!m)
        return;
    read_strategy(v, tessel_yaml_get(m, "strategy"), tessel_yaml_get(m, "strategy_options"));
    const char *names[TESSEL_SPEC_MAX_LEVELS + 2];
    for (unsigned l = 0; l < s->nlevels; l++)
        names[l] = s->level[l].name;
    names[s->nlevels] = "strategy";
    names[s->nlevels + 1] = "strategy_options";
    for (size_t i = 0; i < m->count; i++) {
        const tessel_yaml_node *k = m->keys[i];
        if (tessel_yaml_scalar_is(k, "strategy") || tessel_yaml_scalar_is(k, "strategy_options"))
            continue;
        char field[128], f[128];
        join(field, sizeof(field), "mapping", k->value);
        int l = k->value[0] ? tessel_spec_level_index(s, k->value) : -1;
        if (l < 0) {
            const char *near = tessel_nearest_word(k->value, names, s->nlevels + 2);
            if (near)
                err(v, k, field, "mapping for unknown level '%.60s' (did you mean '%s'?)",
                    k->value, near);
            else
                err(v, k, field, "mapping for unknown level '%.60s'", k->value);
            continue;
        }
        if (l == 0) {
            err(v, k, field,
                "level '%s' is the backing store (level 0): it takes no mapping", k->value);
            continue;
        }
        const tessel_yaml_node *e = mapping_of(v, m->items[i], field, k->value);
        tessel_spec_level *L = &s->level[l];
        L->has_mapping = 1;
        if (!e)
            continue;
        check_keys(v, e, field, mapping_keys, N_OF(mapping_keys));
        if (!v->einsum_ok)
            continue;
        const tessel_yaml_node *n;
        if ((n = tessel_yaml_get(e, "tile"))) {
            join(f, sizeof(f), field, "tile");
            read_tile(v, n, f, L);
        }
        if ((n = tessel_yaml_get(e, "order"))) {
            join(f, sizeof(f), field, "order");
            read_order(v, n, f, L);
        }
    }
}

/* ------------------------------------------------------------------ */

/* A partition must hold at least one byte: the estimators read a partition
 * of 0 bytes as "unbounded", so 5% of a 1-byte level, or a fraction such as
 * 1e-300, would silently model an infinite buffer. The share is the one the
 * estimators use: the bytes given, else the fraction of the capacity
 * (rounded down), else an equal share for every tensor. */
static void check_partition_sizes(vctx *v, unsigned l)
{
    tessel_spec *s = v->s;
    const tessel_spec_level *L = &s->level[l];
    if (!L->capacity || !s->workload.ntensors)
        return;
    for (unsigned t = 0; t < s->workload.ntensors && t < TESSEL_SPEC_MAX_TENSORS; t++) {
        const tessel_spec_tensor_level *tl = &L->tensor[t];
        double bytes = tessel_spec_partition_share(s, l, t);
        if (bytes >= 1.0)
            continue;
        const char *name = s->workload.tensor[t].name;
        char f[128];
        join(f, sizeof(f), "architecture.levels", L->name);
        if (tl->partition_fraction > 0) {
            append(f, sizeof(f), ".tensors.");
            append(f, sizeof(f), name);
            append(f, sizeof(f), ".partition");
            const tessel_yaml_node *n =
                tessel_yaml_get(tessel_yaml_get(v->tensors_node[l], name), "partition");
            err(v, n, f,
                "partition of '%s' at level '%s' is less than one byte (%.4g%% of %llu "
                "byte%s)",
                name, L->name, tl->partition_fraction * 100.0, (unsigned long long)L->capacity,
                L->capacity == 1 ? "" : "s");
        } else {
            append(f, sizeof(f), ".capacity");
            err(v, tessel_yaml_get(v->level_node[l], "capacity"), f,
                "level '%s' of %llu bytes leaves less than one byte to '%s' (an equal share "
                "of %u tensors)",
                L->name, (unsigned long long)L->capacity, name, s->workload.ntensors);
        }
    }
}

static void check_partitions(vctx *v)
{
    tessel_spec *s = v->s;
    for (unsigned l = 0; l < s->nlevels; l++) {
        const tessel_spec_level *L = &s->level[l];
        double sum = tessel_spec_partition_sum(s, l);
        if (sum > 1.0 + 1e-9) {
            char f[128];
            join(f, sizeof(f), "architecture.levels", L->name);
            append(f, sizeof(f), ".tensors");
            err(v, v->tensors_node[l], f,
                "partitions of level '%s' add up to %.4g%% of its capacity (at most 100%%)",
                L->name, sum * 100.0);
        }
        if (l > 0)
            check_partition_sizes(v, l);
    }
}

int spec_fill(spec_ctx *c, const tessel_yaml_node *root, const char *default_name,
              tessel_spec *s)
{
    vctx v;
    memset(&v, 0, sizeof(v));
    v.c = c;
    v.s = s;
    unsigned before = c->nerrors;
    snprintf(s->technology, sizeof(s->technology), "45nm");
    snprintf(s->name, sizeof(s->name), "%s", default_name);
    snprintf(s->strategy.name, sizeof(s->strategy.name), "%s", TESSEL_SPEC_STRATEGY_FIXED);
    s->strategy.overbooking = 0.10; /* tailors §5.2: ExTensor-OB targets 10 % overbooking */
    s->strategy.tail_samples = 10;  /* assumption: k of tailors §4.2.2 (its value is not in our copy) */
    s->strategy.rounds = 8; /* tessel: 1 is the paper's one shot (bench/strategy) */
    s->strategy.seed = 1;
    s->strategy.micro[0] = s->strategy.micro[1] = 32; /* drt §5.2.4: 32x32 micro tiles */
    if (!root || tessel_yaml_is_null(root)) {
        spec_error_at(c, TESSEL_EINVAL, s->path, 1, 1, NULL,
                      "empty spec (expected workload, architecture and mapping)");
        return TESSEL_EINVAL;
    }
    if (root->kind != TESSEL_YAML_MAPPING) {
        err(&v, root, NULL, "a spec must be a mapping (workload, architecture, mapping)");
        return TESSEL_EINVAL;
    }
    check_keys(&v, root, "", top_keys, N_OF(top_keys));
    const tessel_yaml_node *name = tessel_yaml_get(root, "name");
    if (name)
        read_string(&v, name, "name", "name", s->name, sizeof(s->name));
    read_workload(&v, root);
    read_architecture(&v, root);
    read_mapping(&v, root);
    read_template(&v, root);
    check_partitions(&v);
    return c->nerrors == before ? TESSEL_OK : TESSEL_EINVAL;
}

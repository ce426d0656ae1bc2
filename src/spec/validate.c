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

#include "validate_internal.h"

static const char *const top_keys[] = { "name", "include", "workload", "architecture",
                                        "mapping", "template", "template_options" };
static const char *const workload_keys[] = { "einsum", "data", "dims" };

/* ------------------------------------------------------------------ */
/* Workload */

static void read_einsum(vctx *v, const tessel_yaml_node *w)
{
    tessel_spec_workload *wl = &v->s->workload;
    const tessel_yaml_node *e = tessel_yaml_get(w, "einsum");
    if (!e) {
        spec_err(v, w, "workload.einsum", "missing 'einsum' (e.g. \"Z[i,j] = A[i,k] * B[k,j]\")");
        return;
    }
    if (!spec_is_string(e)) {
        spec_err(v, e, "workload.einsum", "'einsum' must be a string such as \"Z[i,j] = A[i,k] * B[k,j]\"");
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
        wl->tensor[t].pos = spec_pos_of(e);
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
static const char *const model_kinds[] = { "uniform", "banded", "nm", "fixed-structured" };

/* data: {A: {model: uniform, rows: R, cols: C, density: D | nnz: N}},
 * {model: banded, rows, cols, bandwidth, density}, {model: nm, rows, cols,
 * n, m}, {model: fixed-structured, rows, cols, density}; seed optional. */
static void read_model(vctx *v, const tessel_yaml_node *m, const char *field,
                       tessel_spec_tensor *st)
{
    spec_check_keys(v, m, field, model_keys, N_OF(model_keys));
    char f[160];
    const tessel_yaml_node *n = tessel_yaml_get(m, "model");
    spec_join(f, sizeof(f), field, "model");
    st->model.present = 1;
    st->model.kind = -1;
    for (size_t i = 0; n && spec_is_string(n) && i < N_OF(model_kinds); i++)
        if (strcmp(n->value, model_kinds[i]) == 0)
            st->model.kind = (int)i;
    if (!n) {
        spec_err(v, m, f, "a density model needs 'model' (uniform, banded, nm or fixed-structured)");
        return;
    }
    if (st->model.kind < 0) {
        const char *near = spec_is_string(n) ? tessel_nearest_word(n->value, model_kinds,
                                                               N_OF(model_kinds))
                                        : NULL;
        if (near)
            spec_err(v, n, f, "unknown density model '%.60s' (did you mean '%s'?)", n->value, near);
        else
            spec_err(v, n, f, "unknown density model '%.60s' (uniform, banded, nm or fixed-structured)", spec_shown(n));
        return;
    }
    if (st->rank != 2)
        spec_err(v, m, field, "density models describe matrices, but '%s' has rank %u", st->name,
            st->rank);
    static const char *const dims[2] = { "rows", "cols" };
    uint64_t *dim_out[2] = { &st->model.rows, &st->model.cols };
    for (int d = 0; d < 2; d++) {
        spec_join(f, sizeof(f), field, dims[d]);
        if ((n = tessel_yaml_get(m, dims[d])))
            spec_read_u64(v, n, f, dims[d], dim_out[d]);
        else
            spec_err(v, m, f, "the %s model needs '%s'", model_kinds[st->model.kind], dims[d]);
    }
    const tessel_yaml_node *dn = tessel_yaml_get(m, "density");
    spec_join(f, sizeof(f), field, "density");
    if (dn && !spec_read_positive(v, dn, f, "density", "a fraction in (0, 1]", &st->model.density) &&
        st->model.density > 1)
        spec_err(v, dn, f, "'density' must be at most 1");
    if ((n = tessel_yaml_get(m, "seed"))) {
        spec_join(f, sizeof(f), field, "seed");
        spec_read_u64(v, n, f, "seed", &st->model.seed);
    } else {
        st->model.seed = 1;
    }
    switch (st->model.kind) {
    case 0:
        if ((n = tessel_yaml_get(m, "nnz"))) {
            spec_join(f, sizeof(f), field, "nnz");
            spec_read_u64(v, n, f, "nnz", &st->model.nnz);
        } else if (!dn) {
            spec_err(v, m, field, "the uniform model needs 'density' or 'nnz'");
        }
        break;
    case 1:
        if ((n = tessel_yaml_get(m, "bandwidth"))) {
            uint64_t bw = 0;
            spec_join(f, sizeof(f), field, "bandwidth");
            if (tessel_yaml_u64(n, &bw))
                spec_err(v, n, f, "'bandwidth' must be an integer >= 0");
            st->model.bandwidth = bw;
        } else {
            spec_err(v, m, field, "the banded model needs 'bandwidth'");
        }
        if (!dn)
            spec_err(v, m, field, "the banded model needs 'density' (the keep probability)");
        break;
    case 3:
        if (!dn)
            spec_err(v, m, field, "the fixed-structured model needs 'density'");
        break;
    default: {
        const tessel_yaml_node *nn = tessel_yaml_get(m, "n"), *mm = tessel_yaml_get(m, "m");
        spec_join(f, sizeof(f), field, "n");
        if (nn)
            spec_read_count(v, nn, f, "n", 1u << 16, &st->model.n);
        spec_join(f, sizeof(f), field, "m");
        if (mm)
            spec_read_count(v, mm, f, "m", 1u << 16, &st->model.m);
        if (!nn || !mm)
            spec_err(v, m, field, "the nm model needs 'n' and 'm'");
        else if (st->model.n > st->model.m)
            spec_err(v, nn, field, "'n' (%u) must be at most 'm' (%u)", st->model.n, st->model.m);
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
    const tessel_yaml_node *data = spec_mapping_of(v, tessel_yaml_get(w, "data"), "workload.data",
                                              "data");
    const tessel_yaml_node *bound[TESSEL_SPEC_MAX_TENSORS] = { NULL };
    int named[TESSEL_SPEC_MAX_TENSORS] = { 0 };
    for (size_t i = 0; data && i < data->count; i++) {
        const tessel_yaml_node *k = data->keys[i], *val = data->items[i];
        char f[128];
        spec_join(f, sizeof(f), "workload.data", k->value);
        int t = tessel_spec_tensor_index(s, k->value);
        if (t < 0) {
            const char *cand[TESSEL_SPEC_MAX_TENSORS];
            size_t n = spec_tensor_names(s, cand);
            const char *near = tessel_nearest_word(k->value, cand + 1, n - 1);
            if (near)
                spec_err(v, k, f, "'%.60s' is not an input of the einsum (did you mean '%s'?)",
                    k->value, near);
            else
                spec_err(v, k, f, "'%.60s' is not an input of the einsum", k->value);
            continue;
        }
        if (t == 0) {
            spec_err(v, k, f, "'%s' is the output of the einsum: only inputs are bound to data",
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
            wl->tensor[t].pos = spec_pos_of(val);
            bound[t] = val;
            continue;
        }
        if (!spec_is_string(val) || val->length == 0) {
            spec_err(v, val, f, "'%s' must be a file name, another input's name, NAME^T, dense, or a density "
                "model such as {model: uniform, rows: 1000, cols: 1000, density: 0.01}",
                k->value);
            continue;
        }
        int transposed = 0;
        int target = binding_target(s, val->value, &transposed);
        char *stored = NULL;
        if (target == t) {
            spec_err(v, val, f, "'%s' is bound to itself", k->value);
            continue;
        } else if (target > 0) {
            unsigned ra = wl->tensor[t].rank, rb = wl->tensor[target].rank;
            if (transposed && (ra != 2 || rb != 2)) {
                spec_err(v, val, f, "'%s^T' needs two matrices, but '%s' has rank %u and '%s' %u",
                    wl->tensor[target].name, k->value, ra, wl->tensor[target].name, rb);
                continue;
            }
            if (ra != rb) {
                spec_err(v, val, f, "'%s' (rank %u) is bound to '%s' of rank %u", k->value, ra,
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
        wl->tensor[t].pos = spec_pos_of(val);
        bound[t] = val;
    }
    for (unsigned t = 1; t < wl->ntensors; t++) {
        if (!wl->tensor[t].data && !named[t]) {
            char f[128];
            spec_join(f, sizeof(f), "workload.data", wl->tensor[t].name);
            spec_err(v, data ? data : w, f,
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
            spec_join(f, sizeof(f), "workload.data", wl->tensor[t].name);
            spec_err(v, bound[t], f, "the data of '%s' refer back to themselves through other "
                "tensors' bindings", wl->tensor[t].name);
        }
    }
}

static void read_dims(vctx *v, const tessel_yaml_node *w)
{
    tessel_spec *s = v->s;
    const tessel_yaml_node *dims = spec_mapping_of(v, tessel_yaml_get(w, "dims"), "workload.dims",
                                              "dims");
    for (size_t i = 0; dims && i < dims->count; i++) {
        const tessel_yaml_node *k = dims->keys[i];
        char f[128];
        spec_join(f, sizeof(f), "workload.dims", k->value);
        int idx = tessel_spec_index(s, k->value);
        if (idx < 0) {
            const char *cand[TESSEL_SPEC_MAX_INDICES];
            char list[256];
            spec_index_list(s, list, sizeof(list));
            const char *near = tessel_nearest_word(k->value, cand, spec_index_names(s, cand));
            if (near)
                spec_err(v, k, f, "'%.60s' is not an index of the einsum (did you mean '%s'?)",
                    k->value, near);
            else
                spec_err(v, k, f, "'%.60s' is not an index of the einsum (indices: %s)", k->value,
                    list);
            continue;
        }
        uint64_t x = 0;
        if (tessel_yaml_u64(dims->items[i], &x) || x == 0 || x > UINT32_MAX)
            spec_err(v, dims->items[i], f, "'%s' must be an extent from 1 to 4294967295",
                k->value);
        else
            s->workload.extent[idx] = x;
    }
}

static void read_workload(vctx *v, const tessel_yaml_node *root)
{
    const tessel_yaml_node *w = tessel_yaml_get(root, "workload");
    if (!w) {
        spec_err(v, root, "workload", "missing 'workload' (the einsum and its data)");
        return;
    }
    if (!(w = spec_mapping_of(v, w, "workload", "workload")))
        return;
    v->s->workload.pos = spec_pos_of(w);
    spec_check_keys(v, w, "workload", workload_keys, N_OF(workload_keys));
    read_einsum(v, w);
    if (!v->einsum_ok)
        return;
    read_data(v, w);
    read_dims(v, w);
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
        if (bytes >= 1.0 || tessel_spec_bypassed(s, l, t))
            continue;
        const char *name = s->workload.tensor[t].name;
        char f[128];
        spec_join(f, sizeof(f), "architecture.levels", L->name);
        if (tl->partition_fraction > 0) {
            spec_append(f, sizeof(f), ".tensors.");
            spec_append(f, sizeof(f), name);
            spec_append(f, sizeof(f), ".partition");
            const tessel_yaml_node *n =
                tessel_yaml_get(tessel_yaml_get(v->tensors_node[l], name), "partition");
            spec_err(v, n, f,
                "partition of '%s' at level '%s' is less than one byte (%.4g%% of %llu "
                "byte%s)",
                name, L->name, tl->partition_fraction * 100.0, (unsigned long long)L->capacity,
                L->capacity == 1 ? "" : "s");
        } else {
            spec_append(f, sizeof(f), ".capacity");
            spec_err(v, tessel_yaml_get(v->level_node[l], "capacity"), f,
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
            spec_join(f, sizeof(f), "architecture.levels", L->name);
            spec_append(f, sizeof(f), ".tensors");
            spec_err(v, v->tensors_node[l], f,
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
        spec_err(&v, root, NULL, "a spec must be a mapping (workload, architecture, mapping)");
        return TESSEL_EINVAL;
    }
    spec_check_keys(&v, root, "", top_keys, N_OF(top_keys));
    const tessel_yaml_node *name = tessel_yaml_get(root, "name");
    if (name)
        spec_read_string(&v, name, "name", "name", s->name, sizeof(s->name));
    read_workload(&v, root);
    spec_read_architecture(&v, root);
    spec_read_mapping(&v, root);
    spec_read_template(&v, root);
    check_partitions(&v);
    return c->nerrors == before ? TESSEL_OK : TESSEL_EINVAL;
}

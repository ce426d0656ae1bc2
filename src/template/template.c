/* Accelerator templates (template.h): the template_options of the
 * counts-based templates (checked against their descriptors,
 * template_desc.c), the descriptors' evaluate functions and
 * tessel_template_run; the counts are in template_counts.c, the traffic in
 * template_traffic.c. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "template_internal.h"

/* ------------------------------------------------------------------ */
/* template_options. */

static int read_layout(const tessel_spec *spec, const tessel_yaml_node *key,
                       const tessel_yaml_node *v, tessel_diag *diag, tpl_layout *out)
{
    if (v && v->kind == TESSEL_YAML_SCALAR) {
        if (strcmp(v->value, "coo") == 0) {
            *out = TPL_COO;
            return TESSEL_OK;
        }
        if (strcmp(v->value, "csr") == 0) {
            *out = TPL_CSR;
            return TESSEL_OK;
        }
    }
    char what[160];
    snprintf(what, sizeof(what), "%s must be coo or csr, not '%s'", key->value,
             v && v->kind == TESSEL_YAML_SCALAR ? v->value : "(not a scalar)");
    return tpl_option_error(spec, v ? v : key, key->value, what, diag);
}

/* A choice of two words: *out 0 for `off`, 1 for `on`. */
static int read_choice(const tessel_spec *spec, const tessel_yaml_node *key,
                       const tessel_yaml_node *v, const char *off, const char *on,
                       tessel_diag *diag, int *out)
{
    if (v && v->kind == TESSEL_YAML_SCALAR &&
        (strcmp(v->value, off) == 0 || strcmp(v->value, on) == 0)) {
        *out = strcmp(v->value, on) == 0;
        return TESSEL_OK;
    }
    char what[160];
    snprintf(what, sizeof(what), "%s must be %s or %s, not '%s'", key->value, off, on,
             v && v->kind == TESSEL_YAML_SCALAR ? v->value : "(not a scalar)");
    return tpl_option_error(spec, v ? v : key, key->value, what, diag);
}

/* A key of the template's descriptor (template_desc.c). */
static int is_option(tessel_template_kind kind, const char *key)
{
    const char *keys[32];
    size_t n = tpl_option_keys(kind, keys, 32);
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i]) == 0)
            return 1;
    return 0;
}

/* gamma's FiberCache organisation and tiling options (gamma.c checks that
 * cache_bytes is a whole number of banks x ways x lines). */
static int read_gamma_extra(const tessel_yaml_node *v, const char *key, tpl_options *o,
                            char *what, size_t n)
{
    const char *val = v && v->kind == TESSEL_YAML_SCALAR ? v->value : NULL;
    uint64_t x = 0;
    if (strcmp(key, "tiling") == 0) {
        if (val && (strcmp(val, "selective") == 0 || strcmp(val, "none") == 0)) {
            o->tiling = strcmp(val, "selective") == 0;
            return TESSEL_OK;
        }
        snprintf(what, n, "tiling must be selective or none, not '%s'",
                 val ? val : "(not a scalar)");
    } else if (strcmp(key, "partials") == 0) {
        if (val && (strcmp(val, "cache") == 0 || strcmp(val, "memory") == 0)) {
            o->partials_mem = strcmp(val, "memory") == 0;
            return TESSEL_OK;
        }
        snprintf(what, n, "partials must be cache or memory, not '%s'",
                 val ? val : "(not a scalar)");
    } else if (strcmp(key, "subrows") == 0) {
        if (val && (strcmp(val, "together") == 0 || strcmp(val, "scattered") == 0)) {
            o->subrows_together = strcmp(val, "together") == 0;
            return TESSEL_OK;
        }
        snprintf(what, n, "subrows must be scattered or together, not '%s'",
                 val ? val : "(not a scalar)");
    } else if (strcmp(key, "tile_fraction") == 0) {
        char *end = NULL;
        double f = val ? strtod(val, &end) : 0;
        if (val && end != val && *end == '\0' && f > 0 && f <= 1) {
            o->tile_fraction = f;
            return TESSEL_OK;
        }
        snprintf(what, n, "tile_fraction must be a number in (0, 1], not '%s'",
                 val ? val : "(not a scalar)");
    } else {
        uint64_t max = strcmp(key, "line_bytes") == 0 ? 1u << 20 : 1u << 16;
        if (val && tessel_yaml_u64(v, &x) == 0 && x >= 1 && x <= max) {
            *(strcmp(key, "ways") == 0    ? &o->ways
              : strcmp(key, "banks") == 0 ? &o->banks
                                          : &o->line_bytes) = x;
            return TESSEL_OK;
        }
        snprintf(what, n, "%s must be an integer from 1 to %llu, not '%s'", key,
                 (unsigned long long)max, val ? val : "(not a scalar)");
    }
    return TESSEL_EINVAL;
}

static int read_gamma(const tessel_spec *spec, const tessel_yaml_node *key,
                      const tessel_yaml_node *v, tessel_diag *diag, tpl_options *o)
{
    const char *val = v && v->kind == TESSEL_YAML_SCALAR ? v->value : NULL;
    char what[200];
    if (strcmp(key->value, "cache_bytes") == 0) {
        uint64_t b = 0;
        if (val && tessel_parse_size(val, &b) == 0 && b > 0) {
            o->cache_bytes = b;
            return TESSEL_OK;
        }
        snprintf(what, sizeof(what), "cache_bytes must be a positive size (e.g. 3MiB), not '%s'",
                 val ? val : "(not a scalar)");
    } else if (strcmp(key->value, "radix") == 0) {
        uint64_t r = 0;
        if (val && tessel_yaml_u64(v, &r) == 0 && r >= 2 && r <= (1u << 20)) {
            o->radix = r;
            return TESSEL_OK;
        }
        snprintf(what, sizeof(what), "radix must be an integer from 2 to 2^20, not '%s'",
                 val ? val : "(not a scalar)");
    } else if (strcmp(key->value, "policy") == 0) {
        if (val && (strcmp(val, "lru") == 0 || strcmp(val, "set-associative") == 0)) {
            o->set_assoc = strcmp(val, "set-associative") == 0;
            return TESSEL_OK;
        }
        snprintf(what, sizeof(what), "policy must be lru or set-associative, not '%s'",
                 val ? val : "(not a scalar)");
    } else if (strcmp(key->value, "reorder") != 0 && strcmp(key->value, "stat_model") != 0) {
        if (read_gamma_extra(v, key->value, o, what, sizeof(what)) == TESSEL_OK)
            return TESSEL_OK;
    } else if (strcmp(key->value, "stat_model") == 0) {
        if (val && (strcmp(val, "banded") == 0 || strcmp(val, "irm") == 0)) {
            o->stat_irm = strcmp(val, "irm") == 0;
            return TESSEL_OK;
        }
        snprintf(what, sizeof(what), "stat_model must be banded or irm, not '%s'",
                 val ? val : "(not a scalar)");
    } else {
        if (val && (strcmp(val, "affinity") == 0 || strcmp(val, "none") == 0)) {
            o->reorder = strcmp(val, "affinity") == 0;
            return TESSEL_OK;
        }
        snprintf(what, sizeof(what), "reorder must be affinity or none, not '%s'",
                 val ? val : "(not a scalar)");
    }
    return tpl_option_error(spec, v ? v : key, key->value, what, diag);
}

/* The template's options from template_options, over their defaults. */
static int read_options(const tessel_spec *spec, tessel_template_kind kind, tpl_options *o,
                        tessel_diag *diag)
{
    o->output = TPL_COO;   /* as the DRT simulator writes Z */
    o->partial = TPL_CSR;  /* partial rows, as OuterSPACE makes them (gamma §2.3) */
    o->pe_link_column = 0; /* a nonzero of A and its row of B per PE */
    o->merge_single = 0;   /* no PE model */
    if (kind == TESSEL_TEMPLATE_GAMMA) {
        o->output = TPL_CSR;                  /* whole rows from the PEs (gamma §3) */
        /* the LLB models the FiberCache; capacity 0 (unbounded): no misses but compulsory */
        o->cache_bytes = spec->level[1].capacity ? spec->level[1].capacity : UINT64_MAX;
        o->radix = 64;                        /* gamma §3.1 */
        o->reorder = 0;
        o->stat_irm = 1; /* Che under the independent reference model */
        o->set_assoc = 0;
        o->ways = 16;    /* gamma §5 / Table 1 (16-way set-associative) */
        o->banks = 48;   /* gamma §5 / Table 1 (48 banks) */
        o->line_bytes = 64; /* assumption: gamma gives no line size */
        o->tiling = 0;
        o->tile_fraction = 0.25; /* gamma §4.2 (rows over 25 % of the FiberCache) */
        o->subrows_together = 0; /* gamma §4.2: subrows reordered one by one */
        o->partials_mem = 0;     /* gamma §3.3: partial fibers live in the FiberCache */
    }
    const tessel_yaml_node *m = spec->template_.options;
    if (!m || tessel_yaml_is_null(m))
        return TESSEL_OK;
    if (m->kind != TESSEL_YAML_MAPPING)
        return tessel_diag_set(diag, TESSEL_EINVAL, m->file, m->line, m->column,
                               "template_options", "template_options must be a mapping");
    const char *known[32];
    size_t nknown = tpl_option_keys(kind, known, 32);
    for (size_t i = 0; i < m->count; i++) {
        const tessel_yaml_node *k = m->keys[i], *v = m->items[i];
        int rc;
        if (strcmp(k->value, "output_format") == 0)
            rc = read_layout(spec, k, v, diag, &o->output);
        else if (strcmp(k->value, "partial_format") == 0 && kind == TESSEL_TEMPLATE_OUTERSPACE)
            rc = read_layout(spec, k, v, diag, &o->partial);
        else if (strcmp(k->value, "pe_link") == 0 && kind == TESSEL_TEMPLATE_OUTERSPACE)
            rc = read_choice(spec, k, v, "per-nonzero", "per-column", diag, &o->pe_link_column);
        else if (strcmp(k->value, "merge") == 0 && kind == TESSEL_TEMPLATE_OUTERSPACE)
            rc = read_choice(spec, k, v, "none", "single-pe", diag, &o->merge_single);
        else if (kind == TESSEL_TEMPLATE_GAMMA && is_option(kind, k->value))
            rc = read_gamma(spec, k, v, diag, o);
        else {
            const char *near = tessel_nearest_word(k->value, known, nknown);
            char what[200];
            if (near)
                snprintf(what, sizeof(what), "unknown option '%s' (did you mean '%s'?)",
                         k->value, near);
            else {
                char list[200];
                tpl_option_list(kind, list, sizeof(list));
                /* cut at what's size, as the fixed list was */
                if (snprintf(what, sizeof(what), "unknown option '%s' (options: %s)", k->value,
                             list) < 0)
                    what[0] = '\0';
            }
            rc = tpl_option_error(spec, k, k->value, what, diag);
        }
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */

static int check_range(const tessel_spec *spec, const tessel_result *r, tessel_diag *diag)
{
    const uint64_t w[] = { r->macs, r->output_nnz, r->compulsory_bytes, r->dram_bytes };
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        if (w[i] == UINT64_MAX)
            return tessel_diag_set(diag, TESSEL_ERANGE, spec->path, 0, 0, NULL,
                                   "template %s: a total reaches 2^64 and would overflow",
                                   spec->template_.name);
    for (unsigned l = 0; l < r->nlevels; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            const tessel_traffic *tr = &r->traffic[l][t];
            if (tr->data_bytes == UINT64_MAX || tr->metadata_bytes == UINT64_MAX)
                return tessel_diag_set(diag, TESSEL_ERANGE, spec->path, 0, 0, NULL,
                                       "template %s: level %s, tensor %s: a count reaches 2^64",
                                       spec->template_.name, spec->level[l].name,
                                       spec->workload.tensor[t].name);
        }
    return TESSEL_OK;
}

/* The counts-based templates (matraptor, outerspace, gamma): their
 * options, the counts from the data or the statistics, then each one's
 * traffic rules. */
int tpl_eval_counts(const tessel_template_call *call, tessel_result *out,
                    tessel_strategy_choice *choice, tessel_sparsepipe_figures *fig,
                    tessel_diag *diag)
{
    (void)choice;
    (void)fig;
    const tessel_spec *spec = call->spec;
    const tessel_workload_data *data = call->est == TESSEL_STRATEGY_EXACT ? call->data : NULL;
    const tessel_stat_data *stats = call->stats;
    const tessel_allocator *a = call->alloc;
    double start = tpl_now();
    memset(out, 0, sizeof(*out));
    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
    snprintf(out->estimator, sizeof(out->estimator), "%s", data ? "exact" : "stat");
    tessel_template_kind kind = tessel_template_of(spec);
    if (spec->nlevels < 2)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "architecture.levels",
                               "template %s needs a backing store and at least one buffer",
                               tessel_template_name(kind));
    tpl_roles roles;
    tpl_options opt;
    int rc = tpl_roles_of(spec, &roles, diag);
    if (!rc)
        rc = read_options(spec, kind, &opt, diag);
    if (rc)
        return rc;
    if (!data && !stats)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, NULL,
                               "template %s needs the data or its statistics",
                               tessel_template_name(kind));
    tpl_counts c;
    rc = data ? tpl_counts_exact(spec, &roles, data, a, &c, diag)
              : tpl_counts_stat(spec, &roles, stats, a, &c, diag);
    if (rc)
        return rc;
    if (kind == TESSEL_TEMPLATE_GAMMA) {
        tpl_gamma_counts g;
        rc = tpl_gamma(spec, &roles, data, stats, &c, &opt, a, out, &g, diag);
        if (rc)
            return rc;
    } else if (kind == TESSEL_TEMPLATE_MATRAPTOR)
        tpl_matraptor(spec, &roles, &c, &opt, out);
    else
        tpl_outerspace(spec, &roles, &c, &opt, out);
    rc = check_range(spec, out, diag);
    out->seconds = tpl_now() - start;
    if (!data)
        out->stats_seconds = tessel_stat_data_seconds(stats);
    return rc;
}

void tessel_template_stat_options(const tessel_spec *spec, tessel_stat_options *o)
{
    if (o->base[0] || tessel_template_of(spec) != TESSEL_TEMPLATE_SPARSEPIPE)
        return;
    uint64_t b = tpl_sparsepipe_stat_base(spec);
    for (unsigned x = 0; b && x < spec->workload.nindices && x < TESSEL_SPEC_MAX_INDICES; x++)
        o->own_base[x] = b;
}

/* sparsepipe: its own options and figures (sparsepipe.c). */
int tpl_eval_sparsepipe(const tessel_template_call *call, tessel_result *out,
                        tessel_strategy_choice *choice, tessel_sparsepipe_figures *fig,
                        tessel_diag *diag)
{
    (void)choice;
    return tessel_template_sparsepipe(call->spec,
                                      call->est == TESSEL_STRATEGY_EXACT ? call->data : NULL,
                                      call->stats, call->alloc, out, fig, diag);
}

/* extensor: a tiling strategy per variant (extensor.c); the strategies
 * choose tiles on a base grid of their own, so they get the data under
 * either estimator. */
int tpl_eval_extensor(const tessel_template_call *call, tessel_result *out,
                      tessel_strategy_choice *choice, tessel_sparsepipe_figures *fig,
                      tessel_diag *diag)
{
    (void)fig;
    tessel_strategy_inputs in = { call->data, call->stats, NULL };
    return tessel_template_extensor_run(call->spec, &in, call->est, call->alloc, out, choice,
                                        diag);
}

int tessel_template_run(const tessel_spec *spec, const tessel_workload_data *data,
                        const tessel_stat_data *stats, const tessel_allocator *a,
                        tessel_result *out, tessel_diag *diag)
{
    const tessel_template_desc *d = tessel_template_describe(tessel_template_of(spec));
    if (!d) {
        memset(out, 0, sizeof(*out));
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "template",
                               "the spec names no template (modelled: extensor, gamma, "
                               "matraptor, outerspace, sparsepipe)");
    }
    tessel_template_call call = { spec, data, stats,
                                  data ? TESSEL_STRATEGY_EXACT : TESSEL_STRATEGY_STAT, a };
    return d->evaluate(&call, out, NULL, NULL, diag);
}

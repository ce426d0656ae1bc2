/* One design point of a sweep: the spec derived from the data entry's spec
 * with the point's axis values, its energy, its estimate, its report
 * record and CSV rows. */
#include <string.h>

#include "tessel/point.h"
#include "sweep_internal.h"

/* "point 17 (mapping.LLB.order=IJK, ...)" for messages. */
static void point_context(const tessel_sweep *s, uint64_t p, const uint32_t *idx, char *buf,
                          size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "point %llu", (unsigned long long)p);
    int shown = 0;
    for (size_t a = 0; a < s->naxes && len < n; a++) {
        if (idx[a] == SWEEP_NO_VALUE)
            continue;
        len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", shown++ ? ", " : " (",
                                s->axis[a].path, s->axis[a].values[idx[a]]);
    }
    if (shown && len < n)
        snprintf(buf + len, n - len, ")");
}

/* The first diagnostic of a list, prefixed by the point it belongs to. An
 * error in an override ("--set", line = its number among the overrides
 * given, which came from axes[0..n)) is placed at the axis in the sweep
 * file instead. */
static int list_to_diag(const tessel_sweep *s, const size_t *axes, size_t n,
                        tessel_diag_list *errors, int rc, const char *context, tessel_diag *diag)
{
    if (errors->count)
        *diag = errors->items[0];
    if (errors->count && strcmp(diag->file, "--set") == 0 && diag->line >= 1 &&
        diag->line <= n) {
        const sweep_axis *ax = &s->axis[axes[diag->line - 1]];
        tessel_diag_set_file(diag, s->path);
        diag->line = ax->pos.line;
        diag->column = ax->pos.column;
    }
    if (!errors->count)
        tessel_diag_set(diag, rc, "", 0, 0, "", "%s", tessel_strerror(rc));
    tessel_diag_prefix(diag, "%s", context);
    tessel_diag_list_free(errors);
    return rc;
}

static int same_tables(const tessel_spec *a, const tessel_spec *b)
{
    if (a->ntables != b->ntables || strcmp(a->technology, b->technology) != 0)
        return 0;
    for (unsigned i = 0; i < a->ntables; i++)
        if (strcmp(a->table[i], b->table[i]) != 0)
            return 0;
    return 1;
}

/* The point's traffic through the one entry point (point.h), which
 * decides the model: template, strategy or estimator on the fixed
 * mapping. */
static int estimate(const sweep_shared *sh, tessel_stat_cache *cache, const tessel_spec *spec,
                    tessel_result *r, tessel_diag *diag)
{
    static const tessel_point_estimator est[] = {
        [TESSEL_SWEEP_EXACT] = TESSEL_POINT_EXACT,
        [TESSEL_SWEEP_STAT] = TESSEL_POINT_STAT,
        [TESSEL_SWEEP_ANALYTIC] = TESSEL_POINT_ANALYTIC,
    };
    tessel_point_request req = {
        .spec = spec,
        .estimator = est[sh->sweep->estimator],
        .data = sh->data,
        .stats = sh->stats,
        .stat_cache = cache,
        .alloc = sh->sweep->alloc,
    };
    tessel_point_result out;
    int rc = tessel_point_evaluate(&req, &out, diag);
    if (!rc)
        *r = out.result;
    tessel_point_result_free(&out);
    return rc;
}

/* Whether estimate() of spec is a stat estimate from the per-shape
 * summaries (microseconds, not milliseconds). */
static int cheap_estimate(const sweep_shared *sh, const tessel_stat_cache *shapes,
                          const tessel_spec *spec)
{
    tessel_point_request req = { .spec = spec, .estimator = TESSEL_POINT_STAT };
    return shapes && sh->sweep->estimator == TESSEL_SWEEP_STAT &&
           tessel_point_route_of(&req) == TESSEL_POINT_ROUTE_FIXED;
}

/* The overrides of point idx: every axis with a value, or (patch given)
 * only those not patched. */
static size_t point_sets(const tessel_sweep *s, const uint32_t *idx, const sweep_patch *patch,
                         const char **sets, size_t *axes)
{
    size_t n = 0;
    for (size_t a = 0; a < s->naxes; a++)
        if (idx[a] != SWEEP_NO_VALUE && !(patch && patch->kind[a])) {
            axes[n] = a;
            sets[n++] = s->axis[a].sets[idx[a]];
        }
    return n;
}

/* Derives point idx's spec with every axis's override (*owned, the caller
 * frees it): a point without patching, or whose patched values fail the
 * checks across values (the error then is the validator's own). */
static int derive_full(const sweep_shared *sh, const uint32_t *idx, tessel_spec **owned,
                       const tessel_spec **spec, size_t *axes, size_t *naxes,
                       tessel_diag_list *errors)
{
    const tessel_sweep *s = sh->sweep;
    const char *sets[TESSEL_SWEEP_MAX_AXES];
    *naxes = point_sets(s, idx, NULL, sets, axes);
    int rc = tessel_spec_derive(sh->data_spec, sets, *naxes, s->alloc, owned, errors);
    *spec = *owned;
    return rc;
}

/* The spec of point idx's unpatched axes into *base: the worker's cache
 * entry's (returned), else the store's (published by whichever worker
 * derived it first), else derived here and published. NULL with *base
 * set when the worker's cache is full, with *owned (the caller frees it)
 * when the store is full too; *base NULL when the derivation failed. */
static sweep_cached *structural_spec(const sweep_shared *sh, sweep_spec_cache *cache,
                                     const uint32_t *idx, tessel_spec **owned,
                                     const tessel_spec **base)
{
    const tessel_sweep *s = sh->sweep;
    uint32_t key[TESSEL_SWEEP_MAX_AXES] = { 0 };
    for (size_t a = 0; a < s->naxes; a++)
        key[a] = sh->patch->kind[a] ? 0 : idx[a];
    sweep_cached *entry = sweep_spec_cache_find(cache, key);
    if (entry) {
        *base = entry->spec;
        return entry;
    }
    const tessel_spec *spec = sweep_spec_store_find(sh->specs, key);
    if (!spec) {
        const char *sets[TESSEL_SWEEP_MAX_AXES];
        size_t axes[TESSEL_SWEEP_MAX_AXES];
        size_t n = point_sets(s, idx, sh->patch, sets, axes);
        *base = NULL;
        if (tessel_spec_derive(sh->data_spec, sets, n, s->alloc, owned, NULL))
            return NULL;
        if (!(spec = sweep_spec_store_put(sh->specs, key, owned))) {
            *base = *owned;
            return NULL;
        }
    }
    *base = spec;
    return sweep_spec_cache_put(cache, key, spec);
}

/* The point's spec: a patched copy of a cached spec (*view, with *entry
 * the worker's cache entry when it has one), or one derived for this point
 * alone (*owned, the caller frees it; *entry NULL). */
static int point_spec(const sweep_shared *sh, sweep_spec_cache *cache, const uint32_t *idx,
                      tessel_spec *view, tessel_spec **owned, const tessel_spec **spec,
                      sweep_cached **entry, size_t *axes, size_t *naxes,
                      tessel_diag_list *errors)
{
    const sweep_patch *patch = cache ? sh->patch : NULL;
    const tessel_spec *base = NULL;
    *entry = NULL;
    if (!patch)
        return derive_full(sh, idx, owned, spec, axes, naxes, errors);
    *entry = structural_spec(sh, cache, idx, owned, &base);
    if (!base) /* the derivation failed: this point's own error */
        return derive_full(sh, idx, owned, spec, axes, naxes, errors);
    *view = *base; /* shares strings and tree: never freed */
    sweep_patch_apply(patch, idx, sh->sweep->naxes, view);
    if (patch->traffic && !sweep_patch_consistent(view)) {
        *entry = NULL;
        tessel_spec_free(owned);
        return derive_full(sh, idx, owned, spec, axes, naxes, errors);
    }
    const char *sets[TESSEL_SWEEP_MAX_AXES];
    *naxes = point_sets(sh->sweep, idx, patch, sets, axes);
    *spec = view;
    return TESSEL_OK;
}

/* Whether the entry's energy was priced with spec's level capacities (a
 * level's size, when its class has no size attribute). */
static int same_capacities(const sweep_cached *entry, const tessel_spec *spec)
{
    for (unsigned l = 0; l < spec->nlevels && l < TESSEL_SPEC_MAX_LEVELS; l++)
        if (entry->energy_capacity[l] != spec->level[l].capacity)
            return 0;
    return 1;
}

/* The energy of spec, from the cache entry when PEs, MACs per PE and the
 * capacities match. */
static int point_energy(const sweep_shared *sh, sweep_cached *entry, const tessel_spec *spec,
                        tessel_design_energy *energy, tessel_diag_list *errors)
{
    if (entry && entry->has_energy && entry->energy_pes == spec->compute.pes &&
        entry->energy_macs == spec->compute.macs_per_pe && same_capacities(entry, spec)) {
        *energy = entry->energy;
        return TESSEL_OK;
    }
    int rc = tessel_energy_design(sh->db, spec, energy, errors);
    if (!rc && entry) {
        entry->energy = *energy;
        entry->energy_pes = spec->compute.pes;
        entry->energy_macs = spec->compute.macs_per_pe;
        for (unsigned l = 0; l < spec->nlevels && l < TESSEL_SPEC_MAX_LEVELS; l++)
            entry->energy_capacity[l] = spec->level[l].capacity;
        entry->has_energy = 1;
    }
    return rc;
}

/* The value indices of the point's patched capacities and partitions (0
 * elsewhere): with the cache entry, what decides the point's estimate. */
static void traffic_key(const sweep_patch *patch, const sweep_cached *entry, const uint32_t *idx,
                        size_t naxes, uint32_t *key)
{
    memset(key, 0, TESSEL_SWEEP_MAX_AXES * sizeof(*key));
    for (size_t a = 0; entry && patch->traffic && a < naxes; a++)
        if (patch->kind[a] == SWEEP_PATCH_CAPACITY || patch->kind[a] == SWEEP_PATCH_PARTITION)
            key[a] = idx[a];
}

/* One sweep point: the derived spec (cached per axis values), its estimate (memoised on
 * the fixed-mapping stat path) through tessel_point_evaluate, energy and the report row. */
int sweep_eval_point(const sweep_shared *sh, sweep_probe *memo, sweep_spec_cache *cache,
                     uint64_t p, tessel_report_point *out, sweep_verdict *verdict,
                     int *memo_hit, tessel_diag *diag)
{
    const tessel_sweep *s = sh->sweep;
    uint32_t idx[TESSEL_SWEEP_MAX_AXES];
    sweep_point_indices(s, p % s->per_data, idx);
    char context[512];
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, s->alloc);
    tessel_spec view, *owned = NULL;
    const tessel_spec *spec = NULL;
    sweep_cached *entry = NULL;
    size_t axes[TESSEL_SWEEP_MAX_AXES], naxes = 0;
    int rc = point_spec(sh, cache, idx, &view, &owned, &spec, &entry, axes, &naxes, &errors);
    tessel_design_energy energy;
    if (!rc && !same_tables(spec, sh->data_spec)) {
        rc = tessel_diag_list_add(&errors, TESSEL_EINVAL, "", 0, 0, "architecture",
                                  "a sweep's points share the energy tables and technology of "
                                  "the base spec; vary them with separate sweeps");
    }
    if (!rc)
        rc = point_energy(sh, entry, spec, &energy, &errors);
    if (rc) {
        point_context(s, p, idx, context, sizeof(context));
        tessel_spec_free(&owned);
        return list_to_diag(s, axes, naxes, &errors, rc, context, diag);
    }
    tessel_diag_list_free(&errors);

    /* the estimate: the cache entry's (the last one it estimated, when
     * the point's capacities and partitions are that one's), else the
     * memo's, else the estimator's */
    tessel_result result;
    tessel_stat_cache *shapes = sweep_probe_stat_cache(memo);
    /* a template's options are a YAML tree the memo's key does not hold */
    if (spec->template_.options)
        memo = NULL;
    uint32_t tkey[TESSEL_SWEEP_MAX_AXES];
    traffic_key(sh->patch, entry, idx, s->naxes, tkey);
    int known = 0;
    if (entry && entry->has_result && memcmp(entry->result_key, tkey, sizeof(tkey)) == 0) {
        result = entry->result;
        known = 2;
    } else {
        known = sweep_memo_find(memo, spec, cheap_estimate(sh, shapes, spec), &result);
    }
    *memo_hit = known != 0;
    if (!known) {
        rc = estimate(sh, shapes, spec, &result, diag);
        if (!rc)
            sweep_memo_put(memo, &result);
        else
            sweep_memo_drop(memo);
    }
    if (!rc && entry && known != 2) {
        entry->result = result;
        memcpy(entry->result_key, tkey, sizeof(tkey));
        entry->has_result = 1;
    }
    if (!rc) {
        if (!sh->timing)
            result.seconds = 0;
        /* density models may vary per point: their label with them */
        char label[TESSEL_REPORT_LABEL_MAX];
        if (s->estimator == TESSEL_SWEEP_ANALYTIC)
            tessel_model_analytic_label(spec, label, sizeof(label));
        rc = tessel_report_point_build(spec, &result, &energy,
                                       s->estimator == TESSEL_SWEEP_ANALYTIC ? label : sh->label,
                                       tessel_point_strategy(spec), out, diag);
        /* rule 4 from the entry point, as run, compare and map judge it */
        verdict->feasible = tessel_point_feasible(&result, tessel_point_strategy(spec),
                                                  &verdict->level, &verdict->tensor);
    }
    if (rc) {
        point_context(s, p, idx, context, sizeof(context));
        tessel_diag_prefix(diag, "%s", context);
    }
    tessel_spec_free(&owned);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Rows: `point`, one column per axis (named by its path), then the
 * columns of tessel run's files. */

/* Rows: `point`, one column per axis (named by its path), then in
 * summary.csv `error` (empty unless the point was skipped as invalid),
 * `feasible`, `overflow_level`, `overflow_tensor` (feasible.c), then the
 * columns of tessel run's files. */
void sweep_write_header(const tessel_sweep *s, FILE *f, int traffic)
{
    fputs("point", f);
    for (size_t a = 0; a < s->naxes; a++) {
        fputc(',', f);
        tessel_csv_field(f, s->axis[a].path);
    }
    fputs(traffic ? "," : ",error,feasible,overflow_level,overflow_tensor,", f);
    fputs(traffic ? tessel_report_traffic_header() : tessel_report_summary_header(), f);
}

/* Appends s as one CSV field (quoted when it holds , " CR or LF). */
static size_t append_field(char *buf, size_t len, size_t cap, const char *s)
{
    size_t n = strlen(s);
    int quote = strpbrk(s, ",\"\r\n") != NULL;
    if (len + 2 * n + 3 > cap)
        return SIZE_MAX;
    if (!quote) {
        memcpy(buf + len, s, n);
        return len + n;
    }
    buf[len++] = '"';
    for (; *s; s++) {
        if (*s == '"')
            buf[len++] = '"';
        buf[len++] = *s;
    }
    buf[len++] = '"';
    return len;
}

/* "POINT,AXIS VALUES...," into buf (the columns every row of the point
 * starts with); SIZE_MAX when it does not fit. */
static size_t build_prefix(const tessel_sweep *s, const uint32_t *idx, uint64_t p, char *buf,
                           size_t cap)
{
    char digits[24];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + p % 10);
    while ((p /= 10) > 0);
    size_t len = 0;
    while (n > 0)
        buf[len++] = digits[--n];
    for (size_t a = 0; a < s->naxes && len != SIZE_MAX; a++) {
        buf[len++] = ',';
        if (idx[a] != SWEEP_NO_VALUE)
            len = append_field(buf, len, cap - 1, s->axis[a].values[idx[a]]);
    }
    if (len == SIZE_MAX || len + 1 >= cap)
        return SIZE_MAX;
    buf[len++] = ',';
    return len;
}

/* The prefix of point p: built once, written before each of its rows. */
typedef struct row_prefix {
    char text[4096];
    size_t len;
    char *big; /* when text is too small */
} row_prefix;

static void prefix_free(const tessel_sweep *s, row_prefix *rp)
{
    tessel_dealloc(s->alloc, rp->big);
    rp->big = NULL;
}

static int prefix_init(const tessel_sweep *s, uint64_t p, row_prefix *rp)
{
    uint32_t idx[TESSEL_SWEEP_MAX_AXES];
    sweep_point_indices(s, p % s->per_data, idx);
    rp->big = NULL;
    rp->len = build_prefix(s, idx, p, rp->text, sizeof(rp->text));
    if (rp->len != SIZE_MAX)
        return TESSEL_OK;
    /* axis values of up to 100,000 x their length: sized exactly */
    size_t cap = 32;
    for (size_t a = 0; a < s->naxes; a++)
        cap += 2 * (idx[a] != SWEEP_NO_VALUE ? strlen(s->axis[a].values[idx[a]]) : 0) + 4;
    if (!(rp->big = tessel_alloc(s->alloc, cap)))
        return TESSEL_ENOMEM;
    rp->len = build_prefix(s, idx, p, rp->big, cap);
    return rp->len == SIZE_MAX ? TESSEL_ENOMEM : TESSEL_OK;
}

static void prefix_write(const row_prefix *rp, FILE *f)
{
    fwrite(rp->big ? rp->big : rp->text, 1, rp->len, f);
}

int sweep_write_rows(const tessel_sweep *s, uint64_t p, const tessel_report_point *pt,
                     const sweep_verdict *verdict, FILE *summary, FILE *traffic)
{
    row_prefix rp;
    int rc = prefix_init(s, p, &rp);
    if (rc)
        return rc;
    prefix_write(&rp, summary);
    fputc(',', summary); /* no error */
    sweep_write_feasible(summary, pt, verdict);
    rc = tessel_report_summary_csv_row(summary, pt);
    for (unsigned l = 0; !rc && l < pt->nlevels; l++)
        for (unsigned t = 0; !rc && t < pt->ntensors; t++) {
            prefix_write(&rp, traffic);
            rc = tessel_report_traffic_csv_row(traffic, pt, l, t);
        }
    prefix_free(s, &rp);
    return rc;
}

static const char *estimator_name(tessel_sweep_estimator e)
{
    return e == TESSEL_SWEEP_EXACT ? "exact" : e == TESSEL_SWEEP_ANALYTIC ? "analytic" : "stat";
}

int sweep_write_invalid(const sweep_shared *sh, uint64_t p, const tessel_diag *diag,
                        FILE *summary)
{
    const tessel_sweep *s = sh->sweep;
    row_prefix rp;
    if (prefix_init(s, p, &rp))
        return TESSEL_ENOMEM;
    prefix_write(&rp, summary);
    prefix_free(s, &rp);
    char msg[1400];
    tessel_diag_format(diag, msg, sizeof(msg));
    tessel_csv_field(summary, msg);
    fputs(",,,", summary); /* no numbers: no feasibility either */
    const char *identity[5] = { sh->data_spec->name,
                                tessel_report_workload_name(sh->data_spec->workload.kind),
                                sh->label, tessel_point_strategy(sh->data_spec),
                                estimator_name(s->estimator) };
    for (size_t i = 0; i < 5; i++) {
        fputc(',', summary);
        tessel_csv_field(summary, identity[i]);
    }
    /* the numbers: one empty field per summary column after the five
     * identity columns (the header's commas less the four between those) */
    size_t commas = 0;
    for (const char *h = tessel_report_summary_header(); *h; h++)
        commas += *h == ',';
    for (size_t i = 4; i < commas; i++)
        fputc(',', summary);
    fputc('\n', summary);
    return ferror(summary) ? TESSEL_ENOMEM : TESSEL_OK;
}

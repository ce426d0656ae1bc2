/* The numeric fast path for language bindings (issue 28): one design point,
 * or a list of them, derived from a spec by overrides, priced as tessel run
 * prices it (tessel_sweep_record_create) and handed back as int64 and double
 * arrays the caller owns (src/report/values.c), with no CSV text written.
 * Python's per-point cost was mostly the text round trip and one ctypes
 * call per step; here a point is one call of five arguments (the rest held
 * by a tessel_sweep_values, ctypes converting each argument costs), and a
 * list of points one call. */
#include <math.h>
#include <string.h>

#include "tessel/report.h"
#include "tessel/sweep.h"

/* Fills one point's arrays from its record (layout in tessel/sweep.h). */
static void fill_values(const tessel_sweep_record *r, int64_t *ints, double *doubles,
                        size_t text_bytes)
{
    const tessel_report_point *p = tessel_sweep_record_point(r);
    unsigned level = 0, tensor = 0;
    int feasible = tessel_sweep_record_feasible(r, &level, &tensor);
    tessel_report_summary_values(p, ints, doubles);
    int64_t *head = ints + TESSEL_REPORT_SUMMARY_INTS;
    head[0] = feasible;
    head[1] = level;
    head[2] = tensor;
    head[3] = p->nlevels;
    head[4] = p->ntensors;
    head[5] = (int64_t)text_bytes;
    /* which summary doubles the CSV writes as integers (integral, below
     * 1e15: writers.c's format_double) and which as empty cells (not
     * finite), so that a binding converts only those */
    int64_t integral = 0, empty = 0;
    for (unsigned i = 0; i < TESSEL_REPORT_SUMMARY_DOUBLES; i++) {
        double v = doubles[i];
        if (!isfinite(v))
            empty |= (int64_t)1 << i;
        else if (fabs(v) < 1e15 && v == (double)(int64_t)v)
            integral |= (int64_t)1 << i;
    }
    head[6] = integral;
    head[7] = empty;
    tessel_report_traffic_values(p, ints + TESSEL_SWEEP_VALUES_HEAD,
                                 doubles + TESSEL_REPORT_SUMMARY_DOUBLES);
}

int tessel_sweep_point_values(const tessel_spec *spec, const char *const *sets, size_t nsets,
                              int estimator, const tessel_workload_data *data,
                              const tessel_stat_data *stats, tessel_strategy_shared *shared,
                              tessel_stat_cache *cache, const tessel_energy_db *db,
                              const char *label, int timing, const tessel_allocator *a,
                              int64_t *ints, double *doubles, char *text,
                              tessel_sweep_record **keep, tessel_diag_list *errors)
{
    if (keep)
        *keep = NULL;
    tessel_spec *derived = NULL;
    if (nsets) {
        int rc = tessel_spec_derive(spec, sets, nsets, a, &derived, errors);
        if (rc)
            return rc;
        spec = derived;
    }
    tessel_sweep_record *r = NULL;
    int rc = tessel_sweep_record_create(spec, estimator, data, stats, shared, cache, db, label,
                                        timing, a, &r, errors);
    tessel_spec_free(&derived);
    if (rc)
        return rc;
    size_t bytes = tessel_report_point_texts(tessel_sweep_record_point(r), text,
                                             TESSEL_REPORT_TEXTS_MAX);
    if (!bytes) { /* cannot happen with the record's field sizes; said, not hidden */
        tessel_sweep_record_free(&r);
        return tessel_diag_list_add(errors, TESSEL_ERANGE, NULL, 0, 0, NULL,
                                    "a point's text cells exceed %u bytes",
                                    TESSEL_REPORT_TEXTS_MAX);
    }
    fill_values(r, ints, doubles, bytes);
    if (keep)
        *keep = r;
    else
        tessel_sweep_record_free(&r);
    return TESSEL_OK;
}

/* What every point of a tessel_sweep_values shares (sweep.h). */
struct tessel_sweep_values {
    const tessel_allocator *alloc;
    const tessel_spec *spec;
    int estimator, timing;
    const tessel_workload_data *data;
    const tessel_stat_data *stats;
    tessel_strategy_shared *shared;
    tessel_stat_cache *cache;
    const tessel_energy_db *db;
    const char *label;
    int64_t *ints;
    double *doubles;
    char *text;
};

int tessel_sweep_values_create(const tessel_spec *spec, int estimator,
                               const tessel_workload_data *data, const tessel_stat_data *stats,
                               tessel_strategy_shared *shared, tessel_stat_cache *cache,
                               const tessel_energy_db *db, const char *label, int timing,
                               int64_t *ints, double *doubles, char *text,
                               const tessel_allocator *a, tessel_sweep_values **out)
{
    tessel_sweep_values *v = tessel_alloc(a, sizeof(*v));
    *out = v;
    if (!v)
        return TESSEL_ENOMEM;
    *v = (tessel_sweep_values){
        .alloc = a, .spec = spec, .estimator = estimator, .timing = timing, .data = data,
        .stats = stats, .shared = shared, .cache = cache, .db = db, .label = label,
        .ints = ints, .doubles = doubles, .text = text,
    };
    return TESSEL_OK;
}

void tessel_sweep_values_free(tessel_sweep_values **vp)
{
    if (vp && *vp) {
        tessel_dealloc((*vp)->alloc, *vp);
        *vp = NULL;
    }
}

/* One point of v with the nsets NUL-terminated overrides at sets (back to
 * back), into the given arrays. */
static int values_point(tessel_sweep_values *v, const char *sets, size_t nsets, int64_t *ints,
                        double *doubles, char *text, tessel_sweep_record **keep,
                        tessel_diag_list *errors)
{
    enum { FEW = 64 };
    const char *few[FEW];
    const char **list = few;
    if (nsets > FEW) {
        list = tessel_alloc(v->alloc, nsets * sizeof(*list));
        if (!list)
            return tessel_diag_list_add(errors, TESSEL_ENOMEM, NULL, 0, 0, NULL,
                                        "out of memory listing %zu overrides", nsets);
    }
    for (size_t i = 0; i < nsets; i++) {
        list[i] = sets;
        sets += strlen(sets) + 1;
    }
    int rc = tessel_sweep_point_values(v->spec, list, nsets, v->estimator, v->data, v->stats,
                                       v->shared, v->cache, v->db, v->label, v->timing, v->alloc,
                                       ints, doubles, text, keep, errors);
    if (list != few)
        tessel_dealloc(v->alloc, list);
    return rc;
}

int tessel_sweep_values_point(tessel_sweep_values *v, const char *sets, size_t nsets,
                              tessel_sweep_record **keep, tessel_diag_list *errors)
{
    return values_point(v, sets, nsets, v->ints, v->doubles, v->text, keep, errors);
}

int tessel_sweep_values_points(tessel_sweep_values *v, const char *sets, const size_t *nsets,
                               size_t npoints, int64_t *ints, double *doubles, char *text,
                               size_t *done, tessel_diag_list *errors)
{
    for (size_t i = 0; i < npoints; i++) {
        int rc = values_point(v, sets, nsets[i], ints + i * TESSEL_SWEEP_VALUES_INTS,
                              doubles + i * TESSEL_SWEEP_VALUES_DOUBLES,
                              text + i * TESSEL_REPORT_TEXTS_MAX, NULL, errors);
        if (rc) {
            if (done)
                *done = i;
            return rc;
        }
        for (size_t k = 0; k < nsets[i]; k++)
            sets += strlen(sets) + 1;
    }
    if (done)
        *done = npoints;
    return TESSEL_OK;
}

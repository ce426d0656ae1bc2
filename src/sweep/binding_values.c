/* The numeric fast path for language bindings (issue 28): one design point,
 * or a list of them, derived from a spec by overrides, priced as tessel run
 * prices it (tessel_sweep_record_create) and handed back as int64 and double
 * arrays the caller owns (src/report/values.c), with no CSV text written.
 * Python's per-point cost was mostly the text round trip and one ctypes
 * call per step; here a point is one call, and a list of points one call. */
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

int tessel_sweep_points_values(const tessel_spec *spec, const char *const *sets,
                               const size_t *nsets, size_t npoints, int estimator,
                               const tessel_workload_data *data, const tessel_stat_data *stats,
                               tessel_strategy_shared *shared, tessel_stat_cache *cache,
                               const tessel_energy_db *db, const char *label, int timing,
                               const tessel_allocator *a, int64_t *ints, double *doubles,
                               char *text, size_t *done, tessel_diag_list *errors)
{
    size_t first = 0;
    for (size_t i = 0; i < npoints; i++) {
        int rc = tessel_sweep_point_values(spec, sets + first, nsets[i], estimator, data, stats,
                                           shared, cache, db, label, timing, a,
                                           ints + i * TESSEL_SWEEP_VALUES_INTS,
                                           doubles + i * TESSEL_SWEEP_VALUES_DOUBLES,
                                           text + i * TESSEL_REPORT_TEXTS_MAX, NULL, errors);
        if (rc) {
            if (done)
                *done = i;
            return rc;
        }
        first += nsets[i];
    }
    if (done)
        *done = npoints;
    return TESSEL_OK;
}

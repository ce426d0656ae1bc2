/* Flat entry points for language bindings (python/tessel): one design point
 * priced as `tessel run` prices it, and statistics options as arguments, so
 * that a binding holds opaque handles only and mirrors no struct that may
 * grow (tessel_point_request, tessel_report_point, tessel_stat_options). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "tessel/point.h"
#include "tessel/report.h"
#include "tessel/sweep.h"
#include "tessel/template.h"

struct tessel_sweep_record {
    const tessel_allocator *alloc;
    tessel_report_point point;
    int feasible;
    unsigned overflow_level, overflow_tensor;
    /* summary and traffic as CSV ([0], [1]) and JSON ([2], [3]), NUL-terminated,
     * written on first request: a caller that reads the record's numbers pays
     * for no text */
    char *text[4];
};

int tessel_sweep_stats_create(const tessel_spec *spec, const tessel_workload_data *data,
                              uint64_t base_rows, uint64_t base_cols, double sample,
                              uint64_t seed, double output_sample, const tessel_allocator *a,
                              tessel_stat_data **out, tessel_diag *diag)
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = base_rows;
    o.base[1] = base_cols ? base_cols : base_rows;
    if (sample > 0)
        o.sample_fraction = sample;
    o.seed = seed;
    if (output_sample >= 0) {
        /* as tessel run --output-sample: the fraction as given, no floor */
        o.output_fraction = output_sample;
        o.output_min_flops = 0;
    }
    return tessel_point_stats_create(spec, data, &o, a, out, diag); /* a template's own grid */
}

/* One report file's text as tessel_report_write_dir writes it (which: 0
 * summary.csv, 1 traffic.csv, 2 summary.json, 3 traffic.json), into a
 * buffer from the allocator; a stream into memory that fills up is
 * written again into a buffer twice as large. */
static int record_text(tessel_sweep_record *r, int which, tessel_diag *diag)
{
    int traffic = which & 1;
    for (size_t size = 16384; size <= ((size_t)1 << 30); size *= 2) {
        char *buf = tessel_alloc(r->alloc, size);
        if (!buf)
            return tessel_diag_oom(diag, NULL, "writing a report into memory", size);
        FILE *f = fmemopen(buf, size, "w");
        if (!f) {
            tessel_dealloc(r->alloc, buf);
            return tessel_diag_set(diag, TESSEL_EIO, NULL, 0, 0, NULL,
                                   "cannot open a stream into memory");
        }
        int rc;
        if (which >= 2) {
            rc = traffic ? tessel_report_traffic_json(f, &r->point, 1)
                         : tessel_report_summary_json(f, &r->point, 1);
        } else {
            fputs(traffic ? tessel_report_traffic_header() : tessel_report_summary_header(), f);
            rc = traffic ? tessel_report_traffic_csv_rows(f, &r->point)
                         : tessel_report_summary_csv_row(f, &r->point);
        }
        int full = fflush(f) != 0 || ferror(f) || ftell(f) < 0 ||
                   (size_t)ftell(f) + 1 >= size;
        size_t len = full ? 0 : (size_t)ftell(f);
        fclose(f);
        if (!full && !rc) {
            buf[len] = '\0';
            r->text[which] = buf;
            return TESSEL_OK;
        }
        tessel_dealloc(r->alloc, buf);
        if (rc && !full)
            return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "cannot write the report");
    }
    return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL, "the report exceeds 1 GiB");
}

/* The `data` label of a point: the caller's, else the data's, the
 * statistics' or (analytic) the density models'. */
static void record_label(const tessel_spec *spec, const tessel_workload_data *data,
                         const tessel_stat_data *stats, const char *label, char *buf, size_t n)
{
    if (label)
        snprintf(buf, n, "%s", label);
    else if (data)
        tessel_workload_data_label(data, buf, n);
    else if (stats)
        snprintf(buf, n, "%s", tessel_stat_data_label(stats));
    else
        tessel_model_analytic_label(spec, buf, n);
}

/* One design point as tessel run prices it: estimate, energy, record. */
int tessel_sweep_record_create(const tessel_spec *spec, int estimator,
                               const tessel_workload_data *data, const tessel_stat_data *stats,
                               tessel_strategy_shared *shared, tessel_stat_cache *cache,
                               const tessel_energy_db *db, const char *label, int timing,
                               const tessel_allocator *a, tessel_sweep_record **out,
                               tessel_diag_list *errors)
{
    *out = NULL;
    if (estimator < TESSEL_POINT_EXACT || estimator > TESSEL_POINT_ANALYTIC || !db)
        return tessel_diag_list_add(errors, TESSEL_EINVAL, NULL, 0, 0, NULL,
                                    "a point needs an estimator (0 exact, 1 stat, 2 analytic) "
                                    "and energy tables");
    tessel_design_energy energy;
    int rc = tessel_energy_design(db, spec, &energy, errors);
    if (rc)
        return rc;
    tessel_sweep_record *r = tessel_alloc(a, sizeof(*r));
    tessel_point_result *pr = tessel_alloc(a, sizeof(*pr));
    tessel_diag d;
    tessel_diag_clear(&d);
    if (!r || !pr) {
        tessel_dealloc(a, r);
        tessel_dealloc(a, pr);
        tessel_diag_oom(&d, NULL, "pricing a design point", sizeof(*r) + sizeof(*pr));
        tessel_diag_list_push(errors, &d);
        return TESSEL_ENOMEM;
    }
    memset(r, 0, sizeof(*r));
    r->alloc = a;
    tessel_point_request req = {
        .spec = spec,
        .estimator = (tessel_point_estimator)estimator,
        .data = data,
        .stats = stats,
        .shared = shared,
        .stat_cache = cache,
        .alloc = a,
    };
    rc = tessel_point_evaluate(&req, pr, &d);
    if (!rc) {
        if (!timing)
            pr->result.seconds = 0;
        r->feasible = pr->feasible;
        r->overflow_level = pr->overflow_level;
        r->overflow_tensor = pr->overflow_tensor;
        char text[TESSEL_REPORT_LABEL_MAX];
        record_label(spec, data, stats, label, text, sizeof(text));
        rc = tessel_report_point_build(spec, &pr->result, &energy, text,
                                       tessel_point_strategy(spec), &r->point, &d);
    }
    tessel_point_result_free(pr);
    tessel_dealloc(a, pr);
    if (rc) {
        tessel_diag_list_push(errors, &d);
        tessel_sweep_record_free(&r);
        return rc;
    }
    *out = r;
    return TESSEL_OK;
}

void tessel_sweep_record_free(tessel_sweep_record **rp)
{
    tessel_sweep_record *r = rp ? *rp : NULL;
    if (!r)
        return;
    for (int i = 0; i < 4; i++)
        tessel_dealloc(r->alloc, r->text[i]);
    tessel_dealloc(r->alloc, r);
    *rp = NULL;
}

const char *tessel_sweep_record_text(tessel_sweep_record *r, int which, tessel_diag *diag)
{
    if (which < 0 || which > 3) {
        tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                        "report text %d: 0 to 3 (summary.csv, traffic.csv, summary.json, "
                        "traffic.json)", which);
        return NULL;
    }
    if (!r->text[which] && record_text(r, which, diag))
        return NULL;
    return r->text[which];
}

const tessel_report_point *tessel_sweep_record_point(const tessel_sweep_record *r)
{
    return &r->point;
}

int tessel_sweep_record_feasible(const tessel_sweep_record *r, unsigned *level, unsigned *tensor)
{
    if (level)
        *level = r->overflow_level;
    if (tensor)
        *tensor = r->overflow_tensor;
    return r->feasible;
}

int tessel_sweep_spec_warnings(const tessel_spec *spec, const tessel_energy_db *db,
                               tessel_diag_list *warnings)
{
    int n = tessel_spec_plausibility(spec, warnings);
    if (n < 0)
        return n;
    tessel_design_energy energy;
    int rc = tessel_energy_design(db, spec, &energy, NULL);
    int m = tessel_energy_warnings(db, spec, rc ? NULL : &energy, warnings);
    return m < 0 ? m : n + m;
}

int tessel_sweep_run_flat(const tessel_sweep *s, const char *dir, unsigned threads, int timing,
                          int skip_invalid, int overwrite, tessel_sweep_progress_fn progress,
                          void *progress_ud, const tessel_allocator *a, uint64_t *points,
                          double *eval_seconds, tessel_diag *diag)
{
    tessel_sweep_options o;
    tessel_sweep_options_init(&o);
    o.threads = threads;
    o.timing = timing;
    o.skip_invalid = skip_invalid;
    o.overwrite = overwrite;
    o.progress = progress;
    o.progress_ud = progress_ud;
    tessel_sweep_report report;
    memset(&report, 0, sizeof(report));
    int rc = tessel_sweep_run(s, dir, &o, a, &report, diag);
    if (points)
        *points = report.points;
    if (eval_seconds)
        *eval_seconds = report.eval_seconds;
    return rc;
}

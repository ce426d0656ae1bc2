/* The design-point record: energy accounting and roofline from an estimate
 * (the rules are in include/tessel/report.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tessel/report.h"

const char *tessel_report_workload_name(tessel_workload_kind kind)
{
    switch (kind) {
    case TESSEL_WORKLOAD_SPMSPM:
        return "spmspm";
    case TESSEL_WORKLOAD_TTM:
        return "ttm";
    case TESSEL_WORKLOAD_MTTKRP:
        return "mttkrp";
    case TESSEL_WORKLOAD_SPMV:
        return "spmv";
    case TESSEL_WORKLOAD_OTHER:
        break;
    }
    return "other";
}

/* Copies s into buf[n]; 0, or TESSEL_EINVAL naming `what` when it does not fit. */
static int copy_name(char *buf, size_t n, const char *s, const char *what, tessel_diag *diag)
{
    if (!s)
        s = "";
    size_t len = strlen(s);
    if (len >= n)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, what,
                               "report: %s is %zu bytes long, at most %zu fit", what, len, n - 1);
    memcpy(buf, s, len + 1);
    return TESSEL_OK;
}

static double word_bits_of(const tessel_spec_level *lv, const tessel_component_energy *e)
{
    if (e->width_bits)
        return (double)e->width_bits;
    if (lv->word_bits)
        return (double)lv->word_bits;
    return 64.0;
}

/* Storage accesses of one tensor at one level and their energy. */
static void account(const tessel_traffic *t, double word_bits, unsigned value_bits,
                    const tessel_component_energy *e, tessel_report_access *out)
{
    /* bytes x 8 / W, in that order, as documented. */
    out->word_bits = word_bits;
    out->reads = ((double)t->out_data + (double)t->child_read_data) * 8.0 / word_bits;
    out->writes = (double)t->in_data * 8.0 / word_bits;
    out->updates = (double)t->child_write_data * 8.0 / word_bits;
    out->metadata_reads =
        ((double)t->out_metadata + (double)t->child_read_metadata +
         (double)t->skipped_metadata_bytes) * 8.0 / word_bits;
    out->metadata_writes =
        ((double)t->in_metadata + (double)t->child_write_metadata) * 8.0 / word_bits;
    out->energy_pj = out->reads * e->pj[TESSEL_ACTION_READ] +
                     out->writes * e->pj[TESSEL_ACTION_WRITE] +
                     out->updates * e->pj[TESSEL_ACTION_UPDATE] +
                     out->metadata_reads * e->pj[TESSEL_ACTION_METADATA_READ] +
                     out->metadata_writes * e->pj[TESSEL_ACTION_METADATA_WRITE];
    /* Scalar skipping and gating (model_scalar.c): the format reads that
     * found a skip are metadata reads above; the skipped and gated scalar
     * reads cost the gated read, as Sparseloop charges them, and gated
     * format reads the gated metadata read (ERT energies, else 0). */
    out->gated_energy_pj =
        ((double)t->skipped_reads + (double)t->gated_reads) * value_bits / word_bits *
            e->gated_pj[TESSEL_GATED_READ] +
        (double)t->gated_metadata_bytes * 8.0 / word_bits * e->gated_pj[TESSEL_GATED_METADATA_READ];
    out->energy_pj += out->gated_energy_pj;
}

/* The `tiles` column: per level below the backing store that the
 * estimator tiled uniformly, "NAME=i:E,j:E,..." in workload index order,
 * levels joined by ';' (docs/outputs.md). */
static void tiles_text(const tessel_spec *spec, const tessel_result *r, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned l = 1; l < spec->nlevels; l++) {
        int any = 0;
        for (unsigned x = 0; x < spec->workload.nindices; x++)
            any |= r->tile[l][x] != 0;
        if (!any)
            continue;
        int k = snprintf(buf + len, n - len, "%s%s=", len ? ";" : "", spec->level[l].name);
        for (unsigned x = 0; k >= 0 && (size_t)k < n - len && x < spec->workload.nindices; x++) {
            len += (size_t)k;
            k = snprintf(buf + len, n - len, "%s%s:%llu", x ? "," : "",
                         spec->workload.index_name[x], (unsigned long long)r->tile[l][x]);
        }
        if (k < 0 || (size_t)k >= n - len) {
            buf[0] = '\0'; /* never a truncated list */
            return;
        }
        len += (size_t)k;
    }
}

/* Bytes of values in a format whose values are `value_bits` wide, as a
 * count of values (the estimators round a tile's bytes up, so a width that
 * is not a multiple of 8 gives the nearest count). */
static uint64_t elements_of(uint64_t bytes, unsigned value_bits)
{
    if (!value_bits)
        return 0;
    double n = (double)bytes * 8.0 / (double)value_bits;
    return n >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)(n + 0.5);
}

/* The reads_elements / writes_elements columns: what level l's child
 * moves, in values. Below the innermost level the child is level l+1 and
 * its fills, read-backs and write-backs carry values in its own format;
 * at the innermost level it is the MACs: one value of every tensor per
 * effectual multiply (an uncompressed output's first reduction coordinate
 * excepted, rule 2), and one result of the output. */
static void count_elements(const tessel_spec *spec, const tessel_result *result,
                           tessel_report_point *out)
{
    unsigned L = out->nlevels - 1;
    for (unsigned l = 0; l < out->nlevels; l++)
        for (unsigned t = 0; t < out->ntensors; t++) {
            const tessel_traffic *tr = &result->traffic[l][t];
            if (l < L) {
                unsigned vb = spec->level[l + 1].value_bits;
                out->reads_elements[l][t] = elements_of(tr->child_read_data, vb);
                out->writes_elements[l][t] = elements_of(tr->child_write_data, vb);
            } else {
                out->reads_elements[l][t] = tr->reads; /* the MACs' reads */
                out->writes_elements[l][t] =
                    t == 0 && !tessel_spec_bypassed(spec, l, t) ? result->macs : 0;
            }
        }
}

static double level_bytes_of(const tessel_traffic *t)
{
    return (double)t->in_data + (double)t->in_metadata + (double)t->out_data +
           (double)t->out_metadata + (double)t->child_read_data +
           (double)t->child_read_metadata + (double)t->child_write_data +
           (double)t->child_write_metadata;
}

/* The spatial columns (docs/models/spatial.md): every tile of the split
 * level waits for its busiest instance; work is in cycles (spatial.c). */
static void spatial_columns(const tessel_spec *spec, const tessel_spatial *sp,
                            tessel_report_point *out)
{
    out->spatial_cycles = out->imbalance = out->work_stdev = out->pe_utilization = NAN;
    if (!sp->present || sp->level >= spec->nlevels)
        return;
    out->spatial_cycles = sp->step_max_work;
    out->imbalance = sp->mean_work > 0 ? sp->max_work / sp->mean_work : 0;
    out->work_stdev = sp->stdev_work;
    out->pe_utilization = sp->step_max_work > 0 ? sp->mean_work / sp->step_max_work : 0;
}

/* One design point's report record (the summary.csv row and traffic rows) from a
 * spec, an estimate and its energy. */
int tessel_report_point_build(const tessel_spec *spec, const tessel_result *result,
                              const tessel_design_energy *energy, const char *data,
                              const char *strategy, tessel_report_point *out, tessel_diag *diag)
{
    memset(out, 0, sizeof(*out));
    if (result->nlevels != spec->nlevels || result->ntensors != spec->workload.ntensors ||
        spec->nlevels == 0 || spec->nlevels > TESSEL_SPEC_MAX_LEVELS ||
        spec->workload.ntensors > TESSEL_SPEC_MAX_TENSORS)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "report: the estimate has %u levels and %u tensors, the spec %u "
                               "and %u",
                               result->nlevels, result->ntensors, spec->nlevels,
                               spec->workload.ntensors);
    int rc = copy_name(out->design, sizeof(out->design), spec->name, "design", diag);
    if (!rc)
        rc = copy_name(out->workload, sizeof(out->workload),
                       tessel_report_workload_name(spec->workload.kind), "workload", diag);
    if (!rc)
        rc = copy_name(out->data, sizeof(out->data), data, "data", diag);
    if (!rc)
        rc = copy_name(out->strategy, sizeof(out->strategy), strategy, "strategy", diag);
    /* result->estimator may lack its NUL if a producer filled all 16 bytes. */
    char estimator[sizeof(result->estimator) + 1];
    memcpy(estimator, result->estimator, sizeof(result->estimator));
    estimator[sizeof(result->estimator)] = '\0';
    if (!rc)
        rc = copy_name(out->estimator, sizeof(out->estimator), estimator, "estimator", diag);
    if (!rc && strcmp(estimator, "stat") == 0)
        snprintf(out->stat_path, sizeof(out->stat_path), "%s",
                 result->stat_walked                    ? "walk"
                 : result->stat_nested_fraction > 0 ? "sampled"
                 : result->stat_nested_formula      ? "formula"
                                                    : "closed");
    for (unsigned l = 0; l < spec->nlevels && !rc; l++)
        rc = copy_name(out->level_name[l], sizeof(out->level_name[l]), spec->level[l].name,
                       "level name", diag);
    for (unsigned t = 0; t < spec->workload.ntensors && !rc; t++)
        rc = copy_name(out->tensor_name[t], sizeof(out->tensor_name[t]),
                       spec->workload.tensor[t].name, "tensor name", diag);
    if (rc) {
        memset(out, 0, sizeof(*out));
        return rc;
    }

    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
    memcpy(out->traffic, result->traffic, sizeof(out->traffic));
    for (unsigned l = 0; l < out->nlevels; l++) {
        const tessel_component_energy *e = &energy->level[l];
        double w = word_bits_of(&spec->level[l], e);
        for (unsigned t = 0; t < out->ntensors; t++) {
            const tessel_report_access *ac = &out->access[l][t];
            account(&result->traffic[l][t], w, spec->level[l].value_bits, e,
                    &out->access[l][t]);
            out->level_energy_pj[l] += ac->energy_pj;
            double *by = out->level_action_pj[l];
            by[0] += ac->reads * e->pj[TESSEL_ACTION_READ] + ac->gated_energy_pj;
            by[1] += ac->writes * e->pj[TESSEL_ACTION_WRITE];
            by[2] += ac->updates * e->pj[TESSEL_ACTION_UPDATE];
            by[3] += ac->metadata_reads * e->pj[TESSEL_ACTION_METADATA_READ];
            by[4] += ac->metadata_writes * e->pj[TESSEL_ACTION_METADATA_WRITE];
            out->level_bytes[l] += level_bytes_of(&result->traffic[l][t]);
        }
        out->storage_energy_pj += out->level_energy_pj[l];
    }

    count_elements(spec, result, out);
    out->macs = result->macs;
    /* Sparseloop's compute counts (src/model/model_scalar.c); templates and
     * drt, which refuse compute_optimization, count the multiplies only */
    int copt = spec->compute.optimization != 0;
    out->computes_algorithmic = result->computes_algorithmic;
    out->computes_actual = copt ? result->computes_actual : result->macs;
    out->computes_gated = copt ? result->computes_gated : 0;
    out->computes_skipped = copt ? result->computes_skipped : 0;
    out->intersections = result->intersections;
    out->output_nnz = result->output_nnz;
    out->output_nnz_stderr = result->output_nnz_has_stderr ? result->output_nnz_stderr : NAN;
    out->dram_bytes = result->dram_bytes;
    out->compulsory_bytes = result->compulsory_bytes;
    out->compulsory_estimated = result->compulsory_estimated;
    out->traffic_ratio =
        result->compulsory_bytes ? (double)result->dram_bytes / (double)result->compulsory_bytes
                                 : 0.0;
    out->model_seconds = result->seconds;
    out->stat_offgrid_edges = result->offgrid_edges;
    out->stat_design_may_differ = result->stat_design_may_differ;
    out->area_um2 = energy->area_um2;
    out->tiled_metadata_bytes = result->tiled_metadata_bytes;
    tiles_text(spec, result, out->tiles, sizeof(out->tiles));
    out->energy = *energy;
    out->clock_ghz = spec->compute.clock_ghz;

    spatial_columns(spec, &result->spatial, out);
    /* a gated compute takes its cycle, a skipped one none (Sparseloop) */
    tessel_roofline_evaluate_busy(spec, (double)out->computes_actual + (double)out->computes_gated,
                                  isnan(out->spatial_cycles) ? 0 : out->spatial_cycles,
                                  out->level_bytes, &out->roofline);
    const char *bound = tessel_roofline_bound_name(spec, &out->roofline);
    rc = copy_name(out->bound, sizeof(out->bound), bound, "bound", diag);
    if (rc) {
        memset(out, 0, sizeof(*out));
        return rc;
    }
    if (spec->timing == TESSEL_SPEC_TIMING_PIPELINE) /* docs/models/timing.md */
        tessel_report_pipeline_apply(spec, result, out);

    out->mac_energy_pj =
        (double)out->computes_actual * energy->mac.pj[TESSEL_ACTION_COMPUTE] +
        (double)out->computes_gated * energy->mac.gated_pj[TESSEL_GATED_COMPUTE] +
        (double)out->computes_skipped * energy->mac.gated_pj[TESSEL_SKIPPED_COMPUTE];
    out->intersect_energy_pj =
        (double)result->intersections * energy->intersect.pj[TESSEL_ACTION_COMPUTE];
    /* Leakage is paid by every instance for every cycle of the run; one MAC
     * and one intersection unit per PE (the area convention of energy.h). */
    double leak_per_cycle = 0;
    for (unsigned l = 0; l < out->nlevels; l++) {
        unsigned inst = spec->level[l].instances ? spec->level[l].instances : 1;
        double level_leak = energy->level[l].pj[TESSEL_ACTION_LEAK] * (double)inst;
        out->level_action_pj[l][5] = out->roofline.cycles * level_leak;
        leak_per_cycle += level_leak;
    }
    double pes = spec->compute.pes ? (double)spec->compute.pes : 1.0;
    leak_per_cycle += (energy->mac.pj[TESSEL_ACTION_LEAK] +
                       energy->intersect.pj[TESSEL_ACTION_LEAK]) * pes;
    out->leak_energy_pj = out->roofline.cycles * leak_per_cycle;
    out->energy_pj = out->storage_energy_pj + out->mac_energy_pj + out->intersect_energy_pj +
                     out->leak_energy_pj;
    if (out->pipeline.present) /* the networks' deliveries (timing: pipeline) */
        out->energy_pj += out->pipeline.network_energy_pj;
    return TESSEL_OK;
}

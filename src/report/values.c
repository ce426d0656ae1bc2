/* A report point as numbers for language bindings: summary.csv's and
 * traffic.csv's cells as int64 and double arrays (and the few text cells
 * NUL-separated), in a fixed documented order, so that a binding reads a
 * point without the library writing CSV text and the binding parsing it
 * back (issue 28: that round trip was most of Python's cost per point).
 * The values are those writers.c writes; python-unit checks that both
 * paths agree on every column. */
#include <string.h>

#include "report_internal.h"
#include "tessel/report.h"

/* Column names in the order the arrays hold them (docs/python.md). */
static const char *const value_columns[TESSEL_REPORT_VALUE_LISTS] = {
    /* summary ints */
    "dram_bytes,compulsory_bytes,flops,output_nnz,intersections,stat_offgrid_edges,"
    "stat_design_may_differ,tiled_metadata_bytes,algorithmic_computes,actual_computes,"
    "gated_computes,skipped_computes",
    /* summary doubles */
    "traffic_ratio,energy_pj,cycles,seconds,model_seconds,output_nnz_stderr,compute_cycles,"
    "compute_utilization,area_um2,storage_energy_pj,mac_energy_pj,intersect_energy_pj,"
    "leak_energy_pj,spatial_cycles,imbalance,work_stdev,pe_utilization",
    /* summary texts */
    "design,workload,data,strategy,estimator,bound,stat_path,tiles,level_energy,level_cycles",
    /* traffic ints */
    "fills,reads,updates,writebacks,data_bytes,metadata_bytes,algorithmic,actual,skipped,"
    "gated,bumped_bytes,reads_elements,writes_elements,overflow_bytes,partition_bytes,"
    "worst_tile_bytes,skipped_reads,gated_reads,skipped_metadata_bytes,gated_metadata_bytes",
    /* traffic doubles */
    "energy_pj,overflow_tiles_share",
};

const char *tessel_report_value_columns(int which)
{
    return which >= 0 && which < TESSEL_REPORT_VALUE_LISTS ? value_columns[which] : NULL;
}

void tessel_report_summary_values(const tessel_report_point *p, int64_t *ints, double *doubles)
{
    const int64_t in[TESSEL_REPORT_SUMMARY_INTS] = {
        (int64_t)p->dram_bytes,         (int64_t)p->compulsory_bytes,
        (int64_t)p->macs,               (int64_t)p->output_nnz,
        (int64_t)p->intersections,      (int64_t)p->stat_offgrid_edges,
        (int64_t)p->stat_design_may_differ, p->tiled_metadata_bytes,
        (int64_t)p->computes_algorithmic, (int64_t)p->computes_actual,
        (int64_t)p->computes_gated,     (int64_t)p->computes_skipped,
    };
    const double dn[TESSEL_REPORT_SUMMARY_DOUBLES] = {
        p->traffic_ratio,          p->energy_pj,           p->roofline.cycles,
        p->roofline.seconds,       p->model_seconds,       p->output_nnz_stderr,
        p->roofline.compute_cycles, p->roofline.compute_utilization, p->area_um2,
        p->storage_energy_pj,      p->mac_energy_pj,       p->intersect_energy_pj,
        p->leak_energy_pj,         p->spatial_cycles,      p->imbalance,
        p->work_stdev,             p->pe_utilization,
    };
    memcpy(ints, in, sizeof(in));
    memcpy(doubles, dn, sizeof(dn));
}

void tessel_report_traffic_values(const tessel_report_point *p, int64_t *ints, double *doubles)
{
    for (unsigned l = 0; l < p->nlevels; l++)
        for (unsigned t = 0; t < p->ntensors; t++) {
            const tessel_traffic *tr = &p->traffic[l][t];
            /* overflow_tiles_share as writers.c computes it (rule 4) */
            uint64_t moved = t == 0 ? tr->writebacks : tr->fills;
            const int64_t in[TESSEL_REPORT_TRAFFIC_INTS] = {
                (int64_t)tr->fills,          (int64_t)tr->reads,
                (int64_t)tr->updates,        (int64_t)tr->writebacks,
                (int64_t)tr->data_bytes,     (int64_t)tr->metadata_bytes,
                (int64_t)tr->algorithmic,    (int64_t)(tr->fills + tr->updates),
                (int64_t)tr->skipped,        (int64_t)tr->gated,
                (int64_t)tr->bumped_bytes,   (int64_t)p->reads_elements[l][t],
                (int64_t)p->writes_elements[l][t], (int64_t)tr->overflow_bytes,
                (int64_t)tr->partition_bytes, (int64_t)tr->worst_tile_bytes,
                (int64_t)tr->skipped_reads,  (int64_t)tr->gated_reads,
                (int64_t)tr->skipped_metadata_bytes, (int64_t)tr->gated_metadata_bytes,
            };
            const double dn[TESSEL_REPORT_TRAFFIC_DOUBLES] = {
                p->access[l][t].energy_pj,
                moved ? (double)tr->overflow_tiles / (double)moved : 0.0,
            };
            memcpy(ints, in, sizeof(in));
            memcpy(doubles, dn, sizeof(dn));
            ints += TESSEL_REPORT_TRAFFIC_INTS;
            doubles += TESSEL_REPORT_TRAFFIC_DOUBLES;
        }
}

/* Appends s and its NUL at buf + *len; 0 when it does not fit. */
static int append(char *buf, size_t n, size_t *len, const char *s)
{
    size_t k = strlen(s) + 1;
    if (k > n - *len)
        return 0;
    memcpy(buf + *len, s, k);
    *len += k;
    return 1;
}

size_t tessel_report_point_texts(const tessel_report_point *p, char *buf, size_t n)
{
    char levels[REPORT_LEVEL_ENERGY_MAX];
    char cycles[REPORT_LEVEL_ENERGY_MAX];
    report_level_energy_text(p, levels, sizeof(levels));
    report_level_cycles_text(p, cycles, sizeof(cycles));
    const char *const cells[TESSEL_REPORT_SUMMARY_TEXTS] = {
        p->design, p->workload, p->data, p->strategy, p->estimator,
        p->bound,  p->stat_path, p->tiles, levels, cycles,
    };
    size_t len = 0;
    for (unsigned i = 0; i < TESSEL_REPORT_SUMMARY_TEXTS; i++)
        if (!append(buf, n, &len, cells[i]))
            return 0;
    for (unsigned l = 0; l < p->nlevels; l++)
        if (!append(buf, n, &len, p->level_name[l]))
            return 0;
    for (unsigned t = 0; t < p->ntensors; t++)
        if (!append(buf, n, &len, p->tensor_name[t]))
            return 0;
    return len;
}

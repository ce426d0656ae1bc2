/* tessel — dynamic reflexive tiling (DRT, drt §3-4).  Module `drt`:
 * depends on `model` (and through it `stats`, `spec`, `tensor`, `base`).
 *
 * DRT builds non-uniform coordinate-space tiles at run time from uniform
 * micro tiles (32 x 32 by default, drt §5.2.4): for each task it grows the
 * most stationary tensor's tile (contracted dimension first, then the
 * uncontracted ones; or alternating between them), co-tiles the other
 * operand along the shared index, and stops when a tile, or the output tile
 * it widens, would overflow its static buffer partition (e.g. A 5 %, B 45 %,
 * Z 50 %; the output counted from the output table, which the stat path
 * estimates). Its traffic follows docs/semantics.md's rules with these
 * dynamic tiles in place of uniform ones. */
#ifndef TESSEL_DRT_H
#define TESSEL_DRT_H

#include <stdint.h>

#include "tessel/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tessel_drt_growth {
    TESSEL_DRT_GROW_CONTRACTED_FIRST = 0, /* drt §3.2 default */
    TESSEL_DRT_GROW_ALTERNATING = 1       /* drt §3.2 / §6.3: near-square tiles */
} tessel_drt_growth;

typedef struct tessel_drt_options {
    uint64_t micro[2];        /* micro tile rows x columns (default 32 x 32, drt §5.2.4) */
    tessel_drt_growth growth; /* default contracted-first */
} tessel_drt_options;

void tessel_drt_options_init(tessel_drt_options *o);
/* "contracted-first", "alternating"; -1 if unknown. */
int tessel_drt_growth_from_name(const char *name);
const char *tessel_drt_growth_name(tessel_drt_growth g);

/* What DRT decided, beside the traffic. */
typedef struct tessel_drt_summary {
    uint64_t tasks;            /* effectual macro-tile tasks */
    double mean_edge[TESSEL_SPEC_MAX_INDICES]; /* mean macro-tile edge per workload index */
    double buffer_utilization; /* mean over input tile loads of footprint / partition */
} tessel_drt_summary;

/* Exact: walks the micro-tile grid of the real data. */
int tessel_drt_exact(const tessel_spec *spec, const tessel_workload_data *data,
                     const tessel_drt_options *opt, const tessel_allocator *a,
                     tessel_result *out, tessel_drt_summary *summary, tessel_diag *diag);

/* Statistical: from micro-tile occupancy collected once (one pass over
 * each input), then any number of design points without the data. */
typedef struct tessel_drt_stats tessel_drt_stats;
int tessel_drt_stats_create(const tessel_spec *spec, const tessel_workload_data *data,
                            const tessel_drt_options *opt, const tessel_allocator *a,
                            tessel_drt_stats **out, tessel_diag *diag);
void tessel_drt_stats_free(tessel_drt_stats **s);
int tessel_drt_stat(const tessel_spec *spec, const tessel_drt_stats *s, tessel_result *out,
                    tessel_drt_summary *summary, tessel_diag *diag);
/* tessel_drt_stat with another growth mode than the one the statistics
 * were created with (the statistics do not depend on it). */
int tessel_drt_stat_growth(const tessel_spec *spec, const tessel_drt_stats *s,
                           tessel_drt_growth growth, tessel_result *out,
                           tessel_drt_summary *summary, tessel_diag *diag);
/* Wall time the collection took (also out->stats_seconds of every stat). */
double tessel_drt_stats_seconds(const tessel_drt_stats *s);

/* DRT on two or more buffer levels (drt §4.1, §5.2.1): the spec has a
 * backing store and at least two buffers (e.g. DRAM -> LLB -> PE
 * buffers). The LLB level is the one-level DRT of the spec cut to its
 * first two levels (identical traffic); inside each LLB task DRT runs
 * again with the next buffer's partitions, formats and loop order, and so
 * on down to the innermost level (src/drt/drt_levels.c states the rules).
 * summary (optional): [0] the LLB level, [1] the innermost level.
 * Statistics for the stat path are collected with the spec cut to two
 * levels (tessel_drt_stats_create). */
int tessel_drt_levels_exact(const tessel_spec *spec, const tessel_workload_data *data,
                            const tessel_drt_options *opt, const tessel_allocator *a,
                            tessel_result *out, tessel_drt_summary summary[2],
                            tessel_diag *diag);
int tessel_drt_levels_stat(const tessel_spec *spec, const tessel_drt_stats *s,
                           tessel_drt_growth growth, tessel_result *out,
                           tessel_drt_summary summary[2], tessel_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

/* tessel — reports: one design-point record (traffic, energy, roofline)
 * built from an estimate, and its writers: traffic.csv / summary.csv (or
 * .json) and a human-readable summary.  Module `report`: depends on `model`
 * and `energy` (and what they use).  The library never chooses a stream
 * itself: writers take a FILE * or a directory from the caller.
 *
 * Energy accounting (README.md "Reports: traffic.csv and summary.csv").
 * At level l for tensor t, with W = the level's word size in bits
 * (tessel_component_energy.width_bits when non-zero, else the spec level's
 * word_bits, else 64) and E(action) = pj[action] of level l's component:
 *   reads           = (out_data + child_read_data)         x 8 / W  -> E(read)
 *   writes          =  in_data                             x 8 / W  -> E(write)
 *   updates         =  child_write_data                    x 8 / W  -> E(update)
 *   metadata reads  = (out_metadata + child_read_metadata) x 8 / W  -> E(metadata_read)
 *   metadata writes = (in_metadata + child_write_metadata) x 8 / W  -> E(metadata_write)
 * Access counts are fractional (doubles): a partial word costs its fraction.
 * Storage energy of (l, t) is the sum of the five products; it is the
 * `energy_pj` column of traffic.csv.  Counts are totals over all instances
 * of a level, so no per-instance factor applies to access energy.
 *   MAC energy          = macs x mac.pj[compute]
 *   intersection energy = intersections x intersect.pj[compute]
 *   leak energy         = cycles x (sum over levels of pj[leak] x instances
 *                          + (mac.pj[leak] + intersect.pj[leak]) x pes)
 *   total               = storage (all levels, all tensors) + MAC
 *                          + intersection + leak.
 * Metadata actions are taken as the energy module resolved them (it falls
 * back to read/write when a table has no metadata action).
 *
 * Roofline input: level_bytes[l] = sum over tensors of in + out +
 * child_read + child_write, data and metadata (every byte level l reads or
 * writes, both sides). */
#ifndef TESSEL_REPORT_H
#define TESSEL_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "tessel/base.h"
#include "tessel/energy.h"
#include "tessel/model.h"
#include "tessel/spec.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TESSEL_REPORT_LABEL_MAX 1024u /* bytes of the `data` label, with its NUL */

/* Storage accesses and energy of one tensor at one level (see above). */
typedef struct tessel_report_access {
    double word_bits;        /* W used for this level */
    double reads, writes, updates, metadata_reads, metadata_writes; /* accesses (words) */
    double energy_pj;        /* storage energy: sum of accesses x energy per action */
} tessel_report_access;

/* One design point: everything traffic.csv, summary.csv and the human
 * summary show. A plain value (no allocation): copy it, share it
 * read-only between threads. */
typedef struct tessel_report_point {
    char design[64];        /* spec->name */
    char workload[16];      /* spmspm, spmv, ttm, mttkrp, other */
    char data[TESSEL_REPORT_LABEL_MAX]; /* e.g. "G51*G51^T" */
    char strategy[32];      /* e.g. "fixed" */
    char estimator[16];     /* tessel_result.estimator */
    unsigned nlevels, ntensors;
    char level_name[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_NAME_MAX];
    char tensor_name[TESSEL_SPEC_MAX_TENSORS][TESSEL_SPEC_NAME_MAX];
    tessel_traffic traffic[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS];
    tessel_report_access access[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS];
    double level_energy_pj[TESSEL_SPEC_MAX_LEVELS]; /* storage energy per level (all tensors) */
    double level_bytes[TESSEL_SPEC_MAX_LEVELS];     /* roofline input, see above */
    double storage_energy_pj;
    double mac_energy_pj;
    double intersect_energy_pj;
    double leak_energy_pj;
    double energy_pj;       /* total */
    tessel_roofline roofline;
    char bound[TESSEL_SPEC_NAME_MAX]; /* "compute" or the bounding level's name */
    double clock_ghz;
    uint64_t macs, intersections, output_nnz;
    uint64_t dram_bytes, compulsory_bytes;
    double traffic_ratio;   /* dram_bytes / compulsory_bytes; 0 when compulsory_bytes is 0 */
    double model_seconds;   /* the estimator's wall time (tessel_result.seconds) */
    double area_um2;        /* tessel_design_energy.area_um2 */
} tessel_report_point;

/* "spmspm", "ttm", "mttkrp", "spmv" or "other". Never NULL. */
const char *tessel_report_workload_name(tessel_workload_kind kind);

/* Builds the record. `data` is the data label (tessel_workload_data_label),
 * `strategy` the tiling strategy's name; either may be NULL for "".
 * TESSEL_EINVAL when result and spec disagree on the number of levels or
 * tensors, or a name does not fit its field (nothing else can fail). */
int tessel_report_point_build(const tessel_spec *spec, const tessel_result *result,
                              const tessel_design_energy *energy, const char *data,
                              const char *strategy, tessel_report_point *out, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* Writers.  Numbers: integers (counts, bytes, flops) as decimal integers;
 * doubles in the shortest form that reads back to the same double (%.15g,
 * else %.16g, else %.17g), so "0.5" not "0.50000000000000000"; a value
 * that is not finite is written as an empty CSV field or JSON null.
 * CSV fields holding a comma, quote, CR or LF are quoted (RFC 4180, quotes
 * doubled). JSON strings are escaped (", \, control characters). */

/* The header lines (with their newline), exactly as README.md lists the
 * columns: DESIGN.md's columns first, then tessel's appended ones. */
const char *tessel_report_traffic_header(void);
const char *tessel_report_summary_header(void);

/* Rows of one point: traffic.csv has one per (level, tensor), levels
 * outermost first, tensors in workload order (output first). Return 0 or
 * TESSEL_EIO when the stream reports an error. */
int tessel_report_traffic_csv_rows(FILE *f, const tessel_report_point *p);
int tessel_report_summary_csv_row(FILE *f, const tessel_report_point *p);

/* A whole JSON array of objects (same keys as the CSV columns, numbers as
 * numbers), for n points, ending with a newline. */
int tessel_report_traffic_json(FILE *f, const tessel_report_point *p, size_t n);
int tessel_report_summary_json(FILE *f, const tessel_report_point *p, size_t n);

typedef enum tessel_report_format {
    TESSEL_REPORT_CSV = 0, /* traffic.csv + summary.csv */
    TESSEL_REPORT_JSON     /* traffic.json + summary.json */
} tessel_report_format;

/* Writes traffic.EXT and summary.EXT for points[0..n) into `dir`, creating
 * `dir` when missing (one level: a missing parent is an error). Each file
 * goes to a temporary file and is renamed when complete; if the second
 * rename fails the first file is removed again, so a failed call leaves
 * neither a half file nor a new traffic file without its summary. */
int tessel_report_write_dir(const char *dir, tessel_report_format format,
                            const tessel_report_point *points, size_t n,
                            const tessel_allocator *a, tessel_diag *diag);

/* Whether tessel_report_write_dir could use `dir`: 0 when it is a
 * directory, or missing with an existing parent; else TESSEL_EINVAL with
 * the reason. Lets a caller fail before a long estimate, not after. */
int tessel_report_check_dir(const char *dir, tessel_diag *diag);

/* Flags of tessel_report_print. */
enum {
    TESSEL_REPORT_NO_TIMES = 1u /* leave out the estimator's wall time (reproducible text) */
};

/* Human-readable summary of one point: design, workload, data; traffic by
 * level and tensor; DRAM vs compulsory bytes; MACs; energy by component;
 * cycles, bound, utilisations; estimator time. The layout may change;
 * scripts should read the CSV/JSON files. Returns 0 or TESSEL_EIO. */
int tessel_report_print(FILE *f, const tessel_report_point *p, unsigned flags);

#ifdef __cplusplus
}
#endif
#endif

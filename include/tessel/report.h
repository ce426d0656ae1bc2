/* tessel — reports: one design-point record (traffic, energy, roofline)
 * built from an estimate, and its writers: traffic.csv / summary.csv (or
 * .json) and a human-readable summary.  Module `report`: depends on `model`
 * and `energy` (and what they use).  The library never chooses a stream
 * itself: writers take a FILE * or a directory from the caller.
 *
 * Energy accounting (docs/outputs.md, docs/models/energy.md).
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
 *   MAC energy          = actual computes x mac.pj[compute]
 *                         + gated computes x gated_pj[compute]
 *                         + skipped computes x gated_pj[skipped compute]
 *                         (actual = macs without compute_optimization)
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
    double gated_energy_pj;  /* its skipped and gated scalar reads' part (in `read`) */
} tessel_report_access;

/* One design point: everything traffic.csv, summary.csv and the human
 * summary show. A plain value (no allocation): copy it, share it
 * read-only between threads. */
/* `architecture.timing: pipeline` (src/report/pipeline.c, docs/models/timing.md):
 * per boundary between level l-1 and l (index l), the terms of its
 * three-stage pipeline; per level with a `network`, what it delivers. */
typedef struct tessel_report_pipeline {
    int present;
    double compute;                           /* the compute stage: the roofline's compute side */
    double transfer[TESSEL_SPEC_MAX_LEVELS];  /* boundary l's bytes at its ports (cycles) */
    double fill[TESSEL_SPEC_MAX_LEVELS];      /* the first step's input fill, exposed */
    double drain[TESSEL_SPEC_MAX_LEVELS];     /* the last output piece's drain, exposed */
    double stage[TESSEL_SPEC_MAX_LEVELS];     /* boundary l's pipeline time */
    int double_buffered[TESSEL_SPEC_MAX_LEVELS];
    /* network of level l to its child: values delivered per tensor, its cycles */
    double network_values[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS];
    double network_bytes[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS]; /* in the child's
                                                                             value width */
    double network_cycles[TESSEL_SPEC_MAX_LEVELS];
    /* their energy: values x the network's pJ per delivered value
     * (tessel_design_energy.network; NaN where not priced), and the sum,
     * part of the point's energy_pj (docs/models/energy.md "Network energy") */
    double network_pj[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS];
    double network_energy_pj;
    double cycles;                            /* the largest of the above and the roofline */
} tessel_report_pipeline;

/* Fills pt->pipeline from the spec, the estimate and pt's roofline, and
 * makes its cycles the run's (pt->roofline.cycles, seconds, utilizations
 * and pt->bound); spec->timing must be TESSEL_SPEC_TIMING_PIPELINE. */
struct tessel_report_point;
void tessel_report_pipeline_apply(const tessel_spec *spec, const tessel_result *result,
                                  struct tessel_report_point *pt);

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
    /* Values (elements, not bytes) read out of / written into level l by its
     * child: level l+1's fills and read-backs / write-backs, counted in level
     * l+1's value width; at the innermost level, by the MACs (one per operand
     * per effectual multiply; the output's results). traffic.csv's
     * reads_elements and writes_elements. */
    uint64_t reads_elements[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS];
    uint64_t writes_elements[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS];
    double level_energy_pj[TESSEL_SPEC_MAX_LEVELS]; /* storage energy per level (all tensors) */
    double level_bytes[TESSEL_SPEC_MAX_LEVELS];     /* roofline input, see above */
    double storage_energy_pj;
    double mac_energy_pj;
    double intersect_energy_pj;
    double leak_energy_pj;
    double energy_pj;       /* total */
    tessel_roofline roofline;
    char bound[TESSEL_SPEC_NAME_MAX]; /* "compute" or the bounding level's name */
    tessel_report_pipeline pipeline;  /* `timing: pipeline` terms (present 0: roofline) */
    double clock_ghz;
    uint64_t macs, intersections, output_nnz;
    /* Sparseloop's compute counts (tessel_result.computes_*; without
     * compute_optimization actual = macs, gated = skipped = 0) */
    uint64_t computes_algorithmic, computes_actual, computes_gated, computes_skipped;
    double output_nnz_stderr; /* NaN (an empty column) without one */
    uint64_t dram_bytes, compulsory_bytes;
    int compulsory_estimated; /* tessel_result.compulsory_estimated: printed, not a column */
    double traffic_ratio;   /* dram_bytes / compulsory_bytes; 0 when compulsory_bytes is 0 */
    double model_seconds;   /* the estimator's wall time (tessel_result.seconds) */
    double area_um2;        /* tessel_design_energy.area_um2 */
    unsigned stat_offgrid_edges;     /* tessel_result.offgrid_edges */
    unsigned stat_design_may_differ; /* tessel_result.stat_design_may_differ */
    char stat_path[8];      /* stat: "closed" or "walk" (tessel_result.stat_walked); else "" */
    /* Decisions and energy terms (issue 20; docs/outputs.md): */
    int64_t tiled_metadata_bytes; /* tessel_result.tiled_metadata_bytes */
    char tiles[512];        /* "LLB=i:64,j:1024,k:1024;PEB=i:8,j:64,k:16": the tiles priced */
    /* level l's storage energy by action (all tensors) and its leakage:
     * read, write, update, metadata_read, metadata_write, leak */
    double level_action_pj[TESSEL_SPEC_MAX_LEVELS][6];
    /* A spatial split (tessel_result.spatial; docs/models/spatial.md), NaN
     * without one: the slowest instance's cycles summed over the split
     * level's tiles, max/mean of the instances' MACs, their standard
     * deviation (MACs), and mean/busiest work per step. */
    double spatial_cycles, imbalance, work_stdev, pe_utilization;
    tessel_design_energy energy; /* the components' pJ and provenance that priced the point */
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

/* A finite double as the reports write it (the shortest of %.15g, %.16g,
 * %.17g that reads back as v) into out (at least 32 bytes, NUL-terminated);
 * returns its length. */
size_t tessel_report_format_double(char *out, double v);

/* The header lines (with their newline), exactly as docs/outputs.md lists the
 * columns: the core columns first, then tessel's appended ones. */
const char *tessel_report_traffic_header(void);
const char *tessel_report_summary_header(void);

/* Rows of one point: traffic.csv has one per (level, tensor), levels
 * outermost first, tensors in workload order (output first). Return 0 or
 * TESSEL_EIO when the stream reports an error. */
int tessel_report_traffic_csv_rows(FILE *f, const tessel_report_point *p);
int tessel_report_summary_csv_row(FILE *f, const tessel_report_point *p);
/* One traffic.csv row: that level's and tensor's (TESSEL_EINVAL when out
 * of range); a caller that prefixes rows with its own columns uses it. */
int tessel_report_traffic_csv_row(FILE *f, const tessel_report_point *p, unsigned level,
                                  unsigned tensor);

/* A whole JSON array of objects (same keys as the CSV columns, numbers as
 * numbers), for n points, ending with a newline. */
int tessel_report_traffic_json(FILE *f, const tessel_report_point *p, size_t n);
int tessel_report_summary_json(FILE *f, const tessel_report_point *p, size_t n);

/* A point as numbers, for language bindings (src/report/values.c,
 * docs/python.md): the same values summary.csv and traffic.csv hold,
 * without writing text. tessel_report_value_columns(which) names the
 * entries of each array, comma-separated, in order (NULL for another
 * which):
 *   0  summary ints (int64; u64 columns are below 2^63)
 *   1  summary doubles (NaN and infinities where the CSV cell is empty)
 *   2  summary texts
 *   3  traffic ints, per row
 *   4  traffic doubles, per row
 * Every summary.csv column is in exactly one of 0-2; every traffic.csv
 * column but the point's keys (design ... estimator, also in 2) and
 * level, tensor is in 3 or 4. */
#define TESSEL_REPORT_SUMMARY_INTS 12u
#define TESSEL_REPORT_SUMMARY_DOUBLES 17u
#define TESSEL_REPORT_SUMMARY_TEXTS 10u
#define TESSEL_REPORT_TRAFFIC_INTS 20u
#define TESSEL_REPORT_TRAFFIC_DOUBLES 2u
#define TESSEL_REPORT_VALUE_LISTS 5
#define TESSEL_REPORT_TEXTS_MAX 8192u /* bytes tessel_report_point_texts may need */
const char *tessel_report_value_columns(int which);
/* summary.csv's numbers: ints[0..8), doubles[0..13). */
void tessel_report_summary_values(const tessel_report_point *p, int64_t *ints, double *doubles);
/* traffic.csv's numbers, nlevels x ntensors rows in traffic.csv's order:
 * row r at ints[20 r] and doubles[2 r]. */
void tessel_report_traffic_values(const tessel_report_point *p, int64_t *ints, double *doubles);
/* The text cells, each followed by a NUL: the ten summary texts (list 2),
 * then the nlevels level names and the ntensors tensor names (traffic.csv's
 * level and tensor). Returns the bytes used, or 0 when n is too small
 * (TESSEL_REPORT_TEXTS_MAX always suffices). */
size_t tessel_report_point_texts(const tessel_report_point *p, char *buf, size_t n);

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

/* Creates dir and its missing parents (mkdir -p): EINVAL naming it when a
 * non-directory is in the way, TESSEL_EWRITE otherwise. */
int tessel_report_ensure_dir(const char *dir, tessel_diag *diag);
/* Whether tessel_report_ensure_dir + tessel_report_write_dir could use
 * `dir`: 0 when it is a directory, or missing with no file in the way of
 * its missing parents; else TESSEL_EINVAL with the reason. Lets a caller
 * fail before a long estimate, not after. */
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

/* ================================================================== */
/* validate: compare a predicted CSV table (a tessel summary.csv or
 * traffic.csv) with a reference one (a tessel exact run, a cycle
 * simulator's own CSV), row by row and metric by metric.  Uses only base
 * and GSL; docs/validate.md describes the behaviour. */

/* A CSV table read whole into memory (RFC 4180): a header row, then rows
 * of exactly as many fields. Quoted fields may hold commas, doubled quotes
 * and line breaks; records end with LF or CRLF; a leading UTF-8 BOM and
 * blank lines are skipped; spaces and tabs around an unquoted field (and
 * around a quoted one, outside its quotes) are dropped. Errors (NUL bytes,
 * an unterminated quote, text after a closing quote, a quote inside an
 * unquoted field, ragged rows, empty or repeated column names, no header)
 * are TESSEL_EPARSE with file:line:col. */
typedef struct tessel_report_csv tessel_report_csv;

/* Parses data[0..size) (need not be NUL-terminated); `name` is the file
 * name used in diagnostics and kept by the table. */
int tessel_report_csv_parse(const char *name, const void *data, size_t size,
                            const tessel_allocator *a, tessel_report_csv **out, tessel_diag *diag);
/* Reads and parses the file at `path` (TESSEL_EIO when unreadable). */
int tessel_report_csv_load(const char *path, const tessel_allocator *a, tessel_report_csv **out,
                           tessel_diag *diag);
void tessel_report_csv_free(tessel_report_csv **t);

const char *tessel_report_csv_name(const tessel_report_csv *t);
size_t tessel_report_csv_columns(const tessel_report_csv *t);
size_t tessel_report_csv_rows(const tessel_report_csv *t); /* data rows, header excluded */
const char *tessel_report_csv_column_name(const tessel_report_csv *t, size_t col);
/* Index of the column named `name`, or -1. */
long tessel_report_csv_find(const tessel_report_csv *t, const char *name);
/* For messages about a missing column: the column names as "a, b, c"
 * (cut with "..." to fit n bytes), and the name nearest to `word` (a
 * did-you-mean; NULL when none is close, or when out of memory). */
void tessel_report_csv_column_list(const tessel_report_csv *t, char *buf, size_t n);
const char *tessel_report_csv_nearest_column(const tessel_report_csv *t, const char *word,
                                             const tessel_allocator *a);
/* The decoded field (NUL-terminated; never NULL for indices in range). */
const char *tessel_report_csv_cell(const tessel_report_csv *t, size_t row, size_t col);
/* 1-based line where the row starts in the file, and where the field starts. */
uint64_t tessel_report_csv_line(const tessel_report_csv *t, size_t row);
uint64_t tessel_report_csv_cell_line(const tessel_report_csv *t, size_t row, size_t col);
uint32_t tessel_report_csv_cell_column(const tessel_report_csv *t, size_t row, size_t col);

/* A table built from strings in memory: cells[0..ncols) are the column
 * names (non-empty and unique, as in a file's header), then nrows rows of
 * ncols fields each (NULL: an empty field). lines[r] is the line row r came
 * from (NULL: r + 2, as if the header were line 1). Everything is copied.
 * TESSEL_EINVAL for a bad header, TESSEL_ENOMEM. */
int tessel_report_csv_from_cells(const char *name, size_t ncols, size_t nrows,
                                 const char *const *cells, const uint64_t *lines,
                                 const tessel_allocator *a, tessel_report_csv **out,
                                 tessel_diag *diag);
/* Edits. A failed edit leaves the table as it was.
 * add_column: appends column `name` (TESSEL_EINVAL when empty or taken)
 * holding values[r] in row r (values NULL, or values[r] NULL: empty).
 * set_cell: replaces one field (TESSEL_EINVAL out of range).
 * set_key: `--set-key`. With from NULL, column `column` holds `value` in
 * every row, and is appended when missing. With from, only the rows whose
 * field is `from` change; TESSEL_EINVAL (listing the column's values) when
 * the column is missing or no row matches. */
int tessel_report_csv_add_column(tessel_report_csv *t, const char *name,
                                 const char *const *values, tessel_diag *diag);
int tessel_report_csv_set_cell(tessel_report_csv *t, size_t row, size_t col, const char *value,
                               tessel_diag *diag);
int tessel_report_csv_set_key(tessel_report_csv *t, const char *column, const char *from,
                              const char *value, tessel_diag *diag);

/* A field read as a number: the whole field (blanks around it allowed) is
 * a decimal or exponent number as strtod reads it. 1 with *v set, 0 when
 * the field is empty or not a number ("nan"/"inf" text counts as a number
 * that is not finite). */
int tessel_validate_parse_number(const char *field, double *v);

/* `--map NAME=COLUMN`: the reference's COLUMN plays the role NAME (for keys
 * and metrics alike). */
typedef struct tessel_validate_map {
    const char *name;
    const char *column;
} tessel_validate_map;

#define TESSEL_VALIDATE_UNMATCHED_SHOWN 5u /* default of max_unmatched */

typedef struct tessel_validate_options {
    /* Key columns (role names). NULL/0: design,data,level,tensor when both
     * tables have a `level` column, else design,data; plus workload and
     * strategy when both tables have them. An explicit list is used as is. */
    const char *const *keys;
    size_t nkeys;
    /* Metrics (role names). NULL/0: every column, in the predicted table's
     * order, that is not a key and is numeric in both tables (every field a
     * number or empty, at least one number on each side). */
    const char *const *metrics;
    size_t nmetrics;
    const tessel_validate_map *map;
    size_t nmap;
    size_t max_unmatched; /* unmatched keys kept per side; 0: the default */
} tessel_validate_options;

void tessel_validate_options_init(tessel_validate_options *o);

/* Per metric, over the joined rows. rel = (pred - ref) / ref; when ref = 0
 * it is 0 if pred = 0, else +-INFINITY (counted in inf_rows, left out of
 * the error statistics). Quantiles are nearest-rank: the smallest |rel|
 * with at least ceil(q*n) of the n finite errors <= it (the median is
 * q = 0.5, the lower middle value for even n). */
typedef struct tessel_validate_metric {
    char *name;        /* role name (the predicted table's column) */
    char *ref_column;  /* the reference table's column */
    size_t rows;       /* joined rows where both values are finite numbers */
    size_t inf_rows;   /* of those: ref = 0 and pred != 0 */
    size_t empty_rows; /* joined rows where a value is empty or not finite */
    double mean_abs_rel_err, median_abs_rel_err, p95_abs_rel_err, max_abs_rel_err;
    /* NAN when no row has a finite error */
    double spearman;   /* rank correlation of pred and ref over `rows` (ties
                          get average ranks); NAN when rows < 2 or a side
                          is constant */
} tessel_validate_metric;

typedef struct tessel_validate_result {
    const tessel_allocator *alloc;
    size_t nkeys;
    char **key;        /* key role names */
    size_t nmetrics;
    tessel_validate_metric *metric;
    size_t nrows;      /* joined rows, in the predicted table's order */
    char **row_key;    /* nrows x nkeys key values */
    uint64_t *pred_line, *ref_line; /* per joined row: its line in each file */
    double *pred, *ref, *rel; /* nrows x nmetrics; NAN where a value is missing */
    /* Rows of one table whose key the other lacks: counts, and the first
     * max_unmatched of each (in file order) as "k1=v1 k2=v2" with lines. */
    size_t only_predicted, only_reference;
    size_t nshown_predicted, nshown_reference;
    char **shown_predicted, **shown_reference;
    uint64_t *shown_predicted_line, *shown_reference_line;
} tessel_validate_result;

/* Joins and compares. TESSEL_EINVAL (with the file, the column, the
 * columns it has and a did-you-mean) for a missing key or metric column,
 * a bad --map, or a metric field that is not a number; TESSEL_EPARSE for a
 * key repeated within a table (naming both lines); TESSEL_ENOMEM. On error
 * *out is NULL. */
int tessel_validate_compare(const tessel_report_csv *pred, const tessel_report_csv *ref,
                            const tessel_validate_options *opt, const tessel_allocator *a,
                            tessel_validate_result **out, tessel_diag *diag);
void tessel_validate_result_free(tessel_validate_result **r);

/* Metrics whose p95 exceeds max_error or that have inf rows (for CI). */
size_t tessel_validate_exceeding(const tessel_validate_result *r, double max_error);

/* The per-metric summary as CSV: header line, then one row per metric:
 * metric,rows,mean_abs_rel_err,median_abs_rel_err,p95_abs_rel_err,
 * max_abs_rel_err,spearman,only_predicted,only_reference,inf_rows,empty_rows
 * (NAN written as an empty field). Returns 0 or TESSEL_EIO. */
const char *tessel_validate_summary_header(void);
int tessel_validate_summary_csv(FILE *f, const tessel_validate_result *r);

/* Human-readable report: the per-row table (key, metric, predicted,
 * reference, relative error), the per-metric summary and the unmatched
 * rows. The layout may change. Returns 0 or TESSEL_EIO. */
int tessel_validate_print(FILE *f, const tessel_validate_result *r);

/* ================================================================== */
/* Simulator references: the output files of a cycle simulator read into a
 * table with tessel's column names, ready for tessel_validate_compare.
 * docs/validate.md lists, per simulator, every field read,
 * the column it becomes, its unit, and what is ignored. Counts keep their
 * unit: a simulator's element counts go to *_elements columns, its bytes
 * to *_bytes columns, so bytes are never compared with elements.
 *
 * Key columns: `design` (the name the run gives itself, else the file
 * name up to its first '.'), `data` (the data set when the files name it,
 * else empty), and for the traffic grain `level` and `tensor`. Tensors are
 * named as in tessel's seed specs' einsum Z[i,j] = A[i,k] * B[k,j]. */

typedef enum tessel_simref_format {
    TESSEL_SIMREF_CSV = 0, /* one CSV file read as is (tessel_report_csv_parse) */
    TESSEL_SIMREF_DRT,     /* the DRT simulator's standard output; one run per file */
    TESSEL_SIMREF_STONNE,  /* STONNE: stats JSON, .counters and energy report of one run */
    TESSEL_SIMREF_SAM      /* SAM: per-block cycle CSVs, benchmark JSONs, a pytest log */
} tessel_simref_format;

/* "csv", "drt", "stonne", "sam": 0, or TESSEL_EINVAL for another name. */
int tessel_simref_format_parse(const char *name, tessel_simref_format *out);
const char *tessel_simref_format_name(tessel_simref_format format);

/* Which of tessel's two reports the table lines up with. */
typedef enum tessel_simref_grain {
    TESSEL_SIMREF_SUMMARY = 0, /* summary.csv: one row per run */
    TESSEL_SIMREF_TRAFFIC      /* traffic.csv: one row per (run, level, tensor) */
} tessel_simref_grain;

/* One file in memory. */
typedef struct tessel_simref_input {
    const char *name; /* for diagnostics and the default design name */
    const void *data;
    size_t size;
} tessel_simref_input;

/* Reads the n files of one reference (each file's kind is told from its
 * content, docs/validate.md says how) into *out, named after the first file.
 * Malformed input is TESSEL_EPARSE (TESSEL_ERANGE for a number past
 * 2^64 - 1) with file:line:col; a required field that is missing is an
 * error naming the field and the file, placed at the end of a text file or
 * at the JSON object that should hold it; two files of one run that
 * disagree are an error naming both. A count of 0 for something the run
 * did not model (DRT) is left empty, with a note. TESSEL_EUNSUPPORTED
 * when the simulator reports nothing at the requested grain. Fields the
 * reader does not know go to `notes` (may be NULL) as diagnostics with
 * code 0 and their file:line:col, each name once, at most
 * TESSEL_SIMREF_MAX_NOTES of them plus one saying how many more. A note
 * that cannot be stored makes the call fail with TESSEL_ENOMEM. */
#define TESSEL_SIMREF_MAX_NOTES 40u
int tessel_simref_parse(tessel_simref_format format, tessel_simref_grain grain,
                        const tessel_simref_input *inputs, size_t n, const tessel_allocator *a,
                        tessel_report_csv **out, tessel_diag_list *notes, tessel_diag *diag);
/* The same from files (TESSEL_EIO when one cannot be read). */
int tessel_simref_load(tessel_simref_format format, tessel_simref_grain grain,
                       const char *const *paths, size_t n, const tessel_allocator *a,
                       tessel_report_csv **out, tessel_diag_list *notes, tessel_diag *diag);

/* Adds to `pred` (a tessel traffic.csv) the columns that `ref` uses and
 * tessel derives instead of writing: total_bytes = data_bytes +
 * metadata_bytes (empty where either is). Does nothing when `pred` has the
 * column already, lacks its parts, or `ref` does not use it. */
int tessel_simref_derive_columns(tessel_report_csv *pred, const tessel_report_csv *ref,
                                 tessel_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

/* tessel — design-space sweeps: a sweep file (a base spec, data files and
 * axes over spec paths), its points in a fixed order, their evaluation on
 * threads with statistics shared read-only, resumable output, shards and
 * their merge, Pareto fronts.  Module `sweep`: depends on `model`,
 * `energy`, `report` and `plot`.  docs/sweep.md describes the
 * file format and the outputs. */
#ifndef TESSEL_SWEEP_H
#define TESSEL_SWEEP_H

#include <stdint.h>

#include "tessel/base.h"
#include "tessel/energy.h"
#include "tessel/model.h"
#include "tessel/report.h"
#include "tessel/spec.h"
#include "tessel/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TESSEL_SWEEP_MAX_AXES 16u
#define TESSEL_SWEEP_MAX_OBJECTIVES 3u

typedef enum tessel_sweep_estimator {
    TESSEL_SWEEP_STAT = 0, /* statistics once per data entry, every point from them */
    TESSEL_SWEEP_EXACT,    /* data loaded once per data entry, every point walks it */
    TESSEL_SWEEP_ANALYTIC  /* density models of the spec, no data */
} tessel_sweep_estimator;

/* A parsed sweep file. Immutable once loaded: threads share it. */
typedef struct tessel_sweep tessel_sweep;

/* Reads a sweep file; relative paths in it (the spec, data files) resolve
 * against its directory. Every error found is appended to `errors`
 * (file:line:col, field, message); the first one's code is returned. */
int tessel_sweep_load(const char *path, const tessel_allocator *a, tessel_sweep **out,
                      tessel_diag_list *errors);
/* The same from memory (`name` stands for the file; paths resolve against
 * the current directory). */
int tessel_sweep_parse(const char *name, const void *data, size_t size, const tessel_allocator *a,
                       tessel_sweep **out, tessel_diag_list *errors);
void tessel_sweep_free(tessel_sweep **s);

/* The base spec file (resolved), the estimator, the number of data
 * entries (1 for a sweep without a data list), axes and points. */
const char *tessel_sweep_spec_path(const tessel_sweep *s);
tessel_sweep_estimator tessel_sweep_get_estimator(const tessel_sweep *s);
size_t tessel_sweep_data_count(const tessel_sweep *s);
size_t tessel_sweep_axis_count(const tessel_sweep *s);
const char *tessel_sweep_axis_path(const tessel_sweep *s, size_t axis);
/* All points: data entries x design points of the axes (cross product,
 * random sample or explicit list). Point p belongs to data entry
 * p / tessel_sweep_points_per_data(s). */
uint64_t tessel_sweep_point_count(const tessel_sweep *s);
uint64_t tessel_sweep_points_per_data(const tessel_sweep *s);
/* The value of `axis` at point p, as written in the sweep file (a range's
 * values in the shortest form that reads back). Never NULL for valid p. */
const char *tessel_sweep_point_value(const tessel_sweep *s, uint64_t p, size_t axis, char *buf,
                                     size_t n);
/* A fingerprint of everything that decides the outputs (the sweep file's
 * and the base spec's contents, the options): resume and merge refuse
 * outputs of another sweep. */
uint64_t tessel_sweep_fingerprint(const tessel_sweep *s);
/* Pareto objectives named in the file (summary.csv columns), or 0. */
size_t tessel_sweep_objectives(const tessel_sweep *s, const char *const **names);

/* ------------------------------------------------------------------ */
/* Progress of a running sweep: `done` of `total` points of this run (this
 * shard, without the points a resume found finished). Called from the
 * thread that called tessel_sweep_run, at most every 0.2 s and at the end. */
typedef void (*tessel_sweep_progress_fn)(void *ud, uint64_t done, uint64_t total,
                                         double seconds);

typedef struct tessel_sweep_options {
    unsigned threads;         /* 0: one per online core */
    uint64_t shard_index;     /* this run evaluates shard_index of shard_count */
    uint64_t shard_count;     /* 0 or 1: no sharding */
    int resume;               /* continue the partial outputs in the directory */
    int overwrite;            /* discard partial outputs of an earlier run */
    int timing;               /* write the estimator's wall time (model_seconds); off: 0,
                                 so that outputs are byte-identical across runs */
    int no_memo;              /* evaluate every point's traffic, even when a point with
                                 the same traffic-deciding spec was evaluated before */
    int derive_buffers;       /* derive every point's spec when it varies a capacity or
                                 partition, as before they were patched into cached
                                 specs (bench_sweep's baseline; same outputs) */
    int skip_invalid;         /* a point whose spec is invalid or that the estimator refuses
                                 gets a summary row with its `error` and no numbers, and the
                                 sweep goes on (off: such a point stops the sweep) */
    int pareto_infeasible;    /* the Pareto front may hold infeasible points (summary.csv
                                 `feasible` 0: a tile overflows a partition the spec does
                                 not let it overbook); off: they are left out */
    const char *const *objectives; /* Pareto objectives (override the file's); NULL: the file's */
    size_t nobjectives;
    tessel_sweep_progress_fn progress;
    void *progress_ud;
    /* Called once per data entry before its statistics are collected
     * (`what` names the data), from the calling thread; may be NULL. */
    void (*stage)(void *ud, const char *what);
    /* Called once after the base spec (with the file's fixed `set:`) and
     * its energy tables load, from the calling thread, before any point:
     * the CLI prints the spec's warnings there, once per sweep rather than
     * per point. May be NULL. */
    void (*loaded)(void *ud, const tessel_spec *base, const tessel_energy_db *db);
} tessel_sweep_options;

void tessel_sweep_options_init(tessel_sweep_options *o);

/* What a run did. */
typedef struct tessel_sweep_report {
    uint64_t points;          /* points of this run (shard) */
    uint64_t evaluated;       /* evaluated now */
    uint64_t resumed;         /* found finished in the partial outputs */
    uint64_t memo_hits;       /* points whose traffic came from an earlier point */
    uint64_t invalid;         /* points skipped as invalid (skip_invalid) */
    uint64_t pareto_points;   /* rows of pareto.csv (0 without objectives) */
    double stats_seconds;     /* loading data and collecting statistics */
    double eval_seconds;      /* evaluating points (wall) */
    double eval_cpu_seconds;  /* the threads' CPU time evaluating points */
    double busiest_seconds;   /* per batch the busiest thread's CPU time plus its waits
                               * for another thread's estimate, summed: the evaluation's
                               * wall time on an otherwise idle machine */
    unsigned threads;
    uint64_t shape_summaries;  /* stat per-shape summaries built (the threads share them) */
    uint64_t nested_summaries; /* stat nested summaries built (per thread) */
    uint64_t ks_tables;        /* the step count's tables built (the threads share them) */
    uint64_t ks_geometries;    /* its geometries built (shared too) */
} tessel_sweep_report;

/* Evaluates the sweep (or its shard) into `dir`: summary.csv, traffic.csv
 * (and pareto.csv with objectives), plus sweep.state. While it runs,
 * finished points go to summary.csv.part / traffic.csv.part in point order
 * (synced every batch), renamed when all are done; a killed run resumes
 * from them. Output is identical whatever the number of threads. */
int tessel_sweep_run(const tessel_sweep *s, const char *dir, const tessel_sweep_options *o,
                     const tessel_allocator *a, tessel_sweep_report *report, tessel_diag *diag);

/* Combines the directories of shards 0..N-1 of one sweep (any order) into
 * `dir`: the same files, byte for byte, a single run would write.
 * Objectives: those of the shards' runs unless given. */
int tessel_sweep_merge(const char *const *shard_dirs, size_t n, const char *dir,
                       const char *const *objectives, size_t nobjectives,
                       const tessel_allocator *a, uint64_t *points, tessel_diag *diag);

/* The Pareto objectives a sweep directory's run (or merge) used, from its
 * sweep.state: names[0..*n). TESSEL_EIO / TESSEL_ECORRUPT for a directory
 * that holds no sweep. */
int tessel_sweep_dir_objectives(const char *dir, char names[][64], size_t max, size_t *n,
                                tessel_diag *diag);

/* Writes `out_path` (atomically): the rows of the summary table that no
 * other row with the same `data` dominates on the objectives (all
 * minimised; a name written "max:COL" is maximised), in table order.
 * Rows whose `feasible` column is 0 take no part (rule 4, issue 20). */
int tessel_sweep_pareto(const char *summary_path, const char *out_path,
                        const char *const *objectives, size_t nobjectives,
                        const tessel_allocator *a, uint64_t *rows, tessel_diag *diag);

/* ================================================================== */
/* The mapper (src/sweep/map.c): searches loop order x tile shape x buffer
 * partition split at the chosen levels for the best design point under
 * an objective, with the stat estimator. Exhaustive when the space is
 * small, else hill-climbing from seeded random starts; always within the
 * time limit, returning the best point found and how much of the space it
 * saw. */
typedef enum tessel_map_objective {
    TESSEL_MAP_ENERGY = 0, /* energy_pj */
    TESSEL_MAP_CYCLES,     /* cycles */
    TESSEL_MAP_EDP,        /* energy_pj x cycles */
    TESSEL_MAP_DRAM_BYTES  /* dram_bytes */
} tessel_map_objective;

typedef enum tessel_map_search {
    TESSEL_MAP_AUTO = 0,   /* exhaustive up to exhaustive_limit points, else climb */
    TESSEL_MAP_EXHAUSTIVE,
    TESSEL_MAP_RANDOM,     /* seeded random points */
    TESSEL_MAP_CLIMB       /* hill climbing with random restarts */
} tessel_map_search;

#define TESSEL_MAP_MAX_SETS (4u * TESSEL_SPEC_MAX_LEVELS * (2u + TESSEL_SPEC_MAX_TENSORS))

/* Progress: points evaluated, the space's size, the best value so far
 * (INFINITY before the first), seconds. From the calling thread, at most
 * every 0.5 s. */
typedef void (*tessel_map_progress_fn)(void *ud, uint64_t evaluated, double space, double best,
                                       double seconds);

typedef struct tessel_map_options {
    tessel_map_objective objective;
    tessel_map_search search;
    double time_limit;         /* seconds; 0: none */
    uint64_t max_points;       /* 0: none */
    uint64_t exhaustive_limit; /* default 20000 */
    uint64_t seed;             /* default 1 */
    uint64_t tile_base;        /* tile edges are this times a power of two, or the whole
                                  extent (default 128: the stat estimator's base grid) */
    double partition_step;     /* partition fractions in these steps (default 0.1); 0: keep
                                  the spec's partitions */
    int keep_order;            /* do not search loop orders */
    int keep_tiles;            /* do not search tile edges: the spec's tiles */
    int fit;                   /* only points where no input or output tile overflows its
                                  partition (tessel_result_overflow): without it, rule 4
                                  prices what does not fit (streamed inputs, spilled
                                  outputs), and on a spec without inner levels untiled
                                  mappings reach compulsory traffic */
    unsigned level_mask;       /* bit l: search level l; 0: every level below level 0 */
    int no_memo;               /* price every point from scratch, without the stat
                                  estimator's per-shape summaries (tessel_stat_cache) */
    /* Tiling strategies searched too (bit k: tessel_strategy_kind k; bit 0,
     * fixed, is the tile-edge search above). 0: fixed only. A point with
     * another strategy has no tile coordinates: the strategy sizes its
     * tiles for the point's order and partitions. */
    uint32_t strategies;
    /* Search spatial splits too (docs/map.md): at every searched level whose
     * child has more than one instance, each assignment of factors to the
     * indices whose product divides the child's instances, under each
     * distribution policy (bit p of spatial_policies: TESSEL_SPEC_SPATIAL_*
     * p; 0: all). Every point then has a split (one level at a time). */
    int spatial;
    uint32_t spatial_policies;
    const tessel_workload_data *data; /* for strategies that read the data (may be NULL) */
    tessel_map_progress_fn progress;
    void *progress_ud;
} tessel_map_options;

void tessel_map_options_init(tessel_map_options *o);

typedef struct tessel_map_result {
    double space;          /* points in the search space (a double: it may pass 2^64) */
    uint64_t evaluated;    /* points estimated */
    uint64_t infeasible;   /* of those, points the estimator refused (or, with fit, points
                              whose tiles overflow) */
    uint64_t unpriced;     /* of the infeasible, points whose output tiles could overflow a
                              level where the estimator does not price output spill (the
                              stat estimator's nested levels today): never returned */
    uint64_t restarts;     /* climb: random starts */
    int complete;          /* the whole space was seen: the best point is the optimum */
    double seconds;
    const char *search;    /* "exhaustive", "random" or "climb" */
    double best_value;     /* INFINITY when no point was feasible */
    tessel_report_point best;
    size_t nsets;          /* the best point's overrides of the spec ("path=value") */
    char sets[TESSEL_MAP_MAX_SETS][320];
} tessel_map_result;

/* Searches the mappings of `spec` (with its workload's statistics and
 * energy tables). extent[i] is workload index i's extent. The result is
 * large: allocate it. TESSEL_EINVAL when no level can be searched. */
int tessel_map_run(const tessel_spec *spec, const tessel_stat_data *stats,
                   const tessel_energy_db *db, const uint64_t *extent,
                   const tessel_map_options *o, tessel_map_result *out, tessel_diag *diag);

/* The objective's name: "energy_pj", "cycles", "edp", "dram_bytes". */
const char *tessel_map_objective_name(tessel_map_objective o);

/* ------------------------------------------------------------------ */
/* Flat calls for language bindings (python/tessel, src/sweep/binding.c):
 * opaque handles and plain arguments only, so a binding mirrors no struct
 * that may grow. */

/* tessel_stat_data_create with the options of tessel run as arguments:
 * base grid rows x cols (0: automatic; cols 0: square), sample fraction
 * (<= 0: default 0.01), seed, output_sample (< 0: default; else the
 * fraction as --output-sample takes it). */
int tessel_sweep_stats_create(const tessel_spec *spec, const tessel_workload_data *data,
                              uint64_t base_rows, uint64_t base_cols, double sample,
                              uint64_t seed, double output_sample, const tessel_allocator *a,
                              tessel_stat_data **out, tessel_diag *diag);

/* One design point priced as tessel run prices it: tessel_point_evaluate
 * (estimator: a tessel_point_estimator; data, stats, shared and cache as in
 * tessel_point_request, each may be NULL), the energy of spec from db
 * (tessel_energy_design), the report record labelled `label` (NULL: the
 * data's, the statistics' or the density models' label) with
 * model_seconds 0 unless `timing`. Errors are appended to `errors`; the
 * first one's code returned.
 * Thread-safe for different shared/cache handles. */
typedef struct tessel_sweep_record tessel_sweep_record;
int tessel_sweep_record_create(const tessel_spec *spec, int estimator,
                               const tessel_workload_data *data, const tessel_stat_data *stats,
                               tessel_strategy_shared *shared, tessel_stat_cache *cache,
                               const tessel_energy_db *db, const char *label, int timing,
                               const tessel_allocator *a, tessel_sweep_record **out,
                               tessel_diag_list *errors);
void tessel_sweep_record_free(tessel_sweep_record **r);
/* The record as one of tessel run's files (which: 0 summary.csv, 1
 * traffic.csv, 2 summary.json, 3 traffic.json), byte for byte, header
 * included; written on the first request, NUL-terminated, owned by the
 * record. NULL with *diag filled when it cannot be written (out of
 * memory). */
const char *tessel_sweep_record_text(tessel_sweep_record *r, int which, tessel_diag *diag);
const tessel_report_point *tessel_sweep_record_point(const tessel_sweep_record *r);
/* Rule 4 verdict (tessel_point_result.feasible) and where it fails. */
int tessel_sweep_record_feasible(const tessel_sweep_record *r, unsigned *level,
                                 unsigned *tensor);
/* The numeric fast path (src/sweep/binding_values.c, docs/python.md):
 * spec with the overrides sets[0..nsets) applied ("path=value", as
 * tessel_spec_derive; none: spec itself), priced as
 * tessel_sweep_record_create prices it, into caller-owned arrays, with no
 * CSV text written:
 *   ints[TESSEL_SWEEP_VALUES_INTS]: summary ints (tessel_report_value_columns
 *     list 0) at [0, S) with S = TESSEL_REPORT_SUMMARY_INTS; then feasible,
 *     overflow_level, overflow_tensor, nlevels, ntensors, the bytes of text
 *     used, and two bit masks over the summary doubles: bit i set when
 *     double i is written as an integer (integral, below 1e15 in
 *     magnitude), and when it is written as an empty cell (not finite), at
 *     [S, S + 8); then the traffic rows' ints (list 3) from
 *     TESSEL_SWEEP_VALUES_HEAD, TESSEL_REPORT_TRAFFIC_INTS per row,
 *     nlevels x ntensors rows in traffic.csv's order;
 *   doubles[TESSEL_SWEEP_VALUES_DOUBLES]: summary doubles (list 1) at
 *     [0, TESSEL_REPORT_SUMMARY_DOUBLES), then the traffic rows' doubles (list
 *     4), TESSEL_REPORT_TRAFFIC_DOUBLES per row;
 *   text[TESSEL_REPORT_TEXTS_MAX]: tessel_report_point_texts.
 * With keep, *keep is the point's record (its text on request, freed by
 * the caller); NULL: none is kept. Errors as tessel_sweep_record_create's
 * (and tessel_spec_derive's); the arrays are then unspecified. */
#define TESSEL_SWEEP_VALUES_HEAD (TESSEL_REPORT_SUMMARY_INTS + 8u)
#define TESSEL_SWEEP_VALUES_INTS                                                             \
    (TESSEL_SWEEP_VALUES_HEAD +                                                              \
     TESSEL_SPEC_MAX_LEVELS * TESSEL_SPEC_MAX_TENSORS * TESSEL_REPORT_TRAFFIC_INTS)
#define TESSEL_SWEEP_VALUES_DOUBLES                                                          \
    (TESSEL_REPORT_SUMMARY_DOUBLES +                                                         \
     TESSEL_SPEC_MAX_LEVELS * TESSEL_SPEC_MAX_TENSORS * TESSEL_REPORT_TRAFFIC_DOUBLES)
int tessel_sweep_point_values(const tessel_spec *spec, const char *const *sets, size_t nsets,
                              int estimator, const tessel_workload_data *data,
                              const tessel_stat_data *stats, tessel_strategy_shared *shared,
                              tessel_stat_cache *cache, const tessel_energy_db *db,
                              const char *label, int timing, const tessel_allocator *a,
                              int64_t *ints, double *doubles, char *text,
                              tessel_sweep_record **keep, tessel_diag_list *errors);
/* The same for a binding that prices many points of one spec: what they
 * share is given once (_create: tessel_sweep_point_values's arguments; the
 * handles and the caller's arrays must outlive it; TESSEL_ENOMEM only), so
 * that a point is a call of five arguments. Overrides are given as nsets
 * NUL-terminated strings back to back ("LLB.capacity=1MiB\0mapping..."):
 * one buffer, not an array of pointers. Not thread-safe: one per thread
 * (as the shared and cache handles). */
typedef struct tessel_sweep_values tessel_sweep_values;
int tessel_sweep_values_create(const tessel_spec *spec, int estimator,
                               const tessel_workload_data *data, const tessel_stat_data *stats,
                               tessel_strategy_shared *shared, tessel_stat_cache *cache,
                               const tessel_energy_db *db, const char *label, int timing,
                               int64_t *ints, double *doubles, char *text,
                               const tessel_allocator *a, tessel_sweep_values **out);
void tessel_sweep_values_free(tessel_sweep_values **v);
/* One point into the arrays given at _create (keep as in
 * tessel_sweep_point_values). */
int tessel_sweep_values_point(tessel_sweep_values *v, const char *sets, size_t nsets,
                              tessel_sweep_record **keep, tessel_diag_list *errors);
/* npoints points in one call: point i takes the next nsets[i] strings of
 * sets and fills ints + i x TESSEL_SWEEP_VALUES_INTS, doubles + i x
 * TESSEL_SWEEP_VALUES_DOUBLES, text + i x TESSEL_REPORT_TEXTS_MAX (these
 * arrays, not _create's); no record kept. Stops at the first point that
 * fails (*done: the points filled before it; may be NULL). */
int tessel_sweep_values_points(tessel_sweep_values *v, const char *sets, const size_t *nsets,
                               size_t npoints, int64_t *ints, double *doubles, char *text,
                               size_t *done, tessel_diag_list *errors);
/* The warnings tessel run prints for a spec (plausibility, energy tables:
 * code 0 diagnostics appended to `warnings`); their number or an error. */
int tessel_sweep_spec_warnings(const tessel_spec *spec, const tessel_energy_db *db,
                               tessel_diag_list *warnings);
/* tessel_sweep_run with its common options as arguments (threads 0: one
 * per core; the rest as in tessel_sweep_options); *points and
 * *eval_seconds (each may be NULL) from its report. */
int tessel_sweep_run_flat(const tessel_sweep *s, const char *dir, unsigned threads, int timing,
                          int skip_invalid, int overwrite, tessel_sweep_progress_fn progress,
                          void *progress_ud, const tessel_allocator *a, uint64_t *points,
                          double *eval_seconds, tessel_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

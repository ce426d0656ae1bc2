/* tessel — traffic models.  Module `model`: depends on `stats` and `spec`
 * (and through them `tensor`, `base`).
 *
 * The exact estimator walks the real tile grid of the data in the mapping's
 * loop order and applies the traffic rules of docs/semantics.md literally:
 * fills on a change of resident tile, output write-backs with exact partial
 * nonzero counts (symbolic multiplication), read-backs of outputs written
 * before, compulsory traffic, effectual multiplies. */
#ifndef TESSEL_MODEL_H
#define TESSEL_MODEL_H

#include <stdint.h>

#include "tessel/base.h"
#include "tessel/spec.h"
#include "tessel/stats.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* The data of a workload: one tensor per workload tensor (inputs only;
 * tensor[0], the output, stays NULL), with the index extents they imply. */
typedef struct tessel_workload_data {
    const tessel_allocator *alloc;
    unsigned ntensors;
    tessel_tensor *tensor[TESSEL_SPEC_MAX_TENSORS];
    int owned[TESSEL_SPEC_MAX_TENSORS];            /* 0 when shared with another binding */
    char label[TESSEL_SPEC_MAX_TENSORS][256];      /* the `data` CSV column part: file stem or A^T */
    uint64_t extent[TESSEL_SPEC_MAX_INDICES];      /* per workload index */
    /* what is derived from the data once and kept with it (the output
     * count, tessel_workload_output_count); NULL: nothing kept (data
     * built by hand) */
    struct tessel_workload_memo *memo;
} tessel_workload_data;

/* Loads every input's binding (file, other tensor, transpose, dense),
 * relative paths against the directory of the spec file that named them,
 * and checks each tensor's dimensions against the einsum (an index used
 * by two tensors must have one extent). Errors name the `data:` entry. */
int tessel_workload_load(const tessel_spec *spec, const tessel_load_options *opt,
                         const tessel_allocator *a, tessel_workload_data **out,
                         tessel_diag_list *errors);
/* tessel_workload_load with tensors given in memory (python/tessel): a
 * non-NULL given[t] (t = 1 .. ntensors-1, the spec's tensor numbers)
 * replaces t's binding and is borrowed (it must outlive *out; references
 * such as `B: A^T` may name it), labels[t] its `data` label (NULL or "":
 * "memory"). given and labels may be NULL. */
int tessel_workload_bind(const tessel_spec *spec, tessel_tensor *const *given,
                         const char *const *labels, const tessel_load_options *opt,
                         const tessel_allocator *a, tessel_workload_data **out,
                         tessel_diag_list *errors);
void tessel_workload_free(tessel_workload_data **w);
/* Frees w's tensors and what was derived from them and kept with them (the
 * output count, tessel_workload_output_count), keeping its labels and
 * extents: for a caller whose later steps read statistics only (tessel
 * run -e stat on a fixed mapping, once tessel_stat_data_drop_tensors let
 * the statistics go of them). Every w->tensor[t] is NULL after. */
void tessel_workload_drop_tensors(tessel_workload_data *w);
/* "G51" or "G51*G51^T": the `data` report column. */
void tessel_workload_data_label(const tessel_workload_data *w, char *buf, size_t n);
/* Rule 3's output count of spec's einsum over w (src/model/workload_count.c):
 * the output's nonzeros and rows by the symbolic pass of
 * tessel_output_count_run, counted once per workload data and kept with it
 * for every later asker (statistics on any base grid, DRT); *counted 0
 * when its work (the multiplies) exceeds budget. */
int tessel_workload_output_count(const tessel_spec *spec, const tessel_workload_data *w,
                                 double budget, tessel_output_count *out, int *counted,
                                 tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* Counts for one tensor at one storage level.  For level l > 0 the
 * transfers are across the boundary between level l-1 (its backing
 * store) and level l; level 0 (the backing store) reports the same
 * transfers seen from its side.  Counts are tile transfers, bytes are
 * data (values) and metadata (coordinates, offsets, bitmaps, runs) in the
 * tensor's format at level l (for level 0: the format of level 1). */
typedef struct tessel_traffic {
    uint64_t fills;      /* input tiles read from level l-1 into l (rule 1) */
    uint64_t updates;    /* output tiles read back from l-1 into l (rule 2) */
    uint64_t writebacks; /* output tiles written from l back to l-1 (rule 2) */
    uint64_t reads;      /* tile transfers out of l to level l+1 (its fills + read-backs);
                            innermost level: operand reads by the MACs */
    uint64_t data_bytes;     /* bytes moved across the boundary with l-1 (level 0: with 1) */
    uint64_t metadata_bytes;
    /* Every byte level l reads or writes for this tensor, by direction and
     * kind (energy and bandwidth are charged from these): */
    uint64_t in_data, in_metadata;   /* written into l from l-1: fills + updates */
    uint64_t out_data, out_metadata; /* read out of l to l-1: write-backs */
    uint64_t child_read_data, child_read_metadata;   /* read out of l by level l+1's fills and
                                                        updates, or by the MACs (innermost) */
    uint64_t child_write_data, child_write_metadata; /* written into l by level l+1's
                                                        write-backs, or by the MACs (innermost) */
    /* Sparseloop vocabulary: what a dense, unoptimized loop nest would do,
     * and where the difference went. fills + updates + gated + skipped =
     * algorithmic. */
    uint64_t algorithmic; /* tile transfers of the dense loop nest (every iteration) */
    uint64_t skipped;     /* avoided: the tile (or a skip_on partner) was empty */
    uint64_t gated;       /* slot spent but no data moved (gate_on partner empty) */
    /* Scalar `action_optimization` at the innermost level (Sparseloop's
     * skipped and gated scalar reads, docs/semantics.md "Scalar skipping
     * and gating"): the compute's reads of this tensor found with a zero
     * condition operand, and the format (metadata) bytes read to find
     * them; 0 without it. */
    uint64_t skipped_reads, gated_reads;
    uint64_t skipped_metadata_bytes, gated_metadata_bytes;
    uint64_t bumped_bytes; /* Tailors rule 4: bytes streamed because a tile overflowed its partition */
    /* Rule 4 feasibility at level l (0 at level 0): the tile transfers
     * larger than this tensor's partition (inputs: fills; outputs:
     * write-backs), the bytes that overflow costs across the boundary with
     * l-1 (inputs: the re-streamed part, = bumped_bytes; outputs: the
     * spilled part written out and read again, both directions), the
     * partition and the largest tile seen (bytes). */
    uint64_t overflow_tiles, overflow_bytes;
    uint64_t partition_bytes, worst_tile_bytes;
    /* `timing: pipeline`'s per-step network count (docs/models/timing.md): at level
     * l >= 1 when level l-1 has a `network`, the sum over this input's fills of
     * ceil(values filled / the network's width), or for a dense network's
     * stationary rows the same sum over STONNE's packed folds (exact_fold.c); exact
     * only, 0 otherwise (the pipeline then uses the mean fill). */
    uint64_t fill_network_cycles;
} tessel_traffic;

/* Spatial mapping (src/model/spatial.c, docs/models/spatial.md): the work
 * of a level whose mapping has `spatial:` dealt to its child's instances
 * under the distribution policy, from the data. In MACs, so that the
 * report prices it at the spec's own PE rate. */
typedef struct tessel_spatial {
    int present;          /* 1: the spec splits a level and this was priced */
    unsigned level;       /* the level whose `spatial` splits its tiles */
    unsigned used;        /* instances the factors address (their product) */
    uint64_t steps;       /* the level's tile iterations with work: synchronised steps */
    uint64_t units;       /* work units dealt (child tiles along the split indices) */
    double step_max_macs; /* sum over the steps of the busiest instance's MACs */
    double max_macs, mean_macs, stdev_macs; /* per-instance MACs over the run */
    /* A unit's work in cycles: its intersection steps x intersect.step_cycles
     * (with an intersect unit) plus its MACs at the instance's MAC rate. */
    uint64_t intersect_steps; /* the units' intersection steps, summed */
    double step_max_work;     /* sum over the steps of the busiest instance's work */
    double max_work, mean_work, stdev_work; /* per-instance work over the run */
} tessel_spatial;

/* A last phase that starts only when every other transfer and the compute
 * are done, filled by a template that has one (OuterSPACE's merge of the
 * partial rows on one PE, docs/models/templates.md): its compute cycles
 * (also the last step of `spatial`) and, per boundary l, the bytes it moves
 * into level l and out of it (also in `traffic`). `timing: pipeline` times
 * it after the rest (docs/models/timing.md); the roofline ignores it. */
typedef struct tessel_tail {
    int present;
    double cycles;
    double in_bytes[TESSEL_SPEC_MAX_LEVELS], out_bytes[TESSEL_SPEC_MAX_LEVELS];
} tessel_tail;

typedef struct tessel_result {
    unsigned nlevels, ntensors;
    tessel_traffic traffic[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS];
    uint64_t macs;              /* effectual multiplies (flops), element level */
    /* The compute in Sparseloop's words (docs/semantics.md "Compute skipping
     * and gating"), filled by exact, stat and analytic: the dense loop
     * nest's points (algorithmic); under compute_optimization the MAC
     * operations that run (actual: the multiplies plus the ineffectual ones
     * neither gated nor skipped), gated and skipped. Without it actual =
     * macs and gated = skipped = 0. */
    uint64_t computes_algorithmic, computes_actual, computes_gated, computes_skipped;
    uint64_t intersections;     /* intersection steps: per effectual innermost tile
                                   iteration, the nonzeros of the operand tiles merged */
    uint64_t effectual_tiles[TESSEL_SPEC_MAX_LEVELS]; /* effectual tile iterations per level */
    uint64_t output_nnz;        /* nonzeros of the final output */
    /* stat: the output sample's standard error of output_nnz (0 when the
     * sample holds every row); has_stderr 0 for the other estimators and
     * when output_nnz is not the sample's estimate */
    double output_nnz_stderr;
    int output_nnz_has_stderr;
    uint64_t compulsory_bytes;  /* rule 3: inputs read once + output written once, each
                                   untiled in the backing store's (level 0) format */
    int compulsory_estimated;   /* stat: the output's count in compulsory_bytes is an
                                   estimate (no symbolic count within the budget) */
    int64_t tiled_metadata_bytes; /* every level-1 tile once in level 1's format, less the
                                     untiled tensors in that format: what tiling adds */
    uint64_t dram_bytes;        /* bytes across the level 0 / level 1 boundary */
    uint64_t overflow_tiles;    /* input tile fills larger than their partition (rule 4 applied);
                                   per level and tensor, outputs too: tessel_traffic */
    unsigned offgrid_edges;     /* stat: indices whose tile edges fall off the statistics' base
                                   grid, priced between the on-grid shapes around them */
    unsigned stat_design_may_differ; /* stat: a strategy decided the tiles on the statistics'
                                        base grid without the data, where exact may decide
                                        others (with the data both decide alike) */
    /* The tiles priced (summary.csv `tiles`): level l's edge per workload
     * index, whole modes as their extent; all 0 for a level the estimator
     * did not tile uniformly (templates, DRT's dynamic tiles). */
    uint64_t tile[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_INDICES];
    double seconds;             /* wall time of the estimate (stat: from statistics) */
    double stats_seconds;       /* stat: time spent collecting the statistics */
    char estimator[16];         /* "exact" or "stat" */
    int stat_walked;            /* stat: some boundary took the walk over effectual
                                   iterations (stat_walk.c) instead of the closed form */
    tessel_spatial spatial;     /* the spatial split's work per instance (present 0: none) */
    tessel_tail tail;           /* a template's serial last phase (present 0: none) */
    uint64_t extent[TESSEL_SPEC_MAX_INDICES]; /* per index when the point had the data (else 0):
                                                 the pipeline timing's output pieces */
    double stat_nested_fraction; /* stat: 0, or the share of the nested boundaries' work
                                    evaluated when they were sampled (stat_path "sampled") */
    double stat_nested_stderr;  /* stat: then the relative standard error of the inner
                                   levels' bytes */
    int stat_nested_formula;    /* stat: nested boundaries priced by the formula per tile
                                   shape (stat_path "formula") */
} tessel_result;

/* Exact estimator for SpMSpM (any loop order), TTM and MTTKRP over all
 * levels of the spec. O(effectual multiplies + effectual tile iterations x
 * log) time. Fails with TESSEL_EUNSUPPORTED for other workloads and with
 * TESSEL_ERANGE when a level's tile grid has more than 2^63 tiles. */
int tessel_model_exact(const tessel_spec *spec, const tessel_workload_data *data,
                       const tessel_allocator *a, tessel_result *out, tessel_diag *diag);

/* The level that spec splits spatially (mapping.LEVEL.spatial), or -1. */
int tessel_spatial_level(const tessel_spec *spec);
/* The spatial split's per-instance work from the data (exact; SpMSpM and
 * SpMV on the spec's fixed tiles) into out. TESSEL_EUNSUPPORTED naming
 * the reason for other workloads or more than one split level; ERANGE
 * when the level's tiles times its units pass 2^63. O(nnz(A) x B's
 * (tile, unit) runs per row) hash updates, memory O(distinct units). */
int tessel_model_spatial(const tessel_spec *spec, const tessel_workload_data *data,
                         const tessel_allocator *a, tessel_spatial *out, tessel_diag *diag);

/* Progress of a long estimate: storage level l (1 .. nlevels-1) is being
 * worked on and `fraction` of its walk is done. Called from the
 * estimating thread, at most once per 2^20 tile iterations and at each
 * level's start and end. */
typedef void (*tessel_progress_fn)(void *ud, unsigned level, double fraction);

/* tessel_model_exact with a progress callback (may be NULL). */
int tessel_model_exact_progress(const tessel_spec *spec, const tessel_workload_data *data,
                                const tessel_allocator *a, tessel_progress_fn progress,
                                void *progress_ud, tessel_result *out, tessel_diag *diag);

/* How the exact estimator walks a boundary's loop keys (issue 19 item 1).
 * The numbers do not depend on it: the options exist so tests can compare
 * the walks (tests/cli/walk_compare.py, through `tessel run`'s hidden
 * --exact-walk and --exact-chunk). Zeroed: the default streaming walk. */
typedef struct tessel_exact_options {
    int old_walk;        /* 1: every key of a boundary generated and sorted at once */
    uint64_t chunk_keys; /* streaming walk: keys per chunk; 0 = 2^24 */
} tessel_exact_options;

/* tessel_model_exact_progress with walk options (NULL: the defaults). */
int tessel_model_exact_opts(const tessel_spec *spec, const tessel_workload_data *data,
                            const tessel_allocator *a, const tessel_exact_options *opt,
                            tessel_progress_fn progress, void *progress_ud, tessel_result *out,
                            tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* The statistical estimator (d2t2 section 5, src/model/stat.c and
 * stat_spmspm.c): the same counts as the exact estimator, estimated from
 * per-input statistics collected once (the base tile grid, the D2T2
 * statistics, nonzeros per row and column). The input tiles' traffic is
 * computed from the tile grids at the level's shape, derived from the base
 * grid; the output's nonzeros and partial sums are estimated (eq. 20).
 * Today: SpMSpM and SpMV, one buffer level below the backing store, tile
 * edges that are multiples of the base grid (or whole modes), default
 * skipping, single-name formats; anything else is TESSEL_EUNSUPPORTED or
 * TESSEL_EINVAL with the spec position. */
typedef struct tessel_stat_options {
    /* base tile grid, rows x columns of every operand (a 3-tensor's first
     * two modes on rows). Default 0 x 0: chosen per workload index from
     * the spec's tiles and edge_gcd (docs/models/stat.md). */
    uint64_t base[2];
    /* automatic base only: tile edges per workload index that other design
     * points served by these statistics use (gcd so far; 0: none), see
     * tessel_stat_options_add_tiles */
    uint64_t edge_gcd[TESSEL_SPEC_MAX_INDICES];
    /* automatic base only, for a template with its own buffer policy
     * (whose tiles say nothing of the grid it reads): the base edge it
     * needs per workload index (0: 128), set by
     * tessel_template_stat_options (template.h), which
     * tessel_point_stats_create (point.h) calls */
    uint64_t own_base[TESSEL_SPEC_MAX_INDICES];
    double sample_fraction; /* of non-empty base tiles sampled for Corrs (default 0.01) */
    uint64_t seed;          /* of the samples (default 1) */
    /* The output sample: rows of the output multiplied out symbolically
     * once per input pair, drawn with probability proportional to their
     * predicted nonzeros over the square root of their multiplies (docs/models/stat.md,
     * "The output estimate when the sample covers little") so that they
     * cost max(output_fraction x all multiplies,
     * output_min_flops) (default 0 and 2^19: a fixed budget, so that a
     * design point's cost does not grow with the data; smaller products
     * are multiplied out whole). Both 0: no sample, the output's nonzeros
     * follow D2T2's eq. 20 from Corrs alone. */
    double output_fraction;
    uint64_t output_min_flops;
    /* 1: the output sample as before issue 18 (rows drawn in proportion to
     * their multiplies, weights calibrated to the multiplies; large, skewed
     * errors on clustered graphs when the sample covers little of the
     * output, no standard error). For comparisons only; default 0. */
    int output_legacy;
    /* Rule 3's output count: the output's nonzeros and non-empty rows are
     * counted exactly by a symbolic pass (src/stats/outcount.c) when its
     * work, the multiplies, is at most this (default
     * TESSEL_STAT_OUTPUT_COUNT_BUDGET; 0: never), so that compulsory_bytes
     * equals the exact estimator's; above it they are estimated
     * (tessel_result.compulsory_estimated). */
    double output_count_budget;
    /* A bound on the output sample's time: a sample of more multiplies
     * than this is refused before any is made, naming the fraction
     * (default and 0: TESSEL_STAT_OUTPUT_SAMPLE_MAX, rule 3's count
     * budget: the sample makes about the same work per multiply). Its
     * memory follows the base cells it reaches, about 20 bytes each. */
    double output_sample_max;
    /* 1: collect each input matrix's per-tile non-empty rows
     * (src/stats/tilerows.c; 4 B per non-empty base tile and per aligned
     * block of them) even when the spec's formats do not read them. They
     * are collected anyway for a spec, or a point given to
     * tessel_stat_options_add_tiles, with a per-rank list that reads a
     * tile's rows or tiled-csf (docs/models/stat.md, "Per-tile non-empty
     * rows"). Default 0. */
    int tile_rows;
} tessel_stat_options;
#define TESSEL_STAT_OUTPUT_COUNT_BUDGET 1073741824.0 /* 2^30 multiplies */
#define TESSEL_STAT_OUTPUT_SAMPLE_MAX 1073741824.0   /* 2^30 multiplies */

void tessel_stat_options_init(tessel_stat_options *o);
/* Folds spec's tile edges (whole modes aside) into o->edge_gcd, so that
 * automatic statistics serve that design point on their grid too (a
 * sweep's or map's points), and sets o->tile_rows when its formats read
 * a tile's rows. */
void tessel_stat_options_add_tiles(tessel_stat_options *o, const tessel_spec *spec);

/* The statistics of a workload's inputs, collected once (one pass over
 * each input and the output sample's multiplies) and then shared
 * read-only by any number of design points of the same workload. */
typedef struct tessel_stat_data tessel_stat_data;

int tessel_stat_data_create(const tessel_spec *spec, const tessel_workload_data *data,
                            const tessel_stat_options *opt, const tessel_allocator *a,
                            tessel_stat_data **out, tessel_diag *diag);
void tessel_stat_data_free(tessel_stat_data **s);
/* Lets s go of the tensors it was collected from (it points at them, and
 * owns an operand permuted from one): afterwards s reads no tensor, as
 * one that tessel_stat_data_load read, and the workload data may be freed
 * (tessel_workload_drop_tensors) while s prices points. */
void tessel_stat_data_drop_tensors(tessel_stat_data *s);
/* The `data` report column of the workload's data ("G51*G51^T"). */
const char *tessel_stat_data_label(const tessel_stat_data *s);
/* Wall time the collection took. */
double tessel_stat_data_seconds(const tessel_stat_data *s);
/* The base tile grid of workload tensor `tensor` (an input) as collected,
 * and the workload index of each of its modes (index[m]; -1 for a unit
 * mode SpMV adds); NULL when that input has none (e.g. a dense operand). */
const tessel_tile_grid *tessel_stat_data_grid(const tessel_stat_data *s, unsigned tensor,
                                              int *index);
/* tessel_model_spatial from collected statistics (-e stat): steps from the
 * base grids, expected MACs, each step's expected busiest instance
 * (src/model/spatial_stat.c, docs/models/spatial.md). */
int tessel_model_spatial_stat(const tessel_spec *spec, const tessel_stat_data *stats,
                              const tessel_allocator *a, tessel_spatial *out, tessel_diag *diag);
/* `timing: pipeline`'s per-step network count under -e stat: each dense
 * network's stationary input's fill_network_cycles from its base grid
 * (src/model/spatial_network.c, docs/models/timing.md); left 0 (the mean)
 * where the grid's cells do not lie inside the child's tiles. */
int tessel_model_network_stat(const tessel_spec *spec, const tessel_stat_data *stats,
                              const tessel_allocator *a, tessel_result *r, tessel_diag *diag);

/* Saved statistics (.tsd, src/model/stat_file.c): everything a design
 * point of this workload needs, without the data. Written atomically; a
 * read checks magic, version, checksums and the contents' consistency
 * (TESSEL_ECORRUPT naming the offending part). */
int tessel_stat_data_save(const tessel_stat_data *s, const char *path, tessel_diag *diag);
int tessel_stat_data_load(const char *path, const tessel_allocator *a, tessel_stat_data **out,
                          tessel_diag *diag);
/* The same from memory (tests, fuzzing). */
int tessel_stat_data_parse(const char *name, const void *data, size_t size,
                           const tessel_allocator *a, tessel_stat_data **out, tessel_diag *diag);

/* One design point from collected statistics: spec must have the same
 * einsum as the spec the statistics were collected with (the mapping and
 * architecture may differ). Costs microseconds to a millisecond; never
 * reads the data. Thread-safe for concurrent calls on one `s`. */
int tessel_model_stat_eval(const tessel_spec *spec, const tessel_stat_data *s,
                           tessel_result *out, tessel_diag *diag);

/* Per-shape summaries of the stat estimator (src/model/stat_cache.c):
 * points of SpMSpM at one buffer level that share a tile shape
 * (the grids' shape, and the side of the mirror the loop order takes)
 * reuse its grids, pair walk, per-order tile uses grouped by tile size
 * and output write-backs, so that another partition, capacity, format or
 * loop order costs microseconds. Results equal tessel_model_stat_eval's
 * byte for byte. A cache belongs to one tessel_stat_data (free it first)
 * and to one thread; it keeps up to 1,024 shapes (kilobytes each)
 * and empties itself when full. */
typedef struct tessel_stat_cache tessel_stat_cache;

int tessel_stat_cache_create(const tessel_stat_data *s, const tessel_allocator *a,
                             tessel_stat_cache **out);
/* A cache for another thread that shares with's shape summaries (one
 * table under a lock: each shape is built once, by the first thread that
 * needs it; a point whose shape another thread is building is evaluated
 * without the summary, with the same result); its nested summaries are
 * its own. Create it before the threads start; free them in any order. */
int tessel_stat_cache_create_shared(tessel_stat_cache *with, tessel_stat_cache **out);
/* Points c evaluated without a summary because another thread was
 * building it. */
uint64_t tessel_stat_cache_passed(const tessel_stat_cache *c);
void tessel_stat_cache_free(tessel_stat_cache **c);
/* Shapes found in the cache and shapes summarised so far (by this cache:
 * the shapes another cache of the table built count as found). */
void tessel_stat_cache_counts(const tessel_stat_cache *c, uint64_t *hits, uint64_t *misses);
/* Nested boundaries (b >= 2) priced from a kept summary, and summaries
 * built (docs/models/stat.md "Nested summaries"). */
void tessel_stat_cache_nested_counts(const tessel_stat_cache *c, uint64_t *hits,
                                     uint64_t *misses);
/* Merge walks of the nested boundaries taken from a kept one, and walks
 * kept (docs/models/stat.md "Merge walks kept by what they read"). */
void tessel_stat_cache_nested_walks(tessel_stat_cache *c, uint64_t *hits, uint64_t *kept);
/* The step count's tables (per k tile edge and matrices) and geometries
 * (per tile shape) this cache's thread built into the pool the caches of
 * one table share, and the points it built its own for because another
 * thread was building them (docs/sweep.md). */
void tessel_stat_cache_ksteps_counts(const tessel_stat_cache *c, uint64_t *tables,
                                     uint64_t *geometries, uint64_t *passed);
/* The step count's memos and covers (per k tile edge and matrices) this
 * cache's thread made; the pool keeps them and the threads take them in
 * turn, so a thread makes one only when every one of its key is held. */
uint64_t tessel_stat_cache_ksteps_memos(const tessel_stat_cache *c);
/* The compute's per-band reads this cache's thread built into that pool
 * (stat_inspill.c's band_lines: once per input and band, docs/models/stat.md
 * "band_lines once per band"). */
uint64_t tessel_stat_cache_band_counts(const tessel_stat_cache *c);
/* tessel_model_stat_eval through cache (NULL: without one). Points the
 * summaries do not cover (TTM, MTTKRP, nested levels, gated or unskipped
 * inputs) and a summary that cannot be built (out of memory) take the
 * uncached path, as do SpMV's (not compared with the summaries yet). */
int tessel_model_stat_eval_cached(const tessel_spec *spec, const tessel_stat_data *s,
                                  tessel_stat_cache *cache, tessel_result *out,
                                  tessel_diag *diag);

/* Both in one: opt may be NULL (defaults). out->seconds is the estimate
 * from the statistics, out->stats_seconds their collection. */
int tessel_model_stat(const tessel_spec *spec, const tessel_workload_data *data,
                      const tessel_stat_options *opt, const tessel_allocator *a,
                      tessel_result *out, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* The analytic estimator (src/model/analytic.c): SpMSpM at one buffer
 * level in closed form from the inputs' density models (uniform or N:M;
 * bindings like `B: A^T` follow the model they name), no data and no
 * instance: O(tiles along the reduction index). TESSEL_EUNSUPPORTED for
 * data bindings, banded models, other workloads, more levels. */
int tessel_model_analytic(const tessel_spec *spec, const tessel_allocator *a, tessel_result *out,
                          tessel_diag *diag);
/* The `data` report column of an analytic run. */
void tessel_model_analytic_label(const tessel_spec *spec, char *buf, size_t n);

/* Rule 3 (docs/semantics.md): bytes of one whole tensor, workload tensor `tensor`
 * (0 = the output), untiled, in level `level`'s format (compulsory
 * traffic: level 0, the backing store; tiled metadata: level 1), in
 * canonical mode order with extents dims[0 .. order); occupied[d] (may be
 * NULL with single-name formats) the distinct non-empty coordinate
 * prefixes of length d + 1, nnz its nonzeros. For modules that compute
 * compulsory traffic outside the estimators (templates, DRT). */
int tessel_model_untiled_bytes(const tessel_spec *spec, unsigned level, unsigned tensor,
                               unsigned order,
                               const uint64_t *dims, const double *occupied, double nnz,
                               double *bytes, tessel_diag *diag);
/* Rule 4 over all levels and tensors of r: tile transfers that overflow
 * their partition and the bytes that overflow costs (either may be NULL). */
void tessel_result_overflow(const tessel_result *r, uint64_t *tiles, uint64_t *bytes);

/* Rule 4 before any estimate (src/model/feasible.c, issue 20): the tiles
 * of spec's mapping (its fixed tiles) that overflow their partitions, from
 * one pass over each input per level (O(nnz) per level), for --strict to
 * fail fast. One check per (level, tensor) that overflows: inputs are
 * exact ("overflows": certain 1); a SpMSpM/SpMV output is bounded from
 * row and column products ("may overflow": certain 0, worst_tile_bytes
 * the bound); TTM/MTTKRP outputs are not checked (output_unchecked). */
typedef struct tessel_overflow_check {
    unsigned level, tensor;    /* storage level (>= 1) and workload tensor (0 = output) */
    int certain;               /* 1: a tile overflows; 0: an upper bound of one does */
    uint64_t partition_bytes;
    uint64_t worst_tile_bytes; /* the largest tile (certain 0: its bound) */
    uint64_t overflow_tiles;   /* inputs: non-empty tiles larger than the partition */
    uint64_t tiles;            /* inputs: non-empty tiles */
    unsigned order;            /* the worst tile: per mode of the tensor, the workload index */
    int index[3];              /* (-1: SpMV's unit index) and its coordinates first..last */
    uint64_t first[3], last[3];
} tessel_overflow_check;

typedef struct tessel_feasibility {
    unsigned n;
    tessel_overflow_check item[TESSEL_SPEC_MAX_LEVELS * TESSEL_SPEC_MAX_TENSORS];
    int output_unchecked;
    double seconds;
} tessel_feasibility;

int tessel_model_feasibility(const tessel_spec *spec, const tessel_workload_data *data,
                             const tessel_allocator *a, tessel_feasibility *out,
                             tessel_diag *diag);

/* Map a spec format number (spec.h) to the stats footprint format. */
tessel_format tessel_model_format(int spec_format);

/* ------------------------------------------------------------------ */
/* Read access to collected statistics, for modules that price a design
 * from them without the stat estimator's tile model (module `template`). */

/* Nonzeros per slice of input `tensor` (a workload tensor number) as
 * collected, along one mode of its operand in the estimators' canonical
 * mode order (SpMSpM: A[i,k] and B[k,j], A being the input that holds the
 * output's first index; SpMV: x[k] as a K x 1 matrix; a 3-tensor
 * T[i,x,k]): side 0 counts per value of the operand's first mode, side 1
 * per value of its last mode. *n (may be NULL) gets the number of slices,
 * *index (may be NULL) the workload index of that mode (-1 for the unit
 * mode SpMV adds). NULL when the statistics hold no such input or side. */
const uint64_t *tessel_stat_data_line_nnz(const tessel_stat_data *s, unsigned tensor,
                                          unsigned side, uint64_t *n, int *index);

/* The output sample's estimate of the output's nonzeros (the sum of its
 * weights: exact when the sample holds every row, see
 * tessel_stat_options), independent of any design; -1 when the statistics
 * were collected without an output sample. */
double tessel_stat_data_output_nnz(const tessel_stat_data *s);
/* The output's nonzeros and non-empty rows as the symbolic pass counted
 * them at statistics time (rule 3's count); returns 1 and fills out when
 * that count exists, 0 when only the estimate does (over the budget, or
 * statistics saved before version 4). */
int tessel_stat_data_output_count(const tessel_stat_data *s, tessel_output_count *out);
/* Its standard error: 0 when the sample holds every row, -1 when not
 * estimated (no sample, MTTKRP, output_legacy, statistics saved before the
 * estimate had one). */
double tessel_stat_data_output_nnz_stderr(const tessel_stat_data *s);

/* Nested buffer levels (boundaries 2 and below) of SpMSpM whose work
 * exceeds `budget` base-level tile multiplies are estimated from a sample
 * of level 1's i strips (docs/models/stat.md, "A nested point in bounded
 * time"); 0 evaluates every strip (the full closed form). Default
 * TESSEL_STAT_NESTED_BUDGET. Set it before sharing s between threads. */
#define TESSEL_STAT_NESTED_BUDGET 0.0
void tessel_stat_data_set_nested_budget(tessel_stat_data *s, double budget);

/* on != 0: nested buffer levels (boundaries 2 and below) of SpMSpM are
 * priced by the formula per tile shape (docs/models/stat.md, "The nested
 * formula"; stat_path "formula"), where it can decide the point. Default 0.
 * Set it before sharing s between threads. */
void tessel_stat_data_set_nested_formula(tessel_stat_data *s, int on);

#ifdef __cplusplus
}
#endif
#endif

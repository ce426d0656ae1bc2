/* tessel — specs: a YAML document tree with source positions, and the
 * validated run specification (workload, architecture, mapping) built from
 * it.  Module `spec`: depends only on `base`.  The schema is documented in
 * docs/spec.md. */
#ifndef TESSEL_SPEC_H
#define TESSEL_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "tessel/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* YAML tree.  Every node remembers the file, line and column (1-based) it
 * came from, so that any later check can point at the offending text.
 * Nodes live in the document's arena: they are freed with the document and
 * never individually. Aliases resolve to the anchored node (shared). */
typedef enum tessel_yaml_kind {
    TESSEL_YAML_SCALAR = 0,
    TESSEL_YAML_SEQUENCE,
    TESSEL_YAML_MAPPING
} tessel_yaml_kind;

typedef struct tessel_yaml_node tessel_yaml_node;
struct tessel_yaml_node {
    tessel_yaml_kind kind;
    const char *file;
    uint64_t line;
    uint32_t column;
    /* scalar */
    const char *value; /* NUL-terminated */
    size_t length;
    int quoted; /* written in quotes: never a number, boolean or null */
    /* sequence: items[0..count); mapping: keys[i] -> items[i], keys are scalars */
    size_t count;
    tessel_yaml_node **keys;
    tessel_yaml_node **items;
};

typedef struct tessel_yaml_doc tessel_yaml_doc;

/* Parses one YAML document (a stream holding more than one is an error).
 * `name` is used in diagnostics. Nesting deeper than 64 levels, documents
 * over 1,000,000 nodes and duplicate mapping keys are errors. */
int tessel_yaml_parse(const char *name, const void *data, size_t size,
                      const tessel_allocator *a, tessel_yaml_doc **out, tessel_diag *diag);
int tessel_yaml_load(const char *path, const tessel_allocator *a, tessel_yaml_doc **out,
                     tessel_diag *diag);
void tessel_yaml_free(tessel_yaml_doc **doc);

const tessel_yaml_node *tessel_yaml_root(const tessel_yaml_doc *doc);
/* The value under `key` in a mapping, or NULL (also when m is not a mapping). */
const tessel_yaml_node *tessel_yaml_get(const tessel_yaml_node *m, const char *key);
/* Scalar helpers: 0 on success, TESSEL_EPARSE when the node is not a
 * scalar of that type (no diagnostic; callers word the message). */
int tessel_yaml_double(const tessel_yaml_node *n, double *out);
int tessel_yaml_u64(const tessel_yaml_node *n, uint64_t *out);
int tessel_yaml_bool(const tessel_yaml_node *n, int *out);
int tessel_yaml_is_null(const tessel_yaml_node *n);
/* "256KiB", "1.5 MB", "4096" (bytes), "64B"; KB/MB/GB/TB/PB/EB are powers
 * of 1000, KiB/MiB/GiB/TiB/PiB/EiB powers of 1024. Fractions of a byte are
 * an error; sizes of 2^64 bytes or more are TESSEL_ERANGE. */
int tessel_parse_size(const char *text, uint64_t *bytes);
/* Arena allocation in a document (for trees built in code, e.g. merged
 * specs); returns NULL when out of memory. Strings are copied. */
tessel_yaml_node *tessel_yaml_new_scalar(tessel_yaml_doc *doc, const char *value,
                                         const char *file, uint64_t line, uint32_t column);
tessel_yaml_doc *tessel_yaml_doc_create(const tessel_allocator *a);
/* A copy of src (deep) in doc's arena, or NULL. */
tessel_yaml_node *tessel_yaml_copy(tessel_yaml_doc *doc, const tessel_yaml_node *src);
int tessel_yaml_set_root(tessel_yaml_doc *doc, tessel_yaml_node *root);

/* ------------------------------------------------------------------ */
/* The run specification.  Limits: */
#define TESSEL_SPEC_MAX_LEVELS 8u
#define TESSEL_SPEC_MAX_TENSORS 4u /* the output and up to three inputs */
#define TESSEL_SPEC_MAX_INDICES 8u
#define TESSEL_SPEC_NAME_MAX 32u

/* Where a value came from, for messages raised after loading (e.g. a data
 * file whose dimensions contradict the einsum). */
typedef struct tessel_spec_pos {
    const char *file;
    uint64_t line;
    uint32_t column;
} tessel_spec_pos;

/* A component's energy model: class name in the energy tables (e.g.
 * "LPDDR4", "SRAM", "regfile", "fpmac", "intersect") and its attributes
 * (a YAML mapping such as {width: 64, depth: 4096, technology: 45nm}, or
 * NULL). */
typedef struct tessel_spec_component {
    char cls[TESSEL_SPEC_NAME_MAX];
    const tessel_yaml_node *attributes;
    tessel_spec_pos pos;
} tessel_spec_component;

/* Sparse optimization of one tensor at one level (Sparseloop vocabulary):
 * bit t of a mask refers to workload tensor t. */
typedef struct tessel_spec_sparse {
    uint32_t skip_on; /* skip this tensor's accesses where any of these is empty */
    uint32_t gate_on; /* gate (no data moved, slot still spent) where any is empty */
    /* `action_optimization` at the level (Sparseloop's scalar skipping and
     * gating, docs/spec.md): the compute's scalar reads of this tensor are
     * skipped (gated) where any tensor of the mask holds a zero; 0 = none. */
    uint32_t scalar_skip_on, scalar_gate_on;
} tessel_spec_sparse;

/* Tensor formats per level: one of tessel_format in stats.h (kept as an
 * int here because spec must not depend on stats): 0 coo, 1 csr (cp),
 * 2 bitmap (b), 3 uop-cp (uop), 4 rle; -1 = not given; or
 * TESSEL_SPEC_FORMAT_RANKS when the format is a list of rank formats
 * (outermost first), each a tessel_rank_format of stats.h: 0 UOP, 1 CP,
 * 2 B, 3 RLE, 4 UB. TESSEL_SPEC_FORMAT_TILED_CSF: `tiled-csf`, the tensor
 * stored as a CSF over the child level's tiles (docs/spec.md); not a
 * tessel_format, since its bytes are not affine in the nonzeros. */
#define TESSEL_SPEC_FORMAT_RANKS 16
#define TESSEL_SPEC_FORMAT_TILED_CSF 17
typedef struct tessel_spec_tensor_level {
    int format;
    unsigned nranks;
    unsigned char ranks[TESSEL_SPEC_MAX_INDICES];
    double partition_fraction; /* of the level's capacity; 0 = not given */
    uint64_t partition_bytes;  /* 0 = not given */
    tessel_spec_sparse sparse;
    tessel_spec_pos pos;
    /* `rank_order: [n, k]` (docs/spec.md): the tensor's modes as workload
     * index numbers, outermost rank first, in which its format's ranks run
     * at this level; nrank_order 0 = the estimators' canonical mode order. */
    unsigned nrank_order;
    unsigned char rank_order[TESSEL_SPEC_MAX_INDICES];
    tessel_spec_pos rank_order_pos;
} tessel_spec_tensor_level;

typedef struct tessel_spec_level {
    char name[TESSEL_SPEC_NAME_MAX];
    uint64_t capacity;      /* bytes; 0 = unbounded (the backing store) */
    double bandwidth;       /* GB/s (10^9 bytes/s); 0 = unbounded */
    /* Separate ports (GB/s; 0 = not given): `timing: pipeline` times level
     * reads and writes on their own ports (docs/models/timing.md). */
    double read_bandwidth, write_bandwidth;
    /* `network: {width, deliver}`: values per cycle the level's network
     * delivers to its child (0 = not modelled) and whether a streamed value
     * goes to every lane holding a stationary value (dense, SIGMA) or only
     * to effectual multiplies (docs/models/timing.md). */
    unsigned network_width;
    int network_dense;
    /* network.class (energy class of its wires, "" = the default `wire`) and
     * network.hop_mm (mm a delivery travels, 0 = the side of the child's
     * instances, docs/models/energy.md "Network energy"). */
    char network_class[TESSEL_SPEC_NAME_MAX];
    double network_hop_mm;
    unsigned instances;     /* copies of this level (e.g. one per PE); >= 1 */
    unsigned word_bits;     /* bits per access, for energy (default 64) */
    unsigned value_bits;    /* default 64 */
    unsigned coord_bits;    /* default 32 */
    unsigned offset_bits;   /* default 32 */
    unsigned run_bits;      /* default 32 */
    int format;             /* default format of tensors here; default csr (1) */
    unsigned nranks;        /* with format == TESSEL_SPEC_FORMAT_RANKS */
    unsigned char ranks[TESSEL_SPEC_MAX_INDICES];
    tessel_spec_tensor_level tensor[TESSEL_SPEC_MAX_TENSORS];
    tessel_spec_component energy;
    /* Mapping at this level (level 0, the backing store, has none): the
     * tile edge per workload index (0 = the whole extent), and the tile
     * loop order as workload index numbers, outermost first. */
    uint64_t tile[TESSEL_SPEC_MAX_INDICES];
    unsigned order[TESSEL_SPEC_MAX_INDICES];
    int has_mapping;
    tessel_spec_pos pos;
    /* mapping.LEVEL.spatial (docs/spec.md, docs/models/spatial.md): per workload
     * index, how many of the child's instances (level l+1's `instances`, or
     * the compute's `pes` below the innermost level) its tiles are split
     * over (0 = not split); `distribution` is TESSEL_SPEC_SPATIAL_*. */
    unsigned spatial[TESSEL_SPEC_MAX_INDICES];
    int spatial_policy;
    tessel_spec_pos spatial_pos;
    /* mapping.LEVEL.bypass / keep (docs/spec.md, Sparseloop's keep/bypass):
     * bit t set = tensor t is not stored at this level; its child reads it
     * from the nearest level above that keeps it. 0 at level 0. */
    uint32_t bypass;
    tessel_spec_pos bypass_pos;
} tessel_spec_level;

/* architecture.timing (docs/models/timing.md) */
enum { TESSEL_SPEC_TIMING_ROOFLINE = 0, TESSEL_SPEC_TIMING_PIPELINE = 1 };

/* mapping.LEVEL.distribution: how the child tiles go to the instances. */
enum { TESSEL_SPEC_SPATIAL_BLOCKED = 0, TESSEL_SPEC_SPATIAL_ROUND_ROBIN = 1,
       TESSEL_SPEC_SPATIAL_DYNAMIC = 2 };

typedef enum tessel_workload_kind {
    TESSEL_WORKLOAD_SPMSPM = 0, /* Z[i,j] = A[i,k] * B[k,j] (any names) */
    TESSEL_WORKLOAD_TTM,        /* Y[i,j,r] = T[i,j,k] * M[k,r] */
    TESSEL_WORKLOAD_MTTKRP,     /* Y[i,r] = T[i,j,k] * B[j,r] * C[k,r] */
    TESSEL_WORKLOAD_SPMV,       /* y[i] = A[i,k] * x[k] (modelled as SpMSpM with one column) */
    TESSEL_WORKLOAD_OTHER       /* parsed, but no estimator handles it */
} tessel_workload_kind;

typedef struct tessel_spec_tensor {
    char name[TESSEL_SPEC_NAME_MAX];
    unsigned rank;
    unsigned index[TESSEL_SPEC_MAX_INDICES]; /* workload index number per mode */
    /* Binding (inputs only): a data file path; or another tensor's name
     * (`B: A`), optionally transposed (`B: A^T`); or a dense operand
     * `dense` (all ones, shape from the einsum). NULL for the output. */
    char *data;
    /* Or a density model instead of data (`A: {model: uniform, rows: 1000,
     * cols: 1000, density: 0.01}`): the estimators that need data get a
     * seeded synthetic instance of it. */
    struct {
        int present;
        int kind;            /* tessel_density_kind (stats.h): 0 uniform, 1 banded, 2 nm,
                                3 fixed-structured */
        uint64_t rows, cols;
        uint64_t nnz;        /* uniform: exact count, or 0 when `density` gives it */
        double density;      /* uniform (without nnz), banded: keep probability;
                                fixed-structured: every tile's share */
        uint64_t bandwidth;  /* banded */
        unsigned n, m;       /* nm */
        uint64_t seed;       /* default 1 */
    } model;
    tessel_spec_pos pos;
} tessel_spec_tensor;

typedef struct tessel_spec_workload {
    char *einsum;
    tessel_workload_kind kind;
    unsigned ntensors; /* tensor[0] is the output, then the inputs in einsum order */
    tessel_spec_tensor tensor[TESSEL_SPEC_MAX_TENSORS];
    unsigned nindices;
    char index_name[TESSEL_SPEC_MAX_INDICES][TESSEL_SPEC_NAME_MAX];
    /* Index extents given in the spec (`dims: {r: 32}`); 0 = from data. */
    uint64_t extent[TESSEL_SPEC_MAX_INDICES];
    tessel_spec_pos pos;
} tessel_spec_workload;

typedef struct tessel_spec_compute {
    unsigned pes;            /* >= 1 */
    unsigned macs_per_pe;    /* MACs per PE per cycle, >= 1 */
    double clock_ghz;        /* > 0 */
    tessel_spec_component mac;       /* energy class of one MAC */
    tessel_spec_component intersect; /* energy class of one intersection step (optional: cls "") */
    /* intersect.step_cycles: cycles one intersection step takes in a PE (1;
     * docs/models/spatial.md: a unit's work under a spatial split). */
    double intersect_step_cycles;
    /* compute_optimization (Sparseloop's compute-optimization, docs/spec.md):
     * 0 = not given (the MAC runs the effectual multiplies only), else
     * TESSEL_SPEC_COMPUTE_OPT_GIVEN with GATING and/or SKIPPING. */
    unsigned optimization;
    tessel_spec_pos pos;
} tessel_spec_compute;
enum { TESSEL_SPEC_COMPUTE_OPT_GIVEN = 1, TESSEL_SPEC_COMPUTE_OPT_GATING = 2,
       TESSEL_SPEC_COMPUTE_OPT_SKIPPING = 4 };

/* The tiling strategy (`mapping.strategy` and `mapping.strategy_options`):
 * who decides the tiles of the levels. Names (the strategy module's):
 * "fixed" (the mapping's tiles as written; the default), "conservative",
 * "prescient", "swiftiles", "drt", "d2t2". Tiles written in the mapping
 * then only give the aspect ratio the strategy keeps. */
#define TESSEL_SPEC_STRATEGY_FIXED "fixed"
typedef struct tessel_spec_strategy {
    char name[TESSEL_SPEC_NAME_MAX];
    double overbooking;    /* swiftiles: target fraction y of non-empty tiles that overflow (0.10) */
    unsigned tail_samples; /* swiftiles: k, the sampled tiles expected above the quantile;
                              k / y tiles are sampled (10) */
    unsigned rounds;       /* swiftiles: sample-and-measure rounds; 1 is the paper's one shot (8) */
    uint64_t seed;         /* of every sample (1) */
    int dense_worst;       /* conservative: size tiles as if dense (ExTensor-N) instead of
                              by the statistics' worst tile (0) */
    uint64_t micro[2];     /* drt: micro tile rows x columns (32 x 32) */
    int growth;            /* drt: 0 contracted index first, 1 alternating */
    int dataflow;          /* drt: 0 merged (each product reduced into the output tile as it is
                              made), 1 outer-product (a task's products held unmerged) */
    uint32_t levels;       /* bit l: the strategy sizes level l; 0 = every level below level 0 */
    int order;             /* which level is sized first: TESSEL_SPEC_ORDER_* (0: the strategy's paper) */
    tessel_spec_pos pos;
} tessel_spec_strategy;

/* mapping.strategy_options.order */
enum { TESSEL_SPEC_ORDER_DEFAULT = 0, TESSEL_SPEC_ORDER_OUTER_FIRST = 1,
       TESSEL_SPEC_ORDER_INNER_FIRST = 2 };

/* An accelerator template (`template: NAME`, `template_options: {...}`):
 * an accelerator whose own buffer policy decides its traffic instead of
 * docs/semantics.md's uniform tiles. Names: "none" (the default), "extensor",
 * "gamma", "outerspace", "matraptor", "sparsepipe". The options are kept
 * as written and checked by the template (module `template`). */
typedef struct tessel_spec_template {
    char name[TESSEL_SPEC_NAME_MAX];
    const tessel_yaml_node *options; /* a mapping, or NULL */
    tessel_spec_pos pos;
} tessel_spec_template;

typedef struct tessel_spec {
    const tessel_allocator *alloc;
    char name[64];          /* design name (the `design` CSV column) */
    char *path;             /* the top-level spec file */
    tessel_spec_workload workload;
    unsigned nlevels;       /* levels[0] is the backing store (DRAM) */
    tessel_spec_level level[TESSEL_SPEC_MAX_LEVELS];
    tessel_spec_compute compute;
    int timing;             /* architecture.timing: TESSEL_SPEC_TIMING_* (roofline) */
    tessel_spec_strategy strategy;
    tessel_spec_template template_;
    /* Energy tables to search, in order (paths resolved relative to the
     * spec file that named them): tessel tables or Accelergy ERT/ART. */
    unsigned ntables;
    char *table[8];
    char technology[16];    /* e.g. "45nm"; default "45nm" */
    tessel_yaml_doc *doc;   /* the merged document the spec was read from */
    /* Private to the spec loader: where relative paths of each file resolve
     * (in `doc`'s arena; a derived spec shares its base's). */
    const struct spec_dir *dirs;
} tessel_spec;

/* Loads `path`, follows `include:` (relative to the including file; a
 * cycle is an error), applies `sets` ("path.to.key=value", a level's name
 * alone is shorthand for architecture.levels.NAME) and validates. Every
 * error found is appended to `errors` (file:line:col, field, message) and
 * the first one's code returned; *out is set only on success. */
int tessel_spec_load(const char *path, const char *const *sets, size_t nsets,
                     const tessel_allocator *a, tessel_spec **out, tessel_diag_list *errors);
/* Same from text in memory (`name` stands for the file in messages;
 * includes resolve relative to the current directory). */
int tessel_spec_parse(const char *name, const void *data, size_t size, const char *const *sets,
                      size_t nsets, const tessel_allocator *a, tessel_spec **out,
                      tessel_diag_list *errors);
void tessel_spec_free(tessel_spec **s);
/* The i-th file the spec was read from (the spec file and its includes, as
 * named in messages), NULL past the last: what a saved result depends on. */
const char *tessel_spec_source(const tessel_spec *s, size_t i);

/* A new spec: `base` with `sets` applied ("path.to.key=value", as for
 * tessel_spec_load) and validated again, without reading or parsing any
 * file. The derived spec shares base's YAML nodes and directory table, so
 * `base` must outlive it. Safe to call from several threads at once on one
 * base (base is only read). Errors as for tessel_spec_load. */
int tessel_spec_derive(const tessel_spec *base, const char *const *sets, size_t nsets,
                       const tessel_allocator *a, tessel_spec **out, tessel_diag_list *errors);

/* Appends plausibility warnings (diagnostics with code 0) for values a
 * valid spec may hold but that are likely slips: a clock above 10 GHz or
 * below 1 MHz (a bare number is GHz), a level whose tensor partitions sum
 * below half its capacity. Returns the number added, or TESSEL_EINVAL. */
int tessel_spec_plausibility(const tessel_spec *s, tessel_diag_list *warnings);

/* Index number of a workload index name, or -1. */
int tessel_spec_index(const tessel_spec *s, const char *name);
/* Tensor number of a workload tensor name, or -1. */
int tessel_spec_tensor_index(const tessel_spec *s, const char *name);
/* Level number of a level name, or -1. */
int tessel_spec_level_index(const tessel_spec *s, const char *name);
/* mapping.LEVEL.distribution's spelling of TESSEL_SPEC_SPATIAL_* policy p
 * ("blocked", "static-round-robin", "dynamic"), and back (-1: none). */
const char *tessel_spec_distribution_name(int policy);
int tessel_spec_distribution_of(const char *name);
/* Replaces tensor t's data binding (from --tensor NAME=FILE). */
int tessel_spec_bind(tessel_spec *s, const char *name, const char *data, tessel_diag *diag);
/* The share of level l's capacity its partitions add up to (1 = all of
 * it; fractions plus bytes / capacity). Validation refuses over 1 + 1e-9. */
double tessel_spec_partition_sum(const tessel_spec *s, unsigned l);
/* The bytes of tensor t's share of level l as the estimators use them: the
 * bytes given, else the fraction of the capacity, else an equal share for
 * every tensor kept there (capacity / tensors, rounded down); in a double, so that a
 * fraction of a capacity near 2^64 stays in range. Validation refuses a
 * share below one byte at a bounded level. */
double tessel_spec_partition_share(const tessel_spec *s, unsigned l, unsigned t);
/* 1 when tensor t is bypassed at level l (mapping.LEVEL.bypass): not stored
 * there, so it has no partition (its share is 0) and the equal default
 * share is the capacity over the tensors kept. */
int tessel_spec_bypassed(const tessel_spec *s, unsigned l, unsigned t);
/* tessel_spec_partition_share as the estimators, strategies and the mapper
 * take it, in whole bytes: 0 = unbounded (a level without capacity) or
 * absent (a bypassed tensor), neither of which can overflow. */
uint64_t tessel_spec_partition_bytes(const tessel_spec *s, unsigned l, unsigned t);

/* ------------------------------------------------------------------ */
/* The resolved spec: what tessel uses for a design, includes merged,
 * overrides applied and every default filled in (`tessel spec`). */

/* The resolved spec of s as YAML, written through libcyaml's schema of it
 * (src/spec/resolved_schema.c). *yaml is allocated through a (free with
 * tessel_dealloc); *len excludes no terminator (the text is not
 * NUL-terminated). */
int tessel_spec_resolved_yaml(const tessel_spec *s, const tessel_allocator *a, char **yaml,
                              size_t *len, tessel_diag *diag);
/* Reads resolved-spec YAML back through the same schema and writes it
 * again: 0 when the two texts are byte-identical (the round trip), else
 * TESSEL_EPARSE (not a resolved spec) or TESSEL_ECORRUPT (they differ). */
int tessel_spec_resolved_check(const char *yaml, size_t len, const tessel_allocator *a,
                               tessel_diag *diag);

/* Where one resolved value came from: `path` in the spec's own vocabulary
 * (e.g. "architecture.levels.PEB.capacity"), the value tessel uses, and
 * "file:line:col" of the YAML node that set it (an included file's, or
 * "--set:N:col" for the Nth override) or "default". */
typedef struct tessel_spec_origin {
    char *path;
    char *value;
    char *origin;
} tessel_spec_origin;
int tessel_spec_origins(const tessel_spec *s, const tessel_allocator *a,
                        tessel_spec_origin **out, size_t *count, tessel_diag *diag);
void tessel_spec_origins_free(tessel_spec_origin *items, size_t count,
                              const tessel_allocator *a);

#ifdef __cplusplus
}
#endif
#endif

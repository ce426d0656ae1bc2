/* The resolved spec: a plain tree of what tessel uses for a design (includes
 * merged, overrides applied, every default filled in), shaped for libcyaml's
 * schema writer and loader (resolved_schema.c). Private to the spec module;
 * the public calls are tessel_spec_resolved_yaml / _check / tessel_spec_origins. */
#ifndef TESSEL_SPEC_RESOLVED_H
#define TESSEL_SPEC_RESOLVED_H

#include <stdint.h>

#include "tessel/spec.h"

/* Energy attributes: the keys src/energy/component.c accepts, as written. */
typedef struct rs_attrs {
    char *width, *datawidth, *depth, *size, *technology, *exponent, *mantissa, *radix;
} rs_attrs;

typedef struct rs_component {
    char *cls;
    rs_attrs *attributes; /* NULL when none were given */
} rs_component;

typedef struct rs_tile {
    char *index;
    uint64_t size; /* 0 = the whole extent */
} rs_tile;

typedef struct rs_mapping {
    char *order; /* index names, outermost first */
    rs_tile *tile;
    unsigned tile_count;
    char *spatial;      /* "{i: 8, j: 16}", or NULL without a spatial split */
    char *distribution; /* with spatial: its policy's name */
    char **bypass;      /* tensors the level does not store (mapping.LEVEL.bypass) */
    unsigned bypass_count;
} rs_mapping;

typedef struct rs_part {
    char *tensor;
    char *format;
    double partition_bytes; /* the share the estimators use */
    char **skip_on;
    unsigned skip_on_count;
    char **gate_on;
    unsigned gate_on_count;
    char **rank_order; /* index names, outermost rank first; absent = canonical */
    unsigned rank_order_count;
    /* the level's action_optimization for this tensor (condition tensors) */
    char **scalar_skip_on;
    unsigned scalar_skip_on_count;
    char **scalar_gate_on;
    unsigned scalar_gate_on_count;
} rs_part;

typedef struct rs_level {
    char *name;
    uint64_t capacity; /* 0 = unbounded */
    double bandwidth;  /* GB/s; 0 = unbounded */
    unsigned instances, word_bits, value_bits, coord_bits, offset_bits, run_bits;
    char *format;
    rs_component energy;
    rs_part *tensors;
    unsigned tensors_count;
    rs_mapping *mapping; /* NULL at the backing store */
    /* The pipeline timing's keys; NULL when not given (docs/models/timing.md) */
    double *read_bandwidth, *write_bandwidth;
    unsigned *network_width;
    char *network_deliver;
    char *network_class;     /* network.class and hop_mm, when given */
    double *network_hop_mm;
} rs_level;

typedef struct rs_model {
    char *kind;
    uint64_t rows, cols, nnz, bandwidth, seed;
    double density;
    unsigned n, m;
} rs_model;

typedef struct rs_tensor {
    char *name, *role, *indices;
    char *data;      /* NULL for the output or a model */
    rs_model *model; /* NULL unless a density model stands for data */
} rs_tensor;

typedef struct rs_index {
    char *name;
    uint64_t extent; /* 0 = from the data */
} rs_index;

typedef struct rs_workload {
    char *einsum, *kind;
    rs_index *indices;
    unsigned indices_count;
    rs_tensor *tensors;
    unsigned tensors_count;
} rs_workload;

typedef struct rs_compute {
    unsigned pes, macs_per_pe;
    double clock_ghz;
    rs_component mac;
    rs_component *intersect; /* NULL when not priced */
    double *intersect_step_cycles; /* intersect.step_cycles; NULL without intersect */
    /* compute_optimization: "none", "gating", "skipping" or "gating,skipping";
     * NULL when the spec gives none */
    char *compute_optimization;
} rs_compute;

typedef struct rs_strategy {
    char *name;
    double overbooking;
    unsigned tail_samples, rounds;
    uint64_t seed, micro_rows, micro_cols;
    char *worst, *growth;
    char *dataflow; /* drt: merged or outer-product */
    char *order;   /* which level is sized first: default, outer-first, inner-first */
    char **levels; /* the levels the strategy sizes */
    unsigned levels_count;
} rs_strategy;

typedef struct rs_kv {
    char *key, *value;
} rs_kv;

typedef struct rs_template {
    char *name;
    rs_kv *options; /* as written; the template checks them */
    unsigned options_count;
} rs_template;

typedef struct rs_spec {
    char *name, *file, *technology;
    char **energy_tables;
    unsigned energy_tables_count;
    rs_workload workload;
    rs_level *levels;
    unsigned levels_count;
    rs_compute compute;
    rs_strategy strategy;
    rs_template template_;
    char *timing; /* architecture.timing; NULL for the default (roofline) */
} rs_spec;

/* Where each value came from while the tree is built (NULL: not wanted). */
typedef struct rs_origins {
    const tessel_allocator *alloc;
    tessel_spec_origin *items;
    size_t count, capacity;
    int failed; /* an allocation failed */
} rs_origins;

/* Builds the tree of s (every string through a); origins may be NULL. */
int rs_build(const tessel_spec *s, const tessel_allocator *a, rs_spec **out, rs_origins *origins);
/* Frees a tree built by rs_build. */
void rs_free(rs_spec *r, const tessel_allocator *a);
/* The schema of rs_spec (resolved_schema.c). */
const void *rs_schema(void);
/* Reads resolved-spec YAML through the schema into *out (free with
 * rs_free): TESSEL_EPARSE when it is not one, TESSEL_ENOMEM. */
int rs_load(const char *yaml, size_t len, const tessel_allocator *a, rs_spec **out,
            tessel_diag *diag);
/* The spec r describes, in the vocabulary hand-written specs use
 * (docs/spec.md), so that the ordinary reader checks and loads it
 * (resolved_read.c). *text is allocated through a. */
int rs_spec_text(const rs_spec *r, const tessel_allocator *a, char **text, size_t *len);
/* Whether a parsed YAML root is a resolved spec (tessel spec, tessel map
 * -o) rather than a hand-written one: it has `levels` and `file` at the
 * top and no `architecture`. */
int rs_is_resolved(const tessel_yaml_node *root);
/* A resolved spec (the file at path, or data[0..size) when data is not
 * NULL) read through the schema and parsed again as the hand-written
 * spec rs_spec_text writes, into *out. */
int rs_reread(const char *path, const void *data, size_t size, const tessel_allocator *a,
              tessel_yaml_doc **out, tessel_diag *diag);

#endif

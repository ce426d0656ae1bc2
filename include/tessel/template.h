/* tessel — accelerator templates: accelerators whose own buffer policy
 * decides their traffic (docs/semantics.md rule 5) instead of uniform tiles.
 * Module `template`: depends on `strategy` and `model` (and through them
 * `drt`, `stats`, `spec`, `tensor`, `base`). The spec names one with `template: NAME` and passes
 * its knobs in `template_options` (spec.h's tessel_spec_template).
 *
 *   matraptor   row-wise product (Gustavson) in C2SR: A read once, a row of
 *               B fetched from DRAM for every nonzero of A that selects it,
 *               Z written once as its rows complete (drt §5.2.2, gamma §7)
 *   outerspace  outer product: a multiply phase that writes every partial
 *               product to memory, a merge phase that reads them back and
 *               writes Z (drt §5.2.2, gamma §2.2, §7)
 *   gamma       Gustavson with a FiberCache: B rows through an LRU cache of
 *               whole rows, partial rows merged with radix R and spilled
 *               beyond it; optional affinity row reordering and selective
 *               tiling, LRU or 16-way set-associative banked (gamma §3-5);
 *               stat: Che's characteristic-time approximation of LRU
 *   sparsepipe  iterative SpMV apps y = f(A x), N iterations, under the
 *               OEI dataflow (sparsepipe §III-IV): pairs of iterations
 *               share one pass over A; the nonzeros the IS core needs
 *               later are held in the buffer (farthest-first eviction,
 *               re-fetched when evicted); vectors stay on chip between
 *               the OS, e-wise and IS stages. Options: app (pagerank |
 *               bfs | sssp | label | cg), iterations, buffer_bytes,
 *               block, subtensor, frontier, baseline; the model and its
 *               choices: src/template/sparsepipe.c; figures (Table I
 *               share of A on chip, per-iteration and baseline bytes):
 *               tessel_template_sparsepipe below
 *   extensor    ExTensor's uniform-tile hierarchy (DRAM -> LLB -> PE
 *               buffers) with the tiles of one tiling strategy, chosen by
 *               template_options.variant: n (ExTensor-N, conservative
 *               tiles sized as if dense; the default), p (ExTensor-P,
 *               prescient), ob (ExTensor-OB, Swiftiles + Tailors
 *               overbooking), drt (DRT at the LLB and again inside each
 *               LLB task for the PE buffers, template_options.drt_levels:
 *               all, the default; llb: prescient tiles in the buffers
 *               below; see src/template/extensor.c). The uniform
 *               variants size every buffer level (or the spec's
 *               strategy_options.levels); mapping.strategy must be unset.
 *               Module `template` therefore also depends on `strategy`.
 *
 * Both have an exact path (from the data) and a statistical one (from the
 * stat estimator's statistics, without the data). Implemented in
 * src/template/ (the closed forms and their sources: template_traffic.c).
 *
 * template_options (both optional):
 *   output_format: coo | csr    Z as written to memory; coo (default) is
 *                               value + row + column per nonzero, as the
 *                               DRT simulator writes it; csr a row offset
 *                               per row instead of the row coordinate
 *   partial_format: coo | csr   outerspace only: the partial products;
 *                               csr (default) is one partial row per
 *                               nonzero of A that meets a non-empty row of
 *                               B (value + column per product, an offset
 *                               per partial row), coo value + row + column
 *                               per product
 * Workloads: SpMSpM Z[i,j] = A[i,k] * B[k,j] in any index names and mode
 * orders, and SpMV (x as a one-column B). */
#ifndef TESSEL_TEMPLATE_H
#define TESSEL_TEMPLATE_H

#include "tessel/model.h"
#include "tessel/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tessel_sparsepipe_figures tessel_sparsepipe_figures;

typedef enum tessel_template_kind {
    TESSEL_TEMPLATE_NONE = 0,
    TESSEL_TEMPLATE_EXTENSOR,
    TESSEL_TEMPLATE_GAMMA,
    TESSEL_TEMPLATE_OUTERSPACE,
    TESSEL_TEMPLATE_MATRAPTOR,
    TESSEL_TEMPLATE_SPARSEPIPE,
    TESSEL_TEMPLATE_COUNT
} tessel_template_kind;

/* What a template's evaluate function gets: the spec, the data and/or
 * statistics, and which estimator prices it. */
typedef struct tessel_template_call {
    const tessel_spec *spec;
    const tessel_workload_data *data;
    const tessel_stat_data *stats;
    tessel_strategy_estimator est;
    const tessel_allocator *alloc;
} tessel_template_call;

/* Fills *out; *choice (extensor: the tiles its strategy decided) and *fig
 * (sparsepipe's own figures) may be NULL and are left alone by templates
 * that have none. */
typedef int (*tessel_template_eval_fn)(const tessel_template_call *call, tessel_result *out,
                                      tessel_strategy_choice *choice,
                                      tessel_sparsepipe_figures *fig, tessel_diag *diag);

typedef enum tessel_template_option_type {
    TESSEL_TEMPLATE_OPT_CHOICE = 0, /* one of values[] */
    TESSEL_TEMPLATE_OPT_SIZE,       /* bytes, with a unit ("3MiB") */
    TESSEL_TEMPLATE_OPT_INT,
    TESSEL_TEMPLATE_OPT_REAL
} tessel_template_option_type;

/* One key of template_options. */
typedef struct tessel_template_option {
    const char *key;
    tessel_template_option_type type;
    const char *const *values; /* CHOICE: the accepted words (nvalues of them) */
    unsigned nvalues;
    const char *fallback;      /* the default, as text */
    const char *help;
} tessel_template_option;

/* One template: the single list of templates, their options, what they
 * support and how they are evaluated (template_desc.c). The option
 * readers check template_options against `options`; tessel_point_evaluate
 * calls `evaluate`; the CLI takes names and option lists from here. */
typedef struct tessel_template_desc {
    tessel_template_kind kind;
    const char *name;
    const char *summary;
    const tessel_template_option *options;
    unsigned noptions;
    unsigned estimators; /* bit e: tessel_strategy_estimator e is modelled */
    /* bit k: tessel_strategy_kind k runs under it (extensor: its variants'
     * strategies); 0: its own buffer policy decides, no strategy applies */
    unsigned strategies;
    tessel_template_eval_fn evaluate;
} tessel_template_desc;

/* The descriptor of template k; NULL for TESSEL_TEMPLATE_NONE and out of
 * range. */
const tessel_template_desc *tessel_template_describe(tessel_template_kind k);

/* "none", "extensor", ...; -1 if unknown. */
int tessel_template_from_name(const char *name);
const char *tessel_template_name(tessel_template_kind k);
/* The spec's template (TESSEL_TEMPLATE_NONE also for a spec built in code). */
tessel_template_kind tessel_template_of(const tessel_spec *spec);

/* The design's traffic under its template: exact from `data`, or (stats
 * non-NULL and data NULL) statistical from the stat estimator's statistics.
 * Fills the same tessel_result fields as the estimators, with the same
 * meaning (levels, tensors, bytes, compulsory_bytes, dram_bytes, macs,
 * output_nnz, estimator). TESSEL_EUNSUPPORTED for templates or workloads
 * not modelled (the message says which); TESSEL_EINVAL naming the
 * template_options key for a bad option. */
int tessel_template_run(const tessel_spec *spec, const tessel_workload_data *data,
                        const tessel_stat_data *stats, const tessel_allocator *a,
                        tessel_result *out, tessel_diag *diag);

/* Sparsepipe's own figures for one run (beside the tessel_result). Bytes
 * are DRAM bytes in level 1's widths; nonzero counts are estimates on the
 * stat path. */
struct tessel_sparsepipe_figures {
    char app[16];
    uint64_t iterations;
    uint64_t pairs;          /* pairs of iterations fused by OEI (0: none) */
    uint64_t rows, nnz;      /* of A (square) */
    uint64_t subtensor;      /* rows of A per OEI step */
    uint64_t steps;          /* OEI steps per pass over A */
    uint64_t block;          /* block edge of A's format (1: unblocked) */
    double nonzero_blocks;   /* of A at that block size */
    double frontier;         /* active share of the vector per iteration */
    double hold_max;         /* nonzeros of A pending between their OS and IS
                                use, unbounded buffer: most over the steps */
    double hold_avg;         /* and the mean (sparsepipe Table I) */
    double hold_capacity;    /* nonzeros the buffer can hold (INFINITY:
                                unbounded) */
    double refetched;        /* per pair: nonzeros evicted, re-fetched */
    double onchip_fraction;  /* share of A's second use served from the
                                buffer (0 when no pair is fused) */
    uint64_t a_pass_bytes;   /* A read once in its format */
    uint64_t pair_bytes;     /* one fused pair of iterations */
    uint64_t single_bytes;   /* one iteration not fused */
    uint64_t total_bytes;    /* all iterations (= the result's dram_bytes) */
    uint64_t baseline_iteration_bytes; /* one iteration without inter-
                                          operator reuse */
    uint64_t baseline_total_bytes;
    double saving;           /* 1 - total / baseline total */
};

/* tessel_template_run for a sparsepipe spec, also filling *fig (may be
 * NULL). TESSEL_EINVAL when the spec's template is not sparsepipe. */
int tessel_template_sparsepipe(const tessel_spec *spec, const tessel_workload_data *data,
                               const tessel_stat_data *stats, const tessel_allocator *a,
                               tessel_result *out, tessel_sparsepipe_figures *fig,
                               tessel_diag *diag);

/* Sets o->own_base to the base grid the spec's template reads its
 * statistics on when it needs one of its own (sparsepipe: its blocks, so
 * that the nonzero blocks are counted, not estimated); other specs and a
 * caller's --base (o->base) are left alone. Callers collect through
 * tessel_point_stats_create (point.h), which calls it. */
void tessel_template_stat_options(const tessel_spec *spec, tessel_stat_options *o);

/* extensor: the strategy its variant runs ("conservative", "prescient",
 * "swiftiles", "drt"); NULL when the spec's template is not extensor or
 * its variant is bad (tessel_template_extensor_run then says why). */
const char *tessel_template_extensor_strategy(const tessel_spec *spec);

/* tessel_template_run for an extensor spec with the strategy module's
 * inputs (the data and/or statistics; with the data, the strategies
 * collect statistics on a base grid fine enough for their tiles), also
 * filling *choice (may be NULL) with the tiles decided. TESSEL_EINVAL
 * naming template_options.variant for a bad variant, mapping.strategy
 * when the spec also names a strategy. */
int tessel_template_extensor_run(const tessel_spec *spec, const tessel_strategy_inputs *in,
                                 tessel_strategy_estimator est, const tessel_allocator *a,
                                 tessel_result *out, tessel_strategy_choice *choice,
                                 tessel_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

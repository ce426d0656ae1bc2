/* tessel — one design point: which model runs for a spec, in one place.
 * Module `point`: depends on `template` (and through it `strategy`, `drt`,
 * `model`, `stats`, `spec`, `tensor`, `base`). tessel run, compare, map and
 * sweep all evaluate a design point through tessel_point_evaluate, so the
 * choice between the estimators (exact, stat, analytic), the templates
 * (template.h's descriptors) and the tiling strategies (strategy.h) is made
 * here and nowhere else:
 *
 *   analytic                 tessel_model_analytic (density models, no data;
 *                            templates and strategies do not apply)
 *   template: NAME           the template's descriptor evaluates it
 *                            (tessel_template_describe(...)->evaluate)
 *   a strategy, or the       tessel_strategy_run: the strategy decides the
 *   decisions asked for      tiles, then the estimator prices them
 *   fixed mapping            the estimator on the mapping as written (stat:
 *                            with the per-shape cache when given)
 *
 * The result holds the traffic (tessel_result), the tiles decided (when a
 * strategy or the extensor template decided them), the rule 4 feasibility
 * verdict (docs/semantics.md rule 4) and the name of the strategy that ran;
 * energy and cycles are priced from the result by report.h
 * (tessel_report_point_build) with the spec's energy tables. */
#ifndef TESSEL_POINT_H
#define TESSEL_POINT_H

#include "tessel/template.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tessel_point_estimator {
    TESSEL_POINT_EXACT = 0, /* from the data (tessel_model_exact and the exact paths) */
    TESSEL_POINT_STAT,      /* from the statistics (and the data where a strategy
                               needs it to decide) */
    TESSEL_POINT_ANALYTIC   /* closed form from the spec's density models */
} tessel_point_estimator;

/* What to evaluate. Only spec and estimator are required; the inputs an
 * estimator needs and does not get are an error naming them. */
typedef struct tessel_point_request {
    const tessel_spec *spec;
    tessel_point_estimator estimator;
    const tessel_workload_data *data;   /* the bound tensors (exact; stat strategies) */
    const tessel_stat_data *stats;      /* the statistics (stat) */
    const tessel_drt_stats *drt_stats;  /* strategy drt under stat (else built from data) */
    tessel_strategy_shared *shared;     /* statistics strategies collect once and reuse
                                           across requests (tessel compare); may be NULL */
    tessel_stat_cache *stat_cache;      /* fixed mapping under stat: per-shape summaries
                                           (sweeps, the mapper); may be NULL */
    /* 1: fill the result's choice for a fixed mapping too (the strategy
     * module measures its tiles' utilisation and overbooking, as tessel
     * compare reports them) */
    int decisions;
    /* 1: a strategy decides its tiles as for the stat estimator, then the
     * exact estimator prices those tiles (tessel map --verify: the stat
     * winner's tiles, exactly); drt decides at run time, so it runs exact */
    int decide_as_stat;
    tessel_progress_fn progress;        /* exact, fixed mapping: per-level progress */
    void *progress_ud;
    const tessel_allocator *alloc;      /* NULL: the default allocator */
    const tessel_exact_options *exact;  /* exact, fixed mapping: walk options; NULL default */
} tessel_point_request;

typedef struct tessel_point_result {
    tessel_result result;               /* traffic, MACs, nnz(Z): energy and cycles inputs */
    int has_choice;                     /* choice holds what a strategy decided */
    tessel_strategy_choice choice;      /* the tiles decided */
    int has_sparsepipe;                 /* template sparsepipe: its own figures */
    tessel_sparsepipe_figures sparsepipe;
    /* The strategy column: "fixed", the spec's strategy, or the one the
     * extensor template's variant runs. */
    char strategy[32];
    /* Rule 4: 0 when a tile overflows its partition under a strategy that
     * does not overbook on purpose (everything but swiftiles);
     * overflow_level / overflow_tensor name the outermost such tile. */
    int feasible;
    unsigned overflow_level, overflow_tensor;
} tessel_point_result;

/* The model tessel_point_evaluate runs for req, told without running it
 * (a sweep memoises only the fixed-mapping stat path, which is cheap). */
typedef enum tessel_point_route {
    TESSEL_POINT_ROUTE_ANALYTIC = 0, /* tessel_model_analytic */
    TESSEL_POINT_ROUTE_TEMPLATE,     /* the template's descriptor */
    TESSEL_POINT_ROUTE_STRATEGY,     /* tessel_strategy_run (or map --verify's choose + exact) */
    TESSEL_POINT_ROUTE_FIXED         /* the estimator on the mapping as written */
} tessel_point_route;

tessel_point_route tessel_point_route_of(const tessel_point_request *req);

/* Whether req runs DRT's stat walk, which prices from DRT's own
 * statistics (req->drt_stats; built from the data on every call when
 * NULL): a caller evaluating several points on the same data builds them
 * once with tessel_drt_stats_create. */
int tessel_point_wants_drt_stats(const tessel_point_request *req);

/* 1 when spec's strategy decides its tiles from statistics on a base grid
 * it collects for itself when not given (d2t2; conservative sizing from the
 * statistics' worst tile), so that under stat it decides as under exact
 * only when the caller lets it collect them (req->stats NULL); given
 * statistics set the result's stat_design_may_differ. */
int tessel_point_decides_on_stats(const tessel_spec *spec);

/* Evaluates req into *out (overwritten). TESSEL_EINVAL for a request
 * missing an input its estimator needs; otherwise the estimators',
 * templates' and strategies' own errors, with *diag filled. */
int tessel_point_evaluate(const tessel_point_request *req, tessel_point_result *out,
                          tessel_diag *diag);

/* The statistics a design point of `spec` reads under the stat estimator
 * (req->stats): tessel_stat_data_create with `opt` (NULL: the defaults)
 * and, when the spec's template reads them on a base grid of its own
 * (sparsepipe: its blocks; tessel_template_stat_options), that grid unless
 * opt gives a base (--base). tessel run, compare, map, sweep and the
 * bindings collect through it, so that no caller decides the grid. */
int tessel_point_stats_create(const tessel_spec *spec, const tessel_workload_data *data,
                              const tessel_stat_options *opt, const tessel_allocator *a,
                              tessel_stat_data **out, tessel_diag *diag);

/* Releases what *out holds (nothing is allocated today; callers still pair
 * every evaluate with a free so a result may own memory later). */
void tessel_point_result_free(tessel_point_result *out);

/* The strategy column of spec's design points: the extensor template's
 * variant's strategy, else "fixed" or the spec's strategy. */
const char *tessel_point_strategy(const tessel_spec *spec);

/* Rule 4: 1 when `strategy` overbooks its buffers on purpose, so its
 * overflowing tiles keep the point feasible: swiftiles (and the
 * ExTensor-OB variant, whose strategy column is swiftiles); NULL is the
 * fixed mapping. The one list every command and the sweep consult. */
int tessel_point_may_overbook(const char *strategy);

/* Rule 4 verdict of a result under `strategy` (see feasible above): 1
 * feasible; else 0 with the outermost overflowing level and tensor. The
 * sweep's `feasible` column and --strict in run, compare and map all come
 * from it. */
int tessel_point_feasible(const tessel_result *r, const char *strategy, unsigned *level,
                          unsigned *tensor);

#ifdef __cplusplus
}
#endif
#endif

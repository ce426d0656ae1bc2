/* tessel — tiling strategies: who decides the tile shapes of a design.
 * Module `strategy`: depends on `drt` and `model` (and through them
 * `stats`, `spec`, `tensor`, `base`). The spec names the strategy
 * (`mapping.strategy`, spec.h's tessel_spec_strategy); this module turns it
 * into tiles per level and then estimates the design with them.
 *
 *   fixed         the mapping's tiles as written
 *   conservative  S-U-C: the largest uniform tile of the mapping's aspect
 *                 ratio whose worst tile fits its partition, the worst
 *                 tile read off the statistics' base grid (edges are
 *                 multiples of it); `worst: dense` sizes for dense tiles
 *                 instead (ExTensor-N, tailors §5.2)
 *   prescient     the same knowing every tile exactly, at any edge (the
 *                 data's tile grid at each candidate; ExTensor-P)
 *   swiftiles     tailors §4.2: initial tile from the average density
 *                 (eq. 2), k / y sampled tiles, their (1 - y) occupancy
 *                 quantile scaled to the partition (eq. 3); overflowing
 *                 tiles are costed with Tailors streaming (rule 4)
 *   drt           dynamic reflexive tiling (module drt, drt §3-4), at every
 *                 buffer level (drt §4.1: hierarchically, outer first)
 *   d2t2          d2t2 §5.2: shapes {i: T RF, k: T / RF, j: T RF} around the
 *                 conservative T (eq. 21), inner edges grown by TileFactor
 *                 = partition / MaxTile (eq. 22), the best by the stat
 *                 estimator's DRAM traffic
 *
 * Implemented in src/strategy/: strategy.c (dispatch, reports),
 * uniform.c (conservative, prescient), swiftiles.c, d2t2.c. */
#ifndef TESSEL_STRATEGY_H
#define TESSEL_STRATEGY_H

#include <stdint.h>

#include "tessel/drt.h"
#include "tessel/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tessel_strategy_kind {
    TESSEL_STRATEGY_FIXED = 0,
    TESSEL_STRATEGY_CONSERVATIVE,
    TESSEL_STRATEGY_PRESCIENT,
    TESSEL_STRATEGY_SWIFTILES,
    TESSEL_STRATEGY_DRT,
    TESSEL_STRATEGY_D2T2,
    TESSEL_STRATEGY_COUNT
} tessel_strategy_kind;

/* "fixed", "conservative", ...; -1 if unknown. */
int tessel_strategy_from_name(const char *name);
const char *tessel_strategy_name(tessel_strategy_kind k);

/* Whether spec keeps its mapping's tiles as written (strategy "fixed", or
 * none named in a spec built in code). */
int tessel_strategy_is_fixed(const tessel_spec *spec);

/* Which estimator evaluates the design once the tiles are chosen. */
typedef enum tessel_strategy_estimator {
    TESSEL_STRATEGY_EXACT = 0,
    TESSEL_STRATEGY_STAT
} tessel_strategy_estimator;

/* What a strategy decided. Rates and utilisations are over the non-empty
 * tiles of the inputs at the levels the strategy sized (NAN when the
 * strategy does not size uniform tiles or they cannot be counted). */
typedef struct tessel_strategy_choice {
    tessel_strategy_kind kind;
    uint32_t levels;  /* bit l: level l was sized */
    uint64_t tile[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_INDICES]; /* 0 = whole mode */
    char shape[160];  /* "LLB i:64,k:1024,j:1024 PEB i:8,k:16,j:64"; drt: mean edges */
    double overbooking_target; /* swiftiles: y; otherwise 0 */
    double overbooking_rate;   /* fraction of non-empty input tiles larger than their partition */
    double buffer_utilization; /* mean footprint / partition of non-empty input tiles (capped at 1) */
    uint64_t sampled_tiles;    /* swiftiles: tiles whose occupancy was sampled */
    uint64_t candidates;       /* tile shapes the strategy looked at */
    double seconds;            /* time to decide */
    double cpu_seconds;        /* CPU time of the deciding thread (a loaded machine stretches seconds) */
    /* d2t2: the stat estimator's DRAM bytes for the chosen shape */
    double predicted_dram_bytes;
} tessel_strategy_choice;

/* The inputs a strategy may look at. data may be NULL (saved statistics:
 * prescient and the exact estimator then fail with TESSEL_EINVAL); stats
 * may be NULL (conservative and d2t2 collect what they need from data with
 * the default stat options). */
typedef struct tessel_strategy_inputs {
    const tessel_workload_data *data;
    const tessel_stat_data *stats;
    const tessel_drt_stats *drt_stats; /* drt with the stat estimator (else built from data) */
} tessel_strategy_inputs;

/* Decides the tiles of `spec`'s strategy for estimator `est` (stat with
 * the data: as exact; without it, tiles on the statistics' base grid). *out is filled on success; drt decides
 * at run time, so its choice only names it (see tessel_strategy_run). */
int tessel_strategy_choose(const tessel_spec *spec, const tessel_strategy_inputs *in,
                           tessel_strategy_estimator est, const tessel_allocator *a,
                           tessel_strategy_choice *out, tessel_diag *diag);

/* A copy of spec's structure (sharing its documents: spec must outlive
 * it, and it is never freed) with the chosen tiles written in. */
void tessel_strategy_apply(const tessel_spec *spec, const tessel_strategy_choice *c,
                           tessel_spec *out);

/* Decide and estimate: the design's traffic under its strategy with the
 * given estimator. choice may be NULL. */
int tessel_strategy_run(const tessel_spec *spec, const tessel_strategy_inputs *in,
                        tessel_strategy_estimator est, const tessel_allocator *a,
                        tessel_result *out, tessel_strategy_choice *choice, tessel_diag *diag);

/* Statistics one decision collects and the next one reuses: the
 * strategies' own base-grid statistics (one set per base edge) and DRT's
 * micro-tile statistics, for several strategies run on the same spec's
 * einsum and the same data (tessel compare's rows). One thread at a time. */
typedef struct tessel_strategy_shared tessel_strategy_shared;
int tessel_strategy_shared_create(const tessel_allocator *a, tessel_strategy_shared **out);
void tessel_strategy_shared_free(tessel_strategy_shared **s);

/* tessel_strategy_run sharing what it collects through `shared` (NULL:
 * tessel_strategy_run). Results equal tessel_strategy_run's. */
int tessel_strategy_run_shared(const tessel_spec *spec, const tessel_strategy_inputs *in,
                               tessel_strategy_shared *shared, tessel_strategy_estimator est,
                               const tessel_allocator *a, tessel_result *out,
                               tessel_strategy_choice *choice, tessel_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

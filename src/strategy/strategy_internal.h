/* Private to module `strategy`. */
#ifndef TESSEL_STRATEGY_INTERNAL_H
#define TESSEL_STRATEGY_INTERNAL_H

#include "tessel/strategy.h"

#define STRAT_MAX_INPUTS 3u
#define STRAT_NX TESSEL_SPEC_MAX_INDICES

/* An input of the workload as the strategies see it. */
typedef struct strat_input {
    unsigned tensor;              /* workload tensor number */
    unsigned order;               /* modes (1 .. 3) */
    int index[3];                 /* workload index of each mode (-1: none) */
    uint64_t dims[3];
    uint64_t nnz;
    const tessel_tensor *data;    /* NULL with saved statistics */
    const tessel_tile_grid *base; /* the statistics' base grid, or NULL */
} strat_input;

/* What the candidates of one decision share (strategy.c): the worst tile
 * of an input at a shape, read off a grid derived from the base grid,
 * is found once per (input, shape, rule) however many candidates and
 * levels ask for it. */
#define STRAT_WORST_MEMO 4096u
typedef struct strat_worst_entry {
    unsigned input, worst;
    uint64_t shape[3];
    uint64_t max;
} strat_worst_entry;

struct d2t2_memo; /* d2t2.c: the candidates priced so far */
struct d2t2_bound_memo; /* d2t2_bound.c: what the bounds read off the base grids */

typedef struct strat_ctx {
    const tessel_spec *spec;
    const tessel_allocator *alloc;
    tessel_diag *diag;
    tessel_strategy_estimator est;
    const tessel_workload_data *data; /* NULL with saved statistics */
    const tessel_stat_data *stats; /* given, or own_stats */
    tessel_stat_data *own_stats;
    int collected; /* the statistics are the strategy's own (own_stats or kept in shared) */
    unsigned nidx;
    uint64_t extent[STRAT_NX];
    unsigned nin;
    strat_input in[STRAT_MAX_INPUTS];
    strat_worst_entry *worst; /* STRAT_WORST_MEMO entries, or NULL (no memo) */
    unsigned nworst;
    struct d2t2_memo *memo;
    struct d2t2_bound_memo *bound; /* NULL: none yet (d2t2_bound_forget frees it) */
    tessel_strategy_shared *shared; /* NULL: nothing kept past the decision */
    int outer_first;   /* levels sized outermost first (strat_levels) */
    uint64_t outer[STRAT_NX]; /* outer first: the enclosing level's edges the
                                 level being sized must divide (0: none) */
} strat_ctx;

/* strategy.c: the statistics kept across decisions. */
#define STRAT_SHARED_MAX 8u
struct tessel_strategy_shared {
    const tessel_allocator *alloc;
    const tessel_workload_data *data; /* what they were collected from */
    unsigned n;
    uint64_t edge[STRAT_SHARED_MAX];
    tessel_stat_data *stats[STRAT_SHARED_MAX];
    tessel_drt_stats *drt;
};

/* Per-index tile edges of one level (0 = whole mode). */
typedef struct strat_tiles {
    uint64_t t[STRAT_NX];
} strat_tiles;

/* strategy.c */
int strat_ctx_init(strat_ctx *c, const tessel_spec *spec, const tessel_strategy_inputs *in,
                   tessel_strategy_estimator est, const tessel_allocator *a, tessel_diag *diag);
void strat_ctx_free(strat_ctx *c);
/* Empties the worst-tile memo (the base grid changed). */
void strat_worst_forget(strat_ctx *c);
int strat_need_stats(strat_ctx *c);
/* (Re)collects the strategy's own statistics on an edge x edge base grid. */
int strat_collect_stats(strat_ctx *c, uint64_t edge);
/* Partition of input i at level l, bytes (0 = unbounded). */
uint64_t strat_partition(const strat_ctx *c, unsigned l, unsigned tensor);
/* Input i's tile shape (per mode) for per-index tiles t. */
void strat_shape(const strat_ctx *c, const strat_input *in, const strat_tiles *t, uint64_t *shape);
/* Bytes of input i's tile of `shape` holding n nonzeros in level l's format. */
uint64_t strat_tile_bytes(const strat_ctx *c, unsigned l, const strat_input *in,
                          const uint64_t *shape, uint64_t n);
/* The largest n whose tile fits `bytes` (0 if none). */
uint64_t strat_capacity_nnz(const strat_ctx *c, unsigned l, const strat_input *in,
                            const uint64_t *shape, uint64_t bytes);
/* The grid of input i at `shape`: from its data, else derived from the
 * base grid (shape must then be a multiple of it or whole); *out NULL when
 * neither is possible. */
int strat_grid(const strat_ctx *c, const strat_input *in, const uint64_t *shape, int exact,
               tessel_tile_grid **out);
/* Levels the strategy sizes, in the order it sizes them: innermost first,
 * or outermost first (c->outer_first: mapping.strategy_options.order, by
 * default the order of the strategy's paper). */
unsigned strat_levels(const strat_ctx *c, unsigned *levels);
/* The smallest edge step of index x for the estimator: 1, or the
 * statistics' base grid under stat without the data (a tile off the grid
 * has no worst tile there; with the data, grids come from it and stat
 * decides as exact does). */
uint64_t strat_granule(const strat_ctx *c, unsigned x);
/* The base grid's step along index x (1 without statistics). */
uint64_t strat_base_granule(const strat_ctx *c, unsigned x);
/* The aspect ratio of level l (the mapping's tiles, or square). */
void strat_ratio(const strat_ctx *c, unsigned l, double *ratio);
/* Tiles at scale s: ratio[x] * s rounded down to a multiple of gran[x],
 * at least gran[x], whole at the extent. */
void strat_tiles_at(const strat_ctx *c, const double *ratio, const uint64_t *gran, double s,
                    strat_tiles *out);
double strat_scale_max(const strat_ctx *c, const double *ratio);

/* Whether spec's strategy sizes its outermost level first. */
int strat_outer_first_of(const tessel_spec *spec);
/* Edge e of index x made to nest in the enclosing level sized before it
 * (outer first): the largest divisor of the enclosing edge <= e, a
 * multiple of g where one is; e itself when nothing encloses x. */
uint64_t strat_nest_edge(const strat_ctx *c, unsigned x, uint64_t e, uint64_t g);
/* The same for every index of t (0 = whole mode). */
void strat_nest(const strat_ctx *c, strat_tiles *t);

/* q / f for every q < n, a table (NULL without memory; freed by the
 * caller): base-grid coordinates made coarser tiles' without a division
 * per tile (d2t2 reads the base grid for a hundred shapes per decision). */
uint64_t *strat_div_table(const strat_ctx *c, uint64_t n, uint64_t f);

/* Least common multiple (edge steps that several constraints share). */
uint64_t strat_lcm(uint64_t a, uint64_t b);

/* uniform.c: conservative and prescient. */
int strat_uniform(strat_ctx *c, int prescient, tessel_strategy_choice *out);
/* The largest scale whose worst tiles fit level l (binary search on a
 * predicate over the inputs). worst: 0 dense, 1 statistics' base grid,
 * 2 exact grid. */
int strat_uniform_level(strat_ctx *c, unsigned l, const double *ratio, const uint64_t *gran,
                        int worst, strat_tiles *out, uint64_t *candidates);
enum { WORST_DENSE = 0, WORST_STATS = 1, WORST_EXACT = 2 };
int strat_worst_fits(strat_ctx *c, unsigned l, const strat_tiles *t, int worst, int *fits);
/* Bytes of the output's tile under tiles t at level l were it dense (its
 * largest; 0, not known, beyond 3 modes). */
uint64_t strat_output_dense_bytes(const strat_ctx *c, unsigned l, const strat_tiles *t);
/* The most nonzeros in one tile of `shape` (dense: its area). */
int strat_worst_occupancy(strat_ctx *c, const strat_input *in, const uint64_t *shape, int worst,
                          uint64_t *out);
/* Level l's edge steps (estimator granule, base grid when base_grid, and
 * multiples of the inner levels' tiles when those are sized first); with
 * outer levels sized first, also sets c->outer to the enclosing tiles. */
void strat_level_granules(strat_ctx *c, unsigned l, int base_grid,
                          const tessel_strategy_choice *ch, uint64_t *gran);

/* swiftiles.c */
int strat_swiftiles(strat_ctx *c, tessel_strategy_choice *out);

/* d2t2.c */
int strat_d2t2(strat_ctx *c, tessel_strategy_choice *out);
/* The base grid edge d2t2 prices on: *edge (the grid c's inputs have
 * now, which fits), or finer when eq. 21's shapes need it. */
int strat_d2t2_base_edge(strat_ctx *c, uint64_t *edge);

/* The price d2t2 gives tiles t of level l (the outer levels whole, the
 * inner ones as the mapping has them): bytes across level l's boundary,
 * priced in full (tests hold d2t2_bound below it). */
int strat_d2t2_price(strat_ctx *c, unsigned l, const strat_tiles *t, double *bytes);

/* d2t2_bound.c: a lower bound (0: none) of the bytes across level l's
 * boundary under tiles t, below the price d2t2.c would compute. */
int d2t2_bound(strat_ctx *c, unsigned l, const strat_tiles *t, double *lb);
/* Frees what the bounds kept (the decision ended, or the base grid changed). */
void d2t2_bound_forget(strat_ctx *c);

#endif

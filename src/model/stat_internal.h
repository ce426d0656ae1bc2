/* Private to the statistical estimator (src/model/stat*.c). */
#ifndef TESSEL_MODEL_STAT_INTERNAL_H
#define TESSEL_MODEL_STAT_INTERNAL_H

#include "exact_internal.h"

/* The statistics of one input matrix the stat estimator reads: the base
 * tile grid, the D2T2 statistics and the nonzeros per row and column.
 * Nothing here is a pass over the data once collected. */
typedef struct stat_input {
    /* For a 3-tensor T[i,x,k] (TTM), `base` is unfolded: rows are base
     * cells (i, x), i-major, columns k; grid is the 3-mode base grid and
     * d2t2 is NULL. */
    tessel_tile_grid *grid;   /* base grid */
    struct stat_grid *base;   /* the same as compressed tile rows */
    tessel_d2t2_stats *d2t2;  /* Corrs (eq. 11) */
    uint64_t *line_nnz[2];    /* nonzeros per row [0] and per column [1] (3-tensor: per k) */
    uint64_t dims[2];
    /* non-empty rows per base tile and per row of base tiles (matrices;
     * NULL for a 3-tensor or a .tsd before version 7): per-tile prefix
     * counts for the lists that read them and tiled-csf (stat_tiledfmt.c) */
    tessel_tile_rows *rows;
    /* the same for its columns (tessel_tile_grid_cols), indexed by the
     * base grid's own tiles (its strips the columns of tiles): an
     * SpMSpM's A, whose columns are the reduction's k (stat_outspill.c's
     * step count, which walks them through a transient transpose of the
     * base grid; NULL: not collected, a .tsd before version 8) */
    tessel_tile_rows *cols;
    /* per base tile its nonzeros whose transpose is one too
     * (tessel_tile_grid_sym), for an SpMSpM input that is both A and B
     * (stat_outspill.c's step count on diagonal tiles; NULL: not collected,
     * not square, or a .tsd before version 10) */
    tessel_tile_sym *sym;
} stat_input;

/* stat_tiledfmt.c: whether a level of spec stores a tensor in a format
 * whose price reads a tile's rows (a per-rank list that reads a prefix
 * count, tiled-csf): then the statistics collect them. */
int stat_spec_reads_rows(const tessel_spec *spec);

/* A seeded sample of the output's rows, multiplied out symbolically once
 * per input pair: every nonzero (i, j) of a sampled row of Z = A B (TTM:
 * (i, x, j) of a sampled slice of Y = T x_k M, x being T's second mode) with
 * the smallest k that produces it. Rows are drawn with probability
 * proportional to their predicted nonzeros over the square root of their
 * multiplies (rows above the threshold always, weight 1), so the sample
 * costs a set fraction of the multiplies; each other nonzero carries its
 * row's ratio-estimator weight (stat_output.c), so that the weights sum to
 * the estimated nonzeros of Z and any sum of them over a set of cells
 * estimates that set's nonzeros. The nonzeros are kept per base cell (i /
 * base[0], j / base[1], k / base[2]): tile edges are multiples of the base
 * edges, so any tile shape reads off from the cells alone which output
 * tile holds each nonzero and at which reduction step it first appears. */
typedef struct stat_output_sample {
    uint64_t rows, sampled_rows;
    int whole;            /* every row with a nonzero is in, with weight 1 */
    double flops, sampled_flops;
    double nnz;           /* estimated nonzeros of Z (sum of the weights) */
    double nnz_stderr;    /* its standard error: 0 when whole, -1 when not estimated */
    uint64_t sampled_nnz;
    uint64_t base[4];     /* cell edges along i, j, k and x (TTM: the output's second mode) */
    uint64_t ncells;      /* sorted by (i, x, j, k) cell */
    uint32_t *ci, *cx, *cj, *ck;
    /* weighted nonzeros per cell, summed in double and rounded once to
     * float (relative error 2^-24, far below the sample's; integers up to
     * 2^24, so a whole sample's counts are exact): 4 of the 20 bytes a
     * cell took (docs/models/stat.md, "The output sample's memory") */
    float *weight;
    uint64_t ngroups;     /* runs of cells with one (i, x, j): [gstart[g], gstart[g + 1]) */
    uint32_t *gstart;     /* 32 bits: ncells < 2^32 (collectors and loader refuse more) */
    /* the draw's prediction of each row's output nonzeros (its sketch),
     * summed per i cell (nxcell = ceil(rows / base[0])): a prior for the
     * tiles' occupancy that does not rest on the sampled rows (NULL: whole
     * sample, old draw, or a version-2 .tsd) */
    uint64_t nxcell;
    double *xcell;
    /* per i cell, sum over its rows drawn with p < 1 of (1/p - 1) x^2, x
     * the row's prediction: the sampling variance of a tile's estimate
     * were its rows' nonzeros their predictions (NULL with xcell) */
    double *vcell;
    /* xcell holds the rows' exact nonzeros (rule 3's symbolic count, not
     * the sketches): a tile row's predictions are then its nonzeros */
    int xexact;
    /* with xexact: the sample's weighted nonzeros per i cell (derived from
     * the cells, not saved), the estimate of xcell that the written
     * nonzeros' ratio estimators set against it (NULL otherwise) */
    double *scell;
    /* with xexact, SpMSpM only: the output's exact nonzeros per k cell of
     * their first multiply (nfk = the k cells; 0: not known), from a pass
     * over every multiply like rule 3's count. The one-level written
     * nonzeros are post-stratified on them (stat_spmspm_out.c). */
    uint64_t nfk;
    double *fknnz;
    /* with xexact, SpMSpM only: the output's exact nonzeros per (i cell,
     * k cell of their first multiply) (src/stats/firstcells.c; ptr NULL:
     * not kept, past its budget or a .tsd before version 10). The nested
     * written nonzeros take them as their ratio's covariate
     * (stat_nested_out.c written_cells). */
    tessel_first_cells fc;
    /* MTTKRP Y[i,r] = T[i,j,k] B[j,r] C[k,r]: the first multiply of a
     * nonzero depends on the loop order of j and k, so each sampled
     * nonzero keeps the (j, k) cells of all its multiplies instead
     * (consecutive repeats dropped): cells ei, er, weight ew, and its
     * multiplies' cells ej[eptr[n] .. eptr[n+1]), ek[...]. */
    uint64_t nelems;
    uint32_t *ei, *er, *ej, *ek;
    double *ew;
    uint64_t *eptr;
} stat_output_sample;

/* legacy: the draw in proportion to multiplies with weights calibrated to
 * them (before issue 18), kept for comparisons (tessel_stat_options).
 * row_nnz: each row's exact output nonzeros (NULL: predicted by sketches).
 * A sample of more than max_flops multiplies (> 0) is refused before any
 * is made: TESSEL_EINVAL with out->flops the product's multiplies and
 * out->sampled_flops the sample's (both collectors). */
int stat_output_sample_collect(const tessel_tensor *a, const tessel_tensor *b,
                               const uint64_t *base, double fraction, uint64_t min_flops,
                               double max_flops, uint64_t seed, int legacy, const double *row_nnz,
                               const double *k_nnz, const tessel_allocator *al,
                               stat_output_sample *out);
/* MTTKRP: t is T[i,j,k], b B[j,r], c C[k,r] (operand mode orders);
 * base: i, r, k, j cell edges as in the other sample. */
int stat_output_sample_collect_mttkrp(const tessel_tensor *t, const tessel_tensor *b,
                                      const tessel_tensor *c, const uint64_t *base,
                                      double fraction, uint64_t min_flops, double max_flops,
                                      uint64_t seed, const tessel_allocator *al,
                                      stat_output_sample *out);
void stat_output_sample_free(const tessel_allocator *al, stat_output_sample *s);
/* s->scell from the cells when s->xexact; TESSEL_ENOMEM when it cannot be
 * allocated (xexact kept: the estimators never drop to the sample's sums
 * unscaled for want of memory). */
int stat_output_sample_scell(const tessel_allocator *al, stat_output_sample *s);
/* The cells of a map from packed keys ((i * ext[1] + x) * ext[2] + j) *
 * ext[3] + k to weights (as double bits), sorted, into s (other fields
 * are the caller's). */
int stat_output_sample_from_cells(const tessel_allocator *al, const model_map *cells,
                                  const uint64_t *cell_extent, stat_output_sample *s);

/* A tile grid of a matrix as compressed tile rows: 8 B per non-empty tile
 * (issue 27 item 2). Columns fit 32 bits (dimensions are at most
 * TESSEL_MAX_DIM) and so do counts (stat_grid_base refuses inputs of 2^32
 * or more nonzeros, so no tile at any coarsening holds more). */
typedef struct stat_grid {
    uint64_t rows, cols;  /* tile extents */
    uint64_t n;           /* non-empty tiles */
    uint64_t *ptr;        /* rows + 1 */
    uint32_t *col;        /* tile column of each non-empty tile, ascending per row */
    uint32_t *nnz;        /* nonzeros of each */
    int borrowed;         /* the arrays belong to another grid (stat_grid_free keeps them) */
    /* Per non-empty tile, occ_stride counts its format's price reads
     * besides nnz (stat_tiledfmt.c): a per-rank list's non-empty rows (1),
     * or tiled-csf's non-empty inner tiles and row segments (2), estimated
     * from the base tiles' rows. NULL: not kept. Always owned. */
    double *occ;
    unsigned occ_stride;
} stat_grid;

/* Everything one SpMSpM boundary evaluation needs, in canonical roles:
 * Z[i,j] = A[i,k] * B[k,j] with the loop order IJK, IKJ or KIJ (the other
 * three are these with A and B swapped and transposed). */
typedef struct stat_problem {
    const tessel_allocator *alloc;
    stat_grid a, b;             /* tile grids at the boundary's shape */
    uint64_t ti, tk, tj;        /* tile edges */
    uint64_t ext_i, ext_k, ext_j;
    char order[4];              /* "IJK", "IKJ" or "KIJ" */
    tile_cost cost_a, cost_b, cost_z;
    uint64_t part_a, part_b;    /* partition bytes (0: no overbooking) */
    uint64_t part_z;            /* the output's partition bytes (0: unbounded) */
    uint64_t step_k, extent_k;  /* rule 4 inside a visit: the child's reduction step, k's extent */
    double live_i, live_j;      /* live groups per tile (stat_live_groups) */
    double flops;               /* element-level multiplies, exact */
    double multiplicity;        /* mean products per output nonzero inside one reduction tile */
    uint64_t out_cells;         /* Ti x Tj */
    const stat_output_sample *sample; /* NULL: the output follows eq. 20 alone */
    /* Where a sample cell lands: its output side s1 = ci / f_i, or for an
     * unfolded TTM output (ci / f_i) * x_tiles + cx / f_x (i-major) or
     * (cx / f_x) * i_tiles + ci / f_i; side s2 = cj / f_j; the tile pair
     * is (s1, s2), or (s2, s1) when mirrored; the step ck / f_k. */
    int sample_mirrored, unfolded, x_major;
    uint64_t f_i, f_x, f_j, f_k, i_tiles, x_tiles;
    /* Per non-empty tile of a and b, its fills, for rule 4 per child read
     * at an inner level (stat_bumped.c) when per_read is set; NULL: not kept. */
    int per_read;
    int compute_reads[2]; /* read again by the compute inside a use (stat_inspill.c) */
    double *tile_fills[2];
    /* SpMSpM's stored inputs A[i,k], B[k,j] (before mirroring) and their
     * tile edges at the boundary, for the in-visit step count from the
     * tiles' reduction lines (stat_ksteps_create); NULL: not known (TTM,
     * analytic), the uniform rule */
    const stat_input *src[2];
    uint64_t src_edge[2][2];
    /* the step count's per-reduction-tile tables kept across a thread's
     * points (stat_outspill.c); NULL: built for this problem alone */
    struct stat_ks_cache *ks_cache;
    /* canonical a's and b's tile-level action on its partner's empty
     * tiles at one buffer level (stat_spmspm.c) */
    int mode[2];
} stat_problem;

/* An input's tile-level action where its partner's tile is empty. */
enum { STAT_MODE_SKIP = 0, STAT_MODE_READ = 1, STAT_MODE_GATE = 2 };

/* Input i's mode at level b (skip_on wins over gate_on, as the walk). */
int stat_input_mode(const engine *e, unsigned b, unsigned i);

/* Whether some input at some buffer level does not skip on its partner. */
int stat_any_unskipped(const engine *e);

/* Per-tensor results of one evaluation. */
typedef struct stat_counts {
    double fills, fill_data, fill_meta;      /* inputs */
    double bumped_data, bumped_meta;         /* rule 4 */
    double overflow_fills;
    double worst;                            /* bytes of the largest tile filled */
    double gated;                            /* gated fills (gate_on its partner) */
} stat_counts;

typedef struct stat_outcome {
    stat_counts a, b;
    double z_writebacks, z_updates;
    double z_out_data, z_out_meta, z_in_data, z_in_meta;
    /* rule 4 for the output: the spilled bytes (each written out once and
     * read back once, already in z_out_* and z_in_*), the write-backs of
     * tiles larger than the partition, and the largest tile's bytes */
    double z_spill_data, z_spill_meta, z_overflow_writebacks, z_worst;
    double effectual;        /* effectual tile iterations */
    double out_pairs;        /* output tiles visited at least once */
    double out_nnz;          /* estimated nonzeros of Z */
    double out_nonempty;     /* estimated non-empty output tiles */
    double compulsory_in;    /* every input tile once (rule 3) */
    double compulsory_z;     /* bytes of the final output, level 1 format */
    double operand_nnz[2];   /* nonzeros of A's and B's tiles summed over effectual iterations */
} stat_outcome;

/* The grids of one boundary before canonical roles: ga rows are the
 * output's first side (i, or TTM's unfolded (i, x)), gb columns its
 * second (j, or r); positions of both sides and of k in the loop order. */
typedef struct boundary_grids {
    stat_grid ga, gb;
    int pos_row, pos_col, pos_k;
} boundary_grids;

/* stat.c: the closed sums on one boundary's grids (ownership of g's grids
 * passes here): canonical roles, evaluation, results into e->res. p has
 * its alloc, out_cells, tk and sample mapping set. */
int stat_solve(engine *e, const boundary *bd, boundary_grids *g, stat_problem *p, double flops,
               double multiplicity, const stat_output_sample *sample, tessel_diag *diag);
/* stat_base.c: the base edge per engine index chosen from e->spec's tiles
 * and opt->edge_gcd, within the memory cap; then per input mode, the
 * inputs that share a tensor (same_as) on the gcd of their roles. */
void stat_auto_base(const engine *e, const tessel_stat_options *opt, uint64_t *base);
void stat_operand_bases(const engine *e, const uint64_t *index_base, const int *same_as,
                        uint64_t mode_base[][3]);
/* stat_offgrid.c: e->spec's point through fn (one on-grid evaluation),
 * or, when tile edges fall off the grids of ins, the blend of fn at the
 * on-grid shapes around it (out->offgrid_edges set). */
typedef int (*stat_point_fn)(void *ud, const tessel_spec *spec, tessel_result *out,
                             tessel_diag *diag);
int stat_offgrid_eval(const engine *e, const stat_input *const *ins, stat_point_fn fn,
                      void *ud, tessel_result *out, tessel_diag *diag);
/* Position of engine index x in the level's loop digits; -1 for a whole
 * mode (no loop). */
int stat_loop_position(const boundary *bd, unsigned x);
/* stat.c: a level's tile edge along engine index x as the base grid
 * (edge `base`) can merge it; TESSEL_EINVAL naming a --base that works. */
int stat_derived_edge(const engine *e, const boundary *bd, unsigned x, uint64_t base,
                      uint64_t *edge, tessel_diag *diag);
/* stat.c: input i's grid at bd's tile shape, merged from its base grid
 * (tile: the derived edges), with stat_derived_edge's checks. */
int stat_derive_grid(const engine *e, const stat_input *in, unsigned i, const boundary *bd,
                     const tessel_allocator *a, stat_grid *out, uint64_t *tile, tessel_diag *diag);
/* stat_actions.c: on the closed path, the innermost level's scalar and
 * compute actions of a nested point, from the grids at the innermost tile
 * shape, and an outer action's dense-schedule fills at the backing store of
 * one buffer level, from level 1's grids; stat_actions_outer_fills takes
 * boundary 1's fills (outcome o, canonical roles swapped when mirror) off. */
int stat_actions_grids(engine *e, const stat_input *const *in, tessel_diag *diag);
void stat_actions_outer_fills(engine *e, const boundary *bd, const stat_outcome *o, int mirror);
/* stat_walk.c: every boundary by the exact walk on derived grids, the
 * output from the sample. */
int stat_walk_evaluate(engine *e, const stat_input *const *in, const stat_output_sample *s,
                       double flops, tessel_diag *diag);

/* compulsory.c: what rule 3 needs from the statistics, gathered once per
 * tessel_stat_data (a design point then costs O(1)): per input its
 * nonzeros and non-empty rows (exact, the line counts) and a 3-tensor's
 * (i, x) fibres (estimated); the output's non-empty rows (and fibres),
 * estimated by independence. */
typedef struct stat_census {
    double rows[NIN], nnz[NIN], fibers[NIN];
    double out_rows, out_fibers;
    int out_exact;   /* out_nnz, out_rows and out_fibers counted (outcount.c) */
    double out_nnz;
    double est_rows, est_fibers; /* with out_exact: the estimates it replaced */
} stat_census;
void stat_census_collect(const engine *e, const stat_input *const *in, stat_census *c);
/* rule 3 from the census and e->res->output_nnz */
int stat_compulsory(engine *e, const stat_census *c, tessel_diag *diag);
/* compulsory.c: rule 3 from expected nonzeros per input (analytic
 * density models) and e->res->output_nnz; non-empty rows as distinct
 * values of uniformly spread nonzeros. */
int model_compulsory_expected(engine *e, const double *nnz, tessel_diag *diag);

/* stat.c: the parts of a tessel_stat_data the file code reads and fills. */
typedef struct stat_data_view {
    const tessel_allocator *alloc;
    engine *e;
    char *einsum;   /* 512 bytes */
    char *label;    /* 256 bytes */
    stat_input *in; /* NIN */
    int *same_as;   /* NIN: the earlier input whose statistics these are, or -1 */
    int *has_sample;
    stat_output_sample *sample;
    int *count_exact;           /* rule 3's output count below was counted */
    tessel_output_count *count; /* (stat_data.c, output_count) */
} stat_data_view;

stat_data_view stat_data_view_of(const tessel_stat_data *s);
/* The output sample's cell edges (i, j, k, x) for the inputs' base grids. */
void stat_sample_base(const engine *e, const stat_input *const *in, uint64_t *base);
/* Derived totals, once the inputs are in (creation or load). */
void stat_data_finish(tessel_stat_data *s);
/* An empty tessel_stat_data (no inputs, no sample). */
tessel_stat_data *stat_data_alloc(const tessel_allocator *a);

/* stat_grid.c and stat_spmspm.c */
/* The statistics' base grid as compressed rows: a matrix's tile rows, read
 * in place from g (borrowed: g must outlive it), or a 3-tensor's (i, x)
 * cells i-major against k (a copy). TESSEL_ERANGE for g of 2^32 or more
 * nonzeros, TESSEL_ENOMEM. */
int stat_grid_base(const tessel_tile_grid *g, const tessel_allocator *a, stat_grid *out);
/* An empty grid of rows x cols with room for n tiles, ptr zeroed. */
int stat_grid_alloc_like(uint64_t rows, uint64_t cols, uint64_t n, const tessel_allocator *a,
                         stat_grid *out);
int stat_grid_transpose(const stat_grid *g, const tessel_allocator *a, stat_grid *out);
/* The same without the counts: out->nnz and out->occ NULL (4 B a tile less). */
int stat_grid_transpose_pattern(const stat_grid *g, const tessel_allocator *a, stat_grid *out);
/* g transposed with out->nnz[t] the index tile t has in g, not its count
 * (the statistics indexed by g's tiles read in the transposed order:
 * stat_outspill.c); TESSEL_ERANGE when g has 2^32 tiles or more. */
int stat_grid_transpose_index(const stat_grid *g, const tessel_allocator *a, stat_grid *out);
/* First position in row r of g whose column is >= c (g->ptr[r + 1] when
 * none): the index of tile (r, c) when that tile is non-empty. */
static inline uint64_t stat_grid_lower(const stat_grid *g, uint64_t r, uint64_t c)
{
    uint64_t lo = g->ptr[r], hi = g->ptr[r + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->col[mid] < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The grid of an unfolded 3-tensor base grid (rows i * xcells + x) at
 * tiles fi x fx x fk times as large: rows i' * x_tiles + x' (x_major: the
 * other way round). */
int stat_grid_coarsen_unfolded(const stat_grid *g, uint64_t icells, uint64_t xcells, uint64_t fi,
                               uint64_t fx, uint64_t fk, int x_major, const tessel_allocator *a,
                               stat_grid *out);
/* The same with rows in any order: rowpair[0 .. n) ascending, each
 * row << 32 | its coarse (i', x') tile pair i' * x_tiles + x'; rows with
 * none are empty, rows rows in all (stat_nested_ttm.c's mixed-radix rows). */
int stat_grid_coarsen_mapped(const stat_grid *s, uint64_t icells, uint64_t xcells, uint64_t fi,
                             uint64_t fx, uint64_t fk, const uint64_t *rowpair, uint64_t n,
                             uint64_t rows, const tessel_allocator *a, stat_grid *g);
/* The grid of tiles fr x fc times as large (from the counts alone); at
 * fr = fc = 1, g itself (borrowed). */
int stat_grid_coarsen(const stat_grid *g, uint64_t fr, uint64_t fc, const tessel_allocator *a,
                      stat_grid *out);
void stat_grid_free(const tessel_allocator *a, stat_grid *g);
/* The bytes a grid of `rows` tile rows and n tiles holds (out-of-memory
 * messages). */
uint64_t stat_grid_bytes(uint64_t rows, uint64_t n);
int stat_spmspm_evaluate(const stat_problem *p, stat_outcome *out);

/* stat_cache.c: one SpMSpM point of the closed sums from the summary of
 * its tile shape (built on first use). Everything in canonical roles
 * (after mirroring), as stat_solve hands it to stat_spmspm_evaluate. */
typedef struct stat_cache_point {
    const stat_grid *base[2];   /* base grids of A and B as collected */
    uint64_t factor[2][2];      /* their coarsening at this shape: rows, columns */
    int mirror;                 /* canonical A = B^T, B = A^T */
    char order[4];              /* canonical: IJK, IKJ or KIJ */
    uint64_t tk, f_i, f_j, f_k, out_cells;
    const stat_output_sample *sample;
    tile_cost cost_a, cost_b, cost_z;
    uint64_t part_a, part_b, part_z, step_k, extent_k;
    double live_i, live_j;
    double flops, multiplicity;
} stat_cache_point;

/* stat_cache_solve's answer when the point must take the uncached path
 * (a sum that could leave the exact range of doubles). */
#define STAT_CACHE_DECLINED 1

int stat_cache_solve(tessel_stat_cache *c, const stat_cache_point *pt, stat_outcome *o);

/* The nested boundaries' summaries (stat_nested_cache.c), kept by a
 * tessel_stat_cache (created on first use; NULL when out of memory). */
typedef struct stat_nested_cache stat_nested_cache;
stat_nested_cache *stat_cache_nested(tessel_stat_cache *c);
int stat_nested_cache_create(const tessel_allocator *a, stat_nested_cache **out);
void stat_nested_cache_free(stat_nested_cache **c);
void stat_nested_cache_counts(const stat_nested_cache *c, uint64_t *hits, uint64_t *misses);
/* Boundary b >= 2 as stat_nested_evaluate, through cache c (NULL: without). */
int stat_nested_evaluate_cached(engine *e, unsigned b, const stat_input *const *in,
                                const stat_output_sample *s, stat_nested_cache *c,
                                tessel_diag *diag);

/* stat_outspill.c: rule 4 for an output tile inside one visit (update
 * steps of the child's reduction width, stat_step_width at boundary b) */
uint64_t stat_step_width(const engine *e, unsigned b);
double stat_visit_slots(uint64_t k, uint64_t tk, uint64_t extent, uint64_t step);
double stat_visit_steps(double slots, double na, double nb);
double stat_spill_inside(double b0, double b1, double full, double m, double part);
double stat_visit_live(double slots, double na, double nb, int grew);
void stat_live_groups(const engine *e, const boundary *bd, int mirror, double *gi, double *gj);
double stat_spill_visit(double slots, double na, double nb, double b0, double b1, double full,
                        double gi, double gj, double part);
int stat_spill_visit_over(double b1, double gi, double gj, double part);
/* The in-visit steps from the tiles' reduction lines and the matrices'
 * counts per k (stat_outspill.c), into *out: built per problem when p->src
 * holds both inputs with their lines statistics at a one-coordinate step
 * (and their grids match the point's), else NULL, the uniform rule: a
 * function of the statistics and the point alone. TESSEL_ENOMEM (*out
 * NULL) when they apply and cannot be built: the caller fails the point,
 * never prices it by the uniform rule instead. */
typedef struct stat_ksteps stat_ksteps;
int stat_ksteps_create(const stat_problem *p, stat_ksteps **out);
/* The same with a memo sized for about `visits` visits (0: the largest);
 * with p->ks_cache the tables (and their memo) are the cache's. */
int stat_ksteps_create_sized(const stat_problem *p, uint64_t visits, stat_ksteps **out);
/* The step count's tables of one thread's points, per (matrices' counts,
 * k tile edge, extent): kept by a tessel_stat_cache (stat_cache_ksteps),
 * never used by two threads at once. Their per-reduction-tile parts and
 * the points' geometries are in a pool (stat_ks_pool_create) that the
 * caches of a sweep's threads share: built once, by the first thread
 * that needs them, read-only from then on. A cache without a pool keeps
 * nothing (each point builds its own). Free the caches before their
 * pool. */
typedef struct stat_ks_cache stat_ks_cache;
int stat_ks_pool_create(const tessel_allocator *a, stat_ks_cache **out);
int stat_ks_cache_create(const tessel_allocator *a, stat_ks_cache *pool, stat_ks_cache **out);
void stat_ks_cache_free(stat_ks_cache **c);
void stat_ks_cache_counts(const stat_ks_cache *c, uint64_t *hits, uint64_t *misses);
/* What c's thread built into the pool (tiles: the tables' per-reduction-
 * tile parts; geometries) and the points it built its own for while
 * another thread was building them. */
void stat_ks_cache_built(const stat_ks_cache *c, uint64_t *tiles, uint64_t *geoms,
                         uint64_t *passed);
stat_ks_cache *stat_cache_ksteps(tessel_stat_cache *c); /* NULL: out of memory */
/* A vector of n doubles that a function of the statistics alone gives
 * (what key's pointers and numbers name: band_lines' per-band counts,
 * stat_inspill.c), kept in c's pool: built by build(arg, a, v) (TESSEL_OK
 * or an error) once, by the first thread that claims it, read-only once
 * ready, under the pool's claim/ready protocol and budget. NULL when
 * there is no pool, another thread is building it, it does not fit or
 * its build failed (nothing kept): the caller computes its own. Give
 * *hold back with stat_ks_vec_release once the vector is read. */
typedef struct stat_ks_vec_key {
    const void *p[2];
    uint64_t u[2];
    uint64_t n; /* the values */
} stat_ks_vec_key;
typedef int (*stat_ks_vec_fn)(const void *arg, const tessel_allocator *a, double *v);
const double *stat_ks_vec(stat_ks_cache *c, const stat_ks_vec_key *key, stat_ks_vec_fn build,
                          const void *arg, void **hold);
void stat_ks_vec_release(stat_ks_cache *c, void *hold);
/* The vectors c's thread built into the pool. */
uint64_t stat_ks_cache_built_vecs(const stat_ks_cache *c);
void stat_ksteps_free(stat_ksteps **ks);
/* m of visit (canonical A tile row r, reduction tile k, B tile column q)
 * per live group (gi x gj); -1 when ks cannot say. */
double stat_ksteps_steps(stat_ksteps *ks, uint64_t r, uint64_t k, uint64_t q, double gi,
                         double gj);
/* stat_spill_visit with ks's step count (ks NULL or silent: the uniform). */
double stat_spill_visit_at(stat_ksteps *ks, uint64_t r, uint64_t k, uint64_t q, double slots,
                           double na, double nb, double b0, double b1, double full, double gi,
                           double gj, double part);
int stat_cache_belongs(const tessel_stat_cache *c, const tessel_stat_data *s);
/* stat.c: a boundary's outcome into e->res (roles per the mirror). */
void stat_store_outcome(engine *e, const stat_problem *p, const stat_outcome *o, unsigned t_a,
                        unsigned t_b);


/* stat.c, for stat_data.c: what the closed form does not model yet (an
 * error naming it), whether the closed sums apply, the multiplies from the
 * line counts, and one design point from the statistics (with or without
 * a tessel_stat_cache; STAT_CACHE_DECLINED: evaluate without). */
int stat_check_workload(const tessel_spec *s, tessel_diag *diag);
int stat_check_design_levels(const tessel_spec *s, tessel_diag *diag);
/* Level l's per-rank list of tensor t: 0 when stat prices it (an affine
 * list, src/model/stat_ranks.c), else the refusal with its reason. */
int stat_ranks_check(const tessel_spec *s, unsigned l, unsigned t, tessel_diag *diag);
int stat_closed_sums_apply(const engine *e);
double stat_flops_of(const stat_input *a, const stat_input *b);
int stat_evaluate(engine *e, const stat_input *in[2], const stat_output_sample *sample,
                  const tessel_allocator *a, tessel_diag *diag);
int stat_evaluate_cached(engine *e, const stat_input *in[2], const stat_output_sample *sample,
                         double flops, tessel_stat_cache *cache, tessel_diag *diag);

#endif

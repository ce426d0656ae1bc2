/* Private to the stat estimator: the closed form of nested boundaries
 * (stat_nested.c). */
#ifndef TESSEL_MODEL_STAT_NESTED_H
#define TESSEL_MODEL_STAT_NESTED_H

#include "stat_closed.h"
#include "stat_internal.h"

/* Output pair walks costing more word operations than this estimate the
 * runs by independence instead. */
#define NESTED_BITSET_BUDGET (UINT64_C(1) << 26)

/* Engine indices of SpMSpM (exact_roles.c). */
enum { XI = 0, XJ = 1, XK = 2 };

/* An input tile's runs while the merge walks take merged runs off: whole
 * numbers (a row's coarse blocks minus whole merges), at most a row of P's
 * tiles, so 4 B in place of a double's 8 (input_side checks the bound;
 * docs/models/stat.md, "Memory of the nested pass"). Signed, so that a
 * count taken below zero stays below zero as a double would. */
typedef int32_t nested_run;
#define NESTED_RUN_MAX INT32_MAX

/* What a nested boundary's evaluation leaves that depends on its geometry
 * alone (stat_nested_cache.c keeps it across points): per input and tile
 * size (nonzeros, ascending), the runs (fills) and the uses after a fill
 * of the tiles with a run; the effectual iterations and operand nonzeros;
 * the output's pairs, runs and written nonzeros. */
typedef struct nested_summary {
    uint64_t nsizes[2];
    uint64_t *size[2];
    double *runs[2], *extra[2];
    double effectual, operand_nnz[2];
    double out_pairs, out_runs, out_written;
    int ok; /* 0: not (fully) recorded */
    const tessel_allocator *alloc; /* of the arrays */
    stat_nested_cache *walks; /* NULL, or where the merge walks' counts are kept by key */
} nested_summary;

typedef struct nested {
    engine *e;
    nested_summary *rec;     /* NULL, or where to record the summary */
    double out_written;      /* the output's written nonzeros (stat_nested_output) */
    boundary bd;
    stat_grid a, b;          /* A: rows I, columns K; B: rows K, columns J (level b) */
    int a_owned, b_owned;    /* a's (b's) arrays are this evaluation's own (not the base grid's) */
    uint64_t ea[2], eb[2];   /* derived tile edges: A (i, k), B (k, j) */
    uint64_t ext_i, ext_k, ext_j;
    uint64_t cf_j, cf_i, cf_k; /* coarse blocks (in level-b tiles) separating runs of A, B, Z */
    uint64_t *n_a, *n_b;     /* per K: A tiles in column K, B tiles in row K */
    double *a_nnz, *b_nnz;   /* per K: nonzeros of A's column, B's row */
    unsigned first_digit;    /* level b's digits: bd.d[first_digit .. ndigits) */
    uint64_t words;
    uint64_t *arows, *bcols; /* bitsets over K per tile row of A, tile column of B */
    /* the inputs behind a and b (SpMSpM; NULL otherwise) and, while the
     * output's spill is priced, the in-visit step count from their tiles'
     * distinct k (stat_outspill.c; NULL: the uniform rule) */
    const stat_input *src[2];
    stat_ksteps *ks;
    /* the engine and boundary that price the tiles and count the dense
     * schedule (NULL: e and bd): TTM's real ones, where e and bd are its
     * unfolded SpMSpM (stat_nested_ttm.c) */
    engine *pe;
    const boundary *pbd;
} nested;

/* Operand which's (0 A, 1 B, NESTED_OUT Z) tile cost at n's boundary,
 * through n->pe and n->pbd when set. */
#define NESTED_OUT 2u
int stat_nested_cost(const nested *n, unsigned which, tile_cost *tc);


/* One input seen as X[o, k] against its partner P[k, f]: A with B
 * (o = i, f = j), or B^T with A^T (o = j, f = i). */
typedef struct nested_side {
    const stat_grid *x, *p;
    unsigned xo, xf;           /* engine indices of o and f */
    unsigned op;               /* operand: 0 A, 1 B */
    uint64_t cf;               /* coarse f block splitting X's runs (stat_nested_block) */
} nested_side;

enum { WALK_NONE, WALK_ALONE, WALK_ROW, WALK_OUTER, WALK_COLUMN };

/* stat_nested_merge.c: which merge walk X[o, k] against P[k, f] takes at
 * level b (WALK_NONE: none, or past its budget). */
int stat_nested_walk_of(const nested *n, unsigned xo, unsigned xf, uint64_t cf, uint64_t orows,
                        uint64_t fcols, uint64_t K);

/* Runs of X's tiles (runs[], per X tile) merged inside one level b-1 tile
 * by walk w. */
int stat_nested_merge_inside(const nested *n, const nested_side *sd, int w, nested_run *runs);

/* Coarse blocks of size cf holding a tile of grid row r. */
uint64_t stat_nested_row_blocks(const stat_grid *g, uint64_t r, uint64_t cf);

/* Boundary b >= 2 of SpMSpM / SpMV from the statistics into e->res:
 * fills, write-backs and updates per tensor at level b, without walking
 * the effectual iterations. Needs the output sample. */
int stat_nested_evaluate(engine *e, unsigned b, const stat_input *const *in,
                         const stat_output_sample *s, tessel_diag *diag);

/* The coarse block (in level-b tiles of engine index f) whose change
 * splits the runs of uses of a tensor over engine indices x0, x1 at
 * boundary bd; UINT64_MAX when nothing splits them. */
uint64_t stat_nested_block(const boundary *bd, unsigned x0, unsigned x1, unsigned f);

/* Shared by stat_nested.c (inputs) and stat_nested_out.c (output). */

/* First K >= from where both bitsets x and y are set, or UINT64_MAX. */
uint64_t stat_nested_next_common(const uint64_t *x, const uint64_t *y, uint64_t words,
                                 uint64_t from);

/* stat_nested_across.c: runs of input X[o, k] (partner P[k, f]; engine
 * indices xo, xf; cf the coarse f block splitting its runs) that continue
 * from one level b-1 tile into the next, taken off runs[] (per X tile).
 * xt: X's transpose when the caller holds it (read, not copied), or NULL. */
int stat_nested_merge_across(const nested *n, const stat_grid *x, const stat_grid *xt,
                             const stat_grid *p, unsigned xo, unsigned xf, uint64_t cf,
                             nested_run *runs);

/* Output Z at boundary n->bd.b into o: pairs, runs (write-backs), updates
 * and the bytes they move. */
int stat_nested_output(nested *n, const stat_output_sample *s, stat_outcome *o);

/* stat_nested_prior.c: each output tile's occupancy with a partial output
 * sample, from a prior that does not rest on the tile's sampled rows
 * (docs/models/stat.md "Output spill with a partial sample"). */
#define PRIOR_BINS 64
/* Points of a stratum's fill curve: the share of a tile's final nonzeros
 * present after a share u = c / PRIOR_CURVE of its products (c = 1 .. PRIOR_CURVE - 1). */
#define PRIOR_CURVE 16
/* Bins of the prior's calibration: quarter octaves of a pair's prior. */
#define PRIOR_CAL 128
typedef struct out_prior {
    int on;                  /* 0: the sample alone (whole sample, or no predictions) */
    const stat_output_sample *sample;
    double rho[PRIOR_BINS];  /* compression ratio per log2 bin of the products */
    double g;                /* the bands' calibration to the sample's total */
    double cells;            /* an output tile's cells (the coverage curve's limit) */
    double trel;             /* the prior's relative error variance */
    /* the draw's sampling variance over the model's (stat_prior_init: the
     * bands' exact totals against their estimates; 1 when not known) */
    double deff;
    /* the priors' calibration (docs/models/stat.md "The prior calibrated on
     * its own scale"): a factor per quarter octave of the coverage split's
     * prior, the sample's band-scaled nonzeros over the priors */
    double cal[PRIOR_CAL];
    /* fill curve per stratum (partial tiles, docs/models/stat.md): 0 .. 1 at
     * u = c / PRIOR_CURVE; linear (u) until stat_prior_curves fits them */
    double curve[PRIOR_BINS][PRIOR_CURVE + 1];
} out_prior;

/* One pair's occupancy: prior (nonzeros) from m products, the weight
 * lam of its sampled estimate, the blended mean, its remaining relative
 * variance rv, and z the scale being priced. */
typedef struct prior_pair {
    double prior, m, lam, mean, rv, z;
    const double *curve; /* its stratum's fill curve (out_prior.curve) */
} prior_pair;

/* The products of tile row I's effectual pairs (acc[j], zero on entry) and
 * the J touched. */
void stat_prior_row(const nested *n, uint64_t i, double *acc, uint64_t *touched, uint64_t *nt);
/* The prior's strata, calibration and error against the sample's pair
 * totals (final); pr->on = 0 when there is nothing to do. */
int stat_prior_init(const nested *n, const stat_output_sample *s, const model_map *final,
                    double cells, out_prior *pr);
/* The priors q of tile row I's touched pairs, acc[j] their products: the
 * band's sketch predictions times pr->g split along a coverage curve in
 * rho M (each at most pr->cells), times pr->cal and scaled back to the
 * band's total. Returns the band's relative sampling
 * variance. */
double stat_prior_raw(const nested *n, const out_prior *pr, uint64_t i, const double *acc,
                      const uint64_t *touched, uint64_t nt, double *q);
/* v: the pair's relative sampling variance (its band's). */
void stat_prior_pair(const out_prior *pr, double m, double q, double v, double shat,
                     double cells, prior_pair *pp);
/* The pair's partial nonzeros after `sampled` weighted sampled nonzeros
 * and mcum products. */
double stat_prior_path(const prior_pair *pp, double sampled, double mcum);
/* A pair's walk over its effectual reduction tiles K: A's tile row i
 * against B's tile column j (bt, B's grid transposed), p and q the
 * positions in each. */
typedef struct pair_walk {
    const uint32_t *x, *y, *na, *nb; /* stat_grid columns and counts */
    uint64_t nx, ny, p, q;
} pair_walk;
void stat_pair_walk(const nested *n, const stat_grid *bt, uint64_t i, uint64_t j, pair_walk *w);
/* The next effectual K (UINT64_MAX at the end), its tiles' nonzeros na,
 * nb and products (uniform inside the reduction tile, as stat_prior_row). */
uint64_t stat_pair_next(const nested *n, pair_walk *w, double *na, double *nb, double *prod);
/* Fits pr's fill curves from the sampled pairs: keys (pair * ext_k + K,
 * sorted) with weights in steps; bt is B's level-b grid transposed. */
int stat_prior_curves(const nested *n, const stat_grid *bt, const model_vec *keys,
                      const model_map *steps, out_prior *pr);
/* Scales z and weights w (summing to 1) of the pair's occupancy; count. */
unsigned stat_prior_nodes(const prior_pair *pp, double *z, double *w);
/* The largest of those scales (stat_prior_nodes' last), without the others. */
double stat_prior_top(const prior_pair *pp);

/* stat_nested_out.c: Z at boundary n->bd.b from a summary's pairs, runs
 * and written nonzeros, when no output tile can outgrow its partition;
 * STAT_NESTED_KNOWN_DECLINED (nothing written) when one can. */
#define STAT_NESTED_KNOWN_DECLINED 1
int stat_nested_output_known(nested *n, const stat_output_sample *s, const nested_summary *sm,
                             stat_outcome *o);

/* stat_nested.c: boundary b priced from summary sm (bd: its geometry);
 * STAT_NESTED_KNOWN_DECLINED, with nothing written, where the summary does
 * not decide the point (rule 4 per child read, an output spill, sums
 * past exact doubles). */
int stat_nested_from_summary(engine *e, const boundary *bd, const nested_summary *sm,
                             const stat_output_sample *s);
/* stat_nested.c: stat_nested_evaluate, recording into rec (NULL: not). */
int stat_nested_evaluate_rec(engine *e, unsigned b, const stat_input *const *in,
                             const stat_output_sample *s, nested_summary *rec, tessel_diag *diag);

/* stat_nested_cache.c: input op's tiles (grid x, runs[] per tile, P's
 * rows giving the uses) into n->rec by size; rec->ok = 0 when it cannot. */
void stat_nested_record_sizes(nested *n, unsigned op, const stat_grid *x, const stat_grid *p,
                              const nested_run *runs);
void stat_nested_summary_free(nested_summary *sm);
/* stat_nested_cache.c: the merge walks' counts kept across points under
 * the key of what a walk reads (stat_nested_merge.c, walk_key). _apply
 * takes a kept walk's merges off runs[] (n tiles) and returns 1, or
 * returns 0 with runs[] untouched; _keep keeps before[t] - after[t] per
 * tile (dropped when out of memory). */
#define NESTED_WALK_KEY_MAX 32
int stat_nested_walk_apply(stat_nested_cache *c, const uint64_t *key, unsigned len,
                           nested_run *runs, uint64_t n);
void stat_nested_walk_keep(stat_nested_cache *c, const uint64_t *key, unsigned len,
                           const nested_run *before, const nested_run *after, uint64_t n);
/* Walks taken off from a kept one; walks kept. */
void stat_nested_walk_counts(const stat_nested_cache *c, uint64_t *hits, uint64_t *kept);
/* Tile sizes up to this many nonzeros are grouped in a dense table. */
#define STAT_NESTED_SIZE_TABLE (UINT64_C(1) << 20)
/* One size table of op into rec: the dense sums r (runs) and x (further
 * uses) over sizes 0 .. max compacted to the sizes seen. */
int stat_nested_sizes_compact(const tessel_allocator *a, nested_summary *rec, unsigned op,
                              const double *r, const double *x, const unsigned char *seen,
                              uint64_t max);

/* stat_nested.c: n set up for boundary b (geometry, level-b grids, extents,
 * coarse blocks, per-K counts); shared[2] says which grids are the
 * statistics' own. stat_nested_teardown frees what setup made. */
int stat_nested_setup(engine *e, unsigned b, const stat_input *const *in, nested *n,
                      int *shared, tessel_diag *diag);
void stat_nested_teardown(nested *n, const int *shared);
/* The rest of stat_nested_setup for a caller that set n's e, bd,
 * first_digit, a, b, ea and eb itself (stat_nested_ttm.c); tears n down
 * on failure. */
int stat_nested_setup_given(nested *n, int *shared);
/* The inputs' and the output's counts at n's boundary into o. */
int stat_nested_run(nested *n, const stat_output_sample *s, stat_outcome *o);
/* stat_nested_ttm.c: boundary b >= 2 of TTM as the nested SpMSpM of T
 * unfolded to (i, x) rows, its rows numbered in the loop order of every
 * level (mixed radix); STAT_NESTED_KNOWN_DECLINED, with e->res to be
 * discarded, where the closed form does not hold (docs/models/stat.md,
 * "TTM at nested levels"). */
int stat_nested_ttm(engine *e, unsigned b, const stat_input *const *in,
                    const stat_output_sample *s, tessel_diag *diag);
/* Whether the closed form costs less than the walk at TTM's nested
 * boundaries (*cheaper; 1 where it cannot be told): their rows against
 * their effectual iterations, from the base grids' tiles (not the
 * iterations themselves). TESSEL_ENOMEM when out of memory. */
int stat_nested_ttm_cheaper(engine *e, const stat_input *const *in, int *cheaper);
/* Input sd's fills (runs[] per tile of sd->x) and rule 4's streaming at
 * level n->bd.b into c, registering each tile for rule 4 per child read. */
/* An input's runs per tile as the pricing reads them: whole counts (the
 * merge walks', w) or fractional ones (the formula path's, d); one set. */
typedef struct nested_runs {
    const double *d;
    const nested_run *w;
} nested_runs;
static inline double stat_nested_run_at(const nested_runs *r, uint64_t t)
{
    return r->d ? r->d[t] : (double)r->w[t];
}
int stat_nested_price_input(nested *n, const nested_side *sd, const nested_runs *runs,
                            stat_counts *c);
/* The outcome o into e->res at boundary n->bd.b, with the algorithmic counts. */
void stat_nested_store(nested *n, const stat_outcome *o);

/* stat_nested_formula.c: boundary b priced by the formula per tile shape
 * (no merge walks, no output sample walk); STAT_NESTED_KNOWN_DECLINED, with
 * nothing written, where its summary cannot decide the point. */
int stat_nested_formula(engine *e, unsigned b, const stat_input *const *in,
                        const stat_output_sample *s, tessel_diag *diag);

#endif

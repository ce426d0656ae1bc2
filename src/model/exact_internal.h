/* Private to the exact estimator (src/model/exact*.c). */
#ifndef TESSEL_MODEL_EXACT_INTERNAL_H
#define TESSEL_MODEL_EXACT_INTERNAL_H

#include <string.h>

#include "model_internal.h"

#define NX 4u /* engine indices */
#define NIN 3u /* inputs */
#define NLEV TESSEL_SPEC_MAX_LEVELS

typedef struct operand {
    tessel_tensor *t;
    int owned;
    unsigned order;
    unsigned x[3]; /* engine index of each mode */
    unsigned spec_tensor;
    unsigned ranks; /* modes of the workload tensor (SpMV's vectors: 1 of order 2) */
} operand;

/* One digit of a composite loop key: index x at level l. */
typedef struct digit {
    unsigned x;
    uint64_t div;   /* level-l tile edge / level-b tile edge */
    uint64_t radix; /* values this digit takes */
    int first;      /* outermost finite level of x: no modulo */
} digit;

typedef struct tile_cost {
    int ranked; /* a per-rank format: nranks rank formats instead of `format` */
    unsigned nranks;
    unsigned char ranks[3];
    tessel_format format;
    tessel_format_widths widths;
    unsigned order;
    uint64_t shape[3]; /* in rank order (rank_order, else the operand's mode order) */
    /* rank d is the operand's mode rmode[d]; swapped: not the identity */
    unsigned char rmode[3];
    int swapped;
    /* tiled-csf (docs/spec.md): the inner (child level's) tile per rank;
     * a tile's counts are its non-empty inner tiles and row segments */
    int tiled;
    uint64_t inner[3];
} tile_cost;

typedef struct out_table {
    uint64_t nout, *key, *start; /* unique output tiles; entries [start[o], start[o+1]) */
    uint64_t nent, *red, *cum;   /* reduction key and cumulative count */
    uint64_t *pos;               /* small grids: tile -> 1 + its row in key, 0 none */
} out_table;

/* Row of output tile `key` in table t, UINT64_MAX when the tile has none. */
static inline uint64_t exact_table_row(const out_table *t, uint64_t key)
{
    if (t->pos)
        return t->pos[key] ? t->pos[key] - 1 : UINT64_MAX;
    uint64_t lo = 0, hi = t->nout;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->key[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->nout && t->key[lo] == key ? lo : UINT64_MAX;
}

typedef struct boundary {
    unsigned b;
    uint64_t tile[NX];   /* level-b tile edge per engine index (clamped to the extent) */
    uint64_t ntiles[NX];
    unsigned ndigits;
    digit d[NX * NLEV];
    uint64_t red_space;  /* product of the reduction digits' radices */
    tessel_tile_grid *grid[NIN];
    tile_cost cost[NIN], out_cost; /* formats at level b */
    /* grid[i]'s tiles of group (first-mode tile coordinate) g are
     * [rowptr[i][g], rowptr[i][g + 1]), sorted by key: a direct index */
    uint64_t *rowptr[NIN];
    uint64_t groups[NIN];
    uint64_t *occ[NIN];  /* per-rank formats: prefix counts per non-empty input tile */
    unsigned occ_stride[NIN]; /* counts per tile in occ[i] (tiled-csf: 2) */
    /* Output tables, one per depth (the last counts elements): unique
     * output tiles, and per tile (reduction key, cumulative count). */
    unsigned ntables;
    out_table table[3];
    uint64_t out_tiles;  /* all output tiles, empty or not */
    uint64_t out_prefixes[2]; /* level 1 with a per-rank output format at level 0 or 1: distinct
                                 non-empty rows (and fibres) of the whole output (rule 3) */
    /* The tables hold one range of output rows at a time (exact_stream.c);
     * the whole output's nonzeros and final tile bytes summed range by range. */
    int by_rows;
    uint64_t rows_nnz, rows_bytes;
    /* Set when the tables never hold every tile at once: whether some final
     * output tile outgrows its partition (rule 4), found before the walk. */
    int spill_known, spill;
} boundary;

/* Output grids up to this many tiles get direct-indexed state. */
#define DIRECT_TILES (UINT64_C(1) << 21)

/* Rule 4 at an inner level (exact_bumped.c): the overbooked tiles of one
 * input at level b, to be priced by the reads of level b+1. */
typedef struct ob_tile {
    uint64_t nnz, bytes, meta, part; /* the tile at level b and its partition */
    uint64_t fills, uses;            /* level-b fills and non-gated uses */
    uint64_t child_nnz;              /* nonzeros level b+1 filled from it */
    uint64_t band;                   /* stat_inspill.c: its k tile at the innermost level */
    uint64_t up;                     /* its level-(b-1) tile's slot, UINT64_MAX: none */
} ob_tile;

typedef struct ob_table {
    model_map index; /* packed level-b tile coordinates -> slot */
    ob_tile *t;
    uint64_t n, cap;
} ob_table;

typedef struct engine {
    const tessel_spec *spec;
    const tessel_allocator *alloc;
    tessel_diag *diag;
    tessel_workload_kind kind;
    unsigned nx;
    uint64_t extent[NX];
    int spec_index[NX]; /* -1: a unit index that SpMV adds */
    unsigned nin;
    operand in[NIN];
    operand out;
    unsigned nred;
    unsigned red[2];
    unsigned nlev; /* storage levels including the backing store */
    tessel_result *res;
    tessel_progress_fn progress;
    void *progress_ud;
    tessel_exact_options walk; /* old walk or chunk size (tests) */
    uint64_t *mark;   /* per value of the output's last index */
    uint64_t *minkey; /* MTTKRP: smallest reduction key per r */
    uint64_t *touched;
    ob_table ob[2][NIN]; /* [b % 2]: overbooked tiles recorded at level b */
    int inspill;         /* the compute's reads price the innermost level (exact_inspill.c) */
    /* scalar action_optimization (model_scalar.c): per input, the scalar
     * reads the compute traverses and the format bytes they read */
    double scalar_reads[NIN], scalar_format[NIN];
    /* compute_optimization (model_scalar.c): per input, the points of the
     * effectual innermost tiles where it is nonzero; the tiles' points */
    double compute_nz[NIN], compute_points;
    double compute_macs; /* analytic, stat: the multiplies' expectation (else 0: res->macs) */
    /* stat: the multiplies at the first reduction coordinate from the line
     * counts (stat_dense.c); unset, exact_dense.c counts them from the data */
    int dense_first_set;
    uint64_t dense_first;
    /* action_optimization at an outer level l (model_scalar.c): per input, the
     * nonzeros and format bytes of its fills of level l + 1 without the skipping
     * (the dense schedule), less those of its actual fills */
    double outer_nnz[TESSEL_SPEC_MAX_LEVELS][NIN], outer_meta[TESSEL_SPEC_MAX_LEVELS][NIN];
    unsigned char outer_on[TESSEL_SPEC_MAX_LEVELS][NIN]; /* per boundary b: exact_outer_cond */
    unsigned char outer_any[TESSEL_SPEC_MAX_LEVELS];     /* any input's at boundary b */
} engine;


/* Rule 4 for the output inside a visit (exact_outspill.c): the tile's
 * update steps and its size after each. */
typedef struct exact_outspill {
    int on;          /* 0: the walk keeps the per-visit rule (price_spills) */
    boundary fine;   /* the live groups as output tiles, one reduction digit of width g */
    tile_cost gcost; /* Z's format on one live group */
    uint64_t g;      /* step width along the reduction index */
    uint64_t nsteps; /* steps along the reduction index */
    uint64_t words;
    uint64_t *arow;  /* per row tile of A: bit s when it holds a nonzero in step s */
    uint64_t *bcol;  /* per column tile of B: the same */
    uint64_t *grow, *gcol; /* the same per live group row / column (0: no group spills) */
} exact_outspill;

/* A chunk of the composite loop keys (exact_stream.c): level-b tile
 * coordinates [lo, hi) of the outermost digit's index x (NX: none), and
 * the keys [klo, khi) inside them. */
/* The non-empty tiles of one input grid by their coordinate along one
 * mode: tiles perm[start[v] .. start[v+1]) have coordinate v < n. */
typedef struct exact_tile_order {
    uint64_t n;
    uint64_t *start, *perm;
} exact_tile_order;

typedef struct exact_range {
    unsigned x;
    uint64_t lo, hi;
    uint64_t klo, khi;
    uint64_t pushed; /* out: keys generated, repeats included */
    /* Optional, so a chunk visits only its tiles: input i's tiles by
     * coordinate x (when x is a mode of input i); A's tiles by the index
     * it shares with B (when x is only B's). */
    const exact_tile_order *by[NIN], *a_shared;
} exact_range;

/* The input tile resident at level b. */
typedef struct exact_resident {
    uint64_t key;   /* UINT64_MAX: nothing resident */
    uint64_t idx;   /* its index in the input's tile grid */
    int gated;      /* the slot is taken but the data never came (gating) */
    uint64_t nnz;
    uint64_t data, meta;
    uint64_t dense_key; /* outer action_optimization: the tile resident without skipping */
} exact_resident;

/* Streaming walk: per output tile, what pricing its next write-back or
 * spill needs, so run ends are priced when they happen instead of
 * recorded. Rows are the element table's (tiles with output nonzeros);
 * visited tiles without any are only remembered as written back. */
typedef struct exact_out_live {
    uint64_t *cur;         /* ntables table cursors per row */
    uint64_t *data, *meta; /* each row's last write-back */
    unsigned char *seen;   /* written back before */
    model_map empty;       /* empty tiles written back before */
    uint64_t part;         /* the output's partition at the boundary's level */
} exact_out_live;

/* The output tile of the walk's current run (rule 2). */
typedef struct exact_out_state {
    uint64_t key;     /* resident output tile, UINT64_MAX none */
    uint64_t red;     /* reduction key of its last visit */
    int record;       /* keep events (the old walk; the in-visit spill rule) */
    model_vec events; /* tile * red_space + red at each write-back */
    /* Rule 4 for the output: with a partition some output tile can
     * outgrow, the visits that do not end their run (tile * red_space +
     * red), whose overflow spills to the parent until the next visit. */
    int spills;
    model_vec mid;
    int live;         /* price write-backs and spills as they happen (lv) */
    exact_out_live lv;
    /* Only output tiles of first-mode tile coordinates [lo, hi) are priced
     * (exact_stream.c's replayed ranges); runs end as before for all. */
    uint64_t lo, hi, per_row;
} exact_out_state;

/* The state of one boundary's walk, carried from key to key and, in the
 * streaming walk, from chunk to chunk. */
typedef struct exact_walker {
    engine *e;
    const boundary *bd;
    int all_effectual;
    exact_resident res[NIN];
    exact_out_state os;
    exact_outspill steps;
    const uint64_t *fp[NIN]; /* streaming: data, meta per input grid tile, or NULL */
    int outputs_only;        /* a replay: the inputs were walked already */
    int outer;               /* an outer action_optimization at this boundary (outer_note) */
    uint64_t done, total;    /* progress: keys walked, of about total */
} exact_walker;

/* exact.c */
void exact_finish_counts(engine *e);

/* exact_dense.c: the MACs' reads of an uncompressed output (rule 2,
 * read-modify-write) replace the innermost level's per-MAC reads. */
int model_tensor_uncompressed(const tessel_spec *spec, unsigned l, unsigned t);
void exact_dense_output_reads(engine *e);
/* Whether a per-rank list's price reads a prefix count (a tile's non-empty
 * rows or fibres) (src/model/stat_ranks.c). */
int model_ranks_need_prefixes(const unsigned char *ranks, unsigned n);
/* A per-rank list priced from the nonzero count alone with n values: no
 * prefix count read, the leaf compressed. */
int model_ranks_affine(const unsigned char *ranks, unsigned n);
/* A tile's footprint as fixed + n * per bits: a single-name format, or an
 * affine per-rank list (model_ranks_affine). */
void model_cost_footprint_bits(const tile_cost *tc, double *fixed, double *per);
/* A per-rank tile of n nonzeros without its prefix counts (the stat
 * estimator): the counts estimated from n (src/model/stat_ranks.c). */
void model_ranks_estimated_bits(const tile_cost *tc, uint64_t n, double *data_bits,
                                double *meta_bits);
/* The same at given prefix counts est[0 .. nranks - 2] (fractional counts
 * interpolated between whole ones; the leaf's is n). */
void model_ranks_bits_at(const tile_cost *tc, uint64_t n, const double *est, double *data_bits,
                         double *meta_bits);
/* Scalar skipping and gating at the compute (model_scalar.c): whether
 * input i's reads at the innermost level carry an action_optimization;
 * one effectual innermost tile iteration's traversal of input i (tile
 * coordinates c, nnz nonzeros, meta format bytes); the counts at the end. */
int exact_scalar_on(const engine *e, unsigned i);
void exact_scalar_note(engine *e, unsigned i, const uint64_t *c, uint64_t nnz, uint64_t meta);
void exact_scalar_finish(engine *e);
/* action_optimization at the level above boundary b (model_scalar.c): the
 * tensors input i's fills of level b skip (gate) on at the scalar level; the
 * skip_on mask the walk generates iterations by (without those); the dense
 * schedule's note per walked tile iteration and the actual fill's. */
uint32_t exact_outer_cond(const engine *e, unsigned b, unsigned i);
void exact_outer_setup(engine *e);
uint32_t exact_fill_skip_mask(const engine *e, unsigned b, unsigned i);
void exact_outer_dense(engine *e, unsigned b, unsigned i, uint64_t nnz, uint64_t meta);
void exact_outer_fill(engine *e, unsigned b, unsigned i, uint64_t nnz, uint64_t meta);
/* Compute skipping and gating (model_scalar.c): an effectual innermost tile
 * iteration at c with its inputs' nonzeros (under compute_optimization
 * only); the compute's counts into
 * e->res at the end (every estimator: algorithmic and actual also without
 * compute_optimization). */
void exact_compute_note(engine *e, const uint64_t *c, const uint64_t *nnz);
void exact_compute_finish(engine *e);
/* stat at one buffer level (model_scalar.c): the scalar traversals, their
 * format bytes and the compute's points from the sums over the effectual
 * tile iterations of boundary bd: operand_nnz[0] of input t_a's tiles,
 * [1] of the other's, and the iterations. */
void model_scalar_sums(engine *e, const boundary *bd, unsigned t_a, const double *operand_nnz,
                       double effectual);
/* bypass.c: a tensor bypassed at a level (mapping.LEVEL.bypass) leaves its
 * row empty; its child's reads and writes go to the nearest kept level. */
void exact_bypass(engine *e);
void exact_record_tiles(const engine *e, tessel_result *r);
void exact_engine_free(engine *e);
void exact_boundary_free(engine *e, boundary *bd);
/* exact_roles.c */
int exact_oom(engine *e);
/* The same naming the step and the bytes it asked for (issue 25 item 9). */
int exact_oom_step(engine *e, const char *step, uint64_t bytes);
int exact_setup_roles(engine *e, const tessel_workload_data *w);
/* workload_count.c: rule 3's output count of e's operands (roles set up
 * from w, which may be NULL), within budget, kept with w; row_nnz (A's
 * rows entries, or NULL) takes each output row's nonzeros (not MTTKRP),
 * k_nnz (B's rows entries, or NULL) each k's first-reached nonzeros (A a
 * matrix; tessel_output_count_detail). */
int model_output_count(const engine *e, const tessel_workload_data *w, double budget,
                       tessel_output_count *out, int *counted, double *row_nnz,
                       double *k_nnz, tessel_diag *diag);
/* exact_geometry.c: tiles, composite loop keys, grids, tile bytes */
/* Level l's tile edge for engine index x: 0 = the whole extent (tile),
 * or clamped to the extent, at least 1 (edge). */
uint64_t exact_level_tile(const engine *e, unsigned l, unsigned x);
/* Rank d of operand o's format at level l runs along its mode rmode[d]
 * (the tensor's rank_order there, else the mode order); 1 when that is
 * not the identity. */
int exact_rank_modes(const engine *e, const operand *o, unsigned l, unsigned char *rmode);
uint64_t exact_level_edge(const engine *e, unsigned l, unsigned x);
/* Position of engine index x in level l's loop order (NX: SpMV's unit index). */
unsigned exact_order_pos(const engine *e, unsigned l, unsigned x);
int exact_geometry(engine *e, boundary *bd);
uint64_t exact_loop_key(const boundary *bd, const uint64_t *c);
void exact_loop_decode(const boundary *bd, uint64_t k, uint64_t *c);
uint64_t exact_reduction_key(const engine *e, const boundary *bd, const uint64_t *c);
uint64_t exact_tile_key(const boundary *bd, const operand *o, const uint64_t *c);
int exact_build_grids(engine *e, boundary *bd);
/* Boundary b's geometry, tile grids and input tile costs (with ranked
 * inputs' occupancy): what the walk and the feasibility check start from.
 * Release with exact_boundary_free, also after a failure. */
int exact_boundary_prepare(engine *e, unsigned b, boundary *bd);
int exact_index_grid(engine *e, boundary *bd, unsigned i);
uint64_t exact_grid_lower(const tessel_tile_grid *g, uint64_t group, uint64_t key);
uint64_t exact_tile_index(const engine *e, const boundary *bd, unsigned i, const uint64_t *c);
uint64_t exact_tile_nnz(const engine *e, const boundary *bd, unsigned i, const uint64_t *c);
int exact_input_occupancy(engine *e, boundary *bd, unsigned i);
int exact_tile_cost_init(const engine *e, const boundary *bd, const operand *o, tile_cost *tc);
void exact_tile_bytes(const tile_cost *tc, uint64_t n, const uint64_t *occ, uint64_t *data,
                      uint64_t *meta);
/* exact_output.c: the output tables */
int exact_build_output(engine *e, boundary *bd, int ranked, uint64_t *macs);
uint64_t exact_output_count(const boundary *bd, unsigned d, uint64_t key, uint64_t red,
                            uint64_t *cursor);
void exact_output_occupancy(const boundary *bd, uint64_t key, uint64_t red, uint64_t *cursors,
                            uint64_t *occupied);
void exact_table_free(const tessel_allocator *a, out_table *t);
/* The tables for output rows [r0, r1) only (their slabs), replacing the
 * previous range's; the emitter carries whole-output counts over. */
struct out_emitter;
int exact_output_rows_begin(engine *e, boundary *bd, struct out_emitter **h);
int exact_output_rows(engine *e, boundary *bd, struct out_emitter *h, unsigned m, uint64_t lo,
                      uint64_t hi, uint64_t *macs);
/* The tables of rows from lo on, up to the first slab start where they
 * hold `budget` entries: *hi is that row, UINT64_MAX when the rows ran out. */
int exact_output_rows_upto(engine *e, boundary *bd, struct out_emitter *h, uint64_t lo,
                           uint64_t budget, uint64_t *hi, uint64_t *macs);
void exact_output_rows_end(engine *e, struct out_emitter *h);
/* exact_walk.c: iterations and the walk */
/* The guard of one boundary's walk: more keys are refused (exact_too_many). */
#define EXACT_MAX_ITERATIONS (UINT64_C(1) << 31)
int exact_too_many(engine *e, const boundary *bd);
int exact_all_effectual(const engine *e, const boundary *bd);
/* The sorted distinct loop keys to walk (inside rng, or all with NULL). */
int exact_gen_iterations(engine *e, const boundary *bd, model_vec *keys, int *all_effectual,
                         exact_range *rng);
/* live: price output runs as they end (exact_stream.c) instead of
 * recording them. exact_walker_end also releases w after a failure. */
int exact_walker_begin(engine *e, const boundary *bd, int all_effectual, int live,
                       exact_walker *w);
int exact_walker_keys(exact_walker *w, const uint64_t *keys, uint64_t n);
int exact_walker_end(exact_walker *w, int rc);
int exact_walker_flush(exact_walker *w);
/* The old walk: all keys generated, sorted and walked at once. */
int exact_walk_all(engine *e, const boundary *bd);
/* Bytes of output tile `key` as it stands after reduction prefix red. */
void exact_output_bytes(const boundary *bd, uint64_t key, uint64_t red, uint64_t *cursors,
                        uint64_t *data, uint64_t *meta);
void exact_note_tile(tessel_traffic *tr, uint64_t part, uint64_t bytes);
void exact_note_network(const tessel_spec *spec, unsigned b, tessel_traffic *tr, uint64_t data);
/* exact_walk.c: rule 1, a fill of an input tile of data + meta bytes into
 * level b's partition part (counted in tr, and in r when it overflows);
 * rule 4, the excess over part of a resident tile used again, streamed
 * in once more: its bytes (0 when the tile fits). */
void exact_charge_fill(const tessel_spec *spec, unsigned b, tessel_result *r, tessel_traffic *tr,
                       uint64_t part, uint64_t data, uint64_t meta);
uint64_t exact_charge_excess(tessel_traffic *tr, uint64_t part, uint64_t data, uint64_t meta);
/* exact_fold.c: the per-step network count packed as STONNE packs its folds */
uint64_t exact_fold_pack(const uint64_t *row_values, uint64_t nrows, uint64_t lanes,
                         uint64_t width);
int exact_fold_note(engine *e, const boundary *bd);
/* exact_stream.c: the walk of one boundary in chunks of keys, memory
 * O(tiles + output tiles); e->walk.old_walk walks every key at once
 * (the comparison test's reference) */
int exact_walk_boundary(engine *e, const boundary *bd);
/* The output tables and the walk of boundary bd: the tables a range of
 * output rows at a time when the walk's outermost loop is the output's
 * first index and no output tile can spill, else whole first. */
int exact_output_and_walk(engine *e, boundary *bd, uint64_t *macs);
int exact_live_init(engine *e, const boundary *bd, exact_out_live *lv);
int exact_live_writeback(engine *e, const boundary *bd, exact_out_live *lv, uint64_t key,
                         uint64_t red);
int exact_live_spill(engine *e, const boundary *bd, exact_out_live *lv, uint64_t key,
                     uint64_t red);
void exact_live_free(engine *e, exact_out_live *lv);
/* Tensor t's partition of level b in bytes (0 = unbounded): given bytes,
 * else the fraction of the capacity, else an equal share. */
uint64_t exact_partition_bytes(const engine *e, unsigned b, unsigned t);
void exact_algorithmic_counts(engine *e, const boundary *bd);
void exact_compulsory(engine *e, const boundary *bd);
/* exact_bumped.c: rule 4 per read of the child level (inner levels) */
/* Input i's tile at level l holding level-l tile coordinates lc, packed:
 * the key of the overbooked tiles' tables. */
uint64_t exact_ob_key(const engine *e, unsigned l, unsigned i, const uint64_t *lc);
int exact_ob_note(engine *e, const boundary *bd, unsigned i, const uint64_t *c, uint64_t nnz,
                  uint64_t data, uint64_t meta, uint64_t part, int fill);
int exact_ob_child(engine *e, const boundary *bd, unsigned i, const uint64_t *c, uint64_t nnz);
/* Level b's (the innermost) reads beyond the fills of its overbooked tiles
 * re-stream their bumped share from the parent tile: reads of it, added to
 * its child_nnz before level b-1 is settled (docs/semantics.md rule 4). */
void exact_ob_cascade(engine *e, unsigned b);
void exact_ob_settle(engine *e, unsigned b);
void exact_ob_free(engine *e);
/* exact_inspill.c: rule 4 per read of the compute at the innermost level.
 * How the compute at level b reads input i: once per tile use, per fibre
 * of the other operand met in the k band, or per nonzero of the other
 * operand on each k; TTM and MTTKRP: per distinct assignment of the
 * indices i does not carry that the others' nonzeros reach (JOIN). */
enum { EXACT_READS_ONCE, EXACT_READS_FIBRES, EXACT_READS_ELEMENTS, EXACT_READS_JOIN };
int exact_inspill_reads(const engine *e, unsigned b, unsigned i);
/* The compute's reads of level b's recorded overbooked tiles (child_nnz),
 * cascaded to level b-1 (exact_ob_cascade); exact_ob_settle follows. */
int exact_inspill_count(engine *e, unsigned b);
/* exact_outspill.c: rule 4 per update step of an output tile */
/* Edge along output index x of the live group at boundary b, whose tile
 * edge is `tile` (docs/semantics.md rule 4, "The order inside a tile"). */
uint64_t exact_live_edge(const engine *e, unsigned b, unsigned x, uint64_t tile);
int exact_outspill_prepare(engine *e, const boundary *bd, exact_outspill *os);
void exact_outspill_price(engine *e, const boundary *bd, exact_outspill *os,
                          const model_vec *events);
/* Its two halves: the tiles' runs (events of the tiles in the tables
 * now), and the steps inside visits (once per boundary). */
void exact_outspill_price_runs(engine *e, const boundary *bd, exact_outspill *os,
                               const model_vec *events);
void exact_outspill_price_groups(engine *e, const boundary *bd, exact_outspill *os);
void exact_outspill_free(engine *e, exact_outspill *os);
/* One spill of an output tile of data + meta bytes over partition part:
 * the excess out and back, bumped_bytes and overflow_bytes. */
void exact_spill_charge(tessel_traffic *tr, uint64_t data, uint64_t meta, uint64_t part);
/* compulsory.c: rule 3, untiled in level 0's format (replaces the tiled
 * floor exact_compulsory left in compulsory_bytes; see there) */
int exact_output_needs_prefixes(const engine *e);
int exact_untiled_compulsory(engine *e, const boundary *bd);

#endif

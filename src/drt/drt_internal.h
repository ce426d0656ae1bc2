/* Private to module drt (the .c files of src/drt): micro-tile grids, the output
 * tables and the walker that forms DRT tasks (drt §3-4). */
#ifndef TESSEL_DRT_INTERNAL_H
#define TESSEL_DRT_INTERNAL_H

#include <stdint.h>

#include "tessel/drt.h"

/* Engine indices of Z[i,j] = A[i,k] * B[k,j]: whatever the einsum calls
 * them, i is the output's first index, j its second, k the contracted one.
 * SpMV has no j: it is a unit index of extent 1. */
enum { DRT_I = 0, DRT_J = 1, DRT_K = 2, DRT_NX = 3 };
/* Roles: 0 the output Z, 1 the input A (i, k), 2 the input B (k, j). */
enum { DRT_Z = 0, DRT_A = 1, DRT_B = 2 };

typedef struct drt_roles {
    tessel_workload_kind kind;
    int spec_index[DRT_NX]; /* workload index number of each engine index; -1: SpMV's j */
    unsigned tensor[3];     /* workload tensor number of Z, A, B */
    uint64_t extent[DRT_NX];
} drt_roles;

/* Lines of a micro grid: the non-empty micro tiles whose coordinate along
 * one index is `line`, sorted by their coordinate along the other index.
 * cnz is the running nonzero count (cnz[p] = nonzeros of entries < p), so
 * any run of a line costs two binary searches (drt §4.1: micro-tile
 * footprints kept beside the metadata). */
typedef struct drt_lines {
    uint64_t nlines;
    uint64_t *ptr;   /* nlines + 1 */
    uint32_t *other; /* per entry */
    uint64_t *cnz;   /* entries + 1 */
} drt_lines;

/* The non-empty micro tiles of one input (drt §3.2.1): counts only, so
 * every footprint follows from (tiles, nonzeros) and the level's format.
 * After drt_data_build the lines hold only the micro tiles that have a
 * partner: those on a k micro line where the other input has a non-empty
 * micro tile (the others never take part in an effectual intersection,
 * drt §4.1, and are never loaded); ntiles and nnz count those, ntiles_all
 * and nnz_all the whole input (compulsory traffic, docs/semantics.md rule 3). */
typedef struct drt_grid {
    unsigned x[2];   /* engine index of its rows and its columns */
    uint64_t ntiles, nnz;
    uint64_t ntiles_all, nnz_all;
    /* tiled-csf (docs/spec.md): the whole input's row segments in its
     * micro tiles with rows along x[0] (segs[0]) or x[1] (segs[1]), over
     * segs_tiles non-empty micro tiles; a sub-problem keeps its input's */
    uint64_t segs[2], segs_tiles;
    drt_lines by[2]; /* by[m]: lines of constant coordinate along x[m] */
} drt_grid;

/* The output's micro tiles with, per tile, a step function of the
 * reduction prefix: entries (kq, cum) ascending in kq. Exact: cum is the
 * number of the tile's output nonzeros whose first product has a micro k
 * index <= kq (symbolic multiplication). Stat: cum is the summed hazard
 * sum_{Kb <= kq} lambda (see drt_output.c) of each element of the tile. */
typedef struct drt_otable {
    int stat;
    uint64_t ntiles, nent;
    uint64_t rows, cols;   /* micro tiles along i and j */
    uint64_t *row_ptr;     /* rows + 1: tiles sorted by (I, J) */
    uint32_t *tile_i, *tile_j;
    uint64_t *col_ptr;     /* cols + 1 */
    uint64_t *col_tile;    /* tile numbers by (J, I) */
    uint64_t *start;       /* ntiles + 1 */
    uint32_t *kq;
    double *cum;
    /* the multiplies after each prefix, beside cum (exact: built only for
     * dataflow: outer-product, else NULL; stat: always, their expectation) */
    double *mul;
    double total_n, total_m; /* the final output: nonzeros, non-empty micro tiles */
    /* the final output's row segments (a row i inside one micro tile, for
     * Z in tiled-csf, docs/spec.md): counted (exact), expected (stat) */
    double segs;
} drt_otable;

/* Everything a design point needs, from one pass over each input. */
typedef struct drt_data {
    const tessel_allocator *alloc;
    drt_roles roles;
    uint64_t micro[2];     /* the options' micro shape */
    uint64_t mu[DRT_NX];   /* micro edge per engine index, cut to the extent */
    uint64_t mext[DRT_NX]; /* micro tiles per engine index */
    drt_grid grid[3];      /* [DRT_A], [DRT_B] */
    uint64_t macs;
    drt_otable out;
    double seconds;        /* collection time */
    double scale;          /* stat: calibration of the output hazards (drt_output.c) */
    double out_count;      /* stat: Z's nonzeros counted exactly for rule 3, or -1 */
    int partials;          /* exact: build out.mul (the spec's dataflow is outer-product) */
} drt_data;

struct tessel_drt_stats {
    drt_data d;
    tessel_drt_growth growth;
};

/* drt.c */
int drt_oom(tessel_diag *diag);
int drt_roles_of(const tessel_spec *spec, drt_roles *r, tessel_diag *diag);
int drt_check_options(const tessel_drt_options *opt, tessel_diag *diag);
/* s was collected for spec's einsum; growth is known. */
int drt_check_stats(const tessel_spec *spec, const tessel_drt_stats *s, tessel_drt_growth growth,
                    tessel_diag *diag);

/* drt_levels.c */
/* spec has exactly two buffer levels; cut = spec cut to DRAM + LLB. */
int drt_check_levels(const tessel_spec *spec, tessel_spec *cut, tessel_diag *diag);
int drt_levels_walk(const tessel_spec *spec, const drt_data *d, tessel_drt_growth growth,
                    tessel_result *out, tessel_drt_summary summary[2], tessel_diag *diag);

/* drt_grid.c */
int drt_data_build(const tessel_spec *spec, const tessel_workload_data *w,
                   const tessel_drt_options *opt, const tessel_allocator *a, drt_data *d,
                   tessel_diag *diag);
void drt_data_free(drt_data *d);
/* Micro tiles and nonzeros of grid g on the line where engine index x has
 * micro coordinate c, with the other index in [lo, hi). */
void drt_strip(const drt_grid *g, unsigned x, uint64_t c, uint64_t lo, uint64_t hi, uint64_t *m,
               uint64_t *n);
/* Row-major view of a workload input as (rows = engine index r, columns
 * = the other): ptr over r, sorted column coordinates; borrowed from the
 * tensor when it is stored that way (owned = 0), else built. */
typedef struct drt_csr {
    uint64_t rows;
    const uint64_t *ptr;
    const uint32_t *col;
    uint64_t *own_ptr;
    uint32_t *own_col;
} drt_csr;
int drt_csr_view(const drt_data *d, const tessel_workload_data *w, unsigned role, unsigned rowx,
                 drt_csr *v);
void drt_csr_free(const tessel_allocator *a, drt_csr *v);

/* drt_output.c */
int drt_output_exact(drt_data *d, const tessel_workload_data *w, tessel_diag *diag);
int drt_output_stat(drt_data *d, const tessel_spec *spec, const tessel_workload_data *w,
                    tessel_diag *diag);
void drt_otable_free(const tessel_allocator *a, drt_otable *o);

/* drt_walk.c */
int drt_walk(const tessel_spec *spec, const drt_data *d, tessel_drt_growth growth,
             tessel_result *out, tessel_drt_summary *summary, tessel_diag *diag);

/* An effectual task's box in micro coordinates of the walked data: i
 * from A's tile, j from B's, k the task's reduction range. */
typedef struct drt_task_box {
    uint64_t lo[DRT_NX], hi[DRT_NX];
    /* out: the nonzeros the child level filled from A's and B's tiles
     * (indexed by role) while running the task, for rule 4's per-read
     * charge of an overbooked tile (docs/semantics.md) */
    double child_fill_nnz[3];
} drt_task_box;
/* Called after each effectual task; a nonzero return (a negative TESSEL_E
 * code with the diag filled) stops further calls and is returned by
 * drt_walk_run once the walk ends. */
typedef int (*drt_task_fn)(void *ctx, drt_task_box *box);

/* The walker's own sums before rounding into the result (a caller adding
 * many walks rounds once). */
typedef struct drt_walk_raw {
    double updates, in_data, in_meta, out_data, out_meta;
    uint64_t tasks;
    double edge_sum[DRT_NX], util_sum;
    uint64_t util_n;
    double fill_nnz[3]; /* nonzeros of A's and B's fills (by role) */
} drt_walk_raw;

typedef struct drt_walk_args {
    const tessel_spec *spec;
    unsigned level;       /* the buffer level (1 or 2) whose partitions, formats, order apply */
    const drt_data *d;    /* the grids walked */
    const drt_data *od;   /* owner of the output table (NULL: d) */
    uint64_t off[DRT_NX]; /* d's micro origin in od's coordinates */
    uint32_t *cursor;     /* od->out.ntiles cursors, zeroed once (NULL: the walk's own) */
    tessel_drt_growth growth;
    drt_task_fn on_task;  /* NULL: none */
    void *ctx;
    drt_walk_raw raw;     /* out */
} drt_walk_args;
/* The result's levels 0 and 1 are the backing store and args->level. */
int drt_walk_run(drt_walk_args *args, tessel_result *out, tessel_drt_summary *summary,
                 tessel_diag *diag);

/* The first position p in [lo, hi) with v[p] >= key (v ascending there), or hi. */
uint64_t drt_lower_bound(const uint32_t *v, uint64_t lo, uint64_t hi, uint64_t key);

#endif

/* Private to the DRT walker (src/drt/drt_walk*.c, drt_grow.c): the walker
 * state and the tiles it grows, and the functions its files call across
 * files (the smallest, on the walks' inner loops, inline here as they
 * were inlined within the one file before the split). The model:
 * drt_walk.c's top comment. */
#ifndef TESSEL_DRT_WALK_INTERNAL_H
#define TESSEL_DRT_WALK_INTERNAL_H

#include <math.h>
#include <string.h>

#include "drt_internal.h"

typedef struct cost {
    uint64_t fixed_bits, per_bits; /* per micro tile, per nonzero */
    /* tiled-csf: a micro tile's row segments at their mean over the input,
     * seg_num / seg_den bits per micro tile (0 / 1 otherwise) */
    uint64_t seg_num, seg_den;
    uint64_t seg_bits;             /* tiled-csf: one row segment's bits, else 0 */
    uint64_t value_bits;
    uint64_t part;                 /* partition bytes; 0 = unbounded */
} cost;

/* A macro tile of one input: micro ranges per engine index (only its two
 * indices are meaningful), micro tiles, nonzeros, and the nonzeros the
 * task uses (less than n for a subdivided task's resident U). */
typedef struct tile {
    uint64_t lo[DRT_NX], hi[DRT_NX];
    uint64_t m, n, use;
    uint64_t h; /* signature of the loaded micro tiles (0: fixed by the box) */
    uint64_t data, meta;
} tile;

/* Micro tiles, nonzeros and signature summed per micro line, and the
 * lines touched (sorted by acc_sort); all zero again after acc_clear. */
typedef struct acc {
    uint64_t *m, *n, *h;
    uint64_t *list, *scratch;
    uint64_t len;
} acc;

typedef struct oq {
    double n, m, logempty;
    double mul; /* multiplies so far (out.mul; 0 without it) */
} oq;

/* Rule 4 for the output while a tile grows (drt_walk_out.c): the output
 * tile's footprint is checked against Z's partition as an input index
 * that spans it grows. Lines mode: the other output index's range is not
 * decided yet, so each of its micro lines must fit alone (per-line sums
 * in lm, ln); rect mode: the other range is [lo, hi) and the running sums
 * are m, n. k is the reduction prefix (local) the tile holds at its end. */
typedef struct zgrow {
    int active, lines;
    unsigned x;      /* DRT_I or DRT_J: the output index growing */
    uint64_t lo, hi; /* rect mode: the other index's micro range */
    uint64_t k;
    double m, n;
    double *lm, *ln;
    uint64_t *touched, ntouched;
} zgrow;

typedef struct walker {
    const drt_data *d;
    /* the output table's owner and d's micro origin in it: d is a task's
     * sub-problem in drt_levels.c (local coordinates), else od == d */
    const drt_data *od;
    uint64_t off[DRT_NX];
    const tessel_spec *spec;
    unsigned lv; /* the buffer level whose partitions, formats and order apply */
    drt_task_fn on_task;
    void *ctx;
    int err; /* the first error of on_task (later tasks are not reported) */
    tessel_result *r;
    tessel_drt_growth growth;
    cost c[3];
    unsigned order[DRT_NX];
    int has_res[3], has_prev[3];
    tile res[3], prev[3];
    /* nonzeros the child level filled from each resident input tile
     * during its residency (rule 4 per child read; only with on_task) */
    double child_nnz[3];
    double fill_nnz[3]; /* nonzeros of this walk's fills, by role */
    uint64_t alg[3];
    /* output: resident tile (i and j micro ranges) and the end of the
     * reduction prefix it holds */
    int zres;
    uint64_t zlo[2], zhi[2], zk;
    uint32_t *cursor;
    /* per-line accumulators: ka over k (the resident U tile's micro
     * tiles), wa over x2 (stationary sweeps) or k (output stationary) */
    acc ka, wa;
    uint64_t *scratch;
    /* output stationary: V's partnered micro tiles by x1 line (bucket c
     * is [boff[c], boff[c + 1]) of bk, bn) */
    uint64_t *boff, *bn;
    uint32_t *bk;
    double updates, in_data, in_meta, out_data, out_meta;
    /* rule 4 for the output: spilled bytes (out and back in), write-backs
     * of tiles larger than Z's partition, the largest output tile */
    double spill, overflow_wb, z_worst;
    zgrow zg;
    /* summary */
    uint64_t tasks;
    double edge_sum[DRT_NX], util_sum;
    uint64_t util_n;
} walker;

/* drt_grow.c: footprints, tile growth (drt Alg. 2) and the per-line accumulators */
/* Bits of m micro tiles holding n nonzeros. */
static inline uint64_t drt_w_bits(const cost *c, uint64_t m, uint64_t n)
{
    uint64_t segs = 0;
    if (c->seg_num) {
        double s = ceil((double)m * (double)c->seg_num / (double)c->seg_den);
        segs = s >= 1.8e19 ? UINT64_MAX / 2 : (uint64_t)s;
    }
    return m * c->fixed_bits + n * c->per_bits + segs;
}
static inline void drt_w_bytes_of(const cost *c, uint64_t m, uint64_t n, uint64_t *data,
                                  uint64_t *meta)
{
    uint64_t total = (drt_w_bits(c, m, n) + 7) / 8;
    uint64_t d = (n * c->value_bits + 7) / 8;
    *data = d < total ? d : total;
    *meta = total - *data;
}
static inline int drt_w_fits(const walker *w, unsigned role, uint64_t m, uint64_t n)
{
    const cost *c = &w->c[role];
    if (!c->part)
        return 1;
    return (drt_w_bits(c, m, n) + 7) / 8 <= c->part;
}
/* Index of role's grid other than x. */
static inline unsigned drt_w_other_index(const walker *w, unsigned role, unsigned x)
{
    const drt_grid *g = &w->d->grid[role];
    return g->x[0] == x ? g->x[1] : g->x[0];
}
void drt_w_rect_sum(const walker *w, unsigned role, const uint64_t *lo, const uint64_t *hi,
                    uint64_t *m, uint64_t *n);
void drt_w_grow(walker *w, unsigned role, const uint64_t *lo, uint64_t *hi,
                const unsigned *dims, unsigned nd, uint64_t *m, uint64_t *n);
void drt_w_make_tile(const walker *w, unsigned role, const uint64_t *lo, const uint64_t *hi,
                     uint64_t m, uint64_t n, uint64_t h, tile *t);
/* The same macro tile: the same box holding the same loaded micro tiles
 * (under partner-aware loading one box may load different subsets). */
static inline int drt_w_same_tile(const tile *a, const tile *b)
{
    return !memcmp(a->lo, b->lo, sizeof(a->lo)) && !memcmp(a->hi, b->hi, sizeof(a->hi)) &&
           a->m == b->m && a->n == b->n && a->h == b->h;
}
/* Signature term of the micro tile at k micro line kx and other micro
 * coordinate c (a splitmix64 finaliser); a loaded set's signature is the
 * sum of its tiles' terms, so it can be summed per line. Only compared
 * between tiles of one input with the same box. */
static inline uint64_t drt_w_tile_id(uint64_t kx, uint64_t c)
{
    uint64_t z = (kx << 32 | c) + UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}
static inline void drt_w_acc_add(acc *a, uint64_t line, uint64_t n, uint64_t h)
{
    if (!a->m[line])
        a->list[a->len++] = line;
    a->m[line]++;
    a->n[line] += n;
    a->h[line] += h;
}
void drt_w_acc_sort(acc *a, uint64_t bound);
void drt_w_acc_sort_within(acc *a, const acc *sup, uint64_t bound);
void drt_w_acc_clear(acc *a);

/* drt_walk_out.c: the output tile: partial nonzeros, write-backs, spills (rules 2, 4) */
void drt_w_write_back(walker *w);
void drt_w_out_bytes(const walker *w, const oq *q, double *data, double *meta);
static inline double drt_w_span(const drt_data *d, unsigned x, uint64_t lo, uint64_t hi)
{
    uint64_t e = d->roles.extent[x], a = lo * d->mu[x], b = hi * d->mu[x];
    return (double)((b < e ? b : e) - (a < e ? a : e));
}
void drt_w_spill(walker *w);
void drt_w_partials(walker *w, uint64_t k0, uint64_t k1);
void drt_w_zg_lines(walker *w, unsigned x, uint64_t k);
void drt_w_zg_rect(walker *w, unsigned x, uint64_t lo, uint64_t hi, uint64_t k);
uint64_t drt_w_zg_add(walker *w, uint64_t from, uint64_t to, int force);
void drt_w_zg_end(walker *w);
void drt_w_read_back(walker *w, uint64_t k0);

/* drt_walk_setup.c: partitions, costs, loop order, and the result */
uint64_t drt_w_partition_bytes(const tessel_spec *s, unsigned level, unsigned t);
int drt_w_setup_costs(walker *w, tessel_diag *diag);
void drt_w_setup_order(walker *w);
void drt_w_finish(walker *w, tessel_drt_summary *summary);

#endif

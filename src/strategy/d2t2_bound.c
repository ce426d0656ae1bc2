/* A lower bound of a d2t2 candidate's price (issue 19 item 2): the bytes
 * across the level's boundary can only exceed the refills of the input
 * re-read under the outermost loop, so a candidate whose bound already
 * exceeds the best price found is not priced (d2t2.c). The bound is one
 * pass over the two inputs' base grids (no grid derived), a small
 * fraction of the stat estimator's cost on the shapes it discards (small
 * tiles, where the estimator walks millions of tile pairs). */
#include <math.h>
#include <string.h>

#include "strategy_internal.h"

/* The workload index of input in's mode m, or -1. */
static int mode_of(const strat_input *in, unsigned x)
{
    for (unsigned m = 0; m < in->order; m++)
        if (in->index[m] >= 0 && (unsigned)in->index[m] == x)
            return (int)m;
    return -1;
}

/* The base-grid tiles per tile of `shape` along each of in's two modes
 * (0: shape is off the base grid, no bound); *ext the tiles of shape
 * along each mode. */
static int factors(const strat_input *in, const uint64_t *shape, uint64_t *f, uint64_t *ext)
{
    for (unsigned m = 0; m < 2; m++) {
        uint64_t b = in->base->tile[m], s = shape[m];
        if (s >= in->dims[m])
            s = (in->dims[m] + b - 1) / b * b;
        if (!s || s % b)
            return 0;
        f[m] = s / b;
        ext[m] = (in->dims[m] + s - 1) / s;
    }
    return 1;
}

/* Per tile kt of the contracted mode (kmode) of input in at `shape`, read
 * off the base grid (sorted by its mode-0 coordinate, so that tiles of
 * shape come in nondecreasing mode-0 tile): in cnt, its non-empty tiles
 * (a tile is new when `seen` does not hold its mode-0 tile yet); in nnz,
 * its nonzeros. 0 without memory. */
static int per_k(const strat_ctx *c, const strat_input *in, const uint64_t *f, unsigned kmode,
                 uint64_t *seen, uint64_t *cnt, uint64_t *nnz)
{
    const tessel_tile_grid *g = in->base;
    uint64_t *to0 = strat_div_table(c, g->extent[0], f[0]);
    uint64_t *to1 = strat_div_table(c, g->extent[1], f[1]);
    /* row by row of base tiles: c0 is the row's, the same counts */
    for (uint64_t r = 0; to0 && to1 && r < g->extent[0]; r++) {
        uint64_t c0 = to0[r], end = tessel_tile_grid_row_begin(g, r + 1);
        for (uint64_t n = tessel_tile_grid_row_begin(g, r); n < end; n++) {
            uint64_t c1 = to1[tessel_tile_grid_key(g, n)];
            uint64_t kt = kmode == 0 ? c0 : c1;
            if (seen[c1] != c0 + 1) {
                seen[c1] = c0 + 1;
                cnt[kt]++;
            }
            nnz[kt] += tessel_tile_grid_count(g, n);
        }
    }
    int ok = to0 && to1;
    tessel_dealloc(c->alloc, to0);
    tessel_dealloc(c->alloc, to1);
    return ok;
}

/* What the bound reads off the base grids at one shape, kept for the
 * decision: candidates share their inputs' shapes (the corners' 125
 * shapes hold 25 per input), and each read is a pass over a base grid. */
#define BOUND_MEMO 128u
typedef struct bound_counts {
    unsigned input, kmode;
    uint64_t shape[2];
    uint64_t *cnt, *nnz; /* per_k's, per tile of the contracted mode */
} bound_counts;

/* row_reuse's largest R row per row of O's tiles, as distinct values and
 * how many rows have each (their bytes summed in any order are exact:
 * whole bytes far below 2^53). */
typedef struct bound_rows {
    unsigned o, r;
    uint64_t oshape[2], rk;
    int ok;
    uint64_t n;
    uint64_t *value, *times;
} bound_rows;

struct d2t2_bound_memo {
    unsigned ncounts, nrows;
    bound_counts counts[BOUND_MEMO];
    bound_rows rows[BOUND_MEMO];
};

static void memo_clear(const strat_ctx *c, struct d2t2_bound_memo *m)
{
    for (unsigned k = 0; k < m->ncounts; k++) {
        tessel_dealloc(c->alloc, m->counts[k].cnt);
        tessel_dealloc(c->alloc, m->counts[k].nnz);
    }
    for (unsigned k = 0; k < m->nrows; k++) {
        tessel_dealloc(c->alloc, m->rows[k].value);
        tessel_dealloc(c->alloc, m->rows[k].times);
    }
    m->ncounts = m->nrows = 0;
}

void d2t2_bound_forget(strat_ctx *c)
{
    if (!c->bound)
        return;
    memo_clear(c, c->bound);
    tessel_dealloc(c->alloc, c->bound);
    c->bound = NULL;
}

/* The memo with room for what one bound adds (two counts, one rows),
 * emptied when full (entries read by an earlier bound only); NULL
 * without memory. */
static struct d2t2_bound_memo *memo_of(strat_ctx *c)
{
    if (!c->bound && (c->bound = tessel_alloc(c->alloc, sizeof(*c->bound))))
        c->bound->ncounts = c->bound->nrows = 0;
    if (c->bound && (c->bound->ncounts + 2 > BOUND_MEMO || c->bound->nrows + 1 > BOUND_MEMO))
        memo_clear(c, c->bound);
    return c->bound;
}

/* per_k of input in at shape (kmode contracted), from the memo or counted
 * now (ext tiles along kmode, ext1 along mode 1); NULL without memory. */
static const bound_counts *counts_of(strat_ctx *c, const strat_input *in, const uint64_t *shape,
                                     const uint64_t *f, unsigned kmode, uint64_t ext,
                                     uint64_t ext1)
{
    unsigned who = (unsigned)(in - c->in);
    struct d2t2_bound_memo *m = c->bound; /* room made by memo_of */
    for (unsigned k = 0; m && k < m->ncounts; k++) {
        const bound_counts *e = &m->counts[k];
        if (e->input == who && e->kmode == kmode && e->shape[0] == shape[0] &&
            e->shape[1] == shape[1])
            return e;
    }
    if (!m)
        return NULL;
    bound_counts *e = &m->counts[m->ncounts];
    e->input = who;
    e->kmode = kmode;
    e->shape[0] = shape[0];
    e->shape[1] = shape[1];
    e->cnt = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    e->nnz = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    uint64_t *seen = tessel_alloc_array(c->alloc, ext1, sizeof(uint64_t));
    int ok = e->cnt && e->nnz && seen;
    if (ok) {
        memset(e->cnt, 0, ext * sizeof(uint64_t));
        memset(e->nnz, 0, ext * sizeof(uint64_t));
        memset(seen, 0, ext1 * sizeof(uint64_t));
        ok = per_k(c, in, f, kmode, seen, e->cnt, e->nnz);
    }
    tessel_dealloc(c->alloc, seen);
    if (!ok) {
        tessel_dealloc(c->alloc, e->cnt);
        tessel_dealloc(c->alloc, e->nnz);
        return NULL;
    }
    m->ncounts++;
    return e;
}

/* The largest R row k kept from one row of O's tiles (along u, O's mode
 * 0) to the next, per row: IJK's walk keeps R's tile when row u's first
 * pair starts on the (k, j) tile the previous row with a pair ended on,
 * so k is in both rows; the tile holds at most R's nonzeros in row k.
 * Rows without one are left out. ok 0 without memory. */
/* rows_count's state: the row of O's tiles being read (u), the one before
 * it, the largest R row kept into it so far, and the largest per row. */
typedef struct rows_acc {
    uint64_t row, prev, most;
    uint64_t n, cap, *most_of;
} rows_acc;

/* The walk moves to row u of O's tiles: the row it leaves keeps its
 * largest, if any. 0 without memory. */
static int row_change(strat_ctx *c, rows_acc *a, uint64_t u)
{
    if (a->most && a->n == a->cap) {
        uint64_t *grown = tessel_alloc_array(c->alloc, a->cap * 2, sizeof(uint64_t));
        if (grown)
            memcpy(grown, a->most_of, a->n * sizeof(uint64_t));
        tessel_dealloc(c->alloc, a->most_of);
        a->most_of = grown;
        a->cap *= 2;
        if (!grown)
            return 0;
    }
    if (a->most)
        a->most_of[a->n++] = a->most;
    a->prev = a->row;
    a->row = u;
    a->most = 0;
    return 1;
}

static void rows_count(strat_ctx *c, const strat_input *o, const uint64_t *fo,
                       const uint64_t *nnz_r, uint64_t ext, bound_rows *e)
{
    const tessel_tile_grid *g = o->base;
    uint64_t *to0 = strat_div_table(c, g->extent[0], fo[0]);
    uint64_t *to1 = strat_div_table(c, g->extent[1], fo[1]);
    uint64_t *last = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    rows_acc a = { UINT64_MAX, UINT64_MAX, 0, 0, 64, NULL };
    a.most_of = tessel_alloc_array(c->alloc, a.cap, sizeof(uint64_t));
    e->ok = to0 && to1 && last && a.most_of;
    if (e->ok) {
        memset(last, 0, ext * sizeof(uint64_t));
        /* row by row of base tiles, u the row's */
        for (uint64_t r = 0; e->ok && r < g->extent[0]; r++) {
            uint64_t u = to0[r], end = tessel_tile_grid_row_begin(g, r + 1);
            for (uint64_t k = tessel_tile_grid_row_begin(g, r); k < end; k++) {
                uint64_t kt = to1[tessel_tile_grid_key(g, k)];
                if (!nnz_r[kt])
                    continue; /* no multiply: the tile joins no pair */
                if (u != a.row && !(e->ok = row_change(c, &a, u)))
                    break;
                if (a.prev != UINT64_MAX && last[kt] == a.prev + 1 && nnz_r[kt] > a.most)
                    a.most = nnz_r[kt];
                if (last[kt] != u + 1)
                    last[kt] = u + 1;
            }
        }
        if (e->ok && a.row != UINT64_MAX)
            e->ok = row_change(c, &a, UINT64_MAX);
    }
    uint64_t n = a.n, *most_of = a.most_of;
    e->n = 0;
    e->value = e->times = NULL;
    if (e->ok && n) { /* distinct values and their counts */
        tessel_sort_u64_inplace(most_of, n, UINT64_MAX);
        e->value = tessel_alloc_array(c->alloc, n, sizeof(uint64_t));
        e->times = tessel_alloc_array(c->alloc, n, sizeof(uint64_t));
        e->ok = e->value && e->times;
        for (uint64_t k = 0; e->ok && k < n; k++) {
            if (!e->n || e->value[e->n - 1] != most_of[k]) {
                e->value[e->n] = most_of[k];
                e->times[e->n++] = 0;
            }
            e->times[e->n - 1]++;
        }
    }
    tessel_dealloc(c->alloc, to0);
    tessel_dealloc(c->alloc, to1);
    tessel_dealloc(c->alloc, last);
    tessel_dealloc(c->alloc, most_of);
}

/* What one tile of an input costs at level l as the stat estimator prices
 * it (rule 1: ceil((fixed + n per) / 8) bytes for n nonzeros, the formats
 * of tessel_format_footprint_bits) in the input's own mode order, or
 * bounded over both orders when a rank order is given (it may swap which
 * mode's offsets are stored): lo below every tile's price, hi above. affine 0 for the formats whose
 * price is not affine in n (per-rank formats, tiled-csf): there lo is the
 * empty tile plus the values, halved (a margin), and hi the strategy's
 * footprint. */
typedef struct tile_price {
    int affine;
    double fixed_lo, per_lo, fixed_hi, per_hi;
    double empty, value;  /* !affine: the strategy's empty tile, value bytes */
    const strat_ctx *c;
    unsigned l;
    const strat_input *in;
    const uint64_t *shape;
} tile_price;

static void tile_price_init(const strat_ctx *c, unsigned l, const strat_input *in,
                            const uint64_t *shape, tile_price *tp)
{
    const tessel_spec_level *lv = &c->spec->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[in->tensor];
    int fmt = tl->format >= 0 ? tl->format : lv->format;
    memset(tp, 0, sizeof(*tp));
    tp->c = c;
    tp->l = l;
    tp->in = in;
    tp->shape = shape;
    tp->affine = fmt != TESSEL_SPEC_FORMAT_RANKS && fmt != TESSEL_SPEC_FORMAT_TILED_CSF &&
                 in->order == 2;
    if (!tp->affine) {
        tp->empty = (double)strat_tile_bytes(c, l, in, shape, 0);
        tp->value = (double)lv->value_bits / 8;
        return;
    }
    tessel_format_widths w = { .value_bits = lv->value_bits, .coord_bits = lv->coord_bits,
                               .offset_bits = lv->offset_bits, .run_bits = lv->run_bits };
    /* a rank order (docs/spec.md) may store the modes the other way round */
    uint64_t other[2] = { shape[1], shape[0] };
    double f0, p0, f1, p1;
    tessel_format_footprint_bits(tessel_model_format(fmt), 2, shape, &w, &f0, &p0);
    tessel_format_footprint_bits(tessel_model_format(fmt), 2, tl->nrank_order ? other : shape,
                                 &w, &f1, &p1);
    tp->fixed_lo = f0 < f1 ? f0 : f1;
    tp->per_lo = p0 < p1 ? p0 : p1;
    tp->fixed_hi = f0 > f1 ? f0 : f1;
    tp->per_hi = p0 > p1 ? p0 : p1;
}

/* At most the price of one tile of n nonzeros. */
static double price_most(const tile_price *tp, uint64_t n)
{
    if (!tp->affine)
        return (double)strat_tile_bytes(tp->c, tp->l, tp->in, tp->shape, n);
    return ceil((tp->fixed_hi + (double)n * tp->per_hi) / 8);
}

/* At least the price of `fills` tiles holding nnz nonzeros in all, less
 * `saved` (bytes of fills saved, each at most its tile's price). */
static double price_least(const tile_price *tp, double fills, double nnz, double saved)
{
    double b = tp->affine ? (fills * tp->fixed_lo + nnz * tp->per_lo) / 8 - saved
                          : 0.5 * (fills * tp->empty + nnz * tp->value - saved);
    return b > 0 ? b : 0;
}

/* Bytes R's tiles can save by staying resident from one row of O's tiles
 * to the next (rows_count), each of R's row k at most rmax nonzeros. 0
 * (*ok 0) without memory. The rows are kept per (O's shape, R's k edge). */
static double row_reuse(strat_ctx *c, const tile_price *pr_r, const strat_input *o,
                        const uint64_t *so, const uint64_t *fo, const strat_input *r,
                        const uint64_t *sr, unsigned rk, const uint64_t *nnz_r, uint64_t ext,
                        uint64_t rmax, int *ok)
{
    unsigned ow = (unsigned)(o - c->in), rw = (unsigned)(r - c->in);
    struct d2t2_bound_memo *m = c->bound; /* room made by memo_of */
    bound_rows *e = NULL, one;
    for (unsigned k = 0; m && k < m->nrows && !e; k++)
        if (m->rows[k].o == ow && m->rows[k].r == rw && m->rows[k].oshape[0] == so[0] &&
            m->rows[k].oshape[1] == so[1] && m->rows[k].rk == sr[rk])
            e = &m->rows[k];
    if (!e) {
        e = m ? &m->rows[m->nrows] : &one;
        e->o = ow;
        e->r = rw;
        e->oshape[0] = so[0];
        e->oshape[1] = so[1];
        e->rk = sr[rk];
        rows_count(c, o, fo, nnz_r, ext, e);
        if (m && e->ok)
            m->nrows++;
    }
    double saved = 0;
    *ok = e->ok;
    for (uint64_t k = 0; e->ok && k < e->n; k++)
        saved += (double)e->times[k] * price_most(pr_r, e->value[k] < rmax ? e->value[k] : rmax);
    if (e == &one || !e->ok) {
        tessel_dealloc(c->alloc, e->value);
        tessel_dealloc(c->alloc, e->times);
    }
    return saved;
}

/* Under loop order (u, m, k) at level l, with u an index of input O only,
 * m of input R only and the contracted k innermost (SpMSpM, e.g. IJK):
 * inside one tile of u, R's tile (k, m) is used once per non-empty O tile
 * (u, k) (each input skips on the other's empty tiles, or more uses when
 * it does not), and consecutive uses of one R tile happen only across
 * two tiles of u, so R's fills number at least
 *   sum over k tiles of |O tiles in column k| x |R tiles in row k|
 * minus one per tile of u (row_reuse: only where two consecutive rows of
 * O share a k); each fill moves at least its values (rule 1, nnz x value
 * bits; an overbooked tile streams its overflow as well, rule 4). O's
 * tile (u, k) likewise is used once per non-empty R tile of row k, and
 * kept from one pair (u, m) to the next at most once per pair after a
 * row's first: at most (tiles of m - 1) per tile of u, each saving at
 * most O's largest tile. The two inputs' bounds add up. Half of each is
 * returned, a margin for value widths that a tensor sets narrower than
 * its level's; 0 where the bound does not apply (other workloads or
 * orders, or no grid at that shape). */
int d2t2_bound(strat_ctx *c, unsigned l, const strat_tiles *t, double *lb)
{
    *lb = 0;
    const tessel_spec_level *lv = &c->spec->level[l];
    if (c->nidx != 3 || c->nin != 2 || c->outer_first)
        return TESSEL_OK;
    unsigned u = lv->order[0], m = lv->order[1], k = lv->order[2];
    const strat_input *o = NULL, *r = NULL;
    for (unsigned i = 0; i < 2; i++) {
        const strat_input *in = &c->in[i];
        if (in->order != 2 || mode_of(in, k) < 0)
            return TESSEL_OK;
        if (mode_of(in, u) >= 0 && mode_of(in, m) < 0)
            o = in;
        else if (mode_of(in, m) >= 0 && mode_of(in, u) < 0)
            r = in;
    }
    if (!o || !r || o == r)
        return TESSEL_OK;
    uint64_t so[3], sr[3], fo[2], fr[2], eo[2], er[2], rmax = 0, omax = 0;
    strat_shape(c, o, t, so);
    strat_shape(c, r, t, sr);
    unsigned ok = (unsigned)mode_of(o, k), rk = (unsigned)mode_of(r, k);
    if (!o->base || !r->base || !factors(o, so, fo, eo) || !factors(r, sr, fr, er) ||
        eo[ok] != er[rk])
        return TESSEL_OK;
    /* the largest tiles: upper bounds of the bytes one reuse saves */
    int rc = strat_worst_occupancy(c, r, sr, WORST_STATS, &rmax);
    if (!rc)
        rc = strat_worst_occupancy(c, o, so, WORST_STATS, &omax);
    if (rc)
        return rc;
    uint64_t ext = eo[ok];
    struct d2t2_bound_memo *mm = memo_of(c);
    const bound_counts *co = mm ? counts_of(c, o, so, fo, ok, ext, eo[1]) : NULL;
    const bound_counts *cr = co ? counts_of(c, r, sr, fr, rk, ext, er[1]) : NULL;
    if (cr) { /* no memory: no bound */
        const uint64_t *cnt_o = co->cnt, *nnz_o = co->nnz, *cnt_r = cr->cnt, *nnz_r = cr->nnz;
        double uses_r = 0, uses_o = 0, E = 0;
        for (uint64_t x = 0; x < ext; x++) {
            E += (double)cnt_o[x] * (double)cnt_r[x]; /* effectual iterations */
            uses_r += (double)cnt_o[x] * (double)nnz_r[x];
            uses_o += (double)cnt_r[x] * (double)nnz_o[x];
        }
        tile_price pr_r, pr_o;
        tile_price_init(c, l, r, sr, &pr_r);
        tile_price_init(c, l, o, so, &pr_o);
        int rows = 0;
        double reuse_r = ok == 1 ? row_reuse(c, &pr_r, o, so, fo, r, sr, rk, nnz_r, ext, rmax,
                                             &rows)
                                 : 0;
        if (!rows) /* one reuse per tile of u, each of R's largest tile */
            reuse_r = (double)eo[1 - ok] * price_most(&pr_r, rmax);
        double keeps = (double)eo[1 - ok] * (double)(er[1 - rk] - 1);
        double reuse_o = (keeps < E ? keeps : E) * price_most(&pr_o, omax);
        /* a use moves at least its tile's price */
        *lb = price_least(&pr_r, E, uses_r, reuse_r) + price_least(&pr_o, E, uses_o, reuse_o);
    }
    return rc;
}

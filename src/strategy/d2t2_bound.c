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
 * shape come in nondecreasing mode-0 tile): with cnt, its non-empty tiles
 * (a tile is new when `seen` does not hold its mode-0 tile yet); with
 * nnz, its nonzeros. 0 without memory. */
static int per_k(const strat_ctx *c, const strat_input *in, const uint64_t *f, unsigned kmode,
                 uint64_t *seen, uint64_t *cnt, uint64_t *nnz)
{
    const tessel_tile_grid *g = in->base;
    uint64_t *to0 = strat_div_table(c, g->extent[0], f[0]);
    uint64_t *to1 = strat_div_table(c, g->extent[1], f[1]);
    for (uint64_t n = 0, gr = 0; to0 && to1 && n < g->nonempty; n++) {
        gr = tessel_tile_grid_group_from(g, n, gr);
        uint64_t c0 = to0[gr], c1 = to1[tessel_tile_grid_key(g, n)];
        uint64_t kt = kmode == 0 ? c0 : c1;
        if (cnt && seen[c1] != c0 + 1) {
            seen[c1] = c0 + 1;
            cnt[kt]++;
        }
        if (nnz)
            nnz[kt] += tessel_tile_grid_count(g, n);
    }
    int ok = to0 && to1;
    tessel_dealloc(c->alloc, to0);
    tessel_dealloc(c->alloc, to1);
    return ok;
}

/* Bytes R's tiles can save by staying resident from one row of O's
 * tiles (along u, O's mode 0) to the next: IJK's walk keeps R's tile
 * when row u's first pair starts on the (k, j) tile the previous row
 * with a pair ended on, so k is in both rows; the tile holds at most
 * R's nonzeros in row k and at most rmax. 0 (*ok 0) when O's rows are
 * not its mode 0 or without memory. */
static double row_reuse(strat_ctx *c, unsigned l, const strat_input *o, const uint64_t *fo,
                        const strat_input *r, const uint64_t *sr, const uint64_t *nnz_r,
                        uint64_t ext, uint64_t rmax, int *ok)
{
    const tessel_tile_grid *g = o->base;
    uint64_t *to0 = strat_div_table(c, g->extent[0], fo[0]);
    uint64_t *to1 = strat_div_table(c, g->extent[1], fo[1]);
    uint64_t *last = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    double saved = 0;
    *ok = to0 && to1 && last;
    if (*ok) {
        memset(last, 0, ext * sizeof(uint64_t));
        uint64_t row = UINT64_MAX, prev = UINT64_MAX, most = 0;
        for (uint64_t n = 0, gr = 0; n < g->nonempty; n++) {
            gr = tessel_tile_grid_group_from(g, n, gr);
            uint64_t u = to0[gr], kt = to1[tessel_tile_grid_key(g, n)];
            if (!nnz_r[kt])
                continue; /* no multiply: the tile joins no pair */
            if (u != row) {
                if (most)
                    saved += (double)strat_tile_bytes(c, l, r, sr, most < rmax ? most : rmax);
                prev = row;
                row = u;
                most = 0;
            }
            if (prev != UINT64_MAX && last[kt] == prev + 1 && nnz_r[kt] > most)
                most = nnz_r[kt];
            if (last[kt] != u + 1)
                last[kt] = u + 1;
        }
        if (most)
            saved += (double)strat_tile_bytes(c, l, r, sr, most < rmax ? most : rmax);
    }
    tessel_dealloc(c->alloc, to0);
    tessel_dealloc(c->alloc, to1);
    tessel_dealloc(c->alloc, last);
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
    uint64_t *cnt_o = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    uint64_t *nnz_o = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    uint64_t *cnt_r = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    uint64_t *nnz_r = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    uint64_t *seen_o = tessel_alloc_array(c->alloc, eo[1], sizeof(uint64_t));
    uint64_t *seen_r = tessel_alloc_array(c->alloc, er[1], sizeof(uint64_t));
    if (cnt_o && nnz_o && cnt_r && nnz_r && seen_o && seen_r) { /* no memory: no bound */
        memset(cnt_o, 0, ext * sizeof(uint64_t));
        memset(nnz_o, 0, ext * sizeof(uint64_t));
        memset(cnt_r, 0, ext * sizeof(uint64_t));
        memset(nnz_r, 0, ext * sizeof(uint64_t));
        memset(seen_o, 0, eo[1] * sizeof(uint64_t));
        memset(seen_r, 0, er[1] * sizeof(uint64_t));
        double uses_r = 0, uses_o = 0, E = 0, vb = (double)lv->value_bits / 8;
        int counted = per_k(c, o, fo, ok, seen_o, cnt_o, nnz_o) &&
                      per_k(c, r, fr, rk, seen_r, cnt_r, nnz_r);
        for (uint64_t x = 0; counted && x < ext; x++) {
            E += (double)cnt_o[x] * (double)cnt_r[x]; /* effectual iterations */
            uses_r += (double)cnt_o[x] * (double)nnz_r[x];
            uses_o += (double)cnt_r[x] * (double)nnz_o[x];
        }
        int rows = 0;
        double reuse_r = ok == 1 && counted
                             ? row_reuse(c, l, o, fo, r, sr, nnz_r, ext, rmax, &rows) : 0;
        if (!rows) /* one reuse per tile of u, each of R's largest tile */
            reuse_r = (double)eo[1 - ok] * (double)strat_tile_bytes(c, l, r, sr, rmax);
        double keeps = (double)eo[1 - ok] * (double)(er[1 - rk] - 1);
        double reuse_o = (keeps < E ? keeps : E) * (double)strat_tile_bytes(c, l, o, so, omax);
        /* a use moves at least an empty tile's bytes and its values */
        double lb_r = E * (double)strat_tile_bytes(c, l, r, sr, 0) + uses_r * vb - reuse_r;
        double lb_o = E * (double)strat_tile_bytes(c, l, o, so, 0) + uses_o * vb - reuse_o;
        *lb = 0.5 * (lb_r > 0 ? lb_r : 0) + 0.5 * (lb_o > 0 ? lb_o : 0);
    }
    tessel_dealloc(c->alloc, cnt_o);
    tessel_dealloc(c->alloc, nnz_o);
    tessel_dealloc(c->alloc, cnt_r);
    tessel_dealloc(c->alloc, nnz_r);
    tessel_dealloc(c->alloc, seen_o);
    tessel_dealloc(c->alloc, seen_r);
    return rc;
}

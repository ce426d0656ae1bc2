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
    for (uint64_t n = 0; to0 && to1 && n < g->nonempty; n++) {
        uint64_t c0 = to0[g->group[n]], c1 = to1[g->key[n]];
        uint64_t kt = kmode == 0 ? c0 : c1;
        if (cnt && seen[c1] != c0 + 1) {
            seen[c1] = c0 + 1;
            cnt[kt]++;
        }
        if (nnz)
            nnz[kt] += g->count[n];
    }
    int ok = to0 && to1;
    tessel_dealloc(c->alloc, to0);
    tessel_dealloc(c->alloc, to1);
    return ok;
}

/* Under loop order (u, m, k) at level l, with u an index of input O only,
 * m of input R only and the contracted k innermost (SpMSpM, e.g. IJK):
 * inside one tile of u, R's tile (k, m) is used once per non-empty O tile
 * (u, k) (each input skips on the other's empty tiles, or more uses when
 * it does not), and consecutive uses of one R tile happen only across
 * two tiles of u, so R's fills number at least
 *   sum over k tiles of |O tiles in column k| x |R tiles in row k|
 * minus one per tile of u; each fill moves at least its values (rule 1,
 * nnz x value bits; an overbooked tile streams its overflow as well,
 * rule 4). Half of that bound is returned, a margin for value widths
 * that a tensor sets narrower than its level's; 0 where the bound does
 * not apply (other workloads or orders, or no grid at that shape). */
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
    uint64_t so[3], sr[3], fo[2], fr[2], eo[2], er[2], max = 0;
    strat_shape(c, o, t, so);
    strat_shape(c, r, t, sr);
    unsigned ok = (unsigned)mode_of(o, k), rk = (unsigned)mode_of(r, k);
    if (!o->base || !r->base || !factors(o, so, fo, eo) || !factors(r, sr, fr, er) ||
        eo[ok] != er[rk])
        return TESSEL_OK;
    /* R's largest tile: an upper bound of the bytes one reuse saves */
    int rc = strat_worst_occupancy(c, r, sr, WORST_STATS, &max);
    if (rc)
        return rc;
    uint64_t ext = eo[ok], *cnt = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    uint64_t *nnz = tessel_alloc_array(c->alloc, ext, sizeof(uint64_t));
    uint64_t *seen = tessel_alloc_array(c->alloc, eo[1], sizeof(uint64_t));
    if (cnt && nnz && seen) { /* no memory: no bound */
        memset(cnt, 0, ext * sizeof(uint64_t));
        memset(nnz, 0, ext * sizeof(uint64_t));
        memset(seen, 0, eo[1] * sizeof(uint64_t));
        double uses = 0;
        if (!per_k(c, o, fo, ok, seen, cnt, NULL) || !per_k(c, r, fr, rk, NULL, NULL, nnz))
            memset(cnt, 0, ext * sizeof(uint64_t)); /* no memory: no bound */
        for (uint64_t x = 0; x < ext; x++)
            uses += (double)cnt[x] * (double)nnz[x];
        double values = uses * (double)lv->value_bits / 8;
        double reuse = (double)eo[1 - ok] * (double)strat_tile_bytes(c, l, r, sr, max);
        *lb = values > reuse ? 0.5 * (values - reuse) : 0;
    }
    tessel_dealloc(c->alloc, cnt);
    tessel_dealloc(c->alloc, nnz);
    tessel_dealloc(c->alloc, seen);
    return rc;
}

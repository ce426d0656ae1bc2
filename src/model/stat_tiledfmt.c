/* Per-tile prefix counts under the stat estimator (docs/models/stat.md,
 * "Per-tile non-empty rows"): from the base tiles' non-empty rows
 * (tessel_tile_grid_rows), per tile of a derived grid
 *  - its non-empty rows, read by a per-rank list whose price needs them
 *    ([CP, CP], [B, B], [CP, UOP]; stat_ranks.c), and
 *  - for tiled-csf (docs/spec.md) its non-empty inner tiles (the child
 *    level's tiles) and row segments (a row inside one inner tile).
 * Rows of different strips (rows of base tiles) are different rows, so a
 * tile's rows are the sum over its strips of the rows its base tiles in
 * that strip hold together: read from the statistic's level-l blocks when
 * the tile (or inner tile) is 2^l base tiles wide, exactly, else estimated
 * (stat_tiledfmt_union), exact still for one base tile or a whole strip. */
#include <math.h>
#include <string.h>

#include "stat_tiledfmt.h"

double stat_tiledfmt_union(const uint32_t *rows, uint64_t lo, uint64_t hi, uint64_t all_lo,
                           uint64_t all_hi, double strip_rows)
{
    if (hi <= lo)
        return 0;
    if (hi - lo == 1)
        return rows[lo];
    if (lo == all_lo && hi == all_hi)
        return strip_rows;
    /* each tile's rows a uniform draw from the strip's: a row is missed
     * by every tile with probability prod (1 - r / S) */
    double miss = 1, most = 0, sum = 0;
    for (uint64_t q = lo; q < hi; q++) {
        double r = rows[q];
        miss *= strip_rows > 0 ? 1 - r / strip_rows : 0;
        most = r > most ? r : most;
        sum += r;
    }
    double u = strip_rows * (1 - (miss > 0 ? miss : 0));
    u = u > most ? u : most;
    return u < sum ? u : sum;
}

/* What input i's format at bd reads per tile: 1 its rows, 2 tiled-csf's
 * counts (inner: the inner tile's edges), 0 nothing the rows give. */
static unsigned counts_needed(const engine *e, unsigned i, const boundary *bd, tile_cost *tc)
{
    tc->tiled = 0;
    const tessel_spec_level *lv = &e->spec->level[bd->b];
    const tessel_spec_tensor_level *tl = &lv->tensor[e->in[i].spec_tensor];
    int f = tl->format >= 0 ? tl->format : lv->format;
    if (f != TESSEL_SPEC_FORMAT_RANKS && f != TESSEL_SPEC_FORMAT_TILED_CSF)
        return 0;
    if (f == TESSEL_SPEC_FORMAT_TILED_CSF && bd->b + 1 >= e->spec->nlevels)
        return 0; /* refused by exact_tile_cost_init */
    if (exact_tile_cost_init(e, bd, &e->in[i], tc) || tc->order != 2)
        return 0;
    if (tc->tiled)
        return 2;
    if (tc->swapped)
        return 0; /* rows along the other mode: not in the statistic */
    return tc->nranks == 2 && model_ranks_need_prefixes(tc->ranks, tc->nranks) ? 1 : 0;
}

/* The level whose blocks are `f` base tiles wide (f a power of two), else
 * -1: their rows are then estimated (stat_tiledfmt_union). */
static int level_of(const tessel_tile_rows *tr, uint64_t f)
{
    if (f & (f - 1))
        return -1;
    int l = 0;
    while ((UINT64_C(1) << l) < f)
        l++;
    return l <= (int)tr->nlevels ? l : -1;
}

/* Non-empty blocks of 2^l base tiles in strip s of the base grid. */
static uint64_t strip_blocks(const stat_grid *b, unsigned l, uint64_t s)
{
    uint64_t n = 0, last = UINT64_MAX;
    for (uint64_t q = b->ptr[s]; q < b->ptr[s + 1]; q++) {
        n += (b->col[q] >> l) != last;
        last = b->col[q] >> l;
    }
    return n;
}

/* The walk over g's tiles: per coarse row its strips, each with a cursor
 * into the base grid's tiles of that strip (tiles come in column order)
 * and, for a tile or inner tile 2^l base tiles wide, one into the level-l
 * blocks (which come in the same order). */
typedef struct occ_walk {
    const stat_grid *base;
    const tessel_tile_rows *rows;
    uint64_t fr, fc, ir, ic; /* tile and inner tile edges in base tiles */
    int lt, li;              /* their levels (level_of) */
    unsigned stride;
    uint64_t *cur, *bt, *bi; /* per strip of the coarse row */
    uint64_t run_t, run_i;   /* blocks of the strips before */
    uint64_t *mark, stamp;
} occ_walk;

/* Rows of strip s's base tiles [p, q), a block of level l (-1: none) at
 * cursor *bc. */
static double rows_of(occ_walk *w, uint64_t s, uint64_t p, uint64_t q, int l, uint64_t *bc)
{
    if (l == 0)
        return w->rows->rows[p];
    if (l > 0)
        return w->rows->block[l - 1][(*bc)++];
    return stat_tiledfmt_union(w->rows->rows, p, q, w->base->ptr[s], w->base->ptr[s + 1],
                               w->rows->strip[s]);
}

/* Tile (R, C)'s counts into occ[0 .. stride). */
static void tile_counts(occ_walk *w, uint64_t R, uint64_t C, double *occ)
{
    const stat_grid *b = w->base;
    uint64_t s0 = R * w->fr, c_hi = (C + 1) * w->fc, last_block = UINT64_MAX;
    double rows = 0, tiles = 0, segs = 0;
    for (uint64_t s = s0; s < s0 + w->fr && s < b->rows; s++) {
        uint64_t k = s - s0, p = w->cur[k], q = p, end = b->ptr[s + 1];
        while (q < end && b->col[q] < c_hi)
            q++;
        w->cur[k] = q;
        if (p == q)
            continue;
        if (w->stride == 1) {
            rows += rows_of(w, s, p, q, w->lt, &w->bt[k]);
            continue;
        }
        if (s / w->ir != last_block) { /* a new row of inner tiles */
            last_block = s / w->ir;
            w->stamp++;
        }
        for (uint64_t u = p; u < q;) {
            uint64_t blk = b->col[u] / w->ic, v = u;
            while (v < q && b->col[v] / w->ic == blk)
                v++;
            segs += rows_of(w, s, u, v, w->li, &w->bi[k]);
            if (w->mark[blk] != w->stamp) {
                w->mark[blk] = w->stamp;
                tiles++;
            }
            u = v;
        }
    }
    if (w->stride == 1) {
        occ[0] = rows;
    } else {
        occ[0] = tiles;
        occ[1] = segs;
    }
}

/* Starts coarse row R: the cursors of its strips. */
static void row_start(occ_walk *w, uint64_t R)
{
    const stat_grid *b = w->base;
    for (uint64_t k = 0; k < w->fr; k++) {
        uint64_t s = R * w->fr + k;
        w->cur[k] = s < b->rows ? b->ptr[s] : 0;
        w->bt[k] = w->run_t;
        w->bi[k] = w->run_i;
        if (s >= b->rows)
            continue;
        if (w->stride == 1 && w->lt > 0)
            w->run_t += strip_blocks(b, (unsigned)w->lt, s);
        if (w->stride == 2 && w->li > 0)
            w->run_i += strip_blocks(b, (unsigned)w->li, s);
    }
}

/* Why tiled-csf cannot be priced from in's statistics (NULL: it can). */
static const char *tiled_obstacle(const stat_input *in, const tile_cost *tc)
{
    if (!in->rows || !in->base)
        return "needs each base tile's non-empty rows, which these statistics lack (a 3-tensor, "
               ".tstat files, or a .tsd written before version 7: collect them again)";
    if (tc->swapped)
        return "in a rank order other than the canonical one counts its row segments along the "
               "other mode, which the statistics do not";
    if (tc->inner[0] % in->grid->tile[0] || tc->inner[1] % in->grid->tile[1])
        return "needs inner tiles made of whole base tiles (give a --base that divides the "
               "inner level's tile)";
    return NULL;
}

int stat_tiledfmt_attach(const engine *e, const stat_input *in, unsigned i, const boundary *bd,
                         const uint64_t *tile, const tessel_allocator *a, stat_grid *g,
                         tessel_diag *diag)
{
    tile_cost tc;
    memset(&tc, 0, sizeof(tc));
    if (g->occ)
        return TESSEL_OK;
    unsigned stride = counts_needed(e, i, bd, &tc);
    if (!stride || (stride == 1 && (!in->rows || !in->base)))
        return TESSEL_OK;
    const char *why = stride == 2 ? tiled_obstacle(in, &tc) : NULL;
    if (why) {
        const tessel_spec_level *lv = &e->spec->level[bd->b];
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, lv->pos.file, lv->pos.line,
                               lv->pos.column, "format",
                               "level %s: the stat estimator prices %s's tiled-csf from the "
                               "base tiles' rows; it %s: use -e exact", lv->name,
                               e->spec->workload.tensor[e->in[i].spec_tensor].name, why);
    }
    occ_walk w;
    memset(&w, 0, sizeof(w));
    w.base = in->base;
    w.rows = in->rows;
    w.fr = tile[0] / in->grid->tile[0];
    w.fc = tile[1] / in->grid->tile[1];
    w.ir = stride == 2 ? tc.inner[0] / in->grid->tile[0] : 1;
    w.ic = stride == 2 ? tc.inner[1] / in->grid->tile[1] : 1;
    w.lt = level_of(in->rows, w.fc);
    w.li = level_of(in->rows, w.ic);
    w.stride = stride;
    g->occ = tessel_alloc_array(a, g->n ? g->n * stride : 1, sizeof(double));
    w.cur = tessel_alloc_array(a, 3 * w.fr, sizeof(uint64_t));
    w.bt = w.cur ? w.cur + w.fr : NULL;
    w.bi = w.cur ? w.cur + 2 * w.fr : NULL;
    w.mark = stride == 2 ? stat_zeroed(a, in->base->cols / w.ic + 1, sizeof(uint64_t)) : NULL;
    if (!g->occ || !w.cur || (stride == 2 && !w.mark)) {
        tessel_dealloc(a, g->occ);
        g->occ = NULL;
        tessel_dealloc(a, w.cur);
        tessel_dealloc(a, w.mark);
        return tessel_diag_oom(diag, NULL, "counting the tiles' non-empty rows",
                               (size_t)((g->n * stride + w.fr) * sizeof(double)));
    }
    g->occ_stride = stride;
    for (uint64_t R = 0; R < g->rows; R++) {
        row_start(&w, R);
        for (uint64_t t = g->ptr[R]; t < g->ptr[R + 1]; t++)
            tile_counts(&w, R, g->col[t], &g->occ[t * stride]);
    }
    tessel_dealloc(a, w.cur);
    tessel_dealloc(a, w.mark);
    return TESSEL_OK;
}

/* Whole bytes of a tile of n nonzeros with the fractional counts occ, as
 * exact_tile_bytes rounds them. */
static price occ_price(const tile_cost *tc, uint64_t n, const double *occ)
{
    double db, mb;
    if (tc->tiled) {
        /* docs/spec.md, tiled-csf, with exact_tile_bytes's arithmetic */
        const tessel_format_widths *w = &tc->widths;
        db = (double)n * w->value_bits;
        mb = occ[0] * ((double)tc->order * w->coord_bits + w->offset_bits) +
             occ[1] * ((double)w->coord_bits + w->offset_bits) +
             (double)n * (double)(tc->order - 1) * w->coord_bits;
    } else {
        double est[3] = { occ[0], 0, 0 };
        model_ranks_bits_at(tc, n, est, &db, &mb);
    }
    return (price){ ceil(db / 8), ceil(mb / 8) };
}

price stat_grid_price(const pricer *pr, const stat_grid *g, uint64_t t)
{
    if (!g->occ || !pr->rows)
        return stat_fast_price(pr, g->nnz[t]);
    return occ_price(&pr->cost, g->nnz[t], &g->occ[t * g->occ_stride]);
}

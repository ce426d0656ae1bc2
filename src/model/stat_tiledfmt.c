/* Per-tile prefix counts under the stat estimator (docs/models/stat.md,
 * "Per-tile non-empty rows"): from the base tiles' non-empty rows
 * (tessel_tile_grid_rows), per tile of a derived grid
 *  - its non-empty rows, read by a per-rank list whose price needs them
 *    ([CP, CP], [B, B], [CP, UOP]; stat_ranks.c), and
 *  - for tiled-csf (docs/spec.md) its non-empty inner tiles (the child
 *    level's tiles) and row segments (a row inside one inner tile).
 * Rows of different strips (rows of base tiles) are different rows, so a
 * tile's rows are the sum over its strips of the rows its base tiles in
 * that strip hold together: read from the statistic's blocks, exactly,
 * when they are all the strip's base tiles of an aligned block of 2^l
 * (always so for a tile or inner tile 2^l base tiles wide), else
 * estimated (stat_tiledfmt_union), exact still for one base tile or a
 * whole strip. */
#include <math.h>
#include <string.h>

#include "stat_tiledfmt.h"

double stat_tiledfmt_union(const tessel_tile_rows *rows, const uint32_t *map, uint64_t lo,
                           uint64_t hi, uint64_t all_lo, uint64_t all_hi, double strip_rows)
{
    if (hi <= lo)
        return 0;
    if (hi - lo == 1)
        return tessel_tile_rows_tile(rows, map ? map[lo] : lo);
    if (lo == all_lo && hi == all_hi)
        return strip_rows;
    /* each tile's rows a uniform draw from the strip's: a row is missed
     * by every tile with probability prod (1 - r / S) */
    double miss = 1, most = 0, sum = 0;
    for (uint64_t q = lo; q < hi; q++) {
        double r = tessel_tile_rows_tile(rows, map ? map[q] : q);
        miss *= strip_rows > 0 ? 1 - r / strip_rows : 0;
        most = r > most ? r : most;
        sum += r;
    }
    double u = strip_rows * (1 - (miss > 0 ? miss : 0));
    u = u > most ? u : most;
    return u < sum ? u : sum;
}

int stat_spec_reads_rows(const tessel_spec *spec)
{
    for (unsigned l = 1; l < spec->nlevels; l++) {
        const tessel_spec_level *lv = &spec->level[l];
        for (unsigned t = 0; t < spec->workload.ntensors; t++) {
            const tessel_spec_tensor_level *tl = &lv->tensor[t];
            int f = tl->format >= 0 ? tl->format : lv->format;
            unsigned n = tl->format >= 0 ? tl->nranks : lv->nranks;
            const unsigned char *r = tl->format >= 0 ? tl->ranks : lv->ranks;
            if (f == TESSEL_SPEC_FORMAT_TILED_CSF ||
                (f == TESSEL_SPEC_FORMAT_RANKS && model_ranks_need_prefixes(r, n)))
                return 1;
        }
    }
    return 0;
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

/* The walk over g's tiles: per coarse row its strips, each with a cursor
 * into the base grid's tiles of that strip (tiles come in column order). */
typedef struct occ_walk {
    const stat_grid *base;
    const tessel_tile_rows *rows;
    const uint32_t *map;     /* the statistic's index of each base tile (NULL: its own) */
    uint64_t fr, fc, ir, ic; /* tile and inner tile edges in base tiles */
    unsigned stride;
    uint64_t *cur;           /* per strip of the coarse row */
    uint64_t *mark, stamp;
} occ_walk;

/* Rows of strip s's base tiles [p, q) together: when they are all the
 * strip's tiles of the smallest aligned block that holds them, that
 * block's trie node (the highest among the gaps between them), exactly;
 * else stat_tiledfmt_union. */
static double rows_of(const occ_walk *w, uint64_t s, uint64_t p, uint64_t q)
{
    const stat_grid *b = w->base;
    if (q - p == 1)
        return tessel_tile_rows_tile(w->rows, w->map ? w->map[p] : p);
    uint64_t lo = b->ptr[s], hi = b->ptr[s + 1], top = p;
    if (p == lo && q == hi)
        return w->rows->strip[s];
    unsigned l = 0;
    for (uint64_t g = p; g + 1 < q; g++) {
        unsigned lg = tessel_tile_rows_level(b->col[g], b->col[g + 1]);
        if (lg > l) {
            l = lg;
            top = g;
        }
    }
    uint64_t blk = (uint64_t)b->col[p] >> l;
    if ((p == lo || (b->col[p - 1] >> l) != blk) && (q == hi || (b->col[q] >> l) != blk))
        return tessel_tile_rows_node(w->rows, w->map ? w->map[top] : top);
    return stat_tiledfmt_union(w->rows, w->map, p, q, lo, hi, w->rows->strip[s]);
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
            rows += rows_of(w, s, p, q);
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
            segs += rows_of(w, s, u, v);
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

/* Why tiled-csf cannot be priced from in's statistics (NULL: it can). */
static const char *tiled_obstacle(const stat_input *in, const tile_cost *tc)
{
    if (!in->rows || !in->base)
        return "these statistics lack them (collected for formats that do not read them, a "
               "3-tensor, .tstat files, or a .tsd before version 7: collect them for this spec)";
    if (tc->swapped)
        return "in a rank order other than the canonical one its row segments run along the "
               "other mode, whose rows the statistics do not hold";
    if (tc->inner[0] % in->grid->tile[0] || tc->inner[1] % in->grid->tile[1])
        return "its inner tiles are not whole base tiles (give a --base that divides the inner "
               "level's tile)";
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
                               "base tiles' rows, and %s: use -e exact", lv->name,
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
    w.stride = stride;
    g->occ = tessel_alloc_array(a, g->n ? g->n * stride : 1, sizeof(double));
    w.cur = tessel_alloc_array(a, w.fr, sizeof(uint64_t));
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
        for (uint64_t k = 0; k < w.fr; k++)
            w.cur[k] = R * w.fr + k < in->base->rows ? in->base->ptr[R * w.fr + k] : 0;
        for (uint64_t t = g->ptr[R]; t < g->ptr[R + 1]; t++)
            tile_counts(&w, R, g->col[t], &g->occ[t * stride]);
    }
    tessel_dealloc(a, w.cur);
    tessel_dealloc(a, w.mark);
    return TESSEL_OK;
}

int stat_tiledfmt_lines(const stat_grid *base, const tessel_tile_rows *rows, const uint32_t *map,
                        uint64_t fr, uint64_t fc, const stat_grid *g, const tessel_allocator *a,
                        double *out)
{
    occ_walk w;
    memset(&w, 0, sizeof(w));
    w.base = base;
    w.rows = rows;
    w.map = map;
    w.fr = fr;
    w.fc = fc;
    w.ir = w.ic = w.stride = 1;
    w.cur = tessel_alloc_array(a, fr ? fr : 1, sizeof(uint64_t));
    if (!w.cur)
        return TESSEL_ENOMEM;
    for (uint64_t R = 0; R < g->rows; R++) {
        for (uint64_t k = 0; k < fr; k++)
            w.cur[k] = R * fr + k < base->rows ? base->ptr[R * fr + k] : 0;
        for (uint64_t t = g->ptr[R]; t < g->ptr[R + 1]; t++)
            tile_counts(&w, R, g->col[t], &out[t]);
    }
    tessel_dealloc(a, w.cur);
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

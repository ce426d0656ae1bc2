/* Per-tile prefix counts under the stat estimator (stat_tiledfmt.c): the
 * non-empty rows a per-rank list reads ([CP, CP], [B, B], [CP, UOP]) and
 * tiled-csf's inner tiles and row segments, estimated per tile of a
 * derived grid from the base tiles' rows (docs/models/stat.md, "Per-tile
 * non-empty rows"). */
#ifndef TESSEL_MODEL_STAT_TILEDFMT_H
#define TESSEL_MODEL_STAT_TILEDFMT_H

#include "stat_closed.h"

/* Sets g->occ for input i's tiles at bd (g: in's base grid merged to the
 * edges `tile`) when its format at bd reads them and in holds the rows
 * statistic; else leaves it NULL (a list's rows then estimated from nnz
 * alone). Tiled-csf without the statistic, in a swapped rank order or with
 * inner tiles off the base grid is refused (TESSEL_EUNSUPPORTED). */
int stat_tiledfmt_attach(const engine *e, const stat_input *in, unsigned i, const boundary *bd,
                         const uint64_t *tile, const tessel_allocator *a, stat_grid *g,
                         tessel_diag *diag);

/* Tile t of g at pricer pr: from its counts when g keeps them, else
 * stat_fast_price of its nonzeros. */
price stat_grid_price(const pricer *pr, const stat_grid *g, uint64_t t);

/* A summary priced by tile size alone cannot price pr (its tiles' prices
 * need their rows). */
static inline int stat_pricer_needs_rows(const pricer *pr)
{
    return pr->rows;
}

/* Rows of strip s's base tiles [lo, hi) together, from each tile's rows
 * (rows: tile q's at map[q], or at q when map is NULL) and the strip's
 * non-empty rows (strip_rows; the tiles [all_lo,
 * all_hi) are all the strip's): exact for one tile and for the whole
 * strip, else as if each tile's rows were drawn independently from the
 * strip's. */
double stat_tiledfmt_union(const tessel_tile_rows *rows, const uint32_t *map, uint64_t lo,
                           uint64_t hi, uint64_t all_lo, uint64_t all_hi, double strip_rows);

/* Per tile of g (base merged by fr x fc, stat_grid_coarsen) its rows as
 * the rows statistic (rows, on base; base tile q's entries at map[q], or
 * at q when map is NULL) gives them, into out[0 .. g->n): the
 * in-visit step count reads the reduction lines of the operands' tiles
 * this way (stat_outspill.c). TESSEL_ENOMEM when a cursor cannot be had. */
int stat_tiledfmt_lines(const stat_grid *base, const tessel_tile_rows *rows, const uint32_t *map,
                        uint64_t fr, uint64_t fc, const stat_grid *g, const tessel_allocator *a,
                        double *out);

#endif

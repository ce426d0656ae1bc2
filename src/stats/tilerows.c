/* Non-empty rows per tile of a matrix's tile grid (docs/models/stat.md,
 * "Per-tile non-empty rows"): the statistic the stat estimator prices
 * per-rank lists that read a tile's rows ([CP, CP], [B, B], [CP, UOP])
 * and tiled-csf from. One walk over the entries, in the grid's order: a
 * row's entries are sorted by column, so the tiles a row touches come in
 * ascending key order, as the grid's tiles of that row of tiles do, and
 * each (row, tile) pair is one step of a merge. 4 B per non-empty tile,
 * plus 4 B per row of tiles for its distinct non-empty rows. */
#include <string.h>

#include "tessel/stats.h"

/* Walks rows [r0, r1) of row of tiles grp, adding one to rows[idx] for
 * every tile a row touches. */
static void strip_walk(const tessel_tensor *t, const tessel_tile_grid *g, uint64_t grp,
                       uint64_t r0, uint64_t r1, unsigned shift, uint32_t *rows)
{
    const uint32_t *col = t->idx[1];
    uint64_t first = tessel_tile_grid_row_begin(g, grp), w = g->tile[1];
    for (uint64_t r = r0; r < r1; r++) {
        uint64_t idx = first, last = UINT64_MAX;
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t c = shift < 64 ? (uint64_t)col[p] >> shift : col[p] / w;
            if (c == last)
                continue;
            last = c;
            while (tessel_tile_grid_key(g, idx) < c)
                idx++;
            rows[idx]++;
        }
    }
}

int tessel_tile_grid_rows(const tessel_tensor *t, const tessel_tile_grid *g,
                          const tessel_allocator *a, tessel_tile_rows **out, tessel_diag *diag)
{
    *out = NULL;
    if (t->order != 2 || g->order != 2 || g->nnz != t->nnz || g->dims[0] != t->dims[0] ||
        g->dims[1] != t->dims[1])
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "per-tile rows are counted for a matrix on its own tile grid");
    tessel_tile_rows *tr = tessel_alloc(a, sizeof(*tr));
    uint64_t n = g->nonempty ? g->nonempty : 1, strips = g->extent[0] ? g->extent[0] : 1;
    if (tr) {
        memset(tr, 0, sizeof(*tr));
        tr->alloc = a;
        tr->rows = tessel_alloc_array(a, n, sizeof(uint32_t));
        tr->strip = tessel_alloc_array(a, strips, sizeof(uint32_t));
    }
    if (!tr || !tr->rows || !tr->strip) {
        tessel_tile_rows_free(&tr);
        return tessel_diag_oom(diag, NULL, "counting the tiles' non-empty rows",
                               (size_t)((n + strips) * sizeof(uint32_t)));
    }
    tr->n = g->nonempty;
    tr->nstrips = g->extent[0];
    memset(tr->rows, 0, n * sizeof(uint32_t));
    memset(tr->strip, 0, strips * sizeof(uint32_t));
    unsigned shift = 64; /* 64: divide; else a power-of-two tile width */
    if ((g->tile[1] & (g->tile[1] - 1)) == 0)
        for (shift = 0; (UINT64_C(1) << shift) < g->tile[1]; shift++)
            ;
    for (uint64_t grp = 0; grp < g->extent[0]; grp++) {
        uint64_t r0 = grp * g->tile[0], r1 = r0 + g->tile[0];
        if (r1 > t->dims[0])
            r1 = t->dims[0];
        strip_walk(t, g, grp, r0, r1, shift, tr->rows);
        for (uint64_t r = r0; r < r1; r++)
            tr->strip[grp] += t->ptr[r + 1] > t->ptr[r];
    }
    *out = tr;
    return TESSEL_OK;
}

void tessel_tile_rows_free(tessel_tile_rows **p)
{
    if (!p || !*p)
        return;
    tessel_tile_rows *tr = *p;
    *p = NULL;
    tessel_dealloc(tr->alloc, tr->rows);
    tessel_dealloc(tr->alloc, tr->strip);
    tessel_dealloc(tr->alloc, tr);
}

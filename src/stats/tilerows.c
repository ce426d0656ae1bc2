/* Non-empty rows per tile of a matrix's tile grid (docs/models/stat.md,
 * "Per-tile non-empty rows"): the statistic the stat estimator prices
 * per-rank lists that read a tile's rows ([CP, CP], [B, B], [CP, UOP])
 * and tiled-csf from.
 *
 * Rows of different rows of tiles (strips) are different rows, so a merged
 * tile's rows are a sum over its strips of the rows that its tiles in one
 * strip hold together, which per-tile counts alone do not give (a row may
 * sit in several of them). So besides each tile's rows (level 0) the
 * statistic keeps, per strip, the rows of every non-empty aligned block of
 * 2^l tiles (level l = 1 .. nlevels): a merged tile 2^l tiles wide, or an
 * inner tile that wide, starting at a multiple of its width, reads its
 * rows per strip exactly. A strip's blocks are stored in column order,
 * strips in order, one array per level: no coordinates (the grid's tiles
 * give them). One walk over the entries: a row's entries are sorted by
 * column, so a block is new to a row where its column changes, and at the
 * first level where it does not, no wider block changes either. */
#include <string.h>

#include "tessel/stats.h"

/* Levels above 0 that a grid `cols` tiles wide has: blocks of 2^l tiles
 * until one block spans every column. */
static unsigned levels_of(uint64_t cols)
{
    unsigned l = 0;
    while (l < TESSEL_TILE_ROWS_LEVELS && cols > (UINT64_C(1) << l))
        l++;
    return l;
}

uint64_t tessel_tile_rows_blocks(const tessel_tile_grid *g, unsigned l, uint64_t strip)
{
    uint64_t n = 0, last = UINT64_MAX;
    for (uint64_t t = g->row[strip]; t < g->row[strip + 1]; t++) {
        uint64_t b = tessel_tile_grid_key(g, t) >> l;
        n += b != last;
        last = b;
    }
    return n;
}

/* Per-level position of each block of the strip among the strip's blocks
 * (map + moff[l], indexed by the block's column >> l). */
static void strip_map(const tessel_tile_grid *g, unsigned levels, uint64_t s, const uint64_t *moff,
                      uint32_t *map)
{
    for (unsigned l = 0; l <= levels; l++) {
        uint64_t last = UINT64_MAX;
        uint32_t k = 0;
        for (uint64_t t = g->row[s]; t < g->row[s + 1]; t++) {
            uint64_t b = tessel_tile_grid_key(g, t) >> l;
            if (b != last) {
                map[moff[l] + b] = k++;
                last = b;
            }
        }
    }
}

/* Rows [r0, r1) of strip s: one more row for every tile and block a row
 * touches (soff[l]: the strip's first block at level l). */
static void strip_walk(const tessel_tensor *t, const tessel_tile_grid *g, tessel_tile_rows *tr,
                       uint64_t r0, uint64_t r1, const uint64_t *soff, const uint64_t *moff,
                       const uint32_t *map)
{
    const uint32_t *col = t->idx[1];
    uint64_t w = g->tile[1], last[TESSEL_TILE_ROWS_LEVELS + 1];
    for (uint64_t r = r0; r < r1; r++) {
        for (unsigned l = 0; l <= tr->nlevels; l++)
            last[l] = UINT64_MAX;
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t c = col[p] / w;
            for (unsigned l = 0; l <= tr->nlevels && (c >> l) != last[l]; l++) {
                uint64_t b = c >> l;
                last[l] = b;
                uint32_t *cnt = l ? tr->block[l - 1] : tr->rows;
                cnt[soff[l] + map[moff[l] + b]]++;
            }
        }
    }
}

/* The arrays of tr for grid g (counts zeroed); 0 or TESSEL_ENOMEM. */
static int rows_alloc(tessel_tile_rows *tr, const tessel_tile_grid *g)
{
    const tessel_allocator *a = tr->alloc;
    tr->n = g->nonempty;
    tr->nstrips = g->extent[0];
    tr->nlevels = levels_of(g->extent[1]);
    tr->rows = tessel_alloc_zeroed(a, tr->n ? tr->n : 1, sizeof(uint32_t));
    tr->strip = tessel_alloc_zeroed(a, tr->nstrips ? tr->nstrips : 1, sizeof(uint32_t));
    if (!tr->rows || !tr->strip)
        return TESSEL_ENOMEM;
    for (unsigned l = 1; l <= tr->nlevels; l++) {
        uint64_t n = 0;
        for (uint64_t s = 0; s < g->extent[0]; s++)
            n += tessel_tile_rows_blocks(g, l, s);
        tr->nblocks[l - 1] = n;
        tr->block[l - 1] = tessel_alloc_zeroed(a, n ? n : 1, sizeof(uint32_t));
        if (!tr->block[l - 1])
            return TESSEL_ENOMEM;
    }
    return TESSEL_OK;
}

uint64_t tessel_tile_rows_bytes(const tessel_tile_rows *tr)
{
    uint64_t n = tr->n + tr->nstrips;
    for (unsigned l = 0; l < tr->nlevels; l++)
        n += tr->nblocks[l];
    return n * sizeof(uint32_t);
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
    uint64_t moff[TESSEL_TILE_ROWS_LEVELS + 2], soff[TESSEL_TILE_ROWS_LEVELS + 1];
    uint32_t *map = NULL;
    int rc = TESSEL_ENOMEM;
    if (tr) {
        memset(tr, 0, sizeof(*tr));
        tr->alloc = a;
        rc = rows_alloc(tr, g);
    }
    if (!rc) {
        moff[0] = 0;
        for (unsigned l = 0; l <= tr->nlevels; l++)
            moff[l + 1] = moff[l] + ((g->extent[1] + (UINT64_C(1) << l) - 1) >> l) + 1;
        map = tessel_alloc_array(a, moff[tr->nlevels + 1], sizeof(uint32_t));
        rc = map ? TESSEL_OK : TESSEL_ENOMEM;
    }
    if (rc) {
        uint64_t asked = tr ? tessel_tile_rows_bytes(tr) : sizeof(*tr);
        tessel_tile_rows_free(&tr);
        return tessel_diag_oom(diag, NULL, "counting the tiles' non-empty rows", (size_t)asked);
    }
    memset(soff, 0, sizeof(soff));
    for (uint64_t s = 0; s < g->extent[0]; s++) {
        uint64_t r0 = s * g->tile[0], r1 = r0 + g->tile[0] < t->dims[0] ? r0 + g->tile[0]
                                                                         : t->dims[0];
        strip_map(g, tr->nlevels, s, moff, map);
        soff[0] = g->row[s];
        strip_walk(t, g, tr, r0, r1, soff, moff, map);
        for (unsigned l = 1; l <= tr->nlevels; l++)
            soff[l] += tessel_tile_rows_blocks(g, l, s);
        for (uint64_t r = r0; r < r1; r++)
            tr->strip[s] += t->ptr[r + 1] > t->ptr[r];
    }
    tessel_dealloc(a, map);
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
    for (unsigned l = 0; l < TESSEL_TILE_ROWS_LEVELS; l++)
        tessel_dealloc(tr->alloc, tr->block[l]);
    tessel_dealloc(tr->alloc, tr);
}

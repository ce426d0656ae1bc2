/* Non-empty rows per tile of a matrix's tile grid (docs/models/stat.md,
 * "Per-tile non-empty rows"): the statistic the stat estimator prices
 * per-rank lists that read a tile's rows ([CP, CP], [B, B], [CP, UOP])
 * and tiled-csf from.
 *
 * Rows of different rows of tiles (strips) are different rows, so a merged
 * tile's rows are a sum over its strips of the rows that its tiles in one
 * strip hold together, which per-tile counts alone do not give (a row may
 * sit in several of them). So besides each tile's rows the statistic
 * keeps the rows of every node of the binary trie over each strip's tile
 * columns: the aligned blocks of 2^l tiles whose two halves both hold a
 * tile. A strip of n tiles has n - 1 of them, one between each two
 * neighbouring tiles (the smallest block holding both), stored with the
 * left one. Any run of a strip's tiles that is all the tiles of the
 * smallest aligned block holding it (every run a tile 2^l tiles wide
 * holds) reads its rows from the node of highest level among its gaps.
 * One walk over the entries: a row's entries are sorted by column, so a
 * block is new to a row where its column changes, and at the first level
 * where it does not, no wider block changes either. */
#include <string.h>

#include "tessel/stats.h"

#define NOT_NODE UINT32_MAX
#define MAX_LEVELS 64

/* Levels above 0 that a grid `cols` tiles wide has: blocks of 2^l tiles
 * until one block spans every column. */
static unsigned levels_of(uint64_t cols)
{
    unsigned l = 0;
    while (l + 1 < MAX_LEVELS && cols > (UINT64_C(1) << l))
        l++;
    return l;
}

/* Strip s's maps: map[moff[0] + c] its tile of column c (relative to the
 * strip's first), and per level l >= 1 map[moff[l] + b] the node that
 * block b is (relative), NOT_NODE for the strip's other blocks. */
static void strip_map(const tessel_tile_grid *g, unsigned levels, uint64_t s, const uint64_t *moff,
                      uint32_t *map)
{
    uint64_t t0 = g->row[s], t1 = g->row[s + 1];
    for (uint64_t t = t0; t < t1; t++) {
        uint64_t c = tessel_tile_grid_key(g, t);
        map[c] = (uint32_t)(t - t0);
        for (unsigned l = 1; l <= levels; l++)
            map[moff[l] + (c >> l)] = NOT_NODE;
    }
    for (uint64_t t = t0; t + 1 < t1; t++) {
        uint64_t c = tessel_tile_grid_key(g, t), d = tessel_tile_grid_key(g, t + 1);
        unsigned l = tessel_tile_rows_level(c, d);
        map[moff[l] + (c >> l)] = (uint32_t)(t - t0);
    }
}

/* Rows [r0, r1) of strip s: one more row for every tile and node a row
 * touches. */
static void strip_walk(const tessel_tensor *t, const tessel_tile_grid *g, tessel_tile_rows *tr,
                       uint64_t s, unsigned levels, const uint64_t *moff, const uint32_t *map)
{
    const uint32_t *col = t->idx[1];
    uint64_t w = g->tile[1], last[MAX_LEVELS];
    uint64_t r0 = s * g->tile[0], r1 = r0 + g->tile[0] < t->dims[0] ? r0 + g->tile[0] : t->dims[0];
    uint64_t t0 = g->row[s];
    for (uint64_t r = r0; r < r1; r++) {
        for (unsigned l = 0; l <= levels; l++)
            last[l] = UINT64_MAX;
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t c = col[p] / w;
            if (c == last[0])
                continue;
            last[0] = c;
            tr->rows[t0 + map[c]]++;
            for (unsigned l = 1; l <= levels && (c >> l) != last[l]; l++) {
                last[l] = c >> l;
                uint32_t k = map[moff[l] + (c >> l)];
                if (k != NOT_NODE)
                    tr->node[t0 + k]++;
            }
        }
    }
}

uint64_t tessel_tile_rows_bytes(const tessel_tile_rows *tr)
{
    return (2 * tr->n + tr->nstrips) * sizeof(uint32_t);
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
    unsigned levels = levels_of(g->extent[1]);
    uint64_t moff[MAX_LEVELS + 1], n = g->nonempty ? g->nonempty : 1;
    moff[0] = 0;
    moff[1] = g->extent[1] + 1;
    for (unsigned l = 1; l <= levels; l++)
        moff[l + 1] = moff[l] + ((g->extent[1] + (UINT64_C(1) << l) - 1) >> l) + 1;
    uint32_t *map = tessel_alloc_array(a, moff[levels + 1] + 1, sizeof(uint32_t));
    if (tr) {
        memset(tr, 0, sizeof(*tr));
        tr->alloc = a;
        tr->n = g->nonempty;
        tr->nstrips = g->extent[0];
        tr->rows = tessel_alloc_zeroed(a, n, sizeof(uint32_t));
        tr->node = tessel_alloc_zeroed(a, n, sizeof(uint32_t));
        tr->strip = tessel_alloc_zeroed(a, tr->nstrips ? tr->nstrips : 1, sizeof(uint32_t));
    }
    if (!tr || !map || !tr->rows || !tr->node || !tr->strip) {
        tessel_tile_rows_free(&tr);
        tessel_dealloc(a, map);
        return tessel_diag_oom(diag, NULL, "counting the tiles' non-empty rows",
                               (size_t)((2 * n + g->extent[0] + moff[levels + 1]) * 4));
    }
    for (uint64_t s = 0; s < g->extent[0]; s++) {
        strip_map(g, levels, s, moff, map);
        strip_walk(t, g, tr, s, levels, moff, map);
        uint64_t r0 = s * g->tile[0];
        for (uint64_t r = r0; r < r0 + g->tile[0] && r < t->dims[0]; r++)
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
    tessel_dealloc(tr->alloc, tr->node);
    tessel_dealloc(tr->alloc, tr->strip);
    tessel_dealloc(tr->alloc, tr);
}

/* The matrix's transpose as CSR (rows = t's columns, each row's columns
 * ascending), only the arrays tessel_tile_grid_build and
 * tessel_tile_grid_rows read (ptr, idx[1]). */
static int transpose_pattern(const tessel_tensor *t, const tessel_allocator *a, tessel_tensor *tt)
{
    memset(tt, 0, sizeof(*tt));
    tt->alloc = a;
    tt->order = 2;
    tt->dims[0] = t->dims[1];
    tt->dims[1] = t->dims[0];
    tt->nnz = t->nnz;
    return tessel_tensor_transpose_pattern(t, a, &tt->ptr, &tt->idx[1]);
}

int tessel_tile_grid_cols(const tessel_tensor *t, const tessel_tile_grid *g,
                          const tessel_allocator *a, tessel_tile_rows **out, tessel_diag *diag)
{
    *out = NULL;
    if (t->order != 2 || g->order != 2 || g->nnz != t->nnz || g->dims[0] != t->dims[0] ||
        g->dims[1] != t->dims[1])
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "per-tile columns are counted for a matrix on its own tile grid");
    tessel_tensor tt;
    tessel_tile_grid *gt = NULL;
    uint64_t tile[2] = { g->tile[1], g->tile[0] };
    int rc = transpose_pattern(t, a, &tt);
    if (rc)
        rc = tessel_diag_oom(diag, NULL, "transposing a matrix to count its tiles' columns",
                             (size_t)((t->dims[1] + 2) * 8 + t->nnz * 4));
    if (!rc)
        rc = tessel_tile_grid_build(&tt, tile, a, &gt, diag);
    if (!rc)
        rc = tessel_tile_grid_rows(&tt, gt, a, out, diag);
    tessel_tile_grid_free(&gt);
    tessel_dealloc(a, tt.ptr);
    tessel_dealloc(a, tt.idx[1]);
    return rc;
}

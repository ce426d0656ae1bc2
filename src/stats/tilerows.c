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
 * where it does not, no wider block changes either.
 *
 * The columns statistic is the same over each column of tiles' trie of
 * rows of tiles, counted from the CSR in one walk too: strips come in
 * order, so a column's entries arrive sorted by strip, and a column is new
 * to a block of 2^l strips where the last strip holding it (a scratch per
 * column) is outside it. Each column of tiles keeps per level the count of
 * its current block and, once its second half's first tile arrives, the
 * tile that block's node is stored with. */
#include <string.h>

#include "tessel/stats.h"

#define NOT_NODE UINT32_MAX
#define MAX_LEVELS 64

/* One more for tile i's count (node 0) or node i's (node 1). */
static inline void bump(tessel_tile_rows *tr, int node, uint64_t i)
{
    void *a = node ? tr->node : tr->rows;
    if (tr->width == 1)
        ((uint8_t *)a)[i]++;
    else if (tr->width == 2)
        ((uint16_t *)a)[i]++;
    else
        ((uint32_t *)a)[i]++;
}

tessel_tile_rows *tessel_tile_rows_new(const tessel_allocator *a, uint64_t n, uint64_t nstrips,
                                       uint64_t edge)
{
    tessel_tile_rows *tr = tessel_alloc(a, sizeof(*tr));
    if (!tr)
        return NULL;
    memset(tr, 0, sizeof(*tr));
    tr->alloc = a;
    tr->n = n;
    tr->nstrips = nstrips;
    tr->width = edge <= UINT8_MAX ? 1 : edge <= UINT16_MAX ? 2 : 4;
    tr->rows = tessel_alloc_zeroed(a, n ? n : 1, tr->width);
    tr->node = tessel_alloc_zeroed(a, n ? n : 1, tr->width);
    tr->strip = tessel_alloc_zeroed(a, nstrips ? nstrips : 1, sizeof(uint32_t));
    if (!tr->rows || !tr->node || !tr->strip)
        tessel_tile_rows_free(&tr);
    return tr;
}

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
            bump(tr, 0, t0 + map[c]);
            for (unsigned l = 1; l <= levels && (c >> l) != last[l]; l++) {
                last[l] = c >> l;
                uint32_t k = map[moff[l] + (c >> l)];
                if (k != NOT_NODE)
                    bump(tr, 1, t0 + k);
            }
        }
    }
}

uint64_t tessel_tile_rows_bytes(const tessel_tile_rows *tr)
{
    return 2 * tr->n * tr->width + tr->nstrips * sizeof(uint32_t);
}

int tessel_tile_grid_rows(const tessel_tensor *t, const tessel_tile_grid *g,
                          const tessel_allocator *a, tessel_tile_rows **out, tessel_diag *diag)
{
    *out = NULL;
    if (t->order != 2 || g->order != 2 || g->nnz != t->nnz || g->dims[0] != t->dims[0] ||
        g->dims[1] != t->dims[1])
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "per-tile rows are counted for a matrix on its own tile grid");
    unsigned levels = levels_of(g->extent[1]);
    uint64_t moff[MAX_LEVELS + 1], n = g->nonempty ? g->nonempty : 1;
    moff[0] = 0;
    moff[1] = g->extent[1] + 1;
    for (unsigned l = 1; l <= levels; l++)
        moff[l + 1] = moff[l] + ((g->extent[1] + (UINT64_C(1) << l) - 1) >> l) + 1;
    uint32_t *map = tessel_alloc_array(a, moff[levels + 1] + 1, sizeof(uint32_t));
    tessel_tile_rows *tr =
        tessel_tile_rows_new(a, g->nonempty, g->extent[0], g->tile[0] < t->dims[0] ? g->tile[0]
                                                                                   : t->dims[0]);
    if (!tr || !map) {
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

/* The columns count's state (tessel_tile_grid_cols): per column of t the
 * last strip holding it plus one (0: none yet); per column of tiles C its
 * current strip's tile (map), the last strip holding a tile of it plus
 * one and that tile; per column of tiles and level l >= 1 (at C * L + l -
 * 1, one C's levels side by side: an entry reads them together) the
 * current block plus one, its distinct columns so far and the tile its
 * node is stored with (NOT_NODE: none yet). */
typedef struct col_block {
    uint32_t blk, acc, slot;
} col_block;

typedef struct col_count {
    tessel_tile_rows *tc;
    unsigned L;
    uint32_t *mark;
    uint64_t *map, *last, *lastt;
    col_block *cb;
} col_count;

/* Stores block cell b's count at its node, if it has one. */
static void flush(col_count *cc, const col_block *b)
{
    if (b->blk && b->slot != NOT_NODE)
        tessel_tile_rows_set(cc->tc, 1, b->slot, b->acc);
}

/* Makes block B current at (C, l), storing the one it ends at its node. */
static col_block *touch(col_count *cc, uint64_t C, unsigned l, uint64_t B)
{
    col_block *b = &cc->cb[C * cc->L + l - 1];
    if (b->blk == B + 1)
        return b;
    flush(cc, b);
    *b = (col_block){ (uint32_t)(B + 1), 0, NOT_NODE };
    return b;
}

/* Strip s: its tiles arrive (each with the node between it and its
 * column's previous tile), then its entries, each column once. */
static void cols_strip(col_count *cc, const tessel_tensor *t, const tessel_tile_grid *g,
                       uint64_t s)
{
    for (uint64_t i = g->row[s]; i < g->row[s + 1]; i++) {
        uint64_t C = tessel_tile_grid_key(g, i);
        cc->map[C] = i;
        if (cc->last[C]) {
            unsigned l = tessel_tile_rows_level(cc->last[C] - 1, s);
            touch(cc, C, l, s >> l)->slot = (uint32_t)cc->lastt[C];
        }
        cc->last[C] = s + 1;
        cc->lastt[C] = i;
    }
    uint64_t w = g->tile[1], r0 = s * g->tile[0];
    uint64_t r1 = r0 + g->tile[0] < t->dims[0] ? r0 + g->tile[0] : t->dims[0];
    for (uint64_t p = t->ptr[r0]; p < t->ptr[r1]; p++) {
        uint32_t k = t->idx[1][p], prev = cc->mark[k];
        if (prev == s + 1)
            continue;
        cc->mark[k] = (uint32_t)(s + 1);
        uint64_t C = k / w;
        bump(cc->tc, 0, cc->map[C]);
        if (!prev)
            cc->tc->strip[C]++;
        for (unsigned l = 1; l <= cc->L; l++) {
            if (prev && ((uint64_t)(prev - 1) >> l) == (s >> l))
                break;
            touch(cc, C, l, s >> l)->acc++;
        }
    }
}

static void col_count_free(const tessel_allocator *a, col_count *cc)
{
    tessel_dealloc(a, cc->mark);
    tessel_dealloc(a, cc->map);
    tessel_dealloc(a, cc->last);
    tessel_dealloc(a, cc->lastt);
    tessel_dealloc(a, cc->cb);
}

int tessel_tile_grid_cols(const tessel_tensor *t, const tessel_tile_grid *g,
                          const tessel_allocator *a, tessel_tile_rows **out, tessel_diag *diag)
{
    *out = NULL;
    if (t->order != 2 || g->order != 2 || g->nnz != t->nnz || g->dims[0] != t->dims[0] ||
        g->dims[1] != t->dims[1])
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "per-tile columns are counted for a matrix on its own tile grid");
    if (g->extent[0] >= UINT32_MAX || g->nonempty >= NOT_NODE)
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                               "per-tile columns are counted on grids of fewer than 2^32 - 1 "
                               "rows of tiles and non-empty tiles");
    col_count cc;
    memset(&cc, 0, sizeof(cc));
    uint64_t E1 = g->extent[1] ? g->extent[1] : 1, w = g->tile[1];
    cc.L = levels_of(g->extent[0]);
    uint64_t cells = E1 * (cc.L ? cc.L : 1);
    cc.tc = tessel_tile_rows_new(a, g->nonempty, g->extent[1], w < t->dims[1] ? w : t->dims[1]);
    cc.mark = tessel_alloc_zeroed(a, t->dims[1] ? t->dims[1] : 1, sizeof(uint32_t));
    cc.map = tessel_alloc_array(a, E1, sizeof(uint64_t));
    cc.last = tessel_alloc_zeroed(a, E1, sizeof(uint64_t));
    cc.lastt = tessel_alloc_array(a, E1, sizeof(uint64_t));
    cc.cb = tessel_alloc_zeroed(a, cells, sizeof(col_block));
    if (!cc.tc || !cc.mark || !cc.map || !cc.last || !cc.lastt || !cc.cb) {
        tessel_tile_rows_free(&cc.tc);
        col_count_free(a, &cc);
        return tessel_diag_oom(diag, NULL, "counting the tiles' non-empty columns",
                               (size_t)(t->dims[1] * 4 + E1 * 24 + cells * 12 +
                                        g->nonempty * 8));
    }
    for (uint64_t s = 0; s < g->extent[0]; s++)
        cols_strip(&cc, t, g, s);
    for (uint64_t i = 0; i < g->extent[1] * cc.L; i++) /* the blocks still open */
        flush(&cc, &cc.cb[i]);
    col_count_free(a, &cc);
    *out = cc.tc;
    return TESSEL_OK;
}

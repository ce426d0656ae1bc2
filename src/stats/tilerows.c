/* Non-empty rows per tile of a matrix's tile grid (docs/models/stat.md,
 * "Per-tile non-empty rows"): the statistic the stat estimator prices
 * per-rank lists that read a tile's rows ([CP, CP], [B, B], [CP, UOP])
 * and tiled-csf from.
 *
 * Rows of different rows of tiles (strips) are different rows, so a merged
 * tile's rows are a sum over its strips of the rows that its tiles in one
 * strip hold together, which per-tile counts alone do not give (a row may
 * sit in several of them). So besides each tile's rows the statistic
 * keeps, per strip, the rows of the aligned blocks of 2^l tiles whose two
 * halves both hold a tile: the nodes of the binary trie over the strip's
 * tile columns, at most one fewer than its tiles. Any run of a strip's
 * tiles that is all the tiles of the smallest aligned block holding it
 * (every run a tile 2^l tiles wide holds) reads its rows from that node.
 * One walk over the entries: a row's entries are sorted by column, so a
 * block is new to a row where its column changes, and at the first level
 * where it does not, no wider block changes either. */
#include <string.h>

#include "tessel/stats.h"

#define NOT_KEPT UINT32_MAX

/* Levels above 0 that a grid `cols` tiles wide has: blocks of 2^l tiles
 * until one block spans every column. */
static unsigned levels_of(uint64_t cols)
{
    unsigned l = 0;
    while (l < TESSEL_TILE_ROWS_LEVELS && cols > (UINT64_C(1) << l))
        l++;
    return l;
}

/* The strip's blocks of level l whose halves both hold a tile, in column
 * order: how many; with map, their numbers among them (map[b], NOT_KEPT
 * for the strip's other blocks); with key, their keys from key[next]. */
static uint64_t strip_nodes(const tessel_tile_grid *g, unsigned l, uint64_t s, uint32_t *map,
                            uint64_t *key, uint64_t next)
{
    uint64_t n = 0, t = g->row[s], end = g->row[s + 1];
    while (t < end) {
        uint64_t b = tessel_tile_grid_key(g, t) >> l, first = tessel_tile_grid_key(g, t), last;
        do {
            last = tessel_tile_grid_key(g, t++);
        } while (t < end && (tessel_tile_grid_key(g, t) >> l) == b);
        int kept = ((first ^ last) >> (l - 1)) != 0;
        if (map)
            map[b] = kept ? (uint32_t)n : NOT_KEPT;
        if (kept && key)
            key[next + n] = s << 32 | b;
        n += kept;
    }
    return n;
}

/* Rows [r0, r1) of strip s: one more row for every tile and kept block a
 * row touches (first[l]: the strip's first kept block at level l). */
static void strip_walk(const tessel_tensor *t, const tessel_tile_grid *g, tessel_tile_rows *tr,
                       uint64_t s, const uint64_t *first, const uint64_t *moff,
                       const uint32_t *map)
{
    const uint32_t *col = t->idx[1];
    uint64_t w = g->tile[1], last[TESSEL_TILE_ROWS_LEVELS + 1];
    uint64_t r0 = s * g->tile[0], r1 = r0 + g->tile[0] < t->dims[0] ? r0 + g->tile[0] : t->dims[0];
    uint64_t t0 = g->row[s];
    for (uint64_t r = r0; r < r1; r++) {
        for (unsigned l = 0; l <= tr->nlevels; l++)
            last[l] = UINT64_MAX;
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t c = col[p] / w;
            if (c == last[0])
                continue;
            last[0] = c;
            tr->rows[t0 + map[c]]++;
            for (unsigned l = 1; l <= tr->nlevels && (c >> l) != last[l]; l++) {
                last[l] = c >> l;
                uint32_t k = map[moff[l] + (c >> l)];
                if (k != NOT_KEPT)
                    tr->block[l - 1][first[l] + k]++;
            }
        }
    }
}

uint64_t tessel_tile_rows_bytes(const tessel_tile_rows *tr)
{
    uint64_t n = (tr->n + tr->nstrips) * sizeof(uint32_t);
    for (unsigned l = 0; l < tr->nlevels; l++)
        n += tr->nblocks[l] * (sizeof(uint64_t) + sizeof(uint32_t));
    return n;
}

/* The arrays of tr for grid g, counts zeroed, keys written. */
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
            n += strip_nodes(g, l, s, NULL, NULL, 0);
        tr->nblocks[l - 1] = n;
        tr->block[l - 1] = tessel_alloc_zeroed(a, n ? n : 1, sizeof(uint32_t));
        tr->key[l - 1] = tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
        if (!tr->block[l - 1] || !tr->key[l - 1])
            return TESSEL_ENOMEM;
        for (uint64_t s = 0, at = 0; s < g->extent[0]; s++)
            at += strip_nodes(g, l, s, NULL, tr->key[l - 1], at);
    }
    return TESSEL_OK;
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
    uint64_t moff[TESSEL_TILE_ROWS_LEVELS + 2], first[TESSEL_TILE_ROWS_LEVELS + 1];
    uint32_t *map = NULL;
    int rc = TESSEL_ENOMEM;
    if (tr) {
        memset(tr, 0, sizeof(*tr));
        tr->alloc = a;
        rc = rows_alloc(tr, g);
    }
    if (!rc) {
        moff[0] = 0;
        moff[1] = g->extent[1] + 1;
        for (unsigned l = 1; l <= tr->nlevels; l++)
            moff[l + 1] = moff[l] + ((g->extent[1] + (UINT64_C(1) << l) - 1) >> l) + 1;
        map = tessel_alloc_array(a, moff[tr->nlevels + 1] + 1, sizeof(uint32_t));
        rc = map ? TESSEL_OK : TESSEL_ENOMEM;
    }
    if (rc) {
        uint64_t asked = tr ? tessel_tile_rows_bytes(tr) : sizeof(*tr);
        tessel_tile_rows_free(&tr);
        return tessel_diag_oom(diag, NULL, "counting the tiles' non-empty rows", (size_t)asked);
    }
    memset(first, 0, sizeof(first));
    for (uint64_t s = 0; s < g->extent[0]; s++) {
        uint64_t kept[TESSEL_TILE_ROWS_LEVELS + 1];
        for (uint64_t q = g->row[s]; q < g->row[s + 1]; q++) /* level 0: the tiles */
            map[tessel_tile_grid_key(g, q)] = (uint32_t)(q - g->row[s]);
        for (unsigned l = 1; l <= tr->nlevels; l++)
            kept[l] = strip_nodes(g, l, s, map + moff[l], NULL, 0);
        strip_walk(t, g, tr, s, first, moff, map);
        for (unsigned l = 1; l <= tr->nlevels; l++)
            first[l] += kept[l];
        uint64_t r0 = s * g->tile[0];
        for (uint64_t r = r0; r < r0 + g->tile[0] && r < t->dims[0]; r++)
            tr->strip[s] += t->ptr[r + 1] > t->ptr[r];
    }
    tessel_dealloc(a, map);
    *out = tr;
    return TESSEL_OK;
}

uint32_t tessel_tile_rows_block(const tessel_tile_rows *tr, unsigned l, uint64_t r, uint64_t b)
{
    if (l < 1 || l > tr->nlevels)
        return 0;
    const uint64_t *k = tr->key[l - 1], want = r << 32 | b;
    uint64_t lo = 0, hi = tr->nblocks[l - 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (k[mid] < want)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < tr->nblocks[l - 1] && k[lo] == want ? tr->block[l - 1][lo] : 0;
}

void tessel_tile_rows_free(tessel_tile_rows **p)
{
    if (!p || !*p)
        return;
    tessel_tile_rows *tr = *p;
    *p = NULL;
    tessel_dealloc(tr->alloc, tr->rows);
    tessel_dealloc(tr->alloc, tr->strip);
    for (unsigned l = 0; l < TESSEL_TILE_ROWS_LEVELS; l++) {
        tessel_dealloc(tr->alloc, tr->block[l]);
        tessel_dealloc(tr->alloc, tr->key[l]);
    }
    tessel_dealloc(tr->alloc, tr);
}

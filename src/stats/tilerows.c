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
 * One walk over the entries, O(1) per entry: a row's tiles, in column
 * order, inside a node's block are a run of them, so the node's rows are
 * the rows of its block's tiles less the pairs of tiles one after the
 * other in some row that both lie in the block. A pair lies in the
 * smallest block holding both (a node, its level that of their columns'
 * highest differing bit) and in every block above it, so the walk counts
 * each pair once at that node, and a stack over the trie's right spine
 * (spine_pop) sums tiles and pairs up the trie after the strip.
 *
 * The columns statistic is the same over each column of tiles' trie of
 * rows of tiles, counted from the CSR in one walk too: strips come in
 * order, so a column's entries arrive sorted by strip, and the pair of a
 * column's entry is the tile of the last strip holding that column (a
 * scratch per column) and its tile now. Each column of tiles keeps its
 * spine as its tiles arrive: the node of a pair is the last node of its
 * level pushed there, and a node is finished when one of a higher level
 * arrives. */
#include <string.h>

#include "tessel/stats.h"

#define NOT_NODE UINT32_MAX
#define MAX_LEVELS 64

/* log2(w) when w is a power of two, else 64: the tile of a coordinate
 * by a shift where it can be (a division costs tens of cycles). */
static unsigned shift_of(uint64_t w)
{
    return w && !(w & (w - 1)) ? (unsigned)__builtin_ctzll(w) : 64u;
}

static inline uint64_t tile_of(uint64_t x, uint64_t w, unsigned sh)
{
    return sh < 64 ? x >> sh : x / w;
}

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

/* A node on a trie's right spine (the stack below): the tile it is
 * stored with, and its count so far (its finished left part, less the
 * pairs it joins), modulo 2^32: the finished count fits. */
typedef struct spine_node {
    uint32_t slot, sum;
} spine_node;

/* The nodes' counts from the tiles' and the pairs' (see the top): a stack
 * over a trie's right spine, one entry per level (mask: the levels on it,
 * nd[l] the node of level l). A node is finished where one of a higher
 * level arrives or the tiles end; `carry` is the count of the subtree
 * finished just to its right. Finishes the nodes below level `below`
 * (MAX_LEVELS: all), storing each at base + its slot; returns the count
 * of the subtree they made. */
static uint32_t spine_pop(uint64_t *mask, spine_node *nd, tessel_tile_rows *tr, uint64_t base,
                          unsigned below, uint32_t carry)
{
    uint64_t low = below >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << below) - 1;
    for (uint64_t m = *mask & low; m; m &= m - 1) {
        unsigned l = (unsigned)__builtin_ctzll(m);
        carry += nd[l].sum;
        tessel_tile_rows_set(tr, 1, base + nd[l].slot, carry);
    }
    *mask &= ~low;
    return carry;
}

/* Strip s's maps: map[c] its tile of column c (relative to the strip's
 * first), and per level l >= 1 map[moff[l] + b] the tile block b's node
 * is stored with, for the blocks that are nodes (the walk reads no
 * other). */
static void strip_map(const tessel_tile_grid *g, uint64_t s, const uint64_t *moff, uint32_t *map)
{
    uint64_t t0 = g->row[s], t1 = g->row[s + 1];
    for (uint64_t t = t0; t < t1; t++) {
        uint64_t c = tessel_tile_grid_key(g, t);
        map[c] = (uint32_t)(t - t0);
        if (t + 1 < t1) {
            unsigned l = tessel_tile_rows_level(c, tessel_tile_grid_key(g, t + 1));
            map[moff[l] + (c >> l)] = (uint32_t)(t - t0);
        }
    }
}

/* Rows [r0, r1) of strip s: one more row for each tile a row touches, and
 * one more pair for the node between each two tiles it touches one after
 * the other (pair[], relative to the strip's first tile). */
static void strip_walk(const tessel_tensor *t, const tessel_tile_grid *g, tessel_tile_rows *tr,
                       uint64_t s, const uint64_t *moff, const uint32_t *map, uint32_t *pair)
{
    const uint32_t *col = t->idx[1];
    uint64_t w = g->tile[1];
    unsigned sh = shift_of(w);
    uint64_t r0 = s * g->tile[0], r1 = r0 + g->tile[0] < t->dims[0] ? r0 + g->tile[0] : t->dims[0];
    uint64_t t0 = g->row[s];
    for (uint64_t r = r0; r < r1; r++) {
        uint64_t last = UINT64_MAX;
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t c = tile_of(col[p], w, sh);
            if (c == last)
                continue;
            bump(tr, 0, t0 + map[c]);
            if (last != UINT64_MAX) {
                unsigned l = tessel_tile_rows_level(last, c);
                pair[map[moff[l] + (c >> l)]]++;
            }
            last = c;
        }
    }
}

/* Strip s's nodes from its tiles' rows and its pairs, left to right. */
static void strip_nodes(const tessel_tile_grid *g, tessel_tile_rows *tr, uint64_t s,
                        const uint32_t *pair)
{
    uint64_t t0 = g->row[s], t1 = g->row[s + 1], mask = 0;
    spine_node nd[MAX_LEVELS];
    for (uint64_t t = t0; t + 1 < t1; t++) {
        unsigned l = tessel_tile_rows_level(tessel_tile_grid_key(g, t),
                                            tessel_tile_grid_key(g, t + 1));
        uint32_t left = spine_pop(&mask, nd, tr, t0, l, tessel_tile_rows_tile(tr, t));
        mask |= UINT64_C(1) << l;
        nd[l] = (spine_node){ (uint32_t)(t - t0), left - pair[t - t0] };
    }
    if (t1 > t0)
        spine_pop(&mask, nd, tr, t0, MAX_LEVELS, tessel_tile_rows_tile(tr, t1 - 1));
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
    /* the maps, then the pairs of a strip's nodes (at most a tile each) */
    uint64_t words = moff[levels + 1] + 1 + g->extent[1] + 1;
    uint32_t *map = tessel_alloc_array(a, words, sizeof(uint32_t));
    tessel_tile_rows *tr =
        tessel_tile_rows_new(a, g->nonempty, g->extent[0], g->tile[0] < t->dims[0] ? g->tile[0]
                                                                                   : t->dims[0]);
    if (!tr || !map) {
        tessel_tile_rows_free(&tr);
        tessel_dealloc(a, map);
        return tessel_diag_oom(diag, NULL, "counting the tiles' non-empty rows",
                               (size_t)((2 * n + g->extent[0] + words) * 4));
    }
    uint32_t *pair = map + moff[levels + 1] + 1;
    for (uint64_t s = 0; s < g->extent[0]; s++) {
        memset(pair, 0, (g->row[s + 1] - g->row[s]) * sizeof(uint32_t));
        strip_map(g, s, moff, map);
        strip_walk(t, g, tr, s, moff, map, pair);
        strip_nodes(g, tr, s, pair);
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
 * last strip holding it plus one (0: none yet); per column of tiles its
 * current tile, that tile's columns so far, the last strip holding a tile
 * of it plus one and the levels on its spine (mask), and its spine's
 * nodes, L + 1 per column of tiles (nd[C * (L + 1) + l], stored with
 * their tiles' indices in g). */
typedef struct col_state {
    uint32_t tile, count, last;
    uint64_t mask;
} col_state;

typedef struct col_count {
    tessel_tile_rows *tc;
    unsigned L;
    uint32_t *mark;
    col_state *cs;
    spine_node *nd;
} col_count;

/* Ends column of tiles C's current tile: its count stored, and its nodes
 * below level `below` finished (MAX_LEVELS: all, at the end); returns the
 * count of the subtree they made. */
static uint32_t col_end_tile(col_count *cc, uint64_t C, unsigned below)
{
    col_state *st = &cc->cs[C];
    tessel_tile_rows_set(cc->tc, 0, st->tile, st->count);
    return spine_pop(&st->mask, &cc->nd[C * (cc->L + 1)], cc->tc, 0, below, st->count);
}

/* Strip s: its tiles arrive (each pushing the node between it and its
 * column of tiles' previous tile), then its entries, each column once:
 * one more column for its tile, and one more pair for the node between
 * this tile and the one that column was last seen in. */
static void cols_strip(col_count *cc, const tessel_tensor *t, const tessel_tile_grid *g,
                       uint64_t s)
{
    for (uint64_t i = g->row[s]; i < g->row[s + 1]; i++) {
        uint64_t C = tessel_tile_grid_key(g, i);
        col_state *st = &cc->cs[C];
        if (st->last) {
            unsigned l = tessel_tile_rows_level(st->last - 1, s);
            uint32_t left = col_end_tile(cc, C, l);
            st->mask |= UINT64_C(1) << l;
            cc->nd[C * (cc->L + 1) + l] = (spine_node){ st->tile, left };
        }
        st->tile = (uint32_t)i;
        st->count = 0;
        st->last = (uint32_t)(s + 1);
    }
    uint64_t w = g->tile[1], r0 = s * g->tile[0];
    uint64_t r1 = r0 + g->tile[0] < t->dims[0] ? r0 + g->tile[0] : t->dims[0];
    unsigned sh = shift_of(w);
    for (uint64_t p = t->ptr[r0]; p < t->ptr[r1]; p++) {
        uint32_t k = t->idx[1][p], prev = cc->mark[k];
        if (prev == s + 1)
            continue;
        cc->mark[k] = (uint32_t)(s + 1);
        uint64_t C = tile_of(k, w, sh);
        cc->cs[C].count++;
        if (!prev)
            cc->tc->strip[C]++;
        else
            cc->nd[C * (cc->L + 1) + tessel_tile_rows_level(prev - 1, s)].sum--;
    }
}

static void col_count_free(const tessel_allocator *a, col_count *cc)
{
    tessel_dealloc(a, cc->mark);
    tessel_dealloc(a, cc->cs);
    tessel_dealloc(a, cc->nd);
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
    uint64_t cells = E1 * (cc.L + 1);
    cc.tc = tessel_tile_rows_new(a, g->nonempty, g->extent[1], w < t->dims[1] ? w : t->dims[1]);
    cc.mark = tessel_alloc_zeroed(a, t->dims[1] ? t->dims[1] : 1, sizeof(uint32_t));
    cc.cs = tessel_alloc_zeroed(a, E1, sizeof(col_state));
    cc.nd = tessel_alloc_array(a, cells, sizeof(spine_node));
    if (!cc.tc || !cc.mark || !cc.cs || !cc.nd) {
        tessel_tile_rows_free(&cc.tc);
        col_count_free(a, &cc);
        return tessel_diag_oom(diag, NULL, "counting the tiles' non-empty columns",
                               (size_t)(t->dims[1] * 4 + E1 * sizeof(col_state) +
                                        cells * sizeof(spine_node) + g->nonempty * 2));
    }
    for (uint64_t s = 0; s < g->extent[0]; s++)
        cols_strip(&cc, t, g, s);
    for (uint64_t C = 0; C < g->extent[1]; C++) /* the tiles and nodes still open */
        if (cc.cs[C].last)
            col_end_tile(&cc, C, MAX_LEVELS);
    col_count_free(a, &cc);
    *out = cc.tc;
    return TESSEL_OK;
}

/* Per tile of a square matrix's tile grid, the nonzeros whose transpose is
 * a nonzero too (docs/models/stat.md, "The step count on near-symmetric
 * tiles"): the statistic the stat estimator's in-visit step count reads
 * where B is A (Z = A A), so that a diagonal output tile's A and B
 * reduction coordinates are not taken as independent.
 *
 * One walk over the rows in order, O(nnz + rows): entry (i, k) with k > i
 * looks for i in row k from a cursor kept per row, which only moves
 * forward (row k is asked for i in increasing order), so the cursors
 * travel each row once. A pair found counts in both its entries' tiles,
 * each found by galloping from a cursor in its strip (row i's own, reset
 * per row; one per strip for the transposes, whose i only grows); a
 * diagonal entry is its own transpose. The random reads of row k are
 * prefetched ahead of the entries that make them. Scratch: 4 B per row
 * and per strip of tiles. */
#include <string.h>

#include "tessel/stats.h"

unsigned tessel_tile_sym_width(const tessel_tile_grid *g)
{
    uint64_t e0 = g->tile[0] < g->dims[0] ? g->tile[0] : g->dims[0];
    uint64_t e1 = g->tile[1] < g->dims[1] ? g->tile[1] : g->dims[1];
    uint64_t most = e1 && e0 > UINT32_MAX / e1 ? UINT32_MAX : e0 * e1;
    return most <= UINT8_MAX ? 1u : most <= UINT16_MAX ? 2u : 4u;
}

tessel_tile_sym *tessel_tile_sym_new(const tessel_allocator *a, uint64_t n, unsigned width)
{
    tessel_tile_sym *s = tessel_alloc(a, sizeof(*s));
    if (!s)
        return NULL;
    memset(s, 0, sizeof(*s));
    s->alloc = a;
    s->n = n;
    s->width = width;
    s->count = tessel_alloc_zeroed(a, n ? n : 1, width);
    if (!s->count)
        tessel_tile_sym_free(&s);
    return s;
}

void tessel_tile_sym_free(tessel_tile_sym **p)
{
    if (!p || !*p)
        return;
    tessel_tile_sym *s = *p;
    *p = NULL;
    tessel_dealloc(s->alloc, s->count);
    tessel_dealloc(s->alloc, s);
}

uint64_t tessel_tile_sym_bytes(const tessel_tile_sym *s)
{
    return s ? s->n * s->width : 0;
}

/* The first tile of [lo, hi) (a strip's tiles from a cursor) whose column
 * of tiles is C or more: galloping from lo, then a binary search, so a
 * cursor that moves a little reads a little. */
static uint64_t tile_from(const tessel_tile_grid *g, uint64_t lo, uint64_t hi, uint64_t C)
{
    if (lo >= hi || tessel_tile_grid_key(g, lo) >= C)
        return lo;
    uint64_t step = 1; /* key(lo) < C from here */
    for (;;) {
        uint64_t next = hi - lo > step ? lo + step : hi;
        if (next == hi || tessel_tile_grid_key(g, next) >= C) {
            while (next - lo > 1) {
                uint64_t mid = lo + (next - lo) / 2;
                if (tessel_tile_grid_key(g, mid) < C)
                    lo = mid;
                else
                    next = mid;
            }
            return next;
        }
        lo = next;
        step *= 2;
    }
}

static void bump(tessel_tile_sym *s, uint64_t i)
{
    if (s->width == 1)
        ((uint8_t *)s->count)[i]++;
    else if (s->width == 2)
        ((uint16_t *)s->count)[i]++;
    else
        ((uint32_t *)s->count)[i]++;
}

/* How far ahead the walk prefetches: row k's cursor and start at entry
 * p + 2 SYM_AHEAD, the entry its cursor points at at p + SYM_AHEAD. */
#define SYM_AHEAD 16u

/* The walk (see the top) with cur[row] and strip[strip of tiles] the
 * cursors (zeroed). Row k's cursor, start and entry at its cursor are
 * random reads: they are prefetched SYM_AHEAD and 2 SYM_AHEAD entries
 * ahead, so that the walk waits on memory for many entries at once, not
 * one by one. A pair's tiles are found from cursors too: (i, k)'s in row
 * i's strip from the row's last one (k grows along the row), (k, i)'s in
 * row k's strip from that strip's (i grows along the walk). */
static void sym_walk(const tessel_tensor *t, const tessel_tile_grid *g, uint32_t *cur,
                     uint32_t *strip, tessel_tile_sym *s)
{
    const uint32_t *idx = t->idx[1];
    uint64_t nnz = t->ptr[t->dims[0]], h = g->tile[0], w = g->tile[1];
    for (uint64_t i = 0; i < t->dims[0]; i++) {
        uint64_t I = i / h, own = g->row[I];
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            /* hints only: a cursor read here may move before its entry */
            if (p + 2 * SYM_AHEAD < nnz && idx[p + 2 * SYM_AHEAD] > i) {
                __builtin_prefetch(&cur[idx[p + 2 * SYM_AHEAD]], 1);
                __builtin_prefetch(&t->ptr[idx[p + 2 * SYM_AHEAD]], 0);
            }
            if (p + SYM_AHEAD < nnz && idx[p + SYM_AHEAD] > i)
                __builtin_prefetch(&idx[t->ptr[idx[p + SYM_AHEAD]] + cur[idx[p + SYM_AHEAD]]], 0);
            uint64_t k = idx[p];
            if (k < i)
                continue;
            if (k == i) {
                own = tile_from(g, own, g->row[I + 1], i / w);
                bump(s, own);
                s->total++;
                continue;
            }
            uint64_t q = t->ptr[k] + cur[k], end = t->ptr[k + 1];
            while (q < end && idx[q] < i)
                q++;
            cur[k] = (uint32_t)(q - t->ptr[k]);
            if (q < end && idx[q] == i) {
                uint64_t K = k / h, m = tile_from(g, g->row[K] + strip[K], g->row[K + 1], i / w);
                strip[K] = (uint32_t)(m - g->row[K]);
                own = tile_from(g, own, g->row[I + 1], k / w);
                bump(s, own);
                bump(s, m);
                s->total += 2;
            }
        }
    }
}

int tessel_tile_grid_sym(const tessel_tensor *t, const tessel_tile_grid *g,
                         const tessel_allocator *a, tessel_tile_sym **out, tessel_diag *diag)
{
    *out = NULL;
    if (t->order != 2 || g->order != 2 || g->nnz != t->nnz || g->dims[0] != t->dims[0] ||
        g->dims[1] != t->dims[1])
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "per-tile transposed pairs are counted for a matrix on its own "
                               "tile grid");
    if (t->dims[0] != t->dims[1])
        return TESSEL_OK; /* no transpose to meet: not collected */
    for (uint64_t r = 0; r < t->dims[0]; r++)
        if (t->ptr[r + 1] - t->ptr[r] > UINT32_MAX)
            return TESSEL_OK; /* a cursor is 32 bits: not collected */
    unsigned width = tessel_tile_sym_width(g);
    uint64_t strips = g->extent[0] ? g->extent[0] : 1;
    uint32_t *cur = tessel_alloc_zeroed(a, t->dims[0] ? t->dims[0] : 1, sizeof(uint32_t));
    uint32_t *strip = cur ? tessel_alloc_zeroed(a, strips, sizeof(uint32_t)) : NULL;
    tessel_tile_sym *s = strip ? tessel_tile_sym_new(a, g->nonempty, width) : NULL;
    if (!s) {
        tessel_dealloc(a, cur);
        tessel_dealloc(a, strip);
        return tessel_diag_oom(diag, NULL, "counting the tiles' transposed pairs",
                               (size_t)(t->dims[0] * 4 + strips * 4 + g->nonempty * width));
    }
    sym_walk(t, g, cur, strip, s);
    tessel_dealloc(a, cur);
    tessel_dealloc(a, strip);
    *out = s;
    return TESSEL_OK;
}

/* Per tile of a square matrix's tile grid, the nonzeros whose transpose is
 * a nonzero too (docs/models/stat.md, "The step count on near-symmetric
 * tiles"): the statistic the stat estimator's in-visit step count reads
 * where B is A (Z = A A), so that a diagonal output tile's A and B
 * reduction coordinates are not taken as independent.
 *
 * One walk over the rows in order, O(nnz + rows): entry (i, k) with k > i
 * looks for i in row k from a cursor kept per row, which only moves
 * forward (row k is asked for i in increasing order), so the cursors
 * travel each row once. A pair found counts in both its entries' tiles
 * (a binary search in each one's strip); a diagonal entry is its own
 * transpose. Scratch: 4 B per row. */
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

/* The index in g of the tile holding (r, c) (it holds a nonzero). */
static uint64_t tile_at(const tessel_tile_grid *g, uint64_t r, uint64_t c)
{
    uint64_t lo = g->row[r / g->tile[0]], hi = g->row[r / g->tile[0] + 1], C = c / g->tile[1];
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (tessel_tile_grid_key(g, mid) <= C)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
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

/* The walk (see the top) with cur[row] the cursors (zeroed). */
static void sym_walk(const tessel_tensor *t, const tessel_tile_grid *g, uint32_t *cur,
                     tessel_tile_sym *s)
{
    const uint32_t *idx = t->idx[1];
    for (uint64_t i = 0; i < t->dims[0]; i++)
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            uint64_t k = idx[p];
            if (k < i)
                continue;
            if (k == i) {
                bump(s, tile_at(g, i, i));
                s->total++;
                continue;
            }
            uint64_t q = t->ptr[k] + cur[k], end = t->ptr[k + 1];
            while (q < end && idx[q] < i)
                q++;
            cur[k] = (uint32_t)(q - t->ptr[k]);
            if (q < end && idx[q] == i) {
                bump(s, tile_at(g, i, k));
                bump(s, tile_at(g, k, i));
                s->total += 2;
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
    uint32_t *cur = tessel_alloc_zeroed(a, t->dims[0] ? t->dims[0] : 1, sizeof(uint32_t));
    tessel_tile_sym *s = cur ? tessel_tile_sym_new(a, g->nonempty, width) : NULL;
    if (!s) {
        tessel_dealloc(a, cur);
        return tessel_diag_oom(diag, NULL, "counting the tiles' transposed pairs",
                               (size_t)(t->dims[0] * 4 + g->nonempty * width));
    }
    sym_walk(t, g, cur, s);
    tessel_dealloc(a, cur);
    *out = s;
    return TESSEL_OK;
}

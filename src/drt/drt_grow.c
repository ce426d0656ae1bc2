/* The DRT walker's tiles (the model: drt_walk.c): footprints of micro-tile
 * boxes, growth one micro tile at a time (drt Alg. 2), tile signatures,
 * and the per-line accumulators the walks sum into. */
#include <math.h>
#include <string.h>

#include "drt_walk_internal.h"

/* ------------------------------------------------------------------ */
/* Footprints. */

/* Micro tiles and nonzeros of role's grid inside the box. */
void drt_w_rect_sum(const walker *w, unsigned role, const uint64_t *lo, const uint64_t *hi,
                    uint64_t *m, uint64_t *n)
{
    const drt_grid *g = &w->d->grid[role];
    unsigned a = g->x[0], b = g->x[1];
    if (hi[a] - lo[a] > hi[b] - lo[b]) {
        unsigned t = a;
        a = b;
        b = t;
    }
    *m = *n = 0;
    for (uint64_t c = lo[a]; c < hi[a]; c++) {
        uint64_t sm, sn;
        drt_strip(g, a, c, lo[b], hi[b], &sm, &sn);
        *m += sm;
        *n += sn;
    }
}

/* The first line c >= from along x where role's strip over the other
 * index's range [lo, hi) is non-empty (mext[x] if none), when that range
 * spans few lines; otherwise just `from` (the caller steps one line). Lets
 * growth cross empty space in one step: empty strips always fit. */
static uint64_t next_line(const walker *w, unsigned role, unsigned x, uint64_t from, uint64_t lo,
                          uint64_t hi)
{
    const drt_grid *g = &w->d->grid[role];
    unsigned y = drt_w_other_index(w, role, x);
    const drt_lines *l = &g->by[g->x[0] == y ? 0 : 1]; /* lines along y, entries over x */
    if (hi - lo > 16)
        return from;
    uint64_t best = w->d->mext[x], end = hi < l->nlines ? hi : l->nlines;
    for (uint64_t c = lo; c < end; c++) {
        uint64_t a = l->ptr[c], b = l->ptr[c + 1];
        while (a < b) {
            uint64_t mid = a + (b - a) / 2;
            if (l->other[mid] < from)
                a = mid + 1;
            else
                b = mid;
        }
        if (a < l->ptr[c + 1] && l->other[a] < best)
            best = l->other[a];
    }
    return best;
}

/* One growth step along x (Alg. 2 line 13 with n = 1); with `jump`, a
 * run of empty lines counts as one step. Along the output index the
 * caller bounds (w->zg), the output lines the step adds must fit Z's
 * partition too (drt_walk_out.c), empty input lines included. */
static int try_grow(walker *w, unsigned role, const uint64_t *lo, uint64_t *hi, unsigned x,
                    int jump, uint64_t *m, uint64_t *n)
{
    if (hi[x] >= w->d->mext[x])
        return 0;
    unsigned y = drt_w_other_index(w, role, x);
    int zx = w->zg.active && w->zg.x == x;
    uint64_t sm, sn;
    drt_strip(&w->d->grid[role], x, hi[x], lo[y], hi[y], &sm, &sn);
    if (sm && !drt_w_fits(w, role, *m + sm, *n + sn))
        return 0; /* TooLarge: constraint[x] = tile_sizes[x] (Alg. 2 line 15) */
    if (!sm && jump) {
        uint64_t nx = next_line(w, role, x, hi[x], lo[y], hi[y]);
        uint64_t to = nx > hi[x] + 1 ? nx : hi[x] + 1;
        if (zx) {
            uint64_t got = drt_w_zg_add(w, hi[x], to, 0);
            if (!got)
                return 0; /* the output tile is TooLarge */
            to = hi[x] + got;
        }
        hi[x] = to;
        return 1;
    }
    if (zx && !drt_w_zg_add(w, hi[x], hi[x] + 1, 0))
        return 0;
    hi[x]++;
    *m += sm;
    *n += sn;
    return 1;
}

/* growDims (Alg. 2) over dims[0 .. nd), dims[0] the contracted index
 * when it may grow. */
void drt_w_grow(walker *w, unsigned role, const uint64_t *lo, uint64_t *hi,
                const unsigned *dims, unsigned nd, uint64_t *m, uint64_t *n)
{
    if (w->growth == TESSEL_DRT_GROW_CONTRACTED_FIRST || nd == 1) {
        for (unsigned i = 0; i < nd; i++)
            while (try_grow(w, role, lo, hi, dims[i], 1, m, n))
                ;
        return;
    }
    /* alternating: one micro line per step, empty or not */
    int active[2] = { 1, 1 };
    while (active[0] || active[1])
        for (unsigned i = 0; i < 2; i++)
            if (active[i] && !try_grow(w, role, lo, hi, dims[i], 0, m, n))
                active[i] = 0;
}

void drt_w_make_tile(const walker *w, unsigned role, const uint64_t *lo, const uint64_t *hi,
                     uint64_t m, uint64_t n, uint64_t h, tile *t)
{
    memset(t, 0, sizeof(*t));
    const drt_grid *g = &w->d->grid[role];
    for (unsigned i = 0; i < 2; i++) {
        t->lo[g->x[i]] = lo[g->x[i]];
        t->hi[g->x[i]] = hi[g->x[i]];
    }
    t->m = m;
    t->n = t->use = n;
    t->h = h;
    drt_w_bytes_of(&w->c[role], m, n, &t->data, &t->meta);
}

/* Sorts the touched lines (all < bound): by insertion when few, else
 * radix. */
void drt_w_acc_sort(acc *a, uint64_t bound)
{
    if (a->len > 16) {
        tessel_sort_u64(a->list, a->scratch, a->len, bound ? bound - 1 : 0);
        return;
    }
    for (uint64_t i = 1; i < a->len; i++) {
        uint64_t x = a->list[i], j = i;
        for (; j > 0 && a->list[j - 1] > x; j--)
            a->list[j] = a->list[j - 1];
        a->list[j] = x;
    }
}

/* The same when the touched lines are a subset of sup's sorted lines and
 * picking them from there is cheaper. */
void drt_w_acc_sort_within(acc *a, const acc *sup, uint64_t bound)
{
    if (a->len <= 16 || sup->len > 16 * a->len) {
        drt_w_acc_sort(a, bound);
        return;
    }
    uint64_t n = 0;
    for (uint64_t t = 0; t < sup->len; t++) { /* branch-free: most lines are kept or not at random */
        uint64_t x = sup->list[t];
        a->list[n] = x;
        n += a->m[x] != 0;
    }
    a->len = n;
}

void drt_w_acc_clear(acc *a)
{
    for (uint64_t t = 0; t < a->len; t++) {
        uint64_t l = a->list[t];
        a->m[l] = a->n[l] = a->h[l] = 0;
    }
    a->len = 0;
}

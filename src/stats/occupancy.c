/* Occupancy summaries over the non-empty tiles of a grid: mean, spread,
 * nearest-rank quantiles and power-of-two histograms, from the distinct
 * occupancies and their tile counts (occ_acc.c). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "tessel/stats.h"

int tessel_occupancy_create(const tessel_tile_grid *g, tessel_occupancy **out, tessel_diag *diag)
{
    *out = NULL;
    uint64_t tiles;
    if (tessel_tile_grid_tiles(g, &tiles) != TESSEL_OK)
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, "tile",
                               "the tile grid has more than 2^64 tiles; use larger tiles");
    tessel_occupancy_acc *acc = NULL;
    int rc = tessel_occupancy_acc_create(g->alloc, &acc, diag);
    for (uint64_t i = 0; i < g->nonempty && !rc; i++)
        rc = tessel_occupancy_acc_add(acc, tessel_tile_grid_count(g, i), 1, diag);
    if (!rc)
        rc = tessel_occupancy_acc_finish(acc, tiles, out, diag);
    tessel_occupancy_acc_free(&acc);
    return rc;
}

void tessel_occupancy_free(tessel_occupancy **op)
{
    if (!op || !*op)
        return;
    tessel_occupancy *o = *op;
    *op = NULL;
    tessel_dealloc(o->alloc, o->value);
    tessel_dealloc(o->alloc, o->upto);
    tessel_dealloc(o->alloc, o);
}

/* The occupancy of the tile of rank `rank` (1-based) in ascending order. */
static uint64_t at_rank(const tessel_occupancy *o, uint64_t rank)
{
    uint64_t lo = 0, hi = o->ndistinct - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (o->upto[mid] >= rank)
            hi = mid;
        else
            lo = mid + 1;
    }
    return o->value[lo];
}

uint64_t tessel_occupancy_quantile(const tessel_occupancy *o, double q)
{
    uint64_t n = o->nonempty;
    if (n == 0)
        return 0;
    if (!(q > 0))
        return o->min;
    if (q >= 1)
        return o->max;
    /* rank = ceil(q * n). q (a decimal such as 0.95) is off by up to half
     * an ulp and the product adds another, so a q*n that is an integer in
     * exact arithmetic may come out a few ulps above it; shave those off. */
    double x = q * (double)n;
    uint64_t rank = (uint64_t)ceil(x - 4 * DBL_EPSILON * x);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return at_rank(o, rank);
}

unsigned tessel_occupancy_histogram(const tessel_occupancy *o, uint64_t *lo, uint64_t *hi,
                                    uint64_t *count)
{
    if (o->nonempty == 0)
        return 0;
    unsigned bins = 0;
    for (uint64_t v = o->max; v; v >>= 1)
        bins++;
    if (lo || hi || count) {
        uint64_t i = 0, below = 0;
        for (unsigned b = 0; b < bins; b++) {
            uint64_t l = 1ull << b;
            uint64_t h = b == 63 ? UINT64_MAX : 1ull << (b + 1);
            while (i < o->ndistinct && o->value[i] < h)
                i++;
            uint64_t upto = i ? o->upto[i - 1] : 0;
            if (lo)
                lo[b] = l;
            if (hi)
                hi[b] = h;
            if (count)
                count[b] = upto - below;
            below = upto;
        }
    }
    return bins;
}

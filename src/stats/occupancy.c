/* Occupancy summaries over the non-empty tiles of a grid: mean, spread,
 * nearest-rank quantiles and power-of-two histograms. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "tessel/stats.h"

int tessel_occupancy_create(const tessel_tile_grid *g, tessel_occupancy **out, tessel_diag *diag)
{
    *out = NULL;
    tessel_occupancy *o = tessel_alloc(g->alloc, sizeof(*o));
    if (!o)
        return tessel_diag_oom(diag, NULL, "creating the tile occupancy", sizeof(*o));
    memset(o, 0, sizeof(*o));
    o->alloc = g->alloc;
    if (tessel_tile_grid_tiles(g, &o->tiles) != TESSEL_OK) {
        tessel_occupancy_free(&o);
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, "tile",
                               "the tile grid has more than 2^64 tiles; use larger tiles");
    }
    o->nonempty = g->nonempty;
    o->nnz = g->nnz;
    uint64_t n = g->nonempty;
    if (n == 0) {
        *out = o;
        return TESSEL_OK;
    }
    o->sorted = tessel_alloc_array(g->alloc, n, sizeof(uint64_t));
    uint64_t *scratch = tessel_alloc_array(g->alloc, n, sizeof(uint64_t));
    if (!o->sorted || !scratch) {
        tessel_dealloc(g->alloc, scratch);
        tessel_occupancy_free(&o);
        return tessel_diag_oom(diag, NULL, "sorting the tile occupancy",
                               (size_t)(2 * n * sizeof(uint64_t)));
    }
    memcpy(o->sorted, g->count, n * sizeof(uint64_t));
    uint64_t max = 0;
    for (uint64_t i = 0; i < n; i++)
        if (o->sorted[i] > max)
            max = o->sorted[i];
    tessel_sort_u64(o->sorted, scratch, n, max);
    tessel_dealloc(g->alloc, scratch);
    o->min = o->sorted[0];
    o->max = o->sorted[n - 1];
    o->mean = (double)g->nnz / (double)n;
    /* Summed in ascending order: the same bits on every machine. */
    double ss = 0;
    for (uint64_t i = 0; i < n; i++) {
        double d = (double)o->sorted[i] - o->mean;
        ss += d * d;
    }
    o->stddev = sqrt(ss / (double)n);
    *out = o;
    return TESSEL_OK;
}

void tessel_occupancy_free(tessel_occupancy **op)
{
    if (!op || !*op)
        return;
    tessel_occupancy *o = *op;
    *op = NULL;
    tessel_dealloc(o->alloc, o->sorted);
    tessel_dealloc(o->alloc, o);
}

uint64_t tessel_occupancy_quantile(const tessel_occupancy *o, double q)
{
    uint64_t n = o->nonempty;
    if (n == 0)
        return 0;
    if (!(q > 0))
        return o->sorted[0];
    if (q >= 1)
        return o->sorted[n - 1];
    /* rank = ceil(q * n). q (a decimal such as 0.95) is off by up to half
     * an ulp and the product adds another, so a q*n that is an integer in
     * exact arithmetic may come out a few ulps above it; shave those off. */
    double x = q * (double)n;
    uint64_t rank = (uint64_t)ceil(x - 4 * DBL_EPSILON * x);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return o->sorted[rank - 1];
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
        uint64_t i = 0;
        for (unsigned b = 0; b < bins; b++) {
            uint64_t l = 1ull << b;
            uint64_t h = b == 63 ? UINT64_MAX : 1ull << (b + 1);
            uint64_t c = 0;
            while (i < o->nonempty && o->sorted[i] < h) {
                c++;
                i++;
            }
            if (lo)
                lo[b] = l;
            if (hi)
                hi[b] = h;
            if (count)
                count[b] = c;
        }
    }
    return bins;
}

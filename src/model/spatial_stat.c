/* The stat estimator's spatial split (docs/models/spatial.md, issue 22 item
 * 2): the units' work from the statistics' base tile grids instead of the
 * data. The non-empty child tiles and their nonzeros read off the grids
 * exactly (a base cell lies in one child tile when the base edges divide
 * the child and level edges), so the intersection steps are exact's; a
 * child tile pair's MACs are their expectation nnz(A) nnz(B) / L under
 * nonzeros spread evenly over the L values of k the tiles share, with a
 * Poisson variance (variance = mean). Each step then waits for the expected
 * busiest instance: the expected maximum of the instances' normal loads. */
#include <math.h>
#include <string.h>

#include "spatial_internal.h"

/* Input t's base grid with the workload index of each of its modes. */
static const tessel_tile_grid *grid_of(const tessel_spec *spec, const tessel_stat_data *st,
                                       unsigned t, int *gidx, tessel_diag *diag)
{
    const tessel_tile_grid *g = tessel_stat_data_grid(st, t, gidx);
    if (!g)
        tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->path, 0, 0, "spatial",
                        "spatial mapping under -e stat: the statistics hold no tile grid of "
                        "%s", spec->workload.tensor[t].name);
    return g;
}

int sp_stat_extents(const tessel_spec *spec, const tessel_stat_data *st, unsigned ta,
                    unsigned tb, uint64_t *extent, tessel_diag *diag)
{
    const unsigned ts[2] = { ta, tb };
    for (unsigned q = 0; q < 2; q++) {
        int gidx[TESSEL_MAX_ORDER];
        const tessel_tile_grid *g = grid_of(spec, st, ts[q], gidx, diag);
        if (!g)
            return TESSEL_EUNSUPPORTED;
        for (unsigned m = 0; m < g->order && m < TESSEL_MAX_ORDER; m++)
            if (gidx[m] >= 0 && (unsigned)gidx[m] < TESSEL_SPEC_MAX_INDICES)
                extent[gidx[m]] = g->dims[m];
    }
    return TESSEL_OK;
}

/* Whether every base cell of edge b along ax lies inside one child tile. */
static int cells_fit(const sp_axis *ax, uint64_t b)
{
    if (ax->index < 0 || b <= 1)
        return 1;
    int edge_ok = ax->edge % b == 0 || ax->edge >= ax->extent;
    int child_ok = ax->cedge % b == 0 || (ax->cedge == ax->edge && edge_ok);
    return edge_ok && child_ok;
}

/* Tensor t's non-empty child tiles along (ax_k, ax_o) from its base grid,
 * as tile_counts in spatial_steps.c builds them from the nonzeros. */
static int grid_counts(const tessel_spec *spec, const tessel_stat_data *st, unsigned t,
                       const sp_axis *ax_k, const sp_axis *ax_o, sp_map *m, uint64_t *n,
                       tessel_diag *diag)
{
    int gidx[TESSEL_MAX_ORDER];
    const tessel_tile_grid *g = grid_of(spec, st, t, gidx, diag);
    if (!g)
        return TESSEL_EUNSUPPORTED;
    for (unsigned d = 0; d < g->order; d++) {
        const sp_axis *ax = gidx[d] == ax_k->index ? ax_k : gidx[d] == ax_o->index ? ax_o : NULL;
        if (ax && !cells_fit(ax, g->tile[d]))
            return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->path, 0, 0, "spatial",
                                   "spatial mapping under -e stat: the statistics' base tile "
                                   "(%llu along %s) does not divide the split's tiles (level "
                                   "%llu, child %llu); collect them for this design's tiles",
                                   (unsigned long long)g->tile[d],
                                   spec->workload.index_name[gidx[d]],
                                   (unsigned long long)ax->edge, (unsigned long long)ax->cedge);
    }
    uint64_t no = sp_children(ax_o), c[TESSEL_MAX_ORDER];
    for (uint64_t i = 0; i < g->nonempty; i++) {
        tessel_tile_grid_coords(g, i, c);
        uint64_t ck = 0, co = 0;
        for (unsigned d = 0; d < g->order; d++) {
            if (gidx[d] == ax_k->index)
                ck = c[d] * g->tile[d];
            else if (gidx[d] == ax_o->index)
                co = c[d] * g->tile[d];
        }
        int rc = sp_map_add(m, sp_child_of(ax_k, ck) * no + sp_child_of(ax_o, co),
                            tessel_tile_grid_count(g, i), 0);
        if (rc)
            return tessel_diag_set(diag, rc, spec->path, 0, 0, "spatial",
                                   "spatial mapping: out of memory");
    }
    *n = sp_map_sorted(m);
    return TESSEL_OK;
}

int sp_stat_fill(const tessel_spec *spec, const tessel_stat_data *st, unsigned ta, unsigned tb,
                 const sp_axis ax[3], uint64_t per_tile, const tessel_allocator *a, sp_map *m,
                 tessel_diag *diag)
{
    if (!sp_mul63(sp_children(&ax[1]), sp_children(&ax[0])) ||
        !sp_mul63(sp_children(&ax[1]), sp_children(&ax[2])))
        return tessel_diag_set(diag, TESSEL_ERANGE, spec->path, 0, 0, "spatial",
                               "spatial mapping: the child tiles' numbers pass 2^63");
    sp_map ma = { a, NULL, 0, 0, 0 }, mb = { a, NULL, 0, 0, 0 };
    uint64_t na = 0, nb = 0;
    int rc = grid_counts(spec, st, ta, &ax[1], &ax[0], &ma, &na, diag);
    if (!rc)
        rc = grid_counts(spec, st, tb, &ax[1], &ax[2], &mb, &nb, diag);
    if (!rc) {
        /* intersection steps only with an intersection unit, as exact counts them */
        rc = sp_pair_up(ma.slot, na, mb.slot, nb, ax, per_tile, 1,
                        spec->compute.intersect.cls[0] != 0, m);
        if (rc)
            tessel_diag_set(diag, rc, spec->path, 0, 0, "spatial",
                            "spatial mapping: out of memory");
    }
    tessel_dealloc(a, ma.slot);
    tessel_dealloc(a, mb.slot);
    return rc;
}

/* P(X <= x) for X ~ N(mu, s^2 / 2) (s = sqrt(2 var)); a step at mu when s is 0. */
static double cdf(double x, double mu, double s)
{
    if (s <= 0)
        return x >= mu ? 1.0 : 0.0;
    return 0.5 * erfc(-(x - mu) / s);
}

/* E[max] = lo + integral from lo to hi of (1 - prod_p F_p(x)) dx, where lo is
 * where some load is surely above (its mean - 8 sigma, the largest such) and
 * hi where all are surely below; Simpson's rule on 128 intervals (relative
 * error below 3e-6 of the 4096-interval value on mixed loads of 2-128
 * instances, against 1e-8 with 512: a quarter of the erfc calls). A load at
 * least 6 s (8.5 sigma) below x has F_p(x) = 0.5 erfc(-6) = 1 exactly in
 * doubles (erfc(6) = 2e-17 is below half an ulp of 2), and an exact load
 * (var 0) at or below x has F_p(x) = 1; x only grows, so such a load is 1 at
 * every later point too and leaves the list of loads still to multiply (kept
 * in their order). Multiplying by 1.0 is exact, and once the product is at
 * most 2^-54, 1 - prod rounds to 1.0 whatever the factors left (all in
 * [0, 1]) make of it, so the point stops there: the result is bit for bit
 * that of the loop over every load at every point. */
double sp_expected_max(const double *mu, const double *var, unsigned n)
{
    enum { STEPS = 128, CACHED = 256 };
    double sd[CACHED]; /* sqrt(2 var) of the first loads, computed once */
    unsigned act[CACHED]; /* the loads not yet 1 for good, in order */
    double top = 0, lo = 0, hi = 0;
    int spread = 0;
    for (unsigned p = 0; p < n; p++) {
        double s = var[p] > 0 ? sqrt(var[p]) : 0;
        if (p < CACHED)
            sd[p] = var[p] > 0 ? sqrt(2.0 * var[p]) : 0;
        top = p == 0 || mu[p] > top ? mu[p] : top;
        lo = p == 0 || mu[p] - 8 * s > lo ? mu[p] - 8 * s : lo;
        hi = p == 0 || mu[p] + 8 * s > hi ? mu[p] + 8 * s : hi;
        spread |= var[p] > 0;
    }
    if (!spread || !(hi > lo))
        return top;
    double h = (hi - lo) / STEPS, sum = 0;
    unsigned na = 0;
    for (unsigned p = 0; p < n && p < CACHED; p++)
        act[na++] = p;
    for (unsigned q = 0; q <= STEPS; q++) {
        double x = lo + h * q, prod = 1;
        unsigned j = 0, w = 0;
        for (; j < na && prod > 0x1p-54; j++) {
            unsigned p = act[j];
            double s = sd[p];
            if (s > 0 ? x - mu[p] >= 6 * s : x >= mu[p])
                continue; /* F_p is 1.0 here and from here on */
            act[w++] = p;
            prod *= cdf(x, mu[p], s);
        }
        while (j < na) /* after an early stop the rest stay listed */
            act[w++] = act[j++];
        na = w;
        for (unsigned p = CACHED; p < n && prod > 0x1p-54; p++) {
            double s = var[p] > 0 ? sqrt(2.0 * var[p]) : 0;
            if (s > 0 && x - mu[p] >= 6 * s)
                continue; /* F_p(x) is 1.0 */
            prod *= cdf(x, mu[p], s);
        }
        double w8 = q == 0 || q == STEPS ? 1 : (q % 2 ? 4 : 2);
        sum += w8 * (1 - prod);
    }
    return lo + sum * h / 3;
}

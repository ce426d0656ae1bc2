/* S-U-C uniform tiles: conservative and prescient (tailors §2, §5.2:
 * ExTensor-N sizes tiles as if dense, ExTensor-P knows the worst real
 * tile). Both keep the mapping's aspect ratio and take the largest scale
 * whose worst tile fits every input's partition, level by level from the
 * innermost, each level's edges multiples of the next inner level's (tiles
 * nest). The worst tile of a candidate comes from
 *   dense      the tile's area (no data needed);
 *   stats      the statistics' base grid merged to the candidate, exact
 *              for edges that are multiples of the base grid, which the
 *              candidates then are;
 *   exact      the data's own tile grid at the candidate (prescient).
 * The worst tile grows with the scale (tiles of a larger scale are unions
 * of smaller ones when they nest, and nearly so otherwise), so a binary
 * search over the scale finds the largest fit in O(log extent) candidates. */
#include <string.h>

#include "strategy_internal.h"


static uint64_t base_max(const tessel_tile_grid *g)
{
    uint64_t mx = 0;
    for (uint64_t k = 0; k < g->nonempty; k++)
        if (tessel_tile_grid_count(g, k) > mx)
            mx = tessel_tile_grid_count(g, k);
    return mx;
}

/* max_from_base's pass for a matrix: the base rows of one row of shape's
 * tiles (to0 equal) add their tiles into acc by column of shape's tiles
 * (to1), read and cleared when that row of tiles ends. */
static uint64_t max_of_matrix(const tessel_tile_grid *g, const uint64_t *to0,
                              const uint64_t *to1, uint64_t *acc, uint64_t *touched)
{
    uint64_t mx = 0, nt = 0;
    for (uint64_t r = 0; r < g->extent[0]; r++) {
        uint64_t end = tessel_tile_grid_row_begin(g, r + 1);
        for (uint64_t n = tessel_tile_grid_row_begin(g, r); n < end; n++) {
            uint64_t coarse = to1[tessel_tile_grid_key(g, n)];
            if (!acc[coarse])
                touched[nt++] = coarse;
            acc[coarse] += tessel_tile_grid_count(g, n);
        }
        if (r + 1 == g->extent[0] || to0[r + 1] != to0[r]) {
            for (uint64_t x = 0; x < nt; x++) {
                mx = acc[touched[x]] > mx ? acc[touched[x]] : mx;
                acc[touched[x]] = 0;
            }
            nt = 0;
        }
    }
    return mx;
}

/* The most nonzeros in one tile of `shape` read off the base grid in one
 * pass, without deriving the grid (d2t2 asks it of a hundred shapes per
 * decision; the same sums as tessel_tile_grid_derive's): the base tiles
 * come sorted by their mode-0 coordinate, so the tiles of one mode-0 tile
 * of shape are added up in a row of counters, read and cleared when that
 * tile ends. *done 0 when shape is off the base grid or its tiles of the
 * modes past the first are too many to count in memory. */
static int max_from_base(strat_ctx *c, const strat_input *in, const uint64_t *shape,
                         uint64_t *out, int *done)
{
    const tessel_tile_grid *g = in->base;
    uint64_t f[TESSEL_MAX_ORDER], bext[TESSEL_MAX_ORDER], ext[TESSEL_MAX_ORDER], row = 1;
    *done = 0;
    for (unsigned m = 0; m < g->order; m++) {
        uint64_t b = g->tile[m], s = shape[m] >= g->dims[m] ? (g->dims[m] + b - 1) / b * b
                                                              : shape[m];
        if (!s || s % b)
            return TESSEL_OK;
        f[m] = s / b;
        bext[m] = g->extent[m];
        ext[m] = (g->dims[m] + s - 1) / s;
        if (m && (row *= ext[m]) > (UINT64_C(1) << 24))
            return TESSEL_OK;
    }
    uint64_t *acc = tessel_alloc_array(c->alloc, row, sizeof(uint64_t));
    uint64_t *touched = tessel_alloc_array(c->alloc, row, sizeof(uint64_t));
    uint64_t *to0 = strat_div_table(c, bext[0], f[0]);
    uint64_t *to1 = g->order == 2 ? strat_div_table(c, bext[1], f[1]) : NULL;
    if (!acc || !touched || !to0 || (g->order == 2 && !to1)) { /* derive the grid instead */
        tessel_dealloc(c->alloc, acc);
        tessel_dealloc(c->alloc, touched);
        tessel_dealloc(c->alloc, to0);
        tessel_dealloc(c->alloc, to1);
        return TESSEL_OK;
    }
    memset(acc, 0, row * sizeof(uint64_t));
    uint64_t gr = 0, mx = 0, nt = 0, tile0 = g->nonempty ? to0[tessel_tile_grid_group(g, 0)] : 0;
    if (to1) /* a matrix: row by row of base tiles */
        mx = max_of_matrix(g, to0, to1, acc, touched);
    for (uint64_t n = 0; !to1 && n < g->nonempty; n++) {
        /* the base key's coordinates (mode order-1 least significant),
         * each made the coordinate of shape's tile */
        uint64_t key = tessel_tile_grid_key(g, n), coarse = 0, scale = 1;
        for (unsigned m = g->order; m-- > 1;) {
            coarse += (key % bext[m]) / f[m] * scale;
            key /= bext[m];
            scale *= ext[m];
        }
        if (!acc[coarse])
            touched[nt++] = coarse;
        acc[coarse] += tessel_tile_grid_count(g, n);
        uint64_t next0 = n + 1 < g->nonempty ? to0[gr = tessel_tile_grid_group_from(g, n + 1, gr)]
                                              : UINT64_MAX;
        if (next0 != tile0) {
            tile0 = next0;
            for (uint64_t x = 0; x < nt; x++) {
                mx = acc[touched[x]] > mx ? acc[touched[x]] : mx;
                acc[touched[x]] = 0;
            }
            nt = 0;
        }
    }
    tessel_dealloc(c->alloc, acc);
    tessel_dealloc(c->alloc, touched);
    tessel_dealloc(c->alloc, to0);
    tessel_dealloc(c->alloc, to1);
    *out = mx;
    *done = 1;
    return TESSEL_OK;
}

int strat_worst_occupancy(strat_ctx *c, const strat_input *in, const uint64_t *shape, int worst,
                           uint64_t *out)
{
    double dense = 1;
    for (unsigned m = 0; m < in->order; m++)
        dense *= (double)shape[m];
    *out = dense > 1e18 ? (uint64_t)1e18 : (uint64_t)dense;
    if (worst == WORST_DENSE)
        return TESSEL_OK;
    if (worst == WORST_STATS && in->base) {
        /* off the base grid: a tile overlaps at most ceil(edge / base) + 1
         * base tiles per mode, each holding at most the base grid's worst */
        double cells = 1;
        int aligned = 1;
        for (unsigned m = 0; m < in->order; m++) {
            uint64_t b = in->base->tile[m];
            if (shape[m] < in->dims[m] && shape[m] % b) {
                aligned = 0;
                cells *= (double)((shape[m] + b - 1) / b + 1);
            }
        }
        if (!aligned) {
            double bound = cells * (double)base_max(in->base);
            if (bound < (double)*out)
                *out = (uint64_t)bound;
            return TESSEL_OK;
        }
    }
    unsigned who = (unsigned)(in - c->in);
    for (unsigned k = 0; k < c->nworst; k++) {
        const strat_worst_entry *e = &c->worst[k];
        if (e->input == who && e->worst == (unsigned)worst &&
            !memcmp(e->shape, shape, in->order * sizeof(*shape))) {
            *out = e->max < *out ? e->max : *out;
            return TESSEL_OK;
        }
    }
    uint64_t mx = 0;
    int done = 0, rc = TESSEL_OK;
    if (worst == WORST_STATS && in->base && (rc = max_from_base(c, in, shape, &mx, &done)))
        return rc;
    if (!done) {
        tessel_tile_grid *g = NULL;
        rc = strat_grid(c, in, shape, worst == WORST_EXACT, &g);
        if (rc || !g)
            return rc;
        mx = base_max(g);
        tessel_tile_grid_free(&g);
    }
    if (!c->worst)
        c->worst = tessel_alloc_array(c->alloc, STRAT_WORST_MEMO, sizeof(*c->worst));
    if (c->worst && c->nworst < STRAT_WORST_MEMO) { /* full: look up only */
        strat_worst_entry *e = &c->worst[c->nworst++];
        memset(e, 0, sizeof(*e));
        e->input = who;
        e->worst = (unsigned)worst;
        memcpy(e->shape, shape, in->order * sizeof(*shape));
        e->max = mx;
    }
    *out = mx < *out ? mx : *out;
    return TESSEL_OK;
}

/* A lower bound of the most nonzeros in one tile of `shape` from the worst
 * tiles known (0: none): a shape nested in it (each edge a divisor of its
 * edge, or its edge the whole mode) has tiles that are parts of its tiles. */
static uint64_t worst_below(const strat_ctx *c, const strat_input *in, const uint64_t *shape,
                            int worst)
{
    unsigned who = (unsigned)(in - c->in);
    uint64_t lo = 0;
    for (unsigned k = 0; k < c->nworst; k++) {
        const strat_worst_entry *e = &c->worst[k];
        int nested = e->input == who && e->worst == (unsigned)worst && e->max > lo;
        for (unsigned m = 0; m < in->order && nested; m++)
            nested = shape[m] >= in->dims[m] ||
                     (e->shape[m] < in->dims[m] && shape[m] % e->shape[m] == 0);
        if (nested)
            lo = e->max;
    }
    return lo;
}

int strat_worst_fits(strat_ctx *c, unsigned l, const strat_tiles *t, int worst, int *fits)
{
    *fits = 1;
    for (unsigned i = 0; i < c->nin && *fits; i++) {
        const strat_input *in = &c->in[i];
        uint64_t part = strat_partition(c, l, in->tensor), shape[3], n;
        if (!part || !in->order)
            continue;
        strat_shape(c, in, t, shape);
        /* a nested shape's worst tile already too large: no pass over a grid */
        uint64_t lo = worst == WORST_DENSE ? 0 : worst_below(c, in, shape, worst);
        if (lo && strat_tile_bytes(c, l, in, shape, lo) > part) {
            *fits = 0;
            break;
        }
        int rc = strat_worst_occupancy(c, in, shape, worst, &n);
        if (rc)
            return rc;
        *fits = strat_tile_bytes(c, l, in, shape, n) <= part;
    }
    /* dense sizing also fits the output's partition, as ExTensor-N does */
    uint64_t zpart = strat_partition(c, l, 0);
    if (*fits && worst == WORST_DENSE && zpart)
        *fits = strat_output_dense_bytes(c, l, t) <= zpart;
    return TESSEL_OK;
}

uint64_t strat_output_dense_bytes(const strat_ctx *c, unsigned l, const strat_tiles *t)
{
    const tessel_spec_tensor *z = &c->spec->workload.tensor[0];
    if (z->rank > 3)
        return 0;
    strat_input out;
    memset(&out, 0, sizeof(out));
    out.order = z->rank;
    for (unsigned m = 0; m < z->rank; m++) {
        out.index[m] = (int)z->index[m];
        out.dims[m] = c->extent[z->index[m]];
    }
    uint64_t shape[3];
    strat_shape(c, &out, t, shape);
    double dense = 1;
    for (unsigned m = 0; m < out.order; m++)
        dense *= (double)shape[m];
    return strat_tile_bytes(c, l, &out, shape, dense > 1e18 ? (uint64_t)1e18 : (uint64_t)dense);
}

int strat_uniform_level(strat_ctx *c, unsigned l, const double *ratio, const uint64_t *gran,
                        int worst, strat_tiles *out, uint64_t *candidates)
{
    double lo = 1, hi = strat_scale_max(c, ratio);
    strat_tiles t;
    int fits = 0, rc;
    strat_tiles_at(c, ratio, gran, hi, &t);
    ++*candidates;
    if ((rc = strat_worst_fits(c, l, &t, worst, &fits)))
        return rc;
    if (fits) {
        *out = t;
        return TESSEL_OK;
    }
    /* invariant: the scale lo is the best known (it may not fit when even
     * the smallest tile overflows: then the smallest tile it is) */
    while (hi - lo > 0.5) {
        double mid = (double)(uint64_t)((lo + hi) / 2);
        if (mid <= lo)
            break;
        strat_tiles_at(c, ratio, gran, mid, &t);
        ++*candidates;
        if ((rc = strat_worst_fits(c, l, &t, worst, &fits)))
            return rc;
        if (fits)
            lo = mid;
        else
            hi = mid;
    }
    strat_tiles_at(c, ratio, gran, lo, out);
    return TESSEL_OK;
}

/* Level l's edge steps: the estimator's granule (for the statistics' worst
 * tile, the base grid's), times what the inner levels' tiles need. */
void strat_level_granules(strat_ctx *c, unsigned l, int base_grid,
                           const tessel_strategy_choice *ch, uint64_t *gran)
{
    uint32_t mask = c->spec->strategy.levels;
    for (unsigned x = 0; x < c->nidx; x++) {
        gran[x] = base_grid ? strat_base_granule(c, x) : strat_granule(c, x);
        c->outer[x] = 0;
    }
    /* outer first: the nearest enclosing sized level's tiles bound these */
    for (unsigned o = l; c->outer_first && o-- > 1;)
        if (c->spec->level[o].capacity && (ch->levels >> o & 1u)) {
            for (unsigned x = 0; x < c->nidx; x++)
                c->outer[x] = ch->tile[o][x] && ch->tile[o][x] < c->extent[x] ? ch->tile[o][x] : 0;
            break;
        }
    for (unsigned in = l + 1; in < c->spec->nlevels; in++) {
        if (!c->spec->level[in].capacity)
            continue;
        if (c->outer_first && (!mask || (mask >> in & 1u)))
            continue; /* sized after this level, inside its tiles */
        for (unsigned x = 0; x < c->nidx; x++) {
            uint64_t t = ch->levels >> in & 1u ? ch->tile[in][x] : c->spec->level[in].tile[x];
            if (!t || t >= c->extent[x])
                t = c->extent[x];
            gran[x] = strat_lcm(gran[x], t);
        }
    }
}

int strat_uniform(strat_ctx *c, int prescient, tessel_strategy_choice *out)
{
    int worst = prescient ? WORST_EXACT : c->spec->strategy.dense_worst ? WORST_DENSE
                                                                        : WORST_STATS;
    int rc;
    if (worst == WORST_EXACT && !c->data)
        return tessel_diag_set(c->diag, TESSEL_EINVAL, NULL, 0, 0, "mapping.strategy",
                               "prescient tiling looks at every tile of the data: it cannot run "
                               "from saved statistics");
    if (worst == WORST_STATS && (rc = strat_need_stats(c)))
        return rc;
    unsigned levels[TESSEL_SPEC_MAX_LEVELS];
    unsigned n = strat_levels(c, levels);
    for (unsigned i = 0; i < n; i++) {
        unsigned l = levels[i];
        double ratio[STRAT_NX];
        uint64_t gran[STRAT_NX];
        strat_ratio(c, l, ratio);
        strat_level_granules(c, l, worst == WORST_STATS, out, gran);
        strat_tiles t;
        rc = strat_uniform_level(c, l, ratio, gran, worst, &t, &out->candidates);
        int fits = 1;
        if (!rc && worst == WORST_STATS && c->est == TESSEL_STRATEGY_EXACT)
            rc = strat_worst_fits(c, l, &t, worst, &fits);
        if (!rc && !fits) {
            /* not even one base tile fits: finer edges, each bounded by
             * the base tiles it overlaps (the exact estimator takes any) */
            strat_level_granules(c, l, 0, out, gran);
            rc = strat_uniform_level(c, l, ratio, gran, worst, &t, &out->candidates);
        }
        if (rc)
            return rc;
        memcpy(out->tile[l], t.t, sizeof(out->tile[l]));
        out->levels |= 1u << l;
    }
    return TESSEL_OK;
}

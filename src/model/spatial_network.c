/* `timing: pipeline`'s per-step network count under -e stat
 * (docs/models/timing.md, "Per step"; issue 22): what exact_walk.c and
 * exact_fold.c count from the data, read off the statistics' base grid of
 * the stationary input instead. The grid holds every base cell's nonzeros,
 * so when the cells lie inside the child level's tiles the tiles' own
 * nonzeros are exact, and the sum of their ceilings replaces the mean
 * tile's ceiling. With one row per cell and whole rows per tile, the rows
 * are packed into folds as STONNE packs them (exact_fold_pack), as exact
 * does. Otherwise fill_network_cycles stays 0 and the pipeline keeps the
 * mean. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exact_internal.h" /* exact_fold_pack: the folds as STONNE packs them */
#include "spatial_internal.h"

/* The input the network's child fills least often (the pipeline's rule,
 * src/report/pipeline.c network_stage); 0 when none is filled. */
static unsigned stationary_of(const tessel_result *r, unsigned c, uint64_t *fills)
{
    uint64_t least = UINT64_MAX;
    unsigned s = 0;
    for (unsigned t = 1; t < r->ntensors; t++) {
        uint64_t f = r->traffic[c][t].fills + r->traffic[c][t].updates;
        if (f && f < least) {
            least = f;
            s = t;
        }
    }
    *fills = s ? least : 0;
    return s;
}

/* The level-c tile edge along workload index x of extent n (0: whole). */
static uint64_t edge_of(const tessel_spec *spec, unsigned c, int x, uint64_t n)
{
    uint64_t e = x >= 0 && (unsigned)x < TESSEL_SPEC_MAX_INDICES ? spec->level[c].tile[x] : 0;
    return e && e < n ? e : n;
}

static int by_key(const void *a, const void *b)
{
    const sp_entry *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* exact_fold_note's case (a matrix at the innermost level whose tiles are
 * whole along the other mode, each nonzero filled once): the rows'
 * nonzeros packed into folds of `lanes`, 1. With more than one row per base
 * cell the rows are unknown: 2 (the caller keeps the mean, nearer exact's
 * folds than the fixed tiles' sum). 0 when the case does not apply. */
static int packed(const tessel_spec *spec, const tessel_tile_grid *g, const int *gidx, unsigned c,
                  uint64_t width, const tessel_allocator *a, uint64_t *out)
{
    uint64_t lanes = (uint64_t)spec->compute.pes *
                     (spec->compute.macs_per_pe ? spec->compute.macs_per_pe : 1);
    if (c + 1 != spec->nlevels || g->order != 2 || !lanes ||
        edge_of(spec, c, gidx[1], g->dims[1]) < g->dims[1])
        return 0;
    if (g->tile[0] != 1)
        return 2;
    uint64_t rows = g->dims[0];
    uint64_t *v = tessel_alloc_array(a, rows ? rows : 1, sizeof(uint64_t));
    if (!v)
        return -1;
    for (uint64_t r = 0; r < rows; r++) {
        uint64_t s = 0;
        for (uint64_t i = tessel_tile_grid_row_begin(g, r); i < tessel_tile_grid_row_begin(g, r + 1);
             i++)
            s += tessel_tile_grid_count(g, i);
        v[r] = s;
    }
    *out = exact_fold_pack(v, rows, lanes, width);
    tessel_dealloc(a, v);
    return 1;
}

/* Sum over the non-empty level-c tiles of ceil(nonzeros / width), and
 * their number; 0 when a base cell crosses a tile edge (or on overflow). */
static int per_tile(const tessel_spec *spec, const tessel_tile_grid *g, const int *gidx,
                    unsigned c, uint64_t width, const tessel_allocator *a, uint64_t *sum,
                    uint64_t *tiles)
{
    uint64_t edge[TESSEL_MAX_ORDER], span[TESSEL_MAX_ORDER], all = 1;
    for (unsigned d = 0; d < g->order; d++) {
        edge[d] = edge_of(spec, c, gidx[d], g->dims[d]);
        if (!edge[d] || (edge[d] % g->tile[d] && edge[d] < g->dims[d]))
            return 0;
        span[d] = (g->dims[d] + edge[d] - 1) / edge[d];
        all = sp_mul63(all, span[d]);
        if (!all)
            return 0;
    }
    sp_entry *e = tessel_alloc_array(a, g->nonempty ? g->nonempty : 1, sizeof(sp_entry));
    if (!e)
        return -1;
    uint64_t co[TESSEL_MAX_ORDER];
    for (uint64_t i = 0; i < g->nonempty; i++) {
        tessel_tile_grid_coords(g, i, co);
        uint64_t key = 0;
        for (unsigned d = 0; d < g->order; d++)
            key = key * span[d] + co[d] * g->tile[d] / edge[d];
        e[i].key = key;
        e[i].macs = tessel_tile_grid_count(g, i);
    }
    qsort(e, (size_t)g->nonempty, sizeof(*e), by_key);
    uint64_t s = 0, n = 0;
    for (uint64_t i = 0; i < g->nonempty;) {
        uint64_t v = 0, k = e[i].key;
        for (; i < g->nonempty && e[i].key == k; i++)
            v += e[i].macs;
        s += (v + width - 1) / width;
        n++;
    }
    tessel_dealloc(a, e);
    *sum = s;
    *tiles = n;
    return 1;
}

/* Sets fill_network_cycles of each dense network's stationary input at its
 * child level from the grids, as the exact walk counts it: the sum over
 * the fills of ceil(values / width), each non-empty tile filled
 * fills / tiles times. Applies only when each fill carries its tile's
 * nonzeros as values (the mean fill's values equal the mean tile's
 * nonzeros), else the pipeline keeps the mean. */
int tessel_model_network_stat(const tessel_spec *spec, const tessel_stat_data *stats,
                              const tessel_allocator *a, tessel_result *r, tessel_diag *diag)
{
    for (unsigned l = 0; stats && l + 1 < spec->nlevels && l + 1 < r->nlevels; l++) {
        const tessel_spec_level *lv = &spec->level[l];
        unsigned c = l + 1;
        uint64_t fills = 0, width = lv->network_width;
        if (!width || !lv->network_dense)
            continue;
        unsigned t = stationary_of(r, c, &fills);
        int gidx[TESSEL_MAX_ORDER];
        const tessel_tile_grid *g = t ? tessel_stat_data_grid(stats, t, gidx) : NULL;
        if (!g || !g->nnz || !g->nonempty)
            continue;
        tessel_traffic *tr = &r->traffic[c][t];
        double vb = spec->level[c].value_bits ? spec->level[c].value_bits : 64;
        double held = (double)tr->in_data * 8.0 / vb;
        uint64_t sum = 0, tiles = 0;
        int rc = fabs(held - (double)g->nnz) <= 1e-9 * (double)g->nnz
                     ? packed(spec, g, gidx, c, width, a, &sum)
                     : 0;
        if (rc == 1) /* each nonzero filled once: STONNE's folds */
            tr->fill_network_cycles = sum;
        if (rc > 0)
            continue;
        if (rc == 0)
            rc = per_tile(spec, g, gidx, c, width, a, &sum, &tiles);
        if (rc < 0)
            return tessel_diag_set(diag, TESSEL_ENOMEM, spec->path, 0, 0, "timing",
                                   "pipeline network count: out of memory");
        double per_fill = held / (double)fills, mean = (double)g->nnz / (double)tiles;
        if (rc == 1 && tiles && fabs(per_fill - mean) <= 1e-9 * mean)
            tr->fill_network_cycles = (uint64_t)llround((double)fills / (double)tiles *
                                                        (double)sum);
    }
    return TESSEL_OK;
}

/* The exact estimator: tile shapes per level, composite loop keys, input
 * tile grids and the bytes of a tile in a format. */
#include <math.h>
#include <string.h>

#include "exact_internal.h"

/* ------------------------------------------------------------------ */
/* Boundary geometry: tiles per level and the composite loop key. */

uint64_t exact_level_tile(const engine *e, unsigned l, unsigned x)
{
    if (e->spec_index[x] < 0)
        return 0;
    uint64_t t = e->spec->level[l].tile[e->spec_index[x]];
    return t >= e->extent[x] ? 0 : t;
}

uint64_t exact_level_edge(const engine *e, unsigned l, unsigned x)
{
    uint64_t t = exact_level_tile(e, l, x);
    return t ? t : e->extent[x] ? e->extent[x] : 1;
}

/* Position of engine index x in level l's loop order. */
unsigned exact_order_pos(const engine *e, unsigned l, unsigned x)
{
    const tessel_spec_level *lv = &e->spec->level[l];
    if (e->spec_index[x] < 0)
        return NX; /* the unit index: innermost, it never changes */
    for (unsigned p = 0; p < e->spec->workload.nindices; p++)
        if ((int)lv->order[p] == e->spec_index[x])
            return p;
    return (unsigned)e->spec_index[x];
}

/* Tile edges, tile counts and the loop nest (digits, outermost first, over every level
 * down to boundary b) of the exact walk at one boundary. */
int exact_geometry(engine *e, boundary *bd)
{
    unsigned b = bd->b;
    for (unsigned x = 0; x < e->nx; x++) {
        uint64_t t = exact_level_tile(e, b, x);
        bd->tile[x] = t ? t : (e->extent[x] ? e->extent[x] : 1);
        bd->ntiles[x] = t ? (e->extent[x] + t - 1) / t : 1;
    }
    bd->ndigits = 0;
    uint64_t prev[NX] = { 0 };
    for (unsigned l = 1; l <= b; l++) {
        unsigned xs[NX];
        for (unsigned x = 0; x < e->nx; x++)
            xs[x] = x;
        /* this level's loop order over the engine indices */
        for (unsigned i = 0; i < e->nx; i++)
            for (unsigned j = i + 1; j < e->nx; j++)
                if (exact_order_pos(e, l, xs[j]) < exact_order_pos(e, l, xs[i])) {
                    unsigned tmp = xs[i];
                    xs[i] = xs[j];
                    xs[j] = tmp;
                }
        for (unsigned i = 0; i < e->nx; i++) {
            unsigned x = xs[i];
            uint64_t t = exact_level_tile(e, l, x);
            if (!t)
                continue;
            uint64_t tb = exact_level_tile(e, b, x);
            if (!tb || t % tb || (prev[x] && prev[x] % t))
                return tessel_diag_set(
                    e->diag, TESSEL_EINVAL, e->spec->level[b].pos.file,
                    e->spec->level[b].pos.line, e->spec->level[b].pos.column, "mapping",
                    "tiles must nest: %s:%llu at %s is not a multiple of %s:%llu at %s",
                    e->spec->workload.index_name[e->spec_index[x]], (unsigned long long)t,
                    e->spec->level[l].name, e->spec->workload.index_name[e->spec_index[x]],
                    (unsigned long long)(tb ? tb : e->extent[x]), e->spec->level[b].name);
            digit *d = &bd->d[bd->ndigits++];
            d->x = x;
            d->div = t / tb;
            d->first = prev[x] == 0;
            d->radix = d->first ? (e->extent[x] + t - 1) / t : prev[x] / t;
            prev[x] = t;
        }
    }
    /* Key spaces must fit in 63 bits. */
    long double space = 1, red = 1;
    for (unsigned i = 0; i < bd->ndigits; i++) {
        space *= (long double)bd->d[i].radix;
        for (unsigned r = 0; r < e->nred; r++)
            if (bd->d[i].x == e->red[r])
                red *= (long double)bd->d[i].radix;
    }
    long double outs = 1;
    for (unsigned m = 0; m < e->out.order; m++)
        outs *= (long double)bd->ntiles[e->out.x[m]];
    if (space > 9.2e18L || outs * red > 9.2e18L)
        return tessel_diag_set(e->diag, TESSEL_ERANGE, NULL, 0, 0, "mapping",
                               "level %s: the tile grid has more than 2^63 tiles; use larger tiles",
                               e->spec->level[b].name);
    bd->red_space = (uint64_t)red;
    return TESSEL_OK;
}

/* Composite key of level-b tile coordinates c (loop order of all levels). */
uint64_t exact_loop_key(const boundary *bd, const uint64_t *c)
{
    uint64_t k = 0;
    for (unsigned i = 0; i < bd->ndigits; i++) {
        const digit *d = &bd->d[i];
        uint64_t v = c[d->x] / d->div;
        if (!d->first)
            v %= d->radix;
        k = k * d->radix + v;
    }
    return k;
}

void exact_loop_decode(const boundary *bd, uint64_t k, uint64_t *c)
{
    memset(c, 0, NX * sizeof(*c));
    for (unsigned i = bd->ndigits; i-- > 0;) {
        const digit *d = &bd->d[i];
        c[d->x] += (k % d->radix) * d->div;
        k /= d->radix;
    }
}

/* The reduction part of the loop key: orders the visits of one output tile. */
uint64_t exact_reduction_key(const engine *e, const boundary *bd, const uint64_t *c)
{
    uint64_t k = 0;
    for (unsigned i = 0; i < bd->ndigits; i++) {
        const digit *d = &bd->d[i];
        if (d->x != e->red[0] && (e->nred < 2 || d->x != e->red[1]))
            continue;
        uint64_t v = c[d->x] / d->div;
        if (!d->first)
            v %= d->radix;
        k = k * d->radix + v;
    }
    return k;
}

uint64_t exact_tile_key(const boundary *bd, const operand *o, const uint64_t *c)
{
    uint64_t k = 0;
    for (unsigned m = 0; m < o->order; m++)
        k = k * bd->ntiles[o->x[m]] + c[o->x[m]];
    return k;
}

/* ------------------------------------------------------------------ */
/* Tile grids of the inputs and lookups in them. */

/* A hash from packed tile coordinates to input i's grid index: the walk
 * looks tiles up on every fill. */
/* The direct index of input i's grid: where each group's tiles start (the
 * grid is sorted by group, then key), so finding a tile is a search among
 * one group's tiles instead of a hash probe (issue 19 item 1). */
int exact_index_grid(engine *e, boundary *bd, unsigned i)
{
    const tessel_tile_grid *g = bd->grid[i];
    uint64_t n = bd->ntiles[e->in[i].x[0]];
    if (g->nonempty && tessel_tile_grid_group(g, g->nonempty - 1) >= n)
        n = tessel_tile_grid_group(g, g->nonempty - 1) + 1;
    bd->groups[i] = n;
    tessel_dealloc(e->alloc, bd->rowptr[i]);
    bd->rowptr[i] = tessel_alloc_array(e->alloc, n + 1, sizeof(uint64_t));
    if (!bd->rowptr[i])
        return exact_oom_step(e, "indexing an input's tiles", (n + 1) * sizeof(uint64_t));
    for (uint64_t r = 0; r <= n; r++)
        bd->rowptr[i][r] = r <= g->extent[0] ? tessel_tile_grid_row_begin(g, r) : g->nonempty;
    return TESSEL_OK;
}

int exact_build_grids(engine *e, boundary *bd)
{
    for (unsigned i = 0; i < e->nin; i++) {
        uint64_t tile[3];
        for (unsigned m = 0; m < e->in[i].order; m++)
            tile[m] = bd->tile[e->in[i].x[m]];
        int rc = tessel_tile_grid_build(e->in[i].t, tile, e->alloc, &bd->grid[i], e->diag);
        if (!rc)
            rc = exact_index_grid(e, bd, i);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* First non-empty tile of grid g at or after (group, key). */
uint64_t exact_grid_lower(const tessel_tile_grid *g, uint64_t group, uint64_t key)
{
    if (group >= g->extent[0])
        return g->nonempty;
    uint64_t lo = tessel_tile_grid_row_begin(g, group);
    uint64_t hi = tessel_tile_grid_row_begin(g, group + 1);
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (tessel_tile_grid_key(g, mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Nonzeros of operand o's tile at level-b tile coordinates c (0 if empty). */
/* Index of operand o's non-empty tile at tile coordinates c in grid g, or
 * UINT64_MAX when that tile is empty. */
uint64_t exact_tile_index(const engine *e, const boundary *bd, unsigned i, const uint64_t *c)
{
    const operand *o = &e->in[i];
    const tessel_tile_grid *g = bd->grid[i];
    uint64_t group = c[o->x[0]], key = 0;
    if (group >= bd->groups[i])
        return UINT64_MAX;
    for (unsigned m = 1; m < o->order; m++)
        key = key * bd->ntiles[o->x[m]] + c[o->x[m]];
    uint64_t lo = bd->rowptr[i][group], hi = bd->rowptr[i][group + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (tessel_tile_grid_key(g, mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < bd->rowptr[i][group + 1] && tessel_tile_grid_key(g, lo) == key ? lo : UINT64_MAX;
}

uint64_t exact_tile_nnz(const engine *e, const boundary *bd, unsigned i, const uint64_t *c)
{
    uint64_t t = exact_tile_index(e, bd, i, c);
    return t == UINT64_MAX ? 0 : tessel_tile_grid_count(bd->grid[i], t);
}

/* Counts of one pass over a matrix operand seen as rows along rank 0 of
 * its format (exact_input_occupancy): per non-empty tile, its non-empty
 * rows (a per-rank format in a swapped rank order), or for tiled-csf its
 * non-empty inner tiles and row segments (a rank-0 coordinate inside one
 * inner tile). Rows come in ascending order and a row's entries by
 * column, so a row segment starts where the inner column changes, and an
 * inner tile is new where its inner column last saw another inner row. */
typedef struct occ_pass {
    uint64_t *occ, *seen, *mark;
    unsigned stride;
} occ_pass;

/* The counts above for input i, into bd->occ[i] (stride 1 or 2). */
static int occupancy_2d(engine *e, boundary *bd, unsigned i)
{
    const operand *o = &e->in[i];
    const tile_cost *tc = &bd->cost[i];
    const tessel_tile_grid *g = bd->grid[i];
    tessel_tensor *own = NULL;
    const tessel_tensor *t = o->t;
    unsigned rm = tc->rmode[0], cm = tc->rmode[1];
    if (tc->swapped) {
        unsigned perm[2] = { 1, 0 };
        int rc = model_permute(o->t, perm, e->alloc, &own, e->diag);
        if (rc)
            return rc;
        t = own;
    }
    uint64_t n = g->nonempty, inner_cols = 1;
    occ_pass p = { NULL, NULL, NULL, tc->tiled ? 2u : 1u };
    if (tc->tiled)
        inner_cols = (t->dims[1] + tc->inner[1] - 1) / tc->inner[1];
    if (n) {
        p.occ = tessel_alloc_array(e->alloc, n * p.stride, sizeof(uint64_t));
        p.seen = tessel_alloc_array(e->alloc, n, sizeof(uint64_t));
        p.mark = tessel_alloc_array(e->alloc, inner_cols ? inner_cols : 1, sizeof(uint64_t));
    }
    if (n && (!p.occ || !p.seen || !p.mark)) {
        tessel_dealloc(e->alloc, p.occ);
        tessel_dealloc(e->alloc, p.seen);
        tessel_dealloc(e->alloc, p.mark);
        tessel_tensor_free(&own);
        return exact_oom_step(e, "counting the tiles' rows", (2 + p.stride) * n * sizeof(uint64_t));
    }
    if (n) {
        memset(p.occ, 0, n * p.stride * sizeof(uint64_t));
        memset(p.seen, 0, n * sizeof(uint64_t));
        memset(p.mark, 0, (inner_cols ? inner_cols : 1) * sizeof(uint64_t));
    }
    uint64_t c[NX] = { 0 };
    uint64_t last_key = UINT64_MAX, idx = 0;
    uint64_t rt = bd->tile[o->x[rm]], ct = bd->tile[o->x[cm]];
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        c[o->x[rm]] = r / rt;
        uint64_t prev_ic = UINT64_MAX;
        for (uint64_t q = t->ptr[r]; q < t->ptr[r + 1]; q++) {
            uint64_t col = t->idx[1][q];
            c[o->x[cm]] = col / ct;
            uint64_t key = c[o->x[rm]] * (bd->ntiles[o->x[cm]] + 1) + c[o->x[cm]];
            if (key != last_key) {
                idx = exact_tile_index(e, bd, i, c);
                last_key = key;
            }
            if (!tc->tiled) {
                if (p.seen[idx] != r + 1) {
                    p.seen[idx] = r + 1;
                    p.occ[idx]++;
                }
                continue;
            }
            uint64_t ic = col / tc->inner[1], ir = r / tc->inner[0];
            if (ic != prev_ic)
                p.occ[2 * idx + 1]++; /* a new row segment */
            prev_ic = ic;
            if (p.mark[ic] != ir + 1) {
                p.mark[ic] = ir + 1;
                p.occ[2 * idx]++; /* a new inner tile */
            }
        }
    }
    tessel_dealloc(e->alloc, p.seen);
    tessel_dealloc(e->alloc, p.mark);
    tessel_tensor_free(&own);
    bd->occ[i] = p.occ;
    bd->occ_stride[i] = p.stride;
    return TESSEL_OK;
}

/* Per-rank formats need, per non-empty tile, the number of distinct
 * coordinate prefixes of each length (rows; for 3-tensors also (i,j)
 * fibers). The entries are sorted, so a tile's entries with one prefix are
 * contiguous among that tile's entries: a prefix is new to a tile when the
 * tile last saw a different one. One pass, O(nnz + runs x log tiles). */
int exact_input_occupancy(engine *e, boundary *bd, unsigned i)
{
    const operand *o = &e->in[i];
    if (bd->cost[i].tiled || bd->cost[i].swapped)
        return occupancy_2d(e, bd, i);
    const tessel_tensor *t = o->t;
    const tessel_tile_grid *g = bd->grid[i];
    unsigned depths = o->order - 1;
    bd->occ_stride[i] = depths;
    uint64_t n = g->nonempty;
    uint64_t *occ = n ? tessel_alloc_array(e->alloc, n * depths, sizeof(uint64_t)) : NULL;
    uint64_t *seen = n ? tessel_alloc_array(e->alloc, n * depths, sizeof(uint64_t)) : NULL;
    if (n && (!occ || !seen)) {
        tessel_dealloc(e->alloc, occ);
        tessel_dealloc(e->alloc, seen);
        return exact_oom_step(e, "counting the output's tile occupancy",
                              2 * n * depths * sizeof(uint64_t));
    }
    if (n) {
        memset(occ, 0, n * depths * sizeof(uint64_t));
        memset(seen, 0, n * depths * sizeof(uint64_t));
    }
    uint64_t fiber = 0, last_group = UINT64_MAX, last_key = UINT64_MAX, idx = 0;
    uint64_t c[NX] = { 0 };
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        uint64_t group = r / bd->tile[o->x[0]];
        c[o->x[0]] = group;
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            if (o->order == 3 && (p == t->ptr[r] || t->idx[1][p] != t->idx[1][p - 1]))
                fiber++;
            uint64_t key = 0;
            for (unsigned m = 1; m < o->order; m++) {
                c[o->x[m]] = t->idx[m][p] / bd->tile[o->x[m]];
                key = key * bd->ntiles[o->x[m]] + c[o->x[m]];
            }
            /* consecutive entries usually share a tile: look it up once */
            if (group != last_group || key != last_key) {
                idx = exact_tile_index(e, bd, i, c);
                last_group = group;
                last_key = key;
            }
            uint64_t ids[2] = { r + 1, fiber };
            for (unsigned d = 0; d < depths; d++) {
                if (seen[idx * depths + d] != ids[d]) {
                    seen[idx * depths + d] = ids[d];
                    occ[idx * depths + d]++;
                }
            }
        }
    }
    tessel_dealloc(e->alloc, seen);
    bd->occ[i] = occ;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Bytes of a tile in a level's format. */

/* Rank order (tessel_spec_tensor_level.rank_order): which operand mode each
 * rank of the format runs along; the identity when none is given. */
int exact_rank_modes(const engine *e, const operand *o, unsigned l, unsigned char *rmode)
{
    const tessel_spec_tensor_level *tl = &e->spec->level[l].tensor[o->spec_tensor];
    int swapped = 0;
    for (unsigned d = 0; d < 3; d++)
        rmode[d] = (unsigned char)d;
    if (tl->nrank_order != o->ranks || o->order != o->ranks)
        return 0; /* none given, or SpMV's vector (one rank) */
    for (unsigned d = 0; d < o->order; d++)
        for (unsigned m = 0; m < o->order; m++)
            if (e->spec_index[o->x[m]] == (int)tl->rank_order[d]) {
                rmode[d] = (unsigned char)m;
                swapped |= m != d;
            }
    return swapped;
}

/* Bytes of a tile in a level's format: the format, its rank order, and
 * for tiled-csf the inner level's tile. */
int exact_tile_cost_init(const engine *e, const boundary *bd, const operand *o, tile_cost *tc)
{
    const tessel_spec_level *lv = &e->spec->level[bd->b];
    const tessel_spec_tensor_level *tl = &lv->tensor[o->spec_tensor];
    const tessel_spec_pos *pos = tl->pos.file ? &tl->pos : &lv->pos;
    const char *name = e->spec->workload.tensor[o->spec_tensor].name;
    int f = tl->format >= 0 ? tl->format : lv->format;
    tc->ranked = f == TESSEL_SPEC_FORMAT_RANKS;
    tc->tiled = f == TESSEL_SPEC_FORMAT_TILED_CSF;
    tc->format = tessel_model_format(tc->ranked || tc->tiled ? 1 : f);
    if (tc->ranked) {
        tc->nranks = tl->format >= 0 ? tl->nranks : lv->nranks;
        const unsigned char *r = tl->format >= 0 ? tl->ranks : lv->ranks;
        if (tc->nranks != o->ranks)
            return tessel_diag_set(e->diag, TESSEL_EINVAL, pos->file, pos->line, pos->column,
                                   "format", "level %s: %s has %u modes but its format lists %u ranks",
                                   lv->name, name, o->ranks, tc->nranks);
        memcpy(tc->ranks, r, tc->nranks);
    }
    tc->widths.value_bits = lv->value_bits;
    tc->widths.coord_bits = lv->coord_bits;
    tc->widths.offset_bits = lv->offset_bits;
    tc->widths.run_bits = lv->run_bits;
    tc->order = o->order;
    tc->swapped = exact_rank_modes(e, o, bd->b, tc->rmode);
    for (unsigned d = 0; d < o->order; d++)
        tc->shape[d] = bd->tile[o->x[tc->rmode[d]]];
    /* the counts a swapped per-rank format or tiled-csf needs are counted
     * for matrix inputs (exact_input_occupancy) and, tiled-csf in the
     * canonical rank order, for a matrix output (exact_output.c) */
    int matrix = o->order == 2 && o->ranks == 2;
    int counted = matrix && (o != &e->out || (tc->tiled && !tc->swapped));
    if ((tc->tiled || (tc->ranked && tc->swapped)) && !counted)
        return tessel_diag_set(e->diag, TESSEL_EUNSUPPORTED, pos->file, pos->line, pos->column,
                               "format", "level %s: %s: %s is priced for a matrix input%s only "
                               "(its per-tile row counts are counted from the data)", lv->name,
                               name, tc->tiled ? "tiled-csf" : "a per-rank format in a rank order "
                               "other than the canonical one",
                               tc->tiled ? " or a matrix output in its canonical rank order" : "");
    if (tc->tiled) {
        if (bd->b + 1 >= e->spec->nlevels)
            return tessel_diag_set(e->diag, TESSEL_EUNSUPPORTED, pos->file, pos->line,
                                   pos->column, "format",
                                   "level %s: %s: tiled-csf stores the tensor in the tiles of the "
                                   "level below, and %s is the innermost level", lv->name, name,
                                   lv->name);
        for (unsigned d = 0; d < o->order; d++) {
            uint64_t in = exact_level_edge(e, bd->b + 1, o->x[tc->rmode[d]]);
            tc->inner[d] = in < tc->shape[d] ? in : tc->shape[d];
        }
    }
    return TESSEL_OK;
}

/* occ: per-rank formats only, the tile's prefix counts (depths 0 ..
 * nranks - 2); n is its nonzero count. */
void exact_tile_bytes(const tile_cost *tc, uint64_t n, const uint64_t *occ, uint64_t *data,
                      uint64_t *meta)
{
    if (tc->tiled) {
        /* docs/spec.md, tiled-csf: per non-empty inner tile its coordinates
         * and an offset, per row segment a coordinate and an offset, per
         * nonzero its other coordinates */
        const tessel_format_widths *w = &tc->widths;
        uint64_t worst[2] = { n, n }; /* no counts: every nonzero alone */
        if (!occ)
            occ = worst;
        double tile_bits = (double)tc->order * w->coord_bits + w->offset_bits;
        double mb = (double)occ[0] * tile_bits +
                    (double)occ[1] * ((double)w->coord_bits + w->offset_bits) +
                    (double)n * (double)(tc->order - 1) * w->coord_bits;
        double dbytes = ceil((double)n * w->value_bits / 8), mbytes = ceil(mb / 8);
        *data = dbytes >= 1.8e19 ? UINT64_MAX : (uint64_t)dbytes;
        *meta = mbytes >= 1.8e19 ? UINT64_MAX : (uint64_t)mbytes;
        return;
    }
    if (tc->ranked) {
        double db, mb;
        if (!occ) {
            /* no counts (the stat estimator): estimated from n */
            model_ranks_estimated_bits(tc, n, &db, &mb);
        } else {
            uint64_t occupied[3];
            for (unsigned d = 0; d + 1 < tc->nranks; d++)
                occupied[d] = occ[d];
            occupied[tc->nranks - 1] = n;
            tessel_rank_footprint_bits(tc->ranks, tc->nranks, tc->shape, occupied, &tc->widths,
                                       &db, &mb);
        }
        double dbytes = ceil(db / 8), mbytes = ceil(mb / 8);
        *data = dbytes >= 1.8e19 ? UINT64_MAX : (uint64_t)dbytes;
        *meta = mbytes >= 1.8e19 ? UINT64_MAX : (uint64_t)mbytes;
        return;
    }
    uint64_t total = tessel_format_footprint(tc->format, tc->order, tc->shape, n, &tc->widths);
    uint64_t d = (n * tc->widths.value_bits + 7) / 8;
    *data = d < total ? d : total;
    *meta = total - *data;
}


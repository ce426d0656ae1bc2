/* The exact estimator: walks the real tile grid of the data in the
 * mapping's loop order and applies the traffic rules of DESIGN.md
 * literally, one storage boundary (level b-1 -> level b) at a time.
 *
 * Per boundary b:
 *  1. The output table: one Gustavson-style pass over the data records, for
 *     every output nonzero, the first reduction step (in loop order, at
 *     level-b tile granularity) that produces it. Per output tile this gives
 *     the exact partial nonzero count after any reduction prefix (rule 2).
 *  2. The effectual tile iterations (every input tile non-empty), plus the
 *     iterations inputs that do not skip need, each as a composite key whose
 *     order is the loop order of every level down to b; sorted.
 *  3. The walk: resident tile per tensor; fills on change (rule 1),
 *     write-backs and read-backs of output tiles (rule 2), overbooked
 *     streaming (rule 4), skipping and gating.
 * Cost: O(multiplies + iterations log tiles) per boundary. */
#include <string.h>
#include <time.h>

#include "model_internal.h"

#define NX 4u /* engine indices */
#define NIN 3u /* inputs */
#define NLEV TESSEL_SPEC_MAX_LEVELS

typedef struct operand {
    tessel_tensor *t;
    int owned;
    unsigned order;
    unsigned x[3]; /* engine index of each mode */
    unsigned spec_tensor;
} operand;

/* One digit of a composite loop key: index x at level l. */
typedef struct digit {
    unsigned x;
    uint64_t div;   /* level-l tile edge / level-b tile edge */
    uint64_t radix; /* values this digit takes */
    int first;      /* outermost finite level of x: no modulo */
} digit;

typedef struct boundary {
    unsigned b;
    uint64_t tile[NX];   /* level-b tile edge per engine index (clamped to the extent) */
    uint64_t ntiles[NX];
    unsigned ndigits;
    digit d[NX * NLEV];
    uint64_t red_space;  /* product of the reduction digits' radices */
    tessel_tile_grid *grid[NIN];
    /* output table: unique output tiles, and per tile (reduction key, cumulative count) */
    uint64_t nout;
    uint64_t *out_key, *out_start;
    uint64_t *ent_red, *ent_cum;
    uint64_t nent;
    uint64_t out_tiles;  /* all output tiles, empty or not */
    uint64_t *out_pos;   /* when out_tiles is small: tile -> 1 + its row in out_key, 0 none */
} boundary;

/* Output grids up to this many tiles get direct-indexed state. */
#define DIRECT_TILES (UINT64_C(1) << 22)

typedef struct engine {
    const tessel_spec *spec;
    const tessel_allocator *alloc;
    tessel_diag *diag;
    tessel_workload_kind kind;
    unsigned nx;
    uint64_t extent[NX];
    int spec_index[NX]; /* -1: a unit index that SpMV adds */
    unsigned nin;
    operand in[NIN];
    operand out;
    unsigned nred;
    unsigned red[2];
    unsigned nlev; /* storage levels including the backing store */
    tessel_result *res;
    uint64_t *mark;   /* per value of the output's last index */
    uint64_t *minkey; /* MTTKRP: smallest reduction key per r */
    uint64_t *touched;
} engine;

static int oom(engine *e)
{
    return tessel_diag_set(e->diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
}

tessel_format tessel_model_format(int spec_format)
{
    if (spec_format < 0 || spec_format >= (int)TESSEL_FORMAT_COUNT)
        return TESSEL_FORMAT_CSR;
    return (tessel_format)spec_format;
}

/* ------------------------------------------------------------------ */
/* Roles: which workload tensor is which operand, in canonical mode order. */

static int spec_tensor_with(const tessel_spec *s, unsigned rank, int must_have_x, int skip)
{
    for (unsigned t = 1; t < s->workload.ntensors; t++) {
        const tessel_spec_tensor *st = &s->workload.tensor[t];
        if ((int)t == skip || st->rank != rank)
            continue;
        if (must_have_x < 0)
            return (int)t;
        for (unsigned m = 0; m < st->rank; m++)
            if ((int)st->index[m] == must_have_x)
                return (int)t;
    }
    return -1;
}

static int mode_of(const tessel_spec_tensor *st, unsigned spec_x)
{
    for (unsigned m = 0; m < st->rank; m++)
        if (st->index[m] == spec_x)
            return (int)m;
    return -1;
}

/* Binds operand o to workload tensor t with its modes reordered so that
 * mode m holds engine index xs[m]. eng_of_spec maps spec indices. */
static int bind_operand(engine *e, const tessel_workload_data *w, operand *o, unsigned t,
                        const unsigned *xs, unsigned order)
{
    const tessel_spec_tensor *st = &e->spec->workload.tensor[t];
    o->spec_tensor = t;
    o->order = order;
    for (unsigned m = 0; m < order; m++)
        o->x[m] = xs[m];
    tessel_tensor *src = w->tensor[t];
    if (st->rank == 1 && order == 2) {
        /* SpMV: x[k] becomes a K x 1 matrix. */
        uint64_t dims[2] = { src->dims[0], 1 };
        tessel_coo_builder *b = NULL;
        int rc = tessel_coo_builder_create(2, dims, 0, e->alloc, &b, e->diag);
        for (uint64_t k = 0; !rc && k < src->dims[0]; k++) {
            if (src->ptr[k + 1] > src->ptr[k]) {
                uint32_t c[2] = { (uint32_t)k, 0 };
                rc = tessel_coo_builder_add(b, c, 1.0);
            }
        }
        if (!rc)
            rc = tessel_coo_builder_finish(b, 0, &o->t, e->diag);
        else
            rc = oom(e);
        tessel_coo_builder_free(&b);
        o->owned = 1;
        return rc;
    }
    unsigned perm[TESSEL_MAX_ORDER];
    int identity = 1;
    for (unsigned m = 0; m < order; m++) {
        int sx = e->spec_index[xs[m]];
        int sm = mode_of(st, (unsigned)sx);
        perm[m] = (unsigned)sm;
        identity &= sm == (int)m;
    }
    if (identity) {
        o->t = src;
        return TESSEL_OK;
    }
    o->owned = 1;
    return model_permute(src, perm, e->alloc, &o->t, e->diag);
}

static int not_in(const tessel_spec_tensor *st, unsigned x)
{
    return mode_of(st, x) < 0;
}

static int setup_roles(engine *e, const tessel_workload_data *w)
{
    const tessel_spec *s = e->spec;
    const tessel_spec_tensor *out = &s->workload.tensor[0];
    e->kind = s->workload.kind;
    for (unsigned x = 0; x < NX; x++)
        e->spec_index[x] = -1;
    int ta, tb, tc = -1;
    unsigned xa[3], xb[3], xc[3] = { 0 }, xo[3];
    switch (e->kind) {
    case TESSEL_WORKLOAD_SPMSPM:
    case TESSEL_WORKLOAD_SPMV: {
        /* engine: 0 = i, 1 = j, 2 = k */
        e->nx = 3;
        e->spec_index[0] = (int)out->index[0];
        ta = spec_tensor_with(s, 2, (int)out->index[0], -1);
        if (ta < 0)
            goto unsupported;
        tb = e->kind == TESSEL_WORKLOAD_SPMV ? spec_tensor_with(s, 1, -1, ta)
                                             : spec_tensor_with(s, 2, -1, ta);
        if (tb < 0)
            goto unsupported;
        const tessel_spec_tensor *sa = &s->workload.tensor[ta];
        for (unsigned m = 0; m < 2; m++)
            if (sa->index[m] != out->index[0])
                e->spec_index[2] = (int)sa->index[m];
        if (e->kind == TESSEL_WORKLOAD_SPMSPM)
            e->spec_index[1] = (int)out->index[1];
        xa[0] = 0, xa[1] = 2;
        xb[0] = 2, xb[1] = 1;
        xo[0] = 0, xo[1] = 1;
        e->nin = 2;
        e->nred = 1, e->red[0] = 2;
        if (bind_operand(e, w, &e->in[0], (unsigned)ta, xa, 2) ||
            bind_operand(e, w, &e->in[1], (unsigned)tb, xb, 2))
            return e->diag ? e->diag->code : TESSEL_EINVAL;
        break;
    }
    case TESSEL_WORKLOAD_TTM: {
        /* engine: 0, 1 = the output indices the 3-tensor keeps, 2 = the
         * factor's output index, 3 = the contracted index */
        e->nx = 4;
        ta = spec_tensor_with(s, 3, -1, -1);
        tb = spec_tensor_with(s, 2, -1, ta);
        if (ta < 0 || tb < 0)
            goto unsupported;
        const tessel_spec_tensor *st = &s->workload.tensor[ta], *sm = &s->workload.tensor[tb];
        unsigned n = 0;
        for (unsigned m = 0; m < 3; m++) {
            if (!not_in(out, st->index[m]) && n < 2)
                e->spec_index[n++] = (int)st->index[m];
            else
                e->spec_index[3] = (int)st->index[m];
        }
        for (unsigned m = 0; m < 2; m++)
            if (sm->index[m] != (unsigned)e->spec_index[3])
                e->spec_index[2] = (int)sm->index[m];
        xa[0] = 0, xa[1] = 1, xa[2] = 3;
        xb[0] = 3, xb[1] = 2;
        xo[0] = 0, xo[1] = 1, xo[2] = 2;
        e->nin = 2;
        e->nred = 1, e->red[0] = 3;
        if (bind_operand(e, w, &e->in[0], (unsigned)ta, xa, 3) ||
            bind_operand(e, w, &e->in[1], (unsigned)tb, xb, 2))
            return e->diag ? e->diag->code : TESSEL_EINVAL;
        break;
    }
    case TESSEL_WORKLOAD_MTTKRP: {
        /* engine: 0 = i (kept by the 3-tensor), 1 = r, 2 = j, 3 = k */
        e->nx = 4;
        ta = spec_tensor_with(s, 3, -1, -1);
        if (ta < 0)
            goto unsupported;
        const tessel_spec_tensor *st = &s->workload.tensor[ta];
        unsigned n = 2;
        for (unsigned m = 0; m < 3; m++) {
            if (!not_in(out, st->index[m]))
                e->spec_index[0] = (int)st->index[m];
            else if (n < 4)
                e->spec_index[n++] = (int)st->index[m];
        }
        for (unsigned m = 0; m < 2; m++)
            if ((int)out->index[m] != e->spec_index[0])
                e->spec_index[1] = (int)out->index[m];
        tb = spec_tensor_with(s, 2, e->spec_index[2], ta);
        tc = spec_tensor_with(s, 2, e->spec_index[3], ta);
        if (tb < 0 || tc < 0 || tb == tc)
            goto unsupported;
        xa[0] = 0, xa[1] = 2, xa[2] = 3;
        xb[0] = 2, xb[1] = 1;
        xc[0] = 3, xc[1] = 1;
        xo[0] = 0, xo[1] = 1;
        e->nin = 3;
        e->nred = 2, e->red[0] = 2, e->red[1] = 3;
        if (bind_operand(e, w, &e->in[0], (unsigned)ta, xa, 3) ||
            bind_operand(e, w, &e->in[1], (unsigned)tb, xb, 2) ||
            bind_operand(e, w, &e->in[2], (unsigned)tc, xc, 2))
            return e->diag ? e->diag->code : TESSEL_EINVAL;
        break;
    }
    default:
        goto unsupported;
    }
    for (unsigned x = 0; x < NX; x++)
        if (e->spec_index[x] < 0 && x < e->nx && e->kind != TESSEL_WORKLOAD_SPMV)
            goto unsupported;
    e->out.order = e->kind == TESSEL_WORKLOAD_TTM ? 3 : 2;
    for (unsigned m = 0; m < e->out.order; m++)
        e->out.x[m] = xo[m];
    e->out.spec_tensor = 0;
    for (unsigned x = 0; x < e->nx; x++)
        e->extent[x] = e->spec_index[x] < 0 ? 1 : w->extent[e->spec_index[x]];
    for (unsigned i = 0; i < e->nin; i++)
        for (unsigned m = 0; m < e->in[i].order; m++)
            if (e->in[i].t->dims[m] != e->extent[e->in[i].x[m]])
                return tessel_diag_set(e->diag, TESSEL_EINVAL, NULL, 0, 0, "workload.data",
                                       "%s: mode %u has %llu entries, the einsum needs %llu",
                                       s->workload.tensor[e->in[i].spec_tensor].name, m + 1,
                                       (unsigned long long)e->in[i].t->dims[m],
                                       (unsigned long long)e->extent[e->in[i].x[m]]);
    return TESSEL_OK;
unsupported:
    return tessel_diag_set(e->diag, TESSEL_EUNSUPPORTED, s->workload.pos.file,
                           s->workload.pos.line, s->workload.pos.column, "workload.einsum",
                           "the exact estimator handles SpMSpM, SpMV, TTM and MTTKRP; "
                           "'%s' is none of them",
                           s->workload.einsum ? s->workload.einsum : "");
}

/* ------------------------------------------------------------------ */
/* Boundary geometry: tiles per level and the composite loop key. */

/* Level l's tile edge for engine index x; 0 = the whole extent. */
static uint64_t level_tile(const engine *e, unsigned l, unsigned x)
{
    if (e->spec_index[x] < 0)
        return 0;
    uint64_t t = e->spec->level[l].tile[e->spec_index[x]];
    return t >= e->extent[x] ? 0 : t;
}

/* Position of engine index x in level l's loop order. */
static unsigned order_pos(const engine *e, unsigned l, unsigned x)
{
    const tessel_spec_level *lv = &e->spec->level[l];
    if (e->spec_index[x] < 0)
        return NX; /* the unit index: innermost, it never changes */
    for (unsigned p = 0; p < e->spec->workload.nindices; p++)
        if ((int)lv->order[p] == e->spec_index[x])
            return p;
    return (unsigned)e->spec_index[x];
}

static int boundary_geometry(engine *e, boundary *bd)
{
    unsigned b = bd->b;
    for (unsigned x = 0; x < e->nx; x++) {
        uint64_t t = level_tile(e, b, x);
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
                if (order_pos(e, l, xs[j]) < order_pos(e, l, xs[i])) {
                    unsigned tmp = xs[i];
                    xs[i] = xs[j];
                    xs[j] = tmp;
                }
        for (unsigned i = 0; i < e->nx; i++) {
            unsigned x = xs[i];
            uint64_t t = level_tile(e, l, x);
            if (!t)
                continue;
            uint64_t tb = level_tile(e, b, x);
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
static uint64_t loop_key(const boundary *bd, const uint64_t *c)
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

static void loop_decode(const boundary *bd, uint64_t k, uint64_t *c)
{
    memset(c, 0, NX * sizeof(*c));
    for (unsigned i = bd->ndigits; i-- > 0;) {
        const digit *d = &bd->d[i];
        c[d->x] += (k % d->radix) * d->div;
        k /= d->radix;
    }
}

/* The reduction part of the loop key: orders the visits of one output tile. */
static uint64_t reduction_key(const engine *e, const boundary *bd, const uint64_t *c)
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

static uint64_t tile_key(const boundary *bd, const operand *o, const uint64_t *c)
{
    uint64_t k = 0;
    for (unsigned m = 0; m < o->order; m++)
        k = k * bd->ntiles[o->x[m]] + c[o->x[m]];
    return k;
}

/* ------------------------------------------------------------------ */
/* Tile grids of the inputs and lookups in them. */

static int build_grids(engine *e, boundary *bd)
{
    for (unsigned i = 0; i < e->nin; i++) {
        uint64_t tile[3];
        for (unsigned m = 0; m < e->in[i].order; m++)
            tile[m] = bd->tile[e->in[i].x[m]];
        int rc = tessel_tile_grid_build(e->in[i].t, tile, e->alloc, &bd->grid[i], e->diag);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* First non-empty tile of grid g at or after (group, key). */
static uint64_t grid_lower(const tessel_tile_grid *g, uint64_t group, uint64_t key)
{
    uint64_t lo = 0, hi = g->nonempty;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->group[mid] < group || (g->group[mid] == group && g->key[mid] < key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Nonzeros of operand o's tile at level-b tile coordinates c (0 if empty). */
static uint64_t tile_nnz(const boundary *bd, const tessel_tile_grid *g, const operand *o,
                         const uint64_t *c)
{
    uint64_t group = c[o->x[0]], key = 0;
    for (unsigned m = 1; m < o->order; m++)
        key = key * bd->ntiles[o->x[m]] + c[o->x[m]];
    uint64_t i = grid_lower(g, group, key);
    return i < g->nonempty && g->group[i] == group && g->key[i] == key ? g->count[i] : 0;
}

/* ------------------------------------------------------------------ */
/* Bytes of a tile in a level's format. */

typedef struct tile_cost {
    tessel_format format;
    tessel_format_widths widths;
    unsigned order;
    uint64_t shape[3];
} tile_cost;

static void tile_cost_init(const engine *e, const boundary *bd, const operand *o, tile_cost *tc)
{
    const tessel_spec_level *lv = &e->spec->level[bd->b];
    int f = lv->tensor[o->spec_tensor].format;
    tc->format = tessel_model_format(f >= 0 ? f : lv->format);
    tc->widths.value_bits = lv->value_bits;
    tc->widths.coord_bits = lv->coord_bits;
    tc->widths.offset_bits = lv->offset_bits;
    tc->widths.run_bits = lv->run_bits;
    tc->order = o->order;
    for (unsigned m = 0; m < o->order; m++)
        tc->shape[m] = bd->tile[o->x[m]];
}

static void tile_bytes(const tile_cost *tc, uint64_t n, uint64_t *data, uint64_t *meta)
{
    uint64_t total = tessel_format_footprint(tc->format, tc->order, tc->shape, n, &tc->widths);
    uint64_t d = (n * tc->widths.value_bits + 7) / 8;
    *data = d < total ? d : total;
    *meta = total - *data;
}

/* ------------------------------------------------------------------ */
/* 1. The output table.
 *
 * The passes visit output rows in order; all output tiles of one tile row
 * of the first output index (a "slab") are finished before the next slab
 * starts. Per slab, first appearances are counted per (output tile,
 * reduction key) in a dense counter (or a hash when that key space is
 * large), then appended in order: memory follows the distinct (tile, key)
 * pairs, not the output's nonzeros. */

typedef struct out_agg {
    const tessel_allocator *alloc;
    uint64_t slab;       /* current slab, UINT64_MAX before the first */
    uint64_t per_slab;   /* output tiles in one slab */
    uint64_t space;      /* per_slab * red_space */
    uint64_t *dense;     /* space counters, or NULL: use map */
    model_map map;
    model_vec touched;   /* dense: local keys touched in this slab */
    model_vec key, count; /* the table so far: global key, first appearances */
} out_agg;

#define DENSE_COUNTERS (UINT64_C(1) << 21)

static int agg_init(engine *e, const boundary *bd, out_agg *g)
{
    memset(g, 0, sizeof(*g));
    g->alloc = e->alloc;
    g->slab = UINT64_MAX;
    g->map.alloc = g->touched.alloc = g->key.alloc = g->count.alloc = e->alloc;
    g->per_slab = 1;
    for (unsigned m = 1; m < e->out.order; m++)
        g->per_slab *= bd->ntiles[e->out.x[m]];
    g->space = g->per_slab * bd->red_space;
    if (g->space <= DENSE_COUNTERS) {
        g->dense = tessel_alloc_array(e->alloc, g->space, sizeof(uint64_t));
        if (!g->dense)
            return oom(e);
        memset(g->dense, 0, g->space * sizeof(uint64_t));
    }
    return TESSEL_OK;
}

static void agg_free(out_agg *g)
{
    tessel_dealloc(g->alloc, g->dense);
    model_map_free(&g->map);
    model_vec_free(&g->touched);
    model_vec_free(&g->key);
    model_vec_free(&g->count);
}

/* Appends the current slab's counts in key order and clears them. */
static int agg_flush(out_agg *g)
{
    if (g->slab == UINT64_MAX)
        return TESSEL_OK;
    uint64_t base = g->slab * g->space;
    if (!g->dense) {
        g->touched.n = 0;
        for (uint64_t s = 0; s < g->map.cap; s++)
            if (g->map.keys[s] != UINT64_MAX && model_vec_push(&g->touched, g->map.keys[s]))
                return TESSEL_ENOMEM;
    }
    uint64_t n = g->touched.n;
    if (n > 1) {
        uint64_t *scratch = tessel_alloc_array(g->alloc, n, sizeof(uint64_t));
        if (!scratch)
            return TESSEL_ENOMEM;
        tessel_sort_u64(g->touched.v, scratch, n, g->space - 1);
        tessel_dealloc(g->alloc, scratch);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t local = g->touched.v[i], c;
        if (g->dense) {
            c = g->dense[local];
            g->dense[local] = 0;
        } else {
            c = *model_map_slot(&g->map, local, 0);
        }
        if (model_vec_push(&g->key, base + local) || model_vec_push(&g->count, c))
            return TESSEL_ENOMEM;
    }
    g->touched.n = 0;
    if (!g->dense && g->map.cap)
        memset(g->map.keys, 0xff, g->map.cap * sizeof(uint64_t)), g->map.n = 0;
    return TESSEL_OK;
}

/* Counts one output element first produced at reduction key `red`. */
static int emit(engine *e, const boundary *bd, out_agg *g, const uint64_t *c_elem, uint64_t red)
{
    uint64_t slab = c_elem[e->out.x[0]] / bd->tile[e->out.x[0]];
    if (slab != g->slab) {
        if (agg_flush(g))
            return oom(e);
        g->slab = slab;
    }
    uint64_t rest = 0;
    for (unsigned m = 1; m < e->out.order; m++) {
        unsigned x = e->out.x[m];
        rest = rest * bd->ntiles[x] + c_elem[x] / bd->tile[x];
    }
    uint64_t local = rest * bd->red_space + red;
    if (g->dense) {
        if (!g->dense[local]++ && model_vec_push(&g->touched, local))
            return oom(e);
        return TESSEL_OK;
    }
    uint64_t *slot = model_map_slot(&g->map, local, 0);
    if (!slot)
        return oom(e);
    ++*slot;
    return TESSEL_OK;
}

/* Reduction key of an element's reduction coordinates. */
static uint64_t elem_red(const engine *e, const boundary *bd, uint64_t *c_elem)
{
    uint64_t c[NX] = { 0 };
    for (unsigned r = 0; r < e->nred; r++)
        c[e->red[r]] = c_elem[e->red[r]] / bd->tile[e->red[r]];
    return reduction_key(e, bd, c);
}

/* SpMSpM / SpMV: row-wise (Gustavson); k ascends, so the first time an
 * output column is met is its smallest reduction key. */
static int pass_spmspm(engine *e, const boundary *bd, out_agg *g, uint64_t *macs)
{
    const tessel_tensor *a = e->in[0].t, *b = e->in[1].t;
    uint64_t c[NX] = { 0 };
    for (uint64_t i = 0; i < a->dims[0]; i++) {
        uint64_t stamp = i + 1;
        c[0] = i;
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            uint64_t k = a->idx[1][p];
            c[2] = k;
            uint64_t red = elem_red(e, bd, c);
            *macs += b->ptr[k + 1] - b->ptr[k];
            for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
                uint64_t j = b->idx[1][q];
                if (e->mark[j] == stamp)
                    continue;
                e->mark[j] = stamp;
                c[1] = j;
                if (emit(e, bd, g, c, red))
                    return TESSEL_ENOMEM;
            }
        }
    }
    return TESSEL_OK;
}

/* TTM: per fiber T(i,j,:), k ascends. */
static int pass_ttm(engine *e, const boundary *bd, out_agg *g, uint64_t *macs)
{
    const tessel_tensor *t = e->in[0].t, *m = e->in[1].t;
    uint64_t c[NX] = { 0 }, stamp = 0;
    for (uint64_t i = 0; i < t->dims[0]; i++) {
        c[0] = i;
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            if (p == t->ptr[i] || t->idx[1][p] != t->idx[1][p - 1])
                stamp++;
            c[1] = t->idx[1][p];
            uint64_t k = t->idx[2][p];
            c[3] = k;
            uint64_t red = elem_red(e, bd, c);
            *macs += m->ptr[k + 1] - m->ptr[k];
            for (uint64_t q = m->ptr[k]; q < m->ptr[k + 1]; q++) {
                uint64_t r = m->idx[1][q];
                if (e->mark[r] == stamp)
                    continue;
                e->mark[r] = stamp;
                c[2] = r;
                if (emit(e, bd, g, c, red))
                    return TESSEL_ENOMEM;
            }
        }
    }
    return TESSEL_OK;
}

/* MTTKRP: per slice T(i,:,:); the reduction key over (j, k) is not
 * monotone in storage order, so keep the smallest per r. */
static int pass_mttkrp(engine *e, const boundary *bd, out_agg *g, uint64_t *macs)
{
    const tessel_tensor *t = e->in[0].t, *fb = e->in[1].t, *fc = e->in[2].t;
    uint64_t c[NX] = { 0 };
    for (uint64_t i = 0; i < t->dims[0]; i++) {
        uint64_t stamp = i + 1, ntouched = 0;
        c[0] = i;
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            uint64_t j = t->idx[1][p], k = t->idx[2][p];
            c[2] = j, c[3] = k;
            uint64_t red = elem_red(e, bd, c);
            uint64_t q = fb->ptr[j], qe = fb->ptr[j + 1], s = fc->ptr[k], se = fc->ptr[k + 1];
            while (q < qe && s < se) {
                uint32_t rb = fb->idx[1][q], rc = fc->idx[1][s];
                if (rb < rc) {
                    q++;
                } else if (rc < rb) {
                    s++;
                } else {
                    ++*macs;
                    if (e->mark[rb] != stamp) {
                        e->mark[rb] = stamp;
                        e->minkey[rb] = red;
                        e->touched[ntouched++] = rb;
                    } else if (red < e->minkey[rb]) {
                        e->minkey[rb] = red;
                    }
                    q++, s++;
                }
            }
        }
        for (uint64_t n = 0; n < ntouched; n++) {
            c[1] = e->touched[n];
            if (emit(e, bd, g, c, e->minkey[c[1]]))
                return TESSEL_ENOMEM;
        }
    }
    return TESSEL_OK;
}

/* Runs the pass and turns the (tile, reduction key, count) records into
 * per-tile cumulative counts. */
static int build_output_table(engine *e, boundary *bd, uint64_t *macs)
{
    out_agg g;
    int rc = agg_init(e, bd, &g);
    if (!rc) {
        if (e->kind == TESSEL_WORKLOAD_TTM)
            rc = pass_ttm(e, bd, &g, macs);
        else if (e->kind == TESSEL_WORKLOAD_MTTKRP)
            rc = pass_mttkrp(e, bd, &g, macs);
        else
            rc = pass_spmspm(e, bd, &g, macs);
    }
    if (!rc)
        rc = agg_flush(&g);
    if (rc) {
        agg_free(&g);
        return oom(e);
    }
    uint64_t nent = g.key.n, nout = 0;
    for (uint64_t i = 0; i < nent; i++)
        if (i == 0 || g.key.v[i] / bd->red_space != g.key.v[i - 1] / bd->red_space)
            nout++;
    bd->out_key = tessel_alloc_array(e->alloc, nout + 1, sizeof(uint64_t));
    bd->out_start = tessel_alloc_array(e->alloc, nout + 1, sizeof(uint64_t));
    bd->ent_red = tessel_alloc_array(e->alloc, nent + 1, sizeof(uint64_t));
    bd->ent_cum = tessel_alloc_array(e->alloc, nent + 1, sizeof(uint64_t));
    if (!bd->out_key || !bd->out_start || !bd->ent_red || !bd->ent_cum) {
        agg_free(&g);
        return oom(e);
    }
    uint64_t o = 0;
    for (uint64_t i = 0; i < nent; i++) {
        uint64_t tile = g.key.v[i] / bd->red_space;
        int new_tile = i == 0 || tile != g.key.v[i - 1] / bd->red_space;
        if (new_tile) {
            bd->out_key[o] = tile;
            bd->out_start[o] = i;
            o++;
        }
        bd->ent_red[i] = g.key.v[i] % bd->red_space;
        bd->ent_cum[i] = (new_tile ? 0 : bd->ent_cum[i - 1]) + g.count.v[i];
    }
    bd->out_start[nout] = nent;
    bd->nout = nout;
    bd->nent = nent;
    agg_free(&g);
    bd->out_tiles = 1;
    for (unsigned m = 0; m < e->out.order; m++)
        bd->out_tiles *= bd->ntiles[e->out.x[m]];
    if (bd->out_tiles <= DIRECT_TILES) {
        bd->out_pos = tessel_alloc_array(e->alloc, bd->out_tiles, sizeof(uint64_t));
        if (!bd->out_pos)
            return oom(e);
        memset(bd->out_pos, 0, bd->out_tiles * sizeof(uint64_t));
        for (uint64_t i = 0; i < nout; i++)
            bd->out_pos[bd->out_key[i]] = i + 1;
    }
    return TESSEL_OK;
}

/* Partial nonzeros of output tile `key` after the reduction prefix <= red. */
static uint64_t output_count(const boundary *bd, uint64_t key, uint64_t red)
{
    uint64_t lo = 0, hi = bd->nout;
    if (bd->out_pos) {
        if (!bd->out_pos[key])
            return 0;
        lo = bd->out_pos[key] - 1;
    } else {
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (bd->out_key[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == bd->nout || bd->out_key[lo] != key)
            return 0;
    }
    uint64_t a = bd->out_start[lo], z = bd->out_start[lo + 1];
    while (a < z) { /* last entry with ent_red <= red */
        uint64_t mid = a + (z - a) / 2;
        if (bd->ent_red[mid] <= red)
            a = mid + 1;
        else
            z = mid;
    }
    return a == bd->out_start[lo] ? 0 : bd->ent_cum[a - 1];
}

/* ------------------------------------------------------------------ */
/* 2. The iterations. */

static uint32_t all_inputs_mask(const engine *e)
{
    uint32_t m = 0;
    for (unsigned i = 0; i < e->nin; i++)
        m |= 1u << e->in[i].spec_tensor;
    return m;
}

/* Inputs that skip on fewer than all of their partners need iterations in
 * which a partner is empty. */
static int needs_extra(const engine *e, unsigned b, unsigned i)
{
    const tessel_spec_tensor_level *tl = &e->spec->level[b].tensor[e->in[i].spec_tensor];
    uint32_t partners = all_inputs_mask(e) & ~(1u << e->in[i].spec_tensor);
    return (tl->sparse.skip_on & partners) != partners;
}

#define MAX_ITERATIONS (UINT64_C(1) << 31)

static int too_many(engine *e, const boundary *bd)
{
    return tessel_diag_set(e->diag, TESSEL_ERANGE, NULL, 0, 0, "mapping",
                           "level %s: more than 2^31 tile iterations to walk; use larger tiles",
                           e->spec->level[bd->b].name);
}

/* Effectual iterations: join of the input grids on their shared indices. */
static int gen_effectual(engine *e, const boundary *bd, model_vec *keys)
{
    const tessel_tile_grid *g0 = bd->grid[0], *g1 = bd->grid[1];
    const operand *o0 = &e->in[0], *o1 = &e->in[1];
    for (uint64_t t = 0; t < g0->nonempty; t++) {
        uint64_t c[NX] = { 0 }, tc[3];
        tessel_tile_grid_coords(g0, t, tc);
        for (unsigned m = 0; m < o0->order; m++)
            c[o0->x[m]] = tc[m];
        uint64_t shared = c[o1->x[0]];
        for (uint64_t u = grid_lower(g1, shared, 0); u < g1->nonempty && g1->group[u] == shared;
             u++) {
            c[o1->x[1]] = g1->key[u];
            if (e->nin == 3 && !tile_nnz(bd, bd->grid[2], &e->in[2], c))
                continue;
            if (keys->n >= MAX_ITERATIONS)
                return too_many(e, bd);
            if (model_vec_push(keys, loop_key(bd, c)))
                return oom(e);
        }
    }
    return TESSEL_OK;
}

/* Every iteration in which input i's tile is non-empty and the partners
 * it skips on are non-empty (the other indices range freely). */
static int gen_for_input(engine *e, const boundary *bd, unsigned i, model_vec *keys)
{
    const operand *o = &e->in[i];
    const tessel_spec_tensor_level *tl = &e->spec->level[bd->b].tensor[o->spec_tensor];
    unsigned free_x[NX], nfree = 0;
    for (unsigned x = 0; x < e->nx; x++) {
        int used = 0;
        for (unsigned m = 0; m < o->order; m++)
            used |= o->x[m] == x;
        if (!used)
            free_x[nfree++] = x;
    }
    const tessel_tile_grid *g = bd->grid[i];
    for (uint64_t t = 0; t < g->nonempty; t++) {
        uint64_t c[NX] = { 0 }, tc[3];
        tessel_tile_grid_coords(g, t, tc);
        for (unsigned m = 0; m < o->order; m++)
            c[o->x[m]] = tc[m];
        uint64_t combos = 1;
        for (unsigned f = 0; f < nfree; f++)
            combos *= bd->ntiles[free_x[f]];
        for (uint64_t n = 0; n < combos; n++) {
            uint64_t r = n;
            for (unsigned f = nfree; f-- > 0;) {
                c[free_x[f]] = r % bd->ntiles[free_x[f]];
                r /= bd->ntiles[free_x[f]];
            }
            int keep = 1;
            for (unsigned p = 0; p < e->nin && keep; p++)
                if (p != i && (tl->sparse.skip_on >> e->in[p].spec_tensor & 1u))
                    keep = tile_nnz(bd, bd->grid[p], &e->in[p], c) != 0;
            if (!keep)
                continue;
            if (keys->n >= MAX_ITERATIONS)
                return too_many(e, bd);
            if (model_vec_push(keys, loop_key(bd, c)))
                return oom(e);
        }
    }
    return TESSEL_OK;
}

static int gen_iterations(engine *e, const boundary *bd, model_vec *keys, int *all_effectual)
{
    int rc = gen_effectual(e, bd, keys);
    *all_effectual = 1;
    for (unsigned i = 0; !rc && i < e->nin; i++) {
        if (!needs_extra(e, bd->b, i))
            continue;
        *all_effectual = 0;
        rc = gen_for_input(e, bd, i, keys);
    }
    if (rc || !keys->n)
        return rc;
    uint64_t *scratch = tessel_alloc_array(e->alloc, keys->n, sizeof(uint64_t));
    if (!scratch)
        return oom(e);
    uint64_t max = 0;
    for (uint64_t n = 0; n < keys->n; n++)
        max = keys->v[n] > max ? keys->v[n] : max;
    tessel_sort_u64(keys->v, scratch, keys->n, max);
    tessel_dealloc(e->alloc, scratch);
    uint64_t u = 0;
    for (uint64_t n = 0; n < keys->n; n++)
        if (n == 0 || keys->v[n] != keys->v[n - 1])
            keys->v[u++] = keys->v[n];
    keys->n = u;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* 3. The walk. */

typedef struct resident {
    uint64_t key;   /* UINT64_MAX: nothing resident */
    int gated;      /* the slot is taken but the data never came (gating) */
    uint64_t nnz;
    uint64_t data, meta;
} resident;

/* Partition of tensor t at level b in bytes (0 = unbounded): given bytes,
 * else the fraction, else an equal share of the level. */
static uint64_t partition_bytes(const engine *e, unsigned b, unsigned t)
{
    const tessel_spec_level *lv = &e->spec->level[b];
    const tessel_spec_tensor_level *tl = &lv->tensor[t];
    if (tl->partition_bytes)
        return tl->partition_bytes;
    if (tl->partition_fraction > 0)
        return (uint64_t)(tl->partition_fraction * (double)lv->capacity);
    return lv->capacity / (e->nin + 1);
}

static void add_in(tessel_traffic *tr, uint64_t data, uint64_t meta)
{
    tr->in_data += data;
    tr->in_metadata += meta;
}

static void walk_inputs(engine *e, const boundary *bd, const uint64_t *c, int effectual,
                        resident *res, const tile_cost *cost, uint64_t *nnz_now)
{
    tessel_result *r = e->res;
    unsigned b = bd->b;
    uint64_t key[NIN];
    for (unsigned i = 0; i < e->nin; i++) {
        key[i] = tile_key(bd, &e->in[i], c);
        nnz_now[i] = key[i] == res[i].key ? res[i].nnz : tile_nnz(bd, bd->grid[i], &e->in[i], c);
    }
    for (unsigned i = 0; i < e->nin; i++) {
        const operand *o = &e->in[i];
        const tessel_spec_tensor_level *tl = &e->spec->level[b].tensor[o->spec_tensor];
        tessel_traffic *tr = &r->traffic[b][o->spec_tensor];
        if (!nnz_now[i])
            continue; /* a compressed format skips its own empty tiles */
        int skip = 0, gate = 0;
        for (unsigned p = 0; !effectual && p < e->nin; p++) {
            if (p == i || nnz_now[p] != 0)
                continue;
            if (tl->sparse.skip_on >> e->in[p].spec_tensor & 1u)
                skip = 1;
            else if (tl->sparse.gate_on >> e->in[p].spec_tensor & 1u)
                gate = 1;
        }
        if (skip)
            continue;
        uint64_t part = partition_bytes(e, b, o->spec_tensor);
        if (key[i] != res[i].key && gate) {
            /* Gating spends the slot without moving data. */
            tr->gated++;
            res[i].key = key[i];
            res[i].gated = 1;
            continue;
        }
        if (key[i] != res[i].key || (res[i].gated && !gate)) {
            res[i].key = key[i];
            res[i].gated = 0;
            res[i].nnz = nnz_now[i];
            tile_bytes(&cost[i], nnz_now[i], &res[i].data, &res[i].meta);
            tr->fills++;
            add_in(tr, res[i].data, res[i].meta);
            if (part && res[i].data + res[i].meta > part)
                r->overflow_tiles++;
            continue;
        }
        if (res[i].gated)
            continue;
        /* Rule 4: the part of an overbooked tile beyond its partition is
         * streamed again on every use. */
        uint64_t total = res[i].data + res[i].meta;
        if (!gate && part && total > part) {
            uint64_t extra = total - part;
            uint64_t meta = (uint64_t)((double)extra * (double)res[i].meta / (double)total);
            add_in(tr, extra - meta, meta);
            tr->bumped_bytes += extra;
        }
    }
}

typedef struct out_state {
    model_map seen;     /* output tile -> 1 + last reduction key written back, 0 never */
    uint64_t *direct;   /* the same, direct-indexed, for small output grids */
    uint64_t key;       /* resident output tile, UINT64_MAX none */
    uint64_t red;       /* reduction key of its last visit */
} out_state;

static int write_back(engine *e, const boundary *bd, out_state *os, const tile_cost *cost)
{
    if (os->key == UINT64_MAX)
        return TESSEL_OK;
    tessel_traffic *tr = &e->res->traffic[bd->b][0];
    uint64_t n = output_count(bd, os->key, os->red), data, meta;
    tile_bytes(cost, n, &data, &meta);
    tr->writebacks++;
    tr->out_data += data;
    tr->out_metadata += meta;
    uint64_t *slot = os->direct ? &os->direct[os->key] : model_map_slot(&os->seen, os->key, 0);
    if (!slot)
        return oom(e);
    *slot = os->red + 1;
    return TESSEL_OK;
}

static int walk_output(engine *e, const boundary *bd, const uint64_t *c, out_state *os,
                       const tile_cost *cost)
{
    uint64_t key = tile_key(bd, &e->out, c), red = reduction_key(e, bd, c);
    if (key != os->key) {
        if (write_back(e, bd, os, cost))
            return oom(e);
        uint64_t *slot = os->direct ? &os->direct[key] : model_map_slot(&os->seen, key, 0);
        if (!slot)
            return oom(e);
        if (*slot) {
            tessel_traffic *tr = &e->res->traffic[bd->b][0];
            uint64_t data, meta;
            tile_bytes(cost, output_count(bd, key, *slot - 1), &data, &meta);
            tr->updates++;
            add_in(tr, data, meta);
        }
        os->key = key;
    }
    os->red = red;
    return TESSEL_OK;
}

static int walk(engine *e, const boundary *bd, const model_vec *keys, int all_effectual)
{
    unsigned b = bd->b;
    int innermost = b + 1 == e->nlev;
    resident res[NIN];
    tile_cost cost[NIN], out_cost;
    for (unsigned i = 0; i < e->nin; i++) {
        res[i].key = UINT64_MAX;
        res[i].gated = 0;
        tile_cost_init(e, bd, &e->in[i], &cost[i]);
    }
    tile_cost_init(e, bd, &e->out, &out_cost);
    out_state os = { .seen = { .alloc = e->alloc }, .key = UINT64_MAX };
    if (bd->out_pos) {
        os.direct = tessel_alloc_array(e->alloc, bd->out_tiles, sizeof(uint64_t));
        if (!os.direct)
            return oom(e);
        memset(os.direct, 0, bd->out_tiles * sizeof(uint64_t));
    }
    int rc = TESSEL_OK;
    for (uint64_t n = 0; n < keys->n && !rc; n++) {
        uint64_t c[NX], nnz_now[NIN] = { 0 };
        loop_decode(bd, keys->v[n], c);
        int effectual = 1;
        if (!all_effectual)
            for (unsigned i = 0; i < e->nin; i++)
                effectual &= tile_nnz(bd, bd->grid[i], &e->in[i], c) != 0;
        walk_inputs(e, bd, c, effectual, res, cost, nnz_now);
        if (!effectual)
            continue;
        e->res->effectual_tiles[b]++;
        if (innermost)
            for (unsigned i = 0; i < e->nin; i++) {
                e->res->intersections += nnz_now[i];
                e->res->traffic[b][e->in[i].spec_tensor].child_read_metadata +=
                    nnz_now[i] * e->spec->level[b].coord_bits / 8;
            }
        rc = walk_output(e, bd, c, &os, &out_cost);
    }
    if (!rc)
        rc = write_back(e, bd, &os, &out_cost);
    model_map_free(&os.seen);
    tessel_dealloc(e->alloc, os.direct);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Sparseloop's algorithmic counts: the dense loop nest changes a tensor's
 * tile once per iteration of every loop down to its innermost index. */
static uint64_t dense_changes(const boundary *bd, const operand *o)
{
    unsigned last = 0;
    int any = 0;
    for (unsigned i = 0; i < bd->ndigits; i++)
        for (unsigned m = 0; m < o->order; m++)
            if (bd->d[i].x == o->x[m]) {
                last = i;
                any = 1;
            }
    uint64_t n = 1;
    for (unsigned i = 0; any && i <= last; i++)
        n = bd->d[i].radix && n > UINT64_MAX / bd->d[i].radix ? UINT64_MAX : n * bd->d[i].radix;
    return n;
}

static void algorithmic_counts(engine *e, const boundary *bd)
{
    for (unsigned i = 0; i < e->nin; i++) {
        tessel_traffic *tr = &e->res->traffic[bd->b][e->in[i].spec_tensor];
        tr->algorithmic = dense_changes(bd, &e->in[i]);
        uint64_t done = tr->fills + tr->gated;
        tr->skipped = tr->algorithmic > done ? tr->algorithmic - done : 0;
    }
    tessel_traffic *tz = &e->res->traffic[bd->b][0];
    uint64_t tiles = 1;
    for (unsigned m = 0; m < e->out.order; m++)
        tiles *= bd->ntiles[e->out.x[m]];
    uint64_t changes = dense_changes(bd, &e->out);
    tz->algorithmic = changes > tiles ? changes - tiles : 0;
    tz->skipped = tz->algorithmic > tz->updates ? tz->algorithmic - tz->updates : 0;
}

/* Compulsory bytes at level 1: every input tile once, every final output
 * tile once. */
static void compulsory(engine *e, const boundary *bd)
{
    uint64_t total = 0, data, meta;
    for (unsigned i = 0; i < e->nin; i++) {
        tile_cost tc;
        tile_cost_init(e, bd, &e->in[i], &tc);
        const tessel_tile_grid *g = bd->grid[i];
        for (uint64_t t = 0; t < g->nonempty; t++) {
            tile_bytes(&tc, g->count[t], &data, &meta);
            total += data + meta;
        }
    }
    tile_cost tc;
    tile_cost_init(e, bd, &e->out, &tc);
    for (uint64_t o = 0; o < bd->nout; o++) {
        tile_bytes(&tc, bd->ent_cum[bd->out_start[o + 1] - 1], &data, &meta);
        total += data + meta;
    }
    e->res->compulsory_bytes = total;
}

static void boundary_free(engine *e, boundary *bd)
{
    for (unsigned i = 0; i < NIN; i++)
        tessel_tile_grid_free(&bd->grid[i]);
    tessel_dealloc(e->alloc, bd->out_key);
    tessel_dealloc(e->alloc, bd->out_start);
    tessel_dealloc(e->alloc, bd->ent_red);
    tessel_dealloc(e->alloc, bd->ent_cum);
    tessel_dealloc(e->alloc, bd->out_pos);
    memset(bd, 0, sizeof(*bd));
}

static int run_boundary(engine *e, unsigned b)
{
    boundary bd;
    memset(&bd, 0, sizeof(bd));
    bd.b = b;
    uint64_t macs = 0;
    model_vec keys = { .alloc = e->alloc };
    int all_effectual = 1;
    int rc = boundary_geometry(e, &bd);
    if (!rc)
        rc = build_grids(e, &bd);
    if (!rc)
        rc = build_output_table(e, &bd, &macs);
    if (!rc)
        rc = gen_iterations(e, &bd, &keys, &all_effectual);
    if (!rc)
        rc = walk(e, &bd, &keys, all_effectual);
    if (!rc) {
        algorithmic_counts(e, &bd);
        e->res->macs = macs;
        if (b == 1) {
            compulsory(e, &bd);
            e->res->output_nnz = 0;
            for (uint64_t o = 0; o < bd.nout; o++)
                e->res->output_nnz += bd.ent_cum[bd.out_start[o + 1] - 1];
        }
    }
    model_vec_free(&keys);
    boundary_free(e, &bd);
    return rc;
}

/* Derived counts: the backing side of each boundary, the MACs' reads at
 * the innermost level, and the summary totals. */
static void finish_counts(engine *e)
{
    tessel_result *r = e->res;
    unsigned L = e->nlev - 1;
    for (unsigned l = 0; l < L; l++) {
        for (unsigned t = 0; t < r->ntensors; t++) {
            tessel_traffic *tr = &r->traffic[l][t], *child = &r->traffic[l + 1][t];
            tr->reads = child->fills + child->updates;
            tr->child_read_data = child->in_data;
            tr->child_read_metadata = child->in_metadata;
            tr->child_write_data = child->out_data;
            tr->child_write_metadata = child->out_metadata;
        }
    }
    uint64_t value_bytes = e->spec->level[L].value_bits / 8;
    for (unsigned t = 0; t < r->ntensors; t++) {
        tessel_traffic *tr = &r->traffic[L][t];
        tr->reads = r->macs;
        tr->child_read_data = r->macs * value_bytes;
        if (t == 0)
            tr->child_write_data = r->macs * value_bytes;
    }
    for (unsigned l = 0; l <= L; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            tessel_traffic *tr = &r->traffic[l][t];
            if (l == 0) {
                tr->data_bytes = tr->child_read_data + tr->child_write_data;
                tr->metadata_bytes = tr->child_read_metadata + tr->child_write_metadata;
            } else {
                tr->data_bytes = tr->in_data + tr->out_data;
                tr->metadata_bytes = tr->in_metadata + tr->out_metadata;
            }
        }
    r->dram_bytes = 0;
    for (unsigned t = 0; t < r->ntensors; t++)
        r->dram_bytes += r->traffic[0][t].data_bytes + r->traffic[0][t].metadata_bytes;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void engine_free(engine *e)
{
    for (unsigned i = 0; i < NIN; i++)
        if (e->in[i].owned)
            tessel_tensor_free(&e->in[i].t);
    tessel_dealloc(e->alloc, e->mark);
    tessel_dealloc(e->alloc, e->minkey);
    tessel_dealloc(e->alloc, e->touched);
}

int tessel_model_exact(const tessel_spec *spec, const tessel_workload_data *data,
                       const tessel_allocator *a, tessel_result *out, tessel_diag *diag)
{
    double start = now_seconds();
    memset(out, 0, sizeof(*out));
    snprintf(out->estimator, sizeof(out->estimator), "exact");
    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
    if (spec->nlevels < 2)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "architecture.levels",
                               "the architecture needs a backing store and at least one buffer");
    engine e;
    memset(&e, 0, sizeof(e));
    e.spec = spec;
    e.alloc = a;
    e.diag = diag;
    e.res = out;
    e.nlev = spec->nlevels;
    int rc = setup_roles(&e, data);
    if (!rc) {
        /* markers over the output's last engine index */
        uint64_t n = e.extent[e.out.x[e.out.order - 1]] + 1;
        e.mark = tessel_alloc_array(a, n, sizeof(uint64_t));
        e.minkey = tessel_alloc_array(a, n, sizeof(uint64_t));
        e.touched = tessel_alloc_array(a, n, sizeof(uint64_t));
        if (!e.mark || !e.minkey || !e.touched)
            rc = oom(&e);
        else
            memset(e.mark, 0, n * sizeof(uint64_t));
    }
    for (unsigned b = 1; !rc && b < spec->nlevels; b++) {
        rc = run_boundary(&e, b);
        if (!rc && b + 1 < spec->nlevels)
            memset(e.mark, 0, (e.extent[e.out.x[e.out.order - 1]] + 1) * sizeof(uint64_t));
    }
    if (!rc)
        finish_counts(&e);
    engine_free(&e);
    out->seconds = now_seconds() - start;
    return rc;
}

/* Tile edges off the statistics' base grid (a user's --base, saved
 * statistics, or the memory cap of stat_base.c): the base grid cannot be
 * merged into such a tile, so the point is priced from the on-grid shapes
 * around it. Per index whose innermost finite edge t falls between the
 * grid's multiples lo < t < hi, the point is evaluated at lo and at hi
 * (outer levels' edges scaled with it, so the tiles still nest), and the
 * results are blended multilinearly with weights linear in the number of
 * tiles along the index, ceil(extent / edge): re-fetches (rule 1) happen
 * once per tile of the other operand's loop, so traffic follows the tile
 * count, steps and all (an edge with as many tiles as lo prices as lo);
 * where lo and hi have as many tiles, linear in 1/t. Every count of the blend lies
 * between the neighbours' counts; the error bound (docs/models/stat.md, "Tile edges off
 * the grid") is stated and tested against the exact estimator in
 * tests/unit/test_stat_offgrid.c. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "stat_internal.h"

typedef struct axis {
    unsigned x, sx;              /* engine and workload index */
    uint64_t t, lo, hi;          /* innermost edge and its on-grid neighbours */
    double w_hi;                 /* weight of the hi corner */
} axis;

static uint64_t lcm_u64(uint64_t a, uint64_t b)
{
    uint64_t x = a, y = b;
    while (y) {
        uint64_t r = x % y;
        x = y;
        y = r;
    }
    return x ? a / x * b : 0;
}

/* The granule of engine index x: every base edge along x divides it. */
static uint64_t granule(const engine *e, const stat_input *const *ins, unsigned x)
{
    uint64_t g = 1;
    for (unsigned i = 0; i < e->nin; i++)
        for (unsigned m = 0; m < e->in[i].order; m++)
            if (e->in[i].x[m] == x && ins[i] && ins[i]->grid && m < ins[i]->grid->order)
                g = lcm_u64(g, ins[i]->grid->tile[m]);
    return g;
}

/* The axes to interpolate along; 0 when every edge is on the grid, or
 * when the tiles do not nest (the evaluation reports that). */
static unsigned plan(const engine *e, const stat_input *const *ins, axis *ax)
{
    unsigned n = 0;
    const tessel_spec *s = e->spec;
    for (unsigned x = 0; x < e->nx; x++) {
        int sx = e->spec_index[x];
        if (sx < 0)
            continue;
        uint64_t g = granule(e, ins, x), inner = 0;
        int off = 0;
        for (unsigned l = 1; l < s->nlevels; l++) {
            uint64_t t = s->level[l].tile[sx];
            if (!t || t >= e->extent[x])
                continue;
            off |= t % g != 0;
            if (!inner || t < inner)
                inner = t;
        }
        if (!off)
            continue;
        for (unsigned l = 1; l < s->nlevels; l++) {
            uint64_t t = s->level[l].tile[sx];
            if (t && t < e->extent[x] && t % inner)
                return 0;
        }
        axis *a = &ax[n++];
        a->x = x;
        a->sx = (unsigned)sx;
        a->t = inner;
        a->lo = inner / g * g;
        a->hi = a->lo + g;
        if (!a->lo) {
            /* below the grid: priced at one cell, the finest shape the
             * statistics hold (extrapolating from one and two cells went
             * negative on ExTensor's PE tiles); no bound is claimed */
            a->lo = a->hi;
            a->w_hi = 1;
            continue;
        }
        double ext = (double)e->extent[x];
        double nl = ceil(ext / (double)a->lo), nh = ceil(ext / (double)a->hi);
        double nt = ceil(ext / (double)inner);
        double il = 1.0 / (double)a->lo, ih = 1.0 / (double)a->hi, it = 1.0 / (double)inner;
        a->w_hi = nl > nh ? (nl - nt) / (nl - nh) : (il - it) / (il - ih);
    }
    return n;
}

/* The spec of one corner: along each axis, edges scaled from t to lo or hi. */
static void corner_spec(const engine *e, const axis *ax, unsigned n, unsigned corner,
                        tessel_spec *out)
{
    const tessel_spec *spec = e->spec;
    *out = *spec;
    for (unsigned a = 0; a < n; a++) {
        uint64_t edge = corner >> a & 1u ? ax[a].hi : ax[a].lo;
        for (unsigned l = 1; l < spec->nlevels; l++) {
            uint64_t t = spec->level[l].tile[ax[a].sx];
            if (t && t % ax[a].t == 0 && t < e->extent[ax[a].x])
                out->level[l].tile[ax[a].sx] = t / ax[a].t * edge;
        }
    }
}

#define BLEND_TRAFFIC(X)                                                                     \
    X(fills) X(updates) X(writebacks) X(reads) X(data_bytes) X(metadata_bytes) X(in_data)      \
    X(in_metadata) X(out_data) X(out_metadata) X(child_read_data) X(child_read_metadata)       \
    X(child_write_data) X(child_write_metadata) X(algorithmic) X(skipped) X(gated)             \
    X(bumped_bytes) X(overflow_tiles) X(overflow_bytes) X(skipped_reads) X(gated_reads)        \
    X(skipped_metadata_bytes) X(gated_metadata_bytes)

/* acc += w * r over the counts; the named fields only, so that a field
 * added later keeps the nearest corner's value (copied first). */
static void accumulate(double *acc, const tessel_result *r, double w)
{
    size_t k = 0;
    for (unsigned l = 0; l < TESSEL_SPEC_MAX_LEVELS; l++)
        for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
            const tessel_traffic *tr = &r->traffic[l][t];
#define ADD(f) acc[k++] += w * (double)tr->f;
            BLEND_TRAFFIC(ADD)
#undef ADD
        }
    for (unsigned l = 0; l < TESSEL_SPEC_MAX_LEVELS; l++)
        acc[k++] += w * (double)r->effectual_tiles[l];
    const uint64_t v[] = { r->macs, r->intersections, r->output_nnz, r->compulsory_bytes,
                           r->dram_bytes, r->overflow_tiles, r->computes_algorithmic,
                           r->computes_actual, r->computes_gated, r->computes_skipped };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        acc[k++] += w * (double)v[i];
    acc[k++] += w * (double)r->tiled_metadata_bytes;
}

static uint64_t rounded(double v)
{
    return v <= 0 ? 0 : v >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(v);
}

static void store(const double *acc, tessel_result *out)
{
    size_t k = 0;
    for (unsigned l = 0; l < TESSEL_SPEC_MAX_LEVELS; l++)
        for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
            tessel_traffic *tr = &out->traffic[l][t];
#define PUT(f) tr->f = rounded(acc[k++]);
            BLEND_TRAFFIC(PUT)
#undef PUT
        }
    for (unsigned l = 0; l < TESSEL_SPEC_MAX_LEVELS; l++)
        out->effectual_tiles[l] = rounded(acc[k++]);
    uint64_t *v[] = { &out->macs, &out->intersections, &out->output_nnz, &out->compulsory_bytes,
                      &out->dram_bytes, &out->overflow_tiles, &out->computes_algorithmic,
                      &out->computes_actual, &out->computes_gated, &out->computes_skipped };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        *v[i] = rounded(acc[k++]);
    out->tiled_metadata_bytes = (int64_t)llround(acc[k++]);
}

#define BLEND_SLOTS (TESSEL_SPEC_MAX_LEVELS * TESSEL_SPEC_MAX_TENSORS * 24 + \
                     TESSEL_SPEC_MAX_LEVELS + 11)

int stat_offgrid_eval(const engine *e, const stat_input *const *ins, stat_point_fn fn,
                      void *ud, tessel_result *out, tessel_diag *diag)
{
    axis ax[NX];
    unsigned n = plan(e, ins, ax);
    if (!n)
        return fn(ud, e->spec, out, diag);
    const tessel_allocator *a = e->alloc;
    double *acc = tessel_alloc_array(a, BLEND_SLOTS, sizeof(double));
    tessel_spec *cs = tessel_alloc(a, sizeof(*cs));
    tessel_result *r = tessel_alloc(a, sizeof(*r));
    int rc = acc && cs && r ? TESSEL_OK : TESSEL_ENOMEM;
    if (rc)
        rc = tessel_diag_oom(diag, NULL, "blending off-grid tile shapes",
                             BLEND_SLOTS * sizeof(double) + sizeof(*cs) + sizeof(*r));
    else
        memset(acc, 0, BLEND_SLOTS * sizeof(double));
    double best = -1, seconds = 0;
    for (unsigned c = 0; !rc && c < 1u << n; c++) {
        double w = 1;
        for (unsigned i = 0; i < n; i++)
            w *= c >> i & 1u ? ax[i].w_hi : 1 - ax[i].w_hi;
        if (w == 0)
            continue;
        corner_spec(e, ax, n, c, cs);
        rc = fn(ud, cs, r, diag);
        if (rc)
            break;
        accumulate(acc, r, w);
        seconds += r->seconds;
        if (w > best) { /* fields the blend does not name: the nearest corner's */
            best = w;
            *out = *r;
        }
    }
    if (!rc) {
        store(acc, out);
        out->seconds = seconds;
        out->offgrid_edges = n;
        exact_record_tiles(e, out); /* the tiles asked for, not a corner's */
    }
    tessel_dealloc(a, acc);
    tessel_dealloc(a, cs);
    tessel_dealloc(a, r);
    return rc;
}

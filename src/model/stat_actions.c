/* Scalar skipping and gating (a level's `action_optimization`) and compute
 * skipping and gating (`compute_optimization`) of a stat point on the
 * closed path of SpMSpM and SpMV, one buffer level or nested: at the
 * innermost level from the input grids at its tile shape, and at the
 * backing store of one buffer level from level 1's grids (docs/semantics.md
 * "Scalar skipping and gating", "At an outer level").
 *
 * With tile-level skipping at every level, the effectual innermost tile
 * iterations are those of a one-level problem at the innermost tile shape:
 * A's tile (I, K) and B's tile (K, J) both non-empty. The compute's
 * traversals of A are, per such iteration, nnz(A tile) x the j extent of
 * B's tile, so in total
 *
 *   sum over K of [sum over non-empty A(I,K) of nnz] x [sum over non-empty
 *   B(K,J) of the J tile's j extent]
 *
 * and B's alike with the i extents of A's non-empty tiles of column K; the
 * compute's points are sum over K of k extent(K) x that i sum x that j sum.
 * Each is a pass over the two tile grids at the innermost shape, edge tiles
 * counted at their own extent, so it equals exact's count (exact_walk's
 * exact_scalar_note) wherever the format's bytes are affine in a tile's
 * nonzeros (what stat prices); it does not depend on the outer levels,
 * their order or the nested strip sample. model_scalar.c turns the sums
 * into skipped (gated) reads, format bytes and computes as for one level. */
#include <string.h>

#include "stat_closed.h"
#include "stat_internal.h"

/* Whether the point asks for the innermost level's scalar or compute actions. */
static int actions_on(const engine *e)
{
    if (e->spec->compute.optimization)
        return 1;
    for (unsigned i = 0; i < e->nin; i++)
        if (exact_scalar_on(e, i))
            return 1;
    return 0;
}

/* The extent of tile t along engine index x at the innermost level (1 for
 * SpMV's unit index): the edge, clipped at the tensor's extent. */
static double tile_extent(const engine *e, unsigned x, uint64_t t)
{
    if (e->spec_index[x] < 0)
        return 1;
    uint64_t edge = exact_level_edge(e, e->nlev - 1, x), lo = t * edge;
    uint64_t hi = lo + edge < e->extent[x] ? lo + edge : e->extent[x];
    return hi > lo ? (double)(hi - lo) : 0;
}

/* Input i's grid at bd's tile shape: the base grid itself when they agree
 * (*own = 0), else a merged copy (*own = 1, to be freed). */
static int inner_grid(engine *e, const stat_input *in, unsigned i, const boundary *bd,
                      stat_grid *g, int *own, tessel_diag *diag)
{
    uint64_t edge[2];
    *own = 0;
    for (unsigned m = 0; m < 2; m++) {
        int rc = stat_derived_edge(e, bd, e->in[i].x[m], in->grid->tile[m], &edge[m], diag);
        if (rc)
            return rc;
    }
    if (edge[0] == in->grid->tile[0] && edge[1] == in->grid->tile[1]) {
        *g = *in->base;
        return TESSEL_OK;
    }
    *own = 1;
    return stat_derive_grid(e, in, i, bd, e->alloc, g, edge, diag);
}

/* Input q's metadata bytes per tile: fixed per tile, per nonzero (the
 * format's footprint less the values, model_scalar_sums' rule). */
static int meta_rates(engine *e, const boundary *bd, unsigned q, double *fixed, double *per)
{
    tile_cost tc;
    *fixed = *per = 0;
    if (exact_tile_cost_init(e, bd, &e->in[q], &tc))
        return 1;
    model_cost_footprint_bits(&tc, fixed, per);
    *fixed /= 8;
    *per = (*per - tc.widths.value_bits) / 8;
    return 0;
}

/* The sums of the header from the two grids (A: rows along in[0].x[0],
 * columns K; B: rows K, columns along in[1].x[1]) into e's scalar and
 * compute accumulators. */
static int inner_sums(engine *e, const boundary *bd, const stat_grid *a, const stat_grid *b)
{
    uint64_t K = a->cols > b->rows ? a->cols : b->rows;
    double *w = stat_zeroed(e->alloc, 3 * (K + 1), sizeof(double));
    if (!w)
        return TESSEL_ENOMEM;
    double *wa = w, *na = w + K + 1, *nz = w + 2 * (K + 1);
    unsigned xi = e->in[0].x[0], xk = e->in[0].x[1], xj = e->in[1].x[1];
    for (uint64_t r = 0; r < a->rows; r++) {
        double ext = tile_extent(e, xi, r);
        for (uint64_t t = a->ptr[r]; t < a->ptr[r + 1]; t++) {
            wa[a->col[t]] += ext; /* i extents of column K's non-empty A tiles */
            na[a->col[t]] += 1;
            nz[a->col[t]] += (double)a->nnz[t];
        }
    }
    double fa, pa, fb, pb;
    if (meta_rates(e, bd, 0, &fa, &pa) || meta_rates(e, bd, 1, &fb, &pb)) {
        tessel_dealloc(e->alloc, w);
        return TESSEL_OK; /* no cost model: nothing to split (as model_scalar_sums) */
    }
    double ra = 0, rb = 0, ma = 0, mb = 0, pts = 0;
    for (uint64_t k = 0; k < K && k < b->rows; k++) {
        double sj = 0, bn = 0, bt = (double)(b->ptr[k + 1] - b->ptr[k]);
        for (uint64_t t = b->ptr[k]; t < b->ptr[k + 1]; t++) {
            sj += tile_extent(e, xj, b->col[t]);
            bn += (double)b->nnz[t];
        }
        ra += nz[k] * sj;
        ma += (na[k] * fa + nz[k] * pa) * sj;
        rb += bn * wa[k];
        mb += (bt * fb + bn * pb) * wa[k];
        pts += tile_extent(e, xk, k) * wa[k] * sj;
    }
    e->scalar_reads[0] = e->compute_nz[0] = ra;
    e->scalar_reads[1] = e->compute_nz[1] = rb;
    e->scalar_format[0] = ma > 0 ? ma : 0;
    e->scalar_format[1] = mb > 0 ? mb : 0;
    e->compute_points = pts;
    tessel_dealloc(e->alloc, w);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* An outer action at the backing store of one buffer level (closed path):
 * docs/semantics.md "At an outer level". Input X's tiles at level 1, in
 * level 1's loop order, with the index u that X does not carry swept in
 * full (the dense schedule visits every X tile at every u tile): a fill at
 * every change of X's tile. With u's loop inside both of X's, each tile is
 * visited in one run (one fill); outside both, X's tiles repeat per u tile
 * (nU x the tiles, one fill in all when X has one tile); between them, per
 * slice of X's outer index, a slice of one tile keeps it across u (one
 * fill), one of c >= 2 tiles refills each at every u (nU x c). The closed
 * sums' fills of X (stat_actions_outer_fills) are taken off. */

/* Input i's dense-schedule fills (their nonzeros and format bytes) into
 * e->outer_nnz[0][i], e->outer_meta[0][i]. */
static void outer_dense(engine *e, const boundary *bd, unsigned i, const stat_grid *g)
{
    const operand *o = &e->in[i];
    unsigned u = e->nx;
    for (unsigned x = 0; x < e->nx && x < 3; x++)
        if (x != o->x[0] && x != o->x[1])
            u = x;
    double nU = 1;
    if (u < e->nx && e->spec_index[u] >= 0) {
        uint64_t edge = exact_level_edge(e, 1, u);
        nU = edge ? (double)((e->extent[u] + edge - 1) / edge) : 1;
    }
    double fixed, per;
    if (meta_rates(e, bd, i, &fixed, &per))
        return;
    int pu = u < e->nx ? stat_loop_position(bd, u) : -1;
    int p0 = stat_loop_position(bd, o->x[0]), p1 = stat_loop_position(bd, o->x[1]);
    double nnz = 0, tiles = 0, dn = 0, dt = 0;
    for (uint64_t t = 0; t < g->n; t++)
        nnz += (double)g->nnz[t];
    tiles = (double)g->n;
    if (nU <= 1 || (pu > p0 && pu > p1)) { /* each tile in one run */
        dn = nnz, dt = tiles;
    } else if (pu < p0 && pu < p1) { /* X's tiles repeat per u tile */
        dn = nU * nnz, dt = nU * tiles;
        if (g->n == 1)
            dn = nnz, dt = 1;
    } else if (p0 < p1) { /* slices are rows */
        for (uint64_t r = 0; r < g->rows; r++) {
            double c = (double)(g->ptr[r + 1] - g->ptr[r]), z = 0;
            for (uint64_t t = g->ptr[r]; t < g->ptr[r + 1]; t++)
                z += (double)g->nnz[t];
            double m = c == 1 ? 1 : nU;
            dn += m * z, dt += m * c;
        }
    } else { /* slices are columns */
        double *c = stat_zeroed(e->alloc, 2 * (g->cols + 1), sizeof(double));
        if (!c)
            return;
        for (uint64_t t = 0; t < g->n; t++) {
            c[g->col[t]] += 1;
            c[g->cols + 1 + g->col[t]] += (double)g->nnz[t];
        }
        for (uint64_t q = 0; q < g->cols; q++) {
            double m = c[q] == 1 ? 1 : nU;
            dn += m * c[g->cols + 1 + q], dt += m * c[q];
        }
        tessel_dealloc(e->alloc, c);
    }
    e->outer_nnz[0][i] += dn;
    e->outer_meta[0][i] += dt * fixed + dn * per;
}

void stat_actions_outer_fills(engine *e, const boundary *bd, const stat_outcome *o, int mirror)
{
    if (e->nlev != 2 || e->nin != 2)
        return;
    for (unsigned i = 0; i < 2; i++) {
        const tessel_spec_sparse *sp = &e->spec->level[0].tensor[e->in[i].spec_tensor].sparse;
        if (!(sp->scalar_skip_on | sp->scalar_gate_on))
            continue;
        const stat_counts *c = (i == 0) != (mirror != 0) ? &o->a : &o->b;
        tile_cost tc;
        if (exact_tile_cost_init(e, bd, &e->in[i], &tc) || !tc.widths.value_bits)
            continue;
        e->outer_nnz[0][i] -= c->fill_data * 8 / tc.widths.value_bits;
        e->outer_meta[0][i] -= c->fill_meta;
    }
}

/* Whether level 0 (of two) holds an action on an input. */
static int outer_on(const engine *e)
{
    for (unsigned i = 0; e->nlev == 2 && i < e->nin; i++) {
        const tessel_spec_sparse *sp = &e->spec->level[0].tensor[e->in[i].spec_tensor].sparse;
        if (sp->scalar_skip_on | sp->scalar_gate_on)
            return 1;
    }
    return 0;
}

static int outer_grids(engine *e, const stat_input *const *in, tessel_diag *diag)
{
    boundary bd;
    memset(&bd, 0, sizeof(bd));
    bd.b = 1;
    int rc = exact_geometry(e, &bd);
    for (unsigned i = 0; !rc && i < 2; i++) {
        const tessel_spec_sparse *sp = &e->spec->level[0].tensor[e->in[i].spec_tensor].sparse;
        if (!(sp->scalar_skip_on | sp->scalar_gate_on))
            continue;
        stat_grid g;
        int own = 0;
        memset(&g, 0, sizeof(g));
        rc = inner_grid(e, in[i], i, &bd, &g, &own, diag);
        if (!rc)
            outer_dense(e, &bd, i, &g);
        if (own)
            stat_grid_free(e->alloc, &g);
    }
    return rc;
}

int stat_actions_grids(engine *e, const stat_input *const *in, tessel_diag *diag)
{
    if (e->nin != 2 || (e->kind != TESSEL_WORKLOAD_SPMSPM && e->kind != TESSEL_WORKLOAD_SPMV))
        return TESSEL_OK; /* TTM's one level: model_scalar_sums' mean extents */
    int rc = outer_on(e) ? outer_grids(e, in, diag) : TESSEL_OK;
    if (rc || !actions_on(e))
        return rc;
    boundary bd;
    memset(&bd, 0, sizeof(bd));
    bd.b = e->nlev - 1;
    stat_grid g[2];
    int own[2] = { 0, 0 };
    memset(g, 0, sizeof(g));
    rc = exact_geometry(e, &bd);
    for (unsigned i = 0; !rc && i < 2; i++)
        rc = inner_grid(e, in[i], i, &bd, &g[i], &own[i], diag);
    if (!rc)
        rc = inner_sums(e, &bd, &g[0], &g[1]);
    for (unsigned i = 0; i < 2; i++)
        if (own[i])
            stat_grid_free(e->alloc, &g[i]);
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_oom(diag, NULL, "summing the compute's scalar traversals", 0);
    return rc;
}

/* Rule 4 before the estimate (docs/semantics.md rule 4, issue 20): which tiles of
 * a fixed mapping overflow their partitions, from one pass over each input
 * per level, without the estimate's walk. Inputs: every non-empty tile's
 * bytes in the level's format, exact (the same tile grids and byte counts
 * as the exact estimator). Outputs of SpMSpM/SpMV: an upper bound of a
 * final output tile's nonzeros (partial tiles are never larger, rule 2),
 * from row and column products:
 *   Z(I,J) <= min( sum_{i in I} min(|J|, U_i), sum_{j in J} min(|I|, V_j), |I||J| )
 * with U_i = sum_{k in A(i,:)} nnz(B(k,:)) and V_j = sum_{k in B(:,j)} nnz(A(:,k)),
 * so the worst output tile is bounded by min(max_I R_I, max_J C_J, cells).
 * An input that overflows "overflows"; an output whose bound overflows
 * only "may overflow" (the estimate decides). */
#include <string.h>

#include "exact_internal.h"

/* The tile coordinates of grid g's non-empty tile t, per mode. */
static void grid_coords(const tessel_tile_grid *g, uint64_t t, uint64_t *c)
{
    uint64_t key = tessel_tile_grid_key(g, t);
    for (unsigned m = g->order; m-- > 1;) {
        c[m] = key % g->extent[m];
        key /= g->extent[m];
    }
    c[0] = tessel_tile_grid_group(g, t);
}

static tessel_overflow_check *add_check(tessel_feasibility *f, unsigned b, unsigned t)
{
    tessel_overflow_check *c = &f->item[f->n++];
    memset(c, 0, sizeof(*c));
    c->level = b;
    c->tensor = t;
    return c;
}

static void set_worst_tile(const engine *e, const boundary *bd, const operand *o,
                           const uint64_t *coord, tessel_overflow_check *c)
{
    c->order = o->order;
    for (unsigned m = 0; m < o->order; m++) {
        unsigned x = o->x[m];
        c->index[m] = e->spec_index[x];
        c->first[m] = coord[m] * bd->tile[x];
        uint64_t end = c->first[m] + bd->tile[x];
        c->last[m] = (end < e->extent[x] ? end : e->extent[x]) - 1;
    }
}

/* Input i at boundary bd: every non-empty tile against the partition. */
static void check_input(const engine *e, const boundary *bd, unsigned i, tessel_feasibility *f)
{
    const operand *o = &e->in[i];
    const tessel_tile_grid *g = bd->grid[i];
    uint64_t part = exact_partition_bytes(e, bd->b, o->spec_tensor);
    if (!part || !g->nonempty)
        return;
    uint64_t worst = 0, worst_t = 0, over = 0;
    for (uint64_t t = 0; t < g->nonempty; t++) {
        uint64_t data, meta;
        const uint64_t *occ = bd->occ[i] ? &bd->occ[i][t * bd->occ_stride[i]] : NULL;
        exact_tile_bytes(&bd->cost[i], tessel_tile_grid_count(g, t), occ, &data, &meta);
        if (data + meta > part)
            over++;
        if (data + meta > worst) {
            worst = data + meta;
            worst_t = t;
        }
    }
    if (!over)
        return;
    tessel_overflow_check *c = add_check(f, bd->b, o->spec_tensor);
    c->certain = 1;
    c->partition_bytes = part;
    c->worst_tile_bytes = worst;
    c->overflow_tiles = over;
    c->tiles = g->nonempty;
    uint64_t coord[3];
    grid_coords(g, worst_t, coord);
    set_worst_tile(e, bd, o, coord, c);
}

/* Per value of the output's first index (rows, side 0) or last index
 * (columns, side 1): the product bound U_i or V_j, capped at the other
 * extent. ext is that other extent. */
static int product_bounds(engine *e, int side, uint64_t **out)
{
    const tessel_tensor *A = e->in[0].t, *B = e->in[1].t;
    uint64_t ni = A->dims[0], nk = A->dims[1], nj = B->dims[1];
    uint64_t n = side ? nj : ni, cap = side ? ni : nj;
    uint64_t *bound = tessel_alloc_array(e->alloc, n ? n : 1, sizeof(uint64_t));
    uint64_t *per_k = tessel_alloc_array(e->alloc, nk ? nk : 1, sizeof(uint64_t));
    if (!bound || !per_k) {
        tessel_dealloc(e->alloc, bound);
        tessel_dealloc(e->alloc, per_k);
        return exact_oom_step(e, "bounding the output's tile sizes",
                              ((n ? n : 1) + (nk ? nk : 1)) * sizeof(uint64_t));
    }
    memset(bound, 0, (n ? n : 1) * sizeof(uint64_t));
    memset(per_k, 0, (nk ? nk : 1) * sizeof(uint64_t));
    if (!side) {
        for (uint64_t k = 0; k < nk; k++)
            per_k[k] = B->ptr[k + 1] - B->ptr[k];
        for (uint64_t i = 0; i < ni; i++)
            for (uint64_t p = A->ptr[i]; p < A->ptr[i + 1]; p++)
                bound[i] += per_k[A->idx[1][p]];
    } else {
        for (uint64_t p = 0; p < A->nnz; p++)
            per_k[A->idx[1][p]]++;
        for (uint64_t k = 0; k < nk; k++)
            for (uint64_t p = B->ptr[k]; p < B->ptr[k + 1]; p++)
                bound[B->idx[1][p]] += per_k[k];
    }
    for (uint64_t v = 0; v < n; v++)
        if (bound[v] > cap)
            bound[v] = cap;
    tessel_dealloc(e->alloc, per_k);
    *out = bound;
    return TESSEL_OK;
}

/* The largest sum over one tile's span of min(edge, bound[v]); its tile in *at. */
static uint64_t worst_span(const uint64_t *bound, uint64_t n, uint64_t tile, uint64_t edge,
                           uint64_t *at)
{
    uint64_t worst = 0, sum = 0;
    *at = 0;
    for (uint64_t v = 0; v < n; v++) {
        sum += bound[v] < edge ? bound[v] : edge;
        if ((v + 1) % tile == 0 || v + 1 == n) {
            if (sum > worst) {
                worst = sum;
                *at = v / tile;
            }
            sum = 0;
        }
    }
    return worst;
}

/* The output of SpMSpM/SpMV at boundary bd against its partition, from
 * the row and column product bounds (rows[], cols[]). */
static void check_output(const engine *e, const boundary *bd, const uint64_t *rows,
                         const uint64_t *cols, tessel_feasibility *f)
{
    uint64_t part = exact_partition_bytes(e, bd->b, 0);
    if (!part)
        return;
    uint64_t ti = bd->tile[0], tj = bd->tile[1], at[2];
    uint64_t r = worst_span(rows, e->extent[0], ti, tj, &at[0]);
    uint64_t c = worst_span(cols, e->extent[1], tj, ti, &at[1]);
    uint64_t nnz = r < c ? r : c;
    if ((double)ti * (double)tj < (double)nnz)
        nnz = ti * tj;
    uint64_t occ[1] = { nnz < ti ? nnz : ti }, data, meta;
    /* tiled-csf: no counts, every nonzero alone (exact_tile_bytes) */
    exact_tile_bytes(&bd->out_cost, nnz, bd->out_cost.tiled ? NULL : occ, &data, &meta);
    if (data + meta <= part)
        return;
    tessel_overflow_check *ck = add_check(f, bd->b, 0);
    ck->certain = 0;
    ck->partition_bytes = part;
    ck->worst_tile_bytes = data + meta;
    ck->tiles = 0; /* a bound: how many overflow is the estimate's to say */
    set_worst_tile(e, bd, &e->out, at, ck);
}

static int check_boundary(engine *e, unsigned b, const uint64_t *rows, const uint64_t *cols,
                          tessel_feasibility *f)
{
    boundary bd;
    int rc = exact_boundary_prepare(e, b, &bd);
    for (unsigned i = 0; !rc && i < e->nin; i++)
        check_input(e, &bd, i, f);
    if (!rc && rows) {
        rc = exact_tile_cost_init(e, &bd, &e->out, &bd.out_cost);
        if (!rc)
            check_output(e, &bd, rows, cols, f);
    }
    exact_boundary_free(e, &bd);
    return rc;
}

int tessel_model_feasibility(const tessel_spec *spec, const tessel_workload_data *data,
                             const tessel_allocator *a, tessel_feasibility *out,
                             tessel_diag *diag)
{
    double start = model_now();
    memset(out, 0, sizeof(*out));
    if (spec->nlevels < 2)
        return TESSEL_OK;
    engine e;
    memset(&e, 0, sizeof(e));
    e.spec = spec;
    e.alloc = a;
    e.diag = diag;
    e.nlev = spec->nlevels;
    uint64_t *rows = NULL, *cols = NULL;
    int rc = exact_setup_roles(&e, data);
    int bounded = e.nin == 2 && e.out.order == 2 &&
                  (e.kind == TESSEL_WORKLOAD_SPMSPM || e.kind == TESSEL_WORKLOAD_SPMV);
    if (!rc && bounded)
        rc = product_bounds(&e, 0, &rows);
    if (!rc && bounded)
        rc = product_bounds(&e, 1, &cols);
    out->output_unchecked = !rc && !bounded;
    for (unsigned b = 1; !rc && b < spec->nlevels; b++)
        rc = check_boundary(&e, b, rows, cols, out);
    tessel_dealloc(a, rows);
    tessel_dealloc(a, cols);
    exact_engine_free(&e);
    out->seconds = model_now() - start;
    return rc;
}

/* The stat estimator's general path, for what the closed sums of
 * stat_spmspm.c do not cover: specs with several buffer levels and TTM
 * whose output modes are not adjacent loops. It is the exact estimator's
 * walk (exact_walk.c) run on statistics instead of data:
 *
 *  - the input tile grids of every level are merged from the saved base
 *    grids (tessel_tile_grid_derive), so every level's tiles must be
 *    multiples of the base;
 *  - the output table (per output tile, its partial nonzero count after
 *    each reduction step) is built from the output sample: each sampled
 *    nonzero enters its tile at the reduction step of its first multiply,
 *    with its weight.
 *
 * With every output row in the sample, the result equals the exact
 * estimator's. Cost: the walk over the effectual tile iterations of every
 * level, as the exact estimator, but no pass over the data and no symbolic
 * product. */
#include <math.h>
#include <string.h>

#include "stat_inspill.h"
#include "stat_mttkrp.h"

/* Input grids of boundary bd from the base grids. */
static int walk_grids(engine *e, boundary *bd, const stat_input *const *in, tessel_diag *diag)
{
    for (unsigned i = 0; i < e->nin; i++) {
        const tessel_tile_grid *base = in[i]->grid;
        uint64_t tile[3];
        for (unsigned m = 0; m < e->in[i].order; m++) {
            int rc = stat_derived_edge(e, bd, e->in[i].x[m], base->tile[m], &tile[m], diag);
            if (rc)
                return rc;
        }
        int rc = tessel_tile_grid_derive(base, tile, &bd->grid[i], diag);
        if (!rc)
            rc = exact_index_grid(e, bd, i);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* Level-b tile of sample cell coordinate `cell` (base edge `base`) along
 * engine index x. */
static uint64_t cell_tile(const boundary *bd, uint64_t cell, uint64_t base, unsigned x)
{
    return cell * base / bd->tile[x];
}

/* Adds `weight` nonzeros entering output tile `tile` at reduction step
 * `red`. */
static int add_entry(model_map *cells, const boundary *bd, uint64_t tile, uint64_t red,
                     double weight)
{
    return model_map_add(cells, tile * bd->red_space + red, weight);
}

/* MTTKRP: a nonzero enters at the smallest reduction step among its
 * multiplies' (j, k) cells (final_only: at step 0, for closed sums that
 * read only final tiles), the step as a sum of per-cell terms
 * (stat_mttkrp_red_terms). Engine indices: 0 i, 1 r, 2 j, 3 k. */
static int mttkrp_entries(engine *e, const boundary *bd, const stat_output_sample *s,
                          int final_only, model_map *cells)
{
    uint64_t *gj = NULL, *gk = NULL;
    if (!final_only && stat_mttkrp_red_terms(e, bd, s, &gj, &gk))
        return exact_oom_step(e, "the output sample's reduction steps", 0);
    int rc = TESSEL_OK;
    for (uint64_t n = 0; !rc && n < s->nelems; n++) {
        uint64_t co[NX] = { 0 };
        co[0] = cell_tile(bd, s->ei[n], s->base[0], 0);
        co[1] = cell_tile(bd, s->er[n], s->base[1], 1);
        uint64_t tile = exact_tile_key(bd, &e->out, co), red = final_only ? 0 : UINT64_MAX;
        for (uint64_t m = s->eptr[n]; !final_only && m < s->eptr[n + 1]; m++) {
            uint64_t r = gj ? gj[s->ej[m]] + gk[s->ek[m]] : UINT64_MAX;
            if (!gj) {
                co[2] = cell_tile(bd, s->ej[m], s->base[3], 2);
                co[3] = cell_tile(bd, s->ek[m], s->base[2], 3);
                r = exact_reduction_key(e, bd, co);
            }
            red = r < red ? r : red;
        }
        if (add_entry(cells, bd, tile, red, s->ew[n]))
            rc = exact_oom_step(e, "mapping the output sample to tiles",
                                model_map_grow_bytes(cells));
    }
    tessel_dealloc(e->alloc, gj);
    tessel_dealloc(e->alloc, gk);
    return rc;
}

/* The output table of boundary bd from the sample: (output tile, first
 * reduction step) -> weighted nonzeros, sorted, accumulated per tile.
 * final_only: one entry per tile at step 0, its final count. */
static int sample_table(engine *e, boundary *bd, const stat_output_sample *s, int final_only)
{
    const tessel_allocator *a = e->alloc;
    int ttm = e->kind == TESSEL_WORKLOAD_TTM;
    model_map cells = { .alloc = a };
    if (e->kind == TESSEL_WORKLOAD_MTTKRP && mttkrp_entries(e, bd, s, final_only, &cells)) {
        model_map_free(&cells);
        return TESSEL_ENOMEM;
    }
    for (uint64_t c = 0; c < s->ncells; c++) {
        uint64_t co[NX] = { 0 };
        co[0] = cell_tile(bd, s->ci[c], s->base[0], 0);
        if (ttm) {
            co[1] = cell_tile(bd, s->cx[c], s->base[3], 1);
            co[2] = cell_tile(bd, s->cj[c], s->base[1], 2);
            co[3] = cell_tile(bd, s->ck[c], s->base[2], 3);
        } else {
            co[1] = cell_tile(bd, s->cj[c], s->base[1], 1);
            co[2] = cell_tile(bd, s->ck[c], s->base[2], 2);
        }
        if (add_entry(&cells, bd, exact_tile_key(bd, &e->out, co),
                      final_only ? 0 : exact_reduction_key(e, bd, co), s->weight[c])) {
            uint64_t bytes = model_map_grow_bytes(&cells);
            model_map_free(&cells);
            return exact_oom_step(e, "mapping the output sample to tiles", bytes);
        }
    }
    uint64_t n = cells.n, max = 0, m = 0;
    uint64_t *keys = tessel_alloc_array(a, n + 1, sizeof(uint64_t));
    out_table *t = &bd->table[0];
    t->key = tessel_alloc_array(a, n + 1, sizeof(uint64_t));
    t->start = tessel_alloc_array(a, n + 2, sizeof(uint64_t));
    t->red = tessel_alloc_array(a, n + 1, sizeof(uint64_t));
    t->cum = tessel_alloc_array(a, n + 1, sizeof(uint64_t));
    if (!keys || !t->key || !t->start || !t->red || !t->cum) {
        tessel_dealloc(a, keys);
        model_map_free(&cells);
        return exact_oom_step(e, "ordering the output sample's tiles", (5 * n + 6) * sizeof(uint64_t));
    }
    for (uint64_t slot = 0; slot < cells.cap; slot++)
        if (cells.keys[slot] != UINT64_MAX) {
            keys[m++] = cells.keys[slot];
            max = cells.keys[slot] > max ? cells.keys[slot] : max;
        }
    tessel_sort_u64_inplace(keys, m, max);
    double sum = 0;
    for (uint64_t i = 0; i < m; i++) {
        uint64_t tile = keys[i] / bd->red_space;
        if (!t->nout || t->key[t->nout - 1] != tile) {
            t->key[t->nout] = tile;
            t->start[t->nout++] = i;
            sum = 0;
        }
        sum += model_map_weight(&cells, keys[i]);
        t->red[i] = keys[i] % bd->red_space;
        t->cum[i] = model_count(sum);
    }
    t->start[t->nout] = m;
    t->nent = m;
    bd->ntables = 1;
    tessel_dealloc(a, keys);
    model_map_free(&cells);
    return TESSEL_OK;
}

static int walk_boundary(engine *e, unsigned b, const stat_input *const *in,
                         const stat_output_sample *s, tessel_diag *diag)
{
    boundary bd;
    memset(&bd, 0, sizeof(bd));
    bd.b = b;
    int rc = exact_geometry(e, &bd);
    if (!rc)
        rc = walk_grids(e, &bd, in, diag);
    for (unsigned i = 0; !rc && i < e->nin; i++)
        rc = exact_tile_cost_init(e, &bd, &e->in[i], &bd.cost[i]);
    for (unsigned i = 0; !rc && i < e->nin; i++)
        if (bd.cost[i].tiled) /* its counts come per derived grid (stat_tiledfmt.c) */
            rc = tessel_diag_set(diag, TESSEL_EUNSUPPORTED, e->spec->path, 0, 0, "format",
                                 "level %s: the stat estimator's walk (this workload's loop "
                                 "order) does not price tiled-csf: use -e exact",
                                 e->spec->level[b].name);
    if (!rc)
        rc = exact_tile_cost_init(e, &bd, &e->out, &bd.out_cost);
    /* MTTKRP in closed form (stat_mttkrp.c): with i and r outside j and
     * k its sums read only final output tiles; a spilling output takes the
     * walk, with the full table */
    int closed = !rc && stat_mttkrp_applies(e, &bd);
    int final_only = closed && stat_mttkrp_final_only(e, &bd);
    if (!rc)
        rc = sample_table(e, &bd, s, final_only);
    if (!rc && closed && !stat_mttkrp_fits(e, &bd))
        closed = 0;
    if (!rc && final_only && !closed) { /* the walk needs every first step */
        exact_table_free(e->alloc, &bd.table[0]);
        memset(&bd.table[0], 0, sizeof(bd.table[0]));
        bd.ntables = 0;
        rc = sample_table(e, &bd, s, 0);
    }
    if (!rc && closed) {
        rc = stat_mttkrp_sums(e, &bd);
    } else if (!rc) {
        e->res->stat_walked = 1;
        rc = exact_walk_boundary(e, &bd);
    }
    if (!rc) {
        exact_algorithmic_counts(e, &bd);
        if (b == 1) {
            exact_compulsory(e, &bd);
            const out_table *t = &bd.table[0];
            e->res->output_nnz = 0;
            for (uint64_t o = 0; o < t->nout; o++)
                e->res->output_nnz += t->cum[t->start[o + 1] - 1];
        }
    }
    exact_boundary_free(e, &bd);
    return rc;
}

int stat_walk_evaluate(engine *e, const stat_input *const *in, const stat_output_sample *s,
                       double flops, tessel_diag *diag)
{
    if (!s)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, e->spec->path, 0, 0, NULL,
                               "this spec needs the stat estimator's walk, which prices the "
                               "output from the output sample; --output-sample 0 leaves none");
    int rc = TESSEL_OK, inspill = e->inspill;
    exact_outer_setup(e); /* action_optimization above the innermost level */
    /* rule 4 per read of the compute (SpMSpM, SpMV): the walk records the
     * innermost level's overbooked tiles (exact_ob_note), stat_inspill.c
     * estimates their reads from the statistics, as exact.c counts them */
    e->inspill = e->kind == TESSEL_WORKLOAD_SPMSPM || e->kind == TESSEL_WORKLOAD_SPMV;
    for (unsigned b = 1; !rc && b < e->spec->nlevels; b++) {
        int last = b + 1 == e->spec->nlevels;
        rc = walk_boundary(e, b, in, s, diag);
        if (!rc && last && stat_inspill_on(e, b))
            rc = stat_inspill_count(e, b, in, NULL);
        if (!rc && b >= 2)
            exact_ob_settle(e, b - 1); /* rule 4 per child read, as exact.c */
        if (!rc && last && stat_inspill_on(e, b))
            exact_ob_settle(e, b);
    }
    e->inspill = inspill; /* settled here: the caller's charge stays its own */
    if (!rc)
        e->res->macs = model_count(flops);
    return rc;
}

/* The statistical estimator (d2t2 section 5): collects, per input matrix,
 * the base tile grid, the D2T2 statistics and the nonzeros per row and
 * column, then estimates one design point from those alone
 * (src/model/stat_spmspm.c; nested buffer levels: stat_nested.c).
 * Supports SpMSpM, SpMV and TTM at any number of buffer levels, default
 * skipping, the single-name formats and the per-rank lists affine in a
 * tile's nonzeros (stat_ranks.c). With a tessel_stat_cache, points of one tile shape
 * share a summary (src/model/stat_cache.c) and give the same results. */
#include <math.h>
#include <string.h>

#include "stat_bumped.h"
#include "stat_inspill.h"
#include "stat_internal.h"
#include "stat_nested.h"
#include "stat_tiledfmt.h"

void tessel_stat_options_init(tessel_stat_options *o)
{
    memset(o, 0, sizeof(*o)); /* base 0 x 0: chosen from the spec (stat_auto_base) */
    o->sample_fraction = 0.01;
    o->seed = 1;
    o->output_fraction = 0;
    o->output_min_flops = 1u << 19;
    o->output_count_budget = TESSEL_STAT_OUTPUT_COUNT_BUDGET;
    o->output_sample_max = TESSEL_STAT_OUTPUT_SAMPLE_MAX;
}

/* ------------------------------------------------------------------ */
/* Statistics of one input. */

/* ------------------------------------------------------------------ */
/* What the estimator does not model yet, said before any work. */

int stat_check_workload(const tessel_spec *s, tessel_diag *diag)
{
    if (s->workload.kind != TESSEL_WORKLOAD_SPMSPM && s->workload.kind != TESSEL_WORKLOAD_SPMV &&
        s->workload.kind != TESSEL_WORKLOAD_TTM && s->workload.kind != TESSEL_WORKLOAD_MTTKRP)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, s->workload.pos.file,
                               s->workload.pos.line, s->workload.pos.column, "workload.einsum",
                               "the stat estimator handles SpMSpM, SpMV, TTM and MTTKRP; use "
                               "--estimator exact for '%s'",
                               s->workload.einsum ? s->workload.einsum : "");
    return TESSEL_OK;
}

/* Formats: per-rank lists that stat cannot price (stat_ranks.c), and
 * tiled-csf of an output (an input's is priced from the statistics' rows,
 * stat_tiledfmt.c). */
int stat_check_design_levels(const tessel_spec *s, tessel_diag *diag)
{
    for (unsigned l = 1; l < s->nlevels; l++) {
        const tessel_spec_level *lv = &s->level[l];
        for (unsigned t = 0; t < s->workload.ntensors; t++) {
            const tessel_spec_tensor_level *tl = &lv->tensor[t];
            int f = tl->format >= 0 ? tl->format : lv->format;
            if (f == TESSEL_SPEC_FORMAT_RANKS) {
                int rc = stat_ranks_check(s, l, t, diag);
                if (rc)
                    return rc;
            }
            if (f == TESSEL_SPEC_FORMAT_TILED_CSF && t == 0)
                return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, lv->pos.file, lv->pos.line,
                                       lv->pos.column, "format",
                                       "level %s: the stat estimator does not price tiled-csf "
                                       "for the output %s: its inner tiles and row segments per "
                                       "tile are counted from the output's data (-e exact), and "
                                       "stat has only estimates of the output's nonzeros per "
                                       "tile, not of their rows; use -e exact",
                                       lv->name, s->workload.tensor[t].name);
        }
    }
    /* scalar and compute actions: the closed path from the tile grids
     * (stat_actions.c), the walk's points by the walk (exact_walk.c);
     * refused under bypass and for a strict subset of three inputs */
    return model_scalar_outer_refuse(s, diag, NULL);
}

/* TTM's unfolding at every buffer level: at each level the output's two
 * modes of T (engine indices 0 and 1) are adjacent loops, or one of them
 * has no loop there; and, past one level, no scalar skipping or gating
 * nor compute_optimization (model_scalar_sums prices TTM's at one level
 * only). */
static int ttm_unfolds(const engine *e)
{
    const tessel_spec *s = e->spec;
    if (s->nlevels > 2 && s->compute.optimization)
        return 0; /* the compute's actions: the walk's, from the grids */
    for (unsigned l = 0; s->nlevels > 2 && l < s->nlevels; l++)
        for (unsigned i = 0; i < e->nin; i++)
            if (s->level[l].tensor[e->in[i].spec_tensor].sparse.scalar_skip_on |
                s->level[l].tensor[e->in[i].spec_tensor].sparse.scalar_gate_on)
                return 0;
    unsigned from = 0;
    for (unsigned l = 1; l < s->nlevels; l++) {
        boundary bd;
        memset(&bd, 0, sizeof(bd));
        bd.b = l;
        if (exact_geometry((engine *)e, &bd))
            return 1; /* the closed path reports the error */
        int pi = -1, px = -1;
        for (unsigned d = from; d < bd.ndigits; d++) {
            if (bd.d[d].x == 0)
                pi = (int)d;
            if (bd.d[d].x == 1)
                px = (int)d;
        }
        if (pi >= 0 && px >= 0 && pi - px != 1 && px - pi != 1)
            return 0;
        from = bd.ndigits;
    }
    return 1;
}

int stat_input_mode(const engine *e, unsigned b, unsigned i)
{
    const tessel_spec_tensor_level *tl = &e->spec->level[b].tensor[e->in[i].spec_tensor];
    uint32_t partners = 0;
    for (unsigned p = 0; p < e->nin; p++)
        if (p != i)
            partners |= 1u << e->in[p].spec_tensor;
    if ((tl->sparse.skip_on & partners) == partners)
        return STAT_MODE_SKIP;
    return tl->sparse.gate_on & partners & ~tl->sparse.skip_on ? STAT_MODE_GATE : STAT_MODE_READ;
}

int stat_any_unskipped(const engine *e)
{
    for (unsigned l = 1; l < e->spec->nlevels; l++)
        for (unsigned i = 0; i < e->nin; i++)
            if (stat_input_mode(e, l, i) != STAT_MODE_SKIP)
                return 1;
    return 0;
}

/* Whether some tensor at some level has a scalar skip or gate. */
static int any_scalar_action(const tessel_spec *s)
{
    for (unsigned l = 0; l < s->nlevels; l++)
        for (unsigned t = 0; t < s->workload.ntensors; t++)
            if (s->level[l].tensor[t].sparse.scalar_skip_on |
                s->level[l].tensor[t].sparse.scalar_gate_on)
                return 1;
    return 0;
}

/* The closed sums of stat_spmspm.c cover one buffer level with default
 * skipping, and TTM with its output's two modes as adjacent loops;
 * stat_nested.c adds the nested levels of SpMSpM and SpMV (with the
 * same skipping at every level), and of TTM where its modes are adjacent
 * at every level (stat_nested_ttm.c). Inputs that read or gate their
 * tiles where the partner's is empty: closed without scalar or compute
 * actions at one buffer level of SpMSpM and SpMV (stat_spmspm.c) and at
 * nested levels of both (stat_nested_gated.c, with rule 4 per read of an
 * overbooked tile through stat_bumped.c as at one level). Everything else
 * takes the walk (stat_walk.c). */
int stat_closed_sums_apply(const engine *e)
{
    const tessel_spec *s = e->spec;
    if (s->nlevels < 2 || e->kind == TESSEL_WORKLOAD_MTTKRP)
        return 0;
    /* outer actions: closed at the backing store of one buffer level of
     * SpMSpM and SpMV (stat_actions.c), else the walk's dense schedule */
    int closed_outer = s->nlevels == 2 && e->kind != TESSEL_WORKLOAD_TTM;
    for (unsigned l = 0; !closed_outer && l + 1 < s->nlevels; l++)
        for (unsigned i = 0; i < e->nin; i++)
            if (s->level[l].tensor[e->in[i].spec_tensor].sparse.scalar_skip_on |
                s->level[l].tensor[e->in[i].spec_tensor].sparse.scalar_gate_on)
                return 0;
    if (stat_any_unskipped(e)) /* one level: stat_spmspm.c; nested: stat_nested_gated.c */
        return (closed_outer || e->kind != TESSEL_WORKLOAD_TTM) && !s->compute.optimization &&
               !any_scalar_action(s);
    return e->kind != TESSEL_WORKLOAD_TTM || ttm_unfolds(e);
}

/* ------------------------------------------------------------------ */
/* The boundary's tile grids, derived from the base grids. */

/* A tile edge the base grid can be merged into: a multiple of the base
 * edge, or the whole mode (rounded up to a multiple). Otherwise the error
 * names the largest base that would work: rows of both operands divide
 * base[0], columns base[1]. */
int stat_derived_edge(const engine *e, const boundary *bd, unsigned x, uint64_t base,
                        uint64_t *edge, tessel_diag *diag)
{
    uint64_t extent = e->extent[x], tile = bd->tile[x];
    if (tile >= extent) {
        *edge = (extent + base - 1) / base * base;
        if (*edge == 0)
            *edge = base;
        return TESSEL_OK;
    }
    if (tile % base == 0) {
        *edge = tile;
        return TESSEL_OK;
    }
    /* the row base divides every operand's leading modes (a 3-tensor's
     * first two), the column base its last one */
    uint64_t edges[2] = { base, base };
    for (unsigned l = 1; l < e->spec->nlevels; l++)
        for (unsigned i = 0; i < e->nin; i++)
            for (unsigned m = 0; m < e->in[i].order; m++) {
                unsigned which = m + 1 == e->in[i].order ? 1 : 0;
                edges[which] = tessel_gcd(edges[which], exact_level_tile(e, l, e->in[i].x[m]));
            }
    uint64_t rows = edges[0], cols = edges[1];
    const tessel_spec_level *lv = &e->spec->level[bd->b];
    return tessel_diag_set(diag, TESSEL_EINVAL, lv->pos.file, lv->pos.line, lv->pos.column,
                           "mapping",
                           "level %s: tile %s:%llu is not a multiple of the stat estimator's "
                           "base grid (%llu); run with --base %llux%llu or choose tiles that "
                           "are multiples",
                           lv->name, e->spec->workload.index_name[e->spec_index[x]],
                           (unsigned long long)tile, (unsigned long long)base,
                           (unsigned long long)rows, (unsigned long long)cols);
}

int stat_derive_grid(const engine *e, const stat_input *in, unsigned i, const boundary *bd,
                     const tessel_allocator *a, stat_grid *out, uint64_t *tile, tessel_diag *diag)
{
    for (unsigned m = 0; m < 2; m++) {
        unsigned x = e->in[i].x[m];
        int rc = stat_derived_edge(e, bd, x, in->grid->tile[m], &tile[m], diag);
        if (rc)
            return rc;
    }
    uint64_t f0 = tile[0] / in->grid->tile[0];
    int rc = stat_grid_coarsen(in->base, f0, tile[1] / in->grid->tile[1], a, out);
    if (rc) /* at most the base grid's tiles, in fewer rows */
        return tessel_diag_oom(diag, NULL, "coarsening an input's tile grid",
                               (size_t)stat_grid_bytes((in->base->rows + f0 - 1) / f0, in->base->n));
    /* the tiles' rows, when the format's price reads them */
    rc = stat_tiledfmt_attach(e, in, i, bd, tile, a, out, diag);
    if (rc)
        stat_grid_free(a, out);
    return rc;
}

/* Position of engine index x in level 1's loop order; a whole-extent
 * index (no loop) counts as outermost. */
int stat_loop_position(const boundary *bd, unsigned x)
{
    for (unsigned d = 0; d < bd->ndigits; d++)
        if (bd->d[d].x == x)
            return (int)d;
    return -1;
}

/* Mean number of multiplies that meet on one output nonzero inside a
 * reduction tile: 1 + sum over shifts s of P(A[i,k+s] | A[i,k]) *
 * P(B[k+s,j] | B[k,j]) in both directions (Corrs, eq. 11; eq. 20's
 * divisor). */
static double multiplicity(const stat_input *a, const stat_input *b, uint64_t tk)
{
    if (!a->d2t2 || !b->d2t2)
        return 1; /* no Corrs for 3-tensors */
    const double *ca = a->d2t2->corrs[1], *cb = b->d2t2->corrs[0];
    uint64_t n = a->d2t2->ncorrs[1] < b->d2t2->ncorrs[0] ? a->d2t2->ncorrs[1]
                                                         : b->d2t2->ncorrs[0];
    if (n > tk)
        n = tk;
    double sum = 1;
    for (uint64_t s = 1; s < n; s++)
        sum += 2 * ca[s] * cb[s];
    return sum;
}

double stat_flops_of(const stat_input *a, const stat_input *b)
{
    double f = 0;
    for (uint64_t k = 0; k < a->dims[1] && k < b->dims[0]; k++)
        f += (double)a->line_nnz[1][k] * (double)b->line_nnz[0][k];
    return f;
}

void stat_store_fills(tessel_traffic *tr, const stat_counts *c)
{
    tr->fills = model_count(c->fills);
    tr->in_data = model_count(c->fill_data + c->bumped_data);
    tr->in_metadata = model_count(c->fill_meta + c->bumped_meta);
    tr->bumped_bytes = model_count(c->bumped_data + c->bumped_meta);
}

void stat_store_input(tessel_traffic *tr, const stat_counts *c)
{
    stat_store_fills(tr, c);
    tr->overflow_tiles = model_count(c->overflow_fills);
    tr->overflow_bytes = tr->bumped_bytes;
    tr->worst_tile_bytes = model_count(c->worst);
    tr->gated = model_count(c->gated);
}

/* The canonical loop order of level 1 after mirroring (i before j):
 * where k sits. A whole-extent index has no loop and counts as
 * outermost; two such indices can be swapped freely. */
static void canonical_order(int p_i, int p_j, int p_k, char *order)
{
    if (p_k > p_j)
        memcpy(order, "IJK", 4);
    else if (p_k > p_i)
        memcpy(order, "IKJ", 4);
    else
        memcpy(order, "KIJ", 4);
}

/* The output side made of T's two kept modes (TTM), as one index: its
 * loop position, and whether x's tiles are the major digit. The two must
 * be adjacent loops (or one of them a whole mode). */
static int unfolded_side(const engine *e, const boundary *bd, int *pos, int *x_major,
                         tessel_diag *diag)
{
    int pi = stat_loop_position(bd, 0), px = stat_loop_position(bd, 1);
    *x_major = px >= 0 && (pi < 0 || px < pi);
    *pos = pi < 0 ? px : px < 0 ? pi : (pi < px ? pi : px);
    if (pi >= 0 && px >= 0 && (pi - px == 1 || px - pi == 1))
        return TESSEL_OK;
    if (pi < 0 || px < 0)
        return TESSEL_OK;
    const tessel_spec_level *lv = &e->spec->level[1];
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, lv->pos.file, lv->pos.line, lv->pos.column,
                           "mapping",
                           "level %s: the stat estimator takes TTM with the output's two modes "
                           "%s and %s as adjacent loops (use --estimator exact)",
                           lv->name, e->spec->workload.index_name[e->spec_index[0]],
                           e->spec->workload.index_name[e->spec_index[1]]);
}

/* T's grid at the level's shape, unfolded to (i, x) tile rows against k. */
static int derive_unfolded(const engine *e, const stat_input *in, const boundary *bd, int x_major,
                           const tessel_allocator *a, stat_grid *out, uint64_t *tile,
                           tessel_diag *diag)
{
    for (unsigned m = 0; m < 3; m++) {
        int rc = stat_derived_edge(e, bd, e->in[0].x[m], in->grid->tile[m], &tile[m], diag);
        if (rc)
            return rc;
    }
    const uint64_t *b = in->grid->tile;
    int rc = stat_grid_coarsen_unfolded(in->base, in->grid->extent[0], in->grid->extent[1],
                                        tile[0] / b[0], tile[1] / b[1], tile[2] / b[2], x_major, a,
                                        out);
    if (rc)
        return tessel_diag_oom(diag, NULL, "coarsening a 3-tensor's tile grid",
                               (size_t)stat_grid_bytes(in->base->rows, in->base->n));
    return TESSEL_OK;
}

static int grids_spmspm(engine *e, const stat_input *in[2], const boundary *bd,
                        const stat_output_sample *sample, const tessel_allocator *a,
                        boundary_grids *g, stat_problem *p, tessel_diag *diag)
{
    /* tile edges as the grids see them: whole modes rounded up to base
     * multiples (A: i, k; B: k, j) */
    uint64_t ea[2] = { 0, 0 }, eb[2] = { 0, 0 };
    int rc = stat_derive_grid(e, in[0], 0, bd, a, &g->ga, ea, diag);
    if (!rc)
        rc = stat_derive_grid(e, in[1], 1, bd, a, &g->gb, eb, diag);
    if (rc)
        return rc;
    g->pos_row = stat_loop_position(bd, 0);
    g->pos_col = stat_loop_position(bd, 1);
    g->pos_k = stat_loop_position(bd, 2);
    p->out_cells = bd->tile[0] * bd->tile[1];
    p->tk = ea[1];
    if (e->kind == TESSEL_WORKLOAD_SPMSPM && e->in[0].x[1] == e->red[0] &&
        e->in[1].x[0] == e->red[0]) { /* the in-visit steps' lines (stat_outspill.c) */
        p->src[0] = in[0];
        p->src[1] = in[1];
        memcpy(p->src_edge[0], ea, sizeof(ea));
        memcpy(p->src_edge[1], eb, sizeof(eb));
    }
    if (sample) {
        p->f_i = ea[0] / sample->base[0];
        p->f_j = eb[1] / sample->base[1];
        p->f_k = ea[1] / sample->base[2];
    }
    return TESSEL_OK;
}

/* TTM Y[i,x,r] = T[i,x,k] M[k,r] as the SpMSpM of T unfolded to (i, x)
 * rows: engine indices 0 = i, 1 = x, 2 = r, 3 = k. */
static int grids_ttm(engine *e, const stat_input *in[2], const boundary *bd,
                     const stat_output_sample *sample, const tessel_allocator *a,
                     boundary_grids *g, stat_problem *p, tessel_diag *diag)
{
    int x_major;
    int rc = unfolded_side(e, bd, &g->pos_row, &x_major, diag);
    uint64_t et[3] = { 0, 0, 0 }, em[2] = { 0, 0 };
    if (!rc)
        rc = derive_unfolded(e, in[0], bd, x_major, a, &g->ga, et, diag);
    if (!rc)
        rc = stat_derive_grid(e, in[1], 1, bd, a, &g->gb, em, diag);
    if (rc)
        return rc;
    g->pos_col = stat_loop_position(bd, 2);
    g->pos_k = stat_loop_position(bd, 3);
    p->out_cells = bd->tile[0] * bd->tile[1] * bd->tile[2];
    p->tk = et[2];
    if (sample) {
        p->unfolded = 1;
        p->x_major = x_major;
        p->f_i = et[0] / sample->base[0];
        p->f_x = et[1] / sample->base[3];
        p->f_j = em[1] / sample->base[1];
        p->f_k = et[2] / sample->base[2];
        p->i_tiles = (in[0]->grid->extent[0] + et[0] / in[0]->grid->tile[0] - 1) /
                     (et[0] / in[0]->grid->tile[0]);
        p->x_tiles = (in[0]->grid->extent[1] + et[1] / in[0]->grid->tile[1] - 1) /
                     (et[1] / in[0]->grid->tile[1]);
    }
    return TESSEL_OK;
}

void stat_store_outcome(engine *e, const stat_problem *p, const stat_outcome *o, unsigned t_a,
                        unsigned t_b)
{
    tessel_result *r = e->res;
    stat_store_input(&r->traffic[1][t_a], &o->a);
    stat_store_input(&r->traffic[1][t_b], &o->b);
    tessel_traffic *tz = &r->traffic[1][0];
    tz->writebacks = model_count(o->z_writebacks);
    tz->updates = model_count(o->z_updates);
    tz->out_data = model_count(o->z_out_data);
    tz->out_metadata = model_count(o->z_out_meta);
    tz->in_data = model_count(o->z_in_data);
    tz->in_metadata = model_count(o->z_in_meta);
    r->overflow_tiles = model_count(o->a.overflow_fills + o->b.overflow_fills);
    /* rule 4 for the output: the spill moves out and back in */
    tz->bumped_bytes = model_count(o->z_spill_data + o->z_spill_meta);
    tz->overflow_bytes = 2 * tz->bumped_bytes;
    tz->overflow_tiles = model_count(o->z_overflow_writebacks);
    tz->worst_tile_bytes = model_count(o->z_worst);
    r->traffic[1][t_a].partition_bytes = exact_partition_bytes(e, 1, t_a);
    r->traffic[1][t_b].partition_bytes = exact_partition_bytes(e, 1, t_b);
    tz->partition_bytes = exact_partition_bytes(e, 1, 0);
    r->effectual_tiles[1] = model_count(o->effectual);
    r->macs = model_count(p->flops);
    r->output_nnz = model_count(o->out_nnz);
    r->compulsory_bytes = model_count(o->compulsory_in + o->compulsory_z);
    /* the MACs read each effectual iteration's operand nonzeros */
    double coord = e->spec->level[1].coord_bits / 8.0; /* 4-bit coordinates are half a byte */
    r->intersections = model_count(o->operand_nnz[0] + o->operand_nnz[1]);
    r->traffic[1][t_a].child_read_metadata = model_count(o->operand_nnz[0] * coord);
    r->traffic[1][t_b].child_read_metadata = model_count(o->operand_nnz[1] * coord);
}

/* Per-tile fills of the inputs that can overbook, when a buffer level
 * below reads them (rule 4 per child read, stat_bumped.c). */
static int keep_tile_fills(stat_problem *p)
{
    const stat_grid *g[2] = { &p->a, &p->b };
    uint64_t part[2] = { p->part_a, p->part_b };
    for (unsigned q = 0; q < 2; q++) {
        p->tile_fills[q] = NULL;
        if ((!p->per_read && !p->compute_reads[q]) || !part[q])
            continue;
        if (!stat_ob_may_overflow(g[q], q ? &p->cost_b : &p->cost_a, part[q]))
            continue; /* every tile fits: stat_ob_level1 would record none */
        p->tile_fills[q] = stat_zeroed(p->alloc, g[q]->n, sizeof(double));
        if (!p->tile_fills[q])
            return TESSEL_ENOMEM;
    }
    return TESSEL_OK;
}

/* Boundary 1 from its grids: canonical roles, the closed sums, the results into e->res. */
int stat_solve(engine *e, const boundary *bd, boundary_grids *g, stat_problem *p, double flops,
               double multiplicity, const stat_output_sample *sample, tessel_diag *diag)
{
    const tessel_allocator *a = p->alloc;
    int rc = exact_tile_cost_init(e, bd, &e->in[0], &p->cost_a);
    if (!rc)
        rc = exact_tile_cost_init(e, bd, &e->in[1], &p->cost_b);
    if (!rc)
        rc = exact_tile_cost_init(e, bd, &e->out, &p->cost_z);
    /* Orders with the output's second side outside its first are the
     * mirror image: Z^T = B^T A^T. */
    int mirror = g->pos_col < g->pos_row;
    unsigned ta = e->in[0].spec_tensor, tb = e->in[1].spec_tensor;
    if (!rc) {
        p->part_a = exact_partition_bytes(e, 1, mirror ? tb : ta);
        p->part_b = exact_partition_bytes(e, 1, mirror ? ta : tb);
        p->part_z = exact_partition_bytes(e, 1, 0);
        p->step_k = stat_step_width(e, 1);
        stat_live_groups(e, bd, mirror, &p->live_i, &p->live_j);
        p->extent_k = e->extent[e->red[0]];
        if (mirror) {
            rc = stat_grid_transpose(&g->gb, a, &p->a);
            if (!rc)
                rc = stat_grid_transpose(&g->ga, a, &p->b);
            tile_cost tmp = p->cost_a;
            p->cost_a = p->cost_b;
            p->cost_b = tmp;
        } else {
            p->a = g->ga;
            p->b = g->gb;
            memset(&g->ga, 0, sizeof(g->ga));
            memset(&g->gb, 0, sizeof(g->gb));
        }
    }
    stat_grid_free(a, &g->ga);
    stat_grid_free(a, &g->gb);
    stat_outcome o;
    if (!rc) {
        p->ext_i = p->a.rows;
        p->ext_k = p->a.cols;
        p->ext_j = p->b.cols;
        canonical_order(mirror ? g->pos_col : g->pos_row, mirror ? g->pos_row : g->pos_col,
                        g->pos_k, p->order);
        p->flops = flops;
        p->multiplicity = multiplicity;
        p->sample = sample;
        p->sample_mirrored = mirror;
        for (unsigned q = 0; q < 2; q++) /* rule 4 per read of the compute */
            p->compute_reads[q] = stat_inspill_on(e, 1) &&
                                  exact_inspill_reads(e, 1, mirror ? 1 - q : q) != EXACT_READS_ONCE;
        rc = keep_tile_fills(p);
    }
    for (unsigned q = 0; !rc && q < 2; q++) /* skip, read or gate (stat_unskipped_inputs) */
        p->mode[q] = stat_input_mode(e, 1, mirror ? 1 - q : q);
    if (!rc)
        rc = stat_spmspm_evaluate(p, &o);
    if (!rc && (p->tile_fills[0] || p->tile_fills[1] || stat_inspill_on(e, 1)))
        rc = stat_ob_level1(e, p, mirror, p->tile_fills);
    if (!rc) {
        stat_store_outcome(e, p, &o, mirror ? tb : ta, mirror ? ta : tb);
        model_scalar_sums(e, bd, mirror ? tb : ta, o.operand_nnz, o.effectual);
        stat_actions_outer_fills(e, bd, &o, mirror);
        e->compute_macs = p->flops;
        exact_algorithmic_counts(e, bd);
    }
    for (unsigned q = 0; q < 2; q++) {
        tessel_dealloc(a, p->tile_fills[q]);
        p->tile_fills[q] = NULL;
    }
    uint64_t held = stat_grid_bytes(p->a.rows, p->a.n) + stat_grid_bytes(p->b.rows, p->b.n);
    stat_grid_free(a, &p->a);
    stat_grid_free(a, &p->b);
    if (rc == TESSEL_ENOMEM) /* the step's own grids; what it asked for beyond them is unknown */
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory while evaluating "
                               "boundary %u's tiles (its grids held %llu bytes)", (unsigned)bd->b,
                               (unsigned long long)held);
    return rc;
}

/* stat_evaluate with the step count's tables from kc (NULL: per point). */
static int evaluate_with(engine *e, const stat_input *in[2], const stat_output_sample *sample,
                         const tessel_allocator *a, stat_ks_cache *kc, tessel_diag *diag)
{
    boundary bd;
    memset(&bd, 0, sizeof(bd));
    bd.b = 1;
    stat_problem p;
    memset(&p, 0, sizeof(p));
    p.alloc = a;
    p.ks_cache = kc;
    p.per_read = e->nlev > 2; /* level 1's child is a buffer level */
    boundary_grids g;
    memset(&g, 0, sizeof(g));
    int rc = exact_geometry(e, &bd);
    if (!rc)
        rc = e->kind == TESSEL_WORKLOAD_TTM ? grids_ttm(e, in, &bd, sample, a, &g, &p, diag)
                                            : grids_spmspm(e, in, &bd, sample, a, &g, &p, diag);
    if (rc) {
        stat_grid_free(a, &g.ga);
        stat_grid_free(a, &g.gb);
        return rc;
    }
    return stat_solve(e, &bd, &g, &p, stat_flops_of(in[0], in[1]),
                      multiplicity(in[0], in[1], p.tk), sample, diag);
}

int stat_evaluate(engine *e, const stat_input *in[2], const stat_output_sample *sample,
                  const tessel_allocator *a, tessel_diag *diag)
{
    return evaluate_with(e, in, sample, a, NULL, diag);
}

/* ------------------------------------------------------------------ */
/* The same point through a cache of per-shape summaries (stat_cache.c). */

/* Input i's tile edges at the boundary, as stat_derive_grid() checks them. */
static int derived_edges(const engine *e, const stat_input *in, unsigned i, const boundary *bd,
                         uint64_t *tile, tessel_diag *diag)
{
    for (unsigned m = 0; m < 2; m++) {
        int rc = stat_derived_edge(e, bd, e->in[i].x[m], in->grid->tile[m], &tile[m], diag);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* The point in canonical roles, as grids_spmspm and stat_solve set it up. */
static int cache_point(engine *e, const stat_input *in[2], const boundary *bd,
                       const stat_output_sample *sample, double flops, stat_cache_point *pt,
                       tessel_diag *diag)
{
    uint64_t ea[2] = { 0, 0 }, eb[2] = { 0, 0 };
    int rc = derived_edges(e, in[0], 0, bd, ea, diag);
    if (!rc)
        rc = derived_edges(e, in[1], 1, bd, eb, diag);
    tile_cost cost[3];
    if (!rc)
        rc = exact_tile_cost_init(e, bd, &e->in[0], &cost[0]);
    if (!rc)
        rc = exact_tile_cost_init(e, bd, &e->in[1], &cost[1]);
    if (!rc)
        rc = exact_tile_cost_init(e, bd, &e->out, &pt->cost_z);
    if (rc)
        return rc;
    int pos_row = stat_loop_position(bd, 0), pos_col = stat_loop_position(bd, 1);
    int mirror = pos_col < pos_row;
    unsigned ta = e->in[0].spec_tensor, tb = e->in[1].spec_tensor;
    pt->mirror = mirror;
    pt->cost_a = cost[mirror ? 1 : 0];
    pt->cost_b = cost[mirror ? 0 : 1];
    pt->part_a = exact_partition_bytes(e, 1, mirror ? tb : ta);
    pt->part_b = exact_partition_bytes(e, 1, mirror ? ta : tb);
    pt->part_z = exact_partition_bytes(e, 1, 0);
    pt->step_k = stat_step_width(e, 1);
    stat_live_groups(e, bd, mirror, &pt->live_i, &pt->live_j);
    pt->extent_k = e->extent[e->red[0]];
    canonical_order(mirror ? pos_col : pos_row, mirror ? pos_row : pos_col,
                    stat_loop_position(bd, 2), pt->order);
    for (unsigned i = 0; i < 2; i++) {
        const uint64_t *edge = i ? eb : ea;
        pt->base[i] = in[i]->base;
        pt->factor[i][0] = edge[0] / in[i]->grid->tile[0];
        pt->factor[i][1] = edge[1] / in[i]->grid->tile[1];
    }
    pt->tk = ea[1];
    pt->out_cells = bd->tile[0] * bd->tile[1];
    pt->sample = sample;
    if (sample) {
        pt->f_i = ea[0] / sample->base[0];
        pt->f_j = eb[1] / sample->base[1];
        pt->f_k = ea[1] / sample->base[2];
    }
    pt->flops = flops;
    pt->multiplicity = multiplicity(in[0], in[1], ea[1]);
    return TESSEL_OK;
}

/* A point the summaries decline is evaluated here without them, with the
 * cache's step-count tables (stat_outspill.c). */
int stat_evaluate_cached(engine *e, const stat_input *in[2], const stat_output_sample *sample,
                         double flops, tessel_stat_cache *cache, tessel_diag *diag)
{
    boundary bd;
    memset(&bd, 0, sizeof(bd));
    bd.b = 1;
    stat_cache_point pt;
    memset(&pt, 0, sizeof(pt));
    int rc = exact_geometry(e, &bd);
    if (!rc)
        rc = cache_point(e, in, &bd, sample, flops, &pt, diag);
    stat_outcome o;
    if (!rc)
        rc = stat_cache_solve(cache, &pt, &o);
    /* declined: the summaries are an optimisation (out of memory), or rule
     * 4 per read needs the tiles (stat_bumped.c, stat_inspill.c): the point
     * without them, the step count's tables still the cache's */
    if (rc == TESSEL_ENOMEM || rc == STAT_CACHE_DECLINED ||
        (!rc && (e->nlev > 2 || stat_inspill_on(e, 1)) &&
         (o.a.overflow_fills > 0 || o.b.overflow_fills > 0)))
        return evaluate_with(e, in, sample, e->alloc, stat_cache_ksteps(cache), diag);
    if (rc)
        return rc;
    stat_problem p;
    memset(&p, 0, sizeof(p));
    p.flops = flops;
    unsigned ta = e->in[0].spec_tensor, tb = e->in[1].spec_tensor;
    stat_store_outcome(e, &p, &o, pt.mirror ? tb : ta, pt.mirror ? ta : tb);
    model_scalar_sums(e, &bd, pt.mirror ? tb : ta, o.operand_nnz, o.effectual);
    stat_actions_outer_fills(e, &bd, &o, pt.mirror);
    e->compute_macs = flops;
    exact_algorithmic_counts(e, &bd);
    return TESSEL_OK;
}


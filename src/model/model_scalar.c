/* Scalar skipping and gating at the compute: a level's `action_optimization`
 * (Sparseloop's `action-optimization` of type skipping / gating with a
 * target and `condition-on`, docs/semantics.md "Scalar skipping and
 * gating"), priced as Sparseloop prices it.
 *
 * The compute walks every point of the loop nest inside an effectual
 * innermost tile iteration and reads each operand there; a compressed
 * operand's zeros are never visited (its format skips them), so input X
 * is traversed once per nonzero of its tile per point of the indices X
 * does not carry (for A[i,k] of SpMSpM: nnz(A tile) x the tile's j
 * extent). Of those reads, the ones whose condition operands are all
 * nonzero are the multiplies (actual reads); the rest are skipped (or
 * gated). Each traversal reads the tile's format once per scalar, so the
 * format bytes read are the traversals' share of the tile's metadata:
 * per tile iteration, meta(T) x the non-carried extent, split between
 * actual and skipped reads in proportion, as Sparseloop splits its
 * "actual" and "skipped scalar format reads". The actual share replaces
 * the intersection's coordinate reads the level is charged otherwise.
 *
 * The output conditions on every input: its reads at the compute are the
 * multiplies' (rule 2), and the dense loop nest's other reads (M·N·K,
 * less M·N for an uncompressed output whose first reduction step reads
 * nothing) are skipped or gated.
 *
 * Compute skipping and gating (architecture.compute.compute_optimization,
 * docs/semantics.md "Compute skipping and gating") classify the points of
 * the loop nest inside the effectual innermost tile iterations as
 * Sparseloop v3.0.3 classifies its computes: each operand is, at a point,
 * nonzero (ENZ), a stored zero (EZ: an uncompressed operand) or absent
 * (NE: a compressed operand's zero). An operand whose reads skip or gate
 * on the other (action_optimization) sends nothing where the other is
 * zero, so the point does not exist for the compute. Of the rest, all
 * ENZ is an effectual multiply; all NE does not exist; some NE is skipped
 * (skipping), else gated (gating), else runs (a bubble, an actual
 * compute); some EZ and no NE is gated (gating), else runs. */
#include <math.h>

#include "exact_internal.h"

void model_scalar_split(tessel_traffic *tr, const tessel_spec_sparse *sp, double traversed,
                        double format_bytes, double actual)
{
    double rest = traversed > actual ? traversed - actual : 0;
    double share = traversed > 0 ? rest / traversed : 0;
    double skipped_meta = format_bytes * share;
    int skip = sp->scalar_skip_on != 0;
    if (skip) {
        tr->skipped_reads = model_count(rest);
        tr->skipped_metadata_bytes = model_count(skipped_meta);
    } else {
        tr->gated_reads = model_count(rest);
        tr->gated_metadata_bytes = model_count(skipped_meta);
    }
    tr->child_read_metadata = model_count(format_bytes - skipped_meta);
}

void model_scalar_output(tessel_traffic *tz, const tessel_spec_sparse *sp, double dense_reads)
{
    double rest = dense_reads > (double)tz->reads ? dense_reads - (double)tz->reads : 0;
    if (sp->scalar_skip_on)
        tz->skipped_reads = model_count(rest);
    else
        tz->gated_reads = model_count(rest);
}

int exact_scalar_on(const engine *e, unsigned i)
{
    const tessel_spec_sparse *sp = &e->spec->level[e->nlev - 1].tensor[e->in[i].spec_tensor].sparse;
    return (sp->scalar_skip_on | sp->scalar_gate_on) != 0;
}

/* The points of the innermost tile at coordinates c along the indices
 * operand o does not carry (an edge clipped at the extent); o NULL: along
 * every index (the tile's dense points). */
static double other_points(const engine *e, const operand *o, const uint64_t *c)
{
    unsigned L = e->nlev - 1;
    double n = 1;
    for (unsigned x = 0; x < e->nx; x++) {
        int carried = e->spec_index[x] < 0; /* SpMV's unit index has no loop */
        for (unsigned m = 0; o && m < o->order; m++)
            carried |= o->x[m] == x;
        if (carried)
            continue;
        uint64_t edge = exact_level_edge(e, L, x), lo = c[x] * edge;
        uint64_t hi = lo + edge < e->extent[x] ? lo + edge : e->extent[x];
        n *= hi > lo ? (double)(hi - lo) : 0;
    }
    return n;
}

void exact_scalar_note(engine *e, unsigned i, const uint64_t *c, uint64_t nnz, uint64_t meta)
{
    double n = other_points(e, &e->in[i], c);
    e->scalar_reads[i] += (double)nnz * n;
    e->scalar_format[i] += (double)meta * n;
}

/* An input conditioned on some but not all of the other inputs (three
 * inputs: MTTKRP): its actual reads would be the points where it and its
 * conditions are nonzero, which the multiplies (all nonzero) do not give. */
static int refuse_subset(const tessel_spec *s, tessel_diag *diag)
{
    uint32_t inputs = 0;
    for (unsigned t = 1; t < s->workload.ntensors; t++)
        inputs |= 1u << t;
    for (unsigned l = 0; l < s->nlevels; l++)
        for (unsigned t = 1; t < s->workload.ntensors; t++) {
            const tessel_spec_sparse *sp = &s->level[l].tensor[t].sparse;
            uint32_t on = sp->scalar_skip_on | sp->scalar_gate_on;
            if (!on || on == (inputs & ~(1u << t)))
                continue;
            const tessel_spec_level *lv = &s->level[l];
            return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, lv->pos.file, lv->pos.line,
                                   lv->pos.column, "action_optimization",
                                   "level %s: scalar skipping or gating of %s conditioned on "
                                   "some but not all of the other inputs is not priced (its "
                                   "actual reads would be the points where only those are "
                                   "nonzero, not the multiplies): condition it on every other "
                                   "input",
                                   lv->name, s->workload.tensor[t].name);
        }
    return TESSEL_OK;
}

/* An input stored uncompressed where the compute reads it (the innermost
 * level or the nearest level above that keeps it) as a scalar target: the
 * compute would visit its stored zeros too, which the traversal count (its
 * nonzeros times the extent it does not carry) leaves out. */
static int refuse_uncompressed_target(const tessel_spec *s, tessel_diag *diag)
{
    unsigned inner = s->nlevels - 1;
    for (unsigned t = 1; t < s->workload.ntensors; t++) {
        const tessel_spec_sparse *sp = &s->level[inner].tensor[t].sparse;
        if (!(sp->scalar_skip_on | sp->scalar_gate_on))
            continue;
        unsigned l = inner;
        while (l > 0 && tessel_spec_bypassed(s, l, t))
            l--;
        if (!model_tensor_uncompressed(s, l, t))
            continue;
        const tessel_spec_level *lv = &s->level[inner];
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, lv->pos.file, lv->pos.line,
                               lv->pos.column, "action_optimization",
                               "level %s: scalar skipping or gating of %s is not priced where "
                               "%s is stored uncompressed (at %s): the compute would visit its "
                               "stored zeros too, which the count of its traversals leaves out; "
                               "compress it or leave it out of action_optimization",
                               lv->name, s->workload.tensor[t].name, s->workload.tensor[t].name,
                               s->level[l].name);
    }
    return TESSEL_OK;
}

int model_scalar_outer_refuse(const tessel_spec *s, tessel_diag *diag, const char *who)
{
    int rc = refuse_subset(s, diag);
    if (!rc)
        rc = refuse_uncompressed_target(s, diag);
    if (rc)
        return rc;
    for (unsigned l = 0; l + 1 < s->nlevels; l++)
        for (unsigned t = 0; t < s->workload.ntensors; t++) {
            const tessel_spec_sparse *sp = &s->level[l].tensor[t].sparse;
            if (!(sp->scalar_skip_on | sp->scalar_gate_on))
                continue;
            const tessel_spec_level *lv = &s->level[l];
            if (who)
                return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, lv->pos.file, lv->pos.line,
                                       lv->pos.column, "action_optimization",
                                       "level %s: %s does not price scalar skipping or gating "
                                       "of %s above the innermost level (its reads that fill "
                                       "level %s are counted from the tiles the walk visits): "
                                       "use -e exact",
                                       lv->name, who, s->workload.tensor[t].name,
                                       s->level[l + 1].name);
            if (tessel_spec_bypassed(s, l, t) || tessel_spec_bypassed(s, l + 1, t))
                return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, lv->pos.file, lv->pos.line,
                                       lv->pos.column, "action_optimization",
                                       "level %s: scalar skipping or gating of %s above the "
                                       "innermost level is not priced where %s bypasses this "
                                       "level or level %s",
                                       lv->name, s->workload.tensor[t].name,
                                       s->workload.tensor[t].name, s->level[l + 1].name);
        }
    return TESSEL_OK;
}

uint32_t exact_outer_cond(const engine *e, unsigned b, unsigned i)
{
    if (b == 0 || b >= e->nlev)
        return 0;
    const tessel_spec_sparse *sp = &e->spec->level[b - 1].tensor[e->in[i].spec_tensor].sparse;
    return sp->scalar_skip_on | sp->scalar_gate_on;
}

void exact_outer_setup(engine *e)
{
    for (unsigned b = 0; b < e->nlev; b++)
        for (unsigned i = 0; i < e->nin; i++)
            e->outer_any[b] |= e->outer_on[b][i] = exact_outer_cond(e, b, i) != 0;
}

uint32_t exact_fill_skip_mask(const engine *e, unsigned b, unsigned i)
{
    return e->spec->level[b].tensor[e->in[i].spec_tensor].sparse.skip_on &
           ~exact_outer_cond(e, b, i);
}

void exact_outer_dense(engine *e, unsigned b, unsigned i, uint64_t nnz, uint64_t meta)
{
    e->outer_nnz[b - 1][i] += (double)nnz;
    e->outer_meta[b - 1][i] += (double)meta;
}

void exact_outer_fill(engine *e, unsigned b, unsigned i, uint64_t nnz, uint64_t meta)
{
    e->outer_nnz[b - 1][i] -= (double)nnz;
    e->outer_meta[b - 1][i] -= (double)meta;
}

/* The outer levels' skipped (gated) reads: the dense schedule's less the
 * actual fills, never below zero. */
static void outer_finish(engine *e)
{
    for (unsigned l = 0; l + 1 < e->nlev; l++)
        for (unsigned i = 0; i < e->nin; i++) {
            unsigned t = e->in[i].spec_tensor;
            const tessel_spec_sparse *sp = &e->spec->level[l].tensor[t].sparse;
            if (!(sp->scalar_skip_on | sp->scalar_gate_on))
                continue;
            tessel_traffic *tr = &e->res->traffic[l][t];
            uint64_t n = model_count(e->outer_nnz[l][i] > 0 ? e->outer_nnz[l][i] : 0);
            uint64_t m = model_count(e->outer_meta[l][i] > 0 ? e->outer_meta[l][i] : 0);
            if (sp->scalar_skip_on) {
                tr->skipped_reads = n;
                tr->skipped_metadata_bytes = m;
            } else {
                tr->gated_reads = n;
                tr->gated_metadata_bytes = m;
            }
        }
}

void exact_scalar_finish(engine *e)
{
    unsigned L = e->nlev - 1;
    tessel_result *r = e->res;
    outer_finish(e);
    for (unsigned i = 0; i < e->nin; i++)
        if (exact_scalar_on(e, i))
            model_scalar_split(&r->traffic[L][e->in[i].spec_tensor],
                               &e->spec->level[L].tensor[e->in[i].spec_tensor].sparse,
                               e->scalar_reads[i], e->scalar_format[i], (double)r->macs);
    const tessel_spec_sparse *sz = &e->spec->level[L].tensor[e->out.spec_tensor].sparse;
    if (!(sz->scalar_skip_on | sz->scalar_gate_on))
        return;
    double dense = 1, cells = 1;
    for (unsigned x = 0; x < e->nx; x++)
        dense *= e->spec_index[x] < 0 ? 1 : (double)e->extent[x];
    for (unsigned m = 0; m < e->out.order; m++)
        cells *= e->spec_index[e->out.x[m]] < 0 ? 1 : (double)e->extent[e->out.x[m]];
    if (model_tensor_uncompressed(e->spec, L, e->out.spec_tensor))
        dense -= cells;
    model_scalar_output(&r->traffic[L][e->out.spec_tensor], sz, dense);
}

/* The mean points of boundary bd's tiles along the indices o does not
 * carry (o NULL: along every index): extent over tiles per index. */
static double mean_other(const engine *e, const boundary *bd, const operand *o)
{
    double n = 1;
    for (unsigned x = 0; x < e->nx; x++) {
        int carried = e->spec_index[x] < 0;
        for (unsigned m = 0; o && m < o->order; m++)
            carried |= o->x[m] == x;
        uint64_t edge = bd->tile[x] ? bd->tile[x] : e->extent[x];
        if (!carried && edge)
            n *= (double)e->extent[x] / (double)((e->extent[x] + edge - 1) / edge);
    }
    return n;
}

void model_scalar_sums(engine *e, const boundary *bd, unsigned t_a, const double *operand_nnz,
                       double effectual)
{
    for (unsigned i = 0; i < e->nin && i < 2; i++) {
        double nnz = operand_nnz[e->in[i].spec_tensor == t_a ? 0 : 1];
        tile_cost tc;
        if (exact_tile_cost_init(e, bd, &e->in[i], &tc))
            continue;
        double fixed = 0, per = 0;
        model_cost_footprint_bits(&tc, &fixed, &per);
        double meta = (effectual * fixed + nnz * per) / 8 - nnz * tc.widths.value_bits / 8;
        double n = mean_other(e, bd, &e->in[i]);
        e->scalar_reads[i] = nnz * n;
        e->scalar_format[i] = (meta > 0 ? meta : 0) * n;
        e->compute_nz[i] = nnz * n;
    }
    e->compute_points = effectual * mean_other(e, bd, NULL);
}

/* ------------------------------------------------------------------ */
/* Compute skipping and gating */

void exact_compute_note(engine *e, const uint64_t *c, const uint64_t *nnz)
{
    for (unsigned i = 0; i < e->nin; i++)
        e->compute_nz[i] += (double)nnz[i] * other_points(e, &e->in[i], c);
    e->compute_points += other_points(e, NULL, c);
}

/* Whether input i's zeros are stored (uncompressed) where the compute reads
 * it: the innermost level, or the nearest level above that keeps it. */
static int stored_zeros(const engine *e, unsigned i)
{
    unsigned t = e->in[i].spec_tensor, l = e->nlev - 1;
    while (l > 0 && tessel_spec_bypassed(e->spec, l, t))
        l--;
    return model_tensor_uncompressed(e->spec, l, t);
}

/* Points of one state class (all operands' zeros of that kind) by the
 * compute's options: some absent operand first, then some stored zero. */
static void classify(unsigned opt, int some_absent, double n, double *run, double *gated,
                     double *skipped)
{
    if (some_absent && (opt & TESSEL_SPEC_COMPUTE_OPT_SKIPPING))
        *skipped += n;
    else if (opt & TESSEL_SPEC_COMPUTE_OPT_GATING)
        *gated += n;
    else
        *run += n;
}

void exact_compute_finish(engine *e)
{
    tessel_result *r = e->res;
    double dense = 1;
    for (unsigned x = 0; x < e->nx; x++)
        dense *= e->spec_index[x] < 0 ? 1 : (double)e->extent[x];
    r->computes_algorithmic = model_count(dense);
    r->computes_actual = r->macs;
    r->computes_gated = r->computes_skipped = 0;
    unsigned opt = e->spec->compute.optimization;
    if (!opt || e->nin != 2) /* the spec refuses three inputs */
        return;
    /* the points by the two inputs' states: A nonzero and B zero (ca), A
     * zero and B nonzero (cb), both zero (c0); M both nonzero */
    double M = e->compute_macs > 0 ? e->compute_macs : (double)r->macs, P = e->compute_points;
    double ca = e->compute_nz[0] - M, cb = e->compute_nz[1] - M;
    double c0 = P - e->compute_nz[0] - e->compute_nz[1] + M;
    ca = ca > 0 ? ca : 0, cb = cb > 0 ? cb : 0, c0 = c0 > 0 ? c0 : 0;
    int opt_a = exact_scalar_on(e, 0), opt_b = exact_scalar_on(e, 1);
    int ez_a = stored_zeros(e, 0), ez_b = stored_zeros(e, 1);
    double run = 0, gated = 0, skipped = 0;
    if (!opt_a) /* B zero where A is not: absent unless stored */
        classify(opt, !ez_b, ca, &run, &gated, &skipped);
    if (!opt_b)
        classify(opt, !ez_a, cb, &run, &gated, &skipped);
    if (!opt_a && !opt_b && (ez_a || ez_b)) /* both absent: no compute */
        classify(opt, !ez_a || !ez_b, c0, &run, &gated, &skipped);
    /* Sparseloop rounds the skipped, gated and absent computes down and
     * runs the rest */
    double absent = P - M - run - gated - skipped;
    double actual = P - floor(skipped) - floor(gated) - floor(absent > 0 ? absent : 0);
    r->computes_actual = model_count(actual > (double)r->macs ? actual : (double)r->macs);
    r->computes_gated = model_count(floor(gated));
    r->computes_skipped = model_count(floor(skipped));
}

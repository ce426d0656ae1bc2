/* The stat estimator's statistics (d2t2 section 5): per input matrix the
 * base tile grid, the D2T2 statistics and the nonzeros per row and column,
 * the output sample, collected once (tessel_stat_data_create) and reused
 * by every design point (tessel_model_stat_eval*, which call stat.c). */
#include <math.h>
#include <string.h>

#include "stat_bumped.h"
#include "stat_dense.h"
#include "stat_inspill.h"
#include "stat_internal.h"
#include "stat_nested.h"
#include "stat_nested_sample.h"

static void input_free(const tessel_allocator *a, stat_input *in)
{
    if (in->base) {
        stat_grid_free(a, in->base);
        tessel_dealloc(a, in->base);
    }
    tessel_tile_grid_free(&in->grid);
    tessel_d2t2_free(&in->d2t2);
    tessel_tile_rows_free(&in->rows);
    tessel_tile_rows_free(&in->cols);
    tessel_tile_sym_free(&in->sym);
    tessel_dealloc(a, in->line_nnz[0]);
    tessel_dealloc(a, in->line_nnz[1]);
    memset(in, 0, sizeof(*in));
}

/* Line counts: per row [0] and per column [1] of a matrix; of a 3-tensor
 * T[i,x,k], per i [0] and per k [1] (the contracted mode). */
static int line_counts(const tessel_tensor *t, const tessel_allocator *a, stat_input *in)
{
    unsigned last = t->order - 1;
    uint64_t n[2] = { t->dims[0], t->dims[last] };
    for (unsigned m = 0; m < 2; m++) {
        in->line_nnz[m] = tessel_alloc_array(a, n[m] + 1, sizeof(uint64_t));
        if (!in->line_nnz[m])
            return TESSEL_ENOMEM;
        memset(in->line_nnz[m], 0, (n[m] + 1) * sizeof(uint64_t));
    }
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        in->line_nnz[0][r] = t->ptr[r + 1] - t->ptr[r];
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++)
            in->line_nnz[1][t->idx[last][p]]++;
    }
    in->dims[0] = t->dims[0];
    in->dims[1] = t->dims[last];
    return TESSEL_OK;
}

/* The base grid as compressed rows (stat_grid_base): a matrix's tile rows,
 * read in place from its tile grid, or a 3-tensor's (i, x) cells i-major
 * against k. */
static int base_rows(const tessel_tile_grid *g, const tessel_allocator *a, stat_grid **out)
{
    stat_grid *b = tessel_alloc(a, sizeof(*b));
    if (!b)
        return TESSEL_ENOMEM;
    int rc = stat_grid_base(g, a, b);
    if (rc) {
        tessel_dealloc(a, b);
        return rc;
    }
    *out = b;
    return TESSEL_OK;
}

/* Which lines statistics input i's tensor needs (1 rows, 2 columns): the
 * rows when its formats read them (`rows`), and for SpMSpM the lines
 * along k of each role it plays, A's columns and B's rows (the in-visit
 * step count, stat_outspill.c). */
static unsigned lines_wanted(const engine *e, const int *same_as, unsigned i, int rows)
{
    unsigned want = rows ? 1u : 0u;
    if (e->kind != TESSEL_WORKLOAD_SPMSPM || e->nin != 2 || e->in[0].order != 2 ||
        e->in[1].order != 2)
        return want;
    for (unsigned j = 0; j < 2; j++)
        if (j == i || same_as[j] == (int)i)
            want |= j == 0 ? (e->in[0].x[1] == e->red[0] ? 2u : 0u)
                           : (e->in[1].x[0] == e->red[0] ? 1u : 0u);
    /* both roles along k (B is A): its transposed pairs (4) too */
    if ((i == 0 || same_as[0] == (int)i) && (i == 1 || same_as[1] == (int)i) &&
        e->in[0].x[1] == e->red[0] && e->in[1].x[0] == e->red[0])
        want |= 4u;
    return want;
}

/* mode_base: the base edge of each of t's modes (a matrix's rows and
 * columns; a 3-tensor's three modes); lines: lines_wanted. */
static int input_collect(const tessel_tensor *t, const tessel_stat_options *opt,
                         const uint64_t *mode_base, unsigned lines, const tessel_allocator *a,
                         stat_input *in, tessel_diag *diag)
{
    memset(in, 0, sizeof(*in));
    int rc;
    if (t->order == 2) {
        rc = tessel_d2t2_collect(t, mode_base, opt->sample_fraction, opt->seed, a, &in->d2t2,
                                 diag);
        if (!rc)
            rc = tessel_tile_grid_build(t, in->d2t2->base, a, &in->grid, diag);
        if (!rc && (lines & 1)) /* per base tile its non-empty rows (stat_tiledfmt.c) */
            rc = tessel_tile_grid_rows(t, in->grid, a, &in->rows, diag);
        if (!rc && (lines & 2)) /* and columns (stat_outspill.c) */
            rc = tessel_tile_grid_cols(t, in->grid, a, &in->cols, diag);
        if (!rc && (lines & 4)) /* and its transposed pairs (stat_outspill.c) */
            rc = tessel_tile_grid_sym(t, in->grid, a, &in->sym, diag);
    } else {
        rc = tessel_tile_grid_build(t, mode_base, a, &in->grid, diag);
    }
    int brc = rc ? rc : base_rows(in->grid, a, &in->base);
    if (!rc && brc == TESSEL_ERANGE)
        rc = tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, "data",
                             "the stat estimator counts an input's nonzeros in 32 bits: "
                             "%llu nonzeros is more than it can hold (use -e exact)",
                             (unsigned long long)t->nnz);
    else if (!rc && brc)
        rc = tessel_diag_oom(diag, NULL, "building an input's base tile grid",
                             (size_t)stat_grid_bytes(in->grid->extent[0] * (t->order == 3
                                                                                ? in->grid->extent[1]
                                                                                : 1),
                                                     in->grid->nonempty));
    if (!rc && line_counts(t, a, in))
        rc = tessel_diag_oom(diag, NULL, "counting an input's nonzeros per line",
                             (t->dims[0] + t->dims[t->order - 1] + 2) * sizeof(uint64_t));
    if (rc)
        input_free(a, in);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Statistics once, design points many times. */

struct tessel_stat_data {
    const tessel_allocator *alloc;
    engine e;             /* roles and operand tensors */
    char einsum[512];     /* the workload they were collected for */
    char label[256];      /* its data, as the `data` report column names it */
    stat_input in[NIN];
    int same_as[NIN];     /* the earlier input whose statistics these are, or -1 */
    int has_sample;
    stat_output_sample sample;
    double seconds;
    double flops;         /* multiplies from the line counts (SpMSpM, SpMV, TTM) */
    stat_census census;   /* rule 3's counts (compulsory.c) */
    double nested_budget; /* tessel_stat_data_set_nested_budget */
    int nested_formula;   /* tessel_stat_data_set_nested_formula */
    int count_exact;      /* rule 3's output count, symbolic (output_count) */
    tessel_output_count count;
};

void tessel_stat_data_free(tessel_stat_data **sp)
{
    if (!sp || !*sp)
        return;
    tessel_stat_data *s = *sp;
    *sp = NULL;
    stat_output_sample_free(s->alloc, &s->sample);
    for (unsigned i = 0; i < NIN; i++)
        if (s->same_as[i] < 0)
            input_free(s->alloc, &s->in[i]);
    exact_engine_free(&s->e);
    tessel_dealloc(s->alloc, s);
}

void tessel_stat_data_drop_tensors(tessel_stat_data *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < NIN; i++) {
        if (s->e.in[i].owned)
            tessel_tensor_free(&s->e.in[i].t);
        s->e.in[i].t = NULL;
        s->e.in[i].owned = 0;
    }
}

const char *tessel_stat_data_label(const tessel_stat_data *s)
{
    return s ? s->label : "";
}

double tessel_stat_data_seconds(const tessel_stat_data *s)
{
    return s ? s->seconds : 0;
}

const tessel_tile_grid *tessel_stat_data_grid(const tessel_stat_data *s, unsigned tensor,
                                              int *index)
{
    if (!s)
        return NULL;
    for (unsigned i = 0; i < s->e.nin; i++) {
        const operand *op = &s->e.in[i];
        if (op->spec_tensor != tensor)
            continue;
        const stat_input *in = &s->in[s->same_as[i] >= 0 ? (unsigned)s->same_as[i] : i];
        if (!in->grid || in->grid->order != op->order)
            return NULL;
        for (unsigned m = 0; m < op->order; m++)
            index[m] = s->e.spec_index[op->x[m]];
        return in->grid;
    }
    return NULL;
}


stat_data_view stat_data_view_of(const tessel_stat_data *cs)
{
    tessel_stat_data *s = (tessel_stat_data *)cs;
    stat_data_view v = { s->alloc, &s->e, s->einsum, s->label, s->in, s->same_as,
                         &s->has_sample, &s->sample, &s->count_exact, &s->count };
    return v;
}

tessel_stat_data *stat_data_alloc(const tessel_allocator *a)
{
    tessel_stat_data *s = tessel_alloc(a, sizeof(*s));
    if (!s)
        return NULL;
    memset(s, 0, sizeof(*s));
    s->alloc = a;
    s->e.alloc = a;
    s->nested_budget = TESSEL_STAT_NESTED_BUDGET;
    for (unsigned i = 0; i < NIN; i++)
        s->same_as[i] = -1;
    return s;
}

/* Input i's statistics (shared with an earlier input of the same data). */
static const stat_input *input_of(const tessel_stat_data *s, unsigned i)
{
    return s->same_as[i] < 0 ? &s->in[i] : &s->in[s->same_as[i]];
}

void stat_data_finish(tessel_stat_data *s)
{
    if (s->e.kind != TESSEL_WORKLOAD_MTTKRP)
        s->flops = stat_flops_of(input_of(s, 0), input_of(s, 1));
    const stat_input *ins[NIN] = { input_of(s, 0), input_of(s, 1), input_of(s, 2) };
    stat_census_collect(&s->e, ins, &s->census);
    if (s->count_exact) { /* rule 3 from the symbolic count, as exact's */
        s->census.out_exact = 1;
        s->census.est_rows = s->census.out_rows;
        s->census.est_fibers = s->census.out_fibers;
        s->census.out_nnz = (double)s->count.nnz;
        s->census.out_rows = (double)s->count.rows;
        s->census.out_fibers = (double)s->count.fibers;
    }
}

/* Rule 3's output count, exact when the symbolic pass's work is within
 * the budget (docs/models/stat.md, "The output count of rule 3"); counted
 * once per workload data (workload_count.c). Each output row's nonzeros go
 * to row_nnz and each k's first-reached ones to k_nnz when not NULL. */
static int output_count(tessel_stat_data *s, const tessel_workload_data *data,
                        const tessel_stat_options *opt, double *row_nnz, double *k_nnz,
                        tessel_diag *diag)
{
    return model_output_count(&s->e, data, opt->output_count_budget, &s->count, &s->count_exact,
                              row_nnz, k_nnz, diag);
}

void stat_sample_base(const engine *e, const stat_input *const *in, uint64_t *base)
{
    const tessel_tile_grid *ga = in[0]->grid, *gb = in[1]->grid;
    if (e->kind == TESSEL_WORKLOAD_MTTKRP) {
        /* cells along i, r, k, j */
        const tessel_tile_grid *gc = in[2]->grid;
        base[0] = ga->tile[0];
        base[1] = gb->tile[1];
        base[2] = tessel_gcd(ga->tile[2], gc->tile[0]);
        base[3] = tessel_gcd(ga->tile[1], gb->tile[0]);
        return;
    }
    unsigned km = ga->order - 1; /* A's contracted mode */
    base[0] = ga->tile[0];
    base[1] = gb->tile[1];
    base[2] = tessel_gcd(ga->tile[km], gb->tile[0]);
    base[3] = ga->order == 3 ? ga->tile[1] : 1;
}

static int collect_sample(tessel_stat_data *s, const tessel_stat_options *opt,
                          const double *row_nnz, const double *k_nnz, tessel_diag *diag)
{
    const stat_input *ins[NIN] = { input_of(s, 0), input_of(s, 1),
                                   s->e.nin > 2 ? input_of(s, 2) : NULL };
    uint64_t base[4];
    stat_sample_base(&s->e, ins, base);
    int rc;
    double cap = opt->output_sample_max > 0 ? opt->output_sample_max
                                            : TESSEL_STAT_OUTPUT_SAMPLE_MAX;
    if (s->e.kind == TESSEL_WORKLOAD_MTTKRP)
        rc = stat_output_sample_collect_mttkrp(s->e.in[0].t, s->e.in[1].t, s->e.in[2].t, base,
                                               opt->output_fraction, opt->output_min_flops,
                                               cap, opt->seed, s->alloc, &s->sample);
    else
        rc = stat_output_sample_collect(s->e.in[0].t, s->e.in[1].t, base, opt->output_fraction,
                                        opt->output_min_flops, cap, opt->seed,
                                        opt->output_legacy, row_nnz, k_nnz, s->alloc,
                                        &s->sample);
    if (rc == TESSEL_EINVAL) { /* past the cap (stat_output_sample_collect) */
        double want = s->sample.sampled_flops, all = s->sample.flops;
        memset(&s->sample, 0, sizeof(s->sample));
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "output_fraction",
                               "the output sample would multiply out %.4g of the product's "
                               "%.4g multiplies (output fraction %g), more than the %.4g it "
                               "may make (its time grows with them); use a smaller fraction, "
                               "or the default fixed budget",
                               want, all, opt->output_fraction, cap);
    }
    if (rc == TESSEL_ERANGE)
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL,
                               "the output sample's base cells do not fit in 64 bits; use a "
                               "coarser --base or no output sample");
    if (rc)
        return tessel_diag_oom(diag, NULL, "sampling the output's rows", 0);
    s->has_sample = 1;
    return TESSEL_OK;
}

/* Each input's base edges per mode: the caller's RxC (rows of every
 * operand on R, its last mode on C), or chosen from the spec's tiles
 * (stat_base.c); and which inputs share one tensor's statistics. */
static void collection_bases(const engine *e, const tessel_stat_options *opt, int *same_as,
                             uint64_t mode_base[][3])
{
    for (unsigned i = 0; i < e->nin; i++)
        for (unsigned j = 0; j < i; j++)
            if (e->in[j].t == e->in[i].t && same_as[j] < 0)
                same_as[i] = (int)j;
    if (opt->base[0] && opt->base[1]) {
        for (unsigned i = 0; i < e->nin; i++)
            for (unsigned m = 0; m < 3; m++)
                mode_base[i][m] = opt->base[m + 1 == e->in[i].order ? 1 : 0];
        return;
    }
    uint64_t index_base[NX];
    stat_auto_base(e, opt, index_base);
    stat_operand_bases(e, index_base, same_as, mode_base);
}

/* The statistics of data for spec: the inputs' grids, rule 3's count, the output sample. */
int tessel_stat_data_create(const tessel_spec *spec, const tessel_workload_data *data,
                            const tessel_stat_options *opt, const tessel_allocator *a,
                            tessel_stat_data **out, tessel_diag *diag)
{
    *out = NULL;
    double start = model_now();
    tessel_stat_options defaults;
    if (!opt) {
        tessel_stat_options_init(&defaults);
        opt = &defaults;
    }
    int rc = stat_check_workload(spec, diag);
    if (rc)
        return rc;
    tessel_stat_data *s = stat_data_alloc(a);
    if (!s)
        return tessel_diag_oom(diag, NULL, "creating the statistics", sizeof(tessel_stat_data));
    snprintf(s->einsum, sizeof(s->einsum), "%s",
             spec->workload.einsum ? spec->workload.einsum : "");
    tessel_workload_data_label(data, s->label, sizeof(s->label));
    s->e.spec = spec;
    s->e.alloc = a;
    s->e.diag = diag;
    s->e.nlev = spec->nlevels;
    rc = exact_setup_roles(&s->e, data);
    uint64_t mode_base[NIN][3];
    if (!rc)
        collection_bases(&s->e, opt, s->same_as, mode_base);
    for (unsigned i = 0; !rc && i < s->e.nin; i++)
        if (s->same_as[i] < 0)
            rc = input_collect(s->e.in[i].t, opt, mode_base[i],
                               lines_wanted(&s->e, s->same_as, i,
                                            opt->tile_rows || stat_spec_reads_rows(spec)),
                               a, &s->in[i], diag);
    /* rule 3's count first: its rows' exact nonzeros are the output
     * sample's covariate when the count is within its budget */
    int sampling = opt->output_fraction > 0 || opt->output_min_flops > 0;
    double *row_nnz = NULL, *k_nnz = NULL;
    if (!rc && sampling && !opt->output_legacy && s->e.nin >= 1 && s->e.in[0].t &&
        !(row_nnz = tessel_alloc_array(a, s->e.in[0].t->dims[0] + 1, sizeof(double))))
        rc = tessel_diag_oom(diag, NULL, "counting the output's rows", /* not the sketches */
                             (size_t)(s->e.in[0].t->dims[0] + 1) * sizeof(double));
    /* each k's share, for the one-level written nonzeros' strata (else the
     * sample counts it in a pass of its own) */
    if (row_nnz && s->e.nin == 2 && s->e.in[0].t->order == 2 && s->e.in[1].t)
        k_nnz = tessel_alloc_array(a, s->e.in[1].t->dims[0] + 1, sizeof(double));
    if (!rc)
        rc = output_count(s, data, opt, row_nnz, k_nnz, diag);
    if (!rc && sampling)
        rc = collect_sample(s, opt, s->count_exact ? row_nnz : NULL,
                            s->count_exact ? k_nnz : NULL, diag);
    tessel_dealloc(a, row_nnz);
    tessel_dealloc(a, k_nnz);
    if (!rc)
        stat_data_finish(s);
    s->e.spec = NULL;
    s->e.diag = NULL;
    if (rc) {
        tessel_stat_data_free(&s);
        return rc;
    }
    s->seconds = model_now() - start;
    *out = s;
    return TESSEL_OK;
}

int tessel_model_stat_eval(const tessel_spec *spec, const tessel_stat_data *s,
                           tessel_result *out, tessel_diag *diag)
{
    return tessel_model_stat_eval_cached(spec, s, NULL, out, diag);
}

/* The output sample's standard error goes with output_nnz where that is
 * the sample's estimate (not eq. 20's, which a point without bitsets
 * uses); the walk sums the same weights tile by tile, hence the slack. */
static void output_stderr(const tessel_stat_data *s, tessel_result *out)
{
    if (!s->has_sample || s->sample.nnz_stderr < 0)
        return;
    double nnz = s->sample.nnz;
    if (fabs((double)out->output_nnz - nnz) <= 1e-6 * nnz + 1) {
        out->output_nnz_stderr = s->sample.nnz_stderr;
        out->output_nnz_has_stderr = 1;
    }
}

/* Boundary b >= 2 in closed form: TTM's unfolded (stat_nested_ttm.c, which
 * may decline), else by the formula per tile shape where asked and it
 * decides, else the nested pass (through the cache's summaries). */
static int nested_boundary(engine *e, const tessel_stat_data *s, tessel_stat_cache *cache,
                           unsigned b, const stat_input *const *ins,
                           const stat_output_sample *sample, tessel_diag *diag)
{
    if (e->kind == TESSEL_WORKLOAD_TTM)
        return stat_nested_ttm(e, b, ins, sample, diag);
    int rc = s->nested_formula ? stat_nested_formula(e, b, ins, sample, diag)
                               : STAT_NESTED_KNOWN_DECLINED;
    if (!rc)
        e->res->stat_nested_formula = 1;
    if (rc == STAT_NESTED_KNOWN_DECLINED)
        rc = stat_nested_evaluate_cached(e, b, ins, sample,
                                         cache ? stat_cache_nested(cache) : NULL, diag);
    return rc;
}

static int eval_point_as(const tessel_spec *spec, const tessel_stat_data *s,
                         tessel_stat_cache *cache, int may_close, tessel_result *out,
                         tessel_diag *diag);

/* One point whose tiles are on the statistics' grids; where TTM's nested
 * closed form declines the point, the walk prices it. */
static int eval_point(const tessel_spec *spec, const tessel_stat_data *s,
                      tessel_stat_cache *cache, tessel_result *out, tessel_diag *diag)
{
    int rc = eval_point_as(spec, s, cache, 1, out, diag);
    if (rc == STAT_NESTED_KNOWN_DECLINED)
        rc = eval_point_as(spec, s, cache, 0, out, diag);
    return rc;
}

/* eval_point, with the closed sums where they apply and may_close. */
static int eval_point_as(const tessel_spec *spec, const tessel_stat_data *s,
                         tessel_stat_cache *cache, int may_close, tessel_result *out,
                         tessel_diag *diag)
{
    double start = model_now();
    memset(out, 0, sizeof(*out));
    snprintf(out->estimator, sizeof(out->estimator), "stat");
    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
    if (strcmp(s->einsum, spec->workload.einsum ? spec->workload.einsum : "") != 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->workload.pos.file,
                               spec->workload.pos.line, spec->workload.pos.column,
                               "workload.einsum",
                               "these statistics were collected for '%s', not '%s'", s->einsum,
                               spec->workload.einsum ? spec->workload.einsum : "");
    engine e = s->e; /* shares the operand tensors; never freed here */
    e.spec = spec;
    e.diag = diag;
    e.res = out;
    e.nlev = spec->nlevels;
    int rc = stat_check_design_levels(spec, diag);
    if (!rc) {
        const stat_input *ins[NIN] = { input_of(s, 0), input_of(s, 1), input_of(s, 2) };
        const stat_output_sample *sample = s->has_sample ? &s->sample : NULL;
        double flops = e.kind == TESSEL_WORKLOAD_MTTKRP ? (sample ? sample->flops : 0)
                                                        : s->flops;
        int closed = may_close && stat_closed_sums_apply(&e);
        if (closed && e.kind == TESSEL_WORKLOAD_TTM && spec->nlevels >= 3 &&
            stat_nested_ttm_cheaper(&e, ins, &closed))
            return tessel_diag_oom(diag, NULL, "weighing TTM's nested pass against the walk", 0);
        e.inspill = closed && spec->nlevels == 2; /* rule 4 per read of the compute */
        /* what the compute's reads take from the statistics alone, shared */
        stat_ks_cache *kc = cache && stat_cache_belongs(cache, s) ? stat_cache_ksteps(cache) : NULL;
        rc = STAT_CACHE_DECLINED;
        if (cache && !stat_cache_belongs(cache, s))
            rc = tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                                 "a stat cache serves the statistics it was created for");
        else if (cache && closed && e.kind == TESSEL_WORKLOAD_SPMSPM && !stat_any_unskipped(&e))
            rc = stat_evaluate_cached(&e, ins, sample, s->flops, cache, diag);
        if (rc == STAT_CACHE_DECLINED && closed)
            rc = stat_evaluate(&e, ins, sample, s->alloc, diag);
        if (rc == STAT_CACHE_DECLINED)
            rc = stat_walk_evaluate(&e, ins, sample, flops, diag);
        /* boundary 1 above; the nested ones in closed form (stat_nested.c),
         * on a sample of strips past the budget (stat_nested_sample.c) */
        stat_nested_sample_info ns;
        memset(&ns, 0, sizeof(ns));
        if (closed && !rc && spec->nlevels > 2)
            rc = stat_nested_sampled(&e, ins, sample, s->nested_budget, 1, &ns, diag);
        if (ns.sampled) {
            out->stat_nested_fraction = ns.fraction;
            out->stat_nested_stderr = ns.stderr_rel;
        }
        if (rc == STAT_NESTED_DECLINED)
            rc = TESSEL_OK;
        if (closed && !ns.sampled)
            e.inspill = 1; /* the nested sample keeps the per-use charge (stat_inspill.c) */
        for (unsigned b = 2; closed && !ns.sampled && !rc && b < spec->nlevels; b++) {
            rc = nested_boundary(&e, s, cache, b, ins, sample, diag);
            if (!rc && e.inspill && b + 1 == spec->nlevels)
                rc = stat_inspill_count(&e, b, ins, kc); /* rule 4 per read of the compute */
            if (!rc)
                exact_ob_settle(&e, b - 1); /* rule 4 per child read (stat_bumped.c) */
        }
        if (!rc && closed) /* action_optimization (stat_actions.c) */
            rc = stat_actions_grids(&e, ins, diag);
        if (!rc && e.inspill && spec->nlevels == 2)
            rc = stat_inspill_count(&e, 1, ins, kc);
        if (!rc && e.inspill)
            exact_ob_settle(&e, spec->nlevels - 1);
        exact_ob_free(&e);
        /* stat_walked: set by stat_walk.c for each boundary it walks */
        if (!rc)
            rc = stat_compulsory(&e, &s->census, diag);
        if (!rc) /* an output stored uncompressed: whole tiles (stat_dense.c) */
            rc = stat_dense_apply(&e, ins, diag);
    }
    if (!rc)
        exact_finish_counts(&e);
    if (!rc)
        output_stderr(s, out);
    if (!rc)
        rc = model_result_check(out, spec, diag);
    out->seconds = model_now() - start;
    out->stats_seconds = s->seconds;
    return rc;
}

typedef struct point_ctx {
    const tessel_stat_data *s;
    tessel_stat_cache *cache;
} point_ctx;

static int on_grid_point(void *ud, const tessel_spec *spec, tessel_result *out, tessel_diag *diag)
{
    const point_ctx *p = ud;
    return eval_point(spec, p->s, p->cache, out, diag);
}

int tessel_model_stat_eval_cached(const tessel_spec *spec, const tessel_stat_data *s,
                                  tessel_stat_cache *cache, tessel_result *out,
                                  tessel_diag *diag)
{
    point_ctx p = { s, cache };
    if (strcmp(s->einsum, spec->workload.einsum ? spec->workload.einsum : "") != 0)
        return eval_point(spec, s, cache, out, diag); /* which says so */
    engine e = s->e;
    e.spec = spec;
    const stat_input *ins[NIN] = { input_of(s, 0), input_of(s, 1), input_of(s, 2) };
    return stat_offgrid_eval(&e, ins, on_grid_point, &p, out, diag);
}

int tessel_model_stat(const tessel_spec *spec, const tessel_workload_data *data,
                      const tessel_stat_options *opt, const tessel_allocator *a,
                      tessel_result *out, tessel_diag *diag)
{
    memset(out, 0, sizeof(*out));
    tessel_stat_data *s = NULL;
    int rc = stat_check_workload(spec, diag);
    if (!rc) {
        /* a spec the estimator cannot handle fails before the statistics */
        rc = stat_check_design_levels(spec, diag);
    }
    if (!rc)
        rc = tessel_stat_data_create(spec, data, opt, a, &s, diag);
    if (!rc)
        rc = tessel_model_stat_eval(spec, s, out, diag);
    tessel_stat_data_free(&s);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Read access for other modules (model.h). */

const uint64_t *tessel_stat_data_line_nnz(const tessel_stat_data *s, unsigned tensor,
                                          unsigned side, uint64_t *n, int *index)
{
    if (!s || side > 1)
        return NULL;
    for (unsigned i = 0; i < s->e.nin; i++) {
        const operand *op = &s->e.in[i];
        if (op->spec_tensor != tensor)
            continue;
        const stat_input *in = input_of(s, i);
        if (!in->line_nnz[side] || op->order < 2)
            return NULL;
        unsigned m = side ? op->order - 1 : 0;
        if (n)
            *n = in->dims[side];
        if (index)
            *index = s->e.spec_index[op->x[m]];
        return in->line_nnz[side];
    }
    return NULL;
}

double tessel_stat_data_output_nnz(const tessel_stat_data *s)
{
    return s && s->has_sample ? s->sample.nnz : -1.0;
}

int tessel_stat_data_output_count(const tessel_stat_data *s, tessel_output_count *out)
{
    if (!s || !s->count_exact)
        return 0;
    *out = s->count;
    return 1;
}

void tessel_stat_data_set_nested_formula(tessel_stat_data *s, int on)
{
    if (s)
        s->nested_formula = on != 0;
}

void tessel_stat_data_set_nested_budget(tessel_stat_data *s, double budget)
{
    if (s)
        s->nested_budget = budget > 0 ? budget : 0;
}

double tessel_stat_data_output_nnz_stderr(const tessel_stat_data *s)
{
    return s && s->has_sample ? s->sample.nnz_stderr : -1.0;
}

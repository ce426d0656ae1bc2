/* The extensor template (template.h): ExTensor's uniform-tile hierarchy
 * (DRAM -> LLB -> PE buffers) with the tiles decided by one of the
 * strategies the Tailors and DRT papers compare it under:
 *
 *   variant n    ExTensor-N, no tile-size adaption: conservative S-U-C
 *                tiles sized as if dense (tailors §5.2), at every buffer
 *   variant p    ExTensor-P, prescient: the largest uniform tile whose worst
 *                real tile fits (tailors §5.2), at every buffer
 *   variant ob   ExTensor-OB: Swiftiles' overbooked tiles with Tailors
 *                streaming the overflow (tailors §4, §5.2), at every buffer
 *   variant drt  ExTensor-OP-DRT's dynamic tiles (drt §5.2.1)
 *
 * The uniform variants are the strategies module's strategies on the spec's
 * own hierarchy; this file only resolves the variant to one. For drt,
 * template_options.drt_levels chooses between two models:
 *
 *   all (default)  drt §4.1 ("multiple S-DOP levels apply DRT
 *                  hierarchically") and §5.2.1 ("DRT subdivides tiles
 *                  twice"): module drt's two-level walk, DRT at the LLB
 *                  and again inside each LLB task with the PE buffers'
 *                  partitions (src/drt/drt_levels.c); for a spec with
 *                  exactly two buffer levels (others fall back to llb).
 *   llb            DRT at the LLB only: the DRAM -> LLB boundary is DRT's
 *                  own, and the boundaries below it are the estimator's on
 *                  uniform tiles: prescient tiles for the inner buffers,
 *                  and for the LLB DRT's mean macro-tile edges rounded to
 *                  multiples of them (a tile the size DRT forms, without
 *                  sub-task extraction). Kept to compare the two. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "template_internal.h"

typedef enum ext_variant { EXT_N = 0, EXT_P, EXT_OB, EXT_DRT, EXT_COUNT } ext_variant;

static const char *const variant_names[EXT_COUNT] = { "n", "p", "ob", "drt" };

/* How the drt variant tiles a DRAM -> LLB -> PE hierarchy. */
typedef enum ext_drt_levels {
    EXT_DRT_ALL = 0, /* DRT at the LLB and again inside each LLB task for the PE buffers */
    EXT_DRT_LLB = 1  /* DRT at the LLB, prescient uniform tiles below (the earlier model) */
} ext_drt_levels;

/* template_options: variant (n, the default; p; ob; drt) and, for drt,
 * drt_levels (all, the default; llb). */
static int read_options(const tessel_spec *spec, ext_variant *out, ext_drt_levels *levels,
                        tessel_diag *diag)
{
    *out = EXT_N;
    *levels = EXT_DRT_ALL;
    const tessel_yaml_node *m = spec->template_.options;
    if (!m || tessel_yaml_is_null(m))
        return TESSEL_OK;
    if (m->kind != TESSEL_YAML_MAPPING)
        return tessel_diag_set(diag, TESSEL_EINVAL, m->file, m->line, m->column,
                               "template_options", "template_options must be a mapping");
    const char *known[4]; /* the descriptor's keys (template_desc.c) */
    size_t nknown = tpl_option_keys(TESSEL_TEMPLATE_EXTENSOR, known, 4);
    for (size_t i = 0; i < m->count; i++) {
        const tessel_yaml_node *k = m->keys[i], *v = m->items[i];
        char what[200];
        const char *val = v && v->kind == TESSEL_YAML_SCALAR ? v->value : NULL;
        if (strcmp(k->value, "drt_levels") == 0) {
            if (val && strcmp(val, "all") == 0)
                *levels = EXT_DRT_ALL;
            else if (val && strcmp(val, "llb") == 0)
                *levels = EXT_DRT_LLB;
            else {
                snprintf(what, sizeof(what), "drt_levels must be all or llb, not '%s'",
                         val ? val : "(not a scalar)");
                return tpl_option_error(spec, v ? v : k, "drt_levels", what, diag);
            }
            continue;
        }
        if (strcmp(k->value, "variant") != 0) {
            const char *near = tessel_nearest_word(k->value, known, nknown);
            snprintf(what, sizeof(what), "unknown option '%s' (%s%s%s)", k->value,
                     near ? "did you mean '" : "the options are variant and drt_levels",
                     near ? near : "", near ? "'?" : "");
            return tpl_option_error(spec, k, NULL, what, diag);
        }
        int found = -1;
        for (int x = 0; val && x < (int)EXT_COUNT; x++)
            if (strcmp(val, variant_names[x]) == 0)
                found = x;
        if (found < 0) {
            snprintf(what, sizeof(what), "variant must be n, p, ob or drt, not '%s'",
                     val ? val : "(not a scalar)");
            return tpl_option_error(spec, v ? v : k, "variant", what, diag);
        }
        *out = (ext_variant)found;
    }
    /* drt_levels is read by variant drt only; the others ignore it, so
     * a compare or sweep over the variant axis runs on one spec */
    return TESSEL_OK;
}

/* The variant decides the strategy: a spec naming another one is refused
 * rather than silently overridden. */
static int check_no_strategy(const tessel_spec *spec, tessel_diag *diag)
{
    if (tessel_strategy_is_fixed(spec))
        return TESSEL_OK;
    const tessel_spec_pos *p = &spec->strategy.pos;
    return tessel_diag_set(diag, TESSEL_EINVAL, p->file, p->line, p->column, "mapping.strategy",
                           "template extensor: template_options.variant decides the tiling "
                           "strategy, so mapping.strategy (here '%s') must be left unset "
                           "(or use template: none to run a strategy on the mapping)",
                           spec->strategy.name);
}

static int check_spec(const tessel_spec *spec, tessel_diag *diag)
{
    if (spec->nlevels < 2)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "architecture.levels",
                               "template extensor needs a backing store and at least one buffer");
    return check_no_strategy(spec, diag);
}

/* A copy of spec's structure (sharing its documents) running strategy
 * `name`; levels as the spec's strategy_options give them (default every
 * buffer). */
static void strategy_spec(const tessel_spec *spec, const char *name, int dense_worst,
                          tessel_spec *out)
{
    *out = *spec;
    snprintf(out->strategy.name, sizeof(out->strategy.name), "%s", name);
    out->strategy.dense_worst = dense_worst;
    snprintf(out->template_.name, sizeof(out->template_.name), "none");
    out->template_.options = NULL;
}

/* Strategies with the data collect their own statistics, on a base grid
 * fine enough for the tiles they may choose (the caller's, on the default
 * 128 x 128 grid, cannot express a PE-buffer tile). */
static tessel_strategy_inputs own_inputs(const tessel_strategy_inputs *in)
{
    tessel_strategy_inputs r = { NULL, NULL, NULL };
    if (in)
        r = *in;
    if (r.data)
        r.stats = NULL;
    return r;
}

/* ------------------------------------------------------------------ */
/* ExTensor-OP-DRT: DRT at the LLB, prescient uniform tiles below it. */

typedef struct ext_drt_run {
    tessel_result outer;        /* DRAM -> LLB under DRT (two levels) */
    tessel_drt_summary summary;
    tessel_drt_options options;
    double seconds;
} ext_drt_run;

/* The exact path reads the data. */
static int need_data(const tessel_strategy_inputs *in, tessel_diag *diag)
{
    if (in->data)
        return TESSEL_OK;
    return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "estimator",
                           "the exact estimator needs the data");
}

/* The micro-tile statistics DRT's stat path runs on: the caller's, else
 * collected from the data on `cut` (returned in *own, for the caller to
 * free). */
static int drt_stats_for(const tessel_spec *cut, const tessel_strategy_inputs *in,
                         const tessel_drt_options *o, const tessel_allocator *a,
                         const tessel_drt_stats **use, tessel_drt_stats **own, tessel_diag *diag)
{
    *own = NULL;
    *use = in->drt_stats;
    if (*use)
        return TESSEL_OK;
    if (!in->data)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "template_options.variant",
                               "template extensor, variant drt: DRT needs the data or its "
                               "micro-tile statistics (saved statistics hold neither)");
    int rc = tessel_drt_stats_create(cut, in->data, o, a, own, diag);
    *use = *own;
    return rc;
}

/* DRT's options from the spec's strategy_options (micro_tile, growth). */
static void drt_options_of(const tessel_spec *spec, tessel_drt_options *o)
{
    tessel_drt_options_init(o);
    if (spec->strategy.micro[0])
        o->micro[0] = spec->strategy.micro[0];
    if (spec->strategy.micro[1])
        o->micro[1] = spec->strategy.micro[1];
    o->growth = spec->strategy.growth ? TESSEL_DRT_GROW_ALTERNATING
                                      : TESSEL_DRT_GROW_CONTRACTED_FIRST;
}

static int drt_outer(const tessel_spec *spec, const tessel_strategy_inputs *in,
                     tessel_strategy_estimator est, const tessel_allocator *a, ext_drt_run *run,
                     tessel_diag *diag)
{
    tessel_spec outer;
    strategy_spec(spec, "drt", 0, &outer);
    outer.nlevels = 2;
    tessel_drt_options *o = &run->options;
    drt_options_of(spec, o);
    memset(&run->summary, 0, sizeof(run->summary));
    double t0 = tpl_now();
    int rc;
    if (est == TESSEL_STRATEGY_EXACT) {
        rc = need_data(in, diag);
        if (!rc)
            rc = tessel_drt_exact(&outer, in->data, o, a, &run->outer, &run->summary, diag);
    } else {
        const tessel_drt_stats *st = NULL;
        tessel_drt_stats *own = NULL;
        rc = drt_stats_for(&outer, in, o, a, &st, &own, diag);
        if (!rc)
            rc = tessel_drt_stat(&outer, st, &run->outer, &run->summary, diag);
        tessel_drt_stats_free(&own);
    }
    run->seconds = tpl_now() - t0;
    return rc;
}

/* DRT's mean macro-tile edge of index x as a multiple of the inner tile
 * (at least one inner tile; 0 = the whole mode). */
static uint64_t llb_edge(double mean, uint64_t inner, uint64_t extent)
{
    if (!inner || inner >= extent || !(mean > 0) || mean >= (double)extent)
        return 0;
    double steps = floor(mean / (double)inner + 0.5);
    uint64_t e = steps < 1 ? inner : (uint64_t)steps * inner;
    return e >= extent ? 0 : e;
}

/* The inner levels' prescient tiles and the LLB tile from DRT's mean
 * edges: the uniform spec the on-chip traffic is estimated on. */
static int drt_inner_spec(const tessel_spec *spec, const tessel_strategy_inputs *in,
                          tessel_strategy_estimator est, const tessel_allocator *a,
                          const ext_drt_run *run, const uint64_t *extent, tessel_spec *tiled,
                          tessel_strategy_choice *inner, tessel_diag *diag)
{
    tessel_spec s;
    strategy_spec(spec, "prescient", 0, &s);
    s.strategy.levels = 0;
    for (unsigned l = 2; l < spec->nlevels; l++)
        s.strategy.levels |= 1u << l;
    int rc = tessel_strategy_choose(&s, in, est, a, inner, diag);
    if (rc)
        return rc;
    tessel_strategy_apply(&s, inner, tiled);
    snprintf(tiled->strategy.name, sizeof(tiled->strategy.name), "%s",
             TESSEL_SPEC_STRATEGY_FIXED);
    for (unsigned x = 0; x < spec->workload.nindices; x++)
        tiled->level[1].tile[x] = llb_edge(run->summary.mean_edge[x], inner->tile[2][x],
                                           extent[x]);
    return TESSEL_OK;
}

/* DRAM and the LLB's DRAM side from DRT; the LLB's side towards the PE
 * buffers and everything below from the uniform estimate. */
static void merge_drt(const tessel_result *outer, const tessel_result *inner, tessel_result *out)
{
    *out = *inner;
    for (unsigned t = 0; t < outer->ntensors; t++) {
        out->traffic[0][t] = outer->traffic[0][t];
        tessel_traffic *llb = &out->traffic[1][t];
        const tessel_traffic *d = &outer->traffic[1][t];
        llb->fills = d->fills;
        llb->updates = d->updates;
        llb->writebacks = d->writebacks;
        llb->data_bytes = d->data_bytes;
        llb->metadata_bytes = d->metadata_bytes;
        llb->in_data = d->in_data;
        llb->in_metadata = d->in_metadata;
        llb->out_data = d->out_data;
        llb->out_metadata = d->out_metadata;
        llb->algorithmic = d->algorithmic;
        llb->skipped = d->skipped;
        llb->gated = d->gated;
        llb->bumped_bytes = d->bumped_bytes;
    }
    out->effectual_tiles[1] = outer->effectual_tiles[1];
    out->compulsory_bytes = outer->compulsory_bytes;
    /* DRT's LLB tiles are dynamic: no uniform tiles; its micro tiles'
     * metadata is the tiled metadata */
    out->tiled_metadata_bytes = outer->tiled_metadata_bytes;
    memset(out->tile[1], 0, sizeof(out->tile[1]));
    out->dram_bytes = outer->dram_bytes;
    out->output_nnz = outer->output_nnz;
    out->overflow_tiles = outer->overflow_tiles + inner->overflow_tiles;
    out->seconds = outer->seconds + inner->seconds;
    out->stats_seconds = outer->stats_seconds + inner->stats_seconds;
}

static void drt_choice_text(const tessel_spec *spec, const ext_drt_run *run,
                            const tessel_strategy_choice *inner, const uint64_t *extent,
                            tessel_strategy_choice *ch)
{
    size_t n = sizeof(ch->shape);
    size_t len = (size_t)snprintf(ch->shape, n, "%s dynamic %llux%llu mean", spec->level[1].name,
                                  (unsigned long long)run->options.micro[0],
                                  (unsigned long long)run->options.micro[1]);
    for (unsigned x = 0; x < spec->workload.nindices && len + 1 < n; x++)
        len += (size_t)snprintf(ch->shape + len, n - len, "%s%s:%.0f", x ? "," : " ",
                                spec->workload.index_name[x], run->summary.mean_edge[x]);
    for (unsigned l = 2; l < spec->nlevels && len + 1 < n; l++) {
        len += (size_t)snprintf(ch->shape + len, n - len, " %s", spec->level[l].name);
        for (unsigned x = 0; x < spec->workload.nindices && len + 1 < n; x++) {
            uint64_t t = inner->tile[l][x] ? inner->tile[l][x] : extent[x];
            len += (size_t)snprintf(ch->shape + len, n - len, "%s%s:%llu", x ? "," : " ",
                                    spec->workload.index_name[x], (unsigned long long)t);
        }
    }
}

static int run_drt_variant(const tessel_spec *spec, const tessel_strategy_inputs *in,
                           tessel_strategy_estimator est, const tessel_allocator *a,
                           tessel_result *out, tessel_strategy_choice *ch, tessel_diag *diag)
{
    ext_drt_run run;
    int rc = drt_outer(spec, in, est, a, &run, diag);
    if (rc)
        return rc;
    memset(ch, 0, sizeof(*ch));
    ch->kind = TESSEL_STRATEGY_DRT;
    ch->levels = 1u << 1;
    ch->buffer_utilization = run.summary.buffer_utilization;
    ch->overbooking_rate = run.outer.overflow_tiles && run.summary.tasks
                               ? (double)run.outer.overflow_tiles / (double)run.summary.tasks
                               : 0;
    uint64_t extent[TESSEL_SPEC_MAX_INDICES] = { 0 };
    for (unsigned x = 0; x < spec->workload.nindices; x++)
        extent[x] = in->data ? in->data->extent[x] : spec->workload.extent[x];
    if (spec->nlevels == 2) {
        *out = run.outer;
        ch->seconds = run.seconds;
        tessel_strategy_choice none;
        memset(&none, 0, sizeof(none));
        drt_choice_text(spec, &run, &none, extent, ch);
        return TESSEL_OK;
    }
    /* from DRT statistics alone (no data) an extent the spec does not
     * give is unknown: its LLB edge is then rounded without a cap */
    for (unsigned x = 0; x < spec->workload.nindices; x++)
        if (!extent[x])
            extent[x] = UINT64_MAX;
    tessel_spec tiled;
    tessel_strategy_choice inner;
    rc = drt_inner_spec(spec, in, est, a, &run, extent, &tiled, &inner, diag);
    tessel_result on_chip;
    if (!rc)
        rc = tessel_strategy_run(&tiled, in, est, a, &on_chip, NULL, diag);
    if (rc)
        return rc;
    merge_drt(&run.outer, &on_chip, out);
    for (unsigned l = 1; l < spec->nlevels; l++)
        memcpy(ch->tile[l], l == 1 ? tiled.level[1].tile : inner.tile[l], sizeof(ch->tile[l]));
    ch->levels = (1u << spec->nlevels) - 2u;
    ch->seconds = run.seconds + inner.seconds;
    ch->candidates = inner.candidates;
    drt_choice_text(spec, &run, &inner, extent, ch);
    return TESSEL_OK;
}

/* ExTensor-OP-DRT with DRT at both buffer levels (drt §5.2.1: "DRT
 * subdivides tiles twice"): module drt's two-level walk, exact or on the
 * micro-tile statistics. The LLB's traffic with DRAM is the same as
 * run_drt_variant's; the LLB -> PE traffic comes from DRT's sub-tasks
 * instead of a uniform estimate. */
static int run_drt_levels(const tessel_spec *spec, const tessel_strategy_inputs *in,
                          tessel_strategy_estimator est, const tessel_allocator *a,
                          tessel_result *out, tessel_strategy_choice *ch, tessel_diag *diag)
{
    tessel_spec cut;
    strategy_spec(spec, "drt", 0, &cut);
    cut.nlevels = 2;
    tessel_drt_options o;
    drt_options_of(spec, &o);
    tessel_drt_summary sum[2];
    memset(sum, 0, sizeof(sum));
    double t0 = tpl_now();
    int rc;
    if (est == TESSEL_STRATEGY_EXACT) {
        rc = need_data(in, diag);
        if (!rc)
            rc = tessel_drt_levels_exact(spec, in->data, &o, a, out, sum, diag);
    } else {
        const tessel_drt_stats *st = NULL;
        tessel_drt_stats *own = NULL;
        rc = drt_stats_for(&cut, in, &o, a, &st, &own, diag);
        if (!rc)
            rc = tessel_drt_levels_stat(spec, st, o.growth, out, sum, diag);
        tessel_drt_stats_free(&own);
    }
    if (rc)
        return rc;
    memset(ch, 0, sizeof(*ch));
    ch->kind = TESSEL_STRATEGY_DRT;
    ch->levels = (1u << 1) | (1u << 2);
    ch->buffer_utilization = sum[0].buffer_utilization;
    ch->seconds = tpl_now() - t0;
    size_t n = sizeof(ch->shape), len = 0;
    for (unsigned l = 1; l < 3 && len + 1 < n; l++) {
        len += (size_t)snprintf(ch->shape + len, n - len, "%s%s dynamic %llux%llu mean",
                                l > 1 ? " " : "", spec->level[l].name,
                                (unsigned long long)o.micro[0], (unsigned long long)o.micro[1]);
        for (unsigned x = 0; x < spec->workload.nindices && len + 1 < n; x++)
            len += (size_t)snprintf(ch->shape + len, n - len, "%s%s:%.0f", x ? "," : " ",
                                    spec->workload.index_name[x], sum[l - 1].mean_edge[x]);
    }
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */

const char *tessel_template_extensor_strategy(const tessel_spec *spec)
{
    ext_variant v;
    ext_drt_levels lv;
    if (tessel_template_of(spec) != TESSEL_TEMPLATE_EXTENSOR || read_options(spec, &v, &lv, NULL))
        return NULL;
    static const char *const strategy[EXT_COUNT] = { "conservative", "prescient", "swiftiles",
                                                     "drt" };
    return strategy[v];
}

int tessel_template_extensor_run(const tessel_spec *spec, const tessel_strategy_inputs *in,
                                 tessel_strategy_estimator est, const tessel_allocator *a,
                                 tessel_result *out, tessel_strategy_choice *choice,
                                 tessel_diag *diag)
{
    if (tessel_template_of(spec) != TESSEL_TEMPLATE_EXTENSOR)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "template",
                               "the spec does not name template extensor");
    ext_variant v;
    ext_drt_levels levels;
    int rc = read_options(spec, &v, &levels, diag);
    if (!rc)
        rc = check_spec(spec, diag);
    if (rc)
        return rc;
    tessel_strategy_choice local;
    tessel_strategy_choice *ch = choice ? choice : &local;
    tessel_strategy_inputs own = own_inputs(in);
    if (v == EXT_DRT && levels == EXT_DRT_ALL && spec->nlevels == 3)
        return run_drt_levels(spec, &own, est, a, out, ch, diag);
    if (v == EXT_DRT)
        return run_drt_variant(spec, &own, est, a, out, ch, diag);
    tessel_spec s;
    strategy_spec(spec, tessel_template_extensor_strategy(spec), v == EXT_N, &s);
    return tessel_strategy_run(&s, &own, est, a, out, ch, diag);
}

/* tessel_point_evaluate (point.h): the one place that decides which model
 * prices a design point (analytic, a template's descriptor, a tiling
 * strategy, or an estimator on the fixed mapping), for tessel run,
 * compare, map and sweep alike. */
#include <stdio.h>
#include <string.h>

#include "tessel/point.h"

const char *tessel_point_strategy(const tessel_spec *spec)
{
    const char *extensor = tessel_template_extensor_strategy(spec);
    if (extensor)
        return extensor;
    return tessel_strategy_is_fixed(spec) ? TESSEL_SPEC_STRATEGY_FIXED : spec->strategy.name;
}

int tessel_point_may_overbook(const char *strategy)
{
    /* swiftiles (and ExTensor-OB, which runs it) overbooks on purpose */
    return strategy && strcmp(strategy, "swiftiles") == 0;
}

int tessel_point_feasible(const tessel_result *r, const char *strategy, unsigned *level,
                          unsigned *tensor)
{
    if (tessel_point_may_overbook(strategy))
        return 1;
    /* the outermost level first: its overflow costs DRAM traffic */
    for (unsigned l = 1; l < r->nlevels; l++)
        for (unsigned t = 0; t < r->ntensors; t++)
            if (r->traffic[l][t].overflow_tiles) {
                if (level)
                    *level = l;
                if (tensor)
                    *tensor = t;
                return 0;
            }
    return 1;
}

/* map --verify: the tiles a strategy decides for the stat estimator,
 * priced exactly; drt decides while it walks, so it runs exact. */
static int exact_on_stat_tiles(const tessel_point_request *req, tessel_point_result *out,
                               tessel_diag *diag)
{
    const tessel_spec *spec = req->spec;
    tessel_strategy_inputs in = { req->data, req->stats, req->drt_stats };
    if (tessel_strategy_from_name(spec->strategy.name) == TESSEL_STRATEGY_DRT)
        return tessel_strategy_run(spec, &in, TESSEL_STRATEGY_EXACT, req->alloc, &out->result,
                                   NULL, diag);
    int rc = tessel_strategy_choose(spec, &in, TESSEL_STRATEGY_STAT, req->alloc, &out->choice,
                                    diag);
    if (rc)
        return rc;
    out->has_choice = 1;
    tessel_spec tiled;
    tessel_strategy_apply(spec, &out->choice, &tiled);
    return tessel_model_exact(&tiled, req->data, req->alloc, &out->result, diag);
}

tessel_point_route tessel_point_route_of(const tessel_point_request *req)
{
    if (req->estimator == TESSEL_POINT_ANALYTIC)
        return TESSEL_POINT_ROUTE_ANALYTIC;
    if (tessel_template_describe(tessel_template_of(req->spec)))
        return TESSEL_POINT_ROUTE_TEMPLATE;
    if (!tessel_strategy_is_fixed(req->spec) || req->decisions)
        return TESSEL_POINT_ROUTE_STRATEGY;
    return TESSEL_POINT_ROUTE_FIXED;
}

int tessel_point_wants_drt_stats(const tessel_point_request *req)
{
    return req->estimator == TESSEL_POINT_STAT &&
           tessel_point_route_of(req) == TESSEL_POINT_ROUTE_STRATEGY &&
           tessel_strategy_from_name(req->spec->strategy.name) == TESSEL_STRATEGY_DRT;
}

int tessel_point_decides_on_stats(const tessel_spec *spec)
{
    int k = tessel_strategy_from_name(tessel_point_strategy(spec));
    return k == TESSEL_STRATEGY_D2T2 ||
           (k == TESSEL_STRATEGY_CONSERVATIVE && !spec->strategy.dense_worst);
}

/* Whether the tiles decided under stat may differ from those -e exact
 * decides (issue 18: said on standard error and in summary.csv's
 * stat_design_may_differ): drt grows its tiles against an estimate of the
 * output table under stat (docs/models/strategies.md, DRT's output tile),
 * and a strategy that decides on statistics (tessel_point_decides_on_stats)
 * decides here on the caller's, whose base grid need not be the one it
 * collects for itself under exact. Without the data the strategy module
 * says so itself. */
static int design_may_differ(const tessel_point_request *req, tessel_point_route route)
{
    if (req->estimator != TESSEL_POINT_STAT ||
        (route != TESSEL_POINT_ROUTE_STRATEGY && route != TESSEL_POINT_ROUTE_TEMPLATE))
        return 0;
    if (tessel_strategy_from_name(tessel_point_strategy(req->spec)) == TESSEL_STRATEGY_DRT)
        return 1;
    return route == TESSEL_POINT_ROUTE_STRATEGY && req->stats && !req->decide_as_stat &&
           tessel_point_decides_on_stats(req->spec);
}

/* The dispatch (see point.h for the order). */
static int dispatch(const tessel_point_request *req, tessel_point_result *out, tessel_diag *diag)
{
    const tessel_spec *spec = req->spec;
    tessel_strategy_estimator est =
        req->estimator == TESSEL_POINT_STAT ? TESSEL_STRATEGY_STAT : TESSEL_STRATEGY_EXACT;
    switch (tessel_point_route_of(req)) {
    case TESSEL_POINT_ROUTE_ANALYTIC:
        return tessel_model_analytic(spec, req->alloc, &out->result, diag);
    case TESSEL_POINT_ROUTE_TEMPLATE: {
        const tessel_template_desc *tpl = tessel_template_describe(tessel_template_of(spec));
        tessel_template_call call = { spec, req->data, req->stats, est, req->alloc };
        out->has_choice = tpl->strategies != 0;
        out->has_sparsepipe = tpl->kind == TESSEL_TEMPLATE_SPARSEPIPE;
        return tpl->evaluate(&call, &out->result, &out->choice, &out->sparsepipe, diag);
    }
    case TESSEL_POINT_ROUTE_STRATEGY: {
        if (req->decide_as_stat && req->estimator == TESSEL_POINT_EXACT &&
            !tessel_strategy_is_fixed(spec))
            return exact_on_stat_tiles(req, out, diag);
        tessel_strategy_inputs in = { req->data, req->stats, req->drt_stats };
        out->has_choice = 1;
        return tessel_strategy_run_shared(spec, &in, req->shared, est, req->alloc,
                                          &out->result, &out->choice, diag);
    }
    case TESSEL_POINT_ROUTE_FIXED:
        break;
    }
    if (est == TESSEL_STRATEGY_STAT && !req->stats)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "estimator",
                               "the stat estimator on a fixed mapping needs its statistics");
    if (est == TESSEL_STRATEGY_STAT)
        return tessel_model_stat_eval_cached(spec, req->stats, req->stat_cache, &out->result,
                                             diag);
    return tessel_model_exact_opts(spec, req->data, req->alloc, req->exact, req->progress,
                                   req->progress_ud, &out->result, diag);
}

/* The inputs each estimator needs, checked before anything runs. */
static int check_request(const tessel_point_request *req, tessel_diag *diag)
{
    if (!req || !req->spec)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "spec",
                               "a design point needs a spec");
    const tessel_spec *spec = req->spec;
    switch (req->estimator) {
    case TESSEL_POINT_EXACT:
        if (!req->data)
            return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "estimator",
                                   "the exact estimator needs the data");
        return TESSEL_OK;
    case TESSEL_POINT_STAT:
        /* a strategy may collect its statistics from the data */
        if (!req->stats && !req->data)
            return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "estimator",
                                   "the stat estimator needs the data or its statistics");
        return TESSEL_OK;
    case TESSEL_POINT_ANALYTIC:
        return TESSEL_OK;
    }
    return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "estimator",
                           "unknown estimator %d", (int)req->estimator);
}

/* A spatial split (mapping.LEVEL.spatial) is priced on the spec's fixed
 * tiles from the data (exact) or the statistics (stat), and under drt on its
 * micro tiles from the data (docs/models/spatial.md); every other route
 * refuses it with the reason. */
static int spatial_refused(const tessel_point_request *req, tessel_diag *diag)
{
    const tessel_spec *spec = req->spec;
    int l = tessel_spatial_level(spec);
    if (l < 0)
        return TESSEL_OK;
    const tessel_spec_pos *p = &spec->level[l].spatial_pos;
    const char *why = NULL;
    tessel_point_route route = tessel_point_route_of(req);
    if (route == TESSEL_POINT_ROUTE_ANALYTIC)
        why = "the analytic estimator has density models, not the tiles of the data";
    else if (route == TESSEL_POINT_ROUTE_TEMPLATE)
        why = "a template prices its own PEs";
    else if (route == TESSEL_POINT_ROUTE_STRATEGY &&
             (req->decisions ||
              tessel_strategy_from_name(spec->strategy.name) != TESSEL_STRATEGY_DRT))
        why = "it is priced on the mapping's fixed tiles, and a strategy decides others "
              "(drt alone deals its micro tiles)";
    else if (req->estimator == TESSEL_POINT_STAT && route == TESSEL_POINT_ROUTE_STRATEGY &&
             !req->data)
        why = "under drt the split is priced from the data's micro tiles, and there is no data";
    else if (req->estimator == TESSEL_POINT_STAT && !req->stats)
        why = "-e stat needs the statistics";
    if (!why)
        return TESSEL_OK;
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, p->file, p->line, p->column,
                           "spatial", "spatial mapping at %s is not priced here: %s",
                           spec->level[l].name, why);
}

/* Bypass (mapping.LEVEL.bypass) re-routes the uniform-tile counts of exact,
 * stat and analytic (src/model/bypass.c); a template's buffer policy and
 * drt's dynamic tiles keep every tensor at every level, so they refuse it
 * with the reason rather than price a design they do not model. */
static int bypass_refused(const tessel_point_request *req, tessel_diag *diag)
{
    const tessel_spec *spec = req->spec;
    tessel_point_route route = tessel_point_route_of(req);
    int drt = route == TESSEL_POINT_ROUTE_STRATEGY &&
              tessel_strategy_from_name(spec->strategy.name) == TESSEL_STRATEGY_DRT;
    if (route != TESSEL_POINT_ROUTE_TEMPLATE && !drt)
        return TESSEL_OK;
    if (spec->compute.optimization) /* nor the compute's (src/model/model_scalar.c) */
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->compute.pos.file,
                               spec->compute.pos.line, spec->compute.pos.column,
                               "compute_optimization",
                               "compute gating or skipping is not priced by %s (use the fixed "
                               "mapping or another strategy)", drt ? "drt" : "a template");
    for (unsigned l = 0; l < spec->nlevels; l++) {
        /* the same for scalar action_optimization (src/model/model_scalar.c):
         * their walks count no scalar traversals */
        for (unsigned t = 0; t < spec->workload.ntensors; t++) {
            const tessel_spec_sparse *sp = &spec->level[l].tensor[t].sparse;
            if (sp->scalar_skip_on | sp->scalar_gate_on)
                return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->level[l].pos.file,
                                       spec->level[l].pos.line, spec->level[l].pos.column,
                                       "action_optimization",
                                       "scalar skipping or gating at %s is not priced by %s "
                                       "(use the fixed mapping or another strategy)",
                                       spec->level[l].name, drt ? "drt" : "a template");
        }
        if (!spec->level[l].bypass)
            continue;
        const tessel_spec_pos *p = &spec->level[l].bypass_pos;
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, p->file, p->line, p->column, "bypass",
                               "bypass at %s is not priced here: %s", spec->level[l].name,
                               drt ? "drt's dynamic tiles hold every tensor at every level"
                                   : "a template's buffer policy holds every tensor at every "
                                     "level");
    }
    return TESSEL_OK;
}

/* A template with its own buffer policy (no strategies in its
 * descriptor: gamma, matraptor, outerspace, sparsepipe) decides its tiles
 * itself: a mapping.strategy would be ignored while summary.csv's strategy
 * column named it, so it is refused, as tessel compare refuses it (the
 * extensor template refuses one too: its variant decides). */
static int template_strategy_refused(const tessel_point_request *req, tessel_diag *diag)
{
    const tessel_spec *spec = req->spec;
    if (tessel_point_route_of(req) != TESSEL_POINT_ROUTE_TEMPLATE ||
        tessel_strategy_is_fixed(spec))
        return TESSEL_OK;
    const tessel_template_desc *tpl = tessel_template_describe(tessel_template_of(spec));
    if (tpl->strategies)
        return TESSEL_OK;
    const tessel_spec_pos *p = &spec->strategy.pos;
    return tessel_diag_set(diag, TESSEL_EINVAL, p->file ? p->file : spec->path, p->line,
                           p->column, "mapping.strategy",
                           "template %s decides its tiles by its own buffer policy: "
                           "mapping.strategy (here '%s') does not apply (use template: none "
                           "to run a strategy on the mapping)",
                           tpl->name, spec->strategy.name);
}

int tessel_point_evaluate(const tessel_point_request *req, tessel_point_result *out,
                          tessel_diag *diag)
{
    memset(out, 0, sizeof(*out));
    int rc = check_request(req, diag);
    if (rc)
        return rc;
    snprintf(out->strategy, sizeof(out->strategy), "%s", tessel_point_strategy(req->spec));
    rc = template_strategy_refused(req, diag);
    if (!rc)
        rc = spatial_refused(req, diag);
    if (!rc)
        rc = bypass_refused(req, diag);
    if (!rc)
        rc = dispatch(req, out, diag);
    if (!rc && design_may_differ(req, tessel_point_route_of(req)))
        out->result.stat_design_may_differ = 1;
    if (!rc && tessel_spatial_level(req->spec) >= 0)
        rc = req->estimator == TESSEL_POINT_STAT &&
                     tessel_point_route_of(req) == TESSEL_POINT_ROUTE_FIXED
                 ? tessel_model_spatial_stat(req->spec, req->stats, req->alloc,
                                             &out->result.spatial, diag)
                 : tessel_model_spatial(req->spec, req->data, req->alloc, &out->result.spatial,
                                        diag);
    if (!rc && req->estimator == TESSEL_POINT_STAT && req->stats &&
        tessel_point_route_of(req) == TESSEL_POINT_ROUTE_FIXED)
        rc = tessel_model_network_stat(req->spec, req->stats, req->alloc, &out->result, diag);
    if (rc)
        return rc;
    if (req->data) /* the pipeline timing's output pieces (docs/models/timing.md) */
        memcpy(out->result.extent, req->data->extent, sizeof(out->result.extent));
    out->feasible = tessel_point_feasible(&out->result, out->strategy, &out->overflow_level,
                                          &out->overflow_tensor);
    return TESSEL_OK;
}

void tessel_point_result_free(tessel_point_result *out)
{
    if (out)
        memset(out, 0, sizeof(*out));
}

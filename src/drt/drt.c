/* Module drt: the public entry points (include/tessel/drt.h), the roles
 * of the workload's tensors and the checks of what DRT models.
 *
 * Layout: drt_grid.c builds the micro-tile grids (drt §3.2.1, §4.1),
 * drt_output.c the output tables (exact symbolic multiplication, or the
 * statistical estimate), drt_walk.c forms the tasks (Algorithms 1 and 2)
 * and applies docs/semantics.md's traffic rules to them. */
#include <string.h>
#include <time.h>

#include "drt_internal.h"

void tessel_drt_options_init(tessel_drt_options *o)
{
    memset(o, 0, sizeof(*o));
    o->micro[0] = o->micro[1] = 32; /* drt §5.2.4 */
    o->growth = TESSEL_DRT_GROW_CONTRACTED_FIRST;
}

int tessel_drt_growth_from_name(const char *name)
{
    if (!name)
        return -1;
    if (!strcmp(name, "contracted-first"))
        return TESSEL_DRT_GROW_CONTRACTED_FIRST;
    if (!strcmp(name, "alternating"))
        return TESSEL_DRT_GROW_ALTERNATING;
    return -1;
}

const char *tessel_drt_growth_name(tessel_drt_growth g)
{
    return g == TESSEL_DRT_GROW_ALTERNATING ? "alternating" : "contracted-first";
}

int drt_oom(tessel_diag *diag)
{
    return tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int has_index(const tessel_spec_tensor *t, unsigned x)
{
    for (unsigned m = 0; m < t->rank; m++)
        if (t->index[m] == x)
            return 1;
    return 0;
}

static int unsupported_workload(const tessel_spec *s, tessel_diag *diag)
{
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, s->workload.pos.file, s->workload.pos.line,
                           s->workload.pos.column, "workload.einsum",
                           "DRT models SpMSpM (Z[i,j] = A[i,k] * B[k,j]) and SpMV; '%s' is "
                           "neither",
                           s->workload.einsum ? s->workload.einsum : "");
}

/* Which workload tensor is Z, A and B, and which workload index is i, j
 * and k; the one-buffer-level restriction. */
int drt_roles_of(const tessel_spec *s, drt_roles *r, tessel_diag *diag)
{
    memset(r, 0, sizeof(*r));
    const tessel_spec_workload *w = &s->workload;
    r->kind = w->kind;
    if (w->kind != TESSEL_WORKLOAD_SPMSPM && w->kind != TESSEL_WORKLOAD_SPMV)
        return unsupported_workload(s, diag);
    if (s->nlevels != 2)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, s->path, 0, 0, "architecture.levels",
                               "DRT is modelled at one buffer level below the backing store; "
                               "this architecture has %u storage levels (need exactly 2)",
                               s->nlevels);
    if (w->ntensors != 3)
        return unsupported_workload(s, diag);
    const tessel_spec_tensor *z = &w->tensor[0];
    int spmv = w->kind == TESSEL_WORKLOAD_SPMV;
    if (z->rank != (spmv ? 1u : 2u))
        return unsupported_workload(s, diag);
    int ta = -1;
    for (unsigned t = 1; t < 3; t++)
        if (w->tensor[t].rank == 2 && has_index(&w->tensor[t], z->index[0]) && ta < 0)
            ta = (int)t;
    if (ta < 0)
        return unsupported_workload(s, diag);
    unsigned tb = ta == 1 ? 2 : 1;
    const tessel_spec_tensor *sa = &w->tensor[ta], *sb = &w->tensor[tb];
    unsigned k = sa->index[0] == z->index[0] ? sa->index[1] : sa->index[0];
    if (k == z->index[0] || !has_index(sb, k) || sb->rank != (spmv ? 1u : 2u))
        return unsupported_workload(s, diag);
    r->spec_index[DRT_I] = (int)z->index[0];
    r->spec_index[DRT_K] = (int)k;
    r->spec_index[DRT_J] = -1;
    if (!spmv) {
        unsigned j = z->index[1];
        if (j == k || j == z->index[0] || !has_index(sb, j) || has_index(sa, j))
            return unsupported_workload(s, diag);
        r->spec_index[DRT_J] = (int)j;
    }
    r->tensor[DRT_Z] = 0;
    r->tensor[DRT_A] = (unsigned)ta;
    r->tensor[DRT_B] = tb;
    return TESSEL_OK;
}

static void result_init(const tessel_spec *spec, tessel_result *out, const char *estimator)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->estimator, sizeof(out->estimator), "%s", estimator);
    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
}

int drt_check_options(const tessel_drt_options *opt, tessel_diag *diag)
{
    if (!opt->micro[0] || !opt->micro[1] || opt->micro[0] > UINT32_MAX ||
        opt->micro[1] > UINT32_MAX)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "mapping.strategy_options.micro",
                               "micro tile edges must be between 1 and 2^32-1 (got %llux%llu)",
                               (unsigned long long)opt->micro[0],
                               (unsigned long long)opt->micro[1]);
    if (opt->growth != TESSEL_DRT_GROW_CONTRACTED_FIRST &&
        opt->growth != TESSEL_DRT_GROW_ALTERNATING)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0,
                               "mapping.strategy_options.growth", "unknown DRT growth mode %d",
                               (int)opt->growth);
    return TESSEL_OK;
}

int tessel_drt_exact(const tessel_spec *spec, const tessel_workload_data *data,
                     const tessel_drt_options *opt, const tessel_allocator *a,
                     tessel_result *out, tessel_drt_summary *summary, tessel_diag *diag)
{
    double t0 = now_seconds();
    tessel_drt_options defaults;
    if (!opt) {
        tessel_drt_options_init(&defaults);
        opt = &defaults;
    }
    result_init(spec, out, "exact");
    if (summary)
        memset(summary, 0, sizeof(*summary));
    int rc = drt_check_options(opt, diag);
    if (rc)
        return rc;
    drt_data d;
    rc = drt_data_build(spec, data, opt, a, &d, diag);
    d.partials = spec->strategy.dataflow != 0; /* out.mul for the outer product's tasks */
    if (!rc)
        rc = drt_output_exact(&d, data, diag);
    if (!rc)
        rc = drt_walk(spec, &d, opt->growth, out, summary, diag);
    drt_data_free(&d);
    snprintf(out->estimator, sizeof(out->estimator), "exact");
    out->seconds = now_seconds() - t0;
    return rc;
}

int tessel_drt_stats_create(const tessel_spec *spec, const tessel_workload_data *data,
                            const tessel_drt_options *opt, const tessel_allocator *a,
                            tessel_drt_stats **out, tessel_diag *diag)
{
    double t0 = now_seconds();
    *out = NULL;
    tessel_drt_options defaults;
    if (!opt) {
        tessel_drt_options_init(&defaults);
        opt = &defaults;
    }
    int rc = drt_check_options(opt, diag);
    if (rc)
        return rc;
    tessel_drt_stats *s = tessel_alloc(a, sizeof(*s));
    if (!s)
        return drt_oom(diag);
    memset(s, 0, sizeof(*s));
    s->growth = opt->growth;
    rc = drt_data_build(spec, data, opt, a, &s->d, diag);
    if (!rc)
        rc = drt_output_stat(&s->d, spec, data, diag);
    if (rc) {
        drt_data_free(&s->d);
        tessel_dealloc(a, s);
        return rc;
    }
    s->d.seconds = now_seconds() - t0;
    *out = s;
    return TESSEL_OK;
}

void tessel_drt_stats_free(tessel_drt_stats **s)
{
    if (!s || !*s)
        return;
    const tessel_allocator *a = (*s)->d.alloc;
    drt_data_free(&(*s)->d);
    tessel_dealloc(a, *s);
    *s = NULL;
}

double tessel_drt_stats_seconds(const tessel_drt_stats *s)
{
    return s ? s->d.seconds : 0;
}

int tessel_drt_stat_growth(const tessel_spec *spec, const tessel_drt_stats *s,
                           tessel_drt_growth growth, tessel_result *out,
                           tessel_drt_summary *summary, tessel_diag *diag)
{
    double t0 = now_seconds();
    result_init(spec, out, "stat");
    if (summary)
        memset(summary, 0, sizeof(*summary));
    int rc = drt_check_stats(spec, s, growth, diag);
    if (!rc)
        rc = drt_walk(spec, &s->d, growth, out, summary, diag);
    snprintf(out->estimator, sizeof(out->estimator), "stat");
    out->seconds = now_seconds() - t0;
    out->stats_seconds = s->d.seconds;
    return rc;
}

int drt_check_stats(const tessel_spec *spec, const tessel_drt_stats *s, tessel_drt_growth growth,
                    tessel_diag *diag)
{
    drt_roles r;
    int rc = drt_roles_of(spec, &r, diag);
    if (rc)
        return rc;
    if (memcmp(r.spec_index, s->d.roles.spec_index, sizeof(r.spec_index)) ||
        memcmp(r.tensor, s->d.roles.tensor, sizeof(r.tensor)) || r.kind != s->d.roles.kind)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "workload.einsum",
                               "the DRT statistics were collected for another einsum");
    if (growth != TESSEL_DRT_GROW_CONTRACTED_FIRST && growth != TESSEL_DRT_GROW_ALTERNATING)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0,
                               "mapping.strategy_options.growth", "unknown DRT growth mode %d",
                               (int)growth);
    return TESSEL_OK;
}

int tessel_drt_stat(const tessel_spec *spec, const tessel_drt_stats *s, tessel_result *out,
                    tessel_drt_summary *summary, tessel_diag *diag)
{
    return tessel_drt_stat_growth(spec, s, s->growth, out, summary, diag);
}

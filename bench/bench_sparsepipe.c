/* The Sparsepipe template (src/template/sparsepipe.c) on the shared
 * matrices.
 *
 *   bench_sparsepipe [MANIFEST.tsv] [--set KEY=VALUE ...]
 *
 * Run from the project root; default manifest ../shared/data/MANIFEST.tsv.
 * For every square `matrix` row: specs/sparsepipe.yaml with A bound to it
 * (plus the --set overrides, e.g. template_options.app=bfs).
 *
 * Table 1, the paper's Table I kind of figure: the nonzeros of A the OEI
 * dataflow keeps on chip between their OS and IS use, unbounded buffer,
 * most and mean over the steps, as a share of nnz, at one output per step
 * (subtensor 1, as the paper's Fig. 8) and at the spec's subtensor; exact.
 *
 * Table 2, traffic: the spec's design and a tight one (buffer_bytes = a
 * eighth of A's bytes and subtensor 64, so that eviction matters; the
 * stat path then spreads each 128 x 128 base tile over its steps): the
 * share of A kept on
 * chip, DRAM bytes per iteration and in total, the baseline's total and
 * the saving; then the stat path's relative error on the total and on the
 * mean hold (Table 1's avg) and the on-chip share (points), and the times (exact run, best of 3; stat run from
 * statistics collected once, best of 5). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/template.h"

#define MAX_SETS 16

typedef struct setup {
    const char *sets[MAX_SETS];
    size_t nsets;
} setup;

typedef struct loaded {
    tessel_spec *spec;
    tessel_workload_data *data;
} loaded;

static int load(loaded *l, const setup *su, const char *matrix, const char *extra1,
                const char *extra2)
{
    memset(l, 0, sizeof(*l));
    char bind[PATH_MAX + 32];
    if (bench_bind_matrix(bind, sizeof(bind), "A", matrix))
        return -1;
    const char *sets[MAX_SETS + 3];
    size_t n = 0;
    sets[n++] = bind;
    for (size_t i = 0; i < su->nsets; i++)
        sets[n++] = su->sets[i];
    if (extra1)
        sets[n++] = extra1;
    if (extra2)
        sets[n++] = extra2;
    l->spec = bench_spec_load("specs/sparsepipe.yaml", sets, n, matrix);
    l->data = l->spec ? bench_data_load(l->spec, matrix) : NULL;
    return l->data ? 0 : -1;
}

static void unload(loaded *l)
{
    tessel_workload_free(&l->data);
    tessel_spec_free(&l->spec);
}

typedef struct run_ctx {
    const loaded *l;
    const tessel_stat_data *stats;
    tessel_result r;
    tessel_sparsepipe_figures f;
    tessel_diag d;
} run_ctx;

static int run_exact(void *p)
{
    run_ctx *c = p;
    return tessel_template_sparsepipe(c->l->spec, c->l->data, NULL, NULL, &c->r, &c->f, &c->d);
}

static int run_stat(void *p)
{
    run_ctx *c = p;
    return tessel_template_sparsepipe(c->l->spec, NULL, c->stats, NULL, &c->r, &c->f, &c->d);
}

static double rel(double est, double truth)
{
    return truth != 0 ? (est - truth) / truth : 0;
}

static void table1_row(const char *name, const setup *su, const char *file)
{
    loaded l;
    if (load(&l, su, file, "template_options.subtensor=1", "template_options.buffer_bytes=unbounded"))
        return;
    run_ctx one = { .l = &l };
    if (run_exact(&one)) {
        fprintf(stderr, "%s: %s\n", name, one.d.message);
        unload(&l);
        return;
    }
    unload(&l);
    if (load(&l, su, file, "template_options.buffer_bytes=unbounded", NULL))
        return;
    run_ctx big = { .l = &l };
    if (run_exact(&big)) {
        fprintf(stderr, "%s: %s\n", name, big.d.message);
        unload(&l);
        return;
    }
    const tessel_sparsepipe_figures *a = &one.f, *b = &big.f;
    printf("%-22s %9llu %10llu %10.0f %6.1f%% %10.0f %6.1f%%   %10.0f %6.1f%% %10.0f %6.1f%%\n",
           name, (unsigned long long)a->rows, (unsigned long long)a->nnz, a->hold_max,
           100 * a->hold_max / (double)a->nnz, a->hold_avg, 100 * a->hold_avg / (double)a->nnz,
           b->hold_max, 100 * b->hold_max / (double)b->nnz, b->hold_avg,
           100 * b->hold_avg / (double)b->nnz);
    unload(&l);
}

static void table2_design(const char *name, const char *design, loaded *l)
{
    run_ctx ex = { .l = l }, st = { .l = l };
    double t_ex = bench_best_of(3, run_exact, &ex);
    if (t_ex < 0) {
        fprintf(stderr, "%s: %s\n", name, ex.d.message);
        return;
    }
    tessel_stat_data *s = NULL;
    tessel_diag d;
    if (tessel_stat_data_create(l->spec, l->data, NULL, NULL, &s, &d)) {
        fprintf(stderr, "%s: %s\n", name, d.message);
        return;
    }
    st.stats = s;
    double t_st = bench_best_of(5, run_stat, &st);
    if (t_st < 0) {
        fprintf(stderr, "%s: stat: %s\n", name, st.d.message);
        tessel_stat_data_free(&s);
        return;
    }
    const tessel_sparsepipe_figures *e = &ex.f, *a = &st.f;
    printf("%-22s %-6s %10llu %7.1f%% %12llu %13llu %13llu %7.1f%% %+8.2f%% %+8.2f%% %+7.1f "
           "%9.2f %9.1f\n",
           name, design, (unsigned long long)e->a_pass_bytes, 100 * e->onchip_fraction,
           (unsigned long long)(e->total_bytes / e->iterations),
           (unsigned long long)e->total_bytes, (unsigned long long)e->baseline_total_bytes,
           100 * e->saving, 100 * rel((double)a->total_bytes, (double)e->total_bytes),
           100 * rel(a->hold_avg, e->hold_avg),
           100 * (a->onchip_fraction - e->onchip_fraction), t_ex * 1e3, t_st * 1e6);
    tessel_stat_data_free(&s);
}

static void table2_row(const char *name, const setup *su, const char *file)
{
    loaded l;
    if (load(&l, su, file, NULL, NULL))
        return;
    table2_design(name, "spec", &l);
    /* a quarter of A's bytes (as the spec's design streams it) */
    run_ctx probe = { .l = &l };
    int rc = run_exact(&probe);
    unload(&l);
    if (rc)
        return;
    char tight[96];
    snprintf(tight, sizeof(tight), "template_options.buffer_bytes=%llu",
             (unsigned long long)(probe.f.a_pass_bytes / 8 + 1));
    if (load(&l, su, file, tight, "template_options.subtensor=64"))
        return;
    table2_design(name, "tight", &l);
    unload(&l);
}

typedef void (*row_fn)(const char *name, const setup *su, const char *file);

static int each_matrix(const char *manifest, const setup *su, row_fn fn)
{
    bench_manifest m;
    if (bench_manifest_open(&m, manifest))
        return 1;
    bench_manifest_row mx;
    while (bench_manifest_next(&m, &mx))
        if (mx.square) /* Sparsepipe's SpMV needs a square A */
            fn(mx.name, su, mx.file);
    bench_manifest_close(&m);
    return 0;
}

int main(int argc, char **argv)
{
    const char *manifest = "../shared/data/MANIFEST.tsv";
    setup su = { { 0 }, 0 };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && su.nsets < MAX_SETS)
            su.sets[su.nsets++] = argv[++i];
        else
            manifest = argv[i];
    }
    printf("Table 1: nonzeros of A held between their OS and IS use (unbounded buffer), exact\n");
    printf("%-22s %9s %10s %17s %17s   %17s %17s\n", "matrix", "rows", "nnz", "max (T=1)",
           "avg (T=1)", "max (spec T)", "avg (spec T)");
    if (each_matrix(manifest, &su, table1_row))
        return 1;
    printf("\nTable 2: DRAM traffic over all iterations; 'tight': buffer = A's bytes / 8, "
           "subtensor 64\n");
    printf("%-22s %-6s %10s %8s %12s %13s %13s %8s %9s %9s %7s %9s %9s\n", "matrix", "buffer",
           "A_bytes", "onchip", "per_iter", "total", "baseline", "saving", "stat_tot",
           "stat_hold", "stat_on", "exact_ms", "stat_us");
    return each_matrix(manifest, &su, table2_row);
}

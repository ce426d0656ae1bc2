/* The accelerator templates (module `template`) on the shared matrices.
 *
 *   bench_template [MANIFEST.tsv]   default ../shared/data/MANIFEST.tsv
 *
 * Run from the project root. For every `matrix` row of the manifest:
 * Z = A*A (A*A^T when A is not square) under specs/matraptor.yaml and
 * specs/outerspace.yaml with their template set (DRT's normalized system,
 * 8-byte values, 4-byte coordinates and offsets, Z written as COO).
 * Prints per template the exact path's DRAM bytes and DRAM / compulsory,
 * the stat path's relative error on the DRAM bytes and on nnz(Z), and the
 * time per evaluation: exact (the whole template run from the data, best
 * of 3), stat (one run from statistics collected once, best of 5), and
 * the statistics' collection once. Then the DRT simulator's rand1k_d1_A
 * for comparison when present. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "tessel/template.h"

typedef struct loaded {
    tessel_spec *spec;
    tessel_workload_data *data;
} loaded;

static int load(loaded *l, const char *tpl, const char *matrix, int transpose)
{
    memset(l, 0, sizeof(*l));
    char path[128], bind[PATH_MAX + 32], t[64];
    if (bench_bind_matrix(bind, sizeof(bind), "A", matrix))
        return -1;
    snprintf(path, sizeof(path), "specs/%s.yaml", tpl);
    snprintf(t, sizeof(t), "template=%s", tpl);
    const char *sets[3] = { bind, t, "workload.data.B='A^T'" };
    l->spec = bench_spec_load(path, sets, transpose ? 3 : 2, matrix);
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
} run_ctx;

static int run_exact(void *p)
{
    run_ctx *c = p;
    return tessel_template_run(c->l->spec, c->l->data, NULL, NULL, &c->r, NULL);
}

static int run_stat(void *p)
{
    run_ctx *c = p;
    return tessel_template_run(c->l->spec, NULL, c->stats, NULL, &c->r, NULL);
}

static double rel(double est, double truth)
{
    return truth != 0 ? (est - truth) / truth : 0;
}

static void row(const char *name, const char *tpl, const char *file, int transpose)
{
    loaded l;
    if (load(&l, tpl, file, transpose))
        return;
    run_ctx ex = { &l, NULL, { 0 } }, st = { &l, NULL, { 0 } };
    double t_ex = bench_best_of(3, run_exact, &ex);
    double t0 = bench_now();
    tessel_stat_data *s = NULL;
    tessel_diag d;
    int rc = tessel_stat_data_create(l.spec, l.data, NULL, NULL, &s, &d);
    double t_collect = bench_now() - t0;
    if (rc) {
        fprintf(stderr, "%s: %s\n", name, d.message);
        unload(&l);
        return;
    }
    st.stats = s;
    double t_st = bench_best_of(5, run_stat, &st);
    const tessel_result *e = &ex.r, *a = &st.r;
    printf("%-22s %-10s %12llu %7.2f %10llu %8.3f%% %8.3f%% %10.1f %9.1f %10.1f\n", name, tpl,
           (unsigned long long)e->dram_bytes, (double)e->dram_bytes / (double)e->compulsory_bytes,
           (unsigned long long)e->macs, 100 * rel((double)a->dram_bytes, (double)e->dram_bytes),
           100 * rel((double)a->output_nnz, (double)e->output_nnz), t_ex * 1e3, t_st * 1e6,
           t_collect * 1e3);
    tessel_stat_data_free(&s);
    unload(&l);
}

static void simulator(void)
{
    const char *f = "../shared/reference/simulator-outputs/rand1k_d1_A.mtx.gz";
    if (access(f, R_OK) != 0)
        return;
    printf("\nDRT simulator, rand1k_d1_A (A*A): tessel exact vs reference/simulator-outputs/drt\n");
    static const char *const tpls[2] = { "matraptor", "outerspace" };
    for (int i = 0; i < 2; i++) {
        loaded l;
        if (load(&l, tpls[i], f, 0))
            return;
        tessel_result r;
        tessel_diag d;
        if (tessel_template_run(l.spec, l.data, NULL, NULL, &r, &d) == 0) {
            uint64_t by[3];
            for (unsigned t = 0; t < 3; t++)
                by[t] = r.traffic[0][t].data_bytes + r.traffic[0][t].metadata_bytes;
            double sim = i == 0 ? 2873056.0 : 4227152.0;
            printf("  %-10s A %llu  B %llu  Z %llu  total %llu  (simulator total %.0f, %+.3f%%)\n",
                   tpls[i], (unsigned long long)by[1], (unsigned long long)by[2],
                   (unsigned long long)by[0], (unsigned long long)r.dram_bytes, sim,
                   100 * rel((double)r.dram_bytes, sim));
        }
        unload(&l);
    }
}

int main(int argc, char **argv)
{
    const char *manifest = argc > 1 ? argv[1] : "../shared/data/MANIFEST.tsv";
    bench_manifest m;
    if (bench_manifest_open(&m, manifest))
        return 1;
    printf("%-22s %-10s %12s %7s %10s %9s %9s %10s %9s %10s\n", "matrix", "template",
           "dram_bytes", "/compul", "multiplies", "stat_dram", "stat_nnzZ", "exact_ms",
           "stat_us", "collect_ms");
    bench_manifest_row mx;
    while (bench_manifest_next(&m, &mx)) {
        row(mx.name, "matraptor", mx.file, !mx.square);
        row(mx.name, "outerspace", mx.file, !mx.square);
    }
    bench_manifest_close(&m);
    simulator();
    return 0;
}

/* Cost of a design point with the stat estimator, against the exact
 * estimator on the same points in the same run.
 *
 *   bench_stat [FILE.mtx ...]    default: the three largest shared matrices
 *                                (../shared/data/mtx: bcsstk16, ca-CondMat,
 *                                wiki-Vote)
 *
 * Per matrix: the statistics are collected once; then the 27 points of
 * bench/accuracy.sh (Z = A*A, orders IJK/IKJ/KIJ x nine LLB tile shapes)
 * are evaluated from them, each the best of 5 runs, and once by the exact
 * estimator. Prints the per-point times, the ratio exact / stat, the
 * points per second, and the DRAM bytes of both (their relative error).
 * BENCH_STAT_ONLY=1 skips the exact runs (for profiling the stat path). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/model.h"

static const char *const orders[3] = { "IJK", "IKJ", "KIJ" };
/* i x k x j, as in bench/accuracy.sh */
static const uint64_t shapes[9][3] = {
    { 128, 128, 128 },  { 128, 512, 128 },  { 256, 256, 256 },
    { 512, 128, 512 },  { 128, 2048, 128 }, { 256, 1024, 256 },
    { 512, 512, 512 },  { 1024, 256, 1024 }, { 2048, 128, 2048 },
};

typedef struct eval_ctx {
    const tessel_spec *spec;
    const tessel_stat_data *stats;
    tessel_result result;
} eval_ctx;

static int eval_once(void *p)
{
    eval_ctx *c = p;
    tessel_diag d;
    return tessel_model_stat_eval(c->spec, c->stats, &c->result, &d);
}

static int bench_matrix(const char *path, tessel_tensor *a)
{
    tessel_workload_data d;
    memset(&d, 0, sizeof(d));
    d.ntensors = 3;
    d.tensor[1] = d.tensor[2] = a;
    d.extent[0] = d.extent[1] = d.extent[2] = a->dims[0];
    tessel_spec spec;
    uint64_t first[3] = { 128, 128, 128 };
    bench_spmspm_spec(&spec, "IJK", first);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    if (tessel_stat_data_create(&spec, &d, NULL, NULL, &stats, &diag)) {
        fprintf(stderr, "%s: %s\n", path, diag.message);
        return 1;
    }
    printf("%s: %llu x %llu, %llu nonzeros; statistics collected in %.3f s\n",
           bench_basename(path), (unsigned long long)a->dims[0], (unsigned long long)a->dims[1],
           (unsigned long long)a->nnz, tessel_stat_data_seconds(stats));
    printf("  %-5s %-16s %11s %11s %9s %9s\n", "order", "tile i x k x j", "exact s",
           "stat us", "exact/st", "dram err");
    double exact_total = 0, stat_total = 0, worst = 0;
    for (unsigned o = 0; o < 3; o++)
        for (unsigned s = 0; s < 9; s++) {
            uint64_t tile[3] = { shapes[s][0], shapes[s][2], shapes[s][1] }; /* i, j, k */
            bench_spmspm_spec(&spec, orders[o], tile);
            eval_ctx c = { &spec, stats, { 0 } };
            double st = bench_best_of(5, eval_once, &c);
            tessel_result exact;
            if (getenv("BENCH_STAT_ONLY")) { /* profiling the stat path alone */
                stat_total += st;
                continue;
            }
            if (st < 0 || tessel_model_exact(&spec, &d, NULL, &exact, &diag)) {
                printf("  %-5s error\n", orders[o]);
                continue;
            }
            double err = (double)c.result.dram_bytes / (double)exact.dram_bytes - 1;
            char name[48];
            snprintf(name, sizeof(name), "%llux%llux%llu", (unsigned long long)shapes[s][0],
                     (unsigned long long)shapes[s][1], (unsigned long long)shapes[s][2]);
            printf("  %-5s %-16s %11.4f %11.1f %9.0f %+8.2f%%\n", orders[o], name, exact.seconds,
                   st * 1e6, exact.seconds / st, 100 * err);
            exact_total += exact.seconds;
            stat_total += st;
            worst = fabs(err) > worst ? fabs(err) : worst;
        }
    printf("  all 27 points: exact %.3f s, stat %.3f ms (%.0f points/s), ratio %.0fx; "
           "largest |DRAM error| %.2f %%\n",
           exact_total, stat_total * 1e3, 27 / stat_total, exact_total / stat_total,
           100 * worst);
    printf("SUMMARY|stat point cost %s|%.1f us|ratio to exact %.0fx\n", bench_basename(path),
           stat_total / 27 * 1e6, exact_total / stat_total);
    tessel_stat_data_free(&stats);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const defaults[] = { "../shared/data/mtx/bcsstk16.mtx.gz",
                                            "../shared/data/mtx/ca-CondMat.mtx.gz",
                                            "../shared/data/mtx/wiki-Vote.mtx.gz" };
    int n = argc > 1 ? argc - 1 : 3;
    for (int i = 0; i < n; i++) {
        const char *path = argc > 1 ? argv[i + 1] : defaults[i];
        tessel_tensor *a = NULL;
        tessel_diag diag;
        tessel_load_options opt;
        tessel_load_options_init(&opt);
        if (tessel_tensor_load(path, &opt, NULL, &a, NULL, &diag)) {
            fprintf(stderr, "%s: %s\n", path, diag.message);
            return 1;
        }
        int rc = a->order == 2 && a->dims[0] == a->dims[1] ? bench_matrix(path, a) : 0;
        tessel_tensor_free(&a);
        if (rc)
            return rc;
    }
    return 0;
}

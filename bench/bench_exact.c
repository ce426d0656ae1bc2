/* Exact estimator cost per design point, against a baseline measured in the
 * same run: a plain row-wise symbolic SpGEMM (count of Z's nonzeros), the
 * least work any exact count of output traffic has to do.
 *
 *   bench_exact [FILE.mtx ...]     default: synthetic banded and R-MAT
 *                                  matrices of rma10's size (46,835 rows,
 *                                  ~2.3M nonzeros)
 * Prints per matrix, loop order and tile size: seconds, ratio to the
 * baseline, effectual tile iterations, and DRAM traffic over compulsory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/model.h"

/* Row-wise symbolic SpGEMM: nonzeros of A*A. */
static uint64_t symbolic_nnz(const tessel_tensor *a)
{
    uint64_t *mark = calloc(a->dims[1] + 1, sizeof(uint64_t)), nnz = 0;
    for (uint64_t i = 0; i < a->dims[0]; i++)
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            uint64_t k = a->idx[1][p];
            for (uint64_t q = a->ptr[k]; q < a->ptr[k + 1]; q++) {
                uint64_t j = a->idx[1][q];
                if (mark[j] != i + 1) {
                    mark[j] = i + 1;
                    nnz++;
                }
            }
        }
    free(mark);
    return nnz;
}

static void bench_matrix(const char *label, tessel_tensor *a)
{
    double t0 = bench_now();
    uint64_t znnz = symbolic_nnz(a);
    double base = bench_now() - t0;
    printf("%s: %llu x %llu, %llu nonzeros; Z=A*A has %llu; symbolic SpGEMM %.3f s\n", label,
           (unsigned long long)a->dims[0], (unsigned long long)a->dims[1],
           (unsigned long long)a->nnz, (unsigned long long)znnz, base);
    printf("  %-5s %6s %9s %8s %14s %10s\n", "order", "tile", "seconds", "x base", "eff. tiles",
           "dram/comp");
    static const char *orders[3] = { "IJK", "IKJ", "KIJ" };
    static const uint64_t tiles[3] = { 128, 1024, 8192 };
    tessel_workload_data d;
    memset(&d, 0, sizeof(d));
    d.ntensors = 3;
    d.tensor[1] = d.tensor[2] = a;
    d.extent[0] = d.extent[1] = d.extent[2] = a->dims[0];
    const char *only = getenv("BENCH_EXACT_ONLY"); /* e.g. "KIJ:128" */
    for (unsigned o = 0; o < 3; o++)
        for (unsigned t = 0; t < 3; t++) {
            char name[32];
            snprintf(name, sizeof(name), "%s:%llu", orders[o], (unsigned long long)tiles[t]);
            if (only && strcmp(only, name) != 0)
                continue;
            tessel_spec s;
            uint64_t shape[3] = { tiles[t], tiles[t], tiles[t] };
            bench_spmspm_spec(&s, orders[o], shape);
            tessel_result r;
            tessel_diag diag;
            if (tessel_model_exact(&s, &d, NULL, &r, &diag)) {
                printf("  %-5s %6llu  error: %s\n", orders[o], (unsigned long long)tiles[t],
                       diag.message);
                continue;
            }
            printf("  %-5s %6llu %9.3f %8.1f %14llu %10.2f\n", orders[o],
                   (unsigned long long)tiles[t], r.seconds, r.seconds / base,
                   (unsigned long long)r.effectual_tiles[1],
                   (double)r.dram_bytes / (double)r.compulsory_bytes);
        }
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            tessel_tensor *a = NULL;
            tessel_diag diag;
            tessel_load_options opt;
            tessel_load_options_init(&opt);
            if (tessel_tensor_load(argv[i], &opt, NULL, &a, NULL, &diag)) {
                fprintf(stderr, "%s: %s\n", argv[i], diag.message);
                return 1;
            }
            if (a->order == 2 && a->dims[0] == a->dims[1])
                bench_matrix(argv[i], a);
            tessel_tensor_free(&a);
        }
        return 0;
    }
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_BANDED);
    p.rows = p.cols = 46835;
    p.bandwidth = 600;
    p.density = 2329092.0 / (46835.0 * 1201.0);
    p.seed = 1;
    tessel_tensor *a = NULL;
    tessel_diag diag;
    if (tessel_generate(&p, NULL, &a, &diag)) {
        fprintf(stderr, "gen: %s\n", diag.message);
        return 1;
    }
    bench_matrix("banded (rma10-sized)", a);
    tessel_tensor_free(&a);
    tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
    p.rows = p.cols = 46835;
    p.nnz = 2329092;
    p.seed = 1;
    if (tessel_generate(&p, NULL, &a, &diag)) {
        fprintf(stderr, "gen: %s\n", diag.message);
        return 1;
    }
    bench_matrix("rmat (rma10-sized)", a);
    tessel_tensor_free(&a);
    return 0;
}

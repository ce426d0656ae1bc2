/* DRT (drt §3-5) against uniform tiling, and its stat path against its
 * exact path, on real matrices.
 *
 *   bench_drt [FILE.mtx ...]   default: G51, bcsstk16, ca-CondMat,
 *                              p2p-Gnutella24 from ../shared/data/mtx
 *
 * Z = A*A on DRAM -> LLB of 256 KiB split A 5 %, B 45 %, Z 50 % (drt
 * §5.2.4), csr with 64-bit values and 32-bit coordinates, so the inputs do
 * not fit and tiling matters. Per matrix and loop order:
 *   suc    tessel_model_exact with uniform 32x32x32 tiles (S-U-C at the
 *          micro tile)
 *   extn   tessel_model_exact with the largest uniform square tile whose
 *          dense csr footprint fits both input partitions (ExTensor-N)
 *   drt    tessel_drt_exact, 32x32 micro tiles, contracted-first
 *   stat   tessel_drt_stat from statistics collected once
 * Prints DRAM bytes, the ratios, stat's relative error on Z's bytes and on
 * the total, and the time per evaluation (exact: everything; stat: one
 * design point from the statistics, best of 5). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/drt.h"
#include "tessel/model.h"

static const char *const orders[6] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };
static const char *const defaults[] = {
    "../shared/data/mtx/G51.mtx.gz",
    "../shared/data/mtx/bcsstk16.mtx.gz",
    "../shared/data/mtx/ca-CondMat.mtx.gz",
    "../shared/data/mtx/p2p-Gnutella24.mtx.gz",
};

#define LLB_BYTES (256u * 1024u)

static void drt_spec(tessel_spec *s, const char *order, uint64_t t)
{
    uint64_t tile[3] = { t, t, t };
    bench_spmspm_spec(s, order, tile);
    s->level[1].capacity = LLB_BYTES;
    s->level[1].tensor[0].partition_fraction = 0.50;
    s->level[1].tensor[1].partition_fraction = 0.05;
    s->level[1].tensor[2].partition_fraction = 0.45;
}

/* Largest T whose dense T x T csr tile fits both input partitions. */
static uint64_t extensor_n_tile(void)
{
    uint64_t part = (uint64_t)(0.05 * LLB_BYTES), t = 1;
    while (((t + 2) * 32 + (t + 1) * (t + 1) * 96 + 7) / 8 <= part)
        t++;
    return t;
}

typedef struct stat_ctx {
    const tessel_spec *spec;
    const tessel_drt_stats *stats;
    tessel_result r;
} stat_ctx;

static int stat_once(void *p)
{
    stat_ctx *c = p;
    tessel_diag d;
    return tessel_drt_stat(c->spec, c->stats, &c->r, NULL, &d);
}

static uint64_t tensor_bytes(const tessel_result *r, unsigned t)
{
    return r->traffic[0][t].data_bytes + r->traffic[0][t].metadata_bytes;
}

static int bench_matrix(const char *path)
{
    tessel_load_options lo;
    tessel_load_options_init(&lo);
    tessel_tensor *a = NULL;
    tessel_diag diag;
    if (tessel_tensor_load(path, &lo, NULL, &a, NULL, &diag)) {
        printf("%s: skipped (%s)\n", bench_basename(path), diag.message);
        return 0;
    }
    tessel_workload_data d;
    memset(&d, 0, sizeof(d));
    d.ntensors = 3;
    d.tensor[1] = d.tensor[2] = a;
    d.extent[0] = d.extent[1] = d.extent[2] = a->dims[0];
    if (a->dims[0] != a->dims[1]) {
        printf("%s: skipped (not square)\n", bench_basename(path));
        tessel_tensor_free(&a);
        return 0;
    }
    tessel_spec spec;
    drt_spec(&spec, "JKI", 32);
    tessel_drt_options opt;
    tessel_drt_options_init(&opt);
    tessel_drt_stats *st = NULL;
    if (tessel_drt_stats_create(&spec, &d, &opt, NULL, &st, &diag)) {
        printf("%s: %s\n", bench_basename(path), diag.message);
        tessel_tensor_free(&a);
        return 1;
    }
    uint64_t tn = extensor_n_tile();
    printf("%s: %llu x %llu, %llu nonzeros; DRT statistics in %.3f s; ExTensor-N tile %llu\n",
           bench_basename(path), (unsigned long long)a->dims[0], (unsigned long long)a->dims[1],
           (unsigned long long)a->nnz, tessel_drt_stats_seconds(st), (unsigned long long)tn);
    printf("  %-5s %12s %12s %12s %12s %7s %7s %8s %8s %9s %9s %8s\n", "order", "compulsory",
           "suc", "extn", "drt", "drt/suc", "drt/ex", "statZerr", "statErr", "exact s",
           "stat ms", "tasks");
    for (unsigned o = 0; o < 6; o++) {
        tessel_result suc, extn, ex;
        tessel_drt_summary sum;
        drt_spec(&spec, orders[o], 32);
        if (tessel_model_exact(&spec, &d, NULL, &suc, &diag)) {
            printf("  %-5s suc: %s\n", orders[o], diag.message);
            continue;
        }
        drt_spec(&spec, orders[o], tn);
        if (tessel_model_exact(&spec, &d, NULL, &extn, &diag)) {
            printf("  %-5s extn: %s\n", orders[o], diag.message);
            continue;
        }
        drt_spec(&spec, orders[o], 32);
        double t0 = bench_now();
        if (tessel_drt_exact(&spec, &d, &opt, NULL, &ex, &sum, &diag)) {
            printf("  %-5s drt: %s\n", orders[o], diag.message);
            continue;
        }
        double exact_s = bench_now() - t0;
        stat_ctx c = { &spec, st, { 0 } };
        double stat_s = bench_best_of(5, stat_once, &c);
        double zerr = tensor_bytes(&ex, 0)
                          ? (double)tensor_bytes(&c.r, 0) / (double)tensor_bytes(&ex, 0) - 1
                          : 0;
        double err = (double)c.r.dram_bytes / (double)ex.dram_bytes - 1;
        printf("  %-5s %12llu %12llu %12llu %12llu %7.3f %7.3f %+7.2f%% %+7.2f%% %9.3f %9.3f "
               "%8llu\n",
               orders[o], (unsigned long long)ex.compulsory_bytes,
               (unsigned long long)suc.dram_bytes, (unsigned long long)extn.dram_bytes,
               (unsigned long long)ex.dram_bytes, (double)ex.dram_bytes / (double)suc.dram_bytes,
               (double)ex.dram_bytes / (double)extn.dram_bytes, 100 * zerr, 100 * err, exact_s,
               1e3 * stat_s, (unsigned long long)sum.tasks);
        printf("        inputs A+B: suc %llu drt %llu; Z: suc %llu drt %llu stat %llu\n",
               (unsigned long long)(tensor_bytes(&suc, 1) + tensor_bytes(&suc, 2)),
               (unsigned long long)(tensor_bytes(&ex, 1) + tensor_bytes(&ex, 2)),
               (unsigned long long)tensor_bytes(&suc, 0), (unsigned long long)tensor_bytes(&ex, 0),
               (unsigned long long)tensor_bytes(&c.r, 0));
    }
    tessel_drt_stats_free(&st);
    tessel_tensor_free(&a);
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (argc > 1)
        for (int i = 1; i < argc; i++)
            rc |= bench_matrix(argv[i]);
    else
        for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
            rc |= bench_matrix(defaults[i]);
    return rc;
}

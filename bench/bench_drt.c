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
 * design point from the statistics, best of 5).
 *
 *   bench_drt --levels [--set KEY=VALUE] [FILE.mtx ...]
 *                      default: every matrix of ../shared/data/MANIFEST.tsv;
 *                      --set: one more spec setting for both runs, e.g.
 *                      mapping.PEB.order=KIJ
 *
 * ExTensor-OP-DRT on its three levels (specs/extensor-drt.yaml: DRAM ->
 * 30 MiB LLB -> 32 KiB PE buffers, drt §5.2.1), Z = A*A, through the
 * extensor template: drt_levels llb (DRT at the LLB, prescient uniform
 * PE tiles) against drt_levels all (DRT again inside each LLB task for
 * the PE buffers). Per matrix and estimator: LLB -> PE bytes of the
 * inputs and of Z, PE fills of A and B, PE sub-tasks, DRAM bytes (the
 * same for both), and the time per run (best of 3, load excluded) with
 * the ratio all/llb. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/drt.h"
#include "tessel/model.h"
#include "tessel/spec.h"
#include "tessel/template.h"

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

/* ------------------------------------------------------------------ */
/* --levels */

typedef struct lv_run {
    const tessel_spec *spec;
    const tessel_workload_data *data;
    tessel_strategy_estimator est;
    tessel_result r;
    tessel_strategy_choice c;
    int rc;
} lv_run;

static int lv_once(void *p)
{
    lv_run *x = p;
    tessel_strategy_inputs in = { x->data, NULL, NULL };
    tessel_diag d;
    x->rc = tessel_template_extensor_run(x->spec, &in, x->est, NULL, &x->r, &x->c, &d);
    return x->rc;
}

static uint64_t pe_bytes(const tessel_result *r, unsigned t)
{
    return r->traffic[2][t].data_bytes + r->traffic[2][t].metadata_bytes;
}

static int bench_levels(const char *path, const char *extra)
{
    char bind[1100];
    snprintf(bind, sizeof(bind), "workload.data.A=%s", path);
    const char *sets[2][3] = { { bind, "template_options.drt_levels=llb", extra },
                               { bind, "template_options.drt_levels=all", extra } };
    tessel_spec *spec[2] = { NULL, NULL };
    tessel_workload_data *data = NULL;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = 0;
    for (int m = 0; m < 2 && !rc; m++)
        rc = tessel_spec_load("specs/extensor-drt.yaml", sets[m], extra ? 3 : 2, NULL, &spec[m],
                              &errors);
    tessel_load_options lo;
    tessel_load_options_init(&lo);
    if (!rc)
        rc = tessel_workload_load(spec[0], &lo, NULL, &data, &errors);
    if (rc) {
        printf("%s: skipped (%s)\n", bench_basename(path),
               errors.count ? errors.items[0].message : "?");
        goto done;
    }
    for (int e = 0; e < 2; e++) {
        lv_run run[2];
        double sec[2];
        for (int m = 0; m < 2; m++) {
            memset(&run[m], 0, sizeof(run[m]));
            run[m].spec = spec[m];
            run[m].data = data;
            run[m].est = e ? TESSEL_STRATEGY_STAT : TESSEL_STRATEGY_EXACT;
            sec[m] = bench_best_of(3, lv_once, &run[m]);
            if (run[m].rc) {
                printf("%s: failed (%d)\n", bench_basename(path), run[m].rc);
                rc = 1;
                goto done;
            }
        }
        const tessel_result *l = &run[0].r, *a = &run[1].r;
        printf("%-22s %-5s %10llu %10llu %6.3f %8llu %8llu %6.3f %10llu %10llu %6.3f %8llu "
               "%7.3f %9.4f %9.4f %6.2f\n",
               bench_basename(path), e ? "stat" : "exact",
               (unsigned long long)(pe_bytes(l, 1) + pe_bytes(l, 2)),
               (unsigned long long)(pe_bytes(a, 1) + pe_bytes(a, 2)),
               (double)(pe_bytes(a, 1) + pe_bytes(a, 2)) /
                   (double)(pe_bytes(l, 1) + pe_bytes(l, 2)),
               (unsigned long long)(l->traffic[2][1].fills + l->traffic[2][2].fills),
               (unsigned long long)(a->traffic[2][1].fills + a->traffic[2][2].fills),
               (double)(a->traffic[2][1].fills + a->traffic[2][2].fills) /
                   (double)(l->traffic[2][1].fills + l->traffic[2][2].fills),
               (unsigned long long)pe_bytes(l, 0), (unsigned long long)pe_bytes(a, 0),
               (double)pe_bytes(a, 0) / (double)pe_bytes(l, 0),
               (unsigned long long)a->effectual_tiles[2],
               (double)a->dram_bytes / (double)l->dram_bytes, sec[0], sec[1], sec[1] / sec[0]);
    }
done:
    tessel_diag_list_free(&errors);
    tessel_workload_free(&data);
    tessel_spec_free(&spec[1]);
    tessel_spec_free(&spec[0]);
    return rc;
}

static int run_levels(int argc, char **argv)
{
    const char *extra = NULL;
    if (argc >= 2 && !strcmp(argv[0], "--set")) {
        extra = argv[1];
        argc -= 2, argv += 2;
    }
    printf("%-22s %-5s %10s %10s %6s %8s %8s %6s %10s %10s %6s %8s %7s %9s %9s %6s\n", "matrix",
           "est", "inPE llb", "inPE all", "ratio", "fill llb", "fill all", "ratio", "Z llb",
           "Z all", "ratio", "subtasks", "dram", "llb s", "all s", "t");
    int rc = 0;
    if (argc > 0) {
        for (int i = 0; i < argc; i++)
            rc |= bench_levels(argv[i], extra);
        return rc;
    }
    FILE *f = fopen("../shared/data/MANIFEST.tsv", "r");
    if (!f) {
        printf("../shared/data/MANIFEST.tsv: not found (run from the project root)\n");
        return 1;
    }
    char line[4096];
    while (fgets(line, sizeof(line), f)) {
        char name[256], file[512], kind[32];
        if (sscanf(line, "%255s %511s %31s", name, file, kind) != 3 || strcmp(kind, "matrix"))
            continue;
        char p[800];
        snprintf(p, sizeof(p), "../shared/data/%s", file);
        rc |= bench_levels(p, extra);
    }
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (argc > 1 && !strcmp(argv[1], "--levels"))
        return run_levels(argc - 2, argv + 2);
    if (argc > 1)
        for (int i = 1; i < argc; i++)
            rc |= bench_matrix(argv[i]);
    else
        for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
            rc |= bench_matrix(defaults[i]);
    return rc;
}

/* Gamma against the paper (gamma §6, Fig. 12): DRAM traffic normalised to
 * compulsory, without and with preprocessing, for both FiberCache
 * policies, next to OuterSPACE and MatRaptor, on the shared matrices.
 *
 *   bench_gamma [MANIFEST.tsv] [cache ...]
 *       default ../shared/data/MANIFEST.tsv, caches 3MiB 96KiB
 *
 * Run from the project root. For every `matrix` row of the manifest,
 * Z = A*A (A*A^T when A is not square, gamma §5) under specs/gamma.yaml:
 *   G    no preprocessing, fully associative LRU (policy lru)
 *   GR   reorder: affinity only
 *   GP   reorder: affinity + tiling: selective (gamma §4)
 *   Gs   policy set-associative (16 ways, 48 banks, 64-byte lines)
 *   GPs  both
 * and specs/outerspace.yaml, specs/matraptor.yaml with output_format csr,
 * so that the three share one compulsory traffic (A, B read once, Z
 * written once as CSR; only A's layout differs for OuterSPACE, CSC, same
 * size on square matrices). Columns: DRAM / compulsory of each; the stat
 * path's error on B's miss bytes (DRAM bytes of B) against the exact
 * trace, lru and set-associative, without preprocessing; the exact times
 * of G and Gs (best of 3) and their ratio, measured in the same
 * invocation. All of these keep the merger's partial output fibers (radix
 * rounds and tiled subrows) in the FiberCache (`partials: cache`, gamma
 * §3.3). Gm and GPm: G and GP with `partials: memory` (every partial fiber
 * written to DRAM and read back). statS and statST: the stat path's error
 * on the partial fibers' DRAM bytes (written + read back) against the
 * exact trace, as a share of the exact DRAM traffic (those bytes are often
 * 0), lru without preprocessing, and with tiling: selective (no
 * reordering: the stat path does not model it). Rows marked * are in
 * gamma's common set (gamma Table 3). Then the medians over all matrices
 * and over the common-set ones. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/model.h"
#include "tessel/template.h"

/* gamma Table 3: the common set (matrices of OuterSPACE's and SpArch's
 * evaluations); the shared data holds two of them */
static const char *const common_set[] = {
    "patents_main", "p2p-Gnutella31", "roadNet-CA", "webbase-1M", "m133-b3",
    "cit-Patents",  "mario002",       "web-Google", "scircuit",   "amazon0312",
    "ca-CondMat",   "email-Enron",    "wiki-Vote",  "cage12",     "2cubes_sphere",
    "offshore",     "cop20k_A",       "filter3D",   "poisson3Da",
};

static int in_common_set(const char *name)
{
    for (size_t i = 0; i < sizeof(common_set) / sizeof(common_set[0]); i++)
        if (strcmp(name, common_set[i]) == 0)
            return 1;
    return 0;
}

static tessel_spec *spec_of(const char *tpl, const char *matrix, int transpose,
                            const char *const *extra, int nextra)
{
    char path[128], bind[PATH_MAX + 32], t[64];
    if (bench_bind_matrix(bind, sizeof(bind), "A", matrix))
        return NULL;
    snprintf(path, sizeof(path), "specs/%s.yaml", tpl);
    snprintf(t, sizeof(t), "template=%s", tpl);
    const char *sets[12] = { bind, t, transpose ? "workload.data.B='A^T'" : "workload.data.B=A" };
    int n = 3;
    for (int i = 0; i < nextra && n < 12; i++)
        sets[n++] = extra[i];
    return bench_spec_load(path, sets, (size_t)n, matrix);
}

typedef struct run_ctx {
    const tessel_spec *spec;
    const tessel_workload_data *data;
    const tessel_stat_data *stats;
    tessel_result r;
} run_ctx;

static int run_one(void *p)
{
    run_ctx *c = p;
    tessel_diag d;
    int rc = tessel_template_run(c->spec, c->data, c->stats, NULL, &c->r, &d);
    if (rc)
        fprintf(stderr, "%s\n", d.message);
    return rc;
}

static double ratio(const tessel_result *r)
{
    return r->compulsory_bytes ? (double)r->dram_bytes / (double)r->compulsory_bytes : NAN;
}

/* The partial fibers' DRAM bytes: written and read back, twice level 1's
 * Z fill bytes. */
static double spill_bytes(const tessel_result *r)
{
    const tessel_traffic *z = &r->traffic[1][0];
    return 2 * (double)(z->in_data + z->in_metadata);
}

/* stat's error on them, as a share of the exact DRAM bytes */
static double spill_error(const tessel_result *st, const tessel_result *ex)
{
    return (spill_bytes(st) - spill_bytes(ex)) / (double)ex->dram_bytes;
}

static double b_bytes(const tessel_result *r)
{
    return (double)(r->traffic[0][2].data_bytes + r->traffic[0][2].metadata_bytes);
}

/* One template run (exact, or stat when stats is given); NAN ratio on error. */
static int run_variant(const char *tpl, const char *file, int transpose, const char *const *extra,
                       int nextra, const tessel_workload_data *data, const tessel_stat_data *stats,
                       int times, tessel_result *out, double *seconds)
{
    tessel_spec *spec = spec_of(tpl, file, transpose, extra, nextra);
    if (!spec)
        return -1;
    run_ctx c = { spec, stats ? NULL : data, stats, { 0 } };
    double t = bench_best_of(times, run_one, &c);
    tessel_spec_free(&spec);
    if (t < 0)
        return -1;
    *out = c.r;
    if (seconds)
        *seconds = t;
    return 0;
}

/* OuterSPACE or MatRaptor, exact, Z written as CSR, the data bound
 * through its own spec. */
static int baseline(const char *tpl, const char *file, int transpose, tessel_result *out)
{
    const char *csr[1] = { "template_options.output_format=csr" };
    tessel_spec *spec = spec_of(tpl, file, transpose, csr, 1);
    tessel_workload_data *data = spec ? bench_data_load(spec, file) : NULL;
    int rc = data ? run_variant(tpl, file, transpose, csr, 1, data, NULL, 1, out, NULL) : -1;
    tessel_workload_free(&data);
    tessel_spec_free(&spec);
    return rc;
}

typedef struct row_figures {
    double g, gr, gp, gs, gps, os, mr, err_lru, err_sa, t_g, t_gs, g_mem, gp_mem, err_s, err_st;
} row_figures;

static int figures(const char *file, int transpose, const char *cache, row_figures *f)
{
    char cb[64];
    snprintf(cb, sizeof(cb), "template_options.cache_bytes=%s", cache);
    const char *sa = "template_options.policy=set-associative";
    const char *pre[2] = { "template_options.reorder=affinity",
                           "template_options.tiling=selective" };
    const char *mem = "template_options.partials=memory";
    const char *g[1] = { cb }, *gs[2] = { cb, sa }, *gr[2] = { cb, pre[0] },
               *gp[3] = { cb, pre[0], pre[1] }, *gps[4] = { cb, sa, pre[0], pre[1] },
               *gm[2] = { cb, mem }, *gpm[4] = { cb, pre[0], pre[1], mem },
               *gt[2] = { cb, pre[1] };
    tessel_spec *base = spec_of("gamma", file, transpose, g, 1);
    tessel_workload_data *data = base ? bench_data_load(base, file) : NULL;
    tessel_stat_data *stats = NULL;
    tessel_diag d;
    int rc = data ? tessel_stat_data_create(base, data, NULL, NULL, &stats, &d) : -1;
    if (data && rc)
        fprintf(stderr, "%s: %s\n", file, d.message);
    tessel_result rg, rgr, rgp, rgs, rgps, ros, rmr, sg, sgs, rgm, rgpm, rgt, sgt;
    if (!rc)
        rc = run_variant("gamma", file, transpose, g, 1, data, NULL, 3, &rg, &f->t_g) ||
             run_variant("gamma", file, transpose, gs, 2, data, NULL, 3, &rgs, &f->t_gs) ||
             run_variant("gamma", file, transpose, gr, 2, data, NULL, 1, &rgr, NULL) ||
             run_variant("gamma", file, transpose, gp, 3, data, NULL, 1, &rgp, NULL) ||
             run_variant("gamma", file, transpose, gps, 4, data, NULL, 1, &rgps, NULL) ||
             run_variant("gamma", file, transpose, g, 1, data, stats, 1, &sg, NULL) ||
             run_variant("gamma", file, transpose, gs, 2, data, stats, 1, &sgs, NULL) ||
             run_variant("gamma", file, transpose, gm, 2, data, NULL, 1, &rgm, NULL) ||
             run_variant("gamma", file, transpose, gpm, 4, data, NULL, 1, &rgpm, NULL) ||
             run_variant("gamma", file, transpose, gt, 2, data, NULL, 1, &rgt, NULL) ||
             run_variant("gamma", file, transpose, gt, 2, data, stats, 1, &sgt, NULL);
    tessel_stat_data_free(&stats);
    tessel_workload_free(&data);
    tessel_spec_free(&base);
    if (!rc)
        rc = baseline("outerspace", file, transpose, &ros) ||
             baseline("matraptor", file, transpose, &rmr);
    if (rc)
        return -1;
    f->g_mem = ratio(&rgm), f->gp_mem = ratio(&rgpm);
    f->err_s = spill_error(&sg, &rg), f->err_st = spill_error(&sgt, &rgt);
    f->g = ratio(&rg), f->gr = ratio(&rgr), f->gp = ratio(&rgp), f->gs = ratio(&rgs),
    f->gps = ratio(&rgps);
    f->os = ratio(&ros), f->mr = ratio(&rmr);
    f->err_lru = (b_bytes(&sg) - b_bytes(&rg)) / b_bytes(&rg);
    f->err_sa = (b_bytes(&sgs) - b_bytes(&rgs)) / b_bytes(&rgs);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define MAXM 256
#define NCOL 14 /* G GR GP Gs GPs OS MR Gm GPm |statB| |statBs| Gs/G time |statS| |statST| */

typedef struct column_set {
    double v[NCOL][MAXM];
    size_t n;
} column_set;

static void columns(const row_figures *f, double x[NCOL])
{
    const double v[NCOL] = { f->g,
                             f->gr,
                             f->gp,
                             f->gs,
                             f->gps,
                             f->os,
                             f->mr,
                             f->g_mem,
                             f->gp_mem,
                             fabs(f->err_lru),
                             fabs(f->err_sa),
                             f->t_gs / f->t_g,
                             fabs(f->err_s),
                             fabs(f->err_st) };
    memcpy(x, v, sizeof(v));
}

static void keep(column_set *c, const row_figures *f)
{
    if (c->n >= MAXM)
        return;
    double x[NCOL];
    columns(f, x);
    for (int i = 0; i < NCOL; i++)
        c->v[i][c->n] = x[i];
    c->n++;
}

/* The medians, then the means (gamma §6.2 averages over its matrices). */
static void print_medians(const char *label, column_set *c)
{
    double m[NCOL], mean[NCOL];
    for (int i = 0; i < NCOL; i++) {
        mean[i] = 0;
        for (size_t j = 0; j < c->n; j++)
            mean[i] += c->v[i][j] / (double)c->n;
        m[i] = median(c->v[i], c->n);
    }
    for (int k = 0; k < 2; k++) {
        const double *x = k ? mean : m;
        printf("%-24s", k ? "  mean" : label);
        for (int i = 0; i < 9; i++)
            printf(" %6.3f", x[i]);
        printf("  |%5.1f%%|  |%5.1f%%|  |%5.2f%%|  |%5.2f%%|  time Gs/G %.2f (%zu matrices)\n",
               100 * x[9], 100 * x[10], 100 * x[12], 100 * x[13], x[11], c->n);
    }
}

static void table(const char *manifest, const char *cache)
{
    bench_manifest m;
    if (bench_manifest_open(&m, manifest))
        return;
    printf("\nFiberCache %s\n%-24s %6s %6s %6s %6s %6s %6s %6s %6s %6s %8s %8s %8s %8s %8s "
           "%8s\n",
           cache, "matrix", "G", "GR", "GP", "Gs", "GPs", "OS", "MR", "Gm", "GPm", "statB",
           "statBs", "statS", "statST", "G ms", "Gs ms");
    static column_set all, common;
    memset(&all, 0, sizeof(all));
    memset(&common, 0, sizeof(common));
    bench_manifest_row mx;
    while (bench_manifest_next(&m, &mx)) {
        row_figures r;
        if (figures(mx.file, !mx.square, cache, &r))
            continue;
        int cs = in_common_set(mx.name);
        char name[96];
        snprintf(name, sizeof(name), "%.80s%s", mx.name, cs ? " *" : "");
        double x[NCOL];
        columns(&r, x);
        printf("%-24s", name);
        for (int i = 0; i < 9; i++)
            printf(" %6.3f", x[i]);
        printf(" %+7.1f%% %+7.1f%% %+7.2f%% %+7.2f%% %8.2f %8.2f\n", 100 * r.err_lru,
               100 * r.err_sa, 100 * r.err_s, 100 * r.err_st, 1e3 * r.t_g, 1e3 * r.t_gs);
        fflush(stdout);
        keep(&all, &r);
        if (cs)
            keep(&common, &r);
    }
    bench_manifest_close(&m);
    print_medians("median, all", &all);
    print_medians("median, common set *", &common);
}

int main(int argc, char **argv)
{
    const char *manifest = argc > 1 ? argv[1] : "../shared/data/MANIFEST.tsv";
    printf("DRAM / compulsory: G Gamma, GR with affinity reordering, GP with "
           "preprocessing (affinity reorder + selective "
           "tiling), s set-associative (16 ways, 48 banks, 64 B lines); OS "
           "OuterSPACE, MR "
           "MatRaptor; partial fibers in the FiberCache (partials: cache), Gm GPm with "
           "partials: memory.\nstatB(s): stat error on B's miss bytes against the exact "
           "trace, lru "
           "(set-associative); statS(T): stat error on the partial fibers' DRAM bytes, "
           "share of exact DRAM (T: tiling selective).\n");
    if (argc > 2)
        for (int i = 2; i < argc; i++)
            table(manifest, argv[i]);
    else {
        table(manifest, "3MiB");
        table(manifest, "96KiB");
    }
    return 0;
}

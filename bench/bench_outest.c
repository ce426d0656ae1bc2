/* The stat estimator's output estimate with a sample that covers at most a
 * few percent of the multiplies (issue 18, point 3).
 *
 *   bench_outest [MANIFEST.tsv [SEEDS [FRACTION [ORDER]]]]
 *       defaults ../shared/data/MANIFEST.tsv, 8, 0.05, JKI
 *
 * Run from the project root. Z = A*A (A*A^T when A is not square) on
 * specs/extensor-llb.yaml (DRAM -> LLB) with fixed 256^3 LLB tiles, for
 * every `matrix` row of the manifest and for generated graphs (R-MAT,
 * uniform, and `clustered` at three sizes; written to a temporary .tsl).
 * A MANIFEST path that does not exist runs the generated graphs alone.
 * The output sample costs FRACTION of the multiplies (output_min_flops 0).
 * Per matrix: the exact output nonzeros; seed 1's estimate, relative error,
 * standard error and whether |err| <= 2 stderr; over SEEDS seeds the mean
 * and standard deviation of the relative error, how many seeds fall within
 * 2 stderr, and the mean and worst relative error of the total DRAM bytes
 * against -e exact; the same for the legacy draw (in proportion to
 * multiplies, calibrated to them) in the same run. A summary line pools
 * the matrices whose sample covers less than the whole output. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

typedef struct loaded {
    tessel_spec *spec;
    tessel_workload_data *data;
} loaded;

static const char *order = "JKI";

static int load(loaded *l, const char *matrix, int transpose)
{
    memset(l, 0, sizeof(*l));
    char bind[PATH_MAX + 32], ord[64];
    if (bench_bind_matrix(bind, sizeof(bind), "A", matrix))
        return -1;
    snprintf(ord, sizeof(ord), "mapping.LLB.order=%s", order);
    const char *sets[] = { bind, "mapping.strategy=fixed", "mapping.LLB.tile='i:256,k:256,j:256'",
                           ord, "workload.data.B='A^T'" };
    size_t n = sizeof(sets) / sizeof(sets[0]);
    l->spec = bench_spec_load("specs/extensor-llb.yaml", sets, transpose ? n : n - 1, matrix);
    l->data = l->spec ? bench_data_load(l->spec, matrix) : NULL;
    return l->data ? 0 : -1;
}

static void unload(loaded *l)
{
    tessel_workload_free(&l->data);
    tessel_spec_free(&l->spec);
}

/* Pooled over matrices: sums for the summary line. */
typedef struct pool {
    unsigned n;
    double err_new, abs_new, err_old, abs_old, dram_new, dram_old, covered, runs;
    double worst_new, worst_old, worst_dram_new, worst_dram_old;
} pool;

typedef struct per_seed {
    double err, dram_err, stderr_rel;
    int within;
} per_seed;

static int estimate(const loaded *l, uint64_t seed, double fraction, int legacy,
                    const tessel_result *x, per_seed *out)
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = fraction;
    o.output_min_flops = 0;
    o.seed = seed;
    o.output_legacy = legacy;
    tessel_result r;
    tessel_diag d;
    if (tessel_model_stat(l->spec, l->data, &o, NULL, &r, &d)) {
        fprintf(stderr, "stat: %s\n", d.message);
        return -1;
    }
    double truth = (double)x->output_nnz;
    out->err = truth > 0 ? (double)r.output_nnz / truth - 1 : 0;
    out->dram_err = (double)r.dram_bytes / (double)x->dram_bytes - 1;
    out->stderr_rel = r.output_nnz_has_stderr && truth > 0 ? r.output_nnz_stderr / truth : NAN;
    out->within = r.output_nnz_has_stderr &&
                  fabs((double)r.output_nnz - truth) <= 2 * r.output_nnz_stderr;
    return 0;
}

/* One matrix: exact, then new and old estimates over the seeds; prints its row. */
static void row(const char *name, const char *file, int transpose, unsigned seeds,
                double fraction, pool *pl)
{
    loaded l;
    if (load(&l, file, transpose))
        return;
    tessel_result x;
    tessel_diag d;
    if (tessel_model_exact(l.spec, l.data, NULL, &x, &d)) {
        fprintf(stderr, "%s: exact: %s\n", name, d.message);
        unload(&l);
        return;
    }
    double m_new = 0, s_new = 0, m_old = 0, worst_old = 0, dn = 0, dn_w = 0, dol = 0, do_w = 0;
    unsigned within = 0;
    per_seed first = { 0 };
    for (uint64_t seed = 1; seed <= seeds; seed++) {
        per_seed a, b;
        if (estimate(&l, seed, fraction, 0, &x, &a) || estimate(&l, seed, fraction, 1, &x, &b)) {
            unload(&l);
            return;
        }
        if (seed == 1)
            first = a;
        m_new += a.err / seeds;
        s_new += a.err * a.err / seeds;
        m_old += b.err / seeds;
        worst_old = fabs(b.err) > fabs(worst_old) ? b.err : worst_old;
        within += (unsigned)a.within;
        dn += a.dram_err / seeds;
        dn_w = fabs(a.dram_err) > fabs(dn_w) ? a.dram_err : dn_w;
        dol += b.dram_err / seeds;
        do_w = fabs(b.dram_err) > fabs(do_w) ? b.dram_err : do_w;
        if (pl && a.stderr_rel > 0) {
            pl->runs++;
            pl->covered += a.within;
            pl->worst_new = fabs(a.err) > pl->worst_new ? fabs(a.err) : pl->worst_new;
            pl->worst_old = fabs(b.err) > pl->worst_old ? fabs(b.err) : pl->worst_old;
            pl->worst_dram_new = fabs(a.dram_err) > pl->worst_dram_new ? fabs(a.dram_err)
                                                                        : pl->worst_dram_new;
            pl->worst_dram_old = fabs(b.dram_err) > pl->worst_dram_old ? fabs(b.dram_err)
                                                                        : pl->worst_dram_old;
        }
    }
    double sd = sqrt(s_new - m_new * m_new > 0 ? s_new - m_new * m_new : 0);
    printf("%-20s %10llu %11llu %10llu %+7.2f%% %6.2f%% %3s | %+7.2f%% %6.2f%% %2u/%-2u %+7.2f%% "
           "%+7.2f%% | %+7.2f%% %+7.2f%% %+7.2f%% %+7.2f%%\n",
           name, (unsigned long long)x.macs, (unsigned long long)x.output_nnz,
           (unsigned long long)llround((1 + first.err) * (double)x.output_nnz), 100 * first.err,
           100 * first.stderr_rel, first.within ? "yes" : "no", 100 * m_new, 100 * sd, within,
           seeds, 100 * dn, 100 * dn_w, 100 * m_old, 100 * worst_old, 100 * dol, 100 * do_w);
    if (pl && first.stderr_rel > 0) {
        pl->n++;
        pl->err_new += m_new;
        pl->abs_new += fabs(m_new);
        pl->err_old += m_old;
        pl->abs_old += fabs(m_old);
        pl->dram_new += fabs(dn);
        pl->dram_old += fabs(dol);
    }
    unload(&l);
}

typedef struct collect_ctx {
    const loaded *l;
    int legacy;
} collect_ctx;

static int collect(void *p)
{
    const collect_ctx *c = p;
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_legacy = c->legacy;
    tessel_stat_data *s = NULL;
    tessel_diag d;
    int rc = tessel_stat_data_create(c->l->spec, c->l->data, &o, NULL, &s, &d);
    tessel_stat_data_free(&s);
    return rc;
}

/* What the sketch pass adds to collecting the statistics (default
 * 2^19-multiply sample; best of 3). */
static void collect_cost(const char *name, const char *file)
{
    loaded l;
    if (load(&l, file, 0))
        return;
    collect_ctx a = { &l, 0 }, b = { &l, 1 };
    double tn = bench_best_of(3, collect, &a), to = bench_best_of(3, collect, &b);
    printf("collection %-20s new %8.1f ms, legacy %8.1f ms (x%.2f)\n", name, tn * 1e3, to * 1e3,
           tn / to);
    unload(&l);
}

/* A generated graph into a temporary .tsl, then a row. */
static void generated(const char *name, tessel_gen_params *p, unsigned seeds, double fraction,
                      pool *pl)
{
    char dir[] = "/tmp/bench-outest-XXXXXX", path[64];
    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof(path), "%s/g.tsl", dir);
    tessel_tensor *t = NULL;
    tessel_diag d;
    const tessel_cache_source none = { 0, 0, 0 };
    p->values = 0;
    if (tessel_generate(p, NULL, &t, &d) || tessel_cache_write(t, &none, path, &d)) {
        fprintf(stderr, "%s: %s\n", name, d.message);
    } else if (seeds) {
        row(name, path, 0, seeds, fraction, pl);
    } else {
        collect_cost(name, path);
    }
    tessel_tensor_free(&t);
    unlink(path);
    rmdir(dir);
}

static void clustered(const char *name, uint64_t n, uint64_t cliques, uint64_t tail, double skew,
                      unsigned seeds, double fraction, pool *pl)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_CLUSTERED);
    p.rows = p.cols = n;
    p.cliques = cliques;
    p.tail = tail;
    p.skew = skew;
    generated(name, &p, seeds, fraction, pl);
}

static void synthetic(const char *name, tessel_gen_kind kind, uint64_t n, uint64_t nnz,
                      unsigned seeds, double fraction, pool *pl)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, kind);
    p.rows = p.cols = n;
    p.nnz = nnz;
    generated(name, &p, seeds, fraction, pl);
}

int main(int argc, char **argv)
{
    const char *manifest = argc > 1 ? argv[1] : "../shared/data/MANIFEST.tsv";
    unsigned seeds = argc > 2 ? (unsigned)atoi(argv[2]) : 8;
    double fraction = argc > 3 ? atof(argv[3]) : 0.05;
    order = argc > 4 ? argv[4] : "JKI";
    setvbuf(stdout, NULL, _IOLBF, 0); /* rows as they come: a run takes minutes */
    if (seeds < 1 || !(fraction > 0 && fraction <= 1)) {
        fprintf(stderr, "usage: bench_outest [MANIFEST.tsv [SEEDS [FRACTION [ORDER]]]]\n");
        return 2;
    }
    printf("output sample %.3g of the multiplies, %u seeds, extensor-llb %s, fixed 256^3 tiles\n",
           fraction, seeds, order);
    printf("%-20s %10s %11s %10s %8s %7s %3s | %8s %7s %5s %8s %8s | %8s %8s %8s %8s\n", "matrix",
           "flops", "exact_nnz", "est(s1)", "err(s1)", "se(s1)", "2se", "mean_err", "sd_err",
           "in2se", "dram_mn", "dram_wc", "old_mean", "old_wc", "oldd_mn", "oldd_wc");
    pool pl = { 0 };
    bench_manifest m;
    if (bench_manifest_open(&m, manifest) == 0) {
        bench_manifest_row mx;
        while (bench_manifest_next(&m, &mx))
            row(mx.name, mx.file, !mx.square, seeds, fraction, &pl);
        bench_manifest_close(&m);
    }
    synthetic("gen-rmat-32k", TESSEL_GEN_RMAT, 32768, 1u << 18, seeds, fraction, &pl);
    synthetic("gen-uniform-64k", TESSEL_GEN_UNIFORM, 65536, 1u << 20, seeds, fraction, &pl);
    clustered("gen-clustered-10k", 10000, 7000, 5000, 0.9, seeds, fraction, &pl);
    clustered("gen-clustered-30k", 30000, 21000, 15000, 0.9, seeds, fraction, &pl);
    clustered("gen-clustered-60k", 60000, 42000, 30000, 0.8, seeds, fraction, &pl);
    printf("\n");
    synthetic("gen-rmat-32k", TESSEL_GEN_RMAT, 32768, 1u << 18, 0, fraction, NULL);
    clustered("gen-clustered-60k", 60000, 42000, 30000, 0.8, 0, fraction, NULL);
    if (pl.n) {
        printf("\n%u matrices whose sample is partial (%.0f runs): mean |mean err| new %.2f %%, "
               "old %.2f %%; mean err new %+.2f %%, old %+.2f %%\n",
               pl.n, pl.runs, 100 * pl.abs_new / pl.n, 100 * pl.abs_old / pl.n,
               100 * pl.err_new / pl.n, 100 * pl.err_old / pl.n);
        printf("worst |err| over all runs: nnz new %.2f %%, old %.2f %%; DRAM new %.2f %%, "
               "old %.2f %%; mean |mean DRAM err| new %.2f %%, old %.2f %%; within 2 stderr "
               "%.1f %% of runs\n",
               100 * pl.worst_new, 100 * pl.worst_old, 100 * pl.worst_dram_new,
               100 * pl.worst_dram_old, 100 * pl.dram_new / pl.n, 100 * pl.dram_old / pl.n,
               100 * pl.covered / pl.runs);
    }
    return 0;
}

/* Design points per second of tessel sweep, and where a point's time goes.
 *
 *   bench_sweep [MATRIX]    default ../shared/data/mtx/ca-CondMat.mtx.gz (the largest
 *                           shared matrix by nonzeros)
 *
 * Stages of one point on examples/sweep/spmspm-llb.yaml with the matrix bound to A
 * (B = A), each the best of 3 runs over many points: deriving the point's spec from
 * four --set-style overrides, its energy, the stat estimate (one tile shape, no memo),
 * the report record, the CSV rows. Then whole sweeps with 1 and 2 threads, with and
 * without the traffic memo (and the patched specs): bench/sweep/arch-only-*.yaml
 * (20,910 architectures of one mapping, on ca-CondMat and on G51), arch-condmat.yaml
 * (3,840 points: 6 mappings x 640 architectures) and ten-matrices.yaml (10,000 points
 * over 10 shared matrices). Run from the project root (the sweep files name
 * ../shared/data). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/energy.h"
#include "tessel/model.h"
#include "tessel/report.h"
#include "tessel/sweep.h"

#define STAGE_POINTS 20000

typedef struct stage_ctx {
    const tessel_spec *base;
    tessel_spec *spec;
    const tessel_energy_db *db;
    const tessel_stat_data *stats;
    tessel_design_energy energy;
    tessel_result result;
    tessel_report_point point;
    FILE *sink;
    int n;
} stage_ctx;

static const char *const arch_sets[4][4] = {
    { "architecture.levels.LLB.capacity=2MiB", "architecture.levels.DRAM.bandwidth=16",
      "architecture.compute.pes=64", "architecture.compute.clock=1" },
    { "architecture.levels.LLB.capacity=4MiB", "architecture.levels.DRAM.bandwidth=32",
      "architecture.compute.pes=128", "architecture.compute.clock=1.2" },
    { "architecture.levels.LLB.capacity=8MiB", "architecture.levels.DRAM.bandwidth=64",
      "architecture.compute.pes=256", "architecture.compute.clock=0.8" },
    { "architecture.levels.LLB.capacity=16MiB", "architecture.levels.DRAM.bandwidth=128",
      "architecture.compute.pes=32", "architecture.compute.clock=1.5" },
};

static int stage_derive(void *p)
{
    stage_ctx *c = p;
    for (int i = 0; i < c->n; i++) {
        tessel_spec *s = NULL;
        if (tessel_spec_derive(c->base, arch_sets[i & 3], 4, NULL, &s, NULL))
            return 1;
        tessel_spec_free(&s);
    }
    return 0;
}

static int stage_energy(void *p)
{
    stage_ctx *c = p;
    for (int i = 0; i < c->n; i++)
        if (tessel_energy_design(c->db, c->spec, &c->energy, NULL))
            return 1;
    return 0;
}

static int stage_estimate(void *p)
{
    stage_ctx *c = p;
    tessel_diag d;
    for (int i = 0; i < c->n; i++)
        if (tessel_model_stat_eval(c->spec, c->stats, &c->result, &d))
            return 1;
    return 0;
}

static int stage_record(void *p)
{
    stage_ctx *c = p;
    for (int i = 0; i < c->n; i++)
        if (tessel_report_point_build(c->spec, &c->result, &c->energy, "ca-CondMat", "fixed",
                                      &c->point, NULL))
            return 1;
    return 0;
}

static int stage_summary_csv(void *p)
{
    stage_ctx *c = p;
    for (int i = 0; i < c->n; i++)
        tessel_report_summary_csv_row(c->sink, &c->point);
    return 0;
}

static int stage_traffic_csv(void *p)
{
    stage_ctx *c = p;
    for (int i = 0; i < c->n; i++)
        tessel_report_traffic_csv_rows(c->sink, &c->point);
    return 0;
}

static void print_stage(const char *name, double seconds, int n)
{
    printf("  %-28s %9.2f us/point\n", name, 1e6 * seconds / n);
}

static int run_stages(const char *matrix)
{
    char set[4096];
    snprintf(set, sizeof(set), "workload.data.A=%s", matrix);
    const char *sets[1] = { set };
    stage_ctx c;
    memset(&c, 0, sizeof(c));
    tessel_spec *base = NULL;
    tessel_energy_db *db = NULL;
    tessel_workload_data *data = NULL;
    tessel_stat_data *stats = NULL;
    tessel_diag d;
    tessel_load_options load;
    tessel_load_options_init(&load);
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int bad = tessel_spec_load("examples/sweep/spmspm-llb.yaml", sets, 1, NULL, &base, &errors) ||
              tessel_energy_db_load(base, NULL, &db, &errors) ||
              tessel_workload_load(base, &load, NULL, &data, &errors);
    tessel_diag_list_free(&errors);
    if (bad ||
        tessel_stat_data_create(base, data, NULL, NULL, &stats, &d)) {
        fprintf(stderr, "bench_sweep: cannot set up %s (run from the project root)\n", matrix);
        return 1;
    }
    tessel_workload_free(&data);
    c.base = base;
    c.db = db;
    c.stats = stats;
    c.sink = fopen("/dev/null", "w");
    tessel_spec_derive(base, arch_sets[1], 4, NULL, &c.spec, NULL);
    tessel_energy_design(db, c.spec, &c.energy, NULL);
    tessel_model_stat_eval(c.spec, stats, &c.result, &d);
    printf("%s: one design point of examples/sweep/spmspm-llb.yaml (best of 3)\n",
           bench_basename(matrix));
    double total = 0, t;
    c.n = STAGE_POINTS;
    total += t = bench_best_of(3, stage_derive, &c);
    print_stage("spec (4 overrides)", t, c.n);
    total += t = bench_best_of(3, stage_energy, &c);
    print_stage("energy", t, c.n);
    c.n = 20;
    double est = bench_best_of(3, stage_estimate, &c);
    print_stage("stat estimate (no memo)", est, c.n);
    c.n = STAGE_POINTS;
    total += t = bench_best_of(3, stage_record, &c);
    print_stage("report record", t, c.n);
    double csv_sum = bench_best_of(3, stage_summary_csv, &c);
    print_stage("summary.csv row", csv_sum, c.n);
    double csv_tra = bench_best_of(3, stage_traffic_csv, &c);
    print_stage("traffic.csv rows (6)", csv_tra, c.n);
    double per = total / c.n;
    printf("  a point whose traffic is known (memo): %.2f us + %.2f us summary row"
           " = %.0f points/s per core\n", 1e6 * per, 1e6 * csv_sum / c.n,
           1.0 / (per + csv_sum / c.n));
    printf("  with traffic.csv rows too: %.0f points/s per core\n",
           1.0 / (per + (csv_sum + csv_tra) / c.n));
    printf("  a point with a new mapping: %.0f points/s per core\n",
           1.0 / (per + est / 20 + (csv_sum + csv_tra) / c.n));
    fclose(c.sink);
    tessel_spec_free(&c.spec);
    tessel_stat_data_free(&stats);
    tessel_energy_db_free(&db);
    tessel_spec_free(&base);
    return 0;
}

static int run_sweep(const char *file, unsigned threads, int memo)
{
    tessel_sweep *s = NULL;
    if (tessel_sweep_load(file, NULL, &s, NULL)) {
        fprintf(stderr, "bench_sweep: cannot load %s\n", file);
        return 1;
    }
    tessel_sweep_options o;
    tessel_sweep_options_init(&o);
    o.threads = threads;
    o.overwrite = 1;
    o.no_memo = !memo;
    tessel_sweep_report r;
    tessel_diag d;
    double t0 = bench_now();
    int rc = tessel_sweep_run(s, "bench-sweep-out", &o, NULL, &r, &d);
    double wall = bench_now() - t0;
    if (rc)
        fprintf(stderr, "bench_sweep: %s: %s\n", file, d.message);
    else
        printf("  %-28s %u thread%s, memo %-3s: %6llu points in %.3f s (%.3f s statistics):"
               " %8.0f points/s evaluating, %8.0f overall\n",
               bench_basename(file), threads, threads == 1 ? " " : "s", memo ? "on" : "off",
               (unsigned long long)r.points, wall, r.stats_seconds,
               (double)r.evaluated / r.eval_seconds, (double)r.points / wall);
    tessel_sweep_free(&s);
    return rc;
}

int main(int argc, char **argv)
{
    const char *matrix = argc > 1 ? argv[1] : "../shared/data/mtx/ca-CondMat.mtx.gz";
    if (run_stages(matrix))
        return 1;
    printf("\nwhole sweeps (output to bench-sweep-out/)\n");
    const char *files[] = { "bench/sweep/arch-only-ca-condmat.yaml",
                            "bench/sweep/arch-only-g51.yaml",
                            "bench/sweep/arch-condmat.yaml", "bench/sweep/ten-matrices.yaml" };
    for (size_t f = 0; f < 4; f++)
        for (unsigned threads = 1; threads <= 2; threads++)
            for (int memo = 1; memo >= 0; memo--)
                if (run_sweep(files[f], threads, memo))
                    return 1;
    return 0;
}

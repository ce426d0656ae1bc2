/* Design points per second of tessel sweep, and where a point's time goes.
 *
 *   bench_sweep [MATRIX]    default ../shared/data/mtx/ca-CondMat.mtx.gz (the largest
 *                           shared matrix by nonzeros)
 *
 * Stages of one point on examples/sweep/spmspm-llb.yaml with the matrix bound to A
 * (B = A), each the best of 3 runs over many points: deriving the point's spec from
 * four --set-style overrides, its energy, the stat estimate (one tile shape, no memo),
 * the report record, the CSV rows. Then the stat estimate of a new mapping without and
 * with the per-shape summaries (tessel_stat_cache), the two alternating point by point:
 * (a) a new partition or capacity of a seen shape and order, (b) a new loop order of a
 * seen shape, (c) a new shape. Then tessel map (--objective edp) for BENCH_MAP_SECONDS
 * (default 10) with and without the summaries, and whole sweeps with 1 and 2 threads,
 * with the memo (and patched specs and shape summaries), with capacities and
 * partitions derived per point instead of patched, and without the memo:
 * bench/sweep/arch-only-*.yaml (20,910 architectures of one mapping, on ca-CondMat and
 * on G51), arch-condmat.yaml (3,840 points: 6 mappings x 640 architectures),
 * shapes-ca-condmat.yaml (900 points: 6 shapes x 6 capacities x 25 partitions),
 * mapping-ca-condmat.yaml (15,552 points: 6 orders x 4 tiles x 8 capacities x 81
 * partitions, 1,920 invalid: --skip-invalid; without the memo only with
 * BENCH_NO_MEMO=1) and ten-matrices.yaml (10,000 points over 10 shared matrices);
 * BENCH_SWEEPS=WORD runs only the files whose name holds WORD. A sweep's line ends
 * with its estimates (points whose traffic was estimated, not taken from the memo),
 * the threads' CPU time and the busiest thread's (the wall time on idle cores: the
 * ratio of -j 1's CPU to -j 2's busiest is the speed-up on a loaded machine too). Run from the project
 * root (the sweep files name ../shared/data). */
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

/* ------------------------------------------------------------------ */
/* The stat estimate of a new mapping, without and with the summaries */

#define NEW_SHAPES 6
#define NEW_ORDERS 6
#define NEW_BUFFERS 8

static const char *const new_shapes[NEW_SHAPES] = {
    "i:128,k:128,j:128", "i:256,k:256,j:256", "i:128,k:1024,j:256",
    "i:512,k:512,j:512", "i:2048,k:256,j:1024", "i:4096,k:4096,j:4096",
};
static const char *const new_orders[NEW_ORDERS] = { "i,k,j", "i,j,k", "k,i,j",
                                                    "j,i,k", "j,k,i", "k,j,i" };
static const char *const new_buffers[NEW_BUFFERS][3] = {
    { "2MiB", "38%", "38%" }, { "1MiB", "30%", "38%" }, { "512KiB", "20%", "20%" },
    { "4MiB", "10%", "30%" }, { "256KiB", "34%", "10%" }, { "8MiB", "38%", "20%" },
    { "2MiB", "10%", "10%" }, { "1MiB", "34%", "34%" },
};

/* Shape s, order o, buffer b of the base spec. */
static tessel_spec *mapping_spec(const tessel_spec *base, unsigned s, unsigned o, unsigned b)
{
    char set[5][128];
    snprintf(set[0], sizeof(set[0]), "mapping.LLB.tile=%s", new_shapes[s]);
    snprintf(set[1], sizeof(set[1]), "mapping.LLB.order=%s", new_orders[o]);
    snprintf(set[2], sizeof(set[2]), "architecture.levels.LLB.capacity=%s", new_buffers[b][0]);
    snprintf(set[3], sizeof(set[3]), "architecture.levels.LLB.tensors.A.partition=%s",
             new_buffers[b][1]);
    snprintf(set[4], sizeof(set[4]), "architecture.levels.LLB.tensors.B.partition=%s",
             new_buffers[b][2]);
    const char *sets[5] = { set[0], set[1], set[2], set[3], set[4] };
    tessel_spec *spec = NULL;
    if (tessel_spec_derive(base, sets, 5, NULL, &spec, NULL))
        return NULL;
    return spec;
}

/* Seconds of one estimate; the result into *r. */
static double timed_estimate(const tessel_spec *spec, const tessel_stat_data *stats,
                             tessel_stat_cache *cache, tessel_result *r, int *bad)
{
    tessel_diag d;
    double t0 = bench_now();
    *bad |= tessel_model_stat_eval_cached(spec, stats, cache, r, &d) != 0;
    return bench_now() - t0;
}

typedef struct new_times {
    double plain, cached;
    unsigned points, differ;
} new_times;

/* Both estimates of spec, alternating, the best of 3 each: the cached
 * one on `cache`, or (cache NULL) on a fresh cache each time, warmed by
 * `warm` first (untimed) when given. */
static void compare_point(const tessel_spec *spec, const tessel_spec *warm,
                          const tessel_stat_data *stats, tessel_stat_cache *cache,
                          new_times *t, int *bad)
{
    tessel_result plain, cached;
    double best_plain = -1, best_cached = -1;
    for (int run = 0; run < 3 && !*bad; run++) {
        tessel_stat_cache *fresh = NULL;
        if (!cache)
            *bad |= tessel_stat_cache_create(stats, NULL, &fresh) != 0;
        tessel_stat_cache *use = cache ? cache : fresh;
        if (warm && !*bad)
            timed_estimate(warm, stats, use, &cached, bad);
        double p = timed_estimate(spec, stats, NULL, &plain, bad);
        double c = timed_estimate(spec, stats, use, &cached, bad);
        best_plain = best_plain < 0 || p < best_plain ? p : best_plain;
        best_cached = best_cached < 0 || c < best_cached ? c : best_cached;
        tessel_stat_cache_free(&fresh);
    }
    t->plain += best_plain;
    t->cached += best_cached;
    plain.seconds = cached.seconds = 0;
    t->points++;
    t->differ += memcmp(&plain, &cached, sizeof(plain)) != 0;
}

static void print_new(const char *name, const new_times *t)
{
    printf("  %-44s %9.1f us -> %8.2f us  (%8.2fx, %u points, %u differ)\n", name,
           1e6 * t->plain / t->points, 1e6 * t->cached / t->points, t->plain / t->cached,
           t->points, t->differ);
}

/* (a) buffers 1.. of each shape in IKJ after buffer 0; (b) the other
 * five orders of each shape after IKJ, each on a fresh cache; (c) every
 * shape in IKJ on a fresh cache. */
static int run_new_mappings(const tessel_spec *base, const tessel_stat_data *stats,
                            double *seen_shape)
{
    new_times a = { 0 }, b = { 0 }, c = { 0 };
    int bad = 0;
    for (unsigned s = 0; s < NEW_SHAPES && !bad; s++) {
        tessel_spec *first = mapping_spec(base, s, 0, 0);
        tessel_stat_cache *cache = NULL;
        bad |= !first || tessel_stat_cache_create(stats, NULL, &cache);
        if (!bad)
            compare_point(first, NULL, stats, NULL, &c, &bad);
        if (!bad) /* the shape seen, in IKJ at buffer 0 */
            timed_estimate(first, stats, cache, &(tessel_result){ 0 }, &bad);
        for (unsigned k = 1; k < NEW_BUFFERS && !bad; k++) {
            tessel_spec *spec = mapping_spec(base, s, 0, k);
            if (spec)
                compare_point(spec, NULL, stats, cache, &a, &bad);
            bad |= !spec;
            tessel_spec_free(&spec);
        }
        tessel_stat_cache_free(&cache);
        for (unsigned o = 1; o < NEW_ORDERS && !bad; o++) {
            tessel_spec *spec = mapping_spec(base, s, o, 0);
            bad |= !spec;
            if (!bad)
                compare_point(spec, first, stats, NULL, &b, &bad);
            tessel_spec_free(&spec);
        }
        tessel_spec_free(&first);
    }
    if (bad) {
        fprintf(stderr, "bench_sweep: a new-mapping point failed\n");
        return 1;
    }
    printf("\nstat estimate of a new mapping, without -> with the per-shape summaries\n");
    print_new("(a) new partition/capacity, seen shape+order", &a);
    print_new("(b) new loop order, seen shape", &b);
    print_new("(c) new tile shape (builds its summary)", &c);
    *seen_shape = (a.cached + b.cached) / (a.points + b.points);
    return 0;
}

static int run_map(const tessel_spec *base, const tessel_stat_data *stats,
                   const tessel_energy_db *db, const uint64_t *extent, double seconds,
                   int no_memo)
{
    tessel_map_options o;
    tessel_map_options_init(&o);
    o.objective = TESSEL_MAP_EDP;
    o.time_limit = seconds;
    o.no_memo = no_memo;
    tessel_map_result *r = malloc(sizeof(*r));
    tessel_diag d;
    if (!r || tessel_map_run(base, stats, db, extent, &o, r, &d)) {
        fprintf(stderr, "bench_sweep: tessel map: %s\n", r ? d.message : "out of memory");
        free(r);
        return 1;
    }
    printf("  tessel map --objective edp, summaries %-3s: %8llu points in %5.2f s: %8.0f points/s"
           "%s\n", no_memo ? "off" : "on", (unsigned long long)r->evaluated, r->seconds,
           (double)r->evaluated / r->seconds, r->complete ? " (the whole space)" : "");
    free(r);
    return 0;
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
    uint64_t extent[sizeof(data->extent) / sizeof(data->extent[0])];
    memcpy(extent, data->extent, sizeof(extent));
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
    double seen_shape = 0;
    int rc = run_new_mappings(base, stats, &seen_shape);
    if (!rc)
        printf("  a point with a new partition, capacity or order of a seen shape (spec,"
               " energy, estimate, record, summary row): %.0f points/s per core; with"
               " traffic.csv rows: %.0f\n",
               1.0 / (per + seen_shape + csv_sum / c.n),
               1.0 / (per + seen_shape + (csv_sum + csv_tra) / c.n));
    const char *env = getenv("BENCH_MAP_SECONDS");
    double map_seconds = env ? atof(env) : 10;
    if (!rc && map_seconds > 0) {
        printf("\nthe mapper on %s, %g s each\n", bench_basename(matrix), map_seconds);
        rc = run_map(base, stats, db, extent, map_seconds, 1) ||
             run_map(base, stats, db, extent, map_seconds, 0);
    }
    fclose(c.sink);
    tessel_spec_free(&c.spec);
    tessel_stat_data_free(&stats);
    tessel_energy_db_free(&db);
    tessel_spec_free(&base);
    return rc;
}

/* mode 2: memo and patched specs, capacities and partitions included; 1:
 * capacities and partitions derived per point (the memo, the pricing
 * patches on); 0: --no-memo. */
static int run_sweep(const char *file, unsigned threads, int mode)
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
    o.no_memo = mode == 0;
    o.derive_buffers = mode == 1;
    o.skip_invalid = 1;
    tessel_sweep_report r;
    tessel_diag d;
    double t0 = bench_now();
    int rc = tessel_sweep_run(s, "bench-sweep-out", &o, NULL, &r, &d);
    double wall = bench_now() - t0;
    if (rc)
        fprintf(stderr, "bench_sweep: %s: %s\n", file, d.message);
    else
        printf("  %-28s %u thread%s, %-20s: %6llu points in %.3f s (%.3f s statistics):"
               " %8.0f points/s evaluating, %8.0f overall; %llu estimates, CPU %.3f s,"
               " busiest thread %.3f s\n",
               bench_basename(file), threads, threads == 1 ? " " : "s",
               mode == 2 ? "memo on" : mode == 1 ? "memo, buffers derived" : "memo off",
               (unsigned long long)r.points, wall, r.stats_seconds,
               (double)r.evaluated / r.eval_seconds, (double)r.points / wall,
               (unsigned long long)(r.evaluated - r.memo_hits - r.invalid), r.eval_cpu_seconds,
               r.busiest_seconds);
    tessel_sweep_free(&s);
    return rc;
}

/* Without the memo, mapping-ca-condmat.yaml takes minutes (its 15,552
 * points each run the estimator in full): not run unless BENCH_NO_MEMO=1. */
static int skip_no_memo(const char *file)
{
    const char *all = getenv("BENCH_NO_MEMO");
    return strstr(file, "mapping") && !(all && strcmp(all, "1") == 0) ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *matrix = argc > 1 ? argv[1] : "../shared/data/mtx/ca-CondMat.mtx.gz";
    if (run_stages(matrix))
        return 1;
    printf("\nwhole sweeps (output to bench-sweep-out/)\n");
    const char *files[] = { "bench/sweep/arch-only-ca-condmat.yaml",
                            "bench/sweep/arch-only-g51.yaml", "bench/sweep/arch-condmat.yaml",
                            "bench/sweep/shapes-ca-condmat.yaml",
                            "bench/sweep/mapping-ca-condmat.yaml",
                            "bench/sweep/ten-matrices.yaml" };
    const char *only = getenv("BENCH_SWEEPS"); /* e.g. "shapes": files naming it */
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
        for (unsigned threads = 1; threads <= 2 && (!only || strstr(files[f], only)); threads++)
            for (int mode = 2; mode >= skip_no_memo(files[f]); mode--)
                if (run_sweep(files[f], threads, mode))
                    return 1;
    return 0;
}

/* tessel run: one design point from a spec: traffic, energy, roofline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.h"
#include "progress.h"
#include "commands.h"
#include "energy_cli.h"
#include "tessel/energy.h"
#include "tessel/model.h"
#include "tessel/report.h"
#include "tessel/spec.h"
#include "overflow_cli.h"
#include "strategy_cli.h"
#include "tessel/strategy.h"
#include "tessel/point.h"

#define DEFAULT_OUTPUT_DIR "tessel-out"

enum {
    OPT_HELP,
    OPT_TENSOR,
    OPT_SET,
    OPT_OUTPUT,
    OPT_FORMAT,
    OPT_QUIET,
    OPT_VERBOSE,
    OPT_ESTIMATOR,
    OPT_DRY_RUN,
    OPT_NO_TIMING,
    OPT_CACHE,
    OPT_NO_CACHE,
    OPT_REBUILD_CACHE,
    OPT_CACHE_DIR,
    OPT_DROP_ZEROS,
    OPT_COMPLEX,
    OPT_BASE,
    OPT_SAMPLE,
    OPT_SEED,
    OPT_OUTPUT_SAMPLE,
    OPT_NESTED_BUDGET,
    OPT_NESTED_FORMULA,
    OPT_STATS,
    OPT_SAVE_STATS,
    OPT_STRATEGY,
    OPT_STRICT,
    OPT_EXACT_WALK,
    OPT_EXACT_CHUNK,
    OPT_COUNT
};

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_TENSOR] = { "--tensor", "-T", 1 },
    [OPT_SET] = { "--set", "-s", 1 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_FORMAT] = { "--format", "-f", 1 },
    [OPT_QUIET] = { "--quiet", "-q", 0 },
    [OPT_VERBOSE] = { "--verbose", "-v", 0 },
    [OPT_ESTIMATOR] = { "--estimator", "-e", 1 },
    [OPT_DRY_RUN] = { "--dry-run", "-n", 0 },
    [OPT_NO_TIMING] = { "--no-timing", NULL, 0 },
    [OPT_CACHE] = { "--cache", NULL, 0 },
    [OPT_NO_CACHE] = { "--no-cache", NULL, 0 },
    [OPT_REBUILD_CACHE] = { "--rebuild-cache", NULL, 0 },
    [OPT_CACHE_DIR] = { "--cache-dir", NULL, 1 },
    [OPT_DROP_ZEROS] = { "--drop-zeros", NULL, 0 },
    [OPT_COMPLEX] = { "--complex", NULL, 1 },
    [OPT_BASE] = { "--base", NULL, 1 },
    [OPT_SAMPLE] = { "--sample", NULL, 1 },
    [OPT_SEED] = { "--seed", NULL, 1 },
    [OPT_OUTPUT_SAMPLE] = { "--output-sample", NULL, 1 },
    [OPT_NESTED_BUDGET] = { "--nested-budget", NULL, 1 },
    [OPT_NESTED_FORMULA] = { "--nested-formula", NULL, 0 },
    [OPT_STATS] = { "--stats", NULL, 1 },
    [OPT_SAVE_STATS] = { "--save-stats", NULL, 1 },
    [OPT_STRATEGY] = { "--strategy", "-S", 1 },
    [OPT_STRICT] = { "--strict", NULL, 0 },
    /* hidden, for tests/cli/walk_compare.py: the exact walk's options */
    [OPT_EXACT_WALK] = { "--exact-walk", NULL, 1 },
    [OPT_EXACT_CHUNK] = { "--exact-chunk", NULL, 1 },
};

/* tessel run --help. */
static void help(void)
{
    printf(
        "usage: tessel run SPEC [options]\n\n"
        "Models one design point: reads SPEC (workload, architecture, mapping; see\n"
        "docs/spec.md), the workload's tensors and the energy tables, estimates the\n"
        "traffic per memory level and tensor, the energy and the roofline cycles, writes\n"
        "traffic.csv and summary.csv into the output directory and prints a summary.\n\n"
        "options:\n"
        "  -T, --tensor NAME=DATA  bind input tensor NAME to DATA: a file (.mtx, .mtx.gz,\n"
        "                          .tns, .tns.gz, .tsl), another input (B=A), its\n"
        "                          transpose (B=A^T) or dense; the same as\n"
        "                          --set workload.data.NAME=DATA (repeatable)\n"
        "  -s, --set PATH=VALUE    override one spec key before validation, e.g.\n"
        "                          LLB.capacity=256KiB or mapping.LLB.order=KIJ (repeatable)\n"
        "  -o, --output DIR        output directory (default " DEFAULT_OUTPUT_DIR "); created\n"
        "                          when missing, its parent must exist\n"
        "  -f, --format FMT        csv (default: traffic.csv, summary.csv) or json\n"
        "                          (traffic.json, summary.json)\n"
        "  -S, --strategy NAME     tiling strategy (mapping.strategy): fixed (default: the\n"
        "                          mapping's tiles), conservative, prescient, swiftiles,\n"
        "                          drt or d2t2; options under mapping.strategy_options\n"
        "  -e, --estimator NAME    exact (default; walks the real tile grid), stat\n"
        "                          (D2T2: from per-tensor statistics, docs/data.md) or\n"
        "                          analytic (closed form from density models, no data)\n"
        "      --base RxC          stat: base tile grid of the statistics (default:\n"
        "                          the gcd of the spec's tile edges per index, at most\n"
        "                          128); edges off it are priced between grid shapes\n"
        "      --sample F          stat: fraction of base tiles sampled for Corrs\n"
        "                          (default 0.01)\n"
        "      --seed N            stat: seed of the samples (default 1)\n"
        "      --output-sample F   stat: the output rows multiplied out symbolically\n"
        "                          cost this fraction of all multiplies (default: a\n"
        "                          fixed 2^19 multiplies, or all when fewer); 0: none,\n"
        "                          the output's nonzeros follow D2T2's eq. 20 from Corrs\n"
        "      --nested-budget N   stat: nested levels whose work exceeds N base tile\n"
        "                          multiplies are estimated from a sample of level 1's\n"
        "                          i strips (default 0: every strip)\n"
        "      --nested-formula    stat: nested levels priced by a formula per tile\n"
        "                          shape instead of the merge walks (an estimate:\n"
        "                          stat_path formula)\n"
        "      --save-stats FILE   stat: also save the collected statistics (.tsd)\n"
        "      --stats FILE        stat: evaluate from saved statistics instead of the\n"
        "                          data (the spec's einsum must match; implies -e stat)\n"
        "      --strict            a tile larger than its partition (docs/semantics.md rule 4) is\n"
        "                          an error (exit 2, no files written) unless the strategy\n"
        "                          overbooks (swiftiles); without it, a fixed mapping\n"
        "                          that overflows gets a warning\n"
        "  -n, --dry-run           check the spec and price every component's energy\n"
        "                          (see tessel energy), print \"spec OK\" and stop\n"
        "  -q, --quiet             no summary on standard output and no progress\n"
        "  -v, --verbose           each step and its time on standard error\n"
        "      --no-timing         write model_seconds as 0 and leave times out of the\n"
        "                          summary, so repeated runs give identical files\n"
        "      --cache             use/refresh a binary cache FILE.tsl beside each tensor\n"
        "      --no-cache          do not use caches (default)\n"
        "      --rebuild-cache     rewrite the caches even if they look fresh\n"
        "      --cache-dir DIR     keep caches in DIR instead (implies --cache)\n"
        "      --drop-zeros        drop explicit zeros of the tensors (after summing\n"
        "                          duplicates)\n"
        "      --complex POLICY    magnitude (default: keep |z|) or reject\n\n"
        "Files given with --tensor or --set are relative to the current directory;\n"
        "write ./NAME for a file whose name is also a tensor's name.\n"
        "Files are written to temporary names and renamed when both are complete.\n"
        "Progress of the exact walk (levels walked, rate, time left) goes to standard\n"
        "error when it is a terminal.\n\n"
        "example:\n"
        "  tessel run specs/extensor.yaml --tensor A=examples/data/jagmesh7.mtx.gz \\\n"
        "      --set mapping.LLB.order=KIJ -o out\n\n"
        "The columns of traffic.csv and summary.csv are described in docs/outputs.md.\n");
}

typedef struct run_request {
    const char *spec_path;
    const char *out_dir;
    tessel_report_format format;
    int quiet, verbose, dry_run, no_timing;
    int strict; /* --strict: overflow the spec does not allow is an error */
    int stat;     /* --estimator stat */
    const char *stats_in, *stats_out; /* --stats, --save-stats */
    double nested_budget;             /* --nested-budget */
    int nested_formula;               /* --nested-formula */
    int analytic; /* --estimator analytic: no data loaded */
    tessel_stat_options stat_options;
    tessel_load_options load;
    tessel_exact_options exact; /* hidden --exact-walk, --exact-chunk */
    char **sets; /* malloc'd strings, in command-line order */
    size_t nsets;
} run_request;

static void request_free(run_request *req)
{
    for (size_t i = 0; i < req->nsets; i++)
        free(req->sets[i]);
    free(req->sets);
    req->sets = NULL;
    req->nsets = 0;
}

/* The hidden test options of the exact walk (tests/cli/walk_compare.py). */
static int parse_exact_options(const cli_args *args, run_request *req)
{
    const char *walk = cli_value(args, OPT_EXACT_WALK), *chunk = cli_value(args, OPT_EXACT_CHUNK);
    if (walk && strcmp(walk, "old") != 0 && strcmp(walk, "stream") != 0)
        return cli_usage_error("run", "--exact-walk must be old or stream, not '%s'", walk);
    req->exact.old_walk = walk && strcmp(walk, "old") == 0;
    if (chunk) {
        char *end = NULL;
        unsigned long long v = strtoull(chunk, &end, 10);
        if (end == chunk || *end || !v)
            return cli_usage_error("run", "--exact-chunk must be a positive count, not '%s'",
                                   chunk);
        req->exact.chunk_keys = (uint64_t)v;
    }
    return 0;
}

static int parse_stat_options(const cli_args *args, run_request *req)
{
    tessel_stat_options_init(&req->stat_options);
    const char *base = cli_value(args, OPT_BASE), *sample = cli_value(args, OPT_SAMPLE);
    const char *seed = cli_value(args, OPT_SEED), *osample = cli_value(args, OPT_OUTPUT_SAMPLE);
    if (!req->stat && (base || sample || seed || osample))
        return cli_usage_error("run", "--base, --sample, --seed and --output-sample need "
                                      "--estimator stat");
    if (req->stats_in && (base || sample || seed || osample))
        return cli_usage_error("run", "--base, --sample, --seed and --output-sample were fixed "
                                      "when the --stats file was saved");
    const char *nbudget = cli_value(args, OPT_NESTED_BUDGET);
    req->nested_budget = TESSEL_STAT_NESTED_BUDGET;
    if (nbudget && !req->stat)
        return cli_usage_error("run", "--nested-budget needs --estimator stat");
    if (nbudget && (cli_parse_double("run", "--nested-budget", nbudget, &req->nested_budget) ||
                    !(req->nested_budget >= 0)))
        return cli_usage_error("run", "--nested-budget must be >= 0, not '%s'", nbudget);
    req->nested_formula = cli_has(args, OPT_NESTED_FORMULA);
    if (req->nested_formula && !req->stat)
        return cli_usage_error("run", "--nested-formula needs --estimator stat");
    if (osample) {
        double f;
        if (cli_parse_double("run", "--output-sample", osample, &f))
            return CLI_EXIT_USAGE;
        if (!(f >= 0 && f <= 1))
            return cli_usage_error("run", "--output-sample must be in [0, 1], not '%s'",
                                   osample);
        /* an explicit fraction is taken as is, without the default's floor */
        req->stat_options.output_fraction = f;
        req->stat_options.output_min_flops = 0;
    }
    if (base) {
        unsigned long long shape[2];
        unsigned n = 0;
        if (cli_parse_shape("run", "--base", base, shape, 2, &n))
            return CLI_EXIT_USAGE;
        req->stat_options.base[0] = shape[0];
        req->stat_options.base[1] = n == 2 ? shape[1] : shape[0];
    }
    if (sample) {
        double f;
        if (cli_parse_double("run", "--sample", sample, &f))
            return CLI_EXIT_USAGE;
        if (!(f > 0 && f <= 1))
            return cli_usage_error("run", "--sample must be in (0, 1], not '%s'", sample);
        req->stat_options.sample_fraction = f;
    }
    if (seed) {
        unsigned long long v;
        if (cli_parse_u64("run", "--seed", seed, &v))
            return CLI_EXIT_USAGE;
        req->stat_options.seed = v;
    }
    return CLI_EXIT_OK;
}

/* tessel run's options into a run_request: spec, estimator, overrides in order, outputs,
 * statistics, caching. */
static int parse_request(const cli_args *args, run_request *req)
{
    memset(req, 0, sizeof(*req));
    tessel_load_options_init(&req->load);
    int npos = cli_positionals(args);
    if (npos == 0)
        return cli_usage_error("run", "no spec file (see tessel run --help)");
    if (npos > 1)
        return cli_usage_error("run", "one spec file at a time, not %d ('%s', '%s', ...)", npos,
                               cli_positional(args, 0), cli_positional(args, 1));
    req->spec_path = cli_positional(args, 0);
    const char *dir = cli_value(args, OPT_OUTPUT);
    req->out_dir = dir ? dir : DEFAULT_OUTPUT_DIR;
    if (!req->out_dir[0])
        return cli_usage_error("run", "--output needs a directory name");
    const char *fmt = cli_value(args, OPT_FORMAT);
    if (!fmt || strcmp(fmt, "csv") == 0)
        req->format = TESSEL_REPORT_CSV;
    else if (strcmp(fmt, "json") == 0)
        req->format = TESSEL_REPORT_JSON;
    else
        return cli_usage_error("run", "--format must be csv or json, not '%s'", fmt);
    const char *est = cli_value(args, OPT_ESTIMATOR);
    if (est && strcmp(est, "exact") != 0 && strcmp(est, "stat") != 0 &&
        strcmp(est, "analytic") != 0)
        return cli_usage_error("run", "--estimator must be exact, stat or analytic, not '%s'",
                               est);
    req->stats_in = cli_value(args, OPT_STATS);
    req->stats_out = cli_value(args, OPT_SAVE_STATS);
    if (req->stats_in && est && strcmp(est, "stat") != 0)
        return cli_usage_error("run", "--stats evaluates with the stat estimator, not '%s'", est);
    req->stat = (est && strcmp(est, "stat") == 0) || req->stats_in;
    if (req->stats_out && !req->stat)
        return cli_usage_error("run", "--save-stats needs --estimator stat");
    if (req->stats_in && req->stats_out)
        return cli_usage_error("run", "--stats and --save-stats together would only copy the file");
    req->analytic = est && strcmp(est, "analytic") == 0;
    int rc = parse_stat_options(args, req);
    if (rc)
        return rc;
    rc = parse_exact_options(args, req);
    if (rc)
        return rc;
    req->quiet = cli_has(args, OPT_QUIET);
    req->verbose = cli_has(args, OPT_VERBOSE);
    req->dry_run = cli_has(args, OPT_DRY_RUN);
    req->no_timing = cli_has(args, OPT_NO_TIMING);
    req->strict = cli_has(args, OPT_STRICT);
    req->load.drop_zeros = cli_has(args, OPT_DROP_ZEROS);
    const char *cx = cli_value(args, OPT_COMPLEX);
    if (cx && strcmp(cx, "reject") == 0)
        req->load.complex_policy = TESSEL_COMPLEX_REJECT;
    else if (cx && strcmp(cx, "magnitude") != 0)
        return cli_usage_error("run", "--complex must be magnitude or reject, not '%s'", cx);
    /* The cache options in command-line order: the last one wins. */
    req->load.cache_policy = TESSEL_CACHE_OFF;
    for (int i = 0; i < args->count; i++) {
        int o = args->option[i];
        if (o == OPT_CACHE)
            req->load.cache_policy = TESSEL_CACHE_USE;
        else if (o == OPT_NO_CACHE)
            req->load.cache_policy = TESSEL_CACHE_OFF;
        else if (o == OPT_REBUILD_CACHE)
            req->load.cache_policy = TESSEL_CACHE_REBUILD;
        else if (o == OPT_CACHE_DIR) {
            req->load.cache_dir = args->value[i];
            if (req->load.cache_policy == TESSEL_CACHE_OFF)
                req->load.cache_policy = TESSEL_CACHE_USE;
        }
    }
    if (req->load.cache_policy == TESSEL_CACHE_OFF)
        req->load.cache_dir = NULL;

    /* --set, --tensor and --strategy in command-line order, so a later one wins. */
    return cli_overrides("run", args, OPT_SET, OPT_TENSOR, OPT_STRATEGY, &req->sets, &req->nsets);
}

/* ------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void step_begin(const run_request *req, double *t0, const char *what, const char *arg)
{
    *t0 = now();
    if (req->verbose)
        fprintf(stderr, "tessel run: %s%s%s...\n", what, arg ? " " : "", arg ? arg : "");
}

static void step_end(const run_request *req, double t0, const char *what)
{
    if (req->verbose)
        fprintf(stderr, "tessel run: %s done in %.3f s\n", what, now() - t0);
}

/* The exact walk's progress on the shared meter (progress.h). A unit is one
 * storage level's walk (levels 1 .. nlevels-1, each walking the same
 * effectual iterations), so done counts levels walked plus the fraction of
 * the current one and never goes back. */
typedef struct progress_state {
    const tessel_spec *spec;
    cli_progress meter;
} progress_state;

static void progress_line(void *ud, unsigned level, double fraction)
{
    progress_state *p = ud;
    char extra[64];
    snprintf(extra, sizeof(extra), ", walking %s", p->spec->level[level].name);
    cli_progress_update(&p->meter, (double)(level - 1) + fraction,
                        (double)(p->spec->nlevels - 1), -1, extra);
}

typedef struct run_state {
    tessel_spec *spec;
    tessel_workload_data *data;
    tessel_energy_db *db;
    tessel_design_energy energy;
    tessel_result result;
    tessel_report_point point;
    tessel_stat_data *stats;
    tessel_strategy_choice choice;
    tessel_sparsepipe_figures sparsepipe; /* template sparsepipe's own figures */
    int has_choice, has_sparsepipe;       /* which of the two the estimate filled */
    const tessel_exact_options *exact;    /* the request's hidden walk options */
} run_state;

/* The design point through the one entry point (point.h), which decides
 * the model: analytic, the template, the strategy or the fixed mapping
 * (whose exact walk reports its progress). */
static int estimate(run_state *st, tessel_point_estimator est, progress_state *progress,
                    tessel_diag *d)
{
    tessel_point_request req = {
        .spec = st->spec,
        .estimator = est,
        .data = st->data,
        .stats = st->stats,
        .progress = progress ? progress_line : NULL,
        .progress_ud = progress,
        .exact = st->exact,
    };
    tessel_point_result *out = malloc(sizeof(*out));
    if (!out)
        return tessel_diag_set(d, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    int rc = tessel_point_evaluate(&req, out, d);
    if (!rc) {
        st->result = out->result;
        st->choice = out->choice;
        st->has_choice = out->has_choice;
        st->sparsepipe = out->sparsepipe;
        st->has_sparsepipe = out->has_sparsepipe;
    }
    tessel_point_result_free(out);
    free(out);
    return rc;
}

static int finish(const run_request *req, run_state *st);

/* Whether a strategy collects the statistics it decides on itself, as
 * tessel compare's rows do (docs/spec.md, strategy_options): with none
 * of the statistics' options given, the spec's tiles, which the strategy
 * replaces, must not set their base grid (d2t2 would choose among
 * multiples of it, e.g. i:8,k:16 on ca-CondMat where compare and
 * -e exact choose i:4,k:4; conservative PEB i:8,j:112,k:16 on
 * specs/extensor.yaml where -e exact chooses i:16). Those that decide on
 * statistics only (tessel_point_decides_on_stats): drt's spatial specs
 * need run's statistics. */
static int strategy_collects(const run_request *req, const tessel_spec *spec)
{
    tessel_stat_options defaults;
    tessel_stat_options_init(&defaults);
    tessel_point_request probe = { .spec = spec, .estimator = TESSEL_POINT_STAT };
    return !memcmp(&defaults, &req->stat_options, sizeof(defaults)) && !req->stats_out &&
           req->nested_budget == TESSEL_STAT_NESTED_BUDGET && !req->nested_formula &&
           tessel_point_route_of(&probe) == TESSEL_POINT_ROUTE_STRATEGY &&
           tessel_point_decides_on_stats(spec);
}

/* The Sparsepipe template's figures the CSV columns do not hold: the
 * share of A kept on chip (sparsepipe Table I), bytes per iteration, the
 * baseline without inter-operator reuse and the saving. */
static void print_sparsepipe(FILE *f, const tessel_sparsepipe_figures *g)
{
    double nnz = g->nnz ? (double)g->nnz : 1;
    fprintf(f, "\nsparsepipe: %s, %llu iterations, %llu fused pairs, frontier %.4g, "
               "%llu steps of %llu rows, %.0f nonzero %llux%llu blocks\n",
            g->app, (unsigned long long)g->iterations, (unsigned long long)g->pairs, g->frontier,
            (unsigned long long)g->steps, (unsigned long long)g->subtensor, g->nonzero_blocks,
            (unsigned long long)g->block, (unsigned long long)g->block);
    fprintf(f, "  A held between OS and IS use: max %.0f (%.1f %%), mean %.0f (%.1f %%) of %llu "
               "nonzeros; buffer room %.0f\n",
            g->hold_max, 100 * g->hold_max / nnz, g->hold_avg, 100 * g->hold_avg / nnz,
            (unsigned long long)g->nnz, g->hold_capacity);
    fprintf(f, "  A on chip across a pair: %.1f %% (%.0f nonzeros re-fetched per pair)\n",
            100 * g->onchip_fraction, g->refetched);
    fprintf(f, "  DRAM bytes: A pass %llu, fused pair %llu, single iteration %llu, "
               "per iteration %.0f, total %llu\n",
            (unsigned long long)g->a_pass_bytes, (unsigned long long)g->pair_bytes,
            (unsigned long long)g->single_bytes,
            g->iterations ? (double)g->total_bytes / (double)g->iterations : 0,
            (unsigned long long)g->total_bytes);
    fprintf(f, "  baseline (no inter-operator reuse): %llu per iteration, total %llu; "
               "saving %.1f %%\n",
            (unsigned long long)g->baseline_iteration_bytes,
            (unsigned long long)g->baseline_total_bytes, 100 * g->saving);
}

/* --strict: rule 4 from one pass over the data, before the estimate (a
 * fixed mapping's tiles are known now; a strategy's are not). 1 when the
 * run must fail; an error of the check itself is left to the estimate. */
static int precheck(const run_request *req, run_state *st)
{
    tessel_point_request pr = { .spec = st->spec, .estimator = TESSEL_POINT_EXACT };
    if (tessel_point_route_of(&pr) != TESSEL_POINT_ROUTE_FIXED)
        return 0;
    tessel_feasibility f;
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_model_feasibility(st->spec, st->data, NULL, &f, &d))
        return 0;
    if (req->verbose)
        fprintf(stderr, "tessel run:   rule 4 checked before the estimate in %.3f s\n", f.seconds);
    return cli_overflow_precheck("run", st->spec, st->spec->strategy.name, &f);
}

/* -e stat on a fixed mapping prices from the statistics alone (point.c's
 * fixed route reads no more of the data than its extents, which stay with
 * its labels). A template or a strategy may read the data. */
static int stat_fixed_route(const tessel_spec *spec)
{
    tessel_point_request pr = { .spec = spec, .estimator = TESSEL_POINT_STAT };
    return tessel_point_route_of(&pr) == TESSEL_POINT_ROUTE_FIXED;
}

/* Such a run prices one point, so glibc's adaptive thresholds buy nothing:
 * freed memory goes back past 1 MiB at the heap's top, and blocks of 128
 * KiB and more get mappings of their own (by default both thresholds rise
 * after the first large free, and the transient grids, freed in turn, kept
 * up to 9 MiB of free heap in the peak on uniform 4M; docs/data.md, "Memory
 * of run -e stat"). Not for the process: a sweep or map reallocating such
 * blocks per point paid ten times the page faults with it. */
static void one_point_heap(void)
{
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
}

/* The tensors freed before the estimate, whose transient grids make the
 * run's peak memory, where the fixed route will not read them. */
static void drop_tensors(run_state *st)
{
    if (!st->stats || !stat_fixed_route(st->spec))
        return;
    tessel_stat_data_drop_tensors(st->stats);
    tessel_workload_drop_tensors(st->data);
}

/* tessel run: load spec and data, evaluate the point, price energy, write reports. */
static int run(const run_request *req, run_state *st)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    double t0;
    int rc;

    step_begin(req, &t0, "loading spec", req->spec_path);
    rc = tessel_spec_load(req->spec_path, (const char *const *)req->sets, req->nsets, NULL,
                          &st->spec, &errors);
    if (rc)
        return cli_report_list("run", &errors, rc);
    step_end(req, t0, "spec");
    if (req->dry_run) {
        /* Every component priced now, not at the end of a long run. */
        tessel_diag_list_free(&errors);
        rc = cli_energy_resolve("run", st->spec, &st->db, &st->energy);
        if (rc)
            return rc;
        if (!req->quiet)
            printf("spec OK\n");
        return CLI_EXIT_OK;
    }

    tessel_diag d;
    tessel_diag_clear(&d);
    /* A bad output directory is found now, not after a long estimate. */
    if (tessel_report_check_dir(req->out_dir, &d) ||
        (req->stats_out && tessel_output_prepare(req->stats_out, NULL, &d))) {
        tessel_diag_list_free(&errors);
        return cli_report(&d);
    }

    const tessel_spec *spec = st->spec;
    /* Cheap steps first: the energy tables fail fast, the data may take long. */
    step_begin(req, &t0, "loading energy tables", NULL);
    rc = cli_energy_resolve("run", spec, &st->db, &st->energy);
    if (rc) {
        tessel_diag_list_free(&errors);
        return rc;
    }
    step_end(req, t0, "energy tables");

    if (req->analytic) {
        /* closed form from the density models: no data to load */
        tessel_diag_list_free(&errors);
        step_begin(req, &t0, "estimating traffic", "(analytic)");
        rc = estimate(st, TESSEL_POINT_ANALYTIC, NULL, &d);
        if (rc)
            return cli_report(&d);
        step_end(req, t0, "estimate");
        return finish(req, st);
    }
    if (req->stats_in) {
        /* saved statistics: no data to load */
        tessel_diag_list_free(&errors);
        step_begin(req, &t0, "loading statistics", req->stats_in);
        rc = tessel_stat_data_load(req->stats_in, NULL, &st->stats, &d);
        if (!rc)
            tessel_stat_data_set_nested_budget(st->stats, req->nested_budget);
        if (!rc && st->stats)
            tessel_stat_data_set_nested_formula(st->stats, req->nested_formula);
        if (!rc)
            rc = estimate(st, TESSEL_POINT_STAT, NULL, &d);
        if (rc)
            return cli_report(&d);
        step_end(req, t0, "estimate");
        return finish(req, st);
    }
    if (req->stat && stat_fixed_route(spec))
        one_point_heap();
    step_begin(req, &t0, "loading data", NULL);
    if (req->verbose)
        for (unsigned t = 1; t < spec->workload.ntensors; t++)
            fprintf(stderr, "tessel run:   %s: %s\n", spec->workload.tensor[t].name,
                    spec->workload.tensor[t].data ? spec->workload.tensor[t].data : "-");
    rc = tessel_workload_load(spec, &req->load, NULL, &st->data, &errors);
    if (rc)
        return cli_report_list("run", &errors, rc);
    tessel_diag_list_free(&errors);
    step_end(req, t0, "data");
    if (req->strict && precheck(req, st))
        return CLI_EXIT_USAGE;

    step_begin(req, &t0, "estimating traffic", req->stat ? "(stat)" : "(exact)");
    if (req->stat) {
        tessel_stat_options so = req->stat_options;
        if (!strategy_collects(req, spec))
            rc = tessel_point_stats_create(spec, st->data, &so, NULL, &st->stats, &d);
        if (!rc && st->stats)
            tessel_stat_data_set_nested_budget(st->stats, req->nested_budget);
        if (!rc && st->stats)
            tessel_stat_data_set_nested_formula(st->stats, req->nested_formula);
        if (!rc)
            drop_tensors(st);
        if (!rc)
            rc = estimate(st, TESSEL_POINT_STAT, NULL, &d);
        /* saved only for a spec they evaluate */
        if (!rc && req->stats_out)
            rc = tessel_stat_data_save(st->stats, req->stats_out, &d);
        if (!rc && req->verbose)
            fprintf(stderr, "tessel run:   statistics %.3f s, estimate from them %.6f s\n",
                    st->result.stats_seconds, st->result.seconds);
        for (unsigned t = 1; !rc && req->verbose && st->stats && t < spec->workload.ntensors; t++) {
            int index[TESSEL_MAX_ORDER];
            const tessel_tile_grid *g = tessel_stat_data_grid(st->stats, t, index);
            char shape[96] = "";
            size_t len = 0;
            for (unsigned m = 0; g && m < g->order && len < sizeof(shape); m++)
                len += (size_t)snprintf(shape + len, sizeof(shape) - len, "%s%llu", m ? "x" : "",
                                        (unsigned long long)g->tile[m]);
            if (g)
                fprintf(stderr, "tessel run:   base grid of %s: %s\n",
                        spec->workload.tensor[t].name, shape);
        }
    } else {
        progress_state progress = { .spec = spec };
        cli_progress_init(&progress.meter, "tessel run", "levels", req->quiet);
        rc = estimate(st, TESSEL_POINT_EXACT, &progress, &d);
        cli_progress_end(&progress.meter);
    }
    if (rc)
        return cli_report(&d);
    step_end(req, t0, "estimate");
    return finish(req, st);
}

/* Report files and the printed summary of an estimated design point. */
static int finish(const run_request *req, run_state *st)
{
    const tessel_spec *spec = st->spec;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc;
    if (req->no_timing)
        st->result.seconds = 0;

    char label[TESSEL_REPORT_LABEL_MAX];
    if (st->data)
        tessel_workload_data_label(st->data, label, sizeof(label));
    else if (st->stats)
        snprintf(label, sizeof(label), "%s", tessel_stat_data_label(st->stats));
    else
        tessel_model_analytic_label(spec, label, sizeof(label));
    /* extensor: the strategy its variant ran */
    const char *strategy = tessel_template_extensor_strategy(spec);
    /* rule 4: before any file is written */
    if (cli_overflow_check("run", spec, strategy ? strategy : spec->strategy.name, &st->result,
                           req->strict, tessel_strategy_is_fixed(spec) && !strategy))
        return CLI_EXIT_USAGE;
    rc = tessel_report_point_build(spec, &st->result, &st->energy, label,
                                   strategy ? strategy : spec->strategy.name, &st->point, &d);
    if (rc)
        return cli_report(&d);
    rc = tessel_report_write_dir(req->out_dir, req->format, &st->point, 1, NULL, &d);
    if (rc) {
        cli_report(&d);
        return rc == TESSEL_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
    }
    if (st->result.offgrid_edges)
        fprintf(stderr, "tessel run: note: %u tile edge%s off the statistics' base grid, priced "
                "between the on-grid shapes around them (docs/models/stat.md: tile edges off the grid)\n",
                st->result.offgrid_edges, st->result.offgrid_edges > 1 ? "s" : "");
    if (st->result.stat_nested_fraction > 0)
        fprintf(stderr, "tessel run: note: nested levels estimated from %.1f %% of level 1's i "
                "strips (by work); relative standard error of their bytes %.2f %% "
                "(--nested-budget; docs/models/stat.md)\n",
                100 * st->result.stat_nested_fraction, 100 * st->result.stat_nested_stderr);
    if (st->result.stat_nested_formula)
        fprintf(stderr, "tessel run: note: nested levels priced by the formula per tile shape "
                "(--nested-formula: an estimate; docs/models/stat.md, \"The nested formula\")\n");
    if (st->result.stat_design_may_differ)
        fprintf(stderr, "tessel run: note: the strategy decided its tiles on estimates (the "
                "statistics' grid, or drt's estimated output); -e exact may decide others "
                "(stat_design_may_differ; docs/models/stat.md)\n");
    if (!req->quiet) {
        tessel_report_print(stdout, &st->point, req->no_timing ? TESSEL_REPORT_NO_TIMES : 0);
        if (st->result.stat_walked)
            printf("\nstat: no closed form for this spec; it walked the effectual tile "
                   "iterations (as slow as --estimator exact)\n");
        if (st->has_sparsepipe)
            print_sparsepipe(stdout, &st->sparsepipe);
        if (st->has_choice)
            cli_print_choice(stdout, &st->choice, req->no_timing);
        const char *ext = req->format == TESSEL_REPORT_JSON ? "json" : "csv";
        size_t n = strlen(req->out_dir);
        const char *sep = n && req->out_dir[n - 1] == '/' ? "" : "/";
        printf("\nwrote %s%straffic.%s and %s%ssummary.%s\n", req->out_dir, sep, ext,
               req->out_dir, sep, ext);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tessel: error: writing to standard output failed\n");
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("run", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    run_request req;
    int rc = parse_request(&args, &req);
    if (!rc) {
        run_state *st = calloc(1, sizeof(*st));
        if (!st) {
            fprintf(stderr, "tessel run: error: out of memory\n");
            rc = CLI_EXIT_FAILURE;
        } else {
            st->exact = &req.exact;
            rc = run(&req, st);
            tessel_energy_db_free(&st->db);
            tessel_stat_data_free(&st->stats);
            tessel_workload_free(&st->data);
            tessel_spec_free(&st->spec);
            free(st);
        }
    }
    request_free(&req);
    return rc;
}

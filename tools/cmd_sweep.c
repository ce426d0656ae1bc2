/* tessel sweep: evaluate the points of a sweep file into one summary.csv
 * and traffic.csv (and pareto.csv), resumable and shardable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "energy_cli.h"
#include "progress.h"
#include "sweep_cli.h"
#include "tessel/sweep.h"

enum {
    OPT_HELP,
    OPT_OUTPUT,
    OPT_JOBS,
    OPT_SHARD,
    OPT_RESUME,
    OPT_OVERWRITE,
    OPT_PARETO,
    OPT_TIMING,
    OPT_NO_MEMO,
    OPT_QUIET,
    OPT_DRY_RUN,
    OPT_PLOT,
    OPT_NO_TIMING,
    OPT_SKIP_INVALID,
    OPT_STRICT,
    OPT_PARETO_INFEASIBLE,
    OPT_COUNT
};

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_JOBS] = { "--jobs", "-j", 1 },
    [OPT_SHARD] = { "--shard", NULL, 1 },
    [OPT_RESUME] = { "--resume", NULL, 0 },
    [OPT_OVERWRITE] = { "--overwrite", NULL, 0 },
    [OPT_PARETO] = { "--pareto", NULL, 1 },
    [OPT_TIMING] = { "--timing", NULL, 0 },
    [OPT_NO_MEMO] = { "--no-memo", NULL, 0 },
    [OPT_QUIET] = { "--quiet", "-q", 0 },
    [OPT_DRY_RUN] = { "--dry-run", "-n", 0 },
    [OPT_PLOT] = { "--plot", NULL, 0 },
    [OPT_NO_TIMING] = { "--no-timing", NULL, 0 },
    [OPT_SKIP_INVALID] = { "--skip-invalid", NULL, 0 },
    [OPT_STRICT] = { "--strict", NULL, 0 },
    [OPT_PARETO_INFEASIBLE] = { "--pareto-infeasible", NULL, 0 },
};

static void help(void)
{
    printf(
        "usage: tessel sweep SWEEP.yaml [options]\n\n"
        "Evaluates every design point of a sweep file: a base spec, data files and axes\n"
        "over spec paths (lists or ranges; their cross product, a random sample or an\n"
        "explicit list of points). Statistics are collected once per data file and shared\n"
        "by all threads; each point costs microseconds to milliseconds with the stat\n"
        "estimator. docs/sweep.md describes the file.\n\n"
        "options:\n"
        "  -o, --output DIR      output directory (default sweep-out): summary.csv and\n"
        "                        traffic.csv (columns: point, one per axis, then those of\n"
        "                        tessel run), pareto.csv with objectives, sweep.state\n"
        "  -j, --jobs N          threads (default: one per online core); the output is the\n"
        "                        same whatever N is\n"
        "      --shard I/N       evaluate shard I of N (I from 0): a consecutive 1/N of the\n"
        "                        points; 'tessel merge' combines the shards' directories\n"
        "      --resume          continue the unfinished sweep in DIR (after a kill or a\n"
        "                        failure): finished points are kept, none is repeated;\n"
        "                        refused when an input file (spec, include, energy table,\n"
        "                        data) changed since the sweep started\n"
        "      --overwrite       start over, discarding an unfinished sweep in DIR\n"
        "      --pareto A,B[,C]  Pareto objectives (summary.csv columns, minimised; max:COL\n"
        "                        to maximise), overriding the file's 'pareto'; one front\n"
        "                        per data file in DIR/pareto.csv\n"
        "      --plot            also write SVG figures into DIR: roofline.svg, traffic.svg\n"
        "                        and the Pareto front (pareto.svg, or pareto-DATA.svg per\n"
        "                        data entry)\n"
        "      --timing          record each estimate's wall time in model_seconds (by\n"
        "                        default 0, so that repeated runs give identical files)\n"
        "      --skip-invalid    a point whose spec is invalid (partitions over 100 %%, say)\n"
        "                        or that the estimator refuses gets a summary row with its\n"
        "                        error and no numbers; by default it stops the sweep\n"
        "      --strict          every point still runs and is written, but a point whose\n"
        "                        tiles overflow a partition the spec does not let them\n"
        "                        overbook (summary.csv feasible = 0) is listed as an error\n"
        "                        and the sweep exits 2 at the end\n"
        "      --pareto-infeasible  the Pareto front may hold infeasible points (by\n"
        "                        default they are left out of pareto.csv)\n"
        "      --no-memo         estimate every point's traffic, even when an earlier\n"
        "                        point had the same traffic-deciding spec\n"
        "      --no-timing       leave times and rates out of the printed summary\n"
        "  -n, --dry-run         check the sweep file and print the number of points\n"
        "  -q, --quiet           no progress and no summary\n\n"
        "Progress (points done, rate, time left) goes to standard error when it is a\n"
        "terminal. DIR is locked while the sweep runs: another sweep, resume or merge on\n"
        "it exits 2 at once, naming this one. Exit status: 0 done, 1 internal failure, 2\n"
        "bad usage or bad input, or with --strict some point infeasible.\n\n"
        "examples:\n"
        "  tessel sweep examples/sweep/llb-sweep.yaml -o out -j 2\n"
        "  tessel sweep examples/sweep/llb-sweep.yaml -o out --resume\n"
        "  tessel sweep S.yaml --shard 3/8 -o shard3    # then: tessel merge -o all shard*\n");
}

/* The sweep's callbacks feed the shared meter (progress.h): points done of
 * the points to run, and the data being summarised before them. */
static void show_progress(void *ud, uint64_t done, uint64_t total, double seconds)
{
    cli_progress_update(ud, (double)done, (double)total, seconds, NULL);
}

static void show_stage(void *ud, const char *what)
{
    char text[96];
    snprintf(text, sizeof(text), "collecting the statistics of %s", what);
    cli_progress_stage(ud, text);
}

/* The base spec's warnings, once per sweep (not per point). */
static void show_loaded(void *ud, const tessel_spec *base, const tessel_energy_db *db)
{
    (void)ud;
    cli_energy_warn_design(base, db);
}

static int parse_shard(const char *text, tessel_sweep_options *o)
{
    unsigned long long i, n;
    char tail;
    if (!text)
        return CLI_EXIT_OK;
    if (sscanf(text, "%llu/%llu%c", &i, &n, &tail) != 2 || n == 0 || i >= n)
        return cli_usage_error("sweep", "--shard needs I/N with 0 <= I < N, not '%s'", text);
    o->shard_index = i;
    o->shard_count = n;
    return CLI_EXIT_OK;
}

static int parse_options(const cli_args *args, tessel_sweep_options *o, sweep_cli_names *names)
{
    tessel_sweep_options_init(o);
    const char *jobs = cli_value(args, OPT_JOBS);
    if (jobs) {
        unsigned long long j;
        if (cli_parse_u64("sweep", "--jobs", jobs, &j))
            return CLI_EXIT_USAGE;
        if (j == 0 || j > 256)
            return cli_usage_error("sweep", "--jobs must be 1 to 256, not '%s'", jobs);
        o->threads = (unsigned)j;
    }
    if (parse_shard(cli_value(args, OPT_SHARD), o))
        return CLI_EXIT_USAGE;
    o->resume = cli_has(args, OPT_RESUME);
    o->overwrite = cli_has(args, OPT_OVERWRITE);
    if (o->resume && o->overwrite)
        return cli_usage_error("sweep", "--resume and --overwrite contradict each other");
    o->timing = cli_has(args, OPT_TIMING);
    o->no_memo = cli_has(args, OPT_NO_MEMO);
    o->skip_invalid = cli_has(args, OPT_SKIP_INVALID);
    o->pareto_infeasible = cli_has(args, OPT_PARETO_INFEASIBLE);
    if (sweep_cli_objectives("sweep", cli_value(args, OPT_PARETO), names))
        return CLI_EXIT_USAGE;
    if (names->n) {
        o->objectives = names->item;
        o->nobjectives = names->n;
    }
    return CLI_EXIT_OK;
}

static int load_sweep(const char *path, tessel_sweep **out)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = tessel_sweep_load(path, NULL, out, &errors);
    if (rc)
        return cli_report_list("sweep", &errors, rc);
    tessel_diag_list_free(&errors);
    return CLI_EXIT_OK;
}

static void print_report(const tessel_sweep_report *r, const char *dir, int timing)
{
    printf("%llu points: %llu evaluated", (unsigned long long)r->points,
           (unsigned long long)r->evaluated);
    if (r->resumed)
        printf(", %llu found finished", (unsigned long long)r->resumed);
    printf(" on %u thread%s", r->threads, r->threads == 1 ? "" : "s");
    if (timing)
        printf(" in %.3f s (%.0f points/s; CPU %.6f s, busiest thread %.6f s)", r->eval_seconds,
               r->eval_seconds > 0 ? (double)r->evaluated / r->eval_seconds : 0,
               r->eval_cpu_seconds, r->busiest_seconds);
    if (r->memo_hits)
        printf("; %llu with the traffic of an earlier point", (unsigned long long)r->memo_hits);
    printf("\n");
    if (r->invalid)
        printf("%llu points skipped as invalid: their summary rows hold the error\n",
               (unsigned long long)r->invalid);
    if (timing)
        printf("statistics and data: %.3f s; stat summaries built: %llu shape, %llu nested; "
               "step-count tables built: %llu, geometries %llu\n",
               r->stats_seconds, (unsigned long long)r->shape_summaries,
               (unsigned long long)r->nested_summaries, (unsigned long long)r->ks_tables,
               (unsigned long long)r->ks_geometries);
    printf("wrote %s/summary.csv and %s/traffic.csv", dir, dir);
    if (r->pareto_points)
        printf("; %s/pareto.csv holds %llu point%s", dir, (unsigned long long)r->pareto_points,
               r->pareto_points == 1 ? "" : "s");
    printf("\n");
}

#define MAX_LISTED 10

/* Rule 4 (issue 20): the points of DIR/summary.csv whose `feasible` is 0,
 * all of them (resumed ones too). Each of the first few is named on
 * stderr, as an error under strict, else as a warning; returns the exit
 * status: 2 under strict when some point is infeasible. */
static int check_feasible(const char *dir, int strict, int quiet)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/summary.csv", dir);
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_report_csv_load(path, NULL, &t, &d))
        return cli_report(&d);
    long fc = tessel_report_csv_find(t, "feasible"), pc = tessel_report_csv_find(t, "point");
    long lc = tessel_report_csv_find(t, "overflow_level");
    long tc = tessel_report_csv_find(t, "overflow_tensor");
    size_t rows = tessel_report_csv_rows(t), bad = 0;
    for (size_t r = 0; fc >= 0 && pc >= 0 && lc >= 0 && tc >= 0 && r < rows; r++) {
        if (strcmp(tessel_report_csv_cell(t, r, (size_t)fc), "0") != 0)
            continue;
        if (bad++ < MAX_LISTED && (strict || !quiet))
            fprintf(stderr, "tessel sweep: %s: point %s: level %s, tensor %s: tiles overflow "
                    "the partition and the spec does not allow overbooking\n",
                    strict ? "error" : "warning", tessel_report_csv_cell(t, r, (size_t)pc),
                    tessel_report_csv_cell(t, r, (size_t)lc),
                    tessel_report_csv_cell(t, r, (size_t)tc));
    }
    if (bad && (strict || !quiet))
        fprintf(stderr, "tessel sweep: %zu of %zu points infeasible (summary.csv feasible = 0; "
                "pareto.csv leaves them out unless --pareto-infeasible)%s\n", bad, rows,
                strict ? "; --strict: exit 2" : "");
    tessel_report_csv_free(&t);
    return strict && bad ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

static int run(const cli_args *args)
{
    if (cli_positionals(args) != 1)
        return cli_usage_error("sweep", "one sweep file, not %d (see tessel sweep --help)",
                               cli_positionals(args));
    tessel_sweep_options o;
    sweep_cli_names names = { 0 };
    int rc = parse_options(args, &o, &names);
    tessel_sweep *s = NULL;
    if (!rc)
        rc = load_sweep(cli_positional(args, 0), &s);
    int quiet = cli_has(args, OPT_QUIET);
    if (!rc && cli_has(args, OPT_DRY_RUN)) {
        if (!quiet)
            printf("sweep OK: %llu points (%zu data x %llu design points, %zu axes)\n",
                   (unsigned long long)tessel_sweep_point_count(s), tessel_sweep_data_count(s),
                   (unsigned long long)tessel_sweep_points_per_data(s),
                   tessel_sweep_axis_count(s));
    } else if (!rc) {
        const char *dir = cli_value(args, OPT_OUTPUT) ? cli_value(args, OPT_OUTPUT) : "sweep-out";
        cli_progress p;
        cli_progress_init(&p, "tessel sweep", "points", quiet);
        o.progress = show_progress;
        o.stage = show_stage;
        o.loaded = show_loaded;
        o.progress_ud = &p;
        tessel_sweep_report report;
        tessel_diag d;
        tessel_diag_clear(&d);
        int err = tessel_sweep_run(s, dir, &o, NULL, &report, &d);
        cli_progress_end(&p);
        if (err)
            rc = cli_report(&d);
        if ((err == TESSEL_EINVAL || err == TESSEL_EUNSUPPORTED || err == TESSEL_ERANGE) &&
            strncmp(d.message, "point ", 6) == 0)
            fprintf(stderr, "tessel sweep: --skip-invalid --resume records such points with "
                            "their error and goes on\n");
        if (!rc && cli_has(args, OPT_PLOT))
            rc = sweep_cli_plots(dir, quiet);
        if (!rc && !quiet)
            print_report(&report, dir, !cli_has(args, OPT_NO_TIMING));
        if (!rc)
            rc = check_feasible(dir, cli_has(args, OPT_STRICT), quiet);
    }
    tessel_sweep_free(&s);
    sweep_cli_names_free(&names);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("sweep", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    int rc = run(&args);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tessel: error: writing to standard output failed\n");
        return CLI_EXIT_FAILURE;
    }
    return rc;
}

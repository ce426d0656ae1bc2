/* tessel compare: every tiling strategy on the same spec and data, one
 * table (and compare.csv): the tiles each chose, DRAM traffic, buffer
 * utilisation, overbooking, cycles, energy and the time tessel took. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "commands.h"
#include "energy_cli.h"
#include "overflow_cli.h"
#include "strategy_cli.h"
#include "tessel/energy.h"
#include "tessel/report.h"
#include "tessel/strategy.h"
#include "tessel/point.h"

enum {
    OPT_HELP,
    OPT_TENSOR,
    OPT_SET,
    OPT_STRATEGIES,
    OPT_ESTIMATOR,
    OPT_FORMAT,
    OPT_OUTPUT,
    OPT_NO_TIMING,
    OPT_QUIET,
    OPT_STRICT,
    OPT_COUNT
};

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_TENSOR] = { "--tensor", "-T", 1 },
    [OPT_SET] = { "--set", "-s", 1 },
    [OPT_STRATEGIES] = { "--strategies", NULL, 1 },
    [OPT_ESTIMATOR] = { "--estimator", "-e", 1 },
    [OPT_FORMAT] = { "--format", "-f", 1 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_NO_TIMING] = { "--no-timing", NULL, 0 },
    [OPT_QUIET] = { "--quiet", "-q", 0 },
    [OPT_STRICT] = { "--strict", NULL, 0 },
};

#define DEFAULT_STRATEGIES "conservative,prescient,swiftiles,drt,d2t2"

static void help(void)
{
    printf(
        "usage: tessel compare SPEC [options]\n\n"
        "Runs tiling strategies on the same spec and data and prints one table: the\n"
        "tiles each chose, DRAM bytes, traffic / compulsory, buffer utilization (mean\n"
        "tile footprint / partition), overbooking rate (fraction of non-empty input\n"
        "tiles larger than their partition), cycles, energy and seconds (deciding +\n"
        "estimating). Strategy options come from the spec (mapping.strategy_options).\n\n"
        "options:\n"
        "  -T, --tensor NAME=DATA  bind input tensor NAME to DATA (as tessel run)\n"
        "  -s, --set PATH=VALUE    override one spec key (repeatable)\n"
        "      --strategies LIST   comma-separated (default " DEFAULT_STRATEGIES ");\n"
        "                          fixed is the mapping as written\n"
        "  -e, --estimator NAME    exact (default), stat, or both (a row per estimator)\n"
        "  -f, --format FMT        table (default) or csv, on standard output\n"
        "  -o, --output DIR        also write DIR/compare.csv (columns in docs/outputs.md)\n"
        "      --no-timing         write seconds as 0 (reproducible files)\n"
        "  -q, --quiet             print nothing on standard output and no progress\n"
        "      --strict            a strategy other than swiftiles whose tiles overflow\n"
        "                          their partitions (rule 4) is an error: exit 2, no table\n\n"
        "A strategy that does not apply to the spec (e.g. drt on TTM) is skipped with a\n"
        "one-line note on standard error and no row; one that applies but fails gets a row with its error and the exit\n"
        "status is then 1. Exit 0 when every applicable strategy ran; 2 when none\n"
        "applies.\n"
        "A spec with template: extensor gets one row per variant (n, p, ob, drt, named\n"
        "after the strategy each runs), all with the spec's loop orders.\n"
        "Progress (rows done, rate, time left) goes to standard error when it is a\n"
        "terminal.\n\n"
        "example:\n"
        "  tessel compare bench/strategy/one-level.yaml \\\n"
        "      --tensor A=examples/data/jagmesh7.mtx.gz -o out\n");
}

typedef struct compare_row {
    char strategy[16], estimator[8];
    tessel_strategy_choice choice;
    tessel_report_point point;
    double estimate_seconds;
    int skipped; /* the strategy does not apply (TESSEL_EUNSUPPORTED): no row */
    char error[640];
} compare_row;

typedef struct compare_request {
    const char *spec_path, *out_dir;
    char **sets;
    size_t nsets;
    char strategies[TESSEL_STRATEGY_COUNT][16];
    unsigned nstrategies;
    int exact, stat, csv, no_timing, quiet;
    int strict; /* --strict: overflow under a strategy that does not overbook is exit 2 */
    int strategies_given; /* --strategies on the command line */
} compare_request;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int parse_strategies(const char *list, compare_request *r)
{
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        char name[16];
        if (n == 0 || n >= sizeof(name))
            return cli_usage_error("compare", "--strategies needs names separated by commas, "
                                              "not '%s'", list);
        memcpy(name, p, n);
        name[n] = '\0';
        char *set = NULL;
        int rc = cli_strategy_set("compare", name, &set);
        free(set);
        if (rc)
            return rc;
        for (unsigned k = 0; k < r->nstrategies; k++)
            if (strcmp(r->strategies[k], name) == 0)
                return cli_usage_error("compare", "strategy '%s' is listed twice", name);
        if (r->nstrategies == TESSEL_STRATEGY_COUNT)
            return cli_usage_error("compare", "too many strategies in '%s'", list);
        memcpy(r->strategies[r->nstrategies++], name, n + 1);
        p += n + (p[n] == ',');
    }
    return CLI_EXIT_OK;
}

static int parse_request(const cli_args *args, compare_request *r)
{
    memset(r, 0, sizeof(*r));
    if (cli_positionals(args) != 1)
        return cli_usage_error("compare", "give one spec file (see tessel compare --help)");
    r->spec_path = cli_positional(args, 0);
    r->out_dir = cli_value(args, OPT_OUTPUT);
    const char *list = cli_value(args, OPT_STRATEGIES);
    r->strategies_given = list != NULL;
    int rc = parse_strategies(list ? list : DEFAULT_STRATEGIES, r);
    if (rc)
        return rc;
    const char *est = cli_value(args, OPT_ESTIMATOR);
    r->exact = !est || strcmp(est, "exact") == 0 || strcmp(est, "both") == 0;
    r->stat = est && (strcmp(est, "stat") == 0 || strcmp(est, "both") == 0);
    if (!r->exact && !r->stat)
        return cli_usage_error("compare", "--estimator must be exact, stat or both, not '%s'",
                               est);
    const char *fmt = cli_value(args, OPT_FORMAT);
    if (fmt && strcmp(fmt, "csv") != 0 && strcmp(fmt, "table") != 0)
        return cli_usage_error("compare", "--format must be table or csv, not '%s'", fmt);
    r->csv = fmt && strcmp(fmt, "csv") == 0;
    r->no_timing = cli_has(args, OPT_NO_TIMING);
    r->quiet = cli_has(args, OPT_QUIET);
    r->strict = cli_has(args, OPT_STRICT);
    return cli_overrides("compare", args, OPT_SET, OPT_TENSOR, -1, &r->sets, &r->nsets);
}

static void request_free(compare_request *r)
{
    for (size_t i = 0; i < r->nsets; i++)
        free(r->sets[i]);
    free(r->sets);
}

/* ------------------------------------------------------------------ */

typedef struct compare_state {
    tessel_spec *spec;
    tessel_energy_db *db;
    tessel_design_energy energy;
    tessel_workload_data *data;
    tessel_stat_data *stats;
    tessel_strategy_shared *shared;
    char label[TESSEL_REPORT_LABEL_MAX];
    int extensor; /* template extensor: the rows are its variants */
    /* progress (progress.h): a unit is one row (a strategy under one
     * estimator); an exact walk in a row adds the fraction of its levels
     * walked, so done never goes back */
    cli_progress meter;
    unsigned row, nrows, nlevels;
} compare_state;

static void row_progress(void *ud, unsigned level, double fraction)
{
    compare_state *st = ud;
    double walked = st->nlevels > 1 ? ((double)(level - 1) + fraction) / (st->nlevels - 1) : 0;
    cli_progress_update(&st->meter, st->row + walked, st->nrows, -1, NULL);
}

static void state_free(compare_state *st)
{
    tessel_strategy_shared_free(&st->shared);
    tessel_stat_data_free(&st->stats);
    tessel_workload_free(&st->data);
    tessel_energy_db_free(&st->db);
    tessel_spec_free(&st->spec);
}

/* Loads the spec, energy tables and data (and the fixed mapping's statistics when fixed is
 * compared); a template spec's rows are its variants. */
static int load(const compare_request *r, compare_state *st)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = tessel_spec_load(r->spec_path, (const char *const *)r->sets, r->nsets, NULL,
                              &st->spec, &errors);
    if (!rc)
        rc = tessel_energy_db_load(st->spec, NULL, &st->db, &errors);
    if (!rc)
        rc = tessel_energy_design(st->db, st->spec, &st->energy, &errors);
    if (!rc) {
        tessel_load_options load;
        tessel_load_options_init(&load);
        rc = tessel_workload_load(st->spec, &load, NULL, &st->data, &errors);
    }
    if (rc)
        return cli_report_list("compare", &errors, rc);
    tessel_diag_list_free(&errors);
    cli_energy_warn(st->spec, st->db, &st->energy);
    const tessel_template_desc *tpl = tessel_template_describe(tessel_template_of(st->spec));
    if (tpl && tpl->strategies) {
        /* its variants are strategies: they are the rows */
        if (r->strategies_given) {
            const tessel_spec_template *t = &st->spec->template_;
            fprintf(stderr,
                    "%s:%llu:%u: error: template extensor: tessel compare compares its variants "
                    "n, p, ob and drt (the strategies conservative with worst: dense, "
                    "prescient, swiftiles and drt); --strategies does not apply (--set "
                    "template=none to compare strategies on its mapping)\n",
                    t->pos.file ? t->pos.file : r->spec_path, (unsigned long long)t->pos.line,
                    t->pos.column);
            return CLI_EXIT_USAGE;
        }
        st->extensor = 1;
        tessel_workload_data_label(st->data, st->label, sizeof(st->label));
        return CLI_EXIT_OK;
    }
    if (tpl) {
        const tessel_spec_template *t = &st->spec->template_;
        fprintf(stderr,
                "%s:%llu:%u: error: the spec models the %s template, whose own buffer policy "
                "decides its tiles: tiling strategies do not apply (--set template=none to "
                "compare them on its mapping)\n",
                t->pos.file ? t->pos.file : r->spec_path, (unsigned long long)t->pos.line,
                t->pos.column, t->name);
        return CLI_EXIT_USAGE;
    }
    tessel_workload_data_label(st->data, st->label, sizeof(st->label));
    /* the statistics are collected once for the fixed mapping, on the
     * base grid the estimator chooses from its tiles (only it reads them:
     * the strategies share theirs, st->shared) */
    int fixed = 0;
    for (unsigned k = 0; k < r->nstrategies; k++)
        fixed |= strcmp(r->strategies[k], "fixed") == 0;
    if (!fixed)
        return CLI_EXIT_OK;
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    rc = tessel_point_stats_create(st->spec, st->data, &opt, NULL, &st->stats, &d);
    if (rc && rc != TESSEL_EUNSUPPORTED && rc != TESSEL_EINVAL)
        return cli_report(&d);
    return CLI_EXIT_OK;
}

/* The spec with one override; on failure *d holds the first error. */
static int derive_one(const compare_state *st, const char *set, tessel_spec **spec,
                      tessel_diag *d)
{
    const char *sets[1] = { set };
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_diag_clear(d);
    int rc = tessel_spec_derive(st->spec, sets, 1, NULL, spec, &errors);
    if (rc && errors.count)
        *d = errors.items[0];
    tessel_diag_list_free(&errors);
    return rc;
}

/* The rows of an extensor spec: the values of the template's `variant`
 * option (its descriptor, template.h). */
static void extensor_rows(compare_request *r)
{
    const tessel_template_desc *x = tessel_template_describe(TESSEL_TEMPLATE_EXTENSOR);
    r->nstrategies = 0;
    for (unsigned i = 0; x && i < x->noptions; i++) {
        const tessel_template_option *o = &x->options[i];
        if (strcmp(o->key, "variant") != 0)
            continue;
        for (unsigned k = 0; k < o->nvalues && r->nstrategies < TESSEL_STRATEGY_COUNT; k++)
            snprintf(r->strategies[r->nstrategies++], sizeof(r->strategies[0]), "%s",
                     o->values[k]);
    }
}

/* A row's design point through the one entry point (point.h), timed from
 * t0 less the strategy's decision, and its report record. */
static int evaluate(const tessel_point_request *req, const compare_state *st, double t0,
                    compare_row *row, tessel_diag *d)
{
    tessel_point_result *out = malloc(sizeof(*out));
    if (!out)
        return tessel_diag_set(d, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    int rc = tessel_point_evaluate(req, out, d);
    row->choice = out->choice;
    row->estimate_seconds = now_seconds() - t0 - row->choice.seconds;
    if (!rc)
        rc = tessel_report_point_build(req->spec, &out->result, &st->energy, st->label,
                                       row->strategy, &row->point, d);
    tessel_point_result_free(out);
    free(out);
    return rc;
}

/* One variant of the extensor template (the row is named after the
 * strategy it runs). */
static void run_variant(compare_state *st, const char *variant, tessel_strategy_estimator est,
                        compare_row *row)
{
    char set[64];
    snprintf(set, sizeof(set), "template_options.variant=%s", variant);
    tessel_spec *spec = NULL;
    tessel_diag d;
    int rc = derive_one(st, set, &spec, &d);
    const char *strategy = rc ? NULL : tessel_template_extensor_strategy(spec);
    snprintf(row->strategy, sizeof(row->strategy), "%s", strategy ? strategy : variant);
    tessel_point_request req = {
        .spec = spec,
        .estimator = est == TESSEL_STRATEGY_STAT ? TESSEL_POINT_STAT : TESSEL_POINT_EXACT,
        .data = st->data,
        .progress = row_progress,
        .progress_ud = st,
    };
    if (!rc)
        rc = evaluate(&req, st, now_seconds(), row, &d);
    if (rc)
        snprintf(row->error, sizeof(row->error), "%s", d.message[0] ? d.message
                                                                      : tessel_strerror(rc));
    row->skipped = rc == TESSEL_EUNSUPPORTED;
    tessel_spec_free(&spec);
}

/* What a stat row's summary.csv would record and tessel run would say
 * (issue 18): the walk, and tiles -e exact may decide otherwise. */
static void row_notes(compare_state *st, const compare_row *row)
{
    int walked = strcmp(row->point.stat_path, "walk") == 0;
    if (!walked && !row->point.stat_design_may_differ)
        return;
    cli_progress_end(&st->meter); /* a clean line for the note */
    if (walked)
        fprintf(stderr, "tessel compare: note: %s (stat): no closed form for this spec; it "
                "walked the effectual tile iterations (stat_path walk, as slow as exact)\n",
                row->strategy);
    if (row->point.stat_design_may_differ)
        fprintf(stderr, "tessel compare: note: %s (stat): its tiles were decided on estimates; "
                "-e exact may decide others (stat_design_may_differ)\n", row->strategy);
}

/* --strict: a row whose tiles overflow their partitions, under a
 * strategy that does not overbook, is an error (rule 4). */
static int strict_fails(const compare_state *st, const compare_row *row)
{
    tessel_result *r = calloc(1, sizeof(*r));
    if (!r)
        return 1;
    r->nlevels = row->point.nlevels;
    r->ntensors = row->point.ntensors;
    memcpy(r->traffic, row->point.traffic, sizeof(r->traffic));
    char what[64];
    snprintf(what, sizeof(what), "compare: %s (%s)", row->strategy, row->estimator);
    int fail = cli_overflow_check(what, st->spec, row->strategy, r, 1, 0);
    free(r);
    return fail;
}

/* --strict with the `fixed` row: its tiles are known before any estimate,
 * so rule 4 is checked from one pass over the data first (as tessel run
 * --strict does); 1 when the comparison must fail. */
static int strict_precheck(const compare_request *req, const compare_state *st)
{
    int fixed = 0;
    for (unsigned k = 0; k < req->nstrategies; k++)
        fixed |= strcmp(req->strategies[k], "fixed") == 0;
    if (!fixed || st->extensor || !st->data || tessel_template_of(st->spec) != TESSEL_TEMPLATE_NONE)
        return 0;
    tessel_feasibility f;
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_model_feasibility(st->spec, st->data, NULL, &f, &d))
        return 0; /* the estimate will report it */
    return cli_overflow_precheck("compare: fixed", st->spec, "fixed", &f);
}

static void run_one(compare_state *st, const char *strategy, tessel_strategy_estimator est,
                    compare_row *row)
{
    memset(row, 0, sizeof(*row));
    snprintf(row->strategy, sizeof(row->strategy), "%s", strategy);
    snprintf(row->estimator, sizeof(row->estimator), "%s",
             est == TESSEL_STRATEGY_EXACT ? "exact" : "stat");
    if (st->extensor) {
        run_variant(st, strategy, est, row);
        return;
    }
    char set[64];
    snprintf(set, sizeof(set), "mapping.strategy=%s", strategy);
    tessel_spec *spec = NULL;
    tessel_diag d;
    int rc = derive_one(st, set, &spec, &d);
    if (!rc) {
        /* the fixed mapping is priced from the statistics loaded with it;
         * the other strategies collect theirs on a base grid fine enough
         * for the tiles they may choose, once for every row (st->shared) */
        tessel_point_request req = {
            .spec = spec,
            .estimator = est == TESSEL_STRATEGY_STAT ? TESSEL_POINT_STAT : TESSEL_POINT_EXACT,
            .data = st->data,
            .stats = tessel_strategy_is_fixed(spec) ? st->stats : NULL,
            .decisions = 1,
            .progress = row_progress,
            .progress_ud = st,
        };
        if (!st->shared && tessel_strategy_shared_create(NULL, &st->shared))
            rc = tessel_diag_set(&d, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        req.shared = st->shared;
        if (!rc)
            rc = evaluate(&req, st, now_seconds(), row, &d);
    }
    if (rc)
        snprintf(row->error, sizeof(row->error), "%s", d.message[0] ? d.message
                                                                      : tessel_strerror(rc));
    row->skipped = rc == TESSEL_EUNSUPPORTED;
    tessel_spec_free(&spec);
}

/* ------------------------------------------------------------------ */

static const char csv_header[] =
    "strategy,tile_shape,dram_bytes,traffic_ratio,buffer_utilization,overbooking_rate,cycles,"
    "energy_pj,seconds,estimator,overbooking_target,decide_seconds,predicted_dram_bytes,error,"
    "decide_cpu_seconds\n";

static void put_double(FILE *f, double v)
{
    char buf[64];
    if (isnan(v)) {
        fputs("", f);
        return;
    }
    tessel_report_format_double(buf, v);
    fputs(buf, f);
}

static void write_csv(FILE *f, const compare_row *rows, unsigned n, int no_timing)
{
    fputs(csv_header, f);
    for (unsigned i = 0; i < n; i++) {
        const compare_row *r = &rows[i];
        int ok = !r->error[0];
        if (r->skipped)
            continue;
        fprintf(f, "%s,", r->strategy);
        tessel_csv_field(f, ok ? r->choice.shape : "");
        if (ok) {
            fprintf(f, ",%llu,", (unsigned long long)r->point.dram_bytes);
            put_double(f, r->point.traffic_ratio);
            fputc(',', f);
            put_double(f, r->choice.buffer_utilization);
            fputc(',', f);
            put_double(f, r->choice.overbooking_rate);
            fputc(',', f);
            put_double(f, r->point.roofline.cycles);
            fputc(',', f);
            put_double(f, r->point.energy_pj);
            fputc(',', f);
            put_double(f, no_timing ? 0 : r->choice.seconds + r->estimate_seconds);
        } else {
            fputs(",,,,,,,", f);
        }
        fprintf(f, ",%s,", r->estimator);
        put_double(f, r->choice.overbooking_target);
        fputc(',', f);
        put_double(f, no_timing ? 0 : r->choice.seconds);
        fputc(',', f);
        put_double(f, r->choice.predicted_dram_bytes);
        fputc(',', f);
        tessel_csv_field(f, r->error);
        fputc(',', f);
        put_double(f, no_timing ? 0 : r->choice.cpu_seconds);
        fputc('\n', f);
    }
}

static void percent(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f%%", 100 * v);
}

static void write_table(FILE *f, const compare_state *st, const compare_row *rows, unsigned n,
                        int no_timing)
{
    fprintf(f, "%s on %s\n\n", st->spec->name, st->label);
    fprintf(f, "%-13s %-6s %14s %9s %7s %7s %14s %14s %9s  %s\n", "strategy", "est",
            "dram_bytes", "x_compul", "util", "overbk", "cycles", "energy_pj", "seconds",
            "tiles");
    for (unsigned i = 0; i < n; i++) {
        const compare_row *r = &rows[i];
        if (r->skipped)
            continue;
        if (r->error[0]) {
            fprintf(f, "%-13s %-6s error: %s\n", r->strategy, r->estimator, r->error);
            continue;
        }
        char util[16], over[16];
        percent(util, sizeof(util), r->choice.buffer_utilization);
        percent(over, sizeof(over), r->choice.overbooking_rate);
        fprintf(f, "%-13s %-6s %14llu %9.3f %7s %7s %14.0f %14.4g %9.4f  %s\n", r->strategy,
                r->estimator, (unsigned long long)r->point.dram_bytes, r->point.traffic_ratio,
                util, over, r->point.roofline.cycles, r->point.energy_pj,
                no_timing ? 0 : r->choice.seconds + r->estimate_seconds, r->choice.shape);
    }
}

static int write_file(const char *dir, const compare_row *rows, unsigned n, int no_timing)
{
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_report_ensure_dir(dir, &d))
        return cli_report(&d);
    char path[4096];
    snprintf(path, sizeof(path), "%s/compare.csv", dir);
    cli_output out;
    if (cli_output_open(&out, path))
        return CLI_EXIT_FAILURE;
    write_csv(out.stream, rows, n, no_timing);
    return cli_output_close(&out, 1) ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

/* tessel compare: load spec and data once, run every applicable strategy row, print the
 * table and write compare.csv. */
int cmd_compare(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("compare", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    compare_request req;
    int rc = parse_request(&args, &req);
    compare_state st;
    memset(&st, 0, sizeof(st));
    compare_row *rows = NULL;
    unsigned n = 0;
    if (!rc && req.out_dir) {
        /* a bad output directory is found now, not after the estimates */
        tessel_diag d;
        tessel_diag_clear(&d);
        if (tessel_report_check_dir(req.out_dir, &d))
            rc = cli_report(&d);
    }
    if (!rc)
        rc = load(&req, &st);
    if (!rc && st.extensor)
        extensor_rows(&req);
    if (!rc && !(rows = calloc(2u * req.nstrategies, sizeof(*rows)))) {
        fprintf(stderr, "tessel compare: error: out of memory\n");
        rc = CLI_EXIT_FAILURE;
    }
    if (!rc && req.strict && strict_precheck(&req, &st))
        rc = CLI_EXIT_USAGE; /* no estimate, no table, no file */
    int failed = 0, ran = 0, strict_failed = 0;
    cli_progress_init(&st.meter, "tessel compare", "rows", rc || req.quiet);
    st.nrows = req.nstrategies * (unsigned)(req.exact + req.stat);
    st.nlevels = st.spec ? st.spec->nlevels : 0;
    for (unsigned k = 0; !rc && k < req.nstrategies; k++)
        for (int e = 0; e < 2; e++) {
            if (!(e == 0 ? req.exact : req.stat))
                continue;
            compare_row *row = &rows[n++];
            char what[96];
            snprintf(what, sizeof(what), ", %s (%s)", req.strategies[k], e == 0 ? "exact" : "stat");
            st.row = n - 1;
            cli_progress_update(&st.meter, st.row, st.nrows, -1, what);
            run_one(&st, req.strategies[k], e == 0 ? TESSEL_STRATEGY_EXACT : TESSEL_STRATEGY_STAT,
                    row);
            cli_progress_update(&st.meter, n, st.nrows, -1, what);
            if (n == st.nrows || row->skipped || row->error[0])
                cli_progress_end(&st.meter); /* a clean line for the note */
            if (row->skipped) {
                fprintf(stderr, "tessel compare: note: %s (%s) does not apply, skipped: %s\n",
                        row->strategy, row->estimator, row->error);
            } else if (row->error[0]) {
                fprintf(stderr, "tessel compare: %s (%s): %s\n", row->strategy, row->estimator,
                        row->error);
                failed = 1;
            } else {
                ran = 1;
                row_notes(&st, row);
                if (req.strict && strict_fails(&st, row))
                    strict_failed = 1;
            }
        }
    if (!rc && !failed && !ran) {
        fprintf(stderr, "tessel compare: error: no strategy applies to %s\n", req.spec_path);
        rc = CLI_EXIT_USAGE;
    }
    if (!rc && strict_failed)
        rc = CLI_EXIT_USAGE; /* --strict: no table, no file */
    if (!rc && req.out_dir)
        rc = write_file(req.out_dir, rows, n, req.no_timing);
    if (!rc && !req.quiet) {
        if (req.csv)
            write_csv(stdout, rows, n, req.no_timing);
        else
            write_table(stdout, &st, rows, n, req.no_timing);
    }
    if (!rc && failed)
        rc = CLI_EXIT_FAILURE;
    free(rows);
    state_free(&st);
    request_free(&req);
    return rc;
}

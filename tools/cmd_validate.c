/* tessel validate: compare predicted numbers with a reference (a tessel
 * exact run, a cycle simulator's CSV, or a simulator's own output files
 * read with --reference-format), per row and per metric. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "tessel/report.h"

enum {
    OPT_HELP,
    OPT_KEY,
    OPT_METRIC,
    OPT_MAP,
    OPT_FORMAT,
    OPT_OUTPUT,
    OPT_MAX_ERROR,
    OPT_QUIET,
    OPT_REFERENCE_FORMAT,
    OPT_SET_KEY,
    OPT_COUNT
};

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_KEY] = { "--key", "-k", 1 },
    [OPT_METRIC] = { "--metric", "-m", 1 },
    [OPT_MAP] = { "--map", NULL, 1 },
    [OPT_FORMAT] = { "--format", "-f", 1 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_MAX_ERROR] = { "--max-error", NULL, 1 },
    [OPT_QUIET] = { "--quiet", "-q", 0 },
    [OPT_REFERENCE_FORMAT] = { "--reference-format", "-r", 1 },
    [OPT_SET_KEY] = { "--set-key", NULL, 1 },
};

static void help(void)
{
    printf(
        "usage: tessel validate PREDICTED.csv REFERENCE.csv [options]\n"
        "       tessel validate PREDICTED.csv FILE... --reference-format drt|stonne|sam\n\n"
        "Joins the rows of two CSV files on key columns and reports, per row and metric,\n"
        "the relative error (predicted - reference) / reference, then per metric the\n"
        "mean, median, p95 and max of |relative error| and the Spearman rank correlation.\n"
        "PREDICTED is usually a tessel summary.csv or traffic.csv, REFERENCE a tessel exact\n"
        "run or a cycle simulator's CSV, or with --reference-format a simulator's own\n"
        "output files.\n\n"
        "options:\n"
        "  -k, --key A,B,...       key columns (default: design,data,level,tensor when\n"
        "                          PREDICTED has a level column, else design,data; plus\n"
        "                          workload and strategy when both files have them)\n"
        "  -m, --metric A,B,...    metric columns (default: every column that is numeric\n"
        "                          in both files and not a key, timing columns included)\n"
        "      --map NAME=COLUMN   REFERENCE's COLUMN plays the role NAME, for keys and\n"
        "                          metrics alike (repeatable)\n"
        "  -f, --format FMT        text (default: per-row table, per-metric summary,\n"
        "                          unmatched rows) or csv (the per-metric summary)\n"
        "  -o, --output FILE       also write the per-metric summary CSV to FILE\n"
        "                          (atomically)\n"
        "      --max-error X       exit 1 when a metric's p95 |relative error| exceeds X,\n"
        "                          or a metric has a row with a zero reference and a\n"
        "                          non-zero prediction (for CI)\n"
        "  -q, --quiet             nothing on standard output\n"
        "  -r, --reference-format F  how to read the reference: csv (default: one CSV\n"
        "                          file), drt (the DRT simulator's standard output, one\n"
        "                          run per file), stonne (STONNE's stats JSON, .counters\n"
        "                          and energy report of one run) or sam (SAM's per-block\n"
        "                          cycle CSVs, benchmark JSONs and pytest log). The files\n"
        "                          become rows with tessel's column names, in the grain\n"
        "                          of PREDICTED (per level and tensor when it has a\n"
        "                          level column); element counts stay *_elements\n"
        "                          columns, never compared with bytes. Fields tessel\n"
        "                          does not know are listed as notes on stderr.\n"
        "      --set-key NAME=VALUE  key column NAME of every reference row becomes\n"
        "                          VALUE (added when missing); NAME:OLD=VALUE changes\n"
        "                          only the rows whose NAME is OLD (repeatable, applied\n"
        "                          in order): simulator files rarely name the design\n"
        "                          and data as tessel does\n\n"
        "A zero reference gives error 0 when the prediction is 0 too, else 'inf' (counted\n"
        "in the inf column, left out of the statistics). Quantiles are nearest-rank.\n"
        "Rows whose key only one file has are counted and listed, never dropped silently.\n"
        "Exit status: 0 when the comparison ran (whatever the errors), 1 when --max-error\n"
        "is exceeded or on an internal failure, 2 on bad usage or bad input.\n\n"
        "example:\n"
        "  tessel validate stat/traffic.csv exact/traffic.csv --metric data_bytes,reads\n"
        "  tessel validate out/summary.csv sim.csv --key design,data --map cycles=sim_cycles\n"
        "  tessel validate out/summary.csv drt/run.txt --reference-format drt \\\n"
        "      --set-key design=extensor --set-key data=rand1k_d1_A\n");
}

/* The comma-separated items of every value of option `opt`, in order,
 * pointing into one malloc'd copy per value (kept in *copies). */
typedef struct list {
    const char **item;
    size_t n;
    char **copies;
    size_t ncopies;
} list;

static void list_free(list *l)
{
    for (size_t i = 0; i < l->ncopies; i++)
        free(l->copies[i]);
    free(l->copies);
    free(l->item);
    memset(l, 0, sizeof(*l));
}

static int split_option(const cli_args *args, int opt, list *l)
{
    size_t cap = 0;
    for (int i = 0; i < args->count; i++)
        if (args->option[i] == opt)
            cap += strlen(args->value[i]) + 1;
    if (!cap)
        return CLI_EXIT_OK;
    l->item = calloc(cap, sizeof(*l->item));
    l->copies = calloc((size_t)args->count, sizeof(*l->copies));
    if (!l->item || !l->copies) {
        fprintf(stderr, "tessel validate: error: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    for (int i = 0; i < args->count; i++) {
        if (args->option[i] != opt)
            continue;
        char *s = strdup(args->value[i]);
        if (!s) {
            fprintf(stderr, "tessel validate: error: out of memory\n");
            return CLI_EXIT_FAILURE;
        }
        l->copies[l->ncopies++] = s;
        for (char *p = s;;) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            if (!*p)
                return cli_usage_error("validate", "%s needs a comma-separated list of column "
                                                   "names, not '%s'",
                                       options[opt].name, args->value[i]);
            l->item[l->n++] = p;
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    return CLI_EXIT_OK;
}

typedef struct validate_state {
    list keys, metrics;
    tessel_validate_map *map;
    tessel_report_csv *pred, *ref;
    tessel_validate_result *result;
    tessel_diag_list notes;
} validate_state;

static void state_free(validate_state *st)
{
    list_free(&st->keys);
    list_free(&st->metrics);
    free(st->map);
    tessel_report_csv_free(&st->pred);
    tessel_report_csv_free(&st->ref);
    tessel_validate_result_free(&st->result);
    tessel_diag_list_free(&st->notes);
}

/* "file:line:col: note: message" for each note of the reference reader. */
static void print_notes(const tessel_diag_list *notes)
{
    for (size_t i = 0; i < notes->count; i++) {
        const tessel_diag *d = &notes->items[i];
        if (d->line && d->column)
            fprintf(stderr, "%s:%llu:%u: note: %s\n", d->file, (unsigned long long)d->line,
                    (unsigned)d->column, d->message);
        else
            fprintf(stderr, "%s: note: %s\n", d->file, d->message);
    }
}

/* Splits each --set-key NAME=VALUE or NAME:OLD=VALUE in place (argv):
 * the name ends at a NUL, *from (NULL without ':') and *value follow. */
static int split_set_key(char *spec, const char **from, const char **value)
{
    char *eq = strchr(spec, '=');
    char *colon = eq ? memchr(spec, ':', (size_t)(eq - spec)) : NULL;
    char *name_end = colon ? colon : eq;
    if (!eq || name_end == spec)
        return cli_usage_error("validate", "--set-key needs NAME=VALUE or NAME:OLD=VALUE, not "
                                           "'%s'",
                               spec);
    *from = colon ? colon + 1 : NULL;
    *value = eq + 1;
    *name_end = '\0';
    *eq = '\0';
    return CLI_EXIT_OK;
}

typedef struct set_key {
    const char *name, *from, *value;
} set_key;

static int parse_set_keys(const cli_args *args, set_key *keys, int *n)
{
    *n = 0;
    for (int i = 0; i < args->count; i++) {
        if (args->option[i] != OPT_SET_KEY)
            continue;
        set_key *k = &keys[(*n)++];
        k->name = args->value[i];
        int rc = split_set_key((char *)args->value[i], &k->from, &k->value);
        if (rc)
            return rc;
    }
    return CLI_EXIT_OK;
}

static int apply_set_keys(const set_key *keys, int n, tessel_report_csv *ref)
{
    for (int i = 0; i < n; i++) {
        tessel_diag d;
        tessel_diag_clear(&d);
        if (tessel_report_csv_set_key(ref, keys[i].name, keys[i].from, keys[i].value, &d))
            return cli_report(&d);
    }
    return CLI_EXIT_OK;
}

/* The reference's files through the reader of --reference-format. */
static int load_reference(const cli_args *args, tessel_simref_format format,
                          validate_state *st, tessel_diag *d)
{
    int n = cli_positionals(args) - 1;
    const char *paths[CLI_MAX_ARGS];
    for (int i = 0; i < n; i++)
        paths[i] = cli_positional(args, i + 1);
    tessel_simref_grain grain = tessel_report_csv_find(st->pred, "level") >= 0
                                    ? TESSEL_SIMREF_TRAFFIC
                                    : TESSEL_SIMREF_SUMMARY;
    tessel_diag_list_init(&st->notes, NULL);
    int rc = tessel_simref_load(format, grain, paths, (size_t)n, NULL, &st->ref, &st->notes, d);
    print_notes(&st->notes);
    if (!rc && format != TESSEL_SIMREF_CSV)
        rc = tessel_simref_derive_columns(st->pred, st->ref, d);
    return rc;
}

/* tessel validate: read the predicted and reference tables (or a simulator's files),
 * match rows, compute errors, print or write them, and apply --max-error. */
static int run(const cli_args *args, validate_state *st)
{
    tessel_simref_format format = TESSEL_SIMREF_CSV;
    const char *rf = cli_value(args, OPT_REFERENCE_FORMAT);
    if (rf && tessel_simref_format_parse(rf, &format))
        return cli_usage_error("validate", "--reference-format must be csv, drt, stonne or sam, "
                                           "not '%s'",
                               rf);
    if (format == TESSEL_SIMREF_CSV && cli_positionals(args) != 2)
        return cli_usage_error("validate", "needs PREDICTED.csv and REFERENCE.csv (see tessel "
                                           "validate --help)");
    if (cli_positionals(args) < 2)
        return cli_usage_error("validate", "needs PREDICTED.csv and the %s reference's files "
                                           "(see tessel validate --help)",
                               tessel_simref_format_name(format));
    const char *fmt = cli_value(args, OPT_FORMAT);
    int csv = 0;
    if (fmt && strcmp(fmt, "csv") == 0)
        csv = 1;
    else if (fmt && strcmp(fmt, "text") != 0)
        return cli_usage_error("validate", "--format must be text or csv, not '%s'", fmt);
    double max_error = NAN;
    const char *me = cli_value(args, OPT_MAX_ERROR);
    if (me && (cli_parse_double("validate", "--max-error", me, &max_error) != CLI_EXIT_OK))
        return CLI_EXIT_USAGE;
    if (me && !(max_error >= 0))
        return cli_usage_error("validate", "--max-error must be a number >= 0, not '%s'", me);
    const char *out_path = cli_value(args, OPT_OUTPUT);
    if (out_path && !out_path[0])
        return cli_usage_error("validate", "--output needs a file name");

    tessel_validate_options opt;
    tessel_validate_options_init(&opt);
    int rc = split_option(args, OPT_KEY, &st->keys);
    if (!rc)
        rc = split_option(args, OPT_METRIC, &st->metrics);
    if (rc)
        return rc;
    opt.keys = st->keys.item;
    opt.nkeys = st->keys.n;
    opt.metrics = st->metrics.item;
    opt.nmetrics = st->metrics.n;
    st->map = calloc((size_t)args->count + 1, sizeof(*st->map));
    if (!st->map) {
        fprintf(stderr, "tessel validate: error: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    /* NAME=COLUMN views into argv: the first '=' splits, the column may
     * itself hold one. */
    for (int i = 0; i < args->count; i++) {
        if (args->option[i] != OPT_MAP)
            continue;
        const char *v = args->value[i];
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || !eq[1])
            return cli_usage_error("validate", "--map needs NAME=COLUMN, not '%s'", v);
        ((char *)eq)[0] = '\0';
        st->map[opt.nmap].name = v;
        st->map[opt.nmap].column = eq + 1;
        opt.nmap++;
    }
    opt.map = st->map;
    set_key set_keys[CLI_MAX_ARGS];
    int nset_keys = 0;
    rc = parse_set_keys(args, set_keys, &nset_keys);
    if (rc)
        return rc;

    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_report_csv_load(cli_positional(args, 0), NULL, &st->pred, &d) ||
        load_reference(args, format, st, &d))
        return cli_report(&d);
    rc = apply_set_keys(set_keys, nset_keys, st->ref);
    if (rc)
        return rc;
    if (tessel_validate_compare(st->pred, st->ref, &opt, NULL, &st->result, &d))
        return cli_report(&d);

    if (!cli_has(args, OPT_QUIET)) {
        if (csv)
            tessel_validate_summary_csv(stdout, st->result);
        else
            tessel_validate_print(stdout, st->result);
    }
    if (out_path) {
        cli_output o;
        rc = cli_output_open(&o, out_path);
        if (rc)
            return rc;
        int ok = tessel_validate_summary_csv(o.stream, st->result) == 0;
        rc = cli_output_close(&o, ok);
        if (rc)
            return rc;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tessel: error: writing to standard output failed\n");
        return CLI_EXIT_FAILURE;
    }
    if (me) {
        size_t n = tessel_validate_exceeding(st->result, max_error);
        if (n) {
            fprintf(stderr, "tessel validate: %zu metric%s over --max-error %s:", n,
                    n == 1 ? "" : "s", me);
            for (size_t m = 0; m < st->result->nmetrics; m++) {
                const tessel_validate_metric *M = &st->result->metric[m];
                if (M->inf_rows > 0)
                    fprintf(stderr, " %s (%zu inf)", M->name, M->inf_rows);
                else if (!isnan(M->p95_abs_rel_err) && M->p95_abs_rel_err > max_error)
                    fprintf(stderr, " %s (p95 %.4g)", M->name, M->p95_abs_rel_err);
            }
            fputc('\n', stderr);
            return CLI_EXIT_FAILURE;
        }
    }
    return CLI_EXIT_OK;
}

int cmd_validate(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("validate", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    validate_state st;
    memset(&st, 0, sizeof(st));
    int rc = run(&args, &st);
    state_free(&st);
    return rc;
}

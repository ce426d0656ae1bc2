/* tessel plot: SVG figures of tessel's CSV reports (traffic breakdown,
 * roofline, Pareto front, predicted against reference). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "tessel/plot.h"
#include "tessel/report.h"

enum {
    OPT_HELP,
    OPT_OUTPUT,
    OPT_TITLE,
    OPT_SIZE,
    OPT_METRIC,
    OPT_MAX_POINTS,
    OPT_DRAM_LEVEL,
    OPT_X,
    OPT_Y,
    OPT_LOG,
    OPT_KEY,
    OPT_MAP,
    OPT_COUNT
};

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_TITLE] = { "--title", "-t", 1 },
    [OPT_SIZE] = { "--size", NULL, 1 },
    [OPT_METRIC] = { "--metric", "-m", 1 },
    [OPT_MAX_POINTS] = { "--max-points", NULL, 1 },
    [OPT_DRAM_LEVEL] = { "--dram-level", NULL, 1 },
    [OPT_X] = { "--x", "-x", 1 },
    [OPT_Y] = { "--y", "-y", 1 },
    [OPT_LOG] = { "--log", NULL, 0 },
    [OPT_KEY] = { "--key", "-k", 1 },
    [OPT_MAP] = { "--map", NULL, 1 },
};

static void help(void)
{
    printf(
        "usage: tessel plot FIGURE INPUT.csv... [options] -o FIGURE.svg\n\n"
        "Draws a self-contained SVG figure from tessel's CSV reports.\n\n"
        "figures:\n"
        "  traffic TRAFFIC.csv          stacked bars per storage level, one segment per\n"
        "                               tensor; one group of bars per design point\n"
        "  roofline SUMMARY.csv         MACs per cycle against MACs per DRAM byte (log-log),\n"
        "                               with the compute peak and the DRAM bandwidth\n"
        "  pareto SUMMARY.csv --x COL --y COL\n"
        "                               the two columns, both minimised; the non-dominated\n"
        "                               points joined by a step line\n"
        "  scatter PRED.csv REF.csv     predicted against reference values of one metric,\n"
        "                               rows joined like tessel validate (log-log, y = x,\n"
        "                               +-10 %% band; median and p95 error in the title)\n\n"
        "options:\n"
        "  -o, --output FILE       the SVG file, written atomically (default: standard\n"
        "                          output)\n"
        "  -t, --title TEXT        the figure's title (default: one describing it)\n"
        "      --size WxH          width and height in pixels (default: per figure;\n"
        "                          grown when too small for the text)\n"
        "  -m, --metric COL        traffic: the column stacked (default bytes, that is\n"
        "                          data_bytes + metadata_bytes; energy_pj is useful);\n"
        "                          scatter: the metric compared (default dram_bytes)\n"
        "      --max-points N      traffic: design points drawn, the first N (default %u)\n"
        "      --dram-level NAME   roofline: the backing store's name in the bound column\n"
        "                          (default DRAM)\n"
        "  -x, --x COL             pareto: the column on the x axis\n"
        "  -y, --y COL             pareto: the column on the y axis\n"
        "      --log               pareto: log10 axes\n"
        "  -k, --key A,B,...       scatter: join columns (default as tessel validate)\n"
        "      --map NAME=COLUMN   scatter: REF.csv's COLUMN plays the role NAME\n"
        "                          (repeatable)\n\n"
        "Columns are found by name, so a sweep's extra columns are fine. The roofline's\n"
        "compute peak is flops / compute_cycles; its DRAM bandwidth is dram_bytes / cycles\n"
        "of the points whose bound is DRAM (none: no bandwidth line).\n"
        "Exit status: 0 on success, 1 on an internal failure (out of memory, write\n"
        "error), 2 on bad usage or bad input.\n\n"
        "example:\n"
        "  tessel plot traffic out/traffic.csv -o traffic.svg\n"
        "  tessel plot pareto sweep/summary.csv --x energy_pj --y cycles --log -o pareto.svg\n"
        "  tessel plot scatter stat/summary.csv exact/summary.csv -o stat-vs-exact.svg\n",
        TESSEL_PLOT_MAX_POINTS);
}

typedef enum figure { FIGURE_TRAFFIC, FIGURE_ROOFLINE, FIGURE_PARETO, FIGURE_SCATTER } figure;

static const struct {
    const char *name;
    int inputs;
    /* options that apply to the figure, besides -o, --title and --size */
    int allowed[5];
} figures[] = {
    [FIGURE_TRAFFIC] = { "traffic", 1, { OPT_METRIC, OPT_MAX_POINTS, -1 } },
    [FIGURE_ROOFLINE] = { "roofline", 1, { OPT_DRAM_LEVEL, -1 } },
    [FIGURE_PARETO] = { "pareto", 1, { OPT_X, OPT_Y, OPT_LOG, -1 } },
    [FIGURE_SCATTER] = { "scatter", 2, { OPT_METRIC, OPT_KEY, OPT_MAP, -1 } },
};
#define NFIGURES (sizeof(figures) / sizeof(figures[0]))

static int figure_allows(figure fig, int opt)
{
    if (opt < 0 || opt == OPT_HELP || opt == OPT_OUTPUT || opt == OPT_TITLE || opt == OPT_SIZE)
        return 1;
    for (int i = 0; i < 5 && figures[fig].allowed[i] >= 0; i++)
        if (figures[fig].allowed[i] == opt)
            return 1;
    return 0;
}

static int choose_figure(const cli_args *args, figure *fig)
{
    const char *name = cli_positional(args, 0);
    if (!name)
        return cli_usage_error("plot", "needs a figure: traffic, roofline, pareto or scatter "
                                       "(see tessel plot --help)");
    const char *names[NFIGURES];
    for (size_t i = 0; i < NFIGURES; i++) {
        names[i] = figures[i].name;
        if (strcmp(name, figures[i].name) == 0) {
            *fig = (figure)i;
            return CLI_EXIT_OK;
        }
    }
    const char *near = tessel_nearest_word(name, names, NFIGURES);
    if (near)
        return cli_usage_error("plot", "unknown figure '%s' (did you mean %s?)", name, near);
    return cli_usage_error("plot", "unknown figure '%s': traffic, roofline, pareto or scatter",
                           name);
}

static int check_arguments(const cli_args *args, figure fig)
{
    int inputs = figures[fig].inputs;
    if (cli_positionals(args) != 1 + inputs)
        return cli_usage_error("plot", "%s needs %s (see tessel plot --help)", figures[fig].name,
                               fig == FIGURE_SCATTER ? "PRED.csv and REF.csv"
                               : fig == FIGURE_TRAFFIC ? "one TRAFFIC.csv"
                                                       : "one SUMMARY.csv");
    for (int i = 0; i < args->count; i++)
        if (!figure_allows(fig, args->option[i]))
            return cli_usage_error("plot", "%s does not apply to the %s figure",
                                   options[args->option[i]].name, figures[fig].name);
    if (fig == FIGURE_PARETO && (!cli_has(args, OPT_X) || !cli_has(args, OPT_Y)))
        return cli_usage_error("plot", "pareto needs the two columns to minimise: --x COL "
                                       "--y COL");
    const char *out = cli_value(args, OPT_OUTPUT);
    if (out && !out[0])
        return cli_usage_error("plot", "--output needs a file name");
    return CLI_EXIT_OK;
}

static int read_size(const cli_args *args, tessel_plot_options *po)
{
    const char *size = cli_value(args, OPT_SIZE);
    if (!size)
        return CLI_EXIT_OK;
    unsigned long long wh[2];
    unsigned n = 0;
    if (cli_parse_shape("plot", "--size", size, wh, 2, &n))
        return CLI_EXIT_USAGE;
    if (n != 2 || wh[0] > TESSEL_PLOT_MAX_SIZE || wh[1] > TESSEL_PLOT_MAX_SIZE)
        return cli_usage_error("plot", "--size must be WIDTHxHEIGHT in pixels, each at most %u, "
                                       "not '%s'",
                               TESSEL_PLOT_MAX_SIZE, size);
    po->width = (unsigned)wh[0];
    po->height = (unsigned)wh[1];
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* scatter's --key and --map. */

typedef struct join_state {
    char *keys;                 /* one copy of the --key value, split at commas */
    const char **key;
    tessel_validate_map *map;
    tessel_validate_options opt;
} join_state;

static void join_free(join_state *j)
{
    free(j->keys);
    free(j->key);
    free(j->map);
}

static int split_keys(join_state *j, const char *value)
{
    j->keys = strdup(value);
    j->key = calloc(strlen(value) + 1, sizeof(*j->key));
    if (!j->keys || !j->key) {
        fprintf(stderr, "tessel plot: error: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    for (char *p = j->keys;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!*p)
            return cli_usage_error("plot", "--key needs a comma-separated list of column names, "
                                           "not '%s'",
                                   value);
        j->key[j->opt.nkeys++] = p;
        if (!comma)
            return CLI_EXIT_OK;
        p = comma + 1;
    }
}

static int read_join(const cli_args *args, join_state *j)
{
    tessel_validate_options_init(&j->opt);
    const char *keys = cli_value(args, OPT_KEY);
    if (keys) {
        int rc = split_keys(j, keys);
        if (rc)
            return rc;
        j->opt.keys = j->key;
    }
    j->map = calloc((size_t)args->count + 1, sizeof(*j->map));
    if (!j->map) {
        fprintf(stderr, "tessel plot: error: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    for (int i = 0; i < args->count; i++) {
        if (args->option[i] != OPT_MAP)
            continue;
        char *v = (char *)args->value[i];
        char *eq = strchr(v, '=');
        if (!eq || eq == v || !eq[1])
            return cli_usage_error("plot", "--map needs NAME=COLUMN, not '%s'", v);
        *eq = '\0';
        j->map[j->opt.nmap].name = v;
        j->map[j->opt.nmap].column = eq + 1;
        j->opt.nmap++;
    }
    j->opt.map = j->map;
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ */

static int read_options(const cli_args *args, tessel_plot_options *po)
{
    tessel_plot_options_init(po);
    po->title = cli_value(args, OPT_TITLE);
    po->metric = cli_value(args, OPT_METRIC);
    po->dram_level = cli_value(args, OPT_DRAM_LEVEL);
    po->x = cli_value(args, OPT_X);
    po->y = cli_value(args, OPT_Y);
    po->log_scale = cli_has(args, OPT_LOG);
    const char *max = cli_value(args, OPT_MAX_POINTS);
    if (max) {
        unsigned long long n;
        if (cli_parse_u64("plot", "--max-points", max, &n))
            return CLI_EXIT_USAGE;
        if (n == 0)
            return cli_usage_error("plot", "--max-points must be at least 1");
        po->max_points = (size_t)n;
    }
    return read_size(args, po);
}

static int draw(figure fig, FILE *f, tessel_report_csv *const *table,
                const tessel_plot_options *po, tessel_diag *d)
{
    switch (fig) {
    case FIGURE_TRAFFIC: return tessel_plot_traffic(f, table[0], po, NULL, d);
    case FIGURE_ROOFLINE: return tessel_plot_roofline(f, table[0], po, NULL, d);
    case FIGURE_PARETO: return tessel_plot_pareto(f, table[0], po, NULL, d);
    case FIGURE_SCATTER: return tessel_plot_scatter(f, table[0], table[1], po, NULL, d);
    }
    return TESSEL_EINVAL;
}

static int run(const cli_args *args, tessel_report_csv **table, join_state *join)
{
    figure fig = FIGURE_TRAFFIC;
    int rc = choose_figure(args, &fig);
    if (!rc)
        rc = check_arguments(args, fig);
    tessel_plot_options po;
    if (!rc)
        rc = read_options(args, &po);
    if (!rc && fig == FIGURE_SCATTER) {
        rc = read_join(args, join);
        po.join = &join->opt;
    }
    if (rc)
        return rc;
    tessel_diag d;
    tessel_diag_clear(&d);
    for (int i = 0; i < figures[fig].inputs; i++)
        if (tessel_report_csv_load(cli_positional(args, 1 + i), NULL, &table[i], &d))
            return cli_report(&d);
    cli_output out;
    rc = cli_output_open(&out, cli_value(args, OPT_OUTPUT));
    if (rc)
        return rc;
    int code = draw(fig, out.stream, table, &po, &d);
    if (code) {
        cli_output_close(&out, 0);
        if (code == TESSEL_EIO) {
            fprintf(stderr, "tessel plot: error: writing the figure failed\n");
            return CLI_EXIT_FAILURE;
        }
        return cli_report(&d);
    }
    return cli_output_close(&out, 1);
}

int cmd_plot(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("plot", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    tessel_report_csv *table[2] = { NULL, NULL };
    join_state join;
    memset(&join, 0, sizeof(join));
    int rc = run(&args, table, &join);
    tessel_report_csv_free(&table[0]);
    tessel_report_csv_free(&table[1]);
    join_free(&join);
    return rc;
}

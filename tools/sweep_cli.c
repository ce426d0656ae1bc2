/* Pieces shared by tessel sweep, merge and map. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sweep_cli.h"
#include "tessel/plot.h"

int sweep_cli_objectives(const char *cmd, const char *text, sweep_cli_names *out)
{
    memset(out, 0, sizeof(*out));
    if (!text)
        return CLI_EXIT_OK;
    if (!(out->copy = strdup(text))) {
        fprintf(stderr, "tessel %s: error: out of memory\n", cmd);
        return CLI_EXIT_FAILURE;
    }
    for (char *p = out->copy, *next; p; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = '\0';
        if (!*p || out->n == TESSEL_SWEEP_MAX_OBJECTIVES)
            return cli_usage_error(cmd, "--pareto names two or three summary.csv columns "
                                        "separated by commas, not '%s'", text);
        out->item[out->n++] = p;
    }
    if (out->n < 2)
        return cli_usage_error(cmd, "--pareto needs two or three objectives, not '%s'", text);
    return CLI_EXIT_OK;
}

void sweep_cli_names_free(sweep_cli_names *n)
{
    free(n->copy);
    memset(n, 0, sizeof(*n));
}

/* Writes one figure to DIR/NAME atomically; returns an exit status. */
typedef int (*figure_fn)(FILE *f, const tessel_report_csv *t, const tessel_plot_options *o,
                         const tessel_allocator *a, tessel_diag *diag);

static int write_figure(const char *dir, const char *name, figure_fn draw,
                        const tessel_report_csv *t, const tessel_plot_options *o, int quiet)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    tessel_outfile *out = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_outfile_open(path, NULL, &out, &d);
    if (!rc)
        rc = draw(tessel_outfile_stream(out), t, o, NULL, &d);
    if (!rc)
        rc = tessel_outfile_commit(&out, &d);
    else
        tessel_outfile_abort(&out);
    if (rc)
        return cli_report(&d);
    if (!quiet)
        printf("wrote %s\n", path);
    return CLI_EXIT_OK;
}

/* One distinct value in column `name` (a sweep over one data entry). */
static int single_value(const tessel_report_csv *t, const char *name)
{
    long c = tessel_report_csv_find(t, name);
    for (size_t r = 1; c >= 0 && r < tessel_report_csv_rows(t); r++)
        if (strcmp(tessel_report_csv_cell(t, r, (size_t)c), tessel_report_csv_cell(t, 0, (size_t)c)))
            return 0;
    return c >= 0;
}

static int pareto_figure(const char *dir, const tessel_report_csv *summary, int quiet)
{
    char names[TESSEL_SWEEP_MAX_OBJECTIVES][64];
    size_t n = 0;
    tessel_diag d;
    if (tessel_sweep_dir_objectives(dir, names, TESSEL_SWEEP_MAX_OBJECTIVES, &n, &d))
        return cli_report(&d);
    if (n < 2)
        return CLI_EXIT_OK;
    const char *x = names[0], *y = names[1];
    if (strncmp(x, "max:", 4) == 0 || strncmp(y, "max:", 4) == 0 || !single_value(summary, "data")) {
        if (!quiet)
            printf("pareto.svg not drawn: it shows one front of two minimised objectives on one "
                   "data set (use tessel plot pareto on a part of summary.csv)\n");
        return CLI_EXIT_OK;
    }
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.x = strncmp(x, "min:", 4) == 0 ? x + 4 : x;
    o.y = strncmp(y, "min:", 4) == 0 ? y + 4 : y;
    o.log_scale = 1;
    return write_figure(dir, "pareto.svg", tessel_plot_pareto, summary, &o, quiet);
}

int sweep_cli_plots(const char *dir, int quiet)
{
    char path[4096];
    tessel_report_csv *summary = NULL, *traffic = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    snprintf(path, sizeof(path), "%s/summary.csv", dir);
    int rc = tessel_report_csv_load(path, NULL, &summary, &d);
    if (!rc) {
        snprintf(path, sizeof(path), "%s/traffic.csv", dir);
        rc = tessel_report_csv_load(path, NULL, &traffic, &d);
    }
    int status = rc ? cli_report(&d) : CLI_EXIT_OK;
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    if (!status)
        status = write_figure(dir, "roofline.svg", tessel_plot_roofline, summary, &o, quiet);
    if (!status)
        status = write_figure(dir, "traffic.svg", tessel_plot_traffic, traffic, &o, quiet);
    if (!status)
        status = pareto_figure(dir, summary, quiet);
    tessel_report_csv_free(&summary);
    tessel_report_csv_free(&traffic);
    return status;
}

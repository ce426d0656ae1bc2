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
    cli_output out;
    int status = cli_output_open(&out, path);
    if (status)
        return status;
    tessel_diag d;
    tessel_diag_clear(&d);
    if (draw(out.stream, t, o, NULL, &d)) {
        cli_output_close(&out, 0);
        return cli_report(&d);
    }
    status = cli_output_close(&out, 1);
    if (!status && !quiet)
        printf("wrote %s\n", path);
    return status;
}

#define MAX_PARETO_FIGURES 32

/* The rows of t whose column `col` holds `value`, as a table of their own. */
static int rows_with(const tessel_report_csv *t, size_t col, const char *value,
                     tessel_report_csv **out, tessel_diag *d)
{
    size_t ncols = tessel_report_csv_columns(t), nrows = tessel_report_csv_rows(t), kept = 0;
    const char **cells = malloc((nrows + 1) * ncols * sizeof(*cells));
    if (!cells)
        return tessel_diag_set(d, TESSEL_ENOMEM, "", 0, 0, "", "out of memory");
    for (size_t c = 0; c < ncols; c++)
        cells[c] = tessel_report_csv_column_name(t, c);
    for (size_t r = 0; r < nrows; r++)
        if (strcmp(tessel_report_csv_cell(t, r, col), value) == 0) {
            kept++;
            for (size_t c = 0; c < ncols; c++)
                cells[kept * ncols + c] = tessel_report_csv_cell(t, r, c);
        }
    int rc = tessel_report_csv_from_cells(tessel_report_csv_name(t), ncols, kept, cells, NULL,
                                          NULL, out, d);
    free(cells);
    return rc;
}

/* "pareto-G51.svg": the data label with anything but letters, digits,
 * '-', '_' and '.' replaced by '_'. */
static void pareto_name(const char *data, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "pareto-");
    for (const char *p = data; *p && len + 5 < n; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '-' || ch == '_' || ch == '.';
        buf[len++] = ok ? ch : '_';
    }
    snprintf(buf + len, n - len, ".svg");
}

/* pareto.svg for a sweep on one data set; pareto-DATA.svg for each data
 * set of a sweep on several (the fronts are per data set). */
static int pareto_figures(const char *dir, const tessel_report_csv *summary, int quiet)
{
    char names[TESSEL_SWEEP_MAX_OBJECTIVES][64];
    size_t n = 0;
    tessel_diag d;
    if (tessel_sweep_dir_objectives(dir, names, TESSEL_SWEEP_MAX_OBJECTIVES, &n, &d))
        return cli_report(&d);
    if (n < 2)
        return CLI_EXIT_OK;
    const char *x = names[0], *y = names[1];
    long col = tessel_report_csv_find(summary, "data");
    if (strncmp(x, "max:", 4) == 0 || strncmp(y, "max:", 4) == 0 || col < 0) {
        if (!quiet)
            printf("no Pareto figure: it shows two minimised objectives\n");
        return CLI_EXIT_OK;
    }
    tessel_plot_options o;
    tessel_plot_options_init(&o);
    o.x = strncmp(x, "min:", 4) == 0 ? x + 4 : x;
    o.y = strncmp(y, "min:", 4) == 0 ? y + 4 : y;
    o.log_scale = 1;
    size_t rows = tessel_report_csv_rows(summary), drawn = 0;
    int status = CLI_EXIT_OK;
    for (size_t r = 0; r < rows && !status; r++) {
        const char *data = tessel_report_csv_cell(summary, r, (size_t)col);
        /* a sweep's rows come data set by data set: a new one starts here */
        if (r > 0 && strcmp(tessel_report_csv_cell(summary, r - 1, (size_t)col), data) == 0)
            continue;
        if (drawn++ == MAX_PARETO_FIGURES) {
            if (!quiet)
                printf("Pareto figures drawn for the first %u data sets only\n",
                       MAX_PARETO_FIGURES);
            break;
        }
        tessel_report_csv *part = NULL;
        if (rows_with(summary, (size_t)col, data, &part, &d))
            return cli_report(&d);
        char name[300];
        pareto_name(data, name, sizeof(name));
        int one = tessel_report_csv_rows(part) == rows;
        status = write_figure(dir, one ? "pareto.svg" : name, tessel_plot_pareto, part, &o,
                              quiet);
        tessel_report_csv_free(&part);
    }
    return status;
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
        status = pareto_figures(dir, summary, quiet);
    tessel_report_csv_free(&summary);
    tessel_report_csv_free(&traffic);
    return status;
}

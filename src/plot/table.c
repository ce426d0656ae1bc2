/* Reading the input tables: columns by name with an error that says what
 * is missing and what is there, numbers with their position, and axis
 * titles for tessel's columns. */
#include <math.h>
#include <string.h>

#include "plot_internal.h"

int plot_find_column(const tessel_report_csv *t, const char *name, const char *why,
                     size_t *col, const tessel_allocator *a, tessel_diag *diag)
{
    long c = tessel_report_csv_find(t, name);
    if (c >= 0) {
        *col = (size_t)c;
        return 0;
    }
    char columns[300], hint[160] = "";
    tessel_report_csv_column_list(t, columns, sizeof(columns));
    const char *near = tessel_report_csv_nearest_column(t, name, a);
    if (near)
        snprintf(hint, sizeof(hint), " (did you mean '%s'?)", near);
    return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(t), 0, 0, name,
                           "column '%s' not found%s; %s needs it; the columns are: %s", name,
                           hint, why, columns);
}

int plot_require_rows(const tessel_report_csv *t, tessel_diag *diag)
{
    if (tessel_report_csv_rows(t) > 0)
        return 0;
    return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(t), 0, 0, NULL,
                           "no data rows: nothing to plot");
}

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t')
            return 0;
    return 1;
}

int plot_read_number(const tessel_report_csv *t, size_t row, size_t col, double *v,
                     tessel_diag *diag)
{
    const char *s = tessel_report_csv_cell(t, row, col);
    if (tessel_validate_parse_number(s, v)) {
        if (!isfinite(*v))
            *v = NAN;
        return 0;
    }
    if (is_blank(s)) {
        *v = NAN;
        return 0;
    }
    const char *name = tessel_report_csv_column_name(t, col);
    return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(t),
                           tessel_report_csv_cell_line(t, row, col),
                           tessel_report_csv_cell_column(t, row, col), name,
                           "column '%s': '%.60s' is not a number", name, s);
}

static int column_is_numeric(const tessel_report_csv *t, size_t col)
{
    for (size_t r = 0; r < tessel_report_csv_rows(t); r++) {
        double v;
        const char *s = tessel_report_csv_cell(t, r, col);
        if (!tessel_validate_parse_number(s, &v) && !is_blank(s))
            return 0;
    }
    return 1;
}

size_t plot_identity_columns(const tessel_report_csv *t, size_t *cols)
{
    size_t n = 0;
    long end = tessel_report_csv_find(t, "dram_bytes");
    if (end >= 0) {
        for (size_t c = 0; c < (size_t)end; c++)
            cols[n++] = c;
        return n;
    }
    for (size_t c = 0; c < tessel_report_csv_columns(t); c++)
        if (!column_is_numeric(t, c))
            cols[n++] = c;
    return n;
}

/* Axis titles with units for the columns of traffic.csv and summary.csv
 * (docs/outputs.md). */
static const struct {
    const char *column, *title;
} column_titles[] = {
    { "bytes", "traffic (bytes, data + metadata)" },
    { "dram_bytes", "DRAM traffic (bytes)" },
    { "compulsory_bytes", "compulsory traffic (bytes)" },
    { "traffic_ratio", "DRAM traffic / compulsory traffic" },
    { "flops", "work (MACs)" },
    { "energy_pj", "energy (pJ)" },
    { "cycles", "time (cycles)" },
    { "seconds", "time (s)" },
    { "model_seconds", "model run time (s)" },
    { "output_nnz", "output nonzeros" },
    { "intersections", "intersection steps" },
    { "compute_cycles", "compute time (cycles)" },
    { "compute_utilization", "compute utilization (fraction)" },
    { "area_um2", "area (\xc2\xb5m\xc2\xb2)" },
    { "fills", "fills (tiles)" },
    { "reads", "reads (tiles)" },
    { "updates", "updates (tiles)" },
    { "writebacks", "write-backs (tiles)" },
    { "data_bytes", "data traffic (bytes)" },
    { "metadata_bytes", "metadata traffic (bytes)" },
    { "bumped_bytes", "bumped traffic (bytes)" },
    { "algorithmic", "algorithmic transfers (tiles)" },
    { "actual", "actual transfers (tiles)" },
    { "skipped", "skipped transfers (tiles)" },
    { "gated", "gated transfers (tiles)" },
    { "reads_elements", "reads by the child level (elements)" },
    { "writes_elements", "writes by the child level (elements)" },
};

const char *plot_column_title(const char *column)
{
    for (size_t i = 0; i < sizeof(column_titles) / sizeof(column_titles[0]); i++)
        if (strcmp(column_titles[i].column, column) == 0)
            return column_titles[i].title;
    return column;
}

/* Pareto fronts of a sweep's summary.csv, one per data entry: a design
 * point is kept when no point on the same data is at least as good on
 * every objective and better on one. */
#include <stdlib.h>
#include <string.h>

#include "sweep_internal.h"

typedef struct pareto_row {
    size_t row;
    const char *data;
    double v[TESSEL_SWEEP_MAX_OBJECTIVES]; /* negated for maximised objectives; unused: 0 */
} pareto_row;

static int row_order(const void *x, const void *y)
{
    const pareto_row *a = x, *b = y;
    int c = strcmp(a->data, b->data);
    if (c)
        return c;
    for (size_t i = 0; i < TESSEL_SWEEP_MAX_OBJECTIVES; i++) {
        if (a->v[i] != b->v[i])
            return a->v[i] < b->v[i] ? -1 : 1;
    }
    return (a->row > b->row) - (a->row < b->row);
}

static int dominates(const pareto_row *a, const pareto_row *b, size_t n)
{
    int better = 0;
    for (size_t i = 0; i < n; i++) {
        if (a->v[i] > b->v[i])
            return 0;
        better |= a->v[i] < b->v[i];
    }
    return better;
}

static int find_columns(const tessel_report_csv *t, const char *path, const char *const *names,
                        size_t n, long *col, int *maximise, tessel_diag *diag)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        maximise[i] = strncmp(name, "max:", 4) == 0;
        if (maximise[i] || strncmp(name, "min:", 4) == 0)
            name += 4;
        col[i] = tessel_report_csv_find(t, name);
        if (col[i] < 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, path, 1, 0, name,
                                   "no column '%s' to use as a Pareto objective (summary.csv "
                                   "has energy_pj, cycles, dram_bytes, area_um2, ...)", name);
    }
    return TESSEL_OK;
}

/* The rows of t with numbers in every objective column, sorted by data
 * then objectives (so that a dominating row comes before those it
 * dominates); marks the front in keep[]. Rows whose `feasible` column
 * (feasible_col >= 0) is 0 are left out: their tiles overflow partitions
 * the spec promises they fit (rule 4), so they must not win. */
static size_t mark_front(const tessel_report_csv *t, const long *col, const int *maximise,
                         size_t nobj, long data_col, long feasible_col, pareto_row *rows,
                         size_t *front, char *keep)
{
    size_t n = 0, nrows = tessel_report_csv_rows(t);
    for (size_t r = 0; r < nrows; r++) {
        if (feasible_col >= 0 && strcmp(tessel_report_csv_cell(t, r, (size_t)feasible_col),
                                        "0") == 0)
            continue;
        pareto_row pr = { r, data_col >= 0 ? tessel_report_csv_cell(t, r, (size_t)data_col) : "",
                          { 0 } };
        int ok = 1;
        for (size_t i = 0; i < nobj && ok; i++) {
            ok = tessel_validate_parse_number(tessel_report_csv_cell(t, r, (size_t)col[i]),
                                              &pr.v[i]) &&
                 pr.v[i] == pr.v[i];
            pr.v[i] = maximise[i] ? -pr.v[i] : pr.v[i];
        }
        if (ok)
            rows[n++] = pr;
    }
    qsort(rows, n, sizeof(*rows), row_order);
    size_t kept = 0, nfront = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(rows[i].data, rows[i - 1].data) != 0)
            nfront = 0; /* a new data entry: a new front */
        int dominated = 0;
        for (size_t f = 0; f < nfront && !dominated; f++)
            dominated = dominates(&rows[front[f]], &rows[i], nobj);
        if (!dominated) {
            front[nfront++] = i;
            keep[rows[i].row] = 1;
            kept++;
        }
    }
    return kept;
}

static void write_row(FILE *f, const tessel_report_csv *t, size_t r)
{
    for (size_t c = 0; c < tessel_report_csv_columns(t); c++) {
        if (c)
            fputc(',', f);
        tessel_csv_field(f, r == SIZE_MAX ? tessel_report_csv_column_name(t, c)
                                          : tessel_report_csv_cell(t, r, c));
    }
    fputc('\n', f);
}

int tessel_sweep_pareto(const char *summary_path, const char *out_path,
                        const char *const *objectives, size_t nobjectives,
                        const tessel_allocator *a, uint64_t *rows_out, tessel_diag *diag)
{
    return sweep_pareto(summary_path, out_path, objectives, nobjectives, 0, a, rows_out, diag);
}

int sweep_pareto(const char *summary_path, const char *out_path, const char *const *objectives,
                 size_t nobjectives, int include_infeasible, const tessel_allocator *a,
                 uint64_t *rows_out, tessel_diag *diag)
{
    if (nobjectives < 1 || nobjectives > TESSEL_SWEEP_MAX_OBJECTIVES)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "pareto",
                               "one to three objectives, not %zu", nobjectives);
    tessel_report_csv *t = NULL;
    int rc = tessel_report_csv_load(summary_path, a, &t, diag);
    if (rc)
        return rc;
    long col[TESSEL_SWEEP_MAX_OBJECTIVES];
    int maximise[TESSEL_SWEEP_MAX_OBJECTIVES];
    rc = find_columns(t, summary_path, objectives, nobjectives, col, maximise, diag);
    size_t n = tessel_report_csv_rows(t);
    pareto_row *rows = rc ? NULL : tessel_alloc_array(a, n ? n : 1, sizeof(*rows));
    size_t *front = rows ? tessel_alloc_array(a, n ? n : 1, sizeof(*front)) : NULL;
    char *keep = front ? tessel_alloc(a, n ? n : 1) : NULL;
    if (!rc && !keep)
        rc = tessel_diag_oom(diag, summary_path, "finding the Pareto front",
                             !rows ? (n ? n : 1) * sizeof(*rows)
                             : !front ? (n ? n : 1) * sizeof(*front) : (n ? n : 1));
    tessel_outfile *out = NULL;
    if (!rc) {
        memset(keep, 0, n ? n : 1);
        long feasible = include_infeasible ? -1 : tessel_report_csv_find(t, "feasible");
        uint64_t kept = mark_front(t, col, maximise, nobjectives,
                                   tessel_report_csv_find(t, "data"), feasible, rows, front,
                                   keep);
        if (rows_out)
            *rows_out = kept;
        rc = tessel_outfile_open(out_path, a, &out, diag);
    }
    if (!rc) {
        FILE *f = tessel_outfile_stream(out);
        write_row(f, t, SIZE_MAX);
        for (size_t r = 0; r < n; r++)
            if (keep[r])
                write_row(f, t, r);
        rc = tessel_outfile_commit(&out, diag);
    }
    tessel_dealloc(a, keep);
    tessel_dealloc(a, front);
    tessel_dealloc(a, rows);
    tessel_report_csv_free(&t);
    return rc;
}

/* tessel validate: join a predicted table with a reference table on key
 * columns and summarise the relative error of every metric.
 *
 * Keys are compared as whole tuples: each row's key fields are joined with
 * NUL separators (fields never hold a NUL, the CSV reader rejects it), so
 * the joined string identifies the tuple exactly and one sort per table
 * finds duplicates and drives a merge join. */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/report.h"

#define ENOMEM_DIAG(diag) tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory")

void tessel_validate_options_init(tessel_validate_options *o)
{
    memset(o, 0, sizeof(*o));
}

int tessel_validate_parse_number(const char *field, double *v)
{
    while (*field == ' ' || *field == '\t')
        field++;
    if (!*field)
        return 0;
    char *end = NULL;
    double x = strtod(field, &end);
    if (end == field)
        return 0;
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end)
        return 0;
    *v = x;
    return 1;
}

/* ------------------------------------------------------------------ */
/* Columns and roles. */

static int missing_column(const tessel_report_csv *t, const char *name, const char *what,
                          int is_ref, const tessel_allocator *a, tessel_diag *diag)
{
    char cols[320], hint[160] = "";
    tessel_report_csv_column_list(t, cols, sizeof(cols));
    const char *near = tessel_report_csv_nearest_column(t, name, a);
    if (near)
        snprintf(hint, sizeof(hint), " (did you mean '%s'?)", near);
    else if (is_ref)
        snprintf(hint, sizeof(hint), " (--map %s=COLUMN names the reference's column)", name);
    return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(t), 0, 0, NULL,
                           "%s column '%s' not found%s; the columns are: %s", what, name, hint,
                           cols);
}

/* The reference column playing `role`: the --map target when the role is
 * mapped; else the column of that name unless a map gave it another role. */
static long ref_column(const tessel_report_csv *ref, const tessel_validate_options *opt,
                       const char *role)
{
    for (size_t i = 0; i < opt->nmap; i++)
        if (strcmp(opt->map[i].name, role) == 0)
            return tessel_report_csv_find(ref, opt->map[i].column);
    for (size_t i = 0; i < opt->nmap; i++)
        if (strcmp(opt->map[i].column, role) == 0)
            return -1;
    return tessel_report_csv_find(ref, role);
}

static int check_map(const tessel_report_csv *ref, const tessel_validate_options *opt,
                     const tessel_allocator *a, tessel_diag *diag)
{
    for (size_t i = 0; i < opt->nmap; i++) {
        const tessel_validate_map *m = &opt->map[i];
        if (!m->name || !m->name[0] || !m->column || !m->column[0])
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                                   "--map needs NAME=COLUMN with both parts non-empty");
        for (size_t j = 0; j < i; j++)
            if (strcmp(opt->map[j].name, m->name) == 0)
                return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                                       "--map gives '%s' twice", m->name);
        if (tessel_report_csv_find(ref, m->column) < 0)
            return missing_column(ref, m->column, "--map", 0, a, diag);
    }
    return 0;
}

/* Every field of the column is empty or a number; *any counts the numbers. */
static int column_numeric(const tessel_report_csv *t, size_t col, size_t *bad_row, size_t *any)
{
    *any = 0;
    for (size_t r = 0; r < tessel_report_csv_rows(t); r++) {
        const char *s = tessel_report_csv_cell(t, r, col);
        double v;
        if (tessel_validate_parse_number(s, &v)) {
            (*any)++;
            continue;
        }
        for (; *s == ' ' || *s == '\t'; s++) {
        }
        if (*s) {
            *bad_row = r;
            return 0;
        }
    }
    return 1;
}

static int not_a_number(const tessel_report_csv *t, size_t row, size_t col, tessel_diag *diag)
{
    return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(t),
                           tessel_report_csv_cell_line(t, row, col),
                           tessel_report_csv_cell_column(t, row, col), NULL,
                           "metric column '%s': '%.60s' is not a number",
                           tessel_report_csv_column_name(t, col), tessel_report_csv_cell(t, row, col));
}

/* ------------------------------------------------------------------ */
/* The comparison's working state. */

typedef struct keyed {
    const char *key;
    size_t len;
    size_t row;
} keyed;

typedef struct work {
    const tessel_allocator *a;
    const tessel_report_csv *t[2]; /* predicted, reference */
    size_t nkeys;
    const char **keys;            /* role names */
    long *kcol[2];                /* key columns per table */
    size_t nmetrics;
    long *mcol[2];
    char *kbuf[2];                /* joined key text per table */
    keyed *sorted[2];
    size_t *match;                /* per predicted row: reference row or SIZE_MAX */
    unsigned char *ref_matched;
} work;

static void work_free(work *w)
{
    for (int s = 0; s < 2; s++) {
        tessel_dealloc(w->a, w->kcol[s]);
        tessel_dealloc(w->a, w->mcol[s]);
        tessel_dealloc(w->a, w->kbuf[s]);
        tessel_dealloc(w->a, w->sorted[s]);
    }
    tessel_dealloc(w->a, w->keys);
    tessel_dealloc(w->a, w->match);
    tessel_dealloc(w->a, w->ref_matched);
}

static int add_key(work *w, const char *name)
{
    for (size_t i = 0; i < w->nkeys; i++)
        if (strcmp(w->keys[i], name) == 0)
            return 0;
    w->keys[w->nkeys++] = name;
    return 0;
}

static int has_role(const work *w, const tessel_validate_options *opt, const char *role)
{
    return tessel_report_csv_find(w->t[0], role) >= 0 && ref_column(w->t[1], opt, role) >= 0;
}

static int choose_keys(work *w, const tessel_validate_options *opt, tessel_diag *diag)
{
    size_t cap = opt->nkeys ? opt->nkeys : 6;
    w->keys = tessel_alloc_array(w->a, cap, sizeof(*w->keys));
    w->kcol[0] = tessel_alloc_array(w->a, cap, sizeof(long));
    w->kcol[1] = tessel_alloc_array(w->a, cap, sizeof(long));
    if (!w->keys || !w->kcol[0] || !w->kcol[1])
        return ENOMEM_DIAG(diag);
    if (opt->nkeys) {
        for (size_t i = 0; i < opt->nkeys; i++) {
            if (!opt->keys[i] || !opt->keys[i][0])
                return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                                       "--key names an empty column");
            add_key(w, opt->keys[i]);
        }
    } else {
        /* The design point's identity, in the column order tessel writes;
         * traffic.csv rows are further told apart by level and tensor. */
        int traffic = tessel_report_csv_find(w->t[0], "level") >= 0;
        add_key(w, "design");
        if (has_role(w, opt, "workload") && has_role(w, opt, "strategy"))
            add_key(w, "workload");
        add_key(w, "data");
        if (has_role(w, opt, "workload") && has_role(w, opt, "strategy"))
            add_key(w, "strategy");
        if (traffic) {
            add_key(w, "level");
            add_key(w, "tensor");
        }
    }
    for (size_t i = 0; i < w->nkeys; i++) {
        w->kcol[0][i] = tessel_report_csv_find(w->t[0], w->keys[i]);
        if (w->kcol[0][i] < 0)
            return missing_column(w->t[0], w->keys[i], "key", 0, w->a, diag);
        w->kcol[1][i] = ref_column(w->t[1], opt, w->keys[i]);
        if (w->kcol[1][i] < 0)
            return missing_column(w->t[1], w->keys[i], "key", 1, w->a, diag);
    }
    return 0;
}

static int is_key(const work *w, const char *name)
{
    for (size_t i = 0; i < w->nkeys; i++)
        if (strcmp(w->keys[i], name) == 0)
            return 1;
    return 0;
}

/* The first column whose name ends with `suffix`, or NULL. */
static const char *column_ending(const tessel_report_csv *t, const char *suffix)
{
    size_t n = strlen(suffix);
    for (size_t i = 0; i < tessel_report_csv_columns(t); i++) {
        const char *c = tessel_report_csv_column_name(t, i);
        size_t len = strlen(c);
        if (len >= n && strcmp(c + len - n, suffix) == 0)
            return c;
    }
    return NULL;
}

/* Fills w->mcol and the metric names (pointers into the tables / options). */
static int choose_metrics(work *w, const tessel_validate_options *opt, const char ***names,
                          tessel_diag *diag)
{
    size_t cap = opt->nmetrics ? opt->nmetrics : tessel_report_csv_columns(w->t[0]);
    *names = tessel_alloc_array(w->a, cap, sizeof(**names));
    w->mcol[0] = tessel_alloc_array(w->a, cap, sizeof(long));
    w->mcol[1] = tessel_alloc_array(w->a, cap, sizeof(long));
    if (!*names || !w->mcol[0] || !w->mcol[1])
        return ENOMEM_DIAG(diag);
    w->nmetrics = 0;
    size_t bad = 0, any = 0;
    if (opt->nmetrics) {
        for (size_t i = 0; i < opt->nmetrics; i++) {
            const char *m = opt->metrics[i];
            if (!m || !m[0])
                return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                                       "--metric names an empty column");
            int dup = 0;
            for (size_t j = 0; j < w->nmetrics; j++)
                dup |= strcmp((*names)[j], m) == 0;
            if (dup)
                continue;
            long pc = tessel_report_csv_find(w->t[0], m);
            if (pc < 0)
                return missing_column(w->t[0], m, "metric", 0, w->a, diag);
            long rc = ref_column(w->t[1], opt, m);
            if (rc < 0)
                return missing_column(w->t[1], m, "metric", 1, w->a, diag);
            if (!column_numeric(w->t[0], (size_t)pc, &bad, &any))
                return not_a_number(w->t[0], bad, (size_t)pc, diag);
            if (!column_numeric(w->t[1], (size_t)rc, &bad, &any))
                return not_a_number(w->t[1], bad, (size_t)rc, diag);
            (*names)[w->nmetrics] = m;
            w->mcol[0][w->nmetrics] = pc;
            w->mcol[1][w->nmetrics] = rc;
            w->nmetrics++;
        }
        return 0;
    }
    for (size_t c = 0; c < tessel_report_csv_columns(w->t[0]); c++) {
        const char *m = tessel_report_csv_column_name(w->t[0], c);
        if (is_key(w, m))
            continue;
        long rc = ref_column(w->t[1], opt, m);
        size_t any_ref = 0;
        if (rc < 0 || !column_numeric(w->t[0], c, &bad, &any) || !any ||
            !column_numeric(w->t[1], (size_t)rc, &bad, &any_ref) || !any_ref)
            continue;
        (*names)[w->nmetrics] = m;
        w->mcol[0][w->nmetrics] = (long)c;
        w->mcol[1][w->nmetrics] = rc;
        w->nmetrics++;
    }
    if (!w->nmetrics) {
        /* Simulator references keep element counts apart from bytes. */
        const char *ref_elements = column_ending(w->t[1], "_elements");
        char why[320] = "";
        if (ref_elements && !column_ending(w->t[0], "_elements"))
            snprintf(why, sizeof(why), "; the reference counts elements ('%.60s') and %.60s "
                     "has no element counts, and elements are never compared with bytes",
                     ref_elements, tessel_report_csv_name(w->t[0]));
        return tessel_diag_set(diag, TESSEL_EINVAL, tessel_report_csv_name(w->t[1]), 0, 0, NULL,
                               "no numeric column in common with %s besides the keys (choose "
                               "metrics with --metric, map names with --map)%s",
                               tessel_report_csv_name(w->t[0]), why);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Keys, duplicates, join. */

static int compare_keyed(const void *pa, const void *pb)
{
    const keyed *x = pa, *y = pb;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* "k1=v1 k2=v2" for messages and the unmatched lists; caller frees. */
static char *key_label(const work *w, int side, size_t row)
{
    size_t n = 1;
    for (size_t i = 0; i < w->nkeys; i++)
        n += strlen(w->keys[i]) + 2 +
             strlen(tessel_report_csv_cell(w->t[side], row, (size_t)w->kcol[side][i]));
    char *s = tessel_alloc(w->a, n);
    if (!s)
        return NULL;
    size_t len = 0;
    for (size_t i = 0; i < w->nkeys; i++)
        len += (size_t)snprintf(s + len, n - len, "%s%s=%s", i ? " " : "", w->keys[i],
                                tessel_report_csv_cell(w->t[side], row, (size_t)w->kcol[side][i]));
    return s;
}

static int build_keys(work *w, int side, tessel_diag *diag)
{
    const tessel_report_csv *t = w->t[side];
    size_t rows = tessel_report_csv_rows(t), total = 1;
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < w->nkeys; i++)
            total += strlen(tessel_report_csv_cell(t, r, (size_t)w->kcol[side][i])) + 1;
    w->kbuf[side] = tessel_alloc(w->a, total);
    w->sorted[side] = tessel_alloc_array(w->a, rows ? rows : 1, sizeof(keyed));
    if (!w->kbuf[side] || !w->sorted[side])
        return ENOMEM_DIAG(diag);
    char *p = w->kbuf[side];
    for (size_t r = 0; r < rows; r++) {
        keyed *k = &w->sorted[side][r];
        k->key = p;
        k->row = r;
        for (size_t i = 0; i < w->nkeys; i++) {
            const char *v = tessel_report_csv_cell(t, r, (size_t)w->kcol[side][i]);
            size_t n = strlen(v) + 1;
            memcpy(p, v, n);
            p += n;
        }
        k->len = (size_t)(p - k->key);
    }
    if (rows > 1)
        qsort(w->sorted[side], rows, sizeof(keyed), compare_keyed);
    /* Equal keys sort by row, so each adjacent pair is (earlier, later);
     * report the repeat that comes first in the file. */
    size_t first = SIZE_MAX, again = SIZE_MAX;
    for (size_t r = 1; r < rows; r++) {
        const keyed *x = &w->sorted[side][r - 1], *y = &w->sorted[side][r];
        if (x->len == y->len && memcmp(x->key, y->key, x->len) == 0 &&
            (again == SIZE_MAX || y->row < again)) {
            size_t r0 = r - 1;
            while (r0 > 0 && w->sorted[side][r0 - 1].len == y->len &&
                   memcmp(w->sorted[side][r0 - 1].key, y->key, y->len) == 0)
                r0--;
            first = w->sorted[side][r0].row;
            again = y->row;
        }
    }
    if (again != SIZE_MAX) {
        char *label = key_label(w, side, again);
        int rc = tessel_diag_set(diag, TESSEL_EPARSE, tessel_report_csv_name(t),
                                 tessel_report_csv_line(t, again), 0, NULL,
                                 "duplicate key %s (first at line %llu)", label ? label : "",
                                 (unsigned long long)tessel_report_csv_line(t, first));
        tessel_dealloc(w->a, label);
        return rc;
    }
    return 0;
}

static int join(work *w, tessel_diag *diag)
{
    size_t np = tessel_report_csv_rows(w->t[0]), nr = tessel_report_csv_rows(w->t[1]);
    w->match = tessel_alloc_array(w->a, np ? np : 1, sizeof(size_t));
    w->ref_matched = tessel_alloc(w->a, nr ? nr : 1);
    if (!w->match || !w->ref_matched)
        return ENOMEM_DIAG(diag);
    memset(w->ref_matched, 0, nr ? nr : 1);
    for (size_t i = 0; i < np; i++)
        w->match[i] = SIZE_MAX;
    size_t i = 0, j = 0;
    while (i < np && j < nr) {
        const keyed *x = &w->sorted[0][i], *y = &w->sorted[1][j];
        size_t n = x->len < y->len ? x->len : y->len;
        int c = memcmp(x->key, y->key, n);
        if (!c)
            c = (x->len > y->len) - (x->len < y->len);
        if (c < 0) {
            i++;
        } else if (c > 0) {
            j++;
        } else {
            w->match[x->row] = y->row;
            w->ref_matched[y->row] = 1;
            i++;
            j++;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The result. */

void tessel_validate_result_free(tessel_validate_result **pr)
{
    if (!pr || !*pr)
        return;
    tessel_validate_result *r = *pr;
    const tessel_allocator *a = r->alloc;
    if (r->key)
        for (size_t i = 0; i < r->nkeys; i++)
            tessel_dealloc(a, r->key[i]);
    tessel_dealloc(a, r->key);
    if (r->metric)
        for (size_t i = 0; i < r->nmetrics; i++) {
            tessel_dealloc(a, r->metric[i].name);
            tessel_dealloc(a, r->metric[i].ref_column);
        }
    tessel_dealloc(a, r->metric);
    if (r->row_key)
        for (size_t i = 0; i < r->nrows * r->nkeys; i++)
            tessel_dealloc(a, r->row_key[i]);
    tessel_dealloc(a, r->row_key);
    tessel_dealloc(a, r->pred_line);
    tessel_dealloc(a, r->ref_line);
    tessel_dealloc(a, r->pred);
    tessel_dealloc(a, r->ref);
    tessel_dealloc(a, r->rel);
    for (size_t i = 0; r->shown_predicted && i < r->nshown_predicted; i++)
        tessel_dealloc(a, r->shown_predicted[i]);
    for (size_t i = 0; r->shown_reference && i < r->nshown_reference; i++)
        tessel_dealloc(a, r->shown_reference[i]);
    tessel_dealloc(a, r->shown_predicted);
    tessel_dealloc(a, r->shown_reference);
    tessel_dealloc(a, r->shown_predicted_line);
    tessel_dealloc(a, r->shown_reference_line);
    tessel_dealloc(a, r);
    *pr = NULL;
}

/* The first `limit` unmatched rows of one side, as labels with lines. */
static int collect_unmatched(work *w, int side, size_t limit, tessel_validate_result *r)
{
    size_t rows = tessel_report_csv_rows(w->t[side]);
    size_t *count = side ? &r->only_reference : &r->only_predicted;
    size_t *shown = side ? &r->nshown_reference : &r->nshown_predicted;
    char ***labels = side ? &r->shown_reference : &r->shown_predicted;
    uint64_t **lines = side ? &r->shown_reference_line : &r->shown_predicted_line;
    *labels = tessel_alloc_array(w->a, limit, sizeof(char *));
    *lines = tessel_alloc_array(w->a, limit, sizeof(uint64_t));
    if (!*labels || !*lines)
        return TESSEL_ENOMEM;
    for (size_t row = 0; row < rows; row++) {
        int matched = side ? w->ref_matched[row] : w->match[row] != SIZE_MAX;
        if (matched)
            continue;
        if (*shown < limit) {
            (*labels)[*shown] = key_label(w, side, row);
            if (!(*labels)[*shown])
                return TESSEL_ENOMEM;
            (*lines)[*shown] = tessel_report_csv_line(w->t[side], row);
            (*shown)++;
        }
        (*count)++;
    }
    return 0;
}

/* Nearest rank: the k-th smallest with k = ceil(q n), q = num / 100, in
 * integer arithmetic so that 0.95 * 20 is exactly rank 19. */
static double nearest_rank(const double *sorted, size_t n, unsigned num)
{
    size_t k = (size_t)(((unsigned long long)num * n + 99) / 100);
    return sorted[k ? k - 1 : 0];
}

static int metric_stats(tessel_validate_result *r, size_t m, const tessel_allocator *a)
{
    tessel_validate_metric *M = &r->metric[m];
    size_t n = r->nrows ? r->nrows : 1;
    double *err = tessel_alloc_array(a, n, sizeof(double));
    double *x = tessel_alloc_array(a, n, sizeof(double));
    double *y = tessel_alloc_array(a, n, sizeof(double));
    double *ws = tessel_alloc_array(a, 2 * n, sizeof(double));
    int rc = 0;
    if (!err || !x || !y || !ws) {
        rc = TESSEL_ENOMEM;
        goto out;
    }
    size_t ne = 0, nv = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        double p = r->pred[i * r->nmetrics + m], q = r->ref[i * r->nmetrics + m];
        double e = r->rel[i * r->nmetrics + m];
        if (isnan(p) || isnan(q)) {
            M->empty_rows++;
            continue;
        }
        x[nv] = p;
        y[nv] = q;
        nv++;
        if (isinf(e))
            M->inf_rows++;
        else
            err[ne++] = fabs(e);
    }
    M->rows = nv;
    M->mean_abs_rel_err = M->median_abs_rel_err = M->p95_abs_rel_err = M->max_abs_rel_err = NAN;
    if (ne) {
        gsl_sort(err, 1, ne);
        /* a plain double sum in sorted order, the same on every machine
         * (gsl_stats_mean accumulates in long double, whose width varies) */
        double sum = 0;
        for (size_t k = 0; k < ne; k++)
            sum += err[k];
        M->mean_abs_rel_err = sum / (double)ne;
        M->median_abs_rel_err = nearest_rank(err, ne, 50);
        M->p95_abs_rel_err = nearest_rank(err, ne, 95);
        M->max_abs_rel_err = err[ne - 1];
    }
    /* Spearman is undefined for fewer than two pairs or a constant side
     * (zero rank variance); GSL would return NaN or divide by zero. */
    M->spearman = NAN;
    int vary_x = 0, vary_y = 0;
    for (size_t i = 1; i < nv; i++) {
        vary_x |= x[i] != x[0];
        vary_y |= y[i] != y[0];
    }
    if (nv >= 2 && vary_x && vary_y)
        M->spearman = gsl_stats_spearman(x, 1, y, 1, nv, ws);
out:
    tessel_dealloc(a, err);
    tessel_dealloc(a, x);
    tessel_dealloc(a, y);
    tessel_dealloc(a, ws);
    return rc;
}

static double cell_value(const tessel_report_csv *t, size_t row, long col)
{
    double v;
    if (tessel_validate_parse_number(tessel_report_csv_cell(t, row, (size_t)col), &v) &&
        isfinite(v))
        return v;
    return NAN;
}

/* Copies the matched rows, keys and per-metric errors (relative, with summary
 * statistics) of a validation into the caller's result. */
static int fill_result(work *w, const char **names, const tessel_validate_options *opt,
                       tessel_validate_result *r)
{
    const tessel_allocator *a = w->a;
    r->nkeys = w->nkeys;
    r->key = tessel_alloc_array(a, w->nkeys, sizeof(char *));
    if (!r->key)
        return TESSEL_ENOMEM;
    memset(r->key, 0, w->nkeys * sizeof(char *));
    for (size_t i = 0; i < w->nkeys; i++)
        if (!(r->key[i] = tessel_strdup(a, w->keys[i])))
            return TESSEL_ENOMEM;
    r->metric = tessel_alloc_array(a, w->nmetrics, sizeof(*r->metric));
    if (!r->metric)
        return TESSEL_ENOMEM;
    memset(r->metric, 0, w->nmetrics * sizeof(*r->metric));
    r->nmetrics = w->nmetrics;
    for (size_t m = 0; m < w->nmetrics; m++) {
        r->metric[m].name = tessel_strdup(a, names[m]);
        r->metric[m].ref_column =
            tessel_strdup(a, tessel_report_csv_column_name(w->t[1], (size_t)w->mcol[1][m]));
        if (!r->metric[m].name || !r->metric[m].ref_column)
            return TESSEL_ENOMEM;
    }

    size_t np = tessel_report_csv_rows(w->t[0]), nj = 0;
    for (size_t i = 0; i < np; i++)
        nj += w->match[i] != SIZE_MAX;
    size_t cells = nj ? nj : 1;
    r->row_key = tessel_alloc_array(a, cells, w->nkeys * sizeof(char *));
    r->pred_line = tessel_alloc_array(a, cells, sizeof(uint64_t));
    r->ref_line = tessel_alloc_array(a, cells, sizeof(uint64_t));
    r->pred = tessel_alloc_array(a, cells, w->nmetrics * sizeof(double));
    r->ref = tessel_alloc_array(a, cells, w->nmetrics * sizeof(double));
    r->rel = tessel_alloc_array(a, cells, w->nmetrics * sizeof(double));
    if (!r->row_key || !r->pred_line || !r->ref_line || !r->pred || !r->ref || !r->rel)
        return TESSEL_ENOMEM;
    memset(r->row_key, 0, cells * w->nkeys * sizeof(char *));
    r->nrows = nj;
    size_t k = 0;
    for (size_t i = 0; i < np; i++) {
        size_t j = w->match[i];
        if (j == SIZE_MAX)
            continue;
        r->pred_line[k] = tessel_report_csv_line(w->t[0], i);
        r->ref_line[k] = tessel_report_csv_line(w->t[1], j);
        for (size_t c = 0; c < w->nkeys; c++) {
            const char *v = tessel_report_csv_cell(w->t[0], i, (size_t)w->kcol[0][c]);
            if (!(r->row_key[k * w->nkeys + c] = tessel_strdup(a, v)))
                return TESSEL_ENOMEM;
        }
        for (size_t m = 0; m < w->nmetrics; m++) {
            double p = cell_value(w->t[0], i, w->mcol[0][m]);
            double q = cell_value(w->t[1], j, w->mcol[1][m]);
            double e;
            if (isnan(p) || isnan(q))
                e = NAN;
            else if (q == 0)
                e = p == 0 ? 0.0 : copysign(INFINITY, p);
            else
                e = (p - q) / q;
            r->pred[k * w->nmetrics + m] = p;
            r->ref[k * w->nmetrics + m] = q;
            r->rel[k * w->nmetrics + m] = e;
        }
        k++;
    }
    size_t limit = opt->max_unmatched ? opt->max_unmatched : TESSEL_VALIDATE_UNMATCHED_SHOWN;
    int rc = collect_unmatched(w, 0, limit, r);
    if (!rc)
        rc = collect_unmatched(w, 1, limit, r);
    for (size_t m = 0; !rc && m < w->nmetrics; m++)
        rc = metric_stats(r, m, a);
    return rc;
}

int tessel_validate_compare(const tessel_report_csv *pred, const tessel_report_csv *ref,
                            const tessel_validate_options *opt, const tessel_allocator *a,
                            tessel_validate_result **out, tessel_diag *diag)
{
    *out = NULL;
    tessel_validate_options defaults;
    if (!opt) {
        tessel_validate_options_init(&defaults);
        opt = &defaults;
    }
    work w;
    memset(&w, 0, sizeof(w));
    w.a = a;
    w.t[0] = pred;
    w.t[1] = ref;
    const char **names = NULL;
    int rc = check_map(ref, opt, a, diag);
    if (!rc)
        rc = choose_keys(&w, opt, diag);
    if (!rc)
        rc = choose_metrics(&w, opt, &names, diag);
    if (!rc)
        rc = build_keys(&w, 0, diag);
    if (!rc)
        rc = build_keys(&w, 1, diag);
    if (!rc)
        rc = join(&w, diag);
    tessel_validate_result *r = NULL;
    if (!rc) {
        r = tessel_alloc(a, sizeof(*r));
        if (!r) {
            rc = ENOMEM_DIAG(diag);
        } else {
            memset(r, 0, sizeof(*r));
            r->alloc = a;
            rc = fill_result(&w, names, opt, r);
            if (rc) {
                ENOMEM_DIAG(diag);
                tessel_validate_result_free(&r);
            }
        }
    }
    tessel_dealloc(a, names);
    work_free(&w);
    *out = r;
    return rc;
}

size_t tessel_validate_exceeding(const tessel_validate_result *r, double max_error)
{
    size_t n = 0;
    for (size_t m = 0; m < r->nmetrics; m++) {
        const tessel_validate_metric *M = &r->metric[m];
        n += M->inf_rows > 0 || (!isnan(M->p95_abs_rel_err) && M->p95_abs_rel_err > max_error);
    }
    return n;
}

/* ------------------------------------------------------------------ */
/* Writers. */

static const char summary_header[] =
    "metric,rows,mean_abs_rel_err,median_abs_rel_err,p95_abs_rel_err,max_abs_rel_err,spearman,"
    "only_predicted,only_reference,inf_rows,empty_rows\n";

const char *tessel_validate_summary_header(void)
{
    return summary_header;
}

/* The shortest of %.15g, %.16g, %.17g that reads back as v (as the
 * report writers do); "" for NaN and infinities. */
static void format_double(char *buf, size_t n, double v)
{
    if (!isfinite(v)) {
        buf[0] = '\0';
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

int tessel_validate_summary_csv(FILE *f, const tessel_validate_result *r)
{
    fputs(summary_header, f);
    for (size_t m = 0; m < r->nmetrics; m++) {
        const tessel_validate_metric *M = &r->metric[m];
        tessel_csv_field(f, M->name);
        fprintf(f, ",%zu", M->rows);
        const double v[5] = { M->mean_abs_rel_err, M->median_abs_rel_err, M->p95_abs_rel_err,
                              M->max_abs_rel_err, M->spearman };
        for (int i = 0; i < 5; i++) {
            char buf[40];
            format_double(buf, sizeof(buf), v[i]);
            fprintf(f, ",%s", buf);
        }
        fprintf(f, ",%zu,%zu,%zu,%zu\n", r->only_predicted, r->only_reference, M->inf_rows,
                M->empty_rows);
    }
    return ferror(f) ? TESSEL_EIO : 0;
}

/* A value for the text table: shortest form, "-" when missing. */
static void text_value(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        format_double(buf, n, v);
}

/* A relative error or a statistic: 4 significant digits; "inf" for a zero
 * reference; `missing` ("-" or "n/a") for NaN. */
static void text_error(char *buf, size_t n, double v, const char *missing)
{
    if (isnan(v))
        snprintf(buf, n, "%s", missing);
    else if (isinf(v))
        snprintf(buf, n, "%s", v < 0 ? "-inf" : "inf");
    else
        snprintf(buf, n, "%.4g", v);
}

static size_t max_size(size_t x, size_t y)
{
    return x > y ? x : y;
}

static void print_unmatched(FILE *f, const char *side, size_t count, size_t shown,
                            char *const *labels, const uint64_t *lines)
{
    fprintf(f, "only in %s: %zu row%s\n", side, count, count == 1 ? "" : "s");
    for (size_t i = 0; i < shown; i++)
        fprintf(f, "  line %llu: %s\n", (unsigned long long)lines[i], labels[i]);
    if (count > shown)
        fprintf(f, "  ... and %zu more\n", count - shown);
}

/* Prints a validation result as an aligned table (keys, metric, predicted,
 * reference, rel_err) and the per-metric summary. */
int tessel_validate_print(FILE *f, const tessel_validate_result *r)
{
    char buf[3][48];
    /* Column widths: keys, metric, predicted, reference, rel_err. */
    size_t kw[64] = { 0 }, nk = r->nkeys < 64 ? r->nkeys : 64;
    size_t mw = strlen("metric"), pw = strlen("predicted"), rw = strlen("reference"),
           ew = strlen("rel_err");
    for (size_t c = 0; c < nk; c++)
        kw[c] = strlen(r->key[c]);
    for (size_t i = 0; i < r->nrows; i++)
        for (size_t c = 0; c < nk; c++)
            kw[c] = max_size(kw[c], strlen(r->row_key[i * r->nkeys + c]));
    for (size_t m = 0; m < r->nmetrics; m++)
        mw = max_size(mw, strlen(r->metric[m].name));
    for (size_t i = 0; i < r->nrows * r->nmetrics; i++) {
        text_value(buf[0], sizeof(buf[0]), r->pred[i]);
        text_value(buf[1], sizeof(buf[1]), r->ref[i]);
        text_error(buf[2], sizeof(buf[2]), r->rel[i], "-");
        pw = max_size(pw, strlen(buf[0]));
        rw = max_size(rw, strlen(buf[1]));
        ew = max_size(ew, strlen(buf[2]));
    }
    fprintf(f, "%zu joined row%s, %zu metric%s; rel_err = (predicted - reference) / reference\n\n",
            r->nrows, r->nrows == 1 ? "" : "s", r->nmetrics, r->nmetrics == 1 ? "" : "s");
    if (r->nrows) {
        for (size_t c = 0; c < nk; c++)
            fprintf(f, "%-*s  ", (int)kw[c], r->key[c]);
        fprintf(f, "%-*s  %*s  %*s  %*s\n", (int)mw, "metric", (int)pw, "predicted", (int)rw,
                "reference", (int)ew, "rel_err");
        for (size_t i = 0; i < r->nrows; i++)
            for (size_t m = 0; m < r->nmetrics; m++) {
                size_t at = i * r->nmetrics + m;
                for (size_t c = 0; c < nk; c++)
                    fprintf(f, "%-*s  ", (int)kw[c], r->row_key[i * r->nkeys + c]);
                text_value(buf[0], sizeof(buf[0]), r->pred[at]);
                text_value(buf[1], sizeof(buf[1]), r->ref[at]);
                text_error(buf[2], sizeof(buf[2]), r->rel[at], "-");
                fprintf(f, "%-*s  %*s  %*s  %*s\n", (int)mw, r->metric[m].name, (int)pw, buf[0],
                        (int)rw, buf[1], (int)ew, buf[2]);
            }
        fputc('\n', f);
    }
    fprintf(f, "%-*s  %6s  %10s  %11s  %10s  %10s  %8s  %6s  %6s\n", (int)mw, "metric", "rows",
            "mean|err|", "median|err|", "p95|err|", "max|err|", "spearman", "inf", "empty");
    for (size_t m = 0; m < r->nmetrics; m++) {
        const tessel_validate_metric *M = &r->metric[m];
        char s[5][48];
        text_error(s[0], sizeof(s[0]), M->mean_abs_rel_err, "n/a");
        text_error(s[1], sizeof(s[1]), M->median_abs_rel_err, "n/a");
        text_error(s[2], sizeof(s[2]), M->p95_abs_rel_err, "n/a");
        text_error(s[3], sizeof(s[3]), M->max_abs_rel_err, "n/a");
        text_error(s[4], sizeof(s[4]), M->spearman, "n/a");
        fprintf(f, "%-*s  %6zu  %10s  %11s  %10s  %10s  %8s  %6zu  %6zu\n", (int)mw, M->name,
                M->rows, s[0], s[1], s[2], s[3], s[4], M->inf_rows, M->empty_rows);
    }
    fputc('\n', f);
    print_unmatched(f, "predicted", r->only_predicted, r->nshown_predicted, r->shown_predicted,
                    r->shown_predicted_line);
    print_unmatched(f, "reference", r->only_reference, r->nshown_reference, r->shown_reference,
                    r->shown_reference_line);
    return ferror(f) ? TESSEL_EIO : 0;
}

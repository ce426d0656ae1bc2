/* Unit tests of `tessel validate` (src/report/csvread.c, validate.c): the
 * CSV reader (quoting, CRLF, errors with positions), the join (missing rows
 * on both sides, duplicates, --map), hand-computed error statistics and
 * Spearman correlations, zero references, and out-of-memory at every
 * allocation. Runs from the project root (tests/validate/ inputs). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/report.h"
#include "test_alloc.h"

static tessel_report_csv *parse_ok(const char *text)
{
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_report_csv_parse("t.csv", text, strlen(text), NULL, &t, &d);
    ck_assert_msg(rc == 0, "parse failed: %s", d.message);
    ck_assert_ptr_nonnull(t);
    return t;
}

static void parse_fails(const char *text, size_t size, uint64_t line, uint32_t col,
                        const char *needle)
{
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_report_csv_parse("t.csv", text, size, NULL, &t, &d);
    ck_assert_int_eq(rc, TESSEL_EPARSE);
    ck_assert_ptr_null(t);
    ck_assert_msg(d.line == line && d.column == col, "position %llu:%u, expected %llu:%u (%s)",
                  (unsigned long long)d.line, d.column, (unsigned long long)line, col, d.message);
    ck_assert_msg(strstr(d.message, needle), "message '%s' lacks '%s'", d.message, needle);
    ck_assert_str_eq(d.file, "t.csv");
}

/* Compares pred.csv text with ref.csv text; returns the result. */
static tessel_validate_result *compare(const char *pred, const char *ref,
                                       const tessel_validate_options *opt)
{
    tessel_report_csv *p = parse_ok(pred), *r = parse_ok(ref);
    tessel_validate_result *res = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_validate_compare(p, r, opt, NULL, &res, &d);
    ck_assert_msg(rc == 0, "compare failed: %s", d.message);
    tessel_report_csv_free(&p);
    tessel_report_csv_free(&r);
    ck_assert_ptr_null(p);
    return res;
}

static int compare_fails(const char *pred, const char *ref, const tessel_validate_options *opt,
                         tessel_diag *d)
{
    tessel_report_csv *p = parse_ok(pred), *r = parse_ok(ref);
    tessel_validate_result *res = NULL;
    tessel_diag_clear(d);
    int rc = tessel_validate_compare(p, r, opt, NULL, &res, d);
    ck_assert_int_ne(rc, 0);
    ck_assert_ptr_null(res);
    tessel_report_csv_free(&p);
    tessel_report_csv_free(&r);
    return rc;
}

static const tessel_validate_metric *metric(const tessel_validate_result *r, const char *name)
{
    for (size_t m = 0; m < r->nmetrics; m++)
        if (strcmp(r->metric[m].name, name) == 0)
            return &r->metric[m];
    ck_abort_msg("no metric %s", name);
    return NULL;
}

#define ck_assert_close(x, y) ck_assert_double_eq_tol((x), (y), 1e-12)

/* ------------------------------------------------------------------ */
/* The CSV reader. */

START_TEST(csv_quoting_crlf_bom)
{
    /* BOM, CRLF, a blank line, blanks around fields, a quoted field with a
     * comma, doubled quotes and a line break, an empty last field. */
    const char text[] = "\xEF\xBB\xBFname, v ,note\r\n"
                        "\r\n"
                        "a,1,\"x, \"\"y\"\"\"\r\n"
                        " b ,2,\"two\nlines\"\n"
                        "c,3,\n";
    tessel_report_csv *t = parse_ok(text);
    ck_assert_uint_eq(tessel_report_csv_columns(t), 3);
    ck_assert_uint_eq(tessel_report_csv_rows(t), 3);
    ck_assert_str_eq(tessel_report_csv_column_name(t, 1), "v");
    ck_assert_int_eq(tessel_report_csv_find(t, "note"), 2);
    ck_assert_int_eq(tessel_report_csv_find(t, "nope"), -1);
    ck_assert_str_eq(tessel_report_csv_cell(t, 0, 2), "x, \"y\"");
    ck_assert_str_eq(tessel_report_csv_cell(t, 1, 0), "b");
    ck_assert_str_eq(tessel_report_csv_cell(t, 1, 2), "two\nlines");
    ck_assert_str_eq(tessel_report_csv_cell(t, 2, 2), "");
    /* Lines: header 1, blank 2, a 3, b 4 (its quoted field runs to 5), c 6. */
    ck_assert_uint_eq(tessel_report_csv_line(t, 0), 3);
    ck_assert_uint_eq(tessel_report_csv_line(t, 1), 4);
    ck_assert_uint_eq(tessel_report_csv_line(t, 2), 6);
    ck_assert_uint_eq(tessel_report_csv_cell_column(t, 1, 1), 5);
    ck_assert_ptr_null(tessel_report_csv_cell(t, 3, 0));
    tessel_report_csv_free(&t);
    ck_assert_ptr_null(t);
    tessel_report_csv_free(&t); /* safe twice */

    /* No trailing newline: the last field ends with the data. */
    t = parse_ok("a,b\n1,\"2\"");
    ck_assert_str_eq(tessel_report_csv_cell(t, 0, 1), "2");
    tessel_report_csv_free(&t);
    t = parse_ok("a,b\n1,");
    ck_assert_str_eq(tessel_report_csv_cell(t, 0, 1), "");
    tessel_report_csv_free(&t);
}
END_TEST

START_TEST(csv_errors)
{
    parse_fails("a,b\n1,\"open\n2,3\n", 16, 2, 3, "unterminated quoted field");
    parse_fails("a,b\n1,\"x\"y\n", 11, 2, 6, "after a closing quote");
    parse_fails("a,b\n1,x\"y\n", 10, 2, 4, "quote inside an unquoted field");
    parse_fails("a,b\n1,2,3\n", 10, 2, 5, "row has 3 fields but the header has 2");
    parse_fails("a,b\n1\n", 6, 2, 0, "row has 1 field but the header has 2");
    parse_fails("a,,c\n", 5, 1, 3, "empty column name");
    parse_fails("x,y,x\n", 6, 1, 5, "column 'x' appears twice (columns 1 and 3)");
    parse_fails("", 0, 0, 0, "no header row");
    parse_fails("\n \n", 3, 0, 0, "no header row");
    /* Embedded NULs, in a plain and a quoted field. */
    parse_fails("a,b\n1,2\0\n", 9, 2, 4, "NUL byte");
    parse_fails("a,b\n1,\"\0\"\n", 10, 2, 4, "NUL byte");
}
END_TEST

START_TEST(csv_huge_field)
{
    /* A 1 MiB quoted field with quotes throughout: no line or field limit. */
    size_t n = 1u << 20;
    char *text = malloc(2 * n + 64);
    ck_assert_ptr_nonnull(text);
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    /* a""a""a... : every quote doubled, n/2 letters and n/2 quotes after decoding. */
    size_t len = (size_t)sprintf(text, "k,v\nx,\"");
    for (size_t i = 0; i < n / 2; i++) {
        text[len++] = 'a';
        text[len++] = '"';
        text[len++] = '"';
    }
    len += (size_t)sprintf(text + len, "\"\n");
    int rc = tessel_report_csv_parse("big.csv", text, len, NULL, &t, &d);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(strlen(tessel_report_csv_cell(t, 0, 1)), n);
    tessel_report_csv_free(&t);
    /* One 1 MiB unquoted line. */
    len = (size_t)sprintf(text, "k,v\nx,");
    for (size_t i = 0; i < n; i++)
        text[len++] = 'a';
    len += (size_t)sprintf(text + len, "\n");
    rc = tessel_report_csv_parse("big.csv", text, len, NULL, &t, &d);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(strlen(tessel_report_csv_cell(t, 0, 1)), n);
    tessel_report_csv_free(&t);
    free(text);
}
END_TEST

START_TEST(csv_load_files)
{
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_report_csv_load("tests/validate/sim-summary.csv", NULL, &t, &d), 0);
    ck_assert_uint_eq(tessel_report_csv_rows(t), 2);
    ck_assert_str_eq(tessel_report_csv_column_name(t, 2), "mem_bytes");
    ck_assert_str_eq(tessel_report_csv_cell(t, 0, 4), "cycle-accurate, v2 \"final\"");
    ck_assert_str_eq(tessel_report_csv_cell(t, 1, 4), "second\r\nline");
    tessel_report_csv_free(&t);
    ck_assert_int_eq(tessel_report_csv_load("tests/validate/no-such.csv", NULL, &t, &d),
                     TESSEL_EIO);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(d.file, "tests/validate/no-such.csv");
}
END_TEST

START_TEST(numbers)
{
    double v = 0;
    ck_assert(tessel_validate_parse_number("12", &v) && v == 12);
    ck_assert(tessel_validate_parse_number(" -1.5e3 ", &v) && v == -1500);
    ck_assert(!tessel_validate_parse_number("", &v));
    ck_assert(!tessel_validate_parse_number("  ", &v));
    ck_assert(!tessel_validate_parse_number("12x", &v));
    ck_assert(!tessel_validate_parse_number("DRAM", &v));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Statistics by hand. */

/* ref = 10, 20, 40, 50, 100; pred = 11, 18, 40, 60, 55.
 * rel  = +0.1, -0.1, 0, +0.2, -0.45; |rel| sorted: 0, 0.1, 0.1, 0.2, 0.45
 * mean   = 0.85 / 5 = 0.17
 * median = nearest rank ceil(0.5 * 5) = 3rd = 0.1
 * p95    = nearest rank ceil(0.95 * 5) = 5th = 0.45;  max = 0.45
 * Spearman: ref ranks 1 2 3 4 5, pred ranks 1 2 3 5 4 (55 < 60):
 *   sum d^2 = 0 + 0 + 0 + 1 + 1 = 2, rho = 1 - 6 * 2 / (5 * (25 - 1)) = 0.9 */
static const char stats_pred[] = "design,data,v,label\n"
                                 "x,a,11,p\nx,b,18,p\nx,c,40,p\nx,d,60,p\nx,e,55,p\n";
static const char stats_ref[] = "design,data,v,label\n"
                                "x,e,100,r\nx,d,50,r\nx,c,40,r\nx,b,20,r\nx,a,10,r\n";

START_TEST(hand_computed_stats)
{
    tessel_validate_result *r = compare(stats_pred, stats_ref, NULL);
    /* Default key design,data (no level column); the text column `label`
     * is no metric. */
    ck_assert_uint_eq(r->nkeys, 2);
    ck_assert_str_eq(r->key[0], "design");
    ck_assert_str_eq(r->key[1], "data");
    ck_assert_uint_eq(r->nmetrics, 1);
    ck_assert_uint_eq(r->nrows, 5);
    /* Rows in the predicted file's order, with both lines. */
    ck_assert_str_eq(r->row_key[3 * 2 + 1], "d");
    ck_assert_uint_eq(r->pred_line[3], 5);
    ck_assert_uint_eq(r->ref_line[3], 3);
    ck_assert_close(r->rel[0], 0.1);
    ck_assert_close(r->rel[1], -0.1);
    ck_assert_close(r->rel[2], 0.0);
    ck_assert_close(r->rel[3], 0.2);
    ck_assert_close(r->rel[4], -0.45);
    const tessel_validate_metric *M = metric(r, "v");
    ck_assert_uint_eq(M->rows, 5);
    ck_assert_close(M->mean_abs_rel_err, 0.17);
    ck_assert_close(M->median_abs_rel_err, 0.1);
    ck_assert_close(M->p95_abs_rel_err, 0.45);
    ck_assert_close(M->max_abs_rel_err, 0.45);
    ck_assert_close(M->spearman, 0.9);
    ck_assert_uint_eq(r->only_predicted, 0);
    ck_assert_uint_eq(r->only_reference, 0);
    ck_assert_uint_eq(tessel_validate_exceeding(r, 0.5), 0);
    ck_assert_uint_eq(tessel_validate_exceeding(r, 0.44), 1);

    /* The summary CSV, exactly. 0.17 is printed in shortest round-trip
     * form of the double the mean produced. */
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(tessel_validate_summary_csv(f, r), 0);
    char buf[512] = "";
    rewind(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    /* The fixed parts exactly; mean and spearman may differ in the last
     * bits from 0.17 and 0.9 and are checked above. */
    ck_assert_msg(strncmp(buf, tessel_validate_summary_header(),
                          strlen(tessel_validate_summary_header())) == 0,
                  "header: %s", buf);
    ck_assert_msg(strstr(buf, "\nv,5,") && strstr(buf, ",0.1,0.45,0.45,") &&
                      strstr(buf, ",0,0,0,0\n"),
                  "row: %s", buf);
    tessel_validate_result_free(&r);
    ck_assert_ptr_null(r);
}
END_TEST

/* 20 rows, |rel| = 0.01, 0.02, ..., 0.20 (pred = ref * (1 + i/100)):
 * median = rank ceil(0.5 * 20) = 10 -> 0.10, p95 = rank ceil(0.95 * 20) = 19
 * -> 0.19 (not interpolated), max 0.20, mean = 2.1 / 20 = 0.105.
 * Both columns increase with i: Spearman 1. */
START_TEST(nearest_rank_quantiles)
{
    char pred[2048] = "design,data,v\n", ref[2048] = "design,data,v\n";
    for (int i = 1; i <= 20; i++) {
        char line[64];
        snprintf(line, sizeof(line), "d,%d,%d\n", i, 100 * i + i * i);
        strcat(pred, line);
        snprintf(line, sizeof(line), "d,%d,%d\n", i, 100 * i);
        strcat(ref, line);
    }
    tessel_validate_result *r = compare(pred, ref, NULL);
    const tessel_validate_metric *M = metric(r, "v");
    ck_assert_uint_eq(M->rows, 20);
    ck_assert_close(M->median_abs_rel_err, 0.10);
    ck_assert_close(M->p95_abs_rel_err, 0.19);
    ck_assert_close(M->max_abs_rel_err, 0.20);
    ck_assert_close(M->mean_abs_rel_err, 0.105);
    ck_assert_close(M->spearman, 1.0);
    tessel_validate_result_free(&r);
}
END_TEST

/* Spearman with ties and a reversal: ref 1, 2, 2, 3 (ranks 1, 2.5, 2.5, 4),
 * pred 4, 3, 2, 1 (ranks 4, 3, 2, 1). Pearson of the ranks:
 * ref ranks - 2.5 = -1.5, 0, 0, 1.5; pred ranks - 2.5 = 1.5, 0.5, -0.5, -1.5
 * cov = -2.25 + 0 + 0 - 2.25 = -4.5; var_ref = 4.5, var_pred = 5
 * rho = -4.5 / sqrt(4.5 * 5) = -0.9486832980505138 */
START_TEST(spearman_ties_and_na)
{
    tessel_validate_result *r = compare("design,data,v\nd,a,4\nd,b,3\nd,c,2\nd,e,1\n",
                                        "design,data,v\nd,a,1\nd,b,2\nd,c,2\nd,e,3\n", NULL);
    ck_assert_close(metric(r, "v")->spearman, -4.5 / sqrt(4.5 * 5));
    tessel_validate_result_free(&r);
    /* One row: n/a. A constant side: n/a. */
    r = compare("design,data,v\nd,a,4\n", "design,data,v\nd,a,1\n", NULL);
    ck_assert(isnan(metric(r, "v")->spearman));
    ck_assert_close(metric(r, "v")->max_abs_rel_err, 3.0);
    tessel_validate_result_free(&r);
    r = compare("design,data,v\nd,a,4\nd,b,5\n", "design,data,v\nd,a,1\nd,b,1\n", NULL);
    ck_assert(isnan(metric(r, "v")->spearman));
    tessel_validate_result_free(&r);
}
END_TEST

/* ref = 0: 0/0 is error 0, 5/0 is inf (counted, not in the statistics);
 * an empty field is missing. Rows: a 0/0 -> 0, b 5/0 -> inf, c 3/2 -> 0.5,
 * d empty -> missing. Finite errors 0, 0.5: mean 0.25, median rank 1 -> 0,
 * p95 rank 2 -> 0.5. */
START_TEST(zero_reference)
{
    tessel_validate_result *r = compare("design,data,v\nd,a,0\nd,b,5\nd,c,3\nd,d,\n",
                                        "design,data,v\nd,a,0\nd,b,0\nd,c,2\nd,d,7\n", NULL);
    ck_assert_close(r->rel[0], 0.0);
    ck_assert(isinf(r->rel[1]) && r->rel[1] > 0);
    ck_assert_close(r->rel[2], 0.5);
    ck_assert(isnan(r->rel[3]) && isnan(r->pred[3]));
    const tessel_validate_metric *M = metric(r, "v");
    ck_assert_uint_eq(M->rows, 3);
    ck_assert_uint_eq(M->inf_rows, 1);
    ck_assert_uint_eq(M->empty_rows, 1);
    ck_assert_close(M->mean_abs_rel_err, 0.25);
    ck_assert_close(M->median_abs_rel_err, 0.0);
    ck_assert_close(M->p95_abs_rel_err, 0.5);
    /* An inf row fails any --max-error. */
    ck_assert_uint_eq(tessel_validate_exceeding(r, 1e9), 1);
    FILE *f = tmpfile();
    ck_assert_int_eq(tessel_validate_print(f, r), 0);
    rewind(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    ck_assert_msg(strstr(buf, " inf\n"), "text shows inf: %s", buf);
    tessel_validate_result_free(&r);

    /* Only inf rows: statistics n/a (NaN), still counted. */
    r = compare("design,data,v\nd,a,1\n", "design,data,v\nd,a,0\n", NULL);
    ck_assert(isnan(metric(r, "v")->mean_abs_rel_err));
    ck_assert_uint_eq(metric(r, "v")->inf_rows, 1);
    tessel_validate_result_free(&r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Join, keys, map, errors. */

START_TEST(missing_rows_both_sides)
{
    tessel_validate_options opt;
    tessel_validate_options_init(&opt);
    opt.max_unmatched = 2;
    tessel_validate_result *r =
        compare("design,data,v\nd,a,1\nd,p1,1\nd,b,2\nd,p2,1\nd,p3,1\n",
                "design,data,v\nd,r1,1\nd,b,2\nd,a,1\n", &opt);
    ck_assert_uint_eq(r->nrows, 2);
    ck_assert_str_eq(r->row_key[1], "a");
    ck_assert_str_eq(r->row_key[3], "b");
    ck_assert_uint_eq(r->only_predicted, 3);
    ck_assert_uint_eq(r->nshown_predicted, 2); /* the first two, in file order */
    ck_assert_str_eq(r->shown_predicted[0], "design=d data=p1");
    ck_assert_uint_eq(r->shown_predicted_line[0], 3);
    ck_assert_str_eq(r->shown_predicted[1], "design=d data=p2");
    ck_assert_uint_eq(r->only_reference, 1);
    ck_assert_uint_eq(r->nshown_reference, 1);
    ck_assert_str_eq(r->shown_reference[0], "design=d data=r1");
    ck_assert_uint_eq(r->shown_reference_line[0], 2);
    tessel_validate_result_free(&r);
}
END_TEST

START_TEST(default_keys_traffic_and_auto)
{
    /* A traffic-like table (level column) joins on design,workload,data,
     * strategy,level,tensor; `estimator` differs and is neither key nor
     * metric (not numeric). */
    const char pred[] = "design,workload,data,strategy,estimator,level,tensor,reads\n"
                        "x,spmspm,G,fixed,stat,DRAM,A,10\nx,spmspm,G,fixed,stat,DRAM,B,20\n";
    const char ref[] = "design,workload,data,strategy,estimator,level,tensor,reads\n"
                       "x,spmspm,G,fixed,exact,DRAM,B,10\nx,spmspm,G,fixed,exact,DRAM,A,10\n";
    tessel_validate_result *r = compare(pred, ref, NULL);
    ck_assert_uint_eq(r->nkeys, 6);
    const char *want[] = { "design", "workload", "data", "strategy", "level", "tensor" };
    for (int i = 0; i < 6; i++)
        ck_assert_str_eq(r->key[i], want[i]);
    ck_assert_uint_eq(r->nmetrics, 1);
    ck_assert_str_eq(r->metric[0].name, "reads");
    ck_assert_close(r->rel[0], 0.0); /* A: 10 vs 10 */
    ck_assert_close(r->rel[1], 1.0); /* B: 20 vs 10 */
    tessel_validate_result_free(&r);

    /* Workload only in one file: not added. An explicit --key is used as is. */
    r = compare("design,data,workload,v\nx,G,spmspm,1\n", "design,data,v\nx,G,2\n", NULL);
    ck_assert_uint_eq(r->nkeys, 2);
    tessel_validate_result_free(&r);
    const char *keys[] = { "data" };
    tessel_validate_options opt;
    tessel_validate_options_init(&opt);
    opt.keys = keys;
    opt.nkeys = 1;
    r = compare("design,data,v\nx,G,1\n", "design,data,v\ny,G,2\n", &opt);
    ck_assert_uint_eq(r->nrows, 1);
    ck_assert_close(r->rel[0], -0.5);
    tessel_validate_result_free(&r);
}
END_TEST

START_TEST(map_columns)
{
    /* The simulator calls data `dataset` and v `sim_v`; its own `v` column
     * (a different quantity) must not be used once v is mapped. */
    tessel_validate_map map[] = { { "data", "dataset" }, { "v", "sim_v" } };
    tessel_validate_options opt;
    tessel_validate_options_init(&opt);
    opt.map = map;
    opt.nmap = 2;
    tessel_validate_result *r =
        compare("design,data,v\nx,G,30\n", "design,dataset,v,sim_v\nx,G,1000,20\n", &opt);
    ck_assert_uint_eq(r->nmetrics, 1);
    ck_assert_str_eq(r->metric[0].ref_column, "sim_v");
    ck_assert_close(r->rel[0], 0.5);
    tessel_validate_result_free(&r);

    /* A map target the reference lacks. */
    tessel_diag d;
    tessel_validate_map bad[] = { { "v", "simv" } };
    opt.map = bad;
    opt.nmap = 1;
    ck_assert_int_eq(compare_fails("design,data,v\nx,G,1\n", "design,data,sim_v\nx,G,1\n", &opt,
                                   &d),
                     TESSEL_EINVAL);
    ck_assert_msg(strstr(d.message, "'simv'") && strstr(d.message, "did you mean 'sim_v'"),
                  "%s", d.message);
}
END_TEST

START_TEST(errors_name_file_and_column)
{
    tessel_diag d;
    const char *metrics[] = { "cycle" };
    tessel_validate_options opt;
    tessel_validate_options_init(&opt);
    opt.metrics = metrics;
    opt.nmetrics = 1;
    /* Missing metric in the predicted file: did-you-mean and the columns. */
    ck_assert_int_eq(compare_fails("design,data,cycles\nx,G,1\n", "design,data,cycles\nx,G,1\n",
                                   &opt, &d),
                     TESSEL_EINVAL);
    ck_assert_str_eq(d.file, "t.csv");
    ck_assert_msg(strstr(d.message, "metric column 'cycle' not found (did you mean 'cycles'?)") &&
                      strstr(d.message, "the columns are: design, data, cycles"),
                  "%s", d.message);
    /* Missing key column in the reference. */
    ck_assert_int_eq(compare_fails("design,data,v\nx,G,1\n", "design,dat,v\nx,G,1\n", NULL, &d),
                     TESSEL_EINVAL);
    ck_assert_msg(strstr(d.message, "key column 'data' not found (did you mean 'dat'?)"), "%s",
                  d.message);
    /* A non-number in a chosen metric: file:line:col. */
    metrics[0] = "v";
    ck_assert_int_eq(compare_fails("design,data,v\nx,G,1\nx,H,1\n",
                                   "design,data,v\nx,G,1\nx,H,n/a\n", &opt, &d),
                     TESSEL_EINVAL);
    ck_assert_uint_eq(d.line, 3);
    ck_assert_uint_eq(d.column, 5);
    ck_assert_msg(strstr(d.message, "'n/a' is not a number"), "%s", d.message);
    /* Nothing numeric in common. */
    ck_assert_int_eq(compare_fails("design,data,v\nx,G,1\n", "design,data,w\nx,G,1\n", NULL, &d),
                     TESSEL_EINVAL);
    ck_assert_msg(strstr(d.message, "no numeric column in common"), "%s", d.message);
}
END_TEST

START_TEST(duplicate_keys)
{
    tessel_diag d;
    /* Lines 2 and 4 share (x, G); 3 and 5 share (x, H): the first repeat
     * in the file (line 4) is reported, with its first line. */
    ck_assert_int_eq(compare_fails("design,data,v\nx,G,1\nx,H,1\nx,G,2\nx,H,2\n",
                                   "design,data,v\nx,G,1\n", NULL, &d),
                     TESSEL_EPARSE);
    ck_assert_uint_eq(d.line, 4);
    ck_assert_msg(strstr(d.message, "duplicate key design=x data=G (first at line 2)"), "%s",
                  d.message);
    /* In the reference too. */
    ck_assert_int_eq(compare_fails("design,data,v\nx,G,1\n",
                                   "design,data,v\r\nx,G,1\r\ny,G,1\r\nx,G,1\r\n", NULL, &d),
                     TESSEL_EPARSE);
    ck_assert_uint_eq(d.line, 4);
}
END_TEST

/* Keys are tuples: ("a,b", "c") and ("a", "b,c") are different rows even
 * though their fields joined with a comma look alike. */
START_TEST(keys_are_tuples)
{
    tessel_validate_result *r = compare("design,data,v\n\"a,b\",c,1\na,\"b,c\",2\n",
                                        "design,data,v\na,\"b,c\",4\n\"a,b\",c,1\n", NULL);
    ck_assert_uint_eq(r->nrows, 2);
    ck_assert_close(r->rel[0], 0.0);
    ck_assert_close(r->rel[1], -0.5);
    tessel_validate_result_free(&r);
}
END_TEST

/* End to end on committed tessel outputs: ExTensor with LLB tiles
 * i:32,k:1024,j:1024 against the default tiling. DRAM A is read 32 times
 * instead of 16 (rel 1); 9 rows, no unmatched. */
START_TEST(tessel_outputs)
{
    tessel_report_csv *p = NULL, *q = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    ck_assert_int_eq(
        tessel_report_csv_load("tests/validate/extensor-i32-traffic.csv", NULL, &p, &d), 0);
    ck_assert_int_eq(
        tessel_report_csv_load("tests/validate/extensor-exact-traffic.csv", NULL, &q, &d), 0);
    tessel_validate_result *r = NULL;
    ck_assert_int_eq(tessel_validate_compare(p, q, NULL, NULL, &r, &d), 0);
    ck_assert_uint_eq(r->nrows, 9);
    ck_assert_uint_eq(r->only_predicted + r->only_reference, 0);
    const tessel_validate_metric *M = metric(r, "reads");
    /* |rel| of reads: eight zeros and a 1: median 0, p95 = rank 9 = 1, mean 1/9. */
    ck_assert_close(M->median_abs_rel_err, 0.0);
    ck_assert_close(M->p95_abs_rel_err, 1.0);
    ck_assert_close(M->mean_abs_rel_err, 1.0 / 9);
    tessel_validate_result_free(&r);
    tessel_report_csv_free(&p);
    tessel_report_csv_free(&q);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Out of memory at every allocation, in the reader and the comparison. */

START_TEST(oom_every_allocation)
{
    const char pred[] = "design,data,v,w\nx,a,11,1\nx,b,18,0\nx,c,40,2\nx,p,1,1\n";
    const char ref[] = "dsgn,data,v,w\nx,b,20,0\nx,a,10,1\nx,c,40,1\nx,r,1,1\n";
    tessel_validate_map map[] = { { "design", "dsgn" } };
    tessel_validate_options opt;
    tessel_validate_options_init(&opt);
    opt.map = map;
    opt.nmap = 1;
    int succeeded = 0;
    for (long fail = 1; fail < 400 && !succeeded; fail++) {
        test_alloc ta;
        test_alloc_init(&ta, fail);
        tessel_report_csv *p = NULL, *q = NULL;
        tessel_validate_result *r = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_report_csv_parse("p.csv", pred, strlen(pred), &ta.allocator, &p, &d);
        if (!rc)
            rc = tessel_report_csv_parse("r.csv", ref, strlen(ref), &ta.allocator, &q, &d);
        if (!rc)
            rc = tessel_validate_compare(p, q, &opt, &ta.allocator, &r, &d);
        if (rc) {
            ck_assert_msg(rc == TESSEL_ENOMEM, "fail_at %ld: %d %s", fail, rc, d.message);
            ck_assert_int_eq(d.code, TESSEL_ENOMEM);
            ck_assert_ptr_null(r);
        } else {
            succeeded = 1;
            ck_assert_uint_eq(r->nrows, 3);
            ck_assert_uint_eq(r->only_predicted, 1);
            ck_assert_close(metric(r, "v")->p95_abs_rel_err, 0.1);
            ck_assert_uint_eq(metric(r, "w")->inf_rows, 0);
        }
        tessel_validate_result_free(&r);
        tessel_report_csv_free(&p);
        tessel_report_csv_free(&q);
        ck_assert_msg(ta.live == 0, "fail_at %ld: %ld blocks leaked", fail, ta.live);
    }
    ck_assert(succeeded);
}
END_TEST

static Suite *validate_suite(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("csv");
    tcase_add_test(tc, csv_quoting_crlf_bom);
    tcase_add_test(tc, csv_errors);
    tcase_add_test(tc, csv_huge_field);
    tcase_add_test(tc, csv_load_files);
    tcase_add_test(tc, numbers);
    suite_add_tcase(s, tc);
    tc = tcase_create("compare");
    tcase_add_test(tc, hand_computed_stats);
    tcase_add_test(tc, nearest_rank_quantiles);
    tcase_add_test(tc, spearman_ties_and_na);
    tcase_add_test(tc, zero_reference);
    tcase_add_test(tc, missing_rows_both_sides);
    tcase_add_test(tc, default_keys_traffic_and_auto);
    tcase_add_test(tc, map_columns);
    tcase_add_test(tc, errors_name_file_and_column);
    tcase_add_test(tc, duplicate_keys);
    tcase_add_test(tc, keys_are_tuples);
    tcase_add_test(tc, tessel_outputs);
    tcase_add_test(tc, oom_every_allocation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(validate_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Fuzz target: CSV tables (tessel_report_csv_parse) and the comparison of
 * `tessel validate` (tessel_validate_compare).
 *
 * The input is split at the first "\n--\n" into a predicted and a reference
 * table (without one, the input is compared with itself). A failed parse
 * or comparison must be a clean error (negative code, no object, a
 * message); a successful parse must keep the promised shape (every row as
 * wide as the header, fields NUL-terminated and free of NULs, lines
 * increasing); a successful comparison must have consistent counts. Every
 * allocation must be released. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_check.h"
#include "tessel/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_table(const tessel_report_csv *t, size_t size)
{
    size_t cols = tessel_report_csv_columns(t), rows = tessel_report_csv_rows(t);
    FUZZ_REQUIRE(cols >= 1, "a table has a header");
    FUZZ_REQUIRE(rows * cols <= size + 1, "no more fields than bytes");
    for (size_t c = 0; c < cols; c++) {
        const char *name = tessel_report_csv_column_name(t, c);
        FUZZ_REQUIRE(name && name[0], "column names are non-empty");
        FUZZ_REQUIRE(tessel_report_csv_find(t, name) == (long)c, "column names are unique");
    }
    uint64_t prev = 0;
    for (size_t r = 0; r < rows; r++) {
        uint64_t line = tessel_report_csv_line(t, r);
        FUZZ_REQUIRE(line > prev, "rows start on increasing lines");
        prev = line;
        for (size_t c = 0; c < cols; c++) {
            const char *s = tessel_report_csv_cell(t, r, c);
            FUZZ_REQUIRE(s != NULL, "every field exists");
            FUZZ_REQUIRE(strlen(s) <= size, "fields are terminated within the data");
            FUZZ_REQUIRE(tessel_report_csv_cell_line(t, r, c) >= line, "field lines");
        }
    }
    FUZZ_REQUIRE(tessel_report_csv_cell(t, rows, 0) == NULL, "rows end");
}

static void check_failure(int rc, const void *obj, const tessel_diag *d)
{
    FUZZ_REQUIRE(rc < 0, "a failure returns a negative code");
    FUZZ_REQUIRE(obj == NULL, "a failure returns no object");
    FUZZ_REQUIRE(d->code == rc && d->message[0], "a failure says why");
    char buf[2048];
    FUZZ_REQUIRE(tessel_diag_format(d, buf, sizeof(buf)) > 0, "formats");
}

static void check_result(const tessel_validate_result *r, const tessel_report_csv *p,
                         const tessel_report_csv *q)
{
    size_t np = tessel_report_csv_rows(p), nq = tessel_report_csv_rows(q);
    FUZZ_REQUIRE(r->nrows + r->only_predicted == np, "predicted rows are joined or listed");
    FUZZ_REQUIRE(r->nrows + r->only_reference == nq, "reference rows are joined or listed");
    FUZZ_REQUIRE(r->nkeys >= 1 && r->nmetrics >= 1, "keys and metrics");
    for (size_t m = 0; m < r->nmetrics; m++) {
        const tessel_validate_metric *M = &r->metric[m];
        FUZZ_REQUIRE(M->rows + M->empty_rows == r->nrows, "every joined row is counted once");
        FUZZ_REQUIRE(M->inf_rows <= M->rows, "inf rows are rows");
        if (!isnan(M->max_abs_rel_err))
            FUZZ_REQUIRE(M->median_abs_rel_err <= M->p95_abs_rel_err &&
                             M->p95_abs_rel_err <= M->max_abs_rel_err &&
                             M->mean_abs_rel_err <= M->max_abs_rel_err * (1 + 1e-12),
                         "median <= p95 <= max, mean <= max");
        if (!isnan(M->spearman))
            FUZZ_REQUIRE(M->spearman >= -1 - 1e-9 && M->spearman <= 1 + 1e-9, "|rho| <= 1");
    }
    FILE *f = fopen("/dev/null", "w");
    if (f) {
        FUZZ_REQUIRE(tessel_validate_summary_csv(f, r) == 0, "summary writes");
        FUZZ_REQUIRE(tessel_validate_print(f, r) == 0, "text writes");
        fclose(f);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    const uint8_t *second = data;
    size_t size1 = size, size2 = size;
    for (size_t i = 0; i + 4 <= size; i++)
        if (memcmp(data + i, "\n--\n", 4) == 0) {
            size1 = i + 1;
            second = data + i + 4;
            size2 = size - i - 4;
            break;
        }
    tessel_report_csv *p = NULL, *q = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_report_csv_parse("p.csv", data, size1, &fa.allocator, &p, &d);
    if (rc) {
        check_failure(rc, p, &d);
    } else {
        check_table(p, size1);
        tessel_diag_clear(&d);
        rc = tessel_report_csv_parse("r.csv", second, size2, &fa.allocator, &q, &d);
        if (rc)
            check_failure(rc, q, &d);
        else
            check_table(q, size2);
    }
    if (p && q) {
        tessel_validate_result *r = NULL;
        tessel_diag_clear(&d);
        rc = tessel_validate_compare(p, q, NULL, &fa.allocator, &r, &d);
        if (rc)
            check_failure(rc, r, &d);
        else
            check_result(r, p, q);
        tessel_validate_result_free(&r);
        FUZZ_REQUIRE(r == NULL, "tessel_validate_result_free nulls the pointer");
    }
    tessel_report_csv_free(&p);
    tessel_report_csv_free(&q);
    FUZZ_REQUIRE(p == NULL && q == NULL, "tessel_report_csv_free nulls the pointer");
    fuzz_alloc_check_released(&fa, "reading and comparing CSV tables");
    return 0;
}

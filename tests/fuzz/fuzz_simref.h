/* Shared by the fuzz targets of the simulator-reference readers
 * (fuzz_simref_drt.c, fuzz_simref_stonne.c, fuzz_simref_sam.c).
 *
 * The input is split at "\n--\n" lines into up to three files (f0, f1,
 * f2), as a reference made of several files (STONNE's JSON, .counters and
 * energy report; several DRT runs; SAM's CSV, JSON and log). Each input is
 * read at both grains. A failure must be a clean error: a negative code,
 * no table, a message, and for malformed input (TESSEL_EPARSE,
 * TESSEL_ERANGE) the file with a line and a column. A success must give a
 * well-formed table (design first, unique names, metric fields empty or
 * numbers), notes with positions and code 0, at most the cap plus one.
 * The table is then compared with itself, and edited with a --set-key;
 * every allocation must be released. */
#ifndef TESSEL_FUZZ_SIMREF_H
#define TESSEL_FUZZ_SIMREF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "tessel/report.h"

#define FUZZ_SIMREF_FILES 3

static size_t fuzz_simref_split(const uint8_t *data, size_t size, tessel_simref_input *in)
{
    static const char *const names[FUZZ_SIMREF_FILES] = { "f0", "f1", "f2" };
    size_t n = 0, start = 0;
    for (size_t i = 0; n + 1 < FUZZ_SIMREF_FILES && i + 4 <= size; i++)
        if (memcmp(data + i, "\n--\n", 4) == 0) {
            in[n] = (tessel_simref_input){ names[n], data + start, i + 1 - start };
            n++;
            start = i + 4;
            i += 3;
        }
    in[n] = (tessel_simref_input){ names[n], data + start, size - start };
    return n + 1;
}

static void fuzz_simref_check_failure(int rc, const tessel_report_csv *t, const tessel_diag *d)
{
    FUZZ_REQUIRE(rc < 0, "a failure returns a negative code");
    FUZZ_REQUIRE(t == NULL, "a failure returns no table");
    FUZZ_REQUIRE(d->code == rc && d->message[0], "a failure says why");
    FUZZ_REQUIRE(rc == TESSEL_EPARSE || rc == TESSEL_ERANGE || rc == TESSEL_EUNSUPPORTED ||
                     rc == TESSEL_ENOMEM,
                 "only malformed input, an unsupported grain or the allocation bound fail");
    if (rc == TESSEL_EPARSE || rc == TESSEL_ERANGE)
        FUZZ_REQUIRE(d->file[0] && d->line >= 1 && d->column >= 1,
                     "malformed input is reported at file:line:col");
    char buf[2048];
    FUZZ_REQUIRE(tessel_diag_format(d, buf, sizeof(buf)) > 0, "formats");
}

/* A metric field: empty, or a number (counts are whole, STONNE's energy
 * and area are reals). */
static void fuzz_simref_check_metric(const char *s)
{
    if (!s[0])
        return;
    double v;
    FUZZ_REQUIRE(tessel_validate_parse_number(s, &v) && isfinite(v) && v >= 0,
                 "metric fields are finite numbers >= 0");
}

static int fuzz_simref_is_key(const char *name)
{
    return strcmp(name, "design") == 0 || strcmp(name, "data") == 0 ||
           strcmp(name, "level") == 0 || strcmp(name, "tensor") == 0;
}

static void fuzz_simref_check_table(const tessel_report_csv *t, tessel_simref_grain grain)
{
    size_t cols = tessel_report_csv_columns(t), rows = tessel_report_csv_rows(t);
    FUZZ_REQUIRE(cols >= 2 && rows >= 1, "a table has keys and rows");
    FUZZ_REQUIRE(strcmp(tessel_report_csv_column_name(t, 0), "design") == 0 &&
                     strcmp(tessel_report_csv_column_name(t, 1), "data") == 0,
                 "design and data come first");
    if (grain == TESSEL_SIMREF_TRAFFIC)
        FUZZ_REQUIRE(tessel_report_csv_find(t, "level") == 2 &&
                         tessel_report_csv_find(t, "tensor") == 3,
                     "traffic tables have level and tensor");
    for (size_t c = 0; c < cols; c++) {
        const char *name = tessel_report_csv_column_name(t, c);
        FUZZ_REQUIRE(tessel_report_csv_find(t, name) == (long)c, "column names are unique");
        for (size_t r = 0; r < rows && !fuzz_simref_is_key(name); r++)
            fuzz_simref_check_metric(tessel_report_csv_cell(t, r, c));
    }
    for (size_t r = 0; r < rows; r++)
        FUZZ_REQUIRE(tessel_report_csv_cell(t, r, 0)[0], "every row names its design");
}

static void fuzz_simref_check_notes(const tessel_diag_list *notes)
{
    FUZZ_REQUIRE(notes->count <= TESSEL_SIMREF_MAX_NOTES + 1 + 3 * FUZZ_SIMREF_FILES,
                 "unknown names are capped (interpretation notes come on top, 3 per run)");
    for (size_t i = 0; i < notes->count; i++)
        FUZZ_REQUIRE(notes->items[i].code == 0 && notes->items[i].message[0] &&
                         notes->items[i].file[0],
                     "a note has code 0, a file and a message");
}

/* The table against itself: every joined error is 0. Then --set-key. */
static void fuzz_simref_use_table(tessel_report_csv *t, const tessel_allocator *a)
{
    tessel_validate_result *r = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_validate_compare(t, t, NULL, a, &r, &d);
    if (rc) {
        FUZZ_REQUIRE(rc < 0 && r == NULL && d.message[0], "a failed comparison is clean");
    } else {
        for (size_t m = 0; m < r->nmetrics; m++)
            FUZZ_REQUIRE(r->metric[m].inf_rows == 0 && (isnan(r->metric[m].max_abs_rel_err) ||
                                                        r->metric[m].max_abs_rel_err == 0),
                         "a table agrees with itself");
    }
    tessel_validate_result_free(&r);
    tessel_diag_clear(&d);
    if (tessel_report_csv_set_key(t, "design", NULL, "renamed", &d) == 0)
        for (size_t row = 0; row < tessel_report_csv_rows(t); row++)
            FUZZ_REQUIRE(strcmp(tessel_report_csv_cell(t, row, 0), "renamed") == 0,
                         "--set-key NAME=VALUE sets every row");
}

static void fuzz_simref_one(tessel_simref_format format, const uint8_t *data, size_t size)
{
    tessel_simref_input in[FUZZ_SIMREF_FILES];
    size_t n = fuzz_simref_split(data, size, in);
    for (int g = 0; g < 2; g++) {
        tessel_simref_grain grain = g ? TESSEL_SIMREF_TRAFFIC : TESSEL_SIMREF_SUMMARY;
        fuzz_alloc fa;
        fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
        tessel_diag_list notes;
        tessel_diag_list_init(&notes, &fa.allocator);
        tessel_report_csv *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_simref_parse(format, grain, in, n, &fa.allocator, &t, &notes, &d);
        if (rc) {
            fuzz_simref_check_failure(rc, t, &d);
        } else {
            fuzz_simref_check_table(t, grain);
            fuzz_simref_check_notes(&notes);
            fuzz_simref_use_table(t, &fa.allocator);
        }
        tessel_report_csv_free(&t);
        FUZZ_REQUIRE(t == NULL, "tessel_report_csv_free nulls the pointer");
        tessel_diag_list_free(&notes);
        fuzz_alloc_check_released(&fa, "reading a simulator reference");
    }
}

#endif

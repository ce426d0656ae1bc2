/* SAM (the sparse abstract machine's Python simulator, weiya711/sam).
 *
 * - Per-block cycle CSVs (header "block,start,finish,duration,valid_ops"),
 *   written by SAM's test harness as TEST_DATASET_back_DEPTH.csv: one row
 *   per block with the cycle it started and finished. The run's cycles are
 *   the last finish.
 * - Benchmark JSONs (pytest-benchmark files, first non-blank byte '{'):
 *   per benchmark its name and extra_info with "cycles", "dataset" and
 *   "result/nnz".
 * - The pytest log of the run: checked for the summary line, which must not
 *   report a failure; it adds no numbers.
 * SAM counts cycles only: no bytes, no DRAM, so only the summary grain. */
#include <stdio.h>
#include <string.h>

#include "report_internal.h"
#include "simref_internal.h"

static const char *const summary_columns[] = { "design", "data", "cycles", "output_nnz" };
enum { COL_CYCLES = 2, COL_OUTPUT_NNZ };

enum { KIND_JSON, KIND_CSV, KIND_LOG };

static int kind_of(const tessel_simref_input *in)
{
    const char *s = in->data;
    size_t i = 0;
    if (in->size >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    size_t first = i;
    while (i < in->size && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    if (i < in->size && s[i] == '{')
        return KIND_JSON;
    if (in->size - first >= 6 && memcmp(s + first, "block,", 6) == 0)
        return KIND_CSV;
    return KIND_LOG;
}

static int add_run_row(simref_ctx *c, simref_builder *b, uint64_t line, const char *design,
                       const char *data, uint64_t cycles, const uint64_t *output_nnz)
{
    size_t row;
    int rc = simref_builder_add_row(c, b, line, &row);
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_DESIGN, design);
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_DATA, data);
    if (!rc)
        rc = simref_builder_set_u64(c, b, row, COL_CYCLES, cycles);
    if (!rc && output_nnz)
        rc = simref_builder_set_u64(c, b, row, COL_OUTPUT_NNZ, *output_nnz);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The per-block CSV. */

enum { CSV_BLOCK, CSV_START, CSV_FINISH, CSV_DURATION, CSV_NCOLS };

static int csv_columns(simref_ctx *c, const tessel_report_csv *t, long col[CSV_NCOLS])
{
    static const char *const names[CSV_NCOLS] = { "block", "start", "finish", "duration" };
    const char *file = tessel_report_csv_name(t);
    for (size_t i = 0; i < tessel_report_csv_columns(t); i++) {
        const char *name = tessel_report_csv_column_name(t, i);
        int known = strcmp(name, "valid_ops") == 0;
        for (int k = 0; k < CSV_NCOLS; k++)
            known |= strcmp(name, names[k]) == 0;
        if (!known) {
            int rc = simref_note_unknown(c, file, report_csv_header_line(t, i),
                                         report_csv_header_column(t, i), "SAM column", name);
            if (rc)
                return rc;
        }
    }
    for (int k = 0; k < CSV_NCOLS; k++) {
        col[k] = tessel_report_csv_find(t, names[k]);
        if (col[k] < 0)
            return simref_error(c, TESSEL_EPARSE, file, 1, 1, "missing column '%s'", names[k]);
    }
    return 0;
}

static int csv_count(simref_ctx *c, const tessel_report_csv *t, size_t row, long col,
                     uint64_t *v)
{
    const char *s = tessel_report_csv_cell(t, row, (size_t)col);
    int rc = simref_parse_count(s, strlen(s), v);
    if (!rc)
        return 0;
    return simref_error(c, rc == SIMREF_COUNT_TOO_LARGE ? TESSEL_ERANGE : TESSEL_EPARSE,
                        tessel_report_csv_name(t), tessel_report_csv_cell_line(t, row, (size_t)col),
                        tessel_report_csv_cell_column(t, row, (size_t)col),
                        "column '%s': expected a whole number >= 0 below 2^64, found '%.40s'",
                        tessel_report_csv_column_name(t, (size_t)col), s);
}

/* One block's row: its finish, checked against start + duration. */
static int csv_block(simref_ctx *c, const tessel_report_csv *t, size_t row,
                     const long col[CSV_NCOLS], uint64_t *finish)
{
    const char *block = tessel_report_csv_cell(t, row, (size_t)col[CSV_BLOCK]);
    if (!block[0])
        return simref_error(c, TESSEL_EPARSE, tessel_report_csv_name(t),
                            tessel_report_csv_cell_line(t, row, (size_t)col[CSV_BLOCK]),
                            tessel_report_csv_cell_column(t, row, (size_t)col[CSV_BLOCK]),
                            "a block needs a name");
    uint64_t start = 0, duration = 0;
    int rc = csv_count(c, t, row, col[CSV_START], &start);
    if (!rc)
        rc = csv_count(c, t, row, col[CSV_FINISH], finish);
    if (!rc)
        rc = csv_count(c, t, row, col[CSV_DURATION], &duration);
    if (!rc && (*finish < start || *finish - start != duration))
        rc = simref_error(c, TESSEL_EPARSE, tessel_report_csv_name(t),
                          tessel_report_csv_cell_line(t, row, (size_t)col[CSV_DURATION]),
                          tessel_report_csv_cell_column(t, row, (size_t)col[CSV_DURATION]),
                          "block '%.80s': duration %llu is not finish - start (%llu - %llu)",
                          block, (unsigned long long)duration, (unsigned long long)*finish,
                          (unsigned long long)start);
    return rc;
}

static int read_csv(simref_ctx *c, const tessel_simref_input *in, simref_builder *b)
{
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_report_csv_parse(in->name, in->data, in->size, c->alloc, &t, &d);
    if (rc == TESSEL_EPARSE) {
        /* The CSV reader places a short row on its line only, an empty file
         * nowhere; every reader here gives a line and a column. */
        return simref_error(c, rc, in->name, d.line ? d.line : 1, d.column ? d.column : 1, "%s",
                            d.message);
    }
    if (rc)
        return simref_out_of_memory(c);
    long col[CSV_NCOLS];
    rc = csv_columns(c, t, col);
    uint64_t last = 0;
    size_t last_row = 0;
    for (size_t r = 0; !rc && r < tessel_report_csv_rows(t); r++) {
        uint64_t finish = 0;
        rc = csv_block(c, t, r, col, &finish);
        if (!rc && (r == 0 || finish > last)) {
            last = finish;
            last_row = r;
        }
    }
    if (!rc && tessel_report_csv_rows(t) == 0)
        rc = simref_missing(c, in, "block rows", "(one row per block of the run)");
    if (!rc) {
        char design[1024];
        simref_stem(in->name, design, sizeof(design));
        rc = add_run_row(c, b, tessel_report_csv_line(t, last_row), design, "", last, NULL);
    }
    tessel_report_csv_free(&t);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The benchmark JSON. */

static const char *const extra_ignored[] = { "tensor_B_shape", "tensor_C_shape", "backpressure",
                                             "depth" };

enum { EXTRA_CYCLES, EXTRA_DATASET, EXTRA_OUTPUT_NNZ, EXTRA_NSLOTS };

static int extra_slot(const char *key)
{
    if (strcmp(key, "cycles") == 0)
        return EXTRA_CYCLES;
    if (strcmp(key, "dataset") == 0)
        return EXTRA_DATASET;
    if (strcmp(key, "result/nnz") == 0)
        return EXTRA_OUTPUT_NNZ;
    for (size_t i = 0; i < sizeof(extra_ignored) / sizeof(extra_ignored[0]); i++)
        if (strcmp(key, extra_ignored[i]) == 0)
            return -1;
    /* "BLOCK/statistic" (per-block statistics, tensor sizes): known, not used */
    return strchr(key, '/') ? -1 : -2;
}

/* extra_info's members: cycles, dataset and result/nnz; notes for keys
 * that are neither these nor per-block statistics. */
static int extra_members(simref_ctx *c, const char *file, const json_doc *doc,
                         const json_node *extra, const json_node *found[EXTRA_NSLOTS])
{
    for (int i = 0; i < EXTRA_NSLOTS; i++)
        found[i] = NULL;
    int rc = simref_json_expect(c, file, extra, JSON_OBJECT, "benchmarks[].extra_info");
    for (const json_node *m = json_at(doc, extra->first); !rc && m; m = json_at(doc, m->next)) {
        const char *key = json_key(doc, m);
        int slot = extra_slot(key);
        if (slot == -2) {
            char name[SIMREF_NAME_MAX * 4];
            snprintf(name, sizeof(name), "extra_info.%.200s", key);
            rc = simref_note_unknown(c, file, m->key_line, m->key_col, "SAM field", name);
        } else if (slot >= 0 && found[slot]) {
            rc = simref_error(c, TESSEL_EPARSE, file, m->key_line, m->key_col,
                              "field 'extra_info.%s' appears twice in one object", key);
        } else if (slot >= 0) {
            found[slot] = m;
        }
    }
    return rc;
}

static int read_benchmark(simref_ctx *c, const char *file, const json_doc *doc,
                          const json_node *bench, simref_builder *b)
{
    static const simref_member members[] = {
        { "name", 0 },       { "extra_info", 1 }, { "group", -1 },   { "fullname", -1 },
        { "params", -1 },    { "param", -1 },     { "options", -1 }, { "stats", -1 },
    };
    const json_node *found[2], *extra[EXTRA_NSLOTS];
    int rc = simref_json_members(c, file, doc, bench, "benchmarks[]", "SAM field", members,
                                 sizeof(members) / sizeof(members[0]), found, 2);
    if (!rc && !found[0])
        rc = simref_json_missing(c, file, bench, "benchmarks[]", "name");
    if (!rc && !found[1])
        rc = simref_json_missing(c, file, bench, "benchmarks[]", "extra_info");
    if (!rc)
        rc = simref_json_expect(c, file, found[0], JSON_STRING, "benchmarks[].name");
    if (!rc)
        rc = extra_members(c, file, doc, found[1], extra);
    if (!rc && !extra[EXTRA_CYCLES])
        rc = simref_json_missing(c, file, found[1], "benchmarks[].extra_info", "cycles");
    if (!rc && extra[EXTRA_DATASET])
        rc = simref_json_expect(c, file, extra[EXTRA_DATASET], JSON_STRING,
                                "extra_info.dataset");
    uint64_t cycles = 0, nnz = 0;
    if (!rc)
        rc = simref_json_count(c, file, doc, extra[EXTRA_CYCLES], "extra_info.cycles", &cycles);
    if (!rc && extra[EXTRA_OUTPUT_NNZ])
        rc = simref_json_count(c, file, doc, extra[EXTRA_OUTPUT_NNZ], "extra_info.result/nnz",
                               &nnz);
    if (rc)
        return rc;
    const char *data = extra[EXTRA_DATASET] ? json_text(doc, extra[EXTRA_DATASET]) : "";
    return add_run_row(c, b, extra[EXTRA_CYCLES]->line, json_text(doc, found[0]), data, cycles,
                       extra[EXTRA_OUTPUT_NNZ] ? &nnz : NULL);
}

static int read_json(simref_ctx *c, const tessel_simref_input *in, simref_builder *b)
{
    static const simref_member members[] = { { "benchmarks", 0 },  { "machine_info", -1 },
                                             { "commit_info", -1 }, { "datetime", -1 },
                                             { "version", -1 } };
    json_doc doc;
    int rc = json_parse(in->name, in->data, in->size, c->alloc, &doc, c->diag);
    if (rc)
        return rc;
    const json_node *root = json_root(&doc), *found[1];
    rc = simref_json_members(c, in->name, &doc, root, "", "SAM field", members,
                             sizeof(members) / sizeof(members[0]), found, 1);
    if (!rc && !found[0])
        rc = simref_json_missing(c, in->name, root, "", "benchmarks");
    if (!rc)
        rc = simref_json_expect(c, in->name, found[0], JSON_ARRAY, "benchmarks");
    if (!rc && found[0]->count == 0)
        rc = simref_error(c, TESSEL_EPARSE, in->name, found[0]->line, found[0]->col,
                          "'benchmarks' is empty");
    for (const json_node *m = rc ? NULL : json_at(&doc, found[0]->first); !rc && m;
         m = json_at(&doc, m->next))
        rc = read_benchmark(c, in->name, &doc, m, b);
    json_free(&doc);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The pytest log. */

/* A word followed by a count in a summary line ("3 failed"). */
static int reports(const char *text, size_t len, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 2; i + w <= len; i++)
        if (memcmp(text + i, word, w) == 0 && text[i - 1] == ' ' && text[i - 2] >= '0' &&
            text[i - 2] <= '9')
            return 1;
    return 0;
}

static int read_log(simref_ctx *c, const tessel_simref_input *in)
{
    simref_lines lines;
    simref_lines_init(&lines, in);
    const char *text;
    size_t len;
    int more, summary = 0;
    while ((more = simref_next_line(c, &lines, &text, &len)) > 0) {
        /* "===== 1 passed, 1 warning in 59.72s =====" */
        if (len < 3 || text[0] != '=' || text[len - 1] != '=' ||
            !(reports(text, len, "passed") || reports(text, len, "failed") ||
              reports(text, len, "error")))
            continue;
        summary = 1;
        if (reports(text, len, "failed") || reports(text, len, "error"))
            return simref_error(c, TESSEL_EPARSE, in->name, lines.line, 1,
                                "SAM's run failed: '%.*s'", (int)(len < 120 ? len : 120), text);
    }
    if (more < 0)
        return more;
    if (!summary)
        return simref_missing(c, in, "pytest summary line",
                              "('== N passed in S s ==': the log is cut short)");
    return 0;
}

int simref_read_sam(simref_ctx *c, tessel_simref_grain grain, const tessel_simref_input *in,
                    size_t n, simref_builder *b)
{
    simref_builder_init(b, c->alloc, summary_columns,
                        sizeof(summary_columns) / sizeof(summary_columns[0]), 2);
    if (grain != TESSEL_SIMREF_SUMMARY)
        return tessel_diag_set(c->diag, TESSEL_EUNSUPPORTED, in[0].name, 0, 0, NULL,
                               "SAM reports cycles only, no traffic per level and tensor: "
                               "compare it with a summary.csv");
    size_t runs = 0;
    for (size_t i = 0; i < n; i++)
        runs += kind_of(&in[i]) != KIND_LOG;
    if (!runs)
        return simref_error(c, TESSEL_EPARSE, in[0].name, 1, 1,
                            "SAM's per-block CSV or its benchmark JSON is needed (the log holds "
                            "no cycle counts)");
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        int kind = kind_of(&in[i]);
        if (kind == KIND_JSON)
            rc = read_json(c, &in[i], b);
        else if (kind == KIND_CSV)
            rc = read_csv(c, &in[i], b);
        else
            rc = read_log(c, &in[i]);
    }
    return rc;
}

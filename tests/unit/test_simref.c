/* Unit tests of the simulator-reference readers (src/report/simref*.c,
 * jsonread.c) and the table edits behind --set-key (csvread.c).
 *
 * `test_simref` reads the copies in tests/validate/simref/ (always there);
 * `test_simref shared` reads the raw files in
 * ../shared/reference/simulator-outputs/ instead and exits 77 (skipped) when
 * that directory is missing. Both check values read off the files by hand.
 * The malformed-input tests cut every copy at every byte and overwrite
 * every byte with characters that matter to the formats: each result must
 * be a table or a clean error with file:line:col, and nothing may leak.
 * Runs from the project root. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tessel/report.h"
#include "test_alloc.h"

#define REPO_DIR "tests/validate/simref"
#define SHARED_DIR "../shared/reference/simulator-outputs"

/* ------------------------------------------------------------------ */
/* Helpers. */

typedef struct file_buf {
    char path[512];
    char *data;
    size_t size;
} file_buf;

static file_buf read_whole(const char *dir, const char *name)
{
    file_buf f;
    memset(&f, 0, sizeof(f));
    snprintf(f.path, sizeof(f.path), "%s/%s", dir, name);
    FILE *fp = fopen(f.path, "rb");
    ck_assert_msg(fp != NULL, "cannot open %s", f.path);
    ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
    long end = ftell(fp);
    ck_assert_int_ge(end, 0);
    rewind(fp);
    f.size = (size_t)end;
    f.data = malloc(f.size ? f.size : 1);
    ck_assert_ptr_nonnull(f.data);
    ck_assert_uint_eq(fread(f.data, 1, f.size, fp), f.size);
    fclose(fp);
    return f;
}

static tessel_simref_input input_of(const file_buf *f)
{
    return (tessel_simref_input){ f->path, f->data, f->size };
}

static tessel_simref_input text_input(const char *name, const char *text)
{
    return (tessel_simref_input){ name, text, strlen(text) };
}

typedef struct parsed {
    int rc;
    tessel_report_csv *t;
    tessel_diag d;
    tessel_diag_list notes;
    char message[1400]; /* the formatted error */
} parsed;

static void parse_with(tessel_simref_format f, tessel_simref_grain g,
                       const tessel_simref_input *in, size_t n, const tessel_allocator *a,
                       parsed *p)
{
    memset(p, 0, sizeof(*p));
    tessel_diag_clear(&p->d);
    tessel_diag_list_init(&p->notes, a);
    p->rc = tessel_simref_parse(f, g, in, n, a, &p->t, &p->notes, &p->d);
    if (p->rc)
        tessel_diag_format(&p->d, p->message, sizeof(p->message));
}

static void parsed_free(parsed *p)
{
    tessel_report_csv_free(&p->t);
    tessel_diag_list_free(&p->notes);
}

static void parse_ok(tessel_simref_format f, tessel_simref_grain g,
                     const tessel_simref_input *in, size_t n, parsed *p)
{
    parse_with(f, g, in, n, NULL, p);
    ck_assert_msg(p->rc == 0, "parse failed: %s", p->message);
    ck_assert_ptr_nonnull(p->t);
}

/* The formatted error of a parse that must fail. */
static void parse_fails(tessel_simref_format f, tessel_simref_grain g,
                        const tessel_simref_input *in, size_t n, int code, const char *expected)
{
    parsed p;
    parse_with(f, g, in, n, NULL, &p);
    ck_assert_msg(p.rc == code, "rc %d, expected %d (%s)", p.rc, code, p.message);
    ck_assert_ptr_null(p.t);
    ck_assert_str_eq(p.message, expected);
    parsed_free(&p);
}

/* The row whose design (and level, tensor when given) match. */
static size_t row_of(const tessel_report_csv *t, const char *design, const char *level,
                     const char *tensor)
{
    long cd = tessel_report_csv_find(t, "design");
    long cl = tessel_report_csv_find(t, "level"), ct = tessel_report_csv_find(t, "tensor");
    ck_assert_int_ge(cd, 0);
    for (size_t r = 0; r < tessel_report_csv_rows(t); r++) {
        if (strcmp(tessel_report_csv_cell(t, r, (size_t)cd), design) != 0)
            continue;
        if (level && strcmp(tessel_report_csv_cell(t, r, (size_t)cl), level) != 0)
            continue;
        if (tensor && strcmp(tessel_report_csv_cell(t, r, (size_t)ct), tensor) != 0)
            continue;
        return r;
    }
    ck_abort_msg("no row %s %s %s", design, level ? level : "", tensor ? tensor : "");
    return 0;
}

/* A field by row and column name; NULL when the table has no such column. */
static const char *field(const tessel_report_csv *t, size_t row, const char *column)
{
    long c = tessel_report_csv_find(t, column);
    return c < 0 ? NULL : tessel_report_csv_cell(t, row, (size_t)c);
}

static void expect_field(const tessel_report_csv *t, size_t row, const char *column,
                         const char *value)
{
    const char *got = field(t, row, column);
    if (!value) {
        ck_assert_msg(got == NULL, "column %s should not exist (row %zu has '%s')", column, row,
                      got ? got : "");
        return;
    }
    ck_assert_msg(got != NULL, "no column %s", column);
    ck_assert_msg(strcmp(got, value) == 0, "row %zu %s: '%s', expected '%s'", row, column, got,
                  value);
}

static int has_note(const parsed *p, const char *needle)
{
    for (size_t i = 0; i < p->notes.count; i++)
        if (strstr(p->notes.items[i].message, needle))
            return 1;
    return 0;
}

static const tessel_diag *note_with(const parsed *p, const char *needle)
{
    for (size_t i = 0; i < p->notes.count; i++)
        if (strstr(p->notes.items[i].message, needle))
            return &p->notes.items[i];
    ck_abort_msg("no note with '%s'", needle);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Values read off the files by hand (the same in the copies and in the
 * shared originals, except where an excerpt is smaller: see
 * tests/validate/simref/README.md). */

static void check_drt_summary(const char *dir)
{
    static const char *const names[] = { "extensor_static.txt", "matraptor_patched.txt",
                                         "outerspace_patched.txt", "tactile_dyn.txt" };
    file_buf f[4];
    tessel_simref_input in[4];
    for (int i = 0; i < 4; i++) {
        char sub[64];
        snprintf(sub, sizeof(sub), "drt/%s", names[i]);
        f[i] = read_whole(dir, sub);
        in[i] = input_of(&f[i]);
    }
    parsed p;
    parse_ok(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, in, 4, &p);
    const tessel_report_csv *t = p.t;
    ck_assert_uint_eq(tessel_report_csv_rows(t), 4);
    ck_assert_uint_eq(tessel_report_csv_columns(t), 6);
    /* extensor_static.txt line 3 "cycles: 26166"; Top DOT NoC a/b/o_r/o_w
     * 200992 + 200992 + 0 + 1514960; Middle all zero; no MACCs. */
    size_t r = row_of(t, "extensor_static", NULL, NULL);
    expect_field(t, r, "data", "");
    expect_field(t, r, "cycles", "26166");
    expect_field(t, r, "dram_bytes", "1916944");
    expect_field(t, r, "llb_pe_bytes", "");
    expect_field(t, r, "flops", "");
    ck_assert_uint_eq(tessel_report_csv_line(t, r), 3);
    /* matraptor: cycles 0 (not modelled), A/B/O bytes 124000 + 1234096 +
     * 1514960, Total MACCs 99508 (printed twice, equal). */
    r = row_of(t, "matraptor_patched", NULL, NULL);
    expect_field(t, r, "cycles", "");
    expect_field(t, r, "dram_bytes", "2873056");
    expect_field(t, r, "flops", "99508");
    /* outerspace: per-tensor counters zero; Top / Middle bandwidth loggers. */
    r = row_of(t, "outerspace_patched", NULL, NULL);
    expect_field(t, r, "cycles", "57682");
    expect_field(t, r, "dram_bytes", "4227152");
    expect_field(t, r, "llb_pe_bytes", "18767648");
    /* tactile: Top 200992 + 201076 + 0 + 1398240; Middle 200992 + 201076 +
     * 0 + 1606224 (its Middle bandwidth logger says 0). */
    r = row_of(t, "tactile_dyn", NULL, NULL);
    expect_field(t, r, "cycles", "36381");
    expect_field(t, r, "dram_bytes", "1800308");
    expect_field(t, r, "llb_pe_bytes", "2008292");
    /* Every field of these files is known: the notes are interpretations. */
    ck_assert(!has_note(&p, "unknown"));
    ck_assert(has_note(&p, "cycles: 0"));
    const tessel_diag *n = note_with(&p, "'Top DOT NoC' counters are all zero: no per-tensor");
    ck_assert_uint_eq(n->line, 5);
    ck_assert_int_eq(n->code, 0);
    parsed_free(&p);
    for (int i = 0; i < 4; i++)
        free(f[i].data);
}

static void check_drt_traffic(const char *dir)
{
    file_buf f[3] = { read_whole(dir, "drt/extensor_static.txt"),
                      read_whole(dir, "drt/matraptor_patched.txt"),
                      read_whole(dir, "drt/tactile_dyn.txt") };
    tessel_simref_input in[3] = { input_of(&f[0]), input_of(&f[1]), input_of(&f[2]) };
    parsed p;
    parse_ok(TESSEL_SIMREF_DRT, TESSEL_SIMREF_TRAFFIC, in, 3, &p);
    const tessel_report_csv *t = p.t;
    /* extensor 3 (no Middle), matraptor 3, tactile 6 */
    ck_assert_uint_eq(tessel_report_csv_rows(t), 12);
    ck_assert_str_eq(tessel_report_csv_column_name(t, 4), "total_bytes");
    expect_field(t, row_of(t, "extensor_static", "LLB", "A"), "total_bytes", "200992");
    expect_field(t, row_of(t, "extensor_static", "LLB", "B"), "total_bytes", "200992");
    expect_field(t, row_of(t, "extensor_static", "LLB", "Z"), "total_bytes", "1514960");
    /* MatRaptor's closed forms (shared README): A = nnz*12 + rows*4,
     * B = multiplies*12 + nnz*4, O = nnz(A*A)*16. */
    char v[32];
    snprintf(v, sizeof(v), "%d", 10000 * 12 + 1000 * 4);
    expect_field(t, row_of(t, "matraptor_patched", "LLB", "A"), "total_bytes", v);
    snprintf(v, sizeof(v), "%d", 99508 * 12 + 10000 * 4);
    expect_field(t, row_of(t, "matraptor_patched", "LLB", "B"), "total_bytes", v);
    snprintf(v, sizeof(v), "%d", 94685 * 16);
    expect_field(t, row_of(t, "matraptor_patched", "LLB", "Z"), "total_bytes", v);
    expect_field(t, row_of(t, "tactile_dyn", "LLB", "B"), "total_bytes", "201076");
    expect_field(t, row_of(t, "tactile_dyn", "LLB", "Z"), "total_bytes", "1398240");
    expect_field(t, row_of(t, "tactile_dyn", "PE", "A"), "total_bytes", "200992");
    expect_field(t, row_of(t, "tactile_dyn", "PE", "Z"), "total_bytes", "1606224");
    ck_assert_uint_eq(tessel_report_csv_line(t, row_of(t, "tactile_dyn", "PE", "A")), 17);
    parsed_free(&p);
    /* OuterSPACE alone has no per-tensor bytes at all. */
    file_buf o = read_whole(dir, "drt/outerspace_patched.txt");
    tessel_simref_input oi = input_of(&o);
    parse_with(TESSEL_SIMREF_DRT, TESSEL_SIMREF_TRAFFIC, &oi, 1, NULL, &p);
    ck_assert_int_eq(p.rc, TESSEL_EUNSUPPORTED);
    ck_assert(strstr(p.message, "only totals"));
    parsed_free(&p);
    free(o.data);
    for (int i = 0; i < 3; i++)
        free(f[i].data);
}

static void check_stonne(const char *dir, const char *stats, const char *counters,
                         const char *design, const char *multiplications)
{
    file_buf f[3] = { read_whole(dir, stats), read_whole(dir, counters),
                      read_whole(dir, "stonne/energy_rand1k.txt") };
    /* Any order: each file's kind comes from its content. */
    tessel_simref_input in[3] = { input_of(&f[2]), input_of(&f[0]), input_of(&f[1]) };
    parsed p;
    parse_ok(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in, 3, &p);
    const tessel_report_csv *t = p.t;
    ck_assert_str_eq(tessel_report_csv_name(t), f[0].path);
    ck_assert_uint_eq(tessel_report_csv_rows(t), 1);
    size_t r = row_of(t, design, NULL, NULL);
    expect_field(t, r, "cycles", "165101");
    expect_field(t, r, "multiplications", multiplications);
    /* N_SRAM_weight_reads 10055 + input 833120 + psum 0 = GLOBALBUFFER READ */
    expect_field(t, r, "sram_reads_elements", "843175");
    expect_field(t, r, "sram_writes_elements", "1000000");
    expect_field(t, r, "energy_stonne_units", "1501455.1457736017");
    expect_field(t, r, "area_stonne_units", "393414.57200000156");
    expect_field(t, r, "dram_bytes", NULL);
    ck_assert(!has_note(&p, "unknown"));
    parsed_free(&p);

    parse_ok(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_TRAFFIC, in, 3, &p);
    t = p.t;
    ck_assert_uint_eq(tessel_report_csv_rows(t), 3);
    /* MK_STA_KN_STR: A (MK) is stationary, its reads are weight reads. */
    r = row_of(t, design, "GlobalBuffer", "A");
    expect_field(t, r, "reads_elements", "10055");
    expect_field(t, r, "writes_elements", "");
    expect_field(t, row_of(t, design, "GlobalBuffer", "B"), "reads_elements", "833120");
    r = row_of(t, design, "GlobalBuffer", "Z");
    expect_field(t, r, "reads_elements", "0");
    expect_field(t, r, "writes_elements", "1000000");
    expect_field(t, r, "total_bytes", NULL);
    parsed_free(&p);

    /* The counters alone: totals only. */
    tessel_simref_input ci = input_of(&f[1]);
    parse_ok(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, &ci, 1, &p);
    r = row_of(p.t, design, NULL, NULL);
    expect_field(p.t, r, "cycles", "165101");
    expect_field(p.t, r, "sram_reads_elements", "843175");
    expect_field(p.t, r, "multiplications", multiplications);
    expect_field(p.t, r, "energy_stonne_units", NULL);
    parsed_free(&p);
    parse_with(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_TRAFFIC, &ci, 1, NULL, &p);
    ck_assert_int_eq(p.rc, TESSEL_EUNSUPPORTED);
    parsed_free(&p);
    for (int i = 0; i < 3; i++)
        free(f[i].data);
}

static void check_sam(const char *dir)
{
    file_buf f[2] = { read_whole(dir, "sam/matmul_kij_rand1k_d1_A_back_N.csv"),
                      read_whole(dir, "sam/rand1k_kij.log") };
    tessel_simref_input in[2] = { input_of(&f[1]), input_of(&f[0]) };
    parsed p;
    parse_ok(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, in, 2, &p);
    ck_assert_uint_eq(tessel_report_csv_rows(p.t), 1);
    /* fiberwrite_X1_1 and fiberwrite_X0_2 finish last, at 205142 (line 5). */
    size_t r = row_of(p.t, "matmul_kij_rand1k_d1_A_back_N", NULL, NULL);
    expect_field(p.t, r, "cycles", "205142");
    expect_field(p.t, r, "output_nnz", NULL);
    ck_assert_uint_eq(tessel_report_csv_line(p.t, r), 5);
    ck_assert_uint_eq(p.notes.count, 0);
    parsed_free(&p);
    parse_with(TESSEL_SIMREF_SAM, TESSEL_SIMREF_TRAFFIC, in, 2, NULL, &p);
    ck_assert_int_eq(p.rc, TESSEL_EUNSUPPORTED);
    ck_assert(strstr(p.message, "cycles only"));
    parsed_free(&p);
    for (int i = 0; i < 2; i++)
        free(f[i].data);
}

START_TEST(repo_drt)
{
    check_drt_summary(REPO_DIR);
    check_drt_traffic(REPO_DIR);
}
END_TEST

START_TEST(repo_stonne)
{
    /* The excerpt keeps 2 of the 128 multipliers (2 x 82000). */
    check_stonne(REPO_DIR, "stonne/rand1k-excerpt.stats.json", "stonne/rand1k-excerpt.counters",
                 "rand1k-excerpt", "164000");
}
END_TEST

START_TEST(repo_sam)
{
    check_sam(REPO_DIR);
    /* The hand-made benchmark JSON (see tests/validate/simref/README.md). */
    file_buf j = read_whole(REPO_DIR, "sam/constructed-benchmark.json");
    tessel_simref_input in = input_of(&j);
    parsed p;
    parse_ok(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, &in, 1, &p);
    size_t r = row_of(p.t, "test_matmul_kij_FINAL", NULL, NULL);
    expect_field(p.t, r, "data", "rand1k_d1_A");
    expect_field(p.t, r, "cycles", "205143");
    expect_field(p.t, r, "output_nnz", "94685");
    ck_assert_uint_eq(p.notes.count, 0);
    parsed_free(&p);
    free(j.data);
}
END_TEST

START_TEST(shared_drt)
{
    check_drt_summary(SHARED_DIR);
    check_drt_traffic(SHARED_DIR);
}
END_TEST

START_TEST(shared_stonne)
{
    /* 128 multipliers; their N_multiplications sum to 10,055,000, as do the
     * counters' MULTIPLIER lines. */
    check_stonne(SHARED_DIR, "stonne/rand1k.stats.json", "stonne/rand1k.counters", "rand1k",
                 "10055000");
}
END_TEST

START_TEST(shared_sam)
{
    check_sam(SHARED_DIR);
}
END_TEST

START_TEST(load_files)
{
    const char *paths[2] = { REPO_DIR "/drt/extensor_static.txt", REPO_DIR "/drt/nope.txt" };
    tessel_report_csv *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_simref_load(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, paths, 1, NULL,
                                        &t, NULL, &d),
                     0);
    ck_assert_str_eq(tessel_report_csv_name(t), paths[0]);
    tessel_report_csv_free(&t);
    ck_assert_int_eq(tessel_simref_load(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, paths, 2, NULL,
                                        &t, NULL, &d),
                     TESSEL_EIO);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(d.file, paths[1]);
    /* csv: exactly one file, read as is */
    const char *csv[1] = { "tests/validate/sim-summary.csv" };
    ck_assert_int_eq(tessel_simref_load(TESSEL_SIMREF_CSV, TESSEL_SIMREF_TRAFFIC, csv, 1, NULL, &t,
                                        NULL, &d),
                     0);
    ck_assert_int_eq(tessel_report_csv_find(t, "sim_cycles"), 3);
    tessel_report_csv_free(&t);
    tessel_simref_format f;
    ck_assert_int_eq(tessel_simref_format_parse("stonne", &f), 0);
    ck_assert_int_eq(f, TESSEL_SIMREF_STONNE);
    ck_assert_str_eq(tessel_simref_format_name(TESSEL_SIMREF_SAM), "sam");
    ck_assert_int_eq(tessel_simref_format_parse("DRT", &f), TESSEL_EINVAL);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Malformed inputs with exact messages. */

START_TEST(drt_errors)
{
    const char top[] = "Top DOT NoC:\n total_top: 0.1 GBs, a_top: 1, b_top: 2, o_r_top: 0, "
                       "o_w_top: 3\n";
    tessel_simref_input in = text_input("t.txt", top);
    parse_fails(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "t.txt:3:1: error: missing field 'cycles' (DRT prints it as 'runtime: S, cycles: "
                "N, ...')");
    in = text_input("t.txt", "runtime: 1.0, cycles: 12.5, busy_cycles: 0\n");
    parse_fails(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "t.txt:1:23: error: field 'cycles': expected a whole number >= 0, found 12.5");
    in = text_input("t.txt", "cycles: 18446744073709551616\n");
    parse_fails(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_ERANGE,
                "t.txt:1:9: error: field 'cycles': 18446744073709551616 is larger than 2^64 - 1");
    in = text_input("t.txt", "cycles: 5\nx\ncycles: 6\n");
    parse_fails(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "t.txt:3:9: error: field 'cycles' is 6 here but 5 on line 1");
    in = text_input("t.txt", "Top bandwidth logger: 12 GB, 0.1 GBs\n");
    parse_fails(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "t.txt:1:26: error: field 'Top bandwidth logger': expected the unit 'bytes' "
                "after the number, found 'GB'");
    const char nul[] = "runtime: 1, cyc\0les: 5\n";
    in = (tessel_simref_input){ "t.txt", nul, sizeof(nul) - 1 };
    parse_fails(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "t.txt:1:16: error: NUL byte in the text");
    in = text_input("t.txt", "cycles: 7\n a_top: 1, b_top: 2, o_r_top: 18446744073709551615, "
                             "o_w_top: 3\n");
    parse_fails(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_ERANGE,
                "t.txt:2:62: error: 'o_w_top' plus the preceding count exceeds 2^64 - 1");
    /* A group printed together must be whole. */
    in = text_input("t.txt", "cycles: 7\n a_top: 1, b_top: 2, o_r_top: 0, o_w_top: 3\n"
                             "A bytes: 1, B bytes: 2\n");
    parse_fails(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "t.txt:4:1: error: missing field 'O bytes' (MatRaptor prints 'A bytes', 'B bytes' "
                "and 'O bytes' together)");
}
END_TEST

START_TEST(drt_notes_and_crlf)
{
    /* CRLF, blanks, an unknown field (noted once, at its name), message
     * text with numbers, harness lines. */
    const char text[] = "Starting run 3 of 4\r\n"
                        "frob_count: 7, runtime: 0.1, cycles: 100\r\n"
                        "  frob_count: 8\r\n"
                        "Top DOT NoC:\r\n"
                        " total_top: 0.001 GBs, a_top: 10, b_top: 20, o_r_top: 5, o_w_top: 6\r\n"
                        "WALL 1.0 s MAXRSS 10 KB\r\nRC=0";
    tessel_simref_input in = text_input("n.txt", text);
    parsed p;
    parse_ok(TESSEL_SIMREF_DRT, TESSEL_SIMREF_TRAFFIC, &in, 1, &p);
    ck_assert_uint_eq(p.notes.count, 1);
    ck_assert_str_eq(p.notes.items[0].message, "unknown DRT field 'frob_count' (ignored)");
    ck_assert_uint_eq(p.notes.items[0].line, 2);
    ck_assert_uint_eq(p.notes.items[0].column, 1);
    ck_assert_str_eq(p.notes.items[0].file, "n.txt");
    expect_field(p.t, row_of(p.t, "n", "LLB", "Z"), "total_bytes", "11");
    ck_assert_uint_eq(tessel_report_csv_line(p.t, row_of(p.t, "n", "LLB", "Z")), 5);
    parsed_free(&p);
    /* Notes are optional. */
    tessel_report_csv *t = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_simref_parse(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, NULL,
                                         &t, NULL, &d),
                     0);
    tessel_report_csv_free(&t);
}
END_TEST

START_TEST(notes_are_capped)
{
    /* 100 unknown names: TESSEL_SIMREF_MAX_NOTES notes, then one count. */
    size_t cap = 100 * 24 + 64;
    char *text = malloc(cap);
    size_t len = 0;
    for (int i = 0; i < 100; i++)
        len += (size_t)snprintf(text + len, cap - len, "field_%d: %d\n", i, i);
    len += (size_t)snprintf(text + len, cap - len, "a_top: 1, b_top: 1, o_r_top: 1, o_w_top: 1\n"
                                                   "cycles: 3\n");
    tessel_simref_input in = { "many.txt", text, len };
    parsed p;
    parse_ok(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, &in, 1, &p);
    ck_assert_uint_eq(p.notes.count, TESSEL_SIMREF_MAX_NOTES + 1);
    ck_assert_str_eq(p.notes.items[TESSEL_SIMREF_MAX_NOTES].message,
                     "60 more unknown names not listed");
    parsed_free(&p);
    free(text);
}
END_TEST

/* A minimal valid STONNE stats JSON around `global` (GlobalStats' body). */
static char *stonne_json(const char *global, const char *extra)
{
    char *s = malloc(4096);
    snprintf(s, 4096,
             "{\n"
             "    \"GlobalStats\" : {%s},\n"
             "    \"MSNetworkStats\" : { \"MSwitchStats\" : [ { \"N_multiplications\" : 5 } ] },\n"
             "    \"SDMemoryStats\" : { \"N_SRAM_weight_reads\" : 1, \"N_SRAM_input_reads\" : 2,\n"
             "        \"N_SRAM_psum_reads\" : 3, \"N_SRAM_psum_writes\" : 4,\n"
             "        \"Dataflow\" : \"MK_STR_KN_STA\" }%s\n"
             "}\n",
             global, extra);
    return s;
}

static void json_fails(const char *global, const char *extra, int code, const char *expected)
{
    char *s = stonne_json(global, extra);
    tessel_simref_input in = text_input("s.json", s);
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, &in, 1, code, expected);
    free(s);
}

START_TEST(stonne_json_errors)
{
    char *s = stonne_json(" \"N_cycles\" : 9 ", ",\n    \"NewStats\" : { \"x\" : [1, {}] }");
    tessel_simref_input in = text_input("s.json", s);
    parsed p;
    parse_ok(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_TRAFFIC, &in, 1, &p);
    /* MK_STR_KN_STA: B is stationary, so A's reads are the input reads. */
    expect_field(p.t, row_of(p.t, "s", "GlobalBuffer", "A"), "reads_elements", "2");
    expect_field(p.t, row_of(p.t, "s", "GlobalBuffer", "B"), "reads_elements", "1");
    ck_assert_uint_eq(p.notes.count, 1);
    ck_assert_str_eq(p.notes.items[0].message, "unknown STONNE field 'NewStats' (ignored)");
    ck_assert_uint_eq(p.notes.items[0].line, 7);
    ck_assert_uint_eq(p.notes.items[0].column, 5);
    parsed_free(&p);
    free(s);

    json_fails(" \"N_cycles\" : \"9\" ", "", TESSEL_EPARSE,
               "s.json:2:36: error: field 'GlobalStats.N_cycles': expected a whole number, found "
               "a string");
    json_fails(" \"N_cycles\" : 18446744073709551616 ", "", TESSEL_ERANGE,
               "s.json:2:36: error: field 'GlobalStats.N_cycles': 18446744073709551616 is larger "
               "than 2^64 - 1");
    json_fails(" \"N_cycles\" : 1e400 ", "", TESSEL_EPARSE,
               "s.json:2:36: error: field 'GlobalStats.N_cycles': expected a whole number >= 0, "
               "found 1e400");
    json_fails(" \"N_cycles\" : -1 ", "", TESSEL_EPARSE,
               "s.json:2:36: error: field 'GlobalStats.N_cycles': expected a whole number >= 0, "
               "found -1");
    json_fails(" \"N_cycle\" : 1 ", "", TESSEL_EPARSE,
               "s.json:2:21: error: missing field 'GlobalStats.N_cycles' (this object has no "
               "'N_cycles')");
    json_fails(" \"N_cycles\" : 1, \"N_cycles\" : 2 ", "", TESSEL_EPARSE,
               "s.json:2:39: error: field 'GlobalStats.N_cycles' appears twice in one object "
               "(first at line 2)");
    /* The JSON reader itself. */
    json_fails(" \"N_cycles\" : 01 ", "", TESSEL_EPARSE,
               "s.json:2:36: error: a number cannot start with 0 followed by digits");
    json_fails(" \"N_cycles\" : 1. ", "", TESSEL_EPARSE,
               "s.json:2:38: error: a decimal point needs digits after it");
    json_fails(" \"N_cycles\" : 1, ", "", TESSEL_EPARSE,
               "s.json:2:39: error: expected a string key, found '}'");
    json_fails(" \"N_cycles\" : tru ", "", TESSEL_EPARSE,
               "s.json:2:36: error: expected a value, found 't'");
    json_fails(" \"N_\\x\" : 1 ", "", TESSEL_EPARSE,
               "s.json:2:26: error: invalid escape '\\x' (JSON allows \\\" \\\\ \\/ \\b \\f "
               "\\n \\r \\t \\uXXXX)");
    json_fails(" \"N_\\uD800\" : 1 ", "", TESSEL_EPARSE,
               "s.json:2:26: error: \\uD800 is a high surrogate without a low one");
    json_fails(" \"N_\\u0000\" : 1 ", "", TESSEL_EPARSE,
               "s.json:2:26: error: \\u0000 is not supported (a NUL inside a string)");
    json_fails(" \"N_\xC0\xAF\" : 1 ", "", TESSEL_EPARSE,
               "s.json:2:26: error: invalid UTF-8 byte 0xC0 inside a string");
    json_fails(" \"N_\tx\" : 1 ", "", TESSEL_EPARSE,
               "s.json:2:26: error: control character 0x09 inside a string (write it as an "
               "escape)");
    json_fails(" \"N_cycles\" : 1 ", "\n} x", TESSEL_EPARSE,
               "s.json:7:3: error: unexpected text after the JSON value");
    /* Escapes that decode to known keys are the same keys. */
    s = stonne_json(" \"N_c\\u0079cles\" : 9 ", "");
    in = text_input("s.json", s);
    parse_ok(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, &in, 1, &p);
    expect_field(p.t, 0, "cycles", "9");
    parsed_free(&p);
    free(s);
}
END_TEST

START_TEST(json_depth_and_nul)
{
    /* 100,000 nested arrays stop at the depth limit, with no recursion. */
    size_t depth = 100000;
    char *s = malloc(depth + 16);
    memcpy(s, "{\"a\":", 5);
    memset(s + 5, '[', depth);
    s[5 + depth] = '\0';
    tessel_simref_input in = { "deep.json", s, depth + 5 };
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "deep.json:1:69: error: nesting deeper than 64 levels");
    free(s);
    const char nul[] = "{\n  \"GlobalStats\" :\0 {}\n}";
    in = (tessel_simref_input){ "nul.json", nul, sizeof(nul) - 1 };
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "nul.json:2:18: error: NUL byte where a value was expected");
    in = text_input("cut.json", "{\n  \"GlobalStats\" : {\"N_cy");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "cut.json:2:20: error: unterminated string (it starts here)");
    in = text_input("cut.json", "{\n  \"GlobalStats\" : {\"N_cycles\" : 3");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "cut.json:2:34: error: unexpected end of data, expected ',' or '}'");
}
END_TEST

START_TEST(stonne_file_errors)
{
    char *s = stonne_json(" \"N_cycles\" : 9 ", "");
    tessel_simref_input in[3] = { text_input("s.json", s),
                                  text_input("s.counters", "CYCLES=9\n[GlobalBuffer]\n"
                                                           "GLOBALBUFFER READ=6 WRITE=4\n"
                                                           "[MSNetwork]\n"
                                                           "MULTIPLIER MULTIPLICATION=5\n"),
                                  text_input("s2.json", s) };
    parsed p;
    parse_ok(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in, 2, &p);
    expect_field(p.t, 0, "sram_reads_elements", "6");
    parsed_free(&p);
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in, 3, TESSEL_EPARSE,
                "s2.json:1:1: error: a second STONNE stats JSON (the first is s.json); give the "
                "files of one run");
    in[1] = text_input("s.counters", "CYCLES=9\n[GlobalBuffer]\nGLOBALBUFFER READ=7 WRITE=4\n");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in, 2, TESSEL_EPARSE,
                "s.counters:3:19: error: GLOBALBUFFER READ = 7 here but N_SRAM_weight_reads + "
                "N_SRAM_input_reads + N_SRAM_psum_reads = 6 in s.json: the files are not from "
                "one run");
    in[1] = text_input("s.counters", "CYCLES=8\n[GlobalBuffer]\nGLOBALBUFFER READ=6 WRITE=4\n");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in, 2, TESSEL_EPARSE,
                "s.counters:1:8: error: CYCLES = 8 here but GlobalStats.N_cycles = 9 in s.json: "
                "the files are not from one run");
    in[1] = text_input("s.counters", "CYCLES=9\nGLOBALBUFFER READ=6 WRITE=4\n");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in + 1, 1, TESSEL_EPARSE,
                "s.counters:2:1: error: a counter line before the first '[Section]' line");
    in[1] = text_input("s.counters", "CYCLES=9\n[GlobalBuffer]\nGLOBALBUFFER READ=6 WRITE 4\n");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in + 1, 1, TESSEL_EPARSE,
                "s.counters:3:21: error: expected OPERATION=COUNT, found 'WRITE'");
    in[1] = text_input("s.counters", "CYCLES=9\n[GlobalBuffer]\nGLOBALBUFFER READ=6x WRITE=4\n");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in + 1, 1, TESSEL_EPARSE,
                "s.counters:3:19: error: counter READ: expected a whole number >= 0, found '6x'");
    in[1] = text_input("s.counters", "[GlobalBuffer]\nGLOBALBUFFER READ=6 WRITE=4\n");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in + 1, 1, TESSEL_EPARSE,
                "s.counters:3:1: error: missing field 'CYCLES' (the first line, 'CYCLES=N')");
    in[1] = text_input("s.counters", "CYCLES=9\n[Other]\nWIDGET SPIN=3\nGLOBALBUFFER READ=6 "
                                     "WRITE=4 FLUSH=1\n");
    parse_ok(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in + 1, 1, &p);
    ck_assert_uint_eq(p.notes.count, 3);
    ck_assert_str_eq(p.notes.items[0].message, "unknown STONNE section 'Other' (ignored)");
    ck_assert_str_eq(p.notes.items[1].message, "unknown STONNE component 'WIDGET' (ignored)");
    ck_assert_str_eq(p.notes.items[2].message,
                     "unknown STONNE counter 'GLOBALBUFFER FLUSH' (ignored)");
    ck_assert_uint_eq(p.notes.items[2].column, 29);
    parsed_free(&p);
    /* The energy report without its counts. */
    in[1] = text_input("e.txt", "DYNAMIC ENERGY TABLE USED\n----\nFIFO AREA=0 PUSH=0\n----\n"
                                "COMPONENT BREAKDOWN\n----\nGlobalBuffer: STATIC=1 AREA=2 "
                                "DYNAMIC=3\nTotal Area: 2\n");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in, 2, TESSEL_EPARSE,
                "e.txt:9:1: error: missing field 'Total Energy' (the last line of the report)");
    in[1] = text_input("e.txt", "DYNAMIC ENERGY TABLE USED\n----\nFIFO AREA=zero\n");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in, 2, TESSEL_EPARSE,
                "e.txt:3:6: error: expected NAME=NUMBER, found 'AREA=zero'");
    parse_fails(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, in + 1, 1, TESSEL_EPARSE,
                "e.txt:1:1: error: STONNE's stats JSON or its .counters file is needed (this is "
                "an energy report)");
    free(s);
}
END_TEST

START_TEST(sam_errors)
{
    tessel_simref_input in = text_input("b.csv", "block,start,finish,duration,valid_ops\n"
                                                 "mul_5,10,100,91,-\n");
    parse_fails(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "b.csv:2:14: error: block 'mul_5': duration 91 is not finish - start (100 - 10)");
    in = text_input("b.csv", "block,start,finish,duration\nmul_5,10,1e3,990\n");
    parse_fails(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "b.csv:2:10: error: column 'finish': expected a whole number >= 0 below 2^64, "
                "found '1e3'");
    in = text_input("b.csv", "block,start,end,duration\nmul_5,10,100,90\n");
    parse_fails(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "b.csv:1:1: error: missing column 'finish'");
    in = text_input("b.csv", "block,start,finish,duration\n");
    parse_fails(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "b.csv:2:1: error: missing field 'block rows' (one row per block of the run)");
    in = text_input("b.csv", "block,start,finish,duration,\"a,b\"\nx,1,2,1,z\n");
    parsed p;
    parse_ok(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, &in, 1, &p);
    ck_assert_str_eq(p.notes.items[0].message, "unknown SAM column 'a,b' (ignored)");
    ck_assert_uint_eq(p.notes.items[0].column, 29);
    parsed_free(&p);
    tessel_simref_input two[2] = {
        text_input("b.csv", "block,start,finish,duration\nx,1,2,1\n"),
        text_input("run.log", "== 1 failed, 2 passed in 3.0s ==\n"),
    };
    parse_fails(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, two, 2, TESSEL_EPARSE,
                "run.log:1:1: error: SAM's run failed: '== 1 failed, 2 passed in 3.0s =='");
    two[1] = text_input("run.log", "collected 1 item\n");
    parse_fails(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, two, 2, TESSEL_EPARSE,
                "run.log:2:1: error: missing field 'pytest summary line' ('== N passed in S s "
                "==': the log is cut short)");
    parse_fails(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, two + 1, 1, TESSEL_EPARSE,
                "run.log:1:1: error: SAM's per-block CSV or its benchmark JSON is needed (the log "
                "holds no cycle counts)");
    in = text_input("b.json", "{\"benchmarks\": [{\"name\": \"t\", \"extra_info\": "
                              "{\"dataset\": \"d\", \"cyclez\": 4, \"x/y\": 1}}]}");
    parse_fails(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, &in, 1, TESSEL_EPARSE,
                "b.json:1:45: error: missing field 'benchmarks[].extra_info.cycles' (this object "
                "has no 'cycles')");
    in = text_input("b.json", "{\"benchmarks\": [{\"name\": \"t\", \"extra_info\": "
                              "{\"cycles\": 4, \"cyclez\": 4, \"x/y\": 1}}]}");
    parse_ok(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, &in, 1, &p);
    ck_assert_uint_eq(p.notes.count, 1);
    ck_assert_str_eq(p.notes.items[0].message, "unknown SAM field 'extra_info.cyclez' (ignored)");
    expect_field(p.t, 0, "design", "t");
    expect_field(p.t, 0, "cycles", "4");
    parsed_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Every cut and every overwritten byte: a table or a clean error. */

/* A result that is a table, or an error with its code, file, position
 * and message; nothing left allocated. */
static void check_clean(const parsed *p, const test_alloc *ta, const char *what, size_t at)
{
    if (p->rc == 0) {
        ck_assert_ptr_nonnull(p->t);
        ck_assert_uint_ge(tessel_report_csv_columns(p->t), 2);
    } else {
        ck_assert_ptr_null(p->t);
        ck_assert_msg(p->rc == TESSEL_EPARSE || p->rc == TESSEL_ERANGE ||
                          p->rc == TESSEL_EUNSUPPORTED,
                      "%s at %zu: code %d: %s", what, at, p->rc, p->message);
        ck_assert_int_eq(p->d.code, p->rc);
        ck_assert_msg(p->d.file[0] && p->d.message[0], "%s at %zu: no file or message", what,
                      at);
        if (p->rc != TESSEL_EUNSUPPORTED)
            ck_assert_msg(p->d.line >= 1 && p->d.column >= 1, "%s at %zu: no position: %s", what,
                          at, p->message);
    }
    (void)ta;
}

typedef struct mutation_case {
    tessel_simref_format format;
    tessel_simref_grain grain;
    const char *dir;
    const char *files[3];
    size_t nfiles;
    size_t target; /* the file cut or overwritten */
} mutation_case;

/* Parses the case with file `target` replaced by bytes[0..size), in a
 * buffer of exactly that size (so a read past it is an ASan error). */
static void parse_mutated(const mutation_case *mc, const file_buf *f, const char *bytes,
                          size_t size, const char *what, size_t at)
{
    char *copy = malloc(size ? size : 1);
    if (size)
        memcpy(copy, bytes, size);
    tessel_simref_input in[3];
    for (size_t i = 0; i < mc->nfiles; i++)
        in[i] = input_of(&f[i]);
    in[mc->target].data = copy;
    in[mc->target].size = size;
    test_alloc ta;
    test_alloc_init(&ta, 0);
    parsed p;
    parse_with(mc->format, mc->grain, in, mc->nfiles, &ta.allocator, &p);
    check_clean(&p, &ta, what, at);
    parsed_free(&p);
    ck_assert_msg(ta.live == 0, "%s at %zu: %ld blocks leaked", what, at, ta.live);
    free(copy);
}

static void mutate_every_byte(const mutation_case *mc)
{
    static const char replacements[] = { '\0', (char)0xFF, '"', '{', '[', ',', ':', '9',
                                         '-',  '\n',       ' ', 'x', '=', '.' };
    file_buf f[3];
    for (size_t i = 0; i < mc->nfiles; i++)
        f[i] = read_whole(mc->dir, mc->files[i]);
    const file_buf *t = &f[mc->target];
    for (size_t cut = 0; cut <= t->size; cut++)
        parse_mutated(mc, f, t->data, cut, "cut", cut);
    char *bytes = malloc(t->size ? t->size : 1);
    memcpy(bytes, t->data, t->size);
    for (size_t at = 0; at < t->size; at++) {
        char keep = bytes[at];
        for (size_t r = 0; r < sizeof(replacements); r++) {
            bytes[at] = replacements[r];
            parse_mutated(mc, f, bytes, t->size, "overwrite", at);
        }
        bytes[at] = keep;
    }
    free(bytes);
    for (size_t i = 0; i < mc->nfiles; i++)
        free(f[i].data);
}

START_TEST(mutate_drt)
{
    static const char *const files[] = { "drt/extensor_static.txt", "drt/matraptor_patched.txt",
                                         "drt/outerspace_patched.txt", "drt/tactile_dyn.txt" };
    for (size_t i = 0; i < 4; i++) {
        mutation_case mc = { TESSEL_SIMREF_DRT, i % 2 ? TESSEL_SIMREF_TRAFFIC
                                                      : TESSEL_SIMREF_SUMMARY,
                             REPO_DIR, { files[i] }, 1, 0 };
        mutate_every_byte(&mc);
    }
}
END_TEST

START_TEST(mutate_stonne)
{
    for (size_t target = 0; target < 3; target++) {
        mutation_case mc = { TESSEL_SIMREF_STONNE, target == 1 ? TESSEL_SIMREF_SUMMARY
                                                               : TESSEL_SIMREF_TRAFFIC,
                             REPO_DIR,
                             { "stonne/rand1k-excerpt.stats.json",
                               "stonne/rand1k-excerpt.counters", "stonne/energy_rand1k.txt" },
                             3, target };
        mutate_every_byte(&mc);
    }
}
END_TEST

START_TEST(mutate_sam)
{
    mutation_case csv = { TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, REPO_DIR,
                          { "sam/matmul_kij_rand1k_d1_A_back_N.csv", "sam/rand1k_kij.log" }, 2,
                          0 };
    mutate_every_byte(&csv);
    csv.target = 1;
    mutate_every_byte(&csv);
    mutation_case json = { TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, REPO_DIR,
                           { "sam/constructed-benchmark.json" }, 1, 0 };
    mutate_every_byte(&json);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Out of memory at every allocation. */

static void oom_case(tessel_simref_format format, tessel_simref_grain grain,
                     const char *const *files, size_t n)
{
    file_buf f[3];
    tessel_simref_input in[3];
    for (size_t i = 0; i < n; i++) {
        f[i] = read_whole(REPO_DIR, files[i]);
        in[i] = input_of(&f[i]);
    }
    int succeeded = 0;
    for (long fail = 1; fail < 10000 && !succeeded; fail++) {
        test_alloc ta;
        test_alloc_init(&ta, fail);
        parsed p;
        parse_with(format, grain, in, n, &ta.allocator, &p);
        if (p.rc) {
            ck_assert_msg(p.rc == TESSEL_ENOMEM, "fail_at %ld: %d %s", fail, p.rc, p.message);
            ck_assert_ptr_null(p.t);
        } else {
            succeeded = 1;
            ck_assert_uint_ge(tessel_report_csv_rows(p.t), 1);
        }
        parsed_free(&p);
        ck_assert_msg(ta.live == 0, "fail_at %ld: %ld blocks leaked", fail, ta.live);
    }
    ck_assert(succeeded);
    for (size_t i = 0; i < n; i++)
        free(f[i].data);
}

START_TEST(oom_every_allocation)
{
    const char *drt[] = { "drt/extensor_static.txt", "drt/matraptor_patched.txt",
                          "drt/tactile_dyn.txt" };
    oom_case(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, drt, 3);
    oom_case(TESSEL_SIMREF_DRT, TESSEL_SIMREF_TRAFFIC, drt, 3);
    const char *stonne[] = { "stonne/rand1k-excerpt.stats.json", "stonne/rand1k-excerpt.counters",
                             "stonne/energy_rand1k.txt" };
    oom_case(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_SUMMARY, stonne, 3);
    oom_case(TESSEL_SIMREF_STONNE, TESSEL_SIMREF_TRAFFIC, stonne, 3);
    const char *sam[] = { "sam/matmul_kij_rand1k_d1_A_back_N.csv", "sam/rand1k_kij.log",
                          "sam/constructed-benchmark.json" };
    oom_case(TESSEL_SIMREF_SAM, TESSEL_SIMREF_SUMMARY, sam, 3);
    /* Unknown names make notes, which allocate too. */
    const char *notes[] = { "drt/extensor_static.txt" };
    oom_case(TESSEL_SIMREF_DRT, TESSEL_SIMREF_SUMMARY, notes, 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Tables in memory, --set-key, derived columns. */

START_TEST(tables_in_memory)
{
    const char *cells[] = { "design", "v", "a", "1", NULL, "2" };
    const uint64_t lines[] = { 7, 9 };
    tessel_report_csv *t = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_report_csv_from_cells("m", 2, 2, cells, lines, NULL, &t, &d), 0);
    ck_assert_str_eq(tessel_report_csv_cell(t, 1, 0), "");
    ck_assert_uint_eq(tessel_report_csv_line(t, 1), 9);
    ck_assert_int_eq(tessel_report_csv_set_key(t, "data", NULL, "G51", &d), 0);
    ck_assert_str_eq(tessel_report_csv_column_name(t, 2), "data");
    ck_assert_str_eq(tessel_report_csv_cell(t, 1, 2), "G51");
    ck_assert_int_eq(tessel_report_csv_set_key(t, "design", "a", "extensor", &d), 0);
    ck_assert_str_eq(tessel_report_csv_cell(t, 0, 0), "extensor");
    ck_assert_str_eq(tessel_report_csv_cell(t, 1, 0), "");
    ck_assert_int_eq(tessel_report_csv_set_key(t, "design", "", "gamma", &d), 0);
    ck_assert_str_eq(tessel_report_csv_cell(t, 1, 0), "gamma");
    ck_assert_int_eq(tessel_report_csv_set_key(t, "design", "nope", "x", &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.message, "--set-key design:nope: no row has design 'nope' (its values: "
                                "'extensor', 'gamma')");
    ck_assert_int_eq(tessel_report_csv_set_key(t, "level", "a", "x", &d), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_report_csv_add_column(t, "v", NULL, &d), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_report_csv_set_cell(t, 0, 1, "11", &d), 0);
    ck_assert_str_eq(tessel_report_csv_cell(t, 0, 1), "11");
    ck_assert_int_eq(tessel_report_csv_set_cell(t, 2, 0, "x", &d), TESSEL_EINVAL);
    tessel_report_csv_free(&t);
    const char *dup[] = { "a", "a" };
    ck_assert_int_eq(tessel_report_csv_from_cells("m", 2, 0, dup, NULL, NULL, &t, &d),
                     TESSEL_EINVAL);
    ck_assert_ptr_null(t);

    /* total_bytes for a tessel traffic table, when the reference uses it. */
    const char pred_text[] = "design,data_bytes,metadata_bytes\nx,10,5\ny,1.5,2\nz,,3\n";
    tessel_report_csv *pred = NULL, *ref = NULL;
    ck_assert_int_eq(tessel_report_csv_parse("p", pred_text, strlen(pred_text), NULL, &pred, &d),
                     0);
    const char *rc_cells[] = { "design", "total_bytes" };
    ck_assert_int_eq(tessel_report_csv_from_cells("r", 2, 0, rc_cells, NULL, NULL, &ref, &d), 0);
    ck_assert_int_eq(tessel_simref_derive_columns(pred, ref, &d), 0);
    ck_assert_int_eq(tessel_report_csv_find(pred, "total_bytes"), 3);
    ck_assert_str_eq(tessel_report_csv_cell(pred, 0, 3), "15");
    ck_assert_str_eq(tessel_report_csv_cell(pred, 1, 3), "3.5");
    ck_assert_str_eq(tessel_report_csv_cell(pred, 2, 3), "");
    ck_assert_int_eq(tessel_simref_derive_columns(pred, ref, &d), 0); /* once only */
    ck_assert_uint_eq(tessel_report_csv_columns(pred), 4);
    tessel_report_csv_free(&pred);
    tessel_report_csv_free(&ref);
}
END_TEST

START_TEST(table_edits_oom)
{
    int succeeded = 0;
    for (long fail = 1; fail < 200 && !succeeded; fail++) {
        test_alloc ta;
        test_alloc_init(&ta, fail);
        const char *cells[] = { "design", "data_bytes", "metadata_bytes", "a", "1", "2" };
        const char *rcells[] = { "design", "total_bytes" };
        tessel_report_csv *t = NULL, *r = NULL;
        tessel_diag d;
        int rc = tessel_report_csv_from_cells("m", 3, 1, cells, NULL, &ta.allocator, &t, &d);
        if (!rc)
            rc = tessel_report_csv_from_cells("r", 2, 0, rcells, NULL, &ta.allocator, &r, &d);
        if (!rc)
            rc = tessel_report_csv_set_key(t, "data", NULL, "G51", &d);
        if (!rc)
            rc = tessel_report_csv_set_key(t, "design", "a", "extensor", &d);
        if (!rc)
            rc = tessel_simref_derive_columns(t, r, &d);
        if (rc) {
            ck_assert_msg(rc == TESSEL_ENOMEM, "fail_at %ld: %d %s", fail, rc, d.message);
        } else {
            succeeded = 1;
            ck_assert_str_eq(tessel_report_csv_cell(t, 0, 4), "3");
        }
        tessel_report_csv_free(&t);
        tessel_report_csv_free(&r);
        ck_assert_msg(ta.live == 0, "fail_at %ld: %ld blocks leaked", fail, ta.live);
    }
    ck_assert(succeeded);
}
END_TEST

static Suite *repo_suite(void)
{
    Suite *s = suite_create("simref");
    TCase *tc = tcase_create("files");
    tcase_add_test(tc, repo_drt);
    tcase_add_test(tc, repo_stonne);
    tcase_add_test(tc, repo_sam);
    tcase_add_test(tc, load_files);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_test(tc, drt_errors);
    tcase_add_test(tc, drt_notes_and_crlf);
    tcase_add_test(tc, notes_are_capped);
    tcase_add_test(tc, stonne_json_errors);
    tcase_add_test(tc, json_depth_and_nul);
    tcase_add_test(tc, stonne_file_errors);
    tcase_add_test(tc, sam_errors);
    tcase_add_test(tc, tables_in_memory);
    suite_add_tcase(s, tc);
    tc = tcase_create("robustness");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, mutate_drt);
    tcase_add_test(tc, mutate_stonne);
    tcase_add_test(tc, mutate_sam);
    tcase_add_test(tc, oom_every_allocation);
    tcase_add_test(tc, table_edits_oom);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *shared_suite(void)
{
    Suite *s = suite_create("simref-shared");
    TCase *tc = tcase_create("shared");
    tcase_add_test(tc, shared_drt);
    tcase_add_test(tc, shared_stonne);
    tcase_add_test(tc, shared_sam);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int shared = argc > 1 && strcmp(argv[1], "shared") == 0;
    if (shared) {
        struct stat st;
        if (stat(SHARED_DIR, &st) != 0 || !S_ISDIR(st.st_mode)) {
            printf("SKIP: %s is missing\n", SHARED_DIR);
            return 77;
        }
    }
    SRunner *sr = srunner_create(shared ? shared_suite() : repo_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

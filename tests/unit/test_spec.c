/* Unit tests of src/spec: the YAML tree, sizes, the spec loader (includes,
 * --set, validation) and its diagnostics. Runs from the project root.
 *
 * tests/spec/bad/NAME.yaml are bad specs; NAME.err holds the exact
 * diagnostics expected, one per line, and NAME.set (optional) the --set
 * arguments, one per line. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/spec.h"
#include "test_alloc.h"

#define GOOD "tests/spec/good/"
#define BAD_DIR "tests/spec/bad"

/* ------------------------------------------------------------------ */
/* Helpers */

static tessel_yaml_doc *parse_ok(const char *text)
{
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_yaml_parse("t.yaml", text, strlen(text), NULL, &doc, &d);
    ck_assert_msg(rc == 0, "parse failed: %s", d.message);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

/* The formatted diagnostic of a failing parse. */
static void parse_error(const char *text, char *buf, size_t n, int *code)
{
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    *code = tessel_yaml_parse("t.yaml", text, strlen(text), NULL, &doc, &d);
    ck_assert_int_ne(*code, 0);
    ck_assert_ptr_null(doc);
    tessel_diag_format(&d, buf, n);
}

/* All diagnostics, formatted, one per line. */
static void format_all(const tessel_diag_list *l, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < l->count && len < n; i++) {
        len += (size_t)tessel_diag_format(&l->items[i], buf + len, n - len);
        if (len < n - 1) {
            buf[len++] = '\n';
            buf[len] = '\0';
        }
    }
}

static tessel_spec *load_ok(const char *path, const char *const *sets, size_t nsets)
{
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    tessel_spec *s = NULL;
    int rc = tessel_spec_load(path, sets, nsets, NULL, &s, &l);
    char buf[8192];
    format_all(&l, buf, sizeof(buf));
    ck_assert_msg(rc == 0, "%s failed:\n%s", path, buf);
    ck_assert_uint_eq(l.count, 0);
    tessel_diag_list_free(&l);
    return s;
}

static tessel_spec *parse_spec(const char *text, const char *const *sets, size_t nsets,
                               tessel_diag_list *l, int *rc)
{
    tessel_spec *s = NULL;
    *rc = tessel_spec_parse("mem.yaml", text, strlen(text), sets, nsets, NULL, &s, l);
    return s;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 16);
    ck_assert_ptr_nonnull(buf);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* ------------------------------------------------------------------ */
/* YAML tree */

START_TEST(yaml_tree_positions_and_kinds)
{
    tessel_yaml_doc *doc = parse_ok("a: 1\n"
                                    "b: [x, 'y']\n"
                                    "c: &anchor {p: q}\n"
                                    "d: *anchor\n"
                                    "  # comment\n"
                                    "e:\n"
                                    "f: \"12\"\n");
    const tessel_yaml_node *r = tessel_yaml_root(doc);
    ck_assert_int_eq(r->kind, TESSEL_YAML_MAPPING);
    ck_assert_uint_eq(r->count, 6);
    ck_assert_str_eq(r->file, "t.yaml");
    const tessel_yaml_node *b = tessel_yaml_get(r, "b");
    ck_assert_int_eq(b->kind, TESSEL_YAML_SEQUENCE);
    ck_assert_uint_eq(b->count, 2);
    ck_assert_uint_eq(b->line, 2);
    ck_assert_uint_eq(b->column, 4);
    ck_assert_uint_eq(b->items[1]->column, 8);
    ck_assert_int_eq(b->items[0]->quoted, 0);
    ck_assert_int_eq(b->items[1]->quoted, 1);
    /* Aliases share the anchored node. */
    ck_assert_ptr_eq(tessel_yaml_get(r, "c"), tessel_yaml_get(r, "d"));
    ck_assert_str_eq(tessel_yaml_get(tessel_yaml_get(r, "d"), "p")->value, "q");
    ck_assert(tessel_yaml_is_null(tessel_yaml_get(r, "e")));
    ck_assert_uint_eq(r->keys[4]->line, 6);
    uint64_t u = 0;
    ck_assert_int_eq(tessel_yaml_u64(tessel_yaml_get(r, "a"), &u), 0);
    ck_assert_uint_eq(u, 1);
    /* Quoted numbers are strings. */
    ck_assert_int_eq(tessel_yaml_u64(tessel_yaml_get(r, "f"), &u), TESSEL_EPARSE);
    ck_assert_ptr_null(tessel_yaml_get(r, "zz"));
    ck_assert_ptr_null(tessel_yaml_get(b, "x"));
    tessel_yaml_free(&doc);
    ck_assert_ptr_null(doc);
    tessel_yaml_free(&doc);
}
END_TEST

static const struct {
    const char *text, *expect;
    int code;
} yaml_bad[] = {
    { "a: 1\nb: 2\na: 3\n", "t.yaml:3:1: error: duplicate key 'a' (first at line 1)",
      TESSEL_EPARSE },
    { "? [a]\n: 1\n", "t.yaml:1:3: error: mapping keys must be scalars", TESSEL_EPARSE },
    { "? {a: 1}\n: 1\n", "t.yaml:1:3: error: mapping keys must be scalars", TESSEL_EPARSE },
    { "x: &l [1]\n*l : 2\n", "t.yaml:2:1: error: mapping keys must be scalars", TESSEL_EPARSE },
    { "a: *nope\n", "t.yaml:1:4: error: unknown alias '*nope'", TESSEL_EPARSE },
    { "a: &x [1, *x]\n", "t.yaml:1:11: error: alias '*x' refers to a node that contains it",
      TESSEL_EPARSE },
    { "a: 1\n---\nb: 2\n", "t.yaml:2:1: error: more than one YAML document in the stream",
      TESSEL_EPARSE },
    { "a: [1, 2\nb: 3\n",
      "t.yaml:2:2: error: did not find expected ',' or ']' (while parsing a flow sequence at "
      "line 1)",
      TESSEL_EPARSE },
    { "a: b: c\n", "t.yaml:1:5: error: mapping values are not allowed in this context",
      TESSEL_EPARSE },
    { "a: 1\n  b\x01\n", "t.yaml:2:4: error: control characters are not allowed",
      TESSEL_EPARSE },
    { "a: \"\xff\"\n", "t.yaml:1:5: error: invalid leading UTF-8 octet", TESSEL_EPARSE },
};

START_TEST(yaml_errors_have_positions)
{
    char buf[1024];
    int code;
    parse_error(yaml_bad[_i].text, buf, sizeof(buf), &code);
    ck_assert_str_eq(buf, yaml_bad[_i].expect);
    ck_assert_int_eq(code, yaml_bad[_i].code);
}
END_TEST

START_TEST(yaml_depth_limit)
{
    char text[400];
    char buf[512];
    int code;
    /* 64 nested collections are allowed, the 65th is not (the root
     * sequence counts). */
    memset(text, '[', 64);
    memset(text + 64, ']', 64);
    text[128] = '\0';
    tessel_yaml_doc *doc = parse_ok(text);
    tessel_yaml_free(&doc);
    memset(text, '[', 65);
    memset(text + 65, ']', 65);
    text[130] = '\0';
    parse_error(text, buf, sizeof(buf), &code);
    ck_assert_str_eq(buf, "t.yaml:1:65: error: nesting deeper than 64 levels");
    ck_assert_int_eq(code, TESSEL_ERANGE);
    /* Very deep input fails at the limit, not by exhausting the stack. */
    size_t n = 200000;
    char *deep = malloc(n + 1);
    ck_assert_ptr_nonnull(deep);
    memset(deep, '[', n);
    deep[n] = '\0';
    parse_error(deep, buf, sizeof(buf), &code);
    ck_assert_int_eq(code, TESSEL_ERANGE);
    free(deep);
}
END_TEST

START_TEST(yaml_alias_bomb_refused)
{
    char text[2048];
    size_t len = (size_t)snprintf(text, sizeof(text), "a: &a [1,1,1,1,1,1,1,1,1,1]\n");
    for (char c = 'b'; c <= 'h'; c++)
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c,
                                c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1,
                                c - 1);
    char buf[512];
    int code;
    parse_error(text, buf, sizeof(buf), &code);
    ck_assert_int_eq(code, TESSEL_ERANGE);
    ck_assert_ptr_nonnull(strstr(buf, "more than 1000000 nodes"));
}
END_TEST

START_TEST(yaml_node_limit)
{
    /* 1,000,001 nodes: a flow sequence of 1,000,000 scalars plus itself. */
    size_t n = 1000000;
    char *text = malloc(2 * n + 3);
    ck_assert_ptr_nonnull(text);
    size_t len = 0;
    text[len++] = '[';
    for (size_t i = 0; i < n; i++) {
        text[len++] = '1';
        text[len++] = ',';
    }
    text[len - 1] = ']';
    text[len] = '\0';
    char buf[512];
    int code;
    parse_error(text, buf, sizeof(buf), &code);
    ck_assert_int_eq(code, TESSEL_ERANGE);
    /* One fewer fits. */
    text[len - 3] = ']';
    text[len - 2] = '\0';
    tessel_yaml_doc *doc = parse_ok(text);
    ck_assert_uint_eq(tessel_yaml_root(doc)->count, n - 1);
    tessel_yaml_free(&doc);
    free(text);
}
END_TEST

START_TEST(yaml_duplicates_in_big_mapping)
{
    /* Over 16 keys takes the sorting path; the earliest repeat is named. */
    char text[4096];
    size_t len = 0;
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "k%d: %d\n", i, i);
    len += (size_t)snprintf(text + len, sizeof(text) - len, "k33: x\nk7: y\n");
    char buf[512];
    int code;
    parse_error(text, buf, sizeof(buf), &code);
    ck_assert_str_eq(buf, "t.yaml:41:1: error: duplicate key 'k33' (first at line 34)");
    /* Without repeats it parses. */
    text[len - 14] = '\0';
    tessel_yaml_doc *doc = parse_ok(text);
    ck_assert_uint_eq(tessel_yaml_root(doc)->count, 40);
    tessel_yaml_free(&doc);
}
END_TEST

START_TEST(yaml_empty_and_scalar_documents)
{
    tessel_yaml_doc *doc = parse_ok("# nothing\n");
    ck_assert_ptr_null(tessel_yaml_root(doc));
    tessel_yaml_free(&doc);
    /* An empty collection before any child was seen (found by fuzzing:
     * pointer arithmetic on the still-unallocated child stack). */
    doc = parse_ok("[]");
    ck_assert_uint_eq(tessel_yaml_root(doc)->count, 0);
    tessel_yaml_free(&doc);
    doc = parse_ok("{}");
    ck_assert_int_eq(tessel_yaml_root(doc)->kind, TESSEL_YAML_MAPPING);
    tessel_yaml_free(&doc);
    doc = parse_ok("--- just text\n...\n");
    ck_assert_str_eq(tessel_yaml_root(doc)->value, "just text");
    tessel_yaml_free(&doc);
}
END_TEST

static const struct {
    const char *text;
    int is_double, is_u64, is_bool, is_null;
    double d;
    uint64_t u;
    int b;
} scalars[] = {
    { "1", 1, 1, 0, 0, 1, 1, 0 },
    { "0", 1, 1, 0, 0, 0, 0, 0 },
    { "68.3", 1, 0, 0, 0, 68.3, 0, 0 },
    { "-2.5e3", 1, 0, 0, 0, -2500, 0, 0 },
    { ".5", 1, 0, 0, 0, 0.5, 0, 0 },
    { "18446744073709551615", 1, 1, 0, 0, 18446744073709551615.0, UINT64_MAX, 0 },
    { "18446744073709551616", 1, 0, 0, 0, 18446744073709551616.0, 0, 0 },
    { "-1", 1, 0, 0, 0, -1, 0, 0 },
    { "+3", 1, 0, 0, 0, 3, 0, 0 },
    { "1e999", 0, 0, 0, 0, 0, 0, 0 },
    { "nan", 0, 0, 0, 0, 0, 0, 0 },
    { "inf", 0, 0, 0, 0, 0, 0, 0 },
    { "-inf", 0, 0, 0, 0, 0, 0, 0 },
    { "0x10", 0, 0, 0, 0, 0, 0, 0 },
    { "12abc", 0, 0, 0, 0, 0, 0, 0 },
    { "true", 0, 0, 1, 0, 0, 0, 1 },
    { "False", 0, 0, 1, 0, 0, 0, 0 },
    { "yes", 0, 0, 1, 0, 0, 0, 1 },
    { "no", 0, 0, 1, 0, 0, 0, 0 },
    { "on", 0, 0, 1, 0, 0, 0, 1 },
    { "off", 0, 0, 1, 0, 0, 0, 0 },
    { "yess", 0, 0, 0, 0, 0, 0, 0 },
    { "~", 0, 0, 0, 1, 0, 0, 0 },
    { "null", 0, 0, 0, 1, 0, 0, 0 },
    { "Null", 0, 0, 0, 1, 0, 0, 0 },
    { "'1'", 0, 0, 0, 0, 0, 0, 0 },
    { "\"true\"", 0, 0, 0, 0, 0, 0, 0 },
    { "'null'", 0, 0, 0, 0, 0, 0, 0 },
    { "!!str 5", 0, 0, 0, 0, 0, 0, 0 },
    { "[1]", 0, 0, 0, 0, 0, 0, 0 },
};

START_TEST(yaml_scalar_typing)
{
    char text[128];
    snprintf(text, sizeof(text), "v: %s\n", scalars[_i].text);
    tessel_yaml_doc *doc = parse_ok(text);
    const tessel_yaml_node *n = tessel_yaml_get(tessel_yaml_root(doc), "v");
    double d = -99;
    uint64_t u = 99;
    int b = -1;
    ck_assert_int_eq(tessel_yaml_double(n, &d) == 0, scalars[_i].is_double);
    ck_assert_int_eq(tessel_yaml_u64(n, &u) == 0, scalars[_i].is_u64);
    ck_assert_int_eq(tessel_yaml_bool(n, &b) == 0, scalars[_i].is_bool);
    ck_assert_int_eq(tessel_yaml_is_null(n), scalars[_i].is_null);
    if (scalars[_i].is_double)
        ck_assert_double_eq(d, scalars[_i].d);
    if (scalars[_i].is_u64)
        ck_assert_uint_eq(u, scalars[_i].u);
    if (scalars[_i].is_bool)
        ck_assert_int_eq(b, scalars[_i].b);
    tessel_yaml_free(&doc);
}
END_TEST

static const struct {
    const char *text;
    int rc;
    uint64_t bytes;
} sizes[] = {
    { "256KiB", 0, 262144 },
    { "1.5 MB", 0, 1500000 },
    { "4096", 0, 4096 },
    { "64B", 0, 64 },
    { "64 B", 0, 64 },
    { "1KB", 0, 1000 },
    { "1kB", 0, 1000 },
    { "30MiB", 0, 31457280 },
    { "1.5MiB", 0, 1572864 },
    { "2GB", 0, 2000000000 },
    { "1GiB", 0, 1073741824 },
    { "0.5KiB", 0, 512 },
    { "1.000KiB", 0, 1024 },
    { "0", 0, 0 },
    { "18446744073709551615", 0, UINT64_MAX },
    { "16777216TiB", TESSEL_ERANGE, 0 },
    { "18446744073709551616", TESSEL_ERANGE, 0 },
    { "17179869184GiB", TESSEL_ERANGE, 0 },
    { "0.3KiB", TESSEL_EPARSE, 0 },
    { "1.5", TESSEL_EPARSE, 0 },
    { "1.5B", TESSEL_EPARSE, 0 },
    { "-1", TESSEL_EPARSE, 0 },
    { "", TESSEL_EPARSE, 0 },
    { "KiB", TESSEL_EPARSE, 0 },
    { "12 kib", TESSEL_EPARSE, 0 },
    { "12XB", TESSEL_EPARSE, 0 },
    { "1.KiB", TESSEL_EPARSE, 0 },
    { " 1KiB", TESSEL_EPARSE, 0 },
    { "1KiB ", TESSEL_EPARSE, 0 },
    { "1e3", TESSEL_EPARSE, 0 },
    { "1.00000000000000000001GiB", TESSEL_EPARSE, 0 },
};

START_TEST(size_parser)
{
    uint64_t b = 12345;
    int rc = tessel_parse_size(sizes[_i].text, &b);
    ck_assert_msg(rc == sizes[_i].rc, "'%s': rc %d, expected %d", sizes[_i].text, rc,
                  sizes[_i].rc);
    if (rc == 0)
        ck_assert_uint_eq(b, sizes[_i].bytes);
    else
        ck_assert_uint_eq(b, 12345);
}
END_TEST

START_TEST(yaml_built_in_code)
{
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_yaml_doc *src = NULL;
    const char *text = "m: {a: [1, 2], b: 'x'}\n";
    ck_assert_int_eq(tessel_yaml_parse("s.yaml", text, strlen(text), &ta.allocator, &src, NULL),
                     0);
    tessel_yaml_doc *doc = tessel_yaml_doc_create(&ta.allocator);
    ck_assert_ptr_null(tessel_yaml_root(doc));
    tessel_yaml_node *copy = tessel_yaml_copy(doc, tessel_yaml_get(tessel_yaml_root(src), "m"));
    tessel_yaml_free(&src);
    /* The copy outlives its source, positions included. */
    ck_assert_int_eq(tessel_yaml_set_root(doc, copy), 0);
    const tessel_yaml_node *r = tessel_yaml_root(doc);
    ck_assert_str_eq(r->file, "s.yaml");
    ck_assert_uint_eq(r->column, 4);
    ck_assert_str_eq(tessel_yaml_get(r, "a")->items[1]->value, "2");
    ck_assert_int_eq(tessel_yaml_get(r, "b")->quoted, 1);
    tessel_yaml_node *s = tessel_yaml_new_scalar(doc, "hello", "made", 7, 3);
    ck_assert_str_eq(s->value, "hello");
    ck_assert_uint_eq(s->length, 5);
    ck_assert_str_eq(s->file, "made");
    ck_assert_uint_eq(s->line, 7);
    tessel_yaml_free(&doc);
    ck_assert_int_eq(ta.live, 0);
}
END_TEST

START_TEST(yaml_load_missing_file)
{
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_yaml_load("tests/spec/nope.yaml", NULL, &doc, &d), TESSEL_EIO);
    ck_assert_ptr_null(doc);
    ck_assert_str_eq(d.file, "tests/spec/nope.yaml");
    ck_assert_ptr_nonnull(strstr(d.message, "No such file"));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Good specs */

START_TEST(good_spmspm_values)
{
    tessel_spec *s = load_ok(GOOD "spmspm.yaml", NULL, 0);
    ck_assert_str_eq(s->name, "extensor-test");
    ck_assert_str_eq(s->path, GOOD "spmspm.yaml");
    ck_assert_str_eq(s->technology, "45nm");
    ck_assert_uint_eq(s->ntables, 1);
    ck_assert_str_eq(s->table[0], GOOD "tables/tessel-45nm.yaml");
    const tessel_spec_workload *w = &s->workload;
    ck_assert_str_eq(w->einsum, "Z[i,j] = A[i,k] * B[k,j]");
    ck_assert_int_eq(w->kind, TESSEL_WORKLOAD_SPMSPM);
    ck_assert_uint_eq(w->ntensors, 3);
    ck_assert_uint_eq(w->nindices, 3);
    ck_assert_str_eq(w->index_name[0], "i");
    ck_assert_str_eq(w->index_name[1], "j");
    ck_assert_str_eq(w->index_name[2], "k");
    ck_assert_str_eq(w->tensor[0].name, "Z");
    ck_assert_ptr_null(w->tensor[0].data);
    ck_assert_str_eq(w->tensor[1].name, "A");
    ck_assert_uint_eq(w->tensor[1].rank, 2);
    ck_assert_uint_eq(w->tensor[1].index[0], 0);
    ck_assert_uint_eq(w->tensor[1].index[1], 2);
    ck_assert_str_eq(w->tensor[1].data, GOOD "data/A.mtx");
    ck_assert_uint_eq(w->tensor[1].pos.line, 7);
    ck_assert_uint_eq(w->tensor[1].pos.column, 8);
    ck_assert_str_eq(w->tensor[1].pos.file, GOOD "spmspm.yaml");
    ck_assert_str_eq(w->tensor[2].data, "A^T");
    ck_assert_uint_eq(w->tensor[2].index[0], 2);
    ck_assert_uint_eq(w->tensor[2].index[1], 1);
    ck_assert_uint_eq(w->extent[0], 1000);
    ck_assert_uint_eq(w->extent[1], 0);
    ck_assert_int_eq(tessel_spec_index(s, "k"), 2);
    ck_assert_int_eq(tessel_spec_index(s, "q"), -1);
    ck_assert_int_eq(tessel_spec_tensor_index(s, "B"), 2);
    ck_assert_int_eq(tessel_spec_tensor_index(s, "b"), -1);
    ck_assert_int_eq(tessel_spec_level_index(s, "PE"), 2);
    ck_assert_int_eq(tessel_spec_level_index(s, "pe"), -1);

    ck_assert_uint_eq(s->nlevels, 3);
    const tessel_spec_level *d = &s->level[0], *llb = &s->level[1], *pe = &s->level[2];
    ck_assert_str_eq(d->name, "DRAM");
    ck_assert_uint_eq(d->capacity, 0);
    ck_assert_double_eq(d->bandwidth, 68.3);
    ck_assert_str_eq(d->energy.cls, "LPDDR4");
    ck_assert_str_eq(tessel_yaml_get(d->energy.attributes, "width")->value, "64");
    ck_assert_int_eq(d->has_mapping, 0);
    ck_assert_uint_eq(d->instances, 1);
    ck_assert_uint_eq(d->word_bits, 64);
    ck_assert_int_eq(d->format, 1);

    ck_assert_uint_eq(llb->capacity, 30u << 20);
    ck_assert_double_eq(llb->bandwidth, 2048);
    ck_assert_uint_eq(llb->word_bits, 512);
    ck_assert_uint_eq(llb->value_bits, 64);
    ck_assert_uint_eq(llb->coord_bits, 32);
    ck_assert_uint_eq(llb->offset_bits, 32);
    ck_assert_uint_eq(llb->run_bits, 32);
    ck_assert_int_eq(llb->format, 3);
    ck_assert_int_eq(llb->tensor[1].format, 1);
    ck_assert_int_eq(llb->tensor[2].format, -1);
    ck_assert_double_eq(llb->tensor[1].partition_fraction, 0.25);
    ck_assert_double_eq(llb->tensor[2].partition_fraction, 0.25);
    ck_assert_uint_eq(llb->tensor[0].partition_bytes, 15u << 20);
    ck_assert_double_eq(llb->tensor[0].partition_fraction, 0);
    /* Sparse: B skips on A (given), Z gates on A with skipping off,
     * A keeps the default (skip on B). */
    ck_assert_uint_eq(llb->tensor[1].sparse.skip_on, 1u << 2);
    ck_assert_uint_eq(llb->tensor[2].sparse.skip_on, 1u << 1);
    ck_assert_uint_eq(llb->tensor[0].sparse.skip_on, 0);
    ck_assert_uint_eq(llb->tensor[0].sparse.gate_on, 1u << 1);
    ck_assert_uint_eq(llb->tensor[1].sparse.gate_on, 0);
    ck_assert_uint_eq(llb->tensor[1].pos.line, 26);
    ck_assert_int_eq(llb->has_mapping, 1);
    /* order IKJ over indices i=0, j=1, k=2; tile i:128,k:256,j:64. */
    ck_assert_uint_eq(llb->order[0], 0);
    ck_assert_uint_eq(llb->order[1], 2);
    ck_assert_uint_eq(llb->order[2], 1);
    ck_assert_uint_eq(llb->tile[0], 128);
    ck_assert_uint_eq(llb->tile[1], 64);
    ck_assert_uint_eq(llb->tile[2], 256);
    ck_assert_str_eq(llb->energy.cls, "SRAM");
    ck_assert_uint_eq(llb->pos.line, 18);

    ck_assert_uint_eq(pe->capacity, 65536);
    ck_assert_uint_eq(pe->instances, 128);
    ck_assert_uint_eq(pe->value_bits, 32);
    ck_assert_uint_eq(pe->coord_bits, 16);
    ck_assert_uint_eq(pe->offset_bits, 16);
    ck_assert_uint_eq(pe->run_bits, 8);
    ck_assert_int_eq(pe->format, 2);
    ck_assert_ptr_null(pe->energy.attributes);
    /* Defaults: every input skips on the others, the output on all. */
    ck_assert_uint_eq(pe->tensor[0].sparse.skip_on, (1u << 1) | (1u << 2));
    ck_assert_uint_eq(pe->tensor[1].sparse.skip_on, 1u << 2);
    ck_assert_uint_eq(pe->tensor[2].sparse.skip_on, 1u << 1);
    ck_assert_uint_eq(pe->order[0], 2);
    ck_assert_uint_eq(pe->order[1], 0);
    ck_assert_uint_eq(pe->order[2], 1);
    ck_assert_uint_eq(pe->tile[0], 16);
    ck_assert_uint_eq(pe->tile[1], 0);
    ck_assert_uint_eq(pe->tile[2], 0);

    ck_assert_uint_eq(s->compute.pes, 128);
    ck_assert_uint_eq(s->compute.macs_per_pe, 2);
    ck_assert_double_eq_tol(s->compute.clock_ghz, 0.8, 1e-12);
    ck_assert_str_eq(s->compute.mac.cls, "fpmac");
    ck_assert_str_eq(tessel_yaml_get(s->compute.mac.attributes, "mantissa")->value, "53");
    ck_assert_str_eq(s->compute.intersect.cls, "intersect");
    ck_assert_ptr_nonnull(s->doc);
    tessel_spec_free(&s);
    ck_assert_ptr_null(s);
    tessel_spec_free(&s);
}
END_TEST


/* format: [UOP, CP] as a rank list, per tensor too, case-insensitive */
START_TEST(good_rank_formats)
{
    tessel_spec *s = load_ok(GOOD "ranks.yaml", NULL, 0);
    const tessel_spec_level *llb = &s->level[1];
    ck_assert_int_eq(llb->format, TESSEL_SPEC_FORMAT_RANKS);
    ck_assert_uint_eq(llb->nranks, 2);
    ck_assert_uint_eq(llb->ranks[0], 0); /* UOP */
    ck_assert_uint_eq(llb->ranks[1], 1); /* CP */
    ck_assert_int_eq(llb->tensor[1].format, -1);
    ck_assert_int_eq(llb->tensor[2].format, TESSEL_SPEC_FORMAT_RANKS);
    ck_assert_uint_eq(llb->tensor[2].ranks[0], 2); /* B */
    ck_assert_uint_eq(llb->tensor[2].ranks[1], 3); /* RLE */
    ck_assert_uint_eq(llb->tensor[0].ranks[0], 4); /* UB */
    ck_assert_uint_eq(llb->tensor[0].ranks[1], 4);
    tessel_spec_free(&s);
}
END_TEST

START_TEST(good_include_and_set)
{
    const char *sets[] = { "GLB.bandwidth=99", "mapping.GLB.order=ki",
                           "workload.data.x=v.mtx", "architecture.levels.RF.tensors.A.skip_on=[]",
                           "name=from-set", "mapping.RF.tile={i: 2, k: 4}" };
    tessel_spec *s = load_ok(GOOD "include.yaml", sets, sizeof(sets) / sizeof(sets[0]));
    ck_assert_str_eq(s->name, "from-set");
    ck_assert_int_eq(s->workload.kind, TESSEL_WORKLOAD_SPMV);
    /* The included file's table resolves relative to the included file. */
    ck_assert_uint_eq(s->ntables, 1);
    ck_assert_str_eq(s->table[0], GOOD "common/tables/base.yaml");
    ck_assert_str_eq(s->workload.tensor[1].data, GOOD "../data/M.mtx");
    /* --set data stays relative to the current directory. */
    ck_assert_str_eq(s->workload.tensor[2].data, "v.mtx");
    ck_assert_str_eq(s->workload.tensor[2].pos.file, "--set");
    ck_assert_uint_eq(s->workload.tensor[2].pos.line, 3);
    ck_assert_uint_eq(s->workload.tensor[2].pos.column, 17);
    /* Levels merged by name: DRAM and GLB from the include (GLB's capacity
     * replaced), RF added. */
    ck_assert_uint_eq(s->nlevels, 3);
    ck_assert_str_eq(s->level[0].name, "DRAM");
    ck_assert_str_eq(s->level[1].name, "GLB");
    ck_assert_str_eq(s->level[2].name, "RF");
    ck_assert_uint_eq(s->level[1].capacity, 2u << 20);
    ck_assert_double_eq(s->level[1].bandwidth, 99);
    ck_assert_str_eq(s->level[1].energy.cls, "SRAM");
    /* Positions of merged nodes stay in the file they came from. */
    ck_assert_str_eq(s->level[1].energy.pos.file, GOOD "common/arch.yaml");
    ck_assert_uint_eq(s->level[1].energy.pos.line, 9);
    ck_assert_str_eq(s->level[0].pos.file, GOOD "common/arch.yaml");
    ck_assert_uint_eq(s->compute.pes, 16);
    ck_assert_double_eq(s->compute.clock_ghz, 1);
    /* order "ki" over i=0, k=1. */
    ck_assert_uint_eq(s->level[1].order[0], 1);
    ck_assert_uint_eq(s->level[1].order[1], 0);
    ck_assert_uint_eq(s->level[1].tile[0], 64);
    ck_assert_uint_eq(s->level[1].tile[1], 0);
    ck_assert_int_eq(s->level[2].has_mapping, 1);
    ck_assert_uint_eq(s->level[2].tile[0], 2);
    ck_assert_uint_eq(s->level[2].tile[1], 4);
    ck_assert_uint_eq(s->level[2].tensor[1].sparse.skip_on, 0);
    ck_assert_uint_eq(s->level[1].tensor[1].sparse.skip_on, 1u << 2);
    tessel_spec_free(&s);
}
END_TEST

/* A minimal complete spec around an einsum, in memory. */
static tessel_spec *einsum_spec(const char *einsum, tessel_diag_list *l, int *rc)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "workload:\n  einsum: \"%s\"\n"
             "architecture:\n  levels: [{name: DRAM, class: LPDDR4}]\n"
             "  compute: {class: fpmac}\n",
             einsum);
    /* Bind every input to dense through --set, which also checks that
     * a data mapping can be created by --set. */
    const char *sets[3] = { "workload.data.A=dense", "workload.data.B=dense",
                            "workload.data.C=dense" };
    size_t nsets = 0;
    for (size_t i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "%c[", 'A' + (int)i);
        if (strstr(einsum, name))
            sets[nsets++] = sets[i];
    }
    return parse_spec(text, sets, nsets, l, rc);
}

static const struct {
    const char *einsum;
    int kind;
    const char *indices; /* index names in number order */
} kinds[] = {
    { "Z[i,j] = A[i,k] * B[k,j]", TESSEL_WORKLOAD_SPMSPM, "ijk" },
    { "Z[m,n]=A[m,p]*B[p,n]", TESSEL_WORKLOAD_SPMSPM, "mnp" },
    { "Z[j,i] = A[i,k] * B[k,j]", TESSEL_WORKLOAD_SPMSPM, "jik" },
    { "Z[i,j] = A[k,i] * B[j,k]", TESSEL_WORKLOAD_SPMSPM, "ijk" },
    { "Z[i,k] = A[i,k] * B[k,j]", TESSEL_WORKLOAD_OTHER, "ikj" },
    { "Z[i,j] = A[i,j] * B[i,j]", TESSEL_WORKLOAD_OTHER, "ij" },
    { "y[i] = A[i,k] * B[k]", TESSEL_WORKLOAD_SPMV, "ik" },
    { "y[k] = A[i,k] * B[k]", TESSEL_WORKLOAD_OTHER, "ki" },
    { "y[i] = B[k] * A[i,k]", TESSEL_WORKLOAD_OTHER, "ik" },
    { "Y[i,j,r] = A[i,j,k] * B[k,r]", TESSEL_WORKLOAD_TTM, "ijrk" },
    { "Y[r,i,j] = A[k,i,j] * B[r,k]", TESSEL_WORKLOAD_TTM, "rijk" },
    { "Y[i,r] = A[i,j,k] * B[j,r] * C[k,r]", TESSEL_WORKLOAD_MTTKRP, "irjk" },
    { "Y[j,r] = A[i,j,k] * B[i,r] * C[k,r]", TESSEL_WORKLOAD_MTTKRP, "jrik" },
    { "Y[i,r] = A[i,j,k] * B[j,r] * C[j,r]", TESSEL_WORKLOAD_OTHER, "irjk" },
    { "Y[i] = A[i]", TESSEL_WORKLOAD_OTHER, "i" },
    { "  Z [ i , j ]=A[ i,k ]  *B[k ,j]  ", TESSEL_WORKLOAD_SPMSPM, "ijk" },
};

START_TEST(einsum_kinds)
{
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    int rc;
    tessel_spec *s = einsum_spec(kinds[_i].einsum, &l, &rc);
    char buf[4096];
    format_all(&l, buf, sizeof(buf));
    ck_assert_msg(rc == 0, "%s:\n%s", kinds[_i].einsum, buf);
    ck_assert_int_eq(s->workload.kind, kinds[_i].kind);
    ck_assert_uint_eq(s->workload.nindices, strlen(kinds[_i].indices));
    for (unsigned i = 0; i < s->workload.nindices; i++) {
        ck_assert_uint_eq(strlen(s->workload.index_name[i]), 1);
        ck_assert_int_eq(s->workload.index_name[i][0], kinds[_i].indices[i]);
    }
    ck_assert_str_eq(s->name, "mem");
    tessel_spec_free(&s);
    tessel_diag_list_free(&l);
}
END_TEST

static const struct {
    const char *einsum, *expect;
} einsum_bad[] = {
    /* einsum value starts at column 11, inside the quote at 12. */
    { "Z[i,j] = A[i,k] + B[k,j]", "mem.yaml:2:28: error: einsum: expected '*' or the end" },
    { "Z[i,j] = ", "mem.yaml:2:21: error: einsum: expected an input tensor name" },
    { "Z = A[i]", "mem.yaml:2:14: error: einsum: expected '[' after the tensor name" },
    { "Z[] = A[i]", "mem.yaml:2:14: error: einsum: expected an index name" },
    { "Z[i] = A[i] * B[i] * C[i] * D[i]", "mem.yaml:2:40: error: einsum: at most 3 input tensors" },
    { "Z[a,b,c,d] = A[e,f,g,h] * B[a,b,i,j]",
      "mem.yaml:2:44: error: einsum: more than 8 different indices" },
    { "Z[a] = A[a,b,c,d,e,f,g,h,a9]",
      "mem.yaml:2:37: error: einsum: tensor 'A' has more than 8 indices" },
    { "Z[i] = A[i] * A[i]", "mem.yaml:2:26: error: einsum: tensor 'A' appears twice (bind a "
                            "second name to the same data instead, e.g. data: {B: A})" },
    { "Z[i] = Z[i]", "mem.yaml:2:19: error: einsum: 'Z' is the output and an input" },
    { "Z[i,j] = A[i,i] * B[i,j]", "mem.yaml:2:25: error: einsum: index 'i' appears twice in one tensor" },
    { "Z[i,q] = A[i,k] * B[k,j]", "mem.yaml:2:16: error: einsum: output index 'q' appears in no input" },
    { "Z[i] = A[i]]", "mem.yaml:2:23: error: einsum: expected '*' or the end" },
    { "Z[abcdefghijabcdefghijabcdefghijab] = A[i]",
      "mem.yaml:2:14: error: einsum: an index name longer than 31 characters" },
};

START_TEST(einsum_errors_point_into_the_string)
{
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    int rc;
    tessel_spec *s = einsum_spec(einsum_bad[_i].einsum, &l, &rc);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(rc, TESSEL_EINVAL);
    ck_assert_uint_ge(l.count, 1);
    char buf[1024];
    tessel_diag_format(&l.items[0], buf, sizeof(buf));
    ck_assert_str_eq(buf, einsum_bad[_i].expect);
    ck_assert_str_eq(l.items[0].field, "workload.einsum");
    tessel_diag_list_free(&l);
}
END_TEST

START_TEST(parse_in_memory_and_bind)
{
    const char *text = "workload:\n"
                       "  einsum: >\n    Y[i,j,r] = T[i,j,k] * M[k,r]\n"
                       "  data: {T: data/t.tns, M: dense}\n"
                       "  dims: {r: 32}\n"
                       "architecture:\n"
                       "  technology: 22nm\n"
                       "  levels:\n"
                       "    - {name: HBM, class: HBM2, capacity: 8GiB}\n"
                       "    - {name: GLB, class: SRAM, capacity: 2MB}\n"
                       "  compute: {class: fpmac, clock: 1.2 GHz}\n";
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    int rc;
    tessel_spec *s = parse_spec(text, NULL, 0, &l, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(s->workload.kind, TESSEL_WORKLOAD_TTM);
    ck_assert_str_eq(s->workload.einsum, "Y[i,j,r] = T[i,j,k] * M[k,r]");
    /* In-memory specs resolve relative to the current directory. */
    ck_assert_str_eq(s->workload.tensor[1].data, "data/t.tns");
    ck_assert_str_eq(s->workload.tensor[2].data, "dense");
    ck_assert_uint_eq(s->workload.extent[2], 32);
    ck_assert_str_eq(s->technology, "22nm");
    ck_assert_uint_eq(s->level[0].capacity, 8ull << 30);
    ck_assert_uint_eq(s->level[1].capacity, 2000000);
    ck_assert_double_eq_tol(s->compute.clock_ghz, 1.2, 1e-12);
    ck_assert_int_eq(s->level[1].has_mapping, 0);
    ck_assert_uint_eq(s->level[1].order[3], 3);
    ck_assert_uint_eq(s->ntables, 0);
    tessel_diag d;
    ck_assert_int_eq(tessel_spec_bind(s, "M", "m.mtx", &d), 0);
    ck_assert_str_eq(s->workload.tensor[2].data, "m.mtx");
    ck_assert_int_eq(tessel_spec_bind(s, "Y", "y.mtx", &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "output"));
    ck_assert_int_eq(tessel_spec_bind(s, "Q", "q.mtx", &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "'Q'"));
    tessel_spec_free(&s);
    tessel_diag_list_free(&l);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Bad specs, data-driven */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Loads BAD_DIR/name.yaml (with name.set) and compares against name.err;
 * returns the number of diagnostics. */
static size_t check_bad(const char *name)
{
    char path[512], errpath[512], setpath[512];
    snprintf(path, sizeof(path), "%s/%s.yaml", BAD_DIR, name);
    snprintf(errpath, sizeof(errpath), "%s/%s.err", BAD_DIR, name);
    snprintf(setpath, sizeof(setpath), "%s/%s.set", BAD_DIR, name);
    char *expect = read_text(errpath);
    ck_assert_msg(expect != NULL, "%s has no %s", path, errpath);
    char *settext = read_text(setpath);
    const char *sets[32];
    size_t nsets = 0;
    for (char *p = settext; p && *p && nsets < 32;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        sets[nsets++] = p;
        p = nl ? nl + 1 : p + strlen(p);
    }
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    tessel_spec *s = NULL;
    int rc = tessel_spec_load(path, sets, nsets, NULL, &s, &l);
    ck_assert_msg(rc < 0, "%s loaded", path);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(rc, l.items[0].code);
    char got[16384];
    format_all(&l, got, sizeof(got));
    ck_assert_msg(strcmp(got, expect) == 0, "%s:\n--- expected\n%s--- got\n%s", path, expect,
                  got);
    size_t count = l.count;
    for (size_t i = 0; i < l.count; i++)
        ck_assert_msg(l.items[i].line > 0 && l.items[i].column > 0, "%s: error without a position",
                      path);
    tessel_diag_list_free(&l);
    free(expect);
    free(settext);
    return count;
}

START_TEST(bad_specs_match_expected_diagnostics)
{
    DIR *dir = opendir(BAD_DIR);
    ck_assert_ptr_nonnull(dir);
    struct dirent *e;
    size_t files = 0;
    while ((e = readdir(dir))) {
        if (!ends_with(e->d_name, ".yaml"))
            continue;
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(strlen(e->d_name) - 5), e->d_name);
        check_bad(name);
        files++;
    }
    closedir(dir);
    /* The directory holds one file per error kind; a walk that found few
     * would test nothing. */
    ck_assert_uint_ge(files, 35);
}
END_TEST

START_TEST(all_errors_are_collected)
{
    /* many.yaml has nine mistakes of seven kinds; all are reported. */
    ck_assert_uint_eq(check_bad("many"), 9);
    ck_assert_uint_eq(check_bad("wrong_type"), 6);
    ck_assert_uint_eq(check_bad("include_missing"), 2);
    ck_assert_uint_eq(check_bad("set_missing"), 5);
}
END_TEST

START_TEST(unknown_key_names_field_and_suggestion)
{
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    tessel_spec *s = NULL;
    ck_assert_int_eq(tessel_spec_load(BAD_DIR "/unknown_key.yaml", NULL, 0, NULL, &s, &l),
                     TESSEL_EINVAL);
    ck_assert_str_eq(l.items[1].field, "architecture.levels.PE.capcity");
    ck_assert_str_eq(l.items[1].message, "unknown key 'capcity' (did you mean 'capacity'?)");
    ck_assert_uint_eq(l.items[1].line, 13);
    ck_assert_uint_eq(l.items[1].column, 7);
    tessel_diag_list_free(&l);
}
END_TEST

START_TEST(too_many_errors_are_capped)
{
    char *text = malloc(1 << 16);
    ck_assert_ptr_nonnull(text);
    size_t len = 0;
    for (int i = 0; i < 150; i++)
        len += (size_t)snprintf(text + len, (1 << 16) - len, "junk%d: 1\n", i);
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    int rc;
    tessel_spec *s = parse_spec(text, NULL, 0, &l, &rc);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(rc, TESSEL_EINVAL);
    ck_assert_uint_eq(l.count, 101);
    ck_assert_ptr_nonnull(strstr(l.items[100].message, "too many errors"));
    ck_assert_str_eq(l.items[0].message, "unknown key 'junk0'");
    tessel_diag_list_free(&l);
    free(text);
}
END_TEST

START_TEST(errors_append_to_a_list_in_use)
{
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    tessel_diag_list_add(&l, TESSEL_EIO, "earlier", 1, 1, NULL, "kept");
    tessel_spec *s = NULL;
    ck_assert_int_eq(tessel_spec_load(BAD_DIR "/no_data.yaml", NULL, 0, NULL, &s, &l),
                     TESSEL_EINVAL);
    ck_assert_uint_eq(l.count, 2);
    ck_assert_str_eq(l.items[0].message, "kept");
    ck_assert_str_eq(l.items[1].file, BAD_DIR "/no_data.yaml");
    tessel_diag_list_free(&l);
    /* A NULL list is allowed: the code still says what happened. */
    ck_assert_int_eq(tessel_spec_load(BAD_DIR "/no_data.yaml", NULL, 0, NULL, &s, NULL),
                     TESSEL_EINVAL);
    ck_assert_int_eq(tessel_spec_load("tests/spec/none.yaml", NULL, 0, NULL, &s, NULL),
                     TESSEL_EIO);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Out of memory: fail each allocation in turn */

static void oom_loop(const char *path, const char *const *sets, size_t nsets)
{
    long n;
    for (n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_diag_list l;
        tessel_diag_list_init(&l, NULL);
        tessel_spec *s = NULL;
        int rc = tessel_spec_load(path, sets, nsets, &ta.allocator, &s, &l);
        if (rc == 0) {
            ck_assert_ptr_nonnull(s);
            ck_assert_uint_eq(l.count, 0);
            tessel_spec_free(&s);
            ck_assert_int_eq(ta.live, 0);
            tessel_diag_list_free(&l);
            break;
        }
        ck_assert_msg(rc == TESSEL_ENOMEM, "%s: allocation %ld failed: rc %d", path, n, rc);
        ck_assert_ptr_null(s);
        ck_assert_msg(ta.live == 0, "%s: allocation %ld failed: %ld blocks leaked", path, n,
                      ta.live);
        tessel_diag_list_free(&l);
    }
    /* The loop must have exercised real failure points. */
    ck_assert_int_gt(n, 10);
}

START_TEST(oom_good_spec)
{
    oom_loop(GOOD "spmspm.yaml", NULL, 0);
}
END_TEST

START_TEST(oom_include_and_set)
{
    const char *sets[] = { "GLB.bandwidth=99", "mapping.GLB.order=ki", "workload.data.x=v.mtx" };
    oom_loop(GOOD "include.yaml", sets, 3);
}
END_TEST

START_TEST(oom_yaml_parse)
{
    char text[4096];
    size_t len = 0;
    /* Enough keys and anchors to grow every internal array. */
    for (int i = 0; i < 60; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "k%d: &a%d [x, {y: %d}]\n", i,
                                i, i);
    len += (size_t)snprintf(text + len, sizeof(text) - len, "z: *a7\n");
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_yaml_doc *doc = NULL;
        tessel_diag d;
        int rc = tessel_yaml_parse("t.yaml", text, len, &ta.allocator, &doc, &d);
        if (rc == 0) {
            ck_assert_uint_eq(tessel_yaml_root(doc)->count, 61);
            tessel_yaml_free(&doc);
            ck_assert_int_eq(ta.live, 0);
            ck_assert_int_gt(n, 5);
            break;
        }
        ck_assert_int_eq(rc, TESSEL_ENOMEM);
        ck_assert_int_eq(d.code, TESSEL_ENOMEM);
        ck_assert_ptr_null(doc);
        ck_assert_int_eq(ta.live, 0);
    }
}
END_TEST


/* ------------------------------------------------------------------ */
/* The resolved spec (tessel spec): libcyaml round trip and origins */

static const char *const resolved_specs[] = {
    GOOD "spmspm.yaml",       GOOD "ranks.yaml",      GOOD "include.yaml",
    "specs/extensor.yaml",    "specs/gamma.yaml",     "specs/sparsepipe.yaml",
    "specs/outerspace.yaml",  "specs/matraptor.yaml", "specs/extensor-drt.yaml",
};

/* Every spec's resolved YAML reads back through the schema and writes the
 * same bytes; the text holds the values the loader resolved. */
START_TEST(resolved_round_trip)
{
    tessel_spec *s = load_ok(resolved_specs[_i], NULL, 0);
    char *yaml = NULL;
    size_t len = 0;
    tessel_diag d;
    ck_assert_int_eq(tessel_spec_resolved_yaml(s, NULL, &yaml, &len, &d), 0);
    ck_assert_int_eq(tessel_spec_resolved_check(yaml, len, NULL, &d), 0);
    char *text = malloc(len + 1);
    ck_assert_ptr_nonnull(text);
    memcpy(text, yaml, len);
    text[len] = '\0';
    char want[128];
    for (unsigned l = 0; l < s->nlevels; l++) {
        snprintf(want, sizeof(want), "- name: %s\n  capacity: %llu\n", s->level[l].name,
                 (unsigned long long)s->level[l].capacity);
        ck_assert_msg(strstr(text, want), "%s: no '%s'", resolved_specs[_i], want);
    }
    snprintf(want, sizeof(want), "  pes: %u\n", s->compute.pes);
    ck_assert_ptr_nonnull(strstr(text, want));
    free(text);
    /* A key the schema does not know, or a changed document, fails the check. */
    char *bad = malloc(len + 16);
    ck_assert_ptr_nonnull(bad);
    memcpy(bad, yaml, 4);
    memcpy(bad + 4, "bogus: 1\n", 9);
    memcpy(bad + 13, yaml + 4, len - 4);
    ck_assert_int_eq(tessel_spec_resolved_check(bad, len + 9, NULL, &d), TESSEL_EPARSE);
    free(bad);
    tessel_dealloc(NULL, yaml);
    tessel_spec_free(&s);
}
END_TEST

static const tessel_spec_origin *origin_of(const tessel_spec_origin *o, size_t n,
                                           const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(o[i].path, path) == 0)
            return &o[i];
    return NULL;
}

/* Origins name the included file, the --set argument or "default". */
START_TEST(resolved_origins)
{
    const char *sets[] = { "GLB.bandwidth=99" };
    tessel_spec *s = load_ok(GOOD "include.yaml", sets, 1);
    tessel_spec_origin *o = NULL;
    size_t n = 0;
    tessel_diag d;
    ck_assert_int_eq(tessel_spec_origins(s, NULL, &o, &n, &d), 0);
    const tessel_spec_origin *bw = origin_of(o, n, "architecture.levels.GLB.bandwidth");
    ck_assert_ptr_nonnull(bw);
    ck_assert_str_eq(bw->value, "99");
    ck_assert_int_eq(strncmp(bw->origin, "--set:1:", 8), 0);
    const tessel_spec_origin *cap = origin_of(o, n, "architecture.levels.GLB.capacity");
    ck_assert_ptr_nonnull(cap);
    ck_assert_str_eq(cap->value, "2097152");
    ck_assert_ptr_nonnull(strstr(cap->origin, ".yaml:"));
    const tessel_spec_origin *rb = origin_of(o, n, "architecture.levels.GLB.run_bits");
    ck_assert_ptr_nonnull(rb);
    ck_assert_str_eq(rb->origin, "default");
    tessel_spec_origins_free(o, n, NULL);
    tessel_spec_free(&s);
}
END_TEST

/* Out of memory at every allocation of the resolved YAML and the origins:
 * an error, nothing leaked. */
START_TEST(oom_resolved)
{
    tessel_spec *s = load_ok("specs/extensor.yaml", NULL, 0);
    for (int which = 0; which < 2; which++) {
        long n;
        for (n = 1;; n++) {
            test_alloc ta;
            test_alloc_init(&ta, n);
            tessel_diag d;
            int rc;
            if (which == 0) {
                char *yaml = NULL;
                size_t len = 0;
                rc = tessel_spec_resolved_yaml(s, &ta.allocator, &yaml, &len, &d);
                if (rc == 0)
                    rc = tessel_spec_resolved_check(yaml, len, &ta.allocator, &d);
                tessel_dealloc(&ta.allocator, yaml);
            } else {
                tessel_spec_origin *o = NULL;
                size_t count = 0;
                rc = tessel_spec_origins(s, &ta.allocator, &o, &count, &d);
                tessel_spec_origins_free(o, count, &ta.allocator);
            }
            ck_assert_msg(ta.live == 0, "allocation %ld: %ld blocks leaked", n, ta.live);
            if (rc == 0)
                break;
            ck_assert_msg(rc == TESSEL_ENOMEM, "allocation %ld: rc %d", n, rc);
        }
        ck_assert_int_gt(n, 20);
    }
    tessel_spec_free(&s);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *spec_suite(void)
{
    Suite *s = suite_create("spec");
    TCase *y = tcase_create("yaml");
    tcase_add_test(y, yaml_tree_positions_and_kinds);
    tcase_add_loop_test(y, yaml_errors_have_positions, 0,
                        (int)(sizeof(yaml_bad) / sizeof(yaml_bad[0])));
    tcase_add_test(y, yaml_depth_limit);
    tcase_add_test(y, yaml_alias_bomb_refused);
    tcase_add_test(y, yaml_node_limit);
    tcase_add_test(y, yaml_duplicates_in_big_mapping);
    tcase_add_test(y, yaml_empty_and_scalar_documents);
    tcase_add_loop_test(y, yaml_scalar_typing, 0, (int)(sizeof(scalars) / sizeof(scalars[0])));
    tcase_add_loop_test(y, size_parser, 0, (int)(sizeof(sizes) / sizeof(sizes[0])));
    tcase_add_test(y, yaml_built_in_code);
    tcase_add_test(y, yaml_load_missing_file);
    tcase_set_timeout(y, 120);
    suite_add_tcase(s, y);

    TCase *g = tcase_create("load");
    tcase_add_test(g, good_spmspm_values);
    tcase_add_test(g, good_rank_formats);
    tcase_add_test(g, good_include_and_set);
    tcase_add_loop_test(g, einsum_kinds, 0, (int)(sizeof(kinds) / sizeof(kinds[0])));
    tcase_add_loop_test(g, einsum_errors_point_into_the_string, 0,
                        (int)(sizeof(einsum_bad) / sizeof(einsum_bad[0])));
    tcase_add_test(g, parse_in_memory_and_bind);
    suite_add_tcase(s, g);

    TCase *r = tcase_create("resolved");
    tcase_add_loop_test(r, resolved_round_trip, 0,
                        (int)(sizeof(resolved_specs) / sizeof(resolved_specs[0])));
    tcase_add_test(r, resolved_origins);
    suite_add_tcase(s, r);

    TCase *b = tcase_create("diagnostics");
    tcase_add_test(b, bad_specs_match_expected_diagnostics);
    tcase_add_test(b, all_errors_are_collected);
    tcase_add_test(b, unknown_key_names_field_and_suggestion);
    tcase_add_test(b, too_many_errors_are_capped);
    tcase_add_test(b, errors_append_to_a_list_in_use);
    suite_add_tcase(s, b);

    TCase *o = tcase_create("oom");
    tcase_add_test(o, oom_good_spec);
    tcase_add_test(o, oom_include_and_set);
    tcase_add_test(o, oom_yaml_parse);
    tcase_add_test(o, oom_resolved);
    tcase_set_timeout(o, 240);
    suite_add_tcase(s, o);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(spec_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Limits (issue 9): inputs at and past the edges of what tessel supports.
 * Each must give a clear error, with file:line:col where there is one, or a
 * correct result; never a crash, a hang or an abort.
 *
 *   - spec values: tile shapes of 0 and larger than the tensor (up to
 *     2^64 - 1), buffer capacities of 0 bytes, 1 byte and petabytes,
 *     partitions below one byte, NaN and infinities in every kind of
 *     number, density-model bindings outside (0, 1];
 *   - YAML: 10,000 nested lists or mappings, keys of megabytes;
 *   - Matrix Market and FROSTT headers and coordinates near 2^31, 2^32,
 *     2^63 and 2^64, and headers claiming 10^10 rows or entries over a
 *     1 KB body;
 *   - energy tables holding NaN or infinities; a clock so fast that it
 *     overflows in Hz.
 *
 * Runs from the project root (meson test workdir). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/energy.h"
#include "tessel/model.h"
#include "tessel/spec.h"
#include "tessel/tensor.h"
#include "test_alloc.h"

#define EXTENSOR "specs/extensor.yaml"

/* ------------------------------------------------------------------ */
/* Helpers */

/* All diagnostics of a list, formatted, one per line. */
static void format_all(const tessel_diag_list *l, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < l->count && len + 1 < n; i++) {
        len += (size_t)tessel_diag_format(&l->items[i], buf + len, n - len);
        if (len + 1 < n) {
            buf[len++] = '\n';
            buf[len] = '\0';
        }
    }
}

/* Loads the ExTensor spec with one --set; returns the code and the
 * diagnostics, formatted, in buf. */
static int load_with(const char *set, tessel_spec **out, char *buf, size_t n)
{
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    const char *sets[1] = { set };
    *out = NULL;
    int rc = tessel_spec_load(EXTENSOR, sets, set ? 1 : 0, NULL, out, &l);
    format_all(&l, buf, n);
    tessel_diag_list_free(&l);
    return rc;
}

static tessel_spec *load_ok(const char *const *sets, size_t nsets)
{
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    tessel_spec *s = NULL;
    int rc = tessel_spec_load(EXTENSOR, sets, nsets, NULL, &s, &l);
    char buf[4096];
    format_all(&l, buf, sizeof(buf));
    ck_assert_msg(rc == 0, "loading %s with %zu sets failed:\n%s", EXTENSOR, nsets, buf);
    tessel_diag_list_free(&l);
    return s;
}

/* Spec, data and the exact estimate of the ExTensor spec (G51) under the
 * given sets. */
static tessel_result estimate(const char *const *sets, size_t nsets)
{
    tessel_spec *s = load_ok(sets, nsets);
    tessel_workload_data *w = NULL;
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    int rc = tessel_workload_load(s, NULL, NULL, &w, &l);
    char buf[4096];
    format_all(&l, buf, sizeof(buf));
    ck_assert_msg(rc == 0, "loading the data failed:\n%s", buf);
    tessel_diag_list_free(&l);
    tessel_result r;
    tessel_diag d;
    tessel_diag_clear(&d);
    rc = tessel_model_exact(s, w, NULL, &r, &d);
    ck_assert_msg(rc == 0, "estimate failed: %s", d.message);
    r.seconds = 0;
    tessel_workload_free(&w);
    tessel_spec_free(&s);
    return r;
}

/* The code and formatted diagnostic of an estimate expected to fail. */
static int estimate_error(const char *const *sets, size_t nsets, char *buf, size_t n)
{
    tessel_spec *s = load_ok(sets, nsets);
    tessel_workload_data *w = NULL;
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    ck_assert_int_eq(tessel_workload_load(s, NULL, NULL, &w, &l), 0);
    tessel_diag_list_free(&l);
    tessel_result r;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_model_exact(s, w, NULL, &r, &d);
    tessel_diag_format(&d, buf, n);
    tessel_workload_free(&w);
    tessel_spec_free(&s);
    return rc;
}

static void assert_same_result(const tessel_result *a, const tessel_result *b)
{
    ck_assert_uint_eq(a->nlevels, b->nlevels);
    for (unsigned l = 0; l < a->nlevels; l++)
        for (unsigned t = 0; t < a->ntensors; t++) {
            /* the partition itself is reported (rule 4) and differs */
            tessel_traffic x = a->traffic[l][t], y = b->traffic[l][t];
            x.partition_bytes = y.partition_bytes = 0;
            ck_assert_msg(memcmp(&x, &y, sizeof(tessel_traffic)) == 0,
                          "traffic of level %u tensor %u differs", l, t);
        }
    ck_assert_uint_eq(a->macs, b->macs);
    ck_assert_uint_eq(a->output_nnz, b->output_nnz);
    ck_assert_uint_eq(a->compulsory_bytes, b->compulsory_bytes);
    ck_assert_uint_eq(a->dram_bytes, b->dram_bytes);
}

/* ------------------------------------------------------------------ */
/* Spec values: each --set gives exactly these diagnostics. */

typedef struct set_case {
    const char *set;
    const char *expect; /* the diagnostics, one per line */
} set_case;

static const set_case bad_sets[] = {
    /* tile shapes */
    { "mapping.LLB.tile=i:0,k:1024,j:1024",
      "--set:1:20: error: tile size of 'i' must be a positive integer\n" },
    { "mapping.PEB.tile=i:8,k:0,j:64",
      "--set:1:24: error: tile size of 'k' must be a positive integer\n" },
    { "mapping.LLB.tile=i:18446744073709551616,k:1024,j:1024",
      "--set:1:20: error: tile size of 'i' must be a positive integer\n" },
    { "mapping.LLB.tile=i:-1,k:1024,j:1024",
      "--set:1:20: error: tile size of 'i' must be a positive integer\n" },
    /* capacities */
    { "LLB.capacity=0", "--set:1:14: error: 'capacity' must be greater than zero\n" },
    { "LLB.capacity=0PB", "--set:1:14: error: 'capacity' must be greater than zero\n" },
    { "LLB.capacity=-4PB", "--set:1:14: error: 'capacity' must be greater than zero\n" },
    { "LLB.capacity=16EiB", "--set:1:14: error: 'capacity' is too large (less than 16 EiB)\n" },
    { "LLB.capacity=18446744073709551616",
      "--set:1:14: error: 'capacity' is too large (less than 16 EiB)\n" },
    { "LLB.capacity=4ZB", "--set:1:14: error: 'capacity' must be a size such as 256KiB\n" },
    { "LLB.capacity=.inf", "--set:1:14: error: 'capacity' must be a size such as 256KiB\n" },
    { "LLB.capacity=.nan", "--set:1:14: error: 'capacity' must be a size such as 256KiB\n" },
    /* A 1-byte buffer leaves no byte to any partition: the estimators
     * would read the 0-byte partitions as unbounded. */
    { "LLB.capacity=1B",
      "specs/extensor.yaml:40:24: error: partition of 'A' at level 'LLB' is less than one byte "
      "(5% of 1 byte)\n"
      "specs/extensor.yaml:41:24: error: partition of 'B' at level 'LLB' is less than one byte "
      "(45% of 1 byte)\n"
      "specs/extensor.yaml:42:24: error: partition of 'Z' at level 'LLB' is less than one byte "
      "(50% of 1 byte)\n" },
    { "PEB.capacity=3B",
      "specs/extensor.yaml:54:24: error: partition of 'A' at level 'PEB' is less than one byte "
      "(5% of 3 bytes)\n" },
    { "LLB.tensors.A.partition=1e-300",
      "--set:1:25: error: partition of 'A' at level 'LLB' is less than one byte (1e-298% of "
      "31457280 bytes)\n" },
    /* NaN and infinities */
    { "LLB.tensors.A.partition=.nan",
      "--set:1:25: error: 'partition' must be a percentage (25%), a fraction (0.25) or a size "
      "(1MiB)\n" },
    { "LLB.tensors.A.partition=.inf",
      "--set:1:25: error: 'partition' must be a percentage (25%), a fraction (0.25) or a size "
      "(1MiB)\n" },
    { "LLB.tensors.A.partition=nan%",
      "--set:1:25: error: 'partition' must be a percentage (25%), a fraction (0.25) or a size "
      "(1MiB)\n" },
    { "LLB.tensors.A.partition=-.inf",
      "--set:1:25: error: 'partition' must be greater than zero\n" },
    { "DRAM.bandwidth=.nan", "--set:1:16: error: 'bandwidth' must be a positive number (GB/s)\n" },
    { "DRAM.bandwidth=.inf", "--set:1:16: error: 'bandwidth' must be a positive number (GB/s)\n" },
    { "DRAM.bandwidth=-.inf", "--set:1:16: error: 'bandwidth' must be a positive number (GB/s)\n" },
    { "DRAM.bandwidth=1e400", "--set:1:16: error: 'bandwidth' must be a positive number (GB/s)\n" },
    { "architecture.compute.clock=.nan",
      "--set:1:28: error: 'clock' must be a frequency such as 1GHz or 800MHz (a number is GHz)\n" },
    { "architecture.compute.clock=.inf",
      "--set:1:28: error: 'clock' must be a frequency such as 1GHz or 800MHz (a number is GHz)\n" },
    { "architecture.compute.clock=infGHz",
      "--set:1:28: error: 'clock' must be a frequency such as 1GHz or 800MHz (a number is GHz)\n" },
    { "architecture.compute.pes=.inf", "--set:1:26: error: 'pes' must be a positive integer\n" },
    { "architecture.compute.pes=1e30", "--set:1:26: error: 'pes' must be a positive integer\n" },
    { "PEB.instances=.nan", "--set:1:15: error: 'instances' must be a positive integer\n" },
    { "PEB.word_bits=.inf", "--set:1:15: error: 'word_bits' must be a positive integer\n" },
    { "workload.dims={i: .nan}",
      "--set:1:19: error: 'i' must be an extent from 1 to 4294967295\n" },
    { "workload.dims={i: 4294967296}",
      "--set:1:19: error: 'i' must be an extent from 1 to 4294967295\n" },
    /* density models */
    { "workload.data.A={model: uniform, rows: 1000, cols: 1000, density: .nan}",
      "--set:1:67: error: 'density' must be a positive number (a fraction in (0, 1])\n" },
    { "workload.data.A={model: uniform, rows: 1000, cols: 1000, density: .inf}",
      "--set:1:67: error: 'density' must be a positive number (a fraction in (0, 1])\n" },
    { "workload.data.A={model: uniform, rows: 1000, cols: 1000, density: -.inf}",
      "--set:1:67: error: 'density' must be a positive number (a fraction in (0, 1])\n" },
    { "workload.data.A={model: uniform, rows: 1000, cols: 1000, density: 1.5}",
      "--set:1:67: error: 'density' must be at most 1\n" },
    { "workload.data.A={model: uniform, rows: 1000, cols: 1000, density: -0.5}",
      "--set:1:67: error: 'density' must be a positive number (a fraction in (0, 1])\n" },
    { "workload.data.A={model: uniform, rows: 1000, cols: 1000, density: 0}",
      "--set:1:67: error: 'density' must be a positive number (a fraction in (0, 1])\n" },
    { "workload.data.A={model: uniform, rows: 1000, cols: 1000, density: 1e-400}",
      "--set:1:67: error: 'density' must be a positive number (a fraction in (0, 1])\n" },
    { "workload.data.A={model: banded, rows: 1000, cols: 1000, bandwidth: 3, density: .nan}",
      "--set:1:80: error: 'density' must be a positive number (a fraction in (0, 1])\n" },
    { "workload.data.A={model: banded, rows: 1000, cols: 1000, bandwidth: 3, density: 2}",
      "--set:1:80: error: 'density' must be at most 1\n" },
    { "workload.data.A={model: uniform, rows: .inf, cols: 1000, nnz: 5}",
      "--set:1:40: error: 'rows' must be a positive integer\n" },
    { "workload.data.A={model: nm, rows: 1000, cols: 1000, n: .nan, m: 4}",
      "--set:1:56: error: 'n' must be a positive integer\n" },
};

START_TEST(bad_spec_values_have_positions)
{
    const set_case *c = &bad_sets[_i];
    tessel_spec *s = NULL;
    char buf[4096];
    int rc = load_with(c->set, &s, buf, sizeof(buf));
    ck_assert_msg(rc < 0, "--set %s was accepted", c->set);
    ck_assert_ptr_null(s);
    ck_assert_msg(strcmp(buf, c->expect) == 0, "--set %s:\ngot:\n%sexpected:\n%s", c->set, buf,
                  c->expect);
}
END_TEST

/* The equal-share case needs a 2-byte LLB without the spec's partitions. */
START_TEST(equal_share_below_one_byte)
{
    const char *sets[2] = { "LLB.capacity=2B", "LLB.tensors={}" };
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    tessel_spec *s = NULL;
    int rc = tessel_spec_load(EXTENSOR, sets, 2, NULL, &s, &l);
    char buf[4096];
    format_all(&l, buf, sizeof(buf));
    ck_assert_int_eq(rc, TESSEL_EINVAL);
    ck_assert_str_eq(buf, "--set:1:14: error: level 'LLB' of 2 bytes leaves less than one byte "
                          "to 'Z' (an equal share of 3 tensors)\n"
                          "--set:1:14: error: level 'LLB' of 2 bytes leaves less than one byte "
                          "to 'A' (an equal share of 3 tensors)\n"
                          "--set:1:14: error: level 'LLB' of 2 bytes leaves less than one byte "
                          "to 'B' (an equal share of 3 tensors)\n");
    tessel_diag_list_free(&l);
    /* Three bytes give each tensor one. */
    sets[0] = "LLB.capacity=3B";
    s = load_ok(sets, 2);
    tessel_spec_free(&s);
}
END_TEST

/* Sizes up to 2^64 - 1 bytes, in every unit. */
START_TEST(petabyte_capacities)
{
    static const struct {
        const char *set;
        uint64_t bytes;
    } ok[] = {
        { "LLB.capacity=4PB", 4000000000000000ull },
        { "LLB.capacity=4PiB", 4ull << 50 },
        { "LLB.capacity=15EiB", 15ull << 60 },
        { "LLB.capacity=18EB", 18000000000000000000ull },
        { "LLB.capacity=1.5EiB", 3ull << 59 },
        { "LLB.capacity=18446744073709551615", UINT64_MAX },
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        tessel_spec *s = load_ok(&ok[i].set, 1);
        ck_assert_msg(s->level[1].capacity == ok[i].bytes, "%s: capacity %llu", ok[i].set,
                      (unsigned long long)s->level[1].capacity);
        tessel_spec_free(&s);
    }
    uint64_t b = 0;
    ck_assert_int_eq(tessel_parse_size("19EB", &b), TESSEL_ERANGE);
    ck_assert_int_eq(tessel_parse_size("16EiB", &b), TESSEL_ERANGE);
    ck_assert_int_eq(tessel_parse_size("1PB", &b), 0);
    ck_assert_uint_eq(b, 1000000000000000ull);
    ck_assert_int_eq(tessel_parse_size("0.5EiB", &b), 0);
    ck_assert_uint_eq(b, 1ull << 59);
    /* A petabyte buffer never overflows: the same traffic as 30 MiB (every
     * G51 tile fits both), no bumped bytes. */
    const char *big = "LLB.capacity=4PB";
    tessel_result r0 = estimate(NULL, 0), r1 = estimate(&big, 1);
    assert_same_result(&r0, &r1);
    /* And a 100% partition of 2^64 - 1 bytes is no integer overflow. */
    const char *all[2] = { "LLB.capacity=18446744073709551615",
                           "LLB.tensors={A: {partition: 100%}}" };
    tessel_spec *s = load_ok(all, 2);
    tessel_spec_free(&s);
}
END_TEST

/* Tiles larger than the tensor cover it whole: the same result as a tile
 * of exactly its extent, up to 2^64 - 1. */
START_TEST(tiles_larger_than_the_tensor)
{
    const char *exact[1] = { "mapping.LLB.tile=i:1000,k:1000,j:1000" };
    tessel_result ref = estimate(exact, 1);
    static const char *const bigger[] = {
        "mapping.LLB.tile=i:1024,k:1024,j:1024",
        "mapping.LLB.tile=i:4294967296,k:4294967296,j:4294967296",
        "mapping.LLB.tile=i:9223372036854775808,k:9223372036854775808,j:9223372036854775808",
        "mapping.LLB.tile=i:18446744073709551615,k:18446744073709551615,j:18446744073709551615",
    };
    for (size_t i = 0; i < sizeof(bigger) / sizeof(bigger[0]); i++) {
        tessel_result r = estimate(&bigger[i], 1);
        assert_same_result(&ref, &r);
    }
    /* Both levels at 2^64 - 1: everything is one tile at every level. */
    const char *both[2] = {
        "mapping.LLB.tile=i:18446744073709551615,k:18446744073709551615,j:18446744073709551615",
        "mapping.PEB.tile=i:18446744073709551615,k:18446744073709551615,j:18446744073709551615"
    };
    tessel_result r = estimate(both, 2);
    ck_assert_uint_eq(r.dram_bytes, r.compulsory_bytes);
    ck_assert_uint_eq(r.macs, ref.macs);
    /* An inner tile larger than its outer one does not nest (it is cut to
     * the extent, 1000, first). */
    const char *inner = "mapping.PEB.tile=i:2000,k:16,j:64";
    char buf[1024];
    ck_assert_int_eq(estimate_error(&inner, 1, buf, sizeof(buf)), TESSEL_EINVAL);
    ck_assert_str_eq(buf, "specs/extensor.yaml:43:7: error: tiles must nest: i:64 at LLB is not "
                          "a multiple of i:1000 at PEB");
}
END_TEST

/* Extreme but valid numbers give finite results where the arithmetic
 * allows, and IEEE infinities (written as empty fields) otherwise. */
START_TEST(extreme_clock_keeps_time_finite)
{
    const char *fast = "architecture.compute.clock=1e300GHz";
    tessel_spec *s = load_ok(&fast, 1);
    double bytes[TESSEL_SPEC_MAX_LEVELS] = { 2823660, 0, 0 };
    tessel_roofline r;
    tessel_roofline_evaluate(s, 306840, bytes, &r);
    /* DRAM bound: 2823660 B at 68.25 GB/s whatever the clock. */
    ck_assert_int_eq(r.bound, 0);
    ck_assert_msg(isfinite(r.seconds) && fabs(r.seconds - 2823660 / 68.25e9) < 1e-15,
                  "seconds %g", r.seconds);
    tessel_spec_free(&s);
    const char *slow = "architecture.compute.clock=1e-300GHz";
    s = load_ok(&slow, 1);
    tessel_roofline_evaluate(s, 306840, bytes, &r);
    ck_assert_int_eq(r.bound, -1);
    ck_assert(isfinite(r.seconds) && r.seconds > 1e270);
    tessel_spec_free(&s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* YAML */

static int yaml_error(const char *text, size_t len, char *buf, size_t n)
{
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_yaml_parse("t.yaml", text, len, NULL, &doc, &d);
    ck_assert_ptr_null(doc);
    tessel_diag_format(&d, buf, n);
    return rc;
}

START_TEST(deeply_nested_yaml)
{
    size_t depth = 10000;
    char *text = malloc(4 * depth + 16);
    ck_assert_ptr_nonnull(text);
    char buf[1024];
    /* flow sequences */
    memset(text, '[', depth);
    memset(text + depth, ']', depth);
    ck_assert_int_eq(yaml_error(text, 2 * depth, buf, sizeof(buf)), TESSEL_ERANGE);
    ck_assert_str_eq(buf, "t.yaml:1:65: error: nesting deeper than 64 levels");
    /* unclosed */
    ck_assert_int_eq(yaml_error(text, depth, buf, sizeof(buf)), TESSEL_ERANGE);
    ck_assert_str_eq(buf, "t.yaml:1:65: error: nesting deeper than 64 levels");
    /* flow mappings {a: {a: ...}} */
    size_t len = 0;
    for (size_t i = 0; i < depth; i++)
        len += (size_t)sprintf(text + len, "{a: ");
    ck_assert_int_eq(yaml_error(text, len, buf, sizeof(buf)), TESSEL_ERANGE);
    ck_assert_str_eq(buf, "t.yaml:1:257: error: nesting deeper than 64 levels");
    free(text);
    /* block sequences, one level per line */
    size_t lines = 3000;
    text = malloc(lines * (lines + 4));
    ck_assert_ptr_nonnull(text);
    len = 0;
    for (size_t i = 0; i < lines; i++) {
        memset(text + len, ' ', i);
        len += i;
        len += (size_t)sprintf(text + len, "-\n");
    }
    ck_assert_int_eq(yaml_error(text, len, buf, sizeof(buf)), TESSEL_ERANGE);
    ck_assert_str_eq(buf, "t.yaml:65:65: error: nesting deeper than 64 levels");
    free(text);
    /* The same as a spec file: the error, nothing else. */
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    tessel_spec *s = NULL;
    text = malloc(2 * depth + 32);
    ck_assert_ptr_nonnull(text);
    len = (size_t)sprintf(text, "name: x\nworkload: ");
    memset(text + len, '[', depth);
    memset(text + len + depth, ']', depth);
    len += 2 * depth;
    ck_assert_int_eq(tessel_spec_parse("deep.yaml", text, len, NULL, 0, NULL, &s, &l),
                     TESSEL_ERANGE);
    format_all(&l, buf, sizeof(buf));
    ck_assert_str_eq(buf, "deep.yaml:2:74: error: nesting deeper than 64 levels\n");
    tessel_diag_list_free(&l);
    free(text);
}
END_TEST

START_TEST(huge_yaml_keys)
{
    /* A 10 MB plain key: libyaml's limit for implicit keys is 1024
     * characters; the message says so, at the key. */
    size_t n = 10u << 20;
    char *text = malloc(n + 64);
    ck_assert_ptr_nonnull(text);
    size_t len = (size_t)sprintf(text, "name: x\n");
    memset(text + len, 'k', n);
    len += n;
    len += (size_t)sprintf(text + len, ": 1\n");
    char buf[1024];
    ck_assert_int_eq(yaml_error(text, len, buf, sizeof(buf)), TESSEL_EPARSE);
    ck_assert_str_eq(buf, "t.yaml:2:1: error: a mapping key longer than 1024 characters "
                          "(YAML's limit for a key written without '?')");
    /* 1025 characters: the same; 1024: a key. */
    len = (size_t)sprintf(text, "name: x\n");
    memset(text + len, 'k', 1025);
    len += 1025;
    len += (size_t)sprintf(text + len, ": 1\n");
    ck_assert_int_eq(yaml_error(text, len, buf, sizeof(buf)), TESSEL_EPARSE);
    ck_assert_ptr_nonnull(strstr(buf, "t.yaml:2:1: error: a mapping key longer than 1024"));
    len = (size_t)sprintf(text, "name: x\n");
    memset(text + len, 'k', 1024);
    len += 1024;
    len += (size_t)sprintf(text + len, ": 1\n");
    tessel_yaml_doc *doc = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_yaml_parse("t.yaml", text, len, NULL, &doc, &d), 0);
    ck_assert_uint_eq(tessel_yaml_root(doc)->keys[1]->length, 1024);
    tessel_yaml_free(&doc);
    /* An explicit key ('? ') of 1 MB parses; in a spec it is an unknown
     * key, shown shortened and without a far-fetched suggestion. */
    n = 1u << 20;
    len = (size_t)sprintf(text, "? ");
    memset(text + len, 'k', n);
    len += n;
    len += (size_t)sprintf(text + len, "\n: 1\n");
    tessel_diag_list l;
    tessel_diag_list_init(&l, NULL);
    tessel_spec *s = NULL;
    ck_assert_int_eq(tessel_spec_parse("key.yaml", text, len, NULL, 0, NULL, &s, &l),
                     TESSEL_EINVAL);
    format_all(&l, buf, sizeof(buf));
    ck_assert_str_eq(buf, "key.yaml:1:1: error: missing 'workload' (the einsum and its data)\n"
                          "key.yaml:1:1: error: missing 'architecture' (levels and compute)\n"
                          "key.yaml:1:3: error: unknown key "
                          "'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk'\n");
    tessel_diag_list_free(&l);
    free(text);
    /* A huge value is refused by its field's limit. */
    static const char *cands[] = { "name", "workload" };
    char word[301];
    memset(word, 'n', 300);
    word[300] = '\0';
    ck_assert_ptr_null(tessel_nearest_word(word, cands, 2));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Matrix Market and FROSTT headers */

/* A header line `size` and entries filling about 1 KB (or `entries`
 * entries when given) whose coordinates are within (rows, cols). */
static size_t mtx_text(char *buf, size_t cap, const char *size, uint64_t rows, uint64_t cols,
                       long entries)
{
    size_t len = (size_t)snprintf(buf, cap, "%%%%MatrixMarket matrix coordinate real general\n%s\n",
                                  size);
    for (long k = 0; entries < 0 ? len < 1024 : k < entries; k++) {
        uint64_t r = k % 2 ? rows - (uint64_t)k / 2 : (uint64_t)k / 2 + 1;
        uint64_t c = k % 2 ? cols - (uint64_t)k / 2 : (uint64_t)k / 2 + 1;
        len += (size_t)snprintf(buf + len, cap - len, "%llu %llu 1.5\n", (unsigned long long)r,
                                (unsigned long long)c);
    }
    return len;
}

typedef struct header_case {
    const char *size;
    uint64_t rows, cols;
    long entries; /* -1: fill 1 KB */
    int code;
    const char *expect; /* formatted diagnostic, or NULL for success */
} header_case;

static const header_case headers[] = {
    /* 10^10 everything over 1 KB */
    { "10000000000 10000000000 10000000000", 10000000000ull, 10000000000ull, -1, TESSEL_ERANGE,
      "h.mtx:2: error: matrix of 10000000000 x 10000000000 exceeds tessel's limit of 4294967295 "
      "per dimension" },
    /* 10^10 entries claimed for 10^10 positions, 1 KB given */
    { "100000 100000 10000000000", 100000, 100000, -1, TESSEL_EPARSE,
      "h.mtx:77: error: file ends after 75 of the 10000000000 entries declared on line 2 (is it "
      "truncated?)" },
    { "100 100 10000000000", 1, 1, -1, TESSEL_EPARSE,
      "h.mtx:2: error: 10000000000 entries declared for a 100 x 100 matrix, which has only 10000 "
      "positions" },
    /* near 2^31 and 2^32: refused as hypersparse (a row pointer per row),
     * at the size line */
    { "2147483647 2147483647 40", 2147483647ull, 2147483647ull, 40, TESSEL_ERANGE,
      "h.mtx:2: error: 2147483647 rows for only 40 entries: tessel stores one pointer per row "
      "(16.0 GiB here), which it refuses for such hypersparse input" },
    { "2147483648 2147483648 40", 2147483648ull, 2147483648ull, 40, TESSEL_ERANGE,
      "h.mtx:2: error: 2147483648 rows for only 40 entries: tessel stores one pointer per row "
      "(16.0 GiB here), which it refuses for such hypersparse input" },
    { "4294967295 40 40", 4294967295ull, 40, 40, TESSEL_ERANGE,
      "h.mtx:2: error: 4294967295 rows for only 40 entries: tessel stores one pointer per row "
      "(32.0 GiB here), which it refuses for such hypersparse input" },
    { "4294967296 40 40", 4294967296ull, 40, 40, TESSEL_ERANGE,
      "h.mtx:2: error: matrix of 4294967296 x 40 exceeds tessel's limit of 4294967295 per "
      "dimension" },
    /* wide matrices are fine: columns cost nothing */
    { "40 2147483648 40", 40, 2147483648ull, 40, 0, NULL },
    { "40 4294967295 40", 40, 4294967295ull, 40, 0, NULL },
    { "40 4294967296 40", 40, 4294967296ull, 40, TESSEL_ERANGE,
      "h.mtx:2: error: matrix of 40 x 4294967296 exceeds tessel's limit of 4294967295 per "
      "dimension" },
    /* near 2^63 and 2^64 */
    { "9223372036854775807 5 40", 1, 1, 40, TESSEL_ERANGE,
      "h.mtx:2: error: matrix of 9223372036854775807 x 5 exceeds tessel's limit of 4294967295 "
      "per dimension" },
    { "9223372036854775808 9223372036854775808 40", 1, 1, 40, TESSEL_ERANGE,
      "h.mtx:2: error: matrix of 9223372036854775808 x 9223372036854775808 exceeds tessel's "
      "limit of 4294967295 per dimension" },
    { "18446744073709551615 5 40", 1, 1, 40, TESSEL_ERANGE,
      "h.mtx:2: error: matrix of 18446744073709551615 x 5 exceeds tessel's limit of 4294967295 "
      "per dimension" },
    { "18446744073709551616 5 40", 1, 1, 40, TESSEL_EPARSE,
      "h.mtx:2: error: the row count on the size line is too large" },
    { "40 40 9223372036854775808", 40, 40, 40, TESSEL_EPARSE,
      "h.mtx:2: error: 9223372036854775808 entries declared for a 40 x 40 matrix, which has only "
      "1600 positions" },
    { "40 40 18446744073709551616", 40, 40, 40, TESSEL_EPARSE,
      "h.mtx:2: error: the entry count on the size line is too large" },
    { "4294967295 4294967295 18446744073709551615", 1, 1, 40, TESSEL_EPARSE,
      "h.mtx:2: error: 18446744073709551615 entries declared for a 4294967295 x 4294967295 "
      "matrix, which has only 18446744065119617025 positions" },
};

START_TEST(matrix_market_headers)
{
    const header_case *c = &headers[_i];
    char *text = malloc(1 << 16);
    ck_assert_ptr_nonnull(text);
    size_t len = mtx_text(text, 1 << 16, c->size, c->rows, c->cols, c->entries);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_tensor *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_tensor_parse_mtx("h.mtx", text, len, NULL, &ta.allocator, &t, &d);
    char buf[1024];
    tessel_diag_format(&d, buf, sizeof(buf));
    if (c->expect) {
        ck_assert_msg(rc == c->code, "%s: rc %d (%s)", c->size, rc, buf);
        ck_assert_ptr_null(t);
        ck_assert_str_eq(buf, c->expect);
    } else {
        ck_assert_msg(rc == 0, "%s: %s", c->size, buf);
        ck_assert_uint_eq(t->dims[0], c->rows);
        ck_assert_uint_eq(t->dims[1], c->cols);
        ck_assert_uint_eq(t->nnz, (uint64_t)c->entries);
        tessel_tensor_free(&t);
    }
    ck_assert_int_eq(ta.live, 0);
    /* Claims never turn into allocations: a 1 KB body costs kilobytes. */
    ck_assert_msg(ta.peak < (1u << 20), "%s: peak %zu bytes", c->size, ta.peak);
    free(text);
}
END_TEST

START_TEST(frostt_coordinates)
{
    static const struct {
        const char *text;
        const char *expect;
    } cases[] = {
        { "4294967296 3 2 1.0\n",
          "t.tns:1: error: index 1 exceeds tessel's limit of 4294967295 per mode" },
        { "3 9223372036854775808 2 1.0\n",
          "t.tns:1: error: index 2 exceeds tessel's limit of 4294967295 per mode" },
        { "3 2 18446744073709551616 1.0\n",
          "t.tns:1: error: index 3 exceeds tessel's limit of 4294967295 per mode" },
        { "4294967295 3 2 1.0\n",
          "t.tns: error: 4294967295 rows for only 1 entries: tessel stores one pointer per row "
          "(32.0 GiB here), which it refuses for such hypersparse input" },
        { "1 2 3 1e999\n", "t.tns:1: error: value is not a finite number" },
        { "1 1 1 1 1 1 1 1 1 1.0\n",
          "t.tns:1: error: first entry has 10 fields; a .tns line holds 1 to 8 indices and a "
          "value" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tessel_tensor *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_tensor_parse_tns("t.tns", cases[i].text, strlen(cases[i].text), NULL,
                                         NULL, &t, &d);
        char buf[1024];
        tessel_diag_format(&d, buf, sizeof(buf));
        ck_assert_msg(rc < 0, "%s accepted", cases[i].text);
        ck_assert_ptr_null(t);
        ck_assert_str_eq(buf, cases[i].expect);
    }
    /* The largest coordinate in the last modes is fine. */
    const char *wide = "1 4294967295 4294967295 2.0\n2 1 1 1.0\n";
    tessel_tensor *t = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_tensor_parse_tns("t.tns", wide, strlen(wide), NULL, NULL, &t, &d), 0);
    ck_assert_uint_eq(t->dims[1], 4294967295ull);
    ck_assert_uint_eq(t->dims[2], 4294967295ull);
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Energy tables */

START_TEST(energy_tables_refuse_non_finite_numbers)
{
    static const struct {
        const char *value;
        const char *expect;
    } cases[] = {
        { ".nan", "ert.yaml:6:47: error: 'energy' must be a number" },
        { ".inf", "ert.yaml:6:47: error: 'energy' must be a number" },
        { "-.inf", "ert.yaml:6:47: error: 'energy' must be a number" },
        { "1e400", "ert.yaml:6:47: error: 'energy' must be a number" },
        { "-1", "ert.yaml:6:47: error: 'energy' must be zero or positive" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[1024];
        int len = snprintf(text, sizeof(text),
                           "ERT:\n"
                           "  version: '0.4'\n"
                           "  tables:\n"
                           "    - name: system.LLB[1..1]\n"
                           "      actions:\n"
                           "        - {name: read, arguments: {}, energy: %s}\n",
                           cases[i].value);
        tessel_energy_db *db = NULL;
        tessel_diag_list l;
        tessel_diag_list_init(&l, NULL);
        int rc = tessel_energy_db_parse("ert.yaml", text, (size_t)len, NULL, &db, &l);
        ck_assert_msg(rc < 0, "energy %s accepted", cases[i].value);
        ck_assert_ptr_null(db);
        char buf[1024];
        format_all(&l, buf, sizeof(buf));
        char want[1100];
        snprintf(want, sizeof(want), "%s\n", cases[i].expect);
        ck_assert_str_eq(buf, want);
        tessel_diag_list_free(&l);
    }
}
END_TEST

/* ------------------------------------------------------------------ */

int main(void)
{
    Suite *s = suite_create("limits");
    TCase *spec = tcase_create("spec");
    tcase_set_timeout(spec, 120);
    tcase_add_loop_test(spec, bad_spec_values_have_positions, 0,
                        (int)(sizeof(bad_sets) / sizeof(bad_sets[0])));
    tcase_add_test(spec, equal_share_below_one_byte);
    tcase_add_test(spec, petabyte_capacities);
    tcase_add_test(spec, tiles_larger_than_the_tensor);
    tcase_add_test(spec, extreme_clock_keeps_time_finite);
    suite_add_tcase(s, spec);
    TCase *yaml = tcase_create("yaml");
    tcase_set_timeout(yaml, 60);
    tcase_add_test(yaml, deeply_nested_yaml);
    tcase_add_test(yaml, huge_yaml_keys);
    suite_add_tcase(s, yaml);
    TCase *data = tcase_create("data");
    tcase_add_loop_test(data, matrix_market_headers, 0,
                        (int)(sizeof(headers) / sizeof(headers[0])));
    tcase_add_test(data, frostt_coordinates);
    tcase_add_test(data, energy_tables_refuse_non_finite_numbers);
    suite_add_tcase(s, data);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

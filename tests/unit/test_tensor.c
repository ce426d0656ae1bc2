/* Unit tests of src/tensor: the coordinate builder, Matrix Market and .tns
 * readers (good and bad input), writers, loading real matrices, and
 * out-of-memory behaviour. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tessel/tensor.h"
#include "test_alloc.h"

#define DATA_DIR "../shared/data"

static tessel_tensor *parse_mtx_ok(const char *text, int drop_zeros)
{
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.drop_zeros = drop_zeros;
    tessel_tensor *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_tensor_parse_mtx("mem.mtx", text, strlen(text), &opt, NULL, &t, &d);
    ck_assert_msg(rc == TESSEL_OK, "parse failed: %s (line %llu)", d.message,
                  (unsigned long long)d.line);
    return t;
}

/* Value at (i, j) of a matrix, NAN if absent. */
static double at(const tessel_tensor *t, uint32_t i, uint32_t j)
{
    for (uint64_t k = t->ptr[i]; k < t->ptr[i + 1]; k++)
        if (t->idx[1][k] == j)
            return t->values ? t->values[k] : 1.0;
    return NAN;
}

/* The layout invariants every tensor must satisfy. */
static void check_invariants(const tessel_tensor *t)
{
    ck_assert_uint_eq(t->ptr[0], 0);
    ck_assert_uint_eq(t->ptr[t->dims[0]], t->nnz);
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        ck_assert_uint_le(t->ptr[r], t->ptr[r + 1]);
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            for (unsigned m = 1; m < t->order; m++)
                ck_assert_uint_lt(t->idx[m][k], t->dims[m]);
            if (k > t->ptr[r]) {
                int cmp = 0;
                for (unsigned m = 1; m < t->order && !cmp; m++)
                    cmp = (t->idx[m][k - 1] > t->idx[m][k]) - (t->idx[m][k - 1] < t->idx[m][k]);
                ck_assert_int_lt(cmp, 0);
            }
        }
    }
}

START_TEST(real_general)
{
    tessel_tensor *t = parse_mtx_ok("%%MatrixMarket matrix coordinate real general\n"
                                    "% comment\n\n"
                                    "3 4 4\n"
                                    "3 4 -2.5e1\n"
                                    "1 2 0.125\n"
                                    "% a comment between entries\n"
                                    "3 1 7\n"
                                    "2 2 1E-3\n",
                                    0);
    ck_assert_uint_eq(t->order, 2);
    ck_assert_uint_eq(t->dims[0], 3);
    ck_assert_uint_eq(t->dims[1], 4);
    ck_assert_uint_eq(t->nnz, 4);
    ck_assert_str_eq(t->field, "real");
    check_invariants(t);
    ck_assert_double_eq(at(t, 0, 1), 0.125);
    ck_assert_double_eq(at(t, 1, 1), 1e-3);
    ck_assert_double_eq(at(t, 2, 0), 7);
    ck_assert_double_eq(at(t, 2, 3), -25);
    tessel_tensor_free(&t);
    ck_assert_ptr_null(t);
}
END_TEST

START_TEST(symmetric_pattern)
{
    tessel_tensor *t = parse_mtx_ok("%%MatrixMarket matrix coordinate pattern symmetric\n"
                                    "4 4 4\n1 1\n2 1\n4 1\n4 3\n",
                                    0);
    ck_assert_uint_eq(t->nnz, 7);
    ck_assert_ptr_null(t->values);
    check_invariants(t);
    ck_assert(!isnan(at(t, 0, 1)) && !isnan(at(t, 1, 0)));
    ck_assert(!isnan(at(t, 0, 3)) && !isnan(at(t, 3, 0)));
    ck_assert(!isnan(at(t, 2, 3)) && !isnan(at(t, 3, 2)));
    ck_assert(isnan(at(t, 1, 1)));
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(skew_and_hermitian)
{
    tessel_tensor *t = parse_mtx_ok("%%MatrixMarket matrix coordinate real skew-symmetric\n"
                                    "3 3 2\n2 1 1.5\n3 2 -2\n",
                                    0);
    ck_assert_uint_eq(t->nnz, 4);
    ck_assert_double_eq(at(t, 1, 0), 1.5);
    ck_assert_double_eq(at(t, 0, 1), -1.5);
    ck_assert_double_eq(at(t, 2, 1), -2);
    ck_assert_double_eq(at(t, 1, 2), 2);
    tessel_tensor_free(&t);
    t = parse_mtx_ok("%%MatrixMarket matrix coordinate complex hermitian\n"
                     "3 3 2\n1 1 2 0\n3 1 3 4\n",
                     0);
    ck_assert_uint_eq(t->nnz, 3);
    ck_assert_double_eq(at(t, 2, 0), 5);
    ck_assert_double_eq(at(t, 0, 2), 5);
    ck_assert_double_eq(at(t, 0, 0), 2);
    ck_assert_str_eq(t->field, "complex");
    ck_assert_str_eq(t->symmetry, "hermitian");
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(duplicates_and_zeros)
{
    const char *text = "%%MatrixMarket matrix coordinate integer general\n"
                       "3 3 5\n1 1 1\n1 1 2\n2 2 0\n3 3 4\n3 3 -4\n";
    tessel_tensor *t = parse_mtx_ok(text, 0);
    ck_assert_uint_eq(t->nnz, 3);
    ck_assert_double_eq(at(t, 0, 0), 3);
    ck_assert_double_eq(at(t, 1, 1), 0);
    ck_assert_double_eq(at(t, 2, 2), 0);
    tessel_tensor_free(&t);
    t = parse_mtx_ok(text, 1);
    ck_assert_uint_eq(t->nnz, 1);
    ck_assert_double_eq(at(t, 0, 0), 3);
    check_invariants(t);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(crlf_and_blanks)
{
    tessel_tensor *t = parse_mtx_ok("%%MatrixMarket matrix coordinate real general\r\n"
                                    "\r\n  2 2 2  \r\n\t1 2 5\r\n 2 1 6 \r\n",
                                    0);
    ck_assert_uint_eq(t->nnz, 2);
    ck_assert_double_eq(at(t, 0, 1), 5);
    ck_assert_double_eq(at(t, 1, 0), 6);
    tessel_tensor_free(&t);
}
END_TEST

/* The fast decimal path must give the same double as strtod, bit for bit. */
START_TEST(number_parsing_matches_strtod)
{
    static const char *const samples[] = {
        "0",     "-0",          "1",          "0.1",          "0.3",        "1e22",
        "1e23",  "9007199254740993", "123456789012345678901", "4.9e-324", "1.7976931348623157e308",
        "2.5E-7", "-3.14159265358979", ".5", "5.", "+7", "1e-22", "1.000000000000000000001",
        "0.000001", "123.456e-3", "0x1p3", "inf", "nan", "-1.5e+10"
    };
    char text[256];
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        snprintf(text, sizeof(text), "%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 %s\n",
                 samples[i]);
        tessel_tensor *t = parse_mtx_ok(text, 0);
        double want = strtod(samples[i], NULL);
        if (isnan(want))
            ck_assert(isnan(t->values[0]));
        else
            ck_assert_msg(memcmp(&want, &t->values[0], sizeof(double)) == 0, "%s: %.17g vs %.17g",
                          samples[i], t->values[0], want);
        tessel_tensor_free(&t);
    }
    /* Edge cases: signs, leading zeros, 17+ digit mantissas, exact
     * midpoints between doubles, denormals and the normal range's ends. */
    static const char *const edges[] = {
        "000123.4500", "-0.0", "+.5e-3", "-00.000e+00", "0.1000000000000000055511151231257827",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.0000000000000002220446049250313080847263336181640625",
        "1.00000000000000033306690738754696212708950042724609375", "9007199254740995",
        "18014398509481986", "0.30000000000000004", "0.29999999999999999", "2.2250738585072011e-308",
        "2.2250738585072014e-308", "4.9406564584124654e-324", "1e-400", "123456789012345678",
        "1234567890123456789", "12345678901234567890", "0.12345678901234567e-5", "99999999999999999e10",
        "1.7976931348623157e308", "1.7976931348623158e308", "1e27", "1e28", "1e-27", "1e-28"
    };
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        snprintf(text, sizeof(text), "%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 %s\n",
                 edges[i]);
        tessel_tensor *t = parse_mtx_ok(text, 0);
        double want = strtod(edges[i], NULL);
        ck_assert_msg(memcmp(&want, &t->values[0], sizeof(double)) == 0, "%s: %.17g vs %.17g",
                      edges[i], t->values[0], want);
        tessel_tensor_free(&t);
    }
    /* Random doubles printed with 15 to 18 significant digits (%.17g is what
     * tessel gen and tessel convert write) over a wide exponent range. */
    unsigned long long g = 987654321;
    for (int i = 0; i < 30000; i++) {
        g = g * 6364136223846793005ull + 1442695040888963407ull;
        double x = ldexp((double)(g >> 11) / 9007199254740992.0, (int)((g >> 3) % 200) - 100);
        char num[64];
        snprintf(num, sizeof(num), "%.*g", 15 + (int)(g % 4), (g & 16) ? -x : x);
        snprintf(text, sizeof(text), "%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 %s\n",
                 num);
        tessel_tensor *t = parse_mtx_ok(text, 0);
        double want = strtod(num, NULL);
        ck_assert_msg(memcmp(&want, &t->values[0], sizeof(double)) == 0, "%s: %.17g vs %.17g",
                      num, t->values[0], want);
        tessel_tensor_free(&t);
    }
    /* Random decimals in the fast path's range and beyond it. */
    unsigned long long s = 12345;
    for (int i = 0; i < 20000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int digits = 1 + (int)((s >> 33) % 19);
        int exp10 = (int)((s >> 20) % 61) - 30;
        unsigned long long mant = (s >> 1) % 10000000000000000000ull;
        char num[64];
        snprintf(num, sizeof(num), "%.*llue%d", digits, mant % (unsigned long long)pow(10, digits),
                 exp10);
        snprintf(text, sizeof(text), "%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 %s\n",
                 num);
        tessel_tensor *t = parse_mtx_ok(text, 0);
        double want = strtod(num, NULL);
        ck_assert_msg(memcmp(&want, &t->values[0], sizeof(double)) == 0, "%s: %.17g vs %.17g",
                      num, t->values[0], want);
        tessel_tensor_free(&t);
    }
}
END_TEST

typedef struct bad_case {
    const char *text;
    int code;
    uint64_t line;
    const char *needle;
} bad_case;

static const bad_case bad_mtx[] = {
    { "", TESSEL_EPARSE, 1, "empty file" },
    { "3 3 1\n1 1 1\n", TESSEL_EPARSE, 1, "not a Matrix Market file" },
    { "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", TESSEL_EPARSE, 1, "array" },
    { "%%MatrixMarket matrix coordinate real\n", TESSEL_EPARSE, 1, "lacks the symmetry" },
    { "%%MatrixMarket matrix coordinate pattern hermitian\n", TESSEL_EPARSE, 1, "complex" },
    { "%%MatrixMarket matrix coordinate real general\n% no size\n", TESSEL_EPARSE, 2,
      "before the size line" },
    { "%%MatrixMarket matrix coordinate real general\n3 3\n", TESSEL_EPARSE, 2, "entry count" },
    { "%%MatrixMarket matrix coordinate real general\n3 3 1 1\n", TESSEL_EPARSE, 2,
      "exactly three" },
    { "%%MatrixMarket matrix coordinate real general\n4294967296 2 0\n", TESSEL_ERANGE, 2,
      "exceeds" },
    { "%%MatrixMarket matrix coordinate real general\n99999999999999999999999 2 0\n",
      TESSEL_EPARSE, 2, "too large" },
    { "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n", TESSEL_EPARSE, 3,
      "1 of the 3" },
    { "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 2\n", TESSEL_EPARSE, 4,
      "more entries" },
    { "%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n", TESSEL_EPARSE, 3,
      "index 0" },
    { "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1\n", TESSEL_EPARSE, 3,
      "column index 3 is out of range" },
    { "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 x\n", TESSEL_EPARSE, 3,
      "not a number" },
    { "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1 1\n", TESSEL_EPARSE, 3,
      "extra field" },
    { "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1e999\n", TESSEL_EPARSE, 3,
      "finite" },
    { "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", TESSEL_EPARSE, 3,
      "extra field" },
    { "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", TESSEL_EPARSE, 2,
      "square" },
    { "%%MatrixMarket matrix coordinate real general\n2 2 10000000000\n1 1 1\n", TESSEL_EPARSE,
      2, "positions" },
};

START_TEST(bad_matrix_market)
{
    const bad_case *c = &bad_mtx[_i];
    tessel_tensor *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_tensor_parse_mtx("bad.mtx", c->text, strlen(c->text), NULL, NULL, &t, &d);
    ck_assert_int_eq(rc, c->code);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(d.file, "bad.mtx");
    ck_assert_msg(d.line == c->line, "case %d: line %llu, expected %llu (%s)", _i,
                  (unsigned long long)d.line, (unsigned long long)c->line, d.message);
    ck_assert_msg(strstr(d.message, c->needle), "case %d: '%s' lacks '%s'", _i, d.message,
                  c->needle);
}
END_TEST

START_TEST(tns_reader)
{
    const char *text = "# comment\n1 1 1 1.0\n2 3 4 2.0\n\n2 3 1 -1\n2 3 4 3.0\n";
    tessel_tensor *t = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_tensor_parse_tns("t.tns", text, strlen(text), NULL, NULL, &t, &d),
                     TESSEL_OK);
    ck_assert_uint_eq(t->order, 3);
    ck_assert_uint_eq(t->dims[0], 2);
    ck_assert_uint_eq(t->dims[1], 3);
    ck_assert_uint_eq(t->dims[2], 4);
    ck_assert_uint_eq(t->nnz, 3);
    check_invariants(t);
    /* Slice 1 holds (3,1) then (3,4) = 2 + 3 summed. */
    ck_assert_uint_eq(t->ptr[1], 1);
    ck_assert_uint_eq(t->idx[2][1], 0);
    ck_assert_uint_eq(t->idx[2][2], 3);
    ck_assert_double_eq(t->values[2], 5.0);
    tessel_tensor_free(&t);

    const char *eight = "1 2 3 4 5 6 7 8 1.5\n";
    ck_assert_int_eq(tessel_tensor_parse_tns("t.tns", eight, strlen(eight), NULL, NULL, &t, &d),
                     TESSEL_OK);
    ck_assert_uint_eq(t->order, 8);
    ck_assert_uint_eq(t->dims[7], 8);
    tessel_tensor_free(&t);

    const char *one = "3 1.0\n1 2.0\n";
    ck_assert_int_eq(tessel_tensor_parse_tns("t.tns", one, strlen(one), NULL, NULL, &t, &d),
                     TESSEL_OK);
    ck_assert_uint_eq(t->order, 1);
    ck_assert_uint_eq(t->nnz, 2);
    tessel_tensor_free(&t);

    static const struct { const char *text; uint64_t line; const char *needle; } bad[] = {
        { "1 2 3 4 5 6 7 8 9 1.0\n", 1, "1 to 8 indices" },
        { "1 1 1.0\n1 1 1 1.0\n", 2, "more than 3 fields" },
        { "1 1 1 1.0\n1 1 1.0\n", 2, "expected 4" },
        { "1 0 1.0\n", 1, "index 2 is 0" },
        { "1 1 q\n", 1, "not a number" },
        { "# only a comment\n", 1, "empty file" },
        { "1 99999999999 1\n", 1, "exceeds" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tessel_diag_clear(&d);
        int rc = tessel_tensor_parse_tns("b.tns", bad[i].text, strlen(bad[i].text), NULL, NULL,
                                         &t, &d);
        ck_assert_int_ne(rc, TESSEL_OK);
        ck_assert_ptr_null(t);
        ck_assert_msg(d.line == bad[i].line && strstr(d.message, bad[i].needle),
                      "tns case %zu: line %llu '%s'", i, (unsigned long long)d.line, d.message);
    }
}
END_TEST

static void make_temp_dir(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/tessel-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(buf));
}

/* Writes `text` as one more gzip member at the end of path. */
static void gz_append(const char *path, const char *text)
{
    gzFile gz = gzopen(path, "ab");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzputs(gz, text), (int)strlen(text));
    gzclose(gz);
}

static void raw_append(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "ab");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* A matrix split over three gzip members loads whole; zero padding after
 * the last member is accepted (as gzip(1) does); bytes after a member that
 * do not start another member are an error naming the member, never a
 * silently shorter tensor (zlib's gzread would drop them). */
START_TEST(gzip_members_whole_or_error)
{
    char dir[64], path[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/m.mtx.gz", dir);
    const char *part[3] = { "%%MatrixMarket matrix coordinate real general\n3 3 3\n",
                            "1 1 1.5\n2 2 2.5\n", "3 3 3.5\n" };
    tessel_tensor *t = NULL;
    tessel_diag d;
    for (int i = 0; i < 3; i++)
        gz_append(path, part[i]);
    ck_assert_int_eq(tessel_tensor_load(path, NULL, NULL, &t, NULL, &d), TESSEL_OK);
    ck_assert_uint_eq(t->nnz, 3);
    tessel_tensor_free(&t);
    static const unsigned char zeros[64];
    raw_append(path, zeros, sizeof(zeros));
    ck_assert_int_eq(tessel_tensor_load(path, NULL, NULL, &t, NULL, &d), TESSEL_OK);
    ck_assert_uint_eq(t->nnz, 3);
    tessel_tensor_free(&t);

    unlink(path);
    gz_append(path, part[0]);
    gz_append(path, part[1]);
    raw_append(path, "3 3 3.5\n", 8); /* a third member without its gzip header */
    ck_assert_int_eq(tessel_tensor_load(path, NULL, NULL, &t, NULL, &d), TESSEL_EIO);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(d.message, "after gzip member 2"));
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(gzip_and_writers_round_trip)
{
    char dir[64], gz_path[128], mtx_path[128], tns_path[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(gz_path, sizeof(gz_path), "%s/a.mtx.gz", dir);
    snprintf(mtx_path, sizeof(mtx_path), "%s/b.mtx", dir);
    snprintf(tns_path, sizeof(tns_path), "%s/c.tns", dir);
    const char *text = "%%MatrixMarket matrix coordinate real general\n"
                       "5 6 4\n5 6 0.1\n1 1 -2\n3 2 1e-300\n2 5 123456.75\n";
    gzFile gz = gzopen(gz_path, "wb");
    ck_assert_ptr_nonnull(gz);
    ck_assert_int_eq(gzputs(gz, text), (int)strlen(text));
    gzclose(gz);

    tessel_tensor *a = NULL, *b = NULL, *c = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_tensor_load(gz_path, NULL, NULL, &a, NULL, &d), TESSEL_OK);
    ck_assert_uint_eq(a->nnz, 4);
    ck_assert_int_eq(tessel_tensor_write_mtx(a, mtx_path, &d), TESSEL_OK);
    ck_assert_int_eq(tessel_tensor_load(mtx_path, NULL, NULL, &b, NULL, &d), TESSEL_OK);
    ck_assert_int_eq(tessel_tensor_write_tns(a, tns_path, &d), TESSEL_OK);
    ck_assert_int_eq(tessel_tensor_load(tns_path, NULL, NULL, &c, NULL, &d), TESSEL_OK);
    ck_assert_uint_eq(b->nnz, a->nnz);
    ck_assert_uint_eq(c->nnz, a->nnz);
    ck_assert_mem_eq(a->ptr, b->ptr, (a->dims[0] + 1) * sizeof(uint64_t));
    ck_assert_mem_eq(a->idx[1], b->idx[1], a->nnz * sizeof(uint32_t));
    ck_assert_mem_eq(a->values, b->values, a->nnz * sizeof(double));
    ck_assert_mem_eq(a->idx[1], c->idx[1], a->nnz * sizeof(uint32_t));
    ck_assert_mem_eq(a->values, c->values, a->nnz * sizeof(double));
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    tessel_tensor_free(&c);
    unlink(gz_path);
    unlink(mtx_path);
    unlink(tns_path);
    rmdir(dir);
}
END_TEST


static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* A matrix text of n entries at pseudo-random positions of a 5000 x 5000
 * matrix (header included), in a buffer the caller frees. */
static char *random_mtx_text(unsigned n)
{
    size_t cap = 64 + (size_t)n * 40, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, cap, "%%%%MatrixMarket matrix coordinate real general\n"
                                       "5000 5000 %u\n", n);
    uint64_t x = 88172645463325252ull;
    for (unsigned e = 0; e < n; e++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        len += (size_t)snprintf(text + len, cap - len, "%u %u %.17g\n",
                                (unsigned)(x % 5000) + 1, (unsigned)(x >> 20) % 5000 + 1,
                                (double)(x >> 11) / 9007199254740992.0);
    }
    return text;
}

/* Inputs of 64 KiB and more are inflated ahead on a thread (gzpipe.c): a
 * several-block file in two members loads equal to the plain text, bit for
 * bit; a damaged third member and a cut-off stream are reported as the
 * synchronous reader reports them, after the bytes before them. */
START_TEST(gzip_read_ahead_equals_plain)
{
    char dir[64], gz_path[128], mtx_path[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(gz_path, sizeof(gz_path), "%s/big.mtx.gz", dir);
    snprintf(mtx_path, sizeof(mtx_path), "%s/big.mtx", dir);
    char *text = random_mtx_text(150000); /* about 6 MiB: more than the 4 blocks of 1 MiB */
    size_t len = strlen(text), cut = len / 2;
    while (text[cut - 1] != '\n')
        cut++;
    write_text(mtx_path, text);
    char keep = text[cut];
    text[cut] = '\0';
    gz_append(gz_path, text); /* member 1: the first half */
    text[cut] = keep;
    gz_append(gz_path, text + cut);
    struct stat st;
    ck_assert_int_eq(stat(gz_path, &st), 0);
    ck_assert_int_ge(st.st_size, 64 << 10); /* large enough for the read-ahead path */
    tessel_tensor *a = NULL, *b = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_tensor_load(gz_path, NULL, NULL, &a, NULL, &d), TESSEL_OK);
    ck_assert_int_eq(tessel_tensor_load(mtx_path, NULL, NULL, &b, NULL, &d), TESSEL_OK);
    ck_assert_uint_eq(a->nnz, b->nnz);
    ck_assert_mem_eq(a->ptr, b->ptr, (a->dims[0] + 1) * sizeof(uint64_t));
    ck_assert_mem_eq(a->idx[1], b->idx[1], a->nnz * sizeof(uint32_t));
    ck_assert_mem_eq(a->values, b->values, a->nnz * sizeof(double));
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);

    raw_append(gz_path, "3 3 3.5\n", 8); /* a third member without its gzip header */
    ck_assert_int_eq(tessel_tensor_load(gz_path, NULL, NULL, &a, NULL, &d), TESSEL_EIO);
    ck_assert_ptr_null(a);
    ck_assert_ptr_nonnull(strstr(d.message, "after gzip member 2"));
    ck_assert_uint_gt(d.line, 75000); /* met in the second member, as without read-ahead */

    ck_assert_int_eq(truncate(gz_path, st.st_size - 4096), 0);
    ck_assert_int_lt(tessel_tensor_load(gz_path, NULL, NULL, &a, NULL, &d), 0);
    ck_assert_ptr_null(a);
    ck_assert_ptr_nonnull(strstr(d.message, "truncated"));
    free(text);
    unlink(gz_path);
    unlink(mtx_path);
    rmdir(dir);
}
END_TEST


static void read_file(const char *path, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc(*size);
    ck_assert_uint_eq(fread(*data, 1, *size, f), *size);
    fclose(f);
}

static void check_same_tensor(const tessel_tensor *a, const tessel_tensor *b)
{
    ck_assert_uint_eq(a->order, b->order);
    ck_assert_mem_eq(a->dims, b->dims, sizeof(a->dims));
    ck_assert_uint_eq(a->nnz, b->nnz);
    ck_assert_mem_eq(a->ptr, b->ptr, (a->dims[0] + 1) * sizeof(uint64_t));
    for (unsigned m = 1; m < a->order && a->nnz; m++)
        ck_assert_mem_eq(a->idx[m], b->idx[m], a->nnz * sizeof(uint32_t));
    ck_assert_int_eq(a->values != NULL, b->values != NULL);
    if (a->values && a->nnz)
        ck_assert_mem_eq(a->values, b->values, a->nnz * sizeof(double));
    ck_assert_str_eq(a->field, b->field);
    ck_assert_str_eq(a->symmetry, b->symmetry);
}

/* Round trips of matrices and tensors, valued, pattern and empty. */
START_TEST(cache_round_trip)
{
    static const char *const texts[] = {
        "%%MatrixMarket matrix coordinate real symmetric\n5 5 4\n1 1 1.5\n3 1 -2\n5 4 7\n5 5 1\n",
        "%%MatrixMarket matrix coordinate pattern general\n4 9 3\n4 9\n1 1\n2 5\n",
        "%%MatrixMarket matrix coordinate real general\n3 3 0\n",
    };
    char dir[64], path[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/x.tsl", dir);
    tessel_diag d;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        tessel_tensor *a = parse_mtx_ok(texts[i], 0), *b = NULL;
        ck_assert_int_eq(tessel_cache_write(a, NULL, path, &d), TESSEL_OK);
        ck_assert_int_eq(tessel_cache_read(path, NULL, NULL, &b, &d), TESSEL_OK);
        check_same_tensor(a, b);
        tessel_tensor_free(&a);
        tessel_tensor_free(&b);
    }
    const char *tns = "1 2 3 4.5\n2 1 1 1\n2 1 3 2\n";
    tessel_tensor *a = NULL, *b = NULL;
    ck_assert_int_eq(tessel_tensor_parse_tns("t", tns, strlen(tns), NULL, NULL, &a, &d), 0);
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, &d), TESSEL_OK);
    ck_assert_int_eq(tessel_tensor_load(path, NULL, NULL, &b, NULL, &d), TESSEL_OK);
    check_same_tensor(a, b);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* pattern_only: a cache's and a text's tensor come without values, the
 * pattern the same; a cache's values are still checksummed. */
START_TEST(cache_pattern_only)
{
    char dir[64], path[128], text[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/x.tsl", dir);
    snprintf(text, sizeof(text), "%s/x.mtx", dir);
    const char *mtx = "%%MatrixMarket matrix coordinate real general\n"
                      "4 5 5\n1 1 1\n1 5 2\n2 3 3\n4 1 4\n4 4 5\n";
    write_text(text, mtx);
    tessel_tensor *a = parse_mtx_ok(mtx, 0), *b = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, &d), TESSEL_OK);
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.pattern_only = 1;
    const char *files[] = { path, text };
    for (unsigned f = 0; f < 2; f++) {
        ck_assert_int_eq(tessel_tensor_load(files[f], &opt, NULL, &b, NULL, &d), TESSEL_OK);
        ck_assert_ptr_null(b->values);
        ck_assert_str_eq(b->field, "real");
        ck_assert_uint_eq(b->nnz, a->nnz);
        ck_assert_mem_eq(b->ptr, a->ptr, (a->dims[0] + 1) * sizeof(uint64_t));
        ck_assert_mem_eq(b->idx[1], a->idx[1], a->nnz * sizeof(uint32_t));
        tessel_tensor_free(&b);
    }
    /* a flipped byte in the values (the file's last 8 * nnz bytes) */
    unsigned char *data;
    size_t size;
    read_file(path, &data, &size);
    data[size - 3] ^= 0x20;
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_uint_eq(fwrite(data, 1, size, fp), size);
    fclose(fp);
    ck_assert_int_eq(tessel_tensor_load(path, &opt, NULL, &b, NULL, &d), TESSEL_ECORRUPT);
    ck_assert_ptr_nonnull(strstr(d.message, "checksum"));
    ck_assert_ptr_null(b);
    free(data);
    tessel_tensor_free(&a);
    unlink(path);
    unlink(text);
    rmdir(dir);
}
END_TEST

/* Every truncation and every flipped byte of a cache is reported, never
 * trusted and never a crash. */
START_TEST(cache_corruption_detected)
{
    char dir[64], path[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/x.tsl", dir);
    tessel_tensor *a = parse_mtx_ok("%%MatrixMarket matrix coordinate real general\n"
                                    "4 5 5\n1 1 1\n1 5 2\n2 3 3\n4 1 4\n4 4 5\n",
                                    0);
    tessel_diag d;
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, &d), TESSEL_OK);
    unsigned char *data;
    size_t size;
    read_file(path, &data, &size);
    tessel_tensor *b = NULL;
    ck_assert_int_eq(tessel_cache_parse("m", data, size, NULL, &b, &d), TESSEL_OK);
    check_same_tensor(a, b);
    tessel_tensor_free(&b);
    for (size_t n = 0; n < size; n++) {
        test_alloc ta;
        test_alloc_init(&ta, 0);
        ck_assert_int_eq(tessel_cache_parse("m", data, n, &ta.allocator, &b, &d),
                         TESSEL_ECORRUPT);
        ck_assert_ptr_null(b);
        ck_assert_int_eq(ta.live, 0);
    }
    for (size_t i = 0; i < size; i++) {
        data[i] ^= 0x20;
        ck_assert_int_eq(tessel_cache_parse("m", data, size, NULL, &b, &d), TESSEL_ECORRUPT);
        ck_assert_ptr_nonnull(strstr(d.message, "corrupt cache"));
        data[i] ^= 0x20;
    }
    free(data);
    tessel_tensor_free(&a);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* --cache: built once, then used; rebuilt after the source changes or the
 * cache is damaged; a stale cache read with an expectation is refused. */
START_TEST(cache_policy)
{
    char dir[64], src[128], cache[160];
    make_temp_dir(dir, sizeof(dir));
    snprintf(src, sizeof(src), "%s/m.mtx", dir);
    write_text(src, "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n3 2 2\n");
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.cache_policy = TESSEL_CACHE_USE;
    ck_assert_int_eq(tessel_cache_path_for(src, &opt, cache, sizeof(cache)), TESSEL_OK);
    tessel_tensor *t = NULL;
    tessel_diag d;
    int origin = -1;
    ck_assert_int_eq(tessel_tensor_load(src, &opt, NULL, &t, &origin, &d), TESSEL_OK);
    ck_assert_int_eq(origin, TESSEL_LOADED_CACHE_REBUILT);
    tessel_tensor_free(&t);
    ck_assert_int_eq(tessel_tensor_load(src, &opt, NULL, &t, &origin, &d), TESSEL_OK);
    ck_assert_int_eq(origin, TESSEL_LOADED_CACHE);
    ck_assert_uint_eq(t->nnz, 2);
    tessel_tensor_free(&t);

    /* A different load option is a different cache identity. */
    tessel_cache_source expect;
    opt.drop_zeros = 1;
    ck_assert_int_eq(tessel_cache_source_of(src, &opt, &expect, &d), TESSEL_OK);
    ck_assert_int_eq(tessel_cache_read(cache, &expect, NULL, &t, &d), TESSEL_ESTALE);
    opt.drop_zeros = 0;

    /* The source changes (size and mtime): the cache is rebuilt. */
    sleep(1);
    write_text(src, "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n3 2 2\n2 2 5\n");
    ck_assert_int_eq(tessel_tensor_load(src, &opt, NULL, &t, &origin, &d), TESSEL_OK);
    ck_assert_int_eq(origin, TESSEL_LOADED_CACHE_REBUILT);
    ck_assert_uint_eq(t->nnz, 3);
    tessel_tensor_free(&t);

    /* A damaged cache is rebuilt, not trusted. */
    FILE *f = fopen(cache, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 300, SEEK_SET);
    fputc(0x55, f);
    fclose(f);
    ck_assert_int_eq(tessel_tensor_load(src, &opt, NULL, &t, &origin, &d), TESSEL_OK);
    ck_assert_int_eq(origin, TESSEL_LOADED_CACHE_REBUILT);
    ck_assert_uint_eq(t->nnz, 3);
    tessel_tensor_free(&t);

    /* A cache directory: NAME-HASH.tsl there. */
    char cache_dir[128], listing[256];
    snprintf(cache_dir, sizeof(cache_dir), "%s/caches", dir);
    ck_assert_int_eq(mkdir(cache_dir, 0755), 0);
    opt.cache_dir = cache_dir;
    ck_assert_int_eq(tessel_tensor_load(src, &opt, NULL, &t, &origin, &d), TESSEL_OK);
    ck_assert_int_eq(origin, TESSEL_LOADED_CACHE_REBUILT);
    tessel_tensor_free(&t);
    ck_assert_int_eq(tessel_tensor_load(src, &opt, NULL, &t, &origin, &d), TESSEL_OK);
    ck_assert_int_eq(origin, TESSEL_LOADED_CACHE);
    tessel_tensor_free(&t);
    snprintf(listing, sizeof(listing), "rm -rf %s", dir);
    ck_assert_int_eq(system(listing), 0);
}
END_TEST

START_TEST(cache_out_of_memory)
{
    tessel_tensor *a = parse_mtx_ok("%%MatrixMarket matrix coordinate real general\n"
                                    "4 5 3\n1 1 1\n2 3 3\n4 4 5\n",
                                    0);
    char dir[64], path[128];
    make_temp_dir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/x.tsl", dir);
    ck_assert_int_eq(tessel_cache_write(a, NULL, path, NULL), TESSEL_OK);
    int succeeded = 0;
    for (long n = 1; n < 50 && !succeeded; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_tensor *b = NULL;
        int rc = tessel_cache_read(path, NULL, &ta.allocator, &b, NULL);
        ck_assert(rc == TESSEL_OK || rc == TESSEL_ENOMEM);
        succeeded = rc == TESSEL_OK;
        tessel_tensor_free(&b);
        ck_assert_int_eq(ta.live, 0);
    }
    ck_assert(succeeded);
    tessel_tensor_free(&a);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(hypersparse_is_refused_cleanly)
{
    uint64_t dims[2] = { 4000000000ull, 4000000000ull };
    tessel_coo_builder *b = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, &d), TESSEL_OK);
    uint32_t c[2] = { 3999999999u, 7 };
    ck_assert_int_eq(tessel_coo_builder_add(b, c, 1), TESSEL_OK);
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, &d), TESSEL_ERANGE);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(d.message, "hypersparse"));
    tessel_coo_builder_free(&b);
}
END_TEST

/* Random entries with duplicates against a simple reference. */
START_TEST(builder_sorts_and_merges)
{
    enum { N = 20000, R = 97, C = 131 };
    static double dense[R][C];
    static int present[R][C];
    memset(dense, 0, sizeof(dense));
    memset(present, 0, sizeof(present));
    uint64_t dims[2] = { R, C };
    tessel_coo_builder *b = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 1, NULL, &b, &d), TESSEL_OK);
    unsigned long long s = 99;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ull + 1;
        uint32_t c[2] = { (uint32_t)((s >> 20) % R), (uint32_t)((s >> 40) % C) };
        double v = (double)((s >> 8) % 7) - 3;
        dense[c[0]][c[1]] += v;
        present[c[0]][c[1]] = 1;
        ck_assert_int_eq(tessel_coo_builder_add(b, c, v), TESSEL_OK);
    }
    uint32_t outside[2] = { R, 0 };
    ck_assert_int_eq(tessel_coo_builder_add(b, outside, 1), TESSEL_ERANGE);
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, &d), TESSEL_OK);
    tessel_coo_builder_free(&b);
    check_invariants(t);
    uint64_t expect = 0;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            if (present[i][j]) {
                expect++;
                ck_assert_double_eq(at(t, (uint32_t)i, (uint32_t)j), dense[i][j]);
            }
    ck_assert_uint_eq(t->nnz, expect);
    tessel_tensor_free(&t);
}
END_TEST

/* Fail every allocation in turn: a clean TESSEL_ENOMEM and nothing leaked. */
START_TEST(out_of_memory_every_allocation)
{
    const char *text = "%%MatrixMarket matrix coordinate real symmetric\n"
                       "6 6 6\n1 1 1\n2 1 2\n6 1 3\n6 5 4\n2 1 5\n4 4 0\n";
    int succeeded = 0;
    for (long n = 1; n < 200 && !succeeded; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_tensor *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_tensor_parse_mtx("oom.mtx", text, strlen(text), NULL, &ta.allocator, &t,
                                         &d);
        if (rc == TESSEL_OK) {
            ck_assert_uint_eq(t->nnz, 8); /* (2,1) twice merges */
            tessel_tensor_free(&t);
            succeeded = 1;
        } else {
            ck_assert_int_eq(rc, TESSEL_ENOMEM);
            ck_assert_ptr_null(t);
            ck_assert_str_eq(d.file, "oom.mtx");
        }
        ck_assert_int_eq(ta.live, 0);
    }
    ck_assert(succeeded);
}
END_TEST

static tessel_tensor *parse_with_threads(const char *text, size_t len, int threads,
                                         int drop_zeros, int *rc, tessel_diag *d)
{
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.parse_threads = threads;
    opt.drop_zeros = drop_zeros;
    tessel_tensor *t = NULL;
    tessel_diag_clear(d);
    *rc = tessel_tensor_parse_mtx("chunk.mtx", text, len, &opt, NULL, &t, d);
    return t;
}

/* Two tensors equal bit for bit: extents, pointers, indices, values, field
 * and symmetry. */
static void assert_same_tensor(const tessel_tensor *a, const tessel_tensor *b, const char *what)
{
    ck_assert_msg(a->order == b->order && a->nnz == b->nnz, "%s: nnz %llu vs %llu", what,
                  (unsigned long long)a->nnz, (unsigned long long)b->nnz);
    for (unsigned m = 0; m < a->order; m++)
        ck_assert_uint_eq(a->dims[m], b->dims[m]);
    ck_assert_msg(memcmp(a->ptr, b->ptr, (a->dims[0] + 1) * sizeof(uint64_t)) == 0, "%s: ptr",
                  what);
    if (a->nnz) {
        for (unsigned m = 1; m < a->order; m++)
            ck_assert_msg(memcmp(a->idx[m], b->idx[m], a->nnz * sizeof(uint32_t)) == 0,
                          "%s: idx of mode %u", what, m);
        ck_assert((a->values == NULL) == (b->values == NULL));
        if (a->values)
            ck_assert_msg(memcmp(a->values, b->values, a->nnz * sizeof(double)) == 0,
                          "%s: values", what);
    }
    ck_assert_str_eq(a->field, b->field);
    ck_assert_str_eq(a->symmetry, b->symmetry);
}

/* The chunked reader on each of the nt thread counts against the
 * single-pass one (parse_threads -1), on one text: the same tensor, or the
 * same error. */
static void check_threads(const char *text, size_t len, const char *what, const int *threads,
                          size_t nt)
{
    for (int drop = 0; drop <= 1; drop++) {
        int rc_ref;
        tessel_diag d_ref;
        tessel_tensor *ref = parse_with_threads(text, len, -1, drop, &rc_ref, &d_ref);
        for (size_t k = 0; k < nt; k++) {
            int rc;
            tessel_diag d;
            tessel_tensor *t = parse_with_threads(text, len, threads[k], drop, &rc, &d);
            ck_assert_msg(rc == rc_ref, "%s, %d threads: rc %d vs %d (%s)", what, threads[k], rc,
                          rc_ref, d.message);
            if (rc == TESSEL_OK) {
                check_invariants(t);
                assert_same_tensor(ref, t, what);
            } else {
                ck_assert_uint_eq(d.line, d_ref.line);
                ck_assert_str_eq(d.message, d_ref.message);
            }
            tessel_tensor_free(&t);
        }
        tessel_tensor_free(&ref);
    }
}

/* check_threads on 0 (all cores), 1, 2, 3, 7 and 64 threads. */
static void check_both_ways(const char *text, size_t len, const char *what)
{
    static const int threads[] = { 0, 1, 2, 3, 7, 64 };
    check_threads(text, len, what, threads, sizeof(threads) / sizeof(threads[0]));
}

START_TEST(chunked_reader_matches_single_pass)
{
    static const char *const texts[] = {
        "%%MatrixMarket matrix coordinate real general\n% c\n4 5 7\n1 1 1.5\n4 5 -2e3\n"
        "2 3 0.1\n\n  % inner comment\n2 3 0.2\n2 3 0.30000000000000004\n1 1 -1.5\n3 2 0\n",
        "%%MatrixMarket matrix coordinate real general\r\n3 3 3\r\n1 1 1\r\n2 2 2\r\n3 3 3",
        "%%MatrixMarket matrix coordinate integer symmetric\n4 4 5\n1 1 7\n2 1 -3\n4 1 9\n"
        "4 3 1\n2 1 4\n",
        "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 0.5\n3 1 -2.25\n",
        "%%MatrixMarket matrix coordinate pattern symmetric\n5 5 4\n1 1\n3 1\n5 2\n5 2\n",
        "%%MatrixMarket matrix coordinate pattern general\n3 3 0\n",
        "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 3 4\n",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        check_both_ways(texts[i], strlen(texts[i]), texts[i]);
    for (size_t i = 0; i < sizeof(bad_mtx) / sizeof(bad_mtx[0]); i++)
        check_both_ways(bad_mtx[i].text, strlen(bad_mtx[i].text), bad_mtx[i].text);
    /* A larger column-major file with duplicates, comments and every value
     * form, so that rows span chunks and duplicates sit in different ones. */
    size_t cap = 1u << 20, len = 0;
    char *big = malloc(cap);
    ck_assert_ptr_nonnull(big);
    len += (size_t)snprintf(big, cap, "%%%%MatrixMarket matrix coordinate real general\n"
                                      "97 89 6000\n");
    unsigned long long s = 42;
    for (int e = 0; e < 6000; e++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned i = 1 + (unsigned)((s >> 40) % 97), j = 1 + (unsigned)(e * 89 / 6000);
        double v = ldexp((double)(s >> 20) / 4294967296.0, (int)((s >> 8) % 40) - 20);
        if (e % 97 == 0)
            len += (size_t)snprintf(big + len, cap - len, "%% comment %d\n\n", e);
        if (e % 5 == 0)
            len += (size_t)snprintf(big + len, cap - len, "%u %u %d\n", i, j, (int)(s % 7) - 3);
        else
            len += (size_t)snprintf(big + len, cap - len, "%u %u %.*g\n", i, j,
                                    1 + (int)(s % 19), (s & 1) ? -v : v);
    }
    check_both_ways(big, len, "column-major 97x89");
    free(big);
}
END_TEST

/* Every shared matrix, decompressed into memory, parses to the same tensor
 * through the chunked reader (2 and 5 threads) and the single-pass one. */
START_TEST(shared_matrices_chunked_match)
{
    DIR *dir = opendir(DATA_DIR "/mtx");
    if (!dir)
        return; /* data not present: the wrapper reports the skip */
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dir))) {
        if (!strstr(e->d_name, ".mtx"))
            continue;
        char path[512];
        snprintf(path, sizeof(path), DATA_DIR "/mtx/%s", e->d_name);
        gzFile gz = gzopen(path, "rb");
        ck_assert_ptr_nonnull(gz);
        size_t cap = 1u << 20, len = 0;
        char *text = malloc(cap);
        int n;
        while (text && (n = gzread(gz, text + len, (unsigned)(cap - len))) > 0) {
            len += (size_t)n;
            if (len == cap)
                text = realloc(text, cap *= 2);
        }
        gzclose(gz);
        ck_assert_ptr_nonnull(text);
        tessel_tensor *ref = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        ck_assert_int_eq(tessel_tensor_read_mtx(path, NULL, NULL, &ref, &d), TESSEL_OK);
        for (int threads = 2; threads <= 5; threads += 3) {
            int rc;
            tessel_tensor *t = parse_with_threads(text, len, threads, 0, &rc, &d);
            ck_assert_msg(rc == TESSEL_OK, "%s: %s", path, d.message);
            assert_same_tensor(ref, t, path);
            tessel_tensor_free(&t);
        }
        tessel_tensor_free(&ref);
        free(text);
        files++;
    }
    closedir(dir);
    ck_assert_int_ge(files, 20);
}
END_TEST

/* The chunked .tns reader (1, 2 and 7 threads) against the single-pass
 * one, on one text: the same tensor, or the same error and line. */
static void check_tns_both_ways(const char *text, size_t len, const char *what)
{
    for (int drop = 0; drop <= 1; drop++) {
        tessel_load_options opt;
        tessel_load_options_init(&opt);
        opt.drop_zeros = drop;
        opt.parse_threads = -1;
        tessel_tensor *ref = NULL;
        tessel_diag d_ref;
        tessel_diag_clear(&d_ref);
        int rc_ref = tessel_tensor_parse_tns("chunk.tns", text, len, &opt, NULL, &ref, &d_ref);
        static const int threads[] = { 1, 2, 7 };
        for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
            tessel_tensor *t = NULL;
            tessel_diag d;
            tessel_diag_clear(&d);
            opt.parse_threads = threads[k];
            int rc = tessel_tensor_parse_tns("chunk.tns", text, len, &opt, NULL, &t, &d);
            ck_assert_msg(rc == rc_ref, "%s, %d threads: rc %d vs %d (%s)", what, threads[k], rc,
                          rc_ref, d.message);
            if (rc == TESSEL_OK) {
                check_invariants(t);
                assert_same_tensor(ref, t, what);
            } else {
                ck_assert_uint_eq(d.line, d_ref.line);
                ck_assert_str_eq(d.message, d_ref.message);
                ck_assert_str_eq(d.file, d_ref.file);
            }
            tessel_tensor_free(&t);
        }
        tessel_tensor_free(&ref);
    }
}

/* A generated .tns text of `order` modes: duplicates, explicit zeros,
 * comments and blank lines, rows in no order; into buf (cap bytes). */
static size_t make_tns_text(char *buf, size_t cap, unsigned order, int entries,
                            unsigned long long seed)
{
    size_t len = (size_t)snprintf(buf, cap, "# generated\n%% also a comment\n\n");
    for (int e = 0; e < entries; e++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        if (e % 101 == 0)
            len += (size_t)snprintf(buf + len, cap - len, "  # comment %d\n\n", e);
        for (unsigned m = 0; m < order; m++)
            len += (size_t)snprintf(buf + len, cap - len, "%u%s",
                                    1 + (unsigned)((seed >> (8 + 5 * m)) % (37 + 13 * m)),
                                    m + 1 < order ? (e % 7 ? " " : "\t") : " ");
        double v = ldexp((double)(seed >> 20) / 4294967296.0, (int)((seed >> 8) % 40) - 20);
        if (e % 11 == 0)
            len += (size_t)snprintf(buf + len, cap - len, "0\n");
        else
            len += (size_t)snprintf(buf + len, cap - len, "%.*g\n", 1 + (int)(seed % 19),
                                    (seed & 1) ? -v : v);
    }
    return len;
}

START_TEST(tns_chunked_matches_single_pass)
{
    static const char *const texts[] = {
        "# comment\n1 1 1 1.0\n2 3 4 2.0\n\n2 3 1 -1\n2 3 4 3.0\n",
        "1 2 3 4 5 6 7 8 1.5\n",
        "3 1.0\n1 2.0\n3 -1\n",
        "4 1 1e300\r\n1 2 0\r\n2 2 2",
        /* a first-mode coordinate far above the others (the counters guessed) */
        "200000 1 1.5\n1 1 2\n200000 1 -1.5\n",
        /* errors: the single-pass reader's message and line */
        "1 2 3 4 5 6 7 8 9 1.0\n",
        "1 1 1.0\n1 1 1 1.0\n",
        "1 1 1 1.0\n1 1 1.0\n",
        "1 1 1.0\n1 0 1.0\n",
        "1 1 1.0\n2 2 q\n",
        "# only a comment\n",
        "1 1 1\n1 99999999999 1\n",
        "1 1 1\n1 4294967296 1\n",
        "1 1 1\n-1 2 1\n",
        "1 1 1\n1 2 1 # trailing\n",
        "1 1 1\n\f\n2 2 2\n",
        "1 1 1\n \v \n2 2 2\n",
        "1 1 1\n\t \n2 2 2\n",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        check_tns_both_ways(texts[i], strlen(texts[i]), texts[i]);
    size_t cap = 1u << 21;
    char *big = malloc(cap);
    ck_assert_ptr_nonnull(big);
    /* A first coordinate far beyond those of the first and last 64 KiB (the
     * counters' guess): the chunk that meets it is counted again. */
    size_t blen = 0;
    for (int e = 0; e < 9000; e++)
        blen += (size_t)snprintf(big + blen, cap - blen, "%d %d 0.5\n", 1 + e % 97,
                                 e == 4500 ? 7 : 1 + e % 89);
    blen += (size_t)snprintf(big + blen, cap - blen, "300000 3 2.5\n");
    for (int e = 0; e < 9000; e++)
        blen += (size_t)snprintf(big + blen, cap - blen, "%d %d -1\n", 1 + e % 53, 1 + e % 31);
    ck_assert_uint_gt(blen, 2 * 65536 + 4096); /* the large row lies between the windows */
    check_tns_both_ways(big, blen, "a large row between the guessing windows");
    for (unsigned order = 1; order <= 4; order++) {
        size_t len = make_tns_text(big, cap, order, 1500, 40 + order);
        check_tns_both_ways(big, len, "generated");
        /* one malformed line deep inside: the same error */
        char *mid = strchr(big + len / 2, '\n');
        ck_assert_ptr_nonnull(mid);
        mid[1] = 'x';
        check_tns_both_ways(big, len, "generated, one bad line");
    }
    free(big);
}
END_TEST

/* The shared .tns files, decompressed to a plain file, read through the
 * chunked reader on 1 to 3 threads give the single-pass reader's tensor
 * (from the .gz). */
START_TEST(shared_tns_chunked_match)
{
    DIR *dir = opendir(DATA_DIR "/tns");
    if (!dir)
        return; /* data not present: the wrapper reports the skip */
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dir))) {
        if (!strstr(e->d_name, ".tns"))
            continue;
        char path[512], plain[] = "/tmp/tessel-tns-XXXXXX";
        snprintf(path, sizeof(path), DATA_DIR "/tns/%s", e->d_name);
        gzFile gz = gzopen(path, "rb");
        ck_assert_ptr_nonnull(gz);
        int fd = mkstemp(plain);
        ck_assert_int_ge(fd, 0);
        char buf[65536];
        int n;
        while ((n = gzread(gz, buf, sizeof(buf))) > 0)
            ck_assert_int_eq(write(fd, buf, (size_t)n), n);
        gzclose(gz);
        close(fd);
        tessel_tensor *ref = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        ck_assert_int_eq(tessel_tensor_read_tns(path, NULL, NULL, &ref, &d), TESSEL_OK);
        for (int threads = 1; threads <= 3; threads++) {
            tessel_load_options opt;
            tessel_load_options_init(&opt);
            opt.parse_threads = threads;
            tessel_tensor *t = NULL;
            test_alloc ta;
            test_alloc_init(&ta, 0);
            ck_assert_int_eq(tessel_tensor_read_tns(plain, &opt, &ta.allocator, &t, &d),
                             TESSEL_OK);
            assert_same_tensor(ref, t, path);
            ck_assert_uint_eq(ta.bytes - sizeof(*t), tessel_tensor_bytes(t));
            tessel_tensor_free(&t);
            ck_assert_int_eq(ta.live, 0);
        }
        tessel_tensor_free(&ref);
        unlink(plain);
        files++;
    }
    closedir(dir);
    ck_assert_int_ge(files, 1);
}
END_TEST

/* A plain file on disk takes the chunked reader (pread by chunks) and gives
 * the single-pass reader's tensor. */
START_TEST(plain_file_chunked_match)
{
    char path[] = "/tmp/tessel-chunk-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n2000 2000 30000\n");
    unsigned long long s = 7;
    for (int k = 0; k < 30000; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned i = 1 + (unsigned)((s >> 33) % 2000), j = 1 + (unsigned)((s >> 13) % 2000);
        fprintf(f, "%u %u %.17g\n", i > j ? i : j, i > j ? j : i, (double)(s >> 11) / 9e15);
    }
    fclose(f);
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    tessel_tensor *ref = NULL, *t = NULL;
    tessel_diag d;
    opt.parse_threads = -1;
    ck_assert_int_eq(tessel_tensor_read_mtx(path, &opt, NULL, &ref, &d), TESSEL_OK);
    for (int threads = 0; threads <= 3; threads++) {
        test_alloc ta;
        test_alloc_init(&ta, 0);
        opt.parse_threads = threads;
        ck_assert_int_eq(tessel_tensor_read_mtx(path, &opt, &ta.allocator, &t, &d), TESSEL_OK);
        assert_same_tensor(ref, t, path);
        ck_assert_uint_eq(ta.bytes - sizeof(*t), tessel_tensor_bytes(t));
        tessel_tensor_free(&t);
        ck_assert_int_eq(ta.live, 0);
    }
    tessel_tensor_free(&ref);
    unlink(path);
}
END_TEST

/* A general matrix on disk, read in place through the mapping
 * (mtx_chunked.c): rows in random or rising order, over 2 MiB (pieces whose
 * pages are dropped and, random, read again by pass 2), a size that is a
 * whole number of pages, with and without a final line break, one variant
 * with a malformed value near the end: the single-pass reader's tensor or
 * error on 1, 2, 3 and 7 threads. */
START_TEST(mapped_file_chunked_match)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int variant = 0; variant < 6; variant++) {
        int rising = variant & 1, final_nl = !(variant & 2), bad = variant >= 4;
        char path[] = "/tmp/tessel-mapped-XXXXXX";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        size_t cap = 4u << 20, len = 0;
        char *body = malloc(cap);
        ck_assert_ptr_nonnull(body);
        unsigned long long s = 11;
        const int entries = 60000;
        for (int k = 0; k < entries; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            unsigned i = rising ? 1 + (unsigned)(k / 20) : 1 + (unsigned)((s >> 33) % 3000);
            len += (size_t)snprintf(body + len, cap - len, "%u %u %.17g%s", i,
                                    1 + (unsigned)((s >> 13) % 3000), (double)(s >> 11) / 9e15,
                                    bad && k == entries - 5 ? "x" : "");
            if (k + 1 < entries || final_nl)
                body[len++] = '\n';
        }
        char head[128];
        size_t hl = (size_t)snprintf(head, sizeof(head),
                                     "%%%%MatrixMarket matrix coordinate real general\n");
        const char *size_line = "3000 3000 60000\n";
        /* a comment line pads the file to a whole number of pages */
        size_t fill = page - (hl + strlen(size_line) + len + 2) % page;
        FILE *f = fdopen(fd, "w");
        fprintf(f, "%s%%", head);
        for (size_t k = 0; k < fill; k++)
            fputc('x', f);
        fprintf(f, "\n%s", size_line);
        fwrite(body, 1, len, f);
        ck_assert_int_eq(ftell(f) % (long)page, 0);
        fclose(f);
        free(body);
        tessel_load_options opt;
        tessel_load_options_init(&opt);
        tessel_tensor *ref = NULL, *t = NULL;
        tessel_diag d_ref, d;
        tessel_diag_clear(&d_ref);
        opt.parse_threads = -1;
        int rc_ref = tessel_tensor_read_mtx(path, &opt, NULL, &ref, &d_ref);
        ck_assert_int_eq(rc_ref == TESSEL_OK, !bad);
        static const int threads[] = { 1, 2, 3, 7 };
        for (size_t k = 0; k < sizeof(threads) / sizeof(threads[0]); k++) {
            opt.parse_threads = threads[k];
            tessel_diag_clear(&d);
            int rc = tessel_tensor_read_mtx(path, &opt, NULL, &t, &d);
            ck_assert_int_eq(rc, rc_ref);
            if (rc == TESSEL_OK)
                assert_same_tensor(ref, t, path);
            else
                ck_assert_str_eq(d.message, d_ref.message);
            tessel_tensor_free(&t);
        }
        tessel_tensor_free(&ref);
        unlink(path);
    }
}
END_TEST

/* A general matrix of `entries` lines in row-major order (duplicates and
 * every value form), with `variant`: 0 clean; 1 a comment and a blank line
 * in the last quarter (a gap in the one-pass slots); 2 a malformed value on
 * a line of the last quarter (an error in the second chunk); 3 one row that
 * decreases in the last quarter; 4 rows decreasing only where the text is
 * cut in two; 5 a size line declaring one entry too many. */
static size_t make_sorted_text(char *buf, size_t cap, int entries, int variant)
{
    size_t len = (size_t)snprintf(buf, cap, "%%%%MatrixMarket matrix coordinate real general\n"
                                            "%% row-major\n500 61 %d\n",
                                  entries + (variant == 5));
    unsigned long long s = 99;
    int quarter = entries * 3 / 4 + 7;
    for (int e = 0; e < entries; e++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned i = 1 + (unsigned)((unsigned long long)e * 500 / (unsigned)entries);
        unsigned j = 1 + (unsigned)((s >> 33) % 61);
        if (variant == 3 && e == quarter)
            i = 1;
        if (variant == 4)
            i = 1 + (unsigned)(e < entries / 2 ? e * 250ull / (unsigned)entries + 250
                                               : e * 250ull / (unsigned)entries - 125);
        if (variant == 1 && e == quarter)
            len += (size_t)snprintf(buf + len, cap - len, "%% late comment\n\n");
        if (variant == 2 && e == quarter)
            len += (size_t)snprintf(buf + len, cap - len, "%u %u 1.5x\n", i, j);
        else if (e % 7 == 0)
            len += (size_t)snprintf(buf + len, cap - len, "%u %u %d\n", i, j, (int)(s % 9) - 4);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%u\t%u %.17g\n", i, j,
                                    (double)(s >> 11) / 9e15 - 0.5);
    }
    return len;
}

/* Row-major files, which the chunked reader reads in one pass when every
 * chunk's rows keep rising: the same tensor or the same error (file, line,
 * message) as the single-pass reader, with the gap, error, decrease or
 * miscount in the last quarter, i.e. in the second chunk of two. */
START_TEST(chunked_one_pass_cases)
{
    size_t cap = 1u << 20;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int variant = 0; variant <= 5; variant++) {
        for (int entries = 1; entries <= 9001; entries += 3000) {
            size_t len = make_sorted_text(buf, cap, entries, variant);
            char what[64];
            snprintf(what, sizeof(what), "row-major variant %d, %d entries", variant, entries);
            check_both_ways(buf, len, what);
        }
    }
    /* the error in the second chunk names its line and field */
    size_t len = make_sorted_text(buf, cap, 9001, 2);
    int rc;
    tessel_diag d;
    tessel_tensor *t = parse_with_threads(buf, len, 2, 0, &rc, &d);
    ck_assert_ptr_null(t);
    ck_assert_int_eq(rc, TESSEL_EPARSE);
    ck_assert_str_eq(d.file, "chunk.mtx");
    ck_assert_uint_eq(d.line, 3 + 9001 * 3 / 4 + 7 + 1);
    ck_assert_str_eq(d.field, "value");
    free(buf);
}
END_TEST

/* A row-major general matrix in the form the chunked reader's fast line
 * path reads ("ROW COL[ VALUE]\n", one space), field 0 pattern, 1 real,
 * 2 integer, with `variant`: 0 clean, the first 40 rows empty and rows
 * skipped; 1 other forms among them (leading zeros, an 8-digit index, a
 * tab, two spaces, trailing blanks, CRLF, duplicates, a column out of
 * order); 2 a row that decreases in the last quarter; 3 comment lines
 * around the middle (a chunk may start at one); 4 an index 0 late; 5 a
 * column beyond the extent late. */
static size_t make_fast_text(char *buf, size_t cap, int entries, int field, int variant)
{
    static const char *const fields[] = { "pattern", "real", "integer" };
    size_t len = (size_t)snprintf(buf, cap, "%%%%MatrixMarket matrix coordinate %s general\n"
                                            "700 12000000 %d\n",
                                  fields[field], entries);
    unsigned long long s = 7;
    unsigned pj = 1;
    int late = entries * 3 / 4 + 5;
    for (int e = 0; e < entries; e++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        unsigned i = 41 + (unsigned)((unsigned long long)e * 600 / (unsigned)entries);
        unsigned j = 1 + (unsigned)e * 83; /* strictly rising in every row */
        const char *sep = " ", *tail = "";
        if (variant == 1) {
            switch (e % 53) {
            case 3: sep = "\t"; break;
            case 7: sep = "  "; break;
            case 11: tail = " "; break;
            case 13: tail = "\r"; break;
            case 17: j = 11999999; break;
            case 19: j = 1; break; /* out of order in its row */
            case 29: j = pj; break; /* likely a duplicate */
            default: break;
            }
        }
        if (variant == 2 && e == late)
            i = 2;
        if (variant == 3 && e >= entries / 2 - 20 && e < entries / 2 + 20)
            len += (size_t)snprintf(buf + len, cap - len, "%% comment %d\n", e);
        if (variant == 4 && e == late)
            i = 0;
        if (variant == 5 && e == late)
            j = 12000001;
        if (variant == 1 && e % 53 == 23)
            len += (size_t)snprintf(buf + len, cap - len, "000%u %08u", i, j);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%u%s%u", i, sep, j);
        if (field == 1)
            len += (size_t)snprintf(buf + len, cap - len, " %.17g",
                                    (double)(s >> 11) / 9e15 - 0.5);
        else if (field == 2)
            len += (size_t)snprintf(buf + len, cap - len, " %d", (int)(s % 9) - 4);
        len += (size_t)snprintf(buf + len, cap - len, "%s\n", tail);
        pj = j;
    }
    return len;
}

/* The fast line path (single-space lines read by two word-wide indices)
 * and the one pass that writes the row pointers itself: the same tensor or
 * the same error as the single-pass reader, for pattern, real and integer
 * files, clean, with other line forms among the fast ones, with a late
 * decrease, comments where a chunk may start, and bad indices. */
START_TEST(chunked_fast_lines_cases)
{
    static const int threads[] = { 2, 3 }; /* chunks of 2 and 3 pieces */
    size_t cap = 1u << 21;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int field = 0; field <= 2; field++) {
        for (int variant = 0; variant <= 5; variant++) {
            for (int entries = 1; entries <= 9001; entries += 9000) {
                size_t len = make_fast_text(buf, cap, entries, field, variant);
                char what[80];
                snprintf(what, sizeof(what), "fast lines field %d variant %d, %d entries", field,
                         variant, entries);
                check_threads(buf, len, what, threads, sizeof(threads) / sizeof(threads[0]));
            }
        }
    }
    free(buf);
}
END_TEST

struct coo_sink {
    tessel_coo_builder *b;
};

static int add_to_builder(void *ctx, const uint32_t *coords, double value)
{
    struct coo_sink *c = ctx;
    return tessel_coo_builder_add(c->b, coords, value);
}

/* The single-pass reader builds the rows in place (src/tensor/csr_stream.c):
 * the same tensor, bit for bit, as the coordinate builder given the same
 * entries in the same order, for rows in order, out of order from the start
 * or late, symmetric mirrors, duplicates and explicit zeros (dropped or
 * kept), empty matrices, and gzipped text. */
START_TEST(stream_builder_matches_coordinate_builder)
{
    size_t cap = 1u << 20;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (int variant = 0; variant <= 9; variant++) {
        size_t len;
        if (variant <= 4) {
            len = make_sorted_text(buf, cap, 5000, variant == 2 ? 4 : variant);
        } else if (variant == 5) {
            len = (size_t)snprintf(buf, cap, "%%%%MatrixMarket matrix coordinate real general\n"
                                             "3 3 0\n");
        } else {
            const char *sym = variant == 6 ? "symmetric" : variant == 7 ? "skew-symmetric"
                              : variant == 8 ? "general" : "symmetric";
            const char *field = variant == 9 ? "pattern" : "real";
            len = (size_t)snprintf(buf, cap, "%%%%MatrixMarket matrix coordinate %s %s\n"
                                             "300 300 4000\n", field, sym);
            unsigned long long s = 5;
            for (int k = 0; k < 4000; k++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                unsigned i = 1 + (unsigned)((s >> 33) % 300), j = 1 + (unsigned)((s >> 13) % 300);
                if (variant == 7 && i == j)
                    i = i % 300 + 1;
                unsigned hi = i > j ? i : j, lo = i > j ? j : i;
                if (variant == 9)
                    len += (size_t)snprintf(buf + len, cap - len, "%u %u\n", hi, lo);
                else
                    len += (size_t)snprintf(buf + len, cap - len, "%u %u %.17g\n", hi, lo,
                                            k % 11 == 0 ? 0.0 : (double)(s >> 11) / 9e15);
            }
        }
        for (int gz = 0; gz <= 1; gz++) {
            char path[] = "/tmp/tessel-stream-XXXXXX";
            int fd = mkstemp(path);
            ck_assert_int_ge(fd, 0);
            close(fd);
            if (gz) {
                gzFile g = gzopen(path, "wb");
                ck_assert_int_eq(gzwrite(g, buf, (unsigned)len), (int)len);
                gzclose(g);
            } else {
                FILE *f = fopen(path, "wb");
                ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
                fclose(f);
            }
            for (int drop = 0; drop <= 1; drop++) {
                tessel_load_options opt;
                tessel_load_options_init(&opt);
                opt.parse_threads = -1;
                opt.drop_zeros = drop;
                tessel_diag d;
                tessel_entry_info info;
                struct coo_sink sink = { NULL };
                uint64_t dims[2] = { 300, 300 };
                if (variant <= 4)
                    dims[0] = 500, dims[1] = 61;
                else if (variant == 5)
                    dims[0] = dims[1] = 3;
                ck_assert_int_eq(tessel_coo_builder_create(2, dims, variant != 9, NULL, &sink.b,
                                                           &d), TESSEL_OK);
                ck_assert_int_eq(tessel_mtx_for_each_entry(path, &opt, NULL, add_to_builder,
                                                           &sink, &info, &d), TESSEL_OK);
                tessel_tensor *ref = NULL, *t = NULL;
                ck_assert_int_eq(tessel_coo_builder_finish(
                                     sink.b, drop ? TESSEL_BUILD_DROP_ZEROS : 0, &ref, &d),
                                 TESSEL_OK);
                tessel_coo_builder_free(&sink.b);
                strcpy(ref->field, info.field);
                strcpy(ref->symmetry, info.symmetry);
                test_alloc ta;
                test_alloc_init(&ta, 0);
                ck_assert_int_eq(tessel_tensor_read_mtx(path, &opt, &ta.allocator, &t, &d),
                                 TESSEL_OK);
                check_invariants(t);
                assert_same_tensor(ref, t, path);
                ck_assert_uint_eq(ta.bytes - sizeof(*t), tessel_tensor_bytes(t));
                tessel_tensor_free(&t);
                ck_assert_int_eq(ta.live, 0);
                tessel_tensor_free(&ref);
            }
            unlink(path);
        }
    }
    free(buf);
}
END_TEST

/* Every shared real matrix loads, satisfies the layout invariants and has
 * as many entries as its stored triangle(s) allow. */
START_TEST(shared_matrices_load)
{
    DIR *dir = opendir(DATA_DIR "/mtx");
    if (!dir)
        return; /* data not present: nothing to check */
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dir))) {
        if (!strstr(e->d_name, ".mtx"))
            continue;
        char path[512];
        snprintf(path, sizeof(path), DATA_DIR "/mtx/%s", e->d_name);
        tessel_tensor *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        test_alloc ta;
        test_alloc_init(&ta, 0);
        int rc = tessel_tensor_load(path, NULL, &ta.allocator, &t, NULL, &d);
        ck_assert_msg(rc == TESSEL_OK, "%s: %s", path, d.message);
        check_invariants(t);
        ck_assert_uint_gt(t->nnz, 0);
        /* The tensor's arrays are exactly CSR-sized. */
        ck_assert_uint_eq(ta.bytes - sizeof(*t), tessel_tensor_bytes(t));
        tessel_tensor_free(&t);
        ck_assert_int_eq(ta.live, 0);
        files++;
    }
    closedir(dir);
    ck_assert_int_ge(files, 20);
}
END_TEST

static Suite *tensor_suite(void)
{
    Suite *s = suite_create("tensor");
    TCase *tc = tcase_create("readers");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, real_general);
    tcase_add_test(tc, symmetric_pattern);
    tcase_add_test(tc, skew_and_hermitian);
    tcase_add_test(tc, duplicates_and_zeros);
    tcase_add_test(tc, crlf_and_blanks);
    tcase_add_test(tc, number_parsing_matches_strtod);
    tcase_add_loop_test(tc, bad_matrix_market, 0, (int)(sizeof(bad_mtx) / sizeof(bad_mtx[0])));
    tcase_add_test(tc, tns_reader);
    tcase_add_test(tc, gzip_and_writers_round_trip);
    tcase_add_test(tc, gzip_members_whole_or_error);
    tcase_add_test(tc, gzip_read_ahead_equals_plain);
    tcase_add_test(tc, hypersparse_is_refused_cleanly);
    tcase_add_test(tc, cache_round_trip);
    tcase_add_test(tc, cache_pattern_only);
    tcase_add_test(tc, cache_corruption_detected);
    tcase_add_test(tc, cache_policy);
    tcase_add_test(tc, cache_out_of_memory);
    tcase_add_test(tc, builder_sorts_and_merges);
    tcase_add_test(tc, out_of_memory_every_allocation);
    tcase_add_test(tc, shared_matrices_load);
    tcase_add_test(tc, chunked_reader_matches_single_pass);
    tcase_add_test(tc, mapped_file_chunked_match);
    tcase_add_test(tc, shared_matrices_chunked_match);
    tcase_add_test(tc, plain_file_chunked_match);
    tcase_add_test(tc, chunked_one_pass_cases);
    tcase_add_test(tc, chunked_fast_lines_cases);
    tcase_add_test(tc, stream_builder_matches_coordinate_builder);
    tcase_add_test(tc, tns_chunked_matches_single_pass);
    tcase_add_test(tc, shared_tns_chunked_match);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(tensor_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

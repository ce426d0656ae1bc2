/* The value parser (src/tensor/textio.c, fastfloat.c) against strtod, bit
 * for bit: edge cases (subnormals, the normal range's ends, 17 to 40
 * digits, exact ties between two doubles, large exponents) and random
 * strings, each through the single-pass and the chunked reader; and the
 * generated table of powers of five against values computed here. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tensor/pow5_table.h"
#include "tessel/tensor.h"

/* A growing text of one matrix row, one value per column. */
typedef struct numbers {
    char *text;
    size_t len, cap;
    char **value;  /* the value strings, for strtod */
    size_t n, vcap;
} numbers;

static void append(numbers *s, const char *piece)
{
    size_t n = strlen(piece);
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->text = realloc(s->text, s->cap);
        ck_assert_ptr_nonnull(s->text);
    }
    memcpy(s->text + s->len, piece, n + 1);
    s->len += n;
}

static void add(numbers *s, const char *value)
{
    if (s->n == s->vcap) {
        s->vcap = s->vcap ? 2 * s->vcap : 1024;
        s->value = realloc(s->value, s->vcap * sizeof(char *));
        ck_assert_ptr_nonnull(s->value);
    }
    s->value[s->n] = strdup(value);
    ck_assert_ptr_nonnull(s->value[s->n]);
    s->n++;
}

static void clear(numbers *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->value[i]);
    free(s->value);
    free(s->text);
    memset(s, 0, sizeof(*s));
}

/* Parses all values as row 1 of a 1 x n matrix, single-pass (threads -1)
 * and chunked (threads 2), and compares each with strtod bit for bit. */
static void check_all(numbers *s)
{
    char line[96];
    s->len = 0;
    snprintf(line, sizeof(line), "%%%%MatrixMarket matrix coordinate real general\n1 %zu %zu\n",
             s->n, s->n);
    append(s, line);
    for (size_t i = 0; i < s->n; i++) {
        append(s, "1 ");
        snprintf(line, sizeof(line), "%zu ", i + 1);
        append(s, line);
        append(s, s->value[i]);
        append(s, "\n");
    }
    static const int threads[2] = { -1, 2 };
    for (int k = 0; k < 2; k++) {
        tessel_load_options opt;
        tessel_load_options_init(&opt);
        opt.parse_threads = threads[k];
        tessel_tensor *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_tensor_parse_mtx("mem.mtx", s->text, s->len, &opt, NULL, &t, &d);
        ck_assert_msg(rc == TESSEL_OK, "parse failed: %s (line %llu)", d.message,
                      (unsigned long long)d.line);
        ck_assert_uint_eq(t->nnz, s->n);
        for (size_t i = 0; i < s->n; i++) {
            double want = strtod(s->value[i], NULL);
            ck_assert_msg(memcmp(&want, &t->values[i], sizeof(double)) == 0,
                          "%s: %.17g, strtod %.17g (threads %d)", s->value[i], t->values[i], want,
                          threads[k]);
        }
        tessel_tensor_free(&t);
    }
}

static unsigned long long next(unsigned long long *g)
{
    *g = *g * 6364136223846793005ull + 1442695040888963407ull;
    return *g ^ (*g >> 29);
}

START_TEST(edge_cases_match_strtod)
{
    static const char *const edges[] = {
        "0", "-0", "0e999", "1e-400", "-1e-400", "4.9406564584124654e-324",
        "2.4703282292062327e-324", "2.4703282292062328e-324", "7.4109846876186981e-324",
        "2.2250738585072009e-308", "2.2250738585072011e-308", "2.2250738585072012e-308",
        "2.2250738585072014e-308", "1.7976931348623157e308", "1.7976931348623158e308",
        "9007199254740992", "9007199254740993", "9007199254740995", "18014398509481986",
        "18014398509481990", "9223372036854775807", "9223372036854775808",
        "18446744073709551615", "18446744073709551616", "1e22", "1e23", "1e-22", "1e-23",
        "8.5e-1", "0.1", "0.2", "0.3", "0.30000000000000004", "0.29999999999999999",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126",
        "1.0000000000000002220446049250313080847263336181640625",
        "123456789012345678901234567890", "0.000000000000000000000000000001234567890123456789",
        "1e308", "1e-307", "123456789012345678e-340", "123456789012345678e290",
        "999999999999999999e-343", "1e-342", "1e-343", "3e-324", "2e-324", "5e-324",
        "4.4501477170144023e-308", "4.4501477170144028e-308", "3.4e38", "1.2e-38",
        "7.2057594037927933e16", "5e-1", "2.5", "-3.5e+3", "0.5e1", ".5", "5.", "+7",
    };
    numbers s;
    memset(&s, 0, sizeof(s));
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        add(&s, edges[i]);
    check_all(&s);
    clear(&s);
}
END_TEST

/* Exact ties: (2^53 + odd) * 2^j, printed as integers (q = 0) and with
 * their trailing zeros moved into the exponent (q > 0), and halves of
 * them (q < 0); and near ties: the midpoint of two doubles printed to 17
 * to 25 digits. */
START_TEST(ties_match_strtod)
{
    numbers s;
    memset(&s, 0, sizeof(s));
    unsigned long long g = 77;
    char num[96];
    for (int i = 0; i < 20000; i++) {
        unsigned long long odd = (next(&g) % (1ull << 52)) | 1;
        int j = (int)(next(&g) % 11);
        unsigned long long x = ((1ull << 53) + odd) << j;
        snprintf(num, sizeof(num), "%llu", x);
        add(&s, num);
        unsigned long long y = x;
        int k = 0;
        while (y % 10 == 0) {
            y /= 10;
            k++;
        }
        snprintf(num, sizeof(num), "%llue%d", y, k);
        add(&s, num);
        /* x / 2^h for h <= 3: h decimal places, exact */
        int h = 1 + (int)(next(&g) % 3);
        unsigned long long whole = x >> h, frac = x & ((1ull << h) - 1);
        snprintf(num, sizeof(num), "%llu.%0*llu", whole, h, frac * (h == 1 ? 5 : h == 2 ? 25 : 125));
        add(&s, num);
        double d = ldexp((double)((next(&g) >> 11) | (1ull << 52)), (int)(next(&g) % 600) - 300);
        long double mid = ((long double)d + (long double)nextafter(d, INFINITY)) / 2;
        snprintf(num, sizeof(num), "%.*Le", 16 + (int)(next(&g) % 9), mid);
        add(&s, num);
    }
    check_all(&s);
    ck_assert_uint_eq(s.n, 80000);
    clear(&s);
}
END_TEST

/* Random doubles over the whole finite range printed with 15 to 17
 * significant digits, and random decimals of 1 to 22 digits with exponents
 * -350..310 (those past the largest double left out: they overflow). */
START_TEST(random_match_strtod)
{
    numbers s;
    memset(&s, 0, sizeof(s));
    unsigned long long g = 2024;
    char num[96];
    for (int i = 0; i < 100000; i++) {
        unsigned long long bits = next(&g) & 0x7FFFFFFFFFFFFFFFull;
        double x;
        memcpy(&x, &bits, sizeof(x));
        if (!isfinite(x))
            continue;
        snprintf(num, sizeof(num), "%.*g", 15 + (int)(next(&g) % 3), (g & 1) ? -x : x);
        add(&s, num);
    }
    for (int i = 0; i < 100000; i++) {
        int digits = 1 + (int)(next(&g) % 22), exp10 = (int)(next(&g) % 661) - 350;
        char mant[32];
        for (int k = 0; k < digits; k++)
            mant[k] = (char)('0' + (k == 0 ? 1 + next(&g) % 9 : next(&g) % 10));
        mant[digits] = '\0';
        snprintf(num, sizeof(num), "%se%d", mant, exp10);
        if (isinf(strtod(num, NULL)))
            continue;
        add(&s, num);
    }
    ck_assert_uint_gt(s.n, 190000);
    check_all(&s);
    clear(&s);
}
END_TEST

/* The generated table against 5^q computed here: exactly for 0 <= q <= 55
 * (5^55 < 2^128), and 5^q * 5^-q close to a power of two for q < 0. */
START_TEST(pow5_table_matches)
{
#if defined(__SIZEOF_INT128__)
    unsigned __int128 p = 1;
    for (int q = 0; q <= 55; q++, p *= 5) {
        unsigned __int128 v = p;
        while (!(v >> 127))
            v <<= 1;
        const uint64_t *t = pow5_128[q - POW5_SMALLEST];
        ck_assert_uint_eq(t[0], (uint64_t)(v >> 64));
        ck_assert_uint_eq(t[1], (uint64_t)v);
    }
    for (int q = 1; q <= 27; q++) {
        /* high words of 5^q and 5^-q multiply to about 2^127 (within 2^-62) */
        long double a = (long double)pow5_128[q - POW5_SMALLEST][0],
                    b = (long double)pow5_128[-q - POW5_SMALLEST][0];
        long double r = a * b / ldexpl(1.0L, 127);
        ck_assert_msg(fabsl(r - 1.0L) < 1e-15L || fabsl(r - 2.0L) < 1e-15L, "q %d: %Lg", q, r);
    }
#endif
    ck_assert_uint_eq(sizeof(pow5_128) / sizeof(pow5_128[0]), POW5_LARGEST - POW5_SMALLEST + 1);
}
END_TEST

static Suite *parse_suite(void)
{
    Suite *s = suite_create("parse");
    TCase *tc = tcase_create("parse");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, edge_cases_match_strtod);
    tcase_add_test(tc, ties_match_strtod);
    tcase_add_test(tc, random_match_strtod);
    tcase_add_test(tc, pow5_table_matches);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(parse_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

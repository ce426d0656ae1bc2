/* The value parser (src/tensor/textio.c, fastfloat.c) against strtod, bit
 * for bit: edge cases (subnormals, the normal range's ends, 17 to 40
 * digits, exact ties between two doubles, large exponents) and random
 * strings, each through the single-pass and the chunked reader; and the
 * generated table of powers of five against values computed here. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/tensor/fastfloat.h"
#include "../../src/tensor/pow5_table.h"
#include "../../src/tensor/textio.h"
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

/* What scan_double must return for the token s (a line of its own), by
 * the rules it has always followed: strtod's value, SCAN_BAD when strtod
 * takes no number or stops inside the token, SCAN_OVERFLOW for a finite
 * decimal beyond the double range ("inf" and "nan" themselves are
 * strtod's values, as the readers have always accepted them). */
static int reference_scan(const char *s, double *out, size_t *stop_at)
{
    const char *p = s;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return SCAN_NONE;
    char *stop = NULL;
    errno = 0;
    double v = strtod(p, &stop);
    if (stop == p || (*stop && *stop != ' ' && *stop != '\t'))
        return SCAN_BAD;
    if (errno == ERANGE && isinf(v))
        return SCAN_OVERFLOW;
    *out = v;
    *stop_at = (size_t)(stop - s);
    return SCAN_OK;
}

/* scan_double on one string against reference_scan, bit for bit; the line
 * is copied to a buffer with 8 more readable bytes, as the readers' are,
 * and NUL-terminated at its end. */
static size_t scanned;
static void check_scan(const char *s)
{
    static char line[1024 + 16];
    size_t n = strlen(s);
    ck_assert_uint_lt(n, 1024);
    memcpy(line, s, n + 1);
    memset(line + n + 1, '7', 8); /* digits past the NUL must not be read as the number's */
    const char *p = line;
    double got = 0, want = 0;
    int rc = scan_double(&p, line + n, &got);
    size_t stop = 0;
    int wrc = reference_scan(s, &want, &stop);
    ck_assert_msg(rc == wrc, "\"%s\": scan_double %d, strtod says %d", s, rc, wrc);
    if (rc == SCAN_OK) {
        ck_assert_msg(memcmp(&got, &want, sizeof(got)) == 0 || (isnan(got) && isnan(want)),
                      "\"%s\": %a, strtod %a", s, got, want);
        ck_assert_msg(p == line + stop, "\"%s\": stopped at %td, strtod at %zu", s, p - line,
                      stop);
    }
    scanned++;
}

/* A random decimal of `digits` digits (first nonzero unless zeros > 0:
 * that many leading zeros), a point at `point` (< 0: none) and exponent
 * e (INT_MIN: none). */
static void decimal(char *out, size_t cap, unsigned long long *g, int digits, int point, int e)
{
    char mant[128];
    int k = 0;
    if (next(g) & 1)
        mant[k++] = '-';
    for (int d = 0; d < digits && k < 100; d++) {
        if (d == point)
            mant[k++] = '.';
        mant[k++] = (char)('0' + (d == 0 ? 1 + next(g) % 9 : next(g) % 10));
    }
    mant[k] = '\0';
    if (e == INT_MIN)
        snprintf(out, cap, "%s", mant);
    else
        snprintf(out, cap, "%s%c%d", mant, (next(g) & 1) ? 'e' : 'E', e);
}

/* scan_double itself (no reader around it) against strtod on well over a
 * million strings: random doubles at 1 to 25 significant digits, random
 * decimals of 1 to 40 digits with and without a point and exponents
 * -360..330, 19- and 20-digit integers, midpoints between two doubles
 * (normal and subnormal) printed in full (exact halfway cases) or to 41
 * digits, and just above and below them, huge exponents and the forms
 * strtod alone takes. */
START_TEST(scanner_matches_strtod)
{
    static const char *const forms[] = {
        "1e400", "-1e400", "1e-400", "0e999999999", "1e999999999", "1e-999999999", "-0", "+0",
        "-0.0e-5", "inf", "-inf", "infinity", "nan", "-nan", "NaN", "0x1p3", "0x1.8p-1", "1e",
        "1e+", "1e-", ".", "-.", "+", "-", "e5", ".e5", "1.2.3", "1x", "--1", "+-1", "1 ",
        "0.", ".0", "00000000000000000000000000001", "0.0000000000000000000000000000000001",
        "18446744073709551615", "18446744073709551616", "10000000000000000000",
        "9999999999999999999", "99999999999999999999", "1000000000000000000000000e-24",
        "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "179769313486231580793728971405301e276", "0.000000000000000000000000000000000000e999",
        "123456789012345678901234567890e-330", "1234567890123456789012345678901234567890e300",
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
        check_scan(forms[i]);
    unsigned long long g = 4242;
    char num[1024];
    for (int i = 0; i < 600000; i++) {
        /* random finite doubles, 1 to 25 significant digits */
        unsigned long long bits = next(&g);
        double x;
        memcpy(&x, &bits, sizeof(x));
        if (!isfinite(x))
            continue;
        int prec = 1 + (int)(next(&g) % 25);
        snprintf(num, sizeof(num), (next(&g) & 1) ? "%.*g" : "%.*e", prec, x);
        check_scan(num);
    }
    for (int i = 0; i < 600000; i++) {
        /* random decimals */
        int digits = 1 + (int)(next(&g) % 40);
        int point = (next(&g) % 3) ? (int)(next(&g) % (unsigned)(digits + 1)) : -1;
        int e = (next(&g) % 4) ? (int)(next(&g) % 691) - 360 : INT_MIN;
        decimal(num, sizeof(num), &g, digits, point, e);
        check_scan(num);
    }
    for (int i = 0; i < 200000; i++) {
        /* 19- and 20-digit mantissas, with and without exponents */
        unsigned long long w = next(&g) | (1ull << 63);
        if (i & 1)
            w = 1000000000000000000ull + w % 9000000000000000000ull;
        int e = (int)(next(&g) % 661) - 345;
        snprintf(num, sizeof(num), (i & 2) ? "%llue%d" : "%llu", w, e);
        check_scan(num);
        snprintf(num, sizeof(num), "%llu%u.%ue%d", w, (unsigned)(next(&g) % 10),
                 (unsigned)(next(&g) % 1000), e);
        check_scan(num);
    }
    for (int i = 0; i < 60000; i++) {
        /* halfway cases printed exactly (a midpoint of two doubles has a
         * finite decimal expansion, printed in full by glibc), then the
         * same string with its last digit raised and lowered */
        int sub = (i % 4) == 0;
        unsigned long long m = (next(&g) >> 12) | (sub ? 0 : (1ull << 52));
        int e2 = sub ? -1074 : (int)(next(&g) % 2000) - 1074;
        long double lo = ldexpl((long double)m, e2);
        long double mid = lo + ldexpl(0.5L, e2);
        if (!isfinite((double)mid) || (double)lo > DBL_MAX)
            continue;
        int len = snprintf(num, sizeof(num), "%.*Le", (i & 1) ? 800 : 40, mid);
        if (len >= (int)sizeof(num))
            continue;
        char *e = strchr(num, 'e'); /* strip trailing zeros of the exact form */
        char *z = e;
        while (z[-1] == '0')
            z--;
        if (z[-1] == '.')
            z++;
        memmove(z, e, strlen(e) + 1);
        check_scan(num);
        char *last = z - 1;
        if (*last >= '1' && *last <= '8') {
            (*last)++;
            check_scan(num);
            *last = (char)(*last - 2);
            check_scan(num);
        }
    }
    ck_assert_uint_gt(scanned, 1500000);
}
END_TEST

/* fastfloat_scan (the inline scanner of the chunked reader's common line
 * and scan_double's front) on its own: each string cut at every length
 * (end before the token's end, with the bytes after the cut still
 * readable digits that must not be read), the result either NULL, a stop
 * before a byte that is no separator (its callers then read the token
 * their general way), or strtod's double of the cut string and strtod's
 * stopping point; and it
 * must take the common forms itself (17-digit values as %.17g prints
 * them, short decimals, exponents), or the fast path would be dead. */
static size_t fast_taken, fast_tried;
static void check_fast(const char *s)
{
    static char buf[256];
    size_t n = strlen(s);
    ck_assert_uint_lt(n, 200);
    for (size_t cut = 0; cut <= n; cut++) {
        memcpy(buf, s, n);
        memset(buf + n, '7', 16); /* past end: digits a bounded scan must not take */
        double got = 0;
        const char *e = fastfloat_scan(buf, buf + cut, &got);
        fast_tried++;
        /* NULL, or a token its callers refuse unless a separator follows */
        if (!e || (e < buf + cut && *e != ' ' && *e != '\t' && *e != '\n'))
            continue;
        char prefix[256];
        memcpy(prefix, s, cut);
        prefix[cut] = '\0';
        char *stop = NULL;
        double want = strtod(prefix, &stop);
        ck_assert_msg(e <= buf + cut && (size_t)(e - buf) == (size_t)(stop - prefix),
                      "\"%s\" cut at %zu: stopped at %td, strtod at %td", s, cut, e - buf,
                      stop - prefix);
        ck_assert_msg(memcmp(&got, &want, sizeof(got)) == 0, "\"%s\" cut at %zu: %a, strtod %a",
                      s, cut, got, want);
        fast_taken += cut == n;
    }
}

START_TEST(fast_scanner_matches_strtod)
{
    static const char *const forms[] = {
        "0.94406926352530718", "-0.5150016515981406", "1", "-0", "+0.0", "0.", ".5", "5.",
        "1e5", "1E-5", "-2.5e+300", "3.14e-310", "4.9406564584124654e-324", "1e-400", "1e400",
        "12345678901234567890", "1234567890123456789", "0.0000000000000000000001234567890123456789",
        "00000000000000000001.5", "1e99999", "1e100000", "1e", "1e+", ".", "-", "-.", "e5", "1..2",
        "9007199254740993", "1.7976931348623157e308", "1.7976931348623159e308", "0x10", "inf",
    };
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
        check_fast(forms[i]);
    unsigned long long g = 99;
    char num[96];
    size_t before = fast_taken;
    for (int i = 0; i < 40000; i++) {
        unsigned long long bits = next(&g);
        double x;
        memcpy(&x, &bits, sizeof(x));
        if (!isfinite(x))
            continue;
        int prec = 1 + (int)(next(&g) % 19);
        snprintf(num, sizeof(num), (next(&g) & 1) ? "%.*g" : "%.*e", prec, x);
        check_fast(num);
        /* the benchmark's values: uniform in [0, 1) at 17 digits */
        snprintf(num, sizeof(num), "%.17g", (double)(next(&g) >> 11) / 9007199254740992.0);
        check_fast(num);
    }
    ck_assert_uint_ge(fast_taken - before, 75000); /* nearly all whole tokens taken */
    for (int i = 0; i < 40000; i++) {
        int digits = 1 + (int)(next(&g) % 24);
        int point = (next(&g) % 3) ? (int)(next(&g) % (unsigned)(digits + 1)) : -1;
        int e = (next(&g) % 4) ? (int)(next(&g) % 691) - 360 : INT_MIN;
        decimal(num, sizeof(num), &g, digits, point, e);
        check_fast(num);
    }
    ck_assert_uint_gt(fast_tried, 2000000);
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
    tcase_add_test(tc, scanner_matches_strtod);
    tcase_add_test(tc, fast_scanner_matches_strtod);
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

/* Unit tests of the synthetic generators: exact counts, structure,
 * determinism, statistics, validation and out-of-memory behaviour.
 *
 * GSL's error handler is deliberately left at its default (abort): the
 * generators must never hand GSL anything it would complain about. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/tensor.h"
#include "test_alloc.h"

/* For per-entry checks: Check's ck_assert_* record a mark point on every
 * call, which dominates loops over a million entries. */
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #cond);                                  \
    } while (0)

static tessel_tensor *generate(const tessel_gen_params *p)
{
    tessel_tensor *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_generate(p, NULL, &t, &d);
    ck_assert_msg(rc == TESSEL_OK, "tessel_generate: %d %s", rc, d.message);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* The layout every tensor must have: CSR, rows sorted, no repeats, values
 * in (0, 1] when present. */
static void check_layout(const tessel_tensor *t, const tessel_gen_params *p)
{
    ck_assert_uint_eq(t->order, 2);
    ck_assert_uint_eq(t->dims[0], p->rows);
    ck_assert_uint_eq(t->dims[1], p->cols);
    ck_assert_uint_eq(t->ptr[0], 0);
    ck_assert_uint_eq(t->ptr[t->dims[0]], t->nnz);
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        REQUIRE(t->ptr[r] <= t->ptr[r + 1]);
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            REQUIRE(t->idx[1][k] < t->dims[1]);
            if (k > t->ptr[r])
                REQUIRE(t->idx[1][k - 1] < t->idx[1][k]);
        }
    }
    if (p->values) {
        ck_assert_str_eq(t->field, "real");
        for (uint64_t k = 0; k < t->nnz; k++)
            REQUIRE(t->values[k] > 0 && t->values[k] <= 1);
    } else {
        ck_assert_str_eq(t->field, "pattern");
        ck_assert_ptr_null(t->values);
    }
}

static int same_tensor(const tessel_tensor *x, const tessel_tensor *y)
{
    if (x->nnz != y->nnz || x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1])
        return 0;
    if (memcmp(x->ptr, y->ptr, (x->dims[0] + 1) * sizeof(uint64_t)) != 0)
        return 0;
    if (x->nnz && memcmp(x->idx[1], y->idx[1], x->nnz * sizeof(uint32_t)) != 0)
        return 0;
    if ((x->values == NULL) != (y->values == NULL))
        return 0;
    return !x->values || !x->nnz || memcmp(x->values, y->values, x->nnz * sizeof(double)) == 0;
}

/* Same seed, same tensor; another seed, another tensor. */
static void check_determinism(tessel_gen_params p)
{
    tessel_tensor *a = generate(&p), *b = generate(&p);
    ck_assert_msg(same_tensor(a, b), "%s: same seed, different tensors",
                  tessel_gen_kind_name(p.kind));
    p.seed += 1;
    tessel_tensor *c = generate(&p);
    ck_assert_msg(!same_tensor(a, c), "%s: seeds %llu and %llu agree",
                  tessel_gen_kind_name(p.kind), (unsigned long long)(p.seed - 1),
                  (unsigned long long)p.seed);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    tessel_tensor_free(&c);
}

static void check_within_sigmas(uint64_t got, double positions, double density, const char *what)
{
    double mean = positions * density, sd = sqrt(positions * density * (1 - density));
    ck_assert_msg(fabs((double)got - mean) <= 5 * sd, "%s: %llu entries, expected %g +- %g", what,
                  (unsigned long long)got, mean, sd);
}

/* ------------------------------------------------------------------ */

START_TEST(uniform_exact_counts)
{
    static const struct { uint64_t rows, cols, nnz; } cases[] = {
        { 300, 200, 12345 }, /* sparse path */
        { 300, 200, 30000 }, /* exactly half */
        { 300, 200, 30001 }, /* complement path */
        { 300, 200, 59999 }, { 300, 200, 60000 }, /* every position */
        { 300, 200, 0 },     { 1, 1, 1 },         { 1, 1000, 999 },
        { 1000, 1, 3 },      { 7, 13, 50 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (int values = 0; values <= 1; values++) {
            tessel_gen_params p;
            tessel_gen_params_init(&p, TESSEL_GEN_UNIFORM);
            p.rows = cases[c].rows;
            p.cols = cases[c].cols;
            p.nnz = cases[c].nnz;
            p.values = values;
            tessel_tensor *t = generate(&p);
            ck_assert_uint_eq(t->nnz, p.nnz);
            check_layout(t, &p);
            tessel_tensor_free(&t);
        }
    }
}
END_TEST

/* Rows and columns of a uniform matrix hold Binomial(nnz, 1/rows) entries:
 * a bias in how linear positions are drawn or split shows up here. */
START_TEST(uniform_is_uniform)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_UNIFORM);
    p.rows = 1000;
    p.cols = 3000;
    p.nnz = 300000;
    tessel_tensor *t = generate(&p);
    double per_row = 300.0, sd_row = sqrt(300.0 * (1 - 1.0 / 3000));
    uint64_t *col_count = calloc(p.cols, sizeof(uint64_t));
    ck_assert_ptr_nonnull(col_count);
    for (uint64_t r = 0; r < p.rows; r++) {
        double n = (double)(t->ptr[r + 1] - t->ptr[r]);
        if (!(fabs(n - per_row) < 6 * sd_row))
            ck_abort_msg("row %llu holds %g", (unsigned long long)r, n);
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++)
            col_count[t->idx[1][k]]++;
    }
    for (uint64_t c = 0; c < p.cols; c++)
        if (!(fabs((double)col_count[c] - 100.0) < 6 * sqrt(100.0 * 0.999)))
            ck_abort_msg("col %llu holds %llu", (unsigned long long)c,
                         (unsigned long long)col_count[c]);
    /* The high half of the positions gets half of the entries. */
    uint64_t high = t->nnz - t->ptr[p.rows / 2];
    check_within_sigmas(high, (double)p.nnz, 0.5, "upper half");
    free(col_count);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(uniform_huge_dims)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_UNIFORM);
    p.rows = p.cols = 10000000;
    p.nnz = 2000000;
    p.values = 0;
    tessel_tensor *t = generate(&p);
    ck_assert_uint_eq(t->nnz, 2000000);
    ck_assert_ptr_null(t->values);
    for (uint64_t k = 1; k < t->nnz; k += 997)
        REQUIRE(t->idx[1][k] < p.cols);
    tessel_tensor_free(&t);

    /* Columns near the 32-bit limit: positions need more than 32 bits. */
    p.rows = 1000;
    p.cols = 4000000000u;
    p.nnz = 10;
    p.values = 1;
    t = generate(&p);
    ck_assert_uint_eq(t->nnz, 10);
    check_layout(t, &p);
    tessel_tensor_free(&t);

    /* 4e9 x 4e9 with 10 entries: nothing proportional to rows * cols is
     * allocated; the builder refuses the 32 GB of row pointers itself. */
    p.rows = p.cols = 4000000000u;
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_diag d;
    tessel_diag_clear(&d);
    t = NULL;
    ck_assert_int_eq(tessel_generate(&p, &ta.allocator, &t, &d), TESSEL_ERANGE);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(d.message, "rows"));
    ck_assert_uint_lt(ta.peak, 1u << 20);
    ck_assert_int_eq(ta.live, 0);
}
END_TEST

/* ------------------------------------------------------------------ */

/* |i - j| <= w positions, diagonal by diagonal: diagonal j - i = dd has
 * max(0, min(rows, cols - dd) - max(0, -dd)) positions. */
static uint64_t band_formula(uint64_t rows, uint64_t cols, uint64_t w)
{
    uint64_t total = 0;
    int64_t lo = -(int64_t)(w < rows ? w : rows), hi = (int64_t)(w < cols ? w : cols);
    for (int64_t dd = lo; dd <= hi; dd++) {
        int64_t first = dd < 0 ? -dd : 0;
        int64_t end = (int64_t)cols - dd < (int64_t)rows ? (int64_t)cols - dd : (int64_t)rows;
        if (end > first)
            total += (uint64_t)(end - first);
    }
    return total;
}

START_TEST(banded_full_band)
{
    static const struct { uint64_t rows, cols, w; } cases[] = {
        { 1000, 800, 5 }, { 800, 1000, 5 }, { 100, 100, 0 }, { 100, 100, 99 },
        { 100, 100, 1000 }, { 1, 1, 0 }, { 5, 2, 1 }, { 2, 50, 3 }, { 64, 64, 1 },
        { 100, 37, UINT64_MAX },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        tessel_gen_params p;
        tessel_gen_params_init(&p, TESSEL_GEN_BANDED);
        p.rows = cases[c].rows;
        p.cols = cases[c].cols;
        p.bandwidth = cases[c].w;
        tessel_tensor *t = generate(&p);
        check_layout(t, &p);
        ck_assert_msg(t->nnz == band_formula(p.rows, p.cols, p.bandwidth),
                      "%llux%llu w=%llu: %llu entries, formula %llu", (unsigned long long)p.rows,
                      (unsigned long long)p.cols, (unsigned long long)p.bandwidth,
                      (unsigned long long)t->nnz,
                      (unsigned long long)band_formula(p.rows, p.cols, p.bandwidth));
        /* Every kept position is in the band, and at density 1 each row is
         * the whole interval, so count + range pin the set down. */
        for (uint64_t r = 0; r < p.rows; r++)
            for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
                uint64_t j = t->idx[1][k];
                REQUIRE((r > j ? r - j : j - r) <= p.bandwidth);
            }
        tessel_tensor_free(&t);
    }
}
END_TEST

START_TEST(banded_density)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_BANDED);
    p.rows = 3000;
    p.cols = 2500;
    p.bandwidth = 20;
    p.density = 0.3;
    tessel_tensor *t = generate(&p);
    check_layout(t, &p);
    check_within_sigmas(t->nnz, (double)band_formula(3000, 2500, 20), 0.3, "banded 0.3");
    for (uint64_t r = 0; r < p.rows; r++)
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            uint64_t j = t->idx[1][k];
            REQUIRE((r > j ? r - j : j - r) <= 20);
        }
    /* Kept positions spread over the band: the outermost diagonals get
     * their share, not just the first positions of each row. */
    uint64_t outer = 0;
    for (uint64_t r = 0; r < p.rows; r++)
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++)
            outer += t->idx[1][k] == r + 20 || t->idx[1][k] + 20 == r;
    check_within_sigmas(outer, (double)(2500 - 20) + (double)(2500 + 20 - 20), 0.3, "outer");
    tessel_tensor_free(&t);

    /* Very low density: geometric gaps, no per-position work. */
    p.rows = p.cols = 1000000;
    p.bandwidth = 1000;
    p.density = 1e-6;
    t = generate(&p);
    check_within_sigmas(t->nnz, (double)band_formula(1000000, 1000000, 1000), 1e-6, "1e-6");
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */

static uint64_t block_formula(uint64_t rows, uint64_t cols, uint64_t bs)
{
    uint64_t total = 0;
    for (uint64_t start = 0; start < rows && start < cols; start += bs) {
        uint64_t h = rows - start < bs ? rows - start : bs;
        uint64_t w = cols - start < bs ? cols - start : bs;
        total += h * w;
    }
    return total;
}

START_TEST(blockdiag_full_blocks)
{
    static const struct { uint64_t rows, cols, block; } cases[] = {
        { 1000, 1000, 64 }, { 1000, 700, 64 }, { 700, 1000, 64 }, { 5, 3, 2 },
        { 100, 100, 1 },    { 100, 100, 100 }, { 100, 30, 1000 }, { 1, 1, 1 },
        { 50, 80, 1ull << 40 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        tessel_gen_params p;
        tessel_gen_params_init(&p, TESSEL_GEN_BLOCKDIAG);
        p.rows = cases[c].rows;
        p.cols = cases[c].cols;
        p.block = cases[c].block;
        tessel_tensor *t = generate(&p);
        check_layout(t, &p);
        ck_assert_uint_eq(t->nnz, block_formula(p.rows, p.cols, p.block));
        for (uint64_t r = 0; r < p.rows; r++)
            for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++)
                REQUIRE(r / p.block == t->idx[1][k] / p.block);
        tessel_tensor_free(&t);
    }
}
END_TEST

START_TEST(blockdiag_density)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_BLOCKDIAG);
    p.rows = 2000;
    p.cols = 1800;
    p.block = 50;
    p.density = 0.3;
    tessel_tensor *t = generate(&p);
    check_layout(t, &p);
    check_within_sigmas(t->nnz, (double)block_formula(2000, 1800, 50), 0.3, "blockdiag 0.3");
    for (uint64_t r = 0; r < p.rows; r++)
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++)
            REQUIRE(r / 50 == t->idx[1][k] / 50);
    ck_assert_uint_eq(t->ptr[p.rows], t->ptr[1800]); /* rows past the last block are empty */
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */

static void check_nm(uint64_t rows, uint64_t cols, unsigned n, unsigned m)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_NM);
    p.rows = rows;
    p.cols = cols;
    p.n = n;
    p.m = m;
    tessel_tensor *t = generate(&p);
    check_layout(t, &p);
    uint64_t groups = (cols + m - 1) / m;
    uint64_t *count = calloc(groups, sizeof(uint64_t));
    ck_assert_ptr_nonnull(count);
    uint64_t total = 0;
    for (uint64_t r = 0; r < rows; r++) {
        memset(count, 0, groups * sizeof(uint64_t));
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++)
            count[t->idx[1][k] / m]++;
        for (uint64_t g = 0; g < groups; g++) {
            uint64_t width = cols - g * m < m ? cols - g * m : m;
            uint64_t want = n < width ? n : width;
            if (count[g] != want)
                ck_abort_msg("%u:%u row %llu group %llu: %llu, want %llu", n, m,
                             (unsigned long long)r, (unsigned long long)g,
                             (unsigned long long)count[g], (unsigned long long)want);
            total += want;
        }
    }
    ck_assert_uint_eq(t->nnz, total);
    free(count);
    tessel_tensor_free(&t);
}

START_TEST(nm_exact_per_group)
{
    check_nm(50, 30, 3, 8);       /* three groups of 8, a last group of 6 */
    check_nm(40, 10, 3, 4);       /* last group of 2 < n */
    check_nm(20, 64, 2, 4);
    check_nm(20, 5, 2, 8);        /* m > cols: one cut group */
    check_nm(10, 16, 4, 4);       /* everything */
    check_nm(10, 7, 1, 1);
    check_nm(10, 200, 31, 64);    /* the widest mask */
    check_nm(10, 250, 3, 100);    /* wide groups, kept set drawn */
    check_nm(10, 250, 97, 100);   /* wide groups, dropped set drawn */
    check_nm(3, 1000000, 2, 500000);
}
END_TEST

/* Each position of a group is kept with probability n/m. */
START_TEST(nm_positions_uniform)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_NM);
    p.rows = 20000;
    p.cols = 8;
    p.n = 2;
    p.m = 8;
    tessel_tensor *t = generate(&p);
    uint64_t at[8] = { 0 };
    for (uint64_t k = 0; k < t->nnz; k++)
        at[t->idx[1][k]]++;
    for (int c = 0; c < 8; c++)
        check_within_sigmas(at[c], 20000, 0.25, "nm column");
    tessel_tensor_free(&t);
    p.cols = 300;
    p.m = 300;
    p.n = 3;
    p.rows = 20000;
    t = generate(&p);
    uint64_t low = 0;
    for (uint64_t k = 0; k < t->nnz; k++)
        low += t->idx[1][k] < 150;
    check_within_sigmas(low, 60000, 0.5, "nm wide lower half");
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */

static uint64_t max_row(const tessel_tensor *t)
{
    uint64_t most = 0;
    for (uint64_t r = 0; r < t->dims[0]; r++)
        if (t->ptr[r + 1] - t->ptr[r] > most)
            most = t->ptr[r + 1] - t->ptr[r];
    return most;
}

START_TEST(rmat_skew)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
    p.rows = p.cols = 1 << 14;
    p.nnz = 100000;
    tessel_tensor *t = generate(&p);
    check_layout(t, &p);
    ck_assert_uint_le(t->nnz, p.nnz);
    ck_assert_uint_gt(t->nnz, p.nnz / 2);
    double mean = (double)t->nnz / (double)t->dims[0];
    ck_assert_msg((double)max_row(t) > 20 * mean, "max row %llu, mean %g",
                  (unsigned long long)max_row(t), mean);
    tessel_tensor_free(&t);

    /* Equal probabilities are uniform draws: no such skew. */
    p.a = p.b = p.c = p.d = 0.25;
    t = generate(&p);
    mean = (double)t->nnz / (double)t->dims[0];
    ck_assert_msg((double)max_row(t) < mean + 8 * sqrt(mean) + 4, "max row %llu, mean %g",
                  (unsigned long long)max_row(t), mean);
    tessel_tensor_free(&t);

    /* All weight in the top left quadrant: every draw is (0, 0). */
    p.a = 1;
    p.b = p.c = p.d = 0;
    p.nnz = 1000;
    t = generate(&p);
    ck_assert_uint_eq(t->nnz, 1);
    ck_assert_uint_eq(t->ptr[1], 1);
    ck_assert_uint_eq(t->idx[1][0], 0);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(rmat_shapes)
{
    static const struct { uint64_t rows, cols; } cases[] = {
        { 1000, 77 }, { 77, 1000 }, { 1, 1 }, { 1, 100000 }, { 100000, 1 }, { 3, 5 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        tessel_gen_params p;
        tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
        p.rows = cases[c].rows;
        p.cols = cases[c].cols;
        p.nnz = 5000;
        tessel_tensor *t = generate(&p);
        check_layout(t, &p);
        ck_assert_uint_le(t->nnz, p.nnz);
        ck_assert_uint_ge(t->nnz, 1);
        tessel_tensor_free(&t);
    }
    /* Weight that can never land inside is an error, not an endless loop:
     * with a = b = 0 the row's top bit is always 1, below the 2 rows kept
     * of the 4 x 4 square. */
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
    p.rows = 2;
    p.cols = 4;
    p.nnz = 10;
    p.a = p.b = 0;
    p.c = p.d = 0.5;
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_generate(&p, NULL, &t, &d), TESSEL_EINVAL);
    ck_assert_ptr_null(t);
    ck_assert_str_eq(d.field, "a");
    /* Almost no weight inside still works (redrawing would take ~1e9 tries). */
    p.rows = 1;
    p.cols = 1u << 30;
    p.a = 0.5;
    p.b = 0.0000001;
    p.c = 0.4999999;
    p.d = 0;
    t = generate(&p);
    ck_assert_uint_ge(t->nnz, 1);
    tessel_tensor_free(&t);
}
END_TEST

/* Conditioning each level on staying inside must give the distribution of
 * "draw a path on the power-of-two square, redraw if it lands outside".
 * On 3 x 3 (inside a 4 x 4 square) that is P(cell) / P(inside) with
 * P(cell) the product of its two quadrant probabilities. */
START_TEST(rmat_matches_redraw)
{
    const double q[4] = { 0.57, 0.19, 0.19, 0.05 };
    double want[3][3], inside = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            want[i][j] = q[((i >> 1) << 1) | (j >> 1)] * q[((i & 1) << 1) | (j & 1)];
            inside += want[i][j];
        }
    const int draws = 6000;
    int seen[3][3] = { { 0 } };
    for (int s = 1; s <= draws; s++) {
        tessel_gen_params p;
        tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
        p.rows = p.cols = 3;
        p.nnz = 1;
        p.values = 0;
        p.seed = (uint64_t)s;
        tessel_tensor *t = generate(&p);
        ck_assert_uint_eq(t->nnz, 1);
        for (int i = 0; i < 3; i++)
            if (t->ptr[i + 1] > t->ptr[i])
                seen[i][t->idx[1][t->ptr[i]]]++;
        tessel_tensor_free(&t);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double pr = want[i][j] / inside;
            double mean = draws * pr, sd = sqrt(draws * pr * (1 - pr));
            ck_assert_msg(fabs(seen[i][j] - mean) <= 5 * sd, "cell %d,%d: %d, expected %g", i, j,
                          seen[i][j], mean);
        }
}
END_TEST

/* ------------------------------------------------------------------ */


/* ------------------------------------------------------------------ */
/* Clustered graphs. */

static tessel_gen_params clustered_params(uint64_t n, uint64_t cliques, double skew)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_CLUSTERED);
    p.rows = p.cols = n;
    p.cliques = cliques;
    p.skew = skew;
    return p;
}

static int has_entry(const tessel_tensor *t, uint64_t i, uint64_t j)
{
    uint64_t lo = t->ptr[i], hi = t->ptr[i + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->idx[1][mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->ptr[i + 1] && t->idx[1][lo] == j;
}

/* Closed wedges over all wedges (the global clustering coefficient). */
static double clustering(const tessel_tensor *t)
{
    double closed = 0, wedges = 0;
    for (uint64_t v = 0; v < t->dims[0]; v++)
        for (uint64_t x = t->ptr[v]; x < t->ptr[v + 1]; x++)
            for (uint64_t y = x + 1; y < t->ptr[v + 1]; y++) {
                wedges++;
                closed += has_entry(t, t->idx[1][x], t->idx[1][y]);
            }
    return wedges > 0 ? closed / wedges : 0;
}

START_TEST(clustered_structure)
{
    tessel_gen_params p = clustered_params(5000, 3000, 0.8);
    p.tail = 2000;
    tessel_tensor *t = generate(&p);
    check_layout(t, &p);
    /* symmetric, no diagonal */
    for (uint64_t i = 0; i < t->dims[0]; i++)
        for (uint64_t k = t->ptr[i]; k < t->ptr[i + 1]; k++) {
            REQUIRE(t->idx[1][k] != i);
            REQUIRE(has_entry(t, t->idx[1][k], i));
        }
    /* entries: at most the pairs drawn, and repeats (the skew's overlap)
     * take less than half of them */
    double a_pairs = 0, z = 0;
    for (uint64_t s = 2; s <= p.clique_max; s++) {
        z += pow((double)s, -p.alpha);
        a_pairs += pow((double)s, -p.alpha) * (double)s * (double)(s - 1);
    }
    double drawn = (double)p.cliques * a_pairs / z + 2.0 * (double)p.tail;
    ck_assert_msg(t->nnz <= 1.2 * drawn && t->nnz >= 0.5 * drawn, "%llu entries, %g drawn",
                  (unsigned long long)t->nnz, drawn);
    /* clique-rich: far more closed wedges than a uniform graph of the same
     * density (about nnz / n^2) */
    double c = clustering(t), density = (double)t->nnz / 25e6;
    ck_assert_msg(c > 0.05 && c > 20 * density, "clustering %g, density %g", c, density);
    /* skewed: the top degree is many times the mean */
    uint64_t top = 0;
    for (uint64_t i = 0; i < t->dims[0]; i++)
        top = t->ptr[i + 1] - t->ptr[i] > top ? t->ptr[i + 1] - t->ptr[i] : top;
    double mean = (double)t->nnz / 5000;
    ck_assert_msg((double)top > 10 * mean, "top degree %llu, mean %g", (unsigned long long)top,
                  mean);
    tessel_tensor_free(&t);
    /* skew 0 spreads the members: no vertex is a hub */
    p = clustered_params(5000, 3000, 0);
    t = generate(&p);
    top = 0;
    for (uint64_t i = 0; i < t->dims[0]; i++)
        top = t->ptr[i + 1] - t->ptr[i] > top ? t->ptr[i + 1] - t->ptr[i] : top;
    mean = (double)t->nnz / 5000;
    ck_assert_msg((double)top < 10 * mean, "skew 0: top degree %llu, mean %g",
                  (unsigned long long)top, mean);
    tessel_tensor_free(&t);
    /* small graphs with cliques as large as the graph still end */
    p = clustered_params(6, 10, 2);
    p.clique_max = 6;
    p.alpha = 0;
    t = generate(&p);
    ck_assert_uint_le(t->nnz, 30);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(determinism_every_kind)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_UNIFORM);
    p.rows = 500;
    p.cols = 400;
    p.nnz = 5000;
    check_determinism(p);
    p.nnz = 150000; /* complement */
    check_determinism(p);
    tessel_gen_params_init(&p, TESSEL_GEN_BANDED);
    p.rows = p.cols = 500;
    p.bandwidth = 4;
    p.density = 0.5;
    check_determinism(p);
    p.density = 1; /* positions fixed: the values must differ */
    check_determinism(p);
    tessel_gen_params_init(&p, TESSEL_GEN_BLOCKDIAG);
    p.rows = p.cols = 500;
    p.block = 16;
    p.density = 0.5;
    check_determinism(p);
    tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
    p.rows = p.cols = 1000;
    p.nnz = 5000;
    check_determinism(p);
    tessel_gen_params_init(&p, TESSEL_GEN_NM);
    p.rows = 100;
    p.cols = 64;
    check_determinism(p);
    p.values = 0;
    p.m = 100;
    p.n = 10;
    p.cols = 1000;
    check_determinism(p);
    p = clustered_params(2000, 500, 0.8);
    p.tail = 300;
    check_determinism(p);
    p.values = 0;
    check_determinism(p);

    /* A known first draw pins the generator (MT19937) and its seeding, so
     * matrices stay reproducible across versions. */
    tessel_gen_params_init(&p, TESSEL_GEN_UNIFORM);
    p.rows = 1;
    p.cols = 1;
    p.nnz = 1;
    p.seed = 5489;
    tessel_tensor *t = generate(&p);
    /* One position of one: nothing is drawn for it, so the value comes
     * from MT19937's first output for seed 5489 (the reference 3499211612),
     * as 1 - x / 2^32. */
    ck_assert_double_eq(t->values[0], (4294967296.0 - 3499211612.0) / 4294967296.0);
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */

typedef struct bad_case {
    tessel_gen_kind kind;
    const char *field; /* NULL: no field expected */
    int code;
    void (*spoil)(tessel_gen_params *p);
} bad_case;

static void rows0(tessel_gen_params *p) { p->rows = 0; }
static void cols0(tessel_gen_params *p) { p->cols = 0; }
static void rows_big(tessel_gen_params *p) { p->rows = (uint64_t)TESSEL_MAX_DIM + 1; }
static void cols_big(tessel_gen_params *p) { p->cols = UINT64_MAX; }
static void seed_big(tessel_gen_params *p) { p->seed = 1ull << 32; }
static void kind_bad(tessel_gen_params *p) { p->kind = (tessel_gen_kind)17; }
static void nnz_over(tessel_gen_params *p) { p->nnz = p->rows * p->cols + 1; }
static void density0(tessel_gen_params *p) { p->density = 0; }
static void density_neg(tessel_gen_params *p) { p->density = -0.5; }
static void density_big(tessel_gen_params *p) { p->density = 1.0000001; }
static void density_nan(tessel_gen_params *p) { p->density = NAN; }
static void density_inf(tessel_gen_params *p) { p->density = INFINITY; }
static void block0(tessel_gen_params *p) { p->block = 0; }
static void m0(tessel_gen_params *p) { p->m = 0; }
static void n_over(tessel_gen_params *p) { p->n = p->m + 1; }
static void n0(tessel_gen_params *p) { p->n = 0; }
static void a_neg(tessel_gen_params *p) { p->a = -0.01; p->b += 0.01; }
static void b_nan(tessel_gen_params *p) { p->b = NAN; }
static void c_big(tessel_gen_params *p) { p->c = 1.5; }
static void d_inf(tessel_gen_params *p) { p->d = INFINITY; }
static void sum_off(tessel_gen_params *p) { p->a = 0.9; }
static void sum_close(tessel_gen_params *p) { p->d += 1e-8; }
static void huge_uniform(tessel_gen_params *p) { p->rows = p->cols = 1u << 20; p->nnz = (1ull << 32) + 1; }
static void huge_rmat(tessel_gen_params *p) { p->nnz = (1ull << 32) + 1; }
static void huge_band(tessel_gen_params *p) { p->rows = p->cols = 4000000000u; p->bandwidth = 1; }
static void huge_block(tessel_gen_params *p) { p->rows = p->cols = 4000000000u; p->block = 2; }
static void huge_nm(tessel_gen_params *p) { p->rows = p->cols = 4000000000u; }
static void not_square(tessel_gen_params *p) { p->cols = 11; }
static void clique1(tessel_gen_params *p) { p->clique_max = 1; }
static void clique_big(tessel_gen_params *p) { p->clique_max = 11; }
static void alpha_nan(tessel_gen_params *p) { p->clique_max = 5; p->alpha = NAN; }
static void skew_neg(tessel_gen_params *p) { p->clique_max = 5; p->skew = -1; }
static void huge_cliques(tessel_gen_params *p) { p->clique_max = 10; p->cliques = 1ull << 40; }

START_TEST(invalid_parameters)
{
    static const bad_case cases[] = {
        { TESSEL_GEN_UNIFORM, "rows", TESSEL_EINVAL, rows0 },
        { TESSEL_GEN_BANDED, "cols", TESSEL_EINVAL, cols0 },
        { TESSEL_GEN_RMAT, "rows", TESSEL_EINVAL, rows_big },
        { TESSEL_GEN_NM, "cols", TESSEL_EINVAL, cols_big },
        { TESSEL_GEN_UNIFORM, "seed", TESSEL_EINVAL, seed_big },
        { TESSEL_GEN_UNIFORM, "kind", TESSEL_EINVAL, kind_bad },
        { TESSEL_GEN_UNIFORM, "nnz", TESSEL_EINVAL, nnz_over },
        { TESSEL_GEN_BANDED, "density", TESSEL_EINVAL, density0 },
        { TESSEL_GEN_BANDED, "density", TESSEL_EINVAL, density_neg },
        { TESSEL_GEN_BANDED, "density", TESSEL_EINVAL, density_big },
        { TESSEL_GEN_BANDED, "density", TESSEL_EINVAL, density_nan },
        { TESSEL_GEN_BLOCKDIAG, "density", TESSEL_EINVAL, density_inf },
        { TESSEL_GEN_BLOCKDIAG, "density", TESSEL_EINVAL, density_nan },
        { TESSEL_GEN_BLOCKDIAG, "block", TESSEL_EINVAL, block0 },
        { TESSEL_GEN_NM, "m", TESSEL_EINVAL, m0 },
        { TESSEL_GEN_NM, "n", TESSEL_EINVAL, n_over },
        { TESSEL_GEN_NM, "n", TESSEL_EINVAL, n0 },
        { TESSEL_GEN_RMAT, "a", TESSEL_EINVAL, a_neg },
        { TESSEL_GEN_RMAT, "b", TESSEL_EINVAL, b_nan },
        { TESSEL_GEN_RMAT, "c", TESSEL_EINVAL, c_big },
        { TESSEL_GEN_RMAT, "d", TESSEL_EINVAL, d_inf },
        { TESSEL_GEN_RMAT, "a", TESSEL_EINVAL, sum_off },
        { TESSEL_GEN_RMAT, "a", TESSEL_EINVAL, sum_close },
        { TESSEL_GEN_UNIFORM, NULL, TESSEL_ERANGE, huge_uniform },
        { TESSEL_GEN_RMAT, NULL, TESSEL_ERANGE, huge_rmat },
        { TESSEL_GEN_BANDED, NULL, TESSEL_ERANGE, huge_band },
        { TESSEL_GEN_BLOCKDIAG, NULL, TESSEL_ERANGE, huge_block },
        { TESSEL_GEN_NM, NULL, TESSEL_ERANGE, huge_nm },
        { TESSEL_GEN_CLUSTERED, "cols", TESSEL_EINVAL, not_square },
        { TESSEL_GEN_CLUSTERED, "clique_max", TESSEL_EINVAL, clique1 },
        { TESSEL_GEN_CLUSTERED, "clique_max", TESSEL_EINVAL, clique_big },
        { TESSEL_GEN_CLUSTERED, "alpha", TESSEL_EINVAL, alpha_nan },
        { TESSEL_GEN_CLUSTERED, "skew", TESSEL_EINVAL, skew_neg },
        { TESSEL_GEN_CLUSTERED, NULL, TESSEL_ERANGE, huge_cliques },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tessel_gen_params p;
        tessel_gen_params_init(&p, cases[i].kind);
        p.rows = p.cols = 10;
        p.nnz = 5;
        p.bandwidth = 1;
        p.block = 2;
        cases[i].spoil(&p);
        static tessel_tensor sentinel;
        tessel_tensor *t = &sentinel; /* must be reset to NULL */
        tessel_diag d;
        tessel_diag_clear(&d);
        test_alloc ta;
        test_alloc_init(&ta, 0);
        int rc = tessel_generate(&p, &ta.allocator, &t, &d);
        ck_assert_msg(rc == cases[i].code, "case %zu: %d (%s)", i, rc, d.message);
        ck_assert_ptr_null(t);
        ck_assert_int_eq(d.code, cases[i].code);
        ck_assert_msg(d.message[0] != '\0', "case %zu: no message", i);
        if (cases[i].field)
            ck_assert_msg(strcmp(d.field, cases[i].field) == 0, "case %zu: field '%s', want %s",
                          i, d.field, cases[i].field);
        /* Refused before anything is allocated. */
        ck_assert_int_eq(ta.calls, 0);
    }
    /* A NULL diag is fine too. */
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_NM);
    p.rows = p.cols = 4000000000u;
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_generate(&p, NULL, &t, NULL), TESSEL_ERANGE);
    ck_assert_int_eq(tessel_generate(NULL, NULL, &t, NULL), TESSEL_EINVAL);
    /* Accepted edge values. */
    tessel_gen_params_init(&p, TESSEL_GEN_BANDED);
    p.rows = p.cols = 10;
    p.bandwidth = 0; /* the diagonal */
    p.density = 1;
    t = generate(&p);
    ck_assert_uint_eq(t->nnz, 10);
    tessel_tensor_free(&t);
    tessel_gen_params_init(&p, TESSEL_GEN_UNIFORM);
    p.rows = p.cols = 10;
    p.seed = UINT32_MAX;
    t = generate(&p);
    ck_assert_uint_eq(t->nnz, 0);
    tessel_tensor_free(&t);
    tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
    p.rows = p.cols = 10;
    p.nnz = 10;
    p.d += 5e-10; /* within 1e-9 of 1 */
    t = generate(&p);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(kind_names)
{
    for (int k = 0; k <= TESSEL_GEN_CLUSTERED; k++)
        ck_assert_int_eq(tessel_gen_kind_from_name(tessel_gen_kind_name((tessel_gen_kind)k)), k);
    ck_assert_int_eq(tessel_gen_kind_from_name("powerlaw"), TESSEL_GEN_RMAT);
    ck_assert_int_eq(tessel_gen_kind_from_name("uniform"), TESSEL_GEN_UNIFORM);
    ck_assert_int_eq(tessel_gen_kind_from_name("blockdiag"), TESSEL_GEN_BLOCKDIAG);
    ck_assert_int_eq(tessel_gen_kind_from_name("clustered"), TESSEL_GEN_CLUSTERED);
    ck_assert_int_eq(tessel_gen_kind_from_name("dense"), -1);
    ck_assert_int_eq(tessel_gen_kind_from_name(""), -1);
    ck_assert_int_eq(tessel_gen_kind_from_name(NULL), -1);
    ck_assert_str_eq(tessel_gen_kind_name((tessel_gen_kind)99), "?");
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
    ck_assert_int_eq(p.kind, TESSEL_GEN_RMAT);
    ck_assert_uint_eq(p.rows, 0);
    ck_assert_double_eq(p.a + p.b + p.c + p.d, 1.0);
    ck_assert_uint_eq(p.seed, 1);
    ck_assert_int_eq(p.values, 1);
}
END_TEST

/* ------------------------------------------------------------------ */

/* Fails allocation n = 1, 2, ... until a run succeeds: every failure must
 * come back as TESSEL_ENOMEM with nothing left allocated. */
static void oom_sweep(const tessel_gen_params *p)
{
    int succeeded = 0;
    long n;
    for (n = 1; n < 1000 && !succeeded; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_tensor *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_generate(p, &ta.allocator, &t, &d);
        ck_assert_msg(rc == TESSEL_OK || rc == TESSEL_ENOMEM, "%s, fail at %ld: %d (%s)",
                      tessel_gen_kind_name(p->kind), n, rc, d.message);
        if (rc == TESSEL_ENOMEM) {
            ck_assert_ptr_null(t);
            ck_assert_int_eq(d.code, TESSEL_ENOMEM);
        }
        succeeded = rc == TESSEL_OK;
        tessel_tensor_free(&t);
        ck_assert_msg(ta.live == 0, "%s, fail at %ld: %ld blocks leaked",
                      tessel_gen_kind_name(p->kind), n, ta.live);
    }
    ck_assert_msg(succeeded, "%s never succeeded", tessel_gen_kind_name(p->kind));
    ck_assert_int_gt(n, 3); /* the sweep did fail something */
}

START_TEST(out_of_memory_every_allocation)
{
    for (int kind = 0; kind <= TESSEL_GEN_CLUSTERED; kind++) {
        for (int values = 0; values <= 1; values++) {
            tessel_gen_params p;
            tessel_gen_params_init(&p, (tessel_gen_kind)kind);
            p.rows = p.cols = 64;
            p.nnz = 300;
            p.bandwidth = 2;
            p.block = 8;
            p.density = 0.7;
            p.cliques = 20;
            p.tail = 10;
            p.values = values;
            oom_sweep(&p);
        }
    }
    /* The other paths: uniform complement, wide N:M groups. */
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_UNIFORM);
    p.rows = p.cols = 20;
    p.nnz = 350;
    oom_sweep(&p);
    tessel_gen_params_init(&p, TESSEL_GEN_NM);
    p.rows = 8;
    p.cols = 300;
    p.n = 5;
    p.m = 100;
    oom_sweep(&p);
    p.n = 95;
    oom_sweep(&p);
}
END_TEST

/* One case per test, so CK_RUN_CASE=name runs a single one. */
static void add(Suite *s, const char *name, const TTest *test)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test);
    suite_add_tcase(s, tc);
}

int main(void)
{
    Suite *s = suite_create("generate");
    add(s, "uniform_exact_counts", uniform_exact_counts);
    add(s, "uniform_is_uniform", uniform_is_uniform);
    add(s, "uniform_huge_dims", uniform_huge_dims);
    add(s, "banded_full_band", banded_full_band);
    add(s, "banded_density", banded_density);
    add(s, "blockdiag_full_blocks", blockdiag_full_blocks);
    add(s, "blockdiag_density", blockdiag_density);
    add(s, "nm_exact_per_group", nm_exact_per_group);
    add(s, "nm_positions_uniform", nm_positions_uniform);
    add(s, "rmat_skew", rmat_skew);
    add(s, "rmat_shapes", rmat_shapes);
    add(s, "rmat_matches_redraw", rmat_matches_redraw);
    add(s, "clustered_structure", clustered_structure);
    add(s, "determinism_every_kind", determinism_every_kind);
    add(s, "invalid_parameters", invalid_parameters);
    add(s, "kind_names", kind_names);
    add(s, "out_of_memory_every_allocation", out_of_memory_every_allocation);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

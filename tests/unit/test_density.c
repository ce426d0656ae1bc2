/* Unit tests of the analytic density models (src/stats/density.c):
 * distributions worked out by hand; independent oracles on many small
 * shapes (GSL's hypergeometric and binomial pmfs per tile, a brute-force
 * count of in-band positions, a brute-force enumeration of N:M groups);
 * agreement with generated synthetic matrices of the same model within
 * sampling error; errors; out of memory at every allocation. */
#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/stats.h"
#include "test_alloc.h"

static tessel_density_model model_of(tessel_density_kind kind, uint64_t rows, uint64_t cols)
{
    tessel_density_model d;
    memset(&d, 0, sizeof(d));
    d.kind = kind;
    d.rows = rows;
    d.cols = cols;
    return d;
}

static tessel_density_occupancy *occupancy_of(const tessel_density_model *d, uint64_t tr,
                                              uint64_t tc)
{
    const uint64_t tile[2] = { tr, tc };
    tessel_density_occupancy *o = NULL;
    tessel_diag diag;
    tessel_diag_clear(&diag);
    int rc = tessel_density_occupancy_create(d, tile, NULL, &o, &diag);
    ck_assert_msg(rc == TESSEL_OK, "create failed: %s", diag.message);
    ck_assert_ptr_nonnull(o);
    return o;
}

static void assert_near(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * fmax(1.0, fabs(want)), "%s: got %.17g, want %.17g",
                  what, got, want);
}

/* The model's pmf against an oracle's mixture acc[n] = sum_t P_t(n) (n <
 * len): nonempty, and every pmf entry; entries past npmf must carry less
 * than the 1e-12 tail cut. */
static void assert_pmf_matches(const tessel_density_occupancy *o, const double *acc, size_t len,
                               double var, const char *what)
{
    double nonempty = 0;
    for (size_t n = 1; n < len; n++)
        nonempty += acc[n];
    char buf[128];
    snprintf(buf, sizeof(buf), "%s nonempty", what);
    assert_near(o->nonempty, nonempty, 1e-10, buf);
    snprintf(buf, sizeof(buf), "%s nonempty_var", what);
    assert_near(o->nonempty_var, var, 1e-10, buf);
    if (nonempty == 0) {
        ck_assert_uint_eq(o->npmf, 0);
        return;
    }
    ck_assert_msg(o->npmf <= len, "%s: npmf %llu > %zu", what, (unsigned long long)o->npmf, len);
    ck_assert(o->pmf[0] == 0);
    double tail = 0;
    for (size_t n = 1; n < len; n++) {
        double want = acc[n] / nonempty;
        if (n < o->npmf)
            ck_assert_msg(fabs(o->pmf[n] - want) <= 1e-10, "%s: pmf[%zu] = %.17g, want %.17g",
                          what, n, o->pmf[n], want);
        else
            tail += want;
    }
    ck_assert_msg(tail < 1e-12 + 1e-15, "%s: tail cut left %.3g", what, tail);
}

/* ------------------------------------------------------------------ */
/* By hand. */

/* 4x4, 2x2 tiles, nnz 2: each tile has P = 4 of N = 16 positions.
 *   P(0) = C(12,2)/C(16,2) = 66/120, P(1) = 4*12/120 = 48/120, P(2) = C(4,2)/120 = 6/120
 * nonempty = 4 * 54/120 = 1.8; mean = 2/1.8; pmf[1] = 48/54 = 8/9, pmf[2] = 1/9. */
START_TEST(uniform_by_hand)
{
    tessel_density_model d = model_of(TESSEL_DENSITY_UNIFORM, 4, 4);
    d.nnz = 2;
    tessel_density_occupancy *o = occupancy_of(&d, 2, 2);
    ck_assert_uint_eq(o->tiles, 4);
    assert_near(o->nonempty, 1.8, 1e-14, "nonempty");
    assert_near(o->nnz, 2, 0, "nnz");
    assert_near(o->mean, 2 / 1.8, 1e-14, "mean");
    ck_assert_uint_eq(o->npmf, 3);
    assert_near(o->pmf[1], 8.0 / 9, 1e-14, "pmf[1]");
    assert_near(o->pmf[2], 1.0 / 9, 1e-14, "pmf[2]");
    ck_assert_uint_eq(tessel_density_quantile(o, 0), 1);
    ck_assert_uint_eq(tessel_density_quantile(o, 0.5), 1);
    ck_assert_uint_eq(tessel_density_quantile(o, 8.0 / 9), 1);
    ck_assert_uint_eq(tessel_density_quantile(o, 0.9), 2);
    ck_assert_uint_eq(tessel_density_quantile(o, 1), 2);
    ck_assert_uint_eq(tessel_density_quantile(o, NAN), 1);
    tessel_density_occupancy_free(&o);
    ck_assert_ptr_null(o);

    /* density instead of nnz: round(0.125 * 16) = 2, the same model. */
    d.nnz = 0;
    d.density = 0.125;
    o = occupancy_of(&d, 2, 2);
    assert_near(o->nonempty, 1.8, 1e-14, "nonempty from density");
    tessel_density_occupancy_free(&o);

    /* 5x5, 2x2 tiles, nnz 3: edge tiles. N = 25, C(25,3) = 2300.
     *   4 full tiles (P = 4): P(0) = C(21,3)/2300 = 1330/2300
     *   4 edge tiles (P = 2): P(0) = C(23,3)/2300 = 1771/2300
     *   1 corner     (P = 1): P(0) = C(24,3)/2300 = 2024/2300
     * nonempty = (4 * 970 + 4 * 529 + 276) / 2300 = 6272 / 2300. */
    d = model_of(TESSEL_DENSITY_UNIFORM, 5, 5);
    d.nnz = 3;
    o = occupancy_of(&d, 2, 2);
    ck_assert_uint_eq(o->tiles, 9);
    assert_near(o->nonempty, 6272.0 / 2300, 1e-14, "5x5 nonempty");
    assert_near(o->mean, 3 / (6272.0 / 2300), 1e-14, "5x5 mean");
    /* 3 nonzeros in one tile: only the full tiles (C(4,3) * C(21,0) = 4 ways each). */
    ck_assert_uint_eq(o->npmf, 4);
    assert_near(o->pmf[3], 4 * 4.0 / 2300 / (6272.0 / 2300), 1e-14, "5x5 pmf[3]");
    tessel_density_occupancy_free(&o);

    /* density rounding to no nonzero at all: no non-empty tile. */
    d = model_of(TESSEL_DENSITY_UNIFORM, 4, 4);
    d.density = 1e-9;
    o = occupancy_of(&d, 2, 2);
    assert_near(o->nonempty, 0, 0, "empty nonempty");
    ck_assert_uint_eq(o->npmf, 0);
    ck_assert_ptr_null(o->pmf);
    ck_assert(o->mean == 0);
    ck_assert_uint_eq(tessel_density_quantile(o, 0.5), 0);
    tessel_density_occupancy_free(&o);
}
END_TEST

/* Tridiagonal 6x6 (w = 1), 3x3 tiles: in-band positions per tile
 *   (0,0): rows 0-2 x cols 0-2: (0,0) (0,1) (1,0) (1,1) (1,2) (2,1) (2,2) = 7
 *   (0,1): rows 0-2 x cols 3-5: (2,3)                                  = 1
 *   (1,0): (3,2) = 1;  (1,1): 7
 * density 1: exactly 7, 1, 1, 7 -> pmf[1] = pmf[7] = 1/2, nnz 16.
 * density 1/2: nonempty = 2 (1 - 2^-7) + 2 (1 - 1/2) = 2.984375;
 *   pmf[1] = (2 * 1/2 + 2 * 7 * 2^-7) / nonempty. */
START_TEST(banded_by_hand)
{
    tessel_density_model d = model_of(TESSEL_DENSITY_BANDED, 6, 6);
    d.bandwidth = 1;
    d.density = 1;
    tessel_density_occupancy *o = occupancy_of(&d, 3, 3);
    ck_assert_uint_eq(o->tiles, 4);
    assert_near(o->nonempty, 4, 1e-15, "nonempty");
    assert_near(o->nnz, 16, 0, "nnz");
    assert_near(o->mean, 4, 1e-15, "mean");
    ck_assert_uint_eq(o->npmf, 8);
    for (unsigned n = 0; n < 8; n++)
        assert_near(o->pmf[n], n == 1 || n == 7 ? 0.5 : 0, 1e-15, "pmf");
    ck_assert_uint_eq(tessel_density_quantile(o, 0.5), 1);
    ck_assert_uint_eq(tessel_density_quantile(o, 0.51), 7);
    ck_assert_uint_eq(tessel_density_quantile(o, 0), 1);
    ck_assert_uint_eq(tessel_density_quantile(o, 1), 7);
    tessel_density_occupancy_free(&o);

    d.density = 0.5;
    o = occupancy_of(&d, 3, 3);
    double ne = 2 * (1 - 1.0 / 128) + 1;
    assert_near(o->nonempty, ne, 1e-15, "nonempty 1/2");
    assert_near(o->nnz, 8, 1e-15, "nnz 1/2");
    assert_near(o->pmf[1], (1 + 14.0 / 128) / ne, 1e-14, "pmf[1] 1/2");
    assert_near(o->pmf[7], 2.0 / 128 / ne, 1e-14, "pmf[7] 1/2");
    tessel_density_occupancy_free(&o);

    /* A band wider than the matrix is the whole matrix. */
    d.bandwidth = UINT64_MAX;
    d.density = 1;
    o = occupancy_of(&d, 4, 4);
    ck_assert_uint_eq(o->tiles, 4);
    assert_near(o->nnz, 36, 0, "wide band nnz");
    assert_near(o->pmf[16], 0.25, 1e-15, "wide band pmf[16]");
    assert_near(o->pmf[8], 0.5, 1e-15, "wide band pmf[8]");
    assert_near(o->pmf[4], 0.25, 1e-15, "wide band pmf[4]");
    tessel_density_occupancy_free(&o);
}
END_TEST

/* 2:4 on 4x8.
 * Tiles of 2x4 (aligned): every row of a tile holds exactly 2 -> each of
 *   the 4 tiles holds exactly 4.
 * Tiles of 2x2 (each cuts a group in half): a row holds Hyp(4, 2, 2):
 *   1/6, 4/6, 1/6 for 0, 1, 2; two rows: (1, 8, 18, 8, 1)/36 for 0..4, so
 *   nonempty = 8 * 35/36.
 * Tiles of 2x3 on 4x8: cols [0,3): Hyp(4,2,3) = 1/2, 1/2 for 1, 2;
 *   cols [3,6): Hyp(4,2,1) + Hyp(4,2,2); cols [6,8): Hyp(4,2,2). */
START_TEST(nm_by_hand)
{
    tessel_density_model d = model_of(TESSEL_DENSITY_NM, 4, 8);
    d.n = 2;
    d.m = 4;
    tessel_density_occupancy *o = occupancy_of(&d, 2, 4);
    ck_assert_uint_eq(o->tiles, 4);
    assert_near(o->nonempty, 4, 1e-15, "aligned nonempty");
    assert_near(o->nnz, 16, 0, "aligned nnz");
    ck_assert_uint_eq(o->npmf, 5);
    assert_near(o->pmf[4], 1, 1e-15, "aligned pmf[4]");
    tessel_density_occupancy_free(&o);

    o = occupancy_of(&d, 2, 2);
    ck_assert_uint_eq(o->tiles, 8);
    assert_near(o->nonempty, 8 * 35.0 / 36, 1e-14, "halves nonempty");
    const double two_rows[5] = { 1, 8, 18, 8, 1 };
    for (unsigned n = 1; n < 5; n++)
        assert_near(o->pmf[n], two_rows[n] / 35, 1e-14, "halves pmf");
    ck_assert_uint_eq(tessel_density_quantile(o, 0.5), 2);
    tessel_density_occupancy_free(&o);

    /* 2x3: per row, cols [0,3): {1: 1/2, 2: 1/2}; cols [3,6): Hyp(4,2,1)
     * {0: 1/2, 1: 1/2} + Hyp(4,2,2) {0: 1/6, 1: 4/6, 2: 1/6} =
     * {0: 1/12, 1: 5/12, 2: 5/12, 3: 1/12}; cols [6,8): {1/6, 4/6, 1/6}.
     * P(empty tile of 2 rows) = 0, 1/144, 1/36. */
    o = occupancy_of(&d, 2, 3);
    ck_assert_uint_eq(o->tiles, 6);
    assert_near(o->nonempty, 2 * (1 + (1 - 1.0 / 144) + (1 - 1.0 / 36)), 1e-14, "2x3 nonempty");
    assert_near(o->nnz, 16, 0, "2x3 nnz");
    tessel_density_occupancy_free(&o);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Independent oracles on small shapes. */

#define ORACLE_MAX 4096

/* uniform: every tile's Hypergeometric(N, K, P) from GSL. */
START_TEST(uniform_matches_gsl)
{
    static const unsigned sizes[][2] = { { 1, 1 }, { 5, 7 }, { 13, 6 }, { 17, 17 }, { 30, 11 } };
    static double acc[ORACLE_MAX];
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        unsigned rows = sizes[s][0], cols = sizes[s][1], N = rows * cols;
        const unsigned nnzs[] = { 1, N / 7 + 1, N / 2 + 1, N };
        for (unsigned ki = 0; ki < 4; ki++) {
            unsigned K = nnzs[ki];
            for (unsigned tr = 1; tr <= 7; tr += 2)
                for (unsigned tc = 1; tc <= 8; tc += 3) {
                    memset(acc, 0, sizeof(acc));
                    double var = 0;
                    for (unsigned r0 = 0; r0 < rows; r0 += tr)
                        for (unsigned c0 = 0; c0 < cols; c0 += tc) {
                            unsigned P = (r0 + tr > rows ? rows - r0 : tr) *
                                         (c0 + tc > cols ? cols - c0 : tc);
                            /* 1 - P(0) as the sum of the other terms: GSL's
                             * P(0) is good to ~1e-13, so 1 - P(0) would not be. */
                            double p0 = gsl_ran_hypergeometric_pdf(0, K, N - K, P), rest = 0;
                            for (unsigned k = 0; k <= P && k <= K; k++) {
                                double pk = gsl_ran_hypergeometric_pdf(k, K, N - K, P);
                                acc[k] += pk;
                                rest += k ? pk : 0;
                            }
                            var += p0 * rest;
                        }
                    tessel_density_model d = model_of(TESSEL_DENSITY_UNIFORM, rows, cols);
                    d.nnz = K;
                    tessel_density_occupancy *o = occupancy_of(&d, tr, tc);
                    char what[96];
                    snprintf(what, sizeof(what), "uniform %ux%u K=%u tile %ux%u", rows, cols, K,
                             tr, tc);
                    ck_assert_uint_eq(o->tiles, (uint64_t)((rows + tr - 1) / tr) *
                                                    ((cols + tc - 1) / tc));
                    assert_near(o->nnz, K, 0, what);
                    assert_pmf_matches(o, acc, N + 1, var, what);
                    tessel_density_occupancy_free(&o);
                }
        }
    }
}
END_TEST

/* banded: B counted position by position, Binomial(B, d) from GSL. */
START_TEST(banded_matches_brute_force)
{
    static const unsigned sizes[][2] = { { 1, 1 }, { 6, 6 }, { 17, 40 }, { 40, 17 }, { 37, 37 } };
    static const unsigned widths[] = { 0, 1, 4, 50 };
    static const double dens[] = { 0.35, 1 };
    static double acc[ORACLE_MAX];
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        for (size_t wi = 0; wi < 4; wi++)
            for (size_t di = 0; di < 2; di++)
                for (unsigned tr = 1; tr <= 16; tr += 3)
                    for (unsigned tc = 1; tc <= 16; tc += 2) {
                        unsigned rows = sizes[s][0], cols = sizes[s][1], w = widths[wi];
                        double p = dens[di];
                        memset(acc, 0, sizeof(acc));
                        double band = 0, var = 0;
                        for (unsigned r0 = 0; r0 < rows; r0 += tr)
                            for (unsigned c0 = 0; c0 < cols; c0 += tc) {
                                unsigned B = 0;
                                for (unsigned i = r0; i < r0 + tr && i < rows; i++)
                                    for (unsigned j = c0; j < c0 + tc && j < cols; j++)
                                        B += (i > j ? i - j : j - i) <= w;
                                band += B;
                                double p0 = gsl_ran_binomial_pdf(0, p, B), rest = 0;
                                for (unsigned k = 0; k <= B; k++) {
                                    double pk = gsl_ran_binomial_pdf(k, p, B);
                                    acc[k] += pk;
                                    rest += k ? pk : 0;
                                }
                                var += p0 * rest;
                            }
                        tessel_density_model d = model_of(TESSEL_DENSITY_BANDED, rows, cols);
                        d.bandwidth = w;
                        d.density = p;
                        tessel_density_occupancy *o = occupancy_of(&d, tr, tc);
                        char what[96];
                        snprintf(what, sizeof(what), "banded %ux%u w=%u d=%g tile %ux%u", rows,
                                 cols, w, p, tr, tc);
                        assert_near(o->nnz, band * p, 1e-14, what);
                        assert_pmf_matches(o, acc, rows * cols + 1, var, what);
                        tessel_density_occupancy_free(&o);
                    }
}
END_TEST

/* Convolution of small pmfs for the N:M oracle: x[0..nx) * y[0..ny). */
static size_t convolve(const double *x, size_t nx, const double *y, size_t ny, double *out)
{
    for (size_t i = 0; i < nx + ny - 1; i++)
        out[i] = 0;
    for (size_t i = 0; i < nx; i++)
        for (size_t j = 0; j < ny; j++)
            out[i + j] += x[i] * y[j];
    return nx + ny - 1;
}

/* N:M: every way to choose `keep` of each group's columns, enumerated as
 * bit masks, gives the count of chosen columns inside the tile; rows are
 * independent, so the tile's pmf is the rows' convolution. */
START_TEST(nm_matches_enumeration)
{
    static const unsigned nms[][2] = { { 1, 1 }, { 1, 3 }, { 2, 4 }, { 3, 8 }, { 5, 5 }, { 2, 7 } };
    static const unsigned sizes[][2] = { { 1, 1 }, { 3, 7 }, { 5, 13 }, { 4, 20 } };
    static double acc[ORACLE_MAX], row[ORACLE_MAX], tilep[ORACLE_MAX], tmp[ORACLE_MAX];
    for (size_t a = 0; a < sizeof(nms) / sizeof(nms[0]); a++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
            for (unsigned tr = 1; tr <= 4; tr++)
                for (unsigned tc = 1; tc <= 9; tc++) {
                    unsigned n = nms[a][0], m = nms[a][1];
                    unsigned rows = sizes[s][0], cols = sizes[s][1];
                    memset(acc, 0, sizeof(acc));
                    double var = 0;
                    for (unsigned r0 = 0; r0 < rows; r0 += tr)
                        for (unsigned c0 = 0; c0 < cols; c0 += tc) {
                            unsigned h = r0 + tr > rows ? rows - r0 : tr;
                            unsigned c1 = c0 + tc > cols ? cols : c0 + tc;
                            size_t nrow = 1;
                            row[0] = 1;
                            for (unsigned gs = 0; gs < cols; gs += m) {
                                unsigned width = gs + m > cols ? cols - gs : m;
                                unsigned keep = n < width ? n : width;
                                double hist[16] = { 0 };
                                unsigned ways = 0;
                                for (unsigned mask = 0; mask < 1u << width; mask++) {
                                    if ((unsigned)__builtin_popcount(mask) != keep)
                                        continue;
                                    unsigned in = 0;
                                    for (unsigned b = 0; b < width; b++)
                                        in += (mask >> b & 1u) && gs + b >= c0 && gs + b < c1;
                                    hist[in] += 1;
                                    ways++;
                                }
                                for (unsigned k = 0; k <= keep; k++)
                                    hist[k] /= ways;
                                nrow = convolve(row, nrow, hist, keep + 1, tmp);
                                memcpy(row, tmp, nrow * sizeof(double));
                            }
                            size_t ntile = 1;
                            tilep[0] = 1;
                            for (unsigned i = 0; i < h; i++) {
                                ntile = convolve(tilep, ntile, row, nrow, tmp);
                                memcpy(tilep, tmp, ntile * sizeof(double));
                            }
                            double rest = 0;
                            for (size_t k = 1; k < ntile; k++)
                                rest += tilep[k];
                            var += tilep[0] * rest;
                            for (size_t k = 0; k < ntile; k++)
                                acc[k] += tilep[k];
                        }
                    tessel_density_model d = model_of(TESSEL_DENSITY_NM, rows, cols);
                    d.n = n;
                    d.m = m;
                    tessel_density_occupancy *o = occupancy_of(&d, tr, tc);
                    char what[96];
                    snprintf(what, sizeof(what), "nm %u:%u %ux%u tile %ux%u", n, m, rows, cols, tr,
                             tc);
                    double nnz = 0;
                    for (size_t k = 0; k <= rows * cols; k++)
                        nnz += (double)k * acc[k];
                    assert_near(o->nnz, nnz, 1e-12, what);
                    assert_pmf_matches(o, acc, rows * cols + 1, var, what);
                    tessel_density_occupancy_free(&o);
                }
}
END_TEST

/* Large parameters, where GSL's unsigned int arguments do not reach: the
 * pmf still sums to 1, the mean is exact, and 1 - P(0) agrees with its
 * closed form prod (N - K - i) / (N - i) (as log1p sums). */
START_TEST(uniform_huge)
{
    tessel_density_model d = model_of(TESSEL_DENSITY_UNIFORM, TESSEL_MAX_DIM, TESSEL_MAX_DIM);
    d.nnz = 1000000;
    tessel_density_occupancy *o = occupancy_of(&d, 100000, 100000);
    uint64_t N = (uint64_t)TESSEL_MAX_DIM * TESSEL_MAX_DIM, P = 100000ull * 100000ull;
    /* log P(0) = sum_{i<K} log(1 - P / (N - i)) for the full tiles. */
    double lp0 = 0;
    for (uint64_t i = 0; i < d.nnz; i++)
        lp0 += log1p(-(double)P / (double)(N - i));
    uint64_t full = (uint64_t)(TESSEL_MAX_DIM / 100000) * (TESSEL_MAX_DIM / 100000);
    ck_assert_uint_eq(o->tiles, (uint64_t)(TESSEL_MAX_DIM / 100000 + 1) * (TESSEL_MAX_DIM / 100000 + 1));
    /* The full tiles dominate; compare their share of nonempty loosely but
     * well below the edge tiles' contribution. */
    double full_ne = (double)full * -expm1(lp0);
    ck_assert_msg(o->nonempty >= full_ne && o->nonempty < full_ne * 1.06, "nonempty %.17g vs %.17g",
                  o->nonempty, full_ne);
    double sum = 0, mean = 0;
    for (uint64_t n = 0; n < o->npmf; n++) {
        sum += o->pmf[n];
        mean += (double)n * o->pmf[n];
    }
    assert_near(sum, 1, 1e-12, "huge pmf sum");
    assert_near(mean, o->mean, 1e-9, "huge pmf mean");
    assert_near(o->nnz, 1e6, 0, "huge nnz");
    tessel_density_occupancy_free(&o);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Against generated matrices.
 *
 * The generator draws one matrix from the same model, so its tile
 * statistics are one sample of what the model predicts; each check allows
 * 4 standard errors of that sample (a two-sided 4-sigma miss has
 * probability 6e-5; the seeds are fixed, so a passing test stays passing).
 *
 * Non-empty tiles: a sum of T indicators with P(empty) = p_t. Tiles are
 * independent for banded and N:M (disjoint positions, independent rows)
 * and negatively associated for uniform (a fixed total), so
 * Var <= sum_t p_t (1 - p_t), the model's nonempty_var. That sum is also
 * checked against its bound T pbar (1 - pbar), pbar = 1 - nonempty / T
 * (concavity), and against an oracle in the small-shape tests.
 * Mean occupancy nnz / nonempty: to first order its relative error is the
 * difference of the relative errors of nnz and nonempty, whose sd is at
 * most the sum of their sds. sd(nnz) is 0 for uniform and N:M (exact
 * counts) and sqrt(nnz (1 - d)) for banded (a sum of Bernoulli(d)).
 * Quantiles: the empirical quantile v at q is the smallest v with
 * Femp(v) >= q over the M non-empty tiles. Femp(x) has sd <=
 * sqrt(F(1-F)/M) around the model's F(x) (independent or negatively
 * associated indicators, not identically distributed: Jensen again), so
 * the model must give F(v) >= q - tol and F(v - 1) <= q + tol with
 * tol = 4 sqrt(q (1 - q) / M) + 1/M (the 1/M for the ceil(q M) rank).
 * This is stricter than a window of +-sd(occupancy) on v for spread-out
 * distributions and exact for point masses. */

typedef struct sample_case {
    const char *name;
    tessel_gen_params gen;
    uint64_t tile[2];
} sample_case;

static double model_cdf(const tessel_density_occupancy *o, uint64_t v)
{
    double c = 0;
    for (uint64_t n = 1; n <= v && n < o->npmf; n++)
        c += o->pmf[n];
    return c;
}

static tessel_density_model model_of_gen(const tessel_gen_params *p)
{
    tessel_density_model d = model_of(TESSEL_DENSITY_UNIFORM, p->rows, p->cols);
    switch (p->kind) {
    case TESSEL_GEN_UNIFORM: d.nnz = p->nnz; break;
    case TESSEL_GEN_BANDED:
        d.kind = TESSEL_DENSITY_BANDED;
        d.bandwidth = p->bandwidth;
        d.density = p->density;
        break;
    default:
        d.kind = TESSEL_DENSITY_NM;
        d.n = p->n;
        d.m = p->m;
        break;
    }
    return d;
}

static void compare_with_sample(const sample_case *c, uint64_t seed)
{
    tessel_gen_params p = c->gen;
    p.seed = seed;
    p.values = 0;
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_generate(&p, NULL, &t, NULL), TESSEL_OK);
    tessel_tile_grid *g = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, c->tile, NULL, &g, NULL), TESSEL_OK);
    tessel_occupancy *e = NULL;
    ck_assert_int_eq(tessel_occupancy_create(g, &e, NULL), TESSEL_OK);

    tessel_density_model d = model_of_gen(&p);
    tessel_density_occupancy *o = occupancy_of(&d, c->tile[0], c->tile[1]);
    ck_assert_uint_eq(o->tiles, e->tiles);

    double T = (double)o->tiles, pbar = 1 - o->nonempty / T;
    ck_assert(o->nonempty_var >= 0 && o->nonempty_var <= T * pbar * (1 - pbar) * (1 + 1e-9) + 1e-9);
    double sd_ne = sqrt(o->nonempty_var);
    double sd_nnz = p.kind == TESSEL_GEN_BANDED ? sqrt(o->nnz * (1 - p.density)) : 0;
    double sd_mean = o->mean * (sd_ne / o->nonempty + sd_nnz / o->nnz);
    double ne = (double)e->nonempty;
    printf("%-22s seed %llu: nonempty model %.2f sample %.0f (4sd %.2f); mean model %.3f "
           "sample %.3f (4sd %.3f); q.1/.5/.9/.99 model",
           c->name, (unsigned long long)seed, o->nonempty, ne, 4 * sd_ne, o->mean, e->mean,
           4 * sd_mean);
    static const double qs[4] = { 0.1, 0.5, 0.9, 0.99 };
    for (int i = 0; i < 4; i++)
        printf(" %llu", (unsigned long long)tessel_density_quantile(o, qs[i]));
    printf(" sample");
    for (int i = 0; i < 4; i++)
        printf(" %llu", (unsigned long long)tessel_occupancy_quantile(e, qs[i]));
    printf("\n");

    ck_assert_msg(fabs(ne - o->nonempty) <= 4 * sd_ne + 1e-9 * T,
                  "%s seed %llu: nonempty sample %.0f, model %.3f, 4 sd %.3f", c->name,
                  (unsigned long long)seed, ne, o->nonempty, 4 * sd_ne);
    ck_assert_msg(fabs(e->mean - o->mean) <= 4 * sd_mean + 1e-9 * o->mean,
                  "%s seed %llu: mean sample %.4f, model %.4f, 4 sd %.4f", c->name,
                  (unsigned long long)seed, e->mean, o->mean, 4 * sd_mean);
    double M = ne;
    for (int i = 0; i < 4; i++) {
        double q = qs[i], tol = 4 * sqrt(q * (1 - q) / M) + 1 / M;
        uint64_t v = tessel_occupancy_quantile(e, q);
        double fv = model_cdf(o, v), fv1 = v ? model_cdf(o, v - 1) : 0;
        ck_assert_msg(fv >= q - tol && fv1 <= q + tol,
                      "%s seed %llu: sample quantile %.2f = %llu, model F(v) = %.4f, F(v-1) = "
                      "%.4f, tolerance %.4f (model quantile %llu)",
                      c->name, (unsigned long long)seed, q, (unsigned long long)v, fv, fv1, tol,
                      (unsigned long long)tessel_density_quantile(o, q));
    }
    tessel_density_occupancy_free(&o);
    tessel_occupancy_free(&e);
    tessel_tile_grid_free(&g);
    tessel_tensor_free(&t);
}

static sample_case gen_case(const char *name, tessel_gen_kind kind, uint64_t rows, uint64_t cols,
                            uint64_t tr, uint64_t tc)
{
    sample_case c;
    c.name = name;
    tessel_gen_params_init(&c.gen, kind);
    c.gen.rows = rows;
    c.gen.cols = cols;
    c.tile[0] = tr;
    c.tile[1] = tc;
    return c;
}

static const uint64_t seeds[] = { 11, 12, 13 };

START_TEST(uniform_matches_sample)
{
    sample_case cs[3];
    /* Half the tiles are edge tiles of a third of the size: a bimodal mix. */
    cs[0] = gen_case("uniform 16x1500", TESSEL_GEN_UNIFORM, 2000, 2000, 16, 1500);
    cs[0].gen.nnz = 40000;
    /* About 10 % empty tiles; edge tiles of 32 rows / columns. */
    cs[1] = gen_case("uniform 48x48 sparse", TESSEL_GEN_UNIFORM, 2000, 2000, 48, 48);
    cs[1].gen.nnz = 4000;
    /* Tiny tiles (P = 6): a position count off by one moves nonempty by
     * thousands of tiles. */
    cs[2] = gen_case("uniform 3x2", TESSEL_GEN_UNIFORM, 2000, 1999, 3, 2);
    cs[2].gen.nnz = 400000;
    for (int i = 0; i < 3; i++)
        for (int s = 0; s < 3; s++)
            compare_with_sample(&cs[i], seeds[s]);
}
END_TEST

START_TEST(banded_matches_sample)
{
    sample_case cs[4];
    /* tr != tc: interior tile rows repeat with period 70 / gcd(50, 70) = 7. */
    cs[0] = gen_case("banded 50x70", TESSEL_GEN_BANDED, 2000, 2000, 50, 70);
    cs[0].gen.bandwidth = 30;
    cs[0].gen.density = 0.3;
    /* Tall matrix: the band leaves through the last column; sparse enough
     * that the tiles at the band's edge are often empty. */
    cs[1] = gen_case("banded tall 64x64", TESSEL_GEN_BANDED, 2000, 1500, 64, 64);
    cs[1].gen.bandwidth = 100;
    cs[1].gen.density = 0.02;
    cs[2] = gen_case("banded 7x3", TESSEL_GEN_BANDED, 1999, 2000, 7, 3);
    cs[2].gen.bandwidth = 5;
    cs[2].gen.density = 0.1;
    /* A band half the matrix wide: the second tile column is cut from 1500
     * to 500 columns and holds much of the band, so its tiles' in-band
     * counts depend on the cut. */
    cs[3] = gen_case("banded wide 64x1500", TESSEL_GEN_BANDED, 2000, 2000, 64, 1500);
    cs[3].gen.bandwidth = 1000;
    cs[3].gen.density = 0.01;
    for (int i = 0; i < 4; i++)
        for (int s = 0; s < 3; s++)
            compare_with_sample(&cs[i], seeds[s]);
}
END_TEST

START_TEST(nm_matches_sample)
{
    sample_case cs[3];
    /* 37 columns cut groups of 8 at both ends; the short last group (3
     * columns) is dense; edge tiles both ways. */
    cs[0] = gen_case("nm 3:8 45x37", TESSEL_GEN_NM, 2000, 2003, 45, 37);
    cs[0].gen.n = 3;
    cs[0].gen.m = 8;
    /* 1:16 in 3x5 tiles: many empty tiles. */
    cs[1] = gen_case("nm 1:16 3x5", TESSEL_GEN_NM, 2000, 2000, 3, 5);
    cs[1].gen.n = 1;
    cs[1].gen.m = 16;
    /* 2:4 with aligned 64-column tiles: every tile is a point mass. */
    cs[2] = gen_case("nm 2:4 64x64 aligned", TESSEL_GEN_NM, 2000, 2000, 64, 64);
    for (int i = 0; i < 3; i++)
        for (int s = 0; s < 3; s++)
            compare_with_sample(&cs[i], seeds[s]);
}
END_TEST

/* A generated band at density 1 is the band itself: the model's pmf must
 * be the exact histogram of the tile counts (checks the in-band count of
 * every tile, edge rows and the periodic interior alike). */
START_TEST(banded_density_one_is_exact)
{
    static const uint64_t shapes[][5] = {
        /* rows, cols, bandwidth, tr, tc */
        { 2000, 2000, 30, 50, 70 }, { 2000, 1500, 100, 64, 64 }, { 1500, 2000, 7, 13, 5 },
        { 500, 700, 0, 1, 1 },      { 777, 333, 250, 40, 9 },    { 300, 300, 1000, 64, 64 },
    };
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        tessel_gen_params p;
        tessel_gen_params_init(&p, TESSEL_GEN_BANDED);
        p.rows = shapes[s][0];
        p.cols = shapes[s][1];
        p.bandwidth = shapes[s][2];
        p.density = 1;
        p.values = 0;
        const uint64_t tile[2] = { shapes[s][3], shapes[s][4] };
        tessel_tensor *t = NULL;
        ck_assert_int_eq(tessel_generate(&p, NULL, &t, NULL), TESSEL_OK);
        tessel_tile_grid *g = NULL;
        ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), TESSEL_OK);
        tessel_density_model d = model_of_gen(&p);
        tessel_density_occupancy *o = occupancy_of(&d, tile[0], tile[1]);
        assert_near(o->nonempty, (double)g->nonempty, 1e-12, "nonempty");
        assert_near(o->nnz, (double)g->nnz, 0, "nnz");
        uint64_t max = 0;
        for (uint64_t i = 0; i < g->nonempty; i++)
            max = tessel_tile_grid_count(g, i) > max ? tessel_tile_grid_count(g, i) : max;
        ck_assert_uint_eq(o->npmf, max + 1);
        double *hist = calloc(max + 1, sizeof(double));
        ck_assert_ptr_nonnull(hist);
        for (uint64_t i = 0; i < g->nonempty; i++)
            hist[tessel_tile_grid_count(g, i)] += 1;
        for (uint64_t n = 0; n <= max; n++)
            ck_assert_msg(fabs(o->pmf[n] - hist[n] / (double)g->nonempty) < 1e-12,
                          "shape %zu: pmf[%llu] = %.17g, histogram %.17g", s,
                          (unsigned long long)n, o->pmf[n], hist[n] / (double)g->nonempty);
        free(hist);
        tessel_density_occupancy_free(&o);
        tessel_tile_grid_free(&g);
        tessel_tensor_free(&t);
    }
}
END_TEST

/* ------------------------------------------------------------------ */

static void expect_error(const tessel_density_model *d, uint64_t tr, uint64_t tc, int code,
                         const char *needle)
{
    const uint64_t tile[2] = { tr, tc };
    tessel_density_occupancy *o = (tessel_density_occupancy *)&o; /* must be reset */
    tessel_diag diag;
    tessel_diag_clear(&diag);
    int rc = tessel_density_occupancy_create(d, tile, NULL, &o, &diag);
    ck_assert_int_eq(rc, code);
    ck_assert_int_eq(diag.code, code);
    ck_assert_ptr_null(o);
    ck_assert_msg(strstr(diag.message, needle) != NULL, "message \"%s\" lacks \"%s\"",
                  diag.message, needle);
}

START_TEST(errors)
{
    ck_assert_int_eq(tessel_density_kind_from_name("uniform"), TESSEL_DENSITY_UNIFORM);
    ck_assert_int_eq(tessel_density_kind_from_name("banded"), TESSEL_DENSITY_BANDED);
    ck_assert_int_eq(tessel_density_kind_from_name("nm"), TESSEL_DENSITY_NM);
    ck_assert_int_eq(tessel_density_kind_from_name("hypergeometric"), -1);
    ck_assert_int_eq(tessel_density_kind_from_name(NULL), -1);

    tessel_density_model d = model_of(TESSEL_DENSITY_UNIFORM, 10, 10);
    d.nnz = 5;
    expect_error(&d, 0, 2, TESSEL_EINVAL, "tile rows");
    expect_error(&d, 2, 0, TESSEL_EINVAL, "tile columns");
    d.nnz = 101;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "exceeds rows * cols");
    d.nnz = 0;
    d.density = 0;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "density must be in (0, 1]");
    d.density = 1.5;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "density must be in (0, 1]");
    d.density = NAN;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "density must be in (0, 1]");
    d = model_of(TESSEL_DENSITY_UNIFORM, 0, 10);
    d.nnz = 1;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "rows must be in 1..4294967295");
    d = model_of(TESSEL_DENSITY_UNIFORM, 10, (uint64_t)TESSEL_MAX_DIM + 1);
    d.nnz = 1;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "cols must be in 1..4294967295");
    d = model_of(TESSEL_DENSITY_BANDED, 10, 10);
    d.bandwidth = 2;
    d.density = -0.1;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "density");
    d = model_of(TESSEL_DENSITY_NM, 10, 10);
    d.n = 3;
    d.m = 2;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "1 <= n <= m");
    d.n = 0;
    d.m = 4;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "1 <= n <= m");
    d.n = 1;
    d.m = 0;
    expect_error(&d, 2, 2, TESSEL_EINVAL, "m >= 1");
    d = model_of((tessel_density_kind)7, 10, 10);
    expect_error(&d, 2, 2, TESSEL_EINVAL, "unknown density model kind");
    /* A tile that could hold 2^26 or more nonzeros. */
    d = model_of(TESSEL_DENSITY_UNIFORM, 100000, 100000);
    d.density = 0.5;
    expect_error(&d, 20000, 20000, TESSEL_ERANGE, "use smaller tiles");

    const uint64_t tile[2] = { 2, 2 };
    tessel_density_occupancy *o = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_density_occupancy_create(NULL, tile, NULL, &o, &diag), TESSEL_EINVAL);
    ck_assert_ptr_null(o);
    d = model_of(TESSEL_DENSITY_UNIFORM, 10, 10);
    d.nnz = 1;
    ck_assert_int_eq(tessel_density_occupancy_create(&d, NULL, NULL, &o, &diag), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_density_occupancy_create(&d, tile, NULL, NULL, &diag), TESSEL_EINVAL);
    ck_assert_uint_eq(tessel_density_quantile(NULL, 0.5), 0);
    tessel_density_occupancy_free(NULL);
    tessel_density_occupancy_free(&o);
}
END_TEST

/* Fail allocation 1, 2, ... until the call succeeds: every failure is
 * TESSEL_ENOMEM with nothing leaked and no output. */
START_TEST(out_of_memory_every_allocation)
{
    tessel_density_model ms[3];
    uint64_t tiles[3][2] = { { 64, 1500 }, { 50, 70 }, { 45, 37 } };
    ms[0] = model_of(TESSEL_DENSITY_UNIFORM, 2000, 2000);
    ms[0].nnz = 40000;
    ms[1] = model_of(TESSEL_DENSITY_BANDED, 2000, 2000);
    ms[1].bandwidth = 30;
    ms[1].density = 0.3;
    ms[2] = model_of(TESSEL_DENSITY_NM, 2000, 2003);
    ms[2].n = 3;
    ms[2].m = 8;
    for (int i = 0; i < 3; i++) {
        tessel_density_occupancy *ref = occupancy_of(&ms[i], tiles[i][0], tiles[i][1]);
        int ok = 0;
        for (long fail_at = 1; fail_at < 10000 && !ok; fail_at++) {
            test_alloc ta;
            test_alloc_init(&ta, fail_at);
            tessel_density_occupancy *o = NULL;
            tessel_diag diag;
            tessel_diag_clear(&diag);
            int rc = tessel_density_occupancy_create(&ms[i], tiles[i], &ta.allocator, &o, &diag);
            if (rc == TESSEL_OK) {
                ok = 1;
                ck_assert_msg(ta.calls < fail_at, "model %d: success despite failed call", i);
                ck_assert(o->nonempty == ref->nonempty);
                ck_assert_uint_eq(o->npmf, ref->npmf);
                tessel_density_occupancy_free(&o);
            } else {
                ck_assert_int_eq(rc, TESSEL_ENOMEM);
                ck_assert_ptr_null(o);
                /* issue 25 item 9: the step is named */
                ck_assert_msg(strstr(diag.message, "out of memory while computing a density "
                                                   "model's tile occupancy") != NULL,
                              "%s", diag.message);
            }
            ck_assert_msg(ta.live == 0, "model %d fail_at %ld: %ld blocks leaked", i, fail_at,
                          ta.live);
        }
        ck_assert(ok);
        tessel_density_occupancy_free(&ref);
    }
}
END_TEST

int main(void)
{
    gsl_set_error_handler_off();
    Suite *s = suite_create("density");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, uniform_by_hand);
    tcase_add_test(tc, banded_by_hand);
    tcase_add_test(tc, nm_by_hand);
    tcase_add_test(tc, uniform_matches_gsl);
    tcase_add_test(tc, banded_matches_brute_force);
    tcase_add_test(tc, nm_matches_enumeration);
    tcase_add_test(tc, uniform_huge);
    tcase_add_test(tc, uniform_matches_sample);
    tcase_add_test(tc, banded_matches_sample);
    tcase_add_test(tc, nm_matches_sample);
    tcase_add_test(tc, banded_density_one_is_exact);
    tcase_add_test(tc, errors);
    tcase_add_test(tc, out_of_memory_every_allocation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Unit tests of the D2T2 statistics (src/stats/d2t2.c) and the statistics
 * file (src/stats/statfile.c): hand-computed statistics, an independent
 * brute-force implementation of eqs. 9-12 on random matrices, sampling
 * determinism, file round trips, corrupted files, out-of-memory behaviour
 * and invariants on the shared real matrices. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/stats.h"
#include "test_alloc.h"

#define DATA_DIR "../shared/data/mtx"

static tessel_tensor *matrix_of(uint64_t rows, uint64_t cols, const uint32_t (*e)[2], size_t n)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), TESSEL_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(tessel_coo_builder_add(b, e[i], 1.0), TESSEL_OK);
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), TESSEL_OK);
    tessel_coo_builder_free(&b);
    return t;
}

/* A random matrix: `n` draws (duplicates merge) with a skew in rows and a
 * band-like bias so that correlations are not all alike. */
static tessel_tensor *random_matrix(uint64_t rows, uint64_t cols, int n, unsigned seed)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), TESSEL_OK);
    unsigned long long s = seed * 2654435761ull + 7;
    for (int i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) / 9007199254740992.0;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double v = (double)(s >> 11) / 9007199254740992.0;
        uint32_t c[2];
        c[0] = (uint32_t)(u * u * (double)rows);
        /* Half the draws near the diagonal. */
        if (i % 2)
            c[1] = (uint32_t)(v * (double)cols);
        else
            c[1] = (uint32_t)((uint64_t)(c[0] + (uint32_t)(v * 3)) % cols);
        ck_assert_int_eq(tessel_coo_builder_add(b, c, 1.0), TESSEL_OK);
    }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), TESSEL_OK);
    tessel_coo_builder_free(&b);
    return t;
}

static void assert_close(double got, double want, const char *what, uint64_t i)
{
    ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want)), "%s[%llu]: got %.17g, want %.17g",
                  what, (unsigned long long)i, got, want);
}

/* ------------------------------------------------------------------ */
/* 4x4, 2x2 base tiles:
 *        c0 c1 c2 c3
 *   r0    x  x  .  .      tile (0,0): (0,0) (0,1) (1,1)  3 nnz, 2 rows
 *   r1    .  x  .  x      tile (0,1): (1,3)              1 nnz, 1 row
 *   r2    .  .  .  .      tile (1,0): empty
 *   r3    .  .  x  x      tile (1,1): (3,2) (3,3)        2 nnz, 1 row
 * nnz 6, nonempty 3, MaxTile 3, SizeTile 6/3 = 2, size_tile_rows 4/3.
 * eq. 9:  PrTileIdx = [2 tile rows / 2, (3 tiles / 2 tile rows) / 2] = [1, 0.75]
 *         (product 0.75 = 3 of 4 tiles).
 * eq. 10: ProbIndex = [(4/3) / 2, (6 nnz / 4 row segments) / 2] = [2/3, 0.75].
 * eq. 12: tile rows {0,1}: TileCorrs[0] = [2/2, 1/2]; tile cols {0,1}: [1, 1/2].
 * eq. 11 (all tiles): rows 1 apart in one column of one tile: column 1 of
 *         tile (0,0) (rows 0,1): 1 pair -> Corrs[0] = [6/6, 1/6]; columns 1
 *         apart in one row of one tile: row 0 of (0,0) and row 3 of (1,1):
 *         2 pairs -> Corrs[1] = [1, 2/6]. (1,1) and (1,3) are in different
 *         tiles, so they never pair. */
START_TEST(hand_computed_4x4)
{
    static const uint32_t e[][2] = { { 0, 0 }, { 0, 1 }, { 1, 1 }, { 1, 3 }, { 3, 2 }, { 3, 3 } };
    tessel_tensor *t = matrix_of(4, 4, e, 6);
    const uint64_t base[2] = { 2, 2 };
    tessel_d2t2_stats *s = NULL;
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 1.0, 1, NULL, &s, NULL), TESSEL_OK);
    ck_assert_uint_eq(s->nnz, 6);
    ck_assert_uint_eq(s->nonempty_tiles, 3);
    ck_assert_uint_eq(s->max_tile, 3);
    ck_assert_uint_eq(s->extent[0], 2);
    ck_assert_uint_eq(s->extent[1], 2);
    ck_assert_uint_eq(s->sampled_tiles, 3);
    assert_close(s->size_tile, 2.0, "size_tile", 0);
    assert_close(s->size_tile_rows, 4.0 / 3, "size_tile_rows", 0);
    assert_close(s->pr_tile_idx[0], 1.0, "pr_tile_idx", 0);
    assert_close(s->pr_tile_idx[1], 0.75, "pr_tile_idx", 1);
    assert_close(s->prob_index[0], 2.0 / 3, "prob_index", 0);
    assert_close(s->prob_index[1], 0.75, "prob_index", 1);
    ck_assert_uint_eq(s->ntile_corrs[0], 2);
    ck_assert_uint_eq(s->ntile_corrs[1], 2);
    ck_assert_uint_eq(s->ncorrs[0], 2);
    ck_assert_uint_eq(s->ncorrs[1], 2);
    const double tc[2][2] = { { 1, 0.5 }, { 1, 0.5 } };
    const double c[2][2] = { { 1, 1.0 / 6 }, { 1, 2.0 / 6 } };
    for (unsigned m = 0; m < 2; m++)
        for (unsigned i = 0; i < 2; i++) {
            assert_close(s->tile_corrs[m][i], tc[m][i], "tile_corrs", m * 2 + i);
            assert_close(s->corrs[m][i], c[m][i], "corrs", m * 2 + i);
        }
    tessel_d2t2_free(&s);
    ck_assert_ptr_null(s);
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Brute force: the definitions in stats.h evaluated on a dense copy, with
 * no shared code (O(rows * cols * base) and worse). */
typedef struct brute {
    uint64_t nonempty, max_tile;
    double size_tile, size_tile_rows, pr[2], prob[2];
    double *corrs[2], *tile_corrs[2];
    uint64_t ncorrs[2], ntile[2];
} brute;

static void brute_stats(const tessel_tensor *t, const uint64_t *base_in, brute *b)
{
    uint64_t R = t->dims[0], C = t->dims[1], base[2], ext[2];
    uint64_t dims[2] = { R, C };
    for (unsigned m = 0; m < 2; m++) {
        base[m] = base_in[m] <= dims[m] ? base_in[m] : (dims[m] ? dims[m] : 1);
        ext[m] = (dims[m] + base[m] - 1) / base[m];
        b->ncorrs[m] = base[m];
        b->ntile[m] = ext[m] < 4096 ? ext[m] : 4096;
        b->corrs[m] = calloc(base[m], sizeof(double));
        b->tile_corrs[m] = calloc(b->ntile[m] + 1, sizeof(double));
        ck_assert(b->corrs[m] && b->tile_corrs[m]);
    }
    unsigned char *A = calloc(R * C + 1, 1);
    ck_assert_ptr_nonnull(A);
    for (uint64_t r = 0; r < R; r++)
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++)
            A[r * C + t->idx[1][p]] = 1;
    uint64_t rows_sum = 0, nnz = 0;
    unsigned char *tile_ne = calloc(ext[0] * ext[1] + 1, 1);
    ck_assert_ptr_nonnull(tile_ne);
    b->nonempty = b->max_tile = 0;
    for (uint64_t I = 0; I < ext[0]; I++)
        for (uint64_t J = 0; J < ext[1]; J++) {
            uint64_t n = 0, rows = 0;
            for (uint64_t x = I * base[0]; x < (I + 1) * base[0] && x < R; x++) {
                uint64_t k = 0;
                for (uint64_t y = J * base[1]; y < (J + 1) * base[1] && y < C; y++)
                    k += A[x * C + y];
                n += k;
                rows += k > 0;
            }
            if (n) {
                tile_ne[I * ext[1] + J] = 1;
                b->nonempty++;
                b->max_tile = n > b->max_tile ? n : b->max_tile;
            }
            nnz += n;
            rows_sum += rows;
            /* eq. 11 over every tile (sample fraction 1). */
            for (uint64_t s = 0; s < base[0]; s++)
                for (uint64_t x = I * base[0]; x + s < (I + 1) * base[0] && x + s < R; x++)
                    for (uint64_t y = J * base[1]; y < (J + 1) * base[1] && y < C; y++)
                        b->corrs[0][s] += A[x * C + y] && A[(x + s) * C + y];
            for (uint64_t s = 0; s < base[1]; s++)
                for (uint64_t x = I * base[0]; x < (I + 1) * base[0] && x < R; x++)
                    for (uint64_t y = J * base[1]; y + s < (J + 1) * base[1] && y + s < C; y++)
                        b->corrs[1][s] += A[x * C + y] && A[x * C + y + s];
        }
    ck_assert_uint_eq(nnz, t->nnz);
    for (unsigned m = 0; m < 2; m++)
        for (uint64_t s = 0; s < base[m] && nnz; s++)
            b->corrs[m][s] /= (double)nnz;
    b->size_tile = b->nonempty ? (double)nnz / (double)b->nonempty : 0;
    b->size_tile_rows = b->nonempty ? (double)rows_sum / (double)b->nonempty : 0;
    /* Tile rows / tile columns holding a nonzero. */
    uint64_t ne_count[2] = { 0, 0 };
    unsigned char *ne[2] = { calloc(ext[0] + 1, 1), calloc(ext[1] + 1, 1) };
    ck_assert(ne[0] && ne[1]);
    for (uint64_t I = 0; I < ext[0]; I++)
        for (uint64_t J = 0; J < ext[1]; J++)
            if (tile_ne[I * ext[1] + J]) {
                ne[0][I] = ne[1][J] = 1;
            }
    for (unsigned m = 0; m < 2; m++) {
        for (uint64_t x = 0; x < ext[m]; x++)
            ne_count[m] += ne[m][x];
        for (uint64_t s = 0; s < b->ntile[m]; s++) {
            uint64_t both = 0;
            for (uint64_t x = 0; x + s < ext[m]; x++)
                both += ne[m][x] && ne[m][x + s];
            b->tile_corrs[m][s] = ne_count[m] ? (double)both / (double)ne_count[m] : 0;
        }
    }
    b->pr[0] = ne_count[0] ? (double)ne_count[0] / (double)ext[0] : 0;
    b->pr[1] = ne_count[0] ? (double)b->nonempty / (double)ne_count[0] / (double)ext[1] : 0;
    b->prob[0] = b->size_tile_rows / (double)base[0];
    b->prob[1] = rows_sum ? (double)nnz / (double)rows_sum / (double)base[1] : 0;
    free(ne[0]);
    free(ne[1]);
    free(tile_ne);
    free(A);
}

static void brute_free(brute *b)
{
    for (unsigned m = 0; m < 2; m++) {
        free(b->corrs[m]);
        free(b->tile_corrs[m]);
    }
}

static void compare_with_brute(const tessel_tensor *t, const uint64_t *base)
{
    brute b;
    brute_stats(t, base, &b);
    tessel_d2t2_stats *s = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 1.0, 7, NULL, &s, &d), TESSEL_OK);
    ck_assert_uint_eq(s->nonempty_tiles, b.nonempty);
    ck_assert_uint_eq(s->max_tile, b.max_tile);
    ck_assert_uint_eq(s->sampled_tiles, b.nonempty);
    assert_close(s->size_tile, b.size_tile, "size_tile", 0);
    assert_close(s->size_tile_rows, b.size_tile_rows, "size_tile_rows", 0);
    for (unsigned m = 0; m < 2; m++) {
        assert_close(s->pr_tile_idx[m], b.pr[m], "pr_tile_idx", m);
        assert_close(s->prob_index[m], b.prob[m], "prob_index", m);
        ck_assert_uint_eq(s->ncorrs[m], b.ncorrs[m]);
        ck_assert_uint_eq(s->ntile_corrs[m], b.ntile[m]);
        for (uint64_t i = 0; i < b.ncorrs[m]; i++)
            assert_close(s->corrs[m][i], b.corrs[m][i], m ? "corrs[1]" : "corrs[0]", i);
        for (uint64_t i = 0; i < b.ntile[m]; i++)
            assert_close(s->tile_corrs[m][i], b.tile_corrs[m][i],
                         m ? "tile_corrs[1]" : "tile_corrs[0]", i);
    }
    tessel_d2t2_free(&s);
    brute_free(&b);
}

START_TEST(brute_force_random)
{
    static const uint64_t shapes[][2] = { { 1, 1 }, { 2, 3 }, { 4, 4 }, { 5, 7 }, { 8, 2 },
                                          { 16, 16 }, { 40, 1000 }, { 1000, 3 } };
    static const struct {
        uint64_t rows, cols;
        int n;
    } mats[] = { { 13, 17, 40 }, { 37, 29, 300 }, { 64, 48, 1500 }, { 50, 70, 60 }, { 1, 9, 5 } };
    for (size_t i = 0; i < sizeof(mats) / sizeof(mats[0]); i++) {
        tessel_tensor *t = random_matrix(mats[i].rows, mats[i].cols, mats[i].n, (unsigned)i + 1);
        for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++)
            compare_with_brute(t, shapes[k]);
        tessel_tensor_free(&t);
    }
}
END_TEST

/* TileCorrs with more tile rows than its 4096 cap, through both counting
 * paths: a sparse set of tile rows (pairwise walk) and a dense one
 * (bitset). */
START_TEST(brute_force_tile_corrs_paths)
{
    const uint64_t base[2] = { 1, 4 };
    tessel_tensor *sparse = random_matrix(9000, 8, 60, 11);
    compare_with_brute(sparse, base);
    tessel_tensor_free(&sparse);
    tessel_tensor *dense = random_matrix(9000, 8, 30000, 12);
    compare_with_brute(dense, base);
    const uint64_t cols[2] = { 8, 1 };
    compare_with_brute(dense, cols);
    tessel_tensor_free(&dense);
}
END_TEST

/* ------------------------------------------------------------------ */

static int same_stats(const tessel_d2t2_stats *a, const tessel_d2t2_stats *b)
{
    if (a->sampled_tiles != b->sampled_tiles)
        return 0;
    for (unsigned m = 0; m < 2; m++)
        if (a->ncorrs[m] != b->ncorrs[m] ||
            memcmp(a->corrs[m], b->corrs[m], a->ncorrs[m] * sizeof(double)) != 0)
            return 0;
    return 1;
}

START_TEST(sampling_is_seeded)
{
    tessel_tensor *t = random_matrix(400, 400, 20000, 5);
    const uint64_t base[2] = { 16, 16 };
    tessel_d2t2_stats *a = NULL, *b = NULL, *full = NULL;
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 0.1, 42, NULL, &a, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 0.1, 42, NULL, &b, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 1.0, 42, NULL, &full, NULL), TESSEL_OK);
    ck_assert_uint_eq(a->sampled_tiles, (uint64_t)ceil(0.1 * (double)a->nonempty_tiles));
    ck_assert_uint_lt(a->sampled_tiles, full->sampled_tiles);
    ck_assert(same_stats(a, b));
    /* Everything but Corrs comes from the whole matrix. */
    ck_assert_uint_eq(a->max_tile, full->max_tile);
    ck_assert(a->size_tile == full->size_tile && a->prob_index[1] == full->prob_index[1]);
    ck_assert(memcmp(a->tile_corrs[0], full->tile_corrs[0],
                     a->ntile_corrs[0] * sizeof(double)) == 0);
    int differs = 0;
    for (uint64_t seed = 43; seed < 48 && !differs; seed++) {
        tessel_d2t2_stats *c = NULL;
        ck_assert_int_eq(tessel_d2t2_collect(t, base, 0.1, seed, NULL, &c, NULL), TESSEL_OK);
        ck_assert_uint_eq(c->sampled_tiles, a->sampled_tiles);
        ck_assert(c->corrs[0][0] == 1 && c->corrs[1][0] == 1);
        differs = !same_stats(a, c);
        tessel_d2t2_free(&c);
    }
    ck_assert_msg(differs, "five other seeds gave the same sample");
    /* A tiny fraction still samples one tile. */
    tessel_d2t2_free(&b);
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 1e-12, 1, NULL, &b, NULL), TESSEL_OK);
    ck_assert_uint_eq(b->sampled_tiles, 1);
    ck_assert(b->corrs[0][0] == 1 && b->corrs[1][0] == 1);
    tessel_d2t2_free(&a);
    tessel_d2t2_free(&b);
    tessel_d2t2_free(&full);
    tessel_tensor_free(&t);
}
END_TEST

/* When every base tile holds the same pattern, any sample has the Corrs of
 * the whole matrix. With few sampled tiles per band, collect takes its
 * per-row binary-search path instead of the band walk that f = 1 uses, so
 * this pins the two paths to each other. */
START_TEST(sampled_periodic_tiles)
{
    uint32_t(*e)[2] = malloc(sizeof(*e) * 64 * 64);
    size_t n = 0;
    for (uint32_t r = 0; r < 64; r++)
        for (uint32_t c = 0; c < 64; c++)
            if (((r % 8) * 3 + (c % 8) * 5) % 7 < 3) {
                e[n][0] = r;
                e[n][1] = c;
                n++;
            }
    tessel_tensor *t = matrix_of(64, 64, (const uint32_t(*)[2])e, n);
    free(e);
    const uint64_t base[2] = { 8, 8 };
    tessel_d2t2_stats *full = NULL, *part = NULL;
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 1.0, 1, NULL, &full, NULL), TESSEL_OK);
    compare_with_brute(t, base);
    for (uint64_t seed = 1; seed < 5; seed++) {
        ck_assert_int_eq(tessel_d2t2_collect(t, base, 0.2, seed, NULL, &part, NULL), TESSEL_OK);
        ck_assert_uint_eq(part->sampled_tiles, 13);
        for (unsigned m = 0; m < 2; m++)
            for (uint64_t i = 0; i < 8; i++)
                ck_assert_msg(part->corrs[m][i] == full->corrs[m][i], "seed %llu corrs[%u][%llu]",
                              (unsigned long long)seed, m, (unsigned long long)i);
        tessel_d2t2_free(&part);
    }
    tessel_d2t2_free(&full);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(invalid_arguments)
{
    tessel_tensor *t = random_matrix(10, 10, 20, 3);
    const uint64_t base[2] = { 4, 4 }, zero[2] = { 4, 0 };
    tessel_d2t2_stats *s = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_d2t2_collect(t, zero, 1.0, 1, NULL, &s, &d), TESSEL_EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_str_eq(d.field, "base");
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 0.0, 1, NULL, &s, &d), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 1.5, 1, NULL, &s, &d), TESSEL_EINVAL);
    ck_assert_int_eq(tessel_d2t2_collect(t, base, NAN, 1, NULL, &s, &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.field, "sample_fraction");
    ck_assert_ptr_null(s);
    tessel_tensor_free(&t);

    uint64_t dims3[3] = { 3, 3, 3 };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(3, dims3, 0, NULL, &b, NULL), TESSEL_OK);
    const uint32_t c[3] = { 1, 2, 0 };
    ck_assert_int_eq(tessel_coo_builder_add(b, c, 1.0), TESSEL_OK);
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), TESSEL_OK);
    tessel_coo_builder_free(&b);
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 1.0, 1, NULL, &s, &d), TESSEL_EUNSUPPORTED);
    ck_assert_ptr_null(s);
    ck_assert_ptr_nonnull(strstr(d.message, "order 3"));
    tessel_tensor_free(&t);
}
END_TEST

/* An empty matrix: no tiles, all statistics 0, and a file that round-trips. */
START_TEST(empty_matrix)
{
    tessel_tensor *t = matrix_of(5, 3, NULL, 0);
    const uint64_t base[2] = { 2, 8 };
    tessel_d2t2_stats *s = NULL;
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 0.5, 1, NULL, &s, NULL), TESSEL_OK);
    ck_assert_uint_eq(s->base[1], 3);
    ck_assert_uint_eq(s->nonempty_tiles, 0);
    ck_assert_uint_eq(s->sampled_tiles, 0);
    ck_assert(s->size_tile == 0 && s->pr_tile_idx[0] == 0 && s->prob_index[1] == 0);
    ck_assert(s->corrs[0][0] == 0 && s->tile_corrs[1][0] == 0);
    tessel_tile_grid *g = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, base, NULL, &g, NULL), TESSEL_OK);
    char dir[] = "/tmp/tessel-d2t2-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/e.tstat", dir);
    ck_assert_int_eq(tessel_statfile_write(path, s, g, "", NULL), TESSEL_OK);
    tessel_d2t2_stats *r = NULL;
    tessel_tile_grid *rg = NULL;
    char src[8] = "junk";
    ck_assert_int_eq(tessel_statfile_read(path, NULL, &r, &rg, src, sizeof(src), NULL), TESSEL_OK);
    ck_assert_str_eq(src, "");
    ck_assert_uint_eq(rg->nonempty, 0);
    ck_assert_uint_eq(r->dims[0], 5);
    unlink(path);
    rmdir(dir);
    tessel_d2t2_free(&r);
    tessel_tile_grid_free(&rg);
    tessel_tile_grid_free(&g);
    tessel_d2t2_free(&s);
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Statistics files */

#define OFF_PAYLOAD_BYTES 208u
#define OFF_PAYLOAD_SUM 216u
#define OFF_HEADER_SUM 248u
#define HEADER_BYTES 256u

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static uint64_t sum_of(const void *p, size_t n)
{
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, p, n);
    return tessel_checksum_final(&c);
}

/* Recomputes both checksums over the (edited) bytes. */
static void repair(unsigned char *buf, size_t size)
{
    uint64_t ps = sum_of(buf + HEADER_BYTES, size - HEADER_BYTES);
    memcpy(buf + OFF_PAYLOAD_SUM, &ps, 8);
    uint64_t hs = sum_of(buf, OFF_HEADER_SUM);
    memcpy(buf + OFF_HEADER_SUM, &hs, 8);
}

static void put_u64(unsigned char *buf, size_t off, uint64_t v)
{
    memcpy(buf + off, &v, 8);
}

static void put_f64(unsigned char *buf, size_t off, double v)
{
    memcpy(buf + off, &v, 8);
}

/* A file that must be refused as corrupt, naming the file and `field`
 * (NULL: any field), with nothing returned and nothing leaked. */
static void expect_corrupt(const unsigned char *buf, size_t size, const char *field,
                           const char *what)
{
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_d2t2_stats *s = NULL;
    tessel_tile_grid *g = NULL;
    char src[64];
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_statfile_parse("bad.tstat", buf, size, &ta.allocator, &s, &g, src,
                                   sizeof(src), &d);
    ck_assert_msg(rc == TESSEL_ECORRUPT, "%s: rc %d (%s)", what, rc, d.message);
    ck_assert_ptr_null(s);
    ck_assert_ptr_null(g);
    ck_assert_str_eq(d.file, "bad.tstat");
    ck_assert_ptr_nonnull(strstr(d.message, "corrupt statistics file"));
    if (field)
        ck_assert_msg(strcmp(d.field, field) == 0, "%s: field '%s', want '%s' (%s)", what, d.field,
                      field, d.message);
    ck_assert_int_eq(ta.live, 0);
}

typedef struct saved {
    tessel_tensor *t;
    tessel_d2t2_stats *s;
    tessel_tile_grid *g;
    char dir[32], path[64];
    unsigned char *bytes;
    size_t size;
} saved;

static void save_one(saved *sv, const char *source)
{
    sv->t = random_matrix(70, 90, 900, 9);
    const uint64_t base[2] = { 8, 16 };
    ck_assert_int_eq(tessel_d2t2_collect(sv->t, base, 0.5, 3, NULL, &sv->s, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_tile_grid_build(sv->t, base, NULL, &sv->g, NULL), TESSEL_OK);
    snprintf(sv->dir, sizeof(sv->dir), "/tmp/tessel-d2t2-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(sv->dir));
    snprintf(sv->path, sizeof(sv->path), "%s/a.tstat", sv->dir);
    tessel_diag d;
    ck_assert_int_eq(tessel_statfile_write(sv->path, sv->s, sv->g, source, &d), TESSEL_OK);
    sv->bytes = read_all(sv->path, &sv->size);
}

static void saved_free(saved *sv)
{
    unlink(sv->path);
    rmdir(sv->dir);
    free(sv->bytes);
    tessel_d2t2_free(&sv->s);
    tessel_tile_grid_free(&sv->g);
    tessel_tensor_free(&sv->t);
}

static void assert_same(const tessel_d2t2_stats *a, const tessel_d2t2_stats *b)
{
    for (unsigned m = 0; m < 2; m++) {
        ck_assert_uint_eq(a->dims[m], b->dims[m]);
        ck_assert_uint_eq(a->base[m], b->base[m]);
        ck_assert_uint_eq(a->extent[m], b->extent[m]);
        ck_assert(a->pr_tile_idx[m] == b->pr_tile_idx[m]);
        ck_assert(a->prob_index[m] == b->prob_index[m]);
        ck_assert_uint_eq(a->ncorrs[m], b->ncorrs[m]);
        ck_assert_uint_eq(a->ntile_corrs[m], b->ntile_corrs[m]);
        ck_assert(memcmp(a->corrs[m], b->corrs[m], a->ncorrs[m] * 8) == 0);
        ck_assert(memcmp(a->tile_corrs[m], b->tile_corrs[m], a->ntile_corrs[m] * 8) == 0);
    }
    ck_assert_uint_eq(a->nnz, b->nnz);
    ck_assert_uint_eq(a->nonempty_tiles, b->nonempty_tiles);
    ck_assert_uint_eq(a->max_tile, b->max_tile);
    ck_assert_uint_eq(a->sampled_tiles, b->sampled_tiles);
    ck_assert_uint_eq(a->seed, b->seed);
    ck_assert(a->size_tile == b->size_tile && a->size_tile_rows == b->size_tile_rows);
    ck_assert(a->sample_fraction == b->sample_fraction);
}

static void assert_same_grid(const tessel_tile_grid *a, const tessel_tile_grid *b)
{
    ck_assert_uint_eq(a->order, b->order);
    ck_assert_uint_eq(a->nnz, b->nnz);
    ck_assert_uint_eq(a->nonempty, b->nonempty);
    for (unsigned m = 0; m < 2; m++) {
        ck_assert_uint_eq(a->dims[m], b->dims[m]);
        ck_assert_uint_eq(a->tile[m], b->tile[m]);
        ck_assert_uint_eq(a->extent[m], b->extent[m]);
    }
    for (uint64_t r = 0; r <= a->extent[0]; r++)
        ck_assert_uint_eq(tessel_tile_grid_row_begin(a, r), tessel_tile_grid_row_begin(b, r));
    for (uint64_t i = 0; i < a->nonempty; i++) {
        ck_assert_uint_eq(tessel_tile_grid_key(a, i), tessel_tile_grid_key(b, i));
        ck_assert_uint_eq(tessel_tile_grid_count(a, i), tessel_tile_grid_count(b, i));
    }
}

/* sv's file rewritten in the version 1 layout (per-tile u64 group, key
 * and count): *size bytes, malloc'd. */
static unsigned char *as_version1(const saved *sv, size_t *size)
{
    const tessel_d2t2_stats *s = sv->s;
    size_t grid = HEADER_BYTES + (s->ncorrs[0] + s->ncorrs[1] + s->ntile_corrs[0] +
                                  s->ntile_corrs[1]) * 8;
    uint64_t n = sv->g->nonempty, src = 0;
    memcpy(&src, sv->bytes + 200, 8);
    *size = grid + 24 * n + src;
    unsigned char *b = malloc(*size);
    ck_assert_ptr_nonnull(b);
    memcpy(b, sv->bytes, grid);
    memcpy(b + *size - src, sv->bytes + sv->size - src, src);
    for (uint64_t i = 0, gr = 0; i < n; i++) {
        gr = tessel_tile_grid_group_from(sv->g, i, gr);
        put_u64(b, grid + 8 * i, gr);
        put_u64(b, grid + 8 * (n + i), tessel_tile_grid_key(sv->g, i));
        put_u64(b, grid + 8 * (2 * n + i), tessel_tile_grid_count(sv->g, i));
    }
    memcpy(b + 8, &(uint32_t){ 1 }, 4);
    put_u64(b, 208, *size - HEADER_BYTES);
    repair(b, *size);
    return b;
}

START_TEST(statfile_round_trip)
{
    saved sv;
    save_one(&sv, "data/a.mtx size=123 mtime_ns=456");
    tessel_d2t2_stats *s = NULL;
    tessel_tile_grid *g = NULL;
    char src[128];
    tessel_diag d;
    ck_assert_int_eq(tessel_statfile_read(sv.path, NULL, &s, &g, src, sizeof(src), &d), TESSEL_OK);
    ck_assert_str_eq(src, "data/a.mtx size=123 mtime_ns=456");
    assert_same(sv.s, s);
    assert_same_grid(sv.g, g);
    tessel_d2t2_free(&s);
    tessel_tile_grid_free(&g);
    /* From memory, with a short source buffer (truncated, terminated) and
     * no grid wanted. */
    char small[5];
    ck_assert_int_eq(tessel_statfile_parse("m", sv.bytes, sv.size, NULL, &s, NULL, small,
                                           sizeof(small), &d),
                     TESSEL_OK);
    ck_assert_str_eq(small, "data");
    assert_same(sv.s, s);
    tessel_d2t2_free(&s);
    /* A version 1 file reads, converted to the same grid; a version 1 file
     * with its tiles out of order is refused. */
    size_t v1size;
    unsigned char *v1 = as_version1(&sv, &v1size);
    ck_assert_int_eq(tessel_statfile_parse("v1", v1, v1size, NULL, &s, &g, src, sizeof(src), &d),
                     TESSEL_OK);
    ck_assert_str_eq(src, "data/a.mtx size=123 mtime_ns=456");
    assert_same(sv.s, s);
    assert_same_grid(sv.g, g);
    tessel_d2t2_free(&s);
    tessel_tile_grid_free(&g);
    size_t grid1 = v1size - 24 * sv.g->nonempty - strlen(src);
    put_u64(v1, grid1, 1000000); /* tile 0's row of tiles */
    repair(v1, v1size);
    expect_corrupt(v1, v1size, "grid", "version 1, tile outside the grid");
    free(v1);
    /* The grid and the statistics of another shape do not go together. */
    tessel_tile_grid *other = NULL;
    const uint64_t tile[2] = { 8, 8 };
    ck_assert_int_eq(tessel_tile_grid_build(sv.t, tile, NULL, &other, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_statfile_write(sv.path, sv.s, other, "x", &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.field, "grid");
    tessel_tile_grid_free(&other);
    /* A missing file. */
    ck_assert_int_eq(tessel_statfile_read("/nonexistent/x.tstat", NULL, &s, &g, NULL, 0, &d),
                     TESSEL_EIO);
    ck_assert_str_eq(d.file, "/nonexistent/x.tstat");
    /* A source identity too long to store. */
    char *longsrc = malloc(5000);
    ck_assert_ptr_nonnull(longsrc);
    memset(longsrc, 'a', 4999);
    longsrc[4999] = '\0';
    ck_assert_int_eq(tessel_statfile_write(sv.path, sv.s, sv.g, longsrc, &d), TESSEL_EINVAL);
    free(longsrc);
    saved_free(&sv);
}
END_TEST

START_TEST(statfile_corruption)
{
    saved sv;
    save_one(&sv, "src");
    unsigned char *buf = malloc(sv.size + 16);
    ck_assert_ptr_nonnull(buf);
    /* Every single flipped byte is caught (by a checksum at least). */
    for (size_t i = 0; i < sv.size; i++) {
        memcpy(buf, sv.bytes, sv.size);
        buf[i] ^= 0x5a;
        expect_corrupt(buf, sv.size, NULL, "flipped byte");
    }
    /* Every truncation, and an extension. */
    for (size_t n = 0; n < sv.size; n++)
        expect_corrupt(sv.bytes, n, n < HEADER_BYTES ? "header" : "payload_bytes", "truncated");
    memcpy(buf, sv.bytes, sv.size);
    buf[sv.size] = 0;
    expect_corrupt(buf, sv.size + 1, "payload_bytes", "extended");

    /* Edited fields with checksums repaired: the structure checks. */
    struct {
        size_t off;
        uint64_t value;
        int f64;
        double dvalue;
        const char *field;
    } edits[] = {
        { 0, 0x21534c4553534554ull, 0, 0, "magic" },
        { 8, 3, 0, 0, "version" },
        { 16, 0x04030201, 0, 0, "byte_order" },
        { 20, 1, 0, 0, "flags" },
        { 24, 1ull << 40, 0, 0, "dims" },
        { 40, 0, 0, 0, "base" },
        { 56, 3, 0, 0, "extent" },
        { 72, UINT64_MAX, 0, 0, "nnz" },
        { 80, 1ull << 62, 0, 0, "nonempty_tiles" },
        { 88, 100000, 0, 0, "max_tile" },
        { 96, 1, 0, 0, "sampled_tiles" },
        { 112, 0, 1, 0.0, "sample_fraction" },
        { 112, 0, 1, NAN, "sample_fraction" },
        { 120, 0, 1, 1e300, "size_tile" },
        { 128, 0, 1, 0.5, "size_tile_rows" },
        { 136, 0, 1, 1.5, "pr_tile_idx" },
        { 160, 0, 1, -0.1, "prob_index" },
        { 168, 1ull << 31, 0, 0, "ncorrs" },
        { 192, 7, 0, 0, "ntile_corrs" },
        { 200, 1ull << 40, 0, 0, "source" },
        { 208, 12, 0, 0, "payload_bytes" },
        { 232, 1, 0, 0, "reserved" },
    };
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        memcpy(buf, sv.bytes, sv.size);
        if (edits[i].f64)
            put_f64(buf, edits[i].off, edits[i].dvalue);
        else if (edits[i].off == 8 || edits[i].off == 16 || edits[i].off == 20)
            memcpy(buf + edits[i].off, &(uint32_t){ (uint32_t)edits[i].value }, 4);
        else
            put_u64(buf, edits[i].off, edits[i].value);
        repair(buf, sv.size);
        expect_corrupt(buf, sv.size, edits[i].field, edits[i].field);
    }
    /* Payload edits: a Corrs value out of [0, 1], a Corrs curve not
     * starting at 1, tiles out of order, a count that breaks the sum. */
    const tessel_d2t2_stats *s = sv.s;
    size_t corrs1 = HEADER_BYTES + s->ncorrs[0] * 8;
    size_t grid = HEADER_BYTES + (s->ncorrs[0] + s->ncorrs[1] + s->ntile_corrs[0] +
                                  s->ntile_corrs[1]) * 8;
    size_t n = s->nonempty_tiles;
    memcpy(buf, sv.bytes, sv.size);
    put_f64(buf, corrs1 + 8, 2.0);
    repair(buf, sv.size);
    expect_corrupt(buf, sv.size, "corrs", "corrs above 1");
    memcpy(buf, sv.bytes, sv.size);
    put_f64(buf, HEADER_BYTES, 0.5);
    repair(buf, sv.size);
    expect_corrupt(buf, sv.size, "corrs", "corrs[0][0] != 1");
    memcpy(buf, sv.bytes, sv.size);
    put_f64(buf, grid - 8, NAN);
    repair(buf, sv.size);
    expect_corrupt(buf, sv.size, "tile_corrs", "tile_corrs NaN");
    /* Version 2's grid: row offsets (u64), then u32 keys and counts. */
    size_t keys = grid + 8 * (s->extent[0] + 1), counts = keys + 4 * n;
    uint64_t r = 0;
    while (tessel_tile_grid_row_begin(sv.g, r + 1) - tessel_tile_grid_row_begin(sv.g, r) < 2)
        r++; /* a row of tiles holding two tiles */
    size_t second = keys + 4 * (tessel_tile_grid_row_begin(sv.g, r) + 1);
    memcpy(buf, sv.bytes, sv.size);
    memcpy(buf + second, buf + second - 4, 4); /* its second key = its first */
    repair(buf, sv.size);
    expect_corrupt(buf, sv.size, "grid", "duplicate tile");
    memcpy(buf, sv.bytes, sv.size);
    memcpy(buf + keys, &(uint32_t){ UINT32_MAX }, 4);
    repair(buf, sv.size);
    expect_corrupt(buf, sv.size, "grid", "tile outside the grid");
    memcpy(buf, sv.bytes, sv.size);
    put_u64(buf, grid + 8, n + 1);
    repair(buf, sv.size);
    expect_corrupt(buf, sv.size, "grid", "row offset past the tiles");
    memcpy(buf, sv.bytes, sv.size);
    memcpy(buf + counts, &(uint32_t){ 1 }, 4);
    repair(buf, sv.size);
    expect_corrupt(buf, sv.size, NULL, "count changed");
    memcpy(buf, sv.bytes, sv.size);
    buf[sv.size - 1] = '\0';
    repair(buf, sv.size);
    expect_corrupt(buf, sv.size, "source", "NUL in the source");
    free(buf);
    saved_free(&sv);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Out of memory: failing each allocation in turn fails cleanly. */
START_TEST(out_of_memory_every_allocation)
{
    tessel_tensor *t = random_matrix(200, 150, 3000, 4);
    const uint64_t base[2] = { 16, 8 };
    tessel_d2t2_stats *ref = NULL;
    ck_assert_int_eq(tessel_d2t2_collect(t, base, 0.3, 9, NULL, &ref, NULL), TESSEL_OK);
    long calls = 0;
    for (long k = 1;; k++) {
        test_alloc ta;
        test_alloc_init(&ta, k);
        tessel_d2t2_stats *s = NULL;
        tessel_diag d;
        int rc = tessel_d2t2_collect(t, base, 0.3, 9, &ta.allocator, &s, &d);
        if (rc == TESSEL_OK) {
            assert_same(ref, s);
            tessel_d2t2_free(&s);
            ck_assert_int_eq(ta.live, 0);
            calls = k;
            break;
        }
        ck_assert_int_eq(rc, TESSEL_ENOMEM);
        ck_assert_ptr_null(s);
        ck_assert_int_eq(ta.live, 0);
        ck_assert_int_lt(k, 10000);
    }
    ck_assert_int_gt(calls, 8);
    saved sv;
    save_one(&sv, "oom");
    for (long k = 1;; k++) {
        test_alloc ta;
        test_alloc_init(&ta, k);
        tessel_d2t2_stats *s = NULL;
        tessel_tile_grid *g = NULL;
        int rc = tessel_statfile_read(sv.path, &ta.allocator, &s, &g, NULL, 0, NULL);
        if (rc == TESSEL_OK) {
            assert_same(sv.s, s);
            assert_same_grid(sv.g, g);
            tessel_d2t2_free(&s);
            tessel_tile_grid_free(&g);
            ck_assert_int_eq(ta.live, 0);
            ck_assert_int_gt(k, 5);
            break;
        }
        ck_assert_int_eq(rc, TESSEL_ENOMEM);
        ck_assert_ptr_null(s);
        ck_assert_ptr_null(g);
        ck_assert_int_eq(ta.live, 0);
        ck_assert_int_lt(k, 100);
    }
    saved_free(&sv);
    tessel_d2t2_free(&ref);
    tessel_tensor_free(&t);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The shared real matrices: invariants of the definitions. */
static void check_invariants(const tessel_d2t2_stats *s, const char *name)
{
    double tiles = (double)s->extent[0] * (double)s->extent[1];
    ck_assert_msg(fabs(s->pr_tile_idx[0] * s->pr_tile_idx[1] * tiles -
                       (double)s->nonempty_tiles) <= 1e-6 * (double)s->nonempty_tiles,
                  "%s: PrTileIdx product", name);
    ck_assert_msg(fabs(s->size_tile * (double)s->nonempty_tiles - (double)s->nnz) <=
                      1e-9 * (double)s->nnz,
                  "%s: SizeTile", name);
    ck_assert_msg(fabs(s->prob_index[0] * s->prob_index[1] * (double)s->base[0] *
                           (double)s->base[1] -
                       s->size_tile) <= 1e-9 * s->size_tile,
                  "%s: ProbIndex product", name);
    ck_assert(s->max_tile >= s->size_tile && (double)s->max_tile <= (double)s->nnz);
    ck_assert(s->size_tile_rows >= 1 && s->size_tile_rows <= (double)s->base[0]);
    for (unsigned m = 0; m < 2; m++) {
        ck_assert(s->pr_tile_idx[m] > 0 && s->pr_tile_idx[m] <= 1);
        ck_assert(s->prob_index[m] > 0 && s->prob_index[m] <= 1);
        ck_assert_msg(s->corrs[m][0] == 1 && s->tile_corrs[m][0] == 1, "%s: curves at 0", name);
        for (uint64_t i = 0; i < s->ncorrs[m]; i++)
            ck_assert(s->corrs[m][i] >= 0 && s->corrs[m][i] <= 1);
        for (uint64_t i = 0; i < s->ntile_corrs[m]; i++)
            ck_assert(s->tile_corrs[m][i] >= 0 && s->tile_corrs[m][i] <= 1);
    }
}

START_TEST(real_matrices)
{
    DIR *dir = opendir(DATA_DIR);
    if (!dir)
        return; /* data not present: nothing to check */
    struct dirent *de;
    int seen = 0;
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    const uint64_t base[2] = { 128, 128 };
    while ((de = readdir(dir))) {
        size_t len = strlen(de->d_name);
        if (len < 8 || strcmp(de->d_name + len - 7, ".mtx.gz") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", DATA_DIR, de->d_name);
        tessel_tensor *t = NULL;
        tessel_diag d;
        ck_assert_msg(tessel_tensor_load(path, &opt, NULL, &t, NULL, &d) == TESSEL_OK, "%s: %s",
                      path, d.message);
        tessel_d2t2_stats *s = NULL, *f = NULL;
        ck_assert_int_eq(tessel_d2t2_collect(t, base, 0.05, 1, NULL, &s, &d), TESSEL_OK);
        check_invariants(s, path);
        ck_assert_int_eq(tessel_d2t2_collect(t, base, 1.0, 1, NULL, &f, &d), TESSEL_OK);
        check_invariants(f, path);
        ck_assert_uint_eq(f->sampled_tiles, f->nonempty_tiles);
        tessel_d2t2_free(&s);
        tessel_d2t2_free(&f);
        tessel_tensor_free(&t);
        seen++;
    }
    closedir(dir);
    ck_assert_int_gt(seen, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("d2t2");
    TCase *tc = tcase_create("d2t2");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, hand_computed_4x4);
    tcase_add_test(tc, brute_force_random);
    tcase_add_test(tc, brute_force_tile_corrs_paths);
    tcase_add_test(tc, sampling_is_seeded);
    tcase_add_test(tc, sampled_periodic_tiles);
    tcase_add_test(tc, invalid_arguments);
    tcase_add_test(tc, empty_matrix);
    tcase_add_test(tc, statfile_round_trip);
    tcase_add_test(tc, statfile_corruption);
    tcase_add_test(tc, out_of_memory_every_allocation);
    tcase_add_test(tc, real_matrices);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

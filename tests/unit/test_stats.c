/* Unit tests of src/stats: tile grids against a brute-force count, derived
 * grids against direct ones, both counter paths (dense and hash),
 * quantiles, histograms, footprints and out-of-memory behaviour. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/stats.h"
#include "test_alloc.h"

/* A random tensor with `n` draws (duplicates merge) of order `order`. */
static tessel_tensor *random_tensor(unsigned order, const uint64_t *dims, int n, unsigned seed,
                                    const tessel_allocator *a)
{
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(order, dims, 0, a, &b, NULL), TESSEL_OK);
    unsigned long long s = seed * 2654435761ull + 1;
    for (int i = 0; i < n; i++) {
        uint32_t c[TESSEL_MAX_ORDER];
        for (unsigned m = 0; m < order; m++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            /* Square the draw for mode 0 to skew rows, like real data. */
            double u = (double)(s >> 11) / 9007199254740992.0;
            c[m] = (uint32_t)((m == 0 ? u * u : u) * (double)dims[m]);
        }
        ck_assert_int_eq(tessel_coo_builder_add(b, c, 1.0), TESSEL_OK);
    }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), TESSEL_OK);
    tessel_coo_builder_free(&b);
    return t;
}

/* Brute force: a dense count per tile, compared tile by tile in order. */
static void check_grid_against_brute_force(const tessel_tensor *t, const tessel_tile_grid *g)
{
    uint64_t ext[TESSEL_MAX_ORDER], total = 1;
    for (unsigned m = 0; m < t->order; m++) {
        ext[m] = (t->dims[m] + g->tile[m] - 1) / g->tile[m];
        ck_assert_uint_eq(ext[m], g->extent[m]);
        total *= ext[m];
    }
    uint64_t *count = calloc(total, sizeof(uint64_t));
    ck_assert_ptr_nonnull(count);
    for (uint64_t r = 0; r < t->dims[0]; r++)
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            uint64_t lin = r / g->tile[0];
            for (unsigned m = 1; m < t->order; m++)
                lin = lin * ext[m] + t->idx[m][k] / g->tile[m];
            count[lin]++;
        }
    uint64_t i = 0;
    for (uint64_t lin = 0; lin < total; lin++) {
        if (!count[lin])
            continue;
        ck_assert_uint_lt(i, g->nonempty);
        uint64_t coords[TESSEL_MAX_ORDER], back = 0;
        tessel_tile_grid_coords(g, i, coords);
        for (unsigned m = 0; m < t->order; m++)
            back = back * ext[m] + coords[m];
        ck_assert_uint_eq(back, lin);
        ck_assert_uint_eq(tessel_tile_grid_count(g, i), count[lin]);
        i++;
    }
    ck_assert_uint_eq(i, g->nonempty);
    ck_assert_uint_eq(g->nnz, t->nnz);
    free(count);
}

static void check_shape(const tessel_tensor *t, const uint64_t *tile)
{
    tessel_tile_grid *g = NULL;
    tessel_diag d;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, &d), TESSEL_OK);
    check_grid_against_brute_force(t, g);
    tessel_tile_grid_free(&g);
    ck_assert_ptr_null(g);
}

START_TEST(matrix_grids_match_brute_force)
{
    uint64_t dims[2] = { 1000, 777 };
    tessel_tensor *t = random_tensor(2, dims, 30000, 1, NULL);
    /* {1, 777}: the row slices, one tile per row (counted from the row
     * pointers alone, grid.c count_group) */
    static const uint64_t shapes[][2] = { { 128, 128 }, { 37, 200 }, { 1, 1 },   { 1000, 777 },
                                          { 5000, 3 },  { 64, 1 },   { 3, 999 }, { 1, 777 } };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        check_shape(t, shapes[i]);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(tensor_grids_match_brute_force)
{
    uint64_t dims[3] = { 60, 45, 33 };
    tessel_tensor *t = random_tensor(3, dims, 8000, 2, NULL);
    static const uint64_t shapes[][3] = { { 8, 8, 8 }, { 7, 5, 11 }, { 1, 1, 1 }, { 60, 45, 33 },
                                          { 100, 2, 3 } };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        check_shape(t, shapes[i]);
    tessel_tensor_free(&t);
    /* Key space 500*300 > 2^16 and > nnz/2: the hash counter over many
     * groups (a fuzzer found probe chains cut when it was cleared by key). */
    uint64_t wide[3] = { 6, 500, 300 }, unit[3] = { 2, 1, 1 };
    t = random_tensor(3, wide, 20000, 8, NULL);
    check_shape(t, unit);
    tessel_tensor_free(&t);
}
END_TEST

/* A wide key space forces the hash counter, including table growth. */
START_TEST(hash_counter_path)
{
    uint64_t dims[2] = { 3, 3000000000ull };
    tessel_tensor *t = random_tensor(2, dims, 20000, 3, NULL);
    uint64_t tile[2] = { 2, 1 };
    tessel_tile_grid *g = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), TESSEL_OK);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < g->nonempty; i++) {
        sum += tessel_tile_grid_count(g, i);
        if (i > 0 && tessel_tile_grid_group(g, i) == tessel_tile_grid_group(g, i - 1))
            ck_assert_uint_lt(tessel_tile_grid_key(g, i - 1), tessel_tile_grid_key(g, i));
    }
    ck_assert_uint_eq(sum, t->nnz);
    /* Each non-empty tile is a distinct (row pair, column); count them. */
    uint64_t expect = 0;
    for (uint64_t grp = 0; grp < 2; grp++) {
        uint64_t lo = t->ptr[grp * 2], hi = t->ptr[grp * 2 + 2 < 3 ? grp * 2 + 2 : 3];
        uint32_t *cols = malloc((hi - lo + 1) * sizeof(uint32_t));
        ck_assert_ptr_nonnull(cols);
        memcpy(cols, t->idx[1] + lo, (hi - lo) * sizeof(uint32_t));
        for (uint64_t a = 0; a < hi - lo; a++) {
            int seen = 0;
            for (uint64_t b = 0; b < a && !seen; b++)
                seen = cols[b] == cols[a];
            expect += !seen;
        }
        free(cols);
    }
    ck_assert_uint_eq(g->nonempty, expect);
    tessel_tile_grid_free(&g);
    tessel_tensor_free(&t);
}
END_TEST

static void check_same_grid(const tessel_tile_grid *a, const tessel_tile_grid *b)
{
    ck_assert_uint_eq(a->nonempty, b->nonempty);
    ck_assert_uint_eq(a->extent[0], b->extent[0]);
    for (uint64_t r = 0; r <= a->extent[0]; r++)
        ck_assert_uint_eq(tessel_tile_grid_row_begin(a, r), tessel_tile_grid_row_begin(b, r));
    for (uint64_t i = 0; i < a->nonempty; i++) {
        ck_assert_uint_eq(tessel_tile_grid_key(a, i), tessel_tile_grid_key(b, i));
        ck_assert_uint_eq(tessel_tile_grid_count(a, i), tessel_tile_grid_count(b, i));
    }
}

START_TEST(derived_equals_direct)
{
    uint64_t dims2[2] = { 2000, 1500 }, dims3[3] = { 50, 40, 30 };
    tessel_tensor *m = random_tensor(2, dims2, 40000, 4, NULL);
    tessel_tensor *t = random_tensor(3, dims3, 9000, 5, NULL);
    static const uint64_t base2[2] = { 32, 16 }, want2[][2] = { { 32, 16 }, { 128, 128 },
                                                                { 96, 48 }, { 4096, 4096 } };
    static const uint64_t base3[3] = { 2, 3, 5 }, want3[][3] = { { 4, 9, 5 }, { 64, 3, 30 } };
    tessel_tile_grid *base = NULL, *direct = NULL, *derived = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(m, base2, NULL, &base, NULL), TESSEL_OK);
    for (size_t i = 0; i < sizeof(want2) / sizeof(want2[0]); i++) {
        ck_assert_int_eq(tessel_tile_grid_build(m, want2[i], NULL, &direct, NULL), TESSEL_OK);
        ck_assert_int_eq(tessel_tile_grid_derive(base, want2[i], &derived, NULL), TESSEL_OK);
        check_same_grid(direct, derived);
        tessel_tile_grid_free(&direct);
        tessel_tile_grid_free(&derived);
    }
    uint64_t bad[2] = { 48, 16 };
    tessel_diag d;
    ck_assert_int_eq(tessel_tile_grid_derive(base, bad, &derived, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "multiple"));
    tessel_tile_grid_free(&base);
    ck_assert_int_eq(tessel_tile_grid_build(t, base3, NULL, &base, NULL), TESSEL_OK);
    for (size_t i = 0; i < sizeof(want3) / sizeof(want3[0]); i++) {
        ck_assert_int_eq(tessel_tile_grid_build(t, want3[i], NULL, &direct, NULL), TESSEL_OK);
        ck_assert_int_eq(tessel_tile_grid_derive(base, want3[i], &derived, NULL), TESSEL_OK);
        check_same_grid(direct, derived);
        tessel_tile_grid_free(&direct);
        tessel_tile_grid_free(&derived);
    }
    tessel_tile_grid_free(&base);
    tessel_tensor_free(&m);
    tessel_tensor_free(&t);
}
END_TEST

/* Occupancies 1..10 in ten tiles of one row: hand-checked ranks. */
START_TEST(quantiles_nearest_rank)
{
    uint64_t dims[2] = { 10, 100 };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), TESSEL_OK);
    for (uint32_t tile = 0; tile < 10; tile++)
        for (uint32_t k = 0; k <= tile; k++) {
            uint32_t c[2] = { k, tile * 10 };
            ck_assert_int_eq(tessel_coo_builder_add(b, c, 1), TESSEL_OK);
        }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), TESSEL_OK);
    tessel_coo_builder_free(&b);
    uint64_t tile[2] = { 10, 10 };
    tessel_tile_grid *g = NULL;
    tessel_occupancy *o = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_occupancy_create(g, &o, NULL), TESSEL_OK);
    ck_assert_uint_eq(o->tiles, 10);
    ck_assert_uint_eq(o->nonempty, 10);
    ck_assert_double_eq(o->mean, 5.5);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 0), 1);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 0.1), 1);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 0.11), 2);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 0.5), 5);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 0.7), 7); /* 0.7*10 is 7.000000000000001 */
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 0.9), 9);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 0.95), 10);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 1), 10);
    uint64_t lo[65], hi[65], count[65];
    ck_assert_uint_eq(tessel_occupancy_histogram(o, lo, hi, count), 4);
    ck_assert_uint_eq(count[0], 1); /* [1,2) */
    ck_assert_uint_eq(count[1], 2); /* [2,4) */
    ck_assert_uint_eq(count[2], 4); /* [4,8) */
    ck_assert_uint_eq(count[3], 3); /* [8,16) */
    ck_assert_uint_eq(lo[3], 8);
    ck_assert_uint_eq(hi[3], 16);
    tessel_occupancy_free(&o);
    tessel_tile_grid_free(&g);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(footprints_by_hand)
{
    tessel_format_widths w;
    tessel_format_widths_init(&w);
    uint64_t tile[2] = { 128, 128 };
    /* value 64, coord 32, offset 32, run 32 bits; 100 nonzeros. */
    ck_assert_uint_eq(tessel_format_footprint(TESSEL_FORMAT_COO, 2, tile, 100, &w), 1600);
    ck_assert_uint_eq(tessel_format_footprint(TESSEL_FORMAT_CSR, 2, tile, 100, &w),
                      (129 * 32 + 100 * 96) / 8);
    ck_assert_uint_eq(tessel_format_footprint(TESSEL_FORMAT_BITMAP, 2, tile, 100, &w),
                      (16384 + 6400) / 8);
    /* UOP-CP: 129 offsets of 15 bits (to count 16384), 7-bit coordinates. */
    ck_assert_uint_eq(tessel_format_footprint(TESSEL_FORMAT_UOP_CP, 2, tile, 100, &w),
                      (129 * 15 + 100 * 71 + 7) / 8);
    ck_assert_uint_eq(tessel_format_footprint(TESSEL_FORMAT_RLE, 2, tile, 100, &w), 1200);
    ck_assert_int_eq(tessel_format_from_name("cp"), TESSEL_FORMAT_CSR);
    ck_assert_int_eq(tessel_format_from_name("uop-cp"), TESSEL_FORMAT_UOP_CP);
    ck_assert_int_eq(tessel_format_from_name("zip"), -1);
    uint64_t huge[3] = { UINT64_MAX, UINT64_MAX, 2 };
    ck_assert_uint_eq(tessel_format_footprint(TESSEL_FORMAT_BITMAP, 3, huge, 1, &w), UINT64_MAX);
}
END_TEST

START_TEST(empty_and_invalid)
{
    uint64_t dims[2] = { 5, 5 };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), TESSEL_OK);
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), TESSEL_OK);
    tessel_coo_builder_free(&b);
    uint64_t tile[2] = { 2, 2 }, zero[2] = { 0, 2 };
    tessel_tile_grid *g = NULL;
    tessel_occupancy *o = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), TESSEL_OK);
    ck_assert_uint_eq(g->nonempty, 0);
    ck_assert_int_eq(tessel_occupancy_create(g, &o, NULL), TESSEL_OK);
    ck_assert_uint_eq(o->tiles, 9);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 0.5), 0);
    ck_assert_uint_eq(tessel_occupancy_histogram(o, NULL, NULL, NULL), 0);
    tessel_occupancy_free(&o);
    tessel_tile_grid_free(&g);
    tessel_diag d;
    ck_assert_int_eq(tessel_tile_grid_build(t, zero, NULL, &g, &d), TESSEL_EINVAL);
    ck_assert_ptr_null(g);
    tessel_tensor_free(&t);
}
END_TEST

static void oom_sweep(const tessel_tensor *t, const uint64_t *tile)
{
    int succeeded = 0;
    for (long n = 1; n < 400 && !succeeded; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_tile_grid *g = NULL, *coarse = NULL;
        tessel_occupancy *o = NULL;
        uint64_t twice[TESSEL_MAX_ORDER];
        for (unsigned m = 0; m < t->order; m++)
            twice[m] = 2 * tile[m];
        tessel_tile_sym *sym = NULL;
        int rc = tessel_tile_grid_build(t, tile, &ta.allocator, &g, NULL);
        if (!rc && t->order == 2) /* its transposed pairs (NULL when not square) */
            rc = tessel_tile_grid_sym(t, g, &ta.allocator, &sym, NULL);
        tessel_tile_sym_free(&sym);
        if (!rc)
            rc = tessel_tile_grid_derive(g, twice, &coarse, NULL);
        if (!rc)
            rc = tessel_occupancy_create(coarse, &o, NULL);
        ck_assert(rc == TESSEL_OK || rc == TESSEL_ENOMEM);
        succeeded = rc == TESSEL_OK;
        tessel_occupancy_free(&o);
        tessel_tile_grid_free(&coarse);
        tessel_tile_grid_free(&g);
        ck_assert_int_eq(ta.live, 0);
    }
    ck_assert(succeeded);
}

START_TEST(out_of_memory_every_allocation)
{
    uint64_t dims[2] = { 300, 200 };
    tessel_tensor *t = random_tensor(2, dims, 5000, 6, NULL);
    uint64_t tile[2] = { 8, 8 };
    oom_sweep(t, tile);
    tessel_tensor_free(&t);
    uint64_t square[2] = { 256, 256 };
    t = random_tensor(2, square, 3000, 8, NULL); /* its transposed pairs counted too */
    oom_sweep(t, tile);
    tessel_tensor_free(&t);
    uint64_t wide[2] = { 3, 3000000000ull };
    t = random_tensor(2, wide, 3000, 7, NULL); /* the hash path, with growth */
    uint64_t unit[2] = { 1, 1 };
    oom_sweep(t, unit);
    tessel_tensor_free(&t);
}
END_TEST

/* The two summaries agree in every figure, bit for bit. */
static void assert_same_occupancy(const tessel_occupancy *a, const tessel_occupancy *b)
{
    ck_assert_uint_eq(a->tiles, b->tiles);
    ck_assert_uint_eq(a->nonempty, b->nonempty);
    ck_assert_uint_eq(a->nnz, b->nnz);
    ck_assert_uint_eq(a->min, b->min);
    ck_assert_uint_eq(a->max, b->max);
    ck_assert(memcmp(&a->mean, &b->mean, sizeof(double)) == 0);
    ck_assert(memcmp(&a->stddev, &b->stddev, sizeof(double)) == 0);
    ck_assert_uint_eq(a->ndistinct, b->ndistinct);
    for (uint64_t i = 0; i < a->ndistinct; i++) {
        ck_assert_uint_eq(a->value[i], b->value[i]);
        ck_assert_uint_eq(a->upto[i], b->upto[i]);
    }
}

/* A matrix holding only rows [r0, r1) of t. */
static tessel_tensor *rows_of(const tessel_tensor *t, uint64_t r0, uint64_t r1)
{
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, t->dims, 0, NULL, &b, NULL), TESSEL_OK);
    for (uint64_t r = r0; r < r1; r++)
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            uint32_t c[2] = { (uint32_t)r, t->idx[1][k] };
            ck_assert_int_eq(tessel_coo_builder_add(b, c, 1.0), TESSEL_OK);
        }
    tessel_tensor *out = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &out, NULL), TESSEL_OK);
    tessel_coo_builder_free(&b);
    return out;
}

/* The occupancy from a grid, from the grid-free pass and from parts over
 * row blocks (merged in reverse) is the same; large occupancies (past the
 * dense counts) and merging go through the pair list. */
START_TEST(occupancy_split_and_merge)
{
    uint64_t dims[2] = { 700, 500 };
    tessel_tensor *t = random_tensor(2, dims, 40000, 8, NULL);
    uint64_t tiles[3][2] = { { 8, 8 }, { 7, 64 }, { 700, 1 } };
    for (int s = 0; s < 3; s++) {
        tessel_tile_grid *g = NULL;
        tessel_occupancy *from_grid = NULL, *direct = NULL, *merged = NULL;
        ck_assert_int_eq(tessel_tile_grid_build(t, tiles[s], NULL, &g, NULL), TESSEL_OK);
        ck_assert_int_eq(tessel_occupancy_create(g, &from_grid, NULL), TESSEL_OK);
        tessel_occupancy_acc *acc = NULL;
        ck_assert_int_eq(tessel_occupancy_acc_create(NULL, &acc, NULL), TESSEL_OK);
        ck_assert_int_eq(tessel_tile_occupancy_add(t, tiles[s], acc, NULL), TESSEL_OK);
        ck_assert_int_eq(tessel_occupancy_acc_finish(acc, from_grid->tiles, &direct, NULL),
                         TESSEL_OK);
        assert_same_occupancy(from_grid, direct);
        /* Parts over row blocks of whole rows of tiles. */
        tessel_stats_part *whole = NULL;
        ck_assert_int_eq(tessel_stats_part_create(2, dims, tiles[s], NULL, &whole, NULL), TESSEL_OK);
        for (uint64_t r1 = dims[0]; r1 > 0;) {
            uint64_t r0 = r1 > 3 * tiles[s][0] ? r1 - 3 * tiles[s][0] : 0;
            r0 -= r0 % tiles[s][0];
            tessel_tensor *block = rows_of(t, r0, r1);
            tessel_stats_part *p = NULL;
            ck_assert_int_eq(tessel_stats_part_create(2, dims, tiles[s], NULL, &p, NULL), TESSEL_OK);
            ck_assert_int_eq(tessel_stats_part_add(p, block, r0, r1, NULL), TESSEL_OK);
            ck_assert_int_eq(tessel_stats_part_merge(whole, p, NULL), TESSEL_OK);
            tessel_stats_part_free(&p);
            tessel_tensor_free(&block);
            r1 = r0;
        }
        tessel_occupancy *slices[2] = { NULL, NULL }, *rows, *cols;
        ck_assert_int_eq(tessel_stats_part_summary(whole, &merged, slices, NULL), TESSEL_OK);
        rows = slices[0];
        cols = slices[1];
        assert_same_occupancy(from_grid, merged);
        ck_assert_uint_eq(rows->nnz, t->nnz);
        ck_assert_uint_eq(cols->nnz, t->nnz);
        tessel_occupancy_free(&rows);
        tessel_occupancy_free(&cols);
        tessel_stats_part_free(&whole);
        tessel_occupancy_acc_free(&acc);
        tessel_occupancy_free(&from_grid);
        tessel_occupancy_free(&direct);
        tessel_occupancy_free(&merged);
        tessel_tile_grid_free(&g);
    }
    tessel_tensor_free(&t);
    /* Large values: the pair list, compacted as it fills, merged in any order. */
    tessel_occupancy_acc *a = NULL, *b = NULL;
    ck_assert_int_eq(tessel_occupancy_acc_create(NULL, &a, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_occupancy_acc_create(NULL, &b, NULL), TESSEL_OK);
    uint64_t n = 0, sum = 0;
    for (uint64_t i = 0; i < 3000; i++) {
        uint64_t v = i % 3 ? 70000 + (i * 7919) % 500 : 1 + i % 40;
        ck_assert_int_eq(tessel_occupancy_acc_add(i % 2 ? a : b, v, 1, NULL), TESSEL_OK);
        n++;
        sum += v;
    }
    ck_assert_int_eq(tessel_occupancy_acc_merge(a, b, NULL), TESSEL_OK);
    tessel_occupancy *o = NULL;
    ck_assert_int_eq(tessel_occupancy_acc_finish(a, 5000, &o, NULL), TESSEL_OK);
    ck_assert_uint_eq(o->nonempty, n);
    ck_assert_uint_eq(o->nnz, sum);
    ck_assert_uint_eq(o->upto[o->ndistinct - 1], n);
    ck_assert_uint_eq(tessel_occupancy_quantile(o, 1.0 / 3 - 1e-9), 40);
    ck_assert_uint_ge(tessel_occupancy_quantile(o, 0.5), 70000);
    tessel_occupancy_free(&o);
    tessel_occupancy_acc_free(&a);
    tessel_occupancy_acc_free(&b);
}
END_TEST

/* Per-rank formats on a 4x8 tile with 3 non-empty rows and 5 nonzeros
 * (values 64 bits, coordinates and offsets 32, runs 16):
 *   [UOP,CP]  offsets 5*32 + coords 5*32 = 320; values 5*64 = 320 (= csr 640)
 *   [CP,CP]   rows 3*32 + child offsets 4*32 + coords 5*32 = 384
 *   [B,B]     4 bits + 3 fibers * 8 bits = 28
 *   [UB,UB]   4 + 4*8 = 36 bits; every one of 32 positions holds a value
 *   [UOP,RLE] 160 + 5*16 = 240
 *   [UOP,UOP] 160 + 4 fibers * 9 * 32 = 1312; 32 values */
START_TEST(rank_footprints_by_hand)
{
    tessel_format_widths w = { .value_bits = 64, .coord_bits = 32, .offset_bits = 32,
                               .run_bits = 16 };
    const uint64_t tile[2] = { 4, 8 }, occ[2] = { 3, 5 };
    static const struct {
        unsigned char r[2];
        double meta, data;
    } cases[] = {
        { { TESSEL_RANK_UOP, TESSEL_RANK_CP }, 320, 320 },
        { { TESSEL_RANK_CP, TESSEL_RANK_CP }, 384, 320 },
        { { TESSEL_RANK_B, TESSEL_RANK_B }, 28, 320 },
        { { TESSEL_RANK_UB, TESSEL_RANK_UB }, 36, 2048 },
        { { TESSEL_RANK_UOP, TESSEL_RANK_RLE }, 240, 320 },
        { { TESSEL_RANK_UOP, TESSEL_RANK_UOP }, 1312, 2048 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double data, meta;
        tessel_rank_footprint_bits(cases[i].r, 2, tile, occ, &w, &data, &meta);
        ck_assert_msg(meta == cases[i].meta && data == cases[i].data,
                      "case %zu: meta %g data %g", i, meta, data);
    }
    /* [UOP, CP] is the csr footprint */
    ck_assert_uint_eq(tessel_format_footprint(TESSEL_FORMAT_CSR, 2, tile, 5, &w), 640 / 8);
    ck_assert_int_eq(tessel_rank_format_from_name("uop"), TESSEL_RANK_UOP);
    ck_assert_int_eq(tessel_rank_format_from_name("Rle"), TESSEL_RANK_RLE);
    ck_assert_int_eq(tessel_rank_format_from_name("UBX"), -1);
    ck_assert_str_eq(tessel_rank_format_name(TESSEL_RANK_UB), "UB");
}
END_TEST

/* tessel_tile_occupancy_add equals the occupancy of the built grid (which
 * check_shape has checked against brute force). */
static void check_acc_against_grid(const tessel_tensor *t, const uint64_t *tile)
{
    check_shape(t, tile);
    tessel_tile_grid *g = NULL;
    tessel_occupancy *from_grid = NULL, *direct = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_occupancy_create(g, &from_grid, NULL), TESSEL_OK);
    tessel_occupancy_acc *acc = NULL;
    ck_assert_int_eq(tessel_occupancy_acc_create(NULL, &acc, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_tile_occupancy_add(t, tile, acc, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_occupancy_acc_finish(acc, from_grid->tiles, &direct, NULL),
                     TESSEL_OK);
    assert_same_occupancy(from_grid, direct);
    tessel_occupancy_acc_free(&acc);
    tessel_occupancy_free(&from_grid);
    tessel_occupancy_free(&direct);
    tessel_tile_grid_free(&g);
}

/* A dense counter of more than 2^18 keys met by enough entries is added
 * in blocks of keys (grid.c count_blocked): the grid and the occupancy
 * equal the brute force, by shift (tile width 1) and by division (3).
 * Two rows of tiles: one would be a column tally (coltally.c). */
START_TEST(blocked_counter_path)
{
    static const uint64_t dims[2][2] = { { 6, 300000 }, { 6, 900000 } };
    static const uint64_t tiles[2][2] = { { 3, 1 }, { 3, 3 } };
    for (int s = 0; s < 2; s++) {
        tessel_tensor *t = random_tensor(2, dims[s], 900000, 11 + s, NULL);
        uint64_t keyspace = dims[s][1] / tiles[s][1];
        ck_assert_uint_gt(keyspace, 1u << 18); /* blocked, and dense: */
        ck_assert_uint_le(keyspace, t->nnz / 2);
        check_acc_against_grid(t, tiles[s]);
        tessel_tensor_free(&t);
    }
}
END_TEST

/* One row of tiles over a matrix is counted in one byte per column of
 * tiles (coltally.c), a column's every 256th entry carried: columns of
 * 70000 (past the accumulator's dense counts), 256 (a byte back at 0),
 * 511, 0 and 255 entries, by column, by shift (2) and by division (3);
 * and rows of tiles with fewer entries than keys go through
 * count_entries' flush by entry, more through its scan. */
START_TEST(column_tally_and_entrywise_counts)
{
    static const uint64_t per_col[5] = { 70000, 256, 511, 0, 255 };
    uint64_t dims[2] = { 70000, 5 };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), TESSEL_OK);
    for (uint32_t c = 0; c < 5; c++)
        for (uint32_t r = 0; r < per_col[c]; r++) {
            uint32_t at[2] = { (uint32_t)((r * 7919u) % 70000u), c };
            ck_assert_int_eq(tessel_coo_builder_add(b, at, 1.0), TESSEL_OK);
        }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), TESSEL_OK);
    tessel_coo_builder_free(&b);
    ck_assert_uint_eq(t->nnz, 71022);
    static const uint64_t tiles[3][2] = { { 70000, 1 }, { 100000, 2 }, { 70000, 3 } };
    for (int s = 0; s < 3; s++)
        check_acc_against_grid(t, tiles[s]);
    tessel_occupancy_acc *acc = NULL;
    tessel_occupancy *o = NULL;
    ck_assert_int_eq(tessel_occupancy_acc_create(NULL, &acc, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_tile_occupancy_add(t, tiles[0], acc, NULL), TESSEL_OK);
    ck_assert_int_eq(tessel_occupancy_acc_finish(acc, 5, &o, NULL), TESSEL_OK);
    ck_assert_uint_eq(o->nonempty, 4);
    ck_assert_uint_eq(o->ndistinct, 4);
    static const uint64_t sorted[4] = { 255, 256, 511, 70000 };
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(o->value[i], sorted[i]);
    tessel_occupancy_free(&o);
    tessel_occupancy_acc_free(&acc);
    tessel_tensor_free(&t);
    uint64_t rdims[2] = { 1000, 777 };
    t = random_tensor(2, rdims, 30000, 5, NULL);
    static const uint64_t rtiles[4][2] = { { 1, 1 }, { 2, 3 }, { 128, 128 }, { 1000, 1 } };
    for (int s = 0; s < 4; s++)
        check_acc_against_grid(t, rtiles[s]);
    tessel_tensor_free(&t);
}
END_TEST

/* The spread summed tile by tile, as tessel_occupancy_acc_finish defines
 * it (ascending occupancies, one addition per tile). */
static double stddev_tile_by_tile(const uint64_t *value, const uint64_t *tiles, unsigned n)
{
    uint64_t nonempty = 0, nnz = 0;
    for (unsigned i = 0; i < n; i++) {
        nonempty += tiles[i];
        nnz += value[i] * tiles[i];
    }
    double mean = (double)nnz / (double)nonempty, ss = 0;
    for (unsigned i = 0; i < n; i++) {
        double d = (double)value[i] - mean;
        for (uint64_t k = 0; k < tiles[i]; k++)
            ss += d * d;
    }
    return sqrt(ss / (double)nonempty);
}

/* The finish's stddev takes runs of equal additions in steps (occ_acc.c
 * add_repeated): the same bits as one addition per tile, through binade
 * crossings, additions that round to nothing, and exact ties: round 0, a
 * sum past 2^53 (ulp 2) plus an odd square, (2^20 + 1)^2, ties every time;
 * round 1, mean 665657.5 over 2 x 6463 tiles, whose square's ties start on
 * an odd multiple of the ulp (taking the first increment for the run's
 * would be off there). Then random ones. */
START_TEST(stddev_bits_of_tile_by_tile)
{
    const uint64_t m = (1u << 20) + 2; /* mean of 1 and 2m - 1: d = -+(2^20 + 1) */
    uint64_t value[8], tiles[8];
    unsigned n = 0;
    value[n] = 1, tiles[n++] = 16384;
    value[n] = 2 * m - 1, tiles[n++] = 16384;
    gsl_rng *rng = tessel_rng_create(NULL, 7);
    ck_assert_ptr_nonnull(rng);
    for (int round = 0; round < 40; round++) {
        tessel_occupancy_acc *acc = NULL;
        ck_assert_int_eq(tessel_occupancy_acc_create(NULL, &acc, NULL), TESSEL_OK);
        for (unsigned i = 0; i < n; i++)
            ck_assert_int_eq(tessel_occupancy_acc_add(acc, value[i], tiles[i], NULL), TESSEL_OK);
        tessel_occupancy *o = NULL;
        ck_assert_int_eq(tessel_occupancy_acc_finish(acc, UINT64_MAX, &o, NULL), TESSEL_OK);
        double want = stddev_tile_by_tile(value, tiles, n);
        ck_assert_msg(memcmp(&o->stddev, &want, sizeof(want)) == 0, "round %d: %.17g != %.17g",
                      round, o->stddev, want);
        tessel_occupancy_free(&o);
        tessel_occupancy_acc_free(&acc);
        if (round == 0) {
            value[0] = 1, value[1] = 2 * 665657;
            tiles[0] = tiles[1] = 6463;
            continue;
        }
        /* Next: 1 to 8 distinct values (ascending, as finish sorts them),
         * spread up to 2^k, up to 200,000 tiles each. */
        n = 1 + (unsigned)gsl_rng_uniform_int(rng, 8);
        uint64_t span = 1ull << (1 + gsl_rng_uniform_int(rng, 40));
        uint64_t v = 1 + gsl_rng_uniform_int(rng, 100);
        for (unsigned i = 0; i < n; i++) {
            value[i] = v;
            v += 1 + (uint64_t)(gsl_rng_uniform(rng) * (double)span);
            tiles[i] = 1 + gsl_rng_uniform_int(rng, i % 2 ? 200000 : 50);
        }
    }
    tessel_rng_free(NULL, &rng);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stats");
    TCase *tc = tcase_create("stats");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, matrix_grids_match_brute_force);
    tcase_add_test(tc, tensor_grids_match_brute_force);
    tcase_add_test(tc, hash_counter_path);
    tcase_add_test(tc, blocked_counter_path);
    tcase_add_test(tc, column_tally_and_entrywise_counts);
    tcase_add_test(tc, derived_equals_direct);
    tcase_add_test(tc, quantiles_nearest_rank);
    tcase_add_test(tc, footprints_by_hand);
    tcase_add_test(tc, rank_footprints_by_hand);
    tcase_add_test(tc, empty_and_invalid);
    tcase_add_test(tc, out_of_memory_every_allocation);
    tcase_add_test(tc, occupancy_split_and_merge);
    tcase_add_test(tc, stddev_bits_of_tile_by_tile);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Memory of the stat estimator's boundary-1 grids (src/model/stat_grid.c):
 * a grid coarsened to a level's tiles holds at most one entry per coarse
 * tile, so where a level's tiles merge many base cells (specs/extensor.yaml's
 * LLB tiles on its 8 x 16 base grid) the evaluation's extra memory stays a
 * small part of the statistics' own grid, and the traffic is unchanged by
 * how the grids are sized (checked against the exact estimator on the grid,
 * where the inputs' fills and bytes are exact). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_data.h"
#include "test_alloc.h"
#include "test_stat_oom.h"
#include "test_specs.h"

/* n x n with `per_row` entries per row at seeded uniform columns (LCG;
 * repeats merge). */
static tessel_tensor *uniform(uint64_t n, unsigned per_row, uint64_t seed)
{
    uint64_t dims[2] = { n, n };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    uint64_t s = seed;
    for (uint32_t i = 0; i < n; i++)
        for (unsigned r = 0; r < per_row; r++) {
            s = s * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
            uint32_t e[2] = { i, (uint32_t)((s >> 33) % n) };
            ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
        }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

static void data_of(tessel_workload_data *d, tessel_tensor *a)
{
    test_spmspm_data(d, a, a);
}

START_TEST(coarse_grids_sized_by_tiles)
{
    /* 8192 x 8192, 8 per row: the 8 x 16 base cells hold about one
     * nonzero each; A's 64 x 1024 tiles are 8,192 cells of the level,
     * B's 1024 x 1024 tiles 64 */
    tessel_tensor *a = uniform(8192, 8, 7);
    static const char *const orders[3] = { "IJK", "IKJ", "KIJ" };
    for (unsigned p = 0; p < 3; p++) {
        tessel_workload_data d;
        data_of(&d, a);
        tessel_spec s;
        test_spec_spmspm(&s, orders[p], 64, 1024, 1024, 1, 32, 32);
        s.level[1].capacity = UINT64_C(1) << 20;
        tessel_stat_options o;
        tessel_stat_options_init(&o);
        o.base[0] = 8;
        o.base[1] = 16;
        test_alloc ta;
        test_alloc_init(&ta, 0);
        tessel_diag diag;
        tessel_stat_data *st = test_stat_create_through(&s, &d, &o, &ta);
        size_t held = ta.bytes;
        ta.peak = held;
        tessel_result rs, re;
        ck_assert_msg(tessel_model_stat_eval(&s, st, &rs, &diag) == 0, "%s", diag.message);
        ck_assert_uint_eq(ta.bytes, held); /* the evaluation keeps nothing */
        /* the base grid alone is 8 B per non-empty cell (about a nonzero):
         * room for every base cell in both coarsened grids would be 16 B
         * per nonzero beyond what the statistics hold */
        size_t extra = ta.peak - held;
        ck_assert_msg(extra < 4 * a->nnz, "%s: %zu bytes beyond the statistics for %llu nonzeros",
                      orders[p], extra, (unsigned long long)a->nnz);
        ck_assert_msg(tessel_model_exact(&s, &d, NULL, &re, &diag) == 0, "%s", diag.message);
        for (unsigned t = 1; t < 3; t++) {
            ck_assert_uint_eq(rs.traffic[1][t].fills, re.traffic[1][t].fills);
            ck_assert_uint_eq(rs.traffic[1][t].in_data, re.traffic[1][t].in_data);
            ck_assert_uint_eq(rs.traffic[1][t].in_metadata, re.traffic[1][t].in_metadata);
        }
        tessel_stat_data_free(&st);
        ck_assert_int_eq(ta.live, 0);
    }
    tessel_tensor_free(&a);
}
END_TEST

/* Boundary 1's tile prices (stat_work_init, src/model/stat_spmspm.c): where
 * a tile's price is its size's, they are kept per size, not per tile (16 B
 * per tile of each input was the estimate's peak at uniform 64M). At tiles
 * equal to the 8 x 8 base cells the grids are the statistics' own, so what
 * the evaluation adds is the per-tile prices (about 32 B per nonzero when
 * kept per tile), about 9 B per nonzero of other transients (the output
 * sample's spill maps, arrays over tile rows and columns). */
START_TEST(tile_prices_by_size)
{
    tessel_tensor *a = uniform(8192, 8, 11);
    static const char *const orders[3] = { "IJK", "IKJ", "KIJ" };
    for (unsigned p = 0; p < 3; p++) {
        tessel_workload_data d;
        data_of(&d, a);
        tessel_spec s;
        test_spec_spmspm(&s, orders[p], 8, 8, 8, 1, 32, 32);
        s.level[1].capacity = UINT64_C(1) << 20;
        tessel_stat_options o;
        tessel_stat_options_init(&o);
        o.base[0] = o.base[1] = 8;
        test_alloc ta;
        test_alloc_init(&ta, 0);
        tessel_diag diag;
        tessel_stat_data *st = test_stat_create_through(&s, &d, &o, &ta);
        size_t held = ta.bytes;
        ta.peak = held;
        tessel_result rs;
        ck_assert_msg(tessel_model_stat_eval(&s, st, &rs, &diag) == 0, "%s", diag.message);
        ck_assert_uint_eq(ta.bytes, held);
        size_t extra = ta.peak - held;
        ck_assert_msg(extra < 16 * a->nnz, "%s: %zu bytes beyond the statistics for %llu nonzeros",
                      orders[p], extra, (unsigned long long)a->nnz);
        ck_assert(rs.traffic[1][1].fills > 0 && rs.traffic[1][2].fills > 0);
        tessel_stat_data_free(&st);
        ck_assert_int_eq(ta.live, 0);
    }
    tessel_tensor_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stat-grid");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, coarse_grids_sized_by_tiles);
    tcase_add_test(tc, tile_prices_by_size);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

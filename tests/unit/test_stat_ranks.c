/* Per-rank format lists under the stat estimator (src/model/stat_ranks.c,
 * docs/models/stat.md "Per-rank format lists"): a list whose price reads no
 * prefix count is priced from the tiles' nonzero counts, byte for byte as
 * exact prices it, at one and at two buffer levels; a list that reads one
 * ([CP, CP]) prices each tile's non-empty rows from the base tiles' rows
 * (hand-checked; more in test_stat_tiledfmt.c); what stat cannot price is
 * refused with its reason. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_data.h"
#include "test_specs.h"

static void data_of(tessel_workload_data *d, tessel_tensor *a, tessel_tensor *b)
{
    test_spmspm_data(d, a, b);
}

static tessel_stat_options full_sample(void)
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1;
    return o;
}

static void assert_same(const tessel_result *x, const tessel_result *s, const char *what)
{
    for (unsigned l = 0; l < x->nlevels; l++)
        for (unsigned t = 0; t < x->ntensors; t++) {
            const tessel_traffic *a = &x->traffic[l][t], *b = &s->traffic[l][t];
            ck_assert_msg(a->fills == b->fills && a->data_bytes == b->data_bytes &&
                              a->metadata_bytes == b->metadata_bytes &&
                              a->writebacks == b->writebacks,
                          "%s level %u tensor %u: exact %llu fills %llu+%llu B, stat %llu fills "
                          "%llu+%llu B",
                          what, l, t, (unsigned long long)a->fills,
                          (unsigned long long)a->data_bytes, (unsigned long long)a->metadata_bytes,
                          (unsigned long long)b->fills, (unsigned long long)b->data_bytes,
                          (unsigned long long)b->metadata_bytes);
        }
    ck_assert_uint_eq(x->dram_bytes, s->dram_bytes);
    ck_assert_uint_eq(x->compulsory_bytes, s->compulsory_bytes);
}

/* One 4x4 tile of A holding 3 nonzeros (rows 0, 1 and 3), 12-bit values,
 * 8-bit coordinates, in [UB, CP]: rank 0 a 4-bit mask that stores all 4
 * rows, rank 1 a coordinate per nonzero (3 x 8 bits); with csr's 5 offsets
 * instead ([UOP, CP]) 5 x 8 + 24 bits. Data 3 x 12 = 36 bits: 5 bytes.
 * Metadata: [UB, CP] ceil(28 / 8) = 4 bytes, [UOP, CP] 8 bytes. (Rounding
 * the total instead, ceil(64 / 8) - 5 = 3, would be a byte short.) */
START_TEST(hand_example_one_tile)
{
    static const uint32_t ea[3][2] = { { 0, 0 }, { 1, 2 }, { 3, 3 } };
    static const uint32_t eb[4][2] = { { 0, 1 }, { 2, 0 }, { 1, 3 }, { 3, 2 } };
    tessel_tensor *a = test_coo_matrix(4, 4, 0, ea, 3), *b = test_coo_matrix(4, 4, 0, eb, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_stat_options o = full_sample();
    o.base[0] = o.base[1] = 2;
    static const unsigned char r0[2] = { TESSEL_RANK_UB, TESSEL_RANK_UOP };
    static const uint64_t meta[2] = { 4, 8 };
    for (unsigned q = 0; q < 2; q++) {
        tessel_spec s;
        test_spec_spmspm(&s, "IJK", 4, 4, 4, 1, 12, 8);
        test_set_ranks(&s.level[1].tensor[1], r0[q], TESSEL_RANK_CP);
        tessel_result r, x;
        tessel_diag diag;
        ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &r, &diag) == 0, "%s", diag.message);
        ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &x, &diag), 0);
        const tessel_traffic *t = &r.traffic[1][1];
        ck_assert_uint_eq(t->fills, 1);
        ck_assert_uint_eq(t->data_bytes, 5);
        ck_assert_uint_eq(t->metadata_bytes, meta[q]);
        assert_same(&x, &r, q ? "[UOP, CP]" : "[UB, CP]");
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* The tile above in [CP, CP]: rank 0 keeps a coordinate and an offset per
 * non-empty row and one more offset, rank 1 a coordinate per nonzero.
 * Exact counts 3 rows: 3 x 16 + 8 + 3 x 8 = 80 bits, 10 bytes. stat reads
 * them from the 2 x 2 base tiles' rows (src/model/stat_tiledfmt.c): strip
 * 0's two tiles (rows 0 and 1) are its whole width, 2 rows, strip 1's one
 * tile 1 row: 3, 10 bytes. (From the tile's 3 nonzeros alone, as without
 * the rows statistic, it would expect 4 (1 - (3/4)^3) = 2.3125 rows: 69
 * bits, 9 bytes.) */
START_TEST(hand_example_estimated_rows)
{
    static const uint32_t ea[3][2] = { { 0, 0 }, { 1, 2 }, { 3, 3 } };
    static const uint32_t eb[4][2] = { { 0, 1 }, { 2, 0 }, { 1, 3 }, { 3, 2 } };
    tessel_tensor *a = test_coo_matrix(4, 4, 0, ea, 3), *b = test_coo_matrix(4, 4, 0, eb, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_stat_options o = full_sample();
    o.base[0] = o.base[1] = 2;
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 4, 4, 4, 1, 12, 8);
    test_set_ranks(&s.level[1].tensor[1], TESSEL_RANK_CP, TESSEL_RANK_CP);
    tessel_result r, x;
    tessel_diag diag;
    ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &r, &diag) == 0, "%s", diag.message);
    ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &x, &diag), 0);
    ck_assert_uint_eq(r.traffic[1][1].data_bytes, 5);
    ck_assert_uint_eq(r.traffic[1][1].metadata_bytes, 10);
    ck_assert_uint_eq(x.traffic[1][1].data_bytes, 5);
    ck_assert_uint_eq(x.traffic[1][1].metadata_bytes, 10);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

static const char *const orders[6] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };

/* The lists that read no prefix count against exact on 96x80 by 80x72 banded matrices, in
 * every order at two tile shapes, at one buffer level and under a nested
 * PE level that holds B in the same list. */
START_TEST(affine_lists_equal_exact)
{
    tessel_tensor *a = test_band_matrix(96, 80, 1, 3, 7), *b = test_band_matrix(80, 72, 2, 3, 7);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_stat_options o = full_sample();
    /* the last two: inputs only (the output keeps csr) */
    static const unsigned char lists[6][2] = {
        { TESSEL_RANK_UB, TESSEL_RANK_CP },  { TESSEL_RANK_UOP, TESSEL_RANK_B },
        { TESSEL_RANK_UOP, TESSEL_RANK_RLE }, { TESSEL_RANK_B, TESSEL_RANK_CP },
        { TESSEL_RANK_UOP, TESSEL_RANK_UB }, { TESSEL_RANK_UB, TESSEL_RANK_UB },
    };
    static const uint64_t shapes[2][3] = { { 32, 16, 24 }, { 0, 40, 16 } };
    for (unsigned f = 0; f < 6; f++)
        for (unsigned n = 0; n < 2; n++)
            for (unsigned q = 0; q < 6; q++)
                for (unsigned nested = 0; nested < 2; nested++) {
                    tessel_spec s;
                    test_spec_spmspm(&s, orders[q], shapes[n][0], shapes[n][1], shapes[n][2],
                                     1, 32, 16);
                    s.level[1].run_bits = 8;
                    for (unsigned t = f < 4 ? 0 : 1; t < 3; t++)
                        test_set_ranks(&s.level[1].tensor[t], lists[f][0], lists[f][1]);
                    if (nested) {
                        test_spec_nest(&s, "PE", 8);
                        s.level[2].tensor[0].format = -1;
                        s.level[2].tensor[1].format = -1;
                    }
                    tessel_result r, x;
                    tessel_diag diag;
                    ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &r, &diag) == 0, "%s",
                                  diag.message);
                    ck_assert_msg(tessel_model_exact(&s, &d, NULL, &x, &diag) == 0, "%s",
                                  diag.message);
                    char what[96];
                    snprintf(what, sizeof(what), "list %u shape %u %s nested %u", f, n,
                             orders[q], nested);
                    assert_same(&x, &r, what);
                }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* What stat cannot price from the statistics, refused with the reason (an
 * uncompressed output is priced: test_stat_dense.c). */
START_TEST(refuses_with_reason)
{
    tessel_tensor *a = test_band_matrix(64, 64, 3, 3, 7);
    tessel_workload_data d;
    data_of(&d, a, a);
    static const struct {
        unsigned t;
        unsigned char r0, r1;
        int skip;
        const char *reason;
    } cases[] = {
        { 0, TESSEL_RANK_CP, TESSEL_RANK_CP, 0, "needs each output tile's non-empty rows" },
        { 1, TESSEL_RANK_CP, TESSEL_RANK_CP, 1, "prices scalar skipping and gating with a" },
    };
    for (unsigned q = 0; q < sizeof(cases) / sizeof(cases[0]); q++) {
        tessel_spec s;
        test_spec_spmspm(&s, "IJK", 16, 16, 16, 1, 32, 32);
        test_set_ranks(&s.level[1].tensor[cases[q].t], cases[q].r0, cases[q].r1);
        if (cases[q].skip)
            s.level[1].tensor[1].sparse.scalar_skip_on = 4u; /* A on B */
        tessel_result r;
        tessel_diag diag;
        ck_assert_int_eq(tessel_model_stat(&s, &d, NULL, NULL, &r, &diag), TESSEL_EUNSUPPORTED);
        ck_assert_msg(strstr(diag.message, cases[q].reason), "case %u: %s", q, diag.message);
        ck_assert_str_eq(diag.field, "format");
    }
    tessel_tensor_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stat_ranks");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, hand_example_one_tile);
    tcase_add_test(tc, hand_example_estimated_rows);
    tcase_add_test(tc, affine_lists_equal_exact);
    tcase_add_test(tc, refuses_with_reason);
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

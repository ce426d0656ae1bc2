/* The input merge walks of nested boundaries (src/model/stat_nested_merge.c)
 * on a grid too wide for the bitset walks that the group walks replaced:
 * their old budget (rows x columns x words of k) left the runs as upper
 * bounds there, while the group walks cost X's tiles times a partner
 * row's words (docs/models/stat.md, "Input merge walks within their own
 * cost"). */
#include <check.h>
#include <stdlib.h>

#include "nested_points.h"
#include "test_data.h"
#include "tessel/model.h"

/* An 8192 x 8192 band of 2 with a few hundred random entries as A x A,
 * tiles of 4, 2 and 1 under order at three unbounded levels, statistics on
 * a base grid of 1 with the whole output sample. The innermost boundary's
 * walk read 8192 x 8192 x 128 words under the old budget (past its 2^26),
 * level 2's 2048 x 2048 x 64; the group walks read some 20,000 tiles x
 * 128 words. Before, A's fills at level 2 were 38,304 against exact's
 * 33,922 under IJK (38,596 against 34,214 under JIK). */
static void inputs_equal_exact(const char *order)
{
    tessel_tensor *a = synthetic_banded(8192, 8192, 4e-6, 23, 2);
    tessel_workload_data d;
    tessel_spec s;
    tessel_stat_options o;
    test_spmspm_data(&d, a, a);
    test_spec_spmspm(&s, order, 4, 4, 4, 1, 64, 32);
    const uint64_t t2[3] = { 2, 2, 2 }, t3[3] = { 1, 1, 1 };
    add_level(&s, 2, t2, order, "PEB");
    add_level(&s, 3, t3, order, "REG");
    for (unsigned l = 1; l < 4; l++)
        s.level[l].capacity = 0;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 1;
    o.output_fraction = 1;
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s, &d, &o, NULL, &stats, &diag) == 0, "%s",
                  diag.message);
    tessel_result st, ex;
    ck_assert_msg(tessel_model_stat_eval(&s, stats, &st, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_exact(&s, &d, NULL, &ex, &diag) == 0, "%s", diag.message);
    for (unsigned l = 1; l < 4; l++)
        for (unsigned t = 1; t < 3; t++) {
            const tessel_traffic *x = &ex.traffic[l][t], *y = &st.traffic[l][t];
            ck_assert_msg(x->fills == y->fills && x->in_data == y->in_data,
                          "%s level %u tensor %u: fills %llu bytes %llu, exact %llu %llu", order,
                          l, t, (unsigned long long)y->fills, (unsigned long long)y->in_data,
                          (unsigned long long)x->fills, (unsigned long long)x->in_data);
        }
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&a);
}

/* A's walk by rows (level order (o, f, k)), B's by outer products ((f, o, k)). */
START_TEST(wide_grid_ijk)
{
    inputs_equal_exact("IJK");
}
END_TEST

/* The same walks with A and B's roles swapped. */
START_TEST(wide_grid_jik)
{
    inputs_equal_exact("JIK");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stat_nested_merge");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, wide_grid_ijk);
    tcase_add_test(tc, wide_grid_jik);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *r = srunner_create(suite());
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* The output's runs at nested boundaries (src/model/stat_nested_out.c)
 * when a splitting k digit's prefix space is too large for dense tables:
 * the split keeps only the prefixes that hold a group, and Z's updates,
 * write-backs and bytes at every level equal the exact estimator's
 * (docs/models/stat.md, "Sparse prefix tables for Z's runs"). */
#include <check.h>
#include <stdlib.h>

#include "nested_points.h"
#include "test_alloc.h"
#include "test_stat_oom.h"
#include "test_data.h"
#include "tessel/model.h"

/* The tests' setting: an n x n band of 2 (density, seed) as A x A, tiles
 * of 4, 2 and 1 under IJK at three unbounded levels (no spill: the runs
 * alone), and statistics on a base grid of 1 with the whole output sample. */
static tessel_tensor *band_three_levels(uint64_t n, double density, uint64_t seed,
                                        tessel_workload_data *d, tessel_spec *s,
                                        tessel_stat_options *o)
{
    tessel_tensor *a = synthetic_banded(n, n, density, seed, 2);
    test_spmspm_data(d, a, a);
    test_spec_spmspm(s, "IJK", 4, 4, 4, 1, 64, 32);
    const uint64_t t2[3] = { 2, 2, 2 }, t3[3] = { 1, 1, 1 };
    add_level(s, 2, t2, "IJK", "PEB");
    add_level(s, 3, t3, "IJK", "REG");
    for (unsigned l = 1; l < 4; l++)
        s->level[l].capacity = 0;
    tessel_stat_options_init(o);
    o->base[0] = o->base[1] = 1;
    o->output_fraction = 1;
    return a;
}

/* An 8192 x 8192 band of 2 with a few hundred random entries, tiles of 4,
 * 2 and 1 under IJK at three levels: the k digit of level 1 splits runs
 * over (8192 / 4)^3 = 2^33 prefixes (past the dense tables' 2^24), level
 * 2's over 2^36, while the groups are some tens of thousands. Before the
 * sparse tables the runs fell back to bounds: LLB Z updates 6, exact 138. */
START_TEST(sparse_prefixes_equal_exact)
{
    tessel_workload_data d;
    tessel_spec s;
    tessel_stat_options o;
    tessel_tensor *a = band_three_levels(8192, 4e-6, 21, &d, &s, &o);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s, &d, &o, NULL, &stats, &diag) == 0, "%s",
                  diag.message);
    tessel_result st, ex;
    ck_assert_msg(tessel_model_stat_eval(&s, stats, &st, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_exact(&s, &d, NULL, &ex, &diag) == 0, "%s", diag.message);
    /* runs that the digits split: updates at the inner levels */
    ck_assert(ex.traffic[2][0].updates > 0 && ex.traffic[3][0].updates > 0);
    for (unsigned l = 1; l < 4; l++) {
        const tessel_traffic *x = &ex.traffic[l][0], *y = &st.traffic[l][0];
        ck_assert_msg(x->updates == y->updates && x->writebacks == y->writebacks,
                      "level %u: Z updates %llu / write-backs %llu, exact %llu / %llu", l,
                      (unsigned long long)y->updates, (unsigned long long)y->writebacks,
                      (unsigned long long)x->updates, (unsigned long long)x->writebacks);
        ck_assert_msg(x->in_data == y->in_data && x->out_data == y->out_data,
                      "level %u: Z bytes in %llu out %llu, exact %llu %llu", l,
                      (unsigned long long)y->in_data, (unsigned long long)y->out_data,
                      (unsigned long long)x->in_data, (unsigned long long)x->out_data);
    }
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&a);
}
END_TEST

/* A 2048 x 2048 band under the same tiles (2^27 prefixes at level 1's k
 * digit): failing each allocation of the estimate in turn
 * (test_stat_eval_fail_each), it returns TESSEL_ENOMEM and frees
 * everything, or exactly the unfailed result. */
START_TEST(sparse_prefixes_out_of_memory)
{
    tessel_workload_data d;
    tessel_spec s;
    tessel_stat_options o;
    tessel_tensor *a = band_three_levels(2048, 2e-5, 22, &d, &s, &o);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_diag diag;
    tessel_stat_data *stats = test_stat_create_through(&s, &d, &o, &ta);
    tessel_result want, ex, r;
    ck_assert_int_eq(tessel_model_stat_eval(&s, stats, &want, &diag), 0);
    ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &ex, &diag), 0);
    ck_assert_uint_eq(want.traffic[3][0].writebacks, ex.traffic[3][0].writebacks);
    ck_assert_int_gt(test_stat_eval_fail_each(&s, stats, &ta, &r), 0);
    test_stat_assert_same(&r, &want, 0);
    tessel_stat_data_free(&stats);
    ck_assert_int_eq(ta.live, 0);
    tessel_tensor_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stat_nested_prefix");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, sparse_prefixes_equal_exact);
    tcase_add_test(tc, sparse_prefixes_out_of_memory);
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

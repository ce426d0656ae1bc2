/* Statistics without the data they came from (tessel_stat_data_drop_tensors,
 * tessel_workload_drop_tensors; tessel run -e stat frees the tensors before
 * its estimate): after the statistics let go of the tensors and those are
 * freed, every design point prices as before, byte for byte (under the
 * sanitizers a read of a freed tensor fails the test), and the workload
 * data keeps its labels and extents. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_specs.h"
#include "test_data.h"
#include "test_synthetic.h"

static const char *const orders[6] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };

#define POINTS 24

/* Point p's spec: a loop order and tiles (multiples of the base 8, or the
 * whole extent) drawn from r. */
static void point_spec(rng *r, uint64_t n, tessel_spec *s)
{
    uint64_t e[3];
    for (unsigned x = 0; x < 3; x++) {
        e[x] = UINT64_C(8) << below(r, 5);
        if (e[x] >= n || below(r, 5) == 0)
            e[x] = n;
    }
    test_spec_spmspm(s, orders[below(r, 6)], e[0], e[1], e[2], (int)below(r, 3), 64, 32);
    s->level[1].capacity = (UINT64_C(8) << 10) << below(r, 8);
}

static void evaluate_all(const tessel_stat_data *stats, uint64_t n, tessel_result *out, int *rc)
{
    rng r = { 12345 };
    for (int p = 0; p < POINTS; p++) {
        tessel_spec s;
        point_spec(&r, n, &s);
        tessel_diag d;
        rc[p] = tessel_model_stat_eval(&s, stats, &out[p], &d);
        out[p].seconds = 0;
        out[p].stats_seconds = 0;
    }
}

START_TEST(points_equal_after_the_tensors_go)
{
    const uint64_t n = 300;
    tessel_tensor *a = synthetic_banded(n, n, 0.01, 7, 4);
    tessel_tensor *b = synthetic_banded(n, n, 0.02, 8, 2);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 8, 8, 8, 1, 64, 32);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 8;
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s, &d, &o, NULL, &stats, &diag) == 0, "%s",
                  diag.message);
    tessel_result *before = calloc(POINTS, sizeof(*before));
    tessel_result *after = calloc(POINTS, sizeof(*after));
    int rc0[POINTS], rc1[POINTS], priced = 0;
    ck_assert_ptr_nonnull(before);
    ck_assert_ptr_nonnull(after);
    evaluate_all(stats, n, before, rc0);
    tessel_stat_data_drop_tensors(stats);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    evaluate_all(stats, n, after, rc1);
    for (int p = 0; p < POINTS; p++) {
        ck_assert_int_eq(rc0[p], rc1[p]);
        priced += rc0[p] == 0;
        if (!rc0[p])
            ck_assert_msg(memcmp(&before[p], &after[p], sizeof(before[p])) == 0,
                          "point %d: dram %llu before, %llu after", p,
                          (unsigned long long)before[p].dram_bytes,
                          (unsigned long long)after[p].dram_bytes);
    }
    ck_assert_int_ge(priced, POINTS / 2);
    tessel_stat_data_free(&stats);
    free(before);
    free(after);
}
END_TEST

/* The workload data after tessel_workload_drop_tensors: no tensor, its
 * own ones freed (LeakSanitizer would see them otherwise), the label and
 * extents as before; twice is harmless. */
START_TEST(workload_keeps_labels_and_extents)
{
    tessel_workload_data *w = calloc(1, sizeof(*w));
    ck_assert_ptr_nonnull(w);
    w->ntensors = 3;
    w->tensor[1] = synthetic_banded(40, 30, 0.05, 3, 2);
    w->tensor[2] = w->tensor[1];
    w->owned[1] = 1;
    snprintf(w->label[1], sizeof(w->label[1]), "left");
    snprintf(w->label[2], sizeof(w->label[2]), "left");
    w->extent[0] = 40;
    w->extent[1] = 30;
    w->extent[2] = 30;
    char before[256], after[256];
    tessel_workload_data_label(w, before, sizeof(before));
    tessel_workload_drop_tensors(w);
    tessel_workload_drop_tensors(w);
    for (unsigned t = 0; t < 3; t++) {
        ck_assert_ptr_null(w->tensor[t]);
        ck_assert_int_eq(w->owned[t], 0);
    }
    tessel_workload_data_label(w, after, sizeof(after));
    ck_assert_str_eq(before, after);
    ck_assert_uint_eq(w->extent[0], 40);
    ck_assert_uint_eq(w->extent[2], 30);
    tessel_workload_free(&w);
    ck_assert_ptr_null(w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_drop");
    TCase *tc = tcase_create("stat_drop");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, points_equal_after_the_tensors_go);
    tcase_add_test(tc, workload_keeps_labels_and_extents);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

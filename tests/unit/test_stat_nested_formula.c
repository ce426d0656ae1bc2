/* The nested formula (src/model/stat_nested_formula.c, `--nested-formula`)
 * at 3 and 4 levels (2 and 3 buffer levels) on random points: where it
 * prices a point (tessel_result.stat_nested_formula), DRAM and level 1's
 * boundary are the full path's (it prices only the nested boundaries), the
 * effectual iterations and intersections are the full path's, B's fills at
 * nested levels bound the full path's (which equal exact's: runs before
 * merges) and A's stay above 0.8 of them (a merge chance), and the bytes
 * into every nested level stay within 35 % of the full path's (the worst
 * distance from the exact estimator is printed); the formula off, results
 * are the full path's; out of memory anywhere, it fails cleanly. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "nested_points.h"
#include "test_alloc.h"
#include "test_stat_oom.h"
#include "test_data.h"
#include "test_specs.h"

static double level_bytes(const tessel_result *r, unsigned l)
{
    double sum = 0;
    for (unsigned t = 0; t < 3; t++) {
        const tessel_traffic *x = &r->traffic[l][t];
        sum += (double)(x->in_data + x->in_metadata + x->out_data + x->out_metadata);
    }
    return sum;
}

/* One priced point against the full path and exact. */
static void check_point(const tessel_spec *s, const tessel_result *full, const tessel_result *form,
                        const tessel_result *exact, int p, double *worst)
{
    /* DRAM and what crosses level 1's own boundary; its reads by level 2
     * follow level 2's fills */
    ck_assert_msg(!memcmp(full->traffic[0], form->traffic[0], sizeof(full->traffic[0])),
                  "point %d: DRAM moved", p);
    for (unsigned t = 0; t < 3; t++) {
        const tessel_traffic *x = &full->traffic[1][t], *y = &form->traffic[1][t];
        ck_assert_msg(x->fills == y->fills && x->updates == y->updates &&
                          x->writebacks == y->writebacks && x->in_data == y->in_data &&
                          x->in_metadata == y->in_metadata && x->out_data == y->out_data &&
                          x->out_metadata == y->out_metadata,
                      "point %d: level 1's boundary moved (tensor %u)", p, t);
    }
    ck_assert_uint_eq(full->intersections, form->intersections);
    for (unsigned b = 2; b < s->nlevels; b++) {
        ck_assert_uint_eq(full->effectual_tiles[b], form->effectual_tiles[b]);
        /* B's runs before merges bound the full path's (exact) fills; A's take
         * off a chance of merging, which may take off a little too much */
        const tessel_traffic *fa = &form->traffic[b][1], *xa = &full->traffic[b][1];
        const tessel_traffic *fb = &form->traffic[b][2], *xb = &full->traffic[b][2];
        ck_assert_msg(fb->fills >= xb->fills, "point %d, level %u: B %llu fills under %llu", p,
                      b, (unsigned long long)fb->fills, (unsigned long long)xb->fills);
        ck_assert_msg((double)fa->fills >= 0.8 * (double)xa->fills,
                      "point %d, level %u: A %llu fills under 0.8 x %llu", p, b,
                      (unsigned long long)fa->fills, (unsigned long long)xa->fills);
        /* the full path's own distance from exact (formats, rule 4) is the
         * estimator's, not the formula's: the formula is held to the full
         * path, and its distance from exact is reported */
        double e = level_bytes(exact, b), f = level_bytes(form, b), x = level_bytes(full, b);
        double err = e > 0 ? fabs(f - e) / e : 0;
        *worst = err > *worst ? err : *worst;
        ck_assert_msg(fabs(f - x) <= 0.35 * x, "point %d, level %u: %.0f bytes against the full "
                      "path's %.0f (exact %.0f)", p, b, f, x, e);
    }
}

/* `points` random nested points three ways; returns how many the formula
 * priced. */
static int compare(tessel_tensor *a, const tessel_stat_options *o, int points, uint64_t seed)
{
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", o->base[0], o->base[0], o->base[0], 1, 64, 32);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s, &d, o, NULL, &stats, &diag) == 0, "%s",
                  diag.message);
    rng r = { seed };
    int priced = 0, deep = 0;
    double worst = 0;
    for (int p = 0; p < points; p++) {
        nested_point(&r, o->base[0], 1, &s);
        tessel_result full, form, again, exact;
        tessel_diag d1, d2, d3;
        tessel_stat_data_set_nested_formula(stats, 0);
        int rc1 = tessel_model_stat_eval(&s, stats, &full, &d1);
        tessel_stat_data_set_nested_formula(stats, 1);
        int rc2 = tessel_model_stat_eval(&s, stats, &form, &d2);
        tessel_stat_data_set_nested_formula(stats, 0);
        ck_assert_int_eq(rc1, rc2);
        if (rc1)
            continue;
        ck_assert_int_eq(full.stat_nested_formula, 0);
        ck_assert_int_eq(tessel_model_stat_eval(&s, stats, &again, &d1), 0);
        again.seconds = full.seconds = 0;
        ck_assert_msg(!memcmp(&full, &again, sizeof(full)), "point %d: the formula stayed on", p);
        if (!form.stat_nested_formula)
            continue;
        ck_assert_msg(tessel_model_exact(&s, &d, NULL, &exact, &d3) == 0, "%s", d3.message);
        check_point(&s, &full, &form, &exact, p, &worst);
        priced++;
        deep += s.nlevels > 3;
    }
    ck_assert_msg(deep > 0, "no 4-level point priced");
    printf("note: nested formula: %d of %d points priced, worst inner-level bytes against exact %.1f %%\n",
           priced, points, 100 * worst);
    tessel_stat_data_free(&stats);
    return priced;
}

START_TEST(formula_bounds_and_full_path)
{
    tessel_tensor *a = synthetic(400, 400, 0.02, 21);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 8;
    o.output_fraction = 1;
    int priced = compare(a, &o, 60, 22);
    ck_assert_msg(priced >= 30, "only %d of 60 points priced by the formula", priced);
    tessel_tensor_free(&a);
}
END_TEST

/* Fails each allocation of the point's evaluation in turn
 * (test_stat_eval_fail_each): ENOMEM or exactly the unfailed result,
 * nothing leaks, and with no failure the point is the one priced without
 * the test allocator. */
START_TEST(formula_out_of_memory_every_allocation)
{
    tessel_tensor *a = synthetic(300, 300, 0.02, 15);
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 16;
    o.output_fraction = 1;
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 64, 64, 64, 1, 64, 32);
    s.level[1].capacity = 1 << 20;
    uint64_t peb[3] = { 16, 32, 16 };
    add_level(&s, 2, peb, "IJK", "PEB");
    s.level[2].capacity = 1 << 16;
    tessel_diag diag;
    tessel_stat_data *plain = NULL;
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &plain, &diag), 0);
    tessel_stat_data_set_nested_formula(plain, 1);
    tessel_result want;
    ck_assert_msg(tessel_model_stat_eval(&s, plain, &want, &diag) == 0, "%s", diag.message);
    ck_assert_int_eq(want.stat_nested_formula, 1);
    tessel_stat_data_free(&plain);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_stat_data *stats = test_stat_create_through(&s, &d, &o, &ta);
    tessel_stat_data_set_nested_formula(stats, 1);
    tessel_result r;
    ck_assert_int_gt(test_stat_eval_fail_each(&s, stats, &ta, &r), 0);
    tessel_stat_data_free(&stats);
    ck_assert_int_eq(ta.live, 0);
    r.seconds = want.seconds = 0;
    r.stats_seconds = want.stats_seconds = 0;
    ck_assert_msg(!memcmp(&r, &want, sizeof(r)), "another result with the test allocator");
    tessel_tensor_free(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_nested_formula");
    TCase *tc = tcase_create("stat_nested_formula");
    tcase_set_timeout(tc, 280);
    tcase_add_test(tc, formula_bounds_and_full_path);
    tcase_add_test(tc, formula_out_of_memory_every_allocation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

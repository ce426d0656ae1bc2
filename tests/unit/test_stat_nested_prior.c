/* The nested prior's calibration (src/model/stat_nested_prior.c,
 * docs/models/stat.md "The prior calibrated on its own scale"): on a
 * banded matrix whose diagonal tiles' products collapse more than their
 * neighbours', the strata of the products gave the diagonal tiles too
 * large a share of their band, and rule 4's hinge turned it into twice
 * the spill at a 5 % output sample (bcsstk11, issue 18). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tessel/model.h"
#include "test_data.h"
#include "test_specs.h"

/* A stiffness-like matrix: a w x h grid of nodes, dof unknowns each, every
 * unknown coupled with those of its node and its 8 neighbours (a 9-point
 * stencil in blocks), rows in node order. A's square keeps a band whose
 * 64-row diagonal tiles hold barely more nonzeros than their neighbours
 * from twice the products (bcsstk11's shape). */
static tessel_tensor *stencil(uint32_t w, uint32_t h, uint32_t dof)
{
    uint64_t n = (uint64_t)w * h * dof, dims[2] = { n, n };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int64_t yy = (int64_t)y + dy, xx = (int64_t)x + dx;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w)
                        continue;
                    for (uint32_t p = 0; p < dof * dof; p++) {
                        uint32_t e[2] = { (y * w + x) * dof + p / dof,
                                          (uint32_t)(yy * w + xx) * dof + p % dof };
                        ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
                    }
                }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

/* bench/stat_accuracy.py's shape 7 at 2 levels, KIJ at both (csr, 64-bit
 * values, 32-bit coordinates): LLB 1024 x 128 x 1024, PEB 64 x 16 x 64, the
 * PEB's Z partition `part` bytes. */
static void spec_shape7(tessel_spec *s, uint64_t part)
{
    test_spec_spmspm(s, "KIJ", 1024, 128, 1024, 1, 64, 32);
    test_spec_nest(s, "PEB", 64);
    s->level[2].tile[2] = 16;
    s->level[2].tensor[0].partition_bytes = part;
}

static uint64_t peb_z_bumped(const tessel_spec *s, const tessel_workload_data *d, uint64_t seed,
                             int exact)
{
    tessel_result r;
    tessel_diag diag;
    if (exact) {
        ck_assert_msg(tessel_model_exact(s, d, NULL, &r, &diag) == 0, "%s", diag.message);
        return r.traffic[2][0].bumped_bytes;
    }
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 0.05;
    o.output_min_flops = 0;
    o.seed = seed;
    ck_assert_msg(tessel_model_stat(s, d, &o, NULL, &r, &diag) == 0, "%s", diag.message);
    return r.traffic[2][0].bumped_bytes;
}

/* The PEB's Z spill at a 5 % sample, seeds 1-4, against exact: +141 %
 * on average (+106 to +184 %) before the calibration, +39 to +60 % with it
 * (the whole sample: -5.6 %, the closed form's own). */
START_TEST(banded_spill_at_five_percent)
{
    tessel_tensor *a = stencil(16, 21, 3);
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    tessel_spec s;
    spec_shape7(&s, 15000);
    double x = (double)peb_z_bumped(&s, &d, 0, 1), mean = 0;
    ck_assert(x > 0);
    for (uint64_t seed = 1; seed <= 4; seed++) {
        double e = (double)peb_z_bumped(&s, &d, seed, 0) / x - 1;
        printf("banded spill, seed %llu: exact %.0f, error %+.1f %%\n", (unsigned long long)seed,
               x, 100 * e);
        ck_assert_msg(e > -0.5 && e < 1.0, "seed %llu: error %+.3f", (unsigned long long)seed, e);
        mean += e / 4;
    }
    ck_assert_msg(mean < 0.75, "mean error %+.3f", mean);
    tessel_tensor_free(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_nested_prior");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, banded_spill_at_five_percent);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

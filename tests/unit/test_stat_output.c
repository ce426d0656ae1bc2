/* The stat estimator's output sample (issue 18, point 3): with a sample
 * that covers a few percent of the multiplies of a clustered, skewed graph
 * (products collapsing onto few outputs in hub rows), the estimate of the
 * output's nonzeros and of Z's DRAM bytes must be unbiased over seeds, its
 * standard error must describe its spread, and the draw in proportion to
 * multiplies (output_legacy) must show the bias this replaces. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/model.h"
#include "test_data.h"
#include "test_specs.h"

#define SEEDS 12

static tessel_tensor *clustered(uint64_t n, uint64_t cliques, uint64_t tail, double skew,
                                uint64_t seed)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_CLUSTERED);
    p.rows = p.cols = n;
    p.cliques = cliques;
    p.tail = tail;
    p.skew = skew;
    p.seed = seed;
    p.values = 0;
    tessel_tensor *t = NULL;
    tessel_diag d;
    ck_assert_msg(tessel_generate(&p, NULL, &t, &d) == 0, "%s", d.message);
    return t;
}

static void data_of(tessel_workload_data *d, tessel_tensor *a)
{
    test_spmspm_data(d, a, a);
}

static tessel_result run_stat(const tessel_spec *s, const tessel_workload_data *d,
                              double fraction, uint64_t seed, int legacy)
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = fraction;
    o.output_min_flops = 0;
    o.seed = seed;
    o.output_legacy = legacy;
    /* the sketches' covariate: rule 3's exact rows' counts would make the
     * output nonzeros exact (exact_rows_make_the_nonzeros_exact) */
    o.output_count_budget = 0;
    tessel_result r;
    tessel_diag diag;
    ck_assert_msg(tessel_model_stat(s, d, &o, NULL, &r, &diag) == 0, "%s", diag.message);
    return r;
}

static double z_dram(const tessel_result *r)
{
    return (double)(r->traffic[0][0].data_bytes + r->traffic[0][0].metadata_bytes);
}

typedef struct spread {
    double mean, worst, covered; /* mean and worst relative error; share within 2.5 stderr */
} spread;

/* Relative errors of output_nnz and Z's DRAM bytes over SEEDS seeds. */
static void measure(const tessel_spec *s, const tessel_workload_data *d, double fraction,
                    int legacy, spread *nnz, spread *zb)
{
    tessel_result x;
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_exact(s, d, NULL, &x, &diag), 0);
    memset(nnz, 0, sizeof(*nnz));
    memset(zb, 0, sizeof(*zb));
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        tessel_result r = run_stat(s, d, fraction, seed, legacy);
        double e = (double)r.output_nnz / (double)x.output_nnz - 1;
        double ez = z_dram(&r) / z_dram(&x) - 1;
        nnz->mean += e / SEEDS;
        zb->mean += ez / SEEDS;
        nnz->worst = fabs(e) > nnz->worst ? fabs(e) : nnz->worst;
        zb->worst = fabs(ez) > zb->worst ? fabs(ez) : zb->worst;
        ck_assert_int_eq(r.output_nnz_has_stderr, !legacy);
        if (!legacy) {
            ck_assert(r.output_nnz_stderr > 0);
            nnz->covered +=
                fabs((double)r.output_nnz - (double)x.output_nnz) <= 2.5 * r.output_nnz_stderr;
        }
    }
    nnz->covered /= SEEDS;
}

START_TEST(unbiased_where_the_sample_covers_little)
{
    /* hubs in many cliques: their rows' products collapse the most */
    tessel_tensor *a = clustered(12000, 9000, 6000, 1.0, 3);
    tessel_workload_data d;
    data_of(&d, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", 256, 256, 256, 1, 64, 32);
    spread n_new, z_new, n_old, z_old;
    measure(&s, &d, 0.03, 0, &n_new, &z_new);
    measure(&s, &d, 0.03, 1, &n_old, &z_old);
    printf("nnz: new mean %+.2f %% worst %.2f %% covered %.2f; old mean %+.2f %% worst %.2f %%\n",
           100 * n_new.mean, 100 * n_new.worst, n_new.covered, 100 * n_old.mean,
           100 * n_old.worst);
    printf("Z DRAM: new mean %+.2f %% worst %.2f %%; old mean %+.2f %% worst %.2f %%\n",
           100 * z_new.mean, 100 * z_new.worst, 100 * z_old.mean, 100 * z_old.worst);
    ck_assert_msg(fabs(n_new.mean) < 0.02, "nnz mean error %g", n_new.mean);
    ck_assert_msg(n_new.worst < 0.06, "nnz worst error %g", n_new.worst);
    ck_assert_msg(n_new.covered >= 0.75, "within 2.5 stderr: %g", n_new.covered);
    ck_assert_msg(fabs(z_new.mean) < 0.03, "Z bytes mean error %g", z_new.mean);
    /* the draw it replaces is measurably worse on this graph */
    ck_assert_msg(n_old.worst > 2 * n_new.worst, "old worst %g, new %g", n_old.worst,
                  n_new.worst);
    tessel_tensor_free(&a);
}
END_TEST

START_TEST(stderr_zero_when_whole_and_kept_when_saved)
{
    tessel_tensor *a = clustered(3000, 1500, 500, 0.8, 5);
    tessel_workload_data d;
    data_of(&d, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 128, 128, 128, 1, 64, 32);
    tessel_result x, r = run_stat(&s, &d, 1, 1, 0);
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &x, &diag), 0);
    ck_assert_uint_eq(r.output_nnz, x.output_nnz);
    ck_assert_int_eq(r.output_nnz_has_stderr, 1);
    ck_assert(r.output_nnz_stderr == 0);
    ck_assert_int_eq(x.output_nnz_has_stderr, 0);

    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 0.05;
    o.output_min_flops = 0;
    o.output_count_budget = 0; /* the sketches' covariate */
    tessel_stat_data *sd = NULL, *back = NULL;
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &sd, &diag), 0);
    double se = tessel_stat_data_output_nnz_stderr(sd);
    ck_assert(se > 0 && se < 0.2 * tessel_stat_data_output_nnz(sd));
    back = test_stat_reload(sd);
    ck_assert(tessel_stat_data_output_nnz_stderr(back) == se);
    tessel_result y;
    ck_assert_int_eq(tessel_model_stat_eval(&s, back, &y, &diag), 0);
    ck_assert(y.output_nnz_stderr == se);
    /* the legacy draw has no standard error */
    o.output_legacy = 1;
    tessel_stat_data_free(&sd);
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &sd, &diag), 0);
    ck_assert(tessel_stat_data_output_nnz_stderr(sd) == -1);
    tessel_stat_data_free(&sd);
    tessel_stat_data_free(&back);
    tessel_tensor_free(&a);
}
END_TEST

/* A sample of more multiplies than output_sample_max is refused before
 * any is made, naming the fraction; at the cap it runs. */
START_TEST(sample_past_its_cap_is_refused)
{
    tessel_tensor *a = clustered(3000, 1500, 500, 0.8, 5);
    tessel_workload_data d;
    data_of(&d, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 128, 128, 128, 1, 64, 32);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 0.5;
    o.output_min_flops = 0;
    double all = tessel_output_count_work(a, a, NULL);
    o.output_sample_max = 0.25 * all;
    tessel_stat_data *sd = NULL;
    tessel_diag diag;
    memset(&diag, 0, sizeof(diag));
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &sd, &diag), TESSEL_EINVAL);
    ck_assert_ptr_null(sd);
    ck_assert_ptr_nonnull(strstr(diag.message, "output fraction 0.5"));
    ck_assert_str_eq(diag.field, "output_fraction");
    o.output_sample_max = 0.5 * all;
    ck_assert_msg(tessel_stat_data_create(&s, &d, &o, NULL, &sd, &diag) == 0, "%s",
                  diag.message);
    tessel_stat_data_free(&sd);
    tessel_tensor_free(&a);
}
END_TEST

/* Within rule 3's count budget every row's output nonzeros are known: the
 * draw calibrates on them, so a 5 % sample's estimate is the exact count
 * with standard error 0, and saved statistics (.tsd 5) keep it. */
START_TEST(exact_rows_make_the_nonzeros_exact)
{
    tessel_tensor *a = clustered(3000, 1500, 500, 0.8, 5);
    tessel_workload_data d;
    data_of(&d, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", 128, 128, 128, 1, 64, 32);
    tessel_result x;
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &x, &diag), 0);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 0.05;
    o.output_min_flops = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        o.seed = seed;
        tessel_stat_data *sd = NULL, *back = NULL;
        ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &sd, &diag), 0);
        ck_assert(fabs(tessel_stat_data_output_nnz(sd) - (double)x.output_nnz) < 1e-6);
        ck_assert(tessel_stat_data_output_nnz_stderr(sd) == 0);
        back = test_stat_reload(sd);
        tessel_result r, y;
        ck_assert_int_eq(tessel_model_stat_eval(&s, sd, &r, &diag), 0);
        ck_assert_int_eq(tessel_model_stat_eval(&s, back, &y, &diag), 0);
        ck_assert_uint_eq(r.output_nnz, x.output_nnz);
        ck_assert(r.output_nnz_stderr == 0 && y.output_nnz_stderr == 0);
        ck_assert_uint_eq(y.traffic[0][0].data_bytes, r.traffic[0][0].data_bytes);
        tessel_stat_data_free(&sd);
        tessel_stat_data_free(&back);
    }
    tessel_tensor_free(&a);
}
END_TEST

/* A partial sample's cells (float weights, 32-bit group starts in memory,
 * doubles and 64-bit offsets in the .tsd) survive a save and a load: the
 * loaded statistics price every level and tensor exactly as the collected
 * ones, with drawn rows (weights g / p) and rows taken whole (weight 1). */
START_TEST(partial_sample_round_trips_through_tsd)
{
    tessel_tensor *a = clustered(3000, 1500, 500, 0.8, 7);
    tessel_workload_data d;
    data_of(&d, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", 128, 128, 128, 1, 64, 32);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 0.05;
    o.output_min_flops = 0;
    o.output_count_budget = 0; /* the sketches' covariate: weights not integers */
    tessel_stat_data *sd = NULL, *back = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &sd, &diag), 0);
    back = test_stat_reload(sd);
    tessel_result r, y;
    ck_assert_int_eq(tessel_model_stat_eval(&s, sd, &r, &diag), 0);
    ck_assert_int_eq(tessel_model_stat_eval(&s, back, &y, &diag), 0);
    ck_assert(r.output_nnz_stderr > 0);
    ck_assert_uint_eq(y.output_nnz, r.output_nnz);
    for (unsigned l = 0; l < TESSEL_SPEC_MAX_LEVELS; l++)
        for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
            ck_assert_uint_eq(y.traffic[l][t].data_bytes, r.traffic[l][t].data_bytes);
            ck_assert_uint_eq(y.traffic[l][t].metadata_bytes, r.traffic[l][t].metadata_bytes);
        }
    /* the estimate is the sample's: within 6 standard errors of the exact count */
    tessel_result x;
    ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &x, &diag), 0);
    ck_assert(fabs((double)r.output_nnz - (double)x.output_nnz) < 6 * r.output_nnz_stderr);
    tessel_stat_data_free(&sd);
    tessel_stat_data_free(&back);
    tessel_tensor_free(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_output");
    TCase *tc = tcase_create("stat_output");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, unbiased_where_the_sample_covers_little);
    tcase_add_test(tc, stderr_zero_when_whole_and_kept_when_saved);
    tcase_add_test(tc, exact_rows_make_the_nonzeros_exact);
    tcase_add_test(tc, sample_past_its_cap_is_refused);
    tcase_add_test(tc, partial_sample_round_trips_through_tsd);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

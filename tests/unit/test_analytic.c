/* The analytic estimator against the exact one on an instance of the same
 * density models (tessel_workload_load draws it): uniform, N:M and a Gram
 * product (B: A^T), every loop order, two tile shapes; and what it
 * refuses. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_specs.h"

static void spec_spmspm(tessel_spec *s, const char *order, uint64_t ti, uint64_t tk, uint64_t tj)
{
    test_spec_spmspm(s, order, ti, tk, tj, 1, 64, 32);
}

static void uniform(tessel_spec_tensor *t, uint64_t rows, uint64_t cols, uint64_t nnz,
                    uint64_t seed)
{
    t->model.present = 1;
    t->model.kind = TESSEL_DENSITY_UNIFORM;
    t->model.rows = rows;
    t->model.cols = cols;
    t->model.nnz = nnz;
    t->model.seed = seed;
}

static double rel(uint64_t est, uint64_t ref)
{
    return ref ? fabs((double)est / (double)ref - 1) : (double)est;
}

static const char *const orders[6] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };

/* The spec's workload from its density models. */
static tessel_workload_data *load(const tessel_spec *s)
{
    tessel_workload_data *d = NULL;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    ck_assert_int_eq(tessel_workload_load(s, NULL, NULL, &d, &errors), 0);
    tessel_diag_list_free(&errors);
    return d;
}

/* Every order and two shapes: DRAM bytes of A, B, Z and in all within
 * `tol`, the output's nonzeros and the multiplies within 2 %. */
static void check_against_exact(void (*bind)(tessel_spec *), double tol)
{
    static const uint64_t shapes[2][3] = { { 128, 128, 128 }, { 512, 256, 128 } };
    for (unsigned n = 0; n < 2; n++)
        for (unsigned q = 0; q < 6; q++) {
            tessel_spec s;
            spec_spmspm(&s, orders[q], shapes[n][0], shapes[n][1], shapes[n][2]);
            bind(&s);
            tessel_workload_data *d = load(&s);
            tessel_result x, r;
            tessel_diag diag;
            ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &x, &diag), 0);
            int rc = tessel_model_analytic(&s, NULL, &r, &diag);
            ck_assert_msg(rc == 0, "analytic: %s", diag.message);
            ck_assert_str_eq(r.estimator, "analytic");
            for (unsigned t = 0; t < 3; t++) {
                uint64_t e = x.traffic[0][t].data_bytes + x.traffic[0][t].metadata_bytes;
                uint64_t a = r.traffic[0][t].data_bytes + r.traffic[0][t].metadata_bytes;
                ck_assert_msg(rel(a, e) < tol, "%s shape %u tensor %u: exact %llu, analytic %llu",
                              orders[q], n, t, (unsigned long long)e, (unsigned long long)a);
            }
            ck_assert_msg(rel(r.dram_bytes, x.dram_bytes) < tol, "%s dram", orders[q]);
            ck_assert_msg(rel(r.output_nnz, x.output_nnz) < 0.02, "%s nnz(Z) %llu vs %llu",
                          orders[q], (unsigned long long)r.output_nnz,
                          (unsigned long long)x.output_nnz);
            ck_assert_msg(rel(r.macs, x.macs) < 0.02, "%s flops", orders[q]);
            tessel_workload_free(&d);
        }
}

static void bind_uniform(tessel_spec *s)
{
    uniform(&s->workload.tensor[1], 3000, 2500, 30000, 1);
    uniform(&s->workload.tensor[2], 2500, 2000, 12000, 2);
}

static void bind_gram(tessel_spec *s)
{
    uniform(&s->workload.tensor[1], 4000, 3000, 12000, 3);
    s->workload.tensor[2].data = "A^T";
}

static void bind_nm(tessel_spec *s)
{
    tessel_spec_tensor *a = &s->workload.tensor[1];
    a->model.present = 1;
    a->model.kind = TESSEL_DENSITY_NM;
    a->model.rows = 2048;
    a->model.cols = 2048;
    a->model.n = 2;
    a->model.m = 256;
    a->model.seed = 5;
    uniform(&s->workload.tensor[2], 2048, 2048, 20000, 6);
}

static void banded(tessel_spec_tensor *t, uint64_t n, uint64_t w, double d, uint64_t seed)
{
    t->model.present = 1;
    t->model.kind = TESSEL_DENSITY_BANDED;
    t->model.rows = t->model.cols = n;
    t->model.bandwidth = w;
    t->model.density = d;
    t->model.seed = seed;
}

static void bind_banded(tessel_spec *s)
{
    banded(&s->workload.tensor[1], 3000, 60, 0.3, 7);
    banded(&s->workload.tensor[2], 3000, 25, 0.5, 8);
}

static void bind_banded_gram(tessel_spec *s)
{
    banded(&s->workload.tensor[1], 3000, 40, 0.2, 9);
    s->workload.tensor[2].data = "A^T";
}

/* Rule 4 inside a visit, by hand (docs/semantics.md rule 4, the order
 * inside a tile): dense 4x4 A and B, COO with 8-bit values and
 * coordinates (3 bytes per nonzero), tiles i:2 k:4 j:2, Z's partition 4
 * bytes. Each of the 4 tile pairs is one visit of 4 steps (k = 0..3).
 * KIJ (outer product): the whole tile is live; after the first step every
 * cell is set (12 bytes), so the 3 steps before the last spill 12 - 4 = 8
 * bytes each: 4 x 3 x 8 = 96. IKJ (row-wise) and JKI: a row (column) of 2
 * cells is live, 6 bytes: 8 groups x 3 steps x 2 = 48. IJK (inner
 * product): one element (3 bytes) is live: 0. Exact and analytic alike
 * (q = ps = 1). */
START_TEST(output_spill_inside_visit)
{
    static const char *spill_orders[] = { "KIJ", "IKJ", "JKI", "IJK" };
    static const uint64_t bumped[] = { 96, 48, 48, 0 };
    for (unsigned q = 0; q < 4; q++) {
        tessel_spec s;
        test_spec_spmspm(&s, spill_orders[q], 2, 4, 2, 0, 8, 8);
        uniform(&s.workload.tensor[1], 4, 4, 16, 1);
        uniform(&s.workload.tensor[2], 4, 4, 16, 2);
        s.level[1].capacity = 1000;
        s.level[1].tensor[0].partition_bytes = 4;
        tessel_workload_data *d = load(&s);
        tessel_result x, r;
        tessel_diag diag;
        ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &x, &diag), 0);
        ck_assert_int_eq(tessel_model_analytic(&s, NULL, &r, &diag), 0);
        ck_assert_msg(x.traffic[1][0].bumped_bytes == bumped[q], "%s exact %llu", spill_orders[q],
                      (unsigned long long)x.traffic[1][0].bumped_bytes);
        ck_assert_msg(r.traffic[1][0].bumped_bytes == bumped[q], "%s analytic %llu", spill_orders[q],
                      (unsigned long long)r.traffic[1][0].bumped_bytes);
        ck_assert_uint_eq(r.traffic[1][0].overflow_bytes, 2 * bumped[q]);
        tessel_workload_free(&d);
    }
}
END_TEST

/* Rule 4 per read of the compute (docs/semantics.md rule 4, "The compute's
 * reads"): dense 4x4 operands (16 nonzeros, COO: 48 bytes), one tile,
 * A's and B's partitions 40 bytes (8 bumped). The compute reads A 4 times
 * under IJK/JIK (a row per column of B) and JKI/KJI (a column k per
 * nonzero of B's row k), once under IKJ/KIJ; B mirrored. Bumped
 * (4 - 1) x 8 = 24 or 0, in exact and analytic alike. */
START_TEST(compute_reads_in_order)
{
    static const uint64_t ba[6] = { 24, 0, 0, 24, 24, 24 }; /* orders[]: IJK IKJ KIJ JIK JKI KJI */
    static const uint64_t bb[6] = { 24, 24, 24, 24, 0, 0 };
    for (unsigned q = 0; q < 6; q++) {
        tessel_spec s;
        test_spec_spmspm(&s, orders[q], 4, 4, 4, 0, 8, 8);
        uniform(&s.workload.tensor[1], 4, 4, 16, 1);
        uniform(&s.workload.tensor[2], 4, 4, 16, 2);
        s.level[1].capacity = 1000;
        s.level[1].tensor[1].partition_bytes = 40;
        s.level[1].tensor[2].partition_bytes = 40;
        tessel_workload_data *d = load(&s);
        tessel_result x, r;
        tessel_diag diag;
        ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &x, &diag), 0);
        ck_assert_int_eq(tessel_model_analytic(&s, NULL, &r, &diag), 0);
        ck_assert_msg(x.traffic[1][1].bumped_bytes == ba[q] && x.traffic[1][2].bumped_bytes == bb[q],
                      "%s exact %llu %llu", orders[q], (unsigned long long)x.traffic[1][1].bumped_bytes,
                      (unsigned long long)x.traffic[1][2].bumped_bytes);
        ck_assert_msg(r.traffic[1][1].bumped_bytes == ba[q] && r.traffic[1][2].bumped_bytes == bb[q],
                      "%s analytic %llu %llu", orders[q],
                      (unsigned long long)r.traffic[1][1].bumped_bytes,
                      (unsigned long long)r.traffic[1][2].bumped_bytes);
        tessel_workload_free(&d);
    }
}
END_TEST

START_TEST(banded_matches_exact)
{
    check_against_exact(bind_banded, 0.05);
}
END_TEST

START_TEST(banded_gram_matches_exact)
{
    check_against_exact(bind_banded_gram, 0.05);
}
END_TEST

START_TEST(uniform_matches_exact)
{
    check_against_exact(bind_uniform, 0.05);
}
END_TEST

START_TEST(gram_matches_exact)
{
    check_against_exact(bind_gram, 0.05);
}
END_TEST

START_TEST(nm_matches_exact)
{
    check_against_exact(bind_nm, 0.05);
}
END_TEST

START_TEST(refuses_what_it_does_not_model)
{
    tessel_spec s;
    tessel_result r;
    tessel_diag diag;
    /* a data file */
    spec_spmspm(&s, "IJK", 128, 128, 128);
    s.workload.tensor[1].data = "examples/data/G51.mtx.gz";
    s.workload.tensor[2].data = "A";
    ck_assert_int_eq(tessel_model_analytic(&s, NULL, &r, &diag), TESSEL_EUNSUPPORTED);
    ck_assert_msg(strstr(diag.message, "density models"), "%s", diag.message);
    /* a banded model times a uniform one */
    spec_spmspm(&s, "IJK", 128, 128, 128);
    bind_uniform(&s);
    banded(&s.workload.tensor[1], 3000, 4, 0.5, 1);
    s.workload.tensor[1].model.cols = 2500;
    ck_assert_int_eq(tessel_model_analytic(&s, NULL, &r, &diag), TESSEL_EUNSUPPORTED);
    ck_assert_msg(strstr(diag.message, "banded"), "%s", diag.message);
    /* two buffer levels */
    spec_spmspm(&s, "IJK", 128, 128, 128);
    bind_uniform(&s);
    s.nlevels = 3;
    s.level[2] = s.level[1];
    ck_assert_int_eq(tessel_model_analytic(&s, NULL, &r, &diag), TESSEL_EUNSUPPORTED);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("analytic");
    TCase *tc = tcase_create("analytic");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, uniform_matches_exact);
    tcase_add_test(tc, gram_matches_exact);
    tcase_add_test(tc, nm_matches_exact);
    tcase_add_test(tc, output_spill_inside_visit);
    tcase_add_test(tc, compute_reads_in_order);
    tcase_add_test(tc, banded_matches_exact);
    tcase_add_test(tc, banded_gram_matches_exact);
    tcase_add_test(tc, refuses_what_it_does_not_model);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

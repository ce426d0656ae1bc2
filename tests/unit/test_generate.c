/* Unit tests of the synthetic generators: exact counts, structure,
 * determinism, statistics, validation and out-of-memory behaviour. */
#include <check.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/tensor.h"
#include "test_alloc.h"

static tessel_tensor *generate(tessel_gen_params *p)
{
    tessel_tensor *t = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_generate(p, NULL, &t, &d);
    ck_assert_msg(rc == TESSEL_OK, "%s", d.message);
    return t;
}

static uint64_t row_of(const tessel_tensor *t, uint64_t k)
{
    uint64_t lo = 0, hi = t->dims[0];
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (t->ptr[mid] <= k)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

START_TEST(uniform_exact_and_deterministic)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_UNIFORM);
    p.rows = 300;
    p.cols = 200;
    p.nnz = 12345;
    tessel_tensor *a = generate(&p), *b = generate(&p);
    ck_assert_uint_eq(a->nnz, 12345);
    ck_assert_mem_eq(a->idx[1], b->idx[1], a->nnz * sizeof(uint32_t));
    ck_assert_mem_eq(a->values, b->values, a->nnz * sizeof(double));
    for (uint64_t k = 0; k < a->nnz; k++)
        ck_assert(a->values[k] > 0 && a->values[k] <= 1);
    p.seed = 2;
    tessel_tensor *c = generate(&p);
    ck_assert(memcmp(a->idx[1], c->idx[1], a->nnz * sizeof(uint32_t)) != 0);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    tessel_tensor_free(&c);
    p.nnz = 59000; /* above half of the positions: the complement path */
    a = generate(&p);
    ck_assert_uint_eq(a->nnz, 59000);
    tessel_tensor_free(&a);
    p.rows = p.cols = 10000000;
    p.nnz = 1000000;
    p.values = 0;
    a = generate(&p);
    ck_assert_uint_eq(a->nnz, 1000000);
    ck_assert_ptr_null(a->values);
    tessel_tensor_free(&a);
}
END_TEST

START_TEST(banded_and_blockdiag_structure)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_BANDED);
    p.rows = 1000;
    p.cols = 800;
    p.bandwidth = 5;
    tessel_tensor *t = generate(&p);
    uint64_t full = 0;
    for (uint64_t i = 0; i < p.rows; i++)
        for (uint64_t j = i > 5 ? i - 5 : 0; j <= i + 5 && j < p.cols; j++)
            full++;
    ck_assert_uint_eq(t->nnz, full);
    tessel_tensor_free(&t);
    p.density = 0.3;
    t = generate(&p);
    double mean = 0.3 * (double)full, sd = sqrt((double)full * 0.3 * 0.7);
    ck_assert_msg(fabs((double)t->nnz - mean) < 5 * sd, "%llu vs %g", (unsigned long long)t->nnz,
                  mean);
    for (uint64_t k = 0; k < t->nnz; k++) {
        int64_t i = (int64_t)row_of(t, k), j = t->idx[1][k];
        ck_assert_int_le(llabs(i - j), 5);
    }
    tessel_tensor_free(&t);

    tessel_gen_params_init(&p, TESSEL_GEN_BLOCKDIAG);
    p.rows = p.cols = 1000;
    p.block = 64;
    t = generate(&p);
    ck_assert_uint_eq(t->nnz, 15 * 64 * 64 + 40 * 40);
    tessel_tensor_free(&t);
    p.density = 0.3;
    t = generate(&p);
    for (uint64_t k = 0; k < t->nnz; k++)
        ck_assert_uint_eq(row_of(t, k) / 64, t->idx[1][k] / 64);
    full = 15 * 64 * 64 + 40 * 40;
    mean = 0.3 * (double)full;
    sd = sqrt((double)full * 0.3 * 0.7);
    ck_assert(fabs((double)t->nnz - mean) < 5 * sd);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(nm_exact)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_NM);
    p.rows = 50;
    p.cols = 30; /* 3 groups of 8 and a last group of 6 */
    p.n = 3;
    p.m = 8;
    tessel_tensor *t = generate(&p);
    for (uint64_t i = 0; i < p.rows; i++) {
        unsigned per_group[4] = { 0, 0, 0, 0 };
        for (uint64_t k = t->ptr[i]; k < t->ptr[i + 1]; k++)
            per_group[t->idx[1][k] / 8]++;
        for (int g = 0; g < 4; g++)
            ck_assert_uint_eq(per_group[g], 3);
    }
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(rmat_is_skewed)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_RMAT);
    p.rows = p.cols = 1 << 14;
    p.nnz = 100000;
    tessel_tensor *t = generate(&p);
    ck_assert_uint_le(t->nnz, p.nnz);
    ck_assert_uint_gt(t->nnz, p.nnz / 2);
    uint64_t max = 0;
    for (uint64_t i = 0; i < t->dims[0]; i++)
        if (t->ptr[i + 1] - t->ptr[i] > max)
            max = t->ptr[i + 1] - t->ptr[i];
    double mean = (double)t->nnz / (double)t->dims[0];
    ck_assert_msg((double)max > 20 * mean, "max row %llu, mean %g", (unsigned long long)max,
                  mean);
    tessel_tensor_free(&t);
    p.rows = 1000; /* not a power of two, not square */
    p.cols = 77;
    t = generate(&p);
    ck_assert_uint_eq(t->dims[0], 1000);
    tessel_tensor_free(&t);
}
END_TEST

START_TEST(invalid_parameters)
{
    static const struct { tessel_gen_kind kind; const char *field; } cases[] = {
        { TESSEL_GEN_UNIFORM, "nnz" },   { TESSEL_GEN_BANDED, "density" },
        { TESSEL_GEN_BLOCKDIAG, "block" }, { TESSEL_GEN_NM, "n" },
        { TESSEL_GEN_RMAT, "a" },        { TESSEL_GEN_UNIFORM, "rows" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tessel_gen_params p;
        tessel_gen_params_init(&p, cases[i].kind);
        p.rows = p.cols = 10;
        p.nnz = 5;
        p.block = 2;
        if (i == 0)
            p.nnz = 101;
        if (i == 1)
            p.density = NAN;
        if (i == 2)
            p.block = 0;
        if (i == 3)
            p.n = 5;
        if (i == 4)
            p.a = 0.9;
        if (i == 5)
            p.rows = 0;
        tessel_tensor *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        ck_assert_int_eq(tessel_generate(&p, NULL, &t, &d), TESSEL_EINVAL);
        ck_assert_ptr_null(t);
        ck_assert_str_eq(d.field, cases[i].field);
    }
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_NM);
    p.rows = p.cols = 4000000000u;
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_generate(&p, NULL, &t, NULL), TESSEL_ERANGE);
    ck_assert_int_eq(tessel_gen_kind_from_name("powerlaw"), TESSEL_GEN_RMAT);
    ck_assert_int_eq(tessel_gen_kind_from_name("dense"), -1);
}
END_TEST

START_TEST(out_of_memory_every_allocation)
{
    for (int kind = 0; kind <= TESSEL_GEN_NM; kind++) {
        tessel_gen_params p;
        tessel_gen_params_init(&p, (tessel_gen_kind)kind);
        p.rows = p.cols = 64;
        p.nnz = 300;
        p.bandwidth = 2;
        p.block = 8;
        int succeeded = 0;
        for (long n = 1; n < 100 && !succeeded; n++) {
            test_alloc ta;
            test_alloc_init(&ta, n);
            tessel_tensor *t = NULL;
            int rc = tessel_generate(&p, &ta.allocator, &t, NULL);
            ck_assert(rc == TESSEL_OK || rc == TESSEL_ENOMEM);
            succeeded = rc == TESSEL_OK;
            tessel_tensor_free(&t);
            ck_assert_int_eq(ta.live, 0);
        }
        ck_assert(succeeded);
    }
}
END_TEST

int main(void)
{
    gsl_set_error_handler_off();
    Suite *s = suite_create("generate");
    TCase *tc = tcase_create("generate");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, uniform_exact_and_deterministic);
    tcase_add_test(tc, banded_and_blockdiag_structure);
    tcase_add_test(tc, nm_exact);
    tcase_add_test(tc, rmat_is_skewed);
    tcase_add_test(tc, invalid_parameters);
    tcase_add_test(tc, out_of_memory_every_allocation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Compulsory traffic (docs/semantics.md rule 3): each input once and the output
 * once, untiled, in the backing store's format: the same for every
 * mapping and for the exact, stat and analytic estimators of one spec
 * and data; what tiling adds is tiled_metadata_bytes. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/drt.h"
#include "tessel/model.h"
#include "test_specs.h"

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

/* A 600 x 500 times 500 x 400 product (few enough multiplies that the
 * stat estimator's output sample holds every row, so its output count is
 * exact); DRAM in csr, the buffer in `format1`. */
static void spec_of(tessel_spec *s, const char *order, uint64_t ti, uint64_t tk, uint64_t tj,
                    int format1)
{
    test_spec_spmspm(s, order, ti, tk, tj, 1, 64, 32);
    s->level[1].format = format1;
    uniform(&s->workload.tensor[1], 600, 500, 3000, 1);
    uniform(&s->workload.tensor[2], 500, 400, 2500, 2);
}

static tessel_workload_data *load(const tessel_spec *s)
{
    tessel_workload_data *d = NULL;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    ck_assert_int_eq(tessel_workload_load(s, NULL, NULL, &d, &errors), 0);
    tessel_diag_list_free(&errors);
    return d;
}

/* csr of a whole rows x cols matrix: (rows + 1) offsets, a coordinate
 * and a value per nonzero (32-bit metadata, 64-bit values). */
static uint64_t csr(uint64_t rows, uint64_t nnz)
{
    return (rows + 1) * 4 + nnz * 12;
}

START_TEST(test_exact_by_hand)
{
    /* the buffer in coo: compulsory_bytes still prices DRAM's csr */
    tessel_spec s;
    spec_of(&s, "IKJ", 64, 64, 64, 0);
    tessel_workload_data *d = load(&s);
    tessel_result r;
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &r, &diag), 0);
    uint64_t want = csr(600, d->tensor[1]->nnz) + csr(500, d->tensor[2]->nnz) +
                    csr(600, r.output_nnz);
    ck_assert_uint_eq(r.compulsory_bytes, want);
    /* coo tiles carry no per-tile metadata beyond the untiled coo: 0 */
    ck_assert_int_eq(r.tiled_metadata_bytes, 0);
    /* csr tiles add (tile rows + 1) offsets per non-empty tile */
    spec_of(&s, "IKJ", 64, 64, 64, 1);
    ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &r, &diag), 0);
    ck_assert_uint_eq(r.compulsory_bytes, want);
    ck_assert_int_gt(r.tiled_metadata_bytes, 0);
    tessel_workload_free(&d);
}
END_TEST

static const char *const orders[6] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };
static const uint64_t shapes[3][3] = { { 128, 128, 128 }, { 256, 128, 384 }, { 0, 0, 0 } };

/* Every loop order and tile shape: exact, stat and analytic. */
START_TEST(test_every_mapping_and_estimator)
{
    tessel_spec s;
    spec_of(&s, "IJK", 128, 128, 128, 1);
    tessel_workload_data *d = load(&s);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    uint64_t first = 0, first_analytic = 0;
    int64_t tiled_min = INT64_MAX, tiled_max = INT64_MIN;
    for (unsigned n = 0; n < 3; n++)
        for (unsigned q = 0; q < 6; q++) {
            spec_of(&s, orders[q], shapes[n][0], shapes[n][1], shapes[n][2], 1);
            tessel_result x, st, an;
            tessel_diag diag;
            ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &x, &diag), 0);
            int rc = tessel_model_stat(&s, d, &o, NULL, &st, &diag);
            ck_assert_msg(rc == 0, "stat: %s", diag.message);
            rc = tessel_model_analytic(&s, NULL, &an, &diag);
            ck_assert_msg(rc == 0, "analytic: %s", diag.message);
            if (!first) {
                first = x.compulsory_bytes;
                first_analytic = an.compulsory_bytes;
            }
            ck_assert_uint_eq(x.compulsory_bytes, first);
            /* the sample holds every output row: stat's count is exact */
            ck_assert_uint_eq(st.output_nnz, x.output_nnz);
            ck_assert_uint_eq(st.compulsory_bytes, first);
            ck_assert_uint_eq(an.compulsory_bytes, first_analytic);
            tiled_min = x.tiled_metadata_bytes < tiled_min ? x.tiled_metadata_bytes : tiled_min;
            tiled_max = x.tiled_metadata_bytes > tiled_max ? x.tiled_metadata_bytes : tiled_max;
        }
    /* analytic: expectations of the same models (output count within 2 %) */
    ck_assert_msg(fabs((double)first_analytic / (double)first - 1) < 0.02,
                  "analytic %llu, exact %llu", (unsigned long long)first_analytic,
                  (unsigned long long)first);
    /* untiled mappings add nothing; 128-wide csr tiles add offsets */
    ck_assert_int_eq(tiled_min, 0);
    ck_assert_int_gt(tiled_max, 0);
    tessel_workload_free(&d);
}
END_TEST

/* A per-rank DRAM format (doubly compressed rows, [CP, CP]): the output's
 * non-empty rows are counted (exact) or estimated (stat) over the whole
 * output, not per tile. */
START_TEST(test_rank_format)
{
    tessel_spec s;
    uint64_t first = 0;
    tessel_workload_data *d = NULL;
    for (unsigned q = 0; q < 6; q += 2) {
        spec_of(&s, orders[q], q ? 128 : 0, 128, 256, 1);
        /* sparse rows: many empty rows in A, so CP rows differ from UOP */
        uniform(&s.workload.tensor[1], 600, 500, 300, 3);
        s.level[0].format = TESSEL_SPEC_FORMAT_RANKS;
        s.level[0].nranks = 2;
        s.level[0].ranks[0] = 1; /* CP */
        s.level[0].ranks[1] = 1;
        if (!d)
            d = load(&s);
        tessel_result x, st;
        tessel_diag diag;
        ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &x, &diag), 0);
        if (!first)
            first = x.compulsory_bytes;
        ck_assert_uint_eq(x.compulsory_bytes, first);
        int rc = tessel_model_stat(&s, d, NULL, NULL, &st, &diag);
        ck_assert_msg(rc == 0, "stat: %s", diag.message);
        ck_assert_msg(fabs((double)st.compulsory_bytes / (double)first - 1) < 0.01,
                      "stat %llu, exact %llu", (unsigned long long)st.compulsory_bytes,
                      (unsigned long long)first);
    }
    /* by hand: [CP, CP] keeps a coordinate per non-empty row, (rows + 1)
     * offsets to their fibres, a coordinate and a value per nonzero */
    const tessel_tensor *a = d->tensor[1], *b = d->tensor[2];
    uint64_t rows_a = 0, rows_b = 0, rows_z = 0;
    for (uint64_t k = 0; k < b->dims[0]; k++)
        rows_b += b->ptr[k + 1] > b->ptr[k];
    for (uint64_t i = 0; i < a->dims[0]; i++) {
        rows_a += a->ptr[i + 1] > a->ptr[i];
        int z = 0;
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
            z |= b->ptr[a->idx[1][p] + 1] > b->ptr[a->idx[1][p]];
        rows_z += z;
    }
    tessel_result c;
    tessel_diag diag;
    spec_of(&s, "IJK", 0, 128, 256, 1);
    uniform(&s.workload.tensor[1], 600, 500, 300, 3);
    ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &c, &diag), 0);
    uint64_t want = (2 * rows_a + 1) * 4 + a->nnz * 12 + (2 * rows_b + 1) * 4 + b->nnz * 12 +
                    (2 * rows_z + 1) * 4 + c.output_nnz * 12;
    ck_assert_uint_eq(first, want);
    ck_assert_uint_lt(rows_a, 600); /* the case does test empty rows */
    tessel_workload_free(&d);
}
END_TEST

START_TEST(test_public_untiled)
{
    tessel_spec s;
    spec_of(&s, "IJK", 0, 0, 0, 1);
    uint64_t dims[2] = { 600, 500 };
    double b = 0;
    ck_assert_int_eq(tessel_model_untiled_bytes(&s, 0, 1, 2, dims, NULL, 3000, &b, NULL), 0);
    ck_assert_uint_eq((uint64_t)b, csr(600, 3000));
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_untiled_bytes(&s, 0, 7, 2, dims, NULL, 1, &b, &diag),
                     TESSEL_EINVAL);
}
END_TEST

/* A tensor of `order` modes from n coordinate tuples. */
static tessel_tensor *tensor_of(unsigned order, const uint64_t *dims, const uint32_t *c,
                                unsigned n)
{
    tessel_coo_builder *b = NULL;
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(order, dims, 0, NULL, &b, NULL), 0);
    for (unsigned e = 0; e < n; e++)
        ck_assert_int_eq(tessel_coo_builder_add(b, c + e * order, 1.0), 0);
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

/* The symbolic output count by hand (src/stats/outcount.c). */
START_TEST(test_output_count_by_hand)
{
    /* A = {(0,0) (0,1) (1,0) (2,3)}, Z = A A: row 0 = rows 0 and 1 of A =
     * columns {0, 1}; row 1 = row 0 = {0, 1}; row 2 = row 3 (empty):
     * 4 nonzeros in 2 rows, 5 multiplies */
    const uint64_t d2[2] = { 4, 4 };
    const uint32_t ca[] = { 0, 0, 0, 1, 1, 0, 2, 3 };
    tessel_tensor *a = tensor_of(2, d2, ca, 4);
    tessel_output_count n;
    ck_assert_int_eq(tessel_output_count_run(a, a, NULL, NULL, &n, NULL), 0);
    ck_assert_uint_eq(n.nnz, 4);
    ck_assert_uint_eq(n.rows, 2);
    ck_assert_uint_eq(n.fibers, 2);
    ck_assert_double_eq(tessel_output_count_work(a, a, NULL), 5);
    /* per k, the nonzeros first reached through it: row 0's k = 0 reaches
     * {0, 1} first, its k = 1 only column 0 again (1 multiply, nothing
     * new); row 1's k = 0 reaches {0, 1}; row 2's k = 3 nothing */
    double rows[4], ks[4];
    ck_assert_int_eq(tessel_output_count_detail(a, a, NULL, NULL, &n, rows, ks, NULL), 0);
    ck_assert_uint_eq(n.nnz, 4);
    const double want_rows[4] = { 2, 2, 0, 0 }, want_ks[4] = { 4, 0, 0, 0 };
    for (unsigned i = 0; i < 4; i++) {
        ck_assert_double_eq(rows[i], want_rows[i]);
        ck_assert_double_eq(ks[i], want_ks[i]);
    }
    /* TTM: T[i,x,k] = {(0,0,0) (0,0,1) (0,1,3) (1,2,1)} 2x3x4 times M = A:
     * fibre (0,0) = rows 0, 1 of M = {0, 1}; (0,1) = row 3: empty;
     * (1,2) = row 1 = {0}: 3 nonzeros, 2 fibres, 2 slices */
    const uint64_t d3[3] = { 2, 3, 4 };
    const uint32_t ct[] = { 0, 0, 0, 0, 0, 1, 0, 1, 3, 1, 2, 1 };
    tessel_tensor *t = tensor_of(3, d3, ct, 4);
    ck_assert_int_eq(tessel_output_count_run(t, a, NULL, NULL, &n, NULL), 0);
    ck_assert_uint_eq(n.nnz, 3);
    ck_assert_uint_eq(n.fibers, 2);
    ck_assert_uint_eq(n.rows, 2);
    /* MTTKRP: T[i,j,k] 2x4x4 = {(0,0,0) (0,2,1) (1,1,2)}, B = C = A (rows
     * j, k, columns r). (0,0,0): B row 0 {0,1} and C row 0 {0,1}: r 0, 1;
     * (0,2,1): B row 2 {3}, C row 1 {0}: none; (1,1,2): B row 1 {0}, C
     * row 2 {3}: none. Y = {(0,0) (0,1)}: 2 nonzeros in 1 row */
    const uint64_t dm[3] = { 2, 4, 4 };
    const uint32_t cm[] = { 0, 0, 0, 0, 2, 1, 1, 1, 2 };
    tessel_tensor *m = tensor_of(3, dm, cm, 3);
    ck_assert_int_eq(tessel_output_count_run(m, a, a, NULL, &n, NULL), 0);
    ck_assert_uint_eq(n.nnz, 2);
    ck_assert_uint_eq(n.rows, 1);
    ck_assert_double_eq(tessel_output_count_work(m, a, a), 4 + 2 + 2);
    tessel_diag diag;
    ck_assert_int_eq(tessel_output_count_run(a, t, NULL, NULL, &n, &diag), TESSEL_EINVAL);
    tessel_tensor_free(&a);
    tessel_tensor_free(&t);
    tessel_tensor_free(&m);
}
END_TEST

/* A partial output sample: stat's output_nnz is an estimate, its
 * compulsory_bytes the symbolic count's, equal to exact's in every order
 * and in a per-rank format; with no budget it is the estimate and says
 * so; saved statistics keep the count (.tsd version 4). */
START_TEST(test_partial_sample)
{
    tessel_spec s;
    spec_of(&s, "IJK", 128, 128, 128, 1);
    tessel_workload_data *d = load(&s);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_min_flops = 200; /* a few rows of the ~15,000 multiplies */
    int differs = 0;
    for (unsigned q = 0; q < 6; q++)
        for (unsigned f = 0; f < 2; f++) {
            spec_of(&s, orders[q], 128, 128, 128, 1);
            if (f) { /* [CP, CP] at DRAM: the output's non-empty rows count */
                s.level[0].format = TESSEL_SPEC_FORMAT_RANKS;
                s.level[0].nranks = 2;
                s.level[0].ranks[0] = s.level[0].ranks[1] = 1;
            }
            tessel_result x, st, est;
            tessel_diag diag;
            ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &x, &diag), 0);
            o.output_count_budget = TESSEL_STAT_OUTPUT_COUNT_BUDGET;
            int rc = tessel_model_stat(&s, d, &o, NULL, &st, &diag);
            ck_assert_msg(rc == 0, "stat: %s", diag.message);
            ck_assert_uint_eq(st.compulsory_bytes, x.compulsory_bytes);
            ck_assert_int_eq(st.compulsory_estimated, 0);
            ck_assert_int_eq(x.compulsory_estimated, 0);
            /* the rows' exact counts calibrate the sample (docs/models/stat.md,
             * "Exact rows' counts as the covariate") */
            ck_assert_uint_eq(st.output_nnz, x.output_nnz);
            o.output_count_budget = 0;
            ck_assert_int_eq(tessel_model_stat(&s, d, &o, NULL, &est, &diag), 0);
            ck_assert_int_eq(est.compulsory_estimated, 1);
            differs |= est.output_nnz != x.output_nnz; /* the sketches' estimate */
        }
    ck_assert_msg(differs, "the sample holds every row: the case tests nothing");
    /* saved and loaded: the count travels with the statistics */
    spec_of(&s, "KIJ", 128, 128, 128, 1);
    o.output_count_budget = TESSEL_STAT_OUTPUT_COUNT_BUDGET;
    tessel_stat_data *sd = NULL, *back = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s, d, &o, NULL, &sd, &diag), 0);
    char path[] = "/tmp/tessel-compulsory-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(tessel_stat_data_save(sd, path, &diag), 0);
    ck_assert_int_eq(tessel_stat_data_load(path, NULL, &back, &diag), 0);
    unlink(path);
    tessel_result x, st;
    ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &x, &diag), 0);
    ck_assert_int_eq(tessel_model_stat_eval(&s, back, &st, &diag), 0);
    ck_assert_uint_eq(st.compulsory_bytes, x.compulsory_bytes);
    ck_assert_int_eq(st.compulsory_estimated, 0);
    tessel_stat_data_free(&sd);
    tessel_stat_data_free(&back);
    tessel_workload_free(&d);
}
END_TEST

/* drt's statistics sample output micro rows once its multiplies pass
 * 2^20, and the templates under stat take Z from the statistics: both
 * price rule 3 from the exact count, so compulsory_bytes equals exact's
 * (and the statistics hand that count out). */
START_TEST(test_drt_partial_sample)
{
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 256, 256, 256, 1, 64, 32);
    s.level[1].format = 1;
    uniform(&s.workload.tensor[1], 2000, 2000, 60000, 3);
    uniform(&s.workload.tensor[2], 2000, 2000, 60000, 4);
    tessel_workload_data *d = load(&s);
    tessel_diag diag;
    tessel_result x, st;
    ck_assert_int_eq(tessel_model_exact(&s, d, NULL, &x, &diag), 0);
    ck_assert_msg(x.macs > (UINT64_C(1) << 20), "too few multiplies to sample: %llu",
                  (unsigned long long)x.macs);
    tessel_drt_options o;
    tessel_drt_options_init(&o);
    tessel_drt_stats *ds = NULL;
    ck_assert_int_eq(tessel_drt_stats_create(&s, d, &o, NULL, &ds, &diag), 0);
    int rc = tessel_drt_stat(&s, ds, &st, NULL, &diag);
    ck_assert_msg(rc == 0, "drt stat: %s", diag.message);
    ck_assert_uint_eq(st.compulsory_bytes, x.compulsory_bytes);
    tessel_drt_stats_free(&ds);
    tessel_stat_options so;
    tessel_stat_options_init(&so);
    tessel_stat_data *sd = NULL;
    ck_assert_int_eq(tessel_stat_data_create(&s, d, &so, NULL, &sd, &diag), 0);
    tessel_output_count oc;
    ck_assert_int_eq(tessel_stat_data_output_count(sd, &oc), 1);
    ck_assert_uint_eq(oc.nnz, x.output_nnz);
    tessel_stat_data_free(&sd);
    tessel_workload_free(&d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("compulsory");
    TCase *tc = tcase_create("rule3");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_exact_by_hand);
    tcase_add_test(tc, test_every_mapping_and_estimator);
    tcase_add_test(tc, test_rank_format);
    tcase_add_test(tc, test_public_untiled);
    tcase_add_test(tc, test_output_count_by_hand);
    tcase_add_test(tc, test_partial_sample);
    tcase_add_test(tc, test_drt_partial_sample);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

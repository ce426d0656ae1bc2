/* Sparseloop's vocabulary (issue 26): an uncompressed output's
 * read-modify-write at the compute (docs/semantics.md rule 2, "Dense
 * outputs"), and the fixed-structured density model (docs/data.md,
 * "Density models"), hand-counted. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "tessel/stats.h"
#include "tessel/tensor.h"
#include "test_specs.h"
#include "test_data.h"

/* 4x4, 8-bit values and coordinates, tiles 2x2x2 under IJK:
 *   A: (0,0) (1,0) (1,2)      B: (0,1) (0,3) (2,0)
 * Multiplies: at k = 0 A's column 0 (rows 0, 1) meets B's row 0 (columns
 * 1, 3): 4; at k = 2 A(1,2) meets B(2,0): 1. MACs 5. */
static const uint32_t dense_a[3][2] = { { 0, 0 }, { 1, 0 }, { 1, 2 } };
static const uint32_t dense_b[3][2] = { { 0, 1 }, { 0, 3 }, { 2, 0 } };

static tessel_result dense_run(int uncompressed_z)
{
    tessel_tensor *a = test_coo_matrix(4, 4, 0, dense_a, 3);
    tessel_tensor *b = test_coo_matrix(4, 4, 0, dense_b, 3);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 2, 2, 2, 0 /* coo */, 8, 8);
    if (uncompressed_z)
        for (unsigned l = 0; l < 2; l++) {
            s.level[l].tensor[0].format = TESSEL_SPEC_FORMAT_RANKS;
            s.level[l].tensor[0].nranks = 2;
            s.level[l].tensor[0].ranks[0] = TESSEL_RANK_UB;
            s.level[l].tensor[0].ranks[1] = TESSEL_RANK_UB;
        }
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_result r;
    tessel_diag diag;
    int rc = tessel_model_exact(&s, &d, NULL, &r, &diag);
    ck_assert_msg(rc == 0, "exact failed: %s", diag.message);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    ck_assert_uint_eq(r.macs, 5);
    return r;
}

/* A compressed Z is read by every multiply (today's rule): 5 reads, 5
 * bytes. An uncompressed Z is read before every update but those of the
 * first reduction coordinate k = 0 (Sparseloop's algorithmic M·N·(K-1)):
 * 5 - 4 = 1 read, 1 byte. The results written (5) and the inputs' reads
 * (5 each) do not change. */
START_TEST(dense_output_read_modify_write)
{
    tessel_result c = dense_run(0), u = dense_run(1);
    ck_assert_uint_eq(c.traffic[1][0].reads, 5);
    ck_assert_uint_eq(c.traffic[1][0].child_read_data, 5);
    ck_assert_uint_eq(u.traffic[1][0].reads, 1);
    ck_assert_uint_eq(u.traffic[1][0].child_read_data, 1);
    for (unsigned t = 0; t < 3; t++) {
        ck_assert_uint_eq(u.traffic[1][t].child_write_data, t == 0 ? 5 : 0);
        if (t)
            ck_assert_uint_eq(u.traffic[1][t].reads, 5);
    }
    /* the tile traffic is rule 2 for both: the products land in output
     * tiles (0,0) and (0,1) only, each written back once with its 4
     * positions (8 bytes) when uncompressed, nothing read back */
    ck_assert_uint_eq(u.traffic[1][0].writebacks, 2);
    ck_assert_uint_eq(c.traffic[1][0].writebacks, 2);
    ck_assert_uint_eq(u.traffic[1][0].updates, 0);
    ck_assert_uint_eq(u.traffic[1][0].out_data, 2 * 4);
}
END_TEST

/* 64 x 64 at d = 0.1 in 8 x 8 tiles: P = 64 positions, P d = 6.4, so
 * every tile holds 6 with probability 0.6 and 7 with 0.4; all 64 tiles
 * are non-empty and the matrix holds 409.6 nonzeros in expectation. */
/* The fixed-structured model of a 64 x 64 matrix at d = 0.1 in square
 * tiles of `edge`. */
static tessel_density_occupancy *fixed_occupancy(uint64_t edge)
{
    tessel_density_model d = { TESSEL_DENSITY_FIXED, 64, 64, 0, 0.1, 0, 0, 0 };
    uint64_t tile[2] = { edge, edge };
    tessel_density_occupancy *o = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_density_occupancy_create(&d, tile, NULL, &o, &diag), 0);
    return o;
}

START_TEST(fixed_structured_whole_tiles)
{
    tessel_density_occupancy *o = fixed_occupancy(8);
    ck_assert_uint_eq(o->tiles, 64);
    ck_assert(fabs(o->nonempty - 64) < 1e-12);
    ck_assert(fabs(o->nnz - 409.6) < 1e-9);
    ck_assert(fabs(o->mean - 6.4) < 1e-12);
    ck_assert_uint_eq(o->npmf, 8);
    ck_assert(fabs(o->pmf[6] - 0.6) < 1e-12);
    ck_assert(fabs(o->pmf[7] - 0.4) < 1e-12);
    ck_assert_uint_eq(tessel_density_quantile(o, 0.5), 6);
    ck_assert_uint_eq(tessel_density_quantile(o, 1), 7);
    tessel_density_occupancy_free(&o);
    ck_assert_int_eq(tessel_density_kind_from_name("fixed-structured"), TESSEL_DENSITY_FIXED);
}
END_TEST

/* The same model in 10 x 10 tiles: 64 = 6 x 10 + 4, so 36 whole tiles of
 * 100 positions (10 each), 12 edge tiles of 40 (4 each) and one corner of
 * 16 (1.6: 1 with probability 0.4, 2 with 0.6). 49 non-empty tiles. */
START_TEST(fixed_structured_edge_tiles)
{
    tessel_density_occupancy *o = fixed_occupancy(10);
    ck_assert_uint_eq(o->tiles, 49);
    ck_assert(fabs(o->nonempty - 49) < 1e-12);
    ck_assert(fabs(o->pmf[10] - 36.0 / 49) < 1e-12);
    ck_assert(fabs(o->pmf[4] - 12.0 / 49) < 1e-12);
    ck_assert(fabs(o->pmf[1] - 0.4 / 49) < 1e-12);
    ck_assert(fabs(o->pmf[2] - 0.6 / 49) < 1e-12);
    ck_assert(fabs(o->nnz - 409.6) < 1e-9);
    tessel_density_occupancy_free(&o);
    /* density outside (0, 1] is refused, naming the field */
    tessel_density_model d = { TESSEL_DENSITY_FIXED, 64, 64, 0, 0, 0, 0, 0 };
    uint64_t tile[2] = { 10, 10 };
    tessel_diag diag;
    ck_assert_int_eq(tessel_density_occupancy_create(&d, tile, NULL, &o, &diag), TESSEL_EINVAL);
    ck_assert_str_eq(diag.field, "density");
}
END_TEST

/* tessel gen's instance: every run of w columns of a row holds floor(w d)
 * or ceil(w d) nonzeros (a Beatty sequence per row). At d = 0.1 a row of
 * 64 holds 6 or 7, a run of 8 holds 0 or 1, a run of 10 exactly 1. An 8 x 8
 * tile (6.4 expected) holds 5 to 8: the rows' golden-ratio phases keep it
 * within 2 of its shape x d. */
START_TEST(fixed_structured_instance)
{
    tessel_gen_params p;
    tessel_gen_params_init(&p, TESSEL_GEN_FIXED);
    p.rows = p.cols = 64;
    p.density = 0.1;
    p.values = 0;
    tessel_tensor *t = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_generate(&p, NULL, &t, &diag), 0);
    ck_assert_uint_eq(t->nnz >= 64 * 6 && t->nnz <= 64 * 7, 1);
    unsigned tilesum[8][8] = { { 0 } };
    for (uint64_t i = 0; i < 64; i++) {
        unsigned row[64] = { 0 };
        uint64_t n = t->ptr[i + 1] - t->ptr[i];
        ck_assert_msg(n == 6 || n == 7, "row %llu holds %llu", (unsigned long long)i,
                      (unsigned long long)n);
        for (uint64_t q = t->ptr[i]; q < t->ptr[i + 1]; q++) {
            row[t->idx[1][q]] = 1;
            tilesum[i / 8][t->idx[1][q] / 8]++;
        }
        for (unsigned j0 = 0; j0 + 10 <= 64; j0++) {
            unsigned w8 = 0, w10 = 0;
            for (unsigned j = j0; j < j0 + 10; j++)
                w10 += row[j], w8 += j < j0 + 8 ? row[j] : 0;
            ck_assert_uint_le(w8, 1);
            ck_assert_uint_eq(w10, 1);
        }
    }
    for (unsigned I = 0; I < 8; I++)
        for (unsigned J = 0; J < 8; J++)
            ck_assert_msg(tilesum[I][J] >= 5 && tilesum[I][J] <= 8, "tile (%u,%u) holds %u", I,
                          J, tilesum[I][J]);
    tessel_tensor_free(&t);
    ck_assert_int_eq(tessel_gen_kind_from_name("fixed-structured"), TESSEL_GEN_FIXED);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("vocab");
    TCase *tc = tcase_create("vocab");
    tcase_add_test(tc, dense_output_read_modify_write);
    tcase_add_test(tc, fixed_structured_whole_tiles);
    tcase_add_test(tc, fixed_structured_edge_tiles);
    tcase_add_test(tc, fixed_structured_instance);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Sparseloop's vocabulary (issue 26): an uncompressed output's
 * read-modify-write at the compute (docs/semantics.md rule 2, "Dense
 * outputs"), hand-counted. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "tessel/stats.h"
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

int main(void)
{
    Suite *s = suite_create("vocab");
    TCase *tc = tcase_create("vocab");
    tcase_add_test(tc, dense_output_read_modify_write);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

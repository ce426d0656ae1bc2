/* Scalar skipping and gating and compute gating at the innermost level under
 * nested stat (issue 26 item 3, issue 18: `-e stat` with 2+ buffer levels;
 * src/model/stat_actions.c, docs/semantics.md "Scalar skipping and
 * gating"), hand-counted, with exact alongside.
 *
 * 4x4 matrices, COO with 8-bit values and coordinates (1 byte of data and
 * 2 of metadata per nonzero), DRAM -> LLB (one 4x4x4 tile) -> PEB -> MACs:
 *   A(i,k): (0,0) (1,0) (1,2)      B(k,j): (0,1) (0,3) (2,0)
 * The MACs: A(0,0) B(0,1), A(0,0) B(0,3), A(1,0) B(0,1), A(1,0) B(0,3),
 * A(1,2) B(2,0): 5. The compute's traversals depend on PEB's tiles only. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "tessel/spec.h"
#include "tessel/tensor.h"
#include "test_specs.h"
#include "test_data.h"
#include "test_hand.h"

static const uint32_t nx_a[3][2] = { { 0, 0 }, { 1, 0 }, { 1, 2 } };
static const uint32_t nx_b[3][2] = { { 0, 1 }, { 0, 3 }, { 2, 0 } };

/* Three levels: the LLB holds the whole 4x4x4 problem, PEB tiles of edge
 * `inner`; z_on, a_on, b_on: PEB's scalar skipping (gating with gate). */
static tessel_spec nx_spec(uint64_t inner, uint32_t a_on, uint32_t b_on, uint32_t z_on, int gate)
{
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 4, 4, 4, 0 /* coo */, 8, 8);
    test_spec_nest(&s, "PEB", inner);
    uint32_t on[3] = { z_on, a_on, b_on };
    for (unsigned t = 0; t < 3; t++) {
        if (gate)
            s.level[2].tensor[t].sparse.scalar_gate_on = on[t];
        else
            s.level[2].tensor[t].sparse.scalar_skip_on = on[t];
    }
    return s;
}

static tessel_result nx_run(const tessel_spec *s, int estimator)
{
    tessel_result r = test_hand_run(s, 4, 4, 4, nx_a, 3, nx_b, 3, estimator, 0);
    ck_assert_uint_eq(r.macs, 5);
    return r;
}

/* PEB tiles 2x2x2: the effectual PEB iterations and traversals are those of
 * test_scalar_skip.c's one-level example (A 10 traversals: 5 read, 5
 * skipped, 20 format bytes half skipped; B 6: 5 read, 1 skipped, 2 bytes;
 * Z 64 - 5 = 59 skipped), at PEB, under both estimators. */
START_TEST(nested_skipping_by_hand)
{
    tessel_spec s = nx_spec(2, 1u << 2, 1u << 1, (1u << 1) | (1u << 2), 0);
    for (int est = TEST_HAND_EXACT; est <= TEST_HAND_STAT; est++) {
        tessel_result r = nx_run(&s, est);
        const tessel_traffic *ta = &r.traffic[2][1], *tb = &r.traffic[2][2], *tz = &r.traffic[2][0];
        ck_assert_uint_eq(ta->skipped_reads, 5);
        ck_assert_uint_eq(ta->skipped_metadata_bytes, 10);
        ck_assert_uint_eq(ta->child_read_metadata, 10);
        ck_assert_uint_eq(tb->skipped_reads, 1);
        ck_assert_uint_eq(tb->skipped_metadata_bytes, 2);
        ck_assert_uint_eq(tb->child_read_metadata, 10);
        ck_assert_uint_eq(tz->skipped_reads, 59);
        for (unsigned l = 0; l < 2; l++) /* the LLB's action_optimization is none */
            for (unsigned t = 0; t < 3; t++)
                ck_assert_uint_eq(r.traffic[l][t].skipped_reads, 0);
    }
}
END_TEST

/* PEB tiles 3x3x3: edge tiles of one row / column. I0 = K0 = J0 = {0,1,2},
 * I1 = K1 = J1 = {3}. A's only non-empty tile (I0,K0) holds all 3
 * nonzeros; B's (K0,J0) 2 ((0,1), (2,0)), (K0,J1) 1 ((0,3)). Effectual:
 * (I0,K0,J0) and (I0,K0,J1).
 *   A: 3 nonzeros x j extent 3 + 3 x 1 = 12 traversals, 5 read, 7 skipped;
 *      24 format bytes: 10 actual, 14 skipped.
 *   B: 2 x i extent 3 + 1 x 3 = 9 traversals, 4 skipped; 18 bytes, 8 skipped.
 * One buffer level's mean extent (4 / 2 tiles = 2) would give B 6
 * traversals: the nested sums count each edge tile at its own extent.
 * Gating the compute (no scalar action): points 27 + 9 = 36; A nonzero at
 * 12, B at 9, both at 5: one operand absent at 7 + 4 = 11, gated; both
 * absent at 20, gone. With `[]` the 11 run idle: 16 actual computes. */
START_TEST(nested_edge_tiles_by_hand)
{
    tessel_spec s = nx_spec(3, 1u << 2, 1u << 1, 0, 0);
    for (int est = TEST_HAND_EXACT; est <= TEST_HAND_STAT; est++) {
        tessel_result r = nx_run(&s, est);
        const tessel_traffic *ta = &r.traffic[2][1], *tb = &r.traffic[2][2];
        ck_assert_uint_eq(ta->skipped_reads, 7);
        ck_assert_uint_eq(ta->skipped_metadata_bytes, 14);
        ck_assert_uint_eq(ta->child_read_metadata, 10);
        ck_assert_uint_eq(tb->skipped_reads, 4);
        ck_assert_uint_eq(tb->skipped_metadata_bytes, 8);
    }
    tessel_spec g = nx_spec(3, 0, 0, 0, 0);
    g.compute.optimization = TESSEL_SPEC_COMPUTE_OPT_GIVEN | TESSEL_SPEC_COMPUTE_OPT_GATING;
    tessel_spec n = nx_spec(3, 0, 0, 0, 0);
    n.compute.optimization = TESSEL_SPEC_COMPUTE_OPT_GIVEN;
    for (int est = TEST_HAND_EXACT; est <= TEST_HAND_STAT; est++) {
        tessel_result r = nx_run(&g, est);
        ck_assert_uint_eq(r.computes_algorithmic, 64);
        ck_assert_uint_eq(r.computes_gated, 11);
        ck_assert_uint_eq(r.computes_actual, 5);
        ck_assert_uint_eq(r.computes_skipped, 0);
        r = nx_run(&n, est);
        ck_assert_uint_eq(r.computes_actual, 16);
        ck_assert_uint_eq(r.computes_gated + r.computes_skipped, 0);
    }
}
END_TEST

/* Gating gives the gated columns (3x3x3: A 7 reads and 14 bytes). */
START_TEST(nested_gating_by_hand)
{
    tessel_spec s = nx_spec(3, 1u << 2, 0, 0, 1);
    for (int est = TEST_HAND_EXACT; est <= TEST_HAND_STAT; est++) {
        tessel_result r = nx_run(&s, est);
        ck_assert_uint_eq(r.traffic[2][1].gated_reads, 7);
        ck_assert_uint_eq(r.traffic[2][1].gated_metadata_bytes, 14);
        ck_assert_uint_eq(r.traffic[2][1].skipped_reads, 0);
        ck_assert_uint_eq(r.traffic[2][2].gated_reads + r.traffic[2][2].skipped_reads, 0);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scalar_nested");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, nested_skipping_by_hand);
    tcase_add_test(tc, nested_edge_tiles_by_hand);
    tcase_add_test(tc, nested_gating_by_hand);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

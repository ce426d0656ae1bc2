/* Per-level bypass (issue 26 item 5; docs/semantics.md "Bypass",
 * mapping.LEVEL.bypass): a bypassed tensor leaves nothing at its level and
 * its child reads it from the nearest kept level, hand-counted. */
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

/* 4x4, COO with 8-bit values and coordinates (1 byte of data and 2 of
 * metadata per nonzero), DRAM -> LLB -> MACs, LLB tiles 2x2x2 under IJK:
 *   A: (0,0) (1,0) (1,2)      B: (0,1) (0,3) (2,0)
 * Effectual tile iterations (I, J, K): (0,0,0) (0,0,1) (0,1,0); B's tiles
 * (K,J) = (0,0), (1,0), (0,1) are filled once each, one nonzero apiece:
 * 3 fills, 3 data + 6 metadata bytes from DRAM. Multiplies: at k = 0 A's
 * column 0 (2) meets B's row 0 (2): 4; at k = 2 one more. MACs 5. */
static const uint32_t bp_a[3][2] = { { 0, 0 }, { 1, 0 }, { 1, 2 } };
static const uint32_t bp_b[3][2] = { { 0, 1 }, { 0, 3 }, { 2, 0 } };

enum { BP_EXACT = TEST_HAND_EXACT, BP_STAT = TEST_HAND_STAT };

static tessel_result bp_run(uint32_t bypass, int estimator)
{
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 2, 2, 2, 0 /* coo */, 8, 8);
    s.level[1].bypass = bypass;
    tessel_result r = test_hand_run(&s, 4, 4, 4, bp_a, 3, bp_b, 3, estimator, 0);
    ck_assert_uint_eq(r.macs, 5);
    return r;
}

/* Kept, B moves 3 tiles (9 bytes) into the LLB, and the MACs read it there
 * 5 times (5 bytes of values) after the intersection has read each B tile's
 * coordinates once per effectual tile iteration (3 iterations, one 1-byte
 * coordinate each: 3 bytes). Bypassed, the LLB holds no B (an empty row) and
 * both happen at DRAM: 5 value reads once per use and 3 bytes of
 * coordinates, so DRAM's bytes drop from 9 to 8. A and Z do not change. */
START_TEST(bypass_moves_reads_to_parent)
{
    for (int est = BP_EXACT; est <= BP_STAT; est++) {
        tessel_result k = bp_run(0, est), y = bp_run(1u << 2, est);
        const tessel_traffic *kb = &k.traffic[1][2], *yb = &y.traffic[1][2];
        ck_assert_uint_eq(kb->fills, 3);
        ck_assert_uint_eq(kb->data_bytes, 3);
        ck_assert_uint_eq(kb->metadata_bytes, 6);
        ck_assert_uint_eq(kb->reads, 5);
        ck_assert_uint_eq(k.traffic[0][2].child_read_data, 3);
        ck_assert_uint_eq(k.traffic[0][2].child_read_metadata, 6);
        tessel_traffic zero;
        memset(&zero, 0, sizeof(zero));
        ck_assert(memcmp(yb, &zero, sizeof(zero)) == 0);
        ck_assert_uint_eq(kb->child_read_metadata, 3);
        ck_assert_uint_eq(y.traffic[0][2].reads, 5);
        ck_assert_uint_eq(y.traffic[0][2].child_read_data, 5);
        ck_assert_uint_eq(y.traffic[0][2].child_read_metadata, 3);
        ck_assert_uint_eq(y.traffic[0][2].data_bytes, 5);
        ck_assert_uint_eq(y.traffic[0][2].metadata_bytes, 3);
        ck_assert_uint_eq(y.dram_bytes + 1, k.dram_bytes);
        for (unsigned t = 0; t < 2; t++)
            for (unsigned l = 0; l < 2; l++)
                ck_assert(memcmp(&k.traffic[l][t], &y.traffic[l][t], sizeof(zero)) == 0);
    }
}
END_TEST

/* Z bypassed at the LLB: the MACs read its partial values (a compressed Z:
 * once per multiply) and write their 5 results at DRAM; the LLB's Z row
 * is empty and nothing is written back from it. */
START_TEST(bypass_output_updates_at_parent)
{
    tessel_result y = bp_run(1u << 0, BP_EXACT);
    ck_assert_uint_eq(y.traffic[1][0].writebacks, 0);
    ck_assert_uint_eq(y.traffic[1][0].reads, 0);
    ck_assert_uint_eq(y.traffic[0][0].reads, 5);
    ck_assert_uint_eq(y.traffic[0][0].child_read_data, 5);
    ck_assert_uint_eq(y.traffic[0][0].child_write_data, 5);
    ck_assert_uint_eq(y.traffic[0][0].data_bytes, 10);
}
END_TEST

/* A bypassed tensor takes no share of the level: with 300 bytes and B
 * bypassed, A and Z have 150 each (not 100) and B's partition is absent
 * (0, as unbounded: it cannot overflow). */
START_TEST(bypass_partition_absent)
{
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 2, 2, 2, 0, 8, 8);
    s.level[1].capacity = 300;
    ck_assert_uint_eq(tessel_spec_partition_bytes(&s, 1, 2), 100);
    s.level[1].bypass = 1u << 2;
    ck_assert_int_eq(tessel_spec_bypassed(&s, 1, 2), 1);
    ck_assert_int_eq(tessel_spec_bypassed(&s, 1, 1), 0);
    ck_assert_uint_eq(tessel_spec_partition_bytes(&s, 1, 2), 0);
    ck_assert_uint_eq(tessel_spec_partition_bytes(&s, 1, 1), 150);
    ck_assert_uint_eq(tessel_spec_partition_bytes(&s, 1, 0), 150);
    ck_assert(tessel_spec_partition_share(&s, 1, 2) == 0.0);
}
END_TEST

/* The spec keys: `bypass: [B]` and Sparseloop's `keep: [A, Z]` give the
 * same mask; a tensor in both, a name that is not a tensor and a bypassed
 * tensor with a partition are errors at their line. */
static tessel_spec *bp_parse(const char *mapping, const char *b_part, tessel_diag_list *l,
                             int *rc)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "name: t\n"
             "workload:\n"
             "  einsum: \"Z[m,n] = A[m,k] * B[n,k]\"\n"
             "  data: {A: dense, B: dense}\n"
             "  dims: {m: 4, n: 4, k: 4}\n"
             "architecture:\n"
             "  compute: {pes: 1, clock: 1GHz, class: fpmac}\n"
             "  levels:\n"
             "    - {name: DRAM, class: DRAM}\n"
             "    - name: LLB\n"
             "      class: SRAM\n"
             "      capacity: 1MiB\n"
             "      tensors: {B: {format: csr%s}}\n"
             "mapping:\n"
             "  LLB: {order: [m, n, k], %s}\n",
             b_part, mapping);
    return test_hand_parse(text, l, rc);
}

START_TEST(bypass_spec_keys)
{
    const char *good[] = { "bypass: [B]", "keep: [A, Z]", "bypass: B, keep: [A, Z]" };
    for (unsigned i = 0; i < 3; i++) {
        tessel_diag_list l;
        int rc;
        tessel_spec *s = bp_parse(good[i], "", &l, &rc);
        ck_assert_msg(rc == 0, "%s: %s", good[i], l.count ? l.items[0].message : "");
        int b = tessel_spec_tensor_index(s, "B");
        ck_assert_uint_eq(s->level[1].bypass, 1u << b);
        ck_assert_uint_eq(s->level[1].bypass_pos.line, 15);
        ck_assert_uint_eq(s->level[0].bypass, 0);
        tessel_spec_free(&s);
        tessel_diag_list_free(&l);
    }
    const char *bad[] = { "bypass: [B], keep: [B]", "bypass: [C]", "bypass: [B]" };
    const char *part[] = { "", "", ", partition: 50%" };
    for (unsigned i = 0; i < 3; i++) {
        tessel_diag_list l;
        int rc;
        tessel_spec *s = bp_parse(bad[i], part[i], &l, &rc);
        test_hand_refused(bad[i], rc, &s, &l, 15, "mapping.LLB.");
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bypass");
    TCase *tc = tcase_create("bypass");
    tcase_add_test(tc, bypass_moves_reads_to_parent);
    tcase_add_test(tc, bypass_output_updates_at_parent);
    tcase_add_test(tc, bypass_partition_absent);
    tcase_add_test(tc, bypass_spec_keys);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

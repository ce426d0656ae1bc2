/* Scalar skipping and gating above the innermost level (issue 26 item 3; an
 * outer level's `action_optimization`, docs/semantics.md "Scalar skipping
 * and gating", "At an outer level"): the reads the level serves its child
 * that are skipped (gated) where a condition tensor's tile is empty, their
 * format bytes, hand-counted, and the refusals. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "tessel/spec.h"
#include "test_specs.h"
#include "test_data.h"
#include "test_hand.h"

/* 4x4 matrices, COO with 8-bit values and coordinates (1 byte of data and
 * 2 of metadata per nonzero, no per-tile part), DRAM -> LLB, LLB tiles
 * 2x2x2; the action_optimization is DRAM's, on the reads that fill LLB.
 *   A(i,k): (0,0) (1,0) (1,2)      B(k,j): (0,1) (0,3) (2,0)
 * A's tiles (I,K): (0,0) 2 nonzeros, (0,1) 1; I = 1 is empty.
 * B's tiles (K,J): (0,0) 1, (0,1) 1, (1,0) 1, (1,1) empty.
 *
 * IJK (k innermost), A <- B: the tile iterations where A's tile is
 * non-empty, in order:
 *   (0,0,0) A(0,0) B(0,0)  effectual: fill 2
 *   (0,0,1) A(0,1) B(1,0)  effectual: fill 1
 *   (0,1,0) A(0,0) B(0,1)  effectual: fill 2
 *   (0,1,1) A(0,1) B(1,1) empty: the dense schedule fills 1, skipped
 * Dense schedule 6 nonzeros (4 fills), actual 5 (3 fills): 1 skipped read,
 * 2 skipped format bytes at DRAM.
 * B <- A: B's non-empty tiles in order (I, J, K): (0,0,0) B00, (0,0,1) B10,
 * (0,1,0) B01 (effectual, 3 fills), then I = 1 where A is empty: (1,0,0)
 * B00, (1,0,1) B10, (1,1,0) B01: 3 more fills in the dense schedule, each
 * one nonzero: 3 skipped reads, 6 skipped format bytes.
 *
 * IKJ (j innermost), A <- B: A(I,K) stays resident across J. (0,0): J0
 * B00, J1 B01, one fill of 2; (0,1): J0 B10 effectual (fill 1), J1 B11
 * empty (A(0,1) already resident). Dense 3 = actual 3: nothing skipped. */
static const uint32_t so_a[3][2] = { { 0, 0 }, { 1, 0 }, { 1, 2 } };
static const uint32_t so_b[3][2] = { { 0, 1 }, { 0, 3 }, { 2, 0 } };

static tessel_result so_run(const char *order, uint32_t a_on, uint32_t b_on, int gate,
                            int estimator)
{
    tessel_spec s;
    test_spec_spmspm(&s, order, 2, 2, 2, 0 /* coo */, 8, 8);
    if (gate) {
        s.level[0].tensor[1].sparse.scalar_gate_on = a_on;
        s.level[0].tensor[2].sparse.scalar_gate_on = b_on;
    } else {
        s.level[0].tensor[1].sparse.scalar_skip_on = a_on;
        s.level[0].tensor[2].sparse.scalar_skip_on = b_on;
    }
    return test_hand_run(&s, 4, 4, 4, so_a, 3, so_b, 3, estimator, 0);
}

START_TEST(outer_skipping_by_hand)
{
    tessel_result off = so_run("IJK", 0, 0, 0, TEST_HAND_EXACT);
    tessel_result r = so_run("IJK", 1u << 2, 1u << 1, 0, TEST_HAND_EXACT);
    const tessel_traffic *ta = &r.traffic[0][1], *tb = &r.traffic[0][2];
    ck_assert_uint_eq(r.macs, 5);
    ck_assert_uint_eq(ta->skipped_reads, 1);
    ck_assert_uint_eq(ta->skipped_metadata_bytes, 2);
    ck_assert_uint_eq(tb->skipped_reads, 3);
    ck_assert_uint_eq(tb->skipped_metadata_bytes, 6);
    ck_assert_uint_eq(ta->gated_reads + tb->gated_reads, 0);
    /* the fills themselves do not change: A 3 (5 nonzeros, 10 B metadata),
     * B 3; nothing skipped at the LLB (its action_optimization is none) */
    ck_assert_uint_eq(r.traffic[1][1].fills, 3);
    ck_assert_uint_eq(r.traffic[1][1].in_data, 5);
    ck_assert_uint_eq(r.traffic[1][1].in_metadata, 10);
    ck_assert_uint_eq(r.traffic[1][2].fills, 3);
    ck_assert_uint_eq(off.dram_bytes, r.dram_bytes);
    ck_assert_uint_eq(off.traffic[0][1].skipped_reads + off.traffic[0][2].skipped_reads, 0);
    for (unsigned t = 0; t < 3; t++)
        ck_assert_uint_eq(r.traffic[1][t].skipped_reads + r.traffic[1][t].gated_reads, 0);
}
END_TEST

START_TEST(outer_gating_and_stationary_by_hand)
{
    tessel_result g = so_run("IJK", 1u << 2, 1u << 1, 1, TEST_HAND_EXACT);
    ck_assert_uint_eq(g.traffic[0][1].gated_reads, 1);
    ck_assert_uint_eq(g.traffic[0][1].gated_metadata_bytes, 2);
    ck_assert_uint_eq(g.traffic[0][2].gated_reads, 3);
    ck_assert_uint_eq(g.traffic[0][2].gated_metadata_bytes, 6);
    ck_assert_uint_eq(g.traffic[0][1].skipped_reads + g.traffic[0][2].skipped_reads, 0);
    /* IKJ: A stays resident across j, so its empty B(1,1) skips nothing */
    tessel_result k = so_run("IKJ", 1u << 2, 0, 0, TEST_HAND_EXACT);
    ck_assert_uint_eq(k.traffic[1][1].fills, 2);
    ck_assert_uint_eq(k.traffic[0][1].skipped_reads, 0);
    ck_assert_uint_eq(k.traffic[0][1].skipped_metadata_bytes, 0);
}
END_TEST

/* The old walk (every key at once) and the streaming walk in chunks of 2
 * keys count what the default walk counts (IJK, A <- B and B <- A). */
START_TEST(outer_walks_agree)
{
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 2, 2, 2, 0, 8, 8);
    s.level[0].tensor[1].sparse.scalar_skip_on = 1u << 2;
    s.level[0].tensor[2].sparse.scalar_skip_on = 1u << 1;
    tessel_tensor *ta = test_coo_matrix(4, 4, 0, so_a, 3);
    tessel_tensor *tb = test_coo_matrix(4, 4, 0, so_b, 3);
    tessel_workload_data d;
    test_spmspm_data(&d, ta, tb);
    const tessel_exact_options opts[2] = { { 1, 0 }, { 0, 2 } };
    for (unsigned k = 0; k < 2; k++) {
        tessel_result r;
        tessel_diag diag;
        memset(&diag, 0, sizeof(diag));
        int rc = tessel_model_exact_opts(&s, &d, NULL, &opts[k], NULL, NULL, &r, &diag);
        ck_assert_msg(rc == 0, "%s", diag.message);
        ck_assert_uint_eq(r.traffic[0][1].skipped_reads, 1);
        ck_assert_uint_eq(r.traffic[0][1].skipped_metadata_bytes, 2);
        ck_assert_uint_eq(r.traffic[0][2].skipped_reads, 3);
        ck_assert_uint_eq(r.traffic[0][2].skipped_metadata_bytes, 6);
        ck_assert_uint_eq(r.traffic[1][1].fills, 3);
    }
    tessel_tensor_free(&ta);
    tessel_tensor_free(&tb);
}
END_TEST

/* stat prices it (one buffer level: its closed form, stat_actions.c): the
 * hand counts above, skipping and gating, and IKJ's stationary A. */
START_TEST(outer_stat_by_hand)
{
    tessel_result r = so_run("IJK", 1u << 2, 1u << 1, 0, TEST_HAND_STAT);
    ck_assert_uint_eq(r.traffic[0][1].skipped_reads, 1);
    ck_assert_uint_eq(r.traffic[0][1].skipped_metadata_bytes, 2);
    ck_assert_uint_eq(r.traffic[0][2].skipped_reads, 3);
    ck_assert_uint_eq(r.traffic[0][2].skipped_metadata_bytes, 6);
    ck_assert_uint_eq(r.traffic[1][1].fills, 3);
    tessel_result g = so_run("IJK", 1u << 2, 1u << 1, 1, TEST_HAND_STAT);
    ck_assert_uint_eq(g.traffic[0][1].gated_reads, 1);
    ck_assert_uint_eq(g.traffic[0][2].gated_metadata_bytes, 6);
    tessel_result k = so_run("IKJ", 1u << 2, 0, 0, TEST_HAND_STAT);
    ck_assert_uint_eq(k.traffic[0][1].skipped_reads, 0);
    ck_assert_uint_eq(k.traffic[1][1].fills, 2);
}
END_TEST

/* One buffer level, stat's closed form (src/model/stat_actions.c): B's
 * dense schedule under KIJ, per row K of B's tiles over I (2 tiles):
 * K = 0 holds B(0,0) and B(0,1): refilled at each I, 2 x 2 = 4 fills; K = 1
 * holds B(1,0) alone: kept across I, 1 fill; 5 fills of one nonzero. The
 * actual fills: K = 0, I = 0 (A(0,0) non-empty) B(0,0) and B(0,1); I = 1
 * has A(1,0) empty; K = 1, I = 0: B(1,0): 3. Skipped 2 reads, 4 format
 * bytes. A: j innermost, each non-empty tile once: nothing. The other
 * orders as exact counts them (IJK is the hand count above). */
START_TEST(outer_stat_orders)
{
    tessel_result k = so_run("KIJ", 1u << 2, 1u << 1, 0, TEST_HAND_STAT);
    ck_assert_uint_eq(k.traffic[0][2].skipped_reads, 2);
    ck_assert_uint_eq(k.traffic[0][2].skipped_metadata_bytes, 4);
    ck_assert_uint_eq(k.traffic[0][1].skipped_reads, 0);
    const char *orders[] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };
    for (unsigned o = 0; o < 6; o++) {
        tessel_result x = so_run(orders[o], 1u << 2, 1u << 1, 0, TEST_HAND_EXACT);
        tessel_result t = so_run(orders[o], 1u << 2, 1u << 1, 0, TEST_HAND_STAT);
        for (unsigned q = 1; q < 3; q++) {
            ck_assert_uint_eq(t.traffic[0][q].skipped_reads, x.traffic[0][q].skipped_reads);
            ck_assert_uint_eq(t.traffic[0][q].skipped_metadata_bytes,
                              x.traffic[0][q].skipped_metadata_bytes);
        }
    }
}
END_TEST

/* Three levels, the action at the middle one: the LLB holds the whole
 * 4x4x4 problem in one tile and PEB takes 2x2x2 tiles, IJK. Boundary
 * LLB -> PEB is then the two-level walk above (one effectual LLB tile
 * iteration around it), so the LLB skips what DRAM skips there: A 1 read
 * and 2 format bytes, B 3 and 6; nothing at DRAM or PEB. Under exact and
 * stat (nested levels: the walk). */
START_TEST(outer_nested_by_hand)
{
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 4, 4, 4, 0 /* coo */, 8, 8);
    s.level[2] = s.level[1];
    snprintf(s.level[2].name, sizeof(s.level[2].name), "PEB");
    s.level[2].tile[0] = s.level[2].tile[1] = s.level[2].tile[2] = 2;
    s.nlevels = 3;
    s.level[1].tensor[1].sparse.scalar_skip_on = 1u << 2;
    s.level[1].tensor[2].sparse.scalar_skip_on = 1u << 1;
    for (int est = TEST_HAND_EXACT; est <= TEST_HAND_STAT; est++) {
        tessel_result r = test_hand_run(&s, 4, 4, 4, so_a, 3, so_b, 3, est, 0);
        ck_assert_uint_eq(r.macs, 5);
        ck_assert_uint_eq(r.traffic[1][1].skipped_reads, 1);
        ck_assert_uint_eq(r.traffic[1][1].skipped_metadata_bytes, 2);
        ck_assert_uint_eq(r.traffic[1][2].skipped_reads, 3);
        ck_assert_uint_eq(r.traffic[1][2].skipped_metadata_bytes, 6);
        for (unsigned l = 0; l < 3; l += 2)
            ck_assert_uint_eq(r.traffic[l][1].skipped_reads + r.traffic[l][2].skipped_reads, 0);
    }
}
END_TEST

static tessel_spec *so_parse(const char *actions, tessel_diag_list *l, int *rc)
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
             "    - name: DRAM\n"
             "      class: DRAM\n"
             "      action_optimization: %s\n"
             "    - {name: LLB, class: SRAM, capacity: 1MiB}\n"
             "mapping:\n"
             "  LLB: {order: [m, n, k]}\n",
             actions);
    return test_hand_parse(text, l, rc);
}

/* The key above the innermost level: an input's entries are taken; the
 * output's (its read-backs are not built) and the errors of any level name
 * line 11 (the key's value), its column and the field. */
START_TEST(outer_spec)
{
    tessel_diag_list l;
    int rc;
    tessel_spec *s = so_parse("[{type: skipping, target: A, condition_on: [B]}, "
                              "{type: gating, target: B, condition_on: [A]}]",
                              &l, &rc);
    ck_assert_msg(rc == 0, "%s", l.count ? l.items[0].message : "");
    int a = tessel_spec_tensor_index(s, "A"), b = tessel_spec_tensor_index(s, "B");
    ck_assert_uint_eq(s->level[0].tensor[a].sparse.scalar_skip_on, 1u << b);
    ck_assert_uint_eq(s->level[0].tensor[b].sparse.scalar_gate_on, 1u << a);
    tessel_spec_free(&s);
    tessel_diag_list_free(&l);
    const char *bad[] = { "[{type: skipping, target: Z, condition_on: [A, B]}]",
                          "[{type: skipping, target: A, condition_on: [A]}]",
                          "[{type: skipping, target: A, condition_on: [Q]}]" };
    for (unsigned i = 0; i < 3; i++) {
        s = so_parse(bad[i], &l, &rc);
        ck_assert_msg(rc != 0 && l.count >= 1, "%s was accepted", bad[i]);
        ck_assert_uint_gt(l.items[0].column, 0);
        test_hand_refused(bad[i], rc, &s, &l, 11, "action_optimization");
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scalar_outer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, outer_skipping_by_hand);
    tcase_add_test(tc, outer_gating_and_stationary_by_hand);
    tcase_add_test(tc, outer_walks_agree);
    tcase_add_test(tc, outer_stat_by_hand);
    tcase_add_test(tc, outer_nested_by_hand);
    tcase_add_test(tc, outer_stat_orders);
    tcase_add_test(tc, outer_spec);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

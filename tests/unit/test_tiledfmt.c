/* Rank order and tiled-csf (issue 26 items 1-2; docs/spec.md `rank_order`,
 * `format: tiled-csf`), hand-counted on 4x4 matrices with 8-bit values,
 * coordinates and offsets. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "tessel/stats.h"
#include "tessel/tensor.h"
#include "test_specs.h"
#include "test_data.h"
#include "test_hand.h"

/* A: (0,0) (1,0) (1,2) (3,3); B: (0,0) (0,1) (2,3). */
static const uint32_t ta[4][2] = { { 0, 0 }, { 1, 0 }, { 1, 2 }, { 3, 3 } };
static const uint32_t tb[3][2] = { { 0, 0 }, { 0, 1 }, { 2, 3 } };

static tessel_result run(tessel_spec *s, int expect_rc)
{
    return test_hand_run(s, 4, 4, 4, ta, 4, tb, 3, TEST_HAND_EXACT, expect_rc);
}

/* LLB tiles i 4, k 4, j 2 under IJK: A is one tile, B two k 4 x j 2 tiles,
 * each filled once: j tile 0 holds (0,0) (0,1), j tile 1 holds (2,3).
 * B's format at the LLB is `format`, its ranks in the order (j, k) when
 * swap is set. */
static tessel_result rank_run(int format, const unsigned char *ranks, int swap)
{
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 4, 4, 2, format, 8, 8);
    tessel_spec_tensor_level *bt = &s.level[1].tensor[2];
    if (ranks) {
        bt->format = TESSEL_SPEC_FORMAT_RANKS;
        bt->nranks = 2;
        memcpy(bt->ranks, ranks, 2);
    }
    if (swap) {
        bt->nrank_order = 2;
        bt->rank_order[0] = 1; /* j */
        bt->rank_order[1] = 2; /* k */
    }
    tessel_result r = run(&s, 0);
    ck_assert_uint_eq(r.traffic[1][2].fills, 2);
    ck_assert_uint_eq(r.traffic[1][2].in_data, 3);
    return r;
}

/* csr: (rank-0 extent + 1) offsets, then a coordinate per nonzero.
 * k first: 5 offsets x 8 = 40 bits per tile; tile 0: 40 + 2 x 8 = 56 bits
 * = 7 B, tile 1: 48 bits = 6 B: 13 B. j first: 3 offsets = 24 bits;
 * 24 + 16 = 40 bits = 5 B and 32 bits = 4 B: 9 B. */
START_TEST(rank_order_moves_csr_offsets)
{
    ck_assert_uint_eq(rank_run(1, NULL, 0).traffic[1][2].in_metadata, 13);
    ck_assert_uint_eq(rank_run(1, NULL, 1).traffic[1][2].in_metadata, 9);
    /* [UOP, CP] is csr in either order */
    const unsigned char uop_cp[2] = { TESSEL_RANK_UOP, TESSEL_RANK_CP };
    ck_assert_uint_eq(rank_run(0, uop_cp, 0).traffic[1][2].in_metadata, 13);
    ck_assert_uint_eq(rank_run(0, uop_cp, 1).traffic[1][2].in_metadata, 9);
}
END_TEST

/* [CP, CP] counts the non-empty rank-0 fibres: by k, tile 0 has one (k 0),
 * by j two (j 0, 1); tile 1 one either way. Bits: fibres x coord + (fibres
 * + 1) x offset + nonzeros x coord. k first: 8 + 16 + 16 = 40 (5 B) and
 * 8 + 16 + 8 = 32 (4 B): 9 B. j first: 16 + 24 + 16 = 56 (7 B) + 4 B: 11 B. */
START_TEST(rank_order_counts_other_fibres)
{
    const unsigned char cp_cp[2] = { TESSEL_RANK_CP, TESSEL_RANK_CP };
    ck_assert_uint_eq(rank_run(0, cp_cp, 0).traffic[1][2].in_metadata, 9);
    ck_assert_uint_eq(rank_run(0, cp_cp, 1).traffic[1][2].in_metadata, 11);
}
END_TEST

/* DRAM -> LLB (one tile) -> PE (2 x 2 x 2 tiles), A tiled-csf at the LLB.
 * A's 2x2 inner tiles: (0,0) holds (0,0) (1,0): rows 0 and 1, two row
 * segments; (0,1) holds (1,2): one; (1,1) holds (3,3): one. Three inner
 * tiles, four segments, four nonzeros: 3 x (2 x 8 + 8) + 4 x (8 + 8) +
 * 4 x 8 = 72 + 64 + 32 = 168 bits = 21 B of metadata, 4 B of values. With
 * the ranks along k first, the segments are k 0 | k 2 | k 3: three, and
 * 72 + 48 + 32 = 152 bits = 19 B. */
static tessel_spec tiled_spec(unsigned levels, int swap)
{
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 0, 0, 0, 1, 8, 8);
    if (levels == 3) {
        s.nlevels = 3;
        s.level[2] = s.level[1];
        snprintf(s.level[2].name, sizeof(s.level[2].name), "PE");
        s.level[2].tile[0] = s.level[2].tile[1] = s.level[2].tile[2] = 2;
    }
    s.level[1].tensor[1].format = TESSEL_SPEC_FORMAT_TILED_CSF;
    if (swap) {
        s.level[1].tensor[1].nrank_order = 2;
        s.level[1].tensor[1].rank_order[0] = 2; /* k */
        s.level[1].tensor[1].rank_order[1] = 0; /* i */
    }
    return s;
}

START_TEST(tiled_csf_counts_inner_tiles_and_segments)
{
    tessel_spec s = tiled_spec(3, 0);
    tessel_result r = run(&s, 0);
    ck_assert_uint_eq(r.traffic[1][1].fills, 1);
    ck_assert_uint_eq(r.traffic[1][1].in_data, 4);
    ck_assert_uint_eq(r.traffic[1][1].in_metadata, 21);
    s = tiled_spec(3, 1);
    r = run(&s, 0);
    ck_assert_uint_eq(r.traffic[1][1].in_metadata, 19);
    /* B keeps csr at the LLB: 5 offsets + 3 coordinates = 64 bits */
    ck_assert_uint_eq(r.traffic[1][2].in_metadata, 8);
}
END_TEST

/* The output Z = A.B in tiled-csf at the LLB over the PE's 2x2 tiles.
 * Z row 0: A(0,0) x B(0,0), B(0,1) -> (0,0) (0,1); row 1: A(1,0) -> (1,0)
 * (1,1), A(1,2) x B(2,3) -> (1,3); row 3: A(3,3) meets B's empty row 3.
 * Five nonzeros; inner tile (0,0) holds rows 0 and 1 (two segments),
 * inner tile (0,1) holds (1,3) (one): 2 x (2 x 8 + 8) + 3 x (8 + 8) +
 * 5 x 8 = 48 + 48 + 40 = 136 bits = 17 B of metadata, 5 B of values. */
static tessel_spec out_tiled_spec(const char *order, uint64_t ti, uint64_t tk)
{
    tessel_spec s = tiled_spec(3, 0);
    s.level[1].tensor[1].format = -1;
    s.level[1].tensor[0].format = TESSEL_SPEC_FORMAT_TILED_CSF;
    s.level[1].tile[0] = ti;
    s.level[1].tile[2] = tk;
    for (unsigned p = 0; p < 3; p++)
        s.level[1].order[p] = order[p] == 'I' ? 0 : order[p] == 'J' ? 1 : 2;
    return s;
}

START_TEST(tiled_csf_output_written_once)
{
    tessel_spec s = out_tiled_spec("IJK", 0, 0);
    tessel_result r = run(&s, 0);
    ck_assert_uint_eq(r.traffic[1][0].out_data, 5);
    ck_assert_uint_eq(r.traffic[1][0].out_metadata, 17);
    ck_assert_uint_eq(r.traffic[1][0].in_data, 0);
    ck_assert_uint_eq(r.traffic[1][0].in_metadata, 0);
}
END_TEST

/* LLB tiles i 2, k 2 (j whole) in the order KIJ, A with (2,1) added (B's
 * row 1 is empty: Z is unchanged). k tile 0 visits Z's row tile i 0
 * (A(0,0), A(1,0)), then i 1 (A(2,1)), so i 0 goes back holding (0,0)
 * (0,1) (1,0) (1,1): one inner tile, two segments, four nonzeros: 24 + 32
 * + 32 = 88 bits = 11 B, 4 B of values. k tile 1 reads it back and adds
 * (1,3) (A(1,2)); A(3,3) then makes i 1 resident and i 0 goes back final:
 * 17 B and 5 B. Row tile i 1 never holds a nonzero: 0 B. */
static const uint32_t ta2[5][2] = { { 0, 0 }, { 1, 0 }, { 1, 2 }, { 2, 1 }, { 3, 3 } };

START_TEST(tiled_csf_output_partials)
{
    tessel_spec s = out_tiled_spec("KIJ", 2, 2);
    tessel_result r = test_hand_run(&s, 4, 4, 4, ta2, 5, tb, 3, TEST_HAND_EXACT, 0);
    ck_assert_uint_eq(r.traffic[1][0].out_data, 4 + 5);
    ck_assert_uint_eq(r.traffic[1][0].out_metadata, 11 + 17);
    ck_assert_uint_eq(r.traffic[1][0].in_data, 4);
    ck_assert_uint_eq(r.traffic[1][0].in_metadata, 11);
}
END_TEST

/* At the innermost level there are no inner tiles to store it in; the
 * output in a swapped rank order (its segments would run along j) is not
 * counted: refused with the reason. */
START_TEST(tiled_csf_refusals)
{
    tessel_spec s = tiled_spec(2, 0);
    run(&s, TESSEL_EUNSUPPORTED);
    s = out_tiled_spec("IJK", 0, 0);
    s.level[1].tensor[0].nrank_order = 2;
    s.level[1].tensor[0].rank_order[0] = 1; /* j */
    s.level[1].tensor[0].rank_order[1] = 0; /* i */
    run(&s, TESSEL_EUNSUPPORTED);
}
END_TEST

/* The spec key: every index once, errors at the offending item. */
static tessel_spec *parse(const char *rank_order, tessel_diag_list *l, int *rc)
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
             "      tensors:\n"
             "        B: {format: tiled-csf, rank_order: %s}\n",
             rank_order);
    return test_hand_parse(text, l, rc);
}

START_TEST(rank_order_spec_key)
{
    tessel_diag_list l;
    int rc;
    tessel_spec *s = parse("[n, k]", &l, &rc);
    ck_assert_int_eq(rc, 0);
    const tessel_spec_tensor_level *bt = &s->level[1].tensor[2];
    ck_assert_int_eq(bt->format, TESSEL_SPEC_FORMAT_TILED_CSF);
    ck_assert_uint_eq(bt->nrank_order, 2);
    ck_assert_int_eq(bt->rank_order[0], tessel_spec_index(s, "n"));
    ck_assert_int_eq(bt->rank_order[1], tessel_spec_index(s, "k"));
    ck_assert_uint_eq(bt->rank_order_pos.line, 14);
    tessel_spec_free(&s);
    tessel_diag_list_free(&l);
    const char *bad[] = { "[n, m]", "[k, k]", "[k]", "k" };
    const uint32_t col[] = { 48, 48, 44, 44 };
    for (unsigned i = 0; i < 4; i++) {
        s = parse(bad[i], &l, &rc);
        ck_assert_msg(rc != 0 && l.count >= 1, "%s was accepted", bad[i]);
        ck_assert_msg(l.items[0].column == col[i], "%s: column %u", bad[i],
                      (unsigned)l.items[0].column);
        test_hand_refused(bad[i], rc, &s, &l, 14, "rank_order");
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tiledfmt");
    TCase *tc = tcase_create("tiledfmt");
    tcase_add_test(tc, rank_order_moves_csr_offsets);
    tcase_add_test(tc, rank_order_counts_other_fibres);
    tcase_add_test(tc, tiled_csf_counts_inner_tiles_and_segments);
    tcase_add_test(tc, tiled_csf_output_written_once);
    tcase_add_test(tc, tiled_csf_output_partials);
    tcase_add_test(tc, tiled_csf_refusals);
    tcase_add_test(tc, rank_order_spec_key);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

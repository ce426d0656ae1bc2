/* Uncompressed outputs under the stat estimator (src/model/stat_dense.c,
 * docs/models/stat.md "Uncompressed outputs"): an output in [UB, UB] or
 * [UOP, UB] moves a whole tile per write-back and per read-back, and an
 * all-UB output at the innermost level is read by the compute before every
 * update but those at the first reduction coordinate. A hand-worked case,
 * then stat against exact in every order, at one and two buffer levels, with
 * the whole output sample and with a partial one; tiles that outgrow the
 * partition; then what stat refuses. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_data.h"
#include "test_specs.h"

static tessel_stat_options sample_of(double fraction)
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = fraction;
    o.output_min_flops = 0; /* a partial sample even of these small products */
    return o;
}

static int bit(unsigned m, unsigned l)
{
    return (int)(m >> l & 1u);
}

/* Z's rows against exact's where stat prices them exactly. `dense` has bit
 * l set when Z is uncompressed at level l. A level's own moves (write-backs,
 * read-backs, their bytes, the largest tile, rule 4) are exact where Z is
 * uncompressed there, level 0's where level 1's are; the child-side ones
 * (reads, child_read_data, child_write_data) where the child level's are,
 * or at the innermost level where the compute's reads are (Z uncompressed
 * there). The other levels price a compressed Z from the output sample,
 * equal to exact's with the whole sample (`whole`) but for the largest tile,
 * which stat does not estimate under nested levels. */
static void assert_same(const tessel_result *x, const tessel_result *s, unsigned dense,
                        int whole, const char *what)
{
    unsigned L = x->nlevels - 1;
    dense |= (unsigned)bit(dense, 1);
    for (unsigned l = 0; l <= L; l++) {
        const tessel_traffic *a = &x->traffic[l][0], *b = &s->traffic[l][0];
        const uint64_t va[] = { a->writebacks, a->updates, a->data_bytes, a->metadata_bytes,
                                a->in_data, a->out_data, a->in_metadata, a->out_metadata,
                                a->bumped_bytes, a->worst_tile_bytes, a->reads,
                                a->child_read_data, a->child_write_data };
        const uint64_t vb[] = { b->writebacks, b->updates, b->data_bytes, b->metadata_bytes,
                                b->in_data, b->out_data, b->in_metadata, b->out_metadata,
                                b->bumped_bytes, b->worst_tile_bytes, b->reads,
                                b->child_read_data, b->child_write_data };
        int own = bit(dense, l), child = l < L ? bit(dense, l + 1) : own;
        for (unsigned f = 0; f < sizeof(va) / sizeof(va[0]); f++) {
            int sure = f < 10 ? own || (whole && f != 9) : child || whole;
            ck_assert_msg(!sure || va[f] == vb[f], "%s: level %u Z field %u: exact %llu, stat %llu",
                          what, l, f, (unsigned long long)va[f], (unsigned long long)vb[f]);
        }
    }
    if (bit(dense, 1) || whole)
        ck_assert_msg(x->dram_bytes == s->dram_bytes, "%s: dram exact %llu stat %llu", what,
                      (unsigned long long)x->dram_bytes, (unsigned long long)s->dram_bytes);
    ck_assert_uint_eq(x->macs, s->macs);
}

/* docs/semantics.md's read-modify-write example, tiled: A = {(0,0) (1,0)
 * (1,2)}, B = {(0,1) (0,3) (2,0)}, 4x4; LLB tiles i:2 j:2 k:2 in order KIJ,
 * Z in [UB, UB] with 32-bit values and 8-bit metadata. A's non-empty tiles
 * are (I0,K0) and (I0,K1); B's (K0,J0), (K0,J1) and (K1,J0). The effectual
 * iterations visit Z(0,0), Z(0,1), then at K1 Z(0,0) again: 3 write-backs
 * (Z(0,0) leaving, Z(0,1) leaving, Z(0,0) at the end) and 1 read-back (Z(0,0),
 * written back before). A 2x2 tile is 4 x 32 bits = 16 B of data and 2 + 2
 * x 2 = 6 mask bits = 1 B of metadata, whatever it holds: out 3 x 16 B, in 1
 * x 16 B, 64 + 4 B at the LLB. The compute makes 5 multiplies, 4 of them at
 * k = 0 (A's column 0, 2 nonzeros, times B's row 0, 2): Z is read 5 - 4 = 1
 * time there. stat and exact agree on all of it. */
START_TEST(hand_worked_kij)
{
    static const uint32_t ea[3][2] = { { 0, 0 }, { 1, 0 }, { 1, 2 } };
    static const uint32_t eb[3][2] = { { 0, 1 }, { 0, 3 }, { 2, 0 } };
    tessel_tensor *a = test_coo_matrix(4, 4, 0, ea, 3), *b = test_coo_matrix(4, 4, 0, eb, 3);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_stat_options o = sample_of(1);
    o.base[0] = o.base[1] = 2;
    tessel_spec s;
    test_spec_spmspm(&s, "KIJ", 2, 2, 2, 1, 32, 8);
    test_set_ranks(&s.level[1].tensor[0], TESSEL_RANK_UB, TESSEL_RANK_UB);
    tessel_result r, x;
    tessel_diag diag;
    ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &r, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_exact(&s, &d, NULL, &x, &diag) == 0, "%s", diag.message);
    for (unsigned q = 0; q < 2; q++) {
        const tessel_result *res = q ? &x : &r;
        const tessel_traffic *z = &res->traffic[1][0];
        ck_assert_uint_eq(res->macs, 5);
        ck_assert_uint_eq(z->writebacks, 3);
        ck_assert_uint_eq(z->updates, 1);
        ck_assert_uint_eq(z->out_data, 48);
        ck_assert_uint_eq(z->in_data, 16);
        ck_assert_uint_eq(z->data_bytes, 64);
        ck_assert_uint_eq(z->metadata_bytes, 4);
        ck_assert_uint_eq(z->worst_tile_bytes, 17);
        ck_assert_uint_eq(z->reads, 1);
        ck_assert_uint_eq(res->traffic[0][0].data_bytes, 64); /* the DRAM side of the same moves */
    }
    assert_same(&x, &r, 2u, 1, "hand-worked KIJ");
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

static const char *const orders[6] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };

/* One point of the sweep below: Z in list `lz` at the LLB (f & 1) and at a
 * nested PE level (f & 2), csr elsewhere. */
static void compare_point(const tessel_workload_data *d, const tessel_stat_options *o,
                          const char *order, const uint64_t *shape, int nested, unsigned f,
                          const unsigned char *lz, unsigned *estimated)
{
    tessel_spec s;
    test_spec_spmspm(&s, order, shape[0], shape[1], shape[2], 1, 32, 16);
    if (f & 1)
        test_set_ranks(&s.level[1].tensor[0], lz[0], lz[1]);
    if (nested) {
        test_spec_nest(&s, "PE", 8);
        s.level[2].tensor[0].format = -1;
        if (f & 2)
            test_set_ranks(&s.level[2].tensor[0], lz[0], lz[1]);
    }
    tessel_result r, x;
    tessel_diag diag;
    char what[96];
    snprintf(what, sizeof(what), "[%u, %u] where %u, %s shape %llu nested %d", lz[0], lz[1], f,
             order, (unsigned long long)shape[0], nested);
    ck_assert_msg(tessel_model_stat(&s, d, o, NULL, &r, &diag) == 0, "%s: %s", what,
                  diag.message);
    ck_assert_msg(tessel_model_exact(&s, d, NULL, &x, &diag) == 0, "%s: %s", what, diag.message);
    unsigned dense = (f & 1u) << 1 | (nested && (f & 2u) ? 4u : 0u);
    for (unsigned l = 1; l < s.nlevels; l++) /* a compressed Z's bytes from the sample */
        *estimated += !bit(dense, l) && r.traffic[l][0].out_data != x.traffic[l][0].out_data;
    assert_same(&x, &r, dense, o->output_fraction >= 1, what);
}

/* stat equals exact on Z's rows in every order at two tile shapes, [UB, UB]
 * and [UOP, UB], at one buffer level and under a nested PE level (Z
 * uncompressed at the LLB, at the PE, or at both), with the whole output
 * sample and with a partial one (10 %): the counts come from the input
 * tiles, not from the output's nonzeros. */
START_TEST(equal_exact_every_order)
{
    tessel_tensor *a = test_band_matrix(96, 80, 1, 2, 9), *b = test_band_matrix(80, 72, 2, 2, 9);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    static const unsigned char lists[2][2] = { { TESSEL_RANK_UB, TESSEL_RANK_UB },
                                               { TESSEL_RANK_UOP, TESSEL_RANK_UB } };
    static const uint64_t shapes[2][3] = { { 32, 16, 24 }, { 0, 40, 16 } };
    static const double fractions[2] = { 1, 0.1 };
    for (unsigned fr = 0; fr < 2; fr++) {
        tessel_stat_options o = sample_of(fractions[fr]);
        unsigned estimated = 0;
        for (unsigned li = 0; li < 2; li++)
            for (unsigned n = 0; n < 2; n++)
                for (unsigned q = 0; q < 6; q++) {
                    compare_point(&d, &o, orders[q], shapes[n], 0, 1, lists[li], &estimated);
                    for (unsigned f = 1; f < 4; f++)
                        compare_point(&d, &o, orders[q], shapes[n], 1, f, lists[li],
                                      &estimated);
                }
        /* under the partial sample a compressed Z's bytes are estimates (so
         * the equality above does not come from a whole sample) */
        ck_assert_msg(fr ? estimated > 0 : estimated == 0, "sample %g: %u points estimated",
                      fractions[fr], estimated);
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* A tile larger than Z's partition (rule 4): 32x24 tiles of 32-bit values
 * are 3072 + 100 B over a 2 KiB partition, so every write-back overflows.
 * The closed form prices the spill of a tile whose bytes are fixed: equal
 * to exact's where each spill streams the whole excess at a visit's end or
 * once per step (IJK, JIK, IKJ, JKI), within 2 % where the compute's steps
 * inside a visit decide it (KIJ, KJI: the visit's k band, estimated). */
START_TEST(overflow_priced)
{
    tessel_tensor *a = test_band_matrix(96, 80, 1, 2, 9), *b = test_band_matrix(80, 72, 2, 2, 9);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    for (unsigned fr = 0; fr < 2; fr++)
        for (unsigned q = 0; q < 6; q++) {
            tessel_stat_options o = sample_of(fr ? 1 : 0.1);
            tessel_spec s;
            test_spec_spmspm(&s, orders[q], 32, 16, 24, 1, 32, 16);
            test_set_ranks(&s.level[1].tensor[0], TESSEL_RANK_UB, TESSEL_RANK_UB);
            s.level[1].capacity = 1u << 20;
            s.level[1].tensor[0].partition_bytes = 2048;
            tessel_result r, x;
            tessel_diag diag;
            ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &r, &diag) == 0, "%s", diag.message);
            ck_assert_msg(tessel_model_exact(&s, &d, NULL, &x, &diag) == 0, "%s", diag.message);
            const tessel_traffic *zs = &r.traffic[1][0], *zx = &x.traffic[1][0];
            ck_assert_uint_eq(zs->overflow_tiles, zx->writebacks);
            ck_assert_uint_eq(zs->overflow_tiles, zx->overflow_tiles);
            ck_assert_uint_eq(zs->worst_tile_bytes, 3172);
            if (orders[q][0] != 'K') {
                assert_same(&x, &r, 2u, 0, orders[q]);
                continue;
            }
            ck_assert_uint_gt(zx->bumped_bytes, 0);
            double rel = ((double)zs->bumped_bytes - (double)zx->bumped_bytes) /
                         (double)zx->bumped_bytes;
            ck_assert_msg(rel > -0.02 && rel < 0.02, "%s: bumped exact %llu stat %llu",
                          orders[q], (unsigned long long)zx->bumped_bytes,
                          (unsigned long long)zs->bumped_bytes);
            ck_assert_uint_eq(zs->writebacks, zx->writebacks);
            ck_assert_uint_eq(zs->updates, zx->updates);
        }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* [CP, CP] Z keeps its refusal (its tiles' non-empty rows). */
START_TEST(refuses_with_reason)
{
    tessel_tensor *a = test_band_matrix(64, 64, 3, 2, 9);
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 16, 16, 16, 1, 32, 32);
    test_set_ranks(&s.level[1].tensor[0], TESSEL_RANK_CP, TESSEL_RANK_CP);
    tessel_result r;
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_stat(&s, &d, NULL, NULL, &r, &diag), TESSEL_EUNSUPPORTED);
    ck_assert_msg(strstr(diag.message, "needs each output tile's non-empty rows"), "%s",
                  diag.message);
    tessel_tensor_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stat_dense");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, hand_worked_kij);
    tcase_add_test(tc, equal_exact_every_order);
    tcase_add_test(tc, overflow_priced);
    tcase_add_test(tc, refuses_with_reason);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

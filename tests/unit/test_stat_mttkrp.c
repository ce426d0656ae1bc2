/* MTTKRP's closed sums under the stat estimator (src/model/stat_mttkrp.c):
 * at one buffer level, in every loop order, stat_path is closed, and with
 * the whole output in the sample every count equals the exact
 * estimator's (with i and r outside j and k each output tile is one run;
 * in the other orders a tile has several runs, each written back at its
 * last reduction step and read back by the next); gated inputs and an
 * output that outgrows its partition keep the walk; a failed allocation
 * at any step of a closed point is ENOMEM or the unfailed result
 * (test_stat_fail_each) and leaks nothing. At two
 * buffer levels (DRAM -> LLB -> PEB) every level is closed in every pair
 * of loop orders, equal to exact field by field, and a gated input or a
 * spilling output at the inner level keeps the walk there. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "tessel/model.h"
#include "test_alloc.h"
#include "test_data.h"
#include "test_specs.h"
#include "test_stat_oom.h"

/* The bundled bitcoin-otc 3-tensor (6000 x 6005 x 272) times two sparse
 * banded factor matrices of rank 24 (B 1/7 of its positions, C 1/3): empty
 * factor tiles drop iterations. */
typedef struct mk_data {
    tessel_tensor *t, *b, *c;
    tessel_workload_data d;
} mk_data;

static void mk_load(mk_data *m)
{
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    tessel_diag diag;
    m->t = NULL;
    int rc = tessel_tensor_load("examples/data/bitcoin-otc_src-dst-week.tns.gz", &opt, NULL,
                                &m->t, NULL, &diag);
    ck_assert_msg(rc == 0, "%s", diag.message);
    m->b = test_band_matrix(m->t->dims[1], 24, 7, 2, 7);
    m->c = test_band_matrix(m->t->dims[2], 24, 11, 1, 3);
    memset(&m->d, 0, sizeof(m->d));
    m->d.ntensors = 4;
    m->d.tensor[1] = m->t;
    m->d.tensor[2] = m->b;
    m->d.tensor[3] = m->c;
    m->d.extent[0] = m->t->dims[0];
    m->d.extent[1] = 24;
    m->d.extent[2] = m->t->dims[1];
    m->d.extent[3] = m->t->dims[2];
}

static void mk_free(mk_data *m)
{
    tessel_tensor_free(&m->t);
    tessel_tensor_free(&m->b);
    tessel_tensor_free(&m->c);
}

static tessel_result run(const tessel_spec *s, const tessel_workload_data *d, int stat)
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1; /* the whole output in the sample */
    o.base[0] = 32;
    o.base[1] = 4;
    tessel_result r;
    tessel_diag diag;
    int rc = stat ? tessel_model_stat(s, d, &o, NULL, &r, &diag)
                  : tessel_model_exact(s, d, NULL, &r, &diag);
    ck_assert_msg(rc == 0, "%s: %s", stat ? "stat" : "exact", diag.message);
    return r;
}

/* Every traffic count of every level and tensor, and the totals. */
static void assert_equal(const tessel_result *x, const tessel_result *r, const char *what)
{
    for (unsigned l = 0; l < x->nlevels; l++)
        for (unsigned t = 0; t < x->ntensors; t++) {
            const uint64_t *a = (const uint64_t *)&x->traffic[l][t];
            const uint64_t *b = (const uint64_t *)&r->traffic[l][t];
            for (unsigned f = 0; f < sizeof(tessel_traffic) / sizeof(uint64_t); f++)
                ck_assert_msg(a[f] == b[f], "%s: level %u tensor %u field %u: exact %llu, stat %llu",
                              what, l, t, f, (unsigned long long)a[f], (unsigned long long)b[f]);
        }
    ck_assert_uint_eq(x->macs, r->macs);
    ck_assert_uint_eq(x->output_nnz, r->output_nnz);
    for (unsigned l = 1; l < x->nlevels; l++)
        ck_assert_uint_eq(x->effectual_tiles[l], r->effectual_tiles[l]);
    ck_assert_uint_eq(x->intersections, r->intersections);
    ck_assert_uint_eq(x->overflow_tiles, r->overflow_tiles);
    ck_assert_msg(x->dram_bytes == r->dram_bytes, "%s: dram exact %llu, stat %llu", what,
                  (unsigned long long)x->dram_bytes, (unsigned long long)r->dram_bytes);
    ck_assert_uint_eq(x->compulsory_bytes, r->compulsory_bytes);
}

/* tile edges i r j k (0 = the whole mode), on the statistics grid: i, j
 * and k (C's rows) multiples of 32, r of 4 */
static const uint64_t shapes[][4] = {
    { 512, 8, 256, 64 }, { 1024, 24, 1024, 128 }, { 128, 4, 512, 32 }, { 0, 12, 2048, 32 },
    { 256, 24, 0, 96 },
};

/* The 24 loop orders, I R J K of the spec's workload. */
static void all_orders(char out[24][5])
{
    static const char letters[4] = { 'I', 'R', 'J', 'K' };
    unsigned n = 0;
    for (unsigned p = 0; p < 256; p++) {
        unsigned q[4] = { p & 3, p >> 2 & 3, p >> 4 & 3, p >> 6 & 3 }, used = 0;
        for (unsigned d = 0; d < 4; d++)
            used |= 1u << q[d];
        if (used != 15)
            continue;
        for (unsigned d = 0; d < 4; d++)
            out[n][d] = letters[q[d]];
        out[n++][4] = 0;
    }
    ck_assert_uint_eq(n, 24);
}

/* Every loop order, closed and equal to exact on the five shapes. In the orders with j or k
 * outside i or r an output tile is visited in several runs. */
START_TEST(every_order_equal_exact)
{
    mk_data m;
    mk_load(&m);
    char orders[24][5];
    all_orders(orders);
    unsigned several = 0;
    for (unsigned n = 0; n < sizeof(shapes) / sizeof(shapes[0]); n++)
        for (unsigned q = 0; q < 24; q++) {
            tessel_spec s;
            test_spec_mttkrp(&s, orders[q], shapes[n]);
            char what[64];
            snprintf(what, sizeof(what), "%s shape %u", orders[q], n);
            tessel_result x = run(&s, &m.d, 0), r = run(&s, &m.d, 1);
            ck_assert_msg(!r.stat_walked, "%s walked", what);
            assert_equal(&x, &r, what);
            several += x.traffic[1][0].updates > 0;
        }
    ck_assert_uint_gt(several, 40); /* read-backs: tiles with several runs */
    mk_free(&m);
}
END_TEST

/* A loop of one tile is no loop: IJKR with r one tile is RIJK (one run
 * per output tile); with two r tiles, r is inside j and k, and each
 * (i, j, k) tile iteration is a run of its own. Both closed. */
START_TEST(single_r_tile_is_outermost)
{
    mk_data m;
    mk_load(&m);
    const uint64_t one[4] = { 512, 24, 256, 64 }, two[4] = { 512, 12, 256, 64 };
    for (unsigned v = 0; v < 2; v++) {
        tessel_spec s;
        test_spec_mttkrp(&s, "IJKR", v ? two : one);
        tessel_result x = run(&s, &m.d, 0), r = run(&s, &m.d, 1);
        ck_assert(!r.stat_walked);
        ck_assert_int_eq(x.traffic[1][0].updates > 0, v);
        assert_equal(&x, &r, v ? "IJKR two r tiles" : "IJKR one r tile");
    }
    mk_free(&m);
}
END_TEST

/* An input that gates on a partner instead of skipping walks iterations
 * with an empty partner: the walk, with exact's counts. */
START_TEST(gated_input_walks)
{
    mk_data m;
    mk_load(&m);
    static const char *const orders[] = { "IRJK", "JKIR", "KRJI" };
    for (unsigned q = 0; q < 3; q++) {
        tessel_spec s;
        test_spec_mttkrp(&s, orders[q], shapes[0]);
        s.level[1].tensor[2].sparse.skip_on = 1u << 1; /* B skips on T, gates on C */
        s.level[1].tensor[2].sparse.gate_on = 1u << 3;
        tessel_result x = run(&s, &m.d, 0), r = run(&s, &m.d, 1);
        ck_assert_msg(r.stat_walked, "%s gated did not walk", orders[q]);
        assert_equal(&x, &r, orders[q]);
    }
    mk_free(&m);
}
END_TEST

/* A small buffer: inputs overflow their partitions (rule 4 per use) and
 * stay closed, equal to exact in the orders whose compute reads each input
 * once per use (IRJK, and JIRK with its several runs per output tile); an
 * output tile larger than Y's partition takes the walk, in any order. */
START_TEST(partitions)
{
    mk_data m;
    mk_load(&m);
    const uint64_t shape[4] = { 128, 4, 512, 32 };
    static const char *const small[] = { "IRJK", "JIRK" };
    tessel_spec s;
    for (unsigned q = 0; q < 2; q++) {
        test_spec_mttkrp(&s, small[q], shape);
        s.level[1].capacity = 24 * 1024;
        tessel_result x = run(&s, &m.d, 0), r = run(&s, &m.d, 1);
        ck_assert(!r.stat_walked);
        ck_assert_uint_gt(r.overflow_tiles, 0);
        assert_equal(&x, &r, small[q]);
    }
    const uint64_t wide[4] = { 0, 24, 256, 64 }; /* Y's tile is all of Y: 6000 x 24 */
    static const char *const spill[] = { "RIJK", "JKIR" };
    for (unsigned q = 0; q < 2; q++) {
        test_spec_mttkrp(&s, spill[q], wide);
        s.level[1].capacity = 48 * 1024;
        tessel_result r = run(&s, &m.d, 1);
        ck_assert_msg(r.stat_walked, "%s spilling did not walk", spill[q]);
    }
    mk_free(&m);
}
END_TEST

/* A small random 3-tensor 40 x 30 x 20 (about 1/16 of its positions). */
static tessel_tensor *small_tensor(void)
{
    uint64_t dims[3] = { 40, 30, 20 };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(3, dims, 0, NULL, &b, NULL), 0);
    uint32_t x = 5;
    for (uint32_t i = 0; i < 40; i++)
        for (uint32_t j = 0; j < 30; j++)
            for (uint32_t k = 0; k < 20; k++) {
                x = x * 1103515245u + 12345u;
                uint32_t e[3] = { i, j, k };
                if ((x >> 16) % 16 == 0)
                    ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

/* A PEB level inside s's LLB: its copy, with loop order `order` and tile
 * edges i r j k. */
static void nest_peb(tessel_spec *s, const char *order, const uint64_t *tile)
{
    unsigned l = s->nlevels++;
    s->level[l] = s->level[l - 1];
    snprintf(s->level[l].name, sizeof(s->level[l].name), "PEB");
    for (unsigned x = 0; x < 4; x++)
        s->level[l].tile[x] = tile[x];
    for (unsigned p = 0; p < 4; p++) {
        char c = order[p];
        s->level[l].order[p] = c == 'I' ? 0 : c == 'R' ? 1 : c == 'J' ? 2 : 3;
    }
}

/* (LLB, PEB) tile edges i r j k, each PEB edge dividing the LLB's (0:
 * the whole mode) and on the statistics grid */
static const uint64_t nested[][2][4] = {
    { { 1024, 24, 1024, 128 }, { 256, 8, 256, 32 } },
    { { 512, 8, 256, 64 }, { 128, 4, 64, 32 } },
    { { 0, 12, 2048, 96 }, { 512, 4, 512, 32 } },
    { { 256, 24, 0, 96 }, { 64, 12, 1024, 32 } },
};

/* Two buffer levels: every loop order at the LLB and at the PEB (paired
 * so that each shape sees all 24 at both), both levels closed and equal
 * to exact, with output tiles of several runs at the PEB. */
START_TEST(nested_every_order_equal_exact)
{
    mk_data m;
    mk_load(&m);
    char orders[24][5];
    all_orders(orders);
    unsigned several = 0;
    for (unsigned n = 0; n < sizeof(nested) / sizeof(nested[0]); n++)
        for (unsigned q = 0; q < 24; q++) {
            const char *outer = orders[q], *inner = orders[(7 * q + 5 * n + 3) % 24];
            tessel_spec s;
            test_spec_mttkrp(&s, outer, nested[n][0]);
            nest_peb(&s, inner, nested[n][1]);
            char what[64];
            snprintf(what, sizeof(what), "%s/%s shape %u", outer, inner, n);
            tessel_result x = run(&s, &m.d, 0), r = run(&s, &m.d, 1);
            ck_assert_msg(!r.stat_walked, "%s walked", what);
            assert_equal(&x, &r, what);
            several += x.traffic[2][0].updates > 0;
        }
    ck_assert_uint_gt(several, 20);
    mk_free(&m);
}
END_TEST

/* Two buffer levels with small partitions: inputs overbooked at the LLB,
 * whose excess the PEB's fills re-price (rule 4 per child read), closed
 * and equal to exact; a gated input at the PEB, or a PEB output tile
 * larger than its partition, walks. */
START_TEST(nested_partitions_and_walks)
{
    mk_data m;
    mk_load(&m);
    static const char *const orders[][2] = { { "IRJK", "IRJK" }, { "JIRK", "RIJK" } };
    const uint64_t llb[4] = { 512, 8, 1024, 64 }, peb[4] = { 128, 4, 256, 32 };
    tessel_spec s;
    for (unsigned q = 0; q < 2; q++) {
        test_spec_mttkrp(&s, orders[q][0], llb);
        nest_peb(&s, orders[q][1], peb);
        for (unsigned t = 1; t < 4; t++) /* T, B and C overbooked, Y fits */
            s.level[1].tensor[t].partition_bytes = 2048;
        tessel_result x = run(&s, &m.d, 0), r = run(&s, &m.d, 1);
        ck_assert(!r.stat_walked);
        for (unsigned t = 1; t < 4; t++)
            ck_assert_uint_gt(x.traffic[1][t].overflow_tiles, 0);
        assert_equal(&x, &r, orders[q][0]);
    }
    test_spec_mttkrp(&s, "IRJK", llb);
    nest_peb(&s, "KRJI", peb);
    s.level[2].tensor[2].sparse.skip_on = 1u << 1; /* B skips on T, gates on C */
    s.level[2].tensor[2].sparse.gate_on = 1u << 3;
    tessel_result x = run(&s, &m.d, 0), r = run(&s, &m.d, 1);
    ck_assert_msg(r.stat_walked, "gated PEB did not walk");
    assert_equal(&x, &r, "gated PEB");
    const uint64_t wide[4] = { 0, 24, 256, 64 };
    test_spec_mttkrp(&s, "RIJK", wide);
    nest_peb(&s, "JKIR", wide);
    s.level[2].capacity = 48 * 1024;
    r = run(&s, &m.d, 1);
    ck_assert_msg(r.stat_walked, "spilling PEB did not walk");
    mk_free(&m);
}
END_TEST

START_TEST(out_of_memory_every_allocation)
{
    mk_data m;
    m.t = small_tensor();
    m.b = test_band_matrix(30, 8, 3, 1, 4);
    m.c = test_band_matrix(20, 8, 9, 1, 3);
    memset(&m.d, 0, sizeof(m.d));
    m.d.ntensors = 4;
    m.d.tensor[1] = m.t;
    m.d.tensor[2] = m.b;
    m.d.tensor[3] = m.c;
    m.d.extent[0] = 40;
    m.d.extent[1] = 8;
    m.d.extent[2] = 30;
    m.d.extent[3] = 20;
    const uint64_t shape[4] = { 8, 4, 8, 4 };
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1;
    o.base[0] = 4;
    o.base[1] = 4;
    /* one run per output tile (RIKJ), and several (KJRI: j and k outside);
     * then two levels, a PEB of 4 x 4 x 4 x 4 inside (overbooked LLB
     * tiles: rule 4 per child read) */
    static const char *const orders[] = { "RIKJ", "KJRI", "IRJK", "JKRI" };
    const uint64_t peb[4] = { 4, 4, 4, 4 };
    for (unsigned q = 0; q < 4; q++) {
        tessel_spec s;
        test_spec_mttkrp(&s, orders[q], shape);
        if (q >= 2) {
            nest_peb(&s, orders[5 - q], peb);
            s.level[1].tensor[1].partition_bytes = 48; /* T's LLB tiles overbooked */
        }
        tessel_result x = run(&s, &m.d, 0);
        if (q < 2)
            ck_assert_int_eq(x.traffic[1][0].updates > 0, q);
        else
            ck_assert_uint_gt(x.traffic[1][1].overflow_tiles, 0);
        tessel_result r;
        ck_assert_int_gt(test_stat_fail_each(&s, &m.d, &o, &r), 0);
        ck_assert(!r.stat_walked);
        assert_equal(&x, &r, orders[q]);
    }
    mk_free(&m);
}
END_TEST

/* Output tiles that runs visit but no product reaches (mttkrp5): B's tile
 * row 0 holds only row 1, so T's nonzeros at j = 0 meet non-empty tiles
 * and multiply nothing; Y's i tile 0 stays empty and has no row in the
 * output table, while i tile 1 (T at j = 1) fills. In orders with j or k
 * outside i and r, each output tile has several runs: the empty tiles'
 * write-backs and read-backs are priced per run, the others per table
 * segment. Every order, equal to exact, with a network from DRAM of 3
 * values a cycle (the fills, counted per tile and priced at the end, carry
 * their network cycles); then every allocation failed in turn in KJRI (the
 * empty tiles' map among them). */
static tessel_tensor *empty_tiles_tensor(void)
{
    uint64_t dims[3] = { 8, 8, 8 };
    static const uint32_t e[][3] = { { 0, 0, 0 }, { 0, 0, 5 }, { 1, 0, 6 },
                                     { 5, 1, 0 }, { 5, 1, 5 }, { 6, 1, 6 } };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(3, dims, 0, NULL, &b, NULL), 0);
    for (size_t n = 0; n < sizeof(e) / sizeof(e[0]); n++)
        ck_assert_int_eq(tessel_coo_builder_add(b, e[n], 1.0), 0);
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

START_TEST(empty_output_tiles_equal_exact)
{
    uint32_t be[8][2], ce[16][2];
    for (uint32_t r = 0; r < 8; r++) {
        be[r][0] = 1; /* B: row 1 only */
        be[r][1] = r;
        ce[2 * r][0] = 0; /* C: rows 0, 5 */
        ce[2 * r][1] = r;
        ce[2 * r + 1][0] = 5;
        ce[2 * r + 1][1] = r;
    }
    mk_data m;
    m.t = empty_tiles_tensor();
    m.b = test_coo_matrix(8, 8, 0, (const uint32_t(*)[2])be, 8);
    m.c = test_coo_matrix(8, 8, 0, (const uint32_t(*)[2])ce, 16);
    memset(&m.d, 0, sizeof(m.d));
    m.d.ntensors = 4;
    m.d.tensor[1] = m.t;
    m.d.tensor[2] = m.b;
    m.d.tensor[3] = m.c;
    m.d.extent[0] = m.d.extent[1] = m.d.extent[2] = m.d.extent[3] = 8;
    const uint64_t shape[4] = { 4, 4, 4, 4 };
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1;
    o.base[0] = 4;
    o.base[1] = 4;
    char orders[24][5];
    all_orders(orders);
    unsigned again = 0;
    for (unsigned q = 0; q < 24; q++) {
        tessel_spec s;
        test_spec_mttkrp(&s, orders[q], shape);
        s.level[0].network_width = 3;
        tessel_result x = run(&s, &m.d, 0), r;
        tessel_diag diag;
        ck_assert_int_eq(tessel_model_stat(&s, &m.d, &o, NULL, &r, &diag), 0);
        ck_assert_msg(!r.stat_walked, "%s walked", orders[q]);
        ck_assert_uint_gt(x.output_nnz, 0);
        assert_equal(&x, &r, orders[q]);
        again += x.traffic[1][0].updates > 0;
        ck_assert_uint_gt(x.traffic[1][2].fill_network_cycles, 0);
    }
    ck_assert_uint_ge(again, 8); /* orders where output tiles are read back */
    tessel_spec s;
    test_spec_mttkrp(&s, "KJRI", shape);
    tessel_result x = run(&s, &m.d, 0);
    ck_assert_uint_gt(x.traffic[1][0].updates, 0);
    tessel_result r;
    ck_assert_int_gt(test_stat_fail_each(&s, &m.d, &o, &r), 0);
    assert_equal(&x, &r, "KJRI");
    mk_free(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_mttkrp");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, single_r_tile_is_outermost);
    tcase_add_test(tc, every_order_equal_exact);
    tcase_add_test(tc, gated_input_walks);
    tcase_add_test(tc, partitions);
    tcase_add_test(tc, nested_every_order_equal_exact);
    tcase_add_test(tc, nested_partitions_and_walks);
    tcase_add_test(tc, out_of_memory_every_allocation);
    tcase_add_test(tc, empty_output_tiles_equal_exact);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

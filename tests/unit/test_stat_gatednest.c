/* SpMSpM inputs that read or gate their tiles where the partner's tile is
 * empty, at nested buffer levels (src/model/stat_nested_gated.c): with the
 * whole output sample, stat's counts equal the exact estimator's field by
 * field at 2 and 3 buffer levels, in all six loop orders at each level,
 * several tile shapes (uneven, whole k, whole k and j) and skip / read /
 * gate pairs set per level, without walking; with a capped sample the
 * inputs stay exact and the output within the nested pass's tolerance;
 * where such an input's tile can overbook at a nested level the walk
 * prices the point. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_alloc.h"
#include "test_data.h"
#include "test_specs.h"
#include "test_stat_compare.h"
#include "test_stat_oom.h"

typedef struct nest_case {
    tessel_tensor *a, *b;
    tessel_workload_data d;
    tessel_stat_options o;
} nest_case;

/* jagmesh7 (1138 x 1138) times a random 1138 x 700 matrix (rows not
 * divisible by 5 only: whole empty tile rows), statistics on a 16 x 16
 * base grid with the whole output sample. */
static void case_init(nest_case *c)
{
    c->a = test_load_tensor("examples/data/jagmesh7.mtx.gz");
    uint64_t dims[2] = { c->a->dims[1], 700 };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    srand(17);
    for (uint32_t r = 0; r < dims[0]; r++)
        for (uint32_t col = 0; r % 5 && col < dims[1]; col++)
            if ((double)rand() / RAND_MAX < 0.002) {
                uint32_t e[2] = { r, col };
                ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &c->b, NULL), 0);
    tessel_coo_builder_free(&b);
    test_spmspm_data(&c->d, c->a, c->b);
    tessel_stat_options_init(&c->o);
    c->o.base[0] = c->o.base[1] = 16;
    c->o.output_fraction = 1;
}

static void case_free(nest_case *c)
{
    tessel_tensor_free(&c->a);
    tessel_tensor_free(&c->b);
}

static void set_order(tessel_spec_level *lv, const char *order)
{
    lv->has_mapping = 1;
    for (unsigned p = 0; p < 3; p++)
        lv->order[p] = order[p] == 'I' ? 0 : order[p] == 'J' ? 1 : 2;
}

/* A buffer level inside s's innermost one: order and tiles i, k, j. */
static void add_level(tessel_spec *s, const char *order, uint64_t ti, uint64_t tk, uint64_t tj)
{
    unsigned l = s->nlevels++;
    s->level[l] = s->level[l - 1];
    snprintf(s->level[l].name, sizeof(s->level[l].name), "L%u", l);
    s->level[l].tile[0] = ti;
    s->level[l].tile[1] = tj;
    s->level[l].tile[2] = tk;
    set_order(&s->level[l], order);
}

/* Input t's (1: A, 2: B) action on its partner's empty tiles at level l:
 * 0 skip, 1 read, 2 gate. */
static void set_mode(tessel_spec *s, unsigned l, unsigned t, unsigned mode)
{
    unsigned partner = t == 1 ? 4u : 2u;
    s->level[l].tensor[t].sparse.skip_on = mode ? 0 : partner;
    s->level[l].tensor[t].sparse.gate_on = mode == 2 ? partner : 0;
}


/* Tiles (i, k, j) per buffer level, outermost first (0: the whole mode):
 * even, uneven against 1138 and 700, whole k, whole k and j. */
typedef struct nest_shape {
    uint64_t t[3][3];
} nest_shape;
static const nest_shape shapes[] = {
    { { { 256, 256, 256 }, { 64, 64, 64 }, { 16, 16, 16 } } },
    { { { 96, 384, 160 }, { 32, 128, 32 }, { 16, 32, 16 } } },
    { { { 128, 0, 224 }, { 64, 0, 32 }, { 32, 0, 16 } } },
    { { { 512, 0, 0 }, { 128, 0, 0 }, { 16, 0, 0 } } },
};
static const char *const orders[] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };

/* The point of buffer levels 1 .. nbuf: level orders from o[], shape v,
 * modes (A, B) per level from pair[] (each 0 .. 8: A pair / 3, B pair % 3). */
static void nest_spec(tessel_spec *s, unsigned nbuf, const unsigned *o, unsigned v,
                      const unsigned *pair)
{
    const uint64_t(*t)[3] = shapes[v].t;
    test_spec_spmspm(s, orders[o[0]], t[0][0], t[0][1], t[0][2], 1, 64, 32);
    for (unsigned l = 2; l <= nbuf; l++)
        add_level(s, orders[o[l - 1]], t[l - 1][0], t[l - 1][1], t[l - 1][2]);
    for (unsigned l = 0; l <= nbuf; l++) {
        unsigned p = pair[l ? l - 1 : 0];
        set_mode(s, l, 1, p / 3);
        set_mode(s, l, 2, p % 3);
    }
}

/* Exact and stat of s, equal and not walked. */
static void check_point(const nest_case *c, const tessel_spec *s, const char *what)
{
    tessel_result x, r;
    tessel_diag diag;
    ck_assert_msg(tessel_model_exact(s, &c->d, NULL, &x, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_stat(s, &c->d, &c->o, NULL, &r, &diag) == 0, "%s", diag.message);
    ck_assert_msg(r.stat_walked == 0, "%s: stat_walked %d", what, r.stat_walked);
    test_stat_assert_equal(&x, &r, 0, what);
}

/* Two buffer levels: every (outer, inner) order pair, every shape, the
 * nine pairs at the inner level against a rotating pair at the outer. */
START_TEST(two_levels_equal_exact)
{
    nest_case c;
    case_init(&c);
    unsigned points = 0;
    for (unsigned q = 0; q < 6; q++)
        for (unsigned w = 0; w < 6; w++)
            for (unsigned v = 0; v < sizeof(shapes) / sizeof(shapes[0]); v++)
                for (unsigned p = (q + w + v) % 3; p < 9; p += 3) {
                    unsigned o[2] = { q, w }, pair[2] = { (p + q + 2 * v) % 9, p };
                    tessel_spec s;
                    nest_spec(&s, 2, o, v, pair);
                    char what[96];
                    snprintf(what, sizeof(what), "%s/%s shape %u pairs %u,%u", orders[q],
                             orders[w], v, pair[0], pair[1]);
                    check_point(&c, &s, what);
                    points++;
                }
    ck_assert_uint_eq(points, 6 * 6 * 4 * 3);
    case_free(&c);
}
END_TEST

/* Three buffer levels: orders and pairs rotating per level. */
START_TEST(three_levels_equal_exact)
{
    nest_case c;
    case_init(&c);
    for (unsigned q = 0; q < 6; q++)
        for (unsigned v = 0; v < sizeof(shapes) / sizeof(shapes[0]); v++)
            for (unsigned p = 0; p < 9; p += 2) {
                unsigned o[3] = { q, (q + v + 1) % 6, (q + 2 * v + p) % 6 };
                unsigned pair[3] = { (p + 4) % 9, (p + q) % 9, p };
                tessel_spec s;
                nest_spec(&s, 3, o, v, pair);
                char what[96];
                snprintf(what, sizeof(what), "%s/%s/%s shape %u pairs %u,%u,%u", orders[o[0]],
                         orders[o[1]], orders[o[2]], v, pair[0], pair[1], pair[2]);
                check_point(&c, &s, what);
            }
    case_free(&c);
}
END_TEST

/* A capped output sample (5 %): the inputs still equal exact's, the DRAM
 * bytes within 5 %. */
START_TEST(capped_sample_inputs_exact)
{
    nest_case c;
    case_init(&c);
    c.o.output_fraction = 0.05;
    c.o.output_min_flops = 0;
    for (unsigned q = 0; q < 6; q++)
        for (unsigned v = 0; v < 3; v++) {
            unsigned o[2] = { q, (q + 3) % 6 }, pair[2] = { (q + v) % 9, 1 + (q + 2 * v) % 8 };
            tessel_spec s;
            nest_spec(&s, 2, o, v, pair);
            tessel_result x, r;
            tessel_diag diag;
            ck_assert_msg(tessel_model_exact(&s, &c.d, NULL, &x, &diag) == 0, "%s",
                          diag.message);
            ck_assert_msg(tessel_model_stat(&s, &c.d, &c.o, NULL, &r, &diag) == 0, "%s",
                          diag.message);
            ck_assert_int_eq(r.stat_walked, 0);
            char what[64];
            snprintf(what, sizeof(what), "capped %s shape %u", orders[q], v);
            test_stat_assert_equal(&x, &r, 1, what);
            double err = fabs((double)r.dram_bytes - (double)x.dram_bytes) / (double)x.dram_bytes;
            ck_assert_msg(err < 0.05, "%s: DRAM bytes %.4f off", what, err);
        }
    case_free(&c);
}
END_TEST


/* An unskipped input whose tiles overbook at a nested level (rule 4 per
 * read): closed (stat_walked 0) in every (outer, inner) order pair; A
 * gated or B read at the inner level over a 256 B partition (kept per
 * tile; the compute's reads estimated: bytes within 16 %, B under IJK and
 * JIK on the random B, whose fibres no lines statistic holds; the walk
 * gives the same), or A read, or read and gated, at both levels over a
 * 2 KiB partition at the outer one (its tiles read per child fill: every
 * field equal). */
START_TEST(overbooked_nested_closed)
{
    nest_case c;
    case_init(&c);
    static const unsigned pairs[4][2] = { { 0, 6 }, { 0, 1 }, { 3, 3 }, { 4, 5 } };
    unsigned bumped = 0;
    for (unsigned q = 0; q < 6; q++)
        for (unsigned w = 0; w < 6; w++)
            for (unsigned m = 0; m < 4; m++) {
                unsigned t = m == 1 ? 2 : 1, l = m < 2 ? 2 : 1;
                unsigned o[2] = { q, w };
                tessel_spec s;
                nest_spec(&s, 2, o, 0, pairs[m]);
                s.level[l].capacity = UINT64_C(1) << 30;
                for (unsigned x = 0; x < 3; x++)
                    s.level[l].tensor[x].partition_bytes = UINT64_C(1) << 28;
                s.level[l].tensor[t].partition_bytes = m < 2 ? 256 : 2048;
                tessel_result x, r;
                tessel_diag diag;
                ck_assert_msg(tessel_model_exact(&s, &c.d, NULL, &x, &diag) == 0, "%s",
                              diag.message);
                ck_assert_msg(tessel_model_stat(&s, &c.d, &c.o, NULL, &r, &diag) == 0, "%s",
                              diag.message);
                char what[64];
                snprintf(what, sizeof(what), "overbooked %s/%s case %u", orders[q], orders[w], m);
                ck_assert_msg(r.stat_walked == 0, "%s walked", what);
                ck_assert_uint_gt(x.traffic[l][t].overflow_tiles, 0);
                bumped += x.traffic[l][t].bumped_bytes > 0;
                if (m < 2)
                    test_stat_assert_close(&x, &r, 0.16, what);
                else
                    test_stat_assert_equal(&x, &r, 0, what);
            }
    ck_assert_uint_ge(bumped, 72); /* rule 4 streams the overflow again */
    case_free(&c);
}
END_TEST

/* Through a per-shape cache, and with the nested formula on: a point of
 * one shape with every input skipping, then the same shape with read and
 * gated inputs, then the skipping one again; each equal to its own
 * evaluation without the cache (the skipping point's summary is not
 * taken for the unskipped one, nor the other way round). */
START_TEST(cache_and_formula_keep_apart)
{
    nest_case c;
    case_init(&c);
    tessel_stat_data *sd = NULL;
    tessel_diag diag;
    unsigned o[2] = { 0, 3 }, skip[2] = { 0, 0 }, mixed[2] = { 0, 5 };
    tessel_spec s[3];
    nest_spec(&s[0], 2, o, 1, skip);
    nest_spec(&s[1], 2, o, 1, mixed);
    s[2] = s[0];
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &c.d, &c.o, NULL, &sd, &diag), 0);
    tessel_result want[3], r;
    for (unsigned formula = 0; formula < 2; formula++) {
        tessel_stat_data_set_nested_formula(sd, (int)formula);
        for (unsigned i = 0; i < 3; i++)
            ck_assert_int_eq(tessel_model_stat_eval(&s[i], sd, &want[i], &diag), 0);
        ck_assert_uint_ne(want[0].traffic[2][1].fills, want[1].traffic[2][1].fills);
        tessel_stat_cache *cache = NULL;
        ck_assert_int_eq(tessel_stat_cache_create(sd, NULL, &cache), 0);
        for (unsigned i = 0; i < 3; i++) {
            ck_assert_int_eq(tessel_model_stat_eval_cached(&s[i], sd, cache, &r, &diag), 0);
            ck_assert_int_eq(r.stat_walked, 0);
            char what[48];
            snprintf(what, sizeof(what), "cached point %u formula %u", i, formula);
            test_stat_assert_equal(&want[i], &r, 0, what);
        }
        tessel_stat_cache_free(&cache);
    }
    /* a nested budget that samples the strips of the skipping point: the
     * unskipped one is evaluated whole (its runs span every strip) */
    tessel_stat_data_free(&sd);
    c.o.output_fraction = 0.05; /* the strip sample takes a partial output sample */
    c.o.output_min_flops = 0;
    for (unsigned i = 0; i < 2; i++) { /* 36 strips of 32 rows */
        test_spec_spmspm(&s[i], "IJK", 32, 384, 160, 1, 64, 32);
        add_level(&s[i], "IJK", 16, 128, 32);
        for (unsigned l = 0; l < 3; l++) {
            set_mode(&s[i], l, 1, i);
            set_mode(&s[i], l, 2, 2 * i);
        }
    }
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &c.d, &c.o, NULL, &sd, &diag), 0);
    ck_assert_int_eq(tessel_model_stat_eval(&s[1], sd, &want[1], &diag), 0);
    tessel_stat_data_set_nested_budget(sd, 3000);
    ck_assert_int_eq(tessel_model_stat_eval(&s[0], sd, &r, &diag), 0);
    ck_assert(r.stat_nested_fraction > 0);
    ck_assert_int_eq(tessel_model_stat_eval(&s[1], sd, &r, &diag), 0);
    ck_assert(r.stat_nested_fraction == 0);
    test_stat_assert_equal(&want[1], &r, 0, "nested budget");
    tessel_stat_data_free(&sd);
    case_free(&c);
}
END_TEST

/* Failing each allocation of a nested read/gated point in turn: TESSEL_ENOMEM
 * and nothing leaked, or the unfailed result. */
START_TEST(nested_gated_out_of_memory)
{
    nest_case c;
    case_init(&c);
    unsigned o[3] = { 4, 1, 0 }, pair[3] = { 5, 7, 3 };
    tessel_spec s;
    nest_spec(&s, 3, o, 1, pair);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_diag diag;
    tessel_stat_data *sd = test_stat_create_through(&s, &c.d, &c.o, &ta);
    tessel_result want, r;
    ck_assert_int_eq(tessel_model_stat_eval(&s, sd, &want, &diag), 0);
    ck_assert_int_eq(want.stat_walked, 0);
    test_stat_eval_fail_each(&s, sd, &ta, &r);
    ck_assert_uint_eq(r.dram_bytes, want.dram_bytes);
    for (unsigned l = 1; l < 4; l++)
        for (unsigned t = 1; t < 3; t++) {
            ck_assert_uint_eq(r.traffic[l][t].fills, want.traffic[l][t].fills);
            ck_assert_uint_eq(r.traffic[l][t].gated, want.traffic[l][t].gated);
        }
    tessel_stat_data_free(&sd);
    ck_assert_int_eq(ta.live, 0);
    case_free(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_gatednest");
    TCase *tc = tcase_create("stat_gatednest");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, two_levels_equal_exact);
    tcase_add_test(tc, three_levels_equal_exact);
    tcase_add_test(tc, capped_sample_inputs_exact);
    tcase_add_test(tc, overbooked_nested_closed);
    tcase_add_test(tc, cache_and_formula_keep_apart);
    tcase_add_test(tc, nested_gated_out_of_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* TTM at nested buffer levels in closed form (src/model/stat_nested_ttm.c):
 * with every output row in the sample, the stat estimator's counts at 2
 * and 3 buffer levels equal the exact estimator's field by field without
 * walking, wherever T's two kept modes are adjacent loops at every level;
 * where they are not, or where an output tile can outgrow its partition,
 * the walk prices the point (stat_walked) and still equals exact. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_alloc.h"
#include "test_data.h"
#include "test_specs.h"
#include "test_stat_compare.h"
#include "test_stat_oom.h"

/* Y[i,j,r] = T[i,j,k] * M[k,r] at one buffer level; index numbers i 0,
 * j 1, r 2, k 3; tiles i j r k (0: the whole mode), unbounded. */
static void spec_ttm(tessel_spec *s, const char *order, const uint64_t *tile)
{
    test_spec_spmspm(s, "IJK", 128, 128, 128, 1, 64, 32);
    test_spec_ttm_workload(s, order, tile);
}

/* Appends a buffer level below the last: its order and tiles (i j r k). */
static void add_level(tessel_spec *s, const char *order, const uint64_t *tile)
{
    unsigned l = s->nlevels++;
    s->level[l] = s->level[l - 1];
    snprintf(s->level[l].name, sizeof(s->level[l].name), "L%u", l);
    for (unsigned x = 0; x < 4; x++)
        s->level[l].tile[x] = tile[x];
    for (unsigned p = 0; p < 4; p++) {
        char c = order[p];
        s->level[l].order[p] = c == 'I' ? 0 : c == 'J' ? 1 : c == 'R' ? 2 : 3;
    }
}

/* A k x r factor: a band of 3 and random entries of the given density. */
static tessel_tensor *factor(uint64_t rows, uint64_t cols, double density, unsigned seed)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    srand(seed);
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            if ((r % cols > c ? r % cols - c : c - r % cols) < 3 ||
                (double)rand() / RAND_MAX < density) {
                uint32_t e[2] = { r, c };
                ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

typedef struct ttm_case {
    tessel_tensor *t, *m;
    tessel_workload_data d;
    tessel_stat_options o;
} ttm_case;

/* The bundled bitcoin-otc tensor (6000 x 6005 x 272) times a sparse
 * 272 x 32 factor, statistics on a 4 x 4 base grid with the whole output
 * sample. */
static void case_init(ttm_case *c)
{
    c->t = test_load_tensor("examples/data/bitcoin-otc_src-dst-week.tns.gz");
    c->m = factor(c->t->dims[2], 32, 0.05, 7);
    memset(&c->d, 0, sizeof(c->d));
    c->d.ntensors = 3;
    c->d.tensor[1] = c->t;
    c->d.tensor[2] = c->m;
    c->d.extent[0] = c->t->dims[0];
    c->d.extent[1] = c->t->dims[1];
    c->d.extent[2] = c->m->dims[1];
    c->d.extent[3] = c->t->dims[2];
    tessel_stat_options_init(&c->o);
    c->o.base[0] = c->o.base[1] = 4;
    c->o.output_fraction = 1;
}

static void case_free(ttm_case *c)
{
    tessel_tensor_free(&c->t);
    tessel_tensor_free(&c->m);
}

/* Exact and stat of s, equal; stat walked or not as `walked` says. */
static void check_point(const ttm_case *c, const tessel_spec *s, int walked, const char *what)
{
    tessel_result x, r;
    tessel_diag diag;
    ck_assert_msg(tessel_model_exact(s, &c->d, NULL, &x, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_stat(s, &c->d, &c->o, NULL, &r, &diag) == 0, "%s", diag.message);
    ck_assert_msg(r.stat_walked == walked, "%s: stat_walked %d", what, r.stat_walked);
    ck_assert_uint_eq(r.offgrid_edges, 0);
    test_stat_assert_equal(&x, &r, 0, what);
}

/* Tiles i j r k per level: level 1's i edge leaves an edge tile (6000 =
 * 11 x 512 + 368) that holds fewer level-2 tiles than the radix. */
static const uint64_t t1[4] = { 512, 1024, 32, 136 }, t2[4] = { 64, 128, 8, 8 },
                      t3[4] = { 16, 32, 4, 4 };

START_TEST(nested_ttm_equals_exact)
{
    ttm_case c;
    case_init(&c);
    /* i and j adjacent at every level, either one major, k and r anywhere */
    static const char *const outer[] = { "IJKR", "JIKR", "KIJR", "RIJK", "KRJI", "IJRK" };
    static const char *const inner[] = { "IJKR", "JIRK", "KRIJ", "RKJI" };
    for (unsigned q = 0; q < 6; q++)
        for (unsigned v = 0; v < 4; v++)
            for (unsigned depth = 3; depth <= 4; depth++) {
                tessel_spec s;
                spec_ttm(&s, outer[q], t1);
                add_level(&s, inner[v], t2);
                if (depth == 4)
                    add_level(&s, inner[(v + 1) % 4], t3);
                char what[64];
                snprintf(what, sizeof(what), "%s/%s depth %u", outer[q], inner[v], depth);
                check_point(&c, &s, 0, what);
            }
    /* whole i at level 1 (no loop), tiled below: level 2's digit holds both */
    static const uint64_t w1[4] = { 0, 1024, 32, 136 }, w2[4] = { 1000, 128, 8, 8 };
    tessel_spec s;
    spec_ttm(&s, "JKRI", w1);
    add_level(&s, "KIJR", w2);
    check_point(&c, &s, 0, "whole i");
    case_free(&c);
}
END_TEST

/* Where the unfolding does not hold (i and j apart at an inner level), or
 * an output tile can outgrow its partition (rule 4 inside a visit), the
 * walk prices the point, equal to exact with the whole sample. */
START_TEST(nested_ttm_walks_elsewhere)
{
    ttm_case c;
    case_init(&c);
    tessel_spec s;
    spec_ttm(&s, "IJKR", t1);
    add_level(&s, "IKJR", t2);
    check_point(&c, &s, 1, "apart at level 2");
    spec_ttm(&s, "IJKR", t1);
    add_level(&s, "JIKR", t2);
    add_level(&s, "JRIK", t3);
    check_point(&c, &s, 1, "apart at level 3");
    /* Y's 64 x 128 x 8 tile (csr, 64-bit values) over a 16 KiB partition */
    spec_ttm(&s, "IJKR", t1);
    add_level(&s, "JIRK", t2);
    s.level[2].capacity = 48 * 1024;
    check_point(&c, &s, 1, "output over its partition");
    case_free(&c);
}
END_TEST

/* Failing each allocation of a nested TTM point in turn: TESSEL_ENOMEM and
 * nothing leaked, or the unfailed result. */
START_TEST(nested_ttm_out_of_memory)
{
    ttm_case c;
    case_init(&c);
    tessel_spec s;
    spec_ttm(&s, "KIJR", t1);
    add_level(&s, "JIRK", t2);
    add_level(&s, "IJKR", t3);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_diag diag;
    tessel_stat_data *sd = test_stat_create_through(&s, &c.d, &c.o, &ta);
    tessel_result want, r;
    ck_assert_int_eq(tessel_model_stat_eval(&s, sd, &want, &diag), 0);
    ck_assert_int_eq(want.stat_walked, 0);
    test_stat_eval_fail_each(&s, sd, &ta, &r);
    ck_assert_uint_eq(r.dram_bytes, want.dram_bytes);
    ck_assert_uint_eq(r.traffic[3][0].updates, want.traffic[3][0].updates);
    tessel_stat_data_free(&sd);
    ck_assert_int_eq(ta.live, 0);
    case_free(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_ttm");
    TCase *tc = tcase_create("stat_ttm");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, nested_ttm_equals_exact);
    tcase_add_test(tc, nested_ttm_walks_elsewhere);
    tcase_add_test(tc, nested_ttm_out_of_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

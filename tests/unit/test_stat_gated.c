/* SpMSpM inputs that read or gate their tiles where the partner's tile is
 * empty (tile-level skip_on without the partner, or gate_on it), priced in
 * closed form at one buffer level (src/model/stat_spmspm.c): with every
 * output row in the sample, stat's counts equal the exact estimator's
 * field by field in all six loop orders, tile shapes that leave one tile
 * per row or one tile in all, and every skip / read / gate pair, without
 * walking; where such an input's tile can overbook its partition, the walk
 * prices the point and still equals exact. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_alloc.h"
#include "test_data.h"
#include "test_specs.h"
#include "test_stat_oom.h"

/* A rows x cols matrix: random entries of the given density in the rows
 * not divisible by 5 (whole empty tile rows at small tiles). */
static tessel_tensor *random_matrix(uint64_t rows, uint64_t cols, double density, unsigned seed)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    srand(seed);
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; r % 5 && c < cols; c++)
            if ((double)rand() / RAND_MAX < density) {
                uint32_t e[2] = { r, c };
                ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

typedef struct gated_case {
    tessel_tensor *a, *b;
    tessel_workload_data d;
    tessel_stat_options o;
} gated_case;

/* jagmesh7 (1138 x 1138) times a random 1138 x 700 matrix, statistics on
 * a 16 x 16 base grid with the whole output sample. */
static void case_init(gated_case *c)
{
    c->a = test_load_tensor("examples/data/jagmesh7.mtx.gz");
    c->b = random_matrix(c->a->dims[1], 700, 0.002, 11);
    test_spmspm_data(&c->d, c->a, c->b);
    tessel_stat_options_init(&c->o);
    c->o.base[0] = c->o.base[1] = 16;
    c->o.output_fraction = 1;
}

static void case_free(gated_case *c)
{
    tessel_tensor_free(&c->a);
    tessel_tensor_free(&c->b);
}

/* Input t's (1: A, 2: B) action on its partner's empty tiles: 0 skip,
 * 1 read, 2 gate. */
static void set_mode(tessel_spec *s, unsigned t, unsigned mode)
{
    unsigned partner = t == 1 ? 4u : 2u;
    for (unsigned l = 0; l < s->nlevels; l++) {
        s->level[l].tensor[t].sparse.skip_on = mode ? 0 : partner;
        s->level[l].tensor[t].sparse.gate_on = mode == 2 ? partner : 0;
    }
}

/* Every count both estimators report, equal. */
static void assert_equal(const tessel_result *x, const tessel_result *r, const char *what)
{
    for (unsigned l = 0; l < x->nlevels; l++)
        for (unsigned t = 0; t < x->ntensors; t++) {
            const tessel_traffic *a = &x->traffic[l][t], *b = &r->traffic[l][t];
#define SAME(f)                                                                              \
    ck_assert_msg(a->f == b->f, "%s level %u tensor %u " #f ": exact %llu, stat %llu", what, l, \
                  t, (unsigned long long)a->f, (unsigned long long)b->f)
            SAME(fills);
            SAME(gated);
            SAME(updates);
            SAME(writebacks);
            SAME(reads);
            SAME(data_bytes);
            SAME(metadata_bytes);
            SAME(bumped_bytes);
            SAME(overflow_tiles);
            SAME(overflow_bytes);
            SAME(partition_bytes);
            if (t) /* stat reports an output tile's only where it spills */
                SAME(worst_tile_bytes);
            SAME(algorithmic);
            SAME(skipped);
            SAME(child_read_data);
            SAME(child_read_metadata);
#undef SAME
        }
    ck_assert_msg(x->effectual_tiles[1] == r->effectual_tiles[1], "%s effectual", what);
    ck_assert_uint_eq(x->macs, r->macs);
    ck_assert_uint_eq(x->output_nnz, r->output_nnz);
    ck_assert_uint_eq(x->intersections, r->intersections);
    ck_assert_uint_eq(x->dram_bytes, r->dram_bytes);
}

/* Exact and stat of s, equal; stat walked or not as `walked` says. */
static void check_point(const gated_case *c, const tessel_spec *s, int walked, const char *what)
{
    tessel_result x, r;
    tessel_diag diag;
    ck_assert_msg(tessel_model_exact(s, &c->d, NULL, &x, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_stat(s, &c->d, &c->o, NULL, &r, &diag) == 0, "%s", diag.message);
    ck_assert_msg(r.stat_walked == walked, "%s: stat_walked %d", what, r.stat_walked);
    assert_equal(&x, &r, what);
}

/* Tile edges ti, tk, tj: small and uneven tiles, whole k (one A tile per
 * row of tiles), whole k and j (one B tile in all). */
static const uint64_t shapes[][3] = { { 64, 64, 64 },  { 32, 128, 16 }, { 128, 32, 256 },
                                      { 16, 0, 48 },   { 256, 0, 0 } };

START_TEST(unskipped_equals_exact)
{
    gated_case c;
    case_init(&c);
    static const char *const orders[] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };
    for (unsigned q = 0; q < 6; q++)
        for (unsigned v = 0; v < sizeof(shapes) / sizeof(shapes[0]); v++)
            for (unsigned ma = 0; ma < 3; ma++)
                for (unsigned mb = 0; mb < 3; mb++) {
                    tessel_spec s;
                    test_spec_spmspm(&s, orders[q], shapes[v][0], shapes[v][1], shapes[v][2], 1,
                                     64, 32);
                    set_mode(&s, 1, ma);
                    set_mode(&s, 2, mb);
                    char what[64];
                    snprintf(what, sizeof(what), "%s shape %u A %u B %u", orders[q], v, ma, mb);
                    check_point(&c, &s, 0, what);
                }
    case_free(&c);
}
END_TEST

/* An unskipped input whose tiles can overbook: the walk (its fills and
 * gated fills as exact's). */
START_TEST(unskipped_overbooked_walks)
{
    gated_case c;
    case_init(&c);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 256, 256, 256, 1, 64, 32);
    s.level[1].capacity = UINT64_C(1) << 30; /* A's tiles over 4 KiB, the others' room */
    s.level[1].tensor[1].partition_bytes = 4096;
    s.level[1].tensor[0].partition_bytes = UINT64_C(1) << 29;
    s.level[1].tensor[2].partition_bytes = UINT64_C(1) << 29;
    set_mode(&s, 1, 2);
    tessel_result x, r;
    tessel_diag diag;
    ck_assert_msg(tessel_model_exact(&s, &c.d, NULL, &x, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_stat(&s, &c.d, &c.o, NULL, &r, &diag) == 0, "%s", diag.message);
    ck_assert_int_eq(r.stat_walked, 1);
    /* rule 1 as exact; rule 4 per read of the compute is not the walk's */
    ck_assert_uint_eq(r.traffic[1][1].fills, x.traffic[1][1].fills);
    ck_assert_uint_eq(r.traffic[1][1].gated, x.traffic[1][1].gated);
    ck_assert_uint_gt(r.traffic[1][1].overflow_tiles, 0);
    case_free(&c);
}
END_TEST

/* Failing each allocation of a gated point in turn: TESSEL_ENOMEM and
 * nothing leaked, or the unfailed result. */
START_TEST(unskipped_out_of_memory)
{
    gated_case c;
    case_init(&c);
    tessel_spec s;
    test_spec_spmspm(&s, "JKI", 64, 32, 128, 1, 64, 32);
    set_mode(&s, 1, 1);
    set_mode(&s, 2, 2);
    test_alloc ta;
    test_alloc_init(&ta, 0);
    tessel_stat_data *sd = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s, &c.d, &c.o, &ta.allocator, &sd, &diag), 0);
    tessel_result want, r;
    ck_assert_int_eq(tessel_model_stat_eval(&s, sd, &want, &diag), 0);
    ck_assert_int_eq(want.stat_walked, 0);
    test_stat_eval_fail_each(&s, sd, &ta, &r);
    ck_assert_uint_eq(r.dram_bytes, want.dram_bytes);
    ck_assert_uint_eq(r.traffic[1][2].gated, want.traffic[1][2].gated);
    tessel_stat_data_free(&sd);
    ck_assert_int_eq(ta.live, 0);
    case_free(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_gated");
    TCase *tc = tcase_create("stat_gated");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, unskipped_equals_exact);
    tcase_add_test(tc, unskipped_overbooked_walks);
    tcase_add_test(tc, unskipped_out_of_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

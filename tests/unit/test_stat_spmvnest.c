/* SpMV inputs that read or gate their tiles where the partner's tile is
 * empty, at nested buffer levels (src/model/stat_nested_gated.c, SpMV's
 * unit j): with the whole output sample, stat's counts equal the exact
 * estimator's field by field at 2 and 3 buffer levels, in both loop
 * orders at each level, several tile shapes (uneven, whole k, whole i)
 * and skip / read / gate pairs set per level, on three generated
 * matrix / vector pairs (a sparse and a dense vector), without walking;
 * with a capped sample the inputs stay exact and the DRAM bytes within
 * 5 %; each allocation of a 3-level point failed in turn. */
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

typedef struct spmv_case {
    tessel_tensor *a, *x;
    tessel_workload_data d;
    tessel_stat_options o;
    const char *name;
} spmv_case;

/* A random rows x cols matrix of the given density, rows r with r % skip
 * == 0 empty (whole empty tile rows) when skip > 1. */
static tessel_tensor *random_matrix(uint32_t rows, uint32_t cols, double density, unsigned skip,
                                    unsigned seed)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    srand(seed);
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; (skip < 2 || r % skip) && c < cols; c++)
            if ((double)rand() / RAND_MAX < density) {
                uint32_t e[2] = { r, c };
                ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

/* A vector of n entries, each kept with probability density (1: dense);
 * with a run of 100 empty entries from n / 3 when density < 1. */
static tessel_tensor *random_vector(uint32_t n, double density, unsigned seed)
{
    uint64_t dims[1] = { n };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(1, dims, 0, NULL, &b, NULL), 0);
    srand(seed);
    for (uint32_t k = 0; k < n; k++) {
        int hole = density < 1 && k >= n / 3 && k < n / 3 + 100;
        if (!hole && (density >= 1 || (double)rand() / RAND_MAX < density)) {
            uint32_t e[1] = { k };
            ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
        }
    }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

/* Case m: 0 jagmesh7 times a vector of density 0.3; 1 jagmesh7 times a
 * dense vector; 2 a random 1000 x 1500 matrix (every seventh row empty)
 * times a vector of density 0.05. Statistics on a 16 x 16 base grid with
 * the whole output sample. */
static void case_init(spmv_case *c, unsigned m)
{
    static const char *const names[] = { "jagmesh7 x sparse", "jagmesh7 x dense",
                                         "random x sparse" };
    c->name = names[m];
    c->a = m < 2 ? test_load_tensor("examples/data/jagmesh7.mtx.gz")
                 : random_matrix(1000, 1500, 0.004, 7, 23);
    c->x = random_vector((uint32_t)c->a->dims[1], m == 0 ? 0.3 : m == 1 ? 1 : 0.05, 5 + m);
    memset(&c->d, 0, sizeof(c->d));
    c->d.ntensors = 3;
    c->d.tensor[1] = c->a;
    c->d.tensor[2] = c->x;
    c->d.extent[0] = c->a->dims[0];
    c->d.extent[1] = c->a->dims[1];
    tessel_stat_options_init(&c->o);
    c->o.base[0] = c->o.base[1] = 16;
    c->o.output_fraction = 1;
}

static void case_free(spmv_case *c)
{
    tessel_tensor_free(&c->a);
    tessel_tensor_free(&c->x);
}

/* y[i] = A[i,k] * x[k]: index numbers i 0, k 1. */
static void spmv_workload(tessel_spec *s)
{
    tessel_spec_workload *w = &s->workload;
    w->kind = TESSEL_WORKLOAD_SPMV;
    w->einsum = "y[i] = A[i,k] * x[k]";
    w->nindices = 2;
    strcpy(w->index_name[1], "k");
    strcpy(w->tensor[0].name, "y");
    strcpy(w->tensor[2].name, "x");
    w->tensor[0].rank = 1;
    w->tensor[1].index[1] = 1;
    w->tensor[2].rank = 1;
    w->tensor[2].index[0] = 1;
}

/* Level l's order ("IK" or "KI") and tiles i, k (0: the whole mode). */
static void set_level(tessel_spec *s, unsigned l, const char *order, uint64_t ti, uint64_t tk)
{
    tessel_spec_level *lv = &s->level[l];
    lv->has_mapping = 1;
    lv->tile[0] = ti;
    lv->tile[1] = tk;
    lv->tile[2] = 0;
    lv->order[0] = order[0] == 'I' ? 0 : 1;
    lv->order[1] = order[1] == 'I' ? 0 : 1;
}

/* Input t's (1: A, 2: x) action on its partner's empty tiles at level l:
 * 0 skip, 1 read, 2 gate. */
static void set_mode(tessel_spec *s, unsigned l, unsigned t, unsigned mode)
{
    unsigned partner = t == 1 ? 4u : 2u;
    s->level[l].tensor[t].sparse.skip_on = mode ? 0 : partner;
    s->level[l].tensor[t].sparse.gate_on = mode == 2 ? partner : 0;
}

/* Tiles (i, k) per buffer level, outermost first (0: the whole mode):
 * even, uneven against 1138, 1000 and 1500, whole k, whole i. */
typedef struct spmv_shape {
    uint64_t t[3][2];
} spmv_shape;
static const spmv_shape shapes[] = {
    { { { 256, 256 }, { 64, 64 }, { 16, 16 } } },
    { { { 96, 384 }, { 32, 128 }, { 16, 32 } } },
    { { { 128, 0 }, { 64, 0 }, { 32, 0 } } },
    { { { 0, 224 }, { 0, 32 }, { 0, 16 } } },
};
static const char *const orders[] = { "IK", "KI" };

/* The point of buffer levels 1 .. nbuf: level orders from o[], shape v,
 * modes (A, x) per level from pair[] (each 0 .. 8: A pair / 3, x pair % 3;
 * the backing store takes level 1's). */
static void spmv_spec(tessel_spec *s, unsigned nbuf, const unsigned *o, unsigned v,
                      const unsigned *pair)
{
    const uint64_t(*t)[2] = shapes[v].t;
    test_spec_spmspm(s, "IJK", 128, 128, 128, 1, 64, 32);
    spmv_workload(s);
    for (unsigned l = 2; l <= nbuf; l++)
        test_spec_nest(s, "L", 0);
    for (unsigned l = 1; l <= nbuf; l++) {
        snprintf(s->level[l].name, sizeof(s->level[l].name), "L%u", l);
        set_level(s, l, orders[o[l - 1]], t[l - 1][0], t[l - 1][1]);
    }
    for (unsigned l = 0; l <= nbuf; l++) {
        unsigned p = pair[l ? l - 1 : 0];
        set_mode(s, l, 1, p / 3);
        set_mode(s, l, 2, p % 3);
    }
}



/* Exact and stat of s, equal and not walked; whether exact gates some
 * input's fills at a nested level. */
static int check_point(const spmv_case *c, const tessel_spec *s, const char *what)
{
    tessel_result x, r;
    tessel_diag diag;
    ck_assert_msg(tessel_model_exact(s, &c->d, NULL, &x, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_stat(s, &c->d, &c->o, NULL, &r, &diag) == 0, "%s: %s", what,
                  diag.message);
    ck_assert_msg(r.stat_walked == 0, "%s: stat_walked %d", what, r.stat_walked);
    test_stat_assert_equal(&x, &r, 0, what);
    int gated = 0;
    for (unsigned l = 2; l < x.nlevels; l++)
        gated |= x.traffic[l][1].gated > 0 || x.traffic[l][2].gated > 0;
    return gated;
}

/* Two buffer levels, on each case: every (outer, inner) order pair, every
 * shape, the nine pairs at the inner level against a rotating pair at the
 * outer (at least one input unskipped at the inner level). */
START_TEST(two_levels_equal_exact)
{
    spmv_case c;
    case_init(&c, (unsigned)_i);
    unsigned points = 0, gated = 0;
    for (unsigned q = 0; q < 2; q++)
        for (unsigned w = 0; w < 2; w++)
            for (unsigned v = 0; v < sizeof(shapes) / sizeof(shapes[0]); v++)
                for (unsigned p = 1; p < 9; p++) {
                    unsigned o[2] = { q, w }, pair[2] = { (p + q + 2 * v + w) % 9, p };
                    tessel_spec s;
                    spmv_spec(&s, 2, o, v, pair);
                    char what[128];
                    snprintf(what, sizeof(what), "%s %s/%s shape %u pairs %u,%u", c.name,
                             orders[q], orders[w], v, pair[0], pair[1]);
                    gated += (unsigned)check_point(&c, &s, what);
                    points++;
                }
    ck_assert_uint_eq(points, 2 * 2 * 4 * 8);
    ck_assert_uint_gt(gated, 0); /* the gated sums are tried */
    case_free(&c);
}
END_TEST

/* Three buffer levels, on each case: every order triple, every shape,
 * pairs rotating per level. */
START_TEST(three_levels_equal_exact)
{
    spmv_case c;
    case_init(&c, (unsigned)_i);
    unsigned gated = 0;
    for (unsigned q = 0; q < 8; q++)
        for (unsigned v = 0; v < sizeof(shapes) / sizeof(shapes[0]); v++)
            for (unsigned p = 1; p < 9; p += 2) {
                unsigned o[3] = { q & 1, (q >> 1) & 1, (q >> 2) & 1 };
                unsigned pair[3] = { (p + 4 + v) % 9, (p + q) % 9, p };
                tessel_spec s;
                spmv_spec(&s, 3, o, v, pair);
                char what[128];
                snprintf(what, sizeof(what), "%s %s/%s/%s shape %u pairs %u,%u,%u", c.name,
                         orders[o[0]], orders[o[1]], orders[o[2]], v, pair[0], pair[1],
                         pair[2]);
                gated += (unsigned)check_point(&c, &s, what);
            }
    ck_assert_uint_gt(gated, 0);
    case_free(&c);
}
END_TEST

/* A capped output sample (5 %): the inputs still equal exact's, the DRAM
 * bytes within 5 %. */
START_TEST(capped_sample_inputs_exact)
{
    spmv_case c;
    case_init(&c, (unsigned)_i);
    c.o.output_fraction = 0.05;
    c.o.output_min_flops = 0;
    for (unsigned q = 0; q < 4; q++)
        for (unsigned v = 0; v < 4; v++) {
            unsigned o[2] = { q & 1, q >> 1 }, pair[2] = { (q + v) % 9, 1 + (q + 2 * v) % 8 };
            tessel_spec s;
            spmv_spec(&s, 2, o, v, pair);
            tessel_result x, r;
            tessel_diag diag;
            ck_assert_msg(tessel_model_exact(&s, &c.d, NULL, &x, &diag) == 0, "%s",
                          diag.message);
            ck_assert_msg(tessel_model_stat(&s, &c.d, &c.o, NULL, &r, &diag) == 0, "%s",
                          diag.message);
            ck_assert_int_eq(r.stat_walked, 0);
            char what[96];
            snprintf(what, sizeof(what), "capped %s %s/%s shape %u", c.name, orders[o[0]],
                     orders[o[1]], v);
            test_stat_assert_equal(&x, &r, 1, what);
            double err = fabs((double)r.dram_bytes - (double)x.dram_bytes) / (double)x.dram_bytes;
            ck_assert_msg(err < 0.05, "%s: DRAM bytes %.4f off", what, err);
        }
    case_free(&c);
}
END_TEST

/* An unskipped input whose tiles overbook at a nested level (rule 4 per
 * read), closed: A read or gated, or x read or gated, over a small
 * partition at the inner level (the compute's reads of x estimated:
 * bytes within 12 % + 128 B: x under IK on jagmesh7, +10.7 %; the walk
 * gives the same) or at the outer one (read per child fill:
 * every field equal), both orders at both levels. */
START_TEST(overbooked_nested_closed)
{
    spmv_case c;
    case_init(&c, (unsigned)_i);
    unsigned bumped = 0;
    for (unsigned q = 0; q < 4; q++)
        for (unsigned m = 0; m < 8; m++) {
            /* m: input t (A, x) read or gated at level l (2, 1) */
            unsigned t = 1 + (m & 1), l = m & 4 ? 1 : 2, mode = m & 2 ? 2 : 1;
            unsigned o[2] = { q & 1, q >> 1 }, pair[2] = { 0, 0 };
            pair[l - 1] = t == 1 ? 3 * mode : mode;
            if (l == 1)
                pair[1] = pair[0]; /* the fills of level 2 read level 1's tiles */
            tessel_spec s;
            spmv_spec(&s, 2, o, 1, pair);
            s.level[l].capacity = UINT64_C(1) << 30;
            for (unsigned x = 0; x < 3; x++)
                s.level[l].tensor[x].partition_bytes = UINT64_C(1) << 28;
            s.level[l].tensor[t].partition_bytes = l == 2 ? 128 : 1024;
            tessel_result x, r;
            tessel_diag diag;
            ck_assert_msg(tessel_model_exact(&s, &c.d, NULL, &x, &diag) == 0, "%s",
                          diag.message);
            ck_assert_msg(tessel_model_stat(&s, &c.d, &c.o, NULL, &r, &diag) == 0, "%s",
                          diag.message);
            char what[96];
            snprintf(what, sizeof(what), "overbooked %s %s/%s case %u", c.name, orders[o[0]],
                     orders[o[1]], m);
            ck_assert_msg(r.stat_walked == 0, "%s walked", what);
            ck_assert_msg(x.traffic[l][t].overflow_tiles > 0, "%s: nothing overbooked", what);
            bumped += x.traffic[l][t].bumped_bytes > 0;
            if (l == 2)
                test_stat_assert_close(&x, &r, 0.12, what);
            else
                test_stat_assert_equal(&x, &r, 0, what);
        }
    ck_assert_uint_gt(bumped, 0);
    case_free(&c);
}
END_TEST

/* Failing each allocation of a 3-level read/gated SpMV point in turn, and
 * of a 2-level one whose x overbooks at the inner level (its tiles kept
 * for rule 4 per read): TESSEL_ENOMEM and nothing leaked, or the unfailed
 * result. */
START_TEST(spmv_nested_out_of_memory)
{
    spmv_case c;
    case_init(&c, 0);
    for (unsigned v = 0; v < 2; v++) {
        unsigned o[3] = { 1, 0, 1 }, pair[3] = { 5, 7, 3 }, ob[2] = { 0, 1 };
        tessel_spec s;
        spmv_spec(&s, v ? 2 : 3, o, 1, v ? ob : pair);
        if (v) {
            s.level[2].capacity = UINT64_C(1) << 30;
            for (unsigned x = 0; x < 3; x++)
                s.level[2].tensor[x].partition_bytes = x == 2 ? 128 : UINT64_C(1) << 28;
        }
        test_alloc ta;
        test_alloc_init(&ta, 0);
        tessel_diag diag;
        tessel_stat_data *sd = test_stat_create_through(&s, &c.d, &c.o, &ta);
        tessel_result want, r;
        ck_assert_int_eq(tessel_model_stat_eval(&s, sd, &want, &diag), 0);
        ck_assert_int_eq(want.stat_walked, 0);
        if (v)
            ck_assert_uint_gt(want.traffic[2][2].bumped_bytes, 0);
        test_stat_eval_fail_each(&s, sd, &ta, &r);
        ck_assert_uint_eq(r.dram_bytes, want.dram_bytes);
        for (unsigned l = 1; l < s.nlevels; l++)
            for (unsigned t = 1; t < 3; t++) {
                ck_assert_uint_eq(r.traffic[l][t].fills, want.traffic[l][t].fills);
                ck_assert_uint_eq(r.traffic[l][t].gated, want.traffic[l][t].gated);
                ck_assert_uint_eq(r.traffic[l][t].bumped_bytes, want.traffic[l][t].bumped_bytes);
            }
        tessel_stat_data_free(&sd);
        ck_assert_int_eq(ta.live, 0);
    }
    case_free(&c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_spmvnest");
    TCase *tc = tcase_create("stat_spmvnest");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, two_levels_equal_exact, 0, 3);
    tcase_add_loop_test(tc, three_levels_equal_exact, 0, 3);
    tcase_add_loop_test(tc, capped_sample_inputs_exact, 0, 3);
    tcase_add_loop_test(tc, overbooked_nested_closed, 0, 3);
    tcase_add_test(tc, spmv_nested_out_of_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

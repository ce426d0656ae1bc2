/* The design-point entry point (module `point`): each route gives what
 * the module it dispatches to gives when called directly, the route is
 * the documented one, missing inputs are refused, the rule 4 verdict, and
 * the template descriptors are complete and agree with the names. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "tessel/point.h"
#include "test_specs.h"
#include "test_data.h"

/* A 3 x 4 times 4 x 3 product (test_template.c's hand-made one). */
static const uint32_t A_RC[5][2] = { { 0, 0 }, { 0, 2 }, { 2, 1 }, { 2, 2 }, { 2, 3 } };
static const uint32_t B_RC[5][2] = { { 0, 0 }, { 0, 1 }, { 2, 1 }, { 3, 0 }, { 3, 2 } };

static tessel_tensor *matrix(uint64_t rows, uint64_t cols, const uint32_t (*rc)[2], size_t n)
{
    return test_coo_matrix(rows, cols, 1, rc, n);
}

typedef struct small {
    tessel_spec spec;
    tessel_workload_data data;
} small;

static void small_init(small *s)
{
    test_spec_spmspm(&s->spec, "IKJ", 1, 1, 0, 1, 64, 32);
    memset(&s->data, 0, sizeof(s->data));
    s->data.ntensors = 3;
    s->data.tensor[1] = matrix(3, 4, A_RC, 5);
    s->data.tensor[2] = matrix(4, 3, B_RC, 5);
    s->data.extent[0] = 3, s->data.extent[1] = 3, s->data.extent[2] = 4;
}

static void small_free(small *s)
{
    tessel_tensor_free(&s->data.tensor[1]);
    tessel_tensor_free(&s->data.tensor[2]);
}

/* The counts two results must share (times differ run to run). */
static void same_traffic(const tessel_result *a, const tessel_result *b)
{
    ck_assert_uint_eq(a->nlevels, b->nlevels);
    ck_assert_uint_eq(a->ntensors, b->ntensors);
    ck_assert_uint_eq(a->dram_bytes, b->dram_bytes);
    ck_assert_uint_eq(a->macs, b->macs);
    ck_assert_uint_eq(a->output_nnz, b->output_nnz);
    ck_assert_uint_eq(a->compulsory_bytes, b->compulsory_bytes);
    ck_assert_int_eq(memcmp(a->traffic, b->traffic, sizeof(a->traffic)), 0);
}

START_TEST(test_fixed_exact)
{
    small s;
    small_init(&s);
    tessel_point_request req = { .spec = &s.spec, .estimator = TESSEL_POINT_EXACT,
                                 .data = &s.data };
    ck_assert_int_eq(tessel_point_route_of(&req), TESSEL_POINT_ROUTE_FIXED);
    tessel_point_result out;
    tessel_result direct;
    tessel_diag d;
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), 0);
    ck_assert_int_eq(tessel_model_exact(&s.spec, &s.data, NULL, &direct, &d), 0);
    same_traffic(&out.result, &direct);
    ck_assert_uint_gt(out.result.dram_bytes, 0);
    ck_assert_int_eq(out.has_choice, 0);
    ck_assert_int_eq(out.has_sparsepipe, 0);
    ck_assert_str_eq(out.strategy, TESSEL_SPEC_STRATEGY_FIXED);
    tessel_point_result_free(&out);

    /* the decisions asked for: the strategy module, the same traffic */
    req.decisions = 1;
    ck_assert_int_eq(tessel_point_route_of(&req), TESSEL_POINT_ROUTE_STRATEGY);
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), 0);
    same_traffic(&out.result, &direct);
    ck_assert_int_eq(out.has_choice, 1);
    ck_assert_int_eq(out.choice.kind, TESSEL_STRATEGY_FIXED);
    tessel_point_result_free(&out);
    small_free(&s);
}
END_TEST

START_TEST(test_template_route)
{
    small s;
    small_init(&s);
    snprintf(s.spec.template_.name, sizeof(s.spec.template_.name), "matraptor");
    tessel_point_request req = { .spec = &s.spec, .estimator = TESSEL_POINT_EXACT,
                                 .data = &s.data };
    ck_assert_int_eq(tessel_point_route_of(&req), TESSEL_POINT_ROUTE_TEMPLATE);
    tessel_point_result out;
    tessel_result direct;
    tessel_diag d;
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), 0);
    ck_assert_int_eq(tessel_template_run(&s.spec, &s.data, NULL, NULL, &direct, &d), 0);
    same_traffic(&out.result, &direct);
    /* matraptor's own policy decides: no strategy choice to report */
    ck_assert_int_eq(out.has_choice, 0);
    tessel_point_result_free(&out);

    /* analytic ignores templates and strategies alike */
    req.estimator = TESSEL_POINT_ANALYTIC;
    ck_assert_int_eq(tessel_point_route_of(&req), TESSEL_POINT_ROUTE_ANALYTIC);
    small_free(&s);
}
END_TEST

START_TEST(test_refusals)
{
    small s;
    small_init(&s);
    tessel_point_result out;
    tessel_diag d;
    tessel_point_request req = { .spec = &s.spec, .estimator = TESSEL_POINT_EXACT };
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.field, "estimator");
    ck_assert_ptr_nonnull(strstr(d.message, "needs the data"));
    req.estimator = TESSEL_POINT_STAT;
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "statistics"));
    /* a fixed mapping under stat without the statistics, data or not */
    req.data = &s.data;
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), TESSEL_EINVAL);
    req.spec = NULL;
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), TESSEL_EINVAL);
    small_free(&s);
}
END_TEST

START_TEST(test_drt_stats_wanted)
{
    tessel_spec spec;
    test_spec_spmspm(&spec, "IKJ", 1, 1, 0, 1, 64, 32);
    tessel_point_request req = { .spec = &spec, .estimator = TESSEL_POINT_STAT };
    ck_assert_int_eq(tessel_point_wants_drt_stats(&req), 0); /* fixed */
    snprintf(spec.strategy.name, sizeof(spec.strategy.name), "drt");
    ck_assert_int_eq(tessel_point_wants_drt_stats(&req), 1);
    req.estimator = TESSEL_POINT_EXACT;
    ck_assert_int_eq(tessel_point_wants_drt_stats(&req), 0);
    req.estimator = TESSEL_POINT_STAT;
    snprintf(spec.strategy.name, sizeof(spec.strategy.name), "swiftiles");
    ck_assert_int_eq(tessel_point_wants_drt_stats(&req), 0);
    ck_assert_str_eq(tessel_point_strategy(&spec), "swiftiles");
}
END_TEST

START_TEST(test_feasible)
{
    static tessel_result r; /* static: large, and zeroed */
    memset(&r, 0, sizeof(r));
    r.nlevels = 3, r.ntensors = 3;
    unsigned level = 99, tensor = 99;
    ck_assert_int_eq(tessel_point_feasible(&r, "fixed", &level, &tensor), 1);
    r.traffic[2][1].overflow_tiles = 4;
    r.traffic[1][0].overflow_tiles = 1;
    /* the outermost level first, whatever the tensor */
    ck_assert_int_eq(tessel_point_feasible(&r, "prescient", &level, &tensor), 0);
    ck_assert_uint_eq(level, 1);
    ck_assert_uint_eq(tensor, 0);
    /* swiftiles overbooks on purpose */
    ck_assert_int_eq(tessel_point_feasible(&r, "swiftiles", NULL, NULL), 1);
    /* level 0 is the backing store: never an overflow */
    memset(&r, 0, sizeof(r));
    r.nlevels = 2, r.ntensors = 3;
    r.traffic[0][1].overflow_tiles = 7;
    ck_assert_int_eq(tessel_point_feasible(&r, "fixed", NULL, NULL), 1);
}
END_TEST

START_TEST(test_descriptors)
{
    ck_assert_ptr_null(tessel_template_describe(TESSEL_TEMPLATE_NONE));
    ck_assert_ptr_null(tessel_template_describe(TESSEL_TEMPLATE_COUNT));
    for (int k = 1; k < (int)TESSEL_TEMPLATE_COUNT; k++) {
        const tessel_template_desc *d = tessel_template_describe((tessel_template_kind)k);
        ck_assert_ptr_nonnull(d);
        ck_assert_int_eq(d->kind, k);
        ck_assert_str_eq(d->name, tessel_template_name((tessel_template_kind)k));
        ck_assert_int_eq(tessel_template_from_name(d->name), k);
        ck_assert_ptr_nonnull(d->summary);
        ck_assert_ptr_nonnull(d->evaluate);
        ck_assert_uint_gt(d->noptions, 0);
        ck_assert_uint_ne(d->estimators & (1u << TESSEL_STRATEGY_EXACT), 0);
        for (unsigned i = 0; i < d->noptions; i++) {
            const tessel_template_option *o = &d->options[i];
            ck_assert_ptr_nonnull(o->key);
            ck_assert_ptr_nonnull(o->fallback);
            ck_assert_ptr_nonnull(o->help);
            if (o->type == TESSEL_TEMPLATE_OPT_CHOICE) {
                ck_assert_uint_gt(o->nvalues, 1);
                /* the default is one of the accepted words */
                int found = 0;
                for (unsigned v = 0; v < o->nvalues; v++)
                    found |= strcmp(o->values[v], o->fallback) == 0;
                ck_assert_msg(found, "%s.%s: default %s not accepted", d->name, o->key,
                              o->fallback);
            }
            for (unsigned j = 0; j < i; j++)
                ck_assert_str_ne(o->key, d->options[j].key);
        }
    }
    /* only extensor runs under tiling strategies */
    ck_assert_uint_ne(tessel_template_describe(TESSEL_TEMPLATE_EXTENSOR)->strategies, 0);
    ck_assert_uint_eq(tessel_template_describe(TESSEL_TEMPLATE_GAMMA)->strategies, 0);
}
END_TEST

static void set_strategy(tessel_spec *spec, const char *name)
{
    snprintf(spec->strategy.name, sizeof(spec->strategy.name), "%s", name);
}

/* Issue 18 item 2: which strategies decide on statistics; a stat design
 * decided on the caller's statistics, or by drt, is flagged; one decided
 * on the strategy's own collection is not; an own-policy template refuses
 * a strategy instead of ignoring it. */
START_TEST(test_stat_design_flags)
{
    small s;
    small_init(&s);
    set_strategy(&s.spec, "d2t2");
    ck_assert_int_eq(tessel_point_decides_on_stats(&s.spec), 1);
    set_strategy(&s.spec, "prescient");
    ck_assert_int_eq(tessel_point_decides_on_stats(&s.spec), 0);
    set_strategy(&s.spec, "conservative");
    s.spec.strategy.dense_worst = 1;
    ck_assert_int_eq(tessel_point_decides_on_stats(&s.spec), 0);
    s.spec.strategy.dense_worst = 0;
    ck_assert_int_eq(tessel_point_decides_on_stats(&s.spec), 1);

    tessel_point_result out;
    tessel_diag d;
    tessel_point_request req = { .spec = &s.spec, .estimator = TESSEL_POINT_STAT,
                                 .data = &s.data };
    ck_assert_msg(tessel_point_evaluate(&req, &out, &d) == 0, "%s", d.message);
    ck_assert_uint_eq(out.result.stat_design_may_differ, 0);
    tessel_stat_data *st = NULL;
    ck_assert_int_eq(tessel_point_stats_create(&s.spec, &s.data, NULL, NULL, &st, &d), 0);
    req.stats = st;
    ck_assert_msg(tessel_point_evaluate(&req, &out, &d) == 0, "%s", d.message);
    ck_assert_uint_eq(out.result.stat_design_may_differ, 1);
    /* prescient reads the data whatever statistics it is given */
    set_strategy(&s.spec, "prescient");
    ck_assert_msg(tessel_point_evaluate(&req, &out, &d) == 0, "%s", d.message);
    ck_assert_uint_eq(out.result.stat_design_may_differ, 0);
    /* under exact nothing is flagged */
    set_strategy(&s.spec, "conservative");
    req.estimator = TESSEL_POINT_EXACT;
    ck_assert_msg(tessel_point_evaluate(&req, &out, &d) == 0, "%s", d.message);
    ck_assert_uint_eq(out.result.stat_design_may_differ, 0);
    tessel_stat_data_free(&st);

    /* matraptor decides its own tiles: a strategy is an error, not ignored */
    snprintf(s.spec.template_.name, sizeof(s.spec.template_.name), "matraptor");
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.field, "mapping.strategy");
    ck_assert_ptr_nonnull(strstr(d.message, "conservative"));
    set_strategy(&s.spec, TESSEL_SPEC_STRATEGY_FIXED);
    ck_assert_int_eq(tessel_point_evaluate(&req, &out, &d), 0);
    small_free(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("point");
    TCase *tc = tcase_create("point");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fixed_exact);
    tcase_add_test(tc, test_template_route);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_drt_stats_wanted);
    tcase_add_test(tc, test_feasible);
    tcase_add_test(tc, test_descriptors);
    tcase_add_test(tc, test_stat_design_flags);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

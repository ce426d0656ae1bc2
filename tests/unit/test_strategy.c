/* Tiling strategies: every choice is checked against the data's own tile
 * grids (the worst tile of conservative and prescient fits, one step
 * larger does not for prescient; Swiftiles lands near its overbooking
 * target; d2t2 never loses to its starting square), choices are
 * deterministic, bad combinations fail with a message, and running out of
 * memory at any allocation fails cleanly. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../src/strategy/strategy_internal.h"
#include "tessel/strategy.h"
#include "test_alloc.h"

#define ONE_LEVEL "bench/strategy/one-level.yaml"

typedef struct fixture {
    tessel_spec *spec;
    tessel_workload_data *data;
} fixture;

/* The one-level spec on `matrix` (a path from the project root) with the
 * given strategy and extra sets; 0 when the matrix is missing. */
static int fixture_load(fixture *f, const char *matrix, const char *strategy,
                        const char *extra)
{
    memset(f, 0, sizeof(*f));
    if (access(matrix, R_OK) != 0)
        return 0;
    char bind[512], strat[64];
    snprintf(bind, sizeof(bind), "workload.data.A='%s'", matrix);
    snprintf(strat, sizeof(strat), "mapping.strategy=%s", strategy);
    const char *sets[3] = { bind, strat, extra };
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = tessel_spec_load(ONE_LEVEL, sets, extra ? 3 : 2, NULL, &f->spec, &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    rc = tessel_workload_load(f->spec, &opt, NULL, &f->data, &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    return 1;
}

static void fixture_free(fixture *f)
{
    tessel_workload_free(&f->data);
    tessel_spec_free(&f->spec);
}

static tessel_strategy_choice choose(const fixture *f)
{
    tessel_strategy_inputs in = { f->data, NULL, NULL };
    tessel_strategy_choice c;
    tessel_diag d;
    int rc = tessel_strategy_choose(f->spec, &in, TESSEL_STRATEGY_EXACT, NULL, &c, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    return c;
}

/* The most nonzeros in one tile of A at per-index tiles t (i 0, k 2). */
static uint64_t worst_tile(const fixture *f, const uint64_t *t)
{
    const tessel_tensor *a = f->data->tensor[1];
    uint64_t shape[2] = { t[0] ? t[0] : a->dims[0], t[2] ? t[2] : a->dims[1] };
    tessel_tile_grid *g = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(a, shape, NULL, &g, NULL), 0);
    uint64_t mx = 0;
    for (uint64_t k = 0; k < g->nonempty; k++)
        mx = tessel_tile_grid_count(g, k) > mx ? tessel_tile_grid_count(g, k) : mx;
    tessel_tile_grid_free(&g);
    return mx;
}

/* A's CSR bytes at tiles t holding n nonzeros, as the LLB stores it. */
static uint64_t a_bytes(const fixture *f, const uint64_t *t, uint64_t n)
{
    const tessel_tensor *a = f->data->tensor[1];
    uint64_t shape[2] = { t[0] ? t[0] : a->dims[0], t[2] ? t[2] : a->dims[1] };
    tessel_format_widths w;
    tessel_format_widths_init(&w);
    return tessel_format_footprint(TESSEL_FORMAT_CSR, 2, shape, n, &w);
}

static uint64_t a_partition(const fixture *f)
{
    return (uint64_t)(f->spec->level[1].tensor[1].partition_fraction *
                      (double)f->spec->level[1].capacity);
}

/* The level sizing order on the 3-level ExTensor spec with a 256 KiB LLB
 * (G51): outer first (prescient's default, tailors §5.2) the PE tiles
 * divide the LLB tiles; inner first the LLB tiles are multiples of the PE
 * tiles; drt refuses inner first. */
static tessel_strategy_choice choose_on(const char *strategy, const char *order, int *rc)
{
    char strat[64], ord[64];
    snprintf(strat, sizeof(strat), "mapping.strategy=%s", strategy);
    snprintf(ord, sizeof(ord), "mapping.strategy_options.order=%s", order);
    const char *sets[3] = { "LLB.capacity=256KiB", strat, ord };
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_spec *spec = NULL;
    tessel_workload_data *data = NULL;
    int r = tessel_spec_load("specs/extensor.yaml", sets, 3, NULL, &spec, &errors);
    ck_assert_msg(r == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    r = tessel_workload_load(spec, &opt, NULL, &data, &errors);
    ck_assert_msg(r == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    tessel_strategy_inputs in = { data, NULL, NULL };
    tessel_strategy_choice c;
    tessel_diag d;
    *rc = tessel_strategy_choose(spec, &in, TESSEL_STRATEGY_EXACT, NULL, &c, &d);
    tessel_workload_free(&data);
    tessel_spec_free(&spec);
    return c;
}

START_TEST(test_level_order)
{
    static const char *const strategies[] = { "conservative", "prescient", "d2t2" };
    for (unsigned s = 0; s < 3; s++)
        for (int outer = 0; outer < 2; outer++) {
            int rc;
            tessel_strategy_choice c =
                choose_on(strategies[s], outer ? "outer-first" : "inner-first", &rc);
            ck_assert_int_eq(rc, 0);
            ck_assert_uint_eq(c.levels, 6u);
            int smaller = 0;
            for (unsigned x = 0; x < 3; x++) {
                uint64_t llb = c.tile[1][x] ? c.tile[1][x] : 1000;
                uint64_t peb = c.tile[2][x] ? c.tile[2][x] : 1000;
                /* a tile covering the whole index (G51: 1000) nests any inner one */
                ck_assert_msg(llb >= 1000 || llb % peb == 0, "%s %s: LLB %llu, PEB %llu",
                              strategies[s],
                              outer ? "outer-first" : "inner-first", (unsigned long long)llb,
                              (unsigned long long)peb);
                smaller |= llb < 1000;
            }
            ck_assert(smaller); /* 256 KiB cannot hold G51's B whole */
        }
    /* the orders differ for prescient: the LLB sized alone is larger */
    int rc;
    tessel_strategy_choice o = choose_on("prescient", "outer-first", &rc);
    tessel_strategy_choice i = choose_on("prescient", "inner-first", &rc);
    ck_assert(memcmp(o.tile, i.tile, sizeof(o.tile)) != 0);
    (void)choose_on("drt", "inner-first", &rc);
    ck_assert_int_eq(rc, TESSEL_EINVAL);
}
END_TEST

START_TEST(test_names)
{
    for (unsigned k = 0; k < TESSEL_STRATEGY_COUNT; k++)
        ck_assert_int_eq(tessel_strategy_from_name(tessel_strategy_name(k)), (int)k);
    ck_assert_int_eq(tessel_strategy_from_name("swiftile"), -1);
    ck_assert_int_eq(tessel_strategy_from_name(NULL), -1);
    tessel_spec s;
    memset(&s, 0, sizeof(s));
    ck_assert(tessel_strategy_is_fixed(&s)); /* built in code: no strategy named */
    snprintf(s.strategy.name, sizeof(s.strategy.name), "d2t2");
    ck_assert(!tessel_strategy_is_fixed(&s));
}
END_TEST

START_TEST(test_spec_defaults_and_options)
{
    fixture f;
    if (!fixture_load(&f, "examples/data/G51.mtx.gz", "swiftiles",
                      "mapping.strategy_options={overbooking: 5%, tail_samples: 20, rounds: 3, "
                      "seed: 7, worst: dense, micro_tile: 16x8, growth: alternating, "
                      "levels: [LLB]}"))
        ck_abort_msg("bundled example missing");
    const tessel_spec_strategy *st = &f.spec->strategy;
    ck_assert_str_eq(st->name, "swiftiles");
    ck_assert(fabs(st->overbooking - 0.05) < 1e-12);
    ck_assert_uint_eq(st->tail_samples, 20);
    ck_assert_uint_eq(st->rounds, 3);
    ck_assert_uint_eq(st->seed, 7);
    ck_assert_int_eq(st->dense_worst, 1);
    ck_assert_uint_eq(st->micro[0], 16);
    ck_assert_uint_eq(st->micro[1], 8);
    ck_assert_int_eq(st->growth, 1);
    ck_assert_uint_eq(st->levels, 2u);
    fixture_free(&f);
    ck_assert(fixture_load(&f, "examples/data/G51.mtx.gz", "fixed", NULL));
    ck_assert(fabs(f.spec->strategy.overbooking - 0.10) < 1e-12);
    ck_assert_uint_eq(f.spec->strategy.tail_samples, 10);
    ck_assert_uint_eq(f.spec->strategy.rounds, 8);
    ck_assert_uint_eq(f.spec->strategy.micro[0], 32);
    fixture_free(&f);
}
END_TEST

/* Conservative's worst tile fits (checked on the data); prescient's
 * fits, is at least as large, and one step more would not fit. */
START_TEST(test_uniform_fit)
{
    const char *matrices[] = { "examples/data/G51.mtx.gz", "examples/data/jagmesh7.mtx.gz",
                               "../shared/data/mtx/bcsstk16.mtx.gz" };
    for (unsigned m = 0; m < 3; m++) {
        fixture fc, fp;
        if (!fixture_load(&fc, matrices[m], "conservative", NULL))
            continue;
        ck_assert(fixture_load(&fp, matrices[m], "prescient", NULL));
        tessel_strategy_choice c = choose(&fc), p = choose(&fp);
        uint64_t part = a_partition(&fc);
        ck_assert_uint_le(a_bytes(&fc, c.tile[1], worst_tile(&fc, c.tile[1])), part);
        ck_assert_uint_le(a_bytes(&fp, p.tile[1], worst_tile(&fp, p.tile[1])), part);
        ck_assert(c.overbooking_rate == 0 && p.overbooking_rate == 0);
        ck_assert_uint_ge(p.tile[1][0] ? p.tile[1][0] : UINT64_MAX,
                          c.tile[1][0] ? c.tile[1][0] : UINT64_MAX);
        if (p.tile[1][0]) { /* square tiles, so one more row and column */
            uint64_t more[3] = { p.tile[1][0] + 1, p.tile[1][1] + 1, p.tile[1][2] + 1 };
            ck_assert_uint_gt(a_bytes(&fp, more, worst_tile(&fp, more)), part);
        }
        ck_assert(c.buffer_utilization > 0 && c.buffer_utilization <= 1);
        fixture_free(&fc);
        fixture_free(&fp);
    }
}
END_TEST

/* ExTensor-N: dense tiles fit, whatever the data. */
START_TEST(test_conservative_dense)
{
    fixture f;
    ck_assert(fixture_load(&f, "examples/data/G51.mtx.gz", "conservative",
                           "mapping.strategy_options.worst=dense"));
    tessel_strategy_choice c = choose(&f);
    uint64_t t = c.tile[1][0];
    ck_assert_uint_gt(t, 0);
    ck_assert_uint_le(a_bytes(&f, c.tile[1], t * t), a_partition(&f));
    fixture_free(&f);
}
END_TEST

/* Swiftiles lands near its target on real matrices, the same every run. */
START_TEST(test_swiftiles_target)
{
    const char *matrices[] = { "../shared/data/mtx/ca-CondMat.mtx.gz",
                               "../shared/data/mtx/bcsstk16.mtx.gz",
                               "../shared/data/mtx/wiki-Vote.mtx.gz" };
    for (unsigned m = 0; m < 3; m++) {
        fixture f;
        if (!fixture_load(&f, matrices[m], "swiftiles", NULL))
            continue;
        tessel_strategy_choice a = choose(&f), b = choose(&f);
        ck_assert_mem_eq(a.tile, b.tile, sizeof(a.tile));
        ck_assert(fabs(a.overbooking_target - 0.10) < 1e-12);
        ck_assert_msg(fabs(a.overbooking_rate - 0.10) < 0.06, "%s: overbooking %.3f",
                      matrices[m], a.overbooking_rate);
        ck_assert_uint_eq(a.sampled_tiles, 200); /* k / y = 100 per input */
        fixture_free(&f);
    }
}
END_TEST

/* d2t2's choice fits and the stat estimator prices it no worse than the
 * square tile it starts from (that candidate is among those it tries). */
START_TEST(test_d2t2)
{
    fixture f, c;
    ck_assert(fixture_load(&f, "examples/data/jagmesh7.mtx.gz", "d2t2", NULL));
    ck_assert(fixture_load(&c, "examples/data/jagmesh7.mtx.gz", "conservative", NULL));
    tessel_strategy_inputs in = { f.data, NULL, NULL };
    tessel_result rd, rc;
    tessel_strategy_choice cd, cc;
    tessel_diag d;
    ck_assert_int_eq(tessel_strategy_run(f.spec, &in, TESSEL_STRATEGY_STAT, NULL, &rd, &cd, &d), 0);
    ck_assert_int_eq(tessel_strategy_run(c.spec, &in, TESSEL_STRATEGY_STAT, NULL, &rc, &cc, &d), 0);
    ck_assert(cd.overbooking_rate == 0);
    ck_assert_uint_le(rd.dram_bytes, rc.dram_bytes);
    ck_assert(fabs(cd.predicted_dram_bytes - (double)rd.dram_bytes) < 1);
    ck_assert_uint_gt(cd.candidates, 1);
    /* the decision's CPU time (compare.csv's decide_cpu_seconds): set, and
     * no more than its wall time, the deciding thread being the only one */
    ck_assert(cd.cpu_seconds > 0);
    ck_assert(cd.cpu_seconds <= cd.seconds + 1e-3);
    fixture_free(&f);
    fixture_free(&c);
}
END_TEST

/* d2t2's lower bound of a candidate's price (src/strategy/d2t2_bound.c)
 * stays below the price itself on every shape tried, at both levels of the
 * seed spec (csr), with B's ranks stored the other way round, in coo and
 * bitmap, and under the mirrored order JIK: a bound above a price would
 * skip a shape that could win, and change d2t2's choice. */
START_TEST(test_d2t2_bound)
{
    static const char *const variants[] = { NULL, "PEB.tensors.B.rank_order=[j,k]",
                                            "PEB.format=coo", "PEB.format=bitmap",
                                            "mapping.PEB.order=JIK" };
    for (unsigned v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
        const char *sets[3] = { "workload.data.A='examples/data/jagmesh7.mtx.gz'",
                                "mapping.strategy=d2t2", variants[v] };
        tessel_diag_list errors;
        tessel_diag_list_init(&errors, NULL);
        tessel_spec *spec = NULL;
        tessel_workload_data *data = NULL;
        int rc = tessel_spec_load("specs/extensor.yaml", sets, variants[v] ? 3 : 2, NULL, &spec,
                                  &errors);
        ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
        tessel_load_options opt;
        tessel_load_options_init(&opt);
        rc = tessel_workload_load(spec, &opt, NULL, &data, &errors);
        ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
        tessel_diag_list_free(&errors);
        tessel_strategy_inputs in = { data, NULL, NULL };
        strat_ctx c;
        tessel_diag d;
        ck_assert_int_eq(strat_ctx_init(&c, spec, &in, TESSEL_STRATEGY_STAT, NULL, &d), 0);
        ck_assert_int_eq(strat_need_stats(&c), 0);
        unsigned bounded = 0;
        for (unsigned l = 1; l <= 2; l++)
            for (unsigned code = 0; code < 27; code++) {
                strat_tiles t;
                memset(&t, 0, sizeof(t));
                for (unsigned x = 0, k = code; x < 3; x++, k /= 3) /* base edge, 8x, whole */
                    t.t[x] = k % 3 == 2 ? 0 : strat_base_granule(&c, x) * (k % 3 ? 8 : 1);
                double lb = -1, bytes = -1;
                ck_assert_int_eq(d2t2_bound(&c, l, &t, &lb), 0);
                ck_assert_int_eq(strat_d2t2_price(&c, l, &t, &bytes), 0);
                ck_assert_msg(lb <= bytes, "%s: level %u tiles %llu,%llu,%llu: bound %.17g > %.17g",
                              variants[v] ? variants[v] : "csr", l, (unsigned long long)t.t[0],
                              (unsigned long long)t.t[1], (unsigned long long)t.t[2], lb, bytes);
                bounded += lb > 0;
            }
        ck_assert_uint_gt(bounded, 10); /* the bound applies to most of the shapes */
        strat_ctx_free(&c);
        tessel_workload_free(&data);
        tessel_spec_free(&spec);
    }
}
END_TEST

START_TEST(test_refusals)
{
    fixture f;
    ck_assert(fixture_load(&f, "examples/data/G51.mtx.gz", "prescient", NULL));
    tessel_strategy_inputs none = { NULL, NULL, NULL };
    tessel_result r;
    tessel_strategy_choice c;
    tessel_diag d;
    tessel_diag_clear(&d);
    ck_assert_int_eq(tessel_strategy_run(f.spec, &none, TESSEL_STRATEGY_STAT, NULL, &r, &c, &d),
                     TESSEL_EINVAL);
    ck_assert(d.message[0]);
    fixture_free(&f);
}
END_TEST

/* A 240 x 240 band plus scattered nonzeros, written to a temporary .mtx
 * (small, so that failing each allocation in turn stays quick). */
static void small_matrix(char *path, size_t n)
{
    snprintf(path, n, "/tmp/tessel-test-strategy-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    snprintf(path + strlen(path), n - strlen(path), ".mtx");
    uint64_t dims[2] = { 240, 240 };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    for (uint32_t r = 0; r < 240; r++)
        for (uint32_t c = 0; c < 240; c++)
            if ((r > c ? r - c : c - r) < 4 || (r * 7919u + c * 104729u) % 97u == 0) {
                uint32_t e[2] = { r, c };
                ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    ck_assert_int_eq(tessel_tensor_write_mtx(t, path, NULL), 0);
    tessel_tensor_free(&t);
}

/* Every allocation failing in turn (past the first 600, every stride-th):
 * ENOMEM (or a survived failure), nothing leaked. The buffer is cut to 4 KiB so that the small matrix
 * still needs tiles. */
static void oom_run(const char *strategy, tessel_strategy_estimator est, long stride)
{
    char path[64];
    small_matrix(path, sizeof(path));
    fixture f;
    ck_assert(fixture_load(&f, path, strategy, "architecture.levels.LLB.capacity=4KiB"));
    tessel_strategy_inputs in = { f.data, NULL, NULL };
    for (long n = 1;; n += n < 600 ? 1 : stride) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_result r;
        tessel_strategy_choice c;
        tessel_diag d;
        int rc = tessel_strategy_run(f.spec, &in, est, &ta.allocator, &r, &c, &d);
        ck_assert_msg(ta.live == 0, "%s: %ld blocks leaked failing allocation %ld", strategy,
                      ta.live, n);
        if (rc == 0 && ta.calls < n)
            break; /* no allocation failed: every one has been tried */
        if (rc == 0)
            continue; /* a failure the code may survive (e.g. shrinking an array) */
        ck_assert_msg(rc == TESSEL_ENOMEM, "%s: allocation %ld: %s", strategy, n, d.message);
    }
    fixture_free(&f);
    unlink(path);
}

START_TEST(test_oom)
{
    oom_run("conservative", TESSEL_STRATEGY_STAT, 1);
    oom_run("prescient", TESSEL_STRATEGY_EXACT, 1);
    oom_run("swiftiles", TESSEL_STRATEGY_EXACT, 1);
    /* d2t2 prices ~100 candidates, each with the same allocations: all of
     * the first 600 (the statistics and the first candidates), then every
     * 7th, which still lands in every candidate (4,500 in all) */
    oom_run("d2t2", TESSEL_STRATEGY_STAT, 7);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("strategy");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_spec_defaults_and_options);
    tcase_add_test(tc, test_uniform_fit);
    tcase_add_test(tc, test_conservative_dense);
    tcase_add_test(tc, test_swiftiles_target);
    tcase_add_test(tc, test_d2t2);
    tcase_add_test(tc, test_d2t2_bound);
    tcase_add_test(tc, test_level_order);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_oom);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

/* The extensor template (template.h, src/template/extensor.c): each
 * variant is exactly its strategy on the three-level hierarchy (n
 * conservative sized as if dense, p prescient, ob swiftiles) at both
 * buffers; drt is DRT at both buffers (module drt's two-level walk), or
 * with drt_levels llb DRT's own DRAM traffic with the on-chip levels of a
 * uniform estimate; bad variants, options and a spec that also names a
 * strategy are refused with the field; tessel_template_run dispatches to
 * it; every allocation failing in turn fails cleanly. */
#include <check.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tessel/drt.h"
#include "tessel/template.h"
#include "test_alloc.h"

#define G51 "examples/data/G51.mtx.gz"
#define JAGMESH7 "examples/data/jagmesh7.mtx.gz"

typedef struct fixture {
    tessel_spec *spec;
    tessel_workload_data *data;
} fixture;

/* specs/extensor-VARIANT.yaml on `matrix` with up to two more sets; the
 * load must succeed. */
static void fixture_load(fixture *f, const char *variant, const char *matrix, const char *set1,
                         const char *set2)
{
    memset(f, 0, sizeof(*f));
    char path[64], bind[256];
    snprintf(path, sizeof(path), "specs/extensor-%s.yaml", variant);
    snprintf(bind, sizeof(bind), "workload.data.A=%s", matrix);
    const char *sets[3] = { bind, set1, set2 };
    size_t n = set2 ? 3 : set1 ? 2 : 1;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = tessel_spec_load(path, sets, n, NULL, &f->spec, &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    rc = tessel_workload_load(f->spec, &opt, NULL, &f->data, &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
}

static void fixture_free(fixture *f)
{
    tessel_workload_free(&f->data);
    tessel_spec_free(&f->spec);
}

static int run(const fixture *f, tessel_strategy_estimator est, const tessel_allocator *a,
               tessel_result *r, tessel_strategy_choice *c, tessel_diag *d)
{
    tessel_strategy_inputs in = { f->data, NULL, NULL };
    return tessel_template_extensor_run(f->spec, &in, est, a, r, c, d);
}

static uint64_t bytes_at(const tessel_result *r, unsigned l)
{
    uint64_t b = 0;
    for (unsigned t = 0; t < r->ntensors; t++)
        b += r->traffic[l][t].data_bytes + r->traffic[l][t].metadata_bytes;
    return b;
}

static void assert_same(const tessel_result *a, const tessel_result *b)
{
    ck_assert_uint_eq(a->nlevels, b->nlevels);
    ck_assert_uint_eq(a->dram_bytes, b->dram_bytes);
    ck_assert_uint_eq(a->compulsory_bytes, b->compulsory_bytes);
    ck_assert_uint_eq(a->macs, b->macs);
    ck_assert_uint_eq(a->intersections, b->intersections);
    ck_assert_uint_eq(a->output_nnz, b->output_nnz);
    for (unsigned l = 0; l < a->nlevels; l++)
        ck_assert_uint_eq(bytes_at(a, l), bytes_at(b, l));
}

/* ------------------------------------------------------------------ */

/* No fetch without a multiply (issue 20), the smallest case: A 3 x 3 with
 * a_01 and a_20 (1-based (1,2) and (3,1)), Z = A * A. a_01 selects row 1
 * of B, empty; row 2 of B (b_20) meets column 2 of A, empty; the one
 * multiply is a_20 b_01. CSR tiles, 8-byte values, 4-byte coordinates and
 * offsets: a tile of T0 rows holding n nonzeros is (T0 + 1) x 4 + n x 12.
 *   Seed specs (30 MiB LLB, 32 KiB PEs): every variant takes the whole
 *   3 x 3 as one tile, and a tile moves whole (ExTensor intersects at tile
 *   granularity, tailors §5.2): A 4 x 4 + 2 x 12 = 40, B 40 (data 16, 8 of
 *   them b_20's, which no multiply uses: what the hardware fetches), Z one
 *   nonzero 16 + 12 = 28: DRAM 108.
 *   400-byte buffers (drt: 1 x 1 micro tiles): 1 x 1 x 1 tiles, and an
 *   iteration moves its tiles only when both are non-empty (docs/semantics.md
 *   rule 1): A(2,0) and B(0,1) alone, 2 x 4 + 12 = 20 each; a_01 and b_20
 *   stay in DRAM. Z 20: DRAM 60 (exact; the stat path's tiles are
 *   multiples of its base grid). */
static const char *const TINY_MTX = "%%MatrixMarket matrix coordinate pattern general\n"
                                    "3 3 2\n1 2\n3 1\n";

static void tiny_case(const char *path, const char *variant, int small, uint64_t a_bytes,
                      uint64_t b_bytes, uint64_t dram)
{
    char spec[64], bind[PATH_MAX + 32];
    snprintf(spec, sizeof(spec), "specs/extensor-%s.yaml", variant);
    snprintf(bind, sizeof(bind), "workload.data.A=%s", path);
    const char *sets[4] = { bind, "LLB.capacity=400", "PEB.capacity=400",
                            "mapping.strategy_options.micro_tile=1" };
    size_t n = small ? (strcmp(variant, "drt") == 0 ? 4 : 3) : 1;
    fixture f;
    memset(&f, 0, sizeof(f));
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = tessel_spec_load(spec, sets, n, NULL, &f.spec, &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    opt.cache_policy = TESSEL_CACHE_OFF;
    rc = tessel_workload_load(f.spec, &opt, NULL, &f.data, &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    /* small: exact only; the stat path's tiles are multiples of its base
     * grid (128 x 128), so it takes the whole 3 x 3 again */
    for (int e = 0; e < (small ? 1 : 2); e++) {
        tessel_result r;
        tessel_strategy_choice c;
        tessel_diag d;
        rc = run(&f, e ? TESSEL_STRATEGY_STAT : TESSEL_STRATEGY_EXACT, NULL, &r, &c, &d);
        ck_assert_msg(rc == 0, "%s: %s", variant, d.message);
        const tessel_traffic *a = &r.traffic[0][1], *b = &r.traffic[0][2];
        /* the DRAM total on the exact path only: drt's stat path prices Z
         * differently on the seed spec (14 metadata bytes against 20) */
        ck_assert_msg(a->data_bytes + a->metadata_bytes == a_bytes &&
                          b->data_bytes + b->metadata_bytes == b_bytes &&
                          (e || r.dram_bytes == dram),
                      "%s %s %s: A %llu B %llu DRAM %llu", variant, small ? "small" : "seed",
                      e ? "stat" : "exact", (unsigned long long)(a->data_bytes + a->metadata_bytes),
                      (unsigned long long)(b->data_bytes + b->metadata_bytes),
                      (unsigned long long)r.dram_bytes);
        ck_assert_uint_eq(b->data_bytes, small ? 8 : 16);
        ck_assert_uint_eq(r.macs, 1);
    }
    fixture_free(&f);
}

START_TEST(test_unused_hand)
{
    char dir[] = "/tmp/tessel-extensor-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/tiny.mtx", dir);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(TINY_MTX, fp);
    ck_assert_int_eq(fclose(fp), 0);
    static const char *const variants[] = { "n", "p", "ob", "drt" };
    for (size_t v = 0; v < 4; v++) {
        tiny_case(path, variants[v], 0, 40, 40, 108);
        tiny_case(path, variants[v], 1, 20, 20, 60);
    }
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_variant_names)
{
    const char *variant[] = { "n", "p", "ob", "drt" };
    const char *strategy[] = { "conservative", "prescient", "swiftiles", "drt" };
    for (int v = 0; v < 4; v++) {
        fixture f;
        fixture_load(&f, variant[v], G51, NULL, NULL);
        ck_assert_int_eq(tessel_template_of(f.spec), TESSEL_TEMPLATE_EXTENSOR);
        ck_assert_str_eq(tessel_template_extensor_strategy(f.spec), strategy[v]);
        fixture_free(&f);
    }
    fixture f;
    fixture_load(&f, "n", G51, "template=none", NULL);
    ck_assert_ptr_null(tessel_template_extensor_strategy(f.spec));
    ck_assert_ptr_null(tessel_template_extensor_strategy(NULL));
    fixture_free(&f);
}
END_TEST

/* n, p and ob are their strategy on the spec without the template, at
 * every buffer level, exact and stat. LLB cut to 256 KiB so that jagmesh7
 * needs LLB tiles as well. */
START_TEST(test_uniform_variants_are_their_strategy)
{
    const char *variant[] = { "n", "p", "ob" };
    const char *strategy[] = { "mapping.strategy=conservative", "mapping.strategy=prescient",
                               "mapping.strategy=swiftiles" };
    for (int v = 0; v < 3; v++)
        for (int e = 0; e < 2; e++) {
            tessel_strategy_estimator est = e ? TESSEL_STRATEGY_STAT : TESSEL_STRATEGY_EXACT;
            fixture f, g;
            fixture_load(&f, variant[v], JAGMESH7, "LLB.capacity=256KiB", NULL);
            fixture_load(&g, variant[v], JAGMESH7, "LLB.capacity=256KiB", "template=none");
            tessel_spec plain = *g.spec;
            snprintf(plain.strategy.name, sizeof(plain.strategy.name), "%s",
                     strategy[v] + strlen("mapping.strategy="));
            plain.strategy.dense_worst = v == 0;
            tessel_result a, b;
            tessel_strategy_choice ca, cb;
            tessel_diag d;
            int rc = run(&f, est, NULL, &a, &ca, &d);
            ck_assert_msg(rc == 0, "%s: %s", variant[v], d.message);
            tessel_strategy_inputs in = { g.data, NULL, NULL };
            rc = tessel_strategy_run(&plain, &in, est, NULL, &b, &cb, &d);
            ck_assert_msg(rc == 0, "%s: %s", variant[v], d.message);
            assert_same(&a, &b);
            ck_assert_str_eq(ca.shape, cb.shape);
            /* both buffers sized, intersections counted */
            ck_assert_uint_eq(ca.levels, (1u << 1) | (1u << 2));
            ck_assert_uint_eq(a.nlevels, 3);
            ck_assert_uint_gt(a.intersections, 0);
            ck_assert_uint_ge(a.intersections, a.macs / 64);
            fixture_free(&f);
            fixture_free(&g);
        }
}
END_TEST

/* n sizes for dense tiles: its tiles never exceed p's and its DRAM
 * traffic is never below p's on jagmesh7 at 256 KiB. */
START_TEST(test_n_no_better_than_p)
{
    fixture n, p;
    fixture_load(&n, "n", JAGMESH7, "LLB.capacity=256KiB", NULL);
    fixture_load(&p, "p", JAGMESH7, "LLB.capacity=256KiB", NULL);
    tessel_result rn, rp;
    tessel_strategy_choice cn, cp;
    tessel_diag d;
    ck_assert_int_eq(run(&n, TESSEL_STRATEGY_EXACT, NULL, &rn, &cn, &d), 0);
    ck_assert_int_eq(run(&p, TESSEL_STRATEGY_EXACT, NULL, &rp, &cp, &d), 0);
    ck_assert_uint_ge(rn.dram_bytes, rp.dram_bytes);
    ck_assert(cn.buffer_utilization <= cp.buffer_utilization);
    ck_assert(cn.overbooking_rate == 0 && cp.overbooking_rate == 0);
    fixture_free(&n);
    fixture_free(&p);
}
END_TEST

/* drt, drt_levels llb: DRAM and the LLB's DRAM side are DRT's on the LLB
 * alone; the LLB's reads and the PEB level are the uniform estimate's
 * with prescient PEB tiles; the LLB tile is a multiple of the PEB tile. */
START_TEST(test_drt_variant)
{
    for (int e = 0; e < 2; e++) {
        tessel_strategy_estimator est = e ? TESSEL_STRATEGY_STAT : TESSEL_STRATEGY_EXACT;
        fixture f;
        fixture_load(&f, "drt", JAGMESH7, "LLB.capacity=256KiB",
                     "template_options.drt_levels=llb");
        tessel_result r, outer;
        tessel_strategy_choice c;
        tessel_diag d;
        int rc = run(&f, est, NULL, &r, &c, &d);
        ck_assert_msg(rc == 0, "%s", d.message);
        ck_assert_int_eq(c.kind, TESSEL_STRATEGY_DRT);
        ck_assert_uint_eq(r.nlevels, 3);
        ck_assert_uint_gt(r.intersections, 0);
        ck_assert_ptr_nonnull(strstr(c.shape, "LLB dynamic 32x32 mean"));
        ck_assert_ptr_nonnull(strstr(c.shape, "PEB i:"));
        for (unsigned x = 0; x < f.spec->workload.nindices; x++)
            if (c.tile[1][x] && c.tile[2][x])
                ck_assert_uint_eq(c.tile[1][x] % c.tile[2][x], 0);

        /* DRT alone on the LLB */
        tessel_spec two = *f.spec;
        two.nlevels = 2;
        snprintf(two.template_.name, sizeof(two.template_.name), "none");
        two.template_.options = NULL;
        snprintf(two.strategy.name, sizeof(two.strategy.name), "drt");
        tessel_strategy_inputs in = { f.data, NULL, NULL };
        rc = tessel_strategy_run(&two, &in, est, NULL, &outer, NULL, &d);
        ck_assert_msg(rc == 0, "%s", d.message);
        ck_assert_uint_eq(r.dram_bytes, outer.dram_bytes);
        ck_assert_uint_eq(r.compulsory_bytes, outer.compulsory_bytes);
        ck_assert_uint_eq(bytes_at(&r, 0), bytes_at(&outer, 0));
        ck_assert_uint_eq(bytes_at(&r, 1), bytes_at(&outer, 1));
        ck_assert_uint_eq(r.macs, outer.macs);
        for (unsigned t = 0; t < r.ntensors; t++)
            ck_assert_uint_eq(r.traffic[1][t].fills, outer.traffic[1][t].fills);

        /* the on-chip side: the uniform estimate with the choice's tiles */
        tessel_spec tiled = two;
        tiled.nlevels = 3;
        snprintf(tiled.strategy.name, sizeof(tiled.strategy.name), "fixed");
        tiled.strategy.levels = 1u << 2;
        memcpy(tiled.level[1].tile, c.tile[1], sizeof(tiled.level[1].tile));
        memcpy(tiled.level[2].tile, c.tile[2], sizeof(tiled.level[2].tile));
        tessel_result on_chip;
        rc = tessel_strategy_run(&tiled, &in, est, NULL, &on_chip, NULL, &d);
        ck_assert_msg(rc == 0, "%s", d.message);
        ck_assert_uint_eq(bytes_at(&r, 2), bytes_at(&on_chip, 2));
        ck_assert_uint_eq(r.intersections, on_chip.intersections);
        for (unsigned t = 0; t < r.ntensors; t++)
            ck_assert_uint_eq(r.traffic[1][t].reads, on_chip.traffic[1][t].reads);
        fixture_free(&f);
    }
}
END_TEST

/* drt, drt_levels all (the default): module drt's two-level walk, with
 * the same DRAM side as DRT alone on the LLB, the PE side its sub-tasks;
 * against llb on the same spec, the DRAM side is identical and the PE
 * buffers take fewer input bytes (DRT's sub-tiles fill the partitions
 * instead of the worst-case uniform tile). */
START_TEST(test_drt_levels_variant)
{
    for (int e = 0; e < 2; e++) {
        tessel_strategy_estimator est = e ? TESSEL_STRATEGY_STAT : TESSEL_STRATEGY_EXACT;
        fixture f, g;
        fixture_load(&f, "drt", JAGMESH7, "LLB.capacity=256KiB", NULL);
        fixture_load(&g, "drt", JAGMESH7, "LLB.capacity=256KiB",
                     "template_options.drt_levels=llb");
        tessel_result r, m, direct;
        tessel_strategy_choice c;
        tessel_diag d;
        int rc = run(&f, est, NULL, &r, &c, &d);
        ck_assert_msg(rc == 0, "%s", d.message);
        ck_assert_msg(run(&g, est, NULL, &m, NULL, &d) == 0, "%s", d.message);
        ck_assert_int_eq(c.kind, TESSEL_STRATEGY_DRT);
        ck_assert_uint_eq(c.levels, (1u << 1) | (1u << 2));
        ck_assert_uint_eq(r.nlevels, 3);
        ck_assert_ptr_nonnull(strstr(c.shape, "LLB dynamic 32x32 mean"));
        ck_assert_ptr_nonnull(strstr(c.shape, "PEB dynamic 32x32 mean"));
        ck_assert_str_eq(r.estimator, e ? "stat" : "exact");
        /* the DRAM side is the merge's (DRT alone on the LLB) */
        ck_assert_uint_eq(r.dram_bytes, m.dram_bytes);
        ck_assert_uint_eq(r.compulsory_bytes, m.compulsory_bytes);
        ck_assert_uint_eq(bytes_at(&r, 0), bytes_at(&m, 0));
        ck_assert_uint_eq(bytes_at(&r, 1), bytes_at(&m, 1));
        ck_assert_uint_eq(r.macs, m.macs);
        for (unsigned t = 0; t < r.ntensors; t++) {
            ck_assert_uint_eq(r.traffic[1][t].fills, m.traffic[1][t].fills);
            /* the LLB serves exactly what the PE buffers take */
            ck_assert_uint_eq(r.traffic[1][t].reads,
                              r.traffic[2][t].fills + r.traffic[2][t].updates);
            ck_assert_uint_eq(r.traffic[1][t].child_read_data, r.traffic[2][t].in_data);
            ck_assert_uint_eq(r.traffic[2][t].reads, r.macs);
        }
        uint64_t in_r = 0, in_m = 0;
        for (unsigned t = 1; t < r.ntensors; t++) {
            in_r += r.traffic[2][t].data_bytes + r.traffic[2][t].metadata_bytes;
            in_m += m.traffic[2][t].data_bytes + m.traffic[2][t].metadata_bytes;
        }
        ck_assert_uint_lt(in_r, in_m);
        /* the template only hands over: module drt's result */
        tessel_drt_options o;
        tessel_drt_options_init(&o);
        if (e) {
            tessel_spec cut = *f.spec;
            cut.nlevels = 2;
            tessel_drt_stats *st = NULL;
            ck_assert_int_eq(tessel_drt_stats_create(&cut, f.data, &o, NULL, &st, &d), 0);
            ck_assert_int_eq(tessel_drt_levels_stat(f.spec, st, o.growth, &direct, NULL, &d), 0);
            tessel_drt_stats_free(&st);
        } else {
            ck_assert_int_eq(tessel_drt_levels_exact(f.spec, f.data, &o, NULL, &direct, NULL, &d),
                             0);
        }
        for (unsigned l = 0; l < 3; l++)
            for (unsigned t = 0; t < r.ntensors; t++) {
                ck_assert_uint_eq(r.traffic[l][t].data_bytes, direct.traffic[l][t].data_bytes);
                ck_assert_uint_eq(r.traffic[l][t].metadata_bytes,
                                  direct.traffic[l][t].metadata_bytes);
                ck_assert_uint_eq(r.traffic[l][t].fills, direct.traffic[l][t].fills);
            }
        ck_assert_uint_eq(r.intersections, direct.intersections);
        fixture_free(&f);
        fixture_free(&g);
    }
}
END_TEST

/* tessel_template_run (exact) is the extensor run. */
START_TEST(test_template_run_dispatch)
{
    const char *variant[] = { "n", "p", "ob", "drt" };
    for (int v = 0; v < 4; v++) {
        fixture f;
        fixture_load(&f, variant[v], G51, "LLB.capacity=256KiB", NULL);
        tessel_result a, b;
        tessel_diag d;
        ck_assert_int_eq(run(&f, TESSEL_STRATEGY_EXACT, NULL, &a, NULL, &d), 0);
        int rc = tessel_template_run(f.spec, f.data, NULL, NULL, &b, &d);
        ck_assert_msg(rc == 0, "%s: %s", variant[v], d.message);
        assert_same(&a, &b);
        fixture_free(&f);
    }
}
END_TEST

/* ------------------------------------------------------------------ */

static void expect_error(const char *variant, const char *set1, const char *set2, int code,
                         const char *field, const char *words)
{
    fixture f;
    fixture_load(&f, variant, G51, set1, set2);
    tessel_result r;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = run(&f, TESSEL_STRATEGY_EXACT, NULL, &r, NULL, &d);
    ck_assert_int_eq(rc, code);
    ck_assert_str_eq(d.field, field);
    ck_assert_msg(strstr(d.message, words), "%s", d.message);
    ck_assert_uint_gt(d.line, 0);
    fixture_free(&f);
}

START_TEST(test_refusals)
{
    expect_error("n", "template_options.variant=tailors", NULL, TESSEL_EINVAL,
                 "template_options.variant", "must be n, p, ob or drt, not 'tailors'");
    expect_error("n", "template_options.variant=N", NULL, TESSEL_EINVAL,
                 "template_options.variant", "not 'N'");
    expect_error("n", "template_options.varaint=p", NULL, TESSEL_EINVAL, "template_options",
                 "did you mean 'variant'?");
    expect_error("p", "mapping.strategy=prescient", NULL, TESSEL_EINVAL, "mapping.strategy",
                 "must be left unset");
    expect_error("drt", "template_options.drt_levels=pe", NULL, TESSEL_EINVAL,
                 "template_options.drt_levels", "must be all or llb, not 'pe'");
    expect_error("drt", "template_options.drt_level=llb", NULL, TESSEL_EINVAL,
                 "template_options", "did you mean 'drt_levels'?");

    /* not the extensor template */
    fixture f;
    fixture_load(&f, "n", G51, "template=none", NULL);
    tessel_result r;
    tessel_diag d;
    ck_assert_int_eq(run(&f, TESSEL_STRATEGY_EXACT, NULL, &r, NULL, &d), TESSEL_EINVAL);
    fixture_free(&f);
    /* drt without data: statistics alone are not enough */
    fixture_load(&f, "drt", G51, NULL, NULL);
    tessel_stat_data *s = NULL;
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    ck_assert_int_eq(tessel_stat_data_create(f.spec, f.data, &opt, NULL, &s, NULL), 0);
    ck_assert_int_eq(tessel_template_run(f.spec, NULL, s, NULL, &r, &d), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.message, "micro-tile statistics"));
    tessel_stat_data_free(&s);
    fixture_free(&f);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Every allocation failing in turn (past the first 400, every stride-th):
 * ENOMEM or the same result, nothing leaked. */

static void oom_run(const char *variant, tessel_strategy_estimator est, long stride,
                    const char *set)
{
    fixture f;
    fixture_load(&f, variant, G51, "LLB.capacity=256KiB", set);
    tessel_result good, r;
    tessel_diag d;
    ck_assert_int_eq(run(&f, est, NULL, &good, NULL, &d), 0);
    for (long n = 1;; n += n < 400 ? 1 : stride) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        int rc = run(&f, est, &ta.allocator, &r, NULL, &d);
        ck_assert_msg(ta.live == 0, "%s: %ld blocks leaked failing allocation %ld", variant,
                      ta.live, n);
        if (rc == 0) {
            ck_assert_uint_eq(r.dram_bytes, good.dram_bytes);
            if (ta.calls < n)
                break; /* no allocation failed: every one has been tried */
            continue;
        }
        ck_assert_msg(rc == TESSEL_ENOMEM, "%s: allocation %ld: %s", variant, n, d.message);
    }
    fixture_free(&f);
}

/* n, p and ob allocate only inside the strategy they resolve to (whose
 * own suite fails every allocation of each); n checks the hand-over. drt
 * with drt_levels llb allocates in three steps of its own (DRT, the inner
 * choice, the on-chip estimate), drt_levels all in module drt's two-level
 * walk (and the statistics it collects): both estimators of each. */
START_TEST(test_oom_n)
{
    oom_run("n", TESSEL_STRATEGY_EXACT, 5, NULL);
}
END_TEST

START_TEST(test_oom_drt_llb_exact)
{
    oom_run("drt", TESSEL_STRATEGY_EXACT, 3, "template_options.drt_levels=llb");
}
END_TEST

START_TEST(test_oom_drt_llb_stat)
{
    oom_run("drt", TESSEL_STRATEGY_STAT, 5, "template_options.drt_levels=llb");
}
END_TEST

START_TEST(test_oom_drt_exact)
{
    oom_run("drt", TESSEL_STRATEGY_EXACT, 3, NULL);
}
END_TEST

START_TEST(test_oom_drt_stat)
{
    oom_run("drt", TESSEL_STRATEGY_STAT, 5, NULL);
}
END_TEST

int main(void)
{
    if (access(G51, R_OK) != 0 || access(JAGMESH7, R_OK) != 0) {
        fprintf(stderr, "test_extensor: run from the project root (needs %s)\n", G51);
        return 1;
    }
    Suite *s = suite_create("extensor");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_variant_names);
    tcase_add_test(tc, test_unused_hand);
    tcase_add_test(tc, test_uniform_variants_are_their_strategy);
    tcase_add_test(tc, test_n_no_better_than_p);
    tcase_add_test(tc, test_drt_variant);
    tcase_add_test(tc, test_drt_levels_variant);
    tcase_add_test(tc, test_template_run_dispatch);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    /* each out-of-memory run is its own test with its own limit: together they
     * take minutes under ASan on a loaded 2-core machine */
    TCase *oom = tcase_create("oom");
    tcase_set_timeout(oom, 600);
    tcase_add_test(oom, test_oom_n);
    tcase_add_test(oom, test_oom_drt_llb_exact);
    tcase_add_test(oom, test_oom_drt_llb_stat);
    tcase_add_test(oom, test_oom_drt_exact);
    tcase_add_test(oom, test_oom_drt_stat);
    suite_add_tcase(s, oom);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

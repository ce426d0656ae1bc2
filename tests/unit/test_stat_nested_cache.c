/* The nested boundaries' summaries (src/model/stat_nested_cache.c): at 3
 * and 4 levels, through a tessel_stat_cache, every result must equal the
 * estimate without one byte for byte, over random points whose tile
 * shapes come from small menus (so that geometries recur) and whose
 * orders, formats, bit widths, capacities and partitions vary; the
 * summaries must be used (hits); points they cannot decide (an output
 * tile that may spill, rule 4 per child read) go the full way; running out
 * of memory anywhere in the cache falls back and leaks nothing. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/model.h"
#include "test_alloc.h"
#include "test_data.h"
#include "test_specs.h"

typedef struct rng {
    uint64_t state;
} rng;

static uint64_t below(rng *r, uint64_t n)
{
    r->state = r->state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (r->state >> 33) % n;
}

/* rows x cols with a band and random entries. */
static tessel_tensor *synthetic(uint64_t rows, uint64_t cols, double density, unsigned seed)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    rng r = { seed };
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < cols; j++) {
            int band = (i > j ? i - j : j - i) < 4;
            if (band || (double)below(&r, 1000000) < density * 1e6) {
                uint32_t e[2] = { i, j };
                ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
        }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

static const char *const orders[4] = { "IJK", "KIJ", "IKJ", "JKI" };

/* Level l of s: a copy of level 1 with tile (i, j, k), order and name. */
static void add_level(tessel_spec *s, unsigned l, const uint64_t *tile, const char *order,
                      const char *name)
{
    tessel_spec o;
    test_spec_spmspm(&o, order, 8, 8, 8, 1, 64, 32);
    s->level[l] = s->level[1];
    snprintf(s->level[l].name, sizeof(s->level[l].name), "%s", name);
    for (unsigned x = 0; x < 3; x++) {
        s->level[l].tile[x] = tile[x];
        s->level[l].order[x] = o.level[1].order[x];
    }
    s->nlevels = l + 1;
}

/* Random capacity, partitions and formats of level l. */
static void random_buffer(rng *r, tessel_spec_level *lv, uint64_t min_kib)
{
    lv->capacity = (min_kib << 10) << below(r, 8);
    for (unsigned t = 0; t < 3; t++) {
        lv->tensor[t].partition_fraction = 0;
        lv->tensor[t].partition_bytes = 0;
        if (below(r, 2))
            lv->tensor[t].partition_fraction = 0.1 + 0.05 * (double)below(r, 4);
        lv->tensor[t].format = below(r, 3) == 0 ? (int)below(r, 5) : -1;
    }
}

/* A point of 3 (or, with deep, sometimes 4) levels: tiles from menus
 * (in units of base), orders from a few. */
static void nested_point(rng *r, uint64_t base, int deep, tessel_spec *s)
{
    static const uint64_t llb[2][3] = { { 4, 4, 4 }, { 16, 8, 32 } };
    static const uint64_t peb[2][3] = { { 1, 1, 1 }, { 2, 4, 2 } };
    static const unsigned bits[3] = { 16, 32, 64 };
    const uint64_t *t1 = llb[below(r, 2)], *t2 = peb[below(r, 2)];
    uint64_t e1[3] = { t1[0] * base, t1[1] * base, t1[2] * base };
    uint64_t e2[3] = { t2[0] * base, t2[1] * base, t2[2] * base };
    test_spec_spmspm(s, orders[below(r, 2)], e1[0], e1[2], e1[1], (int)below(r, 5),
                     bits[below(r, 3)], bits[below(r, 3)]);
    random_buffer(r, &s->level[1], 16);
    add_level(s, 2, e2, orders[2 * below(r, 2)], "PEB");
    random_buffer(r, &s->level[2], 4);
    if (deep && below(r, 3) == 0) {
        uint64_t e3[3] = { base / 2, base / 2, base / 2 };
        add_level(s, 3, e3, "IJK", "REG");
        random_buffer(r, &s->level[3], 1);
    }
}

static void assert_same(tessel_result *plain, tessel_result *cached, const char *what, int p)
{
    plain->seconds = cached->seconds = 0;
    ck_assert_msg(memcmp(plain, cached, sizeof(*plain)) == 0,
                  "%s, point %d: cached result differs (dram %llu vs %llu, PEB Z out %llu vs "
                  "%llu)",
                  what, p, (unsigned long long)plain->dram_bytes,
                  (unsigned long long)cached->dram_bytes,
                  (unsigned long long)plain->traffic[2][0].out_data,
                  (unsigned long long)cached->traffic[2][0].out_data);
}

/* `points` random nested points through one cache and without it. */
static void compare_many(const char *what, tessel_tensor *a, const tessel_stat_options *o,
                         int points, int deep, uint64_t seed)
{
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", o->base[0], o->base[0], o->base[0], 1, 64, 32);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s, &d, o, NULL, &stats, &diag) == 0, "%s: %s", what,
                  diag.message);
    tessel_stat_cache *cache = NULL;
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &cache), 0);
    rng r = { seed };
    int evaluated = 0;
    for (int p = 0; p < points; p++) {
        nested_point(&r, o->base[0], deep, &s);
        tessel_result plain, cached;
        tessel_diag d1, d2;
        int rc1 = tessel_model_stat_eval(&s, stats, &plain, &d1);
        int rc2 = tessel_model_stat_eval_cached(&s, stats, cache, &cached, &d2);
        ck_assert_msg(rc1 == rc2, "%s, point %d: %d (%s) vs %d (%s)", what, p, rc1, d1.message,
                      rc2, d2.message);
        if (rc1) {
            ck_assert_str_eq(d1.message, d2.message);
            continue;
        }
        assert_same(&plain, &cached, what, p);
        evaluated++;
    }
    uint64_t hits, misses;
    tessel_stat_cache_nested_counts(cache, &hits, &misses);
    ck_assert_msg(evaluated > points / 2, "%s: only %d points evaluated", what, evaluated);
    /* the menus give at most 2 x 2 x 2 x 2 geometries (x 2 at 4 levels);
     * a point whose output may spill or whose level 1 overbooks goes the
     * full way */
    ck_assert_msg(hits > (uint64_t)evaluated / 4 && misses > 0, "%s: %llu hits, %llu misses",
                  what, (unsigned long long)hits, (unsigned long long)misses);
    tessel_stat_cache_free(&cache);
    tessel_stat_data_free(&stats);
}

START_TEST(nested_cached_equals_uncached_shared)
{
    tessel_load_options lo;
    tessel_load_options_init(&lo);
    tessel_tensor *m = NULL;
    tessel_diag d;
    int rc = tessel_tensor_load("../shared/data/mtx/bcsstk16.mtx.gz", &lo, NULL, &m, NULL, &d);
    ck_assert_msg(rc == 0, "bcsstk16: %s", d.message);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 16;
    compare_many("bcsstk16", m, &o, 100, 0, 11);
    tessel_tensor_free(&m);
}
END_TEST

START_TEST(nested_cached_equals_uncached_synthetic)
{
    tessel_tensor *a = synthetic(400, 400, 0.02, 12);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 8;
    o.output_min_flops = 5000; /* a partial output sample */
    compare_many("synthetic 400, partial sample", a, &o, 150, 1, 13);
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 8;
    o.output_fraction = 1;
    compare_many("synthetic 400, whole sample", a, &o, 80, 1, 14);
    tessel_tensor_free(&a);
}
END_TEST

/* Fails allocation n of the cache for every n: the points still equal the
 * uncached ones and nothing leaks; with no failure, two geometries are
 * summarised and a third point (another capacity) is priced from one. */
START_TEST(nested_out_of_memory_every_allocation)
{
    tessel_tensor *a = synthetic(300, 300, 0.02, 15);
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 16;
    o.output_min_flops = 3000;
    tessel_spec s[3];
    test_spec_spmspm(&s[0], "IJK", 64, 64, 64, 1, 64, 32);
    s[0].level[1].capacity = 1 << 20;
    uint64_t peb[3] = { 16, 32, 16 };
    add_level(&s[0], 2, peb, "IJK", "PEB");
    s[0].level[2].capacity = 1 << 16;
    s[1] = s[0];
    s[1].level[2].capacity = 1 << 15; /* another capacity: the same geometry */
    s[2] = s[0];
    add_level(&s[2], 2, peb, "KIJ", "PEB"); /* another order */
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag), 0);
    tessel_result want[3];
    for (unsigned p = 0; p < 3; p++)
        ck_assert_msg(tessel_model_stat_eval(&s[p], stats, &want[p], &diag) == 0, "%s",
                      diag.message);
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_stat_cache *cache = NULL;
        int rc = tessel_stat_cache_create(stats, &ta.allocator, &cache);
        if (rc) {
            ck_assert_int_eq(rc, TESSEL_ENOMEM);
            ck_assert_int_eq(ta.live, 0);
            continue;
        }
        for (unsigned p = 0; p < 3; p++) {
            tessel_result r;
            ck_assert_int_eq(tessel_model_stat_eval_cached(&s[p], stats, cache, &r, &diag), 0);
            assert_same(&want[p], &r, "out of memory", (int)p);
        }
        uint64_t hits, misses;
        tessel_stat_cache_nested_counts(cache, &hits, &misses);
        tessel_stat_cache_free(&cache);
        ck_assert_int_eq(ta.live, 0);
        if (ta.calls < n) { /* no allocation failed: every one was tried */
            ck_assert_uint_eq(misses, 2);
            ck_assert_uint_eq(hits, 1);
            break;
        }
        ck_assert_int_lt(n, 100000);
    }
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("stat_nested_cache");
    TCase *tc = tcase_create("stat_nested_cache");
    tcase_set_timeout(tc, 280);
    if (access("../shared/data/mtx/bcsstk16.mtx.gz", R_OK) == 0)
        tcase_add_test(tc, nested_cached_equals_uncached_shared);
    else
        printf("note: ../shared/data is missing: the check on bcsstk16 does not run\n");
    tcase_add_test(tc, nested_cached_equals_uncached_synthetic);
    tcase_add_test(tc, nested_out_of_memory_every_allocation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

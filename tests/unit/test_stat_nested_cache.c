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
#include "nested_points.h"

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
 * uncached ones and nothing leaks; with no failure, three geometries are
 * summarised, a point (another capacity) is priced from one, and the
 * point with another LLB i edge takes A's merge walk from the first. */
START_TEST(nested_out_of_memory_every_allocation)
{
    tessel_tensor *a = synthetic(300, 300, 0.02, 15);
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 16;
    o.output_min_flops = 3000;
    tessel_spec s[4];
    test_spec_spmspm(&s[0], "IJK", 64, 64, 64, 1, 64, 32);
    s[0].level[1].capacity = 1 << 20;
    uint64_t peb[3] = { 16, 32, 16 };
    add_level(&s[0], 2, peb, "IJK", "PEB");
    s[0].level[2].capacity = 1 << 16;
    s[1] = s[0];
    s[1].level[2].capacity = 1 << 15; /* another capacity: the same geometry */
    s[2] = s[0];
    add_level(&s[2], 2, peb, "KIJ", "PEB"); /* another order */
    s[3] = s[0];
    s[3].level[1].tile[0] = 128; /* another LLB i edge: a new geometry, A's row walk kept */
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag), 0);
    tessel_result want[4];
    for (unsigned p = 0; p < 4; p++)
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
        for (unsigned p = 0; p < 4; p++) {
            tessel_result r;
            ck_assert_int_eq(tessel_model_stat_eval_cached(&s[p], stats, cache, &r, &diag), 0);
            assert_same(&want[p], &r, "out of memory", (int)p);
        }
        uint64_t hits, misses, walk_hits, walks;
        tessel_stat_cache_nested_counts(cache, &hits, &misses);
        tessel_stat_cache_nested_walks(cache, &walk_hits, &walks);
        tessel_stat_cache_free(&cache);
        ck_assert_int_eq(ta.live, 0);
        if (ta.calls < n) { /* no allocation failed: every one was tried */
            ck_assert_uint_eq(misses, 3);
            ck_assert_uint_eq(hits, 1);
            /* s[3] takes A's row walk from s[0]'s; B's reads the i edge: kept */
            ck_assert_uint_eq(walk_hits, 1);
            ck_assert_uint_eq(walks, 3);
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

/* The stat estimator's per-shape summaries (src/model/stat_cache.c):
 * through a cache, every result must equal the estimate without one byte
 * for byte, over many random mappings (tile shapes, all six loop orders,
 * formats, bit widths, capacities, partitions) on real matrices at their
 * full size; a full cache starts again; running out of memory anywhere
 * in the cache falls back to the uncached path and leaks nothing; caches
 * shared by threads give the same results and build each shape once. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/model.h"
#include "test_alloc.h"
#include "test_specs.h"
#include "test_data.h"
#include "test_synthetic.h"

static tessel_tensor *load(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "../shared/data/mtx/%s.mtx.gz", name);
    return test_load_tensor(path);
}

/* rows x cols with a band of 5 and random entries (tiles of many sizes). */
static tessel_tensor *synthetic(uint64_t rows, uint64_t cols, double density, unsigned seed)
{
    return synthetic_banded(rows, cols, density, seed, 5);
}

static void data_of(tessel_workload_data *d, tessel_tensor *a, tessel_tensor *b)
{
    test_spmspm_data(d, a, b);
}

static const char *const orders[6] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };

/* A tile edge along an index of extent n: base times a power of two, or
 * the whole extent. */
static uint64_t random_edge(rng *r, uint64_t base, uint64_t n)
{
    uint64_t e = base << below(r, 6);
    return below(r, 5) == 0 || e >= n ? n : e;
}

/* A random design point: order, tile shape, format, bit widths,
 * capacity, partitions (none, fractions or bytes). */
static void random_point(rng *r, const tessel_workload_data *d, uint64_t base, tessel_spec *s)
{
    static const unsigned value_bits[3] = { 16, 32, 64 }, coord_bits[3] = { 8, 16, 32 };
    test_spec_spmspm(s, orders[below(r, 6)], random_edge(r, base, d->extent[0]),
                     random_edge(r, base, d->extent[2]), random_edge(r, base, d->extent[1]),
                     (int)below(r, 5), value_bits[below(r, 3)], coord_bits[below(r, 3)]);
    tessel_spec_level *llb = &s->level[1];
    llb->capacity = (UINT64_C(16) << 10) << below(r, 10);
    for (unsigned t = 0; t < 3; t++) {
        switch (below(r, 3)) {
        case 0:
            break;
        case 1:
            llb->tensor[t].partition_fraction = 0.05 + 0.05 * (double)below(r, 6);
            break;
        default:
            llb->tensor[t].partition_bytes = (UINT64_C(1) << 10) << below(r, 12);
        }
        /* a per-tensor format now and then */
        if (below(r, 4) == 0)
            llb->tensor[t].format = (int)below(r, 5);
    }
}

static void assert_same_result(tessel_result *plain, tessel_result *cached, const char *what,
                               int point)
{
    plain->seconds = cached->seconds = 0;
    ck_assert_msg(memcmp(plain, cached, sizeof(*plain)) == 0,
                  "%s, point %d: cached result differs (dram %llu vs %llu, total out %llu vs "
                  "%llu)",
                  what, point, (unsigned long long)plain->dram_bytes,
                  (unsigned long long)cached->dram_bytes,
                  (unsigned long long)plain->traffic[1][0].out_data,
                  (unsigned long long)cached->traffic[1][0].out_data);
}

/* `points` random mappings through one cache and without it. */
static void compare_many(const char *what, tessel_tensor *a, tessel_tensor *b,
                         const tessel_stat_options *o, int points, uint64_t seed)
{
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", o->base[0], o->base[0], o->base[0], 1, 64, 32);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s, &d, o, NULL, &stats, &diag) == 0, "%s: %s", what,
                  diag.message);
    tessel_stat_cache *cache = NULL;
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &cache), 0);
    rng r = { seed };
    int evaluated = 0;
    for (int p = 0; p < points; p++) {
        random_point(&r, &d, o->base[0], &s);
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
        assert_same_result(&plain, &cached, what, p);
        evaluated++;
    }
    uint64_t hits, misses;
    tessel_stat_cache_counts(cache, &hits, &misses);
    ck_assert_msg(evaluated > points / 2, "%s: only %d points evaluated", what, evaluated);
    ck_assert_msg(hits > 0 && misses > 0, "%s: %llu hits, %llu misses", what,
                  (unsigned long long)hits, (unsigned long long)misses);
    tessel_stat_cache_free(&cache);
    tessel_stat_data_free(&stats);
}

START_TEST(cached_equals_uncached_sampled_output)
{
    /* the largest shared matrix, and a directed graph (A != A^T) */
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    tessel_tensor *m = load("ca-CondMat");
    compare_many("ca-CondMat", m, m, &o, 240, 1);
    tessel_tensor_free(&m);
    m = load("wiki-Vote");
    compare_many("wiki-Vote", m, m, &o, 240, 2);
    tessel_tensor_free(&m);
}
END_TEST

START_TEST(cached_equals_uncached_whole_and_no_sample)
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1; /* every output row: the non-empty output tiles counted */
    tessel_tensor *m = load("bcsstk16");
    compare_many("bcsstk16, whole sample", m, m, &o, 200, 3);
    tessel_tensor_free(&m);
    tessel_stat_options_init(&o);
    o.output_min_flops = 0; /* no sample: eq. 20 */
    m = load("p2p-Gnutella24");
    compare_many("p2p-Gnutella24, no sample", m, m, &o, 200, 4);
    tessel_tensor_free(&m);
}
END_TEST

START_TEST(cached_equals_uncached_rectangular_small_base)
{
    /* A 300 x 500 times B 500 x 200, base 8: many shapes and sizes */
    tessel_tensor *a = synthetic(300, 500, 0.02, 5), *b = synthetic(500, 200, 0.03, 6);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 8;
    o.output_min_flops = 4000; /* a sampled output */
    compare_many("300x500 * 500x200", a, b, &o, 300, 7);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* More shapes than a cache keeps: it starts again and stays exact. */
START_TEST(full_cache_starts_again)
{
    tessel_tensor *a = synthetic(200, 200, 0.02, 8);
    tessel_workload_data d;
    data_of(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 8;
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", 8, 8, 8, 1, 64, 32);
    s.level[1].capacity = 4096;
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &stats, &diag), 0);
    tessel_stat_cache *cache = NULL;
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &cache), 0);
    int shapes = 0;
    for (uint64_t i = 8; i <= 200 && shapes < 1100; i += 8)
        for (uint64_t k = 8; k <= 200 && shapes < 1100; k += 8)
            for (uint64_t j = 8; j <= 96 && shapes < 1100; j += 8, shapes++) {
                s.level[1].tile[0] = i;
                s.level[1].tile[2] = k;
                s.level[1].tile[1] = j;
                tessel_result plain, cached;
                ck_assert_int_eq(tessel_model_stat_eval(&s, stats, &plain, &diag), 0);
                ck_assert_int_eq(tessel_model_stat_eval_cached(&s, stats, cache, &cached, &diag),
                                 0);
                assert_same_result(&plain, &cached, "full cache", shapes);
            }
    uint64_t hits, misses;
    tessel_stat_cache_counts(cache, &hits, &misses);
    ck_assert_uint_eq(misses, 1100);
    /* the first shape was dropped when the cache filled up: built again */
    s.level[1].tile[0] = s.level[1].tile[1] = s.level[1].tile[2] = 8;
    tessel_result r;
    ck_assert_int_eq(tessel_model_stat_eval_cached(&s, stats, cache, &r, &diag), 0);
    tessel_stat_cache_counts(cache, &hits, &misses);
    ck_assert_uint_eq(misses, 1101);
    tessel_stat_cache_free(&cache);
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&a);
}
END_TEST

/* Threads sharing one table of shapes (tessel_stat_cache_create_shared):
 * each walks the same points from its own offset; every result equals the
 * uncached one, and the shapes are built once among them. */
#define SHARED_THREADS 3

typedef struct shared_job {
    const tessel_spec *points;
    const tessel_result *plain;
    int npoints, offset, mismatch;
    const tessel_stat_data *stats;
    tessel_stat_cache *cache;
} shared_job;

static void *shared_walk(void *arg)
{
    shared_job *j = arg;
    for (int n = 0; n < j->npoints; n++) {
        int p = (n + j->offset) % j->npoints;
        tessel_result r;
        tessel_diag d;
        if (tessel_model_stat_eval_cached(&j->points[p], j->stats, j->cache, &r, &d) != 0) {
            j->mismatch = p + 1;
            break;
        }
        tessel_result want = j->plain[p];
        r.seconds = want.seconds = 0;
        if (memcmp(&r, &want, sizeof(r)) != 0) {
            j->mismatch = p + 1;
            break;
        }
    }
    return NULL;
}

/* The points s[0..n) run by SHARED_THREADS threads through shared caches;
 * returns the shapes the threads built in all. */
static uint64_t run_shared(const tessel_spec *s, const tessel_result *plain, int n,
                           const tessel_stat_data *stats)
{
    shared_job job[SHARED_THREADS];
    pthread_t tid[SHARED_THREADS];
    for (int t = 0; t < SHARED_THREADS; t++) {
        job[t] = (shared_job){ s, plain, n, t * n / SHARED_THREADS, 0, stats, NULL };
        int rc = t == 0 ? tessel_stat_cache_create(stats, NULL, &job[t].cache)
                        : tessel_stat_cache_create_shared(job[0].cache, &job[t].cache);
        ck_assert_int_eq(rc, 0);
    }
    for (int t = 0; t < SHARED_THREADS; t++)
        ck_assert_int_eq(pthread_create(&tid[t], NULL, shared_walk, &job[t]), 0);
    uint64_t built = 0;
    for (int t = 0; t < SHARED_THREADS; t++) {
        pthread_join(tid[t], NULL);
        ck_assert_msg(job[t].mismatch == 0, "thread %d: point %d differs from the uncached one",
                      t, job[t].mismatch - 1);
        uint64_t hits, misses;
        tessel_stat_cache_counts(job[t].cache, &hits, &misses);
        built += misses;
    }
    /* freed in another order than created: the table outlives its first cache */
    for (int t = 0; t < SHARED_THREADS; t++)
        tessel_stat_cache_free(&job[t].cache);
    return built;
}

START_TEST(shared_between_threads)
{
    tessel_tensor *a = synthetic(300, 300, 0.02, 11);
    tessel_workload_data d;
    data_of(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 8;
    o.output_min_flops = 4000;
    enum { N = 240 };
    tessel_spec *s = malloc(N * sizeof(*s));
    tessel_result *plain = malloc(N * sizeof(*plain));
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(plain);
    test_spec_spmspm(&s[0], "IKJ", 8, 8, 8, 1, 64, 32);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag), 0);
    /* points of few shapes (edges from a short menu), so shapes repeat */
    rng r = { 12 };
    int n = 0;
    while (n < N) {
        random_point(&r, &d, 32, &s[n]);
        if (tessel_model_stat_eval(&s[n], stats, &plain[n], &diag) == 0)
            n++;
    }
    tessel_stat_cache *one = NULL;
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &one), 0);
    for (int p = 0; p < N; p++) {
        tessel_result c;
        ck_assert_int_eq(tessel_model_stat_eval_cached(&s[p], stats, one, &c, &diag), 0);
    }
    uint64_t hits, shapes;
    tessel_stat_cache_counts(one, &hits, &shapes);
    tessel_stat_cache_free(&one);
    ck_assert_msg(shapes > 1 && hits > shapes, "%llu shapes, %llu hits",
                  (unsigned long long)shapes, (unsigned long long)hits);
    for (int round = 0; round < 4; round++)
        ck_assert_uint_eq(run_shared(s, plain, N, stats), shapes);
    tessel_stat_data_free(&stats);
    free(plain);
    free(s);
    tessel_tensor_free(&a);
}
END_TEST

/* Threads walking more shapes than the table keeps: it empties itself
 * while other threads read and build shapes, and results stay exact. */
START_TEST(shared_table_starts_again)
{
    tessel_tensor *a = synthetic(200, 200, 0.02, 8);
    tessel_workload_data d;
    data_of(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 8;
    enum { N = 1100 };
    tessel_spec *s = malloc(N * sizeof(*s));
    tessel_result *plain = malloc(N * sizeof(*plain));
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(plain);
    test_spec_spmspm(&s[0], "IKJ", 8, 8, 8, 1, 64, 32);
    s[0].level[1].capacity = 4096;
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag), 0);
    int n = 0;
    for (uint64_t i = 8; i <= 200 && n < N; i += 8)
        for (uint64_t k = 8; k <= 200 && n < N; k += 8)
            for (uint64_t j = 8; j <= 96 && n < N; j += 8, n++) {
                s[n] = s[0];
                s[n].level[1].tile[0] = i;
                s[n].level[1].tile[2] = k;
                s[n].level[1].tile[1] = j;
                ck_assert_int_eq(tessel_model_stat_eval(&s[n], stats, &plain[n], &diag), 0);
            }
    /* 1,100 shapes, 1,024 kept: each thread meets shapes another dropped */
    ck_assert_uint_ge(run_shared(s, plain, N, stats), N);
    tessel_stat_data_free(&stats);
    free(plain);
    free(s);
    tessel_tensor_free(&a);
}
END_TEST

/* Points the summaries do not cover take the uncached path; a cache
 * serves only its own statistics. */
START_TEST(other_paths_and_wrong_statistics)
{
    tessel_tensor *a = synthetic(200, 200, 0.02, 9);
    tessel_workload_data d;
    data_of(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 16;
    tessel_spec s;
    test_spec_spmspm(&s, "KIJ", 32, 64, 32, 1, 64, 32);
    s.level[1].capacity = 1 << 16;
    tessel_stat_data *stats = NULL, *other = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &stats, &diag), 0);
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &other, &diag), 0);
    tessel_stat_cache *cache = NULL;
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &cache), 0);
    tessel_result plain, cached;
    /* a second buffer level: boundary 1 cached, the nested one in closed form */
    s.nlevels = 3;
    s.level[2] = s.level[1];
    s.level[2].tile[0] = s.level[2].tile[1] = s.level[2].tile[2] = 16;
    ck_assert_int_eq(tessel_model_stat_eval(&s, stats, &plain, &diag), 0);
    ck_assert_int_eq(tessel_model_stat_eval_cached(&s, stats, cache, &cached, &diag), 0);
    assert_same_result(&plain, &cached, "nested levels", 0);
    /* unskipped B: the walk too */
    s.nlevels = 2;
    s.level[1].tensor[2].sparse.skip_on = 0;
    ck_assert_int_eq(tessel_model_stat_eval(&s, stats, &plain, &diag), 0);
    ck_assert_int_eq(tessel_model_stat_eval_cached(&s, stats, cache, &cached, &diag), 0);
    assert_same_result(&plain, &cached, "unskipped", 0);
    uint64_t hits, misses;
    tessel_stat_cache_counts(cache, &hits, &misses);
    /* nested levels price boundary 1 from one summary, the walk none */
    ck_assert_uint_eq(hits + misses, 1);
    /* a tile edge off the base grid: priced between the grid shapes, the
     * same both ways */
    s.level[1].tensor[2].sparse.skip_on = 2;
    s.level[1].tile[0] = 40;
    ck_assert_int_eq(tessel_model_stat_eval(&s, stats, &plain, &diag), 0);
    ck_assert_int_eq(tessel_model_stat_eval_cached(&s, stats, cache, &cached, &diag), 0);
    ck_assert_uint_eq(plain.offgrid_edges, 1);
    assert_same_result(&plain, &cached, "off the grid", 0);
    /* another statistics object */
    s.level[1].tile[0] = 32;
    ck_assert_int_eq(tessel_model_stat_eval_cached(&s, other, cache, &cached, &diag),
                     TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(diag.message, "stat cache"));
    tessel_stat_cache_free(&cache);
    tessel_stat_data_free(&stats);
    tessel_stat_data_free(&other);
    tessel_tensor_free(&a);
}
END_TEST

/* Fails allocation n of the cache for every n: creating it reports
 * ENOMEM; evaluating falls back to the uncached path with the same
 * results; nothing leaks. */
START_TEST(out_of_memory_every_allocation)
{
    tessel_tensor *a = synthetic(300, 300, 0.02, 10);
    tessel_workload_data d;
    data_of(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = 16;
    o.output_min_flops = 3000;
    tessel_spec s[3];
    test_spec_spmspm(&s[0], "IKJ", 32, 64, 32, 1, 64, 32);
    s[0].level[1].capacity = 1 << 14;
    s[1] = s[0];
    s[1].level[1].capacity = 1 << 12; /* another capacity */
    s[2] = s[0];
    s[2].level[1].order[0] = 1, s[2].level[1].order[1] = 2, s[2].level[1].order[2] = 0; /* JKI */
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag), 0);
    tessel_result want[3];
    for (unsigned p = 0; p < 3; p++)
        ck_assert_int_eq(tessel_model_stat_eval(&s[p], stats, &want[p], &diag), 0);
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_stat_cache *cache = NULL;
        int rc = tessel_stat_cache_create(stats, &ta.allocator, &cache);
        if (rc) {
            ck_assert_int_eq(rc, TESSEL_ENOMEM);
            ck_assert_ptr_null(cache);
            ck_assert_int_eq(ta.live, 0);
            continue;
        }
        for (unsigned p = 0; p < 3; p++) {
            tessel_result r;
            ck_assert_int_eq(tessel_model_stat_eval_cached(&s[p], stats, cache, &r, &diag), 0);
            assert_same_result(&want[p], &r, "out of memory", (int)p);
        }
        uint64_t hits, misses;
        tessel_stat_cache_counts(cache, &hits, &misses);
        tessel_stat_cache_free(&cache);
        ck_assert_int_eq(ta.live, 0);
        if (ta.calls < n) { /* no allocation failed: every one was tried */
            ck_assert_uint_eq(misses, 1);
            ck_assert_uint_eq(hits, 2);
            break;
        }
        ck_assert_int_lt(n, 100000);
    }
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&a);
}
END_TEST

/* The spilling points of kept_step_tables_equal_per_point: point q of 18
 * (three loop orders, Z's partition and the capacity varied). */
static void spill_point(tessel_spec *s, int q)
{
    static const char *const ord[3] = { "KIJ", "KJI", "IKJ" };
    test_spec_spmspm(s, ord[q % 3], 64, 256, 1024, 1, 32, 32);
    test_set_ranks(&s->level[1].tensor[0], TESSEL_RANK_UB, TESSEL_RANK_UB);
    s->level[1].capacity = (UINT64_C(1) << 20) << (q / 9);
    s->level[1].tensor[0].partition_bytes = (UINT64_C(16) << 10) << (2 * ((q / 3) % 3));
}

/* The step count's tables and each shape's operand lines kept by the
 * cache across points that spill inside their visits (stat_outspill.c,
 * declined by the summaries): KIJ, KJI and IKJ on a directed graph at one
 * tile shape, Z's partition and the capacity varied, each point equal to
 * its evaluation without a cache; then the first points again, from the
 * tables the later ones filled. */
START_TEST(kept_step_tables_equal_per_point)
{
    tessel_tensor *m = load("wiki-Vote");
    tessel_workload_data d;
    data_of(&d, m, m);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    tessel_spec s;
    test_spec_spmspm(&s, "KIJ", 64, 256, 1024, 1, 32, 32);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s, &d, &o, NULL, &stats, &diag) == 0, "%s",
                  diag.message);
    tessel_stat_cache *cache = NULL;
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &cache), 0);
    int spilled = 0;
    for (int p = 0; p < 30; p++) {
        spill_point(&s, p % 18); /* 18 points, then the first 12 again */
        tessel_result plain, cached;
        ck_assert_msg(tessel_model_stat_eval(&s, stats, &plain, &diag) == 0, "%s", diag.message);
        ck_assert_msg(tessel_model_stat_eval_cached(&s, stats, cache, &cached, &diag) == 0, "%s",
                      diag.message);
        spilled += plain.traffic[1][0].bumped_bytes > 0;
        assert_same_result(&plain, &cached, "wiki-Vote, kept step tables", p);
    }
    ck_assert_msg(spilled >= 10, "only %d points spill inside", spilled);
    tessel_stat_cache_free(&cache);
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&m);
}
END_TEST

/* The step count's tables and geometries built by the threads of shared
 * caches: every thread's points equal their evaluation without a cache,
 * and the threads build, in all, what one thread builds alone (each
 * table and geometry once: the pool the caches share, stat_outspill.c). */
static void ks_built(tessel_stat_cache *const *c, int n, uint64_t *tables, uint64_t *geoms)
{
    *tables = *geoms = 0;
    for (int t = 0; t < n; t++) {
        uint64_t tb, gm, passed;
        tessel_stat_cache_ksteps_counts(c[t], &tb, &gm, &passed);
        *tables += tb;
        *geoms += gm;
    }
}

START_TEST(kept_step_tables_shared_between_threads)
{
    tessel_tensor *m = load("wiki-Vote");
    tessel_workload_data d;
    data_of(&d, m, m);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    enum { N = 18 };
    tessel_spec s[N];
    tessel_result plain[N];
    spill_point(&s[0], 0);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag) == 0, "%s",
                  diag.message);
    for (int q = 0; q < N; q++) {
        spill_point(&s[q], q);
        ck_assert_int_eq(tessel_model_stat_eval(&s[q], stats, &plain[q], &diag), 0);
    }
    tessel_stat_cache *one = NULL;
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &one), 0);
    for (int q = 0; q < N; q++) {
        tessel_result r;
        ck_assert_int_eq(tessel_model_stat_eval_cached(&s[q], stats, one, &r, &diag), 0);
        assert_same_result(&plain[q], &r, "wiki-Vote, one thread", q);
    }
    uint64_t tables1, geoms1;
    ks_built(&one, 1, &tables1, &geoms1);
    tessel_stat_cache_free(&one);
    ck_assert_msg(tables1 >= 2 && geoms1 >= 1, "%llu tables, %llu geometries",
                  (unsigned long long)tables1, (unsigned long long)geoms1);
    for (int round = 0; round < 3; round++) {
        shared_job job[SHARED_THREADS];
        pthread_t tid[SHARED_THREADS];
        tessel_stat_cache *c[SHARED_THREADS];
        for (int t = 0; t < SHARED_THREADS; t++) {
            job[t] = (shared_job){ s, plain, N, (t * N / SHARED_THREADS + round) % N, 0, stats,
                                   NULL };
            ck_assert_int_eq(t == 0 ? tessel_stat_cache_create(stats, NULL, &job[t].cache)
                                    : tessel_stat_cache_create_shared(job[0].cache,
                                                                      &job[t].cache),
                             0);
        }
        for (int t = 0; t < SHARED_THREADS; t++)
            ck_assert_int_eq(pthread_create(&tid[t], NULL, shared_walk, &job[t]), 0);
        for (int t = 0; t < SHARED_THREADS; t++) {
            pthread_join(tid[t], NULL);
            ck_assert_msg(job[t].mismatch == 0, "thread %d: point %d differs", t,
                          job[t].mismatch - 1);
            c[t] = job[t].cache;
        }
        uint64_t tables, geoms;
        ks_built(c, SHARED_THREADS, &tables, &geoms);
        ck_assert_uint_eq(tables, tables1);
        ck_assert_uint_eq(geoms, geoms1);
        for (int t = SHARED_THREADS - 1; t >= 0; t--)
            tessel_stat_cache_free(&job[t].cache);
    }
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&m);
}
END_TEST

/* Fails allocation n of a cache for every n while it keeps the step
 * count's tables (two spilling points of one table and geometry, then
 * the first again): the same results, nothing leaked, and without a
 * failure one table and one geometry built. */
START_TEST(kept_step_tables_out_of_memory)
{
    tessel_tensor *m = load("wiki-Vote");
    tessel_workload_data d;
    data_of(&d, m, m);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    tessel_spec s[2];
    spill_point(&s[0], 0);
    spill_point(&s[1], 3); /* KIJ again, another partition */
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag), 0);
    tessel_result want[2];
    for (unsigned p = 0; p < 2; p++)
        ck_assert_int_eq(tessel_model_stat_eval(&s[p], stats, &want[p], &diag), 0);
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_stat_cache *cache = NULL;
        if (tessel_stat_cache_create(stats, &ta.allocator, &cache)) {
            ck_assert_int_eq(ta.live, 0);
            continue;
        }
        for (unsigned p = 0; p < 3; p++) {
            tessel_result r;
            ck_assert_int_eq(tessel_model_stat_eval_cached(&s[p % 2], stats, cache, &r, &diag),
                             0);
            assert_same_result(&want[p % 2], &r, "kept step tables, out of memory", (int)p);
        }
        uint64_t tables, geoms, passed;
        tessel_stat_cache_ksteps_counts(cache, &tables, &geoms, &passed);
        tessel_stat_cache_free(&cache);
        ck_assert_int_eq(ta.live, 0);
        if (ta.calls < n) { /* no allocation failed: every one was tried */
            ck_assert_uint_eq(tables, 1);
            ck_assert_uint_eq(geoms, 1);
            break;
        }
        ck_assert_int_lt(n, 100000);
    }
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&m);
}
END_TEST

/* The step count's memos and covers taken in turn by the caches of one
 * table (the threads of a sweep, here one after the other): the second
 * cache's spilling points of the k edges the first one's filled take its
 * tables, making none (each cache used to make its own), and
 * every point equals its evaluation without a cache. */
START_TEST(kept_step_tables_taken_in_turn)
{
    tessel_tensor *m = load("wiki-Vote");
    tessel_workload_data d;
    data_of(&d, m, m);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    tessel_spec s;
    spill_point(&s, 0);
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    ck_assert_int_eq(tessel_stat_data_create(&s, &d, &o, NULL, &stats, &diag), 0);
    tessel_stat_cache *c[2] = { NULL, NULL };
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &c[0]), 0);
    ck_assert_int_eq(tessel_stat_cache_create_shared(c[0], &c[1]), 0);
    int spilled[2] = { 0, 0 };
    for (int q = 0; q < 12; q++) { /* 0..5 through the first cache, 6..11 the second */
        spill_point(&s, q);
        tessel_result plain, cached;
        ck_assert_int_eq(tessel_model_stat_eval(&s, stats, &plain, &diag), 0);
        ck_assert_int_eq(tessel_model_stat_eval_cached(&s, stats, c[q / 6], &cached, &diag), 0);
        assert_same_result(&plain, &cached, "wiki-Vote, tables taken in turn", q);
        spilled[q / 6] += plain.traffic[1][0].bumped_bytes > 0;
    }
    ck_assert_msg(spilled[0] > 0 && spilled[1] > 0, "spilling points %d and %d", spilled[0],
                  spilled[1]);
    /* one per canonical operand pair (a mirrored order swaps them) */
    ck_assert_uint_ge(tessel_stat_cache_ksteps_memos(c[0]), 1);
    ck_assert_uint_eq(tessel_stat_cache_ksteps_memos(c[1]), 0);
    tessel_stat_cache_free(&c[1]);
    tessel_stat_cache_free(&c[0]);
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&m);
}
END_TEST

/* band_lines' per-band reads of the compute (stat_inspill.c), kept in the
 * pool: IJK points at one level whose A tiles overbook a 12,000-byte
 * buffer, A = B a banded matrix (its columns statistic kept), k tiles of
 * 64 and 128 (two bands' sizes), i and j tiles varied: point q of 6. */
static void band_point(tessel_spec *s, int q)
{
    static const uint64_t t[6][3] = { { 128, 64, 128 }, { 64, 128, 256 }, { 256, 64, 64 },
                                      { 64, 64, 128 },  { 128, 128, 64 }, { 256, 128, 128 } };
    test_spec_spmspm(s, "IJK", t[q][0], t[q][1], t[q][2], 1, 64, 32);
    s->level[1].capacity = 12000;
}

/* Each point through the cache equals its evaluation without one, and
 * the band counts are built once per operand (B's columns for A's reads,
 * A's rows for B's) and band size (2): 4, not per point (12 over the two
 * passes); then three threads on shared caches build them at most 4 times
 * in all. Fails with band_lines computing per point
 * (tessel_stat_cache_band_counts 0). */
START_TEST(band_counts_kept_once_per_band)
{
    tessel_tensor *a = synthetic(512, 512, 0.01, 9);
    tessel_workload_data d;
    data_of(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1;
    enum { N = 6 };
    tessel_spec s[N];
    tessel_result plain[N];
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    band_point(&s[0], 0);
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag), 0);
    int spilled = 0;
    for (int q = 0; q < N; q++) {
        band_point(&s[q], q);
        ck_assert_int_eq(tessel_model_stat_eval(&s[q], stats, &plain[q], &diag), 0);
        spilled += plain[q].traffic[1][1].bumped_bytes > 0;
    }
    ck_assert_int_ge(spilled, 4);
    tessel_stat_cache *one = NULL;
    ck_assert_int_eq(tessel_stat_cache_create(stats, NULL, &one), 0);
    for (int p = 0; p < 2 * N; p++) {
        tessel_result r;
        ck_assert_int_eq(tessel_model_stat_eval_cached(&s[p % N], stats, one, &r, &diag), 0);
        assert_same_result(&plain[p % N], &r, "band counts, one thread", p);
    }
    ck_assert_uint_eq(tessel_stat_cache_band_counts(one), 4);
    tessel_stat_cache_free(&one);
    shared_job job[SHARED_THREADS];
    pthread_t tid[SHARED_THREADS];
    for (int t = 0; t < SHARED_THREADS; t++) {
        job[t] = (shared_job){ s, plain, N, t * N / SHARED_THREADS, 0, stats, NULL };
        ck_assert_int_eq(t == 0 ? tessel_stat_cache_create(stats, NULL, &job[t].cache)
                                : tessel_stat_cache_create_shared(job[0].cache, &job[t].cache),
                         0);
    }
    for (int t = 0; t < SHARED_THREADS; t++)
        ck_assert_int_eq(pthread_create(&tid[t], NULL, shared_walk, &job[t]), 0);
    uint64_t built = 0;
    for (int t = 0; t < SHARED_THREADS; t++) {
        pthread_join(tid[t], NULL);
        ck_assert_msg(job[t].mismatch == 0, "thread %d: point %d differs", t, job[t].mismatch - 1);
        built += tessel_stat_cache_band_counts(job[t].cache);
    }
    /* a thread that finds a band in the making computes its own */
    ck_assert_uint_ge(built, 1);
    ck_assert_uint_le(built, 4);
    for (int t = SHARED_THREADS - 1; t >= 0; t--)
        tessel_stat_cache_free(&job[t].cache);
    tessel_stat_data_free(&stats);
    tessel_tensor_free(&a);
}
END_TEST

/* Allocation n of a cache failed for every n while it keeps the band
 * counts (three points of two band sizes, then the first again): the
 * same results, nothing leaked, and without a failure all four kept. */
START_TEST(band_counts_out_of_memory)
{
    tessel_tensor *a = synthetic(512, 512, 0.01, 9);
    tessel_workload_data d;
    data_of(&d, a, a);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1;
    tessel_spec s[3];
    tessel_result want[3];
    tessel_stat_data *stats = NULL;
    tessel_diag diag;
    band_point(&s[0], 0);
    ck_assert_int_eq(tessel_stat_data_create(&s[0], &d, &o, NULL, &stats, &diag), 0);
    for (int q = 0; q < 3; q++) {
        band_point(&s[q], q);
        ck_assert_int_eq(tessel_model_stat_eval(&s[q], stats, &want[q], &diag), 0);
    }
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_stat_cache *cache = NULL;
        if (tessel_stat_cache_create(stats, &ta.allocator, &cache)) {
            ck_assert_int_eq(ta.live, 0);
            continue;
        }
        for (int p = 0; p < 4; p++) {
            tessel_result r;
            ck_assert_int_eq(tessel_model_stat_eval_cached(&s[p % 3], stats, cache, &r, &diag),
                             0);
            assert_same_result(&want[p % 3], &r, "band counts, out of memory", p);
        }
        uint64_t built = tessel_stat_cache_band_counts(cache);
        tessel_stat_cache_free(&cache);
        ck_assert_int_eq(ta.live, 0);
        if (ta.calls < n) { /* no allocation failed: every one was tried */
            ck_assert_uint_eq(built, 4);
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
    Suite *s = suite_create("stat_cache");
    TCase *tc = tcase_create("stat_cache");
    tcase_set_timeout(tc, 280);
    /* the real matrices, when ../shared/data is beside the checkout */
    if (access("../shared/data/mtx/ca-CondMat.mtx.gz", R_OK) == 0) {
        tcase_add_test(tc, cached_equals_uncached_sampled_output);
        tcase_add_test(tc, cached_equals_uncached_whole_and_no_sample);
        tcase_add_test(tc, kept_step_tables_equal_per_point);
        tcase_add_test(tc, kept_step_tables_shared_between_threads);
        tcase_add_test(tc, kept_step_tables_out_of_memory);
        tcase_add_test(tc, kept_step_tables_taken_in_turn);
    } else {
        printf("note: ../shared/data is missing: the 5 checks on shared matrices do not run\n");
    }
    tcase_add_test(tc, cached_equals_uncached_rectangular_small_base);
    tcase_add_test(tc, full_cache_starts_again);
    tcase_add_test(tc, shared_between_threads);
    tcase_add_test(tc, shared_table_starts_again);
    tcase_add_test(tc, other_paths_and_wrong_statistics);
    tcase_add_test(tc, out_of_memory_every_allocation);
    tcase_add_test(tc, band_counts_kept_once_per_band);
    tcase_add_test(tc, band_counts_out_of_memory);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

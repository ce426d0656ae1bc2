/* Out-of-memory test of one stat point: the statistics made through a
 * failing test_alloc, then each of the point's allocations failed in turn. */
#ifndef TESSEL_TEST_STAT_OOM_H
#define TESSEL_TEST_STAT_OOM_H

#include <check.h>
#include <string.h>

#include "tessel/model.h"
#include "test_alloc.h"

/* The fields of two stat results that an evaluation computes (its timings
 * left out) are equal. */
static inline void test_stat_assert_same(const tessel_result *a, const tessel_result *b, long n)
{
    ck_assert_msg(a->dram_bytes == b->dram_bytes && a->output_nnz == b->output_nnz &&
                      a->macs == b->macs && a->compulsory_bytes == b->compulsory_bytes &&
                      a->stat_walked == b->stat_walked &&
                      memcmp(a->traffic, b->traffic, sizeof(a->traffic)) == 0,
                  "allocation %ld failed and absorbed: the result differs", n);
}

/* Statistics of s on d made through ta, no allocation failed
 * (tessel_stat_data_create must answer 0; its message shown otherwise). */
static inline tessel_stat_data *test_stat_create_through(const tessel_spec *s,
                                                         const tessel_workload_data *d,
                                                         const tessel_stat_options *o,
                                                         test_alloc *ta)
{
    tessel_diag diag;
    tessel_stat_data *sd = NULL;
    ck_assert_msg(tessel_stat_data_create(s, d, o, &ta->allocator, &sd, &diag) == 0, "%s",
                  diag.message);
    return sd;
}

/* tessel_model_stat_eval(s, sd) with the n-th allocation through ta (the
 * allocator sd was created with; the evaluation makes all of its
 * allocations through it) failed, for n = 1 .. N, N the allocations of an
 * unfailed run. A failed run answers TESSEL_ENOMEM, or 0 with the unfailed
 * result where the failed block was optional (a faster path's scratch);
 * either way ta's live blocks are as they were. The loop stops only when
 * no failure was reached (not at the first run that succeeds: an absorbed
 * failure early in boundary 1 stopped it before the nested pass, docs/
 * models/stat.md "Out-of-memory tests reach the nested pass"). The
 * unfailed result is left in *r; returns N (every one of them failed). */
static inline long test_stat_eval_fail_each(const tessel_spec *s, const tessel_stat_data *sd,
                                            test_alloc *ta, tessel_result *r)
{
    tessel_diag diag;
    long live = ta->live, c0 = ta->calls;
    ta->fail_at = 0;
    ck_assert_msg(tessel_model_stat_eval(s, sd, r, &diag) == 0, "%s", diag.message);
    long total = ta->calls - c0;
    long n = 1;
    for (;; n++) {
        tessel_result f;
        ta->fail_at = ta->calls + n;
        int rc = tessel_model_stat_eval(s, sd, &f, &diag);
        ck_assert_int_eq(ta->live, live);
        if (ta->calls < ta->fail_at) { /* no allocation failed: every one was tried */
            ck_assert_int_eq(rc, 0);
            test_stat_assert_same(&f, r, n);
            break;
        }
        if (rc == 0)
            test_stat_assert_same(&f, r, n);
        else
            ck_assert_msg(rc == TESSEL_ENOMEM, "allocation %ld: %d %s", n, rc, diag.message);
        ck_assert_int_lt(n, 100000);
    }
    ta->fail_at = 0;
    ck_assert_int_eq(n - 1, total);
    return n - 1;
}

/* tessel_model_stat(s, d, o) (the statistics collected and the point
 * priced in one call) through a test allocator whose n-th allocation
 * fails, for n = 1 .. N, N the allocations of an unfailed run: each run
 * answers TESSEL_ENOMEM, or 0 with the unfailed result (the failed block
 * was optional), and leaves no block live. As test_stat_eval_fail_each,
 * the loop stops only when no failure was reached. The unfailed result is
 * left in *r; returns N. */
static inline long test_stat_fail_each(const tessel_spec *s, const tessel_workload_data *d,
                                       const tessel_stat_options *o, tessel_result *r)
{
    tessel_diag diag;
    test_alloc ta;
    test_alloc_init(&ta, 0);
    ck_assert_msg(tessel_model_stat(s, d, o, &ta.allocator, r, &diag) == 0, "%s", diag.message);
    ck_assert_int_eq(ta.live, 0);
    long total = ta.calls, n = 1;
    for (;; n++) {
        tessel_result f;
        test_alloc_init(&ta, n);
        int rc = tessel_model_stat(s, d, o, &ta.allocator, &f, &diag);
        ck_assert_int_eq(ta.live, 0);
        if (ta.calls < n) { /* no allocation failed: every one was tried */
            ck_assert_int_eq(rc, 0);
            test_stat_assert_same(&f, r, n);
            break;
        }
        if (rc == 0)
            test_stat_assert_same(&f, r, n);
        else
            ck_assert_msg(rc == TESSEL_ENOMEM, "allocation %ld: %d %s", n, rc, diag.message);
        ck_assert_int_lt(n, 100000);
    }
    ck_assert_int_eq(n - 1, total);
    return n - 1;
}

/* tessel_stat_data_create(s, d, o) through ta with its n-th allocation
 * failed, for n = 1 until no failure is reached. A failed run answers
 * TESSEL_ENOMEM, or 0 with statistics that price s as the unfailed ones
 * do (the failed block was optional: a trim of an array to its size, a
 * count the collection then makes another way); either way, once freed,
 * ta's live blocks are as they were. Returns the unfailed run's
 * statistics. */
static inline tessel_stat_data *test_stat_create_fail_each(const tessel_spec *s,
                                                           const tessel_workload_data *d,
                                                           const tessel_stat_options *o,
                                                           test_alloc *ta)
{
    long live = ta->live;
    tessel_diag diag;
    tessel_result want, got;
    tessel_stat_data *sd = test_stat_create_through(s, d, o, ta);
    ck_assert_msg(tessel_model_stat_eval(s, sd, &want, &diag) == 0, "%s", diag.message);
    tessel_stat_data_free(&sd);
    for (long n = 1;; n++) {
        ta->fail_at = ta->calls + n;
        int rc = tessel_stat_data_create(s, d, o, &ta->allocator, &sd, &diag);
        if (ta->calls < ta->fail_at) { /* no allocation failed: every one was tried */
            ck_assert_msg(rc == 0, "%s", diag.message);
            break;
        }
        ck_assert_msg(rc == 0 || rc == TESSEL_ENOMEM, "allocation %ld: %d %s", n, rc,
                      diag.message);
        if (rc == 0) { /* absorbed: the statistics price as the unfailed ones */
            ta->fail_at = 0;
            ck_assert_msg(tessel_model_stat_eval(s, sd, &got, &diag) == 0, "%s", diag.message);
            test_stat_assert_same(&got, &want, n);
        }
        tessel_stat_data_free(&sd);
        ck_assert_int_eq(ta->live, live);
        ck_assert_int_lt(n, 100000);
    }
    ta->fail_at = 0;
    return sd;
}

#endif

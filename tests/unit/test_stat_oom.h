/* Out-of-memory test of one stat point: the statistics made through a
 * failing test_alloc, then each of the point's allocations failed in turn. */
#ifndef TESSEL_TEST_STAT_OOM_H
#define TESSEL_TEST_STAT_OOM_H

#include <check.h>

#include "tessel/model.h"
#include "test_alloc.h"

/* tessel_model_stat_eval(s, sd) with the n-th allocation through ta (the
 * allocator sd was created with) failed, for n = 1, 2, ...: every failed
 * run answers TESSEL_ENOMEM and leaves ta's live blocks as they were; the
 * first run that no failure reaches is returned in *r. */
static inline void test_stat_eval_fail_each(const tessel_spec *s, const tessel_stat_data *sd,
                                            test_alloc *ta, tessel_result *r)
{
    tessel_diag diag;
    long live = ta->live;
    for (long n = 1;; n++) {
        ta->fail_at = ta->calls + n;
        int rc = tessel_model_stat_eval(s, sd, r, &diag);
        ck_assert_int_eq(ta->live, live);
        if (rc == 0)
            break;
        ck_assert_msg(rc == TESSEL_ENOMEM, "allocation %ld: %d %s", n, rc, diag.message);
        ck_assert_int_lt(n, 20000);
    }
    ta->fail_at = 0;
}

#endif

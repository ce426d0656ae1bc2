/* Runs an estimator on a hand-written spec over two small COO matrices
 * (the hand-checked fixtures of test_scalar_skip.c, test_bypass.c and
 * test_tiledfmt.c). Include after <check.h>. */
#ifndef TESSEL_TEST_HAND_H
#define TESSEL_TEST_HAND_H

#include <string.h>

#include "tessel/model.h"
#include "tessel/spec.h"
#include "tessel/tensor.h"
#include "test_data.h"

enum { TEST_HAND_EXACT, TEST_HAND_STAT };

/* A (rows x k) and B (k x cols) from their coordinate lists, spec s priced
 * by the exact or the stat estimator; the return code must be expect_rc. */
static inline tessel_result test_hand_run(const tessel_spec *s, uint64_t rows, uint64_t k,
                                          uint64_t cols, const uint32_t (*a)[2], unsigned na,
                                          const uint32_t (*b)[2], unsigned nb, int estimator,
                                          int expect_rc)
{
    tessel_tensor *ta = test_coo_matrix(rows, k, 0, a, na);
    tessel_tensor *tb = test_coo_matrix(k, cols, 0, b, nb);
    tessel_workload_data d;
    test_spmspm_data(&d, ta, tb);
    tessel_result r;
    memset(&r, 0, sizeof(r));
    tessel_diag diag;
    memset(&diag, 0, sizeof(diag));
    int rc = estimator == TEST_HAND_EXACT ? tessel_model_exact(s, &d, NULL, &r, &diag)
                                          : tessel_model_stat(s, &d, NULL, NULL, &r, &diag);
    ck_assert_msg(rc == expect_rc, "estimate returned %d: %s", rc, diag.message);
    tessel_tensor_free(&ta);
    tessel_tensor_free(&tb);
    return r;
}

/* A spec parsed from text in memory ("mem.yaml"); its errors into l
 * (initialised here), the return code into *rc. */
static inline tessel_spec *test_hand_parse(const char *text, tessel_diag_list *l, int *rc)
{
    tessel_diag_list_init(l, NULL);
    tessel_spec *s = NULL;
    *rc = tessel_spec_parse("mem.yaml", text, strlen(text), NULL, 0, NULL, &s, l);
    return s;
}

/* The spec `what` was refused, its first error at `line` naming a field
 * that contains `field`; frees s and l. */
static inline void test_hand_refused(const char *what, int rc, tessel_spec **s,
                                     tessel_diag_list *l, unsigned line, const char *field)
{
    ck_assert_msg(rc != 0, "%s was accepted", what);
    ck_assert_uint_ge(l->count, 1);
    ck_assert_uint_eq(l->items[0].line, line);
    ck_assert_msg(strstr(l->items[0].field, field) != NULL, "%s", l->items[0].field);
    tessel_spec_free(s);
    tessel_diag_list_free(l);
}

#endif

/* A seeded generator and a banded random matrix for the unit tests of the
 * stat caches (test_stat_cache.c, and through nested_points.h the nested
 * boundaries' tests). */
#ifndef TESSEL_TEST_SYNTHETIC_H
#define TESSEL_TEST_SYNTHETIC_H

#include <check.h>
#include <stdint.h>

#include "tessel/tensor.h"

typedef struct rng {
    uint64_t state;
} rng;

static inline uint64_t below(rng *r, uint64_t n)
{
    r->state = r->state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return (r->state >> 33) % n;
}

/* rows x cols: every entry within `band` of the diagonal, and the others at
 * random with probability density (tiles of many sizes). */
static inline tessel_tensor *synthetic_banded(uint64_t rows, uint64_t cols, double density,
                                              unsigned seed, uint32_t band)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    rng r = { seed };
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < cols; j++) {
            int in_band = (i > j ? i - j : j - i) < band;
            if (in_band || (double)below(&r, 1000000) < density * 1e6) {
                uint32_t e[2] = { i, j };
                ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
        }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

#endif

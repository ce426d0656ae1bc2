/* Comparisons of a stat result with the exact estimator's, field by field
 * at every level (the unit tests of unskipped and gated inputs, and TTM's). */
#ifndef TESSEL_TEST_STAT_COMPARE_H
#define TESSEL_TEST_STAT_COMPARE_H

#include <check.h>
#include <math.h>

#include "tessel/model.h"

/* Every count both estimators report at every level, equal (inputs only
 * with inputs_only). */
static inline void test_stat_assert_equal(const tessel_result *x, const tessel_result *r,
                                          int inputs_only, const char *what)
{
    for (unsigned l = 0; l < x->nlevels; l++)
        for (unsigned t = inputs_only ? 1 : 0; t < x->ntensors; t++) {
            const tessel_traffic *a = &x->traffic[l][t], *b = &r->traffic[l][t];
#define SAME(f)                                                                              \
    ck_assert_msg(a->f == b->f, "%s level %u tensor %u " #f ": exact %llu, stat %llu", what, l, \
                  t, (unsigned long long)a->f, (unsigned long long)b->f)
            SAME(fills);
            SAME(gated);
            SAME(updates);
            SAME(writebacks);
            SAME(reads);
            SAME(data_bytes);
            SAME(metadata_bytes);
            SAME(bumped_bytes);
            SAME(overflow_tiles);
            SAME(overflow_bytes);
            SAME(partition_bytes);
            if (t) /* stat reports an output tile's only where it spills */
                SAME(worst_tile_bytes);
            SAME(algorithmic);
            SAME(skipped);
            SAME(child_read_data);
            SAME(child_read_metadata);
            SAME(child_write_data);
            SAME(child_write_metadata);
#undef SAME
        }
    for (unsigned l = 1; l < x->nlevels; l++)
        ck_assert_msg(x->effectual_tiles[l] == r->effectual_tiles[l], "%s effectual %u", what, l);
    ck_assert_uint_eq(x->macs, r->macs);
    ck_assert_uint_eq(x->intersections, r->intersections);
    if (inputs_only)
        return;
    ck_assert_uint_eq(x->output_nnz, r->output_nnz);
    ck_assert_uint_eq(x->dram_bytes, r->dram_bytes);
    ck_assert_uint_eq(x->compulsory_bytes, r->compulsory_bytes);
}

/* Every count both estimators report, equal; the bytes (data, metadata,
 * bumped, overflow, child reads) within tol x exact + 128 B, where the
 * compute's reads of an overbooked tile are estimated (stat_inspill.c);
 * the DRAM bytes equal. */
static inline void test_stat_assert_close(const tessel_result *x, const tessel_result *r,
                                          double tol, const char *what)
{
    for (unsigned l = 0; l < x->nlevels; l++)
        for (unsigned t = 0; t < x->ntensors; t++) {
            const tessel_traffic *a = &x->traffic[l][t], *b = &r->traffic[l][t];
#define SAME(f)                                                                              \
    ck_assert_msg(a->f == b->f, "%s level %u tensor %u " #f ": exact %llu, stat %llu", what, l, \
                  t, (unsigned long long)a->f, (unsigned long long)b->f)
#define NEAR(f)                                                                              \
    ck_assert_msg(fabs((double)a->f - (double)b->f) <= tol * (double)a->f + 128,             \
                  "%s level %u tensor %u " #f ": exact %llu, stat %llu", what, l, t,         \
                  (unsigned long long)a->f, (unsigned long long)b->f)
            SAME(fills);
            SAME(gated);
            SAME(updates);
            SAME(writebacks);
            SAME(reads);
            SAME(overflow_tiles);
            SAME(partition_bytes);
            SAME(algorithmic);
            SAME(skipped);
            NEAR(data_bytes);
            NEAR(metadata_bytes);
            NEAR(bumped_bytes);
            NEAR(overflow_bytes);
            NEAR(child_read_data);
            NEAR(child_read_metadata);
#undef SAME
#undef NEAR
        }
    for (unsigned l = 1; l < x->nlevels; l++)
        ck_assert_msg(x->effectual_tiles[l] == r->effectual_tiles[l], "%s effectual %u", what, l);
    ck_assert_uint_eq(x->macs, r->macs);
    ck_assert_uint_eq(x->output_nnz, r->output_nnz);
    ck_assert_uint_eq(x->dram_bytes, r->dram_bytes);
}

#endif

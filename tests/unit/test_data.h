/* Small matrices and SpMSpM workload data for the unit tests, built
 * through the public COO builder: one copy for every test file. */
#ifndef TESSEL_TEST_DATA_H
#define TESSEL_TEST_DATA_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/model.h"
#include "tessel/tensor.h"

/* A rows x cols matrix holding 1.0 at the n (row, column) entries e
 * (has_values 0: a pattern matrix). */
static inline tessel_tensor *test_coo_matrix(uint64_t rows, uint64_t cols, int has_values,
                                         const uint32_t (*e)[2], size_t n)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, has_values, NULL, &b, NULL), 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(tessel_coo_builder_add(b, e[i], 1.0), 0);
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

/* rows x cols: a band of half-width `half` (|r - c| < half) and every
 * `every`-th position of a pseudo-random pattern (an LCG from seed), so
 * that tiles differ in fill and some rows are empty in a tile. */
static inline tessel_tensor *test_band_matrix(uint64_t rows, uint64_t cols, unsigned seed,
                                              uint32_t half, unsigned every)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    uint32_t x = seed;
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++) {
            x = x * 1103515245u + 12345u;
            if ((r > c ? r - c : c - r) < half || (x >> 16) % every == 0) {
                uint32_t e[2] = { r, c };
                ck_assert_int_eq(tessel_coo_builder_add(b, e, 1.0), 0);
            }
        }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

/* rows x cols, each position nonzero with probability density (rand, seeded). */
static inline tessel_tensor *test_random_matrix(uint64_t rows, uint64_t cols, double density,
                                                unsigned seed)
{
    uint64_t dims[2] = { rows, cols };
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &b, NULL), 0);
    srand(seed);
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            if ((double)rand() / RAND_MAX < density) {
                uint32_t x[2] = { r, c };
                ck_assert_int_eq(tessel_coo_builder_add(b, x, 1.0), 0);
            }
    tessel_tensor *t = NULL;
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &t, NULL), 0);
    tessel_coo_builder_free(&b);
    return t;
}

/* Z[i,j] = A[i,k] * B[k,j]: tensors Z (none), A, B and extents i, j, k. */
static inline void test_spmspm_data(tessel_workload_data *d, tessel_tensor *a, tessel_tensor *b)
{
    memset(d, 0, sizeof(*d));
    d->ntensors = 3;
    d->tensor[1] = a;
    d->tensor[2] = b;
    d->extent[0] = a->dims[0];
    d->extent[1] = b->dims[1];
    d->extent[2] = a->dims[1];
}

/* A tensor file loaded with the default options; the test fails, naming
 * the file, if it cannot be. */
static inline tessel_tensor *test_load_tensor(const char *path)
{
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    tessel_tensor *t = NULL;
    tessel_diag d;
    int rc = tessel_tensor_load(path, &opt, NULL, &t, NULL, &d);
    ck_assert_msg(rc == 0, "%s: %s", path, d.message);
    return t;
}

/* Statistics saved to a temporary .tsd and loaded back (the file removed):
 * the round trip every save/load test makes. */
static inline tessel_stat_data *test_stat_reload(const tessel_stat_data *sd)
{
    char path[] = "/tmp/tessel-test-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    tessel_diag diag;
    memset(&diag, 0, sizeof(diag));
    tessel_stat_data *back = NULL;
    ck_assert_msg(tessel_stat_data_save(sd, path, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_stat_data_load(path, NULL, &back, &diag) == 0, "%s", diag.message);
    unlink(path);
    return back;
}

#endif

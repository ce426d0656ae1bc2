/* Shared checks for the fuzz targets: a parsed tensor must satisfy the
 * layout invariants and feed the statistics engine; any violation aborts,
 * which is how a fuzzer reports it. */
#ifndef TESSEL_FUZZ_COMMON_H
#define TESSEL_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>

#include "tessel/stats.h"
#include "tessel/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check_tensor(const tessel_tensor *t)
{
    if (t->ptr[0] != 0 || t->ptr[t->dims[0]] != t->nnz)
        abort();
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        if (t->ptr[r] > t->ptr[r + 1])
            abort();
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            int cmp = k == t->ptr[r] ? -1 : 0;
            for (unsigned m = 1; m < t->order; m++) {
                if (t->idx[m][k] >= t->dims[m])
                    abort();
                if (cmp == 0 && t->idx[m][k - 1] != t->idx[m][k])
                    cmp = t->idx[m][k - 1] < t->idx[m][k] ? -1 : 1;
            }
            if (cmp >= 0 && t->order > 1)
                abort();
        }
    }
    uint64_t tile[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < t->order; m++)
        tile[m] = 3;
    tessel_tile_grid *g = NULL;
    if (tessel_tile_grid_build(t, tile, NULL, &g, NULL) == TESSEL_OK) {
        uint64_t sum = 0;
        for (uint64_t i = 0; i < g->nonempty; i++)
            sum += g->count[i];
        if (sum != t->nnz)
            abort();
        tessel_tile_grid_free(&g);
    }
}

#endif

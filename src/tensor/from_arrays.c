/* A tensor from coordinate arrays held in memory (language bindings: a
 * SciPy matrix's row/col/data), through the COO builder, without a file. */
#include <string.h>

#include "tessel/tensor.h"

int tessel_tensor_from_coo(unsigned order, const uint64_t *dims, uint64_t nnz,
                           const int64_t *const *coords, const double *values, unsigned flags,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    if (order == 0 || order > TESSEL_MAX_ORDER || !dims || (nnz && !coords))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "a tensor needs an order in 1..%u, its dimensions and one "
                               "coordinate array per mode",
                               TESSEL_MAX_ORDER);
    for (unsigned m = 0; m < order; m++) {
        if (dims[m] == 0 || dims[m] > (uint64_t)TESSEL_MAX_DIM)
            return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                                   "dimension %u is %llu; it must be in 1..%llu", m + 1,
                                   (unsigned long long)dims[m],
                                   (unsigned long long)TESSEL_MAX_DIM);
        if (nnz && !coords[m])
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                                   "no coordinates for mode %u", m + 1);
    }
    tessel_coo_builder *b = NULL;
    int rc = tessel_coo_builder_create(order, dims, values != NULL, a, &b, diag);
    if (rc)
        return rc;
    rc = tessel_coo_builder_reserve(b, nnz);
    if (rc)
        tessel_diag_oom(diag, NULL, "building a tensor from arrays", 0);
    uint32_t c[TESSEL_MAX_ORDER];
    for (uint64_t k = 0; k < nnz && !rc; k++) {
        for (unsigned m = 0; m < order && !rc; m++) {
            int64_t v = coords[m][k];
            /* checked here, not by the builder, so the message names the entry */
            if (v < 0 || (uint64_t)v >= dims[m])
                rc = tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                                     "entry %llu: coordinate %lld of mode %u is outside 0..%llu",
                                     (unsigned long long)k, (long long)v, m + 1,
                                     (unsigned long long)(dims[m] - 1));
            else
                c[m] = (uint32_t)v;
        }
        if (!rc && tessel_coo_builder_add(b, c, values ? values[k] : 1.0))
            rc = tessel_diag_oom(diag, NULL, "building a tensor from arrays", 0);
    }
    if (!rc)
        rc = tessel_coo_builder_finish(b, flags, out, diag);
    tessel_coo_builder_free(&b);
    return rc;
}

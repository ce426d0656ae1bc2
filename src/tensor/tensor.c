/* tessel_tensor lifetime and small queries. */
#include <string.h>

#include "tessel/tensor.h"

void tessel_tensor_free(tessel_tensor **tp)
{
    if (!tp || !*tp)
        return;
    tessel_tensor *t = *tp;
    *tp = NULL;
    tessel_dealloc(t->alloc, t->ptr);
    for (unsigned m = 0; m < TESSEL_MAX_ORDER; m++)
        tessel_dealloc(t->alloc, t->idx[m]);
    tessel_dealloc(t->alloc, t->values);
    tessel_dealloc(t->alloc, t);
}

uint64_t tessel_tensor_bytes(const tessel_tensor *t)
{
    uint64_t bytes = (t->dims[0] + 1) * sizeof(uint64_t);
    bytes += t->nnz * (t->order - 1) * sizeof(uint32_t);
    if (t->values)
        bytes += t->nnz * sizeof(double);
    return bytes;
}

uint64_t tessel_tensor_row_lower_bound(const tessel_tensor *t, uint64_t row, uint64_t col)
{
    uint64_t lo = t->ptr[row], hi = t->ptr[row + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->idx[1][mid] < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int tessel_tensor_clone(const tessel_tensor *t, int pattern_only, const tessel_allocator *a,
                        tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    tessel_tensor *c = tessel_alloc(a, sizeof(*c));
    if (!c)
        return tessel_diag_oom(diag, NULL, "copying a tensor", sizeof(*c));
    *c = *t;
    c->alloc = a;
    c->ptr = NULL;
    c->values = NULL;
    memset(c->idx, 0, sizeof(c->idx));
    int ok = 1;
    c->ptr = tessel_alloc_array(a, t->dims[0] + 1, sizeof(uint64_t));
    ok = ok && c->ptr;
    if (ok)
        memcpy(c->ptr, t->ptr, (t->dims[0] + 1) * sizeof(uint64_t));
    for (unsigned m = 1; ok && m < t->order && t->nnz; m++) {
        c->idx[m] = tessel_alloc_array(a, t->nnz, sizeof(uint32_t));
        ok = c->idx[m] != NULL;
        if (ok)
            memcpy(c->idx[m], t->idx[m], t->nnz * sizeof(uint32_t));
    }
    if (ok && t->values && !pattern_only && t->nnz) {
        c->values = tessel_alloc_array(a, t->nnz, sizeof(double));
        ok = c->values != NULL;
        if (ok)
            memcpy(c->values, t->values, t->nnz * sizeof(double));
    }
    if (pattern_only)
        strcpy(c->field, "pattern");
    if (!ok) {
        tessel_tensor_free(&c);
        return tessel_diag_oom(diag, NULL, "copying a tensor's arrays",
                               (size_t)tessel_tensor_bytes(t));
    }
    *out = c;
    return TESSEL_OK;
}

/* tessel_tensor lifetime and small queries. */
#include <string.h>
#include <sys/mman.h>

#include "tessel/tensor.h"

/* An array of t's that it owns: not inside its mapping (a mapped load's
 * ptr and idx are the file's bytes; anything else came from t->alloc). */
static int owned(const tessel_tensor *t, const void *p)
{
    if (!t->mapping || !p)
        return p != NULL;
    const unsigned char *lo = t->mapping, *q = p;
    return q < lo || q >= lo + t->mapping_bytes;
}

void tessel_tensor_free(tessel_tensor **tp)
{
    if (!tp || !*tp)
        return;
    tessel_tensor *t = *tp;
    *tp = NULL;
    if (owned(t, t->ptr))
        tessel_dealloc(t->alloc, t->ptr);
    for (unsigned m = 0; m < TESSEL_MAX_ORDER; m++)
        if (owned(t, t->idx[m]))
            tessel_dealloc(t->alloc, t->idx[m]);
    if (owned(t, t->values))
        tessel_dealloc(t->alloc, t->values);
    if (t->mapping)
        munmap(t->mapping, (size_t)t->mapping_bytes);
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

int tessel_tensor_transpose_pattern(const tessel_tensor *t, const tessel_allocator *a,
                                    uint64_t **ptr, uint32_t **idx)
{
    *ptr = NULL;
    *idx = NULL;
    if (t->order != 2)
        return TESSEL_EINVAL;
    uint64_t *p = tessel_alloc_zeroed(a, t->dims[1] + 2, sizeof(uint64_t));
    uint32_t *x = tessel_alloc_array(a, t->nnz ? t->nnz : 1, sizeof(uint32_t));
    if (!p || !x) {
        tessel_dealloc(a, p);
        tessel_dealloc(a, x);
        return TESSEL_ENOMEM;
    }
    const uint32_t *col = t->idx[1];
    for (uint64_t e = 0; e < t->nnz; e++) /* counts at c + 2 */
        p[col[e] + 2]++;
    for (uint64_t c = 0; c < t->dims[1]; c++) /* row c + 1's start at c + 2 */
        p[c + 2] += p[c + 1];
    for (uint64_t r = 0; r < t->dims[0]; r++) /* rows ascending: each column's sorted */
        for (uint64_t e = t->ptr[r]; e < t->ptr[r + 1]; e++)
            x[p[col[e] + 1]++] = (uint32_t)r; /* p[c + 1] ends as row c's end */
    *ptr = p;
    *idx = x;
    return TESSEL_OK;
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
    c->mapping = NULL; /* the copy owns its arrays, even of a mapped t */
    c->mapping_bytes = 0;
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

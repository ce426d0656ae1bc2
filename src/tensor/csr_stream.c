/* A matrix built in place from entries streamed in file order (issue 27
 * item 1: "build CSR in place from counts, with no COO staging copy").
 *
 * The coordinate builder (builder.c) stages every entry's row, column and
 * value (16 B with a value) and scatters them into fresh arrays: a peak of
 * the staging copy plus the tensor. Here the column and value arrays are
 * the tensor's own: entries land in file order and their count per row in
 * the row pointers. A file whose rows never decrease (as `tessel gen` and
 * `tessel convert` write, and row-major exports) is then already grouped by
 * row, and the peak is the tensor. Otherwise, from the first decrease on, a
 * 32-bit row per entry is kept (the rows of the entries before it follow
 * from the counts), and finishing turns the rows into destinations, a
 * stable counting sort's, and moves the entries there in place along the
 * permutation's cycles: the peak is the tensor and 4 B per entry. Each row
 * then holds its entries in file order, exactly as the coordinate builder's
 * stable counting sort leaves them, and the same slice sort and duplicate
 * sum (tensor_finish_slices) finish both: the tensor is identical bit for
 * bit. */
#include <string.h>

#include "builder_internal.h"
#include "csr_stream.h"

int csr_stream_fits(uint64_t rows, uint64_t reserve, uint64_t most, int has_values)
{
    return most <= UINT32_MAX && tensor_check_ptr_size(2, rows, reserve, has_values, NULL) == 0;
}

int csr_stream_init(csr_stream *s, uint64_t rows, uint64_t cols, int has_values,
                    uint64_t reserve, const tessel_allocator *a)
{
    memset(s, 0, sizeof(*s));
    s->alloc = a;
    s->rows = rows;
    s->cols = cols;
    s->has_values = has_values;
    s->ptr = tessel_alloc_array(a, rows + 1, sizeof(uint64_t));
    if (!s->ptr)
        return TESSEL_ENOMEM;
    memset(s->ptr, 0, (rows + 1) * sizeof(uint64_t));
    if (reserve == 0)
        return TESSEL_OK;
    s->col = tessel_alloc_array(a, reserve, sizeof(uint32_t));
    if (!s->col || (has_values && !(s->val = tessel_alloc_array(a, reserve, sizeof(double)))))
        return TESSEL_ENOMEM;
    s->cap = reserve;
    return TESSEL_OK;
}

void csr_stream_free(csr_stream *s)
{
    tessel_dealloc(s->alloc, s->ptr);
    tessel_dealloc(s->alloc, s->col);
    tessel_dealloc(s->alloc, s->val);
    tessel_dealloc(s->alloc, s->row);
    s->ptr = NULL;
    s->col = s->row = NULL;
    s->val = NULL;
    s->count = s->cap = 0;
}

static uint64_t next_cap(uint64_t cap)
{
    return cap < 4096 ? 4096 : cap + cap / 2;
}

uint64_t csr_stream_grow_bytes(const csr_stream *s)
{
    return next_cap(s->cap) *
           (sizeof(uint32_t) + (s->has_values ? sizeof(double) : 0) + (s->row ? sizeof(uint32_t) : 0));
}

int csr_stream_grow(csr_stream *s)
{
    uint64_t cap = next_cap(s->cap);
    if (cap > UINT32_MAX + 1ull)
        cap = UINT32_MAX + 1ull; /* csr_stream_fits bounds the count */
    if (cap <= s->cap)
        return TESSEL_ENOMEM;
    uint32_t *c = tessel_realloc_array(s->alloc, s->col, cap, sizeof(uint32_t));
    if (!c)
        return TESSEL_ENOMEM;
    s->col = c;
    if (s->has_values) {
        double *v = tessel_realloc_array(s->alloc, s->val, cap, sizeof(double));
        if (!v)
            return TESSEL_ENOMEM;
        s->val = v;
    }
    if (s->row) {
        uint32_t *r = tessel_realloc_array(s->alloc, s->row, cap, sizeof(uint32_t));
        if (!r)
            return TESSEL_ENOMEM;
        s->row = r;
    }
    s->cap = cap;
    return TESSEL_OK;
}

/* The rows decreased: a row per entry from now on, those of the entries so
 * far (grouped by row, ascending) written from the counts. */
int csr_stream_start_rows(csr_stream *s)
{
    s->row = tessel_alloc_array(s->alloc, s->cap, sizeof(uint32_t));
    if (!s->row)
        return TESSEL_ENOMEM;
    uint64_t k = 0;
    for (uint64_t r = 0; r <= s->last_row; r++)
        for (uint64_t n = s->ptr[r + 1]; n > 0; n--)
            s->row[k++] = (uint32_t)r;
    return TESSEL_OK;
}

/* Every entry k to slot dest[k] (a permutation of 0..n-1), in place: each
 * cycle is followed once, and a placed entry's dest becomes its own slot. */
static void permute_in_place(uint32_t *col, double *val, uint32_t *dest, uint64_t n)
{
    for (uint64_t k = 0; k < n; k++) {
        while (dest[k] != k) {
            uint32_t d = dest[k];
            uint32_t c = col[d];
            col[d] = col[k];
            col[k] = c;
            if (val) {
                double v = val[d];
                val[d] = val[k];
                val[k] = v;
            }
            dest[k] = dest[d];
            dest[d] = d;
        }
    }
}

int csr_stream_finish(csr_stream *s, unsigned flags, tessel_tensor **out, tessel_diag *diag)
{
    *out = NULL;
    int rc = tensor_check_ptr_size(2, s->rows, s->count, s->has_values, diag);
    if (rc)
        return rc;
    tessel_tensor *t = tessel_alloc(s->alloc, sizeof(*t));
    if (!t)
        return tessel_diag_oom(diag, NULL, "creating the tensor", sizeof(*t));
    memset(t, 0, sizeof(*t));
    uint64_t *ptr = s->ptr;
    for (uint64_t r = 0; r < s->rows; r++)
        ptr[r + 1] += ptr[r];
    if (s->row) {
        /* ptr[r] is row r's cursor (a stable counting sort's destinations),
         * then restored */
        for (uint64_t k = 0; k < s->count; k++)
            s->row[k] = (uint32_t)ptr[s->row[k]]++;
        for (uint64_t r = s->rows; r > 0; r--)
            ptr[r] = ptr[r - 1];
        ptr[0] = 0;
        permute_in_place(s->col, s->val, s->row, s->count);
        tessel_dealloc(s->alloc, s->row);
        s->row = NULL;
    }
    t->alloc = s->alloc;
    t->order = 2;
    t->dims[0] = s->rows;
    t->dims[1] = s->cols;
    t->nnz = s->count;
    strcpy(t->field, s->has_values ? "real" : "pattern");
    strcpy(t->symmetry, "general");
    t->ptr = ptr;
    t->idx[1] = s->col;
    t->values = s->val;
    s->ptr = NULL;
    s->col = NULL;
    s->val = NULL;
    s->count = s->cap = 0;
    if (t->nnz == 0) {
        tessel_dealloc(t->alloc, t->idx[1]);
        tessel_dealloc(t->alloc, t->values);
        t->idx[1] = NULL;
        t->values = NULL;
    }
    rc = tensor_finish_slices(t, flags, diag);
    if (rc) {
        tessel_tensor_free(&t);
        return rc;
    }
    *out = t;
    return TESSEL_OK;
}

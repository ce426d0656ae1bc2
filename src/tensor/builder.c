/* Unsorted coordinates -> sorted, duplicate-free compressed-first-mode
 * tensor.  A stable counting sort by mode 0 builds the slice pointers; each
 * slice is then checked and, only if needed, merge-sorted (stable, so
 * duplicates are summed in input order: the result does not depend on the
 * sort's internals). */
#include <math.h>
#include <string.h>

#include "builder_internal.h"
#include "tessel/tensor.h"

struct tessel_coo_builder {
    const tessel_allocator *alloc;
    unsigned order;
    uint64_t dims[TESSEL_MAX_ORDER];
    int has_values;
    uint64_t count;
    uint64_t cap;
    uint32_t *coord[TESSEL_MAX_ORDER];
    double *values;
};

/* Row pointers are dims[0]+1 words that must be zeroed, i.e. touched.
 * Refuse sizes that dwarf the entries themselves instead of letting the
 * kernel's overcommit kill the process later. */
#define PTR_BYTES_FLOOR (1ull << 30)
#define PTR_BYTES_PER_ENTRY_FACTOR 16ull
/* Entries ahead of the scatter position whose destinations are prefetched. */
#define SCATTER_PREFETCH 16u

static int oom(tessel_diag *diag, const char *step, uint64_t bytes)
{
    return tessel_diag_oom(diag, NULL, step, (size_t)bytes);
}

/* The capacity an add grows a full builder to. */
static uint64_t next_cap(uint64_t cap)
{
    return cap < 4096 ? 4096 : cap + cap / 2;
}

int tessel_coo_builder_create(unsigned order, const uint64_t *dims, int has_values,
                              const tessel_allocator *a, tessel_coo_builder **out,
                              tessel_diag *diag)
{
    *out = NULL;
    if (order < 1 || order > TESSEL_MAX_ORDER)
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                               "tensor order %u is outside 1..%u", order, TESSEL_MAX_ORDER);
    for (unsigned m = 0; m < order; m++)
        if (dims[m] > TESSEL_MAX_DIM)
            return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                                   "mode %u extent %llu exceeds the supported maximum %llu", m,
                                   (unsigned long long)dims[m],
                                   (unsigned long long)TESSEL_MAX_DIM);
    tessel_coo_builder *b = tessel_alloc(a, sizeof(*b));
    if (!b)
        return oom(diag, "creating a coordinate builder", sizeof(*b));
    memset(b, 0, sizeof(*b));
    b->alloc = a;
    b->order = order;
    memcpy(b->dims, dims, order * sizeof(uint64_t));
    b->has_values = has_values;
    *out = b;
    return TESSEL_OK;
}

void tessel_coo_builder_free(tessel_coo_builder **bp)
{
    if (!bp || !*bp)
        return;
    tessel_coo_builder *b = *bp;
    *bp = NULL;
    for (unsigned m = 0; m < b->order; m++)
        tessel_dealloc(b->alloc, b->coord[m]);
    tessel_dealloc(b->alloc, b->values);
    tessel_dealloc(b->alloc, b);
}

static int builder_grow_to(tessel_coo_builder *b, uint64_t cap)
{
    if (cap <= b->cap)
        return TESSEL_OK;
    if (cap > SIZE_MAX / sizeof(double))
        return TESSEL_ENOMEM;
    for (unsigned m = 0; m < b->order; m++) {
        uint32_t *p = tessel_realloc_array(b->alloc, b->coord[m], cap, sizeof(uint32_t));
        if (!p)
            return TESSEL_ENOMEM;
        b->coord[m] = p;
    }
    if (b->has_values) {
        double *v = tessel_realloc_array(b->alloc, b->values, cap, sizeof(double));
        if (!v)
            return TESSEL_ENOMEM;
        b->values = v;
    }
    b->cap = cap;
    return TESSEL_OK;
}

uint64_t tensor_builder_grow_bytes(const tessel_coo_builder *b, uint64_t extra)
{
    uint64_t cap = extra ? b->count + extra : next_cap(b->cap);
    return cap * (b->order * sizeof(uint32_t) + (b->has_values ? sizeof(double) : 0));
}

int tessel_coo_builder_reserve(tessel_coo_builder *b, uint64_t count)
{
    if (count > UINT64_MAX - b->count)
        return TESSEL_ENOMEM;
    return builder_grow_to(b, b->count + count);
}

int tessel_coo_builder_add(tessel_coo_builder *b, const uint32_t *coords, double value)
{
    for (unsigned m = 0; m < b->order; m++)
        if (coords[m] >= b->dims[m])
            return TESSEL_ERANGE;
    if (b->count == b->cap) {
        int rc = builder_grow_to(b, next_cap(b->cap));
        if (rc)
            return rc;
    }
    uint64_t k = b->count++;
    for (unsigned m = 0; m < b->order; m++)
        b->coord[m][k] = coords[m];
    if (b->has_values)
        b->values[k] = value;
    return TESSEL_OK;
}

uint64_t tessel_coo_builder_count(const tessel_coo_builder *b)
{
    return b->count;
}

void tessel_coo_builder_set_dims(tessel_coo_builder *b, const uint64_t *dims)
{
    memcpy(b->dims, dims, b->order * sizeof(uint64_t));
}

/* ------------------------------------------------------------------ */
/* Sorting one slice: entries [lo, hi) of the tensor's idx arrays. */

typedef struct slice_sorter {
    const tessel_tensor *t;
    uint64_t *perm;    /* scratch: positions */
    uint64_t *perm_tmp;
    uint32_t *gather;  /* scratch for applying the permutation */
    double *gather_values;
} slice_sorter;

static int entry_cmp(const tessel_tensor *t, uint64_t x, uint64_t y)
{
    for (unsigned m = 1; m < t->order; m++) {
        uint32_t a = t->idx[m][x], b = t->idx[m][y];
        if (a != b)
            return a < b ? -1 : 1;
    }
    return 0;
}

static int slice_is_sorted(const tessel_tensor *t, uint64_t lo, uint64_t hi)
{
    for (uint64_t k = lo + 1; k < hi; k++)
        if (entry_cmp(t, k - 1, k) > 0)
            return 0;
    return 1;
}

/* Stable bottom-up merge sort of perm[0..n) by entry coordinates. */
static void perm_merge_sort(const tessel_tensor *t, uint64_t *perm, uint64_t *tmp, uint64_t n)
{
    const uint64_t run = 16;
    for (uint64_t s = 0; s < n; s += run) {
        uint64_t e = s + run < n ? s + run : n;
        for (uint64_t i = s + 1; i < e; i++) {
            uint64_t v = perm[i], j = i;
            while (j > s && entry_cmp(t, perm[j - 1], v) > 0) {
                perm[j] = perm[j - 1];
                j--;
            }
            perm[j] = v;
        }
    }
    uint64_t *src = perm, *dst = tmp;
    for (uint64_t width = run; width < n; width *= 2) {
        for (uint64_t s = 0; s < n; s += 2 * width) {
            uint64_t mid = s + width < n ? s + width : n;
            uint64_t e = s + 2 * width < n ? s + 2 * width : n;
            uint64_t i = s, j = mid, k = s;
            while (i < mid && j < e)
                dst[k++] = entry_cmp(t, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < e)
                dst[k++] = src[j++];
        }
        uint64_t *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != perm)
        memcpy(perm, src, n * sizeof(uint64_t));
}

static void sort_slice(slice_sorter *s, uint64_t lo, uint64_t hi)
{
    const tessel_tensor *t = s->t;
    uint64_t n = hi - lo;
    for (uint64_t i = 0; i < n; i++)
        s->perm[i] = lo + i;
    perm_merge_sort(t, s->perm, s->perm_tmp, n);
    for (unsigned m = 1; m < t->order; m++) {
        for (uint64_t i = 0; i < n; i++)
            s->gather[i] = t->idx[m][s->perm[i]];
        memcpy(t->idx[m] + lo, s->gather, n * sizeof(uint32_t));
    }
    if (t->values) {
        for (uint64_t i = 0; i < n; i++)
            s->gather_values[i] = t->values[s->perm[i]];
        memcpy(t->values + lo, s->gather_values, n * sizeof(double));
    }
}

static void free_sorter(const tessel_allocator *a, slice_sorter *s)
{
    tessel_dealloc(a, s->perm);
    tessel_dealloc(a, s->perm_tmp);
    tessel_dealloc(a, s->gather);
    tessel_dealloc(a, s->gather_values);
}

static int sort_slices(tessel_tensor *t, tessel_diag *diag)
{
    if (t->order < 2)
        return TESSEL_OK;
    uint64_t longest = 0;
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        uint64_t lo = t->ptr[r], hi = t->ptr[r + 1];
        if (hi - lo > 1 && !slice_is_sorted(t, lo, hi) && hi - lo > longest)
            longest = hi - lo;
    }
    if (longest == 0)
        return TESSEL_OK;
    slice_sorter s = { t, NULL, NULL, NULL, NULL };
    s.perm = tessel_alloc_array(t->alloc, longest, sizeof(uint64_t));
    s.perm_tmp = tessel_alloc_array(t->alloc, longest, sizeof(uint64_t));
    s.gather = tessel_alloc_array(t->alloc, longest, sizeof(uint32_t));
    if (t->values)
        s.gather_values = tessel_alloc_array(t->alloc, longest, sizeof(double));
    if (!s.perm || !s.perm_tmp || !s.gather || (t->values && !s.gather_values)) {
        free_sorter(t->alloc, &s);
        return oom(diag, "sorting the longest slice",
                   longest * (2 * sizeof(uint64_t) + sizeof(uint32_t) +
                              (t->values ? sizeof(double) : 0)));
    }
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        uint64_t lo = t->ptr[r], hi = t->ptr[r + 1];
        if (hi - lo > 1 && !slice_is_sorted(t, lo, hi))
            sort_slice(&s, lo, hi);
    }
    free_sorter(t->alloc, &s);
    return TESSEL_OK;
}

/* Sums runs of equal coordinates and drops zeros; rewrites ptr. */
static void merge_duplicates(tessel_tensor *t, int drop_zeros)
{
    uint64_t out = 0;
    uint64_t lo = t->ptr[0];
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        uint64_t hi = t->ptr[r + 1];
        t->ptr[r] = out;
        uint64_t k = lo;
        while (k < hi) {
            uint64_t run_end = k + 1;
            double sum = t->values ? t->values[k] : 1.0;
            while (run_end < hi && entry_cmp(t, k, run_end) == 0) {
                if (t->values)
                    sum += t->values[run_end];
                run_end++;
            }
            if (!(drop_zeros && sum == 0.0)) {
                for (unsigned m = 1; m < t->order; m++)
                    t->idx[m][out] = t->idx[m][k];
                if (t->values)
                    t->values[out] = sum;
                out++;
            }
            k = run_end;
        }
        lo = hi;
    }
    t->ptr[t->dims[0]] = out;
    t->nnz = out;
}

int tensor_check_ptr_size(unsigned order, uint64_t rows, uint64_t count, int has_values,
                          tessel_diag *diag)
{
    uint64_t entry_bytes = count * (4ull * order + (has_values ? 8u : 0u));
    uint64_t limit = entry_bytes * PTR_BYTES_PER_ENTRY_FACTOR;
    if (limit < PTR_BYTES_FLOOR)
        limit = PTR_BYTES_FLOOR;
    if ((rows + 1) * sizeof(uint64_t) > limit)
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                               "%llu rows for only %llu entries: tessel stores one pointer per "
                               "row (%.1f GiB here), which it refuses for such hypersparse input",
                               (unsigned long long)rows, (unsigned long long)count,
                               (double)(rows + 1) * 8.0 / (1u << 30));
    return TESSEL_OK;
}

static int check_ptr_size(const tessel_coo_builder *b, tessel_diag *diag)
{
    return tensor_check_ptr_size(b->order, b->dims[0], b->count, b->has_values, diag);
}

/* Stable counting sort of the builder's entries by mode 0 into t. */
static int scatter_by_first_mode(tessel_coo_builder *b, tessel_tensor *t)
{
    uint64_t n = b->count;
    uint64_t rows = b->dims[0];
    t->ptr = tessel_alloc_array(b->alloc, rows + 1, sizeof(uint64_t));
    if (!t->ptr)
        return TESSEL_ENOMEM;
    memset(t->ptr, 0, (rows + 1) * sizeof(uint64_t));
    if (n == 0)
        return TESSEL_OK;
    for (unsigned m = 1; m < b->order; m++)
        if (!(t->idx[m] = tessel_alloc_array(b->alloc, n, sizeof(uint32_t))))
            return TESSEL_ENOMEM;
    if (b->has_values && !(t->values = tessel_alloc_array(b->alloc, n, sizeof(double))))
        return TESSEL_ENOMEM;
    const uint32_t *row = b->coord[0];
    for (uint64_t k = 0; k < n; k++)
        t->ptr[row[k] + 1]++;
    for (uint64_t r = 0; r < rows; r++)
        t->ptr[r + 1] += t->ptr[r];
    /* ptr[r] is used as the insertion cursor of row r, then restored. The
     * writes land in random rows for column-major input (the Matrix Market
     * habit); prefetching the cursors and destinations a few entries ahead
     * hides most of the cache misses. */
    for (uint64_t k = 0; k < n; k++) {
#if defined(__GNUC__)
        if (k + 2 * SCATTER_PREFETCH < n)
            __builtin_prefetch(&t->ptr[row[k + 2 * SCATTER_PREFETCH]], 1);
        if (k + SCATTER_PREFETCH < n) {
            uint64_t ahead = t->ptr[row[k + SCATTER_PREFETCH]];
            if (t->order > 1)
                __builtin_prefetch(&t->idx[1][ahead], 1);
            if (t->values)
                __builtin_prefetch(&t->values[ahead], 1);
        }
#endif
        uint64_t dst = t->ptr[row[k]]++;
        for (unsigned m = 1; m < b->order; m++)
            t->idx[m][dst] = b->coord[m][k];
        if (t->values)
            t->values[dst] = b->values[k];
    }
    for (uint64_t r = rows; r > 0; r--)
        t->ptr[r] = t->ptr[r - 1];
    t->ptr[0] = 0;
    return TESSEL_OK;
}

static void shrink_to_nnz(tessel_tensor *t)
{
    if (t->nnz == 0) {
        for (unsigned m = 1; m < t->order; m++) {
            tessel_dealloc(t->alloc, t->idx[m]);
            t->idx[m] = NULL;
        }
        tessel_dealloc(t->alloc, t->values);
        t->values = NULL;
        return;
    }
    for (unsigned m = 1; m < t->order; m++) {
        uint32_t *p = tessel_realloc_array(t->alloc, t->idx[m], t->nnz, sizeof(uint32_t));
        if (p)
            t->idx[m] = p;
    }
    if (t->values) {
        double *v = tessel_realloc_array(t->alloc, t->values, t->nnz, sizeof(double));
        if (v)
            t->values = v;
    }
}

static void release_entries(tessel_coo_builder *b)
{
    for (unsigned m = 0; m < b->order; m++) {
        tessel_dealloc(b->alloc, b->coord[m]);
        b->coord[m] = NULL;
    }
    tessel_dealloc(b->alloc, b->values);
    b->values = NULL;
    b->count = b->cap = 0;
}

int tessel_coo_builder_finish(tessel_coo_builder *b, unsigned flags, tessel_tensor **out,
                              tessel_diag *diag)
{
    *out = NULL;
    int rc = check_ptr_size(b, diag);
    if (rc)
        return rc;
    tessel_tensor *t = tessel_alloc(b->alloc, sizeof(*t));
    if (!t)
        return oom(diag, "creating the tensor", sizeof(*t));
    memset(t, 0, sizeof(*t));
    t->alloc = b->alloc;
    t->order = b->order;
    memcpy(t->dims, b->dims, sizeof(b->dims));
    t->nnz = b->count;
    strcpy(t->field, b->has_values ? "real" : "pattern");
    strcpy(t->symmetry, "general");
    rc = scatter_by_first_mode(b, t);
    release_entries(b);
    if (rc) {
        tessel_tensor_free(&t);
        return oom(diag, "building the compressed arrays",
                   (b->dims[0] + 1) * sizeof(uint64_t) +
                       b->count * ((b->order - 1) * sizeof(uint32_t) +
                                   (b->has_values ? sizeof(double) : 0)));
    }
    rc = tensor_finish_slices(t, flags, diag);
    if (rc) {
        tessel_tensor_free(&t);
        return rc;
    }
    *out = t;
    return TESSEL_OK;
}

int tensor_finish_slices(tessel_tensor *t, unsigned flags, tessel_diag *diag)
{
    int rc = sort_slices(t, diag);
    if (rc)
        return rc;
    merge_duplicates(t, (flags & TESSEL_BUILD_DROP_ZEROS) != 0);
    shrink_to_nnz(t);
    return TESSEL_OK;
}

/* The output's exact nonzeros per (i cell, k cell of their first
 * multiply) of Z = A B (docs/models/stat.md, "The written nonzeros on the
 * (i cell, first k cell) counts"): the 2-D version of the per-k-cell
 * count (stat_output.c's fknnz). A symbolic pass like rule 3's
 * (outcount.c): one marker per output column, stamped with the row, so a
 * column counts at the first k of A's row (sorted by k) that reaches it.
 * Streaming: one dense accumulator over the k cells for the current i
 * cell, flushed as a sparse list when the i cell ends. Time O(multiplies +
 * entries log), memory O(columns + k cells + entries); at most `budget`
 * entries are kept (TESSEL_ERANGE past it: the caller goes without),
 * checked first against a bound from A's nonzeros alone (an i cell's
 * entries are among the k cells its rows of A hold), so that a product
 * past the budget costs at most O(nnz(A)), not its multiplies (the bound
 * stops at the i cell that takes it past the budget). */
#include <stdlib.h>
#include <string.h>

#include "tessel/stats.h"

typedef struct fc_acc {
    const tessel_allocator *al;
    double *acc;     /* per k cell, the current i cell's count */
    uint32_t *touched; /* k cells with acc > 0, in first-touch order */
    uint64_t ntouched;
    uint64_t room;   /* entries allocated in out */
    uint64_t budget;
} fc_acc;

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Room for n more entries in out (doubling). */
static int fc_grow(fc_acc *f, tessel_first_cells *out, uint64_t n)
{
    uint64_t want = out->nentries + n;
    if (want > f->budget)
        return TESSEL_ERANGE;
    if (want <= f->room)
        return TESSEL_OK;
    uint64_t room = f->room ? 2 * f->room : 1024;
    while (room < want)
        room *= 2;
    room = room < f->budget ? room : f->budget;
    uint32_t *kc = tessel_realloc_array(f->al, out->kcell, room, sizeof(uint32_t));
    if (!kc)
        return TESSEL_ENOMEM;
    out->kcell = kc;
    double *nz = tessel_realloc_array(f->al, out->nnz, room, sizeof(double));
    if (!nz)
        return TESSEL_ENOMEM;
    out->nnz = nz;
    f->room = room;
    return TESSEL_OK;
}

/* The current i cell's counts, sorted by k cell, appended to out. */
static int fc_flush(fc_acc *f, tessel_first_cells *out, uint64_t icell)
{
    int rc = fc_grow(f, out, f->ntouched);
    if (rc)
        return rc;
    qsort(f->touched, f->ntouched, sizeof(uint32_t), cmp_u32);
    for (uint64_t t = 0; t < f->ntouched; t++) {
        uint32_t k = f->touched[t];
        out->kcell[out->nentries] = k;
        out->nnz[out->nentries++] = f->acc[k];
        f->acc[k] = 0;
    }
    f->ntouched = 0;
    out->ptr[icell + 1] = out->nentries;
    return TESSEL_OK;
}

/* Rows [i cell's first, last) counted into f's accumulator. */
static void fc_rows(const tessel_tensor *a, const tessel_tensor *b, uint64_t lo, uint64_t hi,
                    uint64_t edge_k, uint64_t *marker, fc_acc *f)
{
    for (uint64_t i = lo; i < hi; i++)
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            uint64_t k = a->idx[1][p], n = 0;
            for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
                uint64_t j = b->idx[1][q];
                if (marker[j] != i + 1) {
                    marker[j] = i + 1;
                    n++;
                }
            }
            if (!n)
                continue;
            uint32_t kc = (uint32_t)(k / edge_k);
            if (f->acc[kc] == 0)
                f->touched[f->ntouched++] = kc;
            f->acc[kc] += (double)n;
        }
}

/* An upper bound on the entries, in O(nnz(A)): an i cell's k cells of
 * first multiplies are among its rows' k cells in A (acc's first nk
 * entries as stamps). Counted only until it passes `budget`: the caller
 * refuses then, and the rest of A would not change that. */
static uint64_t fc_bound(const tessel_tensor *a, uint64_t edge_i, uint64_t edge_k, uint64_t ni,
                         uint64_t budget, double *stamp)
{
    const uint32_t *idx = a->idx[1];
    unsigned sh = 0; /* edge_k a power of two: a shift for the division */
    while (sh < 63 && (UINT64_C(1) << sh) < edge_k)
        sh++;
    int pow2 = (UINT64_C(1) << sh) == edge_k;
    uint64_t n = 0;
    for (uint64_t c = 0; c < ni && n <= budget; c++) {
        uint64_t lo = c * edge_i, hi = lo + edge_i < a->dims[0] ? lo + edge_i : a->dims[0];
        double mark = (double)(c + 1);
        for (uint64_t p = a->ptr[lo]; p < a->ptr[hi]; p++) {
            uint64_t kc = pow2 ? idx[p] >> sh : idx[p] / edge_k;
            if (stamp[kc] != mark) {
                stamp[kc] = mark;
                n++;
            }
        }
    }
    return n;
}

int tessel_first_cells_count(const tessel_tensor *a, const tessel_tensor *b, uint64_t edge_i,
                             uint64_t edge_k, uint64_t budget, const tessel_allocator *al,
                             tessel_first_cells *out)
{
    memset(out, 0, sizeof(*out));
    if (a->order != 2 || b->order != 2 || !edge_i || !edge_k || a->dims[1] != b->dims[0])
        return TESSEL_EINVAL;
    out->edge_i = edge_i;
    out->edge_k = edge_k;
    out->ni = (a->dims[0] + edge_i - 1) / edge_i;
    out->nk = (a->dims[1] + edge_k - 1) / edge_k;
    if (out->nk > UINT32_MAX)
        return TESSEL_ERANGE;
    fc_acc f = { .al = al, .budget = budget };
    uint64_t *marker = tessel_alloc_zeroed(al, b->dims[1] + 1, sizeof(uint64_t));
    f.acc = tessel_alloc_zeroed(al, out->nk + 1, sizeof(double));
    f.touched = tessel_alloc_array(al, out->nk + 1, sizeof(uint32_t));
    out->ptr = tessel_alloc_zeroed(al, out->ni + 1, sizeof(uint64_t));
    int rc = marker && f.acc && f.touched && out->ptr ? TESSEL_OK : TESSEL_ENOMEM;
    /* past the budget even at its bound: refused before the multiplies */
    if (!rc && fc_bound(a, edge_i, edge_k, out->ni, budget, f.acc) > budget)
        rc = TESSEL_ERANGE;
    if (!rc)
        memset(f.acc, 0, (out->nk + 1) * sizeof(double));
    for (uint64_t c = 0; !rc && c < out->ni; c++) {
        uint64_t lo = c * edge_i, hi = lo + edge_i < a->dims[0] ? lo + edge_i : a->dims[0];
        fc_rows(a, b, lo, hi, edge_k, marker, &f);
        rc = fc_flush(&f, out, c);
    }
    tessel_dealloc(al, marker);
    tessel_dealloc(al, f.acc);
    tessel_dealloc(al, f.touched);
    if (rc)
        tessel_first_cells_free(al, out);
    return rc;
}

int tessel_first_cells_check(const tessel_first_cells *fc)
{
    if (!fc->ptr || !fc->edge_i || !fc->edge_k || fc->ptr[0] != 0 ||
        fc->ptr[fc->ni] != fc->nentries)
        return 0;
    for (uint64_t c = 0; c < fc->ni; c++) {
        if (fc->ptr[c] > fc->ptr[c + 1] || fc->ptr[c + 1] > fc->nentries)
            return 0;
        for (uint64_t e = fc->ptr[c]; e < fc->ptr[c + 1]; e++)
            if (fc->kcell[e] >= fc->nk || (e > fc->ptr[c] && fc->kcell[e] <= fc->kcell[e - 1]) ||
                !(fc->nnz[e] > 0) || fc->nnz[e] > 1e300)
                return 0;
    }
    return 1;
}

void tessel_first_cells_free(const tessel_allocator *al, tessel_first_cells *fc)
{
    tessel_dealloc(al, fc->ptr);
    tessel_dealloc(al, fc->kcell);
    tessel_dealloc(al, fc->nnz);
    memset(fc, 0, sizeof(*fc));
}

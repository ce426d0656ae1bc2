/* The output's exact nonzero count by a symbolic pass (docs/semantics.md
 * rule 3; docs/models/stat.md "The output count of rule 3"): the output
 * row by row (TTM: fibre by fibre, MTTKRP: slice by slice) with one marker
 * per output column, stamped with the row it was last set in, so a column
 * counts once per row. Time O(multiplies), memory O(columns): the symbolic
 * phase of Gustavson's SpGEMM without the accumulation. The stat
 * estimator runs it at statistics time when the multiplies are within
 * its budget, so that compulsory_bytes is the exact estimator's. */
#include <string.h>

#include "tessel/stats.h"

/* Stamps column c in row `stamp`; 1 when it was not yet set there. */
static int mark(uint64_t *marker, uint64_t c, uint64_t stamp)
{
    if (marker[c] == stamp)
        return 0;
    marker[c] = stamp;
    return 1;
}

double tessel_output_count_work(const tessel_tensor *a, const tessel_tensor *b,
                                const tessel_tensor *c)
{
    unsigned km = a->order - 1;
    double w = 0;
    for (uint64_t p = 0; p < a->nnz; p++) {
        if (c) { /* MTTKRP: the merge of B's row j with C's row k */
            uint64_t j = a->idx[1][p], k = a->idx[2][p];
            w += (double)(b->ptr[j + 1] - b->ptr[j]) + (double)(c->ptr[k + 1] - c->ptr[k]);
        } else {
            uint64_t k = a->idx[km][p];
            w += (double)(b->ptr[k + 1] - b->ptr[k]);
        }
    }
    return w;
}

/* A B for A [i, k] or T [i, x, k] (TTM) against B [k, j]; each row's
 * (slice's) nonzeros into row_nnz, and (A a matrix) each k's first-reached
 * nonzeros into k_nnz, when not NULL. */
static void count_product(const tessel_tensor *a, const tessel_tensor *b, uint64_t *marker,
                          tessel_output_count *out, double *row_nnz, double *k_nnz)
{
    unsigned km = a->order - 1;
    uint64_t stamp = 0;
    for (uint64_t i = 0; i < a->dims[0]; i++) {
        uint64_t row = 0;
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            if (a->order == 3 && (p == a->ptr[i] || a->idx[1][p] != a->idx[1][p - 1]))
                stamp++; /* a new fibre T(i, x, :): T is sorted by (i, x, k) */
            else if (a->order == 2 && p == a->ptr[i])
                stamp++;
            uint64_t k = a->idx[km][p], fibre = 0;
            for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++)
                fibre += (uint64_t)mark(marker, b->idx[1][q], stamp);
            if (k_nnz && a->order == 2)
                k_nnz[k] += (double)fibre; /* A's row is sorted by k: its first reach */
            if (fibre && a->order == 3 && marker[b->dims[1]] != stamp) {
                marker[b->dims[1]] = stamp; /* the fibre's first nonzero */
                out->fibers++;
            }
            row += fibre;
        }
        if (row_nnz)
            row_nnz[i] = (double)row;
        out->nnz += row;
        out->rows += row > 0;
    }
    if (a->order == 2)
        out->fibers = out->rows;
}

/* MTTKRP Y[i, r] = T[i, j, k] B[j, r] C[k, r]: r holds a multiply of
 * T(i, j, k) where B's row j and C's row k both have it. */
static void count_mttkrp(const tessel_tensor *t, const tessel_tensor *b, const tessel_tensor *c,
                         uint64_t *marker, tessel_output_count *out)
{
    for (uint64_t i = 0; i < t->dims[0]; i++) {
        uint64_t row = 0;
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            uint64_t j = t->idx[1][p], k = t->idx[2][p];
            uint64_t q = b->ptr[j], qe = b->ptr[j + 1], s = c->ptr[k], se = c->ptr[k + 1];
            while (q < qe && s < se) { /* both rows sorted by r */
                uint64_t rb = b->idx[1][q], rc = c->idx[1][s];
                if (rb == rc)
                    row += (uint64_t)mark(marker, rb, i + 1);
                q += rb <= rc;
                s += rc <= rb;
            }
        }
        out->nnz += row;
        out->rows += row > 0;
    }
    out->fibers = out->rows;
}

int tessel_output_count_run(const tessel_tensor *a, const tessel_tensor *b, const tessel_tensor *c,
                        const tessel_allocator *al, tessel_output_count *out, tessel_diag *diag)
{
    return tessel_output_count_rows(a, b, c, al, out, NULL, diag);
}

int tessel_output_count_rows(const tessel_tensor *a, const tessel_tensor *b,
                             const tessel_tensor *c, const tessel_allocator *al,
                             tessel_output_count *out, double *row_nnz, tessel_diag *diag)
{
    return tessel_output_count_detail(a, b, c, al, out, row_nnz, NULL, diag);
}

int tessel_output_count_detail(const tessel_tensor *a, const tessel_tensor *b,
                               const tessel_tensor *c, const tessel_allocator *al,
                               tessel_output_count *out, double *row_nnz, double *k_nnz,
                               tessel_diag *diag)
{
    memset(out, 0, sizeof(*out));
    if (!a || !b || a->order < 2 || a->order > 3 || b->order != 2 ||
        (c && (c->order != 2 || a->order != 3 || c->dims[1] != b->dims[1])))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "output count: operands of orders %u and %u", a ? a->order : 0,
                               b ? b->order : 0);
    uint64_t cols = b->dims[1] + 1; /* + 1: TTM's per-fibre flag */
    uint64_t *marker = tessel_alloc_array(al, cols, sizeof(uint64_t));
    if (!marker)
        return tessel_diag_oom(diag, NULL, "the output count's markers", cols * sizeof(uint64_t));
    memset(marker, 0, cols * sizeof(uint64_t));
    if (k_nnz && !c && a->order == 2)
        memset(k_nnz, 0, b->dims[0] * sizeof(double));
    if (c)
        count_mttkrp(a, b, c, marker, out);
    else
        count_product(a, b, marker, out, row_nnz, k_nnz);
    tessel_dealloc(al, marker);
    return TESSEL_OK;
}

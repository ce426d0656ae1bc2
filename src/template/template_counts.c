/* The counts the templates' traffic is made of (tpl_counts), exact from
 * the data or from the stat estimator's statistics.
 *
 * Exact: one pass over A's nonzeros for the multiplies (drt §5.2.2: a row
 * of B is fetched per nonzero of A that selects it, gamma §7), and one
 * Gustavson pass with a marker array over j for the output's nonzeros per
 * row (symbolic multiplication, gamma §2.2: row i of Z is the union of the
 * rows of B that row i of A selects). O(nnz(A) + multiplies + K + J).
 *
 * Stat: the multiplies are exact from the per-line nonzero counts (the sum
 * over k of nnz(A column k) x nnz(B row k)); the output's nonzeros come
 * from the stat estimator's output estimate (its sample, or d2t2 eq. 20 on
 * one whole-matrix tile when the statistics hold no sample). */
#include <math.h>
#include <string.h>

#include "template_internal.h"

/* ------------------------------------------------------------------ */
/* Roles. */

int tpl_roles_of(const tessel_spec *spec, tpl_roles *r, tessel_diag *diag)
{
    memset(r, 0, sizeof(*r));
    const tessel_spec_workload *w = &spec->workload;
    const tessel_spec_tensor *z = &w->tensor[0];
    int spmv = w->kind == TESSEL_WORKLOAD_SPMV;
    if ((w->kind != TESSEL_WORKLOAD_SPMSPM && !spmv) || w->ntensors != 3)
        goto unsupported;
    r->spmv = spmv;
    r->xi = z->index[0];
    r->xj = spmv ? -1 : (int)z->index[1];
    int ta = -1;
    for (unsigned t = 1; t < 3 && ta < 0; t++)
        if (w->tensor[t].rank == 2 && tpl_mode_of(&w->tensor[t], r->xi) >= 0)
            ta = (int)t;
    if (ta < 0)
        goto unsupported;
    r->ta = (unsigned)ta;
    r->tb = ta == 1 ? 2 : 1;
    const tessel_spec_tensor *sa = &w->tensor[r->ta], *sb = &w->tensor[r->tb];
    r->xk = sa->index[0] == r->xi ? sa->index[1] : sa->index[0];
    if (r->xk == r->xi || tpl_mode_of(sb, r->xk) < 0)
        goto unsupported;
    if (spmv ? sb->rank != 1 : (sb->rank != 2 || tpl_mode_of(sb, (unsigned)r->xj) < 0))
        goto unsupported;
    return TESSEL_OK;
unsupported:
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, w->pos.file, w->pos.line, w->pos.column,
                           "workload.einsum",
                           "template '%s' models SpMSpM (Z[i,j] = A[i,k] * B[k,j]) and SpMV; "
                           "'%s' is neither",
                           spec->template_.name, w->einsum ? w->einsum : "");
}

/* ------------------------------------------------------------------ */
/* Exact. */

void tpl_csr_view_free(const tessel_allocator *a, tpl_csr_view *v)
{
    tessel_dealloc(a, v->own_ptr);
    tessel_dealloc(a, v->own_idx);
    memset(v, 0, sizeof(*v));
}

/* The transpose of matrix t's pattern (columns ascending within each row). */
static int csr_transpose(const tessel_tensor *t, const tessel_allocator *a, tpl_csr_view *v)
{
    v->rows = t->dims[1];
    v->cols = t->dims[0];
    v->nnz = t->nnz;
    int rc = tessel_tensor_transpose_pattern(t, a, &v->own_ptr, &v->own_idx);
    if (rc)
        return rc;
    v->ptr = v->own_ptr;
    v->idx = v->own_idx;
    return TESSEL_OK;
}

int tpl_csr_of(const tessel_tensor *t, int row_mode, const tessel_allocator *a, tpl_csr_view *v)
{
    memset(v, 0, sizeof(*v));
    if (t->order == 1) {
        v->rows = t->dims[0];
        v->cols = 1;
        v->nnz = t->nnz;
        v->ptr = t->ptr;
        return TESSEL_OK;
    }
    if (row_mode == 0) {
        v->rows = t->dims[0];
        v->cols = t->dims[1];
        v->nnz = t->nnz;
        v->ptr = t->ptr;
        v->idx = t->idx[1];
        return TESSEL_OK;
    }
    return csr_transpose(t, a, v);
}

/* Column k's share of the per-column counts (tpl_counts.a_col_sq, a_col_sq_b
 * and the PEs' round-robin deal): a nonzeros in A's column, b in B's row. */
static void column_counts(tpl_counts *c, tpl_pe_deal_state *d, uint64_t a, uint64_t b)
{
    uint64_t sq = tpl_sat_mul(a, a);
    c->a_col_sq = tpl_sat_add(c->a_col_sq, sq);
    c->a_col_sq_b = tpl_sat_add(c->a_col_sq_b, tpl_sat_mul(sq, b));
    tpl_pe_deal_column(d, a, b);
}

/* The counts from the data: line counts, multiplies, effectual pairs and nnz(Z). */
int tpl_counts_exact(const tessel_spec *spec, const tpl_roles *r,
                     const tessel_workload_data *data, const tessel_allocator *a,
                     tpl_counts *c, tessel_diag *diag)
{
    memset(c, 0, sizeof(*c));
    const tessel_tensor *ta = data->tensor[r->ta], *tb = data->tensor[r->tb];
    if (!ta || !tb || ta->order != 2 || tb->order != (r->spmv ? 1u : 2u))
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->workload.pos.file,
                               spec->workload.pos.line, spec->workload.pos.column,
                               "workload.data",
                               "template '%s': the data of %s and %s do not match the einsum",
                               spec->template_.name, spec->workload.tensor[r->ta].name,
                               spec->workload.tensor[r->tb].name);
    tpl_csr_view A, B;
    memset(&B, 0, sizeof(B));
    uint64_t *mark = NULL;
    int rc = tpl_csr_of(ta, tpl_mode_of(&spec->workload.tensor[r->ta], r->xi), a, &A);
    if (!rc)
        rc = tpl_csr_of(tb, tpl_mode_of(&spec->workload.tensor[r->tb], r->xk), a, &B);
    if (!rc && A.cols != B.rows)
        rc = tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "workload.data",
                             "template '%s': %s has %llu columns along k, %s %llu rows",
                             spec->template_.name, spec->workload.tensor[r->ta].name,
                             (unsigned long long)A.cols, spec->workload.tensor[r->tb].name,
                             (unsigned long long)B.rows);
    uint64_t nmark = A.cols > B.cols ? A.cols : B.cols;
    tpl_pe_deal_state deal;
    memset(&deal, 0, sizeof(deal));
    if (!rc) {
        mark = tessel_alloc_array(a, nmark ? nmark : 1, sizeof(uint64_t));
        if (!mark || tpl_pe_deal_begin(&deal, spec->compute.pes, a))
            rc = TESSEL_ENOMEM;
    }
    if (rc == TESSEL_ENOMEM)
        rc = tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    if (!rc) {
        c->rows_a = A.rows;
        c->cols_a = A.cols;
        c->cols_b = B.cols;
        c->nnz_a = A.nnz;
        c->nnz_b = B.nnz;
        for (uint64_t k = 0; k < B.rows; k++)
            c->rows_b_nonempty += B.ptr[k + 1] > B.ptr[k];
        /* columns of A: mark[k] = 1 once seen */
        memset(mark, 0, (nmark ? nmark : 1) * sizeof(uint64_t));
        for (uint64_t p = 0; p < A.nnz; p++) {
            uint64_t k = A.idx[p];
            uint64_t len = B.ptr[k + 1] - B.ptr[k];
            if (!mark[k]) {
                /* the first nonzero of column k: B row k meets A's column k */
                mark[k] = 1;
                c->cols_a_nonempty++;
                c->b_effectual += len;
                c->k_effectual += len > 0;
            }
            c->multiplies = tpl_sat_add(c->multiplies, len);
            c->a_effectual += len > 0;
        }
        /* per column of A: its nonzeros (mark[k] counts them now), in column order */
        memset(mark, 0, (nmark ? nmark : 1) * sizeof(uint64_t));
        for (uint64_t p = 0; p < A.nnz; p++)
            mark[A.idx[p]]++;
        for (uint64_t k = 0; k < A.cols; k++)
            column_counts(c, &deal, mark[k], B.ptr[k + 1] - B.ptr[k]);
        tpl_pe_deal_end(&deal, &c->deal);
        /* symbolic Gustavson: mark[j] = i + 1 once Z(i, j) is counted */
        memset(mark, 0, (nmark ? nmark : 1) * sizeof(uint64_t));
        for (uint64_t i = 0; i < A.rows; i++) {
            c->rows_a_nonempty += A.ptr[i + 1] > A.ptr[i];
            uint64_t row = 0;
            for (uint64_t p = A.ptr[i]; p < A.ptr[i + 1]; p++) {
                uint64_t k = A.idx[p];
                for (uint64_t q = B.ptr[k]; q < B.ptr[k + 1]; q++) {
                    uint64_t j = B.idx ? B.idx[q] : 0;
                    if (mark[j] != i + 1) {
                        mark[j] = i + 1;
                        row++;
                    }
                }
            }
            c->nnz_z += row;
            c->rows_z_nonempty += row > 0;
        }
    }
    tpl_pe_deal_free(&deal);
    tessel_dealloc(a, mark);
    tpl_csr_view_free(a, &A);
    tpl_csr_view_free(a, &B);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Statistical. */

static int stat_mismatch(const tessel_spec *spec, tessel_diag *diag)
{
    return tessel_diag_set(diag, TESSEL_EINVAL, spec->workload.pos.file, spec->workload.pos.line,
                           spec->workload.pos.column, "workload.einsum",
                           "template '%s': these statistics were not collected for '%s'",
                           spec->template_.name,
                           spec->workload.einsum ? spec->workload.einsum : "");
}

/* The stat estimator's output estimate without an output sample: d2t2
 * eq. 20 on one level with whole-matrix tiles, i.e. for the matrix as a
 * single tile (the estimate does not depend on this template's design). */
static int output_nnz_eval(const tessel_spec *spec, const tessel_stat_data *s,
                           const tessel_allocator *a, double *nnz, tessel_diag *diag)
{
    tessel_spec *one = tessel_alloc(a, sizeof(*one));
    if (!one)
        return tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    *one = *spec; /* shallow: read only, never freed as a spec */
    one->nlevels = 2;
    tessel_spec_level *lv = &one->level[1];
    memset(lv->tile, 0, sizeof(lv->tile));
    lv->format = 1; /* csr: a single-name format the stat estimator prices */
    for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
        lv->tensor[t].format = -1;
        lv->tensor[t].partition_fraction = 0;
        lv->tensor[t].partition_bytes = 0;
    }
    lv->capacity = 0;
    tessel_result *res = tessel_alloc(a, sizeof(*res));
    int rc = res ? tessel_model_stat_eval(one, s, res, diag)
                 : tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (!rc)
        *nnz = (double)res->output_nnz;
    tessel_dealloc(a, res);
    tessel_dealloc(a, one);
    return rc;
}

/* Z's nonzeros and non-empty rows from rule 3's exact count, when the
 * statistics hold it (docs/models/stat.md, "The output count of rule 3"). */
static void exact_output(const tessel_stat_data *stats, tpl_counts *c)
{
    tessel_output_count oc;
    if (tessel_stat_data_output_count(stats, &oc)) {
        c->nnz_z = oc.nnz;
        c->rows_z_nonempty = oc.rows;
    }
}

/* The counts from the statistics: exact from the line counts but Z's. */
int tpl_counts_stat(const tessel_spec *spec, const tpl_roles *r, const tessel_stat_data *stats,
                    const tessel_allocator *a, tpl_counts *c, tessel_diag *diag)
{
    memset(c, 0, sizeof(*c));
    uint64_t n_ai, n_ak, n_bk, n_bj;
    int x_ai, x_ak, x_bk, x_bj;
    const uint64_t *a_rows = tessel_stat_data_line_nnz(stats, r->ta, 0, &n_ai, &x_ai);
    const uint64_t *a_cols = tessel_stat_data_line_nnz(stats, r->ta, 1, &n_ak, &x_ak);
    const uint64_t *b_rows = tessel_stat_data_line_nnz(stats, r->tb, 0, &n_bk, &x_bk);
    const uint64_t *b_cols = tessel_stat_data_line_nnz(stats, r->tb, 1, &n_bj, &x_bj);
    if (!a_rows || !a_cols || !b_rows || !b_cols || x_ai != (int)r->xi || x_ak != (int)r->xk ||
        x_bk != (int)r->xk || x_bj != r->xj || n_ak != n_bk)
        return stat_mismatch(spec, diag);
    tpl_pe_deal_state deal;
    if (tpl_pe_deal_begin(&deal, spec->compute.pes, a))
        return tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    c->rows_a = n_ai;
    c->cols_a = n_ak;
    c->cols_b = n_bj;
    for (uint64_t i = 0; i < n_ai; i++) {
        c->nnz_a += a_rows[i];
        c->rows_a_nonempty += a_rows[i] > 0;
    }
    for (uint64_t k = 0; k < n_bk; k++) {
        c->nnz_b += b_rows[k];
        c->rows_b_nonempty += b_rows[k] > 0;
        c->cols_a_nonempty += a_cols[k] > 0;
        c->multiplies = tpl_sat_add(c->multiplies, tpl_sat_mul(a_cols[k], b_rows[k]));
        column_counts(c, &deal, a_cols[k], b_rows[k]);
        if (b_rows[k] && a_cols[k]) {
            /* exact from the line counts: the pairs (A column k, B row k)
             * that hold a multiply */
            c->a_effectual += a_cols[k];
            c->b_effectual += b_rows[k];
            c->k_effectual++;
        }
    }
    tpl_pe_deal_end(&deal, &c->deal);
    double nnz = tessel_stat_data_output_nnz(stats);
    if (nnz < 0) {
        int rc = output_nnz_eval(spec, stats, a, &nnz, diag);
        if (rc)
            return rc;
    }
    c->nnz_z = tpl_round_count(nnz);
    if (c->nnz_z > c->multiplies)
        c->nnz_z = c->multiplies;
    /* Non-empty rows of Z: row i of A stays empty in Z only when all its
     * nonzeros select empty rows of B; with q the fraction of A's nonzeros
     * that do, a row of n nonzeros has probability q^n of that
     * (independence assumed; exact when B has no empty rows or only them). */
    double q = c->nnz_a ? (double)(c->nnz_a - c->a_effectual) / (double)c->nnz_a : 0;
    double rows = 0;
    for (uint64_t i = 0; i < n_ai; i++)
        if (a_rows[i])
            rows += q > 0 ? 1 - pow(q, (double)a_rows[i]) : 1;
    c->rows_z_nonempty = tpl_round_count(rows);
    if (c->rows_z_nonempty > c->nnz_z)
        c->rows_z_nonempty = c->nnz_z;
    if (c->nnz_z && !c->rows_z_nonempty)
        c->rows_z_nonempty = 1;
    exact_output(stats, c);
    return TESSEL_OK;
}

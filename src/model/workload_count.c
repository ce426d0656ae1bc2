/* Rule 3's output count (docs/semantics.md rule 3; docs/models/stat.md "The
 * output count of rule 3") kept with the workload data: the symbolic pass
 * of src/stats/outcount.c runs once per workload data and einsum, and
 * serves every later asker (each statistics collection, DRT's
 * calibration), so that a `tessel compare` running drt and the stat
 * strategies, or collecting statistics on several base grids, counts the
 * output once. The memo is filled under a lock: workload data is shared
 * read-only between a sweep's threads. */
#include <pthread.h>
#include <stdio.h>

#include "exact_internal.h"

struct tessel_workload_memo {
    pthread_mutex_t mu;
    int has;              /* count holds the einsum's output count */
    char einsum[512];     /* whose count it is */
    double work;          /* the count's multiplies */
    tessel_output_count count;
    double *rows;         /* each output row's nonzeros (nrows), once asked for */
    uint64_t nrows;
    double *ks;           /* each k's first-reached nonzeros (nks), once asked for */
    uint64_t nks;
};

/* What an asker wants beyond the count: each row's and each k's nonzeros
 * (arrays of nrows and nks entries, or NULL). */
typedef struct count_parts {
    double *rows, *ks;
    uint64_t nrows, nks;
} count_parts;

int model_workload_memo_create(tessel_workload_data *w)
{
    w->memo = tessel_alloc(w->alloc, sizeof(*w->memo));
    if (!w->memo)
        return TESSEL_ENOMEM;
    memset(w->memo, 0, sizeof(*w->memo));
    if (pthread_mutex_init(&w->memo->mu, NULL)) {
        tessel_dealloc(w->alloc, w->memo);
        w->memo = NULL;
        return TESSEL_ENOMEM;
    }
    return TESSEL_OK;
}

void model_workload_memo_free(tessel_workload_data *w)
{
    if (!w->memo)
        return;
    pthread_mutex_destroy(&w->memo->mu);
    tessel_dealloc(w->alloc, w->memo->rows);
    tessel_dealloc(w->alloc, w->memo->ks);
    tessel_dealloc(w->alloc, w->memo);
    w->memo = NULL;
}

static const char *einsum_of(const tessel_spec *spec)
{
    return spec->workload.einsum ? spec->workload.einsum : "";
}

/* The kept count of spec's einsum, if there is one within budget and it
 * holds the rows' and k's counts that `want` asks for (the caller holds
 * the lock). */
static int memo_hit(const struct tessel_workload_memo *m, const tessel_spec *spec, double budget,
                    tessel_output_count *out, int *counted, const count_parts *want)
{
    if (!m->has || strcmp(m->einsum, einsum_of(spec)) != 0)
        return 0;
    int within = m->work <= budget;
    if (within && want->rows && (!m->rows || m->nrows != want->nrows))
        return 0;
    if (within && want->ks && (!m->ks || m->nks != want->nks))
        return 0;
    *counted = within;
    if (*counted) {
        *out = m->count;
        if (want->rows)
            memcpy(want->rows, m->rows, want->nrows * sizeof(double));
        if (want->ks)
            memcpy(want->ks, m->ks, want->nks * sizeof(double));
    }
    return 1;
}

/* A copy of n values with w's allocator (which frees the memo; e's may be
 * a caller's own) in place of *kept; NULL on no memory (nothing kept: a
 * later asker counts again). */
static void keep_copy(const tessel_workload_data *w, double **kept, uint64_t *nkept,
                      const double *v, uint64_t n)
{
    double *copy = tessel_alloc_array(w->alloc, n ? n : 1, sizeof(double));
    if (copy)
        memcpy(copy, v, n * sizeof(double));
    tessel_dealloc(w->alloc, *kept);
    *kept = copy;
    *nkept = copy ? n : 0;
}

/* Keep the count (and the rows' and k's counts when there are some) in m;
 * those kept for another einsum are dropped. */
static void memo_keep(const tessel_workload_data *w, const engine *e, double work,
                      const tessel_output_count *out, const count_parts *got)
{
    struct tessel_workload_memo *m = w->memo;
    if (strlen(einsum_of(e->spec)) >= sizeof(m->einsum))
        return;
    if (!m->has || strcmp(m->einsum, einsum_of(e->spec)) != 0) {
        tessel_dealloc(w->alloc, m->rows);
        tessel_dealloc(w->alloc, m->ks);
        m->rows = m->ks = NULL;
        m->nrows = m->nks = 0;
    }
    snprintf(m->einsum, sizeof(m->einsum), "%s", einsum_of(e->spec));
    m->work = work;
    m->count = *out;
    m->has = 1;
    if (got->rows)
        keep_copy(w, &m->rows, &m->nrows, got->rows, got->nrows);
    if (got->ks)
        keep_copy(w, &m->ks, &m->nks, got->ks, got->nks);
}

/* The count of e's operands (roles set up from w), counted now unless w
 * keeps it; row_nnz (A's rows entries, or NULL) takes each output row's
 * nonzeros (not for MTTKRP), k_nnz (B's rows entries, or NULL) each k's
 * first-reached ones (A a matrix only); the caller holds w's lock when w
 * has a memo. */
static int count_locked(const engine *e, const tessel_workload_data *w, double budget,
                        tessel_output_count *out, int *counted, double *row_nnz,
                        double *k_nnz, tessel_diag *diag)
{
    struct tessel_workload_memo *m = w ? w->memo : NULL;
    const tessel_tensor *c = e->kind == TESSEL_WORKLOAD_MTTKRP ? e->in[2].t : NULL;
    const tessel_tensor *a = e->nin >= 1 ? e->in[0].t : NULL;
    const tessel_tensor *b = e->nin >= 2 ? e->in[1].t : NULL;
    count_parts want = { .rows = c ? NULL : row_nnz, .nrows = a ? a->dims[0] : 0,
                         .ks = c || !a || a->order != 2 || !b ? NULL : k_nnz,
                         .nks = b ? b->dims[0] : 0 };
    if (m && memo_hit(m, e->spec, budget, out, counted, &want))
        return TESSEL_OK;
    *counted = 0;
    if (e->nin < 2 || !a || !b || (e->nin > 2 && !c))
        return TESSEL_OK;
    double work = tessel_output_count_work(a, b, c);
    if (work > budget)
        return TESSEL_OK;
    int rc = tessel_output_count_detail(a, b, c, e->alloc, out, want.rows, want.ks, diag);
    *counted = !rc;
    if (!rc && m)
        memo_keep(w, e, work, out, &want);
    return rc;
}

int model_output_count(const engine *e, const tessel_workload_data *w, double budget,
                       tessel_output_count *out, int *counted, double *row_nnz,
                       double *k_nnz, tessel_diag *diag)
{
    struct tessel_workload_memo *m = w ? w->memo : NULL;
    if (m)
        pthread_mutex_lock(&m->mu);
    int rc = count_locked(e, w, budget, out, counted, row_nnz, k_nnz, diag);
    if (m)
        pthread_mutex_unlock(&m->mu);
    return rc;
}

int tessel_workload_output_count(const tessel_spec *spec, const tessel_workload_data *w,
                                 double budget, tessel_output_count *out, int *counted,
                                 tessel_diag *diag)
{
    struct tessel_workload_memo *m = w->memo;
    memset(out, 0, sizeof(*out));
    *counted = 0;
    if (m) {
        pthread_mutex_lock(&m->mu);
        count_parts none = { 0 };
        int hit = memo_hit(m, spec, budget, out, counted, &none);
        pthread_mutex_unlock(&m->mu);
        if (hit)
            return TESSEL_OK;
    }
    /* the estimators' roles (A [i, k] times B [k, j]), bound once here */
    engine e;
    memset(&e, 0, sizeof(e));
    e.spec = spec;
    e.alloc = w->alloc;
    e.diag = diag;
    e.nlev = spec->nlevels;
    int rc = exact_setup_roles(&e, w);
    if (!rc)
        rc = model_output_count(&e, w, budget, out, counted, NULL, NULL, diag);
    exact_engine_free(&e);
    return rc;
}

/* The gamma template's exact path: the trace over the tasks through the
 * FiberCache, merge trees walked in the scheduler's order (gamma §3.3;
 * the model: gamma.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gamma_internal.h"

typedef struct walker {
    fiber_cache *c;
    const tpl_csr_view *T, *B;
    const tessel_spec_level *lv;
    uint64_t gsz[66]; /* R^L, saturated */
    uint64_t *mark, *stamp;
    tpl_gamma_counts *g;
    uint32_t *stack; /* children's slots of the nodes on the walk */
    uint64_t top;
    uint32_t last; /* the slot the last node produced */
} walker;

static void walk(walker *w, uint64_t p0, uint64_t g0, uint64_t g1, unsigned L, unsigned D)
{
    if (L == 0) {
        gamma_cache_ref(w->c, w->B, w->T->idx[p0 + g0], w->lv, w->g);
        return;
    }
    uint64_t base = w->top, step = w->gsz[L - 1];
    for (uint64_t c0 = g0; c0 < g1; c0 = c0 + step < g1 ? c0 + step : g1) {
        walk(w, p0, c0, c0 + step < g1 ? c0 + step : g1, L - 1, D);
        if (L > 1)
            w->stack[w->top++] = w->last;
    }
    for (uint64_t i = base; i < w->top; i++)
        gamma_part_use(w->c, w->stack[i], w->g);
    w->top = base;
    if (L < D)
        w->last = gamma_part_new(w->c, w->B,
                                 gamma_union_size(w->T, w->B, p0 + g0, p0 + g1, w->mark, w->stamp),
                                 w->lv, w->g);
}

/* The root's level for n fibers: the least D >= 1 with R^D >= n. */
static unsigned levels(const walker *w, uint64_t n)
{
    unsigned D = 1;
    while (D < 65 && w->gsz[D] < n)
        D++;
    return D;
}

/* Task done under tiling: its leaf's partial fiber, then each ancestor
 * whose children are all done merges them (one round: at most R). */
static void task_done(walker *w, split_tree *st, uint32_t x)
{
    while (x != NIL) {
        tnode *n = &st->node[x];
        if (n->spill)
            n->slot = gamma_part_new(w->c, w->B, n->nnz, w->lv, w->g);
        if (n->parent == NIL || --st->node[n->parent].left)
            return;
        x = n->parent;
        for (uint32_t ch = st->node[x].first; ch != NIL; ch = st->node[ch].next)
            gamma_part_use(w->c, st->node[ch].slot, w->g);
    }
}

/* Exact FiberCache misses and merge spills of one pass over the tasks (gamma §3-4). */
int gamma_exact(const tessel_spec *spec, const tpl_roles *r, const tessel_workload_data *data,
                const tpl_options *o, const tessel_allocator *a, tpl_gamma_counts *g)
{
    const tessel_spec_level *lv = &spec->level[1];
    const tessel_tensor *ta = data->tensor[r->ta], *tb = data->tensor[r->tb];
    tpl_csr_view A, B, T;
    memset(&B, 0, sizeof(B));
    memset(&T, 0, sizeof(T));
    fiber_cache c;
    memset(&c, 0, sizeof(c));
    uint64_t *mark = NULL, stamp = 0;
    uint32_t *order = NULL, *stack = NULL;
    split_tree st;
    memset(&st, 0, sizeof(st));
    int pc = !o->partials_mem; /* partials: cache */
    int rc = tpl_csr_of(ta, tpl_mode_of(&spec->workload.tensor[r->ta], r->xi) == 0 ? 0 : 1, a, &A);
    if (!rc)
        rc = tpl_csr_of(tb, tpl_mode_of(&spec->workload.tensor[r->tb], r->xk) == 0 ? 0 : 1, a, &B);
    if (rc)
        goto out;
    /* tpl_counts_exact has checked the shapes */
    uint64_t J = B.cols;
    mark = tessel_alloc_array(a, J ? J : 1, sizeof(uint64_t));
    if (!mark) {
        rc = TESSEL_ENOMEM;
        goto out;
    }
    memset(mark, 0, (J ? J : 1) * sizeof(uint64_t));
    rc = gamma_make_tasks(&A, &B, o, lv, mark, a, &stamp, g, &T, pc && o->tiling ? &st : NULL);
    if (!rc && o->reorder && T.rows)
        rc = gamma_task_order(&T, &B, o, lv, a, &order);
    if (!rc && order && o->tiling && o->subrows_together)
        rc = gamma_subrows_together(&A, &T, a, order);
    if (rc)
        goto out;
    walker w = { &c, &T, &B, lv, { 1 }, mark, &stamp, g, NULL, 0, NIL };
    uint64_t S = 0;
    if (pc) {
        /* live partial fibers at most: the split tree's, plus per task up
         * to min(R, n) children on each level of its walk */
        uint64_t nmax = 0;
        for (uint64_t t = 0; t < T.rows; t++)
            nmax = T.ptr[t + 1] - T.ptr[t] > nmax ? T.ptr[t + 1] - T.ptr[t] : nmax;
        for (unsigned L = 1; L < 66; L++)
            w.gsz[L] = tpl_sat_mul(w.gsz[L - 1], o->radix);
        uint64_t fan = o->radix < nmax ? o->radix : nmax;
        uint64_t deep = tpl_sat_mul(fan, levels(&w, nmax));
        S = tpl_sat_add(tpl_sat_add(deep, st.nnode), 1);
        if (S > (uint64_t)NIL - 1 - B.rows) {
            rc = TESSEL_ENOMEM; /* more live fibers than 32-bit slots */
            goto out;
        }
        stack = tessel_alloc_array(a, deep + 1, sizeof(uint32_t));
        if (!stack) {
            rc = TESSEL_ENOMEM;
            goto out;
        }
        w.stack = stack;
    }
    rc = gamma_cache_init(&c, o, lv, B.rows, S, &B, a);
    if (rc)
        goto out;
    for (uint64_t tt = 0; pc && tt < T.rows; tt++) {
        uint64_t t = order ? order[tt] : tt, n = T.ptr[t + 1] - T.ptr[t];
        unsigned D = levels(&w, n);
        walk(&w, T.ptr[t], 0, n, D, D);
        if (st.leaf && st.leaf[t] != NIL)
            task_done(&w, &st, st.leaf[t]);
    }
    for (uint64_t tt = 0; !pc && tt < T.rows; tt++) {
        uint64_t t = order ? order[tt] : tt;
        for (uint64_t p = T.ptr[t]; p < T.ptr[t + 1]; p++)
            gamma_cache_ref(&c, &B, T.idx[p], lv, g);
        gamma_merge_rounds(&T, &B, T.ptr[t], T.ptr[t + 1], o->radix, mark, &stamp, g);
    }
out:
    gamma_cache_free(&c, a);
    tessel_dealloc(a, mark);
    tessel_dealloc(a, order);
    tessel_dealloc(a, stack);
    tessel_dealloc(a, st.node);
    tessel_dealloc(a, st.leaf);
    tpl_csr_view_free(a, &A);
    tpl_csr_view_free(a, &B);
    tpl_csr_view_free(a, &T);
    return rc;
}

/* The gamma template's merger rounds (radix R, gamma §3.1) and selective
 * coordinate-space tiling into tasks (gamma §4.2; the model: gamma.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gamma_internal.h"

/* Columns in the union of the B fibers of A's entries [p0, p1): mark[j]
 * == *stamp once j is counted. */
uint64_t gamma_union_size(const tpl_csr_view *A, const tpl_csr_view *B, uint64_t p0, uint64_t p1,
                          uint64_t *mark, uint64_t *stamp)
{
    uint64_t u = 0;
    ++*stamp;
    for (uint64_t p = p0; p < p1; p++) {
        uint32_t k = A->idx[p];
        for (uint64_t q = B->ptr[k]; q < B->ptr[k + 1]; q++) {
            uint64_t j = B->idx ? B->idx[q] : 0;
            if (mark[j] != *stamp) {
                mark[j] = *stamp;
                u++;
            }
        }
    }
    return u;
}

/* The merger's rounds over the fibers of A's entries [p0, p1): groups of
 * R^L consecutive fibers while n > R^L, each an intermediate fiber
 * spilled (see the top comment). */
void gamma_merge_rounds(const tpl_csr_view *A, const tpl_csr_view *B, uint64_t p0, uint64_t p1,
                        uint64_t R, uint64_t *mark, uint64_t *stamp, tpl_gamma_counts *g)
{
    uint64_t n = p1 - p0;
    for (uint64_t gsz = R; gsz < n; gsz = tpl_sat_mul(gsz, R)) {
        for (uint64_t g0 = 0; g0 < n; g0 += gsz) {
            uint64_t g1 = g0 + gsz < n ? g0 + gsz : n;
            g->spill_fibers++;
            g->spill_nnz =
                tpl_sat_add(g->spill_nnz, gamma_union_size(A, B, p0 + g0, p0 + g1, mark, stamp));
        }
        if (gsz > UINT64_MAX / R)
            break;
    }
}

/* Selective coordinate-space tiling (gamma §4.2). A row of A whose B
 * footprint, estimated as its length times the average B fiber, exceeds
 * tile_fraction x the cache is split into R subrows by coordinate: subrow
 * c holds the nonzeros with k in [k0 + c(k1 - k0)/R, k0 + (c + 1)(k1 -
 * k0)/R); a subrow still over the limit is split again. A range whose
 * nonzeros all fall in one part is narrowed without a new subrow. Every
 * subrow's partial output fiber (the union of its B fibers' columns) is
 * merged with its siblings once they are all done, in one round (at most
 * R). partials: memory writes each to memory and reads it back; partials:
 * cache keeps it in the FiberCache until then (gamma §4.2: subrows are not
 * processed close in time once reordered, so theirs are likely evicted). The leaves
 * are the tasks the trace processes, in order, A's rows as they are when
 * a row is not split. A's own traffic is unchanged (the subrows are
 * slices of its rows). */

typedef struct tiler {
    const tpl_csr_view *A, *B;
    uint64_t R;
    double limit; /* entries of A per subrow at most: tile_fraction x cache /
                     average fiber */
    uint64_t *mark, stamp;
    uint64_t *ptr, n; /* task boundaries: ptr[0 .. n] */
    tpl_gamma_counts *g;
    /* partials: cache (rec): the nodes, and each task's leaf node */
    int rec, rc;
    const tessel_allocator *a;
    tnode *node;
    uint64_t nnode, cnode;
    uint32_t *leaf;
} tiler;

static uint32_t new_node(tiler *t, uint32_t parent, int spill, uint64_t nnz)
{
    if (t->nnode == t->cnode) {
        uint64_t c = t->cnode ? 2 * t->cnode : 64;
        tnode *n = c < NIL ? tessel_realloc_array(t->a, t->node, c, sizeof(tnode)) : NULL;
        if (!n) {
            t->rc = TESSEL_ENOMEM;
            return NIL;
        }
        t->node = n;
        t->cnode = c;
    }
    uint32_t id = (uint32_t)t->nnode++;
    tnode *x = &t->node[id];
    x->nnz = nnz;
    x->parent = parent;
    x->first = NIL;
    x->left = 0;
    x->slot = NIL;
    x->spill = spill;
    x->next = NIL;
    if (parent != NIL) {
        x->next = t->node[parent].first;
        t->node[parent].first = id;
        t->node[parent].left++;
    }
    return id;
}

static int over_limit(const tiler *t, uint64_t p0, uint64_t p1)
{
    return p1 - p0 > 1 && (double)(p1 - p0) > t->limit;
}

/* The part of [k0, k0 + w) that column k falls in: the largest c with
 * floor(w c / R) <= k - k0; its range is [k0 + w c / R, k0 + w (c + 1) / R). */
static uint64_t part_of(uint64_t k, uint64_t k0, uint64_t w, uint64_t R)
{
    return ((k - k0 + 1) * R - 1) / w;
}

static void split(tiler *t, uint64_t p0, uint64_t p1, uint64_t k0, uint64_t k1, int spill,
                  uint32_t parent)
{
    if (t->rc)
        return;
    uint64_t u = spill ? gamma_union_size(t->A, t->B, p0, p1, t->mark, &t->stamp) : 0;
    if (spill && !t->rec) {
        t->g->spill_fibers++;
        t->g->spill_nnz = tpl_sat_add(t->g->spill_nnz, u);
    }
    uint32_t id = t->rec ? new_node(t, parent, spill, u) : NIL;
    if (t->rc)
        return;
    const uint32_t *idx = t->A->idx;
    uint64_t R = t->R;
    /* narrow while the first and last entries fall in one part */
    while (over_limit(t, p0, p1) && k1 - k0 > 1) {
        uint64_t w = k1 - k0, c = part_of(idx[p0], k0, w, R);
        if (c != part_of(idx[p1 - 1], k0, w, R))
            break;
        k1 = k0 + w * (c + 1) / R;
        k0 = k0 + w * c / R;
    }
    if (!over_limit(t, p0, p1) || k1 - k0 <= 1) {
        t->ptr[++t->n] = p1; /* a leaf: one task */
        if (t->rec)
            t->leaf[t->n - 1] = id;
        return;
    }
    /* the non-empty parts, in order */
    uint64_t w = k1 - k0;
    for (uint64_t q = p0; q < p1;) {
        uint64_t c = part_of(idx[q], k0, w, R);
        uint64_t c0 = k0 + w * c / R, c1 = k0 + w * (c + 1) / R, q1 = q;
        while (q1 < p1 && idx[q1] < c1)
            q1++;
        split(t, q, q1, c0, c1, 1, id);
        q = q1;
    }
}

/* The tasks: A's rows, or their leaf subrows under selective tiling, as a
 * CSR view over A's entries (ptr owned); the split tree in *st when st. */
int gamma_make_tasks(const tpl_csr_view *A, const tpl_csr_view *B, const tpl_options *o,
                     const tessel_spec_level *lv, uint64_t *mark, const tessel_allocator *a,
                     uint64_t *stamp, tpl_gamma_counts *g, tpl_csr_view *T, split_tree *st)
{
    memset(T, 0, sizeof(*T));
    T->cols = A->cols;
    T->nnz = A->nnz;
    T->idx = A->idx;
    if (!o->tiling) {
        T->rows = A->rows;
        T->ptr = A->ptr;
        return TESSEL_OK;
    }
    uint64_t bound = A->rows + A->nnz + 1; /* a leaf holds one entry at least, or is a row */
    T->own_ptr = tessel_alloc_array(a, bound, sizeof(uint64_t));
    if (!T->own_ptr)
        return TESSEL_ENOMEM;
    double avg = B->rows ? (double)gamma_fiber_bits(B->nnz / B->rows, lv) : 1;
    tiler t = { A, B, o->radix, 0, mark, *stamp, T->own_ptr, 0, g, st != NULL, 0, a, NULL,
                0, 0, NULL };
    t.limit = o->tile_fraction * (double)o->cache_bytes * 8 / (avg > 0 ? avg : 1);
    t.ptr[0] = 0;
    if (st) {
        t.leaf = tessel_alloc_array(a, bound, sizeof(uint32_t));
        if (!t.leaf)
            return TESSEL_ENOMEM;
    }
    for (uint64_t i = 0; i < A->rows && !t.rc; i++) {
        uint64_t before = t.n, nodes = t.nnode, p0 = A->ptr[i], p1 = A->ptr[i + 1];
        split(&t, p0, p1, 0, A->cols, 0, NIL);
        if (t.n - before > 1 || over_limit(&t, p0, p1)) {
            g->tiled_rows++;
            g->subrows += t.n - before;
        }
        if (st && !t.rc && t.n - before == 1) { /* not split: no tree */
            t.nnode = nodes;
            t.leaf[t.n - 1] = NIL;
        }
    }
    if (st) {
        st->node = t.node;
        st->nnode = t.nnode;
        st->leaf = t.leaf;
    }
    if (t.rc)
        return t.rc;
    T->rows = t.n;
    T->ptr = T->own_ptr;
    *stamp = t.stamp; /* mark[] holds stamps up to here */
    return TESSEL_OK;
}

/* The tasks by column: for each k, the tasks holding it, ascending. */
int gamma_tasks_by_column(const tpl_csr_view *T, const tessel_allocator *a, tpl_csr_view *TT)
{
    memset(TT, 0, sizeof(*TT));
    TT->rows = T->cols;
    TT->cols = T->rows;
    TT->nnz = T->nnz;
    TT->own_ptr = tessel_alloc_array(a, T->cols + 1, sizeof(uint64_t));
    TT->own_idx = tessel_alloc_array(a, T->nnz ? T->nnz : 1, sizeof(uint32_t));
    if (!TT->own_ptr || !TT->own_idx)
        return TESSEL_ENOMEM;
    uint64_t *ptr = TT->own_ptr;
    memset(ptr, 0, (T->cols + 1) * sizeof(uint64_t));
    for (uint64_t p = 0; p < T->nnz; p++)
        ptr[T->idx[p] + 1]++;
    for (uint64_t k = 0; k < T->cols; k++)
        ptr[k + 1] += ptr[k];
    for (uint64_t t = 0; t < T->rows; t++)
        for (uint64_t p = T->ptr[t]; p < T->ptr[t + 1]; p++)
            TT->own_idx[ptr[T->idx[p]]++] = (uint32_t)t;
    for (uint64_t k = T->cols; k > 0; k--)
        ptr[k] = ptr[k - 1];
    ptr[0] = 0;
    TT->ptr = TT->own_ptr;
    TT->idx = TT->own_idx;
    return TESSEL_OK;
}

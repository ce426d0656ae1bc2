/* The gamma template's affinity-based row reordering (gamma §4.1,
 * simplified; the model: gamma.c), of A's rows or of the tasks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gamma_internal.h"

/* Affinity-based row reordering (gamma §4.1, simplified): a greedy order
 * in which the next row is the unvisited row sharing the most columns
 * (B rows) with the last w rows scheduled. Candidates are the rows found
 * through the columns of the window's rows (A by columns), each column's
 * row list scanned at most `scan` entries, so the work is
 * O(nnz(A) x w x scan) at worst; ties and an empty candidate set fall back
 * to the next unvisited row in the original order. score[] counts, per
 * candidate row, the columns it shares with the window (updated as rows
 * enter and leave the window). */
static int affinity_order(const tpl_csr_view *A, const tpl_csr_view *AT, uint64_t w,
                          const tessel_allocator *a, uint32_t *order)
{
    const uint64_t scan = 64;
    uint64_t n = A->rows;
    uint32_t *score = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    unsigned char *done = tessel_alloc_array(a, n ? n : 1, 1);
    uint32_t *win = tessel_alloc_array(a, w ? w : 1, sizeof(uint32_t));
    uint32_t *cand = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    unsigned char *incand = tessel_alloc_array(a, n ? n : 1, 1);
    int rc = TESSEL_OK;
    if (!score || !done || !win || !cand || !incand) {
        rc = TESSEL_ENOMEM;
        goto out;
    }
    memset(score, 0, (n ? n : 1) * sizeof(uint32_t));
    memset(done, 0, n ? n : 1);
    memset(incand, 0, n ? n : 1);
    uint64_t ncand = 0, nwin = 0, next_unvisited = 0;
    for (uint64_t pos = 0; pos < n; pos++) {
        /* best candidate: the highest score among those collected */
        uint64_t best = UINT64_MAX;
        uint32_t best_score = 0;
        uint64_t keep = 0;
        for (uint64_t c = 0; c < ncand; c++) {
            uint32_t r = cand[c];
            if (done[r] || score[r] == 0) {
                incand[r] = 0;
                continue;
            }
            cand[keep++] = r;
            if (score[r] > best_score || (score[r] == best_score && r < best))
                best = r, best_score = score[r];
        }
        ncand = keep;
        if (best == UINT64_MAX) {
            while (done[next_unvisited])
                next_unvisited++;
            best = next_unvisited;
        }
        uint32_t row = (uint32_t)best;
        order[pos] = row;
        done[row] = 1;
        /* the row leaving the window, then the one entering it */
        if (w && nwin == w) {
            uint32_t old = win[pos % w];
            for (uint64_t p = A->ptr[old]; p < A->ptr[old + 1]; p++) {
                uint64_t k = A->idx[p];
                uint64_t end =
                    AT->ptr[k + 1] - AT->ptr[k] > scan ? AT->ptr[k] + scan : AT->ptr[k + 1];
                for (uint64_t q = AT->ptr[k]; q < end; q++)
                    if (score[AT->idx[q]])
                        score[AT->idx[q]]--;
            }
        } else if (w) {
            nwin++;
        }
        if (!w)
            continue;
        win[pos % w] = row;
        for (uint64_t p = A->ptr[row]; p < A->ptr[row + 1]; p++) {
            uint64_t k = A->idx[p];
            uint64_t end = AT->ptr[k + 1] - AT->ptr[k] > scan ? AT->ptr[k] + scan : AT->ptr[k + 1];
            for (uint64_t q = AT->ptr[k]; q < end; q++) {
                uint32_t r = AT->idx[q];
                if (done[r])
                    continue;
                score[r]++;
                if (!incand[r]) {
                    incand[r] = 1;
                    cand[ncand++] = r;
                }
            }
        }
    }
out:
    tessel_dealloc(a, score);
    tessel_dealloc(a, done);
    tessel_dealloc(a, win);
    tessel_dealloc(a, cand);
    tessel_dealloc(a, incand);
    return rc;
}

/* Affinity order of the tasks; the window: as many tasks as the cache
 * holds fibers on average, divided by the average task length. */
int gamma_task_order(const tpl_csr_view *T, const tpl_csr_view *B, const tpl_options *o,
                     const tessel_spec_level *lv, const tessel_allocator *a, uint32_t **order)
{
    uint64_t K = B->rows;
    double avg = K ? (double)gamma_fiber_bits(B->nnz / K, lv) : 1;
    double fit = avg > 0 ? (double)tpl_sat_mul(o->cache_bytes, 8) / avg : 0;
    uint64_t w = fit >= 1024 ? 1024 : (uint64_t)fit;
    if (w < 1)
        w = 1;
    uint64_t per_row = T->rows ? (T->nnz + T->rows - 1) / T->rows : 1;
    w = per_row ? w / per_row : w;
    if (w < 1)
        w = 1;
    tpl_csr_view TT;
    int rc = gamma_tasks_by_column(T, a, &TT);
    if (!rc) {
        *order = tessel_alloc_array(a, T->rows, sizeof(uint32_t));
        rc = *order ? affinity_order(T, &TT, w, a, *order) : TESSEL_ENOMEM;
    }
    tpl_csr_view_free(a, &TT);
    return rc;
}

/* `partials: cache`: one task's merge tree in the scheduler's order (gamma
 * §3.3: higher-level tasks first, so a partial fiber is consumed as soon as
 * its siblings are done): a post-order walk of the balanced tree whose
 * level-L nodes merge R^L consecutive fibers (the groups of gamma_merge_rounds).
 * A node at level 1 <= L < D (D the root's level) produces a partial fiber
 * after its children; the root's output leaves the PE. */

/* `subrows: together`: the task order `order` (T's rows, an affinity
 * order of the subrows) rewritten so that a tiled row's subrows run one
 * after another, in their coordinate order, where the affinity order first
 * reaches one of them. Selective tiling's subrows then finish close in
 * time and their partial fibers are merged before B's traffic evicts them
 * (gamma §4.2 expects scattered ones to be "likely spilled"). The tasks of
 * row i are consecutive in T: the first is the row's (an empty or unsplit
 * row has exactly one), the others start inside the row (split leaves are
 * non-empty). O(T's rows + A's rows). */
int gamma_subrows_together(const tpl_csr_view *A, const tpl_csr_view *T,
                           const tessel_allocator *a, uint32_t *order)
{
    uint64_t n = T->rows, R = A->rows;
    uint32_t *row = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    uint64_t *first = tessel_alloc_array(a, R + 1, sizeof(uint64_t));
    unsigned char *done = tessel_alloc_array(a, R ? R : 1, 1);
    uint32_t *out = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    int rc = TESSEL_OK;
    if (!row || !first || !done || !out) {
        rc = TESSEL_ENOMEM;
        goto out;
    }
    uint64_t t = 0;
    for (uint64_t i = 0; i < R; i++) {
        first[i] = t;
        if (t < n)
            row[t++] = (uint32_t)i;
        while (t < n && T->ptr[t] < A->ptr[i + 1])
            row[t++] = (uint32_t)i;
    }
    first[R] = n;
    if (t != n) { /* T is not a split of A's rows */
        rc = TESSEL_EINVAL;
        goto out;
    }
    memset(done, 0, R ? R : 1);
    uint64_t k = 0;
    for (uint64_t p = 0; p < n; p++) {
        uint32_t i = row[order[p]];
        if (done[i])
            continue;
        done[i] = 1;
        for (uint64_t q = first[i]; q < first[i + 1]; q++)
            out[k++] = (uint32_t)q;
    }
    memcpy(order, out, n * sizeof(uint32_t));
out:
    tessel_dealloc(a, row);
    tessel_dealloc(a, first);
    tessel_dealloc(a, done);
    tessel_dealloc(a, out);
    return rc;
}

/* Occupancy statistics of a tensor in mergeable parts: tile occupancies
 * and row (first-mode) slices as counts per occupancy (occ_acc.c), every
 * other mode's slices as one counter each, so parts over disjoint rows add
 * up exactly. */
#include <stdio.h>
#include <string.h>

#include "tessel/stats.h"

int tessel_stats_part_create(unsigned order, const uint64_t *dims, const uint64_t *tile,
                             const tessel_allocator *a, tessel_stats_part **out,
                             tessel_diag *diag)
{
    *out = NULL;
    uint64_t all;
    if (order < 1 || order > TESSEL_MAX_ORDER)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "order",
                               "%u modes: a tensor has 1 to %u", order, TESSEL_MAX_ORDER);
    if (tessel_tile_count(order, dims, tile, &all))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "tile",
                               "tile extents must be >= 1");
    tessel_stats_part *p = tessel_alloc(a, sizeof(*p));
    if (!p)
        return tessel_diag_oom(diag, NULL, "creating statistics", sizeof(*p));
    memset(p, 0, sizeof(*p));
    p->alloc = a;
    p->order = order;
    memcpy(p->dims, dims, order * sizeof(uint64_t));
    memcpy(p->tile, tile, order * sizeof(uint64_t));
    p->shard = p->shards = 1;
    p->row_end = dims[0];
    int rc = tessel_occupancy_acc_create(a, &p->tiles, diag);
    if (!rc)
        rc = tessel_occupancy_acc_create(a, &p->rows, diag);
    for (unsigned m = 1; m < order && !rc; m++) {
        uint64_t n = dims[m] ? dims[m] : 1;
        p->mode_count[m] = tessel_alloc_array(a, n, sizeof(uint64_t));
        if (!p->mode_count[m])
            rc = tessel_diag_oom(diag, NULL, "counting the entries of every slice",
                                 (size_t)(n * sizeof(uint64_t)));
        else
            memset(p->mode_count[m], 0, (size_t)(n * sizeof(uint64_t)));
    }
    if (rc) {
        tessel_stats_part_free(&p);
        return rc;
    }
    *out = p;
    return TESSEL_OK;
}

void tessel_stats_part_free(tessel_stats_part **pp)
{
    if (!pp || !*pp)
        return;
    tessel_stats_part *p = *pp;
    *pp = NULL;
    tessel_occupancy_acc_free(&p->tiles);
    tessel_occupancy_acc_free(&p->rows);
    for (unsigned m = 1; m < TESSEL_MAX_ORDER; m++)
        tessel_dealloc(p->alloc, p->mode_count[m]);
    tessel_dealloc(p->alloc, p);
}

int tessel_stats_part_add(tessel_stats_part *p, const tessel_tensor *m, uint64_t row_begin,
                          uint64_t row_end, tessel_diag *diag)
{
    if (m->order != p->order || memcmp(m->dims, p->dims, p->order * sizeof(uint64_t)) ||
        row_begin > row_end || row_end > m->dims[0])
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "rows",
                               "a block must be rows of a tensor of the part's dims");
    int rc = tessel_tile_occupancy_add(m, p->tile, p->tiles, diag);
    for (uint64_t r = row_begin; r < row_end && !rc; r++)
        rc = tessel_occupancy_acc_add(p->rows, m->ptr[r + 1] - m->ptr[r], 1, diag);
    if (rc)
        return rc;
    for (unsigned d = 1; d < p->order; d++) {
        const uint32_t *slice = m->idx[d];
        uint64_t *count = p->mode_count[d];
        for (uint64_t k = m->ptr[row_begin]; k < m->ptr[row_end]; k++)
            count[slice[k]]++;
    }
    p->nnz += m->ptr[row_end] - m->ptr[row_begin];
    return TESSEL_OK;
}

int tessel_stats_part_merge(tessel_stats_part *p, const tessel_stats_part *q, tessel_diag *diag)
{
    if (p->order != q->order || memcmp(p->dims, q->dims, p->order * sizeof(uint64_t)) ||
        memcmp(p->tile, q->tile, p->order * sizeof(uint64_t)) || strcmp(p->field, q->field) ||
        strcmp(p->symmetry, q->symmetry))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "part",
                               "parts of different matrices or tile shapes cannot be merged");
    int rc = tessel_occupancy_acc_merge(p->tiles, q->tiles, diag);
    if (!rc)
        rc = tessel_occupancy_acc_merge(p->rows, q->rows, diag);
    if (rc)
        return rc;
    for (unsigned d = 1; d < p->order; d++)
        for (uint64_t c = 0; c < p->dims[d]; c++)
            p->mode_count[d][c] += q->mode_count[d][c];
    p->nnz += q->nnz;
    return TESSEL_OK;
}

int tessel_stats_part_summary(tessel_stats_part *p, tessel_occupancy **tiles,
                              tessel_occupancy **modes, tessel_diag *diag)
{
    *tiles = NULL;
    for (unsigned m = 0; m < p->order; m++)
        modes[m] = NULL;
    uint64_t all;
    int rc = tessel_tile_count(p->order, p->dims, p->tile, &all);
    if (rc)
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, "tile",
                               "the tile grid has more than 2^64 tiles; use larger tiles");
    rc = tessel_occupancy_acc_finish(p->tiles, all, tiles, diag);
    if (!rc)
        rc = tessel_occupancy_acc_finish(p->rows, p->dims[0], &modes[0], diag);
    for (unsigned m = 1; m < p->order && !rc; m++) {
        tessel_occupancy_acc *acc = NULL;
        rc = tessel_occupancy_acc_create(p->alloc, &acc, diag);
        for (uint64_t c = 0; c < p->dims[m] && !rc; c++)
            rc = tessel_occupancy_acc_add(acc, p->mode_count[m][c], 1, diag);
        if (!rc)
            rc = tessel_occupancy_acc_finish(acc, p->dims[m], &modes[m], diag);
        tessel_occupancy_acc_free(&acc);
    }
    if (rc) {
        tessel_occupancy_free(tiles);
        for (unsigned m = 0; m < p->order; m++)
            tessel_occupancy_free(&modes[m]);
    }
    return rc;
}

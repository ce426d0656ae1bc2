/* Occupancy statistics of a matrix in mergeable parts: tile occupancies
 * and row slices as counts per occupancy (occ_acc.c), columns as one
 * counter each, so parts over disjoint rows add up exactly. */
#include <stdio.h>
#include <string.h>

#include "tessel/stats.h"

int tessel_stats_part_create(const uint64_t *dims, const uint64_t *tile, const tessel_allocator *a,
                             tessel_stats_part **out, tessel_diag *diag)
{
    *out = NULL;
    uint64_t all;
    if (tessel_tile_count(2, dims, tile, &all))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "tile",
                               "tile extents must be >= 1");
    tessel_stats_part *p = tessel_alloc(a, sizeof(*p));
    if (!p)
        return tessel_diag_oom(diag, NULL, "creating statistics", sizeof(*p));
    memset(p, 0, sizeof(*p));
    p->alloc = a;
    memcpy(p->dims, dims, sizeof(p->dims));
    memcpy(p->tile, tile, sizeof(p->tile));
    p->shard = p->shards = 1;
    p->row_end = dims[0];
    int rc = tessel_occupancy_acc_create(a, &p->tiles, diag);
    if (!rc)
        rc = tessel_occupancy_acc_create(a, &p->rows, diag);
    if (!rc) {
        p->col_count = tessel_alloc_array(a, dims[1] ? dims[1] : 1, sizeof(uint64_t));
        if (!p->col_count)
            rc = tessel_diag_oom(diag, NULL, "counting the entries of every column",
                                 (size_t)(dims[1] * sizeof(uint64_t)));
        else
            memset(p->col_count, 0, (size_t)((dims[1] ? dims[1] : 1) * sizeof(uint64_t)));
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
    tessel_dealloc(p->alloc, p->col_count);
    tessel_dealloc(p->alloc, p);
}

int tessel_stats_part_add(tessel_stats_part *p, const tessel_tensor *m, uint64_t row_begin,
                          uint64_t row_end, tessel_diag *diag)
{
    if (m->order != 2 || m->dims[0] != p->dims[0] || m->dims[1] != p->dims[1] ||
        row_begin > row_end || row_end > m->dims[0])
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "rows",
                               "a block must be rows of a matrix of the part's dims");
    int rc = tessel_tile_occupancy_add(m, p->tile, p->tiles, diag);
    for (uint64_t r = row_begin; r < row_end && !rc; r++)
        rc = tessel_occupancy_acc_add(p->rows, m->ptr[r + 1] - m->ptr[r], 1, diag);
    if (rc)
        return rc;
    const uint32_t *col = m->idx[1];
    for (uint64_t k = m->ptr[row_begin]; k < m->ptr[row_end]; k++)
        p->col_count[col[k]]++;
    p->nnz += m->ptr[row_end] - m->ptr[row_begin];
    return TESSEL_OK;
}

int tessel_stats_part_merge(tessel_stats_part *p, const tessel_stats_part *q, tessel_diag *diag)
{
    if (memcmp(p->dims, q->dims, sizeof(p->dims)) || memcmp(p->tile, q->tile, sizeof(p->tile)) ||
        strcmp(p->field, q->field) || strcmp(p->symmetry, q->symmetry))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "part",
                               "parts of different matrices or tile shapes cannot be merged");
    int rc = tessel_occupancy_acc_merge(p->tiles, q->tiles, diag);
    if (!rc)
        rc = tessel_occupancy_acc_merge(p->rows, q->rows, diag);
    if (rc)
        return rc;
    for (uint64_t c = 0; c < p->dims[1]; c++)
        p->col_count[c] += q->col_count[c];
    p->nnz += q->nnz;
    return TESSEL_OK;
}

int tessel_stats_part_summary(tessel_stats_part *p, tessel_occupancy **tiles,
                              tessel_occupancy **rows, tessel_occupancy **cols, tessel_diag *diag)
{
    *tiles = *rows = *cols = NULL;
    uint64_t all;
    int rc = tessel_tile_count(2, p->dims, p->tile, &all);
    if (rc)
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, "tile",
                               "the tile grid has more than 2^64 tiles; use larger tiles");
    tessel_occupancy_acc *colacc = NULL;
    rc = tessel_occupancy_acc_finish(p->tiles, all, tiles, diag);
    if (!rc)
        rc = tessel_occupancy_acc_finish(p->rows, p->dims[0], rows, diag);
    if (!rc)
        rc = tessel_occupancy_acc_create(p->alloc, &colacc, diag);
    for (uint64_t c = 0; c < p->dims[1] && !rc; c++)
        rc = tessel_occupancy_acc_add(colacc, p->col_count[c], 1, diag);
    if (!rc)
        rc = tessel_occupancy_acc_finish(colacc, p->dims[1], cols, diag);
    tessel_occupancy_acc_free(&colacc);
    if (rc) {
        tessel_occupancy_free(tiles);
        tessel_occupancy_free(rows);
        tessel_occupancy_free(cols);
    }
    return rc;
}

/* Streamed statistics: a Matrix Market file summarised in row blocks
 * without ever holding the whole matrix. A counting pass gives every row's
 * entry count (an upper bound: duplicates counted each time); blocks of
 * whole rows of tiles are then cut at `block_entries` and each is read by
 * one more pass that keeps only its rows (tessel_mtx_read_rows), so a
 * block's rows are exactly the whole matrix's rows. */
#include <stdio.h>
#include <string.h>

#include "tessel/stats.h"

/* The rows of shard k (1-based) of n: rows of tiles split evenly. */
static void shard_rows(const uint64_t *dims, const uint64_t *tile, uint64_t k, uint64_t n,
                       uint64_t *begin, uint64_t *end)
{
    uint64_t edge = tile[0] < dims[0] ? tile[0] : (dims[0] ? dims[0] : 1);
    uint64_t groups = dims[0] ? (dims[0] - 1) / edge + 1 : 0;
    /* groups * k fits: groups < 2^32 and k <= n, which the caller bounds */
    uint64_t g0 = groups * (k - 1) / n, g1 = groups * k / n;
    *begin = g0 * edge < dims[0] ? g0 * edge : dims[0];
    *end = g1 * edge < dims[0] ? g1 * edge : dims[0];
}

/* Reads rows [r0, r1) (reserve: their counted entries) and adds them to p. */
static int add_block(tessel_stats_part *p, const char *path, const tessel_load_options *opt,
                     uint64_t r0, uint64_t r1, uint64_t reserve, const tessel_allocator *a,
                     tessel_diag *diag)
{
    tessel_tensor *m = NULL;
    int rc = tessel_mtx_read_rows(path, opt, r0, r1, reserve, a, &m, diag);
    if (!rc)
        rc = tessel_stats_part_add(p, m, r0, r1, diag);
    if (!rc && !p->field[0]) {
        snprintf(p->field, sizeof(p->field), "%s", m->field);
        snprintf(p->symmetry, sizeof(p->symmetry), "%s", m->symmetry);
    }
    tessel_tensor_free(&m);
    return rc;
}

int tessel_stats_stream(const char *path, const tessel_load_options *opt, const uint64_t *tile,
                        uint64_t shard, uint64_t shards, uint64_t block_entries,
                        const tessel_allocator *a, tessel_stats_part **out, tessel_diag *diag)
{
    *out = NULL;
    if (shards == 0 || shard == 0 || shard > shards || shards > UINT32_MAX)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "shard",
                               "shard %llu of %llu: shards are numbered 1..N, N < 2^32",
                               (unsigned long long)shard, (unsigned long long)shards);
    if (tile[0] == 0 || tile[1] == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "tile",
                               "tile extents must be >= 1");
    uint64_t dims[2], *counts = NULL;
    int rc = tessel_mtx_row_counts(path, opt, a, dims, &counts, diag);
    if (rc)
        return rc;
    tessel_stats_part *p = NULL;
    rc = tessel_stats_part_create(dims, tile, a, &p, diag);
    if (!rc) {
        p->shard = shard;
        p->shards = shards;
        shard_rows(dims, tile, shard, shards, &p->row_begin, &p->row_end);
    }
    uint64_t edge = tile[0] < dims[0] ? tile[0] : (dims[0] ? dims[0] : 1);
    uint64_t r0 = rc ? 0 : p->row_begin, blocks = 0;
    while (!rc && r0 < p->row_end) {
        /* Whole rows of tiles while they fit, at least one. */
        uint64_t r1 = r0, entries = 0;
        while (r1 < p->row_end) {
            uint64_t next = r1 + edge < p->row_end ? r1 + edge : p->row_end, add = 0;
            for (uint64_t r = r1; r < next; r++)
                add += counts[r];
            if (r1 > r0 && entries + add > block_entries)
                break;
            entries += add;
            r1 = next;
        }
        rc = add_block(p, path, opt, r0, r1, entries, a, diag);
        blocks++;
        r0 = r1;
    }
    /* A shard without rows still reports the file's field and symmetry. */
    if (!rc && blocks == 0)
        rc = add_block(p, path, opt, 0, 0, 0, a, diag);
    tessel_dealloc(a, counts);
    if (rc) {
        tessel_stats_part_free(&p);
        if (diag && !diag->file[0])
            snprintf(diag->file, sizeof(diag->file), "%s", path);
        return rc;
    }
    *out = p;
    return TESSEL_OK;
}

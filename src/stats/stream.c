/* Streamed statistics: a Matrix Market file, a .tns file of any order or a
 * 2-mode .tsl cache summarised in row (first-mode slice) blocks without
 * ever holding the whole tensor. A counting pass gives every row's entry count (an upper bound:
 * duplicates counted each time); blocks of whole rows of tiles are then cut
 * at `block_entries` and each is read by one more pass that keeps only its
 * rows (tessel_mtx_read_rows, tessel_tns_read_rows, or for a cache
 * tessel_cache_read_rows, which reads just those rows' slice), so a block's
 * rows are exactly the whole matrix's rows. */
#include <stdio.h>
#include <string.h>

#include "spill.h"
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
    int kind = tessel_file_kind_of(path), rc;
    if (kind == TESSEL_FILE_CACHE)
        rc = tessel_cache_read_rows(path, r0, r1, a, &m, diag);
    else if (kind == TESSEL_FILE_TNS)
        rc = tessel_tns_read_rows(path, opt, r0, r1, reserve, a, &m, diag);
    else
        rc = tessel_mtx_read_rows(path, opt, r0, r1, reserve, a, &m, diag);
    if (!rc && (m->order != p->order || memcmp(m->dims, p->dims, p->order * sizeof(uint64_t))))
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL,
                             "the file changed while it was streamed (%u modes, extents %llu x "
                             "%llu..., then %u modes, %llu x %llu...)", p->order,
                             (unsigned long long)p->dims[0], (unsigned long long)p->dims[1],
                             m->order, (unsigned long long)m->dims[0],
                             (unsigned long long)m->dims[1]);
    if (!rc)
        rc = tessel_stats_part_add(p, m, r0, r1, diag);
    if (!rc && !p->field[0]) {
        snprintf(p->field, sizeof(p->field), "%s", m->field);
        snprintf(p->symmetry, sizeof(p->symmetry), "%s", m->symmetry);
    }
    tessel_tensor_free(&m);
    return rc;
}

/* The block from row r0: whole rows of tiles while they fit in
 * block_entries counted entries, at least one; its end and entries. */
static uint64_t cut_block(const uint64_t *counts, uint64_t r0, uint64_t end, uint64_t edge,
                          uint64_t block_entries, uint64_t *entries)
{
    uint64_t r1 = r0;
    *entries = 0;
    while (r1 < end) {
        uint64_t next = r1 + edge < end ? r1 + edge : end, add = 0;
        for (uint64_t r = r1; r < next; r++)
            add += counts[r];
        if (r1 > r0 && *entries + add > block_entries)
            break;
        *entries += add;
        r1 = next;
    }
    return r1;
}

/* Blocks read per text pass through a spill file: as many buffers as one
 * block's staging would take (16 B per entry), at least 8. */
static unsigned spill_group(uint64_t block_entries)
{
    uint64_t g = block_entries / (SPILL_BUFFER / 16u);
    return g < 8 ? 8u : g > 65536 ? 65536u : (unsigned)g;
}

/* The blocks of p's rows: one pass each, or with spill_dir (2-mode text
 * input: the spill file holds matrix entries) one pass per spill_group()
 * blocks. */
static int add_blocks(tessel_stats_part *p, const char *path, const tessel_load_options *opt,
                      const uint64_t *counts, uint64_t block_entries, const char *spill_dir,
                      const tessel_allocator *a, tessel_diag *diag)
{
    uint64_t edge = p->tile[0] < p->dims[0] ? p->tile[0] : (p->dims[0] ? p->dims[0] : 1);
    int spill = spill_dir && p->order == 2 && tessel_file_kind_of(path) != TESSEL_FILE_CACHE;
    unsigned group = spill ? spill_group(block_entries) : 1, n = 0;
    uint64_t *bounds = tessel_alloc_array(a, (uint64_t)group + 1, sizeof(uint64_t));
    uint64_t *room = tessel_alloc_array(a, group, sizeof(uint64_t));
    int rc = bounds && room ? TESSEL_OK
                            : tessel_diag_oom(diag, path, "cutting the blocks",
                                              ((size_t)group * 2 + 1) * sizeof(uint64_t));
    uint64_t r0 = p->row_begin;
    if (!rc)
        bounds[0] = r0;
    while (!rc && r0 < p->row_end) {
        r0 = cut_block(counts, r0, p->row_end, edge, block_entries, &room[n]);
        bounds[++n] = r0;
        if (n < group && r0 < p->row_end)
            continue;
        rc = n > 1 ? stream_spill_blocks(p, path, opt, spill_dir, bounds, room, n, a, diag)
                   : add_block(p, path, opt, bounds[0], bounds[1], room[0], a, diag);
        bounds[0] = r0;
        n = 0;
    }
    /* A shard without rows still reports the file's field and symmetry. */
    if (!rc && p->row_begin == p->row_end)
        rc = add_block(p, path, opt, 0, 0, 0, a, diag);
    tessel_dealloc(a, bounds);
    tessel_dealloc(a, room);
    return rc;
}

int tessel_stats_stream(const char *path, const tessel_load_options *opt, const uint64_t *tile,
                        uint64_t shard, uint64_t shards, uint64_t block_entries,
                        const char *spill_dir, const tessel_allocator *a,
                        tessel_stats_part **out, tessel_diag *diag)
{
    *out = NULL;
    if (shards == 0 || shard == 0 || shard > shards || shards > UINT32_MAX)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "shard",
                               "shard %llu of %llu: shards are numbered 1..N, N < 2^32",
                               (unsigned long long)shard, (unsigned long long)shards);
    if (tile[0] == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "tile",
                               "tile extents must be >= 1");
    uint64_t dims[TESSEL_MAX_ORDER] = { 0 }, *counts = NULL;
    unsigned order = 2;
    int kind = tessel_file_kind_of(path), rc;
    if (kind == TESSEL_FILE_CACHE)
        rc = tessel_cache_row_counts(path, a, dims, &counts, diag);
    else if (kind == TESSEL_FILE_TNS)
        rc = tessel_tns_row_counts(path, opt, a, &order, dims, &counts, diag);
    else
        rc = tessel_mtx_row_counts(path, opt, a, dims, &counts, diag);
    if (rc)
        return rc;
    tessel_stats_part *p = NULL;
    rc = tessel_stats_part_create(order, dims, tile, a, &p, diag);
    if (!rc) {
        p->shard = shard;
        p->shards = shards;
        shard_rows(dims, tile, shard, shards, &p->row_begin, &p->row_end);
        rc = add_blocks(p, path, opt, counts, block_entries, spill_dir, a, diag);
    }
    tessel_dealloc(a, counts);
    if (rc) {
        tessel_stats_part_free(&p);
        if (diag && !diag->file[0])
            tessel_diag_set_file(diag, path);
        return rc;
    }
    *out = p;
    return TESSEL_OK;
}

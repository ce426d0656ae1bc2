/* tessel — tile statistics: occupancy grids, quantiles, histograms and
 * format footprints.  Module `stats`: depends on `tensor` and `base`. */
#ifndef TESSEL_STATS_H
#define TESSEL_STATS_H

#include <stdint.h>

#include "tessel/base.h"
#include "tessel/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The non-empty tiles of a coordinate-space tiling.  Tile t covers, in
 * mode m, coordinates [c_m * tile[m], (c_m + 1) * tile[m]) cut at dims[m]
 * (edge tiles count as tiles).  Only non-empty tiles are stored, sorted
 * lexicographically by tile coordinate: the tiles with c_0 = r (row of
 * tiles r) are [row[r], row[r + 1]); c_1..c_{order-1} are packed in the
 * tile's key in mixed radix of extent[1..] (mode order-1 least
 * significant).  At most 8 B per non-empty tile plus 8 B per row of tiles
 * (issue 27 item 2): keys and counts are 32-bit (key32, count32); key64
 * replaces key32 when the key space (the product of extent[1..]) exceeds
 * 2^32, and count64 replaces count32 when a tile holds 2^32 or more
 * nonzeros.  Exactly one of each pair is set (both NULL without tiles).
 * Read tiles through the accessors below, never the arrays. */
typedef struct tessel_tile_grid {
    const tessel_allocator *alloc;
    unsigned order;
    uint64_t dims[TESSEL_MAX_ORDER];
    uint64_t tile[TESSEL_MAX_ORDER];
    uint64_t extent[TESSEL_MAX_ORDER]; /* ceil(dims / tile) */
    uint64_t nnz;
    uint64_t nonempty;
    uint64_t *row; /* extent[0] + 1 offsets */
    uint32_t *key32;
    uint64_t *key64;
    uint32_t *count32;
    uint64_t *count64;
} tessel_tile_grid;

/* The first tile of row of tiles r (r <= extent[0]; r = extent[0] gives
 * nonempty): row r's tiles are [row_begin(r), row_begin(r + 1)). */
static inline uint64_t tessel_tile_grid_row_begin(const tessel_tile_grid *g, uint64_t r)
{
    return g->row[r];
}

/* The packed coordinates c_1..c_{order-1} of non-empty tile i. */
static inline uint64_t tessel_tile_grid_key(const tessel_tile_grid *g, uint64_t i)
{
    return g->key32 ? g->key32[i] : g->key64[i];
}

/* The nonzeros of non-empty tile i. */
static inline uint64_t tessel_tile_grid_count(const tessel_tile_grid *g, uint64_t i)
{
    return g->count32 ? g->count32[i] : g->count64[i];
}

/* c_0 of non-empty tile i, searching forward from row of tiles r (at most
 * the answer): amortised O(1) per tile over an ascending scan. */
static inline uint64_t tessel_tile_grid_group_from(const tessel_tile_grid *g, uint64_t i,
                                                   uint64_t r)
{
    while (g->row[r + 1] <= i)
        r++;
    return r;
}

/* c_0 of non-empty tile i (i < nonempty): a binary search over the rows of
 * tiles, O(log extent[0]); scans use tessel_tile_grid_group_from. */
static inline uint64_t tessel_tile_grid_group(const tessel_tile_grid *g, uint64_t i)
{
    uint64_t lo = 0, hi = g->extent[0]; /* the answer r has row[r] <= i < row[r + 1] */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->row[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A grid from per-tile arrays (c_0, key, count of each non-empty tile, in
 * the grid's order; the .tstat version 1 and .tsd layouts): checked sorted,
 * unique, inside the extents, counts >= 1 summing to nnz (TESSEL_ECORRUPT
 * naming the field "grid" otherwise). dims/tile as tessel_tile_grid_build. */
int tessel_tile_grid_assemble(unsigned order, const uint64_t *dims, const uint64_t *tile,
                              uint64_t nnz, uint64_t n, const uint64_t *group,
                              const uint64_t *key, const uint64_t *count,
                              const tessel_allocator *a, tessel_tile_grid **out,
                              tessel_diag *diag);

/* One pass over t: O(nnz + non-empty tiles) time, memory proportional to
 * the non-empty tiles. tile has t->order entries, each >= 1 (a tile larger
 * than a mode is cut to the mode). */
int tessel_tile_grid_build(const tessel_tensor *t, const uint64_t *tile,
                           const tessel_allocator *a, tessel_tile_grid **out, tessel_diag *diag);

/* The grid of a tile shape that is a multiple of base's tile shape in every
 * mode, from base's counts alone (no pass over the tensor). */
int tessel_tile_grid_derive(const tessel_tile_grid *base, const uint64_t *tile,
                            tessel_tile_grid **out, tessel_diag *diag);

void tessel_tile_grid_free(tessel_tile_grid **g);

/* Tile coordinates of non-empty tile i. */
void tessel_tile_grid_coords(const tessel_tile_grid *g, uint64_t i, uint64_t *coords);

/* Total number of tiles (product of extents); TESSEL_ERANGE if > 2^64-1. */
int tessel_tile_grid_tiles(const tessel_tile_grid *g, uint64_t *tiles);

/* Non-empty rows per tile of a matrix's grid (src/stats/tilerows.c): per
 * non-empty tile i (in the grid's order) tessel_tile_rows_tile(tr, i),
 * the rows holding a nonzero in it; strip[r] the non-empty rows of row of
 * tiles r; and tessel_tile_rows_node(tr, i), when tile i + 1 is in the
 * same row of tiles, the rows of the smallest aligned block of 2^l tiles
 * of that row of tiles holding tiles i and i + 1 (the node between them of
 * the binary trie over the row's tile columns; 0 for a row's last tile).
 * The per-tile counts are at most the tile's height, and take `width`
 * bytes each (rows, node): 1 when it is at most 255, 2 when at most
 * 65535, else 4. 2 x width B per non-empty tile and 4 B per row of
 * tiles. */
typedef struct tessel_tile_rows {
    const tessel_allocator *alloc;
    uint64_t n, nstrips; /* the grid's non-empty tiles, its rows of tiles */
    unsigned width;      /* bytes per count in rows and node: 1, 2 or 4 */
    void *rows, *node;
    uint32_t *strip;
} tessel_tile_rows;

/* Count i of an array of counts `width` bytes each. */
static inline uint32_t tessel_tile_rows_at(const void *v, unsigned width, uint64_t i)
{
    return width == 1   ? ((const uint8_t *)v)[i]
           : width == 2 ? ((const uint16_t *)v)[i]
                        : ((const uint32_t *)v)[i];
}
static inline uint32_t tessel_tile_rows_tile(const tessel_tile_rows *tr, uint64_t i)
{
    return tessel_tile_rows_at(tr->rows, tr->width, i);
}
static inline uint32_t tessel_tile_rows_node(const tessel_tile_rows *tr, uint64_t i)
{
    return tessel_tile_rows_at(tr->node, tr->width, i);
}

/* t a matrix (order 2) and g its grid (tessel_tile_grid_build of t);
 * TESSEL_EINVAL otherwise. One walk over the entries. */
int tessel_tile_grid_rows(const tessel_tensor *t, const tessel_tile_grid *g,
                          const tessel_allocator *a, tessel_tile_rows **out, tessel_diag *diag);
/* The same statistic for t's columns, indexed by g's own tiles: per tile
 * i of g its non-empty columns, per column of tiles c (strip[c],
 * g->extent[1] of them) its non-empty columns, and per tile i the node
 * between it and the next non-empty tile of its column of tiles (the
 * smallest aligned block of 2^l rows of tiles of that column holding
 * both; 0 for a column's last tile): the rows statistic of t's transpose
 * on the transposed grid, each entry stored at the index its tile has in
 * g. One walk over the entries (no transpose), with a scratch of 4 B per
 * column of t, 24 B per column of tiles and 8 B per column of tiles and
 * trie level. */
int tessel_tile_grid_cols(const tessel_tensor *t, const tessel_tile_grid *g,
                          const tessel_allocator *a, tessel_tile_rows **out, tessel_diag *diag);
void tessel_tile_rows_free(tessel_tile_rows **rows);
/* An empty statistic of n tiles and nstrips strips for tiles `edge` tall
 * (its counts' width the fewest bytes that hold edge), its arrays zeroed;
 * NULL: out of memory. */
tessel_tile_rows *tessel_tile_rows_new(const tessel_allocator *a, uint64_t n, uint64_t nstrips,
                                       uint64_t edge);
/* Stores v as tile i's count (node 0) or node i's (node 1). */
static inline void tessel_tile_rows_set(tessel_tile_rows *tr, int node, uint64_t i, uint32_t v)
{
    void *a = node ? tr->node : tr->rows;
    if (tr->width == 1)
        ((uint8_t *)a)[i] = (uint8_t)v;
    else if (tr->width == 2)
        ((uint16_t *)a)[i] = (uint16_t)v;
    else
        ((uint32_t *)a)[i] = v;
}
/* The level of the node between tile columns c and d (c != d): the
 * smallest l with c >> l == d >> l. */
static inline unsigned tessel_tile_rows_level(uint64_t c, uint64_t d)
{
    uint64_t x = c ^ d;
    return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}
/* Bytes held by the arrays of tr. */
uint64_t tessel_tile_rows_bytes(const tessel_tile_rows *tr);

/* ------------------------------------------------------------------ */
/* Occupancy summary over the non-empty tiles of a grid. */
typedef struct tessel_occupancy {
    const tessel_allocator *alloc;
    uint64_t tiles;    /* all tiles, including empty ones */
    uint64_t nonempty; /* tiles holding at least one nonzero */
    uint64_t nnz;
    uint64_t min, max; /* over non-empty tiles (0 if none) */
    double mean;       /* over non-empty tiles */
    double stddev;     /* population standard deviation over non-empty tiles */
    /* The distinct occupancies of the non-empty tiles, ascending (value[i]),
     * and how many tiles hold at most value[i] (upto[i], cumulative):
     * memory follows the distinct values, never the tiles. */
    uint64_t ndistinct;
    uint64_t *value;
    uint64_t *upto;
} tessel_occupancy;

int tessel_occupancy_create(const tessel_tile_grid *g, tessel_occupancy **out, tessel_diag *diag);
void tessel_occupancy_free(tessel_occupancy **o);

/* Occupancies gathered tile by tile in any order and merged exactly
 * (src/stats/occ_acc.c): a count of tiles per occupancy, so a summary of a
 * tensor read in row blocks or shards equals that of the whole tensor bit
 * for bit (the summary depends only on the multiset of occupancies). */
typedef struct tessel_occupancy_acc tessel_occupancy_acc;

int tessel_occupancy_acc_create(const tessel_allocator *a, tessel_occupancy_acc **out,
                                tessel_diag *diag);
void tessel_occupancy_acc_free(tessel_occupancy_acc **acc);
/* `tiles` more tiles holding `occupancy` (>= 1) nonzeros each. */
int tessel_occupancy_acc_add(tessel_occupancy_acc *acc, uint64_t occupancy, uint64_t tiles,
                             tessel_diag *diag);
int tessel_occupancy_acc_merge(tessel_occupancy_acc *acc, const tessel_occupancy_acc *other,
                               tessel_diag *diag);
/* The distinct occupancies (ascending) and their tile counts: *n pairs in
 * arrays from the accumulator's allocator (NULL when n is 0). */
int tessel_occupancy_acc_pairs(tessel_occupancy_acc *acc, uint64_t **value,
                               uint64_t **tiles, uint64_t *n, tessel_diag *diag);
/* The summary over `all_tiles` tiles (empty ones included). */
int tessel_occupancy_acc_finish(tessel_occupancy_acc *acc, uint64_t all_tiles,
                                tessel_occupancy **out, tessel_diag *diag);

/* All tiles of shape `tile` over dims (edge tiles and tiles cut to a mode
 * counted as in tessel_tile_grid); TESSEL_ERANGE past 2^64 - 1, or for a
 * zero tile extent. */
int tessel_tile_count(unsigned order, const uint64_t *dims, const uint64_t *tile,
                      uint64_t *tiles);

/* Adds the occupancy of every non-empty tile of shape `tile` over t to acc
 * without keeping the grid: one pass, memory of one row of tiles' counter. */
int tessel_tile_occupancy_add(const tessel_tensor *t, const uint64_t *tile,
                              tessel_occupancy_acc *acc, tessel_diag *diag);

/* Nearest-rank quantile over non-empty tiles: the smallest v such that at
 * least ceil(q * n) of the n non-empty tiles hold <= v nonzeros. q in
 * [0, 1]; q = 0 gives the minimum; 0 if there are no non-empty tiles. */
uint64_t tessel_occupancy_quantile(const tessel_occupancy *o, double q);

/* Histogram with power-of-two bins [1,2), [2,4), ..., ending at the bin
 * that holds max. Returns the number of bins (<= 65); lo/hi/count may be
 * NULL to only count. hi is exclusive. */
unsigned tessel_occupancy_histogram(const tessel_occupancy *o, uint64_t *lo, uint64_t *hi,
                                    uint64_t *count);

/* ------------------------------------------------------------------ */
/* Footprint of one tile in a storage format. */
typedef enum tessel_format {
    TESSEL_FORMAT_COO = 0, /* n * (order * coord + value) */
    TESSEL_FORMAT_CSR,     /* (tile_0 + 1) * offset + n * ((order-1) * coord + value); CSR/CP */
    TESSEL_FORMAT_BITMAP,  /* prod(tile) bits + n * value */
    TESSEL_FORMAT_UOP_CP,  /* Sparseloop UOP-CP with tile-local metadata widths (docs/outputs.md) */
    TESSEL_FORMAT_RLE,     /* n * (run + value) */
    TESSEL_FORMAT_COUNT
} tessel_format;

typedef struct tessel_format_widths {
    unsigned value_bits;  /* default 64 */
    unsigned coord_bits;  /* default 32 */
    unsigned offset_bits; /* CSR pointers; default 32 */
    unsigned run_bits;    /* RLE run lengths; default 32 */
} tessel_format_widths;

void tessel_format_widths_init(tessel_format_widths *w);
const char *tessel_format_name(tessel_format f);
/* "coo", "csr" (also "cp"), "bitmap", "uop-cp", "rle"; -1 if unknown. */
int tessel_format_from_name(const char *name);

/* The footprint is affine in the nonzero count n: fixed + n * per bits.
 * (The mean footprint over tiles is the footprint of the mean occupancy.) */
void tessel_format_footprint_bits(tessel_format f, unsigned order, const uint64_t *tile,
                                  const tessel_format_widths *w, double *fixed_bits,
                                  double *bits_per_nonzero);

/* Bytes (rounded up, saturating) for a tile of the given shape holding n nonzeros.
 * `tile` has `order` entries; edge tiles are charged as full tiles. */
uint64_t tessel_format_footprint(tessel_format f, unsigned order, const uint64_t *tile,
                                 uint64_t n, const tessel_format_widths *w);

/* ------------------------------------------------------------------ */
/* Per-rank formats (Sparseloop vocabulary), ranks listed outermost first.
 * Rank d holds `fibers` fibers of tile[d] positions each (rank 0: one
 * fiber, the tile); the fibers of rank d+1 are the positions rank d stores.
 *   UOP  uncompressed, (tile[d] + 1) offsets per fiber; stores every position
 *   UB   uncompressed bitmask, tile[d] bits per fiber; stores every position
 *   B    bitmask, tile[d] bits per fiber; stores the occupied positions
 *   CP   a coordinate per occupied position
 *   RLE  a run length per occupied position
 * A CP or RLE rank above the leaf also keeps (occupied + 1) offsets to find
 * each child fiber (UOP's offsets do that job; B and UB find children by
 * position). Values: one per position the leaf rank stores. [UOP, CP] is
 * exactly the `csr` footprint. */
typedef enum tessel_rank_format {
    TESSEL_RANK_UOP = 0,
    TESSEL_RANK_CP,
    TESSEL_RANK_B,
    TESSEL_RANK_RLE,
    TESSEL_RANK_UB,
    TESSEL_RANK_COUNT
} tessel_rank_format;

/* "UOP", "CP", "B", "RLE", "UB" */
const char *tessel_rank_format_name(tessel_rank_format f);
/* Case-insensitive; -1 if unknown. */
int tessel_rank_format_from_name(const char *name);

/* Data and metadata bits of one tile. occupied[d] is the number of distinct
 * non-empty coordinate prefixes of length d + 1 in the tile, so
 * occupied[order - 1] is its nonzero count. */
void tessel_rank_footprint_bits(const unsigned char *ranks, unsigned order, const uint64_t *tile,
                                const uint64_t *occupied, const tessel_format_widths *w,
                                double *data_bits, double *metadata_bits);

/* ------------------------------------------------------------------ */
/* D2T2 statistics of a matrix (d2t2 section 4.3-4.4, eqs. 9-12), from one
 * pass over it on a base tile grid. Implemented in src/stats/d2t2.c.
 * "Non-empty" means holding at least one nonzero. A matrix without
 * nonzeros has every statistic and curve 0. */
typedef struct tessel_d2t2_stats {
    const tessel_allocator *alloc;
    uint64_t dims[2];   /* matrix rows, columns */
    uint64_t base[2];   /* base tile edge per mode (cut to dims; 1 for an empty mode) */
    uint64_t extent[2]; /* base tiles per mode: ceil(dims / base) */
    uint64_t nnz;
    uint64_t nonempty_tiles;
    uint64_t max_tile;     /* MaxTile: most nonzeros in one base tile */
    double size_tile;      /* SizeTile: mean nonzeros of a non-empty base tile (nnz / nonempty_tiles) */
    double size_tile_rows; /* mean non-empty rows of a non-empty base tile (CSF segments) */
    /* eq. 9 factors: [0] non-empty tile rows / extent[0]; [1] mean non-empty
     * tiles per non-empty tile row / extent[1]. Their product is the
     * fraction of non-empty base tiles. */
    double pr_tile_idx[2];
    /* eq. 10 factors inside a non-empty tile, as CSF fiber averages over
     * all non-empty tiles: [0] non-empty rows per tile / base[0]
     * (= size_tile_rows / base[0]); [1] nonzeros per non-empty row segment
     * / base[1], averaged over all row segments of all non-empty tiles
     * (= nnz / sum of their non-empty rows / base[1]). So prob_index[0] *
     * prob_index[1] * base[0] * base[1] = SizeTile. Edge tiles divide by the
     * full base edge, as footprints charge them. */
    double prob_index[2];
    /* eq. 11 along mode m: corrs[m][s] for s = 0 .. ncorrs[m]-1 (ncorrs[m]
     * = base[m]) is the overlap of the other mode's coordinates between
     * coordinates x and x + s of mode m inside the same base tile
     * (sum over x of |coords(x) ∩ coords(x + s)|), summed over the sampled
     * tiles, divided by the s = 0 value (their nonzeros; so corrs[m][0] =
     * 1 and every value is in [0, 1]). corrs[0] measures rows (B[k,j]
     * reduced over k); corrs[1] columns. */
    double *corrs[2];
    uint64_t ncorrs[2];
    /* eq. 12 along mode m: tile_corrs[m][s] = #{x : tile row (m = 0) or
     * tile column (m = 1) x and x + s both hold a nonzero} / #{x : x holds a
     * nonzero}, s = 0 .. ntile_corrs[m]-1 (= min(extent[m], 4096)). */
    double *tile_corrs[2];
    uint64_t ntile_corrs[2];
    double sample_fraction; /* of non-empty base tiles used for corrs */
    uint64_t seed;          /* GSL RNG (mt19937) seed of the sample; 32-bit, 0 acts as 4357 */
    uint64_t sampled_tiles; /* ceil(sample_fraction * nonempty_tiles) in double arithmetic, >= 1 unless empty */
} tessel_d2t2_stats;

/* Passes over matrix t (order 2; else TESSEL_EUNSUPPORTED) on base tiles
 * `base` (each >= 1), all linear in nnz; corrs from a seeded sample
 * (selection sampling, uniform without replacement) of `sample_fraction`
 * (0 < f <= 1) of the non-empty base tiles (at least one). Corrs costs at
 * most O(sampled nonzeros * (base[0] + base[1])) beyond that (pairs of
 * entries within one row / column of a tile). Everything, GSL's RNG state
 * included, is allocated through `a`. */
int tessel_d2t2_collect(const tessel_tensor *t, const uint64_t *base, double sample_fraction,
                        uint64_t seed, const tessel_allocator *a, tessel_d2t2_stats **out,
                        tessel_diag *diag);
void tessel_d2t2_free(tessel_d2t2_stats **s);

/* A versioned statistics file (src/stats/statfile.c): the D2T2 statistics
 * and the base tile grid's counts of one matrix, plus the source identity,
 * so sweeps never reread the tensor. Written atomically; every read checks
 * magic, version, sizes, checksums and the arrays' consistency (ECORRUPT,
 * with the file name and the offending field in the diag).
 * Write: `grid` must be the base grid of `s` (tessel_tile_grid_build with
 * s->base; TESSEL_EINVAL otherwise); `source` (may be NULL) is at most 4096
 * bytes, e.g. "PATH size=N mtime_ns=T" or a user label. The writer refuses
 * (EINVAL) statistics the reader would refuse.
 * Read: s, grid and source may each be NULL when not wanted; the source is
 * truncated to source_size - 1 bytes and NUL-terminated. A read grid's
 * tile[] is the (cut) base shape. */
int tessel_statfile_write(const char *path, const tessel_d2t2_stats *s,
                          const tessel_tile_grid *grid, const char *source, tessel_diag *diag);
int tessel_statfile_read(const char *path, const tessel_allocator *a, tessel_d2t2_stats **s,
                         tessel_tile_grid **grid, char *source, size_t source_size,
                         tessel_diag *diag);
/* The same from memory (tests, fuzzing). */
int tessel_statfile_parse(const char *name, const void *data, size_t size,
                          const tessel_allocator *a, tessel_d2t2_stats **s,
                          tessel_tile_grid **grid, char *source, size_t source_size,
                          tessel_diag *diag);

/* Occupancy statistics of a tensor in mergeable parts (src/stats/part.c,
 * docs/data.md "Streamed and sharded statistics"): the tile occupancies,
 * the slices of the first mode (rows) and every other mode's count of each
 * of its slices over the rows added so far. Rows (first-mode slices) are
 * added in blocks of whole rows of tiles, each row once; parts over
 * disjoint rows merge exactly, and the summary depends only on the
 * multisets, so any split gives the whole tensor's statistics bit for bit. */
typedef struct tessel_stats_part {
    const tessel_allocator *alloc;
    unsigned order;     /* 1..TESSEL_MAX_ORDER (2: a matrix) */
    uint64_t dims[TESSEL_MAX_ORDER];
    uint64_t tile[TESSEL_MAX_ORDER]; /* as requested (a tile larger than a mode is cut) */
    uint64_t nnz;       /* stored entries of the rows added */
    uint64_t shard, shards; /* 1-based shard of shards (1/1: the whole tensor) */
    uint64_t row_begin, row_end; /* the shard's rows */
    char field[16], symmetry[16];
    char source[4097];  /* the input's identity ("PATH size=N mtime_ns=T") */
    tessel_occupancy_acc *tiles;
    tessel_occupancy_acc *rows;
    /* [m] for 1 <= m < order: dims[m] counters, the entries of each slice
     * of mode m ([1]: the columns of a matrix); [0] is unused (NULL). */
    uint64_t *mode_count[TESSEL_MAX_ORDER];
} tessel_stats_part;

int tessel_stats_part_create(unsigned order, const uint64_t *dims, const uint64_t *tile,
                             const tessel_allocator *a, tessel_stats_part **out,
                             tessel_diag *diag);
void tessel_stats_part_free(tessel_stats_part **p);
/* Adds the rows [row_begin, row_end) of tensor m (m holds no other rows;
 * m's order and dims are p's; row_begin and row_end on tile-row boundaries
 * or the end). */
int tessel_stats_part_add(tessel_stats_part *p, const tessel_tensor *m, uint64_t row_begin,
                          uint64_t row_end, tessel_diag *diag);
/* p += q (same order, dims, tile, field and symmetry; disjoint rows). */
int tessel_stats_part_merge(tessel_stats_part *p, const tessel_stats_part *q, tessel_diag *diag);
/* The summaries: tile occupancy and, for every mode m < order, the slice
 * distribution modes[m] (modes[0]: rows, modes[1]: columns). */
int tessel_stats_part_summary(tessel_stats_part *p, tessel_occupancy **tiles,
                              tessel_occupancy **modes, tessel_diag *diag);
/* Streams a Matrix Market file, a .tns file of any order or a 2-mode .tsl
 * cache: one counting pass, then blocks of whole rows (first-mode slices)
 * of tiles holding at most `block_entries` entries (at least one row of
 * tiles), over shard `shard` of `shards` (1-based; rows of tiles split
 * evenly). tile[] holds one extent per mode of the file (TESSEL_MAX_ORDER
 * entries are read; those past the file's order are ignored). Each block
 * is one more pass over the file (a cache's blocks read only their rows),
 * or, with spill_dir (2-mode text files), one pass serves up to
 * max(8, block_entries / 4096) blocks through an unlinked spill file in
 * spill_dir (16 B per entry of those blocks). Memory: one block's tensor
 * plus O(sum of the extents), and 64 KiB per block of a pass when spilling. */
int tessel_stats_stream(const char *path, const tessel_load_options *opt, const uint64_t *tile,
                        uint64_t shard, uint64_t shards, uint64_t block_entries,
                        const char *spill_dir, const tessel_allocator *a,
                        tessel_stats_part **out, tessel_diag *diag);
/* Versioned, checksummed part files (.tpart); a file of another version is
 * refused with a message naming both versions. */
int tessel_stats_part_write(const char *path, const tessel_stats_part *p, tessel_diag *diag);
int tessel_stats_part_read(const char *path, const tessel_allocator *a, tessel_stats_part **out,
                           tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* The output's exact nonzero count (src/stats/outcount.c): a symbolic
 * pass, one marker per output column, O(multiplies) time. Operands in
 * the estimators' mode order: A [i, k] (or TTM's T [i, x, k]) times
 * B [k, j]; with c, MTTKRP's T [i, j, k], B [j, r], C [k, r]. */
typedef struct tessel_output_count {
    uint64_t nnz;    /* the output's nonzeros */
    uint64_t rows;   /* its non-empty first-mode slices (rows) */
    uint64_t fibers; /* TTM: its non-empty (i, x) fibres; otherwise rows */
} tessel_output_count;
/* The pass's work: multiplies (MTTKRP: the lengths of the factor rows
 * merged), in O(nnz(a)), so a caller can check it against a budget. */
double tessel_output_count_work(const tessel_tensor *a, const tessel_tensor *b,
                                const tessel_tensor *c);
int tessel_output_count_run(const tessel_tensor *a, const tessel_tensor *b, const tessel_tensor *c,
                        const tessel_allocator *al, tessel_output_count *out, tessel_diag *diag);
/* The same, with each output row's (TTM: slice's) nonzeros into row_nnz
 * (a->dims[0] entries) when not NULL; MTTKRP leaves row_nnz untouched.
 * The stat estimator's output sample draws and calibrates on them
 * (docs/models/stat.md, "Exact rows' counts as the covariate"). */
int tessel_output_count_rows(const tessel_tensor *a, const tessel_tensor *b,
                             const tessel_tensor *c, const tessel_allocator *al,
                             tessel_output_count *out, double *row_nnz, tessel_diag *diag);
/* The same, and for a matrix A [i, k] each k's share of the output: the
 * nonzeros first reached by a multiply through k (A's rows sorted by k, so
 * the smallest k reaching (i, j)) into k_nnz (b->dims[0] entries) when not
 * NULL; the one-level written nonzeros' strata (docs/models/stat.md, "The
 * written nonzeros at one level: strata by first step"). */
int tessel_output_count_detail(const tessel_tensor *a, const tessel_tensor *b,
                               const tessel_tensor *c, const tessel_allocator *al,
                               tessel_output_count *out, double *row_nnz, double *k_nnz,
                               tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* Analytic density models (Sparseloop's vocabulary) and the tile
 * occupancy they imply, without any data. Implemented in
 * src/stats/density.c from the exact hypergeometric and binomial pmfs
 * (successive-ratio evaluation, checked against GSL's in the tests). */
typedef enum tessel_density_kind {
    TESSEL_DENSITY_UNIFORM = 0, /* nnz positions uniform without replacement (hypergeometric) */
    TESSEL_DENSITY_BANDED,      /* |i - j| <= bandwidth, each kept with `density` (binomial) */
    TESSEL_DENSITY_NM,          /* every aligned group of m in a row holds exactly n */
    /* Sparseloop's fixed-structured: a tile of P positions holds exactly
     * P x density nonzeros, ceil with probability frac(P x density), else
     * floor, so the mean is exact; any tile shape */
    TESSEL_DENSITY_FIXED
} tessel_density_kind;

/* The same semantics as tessel_generate's uniform, banded and nm kinds, so
 * a generated matrix is one draw from the model. rows and cols are in
 * 1..TESSEL_MAX_DIM. N:M: the last group of a row, of width cols mod m,
 * holds min(n, width) nonzeros. */
typedef struct tessel_density_model {
    tessel_density_kind kind;
    uint64_t rows, cols;
    uint64_t nnz;       /* uniform: the exact count (0: use density) */
    double density;     /* uniform (when nnz is 0): nnz = round(density * rows * cols); banded: keep probability; fixed-structured: every tile's share; in (0, 1] */
    uint64_t bandwidth; /* banded */
    unsigned n, m;      /* N:M: 1 <= n <= m */
} tessel_density_model;

/* "uniform", "banded", "nm", "fixed-structured"; -1 if unknown. */
int tessel_density_kind_from_name(const char *name);

/* The expected occupancy distribution over the tiles of shape `tile`: a
 * mixture over tile positions of each tile's exact distribution. Tiles are
 * laid out as in tessel_tile_grid (edge tiles cut at the matrix edge, a
 * tile larger than the matrix cut to it). */
typedef struct tessel_density_occupancy {
    const tessel_allocator *alloc;
    uint64_t tiles;     /* all tiles */
    double nonempty;    /* expected non-empty tiles: sum over tiles of 1 - P_t(0) */
    /* sum over tiles of P_t(0) (1 - P_t(0)): the variance of the number of
     * non-empty tiles in one draw of the model. Exact for banded and N:M
     * (tiles are independent); an upper bound for uniform (a fixed total
     * makes the tiles' emptiness negatively correlated). */
    double nonempty_var;
    double nnz;         /* expected nonzeros */
    double mean;        /* expected occupancy of a non-empty tile: nnz / nonempty (0 if none) */
    uint64_t npmf;      /* pmf has npmf entries (0 when no tile can be non-empty) */
    /* pmf[n] = sum_t P_t(n) / nonempty: expected share of the non-empty
     * tiles holding n nonzeros (pmf[0] = 0). The upper tail is cut where the
     * mass beyond the last entry is below 1e-12, so the entries sum to
     * within 1e-12 of 1; pmf[npmf - 1] > 0. */
    double *pmf;
} tessel_density_occupancy;

/* tile has 2 entries (rows, columns), each >= 1. Errors (TESSEL_EINVAL with
 * a message naming the field): unknown kind, rows or cols outside
 * 1..TESSEL_MAX_DIM, a zero tile edge, density outside (0, 1] where used,
 * nnz > rows * cols, m = 0, n = 0 or n > m. TESSEL_ERANGE when tiles
 * hold 2^26 or more nonzeros with non-negligible probability (the pmf is
 * indexed by occupancy, 8 bytes per value); TESSEL_ENOMEM. All memory
 * comes from `a` (NULL: the default). */
int tessel_density_occupancy_create(const tessel_density_model *d, const uint64_t *tile,
                                    const tessel_allocator *a, tessel_density_occupancy **out,
                                    tessel_diag *diag);
void tessel_density_occupancy_free(tessel_density_occupancy **o);
/* Nearest-rank quantile over the non-empty tiles, as tessel_occupancy_quantile:
 * the smallest v with P(occupancy <= v | non-empty) >= q (cumulative sums
 * within 1e-12 of q count as reaching it). q <= 0 gives the smallest
 * occupancy with positive probability, q >= 1 the largest kept (pmf[npmf - 1]);
 * 0 when there are no non-empty tiles. */
uint64_t tessel_density_quantile(const tessel_density_occupancy *o, double q);


/* Per non-empty tile of a square matrix's tile grid, its nonzeros whose
 * transpose is a nonzero too, the diagonal's included
 * (src/stats/symtile.c; the stat estimator's step count where B is A).
 * `width` bytes per count (1, 2 or 4: the fewest that hold the tile's
 * area); total: their sum. */
typedef struct tessel_tile_sym {
    const tessel_allocator *alloc;
    uint64_t n, total;
    unsigned width;
    void *count;
} tessel_tile_sym;

static inline uint32_t tessel_tile_sym_at(const tessel_tile_sym *s, uint64_t i)
{
    return s->width == 1   ? ((const uint8_t *)s->count)[i]
           : s->width == 2 ? ((const uint16_t *)s->count)[i]
                           : ((const uint32_t *)s->count)[i];
}

/* Counts t's pairs on its own grid g into *out (NULL, and TESSEL_OK, when t
 * is not square or a row holds 2^32 or more nonzeros: not collected). One
 * walk over the entries in row order, 4 B of scratch per row and per strip
 * of tiles; the result takes width B per non-empty tile. TESSEL_EINVAL when
 * g is not t's grid, TESSEL_ENOMEM. */
int tessel_tile_grid_sym(const tessel_tensor *t, const tessel_tile_grid *g,
                         const tessel_allocator *a, tessel_tile_sym **out, tessel_diag *diag);
/* An empty statistic of n tiles, counts `width` bytes each, zeroed; NULL:
 * out of memory. */
tessel_tile_sym *tessel_tile_sym_new(const tessel_allocator *a, uint64_t n, unsigned width);
/* The width of the counts on grid g: the fewest bytes (1, 2, 4) that hold
 * a tile's area. */
unsigned tessel_tile_sym_width(const tessel_tile_grid *g);
void tessel_tile_sym_free(tessel_tile_sym **s);
uint64_t tessel_tile_sym_bytes(const tessel_tile_sym *s);

/* ------------------------------------------------------------------ */
/* The output's exact nonzeros per (i cell, k cell of their first
 * multiply) of Z = A B, A [i, k] and B [k, j] matrices sorted by row
 * (src/stats/firstcells.c): a symbolic pass like rule 3's, O(multiplies),
 * streaming one i cell at a time. Sparse: i cell c's entries are
 * [ptr[c], ptr[c + 1]), their k cells ascending, each count > 0. The stat
 * estimator's nested written nonzeros use them as the covariate of a
 * ratio estimate (docs/models/stat.md, "The written nonzeros on the
 * (i cell, first k cell) counts"). */
typedef struct tessel_first_cells {
    uint64_t edge_i, edge_k; /* cell edges along i and k */
    uint64_t ni, nk;         /* i cells (ptr has ni + 1 entries) and k cells */
    uint64_t nentries;
    uint64_t *ptr;
    uint32_t *kcell;
    double *nnz;
} tessel_first_cells;
/* Counts into out (zeroed first). More than `budget` entries, or a bound
 * on them from A's nonzeros alone over it (each i cell's distinct k cells
 * in A, checked first, in O(nnz(A))): TESSEL_ERANGE and nothing kept; TESSEL_ENOMEM out of memory; TESSEL_EINVAL when A and
 * B are not matrices that multiply or an edge is 0. */
int tessel_first_cells_count(const tessel_tensor *a, const tessel_tensor *b, uint64_t edge_i,
                             uint64_t edge_k, uint64_t budget, const tessel_allocator *al,
                             tessel_first_cells *out);
/* 1 when fc is well formed (a loader's check): offsets non-decreasing and
 * ending at nentries, k cells ascending within an i cell and below nk,
 * counts finite and positive. */
int tessel_first_cells_check(const tessel_first_cells *fc);
void tessel_first_cells_free(const tessel_allocator *al, tessel_first_cells *fc);

#ifdef __cplusplus
}
#endif
#endif

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
 * lexicographically by tile coordinate: c_0 is group[i]; c_1..c_{order-1}
 * are packed in key[i] in mixed radix of extent[1..] (mode order-1 least
 * significant). */
typedef struct tessel_tile_grid {
    const tessel_allocator *alloc;
    unsigned order;
    uint64_t dims[TESSEL_MAX_ORDER];
    uint64_t tile[TESSEL_MAX_ORDER];
    uint64_t extent[TESSEL_MAX_ORDER]; /* ceil(dims / tile) */
    uint64_t nnz;
    uint64_t nonempty;
    uint64_t *group;
    uint64_t *key;
    uint64_t *count;
} tessel_tile_grid;

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
    uint64_t *sorted;  /* occupancies of the non-empty tiles, ascending */
} tessel_occupancy;

int tessel_occupancy_create(const tessel_tile_grid *g, tessel_occupancy **out, tessel_diag *diag);
void tessel_occupancy_free(tessel_occupancy **o);

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
    TESSEL_FORMAT_UOP_CP,  /* Sparseloop UOP-CP with tile-local metadata widths (see README) */
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

#ifdef __cplusplus
}
#endif
#endif

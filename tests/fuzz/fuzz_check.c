/* Checks shared by the fuzz targets (see fuzz_check.h). Everything here
 * is deliberately independent of the library's own code paths: the grid
 * is recounted by brute force, not by calling the grid code again. */
#include "fuzz_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each block carries its size in front, 16 bytes so the pointer handed out
 * keeps malloc's alignment. */
#define FUZZ_HEADER 16u

void fuzz_fail(const char *file, int line, const char *cond, const char *what)
{
    fprintf(stderr, "%s:%d: fuzz invariant violated: %s\n  check: %s\n", file, line, what, cond);
    fflush(stderr);
    abort();
}

/* ------------------------------------------------------------------ */
/* Bounded counting allocator */

static void *fuzz_alloc_fn(void *ud, void *ptr, size_t size)
{
    fuzz_alloc *fa = ud;
    unsigned char *block = ptr ? (unsigned char *)ptr - FUZZ_HEADER : NULL;
    size_t old = 0;
    if (block)
        memcpy(&old, block, sizeof(old));
    if (size == 0) {
        if (block) {
            fa->live -= old;
            fa->blocks--;
            free(block);
        }
        return NULL;
    }
    /* Refusing before realloc leaves the old block intact, as realloc's
     * own failure would. */
    if (size > fa->limit - (fa->live - old) || size > SIZE_MAX - FUZZ_HEADER)
        return NULL;
    unsigned char *grown = realloc(block, size + FUZZ_HEADER);
    if (!grown)
        return NULL;
    memcpy(grown, &size, sizeof(size));
    if (!block)
        fa->blocks++;
    fa->live = fa->live - old + size;
    if (fa->live > fa->peak)
        fa->peak = fa->live;
    return grown + FUZZ_HEADER;
}

void fuzz_alloc_init(fuzz_alloc *fa, size_t limit)
{
    memset(fa, 0, sizeof(*fa));
    fa->allocator.fn = fuzz_alloc_fn;
    fa->allocator.ud = fa;
    fa->limit = limit;
}

void fuzz_alloc_check_released(const fuzz_alloc *fa, const char *what)
{
    if (fa->live != 0 || fa->blocks != 0) {
        fprintf(stderr, "fuzz: %ld blocks (%zu bytes) still allocated after %s\n", fa->blocks,
                fa->live, what);
        fuzz_fail(__FILE__, __LINE__, "live == 0", "everything allocated is released");
    }
}

/* ------------------------------------------------------------------ */
/* Results of the parsers */

void fuzz_check_failure(int rc, const tessel_tensor *out, const tessel_diag *diag)
{
    FUZZ_REQUIRE(rc <= TESSEL_ENOMEM && rc >= TESSEL_EUNSUPPORTED,
                 "a failure returns one of the TESSEL_E* codes");
    FUZZ_REQUIRE(out == NULL, "a failed parse leaves *out NULL");
    FUZZ_REQUIRE(diag->code == rc, "the diag records the returned code");
    FUZZ_REQUIRE(diag->message[0] != '\0', "the diag says what went wrong");
    FUZZ_REQUIRE(memchr(diag->message, '\0', sizeof(diag->message)) != NULL,
                 "the diag message is terminated");
}

static int bounded(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

/* -1, 0, 1 as entry x of t orders before, equal to, after entry y (modes
 * 1.. only: both are in the same slice). */
static int entry_order(const tessel_tensor *t, uint64_t x, uint64_t y)
{
    for (unsigned m = 1; m < t->order; m++)
        if (t->idx[m][x] != t->idx[m][y])
            return t->idx[m][x] < t->idx[m][y] ? -1 : 1;
    return 0;
}

static void check_ptr(const tessel_tensor *t)
{
    FUZZ_REQUIRE(t->ptr != NULL, "ptr is allocated (dims[0] + 1 words, never empty)");
    FUZZ_REQUIRE(t->ptr[0] == 0, "ptr[0] == 0");
    for (uint64_t r = 0; r < t->dims[0]; r++)
        FUZZ_REQUIRE(t->ptr[r] <= t->ptr[r + 1], "row pointers never decrease");
    FUZZ_REQUIRE(t->ptr[t->dims[0]] == t->nnz, "ptr[dims[0]] == nnz");
}

void fuzz_check_tensor(const tessel_tensor *t)
{
    FUZZ_REQUIRE(t->order >= 1 && t->order <= TESSEL_MAX_ORDER, "order in 1..8");
    FUZZ_REQUIRE(t->idx[0] == NULL, "idx[0] is always NULL");
    for (unsigned m = t->order; m < TESSEL_MAX_ORDER; m++)
        FUZZ_REQUIRE(t->idx[m] == NULL, "no index arrays past the order");
    for (unsigned m = 0; m < t->order; m++)
        FUZZ_REQUIRE(t->dims[m] <= TESSEL_MAX_DIM, "every extent fits in 32 bits");
    FUZZ_REQUIRE(bounded(t->field, sizeof(t->field)), "field is NUL-terminated");
    FUZZ_REQUIRE(bounded(t->symmetry, sizeof(t->symmetry)), "symmetry is NUL-terminated");
    check_ptr(t);
    if (t->nnz == 0)
        return;
    int pattern = strcmp(t->field, "pattern") == 0;
    FUZZ_REQUIRE((t->values == NULL) == pattern, "values are present exactly when the field "
                                                 "is not 'pattern'");
    for (unsigned m = 1; m < t->order; m++) {
        FUZZ_REQUIRE(t->idx[m] != NULL, "each mode past the first has its index array");
        for (uint64_t k = 0; k < t->nnz; k++)
            FUZZ_REQUIRE(t->idx[m][k] < t->dims[m], "idx[m][k] < dims[m]");
    }
    for (uint64_t r = 0; r < t->dims[0]; r++)
        for (uint64_t k = t->ptr[r] + 1; k < t->ptr[r + 1]; k++)
            FUZZ_REQUIRE(entry_order(t, k - 1, k) < 0,
                         "entries strictly increase within each slice (sorted, no duplicates)");
}

/* Position of column j in row i of a matrix, or UINT64_MAX. */
static uint64_t find_entry(const tessel_tensor *t, uint64_t i, uint32_t j)
{
    uint64_t lo = t->ptr[i], hi = t->ptr[i + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->idx[1][mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->ptr[i + 1] && t->idx[1][lo] == j ? lo : UINT64_MAX;
}

/* Mirrored values: the mirror is added right after each entry and
 * duplicates are summed in input order, so the sums match exactly. */
static int mirror_value_ok(double v, double w, int skew)
{
    if (isnan(v) || isnan(w))
        return isnan(v) && isnan(w);
    return skew ? w == -v : w == v;
}

void fuzz_check_mtx_symmetry(const tessel_tensor *t)
{
    FUZZ_REQUIRE(t->order == 2, "Matrix Market gives matrices");
    if (strcmp(t->symmetry, "general") == 0)
        return;
    FUZZ_REQUIRE(t->dims[0] == t->dims[1], "a symmetric matrix is square");
    int skew = strcmp(t->symmetry, "skew-symmetric") == 0;
    for (uint64_t i = 0; i < t->dims[0]; i++)
        for (uint64_t k = t->ptr[i]; k < t->ptr[i + 1]; k++) {
            uint32_t j = t->idx[1][k];
            FUZZ_REQUIRE(!skew || j != i, "skew-symmetric matrices have no diagonal");
            uint64_t mk = find_entry(t, j, (uint32_t)i);
            FUZZ_REQUIRE(mk != UINT64_MAX, "the mirror (j,i) of every entry (i,j) is stored");
            if (t->values)
                FUZZ_REQUIRE(mirror_value_ok(t->values[k], t->values[mk], skew),
                             "mirrored values agree (negated for skew-symmetric)");
        }
}

void fuzz_check_tns_extents(const tessel_tensor *t)
{
    FUZZ_REQUIRE(t->nnz > 0, "a parsed .tns file has entries");
    FUZZ_REQUIRE(t->dims[0] >= 1 && t->ptr[t->dims[0] - 1] < t->nnz,
                 "the last slice of mode 0 is not empty (extent = largest coordinate)");
    for (unsigned m = 1; m < t->order; m++) {
        uint32_t max = 0;
        for (uint64_t k = 0; k < t->nnz; k++)
            if (t->idx[m][k] > max)
                max = t->idx[m][k];
        FUZZ_REQUIRE(max + 1ull == t->dims[m], "every mode's extent is its largest coordinate");
    }
}

void fuzz_check_dropped(const tessel_tensor *kept, const tessel_tensor *dropped)
{
    FUZZ_REQUIRE(kept->order == dropped->order, "drop_zeros keeps the order");
    for (unsigned m = 0; m < kept->order; m++)
        FUZZ_REQUIRE(kept->dims[m] == dropped->dims[m], "drop_zeros keeps the extents");
    FUZZ_REQUIRE(strcmp(kept->field, dropped->field) == 0 &&
                     strcmp(kept->symmetry, dropped->symmetry) == 0,
                 "drop_zeros keeps field and symmetry");
    for (uint64_t r = 0; r < kept->dims[0]; r++) {
        uint64_t d = dropped->ptr[r];
        for (uint64_t k = kept->ptr[r]; k < kept->ptr[r + 1]; k++) {
            if (kept->values && kept->values[k] == 0.0)
                continue;
            FUZZ_REQUIRE(d < dropped->ptr[r + 1], "drop_zeros keeps every non-zero entry");
            for (unsigned m = 1; m < kept->order; m++)
                FUZZ_REQUIRE(kept->idx[m][k] == dropped->idx[m][d],
                             "drop_zeros keeps the coordinates of the entries it keeps");
            if (kept->values)
                FUZZ_REQUIRE(memcmp(&kept->values[k], &dropped->values[d], sizeof(double)) == 0,
                             "drop_zeros keeps the values of the entries it keeps");
            d++;
        }
        FUZZ_REQUIRE(d == dropped->ptr[r + 1], "drop_zeros removes only zero entries");
    }
}

/* ------------------------------------------------------------------ */
/* Tile grids */

/* The tile shape `edge` in every mode. */
static void fill_tile(uint64_t *tile, uint64_t edge)
{
    for (unsigned m = 0; m < TESSEL_MAX_ORDER; m++)
        tile[m] = edge;
}

/* Position of tile (group, key) in g, or UINT64_MAX. */
static uint64_t find_tile(const tessel_tile_grid *g, uint64_t group, uint64_t key)
{
    uint64_t lo = 0, hi = g->nonempty;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        uint64_t gm = tessel_tile_grid_group(g, mid);
        if (gm < group || (gm == group && tessel_tile_grid_key(g, mid) < key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->nonempty && tessel_tile_grid_group(g, lo) == group &&
                   tessel_tile_grid_key(g, lo) == key
               ? lo
               : UINT64_MAX;
}

static void check_grid_shape(const tessel_tile_grid *g, const tessel_tensor *t,
                             const uint64_t *tile)
{
    FUZZ_REQUIRE(g->order == t->order && g->nnz == t->nnz, "the grid describes its tensor");
    for (unsigned m = 0; m < t->order; m++) {
        FUZZ_REQUIRE(g->dims[m] == t->dims[m] && g->tile[m] == tile[m],
                     "the grid keeps dims and tile shape");
        uint64_t want = t->dims[m] ? (t->dims[m] - 1) / tile[m] + 1 : 0;
        FUZZ_REQUIRE(g->extent[m] == want, "extent == ceil(dims / tile)");
    }
}

/* Tiles sorted by (group, key), each non-empty and inside the grid, and
 * tile coordinates that unpack inside the extents. */
static void check_grid_tiles(const tessel_tile_grid *g)
{
    uint64_t sum = 0;
    FUZZ_REQUIRE(tessel_tile_grid_row_begin(g, 0) == 0 &&
                     tessel_tile_grid_row_begin(g, g->extent[0]) == g->nonempty,
                 "the rows of tiles span the tiles");
    for (uint64_t r = 0; r < g->extent[0]; r++)
        FUZZ_REQUIRE(tessel_tile_grid_row_begin(g, r) <= tessel_tile_grid_row_begin(g, r + 1),
                     "row offsets never decrease");
    for (uint64_t i = 0; i < g->nonempty; i++) {
        FUZZ_REQUIRE(tessel_tile_grid_count(g, i) > 0, "only non-empty tiles are stored");
        FUZZ_REQUIRE(tessel_tile_grid_group(g, i) < g->extent[0], "tile group inside the grid");
        if (i > 0)
            FUZZ_REQUIRE(tessel_tile_grid_group(g, i - 1) < tessel_tile_grid_group(g, i) ||
                             (tessel_tile_grid_group(g, i - 1) == tessel_tile_grid_group(g, i) &&
                              tessel_tile_grid_key(g, i - 1) < tessel_tile_grid_key(g, i)),
                         "tiles strictly increase by (group, key)");
        uint64_t coords[TESSEL_MAX_ORDER];
        tessel_tile_grid_coords(g, i, coords);
        FUZZ_REQUIRE(coords[0] == tessel_tile_grid_group(g, i), "coords[0] is the group");
        uint64_t key = 0;
        for (unsigned m = 1; m < g->order; m++) {
            FUZZ_REQUIRE(coords[m] < g->extent[m], "tile coordinates inside the extents");
            key = key * g->extent[m] + coords[m];
        }
        FUZZ_REQUIRE(key == tessel_tile_grid_key(g, i), "tile coordinates pack back into the key");
        FUZZ_REQUIRE(tessel_tile_grid_count(g, i) <= g->nnz - sum, "tile counts do not exceed nnz");
        sum += tessel_tile_grid_count(g, i);
    }
    FUZZ_REQUIRE(sum == g->nnz, "the tile counts sum to nnz");
}

/* Recounts every entry into its tile by brute force. */
static void check_grid_counts(const tessel_tile_grid *g, const tessel_tensor *t)
{
    if (g->nonempty == 0) {
        FUZZ_REQUIRE(t->nnz == 0, "a tensor with entries has non-empty tiles");
        return;
    }
    uint64_t *seen = calloc(g->nonempty, sizeof(uint64_t));
    if (!seen)
        return; /* the harness itself is out of memory: nothing to learn */
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        uint64_t group = r / g->tile[0];
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            uint64_t key = 0;
            for (unsigned m = 1; m < t->order; m++)
                key = key * g->extent[m] + t->idx[m][k] / g->tile[m];
            uint64_t i = find_tile(g, group, key);
            FUZZ_REQUIRE(i != UINT64_MAX, "every entry's tile is in the grid");
            seen[i]++;
        }
    }
    for (uint64_t i = 0; i < g->nonempty; i++)
        FUZZ_REQUIRE(seen[i] == tessel_tile_grid_count(g, i),
                     "each tile's count matches a brute-force count");
    free(seen);
}

static void check_same_grid(const tessel_tile_grid *a, const tessel_tile_grid *b)
{
    FUZZ_REQUIRE(a->order == b->order && a->nnz == b->nnz && a->nonempty == b->nonempty,
                 "derived grid == directly built grid (sizes)");
    for (unsigned m = 0; m < a->order; m++)
        FUZZ_REQUIRE(a->tile[m] == b->tile[m] && a->extent[m] == b->extent[m],
                     "derived grid == directly built grid (shape)");
    for (uint64_t r = 0; r <= a->extent[0]; r++)
        FUZZ_REQUIRE(tessel_tile_grid_row_begin(a, r) == tessel_tile_grid_row_begin(b, r),
                     "derived grid == directly built grid (rows of tiles)");
    for (uint64_t i = 0; i < a->nonempty; i++)
        FUZZ_REQUIRE(tessel_tile_grid_key(a, i) == tessel_tile_grid_key(b, i) &&
                         tessel_tile_grid_count(a, i) == tessel_tile_grid_count(b, i),
                     "derived grid == directly built grid (tiles and counts)");
}

static void check_occupancy(const tessel_tile_grid *g)
{
    tessel_occupancy *o = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_occupancy_create(g, &o, &d);
    if (rc) {
        FUZZ_REQUIRE(rc == TESSEL_ENOMEM || rc == TESSEL_ERANGE,
                     "occupancy fails only for memory or a grid of more than 2^64 tiles");
        FUZZ_REQUIRE(o == NULL, "a failed occupancy_create leaves *out NULL");
        return;
    }
    uint64_t tiles = 0;
    FUZZ_REQUIRE(tessel_tile_grid_tiles(g, &tiles) == TESSEL_OK && o->tiles == tiles,
                 "occupancy counts all tiles");
    FUZZ_REQUIRE(o->nonempty == g->nonempty && o->nnz == g->nnz, "occupancy sizes");
    FUZZ_REQUIRE(o->nonempty <= o->tiles, "no more non-empty tiles than tiles");
    uint64_t sum = 0;
    for (uint64_t i = 0; i < o->ndistinct; i++) {
        FUZZ_REQUIRE(i == 0 || (o->value[i - 1] < o->value[i] && o->upto[i - 1] < o->upto[i]),
                     "distinct occupancies and their cumulative tiles ascend");
        sum += o->value[i] * (o->upto[i] - (i ? o->upto[i - 1] : 0));
    }
    FUZZ_REQUIRE(sum == o->nnz, "occupancies sum to nnz");
    FUZZ_REQUIRE(o->ndistinct == 0 || o->upto[o->ndistinct - 1] == o->nonempty,
                 "the cumulative tiles end at the non-empty tiles");
    if (o->nonempty) {
        FUZZ_REQUIRE(o->min == o->value[0] && o->max == o->value[o->ndistinct - 1],
                     "min and max are the ends of the distinct occupancies");
        FUZZ_REQUIRE(tessel_occupancy_quantile(o, 0.0) == o->min &&
                         tessel_occupancy_quantile(o, 1.0) == o->max,
                     "quantiles 0 and 1 are min and max");
        uint64_t count[65];
        unsigned bins = tessel_occupancy_histogram(o, NULL, NULL, count);
        FUZZ_REQUIRE(bins >= 1 && bins <= 65, "histogram bins");
        uint64_t in_bins = 0;
        for (unsigned b = 0; b < bins; b++)
            in_bins += count[b];
        FUZZ_REQUIRE(in_bins == o->nonempty, "the histogram holds every non-empty tile");
    }
    tessel_occupancy_free(&o);
}

/* One grid of t with `edge` in every mode; NULL when the build may fail
 * (out of memory, or a key space past 2^62). */
static tessel_tile_grid *build_checked(const tessel_tensor *t, uint64_t edge,
                                       const tessel_allocator *a)
{
    uint64_t tile[TESSEL_MAX_ORDER];
    fill_tile(tile, edge);
    tessel_tile_grid *g = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_tile_grid_build(t, tile, a, &g, &d);
    if (rc) {
        FUZZ_REQUIRE(rc == TESSEL_ENOMEM || rc == TESSEL_ERANGE,
                     "grid_build fails only for memory or a too fine grid");
        FUZZ_REQUIRE(g == NULL, "a failed grid_build leaves *out NULL");
        FUZZ_REQUIRE(d.code == rc, "grid_build fills the diag");
        return NULL;
    }
    check_grid_shape(g, t, tile);
    check_grid_tiles(g);
    check_grid_counts(g, t);
    return g;
}

void fuzz_check_stats(const tessel_tensor *t, const tessel_allocator *a)
{
    tessel_tile_grid *g3 = build_checked(t, 3, a);
    if (g3)
        check_occupancy(g3);
    tessel_tile_grid *g4 = build_checked(t, 4, a);
    tessel_tile_grid_free(&g4);
    tessel_tile_grid *g6 = build_checked(t, 6, a);
    if (g3 && g6) {
        uint64_t tile[TESSEL_MAX_ORDER];
        fill_tile(tile, 6);
        tessel_tile_grid *derived = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        int rc = tessel_tile_grid_derive(g3, tile, &derived, &d);
        if (rc == TESSEL_OK)
            check_same_grid(g6, derived);
        else
            FUZZ_REQUIRE(rc == TESSEL_ENOMEM && derived == NULL,
                         "deriving 6 from 3 fails only for memory");
        tessel_tile_grid_free(&derived);
    }
    tessel_tile_grid_free(&g6);
    tessel_tile_grid_free(&g3);
}

uint64_t fuzz_checksum(const void *p, size_t n)
{
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, p, n);
    return tessel_checksum_final(&c);
}

uint8_t *fuzz_repaired_copy(const uint8_t *data, size_t size, size_t header,
                            size_t off_payload_bytes, size_t off_payload_sum,
                            size_t off_header_sum)
{
    if (size < header)
        return NULL;
    uint8_t *copy = malloc(size);
    if (!copy)
        return NULL;
    memcpy(copy, data, size);
    uint64_t payload = size - header;
    if (off_payload_bytes != SIZE_MAX)
        memcpy(copy + off_payload_bytes, &payload, sizeof(payload));
    uint64_t payload_sum = fuzz_checksum(copy + header, (size_t)payload);
    memcpy(copy + off_payload_sum, &payload_sum, sizeof(payload_sum));
    uint64_t header_sum = fuzz_checksum(copy, off_header_sum);
    memcpy(copy + off_header_sum, &header_sum, sizeof(header_sum));
    return copy;
}

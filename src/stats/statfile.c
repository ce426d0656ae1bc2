/* Statistics file (.tstat): the D2T2 statistics and the base tile grid of
 * one matrix, so that sweeps never reread the tensor.
 *
 * Layout (little-endian, as the .tsl cache in src/tensor/cache.c; the
 * byte-order mark rejects a byte-swapped file):
 *   offset  size  field
 *        0     8  magic "TESSELS\n"
 *        8     4  format version (STATFILE_VERSION)
 *       12     4  header size (STATFILE_HEADER_BYTES)
 *       16     4  byte-order mark 0x01020304
 *       20     4  flags (0)
 *       24    16  dims[2]
 *       40    16  base[2] (cut to dims; 1 for an empty mode)
 *       56    16  extent[2] = ceil(dims / base)
 *       72     8  nnz
 *       80     8  nonempty_tiles
 *       88     8  max_tile
 *       96     8  sampled_tiles
 *      104     8  seed
 *      112     8  sample_fraction (f64)
 *      120     8  size_tile (f64)
 *      128     8  size_tile_rows (f64)
 *      136    16  pr_tile_idx[2] (f64)
 *      152    16  prob_index[2] (f64)
 *      168    16  ncorrs[2] (= base)
 *      184    16  ntile_corrs[2] (= min(extent, 4096))
 *      200     8  source identity length in bytes (<= STATFILE_SOURCE_MAX, no NUL)
 *      208     8  payload size in bytes
 *      216     8  payload checksum
 *      224    24  zero
 *      248     8  checksum of bytes 0..247
 *   payload: corrs[0][ncorrs[0]], corrs[1][ncorrs[1]], tile_corrs[0][..],
 *   tile_corrs[1][..] (f64); the base grid (n = nonempty_tiles): its row
 *   offsets row[extent[0] + 1] (u64; the tiles of row of tiles r are
 *   [row[r], row[r + 1])), key[n] (u32: the tile's column), count[n] (u32,
 *   or u64 when max_tile >= 2^32); zero bytes to a multiple of 8; the source
 *   identity bytes.
 *   Version 1 (still read, converted): the grid as group[n], key[n],
 *   count[n] (u64), no padding.
 *
 * Nothing in a file is trusted: every count is checked against the header's
 * other fields and the payload size against the file size before anything
 * is allocated, both checksums are verified, and the arrays are checked
 * against each other (grid order, sums, ranges) before they are returned.
 * The writer runs the same checks, so it never writes a file the reader
 * would refuse. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tessel/stats.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .tstat format is little-endian"
#endif

#define STATFILE_MAGIC "TESSELS\n"
/* 2: the grid as row offsets and 32-bit keys and counts (issue 27 item 2);
 * 1 (per-tile u64 group, key and count) is read and converted. */
#define STATFILE_VERSION 2u
#define STATFILE_HEADER_BYTES 256u
#define STATFILE_BOM 0x01020304u
#define STATFILE_SOURCE_MAX 4096u
#define STATFILE_TILE_CORRS_MAX 4096u
#define STATFILE_CHUNK (8u << 20)

typedef struct statfile_header {
    char magic[8];
    uint32_t version;
    uint32_t header_bytes;
    uint32_t bom;
    uint32_t flags;
    uint64_t dims[2];
    uint64_t base[2];
    uint64_t extent[2];
    uint64_t nnz;
    uint64_t nonempty_tiles;
    uint64_t max_tile;
    uint64_t sampled_tiles;
    uint64_t seed;
    double sample_fraction;
    double size_tile;
    double size_tile_rows;
    double pr_tile_idx[2];
    double prob_index[2];
    uint64_t ncorrs[2];
    uint64_t ntile_corrs[2];
    uint64_t source_bytes;
    uint64_t payload_bytes;
    uint64_t payload_checksum;
    unsigned char zero[24];
    uint64_t header_checksum;
} statfile_header;

_Static_assert(sizeof(statfile_header) == STATFILE_HEADER_BYTES, "statfile header layout");
_Static_assert(offsetof(statfile_header, header_checksum) == 248, "statfile header layout");

/* What is wrong, and in which field. */
typedef struct problem {
    const char *field;
    char why[200];
} problem;

static int bad(problem *p, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int bad(problem *p, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    p->field = field;
    vsnprintf(p->why, sizeof(p->why), fmt, ap);
    va_end(ap);
    return 1;
}

static uint64_t header_checksum(const statfile_header *h)
{
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, h, offsetof(statfile_header, header_checksum));
    return tessel_checksum_final(&c);
}

/* The sample size tessel_d2t2_collect draws (d2t2.c: ceil(f * n), at
 * least one, at most n). */
static uint64_t expected_sample(uint64_t n, double f)
{
    if (n == 0)
        return 0;
    double want = ceil(f * (double)n);
    return want < 1 ? 1 : want >= (double)n ? n : (uint64_t)want;
}

static int in_unit(double v)
{
    return v >= 0 && v <= 1; /* false for NaN */
}

static int close_to(double v, double expect)
{
    return fabs(v - expect) <= 1e-9 * fmax(1.0, fabs(expect)); /* false for NaN */
}

/* Bytes of one stored tile count: 8 when a tile may hold 2^32 nonzeros. */
static uint64_t count_bytes(const statfile_header *h)
{
    return h->max_tile > UINT32_MAX ? 8 : 4;
}

/* Bytes of the grid's arrays in the payload (version 2 with padding). */
static uint64_t grid_bytes(const statfile_header *h)
{
    if (h->version == 1)
        return h->nonempty_tiles * 24;
    uint64_t b = (h->extent[0] + 1) * 8 + h->nonempty_tiles * (4 + count_bytes(h));
    return (b + 7) / 8 * 8;
}

/* Payload bytes implied by the header; 0 with *ok = 0 on overflow. Counts
 * are already bounded (ncorrs, ntile_corrs <= 2^32, source <= 4096,
 * extent[0] < 2^32). */
static uint64_t payload_size(const statfile_header *h, int *ok)
{
    *ok = 0;
    uint64_t doubles = h->ncorrs[0] + h->ncorrs[1] + h->ntile_corrs[0] + h->ntile_corrs[1];
    if (h->nonempty_tiles > (UINT64_MAX / 2) / 24)
        return 0;
    *ok = 1;
    return doubles * 8 + grid_bytes(h) + h->source_bytes;
}

/* Everything a later allocation or loop relies on is settled here. */
static int header_problem(const statfile_header *h, uint64_t total, problem *p)
{
    if (memcmp(h->magic, STATFILE_MAGIC, 8) != 0)
        return bad(p, "magic", "not a tessel statistics file (bad magic)");
    if (h->bom != STATFILE_BOM)
        return bad(p, "byte_order", "written on a machine with the other byte order");
    if (h->version != STATFILE_VERSION && h->version != 1)
        return bad(p, "version", "format version %u; this tessel reads versions 1 and %u",
                   (unsigned)h->version, STATFILE_VERSION);
    if (h->header_bytes != STATFILE_HEADER_BYTES || header_checksum(h) != h->header_checksum)
        return bad(p, "header_checksum", "header checksum mismatch");
    if (h->flags != 0)
        return bad(p, "flags", "unknown flags 0x%x", (unsigned)h->flags);
    for (size_t i = 0; i < sizeof(h->zero); i++)
        if (h->zero[i])
            return bad(p, "reserved", "reserved header bytes are not zero");
    for (unsigned m = 0; m < 2; m++) {
        uint64_t d = h->dims[m];
        if (d > TESSEL_MAX_DIM)
            return bad(p, "dims", "dimension %u is %llu, above tessel's limit", m,
                       (unsigned long long)d);
        if (h->base[m] < 1 || h->base[m] > (d ? d : 1))
            return bad(p, "base", "base tile extent %llu of mode %u is not in 1..%llu",
                       (unsigned long long)h->base[m], m, (unsigned long long)(d ? d : 1));
        if (h->extent[m] != (d ? (d - 1) / h->base[m] + 1 : 0))
            return bad(p, "extent", "tile extent of mode %u is not ceil(dims / base)", m);
        if (h->ncorrs[m] != h->base[m])
            return bad(p, "ncorrs", "ncorrs[%u] = %llu, not the base tile extent %llu", m,
                       (unsigned long long)h->ncorrs[m], (unsigned long long)h->base[m]);
        uint64_t nt = h->extent[m] < STATFILE_TILE_CORRS_MAX ? h->extent[m]
                                                              : STATFILE_TILE_CORRS_MAX;
        if (h->ntile_corrs[m] != nt)
            return bad(p, "ntile_corrs", "ntile_corrs[%u] = %llu, expected %llu", m,
                       (unsigned long long)h->ntile_corrs[m], (unsigned long long)nt);
    }
    /* Dimensions are < 2^32, so these products fit. */
    uint64_t n = h->nonempty_tiles;
    if (h->nnz > h->dims[0] * h->dims[1])
        return bad(p, "nnz", "%llu nonzeros do not fit a %llu x %llu matrix",
                   (unsigned long long)h->nnz, (unsigned long long)h->dims[0],
                   (unsigned long long)h->dims[1]);
    if (n > h->extent[0] * h->extent[1] || n > h->nnz || (n == 0) != (h->nnz == 0))
        return bad(p, "nonempty_tiles", "%llu non-empty tiles is impossible for %llu nonzeros",
                   (unsigned long long)n, (unsigned long long)h->nnz);
    if (n ? h->max_tile < 1 || h->max_tile > h->nnz || h->max_tile > h->base[0] * h->base[1]
          : h->max_tile != 0)
        return bad(p, "max_tile", "MaxTile %llu is out of range", (unsigned long long)h->max_tile);
    if (!(h->sample_fraction > 0 && h->sample_fraction <= 1))
        return bad(p, "sample_fraction", "sample fraction is not in (0, 1]");
    if (h->sampled_tiles != expected_sample(n, h->sample_fraction))
        return bad(p, "sampled_tiles", "%llu sampled tiles disagree with the sample fraction",
                   (unsigned long long)h->sampled_tiles);
    if (!close_to(h->size_tile, n ? (double)h->nnz / (double)n : 0))
        return bad(p, "size_tile", "SizeTile is not nnz / nonempty_tiles");
    if (n ? !(h->size_tile_rows >= 1 && h->size_tile_rows <= (double)h->base[0] &&
              h->size_tile_rows <= h->size_tile)
          : h->size_tile_rows != 0)
        return bad(p, "size_tile_rows", "mean non-empty rows per tile is out of range");
    for (unsigned m = 0; m < 2; m++) {
        if (!in_unit(h->pr_tile_idx[m]))
            return bad(p, "pr_tile_idx", "PrTileIdx[%u] is not in [0, 1]", m);
        if (!in_unit(h->prob_index[m]))
            return bad(p, "prob_index", "ProbIndex[%u] is not in [0, 1]", m);
    }
    if (h->source_bytes > STATFILE_SOURCE_MAX)
        return bad(p, "source", "source identity of %llu bytes (at most %u)",
                   (unsigned long long)h->source_bytes, STATFILE_SOURCE_MAX);
    int ok = 0;
    uint64_t expect = payload_size(h, &ok);
    if (!ok || expect != h->payload_bytes)
        return bad(p, "payload_bytes", "payload size disagrees with the header's counts");
    if (total - STATFILE_HEADER_BYTES != h->payload_bytes)
        return bad(p, "payload_bytes",
                   "file is %llu bytes, its header says %llu (truncated or extended?)",
                   (unsigned long long)total,
                   (unsigned long long)(h->payload_bytes + STATFILE_HEADER_BYTES));
    return 0;
}

/* The payload arrays, wherever they live. */
typedef struct statfile_payload {
    double *corrs[2];
    double *tile_corrs[2];
    const tessel_tile_grid *grid;
    char *source; /* source_bytes bytes, not NUL-terminated */
} statfile_payload;

static int curve_problem(const double *v, uint64_t n, uint64_t nnz, const char *field,
                         unsigned m, problem *p)
{
    for (uint64_t s = 0; s < n; s++)
        if (!in_unit(v[s]))
            return bad(p, field, "%s[%u][%llu] is not in [0, 1]", field, m,
                       (unsigned long long)s);
    if (n && v[0] != (nnz ? 1.0 : 0.0))
        return bad(p, field, "%s[%u][0] is not %d", field, m, nnz ? 1 : 0);
    return 0;
}

/* The arrays against the header: curves in [0, 1] starting at 1, the grid
 * sorted and in range, its counts summing to nnz with MaxTile their
 * largest and eq. 9's PrTileIdx their tile-row fractions. */
static int payload_problem(const statfile_header *h, const statfile_payload *pl, problem *p)
{
    for (unsigned m = 0; m < 2; m++)
        if (curve_problem(pl->corrs[m], h->ncorrs[m], h->nnz, "corrs", m, p) ||
            curve_problem(pl->tile_corrs[m], h->ntile_corrs[m], h->nnz, "tile_corrs", m, p))
            return 1;
    uint64_t sum = 0, most = 0, rows = 0;
    const tessel_tile_grid *gr = pl->grid;
    if (gr->row[0] != 0 || gr->row[h->extent[0]] != h->nonempty_tiles)
        return bad(p, "grid", "row offsets do not span the %llu tiles",
                   (unsigned long long)h->nonempty_tiles);
    for (uint64_t g = 0; g < h->extent[0]; g++) {
        if (gr->row[g + 1] < gr->row[g] || gr->row[g + 1] > h->nonempty_tiles)
            return bad(p, "grid", "row offsets decrease at row of tiles %llu",
                       (unsigned long long)g);
        rows += gr->row[g + 1] > gr->row[g];
        for (uint64_t i = gr->row[g]; i < gr->row[g + 1]; i++) {
            uint64_t k = tessel_tile_grid_key(gr, i), c = tessel_tile_grid_count(gr, i);
            if (k >= h->extent[1])
                return bad(p, "grid", "tile %llu lies outside the %llu x %llu tile grid",
                           (unsigned long long)i, (unsigned long long)h->extent[0],
                           (unsigned long long)h->extent[1]);
            if (i > gr->row[g] && k <= tessel_tile_grid_key(gr, i - 1))
                return bad(p, "grid", "tiles are not sorted and unique at tile %llu",
                           (unsigned long long)i);
            if (c < 1 || c > h->max_tile || c > h->nnz - sum)
                return bad(p, "grid", "count of tile %llu is out of range",
                           (unsigned long long)i);
            sum += c;
            most = c > most ? c : most;
        }
    }
    if (sum != h->nnz)
        return bad(p, "grid", "tile counts sum to %llu, not nnz %llu", (unsigned long long)sum,
                   (unsigned long long)h->nnz);
    if (most != h->max_tile)
        return bad(p, "max_tile", "MaxTile is not the largest tile count");
    double n = (double)h->nonempty_tiles;
    double pr0 = rows ? (double)rows / (double)h->extent[0] : 0;
    double pr1 = rows ? n / (double)rows / (double)h->extent[1] : 0;
    if (!close_to(h->pr_tile_idx[0], pr0) || !close_to(h->pr_tile_idx[1], pr1))
        return bad(p, "pr_tile_idx", "PrTileIdx disagrees with the tile grid");
    if (h->source_bytes && memchr(pl->source, '\0', h->source_bytes))
        return bad(p, "source", "source identity holds a NUL byte");
    return 0;
}

/* ------------------------------------------------------------------ */
/* Reading */

typedef struct statfile_input {
    const char *name;
    int fd;
    const unsigned char *mem;
    uint64_t size, pos;
} statfile_input;

static int input_read(statfile_input *in, void *dst, uint64_t n)
{
    if (n > in->size - in->pos)
        return TESSEL_ECORRUPT;
    if (in->mem) {
        if (n)
            memcpy(dst, in->mem + in->pos, n);
        in->pos += n;
        return TESSEL_OK;
    }
    int rc = tessel_read_full(in->fd, dst, n);
    if (rc == TESSEL_OK)
        in->pos += n;
    return rc;
}

/* Reads count*size bytes into dst (allocated by the caller), checksumming. */
static int read_into(statfile_input *in, void *dst, uint64_t bytes, tessel_checksum *sum)
{
    unsigned char *b = dst;
    for (uint64_t done = 0; done < bytes;) {
        uint64_t n = bytes - done < STATFILE_CHUNK ? bytes - done : STATFILE_CHUNK;
        int rc = input_read(in, b + done, n);
        if (rc)
            return rc;
        tessel_checksum_update(sum, b + done, n);
        done += n;
    }
    return TESSEL_OK;
}

static int corrupt(tessel_diag *diag, const char *name, const problem *p)
{
    return tessel_diag_set(diag, TESSEL_ECORRUPT, name, 0, 0, p->field,
                           "corrupt statistics file: %s: %s (rewrite it with tessel stats "
                           "--save)",
                           p->field, p->why);
}

/* Allocates what the header promises; arrays of 0 entries stay NULL. */
static int alloc_outputs(const statfile_header *h, const tessel_allocator *a,
                         tessel_d2t2_stats **sp, tessel_tile_grid **gp)
{
    tessel_d2t2_stats *s = tessel_alloc(a, sizeof(*s));
    if (!s)
        return TESSEL_ENOMEM;
    memset(s, 0, sizeof(*s));
    s->alloc = a;
    *sp = s;
    for (unsigned m = 0; m < 2; m++) {
        s->ncorrs[m] = h->ncorrs[m];
        s->ntile_corrs[m] = h->ntile_corrs[m];
        if (h->ncorrs[m] && !(s->corrs[m] = tessel_alloc_array(a, h->ncorrs[m], sizeof(double))))
            return TESSEL_ENOMEM;
        if (h->ntile_corrs[m] &&
            !(s->tile_corrs[m] = tessel_alloc_array(a, h->ntile_corrs[m], sizeof(double))))
            return TESSEL_ENOMEM;
    }
    tessel_tile_grid *g = tessel_alloc(a, sizeof(*g));
    if (!g)
        return TESSEL_ENOMEM;
    memset(g, 0, sizeof(*g));
    g->alloc = a;
    *gp = g;
    uint64_t n = h->nonempty_tiles;
    if (h->version == 1) /* read into per-tile arrays, then converted */
        return TESSEL_OK;
    if (!(g->row = tessel_alloc_array(a, h->extent[0] + 1, sizeof(uint64_t))))
        return TESSEL_ENOMEM;
    if (n && (!(g->key32 = tessel_alloc_array(a, n, sizeof(uint32_t))) ||
              (count_bytes(h) == 4 ? !(g->count32 = tessel_alloc_array(a, n, sizeof(uint32_t)))
                                   : !(g->count64 = tessel_alloc_array(a, n, sizeof(uint64_t))))))
        return TESSEL_ENOMEM;
    return TESSEL_OK;
}

/* Version 2's grid arrays and their zero padding. */
static int read_grid(statfile_input *in, const statfile_header *h, tessel_tile_grid *g,
                     tessel_checksum *sum, problem *p)
{
    uint64_t n = h->nonempty_tiles, cb = count_bytes(h);
    int rc = read_into(in, g->row, (h->extent[0] + 1) * 8, sum);
    if (!rc)
        rc = read_into(in, g->key32, n * 4, sum);
    if (!rc)
        rc = read_into(in, cb == 4 ? (void *)g->count32 : (void *)g->count64, n * cb, sum);
    unsigned char pad[8] = { 0 };
    uint64_t npad = grid_bytes(h) - (h->extent[0] + 1) * 8 - n * (4 + cb);
    if (!rc)
        rc = read_into(in, pad, npad, sum);
    for (unsigned i = 0; !rc && i < npad; i++)
        if (pad[i])
            return bad(p, "grid", "padding after the grid is not zero") ? TESSEL_ECORRUPT : 0;
    return rc;
}

/* Version 1's per-tile u64 group, key and count arrays, read and converted
 * to a grid (tessel_tile_grid_assemble checks their order and ranges). */
static int read_grid_v1(statfile_input *in, const statfile_header *h, const tessel_allocator *a,
                        tessel_tile_grid **gp, tessel_checksum *sum, problem *p)
{
    uint64_t n = h->nonempty_tiles, *arr[3] = { NULL, NULL, NULL };
    int rc = TESSEL_OK;
    for (unsigned k = 0; k < 3 && !rc; k++) {
        if (n && !(arr[k] = tessel_alloc_array(a, n, sizeof(uint64_t))))
            rc = TESSEL_ENOMEM;
        if (!rc)
            rc = read_into(in, arr[k], n * 8, sum);
    }
    tessel_tile_grid *g = NULL;
    tessel_diag d;
    if (!rc) {
        uint64_t dims[2] = { h->dims[0], h->dims[1] }, tile[2] = { h->base[0], h->base[1] };
        rc = tessel_tile_grid_assemble(2, dims, tile, h->nnz, n, arr[0], arr[1], arr[2], a, &g,
                                       &d);
        if (rc && rc != TESSEL_ENOMEM) {
            bad(p, "grid", "%s", d.message);
            rc = TESSEL_ECORRUPT;
        }
    }
    for (unsigned k = 0; k < 3; k++)
        tessel_dealloc(a, arr[k]);
    if (!rc) {
        tessel_tile_grid_free(gp);
        *gp = g;
    }
    return rc;
}

static void fill_outputs(const statfile_header *h, tessel_d2t2_stats *s, tessel_tile_grid *g)
{
    for (unsigned m = 0; m < 2; m++) {
        s->dims[m] = g->dims[m] = h->dims[m];
        s->base[m] = g->tile[m] = h->base[m];
        s->extent[m] = g->extent[m] = h->extent[m];
        s->pr_tile_idx[m] = h->pr_tile_idx[m];
        s->prob_index[m] = h->prob_index[m];
    }
    g->order = 2;
    s->nnz = g->nnz = h->nnz;
    s->nonempty_tiles = g->nonempty = h->nonempty_tiles;
    s->max_tile = h->max_tile;
    s->size_tile = h->size_tile;
    s->size_tile_rows = h->size_tile_rows;
    s->sample_fraction = h->sample_fraction;
    s->seed = h->seed;
    s->sampled_tiles = h->sampled_tiles;
}

/* Reads and checks a .tstat file: header, checksum, then the D2T2 statistics and the
 * tile grid it holds. */
static int load(statfile_input *in, const tessel_allocator *a, tessel_d2t2_stats **sp,
                tessel_tile_grid **gp, char *source, size_t source_size, tessel_diag *diag)
{
    statfile_header h;
    problem p = { NULL, { 0 } };
    if (in->size < STATFILE_HEADER_BYTES) {
        bad(&p, "header", "shorter than its %u-byte header", STATFILE_HEADER_BYTES);
        return corrupt(diag, in->name, &p);
    }
    int rc = input_read(in, &h, sizeof(h));
    if (rc == TESSEL_EIO)
        return tessel_diag_set(diag, rc, in->name, 0, 0, NULL, "read failed: %s",
                               strerror(errno));
    if (rc || header_problem(&h, in->size, &p)) {
        if (rc)
            bad(&p, "header", "truncated header");
        return corrupt(diag, in->name, &p);
    }
    tessel_d2t2_stats *s = NULL;
    tessel_tile_grid *g = NULL;
    char text[STATFILE_SOURCE_MAX + 1];
    rc = alloc_outputs(&h, a, &s, &g);
    statfile_payload pl = { { s ? s->corrs[0] : NULL, s ? s->corrs[1] : NULL },
                            { s ? s->tile_corrs[0] : NULL, s ? s->tile_corrs[1] : NULL },
                            NULL,
                            text };
    tessel_checksum sum;
    tessel_checksum_init(&sum);
    for (unsigned m = 0; m < 2 && !rc; m++)
        rc = read_into(in, pl.corrs[m], h.ncorrs[m] * 8, &sum);
    for (unsigned m = 0; m < 2 && !rc; m++)
        rc = read_into(in, pl.tile_corrs[m], h.ntile_corrs[m] * 8, &sum);
    if (!rc)
        rc = h.version == 1 ? read_grid_v1(in, &h, a, &g, &sum, &p)
                            : read_grid(in, &h, g, &sum, &p);
    pl.grid = g;
    if (!rc)
        rc = read_into(in, text, h.source_bytes, &sum);
    if (rc == TESSEL_ENOMEM) { /* the arrays the header promises */
        rc = tessel_diag_oom(diag, in->name, "reading a statistics file's arrays",
                             (size_t)((h.ncorrs[0] + h.ncorrs[1] + h.ntile_corrs[0] +
                                       h.ntile_corrs[1]) * 8 + grid_bytes(&h)));
    } else if (rc == TESSEL_ECORRUPT && p.field) {
        rc = corrupt(diag, in->name, &p);
    } else if (rc == TESSEL_EIO) {
        rc = tessel_diag_set(diag, rc, in->name, 0, 0, NULL, "read failed: %s", strerror(errno));
    } else if (rc) {
        bad(&p, "payload", "truncated payload");
        rc = corrupt(diag, in->name, &p);
    } else if (tessel_checksum_final(&sum) != h.payload_checksum) {
        bad(&p, "payload_checksum", "payload checksum mismatch");
        rc = corrupt(diag, in->name, &p);
    } else if (payload_problem(&h, &pl, &p)) {
        rc = corrupt(diag, in->name, &p);
    }
    if (rc) {
        tessel_d2t2_free(&s);
        tessel_tile_grid_free(&g);
        return rc;
    }
    fill_outputs(&h, s, g);
    if (source && source_size) {
        /* Truncated to the caller's buffer, always NUL-terminated. */
        size_t len = h.source_bytes < source_size - 1 ? (size_t)h.source_bytes : source_size - 1;
        memcpy(source, text, len);
        source[len] = '\0';
    }
    if (sp)
        *sp = s;
    else
        tessel_d2t2_free(&s);
    if (gp)
        *gp = g;
    else
        tessel_tile_grid_free(&g);
    return TESSEL_OK;
}

static void clear_outputs(tessel_d2t2_stats **s, tessel_tile_grid **grid, char *source,
                          size_t source_size)
{
    if (s)
        *s = NULL;
    if (grid)
        *grid = NULL;
    if (source && source_size)
        source[0] = '\0';
}

int tessel_statfile_read(const char *path, const tessel_allocator *a, tessel_d2t2_stats **s,
                         tessel_tile_grid **grid, char *source, size_t source_size,
                         tessel_diag *diag)
{
    clear_outputs(s, grid, source, source_size);
    statfile_input in = { path, tessel_input_open(path, diag), NULL, 0, 0 };
    if (in.fd < 0)
        return in.fd;
    struct stat st;
    int rc;
    if (fstat(in.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "not a regular file");
    } else {
        in.size = (uint64_t)st.st_size;
        rc = load(&in, a, s, grid, source, source_size, diag);
    }
    close(in.fd);
    return rc;
}

int tessel_statfile_parse(const char *name, const void *data, size_t size,
                          const tessel_allocator *a, tessel_d2t2_stats **s,
                          tessel_tile_grid **grid, char *source, size_t source_size,
                          tessel_diag *diag)
{
    clear_outputs(s, grid, source, source_size);
    if (!data && size)
        return tessel_diag_set(diag, TESSEL_EINVAL, name, 0, 0, NULL, "no data");
    statfile_input in = { name ? name : "(memory)", -1, data, size, 0 };
    return load(&in, a, s, grid, source, source_size, diag);
}

/* ------------------------------------------------------------------ */
/* Writing */

static int grid_mismatch(const tessel_d2t2_stats *s, const tessel_tile_grid *g)
{
    if (g->order != 2 || g->nnz != s->nnz || g->nonempty != s->nonempty_tiles)
        return 1;
    for (unsigned m = 0; m < 2; m++) {
        /* A grid keeps its tile shape uncut (grid.c); compare it cut. */
        uint64_t d = g->dims[m];
        uint64_t cut = g->tile[m] < d ? g->tile[m] : (d ? d : 1);
        if (g->dims[m] != s->dims[m] || cut != s->base[m] || g->extent[m] != s->extent[m])
            return 1;
    }
    return 0;
}

static void fill_header(const tessel_d2t2_stats *s, uint64_t source_bytes, statfile_header *h)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, STATFILE_MAGIC, 8);
    h->version = STATFILE_VERSION;
    h->header_bytes = STATFILE_HEADER_BYTES;
    h->bom = STATFILE_BOM;
    for (unsigned m = 0; m < 2; m++) {
        h->dims[m] = s->dims[m];
        h->base[m] = s->base[m];
        h->extent[m] = s->extent[m];
        h->pr_tile_idx[m] = s->pr_tile_idx[m];
        h->prob_index[m] = s->prob_index[m];
        h->ncorrs[m] = s->ncorrs[m];
        h->ntile_corrs[m] = s->ntile_corrs[m];
    }
    h->nnz = s->nnz;
    h->nonempty_tiles = s->nonempty_tiles;
    h->max_tile = s->max_tile;
    h->sampled_tiles = s->sampled_tiles;
    h->seed = s->seed;
    h->sample_fraction = s->sample_fraction;
    h->size_tile = s->size_tile;
    h->size_tile_rows = s->size_tile_rows;
    h->source_bytes = source_bytes;
}

/* Writes s and its base grid as a version 2 file, after the reader's checks. */
int tessel_statfile_write(const char *path, const tessel_d2t2_stats *s,
                          const tessel_tile_grid *grid, const char *source, tessel_diag *diag)
{
    if (!path || !s || !grid)
        return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, NULL,
                               "a statistics file needs a path, statistics and their grid");
    if (grid_mismatch(s, grid))
        return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, "grid",
                               "the tile grid is not the base grid of these statistics");
    size_t len = source ? strlen(source) : 0;
    if (len > STATFILE_SOURCE_MAX)
        return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, "source",
                               "source identity of %zu bytes (at most %u)", len,
                               STATFILE_SOURCE_MAX);
    statfile_header h;
    fill_header(s, len, &h);
    statfile_payload pl = { { s->corrs[0], s->corrs[1] },
                            { s->tile_corrs[0], s->tile_corrs[1] },
                            grid,
                            (char *)(uintptr_t)(source ? source : "") };
    /* The stored widths are the grid's: 32-bit keys (a column of tiles <
     * 2^32), counts 64-bit exactly when a tile holds 2^32 or more. */
    uint64_t n = h.nonempty_tiles, cb = count_bytes(&h);
    if (!grid->row || (n && (!grid->key32 || (cb == 4 ? !grid->count32 : !grid->count64))))
        return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, "grid",
                               "the tile grid's count width disagrees with its MaxTile");
    static const unsigned char zeros[8] = { 0 };
    uint64_t row_bytes = (h.extent[0] + 1) * 8;
    uint64_t pad = grid_bytes(&h) - row_bytes - n * (4 + cb);
    typedef struct { const void *data; uint64_t bytes; } piece;
    piece parts[9] = {
        { pl.corrs[0], h.ncorrs[0] * 8 },          { pl.corrs[1], h.ncorrs[1] * 8 },
        { pl.tile_corrs[0], h.ntile_corrs[0] * 8 }, { pl.tile_corrs[1], h.ntile_corrs[1] * 8 },
        { grid->row, row_bytes },
        { grid->key32, n * 4 },
        { cb == 4 ? (const void *)grid->count32 : (const void *)grid->count64, n * cb },
        { zeros, pad },                            { pl.source, len },
    };
    tessel_checksum sum;
    tessel_checksum_init(&sum);
    for (unsigned i = 0; i < 9; i++)
        if (parts[i].bytes)
            tessel_checksum_update(&sum, parts[i].data, parts[i].bytes);
    int ok = 0;
    h.payload_bytes = payload_size(&h, &ok);
    h.payload_checksum = tessel_checksum_final(&sum);
    h.header_checksum = header_checksum(&h);
    problem p = { NULL, { 0 } };
    if (!ok || header_problem(&h, h.payload_bytes + STATFILE_HEADER_BYTES, &p) ||
        payload_problem(&h, &pl, &p))
        return tessel_diag_set(diag, TESSEL_EINVAL, path, 0, 0, p.field,
                               "refusing to write inconsistent statistics: %s: %s",
                               p.field ? p.field : "payload_bytes", p.field ? p.why : "overflow");
    tessel_outfile *f = NULL;
    int rc = tessel_outfile_open(path, s->alloc, &f, diag);
    if (rc)
        return rc;
    FILE *out = tessel_outfile_stream(f);
    int failed = fwrite(&h, sizeof(h), 1, out) != 1;
    for (unsigned i = 0; i < 9 && !failed; i++)
        failed = parts[i].bytes && fwrite(parts[i].data, 1, parts[i].bytes, out) != parts[i].bytes;
    if (failed) {
        return tessel_outfile_abort_failed(&f, diag);
    }
    return tessel_outfile_commit(&f, diag);
}

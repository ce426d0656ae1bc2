/* Saved stat-estimator statistics (.tsd): everything tessel_model_stat_eval
 * reads, so that design points are evaluated later, or by a sweep, without
 * the data: the workload's roles, every input's base grid, line counts and
 * Corrs, and the output sample.
 *
 * Layout (little-endian):
 *   offset size  field
 *        0    8  magic "TESSELD\n"
 *        8    4  version (TSD_VERSION)      12  4  header size (64)
 *       16    4  byte-order mark 0x01020304 20  4  flags (0)
 *       24    8  payload size               32  8  payload checksum
 *       40   16  zero                       56  8  checksum of bytes 0..55
 *   payload: a sequence of u64 / f64 / u32-array records written by the
 *   put_* functions below, in the order read back by the get_* ones.
 *
 * Nothing read is trusted: sizes are checked against the payload before
 * anything is allocated, both checksums are verified, and the contents are
 * checked (roles in range, grids sorted and within their extents with
 * positive counts summing to nnz, sample cells within their extents,
 * finite non-negative weights) before the statistics are returned. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stat_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the .tsd format is little-endian"
#endif

#define TSD_MAGIC "TESSELD\n"
/* 2: the output sample's nnz_stderr after nnz; 3: its predictions per i
 * cell (xcell, vcell) at its end; 4: rule 3's symbolic output count after
 * the sample (a flag, then nonzeros, rows, fibres). 1 to 3 are still read
 * (without them, the nested output spill is priced from the sample alone;
 * before 4, compulsory_bytes takes the estimated output count); 5: after
 * the count, whether the sample's predictions are the rows' exact
 * nonzeros (sample.xexact; before 5: sketches); 6: after it, the output's
 * exact nonzeros per k cell of their first multiply (sample.first_k;
 * before 6: none, the one-level written nonzeros are then the sample's
 * sum); 7: at the end, per saved input a flag and, set, its base tiles'
 * non-empty rows, its rows of tiles' and its trie nodes' (tessel_tile_rows;
 * before 7: none,
 * the lists that read a tile's rows are priced from its nonzeros alone and
 * tiled-csf at its worst case, docs/models/stat.md); 8: after them, per
 * saved input a flag and, set, the same statistic for its columns
 * (tessel_tile_grid_cols, in the transposed base grid's order; before 8:
 * none, the in-visit output spill takes the uniform step count); 9: both
 * sections' per-tile counts (tiles, nodes) in 1 byte when the tile's edge
 * along the counted mode is at most 255, 2 when at most 65535, else 4 (a
 * u64 width after each flag), and the columns in the base grid's own
 * order. 1 to 8
 * are still read (8's columns permuted to the base grid's order, 7 and 8's
 * counts narrowed); 10: after them, per saved input a flag and, set, its
 * base tiles' nonzeros whose transpose is one too (tessel_tile_grid_sym:
 * a u64 width, the u64 total, each tile's count in that width, padded to
 * 8; before 10: none, the step count takes A's and B's k independent on
 * every tile); then a flag and, set, the output's exact nonzeros per
 * (i cell, first k cell) (sample.first_cells: tessel_first_cells' edges,
 * cell counts, offsets, k cells, counts; before 10: none, the nested
 * written nonzeros take the per-tile-row ratio). */
#define TSD_VERSION 10u
#define TSD_HEADER 64u
#define TSD_BOM 0x01020304u
#define TSD_MAX_BYTES (UINT64_C(1) << 40)

typedef struct tsd_header {
    char magic[8];
    uint32_t version, header_bytes, bom, flags;
    uint64_t payload_bytes, payload_checksum;
    unsigned char zero[16];
    uint64_t header_checksum;
} tsd_header;

_Static_assert(sizeof(tsd_header) == TSD_HEADER, "tsd header layout");

/* ------------------------------------------------------------------ */
/* Writing: into a growable buffer, then one atomic file. */

typedef struct writer {
    const tessel_allocator *alloc;
    unsigned char *buf;
    uint64_t n, cap;
    int failed;
    uint64_t asked; /* failed: the size the buffer asked for */
} writer;

static void put(writer *w, const void *p, uint64_t n)
{
    if (w->failed)
        return;
    if (w->n + n > w->cap) {
        uint64_t cap = w->cap ? w->cap : 4096;
        while (cap < w->n + n)
            cap *= 2;
        unsigned char *b = tessel_realloc_array(w->alloc, w->buf, cap, 1);
        if (!b) {
            w->failed = 1;
            w->asked = cap;
            return;
        }
        w->buf = b;
        w->cap = cap;
    }
    if (n)
        memcpy(w->buf + w->n, p, n);
    w->n += n;
}

static void put_u64(writer *w, uint64_t v)
{
    put(w, &v, 8);
}

static void put_f64(writer *w, double v)
{
    put(w, &v, 8);
}

static void put_u64s(writer *w, const uint64_t *v, uint64_t n)
{
    put_u64(w, n);
    put(w, v, n * 8);
}

static void put_u32s(writer *w, const uint32_t *v, uint64_t n)
{
    put_u64(w, n);
    put(w, v, n * 4);
    if (n % 2)
        put(w, "\0\0\0\0", 4); /* keep records 8-byte aligned */
}

static void put_f64s(writer *w, const double *v, uint64_t n)
{
    put_u64(w, n);
    put(w, v, n * 8);
}

/* Per-tile counts of tr's width: count, values, zero padding to 8. */
static void put_counts(writer *w, const tessel_tile_rows *tr, int node)
{
    put_u64(w, tr->n);
    put(w, node ? tr->node : tr->rows, tr->n * tr->width);
    uint64_t bytes = tr->n * tr->width;
    if (bytes % 8)
        put(w, "\0\0\0\0\0\0\0\0", 8 - bytes % 8);
}

/* Version 9's rows or columns statistic of one input: a flag and, set,
 * the counts' width (1, 2 or 4 bytes), each tile's count, each strip's
 * (u32) and each node's. */
static void put_tile_rows(writer *w, const tessel_tile_rows *tr)
{
    put_u64(w, tr != NULL);
    if (!tr)
        return;
    put_u64(w, tr->width);
    put_counts(w, tr, 0);
    put_u32s(w, tr->strip, tr->nstrips);
    put_counts(w, tr, 1);
}

/* Version 10's transposed pairs of one input: a flag and, set, the
 * counts' width, their total and each tile's count. */
static void put_tile_sym(writer *w, const tessel_tile_sym *ts)
{
    put_u64(w, ts != NULL);
    if (!ts)
        return;
    put_u64(w, ts->width);
    put_u64(w, ts->total);
    put_u64(w, ts->n);
    put(w, ts->count, ts->n * ts->width);
    if (ts->n * ts->width % 8)
        put(w, "\0\0\0\0\0\0\0\0", 8 - ts->n * ts->width % 8);
}

/* The sample's float weights and 32-bit group starts, saved as doubles
 * and 64-bit offsets (the file format predates them). */
static void put_f32s_wide(writer *w, const float *v, uint64_t n)
{
    put_u64(w, n);
    for (uint64_t i = 0; i < n; i++)
        put_f64(w, v[i]);
}

static void put_u32s_wide(writer *w, const uint32_t *v, uint64_t n)
{
    put_u64(w, n);
    for (uint64_t i = 0; i < n; i++)
        put_u64(w, v[i]);
}

/* Length, bytes, zero padding to 8. */
static void put_string(writer *w, const char *str)
{
    uint64_t len = strlen(str);
    put_u64(w, len);
    put(w, str, len);
    while (w->n % 8)
        put(w, "", 1);
}

static void put_operand(writer *w, const operand *o)
{
    put_u64(w, o->order);
    for (unsigned m = 0; m < 3; m++)
        put_u64(w, o->x[m]);
    put_u64(w, o->spec_tensor);
    put_u64(w, o->ranks);
}

/* The grid's tiles as the .tsd stores them: u64 arrays of every tile's
 * row of tiles, key and count (the in-memory grid is more compact). */
static void put_grid_tiles(writer *w, const tessel_tile_grid *g)
{
    put_u64(w, g->nonempty);
    for (uint64_t t = 0, gr = 0; t < g->nonempty; t++)
        put_u64(w, gr = tessel_tile_grid_group_from(g, t, gr));
    put_u64(w, g->nonempty);
    for (uint64_t t = 0; t < g->nonempty; t++)
        put_u64(w, tessel_tile_grid_key(g, t));
    put_u64(w, g->nonempty);
    for (uint64_t t = 0; t < g->nonempty; t++)
        put_u64(w, tessel_tile_grid_count(g, t));
}

static void put_input(writer *w, const stat_input *in)
{
    const tessel_tile_grid *g = in->grid;
    put_u64(w, g->order);
    for (unsigned m = 0; m < 3; m++) {
        put_u64(w, m < g->order ? g->dims[m] : 0);
        put_u64(w, m < g->order ? g->tile[m] : 0);
    }
    put_u64(w, g->nnz);
    put_grid_tiles(w, g);
    put_u64(w, in->dims[0]);
    put_u64(w, in->dims[1]);
    put_u64s(w, in->line_nnz[0], in->dims[0]);
    put_u64s(w, in->line_nnz[1], in->dims[1]);
    for (unsigned m = 0; m < 2; m++)
        put_f64s(w, in->d2t2 ? in->d2t2->corrs[m] : NULL, in->d2t2 ? in->d2t2->ncorrs[m] : 0);
}

static void put_sample(writer *w, const stat_output_sample *s)
{
    put_u64(w, s->rows);
    put_u64(w, s->sampled_rows);
    put_u64(w, (uint64_t)s->whole);
    put_f64(w, s->flops);
    put_f64(w, s->sampled_flops);
    put_f64(w, s->nnz);
    put_f64(w, s->nnz_stderr);
    put_u64(w, s->sampled_nnz);
    for (unsigned m = 0; m < 4; m++)
        put_u64(w, s->base[m]);
    put_u32s(w, s->ci, s->ncells);
    put_u32s(w, s->cx, s->ncells);
    put_u32s(w, s->cj, s->ncells);
    put_u32s(w, s->ck, s->ncells);
    put_f32s_wide(w, s->weight, s->ncells);
    put_u32s_wide(w, s->gstart, s->ncells ? s->ngroups + 1 : 0);
    put_u32s(w, s->ei, s->nelems);
    put_u32s(w, s->er, s->nelems);
    put_f64s(w, s->ew, s->nelems);
    put_u64s(w, s->eptr, s->nelems ? s->nelems + 1 : 0);
    uint64_t m = s->nelems ? s->eptr[s->nelems] : 0;
    put_u32s(w, s->ej, m);
    put_u32s(w, s->ek, m);
    put_f64s(w, s->xcell, s->xcell && s->vcell ? s->nxcell : 0);
    put_f64s(w, s->vcell, s->xcell && s->vcell ? s->nxcell : 0);
}

/* Version 10: a flag, then the sample's (i cell, first k cell) counts. */
static void put_first_cells(writer *w, const stat_output_sample *s)
{
    const tessel_first_cells *fc = s ? &s->fc : NULL;
    put_u64(w, fc && fc->ptr ? 1 : 0);
    if (!fc || !fc->ptr)
        return;
    put_u64(w, fc->edge_i);
    put_u64(w, fc->edge_k);
    put_u64(w, fc->ni);
    put_u64(w, fc->nk);
    put_u64s(w, fc->ptr, fc->ni + 1);
    put_u32s(w, fc->kcell, fc->nentries);
    put_f64s(w, fc->nnz, fc->nentries);
}

/* Encodes s (roles, inputs, sample, rule 3's output count) and writes it
 * as one atomic .tsd file. */
int tessel_stat_data_save(const tessel_stat_data *s, const char *path, tessel_diag *diag)
{
    const stat_data_view v = stat_data_view_of(s);
    writer w = { .alloc = v.alloc };
    put_string(&w, v.einsum);
    put_string(&w, v.label);
    const engine *e = v.e;
    put_u64(&w, (uint64_t)e->kind);
    put_u64(&w, e->nx);
    for (unsigned x = 0; x < NX; x++) {
        put_u64(&w, (uint64_t)(int64_t)e->spec_index[x]);
        put_u64(&w, e->extent[x]);
    }
    put_u64(&w, e->nin);
    for (unsigned i = 0; i < e->nin; i++)
        put_operand(&w, &e->in[i]);
    put_operand(&w, &e->out);
    put_u64(&w, e->nred);
    put_u64(&w, e->red[0]);
    put_u64(&w, e->red[1]);
    for (unsigned i = 0; i < e->nin; i++) {
        put_u64(&w, (uint64_t)(int64_t)v.same_as[i]);
        if (v.same_as[i] < 0)
            put_input(&w, &v.in[i]);
    }
    put_u64(&w, (uint64_t)*v.has_sample);
    if (*v.has_sample)
        put_sample(&w, v.sample);
    put_u64(&w, (uint64_t)*v.count_exact);
    put_u64(&w, v.count->nnz);
    put_u64(&w, v.count->rows);
    put_u64(&w, v.count->fibers);
    put_u64(&w, (uint64_t)(*v.has_sample && v.sample->xexact));
    uint64_t nf = *v.has_sample ? v.sample->nfk : 0;
    put_f64s(&w, nf ? v.sample->fknnz : NULL, nf);
    for (unsigned i = 0; i < e->nin; i++)
        if (v.same_as[i] < 0)
            put_tile_rows(&w, v.in[i].rows);
    for (unsigned i = 0; i < e->nin; i++)
        if (v.same_as[i] < 0)
            put_tile_rows(&w, v.in[i].cols);
    for (unsigned i = 0; i < e->nin; i++)
        if (v.same_as[i] < 0)
            put_tile_sym(&w, v.in[i].sym);
    put_first_cells(&w, *v.has_sample ? v.sample : NULL);
    if (w.failed) {
        tessel_dealloc(v.alloc, w.buf);
        return tessel_diag_oom(diag, path, "encoding the statistics file", (size_t)w.asked);
    }
    tsd_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, TSD_MAGIC, 8);
    h.version = TSD_VERSION;
    h.header_bytes = TSD_HEADER;
    h.bom = TSD_BOM;
    h.payload_bytes = w.n;
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, w.buf, w.n);
    h.payload_checksum = tessel_checksum_final(&c);
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, &h, offsetof(tsd_header, header_checksum));
    h.header_checksum = tessel_checksum_final(&c);
    tessel_outfile *f = NULL;
    int rc = tessel_outfile_open(path, v.alloc, &f, diag);
    if (!rc) {
        FILE *out = tessel_outfile_stream(f);
        if (fwrite(&h, sizeof(h), 1, out) != 1 || (w.n && fwrite(w.buf, w.n, 1, out) != 1)) {
            tessel_outfile_abort(&f);
            rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL,
                                 "cannot write the statistics file");
        } else {
            rc = tessel_outfile_commit(&f, diag);
        }
    }
    tessel_dealloc(v.alloc, w.buf);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Reading. */

typedef struct reader {
    const unsigned char *p;
    uint64_t n, at;
    const char *name;
    const tessel_allocator *alloc;
    tessel_diag *diag;
    int bad;
    char field[64];
    uint32_t version;
} reader;

static int corrupt(reader *r, const char *field)
{
    if (!r->bad) {
        r->bad = 1;
        snprintf(r->field, sizeof(r->field), "%s", field);
    }
    return 0;
}

static uint64_t get_u64(reader *r, const char *field)
{
    uint64_t v = 0;
    if (r->bad || r->n - r->at < 8)
        return corrupt(r, field), 0;
    memcpy(&v, r->p + r->at, 8);
    r->at += 8;
    return v;
}

static double get_f64(reader *r, const char *field)
{
    double v = 0;
    if (r->bad || r->n - r->at < 8)
        return corrupt(r, field), 0;
    memcpy(&v, r->p + r->at, 8);
    r->at += 8;
    if (!isfinite(v) || v < 0)
        return corrupt(r, field), 0;
    return v;
}

/* An array of n elements of `size` bytes (n must be `want`, or anything
 * when want is UINT64_MAX), allocated; NULL and bad on any mismatch. */
static void *get_array(reader *r, size_t size, uint64_t want, uint64_t *count, const char *field)
{
    uint64_t n = get_u64(r, field);
    if (r->bad)
        return NULL;
    uint64_t bytes = n * size, padded = size == 4 && n % 2 ? bytes + 4 : bytes;
    if ((want != UINT64_MAX && n != want) || n > (r->n - r->at) / size || padded > r->n - r->at) {
        corrupt(r, field);
        return NULL;
    }
    void *a = tessel_alloc_array(r->alloc, n ? n : 1, size);
    if (!a) {
        corrupt(r, "out of memory");
        return NULL;
    }
    if (bytes)
        memcpy(a, r->p + r->at, bytes);
    r->at += padded;
    if (count)
        *count = n;
    return a;
}

static int get_string(reader *r, char *dst, uint64_t room, const char *field)
{
    uint64_t len = get_u64(r, field);
    uint64_t padded = (len + 7) / 8 * 8;
    if (r->bad || len >= room || padded > r->n - r->at)
        return corrupt(r, field);
    memcpy(dst, r->p + r->at, len);
    dst[len] = '\0';
    if (memchr(dst, '\0', len))
        return corrupt(r, field);
    r->at += padded;
    return 1;
}

static int get_operand(reader *r, operand *o, unsigned nx)
{
    o->order = (unsigned)get_u64(r, "operand.order");
    for (unsigned m = 0; m < 3; m++)
        o->x[m] = (unsigned)get_u64(r, "operand.x");
    o->spec_tensor = (unsigned)get_u64(r, "operand.tensor");
    o->ranks = (unsigned)get_u64(r, "operand.ranks");
    if (r->bad)
        return 0;
    if (o->order < 2 || o->order > 3 || o->ranks < 1 || o->ranks > 3 ||
        o->spec_tensor >= TESSEL_SPEC_MAX_TENSORS)
        return corrupt(r, "operand");
    for (unsigned m = 0; m < o->order; m++)
        if (o->x[m] >= nx)
            return corrupt(r, "operand.x");
    return 1;
}

/* The saved per-tile arrays as a grid: tessel_tile_grid_assemble checks
 * them against the shape (sorted, inside the extents, counts positive and
 * summing to nnz); 0 and r marked corrupt when they fail or memory runs out. */
static int grid_ok(reader *r, tessel_tile_grid **gp, uint64_t *arr[3])
{
    tessel_tile_grid *g = *gp, *out = NULL;
    int rc = tessel_tile_grid_assemble(g->order, g->dims, g->tile, g->nnz, g->nonempty, arr[0],
                                       arr[1], arr[2], r->alloc, &out, NULL);
    for (unsigned k = 0; k < 3; k++)
        tessel_dealloc(r->alloc, arr[k]);
    if (rc)
        return corrupt(r, rc == TESSEL_ENOMEM ? "out of memory" : "grid");
    tessel_tile_grid_free(gp);
    *gp = out;
    return 1;
}

/* Reads one input's saved statistics (grid shape, per-tile counts, line counts) from
 * a stat file, checking each field as it goes. */
static int get_input(reader *r, stat_input *in)
{
    memset(in, 0, sizeof(*in));
    tessel_tile_grid *g = tessel_alloc(r->alloc, sizeof(*g));
    if (!g)
        return corrupt(r, "out of memory");
    memset(g, 0, sizeof(*g));
    g->alloc = r->alloc;
    in->grid = g;
    g->order = (unsigned)get_u64(r, "grid.order");
    if (g->order < 2 || g->order > 3)
        return corrupt(r, "grid.order");
    for (unsigned m = 0; m < 3; m++) {
        uint64_t d = get_u64(r, "grid.dims"), t = get_u64(r, "grid.tile");
        if (m < g->order) {
            if (!d || !t || d > TESSEL_MAX_DIM || t > d)
                return corrupt(r, "grid.dims");
            g->dims[m] = d;
            g->tile[m] = t;
            g->extent[m] = (d + t - 1) / t;
        }
    }
    g->nnz = get_u64(r, "grid.nnz");
    uint64_t *arr[3];
    arr[0] = get_array(r, 8, UINT64_MAX, &g->nonempty, "grid.group");
    arr[1] = get_array(r, 8, g->nonempty, NULL, "grid.key");
    arr[2] = get_array(r, 8, g->nonempty, NULL, "grid.count");
    if (r->bad) {
        for (unsigned k = 0; k < 3; k++)
            tessel_dealloc(r->alloc, arr[k]);
        return 0;
    }
    if (!grid_ok(r, &in->grid, arr))
        return 0;
    g = in->grid;
    in->dims[0] = get_u64(r, "lines.rows");
    in->dims[1] = get_u64(r, "lines.cols");
    if (in->dims[0] != g->dims[0] || in->dims[1] != g->dims[g->order - 1])
        return corrupt(r, "lines");
    in->line_nnz[0] = get_array(r, 8, in->dims[0], NULL, "lines.rows");
    in->line_nnz[1] = get_array(r, 8, in->dims[1], NULL, "lines.cols");
    uint64_t nc[2] = { 0, 0 };
    double *corrs[2];
    corrs[0] = get_array(r, 8, UINT64_MAX, &nc[0], "corrs");
    corrs[1] = get_array(r, 8, UINT64_MAX, &nc[1], "corrs");
    if (!r->bad && (nc[0] || nc[1])) {
        in->d2t2 = tessel_alloc(r->alloc, sizeof(*in->d2t2));
        if (!in->d2t2) {
            tessel_dealloc(r->alloc, corrs[0]);
            tessel_dealloc(r->alloc, corrs[1]);
            return corrupt(r, "out of memory");
        }
        memset(in->d2t2, 0, sizeof(*in->d2t2));
        in->d2t2->alloc = r->alloc;
        for (unsigned m = 0; m < 2; m++) { /* owned by d2t2 before any check */
            in->d2t2->corrs[m] = corrs[m];
            in->d2t2->ncorrs[m] = nc[m];
        }
        for (unsigned m = 0; m < 2; m++)
            for (uint64_t k = 0; k < nc[m]; k++)
                if (!(corrs[m][k] >= 0 && corrs[m][k] <= 1))
                    return corrupt(r, "corrs");
    } else {
        tessel_dealloc(r->alloc, corrs[0]);
        tessel_dealloc(r->alloc, corrs[1]);
    }
    if (r->bad)
        return 0;
    in->base = tessel_alloc(r->alloc, sizeof(*in->base));
    if (!in->base)
        return corrupt(r, "out of memory");
    int rc = stat_grid_base(g, r->alloc, in->base);
    if (rc) {
        tessel_dealloc(r->alloc, in->base);
        in->base = NULL;
        return corrupt(r, rc == TESSEL_ERANGE ? "grid.nnz (2^32 or more nonzeros)"
                                              : "out of memory");
    }
    return 1;
}

static int cells_ok(const uint32_t *v, uint64_t n, uint64_t bound)
{
    for (uint64_t i = 0; i < n; i++)
        if (v[i] > bound)
            return 0;
    return 1;
}

static int weights_ok(const double *v, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (!(isfinite(v[i]) && v[i] >= 0))
            return 0;
    return 1;
}

static int offsets_ok(const uint64_t *v, uint64_t n, uint64_t end)
{
    if (!n)
        return 1;
    if (v[0] != 0 || v[n - 1] != end)
        return 0;
    for (uint64_t i = 1; i < n; i++)
        if (v[i] < v[i - 1])
            return 0;
    return 1;
}

/* The sample's weights (saved as doubles, checked, kept as floats) and
 * its group starts (64-bit offsets into the cells, checked, kept in 32
 * bits: fewer than 2^32 cells); NULL and r marked corrupt when bad. */
static float *get_weights(reader *r, uint64_t n, const char *field)
{
    double *d = get_array(r, 8, n, NULL, field);
    int ok = d && weights_ok(d, n);
    float *f = ok ? tessel_alloc_array(r->alloc, n ? n : 1, sizeof(float)) : NULL;
    for (uint64_t i = 0; f && i < n; i++)
        f[i] = (float)d[i];
    if (d && !f)
        corrupt(r, ok ? "out of memory" : field);
    tessel_dealloc(r->alloc, d);
    return f;
}

static uint32_t *get_groups(reader *r, uint64_t ncells, uint64_t *ng, const char *field)
{
    uint64_t *d = get_array(r, 8, UINT64_MAX, ng, field);
    int ok = d && ncells <= UINT32_MAX && offsets_ok(d, *ng, ncells);
    uint32_t *g = ok ? tessel_alloc_array(r->alloc, *ng ? *ng : 1, sizeof(uint32_t)) : NULL;
    for (uint64_t i = 0; g && i < *ng; i++)
        g[i] = (uint32_t)d[i];
    if (d && !g)
        corrupt(r, ok ? "out of memory" : field);
    tessel_dealloc(r->alloc, d);
    return g;
}

/* Every coordinate c of a sample inside its index: c * base < extent. */
static int coords_ok(const uint32_t *v, uint64_t n, uint64_t base, uint64_t extent)
{
    for (uint64_t i = 0; i < n; i++)
        if ((uint64_t)v[i] * base >= extent)
            return 0;
    return 1;
}

/* The sample against the roles: its cell edges are the ones the inputs'
 * base grids give, and its cells lie inside the indices (engine index of
 * each coordinate per workload). */
static int sample_fits(const engine *e, const stat_input *const *in, const stat_output_sample *s)
{
    uint64_t base[4];
    stat_sample_base(e, in, base);
    for (unsigned m = 0; m < 4; m++)
        if (s->base[m] != base[m])
            return 0;
    const uint64_t *x = e->extent;
    uint64_t m = s->nelems ? s->eptr[s->nelems] : 0;
    switch (e->kind) {
    case TESSEL_WORKLOAD_MTTKRP: /* i 0, r 1, j 2, k 3 */
        return s->ncells == 0 && coords_ok(s->ei, s->nelems, base[0], x[0]) &&
               coords_ok(s->er, s->nelems, base[1], x[1]) && coords_ok(s->ej, m, base[3], x[2]) &&
               coords_ok(s->ek, m, base[2], x[3]);
    case TESSEL_WORKLOAD_TTM: /* i 0, x 1, r 2, k 3 */
        return s->nelems == 0 && coords_ok(s->ci, s->ncells, base[0], x[0]) &&
               coords_ok(s->cx, s->ncells, base[3], x[1]) &&
               coords_ok(s->cj, s->ncells, base[1], x[2]) &&
               coords_ok(s->ck, s->ncells, base[2], x[3]);
    default: /* i 0, j 1, k 2 */
        return s->nelems == 0 && coords_ok(s->ci, s->ncells, base[0], x[0]) &&
               coords_ok(s->cx, s->ncells, 1, 1) && coords_ok(s->cj, s->ncells, base[1], x[1]) &&
               coords_ok(s->ck, s->ncells, base[2], x[2]);
    }
}

/* Version 3: the rows' predictions per i cell, none or one per cell. */
static int get_predictions(reader *r, stat_output_sample *s)
{
    uint64_t nx = 0, nv = 0;
    s->xcell = get_array(r, 8, UINT64_MAX, &nx, "sample.predictions");
    s->vcell = get_array(r, 8, nx, &nv, "sample.predictions");
    if (r->bad)
        return 0;
    uint64_t cells = s->base[0] ? (s->rows + s->base[0] - 1) / s->base[0] : 0;
    if (nx && (nx != cells || !weights_ok(s->xcell, nx) || !weights_ok(s->vcell, nv)))
        return corrupt(r, "sample.predictions");
    if (!nx) {
        tessel_dealloc(r->alloc, s->xcell);
        tessel_dealloc(r->alloc, s->vcell);
        s->xcell = s->vcell = NULL;
    }
    s->nxcell = nx;
    return 1;
}

/* Version 6: the output's nonzeros per first k cell, into s (NULL: no
 * sample, none may be stored); as many as the sample's k cells. */
static int get_first_k(reader *r, stat_output_sample *s, uint64_t cells)
{
    uint64_t n = 0;
    double *fk = get_array(r, 8, UINT64_MAX, &n, "sample.first_k");
    if (r->bad)
        return 0;
    int ok = !n || (s && n == cells && weights_ok(fk, n));
    if (!ok || !n) {
        tessel_dealloc(r->alloc, fk);
        return ok ? 1 : corrupt(r, "sample.first_k");
    }
    s->fknnz = fk;
    s->nfk = n;
    return 1;
}

static int get_sample(reader *r, stat_output_sample *s, uint64_t max_cell)
{
    memset(s, 0, sizeof(*s));
    s->rows = get_u64(r, "sample.rows");
    s->sampled_rows = get_u64(r, "sample.sampled_rows");
    s->whole = get_u64(r, "sample.whole") != 0;
    s->flops = get_f64(r, "sample.flops");
    s->sampled_flops = get_f64(r, "sample.sampled_flops");
    s->nnz = get_f64(r, "sample.nnz");
    s->nnz_stderr = r->version >= 2 ? get_f64(r, "sample.nnz_stderr") : -1;
    if (!r->bad && !(s->nnz_stderr >= 0 || s->nnz_stderr == -1))
        return corrupt(r, "sample.nnz_stderr");
    s->sampled_nnz = get_u64(r, "sample.sampled_nnz");
    for (unsigned m = 0; m < 4; m++) {
        s->base[m] = get_u64(r, "sample.base");
        if (!r->bad && (!s->base[m] || s->base[m] > TESSEL_MAX_DIM))
            return corrupt(r, "sample.base");
    }
    s->ci = get_array(r, 4, UINT64_MAX, &s->ncells, "sample.cells");
    s->cx = get_array(r, 4, s->ncells, NULL, "sample.cells");
    s->cj = get_array(r, 4, s->ncells, NULL, "sample.cells");
    s->ck = get_array(r, 4, s->ncells, NULL, "sample.cells");
    s->weight = get_weights(r, s->ncells, "sample.weight");
    uint64_t ng = 0;
    s->gstart = get_groups(r, s->ncells, &ng, "sample.groups");
    s->ngroups = ng ? ng - 1 : 0;
    s->ei = get_array(r, 4, UINT64_MAX, &s->nelems, "sample.elements");
    s->er = get_array(r, 4, s->nelems, NULL, "sample.elements");
    s->ew = get_array(r, 8, s->nelems, NULL, "sample.elements");
    s->eptr = get_array(r, 8, s->nelems ? s->nelems + 1 : 0, NULL, "sample.elements");
    uint64_t m = 0;
    s->ej = get_array(r, 4, UINT64_MAX, &m, "sample.multiplies");
    s->ek = get_array(r, 4, m, NULL, "sample.multiplies");
    if (r->version >= 3 && !get_predictions(r, s))
        return 0;
    if (r->bad)
        return 0;
    if ((s->ncells && ng != s->ngroups + 1) || (!s->ncells && ng) ||
        !offsets_ok(s->eptr, s->nelems ? s->nelems + 1 : 0, m) || !weights_ok(s->ew, s->nelems))
        return corrupt(r, "sample");
    /* groups hold one (i, x, j) each; cells stay inside the data's cells */
    for (uint64_t g = 0; g < s->ngroups; g++)
        for (uint64_t c = s->gstart[g] + 1; c < s->gstart[g + 1]; c++)
            if (s->ci[c] != s->ci[c - 1] || s->cx[c] != s->cx[c - 1] || s->cj[c] != s->cj[c - 1])
                return corrupt(r, "sample.groups");
    if (!cells_ok(s->ci, s->ncells, max_cell) || !cells_ok(s->cx, s->ncells, max_cell) ||
        !cells_ok(s->cj, s->ncells, max_cell) || !cells_ok(s->ck, s->ncells, max_cell) ||
        !cells_ok(s->ei, s->nelems, max_cell) || !cells_ok(s->er, s->nelems, max_cell) ||
        !cells_ok(s->ej, m, max_cell) || !cells_ok(s->ek, m, max_cell))
        return corrupt(r, "sample.cells");
    return 1;
}

/* Engine indices, extents and inputs consistent with each other. */
static int roles_ok(const engine *e)
{
    if (e->nx < 3 || e->nx > NX || e->nin < 2 || e->nin > NIN || e->nred < 1 || e->nred > 2)
        return 0;
    if (e->kind != TESSEL_WORKLOAD_SPMSPM && e->kind != TESSEL_WORKLOAD_SPMV &&
        e->kind != TESSEL_WORKLOAD_TTM && e->kind != TESSEL_WORKLOAD_MTTKRP)
        return 0;
    /* the shape of each workload's roles, as exact_setup_roles makes them */
    int three = e->kind == TESSEL_WORKLOAD_TTM || e->kind == TESSEL_WORKLOAD_MTTKRP;
    if (e->nx != (three ? 4u : 3u) || e->nin != (e->kind == TESSEL_WORKLOAD_MTTKRP ? 3u : 2u) ||
        e->nred != (e->kind == TESSEL_WORKLOAD_MTTKRP ? 2u : 1u) ||
        e->in[0].order != (three ? 3u : 2u) ||
        e->out.order != (e->kind == TESSEL_WORKLOAD_TTM ? 3u : 2u))
        return 0;
    for (unsigned i = 1; i < e->nin; i++)
        if (e->in[i].order != 2)
            return 0;
    for (unsigned r = 0; r < e->nred; r++)
        if (e->red[r] >= e->nx)
            return 0;
    for (unsigned x = 0; x < e->nx; x++)
        if (!e->extent[x] || e->extent[x] > TESSEL_MAX_DIM ||
            e->spec_index[x] >= (int)TESSEL_SPEC_MAX_INDICES || e->spec_index[x] < -1)
            return 0;
    return 1;
}

/* n per-tile counts of fw bytes each (1, 2 or 4; padded to 8) into tr's
 * tiles (node 0) or nodes (1), the q-th at perm[q] (NULL: at q). */
static int get_counts(reader *r, tessel_tile_rows *tr, int node, uint64_t fw,
                      const uint32_t *perm, const char *field)
{
    uint64_t n = get_u64(r, field);
    if (r->bad || n != tr->n || n > (r->n - r->at) / fw ||
        (n * fw + 7) / 8 * 8 > r->n - r->at)
        return corrupt(r, field);
    const unsigned char *p = r->p + r->at;
    for (uint64_t q = 0; q < n; q++) {
        uint32_t v = 0;
        if (fw == 4) {
            memcpy(&v, p + 4 * q, 4);
        } else {
            uint16_t h = 0;
            memcpy(&h, p + fw * q, fw);
            v = h;
        }
        if (tr->width < 4 && v >> (8 * tr->width))
            return corrupt(r, field);
        tessel_tile_rows_set(tr, node, perm ? perm[q] : q, v);
    }
    r->at += (n * fw + 7) / 8 * 8;
    return 1;
}

/* A statistic's flag, and, set, its arrays read into *out (n tiles,
 * nstrips strips, counts at most edge; version 9: their width on file
 * first, tr's, else 4 bytes), the q-th tile's at perm[q]. 1 with *out NULL: not
 * saved. */
static int get_tile_stat(reader *r, uint64_t n, uint64_t nstrips, uint64_t edge,
                         const uint32_t *perm, const char *what, tessel_tile_rows **out)
{
    char f[64];
    snprintf(f, sizeof(f), "%s.flag", what);
    uint64_t flag = get_u64(r, f);
    if (r->bad || flag > 1)
        return corrupt(r, f);
    if (!flag)
        return 1;
    tessel_tile_rows *tr = tessel_tile_rows_new(r->alloc, n, nstrips, edge);
    if (!tr)
        return corrupt(r, "out of memory");
    *out = tr; /* freed with the input from here */
    snprintf(f, sizeof(f), "%s.width", what);
    uint64_t fw = r->version >= 9 ? get_u64(r, f) : 4;
    if (r->bad || fw != (r->version >= 9 ? tr->width : 4u))
        return corrupt(r, f);
    snprintf(f, sizeof(f), "%s.tiles", what);
    if (!get_counts(r, tr, 0, fw, perm, f))
        return 0;
    snprintf(f, sizeof(f), "%s.strips", what);
    uint32_t *strip = get_array(r, 4, nstrips, NULL, f);
    if (!strip)
        return 0;
    tessel_dealloc(r->alloc, tr->strip);
    tr->strip = strip;
    snprintf(f, sizeof(f), "%s.nodes", what);
    return get_counts(r, tr, 1, fw, perm, f);
}

/* Per-tile rows of one input (stat_tiledfmt.c; version 7 on): each tile's
 * rows between 1 and its nonzeros, each strip's at most its height and at
 * least its fullest tile's; each node's between its two tiles' larger and
 * its strip's (0 after a strip's last tile). */
static int get_tile_rows(reader *r, stat_input *in)
{
    const tessel_tile_grid *g = in->grid;
    uint64_t edge = g->tile[0] < g->dims[0] ? g->tile[0] : g->dims[0];
    if (!get_tile_stat(r, g->nonempty, g->extent[0], edge, NULL, "rows", &in->rows))
        return 0;
    const tessel_tile_rows *tr = in->rows;
    if (!tr)
        return 1;
    if (g->order != 2)
        return corrupt(r, "rows.order");
    for (uint64_t s = 0, t = 0; s < g->extent[0]; s++) {
        uint64_t h = g->dims[0] - s * g->tile[0] < g->tile[0] ? g->dims[0] - s * g->tile[0]
                                                              : g->tile[0];
        uint64_t end = tessel_tile_grid_row_begin(g, s + 1);
        if (tr->strip[s] > h)
            return corrupt(r, "rows.strips");
        for (; t < end; t++) {
            uint32_t x = tessel_tile_rows_tile(tr, t), v = tessel_tile_rows_node(tr, t);
            if (x < 1 || x > tessel_tile_grid_count(g, t) || x > tr->strip[s])
                return corrupt(r, "rows.tiles");
            if (t + 1 == end ? v != 0
                             : v < x || v < tessel_tile_rows_tile(tr, t + 1) || v > tr->strip[s])
                return corrupt(r, "rows.nodes");
        }
    }
    return 1;
}

/* Each column of tiles s of the base grid in its transposed order (bt,
 * bt->nnz[t] tile t's index in in->base) checked as get_tile_rows checks
 * the rows: each tile's columns between 1 and its nonzeros, each column of
 * tiles' at most its width and at least its fullest tile's, each node's
 * between its two tiles' larger and its column of tiles'. */
static int check_tile_cols(reader *r, const stat_input *in, const stat_grid *bt)
{
    const tessel_tile_grid *g = in->grid;
    const tessel_tile_rows *tc = in->cols;
    for (uint64_t s = 0; s < bt->rows; s++) {
        uint64_t h = g->dims[1] - s * g->tile[1] < g->tile[1] ? g->dims[1] - s * g->tile[1]
                                                              : g->tile[1];
        uint64_t end = bt->ptr[s + 1];
        if (tc->strip[s] > h)
            return corrupt(r, "cols.strips");
        for (uint64_t t = bt->ptr[s]; t < end; t++) {
            uint32_t i = bt->nnz[t], x = tessel_tile_rows_tile(tc, i);
            uint32_t v = tessel_tile_rows_node(tc, i);
            if (x < 1 || x > in->base->nnz[i] || x > tc->strip[s])
                return corrupt(r, "cols.tiles");
            if (t + 1 == end
                    ? v != 0
                    : v < x || v < tessel_tile_rows_tile(tc, bt->nnz[t + 1]) || v > tc->strip[s])
                return corrupt(r, "cols.nodes");
        }
    }
    return 1;
}

/* Per-tile columns of one input (stat_outspill.c; version 8 on), indexed
 * by its base grid's tiles (version 8: in its transposed order, permuted
 * here), checked by check_tile_cols. */
static int get_tile_cols(reader *r, stat_input *in)
{
    const tessel_tile_grid *g = in->grid;
    uint64_t flag = 0; /* peeked: get_tile_stat reads it */
    if (r->n - r->at >= 8)
        memcpy(&flag, r->p + r->at, 8);
    if (!flag)
        return get_tile_stat(r, 0, 0, 1, NULL, "cols", &in->cols);
    if (g->order != 2 || !in->base)
        return corrupt(r, "cols.order");
    stat_grid bt;
    if (stat_grid_transpose_index(in->base, r->alloc, &bt))
        return corrupt(r, "out of memory");
    uint64_t edge = g->tile[1] < g->dims[1] ? g->tile[1] : g->dims[1];
    int ok = get_tile_stat(r, g->nonempty, g->extent[1], edge, r->version < 9 ? bt.nnz : NULL,
                           "cols", &in->cols);
    ok = ok && (!in->cols || check_tile_cols(r, in, &bt));
    stat_grid_free(r->alloc, &bt);
    return ok;
}

/* Transposed pairs of one input (stat_outspill.c; version 10 on): the
 * width the grid's tiles give, each tile's count at most its nonzeros,
 * their sum the total, at most the input's nonzeros. */
static int get_tile_sym(reader *r, stat_input *in)
{
    const tessel_tile_grid *g = in->grid;
    uint64_t flag = get_u64(r, "sym.flag");
    if (r->bad || flag > 1)
        return corrupt(r, "sym.flag");
    if (!flag)
        return 1;
    if (g->order != 2 || g->dims[0] != g->dims[1])
        return corrupt(r, "sym.order");
    uint64_t fw = get_u64(r, "sym.width"), total = get_u64(r, "sym.total");
    uint64_t n = get_u64(r, "sym.tiles");
    if (r->bad || fw != tessel_tile_sym_width(g) || n != g->nonempty || total > g->nnz ||
        (n * fw + 7) / 8 * 8 > r->n - r->at)
        return corrupt(r, "sym");
    tessel_tile_sym *ts = tessel_tile_sym_new(r->alloc, n, (unsigned)fw);
    if (!ts)
        return corrupt(r, "out of memory");
    in->sym = ts; /* freed with the input from here */
    memcpy(ts->count, r->p + r->at, n * fw);
    r->at += (n * fw + 7) / 8 * 8;
    uint64_t sum = 0;
    for (uint64_t t = 0; t < n; t++) {
        uint32_t c = tessel_tile_sym_at(ts, t);
        if (c > tessel_tile_grid_count(g, t))
            return corrupt(r, "sym.tiles");
        sum += c;
    }
    ts->total = total;
    return sum == total ? 1 : corrupt(r, "sym.total");
}

/* Version 10: the (i cell, first k cell) counts into s->fc (s NULL: no
 * sample, none may be stored). Kept only with a matrix product's sample,
 * on its i and k cells (extent[2]: the reduction k, as get_first_k's);
 * unused where xexact is off. */
static int get_first_cells(reader *r, const engine *e, stat_output_sample *s)
{
    uint64_t flag = get_u64(r, "sample.first_cells");
    if (r->bad || flag > 1 || (flag && (!s || e->in[0].order != 2)))
        return 0;
    if (!flag)
        return 1;
    tessel_first_cells *fc = &s->fc;
    fc->edge_i = get_u64(r, "sample.first_cells");
    fc->edge_k = get_u64(r, "sample.first_cells");
    fc->ni = get_u64(r, "sample.first_cells");
    fc->nk = get_u64(r, "sample.first_cells");
    if (r->bad || fc->edge_i != s->base[0] || fc->edge_k != s->base[2] ||
        fc->ni != (s->rows + fc->edge_i - 1) / fc->edge_i ||
        fc->nk != (e->extent[2] + fc->edge_k - 1) / fc->edge_k || fc->nk > UINT32_MAX) {
        memset(fc, 0, sizeof(*fc));
        return 0;
    }
    fc->ptr = get_array(r, 8, fc->ni + 1, NULL, "sample.first_cells");
    fc->kcell = get_array(r, 4, UINT64_MAX, &fc->nentries, "sample.first_cells");
    fc->nnz = get_array(r, 8, fc->nentries, NULL, "sample.first_cells");
    return !r->bad && tessel_first_cells_check(fc);
}

/* Decodes and checks a .tsd payload of any version read into v; 0 on a
 * corrupt or inconsistent one (r->field names it). */
static int load_payload(reader *r, stat_data_view *v)
{
    if (!get_string(r, v->einsum, 512, "einsum") || !get_string(r, v->label, 256, "label"))
        return 0;
    engine *e = v->e;
    e->kind = (tessel_workload_kind)get_u64(r, "roles.kind");
    e->nx = (unsigned)get_u64(r, "roles.nx");
    for (unsigned x = 0; x < NX; x++) {
        e->spec_index[x] = (int)(int64_t)get_u64(r, "roles.index");
        e->extent[x] = get_u64(r, "roles.extent");
    }
    e->nin = (unsigned)get_u64(r, "roles.nin");
    if (r->bad || e->nin < 2 || e->nin > NIN)
        return corrupt(r, "roles.nin");
    for (unsigned i = 0; i < e->nin; i++)
        if (!get_operand(r, &e->in[i], e->nx > NX ? NX : e->nx))
            return corrupt(r, "roles.inputs");
    if (!get_operand(r, &e->out, e->nx > NX ? NX : e->nx))
        return corrupt(r, "roles.output");
    e->nred = (unsigned)get_u64(r, "roles.nred");
    e->red[0] = (unsigned)get_u64(r, "roles.red");
    e->red[1] = (unsigned)get_u64(r, "roles.red");
    if (r->bad || !roles_ok(e))
        return corrupt(r, "roles");
    uint64_t max_cell = 0;
    for (unsigned i = 0; i < e->nin; i++) {
        int64_t same = (int64_t)get_u64(r, "inputs.same_as");
        if (r->bad || same >= (int64_t)i || same < -1 || (same >= 0 && v->same_as[same] >= 0))
            return corrupt(r, "inputs.same_as");
        v->same_as[i] = (int)same;
        if (same < 0 && !get_input(r, &v->in[i]))
            return corrupt(r, "inputs");
        const stat_input *in = same < 0 ? &v->in[i] : &v->in[same];
        if (in->grid->order != e->in[i].order)
            return corrupt(r, "inputs.order");
        for (unsigned m = 0; m < e->in[i].order; m++) {
            if (in->grid->dims[m] != e->extent[e->in[i].x[m]])
                return corrupt(r, "inputs.dims");
            max_cell = in->grid->dims[m] > max_cell ? in->grid->dims[m] : max_cell;
        }
    }
    *v->has_sample = get_u64(r, "sample") != 0;
    if (*v->has_sample && !get_sample(r, v->sample, max_cell))
        return corrupt(r, "sample");
    const stat_input *ins[NIN];
    for (unsigned i = 0; i < NIN; i++)
        ins[i] = i < e->nin ? (v->same_as[i] < 0 ? &v->in[i] : &v->in[v->same_as[i]]) : NULL;
    if (*v->has_sample && !sample_fits(e, ins, v->sample))
        return corrupt(r, "sample.cells");
    if (r->version >= 4) { /* rule 3's symbolic output count */
        uint64_t flag = get_u64(r, "count.exact");
        v->count->nnz = get_u64(r, "count.nnz");
        v->count->rows = get_u64(r, "count.rows");
        v->count->fibers = get_u64(r, "count.fibers");
        if (flag > 1 || v->count->rows > v->count->nnz || v->count->fibers > v->count->nnz ||
            v->count->rows > v->count->fibers)
            return corrupt(r, "count");
        *v->count_exact = (int)flag;
    }
    if (r->version >= 5) {
        uint64_t xexact = get_u64(r, "sample.xexact");
        if (xexact > 1 || (xexact && (!*v->has_sample || !v->sample->xcell)))
            return corrupt(r, "sample.xexact");
        if (*v->has_sample) {
            v->sample->xexact = (int)xexact;
            if (stat_output_sample_scell(r->alloc, v->sample))
                return corrupt(r, "out of memory");
        }
    }
    if (r->version >= 6 &&
        !get_first_k(r, *v->has_sample ? v->sample : NULL,
                     *v->has_sample ? e->extent[2] / v->sample->base[2] + 1 : 0))
        return 0;
    for (unsigned i = 0; r->version >= 7 && i < e->nin; i++)
        if (v->same_as[i] < 0 && !get_tile_rows(r, &v->in[i]))
            return corrupt(r, "rows");
    for (unsigned i = 0; r->version >= 8 && i < e->nin; i++)
        if (v->same_as[i] < 0 && !get_tile_cols(r, &v->in[i]))
            return corrupt(r, "cols");
    for (unsigned i = 0; r->version >= 10 && i < e->nin; i++)
        if (v->same_as[i] < 0 && !get_tile_sym(r, &v->in[i]))
            return corrupt(r, "sym");
    if (r->version >= 10 && !get_first_cells(r, e, *v->has_sample ? v->sample : NULL))
        return corrupt(r, "sample.first_cells");
    if (!r->bad && r->at != r->n)
        return corrupt(r, "payload size");
    return !r->bad;
}

int tessel_stat_data_parse(const char *name, const void *data, size_t size,
                           const tessel_allocator *a, tessel_stat_data **out, tessel_diag *diag)
{
    *out = NULL;
    tsd_header h;
    if (size < sizeof(h))
        return tessel_diag_set(diag, TESSEL_ECORRUPT, name, 0, 0, "header",
                               "not a tessel statistics file (%zu bytes)", size);
    memcpy(&h, data, sizeof(h));
    tessel_checksum c;
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, &h, offsetof(tsd_header, header_checksum));
    if (memcmp(h.magic, TSD_MAGIC, 8) != 0)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, name, 0, 0, "magic",
                               "not a tessel statistics file (.tsd)");
    if (h.version < 1 || h.version > TSD_VERSION ||
        h.header_bytes != TSD_HEADER ||
        h.bom != TSD_BOM ||
        tessel_checksum_final(&c) != h.header_checksum || h.payload_bytes != size - sizeof(h))
        return tessel_diag_set(diag, TESSEL_ECORRUPT, name, 0, 0, "header",
                               "unsupported version or a damaged header");
    const unsigned char *payload = (const unsigned char *)data + sizeof(h);
    tessel_checksum_init(&c);
    tessel_checksum_update(&c, payload, h.payload_bytes);
    if (tessel_checksum_final(&c) != h.payload_checksum)
        return tessel_diag_set(diag, TESSEL_ECORRUPT, name, 0, 0, "payload",
                               "checksum mismatch: the file is damaged");
    tessel_stat_data *s = stat_data_alloc(a);
    if (!s)
        return tessel_diag_oom(diag, name, "creating the statistics", 0);
    stat_data_view v = stat_data_view_of(s);
    reader r = { payload, h.payload_bytes, 0, name, a, diag, 0, "", h.version };
    if (!load_payload(&r, &v)) {
        tessel_stat_data_free(&s);
        if (strcmp(r.field, "out of memory") == 0)
            return tessel_diag_oom(diag, name, "decoding the statistics' arrays", 0);
        return tessel_diag_set(diag, TESSEL_ECORRUPT, name, 0, 0, r.field,
                               "inconsistent statistics (%s)", r.field);
    }
    stat_data_finish(s);
    *out = s;
    return TESSEL_OK;
}

int tessel_stat_data_load(const char *path, const tessel_allocator *a, tessel_stat_data **out,
                          tessel_diag *diag)
{
    *out = NULL;
    int fd = tessel_input_open(path, diag);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > TSD_MAX_BYTES) {
        close(fd);
        return tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL,
                               "not a regular file of a readable size");
    }
    uint64_t n = (uint64_t)st.st_size;
    void *buf = tessel_alloc(a, n ? n : 1);
    if (!buf) {
        close(fd);
        return tessel_diag_oom(diag, path, "reading a statistics file", (size_t)(n ? n : 1));
    }
    int rc = tessel_read_full(fd, buf, n);
    close(fd);
    if (rc)
        rc = tessel_diag_set(diag, TESSEL_EIO, path, 0, 0, NULL, "cannot read: %s",
                             strerror(errno));
    else
        rc = tessel_stat_data_parse(path, buf, n, a, out, diag);
    tessel_dealloc(a, buf);
    return rc;
}

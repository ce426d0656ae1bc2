/* The stat estimator's tile grids: compressed tile rows, their transpose,
 * and coarser grids merged from the saved base grid (a matrix's, or a
 * 3-tensor's unfolded to (i, x) rows), from the counts alone. */
#include <string.h>

#include "stat_internal.h"

void stat_grid_free(const tessel_allocator *a, stat_grid *g)
{
    if (!g->borrowed) {
        tessel_dealloc(a, g->ptr);
        tessel_dealloc(a, g->col);
        tessel_dealloc(a, g->nnz);
    }
    tessel_dealloc(a, g->occ);
    memset(g, 0, sizeof(*g));
}

/* counts 0: no nnz array (a pattern, stat_grid_transpose_pattern) */
static int grid_alloc_counts(const tessel_allocator *a, uint64_t rows, uint64_t cols, uint64_t n,
                             int counts, stat_grid *g)
{
    memset(g, 0, sizeof(*g));
    g->rows = rows;
    g->cols = cols;
    g->n = n;
    g->ptr = tessel_alloc_array(a, rows + 1, sizeof(uint64_t));
    g->col = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    g->nnz = counts ? tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t)) : NULL;
    if (!g->ptr || !g->col || (counts && !g->nnz)) {
        stat_grid_free(a, g);
        return TESSEL_ENOMEM;
    }
    memset(g->ptr, 0, (rows + 1) * sizeof(uint64_t));
    return TESSEL_OK;
}

static int grid_alloc(const tessel_allocator *a, uint64_t rows, uint64_t cols, uint64_t n,
                      stat_grid *g)
{
    return grid_alloc_counts(a, rows, cols, n, 1, g);
}

uint64_t stat_grid_bytes(uint64_t rows, uint64_t n)
{
    return (rows + 1) * sizeof(uint64_t) + n * 2 * sizeof(uint32_t);
}

int stat_grid_alloc_like(uint64_t rows, uint64_t cols, uint64_t n, const tessel_allocator *a,
                         stat_grid *out)
{
    return grid_alloc(a, rows, cols, n, out);
}

int stat_grid_base(const tessel_tile_grid *t, const tessel_allocator *a, stat_grid *g)
{
    memset(g, 0, sizeof(*g));
    if (t->nnz > UINT32_MAX) /* a tile's count, at any coarsening, is at most t->nnz */
        return TESSEL_ERANGE;
    if (t->order == 2 && t->key32 && t->count32) {
        /* a matrix's grid holds exactly these arrays: read it in place */
        *g = (stat_grid){ .rows = t->extent[0], .cols = t->extent[1], .n = t->nonempty,
                          .ptr = t->row, .col = t->key32, .nnz = t->count32, .borrowed = 1 };
        return TESSEL_OK;
    }
    /* a 3-tensor's key x * ext_k + k: rows become i * ext_x + x */
    uint64_t xs = t->order == 3 ? t->extent[1] : 1, ks = t->extent[t->order - 1];
    int rc = grid_alloc(a, t->extent[0] * xs, ks, t->nonempty, g);
    if (rc)
        return rc;
    for (uint64_t n = 0, gr = 0; n < t->nonempty; n++) {
        gr = tessel_tile_grid_group_from(t, n, gr);
        uint64_t key = tessel_tile_grid_key(t, n);
        g->ptr[gr * xs + key / ks + 1]++;
        g->col[n] = (uint32_t)(key % ks);
        g->nnz[n] = (uint32_t)tessel_tile_grid_count(t, n);
    }
    for (uint64_t r = 0; r < g->rows; r++)
        g->ptr[r + 1] += g->ptr[r];
    return TESSEL_OK;
}

/* s transposed into g; counts 0: ptr and col only (no nnz, no occ); 2:
 * g->nnz holds each tile's index in s, not its count (no occ). */
static int transpose(const stat_grid *s, const tessel_allocator *a, int counts, stat_grid *g)
{
    int rc = grid_alloc_counts(a, s->cols, s->rows, s->n, counts, g);
    if (rc)
        return rc;
    for (uint64_t n = 0; n < s->n; n++)
        g->ptr[s->col[n] + 1]++;
    for (uint64_t r = 0; r < g->rows; r++)
        g->ptr[r + 1] += g->ptr[r];
    uint64_t *next = tessel_alloc_array(a, g->rows + 1, sizeof(uint64_t));
    if (!next) {
        stat_grid_free(a, g);
        return TESSEL_ENOMEM;
    }
    memcpy(next, g->ptr, (g->rows + 1) * sizeof(uint64_t));
    if (counts == 1 && s->occ) {
        g->occ = tessel_alloc_array(a, s->n ? s->n * s->occ_stride : 1, sizeof(double));
        g->occ_stride = s->occ_stride;
        if (!g->occ) {
            tessel_dealloc(a, next);
            stat_grid_free(a, g);
            return TESSEL_ENOMEM;
        }
    }
    for (uint64_t r = 0; r < s->rows; r++)
        for (uint64_t n = s->ptr[r]; n < s->ptr[r + 1]; n++) {
            uint64_t d = next[s->col[n]]++;
            g->col[d] = (uint32_t)r;
            if (counts)
                g->nnz[d] = counts == 2 ? (uint32_t)n : s->nnz[n];
            if (g->occ) /* the tiles' other counts move with them (stat_tiledfmt.c) */
                memcpy(&g->occ[d * s->occ_stride], &s->occ[n * s->occ_stride],
                       s->occ_stride * sizeof(double));
        }
    tessel_dealloc(a, next);
    return TESSEL_OK;
}

int stat_grid_transpose(const stat_grid *s, const tessel_allocator *a, stat_grid *g)
{
    return transpose(s, a, 1, g);
}

int stat_grid_transpose_pattern(const stat_grid *s, const tessel_allocator *a, stat_grid *g)
{
    return transpose(s, a, 0, g);
}

int stat_grid_transpose_index(const stat_grid *s, const tessel_allocator *a, stat_grid *g)
{
    if (s->n > UINT32_MAX)
        return TESSEL_ERANGE;
    return transpose(s, a, 2, g);
}

/* Merges fine tiles into one coarse tile row at a time: counts per coarse
 * column, emitted in column order. */
typedef struct row_merger {
    const tessel_allocator *alloc;
    uint64_t cols, fc, nt, out;
    uint64_t *acc, *touched, *scratch;
    uint64_t nruns, *run; /* touched holds nruns ascending runs, run[r] the end of run r */
} row_merger;

static void merger_free(row_merger *m)
{
    tessel_dealloc(m->alloc, m->acc);
    tessel_dealloc(m->alloc, m->touched);
    tessel_dealloc(m->alloc, m->scratch);
    tessel_dealloc(m->alloc, m->run);
}

/* Room for the coarse tiles: no more than the fine tiles, nor than the
 * coarse grid's cells (the bound that matters when coarse tiles hold many
 * fine ones: at uniform 4M, B's 1024x1024 tiles from 8x16 base tiles
 * need 65,536 entries where the fine tiles are 4.2 M). */
static uint64_t coarse_capacity(const stat_grid *s, uint64_t rows, uint64_t cols)
{
    if (rows && cols > s->n / rows)
        return s->n;
    return rows * cols < s->n ? rows * cols : s->n;
}

/* A coarse grid of rows x ceil(fine cols / fc), with room for every coarse
 * tile, and the merger that fills it. */
static int merger_init(row_merger *m, const stat_grid *s, uint64_t rows, uint64_t fc,
                       uint64_t fine_rows, const tessel_allocator *a, stat_grid *g)
{
    memset(m, 0, sizeof(*m));
    m->alloc = a;
    m->fc = fc;
    m->cols = (s->cols + fc - 1) / fc;
    int rc = grid_alloc(a, rows, m->cols, coarse_capacity(s, rows, m->cols), g);
    if (!rc) {
        m->acc = tessel_alloc_array(a, m->cols + 1, sizeof(uint64_t));
        m->touched = tessel_alloc_array(a, m->cols + 1, sizeof(uint64_t));
        m->scratch = tessel_alloc_array(a, m->cols + 1, sizeof(uint64_t));
        m->run = tessel_alloc_array(a, fine_rows + 1, sizeof(uint64_t));
    }
    if (rc || !m->acc || !m->touched || !m->scratch || !m->run) {
        merger_free(m);
        stat_grid_free(a, g);
        return TESSEL_ENOMEM;
    }
    memset(m->acc, 0, (m->cols + 1) * sizeof(uint64_t));
    return TESSEL_OK;
}

/* Adds a fine row: its columns are sorted, so the coarse columns it
 * touches first come in ascending order, one run of touched[]. */
static void merger_add(row_merger *m, const stat_grid *s, uint64_t row)
{
    uint64_t start = m->nt;
    for (uint64_t n = s->ptr[row]; n < s->ptr[row + 1]; n++) {
        uint64_t c = s->col[n] / m->fc;
        if (!m->acc[c])
            m->touched[m->nt++] = c;
        m->acc[c] += s->nnz[n];
    }
    if (m->nt > start)
        m->run[m->nruns++] = m->nt;
}

/* touched[] in order by merging its ascending runs pairwise (the fine
 * rows are sorted: merging is linear per round, where sorting is not). */
static void merger_order(row_merger *m)
{
    uint64_t *src = m->touched, *dst = m->scratch;
    while (m->nruns > 1) {
        uint64_t kept = 0, lo = 0;
        for (uint64_t r = 0; r < m->nruns; r += 2) {
            uint64_t mid = m->run[r], hi = r + 1 < m->nruns ? m->run[r + 1] : mid;
            uint64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = src[i] < src[j] ? src[i++] : src[j++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
            m->run[kept++] = hi;
            lo = hi;
        }
        m->nruns = kept;
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != m->touched)
        memcpy(m->touched, src, m->nt * sizeof(uint64_t));
    m->nruns = 0;
}

/* Ends coarse row r; `sorted` when the fine rows came from one fine row
 * (its columns, and so the coarse ones, are already in order). */
static void merger_emit(row_merger *m, stat_grid *g, uint64_t r, int sorted)
{
    if (!sorted)
        merger_order(m);
    m->nruns = 0;
    for (uint64_t t = 0; t < m->nt; t++) {
        g->col[m->out] = (uint32_t)m->touched[t];
        g->nnz[m->out++] = (uint32_t)m->acc[m->touched[t]];
        m->acc[m->touched[t]] = 0;
    }
    m->nt = 0;
    g->ptr[r + 1] = m->out;
}

int stat_grid_coarsen(const stat_grid *s, uint64_t fr, uint64_t fc, const tessel_allocator *a,
                      stat_grid *g)
{
    if (fr == 1 && fc == 1) { /* the base shape itself, read in place */
        *g = *s;
        g->borrowed = 1;
        return TESSEL_OK;
    }
    uint64_t rows = (s->rows + fr - 1) / fr;
    row_merger m;
    if (merger_init(&m, s, rows, fc, fr, a, g))
        return TESSEL_ENOMEM;
    for (uint64_t r = 0; r < rows; r++) {
        for (uint64_t f = r * fr; f < (r + 1) * fr && f < s->rows; f++)
            merger_add(&m, s, f);
        merger_emit(&m, g, r, fr == 1);
    }
    g->n = m.out;
    merger_free(&m);
    return TESSEL_OK;
}

/* As stat_grid_coarsen_unfolded, with rows in any order: entry e of
 * rowpair (ascending) is row << 32 | the coarse (i, x) tile pair; rows
 * without an entry are empty. */
int stat_grid_coarsen_mapped(const stat_grid *s, uint64_t icells, uint64_t xcells, uint64_t fi,
                             uint64_t fx, uint64_t fk, const uint64_t *rowpair, uint64_t n,
                             uint64_t rows, const tessel_allocator *a, stat_grid *g)
{
    uint64_t xt = (xcells + fx - 1) / fx, e = 0;
    row_merger m;
    if (merger_init(&m, s, rows, fk, fi * fx, a, g))
        return TESSEL_ENOMEM;
    g->ptr[0] = 0;
    for (uint64_t r = 0; r < rows; r++) {
        if (e < n && rowpair[e] >> 32 == r) {
            uint64_t p = rowpair[e++] & UINT32_MAX, ti = p / xt, tx = p % xt;
            for (uint64_t i = ti * fi; i < (ti + 1) * fi && i < icells; i++)
                for (uint64_t x = tx * fx; x < (tx + 1) * fx && x < xcells; x++)
                    merger_add(&m, s, i * xcells + x);
            merger_emit(&m, g, r, fi == 1 && fx == 1);
        } else {
            g->ptr[r + 1] = m.out; /* an empty row */
        }
    }
    g->n = m.out;
    merger_free(&m);
    return TESSEL_OK;
}

int stat_grid_coarsen_unfolded(const stat_grid *s, uint64_t icells, uint64_t xcells, uint64_t fi,
                               uint64_t fx, uint64_t fk, int x_major, const tessel_allocator *a,
                               stat_grid *g)
{
    uint64_t it = (icells + fi - 1) / fi, xt = (xcells + fx - 1) / fx;
    row_merger m;
    if (merger_init(&m, s, it * xt, fk, fi * fx, a, g))
        return TESSEL_ENOMEM;
    for (uint64_t r = 0; r < it * xt; r++) {
        uint64_t ti = x_major ? r % it : r / xt, tx = x_major ? r / it : r % xt;
        for (uint64_t i = ti * fi; i < (ti + 1) * fi && i < icells; i++)
            for (uint64_t x = tx * fx; x < (tx + 1) * fx && x < xcells; x++)
                merger_add(&m, s, i * xcells + x);
        merger_emit(&m, g, r, fi == 1 && fx == 1);
    }
    g->n = m.out;
    merger_free(&m);
    return TESSEL_OK;
}

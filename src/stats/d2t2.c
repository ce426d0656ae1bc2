/* D2T2 statistics of a matrix (d2t2 section 4.3-4.4, eqs. 9-12).
 *
 * Passes over the CSR matrix, all linear in nnz:
 *   1. tessel_tile_grid_build on the base tiles: per-tile nonzero counts,
 *      hence nonempty_tiles, MaxTile, SizeTile, the non-empty tile rows and
 *      tile columns (PrTileIdx, eq. 9; TileCorrs, eq. 12);
 *   2. one walk over the entries counting (row, tile column) segments, the
 *      non-empty rows of every tile summed (ProbIndex, eq. 10);
 *   3. for Corrs (eq. 11), only the bands of rows holding a sampled tile,
 *      scattering the sampled tiles' entries into a scratch buffer (a
 *      band with few sampled tiles is searched row by row instead of
 *      walked, so a small sample touches little of the matrix).
 *
 * Corrs costs O(k^2) per row segment of k entries and per column segment,
 * so at most O(sampled_nnz * (base[0] + base[1])) on top of the walk, plus
 * a radix sort per sampled tile. TileCorrs costs the smaller of
 * O(sum over non-empty x of #{non-empty y in [x, x + n)}) and
 * O(extent / 64 * n) with a bitset, n = ntile_corrs <= 4096; the bitset is
 * only chosen when it is cheaper, which keeps its memory below 8 bytes per
 * non-empty tile row / column. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "tessel/stats.h"

#define TILE_CORRS_MAX 4096u

/* bytes 0: a step of several allocations, the failed one not known here. */
static int oom(tessel_diag *diag, const char *step, uint64_t bytes)
{
    return tessel_diag_oom(diag, NULL, step, (size_t)bytes);
}

void tessel_d2t2_free(tessel_d2t2_stats **sp)
{
    if (!sp || !*sp)
        return;
    tessel_d2t2_stats *s = *sp;
    *sp = NULL;
    for (unsigned m = 0; m < 2; m++) {
        tessel_dealloc(s->alloc, s->corrs[m]);
        tessel_dealloc(s->alloc, s->tile_corrs[m]);
    }
    tessel_dealloc(s->alloc, s);
}

/* ------------------------------------------------------------------ */
/* TileCorrs (eq. 12) */

/* out[s] = #{x in set : x + s in set} / n for s < ns, from the sorted,
 * distinct tile coordinates set[0..n) (each < extent). */
static int tile_corrs_of(const uint64_t *set, uint64_t n, uint64_t extent, uint64_t ns,
                         const tessel_allocator *a, double *out)
{
    for (uint64_t s = 0; s < ns; s++)
        out[s] = 0;
    if (n == 0 || ns == 0)
        return TESSEL_OK;
    /* Exact cost of the pairwise walk, to compare with the bitset's. */
    uint64_t list_cost = 0;
    for (uint64_t i = 0, j = 0; i < n; i++) {
        if (j < i)
            j = i;
        while (j < n && set[j] - set[i] < ns)
            j++;
        list_cost += j - i;
    }
    uint64_t words = extent / 64 + 1;
    if (list_cost <= words * ns) {
        /* Counts stay below 2^53, so double accumulation is exact. */
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t j = i; j < n && set[j] - set[i] < ns; j++)
                out[set[j] - set[i]] += 1;
    } else {
        uint64_t *bits = tessel_alloc_array(a, words + 1, sizeof(uint64_t));
        if (!bits)
            return TESSEL_ENOMEM;
        memset(bits, 0, (words + 1) * sizeof(uint64_t));
        for (uint64_t i = 0; i < n; i++)
            bits[set[i] / 64] |= 1ull << (set[i] % 64);
        /* x and x + s both set <=> bit x of bits & (bits >> s). The extra
         * zero word lets the shifted read run past the end. */
        for (uint64_t s = 0; s < ns; s++) {
            uint64_t q = s / 64, r = s % 64, count = 0;
            for (uint64_t w = 0; w + q < words; w++) {
                uint64_t shifted = r ? (bits[w + q] >> r) | (bits[w + q + 1] << (64 - r))
                                     : bits[w + q];
                count += (uint64_t)__builtin_popcountll(bits[w] & shifted);
            }
            out[s] = (double)count;
        }
        tessel_dealloc(a, bits);
    }
    for (uint64_t s = 0; s < ns; s++)
        out[s] /= (double)n;
    return TESSEL_OK;
}

/* The sorted distinct tile rows (groups) and tile columns (keys) of g, in
 * memory of the extents, not of the non-empty tiles (issue 27 item 2): the
 * rows come in order, the columns are marked in a bitset and read back
 * ascending. */
static int tile_sets(const tessel_tile_grid *g, const tessel_allocator *a, uint64_t **rows,
                     uint64_t *nrows, uint64_t **cols, uint64_t *ncols)
{
    uint64_t n = g->nonempty, ext_r = g->extent[0], ext_c = g->extent[1];
    *rows = *cols = NULL;
    *nrows = *ncols = 0;
    if (n == 0)
        return TESSEL_OK;
    uint64_t words = ext_c / 64 + 1;
    uint64_t *r = tessel_alloc_array(a, (n < ext_r ? n : ext_r) + 1, sizeof(uint64_t));
    uint64_t *c = tessel_alloc_array(a, (n < ext_c ? n : ext_c) + 1, sizeof(uint64_t));
    uint64_t *bits = tessel_alloc_array(a, words, sizeof(uint64_t));
    if (!r || !c || !bits) {
        tessel_dealloc(a, r);
        tessel_dealloc(a, c);
        tessel_dealloc(a, bits);
        return TESSEL_ENOMEM;
    }
    memset(bits, 0, words * sizeof(uint64_t));
    for (uint64_t i = 0, gr = 0; i < n; i++) {
        gr = tessel_tile_grid_group_from(g, i, gr);
        if (*nrows == 0 || r[*nrows - 1] != gr)
            r[(*nrows)++] = gr;
        uint64_t k = tessel_tile_grid_key(g, i);
        bits[k / 64] |= UINT64_C(1) << (k % 64);
    }
    for (uint64_t w = 0; w < words; w++)
        for (uint64_t b = bits[w]; b; b &= b - 1)
            c[(*ncols)++] = w * 64 + (uint64_t)__builtin_ctzll(b);
    tessel_dealloc(a, bits);
    *rows = r;
    *cols = c;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Corrs (eq. 11) */

typedef struct corr_work {
    const tessel_tensor *t;
    const tessel_tile_grid *g;
    tessel_d2t2_stats *s;
    const uint64_t *pick; /* sampled grid indices, ascending */
    uint64_t npick;
    uint64_t *ent;        /* entries of one band's sampled tiles */
    uint64_t *tmp;        /* radix sort scratch */
    uint64_t *fill;       /* per sampled tile of a band: next free slot in ent */
} corr_work;

/* Chooses ceil(f * n) of n indices (at least one, at most n) uniformly
 * without replacement, ascending (Knuth's selection sampling, algorithm S:
 * one draw per candidate). */
static int sample_tiles(uint64_t n, double f, uint64_t seed, const tessel_allocator *a,
                        uint64_t **pick, uint64_t *npick)
{
    *pick = NULL;
    *npick = 0;
    if (n == 0)
        return TESSEL_OK;
    double want = ceil(f * (double)n);
    uint64_t k = want < 1 ? 1 : want >= (double)n ? n : (uint64_t)want;
    uint64_t *p = tessel_alloc_array(a, k, sizeof(uint64_t));
    if (!p)
        return TESSEL_ENOMEM;
    if (k == n) {
        for (uint64_t i = 0; i < n; i++)
            p[i] = i;
    } else {
        gsl_rng *r = tessel_rng_create(a, seed);
        if (!r) {
            tessel_dealloc(a, p);
            return TESSEL_ENOMEM;
        }
        uint64_t chosen = 0;
        for (uint64_t i = 0; i < n && chosen < k; i++)
            if ((double)(n - i) * gsl_rng_uniform(r) < (double)(k - chosen))
                p[chosen++] = i;
        tessel_rng_free(a, &r);
    }
    *pick = p;
    *npick = k;
    return TESSEL_OK;
}

/* Coordinates and tile edges are below 2^32 (TESSEL_MAX_DIM): a 32-bit
 * division is several times cheaper than a 64-bit one on the hot walks. */
static uint64_t div32(uint64_t x, uint64_t d)
{
    return (uint32_t)x / (uint32_t)d;
}

/* Index in pick[lo, hi) of the sampled tile with key (tile column) j, or
 * hi: the picks of one band are sorted by key. */
static uint64_t find_pick(const corr_work *w, uint64_t lo, uint64_t hi, uint64_t j)
{
    uint64_t end = hi;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        uint64_t k = tessel_tile_grid_key(w->g, w->pick[mid]);
        if (k == j)
            return mid;
        if (k < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return end;
}

/* Adds the pair counts of one sampled tile's n entries to the corrs sums.
 * ent holds row * base[1] + col (tile-local), ascending. For shifts along
 * mode 1, |coords(y) ∩ coords(y + s)| summed over columns y counts the
 * pairs of entries of one row s columns apart; along mode 0, the pairs of
 * one column s rows apart. The s = 0 term is the tile's nonzero count. */
static void tile_pairs(corr_work *w, uint64_t *ent, uint64_t n)
{
    uint64_t b0 = w->s->base[0], b1 = w->s->base[1];
    double *c0 = w->s->corrs[0], *c1 = w->s->corrs[1];
    c0[0] += (double)n;
    c1[0] += (double)n;
    for (uint64_t i = 0; i < n;) {
        uint64_t row = ent[i] / b1, j = i + 1;
        while (j < n && ent[j] / b1 == row)
            j++;
        for (uint64_t x = i; x < j; x++)
            for (uint64_t y = x + 1; y < j; y++)
                c1[ent[y] - ent[x]] += 1;
        i = j;
    }
    /* Column-major order: col * base[0] + row < base[0] * base[1] <= 2^64. */
    for (uint64_t i = 0; i < n; i++)
        ent[i] = (ent[i] % b1) * b0 + ent[i] / b1;
    tessel_sort_u64(ent, w->tmp, n, b0 * b1 - 1);
    for (uint64_t i = 0; i < n;) {
        uint64_t col = ent[i] / b0, j = i + 1;
        while (j < n && ent[j] / b0 == col)
            j++;
        for (uint64_t x = i; x < j; x++)
            for (uint64_t y = x + 1; y < j; y++)
                c0[ent[y] - ent[x]] += 1;
        i = j;
    }
}

/* Scatters the entries of the sampled tiles pick[lo, hi) of rows [r0, r1)
 * by one walk over those rows. */
static void band_walk(corr_work *w, uint64_t lo, uint64_t hi, uint64_t r0, uint64_t r1)
{
    const tessel_tensor *t = w->t;
    uint64_t b1 = w->s->base[1];
    for (uint64_t r = r0; r < r1; r++) {
        /* Entries are sorted: divide once per (row, tile column) segment. */
        uint64_t j = 0, start = 0, end = 0, slot = hi;
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t col = t->idx[1][p];
            if (col >= end) {
                j = div32(col, b1);
                start = j * b1;
                end = start + b1;
                slot = find_pick(w, lo, hi, j);
            }
            if (slot < hi)
                w->ent[w->fill[slot - lo]++] = (r - r0) * b1 + (col - start);
        }
    }
}

/* The sampled tiles pick[lo, hi) of one band (tile row), scattered into
 * ent row-major per tile: by one walk over the band's entries, or, when
 * the band holds few sampled tiles, by a binary search per row and tile
 * (O(base[0] * log row) per tile), whichever touches less. */
static void band_pairs(corr_work *w, uint64_t lo, uint64_t hi)
{
    const tessel_tensor *t = w->t;
    uint64_t b0 = w->s->base[0], b1 = w->s->base[1];
    uint64_t r0 = tessel_tile_grid_group(w->g, w->pick[lo]) * b0;
    uint64_t r1 = r0 + b0 < t->dims[0] ? r0 + b0 : t->dims[0];
    uint64_t off = 0;
    for (uint64_t i = lo; i < hi; i++) {
        w->fill[i - lo] = off;
        off += tessel_tile_grid_count(w->g, w->pick[i]);
    }
    uint64_t band_nnz = t->ptr[r1] - t->ptr[r0];
    if ((double)(hi - lo) * (double)(r1 - r0) * 2 < (double)band_nnz) {
        for (uint64_t i = lo; i < hi; i++) {
            uint64_t start = tessel_tile_grid_key(w->g, w->pick[i]) * b1, end = start + b1;
            for (uint64_t r = r0; r < r1; r++)
                for (uint64_t p = tessel_tensor_row_lower_bound(t, r, start);
                     p < t->ptr[r + 1] && t->idx[1][p] < end; p++)
                    w->ent[w->fill[i - lo]++] = (r - r0) * b1 + (t->idx[1][p] - start);
        }
    } else {
        band_walk(w, lo, hi, r0, r1);
    }
    off = 0;
    for (uint64_t i = lo; i < hi; i++) {
        uint64_t n = tessel_tile_grid_count(w->g, w->pick[i]);
        tile_pairs(w, w->ent + off, n);
        off += n;
    }
}

static int corrs_of(const tessel_tensor *t, const tessel_tile_grid *g, tessel_d2t2_stats *s,
                    const tessel_allocator *a)
{
    corr_work w = { t, g, s, NULL, 0, NULL, NULL, NULL };
    int rc = sample_tiles(g->nonempty, s->sample_fraction, s->seed, a, (uint64_t **)&w.pick,
                          &w.npick);
    if (rc)
        return rc;
    s->sampled_tiles = w.npick;
    /* Scratch sized for the band with the most sampled entries. */
    uint64_t most = 0, most_tiles = 0;
    for (uint64_t i = 0; i < w.npick;) {
        uint64_t j = i, sum = 0;
        while (j < w.npick &&
               tessel_tile_grid_group(g, w.pick[j]) == tessel_tile_grid_group(g, w.pick[i]))
            sum += tessel_tile_grid_count(g, w.pick[j++]);
        most = sum > most ? sum : most;
        most_tiles = j - i > most_tiles ? j - i : most_tiles;
        i = j;
    }
    if (w.npick) {
        w.ent = tessel_alloc_array(a, most, sizeof(uint64_t));
        w.tmp = tessel_alloc_array(a, most, sizeof(uint64_t));
        w.fill = tessel_alloc_array(a, most_tiles, sizeof(uint64_t));
        if (!w.ent || !w.tmp || !w.fill)
            rc = TESSEL_ENOMEM;
    }
    for (uint64_t i = 0; i < w.npick && !rc;) {
        uint64_t j = i;
        while (j < w.npick &&
               tessel_tile_grid_group(g, w.pick[j]) == tessel_tile_grid_group(g, w.pick[i]))
            j++;
        band_pairs(&w, i, j);
        i = j;
    }
    /* eq. 11: normalised by the s = 0 sum (the sampled nonzeros). */
    for (unsigned m = 0; m < 2 && !rc; m++) {
        double total = s->corrs[m][0];
        for (uint64_t d = 0; d < s->ncorrs[m] && total > 0; d++)
            s->corrs[m][d] /= total;
    }
    tessel_dealloc(a, (void *)w.pick);
    tessel_dealloc(a, w.ent);
    tessel_dealloc(a, w.tmp);
    tessel_dealloc(a, w.fill);
    return rc;
}

/* ------------------------------------------------------------------ */

/* Non-empty rows summed over the non-empty tiles: the (row, tile column)
 * segments of the matrix, counted in one walk over the entries. */
static uint64_t row_segments(const tessel_tensor *t, uint64_t b1)
{
    uint64_t segs = 0;
    if ((b1 & (b1 - 1)) == 0) {
        /* Power-of-two tiles (the usual case): a shift instead of a division. */
        unsigned shift = 0;
        while ((1ull << shift) < b1)
            shift++;
        for (uint64_t r = 0; r < t->dims[0]; r++) {
            uint64_t last = UINT64_MAX;
            for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
                uint64_t j = (uint64_t)t->idx[1][p] >> shift;
                segs += j != last;
                last = j;
            }
        }
        return segs;
    }
    for (uint64_t r = 0; r < t->dims[0]; r++) {
        /* Entries are sorted: divide once per segment, not per entry. */
        uint64_t end = 0;
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            uint64_t col = t->idx[1][p];
            if (col >= end) {
                end = (div32(col, b1) + 1) * b1;
                segs++;
            }
        }
    }
    return segs;
}

static int check_args(const tessel_tensor *t, const uint64_t *base, double f, tessel_diag *diag)
{
    if (!t || !base)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               "D2T2 statistics need a tensor and a base tile shape");
    if (t->order != 2)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, NULL, 0, 0, NULL,
                               "D2T2 statistics are defined for matrices (order 2); this tensor "
                               "has order %u",
                               t->order);
    for (unsigned m = 0; m < 2; m++)
        if (base[m] == 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "base",
                                   "base tile extent of mode %u is 0; it must be >= 1", m);
    if (!(f > 0 && f <= 1))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "sample_fraction",
                               "sample fraction %g is outside (0, 1]", f);
    return TESSEL_OK;
}

static int alloc_arrays(tessel_d2t2_stats *s)
{
    for (unsigned m = 0; m < 2; m++) {
        s->ncorrs[m] = s->base[m];
        s->ntile_corrs[m] = s->extent[m] < TILE_CORRS_MAX ? s->extent[m] : TILE_CORRS_MAX;
        s->corrs[m] = tessel_alloc_array(s->alloc, s->ncorrs[m], sizeof(double));
        s->tile_corrs[m] = s->ntile_corrs[m]
                               ? tessel_alloc_array(s->alloc, s->ntile_corrs[m], sizeof(double))
                               : NULL;
        if (!s->corrs[m] || (s->ntile_corrs[m] && !s->tile_corrs[m]))
            return TESSEL_ENOMEM;
        memset(s->corrs[m], 0, s->ncorrs[m] * sizeof(double));
    }
    return TESSEL_OK;
}

/* The fields that follow from the base grid's counts alone. */
static int grid_fields(const tessel_tile_grid *g, tessel_d2t2_stats *s, const tessel_allocator *a)
{
    s->nonempty_tiles = g->nonempty;
    for (uint64_t i = 0; i < g->nonempty; i++)
        s->max_tile = tessel_tile_grid_count(g, i) > s->max_tile ? tessel_tile_grid_count(g, i)
                                                                  : s->max_tile;
    double n = (double)g->nonempty;
    s->size_tile = g->nonempty ? (double)s->nnz / n : 0;
    uint64_t *set[2], nset[2];
    int rc = tile_sets(g, a, &set[0], &nset[0], &set[1], &nset[1]);
    if (rc)
        return rc;
    /* eq. 9: PrTileIdx of the outer (tile) indices; their product is
     * nonempty / (extent[0] * extent[1]). */
    if (nset[0]) {
        s->pr_tile_idx[0] = (double)nset[0] / (double)s->extent[0];
        s->pr_tile_idx[1] = n / (double)nset[0] / (double)s->extent[1];
    }
    /* eq. 12 over the non-empty tile rows and tile columns. */
    for (unsigned m = 0; m < 2 && !rc; m++)
        rc = tile_corrs_of(set[m], nset[m], s->extent[m], s->ntile_corrs[m], a,
                           s->tile_corrs[m]);
    tessel_dealloc(a, set[0]);
    tessel_dealloc(a, set[1]);
    return rc;
}

int tessel_d2t2_collect(const tessel_tensor *t, const uint64_t *base, double sample_fraction,
                        uint64_t seed, const tessel_allocator *a, tessel_d2t2_stats **out,
                        tessel_diag *diag)
{
    if (!out)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL, "no output pointer");
    *out = NULL;
    int rc = check_args(t, base, sample_fraction, diag);
    if (rc)
        return rc;
    tessel_d2t2_stats *s = tessel_alloc(a, sizeof(*s));
    if (!s)
        return oom(diag, "creating the Corrs statistics", sizeof(*s));
    memset(s, 0, sizeof(*s));
    s->alloc = a;
    s->nnz = t->nnz;
    s->sample_fraction = sample_fraction;
    s->seed = seed;
    for (unsigned m = 0; m < 2; m++) {
        s->dims[m] = t->dims[m];
        /* Cut to the mode as the tile grid does (grid.c); 1 for an empty mode. */
        s->base[m] = base[m] < t->dims[m] ? base[m] : (t->dims[m] ? t->dims[m] : 1);
        s->extent[m] = t->dims[m] ? (t->dims[m] - 1) / s->base[m] + 1 : 0;
    }
    tessel_tile_grid *g = NULL;
    rc = alloc_arrays(s);
    if (rc) {
        tessel_d2t2_free(&s);
        return oom(diag, "allocating the Corrs arrays", 0);
    }
    rc = tessel_tile_grid_build(t, s->base, a, &g, diag);
    if (rc) {
        tessel_d2t2_free(&s);
        return rc;
    }
    rc = grid_fields(g, s, a);
    if (!rc && g->nonempty) {
        /* eq. 10: CSF fiber averages over the non-empty tiles. Level 0: the
         * non-empty rows of a tile over base[0]; level 1: the nonzeros of
         * a non-empty row segment over base[1], averaged over all row
         * segments (nnz / segments), so that prob_index[0] *
         * prob_index[1] * base[0] * base[1] = SizeTile. Edge tiles are
         * divided by the full base edge, as footprints charge them. */
        uint64_t segs = row_segments(t, s->base[1]);
        s->size_tile_rows = (double)segs / (double)g->nonempty;
        s->prob_index[0] = s->size_tile_rows / (double)s->base[0];
        s->prob_index[1] = (double)t->nnz / (double)segs / (double)s->base[1];
    }
    if (!rc)
        rc = corrs_of(t, g, s, a);
    tessel_tile_grid_free(&g);
    if (rc) {
        tessel_d2t2_free(&s);
        return oom(diag, "collecting the Corrs correlations (D2T2 eq. 10-12)", 0);
    }
    *out = s;
    return TESSEL_OK;
}

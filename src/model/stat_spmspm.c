/* The statistical estimator for SpMSpM Z[i,j] = A[i,k] * B[k,j] at one
 * storage boundary (d2t2 section 5.1, eqs. 13-20, extended to the three
 * canonical loop orders IJK, IKJ and KIJ; the other three are their
 * mirror images, see stat.c).
 *
 * Known exactly from the statistics: the tile grids of A and B at the
 * boundary's shape (derived from the saved base grid), hence which tile
 * iterations are effectual. So the inputs' sums over the tiling domain of
 * P(access) x SizeTile (eqs. 13, 16, 17) are evaluated tile by tile, with
 * each tile's own size instead of the average SizeTile, and with the reuse
 * of a resident tile between consecutive effectual iterations (rule 1).
 * The output tile pairs are walked with bitsets over the reduction tiles:
 * O(ext_i * ext_j * ext_k / 64) word operations, never a pass over data.
 *
 * Estimated: the output's nonzeros and the partial tiles its write-backs
 * carry (eq. 19). From the output sample when there is one: each sampled
 * nonzero is written back by every run of visits to its tile that ends at
 * or after its first reduction step. Without a sample, eq. 20: the
 * multiplies of a tile pair (its share of the exact total) grouped by the
 * Corrs multiplicity fall independently into the tile's cells, and partial
 * tiles grow linearly with the reduction steps. */
#include <string.h>

#include "stat_closed.h"

/* Walks that would cost more word operations than this use the
 * independence approximation of the tile-pair structure instead. */
#define BITSET_BUDGET (UINT64_C(1) << 28)

static inline unsigned low_bit(uint64_t x)
{
    return (unsigned)__builtin_ctzll(x);
}

static inline unsigned high_bit(uint64_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

/* ------------------------------------------------------------------ */
/* Working state of one evaluation (types in stat_closed.h). */

void stat_work_free(work *w)
{
    const tessel_allocator *a = w->p->alloc;
    tessel_dealloc(a, w->a_price);
    tessel_dealloc(a, w->b_price);
    tessel_dealloc(a, w->a_col);
    tessel_dealloc(a, w->a_first);
    tessel_dealloc(a, w->a_last);
    tessel_dealloc(a, w->a_col_nnz);
    tessel_dealloc(a, w->b_row);
    tessel_dealloc(a, w->b_row_nnz);
    tessel_dealloc(a, w->arows);
    tessel_dealloc(a, w->bcols);
    tessel_dealloc(a, w->merge_bits);
    tessel_dealloc(a, w->merge_j);
}

pricer stat_pricer_of(const tile_cost *tc)
{
    pricer pr;
    tessel_format_footprint_bits(tc->format, tc->order, tc->shape, &tc->widths, &pr.fixed,
                                 &pr.per);
    pr.value_bits = tc->widths.value_bits;
    pr.whole = pr.fixed >= 0 && pr.fixed < 0x1p52 && pr.per >= 0 && pr.per < 0x1p20 &&
               pr.fixed == floor(pr.fixed) && pr.per == floor(pr.per);
    pr.ifixed = pr.whole ? (uint64_t)pr.fixed : 0;
    pr.iper = pr.whole ? (uint64_t)pr.per : 0;
    pr.ivalue = (uint64_t)tc->widths.value_bits;
    return pr;
}

static price tile_price(const tile_cost *tc, uint64_t nnz)
{
    uint64_t d, m;
    exact_tile_bytes(tc, nnz, NULL, &d, &m);
    return (price){ (double)d, (double)m };
}

static affine affine_fit(const tile_cost *tc, uint64_t cells)
{
    uint64_t n = cells ? cells : 1;
    price empty = tile_price(tc, 0), full = tile_price(tc, n);
    affine f = { (full.data - empty.data) / (double)n, empty.meta,
                 (full.meta - empty.meta) / (double)n };
    return f;
}

void *stat_zeroed(const tessel_allocator *a, uint64_t n, size_t size)
{
    void *p = tessel_alloc_array(a, n ? n : 1, size);
    if (p)
        memset(p, 0, (n ? n : 1) * size);
    return p;
}

int stat_work_init(work *w, const stat_problem *p, int bitsets, int prices)
{
    const tessel_allocator *a = p->alloc;
    uint64_t K = p->ext_k;
    memset(w, 0, sizeof(*w));
    w->p = p;
    w->bitsets = bitsets;
    w->words = (K + 63) / 64;
    if (prices) {
        w->price_a = stat_pricer_of(&p->cost_a);
        w->price_b = stat_pricer_of(&p->cost_b);
        w->a_price = stat_zeroed(a, p->a.n, sizeof(price));
        w->b_price = stat_zeroed(a, p->b.n, sizeof(price));
    }
    w->a_col = stat_zeroed(a, K, sizeof(uint64_t));
    w->a_first = stat_zeroed(a, K, sizeof(uint64_t));
    w->a_last = stat_zeroed(a, K, sizeof(uint64_t));
    w->a_col_nnz = stat_zeroed(a, K, sizeof(double));
    w->b_row = stat_zeroed(a, K, sizeof(uint64_t));
    w->b_row_nnz = stat_zeroed(a, K, sizeof(double));
    if (bitsets) {
        w->arows = stat_zeroed(a, p->ext_i * w->words, sizeof(uint64_t));
        w->bcols = stat_zeroed(a, p->ext_j * w->words, sizeof(uint64_t));
        w->merge_bits = stat_zeroed(a, p->ext_i * w->words, sizeof(uint64_t));
        w->merge_j = stat_zeroed(a, K, sizeof(uint64_t));
    }
    if ((prices && (!w->a_price || !w->b_price)) || !w->a_col || !w->a_first || !w->a_last ||
        !w->a_col_nnz || !w->b_row || !w->b_row_nnz ||
        (bitsets && (!w->arows || !w->bcols || !w->merge_bits || !w->merge_j))) {
        stat_work_free(w);
        return TESSEL_ENOMEM;
    }
    for (uint64_t k = 0; k < K; k++) {
        w->a_first[k] = UINT64_MAX;
        w->b_row[k] = p->b.ptr[k + 1] - p->b.ptr[k];
    }
    for (uint64_t k = 0; k < p->b.rows; k++)
        for (uint64_t n = p->b.ptr[k]; n < p->b.ptr[k + 1]; n++) {
            if (prices)
                w->b_price[n] = stat_fast_price(&w->price_b, p->b.nnz[n]);
            w->b_row_nnz[k] += (double)p->b.nnz[n];
            if (bitsets)
                w->bcols[p->b.col[n] * w->words + k / 64] |= UINT64_C(1) << (k % 64);
        }
    for (uint64_t i = 0; i < p->a.rows; i++)
        for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++) {
            uint64_t k = p->a.col[n];
            if (prices)
                w->a_price[n] = stat_fast_price(&w->price_a, p->a.nnz[n]);
            w->a_col[k]++;
            w->a_col_nnz[k] += (double)p->a.nnz[n];
            if (w->a_first[k] == UINT64_MAX)
                w->a_first[k] = i;
            w->a_last[k] = i;
            if (bitsets)
                w->arows[i * w->words + k / 64] |= UINT64_C(1) << (k % 64);
        }
    return TESSEL_OK;
}

/* B's first and last non-empty tile column in tile row k. */
uint64_t stat_b_first_j(const stat_problem *p, uint64_t k)
{
    return p->b.col[p->b.ptr[k]];
}

uint64_t stat_b_last_j(const stat_problem *p, uint64_t k)
{
    return p->b.col[p->b.ptr[k + 1] - 1];
}

/* Index of B's tile (k, j), which must be non-empty. */
uint64_t stat_b_tile(const stat_problem *p, uint64_t k, uint64_t j)
{
    uint64_t lo = p->b.ptr[k], hi = p->b.ptr[k + 1];
    while (lo + 1 < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (p->b.col[mid] <= j)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------------ */
/* Rule 1 and rule 4 bookkeeping. */

void stat_add_fill(stat_counts *c, double times, price pr, uint64_t part)
{
    c->fills += times;
    c->fill_data += times * pr.data;
    c->fill_meta += times * pr.meta;
    if (part && pr.data + pr.meta > (double)part)
        c->overflow_fills += times;
    if (times > 0 && pr.data + pr.meta > c->worst)
        c->worst = pr.data + pr.meta;
}

static void remove_fill(stat_counts *c, price pr, uint64_t part)
{
    stat_add_fill(c, -1, pr, part);
}

/* Tile n of canonical input q (0: a, 1: b) filled `times` more times, kept
 * per tile when stat_bumped.c needs it. */
static void keep_fills(const stat_problem *p, unsigned q, uint64_t n, double times)
{
    if (p->tile_fills[q])
        p->tile_fills[q][n] += times;
}

/* `times` uses of a resident overbooked tile without a fill: the part
 * beyond the partition streams again each time (rule 4), split like the
 * tile's own bytes. */
void stat_add_bumped(stat_counts *c, double times, price pr, uint64_t part)
{
    double total = pr.data + pr.meta;
    if (!part || total <= (double)part || times <= 0)
        return;
    /* the same truncation as the exact walk */
    double extra = total - (double)part, meta = floor(extra * pr.meta / total);
    c->bumped_data += times * (extra - meta);
    c->bumped_meta += times * meta;
}

/* ------------------------------------------------------------------ */
/* The output tile pairs: v = |K(i) & K(j)| effectual reduction steps. */

/* IJK also needs, in the same walk, the resident tiles that serve two
 * consecutive iterations: A's tile (i, k) when one pair ends and the next
 * pair of row i starts on k; B's tile when row i ends on the tile the next
 * row starts on. With o, they are taken off o's fills; with reuse_a and
 * reuse_b, counted per tile instead (stat_cache.c prices them later). */
void stat_walk_pairs(const work *w, pair_sums *ps, stat_outcome *o, uint64_t *reuse_a,
                     uint64_t *reuse_b)
{
    const stat_problem *p = w->p;
    uint64_t words = w->words;
    int ijk = strcmp(p->order, "IJK") == 0;
    uint64_t prev_row_j = UINT64_MAX, prev_row_k = UINT64_MAX;
    memset(ps, 0, sizeof(*ps));
    for (uint64_t i = 0; i < p->a.rows; i++) {
        if (p->a.ptr[i] == p->a.ptr[i + 1])
            continue;
        const uint64_t *ar = &w->arows[i * words];
        uint64_t prev_last = UINT64_MAX, first_j = UINT64_MAX, first_k = 0, last_j = 0,
                 last_k = 0;
        for (uint64_t j = 0; j < p->ext_j; j++) {
            const uint64_t *bc = &w->bcols[j * words];
            uint64_t v = 0, first = UINT64_MAX, last = 0;
            for (uint64_t x = 0; x < words; x++) {
                uint64_t m = ar[x] & bc[x];
                if (!m)
                    continue;
                v += stat_bits_set(m);
                if (first == UINT64_MAX)
                    first = x * 64 + low_bit(m);
                last = x * 64 + high_bit(m);
            }
            if (!v)
                continue;
            ps->pairs += 1;
            ps->sum_v += (double)v;
            ps->sum_v2 += (double)v * (double)v;
            if (!ijk)
                continue;
            if (first == prev_last) {
                uint64_t n = p->a.ptr[i];
                while (p->a.col[n] != first)
                    n++;
                if (o) {
                    remove_fill(&o->a, w->a_price[n], p->part_a);
                    keep_fills(p, 0, n, -1);
                    stat_add_bumped(&o->a, 1, w->a_price[n], p->part_a);
                }
                if (reuse_a)
                    reuse_a[n]++;
            }
            prev_last = last;
            if (first_j == UINT64_MAX)
                first_j = j, first_k = first;
            last_j = j, last_k = last;
        }
        if (ijk && first_j != UINT64_MAX) {
            if (first_j == prev_row_j && first_k == prev_row_k) {
                uint64_t n = stat_b_tile(p, first_k, first_j);
                if (o) {
                    remove_fill(&o->b, w->b_price[n], p->part_b);
                    keep_fills(p, 1, n, -1);
                    stat_add_bumped(&o->b, 1, w->b_price[n], p->part_b);
                }
                if (reuse_b)
                    reuse_b[n]++;
            }
            prev_row_j = last_j, prev_row_k = last_k;
        }
    }
}

/* The same sums without the walk: the output tile columns of a row are
 * the union of the B tile rows it meets, taken as independent. */
void stat_estimate_pairs(const work *w, double effectual, pair_sums *ps)
{
    const stat_problem *p = w->p;
    memset(ps, 0, sizeof(*ps));
    double J = (double)p->ext_j;
    for (uint64_t i = 0; i < p->a.rows; i++) {
        double empty = 1, sum = 0;
        for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++) {
            double r = (double)w->b_row[p->a.col[n]];
            empty *= 1 - r / J;
            sum += r;
        }
        double union_size = J * (1 - empty);
        ps->pairs += union_size < sum ? union_size : sum;
    }
    ps->sum_v = effectual;
    ps->sum_v2 = ps->pairs > 0 ? effectual * effectual / ps->pairs : 0;
}

/* ------------------------------------------------------------------ */
/* Inputs: eqs. 16 and 17 evaluated tile by tile. */

/* A when j is the innermost loop (IKJ, KIJ): one fill per A tile that
 * meets a non-empty B tile row; its other uses stream its overflow. */
static void input_a_outer(const work *w, stat_counts *c)
{
    const stat_problem *p = w->p;
    for (uint64_t n = 0; n < p->a.n; n++) {
        uint64_t uses = w->b_row[p->a.col[n]];
        if (!uses)
            continue;
        stat_add_fill(c, 1, w->a_price[n], p->part_a);
        stat_add_bumped(c, (double)uses - 1, w->a_price[n], p->part_a);
        keep_fills(p, 0, n, 1);
    }
}

/* A when j is the middle loop (IJK): a fill per use; walk_pairs takes off
 * the reuses. */
static void input_a_middle(const work *w, stat_counts *c)
{
    const stat_problem *p = w->p;
    for (uint64_t n = 0; n < p->a.n; n++) {
        stat_add_fill(c, (double)w->b_row[p->a.col[n]], w->a_price[n], p->part_a);
        keep_fills(p, 0, n, (double)w->b_row[p->a.col[n]]);
    }
}

/* B when i is the middle loop (KIJ): inside reduction step k every row of
 * A tiles walks B's tile row k again; a row of one tile stays resident. */
static void input_b_middle(const work *w, stat_counts *c)
{
    const stat_problem *p = w->p;
    for (uint64_t k = 0; k < p->b.rows; k++) {
        uint64_t users = w->a_col[k];
        for (uint64_t n = p->b.ptr[k]; users && n < p->b.ptr[k + 1]; n++) {
            if (w->b_row[k] == 1) {
                stat_add_fill(c, 1, w->b_price[n], p->part_b);
                stat_add_bumped(c, (double)users - 1, w->b_price[n], p->part_b);
                keep_fills(p, 1, n, 1);
            } else {
                stat_add_fill(c, (double)users, w->b_price[n], p->part_b);
                keep_fills(p, 1, n, (double)users);
            }
        }
    }
}

/* B when i is the outermost loop (IJK, IKJ): a fill per use, except where
 * one row of A tiles ends on the B tile the next row starts on (IJK:
 * found by walk_pairs; IKJ: here). */
static void input_b_outer(const work *w, stat_counts *c)
{
    const stat_problem *p = w->p;
    for (uint64_t k = 0; k < p->b.rows; k++)
        for (uint64_t n = p->b.ptr[k]; w->a_col[k] && n < p->b.ptr[k + 1]; n++) {
            stat_add_fill(c, (double)w->a_col[k], w->b_price[n], p->part_b);
            keep_fills(p, 1, n, (double)w->a_col[k]);
        }
    if (strcmp(p->order, "IKJ") != 0)
        return;
    uint64_t prev_k = UINT64_MAX, prev_j = UINT64_MAX;
    for (uint64_t i = 0; i < p->a.rows; i++) {
        uint64_t fk = UINT64_MAX, lk = UINT64_MAX;
        for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++)
            if (w->b_row[p->a.col[n]]) {
                if (fk == UINT64_MAX)
                    fk = p->a.col[n];
                lk = p->a.col[n];
            }
        if (fk == UINT64_MAX)
            continue;
        if (fk == prev_k && stat_b_first_j(p, fk) == prev_j) {
            uint64_t n = p->b.ptr[fk];
            remove_fill(c, w->b_price[n], p->part_b);
            stat_add_bumped(c, 1, w->b_price[n], p->part_b);
            keep_fills(p, 1, n, -1);
        }
        prev_k = lk;
        prev_j = stat_b_last_j(p, lk);
    }
}

/* ------------------------------------------------------------------ */
/* The output (eqs. 19-20). */

static void set_merge(work *w, uint64_t i, uint64_t k, uint64_t j)
{
    w->merges += 1;
    if (w->merge_bits) {
        w->merge_bits[i * w->words + k / 64] |= UINT64_C(1) << (k % 64);
        w->merge_j[k] = j;
    }
}

/* Consecutive effectual iterations on one output tile merge two runs of
 * visits. IKJ: inside row i, consecutive effectual k meet when B's tile
 * row k_a ends on the tile column B's row k_b starts on. KIJ:
 * consecutive effectual k whose last and first (i, j) coincide. */
void stat_find_merges(work *w)
{
    const stat_problem *p = w->p;
    if (strcmp(p->order, "IKJ") == 0) {
        for (uint64_t i = 0; i < p->a.rows; i++) {
            uint64_t prev_k = UINT64_MAX;
            for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++) {
                uint64_t k = p->a.col[n];
                if (!w->b_row[k])
                    continue;
                if (prev_k != UINT64_MAX && stat_b_first_j(p, k) == stat_b_last_j(p, prev_k))
                    set_merge(w, i, prev_k, stat_b_last_j(p, prev_k));
                prev_k = k;
            }
        }
    } else if (strcmp(p->order, "KIJ") == 0) {
        uint64_t prev_k = UINT64_MAX;
        for (uint64_t k = 0; k < p->ext_k; k++) {
            if (!w->a_col[k] || !w->b_row[k])
                continue;
            if (prev_k != UINT64_MAX && w->a_first[k] == w->a_last[prev_k] &&
                stat_b_first_j(p, k) == stat_b_last_j(p, prev_k))
                set_merge(w, w->a_last[prev_k], prev_k, stat_b_last_j(p, prev_k));
            prev_k = k;
        }
    }
}

/* Expected nonzeros of an output tile of `cells` cells that receives
 * `products` multiplies in groups of `multiplicity` (eq. 20). */
static double tile_nonzeros(double products, double multiplicity, double cells)
{
    if (products <= 0 || cells <= 0)
        return 0;
    double groups = products / (multiplicity > 1 ? multiplicity : 1);
    return cells * -expm1(-groups / cells);
}

/* Base cell -> tile along one index: a table for the cells the tiles
 * cover (tiles * f), a division beyond it. */
typedef struct cell_tiles {
    uint32_t *tile;
    uint64_t n, f;
} cell_tiles;

static int cell_tiles_init(cell_tiles *t, uint64_t tiles, uint64_t f, const tessel_allocator *a)
{
    t->f = f ? f : 1;
    t->n = tiles * t->f;
    t->tile = tessel_alloc_array(a, t->n + 1, sizeof(uint32_t));
    if (!t->tile)
        return TESSEL_ENOMEM;
    for (uint64_t c = 0; c < t->n; c++)
        t->tile[c] = (uint32_t)(c / t->f);
    return TESSEL_OK;
}

static void cell_tiles_free(cell_tiles *t, const tessel_allocator *a)
{
    tessel_dealloc(a, t->tile);
    t->tile = NULL;
}

static inline uint64_t cell_tile(const cell_tiles *t, uint64_t c)
{
    return c < t->n ? t->tile[c] : c / t->f;
}

/* Where the sample's cells land: the tile of each base cell along i, x,
 * j and the reduction step along k, without a division per cell. */
typedef struct cell_place {
    cell_tiles ti, tx, tj, tk;
} cell_place;

static void cell_place_free(cell_place *cp, const tessel_allocator *a)
{
    cell_tiles_free(&cp->ti, a);
    cell_tiles_free(&cp->tx, a);
    cell_tiles_free(&cp->tj, a);
    cell_tiles_free(&cp->tk, a);
}

static int cell_place_init(const stat_problem *p, cell_place *cp)
{
    memset(cp, 0, sizeof(*cp));
    uint64_t n1 = p->unfolded ? p->i_tiles : (p->sample_mirrored ? p->ext_j : p->ext_i);
    uint64_t n2 = p->sample_mirrored ? p->ext_i : p->ext_j;
    int rc = cell_tiles_init(&cp->ti, n1, p->f_i, p->alloc);
    if (!rc)
        rc = cell_tiles_init(&cp->tx, p->unfolded ? p->x_tiles : 1, p->unfolded ? p->f_x : 1,
                             p->alloc);
    if (!rc)
        rc = cell_tiles_init(&cp->tj, n2, p->f_j, p->alloc);
    if (!rc)
        rc = cell_tiles_init(&cp->tk, p->ext_k, p->f_k, p->alloc);
    if (rc)
        cell_place_free(cp, p->alloc);
    return rc;
}

static uint64_t cell_pair(const stat_problem *p, const cell_place *cp, uint64_t c)
{
    const stat_output_sample *s = p->sample;
    uint64_t s1 = cell_tile(&cp->ti, s->ci[c]), s2 = cell_tile(&cp->tj, s->cj[c]);
    if (p->unfolded)
        s1 = p->x_major ? cell_tile(&cp->tx, s->cx[c]) * p->i_tiles + s1
                        : s1 * p->x_tiles + cell_tile(&cp->tx, s->cx[c]);
    uint64_t r = p->sample_mirrored ? s2 : s1, q = p->sample_mirrored ? s1 : s2;
    return r * p->ext_j + q;
}

/* Weighted sampled nonzeros per output tile pair (cell_pair's keys). */
static int pair_totals(const stat_problem *p, const cell_place *cp, model_map *final)
{
    int rc = TESSEL_OK;
    for (uint64_t c = 0; !rc && c < p->sample->ncells; c++)
        rc = model_map_add(final, cell_pair(p, cp, c), p->sample->weight[c]);
    return rc;
}

/* Runs of one output tile pair that end at or after reduction step k:
 * its visits from k on, less the visits whose run continues. `suffix`
 * holds, per word, the runs counted in the words after it. */
typedef struct pair_runs {
    uint64_t words;
    uint64_t *ends;   /* visits that end a run */
    uint64_t *suffix; /* ends in words > w */
} pair_runs;

static void pair_runs_set(const work *w, uint64_t i, uint64_t j, pair_runs *pr)
{
    const uint64_t *x = &w->arows[i * w->words], *y = &w->bcols[j * w->words];
    const uint64_t *mb = &w->merge_bits[i * w->words];
    for (uint64_t wd = 0; wd < w->words; wd++) {
        uint64_t m = x[wd] & y[wd];
        for (uint64_t mm = m & mb[wd]; mm; mm &= mm - 1) {
            unsigned b = low_bit(mm);
            if (w->merge_j[wd * 64 + b] == j)
                m &= ~(UINT64_C(1) << b);
        }
        pr->ends[wd] = m;
    }
    uint64_t after = 0;
    for (uint64_t wd = w->words; wd-- > 0;) {
        pr->suffix[wd] = after;
        after += stat_bits_set(pr->ends[wd]);
    }
}

static uint64_t pair_runs_from(const pair_runs *pr, uint64_t k)
{
    uint64_t wd = k / 64;
    return stat_bits_set(pr->ends[wd] & (~UINT64_C(0) << (k % 64))) + pr->suffix[wd];
}

/* The sample's nonzeros, each written back by every run of visits to its
 * output tile that ends at or after its first reduction step. Returns
 * the weighted count of those write-backs' nonzeros. The cells are
 * sorted by (i, j, k) base cell, so each base pair sets up its tile
 * pair's runs once. */
int stat_sample_written(const work *w, double *written)
{
    const stat_problem *p = w->p;
    const stat_output_sample *s = p->sample;
    pair_runs pr = { w->words, NULL, NULL };
    pr.ends = tessel_alloc_array(p->alloc, w->words + 1, sizeof(uint64_t));
    pr.suffix = tessel_alloc_array(p->alloc, w->words + 1, sizeof(uint64_t));
    if (!pr.ends || !pr.suffix) {
        tessel_dealloc(p->alloc, pr.ends);
        tessel_dealloc(p->alloc, pr.suffix);
        return TESSEL_ENOMEM;
    }
    cell_place cp;
    int rc = cell_place_init(p, &cp);
    double sum = 0;
    uint64_t last_pair = UINT64_MAX;
    for (uint64_t g = 0; !rc && g < s->ngroups; g++) {
        uint64_t c = s->gstart[g], end = s->gstart[g + 1];
        uint64_t pair = cell_pair(p, &cp, c);
        if (pair != last_pair) /* groups of one tile pair often follow each other */
            pair_runs_set(w, pair / p->ext_j, pair % p->ext_j, &pr);
        last_pair = pair;
        const uint32_t *ck = s->ck;
        const double *weight = s->weight;
        for (; c < end; c++)
            sum += (double)pair_runs_from(&pr, cell_tile(&cp.tk, ck[c])) * weight[c];
    }
    if (!rc)
        cell_place_free(&cp, p->alloc);
    tessel_dealloc(p->alloc, pr.ends);
    tessel_dealloc(p->alloc, pr.suffix);
    *written = sum;
    return rc;
}

/* Output tile pairs holding a sampled nonzero (a bitset over the pairs);
 * with every row in the sample, exactly the non-empty output tiles. */
int stat_sample_pairs(const work *w, double *pairs)
{
    const stat_problem *p = w->p;
    const stat_output_sample *s = p->sample;
    uint64_t n = p->ext_i * p->ext_j;
    uint64_t *seen = tessel_alloc_array(p->alloc, n / 64 + 1, sizeof(uint64_t));
    if (!seen)
        return TESSEL_ENOMEM;
    memset(seen, 0, (n / 64 + 1) * sizeof(uint64_t));
    uint64_t count = 0;
    for (uint64_t g = 0; g < s->ngroups; g++) {
        uint64_t c = s->gstart[g];
        uint64_t s1 = s->ci[c] / p->f_i, s2 = s->cj[c] / p->f_j;
        if (p->unfolded)
            s1 = p->x_major ? (s->cx[c] / p->f_x) * p->i_tiles + s1
                            : s1 * p->x_tiles + s->cx[c] / p->f_x;
        uint64_t r = p->sample_mirrored ? s2 : s1, q = p->sample_mirrored ? s1 : s2;
        uint64_t bit = r * p->ext_j + q;
        if (!(seen[bit / 64] >> (bit % 64) & 1u)) {
            seen[bit / 64] |= UINT64_C(1) << (bit % 64);
            count++;
        }
    }
    tessel_dealloc(p->alloc, seen);
    *pairs = (double)count;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Rule 4 for the output (docs/semantics.md rule 4; Tailors §3.3, §6.2): an output tile
 * whose partial results outgrow its partition spills the excess to the
 * parent after every visit that does not end its run (IJK: all of a
 * pair's visits but its last; IKJ and KIJ: the visits whose run merges
 * into the next), and the next visit reads it back; the run's last visit
 * is the rule 2 write-back, which already moves the whole tile. The same
 * accounting as the exact walk (price_spills in exact_walk.c). */

/* An output tile of n nonzeros: rule 4's spill into o (times: how many
 * visits leave it so). The excess beyond the partition and its split into
 * data and metadata are an input's bumped part's (stat_add_bumped, the
 * exact walk's truncation): one computation for both directions. */
static void spill_add(affine z, uint64_t part, double n, double times, stat_outcome *o)
{
    price pr = { n * z.d1, z.m0 + n * z.m1 };
    stat_counts c;
    memset(&c, 0, sizeof(c));
    stat_add_bumped(&c, times, pr, part);
    o->z_spill_data += c.bumped_data;
    o->z_spill_meta += c.bumped_meta;
}

static double tile_bytes_of(affine z, double n)
{
    return z.m0 + n * (z.d1 + z.m1);
}

/* One output tile pair that may overflow: its visits in step order with
 * the partial nonzeros after each (steps[] / cum[] sorted, n entries). */
static void pair_spills(const work *w, uint64_t pair, const uint64_t *steps, const double *wts,
                        uint64_t n, pair_runs *pr, affine z, stat_outcome *o)
{
    const stat_problem *p = w->p;
    uint64_t r = pair / p->ext_j, q = pair % p->ext_j;
    int ijk = strcmp(p->order, "IJK") == 0;
    const uint64_t *x = &w->arows[r * w->words], *y = &w->bcols[q * w->words];
    if (!ijk)
        pair_runs_set(w, r, q, pr);
    uint64_t last = UINT64_MAX;
    for (uint64_t wd = w->words; wd-- > 0 && last == UINT64_MAX;)
        if (x[wd] & y[wd])
            last = wd * 64 + high_bit(x[wd] & y[wd]);
    double cum = 0;
    uint64_t c = 0;
    for (uint64_t wd = 0; wd < w->words; wd++)
        for (uint64_t m = x[wd] & y[wd]; m; m &= m - 1) {
            uint64_t k = wd * 64 + low_bit(m);
            while (c < n && steps[c] <= k)
                cum += wts[c++];
            int ends = ijk ? k == last : (pr->ends[wd] >> (k % 64) & 1u);
            double bytes = tile_bytes_of(z, cum);
            if (bytes > o->z_worst)
                o->z_worst = bytes;
            if (ends) {
                if (bytes > (double)p->part_z)
                    o->z_overflow_writebacks += 1;
            } else {
                spill_add(z, p->part_z, cum, 1, o);
            }
        }
}

/* Why a partial sample biased the spill high (issue 20): a sampled tile
 * pair's occupancy is the Horvitz-Thompson sum of its sampled rows'
 * nonzeros times their weights (1/inclusion probability, ~1/fraction): an
 * unbiased but noisy estimate when few sampled rows fall in the tile. The
 * spill is a hinge of the occupancy (zero up to the partition, linear
 * above), so the noise alone raises it (Jensen's inequality): +39 % and
 * +86 % on ca-GrQc at a 5 % sample, exact with the whole sample. So each
 * tile's occupancy is estimated, not taken as the weights pushed into it:
 * the pairs' estimates are shrunk toward the mean sampled pair of their
 * row of tiles (band), so that their spread within bands is the true one
 * (constrained empirical Bayes, Louis 1984):
 *   X~ = m + c (X^ - m),  c^2 = t2 / (t2 + k X^)
 * with m the band's mean, t2 the pooled within-band variance of X^ less
 * the sampling noise (0 when the noise explains it all: every pair at its
 * band's mean) and k X^ a pair's sampling variance, noise growing with
 * its nonzeros like a Poisson count's (k = total noise / total X^). The
 * noise comes from two half
 * samples: the sampled row groups (base cells along i, in storage order;
 * the cells are sorted by (i, x, j, k)) taken in turn, each a systematic
 * sample at half the rate like the draw (stat_output.c), so their
 * difference D = X^_a - X^_b has E[D^2] = Var(X^) + (X_a - X_b)^2, the
 * second term about Var(X^) / (w - 1) for w the mean weight: noise =
 * mean D^2 (1 - 1/w). A whole sample has w = 1: c = 1, no change. */
typedef struct shrink {
    /* per band (pair / ext_j): the sampled pairs' estimates summed and
     * the sampled pairs */
    model_map band_sum, band_n;
    double tau2, kappa; /* true within-band variance; noise per unit of X^ */
} shrink;

static void shrink_free(shrink *sh)
{
    model_map_free(&sh->band_sum);
    model_map_free(&sh->band_n);
}

/* The mean sampled pair of pair's band. */
static double band_mean(const stat_problem *p, const shrink *sh, uint64_t pair)
{
    uint64_t band = pair / p->ext_j;
    return model_map_weight(&sh->band_sum, band) / model_map_weight(&sh->band_n, band);
}

static int in_subset(uint64_t pair)
{
    return (pair * UINT64_C(0x9e3779b97f4a7c15)) >> 61 == 0;
}

static int shrink_init(const stat_problem *p, const cell_place *cp, const model_map *final,
                       shrink *sh)
{
    const stat_output_sample *s = p->sample;
    sh->band_sum = (model_map){ .alloc = p->alloc };
    sh->band_n = (model_map){ .alloc = p->alloc };
    sh->tau2 = -1; /* no shrinking */
    double wbar = s->sampled_nnz > 0 ? s->nnz / (double)s->sampled_nnz : 1;
    if (s->whole || wbar <= 1)
        return TESSEL_OK;
    int rc = TESSEL_OK;
    double pairs = 0;
    for (uint64_t e = 0; !rc && e < final->cap; e++)
        if (final->keys[e] != UINT64_MAX) {
            uint64_t band = final->keys[e] / p->ext_j;
            rc = model_map_add(&sh->band_sum, band, model_bits_double(final->vals[e]));
            if (!rc)
                rc = model_map_add(&sh->band_n, band, 1);
            pairs += 1;
        }
    /* the variances are pooled: with many pairs, a fixed eighth of them
     * (by a hash of the pair) estimates them at an eighth of the cost */
    int some = pairs >= 1024;
    model_map diff = { .alloc = p->alloc };
    uint64_t group = 0;
    for (uint64_t i = 0; !rc && i < s->ncells; i++) {
        if (i && (s->ci[i] != s->ci[i - 1] || (s->cx && s->cx[i] != s->cx[i - 1])))
            group++;
        uint64_t pair = cell_pair(p, cp, i);
        if (!some || in_subset(pair))
            rc = model_map_add(&diff, pair, group & 1 ? -s->weight[i] : s->weight[i]);
    }
    double n = 0, spread = 0, noise = 0, total = 0;
    for (uint64_t e = 0; !rc && e < final->cap; e++) {
        if (final->keys[e] == UINT64_MAX || (some && !in_subset(final->keys[e])))
            continue;
        double x = model_bits_double(final->vals[e]);
        double dx = x - band_mean(p, sh, final->keys[e]);
        double d = model_map_weight(&diff, final->keys[e]);
        n += 1;
        total += x;
        spread += dx * dx;
        noise += d * d * (1 - 1 / wbar);
    }
    model_map_free(&diff);
    if (!rc && n > 0) {
        sh->tau2 = spread > noise ? (spread - noise) / n : 0;
        sh->kappa = total > 0 ? noise / total : 0;
    }
    return rc;
}

/* The shrunk occupancy of pair (sampled estimate x) as a scale of its
 * sampled path. */
static double shrink_scale(const stat_problem *p, const shrink *sh, uint64_t pair, double x)
{
    if (sh->tau2 < 0 || x <= 0)
        return 1;
    double c = sh->tau2 > 0 ? sqrt(sh->tau2 / (sh->tau2 + sh->kappa * x)) : 0;
    double m = band_mean(p, sh, pair), t = m + c * (x - m);
    return t > 0 ? t / x : 0;
}

/* Groups the sample's weights by (pair, step) for the pairs whose final
 * tile (its shrunk estimate, shrink_init) overflows and prices each
 * such pair. */
static int sample_spills(const work *w, affine z, stat_outcome *o)
{
    const stat_problem *p = w->p;
    const stat_output_sample *s = p->sample;
    cell_place cp;
    model_map final = { .alloc = p->alloc }, steps = { .alloc = p->alloc };
    model_vec keys = { .alloc = p->alloc };
    pair_runs pr = { w->words, NULL, NULL };
    int rc = cell_place_init(p, &cp);
    if (rc)
        return rc;
    rc = pair_totals(p, &cp, &final);
    shrink sh = { .tau2 = -1 };
    if (!rc)
        rc = shrink_init(p, &cp, &final, &sh);
    /* a pair's partial tiles are never larger than its final one */
    uint64_t last = UINT64_MAX;
    int over = 0;
    for (uint64_t c = 0; !rc && c < s->ncells; c++) {
        uint64_t pair = cell_pair(p, &cp, c);
        if (pair != last) { /* a pair's cells come in runs: decide once per run */
            double x = model_map_weight(&final, pair);
            over = tile_bytes_of(z, x * shrink_scale(p, &sh, pair, x)) > (double)p->part_z;
            last = pair;
        }
        if (!over)
            continue;
        uint64_t key = pair * p->ext_k + cell_tile(&cp.tk, s->ck[c]);
        if (model_map_find(&steps, key) == UINT64_MAX && model_vec_push(&keys, key))
            rc = TESSEL_ENOMEM;
        if (!rc)
            rc = model_map_add(&steps, key, s->weight[c]);
    }
    uint64_t *st = NULL;
    double *wt = NULL;
    if (!rc && keys.n) {
        tessel_sort_u64_inplace(keys.v, keys.n, UINT64_MAX);
        st = tessel_alloc_array(p->alloc, keys.n, sizeof(uint64_t));
        wt = tessel_alloc_array(p->alloc, keys.n, sizeof(double));
        pr.ends = tessel_alloc_array(p->alloc, w->words + 1, sizeof(uint64_t));
        pr.suffix = tessel_alloc_array(p->alloc, w->words + 1, sizeof(uint64_t));
        if (!st || !wt || !pr.ends || !pr.suffix)
            rc = TESSEL_ENOMEM;
    }
    for (uint64_t b = 0; !rc && b < keys.n;) {
        uint64_t pair = keys.v[b] / p->ext_k, e = b;
        double scale = shrink_scale(p, &sh, pair, model_map_weight(&final, pair));
        for (; e < keys.n && keys.v[e] / p->ext_k == pair; e++) {
            st[e - b] = keys.v[e] % p->ext_k;
            wt[e - b] = scale * model_map_weight(&steps, keys.v[e]);
        }
        pair_spills(w, pair, st, wt, e - b, &pr, z, o);
        b = e;
    }
    tessel_dealloc(p->alloc, st);
    tessel_dealloc(p->alloc, wt);
    tessel_dealloc(p->alloc, pr.ends);
    tessel_dealloc(p->alloc, pr.suffix);
    model_vec_free(&keys);
    model_map_free(&final);
    model_map_free(&steps);
    shrink_free(&sh);
    cell_place_free(&cp, p->alloc);
    return rc;
}

/* Without a sample (or without the pair walk): every tile pair taken as
 * the mean one, nnz_pair nonzeros growing linearly over its vbar visits;
 * IKJ and KIJ spill at their merges, at half the tile. */
static void mean_spills(const work *w, const pair_sums *ps, double nnz, affine z,
                        stat_outcome *o)
{
    const stat_problem *p = w->p;
    double pairs = ps->pairs, vbar = ps->sum_v / pairs, tile = nnz / pairs;
    o->z_worst = tile_bytes_of(z, tile);
    if (strcmp(p->order, "IJK") == 0) {
        uint64_t v = (uint64_t)llround(vbar);
        for (uint64_t m = 1; m < v && m < 4096; m++)
            spill_add(z, p->part_z, tile * (double)m / (double)v, pairs, o);
        if (o->z_worst > (double)p->part_z)
            o->z_overflow_writebacks = pairs;
        return;
    }
    spill_add(z, p->part_z, tile / 2, w->merges, o);
    double per = o->z_writebacks > 0 ? o->z_out_data / (z.d1 > 0 ? z.d1 : 1) / o->z_writebacks : 0;
    if (tile_bytes_of(z, per) > (double)p->part_z)
        o->z_overflow_writebacks = o->z_writebacks;
}

int stat_sample_max_pair(const work *w, double *max)
{
    const stat_problem *p = w->p;
    cell_place cp;
    model_map final = { .alloc = p->alloc };
    *max = 0;
    int rc = cell_place_init(p, &cp);
    if (rc)
        return rc;
    rc = pair_totals(p, &cp, &final);
    double m = 0;
    for (uint64_t n = 0; !rc && n < final.cap; n++)
        if (final.keys[n] != UINT64_MAX && model_bits_double(final.vals[n]) > m)
            m = model_bits_double(final.vals[n]);
    model_map_free(&final);
    cell_place_free(&cp, p->alloc);
    *max = m;
    return rc;
}

double stat_output_tile_bytes(const stat_problem *p, double nnz)
{
    return tile_bytes_of(affine_fit(&p->cost_z, p->out_cells), nnz);
}

/* Whether an output tile could outgrow the output's partition at all. */
int stat_output_may_spill(const stat_problem *p)
{
    affine z = affine_fit(&p->cost_z, p->out_cells);
    return p->part_z && tile_bytes_of(z, (double)p->out_cells) > (double)p->part_z;
}

static int output_spills(const work *w, const pair_sums *ps, double nnz, affine z,
                         stat_outcome *o)
{
    const stat_problem *p = w->p;
    int rc = TESSEL_OK;
    if (p->sample && w->bitsets && w->arows)
        rc = sample_spills(w, z, o);
    else
        mean_spills(w, ps, nnz, z, o);
    o->z_out_data += o->z_spill_data;
    o->z_out_meta += o->z_spill_meta;
    o->z_in_data += o->z_spill_data;
    o->z_in_meta += o->z_spill_meta;
    return rc;
}

/* The output's nonzeros and the nonzeros its write-backs carry. */
static int output_volume(const work *w, const pair_sums *ps, const stat_known *known, double E,
                         double *nnz, double *written)
{
    const stat_problem *p = w->p;
    if (p->sample && w->bitsets) {
        *nnz = p->sample->nnz;
        /* IJK writes each output tile once, complete */
        if (strcmp(p->order, "IJK") != 0)
            return known ? (*written = known->written, TESSEL_OK) : stat_sample_written(w, written);
        *written = *nnz;
        return TESSEL_OK;
    }
    /* A pair with v effectual steps gets v / E of the multiplies. */
    double vbar = ps->sum_v / ps->pairs;
    double pair_nnz = tile_nonzeros(p->flops / E * vbar, p->multiplicity, (double)p->out_cells);
    double per_step = vbar > 0 ? pair_nnz / vbar : 0;
    *nnz = per_step * ps->sum_v;
    /* Linear growth: a pair written back after each of rho runs carries
     * P (rho + 1) / 2 in all; rho is v less its merges. */
    double rho = ps->sum_v2 / ps->sum_v * (E - w->merges) / E;
    *written = *nnz * (rho + 1) / 2;
    return TESSEL_OK;
}

int stat_output_traffic(const work *w, const pair_sums *ps, const stat_known *known,
                        stat_outcome *o)
{
    const stat_problem *p = w->p;
    affine z = affine_fit(&p->cost_z, p->out_cells);
    double E = o->effectual, pairs = ps->pairs;
    if (pairs <= 0 || E <= 0)
        return TESSEL_OK;
    double nnz, written;
    int rc = output_volume(w, ps, known, E, &nnz, &written);
    if (rc)
        return rc;
    o->out_nnz = nnz;
    o->out_pairs = pairs;
    o->out_nonempty = pairs * -expm1(-nnz / pairs);
    if (p->sample && p->sample->whole && w->bitsets) {
        if (known)
            o->out_nonempty = known->nonempty;
        else if ((rc = stat_sample_pairs(w, &o->out_nonempty)))
            return rc;
    }
    o->compulsory_z = o->out_nonempty * z.m0 + nnz * (z.d1 + z.m1);
    int spills = stat_output_may_spill(p);
    if (spills && known && known->max_pair_nnz >= 0) /* a summary: its fullest tile decides */
        spills = tile_bytes_of(z, known->max_pair_nnz) > (double)p->part_z;
    if (strcmp(p->order, "IJK") == 0) {
        o->z_writebacks = pairs;
        o->z_out_data = nnz * z.d1;
        o->z_out_meta = pairs * z.m0 + nnz * z.m1;
        return spills ? output_spills(w, ps, nnz, z, o) : TESSEL_OK;
    }
    /* Every write-back but a pair's last is read back later. */
    if (written < nnz)
        written = nnz;
    double read = written - nnz;
    o->z_writebacks = E - w->merges;
    o->z_updates = o->z_writebacks - pairs;
    o->z_out_data = written * z.d1;
    o->z_out_meta = o->z_writebacks * z.m0 + written * z.m1;
    o->z_in_data = read * z.d1;
    o->z_in_meta = o->z_updates * z.m0 + read * z.m1;
    return spills ? output_spills(w, ps, nnz, z, o) : TESSEL_OK;
}

int stat_bitsets_fit(const stat_problem *p)
{
    uint64_t words = (p->ext_k + 63) / 64;
    long double cost = (long double)p->ext_i * (long double)p->ext_j * (long double)words;
    return cost <= (long double)BITSET_BUDGET;
}

int stat_spmspm_evaluate(const stat_problem *p, stat_outcome *o)
{
    memset(o, 0, sizeof(*o));
    int bitsets = stat_bitsets_fit(p);
    work w;
    int rc = stat_work_init(&w, p, bitsets, 1);
    if (rc)
        return rc;
    double E = 0;
    for (uint64_t k = 0; k < p->ext_k; k++) {
        E += (double)w.a_col[k] * (double)w.b_row[k];
        o->operand_nnz[0] += w.a_col_nnz[k] * (double)w.b_row[k];
        o->operand_nnz[1] += w.b_row_nnz[k] * (double)w.a_col[k];
    }
    o->effectual = E;
    for (uint64_t n = 0; n < p->a.n; n++)
        o->compulsory_in += w.a_price[n].data + w.a_price[n].meta;
    for (uint64_t n = 0; n < p->b.n; n++)
        o->compulsory_in += w.b_price[n].data + w.b_price[n].meta;
    if (strcmp(p->order, "IJK") == 0)
        input_a_middle(&w, &o->a);
    else
        input_a_outer(&w, &o->a);
    if (strcmp(p->order, "KIJ") == 0)
        input_b_middle(&w, &o->b);
    else
        input_b_outer(&w, &o->b);
    pair_sums ps;
    if (bitsets)
        stat_walk_pairs(&w, &ps, o, NULL, NULL);
    else
        stat_estimate_pairs(&w, E, &ps);
    stat_find_merges(&w);
    rc = stat_output_traffic(&w, &ps, NULL, o);
    stat_work_free(&w);
    return rc;
}

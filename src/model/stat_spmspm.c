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
#include "stat_tiledfmt.h"

/* Walks that would cost more word operations than this use the
 * independence approximation of the tile-pair structure instead. */
#define BITSET_BUDGET (UINT64_C(1) << 28)


/* ------------------------------------------------------------------ */
/* Working state of one evaluation (types in stat_closed.h). */

void stat_work_free(work *w)
{
    const tessel_allocator *a = w->p->alloc;
    tessel_dealloc(a, w->a_price);
    tessel_dealloc(a, w->b_price);
    tessel_dealloc(a, w->a_size);
    tessel_dealloc(a, w->b_size);
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
    memset(&pr, 0, sizeof(pr));
    model_cost_footprint_bits(tc, &pr.fixed, &pr.per);
    pr.value_bits = tc->widths.value_bits;
    pr.split = tc->ranked;
    /* tiled-csf: its counts, else its worst case (exact_tile_bytes) */
    pr.rows = (tc->ranked && !model_ranks_affine(tc->ranks, tc->nranks)) || tc->tiled;
    pr.cost = *tc;
    pr.whole = !pr.split && !tc->tiled && pr.fixed >= 0 && pr.fixed < 0x1p52 && pr.per >= 0 && pr.per < 0x1p20 &&
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

affine stat_affine_fit(const tile_cost *tc, uint64_t cells)
{
    uint64_t n = cells ? cells : 1;
    price empty = tile_price(tc, 0), full = tile_price(tc, n);
    /* an uncompressed output's values (data in an empty tile) are a fixed
     * cost per tile like its mask: in m0 (stat_dense.c splits them back) */
    affine f = { (full.data - empty.data) / (double)n, empty.meta + empty.data,
                 (full.meta - empty.meta) / (double)n };
    return f;
}

void *stat_zeroed(const tessel_allocator *a, uint64_t n, size_t size)
{
    return tessel_alloc_zeroed(a, n ? n : 1, size);
}

/* Grid g's prices at pr into *per (one per tile) or, where a tile's price
 * is its size's and the sizes are fewer than the tiles, *size (one per
 * size up to the fullest tile): equal to stat_grid_price either way. */
static int work_prices(const tessel_allocator *a, const pricer *pr, const stat_grid *g,
                       price **per, price **size)
{
    *per = *size = NULL;
    if (!g->occ || !pr->rows) {
        uint64_t max = 0;
        for (uint64_t n = 0; n < g->n; n++)
            max = g->nnz[n] > max ? g->nnz[n] : max;
        if (max < g->n) {
            *size = stat_zeroed(a, max + 1, sizeof(price));
            if (!*size)
                return TESSEL_ENOMEM;
            for (uint64_t v = 0; v <= max; v++)
                (*size)[v] = stat_fast_price(pr, v);
            return TESSEL_OK;
        }
    }
    *per = stat_zeroed(a, g->n, sizeof(price));
    if (!*per)
        return TESSEL_ENOMEM;
    for (uint64_t n = 0; n < g->n; n++)
        (*per)[n] = stat_grid_price(pr, g, n);
    return TESSEL_OK;
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
        if (work_prices(a, &w->price_a, &p->a, &w->a_price, &w->a_size) ||
            work_prices(a, &w->price_b, &p->b, &w->b_price, &w->b_size)) {
            stat_work_free(w);
            return TESSEL_ENOMEM;
        }
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
    if (!w->a_col || !w->a_first || !w->a_last ||
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
            w->b_row_nnz[k] += (double)p->b.nnz[n];
            if (bitsets)
                w->bcols[p->b.col[n] * w->words + k / 64] |= UINT64_C(1) << (k % 64);
        }
    for (uint64_t i = 0; i < p->a.rows; i++)
        for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++) {
            uint64_t k = p->a.col[n];
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
    return stat_grid_lower(&p->b, k, j);
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

/* The walk inside one row i of A's tiles: the last reduction step of the
 * previous pair, and the row's first and last pair (j and k). */
typedef struct row_walk {
    uint64_t prev_last, first_j, first_k, last_j, last_k;
    const uint64_t *apos; /* IJK: A's tile (i, k) is p->a.col[apos[k]]; NULL: searched */
} row_walk;

/* Tile n of canonical input q (0: a, 1: b) stays resident for the next
 * iteration: one fill fewer off o (its overflow streams again instead),
 * or one more reuse counted in reuse. */
static void reuse_tile(const work *w, stat_outcome *o, unsigned q, uint64_t n, uint64_t *reuse)
{
    const stat_problem *p = w->p;
    if (o) {
        stat_counts *c = q ? &o->b : &o->a;
        price pr = stat_work_price(w, q, n);
        uint64_t part = q ? p->part_b : p->part_a;
        remove_fill(c, pr, part);
        keep_fills(p, q, n, -1);
        stat_add_bumped(c, 1, pr, part);
    }
    if (reuse)
        reuse[n]++;
}

/* Output tile pair (i, j) with v effectual steps from first to last
 * (pairs of a row come in ascending j). IJK also needs the resident tiles
 * that serve two consecutive iterations: A's tile (i, k) when one pair
 * ends and the next pair of row i starts on k (taken off o's fills, or
 * counted per tile in reuse_a). */
static inline void walk_pair(const work *w, pair_sums *ps, stat_outcome *o, uint64_t *reuse_a, int ijk,
                      uint64_t i, uint64_t j, uint64_t v, uint64_t first, uint64_t last,
                      row_walk *rw)
{
    const stat_problem *p = w->p;
    ps->pairs += 1;
    ps->sum_v += (double)v;
    ps->sum_v2 += (double)v * (double)v;
    if (!ijk)
        return;
    if (first == rw->prev_last) {
        uint64_t n = rw->apos ? rw->apos[first] : p->a.ptr[i];
        while (p->a.col[n] != first)
            n++;
        reuse_tile(w, o, 0, n, reuse_a);
    }
    rw->prev_last = last;
    if (rw->first_j == UINT64_MAX)
        rw->first_j = j, rw->first_k = first;
    rw->last_j = j, rw->last_k = last;
}

/* Row i's pairs from the bitsets: ext_j x words word operations. */
static void row_bitsets(const work *w, pair_sums *ps, stat_outcome *o, uint64_t *reuse_a,
                        int ijk, uint64_t i, row_walk *rw)
{
    uint64_t words = w->words;
    const uint64_t *ar = &w->arows[i * words];
    for (uint64_t j = 0; j < w->p->ext_j; j++) {
        const uint64_t *bc = &w->bcols[j * words];
        uint64_t v = 0, first = UINT64_MAX, last = 0;
        for (uint64_t x = 0; x < words; x++) {
            uint64_t m = ar[x] & bc[x];
            if (!m)
                continue;
            v += stat_bits_set(m);
            if (first == UINT64_MAX)
                first = x * 64 + stat_low_bit(m);
            last = x * 64 + stat_high_bit(m);
        }
        if (v)
            walk_pair(w, ps, o, reuse_a, ijk, i, j, v, first, last, rw);
    }
}

/* Per tile column j of one row: its effectual steps and first and last
 * k, accumulated over A's row and B's tile rows (Gustavson's row-wise
 * product), the columns met marked in `met` to be visited in ascending j. */
typedef struct row_acc {
    uint64_t *count, *first, *last, *met;
} row_acc;

/* Row i's pairs from the tile grids: as many steps as the row's effectual
 * iterations (far fewer than ext_j x words on small tiles, which d2t2's
 * candidates price by the hundred), the same pairs as row_bitsets. */
static void row_sparse(const work *w, pair_sums *ps, stat_outcome *o, uint64_t *reuse_a,
                       int ijk, uint64_t i, row_acc *acc, row_walk *rw)
{
    const stat_problem *p = w->p;
    for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++) {
        uint64_t k = p->a.col[n];
        for (uint64_t m = p->b.ptr[k]; m < p->b.ptr[k + 1]; m++) {
            uint64_t j = p->b.col[m];
            if (!acc->count[j]++) {
                acc->first[j] = acc->last[j] = k;
                acc->met[j / 64] |= UINT64_C(1) << (j % 64);
            }
            acc->first[j] = k < acc->first[j] ? k : acc->first[j];
            acc->last[j] = k > acc->last[j] ? k : acc->last[j];
        }
    }
    for (uint64_t x = 0; x < (p->ext_j + 63) / 64; x++)
        for (uint64_t bits = acc->met[x]; bits; bits &= bits - 1) {
            uint64_t j = x * 64 + stat_low_bit(bits);
            walk_pair(w, ps, o, reuse_a, ijk, i, j, acc->count[j], acc->first[j],
                      acc->last[j], rw);
            acc->count[j] = 0;
        }
    for (uint64_t x = 0; x < (p->ext_j + 63) / 64; x++)
        acc->met[x] = 0;
}

/* Every output tile pair, row by row, each row walked the cheaper way
 * (row_sparse when its effectual iterations are well below the bitsets'
 * word operations; row_bitsets also when the accumulator does not fit in
 * memory). IJK also needs B's tile that serves two consecutive rows: when
 * row i ends on the tile the next row starts on. With o, reuses are taken
 * off o's fills; with reuse_a and reuse_b, counted per tile instead
 * (stat_cache.c prices them later). */
void stat_walk_pairs(const work *w, pair_sums *ps, stat_outcome *o, uint64_t *reuse_a,
                     uint64_t *reuse_b)
{
    const stat_problem *p = w->p;
    const tessel_allocator *a = p->alloc;
    int ijk = strcmp(p->order, "IJK") == 0;
    uint64_t prev_row_j = UINT64_MAX, prev_row_k = UINT64_MAX;
    uint64_t met_words = (p->ext_j + 63) / 64;
    row_acc acc = { stat_zeroed(a, p->ext_j, sizeof(uint64_t)),
                    tessel_alloc_array(a, p->ext_j ? p->ext_j : 1, sizeof(uint64_t)),
                    tessel_alloc_array(a, p->ext_j ? p->ext_j : 1, sizeof(uint64_t)),
                    stat_zeroed(a, met_words, sizeof(uint64_t)) };
    int sparse_ok = acc.count && acc.first && acc.last && acc.met;
    /* IJK: where each k of the row sits in A's row (a search per reuse
     * otherwise, as long as the row on dense candidates) */
    uint64_t *apos = ijk ? tessel_alloc_array(a, p->ext_k ? p->ext_k : 1, sizeof(uint64_t))
                         : NULL;
    /* a row's bitset walk: ext_j x words AND-and-tests; a step of the
     * sparse one costs about as much as four of them (scattered access) */
    long double bitset_cost = (long double)p->ext_j * (long double)w->words;
    memset(ps, 0, sizeof(*ps));
    for (uint64_t i = 0; i < p->a.rows; i++) {
        if (p->a.ptr[i] == p->a.ptr[i + 1])
            continue;
        row_walk rw = { UINT64_MAX, UINT64_MAX, 0, 0, 0, apos };
        uint64_t steps = met_words;
        for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++) {
            steps += w->b_row[p->a.col[n]];
            if (apos)
                apos[p->a.col[n]] = n;
        }
        if (sparse_ok && 4.0L * (long double)steps < bitset_cost)
            row_sparse(w, ps, o, reuse_a, ijk, i, &acc, &rw);
        else
            row_bitsets(w, ps, o, reuse_a, ijk, i, &rw);
        if (ijk && rw.first_j != UINT64_MAX) {
            if (rw.first_j == prev_row_j && rw.first_k == prev_row_k) {
                reuse_tile(w, o, 1, stat_b_tile(p, rw.first_k, rw.first_j), reuse_b);
            }
            prev_row_j = rw.last_j, prev_row_k = rw.last_k;
        }
    }
    tessel_dealloc(a, acc.count);
    tessel_dealloc(a, acc.first);
    tessel_dealloc(a, acc.last);
    tessel_dealloc(a, acc.met);
    tessel_dealloc(a, apos);
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
        stat_add_fill(c, 1, stat_work_price(w, 0, n), p->part_a);
        stat_add_bumped(c, (double)uses - 1, stat_work_price(w, 0, n), p->part_a);
        keep_fills(p, 0, n, 1);
    }
}

/* A when j is the middle loop (IJK): a fill per use; walk_pairs takes off
 * the reuses. */
static void input_a_middle(const work *w, stat_counts *c)
{
    const stat_problem *p = w->p;
    for (uint64_t n = 0; n < p->a.n; n++) {
        stat_add_fill(c, (double)w->b_row[p->a.col[n]], stat_work_price(w, 0, n), p->part_a);
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
                stat_add_fill(c, 1, stat_work_price(w, 1, n), p->part_b);
                stat_add_bumped(c, (double)users - 1, stat_work_price(w, 1, n), p->part_b);
                keep_fills(p, 1, n, 1);
            } else {
                stat_add_fill(c, (double)users, stat_work_price(w, 1, n), p->part_b);
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
            stat_add_fill(c, (double)w->a_col[k], stat_work_price(w, 1, n), p->part_b);
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
            remove_fill(c, stat_work_price(w, 1, n), p->part_b);
            stat_add_bumped(c, 1, stat_work_price(w, 1, n), p->part_b);
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
        o->compulsory_in += stat_work_price(&w, 0, n).data + stat_work_price(&w, 0, n).meta;
    for (uint64_t n = 0; n < p->b.n; n++)
        o->compulsory_in += stat_work_price(&w, 1, n).data + stat_work_price(&w, 1, n).meta;
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
    stat_unskipped_inputs(&w, o); /* after the pair walk's reuses */
    stat_find_merges(&w);
    rc = stat_output_traffic(&w, &ps, NULL, o);
    stat_work_free(&w);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Inputs that do not skip on their partner (one buffer level). */

/* Where the input's free index (j for a, i for b) sits in the canonical
 * order: 0 outermost, 1 middle, 2 innermost. */
static int free_position(const char *order, unsigned q)
{
    return (int)(strchr(order, q ? 'I' : 'J') - order);
}

/* The fills, gated fills and rule 4 uses of one tile visited at F values
 * of the free index, e of them effectual (the partner's tile non-empty),
 * first: the first value's partner tile is non-empty. whole: the tile
 * stays resident across the F values (one run), else a run per value.
 * Returns the fills (kept per tile for rule 4 per read: stat_bumped.c's
 * stat_ob_level1 takes the uses, F read, e gated). */
static double unskipped_tile(stat_counts *c, int mode, int whole, double F, double e, int first,
                             price pr, uint64_t part)
{
    double fills, uses;
    if (mode == STAT_MODE_READ) {
        fills = whole ? 1 : F;
        uses = F;
    } else { /* gated: a run fills at its first effectual use, gates when it starts empty */
        fills = whole ? (e > 0) : e;
        c->gated += whole ? !first : F - e;
        uses = e;
    }
    stat_add_fill(c, fills, pr, part);
    stat_add_bumped(c, uses - fills, pr, part);
    return fills;
}

/* Canonical a: tile (i, k) over the j tiles, partner row k of b. Under
 * IKJ and KIJ (j innermost) a tile is one run; under IJK (j middle) a
 * row of one tile is one run, else every (j, k) its own run. */
static void unskipped_a(const work *w, stat_counts *c)
{
    const stat_problem *p = w->p;
    int inner = free_position(p->order, 0) == 2;
    double F = (double)p->ext_j;
    for (uint64_t i = 0; i < p->a.rows; i++)
        for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++) {
            uint64_t k = p->a.col[n];
            int first = w->b_row[k] && stat_b_first_j(p, k) == 0;
            int whole = inner || p->a.ptr[i + 1] - p->a.ptr[i] == 1;
            keep_fills(p, 0, n,
                       unskipped_tile(c, p->mode[0], whole, F, (double)w->b_row[k], first,
                                      stat_work_price(w, 0, n), p->part_a));
        }
}

/* Canonical b: tile (k, j) over the i tiles, partner column k of a. Under
 * IJK and IKJ (i outermost) every pass over b's tiles is new unless b has
 * one tile; under KIJ (i middle) a row k of one tile is one run. */
static void unskipped_b(const work *w, stat_counts *c)
{
    const stat_problem *p = w->p;
    int middle = free_position(p->order, 1) == 1;
    double F = (double)p->ext_i;
    for (uint64_t k = 0; k < p->b.rows; k++)
        for (uint64_t n = p->b.ptr[k]; n < p->b.ptr[k + 1]; n++) {
            int first = w->a_col[k] && w->a_first[k] == 0;
            int whole = middle ? p->b.ptr[k + 1] - p->b.ptr[k] == 1 : p->b.n == 1;
            keep_fills(p, 1, n,
                       unskipped_tile(c, p->mode[1], whole, F, (double)w->a_col[k], first,
                                      stat_work_price(w, 1, n), p->part_b));
        }
}

void stat_unskipped_inputs(const work *w, stat_outcome *o)
{
    const stat_problem *p = w->p;
    for (unsigned q = 0; q < 2; q++) /* the skipping sums' per-tile fills replaced */
        if (p->mode[q] != STAT_MODE_SKIP && p->tile_fills[q])
            memset(p->tile_fills[q], 0, (q ? p->b.n : p->a.n) * sizeof(double));
    if (p->mode[0] != STAT_MODE_SKIP) {
        memset(&o->a, 0, sizeof(o->a));
        unskipped_a(w, &o->a);
    }
    if (p->mode[1] != STAT_MODE_SKIP) {
        memset(&o->b, 0, sizeof(o->b));
        unskipped_b(w, &o->b);
    }
}

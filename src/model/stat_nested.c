/* The stat estimator's closed form for a nested boundary b >= 2 of SpMSpM
 * (and SpMV, whose j is a unit index): level b's tiles walked in the
 * composite loop order of levels 1 .. b (exact_geometry's digits).
 *
 * The effectual iterations at boundary b are those of a one-level problem
 * at level b's tile shape; only their order differs. A tile's uses come in
 * runs split by the loop digits that precede its own innermost digit
 * (d2t2 section 5, eqs. 16-17, with the tiling domain of the outer tile
 * that holds each inner tile, generalised to nesting):
 *
 *  - input A(I, K) is used once per non-empty B(K, J); its uses that share
 *    the j digits placed before A's innermost digit (i.e. one j tile at the
 *    deepest level whose j loop is outside A's innermost loop) follow each
 *    other, so A(I, K) is filled once per such coarse j block holding a
 *    non-empty B tile of row K. B likewise per coarse i block of column K
 *    of A.
 *  - output Z(I, J) is visited in one run per coarse k block (k digits
 *    before Z's innermost digit) holding an effectual K; runs are written
 *    back, all but the first read back (rule 2), and a sampled output
 *    nonzero is carried by every run of its tile from the block of its
 *    first multiply on.
 *
 * Not counted: runs that merge because the iterations between two coarse
 * blocks are all non-effectual (the one-level sums of stat_spmspm.c count
 * these at boundary 1; here they are left out, so fills and write-backs
 * are upper bounds, see docs/models/stat.md). Cost per boundary: the
 * non-empty level-b tiles, plus the output pairs' bitsets
 * (ext_i x ext_j x ext_k / 64 words, else an independence estimate), plus
 * the output sample's cells: never the effectual iterations. */
#include <math.h>
#include <string.h>

#include "stat_closed.h"
#include "stat_nested.h"

/* First K >= from where A's row and B's column (bitsets x, y) are both
 * non-empty, or UINT64_MAX. */
uint64_t stat_nested_next_common(const uint64_t *x, const uint64_t *y, uint64_t words, uint64_t from)
{
    uint64_t w = from / 64;
    if (w >= words)
        return UINT64_MAX;
    uint64_t m = x[w] & y[w] & (~UINT64_C(0) << (from % 64));
    while (!m) {
        if (++w >= words)
            return UINT64_MAX;
        m = x[w] & y[w];
    }
    return w * 64 + (uint64_t)__builtin_ctzll(m);
}

static void nested_free(nested *n)
{
    const tessel_allocator *a = n->e->alloc;
    stat_grid_free(a, &n->a);
    stat_grid_free(a, &n->b);
    tessel_dealloc(a, n->n_a);
    tessel_dealloc(a, n->n_ac);
    tessel_dealloc(a, n->n_b);
    tessel_dealloc(a, n->n_bc);
    tessel_dealloc(a, n->a_nnz);
    tessel_dealloc(a, n->b_nnz);
    tessel_dealloc(a, n->arows);
    tessel_dealloc(a, n->bcols);
}

/* The coarse block, in level-b tiles of index f, whose change splits the
 * runs of a tensor over engine indices x0 and x1: the finest tile of f
 * among f's loop digits that precede the tensor's innermost digit.
 * UINT64_MAX when none does (all uses of a tile are one run). */
uint64_t stat_nested_block(const boundary *bd, unsigned x0, unsigned x1, unsigned f)
{
    /* a digit of one value (a level whose tile equals its parent's)
     * never changes: it neither ends a tensor's loops nor splits runs */
    int last = -1;
    for (unsigned d = 0; d < bd->ndigits; d++)
        if ((bd->d[d].x == x0 || bd->d[d].x == x1) && bd->d[d].radix > 1)
            last = (int)d;
    uint64_t block = UINT64_MAX;
    for (int d = 0; d < last; d++)
        if (bd->d[d].x == f && bd->d[d].radix > 1 && bd->d[d].div < block)
            block = bd->d[d].div;
    return block;
}

static int counts_init(nested *n)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t K = n->ext_k;
    n->n_a = stat_zeroed(a, K, sizeof(uint64_t));
    n->n_ac = stat_zeroed(a, K, sizeof(uint64_t));
    n->n_b = stat_zeroed(a, K, sizeof(uint64_t));
    n->n_bc = stat_zeroed(a, K, sizeof(uint64_t));
    n->a_nnz = stat_zeroed(a, K, sizeof(double));
    n->b_nnz = stat_zeroed(a, K, sizeof(double));
    uint64_t *last = stat_zeroed(a, K, sizeof(uint64_t));
    if (!n->n_a || !n->n_ac || !n->n_b || !n->n_bc || !n->a_nnz || !n->b_nnz || !last) {
        tessel_dealloc(a, last);
        return TESSEL_ENOMEM;
    }
    for (uint64_t k = 0; k < K; k++)
        last[k] = UINT64_MAX;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        uint64_t blk = n->cf_i == UINT64_MAX ? 0 : i / n->cf_i;
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t];
            n->n_a[k]++;
            n->a_nnz[k] += (double)n->a.nnz[t];
            if (last[k] != blk) {
                last[k] = blk;
                n->n_ac[k]++;
            }
        }
    }
    for (uint64_t k = 0; k < K && k < n->b.rows; k++) {
        uint64_t prev = UINT64_MAX;
        n->n_b[k] = n->b.ptr[k + 1] - n->b.ptr[k];
        for (uint64_t t = n->b.ptr[k]; t < n->b.ptr[k + 1]; t++) {
            uint64_t blk = n->cf_j == UINT64_MAX ? 0 : n->b.col[t] / n->cf_j;
            n->b_nnz[k] += (double)n->b.nnz[t];
            if (blk != prev) {
                prev = blk;
                n->n_bc[k]++;
            }
        }
    }
    tessel_dealloc(a, last);
    return TESSEL_OK;
}

/* `uses` uses of a tile of price pr in `runs` runs: a fill per run, and
 * rule 4's overflow streamed again on every other use (as exact_walk). */
static void input_uses(stat_counts *c, price pr, uint64_t part, double runs, double uses)
{
    if (runs <= 0)
        return;
    stat_add_fill(c, runs, pr, part);
    stat_add_bumped(c, uses - runs, pr, part);
}

/* Last K < upto where both bitsets are set (one exists at or above the
 * caller's k). */
static uint64_t prev_common(const uint64_t *x, const uint64_t *y, uint64_t upto)
{
    uint64_t w = (upto - 1) / 64;
    unsigned top = (unsigned)((upto - 1) % 64);
    uint64_t m = x[w] & y[w] & (top == 63 ? ~UINT64_C(0) : (UINT64_C(1) << (top + 1)) - 1);
    while (!m) {
        w--;
        m = x[w] & y[w];
    }
    return w * 64 + 63u - (uint64_t)__builtin_clzll(m);
}

/* One input seen as X[o, k] against its partner P[k, f]: A with B
 * (o = i, f = j), or B^T with A^T (o = j, f = i). */
typedef struct side {
    const stat_grid *x, *p;
    unsigned xo, xf;           /* engine indices of o and f */
    unsigned op;               /* operand: 0 A, 1 B */
    uint64_t cf;               /* coarse f block splitting X's runs (stat_nested_block) */
} side;

/* Level b's own loop order: position of engine index x among level b's
 * digits, -1 when level b has no loop over x. */
static int level_pos(const nested *n, unsigned x)
{
    int p = 0;
    for (unsigned d = n->first_digit; d < n->bd.ndigits; d++) {
        if (n->bd.d[d].radix <= 1)
            continue; /* one value: no loop */
        if (n->bd.d[d].x == x)
            return p;
        p++;
    }
    return -1;
}

/* The block of level b-1's tile along x, in level-b tiles; UINT64_MAX
 * when level b-1 has no loop over x (one block). */
static uint64_t outer_block(const nested *n, unsigned x)
{
    for (unsigned d = n->first_digit; d-- > 0;)
        if (n->bd.d[d].x == x)
            return n->bd.d[d].div;
    return UINT64_MAX;
}

static uint64_t block_of(uint64_t v, uint64_t cf)
{
    return cf == UINT64_MAX ? 0 : v / cf;
}

/* The outer blocks of f inside which X's runs can merge: level b-1's f
 * tile, or none when level b-1's innermost loop (of the composite order
 * of levels 1 .. b-1) is f's, so that consecutive outer tiles along f
 * share X's tiles and continue its runs. */
static uint64_t merge_block_f(const nested *n, unsigned xf)
{
    for (unsigned d = n->first_digit; d-- > 0;)
        if (n->bd.d[d].radix > 1)
            return n->bd.d[d].x == xf ? UINT64_MAX : outer_block(n, xf);
    return outer_block(n, xf);
}

/* Distinct blocks of cf among the columns of row r of g (sorted). */
static uint64_t row_blocks(const stat_grid *g, uint64_t r, uint64_t cf)
{
    uint64_t cnt = 0, prev = UINT64_MAX;
    for (uint64_t t = g->ptr[r]; t < g->ptr[r + 1]; t++) {
        uint64_t b = block_of(g->col[t], cf);
        if (b != prev) {
            prev = b;
            cnt++;
        }
    }
    return cnt;
}

/* row_blocks once per row: memo[k] is 1 + the count, 0 not yet known. */
static double blocks_of(const stat_grid *p, uint64_t k, uint64_t cf, uint64_t *memo)
{
    if (!memo[k])
        memo[k] = 1 + row_blocks(p, k, cf);
    return (double)(memo[k] - 1);
}

/* Level-b order (k, f, o): inside one level b-1 tile, all uses of X(o, k)
 * at one k follow each other when it is the only tile of column k in its
 * o block: one run per outer f block instead of one per use. Marks those
 * tiles' runs in runs[]. */
static int merge_column_alone(const nested *n, const side *sd, double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    uint64_t cb_o = outer_block(n, sd->xo), cb_f = outer_block(n, sd->xf);
    uint64_t *blk = stat_zeroed(a, x->cols, sizeof(uint64_t));
    uint64_t *cnt = stat_zeroed(a, x->cols, sizeof(uint64_t));
    uint64_t *first = stat_zeroed(a, x->cols, sizeof(uint64_t));
    uint64_t *memo = stat_zeroed(a, p->rows, sizeof(uint64_t));
    if (!blk || !cnt || !first || !memo) {
        tessel_dealloc(a, blk);
        tessel_dealloc(a, cnt);
        tessel_dealloc(a, first);
        tessel_dealloc(a, memo);
        return TESSEL_ENOMEM;
    }
    for (uint64_t k = 0; k < x->cols; k++)
        blk[k] = UINT64_MAX;
    /* a column's tiles per o block, in row order: how many, the first */
    for (uint64_t o = 0; o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
            uint64_t k = x->col[t], b = block_of(o, cb_o);
            if (blk[k] != b) {
                if (cnt[k] == 1 && k < p->rows)
                    runs[first[k]] = blocks_of(p, k, cb_f, memo);
                blk[k] = b;
                cnt[k] = 0;
                first[k] = t;
            }
            cnt[k]++;
        }
    for (uint64_t k = 0; k < x->cols; k++)
        if (cnt[k] == 1 && k < p->rows)
            runs[first[k]] = blocks_of(p, k, cb_f, memo);
    tessel_dealloc(a, blk);
    tessel_dealloc(a, cnt);
    tessel_dealloc(a, first);
    tessel_dealloc(a, memo);
    return TESSEL_OK;
}

/* The bitsets over k of X's rows (xr) and of P's columns (pc). */
static void fill_bitsets(const stat_grid *x, const stat_grid *p, uint64_t words, uint64_t *xr,
                         uint64_t *pc)
{
    for (uint64_t o = 0; o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++)
            xr[o * words + x->col[t] / 64] |= UINT64_C(1) << (x->col[t] % 64);
    for (uint64_t k = 0; k < p->rows; k++)
        for (uint64_t t = p->ptr[k]; t < p->ptr[k + 1]; t++)
            pc[p->col[t] * words + k / 64] |= UINT64_C(1) << (k % 64);
}

/* Level-b order (o, f, k): inside one level b-1 tile, row o of X meets
 * the effectual f in turn, each over its effectual k in the outer k
 * block; when the last k of one f is the first k of the next, X(o, k)
 * stays resident (one-level IJK's reuse, stat_walk_pairs). Takes those
 * merges off runs[]. Cost: rows x columns of f x words. */
static int merge_row_walk(const nested *n, const side *sd, double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    uint64_t K = x->cols > p->rows ? x->cols : p->rows, F = p->cols, words = (K + 63) / 64;
    uint64_t cb_f = outer_block(n, sd->xf), cb_k = outer_block(n, XK);
    uint64_t nkb = cb_k == UINT64_MAX ? 1 : (K + cb_k - 1) / cb_k;
    long double cost = (long double)x->rows * (long double)F * (long double)words;
    if (cost > (long double)NESTED_BITSET_BUDGET)
        return TESSEL_OK; /* left as upper bounds */
    uint64_t *xr = stat_zeroed(a, x->rows * words, sizeof(uint64_t));
    uint64_t *pc = stat_zeroed(a, F * words, sizeof(uint64_t));
    uint64_t *last = stat_zeroed(a, nkb, sizeof(uint64_t));
    if (!xr || !pc || !last) {
        tessel_dealloc(a, xr);
        tessel_dealloc(a, pc);
        tessel_dealloc(a, last);
        return TESSEL_ENOMEM;
    }
    fill_bitsets(x, p, words, xr, pc);
    for (uint64_t o = 0; o < x->rows; o++) {
        if (x->ptr[o] == x->ptr[o + 1])
            continue;
        const uint64_t *r = &xr[o * words];
        uint64_t fb = UINT64_MAX;
        for (uint64_t f = 0; f < F; f++) {
            if (block_of(f, cb_f) != fb) {
                fb = block_of(f, cb_f);
                for (uint64_t b = 0; b < nkb; b++)
                    last[b] = UINT64_MAX;
            }
            const uint64_t *c = &pc[f * words];
            uint64_t k = stat_nested_next_common(r, c, words, 0);
            while (k != UINT64_MAX) {
                uint64_t b = block_of(k, cb_k);
                uint64_t end = cb_k == UINT64_MAX || (b + 1) * cb_k > K ? K : (b + 1) * cb_k;
                uint64_t lastk = prev_common(r, c, end);
                if (last[b] == k) {
                    uint64_t t = x->ptr[o];
                    while (x->col[t] != k)
                        t++;
                    runs[t] -= 1;
                }
                last[b] = lastk;
                k = end >= K ? UINT64_MAX : stat_nested_next_common(r, c, words, end);
            }
        }
    }
    tessel_dealloc(a, xr);
    tessel_dealloc(a, pc);
    tessel_dealloc(a, last);
    return TESSEL_OK;
}

/* Runs that continue from one f to the next, per (o block, k block) b:
 * the last X tile key of the previous f, this f's first and last key,
 * the f (+ 1) that set them, and the blocks this f touched. */
typedef struct run_tracker {
    uint64_t nb, ntouched;
    uint64_t *prev, *first, *last, *stamp, *touched;
} run_tracker;

static void tracker_free(const tessel_allocator *a, run_tracker *t)
{
    tessel_dealloc(a, t->prev);
    tessel_dealloc(a, t->first);
    tessel_dealloc(a, t->last);
    tessel_dealloc(a, t->stamp);
    tessel_dealloc(a, t->touched);
}

static int tracker_init(const tessel_allocator *a, uint64_t nb, run_tracker *t)
{
    t->nb = nb;
    t->ntouched = 0;
    t->prev = stat_zeroed(a, nb, sizeof(uint64_t));
    t->first = stat_zeroed(a, nb, sizeof(uint64_t));
    t->last = stat_zeroed(a, nb, sizeof(uint64_t));
    t->stamp = stat_zeroed(a, nb, sizeof(uint64_t));
    t->touched = stat_zeroed(a, nb, sizeof(uint64_t));
    if (t->prev && t->first && t->last && t->stamp && t->touched)
        return TESSEL_OK;
    tracker_free(a, t);
    return TESSEL_ENOMEM;
}

/* A new outer f block: no run continues into it. */
static void tracker_reset(run_tracker *t)
{
    for (uint64_t b = 0; b < t->nb; b++)
        t->prev[b] = UINT64_MAX;
}

/* f visits X tiles first_key .. last_key in block b. */
static void tracker_visit(run_tracker *t, uint64_t b, uint64_t f, uint64_t first_key,
                          uint64_t last_key)
{
    if (t->stamp[b] != f + 1) {
        t->stamp[b] = f + 1;
        t->first[b] = first_key;
        t->touched[t->ntouched++] = b;
    }
    t->last[b] = last_key;
}

/* The end of an f: the keys of the X tiles on which a run of the previous
 * f continues into this one, in touched[0 .. returned count). */
static uint64_t tracker_end_f(run_tracker *t)
{
    uint64_t merged = 0;
    for (uint64_t q = 0; q < t->ntouched; q++) {
        uint64_t b = t->touched[q];
        if (t->prev[b] == t->first[b])
            t->touched[merged++] = t->first[b];
        t->prev[b] = t->last[b];
    }
    t->ntouched = 0;
    return merged;
}

/* Level-b order (f, o, k): inside one level b-1 tile, each f walks the
 * effectual (o, k) of X in order; when one f ends on the X tile the next
 * f starts on, it stays resident (one-level IJK's reuse of B between
 * rows, stat_walk_pairs). Takes those merges off runs[]. Cost: columns of
 * f x rows x words. */
static int merge_outer_walk(const nested *n, const side *sd, double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    uint64_t K = x->cols > p->rows ? x->cols : p->rows, F = p->cols, O = x->rows;
    uint64_t words = (K + 63) / 64;
    uint64_t cb_f = merge_block_f(n, sd->xf), cb_o = outer_block(n, sd->xo);
    uint64_t cb_k = outer_block(n, XK);
    uint64_t nob = cb_o == UINT64_MAX ? 1 : (O + cb_o - 1) / cb_o;
    uint64_t nkb = cb_k == UINT64_MAX ? 1 : (K + cb_k - 1) / cb_k;
    long double cost = (long double)O * (long double)F * (long double)words;
    if (cost > (long double)NESTED_BITSET_BUDGET || (long double)nob * nkb > 1e8L)
        return TESSEL_OK; /* left as upper bounds */
    uint64_t *xr = stat_zeroed(a, O * words, sizeof(uint64_t));
    uint64_t *pc = stat_zeroed(a, F * words, sizeof(uint64_t));
    run_tracker tr;
    int rc = tracker_init(a, nob * nkb, &tr);
    if (!rc && (!xr || !pc)) {
        tracker_free(a, &tr);
        rc = TESSEL_ENOMEM;
    }
    if (rc) {
        tessel_dealloc(a, xr);
        tessel_dealloc(a, pc);
        return rc;
    }
    fill_bitsets(x, p, words, xr, pc);
    uint64_t fb = UINT64_MAX;
    for (uint64_t f = 0; f < F; f++) {
        if (block_of(f, cb_f) != fb) {
            fb = block_of(f, cb_f);
            tracker_reset(&tr);
        }
        const uint64_t *c = &pc[f * words];
        for (uint64_t o = 0; o < O; o++) {
            const uint64_t *r = &xr[o * words];
            uint64_t k = stat_nested_next_common(r, c, words, 0);
            while (k != UINT64_MAX) {
                uint64_t kb = block_of(k, cb_k);
                uint64_t end = cb_k == UINT64_MAX || (kb + 1) * cb_k > K ? K : (kb + 1) * cb_k;
                tracker_visit(&tr, block_of(o, cb_o) * nkb + kb, f, o * K + k,
                              o * K + prev_common(r, c, end));
                k = end >= K ? UINT64_MAX : stat_nested_next_common(r, c, words, end);
            }
        }
        uint64_t merged = tracker_end_f(&tr);
        for (uint64_t q = 0; q < merged; q++) {
            uint64_t o = tr.touched[q] / K, k = tr.touched[q] % K, t = x->ptr[o];
            while (x->col[t] != k)
                t++;
            runs[t] -= 1;
        }
    }
    tessel_dealloc(a, xr);
    tessel_dealloc(a, pc);
    tracker_free(a, &tr);
    return TESSEL_OK;
}

/* Index of tile (r, c) of g, which must be non-empty. */
static uint64_t tile_at(const stat_grid *g, uint64_t r, uint64_t c)
{
    uint64_t lo = g->ptr[r], hi = g->ptr[r + 1];
    while (lo + 1 < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->col[mid] <= c)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Level-b order (f, k, o): inside one level b-1 tile, each f walks its
 * effectual k, each over the X tiles of column k; when one f ends on the
 * X tile the next f starts on (the same k, whose column holds one tile in
 * the o block), it stays resident (one-level IKJ's reuse of B between
 * rows, input_b_outer). Takes those merges off runs[]. Cost: the
 * partner's tiles times X's o blocks per column. */
static int merge_column_walk(const nested *n, const side *sd, double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    uint64_t K = x->cols > p->rows ? x->cols : p->rows, O = x->rows;
    uint64_t cb_f = merge_block_f(n, sd->xf), cb_o = outer_block(n, sd->xo);
    uint64_t cb_k = outer_block(n, XK);
    uint64_t nob = cb_o == UINT64_MAX ? 1 : (O + cb_o - 1) / cb_o;
    uint64_t nkb = cb_k == UINT64_MAX ? 1 : (K + cb_k - 1) / cb_k;
    if ((long double)nob * nkb > 1e8L)
        return TESSEL_OK; /* left as upper bounds */
    stat_grid xt, pt;
    memset(&xt, 0, sizeof(xt));
    memset(&pt, 0, sizeof(pt));
    run_tracker tr;
    int rc = tracker_init(a, nob * nkb, &tr);
    if (rc)
        return rc;
    rc = stat_grid_transpose(x, a, &xt);
    if (!rc)
        rc = stat_grid_transpose(p, a, &pt);
    uint64_t fb = UINT64_MAX;
    for (uint64_t f = 0; !rc && f < pt.rows; f++) {
        if (block_of(f, cb_f) != fb) {
            fb = block_of(f, cb_f);
            tracker_reset(&tr);
        }
        for (uint64_t u = pt.ptr[f]; u < pt.ptr[f + 1]; u++) {
            uint64_t k = pt.col[u];
            if (k >= xt.rows)
                continue;
            /* column k of X in runs of one o block */
            for (uint64_t t = xt.ptr[k]; t < xt.ptr[k + 1];) {
                uint64_t ob = block_of(xt.col[t], cb_o), e = t;
                while (e + 1 < xt.ptr[k + 1] && block_of(xt.col[e + 1], cb_o) == ob)
                    e++;
                tracker_visit(&tr, ob * nkb + block_of(k, cb_k), f, k * O + xt.col[t],
                              k * O + xt.col[e]);
                t = e + 1;
            }
        }
        uint64_t merged = tracker_end_f(&tr);
        for (uint64_t q = 0; q < merged; q++)
            runs[tile_at(x, tr.touched[q] % O, tr.touched[q] / O)] -= 1;
    }
    stat_grid_free(a, &xt);
    stat_grid_free(a, &pt);
    tracker_free(a, &tr);
    return rc;
}

/* Fills and rule-4 streaming of one input at level b. */
static int input_side(nested *n, const side *sd, stat_counts *c)
{
    engine *e = n->e;
    const operand *op = &e->in[sd->op];
    const stat_grid *x = sd->x, *p = sd->p;
    tile_cost cost;
    exact_tile_cost_init(e, &n->bd, op, &cost);
    pricer pr = stat_pricer_of(&cost);
    uint64_t part = exact_partition_bytes(e, n->bd.b, op->spec_tensor);
    double *runs = stat_zeroed(e->alloc, x->n, sizeof(double));
    if (!runs)
        return TESSEL_ENOMEM;
    /* per k once: a pass per X tile would cost the effectual iterations */
    double *per_k = stat_zeroed(e->alloc, p->rows, sizeof(double));
    if (!per_k) {
        tessel_dealloc(e->alloc, runs);
        return TESSEL_ENOMEM;
    }
    for (uint64_t k = 0; k < p->rows; k++)
        per_k[k] = (double)row_blocks(p, k, sd->cf);
    for (uint64_t o = 0; o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
            uint64_t k = x->col[t];
            runs[t] = k < p->rows ? per_k[k] : 0;
        }
    tessel_dealloc(e->alloc, per_k);
    /* runs merged inside one level b-1 tile, where level b's own loop
     * over f splits them (cf == 1) */
    int po = level_pos(n, sd->xo), pf = level_pos(n, sd->xf), pk = level_pos(n, XK);
    int rc = TESSEL_OK;
    if (sd->cf == 1 && pk >= 0 && pk < pf && pf < po)
        rc = merge_column_alone(n, sd, runs);
    else if (sd->cf == 1 && pf >= 0 && pf < pk && (po < 0 || po < pf))
        rc = merge_row_walk(n, sd, runs);
    else if (sd->cf == 1 && pf >= 0 && pf < po && po < pk)
        rc = merge_outer_walk(n, sd, runs);
    else if (sd->cf == 1 && pf >= 0 && pf < pk && pk < po)
        rc = merge_column_walk(n, sd, runs);
    for (uint64_t o = 0; !rc && o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
            uint64_t k = x->col[t];
            double uses = k < p->rows ? (double)(p->ptr[k + 1] - p->ptr[k]) : 0;
            input_uses(c, stat_fast_price(&pr, x->nnz[t]), part, runs[t], uses);
        }
    tessel_dealloc(e->alloc, runs);
    return rc;
}

static int inputs(nested *n, stat_outcome *o)
{
    const tessel_allocator *a = n->e->alloc;
    stat_grid bt, at;
    memset(&bt, 0, sizeof(bt));
    memset(&at, 0, sizeof(at));
    side sa = { &n->a, &n->b, XI, XJ, 0, n->cf_j };
    int rc = input_side(n, &sa, &o->a);
    if (!rc)
        rc = stat_grid_transpose(&n->b, a, &bt);
    if (!rc)
        rc = stat_grid_transpose(&n->a, a, &at);
    if (!rc) {
        side sb = { &bt, &at, XJ, XI, 1, n->cf_i };
        rc = input_side(n, &sb, &o->b);
    }
    stat_grid_free(a, &bt);
    stat_grid_free(a, &at);
    for (uint64_t k = 0; k < n->ext_k; k++) {
        o->effectual += (double)n->n_a[k] * (double)n->n_b[k];
        o->operand_nnz[0] += n->a_nnz[k] * (double)n->n_b[k];
        o->operand_nnz[1] += n->b_nnz[k] * (double)n->n_a[k];
    }
    return rc;
}

static void store_counts(tessel_traffic *tr, const stat_counts *c)
{
    tr->fills = model_count(c->fills);
    tr->in_data = model_count(c->fill_data + c->bumped_data);
    tr->in_metadata = model_count(c->fill_meta + c->bumped_meta);
    tr->bumped_bytes = model_count(c->bumped_data + c->bumped_meta);
}

static void store(nested *n, const stat_outcome *o)
{
    engine *e = n->e;
    tessel_result *r = e->res;
    unsigned b = n->bd.b;
    store_counts(&r->traffic[b][e->in[0].spec_tensor], &o->a);
    store_counts(&r->traffic[b][e->in[1].spec_tensor], &o->b);
    tessel_traffic *tz = &r->traffic[b][0];
    tz->writebacks = model_count(o->z_writebacks);
    tz->updates = model_count(o->z_updates);
    tz->out_data = model_count(o->z_out_data);
    tz->out_metadata = model_count(o->z_out_meta);
    tz->in_data = model_count(o->z_in_data);
    tz->in_metadata = model_count(o->z_in_meta);
    r->overflow_tiles += model_count(o->a.overflow_fills + o->b.overflow_fills);
    r->effectual_tiles[b] = model_count(o->effectual);
    if (b + 1 == e->nlev) {
        /* the MACs read each innermost effectual iteration's operand nonzeros */
        uint64_t coord = e->spec->level[b].coord_bits / 8;
        r->intersections = model_count(o->operand_nnz[0] + o->operand_nnz[1]);
        r->traffic[b][e->in[0].spec_tensor].child_read_metadata =
            model_count(o->operand_nnz[0] * (double)coord);
        r->traffic[b][e->in[1].spec_tensor].child_read_metadata =
            model_count(o->operand_nnz[1] * (double)coord);
    }
}

int stat_nested_evaluate(engine *e, unsigned b, const stat_input *const *in,
                         const stat_output_sample *s, tessel_diag *diag)
{
    if (!s)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, e->spec->path, 0, 0, NULL,
                               "nested levels price the output from the output sample; "
                               "--output-sample 0 leaves none");
    nested n;
    memset(&n, 0, sizeof(n));
    n.e = e;
    n.bd.b = b;
    boundary outer;
    memset(&outer, 0, sizeof(outer));
    outer.b = b - 1;
    int rc = exact_geometry(e, &outer);
    if (!rc)
        rc = exact_geometry(e, &n.bd);
    n.first_digit = outer.ndigits;
    if (!rc)
        rc = stat_derive_grid(n.e, in[0], 0, &n.bd, n.e->alloc, &n.a, n.ea, diag);
    if (!rc)
        rc = stat_derive_grid(n.e, in[1], 1, &n.bd, n.e->alloc, &n.b, n.eb, diag);
    if (rc) {
        nested_free(&n);
        return rc;
    }
    n.ext_i = n.a.rows;
    n.ext_k = n.a.cols > n.b.rows ? n.a.cols : n.b.rows;
    n.ext_j = n.b.cols;
    n.cf_j = stat_nested_block(&n.bd, XI, XK, XJ);
    n.cf_i = stat_nested_block(&n.bd, XK, XJ, XI);
    n.cf_k = stat_nested_block(&n.bd, XI, XJ, XK);
    stat_outcome o;
    memset(&o, 0, sizeof(o));
    rc = counts_init(&n);
    if (!rc)
        rc = inputs(&n, &o);
    if (!rc)
        rc = stat_nested_output(&n, s, &o);
    if (!rc) {
        store(&n, &o);
        exact_algorithmic_counts(e, &n.bd);
    }
    nested_free(&n);
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    return rc;
}

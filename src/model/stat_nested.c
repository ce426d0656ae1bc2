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
 * Input runs that continue across coarse blocks because the iterations
 * between them are all non-effectual are taken off in two parts: inside
 * one level b-1 tile by the merge walks below, and from one level b-1 tile
 * into the next by stat_nested_across.c; with both, an input's fills equal
 * the exact walk's (the walks give up past fixed budgets, leaving upper
 * bounds, see docs/models/stat.md). Cost per boundary: the non-empty
 * level-b tiles times the words or outer tiles of their partner rows,
 * plus the output pairs' bitsets (ext_i x ext_j x ext_k / 64 words, else
 * an independence estimate), plus the output sample's cells: never the
 * effectual iterations. */
#include <math.h>
#include <string.h>

#include "stat_bumped.h"
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
    tessel_dealloc(a, n->n_b);
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
    n->n_b = stat_zeroed(a, K, sizeof(uint64_t));
    n->a_nnz = stat_zeroed(a, K, sizeof(double));
    n->b_nnz = stat_zeroed(a, K, sizeof(double));
    if (!n->n_a || !n->n_b || !n->a_nnz || !n->b_nnz)
        return TESSEL_ENOMEM;
    for (uint64_t i = 0; i < n->a.rows; i++)
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            n->n_a[n->a.col[t]]++;
            n->a_nnz[n->a.col[t]] += (double)n->a.nnz[t];
        }
    for (uint64_t k = 0; k < K && k < n->b.rows; k++) {
        n->n_b[k] = n->b.ptr[k + 1] - n->b.ptr[k];
        for (uint64_t t = n->b.ptr[k]; t < n->b.ptr[k + 1]; t++)
            n->b_nnz[k] += (double)n->b.nnz[t];
    }
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

/* The merges of X's runs inside one level b-1 tile, by merge groups
 * (their cost adds to the boundary's: each tile times the words of its
 * partner row over f).
 *
 * Every walk below (level-b orders (o, f, k), (f, o, k) and (f, k, o))
 * visits, per f, the X tiles of one group (an o block x a k block of the
 * outer tile) in a fixed order, and X(o, k) stays resident from one
 * effectual f to the next in the same merge block of f (level b-1's f
 * tile: runs into the next outer tile are stat_nested_across.c's) when
 * the previous f's last tile in the group is this f's first. With the group's tiles as
 * entries m = 0 .. n-1 in visiting order and R_m the set of f that meet
 * entry m (P's row k_m), f's first tile is the least m whose R_m holds f,
 * its last the greatest. So the merges on entry m are the f in
 * F_m = R_m - (R_0 | .. | R_m-1) whose predecessor among the effectual f
 * (E = the union of all R) lies in L_m = R_m - (R_m+1 | .. | R_n-1) and
 * in the same merge block. All of it is word-parallel over bitsets of f:
 * the cost is the group's entries times the words its R span, never the
 * output pairs times the words of k. Only an entry whose k occurs once in
 * the group can have both first and last f, so a group keeps, per k, its
 * first and its last tile. */
typedef struct fbits {
    uint64_t wf, rows;       /* words per row of f, P's rows */
    uint64_t *bits;          /* rows x wf: R_k */
    uint64_t *lo, *hi;       /* per row: its first and one past its last non-zero word */
    uint64_t *wall;          /* wf: the first f of every merge block */
    uint64_t *suf, cap;      /* one group's suffix unions, cap words */
    uint64_t *pre, *cnt;     /* wf: running union; per entry: merges */
} fbits;

/* Bitset memory beyond which the (f, k, o) walk keeps to sorted lists. */
#define NESTED_FBITS_BUDGET (UINT64_C(1) << 24)

static void fbits_free(const tessel_allocator *a, fbits *fb)
{
    tessel_dealloc(a, fb->bits);
    tessel_dealloc(a, fb->lo);
    tessel_dealloc(a, fb->hi);
    tessel_dealloc(a, fb->wall);
    tessel_dealloc(a, fb->suf);
    tessel_dealloc(a, fb->pre);
    tessel_dealloc(a, fb->cnt);
}

/* P's rows as bitsets over f, merge blocks of cb_f; groups of up to
 * max_n entries. */
static int fbits_init(const tessel_allocator *a, const stat_grid *p, uint64_t cb_f,
                      uint64_t max_n, fbits *fb)
{
    memset(fb, 0, sizeof(*fb));
    fb->wf = (p->cols + 63) / 64;
    fb->rows = p->rows;
    fb->bits = stat_zeroed(a, p->rows * fb->wf, sizeof(uint64_t));
    fb->lo = stat_zeroed(a, p->rows, sizeof(uint64_t));
    fb->hi = stat_zeroed(a, p->rows, sizeof(uint64_t));
    fb->wall = stat_zeroed(a, fb->wf + 1, sizeof(uint64_t));
    fb->pre = stat_zeroed(a, fb->wf + 1, sizeof(uint64_t));
    fb->cnt = stat_zeroed(a, max_n + 1, sizeof(uint64_t));
    if (!fb->bits || !fb->lo || !fb->hi || !fb->wall || !fb->pre || !fb->cnt) {
        fbits_free(a, fb);
        return TESSEL_ENOMEM;
    }
    for (uint64_t k = 0; k < p->rows; k++) {
        uint64_t *r = &fb->bits[k * fb->wf];
        for (uint64_t t = p->ptr[k]; t < p->ptr[k + 1]; t++)
            r[p->col[t] / 64] |= UINT64_C(1) << (p->col[t] % 64);
        if (p->ptr[k] < p->ptr[k + 1]) {
            fb->lo[k] = p->col[p->ptr[k]] / 64;
            fb->hi[k] = p->col[p->ptr[k + 1] - 1] / 64 + 1;
        }
    }
    if (cb_f != UINT64_MAX)
        for (uint64_t f = 0; f < p->cols; f += cb_f)
            fb->wall[f / 64] |= UINT64_C(1) << (f % 64);
    return TESSEL_OK;
}

/* Room for n + 1 suffix unions of span words. */
static int fbits_reserve(const tessel_allocator *a, fbits *fb, uint64_t words)
{
    if (words <= fb->cap)
        return TESSEL_OK;
    tessel_dealloc(a, fb->suf);
    fb->cap = words > 2 * fb->cap ? words : 2 * fb->cap;
    fb->suf = tessel_alloc_array(a, fb->cap, sizeof(uint64_t));
    return fb->suf ? TESSEL_OK : TESSEL_ENOMEM;
}

/* How many f of F = r - pre have their predecessor in E (same merge
 * block) in L = r - next, over span words from word lo: L's bits moved
 * one place up, then carried across the gaps of E (but not over a wall)
 * onto the next effectual f, by one multi-word addition. */
static uint64_t succ_count(const fbits *fb, const uint64_t *r, const uint64_t *next,
                           const uint64_t *e, uint64_t lo, uint64_t span)
{
    uint64_t carry = 0, in = 0, cnt = 0;
    for (uint64_t w = 0; w < span; w++) {
        uint64_t l = r[w] & ~next[w], f = r[w] & ~fb->pre[w], wall = fb->wall[lo + w];
        uint64_t x = (l << 1) | in;
        in = l >> 63;
        uint64_t s = x + (~e[w] & ~wall), s2 = s + carry;
        carry = (uint64_t)(s < x) | (uint64_t)(s2 < s);
        cnt += stat_bits_set(s2 & e[w] & ~wall & f);
    }
    return cnt;
}

/* One group of n entries (P rows k[m]; uniq[m]: k[m] occurs once in the
 * group): the merges on each entry into fb->cnt[m]. */
static int group_merges(const tessel_allocator *a, fbits *fb, const uint64_t *k,
                        const unsigned char *uniq, uint64_t n)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint64_t m = 0; m < n; m++) {
        fb->cnt[m] = 0;
        lo = fb->lo[k[m]] < lo ? fb->lo[k[m]] : lo;
        hi = fb->hi[k[m]] > hi ? fb->hi[k[m]] : hi;
    }
    if (lo >= hi)
        return TESSEL_OK;
    uint64_t span = hi - lo;
    if (fbits_reserve(a, fb, (n + 1) * span))
        return TESSEL_ENOMEM;
    uint64_t *suf = fb->suf;
    memset(&suf[n * span], 0, span * sizeof(uint64_t));
    for (uint64_t m = n; m-- > 0;) {
        const uint64_t *r = &fb->bits[k[m] * fb->wf + lo];
        for (uint64_t w = 0; w < span; w++)
            suf[m * span + w] = suf[(m + 1) * span + w] | r[w];
    }
    memset(fb->pre, 0, span * sizeof(uint64_t));
    for (uint64_t m = 0; m < n; m++) {
        const uint64_t *r = &fb->bits[k[m] * fb->wf + lo];
        if (uniq[m])
            fb->cnt[m] = succ_count(fb, r, &suf[(m + 1) * span], suf, lo, span);
        for (uint64_t w = 0; w < span; w++)
            fb->pre[w] |= r[w];
    }
    return TESSEL_OK;
}

/* One group's entries, built by the walks: P row, X tile (or X row for
 * the (f, k, o) walk), whether the k is alone in the group. */
typedef struct group {
    uint64_t n;
    uint64_t *k, *t;
    unsigned char *uniq;
} group;

static void group_free(const tessel_allocator *a, group *g)
{
    tessel_dealloc(a, g->k);
    tessel_dealloc(a, g->t);
    tessel_dealloc(a, g->uniq);
    memset(g, 0, sizeof(*g));
}

/* Room for cap entries; group_free() after, whether or not it failed. */
static int group_init(const tessel_allocator *a, uint64_t cap, group *g)
{
    g->n = 0;
    g->k = stat_zeroed(a, cap + 1, sizeof(uint64_t));
    g->t = stat_zeroed(a, cap + 1, sizeof(uint64_t));
    g->uniq = stat_zeroed(a, cap + 1, sizeof(unsigned char));
    return g->k && g->t && g->uniq ? TESSEL_OK : TESSEL_ENOMEM;
}

/* Level-b order (o, f, k): inside one level b-1 tile, row o of X meets
 * the effectual f in turn, each over its effectual k in the outer k
 * block; when the last k of one f is the first k of the next, X(o, k)
 * stays resident (one-level IJK's reuse, stat_walk_pairs). A group is one
 * row's tiles in one k block (all k distinct). Takes those merges off
 * runs[]. */
static int merge_row_walk(const nested *n, const side *sd, double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    uint64_t cb_k = outer_block(n, XK);
    uint64_t maxrow = 0;
    for (uint64_t o = 0; o < x->rows; o++)
        if (x->ptr[o + 1] - x->ptr[o] > maxrow)
            maxrow = x->ptr[o + 1] - x->ptr[o];
    fbits fb;
    group g;
    memset(&g, 0, sizeof(g));
    int rc = fbits_init(a, p, outer_block(n, sd->xf), maxrow, &fb);
    if (rc)
        return rc;
    rc = group_init(a, maxrow, &g);
    for (uint64_t o = 0; !rc && o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; !rc && t < x->ptr[o + 1];) {
            uint64_t kb = block_of(x->col[t], cb_k);
            g.n = 0;
            for (; t < x->ptr[o + 1] && block_of(x->col[t], cb_k) == kb; t++)
                if (x->col[t] < p->rows && p->ptr[x->col[t]] < p->ptr[x->col[t] + 1]) {
                    g.k[g.n] = x->col[t];
                    g.t[g.n] = t;
                    g.uniq[g.n++] = 1;
                }
            rc = group_merges(a, &fb, g.k, g.uniq, g.n);
            for (uint64_t m = 0; !rc && m < g.n; m++)
                runs[g.t[m]] -= (double)fb.cnt[m];
        }
    group_free(a, &g);
    fbits_free(a, &fb);
    return rc;
}

/* Keeps, of a group's entries in visiting order, the first and the last
 * of each k (seen[k] counts them; cnt[k] holds the group's total). */
static void group_thin(group *g, uint64_t *cnt, uint64_t *seen)
{
    for (uint64_t m = 0; m < g->n; m++)
        cnt[g->k[m]] = seen[g->k[m]] = 0;
    for (uint64_t m = 0; m < g->n; m++)
        cnt[g->k[m]]++;
    uint64_t kept = 0;
    for (uint64_t m = 0; m < g->n; m++) {
        uint64_t k = g->k[m], s = ++seen[k];
        if (s == 1 || s == cnt[k]) {
            g->k[kept] = k;
            g->t[kept] = g->t[m];
            g->uniq[kept++] = cnt[k] == 1;
        }
    }
    g->n = kept;
}

/* Level-b order (f, o, k): inside one level b-1 tile, each f walks the
 * effectual (o, k) of X in order; when one f ends on the X tile the next
 * f starts on, it stays resident (one-level IJK's reuse of B between
 * rows, stat_walk_pairs). A group is an o block x a k block, its tiles in
 * (o, k) order, gathered per o block by linked lists per k block. Takes
 * those merges off runs[]. */
static int merge_outer_walk(const nested *n, const side *sd, double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    uint64_t K = x->cols > p->rows ? x->cols : p->rows, O = x->rows;
    uint64_t cb_o = outer_block(n, sd->xo), cb_k = outer_block(n, XK);
    uint64_t nob = cb_o == UINT64_MAX ? 1 : (O + cb_o - 1) / cb_o;
    uint64_t nkb = cb_k == UINT64_MAX ? 1 : (K + cb_k - 1) / cb_k;
    fbits fb;
    group g;
    memset(&g, 0, sizeof(g));
    int rc = fbits_init(a, p, outer_block(n, sd->xf), x->n, &fb);
    if (rc)
        return rc;
    uint64_t *next = stat_zeroed(a, x->n + 1, sizeof(uint64_t));
    uint64_t *head = stat_zeroed(a, nkb, sizeof(uint64_t));
    uint64_t *tail = stat_zeroed(a, nkb, sizeof(uint64_t));
    uint64_t *cnt = stat_zeroed(a, K + 1, sizeof(uint64_t));
    uint64_t *seen = stat_zeroed(a, K + 1, sizeof(uint64_t));
    rc = group_init(a, x->n, &g);
    if (!rc && (!next || !head || !tail || !cnt || !seen))
        rc = TESSEL_ENOMEM;
    for (uint64_t kb = 0; !rc && kb < nkb; kb++)
        head[kb] = UINT64_MAX;
    for (uint64_t ob = 0; !rc && ob < nob; ob++) {
        uint64_t o1 = cb_o == UINT64_MAX || (ob + 1) * cb_o > O ? O : (ob + 1) * cb_o;
        for (uint64_t o = ob * (cb_o == UINT64_MAX ? 0 : cb_o); o < o1; o++)
            for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
                uint64_t k = x->col[t], kb = block_of(k, cb_k);
                if (k >= p->rows || p->ptr[k] == p->ptr[k + 1])
                    continue;
                next[t] = UINT64_MAX;
                if (head[kb] == UINT64_MAX)
                    head[kb] = t;
                else
                    next[tail[kb]] = t;
                tail[kb] = t;
            }
        for (uint64_t kb = 0; !rc && kb < nkb; kb++) {
            if (head[kb] == UINT64_MAX)
                continue;
            g.n = 0;
            for (uint64_t t = head[kb]; t != UINT64_MAX; t = next[t]) {
                g.k[g.n] = x->col[t];
                g.t[g.n++] = t;
            }
            head[kb] = UINT64_MAX;
            group_thin(&g, cnt, seen);
            rc = group_merges(a, &fb, g.k, g.uniq, g.n);
            for (uint64_t m = 0; !rc && m < g.n; m++)
                runs[g.t[m]] -= (double)fb.cnt[m];
        }
    }
    group_free(a, &g);
    tessel_dealloc(a, next);
    tessel_dealloc(a, head);
    tessel_dealloc(a, tail);
    tessel_dealloc(a, cnt);
    tessel_dealloc(a, seen);
    fbits_free(a, &fb);
    return rc;
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
 * partner's tiles times X's tiles per column, so only where P's bitsets
 * over f would not fit (merge_column_walk); same result as the groups. */
static int merge_column_lists(const nested *n, const side *sd, double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    uint64_t K = x->cols > p->rows ? x->cols : p->rows, O = x->rows;
    uint64_t cb_f = outer_block(n, sd->xf), cb_o = outer_block(n, sd->xo);
    uint64_t cb_k = outer_block(n, XK);
    uint64_t nob = cb_o == UINT64_MAX ? 1 : (O + cb_o - 1) / cb_o;
    uint64_t nkb = cb_k == UINT64_MAX ? 1 : (K + cb_k - 1) / cb_k;
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

/* Level-b order (f, k, o) by groups: an o block x a k block, its tiles in
 * (k, o) order, of which only each column's first and last tile in the o
 * block count (group_thin's rule, read off X's columns directly). Per k
 * block, the entries go to linked lists per o block (pool q). */
static int merge_column_groups(const nested *n, const side *sd, const stat_grid *xt,
                               double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    uint64_t O = x->rows, K = xt->rows;
    uint64_t cb_o = outer_block(n, sd->xo), cb_k = outer_block(n, XK);
    uint64_t nob = cb_o == UINT64_MAX ? 1 : (O + cb_o - 1) / cb_o;
    uint64_t nkb = cb_k == UINT64_MAX ? 1 : (K + cb_k - 1) / cb_k;
    fbits fb;
    int rc = fbits_init(a, p, outer_block(n, sd->xf), 2 * x->n, &fb);
    if (rc)
        return rc;
    group g, q; /* q: the pool; q.t holds each entry's o, then its list link */
    memset(&g, 0, sizeof(g));
    memset(&q, 0, sizeof(q));
    uint64_t *head = stat_zeroed(a, nob, sizeof(uint64_t));
    uint64_t *tail = stat_zeroed(a, nob, sizeof(uint64_t));
    uint64_t *link = stat_zeroed(a, 2 * x->n + 1, sizeof(uint64_t));
    uint64_t *touched = stat_zeroed(a, nob, sizeof(uint64_t));
    if (group_init(a, 2 * x->n, &g) || group_init(a, 2 * x->n, &q) || !head || !tail ||
        !link || !touched)
        rc = TESSEL_ENOMEM;
    for (uint64_t ob = 0; !rc && ob < nob; ob++)
        head[ob] = UINT64_MAX;
    for (uint64_t kb = 0; !rc && kb < nkb; kb++) {
        uint64_t k1 = cb_k == UINT64_MAX || (kb + 1) * cb_k > K ? K : (kb + 1) * cb_k, nt = 0;
        q.n = 0;
        for (uint64_t k = kb * (cb_k == UINT64_MAX ? 0 : cb_k); k < k1; k++) {
            if (k >= p->rows || p->ptr[k] == p->ptr[k + 1])
                continue;
            for (uint64_t u = xt->ptr[k]; u < xt->ptr[k + 1];) {
                uint64_t ob = block_of(xt->col[u], cb_o), e = u;
                while (e + 1 < xt->ptr[k + 1] && block_of(xt->col[e + 1], cb_o) == ob)
                    e++;
                if (head[ob] == UINT64_MAX)
                    touched[nt++] = ob;
                for (uint64_t v = u; v <= e; v = v == e ? e + 1 : e) {
                    q.k[q.n] = k;
                    q.t[q.n] = xt->col[v];
                    q.uniq[q.n] = u == e;
                    link[q.n] = UINT64_MAX;
                    if (head[ob] == UINT64_MAX)
                        head[ob] = q.n;
                    else
                        link[tail[ob]] = q.n;
                    tail[ob] = q.n++;
                }
                u = e + 1;
            }
        }
        for (uint64_t i = 0; !rc && i < nt; i++) {
            uint64_t ob = touched[i];
            g.n = 0;
            for (uint64_t m = head[ob]; m != UINT64_MAX; m = link[m]) {
                g.k[g.n] = q.k[m];
                g.t[g.n] = q.t[m];
                g.uniq[g.n++] = q.uniq[m];
            }
            head[ob] = UINT64_MAX;
            rc = group_merges(a, &fb, g.k, g.uniq, g.n);
            for (uint64_t m = 0; !rc && m < g.n; m++)
                if (fb.cnt[m])
                    runs[tile_at(x, g.t[m], g.k[m])] -= (double)fb.cnt[m];
        }
    }
    group_free(a, &g);
    group_free(a, &q);
    tessel_dealloc(a, head);
    tessel_dealloc(a, tail);
    tessel_dealloc(a, link);
    tessel_dealloc(a, touched);
    fbits_free(a, &fb);
    return rc;
}
/* Level-b order (f, k, o): by groups (merge_column_groups), or by the
 * lists when P's bitsets over f would not fit NESTED_FBITS_BUDGET. */
static int merge_column_walk(const nested *n, const side *sd, double *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    if ((long double)p->rows * (long double)((p->cols + 63) / 64) > (long double)NESTED_FBITS_BUDGET)
        return merge_column_lists(n, sd, runs);
    stat_grid xt;
    memset(&xt, 0, sizeof(xt));
    int rc = stat_grid_transpose(x, a, &xt);
    if (!rc)
        rc = merge_column_groups(n, sd, &xt, runs);
    stat_grid_free(a, &xt);
    return rc;
}

enum { WALK_NONE, WALK_ALONE, WALK_ROW, WALK_OUTER, WALK_COLUMN };

/* The merge walk for X[o, k] (orows rows) against P[k, f] (fcols
 * columns), K the extent of k: where level b's own loop over f splits
 * X's runs (cf == 1), by level b's order; WALK_NONE also where the walk
 * would cost more than its budget and the runs stay upper bounds. */
static int walk_of(const nested *n, unsigned xo, unsigned xf, uint64_t cf, uint64_t orows,
                   uint64_t fcols, uint64_t K)
{
    int po = level_pos(n, xo), pf = level_pos(n, xf), pk = level_pos(n, XK);
    uint64_t cb_o = outer_block(n, xo), cb_k = outer_block(n, XK);
    long double nob = cb_o == UINT64_MAX ? 1 : (long double)((orows + cb_o - 1) / cb_o);
    long double nkb = cb_k == UINT64_MAX ? 1 : (long double)((K + cb_k - 1) / cb_k);
    long double words = (long double)((K + 63) / 64);
    int bits_fit = (long double)orows * (long double)fcols * words <=
                   (long double)NESTED_BITSET_BUDGET;
    if (cf != 1)
        return WALK_NONE;
    if (pk < pf && pf < po) /* k without a loop at level b (pk -1) is one k: outermost */
        return WALK_ALONE;
    if (pf >= 0 && pf < pk && (po < 0 || po < pf))
        return bits_fit ? WALK_ROW : WALK_NONE;
    if (pf >= 0 && pf < po && po < pk)
        return bits_fit && nob * nkb <= 1e8L ? WALK_OUTER : WALK_NONE;
    if (pf >= 0 && pf < pk && pk < po)
        return nob * nkb <= 1e8L ? WALK_COLUMN : WALK_NONE;
    return WALK_NONE;
}

/* Fills and rule-4 streaming of one input at level b, with walk w's
 * merges inside each level b-1 tile and the merges across them. */
static int input_side(nested *n, const side *sd, int w, stat_counts *c)
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
    /* runs merged inside one level b-1 tile */
    int rc = TESSEL_OK;
    if (w == WALK_ALONE)
        rc = merge_column_alone(n, sd, runs);
    else if (w == WALK_ROW)
        rc = merge_row_walk(n, sd, runs);
    else if (w == WALK_OUTER)
        rc = merge_outer_walk(n, sd, runs);
    else if (w == WALK_COLUMN)
        rc = merge_column_walk(n, sd, runs);
    /* runs that continue into the next level b-1 tile */
    if (!rc)
        rc = stat_nested_merge_across(n, x, p, sd->xo, sd->xf, sd->cf, runs);
    for (uint64_t o = 0; !rc && o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
            uint64_t k = x->col[t];
            double uses = k < p->rows ? (double)(p->ptr[k + 1] - p->ptr[k]) : 0;
            input_uses(c, stat_fast_price(&pr, x->nnz[t]), part, runs[t], uses);
            if (!rc) /* rule 4 per child read; X is B^T for B */
                rc = stat_ob_tile(e, n->bd.b, sd->op, sd->op ? k : o, sd->op ? o : k, x->nnz[t],
                                  stat_fast_price(&pr, x->nnz[t]), part, runs[t], uses);
        }
    tessel_dealloc(e->alloc, runs);
    return rc;
}

/* B as X = B^T against P = A^T. */
static int input_b(nested *n, stat_counts *c)
{
    const tessel_allocator *a = n->e->alloc;
    int w = walk_of(n, XJ, XI, n->cf_i, n->b.cols, n->a.rows, n->ext_k);
    stat_grid bt, at;
    memset(&bt, 0, sizeof(bt));
    memset(&at, 0, sizeof(at));
    int rc = stat_grid_transpose(&n->b, a, &bt);
    if (!rc)
        rc = stat_grid_transpose(&n->a, a, &at);
    if (!rc) {
        side sb = { &bt, &at, XJ, XI, 1, n->cf_i };
        rc = input_side(n, &sb, w, c);
    }
    stat_grid_free(a, &bt);
    stat_grid_free(a, &at);
    return rc;
}

static int inputs(nested *n, stat_outcome *o)
{
    int rc = TESSEL_OK;
    int w = walk_of(n, XI, XJ, n->cf_j, n->a.rows, n->b.cols, n->ext_k);
    side sa = { &n->a, &n->b, XI, XJ, 0, n->cf_j };
    rc = input_side(n, &sa, w, &o->a);
    if (!rc)
        rc = input_b(n, &o->b);
    for (uint64_t k = 0; k < n->ext_k; k++) {
        o->effectual += (double)n->n_a[k] * (double)n->n_b[k];
        o->operand_nnz[0] += n->a_nnz[k] * (double)n->n_b[k];
        o->operand_nnz[1] += n->b_nnz[k] * (double)n->n_a[k];
    }
    return rc;
}

static void store(nested *n, const stat_outcome *o)
{
    engine *e = n->e;
    tessel_result *r = e->res;
    unsigned b = n->bd.b;
    for (unsigned i = 0; i < 2; i++) { /* with the overflow columns, as at boundary 1 */
        stat_store_input(&r->traffic[b][e->in[i].spec_tensor], i ? &o->b : &o->a);
        r->traffic[b][e->in[i].spec_tensor].partition_bytes =
            exact_partition_bytes(e, b, e->in[i].spec_tensor);
    }
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

/* Forgets the statistics' grids that n shares, so that nested_free
 * leaves them. */
static void nested_unshare(nested *n, int shared_a, int shared_b)
{
    if (shared_a)
        memset(&n->a, 0, sizeof(n->a));
    if (shared_b)
        memset(&n->b, 0, sizeof(n->b));
}

/* Input i's grid at level b's tiles into g (edges into edge): the
 * statistics' base grid itself, shared (*shared = 1, not to be freed),
 * when level b's tiles are the base tiles, else a coarsened copy. */
static int level_grid(nested *n, const stat_input *in, unsigned i, stat_grid *g, uint64_t *edge,
                      int *shared, tessel_diag *diag)
{
    *shared = 0;
    for (unsigned m = 0; m < 2; m++) {
        int rc = stat_derived_edge(n->e, &n->bd, n->e->in[i].x[m], in->grid->tile[m], &edge[m],
                                   diag);
        if (rc)
            return rc;
    }
    if (edge[0] == in->grid->tile[0] && edge[1] == in->grid->tile[1]) {
        *g = *in->base;
        *shared = 1;
        return TESSEL_OK;
    }
    return stat_derive_grid(n->e, in, i, &n->bd, n->e->alloc, g, edge, diag);
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
    int shared_a = 0, shared_b = 0;
    if (!rc)
        rc = level_grid(&n, in[0], 0, &n.a, n.ea, &shared_a, diag);
    if (!rc)
        rc = level_grid(&n, in[1], 1, &n.b, n.eb, &shared_b, diag);
    if (rc) {
        nested_unshare(&n, shared_a, shared_b);
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
    nested_unshare(&n, shared_a, shared_b);
    nested_free(&n);
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    return rc;
}

/* The stat estimator's closed form at a nested boundary b >= 2: the runs
 * of an input tile that continue from one level b-1 tile into the next
 * (docs/semantics.md rule 1: a tile is filled only when it differs from
 * the resident one, so a run merges across any stretch of non-effectual
 * iterations, outer tiles included).
 *
 * The composite key of levels 1 .. b is level b-1's key (the outer tile E)
 * followed by level b's digits inside E, so the level-b iterations sorted
 * by key are the outer tiles in key order, each holding its iterations in
 * level b's own order. Two consecutive effectual iterations in different
 * outer tiles are therefore the last one of an outer tile and the first
 * one of the next outer tile that holds any: the input's run continues
 * there exactly when both use the same input tile. stat_nested.c counts
 * the runs inside each outer tile; this file takes off, per input tile,
 * the runs that continue across outer tiles.
 *
 * Cost: the outer tiles effectual at level b-1 (a symbolic product of the
 * level-b grids coarsened to level b-1, sorted by key in chunks of
 * NESTED_ACROSS_CHUNK keys, so memory stays bounded), each scanned over
 * its candidate k (bitsets of the k that its o block and f block reach)
 * with a table lookup of each k's first and last tile in the block: the
 * outer tiles times their candidate k, never the level-b effectual
 * iterations. More than one chunk enumerates the outer tiles once per
 * chunk; past NESTED_ACROSS_BUDGET outer tiles (16 chunks) nothing is
 * taken off and the runs stay upper bounds. Where the outer key sorts as
 * nested loops over the roles' blocks (one loop digit per index before
 * level b, as on a 3-level spec) and the candidate bitsets exist, the
 * outer tiles come in key order from those loops instead (scan_nested):
 * per strip pair (o block, f block), one AND of their bitsets over k gives
 * the effectual k blocks, with no keys to enumerate, sort or decode. */
#include <string.h>

#include "stat_closed.h"
#include "stat_nested.h"

/* Outer tiles sorted at once (8 bytes of key and 8 of scratch each); more
 * are taken in chunks of consecutive keys (buckets of the key's leading
 * bits), each chunk enumerating the outer tiles again. */
#define NESTED_ACROSS_CHUNK (UINT64_C(1) << 20)
#define NESTED_ACROSS_BUCKETS (UINT64_C(1) << 16)
/* Outer tiles beyond which the merges are left out (the runs stay upper
 * bounds): 16 chunks, so the pass costs at most 16 enumerations. */
#define NESTED_ACROSS_BUDGET (UINT64_C(1) << 24)
/* Words of the per-k block bitsets beyond which outer_any searches instead. */
#define NESTED_ACROSS_BITS (UINT64_C(1) << 22)
/* Entries of a block-ends table (per row and outer block), and words of
 * the candidate bitsets, allowed beyond the grids' tiles (so that they add
 * at most about 16 bytes per tile); past both, searches instead. */
#define NESTED_ENDS_MIN (UINT64_C(1) << 16)

enum { RO = 0, RK = 1, RF = 2 }; /* roles: X[o, k] against P[k, f] */

/* Per row of a grid and block of bs columns: the first and last column
 * of the row in the block (first UINT64_MAX when none), so that an outer
 * tile's ends cost a lookup per k instead of two binary searches. */
typedef struct block_ends {
    uint64_t bs, nb;
    uint64_t *first, *last; /* NULL: over budget, search the grid */
} block_ends;

typedef struct across {
    const nested *n;
    const stat_grid *x, *p;
    unsigned ex[3];       /* engine index of each role */
    uint64_t ext[3];      /* extents in level-b tiles */
    uint64_t blk[3];      /* level b-1 tile edge in level-b tiles, per role */
    unsigned ord[3];      /* roles in level b's loop order, outermost first */
    stat_grid xt;         /* X transposed: its columns k */
    uint32_t *live;       /* the k where X's column and P's row both hold tiles (a column */
    uint64_t nlive;       /* index of X, so 32 bits, as stat_grid.col), how many */
    /* per k, bitsets of the outer o blocks its X column and the outer f
     * blocks its P row reach (NULL past NESTED_ACROSS_BITS: binary searches) */
    uint64_t *obits, *fbits, wo, wf;
    stat_grid xc, pc;     /* X and P at level b-1's tiles (columns only) */
    block_ends xte, pe;   /* X^T's rows in o blocks, P's rows in f blocks */
    /* per row o of X and k block q (0 .. nxk), the first position of the row
     * at or past column q * blk[RK] (NULL past the budget: searches) */
    uint64_t *xks, nxk;
    /* per outer o block (f block), bitsets over k of the X columns (P
     * rows) that reach into it: an outer tile's candidate k are their
     * intersection (NULL past NESTED_ACROSS_BITS: every k is tried) */
    uint64_t *kbo, *kbf, wk;
    /* the outer key (keyspace_init): per digit before level b its role,
     * weight and (pow2) shift; per role and outer block its share */
    unsigned role[NX * NLEV], shift[NX * NLEV];
    uint64_t w[NX * NLEV];
    int pow2;
    uint64_t *part[3], nblk[3];
} across;

static void ends_free(const tessel_allocator *a, block_ends *t)
{
    tessel_dealloc(a, t->first);
    tessel_dealloc(a, t->last);
    memset(t, 0, sizeof(*t));
}

/* g's rows in blocks of bs columns; left empty (searches) past the budget. */
static int ends_init(const tessel_allocator *a, const stat_grid *g, uint64_t bs, block_ends *t)
{
    memset(t, 0, sizeof(*t));
    t->bs = bs;
    t->nb = (g->cols + bs - 1) / bs;
    long double size = (long double)g->rows * (long double)t->nb;
    if (size > (long double)NESTED_ENDS_MIN && size > (long double)g->n)
        return TESSEL_OK;
    uint64_t m = g->rows * t->nb + 1;
    t->first = tessel_alloc_array(a, m, sizeof(uint64_t));
    t->last = tessel_alloc_array(a, m, sizeof(uint64_t));
    if (!t->first || !t->last) {
        ends_free(a, t);
        return TESSEL_ENOMEM;
    }
    memset(t->first, 0xff, m * sizeof(uint64_t));
    for (uint64_t r = 0; r < g->rows; r++)
        for (uint64_t u = g->ptr[r]; u < g->ptr[r + 1]; u++) {
            uint64_t q = r * t->nb + g->col[u] / bs;
            if (t->first[q] == UINT64_MAX)
                t->first[q] = g->col[u];
            t->last[q] = g->col[u];
        }
    return TESSEL_OK;
}


/* ac->xks: per row of X, where each k block starts (a merge of the row's
 * ascending columns with the block edges); left NULL past the budget of
 * ends_init (rows x blocks within max(NESTED_ENDS_MIN, the grid's tiles)). */
static int row_starts_init(const tessel_allocator *a, across *ac)
{
    const stat_grid *x = ac->x;
    uint64_t bs = ac->blk[RK], nb = (x->cols + bs - 1) / bs + 1;
    long double size = (long double)x->rows * (long double)nb;
    if (size > (long double)NESTED_ENDS_MIN && size > (long double)x->n)
        return TESSEL_OK;
    if (!(ac->xks = tessel_alloc_array(a, x->rows * nb + 1, sizeof(uint64_t))))
        return TESSEL_ENOMEM;
    ac->nxk = nb;
    for (uint64_t o = 0; o < x->rows; o++) {
        uint64_t *row = &ac->xks[o * nb], q = 0;
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++)
            while (q < nb && x->col[t] >= q * bs)
                row[q++] = t;
        while (q < nb)
            row[q++] = x->ptr[o + 1];
    }
    return TESSEL_OK;
}

/* X's row o inside the k block [k0, k0 + blk[RK]): positions [*t0, return). */
static inline uint64_t row_block(const across *ac, uint64_t o, uint64_t k0, uint64_t *t0)
{
    const stat_grid *x = ac->x;
    uint64_t q = k0 / ac->blk[RK];
    if (ac->xks && k0 == q * ac->blk[RK] && q + 1 < ac->nxk) {
        *t0 = ac->xks[o * ac->nxk + q];
        return ac->xks[o * ac->nxk + q + 1];
    }
    uint64_t t = stat_grid_lower(x, o, k0), k1 = k0 + ac->blk[RK];
    *t0 = t;
    while (t < x->ptr[o + 1] && x->col[t] < k1)
        t++;
    return t;
}

/* Level b-1's tile edge along engine index x in level-b tiles: the div of
 * x's last digit before level b's, or the extent (no loop over x). */
static uint64_t outer_edge(const nested *n, unsigned x, uint64_t ext)
{
    for (unsigned d = n->first_digit; d-- > 0;)
        if (n->bd.d[d].x == x)
            return n->bd.d[d].div < ext ? n->bd.d[d].div : ext;
    return ext ? ext : 1;
}

/* The role of engine index x, or 3 for an index of none. */
static unsigned role_of(const across *ac, unsigned x)
{
    for (unsigned r = 0; r < 3; r++)
        if (ac->ex[r] == x)
            return r;
    return 3;
}

/* Roles in level b's order: an index without a loop at level b keeps one
 * value inside an outer tile, so where it goes does not matter. */
static void level_order(across *ac)
{
    unsigned m = 0, seen[3] = { 0, 0, 0 };
    for (unsigned d = ac->n->first_digit; d < ac->n->bd.ndigits; d++) {
        unsigned r = role_of(ac, ac->n->bd.d[d].x);
        if (r < 3 && !seen[r]) {
            seen[r] = 1;
            ac->ord[m++] = r;
        }
    }
    for (unsigned r = 0; r < 3; r++)
        if (!seen[r])
            ac->ord[m++] = r;
}

/* g at tiles rb x cb times as large, column blocks only (nnz left NULL):
 * per row block, its distinct column blocks, ascending. */
static int coarse_cols(const tessel_allocator *a, const stat_grid *g, uint64_t rb, uint64_t cb,
                       stat_grid *out)
{
    memset(out, 0, sizeof(*out));
    out->rows = (g->rows + rb - 1) / rb;
    out->cols = (g->cols + cb - 1) / cb;
    out->ptr = stat_zeroed(a, out->rows + 1, sizeof(uint64_t));
    uint64_t *stamp = stat_zeroed(a, 2 * (out->cols + 1), sizeof(uint64_t));
    if (!out->ptr || !stamp) {
        tessel_dealloc(a, stamp);
        return TESSEL_ENOMEM;
    }
    uint64_t *row = stamp + out->cols + 1; /* a row's columns, sorted, then stored 32-bit */
    /* two passes: count, then fill (stamp: 1 + the row block last seen) */
    for (int pass = 0; pass < 2; pass++) {
        uint64_t cnt = 0;
        memset(stamp, 0, (out->cols + 1) * sizeof(uint64_t));
        for (uint64_t R = 0; R < out->rows; R++) {
            uint64_t r1 = (R + 1) * rb < g->rows ? (R + 1) * rb : g->rows, start = cnt;
            for (uint64_t r = R * rb; r < r1; r++)
                for (uint64_t t = g->ptr[r]; t < g->ptr[r + 1]; t++) {
                    uint64_t c = g->col[t] / cb;
                    if (stamp[c] == R + 1)
                        continue;
                    stamp[c] = R + 1;
                    if (pass)
                        row[cnt - start] = c;
                    cnt++;
                }
            if (pass) {
                tessel_sort_u64_inplace(row, cnt - start, out->cols);
                for (uint64_t q = start; q < cnt; q++)
                    out->col[q] = (uint32_t)row[q - start];
            } else {
                out->ptr[R + 1] = cnt;
            }
        }
        if (!pass) {
            out->n = cnt;
            out->col = stat_zeroed(a, cnt + 1, sizeof(uint32_t));
            if (!out->col) {
                tessel_dealloc(a, stamp);
                return TESSEL_ENOMEM;
            }
        }
    }
    tessel_dealloc(a, stamp);
    return TESSEL_OK;
}

/* First position in g's row r whose column is >= v (g->ptr[r + 1] when
 * none). */
static uint64_t lower(const stat_grid *g, uint64_t r, uint64_t v)
{
    return stat_grid_lower(g, r, v);
}

/* The key of an outer tile over the digits of levels 1 .. b-1 (as
 * exact_loop_key orders them), as a sum of one share per role taken
 * from per-block tables: digit i weighs w[i], the product of the later
 * digits' radices, or, when the radices rounded up to powers of two fit
 * 64 bits, 2^shift[i], so that decoding needs no division. Either way
 * the keys sort as the composite order does. */
static void keyspace_init(across *ac)
{
    const boundary *bd = &ac->n->bd;
    unsigned nd = ac->n->first_digit, bits = 0;
    for (unsigned i = nd; i-- > 0;) {
        unsigned b = 0;
        while (b < 64 && (UINT64_C(1) << b) < bd->d[i].radix)
            b++;
        ac->shift[i] = bits;
        bits += b;
    }
    ac->pow2 = bits <= 63;
    uint64_t w = 1;
    for (unsigned i = nd; i-- > 0;) {
        ac->role[i] = role_of(ac, bd->d[i].x);
        ac->w[i] = ac->pow2 ? UINT64_C(1) << ac->shift[i] : w;
        w *= bd->d[i].radix;
    }
}

/* Per role, per outer block: its share of the key. */
static int parts_init(const tessel_allocator *a, across *ac)
{
    const boundary *bd = &ac->n->bd;
    for (unsigned r = 0; r < 3; r++) {
        ac->nblk[r] = (ac->ext[r] + ac->blk[r] - 1) / ac->blk[r];
        ac->part[r] = stat_zeroed(a, ac->nblk[r] + 1, sizeof(uint64_t));
        if (!ac->part[r])
            return TESSEL_ENOMEM;
        for (unsigned i = 0; i < ac->n->first_digit; i++) {
            const digit *d = &bd->d[i];
            if (ac->role[i] != r)
                continue;
            for (uint64_t q = 0; q < ac->nblk[r]; q++) {
                uint64_t v = q * ac->blk[r] / d->div;
                if (!d->first)
                    v %= d->radix;
                ac->part[r][q] += v * ac->w[i];
            }
        }
    }
    return TESSEL_OK;
}

/* The inverse: the first level-b tile of the outer tile of key k. */
static void outer_decode(const across *ac, uint64_t k, uint64_t *c)
{
    const boundary *bd = &ac->n->bd;
    c[RO] = c[RK] = c[RF] = 0;
    for (unsigned i = ac->n->first_digit; i-- > 0;) {
        const digit *d = &bd->d[i];
        unsigned r = ac->role[i];
        uint64_t v;
        if (ac->pow2) {
            v = (k >> ac->shift[i]) & ((i ? ac->w[i - 1] >> ac->shift[i] : ~UINT64_C(0)) - (i ? 1 : 0));
        } else {
            v = k % d->radix;
            k /= d->radix;
        }
        if (r < 3)
            c[r] += v * d->div;
    }
}

/* v before w in level b's order (coordinates per role). */
static int before(const across *ac, const uint64_t *v, const uint64_t *w)
{
    for (unsigned m = 0; m < 3; m++) {
        unsigned r = ac->ord[m];
        if (v[r] != w[r])
            return v[r] < w[r];
    }
    return 0;
}

/* Row r of g inside [lo, hi) (one block of t when it has a table): its
 * first and last column, 0 when none. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int span(const stat_grid *g, const block_ends *t, uint64_t r, uint64_t lo,
                       uint64_t hi, uint64_t *first, uint64_t *last)
{
    if (r >= g->rows)
        return 0;
    if (t->first) {
        uint64_t q = r * t->nb + lo / t->bs;
        *first = t->first[q];
        *last = t->last[q];
        return *first != UINT64_MAX;
    }
    uint64_t u = lower(g, r, lo);
    if (u == g->ptr[r + 1] || g->col[u] >= hi)
        return 0;
    *first = g->col[u];
    *last = g->col[lower(g, r, hi) - 1];
    return 1;
}

/* Whether row r of g has a column in [lo, hi). */
static int meets(const stat_grid *g, uint64_t r, uint64_t lo, uint64_t hi)
{
    uint64_t u = lower(g, r, lo);
    return u < g->ptr[r + 1] && g->col[u] < hi;
}

/* The least (last: the greatest) k in [k0, k1) that the outer o block
 * ob and f block fb both reach, or UINT64_MAX. */
static uint64_t candidate(const across *ac, uint64_t ob, uint64_t fb, uint64_t k0, uint64_t k1,
                          int last)
{
    if (k0 >= k1)
        return UINT64_MAX;
    const uint64_t *x = &ac->kbo[ob * ac->wk], *y = &ac->kbf[fb * ac->wk];
    uint64_t w0 = k0 / 64, w1 = (k1 - 1) / 64;
    uint64_t lo = ~UINT64_C(0) << (k0 % 64), hi = ~UINT64_C(0) >> (63 - (k1 - 1) % 64);
    if (!last) {
        for (uint64_t w = w0; w <= w1; w++) {
            uint64_t m = x[w] & y[w] & (w == w0 ? lo : ~UINT64_C(0)) & (w == w1 ? hi : ~UINT64_C(0));
            if (m)
                return w * 64 + (uint64_t)__builtin_ctzll(m);
        }
        return UINT64_MAX;
    }
    for (uint64_t w = w1 + 1; w-- > w0;) {
        uint64_t m = x[w] & y[w] & (w == w0 ? lo : ~UINT64_C(0)) & (w == w1 ? hi : ~UINT64_C(0));
        if (m)
            return w * 64 + 63 - (uint64_t)__builtin_clzll(m);
    }
    return UINT64_MAX;
}

/* The candidate bitsets of the outer blocks; left NULL past the budget. */
static int candidates_init(const tessel_allocator *a, across *ac)
{
    uint64_t nob = (ac->x->rows + ac->blk[RO] - 1) / ac->blk[RO];
    uint64_t nfb = (ac->p->cols + ac->blk[RF] - 1) / ac->blk[RF];
    ac->wk = (ac->xt.rows + 63) / 64;
    long double words = (long double)(nob + nfb) * (long double)ac->wk;
    if (words > (long double)NESTED_ACROSS_BITS ||
        (words > (long double)NESTED_ENDS_MIN && words > (long double)(ac->x->n + ac->p->n)))
        return TESSEL_OK;
    ac->kbo = stat_zeroed(a, nob * ac->wk + 1, sizeof(uint64_t));
    ac->kbf = stat_zeroed(a, nfb * ac->wk + 1, sizeof(uint64_t));
    if (!ac->kbo || !ac->kbf)
        return TESSEL_ENOMEM;
    for (uint64_t o = 0; o < ac->x->rows; o++)
        for (uint64_t t = ac->x->ptr[o]; t < ac->x->ptr[o + 1]; t++) {
            uint64_t k = ac->x->col[t];
            ac->kbo[o / ac->blk[RO] * ac->wk + k / 64] |= UINT64_C(1) << (k % 64);
        }
    for (uint64_t k = 0; k < ac->p->rows && k < ac->xt.rows; k++)
        for (uint64_t t = ac->p->ptr[k]; t < ac->p->ptr[k + 1]; t++)
            ac->kbf[ac->p->col[t] / ac->blk[RF] * ac->wk + k / 64] |= UINT64_C(1) << (k % 64);
    return TESSEL_OK;
}

/* Whether the outer tile starting at c holds an effectual iteration: a k
 * (among those where both X's column and P's row hold tiles) whose column
 * of X and row of P both reach into it. */
static inline int outer_any(const across *ac, const uint64_t *c)
{
    uint64_t k1 = c[RK] + ac->blk[RK], lo = 0, hi = ac->nlive;
    uint64_t ob = c[RO] / ac->blk[RO], fb = c[RF] / ac->blk[RF];
    if (ac->kbo) /* before the search below, which only the other test needs */
        return candidate(ac, ob, fb, c[RK], k1 < ac->xt.rows ? k1 : ac->xt.rows, 0) != UINT64_MAX;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ac->live[mid] < c[RK])
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint64_t m = lo; m < ac->nlive && ac->live[m] < k1; m++) {
        uint64_t k = ac->live[m];
        if (ac->obits ? (ac->obits[k * ac->wo + ob / 64] >> (ob % 64) & 1) &&
                            (ac->fbits[k * ac->wf + fb / 64] >> (fb % 64) & 1)
                      : meets(&ac->xt, k, c[RO], c[RO] + ac->blk[RO]) &&
                            meets(ac->p, k, c[RF], c[RF] + ac->blk[RF]))
            return 1;
    }
    return 0;
}

/* v improves on the best so far (*found): the least in level b's order
 * for the first iteration, the greatest for the last. */
static int better(const across *ac, int last, int found, const uint64_t *v, const uint64_t *best)
{
    return !found || (last ? before(ac, best, v) : before(ac, v, best));
}

/* outer_end's step on one k: the least (last: greatest) iteration on k
 * inside the outer tile at c into v when it improves on *found; 1 when the
 * pass may stop (k found and k leads level b's order). */
static int k_end(const across *ac, uint64_t k, const uint64_t *c, int last, int *found,
                 uint64_t *v)
{
    uint64_t oa, oz, fa, fz;
    if (!span(&ac->xt, &ac->xte, k, c[RO], c[RO] + ac->blk[RO], &oa, &oz) ||
        !span(ac->p, &ac->pe, k, c[RF], c[RF] + ac->blk[RF], &fa, &fz))
        return 0;
    uint64_t w[3] = { last ? oz : oa, k, last ? fz : fa };
    if (better(ac, last, *found, w, v)) {
        memcpy(v, w, sizeof(w));
        *found = 1;
    }
    return ac->ord[0] == RK;
}

/* outer_end's scan of X's row o (level b led by o) with P's block-ends
 * table: the least (last: greatest) iteration of the row inside the outer
 * tile, k in [k0, k0 + blk[RK]) and f in the f block starting at f0, into
 * v; 0 when none. The row's k ascend and o is fixed, so where k follows o
 * in level b's order the first k met (the last) is the answer, and where
 * f follows o the least f (the greatest f, the later k on a tie): what
 * better() picks among the same candidates. */
static int row_scan(const across *ac, uint64_t o, uint64_t k0, uint64_t f0, int last,
                    uint64_t *v)
{
    const stat_grid *x = ac->x;
    const block_ends *pe = &ac->pe;
    uint64_t t0, t1 = row_block(ac, o, k0, &t0), qf = f0 / pe->bs, rows = ac->p->rows;
    int found = 0;
    if (ac->ord[1] == RK) {
        for (uint64_t m = t0; m < t1; m++) {
            uint64_t t = last ? t0 + t1 - 1 - m : m, k = x->col[t];
            if (k >= rows || pe->first[k * pe->nb + qf] == UINT64_MAX)
                continue;
            v[RO] = o;
            v[RK] = k;
            v[RF] = last ? pe->last[k * pe->nb + qf] : pe->first[k * pe->nb + qf];
            return 1;
        }
        return 0;
    }
    uint64_t best = 0, bk = 0;
    for (uint64_t t = t0; t < t1; t++) {
        uint64_t k = x->col[t];
        if (k >= rows)
            continue;
        uint64_t fa = pe->first[k * pe->nb + qf];
        if (fa == UINT64_MAX)
            continue;
        if (!last && (!found || fa < best)) {
            best = fa;
            bk = k;
        } else if (last) {
            uint64_t fz = pe->last[k * pe->nb + qf];
            if (!found || fz >= best) {
                best = fz;
                bk = k;
            }
        }
        found = 1;
    }
    if (found) {
        v[RO] = o;
        v[RK] = bk;
        v[RF] = best;
    }
    return found;
}

/* The first (last: the last) effectual iteration inside the outer tile
 * starting at c, in level b's order, into v; 0 when it holds none. For a
 * fixed k the uses of X's column k meet P's row k independently, so the
 * least iteration on k is (its least o, k, its least f), the greatest
 * (greatest o, k, greatest f): a pass over k, which stops at the first k
 * found when k leads level b's order. With o leading, a pass over X's
 * rows stops at the first row found instead. */
static int outer_end(const across *ac, const uint64_t *c, int last, uint64_t *v)
{
    uint64_t o0 = c[RO], o1 = c[RO] + ac->blk[RO], k0 = c[RK], k1 = c[RK] + ac->blk[RK];
    uint64_t f0 = c[RF], f1 = c[RF] + ac->blk[RF];
    const stat_grid *x = ac->x, *p = ac->p;
    int found = 0;
    if (ac->ord[0] == RO) {
        o1 = o1 < x->rows ? o1 : x->rows;
        if (ac->pe.first) {
            for (uint64_t m = o0; m < o1 && !found; m++)
                found = row_scan(ac, last ? o0 + o1 - 1 - m : m, k0, f0, last, v);
            return found;
        }
        for (uint64_t m = o0; m < o1 && !found; m++) {
            uint64_t o = last ? o0 + o1 - 1 - m : m;
            uint64_t t0, t1 = row_block(ac, o, k0, &t0);
            for (uint64_t t = t0; t < t1; t++) {
                uint64_t fa, fz;
                if (!span(p, &ac->pe, x->col[t], f0, f1, &fa, &fz))
                    continue;
                uint64_t w[3] = { o, x->col[t], last ? fz : fa };
                if (better(ac, last, found, w, v)) {
                    memcpy(v, w, sizeof(w));
                    found = 1;
                }
            }
        }
        return found;
    }
    k1 = k1 < ac->xt.rows ? k1 : ac->xt.rows;
    if (ac->kbo) {
        /* the same pass over the candidate k only, in the same direction */
        uint64_t ob = o0 / ac->blk[RO], fb = f0 / ac->blk[RF];
        for (uint64_t k = candidate(ac, ob, fb, k0, k1, last); k != UINT64_MAX;
             k = last ? candidate(ac, ob, fb, k0, k, 1) : candidate(ac, ob, fb, k + 1, k1, 0)) {
            if (k_end(ac, k, c, last, &found, v))
                break;
        }
        return found;
    }
    for (uint64_t m = k0; m < k1; m++) {
        uint64_t k = last ? k0 + k1 - 1 - m : m;
        if (k_end(ac, k, c, last, &found, v))
            break;
    }
    return found;
}

/* Index of tile (r, c) of g, which must be non-empty. */
static uint64_t tile_index(const stat_grid *g, uint64_t r, uint64_t c)
{
    return lower(g, r, c);
}

/* The effectual outer tiles (X's and P's coarse grids meet): with hist,
 * their count per bucket (key >> sh); else the keys whose bucket lies in
 * [lo, hi) into keys, returning how many. */
static uint64_t outer_enum(const across *ac, uint64_t *keys, uint64_t cap, uint64_t *hist,
                           unsigned sh, uint64_t lo, uint64_t hi)
{
    const stat_grid *xc = &ac->xc, *pc = &ac->pc;
    uint64_t m = 0;
    for (uint64_t ob = 0; ob < xc->rows; ob++)
        for (uint64_t t = xc->ptr[ob]; t < xc->ptr[ob + 1]; t++) {
            uint64_t kb = xc->col[t];
            if (kb >= pc->rows)
                continue;
            uint64_t base = ac->part[RO][ob] + ac->part[RK][kb];
            for (uint64_t u = pc->ptr[kb]; u < pc->ptr[kb + 1]; u++) {
                uint64_t key = base + ac->part[RF][pc->col[u]], bk = key >> sh;
                if (hist)
                    hist[bk]++;
                else if (bk >= lo && bk < hi && m < cap) /* m < cap: always */
                    keys[m++] = key;
            }
        }
    return m;
}

/* The scan over the effectual outer tiles in key order, carried from one
 * chunk of keys to the next. */
typedef struct scan_state {
    uint64_t pc[3];
    int have_prev;
} scan_state;

/* Takes off runs[] the runs that continue into the outer tiles of
 * keys[0 .. m) (sorted): lazily, an outer tile's ends only where it
 * follows an effectual outer tile on the same X tiles (the same o and k
 * blocks), the only place a run can continue. */
static void scan_keys(const across *ac, const uint64_t *keys, uint64_t m, uint64_t cf,
                      scan_state *st, nested_run *runs)
{
    uint64_t *pc = st->pc, v[3] = { 0, 0, 0 }, z[3] = { 0, 0, 0 };
    for (uint64_t q = 0; q < m; q++) {
        uint64_t c[3];
        outer_decode(ac, keys[q], c);
        if (!st->have_prev || c[RO] != pc[RO] || c[RK] != pc[RK]) {
            if (outer_any(ac, c)) {
                memcpy(pc, c, sizeof(st->pc));
                st->have_prev = 1;
            }
            continue;
        }
        if (!outer_end(ac, c, 0, v))
            continue; /* no effectual iteration inside: nothing between */
        outer_end(ac, pc, 1, z);
        memcpy(pc, c, sizeof(st->pc));
        /* the same tile across a coarse f block that the runs counted
         * apart (stat_nested_block): one run, one fill fewer */
        if (z[RO] == v[RO] && z[RK] == v[RK] &&
            (cf == UINT64_MAX ? 0 : z[RF] / cf) != (cf == UINT64_MAX ? 0 : v[RF] / cf))
            runs[tile_index(ac->x, v[RO], v[RK])] -= 1;
    }
}

/* Whether the outer key sorts as nested loops over the roles' blocks,
 * ord[0] outermost: every role's share grows with its block by more than
 * the later roles' shares can add. Then the outer tiles come in key order
 * from three loops over the blocks, with no keys to enumerate and sort
 * (the per-strip scan of scan_nested). */
static int nested_order(const across *ac, unsigned *ord)
{
    unsigned m = 0, seen[3] = { 0, 0, 0 };
    for (unsigned i = 0; i < ac->n->first_digit; i++) {
        unsigned r = ac->role[i];
        if (r < 3 && !seen[r] && ac->n->bd.d[i].radix > 1) {
            seen[r] = 1;
            ord[m++] = r;
        }
    }
    for (unsigned r = 0; r < 3; r++)
        if (!seen[r])
            ord[m++] = r;
    uint64_t inner = 0; /* the largest sum of the later roles' shares */
    for (unsigned q = 3; q-- > 0;) {
        const uint64_t *part = ac->part[ord[q]];
        for (uint64_t b = 1; b < ac->nblk[ord[q]]; b++)
            if (part[b] <= part[b - 1] || part[b] - part[b - 1] <= inner)
                return 0;
        uint64_t top = part[ac->nblk[ord[q]] - 1];
        if (inner > UINT64_MAX - top)
            return 0;
        inner += top;
    }
    return 1;
}

/* One effectual outer tile c of the scan (scan_keys' step, c known to be
 * effectual): a run continues into it only from the previous effectual
 * outer tile pc on the same o and k blocks. */
#if defined(__GNUC__)
__attribute__((always_inline)) /* into each scan: one more caller (scan_fblocks) left it out of line */
#endif
static inline void scan_step(const across *ac, const uint64_t *c, uint64_t cf, uint64_t *pc,
                      int *have_prev, nested_run *runs)
{
    uint64_t v[3], z[3];
    if (*have_prev && c[RO] == pc[RO] && c[RK] == pc[RK] && outer_end(ac, c, 0, v)) {
        outer_end(ac, pc, 1, z);
        if (z[RO] == v[RO] && z[RK] == v[RK] &&
            (cf == UINT64_MAX ? 0 : z[RF] / cf) != (cf == UINT64_MAX ? 0 : v[RF] / cf))
            runs[tile_index(ac->x, v[RO], v[RK])] -= 1;
    }
    memcpy(pc, c, 3 * sizeof(*pc));
    *have_prev = 1;
}

/* The last K where both bitsets x and y (words words) are set, or
 * UINT64_MAX. */
static uint64_t last_common(const uint64_t *x, const uint64_t *y, uint64_t words)
{
    for (uint64_t w = words; w-- > 0;) {
        uint64_t m = x[w] & y[w];
        if (m)
            return w * 64 + 63 - (uint64_t)__builtin_clzll(m);
    }
    return UINT64_MAX;
}

/* Per f block of one strip (o block, k block): the first and last
 * effectual iteration of its outer tile in level b's order and a bit when
 * it holds any; and per row k of P, the f blocks it meets with its first
 * and last column in each (P's columns in f blocks, at most one entry per
 * tile of P). An iteration is one 64-bit key where the offsets inside the
 * outer tile fit (each role's at sh[role], level b's order the keys'
 * order), else its 3 coordinates. */
typedef struct strip_ends {
    uint64_t *first, *last, *bits;
    uint64_t *ptr;      /* P's rows + 1 */
    uint32_t *fa, *fz;  /* per (row, f block met): first and last column */
    unsigned sh[3];
    uint64_t mask[3];
    int packed;
} strip_ends;

static void strip_free(const tessel_allocator *a, strip_ends *se)
{
    tessel_dealloc(a, se->first);
    tessel_dealloc(a, se->last);
    tessel_dealloc(a, se->bits);
    tessel_dealloc(a, se->ptr);
    tessel_dealloc(a, se->fa);
    tessel_dealloc(a, se->fz);
    memset(se, 0, sizeof(*se));
}

/* The packed keys' layout: each role's offset in its block in as many bits
 * as the block needs, level b's outermost role highest. */
static void strip_layout(const across *ac, strip_ends *se)
{
    unsigned bits = 0;
    for (unsigned m = 3; m-- > 0;) {
        unsigned r = ac->ord[m], b = 0;
        while (b < 64 && (UINT64_C(1) << b) < ac->blk[r])
            b++;
        se->sh[r] = bits;
        se->mask[r] = b < 64 ? (UINT64_C(1) << b) - 1 : ~UINT64_C(0);
        bits += b;
    }
    se->packed = bits <= 63;
}

/* strip_f's arrays for P in ac's f blocks. */
static int strip_init(const tessel_allocator *a, const across *ac, strip_ends *se)
{
    const stat_grid *p = ac->p;
    uint64_t bs = ac->blk[RF], nfb = ac->nblk[RF];
    memset(se, 0, sizeof(*se));
    strip_layout(ac, se);
    uint64_t per = se->packed ? 1 : 3, m = 0;
    se->first = stat_zeroed(a, per * nfb + 1, sizeof(uint64_t));
    se->last = stat_zeroed(a, per * nfb + 1, sizeof(uint64_t));
    se->bits = stat_zeroed(a, (nfb + 63) / 64 + 1, sizeof(uint64_t));
    se->ptr = stat_zeroed(a, p->rows + 1, sizeof(uint64_t));
    for (uint64_t k = 0; se->ptr && k < p->rows; k++) {
        for (uint64_t t = p->ptr[k]; t < p->ptr[k + 1]; t++)
            m += t == p->ptr[k] || p->col[t] / bs != p->col[t - 1] / bs;
        se->ptr[k + 1] = m;
    }
    se->fa = stat_zeroed(a, m + 1, sizeof(uint32_t));
    se->fz = stat_zeroed(a, m + 1, sizeof(uint32_t));
    if (!se->first || !se->last || !se->bits || !se->ptr || !se->fa || !se->fz) {
        strip_free(a, se);
        return TESSEL_ENOMEM;
    }
    for (uint64_t k = 0, q = 0; k < p->rows; k++)
        for (uint64_t t = p->ptr[k]; t < p->ptr[k + 1]; t++) {
            if (t == p->ptr[k] || p->col[t] / bs != p->col[t - 1] / bs)
                se->fa[q++] = p->col[t];
            se->fz[q - 1] = p->col[t];
        }
    return TESSEL_OK;
}

/* strip_f's step on one k (X's least and greatest o oa, oz in the o block
 * at c): each f block of P's row k offers (oa, k, its least f) as its
 * outer tile's first iteration and (oz, k, its greatest f) as the last. */
static void strip_k(const across *ac, const uint64_t *c, const strip_ends *se, uint64_t k,
                    uint64_t oa, uint64_t oz)
{
    const uint64_t bs = ac->blk[RF];
    const unsigned shf = se->sh[RF];
    uint64_t kk = (k - c[RK]) << se->sh[RK];
    uint64_t vk = kk + ((oa - c[RO]) << se->sh[RO]), zk = kk + ((oz - c[RO]) << se->sh[RO]);
    for (uint64_t t = se->ptr[k]; t < se->ptr[k + 1]; t++) {
        uint64_t fb = se->fa[t] / bs, f0 = fb * bs, bit = UINT64_C(1) << (fb % 64);
        int seen = (se->bits[fb / 64] & bit) != 0;
        se->bits[fb / 64] |= bit;
        if (se->packed) {
            uint64_t v = vk + ((se->fa[t] - f0) << shf), z = zk + ((se->fz[t] - f0) << shf);
            if (!seen || v < se->first[fb])
                se->first[fb] = v;
            if (!seen || z > se->last[fb])
                se->last[fb] = z;
            continue;
        }
        uint64_t v[3] = { oa, k, se->fa[t] }, z[3] = { oz, k, se->fz[t] };
        if (better(ac, 0, seen, v, &se->first[3 * fb]))
            memcpy(&se->first[3 * fb], v, sizeof(v));
        if (better(ac, 1, seen, z, &se->last[3 * fb]))
            memcpy(&se->last[3 * fb], z, sizeof(z));
    }
}

/* The first (last: the last) iteration kept for f block fb of the strip
 * at c, as coordinates. */
static void strip_end(const across *ac, const strip_ends *se, const uint64_t *c, uint64_t fb,
                      int last, uint64_t *v)
{
    const uint64_t *e = last ? se->last : se->first;
    if (!se->packed) {
        memcpy(v, &e[3 * fb], 3 * sizeof(*v));
        return;
    }
    uint64_t key = e[fb];
    v[RO] = c[RO] + (key >> se->sh[RO] & se->mask[RO]);
    v[RK] = c[RK] + (key >> se->sh[RK] & se->mask[RK]);
    v[RF] = fb * ac->blk[RF] + (key >> se->sh[RF] & se->mask[RF]);
}

/* One strip (o block, k block at c) with f innermost: its effectual outer
 * tiles in f order, each taking off the run that continues into it from
 * the previous one (scan_step's test), from one pass over the strip's k.
 * For a k whose X column meets the o block, its least and greatest o there
 * hold for every f block, and P's row k gives each f block it meets with
 * its least and greatest f: the iterations on k in that outer tile are
 * (o, k, f) for those o and f, so the least in level b's order is (least
 * o, k, least f), the greatest (greatest o, k, greatest f), and the
 * extremes over k are outer_end's. Cost: the (k, f block) pairs of P's
 * rows in the strip, instead of outer_end's two passes over every outer
 * tile's candidate k with a look-up (or search) of P's row per k. */
static void strip_f(const across *ac, const uint64_t *c, uint64_t cf, const strip_ends *se,
                    uint64_t *pc, int *have_prev, nested_run *runs)
{
    uint64_t ob = c[RO] / ac->blk[RO], k1 = c[RK] + ac->blk[RK];
    k1 = k1 < ac->xt.rows ? k1 : ac->xt.rows;
    k1 = k1 < ac->p->rows ? k1 : ac->p->rows;
    const uint64_t *kb = &ac->kbo[ob * ac->wk];
    for (uint64_t k = c[RK]; k < k1; k++) {
        uint64_t oa, oz;
        if ((kb[k / 64] >> (k % 64) & 1) &&
            span(&ac->xt, &ac->xte, k, c[RO], c[RO] + ac->blk[RO], &oa, &oz))
            strip_k(ac, c, se, k, oa, oz);
    }
    uint64_t prev = UINT64_MAX, nw = (ac->nblk[RF] + 63) / 64, v[3], z[3];
    for (uint64_t w = 0; w < nw; w++)
        for (uint64_t m = se->bits[w]; m; m &= m - 1) {
            uint64_t fb = w * 64 + (uint64_t)__builtin_ctzll(m);
            if (prev != UINT64_MAX) {
                strip_end(ac, se, c, fb, 0, v);
                strip_end(ac, se, c, prev, 1, z);
                if (z[RO] == v[RO] && z[RK] == v[RK] &&
                    (cf == UINT64_MAX ? 0 : z[RF] / cf) != (cf == UINT64_MAX ? 0 : v[RF] / cf))
                    runs[tile_index(ac->x, v[RO], v[RK])] -= 1;
            }
            prev = fb;
        }
    memset(se->bits, 0, nw * sizeof(uint64_t));
    if (prev != UINT64_MAX) { /* the strip's last effectual outer tile */
        memcpy(pc, c, 3 * sizeof(*pc));
        pc[RF] = prev * ac->blk[RF];
        *have_prev = 1;
    }
}

/* scan_nested's f blocks of the strip (o block, k block) at c, in order:
 * outer_any's test as one AND per word of the block's k with the o
 * block's k bitset masked to the block once for the strip. */
static void scan_fblocks(const across *ac, uint64_t *c, uint64_t cf, uint64_t *pc,
                         int *have_prev, nested_run *runs)
{
    uint64_t k0 = c[RK], k1 = k0 + ac->blk[RK];
    k1 = k1 < ac->xt.rows ? k1 : ac->xt.rows;
    if (k0 >= k1)
        return;
    uint64_t w0 = k0 / 64, w1 = (k1 - 1) / 64, nw = w1 - w0 + 1, mask[4];
    if (nw > 4) { /* a wide k block: candidate's own loop */
        for (uint64_t fb = 0; fb < ac->nblk[RF]; fb++) {
            c[RF] = fb * ac->blk[RF];
            if (outer_any(ac, c))
                scan_step(ac, c, cf, pc, have_prev, runs);
        }
        return;
    }
    const uint64_t *x = &ac->kbo[c[RO] / ac->blk[RO] * ac->wk];
    uint64_t some = 0;
    for (uint64_t w = w0; w <= w1; w++) {
        mask[w - w0] = x[w] & (w == w0 ? ~UINT64_C(0) << (k0 % 64) : ~UINT64_C(0)) &
                       (w == w1 ? ~UINT64_C(0) >> (63 - (k1 - 1) % 64) : ~UINT64_C(0));
        some |= mask[w - w0];
    }
    if (!some) /* no X tile in the strip: no f block's outer tile is effectual */
        return;
    for (uint64_t fb = 0; fb < ac->nblk[RF]; fb++) {
        const uint64_t *y = &ac->kbf[fb * ac->wk + w0];
        uint64_t any = 0;
        for (uint64_t w = 0; w < nw; w++)
            any |= mask[w] & y[w];
        if (!any)
            continue;
        c[RF] = fb * ac->blk[RF];
        scan_step(ac, c, cf, pc, have_prev, runs);
    }
}

/* scan_nested where f is innermost and no strip_ends apply: the strips
 * (ord[0], ord[1] blocks) in order, each strip's f blocks by
 * scan_fblocks (the same outer tiles in the same order). A loop of its
 * own, so that scan_nested's code for the other orders stays as it was. */
static void scan_nested_f(const across *ac, const unsigned *ord, uint64_t cf, nested_run *runs)
{
    uint64_t q[2], c[3] = { 0, 0, 0 }, pc[3] = { 0, 0, 0 };
    int have_prev = 0;
    for (q[0] = 0; q[0] < ac->nblk[ord[0]]; q[0]++)
        for (q[1] = 0; q[1] < ac->nblk[ord[1]]; q[1]++) {
            c[ord[0]] = q[0] * ac->blk[ord[0]];
            c[ord[1]] = q[1] * ac->blk[ord[1]];
            scan_fblocks(ac, c, cf, pc, &have_prev, runs);
        }
}

/* scan_keys over every combination of outer blocks in the order of
 * nested_order (ord), the candidate bitsets deciding which outer tiles
 * are effectual: the same outer tiles in the same order, so the same
 * runs are taken off. With k innermost, a strip pair (o block, f block)
 * ANDs its two bitsets once and visits only the k blocks holding a bit
 * (the per-strip summary: which k blocks meet); otherwise every
 * combination is tested. Cost: the strip pairs times the words of k (or
 * the combinations times a k block's words), which the caller bounds by
 * the outer tiles the keys would enumerate. */
static void scan_nested(const across *ac, const unsigned *ord, uint64_t cf, const strip_ends *se,
                        nested_run *runs)
{
    uint64_t q[3], c[3], pc[3] = { 0, 0, 0 };
    int have_prev = 0;
    uint64_t kmax = ac->xt.rows; /* the candidate bitsets' extent in k */
    for (q[0] = 0; q[0] < ac->nblk[ord[0]]; q[0]++)
        for (q[1] = 0; q[1] < ac->nblk[ord[1]]; q[1]++) {
            c[ord[0]] = q[0] * ac->blk[ord[0]];
            c[ord[1]] = q[1] * ac->blk[ord[1]];
            if (ord[2] == RK) {
                /* consecutive outer tiles of one strip pair differ in their
                 * k block, so only its first can continue a run (from the
                 * previous strip pair's last) and only its last is the
                 * next one's predecessor: the blocks between change
                 * nothing and are not visited */
                const uint64_t *x = &ac->kbo[c[RO] / ac->blk[RO] * ac->wk];
                const uint64_t *y = &ac->kbf[c[RF] / ac->blk[RF] * ac->wk];
                uint64_t k = stat_nested_next_common(x, y, ac->wk, 0);
                if (k >= kmax)
                    continue;
                c[RK] = k / ac->blk[RK] * ac->blk[RK];
                scan_step(ac, c, cf, pc, &have_prev, runs);
                uint64_t kl = last_common(x, y, ac->wk);
                if (kl < kmax && kl / ac->blk[RK] * ac->blk[RK] != c[RK]) {
                    c[RK] = kl / ac->blk[RK] * ac->blk[RK];
                    scan_step(ac, c, cf, pc, &have_prev, runs);
                }
                continue;
            }
            if (se) { /* ord[2] == RF */
                strip_f(ac, c, cf, se, pc, &have_prev, runs);
                continue;
            }
            for (q[2] = 0; q[2] < ac->nblk[ord[2]]; q[2]++) {
                c[ord[2]] = q[2] * ac->blk[ord[2]];
                if (outer_any(ac, c))
                    scan_step(ac, c, cf, pc, &have_prev, runs);
            }
        }
}

/* Over g's rows in blocks of rb and its columns in blocks of cb: each
 * (row block, distinct column block c) adds w[c] (0 past nw; 1 without
 * w) to the sum returned and, with per, to per[row block]. stamp: one
 * zeroed entry per column block and one more. */
static uint64_t block_pairs(const stat_grid *g, uint64_t rb, uint64_t cb, const uint64_t *w,
                            uint64_t nw, uint64_t *stamp, uint64_t *per)
{
    uint64_t sum = 0, nr = (g->rows + rb - 1) / rb;
    for (uint64_t R = 0; R < nr; R++)
        for (uint64_t r = R * rb; r < g->rows && r < (R + 1) * rb; r++)
            for (uint64_t t = g->ptr[r]; t < g->ptr[r + 1]; t++) {
                uint64_t c = g->col[t] / cb;
                if (stamp[c] == R + 1)
                    continue;
                stamp[c] = R + 1;
                uint64_t v = w ? (c < nw ? w[c] : 0) : 1;
                sum += v;
                if (per)
                    per[R] += v;
            }
    return sum;
}

/* The outer tiles the keys would enumerate (X's and P's coarse grids
 * meeting in a k block; coarse_cols' tiles, counted without building
 * them): per k block, P's distinct f blocks; per o block, X's distinct k
 * blocks. 0 when out of memory (*rc set). */
static uint64_t outer_total(const tessel_allocator *a, const across *ac, int *rc)
{
    const stat_grid *x = ac->x, *p = ac->p;
    uint64_t nkb = (p->rows + ac->blk[RK] - 1) / ac->blk[RK];
    uint64_t ncb = (x->cols + ac->blk[RK] - 1) / ac->blk[RK];
    uint64_t nfb = (p->cols + ac->blk[RF] - 1) / ac->blk[RF];
    uint64_t ns = (nfb > ncb ? nfb : ncb) + 1;
    uint64_t *per = stat_zeroed(a, nkb + 1, sizeof(uint64_t));
    uint64_t *stamp = stat_zeroed(a, ns, sizeof(uint64_t));
    uint64_t total = 0;
    if (per && stamp) {
        block_pairs(p, ac->blk[RK], ac->blk[RF], NULL, 0, stamp, per);
        memset(stamp, 0, ns * sizeof(uint64_t));
        total = block_pairs(x, ac->blk[RO], ac->blk[RK], per, nkb, stamp, NULL);
    } else
        *rc = TESSEL_ENOMEM;
    tessel_dealloc(a, per);
    tessel_dealloc(a, stamp);
    return total;
}

/* The effectual outer tiles in key order, in chunks of about
 * NESTED_ACROSS_CHUNK keys, through scan_keys. */
static int scan_outer(const tessel_allocator *a, const across *ac, uint64_t total, uint64_t cf,
                      nested_run *runs)
{
    uint64_t maxkey = 0;
    for (unsigned r = 0; r < 3; r++) {
        uint64_t most = 0;
        for (uint64_t q = 0; q < ac->nblk[r]; q++)
            most = ac->part[r][q] > most ? ac->part[r][q] : most;
        maxkey += most;
    }
    unsigned sh = 0;
    while (sh < 63 && (maxkey >> sh) >= NESTED_ACROSS_BUCKETS)
        sh++;
    uint64_t nb = (maxkey >> sh) + 1, cap = total;
    uint64_t *hist = NULL;
    if (total > NESTED_ACROSS_CHUNK) {
        if (!(hist = stat_zeroed(a, nb, sizeof(uint64_t))))
            return TESSEL_ENOMEM;
        outer_enum(ac, NULL, 0, hist, sh, 0, 0);
        cap = 0; /* the largest chunk */
        for (uint64_t b = 0, sum = 0; b < nb; b++) {
            sum = sum + hist[b] > NESTED_ACROSS_CHUNK && sum ? hist[b] : sum + hist[b];
            cap = sum > cap ? sum : cap;
        }
    }
    uint64_t *keys = stat_zeroed(a, cap + 1, sizeof(uint64_t));
    uint64_t *scratch = stat_zeroed(a, cap + 1, sizeof(uint64_t));
    int rc = keys && scratch ? TESSEL_OK : TESSEL_ENOMEM;
    scan_state st;
    memset(&st, 0, sizeof(st));
    for (uint64_t lo = 0; !rc && lo < nb;) {
        uint64_t hi = nb, sum = 0;
        if (hist) /* consecutive buckets up to the chunk size, at least one */
            for (hi = lo; hi < nb && (hi == lo || sum + hist[hi] <= NESTED_ACROSS_CHUNK); hi++)
                sum += hist[hi];
        uint64_t m = outer_enum(ac, keys, cap, NULL, sh, lo, hi), most = 0;
        for (uint64_t q = 0; q < m; q++)
            most = keys[q] > most ? keys[q] : most;
        tessel_sort_u64(keys, scratch, m, most);
        scan_keys(ac, keys, m, cf, &st, runs);
        lo = hi;
    }
    tessel_dealloc(a, hist);
    tessel_dealloc(a, keys);
    tessel_dealloc(a, scratch);
    return rc;
}

/* Takes off runs[] the runs of X that continue across outer tiles. */
int stat_nested_merge_across(const nested *n, const stat_grid *x, const stat_grid *xt,
                             const stat_grid *p, unsigned xo, unsigned xf, uint64_t cf,
                             nested_run *runs)
{
    const tessel_allocator *a = n->e->alloc;
    if (!n->first_digit || !x->n || !p->n)
        return TESSEL_OK;
    across ac;
    memset(&ac, 0, sizeof(ac));
    ac.n = n;
    ac.x = x;
    ac.p = p;
    ac.ex[RO] = xo;
    ac.ex[RK] = XK;
    ac.ex[RF] = xf;
    ac.ext[RO] = x->rows;
    ac.ext[RK] = x->cols > p->rows ? x->cols : p->rows;
    ac.ext[RF] = p->cols;
    for (unsigned r = 0; r < 3; r++)
        ac.blk[r] = outer_edge(n, ac.ex[r], ac.ext[r]);
    level_order(&ac);
    int rc = TESSEL_OK;
    if (xt) { /* stat_grid_free(&ac.xt) below keeps the caller's arrays */
        ac.xt = *xt;
        ac.xt.borrowed = 1;
        ac.xt.occ = NULL; /* the caller's too */
    } else {
        rc = stat_grid_transpose_pattern(x, a, &ac.xt); /* its ptr and col only */
    }
    if (!rc && !(ac.live = stat_zeroed(a, ac.xt.rows + 1, sizeof(uint32_t))))
        rc = TESSEL_ENOMEM;
    for (uint64_t k = 0; !rc && k < ac.xt.rows && k < p->rows; k++)
        if (ac.xt.ptr[k] < ac.xt.ptr[k + 1] && p->ptr[k] < p->ptr[k + 1])
            ac.live[ac.nlive++] = (uint32_t)k;
    ac.wo = ((x->rows + ac.blk[RO] - 1) / ac.blk[RO] + 63) / 64;
    ac.wf = ((p->cols + ac.blk[RF] - 1) / ac.blk[RF] + 63) / 64;
    if (!rc)
        rc = candidates_init(a, &ac);
    /* the per-k bitsets serve outer_any only without the candidate ones */
    if (!rc && !ac.kbo &&
        (long double)ac.xt.rows * (long double)(ac.wo + ac.wf) <= (long double)NESTED_ACROSS_BITS) {
        ac.obits = stat_zeroed(a, ac.xt.rows * ac.wo + 1, sizeof(uint64_t));
        ac.fbits = stat_zeroed(a, ac.xt.rows * ac.wf + 1, sizeof(uint64_t));
        if (!ac.obits || !ac.fbits)
            rc = TESSEL_ENOMEM;
        for (uint64_t k = 0; !rc && k < ac.xt.rows; k++) {
            for (uint64_t t = ac.xt.ptr[k]; t < ac.xt.ptr[k + 1]; t++) {
                uint64_t b = ac.xt.col[t] / ac.blk[RO];
                ac.obits[k * ac.wo + b / 64] |= UINT64_C(1) << (b % 64);
            }
            for (uint64_t t = k < p->rows ? p->ptr[k] : 0; k < p->rows && t < p->ptr[k + 1]; t++) {
                uint64_t b = p->col[t] / ac.blk[RF];
                ac.fbits[k * ac.wf + b / 64] |= UINT64_C(1) << (b % 64);
            }
        }
    }
    if (!rc)
        rc = ends_init(a, &ac.xt, ac.blk[RO], &ac.xte);
    if (!rc)
        rc = ends_init(a, p, ac.blk[RF], &ac.pe);
    keyspace_init(&ac);
    if (!rc)
        rc = parts_init(a, &ac);
    uint64_t total = rc ? 0 : outer_total(a, &ac, &rc);
    unsigned ord[3];
    /* past the budget nothing is taken off (the runs stay upper bounds) */
    if (!rc && total && total <= NESTED_ACROSS_BUDGET) {
        long double combos = (long double)ac.nblk[RO] * (long double)ac.nblk[RK] *
                             (long double)ac.nblk[RF];
        long double strips = (long double)ac.nblk[RO] * (long double)ac.nblk[RF] * ac.wk;
        if (ac.kbo && nested_order(&ac, ord) &&
            (ord[2] == RK ? strips : combos) <=
                4.0L * (long double)total + (long double)NESTED_ENDS_MIN) {
            strip_ends se;
            memset(&se, 0, sizeof(se));
            int by_strip = ord[2] == RF && ac.ord[0] == RF;
            if (by_strip)
                rc = strip_init(a, &ac, &se);
            else if (ord[2] == RF && ac.ord[0] == RO) /* outer_end's row scans */
                rc = row_starts_init(a, &ac);
            if (!rc && !by_strip && ord[2] == RF)
                scan_nested_f(&ac, ord, cf, runs);
            else if (!rc)
                scan_nested(&ac, ord, cf, by_strip ? &se : NULL, runs);
            strip_free(a, &se);
        } else {
            rc = coarse_cols(a, x, ac.blk[RO], ac.blk[RK], &ac.xc);
            if (!rc && ac.ord[0] == RO)
                rc = row_starts_init(a, &ac);
            if (!rc)
                rc = coarse_cols(a, p, ac.blk[RK], ac.blk[RF], &ac.pc);
            if (!rc)
                rc = scan_outer(a, &ac, total, cf, runs);
        }
    }
    for (unsigned r = 0; r < 3; r++)
        tessel_dealloc(a, ac.part[r]);
    stat_grid_free(a, &ac.xt);
    tessel_dealloc(a, ac.live);
    tessel_dealloc(a, ac.obits);
    tessel_dealloc(a, ac.xks);
    tessel_dealloc(a, ac.fbits);
    stat_grid_free(a, &ac.xc);
    stat_grid_free(a, &ac.pc);
    ends_free(a, &ac.xte);
    tessel_dealloc(a, ac.kbo);
    tessel_dealloc(a, ac.kbf);
    ends_free(a, &ac.pe);
    return rc;
}

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
 * level-b grids coarsened to level b-1, sorted by key), each scanned over
 * the input's non-empty level-b tiles inside it with a binary search in
 * the partner's row: the input's tiles times the outer tiles of the
 * partner's row they meet, never the level-b effectual iterations. Past
 * NESTED_ACROSS_BUDGET outer tiles nothing is taken off (the runs stay
 * upper bounds, as before this file). */
#include <string.h>

#include "stat_closed.h"
#include "stat_nested.h"

/* Outer tiles (8 bytes of key each) beyond which the merges are left out. */
#define NESTED_ACROSS_BUDGET (UINT64_C(1) << 20)
/* Words of the per-k block bitsets beyond which outer_any searches instead. */
#define NESTED_ACROSS_BITS (UINT64_C(1) << 22)
/* Entries of a block-ends table (per row and outer block) allowed beyond
 * twice the grid's tiles; past both, span() searches instead. */
#define NESTED_ENDS_MIN (UINT64_C(1) << 20)

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
    uint64_t *live, nlive; /* the k where X's column and P's row both hold tiles */
    /* per k, bitsets of the outer o blocks its X column and the outer f
     * blocks its P row reach (NULL past NESTED_ACROSS_BITS: binary searches) */
    uint64_t *obits, *fbits, wo, wf;
    stat_grid xc, pc;     /* X and P at level b-1's tiles (columns only) */
    block_ends xte, pe;   /* X^T's rows in o blocks, P's rows in f blocks */
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
    if (size > (long double)NESTED_ENDS_MIN && size > 2.0L * (long double)g->n)
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
    uint64_t *stamp = stat_zeroed(a, out->cols + 1, sizeof(uint64_t));
    if (!out->ptr || !stamp) {
        tessel_dealloc(a, stamp);
        return TESSEL_ENOMEM;
    }
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
                        out->col[cnt] = c;
                    cnt++;
                }
            if (pass)
                tessel_sort_u64_inplace(&out->col[start], cnt - start, out->cols);
            else
                out->ptr[R + 1] = cnt;
        }
        if (!pass) {
            out->n = cnt;
            out->col = stat_zeroed(a, cnt + 1, sizeof(uint64_t));
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
    uint64_t lo = g->ptr[r], hi = g->ptr[r + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->col[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Level b-1's key of the outer tile whose first level-b tile is c (per
 * role), over the digits of levels 1 .. b-1 (as exact_loop_key). */
static uint64_t outer_key(const across *ac, const uint64_t *c)
{
    const boundary *bd = &ac->n->bd;
    uint64_t k = 0;
    for (unsigned i = 0; i < ac->n->first_digit; i++) {
        const digit *d = &bd->d[i];
        unsigned r = role_of(ac, d->x);
        uint64_t v = r < 3 ? c[r] / d->div : 0;
        if (!d->first)
            v %= d->radix;
        k = k * d->radix + v;
    }
    return k;
}

/* The inverse: the first level-b tile of the outer tile of key k. */
static void outer_decode(const across *ac, uint64_t k, uint64_t *c)
{
    const boundary *bd = &ac->n->bd;
    c[RO] = c[RK] = c[RF] = 0;
    for (unsigned i = ac->n->first_digit; i-- > 0;) {
        const digit *d = &bd->d[i];
        unsigned r = role_of(ac, d->x);
        if (r < 3)
            c[r] += (k % d->radix) * d->div;
        k /= d->radix;
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
static int span(const stat_grid *g, const block_ends *t, uint64_t r, uint64_t lo, uint64_t hi,
                uint64_t *first, uint64_t *last)
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

/* Whether the outer tile starting at c holds an effectual iteration: a k
 * (among those where both X's column and P's row hold tiles) whose column
 * of X and row of P both reach into it. */
static int outer_any(const across *ac, const uint64_t *c)
{
    uint64_t k1 = c[RK] + ac->blk[RK], lo = 0, hi = ac->nlive;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ac->live[mid] < c[RK])
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t ob = c[RO] / ac->blk[RO], fb = c[RF] / ac->blk[RF];
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
        for (uint64_t m = o0; m < o1 && !found; m++) {
            uint64_t o = last ? o0 + o1 - 1 - m : m;
            for (uint64_t t = lower(x, o, k0); t < x->ptr[o + 1] && x->col[t] < k1; t++) {
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
    for (uint64_t m = k0; m < k1; m++) {
        uint64_t k = last ? k0 + k1 - 1 - m : m, oa, oz, fa, fz;
        if (!span(&ac->xt, &ac->xte, k, o0, o1, &oa, &oz) ||
            !span(p, &ac->pe, k, f0, f1, &fa, &fz))
            continue;
        uint64_t w[3] = { last ? oz : oa, k, last ? fz : fa };
        if (better(ac, last, found, w, v)) {
            memcpy(v, w, sizeof(w));
            found = 1;
        }
        if (ac->ord[0] == RK)
            break;
    }
    return found;
}

/* Index of tile (r, c) of g, which must be non-empty. */
static uint64_t tile_index(const stat_grid *g, uint64_t r, uint64_t c)
{
    return lower(g, r, c);
}

/* The outer tiles effectual at level b-1 (X's and P's coarse grids meet),
 * as sorted keys into *keys; *nk their count, 0 with *keys NULL past the
 * budget. */
static int outer_keys(const tessel_allocator *a, const across *ac, uint64_t **keys, uint64_t *nk)
{
    const stat_grid *xc = &ac->xc, *pc = &ac->pc;
    uint64_t total = 0;
    *keys = NULL;
    *nk = 0;
    for (uint64_t t = 0; t < xc->n; t++) {
        uint64_t kb = xc->col[t];
        if (kb < pc->rows)
            total += pc->ptr[kb + 1] - pc->ptr[kb];
    }
    if (!total || total > NESTED_ACROSS_BUDGET)
        return TESSEL_OK;
    uint64_t *k = stat_zeroed(a, total, sizeof(uint64_t));
    uint64_t *scratch = stat_zeroed(a, total, sizeof(uint64_t));
    if (!k || !scratch) {
        tessel_dealloc(a, k);
        tessel_dealloc(a, scratch);
        return TESSEL_ENOMEM;
    }
    uint64_t m = 0, max = 0;
    for (uint64_t ob = 0; ob < xc->rows; ob++)
        for (uint64_t t = xc->ptr[ob]; t < xc->ptr[ob + 1]; t++) {
            uint64_t kb = xc->col[t];
            if (kb >= pc->rows)
                continue;
            for (uint64_t u = pc->ptr[kb]; u < pc->ptr[kb + 1]; u++) {
                uint64_t c[3] = { ob * ac->blk[RO], kb * ac->blk[RK], pc->col[u] * ac->blk[RF] };
                k[m] = outer_key(ac, c);
                max = k[m] > max ? k[m] : max;
                m++;
            }
        }
    tessel_sort_u64(k, scratch, m, max);
    tessel_dealloc(a, scratch);
    *keys = k;
    *nk = m;
    return TESSEL_OK;
}

/* Takes off runs[] the runs of X that continue across outer tiles. */
int stat_nested_merge_across(const nested *n, const stat_grid *x, const stat_grid *p,
                             unsigned xo, unsigned xf, uint64_t cf, double *runs)
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
    int rc = stat_grid_transpose(x, a, &ac.xt);
    if (!rc && !(ac.live = stat_zeroed(a, ac.xt.rows + 1, sizeof(uint64_t))))
        rc = TESSEL_ENOMEM;
    for (uint64_t k = 0; !rc && k < ac.xt.rows && k < p->rows; k++)
        if (ac.xt.ptr[k] < ac.xt.ptr[k + 1] && p->ptr[k] < p->ptr[k + 1])
            ac.live[ac.nlive++] = k;
    ac.wo = ((x->rows + ac.blk[RO] - 1) / ac.blk[RO] + 63) / 64;
    ac.wf = ((p->cols + ac.blk[RF] - 1) / ac.blk[RF] + 63) / 64;
    if (!rc && (long double)ac.xt.rows * (long double)(ac.wo + ac.wf) <=
                   (long double)NESTED_ACROSS_BITS) {
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
    if (!rc)
        rc = coarse_cols(a, x, ac.blk[RO], ac.blk[RK], &ac.xc);
    if (!rc)
        rc = coarse_cols(a, p, ac.blk[RK], ac.blk[RF], &ac.pc);
    uint64_t *keys = NULL, nk = 0;
    if (!rc)
        rc = outer_keys(a, &ac, &keys, &nk);
    /* lazily: an outer tile's ends only where it follows an effectual
     * outer tile on the same X tiles (the same o and k blocks), the only
     * place a run can continue */
    uint64_t pc[3] = { 0, 0, 0 }, v[3] = { 0, 0, 0 }, z[3] = { 0, 0, 0 };
    int have_prev = 0;
    for (uint64_t q = 0; !rc && q < nk; q++) {
        uint64_t c[3];
        outer_decode(&ac, keys[q], c);
        if (!have_prev || c[RO] != pc[RO] || c[RK] != pc[RK]) {
            if (outer_any(&ac, c)) {
                memcpy(pc, c, sizeof(pc));
                have_prev = 1;
            }
            continue;
        }
        if (!outer_end(&ac, c, 0, v))
            continue; /* no effectual iteration inside: nothing between */
        outer_end(&ac, pc, 1, z);
        memcpy(pc, c, sizeof(pc));
        /* the same tile across a coarse f block that the runs counted
         * apart (stat_nested_block): one run, one fill fewer */
        if (z[RO] == v[RO] && z[RK] == v[RK] &&
            (cf == UINT64_MAX ? 0 : z[RF] / cf) != (cf == UINT64_MAX ? 0 : v[RF] / cf))
            runs[tile_index(x, v[RO], v[RK])] -= 1;
    }
    tessel_dealloc(a, keys);
    stat_grid_free(a, &ac.xt);
    tessel_dealloc(a, ac.live);
    tessel_dealloc(a, ac.obits);
    tessel_dealloc(a, ac.fbits);
    stat_grid_free(a, &ac.xc);
    stat_grid_free(a, &ac.pc);
    ends_free(a, &ac.xte);
    ends_free(a, &ac.pe);
    return rc;
}

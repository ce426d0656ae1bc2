/* The merge walks of the nested stat closed form (stat_nested.c): runs of
 * an input's uses at boundary b that continue inside one level b-1 tile
 * because the iterations between them are all non-effectual. Each walk
 * covers one arrangement of level b's loops (walk_of); past its budget a
 * walk is not run and the runs stay upper bounds. */
#include <math.h>
#include <string.h>

#include "stat_nested.h"
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
uint64_t stat_nested_row_blocks(const stat_grid *g, uint64_t r, uint64_t cf)
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
        memo[k] = 1 + stat_nested_row_blocks(p, k, cf);
    return (double)(memo[k] - 1);
}

/* Level-b order (k, f, o): inside one level b-1 tile, all uses of X(o, k)
 * at one k follow each other when it is the only tile of column k in its
 * o block: one run per outer f block instead of one per use. Marks those
 * tiles' runs in runs[]. */
static int merge_column_alone(const nested *n, const nested_side *sd, nested_run *runs)
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
    uint64_t *one;           /* per row: 1 + the merges of a group of that row alone, 0 unknown */
    uint64_t *mark, stamp;   /* per row: the last sweep (stamp) that took it in (group_merges) */
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
    tessel_dealloc(a, fb->one);
    tessel_dealloc(a, fb->mark);
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
    fb->cnt = tessel_alloc_array(a, max_n + 1, sizeof(uint64_t)); /* set per group */
    fb->one = stat_zeroed(a, p->rows + 1, sizeof(uint64_t));
    fb->mark = stat_zeroed(a, p->rows + 1, sizeof(uint64_t));
    if (!fb->bits || !fb->lo || !fb->hi || !fb->wall || !fb->pre || !fb->cnt || !fb->one ||
        !fb->mark) {
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

/* d[w] = x[w] | y[w] for w < len (d may be x; y apart from both). */
static void or_words(uint64_t *d, const uint64_t *x, const uint64_t *restrict y, uint64_t len)
{
    for (uint64_t w = 0; w < len; w++)
        d[w] = x[w] | y[w];
}

/* Per word w of a group's span (e its union, walls the merge blocks'
 * first f over the same words): one past the last stop (an effectual f or
 * a wall) below word w, 0 when none. A run's L bit is carried up to the
 * next stop, so the carry into word w is the L bit (if any) at that stop. */
static void stop_before(const uint64_t *e, const uint64_t *walls, uint64_t span, uint64_t *stop)
{
    uint64_t last = 0;
    for (uint64_t w = 0; w < span; w++) {
        stop[w] = last;
        uint64_t st = e[w] | walls[w];
        if (st)
            last = w * 64 + 64 - (uint64_t)__builtin_clzll(st);
    }
}

#if defined(__GNUC__)
#define NESTED_INLINE __attribute__((always_inline)) inline
#else
#define NESTED_INLINE inline
#endif

/* How many f of F = r - pre (walls excluded) have their predecessor in
 * E (same merge block) in L = r - next, over words [w0, w1) of a span.
 * L's bits move one place up and are carried across the gaps of E (but
 * not over a wall) onto the next effectual f: the addition (l << 1) +
 * (~e & ~walls) + carry-in. A word whose F is empty holds no hit and is
 * skipped; else its carry in is L's bit at the last stop below it
 * (stop_before), which is what a carry through every word brings. */
static NESTED_INLINE uint64_t first_hits(const uint64_t *r, const uint64_t *next, const uint64_t *e,
                           const uint64_t *pre, const uint64_t *walls, const uint64_t *stop,
                           uint64_t w0, uint64_t w1)
{
    uint64_t cnt = 0;
    for (uint64_t w = w0; w < w1; w++) {
        uint64_t f = r[w] & ~pre[w] & ~walls[w];
        if (!f)
            continue;
        uint64_t in = 0, at = stop[w];
        if (at) {
            uint64_t p = at - 1, pw = p / 64;
            in = (r[pw] & ~next[pw]) >> (p % 64) & 1;
        }
        uint64_t l = r[w] & ~next[w];
        uint64_t s = (l << 1) + (~e[w] & ~walls[w]) + in;
        uint64_t hit = s & f;
        if (hit)
            cnt += stat_bits_set(hit);
    }
    return cnt;
}

/* Groups of at most this many entries take group_merges_small. */
#define NESTED_SMALL_GROUP 16
/* Groups of at most this many entries take merges_fixed. */
#define NESTED_FIXED_GROUP 8

/* group_merges_small's words for a group of exactly n entries (n a
 * constant at each call, at most NESTED_FIXED_GROUP): the loops over the
 * entries unroll and every entry's carry, count and suffix union stay in
 * registers. The hit test drops group_merges_small's `& e`: an entry's
 * first f lie in its row, which lies in e. Counts of entries whose k
 * is not alone (uniq 0) are computed and then dropped. */
static NESTED_INLINE void merges_fixed(const fbits *fb, const uint64_t *const *row,
                                       const unsigned char *uniq, const unsigned n,
                                       uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t carry[NESTED_FIXED_GROUP], in[NESTED_FIXED_GROUP], cnt[NESTED_FIXED_GROUP];
    for (unsigned m = 0; m < n; m++)
        carry[m] = in[m] = cnt[m] = 0;
    for (uint64_t w = lo; w < hi; w++) {
        uint64_t rv[NESTED_FIXED_GROUP], sfx[NESTED_FIXED_GROUP + 1];
        sfx[n] = 0;
        for (unsigned m = n; m-- > 0;) {
            rv[m] = row[m][w];
            sfx[m] = sfx[m + 1] | rv[m];
        }
        uint64_t wall = fb->wall[w], open = ~sfx[0] & ~wall, pre = wall;
        for (unsigned m = 0; m < n; m++) {
            uint64_t r = rv[m], l = r & ~sfx[m + 1], f = r & ~pre;
            uint64_t x = (l << 1) | in[m];
            in[m] = l >> 63;
            uint64_t s1 = x + open, s2 = s1 + carry[m];
            carry[m] = (uint64_t)(s1 < x) | (uint64_t)(s2 < s1);
            uint64_t hit = s2 & f;
            if (hit)
                cnt[m] += stat_bits_set(hit);
            pre |= r;
        }
    }
    for (unsigned m = 0; m < n; m++)
        out[m] = uniq[m] ? cnt[m] : 0;
}

/* group_merges for a small group, word by word: per word of the group's
 * span the entries' suffix unions and running union are a few values,
 * and each entry keeps its own carry (first_hits' count over the whole
 * span, the same: outside an entry's words its row is 0, so no carry
 * starts there and no f is hit). Groups of a fixed size up to
 * NESTED_FIXED_GROUP take merges_fixed. */
static void group_merges_small(fbits *fb, const uint64_t *k, const unsigned char *uniq,
                               uint64_t n, uint64_t lo, uint64_t hi)
{
    const uint64_t *row[NESTED_SMALL_GROUP];
    uint64_t carry[NESTED_SMALL_GROUP], in[NESTED_SMALL_GROUP], cnt[NESTED_SMALL_GROUP];
    uint64_t rv[NESTED_SMALL_GROUP + 1], sfx[NESTED_SMALL_GROUP + 1];
    for (uint64_t m = 0; m < n; m++)
        row[m] = &fb->bits[k[m] * fb->wf];
    switch (n) {
    case 1: merges_fixed(fb, row, uniq, 1, lo, hi, fb->cnt); return;
    case 2: merges_fixed(fb, row, uniq, 2, lo, hi, fb->cnt); return;
    case 3: merges_fixed(fb, row, uniq, 3, lo, hi, fb->cnt); return;
    case 4: merges_fixed(fb, row, uniq, 4, lo, hi, fb->cnt); return;
    case 5: merges_fixed(fb, row, uniq, 5, lo, hi, fb->cnt); return;
    case 6: merges_fixed(fb, row, uniq, 6, lo, hi, fb->cnt); return;
    case 7: merges_fixed(fb, row, uniq, 7, lo, hi, fb->cnt); return;
    case 8: merges_fixed(fb, row, uniq, 8, lo, hi, fb->cnt); return;
    default: break;
    }
    for (uint64_t m = 0; m < n; m++)
        carry[m] = in[m] = cnt[m] = 0;
    sfx[n] = 0;
    for (uint64_t w = lo; w < hi; w++) {
        for (uint64_t m = n; m-- > 0;) {
            rv[m] = row[m][w];
            sfx[m] = sfx[m + 1] | rv[m];
        }
        uint64_t e = sfx[0], open = ~e & ~fb->wall[w], pre = 0;
        for (uint64_t m = 0; m < n; m++) {
            uint64_t r = rv[m];
            if (uniq[m]) {
                uint64_t l = r & ~sfx[m + 1], f = r & ~pre;
                uint64_t x = (l << 1) | in[m];
                in[m] = l >> 63;
                uint64_t s1 = x + open, s2 = s1 + carry[m];
                carry[m] = (uint64_t)(s1 < x) | (uint64_t)(s2 < s1);
                uint64_t hit = s2 & e & ~fb->wall[w] & f;
                if (hit)
                    cnt[m] += stat_bits_set(hit);
            }
            pre |= r;
        }
    }
    for (uint64_t m = 0; m < n; m++)
        fb->cnt[m] = cnt[m];
}

/* group_merges for a group past NESTED_SMALL_GROUP entries, over words
 * [lo, hi), with the suffix union after every entry. */
static int group_merges_suffixes(const tessel_allocator *a, fbits *fb, const uint64_t *k,
                                 const unsigned char *uniq, uint64_t n, uint64_t lo, uint64_t hi)
{
    uint64_t span = hi - lo;
    if (fbits_reserve(a, fb, (n + 2) * span))
        return TESSEL_ENOMEM;
    uint64_t *suf = fb->suf, *stop = &suf[(n + 1) * span];
    memset(&suf[n * span], 0, span * sizeof(uint64_t));
    for (uint64_t m = n; m-- > 0;)
        or_words(&suf[m * span], &suf[(m + 1) * span], &fb->bits[k[m] * fb->wf + lo], span);
    stop_before(suf, fb->wall + lo, span, stop);
    memset(fb->pre, 0, span * sizeof(uint64_t));
    for (uint64_t m = 0; m < n; m++) {
        /* only the entry's own words: its F and L lie there */
        uint64_t off = fb->lo[k[m]] - lo, len = fb->hi[k[m]] - fb->lo[k[m]];
        if (fb->hi[k[m]] <= fb->lo[k[m]])
            continue;
        const uint64_t *r = &fb->bits[k[m] * fb->wf + lo];
        if (uniq[m])
            fb->cnt[m] = first_hits(r, &suf[(m + 1) * span], suf, fb->pre, fb->wall + lo, stop,
                                    off, off + len);
        or_words(fb->pre + off, fb->pre + off, r + off, len);
    }
    return TESSEL_OK;
}

/* group_merges for a group past NESTED_SMALL_GROUP entries, over words
 * [lo, hi). Only an entry whose k is alone (uniq) is counted, and it needs
 * the union of the entries after it (L), of those before it (F) and of
 * all (E). Entries of one k share their row, so each sweep takes a row in
 * once (fb->mark), the first time it meets its k: the unions are the same
 * sets as a union over every entry. The backward sweep keeps one suffix
 * per counted entry (not one per entry); the forward sweep stops after
 * the last counted entry. A group with no counted entry costs nothing. */
static int group_merges_large(const tessel_allocator *a, fbits *fb, const uint64_t *k,
                              const unsigned char *uniq, uint64_t n, uint64_t lo, uint64_t hi)
{
    uint64_t nu = 0, last = 0;
    for (uint64_t m = 0; m < n; m++)
        if (uniq[m]) {
            nu++;
            last = m;
        }
    if (!nu)
        return TESSEL_OK;
    if (2 * nu > n) /* few repeated k: a suffix per entry costs less than the copies */
        return group_merges_suffixes(a, fb, k, uniq, n, lo, hi);
    uint64_t span = hi - lo;
    if (fbits_reserve(a, fb, (nu + 2) * span))
        return TESSEL_ENOMEM;
    /* e: the running union, E at the end; nxt: the counted entries'
     * suffixes, the last counted entry's first */
    uint64_t *e = fb->suf, *stop = &e[span], *nxt = &e[2 * span];
    memset(e, 0, span * sizeof(uint64_t));
    uint64_t st = ++fb->stamp, q = 0;
    for (uint64_t m = n; m-- > 0;) {
        if (uniq[m])
            memcpy(&nxt[q++ * span], e, span * sizeof(uint64_t));
        if (fb->mark[k[m]] == st || fb->hi[k[m]] <= fb->lo[k[m]])
            continue;
        fb->mark[k[m]] = st;
        uint64_t off = fb->lo[k[m]] - lo, len = fb->hi[k[m]] - fb->lo[k[m]];
        or_words(e + off, e + off, &fb->bits[k[m] * fb->wf + fb->lo[k[m]]], len);
    }
    stop_before(e, fb->wall + lo, span, stop);
    memset(fb->pre, 0, span * sizeof(uint64_t));
    st = ++fb->stamp;
    for (uint64_t m = 0; m <= last; m++) {
        if (uniq[m])
            q--; /* nxt[q]: the suffix after entry m */
        /* only the entry's own words: its F and L lie there */
        uint64_t off = fb->lo[k[m]] - lo, len = fb->hi[k[m]] - fb->lo[k[m]];
        if (fb->hi[k[m]] <= fb->lo[k[m]])
            continue;
        const uint64_t *r = &fb->bits[k[m] * fb->wf + lo];
        if (uniq[m])
            fb->cnt[m] = first_hits(r, &nxt[q * span], e, fb->pre, fb->wall + lo, stop, off,
                                    off + len);
        if (fb->mark[k[m]] != st) {
            fb->mark[k[m]] = st;
            or_words(fb->pre + off, fb->pre + off, r + off, len);
        }
    }
    return TESSEL_OK;
}

/* One group of n entries (P rows k[m]; uniq[m]: k[m] occurs once in the
 * group): the merges on each entry into fb->cnt[m]. */
static int group_merges(const tessel_allocator *a, fbits *fb, const uint64_t *k,
                        const unsigned char *uniq, uint64_t n)
{
    /* a group of one entry depends on its row alone (the merges between
     * consecutive f of the row in one merge block): computed once per row */
    if (n == 1 && uniq[0] && fb->one[k[0]]) {
        fb->cnt[0] = fb->one[k[0]] - 1;
        return TESSEL_OK;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint64_t m = 0; m < n; m++) {
        fb->cnt[m] = 0;
        lo = fb->lo[k[m]] < lo ? fb->lo[k[m]] : lo;
        hi = fb->hi[k[m]] > hi ? fb->hi[k[m]] : hi;
    }
    if (lo >= hi)
        return TESSEL_OK;
    if (n <= NESTED_SMALL_GROUP) {
        group_merges_small(fb, k, uniq, n, lo, hi);
        if (n == 1 && uniq[0])
            fb->one[k[0]] = fb->cnt[0] + 1;
        return TESSEL_OK;
    }
    return group_merges_large(a, fb, k, uniq, n, lo, hi);
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
    /* written before read: entries 0 .. n-1 only */
    g->k = tessel_alloc_array(a, cap + 1, sizeof(uint64_t));
    g->t = tessel_alloc_array(a, cap + 1, sizeof(uint64_t));
    g->uniq = tessel_alloc_array(a, cap + 1, sizeof(unsigned char));
    return g->k && g->t && g->uniq ? TESSEL_OK : TESSEL_ENOMEM;
}

/* Level-b order (o, f, k): inside one level b-1 tile, row o of X meets
 * the effectual f in turn, each over its effectual k in the outer k
 * block; when the last k of one f is the first k of the next, X(o, k)
 * stays resident (one-level IJK's reuse, stat_walk_pairs). A group is one
 * row's tiles in one k block (all k distinct). Takes those merges off
 * runs[]. */
static int merge_row_walk(const nested *n, const nested_side *sd, nested_run *runs)
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
static int merge_outer_walk(const nested *n, const nested_side *sd, nested_run *runs)
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
    uint64_t *next = tessel_alloc_array(a, x->n + 1, sizeof(uint64_t)); /* set as linked */
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
    return stat_grid_lower(g, r, c);
}

/* Level-b order (f, k, o): inside one level b-1 tile, each f walks its
 * effectual k, each over the X tiles of column k; when one f ends on the
 * X tile the next f starts on (the same k, whose column holds one tile in
 * the o block), it stays resident (one-level IKJ's reuse of B between
 * rows, input_b_outer). Takes those merges off runs[]. Cost: the
 * partner's tiles times X's tiles per column, so only where P's bitsets
 * over f would not fit (merge_column_walk); same result as the groups. */
static int merge_column_lists(const nested *n, const nested_side *sd, nested_run *runs)
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
    rc = stat_grid_transpose_pattern(x, a, &xt);
    if (!rc)
        rc = stat_grid_transpose_pattern(p, a, &pt);
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
static int merge_column_groups(const nested *n, const nested_side *sd, const stat_grid *xt,
                               nested_run *runs)
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
    uint64_t *link = tessel_alloc_array(a, 2 * x->n + 1, sizeof(uint64_t)); /* set as linked */
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
static int merge_column_walk(const nested *n, const nested_side *sd, nested_run *runs)
{
    const tessel_allocator *a = n->e->alloc;
    const stat_grid *x = sd->x, *p = sd->p;
    if ((long double)p->rows * (long double)((p->cols + 63) / 64) > (long double)NESTED_FBITS_BUDGET)
        return merge_column_lists(n, sd, runs);
    stat_grid xt;
    memset(&xt, 0, sizeof(xt));
    int rc = stat_grid_transpose_pattern(x, a, &xt);
    if (!rc)
        rc = merge_column_groups(n, sd, &xt, runs);
    stat_grid_free(a, &xt);
    return rc;
}

/* Whether the group walks (row, outer) fit their budget: P's rows as
 * bitsets over f (fbits_init: K rows of fcols / 64 words) within
 * NESTED_FBITS_BUDGET, and their word operations, at most X's tiles times
 * a P row's words (each entry of a group reads its span), within
 * NESTED_BITSET_BUDGET. Before, orows x fcols x K / 64: the cost of the
 * bitset walks that the groups replaced, which left p2p-Gnutella24's REG
 * A and B fills as upper bounds at 3 levels (+5.96 %). */
static int groups_fit(const nested *n, unsigned xo, uint64_t fcols, uint64_t K)
{
    long double wf = (long double)((fcols + 63) / 64);
    long double tiles = (long double)(xo == XI ? n->a.n : n->b.n);
    return (long double)K * wf <= (long double)NESTED_FBITS_BUDGET &&
           tiles * wf <= (long double)NESTED_BITSET_BUDGET;
}

/* The merge walk for X[o, k] (orows rows) against P[k, f] (fcols
 * columns), K the extent of k: where level b's own loop over f splits
 * X's runs (cf == 1), by level b's order; WALK_NONE also where the walk
 * would cost more than its budget and the runs stay upper bounds. */
int stat_nested_walk_of(const nested *n, unsigned xo, unsigned xf, uint64_t cf, uint64_t orows,
                   uint64_t fcols, uint64_t K)
{
    int po = level_pos(n, xo), pf = level_pos(n, xf), pk = level_pos(n, XK);
    uint64_t cb_o = outer_block(n, xo), cb_k = outer_block(n, XK);
    long double nob = cb_o == UINT64_MAX ? 1 : (long double)((orows + cb_o - 1) / cb_o);
    long double nkb = cb_k == UINT64_MAX ? 1 : (long double)((K + cb_k - 1) / cb_k);
    int bits_fit = groups_fit(n, xo, fcols, K);
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

/* Runs of X's tiles merged inside one level b-1 tile by walk w. */
static int merge_walk(const nested *n, const nested_side *sd, int w, nested_run *runs)
{
    if (w == WALK_ALONE)
        return merge_column_alone(n, sd, runs);
    if (w == WALK_ROW)
        return merge_row_walk(n, sd, runs);
    if (w == WALK_OUTER)
        return merge_outer_walk(n, sd, runs);
    if (w == WALK_COLUMN)
        return merge_column_walk(n, sd, runs);
    return TESSEL_OK;
}

/* The key of what walk w (WALK_ROW or WALK_OUTER) reads: the workload's
 * roles, the side, X's and P's grids (the derived edges of A and B on the
 * statistics' base grid, with the grids' shapes) and the level b-1 blocks
 * it reads, cb_o only for WALK_OUTER (merge_row_walk reads cb_k and cb_f).
 * Not level b-1's other edges, its order or the tiles' prices. */
static unsigned walk_key(const nested *n, const nested_side *sd, int w, uint64_t *key)
{
    const stat_grid *x = sd->x, *p = sd->p;
    unsigned len = 0;
    key[len++] = (uint64_t)w;
    key[len++] = (uint64_t)n->e->kind;
    for (unsigned i = 0; i < 2; i++)
        key[len++] = n->e->in[i].x[0] | (uint64_t)n->e->in[i].x[1] << 32;
    key[len++] = sd->op | (uint64_t)sd->xo << 16 | (uint64_t)sd->xf << 32;
    key[len++] = sd->cf;
    key[len++] = n->ea[0];
    key[len++] = n->ea[1];
    key[len++] = n->eb[0];
    key[len++] = n->eb[1];
    key[len++] = x->rows;
    key[len++] = x->cols;
    key[len++] = x->n;
    key[len++] = p->rows;
    key[len++] = p->cols;
    key[len++] = p->n;
    key[len++] = w == WALK_OUTER ? outer_block(n, sd->xo) : 0;
    key[len++] = outer_block(n, XK);
    key[len++] = outer_block(n, sd->xf);
    return len;
}

/* merge_walk, whose counts are taken from n->rec->walks where a point
 * before walked the same (walk_key), and kept there otherwise. Only the
 * walks that take each tile's merges off once (row, outer): the same
 * whole numbers off the same tiles. */
int stat_nested_merge_inside(const nested *n, const nested_side *sd, int w, nested_run *runs)
{
    stat_nested_cache *c = n->rec ? n->rec->walks : NULL;
    uint64_t key[NESTED_WALK_KEY_MAX];
    if (!c || (w != WALK_ROW && w != WALK_OUTER))
        return merge_walk(n, sd, w, runs);
    unsigned len = walk_key(n, sd, w, key);
    uint64_t tiles = sd->x->n;
    if (stat_nested_walk_apply(c, key, len, runs, tiles))
        return TESSEL_OK;
    const tessel_allocator *a = n->e->alloc;
    nested_run *before = tessel_alloc_array(a, tiles + 1, sizeof(nested_run));
    if (before) /* out of memory: walked, not kept */
        memcpy(before, runs, tiles * sizeof(nested_run));
    int rc = merge_walk(n, sd, w, runs);
    if (!rc && before)
        stat_nested_walk_keep(c, key, len, before, runs, tiles);
    tessel_dealloc(a, before);
    return rc;
}

/* Seeded synthetic sparse matrices (GSL's MT19937): the same parameters and
 * seed give the same matrix on every machine.
 *
 *   uniform    exactly nnz distinct positions: draw linear positions, sort,
 *              drop repeats, draw only the shortfall again and merge; above
 *              half of the positions the excluded set is drawn instead
 *   banded     each position with |i - j| <= bandwidth kept with `density`
 *   blockdiag  each position of the diagonal blocks kept with `density`
 *   rmat       nnz R-MAT draws (a, b, c, d) on the smallest power-of-two
 *              square covering the matrix, conditioned on landing inside;
 *              repeated draws become one entry, so nnz is an upper bound
 *   nm         every aligned group of m columns of a row holds exactly n
 *   clustered  overlapping cliques with power-law sizes whose members are
 *              drawn by Zipf popularity, plus a tail of popular-popular
 *              edges; symmetric, repeats merged (co-authorship-like)
 *
 * Bernoulli selections jump over geometric gaps, so their cost follows the
 * kept entries (plus one step per row), not the positions considered.
 * Nothing here allocates in proportion to rows * cols.
 *
 * GSL reports errors through a process-wide handler whose default aborts.
 * This file never gives GSL a chance to fail, so it needs no handler: the
 * generator is built here (gsl_rng_alloc would call the handler on a
 * failed malloc), and only draws that cannot fail are used (the type's get
 * and gsl_rng_uniform_pos). Seeds are 32-bit; as in GSL, seed 0 gives the
 * same stream as MT19937's default seed 4357. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "builder_internal.h"
#include "generate_internal.h"

/* ------------------------------------------------------------------ */
/* The random source. */

/* gsl_rng_alloc calls GSL's error handler (abort by default) when malloc
 * fails, and bypasses the tessel allocator. The struct is public in
 * gsl_rng.h, so it is assembled here the way gsl_rng_alloc does it. */
gsl_rng *tessel_rng_create(const tessel_allocator *a, uint64_t seed)
{
    const gsl_rng_type *type = gsl_rng_mt19937;
    gsl_rng *r = tessel_alloc(a, sizeof(*r));
    if (!r)
        return NULL;
    r->type = type;
    r->state = tessel_alloc(a, type->size);
    if (!r->state) {
        tessel_dealloc(a, r);
        return NULL;
    }
    memset(r->state, 0, type->size);
    gsl_rng_set(r, (unsigned long)seed);
    return r;
}

void tessel_rng_free(const tessel_allocator *a, gsl_rng **rp)
{
    if (!*rp)
        return;
    tessel_dealloc(a, (*rp)->state);
    tessel_dealloc(a, *rp);
    *rp = NULL;
}

/* MT19937 yields every 32-bit value (min 0, max 2^32 - 1). Calling the
 * type's get directly is what gsl_rng_get does when GSL is compiled with
 * HAVE_INLINE; it saves a call per draw on the R-MAT hot path. */
static uint64_t draw_u32(const gsl_rng *r)
{
    return (uint64_t)(r->type->get(r->state) & 0xffffffffu);
}

/* Uniform in [0, n), n >= 1: mask to the next power of two and reject, so
 * there is no modulo bias and fewer than two tries on average. */
static uint64_t draw_below(const gsl_rng *r, uint64_t n)
{
    uint64_t mask = n - 1;
    if (mask == 0)
        return 0;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    for (;;) {
        uint64_t x = draw_u32(r);
        if (mask > UINT32_MAX)
            x = (x << 32) | draw_u32(r);
        x &= mask;
        if (x < n)
            return x;
    }
}

/* ------------------------------------------------------------------ */
/* Distinct samples: k different values of [0, n), ascending. */

static uint64_t drop_repeats(uint64_t *v, uint64_t n)
{
    if (n == 0)
        return 0;
    uint64_t out = 1;
    for (uint64_t k = 1; k < n; k++)
        if (v[k] != v[out - 1])
            v[out++] = v[k];
    return out;
}

/* Union of two ascending, repeat-free runs into dst; returns its length. */
static uint64_t merge_distinct(const uint64_t *x, uint64_t nx, const uint64_t *y, uint64_t ny,
                               uint64_t *dst)
{
    uint64_t i = 0, j = 0, out = 0;
    while (i < nx && j < ny) {
        if (x[i] < y[j])
            dst[out++] = x[i++];
        else if (y[j] < x[i])
            dst[out++] = y[j++];
        else {
            dst[out++] = x[i++];
            j++;
        }
    }
    while (i < nx)
        dst[out++] = x[i++];
    while (j < ny)
        dst[out++] = y[j++];
    return out;
}

/* k <= n/2 distinct values of [0, n). buf and other hold k words each; the
 * result is in *buf (the two may have been swapped). Independent draws,
 * with repeats removed, form a uniformly random set given their number, so
 * drawing only the shortfall again and taking the union keeps the result
 * uniform over all k-subsets. Each round's shortfall is at most about
 * k/n <= 1/2 of the previous one; the old set is merged, not re-sorted. */
static void sample_distinct(const gsl_rng *r, uint64_t n, uint64_t k, uint64_t **buf,
                            uint64_t **other)
{
    uint64_t have = 0;
    while (have < k) {
        uint64_t want = k - have;
        uint64_t *batch = *buf + have;
        for (uint64_t i = 0; i < want; i++)
            batch[i] = draw_below(r, n);
        tessel_sort_u64(batch, *other, want, n - 1);
        uint64_t got = drop_repeats(batch, want);
        if (have == 0) {
            have = got;
            continue;
        }
        have = merge_distinct(*buf, have, batch, got, *other);
        uint64_t *swap = *buf;
        *buf = *other;
        *other = swap;
    }
}

/* ------------------------------------------------------------------ */

typedef struct generator {
    const tessel_allocator *alloc;
    const tessel_gen_params *p;
    gsl_rng *rng;
    tessel_coo_builder *b;
} generator;

/* A value is drawn right after its position, so the stream of draws (and
 * the matrix) depends only on the parameters and the seed. */
static int emit(generator *g, uint64_t i, uint64_t j)
{
    uint32_t c[2] = { (uint32_t)i, (uint32_t)j };
    double v = 1.0;
    if (g->p->values) /* (2^32 - x) / 2^32 = 1 - gsl_rng_uniform(): in (0, 1] */
        v = (4294967296.0 - (double)draw_u32(g->rng)) / 4294967296.0;
    return tessel_coo_builder_add(g->b, c, v);
}

/* Ascending linear positions row * cols + col, each emitted once. */
static int emit_linear(generator *g, const uint64_t *pos, uint64_t count)
{
    uint64_t cols = g->p->cols;
    int rc = tessel_coo_builder_reserve(g->b, count);
    for (uint64_t k = 0; k < count && !rc; k++)
        rc = emit(g, pos[k] / cols, pos[k] % cols);
    return rc;
}

static int alloc_pair(generator *g, uint64_t count, uint64_t **x, uint64_t **y)
{
    *x = tessel_alloc_array(g->alloc, count, sizeof(uint64_t));
    *y = tessel_alloc_array(g->alloc, count, sizeof(uint64_t));
    if (*x && *y)
        return TESSEL_OK;
    tessel_dealloc(g->alloc, *x);
    tessel_dealloc(g->alloc, *y);
    *x = *y = NULL;
    return TESSEL_ENOMEM;
}

static int gen_uniform(generator *g)
{
    const tessel_gen_params *p = g->p;
    uint64_t positions = p->rows * p->cols;
    /* Drawing more than half of the positions would spend most draws on
     * repeats; choosing the excluded ones is then cheaper, and walking all
     * positions costs at most twice the entries. */
    int complement = p->nnz > positions - p->nnz;
    uint64_t count = complement ? positions - p->nnz : p->nnz;
    if (count == 0 && !complement)
        return TESSEL_OK;
    uint64_t *pos = NULL, *scratch = NULL;
    if (count && alloc_pair(g, count, &pos, &scratch))
        return TESSEL_ENOMEM;
    if (count)
        sample_distinct(g->rng, positions, count, &pos, &scratch);
    tessel_dealloc(g->alloc, scratch);
    int rc;
    if (!complement) {
        rc = emit_linear(g, pos, count);
    } else {
        rc = tessel_coo_builder_reserve(g->b, p->nnz);
        uint64_t next = 0, x = 0;
        for (uint64_t i = 0; i < p->rows && !rc; i++)
            for (uint64_t j = 0; j < p->cols && !rc; j++, x++) {
                if (next < count && pos[next] == x)
                    next++;
                else
                    rc = emit(g, i, j);
            }
    }
    tessel_dealloc(g->alloc, pos);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Bernoulli selection over one column interval per row. */

typedef struct interval {
    uint64_t lo, hi; /* columns [lo, hi); lo >= cols means this and all later rows are empty */
} interval;

static interval band_row(const tessel_gen_params *p, uint64_t w, uint64_t i)
{
    interval iv = { i > w ? i - w : 0, gen_min_u64(p->cols, i + w + 1) };
    return iv;
}

static interval block_row(const tessel_gen_params *p, uint64_t bs, uint64_t i)
{
    uint64_t lo = i / bs * bs;
    interval iv = { lo, gen_min_u64(p->cols, lo + bs) };
    return iv;
}

/* Positions skipped before the next kept one: geometric with success
 * probability `density`, by inversion. Saturates instead of wrapping. */
static uint64_t draw_gap(const gsl_rng *r, double log_miss)
{
    double gap = floor(log(gsl_rng_uniform_pos(r)) / log_miss);
    return gap >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)gap;
}

/* Walks the rows' intervals as one sequence of positions, so a gap may
 * cross rows; density 1 keeps everything without drawing. */
static int gen_bernoulli(generator *g, uint64_t expected, uint64_t positions)
{
    const tessel_gen_params *p = g->p;
    int dense = p->density >= 1;
    double log_miss = dense ? 0 : log1p(-p->density);
    /* Room for all but freak counts, so the builder rarely regrows. */
    uint64_t room = dense ? positions
                          : gen_min_u64(positions, expected + 6 * (uint64_t)sqrt((double)expected) +
                                                   64);
    int rc = tessel_coo_builder_reserve(g->b, room);
    int banded = p->kind == TESSEL_GEN_BANDED;
    uint64_t w = banded ? gen_band_clamp(p) : gen_block_clamp(p);
    uint64_t gap = dense ? 0 : draw_gap(g->rng, log_miss);
    for (uint64_t i = 0; i < p->rows && !rc; i++) {
        interval iv = banded ? band_row(p, w, i) : block_row(p, w, i);
        if (iv.lo >= p->cols)
            break;
        uint64_t len = iv.hi - iv.lo, at = 0;
        while (!rc && gap < len - at) {
            at += gap;
            rc = emit(g, i, iv.lo + at);
            at++;
            gap = dense ? 0 : draw_gap(g->rng, log_miss);
        }
        gap -= len - at;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* R-MAT. Each of L levels picks a quadrant of the current square: a top
 * left, b top right, c bottom left, d bottom right; 2^L is the smallest
 * power of two >= max(rows, cols). Instead of drawing whole paths and
 * redrawing those that land outside rows x cols, each level picks from the
 * quadrant probabilities weighted by the chance that the rest of the path
 * stays inside. That is the same distribution (the chain rule applied to
 * the redraw loop), needs no wasted draws, and cannot loop forever when
 * the probabilities put (almost) no weight inside. */

typedef struct rmat_table {
    unsigned levels;
    /* A state says whether the row / column prefix still equals that of
     * the last row / column (bit 0 / bit 1): only then can a 1 bit leave
     * the matrix. inside[l][s]: chance that levels l.. stay inside. */
    double inside[RMAT_MAX_LEVELS + 1][4];
    /* A 32-bit draw x picks quadrant #{k < 3 : x >= limit[k]}: limit[k] is
     * 2^32 times the cumulative weight of quadrants 0..k. A quadrant
     * without weight repeats the previous limit and is never picked. */
    uint64_t limit[RMAT_MAX_LEVELS][4][3];
    unsigned char next[RMAT_MAX_LEVELS][4][4];
} rmat_table;

static void rmat_build(const tessel_gen_params *p, rmat_table *t)
{
    uint64_t last_r = p->rows - 1, last_c = p->cols - 1;
    uint64_t span = last_r > last_c ? last_r : last_c;
    unsigned levels = 0;
    while (levels < 64 && (span >> levels) != 0)
        levels++;
    t->levels = levels;
    double sum = p->a + p->b + p->c + p->d;
    const double q[4] = { p->a / sum, p->b / sum, p->c / sum, p->d / sum };
    for (unsigned s = 0; s < 4; s++)
        t->inside[levels][s] = 1;
    for (unsigned l = levels; l-- > 0;) {
        unsigned bit = levels - 1 - l;
        unsigned rb = (unsigned)(last_r >> bit) & 1u, cb = (unsigned)(last_c >> bit) & 1u;
        for (unsigned s = 0; s < 4; s++) {
            unsigned row_tight = s & 1u, col_tight = (s >> 1) & 1u;
            double cum[4], acc = 0;
            for (unsigned k = 0; k < 4; k++) {
                unsigned x = k >> 1, y = k & 1u; /* row bit, column bit */
                int allowed = !(row_tight && x > rb) && !(col_tight && y > cb);
                unsigned ns = (row_tight && x == rb ? 1u : 0u) | (col_tight && y == cb ? 2u : 0u);
                if (allowed)
                    acc += q[k] * t->inside[l + 1][ns];
                cum[k] = acc;
                t->next[l][s][k] = (unsigned char)ns;
            }
            t->inside[l][s] = acc;
            for (unsigned k = 0; k < 3; k++) {
                /* Unreachable states (acc == 0) get limits that are never used. */
                double f = acc > 0 ? ceil(cum[k] / acc * 4294967296.0) : 0;
                t->limit[l][s][k] = f >= 4294967296.0 ? 1ull << 32 : (uint64_t)f;
            }
        }
    }
}

/* One path of quadrant choices as a linear position row * cols + col. The
 * integer limits make this the same draw as comparing gsl_rng_uniform()
 * (x / 2^32 for MT19937) with the weights, without branches that the
 * processor would mispredict about half of the time. */
static uint64_t rmat_draw(const gsl_rng *r, const rmat_table *t, uint64_t cols)
{
    uint64_t i = 0, j = 0;
    unsigned s = 3;
    for (unsigned l = 0; l < t->levels; l++) {
        const uint64_t *lim = t->limit[l][s];
        uint64_t x = draw_u32(r);
        unsigned pick = (unsigned)(x >= lim[0]) + (unsigned)(x >= lim[1]) + (unsigned)(x >= lim[2]);
        i = (i << 1) | (pick >> 1);
        j = (j << 1) | (pick & 1u);
        s = t->next[l][s][pick];
    }
    return i * cols + j;
}

static int gen_rmat(generator *g, tessel_diag *diag)
{
    const tessel_gen_params *p = g->p;
    rmat_table t;
    rmat_build(p, &t);
    if (!(t.inside[0][3] > 0))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "a",
                               "R-MAT probabilities (%g, %g, %g, %g) put no weight inside %llu "
                               "x %llu",
                               p->a, p->b, p->c, p->d, (unsigned long long)p->rows,
                               (unsigned long long)p->cols);
    if (p->nnz == 0)
        return TESSEL_OK;
    uint64_t *pos = NULL, *scratch = NULL;
    if (alloc_pair(g, p->nnz, &pos, &scratch))
        return TESSEL_ENOMEM;
    for (uint64_t k = 0; k < p->nnz; k++)
        pos[k] = rmat_draw(g->rng, &t, p->cols);
    /* Repeats are merged here, not summed by the builder, so each entry
     * gets one value in (0, 1]. */
    tessel_sort_u64(pos, scratch, p->nnz, p->rows * p->cols - 1);
    tessel_dealloc(g->alloc, scratch);
    uint64_t count = drop_repeats(pos, p->nnz);
    int rc = emit_linear(g, pos, count);
    tessel_dealloc(g->alloc, pos);
    return rc;
}

/* ------------------------------------------------------------------ */
/* N:M. */

/* Exactly `keep` of the `width` (<= 64) columns from `base`, uniformly. */
static int nm_group_mask(generator *g, uint64_t i, uint64_t base, unsigned width, unsigned keep)
{
    unsigned pick = keep <= width - keep ? keep : width - keep;
    uint64_t bits = 0;
    for (unsigned got = 0; got < pick;) {
        uint64_t bit = 1ull << draw_below(g->rng, width);
        if (!(bits & bit)) {
            bits |= bit;
            got++;
        }
    }
    if (pick != keep)
        bits = ~bits & (width == 64 ? UINT64_MAX : (1ull << width) - 1);
    int rc = TESSEL_OK;
    for (unsigned k = 0; k < width && !rc; k++)
        if (bits >> k & 1u)
            rc = emit(g, i, base + k);
    return rc;
}

/* The same for wide groups: a distinct sample of the smaller of the kept
 * and the dropped sets; buffers hold at least that many words. */
static int nm_group_wide(generator *g, uint64_t i, uint64_t base, uint64_t width, uint64_t keep,
                         uint64_t **buf, uint64_t **other)
{
    int complement = keep > width - keep;
    uint64_t pick = complement ? width - keep : keep;
    if (pick)
        sample_distinct(g->rng, width, pick, buf, other);
    const uint64_t *s = *buf;
    int rc = TESSEL_OK;
    if (!complement) {
        for (uint64_t k = 0; k < pick && !rc; k++)
            rc = emit(g, i, base + s[k]);
        return rc;
    }
    uint64_t next = 0;
    for (uint64_t k = 0; k < width && !rc; k++) {
        if (next < pick && s[next] == k)
            next++;
        else
            rc = emit(g, i, base + k);
    }
    return rc;
}

static int gen_nm(generator *g, uint64_t expected)
{
    const tessel_gen_params *p = g->p;
    uint64_t widest = gen_min_u64(p->m, p->cols);
    uint64_t *buf = NULL, *other = NULL;
    if (widest > NM_MASK_WIDTH) {
        /* The smaller of kept and dropped sets is at most half a group. */
        uint64_t most = gen_min_u64(p->n, widest / 2);
        if (most && alloc_pair(g, most, &buf, &other))
            return TESSEL_ENOMEM;
    }
    int rc = tessel_coo_builder_reserve(g->b, expected);
    for (uint64_t i = 0; i < p->rows && !rc; i++)
        for (uint64_t base = 0; base < p->cols && !rc; base += p->m) {
            uint64_t width = gen_min_u64(p->m, p->cols - base);
            uint64_t keep = gen_min_u64(p->n, width);
            if (width <= NM_MASK_WIDTH)
                rc = nm_group_mask(g, i, base, (unsigned)width, (unsigned)keep);
            else
                rc = nm_group_wide(g, i, base, width, keep, &buf, &other);
        }
    tessel_dealloc(g->alloc, buf);
    tessel_dealloc(g->alloc, other);
    return rc;
}


/* ------------------------------------------------------------------ */
/* Clustered. Co-authorship graphs are unions of cliques (one per paper)
 * whose sizes are heavy-tailed and whose members are drawn from authors of
 * very unequal productivity, so a few hubs sit in many cliques; social
 * graphs add edges between popular vertices. In A A such a graph has many
 * products landing on one output element, concentrated in the hubs' rows
 * (the case the stat estimator's output sample must survive, issue 18). */

/* Cumulative weights (x + 1)^-e over x = 0..n-1 (Zipf), for inversion. */
static double *zipf_table(const tessel_allocator *a, uint64_t n, double e, uint64_t first)
{
    double *cum = tessel_alloc_array(a, n, sizeof(double));
    if (!cum)
        return NULL;
    double s = 0;
    for (uint64_t x = 0; x < n; x++) {
        s += pow((double)(x + first), -e);
        cum[x] = s;
    }
    return cum;
}

static uint64_t table_draw(const gsl_rng *r, const double *cum, uint64_t n)
{
    double u = gsl_rng_uniform_pos(r) * cum[n - 1];
    uint64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cum[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct clustered_state {
    double *size_cum, *pop_cum;
    uint32_t *vertex; /* popularity rank -> vertex id */
    uint64_t *members;
} clustered_state;

static void clustered_free(generator *g, clustered_state *c)
{
    tessel_dealloc(g->alloc, c->size_cum);
    tessel_dealloc(g->alloc, c->pop_cum);
    tessel_dealloc(g->alloc, c->vertex);
    tessel_dealloc(g->alloc, c->members);
}

/* A vertex by popularity that is none of the first `have` members; after
 * a few repeats a uniform one, so large cliques on small graphs end. */
static uint64_t draw_member(generator *g, const clustered_state *c, uint64_t have)
{
    uint64_t n = g->p->rows;
    for (unsigned tries = 0;; tries++) {
        uint64_t v = tries < 16 ? c->vertex[table_draw(g->rng, c->pop_cum, n)]
                                : draw_below(g->rng, n);
        uint64_t m = 0;
        while (m < have && c->members[m] != v)
            m++;
        if (m == have)
            return v;
    }
}

/* Draws everything into positions (sizes first, so the total is known),
 * then sorts and merges repeats like R-MAT. */
static int gen_clustered(generator *g, tessel_diag *diag)
{
    const tessel_gen_params *p = g->p;
    uint64_t n = p->rows, smax = p->clique_max;
    clustered_state c = { 0 };
    c.size_cum = zipf_table(g->alloc, smax - 1, p->alpha, 2);
    c.pop_cum = zipf_table(g->alloc, n, p->skew, 1);
    c.vertex = tessel_alloc_array(g->alloc, n, sizeof(uint32_t));
    c.members = tessel_alloc_array(g->alloc, smax, sizeof(uint64_t));
    uint16_t *sizes = tessel_alloc_array(g->alloc, p->cliques + 1, sizeof(uint16_t));
    if (!c.size_cum || !c.pop_cum || !c.vertex || !c.members || !sizes) {
        clustered_free(g, &c);
        tessel_dealloc(g->alloc, sizes);
        return TESSEL_ENOMEM;
    }
    /* Fisher-Yates: the popular vertices land anywhere in the id order */
    for (uint64_t v = 0; v < n; v++)
        c.vertex[v] = (uint32_t)v;
    for (uint64_t v = n - 1; v > 0; v--) {
        uint64_t w = draw_below(g->rng, v + 1);
        uint32_t t = c.vertex[v];
        c.vertex[v] = c.vertex[w];
        c.vertex[w] = t;
    }
    double total = 2 * (double)p->tail;
    for (uint64_t q = 0; q < p->cliques; q++) {
        sizes[q] = (uint16_t)(2 + table_draw(g->rng, c.size_cum, smax - 1));
        total += (double)sizes[q] * (double)(sizes[q] - 1);
    }
    if (total > (double)GEN_MAX_ENTRIES) {
        clustered_free(g, &c);
        tessel_dealloc(g->alloc, sizes);
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, "cliques",
                               "the cliques drawn give %.4g entries; generated tensors are "
                               "limited to 2^32 entries",
                               total);
    }
    uint64_t count = (uint64_t)total, k = 0;
    uint64_t *pos = NULL, *scratch = NULL;
    int rc = count ? alloc_pair(g, count, &pos, &scratch) : TESSEL_OK;
    for (uint64_t q = 0; q < p->cliques && !rc; q++) {
        for (uint64_t m = 0; m < sizes[q]; m++)
            c.members[m] = draw_member(g, &c, m);
        for (uint64_t x = 0; x < sizes[q]; x++)
            for (uint64_t y = 0; y < sizes[q]; y++)
                if (x != y)
                    pos[k++] = c.members[x] * n + c.members[y];
    }
    for (uint64_t e = 0; e < p->tail && !rc; e++) {
        c.members[0] = draw_member(g, &c, 0);
        c.members[1] = draw_member(g, &c, 1);
        pos[k++] = c.members[0] * n + c.members[1];
        pos[k++] = c.members[1] * n + c.members[0];
    }
    clustered_free(g, &c);
    tessel_dealloc(g->alloc, sizes);
    if (!rc && count) {
        tessel_sort_u64(pos, scratch, count, n * n - 1);
        rc = emit_linear(g, pos, drop_repeats(pos, count));
    }
    tessel_dealloc(g->alloc, pos);
    tessel_dealloc(g->alloc, scratch);
    return rc;
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Fixed-structured (Sparseloop's density model; docs/data.md): row i keeps
 * column j when an integer lies in (j d + f_i, (j + 1) d + f_i], a Beatty
 * sequence, so every run of w columns of a row holds floor(w d) or
 * ceil(w d) nonzeros. The rows' phases f_i = frac((i + seed) / golden
 * ratio) spread evenly, so a tile's rows take the ceiling in about the
 * share frac(w d) and the tile holds close to rows x w x d. */
static int gen_fixed(generator *g, uint64_t expected)
{
    const tessel_gen_params *p = g->p;
    const double d = p->density, alpha = 0.6180339887498949;
    int rc = tessel_coo_builder_reserve(g->b, expected);
    for (uint64_t i = 0; i < p->rows && !rc; i++) {
        double x = (double)(i + p->seed) * alpha, f = x - floor(x);
        /* the integers n in (f, cols d + f]: column ceil((n - f) / d) - 1 */
        double last = floor((double)p->cols * d + f);
        for (double n = 1; n <= last && !rc; n++) {
            double j = ceil((n - f) / d) - 1;
            if (j >= 0 && j < (double)p->cols)
                rc = emit(g, i, (uint64_t)j);
        }
    }
    return rc;
}

static int run_kind(generator *g, uint64_t expected, tessel_diag *diag)
{
    int rc = TESSEL_OK;
    switch (g->p->kind) {
    case TESSEL_GEN_UNIFORM: rc = gen_uniform(g); break;
    case TESSEL_GEN_BANDED: rc = gen_bernoulli(g, expected, gen_band_positions(g->p)); break;
    case TESSEL_GEN_BLOCKDIAG: rc = gen_bernoulli(g, expected, gen_block_positions(g->p)); break;
    case TESSEL_GEN_RMAT: rc = gen_rmat(g, diag); break;
    case TESSEL_GEN_NM: rc = gen_nm(g, expected); break;
    case TESSEL_GEN_CLUSTERED: rc = gen_clustered(g, diag); break;
    case TESSEL_GEN_FIXED: rc = gen_fixed(g, expected); break;
    }
    if (rc == TESSEL_ENOMEM) /* the entries' arrays, the most a generator holds */
        return tessel_diag_oom(diag, NULL, "generating the matrix's entries",
                               (size_t)tensor_builder_grow_bytes(g->b, expected));
    return rc;
}

int tessel_generate(const tessel_gen_params *p, const tessel_allocator *a, tessel_tensor **out,
                    tessel_diag *diag)
{
    *out = NULL;
    if (!p)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL, "no generator parameters");
    uint64_t expected = 0;
    int rc = gen_validate(p, &expected, diag);
    if (rc)
        return rc;
    generator g = { a, p, tessel_rng_create(a, p->seed), NULL };
    if (!g.rng)
        return tessel_diag_oom(diag, NULL, "creating the random number generator",
                               sizeof(gsl_rng) + gsl_rng_mt19937->size);
    uint64_t dims[2] = { p->rows, p->cols };
    rc = tessel_coo_builder_create(2, dims, p->values != 0, a, &g.b, diag);
    if (!rc)
        rc = run_kind(&g, expected, diag);
    if (!rc)
        rc = tessel_coo_builder_finish(g.b, 0, out, diag);
    tessel_coo_builder_free(&g.b);
    tessel_rng_free(a, &g.rng);
    return rc;
}

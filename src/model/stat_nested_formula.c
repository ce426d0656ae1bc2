/* The nested boundary b >= 2 of SpMSpM / SpMV priced by a formula per tile
 * shape instead of the merge walks and the output sample's walk
 * (`--nested-formula`, docs/models/stat.md "The nested formula"): the
 * point's cost is a few passes over level b's non-empty tiles, never the
 * effectual iterations, the outer tiles or the sampled output pairs.
 *
 * What it keeps exactly (as stat_nested.c): the effectual iterations, the
 * operand nonzeros they read and the uses of every input tile. What it
 * estimates:
 *
 *  - an input tile's fills are its runs before merges: A(I, K) one per
 *    coarse j block holding a B tile of row K, B(K, J) one per coarse i
 *    block holding an A tile of column K (d2t2 section 5, eqs. 16-17, with
 *    the reuse split by the digits before the tensor's innermost one).
 *    Runs that continue across coarse blocks because the iterations in
 *    between are not effectual (the merge walks' work) are not taken off:
 *    fills are upper bounds, as where the walks give up;
 *  - Z's pairs and groups (a pair's visits inside one coarse k block): per
 *    A tile row and coarse k block, the output tile columns met are the
 *    union of the B tile rows K of the block, taken as a chain along k: a
 *    row adjacent to the previous one adds the columns the two do not share
 *    (counted exactly per adjacent pair of B rows, which keeps banded and
 *    clustered operands), any other row its columns outside the union so far
 *    as if independent (d2t2 eq. 20's independence). Groups of one pair in
 *    consecutive blocks are not joined (an upper bound on write-backs);
 *  - written nonzeros (a sampled nonzero is carried by its pair's runs from
 *    the one of its first multiply on): counted exactly, without merges, on
 *    a systematic subsample of at most FORMULA_PAIRS of the output sample's
 *    cell groups and scaled by weight to the sample's nonzeros.
 *
 * The estimates go into a nested_summary, priced as a cached one is
 * (stat_nested_from_summary): points that summary cannot decide (rule 4
 * per child read, an output that may spill) decline to the full path. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "stat_nested.h"
#include "stat_nested_gated.h"

/* Coarse block of v in blocks of cf (UINT64_MAX: one block). */
static uint64_t block_of(uint64_t v, uint64_t cf)
{
    return cf == UINT64_MAX ? 0 : v / cf;
}

/* Dense per-size sums of one input: fills (runs) and further uses. */
typedef struct size_sums {
    double *runs, *extra;
    unsigned char *seen;
    uint64_t max;
} size_sums;

static void sums_free(const tessel_allocator *a, size_sums *z)
{
    tessel_dealloc(a, z->runs);
    tessel_dealloc(a, z->extra);
    tessel_dealloc(a, z->seen);
}

static int sums_init(const tessel_allocator *a, const stat_grid *g, size_sums *z)
{
    memset(z, 0, sizeof(*z));
    for (uint64_t t = 0; t < g->n; t++)
        z->max = g->nnz[t] > z->max ? g->nnz[t] : z->max;
    if (z->max >= STAT_NESTED_SIZE_TABLE)
        return STAT_NESTED_KNOWN_DECLINED;
    z->runs = stat_zeroed(a, z->max + 1, sizeof(double));
    z->extra = stat_zeroed(a, z->max + 1, sizeof(double));
    z->seen = stat_zeroed(a, z->max + 1, 1);
    if (!z->runs || !z->extra || !z->seen) {
        sums_free(a, z);
        return TESSEL_ENOMEM;
    }
    return TESSEL_OK;
}

static void sums_add(size_sums *z, uint64_t size, double runs, double uses)
{
    if (runs <= 0)
        return;
    z->runs[size] += runs;
    if (uses - runs > 0)
        z->extra[size] += uses - runs;
    z->seen[size] = 1;
}

/* Per K of A's columns: the coarse i blocks (cf_i) holding an A tile,
 * B's runs before merges. A's rows come in order, so a block is new when
 * it differs from the last one seen in the column. */
static int column_blocks(const nested *n, double *cbi)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t *last = tessel_alloc_array(a, n->ext_k + 1, sizeof(uint64_t));
    if (!last)
        return TESSEL_ENOMEM;
    for (uint64_t k = 0; k <= n->ext_k; k++)
        last[k] = UINT64_MAX;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        uint64_t blk = block_of(i, n->cf_i);
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t];
            if (last[k] != blk) {
                last[k] = blk;
                cbi[k] += 1;
            }
        }
    }
    tessel_dealloc(a, last);
    return TESSEL_OK;
}

/* Level-b position of engine index x's digit (radix > 1), or UINT_MAX. */
static unsigned level_pos(const nested *n, unsigned x)
{
    for (unsigned d = n->first_digit; d < n->bd.ndigits; d++)
        if (n->bd.d[d].x == x && n->bd.d[d].radix > 1)
            return d;
    return UINT_MAX;
}

/* Level-b tiles of engine index x per level b-1 tile (UINT64_MAX: one). */
static uint64_t outer_width(const nested *n, unsigned x)
{
    uint64_t w = UINT64_MAX;
    for (unsigned d = 0; d < n->first_digit; d++)
        if (n->bd.d[d].x == x && n->bd.d[d].radix > 1 && n->bd.d[d].div < w)
            w = n->bd.d[d].div;
    return w;
}

/* A's runs per tile, conditioned on the occupancy of the level b-1 tile
 * that holds it. Where level b's j loop comes before A's innermost digit,
 * two consecutive uses of A(I, K) at level-b tiles J1 < J2 of one level
 * b-1 tile are separated only by the iterations of the loops inside j,
 * which meet the A tiles sharing (I, K)'s digits placed before j (its
 * companions: the same row I if i is outside j, the same column K if k is,
 * all of the outer tile otherwise). The run continues when no companion K'
 * has a B tile in the gap: about ext_j / n_b[K] level-b j tiles, each
 * non-empty in row K' with the chance n_b[K'] / ext_j, independently. A
 * tile without companions has all its uses inside one outer tile in one
 * run (the merge walks' WALK_ALONE case). So a tile's runs go from one per
 * coarse j block (cbj) towards one per outer j block holding a B tile of
 * row K by that chance. Runs continuing into the next outer tile are not
 * taken off (an upper bound there). */
static int a_runs(const nested *n, const double *cbj, double *runs)
{
    for (uint64_t t = 0; t < n->a.n; t++)
        runs[t] = cbj[n->a.col[t]];
    unsigned pi = level_pos(n, XI), pj = level_pos(n, XJ), pk = level_pos(n, XK);
    unsigned inner = pi == UINT_MAX ? pk : pk == UINT_MAX ? pi : (pi > pk ? pi : pk);
    uint64_t wi = outer_width(n, XI), wk = outer_width(n, XK), wj = outer_width(n, XJ);
    if (pj == UINT_MAX || inner == UINT_MAX || pj > inner || !n->ext_j)
        return TESSEL_OK; /* j does not split A's uses inside the outer tile */
    int share_i = pi < pj, share_k = pk < pj;
    const tessel_allocator *a = n->e->alloc;
    double *lsum = stat_zeroed(a, n->ext_k + 1, sizeof(double));
    double *lk = tessel_alloc_array(a, n->ext_k + 1, sizeof(double));
    double *alone_runs = tessel_alloc_array(a, n->ext_k + 1, sizeof(double));
    if (!lsum || !lk || !alone_runs) {
        tessel_dealloc(a, lsum);
        tessel_dealloc(a, lk);
        tessel_dealloc(a, alone_runs);
        return TESSEL_ENOMEM;
    }
    double J = (double)n->ext_j;
    for (uint64_t k = 0; k <= n->ext_k; k++) {
        double nb = k < n->b.rows ? (double)n->n_b[k] : 0;
        alone_runs[k] = k < n->b.rows ? (double)stat_nested_row_blocks(&n->b, k, wj) : 0;
        /* ln P(a j tile empty in row k); finite for a full row, so that sums
         * without it stay defined (e^-64 is no chance at all) */
        lk[k] = nb < J ? fmax(log1p(-nb / J), -64.0) : -64.0;
    }
    /* rows in groups that share the companions' i: one row, or one outer i block */
    uint64_t gi = share_i ? 1 : (wi == UINT64_MAX ? n->a.rows : wi);
    for (uint64_t r0 = 0; r0 < n->a.rows; r0 += gi) {
        uint64_t r1 = r0 + gi < n->a.rows ? r0 + gi : n->a.rows;
        /* per companion key along k (K itself, or its outer k block): the
         * log chance that all its tiles' B rows are empty at one j tile */
        for (int pass = 0; pass < 3; pass++)
            for (uint64_t t = n->a.ptr[r0]; t < n->a.ptr[r1]; t++) {
                uint64_t k = n->a.col[t];
                uint64_t key = share_k ? k : (wk == UINT64_MAX ? 0 : k / wk);
                if (pass == 0) {
                    lsum[key] += lk[k];
                } else if (pass == 1 && k < n->b.rows && n->n_b[k] && alone_runs[k] < runs[t]) {
                    double others = lsum[key] - lk[k]; /* the companions' */
                    double gap = J / (double)n->n_b[k];
                    double x = others < 0 ? others * gap : 0;
                    double go_on = x > -40 ? exp(x) : 0; /* e^-40: none, and no exp */
                    runs[t] -= (runs[t] - alone_runs[k]) * go_on;
                } else if (pass == 2) {
                    lsum[key] = 0;
                }
            }
    }
    tessel_dealloc(a, lsum);
    tessel_dealloc(a, lk);
    tessel_dealloc(a, alone_runs);
    return TESSEL_OK;
}

/* The inputs' runs and uses by tile size into sm. */
static int input_sizes(nested *n, const double *ra, const double *cbi, nested_summary *sm)
{
    const tessel_allocator *a = n->e->alloc;
    size_sums z[2];
    int rc = sums_init(a, &n->a, &z[0]);
    if (rc)
        return rc;
    rc = sums_init(a, &n->b, &z[1]);
    if (rc) {
        sums_free(a, &z[0]);
        return rc;
    }
    for (uint64_t t = 0; t < n->a.n; t++) {
        uint64_t k = n->a.col[t];
        sums_add(&z[0], n->a.nnz[t], ra[t], (double)n->n_b[k]);
    }
    for (uint64_t k = 0; k < n->b.rows; k++)
        for (uint64_t t = n->b.ptr[k]; t < n->b.ptr[k + 1]; t++)
            sums_add(&z[1], n->b.nnz[t], cbi[k], (double)n->n_a[k]);
    for (unsigned op = 0; !rc && op < 2; op++)
        rc = stat_nested_sizes_compact(sm->alloc, sm, op, z[op].runs, z[op].extra, z[op].seen,
                                       z[op].max);
    sums_free(a, &z[0]);
    sums_free(a, &z[1]);
    return rc;
}

/* Per K: the level-b tile columns J that B's rows K - 1 and K share (a
 * merge of two sorted rows; O(B's tiles) in all). */
static int adjacent_overlap(const nested *n, double *ov)
{
    for (uint64_t k = 1; k < n->b.rows; k++) {
        uint64_t p = n->b.ptr[k - 1], q = n->b.ptr[k], pe = n->b.ptr[k], qe = n->b.ptr[k + 1];
        uint64_t cnt = 0;
        while (p < pe && q < qe) {
            if (n->b.col[p] < n->b.col[q])
                p++;
            else if (n->b.col[p] > n->b.col[q])
                q++;
            else
                cnt++, p++, q++;
        }
        ov[k] = (double)cnt;
    }
    return TESSEL_OK;
}

/* The expected union over J of B's tile rows taken in ascending K, as a
 * chain: a row adjacent to the previous one adds the columns the two do
 * not share (exact for the pair: banded and clustered operands), any
 * other row its columns outside the union so far, independent. */
typedef struct chain {
    double u, u_before; /* the union, and before the last row */
    uint64_t last;      /* the last K added (UINT64_MAX: none) */
} chain;

static void chain_reset(chain *c)
{
    c->u = c->u_before = 0;
    c->last = UINT64_MAX;
}

static void chain_add(chain *c, const nested *n, const double *ov, uint64_t k)
{
    double J = (double)n->ext_j, nb = (double)n->n_b[k], add;
    if (c->last != UINT64_MAX && k == c->last + 1)
        add = (nb - ov[k]) * (1 - c->u_before / J);
    else
        add = nb * (1 - c->u / J);
    c->u_before = c->u;
    c->u += add > 0 ? add : 0;
    c->last = k;
}

/* Z's pairs and groups (a pair's visits inside one coarse k block): per A
 * tile row and coarse k block, the output tile columns met are the chain
 * union of the B tile rows of the block's K; the row's pairs the chain
 * over all its K. */
static int output_groups(const nested *n, double *pairs, double *groups)
{
    double *ov = stat_zeroed(n->e->alloc, n->b.rows + 1, sizeof(double));
    if (!ov)
        return TESSEL_ENOMEM;
    adjacent_overlap(n, ov);
    *pairs = *groups = 0;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        chain all, blk;
        chain_reset(&all);
        chain_reset(&blk);
        uint64_t cur = UINT64_MAX;
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t], b = block_of(k, n->cf_k);
            if (k >= n->b.rows || !n->n_b[k])
                continue;
            if (b != cur) {
                *groups += blk.u;
                chain_reset(&blk);
                cur = b;
            }
            chain_add(&blk, n, ov, k);
            chain_add(&all, n, ov, k);
        }
        *groups += blk.u;
        *pairs += all.u;
    }
    tessel_dealloc(n->e->alloc, ov);
    return TESSEL_OK;
}

/* Whether B's tile row k holds tile column j. */
static int b_has(const nested *n, uint64_t k, uint64_t j)
{
    uint64_t lo = n->b.ptr[k], hi = n->b.ptr[k + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (n->b.col[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n->b.ptr[k + 1] && n->b.col[lo] == j;
}

/* The nonzeros the write-backs carry: a sampled nonzero is carried by
 * every group of its pair from the block of its first multiply on (merges
 * left out, as for the groups). Counted exactly for a systematic subsample
 * of at most FORMULA_PAIRS of the output sample's cell groups (each a
 * pair's coarse k blocks from A's tile row against B's rows: its A tiles
 * times a binary search), and scaled by weight to the sample's nonzeros:
 * the cost is bounded, whatever the sample or the effectual iterations. */
#define FORMULA_PAIRS 4096u
static double written(const nested *n, const stat_output_sample *s, uint64_t *blk)
{
    uint64_t fi = n->ea[0] / s->base[0], fj = n->eb[1] / s->base[1],
             fk = n->ea[1] / s->base[2];
    if (!fi || !fj || !fk || !s->ngroups)
        return s->nnz;
    uint64_t step = s->ngroups / FORMULA_PAIRS + 1;
    double wsub = 0, carried = 0;
    for (uint64_t g = step / 2; g < s->ngroups; g += step) {
        uint64_t c0 = s->gstart[g], i = s->ci[c0] / fi, j = s->cj[c0] / fj, cnt = 0;
        if (i >= n->a.rows || j >= n->ext_j)
            continue;
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t], b = block_of(k, n->cf_k);
            if (k < n->b.rows && (!cnt || blk[cnt - 1] != b) && b_has(n, k, j))
                blk[cnt++] = b;
        }
        for (uint64_t c = c0; c < s->gstart[g + 1]; c++) {
            uint64_t b0 = block_of(s->ck[c] / fk, n->cf_k), from = 0;
            while (from < cnt && blk[from] < b0)
                from++;
            wsub += s->weight[c];
            carried += s->weight[c] * (double)(cnt - from);
        }
    }
    return wsub > 0 ? s->nnz * carried / wsub : s->nnz;
}

/* The summary of boundary n->bd.b by the formulas above; ra (per A tile)
 * and cbi (per K, zeroed) get the inputs' runs. */
static int formula_summary(nested *n, const stat_output_sample *s, double *ra, double *cbi,
                           nested_summary *sm)
{
    const tessel_allocator *a = n->e->alloc;
    double *cbj = tessel_alloc_array(a, n->ext_k + 1, sizeof(double));
    if (!cbj)
        return TESSEL_ENOMEM;
    for (uint64_t k = 0; k < n->b.rows; k++)
        cbj[k] = (double)stat_nested_row_blocks(&n->b, k, n->cf_j);
    int rc = a_runs(n, cbj, ra);
    tessel_dealloc(a, cbj);
    if (!rc)
        rc = column_blocks(n, cbi);
    if (!rc)
        rc = input_sizes(n, ra, cbi, sm);
    for (uint64_t k = 0; !rc && k < n->ext_k; k++) {
        sm->effectual += (double)n->n_a[k] * (double)n->n_b[k];
        sm->operand_nnz[0] += n->a_nnz[k] * (double)n->n_b[k];
        sm->operand_nnz[1] += n->b_nnz[k] * (double)n->n_a[k];
    }
    if (!rc)
        rc = output_groups(n, &sm->out_pairs, &sm->out_runs);
    uint64_t longest = 1;
    for (uint64_t i = 0; !rc && i < n->a.rows; i++)
        longest = n->a.ptr[i + 1] - n->a.ptr[i] > longest ? n->a.ptr[i + 1] - n->a.ptr[i] : longest;
    uint64_t *blk = rc ? NULL : tessel_alloc_array(a, longest, sizeof(uint64_t));
    if (!rc && !blk)
        rc = TESSEL_ENOMEM;
    if (!rc)
        sm->out_written = written(n, s, blk);
    tessel_dealloc(a, blk);
    return rc;
}

/* B's runs per tile of B^T from per-K runs, priced tile by tile. */
static int price_b(nested *n, const nested_side *sd, const double *per_k, stat_counts *c)
{
    const stat_grid *x = sd->x;
    double *runs = tessel_alloc_array(n->e->alloc, x->n + 1, sizeof(double));
    if (!runs)
        return TESSEL_ENOMEM;
    for (uint64_t t = 0; t < x->n; t++)
        runs[t] = per_k[x->col[t]];
    nested_runs rv = { runs, NULL };
    int rc = stat_nested_price_input(n, sd, &rv, c);
    tessel_dealloc(n->e->alloc, runs);
    return rc;
}

/* The point tile by tile where the summary cannot price it by size (rule 4
 * per child read, a tile over its partition): the output first, which
 * declines with nothing kept when it may spill, then each input tile
 * registered for rule 4 as the full path does. */
static int formula_tiles(nested *n, const stat_output_sample *s, const nested_summary *sm,
                         const double *ra, const double *cbi)
{
    const tessel_allocator *a = n->e->alloc;
    stat_outcome o;
    memset(&o, 0, sizeof(o));
    int rc = stat_nested_output_known(n, s, sm, &o);
    if (rc)
        return rc;
    nested_side sa = { &n->a, &n->b, XI, XJ, 0, n->cf_j };
    nested_runs rva = { ra, NULL };
    rc = stat_nested_price_input(n, &sa, &rva, &o.a);
    stat_grid bt, at;
    memset(&bt, 0, sizeof(bt));
    memset(&at, 0, sizeof(at));
    if (!rc) /* P = A^T: its ptr and col only */
        rc = stat_grid_transpose_pattern(&n->a, a, &at);
    /* nothing below reads A itself: an owned A goes before B^T is made
     * (as input_b, stat_nested.c; the teardown frees an emptied grid) */
    if (!rc && n->a_owned)
        stat_grid_free(a, &n->a);
    if (!rc)
        rc = stat_grid_transpose(&n->b, a, &bt);
    if (!rc && n->b_owned) /* nor B itself */
        stat_grid_free(a, &n->b);
    if (!rc) {
        nested_side sb = { &bt, &at, XJ, XI, 1, n->cf_i };
        rc = price_b(n, &sb, cbi, &o.b);
    }
    stat_grid_free(a, &bt);
    stat_grid_free(a, &at);
    if (rc)
        return rc;
    o.effectual = sm->effectual;
    o.operand_nnz[0] = sm->operand_nnz[0];
    o.operand_nnz[1] = sm->operand_nnz[1];
    stat_nested_store(n, &o);
    return TESSEL_OK;
}

int stat_nested_formula(engine *e, unsigned b, const stat_input *const *in,
                        const stat_output_sample *s, tessel_diag *diag)
{
    if (!s || stat_nested_gated_any(e, b)) /* an unskipped input: stat_nested_gated.c */
        return STAT_NESTED_KNOWN_DECLINED;
    nested n;
    int shared[2];
    int rc = stat_nested_setup(e, b, in, &n, shared, diag);
    if (rc)
        return rc == TESSEL_ENOMEM ? tessel_diag_oom(diag, NULL, "the nested formula", 0) : rc;
    nested_summary sm;
    memset(&sm, 0, sizeof(sm));
    sm.alloc = e->alloc;
    double *ra = tessel_alloc_array(e->alloc, n.a.n + 1, sizeof(double));
    double *cbi = stat_zeroed(e->alloc, n.ext_k + 1, sizeof(double));
    rc = ra && cbi ? formula_summary(&n, s, ra, cbi, &sm) : TESSEL_ENOMEM;
    if (!rc)
        rc = stat_nested_from_summary(e, &n.bd, &sm, s);
    if (rc == STAT_NESTED_KNOWN_DECLINED)
        rc = formula_tiles(&n, s, &sm, ra, cbi);
    tessel_dealloc(e->alloc, ra);
    tessel_dealloc(e->alloc, cbi);
    stat_nested_summary_free(&sm);
    stat_nested_teardown(&n, shared);
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_oom(diag, NULL, "the nested formula", 0);
    return rc;
}

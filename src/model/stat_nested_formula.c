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
 *    A tile row I and coarse k block, the output tile columns met are the
 *    union of the B tile rows K of the block, taken as independent inside
 *    each level b-1 j block (the outer tile that holds the pair: d2t2
 *    eq. 20's independence, conditioned on the outer tile's columns);
 *    groups of one pair in consecutive blocks are not joined (an upper
 *    bound on write-backs);
 *  - written nonzeros: a nonzero's first multiply falls in a uniform run
 *    of its pair, so it is carried by (runs / pairs + 1) / 2 runs on
 *    average (eq. 19's linear growth, as the fallback of
 *    stat_nested_out.c).
 *
 * The estimates go into a nested_summary, priced as a cached one is
 * (stat_nested_from_summary): points that summary cannot decide (rule 4
 * per child read, an output that may spill) decline to the full path. */
#include <math.h>
#include <string.h>

#include "stat_nested.h"

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

/* The inputs' runs and uses by tile size into sm. */
static int input_sizes(nested *n, const double *cbj, const double *cbi, nested_summary *sm)
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
        sums_add(&z[0], n->a.nnz[t], cbj[k], (double)n->n_b[k]);
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

/* Per A tile row: its coarse k blocks (kept in rowblk[ptr[i] .. ptr[i+1]))
 * with the expected groups there; the row's pairs in pairs_of[i]. */
typedef struct out_rows {
    uint64_t *ptr, *blk;
    double *groups, *pairs_of;
} out_rows;

static void out_rows_free(const tessel_allocator *a, out_rows *r)
{
    tessel_dealloc(a, r->ptr);
    tessel_dealloc(a, r->blk);
    tessel_dealloc(a, r->groups);
    tessel_dealloc(a, r->pairs_of);
}

/* Z's pairs and groups (a pair's visits inside one coarse k block): per A
 * tile row and coarse k block, the output tile columns met are the chain
 * union of the B tile rows of the block's K; the row's pairs the chain
 * over all its K. */
static int output_groups(const nested *n, out_rows *r, double *pairs, double *groups)
{
    const tessel_allocator *a = n->e->alloc;
    memset(r, 0, sizeof(*r));
    double *ov = stat_zeroed(a, n->b.rows + 1, sizeof(double));
    r->ptr = tessel_alloc_array(a, n->a.rows + 1, sizeof(uint64_t));
    r->blk = tessel_alloc_array(a, n->a.n + 1, sizeof(uint64_t));
    r->groups = tessel_alloc_array(a, n->a.n + 1, sizeof(double));
    r->pairs_of = tessel_alloc_array(a, n->a.rows + 1, sizeof(double));
    if (!ov || !r->ptr || !r->blk || !r->groups || !r->pairs_of) {
        tessel_dealloc(a, ov);
        out_rows_free(a, r);
        return TESSEL_ENOMEM;
    }
    adjacent_overlap(n, ov);
    *pairs = *groups = 0;
    uint64_t m = 0;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        chain all, blk;
        chain_reset(&all);
        chain_reset(&blk);
        uint64_t cur = UINT64_MAX;
        r->ptr[i] = m;
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t], b = block_of(k, n->cf_k);
            if (k >= n->b.rows || !n->n_b[k])
                continue;
            if (b != cur) {
                if (cur != UINT64_MAX)
                    r->groups[m - 1] = blk.u;
                chain_reset(&blk);
                r->blk[m++] = b;
                cur = b;
            }
            chain_add(&blk, n, ov, k);
            chain_add(&all, n, ov, k);
        }
        if (cur != UINT64_MAX)
            r->groups[m - 1] = blk.u;
        r->pairs_of[i] = all.u;
        *pairs += all.u;
        for (uint64_t g = r->ptr[i]; g < m; g++)
            *groups += r->groups[g];
    }
    r->ptr[n->a.rows] = m;
    tessel_dealloc(a, ov);
    return TESSEL_OK;
}

/* The nonzeros the write-backs carry: a sampled nonzero (cell of its
 * first multiply's K) is carried by its group there and, for each later
 * coarse k block of its row, with the chance that its pair has a group
 * there (the block's groups over the row's pairs). Suffix sums per row
 * make it one binary search per sampled cell. */
static double written(const nested *n, const stat_output_sample *s, const out_rows *r)
{
    double sum = 0;
    uint64_t fi = n->ea[0] / s->base[0], fk = n->ea[1] / s->base[2];
    if (!fi || !fk)
        return s->nnz;
    for (uint64_t c = 0; c < s->ncells; c++) {
        uint64_t i = s->ci[c] / fi, b = block_of(s->ck[c] / fk, n->cf_k);
        if (i >= n->a.rows || r->pairs_of[i] <= 0) {
            sum += s->weight[c];
            continue;
        }
        uint64_t lo = r->ptr[i], hi = r->ptr[i + 1];
        while (lo < hi) { /* the first of the row's blocks after b */
            uint64_t mid = lo + (hi - lo) / 2;
            if (r->blk[mid] <= b)
                lo = mid + 1;
            else
                hi = mid;
        }
        double later = r->groups[lo] / r->pairs_of[i]; /* suffix sums, below */
        sum += s->weight[c] * (1 + (lo < r->ptr[i + 1] ? later : 0));
    }
    return sum;
}

/* groups[] of each row turned into suffix sums (capped at 1 per block). */
static void suffix_sums(const nested *n, out_rows *r)
{
    for (uint64_t i = 0; i < n->a.rows; i++) {
        double acc = 0, p = r->pairs_of[i];
        for (uint64_t g = r->ptr[i + 1]; g-- > r->ptr[i];) {
            double q = r->groups[g] < p ? r->groups[g] : p;
            acc += q;
            r->groups[g] = acc;
        }
    }
}

/* The summary of boundary n->bd.b by the formulas above; cbj and cbi
 * (per K, zeroed) get the inputs' runs before merges. */
static int formula_summary(nested *n, const stat_output_sample *s, double *cbj, double *cbi,
                           nested_summary *sm)
{
    const tessel_allocator *a = n->e->alloc;
    int rc = TESSEL_OK;
    for (uint64_t k = 0; k < n->b.rows; k++)
        cbj[k] = (double)stat_nested_row_blocks(&n->b, k, n->cf_j);
    rc = column_blocks(n, cbi);
    if (!rc)
        rc = input_sizes(n, cbj, cbi, sm);
    for (uint64_t k = 0; !rc && k < n->ext_k; k++) {
        sm->effectual += (double)n->n_a[k] * (double)n->n_b[k];
        sm->operand_nnz[0] += n->a_nnz[k] * (double)n->n_b[k];
        sm->operand_nnz[1] += n->b_nnz[k] * (double)n->n_a[k];
    }
    out_rows r;
    if (!rc)
        rc = output_groups(n, &r, &sm->out_pairs, &sm->out_runs);
    if (!rc) {
        suffix_sums(n, &r);
        sm->out_written = written(n, s, &r);
        out_rows_free(a, &r);
    }
    return rc;
}

/* One input's runs per tile of x from per-K runs (x's columns are K for A,
 * its rows J with columns K for B^T), priced tile by tile. */
static int price_tiles(nested *n, const nested_side *sd, const double *per_k, stat_counts *c)
{
    const stat_grid *x = sd->x;
    double *runs = tessel_alloc_array(n->e->alloc, x->n + 1, sizeof(double));
    if (!runs)
        return TESSEL_ENOMEM;
    for (uint64_t t = 0; t < x->n; t++)
        runs[t] = per_k[x->col[t]];
    int rc = stat_nested_price_input(n, sd, runs, c);
    tessel_dealloc(n->e->alloc, runs);
    return rc;
}

/* The point tile by tile where the summary cannot price it by size (rule 4
 * per child read, a tile over its partition): the output first, which
 * declines with nothing kept when it may spill, then each input tile
 * registered for rule 4 as the full path does. */
static int formula_tiles(nested *n, const stat_output_sample *s, const nested_summary *sm,
                         const double *cbj, const double *cbi)
{
    const tessel_allocator *a = n->e->alloc;
    stat_outcome o;
    memset(&o, 0, sizeof(o));
    int rc = stat_nested_output_known(n, s, sm, &o);
    if (rc)
        return rc;
    nested_side sa = { &n->a, &n->b, XI, XJ, 0, n->cf_j };
    rc = price_tiles(n, &sa, cbj, &o.a);
    stat_grid bt, at;
    memset(&bt, 0, sizeof(bt));
    memset(&at, 0, sizeof(at));
    if (!rc)
        rc = stat_grid_transpose(&n->b, a, &bt);
    if (!rc)
        rc = stat_grid_transpose(&n->a, a, &at);
    if (!rc) {
        nested_side sb = { &bt, &at, XJ, XI, 1, n->cf_i };
        rc = price_tiles(n, &sb, cbi, &o.b);
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
    if (!s)
        return STAT_NESTED_KNOWN_DECLINED;
    nested n;
    int shared[2];
    int rc = stat_nested_setup(e, b, in, &n, shared, diag);
    if (rc)
        return rc == TESSEL_ENOMEM ? tessel_diag_oom(diag, NULL, "the nested formula", 0) : rc;
    nested_summary sm;
    memset(&sm, 0, sizeof(sm));
    sm.alloc = e->alloc;
    double *cbj = stat_zeroed(e->alloc, n.ext_k + 1, sizeof(double));
    double *cbi = stat_zeroed(e->alloc, n.ext_k + 1, sizeof(double));
    rc = cbj && cbi ? formula_summary(&n, s, cbj, cbi, &sm) : TESSEL_ENOMEM;
    if (!rc)
        rc = stat_nested_from_summary(e, &n.bd, &sm, s);
    if (rc == STAT_NESTED_KNOWN_DECLINED)
        rc = formula_tiles(&n, s, &sm, cbj, cbi);
    tessel_dealloc(e->alloc, cbj);
    tessel_dealloc(e->alloc, cbi);
    stat_nested_summary_free(&sm);
    stat_nested_teardown(&n, shared);
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_oom(diag, NULL, "the nested formula", 0);
    return rc;
}

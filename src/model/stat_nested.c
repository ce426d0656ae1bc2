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
#include "stat_inspill.h"
#include "stat_nested.h"
#include "stat_nested_gated.h"
#include "stat_tiledfmt.h"

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

/* A grid's tile counts held in 1 B each while the merge walks run, which
 * read only ptr and col: counts of 255 and more kept aside by tile. B^T's
 * counts would otherwise be 4 B per tile at B's peak (docs/models/stat.md,
 * "Memory of the nested pass"). */
typedef struct nnz_pack {
    uint8_t *small;    /* per tile: its count, or 255: in over */
    uint64_t nover;
    uint64_t *over_t;  /* the tiles of 255 and more, ascending */
    uint32_t *over_v;  /* and their counts */
} nnz_pack;

static void nnz_pack_free(const tessel_allocator *a, nnz_pack *pk)
{
    tessel_dealloc(a, pk->small);
    tessel_dealloc(a, pk->over_t);
    tessel_dealloc(a, pk->over_v);
    memset(pk, 0, sizeof(*pk));
}

/* Moves g's counts into pk and frees g->nnz. */
static int nnz_park(const tessel_allocator *a, stat_grid *g, nnz_pack *pk)
{
    memset(pk, 0, sizeof(*pk));
    for (uint64_t t = 0; t < g->n; t++)
        pk->nover += g->nnz[t] >= UINT8_MAX;
    pk->small = tessel_alloc_array(a, g->n + 1, 1);
    pk->over_t = tessel_alloc_array(a, pk->nover + 1, sizeof(uint64_t));
    pk->over_v = tessel_alloc_array(a, pk->nover + 1, sizeof(uint32_t));
    if (!pk->small || !pk->over_t || !pk->over_v) {
        nnz_pack_free(a, pk);
        return TESSEL_ENOMEM;
    }
    for (uint64_t t = 0, m = 0; t < g->n; t++) {
        uint32_t v = g->nnz[t];
        pk->small[t] = v >= UINT8_MAX ? UINT8_MAX : (uint8_t)v;
        if (v >= UINT8_MAX) {
            pk->over_t[m] = t;
            pk->over_v[m++] = v;
        }
    }
    tessel_dealloc(a, g->nnz);
    g->nnz = NULL;
    return TESSEL_OK;
}

/* Gives g its counts back from pk (freed either way). */
static int nnz_unpark(const tessel_allocator *a, stat_grid *g, nnz_pack *pk)
{
    g->nnz = tessel_alloc_array(a, g->n + 1, sizeof(uint32_t));
    if (!g->nnz) {
        nnz_pack_free(a, pk);
        return TESSEL_ENOMEM;
    }
    for (uint64_t t = 0; t < g->n; t++)
        g->nnz[t] = pk->small[t];
    for (uint64_t m = 0; m < pk->nover; m++)
        g->nnz[pk->over_t[m]] = pk->over_v[m];
    nnz_pack_free(a, pk);
    return TESSEL_OK;
}

/* Fills and rule-4 streaming of one input at level b, with walk w's
 * merges inside each level b-1 tile and the merges across them. pk: NULL,
 * or X's counts parked (nnz_park), given back to xg (= X) after the walks. */
static int input_side(nested *n, const nested_side *sd, int w, stat_grid *xg, nnz_pack *pk,
                      stat_counts *c)
{
    engine *e = n->e;
    const stat_grid *x = sd->x, *p = sd->p;
    /* a run count is at most a row of P's tiles (nested_run's bound) */
    if (p->cols > NESTED_RUN_MAX)
        return TESSEL_ERANGE;
    /* both written in full below: no clearing */
    nested_run *runs = tessel_alloc_array(e->alloc, x->n + 1, sizeof(nested_run));
    if (!runs)
        return TESSEL_ENOMEM;
    /* per k once: a pass per X tile would cost the effectual iterations */
    nested_run *per_k = tessel_alloc_array(e->alloc, p->rows + 1, sizeof(nested_run));
    if (!per_k) {
        tessel_dealloc(e->alloc, runs);
        return TESSEL_ENOMEM;
    }
    for (uint64_t k = 0; k < p->rows; k++)
        per_k[k] = (nested_run)stat_nested_row_blocks(p, k, sd->cf);
    for (uint64_t o = 0; o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
            uint64_t k = x->col[t];
            runs[t] = k < p->rows ? per_k[k] : 0;
        }
    tessel_dealloc(e->alloc, per_k);
    /* runs merged inside one level b-1 tile */
    int rc = TESSEL_OK;
    rc = stat_nested_merge_inside(n, sd, w, runs);
    /* runs that continue into the next level b-1 tile */
    if (!rc)
        rc = stat_nested_merge_across(n, x, sd->op && n->b.col ? &n->b : NULL, p, sd->xo, sd->xf,
                                      sd->cf, runs); /* B's side: X = B^T, so X^T is B (input_b),
                                                        unless let go there */
    if (pk) /* the pricing reads the counts */
        rc = rc ? (nnz_pack_free(e->alloc, pk), rc) : nnz_unpark(e->alloc, xg, pk);
    if (!rc && n->rec)
        stat_nested_record_sizes(n, sd->op, x, p, runs);
    nested_runs rv = { NULL, runs };
    if (!rc)
        rc = stat_nested_price_input(n, sd, &rv, c);
    tessel_dealloc(e->alloc, runs);
    return rc;
}

/* Tiles of at most this many nonzeros are priced by size (price_by_size). */
#define NESTED_PRICE_SIZES (UINT64_C(1) << 16)

/* stat_nested_price_input summed per tile size instead of per tile: the
 * runs and the further uses of the tiles with a run, per size, priced
 * once each (as stat_nested_from_summary prices a summary). Equal to the
 * per-tile sums, whole numbers below 2^52, and only where rule 4 needs no
 * tile itself: no overbooked tile at level b-1 to read (stat_ob_tile's
 * child reads) and none kept at level b (a tile over the partition where
 * stat_ob_tile records one). 1: priced into c; 0: c untouched, the caller
 * prices per tile. */
static int price_by_size(nested *n, const nested_side *sd, const nested_runs *runs, const pricer *pr,
                         uint64_t part, stat_counts *c)
{
    engine *e = n->e;
    const stat_grid *x = sd->x, *p = sd->p;
    unsigned b = n->bd.b;
    if (e->ob[(b - 1) % 2][sd->op].n || stat_pricer_needs_rows(pr))
        return 0; /* a tile's price needs its rows (stat_grid_price), not its size alone */
    uint64_t max = 0;
    for (uint64_t t = 0; t < x->n; t++)
        max = x->nnz[t] > max ? x->nnz[t] : max;
    if (max >= NESTED_PRICE_SIZES)
        return 0;
    int keeps = b + 1 < e->nlev || stat_inspill_on(e, b); /* stat_ob_tile may keep a tile */
    double *rs = stat_zeroed(e->alloc, 2 * (max + 1), sizeof(double)), *xs = rs + max + 1;
    if (!rs)
        return 0;
    /* input_uses' terms: a tile with a run adds its runs as fills and its
     * further uses, where positive, as bumped uses */
    for (uint64_t o = 0; o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
            double rt = stat_nested_run_at(runs, t);
            if (rt <= 0)
                continue;
            uint64_t k = x->col[t];
            double uses = k < p->rows ? (double)(p->ptr[k + 1] - p->ptr[k]) : 0;
            rs[x->nnz[t]] += rt;
            if (uses > rt)
                xs[x->nnz[t]] += uses - rt;
        }
    double total = 0;
    int ok = 1;
    for (uint64_t v = 0; v <= max; v++) {
        price tp = stat_fast_price(pr, v);
        total += (rs[v] + xs[v]) * (tp.data + tp.meta);
        if (keeps && part && rs[v] > 0 && tp.data + tp.meta > (double)part)
            ok = 0;
    }
    ok = ok && total < 0x1p52;
    for (uint64_t v = 0; ok && v <= max; v++)
        if (rs[v] > 0) {
            price tp = stat_fast_price(pr, v);
            input_uses(c, tp, part, rs[v], rs[v] + xs[v]);
        }
    tessel_dealloc(e->alloc, rs);
    return ok;
}

int stat_nested_cost(const nested *n, unsigned which, tile_cost *tc)
{
    engine *e = n->pe ? n->pe : n->e;
    const operand *op = which == NESTED_OUT ? &e->out : &e->in[which];
    return exact_tile_cost_init(e, n->pbd ? n->pbd : &n->bd, op, tc);
}

int stat_nested_price_input(nested *n, const nested_side *sd, const nested_runs *runs,
                            stat_counts *c)
{
    engine *e = n->e;
    const operand *op = &e->in[sd->op];
    const stat_grid *x = sd->x, *p = sd->p;
    tile_cost cost;
    stat_nested_cost(n, sd->op, &cost);
    pricer pr = stat_pricer_of(&cost);
    uint64_t part = exact_partition_bytes(e, n->bd.b, op->spec_tensor);
    if (price_by_size(n, sd, runs, &pr, part, c))
        return TESSEL_OK;
    int rc = TESSEL_OK;
    for (uint64_t o = 0; !rc && o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
            uint64_t k = x->col[t];
            double uses = k < p->rows ? (double)(p->ptr[k + 1] - p->ptr[k]) : 0;
            price tp = stat_grid_price(&pr, x, t);
            double rt = stat_nested_run_at(runs, t);
            input_uses(c, tp, part, rt, uses);
            if (!rc) /* rule 4 per child read; X is B^T for B */
                rc = stat_ob_tile(e, n->bd.b, sd->op, sd->op ? k : o, sd->op ? o : k, x->nnz[t],
                                  tp, part, rt, uses);
        }
    return rc;
}

/* B as X = B^T against P = A^T. B's side reads only P's ptr and col, and
 * neither A nor B itself (merge_across transposes X again where B is gone):
 * an owned A and B are let go while it runs and rebuilt after as (A^T)^T
 * and (B^T)^T (a grid's columns ascend per row, stat_internal.h, so the
 * round trip gives back the same ptr, col, nnz and occ); a shared A's
 * A^T is made without its counts. B^T is made first, while B alone is
 * alive, and its counts wait in 1 B per tile through the merge walks
 * (nnz_park); A^T goes before B is rebuilt (docs/models/stat.md, "Memory
 * of the nested pass"). */
static int input_b(nested *n, stat_counts *c)
{
    const tessel_allocator *a = n->e->alloc;
    int w = stat_nested_walk_of(n, XJ, XI, n->cf_i, n->b.cols, n->a.rows, n->ext_k);
    stat_grid bt, at;
    memset(&bt, 0, sizeof(bt));
    memset(&at, 0, sizeof(at));
    nnz_pack pk;
    memset(&pk, 0, sizeof(pk));
    int rc = stat_grid_transpose(&n->b, a, &bt);
    int parked_b = !rc && n->b_owned;
    if (parked_b)
        stat_grid_free(a, &n->b);
    if (!rc)
        rc = nnz_park(a, &bt, &pk);
    if (!rc) {
        rc = n->a_owned ? stat_grid_transpose(&n->a, a, &at)
                        : stat_grid_transpose_pattern(&n->a, a, &at);
        if (rc)
            nnz_pack_free(a, &pk);
    }
    int parked_a = !rc && n->a_owned;
    if (parked_a)
        stat_grid_free(a, &n->a);
    if (!rc) {
        nested_side sb = { &bt, &at, XJ, XI, 1, n->cf_i };
        rc = input_side(n, &sb, w, &bt, &pk, c);
    }
    nnz_pack_free(a, &pk); /* where input_side gave up before giving it back */
    if (parked_a && !rc)
        rc = stat_grid_transpose(&at, a, &n->a);
    stat_grid_free(a, &at);
    if (parked_b && !rc)
        rc = stat_grid_transpose(&bt, a, &n->b);
    stat_grid_free(a, &bt);
    return rc;
}

static int inputs(nested *n, stat_outcome *o)
{
    int rc = TESSEL_OK;
    int w = stat_nested_walk_of(n, XI, XJ, n->cf_j, n->a.rows, n->b.cols, n->ext_k);
    nested_side sa = { &n->a, &n->b, XI, XJ, 0, n->cf_j };
    /* an input that reads or gates where its partner is empty: stat_nested_gated.c */
    if (stat_input_mode(n->e, n->bd.b, 0) == STAT_MODE_SKIP)
        rc = input_side(n, &sa, w, NULL, NULL, &o->a);
    if (!rc && stat_input_mode(n->e, n->bd.b, 1) == STAT_MODE_SKIP)
        rc = input_b(n, &o->b);
    if (!rc)
        rc = stat_nested_gated_inputs(n, o);
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
        double coord = e->spec->level[b].coord_bits / 8.0; /* sub-byte widths too */
        r->intersections = model_count(o->operand_nnz[0] + o->operand_nnz[1]);
        r->traffic[b][e->in[0].spec_tensor].child_read_metadata =
            model_count(o->operand_nnz[0] * coord);
        r->traffic[b][e->in[1].spec_tensor].child_read_metadata =
            model_count(o->operand_nnz[1] * coord);
    }
}

/* Forgets the statistics' grids that n shares, so that nested_free
 * leaves them. */
static void nested_unshare(nested *n, int shared_a, int shared_b)
{
    if (shared_a) {
        tessel_dealloc(n->e->alloc, n->a.occ); /* its own (stat_tiledfmt_attach) */
        memset(&n->a, 0, sizeof(n->a));
    }
    if (shared_b) {
        tessel_dealloc(n->e->alloc, n->b.occ);
        memset(&n->b, 0, sizeof(n->b));
    }
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
        /* the tiles' rows when the format reads them (owned by g) */
        return stat_tiledfmt_attach(n->e, in, i, &n->bd, edge, n->e->alloc, g, diag);
    }
    return stat_derive_grid(n->e, in, i, &n->bd, n->e->alloc, g, edge, diag);
}

/* What the summary keeps of a finished evaluation. */
static void record_totals(const nested *n, const stat_outcome *o)
{
    nested_summary *rec = n->rec;
    rec->effectual = o->effectual;
    rec->operand_nnz[0] = o->operand_nnz[0];
    rec->operand_nnz[1] = o->operand_nnz[1];
    rec->out_pairs = o->out_pairs;
    rec->out_runs = o->z_writebacks;
    rec->out_written = n->out_written;
}

int stat_nested_from_summary(engine *e, const boundary *bd, const nested_summary *sm,
                             const stat_output_sample *s)
{
    nested n;
    memset(&n, 0, sizeof(n));
    n.e = e;
    n.bd = *bd;
    stat_outcome o;
    memset(&o, 0, sizeof(o));
    unsigned b = bd->b;
    if (stat_nested_gated_any(e, b)) /* runs by size are a skipping input's */
        return STAT_NESTED_KNOWN_DECLINED;
    for (unsigned i = 0; i < 2; i++) {
        const operand *op = &e->in[i];
        /* the per-tile reads of rule 4 need the tiles themselves */
        if (e->ob[(b - 1) % 2][i].n)
            return STAT_NESTED_KNOWN_DECLINED;
        tile_cost cost;
        exact_tile_cost_init(e, &n.bd, op, &cost);
        pricer pr = stat_pricer_of(&cost);
        if (stat_pricer_needs_rows(&pr)) /* priced per tile (stat_tiledfmt.c) */
            return STAT_NESTED_KNOWN_DECLINED;
        uint64_t part = exact_partition_bytes(e, b, op->spec_tensor);
        stat_counts *c = i ? &o.b : &o.a;
        for (uint64_t d = 0; d < sm->nsizes[i]; d++) {
            price p = stat_fast_price(&pr, sm->size[i][d]);
            double bytes = p.data + p.meta;
            /* kept per tile (stat_bumped.c); at the innermost level too when the
             * compute re-reads inside a tile (stat_inspill.c counts per tile) */
            if ((b + 1 < e->nlev || stat_inspill_on(e, b)) && part && bytes > (double)part)
                return STAT_NESTED_KNOWN_DECLINED;
            /* summed by size instead of by tile: equal while exact */
            if ((sm->runs[i][d] + sm->extra[i][d]) * bytes >= 0x1p52)
                return STAT_NESTED_KNOWN_DECLINED;
            input_uses(c, p, part, sm->runs[i][d], sm->runs[i][d] + sm->extra[i][d]);
        }
    }
    o.effectual = sm->effectual;
    o.operand_nnz[0] = sm->operand_nnz[0];
    o.operand_nnz[1] = sm->operand_nnz[1];
    int rc = stat_nested_output_known(&n, s, sm, &o);
    if (rc)
        return rc;
    stat_nested_store(&n, &o);
    return TESSEL_OK;
}

int stat_nested_evaluate(engine *e, unsigned b, const stat_input *const *in,
                         const stat_output_sample *s, tessel_diag *diag)
{
    return stat_nested_evaluate_rec(e, b, in, s, NULL, diag);
}

int stat_nested_setup(engine *e, unsigned b, const stat_input *const *in, nested *n,
                      int *shared, tessel_diag *diag)
{
    memset(n, 0, sizeof(*n));
    n->e = e;
    n->bd.b = b;
    boundary outer;
    memset(&outer, 0, sizeof(outer));
    outer.b = b - 1;
    int rc = exact_geometry(e, &outer);
    if (!rc)
        rc = exact_geometry(e, &n->bd);
    n->first_digit = outer.ndigits;
    shared[0] = shared[1] = 0;
    if (!rc)
        rc = level_grid(n, in[0], 0, &n->a, n->ea, &shared[0], diag);
    if (!rc)
        rc = level_grid(n, in[1], 1, &n->b, n->eb, &shared[1], diag);
    if (!rc && e->kind == TESSEL_WORKLOAD_SPMSPM && e->in[0].x[1] == e->red[0] &&
        e->in[1].x[0] == e->red[0]) { /* the in-visit steps' lines (stat_outspill.c) */
        n->src[0] = in[0];
        n->src[1] = in[1];
    }
    if (rc) {
        stat_nested_teardown(n, shared);
        return rc;
    }
    return stat_nested_setup_given(n, shared);
}

int stat_nested_setup_given(nested *n, int *shared)
{
    n->a_owned = !shared[0] && !n->a.borrowed;
    n->b_owned = !shared[1] && !n->b.borrowed;
    n->ext_i = n->a.rows;
    n->ext_k = n->a.cols > n->b.rows ? n->a.cols : n->b.rows;
    n->ext_j = n->b.cols;
    n->cf_j = stat_nested_block(&n->bd, XI, XK, XJ);
    n->cf_i = stat_nested_block(&n->bd, XK, XJ, XI);
    n->cf_k = stat_nested_block(&n->bd, XI, XJ, XK);
    int rc = counts_init(n);
    if (rc)
        stat_nested_teardown(n, shared);
    return rc;
}

void stat_nested_teardown(nested *n, const int *shared)
{
    nested_unshare(n, shared[0], shared[1]);
    nested_free(n);
}

void stat_nested_store(nested *n, const stat_outcome *o)
{
    store(n, o);
    exact_algorithmic_counts(n->pe ? n->pe : n->e, n->pbd ? n->pbd : &n->bd);
}

int stat_nested_run(nested *n, const stat_output_sample *s, stat_outcome *o)
{
    memset(o, 0, sizeof(*o));
    int rc = inputs(n, o);
    return rc ? rc : stat_nested_output(n, s, o);
}

int stat_nested_evaluate_rec(engine *e, unsigned b, const stat_input *const *in,
                             const stat_output_sample *s, nested_summary *rec, tessel_diag *diag)
{
    if (!s)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, e->spec->path, 0, 0, NULL,
                               "nested levels price the output from the output sample; "
                               "--output-sample 0 leaves none");
    nested n;
    int shared[2];
    int rc = stat_nested_setup(e, b, in, &n, shared, diag);
    if (!rc) {
        n.rec = rec;
        stat_outcome o;
        memset(&o, 0, sizeof(o));
        rc = inputs(&n, &o);
        if (!rc)
            rc = stat_nested_output(&n, s, &o);
        if (!rc) {
            stat_nested_store(&n, &o);
            if (rec)
                record_totals(&n, &o);
        }
        stat_nested_teardown(&n, shared);
    }
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_oom(diag, NULL, "evaluating a nested boundary's tiles", 0);
    if (rc == TESSEL_ERANGE) /* input_side's bound on a tile's runs */
        return tessel_diag_set(diag, rc, e->spec->path, 0, 0, NULL,
                               "a nested level's tile row holds more than 2^31-1 tiles");
    return rc;
}

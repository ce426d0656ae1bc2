/* Inputs that read or gate their tiles where the partner's tile is empty,
 * at a nested boundary b >= 2 of SpMSpM and SpMV, in closed form (issue 18
 * item 1; docs/models/stat.md "Unskipped and gated inputs at nested
 * levels").
 *
 * The exact walk at boundary b visits, besides the effectual iterations,
 * every iteration in which such an input X's level-b tile is non-empty:
 * the tile (o, k) at each of the F values of its free index f (j for A,
 * i for B), in the composite loop order of levels 1 .. b. Only iterations
 * where X's tile is non-empty touch X, so X's resident tile changes
 * between f and f + 1 exactly when another non-empty X tile is visited in
 * between. Let h be f's outermost loop digit that changes from f to f + 1
 * (the digits of one index nest: digit h changes when its div divides
 * f + 1). The iterations in between keep every digit before h and take
 * any value of the f digits after it; so a tile (o', k') of X comes in
 * between if and only if it shares with (o, k) every o and k digit placed
 * before h (same o / Bo and k / Bk, Bo and Bk the divs of the innermost
 * such digits) and is another tile. Whether (o, k) is alone in that
 * group can only become true as h moves inwards, so per tile there is a
 * first f digit h* at which it is alone: its runs are the blocks of f
 * values of the div of the digit before h* (one run when h* is f's
 * outermost digit; a run per value when it is never alone).
 *
 * Per tile with runs of beta values of f (R = ceil(F / beta) runs), e of
 * them effectual (P's line k non-empty there):
 *  - read: fills R, uses F (rule 4 streams F - R);
 *  - gated (the walk: a run whose first iteration finds the partner empty
 *    is gated, its first effectual iteration fills): fills the runs that
 *    hold a non-empty P tile of line k, gated the runs whose first value
 *    finds P's tile empty, uses e.
 * This is stat_unskipped_inputs (stat_spmspm.c) at one level, where the
 * only digits are level 1's. The partner's and the output's counts are
 * those of the effectual iterations and do not change. Cost: the
 * non-empty level-b tiles of X and P times f's digits, never the
 * effectual iterations.
 *
 * Rule 4 per read (stat_bumped.c): each tile goes to stat_ob_tile with
 * its fills and uses, as the skipping sums' tiles do, so its fills are
 * reads of an overbooked level b-1 tile and a tile that overbooks level b
 * is kept for the per-read charge (the compute's reads at the innermost
 * level, stat_inspill.c; the child's fills above it). SpMV is the same
 * with one value of j. */
#include <string.h>

#include "stat_bumped.h"
#include "stat_closed.h"
#include "stat_nested_gated.h"
#include "stat_tiledfmt.h"

#define WHOLE UINT64_MAX /* no digit: one block holds every value */

int stat_nested_gated_any(const engine *e, unsigned b)
{
    for (unsigned i = 0; i < e->nin && i < 2; i++)
        if (stat_input_mode(e, b, i) != STAT_MODE_SKIP)
            return 1;
    return 0;
}

int stat_nested_gated_nested(const engine *e)
{
    for (unsigned b = 2; b < e->spec->nlevels; b++)
        if (stat_nested_gated_any(e, b))
            return 1;
    return 0;
}

/* One input as a grid g (rows of engine index xr, columns xc; the other
 * index xf free), against its partner's lines k; f's digits that change,
 * outermost first, each with the blocks of g's rows and columns that the
 * digits before it fix. */
typedef struct gside {
    const stat_grid *g;
    unsigned op;                    /* 0 A (rows i, columns k), 1 B (rows k, columns j) */
    unsigned nd;                    /* f's digits */
    uint64_t div[NX * NLEV];
    uint64_t brow[NX * NLEV], bcol[NX * NLEV];
    uint64_t F;                     /* f's level-b tiles */
} gside;

static void side_digits(const nested *n, unsigned xr, unsigned xc, unsigned xf, gside *sd)
{
    uint64_t last_r = WHOLE, last_c = WHOLE;
    sd->nd = 0;
    for (unsigned d = 0; d < n->bd.ndigits; d++) {
        const digit *dg = &n->bd.d[d];
        if (dg->x == xf && dg->radix > 1) {
            sd->div[sd->nd] = dg->div;
            sd->brow[sd->nd] = last_r;
            sd->bcol[sd->nd] = last_c;
            sd->nd++;
        } else if (dg->x == xr) {
            last_r = dg->div;
        } else if (dg->x == xc) {
            last_c = dg->div;
        }
    }
    sd->F = n->bd.ntiles[xf];
}

static uint64_t block_of(uint64_t v, uint64_t size)
{
    return size == WHOLE ? 0 : v / size;
}

/* hstar[t]: the first of f's digits at which tile t is alone in its group
 * (sd->nd: never). cnt: scratch of g's column blocks, zero on entry and exit. */
static void first_alone(const gside *sd, uint32_t *cnt, unsigned char *hstar)
{
    const stat_grid *g = sd->g;
    memset(hstar, (int)sd->nd, g->n);
    for (unsigned h = 0; h < sd->nd; h++) {
        uint64_t br = sd->brow[h], bc = sd->bcol[h];
        for (uint64_t r0 = 0; r0 < g->rows;) {
            uint64_t r1 = br == WHOLE ? g->rows : (r0 / br + 1) * br;
            r1 = r1 < g->rows ? r1 : g->rows;
            uint64_t t0 = g->ptr[r0], t1 = g->ptr[r1];
            for (uint64_t t = t0; t < t1; t++)
                cnt[block_of(g->col[t], bc)]++;
            for (uint64_t t = t0; t < t1; t++)
                if (hstar[t] == sd->nd && cnt[block_of(g->col[t], bc)] == 1)
                    hstar[t] = (unsigned char)h;
            for (uint64_t t = t0; t < t1; t++)
                cnt[block_of(g->col[t], bc)] = 0;
            r0 = r1;
        }
    }
}

/* The block of f values one run of a tile with first-alone digit h holds. */
static uint64_t run_block(const gside *sd, unsigned h)
{
    return h == 0 ? WHOLE : sd->div[h - 1];
}

static uint64_t runs_of(uint64_t F, uint64_t beta)
{
    return beta == WHOLE ? (F > 0) : (F + beta - 1) / beta;
}

/* Per line k of the partner, at runs of beta values of f: the runs that
 * hold a non-empty tile (nb) and the runs whose first value is one (first).
 * A's partner lines are B's rows k over j; B's are A's columns k over i
 * (last: scratch, one per k). */
static void partner_lines(const nested *n, unsigned op, uint64_t beta, uint64_t *nb,
                          uint64_t *first, uint64_t *last)
{
    memset(nb, 0, n->ext_k * sizeof(*nb));
    memset(first, 0, n->ext_k * sizeof(*first));
    if (op == 0) {
        const stat_grid *p = &n->b;
        for (uint64_t k = 0; k < p->rows && k < n->ext_k; k++) {
            uint64_t prev = WHOLE;
            for (uint64_t t = p->ptr[k]; t < p->ptr[k + 1]; t++) {
                uint64_t blk = block_of(p->col[t], beta);
                nb[k] += blk != prev;
                prev = blk;
                first[k] += beta == WHOLE ? p->col[t] == 0 : p->col[t] % beta == 0;
            }
        }
        return;
    }
    const stat_grid *p = &n->a;
    for (uint64_t k = 0; k < n->ext_k; k++)
        last[k] = WHOLE;
    for (uint64_t i = 0; i < p->rows; i++)
        for (uint64_t t = p->ptr[i]; t < p->ptr[i + 1]; t++) {
            uint64_t k = p->col[t], blk = block_of(i, beta);
            if (k >= n->ext_k)
                continue;
            nb[k] += blk != last[k];
            last[k] = blk;
            first[k] += beta == WHOLE ? i == 0 : i % beta == 0;
        }
}

/* k of tile t of the side's grid (A: its column; B: its row). */
static uint64_t tile_k(const stat_grid *g, unsigned op, uint64_t r, uint64_t t)
{
    return op ? r : g->col[t];
}

/* The side's tiles with first-alone digit h into c, each through
 * stat_ob_tile (rule 4 per read: its fills read its level-(b-1) tile
 * where that one is overbooked, and it is kept where it overbooks at
 * level b). lines: nb, first, last (3 x ext_k) for a gated input, else
 * NULL. */
static int price_digit(nested *n, const gside *sd, int mode, unsigned h,
                       const unsigned char *hstar, uint64_t *lines, const pricer *pr,
                       uint64_t part, stat_counts *c)
{
    uint64_t beta = run_block(sd, h), R = runs_of(sd->F, beta);
    const uint64_t *e_k = sd->op ? n->n_a : n->n_b; /* the partner's non-empty tiles of line k */
    uint64_t *nb = lines, *first = lines ? lines + n->ext_k : NULL;
    if (mode == STAT_MODE_GATE)
        partner_lines(n, sd->op, beta, nb, first, lines + 2 * n->ext_k);
    const stat_grid *g = sd->g;
    int rc = TESSEL_OK;
    for (uint64_t r = 0; !rc && r < g->rows; r++)
        for (uint64_t t = g->ptr[r]; !rc && t < g->ptr[r + 1]; t++) {
            if (hstar[t] != h)
                continue;
            price tp = stat_grid_price(pr, g, t);
            double fills = (double)R, uses = (double)sd->F;
            if (mode == STAT_MODE_GATE) {
                uint64_t k = tile_k(g, sd->op, r, t);
                fills = k < n->ext_k ? (double)nb[k] : 0;
                uses = k < n->ext_k ? (double)e_k[k] : 0;
                c->gated += (double)R - (k < n->ext_k ? (double)first[k] : 0);
            }
            stat_add_fill(c, fills, tp, part);
            stat_add_bumped(c, uses - fills, tp, part);
            /* the tile in its operand's modes: A (i, k), B (k, j) */
            rc = stat_ob_tile(n->e, n->bd.b, sd->op, r, g->col[t], g->nnz[t], tp, part, fills,
                              uses);
        }
    return rc;
}

/* Input op of n in mode into c (zeroed here). */
static int gated_side(nested *n, unsigned op, int mode, stat_counts *c)
{
    engine *e = n->e;
    gside sd;
    memset(&sd, 0, sizeof(sd));
    sd.g = op ? &n->b : &n->a;
    sd.op = op;
    if (op == 0)
        side_digits(n, XI, XK, XJ, &sd);
    else
        side_digits(n, XK, XJ, XI, &sd);
    tile_cost cost;
    stat_nested_cost(n, op, &cost);
    pricer pr = stat_pricer_of(&cost);
    uint64_t part = exact_partition_bytes(e, n->bd.b, e->in[op].spec_tensor);
    memset(c, 0, sizeof(*c));
    const tessel_allocator *a = e->alloc;
    unsigned char *hstar = tessel_alloc_array(a, sd.g->n + 1, 1);
    uint32_t *cnt = stat_zeroed(a, sd.g->cols + 1, sizeof(uint32_t));
    uint64_t *lines = mode == STAT_MODE_GATE
                          ? tessel_alloc_array(a, 3 * n->ext_k + 1, sizeof(uint64_t))
                          : NULL;
    int rc = hstar && cnt && (lines || mode != STAT_MODE_GATE) ? TESSEL_OK : TESSEL_ENOMEM;
    if (!rc) {
        first_alone(&sd, cnt, hstar);
        for (unsigned h = 0; !rc && h <= sd.nd; h++)
            rc = price_digit(n, &sd, mode, h, hstar, lines, &pr, part, c);
    }
    tessel_dealloc(a, lines);
    tessel_dealloc(a, cnt);
    tessel_dealloc(a, hstar);
    return rc;
}

int stat_nested_gated_inputs(nested *n, stat_outcome *o)
{
    unsigned b = n->bd.b;
    if (!stat_nested_gated_any(n->e, b))
        return TESSEL_OK;
    if (n->rec)
        n->rec->ok = 0; /* a summary holds a skipping input's runs by size */
    if (n->pe) /* TTM's unfolding: stat_closed_sums_apply walks these */
        return STAT_NESTED_KNOWN_DECLINED;
    for (unsigned i = 0; i < 2; i++) {
        int mode = stat_input_mode(n->e, b, i);
        if (mode == STAT_MODE_SKIP)
            continue;
        int rc = gated_side(n, i, mode, i ? &o->b : &o->a);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

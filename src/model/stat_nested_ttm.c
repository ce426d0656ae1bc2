/* TTM Y[i,x,r] = T[i,x,k] M[k,r] at a nested boundary b >= 2 in closed form
 * (issue 18 item 1): the nested SpMSpM of stat_nested.c on T unfolded to
 * rows of (i, x) tiles against M.
 *
 * The unfolding holds at every level when, at each level 1 .. b, T's two
 * kept modes i and x are adjacent loops (or one of them has no loop there;
 * stat_closed_sums_apply checks it). Then the composite loop key of every
 * level's digits, with each level's i and x digits read as one digit of
 * radix r_i r_x, is the same key as the exact walk's, and the row index
 *
 *     R = the i and x digits of levels 1 .. b, in loop order, read as one
 *         mixed-radix number (each level's digit: its i digit times r_x
 *         plus its x digit, or x major, as that level orders them)
 *
 * is a matrix index whose level-l tile is the contiguous block of the
 * R values below one level-l digit prefix: digit l has div = the product
 * of the radices of the deeper levels' R digits. Every count of the nested
 * pass (runs split by coarse blocks, merges inside and across level b-1
 * tiles, the output's runs per pair) is a function of the digits and of
 * the tiles' occupancy alone, so the unfolded SpMSpM gives TTM's counts.
 * The R values of tiles that fall past a mode's extent (an edge tile holds
 * fewer inner tiles than the radix) are rows with no tile: non-effectual,
 * as the walk treats them.
 *
 * The tiles are priced by the real engine at the real boundary (T's and
 * Y's three-mode shapes; stat_nested_cost), and the dense schedule's
 * algorithmic counts come from it too. Declined (the walk instead, said in
 * stat_path) where this file does not price what the walk would: a tile
 * of an input over its partition at any level (rule 4's child reads and
 * the overflow streaming), an output tile that can outgrow its partition
 * (rule 4 inside a visit), per-rank lists priced from their rows, a
 * sample cell wider than the tile, or more than 2^31 rows. Nor where the
 * walk is cheaper (stat_nested_ttm_cheaper, before any boundary): more
 * than ROWS_PER_ITERATION rows per effectual iteration over the nested
 * boundaries (a hypersparse unfolding at fine tiles). */
#include <string.h>

#include "stat_nested.h"
#include "stat_tiledfmt.h"

/* TTM's engine indices (exact_roles.c): 0 i, 1 x, 2 r, 3 k. */
enum { TI = 0, TX = 1, TR = 2, TK = 3 };
#define ROWS_MAX (UINT64_C(1) << 31)

/* The unfolded problem of boundary b. */
typedef struct unfold {
    engine ue;          /* the unfolded SpMSpM: XI rows (i, x), XJ r, XK k */
    boundary real, ubd; /* the real boundary b and its unfolded digits */
    unsigned first_digit;
    uint64_t rows;      /* R values at level b */
    uint64_t et[3];     /* T's derived tile edges (i, x, k) */
} unfold;

/* R of the level-b (i, x) tile (ib, xb): its i and x digits in loop order. */
static uint64_t row_of(const boundary *bd, uint64_t ib, uint64_t xb)
{
    uint64_t r = 0;
    for (unsigned d = 0; d < bd->ndigits; d++) {
        const digit *g = &bd->d[d];
        if (g->x != TI && g->x != TX)
            continue;
        uint64_t v = (g->x == TI ? ib : xb) / g->div;
        if (!g->first)
            v %= g->radix;
        r = r * g->radix + v;
    }
    return r;
}

/* Digits of levels 1 .. l at boundary b (a digit per finite tile, so the
 * count does not depend on b). */
static int digits_to(engine *e, unsigned l, unsigned *nd)
{
    boundary g;
    memset(&g, 0, sizeof(g));
    g.b = l;
    int rc = exact_geometry(e, &g);
    *nd = g.ndigits;
    return rc;
}

/* The unfolded digits: each level's i and x digits (adjacent) merged into
 * one XI digit, r and k renamed XJ and XK. 1: they are not adjacent. */
static int merge_digits(engine *e, unfold *u)
{
    static const unsigned rename[4] = { XI, XI, XJ, XK };
    boundary *ub = &u->ubd;
    unsigned from = 0, rdig[NX * NLEV], nr = 0;
    for (unsigned l = 1; l <= u->real.b; l++) {
        unsigned to;
        if (digits_to(e, l, &to))
            return TESSEL_EINVAL;
        int open = -1; /* this level's merged R digit */
        for (unsigned d = from; d < to; d++) {
            const digit *g = &u->real.d[d];
            if (g->x != TI && g->x != TX) {
                ub->d[ub->ndigits] = *g;
                ub->d[ub->ndigits++].x = rename[g->x];
                continue;
            }
            if (open >= 0 && (unsigned)open + 1 != ub->ndigits)
                return STAT_NESTED_KNOWN_DECLINED; /* i and x apart */
            if (open >= 0) {
                ub->d[open].radix *= g->radix;
                continue;
            }
            open = (int)ub->ndigits;
            rdig[nr++] = ub->ndigits;
            digit *m = &ub->d[ub->ndigits++];
            m->x = XI;
            m->radix = g->radix;
            m->first = nr == 1;
        }
        if (l + 1 == u->real.b)
            u->first_digit = ub->ndigits;
        from = to;
    }
    uint64_t w = 1;
    for (unsigned q = nr; q-- > 0;) {
        ub->d[rdig[q]].div = w;
        if (ub->d[rdig[q]].radix && w > ROWS_MAX / ub->d[rdig[q]].radix)
            return STAT_NESTED_KNOWN_DECLINED;
        w *= ub->d[rdig[q]].radix;
    }
    u->rows = w;
    return TESSEL_OK;
}

/* The unfolded engine and boundary of the real boundary b. */
static int unfold_init(engine *e, unsigned b, unfold *u)
{
    memset(u, 0, sizeof(*u));
    u->real.b = b;
    u->ubd.b = b;
    int rc = exact_geometry(e, &u->real);
    if (!rc)
        rc = merge_digits(e, u);
    if (rc)
        return rc;
    boundary *ub = &u->ubd, *rb = &u->real;
    ub->tile[XI] = rb->tile[TI] * rb->tile[TX];
    ub->tile[XJ] = rb->tile[TR];
    ub->tile[XK] = rb->tile[TK];
    ub->ntiles[XI] = u->rows;
    ub->ntiles[XJ] = rb->ntiles[TR];
    ub->ntiles[XK] = rb->ntiles[TK];
    ub->red_space = rb->red_space;
    engine *ue = &u->ue;
    *ue = *e;
    ue->nx = 3;
    ue->extent[XI] = u->rows * ub->tile[XI];
    ue->extent[XJ] = e->extent[TR];
    ue->extent[XK] = e->extent[TK];
    ue->spec_index[XI] = e->spec_index[TI];
    ue->spec_index[XJ] = e->spec_index[TR];
    ue->spec_index[XK] = e->spec_index[TK];
    ue->in[0].order = 2;
    ue->in[0].x[0] = XI;
    ue->in[0].x[1] = XK;
    for (unsigned m = 0; m < 2; m++)
        ue->in[1].x[m] = e->in[1].x[m] == TK ? XK : XJ;
    ue->out.order = 2;
    ue->out.x[0] = XI;
    ue->out.x[1] = XJ;
    ue->nred = 1;
    ue->red[0] = XK;
    return TESSEL_OK;
}

/* T's grid at level b in R rows (n->a), its edges (n->ea: R tiles of one
 * row, k), and M's (n->b, n->eb). */
static int unfold_grids(unfold *u, const stat_input *const *in, nested *n, tessel_diag *diag)
{
    engine *e = &u->ue;
    const stat_input *t = in[0];
    for (unsigned m = 0; m < 3; m++) {
        int rc = stat_derived_edge(n->pe, &u->real, n->pe->in[0].x[m], t->grid->tile[m], &u->et[m],
                                   diag);
        if (rc)
            return rc;
    }
    uint64_t fi = u->et[0] / t->grid->tile[0], fx = u->et[1] / t->grid->tile[1],
             fk = u->et[2] / t->grid->tile[2];
    uint64_t icells = t->grid->extent[0], xcells = t->grid->extent[1];
    uint64_t xt = (xcells + fx - 1) / fx, nr = 0;
    /* the non-empty (i, x) tiles' rows (each pair has its own R < rows <= 2^31) */
    uint64_t *rowpair = tessel_alloc_array(e->alloc, t->base->n + 1, sizeof(uint64_t));
    if (!rowpair)
        return TESSEL_ENOMEM;
    for (uint64_t q = 0; q < t->base->rows; q++)
        if (t->base->ptr[q + 1] > t->base->ptr[q]) {
            uint64_t i = q / xcells / fi, x = q % xcells / fx;
            rowpair[nr++] = row_of(&u->real, i, x) << 32 | (i * xt + x);
        }
    tessel_sort_u64_inplace(rowpair, nr, UINT64_MAX);
    uint64_t kept = 0;
    for (uint64_t q = 0; q < nr; q++)
        if (!kept || rowpair[q] != rowpair[kept - 1])
            rowpair[kept++] = rowpair[q];
    int rc = stat_grid_coarsen_mapped(t->base, icells, xcells, fi, fx, fk, rowpair, kept, u->rows,
                                      e->alloc, &n->a);
    tessel_dealloc(e->alloc, rowpair);
    n->ea[0] = 1;
    n->ea[1] = u->et[2];
    if (!rc)
        rc = stat_derive_grid(e, in[1], 1, &u->ubd, e->alloc, &n->b, n->eb, diag);
    return rc;
}

/* The output sample with its (i, x) cells as R rows (base 1 along R), or
 * STAT_NESTED_KNOWN_DECLINED when a cell is wider than a tile. */
static int unfold_sample(const unfold *u, const stat_output_sample *s, stat_output_sample *us,
                         uint32_t **ci)
{
    if (!s->cx || u->et[0] % s->base[0] || u->et[1] % s->base[3])
        return STAT_NESTED_KNOWN_DECLINED;
    *ci = tessel_alloc_array(u->ue.alloc, s->ncells + 1, sizeof(uint32_t));
    if (!*ci)
        return TESSEL_ENOMEM;
    for (uint64_t c = 0; c < s->ncells; c++)
        (*ci)[c] = (uint32_t)row_of(&u->real, (uint64_t)s->ci[c] * s->base[0] / u->et[0],
                                    (uint64_t)s->cx[c] * s->base[3] / u->et[1]);
    *us = *s;
    us->ci = *ci;
    us->cx = NULL;
    us->base[0] = 1;
    /* the prior and the ratio on the rows' nonzeros are per i cell: off */
    us->nxcell = 0;
    us->xcell = us->vcell = us->scell = NULL;
    us->xexact = 0;
    us->nfk = 0;
    us->fknnz = NULL;
    return TESSEL_OK;
}

/* What this file does not price, before the pass: overbooked tiles above,
 * per-rank lists priced from their rows, an output tile over its partition. */
static int priced_here(const nested *n)
{
    engine *e = n->pe;
    for (unsigned q = 0; q < 2; q++)
        for (unsigned i = 0; i < NIN; i++)
            if (e->ob[q][i].n)
                return 0;
    for (unsigned op = 0; op < 2; op++) {
        tile_cost c;
        if (stat_nested_cost(n, op, &c))
            return 0;
        pricer pr = stat_pricer_of(&c);
        if (stat_pricer_needs_rows(&pr))
            return 0;
    }
    tile_cost cz;
    if (stat_nested_cost(n, NESTED_OUT, &cz))
        return 0;
    uint64_t cells = n->bd.tile[XI] * n->bd.tile[XJ], d, m;
    exact_tile_bytes(&cz, cells ? cells : 1, NULL, &d, &m);
    uint64_t part = exact_partition_bytes(e, n->bd.b, 0);
    return !part || d + m <= part;
}

/* After the pass: no input tile over its partition at this level. */
static int fits(const unfold *u, const stat_outcome *o)
{
    for (unsigned q = 0; q < 2; q++)
        for (unsigned i = 0; i < NIN; i++)
            if (u->ue.ob[q][i].n)
                return 0;
    return o->a.overflow_fills <= 0 && o->b.overflow_fills <= 0;
}

/* The distinct level-b tiles of a base grid of rows (a, b) = (q / bdiv,
 * q % bdiv) and columns c: key (a / fa * nb + b / fb) * nc + c / fc,
 * sorted into keys; their count. */
static uint64_t distinct_tiles(const stat_grid *g, uint64_t bdiv, uint64_t fa, uint64_t fb,
                               uint64_t fc, uint64_t *keys)
{
    uint64_t nb = (bdiv + fb - 1) / fb, nc = (g->cols + fc - 1) / fc, n = 0;
    for (uint64_t q = 0; q < g->rows; q++)
        for (uint64_t t = g->ptr[q]; t < g->ptr[q + 1]; t++)
            keys[n++] = ((q / bdiv / fa) * nb + q % bdiv / fb) * nc + g->col[t] / fc;
    tessel_sort_u64_inplace(keys, n, UINT64_MAX);
    uint64_t kept = 0;
    for (uint64_t q = 0; q < n; q++)
        if (!kept || keys[q] != keys[kept - 1])
            keys[kept++] = keys[q];
    return kept;
}

/* Boundary b's rows (ROWS) and effectual iterations, sum over K of T's
 * tiles in column K times M's in row K (EFF); 1 when they are unknown,
 * TESSEL_ENOMEM. */
static int rows_and_iterations(engine *e, unsigned b, const stat_input *const *in, double *rows,
                               double *eff)
{
    unfold u;
    uint64_t em[2];
    if (unfold_init(e, b, &u))
        return 1;
    for (unsigned m = 0; m < 3; m++)
        if (stat_derived_edge(e, &u.real, e->in[0].x[m], in[0]->grid->tile[m], &u.et[m], NULL))
            return 1;
    for (unsigned m = 0; m < 2; m++)
        if (stat_derived_edge(e, &u.real, e->in[1].x[m], in[1]->grid->tile[m], &em[m], NULL))
            return 1;
    const stat_grid *t = in[0]->base, *m = in[1]->base;
    const uint64_t *tb = in[0]->grid->tile, *mb = in[1]->grid->tile;
    uint64_t fk = u.et[2] / tb[2], nk = (t->cols + fk - 1) / fk;
    uint64_t *keys = tessel_alloc_array(e->alloc, t->n + m->n + 1, sizeof(uint64_t));
    double *per_k = stat_zeroed(e->alloc, nk + 1, sizeof(double));
    int rc = keys && per_k ? TESSEL_OK : TESSEL_ENOMEM;
    if (!rc) {
        /* T's tiles per K, then M's (rows k, columns r) weighted by them */
        uint64_t n = distinct_tiles(t, in[0]->grid->extent[1], u.et[0] / tb[0], u.et[1] / tb[1],
                                    fk, keys);
        for (uint64_t q = 0; q < n; q++)
            per_k[keys[q] % nk] += 1;
        n = distinct_tiles(m, 1, em[0] / mb[0], 1, em[1] / mb[1], keys);
        uint64_t nr = (m->cols + em[1] / mb[1] - 1) / (em[1] / mb[1]);
        *eff = 0;
        for (uint64_t q = 0; q < n; q++)
            *eff += keys[q] / nr < nk ? per_k[keys[q] / nr] : 0;
        *rows = (double)u.rows;
    }
    tessel_dealloc(e->alloc, keys);
    tessel_dealloc(e->alloc, per_k);
    return rc;
}

/* The pass costs about its rows (the merge walks, the output's tables per
 * row and per prefix), the walk its effectual iterations: on the bundled
 * bitcoin-otc tensor the pass took 1.06x the walk's instructions at 10
 * rows per effectual iteration, 2.3x at 18, 0.32x at 0.35 (docs/models/
 * stat.md, "TTM at nested levels"); on a skewed and a uniform synthetic
 * tensor and bitcoin-otc at 3 levels, the pass was no cheaper than the
 * walk from about 4.4 rows per iteration up (1.3x the walk's CPU on the
 * skewed one at 4.4-4.6, 2.2x at 10-12; "TTM's walk-cheaper threshold on
 * two more inputs"). Past this many the walk is cheaper. */
#define ROWS_PER_ITERATION 4.0

int stat_nested_ttm_cheaper(engine *e, const stat_input *const *in, int *cheaper)
{
    double rows = 0, eff = 0;
    *cheaper = 1;
    for (unsigned b = 2; b < e->nlev; b++) {
        double r, x;
        int rc = rows_and_iterations(e, b, in, &r, &x);
        if (rc == TESSEL_ENOMEM) /* not the closed path for want of memory */
            return rc;
        if (rc)
            return TESSEL_OK; /* unknown: the closed path says why */
        rows += r;
        eff += x;
    }
    *cheaper = rows <= ROWS_PER_ITERATION * eff;
    return TESSEL_OK;
}

int stat_nested_ttm(engine *e, unsigned b, const stat_input *const *in,
                    const stat_output_sample *s, tessel_diag *diag)
{
    if (!s)
        return STAT_NESTED_KNOWN_DECLINED;
    unfold u;
    int rc = unfold_init(e, b, &u);
    if (rc)
        return rc == TESSEL_EINVAL ? STAT_NESTED_KNOWN_DECLINED : rc;
    nested n;
    memset(&n, 0, sizeof(n));
    n.e = &u.ue;
    n.bd = u.ubd;
    n.first_digit = u.first_digit;
    n.pe = e;
    n.pbd = &u.real;
    if (!priced_here(&n))
        return STAT_NESTED_KNOWN_DECLINED;
    int shared[2] = { 0, 0 };
    rc = unfold_grids(&u, in, &n, diag);
    if (rc) {
        stat_nested_teardown(&n, shared);
        return rc;
    }
    rc = stat_nested_setup_given(&n, shared); /* tears n down on failure */
    if (rc)
        return rc;
    stat_output_sample us;
    uint32_t *ci = NULL;
    rc = unfold_sample(&u, s, &us, &ci);
    stat_outcome o;
    if (!rc)
        rc = stat_nested_run(&n, &us, &o);
    memcpy(e->ob, u.ue.ob, sizeof(e->ob)); /* what stat_ob_tile recorded: e's to free */
    if (!rc && !fits(&u, &o))
        rc = STAT_NESTED_KNOWN_DECLINED;
    if (!rc)
        stat_nested_store(&n, &o);
    tessel_dealloc(e->alloc, ci);
    stat_nested_teardown(&n, shared);
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_oom(diag, NULL, "evaluating a nested boundary of TTM", 0);
    return rc;
}

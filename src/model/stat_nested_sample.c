/* The nested boundaries (b >= 2) of an SpMSpM point in bounded time: when
 * their work exceeds a budget, they are evaluated on a sample of level 1's
 * i strips and the counts scaled by a ratio estimator (issue 18 item 1).
 *
 * Why strips of level 1's i tile: every inner tile of A and of Z lies in
 * one strip, the merges of runs inside and across level b-1 tiles see only
 * the strip's rows, and B's runs at boundary b are split by the coarse i
 * block cf_i (stat_nested_block), which nests in the strip, so every count of
 * the nested boundaries is a sum over strips, up to the runs that merge
 * from one strip's last tile into the next (an edge effect: one run per
 * strip boundary at most). stat_nested_evaluate itself runs unchanged on
 * statistics restricted to the chosen strips (A's rows, the rows of B they
 * meet, the output sample's cells in them), so the sampled strips are
 * priced exactly as the full path prices them.
 *
 * The estimator. Each strip u has a known weight w_u, its base-level tile
 * multiplies (A's base tiles times B's base tiles in their row K): the
 * cost driver and a covariate of every count. Strips with w_u above a
 * threshold are taken whole; the others are drawn systematically with one
 * probability p in storage order and split into G interleaved groups. A
 * count is Y = Y_whole + (sum_g Y_g) * X_rest / (sum_g x_g): the ratio
 * estimator calibrated to the known total X_rest of the covariate
 * (approximately unbiased, bias O(1/n)); its standard error comes from the
 * spread of the G groups' own ratio estimates (random groups). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model_internal.h"
#include "stat_nested.h"
#include "stat_nested_gated.h"
#include "stat_nested_sample.h"

#define GROUPS 4

/* The counts that add over strips; partition_bytes and worst_tile_bytes
 * are not sums (kept as the largest seen), algorithmic and skipped are
 * recomputed from the geometry. */
static const size_t additive[] = {
    offsetof(tessel_traffic, fills),
    offsetof(tessel_traffic, updates),
    offsetof(tessel_traffic, writebacks),
    offsetof(tessel_traffic, reads),
    offsetof(tessel_traffic, data_bytes),
    offsetof(tessel_traffic, metadata_bytes),
    offsetof(tessel_traffic, in_data),
    offsetof(tessel_traffic, in_metadata),
    offsetof(tessel_traffic, out_data),
    offsetof(tessel_traffic, out_metadata),
    offsetof(tessel_traffic, child_read_data),
    offsetof(tessel_traffic, child_read_metadata),
    offsetof(tessel_traffic, child_write_data),
    offsetof(tessel_traffic, child_write_metadata),
    offsetof(tessel_traffic, gated),
    offsetof(tessel_traffic, bumped_bytes),
    offsetof(tessel_traffic, overflow_tiles),
    offsetof(tessel_traffic, overflow_bytes),
};
#define NADD (sizeof(additive) / sizeof(additive[0]))
/* per call: NADD per (level, tensor), then overflow_tiles, intersections,
 * effectual_tiles per level */
#define SLOT(l, t, f) ((((size_t)(l)) * TESSEL_SPEC_MAX_TENSORS + (t)) * NADD + (f))
#define NTRAFFIC ((size_t)TESSEL_SPEC_MAX_LEVELS * TESSEL_SPEC_MAX_TENSORS * NADD)
#define NVALUES (NTRAFFIC + 2 + TESSEL_SPEC_MAX_LEVELS)

static uint64_t *field(tessel_traffic *t, size_t f)
{
    return (uint64_t *)(void *)((char *)t + additive[f]);
}

static double got(const tessel_traffic *t, size_t f)
{
    uint64_t v;
    memcpy(&v, (const char *)t + additive[f], sizeof(v));
    return (double)v;
}

/* The plan: units (strips) and which call evaluates each. */
typedef struct plan {
    uint64_t units, rows_per_unit; /* base rows of A per strip */
    uint64_t cell_div;             /* sample cells per strip along i */
    double *w;                     /* weight per strip: base tile multiplies */
    double *z;                     /* Z's covariate per strip (strip_output_weights) */
    signed char *call;             /* -1: left out, 0: whole, 1..G: group */
    double x_total, x_whole, x_group[GROUPS + 1];
    double z_total, z_whole, z_group[GROUPS + 1];
    unsigned groups;
} plan;

static uint64_t mix(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Z's covariate per strip: the rows' exact output nonzeros when the
 * sample has them (rule 3's count, s->xexact), else the output sample's
 * weight in the strip; either is known for every strip. */
static void strip_output_weights(const stat_output_sample *s, plan *pl)
{
    if (s->xexact && s->xcell) {
        for (uint64_t c = 0; c < s->nxcell; c++) {
            uint64_t u = c / pl->cell_div;
            if (u < pl->units)
                pl->z[u] += s->xcell[c];
        }
        return;
    }
    for (uint64_t q = 0; q < s->ncells; q++) {
        uint64_t u = s->ci[q] / pl->cell_div;
        if (u < pl->units)
            pl->z[u] += s->weight[q];
    }
}

/* The strip edge along i: level 1's i tile (the merges of runs inside and
 * across level b-1 tiles see every row of the tile that holds them), and a
 * multiple of every boundary b >= 2's coarse i block (cf_i level-b tiles,
 * stat_nested_block), so that B's runs never span two strips and B's
 * counts add over strips; 0 when some boundary does not split B's runs by
 * i. */
static uint64_t strip_edge(engine *e)
{
    uint64_t strip = exact_level_edge(e, 1, XI);
    for (unsigned b = 2; strip && b < e->nlev; b++) {
        boundary bd;
        memset(&bd, 0, sizeof(bd));
        bd.b = b;
        if (exact_geometry(e, &bd))
            return 0;
        uint64_t cf = stat_nested_block(&bd, XK, XJ, XI);
        uint64_t edge = exact_level_edge(e, b, XI);
        if (cf == UINT64_MAX || !edge || cf > e->extent[XI] / edge + 1)
            return 0;
        uint64_t block = cf * edge;
        strip = strip / tessel_gcd(strip, block) * block;
        if (strip >= e->extent[XI])
            return 0;
    }
    return strip;
}

/* The rows [lo, hi) of B's base grid that A's base column k overlaps. */
static void b_rows_of(const stat_input *const *in, uint64_t k, uint64_t *lo, uint64_t *hi)
{
    uint64_t ga = in[0]->grid->tile[1], gb = in[1]->grid->tile[0], rows = in[1]->base->rows;
    *lo = k * ga / gb;
    *hi = ((k + 1) * ga + gb - 1) / gb;
    if (*hi > rows)
        *hi = rows;
    if (*lo > *hi)
        *lo = *hi;
}

/* Strip weights; 0 with the plan's sizes set, 1 when the point does not
 * qualify (the full path prices it). */
static int plan_weights(engine *e, const stat_input *const *in, const stat_output_sample *s,
                        plan *pl)
{
    const stat_grid *a = in[0]->base, *bg = in[1]->base;
    if (e->kind != TESSEL_WORKLOAD_SPMSPM || e->nlev > 4 || !a || !bg || s->nelems ||
        e->in[0].x[0] != XI || e->in[0].x[1] != XK || e->in[1].x[0] != XK ||
        e->in[1].x[1] != XJ)
        return 1;
    uint64_t strip = strip_edge(e), g0 = in[0]->grid->tile[0];
    if (!strip || strip % g0 || strip % s->base[0])
        return 1;
    pl->rows_per_unit = strip / g0;
    pl->cell_div = strip / s->base[0];
    pl->units = (a->rows + pl->rows_per_unit - 1) / pl->rows_per_unit;
    if (pl->units < 2 * GROUPS)
        return 1;
    pl->w = stat_zeroed(e->alloc, pl->units, sizeof(double));
    pl->z = stat_zeroed(e->alloc, pl->units, sizeof(double));
    pl->call = stat_zeroed(e->alloc, pl->units, 1);
    if (!pl->w || !pl->z || !pl->call)
        return TESSEL_ENOMEM;
    strip_output_weights(s, pl);
    /* B's base tiles in the rows of B that A's base column K overlaps
     * (the two grids' k edges may differ) */
    double *nb = stat_zeroed(e->alloc, a->cols ? a->cols : 1, sizeof(double));
    if (!nb)
        return TESSEL_ENOMEM;
    for (uint64_t k = 0; k < a->cols; k++) {
        uint64_t lo, hi;
        b_rows_of(in, k, &lo, &hi);
        for (uint64_t r = lo; r < hi; r++)
            nb[k] += (double)(bg->ptr[r + 1] - bg->ptr[r]);
    }
    for (uint64_t r = 0; r < a->rows; r++) {
        double w = 0;
        for (uint64_t t = a->ptr[r]; t < a->ptr[r + 1]; t++)
            w += a->col[t] < a->cols ? nb[a->col[t]] : 0;
        pl->w[r / pl->rows_per_unit] += w;
        pl->x_total += w;
    }
    tessel_dealloc(e->alloc, nb);
    return 0;
}

/* Strips taken whole (weight at least tau, at most half the budget's
 * worth), the rest drawn systematically with one probability. 1 when the
 * budget covers everything or too few strips are drawn. */
static int plan_draw(plan *pl, double budget, uint64_t seed)
{
    if (pl->x_total <= budget)
        return 1;
    double tau = budget / 16;
    for (int iter = 0; iter < 64; iter++) {
        double whole = 0;
        for (uint64_t u = 0; u < pl->units; u++)
            if (pl->w[u] >= tau)
                whole += pl->w[u];
        if (whole <= budget / 2) {
            pl->x_whole = whole;
            break;
        }
        tau *= 2;
    }
    double rest = pl->x_total - pl->x_whole;
    if (rest <= 0)
        return 1;
    double p = (budget - pl->x_whole) / rest;
    if (p >= 1)
        return 1;
    /* systematic: a strip is drawn where the running sum of p crosses an
     * integer plus the seeded start */
    double acc = (double)(mix(seed) >> 11) * 0x1.0p-53 * 1.0;
    uint64_t drawn = 0;
    for (uint64_t u = 0; u < pl->units; u++) {
        if (pl->w[u] >= tau) {
            pl->call[u] = 0;
            continue;
        }
        double before = acc;
        acc += p;
        if (floor(acc) > floor(before))
            pl->call[u] = (signed char)(1 + drawn++ % GROUPS);
        else
            pl->call[u] = -1;
    }
    pl->groups = GROUPS;
    if (drawn < 2 * GROUPS)
        return 1;
    for (uint64_t u = 0; u < pl->units; u++) {
        pl->z_total += pl->z[u];
        if (pl->call[u] == 0)
            pl->z_whole += pl->z[u];
        if (pl->call[u] > 0) {
            pl->x_group[pl->call[u]] += pl->w[u];
            pl->z_group[pl->call[u]] += pl->z[u];
        }
    }
    for (unsigned g = 1; g <= GROUPS; g++)
        if (pl->x_group[g] <= 0)
            return 1;
    return 0;
}

/* A's base grid with only the strips of call c, and B's with only the rows
 * those strips meet. */
static int restrict_inputs(const engine *e, const stat_input *const *in, const plan *pl, int c,
                           stat_grid *ra, stat_grid *rb)
{
    const tessel_allocator *al = e->alloc;
    const stat_grid *a = in[0]->base, *b = in[1]->base;
    ra->rows = a->rows;
    ra->cols = a->cols;
    rb->rows = b->rows;
    rb->cols = b->cols;
    ra->ptr = tessel_alloc_array(al, a->rows + 1, sizeof(uint64_t));
    rb->ptr = tessel_alloc_array(al, b->rows + 1, sizeof(uint64_t));
    unsigned char *meet = stat_zeroed(al, b->rows ? b->rows : 1, 1);
    if (!ra->ptr || !rb->ptr || !meet) {
        tessel_dealloc(al, meet);
        return TESSEL_ENOMEM;
    }
    uint64_t na = 0, nb = 0;
    for (uint64_t r = 0; r < a->rows; r++)
        if (pl->call[r / pl->rows_per_unit] == c)
            na += a->ptr[r + 1] - a->ptr[r];
    ra->col = tessel_alloc_array(al, na ? na : 1, sizeof(uint32_t));
    ra->nnz = tessel_alloc_array(al, na ? na : 1, sizeof(uint32_t));
    if (!ra->col || !ra->nnz) {
        tessel_dealloc(al, meet);
        return TESSEL_ENOMEM;
    }
    ra->ptr[0] = 0;
    for (uint64_t r = 0; r < a->rows; r++) {
        ra->ptr[r + 1] = ra->ptr[r];
        if (pl->call[r / pl->rows_per_unit] != c)
            continue;
        for (uint64_t t = a->ptr[r]; t < a->ptr[r + 1]; t++) {
            ra->col[ra->ptr[r + 1]] = a->col[t];
            ra->nnz[ra->ptr[r + 1]++] = a->nnz[t];
            uint64_t lo, hi;
            b_rows_of(in, a->col[t], &lo, &hi);
            for (uint64_t q = lo; q < hi; q++)
                meet[q] = 1;
        }
    }
    ra->n = na;
    for (uint64_t k = 0; k < b->rows; k++)
        if (meet[k])
            nb += b->ptr[k + 1] - b->ptr[k];
    rb->col = tessel_alloc_array(al, nb ? nb : 1, sizeof(uint32_t));
    rb->nnz = tessel_alloc_array(al, nb ? nb : 1, sizeof(uint32_t));
    if (!rb->col || !rb->nnz) {
        tessel_dealloc(al, meet);
        return TESSEL_ENOMEM;
    }
    rb->ptr[0] = 0;
    for (uint64_t k = 0; k < b->rows; k++) {
        rb->ptr[k + 1] = rb->ptr[k];
        if (!meet[k])
            continue;
        uint64_t len = b->ptr[k + 1] - b->ptr[k];
        memcpy(rb->col + rb->ptr[k], b->col + b->ptr[k], len * sizeof(*rb->col));
        memcpy(rb->nnz + rb->ptr[k], b->nnz + b->ptr[k], len * sizeof(*rb->nnz));
        rb->ptr[k + 1] += len;
    }
    rb->n = nb;
    tessel_dealloc(al, meet);
    return TESSEL_OK;
}

/* The first group in [lo, hi) of the output sample whose cells lie at i
 * cell >= key (a group is one (i, x, j) cell, groups sorted by it). */
static uint64_t group_at(const stat_output_sample *s, uint64_t lo, uint64_t hi, uint64_t key)
{
    while (lo < hi) {
        uint64_t m = lo + (hi - lo) / 2;
        if (s->ci[s->gstart[m]] < key)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* The cells [*c0, *c1) and groups [*g0, *g1) of strip u. */
static void strip_cells(const stat_output_sample *s, const plan *pl, uint64_t u, uint64_t *g0,
                        uint64_t *g1, uint64_t *c0, uint64_t *c1)
{
    *g0 = group_at(s, 0, s->ngroups, u * pl->cell_div);
    *g1 = group_at(s, *g0, s->ngroups, (u + 1) * pl->cell_div);
    *c0 = *g0 < s->ngroups ? s->gstart[*g0] : s->ncells;
    *c1 = *g1 < s->ngroups ? s->gstart[*g1] : s->ncells;
}

static void sample_free(const tessel_allocator *al, stat_output_sample *r)
{
    tessel_dealloc(al, r->ci);
    tessel_dealloc(al, r->cx);
    tessel_dealloc(al, r->cj);
    tessel_dealloc(al, r->ck);
    tessel_dealloc(al, r->weight);
    tessel_dealloc(al, r->gstart);
    memset(r, 0, sizeof(*r));
}

/* The output sample's cells in the strips of call c (cells are sorted by
 * i first, so each strip is one range; groups never straddle strips). */
static int restrict_sample(const engine *e, const stat_output_sample *s, const plan *pl, int c,
                           stat_output_sample *r)
{
    const tessel_allocator *al = e->alloc;
    *r = *s;
    r->ci = r->cx = r->cj = r->ck = NULL;
    r->weight = NULL;
    r->gstart = NULL;
    uint64_t n = 0, ng = 0;
    for (uint64_t u = 0; u < pl->units; u++)
        if (pl->call[u] == c) {
            uint64_t g0, g1, lo, hi;
            strip_cells(s, pl, u, &g0, &g1, &lo, &hi);
            n += hi - lo;
            ng += g1 - g0;
        }
    uint64_t m = n ? n : 1;
    r->ci = tessel_alloc_array(al, m, sizeof(uint32_t));
    r->cx = s->cx ? tessel_alloc_array(al, m, sizeof(uint32_t)) : NULL;
    r->cj = tessel_alloc_array(al, m, sizeof(uint32_t));
    r->ck = tessel_alloc_array(al, m, sizeof(uint32_t));
    r->weight = tessel_alloc_array(al, m, sizeof(float));
    r->gstart = tessel_alloc_array(al, ng + 1, sizeof(uint32_t));
    if (!r->ci || (s->cx && !r->cx) || !r->cj || !r->ck || !r->weight || !r->gstart)
        return TESSEL_ENOMEM;
    uint64_t at = 0, g = 0;
    double nnz = 0;
    for (uint64_t u = 0; u < pl->units; u++) {
        if (pl->call[u] != c)
            continue;
        uint64_t g0, g1, lo, hi;
        strip_cells(s, pl, u, &g0, &g1, &lo, &hi);
        for (uint64_t q = g0; q < g1; q++)
            r->gstart[g++] = (uint32_t)(s->gstart[q] - lo + at);
        size_t len = (size_t)(hi - lo);
        memcpy(r->ci + at, s->ci + lo, len * sizeof(uint32_t));
        if (s->cx)
            memcpy(r->cx + at, s->cx + lo, len * sizeof(uint32_t));
        memcpy(r->cj + at, s->cj + lo, len * sizeof(uint32_t));
        memcpy(r->ck + at, s->ck + lo, len * sizeof(uint32_t));
        memcpy(r->weight + at, s->weight + lo, len * sizeof(float));
        for (uint64_t q = lo; q < hi; q++)
            nnz += s->weight[q];
        at += hi - lo;
    }
    r->gstart[g] = (uint32_t)at;
    r->ncells = at;
    r->ngroups = g;
    r->nnz = nnz;
    return TESSEL_OK;
}

/* One call: boundaries 2 .. nlev-1 on the strips of call c, into v (the
 * change of every additive count from base), and the child reads it adds
 * to level 1's overbooked tiles into child[i][tile] (restored after). */
static int run_call(engine *e, const stat_input *const *in, const stat_output_sample *s,
                    const plan *pl, int c, const tessel_result *base, tessel_result *scratch,
                    double *v, double *const child[NIN], tessel_diag *diag)
{
    const tessel_allocator *al = e->alloc;
    stat_grid ra, rb;
    memset(&ra, 0, sizeof(ra));
    memset(&rb, 0, sizeof(rb));
    stat_output_sample rs;
    memset(&rs, 0, sizeof(rs));
    int rc = restrict_inputs(e, in, pl, c, &ra, &rb);
    if (!rc)
        rc = restrict_sample(e, s, pl, c, &rs);
    stat_input ia = *in[0], ib = *in[1];
    ia.base = &ra;
    ib.base = &rb;
    const stat_input *rin[NIN] = { &ia, &ib, NULL };
    tessel_result *keep = e->res;
    *scratch = *base;
    e->res = scratch;
    uint64_t *saved[NIN] = { NULL, NULL, NULL };
    for (unsigned i = 0; !rc && i < e->nin && i < NIN; i++) {
        const ob_table *t = &e->ob[1][i];
        if (!t->n)
            continue;
        saved[i] = tessel_alloc_array(al, t->n, sizeof(uint64_t));
        if (!saved[i])
            rc = TESSEL_ENOMEM;
        for (uint64_t q = 0; !rc && q < t->n; q++)
            saved[i][q] = t->t[q].child_nnz;
    }
    for (unsigned b = 2; !rc && b < e->nlev; b++) {
        rc = stat_nested_evaluate(e, b, rin, &rs, diag);
        if (!rc && b >= 3)
            exact_ob_settle(e, b - 1); /* level 1's is settled once, after every call */
    }
    for (unsigned i = 0; i < e->nin && i < NIN; i++) {
        ob_table *t = &e->ob[1][i];
        for (uint64_t q = 0; saved[i] && q < t->n; q++) {
            child[i][q] += (double)t->t[q].child_nnz - (double)saved[i][q];
            t->t[q].child_nnz = saved[i][q];
        }
        tessel_dealloc(al, saved[i]);
    }
    e->res = keep;
    for (unsigned l = 1; !rc && l < e->nlev; l++)
        for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++)
            for (size_t f = 0; f < NADD; f++)
                v[SLOT(l, t, f)] = got(&scratch->traffic[l][t], f) - got(&base->traffic[l][t], f);
    if (!rc) {
        v[NTRAFFIC] = (double)scratch->overflow_tiles - (double)base->overflow_tiles;
        v[NTRAFFIC + 1] = (double)scratch->intersections;
        for (unsigned l = 2; l < e->nlev; l++)
            v[NTRAFFIC + 2 + l] = (double)scratch->effectual_tiles[l];
        for (unsigned l = 2; l < e->nlev; l++)
            for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
                tessel_traffic *o = &keep->traffic[l][t], *n = &scratch->traffic[l][t];
                if (n->partition_bytes > o->partition_bytes)
                    o->partition_bytes = n->partition_bytes;
                if (n->worst_tile_bytes > o->worst_tile_bytes)
                    o->worst_tile_bytes = n->worst_tile_bytes;
            }
    }
    stat_grid_free(al, &ra);
    stat_grid_free(al, &rb);
    sample_free(al, &rs);
    return rc;
}

static uint64_t rounded(double x)
{
    return x <= 0 ? 0 : model_count(x);
}

/* Bytes into and out of the inner levels (>= 2): the quantity whose
 * standard error is reported. */
static double inner_bytes(const double *v, unsigned nlev, unsigned zt, double ratio,
                          double zratio)
{
    double sum = 0;
    for (unsigned l = 2; l < nlev; l++)
        for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) /* in_ and out_ data, metadata */
            sum += (t == zt ? zratio : ratio) * (v[SLOT(l, t, 6)] + v[SLOT(l, t, 7)] +
                                                 v[SLOT(l, t, 8)] + v[SLOT(l, t, 9)]);
    return sum;
}

/* Combines the calls: value = base + whole + ratio * sum of the groups,
 * into e->res; the standard error of the inner bytes into info. */
static void combine(engine *e, const plan *pl, const tessel_result *base, double *const v[],
                    double *const child[NIN][GROUPS + 1], stat_nested_sample_info *info)
{
    double xs = 0, zs = 0;
    for (unsigned g = 1; g <= pl->groups; g++) {
        xs += pl->x_group[g];
        zs += pl->z_group[g];
    }
    double rest = pl->x_total - pl->x_whole, ratio = rest / xs;
    /* Z's counts follow its output nonzeros, calibrated to Z's covariate
     * per strip (known for every strip) */
    double zrest = pl->z_total - pl->z_whole, zratio = zs > 0 ? zrest / zs : ratio;
    tessel_result *r = e->res;
    double total[NVALUES];
    for (size_t q = 0; q < NVALUES; q++) {
        double sum = 0;
        for (unsigned g = 1; g <= pl->groups; g++)
            sum += v[g][q];
        int is_z = q < NTRAFFIC && (q / NADD) % TESSEL_SPEC_MAX_TENSORS == e->out.spec_tensor;
        total[q] = v[0][q] + (is_z ? zratio : ratio) * sum;
    }
    for (unsigned l = 1; l < e->nlev; l++)
        for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++)
            for (size_t f = 0; f < NADD; f++)
                *field(&r->traffic[l][t], f) =
                    rounded(got(&base->traffic[l][t], f) + total[SLOT(l, t, f)]);
    r->overflow_tiles = rounded((double)base->overflow_tiles + total[NTRAFFIC]);
    r->intersections = rounded(total[NTRAFFIC + 1]);
    for (unsigned l = 2; l < e->nlev; l++)
        r->effectual_tiles[l] = rounded(total[NTRAFFIC + 2 + l]);
    for (unsigned i = 0; i < e->nin && i < NIN; i++) {
        ob_table *t = &e->ob[1][i];
        for (uint64_t q = 0; q < t->n; q++) {
            double sum = 0;
            for (unsigned g = 1; g <= pl->groups; g++)
                sum += child[i][g][q];
            t->t[q].child_nnz = rounded((double)t->t[q].child_nnz + child[i][0][q] + ratio * sum);
        }
    }
    /* random groups: each group's own ratio estimate of the inner bytes */
    double est[GROUPS + 1], mean = 0;
    for (unsigned g = 1; g <= pl->groups; g++) {
        est[g] = inner_bytes(v[0], e->nlev, e->out.spec_tensor, 1, 1) +
                 inner_bytes(v[g], e->nlev, e->out.spec_tensor, rest / pl->x_group[g],
                             pl->z_group[g] > 0 ? zrest / pl->z_group[g] : rest / pl->x_group[g]);
        mean += est[g] / pl->groups;
    }
    double ss = 0;
    for (unsigned g = 1; g <= pl->groups; g++)
        ss += (est[g] - mean) * (est[g] - mean);
    double y = inner_bytes(total, e->nlev, e->out.spec_tensor, 1, 1);
    info->stderr_rel = y > 0 ? sqrt(ss / (pl->groups * (pl->groups - 1.0))) / y : 0;
    info->fraction = (pl->x_whole + xs) / pl->x_total;
}

static void plan_free(const tessel_allocator *al, plan *pl)
{
    tessel_dealloc(al, pl->w);
    tessel_dealloc(al, pl->z);
    tessel_dealloc(al, pl->call);
}

/* Plans the strips, runs one call for the whole strips and one per group,
 * and combines them into e->res (see the top of this file). */
int stat_nested_sampled(engine *e, const stat_input *const *in, const stat_output_sample *s,
                        double budget, uint64_t seed, stat_nested_sample_info *info,
                        tessel_diag *diag)
{
    memset(info, 0, sizeof(*info));
    if (budget <= 0 || !s || stat_nested_gated_nested(e)) /* unskipped: every strip's values */
        return STAT_NESTED_DECLINED;
    const tessel_allocator *al = e->alloc;
    plan pl;
    memset(&pl, 0, sizeof(pl));
    int rc = plan_weights(e, in, s, &pl);
    if (rc == 0)
        rc = plan_draw(&pl, budget, seed) ? STAT_NESTED_DECLINED : 0;
    else if (rc == 1)
        rc = STAT_NESTED_DECLINED;
    if (rc) {
        plan_free(al, &pl);
        return rc;
    }
    tessel_result *base = tessel_alloc(al, sizeof(*base));
    tessel_result *scratch = tessel_alloc(al, sizeof(*scratch));
    double *v[GROUPS + 1];
    double *child[NIN][GROUPS + 1];
    memset(v, 0, sizeof(v));
    memset(child, 0, sizeof(child));
    rc = base && scratch ? TESSEL_OK : TESSEL_ENOMEM;
    for (unsigned g = 0; !rc && g <= pl.groups; g++) {
        v[g] = stat_zeroed(al, NVALUES, sizeof(double));
        if (!v[g])
            rc = TESSEL_ENOMEM;
        for (unsigned i = 0; !rc && i < e->nin && i < NIN; i++) {
            child[i][g] = stat_zeroed(al, e->ob[1][i].n ? e->ob[1][i].n : 1, sizeof(double));
            if (!child[i][g])
                rc = TESSEL_ENOMEM;
        }
    }
    if (!rc)
        *base = *e->res;
    int any_whole = 0;
    for (uint64_t u = 0; u < pl.units; u++)
        any_whole |= pl.call[u] == 0;
    for (unsigned g = any_whole ? 0 : 1; !rc && g <= pl.groups; g++) {
        double *ch[NIN] = { child[0][g], child[1][g], child[2][g] };
        rc = run_call(e, in, s, &pl, (int)g, base, scratch, v[g], ch, diag);
    }
    if (!rc) {
        combine(e, &pl, base, v, child, info);
        for (unsigned b = 2; b < e->nlev; b++) {
            boundary bd;
            memset(&bd, 0, sizeof(bd));
            bd.b = b;
            if (!exact_geometry(e, &bd))
                exact_algorithmic_counts(e, &bd);
        }
        exact_ob_settle(e, 1);
        info->sampled = 1;
    }
    for (unsigned g = 0; g <= GROUPS; g++) {
        tessel_dealloc(al, v[g]);
        for (unsigned i = 0; i < NIN; i++)
            tessel_dealloc(al, child[i][g]);
    }
    tessel_dealloc(al, base);
    tessel_dealloc(al, scratch);
    plan_free(al, &pl);
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_oom(diag, NULL, "sampling a nested boundary's strips", 0);
    return rc;
}

/* The output side of the one-level SpMSpM closed form (stat_spmspm.c):
 * output nonzeros per tile (eq. 20, or the output sample), the partial
 * tiles write-backs carry (eq. 19), and rule 4's spill of output tiles
 * that outgrow Z's partition, with the sample's tile occupancies shrunk
 * toward their row mean when the sample is partial (docs/models/stat.md). */
#include <math.h>
#include <string.h>

#include "stat_closed.h"

/* Expected nonzeros of an output tile of `cells` cells that receives
 * `products` multiplies in groups of `multiplicity` (eq. 20). */
static double tile_nonzeros(double products, double multiplicity, double cells)
{
    if (products <= 0 || cells <= 0)
        return 0;
    double groups = products / (multiplicity > 1 ? multiplicity : 1);
    return cells * -expm1(-groups / cells);
}

/* Base cell -> tile along one index: a table for the cells the tiles
 * cover (tiles * f), a division beyond it. */
typedef struct cell_tiles {
    uint32_t *tile;
    uint64_t n, f;
} cell_tiles;

static int cell_tiles_init(cell_tiles *t, uint64_t tiles, uint64_t f, const tessel_allocator *a)
{
    t->f = f ? f : 1;
    t->n = tiles * t->f;
    t->tile = tessel_alloc_array(a, t->n + 1, sizeof(uint32_t));
    if (!t->tile)
        return TESSEL_ENOMEM;
    for (uint64_t c = 0; c < t->n; c++)
        t->tile[c] = (uint32_t)(c / t->f);
    return TESSEL_OK;
}

static void cell_tiles_free(cell_tiles *t, const tessel_allocator *a)
{
    tessel_dealloc(a, t->tile);
    t->tile = NULL;
}

static inline uint64_t cell_tile(const cell_tiles *t, uint64_t c)
{
    return c < t->n ? t->tile[c] : c / t->f;
}

/* Where the sample's cells land: the tile of each base cell along i, x,
 * j and the reduction step along k, without a division per cell. */
typedef struct cell_place {
    cell_tiles ti, tx, tj, tk;
} cell_place;

static void cell_place_free(cell_place *cp, const tessel_allocator *a)
{
    cell_tiles_free(&cp->ti, a);
    cell_tiles_free(&cp->tx, a);
    cell_tiles_free(&cp->tj, a);
    cell_tiles_free(&cp->tk, a);
}

static int cell_place_init(const stat_problem *p, cell_place *cp)
{
    memset(cp, 0, sizeof(*cp));
    uint64_t n1 = p->unfolded ? p->i_tiles : (p->sample_mirrored ? p->ext_j : p->ext_i);
    uint64_t n2 = p->sample_mirrored ? p->ext_i : p->ext_j;
    int rc = cell_tiles_init(&cp->ti, n1, p->f_i, p->alloc);
    if (!rc)
        rc = cell_tiles_init(&cp->tx, p->unfolded ? p->x_tiles : 1, p->unfolded ? p->f_x : 1,
                             p->alloc);
    if (!rc)
        rc = cell_tiles_init(&cp->tj, n2, p->f_j, p->alloc);
    if (!rc)
        rc = cell_tiles_init(&cp->tk, p->ext_k, p->f_k, p->alloc);
    if (rc)
        cell_place_free(cp, p->alloc);
    return rc;
}

static uint64_t cell_pair(const stat_problem *p, const cell_place *cp, uint64_t c)
{
    const stat_output_sample *s = p->sample;
    uint64_t s1 = cell_tile(&cp->ti, s->ci[c]), s2 = cell_tile(&cp->tj, s->cj[c]);
    if (p->unfolded)
        s1 = p->x_major ? cell_tile(&cp->tx, s->cx[c]) * p->i_tiles + s1
                        : s1 * p->x_tiles + cell_tile(&cp->tx, s->cx[c]);
    uint64_t r = p->sample_mirrored ? s2 : s1, q = p->sample_mirrored ? s1 : s2;
    return r * p->ext_j + q;
}

/* Weighted sampled nonzeros per output tile pair (cell_pair's keys). A
 * group's cells share one pair (and consecutive groups often do): the
 * pair's slot is found once per run and the weights added to it in cell
 * order, the same sums as one model_map_add per cell. */
static int pair_totals(const stat_problem *p, const cell_place *cp, model_map *final)
{
    const stat_output_sample *s = p->sample;
    uint64_t last = UINT64_MAX, *slot = NULL;
    for (uint64_t g = 0; g < s->ngroups; g++) {
        uint64_t c = s->gstart[g], end = s->gstart[g + 1];
        uint64_t pair = cell_pair(p, cp, c);
        if (pair != last && !(slot = model_map_slot(final, pair, 0)))
            return TESSEL_ENOMEM;
        last = pair;
        for (; c < end; c++)
            *slot = model_double_bits(model_bits_double(*slot) + s->weight[c]);
    }
    return TESSEL_OK;
}

/* Runs of one output tile pair that end at or after reduction step k:
 * its visits from k on, less the visits whose run continues. `suffix`
 * holds, per word, the runs counted in the words after it. */
typedef struct pair_runs {
    uint64_t words;
    uint64_t *ends;   /* visits that end a run */
    uint64_t *suffix; /* ends in words > w */
} pair_runs;

static void pair_runs_set(const work *w, uint64_t i, uint64_t j, pair_runs *pr)
{
    const uint64_t *x = &w->arows[i * w->words], *y = &w->bcols[j * w->words];
    const uint64_t *mb = &w->merge_bits[i * w->words];
    for (uint64_t wd = 0; wd < w->words; wd++) {
        uint64_t m = x[wd] & y[wd];
        for (uint64_t mm = m & mb[wd]; mm; mm &= mm - 1) {
            unsigned b = stat_low_bit(mm);
            if (w->merge_j[wd * 64 + b] == j)
                m &= ~(UINT64_C(1) << b);
        }
        pr->ends[wd] = m;
    }
    uint64_t after = 0;
    for (uint64_t wd = w->words; wd-- > 0;) {
        pr->suffix[wd] = after;
        after += stat_bits_set(pr->ends[wd]);
    }
}

static uint64_t pair_runs_from(const pair_runs *pr, uint64_t k)
{
    uint64_t wd = k / 64;
    return stat_bits_set(pr->ends[wd] & (~UINT64_C(0) << (k % 64))) + pr->suffix[wd];
}

/* The written nonzeros post-stratified by the reduction tile of their
 * first multiply (issue 18; docs/models/stat.md "The written nonzeros at
 * one level: strata by first step"). A nonzero is carried by its pair's
 * runs from its first reduction tile t on, so the sample's sum W^ =
 * sum_t W^_t varies with how the drawn rows' nonzeros split over t, which
 * the rows' exact counts alone do not fix (-4.8 % to +3.8 % on a
 * clustered graph at 5 %). With the output's exact nonzeros per first k
 * cell (s->fknnz), each stratum's X_t is known: W = sum_t W^_t X_t / S^_t
 * (S^_t the stratum's weighted sampled nonzeros), the strata that hold no
 * sampled nonzero at the pooled ratio of the others. wh[t] and sh[t]
 * hold W^_t and S^_t for the nt = stat_written_tiles strata. */
uint64_t stat_written_tiles(const stat_output_sample *s, uint64_t f_k, int unfolded)
{
    if (!s || !s->nfk || !s->xexact || s->whole || unfolded)
        return 0;
    return s->nfk / (f_k ? f_k : 1) + 1;
}

double stat_written_strata(const stat_output_sample *s, uint64_t f_k, const double *wh,
                           const double *sh, uint64_t nt)
{
    uint64_t fk = f_k ? f_k : 1;
    double sum = 0, wseen = 0, sseen = 0, xmissed = 0;
    for (uint64_t t = 0; t < nt; t++) {
        double x = 0;
        for (uint64_t c = t * fk; c < (t + 1) * fk && c < s->nfk; c++)
            x += s->fknnz[c];
        if (sh[t] > 0) {
            sum += wh[t] * x / sh[t];
            wseen += wh[t];
            sseen += sh[t];
        } else {
            xmissed += x;
        }
    }
    return sseen > 0 ? sum + xmissed * wseen / sseen : 0;
}

/* The sample's nonzeros, each written back by every run of visits to its
 * output tile that ends at or after its first reduction step. Returns
 * the weighted count of those write-backs' nonzeros, post-stratified by
 * first step where the output's first cells are known
 * (stat_written_strata). The cells are sorted by (i, j, k) base cell, so
 * each base pair sets up its tile pair's runs once. */
int stat_sample_written(const work *w, double *written)
{
    const stat_problem *p = w->p;
    const stat_output_sample *s = p->sample;
    pair_runs pr = { w->words, NULL, NULL };
    pr.ends = tessel_alloc_array(p->alloc, w->words + 1, sizeof(uint64_t));
    pr.suffix = tessel_alloc_array(p->alloc, w->words + 1, sizeof(uint64_t));
    uint64_t nt = stat_written_tiles(s, p->f_k, p->unfolded);
    double *wh = nt ? stat_zeroed(p->alloc, 2 * nt, sizeof(double)) : NULL;
    double *sh = wh ? wh + nt : NULL;
    if (!pr.ends || !pr.suffix || (nt && !wh)) {
        tessel_dealloc(p->alloc, pr.ends);
        tessel_dealloc(p->alloc, pr.suffix);
        tessel_dealloc(p->alloc, wh);
        return TESSEL_ENOMEM;
    }
    cell_place cp;
    int rc = cell_place_init(p, &cp);
    double sum = 0;
    uint64_t last_pair = UINT64_MAX;
    for (uint64_t g = 0; !rc && g < s->ngroups; g++) {
        uint64_t c = s->gstart[g], end = s->gstart[g + 1];
        uint64_t pair = cell_pair(p, &cp, c);
        if (pair != last_pair) /* groups of one tile pair often follow each other */
            pair_runs_set(w, pair / p->ext_j, pair % p->ext_j, &pr);
        last_pair = pair;
        const uint32_t *ck = s->ck;
        const float *weight = s->weight;
        for (; c < end; c++) {
            uint64_t t = cell_tile(&cp.tk, ck[c]);
            double term = (double)pair_runs_from(&pr, t) * weight[c];
            sum += term;
            if (wh && t < nt) {
                wh[t] += term;
                sh[t] += weight[c];
            }
        }
    }
    if (!rc)
        cell_place_free(&cp, p->alloc);
    tessel_dealloc(p->alloc, pr.ends);
    tessel_dealloc(p->alloc, pr.suffix);
    if (wh)
        sum = stat_written_strata(s, p->f_k, wh, sh, nt);
    tessel_dealloc(p->alloc, wh);
    *written = sum;
    return rc;
}

/* Output tile pairs holding a sampled nonzero (a bitset over the pairs);
 * with every row in the sample, exactly the non-empty output tiles. */
int stat_sample_pairs(const work *w, double *pairs)
{
    const stat_problem *p = w->p;
    const stat_output_sample *s = p->sample;
    uint64_t n = p->ext_i * p->ext_j;
    uint64_t *seen = tessel_alloc_array(p->alloc, n / 64 + 1, sizeof(uint64_t));
    if (!seen)
        return TESSEL_ENOMEM;
    memset(seen, 0, (n / 64 + 1) * sizeof(uint64_t));
    uint64_t count = 0;
    for (uint64_t g = 0; g < s->ngroups; g++) {
        uint64_t c = s->gstart[g];
        uint64_t s1 = s->ci[c] / p->f_i, s2 = s->cj[c] / p->f_j;
        if (p->unfolded)
            s1 = p->x_major ? (s->cx[c] / p->f_x) * p->i_tiles + s1
                            : s1 * p->x_tiles + s->cx[c] / p->f_x;
        uint64_t r = p->sample_mirrored ? s2 : s1, q = p->sample_mirrored ? s1 : s2;
        uint64_t bit = r * p->ext_j + q;
        if (!(seen[bit / 64] >> (bit % 64) & 1u)) {
            seen[bit / 64] |= UINT64_C(1) << (bit % 64);
            count++;
        }
    }
    tessel_dealloc(p->alloc, seen);
    *pairs = (double)count;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Rule 4 for the output (docs/semantics.md rule 4; Tailors §3.3, §6.2): an output tile
 * whose partial results outgrow its partition spills the excess to the
 * parent after every visit that does not end its run (IJK: all of a
 * pair's visits but its last; IKJ and KIJ: the visits whose run merges
 * into the next), and the next visit reads it back; the run's last visit
 * is the rule 2 write-back, which already moves the whole tile. The same
 * accounting as the exact walk (price_spills in exact_walk.c). */

/* An output tile of n nonzeros: rule 4's spill into o (times: how many
 * visits leave it so). The excess beyond the partition and its split into
 * data and metadata are an input's bumped part's (stat_add_bumped, the
 * exact walk's truncation): one computation for both directions. */
static void spill_add(affine z, uint64_t part, double n, double times, stat_outcome *o)
{
    price pr = { n * z.d1, z.m0 + n * z.m1 };
    stat_counts c;
    memset(&c, 0, sizeof(c));
    stat_add_bumped(&c, times, pr, part);
    o->z_spill_data += c.bumped_data;
    o->z_spill_meta += c.bumped_meta;
}

/* Whether spill_add adds anything for a tile of n nonzeros (its own
 * test, made before the visit's operand tiles are looked up). */
static int spill_over(affine z, uint64_t part, double n)
{
    price pr = { n * z.d1, z.m0 + n * z.m1 };
    return part && pr.data + pr.meta > (double)part;
}

static double tile_bytes_of(affine z, double n)
{
    return z.m0 + n * (z.d1 + z.m1);
}

/* Nonzeros of tile (row, col) of grid g (0 when empty). */
static double grid_nnz(const stat_grid *g, uint64_t row, uint64_t col)
{
    uint64_t lo = stat_grid_lower(g, row, col);
    return lo < g->ptr[row + 1] && g->col[lo] == col ? (double)g->nnz[lo] : 0;
}

/* Reduction steps of the child's width in reduction tile k. */
static double visit_slots(const stat_problem *p, uint64_t k)
{
    return stat_visit_slots(k, p->tk, p->extent_k ? p->extent_k : p->tk * p->ext_k, p->step_k);
}

/* A's tiles of one tile row in ascending k: the pair's visits come in
 * ascending k, so A's tile of each is found by moving forward instead of
 * a search per visit. */
typedef struct row_cursor {
    const stat_grid *g;
    uint64_t n, end;
} row_cursor;

static double cursor_nnz(row_cursor *c, uint64_t col)
{
    while (c->n < c->end && c->g->col[c->n] < col)
        c->n++;
    return c->n < c->end && c->g->col[c->n] == col ? (double)c->g->nnz[c->n] : 0;
}

/* Rule 4 inside the visit at reduction tile k of pair (r, q), the tile
 * growing from n0 to n1 nonzeros over its update steps (stat_outspill.c;
 * ks: their count from the tiles' distinct k, NULL the uniform rule):
 * every step before the visit's last spills what lies beyond the
 * partition, split into data and metadata as the tile's bytes. The
 * operand tiles are looked up only for a visit that can spill. */
static void spill_inside(const work *w, affine z, row_cursor *ar, stat_ksteps *ks, uint64_t r,
                         uint64_t k, uint64_t q, double n0, double n1, stat_outcome *o)
{
    const stat_problem *p = w->p;
    double b1 = tile_bytes_of(z, n1);
    if (!stat_spill_visit_over(b1, p->live_i, p->live_j, (double)p->part_z))
        return;
    double slots = visit_slots(p, k);
    double extra = stat_spill_visit_at(ks, r, k, q, slots, cursor_nnz(ar, k),
                                       grid_nnz(&p->b, k, q), tile_bytes_of(z, n0), b1,
                                       tile_bytes_of(z, (double)p->out_cells), p->live_i,
                                       p->live_j, (double)p->part_z);
    if (extra <= 0)
        return;
    double share = b1 > 0 ? (z.m0 + n1 * z.m1) / b1 : 0;
    o->z_spill_data += extra * (1 - share);
    o->z_spill_meta += extra * share;
}

/* stat_visit_live is a pure function whose arguments repeat (a few slot
 * widths, small tile counts) over the visits of every spilling pair: its
 * values are kept in a direct-mapped table, the same numbers. */
#define LIVE_MEMO 512u
typedef struct live_memo {
    double slots[LIVE_MEMO], na[LIVE_MEMO], nb[LIVE_MEMO], live[LIVE_MEMO];
} live_memo;

static double visit_live(live_memo *m, double slots, double na, double nb, int grew)
{
    if (grew || slots <= 1 || !(na < 0x1p52) || !(nb < 0x1p52))
        return stat_visit_live(slots, na, nb, grew);
    unsigned h = (unsigned)(((uint64_t)na * 0x9E3779B1u + (uint64_t)nb * 0x85EBCA77u +
                             (uint64_t)slots) % LIVE_MEMO);
    if (m->slots[h] != slots || m->na[h] != na || m->nb[h] != nb) {
        m->slots[h] = slots; /* slots > 1: an empty entry (0) never matches */
        m->na[h] = na;
        m->nb[h] = nb;
        m->live[h] = stat_visit_live(slots, na, nb, 0);
    }
    return m->live[h];
}

/* One output tile pair that may overflow: its visits in step order with
 * the partial nonzeros after each (steps[] / cum[] sorted, n entries). */
static void pair_spills(const work *w, uint64_t pair, const uint64_t *steps, const double *wts,
                        uint64_t n, pair_runs *pr, live_memo *lm, stat_ksteps *ks, affine z,
                        stat_outcome *o)
{
    const stat_problem *p = w->p;
    uint64_t r = pair / p->ext_j, q = pair % p->ext_j;
    int ijk = strcmp(p->order, "IJK") == 0;
    const uint64_t *x = &w->arows[r * w->words], *y = &w->bcols[q * w->words];
    row_cursor ar = { &p->a, p->a.ptr[r], p->a.ptr[r + 1] };
    if (!ijk)
        pair_runs_set(w, r, q, pr);
    uint64_t last = UINT64_MAX;
    for (uint64_t wd = w->words; wd-- > 0 && last == UINT64_MAX;)
        if (x[wd] & y[wd])
            last = wd * 64 + stat_high_bit(x[wd] & y[wd]);
    double cum = 0, last_d = 0, last_m = 0; /* see stat_nested_out.c's run_spill_step */
    uint64_t c = 0;
    for (uint64_t wd = 0; wd < w->words; wd++)
        for (uint64_t m = x[wd] & y[wd]; m; m &= m - 1) {
            uint64_t k = wd * 64 + stat_low_bit(m);
            double cum0 = cum;
            while (c < n && steps[c] <= k)
                cum += wts[c++];
            spill_inside(w, z, &ar, ks, r, k, q, cum0, cum, o);
            int ends = ijk ? k == last : (pr->ends[wd] >> (k % 64) & 1u);
            double bytes = tile_bytes_of(z, cum);
            if (bytes > o->z_worst)
                o->z_worst = bytes;
            int over = !ends && spill_over(z, p->part_z, cum);
            if (over || last_d + last_m > 0) {
                /* exact spills a visit only when a later visit of its run
                 * holds a multiply: this one's chance ends the run's
                 * earlier charges' chance of being its last */
                double live = visit_live(lm, visit_slots(p, k), cursor_nnz(&ar, k),
                                              grid_nnz(&p->b, k, q), cum > cum0);
                last_d *= 1 - live;
                last_m *= 1 - live;
                if (over) {
                    double d0 = o->z_spill_data, m0 = o->z_spill_meta;
                    spill_add(z, p->part_z, cum, live, o);
                    last_d += o->z_spill_data - d0;
                    last_m += o->z_spill_meta - m0;
                }
            }
            if (ends) {
                if (bytes > (double)p->part_z)
                    o->z_overflow_writebacks += 1;
                o->z_spill_data -= last_d;
                o->z_spill_meta -= last_m;
                last_d = last_m = 0;
            }
        }
}

/* Why a partial sample biased the spill high (issue 20): a sampled tile
 * pair's occupancy is the Horvitz-Thompson sum of its sampled rows'
 * nonzeros times their weights (1/inclusion probability, ~1/fraction): an
 * unbiased but noisy estimate when few sampled rows fall in the tile. The
 * spill is a hinge of the occupancy (zero up to the partition, linear
 * above), so the noise alone raises it (Jensen's inequality): +39 % and
 * +86 % on ca-GrQc at a 5 % sample, exact with the whole sample. So each
 * tile's occupancy is estimated, not taken as the weights pushed into it:
 * the pairs' estimates are shrunk toward the mean sampled pair of their
 * row of tiles (band), so that their spread within bands is the true one
 * (constrained empirical Bayes, Louis 1984):
 *   X~ = m + c (X^ - m),  c^2 = t2 / (t2 + k X^)
 * with m the band's mean, t2 the pooled within-band variance of X^ less
 * the sampling noise (0 when the noise explains it all: every pair at its
 * band's mean) and k X^ a pair's sampling variance, noise growing with
 * its nonzeros like a Poisson count's (k = total noise / total X^). The
 * noise comes from two half
 * samples: the sampled row groups (base cells along i, in storage order;
 * the cells are sorted by (i, x, j, k)) taken in turn, each a systematic
 * sample at half the rate like the draw (stat_output.c), so their
 * difference D = X^_a - X^_b has E[D^2] = Var(X^) + (X_a - X_b)^2, the
 * second term about Var(X^) / (w - 1) for w the mean weight: noise =
 * mean D^2 (1 - 1/w). A whole sample has w = 1: c = 1, no change. */
typedef struct shrink {
    /* per band (pair / ext_j): the sampled pairs' estimates summed and
     * the sampled pairs */
    model_map band_sum, band_n;
    double tau2, kappa; /* true within-band variance; noise per unit of X^ */
} shrink;

static void shrink_free(shrink *sh)
{
    model_map_free(&sh->band_sum);
    model_map_free(&sh->band_n);
}

/* The mean sampled pair of pair's band. */
static double band_mean(const stat_problem *p, const shrink *sh, uint64_t pair)
{
    uint64_t band = pair / p->ext_j;
    return model_map_weight(&sh->band_sum, band) / model_map_weight(&sh->band_n, band);
}

static int in_subset(uint64_t pair)
{
    return (pair * UINT64_C(0x9e3779b97f4a7c15)) >> 61 == 0;
}

static int shrink_init(const stat_problem *p, const cell_place *cp, const model_map *final,
                       shrink *sh)
{
    const stat_output_sample *s = p->sample;
    sh->band_sum = (model_map){ .alloc = p->alloc };
    sh->band_n = (model_map){ .alloc = p->alloc };
    sh->tau2 = -1; /* no shrinking */
    double wbar = s->sampled_nnz > 0 ? s->nnz / (double)s->sampled_nnz : 1;
    if (s->whole || wbar <= 1)
        return TESSEL_OK;
    int rc = TESSEL_OK;
    double pairs = 0;
    for (uint64_t e = 0; !rc && e < final->cap; e++)
        if (final->keys[e] != UINT64_MAX) {
            uint64_t band = final->keys[e] / p->ext_j;
            rc = model_map_add(&sh->band_sum, band, model_bits_double(final->vals[e]));
            if (!rc)
                rc = model_map_add(&sh->band_n, band, 1);
            pairs += 1;
        }
    /* the variances are pooled: with many pairs, a fixed eighth of them
     * (by a hash of the pair) estimates them at an eighth of the cost */
    int some = pairs >= 1024;
    model_map diff = { .alloc = p->alloc };
    uint64_t group = 0;
    /* a group's cells share one (i, x, j), hence one pair: its slot is
     * found once and the weights added to it in cell order */
    for (uint64_t g = 0; !rc && g < s->ngroups; g++) {
        uint64_t i = s->gstart[g], end = s->gstart[g + 1];
        if (i && (s->ci[i] != s->ci[i - 1] || (s->cx && s->cx[i] != s->cx[i - 1])))
            group++;
        uint64_t pair = cell_pair(p, cp, i), *slot;
        if (some && !in_subset(pair))
            continue;
        if (!(slot = model_map_slot(&diff, pair, 0)))
            rc = TESSEL_ENOMEM;
        for (; !rc && i < end; i++)
            *slot = model_double_bits(model_bits_double(*slot) +
                                      (group & 1 ? -s->weight[i] : s->weight[i]));
    }
    double n = 0, spread = 0, noise = 0, total = 0;
    for (uint64_t e = 0; !rc && e < final->cap; e++) {
        if (final->keys[e] == UINT64_MAX || (some && !in_subset(final->keys[e])))
            continue;
        double x = model_bits_double(final->vals[e]);
        double dx = x - band_mean(p, sh, final->keys[e]);
        double d = model_map_weight(&diff, final->keys[e]);
        n += 1;
        total += x;
        spread += dx * dx;
        noise += d * d * (1 - 1 / wbar);
    }
    model_map_free(&diff);
    if (!rc && n > 0) {
        sh->tau2 = spread > noise ? (spread - noise) / n : 0;
        sh->kappa = total > 0 ? noise / total : 0;
    }
    return rc;
}

/* The shrunk occupancy of pair (sampled estimate x) as a scale of its
 * sampled path. */
static double shrink_scale(const stat_problem *p, const shrink *sh, uint64_t pair, double x)
{
    if (sh->tau2 < 0 || x <= 0)
        return 1;
    double c = sh->tau2 > 0 ? sqrt(sh->tau2 / (sh->tau2 + sh->kappa * x)) : 0;
    double m = band_mean(p, sh, pair), t = m + c * (x - m);
    return t > 0 ? t / x : 0;
}

/* Groups the sample's weights by (pair, step) for the pairs whose final
 * tile (its shrunk estimate, shrink_init) overflows and prices each
 * such pair. */
static int sample_spills(const work *w, affine z, stat_outcome *o)
{
    const stat_problem *p = w->p;
    const stat_output_sample *s = p->sample;
    cell_place cp;
    model_map final = { .alloc = p->alloc }, steps = { .alloc = p->alloc };
    model_vec keys = { .alloc = p->alloc };
    pair_runs pr = { w->words, NULL, NULL };
    int rc = cell_place_init(p, &cp);
    if (rc)
        return rc;
    rc = pair_totals(p, &cp, &final);
    shrink sh = { .tau2 = -1 };
    if (!rc)
        rc = shrink_init(p, &cp, &final, &sh);
    /* a pair's partial tiles are never larger than its final one; a
     * group's cells share its pair and come in ascending k, so runs of
     * one (pair, step) key add into one slot, in cell order */
    uint64_t last = UINT64_MAX;
    int over = 0;
    for (uint64_t g = 0; !rc && g < s->ngroups; g++) {
        uint64_t c = s->gstart[g], end = s->gstart[g + 1];
        uint64_t pair = cell_pair(p, &cp, c);
        if (pair != last) { /* a pair's cells come in runs: decide once per run */
            double x = model_map_weight(&final, pair);
            over = tile_bytes_of(z, x * shrink_scale(p, &sh, pair, x)) > (double)p->part_z;
            last = pair;
        }
        if (!over)
            continue;
        uint64_t key = UINT64_MAX, *slot = NULL;
        for (; !rc && c < end; c++) {
            uint64_t k = pair * p->ext_k + cell_tile(&cp.tk, s->ck[c]);
            if (k != key) {
                uint64_t had = steps.n;
                key = k;
                slot = model_map_slot(&steps, key, 0);
                if (!slot || (steps.n != had && model_vec_push(&keys, key))) {
                    rc = TESSEL_ENOMEM;
                    break;
                }
            }
            *slot = model_double_bits(model_bits_double(*slot) + s->weight[c]);
        }
    }
    uint64_t *st = NULL;
    double *wt = NULL;
    live_memo *lm = NULL;
    if (!rc && keys.n) {
        tessel_sort_u64_inplace(keys.v, keys.n, UINT64_MAX);
        st = tessel_alloc_array(p->alloc, keys.n, sizeof(uint64_t));
        wt = tessel_alloc_array(p->alloc, keys.n, sizeof(double));
        pr.ends = tessel_alloc_array(p->alloc, w->words + 1, sizeof(uint64_t));
        pr.suffix = tessel_alloc_array(p->alloc, w->words + 1, sizeof(uint64_t));
        if ((lm = tessel_alloc(p->alloc, sizeof(*lm))))
            memset(lm, 0, sizeof(*lm));
        if (!st || !wt || !pr.ends || !pr.suffix || !lm)
            rc = TESSEL_ENOMEM;
    }
    /* NULL: the uniform rule; the memo sized by the visits with a step */
    stat_ksteps *ks = NULL;
    if (!rc && keys.n)
        rc = stat_ksteps_create_sized(p, keys.n, &ks);
    for (uint64_t b = 0; !rc && b < keys.n;) {
        uint64_t pair = keys.v[b] / p->ext_k, e = b;
        double scale = shrink_scale(p, &sh, pair, model_map_weight(&final, pair));
        for (; e < keys.n && keys.v[e] / p->ext_k == pair; e++) {
            st[e - b] = keys.v[e] % p->ext_k;
            wt[e - b] = scale * model_map_weight(&steps, keys.v[e]);
        }
        pair_spills(w, pair, st, wt, e - b, &pr, lm, ks, z, o);
        b = e;
    }
    tessel_dealloc(p->alloc, st);
    tessel_dealloc(p->alloc, wt);
    tessel_dealloc(p->alloc, lm);
    stat_ksteps_free(&ks);
    tessel_dealloc(p->alloc, pr.ends);
    tessel_dealloc(p->alloc, pr.suffix);
    model_vec_free(&keys);
    model_map_free(&final);
    model_map_free(&steps);
    shrink_free(&sh);
    cell_place_free(&cp, p->alloc);
    return rc;
}

/* Without a sample (or without the pair walk): every tile pair taken as
 * the mean one, nnz_pair nonzeros growing linearly over its vbar visits;
 * IKJ and KIJ spill at their merges, at half the tile. */
static void mean_spills(const work *w, const pair_sums *ps, double nnz, affine z,
                        stat_outcome *o)
{
    const stat_problem *p = w->p;
    double pairs = ps->pairs, vbar = ps->sum_v / pairs, tile = nnz / pairs;
    o->z_worst = tile_bytes_of(z, tile);
    if (strcmp(p->order, "IJK") == 0) {
        uint64_t v = (uint64_t)llround(vbar);
        for (uint64_t m = 1; m < v && m < 4096; m++)
            spill_add(z, p->part_z, tile * (double)m / (double)v, pairs, o);
        if (o->z_worst > (double)p->part_z)
            o->z_overflow_writebacks = pairs;
        return;
    }
    spill_add(z, p->part_z, tile / 2, w->merges, o);
    double per = o->z_writebacks > 0 ? o->z_out_data / (z.d1 > 0 ? z.d1 : 1) / o->z_writebacks : 0;
    if (tile_bytes_of(z, per) > (double)p->part_z)
        o->z_overflow_writebacks = o->z_writebacks;
}

int stat_sample_max_pair(const work *w, double *max)
{
    const stat_problem *p = w->p;
    cell_place cp;
    model_map final = { .alloc = p->alloc };
    *max = 0;
    int rc = cell_place_init(p, &cp);
    if (rc)
        return rc;
    rc = pair_totals(p, &cp, &final);
    double m = 0;
    for (uint64_t n = 0; !rc && n < final.cap; n++)
        if (final.keys[n] != UINT64_MAX && model_bits_double(final.vals[n]) > m)
            m = model_bits_double(final.vals[n]);
    model_map_free(&final);
    cell_place_free(&cp, p->alloc);
    *max = m;
    return rc;
}

double stat_output_tile_bytes(const stat_problem *p, double nnz)
{
    return tile_bytes_of(stat_affine_fit(&p->cost_z, p->out_cells), nnz);
}

/* Whether an output tile could outgrow the output's partition at all. */
int stat_output_may_spill(const stat_problem *p)
{
    affine z = stat_affine_fit(&p->cost_z, p->out_cells);
    return p->part_z && tile_bytes_of(z, (double)p->out_cells) > (double)p->part_z;
}

static int output_spills(const work *w, const pair_sums *ps, double nnz, affine z,
                         stat_outcome *o)
{
    const stat_problem *p = w->p;
    int rc = TESSEL_OK;
    if (p->sample && w->bitsets && w->arows)
        rc = sample_spills(w, z, o);
    else
        mean_spills(w, ps, nnz, z, o);
    o->z_out_data += o->z_spill_data;
    o->z_out_meta += o->z_spill_meta;
    o->z_in_data += o->z_spill_data;
    o->z_in_meta += o->z_spill_meta;
    return rc;
}

/* The output's nonzeros and the nonzeros its write-backs carry. */
static int output_volume(const work *w, const pair_sums *ps, const stat_known *known, double E,
                         double *nnz, double *written)
{
    const stat_problem *p = w->p;
    if (p->sample && w->bitsets) {
        *nnz = p->sample->nnz;
        /* IJK writes each output tile once, complete */
        if (strcmp(p->order, "IJK") != 0)
            return known ? (*written = known->written, TESSEL_OK) : stat_sample_written(w, written);
        *written = *nnz;
        return TESSEL_OK;
    }
    /* A pair with v effectual steps gets v / E of the multiplies. */
    double vbar = ps->sum_v / ps->pairs;
    double pair_nnz = tile_nonzeros(p->flops / E * vbar, p->multiplicity, (double)p->out_cells);
    double per_step = vbar > 0 ? pair_nnz / vbar : 0;
    *nnz = per_step * ps->sum_v;
    /* Linear growth: a pair written back after each of rho runs carries
     * P (rho + 1) / 2 in all; rho is v less its merges. */
    double rho = ps->sum_v2 / ps->sum_v * (E - w->merges) / E;
    *written = *nnz * (rho + 1) / 2;
    return TESSEL_OK;
}

int stat_output_traffic(const work *w, const pair_sums *ps, const stat_known *known,
                        stat_outcome *o)
{
    const stat_problem *p = w->p;
    affine z = stat_affine_fit(&p->cost_z, p->out_cells);
    double E = o->effectual, pairs = ps->pairs;
    if (pairs <= 0 || E <= 0)
        return TESSEL_OK;
    double nnz, written;
    int rc = output_volume(w, ps, known, E, &nnz, &written);
    if (rc)
        return rc;
    o->out_nnz = nnz;
    o->out_pairs = pairs;
    o->out_nonempty = pairs * -expm1(-nnz / pairs);
    if (p->sample && p->sample->whole && w->bitsets) {
        if (known)
            o->out_nonempty = known->nonempty;
        else if ((rc = stat_sample_pairs(w, &o->out_nonempty)))
            return rc;
    }
    o->compulsory_z = o->out_nonempty * z.m0 + nnz * (z.d1 + z.m1);
    int spills = stat_output_may_spill(p);
    if (spills && known && known->max_pair_nnz >= 0) /* a summary: its fullest tile decides */
        spills = tile_bytes_of(z, known->max_pair_nnz) > (double)p->part_z;
    if (strcmp(p->order, "IJK") == 0) {
        o->z_writebacks = pairs;
        o->z_out_data = nnz * z.d1;
        o->z_out_meta = pairs * z.m0 + nnz * z.m1;
        return spills ? output_spills(w, ps, nnz, z, o) : TESSEL_OK;
    }
    /* Every write-back but a pair's last is read back later. */
    if (written < nnz)
        written = nnz;
    double read = written - nnz;
    o->z_writebacks = E - w->merges;
    o->z_updates = o->z_writebacks - pairs;
    o->z_out_data = written * z.d1;
    o->z_out_meta = o->z_writebacks * z.m0 + written * z.m1;
    o->z_in_data = read * z.d1;
    o->z_in_meta = o->z_updates * z.m0 + read * z.m1;
    return spills ? output_spills(w, ps, nnz, z, o) : TESSEL_OK;
}

/* Rule 4's spill from a partial output sample (issue 20, issue 18 item 3):
 * a sampled tile pair's occupancy X^ is the weighted sum of its sampled
 * rows' nonzeros, an unbiased but noisy estimate when few sampled rows fall
 * in the tile. The spill is a hinge of the occupancy (zero up to the
 * partition, linear above), so the noise alone raises it (Jensen's
 * inequality). Each estimate is therefore shrunk toward a mean tile so
 * that the estimates spread as the true occupancies do (constrained
 * empirical Bayes, Louis 1984):
 *   X~ = m + c (X^ - m),  c^2 = t2 / (t2 + v),  v = k D
 * t2: the variance of the X^ over the pairs less the sampling noise (0 when
 * the noise explains it all); v: a pair's sampling variance, k times D, the
 * part of X^ from rows drawn at random (k = total noise / total D).
 * Two fits (docs/models/stat.md):
 * - halves (boundary 1, issue 20): m the mean sampled pair of the row of
 *   tiles, noise from two half samples (sampled base cells along i taken in
 *   turn; E[D^2] = Var(X^) + (X_a - X_b)^2, the second term about
 *   Var(X^) / (w - 1) for w the mean weight: noise = D^2 (1 - 1/w)), every
 *   row counted as drawn;
 * - units (nested boundaries): the Horvitz-Thompson variance of the drawn
 *   units (below), m the row of tiles' mean where a tile spans at least
 *   STAT_SHRINK_BAND_UNITS base cells along i, else the level's mean over
 *   every effectual pair, the unsampled ones counting as X^ = 0 (a mean
 *   over the sampled pairs alone is inflated by 1 / P(sampled)). A tile a
 *   few rows high lies in one base cell, so half samples see its whole
 *   estimate as noise, and the tiles of one row of tiles share their few
 *   drawn rows, so their row's mean keeps that noise (+347 % PEB Z on
 *   ca-CondMat at 8-row tiles, 5 % sample, without shrinking).
 * A whole sample has no drawn rows: no change. */
#include <math.h>

#include "stat_shrink.h"

/* The variances are pooled over a fixed eighth of the pairs (by a hash)
 * once there are this many sampled pairs: the same estimate at an eighth
 * of the cost. */
#define SUBSET_PAIRS 1024

/* A map's weight at key, 0 when the key is absent (model_map_weight
 * returns NaN there). */
static double weight_of(const model_map *m, uint64_t key)
{
    return model_map_find(m, key) == UINT64_MAX ? 0 : model_map_weight(m, key);
}

static int in_subset(int some, uint64_t pair)
{
    return !some || (pair * UINT64_C(0x9e3779b97f4a7c15)) >> 61 == 0;
}

/* tau2 and kappa from final, the pairs' estimated sampling variances (var)
 * and drawn parts (sh->drawn), over the subset of pairs. */
/* The mean a pair is shrunk toward: its row of tiles' mean sampled pair,
 * or the level's mean pair. */
static double target(const stat_shrink *sh, uint64_t pair)
{
    if (!sh->band)
        return sh->mean;
    uint64_t b = pair / sh->band;
    return model_map_weight(&sh->band_sum, b) / model_map_weight(&sh->band_n, b);
}

static void fit(stat_shrink *sh, const model_map *final, const model_map *var, double pairs)
{
    double total = 0;
    int rc = TESSEL_OK;
    for (uint64_t e = 0; !rc && e < final->cap; e++)
        if (final->keys[e] != UINT64_MAX) {
            double x = model_bits_double(final->vals[e]);
            total += x;
            if (sh->band && !(rc = model_map_add(&sh->band_sum, final->keys[e] / sh->band, x)))
                rc = model_map_add(&sh->band_n, final->keys[e] / sh->band, 1);
        }
    if (rc)
        return; /* out of memory: the estimates stay as they are */
    double sampled = (double)final->n;
    if (pairs < sampled)
        pairs = sampled;
    sh->mean = total / pairs;
    int some = final->n >= SUBSET_PAIRS;
    double n = 0, spread = 0, noise = 0, noisy = 0;
    for (uint64_t e = 0; e < final->cap; e++) {
        if (final->keys[e] == UINT64_MAX || !in_subset(some, final->keys[e]))
            continue;
        double x = model_bits_double(final->vals[e]), m = target(sh, final->keys[e]);
        n += 1;
        noisy += weight_of(&sh->drawn, final->keys[e]);
        spread += (x - m) * (x - m);
        noise += weight_of(var, final->keys[e]);
    }
    if (n <= 0 || noisy <= 0)
        return;
    if (!sh->band) { /* the unsampled pairs in the subset's share: X^ = 0, no noise seen */
        double zeros = (pairs - sampled) * n / sampled;
        spread += zeros * sh->mean * sh->mean;
        n += zeros;
    }
    sh->on = 1;
    sh->tau2 = spread > noise ? (spread - noise) / n : 0;
    sh->kappa = noise / noisy;
}

/* Each pair's sampling variance (halves or units) and the drawn part of
 * its estimate, then the fit. */
int stat_shrink_init(stat_shrink *sh, const stat_output_sample *s, const model_map *final,
                     double pairs, uint64_t band, int halves, stat_cell_pair_fn pair_of,
                     const void *ctx, const tessel_allocator *alloc)
{
    sh->on = 0;
    sh->tau2 = sh->kappa = sh->mean = 0;
    sh->band = band;
    sh->drawn = (model_map){ .alloc = alloc };
    sh->band_sum = (model_map){ .alloc = alloc };
    sh->band_n = (model_map){ .alloc = alloc };
    double wbar = s->sampled_nnz > 0 ? s->nnz / (double)s->sampled_nnz : 1;
    if (s->whole || wbar <= 1 || final->n == 0)
        return TESSEL_OK;
    /* Var(X^_P) = sum over P's units of (1 - p) (w y)^2, estimated by the
     * sampled units' squared contributions (Horvitz-Thompson, Poisson
     * draws). The cells hold base cells along i (and x for TTM), not rows:
     * a cell's r drawn rows are taken as sharing its contribution u
     * equally, r (u/r)^2 = u^2 / r. The cells come
     * sorted by (i, x, j, k), so one unit's cells of one pair are
     * consecutive. Rows taken whole (p = 1) add no noise; without the
     * drawn parts (older .tsd) every row counts, at the mean weight. */
    int some = final->n >= SUBSET_PAIRS, rc = TESSEL_OK;
    model_map noise = { .alloc = alloc };
    uint64_t pair = 0, run_pair = UINT64_MAX, group = 0;
    double run = 0, run_n = 0, rows = 1;
    for (uint64_t c = 0; halves && !rc && c < s->ncells; c++) {
        /* boundary 1 as before: two half samples, the sampled row groups
         * (base cells along i, and x) taken in turn, their difference D
         * with E[D^2] ~ Var(X^) w / (w - 1) (issue 20) */
        if (c && (s->ci[c] != s->ci[c - 1] || (s->cx && s->cx[c] != s->cx[c - 1])))
            group++;
        if (!pair_of(ctx, c, &pair))
            continue;
        rc = model_map_add(&sh->drawn, pair, s->weight[c]);
        if (!rc && in_subset(some, pair))
            rc = model_map_add(&noise, pair, group & 1 ? -s->weight[c] : s->weight[c]);
    }
    for (uint64_t e = 0; halves && !rc && e < noise.cap; e++)
        if (noise.keys[e] != UINT64_MAX) {
            double d = model_bits_double(noise.vals[e]);
            noise.vals[e] = model_double_bits(d * d * (1 - 1 / wbar));
        }
    for (uint64_t c = 0; !halves && !rc && c <= s->ncells; c++) {
        int unit = c < s->ncells && c && s->ci[c] == s->ci[c - 1] &&
                   (!s->cx || s->cx[c] == s->cx[c - 1]);
        int at = c < s->ncells && pair_of(ctx, c, &pair);
        if (run_pair != UINT64_MAX && (!unit || !at || pair != run_pair)) {
            /* 1 - p = 1 - 1/w, w the unit's mean weight */
            double keep = s->drawn_n ? 1 - run_n / run : 1 - 1 / wbar;
            if (in_subset(some, run_pair) && keep > 0)
                rc = model_map_add(&noise, run_pair, keep * run * run / rows);
            run_pair = UINT64_MAX;
            run = run_n = 0;
        }
        double d = c < s->ncells ? (s->drawn ? s->drawn[c] : s->weight[c]) : 0;
        if (rc || !at || d <= 0)
            continue;
        rc = model_map_add(&sh->drawn, pair, d);
        if (run_pair == UINT64_MAX) /* the unit's drawn rows share it */
            rows = s->drawn_rows && s->drawn_rows[s->ci[c]] > 1 ? s->drawn_rows[s->ci[c]] : 1;
        run_pair = pair;
        run += d;
        run_n += s->drawn_n ? s->drawn_n[c] : 0;
    }
    if (!rc)
        fit(sh, final, &noise, pairs);
    model_map_free(&noise);
    return rc;
}

void stat_shrink_free(stat_shrink *sh)
{
    model_map_free(&sh->drawn);
    model_map_free(&sh->band_sum);
    model_map_free(&sh->band_n);
}

double stat_shrink_scale(const stat_shrink *sh, uint64_t pair, double x)
{
    if (!sh->on || x <= 0)
        return 1;
    double v = sh->kappa * weight_of(&sh->drawn, pair);
    double c = sh->tau2 > 0 ? sqrt(sh->tau2 / (sh->tau2 + v)) : (v > 0 ? 0 : 1);
    double m = target(sh, pair), t = m + c * (x - m);
    return t > 0 ? t / x : 0;
}

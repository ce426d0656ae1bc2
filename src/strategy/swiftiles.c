/* Swiftiles (tailors §4.2): size uniform tiles so that a target fraction y
 * of the non-empty tiles overflow their partition (overbooking; the
 * overflow is streamed, docs/semantics.md rule 4, Tailors §3).
 *   1. initial tile from the average density (eq. 2): area = the number of
 *      nonzeros the partition holds / density;
 *   2. sample k / y tiles at that size (§4.2.2; k = tail_samples);
 *   3. scale the area by capacity / the sample's (1 - y) occupancy quantile
 *      (eq. 3).
 * Sampling: a tile is drawn by drawing a nonzero uniformly (the tile that
 * holds it), which reaches only non-empty tiles but favours full ones, so
 * each sample weighs 1 / its occupancy; the quantile is that of the
 * weighted sample, an unbiased picture of the non-empty tiles. A sampled
 * tile is counted with one binary search per row of it.
 * `rounds` > 1 repeats steps 2-3 at the scaled size with the same sampled
 * nonzeros (a fixed-point refinement tessel adds; 1 is the paper). The
 * tile shape keeps the mapping's aspect ratio; every input gets its own
 * size and the smallest wins, as the tiles share indices. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "strategy_internal.h"

typedef struct sample {
    uint64_t row, col; /* a point drawn uniformly over the matrix */
    uint64_t occ;      /* its tile's occupancy at the current shape */
} sample;

/* The first position in [lo, hi) of the ascending ix holding >= key. */
static uint64_t first_at_least(const uint32_t *ix, uint64_t lo, uint64_t hi, uint64_t key)
{
    while (lo < hi) {
        uint64_t m = lo + (hi - lo) / 2;
        if (ix[m] < key)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* Nonzeros of t (2-D) in the tile of `shape` that holds (row, col). */
static uint64_t tile_count(const tessel_tensor *t, const uint64_t *shape, uint64_t row,
                           uint64_t col)
{
    uint64_t r0 = row / shape[0] * shape[0], r1 = r0 + shape[0];
    uint64_t c0 = col / shape[1] * shape[1], c1 = c0 + shape[1];
    if (r1 > t->dims[0])
        r1 = t->dims[0];
    uint64_t n = 0;
    for (uint64_t r = r0; r < r1; r++) {
        uint64_t a = first_at_least(t->idx[1], t->ptr[r], t->ptr[r + 1], c0);
        n += first_at_least(t->idx[1], a, t->ptr[r + 1], c1) - a;
    }
    return n;
}

static int by_occ(const void *a, const void *b)
{
    uint64_t x = ((const sample *)a)->occ, y = ((const sample *)b)->occ;
    return x < y ? -1 : x > y;
}

/* The (1 - y) quantile of the non-empty sampled tiles' occupancy (0 when
 * every sampled tile is empty). */
static double tail_quantile(sample *s, uint64_t n, double y)
{
    qsort(s, (size_t)n, sizeof(*s), by_occ);
    uint64_t first = 0;
    while (first < n && s[first].occ == 0)
        first++;
    if (first == n)
        return 0;
    uint64_t m = n - first;
    /* nearest rank: the smallest v with at least ceil((1 - y) m) tiles <= v */
    uint64_t rank = (uint64_t)ceil((1 - y) * (double)m - 1e-9);
    if (rank < 1)
        rank = 1;
    return (double)s[first + rank - 1].occ;
}

/* Area of input in's tile at scale s. */
static double area_at(const strat_ctx *c, const strat_input *in, const double *ratio,
                      const uint64_t *gran, double s, uint64_t *shape)
{
    strat_tiles t;
    strat_tiles_at(c, ratio, gran, s, &t);
    strat_shape(c, in, &t, shape);
    return (double)shape[0] * (double)shape[1];
}

/* The scale whose tile area is nearest `target` (in ratio). */
static double scale_for_area(const strat_ctx *c, const strat_input *in, const double *ratio,
                             const uint64_t *gran, double target)
{
    uint64_t shape[2];
    double lo = 1, hi = strat_scale_max(c, ratio);
    if (area_at(c, in, ratio, gran, hi, shape) <= target)
        return hi;
    if (area_at(c, in, ratio, gran, lo, shape) >= target)
        return lo;
    for (int it = 0; it < 64 && hi - lo > 1e-3 * lo; it++) {
        double mid = sqrt(lo * hi);
        if (area_at(c, in, ratio, gran, mid, shape) < target)
            lo = mid;
        else
            hi = mid;
    }
    double alo = area_at(c, in, ratio, gran, lo, shape);
    double ahi = area_at(c, in, ratio, gran, hi, shape);
    return fabs(log(alo / target)) <= fabs(log(ahi / target)) ? lo : hi;
}

typedef struct sizing {
    strat_ctx *c;
    unsigned level;
    const strat_input *in;
    const double *ratio;
    const uint64_t *gran;
    uint64_t part;
} sizing;

/* Step 2 at scale s: the sampled quantile and the capacity there. */
static void measure(const sizing *z, sample *smp, uint64_t n, double s, double *q, double *cap)
{
    uint64_t shape[2];
    area_at(z->c, z->in, z->ratio, z->gran, s, shape);
    for (uint64_t i = 0; i < n; i++)
        smp[i].occ = tile_count(z->in->data, shape, smp[i].row, smp[i].col);
    *q = tail_quantile(smp, n, z->c->spec->strategy.overbooking);
    *cap = (double)strat_capacity_nnz(z->c, z->level, z->in, shape, z->part);
    if (*cap < 1)
        *cap = 1;
}

/* Fraction of the sampled non-empty tiles above capacity at scale s. */
static double sampled_rate(const sizing *z, sample *smp, uint64_t n, double s)
{
    double q, cap;
    measure(z, smp, n, s, &q, &cap);
    uint64_t nonempty = 0, over = 0;
    for (uint64_t i = 0; i < n; i++) {
        nonempty += smp[i].occ > 0;
        over += (double)smp[i].occ > cap;
    }
    return nonempty ? (double)over / (double)nonempty : 0;
}

/* The nearest scale from s, moving by `factor`, whose tile differs from
 * s's (s itself when none does within 64 moves). */
static double next_step(const sizing *z, double s, double factor)
{
    uint64_t shape[2], here[2];
    area_at(z->c, z->in, z->ratio, z->gran, s, here);
    double t = s, top = strat_scale_max(z->c, z->ratio);
    for (int i = 0; i < 64 && t >= 1 && t <= top; i++) {
        t *= factor;
        area_at(z->c, z->in, z->ratio, z->gran, t, shape);
        if (shape[0] != here[0] || shape[1] != here[1])
            return t;
    }
    return s;
}

/* Tile edges move in steps (the estimator's granule, the inner level's
 * tile): of s's step and its two neighbours, the one whose sampled
 * overbooking rate is nearest the target. */
static double nearest_step(const sizing *z, sample *smp, uint64_t n, double s)
{
    double y = z->c->spec->strategy.overbooking;
    double cand[3] = { next_step(z, s, 1 / 1.03), s, next_step(z, s, 1.03) };
    double best = s, gap = INFINITY;
    for (int i = 0; i < 3; i++) {
        double g = fabs(sampled_rate(z, smp, n, cand[i]) - y);
        if (g < gap) {
            gap = g;
            best = cand[i];
        }
    }
    return best;
}

/* Swiftiles' scale of one input's tile (tailors §4.2, eq. 2-3): the initial estimate from
 * the average density, then sample-and-measure rounds towards the overbooking target. */
static int size_input(const sizing *z, gsl_rng *rng, double *scale, uint64_t *sampled)
{
    const strat_input *in = z->in;
    const tessel_tensor *t = in->data;
    const tessel_spec_strategy *st = &z->c->spec->strategy;
    if (!t || t->nnz == 0) {
        *scale = strat_scale_max(z->c, z->ratio);
        return TESSEL_OK;
    }
    /* eq. 2: capacity in nonzeros over the average density (the capacity
     * at the whole-mode shape first, then at the initial shape itself) */
    double density = (double)t->nnz / ((double)in->dims[0] * (double)in->dims[1]);
    uint64_t shape[2];
    double s = strat_scale_max(z->c, z->ratio);
    for (int pass = 0; pass < 2; pass++) {
        area_at(z->c, in, z->ratio, z->gran, s, shape);
        double cap = (double)strat_capacity_nnz(z->c, z->level, in, shape, z->part);
        s = scale_for_area(z->c, in, z->ratio, z->gran, (cap > 1 ? cap : 1) / density);
    }
    /* step 2: points drawn uniformly over the matrix pick tiles uniformly;
     * the empty ones are not tiles the buffer ever holds, so draw until
     * k / y land in non-empty tiles (at most 64 times as many points) */
    uint64_t want = (uint64_t)ceil((double)st->tail_samples / st->overbooking - 1e-9);
    uint64_t cap_points = want * 64, n = 0, hits = 0;
    sample *smp = tessel_alloc_array(z->c->alloc, (size_t)cap_points, sizeof(*smp));
    if (!smp)
        return tessel_diag_set(z->c->diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    area_at(z->c, in, z->ratio, z->gran, s, shape);
    while (hits < want && n < cap_points) {
        smp[n].row = (uint64_t)(gsl_rng_uniform(rng) * (double)in->dims[0]);
        smp[n].col = (uint64_t)(gsl_rng_uniform(rng) * (double)in->dims[1]);
        if (smp[n].row >= in->dims[0])
            smp[n].row = in->dims[0] - 1;
        if (smp[n].col >= in->dims[1])
            smp[n].col = in->dims[1] - 1;
        hits += tile_count(t, shape, smp[n].row, smp[n].col) > 0;
        n++;
    }
    /* step 3 (eq. 3): occupancy taken to grow with the area, so the area
     * scales by capacity / quantile. Further rounds (tessel's) measure the
     * quantile again with the same points and solve quantile = capacity
     * (both change with the scale: the capacity shrinks as a CSR tile's
     * offsets grow) by a secant step on log(quantile / capacity) over
     * log(scale), kept inside the bracket the rounds have found. */
    double q0, cap0;
    measure(z, smp, n, s, &q0, &cap0);
    double top = strat_scale_max(z->c, z->ratio);
    double ls0 = log(s), f0 = q0 > 0 ? log(q0 / cap0) : -50;
    double lo = 0, hi = log(top); /* bracket in log scale */
    if (f0 > 0)
        hi = ls0;
    else
        lo = ls0;
    if (q0 > 0)
        s = scale_for_area(z->c, in, z->ratio, z->gran,
                           area_at(z->c, in, z->ratio, z->gran, s, shape) * cap0 / q0);
    for (unsigned r = 1; r < st->rounds; r++) {
        double q1, cap1;
        measure(z, smp, n, s, &q1, &cap1);
        double ls1 = log(s), f1 = q1 > 0 ? log(q1 / cap1) : -50;
        if (fabs(f1) < 1e-3)
            break;
        if (f1 > 0 && ls1 < hi)
            hi = ls1;
        if (f1 < 0 && ls1 > lo)
            lo = ls1;
        double next = f1 != f0 ? ls1 - f1 * (ls1 - ls0) / (f1 - f0) : (lo + hi) / 2;
        if (!(next > lo && next < hi))
            next = (lo + hi) / 2;
        ls0 = ls1;
        f0 = f1;
        s = exp(next);
        if (s < 1)
            s = 1;
    }
    if (st->rounds > 1)
        s = nearest_step(z, smp, n, s);
    tessel_dealloc(z->c->alloc, smp);
    *sampled += hits;
    *scale = s;
    return TESSEL_OK;
}

int strat_swiftiles(strat_ctx *c, tessel_strategy_choice *out)
{
    const tessel_spec_strategy *st = &c->spec->strategy;
    out->overbooking_target = st->overbooking;
    for (unsigned i = 0; i < c->nin; i++)
        if (c->in[i].order > 2 || (!c->in[i].data && c->in[i].nnz))
            return tessel_diag_set(c->diag, TESSEL_EUNSUPPORTED, st->pos.file, st->pos.line,
                                   st->pos.column, "mapping.strategy",
                                   "swiftiles samples tiles of 2-D inputs from their data "
                                   "(not from saved statistics)");
    gsl_rng *rng = tessel_rng_create(c->alloc, st->seed);
    if (!rng)
        return tessel_diag_set(c->diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    unsigned levels[TESSEL_SPEC_MAX_LEVELS];
    unsigned nl = strat_levels(c, levels);
    int rc = TESSEL_OK;
    for (unsigned li = 0; li < nl && !rc; li++) {
        unsigned l = levels[li];
        double ratio[STRAT_NX], best = 0;
        uint64_t gran[STRAT_NX];
        strat_ratio(c, l, ratio);
        strat_level_granules(c, l, 0, out, gran);
        for (unsigned i = 0; i < c->nin && !rc; i++) {
            sizing z = { c, l, &c->in[i], ratio, gran, strat_partition(c, l, c->in[i].tensor) };
            double s = 0;
            if (!z.part || c->in[i].order < 2)
                continue; /* a vector's tile is a segment: nothing to overbook by sampling */
            rc = size_input(&z, rng, &s, &out->sampled_tiles);
            if (!best || s < best)
                best = s;
            out->candidates += st->rounds;
        }
        if (!best)
            best = strat_scale_max(c, ratio);
        strat_tiles t;
        strat_tiles_at(c, ratio, gran, best, &t);
        memcpy(out->tile[l], t.t, sizeof(out->tile[l]));
        out->levels |= 1u << l;
    }
    tessel_rng_free(c->alloc, &rng);
    return rc;
}

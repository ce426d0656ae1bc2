/* Each output tile's occupancy at a nested boundary when the output sample
 * is partial (issue 18 item 3; docs/models/stat.md "Output spill with a
 * partial sample"). The sample's estimate of a tile, S^ (its sampled rows'
 * nonzeros times their weights, a Horvitz-Thompson sum), is unbiased but,
 * for a tile of few rows, decided by one or two sampled rows; rule 4's
 * spill is a hinge of the occupancy, so that noise alone inflates it. Here
 * every effectual tile pair gets a prior independent of its own sampled
 * rows: the draw's sketch predictions of the output nonzeros of A's tile
 * row I (every row has one, stat_output.c), calibrated to the sample's
 * total and split over the row's pairs along a coverage curve in rho M
 * (coverage_split), M the pair's products (from A's and B's level-b tile
 * grids, each tile's nonzeros spread uniformly over its reduction edge)
 * and rho a compression ratio estimated from the sample per stratum of M
 * (log2 bins), then calibrated per quarter octave of the prior itself
 * against the sample's nonzeros scaled to each band's total
 * (prior_calibration: a stratum of M can mix pairs whose products collapse
 * differently). The two are
 * combined by their variances (empirical Bayes): S~ = lam S^ + (1 - lam)
 * P, lam = t / (t + v), v the relative sampling variance of S^ under the
 * draw (sum (1/p - 1) x^2 / (sum x)^2 over the band's rows, x the
 * predictions), t the prior's relative error, estimated by the method of
 * moments over all pairs (what the sampling noise does not explain, the
 * noise's model scaled to the draw's variance measured on the bands). The
 * spill is then priced as the mean over the tile's remaining uncertainty
 * (relative variance lam v, lognormal, five Gauss-Hermite nodes):
 * E[max(0, S - P)], not max(0, E[S] - P). A pair's
 * partial tiles follow its sampled path blended with the prior's, which
 * follows its stratum's fill curve: the share of the final nonzeros present
 * after a share of the products, a combined ratio estimate over the sampled
 * pairs' paths (stat_prior_curves; concave where later products land on
 * outputs already there). Needs the rows'
 * predictions (stat_output.c's xcell, vcell); without them (version-2
 * statistics) the spill is priced from the sample alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stat_nested.h"

/* Pseudo tile rows pulling a stratum's ratio and fill curve toward the
 * global ones (prior_ratios: a stratum counts its tile rows). */
#define PRIOR_POOL 8.0
/* The calibration's neighbours each side (quarter octaves), weighted
 * 1 - |d| / (PRIOR_CAL_SPAN + 1): a triangle half an octave wide, so that
 * a bin's edge does not decide a tile's calibration (bcsstk11's densest
 * priors, 1,735 and 1,777, sat alone in the bin above their peers). */
#define PRIOR_CAL_SPAN 1
/* log2 of the products at bin 0 (fractional products: uniform spread). */
#define PRIOR_BIN0 (-20)

static unsigned prior_bin(double m)
{
    if (m <= 0)
        return 0;
    int b = (int)floor(log2(m)) - PRIOR_BIN0;
    return b < 0 ? 0 : b >= PRIOR_BINS ? PRIOR_BINS - 1 : (unsigned)b;
}

/* The products of every effectual pair (I, J) of tile row I, uniform
 * inside a reduction tile: M = sum_K nnz A(I,K) nnz B(K,J) / |K|. acc
 * (ext_j, zero) receives them at the touched J (listed in *touched). */
void stat_prior_row(const nested *n, uint64_t i, double *acc, uint64_t *touched, uint64_t *nt)
{
    uint64_t tk = n->bd.tile[XK], ext = n->e->extent[XK];
    *nt = 0;
    for (uint64_t p = n->a.ptr[i]; p < n->a.ptr[i + 1]; p++) {
        uint64_t k = n->a.col[p], lo = k * tk;
        double edge = (double)(lo + tk <= ext ? tk : ext - lo);
        edge = edge > 0 ? edge : 1;
        double na = (double)n->a.nnz[p];
        for (uint64_t q = n->b.ptr[k]; q < n->b.ptr[k + 1]; q++) {
            uint64_t j = n->b.col[q];
            if (acc[j] == 0)
                touched[(*nt)++] = j;
            acc[j] += na * (double)n->b.nnz[q] / edge;
        }
    }
}

/* Tile row I's predicted nonzeros (the rows' sketches) and the relative
 * sampling variance of its estimate, from the sample's i cells. */
static void band_of(const nested *n, const out_prior *pr, uint64_t i, double *x, double *v)
{
    const stat_output_sample *s = pr->sample;
    uint64_t fi = n->ea[0] / s->base[0], lo = i * fi, hi = lo + fi;
    double sx = 0, sv = 0;
    for (uint64_t c = lo; c < hi && c < s->nxcell; c++) {
        sx += s->xcell[c];
        sv += s->vcell[c];
    }
    *x = sx;
    *v = sx > 0 ? sv / (sx * sx) : 0;
}

/* Splits target nonzeros over a row's pairs of weights e[0 .. nt) (rho
 * M) along a coverage curve: q = C (1 - exp(-a e / C)), a such that the
 * q sum to the target. Products landing at random on a tile's C cells
 * leave that many distinct, so a dense pair fills toward C rather than
 * past it, and what it cannot hold goes to the row's other pairs (a
 * linear split capped at C lost it, and put G51's densest 32x64 tiles at
 * 2,048 where they hold 1,500-1,900). Sparse pairs (a e << C) keep the
 * linear split. Newton from the linear solution: f(a) is concave and
 * increasing, so the iterates rise monotonically to the root. */
static void coverage_split(double target, double cells, double *e, uint64_t nt)
{
    double sum = 0;
    for (uint64_t t = 0; t < nt; t++)
        sum += e[t];
    if (sum <= 0 || target <= 0) {
        for (uint64_t t = 0; t < nt; t++)
            e[t] = 0;
        return;
    }
    double a = target / sum;
    if (cells > 0 && target >= cells * (double)nt) {
        for (uint64_t t = 0; t < nt; t++)
            e[t] = e[t] > 0 ? cells : 0;
        return;
    }
    for (unsigned it = 0; cells > 0 && it < 60; it++) {
        double f = 0, d = 0;
        for (uint64_t t = 0; t < nt; t++) {
            double x = exp(-a * e[t] / cells);
            f += cells * (1 - x);
            d += e[t] * x;
        }
        if (d <= 0 || target - f <= 1e-12 * target)
            break;
        a += (target - f) / d;
    }
    for (uint64_t t = 0; t < nt; t++)
        e[t] = cells > 0 ? cells * -expm1(-a * e[t] / cells) : a * e[t];
}

/* A prior's calibration bin: quarter octaves from 2^-12 nonzeros. */
static unsigned cal_bin(double q)
{
    if (q <= 0)
        return 0;
    int b = (int)floor(4 * log2(q)) + 48;
    return b < 0 ? 0 : b >= PRIOR_CAL ? PRIOR_CAL - 1 : (unsigned)b;
}

double stat_prior_raw(const nested *n, const out_prior *pr, uint64_t i, const double *acc,
                      const uint64_t *touched, uint64_t nt, double *q)
{
    double x, v;
    band_of(n, pr, i, &x, &v);
    for (uint64_t t = 0; t < nt; t++) {
        double m = acc[touched[t]];
        q[t] = pr->rho[prior_bin(m)] * m;
    }
    coverage_split(pr->g * x, pr->cells, q, nt);
    /* calibrated, then scaled back to the band's total (the split's) */
    double before = 0, after = 0;
    for (uint64_t t = 0; t < nt; t++) {
        before += q[t];
        q[t] *= pr->cal[cal_bin(q[t])];
        after += q[t];
    }
    for (uint64_t t = 0; after > 0 && t < nt; t++)
        q[t] *= before / after;
    return v;
}

/* The sample's weighted nonzeros in tile row I (its cells on the level-b
 * grid; the cells are sorted by i cell first). */
static double band_sampled(const nested *n, const stat_output_sample *s, uint64_t i)
{
    uint64_t fi = n->ea[0] / s->base[0], fj = n->eb[1] / s->base[1], lo = i * fi, l = 0,
             h = s->ncells;
    while (l < h) {
        uint64_t mid = l + (h - l) / 2;
        if (s->ci[mid] < lo)
            l = mid + 1;
        else
            h = mid;
    }
    double tot = 0;
    for (uint64_t c = l; c < s->ncells && s->ci[c] < lo + fi; c++)
        if (s->cj[c] / fj < n->ext_j)
            tot += s->weight[c];
    return tot;
}

/* Per stratum of the products: their sum, the sample's estimates and the
 * pairs sampled; pooled: the sums of the calibration and the moments. */
typedef struct prior_sums {
    double m[PRIOR_BINS], s[PRIOR_BINS], pairs[PRIOR_BINS];
    /* the tile rows holding a sampled pair (the evidence: see prior_ratios),
     * and the last one counted per stratum (I + 1) */
    double sampled[PRIOR_BINS];
    uint64_t last[PRIOR_BINS];
    double x; /* the bands' predictions, rows with an effectual pair */
    double q, sq, qq, vqq, ss, st;
    /* the spread of sum (S^ - S)^2 under the draw alone: per pair
     * (v q^2)^2 (2 + v), v q^2 its sampling variance at the raw scale */
    double n4;
    /* per calibration bin of the prior: the band-scaled sample, the priors,
     * the tile rows (evidence) and the last one counted (I + 1) */
    double cr[PRIOR_CAL], cq[PRIOR_CAL], crows[PRIOR_CAL];
    uint64_t clast[PRIOR_CAL];
    /* pass 1, with the rows' exact counts: the bands' squared errors
     * (sampled against exact) and their modelled sampling variances */
    double berr, bvar, bands;
} prior_sums;

/* Pass 1's terms of a pair in tile row i: its prior q in its bin against
 * the sample's S^ scaled to the band's total (scale; 0: no sampled row). */
static void calibration_sums(uint64_t i, double q, double s, double scale, prior_sums *ps)
{
    if (scale <= 0)
        return;
    unsigned b = cal_bin(q);
    ps->cr[b] += scale * s;
    ps->cq[b] += q;
    if (ps->clast[b] != i + 1) {
        ps->crows[b] += 1;
        ps->clast[b] = i + 1;
    }
}

/* One pass over every effectual pair (tile-level multiplies): pass 0
 * sums the strata, pass 1 the calibration of the priors, pass 2 the
 * calibrated priors against the sample. */
static int prior_pass(const nested *n, const model_map *final, const out_prior *pr, int pass,
                      prior_sums *ps)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t nj = n->ext_j ? n->ext_j : 1;
    double *acc = tessel_alloc_array(a, nj, sizeof(double));
    double *q = tessel_alloc_array(a, nj, sizeof(double));
    uint64_t *touched = tessel_alloc_array(a, nj, sizeof(uint64_t));
    int rc = acc && q && touched ? TESSEL_OK : TESSEL_ENOMEM;
    if (!rc)
        memset(acc, 0, nj * sizeof(double));
    for (uint64_t i = 0; !rc && i < n->ext_i; i++) {
        uint64_t nt;
        stat_prior_row(n, i, acc, touched, &nt);
        double v = pass ? stat_prior_raw(n, pr, i, acc, touched, nt, q) : 0;
        double scale = 0;
        if (pass == 1 && nt) {
            double x, vb, tot = band_sampled(n, pr->sample, i);
            band_of(n, pr, i, &x, &vb);
            scale = tot > 0 ? pr->g * x / tot : 0;
            if (pr->sample->xexact) {
                ps->berr += (tot - x) * (tot - x);
                ps->bvar += vb * x * x;
                ps->bands += 1;
            }
        }
        if (!pass && nt) {
            double x, vb;
            band_of(n, pr, i, &x, &vb);
            ps->x += x;
        }
        for (uint64_t t = 0; t < nt; t++) {
            uint64_t j = touched[t], pair = i * n->ext_j + j;
            double m = acc[j], s = 0;
            acc[j] = 0;
            if (model_map_find(final, pair) != UINT64_MAX)
                s = model_map_weight(final, pair);
            if (!pass) {
                unsigned b = prior_bin(m);
                ps->m[b] += m;
                ps->s[b] += s;
                if (s > 0 && ps->last[b] != i + 1) {
                    ps->sampled[b] += 1;
                    ps->last[b] = i + 1;
                }
                ps->pairs[b] += 1;
                continue;
            }
            if (pass == 1) {
                calibration_sums(i, q[t], s, scale, ps);
                continue;
            }
            ps->q += q[t];
            ps->sq += s * q[t];
            ps->qq += q[t] * q[t];
            ps->vqq += v * q[t] * q[t];
            ps->ss += s * s;
            ps->st += s;
            double vq2 = v * q[t] * q[t];
            ps->n4 += vq2 * vq2 * (2 + v);
        }
    }
    tessel_dealloc(a, acc);
    tessel_dealloc(a, q);
    tessel_dealloc(a, touched);
    return rc;
}

/* The strata's compression ratios, pooled toward the global one; 0 when
 * the sample holds nothing. A stratum's own ratio counts as many
 * observations as tile rows hold its sampled pairs, not as many pairs: the
 * draw is systematic in storage order, so a tile row of a few rows holds
 * about one drawn row at 5 % and its pairs in the stratum all rest on it
 * (docs/models/stat.md "The strata's evidence"). */
static int prior_ratios(const prior_sums *ps, out_prior *pr)
{
    double m = 0, sum = 0;
    for (unsigned b = 0; b < PRIOR_BINS; b++) {
        m += ps->m[b];
        sum += ps->s[b];
    }
    if (m <= 0 || sum <= 0)
        return 0;
    double rho = sum / m;
    for (unsigned b = 0; b < PRIOR_BINS; b++) {
        double r = ps->m[b] > 0 ? ps->s[b] / ps->m[b] : rho;
        /* the ratio before saturation, since the split applies the
         * coverage curve again (coverage_split): the stratum's mean pair
         * (m bar products, S bar nonzeros) inverted through it, S bar =
         * C (1 - exp(-r m bar / C)); a log2 stratum spans a factor 2 in m */
        double c = pr->cells, mb = ps->pairs[b] > 0 ? ps->m[b] / ps->pairs[b] : 0;
        if (c > 0 && mb > 0 && ps->s[b] > 0) {
            double fill = ps->s[b] / (ps->pairs[b] * c);
            r = -c * log1p(-(fill < 0.999 ? fill : 0.999)) / mb;
        }
        pr->rho[b] = (ps->sampled[b] * r + PRIOR_POOL * rho) / (ps->sampled[b] + PRIOR_POOL);
    }
    return 1;
}

/* The priors' calibration: per quarter octave of the coverage split's prior
 * q, the sample's nonzeros scaled to their band's total (a ratio estimator
 * whose noise is only where the band's sampled rows' nonzeros fall, not how
 * many rows were drawn) over the priors, pulled toward 1 by PRIOR_POOL
 * pseudo tile rows against the bin's own. The strata of M give each pair a
 * ratio of its products; where a stratum mixes pairs whose products
 * collapse differently (a banded matrix's diagonal tiles against their
 * neighbours, bcsstk11), the split gives the densest too much: the bin
 * of their prior sees it (docs/models/stat.md "The prior calibrated on
 * its own scale"). */
static void prior_calibration(const prior_sums *ps, out_prior *pr)
{
    for (unsigned b = 0; b < PRIOR_CAL; b++) {
        double r = 0, q = 0, rows = 0;
        for (int d = -PRIOR_CAL_SPAN; d <= PRIOR_CAL_SPAN; d++) {
            int c = (int)b + d;
            if (c < 0 || c >= PRIOR_CAL)
                continue;
            double w = (double)(PRIOR_CAL_SPAN + 1 - abs(d)) / (PRIOR_CAL_SPAN + 1);
            r += w * ps->cr[c];
            q += w * ps->cq[c];
            rows += w * ps->crows[c];
        }
        double own = q > 0 ? r / q : 1;
        pr->cal[b] = (rows * own + PRIOR_POOL) / (rows + PRIOR_POOL);
    }
}

/* The draw's sampling variance against the model's (issue 18,
 * docs/models/stat.md "The nested prior's error behind the draw's
 * noise"). v q^2 is a Poisson draw's variance, but the draw is
 * systematic in storage order, and its variance is a fraction of that
 * (rajat19 shape 6: the sampled pairs' true sum (S^ - S)^2 2.8e7
 * against 6.9e7 modelled; G51 6.8e6 against 8.3e7). Taken in full, the
 * model's noise left no error to a prior calibrated on the same sample
 * (trel 0 on every matrix, rajat19's true 0.38), and every tile was
 * priced at its prior with no spread. Where the rows'
 * exact counts are known (xexact), each band's estimate against its
 * exact total measures the draw's variance, and its ratio to the
 * model's over the bands scales the model (at most 1, never more
 * noise than the model's). */
static double prior_deff(const prior_sums *ps)
{
    if (ps->bvar <= 0 || ps->bands < 1)
        return 1;
    double d = ps->berr / ps->bvar * (1 + 2 * sqrt(2 / ps->bands));
    return d < 1 ? d : 1;
}

int stat_prior_init(const nested *n, const stat_output_sample *s, const model_map *final,
                    double cells, out_prior *pr)
{
    memset(pr, 0, sizeof(*pr));
    pr->sample = s;
    pr->cells = cells;
    for (unsigned b = 0; b < PRIOR_BINS; b++)
        for (unsigned c = 0; c <= PRIOR_CURVE; c++)
            pr->curve[b][c] = (double)c / PRIOR_CURVE;
    for (unsigned b = 0; b < PRIOR_CAL; b++)
        pr->cal[b] = 1;
    pr->deff = 1;
    if (s->whole || !s->xcell || !s->vcell || !n->ext_i || !n->ext_j)
        return TESSEL_OK;
    prior_sums ps;
    memset(&ps, 0, sizeof(ps));
    int rc = prior_pass(n, final, pr, 0, &ps);
    if (rc || !prior_ratios(&ps, pr) || ps.x <= 0)
        return rc;
    /* calibrated to the sample's total (a ratio estimator: the sketch's
     * bias cancels): each band's target is g times its predictions */
    double st = 0;
    for (unsigned b = 0; b < PRIOR_BINS; b++)
        st += ps.s[b];
    pr->g = st / ps.x;
    rc = prior_pass(n, final, pr, 1, &ps);
    if (rc)
        return rc;
    prior_calibration(&ps, pr);
    pr->deff = prior_deff(&ps);
    rc = prior_pass(n, final, pr, 2, &ps);
    if (rc || ps.q <= 0 || ps.st <= 0)
        return rc;
    /* the prior's error is what the sampling noise does not explain:
     * sum (S^ - q)^2 = sum (S - q)^2 + sum Var S^ (q calibrated) */
    double scale = ps.qq, noise = pr->deff * ps.vqq;
    double err = ps.ss - 2 * ps.sq + ps.qq;
    /* the prior's error counts only where err exceeds the noise by two
     * spreads of the noise's own sum of squares, so that the noise alone
     * does not pass for it. The terms are heavy-tailed: a tile of one row
     * drawn with probability p is that row times 1/p or 0, so (S^ - S)^2
     * has variance about (v S^2)^2 (1 + v), v = 1/p - 1 its relative
     * variance; sums of several rows are near normal, 2 (v S^2)^2; both
     * are under (v S^2)^2 (2 + v). This spread shrinks with v, so as the
     * sample grows to the whole the blend follows it (lam -> 1) wherever
     * the prior errs; the spread of err itself (sqrt sum (S^ - q)^4)
     * grew with the prior's own error and hid it even at a 99 % sample. */
    double excess = err - noise - 2 * pr->deff * sqrt(ps.n4);
    pr->trel = scale > 0 && excess > 0 ? excess / scale : 0;
    pr->on = 1;
    return TESSEL_OK;
}

void stat_prior_pair(const out_prior *pr, double m, double q, double v, double shat,
                     double cells, prior_pair *pp)
{
    v *= pr->deff;
    pp->prior = q < cells ? q : cells;
    pp->m = m;
    pp->lam = pr->trel + v > 0 ? pr->trel / (pr->trel + v) : 1;
    pp->mean = pp->lam * shat + (1 - pp->lam) * pp->prior;
    /* the tile's remaining relative variance, lam v (prior scale) */
    double sd = pp->mean > 0 ? pp->prior / pp->mean : 0;
    pp->rv = pp->lam * v * sd * sd;
    pp->z = 1;
    pp->curve = pr->curve[prior_bin(m)];
}

double stat_prior_path(const prior_pair *pp, double sampled, double mcum)
{
    /* the prior's partial tile follows its stratum's fill curve in the
     * share of the products seen (linear between the curve's points) */
    double f = 1;
    if (pp->m > 0 && mcum < pp->m) {
        double x = mcum / pp->m * PRIOR_CURVE;
        unsigned c = (unsigned)x;
        c = c < PRIOR_CURVE ? c : PRIOR_CURVE - 1;
        f = pp->curve ? pp->curve[c] + (x - c) * (pp->curve[c + 1] - pp->curve[c])
                      : mcum / pp->m;
    }
    return pp->z * (pp->lam * sampled + (1 - pp->lam) * pp->prior * f);
}

/* One sampled pair's fill path: its effectual K in order (A's tile row i
 * against B's tile column j), the products seen (uniform inside a
 * reduction tile, as stat_prior_row) and the sampled nonzeros present
 * (weights w[0 .. ns) at steps k[]). With m = 0 returns the products
 * only; else adds the sampled nonzeros present at each share c /
 * PRIOR_CURVE of m to at[c] (linear inside a step). */
static double fill_path(const nested *n, const stat_grid *bt, uint64_t i, uint64_t j,
                        const uint64_t *k, const double *w, uint64_t ns, double m, double *at)
{
    pair_walk pw;
    stat_pair_walk(n, bt, i, j, &pw);
    uint64_t s = 0, kk;
    unsigned c = 1;
    double mcum = 0, f0 = 0, s0 = 0, s1 = 0, na, nb, prod;
    while ((kk = stat_pair_next(n, &pw, &na, &nb, &prod)) != UINT64_MAX) {
        mcum += prod;
        if (m <= 0)
            continue;
        while (s < ns && k[s] <= kk)
            s1 += w[s++];
        double f1 = mcum / m;
        for (; c < PRIOR_CURVE && (double)c / PRIOR_CURVE <= f1; c++)
            at[c] += s0 + (s1 - s0) * ((double)c / PRIOR_CURVE - f0) / (f1 - f0);
        f0 = f1;
        s0 = s1;
    }
    return mcum;
}

void stat_pair_walk(const nested *n, const stat_grid *bt, uint64_t i, uint64_t j, pair_walk *w)
{
    w->x = &n->a.col[n->a.ptr[i]];
    w->na = &n->a.nnz[n->a.ptr[i]];
    w->nx = n->a.ptr[i + 1] - n->a.ptr[i];
    w->y = &bt->col[bt->ptr[j]];
    w->nb = &bt->nnz[bt->ptr[j]];
    w->ny = bt->ptr[j + 1] - bt->ptr[j];
    w->p = w->q = 0;
}

uint64_t stat_pair_next(const nested *n, pair_walk *w, double *na, double *nb, double *prod)
{
    while (w->p < w->nx && w->q < w->ny) {
        if (w->x[w->p] < w->y[w->q]) {
            w->p++;
            continue;
        }
        if (w->y[w->q] < w->x[w->p]) {
            w->q++;
            continue;
        }
        uint64_t k = w->x[w->p], tk = n->bd.tile[XK], ext = n->e->extent[XK], lo = k * tk;
        *na = (double)w->na[w->p++];
        *nb = (double)w->nb[w->q++];
        *prod = *na * *nb / (double)(lo + tk <= ext ? tk : ext - lo);
        return k;
    }
    return UINT64_MAX;
}

/* The strata's fill curves from their sampled paths (at, over their
 * final totals tot), each pulled toward the pooled curve by PRIOR_POOL
 * pseudo tile rows against its cnt tile rows. */
static void pool_curves(double (*at)[PRIOR_CURVE + 1], const double *tot, const double *cnt,
                        out_prior *pr)
{
    /* the global curve, then each stratum's pulled toward it by
     * PRIOR_POOL pseudo tile rows (as the ratios rho) */
    double all[PRIOR_CURVE + 1], total = 0;
    memset(all, 0, sizeof(all));
    for (unsigned bin = 0; bin < PRIOR_BINS; bin++) {
        total += tot[bin];
        for (unsigned c = 1; c < PRIOR_CURVE; c++)
            all[c] += at[bin][c];
    }
    if (total <= 0)
        return;
    for (unsigned bin = 0; bin < PRIOR_BINS; bin++)
        for (unsigned c = 1; c < PRIOR_CURVE; c++) {
            double own = tot[bin] > 0 ? at[bin][c] / tot[bin] : 0;
            pr->curve[bin][c] = (cnt[bin] * own + PRIOR_POOL * all[c] / total) /
                                (cnt[bin] + PRIOR_POOL);
        }
}

int stat_prior_curves(const nested *n, const stat_grid *bt, const model_vec *keys,
                      const model_map *steps, out_prior *pr)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t cap = 1;
    for (uint64_t b = 0, e = 0; b < keys->n; b = e) {
        for (e = b; e < keys->n && keys->v[e] / n->ext_k == keys->v[b] / n->ext_k; e++)
            ;
        cap = e - b > cap ? e - b : cap;
    }
    uint64_t *k = tessel_alloc_array(a, cap, sizeof(uint64_t));
    double *w = tessel_alloc_array(a, cap, sizeof(double));
    if (!k || !w) {
        tessel_dealloc(a, k);
        tessel_dealloc(a, w);
        return TESSEL_ENOMEM;
    }
    /* per stratum: the sampled nonzeros present at each share of the
     * products, their final total and the pairs (a ratio estimator of the
     * stratum's fill curve: the rows' weights cancel in the share) */
    double at[PRIOR_BINS][PRIOR_CURVE + 1], tot[PRIOR_BINS], cnt[PRIOR_BINS];
    uint64_t last[PRIOR_BINS]; /* the last tile row counted per stratum (I + 1) */
    memset(last, 0, sizeof(last));
    memset(at, 0, sizeof(at));
    memset(tot, 0, sizeof(tot));
    memset(cnt, 0, sizeof(cnt));
    for (uint64_t b = 0, e = 0; b < keys->n; b = e) {
        uint64_t pair = keys->v[b] / n->ext_k, ns = 0;
        double fin = 0;
        for (e = b; e < keys->n && keys->v[e] / n->ext_k == pair; e++, ns++) {
            k[ns] = keys->v[e] % n->ext_k;
            w[ns] = model_map_weight(steps, keys->v[e]);
            fin += w[ns];
        }
        uint64_t i = pair / n->ext_j, j = pair % n->ext_j;
        double m = fill_path(n, bt, i, j, k, w, ns, 0, NULL);
        if (m <= 0 || fin <= 0)
            continue;
        unsigned bin = prior_bin(m);
        fill_path(n, bt, i, j, k, w, ns, m, at[bin]);
        tot[bin] += fin;
        /* the stratum's evidence is its tile rows, not its pairs (keys are
         * sorted by pair, so by I): as prior_ratios */
        if (last[bin] != i + 1) {
            cnt[bin] += 1;
            last[bin] = i + 1;
        }
    }
    tessel_dealloc(a, k);
    tessel_dealloc(a, w);
    pool_curves(at, tot, cnt, pr);
    return TESSEL_OK;
}

/* five-point Gauss-Hermite on log S (nodes, weights / sqrt(pi)) */
static const double gh_x[5] = { -2.020182870456086, -0.958572464613819, 0, 0.958572464613819,
                                2.020182870456086 };

double stat_prior_top(const prior_pair *pp)
{
    if (pp->rv <= 0)
        return 1;
    double s2 = log1p(pp->rv), s = sqrt(s2);
    return exp(s * 1.4142135623730951 * gh_x[4] - s2 / 2);
}

unsigned stat_prior_nodes(const prior_pair *pp, double *z, double *w)
{
    const double *x = gh_x;
    static const double wt[5] = { 0.019953242059046, 0.393619323152241, 0.945308720482942,
                                  0.393619323152241, 0.019953242059046 };
    if (pp->rv <= 0) {
        z[0] = 1;
        w[0] = 1;
        return 1;
    }
    double s2 = log1p(pp->rv), s = sqrt(s2);
    for (unsigned q = 0; q < 5; q++) {
        z[q] = exp(s * 1.4142135623730951 * x[q] - s2 / 2);
        w[q] = wt[q] * 0.5641895835477563; /* 1 / sqrt(pi) */
    }
    return 5;
}

/* The gamma template's Che approximations of the FiberCache (the model
 * and the reference: gamma.c): the independent reference model's
 * characteristic time, its banded refinement, and per set for the
 * set-associative policy. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gamma_internal.h"

/* ------------------------------------------------------------------ */
/* Statistical: Che's approximation (see the top comment). */

/* The banded refinement of Che's approximation, when the statistics hold
 * A's base tile grid by rows (i then k): the trace visits A's row blocks
 * (bands) in order, and within band b fiber k is referenced
 * n_kb = n_k cnt(b, K) / cnt(., K) times (K its column block: its
 * references spread over the bands as its block's nonzeros are), as a
 * Poisson process over the band's M_b references. Per band, Che's T_b
 * solves sum_k s_k (1 - exp(-n_kb T_b / M_b)) = C over the band's fibers
 * (T_b infinite when the band's expected footprint sum_k s_k (1 -
 * exp(-n_kb)) fits). Fiber k then misses on its first reference in the
 * band unless resident from earlier bands (probability r_k), and on each
 * later one with probability exp(-n_kb T_b / M_b):
 *     misses_kb = p_kb (1 - r_k) + (n_kb - p_kb) exp(-n_kb T_b / M_b),
 *     p_kb = 1 - exp(-n_kb)  (referenced at all in the band).
 * At the band's end r_k = 1 - exp(-n_kb T_b / M_b) for its fibers (p_kb
 * when T_b is infinite), and the fibers it did not reference survive with
 * probability max(0, 1 - footprint / C) (a cumulative factor per band, so
 * a band costs only its own fibers). Our heuristic extension of Che (the
 * independent reference model within a band, a row-block's worth of
 * locality across them); O(non-empty tiles x tile width x bisection
 * steps). */
int gamma_che_banded(const tessel_spec_level *lv, const tessel_tile_grid *g, const uint64_t *a_cols,
                     const uint64_t *b_rows, uint64_t K, double cap, const tessel_allocator *a,
                     double *misses_out, double *miss_nnz_out)
{
    uint64_t tw = g->tile[1], nb = g->extent[0], nkb = g->extent[1];
    double *colsum = tessel_alloc_array(a, nkb ? nkb : 1, sizeof(double));
    double *res = tessel_alloc_array(a, K ? K : 1, sizeof(double));
    uint64_t *last = tessel_alloc_array(a, K ? K : 1, sizeof(uint64_t));
    double *cum = tessel_alloc_array(a, nb + 1, sizeof(double));
    if (!colsum || !res || !last || !cum) {
        tessel_dealloc(a, colsum);
        tessel_dealloc(a, res);
        tessel_dealloc(a, last);
        tessel_dealloc(a, cum);
        return TESSEL_ENOMEM;
    }
    memset(colsum, 0, (nkb ? nkb : 1) * sizeof(double));
    for (uint64_t t = 0; t < g->nonempty; t++)
        colsum[tessel_tile_grid_key(g, t)] += (double)tessel_tile_grid_count(g, t);
    for (uint64_t k = 0; k < K; k++)
        res[k] = 0, last[k] = 0;
    cum[0] = 0;
    double misses = 0, miss_nnz = 0;
    uint64_t t0 = 0;
    for (uint64_t b = 0; b < nb; b++) {
        cum[b + 1] = cum[b];
        if (b >= g->extent[0] || t0 == tessel_tile_grid_row_begin(g, b + 1))
            continue;
        uint64_t t1 = t0;
        double M = 0;
        while (t1 < tessel_tile_grid_row_begin(g, b + 1))
            M += (double)tessel_tile_grid_count(g, t1++);
        /* the band's footprint */
        double foot = 0;
        for (uint64_t t = t0; t < t1; t++) {
            uint64_t kt = tessel_tile_grid_key(g, t);
            double share = (double)tessel_tile_grid_count(g, t) / colsum[kt];
            uint64_t k1 = (kt + 1) * tw < K ? (kt + 1) * tw : K;
            for (uint64_t k = kt * tw; k < k1; k++) {
                double s = (double)gamma_fiber_bits(b_rows[k], lv);
                if (a_cols[k] && s <= cap)
                    foot += s * -expm1(-(double)a_cols[k] * share);
            }
        }
        double T = INFINITY;
        if (foot > cap) {
            double lo = 0, hi = M;
            for (int it = 0; it < 60; it++) {
                double mid =
                    it < 30 && hi > 2 * lo ? sqrt((lo > 0 ? lo : 1e-9 * M) * hi) : 0.5 * (lo + hi);
                double f = 0;
                for (uint64_t t = t0; t < t1; t++) {
                    uint64_t kt = tessel_tile_grid_key(g, t);
                    double share = (double)tessel_tile_grid_count(g, t) / colsum[kt];
                    uint64_t k1 = (kt + 1) * tw < K ? (kt + 1) * tw : K;
                    for (uint64_t k = kt * tw; k < k1; k++) {
                        double s = (double)gamma_fiber_bits(b_rows[k], lv);
                        if (a_cols[k] && s <= cap)
                            f += s * -expm1(-(double)a_cols[k] * share * mid / M);
                    }
                }
                if (f < cap)
                    lo = mid;
                else
                    hi = mid;
            }
            T = 0.5 * (lo + hi);
        }
        for (uint64_t t = t0; t < t1; t++) {
            uint64_t kt = tessel_tile_grid_key(g, t);
            double share = (double)tessel_tile_grid_count(g, t) / colsum[kt];
            uint64_t k1 = (kt + 1) * tw < K ? (kt + 1) * tw : K;
            for (uint64_t k = kt * tw; k < k1; k++) {
                if (!a_cols[k])
                    continue;
                double n = (double)a_cols[k] * share;
                double s = (double)gamma_fiber_bits(b_rows[k], lv);
                double p = -expm1(-n), m, r;
                if (s > cap) {
                    m = n, r = 0;
                } else {
                    double r0 = res[k] * exp(cum[b] - cum[last[k]]);
                    double e = isinf(T) ? 0 : exp(-n * T / M);
                    m = p * (1 - r0) + (n - p > 0 ? (n - p) * e : 0);
                    r = isinf(T) ? p + (1 - p) * r0 : 1 - e;
                }
                misses += m;
                miss_nnz += m * (double)b_rows[k];
                res[k] = r;
                last[k] = b + 1;
            }
        }
        double sigma = foot < cap ? 1 - foot / cap : 0;
        cum[b + 1] = cum[b] + log(sigma > 1e-300 ? sigma : 1e-300);
        t0 = t1;
    }
    tessel_dealloc(a, colsum);
    tessel_dealloc(a, res);
    tessel_dealloc(a, last);
    tessel_dealloc(a, cum);
    *misses_out = misses;
    *miss_nnz_out = miss_nnz;
    return TESSEL_OK;
}

/* Che per set for the set-associative FiberCache (`policy:
 * set-associative`): B's layout follows from the statistics alone (the
 * prefix sums of nnz(B row k) place fiber k's lines exactly, as in the
 * exact trace), and line l is referenced at the rate r_l = sum of n_k over
 * the fibers k it holds part of (n_k = nnz(A column k)). Each set is an
 * LRU cache of `ways` equal lines under the independent reference model:
 * T_s solves sum_{l in s} (1 - exp(-r_l T_s / M)) = ways (T_s infinite
 * when the set's referenced lines fit), line l misses 1 + (r_l - 1)
 * exp(-r_l T_s / M) times, and a reference to fiber k misses some line
 * with probability 1 - prod_{l in k} (1 - exp(-r_l T_s(l) / M)) (sets
 * taken as independent), its first reference always. O(lines of B x
 * bisection steps). */
typedef struct sa_layout {
    uint64_t sets, ways, line_bits, entry_bits, nlines;
    double M;
} sa_layout;

static double set_time(const sa_layout *L, const double *rate, uint64_t s)
{
    uint64_t used = 0;
    for (uint64_t l = s; l < L->nlines; l += L->sets)
        used += rate[l] > 0;
    if (used <= L->ways)
        return INFINITY;
    double lo = 0, hi = L->M > 0 ? L->M : 1;
    for (int it = 0; it < 200; it++) { /* grow until the set overflows */
        double f = 0;
        for (uint64_t l = s; l < L->nlines; l += L->sets)
            f += -expm1(-rate[l] * hi / L->M);
        if (f >= (double)L->ways)
            break;
        lo = hi;
        hi *= 2;
    }
    for (int it = 0; it < 100 && hi - lo > 1e-9 * hi; it++) {
        double mid = 0.5 * (lo + hi), f = 0;
        for (uint64_t l = s; l < L->nlines; l += L->sets)
            f += -expm1(-rate[l] * mid / L->M);
        if (f < (double)L->ways)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

int gamma_che_set_assoc(const tessel_spec_level *lv, const tpl_options *o, const uint64_t *a_cols,
                        const uint64_t *b_rows, uint64_t K, double M, const tessel_allocator *a,
                        tpl_gamma_counts *g, double *misses_out, double *miss_nnz_out)
{
    sa_layout L = { o->cache_bytes / (o->ways * o->line_bytes), o->ways, o->line_bytes * 8,
                    (uint64_t)lv->value_bits + lv->coord_bits,  0,       M };
    uint64_t total = 0;
    for (uint64_t k = 0; k < K; k++)
        total = tpl_sat_add(total, tpl_sat_mul(b_rows[k], L.entry_bits));
    L.nlines = total / L.line_bits + (total % L.line_bits != 0);
    double *rate = tessel_alloc_array(a, L.nlines ? L.nlines : 1, sizeof(double));
    double *T = tessel_alloc_array(a, L.sets, sizeof(double));
    if (!rate || !T) {
        tessel_dealloc(a, rate);
        tessel_dealloc(a, T);
        return TESSEL_ENOMEM;
    }
    for (uint64_t l = 0; l < L.nlines; l++)
        rate[l] = 0;
    uint64_t pos = 0;
    for (uint64_t k = 0; k < K; pos += b_rows[k] * L.entry_bits, k++)
        if (b_rows[k] && a_cols[k])
            for (uint64_t l = pos / L.line_bits;
                 l <= (pos + b_rows[k] * L.entry_bits - 1) / L.line_bits; l++)
                rate[l] += (double)a_cols[k];
    double line_misses = 0;
    for (uint64_t s = 0; s < L.sets; s++) {
        T[s] = set_time(&L, rate, s);
        for (uint64_t l = s; l < L.nlines; l += L.sets)
            if (rate[l] > 0)
                line_misses += 1 + (isinf(T[s]) ? 0 : (rate[l] - 1) * exp(-rate[l] * T[s] / M));
    }
    double misses = 0, miss_nnz = 0;
    pos = 0;
    for (uint64_t k = 0; k < K; pos += b_rows[k] * L.entry_bits, k++) {
        if (!b_rows[k] || !a_cols[k])
            continue;
        double all_in = 1;
        for (uint64_t l = pos / L.line_bits;
             l <= (pos + b_rows[k] * L.entry_bits - 1) / L.line_bits; l++) {
            double t = T[l % L.sets];
            all_in *= isinf(t) ? 1 : -expm1(-rate[l] * t / M);
        }
        double m = 1 + ((double)a_cols[k] - 1) * (1 - all_in);
        misses += m;
        miss_nnz += m * (double)b_rows[k];
    }
    tessel_dealloc(a, rate);
    tessel_dealloc(a, T);
    g->line_misses = tpl_round_count(line_misses);
    *misses_out = misses;
    *miss_nnz_out = miss_nnz;
    return TESSEL_OK;
}

double gamma_che_load(const che_in *c, double T)
{
    double f = 0;
    for (uint64_t k = 0; k < c->K; k++) {
        double s = (double)gamma_fiber_bits(c->b_rows[k], c->lv);
        if (c->a_cols[k] && s <= c->cap)
            f += s * -expm1(-(double)c->a_cols[k] * T / c->M);
    }
    for (uint64_t i = 0; c->sp && i < c->sp->nrec; i++) {
        const stat_rec *r = &c->sp->rec[i];
        double s = r->nnz * ((double)c->lv->value_bits + c->lv->coord_bits) + c->lv->offset_bits;
        if (s <= c->cap)
            f += r->w * s * (r->d < T ? r->d : T) / c->M;
    }
    return f;
}

/* T solving gamma_che_load(T) = C by doubling then bisection (the load grows
 * with T); INFINITY when everything fits (`all`: the load as T grows). */
double gamma_che_time(const che_in *c, double all)
{
    if (!(all > c->cap))
        return INFINITY;
    double lo = 0, hi = 1;
    for (int it = 0; it < 200; it++) { /* grow until the cache overflows */
        if (gamma_che_load(c, hi) >= c->cap)
            break;
        lo = hi;
        hi *= 2;
    }
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (gamma_che_load(c, mid) < c->cap)
            lo = mid;
        else
            hi = mid;
        if (hi - lo <= 1e-9 * hi)
            break;
    }
    return 0.5 * (lo + hi);
}

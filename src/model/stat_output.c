/* The stat estimator's output sample: rows of Z = A B drawn with
 * probability proportional to their predicted nonzeros over the square
 * root of their multiplies (a HyperLogLog union of B's rows predicts
 * them; systematic sampling in storage order with a take-all threshold),
 * multiplied out symbolically (Gustavson), each nonzero recorded with the
 * smallest reduction index that produces it and its row's weight (a ratio
 * estimator calibrated to the predictions, with a standard error),
 * aggregated into base cells one i cell at a time (memory: the cells, not
 * the multiplies). Cost: the sampled rows' multiplies (the requested
 * fraction of all), a sketch pass over A and B, and a hash and a radix sort
 * of each i cell's cells, once per input pair; a design point afterwards
 * reads only the cells. */
#include <math.h>
#include <string.h>

#include "stat_internal.h"

/* Entries of the (i cell, first k cell) counts kept whatever the inputs' size. */
#define STAT_FIRST_CELLS_MIN (UINT64_C(1) << 16)

void stat_output_sample_free(const tessel_allocator *al, stat_output_sample *s)
{
    tessel_dealloc(al, s->cx);
    tessel_dealloc(al, s->ci);
    tessel_dealloc(al, s->cj);
    tessel_dealloc(al, s->ck);
    tessel_dealloc(al, s->weight);
    tessel_dealloc(al, s->gstart);
    tessel_dealloc(al, s->xcell);
    tessel_dealloc(al, s->vcell);
    tessel_dealloc(al, s->scell);
    tessel_dealloc(al, s->fknnz);
    tessel_first_cells_free(al, &s->fc);
    tessel_dealloc(al, s->ei);
    tessel_dealloc(al, s->er);
    tessel_dealloc(al, s->ej);
    tessel_dealloc(al, s->ek);
    tessel_dealloc(al, s->ew);
    tessel_dealloc(al, s->eptr);
    memset(s, 0, sizeof(*s));
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}


/* The scale c with sum over rows of min(1, c m_i) f_i = budget: row i
 * (size measure m_i, cost f_i multiplies) then enters with probability
 * min(1, c m_i). Bisection in log space; m = NULL means m_i = f_i. */
static double pps_scale(const double *m, const uint64_t *f, uint64_t rows, double budget)
{
    double lo = 1e-300, hi = 1e300;
    for (int it = 0; it < 400; it++) {
        double c = sqrt(lo * hi), cost = 0;
        for (uint64_t i = 0; i < rows; i++) {
            double p = c * (m ? m[i] : (double)f[i]);
            cost += (p < 1 ? p : 1) * (double)f[i];
        }
        if (cost < budget)
            lo = c;
        else
            hi = c;
        if (hi / lo < 1 + 1e-9)
            break;
    }
    return hi;
}

/* Systematic PPS selection: rows in storage order, each taking p (< 1)
 * of a unit interval; a row is drawn when it covers the next point of
 * u, u + 1, u + 2, ... (u uniform in [0, 1) from the seed). Each row's
 * chance is its p, as with independent draws, but the drawn rows spread
 * evenly over the matrix, which keeps the spatial mix of the output
 * (which tiles, which reduction steps) close to the whole one. */
typedef struct systematic {
    double u, covered;
} systematic;

static void systematic_init(systematic *sy, uint64_t seed)
{
    sy->u = (double)(mix(seed + UINT64_C(0x9e3779b97f4a7c15)) >> 11) * 0x1p-53;
    sy->covered = 0;
}

static int systematic_draw(systematic *sy, double p)
{
    if (p >= 1)
        return 1;
    double before = floor(sy->covered + sy->u);
    sy->covered += p;
    return floor(sy->covered + sy->u) > before;
}

/* Cell coordinates (i, x, j, k) packed into one key and back. */
typedef struct cell_space {
    uint64_t ext[4]; /* base cells along i, x, j, k */
} cell_space;

/* extent is along (i, x, j, k) as the key; base is the sample's grid,
 * stored (i, j, k, x): record() divides x by base[3], j by base[1] and k by
 * base[2], so each key digit takes its own index's base. */
static int space_init(cell_space *cs, const uint64_t *extent, const uint64_t *base)
{
    static const unsigned base_of[4] = { 0, 3, 1, 2 };
    long double n = 1;
    for (unsigned m = 0; m < 4; m++) {
        cs->ext[m] = extent[m] / base[base_of[m]] + 1;
        n *= (long double)cs->ext[m];
        if (cs->ext[m] > UINT32_MAX)
            return TESSEL_ERANGE;
    }
    return n > 9.2e18L ? TESSEL_ERANGE : TESSEL_OK;
}

static int cells_groups(const tessel_allocator *al, stat_output_sample *s);

/* The map's cells, sorted by key, into the sample's arrays. */
static int cells_out(const tessel_allocator *al, const model_map *m, const cell_space *cs,
                     stat_output_sample *s)
{
    uint64_t n = m->n ? m->n : 1;
    uint64_t *keys = tessel_alloc_array(al, n, sizeof(uint64_t));
    s->ci = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->cx = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->cj = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->ck = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->weight = tessel_alloc_array(al, n, sizeof(float));
    if (!keys || !s->ci || !s->cx || !s->cj || !s->ck || !s->weight) {
        tessel_dealloc(al, keys);
        return TESSEL_ENOMEM;
    }
    uint64_t c = 0, max = 0;
    if (m->n > UINT32_MAX) {
        tessel_dealloc(al, keys);
        return TESSEL_ERANGE;
    }
    for (uint64_t slot = 0; slot < m->cap; slot++)
        if (m->keys[slot] != UINT64_MAX) {
            keys[c++] = m->keys[slot];
            max = m->keys[slot] > max ? m->keys[slot] : max;
        }
    tessel_sort_u64_inplace(keys, c, max);
    for (uint64_t i = 0; i < c; i++) {
        uint64_t key = keys[i];
        s->weight[i] = (float)model_map_weight(m, key);
        s->ck[i] = (uint32_t)(key % cs->ext[3]);
        key /= cs->ext[3];
        s->cj[i] = (uint32_t)(key % cs->ext[2]);
        key /= cs->ext[2];
        s->cx[i] = (uint32_t)(key % cs->ext[1]);
        s->ci[i] = (uint32_t)(key / cs->ext[1]);
    }
    s->ncells = c;
    tessel_dealloc(al, keys);
    return cells_groups(al, s);
}

/* s->gstart from s's sorted cells: the groups of one output cell pair,
 * for the evaluation's outer loop. */
static int cells_groups(const tessel_allocator *al, stat_output_sample *s)
{
    uint64_t c = s->ncells, groups = 0;
    for (uint64_t i = 0; i < c; i++)
        groups += i == 0 || s->ci[i] != s->ci[i - 1] || s->cx[i] != s->cx[i - 1] ||
                  s->cj[i] != s->cj[i - 1];
    s->gstart = tessel_alloc_array(al, groups + 1, sizeof(uint32_t));
    if (!s->gstart)
        return TESSEL_ENOMEM;
    s->ngroups = 0;
    for (uint64_t i = 0; i < c; i++)
        if (i == 0 || s->ci[i] != s->ci[i - 1] || s->cx[i] != s->cx[i - 1] ||
            s->cj[i] != s->cj[i - 1])
            s->gstart[s->ngroups++] = (uint32_t)i;
    s->gstart[s->ngroups] = (uint32_t)c;
    return TESSEL_OK;
}

/* The sample's cells, built one i cell at a time (rows come in storage
 * order, and the key's leading digit is the i cell): the current i cell's
 * cells in a map (key -> index into lkey, lwt, lwd), appended in key order
 * to the sample's arrays when the i cell ends. The weights of rows taken
 * whole (wt) and of drawn rows (wd) are summed apart in double and a
 * cell's weight is g_take wt + g_drawn wd, rounded once to float: the
 * factors are known before the cells are made (the draw pass, below).
 * Memory: the sample's cells, 16 bytes each (20 with an x mode) and 4 per
 * group, and one i cell's cells, whatever the multiplies. */
typedef struct cell_acc {
    const tessel_allocator *al;
    const cell_space *cs;
    uint64_t icell;       /* the i cell being gathered */
    model_map map;        /* its cells: key -> index */
    model_vec lkey;       /* their keys, in order of arrival */
    double *lwt, *lwd;    /* their weights (whole rows, drawn rows) */
    uint64_t lcap;
    model_vec sorted;     /* scratch for the flush */
    uint32_t *ci, *cx, *cj, *ck; /* the sample's cells so far, in key order (cx
                                  * only with an x mode: else zeros at the end) */
    float *w;             /* their final weights */
    double g_take, g_drawn; /* the weights' factors (ratio_finish) */
    uint64_t n, cap;
} cell_acc;

static void acc_free(cell_acc *acc)
{
    const tessel_allocator *al = acc->al;
    model_map_free(&acc->map);
    model_vec_free(&acc->lkey);
    model_vec_free(&acc->sorted);
    tessel_dealloc(al, acc->lwt);
    tessel_dealloc(al, acc->lwd);
    tessel_dealloc(al, acc->ci);
    tessel_dealloc(al, acc->cx);
    tessel_dealloc(al, acc->cj);
    tessel_dealloc(al, acc->ck);
    tessel_dealloc(al, acc->w);
    memset(acc, 0, sizeof(*acc));
}

/* Room for `need` cells in the sample's arrays (doubling). */
static int acc_reserve(cell_acc *acc, uint64_t need)
{
    if (need <= acc->cap)
        return TESSEL_OK;
    if (need > UINT32_MAX) /* gstart is 32-bit */
        return TESSEL_ERANGE;
    uint64_t cap = acc->cap ? acc->cap : 4096;
    while (cap < need)
        cap += cap / 2;
    cap = cap > UINT32_MAX ? UINT32_MAX : cap;
    uint32_t **u[4] = { &acc->ci, &acc->cj, &acc->ck, &acc->cx };
    for (unsigned m = 0; m < (acc->cs->ext[1] > 1 ? 4u : 3u); m++) {
        uint32_t *v = tessel_realloc_array(acc->al, *u[m], cap, sizeof(uint32_t));
        if (!v)
            return TESSEL_ENOMEM;
        *u[m] = v;
    }
    float *v = tessel_realloc_array(acc->al, acc->w, cap, sizeof(float));
    if (!v)
        return TESSEL_ENOMEM;
    acc->w = v;
    acc->cap = cap;
    return TESSEL_OK;
}

/* Appends the current i cell's cells in key order and empties it (the
 * map's table is kept unless it is much larger than this i cell needed). */
static int acc_flush(cell_acc *acc)
{
    uint64_t n = acc->lkey.n;
    if (!n)
        return TESSEL_OK;
    acc->sorted.n = 0;
    uint64_t max = 0;
    for (uint64_t l = 0; l < n; l++) {
        if (model_vec_push(&acc->sorted, acc->lkey.v[l]))
            return TESSEL_ENOMEM;
        max = acc->lkey.v[l] > max ? acc->lkey.v[l] : max;
    }
    tessel_sort_u64_inplace(acc->sorted.v, n, max);
    int rc = acc_reserve(acc, acc->n + n);
    if (rc)
        return rc;
    const uint64_t *ext = acc->cs->ext;
    for (uint64_t l = 0; l < n; l++) {
        uint64_t key = acc->sorted.v[l], at = model_map_find(&acc->map, key), c = acc->n++;
        acc->w[c] = (float)(acc->lwt[at] * acc->g_take + acc->lwd[at] * acc->g_drawn);
        acc->ck[c] = (uint32_t)(key % ext[3]);
        key /= ext[3];
        acc->cj[c] = (uint32_t)(key % ext[2]);
        key /= ext[2];
        if (ext[1] > 1)
            acc->cx[c] = (uint32_t)(key % ext[1]);
        acc->ci[c] = (uint32_t)(key / ext[1]);
    }
    acc->lkey.n = 0;
    if (acc->map.cap > 8 * n && acc->map.cap > 65536) {
        model_map_free(&acc->map);
    } else if (acc->map.cap) {
        memset(acc->map.keys, 0xff, acc->map.cap * sizeof(uint64_t));
        acc->map.n = 0;
    }
    return TESSEL_OK;
}

/* Adds one sampled nonzero at (i, x, j) first produced at k, with weight
 * w, to the whole rows' sum (take) or the drawn rows'. */
static int record(cell_acc *acc, stat_output_sample *s, uint64_t i, uint64_t x, uint64_t j,
                  uint64_t k, double w, int take)
{
    const cell_space *cs = acc->cs;
    uint64_t ic = i / s->base[0];
    if (ic != acc->icell) {
        int rc = acc_flush(acc);
        if (rc)
            return rc;
        acc->icell = ic;
    }
    uint64_t key = ((ic * cs->ext[1] + x / s->base[3]) * cs->ext[2] + j / s->base[1]) *
                       cs->ext[3] +
                   k / s->base[2];
    uint64_t *slot = model_map_slot(&acc->map, key, acc->lkey.n);
    if (!slot)
        return TESSEL_ENOMEM;
    uint64_t at = *slot;
    if (at == acc->lkey.n) { /* a new cell */
        if (model_vec_push(&acc->lkey, key))
            return TESSEL_ENOMEM;
        if (acc->lkey.cap > acc->lcap) {
            double *t = tessel_realloc_array(acc->al, acc->lwt, acc->lkey.cap, sizeof(double));
            if (t)
                acc->lwt = t;
            double *d = t ? tessel_realloc_array(acc->al, acc->lwd, acc->lkey.cap,
                                                 sizeof(double))
                          : NULL;
            if (!d)
                return TESSEL_ENOMEM;
            acc->lwd = d;
            acc->lcap = acc->lkey.cap;
        }
        acc->lwt[at] = acc->lwd[at] = 0;
    }
    if (take)
        acc->lwt[at] += w;
    else
        acc->lwd[at] += w;
    return TESSEL_OK;
}

/* The cells into s (the last i cell flushed, the arrays trimmed). */
static int acc_finish(cell_acc *acc, stat_output_sample *s)
{
    int rc = acc_flush(acc);
    if (rc || (rc = acc_reserve(acc, 1)))
        return rc;
    /* the arrays trimmed to the cells (in place for large blocks); without
     * an x mode cx is zeros that are never written (calloc's zero pages) */
    uint64_t n = acc->n ? acc->n : 1;
    if (n < acc->cap) {
        uint32_t **u[4] = { &acc->ci, &acc->cj, &acc->ck, &acc->cx };
        for (unsigned m = 0; m < (acc->cs->ext[1] > 1 ? 4u : 3u); m++) {
            uint32_t *v = tessel_realloc_array(acc->al, *u[m], n, sizeof(uint32_t));
            *u[m] = v ? v : *u[m];
        }
        float *v = tessel_realloc_array(acc->al, acc->w, n, sizeof(float));
        acc->w = v ? v : acc->w;
    }
    if (acc->cs->ext[1] <= 1 && !(acc->cx = tessel_alloc_zeroed(acc->al, n, sizeof(uint32_t))))
        return TESSEL_ENOMEM;
    s->ci = acc->ci;
    s->cx = acc->cx;
    s->cj = acc->cj;
    s->ck = acc->ck;
    s->weight = acc->w;
    s->ncells = acc->n;
    acc->ci = acc->cx = acc->cj = acc->ck = NULL;
    acc->w = NULL;
    return cells_groups(acc->al, s);
}

/* Multiplies out row i of A B: its nonzeros into *y and, when acc is not
 * NULL, each one's weight into its cell. mark (unique per call) tags the
 * columns already met in stamp. */
static int sample_row(const tessel_tensor *a, const tessel_tensor *b, uint64_t i, double weight,
                      int take, uint64_t mark, uint64_t *stamp, cell_acc *acc,
                      stat_output_sample *s, uint64_t *y)
{
    uint64_t n = 0;
    /* A's row is sorted by k, so the first k reaching j is the smallest */
    for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
        uint64_t k = a->idx[1][p];
        for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
            uint64_t j = b->idx[1][q];
            if (stamp[j] == mark)
                continue;
            stamp[j] = mark;
            n++;
            int rc = acc ? record(acc, s, i, 0, j, k, weight, take) : TESSEL_OK;
            if (rc)
                return rc;
        }
    }
    *y = n;
    return TESSEL_OK;
}

/* TTM: slice i of Y = T x_k M, fiber by fiber (T is sorted by (i, j, k),
 * so each fiber's first k reaching r is the smallest); *fiber numbers the
 * fibers (the stamp's marks) across calls. */
static int sample_slice(const tessel_tensor *t, const tessel_tensor *m, uint64_t i, double weight,
                        int take, uint64_t *stamp, uint64_t *fiber, cell_acc *acc,
                        stat_output_sample *s, uint64_t *y)
{
    uint64_t n = 0;
    for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
        uint64_t j = t->idx[1][p], k = t->idx[2][p];
        if (p == t->ptr[i] || j != t->idx[1][p - 1])
            ++*fiber;
        for (uint64_t q = m->ptr[k]; q < m->ptr[k + 1]; q++) {
            uint64_t r = m->idx[1][q];
            if (stamp[r] == *fiber)
                continue;
            stamp[r] = *fiber;
            n++;
            int rc = acc ? record(acc, s, i, j, r, k, weight, take) : TESSEL_OK;
            if (rc)
                return rc;
        }
    }
    *y = n;
    return TESSEL_OK;
}

/* Multiplies of each row of A B (A order 2), or of each slice i of
 * T x_k M (T order 3): the nonzeros of M's rows the entries meet. */
static uint64_t *row_flops(const tessel_tensor *a, const tessel_tensor *b,
                           const tessel_allocator *al, double *total)
{
    uint64_t *f = tessel_alloc_array(al, a->dims[0] + 1, sizeof(uint64_t));
    if (!f)
        return NULL;
    *total = 0;
    unsigned km = a->order - 1;
    for (uint64_t i = 0; i < a->dims[0]; i++) {
        f[i] = 0;
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
            f[i] += b->ptr[a->idx[km][p] + 1] - b->ptr[a->idx[km][p]];
        *total += (double)f[i];
    }
    return f;
}

/* ------------------------------------------------------------------ */
/* A per-row prediction of the output's nonzeros: the covariate of the
 * ratio estimator and the size measure of the draw (below). */

/* HyperLogLog (Flajolet, Fusy, Gandouet, Meunier 2007) with SK registers:
 * the distinct columns of a union of B's rows from the rows' sketches by
 * a register-wise max. Its relative error, about 1.04 / sqrt(SK) = 18 %,
 * only adds variance: the estimator's bias does not depend on it. */
#define SK 32u

static void sketch_add(uint8_t *reg, uint64_t col, uint64_t salt)
{
    uint64_t h = mix(col ^ salt);
    uint64_t w = h >> 5; /* log2(SK) bits pick the register */
    uint8_t rank = 1;
    while (rank < 59 && !(w & 1u)) {
        w >>= 1;
        rank++;
    }
    if (reg[h & (SK - 1)] < rank)
        reg[h & (SK - 1)] = rank;
}

/* The sketch's count (linear counting while small), kept between the
 * union's exact bounds: its largest row and the sum of its rows (at most
 * the columns). */
static double sketch_count(const uint8_t *reg, double lower, double upper, uint64_t cols)
{
    if (upper <= 0)
        return 0;
    double z = 0;
    unsigned zeros = 0;
    for (unsigned r = 0; r < SK; r++) {
        z += ldexp(1.0, -(int)reg[r]);
        zeros += reg[r] == 0;
    }
    double e = 0.697 * SK * SK / z; /* alpha_32 */
    if (e <= 2.5 * SK && zeros)
        e = SK * log((double)SK / zeros);
    if (upper > (double)cols)
        upper = (double)cols;
    return e < lower ? lower : e > upper ? upper : e;
}

/* Predicted nonzeros of each row of A B (or slice of T x_k M, summed over
 * its fibers): one pass over B for its rows' sketches, one over A merging
 * them, SK bytes per entry of A. */
static double *row_predictions(const tessel_tensor *a, const tessel_tensor *b, uint64_t salt,
                               const tessel_allocator *al)
{
    uint64_t nb = b->dims[0], cols = b->dims[1];
    uint8_t *sk = tessel_alloc_array(al, nb + 1, SK);
    double *pred = tessel_alloc_array(al, a->dims[0] + 1, sizeof(double));
    if (!sk || !pred) {
        tessel_dealloc(al, sk);
        tessel_dealloc(al, pred);
        return NULL;
    }
    memset(sk, 0, (nb + 1) * SK);
    for (uint64_t k = 0; k < nb; k++)
        for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++)
            sketch_add(sk + k * SK, b->idx[1][q], salt);
    unsigned km = a->order - 1;
    uint8_t reg[SK];
    for (uint64_t i = 0; i < a->dims[0]; i++) {
        double sum = 0, lower = 0, upper = 0;
        memset(reg, 0, SK);
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            if (km == 2 && p > a->ptr[i] && a->idx[1][p] != a->idx[1][p - 1]) {
                sum += sketch_count(reg, lower, upper, cols); /* a new fiber */
                memset(reg, 0, SK);
                lower = upper = 0;
            }
            uint64_t k = a->idx[km][p], n = b->ptr[k + 1] - b->ptr[k];
            const uint8_t *src = sk + k * SK;
            for (unsigned r = 0; r < SK; r++)
                reg[r] = src[r] > reg[r] ? src[r] : reg[r];
            lower = (double)n > lower ? (double)n : lower;
            upper += (double)n;
        }
        pred[i] = sum + sketch_count(reg, lower, upper, cols);
    }
    tessel_dealloc(al, sk);
    return pred;
}

/* ------------------------------------------------------------------ */
/* The estimator (issue 18, point 3).
 *
 * Rows are drawn with probability p_i = min(1, c x_i / sqrt(f_i)), x_i the
 * predicted nonzeros of row i and f_i its multiplies (the cost): for a
 * ratio estimator whose residuals scale with x_i, this minimises the
 * variance at a fixed budget of multiplies (Neyman allocation with unit
 * costs f_i; Sarndal, Swensson, Wretman, Model Assisted Survey Sampling,
 * 3.6 and 7.3). Drawing in proportion to f_i instead puts nearly all draws
 * on hub rows, whose products collapse the most; the few light rows drawn
 * then decide the estimate, which is skewed (mostly low) when the sample
 * covers little of the multiplies.
 *
 * Rows with p_i = 1 are taken whole and keep weight 1. The others get the
 * weight g / p_i, g = X / sum_s x_i / p_i, X the exact sum of x_i over the
 * not-taken rows (or the same with the multiplies f_i as the covariate,
 * when the sample estimates a smaller variance for it: rows that all
 * compress alike): the ratio estimator Y_take + (Y_s / X_s) X of their
 * nonzeros, approximately unbiased whatever the sketch's own bias (its
 * bias is O(1/n) in the drawn rows), calibrated to a covariate that
 * follows the nonzeros rather than the multiplies. Every sampled nonzero
 * carries its row's weight, so the cell weights still sum to the
 * estimate and the per-tile readers (write-backs, output tables) see
 * consistent partial counts. Its standard error is the linearised one,
 * g sqrt(sum_s (1 - p_i) (y_i - R x_i)^2 / p_i^2), with draws treated as
 * independent (systematic order makes it slightly conservative when
 * neighbouring rows are alike). */

/* Sums over the drawn rows that are not taken whole. */
typedef struct ratio_sums {
    double y_take, f_take;    /* taken whole: nonzeros, multiplies */
    double x_rest, f_rest;    /* covariates over every row not taken whole */
    double hy, hx, hf;        /* HT sums of y, x, f over the drawn ones */
    double vyy, vxy, vxx;     /* (1 - p) / p^2 times y^2, x y, x^2 */
    double vfy, vff;          /* ... f y, f^2 */
} ratio_sums;

/* The ratio estimator on covariate z (total Z over the rows not taken
 * whole): its factor g and its linearised variance. */
static double ratio_variance(const ratio_sums *r, double hz, double vzy, double vzz, double *g)
{
    double ratio = r->hy / hz, v = r->vyy - 2 * ratio * vzy + ratio * ratio * vzz;
    return *g * *g * (v > 0 ? v : 0);
}

/* The estimate, its standard error and the weights' factors. The legacy
 * draw calibrates every weight to the multiplies (its standard error is
 * not known: -1). */
static void ratio_finish(const ratio_sums *r, int legacy, double flops, stat_output_sample *s,
                         double *g_take, double *g_drawn)
{
    if (legacy) {
        double weighted = r->f_take + r->hf;
        *g_take = *g_drawn = weighted > 0 ? flops / weighted : 1;
        s->nnz = *g_take * (r->y_take + r->hy);
        s->nnz_stderr = s->whole ? 0 : -1;
        return;
    }
    *g_take = 1;
    if (r->hx <= 0) { /* nothing drawn outside the whole rows */
        *g_drawn = 0;
        s->nnz = r->y_take + r->x_rest;
        s->nnz_stderr = r->x_rest > 0 ? -1 : 0;
        return;
    }
    /* The sketch predicts the nonzeros of rows whose products collapse
     * unevenly (clustered graphs); where every row compresses alike
     * (meshes), the multiplies predict them without the sketch's noise.
     * The covariate with the smaller estimated variance serves. */
    double gx = r->x_rest / r->hx, gf = r->hf > 0 ? r->f_rest / r->hf : 0;
    double vx = ratio_variance(r, r->hx, r->vxy, r->vxx, &gx);
    double vf = r->hf > 0 ? ratio_variance(r, r->hf, r->vfy, r->vff, &gf) : HUGE_VAL;
    int use_f = vf < vx;
    *g_drawn = use_f ? gf : gx;
    s->nnz = r->y_take + r->hy / (use_f ? r->hf : r->hx) * (use_f ? r->f_rest : r->x_rest);
    s->nnz_stderr = sqrt(use_f ? vf : vx);
}

/* The sample: the draw, the sampled rows' nonzeros per cell, their weights. */
/* The rows' predicted nonzeros x summed per i cell, and the variance
 * their Horvitz-Thompson sum would have under the draw (row i drawn with
 * probability c m_i, at most 1): stat_nested_prior.c's prior of a tile's
 * occupancy and its sampling noise. */
static int predictions_by_cell(const double *x, const double *m, double c, const uint64_t *f,
                               uint64_t rows, stat_output_sample *s, const tessel_allocator *al)
{
    s->nxcell = (rows + s->base[0] - 1) / s->base[0];
    uint64_t n = s->nxcell ? s->nxcell : 1;
    s->xcell = tessel_alloc_array(al, n, sizeof(double));
    s->vcell = tessel_alloc_array(al, n, sizeof(double));
    if (!s->xcell || !s->vcell)
        return TESSEL_ENOMEM;
    memset(s->xcell, 0, n * sizeof(double));
    memset(s->vcell, 0, n * sizeof(double));
    for (uint64_t i = 0; i < rows; i++) {
        if (!f[i])
            continue;
        double p = c * m[i];
        s->xcell[i / s->base[0]] += x[i];
        if (p < 1)
            s->vcell[i / s->base[0]] += (1 / p - 1) * x[i] * x[i];
    }
    return TESSEL_OK;
}

/* The output's exact nonzeros per k cell of their first multiply of
 * Z = A B into s->nfk, fknnz: from rule 3's count per k (k_nnz) when it
 * was kept, else a pass over every multiply (A's rows are sorted by k:
 * the first k reaching j is the smallest), stamp (cols + 1 entries) as
 * scratch, left zeroed. */
static int first_cells(const tessel_tensor *a, const tessel_tensor *b, const cell_space *cs,
                       const double *k_nnz, uint64_t *stamp, const tessel_allocator *al,
                       stat_output_sample *s)
{
    uint64_t nk = cs->ext[3];
    s->fknnz = tessel_alloc_array(al, nk, sizeof(double));
    if (!s->fknnz)
        return TESSEL_ENOMEM;
    memset(s->fknnz, 0, nk * sizeof(double));
    s->nfk = nk;
    if (k_nnz) {
        for (uint64_t k = 0; k < b->dims[0]; k++)
            s->fknnz[k / s->base[2]] += k_nnz[k];
        return TESSEL_OK;
    }
    for (uint64_t i = 0; i < a->dims[0]; i++)
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            uint64_t k = a->idx[1][p], n = 0;
            for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++)
                if (stamp[b->idx[1][q]] != i + 1) {
                    stamp[b->idx[1][q]] = i + 1;
                    n++;
                }
            s->fknnz[k / s->base[2]] += (double)n;
        }
    memset(stamp, 0, (b->dims[1] + 1) * sizeof(uint64_t));
    return TESSEL_OK;
}

/* The output's exact nonzeros per (i cell, first k cell) into s->fc, at
 * most STAT_FIRST_CELLS_MIN or (nnz(A) + nnz(B)) / 16 entries (12 B each:
 * under a sixteenth of the inputs' CSR); past that, or past the memory,
 * none (the written nonzeros keep their per-tile-row ratio). */
static int stat_first_cells_collect(const tessel_tensor *a, const tessel_tensor *b,
                                    const tessel_allocator *al, stat_output_sample *s)
{
    uint64_t budget = (a->nnz + b->nnz) / 16;
    budget = budget > STAT_FIRST_CELLS_MIN ? budget : STAT_FIRST_CELLS_MIN;
    int rc = tessel_first_cells_count(a, b, s->base[0], s->base[2], budget, al, &s->fc);
    return rc == TESSEL_ENOMEM ? rc : TESSEL_OK;
}

/* The draw and its ratio sums, ahead of the cells: the drawn rows are
 * multiplied out once to count their nonzeros (the sums need them), and
 * once more by record_rows with their weights' factors known, so a cell's
 * weight is final when its i cell ends (no per-cell second weight to keep
 * until the draw is over). */
typedef struct draw_pass {
    const tessel_tensor *a, *b;
    const uint64_t *f;        /* multiplies per row */
    const double *m, *x;      /* size measure and covariate (NULL: the multiplies) */
    double c;                 /* the draw's scale */
    uint64_t *stamp, fiber;   /* marks of the columns met (TTM: per fiber) */
    int ttm;
    ratio_sums r;
    model_vec drawn;          /* per drawn row: i (bit 63: taken whole), its weight's bits */
} draw_pass;

/* Row i's nonzeros, counted (acc NULL) or recorded: the stamp's mark is
 * 2i + 1 while counting and 2i + 2 while recording (TTM: a fiber count). */
static int row_pass(draw_pass *d, uint64_t i, double w, int take, cell_acc *acc,
                    stat_output_sample *s, uint64_t *y)
{
    return d->ttm ? sample_slice(d->a, d->b, i, w, take, d->stamp, &d->fiber, acc, s, y)
                  : sample_row(d->a, d->b, i, w, take, 2 * i + (acc ? 2 : 1), d->stamp, acc, s,
                               y);
}

/* The systematic draw over the rows in storage order: each drawn row
 * counted, listed, and added to the ratio sums (s's sample totals too). */
static int draw_rows(draw_pass *d, uint64_t seed, stat_output_sample *s)
{
    systematic sy;
    systematic_init(&sy, seed);
    ratio_sums *r = &d->r;
    for (uint64_t i = 0; i < s->rows; i++) {
        double fi = (double)d->f[i];
        if (!d->f[i])
            continue;
        double p = d->c * (d->m ? d->m[i] : fi), xi = d->x ? d->x[i] : fi;
        if (p < 1) {
            r->x_rest += xi;
            r->f_rest += fi;
        }
        if (!systematic_draw(&sy, p))
            continue;
        double w = p < 1 ? 1 / p : 1;
        uint64_t n = 0;
        int rc = row_pass(d, i, w, p >= 1, NULL, s, &n);
        if (rc || model_vec_push(&d->drawn, i | (p >= 1 ? UINT64_C(1) << 63 : 0)) ||
            model_vec_push(&d->drawn, model_double_bits(w)))
            return rc ? rc : TESSEL_ENOMEM;
        s->sampled_rows++;
        s->sampled_flops += fi;
        s->sampled_nnz += n;
        double y = (double)n;
        if (p >= 1) {
            r->y_take += y;
            r->f_take += fi;
            continue;
        }
        double v = (1 - p) * w * w;
        r->hy += w * y;
        r->hx += w * xi;
        r->hf += w * fi;
        r->vyy += v * y * y;
        r->vxy += v * xi * y;
        r->vxx += v * xi * xi;
        r->vfy += v * fi * y;
        r->vff += v * fi * fi;
    }
    return TESSEL_OK;
}

/* The drawn rows multiplied out again, their nonzeros into acc's cells. */
static int record_rows(draw_pass *d, cell_acc *acc, stat_output_sample *s)
{
    for (uint64_t e = 0; e < d->drawn.n; e += 2) {
        uint64_t i = d->drawn.v[e] & ~(UINT64_C(1) << 63), n;
        int take = (int)(d->drawn.v[e] >> 63);
        int rc = row_pass(d, i, model_bits_double(d->drawn.v[e + 1]), take, acc, s, &n);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* The one rule on a sample's size, both collectors': it multiplies out
 * fraction of the product's `all` multiplies, at least min_flops and at
 * most all of them (then every row is in), and is refused past max_flops
 * (> 0), a bound on its time (its memory follows its cells, not its
 * multiplies): TESSEL_EINVAL, with the multiplies it would make in *want. */
static int sample_budget(double all, double fraction, uint64_t min_flops, double max_flops,
                         double *budget, double *want)
{
    *budget = fraction * all;
    if (*budget < (double)min_flops)
        *budget = (double)min_flops;
    *want = *budget < all ? *budget : all;
    return max_flops > 0 && *want > max_flops ? TESSEL_EINVAL : TESSEL_OK;
}

/* The output sample of Z = A B (TTM: per slice): rows drawn, multiplied
 * out, weighted and aggregated into cells, with the rows' predictions. */
int stat_output_sample_collect(const tessel_tensor *a, const tessel_tensor *b,
                               const uint64_t *base, double fraction, uint64_t min_flops,
                               double max_flops, uint64_t seed, int legacy, const double *row_nnz,
                               const double *k_nnz, const tessel_allocator *al,
                               stat_output_sample *s)
{
    memset(s, 0, sizeof(*s));
    int ttm = a->order == 3;
    uint64_t rows = a->dims[0], cols = b->dims[1];
    s->rows = rows;
    for (unsigned m = 0; m < 4; m++)
        s->base[m] = base[m] ? base[m] : 1;
    uint64_t extent[4] = { rows, ttm ? a->dims[1] : 1, cols, b->dims[0] };
    cell_space cs;
    if (space_init(&cs, extent, s->base))
        return TESSEL_ERANGE;
    uint64_t *f = row_flops(a, b, al, &s->flops);
    if (!f)
        return TESSEL_ENOMEM;
    double budget, want;
    if (sample_budget(s->flops, fraction, min_flops, max_flops, &budget, &want)) {
        tessel_dealloc(al, f);
        s->sampled_flops = want;
        return TESSEL_EINVAL;
    }
    uint64_t *stamp = tessel_alloc_array(al, cols + 1, sizeof(uint64_t));
    int whole = budget >= s->flops;
    /* the rows' exact nonzeros (rule 3's count) where known, else the
     * sketches' predictions */
    double *x = NULL;
    if (!whole && !legacy && row_nnz) {
        if ((x = tessel_alloc_array(al, rows + 1, sizeof(double))))
            memcpy(x, row_nnz, rows * sizeof(double));
        s->xexact = 1;
    } else if (!whole && !legacy) {
        x = row_predictions(a, b, mix(seed), al);
    }
    double *m = x ? tessel_alloc_array(al, rows + 1, sizeof(double)) : NULL;
    if (!f || !stamp || (!whole && !legacy && (!x || !m))) {
        tessel_dealloc(al, f);
        tessel_dealloc(al, stamp);
        tessel_dealloc(al, x);
        tessel_dealloc(al, m);
        return TESSEL_ENOMEM;
    }
    memset(stamp, 0, (cols + 1) * sizeof(uint64_t));
    int orc = s->xexact && !ttm ? first_cells(a, b, &cs, k_nnz, stamp, al, s) : TESSEL_OK;
    if (!orc && s->xexact && !ttm)
        orc = stat_first_cells_collect(a, b, al, s);
    for (uint64_t i = 0; m && i < rows; i++)
        m[i] = f[i] ? x[i] / sqrt((double)f[i]) : 0;
    double c = whole ? HUGE_VAL : pps_scale(m, f, rows, budget);
    draw_pass d = { .a = a, .b = b, .f = f, .m = m, .x = x, .c = c, .stamp = stamp, .ttm = ttm };
    d.drawn.alloc = al;
    int rc = orc ? orc : draw_rows(&d, seed, s);
    s->whole = whole;
    if (!rc && x)
        rc = predictions_by_cell(x, m, c, f, rows, s, al);
    cell_acc acc = { .al = al, .cs = &cs, .g_take = 1, .g_drawn = 1 };
    acc.map.alloc = acc.lkey.alloc = acc.sorted.alloc = al;
    ratio_finish(&d.r, legacy, s->flops, s, &acc.g_take, &acc.g_drawn);
    tessel_dealloc(al, f);
    tessel_dealloc(al, x);
    tessel_dealloc(al, m);
    if (!rc)
        rc = record_rows(&d, &acc, s);
    tessel_dealloc(al, stamp);
    model_vec_free(&d.drawn);
    if (!rc)
        rc = acc_finish(&acc, s);
    acc_free(&acc);
    if (!rc)
        rc = stat_output_sample_scell(al, s);
    if (rc)
        stat_output_sample_free(al, s);
    return rc;
}

int stat_output_sample_scell(const tessel_allocator *al, stat_output_sample *s)
{
    if (!s->xexact || s->whole || !s->xcell || s->scell)
        return TESSEL_OK;
    s->scell = tessel_alloc_array(al, s->nxcell + 1, sizeof(double));
    if (!s->scell)
        return TESSEL_ENOMEM;
    memset(s->scell, 0, (s->nxcell + 1) * sizeof(double));
    for (uint64_t c = 0; c < s->ncells; c++)
        if (s->ci[c] < s->nxcell)
            s->scell[s->ci[c]] += s->weight[c];
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* MTTKRP */

/* Growable arrays of the element lists. */
typedef struct elem_lists {
    model_vec head; /* per element: (i cell << 32 | r cell) */
    model_vec wbits; /* per element: its weight's bits */
    model_vec ptr;  /* per element: start in cells */
    model_vec cells; /* (j cell << 32 | k cell) */
} elem_lists;

static void lists_free(elem_lists *l)
{
    model_vec_free(&l->head);
    model_vec_free(&l->wbits);
    model_vec_free(&l->ptr);
    model_vec_free(&l->cells);
}

/* The last element joins the one before when both have the same output
 * cells and the same multiply cells (dense factors make every r of a
 * slice alike): one element with the summed weight. */
static void merge_last(elem_lists *l)
{
    uint64_t n = l->head.n;
    if (n < 2 || l->head.v[n - 1] != l->head.v[n - 2])
        return;
    uint64_t a = l->ptr.v[n - 2], b = l->ptr.v[n - 1], end = l->cells.n;
    if (b - a != end - b || memcmp(&l->cells.v[a], &l->cells.v[b], (b - a) * 8) != 0)
        return;
    double w = model_bits_double(l->wbits.v[n - 2]) + model_bits_double(l->wbits.v[n - 1]);
    l->wbits.v[n - 2] = model_double_bits(w);
    l->head.n--;
    l->wbits.n--;
    l->ptr.n--;
    l->cells.n = b;
}

/* Size measure of slice i for the sampling: its entries' smaller factor
 * row (an upper bound of the multiplies). */
static uint64_t *slice_measure(const tessel_tensor *t, const tessel_tensor *b,
                               const tessel_tensor *c, const tessel_allocator *al, double *total)
{
    uint64_t *f = tessel_alloc_array(al, t->dims[0] + 1, sizeof(uint64_t));
    if (!f)
        return NULL;
    *total = 0;
    for (uint64_t i = 0; i < t->dims[0]; i++) {
        f[i] = 0;
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            uint64_t j = t->idx[1][p], k = t->idx[2][p];
            uint64_t nb = b->ptr[j + 1] - b->ptr[j], nc = c->ptr[k + 1] - c->ptr[k];
            f[i] += nb < nc ? nb : nc;
        }
        *total += (double)f[i];
    }
    return f;
}

/* Slice i: every (r, j cell, k cell) of its multiplies, sorted by r, as
 * one element per r. Returns the slice's multiplies in *flops. */
static int sample_slice_mttkrp(const tessel_tensor *t, const tessel_tensor *b,
                               const tessel_tensor *c, uint64_t i, double weight,
                               const uint64_t *base, model_vec *scratch, elem_lists *l,
                               uint64_t *flops)
{
    scratch->n = 0;
    *flops = 0;
    for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
        uint64_t j = t->idx[1][p], k = t->idx[2][p];
        uint64_t cell = (j / base[3]) << 20 | (k / base[2]);
        uint64_t q = b->ptr[j], qe = b->ptr[j + 1], s = c->ptr[k], se = c->ptr[k + 1];
        while (q < qe && s < se) {
            uint32_t rb = b->idx[1][q], rc = c->idx[1][s];
            if (rb < rc) {
                q++;
            } else if (rc < rb) {
                s++;
            } else {
                ++*flops;
                /* r in the high bits keeps one element's multiplies together */
                if (model_vec_push(scratch, (uint64_t)rb << 40 | cell))
                    return TESSEL_ENOMEM;
                q++, s++;
            }
        }
    }
    uint64_t max = 0;
    for (uint64_t n = 0; n < scratch->n; n++)
        max = scratch->v[n] > max ? scratch->v[n] : max;
    tessel_sort_u64_inplace(scratch->v, scratch->n, max);
    for (uint64_t n = 0; n < scratch->n; n++) {
        uint64_t r = scratch->v[n] >> 40, cell = scratch->v[n] & ((UINT64_C(1) << 40) - 1);
        int first = n == 0 || scratch->v[n - 1] >> 40 != r;
        if (first) {
            merge_last(l);
            if (model_vec_push(&l->head, (i / base[0]) << 32 | (r / base[1])) ||
                model_vec_push(&l->wbits, model_double_bits(weight)) ||
                model_vec_push(&l->ptr, l->cells.n))
                return TESSEL_ENOMEM;
        } else if (scratch->v[n - 1] == scratch->v[n]) {
            continue; /* the same cells again */
        }
        if (model_vec_push(&l->cells, (cell >> 20) << 32 | (cell & 0xfffff)))
            return TESSEL_ENOMEM;
    }
    merge_last(l);
    return TESSEL_OK;
}

static int lists_out(const tessel_allocator *al, elem_lists *l, double calibrate,
                     stat_output_sample *s)
{
    uint64_t n = l->head.n, m = l->cells.n;
    s->ei = tessel_alloc_array(al, n + 1, sizeof(uint32_t));
    s->er = tessel_alloc_array(al, n + 1, sizeof(uint32_t));
    s->ew = tessel_alloc_array(al, n + 1, sizeof(double));
    s->eptr = tessel_alloc_array(al, n + 1, sizeof(uint64_t));
    s->ej = tessel_alloc_array(al, m + 1, sizeof(uint32_t));
    s->ek = tessel_alloc_array(al, m + 1, sizeof(uint32_t));
    if (!s->ei || !s->er || !s->ew || !s->eptr || !s->ej || !s->ek)
        return TESSEL_ENOMEM;
    for (uint64_t e = 0; e < n; e++) {
        s->ei[e] = (uint32_t)(l->head.v[e] >> 32);
        s->er[e] = (uint32_t)(l->head.v[e] & 0xffffffffu);
        s->ew[e] = model_bits_double(l->wbits.v[e]) * calibrate;
        s->eptr[e] = l->ptr.v[e];
    }
    s->eptr[n] = m;
    for (uint64_t c = 0; c < m; c++) {
        s->ej[c] = (uint32_t)(l->cells.v[c] >> 32);
        s->ek[c] = (uint32_t)(l->cells.v[c] & 0xffffffffu);
    }
    s->nelems = n;
    return TESSEL_OK;
}

int stat_output_sample_collect_mttkrp(const tessel_tensor *t, const tessel_tensor *b,
                                      const tessel_tensor *c, const uint64_t *base,
                                      double fraction, uint64_t min_flops, double max_flops,
                                      uint64_t seed, const tessel_allocator *al,
                                      stat_output_sample *s)
{
    memset(s, 0, sizeof(*s));
    s->rows = t->dims[0];
    for (unsigned m = 0; m < 4; m++)
        s->base[m] = base[m] ? base[m] : 1;
    /* a multiply packs r in 24 bits above the j and k cells' 20 bits each */
    if (t->dims[1] / s->base[3] >= (1u << 20) || t->dims[2] / s->base[2] >= (1u << 20) ||
        b->dims[1] >= (1u << 24) || t->dims[0] / s->base[0] > UINT32_MAX)
        return TESSEL_ERANGE;
    double measure;
    uint64_t *f = slice_measure(t, b, c, al, &measure);
    if (!f)
        return TESSEL_ENOMEM;
    double budget, want;
    if (sample_budget(measure, fraction, min_flops, max_flops, &budget, &want)) {
        tessel_dealloc(al, f);
        s->flops = measure;
        s->sampled_flops = want;
        return TESSEL_EINVAL;
    }
    double scale = budget >= measure ? HUGE_VAL : pps_scale(NULL, f, s->rows, budget);
    systematic sy;
    systematic_init(&sy, seed);
    elem_lists l = { { .alloc = al }, { .alloc = al }, { .alloc = al }, { .alloc = al } };
    model_vec scratch = { .alloc = al };
    int rc = TESSEL_OK;
    double weighted_measure = 0, flops = 0;
    for (uint64_t i = 0; i < s->rows && !rc; i++) {
        if (!f[i])
            continue;
        double p = scale * (double)f[i];
        if (!systematic_draw(&sy, p))
            continue;
        double w = p < 1 ? 1 / p : 1;
        uint64_t fi = 0;
        s->sampled_rows++;
        weighted_measure += w * (double)f[i];
        rc = sample_slice_mttkrp(t, b, c, i, w, s->base, &scratch, &l, &fi);
        s->sampled_flops += (double)fi;
        flops += w * (double)fi;
    }
    double calibrate = weighted_measure > 0 ? measure / weighted_measure : 1;
    s->flops = flops * calibrate;
    s->sampled_nnz = l.head.n;
    s->nnz_stderr = scale == HUGE_VAL ? 0 : -1; /* not estimated for MTTKRP */
    /* out of memory: an element's head may be in without its weight */
    for (uint64_t e = 0; !rc && e < l.head.n; e++)
        s->nnz += model_bits_double(l.wbits.v[e]) * calibrate;
    if (!rc)
        rc = lists_out(al, &l, calibrate, s);
    tessel_dealloc(al, f);
    model_vec_free(&scratch);
    lists_free(&l);
    if (rc)
        stat_output_sample_free(al, s);
    return rc;
}

int stat_output_sample_from_cells(const tessel_allocator *al, const model_map *cells,
                                  const uint64_t *cell_extent, stat_output_sample *s)
{
    cell_space cs;
    for (unsigned m = 0; m < 4; m++)
        cs.ext[m] = cell_extent[m];
    int rc = cells_out(al, cells, &cs, s);
    if (rc)
        stat_output_sample_free(al, s);
    return rc;
}

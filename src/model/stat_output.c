/* The stat estimator's output sample: rows of Z = A B drawn with
 * probability proportional to their multiplies (Poisson sampling with a
 * take-all threshold), multiplied out symbolically (Gustavson), each
 * nonzero recorded with the smallest reduction index that produces it and
 * the Horvitz-Thompson weight of its row, aggregated into base cells.
 * Cost: the sampled rows' multiplies (the requested fraction of all) plus
 * a hash and a radix sort of their nonzeros, once per input pair; a design
 * point afterwards reads only the cells. */
#include <math.h>
#include <string.h>

#include "stat_internal.h"

void stat_output_sample_free(const tessel_allocator *al, stat_output_sample *s)
{
    tessel_dealloc(al, s->cx);
    tessel_dealloc(al, s->ci);
    tessel_dealloc(al, s->cj);
    tessel_dealloc(al, s->ck);
    tessel_dealloc(al, s->weight);
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


/* The scale c with sum over rows of min(1, c f_i) f_i = budget: rows then
 * enter with probability min(1, c f_i). Bisection in log space. */
static double pps_scale(const uint64_t *f, uint64_t rows, double budget)
{
    double lo = 1e-300, hi = 1;
    for (int it = 0; it < 200; it++) {
        double c = sqrt(lo * hi), cost = 0;
        for (uint64_t i = 0; i < rows; i++) {
            double p = c * (double)f[i];
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

static double bits_to_double(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

static uint64_t double_to_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

/* Cell coordinates (i, x, j, k) packed into one key and back. */
typedef struct cell_space {
    uint64_t ext[4]; /* base cells along i, x, j, k */
} cell_space;

static int space_init(cell_space *cs, const uint64_t *extent, const uint64_t *base)
{
    long double n = 1;
    for (unsigned m = 0; m < 4; m++) {
        cs->ext[m] = extent[m] / base[m] + 1;
        n *= (long double)cs->ext[m];
        if (cs->ext[m] > UINT32_MAX)
            return TESSEL_ERANGE;
    }
    return n > 9.2e18L ? TESSEL_ERANGE : TESSEL_OK;
}

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
    s->weight = tessel_alloc_array(al, n, sizeof(double));
    if (!keys || !s->ci || !s->cx || !s->cj || !s->ck || !s->weight) {
        tessel_dealloc(al, keys);
        return TESSEL_ENOMEM;
    }
    uint64_t c = 0, max = 0;
    for (uint64_t slot = 0; slot < m->cap; slot++)
        if (m->keys[slot] != UINT64_MAX) {
            keys[c++] = m->keys[slot];
            max = m->keys[slot] > max ? m->keys[slot] : max;
        }
    tessel_sort_u64_inplace(keys, c, max);
    for (uint64_t i = 0; i < c; i++) {
        uint64_t key = keys[i];
        s->weight[i] = bits_to_double(model_map_find(m, key));
        s->ck[i] = (uint32_t)(key % cs->ext[3]);
        key /= cs->ext[3];
        s->cj[i] = (uint32_t)(key % cs->ext[2]);
        key /= cs->ext[2];
        s->cx[i] = (uint32_t)(key % cs->ext[1]);
        s->ci[i] = (uint32_t)(key / cs->ext[1]);
    }
    s->ncells = c;
    tessel_dealloc(al, keys);
    return TESSEL_OK;
}

/* Adds one sampled nonzero at (i, x, j) first produced at k. */
static int record(const cell_space *cs, stat_output_sample *s, model_map *cells, uint64_t i,
                  uint64_t x, uint64_t j, uint64_t k, double weight)
{
    uint64_t key = ((i / s->base[0] * cs->ext[1] + x / s->base[3]) * cs->ext[2] + j / s->base[1]) *
                       cs->ext[3] +
                   k / s->base[2];
    uint64_t *slot = model_map_slot(cells, key, 0);
    if (!slot)
        return TESSEL_ENOMEM;
    *slot = double_to_bits(bits_to_double(*slot) + weight);
    s->sampled_nnz++;
    s->nnz += weight;
    return TESSEL_OK;
}

/* Multiplies out row i of A B, adding each new nonzero's weight to its
 * cell. */
static int sample_row(const tessel_tensor *a, const tessel_tensor *b, uint64_t i, double weight,
                      const cell_space *cs, uint64_t *stamp, model_map *cells,
                      stat_output_sample *s)
{
    /* A's row is sorted by k, so the first k reaching j is the smallest */
    for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
        uint64_t k = a->idx[1][p];
        for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
            uint64_t j = b->idx[1][q];
            if (stamp[j] == i + 1)
                continue;
            stamp[j] = i + 1;
            int rc = record(cs, s, cells, i, 0, j, k, weight);
            if (rc)
                return rc;
        }
    }
    return TESSEL_OK;
}

/* TTM: slice i of Y = T x_k M, fiber by fiber (T is sorted by (i, j, k),
 * so each fiber's first k reaching r is the smallest). */
static int sample_slice(const tessel_tensor *t, const tessel_tensor *m, uint64_t i, double weight,
                        const cell_space *cs, uint64_t *stamp, uint64_t *fiber,
                        model_map *cells, stat_output_sample *s)
{
    for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
        uint64_t j = t->idx[1][p], k = t->idx[2][p];
        if (p == t->ptr[i] || j != t->idx[1][p - 1])
            ++*fiber;
        for (uint64_t q = m->ptr[k]; q < m->ptr[k + 1]; q++) {
            uint64_t r = m->idx[1][q];
            if (stamp[r] == *fiber)
                continue;
            stamp[r] = *fiber;
            int rc = record(cs, s, cells, i, j, r, k, weight);
            if (rc)
                return rc;
        }
    }
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

int stat_output_sample_collect(const tessel_tensor *a, const tessel_tensor *b,
                               const uint64_t *base, double fraction, uint64_t min_flops,
                               uint64_t seed, const tessel_allocator *al,
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
    uint64_t *stamp = tessel_alloc_array(al, cols + 1, sizeof(uint64_t));
    if (!f || !stamp) {
        tessel_dealloc(al, f);
        tessel_dealloc(al, stamp);
        return TESSEL_ENOMEM;
    }
    memset(stamp, 0, (cols + 1) * sizeof(uint64_t));
    double budget = fraction * s->flops;
    if (budget < (double)min_flops)
        budget = (double)min_flops;
    double c = budget >= s->flops ? HUGE_VAL : pps_scale(f, rows, budget);
    uint64_t salt = mix(seed + UINT64_C(0x9e3779b97f4a7c15));
    model_map cells = { .alloc = al };
    int rc = TESSEL_OK;
    double weighted_flops = 0;
    uint64_t fiber = 0;
    for (uint64_t i = 0; i < rows && !rc; i++) {
        if (!f[i])
            continue;
        double p = c * (double)f[i];
        if (p < 1 && (double)(mix(i ^ salt) >> 11) * 0x1p-53 >= p)
            continue;
        double w = p < 1 ? 1 / p : 1;
        s->sampled_rows++;
        s->sampled_flops += (double)f[i];
        weighted_flops += w * (double)f[i];
        rc = ttm ? sample_slice(a, b, i, w, &cs, stamp, &fiber, &cells, s)
                 : sample_row(a, b, i, w, &cs, stamp, &cells, s);
    }
    /* Calibration: the weights reproduce the known total of multiplies,
     * which takes out the random size of a Poisson sample. */
    double calibrate = weighted_flops > 0 ? s->flops / weighted_flops : 1;
    for (uint64_t slot = 0; !rc && slot < cells.cap; slot++)
        if (cells.keys[slot] != UINT64_MAX)
            cells.vals[slot] = double_to_bits(bits_to_double(cells.vals[slot]) * calibrate);
    s->nnz *= calibrate;
    tessel_dealloc(al, f);
    tessel_dealloc(al, stamp);
    if (!rc)
        rc = cells_out(al, &cells, &cs, s);
    model_map_free(&cells);
    if (rc)
        stat_output_sample_free(al, s);
    return rc;
}

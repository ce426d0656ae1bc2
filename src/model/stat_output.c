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

/* Multiplies of each row of A B. */
static uint64_t *row_flops(const tessel_tensor *a, const tessel_tensor *b,
                           const tessel_allocator *al, double *total)
{
    uint64_t *f = tessel_alloc_array(al, a->dims[0] + 1, sizeof(uint64_t));
    if (!f)
        return NULL;
    *total = 0;
    for (uint64_t i = 0; i < a->dims[0]; i++) {
        f[i] = 0;
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++)
            f[i] += b->ptr[a->idx[1][p] + 1] - b->ptr[a->idx[1][p]];
        *total += (double)f[i];
    }
    return f;
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

/* The map's cells, sorted by key, into the sample's arrays. */
static int cells_out(const tessel_allocator *al, const model_map *m, const uint64_t *ext,
                     stat_output_sample *s)
{
    uint64_t n = m->n ? m->n : 1;
    uint64_t *keys = tessel_alloc_array(al, n, sizeof(uint64_t));
    s->ci = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->cj = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->ck = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->weight = tessel_alloc_array(al, n, sizeof(double));
    if (!keys || !s->ci || !s->cj || !s->ck || !s->weight) {
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
        s->ck[i] = (uint32_t)(key % ext[2]);
        key /= ext[2];
        s->cj[i] = (uint32_t)(key % ext[1]);
        s->ci[i] = (uint32_t)(key / ext[1]);
    }
    s->ncells = c;
    tessel_dealloc(al, keys);
    return TESSEL_OK;
}

/* Multiplies out row i, adding each new nonzero's weight to its cell. */
static int sample_row(const tessel_tensor *a, const tessel_tensor *b, uint64_t i, double weight,
                      const uint64_t *ext, uint64_t *stamp, model_map *cells,
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
            uint64_t key =
                ((i / s->base[0]) * ext[1] + j / s->base[1]) * ext[2] + k / s->base[2];
            uint64_t *slot = model_map_slot(cells, key, 0);
            if (!slot)
                return TESSEL_ENOMEM;
            *slot = double_to_bits(bits_to_double(*slot) + weight);
            s->sampled_nnz++;
            s->nnz += weight;
        }
    }
    return TESSEL_OK;
}

int stat_output_sample_collect(const tessel_tensor *a, const tessel_tensor *b,
                               const uint64_t *base, double fraction, uint64_t min_flops,
                               uint64_t seed, const tessel_allocator *al,
                               stat_output_sample *s)
{
    memset(s, 0, sizeof(*s));
    uint64_t rows = a->dims[0], cols = b->dims[1], red = a->dims[1];
    s->rows = rows;
    uint64_t ext[3];
    for (unsigned m = 0; m < 3; m++)
        s->base[m] = base[m] ? base[m] : 1;
    ext[0] = rows / s->base[0] + 1;
    ext[1] = cols / s->base[1] + 1;
    ext[2] = red / s->base[2] + 1;
    if ((long double)ext[0] * ext[1] * ext[2] > 9.2e18L || ext[0] > UINT32_MAX ||
        ext[1] > UINT32_MAX || ext[2] > UINT32_MAX)
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
        rc = sample_row(a, b, i, w, ext, stamp, &cells, s);
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
        rc = cells_out(al, &cells, ext, s);
    model_map_free(&cells);
    if (rc)
        stat_output_sample_free(al, s);
    return rc;
}

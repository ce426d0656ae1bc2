/* The stat estimator's output sample: a seeded fraction of the rows of
 * Z = A B multiplied out symbolically (Gustavson), recording for each
 * nonzero the smallest reduction index that produces it, aggregated into
 * base cells. Cost: the multiplies of the sampled rows plus a radix sort
 * of their nonzeros, once per input pair; a design point afterwards reads
 * only the cells. */
#include <string.h>

#include "stat_internal.h"

void stat_output_sample_free(const tessel_allocator *al, stat_output_sample *s)
{
    tessel_dealloc(al, s->ci);
    tessel_dealloc(al, s->cj);
    tessel_dealloc(al, s->ck);
    tessel_dealloc(al, s->count);
    memset(s, 0, sizeof(*s));
}

/* A row is in the sample when its hash falls below the threshold: the
 * same rows for the same seed, whatever else changes. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

static int push(const tessel_allocator *al, model_vec *v, uint64_t x)
{
    (void)al;
    return model_vec_push(v, x) ? TESSEL_ENOMEM : TESSEL_OK;
}

/* Sorted cell keys -> (cell, count) arrays. */
static int aggregate(const tessel_allocator *al, model_vec *keys, const uint64_t *ext,
                     stat_output_sample *s)
{
    uint64_t max = 0;
    for (uint64_t i = 0; i < keys->n; i++)
        max = keys->v[i] > max ? keys->v[i] : max;
    tessel_sort_u64_inplace(keys->v, keys->n, max);
    uint64_t cells = 0;
    for (uint64_t i = 0; i < keys->n; i++)
        cells += i == 0 || keys->v[i] != keys->v[i - 1];
    uint64_t n = cells ? cells : 1;
    s->ci = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->cj = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->ck = tessel_alloc_array(al, n, sizeof(uint32_t));
    s->count = tessel_alloc_array(al, n, sizeof(uint64_t));
    if (!s->ci || !s->cj || !s->ck || !s->count)
        return TESSEL_ENOMEM;
    uint64_t c = 0;
    for (uint64_t i = 0; i < keys->n; i++) {
        uint64_t key = keys->v[i];
        if (i && key == keys->v[i - 1]) {
            s->count[c - 1]++;
            continue;
        }
        s->ck[c] = (uint32_t)(key % ext[2]);
        key /= ext[2];
        s->cj[c] = (uint32_t)(key % ext[1]);
        s->ci[c] = (uint32_t)(key / ext[1]);
        s->count[c++] = 1;
    }
    s->ncells = cells;
    return TESSEL_OK;
}

int stat_output_sample_collect(const tessel_tensor *a, const tessel_tensor *b,
                               const uint64_t *base, double fraction, uint64_t min_rows,
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
    double f = fraction;
    if (rows && (double)min_rows > f * (double)rows)
        f = (double)min_rows / (double)rows;
    uint64_t threshold = f >= 1 ? UINT64_MAX : (uint64_t)(f * 18446744073709551615.0);
    uint64_t *stamp = tessel_alloc_array(al, cols + 1, sizeof(uint64_t));
    if (!stamp)
        return TESSEL_ENOMEM;
    memset(stamp, 0, (cols + 1) * sizeof(uint64_t));
    model_vec keys = { .alloc = al };
    int rc = TESSEL_OK;
    uint64_t salt = mix(seed + UINT64_C(0x9e3779b97f4a7c15));
    for (uint64_t i = 0; i < rows && !rc; i++) {
        if (threshold != UINT64_MAX && mix(i ^ salt) > threshold)
            continue;
        s->sampled_rows++;
        /* A's row is sorted by k, so the first k reaching j is the smallest */
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1] && !rc; p++) {
            uint64_t k = a->idx[1][p];
            for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1] && !rc; q++) {
                uint64_t j = b->idx[1][q];
                if (stamp[j] == i + 1)
                    continue;
                stamp[j] = i + 1;
                uint64_t cell = ((i / s->base[0]) * ext[1] + j / s->base[1]) * ext[2] +
                                k / s->base[2];
                rc = push(al, &keys, cell);
            }
        }
    }
    tessel_dealloc(al, stamp);
    s->nnz = keys.n;
    if (!rc)
        rc = aggregate(al, &keys, ext, s);
    model_vec_free(&keys);
    if (rc) {
        stat_output_sample_free(al, s);
        return rc;
    }
    s->weight = s->sampled_rows ? (double)rows / (double)s->sampled_rows : 0;
    return TESSEL_OK;
}

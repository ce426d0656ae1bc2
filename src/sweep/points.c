/* The points of a sweep: a design point's value on every axis, random
 * samples of the cross product. */
#include <stdlib.h>
#include <string.h>

#include "sweep_internal.h"

void sweep_point_indices(const tessel_sweep *s, uint64_t q, uint32_t *idx)
{
    if (s->mode == SWEEP_LIST) {
        memcpy(idx, s->list + q * s->naxes, s->naxes * sizeof(*idx));
        return;
    }
    if (s->mode == SWEEP_RANDOM)
        q = s->sample[q];
    /* The cross product in file order: the first axis changes slowest. */
    for (size_t a = s->naxes; a-- > 0;) {
        idx[a] = (uint32_t)(q % s->axis[a].nvalues);
        q /= s->axis[a].nvalues;
    }
}

const char *tessel_sweep_point_value(const tessel_sweep *s, uint64_t p, size_t axis, char *buf,
                                     size_t n)
{
    (void)buf;
    (void)n;
    if (axis >= s->naxes || s->per_data == 0)
        return "";
    uint32_t idx[TESSEL_SWEEP_MAX_AXES];
    sweep_point_indices(s, p % s->per_data, idx);
    return idx[axis] == SWEEP_NO_VALUE ? "" : s->axis[axis].values[idx[axis]];
}

/* ------------------------------------------------------------------ */
/* Sampling */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Uniform in [0, bound] without modulo bias. */
static uint64_t uniform_upto(uint64_t *state, uint64_t bound)
{
    if (bound == UINT64_MAX)
        return splitmix64(state);
    uint64_t range = bound + 1, limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t r;
    do
        r = splitmix64(state);
    while (r >= limit);
    return r % range;
}

typedef struct sample_set {
    uint64_t *slot; /* value + 1; 0 = empty */
    uint64_t mask;
} sample_set;

/* Inserts v; 1 when it was already there. */
static int set_insert(sample_set *h, uint64_t v)
{
    uint64_t i = (v * UINT64_C(0x9e3779b97f4a7c15)) & h->mask;
    while (h->slot[i]) {
        if (h->slot[i] == v + 1)
            return 1;
        i = (i + 1) & h->mask;
    }
    h->slot[i] = v + 1;
    return 0;
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int sweep_sample(const tessel_allocator *a, uint64_t n, uint64_t k, uint64_t seed,
                 uint64_t **out, size_t *asked)
{
    *out = NULL;
    *asked = 0;
    uint64_t cap = 2;
    while (cap < 2 * k)
        cap *= 2;
    sample_set h = { tessel_alloc_array(a, cap, sizeof(uint64_t)), cap - 1 };
    uint64_t *v = tessel_alloc_array(a, k, sizeof(uint64_t));
    if (!h.slot || !v) {
        *asked = (size_t)(h.slot ? k : cap) * sizeof(uint64_t);
        tessel_dealloc(a, h.slot);
        tessel_dealloc(a, v);
        return TESSEL_ENOMEM;
    }
    memset(h.slot, 0, cap * sizeof(uint64_t));
    uint64_t state = seed, m = 0;
    /* Floyd: for j = n-k .. n-1 take t in [0, j]; if t is taken, take j. */
    for (uint64_t j = n - k; j < n; j++) {
        uint64_t t = uniform_upto(&state, j);
        v[m++] = set_insert(&h, t) ? (set_insert(&h, j), j) : t;
    }
    tessel_dealloc(a, h.slot);
    qsort(v, k, sizeof(*v), compare_u64);
    *out = v;
    return TESSEL_OK;
}

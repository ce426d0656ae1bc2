/* The points of a sweep: a design point's value on every axis, random
 * samples of the cross product drawn by index. */
#include <string.h>

#include "sweep_internal.h"

void sweep_point_indices(const tessel_sweep *s, uint64_t q, uint32_t *idx)
{
    if (s->mode == SWEEP_LIST) {
        memcpy(idx, s->list + q * s->naxes, s->naxes * sizeof(*idx));
        return;
    }
    if (s->mode == SWEEP_RANDOM)
        q = sweep_perm_at(&s->perm, q);
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

#define PERM_ROUNDS 6

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void sweep_perm_init(sweep_perm *p, uint64_t n, uint64_t seed)
{
    p->n = n;
    /* The smallest even number of bits (at least 2) whose range holds n:
     * 2^(2 half) < 4n, so cycle-walking takes fewer than 4 steps on
     * average. */
    p->half = 1;
    while (p->half < 31 && (UINT64_C(1) << (2 * p->half)) < n)
        p->half++;
    uint64_t state = seed;
    for (int r = 0; r < PERM_ROUNDS; r++)
        p->key[r] = splitmix64(&state);
}

/* One pass of the balanced Feistel network over 2 half bits: a bijection
 * of [0, 2^(2 half)) whatever the round function. */
static uint64_t feistel(const sweep_perm *p, uint64_t x)
{
    uint64_t mask = (UINT64_C(1) << p->half) - 1;
    uint64_t l = x >> p->half, r = x & mask;
    for (int i = 0; i < PERM_ROUNDS; i++) {
        uint64_t state = r ^ p->key[i];
        uint64_t f = splitmix64(&state) & mask;
        uint64_t t = l ^ f;
        l = r;
        r = t;
    }
    return (l << p->half) | r;
}

uint64_t sweep_perm_at(const sweep_perm *p, uint64_t q)
{
    /* Cycle-walking (Black and Rogaway, "Ciphers with arbitrary finite
     * domains", CT-RSA 2002, section 5): apply the permutation until the
     * value falls in [0, n). q < n lies on a cycle that returns to [0, n),
     * so this ends, and it is a bijection of [0, n). */
    uint64_t x = q;
    do
        x = feistel(p, x);
    while (x >= p->n);
    return x;
}

/* Random nested stat points for the unit tests of the nested boundaries
 * (test_stat_nested_cache.c, test_stat_nested_formula.c): a banded synthetic
 * matrix, and 3- or 4-level SpMSpM specs whose tiles come from small menus. */
#ifndef TESSEL_TEST_NESTED_POINTS_H
#define TESSEL_TEST_NESTED_POINTS_H

#include <check.h>
#include <stdio.h>

#include "tessel/model.h"
#include "test_specs.h"
#include "test_synthetic.h"

/* rows x cols with a band of 4 and random entries. */
static inline tessel_tensor *synthetic(uint64_t rows, uint64_t cols, double density, unsigned seed)
{
    return synthetic_banded(rows, cols, density, seed, 4);
}

static const char *const orders[4] = { "IJK", "KIJ", "IKJ", "JKI" };

/* Level l of s: a copy of level 1 with tile (i, j, k), order and name. */
static inline void add_level(tessel_spec *s, unsigned l, const uint64_t *tile, const char *order,
                      const char *name)
{
    tessel_spec o;
    test_spec_spmspm(&o, order, 8, 8, 8, 1, 64, 32);
    s->level[l] = s->level[1];
    snprintf(s->level[l].name, sizeof(s->level[l].name), "%s", name);
    for (unsigned x = 0; x < 3; x++) {
        s->level[l].tile[x] = tile[x];
        s->level[l].order[x] = o.level[1].order[x];
    }
    s->nlevels = l + 1;
}

/* Random capacity, partitions and formats of level l. */
static inline void random_buffer(rng *r, tessel_spec_level *lv, uint64_t min_kib)
{
    lv->capacity = (min_kib << 10) << below(r, 8);
    for (unsigned t = 0; t < 3; t++) {
        lv->tensor[t].partition_fraction = 0;
        lv->tensor[t].partition_bytes = 0;
        if (below(r, 2))
            lv->tensor[t].partition_fraction = 0.1 + 0.05 * (double)below(r, 4);
        lv->tensor[t].format = below(r, 3) == 0 ? (int)below(r, 5) : -1;
    }
}

/* A point of 3 (or, with deep, sometimes 4) levels: tiles from menus
 * (in units of base), orders from a few. */
static inline void nested_point(rng *r, uint64_t base, int deep, tessel_spec *s)
{
    static const uint64_t llb[2][3] = { { 4, 4, 4 }, { 16, 8, 32 } };
    static const uint64_t peb[2][3] = { { 1, 1, 1 }, { 2, 4, 2 } };
    static const unsigned bits[3] = { 16, 32, 64 };
    const uint64_t *t1 = llb[below(r, 2)], *t2 = peb[below(r, 2)];
    uint64_t e1[3] = { t1[0] * base, t1[1] * base, t1[2] * base };
    uint64_t e2[3] = { t2[0] * base, t2[1] * base, t2[2] * base };
    test_spec_spmspm(s, orders[below(r, 2)], e1[0], e1[2], e1[1], (int)below(r, 5),
                     bits[below(r, 3)], bits[below(r, 3)]);
    random_buffer(r, &s->level[1], 16);
    add_level(s, 2, e2, orders[2 * below(r, 2)], "PEB");
    random_buffer(r, &s->level[2], 4);
    if (deep && below(r, 3) == 0) {
        uint64_t e3[3] = { base / 2, base / 2, base / 2 };
        add_level(s, 3, e3, "IJK", "REG");
        random_buffer(r, &s->level[3], 1);
    }
}

#endif

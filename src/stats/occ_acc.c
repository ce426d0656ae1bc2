/* Occupancy accumulators and summaries: tiles counted per occupancy value,
 * so that memory follows the distinct occupancies (at most about
 * sqrt(2 nnz) of them) instead of the non-empty tiles, and so that partial
 * counts (row blocks, shards) merge exactly.
 *
 * Small occupancies (the common case) are counted in a dense array that
 * grows to at most DENSE_MAX entries; larger ones go to a list of
 * (value, tiles) pairs that is sorted and compacted when it fills up. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/stats.h"

#define DENSE_MAX (1u << 16)
#define PAIRS_MIN 64u

typedef struct occ_pair {
    uint64_t value, tiles;
} occ_pair;

struct tessel_occupancy_acc {
    const tessel_allocator *alloc;
    uint64_t *dense; /* dense[v]: tiles holding v nonzeros, v < ndense */
    uint64_t ndense;
    occ_pair *pairs; /* values >= DENSE_MAX, in any order until compacted */
    uint64_t npairs, cap;
};

int tessel_occupancy_acc_create(const tessel_allocator *a, tessel_occupancy_acc **out,
                                tessel_diag *diag)
{
    tessel_occupancy_acc *acc = tessel_alloc(a, sizeof(*acc));
    *out = NULL;
    if (!acc)
        return tessel_diag_oom(diag, NULL, "creating an occupancy count", sizeof(*acc));
    memset(acc, 0, sizeof(*acc));
    acc->alloc = a;
    *out = acc;
    return TESSEL_OK;
}

void tessel_occupancy_acc_free(tessel_occupancy_acc **accp)
{
    if (!accp || !*accp)
        return;
    tessel_occupancy_acc *acc = *accp;
    *accp = NULL;
    tessel_dealloc(acc->alloc, acc->dense);
    tessel_dealloc(acc->alloc, acc->pairs);
    tessel_dealloc(acc->alloc, acc);
}

static int compare_pairs(const void *x, const void *y)
{
    uint64_t a = ((const occ_pair *)x)->value, b = ((const occ_pair *)y)->value;
    return a < b ? -1 : a > b;
}

/* Sorts the pairs and merges equal values. */
static void compact(tessel_occupancy_acc *acc)
{
    if (acc->npairs < 2)
        return;
    qsort(acc->pairs, (size_t)acc->npairs, sizeof(occ_pair), compare_pairs);
    uint64_t w = 0;
    for (uint64_t i = 1; i < acc->npairs; i++) {
        if (acc->pairs[i].value == acc->pairs[w].value)
            acc->pairs[w].tiles += acc->pairs[i].tiles;
        else
            acc->pairs[++w] = acc->pairs[i];
    }
    acc->npairs = w + 1;
}

static int add_large(tessel_occupancy_acc *acc, uint64_t value, uint64_t tiles)
{
    if (acc->npairs == acc->cap) {
        compact(acc);
        if (acc->npairs > acc->cap / 2 || acc->cap == 0) {
            uint64_t cap = acc->cap ? 2 * acc->cap : PAIRS_MIN;
            occ_pair *p = tessel_realloc_array(acc->alloc, acc->pairs, cap, sizeof(occ_pair));
            if (!p)
                return TESSEL_ENOMEM;
            acc->pairs = p;
            acc->cap = cap;
        }
    }
    acc->pairs[acc->npairs].value = value;
    acc->pairs[acc->npairs].tiles = tiles;
    acc->npairs++;
    return TESSEL_OK;
}

/* Grows the dense counts to cover `value` (< DENSE_MAX): powers of two. */
static int grow_dense(tessel_occupancy_acc *acc, uint64_t value)
{
    uint64_t n = acc->ndense ? acc->ndense : 64;
    while (n <= value)
        n *= 2;
    uint64_t *d = tessel_realloc_array(acc->alloc, acc->dense, n, sizeof(uint64_t));
    if (!d)
        return TESSEL_ENOMEM;
    memset(d + acc->ndense, 0, (size_t)(n - acc->ndense) * sizeof(uint64_t));
    acc->dense = d;
    acc->ndense = n;
    return TESSEL_OK;
}

int tessel_occupancy_acc_add(tessel_occupancy_acc *acc, uint64_t occupancy, uint64_t tiles,
                             tessel_diag *diag)
{
    if (occupancy == 0 || tiles == 0)
        return TESSEL_OK;
    int rc = TESSEL_OK;
    if (occupancy >= DENSE_MAX) {
        rc = add_large(acc, occupancy, tiles);
    } else {
        if (occupancy >= acc->ndense)
            rc = grow_dense(acc, occupancy);
        if (!rc)
            acc->dense[occupancy] += tiles;
    }
    return rc ? tessel_diag_oom(diag, NULL, "counting tiles per occupancy", 0) : TESSEL_OK;
}

int tessel_occupancy_acc_merge(tessel_occupancy_acc *acc, const tessel_occupancy_acc *other,
                               tessel_diag *diag)
{
    for (uint64_t v = 1; v < other->ndense; v++) {
        int rc = tessel_occupancy_acc_add(acc, v, other->dense[v], diag);
        if (rc)
            return rc;
    }
    for (uint64_t i = 0; i < other->npairs; i++) {
        int rc = tessel_occupancy_acc_add(acc, other->pairs[i].value, other->pairs[i].tiles, diag);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

int tessel_occupancy_acc_pairs(tessel_occupancy_acc *acc, uint64_t **value,
                               uint64_t **tiles, uint64_t *n, tessel_diag *diag)
{
    *value = *tiles = NULL;
    *n = 0;
    compact(acc);
    uint64_t count = acc->npairs;
    for (uint64_t v = 1; v < acc->ndense; v++)
        count += acc->dense[v] != 0;
    if (count == 0)
        return TESSEL_OK;
    *value = tessel_alloc_array(acc->alloc, count, sizeof(uint64_t));
    *tiles = tessel_alloc_array(acc->alloc, count, sizeof(uint64_t));
    if (!*value || !*tiles) {
        tessel_dealloc(acc->alloc, *value);
        tessel_dealloc(acc->alloc, *tiles);
        *value = *tiles = NULL;
        return tessel_diag_oom(diag, NULL, "listing the tile occupancies",
                               (size_t)(2 * count * sizeof(uint64_t)));
    }
    uint64_t k = 0;
    for (uint64_t v = 1; v < acc->ndense; v++)
        if (acc->dense[v]) {
            (*value)[k] = v;
            (*tiles)[k++] = acc->dense[v];
        }
    for (uint64_t i = 0; i < acc->npairs; i++) {
        (*value)[k] = acc->pairs[i].value;
        (*tiles)[k++] = acc->pairs[i].tiles;
    }
    *n = k;
    return TESSEL_OK;
}

/* s + x added c times in double arithmetic, one rounding per addition, as
 * the loop `while (c--) s += x;` gives it bit for bit (s, x >= 0, finite),
 * in O(binades crossed) steps instead of c. While the exact sums stay
 * below the top of s's binade [2^(e-1), 2^e), every addition rounds to the
 * binade's grid of ulp u = 2^(e-53) on which s lies, so it adds the same
 * increment (the first one's), unless x falls exactly halfway between two
 * multiples of u, where ties-to-even may alternate: those additions, the
 * ones near the top of the binade and subnormal sums go one at a time. */
static double add_repeated(double s, double x, uint64_t c)
{
    while (c > 0) {
        double next = s + x;
        if (next == s)
            return s; /* the same state: every further addition gives s */
        c--;
        if (c == 0 || !(s >= DBL_MIN)) {
            s = next;
            continue;
        }
        int e;
        (void)frexp(s, &e);
        double top = ldexp(1.0, e), u = ldexp(1.0, e - 53);
        double inc = next - s; /* exact: both on the grid, inc < 2^e */
        /* Additions from next + j * inc stay in the binade while that plus
         * x is below top; 4 spare for the rounding of this estimate. */
        double room = (top - x - next) / inc - 4;
        uint64_t k = 0;
        if (room >= 1 && !(x / u - floor(x / u) == 0.5))
            k = room < (double)c ? (uint64_t)room : c;
        s = next + (double)k * inc; /* exact: a multiple of u below top */
        c -= k;
    }
    return s;
}

/* The summary of the accumulated occupancies: min, max, mean, stddev and the
 * cumulative counts the quantiles and histograms read. */
int tessel_occupancy_acc_finish(tessel_occupancy_acc *acc, uint64_t all_tiles,
                                tessel_occupancy **out, tessel_diag *diag)
{
    *out = NULL;
    const tessel_allocator *a = acc->alloc;
    tessel_occupancy *o = NULL;
    uint64_t *value = NULL, *tiles = NULL, n = 0;
    int rc = tessel_occupancy_acc_pairs(acc, &value, &tiles, &n, diag);
    if (rc)
        return rc;
    o = tessel_alloc(a, sizeof(*o));
    if (!o) {
        tessel_dealloc(a, value);
        tessel_dealloc(a, tiles);
        return tessel_diag_oom(diag, NULL, "creating the tile occupancy", sizeof(*o));
    }
    memset(o, 0, sizeof(*o));
    o->alloc = a;
    o->tiles = all_tiles;
    o->ndistinct = n;
    o->value = value;
    o->upto = tiles; /* made cumulative below */
    uint64_t nonempty = 0, nnz = 0;
    for (uint64_t i = 0; i < n; i++) {
        nnz += value[i] * tiles[i];
        nonempty += tiles[i];
        o->upto[i] = nonempty;
    }
    o->nonempty = nonempty;
    o->nnz = nnz;
    if (n == 0) {
        *out = o;
        return TESSEL_OK;
    }
    o->min = value[0];
    o->max = value[n - 1];
    o->mean = (double)nnz / (double)nonempty;
    /* Summed tile by tile in ascending order, as a sorted list of the
     * occupancies would be: the same bits on every machine and for every
     * split of the tiles into parts. */
    double ss = 0;
    uint64_t below = 0;
    for (uint64_t i = 0; i < n; i++) {
        double d = (double)value[i] - o->mean;
        ss = add_repeated(ss, d * d, o->upto[i] - below);
        below = o->upto[i];
    }
    o->stddev = sqrt(ss / (double)nonempty);
    *out = o;
    return TESSEL_OK;
}


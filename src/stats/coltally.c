/* The column-slice count of a matrix: how many nonzeros each column (or
 * column of tiles) holds over all rows, the distribution of mode 1 in
 * `tessel stats` (docs/data.md, "The time exponent of in-memory stats").
 *
 * One byte per counter, with a list of the keys whose byte wrapped: at
 * 64M nonzeros (4M columns) the counters take 4 MB, which stays in the
 * last-level cache, where 8-byte counters (32 MB) did not and had to be
 * reached through a bucketed pass over the entries. Matrices of average
 * degree 16 wrap almost never; a column's every 256th entry costs one
 * append, so the list holds at most 1/256 of the entries. */
#include <string.h>

#include "coltally.h"

void col_tally_free(col_tally *t)
{
    tessel_dealloc(t->alloc, t->low);
    tessel_dealloc(t->alloc, t->carry);
    memset(t, 0, sizeof(*t));
}

/* Room for one more carried key (doubling). */
static int carry_grow(col_tally *t, uint64_t *asked)
{
    uint64_t cap = t->carry_cap ? 2 * t->carry_cap : 1024;
    uint64_t *p = tessel_realloc_array(t->alloc, t->carry, cap, sizeof(uint64_t));
    if (!p) {
        *asked = cap * sizeof(uint64_t);
        return TESSEL_ENOMEM;
    }
    t->carry = p;
    t->carry_cap = cap;
    return TESSEL_OK;
}

/* Byte counters: a wrapped byte (the branch taken once per 256 of a key's
 * entries) appends its key. */
static int count_bytes(col_tally *t, const uint32_t *col, uint64_t lo, uint64_t hi,
                       unsigned shift, uint32_t div, uint64_t *asked)
{
    uint8_t *low = t->low;
    for (uint64_t k = lo; k < hi; k++) {
        uint32_t key = div ? col[k] / div : (uint32_t)((uint64_t)col[k] >> shift);
        if (++low[key] == 0) {
            if (t->ncarry == t->carry_cap && carry_grow(t, asked))
                return TESSEL_ENOMEM;
            t->carry[t->ncarry++] = key;
        }
    }
    return TESSEL_OK;
}

int col_tally_count(col_tally *t, const uint32_t *col, uint64_t lo, uint64_t hi, uint64_t width,
                    uint64_t keys, const tessel_allocator *a, uint64_t *asked)
{
    memset(t, 0, sizeof(*t));
    t->alloc = a;
    t->keys = keys;
    t->low = tessel_alloc_zeroed(a, keys ? keys : 1, 1);
    if (!t->low) {
        *asked = keys;
        return TESSEL_ENOMEM;
    }
    unsigned shift = 0;
    while ((1ull << shift) < width && shift < 32)
        shift++;
    uint32_t div = (width & (width - 1)) == 0 ? 0
                   : width > UINT32_MAX         ? UINT32_MAX
                                                : (uint32_t)width;
    int rc = count_bytes(t, col, lo, hi, shift, div, asked);
    if (!rc && t->ncarry > 1) {
        uint64_t *scratch = tessel_alloc_array(a, t->ncarry, sizeof(uint64_t));
        if (!scratch) {
            *asked = t->ncarry * sizeof(uint64_t);
            rc = TESSEL_ENOMEM;
        } else {
            tessel_sort_u64(t->carry, scratch, t->ncarry, keys - 1);
            tessel_dealloc(a, scratch);
        }
    }
    if (rc)
        col_tally_free(t);
    return rc;
}

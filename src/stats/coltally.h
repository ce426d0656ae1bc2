/* Internal to src/stats: the column-slice count of a matrix (one counter
 * per column, or per column of tiles, over all its rows) in one byte per
 * counter (coltally.c), for grid.c. */
#ifndef TESSEL_STATS_COLTALLY_H
#define TESSEL_STATS_COLTALLY_H

#include <stdint.h>

#include "tessel/base.h"

typedef struct col_tally {
    const tessel_allocator *alloc;
    uint64_t keys;   /* counters: key k counts the columns [k * width, (k + 1) * width) */
    uint8_t *low;    /* each key's count modulo 256 */
    uint64_t *carry; /* a key once per 256 of its count, ascending */
    uint64_t ncarry, carry_cap;
} col_tally;

/* Counts the keys col[lo .. hi) / width (each < keys) into t, which holds
 * nothing on entry. TESSEL_ENOMEM when memory runs out (t freed; *asked:
 * the bytes the failed step asked for). */
int col_tally_count(col_tally *t, const uint32_t *col, uint64_t lo, uint64_t hi, uint64_t width,
                    uint64_t keys, const tessel_allocator *a, uint64_t *asked);

/* The count of key k: call with k ascending from 0, *next starting at 0
 * (the position in the carry list). */
static inline uint64_t col_tally_get(const col_tally *t, uint64_t k, uint64_t *next)
{
    uint64_t n = t->low[k];
    while (*next < t->ncarry && t->carry[*next] == k) {
        n += 256;
        ++*next;
    }
    return n;
}

void col_tally_free(col_tally *t);

#endif

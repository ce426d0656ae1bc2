/* Internal to src/stats: sorting unsigned 64-bit keys. */
#ifndef TESSEL_STATS_SORT_H
#define TESSEL_STATS_SORT_H

#include <stdint.h>

/* Sorts keys[0..n) ascending. Every key must be <= max_key (it sets the
 * number of radix passes). scratch holds n words. */
void stats_sort_u64(uint64_t *keys, uint64_t *scratch, uint64_t n, uint64_t max_key);

#endif

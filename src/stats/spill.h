/* Internal to src/stats: streamed statistics of several blocks from one
 * text pass through a spill file (spill.c), for stream.c. */
#ifndef TESSEL_STATS_SPILL_H
#define TESSEL_STATS_SPILL_H

#include <stdint.h>

#include "tessel/stats.h"

/* Bytes buffered per block before a write to the spill file. */
#define SPILL_BUFFER (64u << 10)

/* Adds the n blocks of rows [bounds[k], bounds[k + 1]) to p, reading the
 * Matrix Market or .tns file at path once: each block's entries (at most
 * room[k], the counting pass's count) go to its region of an unlinked spill
 * file created in dir, and each block is then built from its region.
 * Memory: n buffers of SPILL_BUFFER bytes, then one block's tensor. */
int stream_spill_blocks(tessel_stats_part *p, const char *path, const tessel_load_options *opt,
                        const char *dir, const uint64_t *bounds, const uint64_t *room,
                        unsigned n, const tessel_allocator *a, tessel_diag *diag);

#endif

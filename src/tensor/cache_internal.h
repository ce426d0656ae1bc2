/* Internal to src/tensor: the .tsl cache's header (layout in cache.c) and
 * its check, shared by the whole-tensor reader (cache.c) and the row-blocked
 * one (cache_rows.c). */
#ifndef TESSEL_TENSOR_CACHE_INTERNAL_H
#define TESSEL_TENSOR_CACHE_INTERNAL_H

#include <stdint.h>

#include "tessel/tensor.h"

#define CACHE_MAGIC "TESSELC\n"
#define CACHE_VERSION 1u
#define CACHE_HEADER_BYTES 256u
#define CACHE_BOM 0x01020304u
#define CACHE_FLAG_VALUES 1u
/* Arrays are read and checksummed in pieces this large (cache-warm). */
#define CACHE_CHUNK (8u << 20)

typedef struct cache_header {
    char magic[8];
    uint32_t version;
    uint32_t header_bytes;
    uint32_t order;
    uint32_t flags;
    uint64_t dims[TESSEL_MAX_ORDER];
    uint64_t nnz;
    uint64_t source_size;
    int64_t source_mtime_ns;
    uint32_t source_options;
    uint32_t bom;
    char field[16];
    char symmetry[16];
    uint64_t payload_bytes;
    uint64_t payload_checksum;
    unsigned char zero[80];
    uint64_t header_checksum;
} cache_header;

_Static_assert(sizeof(cache_header) == CACHE_HEADER_BYTES, "cache header layout");

/* TESSEL_OK, or TESSEL_ECORRUPT with diag naming what is wrong with a
 * header read from a file of `total` bytes (every size a reader relies on
 * is settled here). */
int cache_check_header(const cache_header *h, uint64_t total, tessel_diag *diag,
                       const char *name);

/* tessel_cache_read; with pattern_only the file is mapped (ptr and idx in
 * place, t->mapping set; values checksummed through the mapping and not
 * kept, t->values NULL), or, when it cannot be mapped, read with the values
 * checksummed through one CACHE_CHUNK buffer. */
int cache_read_file(const char *path, const tessel_cache_source *expect, int pattern_only,
                    const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag);

#endif

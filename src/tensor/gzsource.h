/* Internal to src/tensor: gzip input inflated member by member, refusing
 * bytes after a member that do not begin another one (gzsource.c). */
#ifndef TESSEL_TENSOR_GZSOURCE_H
#define TESSEL_TENSOR_GZSOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "tessel/base.h"

typedef struct gz_source gz_source;

/* Where a read happens, for messages; *truncated is set when the input
 * ends inside a member. */
typedef struct gz_context {
    const char *name;
    uint64_t line;
    int *truncated;
} gz_context;

/* The compressed bytes read at a time (the stream's input buffer). */
#define GZ_IN_BYTES (1u << 17)

/* Takes ownership of fd (closed by gz_source_close). TESSEL_ENOMEM. */
int gz_source_open(int fd, const tessel_allocator *a, gz_source **out);
/* Up to want decompressed bytes into dst: how many (0 at the end), or a
 * negative TESSEL_E* code with diag filled. */
long gz_source_read(gz_source *g, void *dst, size_t want, const gz_context *c,
                    tessel_diag *diag);
void gz_source_close(gz_source *g);

#endif

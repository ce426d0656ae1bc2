/* Internal to src/tensor: a gzip source inflated ahead on a thread of its
 * own while the text reader parses (gzpipe.c). */
#ifndef TESSEL_TENSOR_GZPIPE_H
#define TESSEL_TENSOR_GZPIPE_H

#include <stddef.h>
#include <stdint.h>

#include "gzsource.h"
#include "tessel/base.h"

typedef struct gz_pipe gz_pipe;

/* Compressed inputs from this size on are read through a pipe. */
#define GZ_PIPE_MIN_BYTES (64u << 10)

/* Starts reading src ahead (src stays the caller's: close the pipe first).
 * NULL when there is one core or no memory for the blocks: the caller then
 * reads src directly. name is for messages. */
gz_pipe *gz_pipe_open(gz_source *src, const char *name, const tessel_allocator *a);
/* As gz_source_read: up to want bytes (0 at the end), or a negative
 * TESSEL_E* code with diag filled and its line set to `line`; *truncated is
 * set when the stream ended inside a member. */
long gz_pipe_read(gz_pipe *p, void *dst, size_t want, uint64_t line, int *truncated,
                  tessel_diag *diag);
void gz_pipe_close(gz_pipe *p);

#endif

/* Internal to src/tensor: a matrix built in place from entries streamed in
 * file order (csr_stream.c), for the single-pass Matrix Market reader
 * (gzipped files and every fallback of the chunked reader), with no
 * coordinate staging copy (issue 27 item 1). */
#ifndef TESSEL_TENSOR_CSR_STREAM_H
#define TESSEL_TENSOR_CSR_STREAM_H

#include <stdint.h>

#include "tessel/tensor.h"

/* The entries go straight into the tensor's column and value arrays in file
 * order, and their count per row into the row pointers. While the rows do
 * not decrease, that order is already the rows' order; from the first
 * decrease on, a 32-bit row per entry is kept too, and finishing moves the
 * entries to their rows in place. */
typedef struct csr_stream {
    const tessel_allocator *alloc;
    uint64_t rows, cols;
    int has_values;
    uint64_t count, cap;
    uint64_t *ptr;  /* rows + 1: ptr[r + 1] counts row r's entries */
    uint32_t *col;
    double *val;
    uint32_t *row;  /* NULL while the rows have not decreased */
    uint32_t last_row;
} csr_stream;

/* Whether a matrix of `rows` rows, with room reserved for `reserve` entries
 * and at most `most` of them, can be built this way: the row pointers,
 * allocated up front here, would pass the hypersparse check for the
 * reservation, and the count stays below 2^32. Otherwise the caller uses the
 * coordinate builder, which allocates them only after reading and refuses
 * them as it always has. */
int csr_stream_fits(uint64_t rows, uint64_t reserve, uint64_t most, int has_values);

/* Room for `reserve` entries and zeroed row counts; TESSEL_ENOMEM. */
int csr_stream_init(csr_stream *s, uint64_t rows, uint64_t cols, int has_values,
                    uint64_t reserve, const tessel_allocator *a);
void csr_stream_free(csr_stream *s);

/* The bytes the arrays ask for at their next growth (out-of-memory
 * messages). */
uint64_t csr_stream_grow_bytes(const csr_stream *s);

int csr_stream_grow(csr_stream *s);
int csr_stream_start_rows(csr_stream *s);

/* Entry (i, j) with value v, i < rows and j < cols; TESSEL_ENOMEM. */
static inline int csr_stream_add(csr_stream *s, uint32_t i, uint32_t j, double v)
{
    int rc;
    if (s->count == s->cap && (rc = csr_stream_grow(s)))
        return rc;
    if (i < s->last_row && !s->row && (rc = csr_stream_start_rows(s)))
        return rc;
    uint64_t k = s->count++;
    s->col[k] = j;
    if (s->val)
        s->val[k] = v;
    if (s->row)
        s->row[k] = i;
    s->ptr[i + 1]++;
    s->last_row = i;
    return TESSEL_OK;
}

/* The tensor (entries moved to their rows, then the coordinate builder's
 * slice sort and duplicate sum: the same tensor bit for bit); s keeps no
 * array afterwards. */
int csr_stream_finish(csr_stream *s, unsigned flags, tessel_tensor **out, tessel_diag *diag);

#endif

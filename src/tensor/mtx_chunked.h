/* Internal to src/tensor: the entry reader that parses an uncompressed
 * file's entry lines in chunks on several threads and builds the compressed
 * rows in place (mtx_chunked.c), behind mtx.c's header parsing and tns.c's
 * first entry line. */
#ifndef TESSEL_TENSOR_MTX_CHUNKED_H
#define TESSEL_TENSOR_MTX_CHUNKED_H

#include <stdint.h>

#include "textio.h"
#include "tessel/tensor.h"

enum mtx_field { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN, FIELD_COMPLEX };

/* The value of a real, integer or pattern entry at *p (advanced past it);
 * 0 when the careful reader must say why not. Both entry readers use it. */
static inline int mtx_scan_value(const char **p, const char *end, enum mtx_field field,
                                 double *out)
{
    if (field == FIELD_PATTERN) {
        *out = 1.0;
        return 1;
    }
    if (field == FIELD_INTEGER) {
        int64_t iv;
        if (scan_i64(p, end, &iv) != SCAN_OK)
            return 0;
        *out = (double)iv;
        return 1;
    }
    return scan_double(p, end, out) == SCAN_OK;
}
enum mtx_symmetry { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW, SYM_HERMITIAN };

/* Returned (positive) when the entries need the single-pass reader: any
 * malformed or unexpected line, whose message that reader produces. */
#define MTX_CHUNKED_FALLBACK 1

typedef struct mtx_chunk_job {
    const char *name;
    int fd;                   /* the plain file, or -1 with mem */
    const unsigned char *mem; /* the whole input in memory, or NULL */
    /* mem is the file mapped privately (mtx_chunked.c): writable, with
     * TEXT_PAD zero bytes readable past end, so chunks parse in place */
    int in_place;
    uint64_t begin, end;      /* byte range of the entry lines */
    uint64_t rows, cols, entries;
    enum mtx_field field;     /* real, integer or pattern */
    enum mtx_symmetry symmetry; /* general, symmetric or skew */
    int threads;              /* > 0: exactly this many chunks; 0: online cores */
    unsigned flags;           /* TESSEL_BUILD_* */
    /* FROSTT .tns (tns.c): `order` indices and a value per line, '#' and
     * '%' comments, no declared count; the extents (rows, cols unused) are
     * the largest coordinates, found by pass 1. */
    int tns;
    unsigned order;
} mtx_chunk_job;

/* TESSEL_OK and *out, MTX_CHUNKED_FALLBACK, or a negative TESSEL_E* code
 * (out of memory, read error) with diag filled. */
int mtx_chunked_read(const mtx_chunk_job *job, const tessel_allocator *a, tessel_tensor **out,
                     tessel_diag *diag);

#endif

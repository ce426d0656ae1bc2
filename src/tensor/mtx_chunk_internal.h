/* Internal to src/tensor: the chunked entry reader's per-thread state
 * (mtx_chunked.c) shared with its one-pass read of row-ordered general
 * matrices (mtx_direct.c). */
#ifndef TESSEL_TENSOR_MTX_CHUNK_INTERNAL_H
#define TESSEL_TENSOR_MTX_CHUNK_INTERNAL_H

#include <stdint.h>

#include "mtx_chunked.h"
#include "textio.h"

/* Bytes read per block; a line longer than this sends the file to the
 * single-pass reader (which refuses lines over TEXT_READER_MAX_LINE). */
#define CHUNK_BLOCK (256u << 10)
/* Automatic thread counts give every thread at least this much text. */
#define CHUNK_MIN_BYTES (1u << 20)
#define CHUNK_MAX_THREADS 64
/* The passes: 1 counts the rows, 2 places the entries; PASS_DIRECT places
 * a general matrix's entries in one pass while its rows do not decrease
 * (mtx_direct.c; passes 1 and 2 follow if they do), and PASS_LINES counts
 * the lines of the text after the first chunk, each thread a piece, to
 * give every chunk its slots (on three threads or more; two need no
 * count: see `reversed`). */
#define PASS_DIRECT 3
#define PASS_LINES 4
/* A chunk's status when PASS_DIRECT stopped at an entry it cannot place
 * (pass 1 and 2 then read the file). */
#define CHUNK_TURNED 2
/* Bytes searched per read for the line break that ends a chunk. */
#define BOUNDARY_WINDOW 65536u
/* Row counters per thread for a .tns file whose first and last lines give
 * no guess of its first mode's extent (16 MiB). */
#define TNS_GUESS_ROWS (1u << 22)

typedef struct chunk {
    const mtx_chunk_job *job;
    uint64_t lo, hi;     /* byte range, whole lines */
    char *buf;           /* cap + 1 + TEXT_PAD bytes */
    size_t cap;          /* CHUNK_BLOCK, or less for a shorter range */
    uint32_t *row_count; /* pass 1: entries per row; pass 2: next slot per row */
    uint64_t count_rows; /* row_count's length */
    uint64_t need_rows;  /* .tns pass 1: rows seen beyond count_rows (0: none) */
    uint64_t maxc[TESSEL_MAX_ORDER]; /* .tns pass 1: largest coordinate + 1 */
    tessel_tensor *t;    /* pass 2 and PASS_DIRECT: the arrays being filled */
    int pass;
    /* PASS_DIRECT (a general matrix): entries go to slots base.. below
     * limit in file order while their rows stay in row_lo..row_hi and do
     * not decrease; the chunk writes the start of each row after row_lo
     * it enters into the row pointers, and stops (CHUNK_TURNED) at the
     * first entry that breaks this. */
    uint64_t base, limit;
    uint32_t row_lo, row_hi;
    uint32_t first_row, last_row; /* of its entries, when stored > 0 */
    uint32_t first_col, last_col;
    int strict;          /* PASS_DIRECT: columns rise strictly within rows */
    /* PASS_DIRECT on two threads: the last chunk, whose line count is not
     * known, writes its entries from slot limit - 1 down (its rows' starts
     * as counts of its entries before them) and mtx_direct_complete puts
     * them back in file order once the pass has ended */
    int reversed;
    /* PASS_LINES: the thread's piece of the text after the first chunk,
     * and its line breaks in each chunk (all: the n_all chunks) */
    const struct chunk *all;
    int n_all;
    uint64_t piece_lo, piece_hi;
    uint64_t nl_in[CHUNK_MAX_THREADS];
    uint64_t lines;      /* entry lines seen */
    uint64_t stored;     /* entries placed (mirrors included) */
    int status;          /* TESSEL_OK, MTX_CHUNKED_FALLBACK or < 0 */
    int read_errno;
} chunk;

/* A 1-based index in 1..limit (textio.h): on a chunk's lines, which end
 * in a NUL with TEXT_PAD bytes after it, one word at the line's end too;
 * on the windows' lines, only within the line. */
#define read_index scan_index_padded
#define read_window_index scan_index_fast

/* n bytes at offset off into dst; 0, or -1 with errno (short read: EIO). */
int chunk_read_at(const mtx_chunk_job *job, char *dst, size_t n, uint64_t off);
/* Whether [p, end) is a line the readers skip (blank or comment). */
int chunk_is_comment_or_blank(const mtx_chunk_job *job, const char *p, const char *end);
/* Runs pass `pass` of every chunk that `only` selects (NULL: all). */
void chunk_run_pass(chunk *ch, int n, int pass, const unsigned char *only);
/* The first failure of the last pass in file order, TESSEL_OK if none. */
int chunk_pass_status(const chunk *ch, int n, tessel_diag *diag);

/* mtx_direct.c: PASS_DIRECT's line (mtx_direct_line) and common lines from p
 * (mtx_direct_fast, returns where it stopped); whether the first entry
 * lines' rows rise; the pass's slots and bounds (*ok 1 when it can run);
 * and after it, whether it completed the matrix (0, 1, or 2 for strictly
 * rising columns), with the row pointers it left. */
int mtx_direct_line(chunk *c, const char *p, const char *end);
char *mtx_direct_fast(chunk *c, char *p, const char *stop);
int mtx_direct_rows_rise(const mtx_chunk_job *job, const tessel_allocator *a);
int mtx_direct_setup(const mtx_chunk_job *job, chunk *ch, int n, tessel_tensor *t, int *ok,
                     tessel_diag *diag);
int mtx_direct_complete(chunk *ch, int n, tessel_tensor *t);

#endif

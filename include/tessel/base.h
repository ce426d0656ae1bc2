/* tessel — shared foundation: error codes, diagnostics, the allocation hook,
 * atomic output files.  Every other module may use this one; it uses none. */
#ifndef TESSEL_BASE_H
#define TESSEL_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library functions return 0 or one of these negative codes. */
enum tessel_error {
    TESSEL_OK = 0,
    TESSEL_ENOMEM = -1,      /* an allocation failed */
    TESSEL_EIO = -2,         /* a file could not be opened, read or written */
    TESSEL_EPARSE = -3,      /* malformed input */
    TESSEL_EINVAL = -4,      /* invalid argument or option */
    TESSEL_ERANGE = -5,      /* a value outside what tessel supports, or an overflow */
    TESSEL_ECORRUPT = -6,    /* checksum or structure mismatch in a binary file */
    TESSEL_ESTALE = -7,      /* a cache that no longer matches its source */
    TESSEL_EUNSUPPORTED = -8, /* valid input that tessel does not handle */
    TESSEL_EWRITE = -9        /* an output could not be written (disk full, permissions) */
};

/* Name of an error code ("out of memory", ...). Never NULL. */
const char *tessel_strerror(int code);

/* ------------------------------------------------------------------ */
/* Allocation hook (one for the whole library, Lua style).
 *   fn(ud, NULL, n)  allocates n bytes
 *   fn(ud, p, n)     resizes p to n bytes (realloc semantics)
 *   fn(ud, p, 0)     frees p and returns NULL
 * The same signature as libcyaml's mem_fn, so a spec parser can share it.
 * Objects remember the allocator they were created with; NULL everywhere
 * means tessel_allocator_default(). */
typedef void *(*tessel_alloc_fn)(void *ud, void *ptr, size_t size);

typedef struct tessel_allocator {
    tessel_alloc_fn fn;
    void *ud;
} tessel_allocator;

/* The malloc/realloc/free allocator. A pointer to immutable static data. */
const tessel_allocator *tessel_allocator_default(void);

/* Convenience wrappers; `a` may be NULL. Sizes of 0 return NULL. Array
 * helpers check count*size for overflow and return NULL on it. */
void *tessel_alloc(const tessel_allocator *a, size_t size);
void *tessel_alloc_array(const tessel_allocator *a, size_t count, size_t size);
void *tessel_realloc_array(const tessel_allocator *a, void *ptr, size_t count, size_t size);
/* tessel_alloc_array's memory, zeroed. With the default allocator, calloc:
 * the pages of a large array that are never written are never made
 * resident (sparse tables sized by a budget cost only what they touch). */
void *tessel_alloc_zeroed(const tessel_allocator *a, size_t count, size_t size);
void tessel_dealloc(const tessel_allocator *a, void *ptr);
/* A NUL-terminated copy of s through the allocator, or NULL. */
char *tessel_strdup(const tessel_allocator *a, const char *s);

/* ------------------------------------------------------------------ */
/* Diagnostics: what went wrong and where. Functions take an optional
 * tessel_diag *; when given it is filled on error. Line and column are
 * 1-based; 0 means "not applicable". */
typedef struct tessel_diag {
    int code;
    char file[512];
    uint64_t line;
    uint32_t column;
    char field[128];
    char message[512];
} tessel_diag;

/* Clears d (d may be NULL). */
void tessel_diag_clear(tessel_diag *d);

/* Names the file a diagnostic is about (d may be NULL); a path longer than
 * the field is cut at its end, so the message stays intact. */
void tessel_diag_set_file(tessel_diag *d, const char *file);

/* Fills d (if not NULL) and returns code, so callers can write
 * `return tessel_diag_set(d, TESSEL_EPARSE, file, line, 0, NULL, "...")`. */
int tessel_diag_set(tessel_diag *d, int code, const char *file, uint64_t line, uint32_t column,
                    const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;
int tessel_diag_vset(tessel_diag *d, int code, const char *file, uint64_t line, uint32_t column,
                     const char *field, const char *fmt, va_list ap);
/* An allocation failed: TESSEL_ENOMEM with "out of memory while STEP
 * (asked for N bytes)", so that the user learns which step ran out and
 * how much it wanted (bytes 0: not known at the site). */
int tessel_diag_oom(tessel_diag *d, const char *file, const char *step, size_t bytes);

/* Writes "file:line:col: error: message" (parts that are unset are left
 * out) into buf of size n; returns the length it needed, like snprintf. */
int tessel_diag_format(const tessel_diag *d, char *buf, size_t n);

/* A list of diagnostics, for inputs where every error is collected before
 * giving up (specs). Items are copied in; the list grows through its
 * allocator. A push that cannot allocate sets `dropped` (and returns
 * TESSEL_ENOMEM) so the caller still knows something went wrong. */
typedef struct tessel_diag_list {
    const tessel_allocator *alloc;
    tessel_diag *items;
    size_t count, capacity;
    size_t dropped;
} tessel_diag_list;

void tessel_diag_list_init(tessel_diag_list *l, const tessel_allocator *a);
int tessel_diag_list_push(tessel_diag_list *l, const tessel_diag *d);
/* Puts "TEXT: " (printf-style) before d's message (or before the text of
 * its code when it has none), cutting the end when it no longer fits. */
void tessel_diag_prefix(tessel_diag *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Sets a diagnostic like tessel_diag_set and pushes it; returns code. */
int tessel_diag_list_add(tessel_diag_list *l, int code, const char *file, uint64_t line,
                         uint32_t column, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;
void tessel_diag_list_free(tessel_diag_list *l);

/* The candidate closest to `word` by edit distance, or NULL when none is
 * within max(2, strlen(word) / 3) edits ("did you mean ...?"). */
const char *tessel_nearest_word(const char *word, const char *const *candidates, size_t n);

/* ------------------------------------------------------------------ */
/* Atomic output: data go to a temporary file next to `path`, which is
 * renamed over `path` only by tessel_outfile_commit. A failed or abandoned
 * write leaves the old file (or no file) in place. A `path` that exists
 * and is not a regular file
 * (a symlink, FIFO, device or directory) is refused with TESSEL_EINVAL:
 * replacing it would destroy it. Failures to create, write, sync or
 * rename are TESSEL_EWRITE with the system's reason. */
typedef struct tessel_outfile tessel_outfile;

int tessel_outfile_open(const char *path, const tessel_allocator *a, tessel_outfile **out,
                        tessel_diag *diag);
/* Before long work whose result goes to path: refuses what
 * tessel_outfile_open would refuse, creates missing parent directories
 * and checks that the directory is writable, so that a run fails at once
 * instead of at its end. */
int tessel_output_prepare(const char *path, const tessel_allocator *a, tessel_diag *diag);
/* mkdir -p: dir and its missing parents. TESSEL_EINVAL when a file that is
 * not a directory is in the way, TESSEL_EWRITE on other failures. */
int tessel_dirs_make(const char *dir, const tessel_allocator *a, tessel_diag *diag);
/* The stream to write into (valid until commit/abort). */
FILE *tessel_outfile_stream(tessel_outfile *f);
/* Flushes, fsyncs and closes the temporary file, ready for commit: files
 * that must appear together are all synced first, then committed, so only
 * the renames lie between them. */
int tessel_outfile_sync(tessel_outfile *f, tessel_diag *diag);
/* Flushes, fsyncs, checks for write errors (if not synced yet), renames;
 * frees *f either way. */
int tessel_outfile_commit(tessel_outfile **f, tessel_diag *diag);
/* Removes the temporary file and frees *f. Safe on NULL / *f == NULL. */
void tessel_outfile_abort(tessel_outfile **f);
/* After a failed write into the stream: aborts *f and reports
 * TESSEL_EWRITE with errno's reason ("No space left on device"). */
int tessel_outfile_abort_failed(tessel_outfile **f, tessel_diag *diag);

/* Opens an input file for reading: a file descriptor, or a negative
 * TESSEL_E* code with diag filled. Only regular files (symlinks to them
 * included) are read: a FIFO or device would block or never end, so it is
 * refused at once instead (TESSEL_EINVAL). */
int tessel_input_open(const char *path, tessel_diag *diag);

/* Greatest common divisor; tessel_gcd(0, b) = b (a fold starts from 0). */
uint64_t tessel_gcd(uint64_t a, uint64_t b);

/* ------------------------------------------------------------------ */
/* Reads exactly n bytes from fd into dst (retrying short reads and EINTR).
 * TESSEL_ECORRUPT when the file ends first, TESSEL_EIO on a read error. */
int tessel_read_full(int fd, void *dst, uint64_t n);

/* ------------------------------------------------------------------ */
/* Writes s as one CSV field (RFC 4180): quoted, with quotes doubled, when
 * it holds a comma, a quote, CR or LF. */
void tessel_csv_field(FILE *f, const char *s);

/* ------------------------------------------------------------------ */
/* Sorts keys[0..n) ascending (LSD radix, as many 8-bit passes as max_key
 * needs). Every key must be <= max_key; scratch holds n words. */
void tessel_sort_u64(uint64_t *keys, uint64_t *scratch, uint64_t n, uint64_t max_key);
/* The same without scratch memory (MSD, in place; somewhat slower). */
void tessel_sort_u64_inplace(uint64_t *keys, uint64_t n, uint64_t max_key);

/* ------------------------------------------------------------------ */
/* A fast 64-bit checksum (not cryptographic) for binary files. Feed data
 * in any split; the result depends only on the byte sequence. */
typedef struct tessel_checksum {
    uint64_t lane[4];
    uint64_t total;
    unsigned char pending[32];
    unsigned npending;
} tessel_checksum;

void tessel_checksum_init(tessel_checksum *c);
void tessel_checksum_update(tessel_checksum *c, const void *data, size_t n);
uint64_t tessel_checksum_final(const tessel_checksum *c);

#ifdef __cplusplus
}
#endif
#endif

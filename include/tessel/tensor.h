/* tessel — sparse tensors in memory, file readers/writers, binary cache and
 * synthetic generators.  Module `tensor`: depends on `base` only. */
#ifndef TESSEL_TENSOR_H
#define TESSEL_TENSOR_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "tessel/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TESSEL_MAX_ORDER 8u
/* Largest extent of one mode: coordinates are stored as uint32_t. */
#define TESSEL_MAX_DIM UINT32_MAX

/* A sparse tensor in "compressed first mode" layout: for a matrix this is
 * exactly CSR.  Entries are sorted lexicographically by coordinate and
 * unique.  The entries of slice r of mode 0 are [ptr[r], ptr[r+1]); their
 * coordinates in mode m (1 <= m < order) are idx[m][k] (0-based).
 * idx[0] is always NULL.  values is NULL for pattern tensors. */
typedef struct tessel_tensor {
    const tessel_allocator *alloc;
    unsigned order;
    uint64_t dims[TESSEL_MAX_ORDER];
    uint64_t nnz;
    uint64_t *ptr;
    uint32_t *idx[TESSEL_MAX_ORDER];
    double *values;
    char field[16];    /* "real", "integer", "pattern", "complex" */
    char symmetry[16]; /* as read ("general", "symmetric", ...); the entries are expanded */
    /* Non-NULL: a read-only mapping of `mapping_bytes` bytes of a .tsl file
     * (a pattern-only load, docs/data.md "Mapped pattern-only loads") that
     * ptr and idx point into. Those arrays are borrowed from the file, not
     * allocated: they must not be written, tessel_tensor_free unmaps them
     * instead of returning them to alloc, and tessel_tensor_clone copies
     * them into owned memory. Every other tensor has NULL here. */
    void *mapping;
    uint64_t mapping_bytes;
} tessel_tensor;

/* Frees the arrays t owns and unmaps its mapping, if any; nulls *t. */
void tessel_tensor_free(tessel_tensor **t);

/* Bytes held by t's arrays (ptr + idx + values). */
uint64_t tessel_tensor_bytes(const tessel_tensor *t);

/* Position of the first entry of row `row` of a matrix (order 2; columns
 * sorted within a row) whose column is >= col; ptr[row + 1] when none is. */
uint64_t tessel_tensor_row_lower_bound(const tessel_tensor *t, uint64_t row, uint64_t col);

/* The pattern of matrix t (order 2) transposed, by a counting sort: *ptr
 * (t->dims[1] + 1 entries) and *idx (t->nnz, at least one) from `a`, each
 * row's columns ascending. TESSEL_EINVAL for another order, TESSEL_ENOMEM
 * with nothing left allocated. */
int tessel_tensor_transpose_pattern(const tessel_tensor *t, const tessel_allocator *a,
                                    uint64_t **ptr, uint32_t **idx);

/* A copy of t in memory from `a` (never mapped, even when t is); with
 * `pattern_only`, values are dropped. */
int tessel_tensor_clone(const tessel_tensor *t, int pattern_only, const tessel_allocator *a,
                        tessel_tensor **out, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* Building a tensor from unsorted coordinates (readers and generators).
 * Entries may come in any order; finish() sorts them, sums duplicates and
 * (optionally) drops explicit zeros. */
typedef struct tessel_coo_builder tessel_coo_builder;

/* dims may grow with tessel_coo_builder_grow_dims (for .tns files, whose
 * extents come from the largest coordinates). has_values = 0 for pattern. */
int tessel_coo_builder_create(unsigned order, const uint64_t *dims, int has_values,
                              const tessel_allocator *a, tessel_coo_builder **out,
                              tessel_diag *diag);
void tessel_coo_builder_free(tessel_coo_builder **b);
/* Room for `count` more entries (an upper bound for growth, not a limit). */
int tessel_coo_builder_reserve(tessel_coo_builder *b, uint64_t count);
/* coords are 0-based, one per mode, each < dims[m] (checked). */
int tessel_coo_builder_add(tessel_coo_builder *b, const uint32_t *coords, double value);
uint64_t tessel_coo_builder_count(const tessel_coo_builder *b);
void tessel_coo_builder_set_dims(tessel_coo_builder *b, const uint64_t *dims);

enum {
    TESSEL_BUILD_DROP_ZEROS = 1u << 0 /* remove entries whose (summed) value is 0 */
};
/* Consumes the entries; the builder may be freed afterwards. */
int tessel_coo_builder_finish(tessel_coo_builder *b, unsigned flags, tessel_tensor **out,
                              tessel_diag *diag);

/* A tensor from coordinate arrays in memory (a SciPy matrix's row, col and
 * data; python/tessel): coords[m][k] is entry k's 0-based coordinate in
 * mode m, values NULL for a pattern tensor. Entries in any order;
 * duplicates are summed and flags are tessel_coo_builder_finish's. A
 * coordinate outside 0..dims[m]-1 is TESSEL_ERANGE naming the entry. */
int tessel_tensor_from_coo(unsigned order, const uint64_t *dims, uint64_t nnz,
                           const int64_t *const *coords, const double *values, unsigned flags,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* Reading files. */
enum tessel_complex_policy {
    TESSEL_COMPLEX_MAGNITUDE = 0, /* keep |re + i im| as the value (default) */
    TESSEL_COMPLEX_REJECT = 1     /* complex files are an error */
};

enum tessel_cache_policy {
    TESSEL_CACHE_OFF = 0,     /* never look at or write a cache */
    TESSEL_CACHE_USE = 1,     /* use SOURCE.tsl next to the source when fresh; else rebuild it */
    TESSEL_CACHE_REBUILD = 2  /* ignore any existing cache and rewrite it */
};

typedef struct tessel_load_options {
    int drop_zeros;     /* drop explicit zeros (after summing duplicates) */
    int complex_policy; /* enum tessel_complex_policy */
    int cache_policy;   /* enum tessel_cache_policy */
    /* Where caches go: NULL puts SOURCE.tsl next to the source; a directory
     * holds NAME-HASH.tsl, HASH from the source's absolute path (for
     * read-only data directories). */
    const char *cache_dir;
    /* Uncompressed .tns files and Matrix Market files that are not
     * complex: 0 parses on every online core, N > 0 on N threads, -1 with
     * the single-pass reader that gzip and complex input use. The tensor is
     * the same bit for bit (docs/data.md "Parsing"). */
    int parse_threads;
    /* Nonzero: the tensor comes without values (values NULL, field as
     * read), for callers that read only the pattern (tessel stats): a
     * .tsl is mapped read-only, its ptr and idx used in place (see
     * tessel_tensor.mapping; read when the file cannot be mapped), its
     * values checksummed and never held; a text source's values are
     * dropped after parsing (and after its cache, which keeps them, is
     * written). */
    int pattern_only;
} tessel_load_options;

/* Zero-initialised options are the defaults. */
void tessel_load_options_init(tessel_load_options *o);

enum tessel_file_kind {
    TESSEL_FILE_UNKNOWN = 0,
    TESSEL_FILE_MTX,  /* Matrix Market, optionally gzipped */
    TESSEL_FILE_TNS,  /* FROSTT .tns, optionally gzipped */
    TESSEL_FILE_CACHE /* tessel binary cache .tsl */
};
/* By extension (.mtx, .mtx.gz, .tns, .tns.gz, .tsl), else by content. */
int tessel_file_kind_of(const char *path);

/* What tessel_tensor_load did (for progress lines and tests). */
enum tessel_load_origin {
    TESSEL_LOADED_SOURCE = 0,      /* parsed the text file */
    TESSEL_LOADED_CACHE = 1,       /* read a fresh cache */
    TESSEL_LOADED_CACHE_REBUILT = 2 /* parsed the source and (re)wrote the cache */
};

/* The cache file tessel_tensor_load uses for source `path` under `opt`,
 * written into buf (size n). TESSEL_ERANGE if it does not fit. */
int tessel_cache_path_for(const char *path, const tessel_load_options *opt, char *buf, size_t n);

/* Any supported file. With cache_policy != OFF, a cache PATH.tsl next to a
 * text source is used when it matches the source (size, mtime, options,
 * checksum) and rebuilt otherwise; a cache that cannot be written is not an
 * error. `origin` may be NULL. */
int tessel_tensor_load(const char *path, const tessel_load_options *opt,
                       const tessel_allocator *a, tessel_tensor **out, int *origin,
                       tessel_diag *diag);

/* Row-blocked reading of a Matrix Market file (plain or gzipped), for
 * statistics in bounded memory (docs/data.md, "Streamed and sharded
 * statistics"). tessel_mtx_read_rows: the tensor of the file (its dims)
 * holding only the entries whose row, after symmetric expansion, is in
 * [row_begin, row_end); those rows are exactly the rows of
 * tessel_tensor_read_mtx's tensor (duplicates summed, zeros dropped the
 * same way). `reserve` (0: none) sizes the staging arrays. Always the
 * single-pass reader, never a cache.
 * tessel_mtx_row_counts: one pass; dims[2] and counts[dims[0]] (allocated
 * through a), the entries each row receives (mirrors included, each
 * duplicate counted): an upper bound of the row's stored entries. */
int tessel_mtx_read_rows(const char *path, const tessel_load_options *opt, uint64_t row_begin,
                         uint64_t row_end, uint64_t reserve, const tessel_allocator *a,
                         tessel_tensor **out, tessel_diag *diag);
int tessel_mtx_row_counts(const char *path, const tessel_load_options *opt,
                          const tessel_allocator *a, uint64_t *dims, uint64_t **counts,
                          tessel_diag *diag);
/* The same for a FROSTT .tns file of any order (plain or gzipped), rows
 * being the slices of its first mode: tessel_tns_read_rows gives a tensor
 * of the file's order; tessel_tns_row_counts sets *order and dims[0..order)
 * (dims holds TESSEL_MAX_ORDER). Both read every line, so both give the
 * whole file's extents (its largest coordinates). */
int tessel_tns_read_rows(const char *path, const tessel_load_options *opt, uint64_t row_begin,
                         uint64_t row_end, uint64_t reserve, const tessel_allocator *a,
                         tessel_tensor **out, tessel_diag *diag);
int tessel_tns_row_counts(const char *path, const tessel_load_options *opt,
                          const tessel_allocator *a, unsigned *order, uint64_t *dims,
                          uint64_t **counts, tessel_diag *diag);
/* Every entry of a Matrix Market or 2-mode .tns file, in the order the
 * single-pass reader hands them to its coordinate builder (a symmetric
 * entry, then its mirror), passed to emit with 0-based coordinates; a
 * nonzero return from emit stops the reading and is returned (emit fills
 * diag through its ctx). info: the extents, field and symmetry names the
 * readers give the tensor, and whether it holds values. */
typedef int (*tessel_entry_sink)(void *ctx, const uint32_t *coords, double value);
typedef struct tessel_entry_info {
    unsigned order;
    uint64_t dims[TESSEL_MAX_ORDER];
    int has_values;
    char field[16], symmetry[16];
} tessel_entry_info;
int tessel_mtx_for_each_entry(const char *path, const tessel_load_options *opt,
                              const tessel_allocator *a, tessel_entry_sink emit, void *ctx,
                              tessel_entry_info *info, tessel_diag *diag);
int tessel_tns_for_each_entry(const char *path, const tessel_load_options *opt,
                              const tessel_allocator *a, tessel_entry_sink emit, void *ctx,
                              tessel_entry_info *info, tessel_diag *diag);
/* The same for a 2-mode .tsl cache (src/tensor/cache_rows.c; another order
 * is refused with TESSEL_EINVAL). tessel_cache_row_counts reads the payload
 * once and checks everything tessel_cache_read checks (checksums, layout)
 * before it returns the row lengths; tessel_cache_read_rows reads only the
 * rows' slice of the arrays. The cache's source identity is not compared. */
int tessel_cache_row_counts(const char *path, const tessel_allocator *a, uint64_t *dims,
                            uint64_t **counts, tessel_diag *diag);
int tessel_cache_read_rows(const char *path, uint64_t row_begin, uint64_t row_end,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag);

int tessel_tensor_read_mtx(const char *path, const tessel_load_options *opt,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag);
int tessel_tensor_read_tns(const char *path, const tessel_load_options *opt,
                           const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag);

/* Parse from memory (fuzz targets and tests); `name` is used in messages. */
int tessel_tensor_parse_mtx(const char *name, const void *data, size_t size,
                            const tessel_load_options *opt, const tessel_allocator *a,
                            tessel_tensor **out, tessel_diag *diag);
int tessel_tensor_parse_tns(const char *name, const void *data, size_t size,
                            const tessel_load_options *opt, const tessel_allocator *a,
                            tessel_tensor **out, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* Writing. Both write to a temporary file and rename. */
/* Matrix Market coordinate general (order 2 only); `real` with values,
 * `pattern` without. */
int tessel_tensor_write_mtx(const tessel_tensor *t, const char *path, tessel_diag *diag);
/* FROSTT .tns (any order); value 1 for pattern tensors. */
int tessel_tensor_write_tns(const tessel_tensor *t, const char *path, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* Binary cache (.tsl): header, version, source identity, checksum.
 * Loads at memory speed; a corrupt or mismatched file is reported, never
 * trusted. */
typedef struct tessel_cache_source {
    uint64_t size;     /* source file size in bytes (0 if none) */
    int64_t mtime_ns;  /* source modification time (0 if none) */
    uint32_t options;  /* load options the tensor was built with (bit 0: drop_zeros, bit 1: complex reject) */
} tessel_cache_source;

/* Fills src from the file at path and opt. */
int tessel_cache_source_of(const char *path, const tessel_load_options *opt,
                           tessel_cache_source *src, tessel_diag *diag);

int tessel_cache_write(const tessel_tensor *t, const tessel_cache_source *src, const char *path,
                       tessel_diag *diag);
/* `expect` may be NULL (accept any source); otherwise a mismatch returns
 * TESSEL_ESTALE. A bad magic/version/checksum/structure gives TESSEL_ECORRUPT. */
int tessel_cache_read(const char *path, const tessel_cache_source *expect,
                      const tessel_allocator *a, tessel_tensor **out, tessel_diag *diag);
/* From memory (fuzz target); no source check. */
int tessel_cache_parse(const char *name, const void *data, size_t size, const tessel_allocator *a,
                       tessel_tensor **out, tessel_diag *diag);

/* ------------------------------------------------------------------ */
/* A GSL MT19937 generator whose memory comes from the tessel allocator
 * (gsl_rng_alloc would bypass it and abort on a failed malloc). NULL when
 * out of memory. Shared by the generators and the statistics sampler. */
gsl_rng *tessel_rng_create(const tessel_allocator *a, uint64_t seed);
void tessel_rng_free(const tessel_allocator *a, gsl_rng **r);

/* Synthetic generators (GSL RNG, seeded: same seed, same tensor). */
typedef enum tessel_gen_kind {
    TESSEL_GEN_UNIFORM = 0, /* exactly nnz distinct positions, uniform */
    TESSEL_GEN_BANDED,      /* positions with |i - j| <= bandwidth, each kept with `density` */
    TESSEL_GEN_RMAT,        /* R-MAT / power law: nnz edge draws with (a, b, c, d), duplicates merged */
    TESSEL_GEN_BLOCKDIAG,   /* diagonal blocks of block x block, each position kept with `density` */
    TESSEL_GEN_NM,          /* N:M structured: every aligned group of m in a row holds exactly n */
    TESSEL_GEN_CLUSTERED,   /* overlapping cliques with power-law sizes + a skewed tail, symmetric */
    TESSEL_GEN_FIXED        /* fixed-structured: every row segment holds floor or ceil of width x density */
} tessel_gen_kind;

typedef struct tessel_gen_params {
    tessel_gen_kind kind;
    uint64_t rows, cols;
    uint64_t nnz;       /* uniform: exact count; rmat: number of edge draws */
    double density;     /* banded, blockdiag: keep probability; fixed-structured: share; in (0, 1] */
    uint64_t bandwidth; /* banded */
    uint64_t block;     /* blockdiag: block edge */
    double a, b, c, d;  /* rmat quadrant probabilities (sum 1); defaults 0.57/0.19/0.19/0.05 */
    unsigned n, m;      /* nm: n of every m */
    uint64_t seed;
    int values;         /* 1: random values in (0, 1]; 0: pattern */
    /* clustered (square, symmetric, no diagonal; co-authorship-like):
     * `cliques` cliques whose sizes s in [2, clique_max] follow
     * P(s) ~ s^-alpha, members drawn by popularity (rank + 1)^-skew over a
     * seeded permutation of the vertices (hubs spread over the ids), plus
     * `tail` extra edges with both ends drawn by popularity. */
    uint64_t cliques, clique_max, tail; /* defaults 0, 32, 0 */
    double alpha, skew;                 /* defaults 2.5, 0.8 */
} tessel_gen_params;

/* Defaults for kind (sizes left 0). */
void tessel_gen_params_init(tessel_gen_params *p, tessel_gen_kind kind);
/* "uniform", "banded", "rmat" (also "powerlaw"), "blockdiag", "nm", "clustered",
 * "fixed-structured"; -1 if unknown. */
int tessel_gen_kind_from_name(const char *name);
const char *tessel_gen_kind_name(tessel_gen_kind kind);
int tessel_generate(const tessel_gen_params *p, const tessel_allocator *a, tessel_tensor **out,
                    tessel_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

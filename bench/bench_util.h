/* Shared by the benchmarks: a monotonic clock, best-of-N timing, a
 * counting allocator, a small PRNG, synthetic tensors, the shared data's
 * MANIFEST.tsv and loading a seed spec on one of its matrices. Benchmarks print
 * figures and ratios against their targets; they never pass or fail. */
#ifndef TESSEL_BENCH_UTIL_H
#define TESSEL_BENCH_UTIL_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "tessel/spec.h"
#include "tessel/model.h"
#include "tessel/tensor.h"

/* Seconds on the monotonic clock. */
double bench_now(void);

/* Calls fn(ctx) `runs` times and returns the fastest run in seconds; a
 * non-zero return from fn stops and returns a negative time. */
typedef int (*bench_fn)(void *ctx);
double bench_best_of(int runs, bench_fn fn, void *ctx);

/* Counting allocator: live and peak bytes through a size header. */
typedef struct bench_alloc {
    tessel_allocator allocator;
    size_t live, peak;
    uint64_t calls;
} bench_alloc;

void bench_alloc_init(bench_alloc *ba);
/* Forgets the peak so far (the next peak is measured from `live`). */
void bench_alloc_reset_peak(bench_alloc *ba);

/* splitmix64: tiny, fast, good enough to place synthetic nonzeros. */
typedef struct bench_rng {
    uint64_t state;
} bench_rng;

uint64_t bench_rng_next(bench_rng *r);
/* Uniform in [0, n), n >= 1 (modulo bias < n / 2^64: irrelevant here). */
uint64_t bench_rng_below(bench_rng *r, uint64_t n);

typedef enum bench_synth_kind { BENCH_SYNTH_UNIFORM, BENCH_SYNTH_RMAT } bench_synth_kind;

/* An n x n matrix with `draws` entries placed uniformly or by R-MAT
 * (a, b, c, d = 0.57, 0.19, 0.19, 0.05), values in (0, 1], built through
 * tessel_coo_builder (duplicates merge, so nnz <= draws). */
int bench_synthetic(bench_synth_kind kind, uint64_t n, uint64_t draws, uint64_t seed,
                    const tessel_allocator *a, tessel_tensor **out);

/* Bytes of plain CSR with 8-byte row pointers, 4-byte columns and 8-byte
 * values: the reference size for memory ratios. */
uint64_t bench_csr_bytes(const tessel_tensor *t);

/* Z[i,j] = A[i,k] * B[k,j] on DRAM -> LLB (csr, 64-bit values, 32-bit
 * coordinates, default skipping, no capacity limit), loop order like
 * "IKJ", LLB tile edges tile[] = { i, j, k }. */
void bench_spmspm_spec(tessel_spec *s, const char *order, const uint64_t *tile);

/* Last path component (for table rows). */
const char *bench_basename(const char *path);

/* The matrices of a MANIFEST.tsv (columns name, file, kind, rows, cols,
 * ...), one `matrix` row at a time; file is relative to the manifest. */
typedef struct bench_manifest {
    FILE *f;
    char dir[PATH_MAX];
} bench_manifest;

typedef struct bench_manifest_row {
    char name[128];
    char file[PATH_MAX];
    int square; /* rows == cols */
} bench_manifest_row;

/* 0, or -1 (printed) when the manifest cannot be opened. */
int bench_manifest_open(bench_manifest *m, const char *path);
/* 1 with the next matrix row in *out, 0 at the end. */
int bench_manifest_next(bench_manifest *m, bench_manifest_row *out);
void bench_manifest_close(bench_manifest *m);

/* "workload.data.NAME='<absolute path of matrix>'" into buf; 0, or -1
 * (printed) when the matrix does not exist. */
int bench_bind_matrix(char *buf, size_t size, const char *name, const char *matrix);
/* The spec at path with the overrides; NULL with "WHAT: message" printed. */
tessel_spec *bench_spec_load(const char *path, const char *const *sets, size_t nsets,
                             const char *what);
/* The spec's data, without caches; NULL with the message printed. */
tessel_workload_data *bench_data_load(const tessel_spec *spec, const char *what);

#endif

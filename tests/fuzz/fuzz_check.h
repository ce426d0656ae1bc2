/* Shared by the fuzz targets: a bounded, counting allocator and the checks
 * that turn a silently wrong result into an abort() the fuzzer can see.
 *
 * A parser that returns garbage without crashing is invisible to libFuzzer
 * and to the sanitizers, so every successful parse is checked against the
 * layout promised in tensor.h, and every grid against an independent
 * brute-force count. Each violated check prints what broke and aborts. */
#ifndef TESSEL_FUZZ_CHECK_H
#define TESSEL_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "tessel/base.h"
#include "tessel/stats.h"
#include "tessel/tensor.h"

/* Live bytes a single input may hold. A 20-byte size line may legally ask
 * for a 1 GiB row-pointer array; capping it keeps the fuzzer at thousands
 * of executions per second and drives the out-of-memory paths instead. */
#define FUZZ_ALLOC_LIMIT ((size_t)64 << 20)

typedef struct fuzz_alloc {
    tessel_allocator allocator;
    size_t limit; /* an allocation that would exceed it fails */
    size_t live;  /* bytes currently allocated */
    size_t peak;
    long blocks;  /* blocks currently allocated */
} fuzz_alloc;

void fuzz_alloc_init(fuzz_alloc *fa, size_t limit);
/* Aborts if anything allocated through fa is still live (a leak on some
 * path, including error paths that LeakSanitizer does not see in the
 * plain replay build). */
void fuzz_alloc_check_released(const fuzz_alloc *fa, const char *what);

/* tessel_checksum of n bytes. */
uint64_t fuzz_checksum(const void *p, size_t n);

/* For checksummed formats: a malloc'd copy of data with its payload
 * checksum (over the bytes after the header) and its header checksum (over
 * the bytes before it) recomputed, and, when off_payload_bytes is not
 * SIZE_MAX, its payload size field set; NULL when shorter than a header.
 * Lets the fuzzer reach the structure checks behind the checksums. */
uint8_t *fuzz_repaired_copy(const uint8_t *data, size_t size, size_t header,
                            size_t off_payload_bytes, size_t off_payload_sum,
                            size_t off_header_sum);

/* Aborts with a message unless cond holds. */
#define FUZZ_REQUIRE(cond, what)                                                                \
    do {                                                                                        \
        if (!(cond))                                                                            \
            fuzz_fail(__FILE__, __LINE__, #cond, (what));                                       \
    } while (0)

void fuzz_fail(const char *file, int line, const char *cond, const char *what)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* A failed call: a TESSEL_E* code, no output object, a filled diag. */
void fuzz_check_failure(int rc, const tessel_tensor *out, const tessel_diag *diag);

/* The tensor.h layout: ptr spans the entries, coordinates in range, each
 * slice strictly increasing, values present exactly when not a pattern. */
void fuzz_check_tensor(const tessel_tensor *t);

/* Matrix Market symmetry expansion: every (i,j) has its mirror (j,i) with
 * the same value (negated for skew-symmetric, which has no diagonal). */
void fuzz_check_mtx_symmetry(const tessel_tensor *t);

/* .tns extents are the largest coordinates, so every mode reaches its
 * last index (valid only without drop_zeros). */
void fuzz_check_tns_extents(const tessel_tensor *t);

/* `dropped` is `kept` without the entries whose value is exactly zero. */
void fuzz_check_dropped(const tessel_tensor *kept, const tessel_tensor *dropped);

/* Tile grids of t: a 3-per-mode grid checked entry by entry against a
 * brute-force count, a power-of-two grid (the shift path), a 6-per-mode
 * grid built directly and derived from the 3 grid (must be identical), and
 * the occupancy summary of the 3 grid. */
void fuzz_check_stats(const tessel_tensor *t, const tessel_allocator *a);

#endif

/* Fuzz target: binary cache from memory (tessel_cache_parse).
 *
 * A cache carries two 64-bit checksums, which random mutation practically
 * never gets right: the raw input alone would only ever exercise the
 * header checks. So each input is parsed twice: as given, and with both
 * checksums recomputed over the mutated bytes, which lets the fuzzer reach
 * the structure checks behind them (pointers, coordinates, order). The
 * offsets are those of the layout documented in src/tensor/cache.c. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

#define CACHE_HEADER_BYTES 256u
#define OFF_PAYLOAD_BYTES 152u
#define OFF_PAYLOAD_SUM 160u
#define OFF_HEADER_SUM 248u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* tensor.h: a bad checksum gives TESSEL_ECORRUPT. So whatever the parser
 * accepts must carry both checksums right (and the payload size it
 * claims), whichever code path it took to accept it. */
static void check_accepted_sums(const uint8_t *data, size_t size)
{
    FUZZ_REQUIRE(size >= CACHE_HEADER_BYTES, "an accepted cache holds a whole header");
    uint64_t stored_header, stored_payload, stored_bytes;
    memcpy(&stored_header, data + OFF_HEADER_SUM, sizeof(stored_header));
    memcpy(&stored_payload, data + OFF_PAYLOAD_SUM, sizeof(stored_payload));
    memcpy(&stored_bytes, data + OFF_PAYLOAD_BYTES, sizeof(stored_bytes));
    FUZZ_REQUIRE(stored_header == fuzz_checksum(data, OFF_HEADER_SUM),
                 "an accepted cache has a correct header checksum");
    FUZZ_REQUIRE(stored_bytes == size - CACHE_HEADER_BYTES,
                 "an accepted cache is exactly as long as its header says");
    FUZZ_REQUIRE(stored_payload ==
                     fuzz_checksum(data + CACHE_HEADER_BYTES, size - CACHE_HEADER_BYTES),
                 "an accepted cache has a correct payload checksum");
}

static void parse_checked(const uint8_t *data, size_t size, const char *what)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_tensor *t = NULL;
    tessel_diag diag;
    tessel_diag_clear(&diag);
    int rc = tessel_cache_parse("fuzz.tsl", data, size, &fa.allocator, &t, &diag);
    if (rc) {
        fuzz_check_failure(rc, t, &diag);
    } else {
        check_accepted_sums(data, size);
        fuzz_check_tensor(t);
        fuzz_check_stats(t, &fa.allocator);
        tessel_tensor_free(&t);
    }
    fuzz_alloc_check_released(&fa, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_checked(data, size, "parsing a cache input");
    uint8_t *copy =
        fuzz_repaired_copy(data, size, CACHE_HEADER_BYTES, OFF_PAYLOAD_BYTES,
                           OFF_PAYLOAD_SUM, OFF_HEADER_SUM);
    if (copy) {
        parse_checked(copy, size, "parsing a cache input with repaired checksums");
        free(copy);
    }
    return 0;
}

/* Fuzz target: saved stat-estimator statistics from memory
 * (tessel_stat_data_parse).
 *
 * As for the other checksummed formats, each input is parsed twice: as
 * given, and with both checksums recomputed over the mutated bytes, so
 * the fuzzer reaches the structure checks behind them. An accepted file
 * is then evaluated on a one-level SpMSpM spec when its einsum is that
 * one: anything the loader lets through must evaluate without a crash, an
 * out-of-bounds access or a leak (the sanitizers and the counting
 * allocator watch), and give non-negative, finite-size counts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "../unit/test_specs.h"
#include "tessel/model.h"

#define TSD_HEADER 64u
#define OFF_PAYLOAD_SUM 32u
#define OFF_HEADER_SUM 56u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_checked(const uint8_t *data, size_t size, const char *what)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_stat_data *s = NULL;
    tessel_diag diag;
    tessel_diag_clear(&diag);
    int rc = tessel_stat_data_parse("fuzz.tsd", data, size, &fa.allocator, &s, &diag);
    if (rc) {
        FUZZ_REQUIRE(s == NULL, "a failed parse returns nothing");
        fuzz_check_failure(rc, NULL, &diag);
    } else {
        tessel_spec spec; /* Z[i,j] = A[i,k] * B[k,j], DRAM -> LLB, 128 tiles, IJK */
        test_spec_spmspm(&spec, "IJK", 128, 128, 128, 1, 64, 32);
        tessel_result r;
        tessel_diag_clear(&diag);
        rc = tessel_model_stat_eval(&spec, s, &r, &diag);
        if (rc)
            fuzz_check_failure(rc, NULL, &diag);
        else
            FUZZ_REQUIRE(r.dram_bytes >= r.traffic[0][1].data_bytes,
                         "DRAM traffic includes A's data");
        tessel_stat_data_free(&s);
    }
    fuzz_alloc_check_released(&fa, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_checked(data, size, "parsing saved statistics");
    uint8_t *copy =
        fuzz_repaired_copy(data, size, TSD_HEADER, SIZE_MAX,
                           OFF_PAYLOAD_SUM, OFF_HEADER_SUM);
    if (copy) {
        parse_checked(copy, size, "parsing saved statistics with repaired checksums");
        free(copy);
    }
    return 0;
}

/* Fuzz target: resolved-spec YAML read back through libcyaml's schema
 * (tessel_spec_resolved_check, the round trip of `tessel spec`).
 *
 * Any input must end in 0 (it is a resolved spec that writes back to the
 * same bytes) or a negative code with a message, with every allocation
 * released and none above the fuzz limit. Aliases are refused by the
 * loader, so a small input cannot expand into a large tree. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_check.h"
#include "tessel/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_spec_resolved_check((const char *)data, size, &fa.allocator, &d);
    FUZZ_REQUIRE(rc <= 0, "codes are 0 or negative");
    if (rc < 0) {
        FUZZ_REQUIRE(d.code == rc, "the diagnostic carries the code");
        FUZZ_REQUIRE(d.message[0] != '\0', "a failure says why");
    }
    fuzz_alloc_check_released(&fa, "resolved spec");
    return 0;
}

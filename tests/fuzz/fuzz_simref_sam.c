/* Fuzz target: the SAM reader of `tessel validate --reference-format sam`
 * (tessel_simref_parse with TESSEL_SIMREF_SAM). The input is one or more
 * files separated by "\n--\n" lines; fuzz_simref.h says what is checked. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_simref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_simref_one(TESSEL_SIMREF_SAM, data, size);
    return 0;
}

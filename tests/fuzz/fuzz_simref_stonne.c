/* Fuzz target: the STONNE reader of `tessel validate --reference-format stonne`
 * (tessel_simref_parse with TESSEL_SIMREF_STONNE). The input is one or more
 * files separated by "\n--\n" lines; fuzz_simref.h says what is checked. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_simref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_simref_one(TESSEL_SIMREF_STONNE, data, size);
    return 0;
}

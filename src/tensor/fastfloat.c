/* The table of the Eisel-Lemire conversion inline in fastfloat.h: the
 * 128-bit normalized powers of five, computed by src/tensor/gen_pow5.py
 * into pow5_table.h (regenerate with `python3 src/tensor/gen_pow5.py >
 * src/tensor/pow5_table.h`). One definition here, so the files that read
 * values share one copy. */
#include "fastfloat.h"
#include "pow5_table.h"

_Static_assert(POW5_SMALLEST == FASTFLOAT_Q_MIN && POW5_LARGEST == FASTFLOAT_Q_MAX,
               "fastfloat.h's exponent range is pow5_table.h's");

const uint64_t (*const fastfloat_pow5)[2] = pow5_128;

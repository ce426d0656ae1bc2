/* Integer arithmetic shared by the modules. */
#include "tessel/base.h"

uint64_t tessel_gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

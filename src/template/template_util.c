/* Small helpers every template file uses: saturating counts, bytes of
 * packed items, rounding estimates to counts, a tensor's mode of an index,
 * a monotonic clock and the template_options error (template_internal.h). */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "template_internal.h"

uint64_t tpl_sat_add(uint64_t x, uint64_t y)
{
    return x > UINT64_MAX - y ? UINT64_MAX : x + y;
}

uint64_t tpl_sat_mul(uint64_t x, uint64_t y)
{
    return y && x > UINT64_MAX / y ? UINT64_MAX : x * y;
}

uint64_t tpl_bytes(uint64_t n, unsigned bits)
{
    if (bits && n > UINT64_MAX / bits)
        return UINT64_MAX;
    uint64_t b = n * bits;
    return b / 8 + (b % 8 != 0);
}

uint64_t tpl_round_count(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 18446744073709549568.0) /* the largest double below 2^64 */
        return UINT64_MAX;
    /* not llround: long long overflows from 2^63 on */
    double r = floor(x + 0.5);
    return r >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)r;
}

int tpl_mode_of(const tessel_spec_tensor *st, unsigned x)
{
    for (unsigned m = 0; m < st->rank; m++)
        if (st->index[m] == x)
            return (int)m;
    return -1;
}

double tpl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tpl_option_error(const tessel_spec *spec, const tessel_yaml_node *n, const char *key,
                     const char *what, tessel_diag *diag)
{
    char field[96];
    if (key)
        snprintf(field, sizeof(field), "template_options.%s", key);
    else
        snprintf(field, sizeof(field), "template_options");
    const tessel_spec_pos *p = &spec->template_.pos;
    return tessel_diag_set(diag, TESSEL_EINVAL, n ? n->file : p->file, n ? n->line : p->line,
                           n ? n->column : p->column, field, "template %s: %s",
                           spec->template_.name, what);
}

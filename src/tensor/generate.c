/* Synthetic generators -- being written (see issue 3). */
#include <string.h>

#include "tessel/tensor.h"

void tessel_gen_params_init(tessel_gen_params *p, tessel_gen_kind kind)
{
    memset(p, 0, sizeof(*p));
    p->kind = kind;
}

int tessel_gen_kind_from_name(const char *name)
{
    (void)name;
    return -1;
}

const char *tessel_gen_kind_name(tessel_gen_kind kind)
{
    (void)kind;
    return "?";
}

int tessel_generate(const tessel_gen_params *p, const tessel_allocator *a, tessel_tensor **out,
                    tessel_diag *diag)
{
    (void)p;
    (void)a;
    *out = NULL;
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, NULL, 0, 0, NULL, "not implemented yet");
}

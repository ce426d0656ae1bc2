/* The storage part of a level's mapping (docs/spec.md): `bypass: [B]` names
 * the tensors the level does not store, `keep: [A, Z]` the ones it does
 * (Sparseloop's keep/bypass constraint per storage level); a bypassed
 * tensor's child reads it from the nearest level above that keeps it. */
#include <stdio.h>
#include <string.h>

#include "validate_internal.h"

/* A bypassed tensor holds no share of the level, so a partition given for
 * it there would be capacity that no tensor uses: refused with both places. */
static void check_no_partition(vctx *v, const tessel_yaml_node *n, const char *field, unsigned l)
{
    const tessel_spec *s = v->s;
    const tessel_spec_level *L = &s->level[l];
    for (unsigned t = 0; t < s->workload.ntensors && t < TESSEL_SPEC_MAX_TENSORS; t++) {
        const tessel_spec_tensor_level *tl = &L->tensor[t];
        if (!((L->bypass >> t) & 1u) || !(tl->partition_bytes || tl->partition_fraction > 0))
            continue;
        spec_err(v, n, field,
                 "'%s' is bypassed at level '%s' but has a partition there "
                 "(architecture.levels.%s.tensors.%s.partition): a tensor the level does "
                 "not store takes none of its capacity",
                 s->workload.tensor[t].name, L->name, L->name, s->workload.tensor[t].name);
    }
}

void spec_read_bypass(vctx *v, const tessel_yaml_node *e, const char *field, unsigned l)
{
    tessel_spec *s = v->s;
    tessel_spec_level *L = &s->level[l];
    const tessel_yaml_node *b = tessel_yaml_get(e, "bypass");
    const tessel_yaml_node *k = tessel_yaml_get(e, "keep");
    uint32_t all = s->workload.ntensors >= 32 ? UINT32_MAX : (1u << s->workload.ntensors) - 1u;
    uint32_t bypass = 0, keep = all;
    char fb[160], fk[160];
    spec_join(fb, sizeof(fb), field, "bypass");
    spec_join(fk, sizeof(fk), field, "keep");
    if (b && spec_read_tensor_mask(v, b, fb, "bypass", -1u, &bypass))
        return;
    if (k && spec_read_tensor_mask(v, k, fk, "keep", -1u, &keep))
        return;
    if (bypass & keep & all && k) {
        for (unsigned t = 0; t < s->workload.ntensors; t++)
            if ((bypass & keep) >> t & 1u) {
                spec_err(v, b, fb, "'%s' is both in 'keep' and in 'bypass'",
                         s->workload.tensor[t].name);
                return;
            }
    }
    L->bypass = (bypass | (all & ~keep)) & all;
    if (L->bypass)
        L->bypass_pos = spec_pos_of(b ? b : k);
    check_no_partition(v, b ? b : k, b ? fb : fk, l);
}

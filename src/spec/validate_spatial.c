/* The spatial part of a level's mapping (docs/spec.md, docs/models/spatial.md):
 * `spatial: {i: 8, j: 16}` splits the level's tiles over its child's
 * instances, `distribution` says how the child tiles are dealt to them. */
#include <stdio.h>
#include <string.h>

#include "validate_internal.h"

static const char *const policy_names[] = { "blocked", "static-round-robin", "dynamic" };

const char *spec_spatial_policy_name(int policy)
{
    return policy >= 0 && policy < (int)N_OF(policy_names) ? policy_names[policy] : policy_names[0];
}

/* The child's instances: level l+1's, or the PEs below the innermost level. */
static unsigned child_instances(const tessel_spec *s, unsigned l, const char **what)
{
    if (l + 1 < s->nlevels) {
        *what = s->level[l + 1].name;
        return s->level[l + 1].instances ? s->level[l + 1].instances : 1;
    }
    *what = "compute (pes)";
    return s->compute.pes ? s->compute.pes : 1;
}

void spec_read_spatial(vctx *v, const tessel_yaml_node *e, const char *field, unsigned l)
{
    tessel_spec_level *L = &v->s->level[l];
    const tessel_yaml_node *n = tessel_yaml_get(e, "spatial");
    const tessel_yaml_node *d = tessel_yaml_get(e, "distribution");
    char f[128];
    if (d) {
        spec_join(f, sizeof(f), field, "distribution");
        if (!n)
            spec_err(v, d, f, "'distribution' needs a 'spatial' split at the same level");
        int k = spec_read_choice(v, d, f, "distribution", policy_names, N_OF(policy_names));
        if (k >= 0)
            L->spatial_policy = k;
    }
    if (!n || tessel_yaml_is_null(n))
        return;
    spec_join(f, sizeof(f), field, "spatial");
    L->spatial_pos = spec_pos_of(n);
    if (n->kind != TESSEL_YAML_MAPPING || n->count == 0) {
        spec_err(v, n, f, "'spatial' must be a mapping of indices to instance counts, "
                          "e.g. {i: 8, j: 16}");
        return;
    }
    uint64_t product = 1;
    int ok = 1;
    for (size_t i = 0; i < n->count; i++) {
        const tessel_yaml_node *k = n->keys[i];
        char fk[160];
        spec_join(fk, sizeof(fk), f, k->value);
        int idx = spec_find_index(v->s, k->value, k->length);
        if (idx < 0) {
            char list[256];
            spec_index_list(v->s, list, sizeof(list));
            spec_err(v, k, fk, "'%.60s' in 'spatial' is not an index of the einsum (indices: %s)",
                     k->value, list);
            ok = 0;
            continue;
        }
        unsigned x = 0;
        if (spec_read_count(v, n->items[i], fk, k->value, UINT32_MAX, &x)) {
            ok = 0;
            continue;
        }
        L->spatial[idx] = x;
        product *= x;
        if (product > UINT32_MAX)
            product = (uint64_t)UINT32_MAX + 1;
    }
    const char *what = NULL;
    unsigned inst = child_instances(v->s, l, &what);
    /* The factors address product instances; the rest of the child's
     * instances stay idle, so the product must divide them (issue 22). */
    if (ok && (product > inst || inst % product != 0))
        spec_err(v, n, f,
                 "the spatial factors multiply to %llu, which must equal or divide the %u "
                 "instances of the child level %s",
                 (unsigned long long)product, inst, what);
}

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

const char *tessel_spec_distribution_name(int policy)
{
    return spec_spatial_policy_name(policy);
}

int tessel_spec_distribution_of(const char *name)
{
    for (size_t i = 0; name && i < N_OF(policy_names); i++)
        if (strcmp(name, policy_names[i]) == 0)
            return (int)i;
    return -1;
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

/* The factors of `spatial` into L->spatial: a mapping {i: 8, j: 16} or
 * the tile's spelling "i:8,j:16" (so that a sweep axis or the mapper's
 * override names a split as it names a tile). 0 when every factor read. */
static int read_factors(vctx *v, const tessel_yaml_node *n, const char *f, tessel_spec_level *L,
                        uint64_t *product)
{
    uint64_t x[TESSEL_SPEC_MAX_INDICES] = { 0 };
    int ok = 1;
    if (spec_is_string(n)) {
        unsigned before = v->c->nerrors;
        spec_read_index_counts(v, n, f, "spatial", x);
        ok = v->c->nerrors == before;
    } else {
        for (size_t i = 0; i < n->count; i++) {
            const tessel_yaml_node *k = n->keys[i];
            char fk[160];
            spec_join(fk, sizeof(fk), f, k->value);
            int idx = spec_find_index(v->s, k->value, k->length);
            if (idx < 0) {
                char list[256];
                spec_index_list(v->s, list, sizeof(list));
                spec_err(v, k, fk, "'%.60s' in 'spatial' is not an index of the einsum "
                                   "(indices: %s)", k->value, list);
                ok = 0;
                continue;
            }
            unsigned c = 0;
            if (spec_read_count(v, n->items[i], fk, k->value, UINT32_MAX, &c))
                ok = 0;
            else
                x[idx] = c;
        }
    }
    *product = 1;
    for (unsigned i = 0; i < TESSEL_SPEC_MAX_INDICES; i++) {
        if (!x[i])
            continue;
        if (x[i] > UINT32_MAX) {
            spec_err(v, n, f, "a spatial factor must be at most %u", UINT32_MAX);
            return 1;
        }
        L->spatial[i] = (unsigned)x[i];
        *product *= x[i];
        if (*product > UINT32_MAX)
            *product = (uint64_t)UINT32_MAX + 1;
    }
    return !ok;
}

void spec_read_spatial(vctx *v, const tessel_yaml_node *e, const char *field, unsigned l)
{
    tessel_spec_level *L = &v->s->level[l];
    const tessel_yaml_node *n = tessel_yaml_get(e, "spatial");
    const tessel_yaml_node *d = tessel_yaml_get(e, "distribution");
    char f[128];
    /* `spatial: none` (or null) states "no split": a sweep axis or the
     * mapper may then leave a distribution beside it, unused. */
    int none = n && (tessel_yaml_is_null(n) || (spec_is_string(n) && strcmp(n->value, "none") == 0));
    if (d && !tessel_yaml_is_null(d)) {
        spec_join(f, sizeof(f), field, "distribution");
        if (!n)
            spec_err(v, d, f, "'distribution' needs a 'spatial' split at the same level");
        int k = spec_read_choice(v, d, f, "distribution", policy_names, N_OF(policy_names));
        if (k >= 0 && !none)
            L->spatial_policy = k;
    }
    if (!n || none)
        return;
    spec_join(f, sizeof(f), field, "spatial");
    L->spatial_pos = spec_pos_of(n);
    if (!spec_is_string(n) && (n->kind != TESSEL_YAML_MAPPING || n->count == 0)) {
        spec_err(v, n, f, "'spatial' must map indices to instance counts, e.g. {i: 8, j: 16} "
                          "or \"i:8,j:16\", or be none");
        return;
    }
    uint64_t product = 1;
    int bad = read_factors(v, n, f, L, &product);
    const char *what = NULL;
    unsigned inst = child_instances(v->s, l, &what);
    /* The factors address product instances; the rest of the child's
     * instances stay idle, so the product must divide them (issue 22). */
    if (!bad && (product > inst || inst % product != 0))
        spec_err(v, n, f,
                 "the spatial factors multiply to %llu, which must equal or divide the %u "
                 "instances of the child level %s",
                 (unsigned long long)product, inst, what);
}

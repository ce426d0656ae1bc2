/* Pricing-only axes patched into cached specs (see sweep_internal.h): a
 * sweep over bandwidths, clocks and PE counts derives one spec per
 * combination of its other axes, not one per point. */
#include <string.h>

#include "sweep_internal.h"

#define SPEC_CACHE_SLOTS 256u

/* The kind of field `path` sets, and its level for a bandwidth. */
static sweep_patch_kind classify(const char *path, const tessel_spec *spec, unsigned *level)
{
    if (strcmp(path, "architecture.compute.clock") == 0)
        return SWEEP_PATCH_CLOCK;
    if (strcmp(path, "architecture.compute.pes") == 0)
        return SWEEP_PATCH_PES;
    if (strcmp(path, "architecture.compute.macs_per_pe") == 0)
        return SWEEP_PATCH_MACS;
    const char *name = path;
    if (strncmp(path, "architecture.levels.", 20) == 0)
        name = path + 20;
    const char *dot = strchr(name, '.');
    if (!dot || strcmp(dot, ".bandwidth") != 0)
        return SWEEP_PATCH_NONE;
    for (unsigned l = 0; l < spec->nlevels; l++)
        if (strlen(spec->level[l].name) == (size_t)(dot - name) &&
            strncmp(spec->level[l].name, name, (size_t)(dot - name)) == 0) {
            *level = l;
            return SWEEP_PATCH_BANDWIDTH;
        }
    return SWEEP_PATCH_NONE;
}

static double field_of(sweep_patch_kind kind, unsigned level, const tessel_spec *s)
{
    switch (kind) {
    case SWEEP_PATCH_BANDWIDTH: return s->level[level].bandwidth;
    case SWEEP_PATCH_CLOCK: return s->compute.clock_ghz;
    case SWEEP_PATCH_PES: return (double)s->compute.pes;
    default: return (double)s->compute.macs_per_pe;
    }
}

/* Every value of axis a read (and checked) by deriving the data entry's
 * spec with it alone; 0 when one fails (the axis is then derived per
 * point, where the error is reported in context). */
static int read_values(const tessel_sweep *s, size_t a, const tessel_spec *data_spec,
                       const tessel_allocator *alloc, sweep_patch *p)
{
    const sweep_axis *ax = &s->axis[a];
    p->value[a] = tessel_alloc_array(alloc, ax->nvalues, sizeof(double));
    if (!p->value[a])
        return 0;
    for (size_t v = 0; v < ax->nvalues; v++) {
        tessel_spec *one = NULL;
        const char *set = ax->sets[v];
        if (tessel_spec_derive(data_spec, &set, 1, alloc, &one, NULL))
            return 0;
        p->value[a][v] = field_of(p->kind[a], p->level[a], one);
        tessel_spec_free(&one);
    }
    return 1;
}

int sweep_patch_build(const tessel_sweep *s, const tessel_spec *data_spec,
                      const tessel_allocator *a, sweep_patch *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t ax = 0; ax < s->naxes; ax++) {
        out->kind[ax] = classify(s->axis[ax].path, data_spec, &out->level[ax]);
        if (out->kind[ax] && !read_values(s, ax, data_spec, a, out)) {
            tessel_dealloc(a, out->value[ax]);
            out->value[ax] = NULL;
            out->kind[ax] = SWEEP_PATCH_NONE;
        }
    }
    return TESSEL_OK;
}

void sweep_patch_free(const tessel_allocator *a, sweep_patch *p)
{
    for (size_t ax = 0; ax < TESSEL_SWEEP_MAX_AXES; ax++)
        tessel_dealloc(a, p->value[ax]);
    memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------------ */

struct sweep_spec_cache {
    const tessel_allocator *alloc;
    size_t count;
    sweep_cached *slot; /* SPEC_CACHE_SLOTS */
};

sweep_spec_cache *sweep_spec_cache_create(const tessel_allocator *a)
{
    sweep_spec_cache *c = tessel_alloc(a, sizeof(*c));
    if (!c)
        return NULL;
    c->alloc = a;
    c->count = 0;
    c->slot = tessel_alloc_array(a, SPEC_CACHE_SLOTS, sizeof(*c->slot));
    if (!c->slot) {
        tessel_dealloc(a, c);
        return NULL;
    }
    memset(c->slot, 0, SPEC_CACHE_SLOTS * sizeof(*c->slot));
    return c;
}

void sweep_spec_cache_free(sweep_spec_cache **c)
{
    if (!c || !*c)
        return;
    for (size_t i = 0; i < SPEC_CACHE_SLOTS; i++)
        tessel_spec_free(&(*c)->slot[i].spec);
    tessel_dealloc((*c)->alloc, (*c)->slot);
    tessel_dealloc((*c)->alloc, *c);
    *c = NULL;
}

static sweep_cached *cache_slot(sweep_spec_cache *c, const uint32_t *key)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < TESSEL_SWEEP_MAX_AXES; i++)
        h = (h ^ key[i]) * UINT64_C(1099511628211);
    size_t i = (size_t)(h % SPEC_CACHE_SLOTS);
    while (c->slot[i].spec && memcmp(c->slot[i].key, key, sizeof(c->slot[i].key)) != 0)
        i = (i + 1) % SPEC_CACHE_SLOTS;
    return &c->slot[i];
}

sweep_cached *sweep_spec_cache_find(sweep_spec_cache *c, const uint32_t *key)
{
    sweep_cached *e = cache_slot(c, key);
    return e->spec ? e : NULL;
}

sweep_cached *sweep_spec_cache_put(sweep_spec_cache *c, const uint32_t *key,
                                   tessel_spec **spec)
{
    if (4 * (c->count + 1) > 3 * SPEC_CACHE_SLOTS)
        return NULL;
    sweep_cached *e = cache_slot(c, key);
    memset(e, 0, sizeof(*e));
    memcpy(e->key, key, sizeof(e->key));
    e->spec = *spec;
    *spec = NULL;
    c->count++;
    return e;
}

void sweep_patch_apply(const sweep_patch *p, const uint32_t *idx, size_t naxes,
                       tessel_spec *spec)
{
    for (size_t a = 0; a < naxes; a++) {
        if (!p->kind[a] || idx[a] == SWEEP_NO_VALUE)
            continue;
        double v = p->value[a][idx[a]];
        switch (p->kind[a]) {
        case SWEEP_PATCH_BANDWIDTH: spec->level[p->level[a]].bandwidth = v; break;
        case SWEEP_PATCH_CLOCK: spec->compute.clock_ghz = v; break;
        case SWEEP_PATCH_PES: spec->compute.pes = (unsigned)v; break;
        default: spec->compute.macs_per_pe = (unsigned)v; break;
        }
    }
}

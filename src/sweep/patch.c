/* Axes patched into cached specs (see sweep_internal.h): a sweep over
 * bandwidths, clocks, PE counts, capacities and partitions derives one
 * spec per combination of its other axes, not one per point. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tessel/template.h"
#include "sweep_internal.h"

#define SPEC_CACHE_SLOTS 256u

/* The level whose name `name` starts with, followed by a dot: its index,
 * *rest the text after the dot; -1 when none. */
static int level_prefix(const tessel_spec *spec, const char *name, const char **rest)
{
    for (unsigned l = 0; l < spec->nlevels; l++) {
        size_t n = strlen(spec->level[l].name);
        if (strncmp(name, spec->level[l].name, n) == 0 && name[n] == '.') {
            *rest = name + n + 1;
            return (int)l;
        }
    }
    return -1;
}

/* "tensors.NAME.partition": the tensor's index; -1 when not that. */
static int partition_tensor(const tessel_spec *spec, const char *rest)
{
    if (strncmp(rest, "tensors.", 8) != 0)
        return -1;
    rest += 8;
    for (unsigned t = 0; t < spec->workload.ntensors && t < TESSEL_SPEC_MAX_TENSORS; t++) {
        size_t n = strlen(spec->workload.tensor[t].name);
        if (strncmp(rest, spec->workload.tensor[t].name, n) == 0 &&
            strcmp(rest + n, ".partition") == 0)
            return (int)t;
    }
    return -1;
}

/* The kind of field `path` sets, and its level (and tensor). Capacities
 * and partitions only without a template (whose expansion may read them). */
static sweep_patch_kind classify(const char *path, const tessel_spec *spec, unsigned *level,
                                 unsigned *tensor)
{
    if (strcmp(path, "architecture.compute.clock") == 0)
        return SWEEP_PATCH_CLOCK;
    if (strcmp(path, "architecture.compute.pes") == 0)
        return SWEEP_PATCH_PES;
    if (strcmp(path, "architecture.compute.macs_per_pe") == 0)
        return SWEEP_PATCH_MACS;
    const char *name = path, *rest = NULL;
    if (strncmp(path, "architecture.levels.", 20) == 0)
        name = path + 20;
    int l = level_prefix(spec, name, &rest);
    if (l < 0)
        return SWEEP_PATCH_NONE;
    *level = (unsigned)l;
    if (strcmp(rest, "bandwidth") == 0)
        return SWEEP_PATCH_BANDWIDTH;
    if (tessel_template_of(spec) != TESSEL_TEMPLATE_NONE)
        return SWEEP_PATCH_NONE;
    if (strcmp(rest, "capacity") == 0)
        return SWEEP_PATCH_CAPACITY;
    int t = partition_tensor(spec, rest);
    if (t < 0)
        return SWEEP_PATCH_NONE;
    *tensor = (unsigned)t;
    return SWEEP_PATCH_PARTITION;
}

static void field_of(const sweep_patch *p, size_t a, const tessel_spec *s, size_t v)
{
    const tessel_spec_level *L = &s->level[p->level[a]];
    switch (p->kind[a]) {
    case SWEEP_PATCH_BANDWIDTH: p->value[a][v] = L->bandwidth; break;
    case SWEEP_PATCH_CLOCK: p->value[a][v] = s->compute.clock_ghz; break;
    case SWEEP_PATCH_PES: p->value[a][v] = (double)s->compute.pes; break;
    case SWEEP_PATCH_MACS: p->value[a][v] = (double)s->compute.macs_per_pe; break;
    case SWEEP_PATCH_CAPACITY: p->bytes[a][v] = L->capacity; break;
    default:
        p->value[a][v] = L->tensor[p->tensor[a]].partition_fraction;
        p->bytes[a][v] = L->tensor[p->tensor[a]].partition_bytes;
        break;
    }
}

/* A partition value checked alone: the level's other tensors given one
 * byte each, so that the base spec's partitions cannot fail the sum. */
static int derive_partition(size_t a, const char *set,
                            const tessel_spec *data_spec, const tessel_allocator *alloc,
                            const sweep_patch *p, tessel_spec **one)
{
    const char *sets[1 + TESSEL_SPEC_MAX_TENSORS];
    char *owned[TESSEL_SPEC_MAX_TENSORS] = { NULL };
    size_t n = 0, nowned = 0;
    sets[n++] = set;
    const char *level = data_spec->level[p->level[a]].name;
    int rc = TESSEL_OK;
    for (unsigned t = 0; t < data_spec->workload.ntensors && t < TESSEL_SPEC_MAX_TENSORS; t++) {
        if (t == p->tensor[a])
            continue;
        char path[3 * TESSEL_SPEC_NAME_MAX + 64];
        snprintf(path, sizeof(path), "architecture.levels.%s.tensors.%s.partition", level,
                 data_spec->workload.tensor[t].name);
        if (!(owned[nowned] = sweep_make_set(alloc, path, "1B", 0))) {
            rc = TESSEL_ENOMEM;
            break;
        }
        sets[n++] = owned[nowned++];
    }
    if (!rc)
        rc = tessel_spec_derive(data_spec, sets, n, alloc, one, NULL);
    for (size_t i = 0; i < nowned; i++)
        tessel_dealloc(alloc, owned[i]);
    return rc;
}

/* Every value of axis a read (and checked) by deriving the data entry's
 * spec with it alone; 0 when one fails (the axis is then derived per
 * point, where the error is reported in context). */
static int read_values(const tessel_sweep *s, size_t a, const tessel_spec *data_spec,
                       const tessel_allocator *alloc, sweep_patch *p)
{
    const sweep_axis *ax = &s->axis[a];
    if (!(p->value[a] = tessel_alloc_array(alloc, ax->nvalues, sizeof(double))) ||
        !(p->bytes[a] = tessel_alloc_array(alloc, ax->nvalues, sizeof(uint64_t))))
        return 0;
    for (size_t v = 0; v < ax->nvalues; v++) {
        tessel_spec *one = NULL;
        const char *set = ax->sets[v];
        int rc = tessel_spec_derive(data_spec, &set, 1, alloc, &one, NULL);
        if (rc && rc != TESSEL_ENOMEM && p->kind[a] == SWEEP_PATCH_PARTITION)
            rc = derive_partition(a, set, data_spec, alloc, p, &one);
        if (rc)
            return 0;
        field_of(p, a, one, v);
        tessel_spec_free(&one);
    }
    return 1;
}

int sweep_patch_build(const tessel_sweep *s, const tessel_spec *data_spec, int buffers,
                      const tessel_allocator *a, sweep_patch *out)
{
    memset(out, 0, sizeof(*out));
    /* A spatial split's work per instance is priced at the PE rate
     * (tessel_spatial): with one, PEs and MACs per PE decide the estimate
     * and the split's validity, so their axes are derived per point. */
    int split = tessel_spatial_level(data_spec) >= 0;
    for (size_t ax = 0; ax < s->naxes; ax++) {
        const char *path = s->axis[ax].path;
        size_t n = strlen(path);
        split |= n >= 8 && strcmp(path + n - 8, ".spatial") == 0;
    }
    for (size_t ax = 0; ax < s->naxes; ax++) {
        out->kind[ax] = classify(s->axis[ax].path, data_spec, &out->level[ax], &out->tensor[ax]);
        if (split && (out->kind[ax] == SWEEP_PATCH_PES || out->kind[ax] == SWEEP_PATCH_MACS))
            out->kind[ax] = SWEEP_PATCH_NONE;
        if (!buffers && out->kind[ax] >= SWEEP_PATCH_CAPACITY)
            out->kind[ax] = SWEEP_PATCH_NONE;
        if (out->kind[ax] && !read_values(s, ax, data_spec, a, out)) {
            tessel_dealloc(a, out->value[ax]);
            tessel_dealloc(a, out->bytes[ax]);
            out->value[ax] = NULL;
            out->bytes[ax] = NULL;
            out->kind[ax] = SWEEP_PATCH_NONE;
        }
        if (out->kind[ax] == SWEEP_PATCH_CAPACITY || out->kind[ax] == SWEEP_PATCH_PARTITION)
            out->traffic = 1;
    }
    return TESSEL_OK;
}

void sweep_patch_free(const tessel_allocator *a, sweep_patch *p)
{
    for (size_t ax = 0; ax < TESSEL_SWEEP_MAX_AXES; ax++) {
        tessel_dealloc(a, p->value[ax]);
        tessel_dealloc(a, p->bytes[ax]);
    }
    memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------------ */
/* Derived specs by structural key: one store shared by the workers, and
 * per worker a cache of entries into it. */

static size_t key_slot(const uint32_t *key)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < TESSEL_SWEEP_MAX_AXES; i++)
        h = (h ^ key[i]) * UINT64_C(1099511628211);
    return (size_t)(h % SPEC_CACHE_SLOTS);
}

typedef struct store_slot {
    uint32_t key[TESSEL_SWEEP_MAX_AXES];
    tessel_spec *spec; /* NULL: empty */
} store_slot;

/* mu guards the slots: a spec is published under it and never written
 * again, so a worker reads a spec it found without the lock. */
struct sweep_spec_store {
    const tessel_allocator *alloc;
    pthread_mutex_t mu;
    size_t count;
    store_slot slot[SPEC_CACHE_SLOTS];
};

sweep_spec_store *sweep_spec_store_create(const tessel_allocator *a)
{
    sweep_spec_store *st = tessel_alloc(a, sizeof(*st));
    if (!st)
        return NULL;
    memset(st, 0, sizeof(*st));
    st->alloc = a;
    if (pthread_mutex_init(&st->mu, NULL)) {
        tessel_dealloc(a, st);
        return NULL;
    }
    return st;
}

void sweep_spec_store_free(sweep_spec_store **st)
{
    if (!st || !*st)
        return;
    for (size_t i = 0; i < SPEC_CACHE_SLOTS; i++)
        tessel_spec_free(&(*st)->slot[i].spec);
    pthread_mutex_destroy(&(*st)->mu);
    tessel_dealloc((*st)->alloc, *st);
    *st = NULL;
}

/* The slot of key (mu held): its own, or the empty one where it goes. */
static store_slot *store_slot_of(sweep_spec_store *st, const uint32_t *key)
{
    size_t i = key_slot(key);
    while (st->slot[i].spec &&
           memcmp(st->slot[i].key, key, sizeof(st->slot[i].key)) != 0)
        i = (i + 1) % SPEC_CACHE_SLOTS;
    return &st->slot[i];
}

const tessel_spec *sweep_spec_store_find(sweep_spec_store *st, const uint32_t *key)
{
    pthread_mutex_lock(&st->mu);
    const tessel_spec *spec = store_slot_of(st, key)->spec;
    pthread_mutex_unlock(&st->mu);
    return spec;
}

const tessel_spec *sweep_spec_store_put(sweep_spec_store *st, const uint32_t *key,
                                        tessel_spec **spec)
{
    pthread_mutex_lock(&st->mu);
    store_slot *e = store_slot_of(st, key);
    const tessel_spec *out = e->spec;
    if (out) { /* another worker published it first: the same spec */
        tessel_spec_free(spec);
    } else if (4 * (st->count + 1) <= 3 * SPEC_CACHE_SLOTS) {
        memcpy(e->key, key, sizeof(e->key));
        e->spec = *spec;
        *spec = NULL;
        out = e->spec;
        st->count++;
    }
    pthread_mutex_unlock(&st->mu);
    return out;
}

/* A worker's entries, each allocated when first used (an entry holds an
 * estimate and an energy: kilobytes). */
struct sweep_spec_cache {
    const tessel_allocator *alloc;
    size_t count;
    sweep_cached *slot[SPEC_CACHE_SLOTS];
};

sweep_spec_cache *sweep_spec_cache_create(const tessel_allocator *a)
{
    sweep_spec_cache *c = tessel_alloc(a, sizeof(*c));
    if (!c)
        return NULL;
    memset(c, 0, sizeof(*c));
    c->alloc = a;
    return c;
}

void sweep_spec_cache_free(sweep_spec_cache **c)
{
    if (!c || !*c)
        return;
    for (size_t i = 0; i < SPEC_CACHE_SLOTS; i++)
        tessel_dealloc((*c)->alloc, (*c)->slot[i]);
    tessel_dealloc((*c)->alloc, *c);
    *c = NULL;
}

static size_t cache_slot(const sweep_spec_cache *c, const uint32_t *key)
{
    size_t i = key_slot(key);
    while (c->slot[i] && memcmp(c->slot[i]->key, key, sizeof(c->slot[i]->key)) != 0)
        i = (i + 1) % SPEC_CACHE_SLOTS;
    return i;
}

sweep_cached *sweep_spec_cache_find(sweep_spec_cache *c, const uint32_t *key)
{
    return c->slot[cache_slot(c, key)];
}

sweep_cached *sweep_spec_cache_put(sweep_spec_cache *c, const uint32_t *key,
                                   const tessel_spec *spec)
{
    if (4 * (c->count + 1) > 3 * SPEC_CACHE_SLOTS)
        return NULL;
    size_t i = cache_slot(c, key);
    sweep_cached *e = tessel_alloc(c->alloc, sizeof(*e));
    if (!e)
        return NULL;
    /* the estimate and energy (19 KB) are copied in before they are read
     * (has_result, has_energy): zeroing them cost a 19 KB memset per entry */
    memcpy(e->key, key, sizeof(e->key));
    e->spec = spec;
    e->has_result = e->has_energy = 0;
    c->slot[i] = e;
    c->count++;
    return e;
}

void sweep_patch_apply(const sweep_patch *p, const uint32_t *idx, size_t naxes,
                       tessel_spec *spec)
{
    for (size_t a = 0; a < naxes; a++) {
        if (!p->kind[a] || idx[a] == SWEEP_NO_VALUE)
            continue;
        tessel_spec_level *L = &spec->level[p->level[a]];
        if (p->kind[a] == SWEEP_PATCH_CAPACITY) { /* bytes only: no value */
            L->capacity = p->bytes[a][idx[a]];
            continue;
        }
        double v = p->value[a][idx[a]];
        switch (p->kind[a]) {
        case SWEEP_PATCH_BANDWIDTH: L->bandwidth = v; break;
        case SWEEP_PATCH_CLOCK: spec->compute.clock_ghz = v; break;
        case SWEEP_PATCH_PES: spec->compute.pes = (unsigned)v; break;
        case SWEEP_PATCH_MACS: spec->compute.macs_per_pe = (unsigned)v; break;
        default:
            L->tensor[p->tensor[a]].partition_fraction = v;
            L->tensor[p->tensor[a]].partition_bytes = p->bytes[a][idx[a]];
            break;
        }
    }
}

/* The bytes of each tensor's share of level l are at least one (as
 * src/spec/validate.c's check_partition_sizes). */
static int shares_fit(const tessel_spec *s, unsigned l)
{
    const tessel_spec_level *L = &s->level[l];
    if (!L->capacity || !s->workload.ntensors)
        return 1;
    for (unsigned t = 0; t < s->workload.ntensors && t < TESSEL_SPEC_MAX_TENSORS; t++)
        if (!(tessel_spec_partition_share(s, l, t) >= 1.0) && !tessel_spec_bypassed(s, l, t))
            return 0;
    return 1;
}

/* As validate.c's check_partitions: the same sum and the same limit. */
int sweep_patch_consistent(const tessel_spec *s)
{
    for (unsigned l = 0; l < s->nlevels; l++) {
        if (tessel_spec_partition_sum(s, l) > 1.0 + 1e-9)
            return 0;
        if (l > 0 && !shares_fit(s, l))
            return 0;
    }
    return 1;
}

/* Small containers and helpers for the estimators: a word vector, a hash
 * map, the clock and saturating counts. */
#include <math.h>
#include <string.h>
#include <time.h>

#include <stdio.h>

#include "model_internal.h"

int model_vec_push(model_vec *a, uint64_t x)
{
    if (a->n == a->cap) {
        uint64_t cap = a->cap ? 2 * a->cap : 1024;
        uint64_t *v = tessel_realloc_array(a->alloc, a->v, cap, sizeof(*v));
        if (!v)
            return TESSEL_ENOMEM;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return TESSEL_OK;
}

void model_vec_free(model_vec *a)
{
    tessel_dealloc(a->alloc, a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= UINT64_C(0xff51afd7ed558ccd);
    k ^= k >> 33;
    return k;
}

static int map_grow(model_map *m)
{
    uint64_t cap = m->cap ? 2 * m->cap : 1024;
    uint64_t *keys = tessel_alloc_array(m->alloc, cap, sizeof(*keys));
    uint64_t *vals = tessel_alloc_array(m->alloc, cap, sizeof(*vals));
    if (!keys || !vals) {
        tessel_dealloc(m->alloc, keys);
        tessel_dealloc(m->alloc, vals);
        return TESSEL_ENOMEM;
    }
    memset(keys, 0xff, cap * sizeof(*keys));
    for (uint64_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == UINT64_MAX)
            continue;
        uint64_t s = mix(m->keys[i]) & (cap - 1);
        while (keys[s] != UINT64_MAX)
            s = (s + 1) & (cap - 1);
        keys[s] = m->keys[i];
        vals[s] = m->vals[i];
    }
    tessel_dealloc(m->alloc, m->keys);
    tessel_dealloc(m->alloc, m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return TESSEL_OK;
}

uint64_t *model_map_slot(model_map *m, uint64_t key, uint64_t init)
{
    if (2 * (m->n + 1) > m->cap && map_grow(m))
        return NULL;
    uint64_t s = mix(key) & (m->cap - 1);
    while (m->keys[s] != UINT64_MAX) {
        if (m->keys[s] == key)
            return &m->vals[s];
        s = (s + 1) & (m->cap - 1);
    }
    m->keys[s] = key;
    m->vals[s] = init;
    m->n++;
    return &m->vals[s];
}

int model_map_add(model_map *m, uint64_t key, double w)
{
    uint64_t *slot = model_map_slot(m, key, 0);
    if (!slot)
        return TESSEL_ENOMEM;
    *slot = model_double_bits(model_bits_double(*slot) + w);
    return TESSEL_OK;
}

double model_map_weight(const model_map *m, uint64_t key)
{
    return model_bits_double(model_map_find(m, key));
}

void model_map_free(model_map *m)
{
    tessel_dealloc(m->alloc, m->keys);
    tessel_dealloc(m->alloc, m->vals);
    m->keys = m->vals = NULL;
    m->cap = m->n = 0;
}

uint64_t model_map_find(const model_map *m, uint64_t key)
{
    if (!m->cap)
        return UINT64_MAX;
    uint64_t s = mix(key) & (m->cap - 1);
    while (m->keys[s] != UINT64_MAX) {
        if (m->keys[s] == key)
            return m->vals[s];
        s = (s + 1) & (m->cap - 1);
    }
    return UINT64_MAX;
}

double model_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t model_count(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 1.8e19)
        return UINT64_MAX;
    return (uint64_t)llround(x);
}

/* Every count of a result below 2^64 - 1: model_count and the exact
 * walk's products saturate there, and a saturated count is reported as an
 * error, never printed as 18446744073709551615. */
int model_result_check(const tessel_result *r, const tessel_spec *spec, tessel_diag *diag)
{
    for (unsigned l = 0; l < r->nlevels; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            const tessel_traffic *tr = &r->traffic[l][t];
            const uint64_t v[] = { tr->fills, tr->updates, tr->writebacks, tr->reads,
                                   tr->data_bytes, tr->metadata_bytes, tr->in_data,
                                   tr->in_metadata, tr->out_data, tr->out_metadata,
                                   tr->child_read_data, tr->child_read_metadata,
                                   tr->child_write_data, tr->child_write_metadata,
                                   tr->algorithmic, tr->skipped, tr->gated, tr->bumped_bytes,
                                   tr->overflow_tiles, tr->overflow_bytes };
            for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
                if (v[i] == UINT64_MAX)
                    return tessel_diag_set(diag, TESSEL_ERANGE, spec->path, 0, 0, "mapping",
                                           "level %s, tensor %s: a count reaches 2^64 and would "
                                           "overflow; use larger tiles or smaller data",
                                           spec->level[l].name, spec->workload.tensor[t].name);
        }
    const uint64_t w[] = { r->macs, r->intersections, r->output_nnz, r->compulsory_bytes,
                           r->dram_bytes, r->overflow_tiles };
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        if (w[i] == UINT64_MAX)
            return tessel_diag_set(diag, TESSEL_ERANGE, spec->path, 0, 0, NULL,
                                   "a total reaches 2^64 and would overflow");
    return TESSEL_OK;
}

void tessel_result_overflow(const tessel_result *r, uint64_t *tiles, uint64_t *bytes)
{
    uint64_t n = 0, by = 0;
    for (unsigned l = 1; l < r->nlevels; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            n += r->traffic[l][t].overflow_tiles;
            by += r->traffic[l][t].overflow_bytes;
        }
    if (tiles)
        *tiles = n;
    if (bytes)
        *bytes = by;
}

uint64_t model_vec_grow_bytes(const model_vec *a)
{
    return (a->cap ? 2 * a->cap : 1024) * sizeof(uint64_t);
}

uint64_t model_map_grow_bytes(const model_map *m)
{
    return (m->cap ? 2 * m->cap : 1024) * 2 * sizeof(uint64_t);
}

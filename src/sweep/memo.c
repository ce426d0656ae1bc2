/* Traffic memo: sweeps often vary only what prices traffic (bandwidths,
 * energy classes, technology, clock, PEs) around a few mappings. A point
 * whose traffic-deciding spec fields equal an earlier point's takes that
 * point's estimate. The key holds every field the estimators read (level
 * sizes, formats, partitions, sparse options, bit widths, tiles, orders,
 * extents); a test compares whole sweeps with and without the memo. With
 * the stat estimator the memo also keeps the thread's per-shape summaries
 * (tessel_stat_cache): a point with a new partition, capacity, format or
 * loop order of a seen tile shape then costs microseconds. */
#include <string.h>

#include "sweep_internal.h"

#define MEMO_MAX_ENTRIES 1024u
#define MEMO_SLOTS (2u * MEMO_MAX_ENTRIES)

typedef struct memo_tensor_key {
    int32_t format;
    uint32_t nranks;
    uint8_t ranks[TESSEL_SPEC_MAX_INDICES];
    double partition_fraction;
    uint64_t partition_bytes;
    uint32_t skip_on, gate_on;
} memo_tensor_key;

typedef struct memo_level_key {
    uint64_t capacity;
    uint32_t instances, value_bits, coord_bits, offset_bits, run_bits;
    int32_t format;
    uint32_t nranks;
    uint8_t ranks[TESSEL_SPEC_MAX_INDICES];
    memo_tensor_key tensor[TESSEL_SPEC_MAX_TENSORS];
    uint64_t tile[TESSEL_SPEC_MAX_INDICES];
    uint32_t order[TESSEL_SPEC_MAX_INDICES];
    int32_t has_mapping;
} memo_level_key;

/* A density model of the spec (the analytic estimator's input). */
typedef struct memo_model_key {
    int32_t present, kind;
    uint64_t rows, cols, nnz, bandwidth, seed;
    double density;
    uint32_t n, m;
} memo_model_key;

typedef struct memo_strategy_key {
    char name[TESSEL_SPEC_NAME_MAX];
    double overbooking;
    uint64_t seed, micro[2];
    uint32_t tail_samples, rounds, levels;
    int32_t dense_worst, growth;
} memo_strategy_key;

typedef struct memo_key {
    uint32_t nlevels;
    memo_strategy_key strategy;
    char template_name[TESSEL_SPEC_NAME_MAX];
    uint64_t extent[TESSEL_SPEC_MAX_INDICES];
    memo_model_key model[TESSEL_SPEC_MAX_TENSORS];
    memo_level_key level[TESSEL_SPEC_MAX_LEVELS];
} memo_key;

typedef struct memo_entry {
    memo_key key;
    tessel_result result;
} memo_entry;

struct sweep_memo {
    const tessel_allocator *alloc;
    tessel_stat_cache *shapes; /* the stat estimator's shape summaries, or NULL */
    uint32_t slot[MEMO_SLOTS]; /* entry index + 1; 0 = empty */
    uint32_t hash[MEMO_SLOTS]; /* the key hash of each used slot */
    uint32_t count;
    uint64_t hits;
    memo_entry *entry;         /* MEMO_MAX_ENTRIES, allocated on first use */
    /* the key the last find built, for the put of the same spec after a
     * miss (a key is thousands of bytes: built once per point). A put
     * always follows its point's find once entries exist. */
    const tessel_spec *pending_spec;
    uint32_t pending_hash;
    memo_key pending;
};

/* Every byte is set (padding included), so keys compare with memcmp. */
static void key_build(const tessel_spec *spec, memo_key *k)
{
    memset(k, 0, sizeof(*k));
    k->nlevels = spec->nlevels;
    const tessel_spec_strategy *strat = &spec->strategy;
    memcpy(k->strategy.name, strat->name, sizeof(k->strategy.name));
    k->strategy.overbooking = strat->overbooking;
    k->strategy.seed = strat->seed;
    k->strategy.micro[0] = strat->micro[0];
    k->strategy.micro[1] = strat->micro[1];
    k->strategy.tail_samples = strat->tail_samples;
    k->strategy.rounds = strat->rounds;
    k->strategy.levels = strat->levels;
    k->strategy.dense_worst = strat->dense_worst;
    k->strategy.growth = strat->growth;
    memcpy(k->template_name, spec->template_.name, sizeof(k->template_name));
    memcpy(k->extent, spec->workload.extent, sizeof(k->extent));
    for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
        const tessel_spec_tensor *st = &spec->workload.tensor[t];
        memo_model_key *mk = &k->model[t];
        mk->present = st->model.present;
        mk->kind = st->model.kind;
        mk->rows = st->model.rows;
        mk->cols = st->model.cols;
        mk->nnz = st->model.nnz;
        mk->bandwidth = st->model.bandwidth;
        mk->seed = st->model.seed;
        mk->density = st->model.density;
        mk->n = st->model.n;
        mk->m = st->model.m;
    }
    for (unsigned l = 0; l < spec->nlevels && l < TESSEL_SPEC_MAX_LEVELS; l++) {
        const tessel_spec_level *lv = &spec->level[l];
        memo_level_key *o = &k->level[l];
        o->capacity = lv->capacity;
        o->instances = lv->instances;
        o->value_bits = lv->value_bits;
        o->coord_bits = lv->coord_bits;
        o->offset_bits = lv->offset_bits;
        o->run_bits = lv->run_bits;
        o->format = lv->format;
        o->nranks = lv->nranks;
        memcpy(o->ranks, lv->ranks, sizeof(o->ranks));
        for (unsigned t = 0; t < TESSEL_SPEC_MAX_TENSORS; t++) {
            const tessel_spec_tensor_level *tl = &lv->tensor[t];
            o->tensor[t].format = tl->format;
            o->tensor[t].nranks = tl->nranks;
            memcpy(o->tensor[t].ranks, tl->ranks, sizeof(tl->ranks));
            o->tensor[t].partition_fraction = tl->partition_fraction;
            o->tensor[t].partition_bytes = tl->partition_bytes;
            o->tensor[t].skip_on = tl->sparse.skip_on;
            o->tensor[t].gate_on = tl->sparse.gate_on;
        }
        memcpy(o->tile, lv->tile, sizeof(o->tile));
        for (unsigned i = 0; i < TESSEL_SPEC_MAX_INDICES; i++)
            o->order[i] = lv->order[i];
        o->has_mapping = lv->has_mapping;
    }
}

/* A multiply-xorshift hash over the key's 8-byte words (the key is
 * thousands of bytes; a byte-wise hash cost more than the rest of a
 * memoised point). */
static uint32_t key_hash(const memo_key *k)
{
    const unsigned char *p = (const unsigned char *)k;
    uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
    size_t i = 0;
    for (; i + 8 <= sizeof(*k); i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 29;
    }
    for (; i < sizeof(*k); i++)
        h = (h ^ p[i]) * UINT64_C(1099511628211);
    return (uint32_t)(h ^ (h >> 32));
}

sweep_memo *sweep_memo_create(const tessel_allocator *a, const tessel_stat_data *stats)
{
    sweep_memo *m = tessel_alloc(a, sizeof(*m));
    if (!m)
        return NULL;
    memset(m, 0, sizeof(*m));
    m->alloc = a;
    if (stats && tessel_stat_cache_create(stats, a, &m->shapes)) {
        tessel_dealloc(a, m);
        return NULL;
    }
    return m;
}

tessel_stat_cache *sweep_memo_stat_cache(sweep_memo *m)
{
    return m ? m->shapes : NULL;
}

void sweep_memo_free(sweep_memo **m)
{
    if (!m || !*m)
        return;
    tessel_stat_cache_free(&(*m)->shapes);
    tessel_dealloc((*m)->alloc, (*m)->entry);
    tessel_dealloc((*m)->alloc, *m);
    *m = NULL;
}

/* The slot holding key k (of hash h), or the empty slot where it would
 * go: keys are compared only when their hashes are equal. */
static uint32_t memo_slot(sweep_memo *m, const memo_key *k, uint32_t h)
{
    uint32_t i = h & (MEMO_SLOTS - 1);
    while (m->slot[i] &&
           (m->hash[i] != h || memcmp(&m->entry[m->slot[i] - 1].key, k, sizeof(*k)) != 0))
        i = (i + 1) & (MEMO_SLOTS - 1);
    return i;
}

/* When the estimate is cheap (a stat estimate from the per-shape
 * summaries), a memo filled without a single hit is not looked up any
 * more: its sweep gives every point traffic of its own (a new capacity,
 * partition or mapping), and building a key costs about as much. */
const tessel_result *sweep_memo_find(sweep_memo *m, const tessel_spec *spec, int cheap)
{
    if (!m || !m->entry || (cheap && m->count == MEMO_MAX_ENTRIES && !m->hits))
        return NULL;
    key_build(spec, &m->pending);
    m->pending_hash = key_hash(&m->pending);
    m->pending_spec = spec;
    uint32_t i = memo_slot(m, &m->pending, m->pending_hash);
    if (!m->slot[i])
        return NULL;
    m->hits++;
    return &m->entry[m->slot[i] - 1].result;
}

/* Full: later points are evaluated without the memo (it never evicts, so
 * whether a point hits does not depend on thread scheduling beyond which
 * points a thread saw, and a hit returns the identical estimate anyway). */
void sweep_memo_put(sweep_memo *m, const tessel_spec *spec, const tessel_result *r)
{
    if (!m || m->count == MEMO_MAX_ENTRIES)
        return;
    if (!m->entry) {
        m->entry = tessel_alloc_array(m->alloc, MEMO_MAX_ENTRIES, sizeof(*m->entry));
        if (!m->entry)
            return; /* the memo is an optimisation: without memory, none */
    }
    memo_entry *e = &m->entry[m->count];
    if (m->pending_spec == spec) {
        e->key = m->pending;
    } else {
        key_build(spec, &e->key);
        m->pending_hash = key_hash(&e->key);
    }
    m->pending_spec = NULL;
    uint32_t i = memo_slot(m, &e->key, m->pending_hash);
    if (m->slot[i])
        return;
    e->result = *r;
    m->hash[i] = m->pending_hash;
    m->slot[i] = ++m->count;
}

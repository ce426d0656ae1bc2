/* Traffic memo: sweeps often vary only what prices traffic (bandwidths,
 * energy classes, technology, clock, PEs) around a few mappings. A point
 * whose traffic-deciding spec fields equal an earlier point's takes that
 * point's estimate. The key holds every field the estimators read (level
 * sizes, formats, partitions, sparse options, bit widths, tiles, orders,
 * extents); a test compares whole sweeps with and without the memo. The
 * table is shared by the sweep's threads (each traffic estimated once,
 * by the first thread that needs it); each thread's probe holds a cache
 * into one table of per-shape summaries for the stat estimator
 * (tessel_stat_cache, shared the same way: each shape built once): a
 * point with a new partition, capacity, format or loop order of a seen
 * tile shape then costs microseconds. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "sweep_internal.h"

#define MEMO_MAX_ENTRIES 1024u
#define MEMO_SLOTS (2u * MEMO_MAX_ENTRIES)

typedef struct memo_tensor_key {
    int32_t format;
    uint32_t nranks;
    uint8_t ranks[TESSEL_SPEC_MAX_INDICES];
    double partition_fraction;
    uint64_t partition_bytes;
    uint32_t skip_on, gate_on, scalar_skip_on, scalar_gate_on;
    uint32_t nrank_order;
    uint8_t rank_order[TESSEL_SPEC_MAX_INDICES];
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
    uint32_t spatial[TESSEL_SPEC_MAX_INDICES]; /* the split and its policy: the */
    int32_t spatial_policy;                    /* result's per-instance work */
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
    int32_t dense_worst, growth, dataflow;
} memo_strategy_key;

typedef struct memo_key {
    uint32_t nlevels;
    memo_strategy_key strategy;
    char template_name[TESSEL_SPEC_NAME_MAX];
    uint64_t extent[TESSEL_SPEC_MAX_INDICES];
    memo_model_key model[TESSEL_SPEC_MAX_TENSORS];
    memo_level_key level[TESSEL_SPEC_MAX_LEVELS];
    /* With a spatial split the work per instance is in cycles at the PE
     * rate (tessel_spatial): the compute's rates decide the estimate too. */
    uint32_t pes, macs_per_pe;
    double step_cycles;
    uint32_t compute_optimization; /* the compute's counts follow it (model_scalar.c) */
} memo_key;

/* An entry is claimed by the thread that estimates it (IN_FLIGHT) before
 * it holds the estimate (READY): a second thread needing that traffic
 * waits instead of estimating it again. FAILED: the estimate failed; a
 * thread needing it estimates it itself (and meets the same error). */
typedef enum memo_state { MEMO_IN_FLIGHT = 1, MEMO_READY, MEMO_FAILED } memo_state;

/* The estimating thread's CPU clock, read at the claim (cpu0) and, once
 * done, the CPU seconds the estimate took (cpu): a thread that waits is
 * charged what the estimate still needed when it began to wait (the wait
 * on idle cores), not the wall time, which grows with the machine's load. */
typedef struct memo_entry {
    memo_key key;
    tessel_result result;
    memo_state state;
    int has_clock;
    clockid_t clock;
    double cpu0, cpu;
} memo_entry;

/* One table for all the sweep's threads: every traffic is estimated once
 * whichever thread meets it first (issue 19 item 3). mu guards everything
 * below it; ready is signalled when an entry leaves IN_FLIGHT. */
struct sweep_memo {
    const tessel_allocator *alloc;
    pthread_mutex_t mu;
    pthread_cond_t ready;
    uint32_t slot[MEMO_SLOTS]; /* entry index + 1; 0 = empty */
    uint32_t hash[MEMO_SLOTS]; /* the key hash of each used slot */
    uint32_t count;
    uint64_t hits;
    memo_entry *entry;         /* MEMO_MAX_ENTRIES, allocated on first use */
};

/* A thread's side of the memo: the key its last find built, for the put
 * or drop of the same spec after a miss (a key is thousands of bytes:
 * built once per point), the entry it claimed, and the thread's cache
 * into the shared stat shape summaries (its nested summaries are its own). */
struct sweep_probe {
    const tessel_allocator *alloc;
    sweep_memo *memo;
    tessel_stat_cache *shapes; /* the stat estimator's shape summaries, or NULL */
    uint32_t claimed;          /* entry index + 1 this thread must fill; 0 = none */
    double waited;             /* seconds waited for other threads' estimates */
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
    k->strategy.dataflow = strat->dataflow;
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
            o->tensor[t].scalar_skip_on = tl->sparse.scalar_skip_on;
            o->tensor[t].scalar_gate_on = tl->sparse.scalar_gate_on;
            o->tensor[t].nrank_order = tl->nrank_order;
            memcpy(o->tensor[t].rank_order, tl->rank_order, sizeof(tl->rank_order));
        }
        memcpy(o->tile, lv->tile, sizeof(o->tile));
        for (unsigned i = 0; i < TESSEL_SPEC_MAX_INDICES; i++)
            o->order[i] = lv->order[i];
        o->has_mapping = lv->has_mapping;
        for (unsigned i = 0; i < TESSEL_SPEC_MAX_INDICES; i++)
            o->spatial[i] = lv->spatial[i];
        o->spatial_policy = lv->spatial_policy;
    }
    k->compute_optimization = spec->compute.optimization;
    if (tessel_spatial_level(spec) >= 0) {
        k->pes = spec->compute.pes;
        k->macs_per_pe = spec->compute.macs_per_pe;
        k->step_cycles = spec->compute.intersect_step_cycles;
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

static double clock_seconds(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The entry's estimate is done (by the thread that claimed it, mu held). */
static void entry_done(memo_entry *e, memo_state state)
{
    e->state = state;
    if (e->has_clock)
        e->cpu = clock_seconds(e->clock) - e->cpu0;
}

sweep_memo *sweep_memo_create(const tessel_allocator *a)
{
    sweep_memo *m = tessel_alloc(a, sizeof(*m));
    if (!m)
        return NULL;
    memset(m, 0, sizeof(*m));
    m->alloc = a;
    if (pthread_mutex_init(&m->mu, NULL)) {
        tessel_dealloc(a, m);
        return NULL;
    }
    if (pthread_cond_init(&m->ready, NULL)) {
        pthread_mutex_destroy(&m->mu);
        tessel_dealloc(a, m);
        return NULL;
    }
    return m;
}

void sweep_memo_free(sweep_memo **m)
{
    if (!m || !*m)
        return;
    pthread_cond_destroy(&(*m)->ready);
    pthread_mutex_destroy(&(*m)->mu);
    tessel_dealloc((*m)->alloc, (*m)->entry);
    tessel_dealloc((*m)->alloc, *m);
    *m = NULL;
}

sweep_probe *sweep_probe_create(const tessel_allocator *a, sweep_memo *m,
                                const tessel_stat_data *stats, sweep_probe *share)
{
    sweep_probe *p = tessel_alloc(a, sizeof(*p));
    if (!p)
        return NULL;
    memset(p, 0, sizeof(*p));
    p->alloc = a;
    p->memo = m;
    int rc = TESSEL_OK;
    if (stats && share && share->shapes)
        rc = tessel_stat_cache_create_shared(share->shapes, &p->shapes);
    else if (stats)
        rc = tessel_stat_cache_create(stats, a, &p->shapes);
    if (rc) {
        tessel_dealloc(a, p);
        return NULL;
    }
    return p;
}

tessel_stat_cache *sweep_probe_stat_cache(sweep_probe *p)
{
    return p ? p->shapes : NULL;
}

double sweep_probe_waited(sweep_probe *p)
{
    double w = p ? p->waited : 0;
    if (p)
        p->waited = 0;
    return w;
}

void sweep_probe_summaries(const sweep_probe *p, tessel_sweep_report *r)
{
    uint64_t hits, built = 0, nested_built = 0, tables = 0, geoms = 0, passed = 0;
    if (p && p->shapes) {
        tessel_stat_cache_counts(p->shapes, &hits, &built);
        tessel_stat_cache_nested_counts(p->shapes, &hits, &nested_built);
        tessel_stat_cache_ksteps_counts(p->shapes, &tables, &geoms, &passed);
    }
    r->shape_summaries += built;
    r->nested_summaries += nested_built;
    r->ks_tables += tables;
    r->ks_geometries += geoms;
}

void sweep_probe_free(sweep_probe **p)
{
    if (!p || !*p)
        return;
    sweep_memo_drop(*p); /* never leave an entry claimed: others would wait on it */
    tessel_stat_cache_free(&(*p)->shapes);
    tessel_dealloc((*p)->alloc, *p);
    *p = NULL;
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

/* Claims a new entry for probe p's pending key at empty slot i (mu
 * held); none when the table is full or has no memory. Full: later
 * traffics are estimated without the memo (it never evicts; a hit returns
 * the identical estimate anyway, so the output does not depend on which
 * traffics it holds). */
static void memo_claim(sweep_memo *m, sweep_probe *p, uint32_t i, uint32_t h)
{
    if (m->count == MEMO_MAX_ENTRIES)
        return;
    if (!m->entry) {
        m->entry = tessel_alloc_array(m->alloc, MEMO_MAX_ENTRIES, sizeof(*m->entry));
        if (!m->entry)
            return; /* the memo is an optimisation: without memory, none */
    }
    memo_entry *e = &m->entry[m->count];
    e->key = p->pending;
    e->state = MEMO_IN_FLIGHT;
    e->has_clock = pthread_getcpuclockid(pthread_self(), &e->clock) == 0;
    e->cpu0 = e->has_clock ? clock_seconds(e->clock) : 0;
    m->hash[i] = h;
    m->slot[i] = ++m->count;
    p->claimed = m->count;
}

/* When the estimate is cheap (a stat estimate from the per-shape
 * summaries), a memo filled without a single hit is not looked up any
 * more: its sweep gives every point traffic of its own (a new capacity,
 * partition or mapping), and building a key costs about as much. A
 * traffic another thread is estimating is waited for. */
int sweep_memo_find(sweep_probe *p, const tessel_spec *spec, int cheap, tessel_result *r)
{
    if (!p || !p->memo)
        return 0;
    sweep_memo *m = p->memo;
    sweep_memo_drop(p); /* a claim left by a point that never estimated */
    pthread_mutex_lock(&m->mu);
    int skip = cheap && m->count == MEMO_MAX_ENTRIES && !m->hits;
    pthread_mutex_unlock(&m->mu);
    if (skip)
        return 0;
    key_build(spec, &p->pending);
    uint32_t h = key_hash(&p->pending);
    pthread_mutex_lock(&m->mu);
    uint32_t i = memo_slot(m, &p->pending, h);
    int found = 0;
    if (!m->slot[i]) {
        memo_claim(m, p, i, h);
    } else {
        memo_entry *e = &m->entry[m->slot[i] - 1];
        if (e->state == MEMO_IN_FLIGHT) {
            /* the estimating thread is alive while its entry is in flight */
            double t0 = sweep_now();
            double spent = e->has_clock ? clock_seconds(e->clock) - e->cpu0 : 0;
            while (e->state == MEMO_IN_FLIGHT)
                pthread_cond_wait(&m->ready, &m->mu);
            double left = e->has_clock ? e->cpu - spent : sweep_now() - t0;
            p->waited += left > 0 ? left : 0;
        }
        if (e->state == MEMO_READY) {
            *r = e->result;
            m->hits++;
            found = 1;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return found;
}

/* The estimate of the traffic this thread claimed in its last find. */
void sweep_memo_put(sweep_probe *p, const tessel_result *r)
{
    if (!p || !p->claimed)
        return;
    sweep_memo *m = p->memo;
    pthread_mutex_lock(&m->mu);
    memo_entry *e = &m->entry[p->claimed - 1];
    e->result = *r;
    entry_done(e, MEMO_READY);
    p->claimed = 0;
    pthread_cond_broadcast(&m->ready);
    pthread_mutex_unlock(&m->mu);
}

void sweep_memo_drop(sweep_probe *p)
{
    if (!p || !p->claimed)
        return;
    sweep_memo *m = p->memo;
    pthread_mutex_lock(&m->mu);
    entry_done(&m->entry[p->claimed - 1], MEMO_FAILED);
    p->claimed = 0;
    pthread_cond_broadcast(&m->ready);
    pthread_mutex_unlock(&m->mu);
}

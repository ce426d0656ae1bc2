/* The gamma template's FiberCache (gamma §3.2-3.3; the model: gamma.c):
 * fully associative fiber-granular LRU or banked set-associative lines,
 * holding B's fibers and, under partials: cache, the partial fibers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gamma_internal.h"

/* ------------------------------------------------------------------ */
/* Exact: the LRU FiberCache over the trace. */

static void lru_unlink(lru *c, uint32_t k)
{
    if (c->prev[k] != NIL)
        c->next[c->prev[k]] = c->next[k];
    else
        c->head = c->next[k];
    if (c->next[k] != NIL)
        c->prev[c->next[k]] = c->prev[k];
    else
        c->tail = c->prev[k];
}

static void lru_push(lru *c, uint32_t k)
{
    c->prev[k] = NIL;
    c->next[k] = c->head;
    if (c->head != NIL)
        c->prev[c->head] = k;
    c->head = k;
    if (c->tail == NIL)
        c->tail = k;
}

/* Fiber k's size in bits at widths (v + c per entry, o per fiber). */
uint64_t gamma_fiber_bits(uint64_t nnz, const tessel_spec_level *lv)
{
    return tpl_sat_add(tpl_sat_mul(nnz, (uint64_t)lv->value_bits + lv->coord_bits),
                       lv->offset_bits);
}

/* Line `line` into its set; 1 on a miss. */
static int sa_touch(sa_cache *c, uint64_t line)
{
    uint64_t base = (line % c->sets) * c->ways, victim = base;
    c->clock++;
    for (uint64_t w = base; w < base + c->ways; w++) {
        if (c->tag[w] == line + 1) {
            c->stamp[w] = c->clock;
            return 0;
        }
        if (c->stamp[w] < c->stamp[victim])
            victim = w;
    }
    c->tag[victim] = line + 1;
    c->stamp[victim] = c->clock;
    return 1;
}

/* Line `line`, if resident, leaves its set (a partial fiber consumed);
 * 1 if it was there. */
static int sa_take(sa_cache *c, uint64_t line)
{
    uint64_t base = (line % c->sets) * c->ways;
    for (uint64_t w = base; w < base + c->ways; w++)
        if (c->tag[w] == line + 1) {
            c->tag[w] = 0;
            c->stamp[w] = 0;
            return 1;
        }
    return 0;
}

int gamma_cache_init(fiber_cache *c, const tpl_options *o, const tessel_spec_level *lv, uint64_t K,
                     uint64_t S, const tpl_csr_view *B, const tessel_allocator *a)
{
    memset(c, 0, sizeof(*c));
    c->set_assoc = o->set_assoc;
    c->pp.K = K;
    if (S) { /* partials: cache, S slots */
        c->pp.nslots = S;
        c->pp.nnz = tessel_alloc_array(a, S, sizeof(uint64_t));
        c->pp.bits = tessel_alloc_array(a, S, sizeof(uint64_t));
        c->pp.line = tessel_alloc_array(a, S, sizeof(uint64_t));
        c->pp.free = tessel_alloc_array(a, S, sizeof(uint32_t));
        if (!c->pp.nnz || !c->pp.bits || !c->pp.line || !c->pp.free)
            return TESSEL_ENOMEM;
        for (uint64_t s = 0; s < S; s++)
            c->pp.free[s] = (uint32_t)(S - 1 - s);
        c->pp.nfree = S;
        uint64_t eb = (uint64_t)lv->value_bits + lv->coord_bits, lb = o->line_bytes * 8;
        uint64_t total = tpl_sat_mul(B->nnz, eb);
        c->pp.next_line = total / lb + (total % lb != 0);
    }
    K += S;
    if (o->set_assoc) {
        c->sa.ways = o->ways;
        c->sa.sets = o->cache_bytes / (o->ways * o->line_bytes); /* tpl_gamma checked */
        c->sa.line_bits = o->line_bytes * 8;
        c->sa.entry_bits = (uint64_t)lv->value_bits + lv->coord_bits;
        c->sa.tag = tessel_alloc_array(a, c->sa.sets * c->sa.ways, sizeof(uint64_t));
        c->sa.stamp = tessel_alloc_array(a, c->sa.sets * c->sa.ways, sizeof(uint64_t));
        c->sa.seen = tessel_alloc_array(a, K ? K : 1, 1);
        if (!c->sa.tag || !c->sa.stamp || !c->sa.seen)
            return TESSEL_ENOMEM;
        memset(c->sa.seen, 0, K ? K : 1);
        memset(c->sa.tag, 0, c->sa.sets * c->sa.ways * sizeof(uint64_t));
        memset(c->sa.stamp, 0, c->sa.sets * c->sa.ways * sizeof(uint64_t));
        return TESSEL_OK;
    }
    c->fa.prev = tessel_alloc_array(a, K ? K : 1, sizeof(uint32_t));
    c->fa.next = tessel_alloc_array(a, K ? K : 1, sizeof(uint32_t));
    c->fa.in = tessel_alloc_array(a, K ? K : 1, 1);
    if (!c->fa.prev || !c->fa.next || !c->fa.in)
        return TESSEL_ENOMEM;
    memset(c->fa.in, 0, K ? K : 1);
    c->fa.head = c->fa.tail = NIL;
    c->fa.cap = tpl_sat_mul(o->cache_bytes, 8);
    return TESSEL_OK;
}

void gamma_cache_free(fiber_cache *c, const tessel_allocator *a)
{
    tessel_dealloc(a, c->pp.nnz);
    tessel_dealloc(a, c->pp.bits);
    tessel_dealloc(a, c->pp.line);
    tessel_dealloc(a, c->pp.free);
    tessel_dealloc(a, c->sa.tag);
    tessel_dealloc(a, c->sa.stamp);
    tessel_dealloc(a, c->sa.seen);
    tessel_dealloc(a, c->fa.prev);
    tessel_dealloc(a, c->fa.next);
    tessel_dealloc(a, c->fa.in);
}

/* LRU item v's size: B's fiber v, or a partial fiber's slot v - K. */
static uint64_t item_bits(const fiber_cache *fc, const tpl_csr_view *B, uint32_t v,
                          const tessel_spec_level *lv)
{
    if (v < fc->pp.K)
        return gamma_fiber_bits(B->ptr[v + 1] - B->ptr[v], lv);
    return fc->pp.bits[v - fc->pp.K];
}

/* Evict from the LRU end until s more bits fit. B's fibers are clean
 * (dropped); a partial fiber is dirty: written back to DRAM, and read back
 * when consumed (both counted here, as spill_*). */
static void lru_room(fiber_cache *fc, const tpl_csr_view *B, uint64_t s,
                     const tessel_spec_level *lv, tpl_gamma_counts *g)
{
    lru *c = &fc->fa;
    while (c->used + s > c->cap && c->tail != NIL) {
        uint32_t v = c->tail;
        lru_unlink(c, v);
        c->in[v] = 0;
        c->used -= item_bits(fc, B, v, lv);
        if (v >= fc->pp.K) {
            g->spill_fibers++;
            g->spill_nnz = tpl_sat_add(g->spill_nnz, fc->pp.nnz[v - fc->pp.K]);
        }
    }
}

/* Fully associative, fiber-granular LRU: one reference to fiber k. */
static void lru_ref(fiber_cache *fc, const tpl_csr_view *B, uint32_t k,
                    const tessel_spec_level *lv, tpl_gamma_counts *g)
{
    lru *c = &fc->fa;
    uint64_t nk = B->ptr[k + 1] - B->ptr[k];
    if (c->in[k]) {
        lru_unlink(c, k);
        lru_push(c, k);
        g->hits++;
        return;
    }
    g->misses++;
    g->miss_nnz = tpl_sat_add(g->miss_nnz, nk);
    uint64_t s = gamma_fiber_bits(nk, lv);
    if (s > c->cap)
        return; /* fetched and used, not kept */
    lru_room(fc, B, s, lv, g);
    lru_push(c, k);
    c->in[k] = 1;
    c->used += s;
}

/* Set-associative: one reference to fiber k, line by line. */
static void sa_ref(sa_cache *c, const tpl_csr_view *B, uint32_t k, tpl_gamma_counts *g)
{
    uint64_t lo = B->ptr[k] * c->entry_bits, hi = B->ptr[k + 1] * c->entry_bits;
    if (lo == hi) {
        g->hits++; /* an empty fiber: its offset says so, no line */
        return;
    }
    uint64_t missed = 0;
    for (uint64_t l = lo / c->line_bits; l <= (hi - 1) / c->line_bits; l++)
        missed += (uint64_t)sa_touch(c, l);
    int first = !c->seen[k];
    c->seen[k] = 1;
    if (!missed && !first) {
        g->hits++;
        return;
    }
    g->misses++;
    g->miss_nnz = tpl_sat_add(g->miss_nnz, B->ptr[k + 1] - B->ptr[k]);
    g->line_misses = tpl_sat_add(g->line_misses, missed);
}

void gamma_cache_ref(fiber_cache *c, const tpl_csr_view *B, uint32_t k, const tessel_spec_level *lv,
                     tpl_gamma_counts *g)
{
    if (c->set_assoc)
        sa_ref(&c->sa, B, k, g);
    else
        lru_ref(c, B, k, lv, g);
}

/* A partial output fiber of nnz entries produced: into the FiberCache as
 * the most recent item (lru), or line by line into its sets
 * (set-associative), evicting as a B fetch would. A fiber larger than the
 * cache goes straight to DRAM. Returns its slot (one is always free: the
 * pool holds the most fibers live at once). */
uint32_t gamma_part_new(fiber_cache *c, const tpl_csr_view *B, uint64_t nnz,
                        const tessel_spec_level *lv, tpl_gamma_counts *g)
{
    partial_pool *pp = &c->pp;
    uint32_t s = pp->free[--pp->nfree];
    pp->nnz[s] = nnz;
    g->partial_fibers++;
    g->partial_nnz = tpl_sat_add(g->partial_nnz, nnz);
    if (c->set_assoc) {
        uint64_t b = tpl_sat_mul(nnz, c->sa.entry_bits);
        uint64_t n = b / c->sa.line_bits + (b % c->sa.line_bits != 0);
        pp->line[s] = pp->next_line;
        pp->bits[s] = n;
        for (uint64_t l = 0; l < n; l++)
            (void)sa_touch(&c->sa, pp->next_line + l); /* written on chip: no DRAM */
        pp->next_line = tpl_sat_add(pp->next_line, n);
        return s;
    }
    uint64_t b = gamma_fiber_bits(nnz, lv);
    uint32_t id = (uint32_t)(pp->K + s);
    pp->bits[s] = b;
    c->fa.in[id] = 0;
    if (b > c->fa.cap) {
        g->spill_fibers++;
        g->spill_nnz = tpl_sat_add(g->spill_nnz, nnz);
        return s;
    }
    lru_room(c, B, b, lv, g);
    lru_push(&c->fa, id);
    c->fa.in[id] = 1;
    c->fa.used += b;
    return s;
}

/* Partial fiber `s` consumed by a merge: a hit frees its space; if it was
 * evicted (lru: counted then) it is read back from DRAM. Set-associative:
 * the lines evicted were written back and are read back, as the entries
 * they hold (at most the fiber's); the fiber counts once if it lost any. */
void gamma_part_use(fiber_cache *c, uint32_t s, tpl_gamma_counts *g)
{
    partial_pool *pp = &c->pp;
    if (c->set_assoc) {
        uint64_t missed = 0;
        for (uint64_t l = 0; l < pp->bits[s]; l++)
            missed += (uint64_t)!sa_take(&c->sa, pp->line[s] + l);
        if (missed) {
            uint64_t e = c->sa.entry_bits ? tpl_sat_mul(missed, c->sa.line_bits) / c->sa.entry_bits
                                          : UINT64_MAX;
            g->spill_fibers++;
            g->spill_nnz = tpl_sat_add(g->spill_nnz, e < pp->nnz[s] ? e : pp->nnz[s]);
        }
    } else {
        uint32_t id = (uint32_t)(pp->K + s);
        if (c->fa.in[id]) {
            lru_unlink(&c->fa, id);
            c->fa.in[id] = 0;
            c->fa.used -= pp->bits[s];
        }
    }
    pp->free[pp->nfree++] = s;
}

/* Gamma (Zhang et al., ASPLOS 2021): row-wise Gustavson SpMSpM with a
 * FiberCache holding rows (fibers) of B (gamma §3, §4; docs/semantics.md rule 5).
 *
 * The model, at the DRAM / FiberCache boundary (level 1):
 *   A  streamed once in CSR (bypasses the FiberCache, gamma §3):
 *      nnz(A) (value + coord) + rows(A) offset, as MatRaptor.
 *   B  for each row i of A in order, for each a_ik, row k of B is looked up
 *      in the FiberCache: capacity C bytes (template_options.cache_bytes,
 *      default the capacity of level 1), whole fibers of
 *      nnz(B row k) (value + coord) + offset bits each, fiber-granular LRU,
 *      fully associative (`policy: lru`, default). A hit moves no DRAM
 *      bytes; a miss fetches the fiber from DRAM. A fiber larger than C is
 *      fetched and not kept (it would evict everything for nothing).
 *      `policy: set-associative`: the paper's organisation instead, lines
 *      of line_bytes in sets of `ways`, banked (see sa_cache below).
 *   Z  written once (output_format, default csr for gamma: its rows leave
 *      the PEs whole, gamma §3).
 *   spills: a PE merges at most R fibers at once (radix, default 64,
 *      gamma §3.1). Row i with n = nnz(A row i) > R fibers is merged in
 *      rounds: round L (L = 1, 2, ... while n > R^L) merges each group of
 *      R^L consecutive fibers into one intermediate partial fiber. Its size
 *      is the union of the columns of the fibers it merges (exact path:
 *      counted with a marker array; stat path: J (1 - exp(-m p / J)) for m
 *      fibers of p products on average, the occupancy of J columns under
 *      uniform independent hits), plus one offset.
 *      `partials: cache` (default, gamma §3.3): a partial fiber is written
 *      into the FiberCache when produced, competing with B's fibers for
 *      capacity, and freed when its merge consumes it. Only a dirty partial
 *      fiber evicted before then reaches DRAM: written back, and read back
 *      by its merge (a fiber larger than the cache goes straight to DRAM).
 *      The exact trace walks each row's merge tree in the scheduler's order
 *      (walk, task_done); the stat path compares each fiber's reuse
 *      distance with Che's characteristic time (see stat_spills).
 *      `partials: memory`: every partial fiber is written to DRAM and read
 *      back, taking no cache space (the model before partials: cache).
 *      The DRAM ones count as Z's updates (reads) and extra write-backs.
 * Deeper levels (l >= 2) as MatRaptor (template_traffic.c).
 *
 * template_options (all optional): output_format (coo | csr, default csr),
 * partials (cache | memory, default cache),
 * cache_bytes (a size > 0), radix (2 .. 2^20), policy (lru |
 * set-associative, default lru), ways (16), banks (48), line_bytes (64),
 * reorder (affinity | none, default none), tiling (selective | none,
 * default none), tile_fraction (0.25; see split), stat_model (irm |
 * banded, default irm; see che_banded; the set-associative policy has its
 * own stat model, che_set_assoc).
 *
 * Exact: one trace-driven pass over A's rows (or their subrows under
 * `tiling: selective`) in order, or in the affinity order (`reorder:
 * affinity`). The LRU list is a doubly-linked list over B's
 * row numbers (the row number is its own perfect hash: arrays of K entries),
 * O(1) per reference: O(nnz(A) + K) for the cache, O(multiplies x rounds)
 * for the spills.
 *
 * Stat: Che's characteristic-time approximation of LRU (H. Che, Y. Tung,
 * Z. Wang, "Hierarchical Web caching systems: modeling, design and
 * experimental results", IEEE JSAC 20(7), 2002), for items of unequal
 * sizes. References to fiber k arrive as a Poisson process over the M =
 * nnz(A) references with rate n_k / M, n_k = nnz(A column k) (the
 * independent reference model: the row order of A is ignored). A fiber is
 * in an LRU cache iff it was referenced in the last T references, so with
 * probability 1 - exp(-n_k T / M); T solves
 *     sum_k s_k (1 - exp(-n_k T / M)) = C
 * over the fibers that fit (s_k <= C), by bisection (the left side grows
 * with T). When all the referenced fibers fit together, only the
 * compulsory misses remain. Expected misses of fiber k: its first reference
 * (compulsory) plus (n_k - 1) exp(-n_k T / M); a fiber larger than C
 * misses n_k times. All inputs are the per-line nonzero counts of the
 * statistics (nnz of A's rows and columns, of B's rows).
 *
 * With partials: cache, T also counts the partial fibers' occupancy (each
 * resident for min(d, T) of the M references, d its reuse distance), and a
 * partial fiber reaches DRAM when d exceeds its own T_s (load(T_s) = C - s).
 * The set-associative and banded B estimates do not see that occupancy.
 *
 * Selective tiling on the stat path: its subrows' spills (stat_split).
 * Its effect on B is not estimated: the subrows of a row are consecutive
 * slices of it, so without reordering the exact trace is unchanged, and
 * with reordering the gain is a row-order effect that the independent
 * reference model does not see (nor does it see affinity reordering). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "template_internal.h"

/* ------------------------------------------------------------------ */
/* Helpers (the same conventions as template_traffic.c). */

/* ------------------------------------------------------------------ */
/* CSR views: template_counts.c's tpl_csr_of. */

/* ------------------------------------------------------------------ */
/* Exact: the LRU FiberCache over the trace. */

#define NIL UINT32_MAX

typedef struct lru {
    uint32_t *prev, *next; /* over B's rows; NIL ends */
    unsigned char *in;     /* resident */
    uint32_t head, tail;   /* most / least recently used */
    uint64_t used, cap;    /* bits */
} lru;

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
static uint64_t fiber_bits(uint64_t nnz, const tessel_spec_level *lv)
{
    return tpl_sat_add(tpl_sat_mul(nnz, (uint64_t)lv->value_bits + lv->coord_bits),
                       lv->offset_bits);
}

/* Affinity-based row reordering (gamma §4.1, simplified): a greedy order
 * in which the next row is the unvisited row sharing the most columns
 * (B rows) with the last w rows scheduled. Candidates are the rows found
 * through the columns of the window's rows (A by columns), each column's
 * row list scanned at most `scan` entries, so the work is
 * O(nnz(A) x w x scan) at worst; ties and an empty candidate set fall back
 * to the next unvisited row in the original order. score[] counts, per
 * candidate row, the columns it shares with the window (updated as rows
 * enter and leave the window). */
static int affinity_order(const tpl_csr_view *A, const tpl_csr_view *AT, uint64_t w,
                          const tessel_allocator *a, uint32_t *order)
{
    const uint64_t scan = 64;
    uint64_t n = A->rows;
    uint32_t *score = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    unsigned char *done = tessel_alloc_array(a, n ? n : 1, 1);
    uint32_t *win = tessel_alloc_array(a, w ? w : 1, sizeof(uint32_t));
    uint32_t *cand = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    unsigned char *incand = tessel_alloc_array(a, n ? n : 1, 1);
    int rc = TESSEL_OK;
    if (!score || !done || !win || !cand || !incand) {
        rc = TESSEL_ENOMEM;
        goto out;
    }
    memset(score, 0, (n ? n : 1) * sizeof(uint32_t));
    memset(done, 0, n ? n : 1);
    memset(incand, 0, n ? n : 1);
    uint64_t ncand = 0, nwin = 0, next_unvisited = 0;
    for (uint64_t pos = 0; pos < n; pos++) {
        /* best candidate: the highest score among those collected */
        uint64_t best = UINT64_MAX;
        uint32_t best_score = 0;
        uint64_t keep = 0;
        for (uint64_t c = 0; c < ncand; c++) {
            uint32_t r = cand[c];
            if (done[r] || score[r] == 0) {
                incand[r] = 0;
                continue;
            }
            cand[keep++] = r;
            if (score[r] > best_score || (score[r] == best_score && r < best))
                best = r, best_score = score[r];
        }
        ncand = keep;
        if (best == UINT64_MAX) {
            while (done[next_unvisited])
                next_unvisited++;
            best = next_unvisited;
        }
        uint32_t row = (uint32_t)best;
        order[pos] = row;
        done[row] = 1;
        /* the row leaving the window, then the one entering it */
        if (w && nwin == w) {
            uint32_t old = win[pos % w];
            for (uint64_t p = A->ptr[old]; p < A->ptr[old + 1]; p++) {
                uint64_t k = A->idx[p];
                uint64_t end =
                    AT->ptr[k + 1] - AT->ptr[k] > scan ? AT->ptr[k] + scan : AT->ptr[k + 1];
                for (uint64_t q = AT->ptr[k]; q < end; q++)
                    if (score[AT->idx[q]])
                        score[AT->idx[q]]--;
            }
        } else if (w) {
            nwin++;
        }
        if (!w)
            continue;
        win[pos % w] = row;
        for (uint64_t p = A->ptr[row]; p < A->ptr[row + 1]; p++) {
            uint64_t k = A->idx[p];
            uint64_t end = AT->ptr[k + 1] - AT->ptr[k] > scan ? AT->ptr[k] + scan : AT->ptr[k + 1];
            for (uint64_t q = AT->ptr[k]; q < end; q++) {
                uint32_t r = AT->idx[q];
                if (done[r])
                    continue;
                score[r]++;
                if (!incand[r]) {
                    incand[r] = 1;
                    cand[ncand++] = r;
                }
            }
        }
    }
out:
    tessel_dealloc(a, score);
    tessel_dealloc(a, done);
    tessel_dealloc(a, win);
    tessel_dealloc(a, cand);
    tessel_dealloc(a, incand);
    return rc;
}

/* The set-associative FiberCache (`policy: set-associative`, gamma §3.2,
 * Table 1: 16 ways, 48 banks). B sits in memory as one array of entries
 * (value + coordinate, gamma Fig. 1), line-aligned at its start, so fiber
 * k covers the bits [ptr[k] e, ptr[k+1] e) of it (e = value + coordinate
 * bits) and the lines floor(ptr[k] e / 8L) .. floor((ptr[k+1] e - 1) / 8L)
 * of L bytes (B's row offsets are not cached). Lines interleave over the banks
 * (bank = line mod banks) and over the sets of a bank (set = (line / banks) mod
 * sets per bank); the two together are set = line mod (banks x sets per bank),
 * so the bank count decides which capacities are legal, not the traffic. Within
 * a set the least recently used line goes first (our stand-in for the paper's
 * fetch/read priority counters with 2-bit SRRIP tie-breaking, §3.2). A
 * reference touches every line of its fiber in order; each missing line
 * costs L bytes from DRAM, and a reference missing any line, or the first
 * reference to a fiber (its lines may have come in with a neighbour),
 * also reads the fiber's row offset. O(lines touched x ways). */
typedef struct sa_cache {
    uint64_t sets, ways;
    uint64_t line_bits, entry_bits;
    uint64_t *tag;   /* sets x ways: line number + 1, 0 empty */
    uint64_t *stamp; /* sets x ways: last use, 0 never */
    uint64_t clock;
    unsigned char *seen; /* per fiber: referenced before */
} sa_cache;

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

/* `partials: cache`: the live partial output fibers, in slots (slot s is
 * LRU item K + s, after B's K fibers). A slot holds a fiber from its
 * production to its consumption. */
typedef struct partial_pool {
    uint64_t K, nslots;
    uint64_t *nnz;   /* per slot: nonzeros */
    uint64_t *bits;  /* lru: size in bits; set-associative: lines */
    uint64_t *line;  /* set-associative: first line */
    uint32_t *free;  /* free slots, a stack */
    uint64_t nfree;
    uint64_t next_line; /* set-associative: partial fibers are laid out past
                           B's lines, each at the next free line (fresh
                           addresses; gamma §3.3 allocates them dynamically) */
} partial_pool;

/* The FiberCache of either policy. */
typedef struct fiber_cache {
    int set_assoc;
    lru fa;
    sa_cache sa;
    partial_pool pp;
} fiber_cache;

static int cache_init(fiber_cache *c, const tpl_options *o, const tessel_spec_level *lv, uint64_t K,
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

static void cache_free(fiber_cache *c, const tessel_allocator *a)
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
        return fiber_bits(B->ptr[v + 1] - B->ptr[v], lv);
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
    uint64_t s = fiber_bits(nk, lv);
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

static void cache_ref(fiber_cache *c, const tpl_csr_view *B, uint32_t k,
                      const tessel_spec_level *lv, tpl_gamma_counts *g)
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
static uint32_t part_new(fiber_cache *c, const tpl_csr_view *B, uint64_t nnz,
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
    uint64_t b = fiber_bits(nnz, lv);
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
static void part_use(fiber_cache *c, uint32_t s, tpl_gamma_counts *g)
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

/* Columns in the union of the B fibers of A's entries [p0, p1): mark[j]
 * == *stamp once j is counted. */
static uint64_t union_size(const tpl_csr_view *A, const tpl_csr_view *B, uint64_t p0, uint64_t p1,
                           uint64_t *mark, uint64_t *stamp)
{
    uint64_t u = 0;
    ++*stamp;
    for (uint64_t p = p0; p < p1; p++) {
        uint32_t k = A->idx[p];
        for (uint64_t q = B->ptr[k]; q < B->ptr[k + 1]; q++) {
            uint64_t j = B->idx ? B->idx[q] : 0;
            if (mark[j] != *stamp) {
                mark[j] = *stamp;
                u++;
            }
        }
    }
    return u;
}

/* The merger's rounds over the fibers of A's entries [p0, p1): groups of
 * R^L consecutive fibers while n > R^L, each an intermediate fiber
 * spilled (see the top comment). */
static void merge_rounds(const tpl_csr_view *A, const tpl_csr_view *B, uint64_t p0, uint64_t p1,
                         uint64_t R, uint64_t *mark, uint64_t *stamp, tpl_gamma_counts *g)
{
    uint64_t n = p1 - p0;
    for (uint64_t gsz = R; gsz < n; gsz = tpl_sat_mul(gsz, R)) {
        for (uint64_t g0 = 0; g0 < n; g0 += gsz) {
            uint64_t g1 = g0 + gsz < n ? g0 + gsz : n;
            g->spill_fibers++;
            g->spill_nnz =
                tpl_sat_add(g->spill_nnz, union_size(A, B, p0 + g0, p0 + g1, mark, stamp));
        }
        if (gsz > UINT64_MAX / R)
            break;
    }
}

/* Selective coordinate-space tiling (gamma §4.2). A row of A whose B
 * footprint, estimated as its length times the average B fiber, exceeds
 * tile_fraction x the cache is split into R subrows by coordinate: subrow
 * c holds the nonzeros with k in [k0 + c(k1 - k0)/R, k0 + (c + 1)(k1 -
 * k0)/R); a subrow still over the limit is split again. A range whose
 * nonzeros all fall in one part is narrowed without a new subrow. Every
 * subrow's partial output fiber (the union of its B fibers' columns) is
 * merged with its siblings once they are all done, in one round (at most
 * R). partials: memory writes each to memory and reads it back; partials:
 * cache keeps it in the FiberCache until then (gamma §4.2: subrows are not
 * processed close in time once reordered, so theirs are likely evicted). The leaves
 * are the tasks the trace processes, in order, A's rows as they are when
 * a row is not split. A's own traffic is unchanged (the subrows are
 * slices of its rows). */
/* `partials: cache`: the split tree, one node per subrow (leaf or not)
 * of a tiled row and its root; a node's partial fiber is produced when its
 * subtree is done and consumed when its parent's children all are. */
typedef struct tnode {
    uint64_t nnz;                   /* its partial fiber's entries */
    uint32_t parent, first, next;   /* NIL ends */
    uint32_t left, slot;            /* children not done; its fiber's slot */
    int spill;                      /* 0: a row's root (its output is Z's row) */
} tnode;

typedef struct tiler {
    const tpl_csr_view *A, *B;
    uint64_t R;
    double limit; /* entries of A per subrow at most: tile_fraction x cache /
                     average fiber */
    uint64_t *mark, stamp;
    uint64_t *ptr, n; /* task boundaries: ptr[0 .. n] */
    tpl_gamma_counts *g;
    /* partials: cache (rec): the nodes, and each task's leaf node */
    int rec, rc;
    const tessel_allocator *a;
    tnode *node;
    uint64_t nnode, cnode;
    uint32_t *leaf;
} tiler;

static uint32_t new_node(tiler *t, uint32_t parent, int spill, uint64_t nnz)
{
    if (t->nnode == t->cnode) {
        uint64_t c = t->cnode ? 2 * t->cnode : 64;
        tnode *n = c < NIL ? tessel_realloc_array(t->a, t->node, c, sizeof(tnode)) : NULL;
        if (!n) {
            t->rc = TESSEL_ENOMEM;
            return NIL;
        }
        t->node = n;
        t->cnode = c;
    }
    uint32_t id = (uint32_t)t->nnode++;
    tnode *x = &t->node[id];
    x->nnz = nnz;
    x->parent = parent;
    x->first = NIL;
    x->left = 0;
    x->slot = NIL;
    x->spill = spill;
    x->next = NIL;
    if (parent != NIL) {
        x->next = t->node[parent].first;
        t->node[parent].first = id;
        t->node[parent].left++;
    }
    return id;
}

static int over_limit(const tiler *t, uint64_t p0, uint64_t p1)
{
    return p1 - p0 > 1 && (double)(p1 - p0) > t->limit;
}

/* The part of [k0, k0 + w) that column k falls in: the largest c with
 * floor(w c / R) <= k - k0; its range is [k0 + w c / R, k0 + w (c + 1) / R). */
static uint64_t part_of(uint64_t k, uint64_t k0, uint64_t w, uint64_t R)
{
    return ((k - k0 + 1) * R - 1) / w;
}

static void split(tiler *t, uint64_t p0, uint64_t p1, uint64_t k0, uint64_t k1, int spill,
                  uint32_t parent)
{
    if (t->rc)
        return;
    uint64_t u = spill ? union_size(t->A, t->B, p0, p1, t->mark, &t->stamp) : 0;
    if (spill && !t->rec) {
        t->g->spill_fibers++;
        t->g->spill_nnz = tpl_sat_add(t->g->spill_nnz, u);
    }
    uint32_t id = t->rec ? new_node(t, parent, spill, u) : NIL;
    if (t->rc)
        return;
    const uint32_t *idx = t->A->idx;
    uint64_t R = t->R;
    /* narrow while the first and last entries fall in one part */
    while (over_limit(t, p0, p1) && k1 - k0 > 1) {
        uint64_t w = k1 - k0, c = part_of(idx[p0], k0, w, R);
        if (c != part_of(idx[p1 - 1], k0, w, R))
            break;
        k1 = k0 + w * (c + 1) / R;
        k0 = k0 + w * c / R;
    }
    if (!over_limit(t, p0, p1) || k1 - k0 <= 1) {
        t->ptr[++t->n] = p1; /* a leaf: one task */
        if (t->rec)
            t->leaf[t->n - 1] = id;
        return;
    }
    /* the non-empty parts, in order */
    uint64_t w = k1 - k0;
    for (uint64_t q = p0; q < p1;) {
        uint64_t c = part_of(idx[q], k0, w, R);
        uint64_t c0 = k0 + w * c / R, c1 = k0 + w * (c + 1) / R, q1 = q;
        while (q1 < p1 && idx[q1] < c1)
            q1++;
        split(t, q, q1, c0, c1, 1, id);
        q = q1;
    }
}

/* The split tree of `partials: cache` (owned arrays; leaf[t] NIL for a
 * task that is a whole row). */
typedef struct split_tree {
    tnode *node;
    uint64_t nnode;
    uint32_t *leaf;
} split_tree;

/* The tasks: A's rows, or their leaf subrows under selective tiling, as a
 * CSR view over A's entries (ptr owned); the split tree in *st when st. */
static int make_tasks(const tpl_csr_view *A, const tpl_csr_view *B, const tpl_options *o,
                      const tessel_spec_level *lv, uint64_t *mark, const tessel_allocator *a,
                      uint64_t *stamp, tpl_gamma_counts *g, tpl_csr_view *T, split_tree *st)
{
    memset(T, 0, sizeof(*T));
    T->cols = A->cols;
    T->nnz = A->nnz;
    T->idx = A->idx;
    if (!o->tiling) {
        T->rows = A->rows;
        T->ptr = A->ptr;
        return TESSEL_OK;
    }
    uint64_t bound = A->rows + A->nnz + 1; /* a leaf holds one entry at least, or is a row */
    T->own_ptr = tessel_alloc_array(a, bound, sizeof(uint64_t));
    if (!T->own_ptr)
        return TESSEL_ENOMEM;
    double avg = B->rows ? (double)fiber_bits(B->nnz / B->rows, lv) : 1;
    tiler t = { A, B, o->radix, 0, mark, *stamp, T->own_ptr, 0, g, st != NULL, 0, a, NULL,
                0, 0, NULL };
    t.limit = o->tile_fraction * (double)o->cache_bytes * 8 / (avg > 0 ? avg : 1);
    t.ptr[0] = 0;
    if (st) {
        t.leaf = tessel_alloc_array(a, bound, sizeof(uint32_t));
        if (!t.leaf)
            return TESSEL_ENOMEM;
    }
    for (uint64_t i = 0; i < A->rows && !t.rc; i++) {
        uint64_t before = t.n, nodes = t.nnode, p0 = A->ptr[i], p1 = A->ptr[i + 1];
        split(&t, p0, p1, 0, A->cols, 0, NIL);
        if (t.n - before > 1 || over_limit(&t, p0, p1)) {
            g->tiled_rows++;
            g->subrows += t.n - before;
        }
        if (st && !t.rc && t.n - before == 1) { /* not split: no tree */
            t.nnode = nodes;
            t.leaf[t.n - 1] = NIL;
        }
    }
    if (st) {
        st->node = t.node;
        st->nnode = t.nnode;
        st->leaf = t.leaf;
    }
    if (t.rc)
        return t.rc;
    T->rows = t.n;
    T->ptr = T->own_ptr;
    *stamp = t.stamp; /* mark[] holds stamps up to here */
    return TESSEL_OK;
}

/* The tasks by column: for each k, the tasks holding it, ascending. */
static int tasks_by_column(const tpl_csr_view *T, const tessel_allocator *a, tpl_csr_view *TT)
{
    memset(TT, 0, sizeof(*TT));
    TT->rows = T->cols;
    TT->cols = T->rows;
    TT->nnz = T->nnz;
    TT->own_ptr = tessel_alloc_array(a, T->cols + 1, sizeof(uint64_t));
    TT->own_idx = tessel_alloc_array(a, T->nnz ? T->nnz : 1, sizeof(uint32_t));
    if (!TT->own_ptr || !TT->own_idx)
        return TESSEL_ENOMEM;
    uint64_t *ptr = TT->own_ptr;
    memset(ptr, 0, (T->cols + 1) * sizeof(uint64_t));
    for (uint64_t p = 0; p < T->nnz; p++)
        ptr[T->idx[p] + 1]++;
    for (uint64_t k = 0; k < T->cols; k++)
        ptr[k + 1] += ptr[k];
    for (uint64_t t = 0; t < T->rows; t++)
        for (uint64_t p = T->ptr[t]; p < T->ptr[t + 1]; p++)
            TT->own_idx[ptr[T->idx[p]]++] = (uint32_t)t;
    for (uint64_t k = T->cols; k > 0; k--)
        ptr[k] = ptr[k - 1];
    ptr[0] = 0;
    TT->ptr = TT->own_ptr;
    TT->idx = TT->own_idx;
    return TESSEL_OK;
}

/* Affinity order of the tasks; the window: as many tasks as the cache
 * holds fibers on average, divided by the average task length. */
static int task_order(const tpl_csr_view *T, const tpl_csr_view *B, const tpl_options *o,
                      const tessel_spec_level *lv, const tessel_allocator *a, uint32_t **order)
{
    uint64_t K = B->rows;
    double avg = K ? (double)fiber_bits(B->nnz / K, lv) : 1;
    double fit = avg > 0 ? (double)tpl_sat_mul(o->cache_bytes, 8) / avg : 0;
    uint64_t w = fit >= 1024 ? 1024 : (uint64_t)fit;
    if (w < 1)
        w = 1;
    uint64_t per_row = T->rows ? (T->nnz + T->rows - 1) / T->rows : 1;
    w = per_row ? w / per_row : w;
    if (w < 1)
        w = 1;
    tpl_csr_view TT;
    int rc = tasks_by_column(T, a, &TT);
    if (!rc) {
        *order = tessel_alloc_array(a, T->rows, sizeof(uint32_t));
        rc = *order ? affinity_order(T, &TT, w, a, *order) : TESSEL_ENOMEM;
    }
    tpl_csr_view_free(a, &TT);
    return rc;
}

/* `partials: cache`: one task's merge tree in the scheduler's order (gamma
 * §3.3: higher-level tasks first, so a partial fiber is consumed as soon as
 * its siblings are done): a post-order walk of the balanced tree whose
 * level-L nodes merge R^L consecutive fibers (the groups of merge_rounds).
 * A node at level 1 <= L < D (D the root's level) produces a partial fiber
 * after its children; the root's output leaves the PE. */
typedef struct walker {
    fiber_cache *c;
    const tpl_csr_view *T, *B;
    const tessel_spec_level *lv;
    uint64_t gsz[66]; /* R^L, saturated */
    uint64_t *mark, *stamp;
    tpl_gamma_counts *g;
    uint32_t *stack; /* children's slots of the nodes on the walk */
    uint64_t top;
    uint32_t last; /* the slot the last node produced */
} walker;

static void walk(walker *w, uint64_t p0, uint64_t g0, uint64_t g1, unsigned L, unsigned D)
{
    if (L == 0) {
        cache_ref(w->c, w->B, w->T->idx[p0 + g0], w->lv, w->g);
        return;
    }
    uint64_t base = w->top, step = w->gsz[L - 1];
    for (uint64_t c0 = g0; c0 < g1; c0 = c0 + step < g1 ? c0 + step : g1) {
        walk(w, p0, c0, c0 + step < g1 ? c0 + step : g1, L - 1, D);
        if (L > 1)
            w->stack[w->top++] = w->last;
    }
    for (uint64_t i = base; i < w->top; i++)
        part_use(w->c, w->stack[i], w->g);
    w->top = base;
    if (L < D)
        w->last = part_new(w->c, w->B,
                           union_size(w->T, w->B, p0 + g0, p0 + g1, w->mark, w->stamp), w->lv,
                           w->g);
}

/* The root's level for n fibers: the least D >= 1 with R^D >= n. */
static unsigned levels(const walker *w, uint64_t n)
{
    unsigned D = 1;
    while (D < 65 && w->gsz[D] < n)
        D++;
    return D;
}

/* Task done under tiling: its leaf's partial fiber, then each ancestor
 * whose children are all done merges them (one round: at most R). */
static void task_done(walker *w, split_tree *st, uint32_t x)
{
    while (x != NIL) {
        tnode *n = &st->node[x];
        if (n->spill)
            n->slot = part_new(w->c, w->B, n->nnz, w->lv, w->g);
        if (n->parent == NIL || --st->node[n->parent].left)
            return;
        x = n->parent;
        for (uint32_t ch = st->node[x].first; ch != NIL; ch = st->node[ch].next)
            part_use(w->c, st->node[ch].slot, w->g);
    }
}

static int gamma_exact(const tessel_spec *spec, const tpl_roles *r,
                       const tessel_workload_data *data, const tpl_options *o,
                       const tessel_allocator *a, tpl_gamma_counts *g)
{
    const tessel_spec_level *lv = &spec->level[1];
    const tessel_tensor *ta = data->tensor[r->ta], *tb = data->tensor[r->tb];
    tpl_csr_view A, B, T;
    memset(&B, 0, sizeof(B));
    memset(&T, 0, sizeof(T));
    fiber_cache c;
    memset(&c, 0, sizeof(c));
    uint64_t *mark = NULL, stamp = 0;
    uint32_t *order = NULL, *stack = NULL;
    split_tree st;
    memset(&st, 0, sizeof(st));
    int pc = !o->partials_mem; /* partials: cache */
    int rc = tpl_csr_of(ta, tpl_mode_of(&spec->workload.tensor[r->ta], r->xi) == 0 ? 0 : 1, a, &A);
    if (!rc)
        rc = tpl_csr_of(tb, tpl_mode_of(&spec->workload.tensor[r->tb], r->xk) == 0 ? 0 : 1, a, &B);
    if (rc)
        goto out;
    /* tpl_counts_exact has checked the shapes */
    uint64_t J = B.cols;
    mark = tessel_alloc_array(a, J ? J : 1, sizeof(uint64_t));
    if (!mark) {
        rc = TESSEL_ENOMEM;
        goto out;
    }
    memset(mark, 0, (J ? J : 1) * sizeof(uint64_t));
    rc = make_tasks(&A, &B, o, lv, mark, a, &stamp, g, &T, pc && o->tiling ? &st : NULL);
    if (!rc && o->reorder && T.rows)
        rc = task_order(&T, &B, o, lv, a, &order);
    if (rc)
        goto out;
    walker w = { &c, &T, &B, lv, { 1 }, mark, &stamp, g, NULL, 0, NIL };
    uint64_t S = 0;
    if (pc) {
        /* live partial fibers at most: the split tree's, plus per task up
         * to min(R, n) children on each level of its walk */
        uint64_t nmax = 0;
        for (uint64_t t = 0; t < T.rows; t++)
            nmax = T.ptr[t + 1] - T.ptr[t] > nmax ? T.ptr[t + 1] - T.ptr[t] : nmax;
        for (unsigned L = 1; L < 66; L++)
            w.gsz[L] = tpl_sat_mul(w.gsz[L - 1], o->radix);
        uint64_t fan = o->radix < nmax ? o->radix : nmax;
        uint64_t deep = tpl_sat_mul(fan, levels(&w, nmax));
        S = tpl_sat_add(tpl_sat_add(deep, st.nnode), 1);
        if (S > (uint64_t)NIL - 1 - B.rows) {
            rc = TESSEL_ENOMEM; /* more live fibers than 32-bit slots */
            goto out;
        }
        stack = tessel_alloc_array(a, deep + 1, sizeof(uint32_t));
        if (!stack) {
            rc = TESSEL_ENOMEM;
            goto out;
        }
        w.stack = stack;
    }
    rc = cache_init(&c, o, lv, B.rows, S, &B, a);
    if (rc)
        goto out;
    for (uint64_t tt = 0; pc && tt < T.rows; tt++) {
        uint64_t t = order ? order[tt] : tt, n = T.ptr[t + 1] - T.ptr[t];
        unsigned D = levels(&w, n);
        walk(&w, T.ptr[t], 0, n, D, D);
        if (st.leaf && st.leaf[t] != NIL)
            task_done(&w, &st, st.leaf[t]);
    }
    for (uint64_t tt = 0; !pc && tt < T.rows; tt++) {
        uint64_t t = order ? order[tt] : tt;
        for (uint64_t p = T.ptr[t]; p < T.ptr[t + 1]; p++)
            cache_ref(&c, &B, T.idx[p], lv, g);
        merge_rounds(&T, &B, T.ptr[t], T.ptr[t + 1], o->radix, mark, &stamp, g);
    }
out:
    cache_free(&c, a);
    tessel_dealloc(a, mark);
    tessel_dealloc(a, order);
    tessel_dealloc(a, stack);
    tessel_dealloc(a, st.node);
    tessel_dealloc(a, st.leaf);
    tpl_csr_view_free(a, &A);
    tpl_csr_view_free(a, &B);
    tpl_csr_view_free(a, &T);
    return rc;
}
/* ------------------------------------------------------------------ */
/* Statistical: Che's approximation (see the top comment). */

/* The banded refinement of Che's approximation, when the statistics hold
 * A's base tile grid by rows (i then k): the trace visits A's row blocks
 * (bands) in order, and within band b fiber k is referenced
 * n_kb = n_k cnt(b, K) / cnt(., K) times (K its column block: its
 * references spread over the bands as its block's nonzeros are), as a
 * Poisson process over the band's M_b references. Per band, Che's T_b
 * solves sum_k s_k (1 - exp(-n_kb T_b / M_b)) = C over the band's fibers
 * (T_b infinite when the band's expected footprint sum_k s_k (1 -
 * exp(-n_kb)) fits). Fiber k then misses on its first reference in the
 * band unless resident from earlier bands (probability r_k), and on each
 * later one with probability exp(-n_kb T_b / M_b):
 *     misses_kb = p_kb (1 - r_k) + (n_kb - p_kb) exp(-n_kb T_b / M_b),
 *     p_kb = 1 - exp(-n_kb)  (referenced at all in the band).
 * At the band's end r_k = 1 - exp(-n_kb T_b / M_b) for its fibers (p_kb
 * when T_b is infinite), and the fibers it did not reference survive with
 * probability max(0, 1 - footprint / C) (a cumulative factor per band, so
 * a band costs only its own fibers). Our heuristic extension of Che (the
 * independent reference model within a band, a row-block's worth of
 * locality across them); O(non-empty tiles x tile width x bisection
 * steps). */
static int che_banded(const tessel_spec_level *lv, const tessel_tile_grid *g,
                      const uint64_t *a_cols, const uint64_t *b_rows, uint64_t K, double cap,
                      const tessel_allocator *a, double *misses_out, double *miss_nnz_out)
{
    uint64_t tw = g->tile[1], nb = g->extent[0], nkb = g->extent[1];
    double *colsum = tessel_alloc_array(a, nkb ? nkb : 1, sizeof(double));
    double *res = tessel_alloc_array(a, K ? K : 1, sizeof(double));
    uint64_t *last = tessel_alloc_array(a, K ? K : 1, sizeof(uint64_t));
    double *cum = tessel_alloc_array(a, nb + 1, sizeof(double));
    if (!colsum || !res || !last || !cum) {
        tessel_dealloc(a, colsum);
        tessel_dealloc(a, res);
        tessel_dealloc(a, last);
        tessel_dealloc(a, cum);
        return TESSEL_ENOMEM;
    }
    memset(colsum, 0, (nkb ? nkb : 1) * sizeof(double));
    for (uint64_t t = 0; t < g->nonempty; t++)
        colsum[g->key[t]] += (double)g->count[t];
    for (uint64_t k = 0; k < K; k++)
        res[k] = 0, last[k] = 0;
    cum[0] = 0;
    double misses = 0, miss_nnz = 0;
    uint64_t t0 = 0;
    for (uint64_t b = 0; b < nb; b++) {
        cum[b + 1] = cum[b];
        if (t0 >= g->nonempty || g->group[t0] != b)
            continue;
        uint64_t t1 = t0;
        double M = 0;
        while (t1 < g->nonempty && g->group[t1] == b)
            M += (double)g->count[t1++];
        /* the band's footprint */
        double foot = 0;
        for (uint64_t t = t0; t < t1; t++) {
            double share = (double)g->count[t] / colsum[g->key[t]];
            uint64_t k1 = (g->key[t] + 1) * tw < K ? (g->key[t] + 1) * tw : K;
            for (uint64_t k = g->key[t] * tw; k < k1; k++) {
                double s = (double)fiber_bits(b_rows[k], lv);
                if (a_cols[k] && s <= cap)
                    foot += s * -expm1(-(double)a_cols[k] * share);
            }
        }
        double T = INFINITY;
        if (foot > cap) {
            double lo = 0, hi = M;
            for (int it = 0; it < 60; it++) {
                double mid =
                    it < 30 && hi > 2 * lo ? sqrt((lo > 0 ? lo : 1e-9 * M) * hi) : 0.5 * (lo + hi);
                double f = 0;
                for (uint64_t t = t0; t < t1; t++) {
                    double share = (double)g->count[t] / colsum[g->key[t]];
                    uint64_t k1 = (g->key[t] + 1) * tw < K ? (g->key[t] + 1) * tw : K;
                    for (uint64_t k = g->key[t] * tw; k < k1; k++) {
                        double s = (double)fiber_bits(b_rows[k], lv);
                        if (a_cols[k] && s <= cap)
                            f += s * -expm1(-(double)a_cols[k] * share * mid / M);
                    }
                }
                if (f < cap)
                    lo = mid;
                else
                    hi = mid;
            }
            T = 0.5 * (lo + hi);
        }
        for (uint64_t t = t0; t < t1; t++) {
            double share = (double)g->count[t] / colsum[g->key[t]];
            uint64_t k1 = (g->key[t] + 1) * tw < K ? (g->key[t] + 1) * tw : K;
            for (uint64_t k = g->key[t] * tw; k < k1; k++) {
                if (!a_cols[k])
                    continue;
                double n = (double)a_cols[k] * share;
                double s = (double)fiber_bits(b_rows[k], lv);
                double p = -expm1(-n), m, r;
                if (s > cap) {
                    m = n, r = 0;
                } else {
                    double r0 = res[k] * exp(cum[b] - cum[last[k]]);
                    double e = isinf(T) ? 0 : exp(-n * T / M);
                    m = p * (1 - r0) + (n - p > 0 ? (n - p) * e : 0);
                    r = isinf(T) ? p + (1 - p) * r0 : 1 - e;
                }
                misses += m;
                miss_nnz += m * (double)b_rows[k];
                res[k] = r;
                last[k] = b + 1;
            }
        }
        double sigma = foot < cap ? 1 - foot / cap : 0;
        cum[b + 1] = cum[b] + log(sigma > 1e-300 ? sigma : 1e-300);
        t0 = t1;
    }
    tessel_dealloc(a, colsum);
    tessel_dealloc(a, res);
    tessel_dealloc(a, last);
    tessel_dealloc(a, cum);
    *misses_out = misses;
    *miss_nnz_out = miss_nnz;
    return TESSEL_OK;
}

/* Che per set for the set-associative FiberCache (`policy:
 * set-associative`): B's layout follows from the statistics alone (the
 * prefix sums of nnz(B row k) place fiber k's lines exactly, as in the
 * exact trace), and line l is referenced at the rate r_l = sum of n_k over
 * the fibers k it holds part of (n_k = nnz(A column k)). Each set is an
 * LRU cache of `ways` equal lines under the independent reference model:
 * T_s solves sum_{l in s} (1 - exp(-r_l T_s / M)) = ways (T_s infinite
 * when the set's referenced lines fit), line l misses 1 + (r_l - 1)
 * exp(-r_l T_s / M) times, and a reference to fiber k misses some line
 * with probability 1 - prod_{l in k} (1 - exp(-r_l T_s(l) / M)) (sets
 * taken as independent), its first reference always. O(lines of B x
 * bisection steps). */
typedef struct sa_layout {
    uint64_t sets, ways, line_bits, entry_bits, nlines;
    double M;
} sa_layout;

static double set_time(const sa_layout *L, const double *rate, uint64_t s)
{
    uint64_t used = 0;
    for (uint64_t l = s; l < L->nlines; l += L->sets)
        used += rate[l] > 0;
    if (used <= L->ways)
        return INFINITY;
    double lo = 0, hi = L->M > 0 ? L->M : 1;
    for (int it = 0; it < 200; it++) { /* grow until the set overflows */
        double f = 0;
        for (uint64_t l = s; l < L->nlines; l += L->sets)
            f += -expm1(-rate[l] * hi / L->M);
        if (f >= (double)L->ways)
            break;
        lo = hi;
        hi *= 2;
    }
    for (int it = 0; it < 100 && hi - lo > 1e-9 * hi; it++) {
        double mid = 0.5 * (lo + hi), f = 0;
        for (uint64_t l = s; l < L->nlines; l += L->sets)
            f += -expm1(-rate[l] * mid / L->M);
        if (f < (double)L->ways)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static int che_set_assoc(const tessel_spec_level *lv, const tpl_options *o, const uint64_t *a_cols,
                         const uint64_t *b_rows, uint64_t K, double M, const tessel_allocator *a,
                         tpl_gamma_counts *g, double *misses_out, double *miss_nnz_out)
{
    sa_layout L = { o->cache_bytes / (o->ways * o->line_bytes), o->ways, o->line_bytes * 8,
                    (uint64_t)lv->value_bits + lv->coord_bits,  0,       M };
    uint64_t total = 0;
    for (uint64_t k = 0; k < K; k++)
        total = tpl_sat_add(total, tpl_sat_mul(b_rows[k], L.entry_bits));
    L.nlines = total / L.line_bits + (total % L.line_bits != 0);
    double *rate = tessel_alloc_array(a, L.nlines ? L.nlines : 1, sizeof(double));
    double *T = tessel_alloc_array(a, L.sets, sizeof(double));
    if (!rate || !T) {
        tessel_dealloc(a, rate);
        tessel_dealloc(a, T);
        return TESSEL_ENOMEM;
    }
    for (uint64_t l = 0; l < L.nlines; l++)
        rate[l] = 0;
    uint64_t pos = 0;
    for (uint64_t k = 0; k < K; pos += b_rows[k] * L.entry_bits, k++)
        if (b_rows[k] && a_cols[k])
            for (uint64_t l = pos / L.line_bits;
                 l <= (pos + b_rows[k] * L.entry_bits - 1) / L.line_bits; l++)
                rate[l] += (double)a_cols[k];
    double line_misses = 0;
    for (uint64_t s = 0; s < L.sets; s++) {
        T[s] = set_time(&L, rate, s);
        for (uint64_t l = s; l < L.nlines; l += L.sets)
            if (rate[l] > 0)
                line_misses += 1 + (isinf(T[s]) ? 0 : (rate[l] - 1) * exp(-rate[l] * T[s] / M));
    }
    double misses = 0, miss_nnz = 0;
    pos = 0;
    for (uint64_t k = 0; k < K; pos += b_rows[k] * L.entry_bits, k++) {
        if (!b_rows[k] || !a_cols[k])
            continue;
        double all_in = 1;
        for (uint64_t l = pos / L.line_bits;
             l <= (pos + b_rows[k] * L.entry_bits - 1) / L.line_bits; l++) {
            double t = T[l % L.sets];
            all_in *= isinf(t) ? 1 : -expm1(-rate[l] * t / M);
        }
        double m = 1 + ((double)a_cols[k] - 1) * (1 - all_in);
        misses += m;
        miss_nnz += m * (double)b_rows[k];
    }
    tessel_dealloc(a, rate);
    tessel_dealloc(a, T);
    g->line_misses = tpl_round_count(line_misses);
    *misses_out = misses;
    *miss_nnz_out = miss_nnz;
    return TESSEL_OK;
}

/* The stat path's spills: the merger's rounds over a row (or leaf
 * subrow) of n fibers, and selective tiling's subrows (see split) split
 * by the column mass of A: a range's share of a row's entries is its
 * share of nnz(A) (pre: prefix sums of nnz(A column k)). A subrow of n
 * expected entries is non-empty with probability 1 - exp(-n) and its
 * partial fiber holds U (1 - exp(-n p / U)) columns. A split node costs
 * min(R, its column range): O(tiled rows x min(R, K) x depth) in all,
 * fine at radix 64, seconds when radix approaches K on large matrices.
 *
 * `partials: cache` also records each partial fiber's reuse distance d:
 * the B references between its production and its consumption in the
 * walk's order (exact path), i.e. those of its later siblings: (R - 1 - j)
 * R^L for the j-th level-L fiber of a full parent, the rest of the row
 * for the last parent's, and the expected entries of the later parts for a
 * tiled subrow. Rows of equal length have equal trees, so the rows are
 * taken by distinct length, each record weighted by the rows' count
 * (mult). */
typedef struct stat_rec {
    double d, nnz, w; /* reuse distance, expected entries, expected count */
} stat_rec;

typedef struct stat_spills {
    double p, U, limit;
    uint64_t R;
    const double *pre;
    double sf, snz, tiled;
    double mult; /* rows of this length (1 for partials: memory) */
    /* partials: cache (on) */
    int on;
    const tessel_allocator *a;
    stat_rec *rec;
    uint64_t nrec, crec;
    int rc;
} stat_spills;

static void stat_record(stat_spills *s, double d, double nnz, double w)
{
    if (!s->on || s->rc || !(w > 0))
        return;
    if (s->nrec == s->crec) {
        uint64_t c = s->crec ? 2 * s->crec : 256;
        stat_rec *r = tessel_realloc_array(s->a, s->rec, c, sizeof(stat_rec));
        if (!r) {
            s->rc = TESSEL_ENOMEM;
            return;
        }
        s->rec = r;
        s->crec = c;
    }
    s->rec[s->nrec++] = (stat_rec){ d, nnz, w };
}

static void stat_rounds(stat_spills *s, uint64_t n)
{
    double U = s->U, p = s->p;
    for (uint64_t gsz = s->R; gsz < n; gsz = tpl_sat_mul(gsz, s->R)) {
        uint64_t full = n / gsz, rest = n % gsz;
        double u_full = U > 0 ? -U * expm1(-(double)gsz * p / U) : 0;
        double u_rest = U > 0 ? -U * expm1(-(double)rest * p / U) : 0;
        s->sf += s->mult * ((double)full + (rest > 0));
        s->snz += s->mult * ((double)full * u_full + (rest ? u_rest : 0));
        if (s->on) {
            uint64_t P = tpl_sat_mul(gsz, s->R), nf = n / P;
            for (uint64_t j = 0; nf && j < s->R; j++)
                stat_record(s, (double)((s->R - 1 - j) * gsz), u_full, s->mult * (double)nf);
            for (uint64_t g0 = nf * P; g0 < n; g0 += gsz) {
                uint64_t g1 = n - g0 > gsz ? g0 + gsz : n;
                stat_record(s, (double)(n - g1), g1 - g0 == gsz ? u_full : u_rest, s->mult);
            }
        }
        if (gsz > UINT64_MAX / s->R)
            break;
    }
}

static void stat_split(stat_spills *s, double n, uint64_t k0, uint64_t k1, int spill, double d)
{
    if (spill) {
        double f = -expm1(-n), u = s->U > 0 ? -s->U * expm1(-n * s->p / s->U) : 0;
        s->sf += s->mult * f;
        s->snz += s->mult * u;
        stat_record(s, d, f > 0 ? u / f : 0, s->mult * f);
    }
    double W = s->pre && k1 > k0 ? s->pre[k1] - s->pre[k0] : 0;
    if (!(n > 1 && n > s->limit && k1 - k0 > 1 && W > 0)) {
        stat_rounds(s, tpl_round_count(n));
        return;
    }
    /* R parts, or the w single columns when R >= w (the other parts empty) */
    uint64_t w = k1 - k0, parts = s->R < w ? s->R : w;
    for (uint64_t c = 0; c < parts; c++) {
        uint64_t c0 = k0 + w * c / parts, c1 = k0 + w * (c + 1) / parts;
        double nc = n * (s->pre[c1] - s->pre[c0]) / W;
        if (nc <= 0)
            continue;
        if (nc >= n * (1 - 1e-12)) { /* one part holds it all: narrow, the
                                         * same subrow (its spill counted above) */
            stat_split(s, n, c0, c1, 0, d);
            return;
        }
        stat_split(s, nc, c0, c1, 1, n * (s->pre[k1] - s->pre[c1]) / W);
    }
}

/* Che's load at characteristic time T: B's fibers that fit, resident with
 * probability 1 - exp(-n_k T / M), plus (partials: cache, sp) each partial
 * fiber that fits, resident for min(d, T) of the M references (it leaves
 * when consumed, or when T references pass without a use). */
typedef struct che_in {
    const tessel_spec_level *lv;
    const uint64_t *a_cols, *b_rows;
    uint64_t K;
    double M, cap;
    const stat_spills *sp;
} che_in;

static double che_load(const che_in *c, double T)
{
    double f = 0;
    for (uint64_t k = 0; k < c->K; k++) {
        double s = (double)fiber_bits(c->b_rows[k], c->lv);
        if (c->a_cols[k] && s <= c->cap)
            f += s * -expm1(-(double)c->a_cols[k] * T / c->M);
    }
    for (uint64_t i = 0; c->sp && i < c->sp->nrec; i++) {
        const stat_rec *r = &c->sp->rec[i];
        double s = r->nnz * ((double)c->lv->value_bits + c->lv->coord_bits) + c->lv->offset_bits;
        if (s <= c->cap)
            f += r->w * s * (r->d < T ? r->d : T) / c->M;
    }
    return f;
}

/* T solving che_load(T) = C by doubling then bisection (the load grows
 * with T); INFINITY when everything fits (`all`: the load as T grows). */
static double che_time(const che_in *c, double all)
{
    if (!(all > c->cap))
        return INFINITY;
    double lo = 0, hi = 1;
    for (int it = 0; it < 200; it++) { /* grow until the cache overflows */
        if (che_load(c, hi) >= c->cap)
            break;
        lo = hi;
        hi *= 2;
    }
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (che_load(c, mid) < c->cap)
            lo = mid;
        else
            hi = mid;
        if (hi - lo <= 1e-9 * hi)
            break;
    }
    return 0.5 * (lo + hi);
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static int gamma_stat(const tessel_spec *spec, const tpl_roles *r, const tessel_stat_data *stats,
                      const tpl_counts *cnt, const tpl_options *o, const tessel_allocator *a,
                      tpl_gamma_counts *g)
{
    const tessel_spec_level *lv = &spec->level[1];
    uint64_t n_ai, n_ak, n_bk;
    int x;
    const uint64_t *a_rows = tessel_stat_data_line_nnz(stats, r->ta, 0, &n_ai, &x);
    const uint64_t *a_cols = tessel_stat_data_line_nnz(stats, r->ta, 1, &n_ak, &x);
    const uint64_t *b_rows = tessel_stat_data_line_nnz(stats, r->tb, 0, &n_bk, &x);
    /* tpl_counts_stat has checked these */
    double M = 0, cap = (double)o->cache_bytes * 8, all = 0;
    for (uint64_t k = 0; k < n_bk; k++) {
        if (!a_cols[k])
            continue;
        M += (double)a_cols[k];
        double s = (double)fiber_bits(b_rows[k], lv);
        if (s <= cap)
            all += s;
    }
    /* spills: the union of m fibers of p products each on average, as the
     * occupancy of U columns, U the row's expected output nonzeros (its
     * share nnz(Z) n / nnz(A) of the output estimate, at most J): uniform
     * independent hits within the columns the row reaches */
    double J = (double)cnt->cols_b;
    int pc = !o->partials_mem;
    stat_spills sp = { cnt->nnz_a ? (double)cnt->multiplies / (double)cnt->nnz_a : 0,
                       0,
                       INFINITY,
                       o->radix,
                       NULL,
                       0,
                       0,
                       0,
                       1,
                       pc,
                       a,
                       NULL,
                       0,
                       0,
                       0 };
    double *pre = NULL;
    uint64_t *len = NULL;
    int rc = TESSEL_OK;
    if (o->tiling) {
        double avg = n_bk ? (double)fiber_bits(cnt->nnz_b / n_bk, lv) : 1;
        sp.limit = o->tile_fraction * cap / (avg > 0 ? avg : 1);
        pre = tessel_alloc_array(a, n_ak + 1, sizeof(double));
        if (!pre)
            return TESSEL_ENOMEM;
        pre[0] = 0;
        for (uint64_t k = 0; k < n_ak; k++)
            pre[k + 1] = pre[k] + (double)a_cols[k];
        sp.pre = pre;
    }
    if (pc) { /* by distinct row length */
        len = tessel_alloc_array(a, n_ai ? n_ai : 1, sizeof(uint64_t));
        if (!len) {
            rc = TESSEL_ENOMEM;
            goto out;
        }
        memcpy(len, a_rows, n_ai * sizeof(uint64_t));
        qsort(len, n_ai, sizeof(uint64_t), cmp_u64);
    }
    for (uint64_t i = 0; i < n_ai && !sp.rc;) {
        uint64_t n = pc ? len[i] : a_rows[i], i1 = i + 1;
        while (pc && i1 < n_ai && len[i1] == n)
            i1++;
        sp.mult = (double)(i1 - i);
        sp.U = cnt->nnz_a ? (double)cnt->nnz_z * (double)n / (double)cnt->nnz_a : 0;
        if (sp.U > J)
            sp.U = J;
        if (pre && n > 1 && (double)n > sp.limit)
            g->tiled_rows += i1 - i;
        stat_split(&sp, (double)n, 0, n_ak, 0, 0);
        i = i1;
    }
    rc = sp.rc;
    if (rc)
        goto out;
    /* characteristic times, in references: B's alone, and (partials:
     * cache) with the partial fibers' occupancy, the one then used for B
     * (lru under the independent reference model) and for the partials */
    che_in ci = { lv, a_cols, b_rows, n_bk, M, cap, NULL };
    double T = o->set_assoc ? INFINITY : che_time(&ci, all);
    double Tp = INFINITY;
    if (pc && M > 0) {
        double pall = all;
        for (uint64_t i = 0; i < sp.nrec; i++) {
            double s = sp.rec[i].nnz * ((double)lv->value_bits + lv->coord_bits) + lv->offset_bits;
            if (s <= cap)
                pall += sp.rec[i].w * s * sp.rec[i].d / M;
        }
        ci.sp = &sp;
        Tp = che_time(&ci, pall);
        if (!o->set_assoc)
            T = Tp;
    }
    double misses = 0, miss_nnz = 0, refs = 0;
    int idx[2] = { -1, -1 };
    const tessel_tile_grid *grid = o->stat_irm ? NULL : tessel_stat_data_grid(stats, r->ta, idx);
    if (o->set_assoc) {
        for (uint64_t k = 0; k < n_bk; k++)
            refs += (double)a_cols[k];
        rc = che_set_assoc(lv, o, a_cols, b_rows, n_bk, M, a, g, &misses, &miss_nnz);
        if (rc)
            goto out;
    } else if (grid && grid->order == 2 && idx[0] == (int)r->xi && idx[1] == (int)r->xk &&
               grid->dims[1] == n_bk && all > cap) {
        for (uint64_t k = 0; k < n_bk; k++)
            refs += (double)a_cols[k];
        rc = che_banded(lv, grid, a_cols, b_rows, n_bk, cap, a, &misses, &miss_nnz);
        if (rc)
            goto out;
    } else {
        for (uint64_t k = 0; k < n_bk; k++) {
            if (!a_cols[k])
                continue;
            double nk = (double)a_cols[k];
            double s = (double)fiber_bits(b_rows[k], lv);
            double m;
            if (s > cap)
                m = nk;
            else if (isinf(T))
                m = 1;
            else
                m = 1 + (nk - 1) * exp(-nk * T / M);
            misses += m;
            miss_nnz += m * (double)b_rows[k];
            refs += nk;
        }
    }
    g->misses = tpl_round_count(misses);
    g->miss_nnz = tpl_round_count(miss_nnz);
    g->hits = tpl_round_count(refs - misses);
    double sf = sp.sf, snz = sp.snz;
    if (pc) {
        /* a partial fiber of s bits reaches DRAM (written back, read back)
         * when it outlives its own characteristic time T_s, the time for
         * C - s bits of other items to arrive (load(T_s) = C - s; a large
         * fiber has less room above it in the LRU stack than Che's T
         * allows for small items), or does not fit at all. load() is
         * tabulated on a geometric grid below Tp: T_s <= Tp. */
        enum { NT = 121 };
        double tt[NT], ff[NT];
        for (int i = 0; !isinf(Tp) && i < NT; i++) {
            tt[i] = Tp * exp2((double)(i - (NT - 21)) / 10); /* Tp 2^-10 .. Tp 2^2 */
            ff[i] = che_load(&ci, tt[i]);
        }
        g->partial_fibers = tpl_round_count(sf);
        g->partial_nnz = tpl_round_count(snz);
        sf = snz = 0;
        for (uint64_t i = 0; i < sp.nrec; i++) {
            const stat_rec *q = &sp.rec[i];
            double s = q->nnz * ((double)lv->value_bits + lv->coord_bits) + lv->offset_bits;
            int out = s > cap;
            if (!out && !isinf(Tp)) {
                int lo = 0, hi = NT - 1; /* the first grid point whose load reaches C - s */
                while (lo < hi) {
                    int mid = (lo + hi) / 2;
                    if (ff[mid] >= cap - s)
                        hi = mid;
                    else
                        lo = mid + 1;
                }
                out = q->d > tt[lo];
            }
            if (out) {
                sf += q->w;
                snz += q->w * q->nnz;
            }
        }
    }
    g->spill_fibers = tpl_round_count(sf);
    g->spill_nnz = tpl_round_count(snz);
out:
    tessel_dealloc(a, pre);
    tessel_dealloc(a, len);
    tessel_dealloc(a, sp.rec);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Into tessel_result. */

/* policy set-associative: a bounded cache_bytes made of whole banks of
 * whole sets (banks x ways x line_bytes), and a tag array we can hold. */
static int check_organisation(const tessel_spec *spec, const tpl_options *o, tessel_diag *diag)
{
    const tessel_yaml_node *n = spec->template_.options;
    for (size_t i = 0; n && n->kind == TESSEL_YAML_MAPPING && i < n->count; i++)
        if (strcmp(n->keys[i]->value, "cache_bytes") == 0) {
            n = n->items[i]; /* point at the size given */
            break;
        }
    const char *file = n ? n->file : spec->template_.pos.file;
    uint64_t line = n ? n->line : spec->template_.pos.line;
    uint32_t col = n ? n->column : spec->template_.pos.column;
    uint64_t unit = tpl_sat_mul(tpl_sat_mul(o->banks, o->ways), o->line_bytes);
    if (o->cache_bytes == UINT64_MAX)
        return tessel_diag_set(diag, TESSEL_EINVAL, file, line, col, "template_options.cache_bytes",
                               "template gamma: policy set-associative needs a bounded cache "
                               "(cache_bytes or the capacity of level %s)",
                               spec->level[1].name);
    if (unit == UINT64_MAX || o->cache_bytes % unit != 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, file, line, col, "template_options.cache_bytes",
                               "template gamma: cache_bytes %llu is not a multiple of banks x "
                               "ways x line_bytes = %llu x %llu x %llu",
                               (unsigned long long)o->cache_bytes, (unsigned long long)o->banks,
                               (unsigned long long)o->ways, (unsigned long long)o->line_bytes);
    if (o->cache_bytes / o->line_bytes > (1ull << 28))
        return tessel_diag_set(diag, TESSEL_EINVAL, file, line, col, "template_options.cache_bytes",
                               "template gamma: %llu lines is more than the 2^28 the "
                               "set-associative trace holds",
                               (unsigned long long)(o->cache_bytes / o->line_bytes));
    return TESSEL_OK;
}

int tpl_gamma(const tessel_spec *spec, const tpl_roles *r, const tessel_workload_data *data,
              const tessel_stat_data *stats, const tpl_counts *c, const tpl_options *o,
              const tessel_allocator *a, tessel_result *out, tpl_gamma_counts *g, tessel_diag *diag)
{
    memset(g, 0, sizeof(*g));
    int rc = o->set_assoc ? check_organisation(spec, o, diag) : TESSEL_OK;
    if (rc)
        return rc;
    rc = data ? gamma_exact(spec, r, data, o, a, g) : gamma_stat(spec, r, stats, c, o, a, g);
    if (rc)
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    tpl_matraptor(spec, r, c, o, out);
    const tessel_spec_level *lv = &spec->level[1];
    unsigned v = lv->value_bits, cb = lv->coord_bits, ob = lv->offset_bits;
    tessel_traffic *tb = &out->traffic[1][r->tb], *tz = &out->traffic[1][0];
    tb->fills = g->misses;
    tb->in_data = tpl_bytes(g->miss_nnz, v);
    tb->in_metadata = tpl_sat_add(tpl_bytes(g->miss_nnz, cb), tpl_bytes(g->misses, ob));
    if (o->set_assoc) {
        /* whole lines: their bytes split between values and coordinates
         * as B's entries are, plus one offset per fiber reference that
         * missed a line */
        uint64_t lb = tpl_sat_mul(g->line_misses, o->line_bytes);
        tb->fills = g->line_misses;
        tb->in_data = lb / (v + cb) * v + lb % (v + cb) * v / (v + cb);
        tb->in_metadata = tpl_sat_add(lb - tb->in_data, tpl_bytes(g->misses, ob));
    }
    tb->algorithmic = tpl_sat_add(tb->fills, tb->updates);
    uint64_t sd = tpl_bytes(g->spill_nnz, v);
    uint64_t sm = tpl_sat_add(tpl_bytes(g->spill_nnz, cb), tpl_bytes(g->spill_fibers, ob));
    tz->updates = g->spill_fibers;
    tz->writebacks = tpl_sat_add(tz->writebacks, g->spill_fibers);
    tz->in_data = sd;
    tz->in_metadata = sm;
    tz->out_data = tpl_sat_add(tz->out_data, sd);
    tz->out_metadata = tpl_sat_add(tz->out_metadata, sm);
    tz->algorithmic = tpl_sat_add(tz->fills, tz->updates);
    tpl_finish(spec, out);
    return TESSEL_OK;
}

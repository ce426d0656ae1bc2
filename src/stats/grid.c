/* Tile occupancy grids: one streaming pass over a tensor, or a coarser grid
 * derived from a finer one without touching the tensor.
 *
 * Both walk their input in mode-0 order, one "group" (one row of tiles) at
 * a time, and count nonzeros per tile key (the packed coordinates of the
 * other modes) in a counter that is cleared between groups.  The counter is
 * a dense array when the key space is small next to the input, else an
 * open-addressing hash, so memory never follows the dense tile grid of a
 * huge sparse tensor. Each group's keys leave in ascending order.
 *
 * The grid keeps 8 B per non-empty tile (a 32-bit key and a 32-bit count)
 * and 8 B per row of tiles (issue 27 item 2). Its arrays are reserved once
 * from an upper bound counted before the pass (per row of tiles, the
 * smaller of its input entries and the key space: the row pointers give
 * it without touching the entries), so they never move while counting;
 * pages past the tiles found are never written, hence never resident, and
 * the arrays are shrunk to the tiles found at the end. */
#include <string.h>

#include "coltally.h"
#include "tessel/stats.h"

#define KEY_EMPTY UINT64_MAX
/* Key spaces up to this many counters are always dense. */
#define DENSE_MIN_KEYSPACE (1ull << 16)
#define MAX_KEYSPACE (1ull << 62)

typedef struct key_counter {
    const tessel_allocator *alloc;
    uint64_t keyspace;
    int dense;
    uint64_t *counts;   /* dense: keyspace counters; hash: hash_cap counters */
    uint64_t *slot_key; /* hash only */
    uint64_t hash_cap;  /* power of two */
    unsigned hash_shift;
    uint64_t *touched;  /* dense: keys; hash: slots; in first-touch order */
    uint64_t ntouched, touched_cap;
    uint64_t *scratch;  /* radix sort buffer, touched_cap words */
    uint64_t *keys;     /* hash only: the group's keys, touched_cap words */
    uint64_t asked;     /* out of memory: the bytes the failed step asked for */
    uint32_t *block;    /* count_blocked's chunk of keys (NULL: not yet, or none) */
    uint64_t block_cap;
} key_counter;

#define WRITER_SMALL 64
/* Interleaved copies of the small-occupancy histogram: consecutive tiles
 * of the same occupancy (uniform matrices: mostly 1) increment different
 * copies, instead of each increment waiting for the previous one's store. */
#define WRITER_LANES 4

typedef struct grid_writer {
    tessel_tile_grid *g;
    uint64_t cap;
    uint64_t next_row; /* rows of tiles before it have their offsets */
    uint64_t asked; /* out of memory: the bytes the failed growth asked for */
    /* Set: the counts go to this accumulator and the grid keeps none of
     * them (tessel_tile_occupancy_add). */
    tessel_occupancy_acc *acc;
    /* acc's tiles of occupancy below WRITER_SMALL, counted here and added to
     * acc once per occupancy at the end (the accumulator is order-free, so
     * the result is the same; one call per tile cost more than the count). */
    uint64_t small[WRITER_LANES][WRITER_SMALL];
    int failed;
} grid_writer;

/* bytes 0: a step of several allocations, the failed one not known here. */
static int oom(tessel_diag *diag, const char *step, uint64_t bytes)
{
    return tessel_diag_oom(diag, NULL, step, (size_t)bytes);
}

/* ------------------------------------------------------------------ */
/* key_counter */

static void counter_free(key_counter *c)
{
    tessel_dealloc(c->alloc, c->counts);
    tessel_dealloc(c->alloc, c->slot_key);
    tessel_dealloc(c->alloc, c->touched);
    tessel_dealloc(c->alloc, c->scratch);
    tessel_dealloc(c->alloc, c->keys);
    tessel_dealloc(c->alloc, c->block);
    memset(c, 0, sizeof(*c));
}

static unsigned shift_for(uint64_t cap)
{
    unsigned shift = 64;
    for (uint64_t v = cap; v > 1; v >>= 1)
        shift--;
    return shift;
}

/* Fresh zeroed counts and empty slots for a table of `cap` (a power of 2). */
static int alloc_table(const tessel_allocator *a, uint64_t cap, uint64_t **counts,
                       uint64_t **keys)
{
    *counts = tessel_alloc_array(a, cap, sizeof(uint64_t));
    *keys = tessel_alloc_array(a, cap, sizeof(uint64_t));
    if (!*counts || !*keys) {
        tessel_dealloc(a, *counts);
        tessel_dealloc(a, *keys);
        *counts = *keys = NULL;
        return TESSEL_ENOMEM;
    }
    memset(*counts, 0, cap * sizeof(uint64_t));
    memset(*keys, 0xff, cap * sizeof(uint64_t));
    return TESSEL_OK;
}

static int counter_init(key_counter *c, uint64_t keyspace, uint64_t input_entries,
                        const tessel_allocator *a)
{
    memset(c, 0, sizeof(*c));
    c->alloc = a;
    c->keyspace = keyspace;
    c->dense = keyspace <= DENSE_MIN_KEYSPACE || keyspace <= input_entries / 2;
    if (c->dense) {
        /* Past keyspace/8 touched keys a group is flushed by scanning the
         * array, so the touched list stops recording there. */
        c->counts = tessel_alloc_array(a, keyspace, sizeof(uint64_t));
        c->touched_cap = keyspace / 2 + 1;
        if (!c->counts)
            return TESSEL_ENOMEM;
        memset(c->counts, 0, keyspace * sizeof(uint64_t));
    } else {
        c->hash_cap = 2048;
        c->hash_shift = shift_for(c->hash_cap);
        c->touched_cap = c->hash_cap / 2;
        if (alloc_table(a, c->hash_cap, &c->counts, &c->slot_key))
            return TESSEL_ENOMEM;
    }
    c->touched = tessel_alloc_array(a, c->touched_cap, sizeof(uint64_t));
    c->scratch = tessel_alloc_array(a, c->touched_cap, sizeof(uint64_t));
    if (!c->dense)
        c->keys = tessel_alloc_array(a, c->touched_cap, sizeof(uint64_t));
    return c->touched && c->scratch && (c->dense || c->keys) ? TESSEL_OK : TESSEL_ENOMEM;
}

/* counter_init, recording what it asked for when it fails (the counters
 * and the touched lists). */
static int counter_start(key_counter *c, uint64_t keyspace, uint64_t input_entries,
                         const tessel_allocator *a)
{
    int rc = counter_init(c, keyspace, input_entries, a);
    if (rc)
        c->asked = (c->dense ? keyspace + 2 * (keyspace / 8 + 1) : 2 * 2048 + 3 * 1024) *
                   sizeof(uint64_t);
    return rc;
}

/* Linear probing in a table of `cap` slots: the slot holding key, or the
 * empty slot where it belongs. */
static uint64_t probe(const uint64_t *keys, uint64_t cap, unsigned shift, uint64_t key)
{
    uint64_t s = (key * 0x9E3779B97F4A7C15ull) >> shift;
    while (keys[s] != key && keys[s] != KEY_EMPTY)
        s = (s + 1) & (cap - 1);
    return s;
}

static uint64_t hash_find(const key_counter *c, uint64_t key)
{
    return probe(c->slot_key, c->hash_cap, c->hash_shift, key);
}

/* Doubles the table, keeping the current group; the touched list (slot
 * numbers) and its sort scratch grow with it so the load stays <= 1/2. */
static int hash_grow(key_counter *c)
{
    uint64_t cap = c->hash_cap * 2;
    uint64_t *counts, *keys;
    c->asked = (2 * cap + 3 * (cap / 2)) * sizeof(uint64_t); /* kept only on failure */
    if (alloc_table(c->alloc, cap, &counts, &keys))
        return TESSEL_ENOMEM;
    uint64_t *touched = tessel_realloc_array(c->alloc, c->touched, cap / 2, sizeof(uint64_t));
    if (touched)
        c->touched = touched;
    uint64_t *scratch = tessel_realloc_array(c->alloc, c->scratch, cap / 2, sizeof(uint64_t));
    if (scratch)
        c->scratch = scratch;
    uint64_t *group_keys = tessel_realloc_array(c->alloc, c->keys, cap / 2, sizeof(uint64_t));
    if (group_keys)
        c->keys = group_keys;
    if (!touched || !scratch || !group_keys) {
        tessel_dealloc(c->alloc, counts);
        tessel_dealloc(c->alloc, keys);
        return TESSEL_ENOMEM;
    }
    unsigned shift = shift_for(cap);
    for (uint64_t i = 0; i < c->ntouched; i++) {
        uint64_t old = c->touched[i];
        uint64_t s = probe(keys, cap, shift, c->slot_key[old]);
        keys[s] = c->slot_key[old];
        counts[s] = c->counts[old];
        c->touched[i] = s;
    }
    tessel_dealloc(c->alloc, c->counts);
    tessel_dealloc(c->alloc, c->slot_key);
    c->counts = counts;
    c->slot_key = keys;
    c->hash_cap = cap;
    c->hash_shift = shift;
    c->touched_cap = cap / 2;
    c->asked = 0;
    return TESSEL_OK;
}

static inline int counter_add(key_counter *c, uint64_t key, uint64_t weight)
{
    if (c->dense) {
        /* Without a branch on whether the key is new: once the tiles of a row
         * of tiles outnumber its entries (uniform matrices from about 4M
         * nonzeros on), that branch is mispredicted about once per entry.
         * The slot past the touched keys is written always and kept only
         * when the key is new. */
        uint64_t n = c->ntouched;
        if (n < c->touched_cap)
            c->touched[n] = key;
        c->ntouched = n + (c->counts[key] == 0);
        c->counts[key] += weight;
        return TESSEL_OK;
    }
    uint64_t s = hash_find(c, key);
    if (c->slot_key[s] == KEY_EMPTY) {
        if (c->ntouched == c->touched_cap) {
            if (hash_grow(c))
                return TESSEL_ENOMEM;
            s = hash_find(c, key);
        }
        c->slot_key[s] = key;
        c->touched[c->ntouched++] = s;
    }
    c->counts[s] += weight;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* grid_writer */

/* Reserves `cap` tiles (the pass's upper bound) and the row offsets. */
static int writer_open(grid_writer *w, uint64_t cap)
{
    tessel_tile_grid *g = w->g;
    uint64_t space = 1;
    for (unsigned m = 1; m < g->order; m++)
        space = g->extent[m] ? space * g->extent[m] : space; /* <= 2^62 (grid_create) */
    int wide_key = space - 1 > UINT32_MAX;
    w->asked = (g->extent[0] + 1) * sizeof(uint64_t) + cap * (wide_key ? 12 : 8);
    g->row = tessel_alloc_array(g->alloc, g->extent[0] + 1, sizeof(uint64_t));
    if (!g->row)
        return TESSEL_ENOMEM;
    g->row[0] = 0;
    w->cap = cap;
    if (cap == 0)
        return TESSEL_OK;
    if (wide_key)
        g->key64 = tessel_alloc_array(g->alloc, cap, sizeof(uint64_t));
    else
        g->key32 = tessel_alloc_array(g->alloc, cap, sizeof(uint32_t));
    g->count32 = tessel_alloc_array(g->alloc, cap, sizeof(uint32_t));
    if ((!g->key32 && !g->key64) || !g->count32)
        return TESSEL_ENOMEM;
    w->asked = 0;
    return TESSEL_OK;
}

/* The counts go 64-bit: a tile holds 2^32 or more nonzeros. */
static int writer_widen(grid_writer *w)
{
    tessel_tile_grid *g = w->g;
    uint64_t *wide = tessel_alloc_array(g->alloc, w->cap, sizeof(uint64_t));
    if (!wide) {
        w->asked = w->cap * sizeof(uint64_t);
        w->failed = 1;
        return TESSEL_ENOMEM;
    }
    for (uint64_t i = 0; i < g->nonempty; i++)
        wide[i] = g->count32[i];
    tessel_dealloc(g->alloc, g->count32);
    g->count32 = NULL;
    g->count64 = wide;
    return TESSEL_OK;
}

/* Row offsets up to row of tiles `group` (exclusive) take the tiles so far. */
static void writer_rows(grid_writer *w, uint64_t group)
{
    tessel_tile_grid *g = w->g;
    for (; w->next_row < group; w->next_row++)
        g->row[w->next_row + 1] = g->nonempty;
}

/* One tile of occupancy count into an occupancy count (w->acc): the small
 * ones in lane `lane`'s histogram, the rest added to acc. */
static inline void writer_tally(grid_writer *w, uint64_t lane, uint64_t count)
{
    if (count < WRITER_SMALL)
        w->small[lane][count]++;
    else if (tessel_occupancy_acc_add(w->acc, count, 1, NULL))
        w->failed = 1;
}

static void writer_emit(grid_writer *w, uint64_t key, uint64_t count)
{
    tessel_tile_grid *g = w->g;
    if (w->acc) {
        writer_tally(w, 0, count);
        g->nonempty++;
        return;
    }
    if (g->nonempty >= w->cap || (count > UINT32_MAX && g->count32 && writer_widen(w))) {
        w->failed = 1; /* the bound cannot be passed: a bug, reported as memory */
        return;
    }
    if (g->key32)
        g->key32[g->nonempty] = (uint32_t)key;
    else
        g->key64[g->nonempty] = key;
    if (g->count32)
        g->count32[g->nonempty] = (uint32_t)count;
    else
        g->count64[g->nonempty] = count;
    g->nonempty++;
}

/* counter_flush into an occupancy count, which takes the tiles in any
 * order (no sort): writer_emit's counting, the small occupancies spread
 * over the histogram's lanes. */
static void flush_unsorted(key_counter *c, grid_writer *w)
{
    uint64_t n = c->ntouched;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t s = c->touched[i];
        uint64_t count = c->counts[s];
        c->counts[s] = 0;
        writer_tally(w, i % WRITER_LANES, count);
    }
    if (!c->dense)
        for (uint64_t i = 0; i < n; i++)
            c->slot_key[c->touched[i]] = KEY_EMPTY;
    w->g->nonempty += n;
}

/* counter_flush of a dense counter past its touched list into an
 * occupancy count: every counter read and cleared, without a branch on
 * whether it is 0 (lane histograms' slot 0 takes the empty ones and is
 * never read). */
static void flush_scan(key_counter *c, grid_writer *w)
{
    uint64_t nonempty = 0;
    for (uint64_t k = 0; k < c->keyspace; k++) {
        uint64_t count = c->counts[k];
        c->counts[k] = 0;
        nonempty += count != 0;
        writer_tally(w, k % WRITER_LANES, count);
    }
    w->g->nonempty += nonempty;
}

/* Moves the counter's group into the grid, keys ascending; clears it. */
static int counter_flush(key_counter *c, uint64_t group, grid_writer *w)
{
    uint64_t n = c->ntouched;
    if (n == 0)
        return TESSEL_OK;
    if (!w->acc)
        writer_rows(w, group);
    if (w->acc && (!c->dense || n <= c->touched_cap)) {
        flush_unsorted(c, w);
    } else if (w->acc && c->dense) {
        flush_scan(c, w);
    } else if (c->dense && n > c->touched_cap) {
        for (uint64_t k = 0; k < c->keyspace; k++)
            if (c->counts[k]) {
                writer_emit(w, k, c->counts[k]);
                c->counts[k] = 0;
            }
    } else if (c->dense) {
        tessel_sort_u64(c->touched, c->scratch, n, c->keyspace - 1);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t k = c->touched[i];
            writer_emit(w, k, c->counts[k]);
            c->counts[k] = 0;
        }
    } else {
        for (uint64_t i = 0; i < n; i++)
            c->keys[i] = c->slot_key[c->touched[i]];
        tessel_sort_u64(c->keys, c->scratch, n, c->keyspace - 1);
        for (uint64_t i = 0; i < n; i++)
            writer_emit(w, c->keys[i], c->counts[hash_find(c, c->keys[i])]);
        /* Cleared by slot: emptying slots one key lookup at a time would cut
         * the probe chains of keys not yet looked up. */
        for (uint64_t i = 0; i < n; i++) {
            c->counts[c->touched[i]] = 0;
            c->slot_key[c->touched[i]] = KEY_EMPTY;
        }
    }
    c->ntouched = 0;
    if (!w->acc)
        writer_rows(w, group + 1);
    return w->failed ? TESSEL_ENOMEM : TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Grid setup */

static int grid_create(unsigned order, const uint64_t *dims, const uint64_t *tile, uint64_t nnz,
                       const tessel_allocator *a, tessel_tile_grid **out, uint64_t *keyspace,
                       tessel_diag *diag)
{
    *out = NULL;
    for (unsigned m = 0; m < order; m++)
        if (tile[m] == 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "tile",
                                   "tile extent of mode %u is 0; tile extents must be >= 1", m);
    uint64_t space = 1;
    uint64_t extent[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < order; m++) {
        uint64_t t = tile[m] < dims[m] ? tile[m] : (dims[m] ? dims[m] : 1);
        extent[m] = dims[m] ? (dims[m] - 1) / t + 1 : 0;
        if (m > 0 && extent[m] > 0) {
            if (space > MAX_KEYSPACE / extent[m])
                return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, "tile",
                                       "the tile grid is too fine: modes 1..%u have more than "
                                       "2^62 tiles together; use larger tiles",
                                       order - 1);
            space *= extent[m];
        }
    }
    tessel_tile_grid *g = tessel_alloc(a, sizeof(*g));
    if (!g)
        return oom(diag, "creating a tile grid", sizeof(*g));
    memset(g, 0, sizeof(*g));
    g->alloc = a;
    g->order = order;
    g->nnz = nnz;
    for (unsigned m = 0; m < order; m++) {
        g->dims[m] = dims[m];
        g->tile[m] = tile[m];
        g->extent[m] = extent[m];
    }
    *keyspace = space ? space : 1;
    *out = g;
    return TESSEL_OK;
}

/* Offsets of the rows of tiles after the last non-empty one; the arrays cut
 * to the tiles found (realloc keeps the leading bytes). */
static void grid_finish(grid_writer *w)
{
    tessel_tile_grid *g = w->g;
    writer_rows(w, g->extent[0]);
    if (g->nonempty == w->cap)
        return;
    uint64_t n = g->nonempty ? g->nonempty : 1;
    void *p;
    if (g->key32 && (p = tessel_realloc_array(g->alloc, g->key32, n, sizeof(uint32_t))))
        g->key32 = p;
    if (g->key64 && (p = tessel_realloc_array(g->alloc, g->key64, n, sizeof(uint64_t))))
        g->key64 = p;
    if (g->count32 && (p = tessel_realloc_array(g->alloc, g->count32, n, sizeof(uint32_t))))
        g->count32 = p;
    if (g->count64 && (p = tessel_realloc_array(g->alloc, g->count64, n, sizeof(uint64_t))))
        g->count64 = p;
}

void tessel_tile_grid_free(tessel_tile_grid **gp)
{
    if (!gp || !*gp)
        return;
    tessel_tile_grid *g = *gp;
    *gp = NULL;
    tessel_dealloc(g->alloc, g->row);
    tessel_dealloc(g->alloc, g->key32);
    tessel_dealloc(g->alloc, g->key64);
    tessel_dealloc(g->alloc, g->count32);
    tessel_dealloc(g->alloc, g->count64);
    tessel_dealloc(g->alloc, g);
}

/* ------------------------------------------------------------------ */
/* Building from a tensor */

/* Tile key of entry k (modes 1..order-1, mixed radix, last mode fastest). */
static uint64_t entry_key(const tessel_tensor *t, const uint64_t *tile, const uint64_t *extent,
                          uint64_t k)
{
    uint64_t key = 0;
    for (unsigned m = 1; m < t->order; m++)
        key = key * extent[m] + t->idx[m][k] / tile[m];
    return key;
}

/* count_blocked: a dense key space of more counters than this (2 MiB)
 * leaves the caches; its keys are grouped in chunks of up to
 * BLOCK_CHUNK_MAX (16 MiB of 32-bit keys, fewer when the group is
 * smaller) by their top bits into BLOCK_BUCKETS ranges of counters. */
#define BLOCKED_MIN_KEYSPACE (1ull << 18)
#define BLOCK_CHUNK_MAX (1ull << 22)
#define BLOCK_BUCKETS 256u

/* Key of column index x: x >> shift, or x / div when div is not 0. */
static inline uint32_t col_key(uint32_t x, unsigned shift, uint32_t div)
{
    return div ? x / div : x >> shift;
}

/* counter_add of the keys of columns col[lo .. hi) in a dense counter whose
 * key space far exceeds the caches (the column-slice count of a large
 * matrix, one counter per column): each chunk's keys are first sorted into
 * BLOCK_BUCKETS ranges by their top bits (a counting sort), so the
 * counters one range touches stay cached while it is added, instead of a
 * miss per entry. The same counts as adding the keys in order; 0 when the
 * chunk buffer cannot be had (the caller adds them in order). */
static int count_blocked(key_counter *c, const uint32_t *col, unsigned shift, uint32_t div,
                         uint64_t lo, uint64_t hi)
{
    uint64_t chunk = hi - lo < BLOCK_CHUNK_MAX ? hi - lo : BLOCK_CHUNK_MAX;
    if (c->block_cap < chunk) {
        tessel_dealloc(c->alloc, c->block);
        c->block = tessel_alloc_array(c->alloc, chunk, sizeof(uint32_t));
        c->block_cap = c->block ? chunk : 0;
        if (!c->block)
            return 0;
    }
    unsigned bs = 0;
    while (((c->keyspace - 1) >> bs) >= BLOCK_BUCKETS)
        bs++;
    uint64_t pos[BLOCK_BUCKETS + 1];
    for (uint64_t k0 = lo; k0 < hi; k0 += chunk) {
        uint64_t k1 = hi - k0 < chunk ? hi : k0 + chunk;
        memset(pos, 0, sizeof(pos));
        for (uint64_t k = k0; k < k1; k++)
            pos[(col_key(col[k], shift, div) >> bs) + 1]++;
        for (unsigned b = 1; b <= BLOCK_BUCKETS; b++)
            pos[b] += pos[b - 1];
        for (uint64_t k = k0; k < k1; k++) {
            uint32_t key = col_key(col[k], shift, div);
            c->block[pos[key >> bs]++] = key;
        }
        uint64_t *counts = c->counts;
        for (uint64_t i = 0; i < k1 - k0; i++)
            counts[c->block[i]]++;
    }
    /* No touched list: more keys than it holds, so the flush scans the
     * counters (ascending keys, as the list's sort would give them). */
    c->ntouched = c->touched_cap + 1;
    return 1;
}

static int count_group(key_counter *c, const tessel_tensor *t, const tessel_tile_grid *g,
                       uint64_t lo, uint64_t hi)
{
    int rc = TESSEL_OK;
    if (c->keyspace == 1) /* one tile per group (the row slices): its entries, unread */
        return counter_add(c, 0, hi - lo);
    if (t->order == 2) {
        /* The hot case: matrices. Shift when the tile width is a power of two. */
        const uint32_t *col = t->idx[1];
        uint64_t w = g->tile[1];
        /* Enough entries to reuse each cache line of the counters several times. */
        if (c->dense && c->keyspace > BLOCKED_MIN_KEYSPACE && hi - lo >= c->keyspace / 4) {
            unsigned shift = 0;
            while ((1ull << shift) < w && shift < 32)
                shift++;
            uint32_t div = (w & (w - 1)) == 0 ? 0 : w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
            if (count_blocked(c, col, shift, div, lo, hi))
                return TESSEL_OK;
        }
        if ((w & (w - 1)) == 0) {
            unsigned shift = 0;
            while ((1ull << shift) < w)
                shift++;
            for (uint64_t k = lo; k < hi && !rc; k++)
                rc = counter_add(c, (uint64_t)col[k] >> shift, 1);
        } else {
            uint32_t w32 = w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
            for (uint64_t k = lo; k < hi && !rc; k++)
                rc = counter_add(c, col[k] / w32, 1);
        }
        return rc;
    }
    for (uint64_t k = lo; k < hi && !rc; k++)
        rc = counter_add(c, entry_key(t, g->tile, g->extent, k), 1);
    return rc;
}

/* An occupancy count's row of tiles of a matrix, entries [lo, hi), in a
 * dense counter: plain increments, then the group's entries again, each
 * reading and clearing its tile's counter (the repeats of a tile read 0,
 * which lands in the never-read slot 0 of a lane). Without the touched
 * list, whose append waits on the counter's load to know whether the key
 * is new: at 64M nonzeros the counters (256 KB) live in L2, not L1, and
 * that wait was a chain of L2 latencies through the whole pass. */
static void count_entries(key_counter *c, const uint32_t *col, uint64_t lo, uint64_t hi,
                          unsigned shift, uint32_t div, grid_writer *w)
{
    uint64_t *counts = c->counts;
    for (uint64_t k = lo; k < hi; k++)
        counts[div ? col[k] / div : (uint64_t)col[k] >> shift]++;
    if (hi - lo > c->keyspace / 2) {
        c->ntouched = c->touched_cap + 1; /* more entries than keys: scan the keys */
        flush_scan(c, w);
        c->ntouched = 0;
        return;
    }
    uint64_t nonempty = 0;
    for (uint64_t k = lo; k < hi; k++) {
        uint64_t key = div ? col[k] / div : (uint64_t)col[k] >> shift;
        uint64_t count = counts[key];
        counts[key] = 0;
        nonempty += count != 0;
        writer_tally(w, k % WRITER_LANES, count);
    }
    w->g->nonempty += nonempty;
}

/* A matrix's tiles of all rows by `width` columns (one row of tiles; the
 * column-slice count when width is 1) through col_tally's byte counters,
 * instead of the key counter's 8 bytes per key: into w's accumulator by
 * occupancy, or into its grid with keys ascending. */
static int count_columns(const tessel_tensor *t, grid_writer *w, uint64_t keyspace,
                         uint64_t *asked)
{
    col_tally ct;
    int rc = col_tally_count(&ct, t->idx[1], t->ptr[0], t->ptr[t->dims[0]], w->g->tile[1],
                             keyspace, t->alloc, asked);
    if (rc)
        return rc;
    uint64_t next = 0, bytes[4][256] = { { 0 } };
    if (!w->acc)
        writer_rows(w, 0);
    for (uint64_t k = 0; k < keyspace && !w->failed; k++) {
        uint64_t n = col_tally_get(&ct, k, &next);
        if (w->acc && n < 256)
            bytes[k % 4][n]++;
        else if (w->acc && tessel_occupancy_acc_add(w->acc, n, 1, NULL))
            w->failed = 1;
        else if (!w->acc && n)
            writer_emit(w, k, n);
    }
    for (unsigned v = 1; v < 256 && w->acc && !w->failed; v++) {
        uint64_t tiles = bytes[0][v] + bytes[1][v] + bytes[2][v] + bytes[3][v];
        w->g->nonempty += tiles;
        if (tiles && tessel_occupancy_acc_add(w->acc, v, tiles, NULL))
            w->failed = 1;
    }
    if (!w->acc)
        writer_rows(w, 1);
    col_tally_free(&ct);
    if (w->failed)
        *asked = 0;
    return w->failed ? TESSEL_ENOMEM : TESSEL_OK;
}

/* Counts t's nonzeros tile by tile, one row of tiles at a time, into w. */
static int count_tensor(const tessel_tensor *t, grid_writer *w, const tessel_allocator *a,
                        uint64_t keyspace, uint64_t *asked)
{
    tessel_tile_grid *g = w->g;
    key_counter c;
    uint64_t rows_per_group = g->tile[0];
    if (!w->acc) {
        /* The counting pass: at most min(entries, key space) tiles per row of tiles. */
        uint64_t bound = 0;
        for (uint64_t grp = 0; grp < g->extent[0]; grp++) {
            uint64_t r0 = grp * rows_per_group;
            uint64_t r1 = r0 + rows_per_group < t->dims[0] ? r0 + rows_per_group : t->dims[0];
            uint64_t n = t->ptr[r1] - t->ptr[r0];
            bound += n < keyspace ? n : keyspace;
        }
        if (writer_open(w, bound)) {
            *asked = w->asked;
            return TESSEL_ENOMEM;
        }
    }
    /* One row of tiles over a dense key space: the column-slice count. */
    if (t->order == 2 && g->extent[0] == 1 && keyspace > 1 &&
        (keyspace <= DENSE_MIN_KEYSPACE || keyspace <= t->nnz / 2))
        return count_columns(t, w, keyspace, asked);
    int rc = counter_start(&c, keyspace, t->nnz, a);
    /* An occupancy count of a matrix's tiles in a dense counter, rows of
     * tiles too small for count_blocked: count_entries. */
    int entrywise = !rc && w->acc && t->order == 2 && c.dense && keyspace > 1 &&
                    (keyspace <= BLOCKED_MIN_KEYSPACE ||
                     t->nnz / g->extent[0] < keyspace / 8);
    unsigned shift = 0;
    while ((1ull << shift) < g->tile[1] && shift < 32)
        shift++;
    uint64_t w1 = g->tile[1];
    uint32_t div = (w1 & (w1 - 1)) == 0 ? 0 : w1 > UINT32_MAX ? UINT32_MAX : (uint32_t)w1;
    for (uint64_t grp = 0; grp < g->extent[0] && !rc; grp++) {
        uint64_t r0 = grp * rows_per_group;
        uint64_t r1 = r0 + rows_per_group < t->dims[0] ? r0 + rows_per_group : t->dims[0];
        uint64_t lo = t->ptr[r0], hi = t->ptr[r1];
        if (lo == hi)
            continue;
        if (entrywise) {
            count_entries(&c, t->idx[1], lo, hi, shift, div, w);
            rc = w->failed ? TESSEL_ENOMEM : TESSEL_OK;
            continue;
        }
        rc = count_group(&c, t, g, lo, hi);
        if (!rc)
            rc = counter_flush(&c, grp, w);
    }
    for (uint64_t v = 1; v < WRITER_SMALL && w->acc && !rc; v++) {
        uint64_t tiles = 0;
        for (unsigned l = 0; l < WRITER_LANES; l++)
            tiles += w->small[l][v];
        if (tiles && tessel_occupancy_acc_add(w->acc, v, tiles, NULL))
            rc = TESSEL_ENOMEM;
    }
    *asked = c.asked ? c.asked : w->asked; /* set only by the step that failed */
    counter_free(&c);
    return rc;
}

int tessel_tile_grid_build(const tessel_tensor *t, const uint64_t *tile,
                           const tessel_allocator *a, tessel_tile_grid **out, tessel_diag *diag)
{
    uint64_t keyspace, asked = 0;
    int rc = grid_create(t->order, t->dims, tile, t->nnz, a, out, &keyspace, diag);
    if (rc)
        return rc;
    grid_writer w = { .g = *out };
    rc = count_tensor(t, &w, a, keyspace, &asked);
    if (rc) {
        tessel_tile_grid_free(out);
        return oom(diag, "counting the nonzeros of each tile", asked);
    }
    grid_finish(&w);
    return TESSEL_OK;
}

int tessel_tile_occupancy_add(const tessel_tensor *t, const uint64_t *tile,
                              tessel_occupancy_acc *acc, tessel_diag *diag)
{
    uint64_t keyspace, asked = 0;
    tessel_tile_grid *shell = NULL;
    int rc = grid_create(t->order, t->dims, tile, t->nnz, t->alloc, &shell, &keyspace, diag);
    if (rc)
        return rc;
    grid_writer w = { .g = shell, .acc = acc };
    rc = count_tensor(t, &w, t->alloc, keyspace, &asked);
    tessel_tile_grid_free(&shell);
    return rc ? oom(diag, "counting the nonzeros of each tile", asked) : TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Deriving a coarser grid */

void tessel_tile_grid_coords(const tessel_tile_grid *g, uint64_t i, uint64_t *coords)
{
    coords[0] = tessel_tile_grid_group(g, i);
    uint64_t key = tessel_tile_grid_key(g, i);
    for (unsigned m = g->order; m-- > 1;) {
        coords[m] = key % g->extent[m];
        key /= g->extent[m];
    }
}

static uint64_t coarse_key(const tessel_tile_grid *base, const tessel_tile_grid *g,
                           const uint64_t *factor, uint64_t base_key)
{
    if (base->order == 2)
        return base_key / factor[1];
    uint64_t coords[TESSEL_MAX_ORDER];
    for (unsigned m = base->order; m-- > 1;) {
        coords[m] = base_key % base->extent[m];
        base_key /= base->extent[m];
    }
    uint64_t key = 0;
    for (unsigned m = 1; m < base->order; m++)
        key = key * g->extent[m] + coords[m] / factor[m];
    return key;
}

int tessel_tile_grid_derive(const tessel_tile_grid *base, const uint64_t *tile,
                            tessel_tile_grid **out, tessel_diag *diag)
{
    *out = NULL;
    uint64_t factor[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < base->order; m++) {
        if (tile[m] == 0 || tile[m] % base->tile[m] != 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "tile",
                                   "tile extent %llu of mode %u is not a multiple of the base "
                                   "grid's %llu",
                                   (unsigned long long)tile[m], m,
                                   (unsigned long long)base->tile[m]);
        factor[m] = tile[m] / base->tile[m];
    }
    uint64_t keyspace;
    int rc = grid_create(base->order, base->dims, tile, base->nnz, base->alloc, out, &keyspace,
                         diag);
    if (rc)
        return rc;
    tessel_tile_grid *g = *out;
    key_counter c;
    grid_writer w = { .g = g };
    /* Row of tiles grp covers the base rows [grp * factor[0], ...): its base
     * tiles bound its tiles (the counting pass), as the key space does. */
    uint64_t bound = 0;
    for (uint64_t grp = 0; grp < g->extent[0]; grp++) {
        uint64_t b0 = grp * factor[0], b1 = b0 + factor[0];
        b1 = b1 < base->extent[0] ? b1 : base->extent[0];
        uint64_t n = base->row[b1] - base->row[b0];
        bound += n < keyspace ? n : keyspace;
    }
    if (writer_open(&w, bound)) {
        tessel_tile_grid_free(out);
        return oom(diag, "coarsening a tile grid", w.asked);
    }
    rc = counter_start(&c, keyspace, base->nonempty, base->alloc);
    for (uint64_t grp = 0; grp < g->extent[0] && !rc; grp++) {
        uint64_t b0 = grp * factor[0], b1 = b0 + factor[0];
        b1 = b1 < base->extent[0] ? b1 : base->extent[0];
        uint64_t i = base->row[b0], end = base->row[b1];
        if (i == end)
            continue;
        for (; i < end && !rc; i++)
            rc = counter_add(&c, coarse_key(base, g, factor, tessel_tile_grid_key(base, i)),
                             tessel_tile_grid_count(base, i));
        if (!rc)
            rc = counter_flush(&c, grp, &w);
    }
    uint64_t asked = c.asked ? c.asked : w.asked; /* set only by the step that failed */
    counter_free(&c);
    if (rc) {
        tessel_tile_grid_free(out);
        return oom(diag, "coarsening a tile grid", asked);
    }
    grid_finish(&w);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* A grid from per-tile arrays */

static int assemble_bad(tessel_diag *diag, uint64_t i, const char *why)
{
    return tessel_diag_set(diag, TESSEL_ECORRUPT, NULL, 0, 0, "grid", "%s at tile %llu", why,
                           (unsigned long long)i);
}

int tessel_tile_grid_assemble(unsigned order, const uint64_t *dims, const uint64_t *tile,
                              uint64_t nnz, uint64_t n, const uint64_t *group,
                              const uint64_t *key, const uint64_t *count,
                              const tessel_allocator *a, tessel_tile_grid **out,
                              tessel_diag *diag)
{
    uint64_t keyspace;
    int rc = grid_create(order, dims, tile, nnz, a, out, &keyspace, diag);
    if (rc)
        return rc;
    tessel_tile_grid *g = *out;
    grid_writer w = { .g = g };
    if (n > g->nnz || (n && g->extent[0] == 0)) {
        tessel_tile_grid_free(out);
        return assemble_bad(diag, 0, "more non-empty tiles than nonzeros");
    }
    /* The row offsets are not bounded by the tiles: refuse, as the tensor
     * reader refuses hypersparse row pointers, offsets of more than 1 GiB
     * that are also more than 16 words per tile. */
    if (g->extent[0] >= (1u << 27) && g->extent[0] / 16 > n) {
        tessel_tile_grid_free(out);
        return assemble_bad(diag, 0, "too many rows of tiles for its non-empty tiles");
    }
    if (writer_open(&w, n)) {
        tessel_tile_grid_free(out);
        return oom(diag, "storing a tile grid", w.asked);
    }
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        const char *why = NULL;
        if (group[i] >= g->extent[0] || key[i] >= keyspace)
            why = "a tile lies outside the tile grid";
        else if (i && (group[i] < group[i - 1] ||
                       (group[i] == group[i - 1] && key[i] <= key[i - 1])))
            why = "tiles are not sorted and unique";
        else if (count[i] < 1 || count[i] > g->nnz - sum)
            why = "a count is out of range";
        if (why) {
            tessel_tile_grid_free(out);
            return assemble_bad(diag, i, why);
        }
        sum += count[i];
        writer_rows(&w, group[i]);
        writer_emit(&w, key[i], count[i]);
        if (w.failed) {
            tessel_tile_grid_free(out);
            return oom(diag, "storing a tile grid", w.asked);
        }
        if (i + 1 == n || group[i + 1] != group[i])
            writer_rows(&w, group[i] + 1);
    }
    if (sum != g->nnz) {
        tessel_tile_grid_free(out);
        return assemble_bad(diag, n, "the tile counts do not sum to nnz");
    }
    grid_finish(&w);
    return TESSEL_OK;
}

int tessel_tile_count(unsigned order, const uint64_t *dims, const uint64_t *tile,
                      uint64_t *tiles)
{
    uint64_t n = 1;
    for (unsigned m = 0; m < order; m++) {
        if (tile[m] == 0)
            return TESSEL_ERANGE;
        uint64_t t = tile[m] < dims[m] ? tile[m] : (dims[m] ? dims[m] : 1);
        uint64_t extent = dims[m] ? (dims[m] - 1) / t + 1 : 0;
        if (extent && n > UINT64_MAX / extent)
            return TESSEL_ERANGE;
        n *= extent;
    }
    *tiles = n;
    return TESSEL_OK;
}

int tessel_tile_grid_tiles(const tessel_tile_grid *g, uint64_t *tiles)
{
    uint64_t n = 1;
    for (unsigned m = 0; m < g->order; m++) {
        if (g->extent[m] && n > UINT64_MAX / g->extent[m])
            return TESSEL_ERANGE;
        n *= g->extent[m];
    }
    *tiles = n;
    return TESSEL_OK;
}

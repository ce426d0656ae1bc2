/* Per-shape summaries of the stat estimator's closed sums (SpMSpM at one
 * buffer level, stat_spmspm.c), so that design points that share a tile
 * shape cost microseconds.
 *
 * A summary belongs to one tile shape as the grids see it (the derived
 * edges of A and B). It is built the first time a point has that shape,
 * for both sides of the mirror (orders with the output's second index
 * outside its first are evaluated as Z^T = B^T A^T) and for the three
 * canonical loop orders (IJK, IKJ, KIJ), so it covers all six loop
 * orders. It keeps what an evaluation reads that does not depend on
 * formats, bit widths, capacities or partitions:
 *
 *   - the pair sums of the tile-pair walk and the effectual iterations;
 *   - per side, order and input, the fills and bumped uses (rule 4) of
 *     the tiles, grouped by the tiles' nonzeros (ascending): a tile's price
 *     depends on its nonzeros alone, so a point prices each distinct size
 *     once, and a tile overflows its partition by a comparison per size;
 *   - per side and order, the merged output runs and the nonzeros the
 *     output's write-backs carry: one pass over the output sample serves
 *     the four orders that need it.
 *
 * The grids and bitsets are dropped once the summary is built: a summary
 * is a few kilobytes, and a point costs the distinct tile sizes of its
 * shape (41 to 153 on ca-CondMat) instead of the tile grid and the output
 * sample.
 *
 * Identical results: every input count is a sum of whole numbers (fills
 * times whole bytes), so the closed sums' double additions are exact while
 * their partial sums stay below 2^53, whatever the order of the terms. A
 * point whose sums could reach 2^52 is evaluated without the summary. The
 * output sample's sums are not whole: the pass below adds the same terms in
 * the same order as stat_sample_written. tests/unit/test_stat_cache.c
 * compares both paths on real matrices.
 *
 * Shared between threads (issue 19 item 3): the shapes live in a table
 * that every cache made by tessel_stat_cache_create_shared from one
 * first cache holds (each thread of a sweep has its own cache into it).
 * A shape is built once, by the first thread that meets it: it claims the
 * shape (in flight) and builds it without the lock; a thread that needs
 * it meanwhile evaluates its point without the summary (the same result,
 * about a millisecond) instead of waiting or building it again. A built shape
 * is never written again, so threads price points from it without the
 * lock; a reference count keeps it alive while a thread reads it after
 * the table has been emptied. The step count's per-reduction-tile
 * tables and geometries (stat_ks_cache, stat_outspill.c: for the points
 * that spill, which the summaries decline) are shared the same way, in a
 * pool the table holds, and so are their memo and covers, which the
 * points' visits write (one point holds them at a time); the nested
 * summaries (stat_nested_cache.c) stay per cache.
 * Results do not depend on which thread built a shape:
 * a summary depends on its key and the statistics alone. */
#include <pthread.h>
#include <string.h>

#include "stat_closed.h"
#include "stat_tiledfmt.h"

#define CACHE_MAX_SHAPES 1024u
#define CACHE_SLOTS (2u * CACHE_MAX_SHAPES)
#define CACHE_BUDGET_BYTES ((size_t)256 << 20)
#define EXACT_LIMIT 0x1p52

enum { ORDER_IJK, ORDER_IKJ, ORDER_KIJ, NORDERS };
enum { ROLE_A, ROLE_B, NROLES };

/* The tiles of one canonical input grouped by nonzeros: sizes[d]
 * ascending, and per size the tiles' count and, per order, their fills
 * and bumped uses. */
typedef struct size_groups {
    uint64_t n;
    uint64_t *sizes;
    uint64_t *tiles;
    uint64_t *fills[NORDERS], *bumps[NORDERS];
    uint64_t tiles_total, uses_total[NORDERS]; /* fills + bumped uses */
} size_groups;

/* One side of the mirror. */
typedef struct side {
    stat_problem p;  /* grids (while building), extents, sample mapping */
    work w;          /* without prices; freed once built (w.bitsets kept) */
    pair_sums ps;
    double effectual, operand_nnz[2];
    size_groups group[NROLES];
    double merges[NORDERS];
    double written[NORDERS];
    double nonempty;
    double max_pair_nnz; /* the sample's fullest output tile; -1: no sample or pair walk */
    /* While building, per order: the merge bits (bit k of row i: the run
     * of tile (i, j) at step k continues, j = merge_j[k]), and per column
     * j the steps whose merge_j is j. */
    uint64_t *merge_bits[NORDERS], *merge_cols[NORDERS];
} side;

/* IN_FLIGHT: claimed by the thread building it (other threads evaluate
 * their points without it meanwhile); READY: built, read-only from then
 * on; FAILED: its build failed (out of memory), so the next thread that
 * needs it claims it and builds it again. */
typedef enum shape_state { SHAPE_IN_FLIGHT = 1, SHAPE_READY, SHAPE_FAILED } shape_state;

typedef struct shape {
    uint64_t key[4]; /* coarsening of A (rows, columns) and of B */
    size_t bytes;
    side side[2];
    /* under the table's lock */
    shape_state state;
    unsigned refs;   /* threads reading or building it */
    int orphan;      /* dropped from the table: freed by the last reference */
} shape;

/* The shapes of one tessel_stat_data, shared by the caches made from one
 * first cache. mu guards everything below it. */
typedef struct shape_table {
    const tessel_allocator *alloc;
    const tessel_stat_data *stats;
    pthread_mutex_t mu;
    unsigned users;             /* caches holding the table */
    uint32_t slot[CACHE_SLOTS]; /* shape index + 1; 0 = empty */
    shape *shape[CACHE_MAX_SHAPES];
    unsigned count;
    size_t bytes;
    stat_ks_cache *ks_pool;     /* the step count's shared tables (made on first use) */
} shape_table;

struct tessel_stat_cache {
    const tessel_allocator *alloc;
    shape_table *table;
    uint64_t hits, misses;     /* this cache's: shapes found, shapes it built */
    uint64_t passed;           /* points evaluated without a shape another thread was building */
    stat_nested_cache *nested; /* boundaries b >= 2 (stat_nested_cache.c), per cache */
    stat_ks_cache *ks;         /* the step count's tables (stat_outspill.c), per cache,
                                * into the table's ks_pool */
};

static const char *const order_names[NORDERS] = { "IJK", "IKJ", "KIJ" };

/* ------------------------------------------------------------------ */
/* The table: a hash of shapes, emptied when full */

static shape_table *table_create(const tessel_stat_data *s, const tessel_allocator *a)
{
    shape_table *t = tessel_alloc(a, sizeof(*t));
    if (!t)
        return NULL;
    memset(t, 0, sizeof(*t));
    t->alloc = a;
    t->stats = s;
    if (pthread_mutex_init(&t->mu, NULL)) {
        tessel_dealloc(a, t);
        return NULL;
    }
    t->users = 1;
    return t;
}

static int cache_new(shape_table *t, const tessel_allocator *a, tessel_stat_cache **out)
{
    *out = tessel_alloc(a, sizeof(**out));
    if (!*out)
        return TESSEL_ENOMEM;
    memset(*out, 0, sizeof(**out));
    (*out)->alloc = a;
    (*out)->table = t;
    return TESSEL_OK;
}

int tessel_stat_cache_create(const tessel_stat_data *s, const tessel_allocator *a,
                             tessel_stat_cache **out)
{
    shape_table *t = table_create(s, a);
    if (!t) {
        *out = NULL;
        return TESSEL_ENOMEM;
    }
    int rc = cache_new(t, a, out);
    if (rc) {
        pthread_mutex_destroy(&t->mu);
        tessel_dealloc(a, t);
    }
    return rc;
}

int tessel_stat_cache_create_shared(tessel_stat_cache *with, tessel_stat_cache **out)
{
    int rc = cache_new(with->table, with->alloc, out);
    if (rc)
        return rc;
    pthread_mutex_lock(&with->table->mu);
    with->table->users++;
    pthread_mutex_unlock(&with->table->mu);
    return TESSEL_OK;
}

static void groups_free(const tessel_allocator *a, size_groups *g)
{
    tessel_dealloc(a, g->sizes);
    tessel_dealloc(a, g->tiles);
    for (unsigned o = 0; o < NORDERS; o++) {
        tessel_dealloc(a, g->fills[o]);
        tessel_dealloc(a, g->bumps[o]);
    }
    memset(g, 0, sizeof(*g));
}

/* What only the build needs: grids, bitsets, merge bits. */
static void side_drop_work(const tessel_allocator *a, side *sd)
{
    if (sd->w.p) {
        int bitsets = sd->w.bitsets;
        stat_work_free(&sd->w);
        memset(&sd->w, 0, sizeof(sd->w));
        sd->w.bitsets = bitsets;
    }
    for (unsigned o = 0; o < NORDERS; o++) {
        tessel_dealloc(a, sd->merge_bits[o]);
        tessel_dealloc(a, sd->merge_cols[o]);
        sd->merge_bits[o] = sd->merge_cols[o] = NULL;
    }
    stat_grid_free(a, &sd->p.a);
    stat_grid_free(a, &sd->p.b);
}

/* A shape's summary dropped, its key kept (a failed build leaves it so). */
static void shape_empty(const tessel_allocator *a, shape *s)
{
    for (unsigned m = 0; m < 2; m++) {
        side_drop_work(a, &s->side[m]);
        for (unsigned r = 0; r < NROLES; r++)
            groups_free(a, &s->side[m].group[r]);
    }
    memset(s->side, 0, sizeof(s->side));
    s->bytes = 0;
}

static void shape_free(const tessel_allocator *a, shape *s)
{
    if (!s)
        return;
    shape_empty(a, s);
    tessel_dealloc(a, s);
}

/* Empties the table (mu held). A shape that a thread still reads or
 * builds leaves the table now and is freed by its last reference. */
static void table_clear(shape_table *t)
{
    for (unsigned i = 0; i < t->count; i++) {
        if (t->shape[i]->refs)
            t->shape[i]->orphan = 1;
        else
            shape_free(t->alloc, t->shape[i]);
    }
    memset(t->slot, 0, sizeof(t->slot));
    t->count = 0;
    t->bytes = 0;
}

/* The last cache holding the table frees it (no thread reads it then). */
void tessel_stat_cache_free(tessel_stat_cache **c)
{
    if (!c || !*c)
        return;
    shape_table *t = (*c)->table;
    stat_ks_cache_free(&(*c)->ks); /* before the pool it holds tiles of */
    pthread_mutex_lock(&t->mu);
    unsigned left = --t->users;
    pthread_mutex_unlock(&t->mu);
    if (!left) {
        table_clear(t);
        stat_ks_cache_free(&t->ks_pool);
        pthread_mutex_destroy(&t->mu);
        tessel_dealloc(t->alloc, t);
    }
    stat_nested_cache_free(&(*c)->nested);
    tessel_dealloc((*c)->alloc, *c);
    *c = NULL;
}

stat_nested_cache *stat_cache_nested(tessel_stat_cache *c)
{
    if (!c->nested && stat_nested_cache_create(c->alloc, &c->nested))
        return NULL; /* out of memory: the nested boundaries go uncached */
    return c->nested;
}

stat_ks_cache *stat_cache_ksteps(tessel_stat_cache *c)
{
    if (c->ks)
        return c->ks;
    shape_table *t = c->table;
    pthread_mutex_lock(&t->mu);
    if (!t->ks_pool)
        stat_ks_pool_create(t->alloc, &t->ks_pool);
    stat_ks_cache *pool = t->ks_pool;
    pthread_mutex_unlock(&t->mu);
    if (!pool || stat_ks_cache_create(c->alloc, pool, &c->ks))
        return NULL; /* out of memory: the tables are built per point */
    return c->ks;
}

void tessel_stat_cache_ksteps_counts(const tessel_stat_cache *c, uint64_t *tables,
                                     uint64_t *geometries, uint64_t *passed)
{
    stat_ks_cache_built(c ? c->ks : NULL, tables, geometries, passed);
}

uint64_t tessel_stat_cache_ksteps_memos(const tessel_stat_cache *c)
{
    uint64_t hits, made;
    stat_ks_cache_counts(c ? c->ks : NULL, &hits, &made);
    return made;
}

uint64_t tessel_stat_cache_band_counts(const tessel_stat_cache *c)
{
    return stat_ks_cache_built_vecs(c ? c->ks : NULL);
}

void tessel_stat_cache_nested_counts(const tessel_stat_cache *c, uint64_t *hits,
                                     uint64_t *misses)
{
    stat_nested_cache_counts(c ? c->nested : NULL, hits, misses);
}

void tessel_stat_cache_counts(const tessel_stat_cache *c, uint64_t *hits, uint64_t *misses)
{
    *hits = c ? c->hits : 0;
    *misses = c ? c->misses : 0;
}

uint64_t tessel_stat_cache_passed(const tessel_stat_cache *c)
{
    return c ? c->passed : 0;
}

static uint32_t key_hash(const uint64_t *key)
{
    uint64_t h = UINT64_C(0x9e3779b97f4a7c15);
    for (unsigned i = 0; i < 4; i++) {
        h = (h ^ key[i]) * UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 29;
    }
    return (uint32_t)(h ^ (h >> 32));
}

/* The slot holding key, or the empty slot where it would go (mu held). */
static uint32_t *table_slot(shape_table *t, const uint64_t *key)
{
    uint32_t i = key_hash(key) & (CACHE_SLOTS - 1);
    while (t->slot[i] && memcmp(t->shape[t->slot[i] - 1]->key, key, 4 * sizeof(uint64_t)) != 0)
        i = (i + 1) & (CACHE_SLOTS - 1);
    return &t->slot[i];
}

/* A new shape for key, claimed by the caller (in flight, one reference;
 * mu held); NULL out of memory. Full (in shapes or bytes): the table
 * starts again. A sweep or a search rarely visits more shapes than fit,
 * and results do not depend on which shapes the table holds. */
static shape *table_claim(shape_table *t, const uint64_t *key)
{
    shape *s = tessel_alloc(t->alloc, sizeof(*s));
    if (!s)
        return NULL;
    memset(s, 0, sizeof(*s));
    memcpy(s->key, key, sizeof(s->key));
    s->state = SHAPE_IN_FLIGHT;
    s->refs = 1;
    if (t->count == CACHE_MAX_SHAPES || t->bytes >= CACHE_BUDGET_BYTES)
        table_clear(t);
    uint32_t *slot = table_slot(t, key);
    t->shape[t->count++] = s;
    *slot = t->count;
    return s;
}

static void shape_release(shape_table *t, shape *s)
{
    pthread_mutex_lock(&t->mu);
    int last = --s->refs == 0 && s->orphan;
    pthread_mutex_unlock(&t->mu);
    if (last)
        shape_free(t->alloc, s); /* out of the table: no other thread can reach it */
}

/* ------------------------------------------------------------------ */
/* Tile sizes */

static uint64_t *zeroed_u64(const tessel_allocator *a, uint64_t n)
{
    uint64_t *p = tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
    if (p)
        memset(p, 0, (n ? n : 1) * sizeof(uint64_t));
    return p;
}

/* Small sizes (against the tiles): a table over the sizes marks those
 * present, a scan numbers them. Returns 0 when too large for a table. */
static int sizes_by_table(const tessel_allocator *a, const stat_grid *g, uint64_t max,
                          size_groups *grp, uint64_t *rank, int *rc)
{
    *rc = TESSEL_OK;
    if (max > 4 * g->n + 1024)
        return 0;
    uint32_t *table = tessel_alloc_array(a, max + 1, sizeof(uint32_t));
    uint64_t *sizes = tessel_alloc_array(a, g->n ? g->n : 1, sizeof(uint64_t));
    if (!table || !sizes) {
        tessel_dealloc(a, table);
        tessel_dealloc(a, sizes);
        *rc = TESSEL_ENOMEM;
        return 1;
    }
    memset(table, 0, (max + 1) * sizeof(uint32_t));
    for (uint64_t n = 0; n < g->n; n++)
        table[g->nnz[n]] = 1;
    uint64_t d = 0;
    for (uint64_t v = 0; v <= max; v++)
        if (table[v]) {
            sizes[d] = v;
            table[v] = (uint32_t)d++;
        }
    for (uint64_t n = 0; n < g->n; n++)
        rank[n] = table[g->nnz[n]];
    tessel_dealloc(a, table);
    grp->n = d;
    grp->sizes = sizes;
    return 1;
}

/* Any sizes: sorted, repeats dropped, each tile's by binary search. */
static int sizes_by_sort(const tessel_allocator *a, const stat_grid *g, uint64_t max,
                         size_groups *grp, uint64_t *rank)
{
    uint64_t *sorted = tessel_alloc_array(a, g->n ? g->n : 1, sizeof(uint64_t));
    uint64_t *scratch = tessel_alloc_array(a, g->n ? g->n : 1, sizeof(uint64_t));
    if (!sorted || !scratch) {
        tessel_dealloc(a, sorted);
        tessel_dealloc(a, scratch);
        return TESSEL_ENOMEM;
    }
    for (uint64_t n = 0; n < g->n; n++)
        sorted[n] = g->nnz[n];
    tessel_sort_u64(sorted, scratch, g->n, max);
    tessel_dealloc(a, scratch);
    uint64_t d = 0;
    for (uint64_t n = 0; n < g->n; n++)
        if (d == 0 || sorted[n] != sorted[d - 1])
            sorted[d++] = sorted[n];
    for (uint64_t n = 0; n < g->n; n++) {
        uint64_t lo = 0, hi = d;
        while (lo + 1 < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (sorted[mid] <= g->nnz[n])
                lo = mid;
            else
                hi = mid;
        }
        rank[n] = lo;
    }
    grp->n = d;
    grp->sizes = sorted; /* the first d entries */
    return TESSEL_OK;
}

/* The distinct sizes of grid g's tiles (ascending) into grp, and each
 * tile's group in rank[n]. */
static int size_groups_init(const tessel_allocator *a, const stat_grid *g, size_groups *grp,
                            uint64_t *rank)
{
    uint64_t max = 0;
    for (uint64_t n = 0; n < g->n; n++)
        max = g->nnz[n] > max ? g->nnz[n] : max;
    int rc;
    if (!sizes_by_table(a, g, max, grp, rank, &rc))
        rc = sizes_by_sort(a, g, max, grp, rank);
    if (rc)
        return rc;
    uint64_t d = grp->n;
    grp->tiles = zeroed_u64(a, d);
    int ok = grp->tiles != NULL;
    for (unsigned o = 0; o < NORDERS; o++) {
        grp->fills[o] = zeroed_u64(a, d);
        grp->bumps[o] = zeroed_u64(a, d);
        ok = ok && grp->fills[o] && grp->bumps[o];
    }
    if (!ok)
        return TESSEL_ENOMEM;
    for (uint64_t n = 0; n < g->n; n++)
        grp->tiles[rank[n]]++;
    grp->tiles_total = g->n;
    return TESSEL_OK;
}

static void add_uses(size_groups *g, unsigned order, uint64_t rank, uint64_t fills,
                     uint64_t bumps)
{
    g->fills[order][rank] += fills;
    g->bumps[order][rank] += bumps;
    g->uses_total[order] += fills + bumps;
}

/* ------------------------------------------------------------------ */
/* Fills and bumped uses per tile, by the rules of stat_spmspm.c's inputs */

/* A: IJK fills every use less the reuses the pair walk found (each then
 * streams its overflow); IKJ and KIJ fill once per tile that meets a
 * non-empty B tile row and stream the overflow on the other uses. */
static void uses_a(side *sd, const uint64_t *rank, const uint64_t *reuse)
{
    const stat_problem *p = &sd->p;
    size_groups *g = &sd->group[ROLE_A];
    for (uint64_t n = 0; n < p->a.n; n++) {
        uint64_t uses = sd->w.b_row[p->a.col[n]], again = reuse ? reuse[n] : 0;
        add_uses(g, ORDER_IJK, rank[n], uses - again, again);
        if (uses) {
            add_uses(g, ORDER_IKJ, rank[n], 1, uses - 1);
            add_uses(g, ORDER_KIJ, rank[n], 1, uses - 1);
        }
    }
}

/* IKJ: where one row of A tiles ends on the B tile the next row starts
 * on, that tile stays resident (input_b_outer in stat_spmspm.c). */
static void reuse_b_ikj(const side *sd, uint64_t *reuse)
{
    const stat_problem *p = &sd->p;
    uint64_t prev_k = UINT64_MAX, prev_j = UINT64_MAX;
    for (uint64_t i = 0; i < p->a.rows; i++) {
        uint64_t fk = UINT64_MAX, lk = UINT64_MAX;
        for (uint64_t n = p->a.ptr[i]; n < p->a.ptr[i + 1]; n++)
            if (sd->w.b_row[p->a.col[n]]) {
                if (fk == UINT64_MAX)
                    fk = p->a.col[n];
                lk = p->a.col[n];
            }
        if (fk == UINT64_MAX)
            continue;
        if (fk == prev_k && stat_b_first_j(p, fk) == prev_j)
            reuse[p->b.ptr[fk]]++;
        prev_k = lk;
        prev_j = stat_b_last_j(p, lk);
    }
}

/* B: IJK and IKJ fill a tile once per A tile of its row k, less the
 * reuses; KIJ walks B's tile row k once per A tile of column k, and a row
 * of one tile stays resident. */
static void uses_b(side *sd, const uint64_t *rank, const uint64_t *reuse_ijk,
                   const uint64_t *reuse_ikj)
{
    const stat_problem *p = &sd->p;
    size_groups *g = &sd->group[ROLE_B];
    for (uint64_t k = 0; k < p->b.rows; k++) {
        uint64_t users = sd->w.a_col[k];
        for (uint64_t n = p->b.ptr[k]; users && n < p->b.ptr[k + 1]; n++) {
            uint64_t r1 = reuse_ijk ? reuse_ijk[n] : 0, r2 = reuse_ikj[n];
            add_uses(g, ORDER_IJK, rank[n], users - r1, r1);
            add_uses(g, ORDER_IKJ, rank[n], users - r2, r2);
            if (sd->w.b_row[k] == 1)
                add_uses(g, ORDER_KIJ, rank[n], 1, users - 1);
            else
                add_uses(g, ORDER_KIJ, rank[n], users, 0);
        }
    }
}

/* ------------------------------------------------------------------ */
/* Building one side */

/* The same sums as stat_spmspm_evaluate, in the same order. */
static void summarise_effectual(side *sd)
{
    const work *w = &sd->w;
    double E = 0;
    for (uint64_t k = 0; k < sd->p.ext_k; k++) {
        E += (double)w->a_col[k] * (double)w->b_row[k];
        sd->operand_nnz[0] += w->a_col_nnz[k] * (double)w->b_row[k];
        sd->operand_nnz[1] += w->b_row_nnz[k] * (double)w->a_col[k];
    }
    sd->effectual = E;
}

/* Per-tile counts of the reuses (the pair walk's for IJK, IKJ's of B),
 * then the uses grouped by size. */
static int summarise_inputs(side *sd, const tessel_allocator *a)
{
    const stat_problem *p = &sd->p;
    int walk = sd->w.bitsets;
    uint64_t *rank_a = zeroed_u64(a, p->a.n), *rank_b = zeroed_u64(a, p->b.n);
    uint64_t *reuse_a = walk ? zeroed_u64(a, p->a.n) : NULL;
    uint64_t *reuse_b = walk ? zeroed_u64(a, p->b.n) : NULL;
    uint64_t *reuse_ikj = zeroed_u64(a, p->b.n);
    int rc = rank_a && rank_b && reuse_ikj && (!walk || (reuse_a && reuse_b)) ? TESSEL_OK
                                                                               : TESSEL_ENOMEM;
    if (!rc)
        rc = size_groups_init(a, &p->a, &sd->group[ROLE_A], rank_a);
    if (!rc)
        rc = size_groups_init(a, &p->b, &sd->group[ROLE_B], rank_b);
    if (!rc) {
        memcpy(sd->p.order, order_names[ORDER_IJK], 4);
        if (walk)
            stat_walk_pairs(&sd->w, &sd->ps, NULL, reuse_a, reuse_b);
        else
            stat_estimate_pairs(&sd->w, sd->effectual, &sd->ps);
        reuse_b_ikj(sd, reuse_ikj);
        uses_a(sd, rank_a, reuse_a);
        uses_b(sd, rank_b, reuse_b, reuse_ikj);
    }
    tessel_dealloc(a, rank_a);
    tessel_dealloc(a, rank_b);
    tessel_dealloc(a, reuse_a);
    tessel_dealloc(a, reuse_b);
    tessel_dealloc(a, reuse_ikj);
    return rc;
}

/* The merged output runs of each order (stat_find_merges), with their
 * bits kept for the output sample's pass. */
static int summarise_merges(side *sd, const tessel_allocator *a)
{
    work *w = &sd->w;
    uint64_t bits = sd->p.ext_i * w->words;
    for (unsigned o = ORDER_IKJ; o < NORDERS; o++) {
        memcpy(sd->p.order, order_names[o], 4);
        w->merges = 0;
        if (w->bitsets)
            memset(w->merge_bits, 0, (size_t)bits * sizeof(uint64_t));
        stat_find_merges(w);
        sd->merges[o] = w->merges;
        if (!w->bitsets)
            continue;
        uint64_t cols = sd->p.ext_j * w->words;
        sd->merge_bits[o] = tessel_alloc_array(a, bits ? bits : 1, sizeof(uint64_t));
        sd->merge_cols[o] = zeroed_u64(a, cols);
        if (!sd->merge_bits[o] || !sd->merge_cols[o])
            return TESSEL_ENOMEM;
        memcpy(sd->merge_bits[o], w->merge_bits, (size_t)bits * sizeof(uint64_t));
        /* merge_j is 0 where no row merges: harmless, no merge bit there */
        for (uint64_t k = 0; k < sd->p.ext_k; k++)
            sd->merge_cols[o][w->merge_j[k] * w->words + k / 64] |= UINT64_C(1) << (k % 64);
    }
    return TESSEL_OK;
}

static int side_build(side *sd, const stat_cache_point *pt, int mirror, const tessel_allocator *a)
{
    stat_problem *p = &sd->p;
    p->alloc = a;
    p->ext_i = p->a.rows;
    p->ext_k = p->a.cols;
    p->ext_j = p->b.cols;
    p->tk = pt->tk;
    p->sample = pt->sample;
    p->sample_mirrored = mirror;
    p->f_i = pt->f_i;
    p->f_j = pt->f_j;
    p->f_k = pt->f_k;
    int rc = stat_work_init(&sd->w, p, stat_bitsets_fit(p), 0);
    if (rc) {
        memset(&sd->w, 0, sizeof(sd->w));
        return rc;
    }
    summarise_effectual(sd);
    rc = summarise_inputs(sd, a);
    if (!rc)
        rc = summarise_merges(sd, a);
    if (!rc && p->sample && p->sample->whole && sd->w.bitsets)
        rc = stat_sample_pairs(&sd->w, &sd->nonempty);
    sd->max_pair_nnz = -1;
    if (!rc && p->sample && sd->w.bitsets)
        rc = stat_sample_max_pair(&sd->w, &sd->max_pair_nnz);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The output sample, once for both sides and the orders IKJ and KIJ */

enum { NWALKS = 4 };

/* One side and order's runs of the current tile pair (pair_runs_set in
 * stat_spmspm.c): visits that end a run, and the ends in later words. */
typedef struct runs {
    const side *sd;
    unsigned order;
    uint64_t *ends, *suffix;
    int merged;     /* the pair has a merged run: ends differ from the visits */
} runs;

static void runs_set(runs *r, const uint64_t *visits, uint64_t row, uint64_t col,
                     uint64_t words)
{
    r->merged = 0;
    if (r->sd->merges[r->order] == 0)
        return; /* no run of this order merges */
    const uint64_t *mb = &r->sd->merge_bits[r->order][row * words];
    const uint64_t *mc = &r->sd->merge_cols[r->order][col * words];
    for (uint64_t wd = 0; wd < words; wd++) {
        uint64_t merged = visits[wd] & mb[wd] & mc[wd];
        r->ends[wd] = visits[wd] & ~merged;
        r->merged |= merged != 0;
    }
    if (!r->merged)
        return; /* the pass counts from the visits */
    uint64_t after = 0;
    for (uint64_t wd = words; wd-- > 0;) {
        r->suffix[wd] = after;
        after += stat_bits_set(r->ends[wd]);
    }
}

static inline uint64_t runs_from(const uint64_t *ends, const uint64_t *suffix, uint64_t k)
{
    uint64_t wd = k / 64;
    return stat_bits_set(ends[wd] & (~UINT64_C(0) << (k % 64))) + suffix[wd];
}

/* One group's terms of sample_pass into the strata of stat_sample_written
 * (stat_written_strata): per walk n, ws[n * nt + t] by reduction tile t,
 * and the weights into ws[NWALKS * nt + t], in cell order. */
static void sample_pass_strata(const stat_output_sample *smp, uint64_t c, uint64_t end,
                               uint64_t K, uint64_t fk, const uint32_t *step,
                               const uint64_t *visits, const uint64_t *vsuffix, const runs *r,
                               int any_merged, double *ws, uint64_t nt)
{
    uint64_t last_k = UINT64_MAX;
    double count[NWALKS] = { 0 };
    for (; c < end; c++) {
        uint64_t ck = smp->ck[c], k = ck < K * fk ? step[ck] : ck / fk;
        if (k != last_k) {
            double v = (double)runs_from(visits, vsuffix, k);
            for (unsigned n = 0; n < NWALKS; n++)
                count[n] = any_merged && r[n].merged ? (double)runs_from(r[n].ends, r[n].suffix, k)
                                                     : v;
            last_k = k;
        }
        if (k >= nt)
            continue;
        double w = smp->weight[c];
        for (unsigned n = 0; n < NWALKS; n++)
            ws[n * nt + k] += count[n] * w;
        ws[NWALKS * nt + k] += w;
    }
}

/* Each sampled nonzero weighs in once per run of visits to its output
 * tile that ends at or after its first reduction step: the terms of
 * stat_sample_written, added in its order, for four walks at once (the
 * pair's visits are the same on both sides; only the merged runs
 * differ). The physical pair (s1, s2) is (i, j) on side 0, (j, i) on
 * side 1, whose bitsets are side 0's swapped. */
static int sample_pass(shape *s, const tessel_allocator *a)
{
    const side *s0 = &s->side[0];
    const stat_output_sample *smp = s0->p.sample;
    uint64_t words = s0->w.words, K = s0->p.ext_k;
    uint64_t fi = s0->p.f_i ? s0->p.f_i : 1, fj = s0->p.f_j ? s0->p.f_j : 1;
    uint64_t fk = s0->p.f_k ? s0->p.f_k : 1;
    runs r[NWALKS];
    uint64_t *buf = tessel_alloc_array(a, (2 * NWALKS + 2) * (words + 1), sizeof(uint64_t));
    uint32_t *step = tessel_alloc_array(a, K * fk + 1, sizeof(uint32_t));
    if (!buf || !step) {
        tessel_dealloc(a, buf);
        tessel_dealloc(a, step);
        return TESSEL_ENOMEM;
    }
    /* stat_sample_written's strata: per walk, each stratum's terms in its
     * order (stat_written_strata) */
    uint64_t nt = stat_written_tiles(smp, fk, s0->p.unfolded);
    double *ws = nt ? stat_zeroed(a, (NWALKS + 1) * nt, sizeof(double)) : NULL;
    if (nt && !ws) {
        tessel_dealloc(a, buf);
        tessel_dealloc(a, step);
        return TESSEL_ENOMEM;
    }
    uint64_t *visits = buf, *vsuffix = buf + (words + 1);
    for (unsigned n = 0; n < NWALKS; n++) {
        r[n].sd = &s->side[n / 2];
        r[n].order = n % 2 ? ORDER_KIJ : ORDER_IKJ;
        r[n].ends = buf + (2 + 2 * n) * (words + 1);
        r[n].suffix = r[n].ends + (words + 1);
    }
    for (uint64_t c = 0; c < K * fk; c++)
        step[c] = (uint32_t)(c / fk);
    uint64_t last1 = UINT64_MAX, last2 = UINT64_MAX;
    int any_merged = 0;
    double count[NWALKS] = { 0 }; /* runs from step last_k on, per walk */
    double sum0 = 0, sum1 = 0, sum2 = 0, sum3 = 0; /* in registers: four chains */
    for (uint64_t g = 0; g < smp->ngroups; g++) {
        uint64_t c = smp->gstart[g], end = smp->gstart[g + 1];
        uint64_t s1 = smp->ci[c] / fi, s2 = smp->cj[c] / fj, last_k = UINT64_MAX;
        if (s1 != last1 || s2 != last2) {
            const uint64_t *x = &s0->w.arows[s1 * words], *y = &s0->w.bcols[s2 * words];
            uint64_t after = 0;
            for (uint64_t wd = 0; wd < words; wd++)
                visits[wd] = x[wd] & y[wd];
            for (uint64_t wd = words; wd-- > 0;) {
                vsuffix[wd] = after;
                after += stat_bits_set(visits[wd]);
            }
            any_merged = 0;
            for (unsigned n = 0; n < NWALKS; n++) {
                runs_set(&r[n], visits, n < 2 ? s1 : s2, n < 2 ? s2 : s1, words);
                any_merged |= r[n].merged;
            }
        }
        last1 = s1, last2 = s2;
        if (ws) {
            sample_pass_strata(smp, c, end, K, fk, step, visits, vsuffix, r, any_merged, ws, nt);
            continue;
        }
        /* a group's cells ascend in k: cells of one step share the counts;
         * without merged runs the four walks add the same term */
        for (double v = 0; !any_merged && c < end; c++) {
            uint64_t ck = smp->ck[c], k = ck < K * fk ? step[ck] : ck / fk;
            if (k != last_k) {
                v = (double)runs_from(visits, vsuffix, k);
                last_k = k;
            }
            double term = v * smp->weight[c];
            sum0 += term;
            sum1 += term;
            sum2 += term;
            sum3 += term;
        }
        for (; c < end; c++) {
            uint64_t ck = smp->ck[c], k = ck < K * fk ? step[ck] : ck / fk;
            if (k != last_k) {
                double v = (double)runs_from(visits, vsuffix, k);
                for (unsigned n = 0; n < NWALKS; n++)
                    count[n] = v;
                for (unsigned n = 0; any_merged && n < NWALKS; n++)
                    if (r[n].merged)
                        count[n] = (double)runs_from(r[n].ends, r[n].suffix, k);
                last_k = k;
            }
            double w = smp->weight[c];
            sum0 += count[0] * w;
            sum1 += count[1] * w;
            sum2 += count[2] * w;
            sum3 += count[3] * w;
        }
    }
    if (ws) {
        const double *sh = ws + NWALKS * nt;
        sum0 = stat_written_strata(smp, fk, ws, sh, nt);
        sum1 = stat_written_strata(smp, fk, ws + nt, sh, nt);
        sum2 = stat_written_strata(smp, fk, ws + 2 * nt, sh, nt);
        sum3 = stat_written_strata(smp, fk, ws + 3 * nt, sh, nt);
        tessel_dealloc(a, ws);
    }
    s->side[0].written[ORDER_IKJ] = sum0;
    s->side[0].written[ORDER_KIJ] = sum1;
    s->side[1].written[ORDER_IKJ] = sum2;
    s->side[1].written[ORDER_KIJ] = sum3;
    tessel_dealloc(a, buf);
    tessel_dealloc(a, step);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Building a shape */

static size_t shape_bytes(const shape *s)
{
    size_t b = sizeof(*s);
    for (unsigned m = 0; m < 2; m++)
        for (unsigned r = 0; r < NROLES; r++)
            b += (size_t)s->side[m].group[r].n * sizeof(uint64_t) * (2 + 2 * NORDERS);
    return b;
}

/* The grids at the shape: side 0 as coarsened, side 1 transposed. */
static int shape_grids(shape *s, const stat_cache_point *pt, const tessel_allocator *a)
{
    stat_problem *p0 = &s->side[0].p, *p1 = &s->side[1].p;
    int rc = stat_grid_coarsen(pt->base[0], pt->factor[0][0], pt->factor[0][1], a, &p0->a);
    if (!rc)
        rc = stat_grid_coarsen(pt->base[1], pt->factor[1][0], pt->factor[1][1], a, &p0->b);
    if (!rc)
        rc = stat_grid_transpose(&p0->b, a, &p1->a);
    if (!rc)
        rc = stat_grid_transpose(&p0->a, a, &p1->b);
    return rc;
}

/* Builds the summary into s (zeroed but for its key); on failure s is
 * left empty. */
static int shape_build(const stat_cache_point *pt, const tessel_allocator *a, shape *s)
{
    int rc = shape_grids(s, pt, a);
    for (unsigned m = 0; !rc && m < 2; m++)
        rc = side_build(&s->side[m], pt, (int)m, a);
    if (!rc && pt->sample && s->side[0].w.bitsets)
        rc = sample_pass(s, a);
    for (unsigned m = 0; m < 2; m++)
        side_drop_work(a, &s->side[m]);
    if (rc) {
        shape_empty(a, s);
        return rc;
    }
    s->bytes = shape_bytes(s);
    return TESSEL_OK;
}

/* The built summary of pt's shape, with a reference the caller releases:
 * found in the table, or built here when no thread has built it (after a
 * failed build, the next thread that needs it builds it).
 * STAT_CACHE_DECLINED when another thread is building it: the point is
 * then evaluated without the summary (the same result) instead of
 * waiting, so that a thread never idles behind another's build and no
 * shape is built twice. */
static int shape_acquire(tessel_stat_cache *c, const stat_cache_point *pt, shape **out)
{
    uint64_t key[4] = { pt->factor[0][0], pt->factor[0][1], pt->factor[1][0],
                        pt->factor[1][1] };
    shape_table *t = c->table;
    pthread_mutex_lock(&t->mu);
    uint32_t *slot = table_slot(t, key);
    shape *s;
    if (!*slot) {
        s = table_claim(t, key);
        if (!s) {
            pthread_mutex_unlock(&t->mu);
            return TESSEL_ENOMEM;
        }
    } else {
        s = t->shape[*slot - 1];
        if (s->state == SHAPE_IN_FLIGHT) {
            c->passed++;
            pthread_mutex_unlock(&t->mu);
            return STAT_CACHE_DECLINED;
        }
        s->refs++;
        if (s->state == SHAPE_READY) {
            c->hits++;
            pthread_mutex_unlock(&t->mu);
            *out = s;
            return TESSEL_OK;
        }
        s->state = SHAPE_IN_FLIGHT; /* its build failed: build it here */
    }
    pthread_mutex_unlock(&t->mu);
    int rc = shape_build(pt, t->alloc, s);
    pthread_mutex_lock(&t->mu);
    s->state = rc ? SHAPE_FAILED : SHAPE_READY;
    if (!rc) {
        c->misses++;
        if (!s->orphan)
            t->bytes += s->bytes;
    }
    pthread_mutex_unlock(&t->mu);
    if (rc) {
        shape_release(t, s);
        return rc;
    }
    *out = s;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* A point from a summary */

/* One input's counts at pricer pr and partition part: the rules of
 * stat_add_fill and stat_add_bumped in stat_spmspm.c, per tile size. 0 when a sum
 * could leave the range where doubles add whole numbers exactly. */
static int price_input(const size_groups *g, unsigned order, const pricer *pr, uint64_t part,
                       stat_counts *c, double *compulsory)
{
    memset(c, 0, sizeof(*c));
    if (g->n == 0)
        return 1;
    price top = stat_fast_price(pr, g->sizes[g->n - 1]);
    double bound = (double)(g->uses_total[order] + g->tiles_total) * (top.data + top.meta);
    if (!(bound < EXACT_LIMIT))
        return 0;
    const uint64_t *f = g->fills[order], *b = g->bumps[order];
    double all = 0;
    for (uint64_t d = 0; d < g->n; d++) {
        price pc = stat_fast_price(pr, g->sizes[d]);
        double total = pc.data + pc.meta, times = (double)f[d];
        all += (double)g->tiles[d] * total;
        c->fills += times;
        c->fill_data += times * pc.data;
        c->fill_meta += times * pc.meta;
        if (times > 0 && total > c->worst)
            c->worst = total;
        if (!part || total <= (double)part)
            continue;
        c->overflow_fills += times;
        if (!b[d])
            continue;
        double extra = total - (double)part, meta = floor(extra * pc.meta / total);
        c->bumped_data += (double)b[d] * (extra - meta);
        c->bumped_meta += (double)b[d] * meta;
    }
    *compulsory = all;
    return 1;
}

static unsigned order_index(const char *order)
{
    return strcmp(order, "IJK") == 0 ? ORDER_IJK : strcmp(order, "IKJ") == 0 ? ORDER_IKJ
                                                                              : ORDER_KIJ;
}

static int side_evaluate(const side *sd, const stat_cache_point *pt, stat_outcome *o)
{
    unsigned order = order_index(pt->order);
    memset(o, 0, sizeof(*o));
    o->effectual = sd->effectual;
    o->operand_nnz[0] = sd->operand_nnz[0];
    o->operand_nnz[1] = sd->operand_nnz[1];
    pricer pa = stat_pricer_of(&pt->cost_a), pb = stat_pricer_of(&pt->cost_b);
    if (stat_pricer_needs_rows(&pa) || stat_pricer_needs_rows(&pb))
        return STAT_CACHE_DECLINED; /* priced per tile from its rows (stat_tiledfmt.c) */
    double comp_a = 0, comp_b = 0;
    if (!price_input(&sd->group[ROLE_A], order, &pa, pt->part_a, &o->a, &comp_a) ||
        !price_input(&sd->group[ROLE_B], order, &pb, pt->part_b, &o->b, &comp_b))
        return STAT_CACHE_DECLINED;
    o->compulsory_in = comp_a + comp_b;
    stat_problem prob = sd->p; /* the point's own copy: the summary is shared */
    stat_problem *p = &prob;
    memcpy(p->order, pt->order, 4);
    p->cost_a = pt->cost_a;
    p->cost_b = pt->cost_b;
    p->cost_z = pt->cost_z;
    p->part_a = pt->part_a;
    p->part_b = pt->part_b;
    p->part_z = pt->part_z;
    p->step_k = pt->step_k;
    p->live_i = pt->live_i;
    p->live_j = pt->live_j;
    p->extent_k = pt->extent_k;
    p->flops = pt->flops;
    p->multiplicity = pt->multiplicity;
    p->out_cells = pt->out_cells;
    /* rule 4's output spill needs the pair walk the summary dropped: only
     * when the sample's fullest tile fits is the point priced here */
    if (stat_output_may_spill(p) &&
        (sd->max_pair_nnz < 0 || stat_output_tile_bytes(p, sd->max_pair_nnz) > (double)p->part_z))
        return STAT_CACHE_DECLINED;
    work w = sd->w; /* the flag and counts stat_output_traffic reads */
    w.p = p;
    w.merges = sd->merges[order];
    stat_known known = { sd->written[order], sd->nonempty, sd->max_pair_nnz };
    return stat_output_traffic(&w, &sd->ps, &known, o);
}

/* The point from its shape's summary; the summary is read-only here, so
 * threads sharing the table price points from it at the same time. */
int stat_cache_solve(tessel_stat_cache *c, const stat_cache_point *pt, stat_outcome *o)
{
    shape *s;
    int rc = shape_acquire(c, pt, &s);
    if (rc)
        return rc;
    rc = side_evaluate(&s->side[pt->mirror ? 1 : 0], pt, o);
    shape_release(c->table, s);
    return rc;
}

int stat_cache_belongs(const tessel_stat_cache *c, const tessel_stat_data *s)
{
    return c->table->stats == s;
}

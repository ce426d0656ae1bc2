/* Summaries of the nested stat closed form (stat_nested.c) kept across
 * design points, so that a point whose boundary b >= 2 has a geometry seen
 * before costs its distinct tile sizes instead of the merge walks and the
 * output sample's walk (docs/models/stat.md, "Nested summaries").
 *
 * A boundary's runs, merges, effectual iterations and output runs depend
 * on its geometry alone: the loop digits of levels 1 .. b (index, radix,
 * divisor), level b's tile edges and the derived edges of A and B on the
 * statistics' base grid. The key is exactly those numbers. What a point
 * adds (formats, bit widths, partitions, capacities) prices the summary:
 * a tile's price depends on its nonzeros alone, so the tiles are kept
 * grouped by size, as stat_cache.c does at boundary 1. Results are
 * identical: the fills and bumped uses are whole numbers, so their sums
 * by size equal the sums by tile while they stay below 2^52 (checked per
 * point; past it, and where rule 4 needs the tiles themselves or the
 * output may spill, the point is evaluated in full).
 *
 * The cache belongs to one tessel_stat_cache, which is never shared
 * between threads (tessel sweep and tessel map keep one per thread): no
 * lock. It holds up to NESTED_CACHE_MAX summaries and replaces the oldest
 * when full.
 *
 * It also keeps the merge walks' counts (stat_nested_merge.c) of a point
 * whose geometry is new, under the key of what a walk reads: its grids
 * (the derived edges), the level b-1 blocks it reads and its kind. A point
 * of a new geometry that shares them (A's row walk of points that differ
 * in level b-1's i edge) takes the counts off instead of walking: the same
 * whole numbers off the same tiles, so the same runs. Up to
 * NESTED_WALKS_MAX walks, the oldest replaced. */
#include <string.h>

#include "stat_nested.h"

#define NESTED_CACHE_MAX 64u
/* b, first digit, ndigits, 3 tile edges, 4 derived edges, 3 per digit */
#define NESTED_KEY_MAX (10 + 3 * NX * NLEV)

typedef struct nested_entry {
    uint64_t key[NESTED_KEY_MAX];
    unsigned keylen;
    nested_summary sm;
} nested_entry;

#define NESTED_WALKS_MAX 16u
/* A walk whose merges fall on more tiles than this is not kept. */
#define NESTED_WALK_TILES (UINT64_C(1) << 24)

/* One walk's merges: count tiles (tile[], ascending) of a grid of n. */
typedef struct walk_entry {
    uint64_t key[NESTED_WALK_KEY_MAX];
    unsigned keylen;
    uint64_t n, count;
    uint32_t *tile;
    nested_run *merges;
} walk_entry;

struct stat_nested_cache {
    const tessel_allocator *alloc;
    nested_entry *entry[NESTED_CACHE_MAX];
    unsigned count, next; /* entries held; the one to replace when full */
    uint64_t hits, misses; /* boundaries priced from a summary; summaries built */
    walk_entry *walk[NESTED_WALKS_MAX];
    unsigned nwalks, next_walk; /* as count, next */
    uint64_t walk_hits, walk_misses; /* walks taken off from a kept one; walks kept */
};

void stat_nested_cache_counts(const stat_nested_cache *c, uint64_t *hits, uint64_t *misses)
{
    *hits = c ? c->hits : 0;
    *misses = c ? c->misses : 0;
}

void stat_nested_walk_counts(const stat_nested_cache *c, uint64_t *hits, uint64_t *kept)
{
    *hits = c ? c->walk_hits : 0;
    *kept = c ? c->walk_misses : 0;
}

void tessel_stat_cache_nested_walks(tessel_stat_cache *c, uint64_t *hits, uint64_t *kept)
{
    stat_nested_walk_counts(c ? stat_cache_nested(c) : NULL, hits, kept);
}

static void walk_free(const tessel_allocator *a, walk_entry *w)
{
    if (!w)
        return;
    tessel_dealloc(a, w->tile);
    tessel_dealloc(a, w->merges);
    tessel_dealloc(a, w);
}

int stat_nested_walk_apply(stat_nested_cache *c, const uint64_t *key, unsigned len,
                           nested_run *runs, uint64_t n)
{
    for (unsigned i = 0; i < c->nwalks; i++) {
        const walk_entry *w = c->walk[i];
        if (w->keylen != len || w->n != n || memcmp(w->key, key, len * sizeof(*key)))
            continue;
        for (uint64_t q = 0; q < w->count; q++)
            runs[w->tile[q]] -= w->merges[q];
        c->walk_hits++;
        return 1;
    }
    return 0;
}

void stat_nested_walk_keep(stat_nested_cache *c, const uint64_t *key, unsigned len,
                           const nested_run *before, const nested_run *after, uint64_t n)
{
    const tessel_allocator *a = c->alloc;
    uint64_t cnt = 0;
    for (uint64_t t = 0; t < n; t++)
        cnt += before[t] != after[t];
    if (n > UINT32_MAX || cnt > NESTED_WALK_TILES || len > NESTED_WALK_KEY_MAX)
        return;
    walk_entry *w = tessel_alloc(a, sizeof(*w));
    if (!w)
        return;
    memset(w, 0, sizeof(*w));
    w->tile = tessel_alloc_array(a, cnt ? cnt : 1, sizeof(uint32_t));
    w->merges = tessel_alloc_array(a, cnt ? cnt : 1, sizeof(nested_run));
    if (!w->tile || !w->merges) {
        walk_free(a, w);
        return;
    }
    memcpy(w->key, key, len * sizeof(*key));
    w->keylen = len;
    w->n = n;
    for (uint64_t t = 0; t < n; t++)
        if (before[t] != after[t]) {
            w->tile[w->count] = (uint32_t)t;
            w->merges[w->count++] = before[t] - after[t];
        }
    c->walk_misses++;
    if (c->nwalks < NESTED_WALKS_MAX) {
        c->walk[c->nwalks++] = w;
        return;
    }
    walk_free(a, c->walk[c->next_walk]);
    c->walk[c->next_walk] = w;
    c->next_walk = (c->next_walk + 1) % NESTED_WALKS_MAX;
}

void stat_nested_summary_free(nested_summary *sm)
{
    const tessel_allocator *a = sm->alloc;
    for (unsigned i = 0; i < 2; i++) {
        tessel_dealloc(a, sm->size[i]);
        tessel_dealloc(a, sm->runs[i]);
        tessel_dealloc(a, sm->extra[i]);
    }
    memset(sm->size, 0, sizeof(sm->size));
    memset(sm->runs, 0, sizeof(sm->runs));
    memset(sm->extra, 0, sizeof(sm->extra));
    memset(sm->nsizes, 0, sizeof(sm->nsizes));
}

int stat_nested_cache_create(const tessel_allocator *a, stat_nested_cache **out)
{
    *out = tessel_alloc(a, sizeof(**out));
    if (!*out)
        return TESSEL_ENOMEM;
    memset(*out, 0, sizeof(**out));
    (*out)->alloc = a;
    return TESSEL_OK;
}

void stat_nested_cache_free(stat_nested_cache **c)
{
    if (!c || !*c)
        return;
    const tessel_allocator *a = (*c)->alloc;
    for (unsigned i = 0; i < (*c)->count; i++) {
        stat_nested_summary_free(&(*c)->entry[i]->sm);
        tessel_dealloc(a, (*c)->entry[i]);
    }
    for (unsigned i = 0; i < (*c)->nwalks; i++)
        walk_free(a, (*c)->walk[i]);
    tessel_dealloc(a, *c);
    *c = NULL;
}

int stat_nested_sizes_compact(const tessel_allocator *a, nested_summary *rec, unsigned op,
                         const double *r, const double *x, const unsigned char *seen,
                         uint64_t max)
{
    uint64_t cnt = 0;
    for (uint64_t v = 0; v <= max; v++)
        cnt += seen[v];
    rec->size[op] = tessel_alloc_array(a, cnt ? cnt : 1, sizeof(uint64_t));
    rec->runs[op] = tessel_alloc_array(a, cnt ? cnt : 1, sizeof(double));
    rec->extra[op] = tessel_alloc_array(a, cnt ? cnt : 1, sizeof(double));
    if (!rec->size[op] || !rec->runs[op] || !rec->extra[op])
        return TESSEL_ENOMEM;
    uint64_t d = 0;
    for (uint64_t v = 0; v <= max; v++)
        if (seen[v]) {
            rec->size[op][d] = v;
            rec->runs[op][d] = r[v];
            rec->extra[op][d++] = x[v];
        }
    rec->nsizes[op] = cnt;
    return TESSEL_OK;
}

void stat_nested_record_sizes(nested *n, unsigned op, const stat_grid *x, const stat_grid *p,
                              const nested_run *runs)
{
    const tessel_allocator *a = n->e->alloc;
    nested_summary *rec = n->rec;
    /* the kept arrays are the cache's (its allocator) */
    uint64_t max = 0;
    for (uint64_t t = 0; t < x->n; t++)
        max = x->nnz[t] > max ? x->nnz[t] : max;
    if (!rec->ok || max >= STAT_NESTED_SIZE_TABLE || rec->size[op]) {
        rec->ok = 0;
        return;
    }
    double *r = stat_zeroed(a, max + 1, sizeof(double));
    double *xs = stat_zeroed(a, max + 1, sizeof(double));
    unsigned char *seen = stat_zeroed(a, max + 1, 1);
    int rc = r && xs && seen ? TESSEL_OK : TESSEL_ENOMEM;
    /* input_side's terms: a tile with a run adds its runs as fills and
     * its further uses, where positive, as bumped uses */
    for (uint64_t o = 0; !rc && o < x->rows; o++)
        for (uint64_t t = x->ptr[o]; t < x->ptr[o + 1]; t++) {
            uint64_t k = x->col[t];
            double uses = k < p->rows ? (double)(p->ptr[k + 1] - p->ptr[k]) : 0;
            if (runs[t] <= 0)
                continue;
            r[x->nnz[t]] += runs[t];
            if (uses - runs[t] > 0)
                xs[x->nnz[t]] += uses - runs[t];
            seen[x->nnz[t]] = 1;
        }
    if (!rc)
        rc = stat_nested_sizes_compact(rec->alloc, rec, op, r, xs, seen, max);
    if (rc)
        rec->ok = 0;
    tessel_dealloc(a, r);
    tessel_dealloc(a, xs);
    tessel_dealloc(a, seen);
}

/* The key of boundary bd with derived edges ea (A) and eb (B). */
static unsigned key_of(const boundary *bd, unsigned first_digit, const uint64_t *ea,
                       const uint64_t *eb, uint64_t *key)
{
    unsigned n = 0;
    key[n++] = bd->b;
    key[n++] = first_digit;
    key[n++] = bd->ndigits;
    for (unsigned x = 0; x < 3; x++)
        key[n++] = bd->tile[x];
    key[n++] = ea[0];
    key[n++] = ea[1];
    key[n++] = eb[0];
    key[n++] = eb[1];
    for (unsigned d = 0; d < bd->ndigits; d++) {
        key[n++] = bd->d[d].x | (uint64_t)(bd->d[d].first != 0) << 32;
        key[n++] = bd->d[d].div;
        key[n++] = bd->d[d].radix;
    }
    return n;
}

static const nested_entry *cache_find(const stat_nested_cache *c, const uint64_t *key,
                                      unsigned len)
{
    for (unsigned i = 0; i < c->count; i++)
        if (c->entry[i]->keylen == len && !memcmp(c->entry[i]->key, key, len * sizeof(*key)))
            return c->entry[i];
    return NULL;
}

/* Keeps *sm under key (taking its arrays); drops it when out of memory. */
static void cache_insert(const tessel_allocator *a, stat_nested_cache *c, const uint64_t *key,
                         unsigned len, nested_summary *sm)
{
    nested_entry *en = tessel_alloc(a, sizeof(*en));
    if (!en) {
        stat_nested_summary_free(sm);
        return;
    }
    memcpy(en->key, key, len * sizeof(*key));
    en->keylen = len;
    en->sm = *sm;
    memset(sm, 0, sizeof(*sm));
    if (c->count < NESTED_CACHE_MAX) {
        c->entry[c->count++] = en;
        return;
    }
    stat_nested_summary_free(&c->entry[c->next]->sm);
    tessel_dealloc(a, c->entry[c->next]);
    c->entry[c->next] = en;
    c->next = (c->next + 1) % NESTED_CACHE_MAX;
}

/* The point's key; 0 when its geometry cannot be formed (the full
 * evaluation then reports why). */
static unsigned point_key(engine *e, unsigned b, const stat_input *const *in, boundary *bd,
                          uint64_t *key)
{
    boundary outer;
    memset(&outer, 0, sizeof(outer));
    outer.b = b - 1;
    memset(bd, 0, sizeof(*bd));
    bd->b = b;
    tessel_diag quiet;
    memset(&quiet, 0, sizeof(quiet));
    if (exact_geometry(e, &outer) || exact_geometry(e, bd))
        return 0;
    uint64_t edge[2][2];
    for (unsigned i = 0; i < 2; i++)
        for (unsigned m = 0; m < 2; m++)
            if (stat_derived_edge(e, bd, e->in[i].x[m], in[i]->grid->tile[m], &edge[i][m],
                                  &quiet))
                return 0;
    return key_of(bd, outer.ndigits, edge[0], edge[1], key);
}

int stat_nested_evaluate_cached(engine *e, unsigned b, const stat_input *const *in,
                                const stat_output_sample *s, stat_nested_cache *c,
                                tessel_diag *diag)
{
    uint64_t key[NESTED_KEY_MAX];
    boundary bd;
    unsigned len = c && s ? point_key(e, b, in, &bd, key) : 0;
    if (!len)
        return stat_nested_evaluate(e, b, in, s, diag);
    const nested_entry *hit = cache_find(c, key, len);
    if (hit) {
        int rc = stat_nested_from_summary(e, &bd, &hit->sm, s);
        if (rc != STAT_NESTED_KNOWN_DECLINED) {
            c->hits += !rc;
            return rc;
        }
        return stat_nested_evaluate(e, b, in, s, diag);
    }
    nested_summary sm;
    memset(&sm, 0, sizeof(sm));
    sm.alloc = c->alloc;
    sm.ok = 1;
    sm.walks = c;
    int rc = stat_nested_evaluate_rec(e, b, in, s, &sm, diag);
    sm.walks = NULL;
    if (!rc && sm.ok && sm.size[0] && sm.size[1]) {
        cache_insert(c->alloc, c, key, len, &sm);
        c->misses++;
    }
    else
        stat_nested_summary_free(&sm);
    return rc;
}

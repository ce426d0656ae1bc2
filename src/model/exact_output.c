/* The exact estimator: the output tables (first appearances per output
 * tile and reduction step). */
#include <string.h>

#include "exact_internal.h"

/* The passes visit output rows in order; all output tiles of one tile row
 * of the first output index (a "slab") are finished before the next slab
 * starts. Per slab, first appearances are counted per (output tile,
 * reduction key) in a dense counter (or a hash when that key space is
 * large), then appended in order: memory follows the distinct (tile, key)
 * pairs, not the output's nonzeros.
 *
 * With a per-rank output format, the same is done for coordinate prefixes
 * (fibers): a row i first appears in an output tile at the smallest
 * reduction key of its elements there. Prefix minima are buffered until the
 * prefix changes, then counted like elements. */

typedef struct out_agg {
    uint64_t *dense;      /* space counters, or NULL: use map */
    model_map map;
    model_vec touched;    /* dense: local keys touched in this slab */
    model_vec key, count; /* the table so far: global key, first appearances */
} out_agg;

/* Minimum reduction key per output tile of the current prefix (fiber). */
typedef struct prefix_buf {
    uint64_t current;     /* prefix id + 1; 0 none */
    uint64_t *min;        /* per_slab */
    uint64_t *stamp;      /* per_slab: current when min is valid */
    model_vec touched;
} prefix_buf;

typedef struct out_emitter {
    const tessel_allocator *alloc;
    unsigned depths;      /* tables: 1 (elements) or the output's order */
    uint64_t slab;        /* current slab, UINT64_MAX before the first */
    uint64_t per_slab;    /* output tiles in one slab */
    uint64_t space;       /* per_slab * red_space */
    out_agg agg[3];       /* per depth; agg[depths - 1] counts elements */
    prefix_buf pre[2];    /* depths 0 .. depths - 2 */
    unsigned whole;       /* rule 3: prefix depths counted over the whole output */
    uint64_t last[2], prefixes[2];
    uint64_t ttm_stamp;   /* TTM's fibre stamps, carried from row range to row range */
    uint64_t budget;      /* > 0: end the row range at a slab start once this many entries */
    uint64_t stop;        /* the row the range ended before, UINT64_MAX: all rows */
    /* tiled-csf output (docs/spec.md): depth 0 counts inner tiles, depth 1
     * row segments; their buffers are indexed by inner column (j / inner[1]),
     * not by output tile */
    unsigned tiled;
    uint64_t inner[2], otile1, ncols, gen[2];
} out_emitter;

#define DENSE_COUNTERS (UINT64_C(1) << 21)
#define MAX_PREFIX_TILES (UINT64_C(1) << 24)

static int agg_init(out_emitter *em, out_agg *g)
{
    memset(g, 0, sizeof(*g));
    g->map.alloc = g->touched.alloc = g->key.alloc = g->count.alloc = em->alloc;
    if (em->space <= DENSE_COUNTERS) {
        g->dense = tessel_alloc_array(em->alloc, em->space, sizeof(uint64_t));
        if (!g->dense)
            return TESSEL_ENOMEM;
        memset(g->dense, 0, em->space * sizeof(uint64_t));
    }
    return TESSEL_OK;
}

static void agg_free(const tessel_allocator *a, out_agg *g)
{
    tessel_dealloc(a, g->dense);
    model_map_free(&g->map);
    model_vec_free(&g->touched);
    model_vec_free(&g->key);
    model_vec_free(&g->count);
}

static int agg_add(out_agg *g, uint64_t local)
{
    if (g->dense) {
        if (!g->dense[local]++ && model_vec_push(&g->touched, local))
            return TESSEL_ENOMEM;
        return TESSEL_OK;
    }
    uint64_t *slot = model_map_slot(&g->map, local, 0);
    if (!slot)
        return TESSEL_ENOMEM;
    ++*slot;
    return TESSEL_OK;
}

/* Appends slab's counts in key order and clears them. */
static int agg_flush(const out_emitter *em, out_agg *g, uint64_t slab)
{
    uint64_t base = slab * em->space;
    if (!g->dense) {
        g->touched.n = 0;
        for (uint64_t s = 0; s < g->map.cap; s++)
            if (g->map.keys[s] != UINT64_MAX && model_vec_push(&g->touched, g->map.keys[s]))
                return TESSEL_ENOMEM;
    }
    uint64_t n = g->touched.n;
    if (n > 1) {
        uint64_t *scratch = tessel_alloc_array(em->alloc, n, sizeof(uint64_t));
        if (!scratch)
            return TESSEL_ENOMEM;
        tessel_sort_u64(g->touched.v, scratch, n, em->space - 1);
        tessel_dealloc(em->alloc, scratch);
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t local = g->touched.v[i], c;
        if (g->dense) {
            c = g->dense[local];
            g->dense[local] = 0;
        } else {
            c = *model_map_slot(&g->map, local, 0);
        }
        if (model_vec_push(&g->key, base + local) || model_vec_push(&g->count, c))
            return TESSEL_ENOMEM;
    }
    g->touched.n = 0;
    if (!g->dense && g->map.cap) {
        memset(g->map.keys, 0xff, g->map.cap * sizeof(uint64_t));
        g->map.n = 0;
    }
    return TESSEL_OK;
}

/* Counts the buffered prefixes of depth d as first appearances. */
static int prefix_flush(out_emitter *em, unsigned d)
{
    prefix_buf *p = &em->pre[d];
    for (uint64_t i = 0; i < p->touched.n; i++) {
        uint64_t slot = p->touched.v[i];
        /* tiled: the inner column's output tile within the slab */
        uint64_t rest = em->tiled ? slot * em->inner[1] / em->otile1 : slot;
        if (agg_add(&em->agg[d], rest * (em->space / em->per_slab) + p->min[slot]))
            return TESSEL_ENOMEM;
    }
    p->touched.n = 0;
    em->gen[d]++; /* tiled: the next prefix's stamps */
    return TESSEL_OK;
}

static int slab_flush(out_emitter *em)
{
    if (em->slab == UINT64_MAX)
        return TESSEL_OK;
    for (unsigned d = 0; d + 1 < em->depths; d++)
        if (prefix_flush(em, d))
            return TESSEL_ENOMEM;
    for (unsigned d = 0; d < em->depths; d++)
        if (agg_flush(em, &em->agg[d], em->slab))
            return TESSEL_ENOMEM;
    return TESSEL_OK;
}

static void emitter_free(out_emitter *em)
{
    for (unsigned d = 0; d < 3; d++)
        agg_free(em->alloc, &em->agg[d]);
    for (unsigned d = 0; d < 2; d++) {
        tessel_dealloc(em->alloc, em->pre[d].min);
        tessel_dealloc(em->alloc, em->pre[d].stamp);
        model_vec_free(&em->pre[d].touched);
    }
}

static int emitter_init(engine *e, const boundary *bd, out_emitter *em, int ranked)
{
    memset(em, 0, sizeof(*em));
    em->alloc = e->alloc;
    em->slab = UINT64_MAX;
    em->per_slab = 1;
    for (unsigned m = 1; m < e->out.order; m++)
        em->per_slab *= bd->ntiles[e->out.x[m]];
    em->space = em->per_slab * bd->red_space;
    em->depths = ranked ? e->out.ranks : 1;
    uint64_t slots = em->per_slab;
    if (ranked && bd->out_cost.tiled) {
        /* a matrix output (exact_tile_cost_init): inner tiles, row
         * segments, elements; the inner tile cut to the output tile */
        em->tiled = 1;
        em->depths = 3;
        for (unsigned m = 0; m < 2; m++) {
            uint64_t t = bd->tile[e->out.x[m]], in = bd->out_cost.inner[m];
            em->inner[m] = in && in < t ? in : t;
        }
        em->otile1 = bd->tile[e->out.x[1]];
        uint64_t ext = e->extent[e->out.x[1]];
        em->ncols = ext ? (ext + em->inner[1] - 1) / em->inner[1] : 1;
        slots = em->ncols;
    }
    if (em->depths > 1 && slots > MAX_PREFIX_TILES)
        return tessel_diag_set(e->diag, TESSEL_ERANGE, NULL, 0, 0, "format",
                               "level %s: a per-rank format for %s needs at most 2^24 tiles per "
                               "output tile row; use larger tiles",
                               e->spec->level[bd->b].name,
                               e->spec->workload.tensor[0].name);
    for (unsigned d = 0; d < em->depths; d++)
        if (agg_init(em, &em->agg[d]))
            return exact_oom(e);
    for (unsigned d = 0; d + 1 < em->depths; d++) {
        prefix_buf *p = &em->pre[d];
        p->touched.alloc = e->alloc;
        p->min = tessel_alloc_array(e->alloc, slots, sizeof(uint64_t));
        p->stamp = tessel_alloc_array(e->alloc, slots, sizeof(uint64_t));
        if (!p->min || !p->stamp)
            return exact_oom(e);
        memset(p->stamp, 0, slots * sizeof(uint64_t));
    }
    return TESSEL_OK;
}

/* Prefix id of depth d of an output element (its first d + 1 coordinates). */
static uint64_t prefix_id(const engine *e, const uint64_t *c_elem, unsigned d)
{
    uint64_t id = c_elem[e->out.x[0]];
    if (d > 0)
        id = id * e->extent[e->out.x[1]] + c_elem[e->out.x[1]];
    return id;
}

/* Starts output slab `slab` (a tile row of the first output index). */
static int emit_slab(engine *e, out_emitter *em, uint64_t slab)
{
    if (slab == em->slab)
        return TESSEL_OK;
    if (slab_flush(em))
        return exact_oom(e);
    em->slab = slab;
    return TESSEL_OK;
}

/* Whether the pass over rows from r0 ends before row i: a budgeted range
 * (exact_output_rows_upto) ends at the first slab start after its flushed
 * entries reach the budget, so a range always holds whole slabs. */
static int range_full(out_emitter *em, const boundary *bd, uint64_t i, uint64_t r0)
{
    if (!em->budget || i == r0 || i % bd->tile[0])
        return 0;
    uint64_t n = 0;
    for (unsigned d = 0; d < em->depths; d++)
        n += em->agg[d].key.n;
    if (n < em->budget)
        return 0;
    em->stop = i;
    return 1;
}

/* A tiled-csf output's element: its inner tile (depth 0, prefix the inner
 * row i / inner[0]) and its row segment (depth 1, prefix the row i), both
 * kept per inner column j / inner[1] with their smallest reduction key.
 * The passes emit rows in ascending order, so both prefixes are
 * contiguous; their counts go to the output tile of the inner column. */
static int emit_tiled(engine *e, out_emitter *em, const uint64_t *c_elem, uint64_t red)
{
    uint64_t i = c_elem[e->out.x[0]], slot = c_elem[e->out.x[1]] / em->inner[1];
    for (unsigned d = 0; d < 2; d++) {
        prefix_buf *p = &em->pre[d];
        uint64_t id = (d ? i : i / em->inner[0]) + 1;
        if (id != p->current) {
            if (prefix_flush(em, d))
                return exact_oom(e);
            p->current = id;
        }
        uint64_t g = em->gen[d] + 1;
        if (p->stamp[slot] != g) {
            p->stamp[slot] = g;
            p->min[slot] = red;
            if (model_vec_push(&p->touched, slot))
                return exact_oom(e);
        } else if (red < p->min[slot]) {
            p->min[slot] = red;
        }
    }
    return TESSEL_OK;
}

/* Counts one output element of the current slab, in output tile `rest`
 * within the slab, first produced at reduction key `red`. */
static int emit(engine *e, const boundary *bd, out_emitter *em, const uint64_t *c_elem,
                uint64_t rest, uint64_t red)
{
    if (agg_add(&em->agg[em->depths - 1], rest * bd->red_space + red))
        return exact_oom(e);
    /* the passes emit each row (fibre) contiguously: count the changes */
    for (unsigned d = 0; d < em->whole; d++) {
        uint64_t id = prefix_id(e, c_elem, d) + 1;
        em->prefixes[d] += id != em->last[d];
        em->last[d] = id;
    }
    if (em->tiled)
        return emit_tiled(e, em, c_elem, red);
    for (unsigned d = 0; d + 1 < em->depths; d++) {
        prefix_buf *p = &em->pre[d];
        uint64_t id = prefix_id(e, c_elem, d) + 1;
        if (id != p->current) {
            if (prefix_flush(em, d))
                return exact_oom(e);
            p->current = id;
        }
        if (p->stamp[rest] != id) {
            p->stamp[rest] = id;
            p->min[rest] = red;
            if (model_vec_push(&p->touched, rest))
                return exact_oom(e);
        } else if (red < p->min[rest]) {
            p->min[rest] = red;
        }
    }
    return TESSEL_OK;
}

/* Tile coordinate of every entry's mode m (one division per entry, not per
 * product). */
static uint32_t *tile_of_entries(engine *e, const tessel_tensor *t, unsigned m, uint64_t tile)
{
    uint32_t *v = tessel_alloc_array(e->alloc, t->nnz ? t->nnz : 1, sizeof(uint32_t));
    if (!v)
        return NULL;
    for (uint64_t p = 0; p < t->nnz; p++)
        v[p] = (uint32_t)(t->idx[m][p] / tile);
    return v;
}

/* Reduction key of an element's reduction coordinates. */
static uint64_t elem_red(const engine *e, const boundary *bd, uint64_t *c_elem)
{
    uint64_t c[NX] = { 0 };
    for (unsigned r = 0; r < e->nred; r++)
        c[e->red[r]] = c_elem[e->red[r]] / bd->tile[e->red[r]];
    return exact_reduction_key(e, bd, c);
}

/* SpMSpM / SpMV: row-wise (Gustavson); k ascends, so the first time an
 * output column is met is its smallest reduction key. Rows [r0, r1) and,
 * for a range of output columns (exact_stream.c), columns [c0, c1). */
static int pass_spmspm(engine *e, const boundary *bd, out_emitter *g, uint64_t *macs,
                       uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1)
{
    const tessel_tensor *a = e->in[0].t, *b = e->in[1].t;
    uint32_t *jtile = tile_of_entries(e, b, 1, bd->tile[1]);
    if (!jtile)
        return exact_oom(e);
    uint64_t c[NX] = { 0 };
    for (uint64_t i = r0; i < a->dims[0] && i < r1 && !range_full(g, bd, i, r0); i++) {
        uint64_t stamp = i + 1;
        c[0] = i;
        if (a->ptr[i + 1] > a->ptr[i] && emit_slab(e, g, i / bd->tile[0])) {
            tessel_dealloc(e->alloc, jtile);
            return TESSEL_ENOMEM;
        }
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            uint64_t k = a->idx[1][p];
            c[2] = k;
            uint64_t red = elem_red(e, bd, c);
            uint64_t q0 = c0 ? tessel_tensor_row_lower_bound(b, k, c0) : b->ptr[k];
            uint64_t q1 =
                c1 < UINT64_MAX ? tessel_tensor_row_lower_bound(b, k, c1) : b->ptr[k + 1];
            *macs += q1 - q0;
            for (uint64_t q = q0; q < q1; q++) {
                uint64_t j = b->idx[1][q];
                if (e->mark[j] == stamp)
                    continue;
                e->mark[j] = stamp;
                c[1] = j;
                if (emit(e, bd, g, c, jtile[q], red)) {
                    tessel_dealloc(e->alloc, jtile);
                    return TESSEL_ENOMEM;
                }
            }
        }
    }
    tessel_dealloc(e->alloc, jtile);
    return TESSEL_OK;
}

/* TTM: per fiber T(i,j,:), k ascends. */
static int pass_ttm(engine *e, const boundary *bd, out_emitter *g, uint64_t *macs, uint64_t r0,
                    uint64_t r1)
{
    const tessel_tensor *t = e->in[0].t, *m = e->in[1].t;
    uint32_t *rtile = tile_of_entries(e, m, 1, bd->tile[2]);
    if (!rtile)
        return exact_oom(e);
    uint64_t c[NX] = { 0 }, stamp = g->ttm_stamp, jbase = 0;
    for (uint64_t i = r0; i < t->dims[0] && i < r1 && !range_full(g, bd, i, r0); i++) {
        c[0] = i;
        if (t->ptr[i + 1] > t->ptr[i] && emit_slab(e, g, i / bd->tile[0])) {
            tessel_dealloc(e->alloc, rtile);
            return TESSEL_ENOMEM;
        }
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            if (p == t->ptr[i] || t->idx[1][p] != t->idx[1][p - 1]) {
                stamp++;
                jbase = t->idx[1][p] / bd->tile[1] * bd->ntiles[2];
            }
            c[1] = t->idx[1][p];
            uint64_t k = t->idx[2][p];
            c[3] = k;
            uint64_t red = elem_red(e, bd, c);
            *macs += m->ptr[k + 1] - m->ptr[k];
            for (uint64_t q = m->ptr[k]; q < m->ptr[k + 1]; q++) {
                uint64_t r = m->idx[1][q];
                if (e->mark[r] == stamp)
                    continue;
                e->mark[r] = stamp;
                c[2] = r;
                if (emit(e, bd, g, c, jbase + rtile[q], red)) {
                    tessel_dealloc(e->alloc, rtile);
                    return TESSEL_ENOMEM;
                }
            }
        }
    }
    g->ttm_stamp = stamp;
    tessel_dealloc(e->alloc, rtile);
    return TESSEL_OK;
}

/* MTTKRP: per slice T(i,:,:); the reduction key over (j, k) is not
 * monotone in storage order, so keep the smallest per r. */
static int pass_mttkrp(engine *e, const boundary *bd, out_emitter *g, uint64_t *macs,
                       uint64_t r0, uint64_t r1)
{
    const tessel_tensor *t = e->in[0].t, *fb = e->in[1].t, *fc = e->in[2].t;
    uint64_t c[NX] = { 0 };
    for (uint64_t i = r0; i < t->dims[0] && i < r1 && !range_full(g, bd, i, r0); i++) {
        uint64_t stamp = i + 1, ntouched = 0;
        c[0] = i;
        if (t->ptr[i + 1] > t->ptr[i] && emit_slab(e, g, i / bd->tile[0]))
            return TESSEL_ENOMEM;
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            uint64_t j = t->idx[1][p], k = t->idx[2][p];
            c[2] = j, c[3] = k;
            uint64_t red = elem_red(e, bd, c);
            uint64_t q = fb->ptr[j], qe = fb->ptr[j + 1], s = fc->ptr[k], se = fc->ptr[k + 1];
            while (q < qe && s < se) {
                uint32_t rb = fb->idx[1][q], rc = fc->idx[1][s];
                if (rb < rc) {
                    q++;
                } else if (rc < rb) {
                    s++;
                } else {
                    ++*macs;
                    if (e->mark[rb] != stamp) {
                        e->mark[rb] = stamp;
                        e->minkey[rb] = red;
                        e->touched[ntouched++] = rb;
                    } else if (red < e->minkey[rb]) {
                        e->minkey[rb] = red;
                    }
                    q++, s++;
                }
            }
        }
        for (uint64_t n = 0; n < ntouched; n++) {
            c[1] = e->touched[n];
            if (emit(e, bd, g, c, c[1] / bd->tile[1], e->minkey[c[1]]))
                return TESSEL_ENOMEM;
        }
    }
    return TESSEL_OK;
}

/* Turns one depth's (tile, reduction key, count) records into per-tile
 * cumulative counts. */
static int table_build(engine *e, const boundary *bd, const out_agg *g, out_table *t)
{
    uint64_t nent = g->key.n, nout = 0;
    for (uint64_t i = 0; i < nent; i++)
        if (i == 0 || g->key.v[i] / bd->red_space != g->key.v[i - 1] / bd->red_space)
            nout++;
    t->key = tessel_alloc_array(e->alloc, nout + 1, sizeof(uint64_t));
    t->start = tessel_alloc_array(e->alloc, nout + 1, sizeof(uint64_t));
    t->red = tessel_alloc_array(e->alloc, nent + 1, sizeof(uint64_t));
    t->cum = tessel_alloc_array(e->alloc, nent + 1, sizeof(uint64_t));
    if (!t->key || !t->start || !t->red || !t->cum)
        return exact_oom(e);
    uint64_t o = 0;
    for (uint64_t i = 0; i < nent; i++) {
        uint64_t tile = g->key.v[i] / bd->red_space;
        int new_tile = i == 0 || tile != g->key.v[i - 1] / bd->red_space;
        if (new_tile) {
            t->key[o] = tile;
            t->start[o] = i;
            o++;
        }
        t->red[i] = g->key.v[i] % bd->red_space;
        t->cum[i] = (new_tile ? 0 : t->cum[i - 1]) + g->count.v[i];
    }
    t->start[nout] = nent;
    t->nout = nout;
    t->nent = nent;
    if (bd->out_tiles <= DIRECT_TILES) {
        t->pos = tessel_alloc_array(e->alloc, bd->out_tiles, sizeof(uint64_t));
        if (!t->pos)
            return exact_oom(e);
        memset(t->pos, 0, bd->out_tiles * sizeof(uint64_t));
        for (uint64_t i = 0; i < nout; i++)
            t->pos[t->key[i]] = i + 1;
    }
    return TESSEL_OK;
}

void exact_table_free(const tessel_allocator *a, out_table *t)
{
    tessel_dealloc(a, t->key);
    tessel_dealloc(a, t->start);
    tessel_dealloc(a, t->red);
    tessel_dealloc(a, t->cum);
    tessel_dealloc(a, t->pos);
    memset(t, 0, sizeof(*t));
}

/* The pass over output coordinates [lo, hi) of the output's mode m (rows,
 * or SpMSpM's columns), its slabs flushed into the tables. */
static int pass_rows(engine *e, boundary *bd, out_emitter *em, uint64_t *macs, unsigned m,
                     uint64_t lo, uint64_t hi)
{
    int rc;
    uint64_t r0 = m ? 0 : lo, r1 = m ? UINT64_MAX : hi;
    if (e->kind == TESSEL_WORKLOAD_TTM)
        rc = pass_ttm(e, bd, em, macs, r0, r1);
    else if (e->kind == TESSEL_WORKLOAD_MTTKRP)
        rc = pass_mttkrp(e, bd, em, macs, r0, r1);
    else
        rc = pass_spmspm(e, bd, em, macs, r0, r1, m ? lo : 0, m ? hi : UINT64_MAX);
    if (!rc && slab_flush(em))
        rc = exact_oom(e);
    em->slab = UINT64_MAX;
    for (unsigned d = 0; !rc && d < em->depths; d++) {
        exact_table_free(e->alloc, &bd->table[d]);
        rc = table_build(e, bd, &em->agg[d], &bd->table[d]);
        em->agg[d].key.n = em->agg[d].count.n = 0;
    }
    bd->ntables = em->depths;
    bd->out_prefixes[0] = em->prefixes[0];
    bd->out_prefixes[1] = em->prefixes[1];
    return rc;
}

static int emitter_start(engine *e, boundary *bd, out_emitter *em, int ranked)
{
    bd->out_tiles = 1;
    for (unsigned m = 0; m < e->out.order; m++)
        bd->out_tiles *= bd->ntiles[e->out.x[m]];
    int rc = emitter_init(e, bd, em, ranked);
    if (bd->b == 1 && exact_output_needs_prefixes(e))
        em->whole = e->out.ranks > 1 ? (e->out.ranks > 3 ? 2 : e->out.ranks - 1) : 0;
    bd->ntables = em->depths;
    return rc;
}

/* Runs the pass and builds the tables: elements, and with a per-rank
 * output format also the fibers of every depth. */
int exact_build_output(engine *e, boundary *bd, int ranked, uint64_t *macs)
{
    out_emitter em;
    int rc = emitter_start(e, bd, &em, ranked);
    if (!rc)
        rc = pass_rows(e, bd, &em, macs, 0, 0, UINT64_MAX);
    emitter_free(&em);
    return rc;
}

/* Output tables a range of rows at a time (exact_stream.c): the emitter
 * lives from range to range, so whole-output prefix counts carry over. */
int exact_output_rows_begin(engine *e, boundary *bd, struct out_emitter **h)
{
    *h = tessel_alloc(e->alloc, sizeof(out_emitter));
    if (!*h)
        return exact_oom_step(e, "starting the output tables", sizeof(out_emitter));
    return emitter_start(e, bd, *h, bd->out_cost.ranked || bd->out_cost.tiled);
}

int exact_output_rows(engine *e, boundary *bd, struct out_emitter *h, unsigned m, uint64_t lo,
                      uint64_t hi, uint64_t *macs)
{
    return pass_rows(e, bd, h, macs, m, lo, hi);
}

/* The tables of rows from lo on, ended at the first slab start where they
 * hold `budget` entries (all depths): *hi is the row the range ends
 * before (the whole extent when the rows ran out first). */
int exact_output_rows_upto(engine *e, boundary *bd, struct out_emitter *h, uint64_t lo,
                           uint64_t budget, uint64_t *hi, uint64_t *macs)
{
    h->budget = budget ? budget : 1;
    h->stop = UINT64_MAX;
    int rc = pass_rows(e, bd, h, macs, 0, lo, UINT64_MAX);
    *hi = h->stop;
    h->budget = 0;
    return rc;
}

void exact_output_rows_end(engine *e, struct out_emitter *h)
{
    if (!h)
        return;
    emitter_free(h);
    tessel_dealloc(e->alloc, h);
}

/* Count of depth d's table for output tile `key` after the reduction
 * prefix <= red. With a cursor (the walk's per-tile position in the table,
 * valid because a tile's reduction keys only grow) the search is amortised
 * O(1); without, a binary search. */
uint64_t exact_output_count(const boundary *bd, unsigned d, uint64_t key, uint64_t red,
                            uint64_t *cursor)
{
    const out_table *t = &bd->table[d];
    uint64_t lo = exact_table_row(t, key);
    if (lo == UINT64_MAX)
        return 0;
    uint64_t first = t->start[lo], end = t->start[lo + 1], a;
    if (cursor) {
        a = *cursor > first ? *cursor : first;
        while (a < end && t->red[a] <= red)
            a++;
        *cursor = a;
    } else {
        uint64_t z = end; /* last entry with red <= red */
        a = first;
        while (a < z) {
            uint64_t mid = a + (z - a) / 2;
            if (t->red[mid] <= red)
                a = mid + 1;
            else
                z = mid;
        }
    }
    return a == first ? 0 : t->cum[a - 1];
}

/* Fills occupied[0 .. ntables) for output tile `key` at reduction `red`:
 * prefix counts per depth, the element count last. cursors: one per
 * depth, or NULL. */
void exact_output_occupancy(const boundary *bd, uint64_t key, uint64_t red, uint64_t *cursors,
                            uint64_t *occupied)
{
    for (unsigned d = 0; d < bd->ntables; d++)
        occupied[d] = exact_output_count(bd, d, key, red, cursors ? &cursors[d] : NULL);
}

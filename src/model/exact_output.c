/* The exact estimator: the output table (first appearances per output
 * tile and reduction step). */
#include <string.h>

#include "exact_internal.h"

/* ------------------------------------------------------------------ */
/* 1. The output table.
 *
 * The passes visit output rows in order; all output tiles of one tile row
 * of the first output index (a "slab") are finished before the next slab
 * starts. Per slab, first appearances are counted per (output tile,
 * reduction key) in a dense counter (or a hash when that key space is
 * large), then appended in order: memory follows the distinct (tile, key)
 * pairs, not the output's nonzeros. */

typedef struct out_agg {
    const tessel_allocator *alloc;
    uint64_t slab;       /* current slab, UINT64_MAX before the first */
    uint64_t per_slab;   /* output tiles in one slab */
    uint64_t space;      /* per_slab * red_space */
    uint64_t *dense;     /* space counters, or NULL: use map */
    model_map map;
    model_vec touched;   /* dense: local keys touched in this slab */
    model_vec key, count; /* the table so far: global key, first appearances */
} out_agg;

#define DENSE_COUNTERS (UINT64_C(1) << 21)

static int agg_init(engine *e, const boundary *bd, out_agg *g)
{
    memset(g, 0, sizeof(*g));
    g->alloc = e->alloc;
    g->slab = UINT64_MAX;
    g->map.alloc = g->touched.alloc = g->key.alloc = g->count.alloc = e->alloc;
    g->per_slab = 1;
    for (unsigned m = 1; m < e->out.order; m++)
        g->per_slab *= bd->ntiles[e->out.x[m]];
    g->space = g->per_slab * bd->red_space;
    if (g->space <= DENSE_COUNTERS) {
        g->dense = tessel_alloc_array(e->alloc, g->space, sizeof(uint64_t));
        if (!g->dense)
            return exact_oom(e);
        memset(g->dense, 0, g->space * sizeof(uint64_t));
    }
    return TESSEL_OK;
}

static void agg_free(out_agg *g)
{
    tessel_dealloc(g->alloc, g->dense);
    model_map_free(&g->map);
    model_vec_free(&g->touched);
    model_vec_free(&g->key);
    model_vec_free(&g->count);
}

/* Appends the current slab's counts in key order and clears them. */
static int agg_flush(out_agg *g)
{
    if (g->slab == UINT64_MAX)
        return TESSEL_OK;
    uint64_t base = g->slab * g->space;
    if (!g->dense) {
        g->touched.n = 0;
        for (uint64_t s = 0; s < g->map.cap; s++)
            if (g->map.keys[s] != UINT64_MAX && model_vec_push(&g->touched, g->map.keys[s]))
                return TESSEL_ENOMEM;
    }
    uint64_t n = g->touched.n;
    if (n > 1) {
        uint64_t *scratch = tessel_alloc_array(g->alloc, n, sizeof(uint64_t));
        if (!scratch)
            return TESSEL_ENOMEM;
        tessel_sort_u64(g->touched.v, scratch, n, g->space - 1);
        tessel_dealloc(g->alloc, scratch);
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
    if (!g->dense && g->map.cap)
        memset(g->map.keys, 0xff, g->map.cap * sizeof(uint64_t)), g->map.n = 0;
    return TESSEL_OK;
}

/* Counts one output element first produced at reduction key `red`. */
static int emit(engine *e, const boundary *bd, out_agg *g, const uint64_t *c_elem, uint64_t red)
{
    uint64_t slab = c_elem[e->out.x[0]] / bd->tile[e->out.x[0]];
    if (slab != g->slab) {
        if (agg_flush(g))
            return exact_oom(e);
        g->slab = slab;
    }
    uint64_t rest = 0;
    for (unsigned m = 1; m < e->out.order; m++) {
        unsigned x = e->out.x[m];
        rest = rest * bd->ntiles[x] + c_elem[x] / bd->tile[x];
    }
    uint64_t local = rest * bd->red_space + red;
    if (g->dense) {
        if (!g->dense[local]++ && model_vec_push(&g->touched, local))
            return exact_oom(e);
        return TESSEL_OK;
    }
    uint64_t *slot = model_map_slot(&g->map, local, 0);
    if (!slot)
        return exact_oom(e);
    ++*slot;
    return TESSEL_OK;
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
 * output column is met is its smallest reduction key. */
static int pass_spmspm(engine *e, const boundary *bd, out_agg *g, uint64_t *macs)
{
    const tessel_tensor *a = e->in[0].t, *b = e->in[1].t;
    uint64_t c[NX] = { 0 };
    for (uint64_t i = 0; i < a->dims[0]; i++) {
        uint64_t stamp = i + 1;
        c[0] = i;
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            uint64_t k = a->idx[1][p];
            c[2] = k;
            uint64_t red = elem_red(e, bd, c);
            *macs += b->ptr[k + 1] - b->ptr[k];
            for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
                uint64_t j = b->idx[1][q];
                if (e->mark[j] == stamp)
                    continue;
                e->mark[j] = stamp;
                c[1] = j;
                if (emit(e, bd, g, c, red))
                    return TESSEL_ENOMEM;
            }
        }
    }
    return TESSEL_OK;
}

/* TTM: per fiber T(i,j,:), k ascends. */
static int pass_ttm(engine *e, const boundary *bd, out_agg *g, uint64_t *macs)
{
    const tessel_tensor *t = e->in[0].t, *m = e->in[1].t;
    uint64_t c[NX] = { 0 }, stamp = 0;
    for (uint64_t i = 0; i < t->dims[0]; i++) {
        c[0] = i;
        for (uint64_t p = t->ptr[i]; p < t->ptr[i + 1]; p++) {
            if (p == t->ptr[i] || t->idx[1][p] != t->idx[1][p - 1])
                stamp++;
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
                if (emit(e, bd, g, c, red))
                    return TESSEL_ENOMEM;
            }
        }
    }
    return TESSEL_OK;
}

/* MTTKRP: per slice T(i,:,:); the reduction key over (j, k) is not
 * monotone in storage order, so keep the smallest per r. */
static int pass_mttkrp(engine *e, const boundary *bd, out_agg *g, uint64_t *macs)
{
    const tessel_tensor *t = e->in[0].t, *fb = e->in[1].t, *fc = e->in[2].t;
    uint64_t c[NX] = { 0 };
    for (uint64_t i = 0; i < t->dims[0]; i++) {
        uint64_t stamp = i + 1, ntouched = 0;
        c[0] = i;
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
            if (emit(e, bd, g, c, e->minkey[c[1]]))
                return TESSEL_ENOMEM;
        }
    }
    return TESSEL_OK;
}

/* Runs the pass and turns the (tile, reduction key, count) records into
 * per-tile cumulative counts. */
int exact_build_output(engine *e, boundary *bd, uint64_t *macs)
{
    out_agg g;
    int rc = agg_init(e, bd, &g);
    if (!rc) {
        if (e->kind == TESSEL_WORKLOAD_TTM)
            rc = pass_ttm(e, bd, &g, macs);
        else if (e->kind == TESSEL_WORKLOAD_MTTKRP)
            rc = pass_mttkrp(e, bd, &g, macs);
        else
            rc = pass_spmspm(e, bd, &g, macs);
    }
    if (!rc)
        rc = agg_flush(&g);
    if (rc) {
        agg_free(&g);
        return exact_oom(e);
    }
    uint64_t nent = g.key.n, nout = 0;
    for (uint64_t i = 0; i < nent; i++)
        if (i == 0 || g.key.v[i] / bd->red_space != g.key.v[i - 1] / bd->red_space)
            nout++;
    bd->out_key = tessel_alloc_array(e->alloc, nout + 1, sizeof(uint64_t));
    bd->out_start = tessel_alloc_array(e->alloc, nout + 1, sizeof(uint64_t));
    bd->ent_red = tessel_alloc_array(e->alloc, nent + 1, sizeof(uint64_t));
    bd->ent_cum = tessel_alloc_array(e->alloc, nent + 1, sizeof(uint64_t));
    if (!bd->out_key || !bd->out_start || !bd->ent_red || !bd->ent_cum) {
        agg_free(&g);
        return exact_oom(e);
    }
    uint64_t o = 0;
    for (uint64_t i = 0; i < nent; i++) {
        uint64_t tile = g.key.v[i] / bd->red_space;
        int new_tile = i == 0 || tile != g.key.v[i - 1] / bd->red_space;
        if (new_tile) {
            bd->out_key[o] = tile;
            bd->out_start[o] = i;
            o++;
        }
        bd->ent_red[i] = g.key.v[i] % bd->red_space;
        bd->ent_cum[i] = (new_tile ? 0 : bd->ent_cum[i - 1]) + g.count.v[i];
    }
    bd->out_start[nout] = nent;
    bd->nout = nout;
    bd->nent = nent;
    agg_free(&g);
    bd->out_tiles = 1;
    for (unsigned m = 0; m < e->out.order; m++)
        bd->out_tiles *= bd->ntiles[e->out.x[m]];
    if (bd->out_tiles <= DIRECT_TILES) {
        bd->out_pos = tessel_alloc_array(e->alloc, bd->out_tiles, sizeof(uint64_t));
        if (!bd->out_pos)
            return exact_oom(e);
        memset(bd->out_pos, 0, bd->out_tiles * sizeof(uint64_t));
        for (uint64_t i = 0; i < nout; i++)
            bd->out_pos[bd->out_key[i]] = i + 1;
    }
    return TESSEL_OK;
}

/* Partial nonzeros of output tile `key` after the reduction prefix <= red. */
uint64_t exact_output_count(const boundary *bd, uint64_t key, uint64_t red)
{
    uint64_t lo = 0, hi = bd->nout;
    if (bd->out_pos) {
        if (!bd->out_pos[key])
            return 0;
        lo = bd->out_pos[key] - 1;
    } else {
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (bd->out_key[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == bd->nout || bd->out_key[lo] != key)
            return 0;
    }
    uint64_t a = bd->out_start[lo], z = bd->out_start[lo + 1];
    while (a < z) { /* last entry with ent_red <= red */
        uint64_t mid = a + (z - a) / 2;
        if (bd->ent_red[mid] <= red)
            a = mid + 1;
        else
            z = mid;
    }
    return a == bd->out_start[lo] ? 0 : bd->ent_cum[a - 1];
}


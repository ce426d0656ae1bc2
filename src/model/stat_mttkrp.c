/* Closed sums for MTTKRP Y[i,r] = T[i,j,k] B[j,r] C[k,r] at one buffer
 * level (docs/models/stat.md, "MTTKRP in closed form" and "MTTKRP in
 * closed form in every loop order"), in place of the walk of stat_walk.c
 * (engine indices 0 i, 1 r, 2 j, 3 k; a loop of one tile is no loop).
 *
 * With every iteration effectual, the tile iterations are the triples of
 * non-empty tiles T(ti, tj, tk), B(tj, tr), C(tk, tr), visited in the
 * loop order. They are enumerated straight from T's grid: T's tiles sorted
 * by its modes in the loop order, cut into groups that share the modes
 * outside r; per group, r's tiles in turn, and per r tile the group's
 * tiles in order, kept where B(tj, tr) and C(tk, tr) are non-empty. That
 * is the walk's order, with no loop keys generated, sorted or decoded;
 * every tile is priced once, and B's and C's tiles are found by a direct
 * index. Inputs follow rule 1 as in the walk: a fill where the tile
 * differs from the resident one, a reuse otherwise (rule 4: an overbooked
 * tile's excess streams again on each reuse). An output run (consecutive
 * iterations on one output tile) ends in a write-back at the reduction
 * step of its last iteration, with a read-back of the previous run's
 * contents when the tile was written before (rule 2, priced as the
 * streaming walk prices it: exact_live_writeback). When i and r are
 * outside j and k, each output tile is one run, and the output table
 * needs only final counts (stat_mttkrp_final_only). Every count is the
 * walk's integer sum over the same iterations, so the results equal the
 * walk's, and -e exact's with the whole output in the sample. */
#include <string.h>

#include "stat_mttkrp.h"

/* Direct indexes of B's and C's tiles up to this many (tile row, r tile)
 * slots each; past it, the grid's own search (exact_tile_index). */
#define MK_DIRECT_SLOTS (UINT64_C(1) << 24)

/* Position of engine index x among boundary bd's loops of more than one
 * tile, -1 when x has none (it takes one value: outermost). */
static int looped_position(const boundary *bd, unsigned x)
{
    int p = 0;
    for (unsigned d = 0; d < bd->ndigits; d++) {
        if (bd->d[d].radix <= 1)
            continue;
        if (bd->d[d].x == x)
            return p;
        p++;
    }
    return -1;
}

int stat_mttkrp_applies(const engine *e, const boundary *bd)
{
    if (e->kind != TESSEL_WORKLOAD_MTTKRP || e->nin != 3 || e->nlev != 2 || bd->b != 1 ||
        e->inspill || e->outer_any[1] || bd->by_rows || bd->spill_known)
        return 0;
    return exact_all_effectual(e, bd); /* gated or non-skipping inputs walk */
}

int stat_mttkrp_final_only(const engine *e, const boundary *bd)
{
    (void)e;
    int pos[NX];
    for (unsigned x = 0; x < NX; x++)
        pos[x] = looped_position(bd, x);
    for (unsigned o = 0; o < 2; o++)
        for (unsigned q = 2; q < 4; q++)
            if (pos[o] >= 0 && pos[q] >= 0 && pos[o] > pos[q])
                return 0;
    return 1;
}

int stat_mttkrp_fits(const engine *e, const boundary *bd)
{
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    const out_table *t = &bd->table[bd->ntables - 1];
    for (uint64_t o = 0; part && o < t->nout; o++) {
        uint64_t data, meta;
        exact_output_bytes(bd, t->key[o], UINT64_MAX, NULL, &data, &meta);
        if (data + meta > part)
            return 0;
    }
    return 1;
}

/* The level-b reduction key of a multiply's (j, k) sample cells is the
 * sum of one term per index (each loop digit reads one index): here each
 * term per cell, through exact_reduction_key with the other index at 0. */
static uint64_t *red_term(const engine *e, const boundary *bd, unsigned x, uint64_t base,
                          uint64_t n)
{
    uint64_t *g = tessel_alloc_array(e->alloc, n ? n : 1, sizeof(uint64_t));
    uint64_t c[NX] = { 0 };
    for (uint64_t cell = 0; g && cell < n; cell++) {
        c[x] = cell * base / bd->tile[x];
        g[cell] = exact_reduction_key(e, bd, c);
    }
    return g;
}

int stat_mttkrp_red_terms(const engine *e, const boundary *bd, const stat_output_sample *s,
                          uint64_t **gj, uint64_t **gk)
{
    uint64_t bj = s->base[3] ? s->base[3] : 1, bk = s->base[2] ? s->base[2] : 1;
    uint64_t nj = (e->extent[2] + bj - 1) / bj, nk = (e->extent[3] + bk - 1) / bk;
    *gj = *gk = NULL;
    if (nj > MK_DIRECT_SLOTS || nk > MK_DIRECT_SLOTS)
        return TESSEL_OK;
    uint64_t m = s->nelems ? s->eptr[s->nelems] : 0;
    for (uint64_t q = 0; q < m; q++)
        if (s->ej[q] >= nj || s->ek[q] >= nk)
            return TESSEL_OK; /* a cell off the extents: the key per multiply */
    *gj = red_term(e, bd, 2, bj, nj);
    *gk = *gj ? red_term(e, bd, 3, bk, nk) : NULL;
    if (*gk)
        return TESSEL_OK;
    tessel_dealloc(e->alloc, *gj);
    *gj = NULL;
    return TESSEL_ENOMEM;
}

/* The state carried from iteration to iteration, as the walk's, and the
 * per-point tables: each input tile's bytes, B's and C's direct indexes,
 * the output tiles' runs. */
typedef struct mk_state {
    engine *e;
    const boundary *bd;
    exact_resident res[NIN];
    uint64_t part[NIN];
    unsigned coord_bits;
    int scalar[NIN];
    uint64_t *bytes[NIN]; /* data, meta per grid tile */
    uint64_t *direct[NIN]; /* B, C: grid tile + 1 at row * r tiles + tr, 0 none */
    exact_out_live lv;     /* each output tile's last write-back */
    int open;              /* an output run is open, its last iteration at last */
    uint64_t last[NX];
} mk_state;

static void mk_free(mk_state *s)
{
    for (unsigned i = 0; i < NIN; i++) {
        tessel_dealloc(s->e->alloc, s->bytes[i]);
        tessel_dealloc(s->e->alloc, s->direct[i]);
    }
    exact_live_free(s->e, &s->lv);
}

/* Every tile of every input priced once (exact_tile_bytes, as the walk
 * prices each fill), and B's and C's direct indexes where they fit. */
static int mk_tables(mk_state *s)
{
    const boundary *bd = s->bd;
    for (unsigned i = 0; i < NIN; i++) {
        const tessel_tile_grid *g = bd->grid[i];
        s->bytes[i] = tessel_alloc_array(s->e->alloc, 2 * g->nonempty + 2, sizeof(uint64_t));
        if (!s->bytes[i])
            return TESSEL_ENOMEM;
        for (uint64_t t = 0; t < g->nonempty; t++) {
            const uint64_t *occ = bd->occ[i] ? &bd->occ[i][t * bd->occ_stride[i]] : NULL;
            exact_tile_bytes(&bd->cost[i], tessel_tile_grid_count(g, t), occ,
                             &s->bytes[i][2 * t], &s->bytes[i][2 * t + 1]);
        }
        uint64_t slots = g->extent[0] * bd->ntiles[1];
        if (i == 0 || g->order != 2 || g->extent[1] != bd->ntiles[1] || slots > MK_DIRECT_SLOTS)
            continue;
        s->direct[i] = tessel_alloc_zeroed(s->e->alloc, slots ? slots : 1, sizeof(uint64_t));
        if (!s->direct[i])
            return TESSEL_ENOMEM;
        uint64_t row = 0;
        for (uint64_t t = 0; t < g->nonempty; t++) {
            row = tessel_tile_grid_group_from(g, t, row);
            s->direct[i][row * bd->ntiles[1] + tessel_tile_grid_key(g, t)] = t + 1;
        }
    }
    return TESSEL_OK;
}

/* Input i's (B's or C's) tile at c, UINT64_MAX when empty. */
static uint64_t factor_tile(const mk_state *s, unsigned i, const uint64_t *c)
{
    if (!s->direct[i])
        return exact_tile_index(s->e, s->bd, i, c);
    uint64_t row = c[s->e->in[i].x[0]];
    if (row >= s->bd->grid[i]->extent[0])
        return UINT64_MAX;
    return s->direct[i][row * s->bd->ntiles[1] + c[1]] - 1;
}

/* Rule 1 (and rule 4's overbooked excess) for input i's tile idx in one
 * effectual iteration, as walk_inputs (exact_walk.c). */
static void use_input(mk_state *s, unsigned i, uint64_t idx, uint64_t nnz)
{
    engine *e = s->e;
    tessel_result *r = e->res;
    tessel_traffic *tr = &r->traffic[s->bd->b][e->in[i].spec_tensor];
    exact_resident *res = &s->res[i];
    uint64_t part = s->part[i];
    if (idx != res->idx) {
        res->idx = idx;
        res->nnz = nnz;
        res->data = s->bytes[i][2 * idx];
        res->meta = s->bytes[i][2 * idx + 1];
        exact_charge_fill(e->spec, s->bd->b, r, tr, part, res->data, res->meta);
        return;
    }
    exact_charge_excess(tr, part, res->data, res->meta);
}

/* The open output run ends: its tile is written back after the reduction
 * step of its last iteration, read back first if written before (rule 2,
 * as the streaming walk's exact_live_writeback). */
static int end_run(mk_state *s)
{
    s->open = 0;
    return exact_live_writeback(s->e, s->bd, &s->lv, exact_tile_key(s->bd, &s->e->out, s->last),
                                exact_reduction_key(s->e, s->bd, s->last));
}

/* One effectual iteration at tile coordinates c with input tiles idx[]:
 * the fills, the compute's reads at the innermost level, and the end of
 * the output run before it when its output tile differs. */
static int iterate(mk_state *s, const uint64_t *c, const uint64_t *idx)
{
    engine *e = s->e;
    unsigned b = s->bd->b;
    if (s->open && (c[0] != s->last[0] || c[1] != s->last[1]) && end_run(s))
        return TESSEL_ENOMEM;
    uint64_t nnz[NIN];
    for (unsigned i = 0; i < NIN; i++)
        nnz[i] = tessel_tile_grid_count(s->bd->grid[i], idx[i]);
    for (unsigned i = 0; i < NIN; i++)
        use_input(s, i, idx[i], nnz[i]);
    e->res->effectual_tiles[b]++;
    for (unsigned i = 0; i < NIN; i++) { /* b is the innermost level (nlev 2) */
        e->res->intersections += nnz[i];
        if (s->scalar[i])
            exact_scalar_note(e, i, c, nnz[i], s->res[i].meta);
        else
            e->res->traffic[b][e->in[i].spec_tensor].child_read_metadata +=
                nnz[i] * s->coord_bits / 8;
    }
    if (e->spec->compute.optimization)
        exact_compute_note(e, c, nnz);
    memcpy(s->last, c, sizeof(s->last));
    s->open = 1;
    return TESSEL_OK;
}

/* T's modes (0 i, 1 j, 2 k) in the loop order, those of one tile first;
 * *prefix: how many of them come before r (the groups' modes). */
static void t_modes(const boundary *bd, unsigned *m3, unsigned *prefix)
{
    static const unsigned engine_x[3] = { 0, 2, 3 };
    int pos[3], pr = looped_position(bd, 1);
    for (unsigned m = 0; m < 3; m++) {
        pos[m] = looped_position(bd, engine_x[m]);
        m3[m] = m;
    }
    for (unsigned a = 1; a < 3; a++) /* stable insertion sort by position */
        for (unsigned q = a; q > 0 && pos[m3[q]] < pos[m3[q - 1]]; q--) {
            unsigned t = m3[q];
            m3[q] = m3[q - 1];
            m3[q - 1] = t;
        }
    *prefix = 0;
    for (unsigned m = 0; m < 3; m++)
        *prefix += pos[m] < pr;
}

/* Mode m's tile coordinate of T's tile at flat coordinate f (row-major). */
static uint64_t t_coord(const tessel_tile_grid *g, uint64_t f, unsigned m)
{
    uint64_t nj = g->extent[1], nk = g->extent[2];
    return m == 0 ? f / (nj * nk) : m == 1 ? f / nk % nj : f % nk;
}

/* One stable counting sort of T's tiles v[] by mode m, through w[]. */
static void t_pass(const tessel_tile_grid *g, const uint64_t *fl, unsigned m, uint64_t *v,
                   uint64_t *w, uint64_t *cnt)
{
    uint64_t n = g->nonempty, ext = g->extent[m];
    memset(cnt, 0, (ext + 1) * sizeof(uint64_t));
    for (uint64_t p = 0; p < n; p++)
        cnt[t_coord(g, fl[v[p]], m) + 1]++;
    for (uint64_t x = 0; x < ext; x++)
        cnt[x + 1] += cnt[x];
    for (uint64_t p = 0; p < n; p++)
        w[cnt[t_coord(g, fl[v[p]], m)]++] = v[p];
    memcpy(v, w, n * sizeof(uint64_t));
}

/* T's tiles in the walk's order (*pv) and each grid tile's flat
 * coordinate (*pfl). The grid is sorted by (i, j, k): for modes (a, b, c)
 * in the loop order, a stable sort by b then by a gives (a, b, c); the
 * sort by b is none when b is i (the grid's own first mode). */
static int t_order(const engine *e, const boundary *bd, const unsigned *m3, uint64_t **pv,
                   uint64_t **pfl)
{
    const tessel_allocator *a = e->alloc;
    const tessel_tile_grid *g = bd->grid[0];
    uint64_t n = g->nonempty, span = g->extent[1] * g->extent[2], most = 0;
    int natural = m3[0] == 0 && m3[1] == 1;
    for (unsigned m = 0; m < 3; m++)
        most = g->extent[m] > most ? g->extent[m] : most;
    uint64_t *v = tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
    uint64_t *fl = tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
    uint64_t *w = natural ? NULL : tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
    uint64_t *cnt = natural ? NULL : tessel_alloc_array(a, most + 1, sizeof(uint64_t));
    if (!v || !fl || (!natural && (!w || !cnt))) {
        tessel_dealloc(a, v);
        tessel_dealloc(a, fl);
        tessel_dealloc(a, w);
        tessel_dealloc(a, cnt);
        return TESSEL_ENOMEM;
    }
    for (uint64_t r = 0; r < g->extent[0]; r++)
        for (uint64_t t = tessel_tile_grid_row_begin(g, r); t < tessel_tile_grid_row_begin(g, r + 1);
             t++) {
            fl[t] = r * span + tessel_tile_grid_key(g, t);
            v[t] = t;
        }
    if (!natural && m3[1] != 0)
        t_pass(g, fl, m3[1], v, w, cnt);
    if (!natural)
        t_pass(g, fl, m3[0], v, w, cnt);
    tessel_dealloc(a, w);
    tessel_dealloc(a, cnt);
    *pv = v;
    *pfl = fl;
    return TESSEL_OK;
}

/* Whether T's tiles at flat coordinates x and y share the first `prefix`
 * modes of m3. */
static int same_group(const tessel_tile_grid *g, uint64_t x, uint64_t y, const unsigned *m3,
                      unsigned prefix)
{
    for (unsigned q = 0; q < prefix; q++)
        if (t_coord(g, x, m3[q]) != t_coord(g, y, m3[q]))
            return 0;
    return 1;
}

/* A group: T's tiles v[p0, p1), which share the modes outside r; per r
 * tile, the group's tiles in order, kept where B(tj, tr) and C(tk, tr)
 * are non-empty. */
static int group(mk_state *s, const uint64_t *v, const uint64_t *fl, uint64_t p0, uint64_t p1)
{
    const tessel_tile_grid *g = s->bd->grid[0];
    uint64_t nr = s->bd->ntiles[1];
    for (uint64_t tr = 0; tr < nr; tr++)
        for (uint64_t p = p0; p < p1; p++) {
            uint64_t f = fl[v[p]], idx[NIN];
            uint64_t c[NX] = { t_coord(g, f, 0), tr, t_coord(g, f, 1), t_coord(g, f, 2) };
            idx[1] = factor_tile(s, 1, c);
            idx[2] = idx[1] == UINT64_MAX ? UINT64_MAX : factor_tile(s, 2, c);
            if (idx[2] == UINT64_MAX)
                continue;
            idx[0] = v[p];
            if (iterate(s, c, idx))
                return TESSEL_ENOMEM;
        }
    return TESSEL_OK;
}

/* Every group in turn, then the last output run's end. */
static int walk_groups(mk_state *s, const uint64_t *v, const uint64_t *fl, const unsigned *m3,
                       unsigned prefix)
{
    const tessel_tile_grid *g = s->bd->grid[0];
    uint64_t n = g->nonempty;
    for (uint64_t p0 = 0, p1; p0 < n; p0 = p1) {
        for (p1 = p0 + 1; p1 < n && same_group(g, fl[v[p0]], fl[v[p1]], m3, prefix); p1++)
            ;
        if (group(s, v, fl, p0, p1))
            return TESSEL_ENOMEM;
    }
    return s->open ? end_run(s) : TESSEL_OK;
}

int stat_mttkrp_sums(engine *e, const boundary *bd)
{
    mk_state s;
    memset(&s, 0, sizeof(s));
    s.e = e;
    s.bd = bd;
    s.lv.empty.alloc = e->alloc;
    s.coord_bits = e->spec->level[bd->b].coord_bits;
    for (unsigned i = 0; i < NIN; i++) {
        s.res[i].idx = UINT64_MAX;
        s.part[i] = exact_partition_bytes(e, bd->b, e->in[i].spec_tensor);
        s.scalar[i] = exact_scalar_on(e, i);
    }
    unsigned m3[3], prefix;
    t_modes(bd, m3, &prefix);
    uint64_t *v = NULL, *fl = NULL;
    const tessel_tile_grid *g = bd->grid[0];
    if (mk_tables(&s) || t_order(e, bd, m3, &v, &fl)) {
        mk_free(&s);
        return exact_oom_step(e, "pricing the MTTKRP tiles", (5 * g->nonempty + 2 * MK_DIRECT_SLOTS) * 8);
    }
    int rc = exact_live_init(e, bd, &s.lv);
    if (!rc)
        rc = walk_groups(&s, v, fl, m3, prefix);
    tessel_dealloc(e->alloc, v);
    tessel_dealloc(e->alloc, fl);
    mk_free(&s);
    return rc;
}

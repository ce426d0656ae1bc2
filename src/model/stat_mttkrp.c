/* Closed sums for MTTKRP Y[i,r] = T[i,j,k] B[j,r] C[k,r] at every buffer
 * level (docs/models/stat.md, "MTTKRP in closed form", "MTTKRP in closed
 * form in every loop order" and "MTTKRP in closed form at nested
 * levels"), in place of the walk of stat_walk.c (engine indices 0 i, 1 r,
 * 2 j, 3 k; a loop of one tile is no loop).
 *
 * With every iteration effectual, the tile iterations of boundary b are
 * the triples of non-empty level-b tiles T(ti, tj, tk), B(tj, tr),
 * C(tk, tr), visited in the loop order, whose digits are the loops of
 * every level down to b (an index tiled at two levels has two digits).
 * They are enumerated straight from T's grid: T's tiles sorted by its
 * digits in loop order; then digit by digit, an r digit takes each of its
 * values in turn over the range of T's tiles, a T digit cuts the range
 * where its value changes, and past r's last digit the range's tiles are
 * visited in order, kept where B(tj, tr) and C(tk, tr) are non-empty
 * (at one level: groups of T's tiles sharing the modes outside r, each
 * walked once per r tile). That is the walk's order, with no loop keys
 * generated, sorted or decoded; every tile is priced once, and B's and
 * C's tiles are found by a direct index. Inputs follow rule 1 as in the
 * walk: a fill where the tile differs from the resident one (counted per
 * tile, each tile's fills priced once at the end), a reuse otherwise
 * (rule 4: an overbooked tile's excess streams again on each reuse, and
 * at nested levels the fills and uses are recorded for the child level's
 * reads, exact_ob_note / exact_ob_child, which stat_walk.c
 * settles as exact.c does). An output run (consecutive iterations on one
 * output tile) ends in a write-back at the reduction step of its last
 * iteration, with a read-back of the previous run's contents when the
 * tile was written before (rule 2, priced as the streaming walk prices
 * it, exact_live_writeback, but summed per segment of the tile's table:
 * the visit counts the runs ending in each segment, mk_runs, and each
 * segment's bytes are priced once). When i and r are outside j and k,
 * each output tile is one run, and the output table needs only final counts
 * (stat_mttkrp_final_only). The compute's reads (intersections, child
 * metadata reads) are counted at the innermost level only. Every count is
 * the walk's integer sum over the same iterations, so the results equal
 * the walk's, and -e exact's with the whole output in the sample. */
#include <string.h>

#include "stat_mttkrp.h"

/* Direct indexes of B's and C's tiles up to this many (tile row, r tile)
 * slots each; past it, the grid's own search (exact_tile_index). */
#define MK_DIRECT_SLOTS (UINT64_C(1) << 24)

int stat_mttkrp_applies(const engine *e, const boundary *bd)
{
    if (e->kind != TESSEL_WORKLOAD_MTTKRP || e->nin != 3 || e->inspill || e->outer_any[bd->b] ||
        bd->by_rows || bd->spill_known)
        return 0;
    return exact_all_effectual(e, bd); /* gated or non-skipping inputs walk */
}

int stat_mttkrp_final_only(const engine *e, const boundary *bd)
{
    (void)e;
    int seen_red = 0; /* a digit of j or k of more than one value */
    for (unsigned d = 0; d < bd->ndigits; d++) {
        if (bd->d[d].radix <= 1)
            continue;
        if (bd->d[d].x >= 2)
            seen_red = 1;
        else if (seen_red)
            return 0;
    }
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

/* The output runs' write-backs, priced once the visit is over. A run of
 * output tile o ending at reduction key e writes back o's contents after
 * e: its bytes depend only on which segment of o's table e falls in (the
 * entries with red <= e, as exact_output_count). So the visit only counts
 * the run ends per segment (cnt[a + row], a the first entry past e: a
 * tile's nent + 1 segments); the bytes are priced once per segment that
 * ended a run (mk_price_runs). Tiles with no table row (no sampled
 * nonzero) are priced per run, as exact_live_writeback prices them. */
typedef struct mk_runs {
    uint64_t *cnt;   /* runs ending per segment, nent + nout */
    uint64_t *cur;   /* each row's first entry past its last run end */
    uint64_t *row;   /* output tile key -> 1 + its table row, 0 none, or NULL */
    model_map empty; /* tiles with no row written back before */
    uint64_t part;   /* Y's partition at the boundary's level */
} mk_runs;

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
    uint64_t *nfill[NIN]; /* fills per grid tile, priced at the end (mk_price_fills) */
    int child[NIN];       /* the parent level recorded overbooked tiles (exact_ob_child) */
    uint64_t *direct[NIN]; /* B, C: grid tile + 1 at row * r tiles + tr, 0 none */
    uint64_t *red[2];      /* the reduction key's j and k terms per tile, or NULL */
    mk_runs runs;          /* the output runs' ends, per table segment */
    int open;              /* an output run is open, its last iteration at last */
    uint64_t last[NX];
    int innermost;         /* b is the innermost level: the compute reads it */
    digit dg[NX * NLEV];   /* the loop digits of more than one value */
    unsigned nd, leaf;     /* their number; how many up to r's last */
} mk_state;

static void mk_free(mk_state *s)
{
    for (unsigned i = 0; i < NIN; i++) {
        tessel_dealloc(s->e->alloc, s->bytes[i]);
        tessel_dealloc(s->e->alloc, s->nfill[i]);
        tessel_dealloc(s->e->alloc, s->direct[i]);
    }
    tessel_dealloc(s->e->alloc, s->red[0]);
    tessel_dealloc(s->e->alloc, s->red[1]);
    tessel_dealloc(s->e->alloc, s->runs.cnt);
    tessel_dealloc(s->e->alloc, s->runs.cur);
    tessel_dealloc(s->e->alloc, s->runs.row);
    model_map_free(&s->runs.empty);
}

/* The level-b reduction key of an output run's last iteration as
 * red[0][tj] + red[1][tk], each term once per tile (the key is a sum of
 * one term per index, as stat_mttkrp_red_terms uses), in place of an
 * exact_reduction_key per run; both NULL past MK_DIRECT_SLOTS tiles. */
static int mk_red_tiles(mk_state *s)
{
    const boundary *bd = s->bd;
    if (bd->ntiles[2] > MK_DIRECT_SLOTS || bd->ntiles[3] > MK_DIRECT_SLOTS)
        return TESSEL_OK;
    for (unsigned q = 0; q < 2; q++) {
        uint64_t n = bd->ntiles[2 + q], c[NX] = { 0 };
        s->red[q] = tessel_alloc_array(s->e->alloc, n ? n : 1, sizeof(uint64_t));
        if (!s->red[q])
            return TESSEL_ENOMEM;
        for (c[2 + q] = 0; c[2 + q] < n; c[2 + q]++)
            s->red[q][c[2 + q]] = exact_reduction_key(s->e, bd, c);
    }
    return TESSEL_OK;
}

/* Every tile of every input priced once (exact_tile_bytes, as the walk
 * prices each fill), and B's and C's direct indexes where they fit. */
static int mk_tables(mk_state *s)
{
    const boundary *bd = s->bd;
    for (unsigned i = 0; i < NIN; i++) {
        const tessel_tile_grid *g = bd->grid[i];
        s->bytes[i] = tessel_alloc_array(s->e->alloc, 2 * g->nonempty + 2, sizeof(uint64_t));
        s->nfill[i] = s->bytes[i] ? tessel_alloc_zeroed(s->e->alloc, g->nonempty + 1,
                                                         sizeof(uint64_t))
                                  : NULL;
        if (!s->nfill[i])
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
    return mk_red_tiles(s);
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
 * effectual iteration at c, as walk_inputs (exact_walk.c), with its
 * records for rule 4 at nested levels (exact_bumped.c): a fill adds to the
 * parent level's overbooked tile, an overbooked tile's fills and uses are
 * noted for the child level's reads. A fill is counted per tile and
 * priced once the visit is over (mk_price_fills); the records are skipped
 * where they would do nothing: no overbooked tile at the parent level
 * (exact_ob_child), a tile within its partition (exact_ob_note). */
static int use_input(mk_state *s, unsigned i, uint64_t idx, uint64_t nnz, const uint64_t *c)
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
        s->nfill[i][idx]++;
        int rc = s->child[i] ? exact_ob_child(e, s->bd, i, c, nnz) : TESSEL_OK;
        /* innermost: no child level to record for (e->inspill is off) */
        if (rc || s->innermost || !part || res->data + res->meta <= part)
            return rc;
        return exact_ob_note(e, s->bd, i, c, nnz, res->data, res->meta, part, 1);
    }
    if (!exact_charge_excess(tr, part, res->data, res->meta) || s->innermost)
        return TESSEL_OK;
    return exact_ob_note(e, s->bd, i, c, res->nnz, res->data, res->meta, part, 0);
}

/* The output runs' counters (mk_runs): one per table segment, each row's
 * cursor, and a direct index from tile key to row where it fits. */
static int mk_runs_init(mk_state *s)
{
    const tessel_allocator *a = s->e->alloc;
    const out_table *t = &s->bd->table[0];
    mk_runs *u = &s->runs;
    u->empty.alloc = a;
    u->part = exact_partition_bytes(s->e, s->bd->b, s->e->out.spec_tensor);
    uint64_t keys = s->bd->ntiles[0] * s->bd->ntiles[1];
    u->cnt = tessel_alloc_zeroed(a, t->nent + t->nout + 1, sizeof(uint64_t));
    u->cur = tessel_alloc_array(a, t->nout + 1, sizeof(uint64_t));
    if (keys <= MK_DIRECT_SLOTS && u->cnt && u->cur)
        u->row = tessel_alloc_zeroed(a, keys ? keys : 1, sizeof(uint64_t));
    if (!u->cnt || !u->cur || (keys <= MK_DIRECT_SLOTS && !u->row))
        return exact_oom_step(s->e, "keeping the output tiles' state",
                              (t->nent + 2 * t->nout + keys + 2) * sizeof(uint64_t));
    for (uint64_t o = 0; o < t->nout; o++) {
        u->cur[o] = t->start[o];
        if (u->row && t->key[o] < keys)
            u->row[t->key[o]] = o + 1;
    }
    return TESSEL_OK;
}

/* Row of output tile `key` in the table, UINT64_MAX when it has none. */
static uint64_t runs_row(const mk_runs *u, const out_table *t, uint64_t key)
{
    if (u->row)
        return u->row[key] ? u->row[key] - 1 : UINT64_MAX;
    return exact_table_row(t, key);
}

/* One write-back (and read-back when `again`) of `n` runs, each of
 * data + meta bytes, as exact_live_writeback charges one. */
static void charge_runs(tessel_traffic *tr, uint64_t part, uint64_t n, uint64_t again,
                        uint64_t data, uint64_t meta)
{
    tr->updates += again;
    tr->writebacks += n;
    tr->out_data += n * data;
    tr->out_metadata += n * meta;
    exact_note_tile(tr, part, data + meta);
    if (part && data + meta > part)
        tr->overflow_tiles += n;
}

/* The open output run ends: its tile is written back after the reduction
 * step of its last iteration, read back first if written before (rule 2,
 * as the streaming walk's exact_live_writeback). A tile with a table row
 * counts the run in its segment (priced by mk_price_runs); a tile with
 * none is priced now: its bytes never change. */
static int end_run(mk_state *s)
{
    s->open = 0;
    uint64_t red = s->red[0] ? s->red[0][s->last[2]] + s->red[1][s->last[3]]
                             : exact_reduction_key(s->e, s->bd, s->last);
    const out_table *t = &s->bd->table[0];
    uint64_t key = exact_tile_key(s->bd, &s->e->out, s->last);
    uint64_t row = runs_row(&s->runs, t, key);
    if (row != UINT64_MAX) {
        uint64_t a = s->runs.cur[row], end = t->start[row + 1];
        while (a < end && t->red[a] <= red)
            a++;
        s->runs.cur[row] = a;
        s->runs.cnt[a + row]++;
        return TESSEL_OK;
    }
    uint64_t *slot = model_map_slot(&s->runs.empty, key, 0), data, meta, none = 0;
    if (!slot)
        return exact_oom_step(s->e, "keeping the output tiles' state",
                              model_map_grow_bytes(&s->runs.empty));
    exact_tile_bytes(&s->bd->out_cost, 0, &none, &data, &meta);
    tessel_traffic *tr = &s->e->res->traffic[s->bd->b][0];
    if (*slot) {
        tr->in_data += data;
        tr->in_metadata += meta;
    }
    charge_runs(tr, s->runs.part, 1, *slot != 0, data, meta);
    *slot = 1;
    return TESSEL_OK;
}

/* The counted runs' write-backs and read-backs (mk_runs): per segment that
 * ended n runs, n write-backs of the tile's bytes there; per tile, every
 * run but its first reads back the previous run's write-back, which is
 * every write-back but the last (the segment of its last run end). The
 * sums are the walk's, in another order. */
static void mk_price_runs(mk_state *s)
{
    const out_table *t = &s->bd->table[0];
    tessel_traffic *tr = &s->e->res->traffic[s->bd->b][0];
    for (uint64_t o = 0; o < t->nout; o++) {
        uint64_t first = t->start[o], runs = 0, sdata = 0, smeta = 0, data = 0, meta = 0;
        for (uint64_t a = first; a <= s->runs.cur[o]; a++) {
            uint64_t n = s->runs.cnt[a + o], occ = a == first ? 0 : t->cum[a - 1];
            if (!n)
                continue;
            exact_tile_bytes(&s->bd->out_cost, occ, &occ, &data, &meta);
            charge_runs(tr, s->runs.part, n, 0, data, meta);
            runs += n;
            sdata += n * data;
            smeta += n * meta;
        }
        if (!runs)
            continue;
        tr->updates += runs - 1; /* data, meta: the last run's segment */
        tr->in_data += sdata - data;
        tr->in_metadata += smeta - meta;
    }
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
        if (use_input(s, i, idx[i], nnz[i], c))
            return TESSEL_ENOMEM;
    e->res->effectual_tiles[b]++;
    for (unsigned i = 0; s->innermost && i < NIN; i++) {
        e->res->intersections += nnz[i];
        if (s->scalar[i])
            exact_scalar_note(e, i, c, nnz[i], s->res[i].meta);
        else
            e->res->traffic[b][e->in[i].spec_tensor].child_read_metadata +=
                nnz[i] * s->coord_bits / 8;
    }
    if (s->innermost && e->spec->compute.optimization)
        exact_compute_note(e, c, nnz);
    memcpy(s->last, c, sizeof(s->last));
    s->open = 1;
    return TESSEL_OK;
}

/* The boundary's loop digits of more than one value, in loop order (at
 * nested levels an index has one digit per level that tiles it); *leaf:
 * how many of them come up to r's last (0: r takes one value). */
static unsigned loop_digits(const boundary *bd, digit *dg, unsigned *leaf)
{
    unsigned n = 0;
    *leaf = 0;
    for (unsigned d = 0; d < bd->ndigits; d++) {
        if (bd->d[d].radix <= 1)
            continue;
        dg[n++] = bd->d[d];
        if (bd->d[d].x == 1)
            *leaf = n;
    }
    return n;
}

/* Mode m's tile coordinate of T's tile at flat coordinate f (row-major). */
static uint64_t t_coord(const tessel_tile_grid *g, uint64_t f, unsigned m)
{
    uint64_t nj = g->extent[1], nk = g->extent[2];
    return m == 0 ? f / (nj * nk) : m == 1 ? f / nk % nj : f % nk;
}

/* The value of T's digit d (engine index 0 i, 2 j, 3 k) at T's tile at
 * flat coordinate f, as exact_loop_key reads it. */
static uint64_t t_digit(const tessel_tile_grid *g, uint64_t f, const digit *d)
{
    uint64_t v = t_coord(g, f, d->x ? d->x - 1 : 0) / d->div;
    return d->first ? v : v % d->radix;
}

/* One stable counting sort of T's tiles v[] by digit d, through w[]. */
static void t_pass(const tessel_tile_grid *g, const uint64_t *fl, const digit *d, uint64_t *v,
                   uint64_t *w, uint64_t *cnt)
{
    uint64_t n = g->nonempty;
    memset(cnt, 0, (d->radix + 1) * sizeof(uint64_t));
    for (uint64_t p = 0; p < n; p++)
        cnt[t_digit(g, fl[v[p]], d) + 1]++;
    for (uint64_t x = 0; x < d->radix; x++)
        cnt[x + 1] += cnt[x];
    for (uint64_t p = 0; p < n; p++)
        w[cnt[t_digit(g, fl[v[p]], d)]++] = v[p];
    memcpy(v, w, n * sizeof(uint64_t));
}

/* How many of T's digits (those of dg[] other than r's, into td[]) need
 * a sorting pass: none when their modes never decrease (the grid's own
 * (i, j, k) order); else all but the last, whose ties the grid's order
 * already breaks (tiles equal on every other digit differ in one mode). */
static unsigned t_passes(const digit *dg, unsigned nd, digit *td)
{
    unsigned n = 0, natural = 1;
    for (unsigned q = 0; q < nd; q++) {
        if (dg[q].x == 1)
            continue;
        natural &= n == 0 || td[n - 1].x <= dg[q].x;
        td[n++] = dg[q];
    }
    return natural || n == 0 ? 0 : n - 1;
}

/* T's tiles in the walk's order (*pv: sorted by T's digits in loop order,
 * by stable passes from the innermost) and each grid tile's flat
 * coordinate (*pfl). */
static int t_order(const engine *e, const boundary *bd, const digit *dg, unsigned nd,
                   uint64_t **pv, uint64_t **pfl)
{
    const tessel_allocator *a = e->alloc;
    const tessel_tile_grid *g = bd->grid[0];
    digit td[NX * NLEV];
    unsigned passes = t_passes(dg, nd, td);
    uint64_t n = g->nonempty, span = g->extent[1] * g->extent[2], most = 0;
    for (unsigned q = 0; q < passes; q++)
        most = td[q].radix > most ? td[q].radix : most;
    uint64_t *v = tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
    uint64_t *fl = tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
    uint64_t *w = passes ? tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t)) : NULL;
    uint64_t *cnt = passes ? tessel_alloc_array(a, most + 1, sizeof(uint64_t)) : NULL;
    if (!v || !fl || (passes && (!w || !cnt))) {
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
    for (unsigned q = passes; q-- > 0;)
        t_pass(g, fl, &td[q], v, w, cnt);
    tessel_dealloc(a, w);
    tessel_dealloc(a, cnt);
    *pv = v;
    *pfl = fl;
    return TESSEL_OK;
}

/* T's tiles v[p0, p1) in order at r tile tr, kept where B(tj, tr) and
 * C(tk, tr) are non-empty. */
static int walk_range(mk_state *s, const uint64_t *v, const uint64_t *fl, uint64_t p0,
                      uint64_t p1, uint64_t tr)
{
    const tessel_tile_grid *g = s->bd->grid[0];
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

/* Digits q.. of the loop over T's tiles v[p0, p1), which share every T
 * digit before q, with r's digits before q summing to tile tr: an r digit
 * takes each of its values in turn, a T digit cuts the range where its
 * value changes; past r's last digit the range is walked in order. */
static int enumerate(mk_state *s, const uint64_t *v, const uint64_t *fl, unsigned q,
                     uint64_t p0, uint64_t p1, uint64_t tr)
{
    if (q >= s->leaf)
        return walk_range(s, v, fl, p0, p1, tr);
    const digit *d = &s->dg[q];
    if (d->x == 1) {
        for (uint64_t val = 0; val < d->radix && tr + val * d->div < s->bd->ntiles[1]; val++)
            if (enumerate(s, v, fl, q + 1, p0, p1, tr + val * d->div))
                return TESSEL_ENOMEM;
        return TESSEL_OK;
    }
    const tessel_tile_grid *g = s->bd->grid[0];
    for (uint64_t a = p0, z; a < p1; a = z) {
        uint64_t dv = t_digit(g, fl[v[a]], d);
        for (z = a + 1; z < p1 && t_digit(g, fl[v[z]], d) == dv; z++)
            ;
        if (enumerate(s, v, fl, q + 1, a, z, tr))
            return TESSEL_ENOMEM;
    }
    return TESSEL_OK;
}

/* The counted fills (use_input): n fills of an input's grid tile charge
 * what n calls of exact_charge_fill charge, its fill, bytes, worst tile,
 * network cycles and overflow, per tile once. */
static void mk_price_fills(mk_state *s)
{
    engine *e = s->e;
    unsigned b = s->bd->b;
    for (unsigned i = 0; i < NIN; i++) {
        tessel_traffic *tr = &e->res->traffic[b][e->in[i].spec_tensor];
        uint64_t part = s->part[i];
        for (uint64_t t = 0; t < s->bd->grid[i]->nonempty; t++) {
            uint64_t n = s->nfill[i][t], data = s->bytes[i][2 * t], meta = s->bytes[i][2 * t + 1];
            if (!n)
                continue;
            tessel_traffic one;
            memset(&one, 0, sizeof(one));
            exact_note_network(e->spec, b, &one, data);
            tr->fills += n;
            tr->in_data += n * data;
            tr->in_metadata += n * meta;
            tr->fill_network_cycles += n * one.fill_network_cycles;
            exact_note_tile(tr, part, data + meta);
            if (part && data + meta > part) {
                e->res->overflow_tiles += n;
                tr->overflow_tiles += n;
            }
        }
    }
}

int stat_mttkrp_sums(engine *e, const boundary *bd)
{
    mk_state s;
    memset(&s, 0, sizeof(s));
    s.e = e;
    s.bd = bd;
    s.coord_bits = e->spec->level[bd->b].coord_bits;
    for (unsigned i = 0; i < NIN; i++) {
        s.res[i].idx = UINT64_MAX;
        s.part[i] = exact_partition_bytes(e, bd->b, e->in[i].spec_tensor);
        s.scalar[i] = exact_scalar_on(e, i);
        s.child[i] = bd->b >= 2 && e->ob[(bd->b - 1) % 2][i].n > 0;
    }
    s.innermost = bd->b + 1 == e->nlev;
    s.nd = loop_digits(bd, s.dg, &s.leaf);
    uint64_t *v = NULL, *fl = NULL;
    const tessel_tile_grid *g = bd->grid[0];
    if (mk_tables(&s) || t_order(e, bd, s.dg, s.nd, &v, &fl)) {
        mk_free(&s);
        return exact_oom_step(e, "pricing the MTTKRP tiles", (5 * g->nonempty + 2 * MK_DIRECT_SLOTS) * 8);
    }
    int rc = mk_runs_init(&s);
    if (!rc)
        rc = enumerate(&s, v, fl, 0, 0, g->nonempty, 0);
    if (!rc && s.open)
        rc = end_run(&s); /* the last output run */
    if (!rc) {
        mk_price_runs(&s);
        mk_price_fills(&s);
    }
    tessel_dealloc(e->alloc, v);
    tessel_dealloc(e->alloc, fl);
    mk_free(&s);
    return rc;
}

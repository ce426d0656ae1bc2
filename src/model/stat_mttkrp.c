/* Closed sums for MTTKRP Y[i,r] = T[i,j,k] B[j,r] C[k,r] at one buffer
 * level (docs/models/stat.md, "MTTKRP in closed form"), in place of the
 * walk of stat_walk.c for the loop orders whose output loops i and r are
 * outside the reduction loops j and k (engine indices 0 i, 1 r, 2 j,
 * 3 k; a loop of one tile is no loop).
 *
 * In those orders the effectual tile iterations come in blocks, one per
 * output tile (ti, tr): the non-empty tiles of T's tile row ti, in the
 * inner order (j then k, or k then j), kept where B(tj, tr) and C(tk, tr)
 * are non-empty. So the iterations are enumerated block by block from T's
 * grid, already in the walk's order: no loop keys are generated, sorted or
 * decoded, every tile is priced once, B's and C's tiles are found by a
 * direct index, and each output tile is one run (rule 2): one write-back
 * of its final contents, no update. Inputs follow rule 1 as in the walk: a fill
 * where the tile differs from the resident one, a reuse otherwise (rule 4:
 * an overbooked tile's excess streams again on each reuse). Every count is
 * the walk's integer sum over the same iterations, so the results equal
 * the walk's, and -e exact's with the whole output in the sample. */
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
    if (!exact_all_effectual(e, bd))
        return 0; /* gated or non-skipping inputs walk iterations with an empty partner */
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

/* The state carried from iteration to iteration, as the walk's, and the
 * per-point tables: each input tile's bytes, B's and C's direct indexes. */
typedef struct mk_state {
    engine *e;
    const boundary *bd;
    exact_resident res[NIN];
    uint64_t part[NIN], part_z;
    unsigned coord_bits;
    int scalar[NIN];
    uint64_t *bytes[NIN]; /* data, meta per grid tile */
    uint64_t *direct[NIN]; /* B, C: grid tile + 1 at row * r tiles + tr, 0 none */
} mk_state;

static void mk_free(mk_state *s)
{
    for (unsigned i = 0; i < NIN; i++) {
        tessel_dealloc(s->e->alloc, s->bytes[i]);
        tessel_dealloc(s->e->alloc, s->direct[i]);
    }
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

/* One effectual iteration at tile coordinates c with input tiles idx[]:
 * the fills, then the compute's reads at the innermost level. */
static void iterate(mk_state *s, const uint64_t *c, const uint64_t *idx)
{
    engine *e = s->e;
    unsigned b = s->bd->b;
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
}

/* The one run of output tile (c[0], c[1]) ends at reduction coordinates
 * c: its write-back (rule 2) of the final tile, as price_output. */
static void write_back(mk_state *s, const uint64_t *c)
{
    const boundary *bd = s->bd;
    tessel_traffic *tz = &s->e->res->traffic[bd->b][0];
    uint64_t cursors[3] = { 0, 0, 0 }, data, meta;
    exact_output_bytes(bd, exact_tile_key(bd, &s->e->out, c), UINT64_MAX, cursors, &data,
                       &meta);
    tz->writebacks++;
    tz->out_data += data;
    tz->out_metadata += meta;
    exact_note_tile(tz, s->part_z, data + meta);
    if (s->part_z && data + meta > s->part_z)
        tz->overflow_tiles++;
}

/* T's tiles in the walk's order: the grid's (ti, tj, tk) as it is, or
 * with kj by (ti, tk, tj): two stable counting sorts, by tk then by ti. */
static int t_order(const engine *e, const boundary *bd, int kj, uint64_t **out)
{
    const tessel_allocator *a = e->alloc;
    const tessel_tile_grid *g = bd->grid[0];
    uint64_t n = g->nonempty, nk = g->extent[2], rows = g->extent[0];
    uint64_t *v = tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
    uint64_t *w = kj ? tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t)) : NULL;
    uint64_t *cnt = kj ? tessel_alloc_zeroed(a, (nk > rows ? nk : rows) + 1, sizeof(uint64_t)) : NULL;
    if (!v || (kj && (!w || !cnt))) {
        tessel_dealloc(a, v);
        tessel_dealloc(a, w);
        tessel_dealloc(a, cnt);
        return TESSEL_ENOMEM;
    }
    for (uint64_t t = 0; t < n; t++)
        v[t] = t;
    if (kj) {
        for (uint64_t t = 0; t < n; t++)
            cnt[tessel_tile_grid_key(g, t) % nk + 1]++;
        for (uint64_t k = 0; k < nk; k++)
            cnt[k + 1] += cnt[k];
        for (uint64_t t = 0; t < n; t++)
            w[cnt[tessel_tile_grid_key(g, t) % nk]++] = t;
        /* by ti, stably: row r's tiles keep the grid's row span */
        for (uint64_t r = 0; r < rows; r++)
            cnt[r] = tessel_tile_grid_row_begin(g, r);
        for (uint64_t p = 0; p < n; p++)
            v[cnt[tessel_tile_grid_group(g, w[p])]++] = w[p];
    }
    tessel_dealloc(a, w);
    tessel_dealloc(a, cnt);
    *out = v;
    return TESSEL_OK;
}

/* Block (ti, tr): T's tiles v[p0, p1) of row ti, in the walk's order,
 * kept where B and C have tiles at (tj, tr) and (tk, tr), then the
 * output tile's write-back. */
static void block(mk_state *s, const uint64_t *v, uint64_t p0, uint64_t p1, uint64_t ti,
                  uint64_t tr)
{
    const tessel_tile_grid *g = s->bd->grid[0];
    uint64_t nk = g->extent[2], last[NX];
    int any = 0;
    for (uint64_t p = p0; p < p1; p++) {
        uint64_t key = tessel_tile_grid_key(g, v[p]), idx[NIN];
        uint64_t c[NX] = { ti, tr, key / nk, key % nk };
        idx[1] = factor_tile(s, 1, c);
        idx[2] = idx[1] == UINT64_MAX ? UINT64_MAX : factor_tile(s, 2, c);
        if (idx[2] == UINT64_MAX)
            continue;
        idx[0] = v[p];
        iterate(s, c, idx);
        memcpy(last, c, sizeof(last));
        any = 1;
    }
    if (any)
        write_back(s, last);
}

int stat_mttkrp_sums(engine *e, const boundary *bd)
{
    int pj = looped_position(bd, 2), pk = looped_position(bd, 3);
    int pi = looped_position(bd, 0), pr = looped_position(bd, 1);
    int kj = pk >= 0 && pj >= 0 && pk < pj, r_outer = pr >= 0 && pi >= 0 && pr < pi;
    mk_state s;
    memset(&s, 0, sizeof(s));
    s.e = e;
    s.bd = bd;
    s.coord_bits = e->spec->level[bd->b].coord_bits;
    for (unsigned i = 0; i < NIN; i++) {
        s.res[i].idx = UINT64_MAX;
        s.part[i] = exact_partition_bytes(e, bd->b, e->in[i].spec_tensor);
        s.scalar[i] = exact_scalar_on(e, i);
    }
    s.part_z = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    uint64_t *v = NULL;
    const tessel_tile_grid *g = bd->grid[0];
    if (mk_tables(&s) || t_order(e, bd, kj, &v)) {
        mk_free(&s);
        return exact_oom_step(e, "pricing the MTTKRP tiles", (4 * g->nonempty + 2 * MK_DIRECT_SLOTS) * 8);
    }
    uint64_t nr = bd->ntiles[1], nrows = g->extent[0];
    for (uint64_t outer = 0; outer < (r_outer ? nr : nrows); outer++)
        for (uint64_t in = 0; in < (r_outer ? nrows : nr); in++) {
            uint64_t ti = r_outer ? in : outer, tr = r_outer ? outer : in;
            block(&s, v, tessel_tile_grid_row_begin(g, ti), tessel_tile_grid_row_begin(g, ti + 1),
                  ti, tr);
        }
    tessel_dealloc(e->alloc, v);
    mk_free(&s);
    return TESSEL_OK;
}

/* The exact estimator: rule 4 for an output tile inside its visits
 * (docs/semantics.md rule 4, "Outputs"): the update steps of a run. */
#include <string.h>

#include "exact_internal.h"

/* Presence bitsets above this many words fall back to the per-visit rule
 * (price_spills in exact_walk.c): 2^25 words is 256 MiB. */
#define MAX_STEP_WORDS (UINT64_C(1) << 25)

/* Width of one update step along the reduction index at boundary b: the
 * child's reduction tile (level b+1's edge), or one coordinate when the
 * child is the compute, which accumulates the tile one k at a time (it
 * reads each operand tile once per visit, rule 4's `intersections`). */
static uint64_t step_width(const engine *e, const boundary *bd, unsigned kx)
{
    if (bd->b + 1 >= e->nlev)
        return 1;
    uint64_t t = e->spec_index[kx] < 0 ? 0 : e->spec->level[bd->b + 1].tile[e->spec_index[kx]];
    return t && t < bd->tile[kx] ? t : bd->tile[kx];
}

/* The order inside a tile (docs/semantics.md rule 4): the child walks
 * its part of a level-b tile in its own loop order, level b+1's, or at
 * the innermost level the level's own (the compute walks a tile's
 * coordinates in its level's order). An output index the order puts
 * outside the reduction index is finished block by block (one child edge,
 * one coordinate for the compute) before the next block starts, so only
 * that block is live; one inside the reduction index keeps the whole
 * tile's edge live. */
uint64_t exact_live_edge(const engine *e, unsigned b, unsigned x, uint64_t tile)
{
    if (e->nred != 1 || e->spec_index[x] < 0 || e->spec_index[e->red[0]] < 0)
        return tile;
    unsigned o = b + 1 < e->nlev ? b + 1 : b;
    if (exact_order_pos(e, o, x) > exact_order_pos(e, o, e->red[0]))
        return tile;
    uint64_t c = b + 1 < e->nlev ? exact_level_edge(e, b + 1, x) : 1;
    return c < tile ? c : tile;
}

void exact_outspill_free(engine *e, exact_outspill *os)
{
    for (unsigned d = 0; d < os->fine.ntables; d++)
        exact_table_free(e->alloc, &os->fine.table[d]);
    if (os->grow != os->arow)
        tessel_dealloc(e->alloc, os->grow);
    if (os->gcol != os->bcol)
        tessel_dealloc(e->alloc, os->gcol);
    tessel_dealloc(e->alloc, os->arow);
    tessel_dealloc(e->alloc, os->bcol);
    memset(os, 0, sizeof(*os));
}

/* Bit s of row block r of A (rows r*ti ..) and of column block c of B
 * when it holds a nonzero in step s: a step of output block (r, c) has
 * products exactly when both bits are set. NULL rows/cols: out of memory. */
static int presence(engine *e, const exact_outspill *os, uint64_t ti, uint64_t tj,
                    uint64_t **rows, uint64_t **cols)
{
    const tessel_tensor *a = e->in[0].t, *b = e->in[1].t;
    uint64_t ni = (e->extent[e->out.x[0]] + ti - 1) / ti;
    uint64_t nj = (e->extent[e->out.x[1]] + tj - 1) / tj;
    ni = ni ? ni : 1;
    nj = nj ? nj : 1;
    *rows = tessel_alloc_array(e->alloc, ni * os->words, sizeof(uint64_t));
    *cols = tessel_alloc_array(e->alloc, nj * os->words, sizeof(uint64_t));
    if (!*rows || !*cols)
        return exact_oom(e);
    uint64_t *x = *rows, *y = *cols;
    memset(x, 0, ni * os->words * sizeof(uint64_t));
    memset(y, 0, nj * os->words * sizeof(uint64_t));
    for (uint64_t i = 0; i < a->dims[0]; i++)
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            uint64_t s = a->idx[1][p] / os->g;
            x[i / ti * os->words + s / 64] |= UINT64_C(1) << (s % 64);
        }
    for (uint64_t k = 0; k < b->dims[0]; k++)
        for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
            uint64_t s = k / os->g, j = b->idx[1][q];
            y[j / tj * os->words + s / 64] |= UINT64_C(1) << (s % 64);
        }
    return TESSEL_OK;
}

/* Bytes of live group `key` (its nonzeros up to step `red`) in Z's
 * format on the group. */
static uint64_t group_bytes(const exact_outspill *os, uint64_t key, uint64_t red,
                            uint64_t *cursors, uint64_t *data, uint64_t *meta)
{
    uint64_t occ[3];
    exact_output_occupancy(&os->fine, key, red, cursors, occ);
    exact_tile_bytes(&os->gcost, occ[os->fine.ntables - 1], occ, data, meta);
    return *data + *meta;
}

/* The live groups' presence bitsets, when some group's final bytes
 * outgrow the partition (else no step inside a visit spills) and they fit
 * the bound; they share the tiles' when the group is the whole tile. */
static int group_presence(engine *e, const boundary *bd, exact_outspill *os)
{
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor), d, m;
    const out_table *el = &os->fine.table[os->fine.ntables - 1];
    int any = 0;
    for (uint64_t o = 0; o < el->nout && !any; o++)
        any = group_bytes(os, el->key[o], UINT64_MAX, NULL, &d, &m) > part;
    if (!any)
        return TESSEL_OK;
    uint64_t gi = os->fine.tile[e->out.x[0]], gj = os->fine.tile[e->out.x[1]];
    if (gi == bd->tile[e->out.x[0]] && gj == bd->tile[e->out.x[1]]) {
        os->grow = os->arow;
        os->gcol = os->bcol;
        return TESSEL_OK;
    }
    if (os->fine.ntiles[e->out.x[0]] + os->fine.ntiles[e->out.x[1]] > MAX_STEP_WORDS / os->words)
        return TESSEL_OK; /* steps inside visits stay unpriced: a lower bound */
    return presence(e, os, gi, gj, &os->grow, &os->gcol);
}

/* Whether a live group of gx[0] x gx[1] cells, every cell set, would
 * outgrow the partition: when not (one element, or a short row), no step
 * inside a visit spills and the group table is not built. */
static int group_can_spill(const engine *e, const boundary *bd, const exact_outspill *os,
                           const uint64_t *gx)
{
    uint64_t cells = gx[0] * gx[1], occ[3] = { gx[0], cells, cells }, data, meta;
    exact_tile_bytes(&os->gcost, cells, occ, &data, &meta);
    return data + meta > exact_partition_bytes(e, bd->b, e->out.spec_tensor);
}

/* Sets os up for boundary bd when the output may spill (SpMSpM and SpMV:
 * one reduction index); otherwise os->on is 0 and the walk keeps the
 * per-visit rule. The fine boundary's output tiles are bd's live groups
 * (exact_live_edge) with one reduction digit of the step width, so
 * exact_build_output gives a group's nonzeros (and fibres) after every
 * step. */
int exact_outspill_prepare(engine *e, const boundary *bd, exact_outspill *os)
{
    memset(os, 0, sizeof(*os));
    if ((e->kind != TESSEL_WORKLOAD_SPMSPM && e->kind != TESSEL_WORKLOAD_SPMV) || e->nred != 1)
        return TESSEL_OK;
    /* the stat walk (stat_walk.c) runs this walk on statistics: no data to
     * count steps in, no row markers */
    if (!e->mark || !e->in[0].t || !e->in[1].t)
        return TESSEL_OK;
    unsigned kx = e->red[0], xi = e->out.x[0], xj = e->out.x[1];
    os->g = step_width(e, bd, kx);
    os->nsteps = (e->extent[kx] + os->g - 1) / os->g;
    os->words = (os->nsteps + 63) / 64;
    if ((bd->ntiles[xi] + bd->ntiles[xj]) > MAX_STEP_WORDS / os->words)
        return TESSEL_OK; /* os->on stays 0 */
    int rc = presence(e, os, bd->tile[xi], bd->tile[xj], &os->arow, &os->bcol);
    if (rc)
        return rc;
    os->on = 1;
    boundary *f = &os->fine;
    *f = *bd;
    memset(f->table, 0, sizeof(f->table));
    f->ntables = 0;
    f->tile[kx] = os->g;
    f->ntiles[kx] = os->nsteps;
    uint64_t gx[2] = { exact_live_edge(e, bd->b, xi, bd->tile[xi]),
                       exact_live_edge(e, bd->b, xj, bd->tile[xj]) };
    /* a per-rank format counts fibres per group row (exact_output.c's bound) */
    if (bd->out_cost.ranked && (e->extent[xj] + gx[1] - 1) / gx[1] > (UINT64_C(1) << 24))
        gx[1] = bd->tile[xj];
    for (unsigned m = 0; m < 2; m++) {
        unsigned x = e->out.x[m];
        f->tile[x] = gx[m];
        f->ntiles[x] = e->extent[x] ? (e->extent[x] + gx[m] - 1) / gx[m] : 1;
    }
    f->ndigits = 1;
    f->d[0] = (digit){ .x = kx, .div = 1, .radix = os->nsteps, .first = 1 };
    f->red_space = os->nsteps;
    rc = exact_tile_cost_init(e, f, &e->out, &os->gcost);
    if (rc || !group_can_spill(e, bd, os, gx)) {
        f->ntables = 0; /* only the visits' ends spill: no group table */
        return rc;
    }
    uint64_t macs = 0, n = e->extent[e->out.x[e->out.order - 1]] + 1;
    memset(e->mark, 0, n * sizeof(uint64_t)); /* the pass stamps rows anew */
    if (!rc)
        rc = exact_build_output(e, f, bd->out_cost.ranked || bd->out_cost.tiled, &macs);
    memset(e->mark, 0, n * sizeof(uint64_t));
    if (!rc)
        rc = group_presence(e, bd, os);
    return rc;
}

/* Step s's reduction key at boundary bd (the visit it belongs to). */
static uint64_t step_visit(const engine *e, const boundary *bd, const exact_outspill *os,
                           uint64_t s)
{
    uint64_t c[NX] = { 0 };
    c[e->red[0]] = s * os->g / bd->tile[e->red[0]];
    return exact_reduction_key(e, bd, c);
}

/* The spill after one update step: the tile's bytes beyond the partition
 * written to the parent and read back by the next step, split into data
 * and metadata as the tile's own bytes (the input rule's truncation). */
void exact_spill_charge(tessel_traffic *tr, uint64_t data, uint64_t meta, uint64_t part)
{
    uint64_t total = data + meta;
    if (total <= part)
        return;
    uint64_t extra = total - part;
    uint64_t m = (uint64_t)((double)extra * (double)meta / (double)total);
    tr->out_data += extra - m;
    tr->out_metadata += m;
    tr->in_data += extra - m;
    tr->in_metadata += m;
    tr->bumped_bytes += extra;
    tr->overflow_bytes += 2 * extra;
}

/* The visit ends of one output tile (the per-visit charge): its update
 * steps in order, each assigned to the run whose reduction keys (after
 * run r - 1's end, up to run r's end; ev: the tile's sorted run-end
 * events) hold it. The last step of a visit whose run continues at a
 * later visit spills the whole tile as it stands after that visit. */
static void price_visit_ends(const engine *e, const boundary *bd, exact_outspill *os,
                             uint64_t key, const uint64_t *ev, uint64_t nruns,
                             tessel_traffic *tr, uint64_t part)
{
    uint64_t nj = bd->ntiles[e->out.x[1]];
    const uint64_t *x = &os->arow[key / nj * os->words], *y = &os->bcol[key % nj * os->words];
    uint64_t cursors[3] = { 0 }, r = 0, prev_v = UINT64_MAX, prev_run = 0;
    for (uint64_t wd = 0; wd < os->words; wd++)
        for (uint64_t m = x[wd] & y[wd]; m; m &= m - 1) {
            uint64_t s = wd * 64 + (uint64_t)__builtin_ctzll(m);
            uint64_t v = step_visit(e, bd, os, s);
            while (r + 1 < nruns && v > ev[r] % bd->red_space)
                r++;
            if (prev_v != UINT64_MAX && r == prev_run && v != prev_v) {
                uint64_t occ[3], data, meta;
                exact_output_occupancy(bd, key, prev_v, cursors, occ);
                exact_tile_bytes(&bd->out_cost, occ[bd->ntables - 1], occ, &data, &meta);
                exact_spill_charge(tr, data, meta, part);
            }
            prev_v = v;
            prev_run = r;
        }
}

/* The steps inside visits: within one visit each live group is finished
 * before the next starts, and every step of a group whose next step lies
 * in the same visit spills the group's bytes beyond the partition (the
 * finished groups have left, written once). */
static void price_groups(const engine *e, const boundary *bd, exact_outspill *os,
                         tessel_traffic *tr, uint64_t part)
{
    const out_table *el = &os->fine.table[os->fine.ntables - 1];
    uint64_t ngj = os->fine.ntiles[e->out.x[1]];
    for (uint64_t o = 0; o < el->nout; o++) {
        uint64_t key = el->key[o], data, meta;
        if (group_bytes(os, key, UINT64_MAX, NULL, &data, &meta) <= part)
            continue; /* partial groups are never larger than the final one */
        const uint64_t *x = &os->grow[key / ngj * os->words];
        const uint64_t *y = &os->gcol[key % ngj * os->words];
        uint64_t cursors[3] = { 0 }, prev = UINT64_MAX, prev_v = UINT64_MAX;
        for (uint64_t wd = 0; wd < os->words; wd++)
            for (uint64_t m = x[wd] & y[wd]; m; m &= m - 1) {
                uint64_t s = wd * 64 + (uint64_t)__builtin_ctzll(m);
                uint64_t v = step_visit(e, bd, os, s);
                if (prev != UINT64_MAX && v == prev_v) {
                    group_bytes(os, key, prev, cursors, &data, &meta);
                    exact_spill_charge(tr, data, meta, part);
                }
                prev = s;
                prev_v = v;
            }
    }
}

/* Rule 4 for the output over every update step (docs/semantics.md rule 4):
 * events are the walk's run ends, sorted by tile and reduction key. It
 * replaces price_spills, whose per-visit charge is price_visit_ends here. */
void exact_outspill_price(engine *e, const boundary *bd, exact_outspill *os,
                          const model_vec *events)
{
    exact_outspill_price_runs(e, bd, os, events);
    exact_outspill_price_groups(e, bd, os);
}

/* The visit ends of the tiles in events (their tables are bd's now). */
void exact_outspill_price_runs(engine *e, const boundary *bd, exact_outspill *os,
                               const model_vec *events)
{
    tessel_traffic *tr = &e->res->traffic[bd->b][0];
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    for (uint64_t i = 0; i < events->n;) {
        uint64_t key = events->v[i] / bd->red_space, n = i;
        while (n < events->n && events->v[n] / bd->red_space == key)
            n++;
        uint64_t data, meta, occ[3];
        exact_output_occupancy(bd, key, UINT64_MAX, NULL, occ);
        exact_tile_bytes(&bd->out_cost, occ[bd->ntables - 1], occ, &data, &meta);
        if (data + meta > part) /* partial tiles are never larger than the final one */
            price_visit_ends(e, bd, os, key, &events->v[i], n - i, tr, part);
        i = n;
    }
}

/* The steps inside visits, from the live groups' own tables. */
void exact_outspill_price_groups(engine *e, const boundary *bd, exact_outspill *os)
{
    tessel_traffic *tr = &e->res->traffic[bd->b][0];
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    if (os->grow)
        price_groups(e, bd, os, tr, part);
}

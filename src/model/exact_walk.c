/* The exact estimator: effectual iterations, the walk that applies the
 * traffic rules, algorithmic and compulsory counts. */
#include <string.h>

#include "exact_internal.h"

/* ------------------------------------------------------------------ */
/* 2. The iterations. */

static uint32_t all_inputs_mask(const engine *e)
{
    uint32_t m = 0;
    for (unsigned i = 0; i < e->nin; i++)
        m |= 1u << e->in[i].spec_tensor;
    return m;
}

/* Inputs that skip on fewer than all of their partners need iterations in
 * which a partner is empty. */
static int needs_extra(const engine *e, unsigned b, unsigned i)
{
    uint32_t partners = all_inputs_mask(e) & ~(1u << e->in[i].spec_tensor);
    return (exact_fill_skip_mask(e, b, i) & partners) != partners;
}


int exact_too_many(engine *e, const boundary *bd)
{
    return tessel_diag_set(e->diag, TESSEL_ERANGE, NULL, 0, 0, "mapping",
                           "level %s: more tile iterations to walk than the exact walk takes "
                           "(2^35; 2^31 walking every key at once); use larger tiles",
                           e->spec->level[bd->b].name);
}

/* The iteration keys and write-back events are the largest arrays of a
 * run: sorted in place, so sorting adds no second copy. */
static void sort_in_place(model_vec *v)
{
    uint64_t max = 0;
    for (uint64_t i = 0; i < v->n; i++)
        max = v->v[i] > max ? v->v[i] : max;
    tessel_sort_u64_inplace(v->v, v->n, max);
}

static int push_iteration(engine *e, const boundary *bd, model_vec *keys, const uint64_t *c,
                          const exact_range *rng)
{
    uint64_t k = exact_loop_key(bd, c);
    if (rng && (k < rng->klo || k >= rng->khi))
        return TESSEL_OK; /* another chunk's */
    if (keys->n >= EXACT_MAX_ITERATIONS)
        return exact_too_many(e, bd);
    if (model_vec_push(keys, k))
        return exact_oom_step(e, "listing the loop iterations", model_vec_grow_bytes(keys));
    return TESSEL_OK;
}

/* Whether level-b tile coordinate v of engine index x lies outside the
 * chunk's range of the outermost digit (never without a range). */
static int outside(const exact_range *rng, unsigned x, uint64_t v)
{
    return rng && rng->x == x && (v < rng->lo || v >= rng->hi);
}

/* Positions [*p0, *p1) of the tiles to visit: with an order, those whose
 * coordinate lies in the chunk's range; else every tile. */
static void tile_span(const exact_range *rng, const exact_tile_order *o, uint64_t all,
                      uint64_t *p0, uint64_t *p1)
{
    *p0 = 0;
    *p1 = all;
    if (!o)
        return;
    uint64_t hi = rng->hi < o->n ? rng->hi : o->n, lo = rng->lo < hi ? rng->lo : hi;
    *p0 = o->start[lo];
    *p1 = o->start[hi];
}

/* Effectual iterations of a chunk whose outermost index is B's alone:
 * B's tiles in range, each with the A tiles of its shared coordinate. */
static int gen_effectual_b(engine *e, const boundary *bd, model_vec *keys, const exact_range *rng)
{
    const tessel_tile_grid *g0 = bd->grid[0], *g1 = bd->grid[1];
    const operand *o0 = &e->in[0], *o1 = &e->in[1];
    uint64_t p0, p1;
    tile_span(rng, rng->by[1], g1->nonempty, &p0, &p1);
    for (uint64_t p = p0; p < p1; p++) {
        uint64_t u = rng->by[1]->perm[p], shared = tessel_tile_grid_group(g1, u);
        const exact_tile_order *a = rng->a_shared;
        for (uint64_t q = a->start[shared]; shared < a->n && q < a->start[shared + 1]; q++) {
            uint64_t c[NX] = { 0 }, tc[3];
            tessel_tile_grid_coords(g0, a->perm[q], tc);
            for (unsigned m = 0; m < o0->order; m++)
                c[o0->x[m]] = tc[m];
            c[o1->x[1]] = tessel_tile_grid_key(g1, u);
            if (e->nin == 3 && !exact_tile_nnz(e, bd, 2, c))
                continue;
            if (push_iteration(e, bd, keys, c, rng))
                return e->diag ? e->diag->code : TESSEL_ENOMEM;
        }
    }
    return TESSEL_OK;
}

/* Effectual iterations: join of the input grids on their shared indices.
 * With a range, only the keys inside it (exact_stream.c's chunks). */
static int gen_effectual(engine *e, const boundary *bd, model_vec *keys, const exact_range *rng)
{
    const tessel_tile_grid *g0 = bd->grid[0], *g1 = bd->grid[1];
    const operand *o0 = &e->in[0], *o1 = &e->in[1];
    /* Size the key array first (exact for two inputs, a bound for three):
     * growing it by copying was a tenth of the run time. */
    uint64_t bound = 0;
    for (uint64_t t = 0; !rng && t < g0->nonempty; t++) {
        uint64_t tc[3];
        tessel_tile_grid_coords(g0, t, tc);
        uint64_t shared = 0;
        for (unsigned m = 0; m < o0->order; m++)
            if (o0->x[m] == o1->x[0])
                shared = tc[m];
        uint64_t u = exact_grid_lower(g1, shared, 0), v = exact_grid_lower(g1, shared + 1, 0);
        bound += v - u;
    }
    if (bound > EXACT_MAX_ITERATIONS)
        return exact_too_many(e, bd);
    if (bound > keys->cap) {
        uint64_t *v = tessel_realloc_array(e->alloc, keys->v, bound, sizeof(uint64_t));
        if (!v)
            return exact_oom_step(e, "listing the loop iterations", bound * sizeof(uint64_t));
        keys->v = v;
        keys->cap = bound;
    }
    int in_a = 0;
    for (unsigned m = 0; rng && m < o0->order; m++)
        in_a |= o0->x[m] == rng->x;
    int in_bkey = rng && !in_a && o1->x[1] == rng->x;
    if (in_bkey && rng->by[1] && rng->a_shared)
        return gen_effectual_b(e, bd, keys, rng);
    const exact_tile_order *ord = in_a ? rng->by[0] : NULL;
    uint64_t p0, p1;
    tile_span(rng, ord, g0->nonempty, &p0, &p1);
    for (uint64_t p = p0; p < p1; p++) {
        uint64_t t = ord ? ord->perm[p] : p;
        uint64_t c[NX] = { 0 }, tc[3];
        tessel_tile_grid_coords(g0, t, tc);
        int out = 0;
        for (unsigned m = 0; m < o0->order; m++) {
            c[o0->x[m]] = tc[m];
            out |= in_a && outside(rng, o0->x[m], tc[m]);
        }
        if (out)
            continue;
        uint64_t shared = c[o1->x[0]];
        for (uint64_t u = exact_grid_lower(g1, shared, in_bkey ? rng->lo : 0);
             shared < g1->extent[0] && u < tessel_tile_grid_row_begin(g1, shared + 1); u++) {
            c[o1->x[1]] = tessel_tile_grid_key(g1, u);
            if (in_bkey && tessel_tile_grid_key(g1, u) >= rng->hi)
                break;
            if (e->nin == 3 && !exact_tile_nnz(e, bd, 2, c))
                continue;
            if (push_iteration(e, bd, keys, c, rng))
                return e->diag ? e->diag->code : TESSEL_ENOMEM;
        }
    }
    return TESSEL_OK;
}

/* Every iteration in which input i's tile is non-empty and the partners
 * it skips on are non-empty (the other indices range freely; a free
 * outermost index only over the chunk's range). */
static int gen_for_input(engine *e, const boundary *bd, unsigned i, model_vec *keys,
                         const exact_range *rng)
{
    const operand *o = &e->in[i];
    uint32_t skip_mask = exact_fill_skip_mask(e, bd->b, i);
    unsigned free_x[NX], nfree = 0;
    for (unsigned x = 0; x < e->nx; x++) {
        int used = 0;
        for (unsigned m = 0; m < o->order; m++)
            used |= o->x[m] == x;
        if (!used)
            free_x[nfree++] = x;
    }
    uint64_t lo[NX], width[NX];
    for (unsigned f = 0; f < nfree; f++) {
        uint64_t n = bd->ntiles[free_x[f]];
        lo[f] = 0;
        width[f] = n;
        if (rng && rng->x == free_x[f]) {
            lo[f] = rng->lo < n ? rng->lo : n;
            width[f] = (rng->hi < n ? rng->hi : n) - lo[f];
        }
    }
    const tessel_tile_grid *g = bd->grid[i];
    const exact_tile_order *ord = rng ? rng->by[i] : NULL;
    uint64_t p0, p1;
    tile_span(rng, ord, g->nonempty, &p0, &p1);
    for (uint64_t pos = p0; pos < p1; pos++) {
        uint64_t t = ord ? ord->perm[pos] : pos;
        uint64_t c[NX] = { 0 }, tc[3];
        tessel_tile_grid_coords(g, t, tc);
        int out = 0;
        for (unsigned m = 0; m < o->order; m++) {
            c[o->x[m]] = tc[m];
            out |= outside(rng, o->x[m], tc[m]);
        }
        if (out)
            continue;
        uint64_t combos = 1;
        for (unsigned f = 0; f < nfree; f++)
            combos *= width[f];
        for (uint64_t n = 0; n < combos; n++) {
            uint64_t r = n;
            for (unsigned f = nfree; f-- > 0;) {
                c[free_x[f]] = lo[f] + r % width[f];
                r /= width[f];
            }
            int keep = 1;
            for (unsigned p = 0; p < e->nin && keep; p++)
                if (p != i && (skip_mask >> e->in[p].spec_tensor & 1u))
                    keep = exact_tile_nnz(e, bd, p, c) != 0;
            if (!keep)
                continue;
            if (push_iteration(e, bd, keys, c, rng))
                return e->diag ? e->diag->code : TESSEL_ENOMEM;
        }
    }
    return TESSEL_OK;
}

int exact_all_effectual(const engine *e, const boundary *bd)
{
    for (unsigned i = 0; i < e->nin; i++)
        if (needs_extra(e, bd->b, i))
            return 0;
    return 1;
}

int exact_gen_iterations(engine *e, const boundary *bd, model_vec *keys, int *all_effectual,
                         exact_range *rng)
{
    int rc = gen_effectual(e, bd, keys, rng);
    *all_effectual = 1;
    for (unsigned i = 0; !rc && i < e->nin; i++) {
        if (!needs_extra(e, bd->b, i))
            continue;
        *all_effectual = 0;
        rc = gen_for_input(e, bd, i, keys, rng);
    }
    if (rng)
        rng->pushed = keys->n;
    if (rc || !keys->n)
        return rc;
    if (rng) { /* a chunk's keys span less than the whole space: fewer radix passes */
        for (uint64_t n = 0; n < keys->n; n++)
            keys->v[n] -= rng->klo;
        tessel_sort_u64_inplace(keys->v, keys->n, rng->khi - rng->klo - 1);
        for (uint64_t n = 0; n < keys->n; n++)
            keys->v[n] += rng->klo;
    } else {
        sort_in_place(keys);
    }
    uint64_t u = 0;
    for (uint64_t n = 0; n < keys->n; n++)
        if (n == 0 || keys->v[n] != keys->v[n - 1])
            keys->v[u++] = keys->v[n];
    keys->n = u;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* 3. The walk. */

/* Partition of tensor t at level b in bytes (0 = unbounded): given bytes,
 * else the fraction, else an equal share of the level. */
uint64_t exact_partition_bytes(const engine *e, unsigned b, unsigned t)
{
    return tessel_spec_partition_bytes(e->spec, b, t);
}

static void add_in(tessel_traffic *tr, uint64_t data, uint64_t meta)
{
    tr->in_data += data;
    tr->in_metadata += meta;
}

/* Per-rank formats: the prefix counts of input i's grid tile idx. */
static const uint64_t *input_occ(const engine *e, const boundary *bd, unsigned i, uint64_t idx)
{
    (void)e;
    return bd->occ[i] ? &bd->occ[i][idx * bd->occ_stride[i]] : NULL;
}

/* The data and metadata bytes of input i's grid tile idx: the streaming
 * walk prices every tile once, up front (fp). */
static void tile_fill_bytes(const boundary *bd, unsigned i, uint64_t idx, uint64_t nnz,
                            const uint64_t *const *fp, uint64_t *data, uint64_t *meta)
{
    if (fp[i]) {
        *data = fp[i][2 * idx];
        *meta = fp[i][2 * idx + 1];
    } else {
        exact_tile_bytes(&bd->cost[i], nnz, input_occ(NULL, bd, i, idx), data, meta);
    }
}

/* An outer action_optimization (model_scalar.c) after walk_inputs: each
 * input's fill of the dense schedule (its non-empty tile changed, filled or
 * not) and its actual fill (its resident tile changed, or a gated slot was
 * filled: was[] holds the resident keys and gated flags before). */
static void outer_note(engine *e, const boundary *bd, const uint64_t *c, exact_resident *res,
                       const uint64_t *const *fp, const uint64_t *nnz_now, const uint64_t *was)
{
    for (unsigned i = 0; i < e->nin; i++) {
        if (!e->outer_on[bd->b][i] || !nnz_now[i])
            continue;
        uint64_t key = exact_tile_key(bd, &e->in[i], c);
        if (key != res[i].dense_key) {
            uint64_t idx = key == res[i].key ? res[i].idx : exact_tile_index(e, bd, i, c), d, m;
            tile_fill_bytes(bd, i, idx, nnz_now[i], fp, &d, &m);
            exact_outer_dense(e, bd->b, i, nnz_now[i], m);
            res[i].dense_key = key;
        }
        int filled = (res[i].key != was[2 * i] || (was[2 * i + 1] && res[i].key == key)) &&
                     !res[i].gated;
        if (filled)
            exact_outer_fill(e, bd->b, i, nnz_now[i], res[i].meta);
    }
}

/* The pipeline's per-step network count: the cycles level b-1's network
 * takes to deliver this fill's values (docs/models/timing.md). */
void exact_note_network(const tessel_spec *spec, unsigned b, tessel_traffic *tr, uint64_t data)
{
    uint64_t w = b ? spec->level[b - 1].network_width : 0;
    if (!w)
        return;
    unsigned vb = spec->level[b].value_bits ? spec->level[b].value_bits : 64;
    uint64_t values = (data * 8 + vb - 1) / vb;
    tr->fill_network_cycles += (values + w - 1) / w;
}

/* Rule 4 bookkeeping: the partition and the largest tile moved. */
void exact_note_tile(tessel_traffic *tr, uint64_t part, uint64_t bytes)
{
    tr->partition_bytes = part;
    if (bytes > tr->worst_tile_bytes)
        tr->worst_tile_bytes = bytes;
}

void exact_charge_fill(const tessel_spec *spec, unsigned b, tessel_result *r, tessel_traffic *tr,
                       uint64_t part, uint64_t data, uint64_t meta)
{
    tr->fills++;
    add_in(tr, data, meta);
    exact_note_tile(tr, part, data + meta);
    exact_note_network(spec, b, tr, data);
    if (part && data + meta > part) {
        r->overflow_tiles++;
        tr->overflow_tiles++;
    }
}

uint64_t exact_charge_excess(tessel_traffic *tr, uint64_t part, uint64_t data, uint64_t meta)
{
    uint64_t total = data + meta;
    if (!part || total <= part)
        return 0;
    uint64_t extra = total - part;
    uint64_t m = (uint64_t)((double)extra * (double)meta / (double)total);
    add_in(tr, extra - m, m);
    tr->bumped_bytes += extra;
    tr->overflow_bytes += extra;
    return extra;
}

/* One tile iteration of the exact walk for the inputs: which tiles it touches, fills
 * and re-fills at every level (rules 1-4), and the nonzeros resident now. */
static int walk_inputs(engine *e, const boundary *bd, const uint64_t *c, int effectual,
                       exact_resident *res, const uint64_t *const *fp, uint64_t *nnz_now)
{
    int rc = TESSEL_OK;
    tessel_result *r = e->res;
    unsigned b = bd->b;
    uint64_t key[NIN], idx[NIN];
    for (unsigned i = 0; i < e->nin; i++) {
        key[i] = exact_tile_key(bd, &e->in[i], c);
        idx[i] = key[i] == res[i].key ? res[i].idx
                                      : exact_tile_index(e, bd, i, c);
        nnz_now[i] = idx[i] == UINT64_MAX ? 0 : tessel_tile_grid_count(bd->grid[i], idx[i]);
    }
    for (unsigned i = 0; i < e->nin; i++) {
        const operand *o = &e->in[i];
        const tessel_spec_tensor_level *tl = &e->spec->level[b].tensor[o->spec_tensor];
        tessel_traffic *tr = &r->traffic[b][o->spec_tensor];
        if (!nnz_now[i])
            continue; /* a compressed format skips its own empty tiles */
        int skip = 0, gate = 0;
        for (unsigned p = 0; !effectual && p < e->nin; p++) {
            if (p == i || nnz_now[p] != 0)
                continue;
            if (tl->sparse.skip_on >> e->in[p].spec_tensor & 1u)
                skip = 1;
            else if (tl->sparse.gate_on >> e->in[p].spec_tensor & 1u)
                gate = 1;
        }
        if (skip)
            continue;
        uint64_t part = exact_partition_bytes(e, b, o->spec_tensor);
        if (key[i] != res[i].key && gate) {
            /* Gating spends the slot without moving data. */
            tr->gated++;
            res[i].key = key[i];
            res[i].idx = idx[i];
            res[i].nnz = nnz_now[i];
            res[i].gated = 1;
            continue;
        }
        if (key[i] != res[i].key || (res[i].gated && !gate)) {
            res[i].key = key[i];
            res[i].idx = idx[i];
            res[i].gated = 0;
            res[i].nnz = nnz_now[i];
            if (fp[i]) { /* the streaming walk prices every tile once, up front */
                res[i].data = fp[i][2 * idx[i]];
                res[i].meta = fp[i][2 * idx[i] + 1];
            } else {
                exact_tile_bytes(&bd->cost[i], nnz_now[i], input_occ(e, bd, i, idx[i]),
                                 &res[i].data, &res[i].meta);
            }
            exact_charge_fill(e->spec, b, r, tr, part, res[i].data, res[i].meta);
            if (!rc)
                rc = exact_ob_child(e, bd, i, c, nnz_now[i]);
            if (!rc)
                rc = exact_ob_note(e, bd, i, c, nnz_now[i], res[i].data, res[i].meta, part, 1);
            continue;
        }
        if (res[i].gated)
            continue;
        /* Rule 4: the part of an overbooked tile beyond its partition is
         * streamed again on every use; at an inner level exact_bumped.c
         * re-prices it by the child level's reads once they are known. */
        if (!gate && exact_charge_excess(tr, part, res[i].data, res[i].meta) && !rc)
            rc = exact_ob_note(e, bd, i, c, res[i].nnz, res[i].data, res[i].meta, part, 0);
    }
    return rc;
}

/* Output tiles: the walk only records when each run of visits to a tile
 * ends (a write-back, at the reduction key reached). Afterwards the events
 * are sorted by tile and priced in one sequential sweep over the output
 * tables, instead of a random lookup per event. A tile with R runs is
 * written back R times and read back R - 1 times, each read-back bringing
 * the previous write-back's contents (rule 2). */
void exact_output_bytes(const boundary *bd, uint64_t key, uint64_t red, uint64_t *cursors,
                         uint64_t *data, uint64_t *meta)
{
    uint64_t occ[3];
    exact_output_occupancy(bd, key, red, cursors, occ);
    exact_tile_bytes(&bd->out_cost, occ[bd->ntables - 1], occ, data, meta);
}

/* Whether output tile `key` is priced in this walk: always, except in a
 * replay of the key stream for one range of output tile rows. */
static int priced(const exact_out_state *os, uint64_t key)
{
    uint64_t row = key / os->per_row;
    return row >= os->lo && row < os->hi;
}

static int end_run(engine *e, const boundary *bd, exact_out_state *os)
{
    if (os->key == UINT64_MAX || !priced(os, os->key))
        return TESSEL_OK;
    if (os->live && exact_live_writeback(e, bd, &os->lv, os->key, os->red))
        return TESSEL_ENOMEM;
    if (os->record && model_vec_push(&os->events, os->key * bd->red_space + os->red))
        return exact_oom_step(e, "recording the output's tile visits",
                              model_vec_grow_bytes(&os->events));
    return TESSEL_OK;
}

static int walk_output(engine *e, const boundary *bd, const uint64_t *c, exact_out_state *os)
{
    uint64_t key = exact_tile_key(bd, &e->out, c);
    if (key != os->key) {
        if (end_run(e, bd, os))
            return TESSEL_ENOMEM;
        os->key = key;
    } else if (!priced(os, key)) {
        /* another range's tile: its runs end here, priced in its replay */
    } else if (os->spills && os->live) {
        if (exact_live_spill(e, bd, &os->lv, key, os->red))
            return TESSEL_ENOMEM;
    } else if (os->spills && model_vec_push(&os->mid, key * bd->red_space + os->red)) {
        return exact_oom_step(e, "recording the output's spills", model_vec_grow_bytes(&os->mid));
    }
    os->red = exact_reduction_key(e, bd, c);
    return TESSEL_OK;
}

/* Prices the write-back events: sorted by tile, then by reduction key,
 * which is also the order in which each tile's runs happened. */
static int price_output(engine *e, const boundary *bd, model_vec *events)
{
    tessel_traffic *tr = &e->res->traffic[bd->b][0];
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    uint64_t n = events->n;
    sort_in_place(events);
    uint64_t cursors[3] = { 0 }, data = 0, meta = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t key = events->v[i] / bd->red_space, red = events->v[i] % bd->red_space;
        int first = i == 0 || key != events->v[i - 1] / bd->red_space;
        if (first) {
            memset(cursors, 0, sizeof(cursors));
        } else { /* read back what the previous run wrote */
            tr->updates++;
            tr->in_data += data;
            tr->in_metadata += meta;
        }
        exact_output_bytes(bd, key, red, cursors, &data, &meta);
        tr->writebacks++;
        tr->out_data += data;
        tr->out_metadata += meta;
        exact_note_tile(tr, part, data + meta);
        if (part && data + meta > part)
            tr->overflow_tiles++;
    }
    return TESSEL_OK;
}

/* Rule 4 for outputs (docs/semantics.md rule 4; Tailors §3.3, §6.2): an output tile whose
 * partial results outgrow its partition keeps the partition's worth
 * resident and spills the rest to the parent. Like an input's bumped part
 * (re-streamed on every use), the spilled part gets no reuse: after each
 * visit that does not end its run it is written out, and the next visit
 * (the next update) reads it back to accumulate into it. The run's last
 * visit is the rule 2 write-back, which already carries the whole tile. */
static void price_spills(engine *e, const boundary *bd, model_vec *mid)
{
    tessel_traffic *tr = &e->res->traffic[bd->b][0];
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    sort_in_place(mid);
    uint64_t cursors[3] = { 0 }, data = 0, meta = 0;
    for (uint64_t i = 0; i < mid->n; i++) {
        uint64_t key = mid->v[i] / bd->red_space, red = mid->v[i] % bd->red_space;
        if (i == 0 || key != mid->v[i - 1] / bd->red_space)
            memset(cursors, 0, sizeof(cursors));
        exact_output_bytes(bd, key, red, cursors, &data, &meta);
        exact_spill_charge(tr, data, meta, part);
    }
}

/* Whether some final output tile is larger than the output's partition:
 * partial tiles are never larger than their final state, so otherwise no
 * visit can spill and the walk records none. */
static int output_can_spill(const engine *e, const boundary *bd)
{
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    if (!part)
        return 0;
    const out_table *elements = &bd->table[bd->ntables - 1];
    for (uint64_t o = 0; o < elements->nout; o++) {
        uint64_t data, meta;
        exact_output_bytes(bd, elements->key[o], UINT64_MAX, NULL, &data, &meta);
        if (data + meta > part)
            return 1;
    }
    return 0;
}

int exact_walker_begin(engine *e, const boundary *bd, int all_effectual, int live,
                       exact_walker *w)
{
    memset(w, 0, sizeof(*w));
    w->e = e;
    w->bd = bd;
    w->all_effectual = all_effectual;
    w->outer = e->outer_any[bd->b];
    for (unsigned i = 0; i < e->nin; i++) {
        w->res[i].key = w->res[i].dense_key = UINT64_MAX;
        w->res[i].gated = 0;
    }
    exact_out_state *os = &w->os;
    os->key = UINT64_MAX;
    os->events.alloc = os->mid.alloc = e->alloc;
    os->lo = 0;
    os->hi = UINT64_MAX;
    os->per_row = 1;
    for (unsigned m = 1; m < e->out.order; m++)
        os->per_row *= bd->ntiles[e->out.x[m]];
    os->spills = bd->spill_known ? bd->spill : output_can_spill(e, bd);
    int rc = os->spills ? exact_outspill_prepare(e, bd, &w->steps) : TESSEL_OK;
    if (w->steps.on)
        os->spills = 0; /* priced per update step at the end, not per visit */
    os->record = !live || w->steps.on;
    os->live = live;
    if (!rc && live)
        rc = exact_live_init(e, bd, &os->lv);
    return rc;
}

/* Walks n sorted loop keys, continuing from the keys walked before. */
int exact_walker_keys(exact_walker *w, const uint64_t *keys, uint64_t n)
{
    engine *e = w->e;
    const boundary *bd = w->bd;
    unsigned b = bd->b;
    int innermost = b + 1 == e->nlev, rc = TESSEL_OK;
    for (uint64_t k = 0; k < n && !rc; k++) {
        uint64_t c[NX], nnz_now[NIN] = { 0 }, at = w->done + k;
        if (e->progress && !w->outputs_only && at && !(at & ((UINT64_C(1) << 20) - 1)))
            e->progress(e->progress_ud, b, (double)at / (double)w->total);
        exact_loop_decode(bd, keys[k], c);
        int effectual = 1;
        if (!w->all_effectual)
            for (unsigned i = 0; i < e->nin; i++)
                effectual &= exact_tile_nnz(e, bd, i, c) != 0;
        if (w->outputs_only) { /* a replay: only the output's runs */
            if (effectual)
                rc = walk_output(e, bd, c, &w->os);
            continue;
        }
        uint64_t was[2 * NIN];
        for (unsigned i = 0; w->outer && i < e->nin; i++) {
            was[2 * i] = w->res[i].key;
            was[2 * i + 1] = (uint64_t)w->res[i].gated;
        }
        rc = walk_inputs(e, bd, c, effectual, w->res, w->fp, nnz_now);
        if (w->outer)
            outer_note(e, bd, c, w->res, w->fp, nnz_now, was);
        if (rc || !effectual)
            continue;
        e->res->effectual_tiles[b]++;
        if (innermost)
            for (unsigned i = 0; i < e->nin; i++) {
                e->res->intersections += nnz_now[i];
                if (exact_scalar_on(e, i)) /* its format reads replace the intersection's */
                    exact_scalar_note(e, i, c, nnz_now[i], w->res[i].meta);
                else
                    e->res->traffic[b][e->in[i].spec_tensor].child_read_metadata +=
                        nnz_now[i] * e->spec->level[b].coord_bits / 8;
            }
        if (innermost && e->spec->compute.optimization)
            exact_compute_note(e, c, nnz_now);
        rc = walk_output(e, bd, c, &w->os);
    }
    w->done += n;
    return rc;
}

/* Ends the open output run now (its tile is not visited again). */
int exact_walker_flush(exact_walker *w)
{
    int rc = end_run(w->e, w->bd, &w->os);
    w->os.key = UINT64_MAX;
    return rc;
}

/* Ends the last run and prices what was recorded; releases w. */
int exact_walker_end(exact_walker *w, int rc)
{
    engine *e = w->e;
    const boundary *bd = w->bd;
    exact_out_state *os = &w->os;
    if (!rc)
        rc = end_run(e, bd, os);
    if (!rc && !os->live)
        rc = price_output(e, bd, &os->events);
    else if (!rc && w->steps.on)
        sort_in_place(&os->events); /* price_output sorted them in the old walk */
    if (!rc && w->steps.on)
        exact_outspill_price_runs(e, bd, &w->steps, &os->events);
    if (!rc && w->steps.on && !w->outputs_only)
        exact_outspill_price_groups(e, bd, &w->steps);
    exact_outspill_free(e, &w->steps);
    model_vec_free(&os->events);
    if (!rc && os->spills && !os->live)
        price_spills(e, bd, &os->mid);
    model_vec_free(&os->mid);
    if (os->live)
        exact_live_free(e, &os->lv);
    return rc;
}

/* The old walk: every key of the boundary generated, sorted and walked at
 * once (memory O(effectual iterations)); exact_stream.c compares with it. */
int exact_walk_all(engine *e, const boundary *bd)
{
    model_vec keys = { .alloc = e->alloc };
    int all_effectual = 1;
    int rc = exact_gen_iterations(e, bd, &keys, &all_effectual, NULL);
    exact_walker w;
    if (!rc) {
        rc = exact_walker_begin(e, bd, all_effectual, 0, &w);
        w.total = keys.n;
        if (!rc)
            rc = exact_walker_keys(&w, keys.v, keys.n);
        rc = exact_walker_end(&w, rc);
    }
    model_vec_free(&keys);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Sparseloop's algorithmic counts: the dense loop nest changes a tensor's
 * tile once per iteration of every loop down to its innermost index. */
static uint64_t dense_changes(const boundary *bd, const operand *o)
{
    unsigned last = 0;
    int any = 0;
    for (unsigned i = 0; i < bd->ndigits; i++)
        for (unsigned m = 0; m < o->order; m++)
            if (bd->d[i].x == o->x[m]) {
                last = i;
                any = 1;
            }
    uint64_t n = 1;
    for (unsigned i = 0; any && i <= last; i++)
        n = bd->d[i].radix && n > UINT64_MAX / bd->d[i].radix ? UINT64_MAX : n * bd->d[i].radix;
    return n;
}

void exact_algorithmic_counts(engine *e, const boundary *bd)
{
    for (unsigned i = 0; i < e->nin; i++) {
        tessel_traffic *tr = &e->res->traffic[bd->b][e->in[i].spec_tensor];
        tr->algorithmic = dense_changes(bd, &e->in[i]);
        uint64_t done = tr->fills + tr->gated;
        tr->skipped = tr->algorithmic > done ? tr->algorithmic - done : 0;
    }
    tessel_traffic *tz = &e->res->traffic[bd->b][0];
    uint64_t tiles = 1;
    for (unsigned m = 0; m < e->out.order; m++)
        tiles *= bd->ntiles[e->out.x[m]];
    uint64_t changes = dense_changes(bd, &e->out);
    tz->algorithmic = changes > tiles ? changes - tiles : 0;
    tz->skipped = tz->algorithmic > tz->updates ? tz->algorithmic - tz->updates : 0;
}

/* Every input tile once, every final output tile once, at level 1: the
 * floor of this tiling, from which compulsory.c derives the tiled
 * metadata (compulsory traffic itself is untiled, rule 3). */
void exact_compulsory(engine *e, const boundary *bd)
{
    uint64_t total = 0, data, meta;
    for (unsigned i = 0; i < e->nin; i++) {
        const tessel_tile_grid *g = bd->grid[i];
        for (uint64_t t = 0; t < g->nonempty; t++) {
            exact_tile_bytes(&bd->cost[i], tessel_tile_grid_count(g, t), input_occ(e, bd, i, t),
                             &data, &meta);
            total += data + meta;
        }
    }
    const out_table *elements = &bd->table[bd->ntables - 1];
    for (uint64_t o = 0; !bd->by_rows && o < elements->nout; o++) {
        exact_output_bytes(bd, elements->key[o], UINT64_MAX, NULL, &data, &meta);
        total += data + meta;
    }
    e->res->compulsory_bytes = total + (bd->by_rows ? bd->rows_bytes : 0);
}


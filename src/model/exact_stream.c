/* The exact estimator's walk in bounded memory (issue 19 item 1): one
 * boundary's composite loop keys generated, sorted and walked chunk by
 * chunk instead of all at once, and each output run priced when it ends
 * instead of recorded.
 *
 * A chunk is a range of values of the outermost digit (an outermost
 * value's keys split further by key range when they alone exceed the
 * budget). The key order puts that digit first, so the chunks in order
 * walk the keys in the same order as the whole sorted array did, and the
 * state that crosses a chunk boundary is the walker's: the tile resident
 * per input and the open output run. Per output tile, what its next
 * write-back (rule 2) or spill (rule 4) needs: the table cursors and the
 * last write-back's bytes. Memory: O(input tiles + output tiles + chunk),
 * never O(effectual iterations). When the outermost loop is the output's
 * first index (or SpMSpM's column index) and no output tile can spill, the
 * output tables and that per-tile state hold only the current chunk's
 * range of output rows (columns): a tile's visits all fall inside its own
 * outermost coordinate, so a range's tiles are finished when the walk
 * leaves it (exact_output_and_walk). In every other order (KIJ, KJI) the
 * tables hold one budgeted range of output rows and the whole key stream
 * is replayed per range, pricing only that range's tiles (walk_replayed).
 * Per-rank output formats and spilling tiles take either path. The numbers
 * equal the old walk's bit for bit: every counter is a sum or a maximum
 * over the same events, and a tile's events arrive in the order of its
 * reduction keys in both.
 *
 * A value split by key range regenerates all of its keys once per part
 * (keeping only the part's), so a value of n keys costs n^2 / budget: cheap
 * at the real budget, slow at a tiny test budget on large inputs.
 *
 * For the tests, the estimator's options (tessel_exact_options) choose the
 * old walk (every key at once, exact_walk_all) or a smaller chunk budget,
 * so small inputs cross many chunk boundaries. */
#include <string.h>

#include "exact_internal.h"

/* Keys per chunk: 128 MiB of keys. */
#define CHUNK_KEYS (UINT64_C(1) << 24)
/* The exact estimator's streaming walk's guard: its memory does not grow
 * with the keys, so it refuses only walks of hours (2^35 keys at about
 * 0.6 us each). The old walk (its keys in memory) and the stat walk on
 * statistics (stat_walk.c, no row markers: strategies search with it,
 * so its bound stays as it was) keep EXACT_MAX_ITERATIONS. */
#define STREAM_MAX_ITERATIONS (UINT64_C(1) << 35)

static uint64_t max_iterations(const engine *e)
{
    return e->mark ? STREAM_MAX_ITERATIONS : EXACT_MAX_ITERATIONS;
}
/* Output table entries per replayed range of rows (walk_replayed): about
 * 256 MiB of tables and their staging. */
#define RANGE_ENTRIES (UINT64_C(1) << 23)

static void hist_add(uint64_t *h, uint64_t v, uint64_t n)
{
    h[v] = h[v] > UINT64_MAX - n ? UINT64_MAX : h[v] + n;
}

/* Position of engine index x among operand o's modes, or -1. */
static int mode_of(const operand *o, unsigned x)
{
    for (unsigned m = 0; m < o->order; m++)
        if (o->x[m] == x)
            return (int)m;
    return -1;
}

/* The plan: per value of the outermost digit (index x0, width div0 tile
 * coordinates), a bound on the keys gen_effectual generates there. */
static int plan_effectual(engine *e, const boundary *bd, unsigned x0, uint64_t div0,
                          uint64_t *hist, uint64_t *bound)
{
    const tessel_tile_grid *g0 = bd->grid[0], *g1 = bd->grid[1];
    const operand *o0 = &e->in[0], *o1 = &e->in[1];
    int ma = x0 < NX ? mode_of(o0, x0) : -1, ms = mode_of(o0, o1->x[0]);
    int bkey = ma < 0 && x0 < NX && o1->x[1] == x0;
    uint64_t *na = NULL, ngroups = bd->ntiles[o1->x[0]];
    if (bkey) { /* per group of B: A's tiles that pair with it */
        na = tessel_alloc_array(e->alloc, ngroups, sizeof(uint64_t));
        if (!na)
            return exact_oom_step(e, "planning the walk's chunks", ngroups * sizeof(uint64_t));
        memset(na, 0, ngroups * sizeof(uint64_t));
    }
    *bound = 0;
    for (uint64_t t = 0; t < g0->nonempty; t++) {
        uint64_t tc[3];
        tessel_tile_grid_coords(g0, t, tc);
        uint64_t shared = ms >= 0 ? tc[ms] : 0;
        uint64_t n = exact_grid_lower(g1, shared + 1, 0) - exact_grid_lower(g1, shared, 0);
        *bound += n;
        if (bkey)
            na[shared]++;
        else
            hist_add(hist, ma >= 0 ? tc[ma] / div0 : 0, n);
    }
    for (uint64_t u = 0, gr = 0; bkey && u < g1->nonempty; u++)
        hist_add(hist, tessel_tile_grid_key(g1, u) / div0,
                 na[gr = tessel_tile_grid_group_from(g1, u, gr)]);
    tessel_dealloc(e->alloc, na);
    return TESSEL_OK;
}

/* The same bound for input i's iterations with empty partners
 * (gen_for_input): every free index over all its tiles. */
static void plan_input(const engine *e, const boundary *bd, unsigned i, unsigned x0,
                       uint64_t div0, uint64_t radix0, uint64_t *hist)
{
    const operand *o = &e->in[i];
    const tessel_tile_grid *g = bd->grid[i];
    uint64_t combos = 1;
    for (unsigned x = 0; x < e->nx; x++)
        if (mode_of(o, x) < 0)
            combos *= bd->ntiles[x];
    int m0 = x0 < NX ? mode_of(o, x0) : -1;
    if (m0 >= 0 || x0 >= NX) {
        for (uint64_t t = 0; t < g->nonempty; t++) {
            uint64_t tc[3];
            tessel_tile_grid_coords(g, t, tc);
            hist_add(hist, m0 >= 0 ? tc[m0] / div0 : 0, combos);
        }
        return;
    }
    /* x0 free: each of its tile coordinates takes combos / ntiles of them */
    uint64_t nt = bd->ntiles[x0], per = combos / nt;
    for (uint64_t v = 0; v < radix0; v++) {
        uint64_t lo = v * div0, hi = (v + 1) * div0 < nt ? (v + 1) * div0 : nt;
        uint64_t w = hi > lo ? hi - lo : 0;
        hist_add(hist, v, g->nonempty * per * w);
    }
}

/* Bytes of every non-empty input tile, once (the walk fills from them). */
static int input_footprints(engine *e, const boundary *bd, uint64_t **fp)
{
    for (unsigned i = 0; i < e->nin; i++) {
        const tessel_tile_grid *g = bd->grid[i];
        uint64_t n = g->nonempty ? g->nonempty : 1;
        fp[i] = tessel_alloc_array(e->alloc, 2 * n, sizeof(uint64_t));
        if (!fp[i])
            return exact_oom_step(e, "pricing the input tiles", 2 * n * sizeof(uint64_t));
        unsigned depths = bd->occ_stride[i];
        for (uint64_t t = 0; t < g->nonempty; t++)
            exact_tile_bytes(&bd->cost[i], tessel_tile_grid_count(g, t),
                             bd->occ[i] ? &bd->occ[i][t * depths] : NULL,
                             &fp[i][2 * t], &fp[i][2 * t + 1]);
    }
    return TESSEL_OK;
}

/* Input grid g's tiles by their coordinate along mode m (n values): a
 * counting sort, so a chunk finds its tiles without scanning all. */
static int order_tiles(engine *e, const tessel_tile_grid *g, unsigned m, uint64_t n,
                       exact_tile_order *o)
{
    o->n = n;
    o->start = tessel_alloc_array(e->alloc, n + 1, sizeof(uint64_t));
    o->perm = tessel_alloc_array(e->alloc, g->nonempty ? g->nonempty : 1, sizeof(uint64_t));
    if (!o->start || !o->perm)
        return exact_oom_step(e, "ordering the input tiles", (n + 1 + g->nonempty) * 8);
    memset(o->start, 0, (n + 1) * sizeof(uint64_t));
    for (uint64_t t = 0; t < g->nonempty; t++) {
        uint64_t tc[3];
        tessel_tile_grid_coords(g, t, tc);
        o->start[tc[m] + 1]++;
    }
    for (uint64_t v = 0; v < n; v++)
        o->start[v + 1] += o->start[v];
    for (uint64_t t = 0; t < g->nonempty; t++) {
        uint64_t tc[3];
        tessel_tile_grid_coords(g, t, tc);
        o->perm[o->start[tc[m]]++] = t;
    }
    for (uint64_t v = n; v > 0; v--)
        o->start[v] = o->start[v - 1];
    o->start[0] = 0;
    return TESSEL_OK;
}

/* The orders a chunk of outermost index x0 visits its tiles by. */
static int order_all(engine *e, const boundary *bd, unsigned x0, exact_tile_order *ord,
                     exact_range *proto)
{
    memset(proto, 0, sizeof(*proto));
    proto->x = x0;
    if (x0 >= NX)
        return TESSEL_OK;
    int rc = TESSEL_OK;
    for (unsigned i = 0; !rc && i < e->nin; i++) {
        int m = mode_of(&e->in[i], x0);
        if (m < 0)
            continue;
        rc = order_tiles(e, bd->grid[i], (unsigned)m, bd->ntiles[x0], &ord[i]);
        proto->by[i] = &ord[i];
    }
    const operand *o1 = &e->in[1];
    int ms = mode_of(&e->in[0], o1->x[0]);
    if (!rc && !proto->by[0] && o1->x[1] == x0 && ms >= 0) {
        rc = order_tiles(e, bd->grid[0], (unsigned)ms, bd->ntiles[o1->x[0]], &ord[NIN]);
        proto->a_shared = &ord[NIN];
    }
    return rc;
}

typedef struct stream {
    engine *e;
    const boundary *bd;
    exact_walker w;
    model_vec keys;
    uint64_t pushed; /* keys generated before removing repeats (the old guard) */
    /* Output tables by row range (bd->by_rows): the range of outermost
     * tile coordinates they hold now */
    boundary *rows_bd;
    struct out_emitter *rows;
    uint64_t lo, hi, *macs;
} stream;

/* The whole output's nonzeros and final tile bytes in the tables now. */
static void rows_totals(boundary *bd)
{
    const out_table *t = &bd->table[bd->ntables - 1];
    for (uint64_t o = 0; o < t->nout; o++) {
        uint64_t data, meta;
        bd->rows_nnz += t->cum[t->start[o + 1] - 1];
        exact_output_bytes(bd, t->key[o], UINT64_MAX, NULL, &data, &meta);
        bd->rows_bytes += data + meta;
    }
}

/* The output's mode the outermost loop runs over: 0 rows, 1 columns. */
static unsigned out_mode(const engine *e, const boundary *bd)
{
    return bd->d[0].x == e->out.x[0] ? 0 : 1;
}

/* Output rows (or columns) of outermost tile coordinates [lo, hi). */
static void rows_of(const boundary *bd, uint64_t lo, uint64_t hi, uint64_t *r0, uint64_t *r1)
{
    uint64_t t = bd->tile[bd->d[0].x];
    *r0 = lo > UINT64_MAX / t ? UINT64_MAX : lo * t;
    *r1 = hi > UINT64_MAX / t ? UINT64_MAX : hi * t;
}

/* Rule 4 per update step (exact_outspill.c): the runs recorded for the
 * tiles in the tables now, priced while their tables are there. */
static void price_step_runs(exact_walker *w)
{
    model_vec *ev = &w->os.events;
    if (!w->steps.on || !ev->n)
        return;
    uint64_t max = 0;
    for (uint64_t i = 0; i < ev->n; i++)
        max = ev->v[i] > max ? ev->v[i] : max;
    tessel_sort_u64_inplace(ev->v, ev->n, max);
    exact_outspill_price_runs(w->e, w->bd, &w->steps, ev);
    ev->n = 0;
}

/* Before a chunk of outermost coordinates [lo, hi): the tables of those
 * rows. Every tile of the previous range has had its last visit (its
 * outermost coordinate is below lo), so its open run ends now, as the next
 * key would have ended it, and its state goes. */
static int rows_switch(stream *s, uint64_t lo, uint64_t hi)
{
    if (!s->rows || (lo == s->lo && hi == s->hi))
        return TESSEL_OK;
    exact_walker *w = &s->w;
    int rc = exact_walker_flush(w);
    if (!rc)
        price_step_runs(w);
    exact_live_free(s->e, &w->os.lv);
    uint64_t r0, r1;
    rows_of(s->bd, lo, hi, &r0, &r1);
    if (!rc)
        rc = exact_output_rows(s->e, s->rows_bd, s->rows, out_mode(s->e, s->bd), r0, r1,
                               s->macs);
    if (!rc)
        rows_totals(s->rows_bd);
    if (!rc)
        rc = exact_live_init(s->e, s->bd, &w->os.lv);
    s->lo = lo;
    s->hi = hi;
    return rc;
}

/* Generates, sorts and walks the keys of one chunk. */
static int walk_chunk(stream *s, exact_range *rng)
{
    int all_effectual = 1;
    s->keys.n = 0;
    int rc = exact_gen_iterations(s->e, s->bd, &s->keys, &all_effectual, rng);
    s->pushed += rng->pushed;
    if (!rc && s->pushed > max_iterations(s->e))
        rc = exact_too_many(s->e, s->bd);
    if (!rc)
        rc = exact_walker_keys(&s->w, s->keys.v, s->keys.n);
    return rc;
}

/* The chunks in key order: consecutive outermost values while their
 * bound fits the budget; a value above it alone, split by key range. */
static int walk_chunks(stream *s, const uint64_t *hist, uint64_t radix0, const exact_range *proto,
                       uint64_t div0, uint64_t inner, uint64_t budget)
{
    int rc = TESSEL_OK;
    for (uint64_t v = 0; v < radix0 && !rc;) {
        exact_range rng = *proto;
        rng.lo = v * div0;
        if (hist[v] > budget) {
            rc = rows_switch(s, v * div0, (v + 1) * div0);
            uint64_t parts = hist[v] / budget + 1;
            parts = parts < inner ? parts : inner;
            uint64_t step = inner / parts, rem = inner % parts;
            rng.hi = (v + 1) * div0;
            for (uint64_t p = 0; p < parts && !rc; p++) {
                rng.klo = v * inner + p * step + (p < rem ? p : rem);
                rng.khi = rng.klo + step + (p < rem);
                rc = walk_chunk(s, &rng);
            }
            v++;
            continue;
        }
        uint64_t u = v, sum = 0;
        while (u < radix0 && hist[u] <= budget - sum)
            sum += hist[u++];
        rng.hi = u * div0;
        rng.klo = v * inner;
        rng.khi = u * inner;
        rc = rows_switch(s, v * div0, u * div0);
        if (!rc)
            rc = walk_chunk(s, &rng);
        v = u;
    }
    return rc;
}

/* The streaming walk of boundary bd (see the header); with rows_bd (the
 * same boundary, writable), its output tables a range of rows at a time.
 * outputs_only: a replay pricing only output tile rows [olo, ohi). */
static int walk_boundary(engine *e, const boundary *bd, boundary *rows_bd, uint64_t *macs,
                         int outputs_only, uint64_t olo, uint64_t ohi)
{
    unsigned x0 = NX;
    uint64_t div0 = 1, radix0 = 1, inner = 1, bound = 0;
    if (bd->ndigits) {
        x0 = bd->d[0].x;
        div0 = bd->d[0].div;
        radix0 = bd->d[0].radix;
        for (unsigned i = 1; i < bd->ndigits; i++)
            inner *= bd->d[i].radix;
    }
    stream s = { .e = e, .bd = bd, .keys = { .alloc = e->alloc }, .rows_bd = rows_bd,
                 .lo = UINT64_MAX, .hi = UINT64_MAX, .macs = macs };
    uint64_t *fp[NIN] = { NULL };
    exact_tile_order ord[NIN + 1];
    exact_range proto;
    memset(ord, 0, sizeof(ord));
    uint64_t *hist = tessel_alloc_array(e->alloc, radix0, sizeof(uint64_t));
    if (!hist)
        return exact_oom_step(e, "planning the walk's chunks", radix0 * sizeof(uint64_t));
    memset(hist, 0, radix0 * sizeof(uint64_t));
    int rc = plan_effectual(e, bd, x0, div0, hist, &bound);
    if (!rc && bound > max_iterations(e))
        rc = exact_too_many(e, bd);
    int all_effectual = exact_all_effectual(e, bd);
    for (unsigned i = 0; !rc && !all_effectual && i < e->nin; i++) {
        uint32_t partners = 0;
        for (unsigned p = 0; p < e->nin; p++)
            partners |= p == i ? 0 : 1u << e->in[p].spec_tensor;
        if ((exact_fill_skip_mask(e, bd->b, i) & partners) != partners)
            plan_input(e, bd, i, x0, div0, radix0, hist);
    }
    if (!rc)
        rc = input_footprints(e, bd, fp);
    if (!rc)
        rc = order_all(e, bd, x0, ord, &proto);
    if (!rc && rows_bd)
        rc = exact_output_rows_begin(e, rows_bd, &s.rows);
    if (!rc) {
        rc = exact_walker_begin(e, bd, all_effectual, 1, &s.w);
        for (unsigned i = 0; i < e->nin; i++)
            s.w.fp[i] = fp[i];
        s.w.outputs_only = outputs_only;
        s.w.os.lo = olo;
        s.w.os.hi = ohi;
        for (uint64_t v = 0; v < radix0; v++)
            s.w.total = s.w.total > UINT64_MAX - hist[v] ? UINT64_MAX : s.w.total + hist[v];
        if (!rc)
            rc = walk_chunks(&s, hist, radix0, &proto, div0, inner,
                             e->walk.chunk_keys && !outputs_only ? e->walk.chunk_keys
                                                                 : CHUNK_KEYS);
        rc = exact_walker_end(&s.w, rc);
    }
    for (unsigned i = 0; i < NIN; i++)
        tessel_dealloc(e->alloc, fp[i]);
    for (unsigned i = 0; i <= NIN; i++) {
        tessel_dealloc(e->alloc, ord[i].start);
        tessel_dealloc(e->alloc, ord[i].perm);
    }
    tessel_dealloc(e->alloc, hist);
    model_vec_free(&s.keys);
    exact_output_rows_end(e, s.rows);
    return rc;
}

int exact_walk_boundary(engine *e, const boundary *bd)
{
    if (e->walk.old_walk)
        return exact_walk_all(e, bd);
    return walk_boundary(e, bd, NULL, NULL, 0, 0, UINT64_MAX);
}

/* Table entries per range of rows: a test's small chunk budget shrinks it
 * too (256 entries per key), so small inputs replay several ranges. The
 * replays themselves take the full chunk: a chunk changes no number, and a
 * tiny one costs keys^2 / chunk per replay. */
static uint64_t range_budget(const engine *e)
{
    uint64_t c = e->walk.chunk_keys;
    return c && c < RANGE_ENTRIES / 256 ? 256 * c : RANGE_ENTRIES;
}

/* Whether some final output tile in the tables now is larger than part. */
static int table_spills(const boundary *bd, uint64_t part)
{
    const out_table *t = &bd->table[bd->ntables - 1];
    for (uint64_t o = 0; o < t->nout; o++) {
        uint64_t data, meta;
        exact_output_bytes(bd, t->key[o], UINT64_MAX, NULL, &data, &meta);
        if (data + meta > part)
            return 1;
    }
    return 0;
}

/* Whether some final output tile is larger than the output's partition
 * (rule 4), before a walk whose tables never hold every tile at once: no
 * look at the data when a fully dense tile fits, else from tables of
 * budgeted ranges of rows, dropped as they go. */
static int rows_can_spill(engine *e, boundary *bd, uint64_t budget, int *spill)
{
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    uint64_t dense = 1, data, meta, macs = 0, lo = 0, hi = 0, occ[3];
    for (unsigned m = 0; m < e->out.order; m++) {
        uint64_t t = bd->tile[e->out.x[m]];
        dense = dense > UINT64_MAX / t ? UINT64_MAX : dense * t;
        occ[m] = dense; /* a dense tile's prefixes (per-rank formats) */
    }
    if (bd->out_cost.tiled) /* tiled-csf: every nonzero alone, an upper bound */
        occ[0] = occ[1] = dense;
    exact_tile_bytes(&bd->out_cost, dense, occ, &data, &meta);
    *spill = 0;
    if (!part || data + meta <= part)
        return TESSEL_OK;
    struct out_emitter *h = NULL;
    int rc = exact_output_rows_begin(e, bd, &h);
    for (; !rc && !*spill && hi != UINT64_MAX; lo = hi) {
        rc = exact_output_rows_upto(e, bd, h, lo, budget, &hi, &macs);
        *spill = !rc && table_spills(bd, part);
    }
    exact_output_rows_end(e, h);
    for (unsigned d = 0; d < 3; d++)
        exact_table_free(e->alloc, &bd->table[d]);
    /* the walk's passes use the same row markers again */
    memset(e->mark, 0, (e->extent[e->out.x[e->out.order - 1]] + 1) * sizeof(uint64_t));
    return rc;
}

/* Whether boundary bd's output tables can be built a range of rows at a
 * time in step with the walk's chunks: the outermost loop is the output's
 * first index (or SpMSpM's column index), so a tile's visits all fall
 * inside one range. */
static int rows_eligible(const engine *e, const boundary *bd)
{
    /* a range of SpMSpM's output columns: the pass restricts B's rows */
    int cols = e->kind == TESSEL_WORKLOAD_SPMSPM && e->out.order == 2 && bd->ndigits &&
               bd->d[0].x == e->out.x[1] && e->in[1].x[1] == e->out.x[1] &&
               !(bd->b == 1 && exact_output_needs_prefixes(e)); /* rows counted once */
    return bd->ndigits && (bd->d[0].x == e->out.x[0] || cols);
}

/* Every other order (KIJ, KJI: the output's rows are revisited at every
 * step of the outermost loop): the tables of one budgeted range of output
 * rows at a time, each with the whole key stream replayed. Runs of visits
 * are the key stream's, so every replay ends them where the first walk
 * does; a replay prices only its range's tiles, and only the first walks
 * the inputs. One range (the tables fit the budget) is one walk. */
static int walk_replayed(engine *e, boundary *bd, uint64_t *macs)
{
    uint64_t budget = range_budget(e);
    uint64_t lo = 0, hi = 0, t = bd->tile[0];
    struct out_emitter *h = NULL;
    int rc = exact_output_rows_begin(e, bd, &h);
    bd->by_rows = 1;
    for (int pass = 0; !rc && lo != UINT64_MAX; pass++, lo = hi) {
        rc = exact_output_rows_upto(e, bd, h, lo, budget, &hi, macs);
        if (rc)
            break;
        rows_totals(bd);
        rc = walk_boundary(e, bd, NULL, NULL, pass > 0, lo / t,
                           hi == UINT64_MAX ? UINT64_MAX : hi / t);
    }
    exact_output_rows_end(e, h);
    return rc;
}

int exact_output_and_walk(engine *e, boundary *bd, uint64_t *macs)
{
    if (!e->walk.old_walk && e->mark) {
        int spill = 0, rc = rows_can_spill(e, bd, range_budget(e), &spill);
        bd->spill_known = 1;
        bd->spill = spill;
        if (rc || !rows_eligible(e, bd))
            return rc ? rc : walk_replayed(e, bd, macs);
        bd->by_rows = 1;
        return walk_boundary(e, bd, bd, macs, 0, 0, UINT64_MAX);
    }
    int rc = exact_build_output(e, bd, bd->out_cost.ranked || bd->out_cost.tiled, macs);
    if (rc || !bd->ntables) /* no table when building it failed */
        return rc;
    const out_table *t = &bd->table[bd->ntables - 1];
    for (uint64_t o = 0; o < t->nout; o++)
        bd->rows_nnz += t->cum[t->start[o + 1] - 1];
    return exact_walk_boundary(e, bd);
}

/* ------------------------------------------------------------------ */
/* Output runs priced as they end. */

int exact_live_init(engine *e, const boundary *bd, exact_out_live *lv)
{
    memset(lv, 0, sizeof(*lv));
    lv->empty.alloc = e->alloc;
    lv->part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    uint64_t n = bd->table[bd->ntables - 1].nout, m = n ? n : 1;
    lv->cur = tessel_alloc_array(e->alloc, m * bd->ntables, sizeof(uint64_t));
    lv->data = tessel_alloc_array(e->alloc, m, sizeof(uint64_t));
    lv->meta = tessel_alloc_array(e->alloc, m, sizeof(uint64_t));
    lv->seen = tessel_alloc_array(e->alloc, m, 1);
    if (!lv->cur || !lv->data || !lv->meta || !lv->seen)
        return exact_oom_step(e, "keeping the output tiles' state", m * (bd->ntables + 2) * 8 + m);
    memset(lv->cur, 0, m * bd->ntables * sizeof(uint64_t));
    memset(lv->seen, 0, m);
    return TESSEL_OK;
}

void exact_live_free(engine *e, exact_out_live *lv)
{
    tessel_dealloc(e->alloc, lv->cur);
    tessel_dealloc(e->alloc, lv->data);
    tessel_dealloc(e->alloc, lv->meta);
    tessel_dealloc(e->alloc, lv->seen);
    model_map_free(&lv->empty);
    memset(lv, 0, sizeof(*lv));
}

/* Row of output tile `key` in the element table, UINT64_MAX when the tile
 * has no output nonzeros. */
static uint64_t live_row(const boundary *bd, uint64_t key)
{
    return exact_table_row(&bd->table[bd->ntables - 1], key);
}

/* Output tile `key`'s bytes after reduction prefix red; *again: it was
 * written back before, with *pdata, *pmeta (rule 2's read-back). */
static int live_bytes(engine *e, const boundary *bd, exact_out_live *lv, uint64_t key,
                      uint64_t red, int writeback, int *again, uint64_t *pdata, uint64_t *pmeta,
                      uint64_t *data, uint64_t *meta)
{
    uint64_t row = live_row(bd, key);
    if (row == UINT64_MAX) { /* an empty tile: its bytes never change */
        exact_output_bytes(bd, key, red, NULL, data, meta);
        *pdata = *data;
        *pmeta = *meta;
        if (!writeback)
            return TESSEL_OK;
        uint64_t *slot = model_map_slot(&lv->empty, key, 0);
        if (!slot)
            return exact_oom_step(e, "keeping the output tiles' state",
                                  model_map_grow_bytes(&lv->empty));
        *again = *slot != 0;
        *slot = 1;
        return TESSEL_OK;
    }
    *again = lv->seen[row];
    *pdata = lv->data[row];
    *pmeta = lv->meta[row];
    exact_output_bytes(bd, key, red, &lv->cur[row * bd->ntables], data, meta);
    if (writeback) {
        lv->seen[row] = 1;
        lv->data[row] = *data;
        lv->meta[row] = *meta;
    }
    return TESSEL_OK;
}

/* A run of output tile `key` ends at reduction key red: written back, and
 * read back first when an earlier run wrote it (rule 2; price_output). */
int exact_live_writeback(engine *e, const boundary *bd, exact_out_live *lv, uint64_t key,
                         uint64_t red)
{
    tessel_traffic *tr = &e->res->traffic[bd->b][0];
    uint64_t part = lv->part;
    uint64_t pdata, pmeta, data, meta;
    int again = 0;
    if (live_bytes(e, bd, lv, key, red, 1, &again, &pdata, &pmeta, &data, &meta))
        return TESSEL_ENOMEM;
    if (again) {
        tr->updates++;
        tr->in_data += pdata;
        tr->in_metadata += pmeta;
    }
    tr->writebacks++;
    tr->out_data += data;
    tr->out_metadata += meta;
    exact_note_tile(tr, part, data + meta);
    if (part && data + meta > part)
        tr->overflow_tiles++;
    return TESSEL_OK;
}

/* A visit of output tile `key` that does not end its run (rule 4;
 * price_spills). */
int exact_live_spill(engine *e, const boundary *bd, exact_out_live *lv, uint64_t key,
                     uint64_t red)
{
    tessel_traffic *tr = &e->res->traffic[bd->b][0];
    uint64_t part = lv->part;
    uint64_t pdata, pmeta, data, meta;
    int again = 0;
    if (live_bytes(e, bd, lv, key, red, 0, &again, &pdata, &pmeta, &data, &meta))
        return TESSEL_ENOMEM;
    exact_spill_charge(tr, data, meta, part);
    return TESSEL_OK;
}

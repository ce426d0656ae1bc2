/* Rule 4 for inputs in the stat estimator, per read of the child level
 * (docs/semantics.md rule 4; Tailors §4 and §6.2): at a level b with a
 * buffer level below it, the bumped part S - P of an overbooked tile T is
 * fetched from the parent again at every read of T by level b+1 during
 * T's residency, not once per level-b use.
 *
 * The closed sums already know, per tile, what the exact walk counts per
 * tile: T's fills F and uses U at level b (stat_spmspm.c at boundary 1,
 * stat_nested.c's runs below), and at boundary b+1 the fills of each of
 * T's sub-tiles. So the quantity exact_bumped.c takes from the walk, R =
 * the nonzeros level b+1 fills from T over the run divided by T's
 * nonzeros, is here the sum over T's sub-tiles t of fills(t) x nnz(t) /
 * nnz(T): the expected whole reads of T by the child, from the same
 * per-tile occupancies the fills are priced with. The tiles go into the
 * engine's tables of exact_bumped.c (ob_table, keyed by level-b tile
 * coordinates) and exact_ob_settle replaces the per-use charge
 * (U - F)(S - P) the closed sums made with max(0, R - F)(S - P), the same
 * arithmetic as exact. Cost: one table look-up per non-empty tile of
 * level b+1, and only where level b holds overbooked tiles. */
#include <math.h>
#include <string.h>

#include "stat_bumped.h"
#include "stat_inspill.h"
#include "stat_tiledfmt.h"

uint64_t stat_ob_pack(const engine *e, unsigned l, unsigned i, uint64_t m0, uint64_t m1)
{
    unsigned x1 = e->in[i].x[1];
    uint64_t e1 = exact_level_edge(e, l, x1), n1 = (e->extent[x1] + e1 - 1) / e1;
    return m0 * (n1 ? n1 : 1) + m1;
}

static uint64_t whole(double v)
{
    return v > 0 ? (uint64_t)llround(v) : 0;
}

/* The slot of the level-(b-1) overbooked tile holding the sub-tile,
 * UINT64_MAX when it is not recorded. */
static uint64_t parent_slot(const engine *e, unsigned b, unsigned i, uint64_t m0, uint64_t m1)
{
    unsigned pl = b - 1;
    const ob_table *t = &e->ob[pl % 2][i];
    if (pl == 0 || !t->n)
        return UINT64_MAX;
    unsigned x0 = e->in[i].x[0], x1 = e->in[i].x[1];
    uint64_t p0 = m0 * exact_level_edge(e, b, x0) / exact_level_edge(e, pl, x0);
    uint64_t p1 = m1 * exact_level_edge(e, b, x1) / exact_level_edge(e, pl, x1);
    return model_map_find(&t->index, stat_ob_pack(e, pl, i, p0, p1));
}

/* The sub-tile's fills as reads of its level-(b-1) tile. */
static void child_reads(engine *e, unsigned b, unsigned i, uint64_t m0, uint64_t m1,
                        uint64_t nnz, double fills)
{
    uint64_t s = fills > 0 ? parent_slot(e, b, i, m0, m1) : UINT64_MAX;
    if (s != UINT64_MAX)
        e->ob[(b - 1) % 2][i].t[s].child_nnz += whole(fills * (double)nnz);
}

int stat_ob_tile(engine *e, unsigned b, unsigned i, uint64_t m0, uint64_t m1, uint64_t nnz,
                 price pr, uint64_t part, double fills, double uses)
{
    child_reads(e, b, i, m0, m1, nnz, fills);
    double bytes = pr.data + pr.meta;
    /* the cheap tests first: most tiles fit, and the compute's read
     * pattern (an order search) is the same for every tile of a level */
    if (!part || bytes <= (double)part || fills <= 0)
        return TESSEL_OK;
    int compute = stat_inspill_on(e, b) &&
                  (exact_inspill_reads(e, b, i) != EXACT_READS_ONCE || b >= 2);
    if (b + 1 >= e->nlev && !compute)
        return TESSEL_OK;
    ob_table *t = &e->ob[b % 2][i];
    t->index.alloc = e->alloc;
    uint64_t *slot = model_map_slot(&t->index, stat_ob_pack(e, b, i, m0, m1), t->n);
    if (!slot)
        return TESSEL_ENOMEM;
    if (*slot == t->n) {
        if (t->n == t->cap) {
            uint64_t cap = t->cap ? 2 * t->cap : 64;
            ob_tile *v = tessel_realloc_array(e->alloc, t->t, cap, sizeof(ob_tile));
            if (!v)
                return TESSEL_ENOMEM;
            t->t = v;
            t->cap = cap;
        }
        ob_tile *n = &t->t[t->n++];
        memset(n, 0, sizeof(*n));
        n->nnz = nnz;
        n->bytes = (uint64_t)bytes;
        n->meta = (uint64_t)pr.meta;
        n->part = part;
        n->band = i ? m0 : m1; /* A (i, k), B (k, j) */
        n->up = parent_slot(e, b, i, m0, m1);
    }
    /* the closed sums charged S - P on every use after a fill */
    ob_tile *n = &t->t[*slot];
    uint64_t f = whole(fills), u = whole(uses);
    n->fills += f;
    n->uses += u > f ? u : f;
    return TESSEL_OK;
}

int stat_ob_may_overflow(const stat_grid *g, const tile_cost *cost, uint64_t part)
{
    pricer pr = stat_pricer_of(cost);
    if (!part)
        return 0; /* unbounded: stat_ob_tile records nothing */
    if (!(pr.per >= 0))
        return 1;
    if (g->occ && stat_pricer_needs_rows(&pr)) { /* not monotone in nnz: every tile */
        for (uint64_t n = 0; n < g->n; n++) {
            price tp = stat_grid_price(&pr, g, n);
            if (tp.data + tp.meta > (double)part)
                return 1;
        }
        return 0;
    }
    uint64_t most = 0;
    for (uint64_t n = 0; n < g->n; n++)
        if (g->nnz[n] > most)
            most = g->nnz[n];
    price top = stat_fast_price(&pr, most);
    return top.data + top.meta > (double)part;
}

int stat_ob_level1(engine *e, const stat_problem *p, int mirror, double *const fills[2])
{
    if (!fills[0] && !fills[1])
        return TESSEL_OK; /* no tile kept: none can overflow (keep_tile_fills) */
    const stat_grid *g[2] = { &p->a, &p->b };
    const tile_cost *cost[2] = { &p->cost_a, &p->cost_b };
    uint64_t part[2] = { p->part_a, p->part_b };
    /* uses: an A tile (i, k) per B tile of row k, a B tile (k, j) per A
     * tile of column k */
    uint64_t *a_col = stat_zeroed(p->alloc, p->ext_k, sizeof(uint64_t));
    if (!a_col)
        return TESSEL_ENOMEM;
    for (uint64_t n = 0; n < p->a.n; n++)
        a_col[p->a.col[n]]++;
    int rc = TESSEL_OK;
    for (unsigned q = 0; q < 2 && !rc; q++) {
        if (!part[q] || !fills[q])
            continue;
        pricer pr = stat_pricer_of(cost[q]);
        unsigned op = mirror ? 1 - q : q;
        for (uint64_t r = 0; r < g[q]->rows && !rc; r++)
            for (uint64_t n = g[q]->ptr[r]; n < g[q]->ptr[r + 1] && !rc; n++) {
                uint64_t c = g[q]->col[n], k = q ? r : c;
                double uses = q ? (double)a_col[k]
                                : (k < p->b.rows ? (double)(p->b.ptr[k + 1] - p->b.ptr[k]) : 0);
                if (p->mode[q] == STAT_MODE_READ) /* every free-index value (stat_spmspm.c) */
                    uses = (double)(q ? p->ext_i : p->ext_j);
                uint64_t m0 = mirror ? c : r, m1 = mirror ? r : c;
                rc = stat_ob_tile(e, 1, op, m0, m1, g[q]->nnz[n], stat_grid_price(&pr, g[q], n),
                                  part[q], fills[q] ? fills[q][n] : 0, uses);
            }
    }
    tessel_dealloc(p->alloc, a_col);
    return rc;
}

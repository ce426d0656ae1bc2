/* D2T2's tile search (d2t2 §5.2): start from the conservative square tile
 * T (the largest whose worst tile fits, from the statistics), reshape it
 * with a reorder factor RF (eq. 21: uncontracted edges T x RF, contracted
 * edges T / RF, so every shape keeps T's size), then grow each input's
 * innermost index by its TileFactor = partition / footprint of MaxTile
 * (eq. 22), shrinking the growth while the worst tile would not fit. Every
 * candidate (RF in 1/16 .. 16 by powers of two, with and without the
 * growth) whose worst tiles fit is priced by the stat estimator; the least
 * traffic across the level's boundary wins. tessel adds two things the
 * paper leaves open: the extreme shapes (corners()) and a geometric
 * descent from the best (refine()). Levels are searched from the
 * innermost out by default (the paper sizes one buffer, the PE buffer,
 * d2t2 §6.1), each candidate priced on its own boundary; outermost
 * first (mapping.strategy_options.order) the inner levels' candidates
 * nest in the outer tiles and are priced on the whole nest. */
#include <math.h>
#include <string.h>

#include "strategy_internal.h"

/* The shapes priced so far in one decision, per level. */
#define D2T2_MEMO 4096u
struct d2t2_memo {
    unsigned n;
    unsigned level[D2T2_MEMO];
    strat_tiles tiles[D2T2_MEMO];
    double bytes[D2T2_MEMO], dram[D2T2_MEMO];
    /* 1: bytes is only the price without Z's spill, a lower bound that
     * exceeded the level's best then (price(): the shape cannot win) */
    unsigned char partial[D2T2_MEMO];
};
typedef struct d2t2_memo d2t2_memo;

static int contracted(const strat_ctx *c, unsigned x)
{
    const tessel_spec_tensor *z = &c->spec->workload.tensor[0];
    for (unsigned m = 0; m < z->rank; m++)
        if (z->index[m] == x)
            return 0;
    return 1;
}

/* Position of index x in level l's loop order (larger = inner). */
static unsigned order_pos(const strat_ctx *c, unsigned l, unsigned x)
{
    const tessel_spec_level *lv = &c->spec->level[l];
    for (unsigned p = 0; p < c->nidx; p++)
        if (lv->order[p] == x)
            return p;
    return x;
}

static uint64_t round_edge(const strat_ctx *c, unsigned x, double want, uint64_t gran)
{
    uint64_t g = gran ? gran : 1;
    if (want >= (double)c->extent[x])
        return 0;
    uint64_t e = (uint64_t)(want / (double)g) * g;
    if (e < g)
        e = g;
    return e >= c->extent[x] ? 0 : e;
}

static uint64_t edge_of(const strat_ctx *c, const strat_tiles *t, unsigned x)
{
    return t->t[x] ? t->t[x] : c->extent[x];
}

/* eq. 22: grow each input's innermost index by its TileFactor (the
 * smallest over the inputs sharing it), halving until the worst tiles fit. */
static int grow(strat_ctx *c, unsigned l, const uint64_t *gran, strat_tiles *t, int *changed)
{
    double factor[STRAT_NX];
    for (unsigned x = 0; x < c->nidx; x++)
        factor[x] = 0;
    for (unsigned i = 0; i < c->nin; i++) {
        const strat_input *in = &c->in[i];
        uint64_t part = strat_partition(c, l, in->tensor), shape[3], mx;
        if (!part || !in->order)
            continue;
        strat_shape(c, in, t, shape);
        int rc = strat_worst_occupancy(c, in, shape, WORST_STATS, &mx);
        if (rc)
            return rc;
        double tf = floor((double)part / (double)strat_tile_bytes(c, l, in, shape, mx));
        int inner = -1;
        for (unsigned m = 0; m < in->order; m++)
            if (in->index[m] >= 0 &&
                (inner < 0 || order_pos(c, l, (unsigned)in->index[m]) > order_pos(c, l, (unsigned)inner)))
                inner = in->index[m];
        if (inner >= 0 && (factor[inner] == 0 || tf < factor[inner]))
            factor[inner] = tf;
    }
    *changed = 0;
    for (int halvings = 0; halvings < 12; halvings++) {
        strat_tiles g = *t;
        int any = 0;
        for (unsigned x = 0; x < c->nidx; x++)
            if (factor[x] > 1) {
                g.t[x] = round_edge(c, x, (double)edge_of(c, t, x) * factor[x], gran[x]);
                any |= g.t[x] != t->t[x];
            }
        if (!any)
            return TESSEL_OK;
        int fits = 0, rc = strat_worst_fits(c, l, &g, WORST_STATS, &fits);
        if (rc)
            return rc;
        if (fits) {
            *t = g;
            *changed = 1;
            return TESSEL_OK;
        }
        for (unsigned x = 0; x < c->nidx; x++)
            factor[x] = factor[x] > 1 ? floor(factor[x] / 2) : factor[x];
    }
    return TESSEL_OK;
}

/* Level l's boundary alone: the spec cut to the backing store and level l
 * (levels between them hold whole modes while the search runs innermost
 * first, and the levels inside l do not change l's fills), so that every
 * candidate is priced by the one-level closed sums (stat_spmspm.c) and
 * not by the nested form, which costs a hundred times more per point. */
static int cut_to(const strat_ctx *c, const tessel_strategy_choice *ch, unsigned l,
                  tessel_spec *spec)
{
    tessel_strategy_apply(c->spec, ch, spec);
    for (unsigned o = 1; o < l; o++)
        if (spec->level[o].capacity && (ch->levels >> o & 1u))
            for (unsigned x = 0; x < c->nidx; x++)
                if (spec->level[o].tile[x] && spec->level[o].tile[x] < c->extent[x])
                    return 0; /* an outer level decided first: price the nest */
    if (l > 1)
        spec->level[1] = spec->level[l];
    spec->nlevels = 2;
    return 1;
}

/* Whether tiles t of level l were priced already. */
static int memo_has(const strat_ctx *c, unsigned l, const strat_tiles *t)
{
    const d2t2_memo *m = c->memo;
    for (unsigned k = 0; m && k < m->n; k++)
        if (m->level[k] == l && !memcmp(m->tiles[k].t, t->t, c->nidx * sizeof(t->t[0])))
            return 1;
    return 0;
}

/* The stat estimator's bytes across boundary `at` of spec, and DRAM's. */
static int eval_bytes(strat_ctx *c, const tessel_spec *spec, unsigned at, double *bytes,
                      double *dram)
{
    tessel_result r;
    int rc = tessel_model_stat_eval_cached(spec, c->stats, NULL, &r, c->diag);
    if (rc)
        return rc;
    double b = 0;
    for (unsigned k = 0; k < r.ntensors; k++)
        b += (double)r.traffic[at][k].data_bytes + (double)r.traffic[at][k].metadata_bytes;
    *bytes = b;
    *dram = (double)r.dram_bytes;
    return TESSEL_OK;
}

/* The price of one-level spec without rule 4's output spill: Z's
 * partition made unbounded, every other count unchanged, so that it is a
 * lower bound of the price (the spill only adds bytes that move out and
 * back in). It skips the estimator's costliest pass, the output sample's
 * spill (stat_spmspm_out.c), on shapes whose price without it already
 * exceeds the best; *open 1 when that lower bound was taken. */
static int price_open(strat_ctx *c, unsigned l, const strat_tiles *t, const tessel_spec *spec,
                      double above, double *bytes, double *dram, int *open)
{
    *open = 0;
    uint64_t zpart = strat_partition(c, l, 0);
    if (isinf(above) || !zpart || strat_output_dense_bytes(c, l, t) <= zpart)
        return TESSEL_OK; /* the best is not known yet, or Z's tiles cannot spill */
    tessel_spec unbounded = *spec;
    unbounded.level[1].tensor[0].partition_bytes = UINT64_C(1) << 62;
    int rc = eval_bytes(c, &unbounded, 1, bytes, dram);
    if (!rc)
        *open = *bytes > above;
    return rc;
}

/* Bytes across level l's boundary (with level l - 1) under tiles t;
 * every shape is priced once (the RF family, the corners and the line
 * searches revisit shapes). A shape whose price cannot be at most `above`
 * (the best so far, INFINITY when none) may get only a lower bound above
 * it (price_open), which is all the search needs of a shape that loses. */
static int price(strat_ctx *c, tessel_strategy_choice *ch, unsigned l, const strat_tiles *t,
                 double above, double *bytes, double *dram)
{
    d2t2_memo *m = c->memo;
    unsigned at_memo = m ? m->n : 0;
    for (unsigned k = 0; m && k < m->n; k++)
        /* the first nidx edges only: candidates leave the rest unset */
        if (m->level[k] == l && !memcmp(m->tiles[k].t, t->t, c->nidx * sizeof(t->t[0]))) {
            *bytes = m->bytes[k];
            *dram = m->dram[k];
            if (!m->partial[k] || *bytes > above)
                return TESSEL_OK;
            at_memo = k; /* a lower bound no longer enough: priced now */
            break;
        }
    tessel_strategy_choice trial = *ch;
    memcpy(trial.tile[l], t->t, sizeof(trial.tile[l]));
    trial.levels |= 1u << l;
    /* outer levels not searched yet hold whole modes, so that tiles nest */
    unsigned levels[TESSEL_SPEC_MAX_LEVELS], n = strat_levels(c, levels);
    for (unsigned i = 0; i < n; i++)
        if (levels[i] < l && !(ch->levels >> levels[i] & 1u)) {
            memset(trial.tile[levels[i]], 0, sizeof(trial.tile[0]));
            trial.levels |= 1u << levels[i];
        }
    tessel_spec spec;
    unsigned at = l;
    int open = 0, rc = TESSEL_OK;
    if (cut_to(c, &trial, l, &spec)) {
        at = 1;
        rc = price_open(c, l, t, &spec, above, bytes, dram, &open);
    } else {
        tessel_strategy_apply(c->spec, &trial, &spec);
    }
    if (!rc && !open)
        rc = eval_bytes(c, &spec, at, bytes, dram);
    if (rc)
        return rc;
    if (m && at_memo < D2T2_MEMO) {
        m->level[at_memo] = l;
        m->tiles[at_memo] = *t;
        m->bytes[at_memo] = *bytes;
        m->dram[at_memo] = *dram;
        m->partial[at_memo] = (unsigned char)open;
        if (at_memo == m->n)
            m->n++;
    }
    return TESSEL_OK;
}

int strat_d2t2_price(strat_ctx *c, unsigned l, const strat_tiles *t, double *bytes)
{
    tessel_strategy_choice none;
    memset(&none, 0, sizeof(none));
    struct d2t2_memo *memo = c->memo;
    double dram;
    c->memo = NULL; /* priced now, in full */
    int rc = price(c, &none, l, t, INFINITY, bytes, &dram);
    c->memo = memo;
    return rc;
}

/* The shapes of eq. 21 divide the conservative edge T by up to 16, so the
 * base grid must be that fine: statistics the strategy collects itself
 * are on T / 16 (at least 4) when the grid that fits (strat_need_stats,
 * c's grids now) is coarser. */
int strat_d2t2_base_edge(strat_ctx *c, uint64_t *edge)
{
    unsigned levels[TESSEL_SPEC_MAX_LEVELS];
    if (!c->in[0].base || !strat_levels(c, levels))
        return TESSEL_OK;
    uint64_t gran[STRAT_NX];
    double square[STRAT_NX];
    tessel_strategy_choice none;
    memset(&none, 0, sizeof(none));
    strat_level_granules(c, levels[0], 1, &none, gran);
    for (unsigned x = 0; x < c->nidx; x++)
        square[x] = 1;
    strat_tiles t;
    uint64_t seen = 0;
    int rc = strat_uniform_level(c, levels[0], square, gran, WORST_STATS, &t, &seen);
    if (rc)
        return rc;
    uint64_t conservative = UINT64_MAX;
    for (unsigned x = 0; x < c->nidx; x++)
        if (edge_of(c, &t, x) < conservative)
            conservative = edge_of(c, &t, x);
    uint64_t want = 4;
    while (want * 2 <= conservative / 16)
        want *= 2;
    if (want < c->in[0].base->tile[0] && want < *edge)
        *edge = want;
    return TESSEL_OK;
}

/* Whether shape, nested in the enclosing level's tiles (outer first) as
 * *t, has worst tiles that fit: a candidate (counted). */
static int admit(strat_ctx *c, unsigned l, const strat_tiles *shape, tessel_strategy_choice *ch,
                 strat_tiles *t, int *fits)
{
    *t = *shape;
    strat_nest(c, t);
    int rc = strat_worst_fits(c, l, t, WORST_STATS, fits);
    if (!rc && *fits)
        ch->candidates++;
    return rc;
}

/* Prices t when its worst tiles fit; keeps it when it beats *best. */
static int consider(strat_ctx *c, unsigned l, const strat_tiles *shape,
                    tessel_strategy_choice *ch, strat_tiles *winner, double *best,
                    double *best_dram)
{
    strat_tiles nested, *t = &nested;
    int fits = 0, rc = admit(c, l, shape, ch, t, &fits);
    if (rc || !fits)
        return rc;
    double bytes, dram, bound = 0;
    /* a shape that cannot beat the best is not priced (d2t2_bound.c) */
    if (!isinf(*best) && !memo_has(c, l, t) && (rc = d2t2_bound(c, l, t, &bound)))
        return rc;
    if (bound > *best)
        return TESSEL_OK;
    if ((rc = price(c, ch, l, t, *best, &bytes, &dram)))
        return rc;
    if (bytes < *best) {
        *best = bytes;
        *best_dram = dram;
        *winner = *t;
    }
    return TESSEL_OK;
}

/* The shapes of eq. 21 and the corners, gathered before any is priced
 * (none depends on the best so far) and priced in ascending order of
 * their lower bound (d2t2_bound.c): the best shape tends to come early,
 * so the bound rules out more of the rest, and the first shape whose
 * bound exceeds the best ends the search. The winner is the one the
 * shapes' own order gives (least bytes, the earlier shape on a tie), since
 * a shape is skipped only when its bound, hence its price, exceeds the
 * best. */
typedef struct d2t2_queue {
    unsigned n, cap;
    strat_tiles *t;
    double *bound;
    unsigned *rank; /* the shapes' indices by ascending bound */
} d2t2_queue;

static void queue_free(const strat_ctx *c, d2t2_queue *q)
{
    tessel_dealloc(c->alloc, q->t);
    tessel_dealloc(c->alloc, q->bound);
    tessel_dealloc(c->alloc, q->rank);
}

/* Adds shape to q when it fits and is not in q already (a repeat cannot
 * win: the same bytes, later). */
static int enqueue(strat_ctx *c, unsigned l, const strat_tiles *shape, tessel_strategy_choice *ch,
                   d2t2_queue *q)
{
    strat_tiles t;
    int fits = 0, rc = admit(c, l, shape, ch, &t, &fits);
    if (rc || !fits)
        return rc;
    for (unsigned k = 0; k < q->n; k++)
        if (!memcmp(q->t[k].t, t.t, c->nidx * sizeof(t.t[0])))
            return TESSEL_OK;
    if (q->n == q->cap)
        return TESSEL_ENOMEM; /* sized by the caller */
    q->t[q->n++] = t;
    return TESSEL_OK;
}

static int by_bound(const d2t2_queue *q, unsigned a, unsigned b)
{
    return q->bound[a] < q->bound[b] || (q->bound[a] == q->bound[b] && a < b);
}

/* Prices q's shapes in ascending bound (insertion sort: a few hundred). */
static int queue_price(strat_ctx *c, unsigned l, d2t2_queue *q, tessel_strategy_choice *ch,
                       strat_tiles *winner, double *best, double *best_dram)
{
    for (unsigned k = 0; k < q->n; k++) {
        int rc = memo_has(c, l, &q->t[k]) ? (q->bound[k] = 0, TESSEL_OK)
                                          : d2t2_bound(c, l, &q->t[k], &q->bound[k]);
        if (rc)
            return rc;
        unsigned j = k;
        for (; j > 0 && by_bound(q, k, q->rank[j - 1]); j--)
            q->rank[j] = q->rank[j - 1];
        q->rank[j] = k;
    }
    unsigned at = q->n; /* the winner's index in q (none yet) */
    for (unsigned r = 0; r < q->n; r++) {
        unsigned k = q->rank[r];
        if (q->bound[k] > *best)
            break; /* so are the rest's */
        double bytes, dram;
        int rc = price(c, ch, l, &q->t[k], *best, &bytes, &dram);
        if (rc)
            return rc;
        if (bytes < *best || (bytes == *best && k < at)) {
            *best = bytes;
            *best_dram = dram;
            *winner = q->t[k];
            at = k;
        }
    }
    return TESSEL_OK;
}

/* tessel's addition to the RF family: a geometric search from the best
 * shape found, one index's edge at a time, keeping the worst tiles inside
 * their partitions (eq. 21 ties the edges together; the best shapes of
 * skewed matrices are often not in that family, e.g. a long output tile
 * over a short reduction). */
static int refine(strat_ctx *c, unsigned l, const uint64_t *gran, tessel_strategy_choice *ch,
                  strat_tiles *winner, double *best, double *best_dram)
{
    /* line searches: one index at a time over its edge times 2^-8 .. 2^8
     * and the whole extent, until a sweep over the indices gains nothing */
    for (int sweep = 0, improved = 1; improved && sweep < 4; sweep++) {
        improved = 0;
        for (unsigned x = 0; x < c->nidx; x++) {
            strat_tiles from = *winner;
            double edge = (double)edge_of(c, &from, x), before = *best;
            for (int e = -8; e <= 9; e++) {
                strat_tiles t = from;
                if (e == 9)
                    t.t[x] = 0;
                else if (e == 0 || edge * ldexp(1.0, e) < (double)gran[x])
                    continue;
                else
                    t.t[x] = round_edge(c, x, edge * ldexp(1.0, e), gran[x]);
                if (t.t[x] == from.t[x])
                    continue;
                int rc = consider(c, l, &t, ch, winner, best, best_dram);
                if (rc)
                    return rc;
            }
            improved |= *best < before;
        }
    }
    return TESSEL_OK;
}

/* tessel's addition: the extreme shapes, every index at the smallest
 * edge, the conservative edge T, 4 T, 16 T or its whole extent (5^n
 * candidates, those whose worst tiles fit). Skewed matrices favour long, thin tiles (a row
 * panel of the output over a short reduction) that neither eq. 21 nor a
 * local descent from the square reaches. */
static int corners(strat_ctx *c, unsigned l, const uint64_t *gran, const strat_tiles *square,
                   tessel_strategy_choice *ch, d2t2_queue *q)
{
    static const double scale[] = { 0, 1, 4, 16 }; /* 0: the smallest edge */
    unsigned n = c->nidx, total = 1;
    for (unsigned x = 0; x < n; x++)
        total *= 5;
    for (unsigned k = 0; k < total && total <= 15625; k++) {
        strat_tiles t;
        memset(&t, 0, sizeof(t));
        for (unsigned x = 0, code = k; x < n; x++, code /= 5) {
            unsigned which = code % 5;
            double edge = (double)edge_of(c, square, x);
            t.t[x] = which == 4 ? 0
                   : round_edge(c, x, which ? edge * scale[which] : (double)gran[x], gran[x]);
        }
        int rc = enqueue(c, l, &t, ch, q);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* The shapes of eq. 21 (RF 1/16 .. 16, each also grown by eq. 22) and
 * the corners into q, unpriced. */
static int gather(strat_ctx *c, unsigned l, const uint64_t *gran, const strat_tiles *base,
                  tessel_strategy_choice *ch, d2t2_queue *q)
{
    for (int e = -4; e <= 4; e++) {
        double rf = ldexp(1.0, e);
        strat_tiles t;
        int valid = 1, rc;
        for (unsigned x = 0; x < c->nidx; x++) {
            double edge = (double)edge_of(c, base, x);
            double want = contracted(c, x) ? edge / rf : edge * rf;
            if (want < (double)gran[x])
                valid = 0;
            t.t[x] = round_edge(c, x, want, gran[x]);
        }
        if (!valid)
            continue;
        if ((rc = enqueue(c, l, &t, ch, q)))
            return rc;
        int changed = 0;
        if ((rc = grow(c, l, gran, &t, &changed)))
            return rc;
        if (changed && (rc = enqueue(c, l, &t, ch, q)))
            return rc;
    }
    return corners(c, l, gran, base, ch, q);
}

static int search_level(strat_ctx *c, unsigned l, tessel_strategy_choice *ch)
{
    uint64_t gran[STRAT_NX];
    double square[STRAT_NX];
    strat_level_granules(c, l, 1, ch, gran);
    for (unsigned x = 0; x < c->nidx; x++)
        square[x] = 1;
    strat_tiles base;
    int rc = strat_uniform_level(c, l, square, gran, WORST_STATS, &base, &ch->candidates);
    if (rc)
        return rc;
    double best = INFINITY, best_dram = 0;
    strat_tiles winner = base;
    d2t2_queue q;
    memset(&q, 0, sizeof(q));
    unsigned total = 1; /* the corners, as corners() counts them */
    for (unsigned x = 0; x < c->nidx; x++)
        total *= 5;
    q.cap = 18 + (total <= 15625 ? total : 0); /* eq. 21's nine factors, each grown */
    q.t = tessel_alloc_array(c->alloc, q.cap, sizeof(*q.t));
    q.bound = tessel_alloc_array(c->alloc, q.cap, sizeof(*q.bound));
    q.rank = tessel_alloc_array(c->alloc, q.cap, sizeof(*q.rank));
    rc = q.t && q.bound && q.rank ? TESSEL_OK : TESSEL_ENOMEM;
    if (!rc)
        rc = gather(c, l, gran, &base, ch, &q);
    if (!rc)
        rc = queue_price(c, l, &q, ch, &winner, &best, &best_dram);
    queue_free(c, &q);
    if (rc)
        return rc;
    if ((rc = refine(c, l, gran, ch, &winner, &best, &best_dram)))
        return rc;
    if (isinf(best)) { /* nothing fits: the smallest square, overbooked */
        ch->candidates++;
        if ((rc = price(c, ch, l, &winner, INFINITY, &best, &best_dram)))
            return rc;
    }
    memcpy(ch->tile[l], winner.t, sizeof(ch->tile[l]));
    ch->levels |= 1u << l;
    ch->predicted_dram_bytes = best_dram;
    return TESSEL_OK;
}

int strat_d2t2(strat_ctx *c, tessel_strategy_choice *out)
{
    int rc = strat_need_stats(c); /* on the grid strat_d2t2_base_edge asks */
    if (rc)
        return rc;
    unsigned levels[TESSEL_SPEC_MAX_LEVELS];
    unsigned n = strat_levels(c, levels);
    c->memo = tessel_alloc(c->alloc, sizeof(*c->memo)); /* NULL: every shape priced */
    if (c->memo)
        c->memo->n = 0;
    for (unsigned i = 0; i < n && !rc; i++)
        rc = search_level(c, levels[i], out);
    tessel_dealloc(c->alloc, c->memo);
    c->memo = NULL;
    d2t2_bound_forget(c);
    return rc;
}

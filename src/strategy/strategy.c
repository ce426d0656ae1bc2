/* Tiling strategies: dispatch, the inputs as the strategies see them,
 * tile footprints, and what a choice achieved (overbooking rate, buffer
 * utilisation). The strategies themselves are in uniform.c, swiftiles.c,
 * d2t2.c and module drt. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "strategy_internal.h"

static const char *const strategy_names[TESSEL_STRATEGY_COUNT] = {
    "fixed", "conservative", "prescient", "swiftiles", "drt", "d2t2"
};

int tessel_strategy_from_name(const char *name)
{
    for (unsigned k = 0; name && k < TESSEL_STRATEGY_COUNT; k++)
        if (strcmp(name, strategy_names[k]) == 0)
            return (int)k;
    return -1;
}

const char *tessel_strategy_name(tessel_strategy_kind k)
{
    return (unsigned)k < TESSEL_STRATEGY_COUNT ? strategy_names[k] : "?";
}

int tessel_strategy_is_fixed(const tessel_spec *spec)
{
    return !spec->strategy.name[0] || strcmp(spec->strategy.name, TESSEL_SPEC_STRATEGY_FIXED) == 0;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the calling thread (the decision's own, whatever else runs). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* The inputs. */

static void input_from_data(strat_ctx *c, strat_input *in, const tessel_workload_data *w)
{
    const tessel_spec_tensor *st = &c->spec->workload.tensor[in->tensor];
    const tessel_tensor *t = w->tensor[in->tensor];
    in->data = t;
    in->order = st->rank;
    for (unsigned m = 0; m < st->rank && m < 3; m++) {
        in->index[m] = (int)st->index[m];
        in->dims[m] = w->extent[st->index[m]];
    }
    in->nnz = t ? t->nnz : 0;
}

static void input_from_grid(strat_input *in, const tessel_tile_grid *g, const int *index)
{
    in->order = g->order;
    for (unsigned m = 0; m < g->order && m < 3; m++) {
        in->index[m] = index[m];
        in->dims[m] = g->dims[m];
    }
    in->nnz = g->nnz;
}

int strat_ctx_init(strat_ctx *c, const tessel_spec *spec, const tessel_strategy_inputs *in,
                   tessel_strategy_estimator est, const tessel_allocator *a, tessel_diag *diag)
{
    memset(c, 0, sizeof(*c));
    c->spec = spec;
    c->alloc = a;
    c->diag = diag;
    c->est = est;
    c->stats = in ? in->stats : NULL;
    c->data = in ? in->data : NULL;
    c->nidx = spec->workload.nindices;
    const tessel_workload_data *w = in ? in->data : NULL;
    if (spec->workload.ntensors < 2 || spec->workload.ntensors - 1 > STRAT_MAX_INPUTS)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->workload.pos.file,
                               spec->workload.pos.line, spec->workload.pos.column, "mapping.strategy",
                               "tiling strategies need one to three input tensors");
    c->nin = spec->workload.ntensors - 1;
    for (unsigned i = 0; i < c->nin; i++) {
        strat_input *x = &c->in[i];
        x->tensor = i + 1;
        int index[TESSEL_MAX_ORDER] = { -1, -1, -1 };
        x->base = c->stats ? tessel_stat_data_grid(c->stats, x->tensor, index) : NULL;
        if (w)
            input_from_data(c, x, w);
        else if (x->base)
            input_from_grid(x, x->base, index);
        if (x->order > 3)
            return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, NULL, 0, 0, "mapping.strategy",
                                   "tiling strategies handle tensors of at most 3 modes");
    }
    c->outer_first = strat_outer_first_of(spec);
    for (unsigned x = 0; x < c->nidx; x++)
        c->extent[x] = w ? w->extent[x] : 0;
    for (unsigned i = 0; i < c->nin; i++)
        for (unsigned m = 0; m < c->in[i].order; m++)
            if (c->in[i].index[m] >= 0 && !c->extent[c->in[i].index[m]])
                c->extent[c->in[i].index[m]] = c->in[i].dims[m];
    for (unsigned x = 0; x < c->nidx; x++)
        if (!c->extent[x])
            c->extent[x] = spec->workload.extent[x] ? spec->workload.extent[x] : 1;
    return TESSEL_OK;
}

void strat_ctx_free(strat_ctx *c)
{
    d2t2_bound_forget(c);
    tessel_stat_data_free(&c->own_stats);
    tessel_dealloc(c->alloc, c->worst);
    c->worst = NULL;
}

void strat_worst_forget(strat_ctx *c)
{
    c->nworst = 0;
    d2t2_bound_forget(c); /* read off the old base grid too */
}

/* Whether every input's worst base tile (a dense one when the strategy
 * sizes for dense tiles) fits its partition at every level the strategy
 * sizes (else no tile on the base grid fits). */
static int base_fits(const strat_ctx *c)
{
    unsigned levels[TESSEL_SPEC_MAX_LEVELS];
    unsigned n = strat_levels(c, levels);
    for (unsigned i = 0; i < c->nin; i++) {
        const strat_input *in = &c->in[i];
        if (!in->base)
            continue;
        uint64_t mx = 0;
        for (uint64_t k = 0; k < in->base->nonempty; k++)
            if (tessel_tile_grid_count(in->base, k) > mx)
                mx = tessel_tile_grid_count(in->base, k);
        if (c->spec->strategy.dense_worst) /* sized as if dense: the base tile's area */
            mx = in->base->tile[0] * (in->order > 1 ? in->base->tile[1] : 1);
        for (unsigned j = 0; j < n; j++) {
            uint64_t part = strat_partition(c, levels[j], in->tensor);
            if (part && strat_tile_bytes(c, levels[j], in, in->base->tile, mx) > part)
                return 0;
        }
    }
    return 1;
}

int tessel_strategy_shared_create(const tessel_allocator *a, tessel_strategy_shared **out)
{
    *out = tessel_alloc(a, sizeof(**out));
    if (!*out)
        return TESSEL_ENOMEM;
    memset(*out, 0, sizeof(**out));
    (*out)->alloc = a;
    return TESSEL_OK;
}

void tessel_strategy_shared_free(tessel_strategy_shared **s)
{
    if (!s || !*s)
        return;
    for (unsigned k = 0; k < (*s)->n; k++)
        tessel_stat_data_free(&(*s)->stats[k]);
    tessel_drt_stats_free(&(*s)->drt);
    tessel_dealloc((*s)->alloc, *s);
    *s = NULL;
}

/* The shared statistics on an edge x edge base grid, if collected. */
static const tessel_stat_data *shared_stats(const strat_ctx *c, uint64_t edge)
{
    const tessel_strategy_shared *sh = c->shared;
    if (!sh || sh->data != c->data)
        return NULL;
    for (unsigned k = 0; k < sh->n; k++)
        if (sh->edge[k] == edge)
            return sh->stats[k];
    return NULL;
}

int strat_collect_stats(strat_ctx *c, uint64_t edge)
{
    strat_worst_forget(c); /* the worst tiles were read off the old base grid */
    tessel_stat_data_free(&c->own_stats);
    const tessel_stat_data *kept = shared_stats(c, edge);
    if (kept) {
        c->stats = kept;
        for (unsigned i = 0; i < c->nin; i++) {
            int index[TESSEL_MAX_ORDER];
            c->in[i].base = tessel_stat_data_grid(c->stats, c->in[i].tensor, index);
        }
        return TESSEL_OK;
    }
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    opt.base[0] = opt.base[1] = edge;
    int rc = tessel_stat_data_create(c->spec, c->data, &opt, c->alloc, &c->own_stats, c->diag);
    if (rc)
        return rc;
    c->stats = c->own_stats;
    tessel_strategy_shared *sh = c->shared;
    if (sh && (sh->data == c->data || !sh->n) && sh->n < STRAT_SHARED_MAX) {
        /* kept for the next decision: the context borrows them */
        sh->data = c->data;
        sh->edge[sh->n] = edge;
        sh->stats[sh->n++] = c->own_stats;
        c->own_stats = NULL;
    }
    for (unsigned i = 0; i < c->nin; i++) {
        int index[TESSEL_MAX_ORDER];
        c->in[i].base = tessel_stat_data_grid(c->stats, c->in[i].tensor, index);
    }
    return TESSEL_OK;
}

/* Statistics for sizing tiles only, on an edge x edge base grid: the
 * base grids without the output sample or the output count (the costly
 * part of a collection, which only pricing reads), or the full ones when
 * they are shared already. Never shared: strat_collect_stats collects the
 * full ones on the grid finally chosen. */
static int collect_grids(strat_ctx *c, uint64_t edge)
{
    const tessel_stat_data *kept = shared_stats(c, edge);
    if (kept)
        return strat_collect_stats(c, edge);
    strat_worst_forget(c);
    tessel_stat_data_free(&c->own_stats);
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    opt.base[0] = opt.base[1] = edge;
    opt.output_fraction = 0;
    opt.output_min_flops = 0;
    opt.output_count_budget = 0;
    int rc = tessel_stat_data_create(c->spec, c->data, &opt, c->alloc, &c->own_stats, c->diag);
    if (rc)
        return rc;
    c->stats = c->own_stats;
    for (unsigned i = 0; i < c->nin; i++) {
        int index[TESSEL_MAX_ORDER];
        c->in[i].base = tessel_stat_data_grid(c->stats, c->in[i].tensor, index);
    }
    return TESSEL_OK;
}

/* The stat estimator's statistics. Given ones are used as they are (their
 * base grid is the caller's choice); otherwise they are collected from the
 * data on the default 128 x 128 base grid, halved (down to 4) while no
 * base tile fits the partitions, since the strategies' tiles are multiples
 * of the base grid (d2t2: finer still, strat_d2t2_base_edge). The grid is
 * chosen on the base grids alone, and the full statistics collected once,
 * on it. */
int strat_need_stats(strat_ctx *c)
{
    if (c->stats)
        return TESSEL_OK;
    c->collected = 1;
    if (!c->data)
        return tessel_diag_set(c->diag, TESSEL_EINVAL, NULL, 0, 0, "mapping.strategy",
                               "this strategy needs the data or its statistics");
    uint64_t edge = 128; /* the strategies' own grid, halved while nothing fits */
    int rc = collect_grids(c, edge);
    while (!rc && edge / 2 >= 4 && !base_fits(c))
        rc = collect_grids(c, edge /= 2);
    if (!rc && tessel_strategy_from_name(c->spec->strategy.name) == TESSEL_STRATEGY_D2T2)
        rc = strat_d2t2_base_edge(c, &edge);
    if (!rc && c->stats != shared_stats(c, edge))
        rc = strat_collect_stats(c, edge);
    return rc;
}

uint64_t strat_partition(const strat_ctx *c, unsigned l, unsigned tensor)
{
    /* the rule of the estimators (exact_partition_bytes): a bypassed
     * tensor's partition is absent (0), as an unbounded one */
    return tessel_spec_partition_bytes(c->spec, l, tensor);
}

void strat_shape(const strat_ctx *c, const strat_input *in, const strat_tiles *t, uint64_t *shape)
{
    for (unsigned m = 0; m < in->order; m++) {
        int x = in->index[m];
        uint64_t e = x >= 0 ? t->t[x] : 0;
        shape[m] = e && e < in->dims[m] ? e : (in->dims[m] ? in->dims[m] : 1);
    }
    (void)c;
}

static void level_format(const strat_ctx *c, unsigned l, const strat_input *in, int *ranked,
                         tessel_format *f, unsigned char *ranks, tessel_format_widths *w)
{
    const tessel_spec_level *lv = &c->spec->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[in->tensor];
    int fmt = tl->format >= 0 ? tl->format : lv->format;
    *ranked = fmt == TESSEL_SPEC_FORMAT_RANKS && (tl->format >= 0 ? tl->nranks : lv->nranks) ==
                                                     in->order;
    if (*ranked)
        memcpy(ranks, tl->format >= 0 ? tl->ranks : lv->ranks, in->order);
    *f = tessel_model_format(fmt == TESSEL_SPEC_FORMAT_RANKS ? 1 : fmt);
    w->value_bits = lv->value_bits;
    w->coord_bits = lv->coord_bits;
    w->offset_bits = lv->offset_bits;
    w->run_bits = lv->run_bits;
}

uint64_t strat_tile_bytes(const strat_ctx *c, unsigned l, const strat_input *in,
                          const uint64_t *shape, uint64_t n)
{
    int ranked;
    tessel_format f;
    unsigned char ranks[3];
    tessel_format_widths w;
    level_format(c, l, in, &ranked, &f, ranks, &w);
    const tessel_spec_level *lv = &c->spec->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[in->tensor];
    if ((tl->format >= 0 ? tl->format : lv->format) == TESSEL_SPEC_FORMAT_TILED_CSF) {
        /* tiled-csf's worst case of n nonzeros: each alone in its inner
         * tile and row segment (docs/spec.md) */
        double per = (double)in->order * w.coord_bits + w.offset_bits + w.coord_bits +
                     w.offset_bits + (double)(in->order - 1) * w.coord_bits + w.value_bits;
        double bytes = ceil((double)n * per / 8);
        return bytes >= 1.8e19 ? UINT64_MAX : (uint64_t)bytes;
    }
    if (!ranked)
        return tessel_format_footprint(f, in->order, shape, n, &w);
    /* per-rank formats: the worst case of n nonzeros, every prefix rank as
     * occupied as n allows (an upper bound of the real tile) */
    uint64_t occupied[3];
    double span = 1;
    for (unsigned d = 0; d < in->order; d++) {
        span *= (double)shape[d];
        occupied[d] = span < (double)n ? (uint64_t)span : n;
    }
    double db, mb;
    tessel_rank_footprint_bits(ranks, in->order, shape, occupied, &w, &db, &mb);
    double bytes = ceil(db / 8) + ceil(mb / 8);
    return bytes >= 1.8e19 ? UINT64_MAX : (uint64_t)bytes;
}

uint64_t strat_capacity_nnz(const strat_ctx *c, unsigned l, const strat_input *in,
                            const uint64_t *shape, uint64_t bytes)
{
    /* footprints grow with n: binary search over [0, dense] */
    double dense = 1;
    for (unsigned m = 0; m < in->order; m++)
        dense *= (double)shape[m];
    uint64_t lo = 0, hi = dense > 1e18 ? (uint64_t)1e18 : (uint64_t)dense;
    if (strat_tile_bytes(c, l, in, shape, 0) > bytes)
        return 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (strat_tile_bytes(c, l, in, shape, mid) <= bytes)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int strat_grid(const strat_ctx *c, const strat_input *in, const uint64_t *shape, int exact,
               tessel_tile_grid **out)
{
    *out = NULL;
    if (in->data && (exact || !in->base))
        return tessel_tile_grid_build(in->data, shape, c->alloc, out, c->diag);
    if (!in->base)
        return TESSEL_OK;
    uint64_t s[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < in->order; m++) {
        uint64_t b = in->base->tile[m];
        if (shape[m] >= in->dims[m])
            s[m] = (in->dims[m] + b - 1) / b * b;
        else if (shape[m] % b == 0)
            s[m] = shape[m];
        else
            return in->data ? tessel_tile_grid_build(in->data, shape, c->alloc, out, c->diag)
                            : TESSEL_OK;
        if (!s[m])
            s[m] = b;
    }
    return tessel_tile_grid_derive(in->base, s, out, c->diag);
}

unsigned strat_levels(const strat_ctx *c, unsigned *levels)
{
    unsigned n = 0;
    uint32_t mask = c->spec->strategy.levels;
    for (unsigned l = c->spec->nlevels; l-- > 1;)
        if ((!mask || (mask >> l & 1u)) && c->spec->level[l].capacity)
            levels[n++] = l;
    for (unsigned i = 0; c->outer_first && i < n / 2; i++) {
        unsigned t = levels[i];
        levels[i] = levels[n - 1 - i];
        levels[n - 1 - i] = t;
    }
    return n;
}

/* Which level a strategy sizes first by default, after its paper: Tailors
 * §5.2 sizes ExTensor-P's and ExTensor-OB's global-buffer tiles first and
 * partitions them into PE sub-tiles, while ExTensor-N fixes the PE tiles
 * and sizes the global buffer around them; DRT splits each task's tiles
 * again for the level below (drt §4.1); D2T2 sizes the PE buffer (d2t2
 * §6.1: its target buffer), the outer levels following from it. */
int strat_outer_first_of(const tessel_spec *spec)
{
    if (spec->strategy.order)
        return spec->strategy.order == TESSEL_SPEC_ORDER_OUTER_FIRST;
    int k = tessel_strategy_from_name(spec->strategy.name);
    return k == TESSEL_STRATEGY_PRESCIENT || k == TESSEL_STRATEGY_SWIFTILES ||
           k == TESSEL_STRATEGY_DRT;
}

uint64_t strat_nest_edge(const strat_ctx *c, unsigned x, uint64_t e, uint64_t g)
{
    uint64_t o = c->outer[x];
    if (!o)
        return e;
    if (!e || e >= o)
        return o;
    uint64_t best = 1, best_g = 0;
    for (uint64_t d = 1; d * d <= o; d++) {
        if (o % d)
            continue;
        uint64_t pair[2] = { d, o / d };
        for (unsigned k = 0; k < 2; k++) {
            if (pair[k] > e)
                continue;
            if (pair[k] > best)
                best = pair[k];
            if (g && pair[k] % g == 0 && pair[k] > best_g)
                best_g = pair[k];
        }
    }
    return best_g ? best_g : best;
}

void strat_nest(const strat_ctx *c, strat_tiles *t)
{
    for (unsigned x = 0; x < c->nidx; x++) {
        if (!c->outer[x])
            continue;
        uint64_t e = strat_nest_edge(c, x, t->t[x] ? t->t[x] : c->extent[x], 0);
        t->t[x] = e >= c->extent[x] ? 0 : e;
    }
}

uint64_t strat_lcm(uint64_t a, uint64_t b)
{
    uint64_t x = a, y = b;
    while (y) {
        uint64_t t = x % y;
        x = y;
        y = t;
    }
    return x ? a / x * b : 0;
}

uint64_t strat_granule(const strat_ctx *c, unsigned x)
{
    return c->est == TESSEL_STRATEGY_STAT && !c->data ? strat_base_granule(c, x) : 1;
}

uint64_t strat_base_granule(const strat_ctx *c, unsigned x)
{
    /* every base edge along x must divide the tile edge */
    uint64_t g = 1;
    for (unsigned i = 0; i < c->nin; i++) {
        const strat_input *in = &c->in[i];
        if (!in->base)
            continue;
        for (unsigned m = 0; m < in->order; m++)
            if (in->index[m] == (int)x) {
                g = strat_lcm(g, in->base->tile[m]);
            }
    }
    return g;
}

void strat_ratio(const strat_ctx *c, unsigned l, double *ratio)
{
    const tessel_spec_level *lv = &c->spec->level[l];
    double lo = 0;
    int any = 0;
    for (unsigned x = 0; x < c->nidx; x++)
        any |= lv->tile[x] != 0;
    for (unsigned x = 0; x < c->nidx; x++) {
        uint64_t t = lv->tile[x];
        ratio[x] = !any ? 1.0 : (double)(t && t < c->extent[x] ? t : c->extent[x]);
        if (!lo || ratio[x] < lo)
            lo = ratio[x];
    }
    for (unsigned x = 0; x < c->nidx; x++)
        ratio[x] /= lo > 0 ? lo : 1;
}

void strat_tiles_at(const strat_ctx *c, const double *ratio, const uint64_t *gran, double s,
                    strat_tiles *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned x = 0; x < c->nidx; x++) {
        double want = ratio[x] * s;
        uint64_t g = gran[x] ? gran[x] : 1;
        uint64_t e = want >= (double)c->extent[x] ? c->extent[x] : (uint64_t)(want / (double)g) * g;
        if (e < g)
            e = g;
        e = strat_nest_edge(c, x, e, g);
        out->t[x] = e >= c->extent[x] ? 0 : e;
    }
}

double strat_scale_max(const strat_ctx *c, const double *ratio)
{
    double s = 1;
    for (unsigned x = 0; x < c->nidx; x++)
        if ((double)c->extent[x] / ratio[x] > s)
            s = (double)c->extent[x] / ratio[x];
    return ceil(s);
}

/* ------------------------------------------------------------------ */
/* What a choice achieved. */

static void shape_text(const strat_ctx *c, const tessel_strategy_choice *ch, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (unsigned l = 1; l < c->spec->nlevels && len + 1 < n; l++) {
        if (!(ch->levels >> l & 1u))
            continue;
        len += (size_t)snprintf(buf + len, n - len, "%s%s ", len ? " " : "",
                                c->spec->level[l].name);
        for (unsigned x = 0; x < c->nidx && len + 1 < n; x++) {
            uint64_t t = ch->tile[l][x] ? ch->tile[l][x] : c->extent[x];
            len += (size_t)snprintf(buf + len, n - len, "%s%s:%llu", x ? "," : "",
                                    c->spec->workload.index_name[x], (unsigned long long)t);
        }
    }
}

/* Overbooking rate and utilisation over the non-empty input tiles of the
 * sized levels (NAN when some grid cannot be counted). */
static int achieved(strat_ctx *c, tessel_strategy_choice *ch)
{
    double tiles = 0, over = 0, util = 0;
    for (unsigned l = 1; l < c->spec->nlevels; l++) {
        if (!(ch->levels >> l & 1u))
            continue;
        strat_tiles t;
        memcpy(t.t, ch->tile[l], sizeof(t.t));
        for (unsigned i = 0; i < c->nin; i++) {
            const strat_input *in = &c->in[i];
            uint64_t part = strat_partition(c, l, in->tensor), shape[3];
            if (!part || !in->order)
                continue;
            strat_shape(c, in, &t, shape);
            tessel_tile_grid *g = NULL;
            int rc = strat_grid(c, in, shape, 1, &g);
            if (rc)
                return rc;
            if (!g) {
                ch->overbooking_rate = ch->buffer_utilization = NAN;
                return TESSEL_OK;
            }
            for (uint64_t k = 0; k < g->nonempty; k++) {
                uint64_t b = strat_tile_bytes(c, l, in, shape, tessel_tile_grid_count(g, k));
                over += b > part;
                util += b >= part ? 1.0 : (double)b / (double)part;
            }
            tiles += (double)g->nonempty;
            tessel_tile_grid_free(&g);
        }
    }
    ch->overbooking_rate = tiles > 0 ? over / tiles : 0;
    ch->buffer_utilization = tiles > 0 ? util / tiles : 0;
    return TESSEL_OK;
}

static int fixed_choice(strat_ctx *c, tessel_strategy_choice *ch)
{
    unsigned levels[TESSEL_SPEC_MAX_LEVELS];
    unsigned n = strat_levels(c, levels);
    for (unsigned i = 0; i < n; i++) {
        ch->levels |= 1u << levels[i];
        memcpy(ch->tile[levels[i]], c->spec->level[levels[i]].tile, sizeof(ch->tile[0]));
    }
    return TESSEL_OK;
}

static int choose(strat_ctx *c, tessel_strategy_kind k, tessel_strategy_choice *ch)
{
    switch (k) {
    case TESSEL_STRATEGY_FIXED: return fixed_choice(c, ch);
    case TESSEL_STRATEGY_CONSERVATIVE: return strat_uniform(c, 0, ch);
    case TESSEL_STRATEGY_PRESCIENT: return strat_uniform(c, 1, ch);
    case TESSEL_STRATEGY_SWIFTILES: return strat_swiftiles(c, ch);
    case TESSEL_STRATEGY_D2T2: return strat_d2t2(c, ch);
    default: return TESSEL_EINVAL;
    }
}

static int choose_in(strat_ctx *c, tessel_strategy_choice *out)
{
    const tessel_spec_strategy *st = &c->spec->strategy;
    int k = st->name[0] ? tessel_strategy_from_name(st->name) : TESSEL_STRATEGY_FIXED;
    if (k < 0)
        return tessel_diag_set(c->diag, TESSEL_EINVAL, st->pos.file, st->pos.line, st->pos.column,
                               "mapping.strategy", "unknown strategy '%s'", st->name);
    memset(out, 0, sizeof(*out));
    out->kind = (tessel_strategy_kind)k;
    double t0 = now_seconds(), c0 = cpu_now();
    if (k == TESSEL_STRATEGY_DRT) {
        if (st->order == TESSEL_SPEC_ORDER_INNER_FIRST)
            return tessel_diag_set(c->diag, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                   st->pos.column, "mapping.strategy_options.order",
                                   "drt forms each level's tiles inside the tasks of the level "
                                   "above (drt §4.1): it sizes outer levels first only");
        out->overbooking_rate = out->buffer_utilization = NAN;
        snprintf(out->shape, sizeof(out->shape), "dynamic");
        return TESSEL_OK;
    }
    int rc = choose(c, out->kind, out);
    if (!rc && k != TESSEL_STRATEGY_FIXED) {
        out->seconds = now_seconds() - t0;
        out->cpu_seconds = cpu_now() - c0;
    }
    if (!rc)
        rc = achieved(c, out);
    if (!rc)
        shape_text(c, out, out->shape, sizeof(out->shape));
    return rc;
}

/* The stat estimator takes tiles on its base grid: know it first. */
static int stat_grid_first(strat_ctx *c)
{
    if (c->est != TESSEL_STRATEGY_STAT || tessel_strategy_is_fixed(c->spec) ||
        strcmp(c->spec->strategy.name, "drt") == 0)
        return TESSEL_OK;
    return strat_need_stats(c);
}

int tessel_strategy_choose(const tessel_spec *spec, const tessel_strategy_inputs *in,
                           tessel_strategy_estimator est, const tessel_allocator *a,
                           tessel_strategy_choice *out, tessel_diag *diag)
{
    strat_ctx c;
    int rc = strat_ctx_init(&c, spec, in, est, a, diag);
    if (!rc)
        rc = stat_grid_first(&c);
    if (!rc)
        rc = choose_in(&c, out);
    strat_ctx_free(&c);
    return rc;
}

void tessel_strategy_apply(const tessel_spec *spec, const tessel_strategy_choice *c,
                           tessel_spec *out)
{
    *out = *spec;
    for (unsigned l = 1; l < spec->nlevels; l++)
        if (c->levels >> l & 1u)
            memcpy(out->level[l].tile, c->tile[l], sizeof(out->level[l].tile));
}

/* ------------------------------------------------------------------ */
/* Decide and estimate. */

static void drt_options_of(const tessel_spec *spec, tessel_drt_options *o)
{
    tessel_drt_options_init(o);
    o->micro[0] = spec->strategy.micro[0];
    o->micro[1] = spec->strategy.micro[1];
    o->growth = spec->strategy.growth ? TESSEL_DRT_GROW_ALTERNATING
                                      : TESSEL_DRT_GROW_CONTRACTED_FIRST;
}

/* DRT's micro-tile statistics for the stat estimator: the caller's, the
 * shared ones, or collected now (kept in shared when there is one). They
 * are collected on the spec cut to its first buffer level, as every DRT
 * walk reads the same micro grids whatever the levels below. */
static int drt_stats_of(strat_ctx *c, const tessel_strategy_inputs *in,
                        const tessel_drt_options *o, const tessel_drt_stats **use,
                        tessel_drt_stats **own)
{
    *own = NULL;
    *use = in->drt_stats;
    if (*use)
        return TESSEL_OK;
    tessel_strategy_shared *sh = c->shared;
    if (sh && sh->drt && sh->data == in->data) {
        *use = sh->drt;
        return TESSEL_OK;
    }
    if (!in->data)
        return tessel_diag_set(c->diag, TESSEL_EINVAL, NULL, 0, 0, "mapping.strategy",
                               "drt needs the data or its micro-tile statistics");
    tessel_spec cut = *c->spec;
    cut.nlevels = 2;
    int rc = tessel_drt_stats_create(&cut, in->data, o, c->alloc, own, c->diag);
    if (!rc && sh && !sh->drt && (sh->data == in->data || !sh->n)) {
        sh->data = in->data;
        sh->drt = *own;
        *own = NULL;
        *use = sh->drt;
    } else if (!rc) {
        *use = *own;
    }
    return rc;
}

/* DRT on the spec's levels: one buffer level is drt_walk's, more are
 * drt_levels.c's hierarchy (drt §4.1: each task's tiles are split again
 * by DRT for the level below, so DRT sizes outer levels first). */
static int run_drt(strat_ctx *c, const tessel_strategy_inputs *in, tessel_result *out,
                   tessel_strategy_choice *ch)
{
    tessel_drt_options o;
    drt_options_of(c->spec, &o);
    tessel_drt_summary sum[2];
    memset(sum, 0, sizeof(sum));
    double t0 = now_seconds(), c0 = cpu_now();
    int rc, levels = c->spec->nlevels > 2;
    if (c->est == TESSEL_STRATEGY_EXACT) {
        if (!in->data)
            return tessel_diag_set(c->diag, TESSEL_EINVAL, NULL, 0, 0, "estimator",
                                   "the exact estimator needs the data");
        rc = levels ? tessel_drt_levels_exact(c->spec, in->data, &o, c->alloc, out, sum, c->diag)
                    : tessel_drt_exact(c->spec, in->data, &o, c->alloc, out, &sum[0], c->diag);
    } else {
        const tessel_drt_stats *s = NULL;
        tessel_drt_stats *own = NULL;
        rc = drt_stats_of(c, in, &o, &s, &own);
        if (!rc)
            rc = levels ? tessel_drt_levels_stat(c->spec, s, o.growth, out, sum, c->diag)
                        : tessel_drt_stat(c->spec, s, out, &sum[0], c->diag);
        tessel_drt_stats_free(&own);
    }
    if (rc)
        return rc;
    ch->seconds = now_seconds() - t0;
    ch->cpu_seconds = cpu_now() - c0;
    ch->buffer_utilization = sum[0].buffer_utilization;
    /* over the tasks of the first and the innermost level (with two
     * buffer levels: all of them) */
    uint64_t tasks = sum[0].tasks + (levels ? sum[1].tasks : 0);
    ch->overbooking_rate = out->overflow_tiles && tasks
                               ? (double)out->overflow_tiles / (double)tasks
                               : 0;
    size_t len = (size_t)snprintf(ch->shape, sizeof(ch->shape), "dynamic %llux%llu mean",
                                  (unsigned long long)o.micro[0], (unsigned long long)o.micro[1]);
    for (unsigned x = 0; x < c->nidx && len + 1 < sizeof(ch->shape); x++)
        len += (size_t)snprintf(ch->shape + len, sizeof(ch->shape) - len, "%s%s:%.0f",
                                x ? "," : " ", c->spec->workload.index_name[x], sum[0].mean_edge[x]);
    if (levels) /* the innermost level's mean edges too */
        for (unsigned x = 0; x < c->nidx && len + 1 < sizeof(ch->shape); x++)
            len += (size_t)snprintf(ch->shape + len, sizeof(ch->shape) - len, "%s%s:%.0f",
                                    x ? "," : " inner ", c->spec->workload.index_name[x],
                                    sum[1].mean_edge[x]);
    ch->levels = levels ? (1u << c->spec->nlevels) - 2u : 1u << 1;
    return TESSEL_OK;
}

static int on_base_grid(const strat_ctx *c, const tessel_spec *tiled)
{
    for (unsigned l = 1; l < tiled->nlevels; l++)
        for (unsigned x = 0; x < c->nidx; x++) {
            uint64_t t = tiled->level[l].tile[x];
            if (t && t < c->extent[x] && t % strat_base_granule(c, x))
                return 0;
        }
    return 1;
}

/* The decided design under stat. Tiles off the statistics' grid (decided
 * from the data as exact decides them) get statistics of their own when
 * the data is at hand, on the grid the estimator picks for them, so that
 * their inputs are priced as exactly as on-grid tiles; without the data,
 * and for a fixed mapping (whose statistics the caller collected for it:
 * its --base or saved file), the estimator prices them between the
 * on-grid shapes. */
static int stat_eval_decided(strat_ctx *c, tessel_strategy_kind kind, const tessel_spec *tiled,
                             tessel_result *out)
{
    if (!c->data || kind == TESSEL_STRATEGY_FIXED || on_base_grid(c, tiled))
        return tessel_model_stat_eval(tiled, c->stats, out, c->diag);
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    tessel_stat_data *own = NULL;
    int rc = tessel_stat_data_create(tiled, c->data, &opt, c->alloc, &own, c->diag);
    if (!rc)
        rc = tessel_model_stat_eval(tiled, own, out, c->diag);
    if (!rc)
        out->stats_seconds += tessel_stat_data_seconds(own);
    tessel_stat_data_free(&own);
    return rc;
}

int tessel_strategy_run(const tessel_spec *spec, const tessel_strategy_inputs *in,
                        tessel_strategy_estimator est, const tessel_allocator *a,
                        tessel_result *out, tessel_strategy_choice *choice, tessel_diag *diag)
{
    return tessel_strategy_run_shared(spec, in, NULL, est, a, out, choice, diag);
}

int tessel_strategy_run_shared(const tessel_spec *spec, const tessel_strategy_inputs *in,
                               tessel_strategy_shared *shared, tessel_strategy_estimator est,
                               const tessel_allocator *a, tessel_result *out,
                               tessel_strategy_choice *choice, tessel_diag *diag)
{
    tessel_strategy_inputs none = { NULL, NULL, NULL };
    if (!in)
        in = &none;
    strat_ctx c;
    tessel_strategy_choice local;
    tessel_strategy_choice *ch = choice ? choice : &local;
    int rc = strat_ctx_init(&c, spec, in, est, a, diag);
    c.shared = shared;
    if (!rc)
        rc = stat_grid_first(&c);
    if (!rc)
        rc = choose_in(&c, ch);
    if (!rc && ch->kind == TESSEL_STRATEGY_DRT) {
        rc = run_drt(&c, in, out, ch);
    } else if (!rc) {
        tessel_spec tiled;
        tessel_strategy_apply(spec, ch, &tiled);
        if (est == TESSEL_STRATEGY_EXACT && !in->data)
            rc = tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "estimator",
                                 "the exact estimator needs the data");
        else if (est == TESSEL_STRATEGY_EXACT)
            rc = tessel_model_exact(&tiled, in->data, a, out, diag);
        else if (!(rc = strat_need_stats(&c)))
            rc = stat_eval_decided(&c, ch->kind, &tiled, out);
        /* without the data, the tiles were stepped on the base grid */
        if (!rc && est == TESSEL_STRATEGY_STAT && !in->data && ch->kind != TESSEL_STRATEGY_FIXED)
            out->stat_design_may_differ = 1;
    }
    strat_ctx_free(&c);
    return rc;
}

uint64_t *strat_div_table(const strat_ctx *c, uint64_t n, uint64_t f)
{
    uint64_t *tab = tessel_alloc_array(c->alloc, n ? n : 1, sizeof(uint64_t));
    for (uint64_t q = 0, t = 0, r = 0; tab && q < n; q++) {
        tab[q] = t;
        if (++r == f)
            r = 0, t++;
    }
    return tab;
}

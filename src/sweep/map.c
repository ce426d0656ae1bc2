/* The mapper: a point of the search space is, per searched level, a loop
 * order, a tile edge per index and a partition split among the tensors;
 * with options.spatial also a spatial split (level, factors, policy).
 * Every point is priced by deriving its spec and running the stat
 * estimator, energy and roofline on it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tessel/point.h"
#include "tessel/strategy.h"
#include "sweep_internal.h"

#define MAP_MAX_EDGES 40u
#define MAP_MAX_ORDERS 40320u /* 8! */
#define MAP_MAX_SPLITS 4096u
#define MAP_VISITED_MAX (1u << 22)
#define MAP_MAX_SPATIAL 4096u /* spatial splits (level, factors) searched */
#define MAP_POLICIES 3u       /* TESSEL_SPEC_SPATIAL_* */

typedef struct map_level {
    unsigned level;
    unsigned norders;
    unsigned nedges[TESSEL_SPEC_MAX_INDICES];
    uint64_t edge[TESSEL_SPEC_MAX_INDICES][MAP_MAX_EDGES];
    unsigned nsplits;
} map_level;

/* A point: per searched level, order index, edge index per index, split;
 * and the strategy (an index into map_ctx.strategy; its tile edges stay 0
 * unless it is fixed). */
typedef struct map_point {
    uint32_t order[TESSEL_SPEC_MAX_LEVELS];
    uint8_t edge[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_INDICES];
    uint32_t split[TESSEL_SPEC_MAX_LEVELS];
    uint32_t spatial; /* split * npolicies + policy (0 when not searched) */
    uint32_t strategy;
} map_point;

/* A spatial split the mapper may choose: the level whose tiles are
 * dealt and a factor per index (0: not split), product dividing the
 * child's instances. */
typedef struct map_split {
    unsigned level;
    unsigned factor[TESSEL_SPEC_MAX_INDICES];
} map_split;

typedef struct map_ctx {
    const tessel_spec *spec;
    const tessel_stat_data *stats;
    tessel_stat_cache *shapes; /* per-shape summaries (NULL: --no-memo) */
    const tessel_energy_db *db;
    const tessel_map_options *opt;
    tessel_map_result *out;
    unsigned nindices, ntensors, nlevels;
    map_level level[TESSEL_SPEC_MAX_LEVELS];
    unsigned steps;           /* partition steps: 1 / partition_step */
    unsigned nstrategies;     /* searched strategies, fixed (if searched) first */
    tessel_strategy_kind strategy[TESSEL_STRATEGY_COUNT];
    map_split *splits;        /* spatial splits searched (options.spatial), or NULL */
    unsigned nspatial;        /* their count */
    unsigned npolicies;       /* distribution policies searched */
    int policy[MAP_POLICIES];
    int base_split;           /* the spec's own split level, or -1 */
    uint64_t rng;
    uint64_t *visited;        /* open addressing, point hashes (0 = empty) */
    uint64_t nvisited;
    double start, last_progress;
    tessel_report_point scratch;
} map_ctx;

void tessel_map_options_init(tessel_map_options *o)
{
    memset(o, 0, sizeof(*o));
    o->exhaustive_limit = 20000;
    o->seed = 1;
    o->tile_base = 128;
    o->partition_step = 0.1;
}

const char *tessel_map_objective_name(tessel_map_objective o)
{
    static const char *const names[] = { "energy_pj", "cycles", "edp", "dram_bytes" };
    return o <= TESSEL_MAP_DRAM_BYTES ? names[o] : "?";
}

static uint64_t next_random(map_ctx *c)
{
    uint64_t z = (c->rng += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static unsigned below(map_ctx *c, unsigned n)
{
    return (unsigned)(next_random(c) % n);
}

/* ------------------------------------------------------------------ */
/* Coordinates */

/* The k-th permutation of 0..n-1 in lexicographic order. */
static void permutation(unsigned n, unsigned k, unsigned *out)
{
    unsigned pool[TESSEL_SPEC_MAX_INDICES], fact = 1;
    for (unsigned i = 0; i < n; i++) {
        pool[i] = i;
        fact *= i + 1;
    }
    for (unsigned i = 0; i < n; i++) {
        fact /= n - i;
        unsigned j = k / fact;
        k %= fact;
        out[i] = pool[j];
        memmove(pool + j, pool + j + 1, (n - 1 - j) * sizeof(*pool));
    }
}

/* The k-th way to write `steps` as `parts` positive whole numbers, in a
 * fixed order (the number of ways is C(steps - 1, parts - 1)). */
static void composition(unsigned steps, unsigned parts, unsigned k, unsigned *out)
{
    for (unsigned p = 0; p + 1 < parts; p++) {
        for (unsigned first = 1;; first++) {
            /* ways for the remaining parts after `first` */
            unsigned rest = steps - first, rparts = parts - 1 - p;
            double ways = 1;
            for (unsigned i = 1; i < rparts; i++)
                ways = ways * (double)(rest - i) / (double)i;
            if (rest < rparts)
                ways = 0;
            if ((double)k < ways || first + rparts >= steps) {
                out[p] = first;
                steps -= first;
                break;
            }
            k -= (unsigned)ways;
        }
    }
    out[parts - 1] = steps;
}

/* The tensors level l stores (a bypassed one takes no share of its split). */
static unsigned kept_tensors(const map_ctx *c, unsigned l)
{
    unsigned n = 0;
    for (unsigned t = 0; t < c->ntensors; t++)
        n += !tessel_spec_bypassed(c->spec, l, t);
    return n;
}

static unsigned count_compositions(unsigned steps, unsigned parts)
{
    if (parts == 0 || steps < parts)
        return 0;
    double ways = 1;
    for (unsigned i = 1; i < parts; i++)
        ways = ways * (double)(steps - i) / (double)i;
    return ways > MAP_MAX_SPLITS ? 0 : (unsigned)(ways + 0.5);
}

static int setup_level(map_ctx *c, unsigned l, const uint64_t *extent, map_level *ml,
                       tessel_diag *diag)
{
    ml->level = l;
    unsigned n = c->nindices;
    ml->norders = 1;
    if (!c->opt->keep_order)
        for (unsigned i = 2; i <= n; i++)
            ml->norders *= i;
    for (unsigned i = 0; i < n; i++) {
        unsigned k = 0;
        uint64_t base = c->opt->tile_base;
        for (uint64_t e = base; e < extent[i] && k + 1 < MAP_MAX_EDGES && !c->opt->keep_tiles;
             e *= 2)
            ml->edge[i][k++] = e;
        ml->edge[i][k++] = extent[i]; /* the whole extent (with keep_tiles: unused) */
        ml->nedges[i] = k;
    }
    ml->nsplits = 1;
    if (c->steps) {
        ml->nsplits = count_compositions(c->steps, kept_tensors(c, l));
        if (ml->nsplits == 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "partition_step",
                                   "partition steps of %g cannot split a buffer among %u "
                                   "tensors (or give over 4096 splits)",
                                   c->opt->partition_step, c->ntensors);
    }
    return TESSEL_OK;
}

/* Values of a point's spatial coordinate (1 when splits are not searched). */
static unsigned spatial_count(const map_ctx *c)
{
    return c->nspatial ? c->nspatial * c->npolicies : 1u;
}

static int is_fixed(const map_ctx *c, const map_point *p)
{
    return c->strategy[p->strategy] == TESSEL_STRATEGY_FIXED;
}

/* Orders and splits, times the tile edges for fixed tiles, plus one point
 * per other strategy. */
static double space_size(const map_ctx *c)
{
    double common = 1, edges = 1;
    for (unsigned l = 0; l < c->nlevels; l++) {
        const map_level *ml = &c->level[l];
        common *= (double)ml->norders * (double)ml->nsplits;
        for (unsigned i = 0; i < c->nindices; i++)
            edges *= ml->nedges[i];
    }
    double n = 0;
    for (unsigned k = 0; k < c->nstrategies; k++)
        n += c->strategy[k] == TESSEL_STRATEGY_FIXED ? common * edges : common;
    return n * spatial_count(c);
}

/* ------------------------------------------------------------------ */
/* A point's overrides and price */

static void add_set(tessel_map_result *r, const char *fmt, const char *a, const char *b)
{
    if (r->nsets < TESSEL_MAP_MAX_SETS)
        snprintf(r->sets[r->nsets++], sizeof(r->sets[0]), fmt, a, b);
}

/* The point's spatial split as overrides: "i:8,j:8" (the tile's spelling)
 * and the policy at its level; `none` at the spec's own split level when
 * the point splits another (one split level at a time). */
static void spatial_sets(const map_ctx *c, const map_point *p, tessel_map_result *r)
{
    if (!c->nspatial)
        return;
    const tessel_spec *s = c->spec;
    const map_split *sp = &c->splits[p->spatial / c->npolicies];
    const char *name = s->level[sp->level].name;
    char path[160], text[144];
    size_t len = 0;
    if (c->base_split >= 0 && (unsigned)c->base_split != sp->level) {
        snprintf(path, sizeof(path), "mapping.%s.spatial", s->level[c->base_split].name);
        add_set(r, "%s=%s", path, "none");
    }
    text[0] = '\0';
    for (unsigned i = 0; i < c->nindices; i++)
        if (sp->factor[i])
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s:%u", len ? "," : "",
                                    s->workload.index_name[i], sp->factor[i]);
    snprintf(path, sizeof(path), "mapping.%s.spatial", name);
    add_set(r, "%s=%s", path, text);
    snprintf(path, sizeof(path), "mapping.%s.distribution", name);
    add_set(r, "%s=%s", path,
            tessel_spec_distribution_name(c->policy[p->spatial % c->npolicies]));
}

/* The overrides of point p into r->sets (r->nsets reset). */
static void point_sets(const map_ctx *c, const map_point *p, tessel_map_result *r)
{
    const tessel_spec *s = c->spec;
    r->nsets = 0;
    if (c->nstrategies > 1 || !is_fixed(c, p))
        add_set(r, "%s=%s", "mapping.strategy", tessel_strategy_name(c->strategy[p->strategy]));
    for (unsigned l = 0; l < c->nlevels; l++) {
        const map_level *ml = &c->level[l];
        const char *name = s->level[ml->level].name;
        char text[144], path[160];
        size_t len = 0;
        unsigned perm[TESSEL_SPEC_MAX_INDICES];
        if (!c->opt->keep_order) {
            permutation(c->nindices, p->order[l], perm);
            for (unsigned i = 0; i < c->nindices; i++)
                len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s", i ? "," : "",
                                        s->workload.index_name[perm[i]]);
            snprintf(path, sizeof(path), "mapping.%s.order", name);
            add_set(r, "%s=%s", path, text);
        }
        len = 0;
        for (unsigned i = 0; i < c->nindices && is_fixed(c, p); i++)
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s:%llu", i ? "," : "",
                                    s->workload.index_name[i],
                                    (unsigned long long)ml->edge[i][p->edge[l][i]]);
        snprintf(path, sizeof(path), "mapping.%s.tile", name);
        if (is_fixed(c, p) && !c->opt->keep_tiles)
            add_set(r, "%s=%s", path, text);
        if (c->steps) {
            unsigned parts[TESSEL_SPEC_MAX_TENSORS];
            composition(c->steps, kept_tensors(c, ml->level), p->split[l], parts);
            for (unsigned t = 0, k = 0; t < c->ntensors; t++) {
                if (tessel_spec_bypassed(s, ml->level, t))
                    continue; /* not stored there: no partition (docs/semantics.md "Bypass") */
                snprintf(path, sizeof(path), "architecture.levels.%s.tensors.%s.partition", name,
                         s->workload.tensor[t].name);
                snprintf(text, sizeof(text), "%g", (double)parts[k++] / (double)c->steps);
                add_set(r, "%s=%s", path, text);
            }
        }
    }
    spatial_sets(c, p, r);
}

static double objective_value(tessel_map_objective o, const tessel_report_point *pt)
{
    switch (o) {
    case TESSEL_MAP_CYCLES: return pt->roofline.cycles;
    case TESSEL_MAP_EDP: return pt->energy_pj * pt->roofline.cycles;
    case TESSEL_MAP_DRAM_BYTES: return (double)pt->dram_bytes;
    default: return pt->energy_pj;
    }
}

/* Rule 4: some input or output tile of any level larger than its
 * partition (the estimators price it; --fit refuses it). */
static int overflows(const tessel_result *r)
{
    uint64_t tiles = 0;
    tessel_result_overflow(r, &tiles, NULL);
    return tiles > 0 || r->overflow_tiles > 0;
}

/* Tensor t's partition of level l in bytes (0 = unbounded), as the
 * estimators read it (exact_partition_bytes): bytes, else the fraction of
 * the capacity, else an equal share among the workload's tensors. */
static uint64_t partition_of(const tessel_spec *spec, unsigned l, unsigned t)
{
    return tessel_spec_partition_bytes(spec, l, t);
}

/* Rule 4 (issue 20): 1 when r moved the output at a level without
 * checking its tiles against the partition (partition_bytes and
 * worst_tile_bytes left 0: the stat estimator's nested closed form does
 * not price output spill yet)
 * while a tile of that level's shape could outgrow the partition (its
 * bytes with every cell a nonzero, in the level's format). The mapper
 * cannot trust such a point: an overflow it holds would be unpriced. */
static int unpriced_overflow(const tessel_spec *spec, const tessel_result *r)
{
    /* Inputs: every estimator prices rule 4 (the nested closed form too,
     * without reporting it); outputs: not all of them do. */
    for (unsigned l = 1; l < r->nlevels && l < spec->nlevels; l++)
        for (unsigned t = 0; t < 1 && t < r->ntensors; t++) {
            const tessel_traffic *tr = &r->traffic[l][t];
            uint64_t part = partition_of(spec, l, t);
            /* checked: the estimator recorded the partition or the largest tile */
            if (tr->partition_bytes || tr->worst_tile_bytes || !part ||
                !(tr->fills || tr->writebacks))
                continue;
            const tessel_spec_tensor *st = &spec->workload.tensor[t];
            const tessel_spec_level *lv = &spec->level[l];
            const tessel_spec_tensor_level *tl = &lv->tensor[t];
            uint64_t shape[TESSEL_MAX_ORDER], cells = 1;
            int known = st->rank <= TESSEL_MAX_ORDER;
            for (unsigned m = 0; known && m < st->rank; m++) {
                shape[m] = r->tile[l][st->index[m]];
                known = shape[m] > 0;
                cells *= known ? shape[m] : 1;
            }
            int f = tl->format >= 0 ? tl->format : lv->format;
            if (!known || f == TESSEL_SPEC_FORMAT_RANKS || f == TESSEL_SPEC_FORMAT_TILED_CSF)
                return 1; /* no tiles to bound: unpriced as far as the mapper knows */
            tessel_format_widths w = { lv->value_bits, lv->coord_bits, lv->offset_bits,
                                       lv->run_bits };
            if (tessel_format_footprint(tessel_model_format(f), st->rank, shape, cells, &w) >
                part)
                return 1;
        }
    return 0;
}

/* The point's stat traffic through the one entry point (point.h). */
static int evaluate(tessel_point_request *req, const tessel_spec *spec, tessel_result *r,
                    tessel_diag *d)
{
    tessel_point_result out;
    req->spec = spec;
    int rc = tessel_point_evaluate(req, &out, d);
    if (!rc)
        *r = out.result;
    tessel_point_result_free(&out);
    return rc;
}

/* Prices point p into c->scratch; INFINITY when the estimator refuses it
 * or leaves an overflow it could hold unpriced (unpriced_overflow). */
static double price(map_ctx *c, const map_point *p, tessel_map_result *sets)
{
    point_sets(c, p, sets);
    const char *list[TESSEL_MAP_MAX_SETS];
    for (size_t i = 0; i < sets->nsets; i++)
        list[i] = sets->sets[i];
    tessel_spec *spec = NULL;
    tessel_design_energy energy;
    tessel_result result;
    tessel_diag d;
    double v = INFINITY;
    tessel_point_request req = {
        .estimator = TESSEL_POINT_STAT,
        .data = c->opt->data,
        .stats = c->stats,
        .stat_cache = c->shapes,
        .alloc = c->spec->alloc,
    };
    if (!tessel_spec_derive(c->spec, list, sets->nsets, c->spec->alloc, &spec, NULL) &&
        !tessel_energy_design(c->db, spec, &energy, NULL) &&
        !evaluate(&req, spec, &result, &d) &&
        !(c->opt->fit && overflows(&result)) &&
        !(unpriced_overflow(spec, &result) && ++c->out->unpriced) &&
        !tessel_report_point_build(spec, &result, &energy, tessel_stat_data_label(c->stats),
                                   tessel_strategy_name(c->strategy[p->strategy]), &c->scratch,
                                   &d))
        v = objective_value(c->opt->objective, &c->scratch);
    tessel_spec_free(&spec);
    return v;
}

/* ------------------------------------------------------------------ */
/* Bookkeeping shared by the searches */

static uint64_t point_hash(const map_point *p)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < sizeof(*p); i++)
        h = (h ^ b[i]) * UINT64_C(1099511628211);
    return h ? h : 1;
}

/* 1 when p was seen before (and marks it seen). */
static int seen(map_ctx *c, const map_point *p)
{
    uint64_t h = point_hash(p), i = h & (MAP_VISITED_MAX - 1);
    while (c->visited[i]) {
        if (c->visited[i] == h)
            return 1;
        i = (i + 1) & (MAP_VISITED_MAX - 1);
    }
    if (c->nvisited + 1 >= MAP_VISITED_MAX / 2)
        return 0; /* full: points may be priced twice, never skipped wrongly */
    c->visited[i] = h;
    c->nvisited++;
    return 0;
}

static int out_of_time(map_ctx *c)
{
    const tessel_map_options *o = c->opt;
    double t = sweep_now();
    if (o->progress && t - c->last_progress >= 0.5) {
        c->last_progress = t;
        o->progress(o->progress_ud, c->out->evaluated, c->out->space, c->out->best_value,
                    t - c->start);
    }
    return (o->time_limit > 0 && t - c->start >= o->time_limit) ||
           (o->max_points && c->out->evaluated >= o->max_points);
}

/* Prices p unless seen; keeps it when best. Returns its value. */
static double visit(map_ctx *c, const map_point *p, tessel_map_result *tmp)
{
    if (seen(c, p))
        return NAN;
    double v = price(c, p, tmp);
    c->out->evaluated++;
    if (isinf(v))
        c->out->infeasible++;
    else if (v < c->out->best_value) {
        c->out->best_value = v;
        c->out->best = c->scratch;
        c->out->nsets = tmp->nsets;
        memcpy(c->out->sets, tmp->sets, sizeof(tmp->sets[0]) * tmp->nsets);
    }
    return v;
}

static void random_point(map_ctx *c, map_point *p)
{
    memset(p, 0, sizeof(*p));
    p->strategy = below(c, c->nstrategies);
    for (unsigned l = 0; l < c->nlevels; l++) {
        const map_level *ml = &c->level[l];
        p->order[l] = below(c, ml->norders);
        for (unsigned i = 0; i < c->nindices && is_fixed(c, p); i++)
            p->edge[l][i] = (uint8_t)below(c, ml->nedges[i]);
        p->split[l] = below(c, ml->nsplits);
    }
    p->spatial = below(c, spatial_count(c));
}

/* ------------------------------------------------------------------ */
/* Searches */

/* Odometer over every coordinate; 0 when it wraps around. */
static int next_point(const map_ctx *c, map_point *p)
{
    for (unsigned l = c->nlevels; l-- > 0;) {
        const map_level *ml = &c->level[l];
        if (++p->split[l] < ml->nsplits)
            return 1;
        p->split[l] = 0;
        for (unsigned i = c->nindices; i-- > 0 && is_fixed(c, p);) {
            if (++p->edge[l][i] < ml->nedges[i])
                return 1;
            p->edge[l][i] = 0;
        }
        if (++p->order[l] < ml->norders)
            return 1;
        p->order[l] = 0;
    }
    if (++p->spatial < spatial_count(c))
        return 1;
    p->spatial = 0;
    return ++p->strategy < c->nstrategies;
}

static void search_exhaustive(map_ctx *c, tessel_map_result *tmp)
{
    map_point p;
    memset(&p, 0, sizeof(p));
    do {
        if (out_of_time(c))
            return;
        visit(c, &p, tmp);
    } while (next_point(c, &p));
    c->out->complete = 1;
}

static void search_random(map_ctx *c, tessel_map_result *tmp)
{
    map_point p;
    while (!out_of_time(c) && (double)c->nvisited < c->out->space) {
        random_point(c, &p);
        visit(c, &p, tmp);
    }
    c->out->complete = (double)c->nvisited >= c->out->space;
}

/* The best unseen neighbour of p (one coordinate changed: another order,
 * the next edge up or down, one partition step moved between two
 * tensors); its value in *value, 0 when every neighbour was seen. */
static int best_neighbour(map_ctx *c, const map_point *p, map_point *best, double *value,
                          tessel_map_result *tmp)
{
    int found = 0;
    *value = INFINITY;
    map_point q;
#define TRY()                                                                                     \
    do {                                                                                          \
        double v_ = visit(c, &q, tmp);                                                            \
        if (!isnan(v_) && (!found || v_ < *value)) {                                              \
            *best = q;                                                                            \
            *value = v_;                                                                          \
            found = 1;                                                                            \
        }                                                                                         \
    } while (0)
    for (unsigned k = 0; k < c->nstrategies; k++)
        if (k != p->strategy) { /* another strategy; fixed restarts from the smallest tiles */
            q = *p;
            q.strategy = k;
            memset(q.edge, 0, sizeof(q.edge));
            TRY();
        }
    for (unsigned l = 0; l < c->nlevels && !out_of_time(c); l++) {
        const map_level *ml = &c->level[l];
        for (unsigned k = 0; k < ml->norders; k++)
            if (k != p->order[l]) {
                q = *p;
                q.order[l] = k;
                TRY();
            }
        for (unsigned i = 0; i < c->nindices && is_fixed(c, p); i++)
            for (int step = -1; step <= 1; step += 2) {
                int e = (int)p->edge[l][i] + step;
                if (e < 0 || e >= (int)ml->nedges[i])
                    continue;
                q = *p;
                q.edge[l][i] = (uint8_t)e;
                TRY();
            }
        /* splits: neighbours in the composition order (one step apart) */
        for (int step = -1; step <= 1 && ml->nsplits > 1; step += 2) {
            int s = (int)p->split[l] + step;
            if (s < 0 || s >= (int)ml->nsplits)
                continue;
            q = *p;
            q.split[l] = (uint32_t)s;
            TRY();
        }
    }
    /* spatial: the other policies of the split, the next split up or
     * down in enumeration order under the same policy */
    for (unsigned k = 0; c->nspatial && k < c->npolicies && !out_of_time(c); k++)
        if (k != p->spatial % c->npolicies) {
            q = *p;
            q.spatial = p->spatial - p->spatial % c->npolicies + k;
            TRY();
        }
    for (int step = -1; step <= 1 && c->nspatial > 1; step += 2) {
        long s = (long)(p->spatial / c->npolicies) + step;
        if (s < 0 || s >= (long)c->nspatial)
            continue;
        q = *p;
        q.spatial = (uint32_t)s * c->npolicies + p->spatial % c->npolicies;
        TRY();
    }
#undef TRY
    return found;
}

static void search_climb(map_ctx *c, tessel_map_result *tmp)
{
    map_point p, q;
    while (!out_of_time(c) && (double)c->nvisited < c->out->space) {
        c->out->restarts++;
        random_point(c, &p);
        double v = visit(c, &p, tmp);
        if (isnan(v))
            continue;
        double nv;
        while (!out_of_time(c) && best_neighbour(c, &p, &q, &nv, tmp) && nv < v) {
            p = q;
            v = nv;
        }
    }
    c->out->complete = (double)c->nvisited >= c->out->space;
}

/* ------------------------------------------------------------------ */

/* Appends every assignment of factors to indices i.. (a factor at most
 * the index's extent) whose product with `prod` divides n and exceeds 1. */
static int add_splits(map_ctx *c, map_split *sp, unsigned i, uint64_t n, uint64_t prod,
                      const uint64_t *extent)
{
    if (i == c->nindices) {
        if (prod < 2)
            return TESSEL_OK;
        if (c->nspatial == MAP_MAX_SPATIAL)
            return TESSEL_ERANGE;
        c->splits[c->nspatial++] = *sp;
        return TESSEL_OK;
    }
    uint64_t room = n / prod;
    for (uint64_t d = 1; d <= room && d <= extent[i]; d++) {
        if (room % d)
            continue;
        sp->factor[i] = d > 1 ? (unsigned)d : 0;
        int rc = add_splits(c, sp, i + 1, n, prod * d, extent);
        if (rc)
            return rc;
    }
    sp->factor[i] = 0;
    return TESSEL_OK;
}

/* The spatial splits searched: at each searched level whose child (the
 * next level, or the compute's PEs below the innermost) has more than one
 * instance, every factor assignment dividing the instances; and the
 * policies. */
static int setup_spatial(map_ctx *c, const uint64_t *extent, tessel_diag *diag)
{
    const tessel_spec *s = c->spec;
    c->base_split = tessel_spatial_level(s);
    uint32_t mask = c->opt->spatial_policies ? c->opt->spatial_policies : (1u << MAP_POLICIES) - 1;
    for (unsigned k = 0; k < MAP_POLICIES; k++)
        if (mask >> k & 1u)
            c->policy[c->npolicies++] = (int)k;
    if (!c->npolicies || mask >> MAP_POLICIES)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "spatial_policies",
                               "unknown distribution policy bits in the mapper's options");
    c->splits = tessel_alloc_array(s->alloc, MAP_MAX_SPATIAL, sizeof(*c->splits));
    if (!c->splits)
        return tessel_diag_set(diag, TESSEL_ENOMEM, "", 0, 0, "", "out of memory");
    for (unsigned k = 0; k < c->nlevels; k++) {
        unsigned l = c->level[k].level;
        unsigned n = l + 1 < s->nlevels ? s->level[l + 1].instances : s->compute.pes;
        map_split sp;
        memset(&sp, 0, sizeof(sp));
        sp.level = l;
        if (n > 1 && add_splits(c, &sp, 0, n, 1, extent))
            return tessel_diag_set(diag, TESSEL_ERANGE, "", 0, 0, "spatial",
                                   "more than %u spatial splits to search: name fewer levels "
                                   "with --levels", MAP_MAX_SPATIAL);
    }
    if (!c->nspatial)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "spatial",
                               "no spatial split to search: no searched level has a child "
                               "with more than one instance (or PEs below the innermost)");
    return TESSEL_OK;
}

static int setup(map_ctx *c, const uint64_t *extent, tessel_diag *diag)
{
    const tessel_spec *s = c->spec;
    c->nindices = s->workload.nindices;
    c->ntensors = s->workload.ntensors;
    if (c->opt->partition_step < 0 || c->opt->partition_step > 0.5)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "partition_step",
                               "the partition step is a fraction in (0, 0.5], or 0 to keep the "
                               "spec's partitions");
    c->steps = c->opt->partition_step > 0 ? (unsigned)lround(1 / c->opt->partition_step) : 0;
    uint32_t mask = c->opt->strategies ? c->opt->strategies : 1u;
    for (unsigned k = 0; k < TESSEL_STRATEGY_COUNT; k++)
        if (mask >> k & 1u)
            c->strategy[c->nstrategies++] = (tessel_strategy_kind)k;
    if (mask >> TESSEL_STRATEGY_COUNT)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "strategies",
                               "unknown strategy bits in the mapper's options");
    if (c->opt->tile_base == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "tile_base",
                               "the tile base must be positive");
    for (unsigned l = 1; l < s->nlevels; l++) {
        if (c->opt->level_mask && !(c->opt->level_mask & (1u << l)))
            continue;
        int rc = setup_level(c, l, extent, &c->level[c->nlevels], diag);
        if (rc)
            return rc;
        c->nlevels++;
    }
    if (c->nlevels == 0)
        return tessel_diag_set(diag, TESSEL_EINVAL, "", 0, 0, "levels",
                               "no level to search (the spec has only a backing store, or the "
                               "levels chosen are not in it)");
    return c->opt->spatial ? setup_spatial(c, extent, diag) : TESSEL_OK;
}

/* The mapper: enumerate loop orders, tile shapes and partitions, price each with the stat
 * estimator, keep the best feasible point under the objective (and the Pareto set). */
int tessel_map_run(const tessel_spec *spec, const tessel_stat_data *stats,
                   const tessel_energy_db *db, const uint64_t *extent,
                   const tessel_map_options *o, tessel_map_result *out, tessel_diag *diag)
{
    tessel_map_options defaults;
    if (!o) {
        tessel_map_options_init(&defaults);
        o = &defaults;
    }
    memset(out, 0, sizeof(*out));
    out->best_value = INFINITY;
    map_ctx *c = tessel_alloc(spec->alloc, sizeof(*c));
    if (c) {
        c->shapes = NULL;
        c->splits = NULL;
    }
    tessel_map_result *tmp = tessel_alloc(spec->alloc, sizeof(*tmp));
    uint64_t *visited = tessel_alloc_array(spec->alloc, MAP_VISITED_MAX, sizeof(uint64_t));
    int rc = c && tmp && visited ? TESSEL_OK
                                 : tessel_diag_set(diag, TESSEL_ENOMEM, "", 0, 0, "",
                                                   "out of memory");
    if (!rc) {
        memset(c, 0, sizeof(*c));
        memset(visited, 0, MAP_VISITED_MAX * sizeof(uint64_t));
        c->spec = spec;
        c->stats = stats;
        c->db = db;
        c->opt = o;
        c->out = out;
        c->visited = visited;
        c->rng = o->seed;
        /* the summaries are an optimisation: without memory, none */
        if (!o->no_memo && tessel_stat_cache_create(stats, spec->alloc, &c->shapes))
            c->shapes = NULL;
        rc = setup(c, extent, diag);
    }
    if (!rc) {
        out->space = space_size(c);
        tessel_map_search how = o->search;
        if (how == TESSEL_MAP_AUTO)
            how = out->space <= (double)o->exhaustive_limit ? TESSEL_MAP_EXHAUSTIVE
                                                           : TESSEL_MAP_CLIMB;
        out->search = how == TESSEL_MAP_EXHAUSTIVE ? "exhaustive"
                      : how == TESSEL_MAP_RANDOM   ? "random"
                                                   : "climb";
        c->start = c->last_progress = sweep_now();
        if (how == TESSEL_MAP_EXHAUSTIVE)
            search_exhaustive(c, tmp);
        else if (how == TESSEL_MAP_RANDOM)
            search_random(c, tmp);
        else
            search_climb(c, tmp);
        out->seconds = sweep_now() - c->start;
        if (o->progress)
            o->progress(o->progress_ud, out->evaluated, out->space, out->best_value,
                        out->seconds);
        if (isinf(out->best_value))
            rc = tessel_diag_set(diag, TESSEL_EUNSUPPORTED, "", 0, 0, "",
                                 "none of the %llu points evaluated could be estimated (tile "
                                 "edges must be multiples of the statistics' base grid; with "
                                 "--fit, some tile overflowed in every point; %llu could "
                                 "overflow an output partition the estimator does not price "
                                 "at that level)",
                                 (unsigned long long)out->evaluated,
                                 (unsigned long long)out->unpriced);
    }
    if (c) {
        tessel_stat_cache_free(&c->shapes);
        tessel_dealloc(spec->alloc, c->splits);
    }
    tessel_dealloc(spec->alloc, visited);
    tessel_dealloc(spec->alloc, tmp);
    tessel_dealloc(spec->alloc, c);
    return rc;
}

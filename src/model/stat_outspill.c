/* Rule 4 for an output tile inside one visit in the stat estimator
 * (docs/semantics.md rule 4, "Outputs"): the update steps exact_outspill.c
 * counts from the data, estimated from the visit's operand tiles: from
 * their true distinct k and the matrices' counts per k where the
 * statistics hold them (stat_ksteps_*, a step of one coordinate), else from a
 * uniform spread of their nonzeros (stat_visit_steps). */
#define _DEFAULT_SOURCE /* lgamma_r */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stat_tiledfmt.h"

/* lgamma without its write of the global signgam (a data race between a
 * sweep's threads, make tsan); the same value. */
double model_log_gamma(double x)
{
    int sign;
    return lgamma_r(x, &sign);
}

uint64_t stat_step_width(const engine *e, unsigned b)
{
    unsigned kx = e->red[0];
    if (b + 1 >= e->nlev || e->spec_index[kx] < 0)
        return 1;
    return exact_level_edge(e, b + 1, kx);
}

/* Reduction steps of width `step` in reduction tile k of edge tk (the
 * last tile may be cut by the extent). */
double stat_visit_slots(uint64_t k, uint64_t tk, uint64_t extent, uint64_t step)
{
    uint64_t lo = k * tk, hi = lo + tk < extent ? lo + tk : extent;
    uint64_t w = hi > lo ? hi - lo : 1, s = step ? step : 1;
    return (double)((w + s - 1) / s);
}

/* The visit's steps: its `slots` reduction steps each hold a multiply when
 * A's tile (na nonzeros) and B's (nb) both hold a nonzero in it; with the
 * nonzeros spread uniformly, P(a slot of A is empty) = (1 - 1/slots)^na.
 * At least one step: the visit is effectual. */
double stat_visit_steps(double slots, double na, double nb)
{
    if (slots <= 1)
        return 1;
    double ea = exp(na * log1p(-1 / slots)), eb = exp(nb * log1p(-1 / slots));
    double m = floor(slots * (1 - ea) * (1 - eb) + 0.5);
    return m < 1 ? 1 : m;
}

/* Sum over the steps t = 1 .. m - 1 before the visit's last of the bytes
 * beyond the partition, S(t) - part when positive, S growing from b0
 * (before the visit) to b1 (after its last step, which the per-visit
 * charge prices). Each step fills a share of the tile's empty cells, as
 * the homogeneous model's partial tiles do (docs/models/analytic.md):
 * S(t) = full - (full - b0) r^t with r^m = (full - b1) / (full - b0),
 * full the bytes of the whole tile (every cell). A geometric series in
 * closed form; linear when the tile ends full. */
double stat_spill_inside(double b0, double b1, double full, double m, double part)
{
    if (m < 2 || b1 <= part)
        return 0;
    /* linear (d per step) when the tile ends full, or hardly grows (r would
     * round to 1: log r = 0) */
    if (full - b1 <= 1e-9 * full || b1 - b0 <= 1e-9 * full) {
        double d = (b1 - b0) / m, first = 1;
        if (b0 + d <= part)
            first = d > 0 ? floor((part - b0) / d) + 1 : m;
        if (first > m - 1)
            return 0;
        double cnt = m - first;
        return cnt * (b0 - part) + d * (first + m - 1) * cnt / 2;
    }
    double r = pow((full - b1) / (full - b0), 1 / m), first = 1;
    if (b0 + (full - b0) * (1 - r) <= part) /* S(t) > part: r^t < (full - part) / (full - b0) */
        first = floor(log((full - part) / (full - b0)) / log(r)) + 1;
    if (first > m - 1)
        return 0;
    double cnt = m - first;
    return cnt * (full - part) - (full - b0) * pow(r, first) * -expm1(cnt * log(r)) / (1 - r);
}

/* Live groups per tile along the output's rows and columns at boundary
 * bd (exact_live_edge: the order inside a tile), in the canonical roles
 * (mirror: rows are j). */
void stat_live_groups(const engine *e, const boundary *bd, int mirror, double *gi, double *gj)
{
    unsigned xi = e->out.x[0], xj = e->out.x[1];
    double a = ceil((double)bd->tile[xi] / (double)exact_live_edge(e, bd->b, xi, bd->tile[xi]));
    double c = ceil((double)bd->tile[xj] / (double)exact_live_edge(e, bd->b, xj, bd->tile[xj]));
    *gi = mirror ? c : a;
    *gj = mirror ? a : c;
}

/* Whether a visit ending at b1 bytes can spill inside (stat_spill_visit
 * is 0 otherwise): a group's share of the tile exceeds the partition.
 * Callers test it before looking up the visit's operand tiles. */
int stat_spill_visit_over(double b1, double gi, double gj, double part)
{
    double n = gi * gj > 1 ? gi * gj : 1;
    return b1 / n > part;
}

/* Rule 4 inside one visit in the order inside the tile: the tile (A's
 * tile of na nonzeros against B's of nb over `slots` reduction steps,
 * growing from b0 to b1 bytes, full when every cell holds one) is gi x gj
 * live groups, each finished before the next; each takes an equal share
 * of the bytes, A's tile rows (na / gi) and B's columns (nb / gj), and
 * spills at its steps before its last (stat_spill_inside). */
double stat_spill_visit(double slots, double na, double nb, double b0, double b1, double full,
                        double gi, double gj, double part)
{
    double n = gi * gj > 1 ? gi * gj : 1;
    if (!stat_spill_visit_over(b1, gi, gj, part))
        return 0; /* stat_spill_inside's own test, before the steps' exponentials */
    double m = stat_visit_steps(slots, na / (gi > 1 ? gi : 1), nb / (gj > 1 ? gj : 1));
    return n * stat_spill_inside(b0 / n, b1 / n, full / n, m, part);
}

/* Whether a tile-effectual visit (A's and B's tiles both non-empty) holds
 * a multiply, as exact's steps count it: certain when the sample saw an
 * output nonzero first appear in it (grew). Else A's na nonzeros spread
 * uniformly occupy d_A = slots (1 - (1 - 1/slots)^na) of the visit's
 * slots (at least one: the tile is not empty), B's d_B, and two random
 * sets of those sizes miss each other with the hypergeometric chance
 * C(slots - d_A, d_B) / C(slots, d_B) (lgamma for fractional sizes;
 * Gamma's reciprocal takes it smoothly to 0 as d_A + d_B passes slots). A
 * visit without a multiply leaves the tile alone, so only the visits with
 * one spill between visits. Until stop 24 the slots were independent,
 * 1 - (1 - p_A p_B)^slots with p_X = d_X / slots, which lets A's tile be
 * empty in every slot: one nonzero of A against a B tile filling every
 * slot had 1 - (1 - 1/slots)^slots (0.68 at 4 slots) for a certain
 * multiply, and G51's REG visits summed 13 % below their real 87,746
 * (now 3.5 % below). */
double stat_visit_live(double slots, double na, double nb, int grew)
{
    if (grew || slots <= 1)
        return 1;
    double da = -slots * expm1(na * log1p(-1 / slots));
    double db = -slots * expm1(nb * log1p(-1 / slots));
    if (da + db >= slots + 1) /* 1 / Gamma(slots - da - db + 1) = 0 from here on */
        return 1;
    double miss = model_log_gamma(slots - da + 1) + model_log_gamma(slots - db + 1) -
                  model_log_gamma(slots + 1) - model_log_gamma(slots - da - db + 1);
    return -expm1(miss);
}

/* ------------------------------------------------------------------ */
/* The steps from the tiles' reduction lines (issue 18, stop 28; see
 * docs/models/stat.md, "Why KIJ is off"): A's tile covers its true
 * distinct k (its non-empty columns, d_A) and B's its non-empty rows
 * (d_B), not the uniform spread's, and a k is covered in proportion to the
 * matrix's own counts along it (A's column counts w_A, B's row counts
 * w_B), which makes a hub k likely in both: p_X(k) = 1 - e^(-c_X w_X(k))
 * with c_X such that the sum of p_X over the tile's k is d_X, and
 * m = sum_k p_A(k) p_B(k). */

/* One weight (or pair of weights) and how many k of a reduction tile
 * carry it. */
typedef struct ks_val {
    uint32_t wa, wb, n;
} ks_val;

#define KS_SLOTS 512u
#define KS_COVERS_START 16u
#define KS_CACHE_VALUES (UINT64_C(1) << 19) /* 4 MiB of covers per operand at most */
#define KS_UNBUILT UINT32_MAX
#define KS_MEMO 65536u /* visits' step counts kept by a cache's tables, two-way */
#define KS_MEMO_POINT 16384u /* at most, by a point's own */
#define KS_WIDE 8u /* the unpacked memo: 1 / KS_WIDE of the slots of the packed one */
#define KS_MEMO_START 256u /* packed slots in use at first (4 KiB); the unpacked: / KS_WIDE */

/* One visit's step count m by its inputs: a visit of the same reduction
 * tile, lines and groups as an earlier one takes its m without the dot
 * product (bit for bit: m is a function of them). */
typedef struct ks_memo {
    uint64_t t;
    double da, db, gi, gj, m;
} ks_memo;

/* The same for a visit whose inputs are whole and small (ks_pack): its
 * key packed in 64 bits (0: an empty slot), 16 bytes a slot, a two-way
 * pair in one cache line. */
typedef struct ks_pmemo {
    uint64_t key;
    double m;
} ks_pmemo;

/* What a slot of ks_covers holds the cover of. */
typedef struct ks_cover_key {
    uint64_t t; /* UINT64_MAX: an empty slot */
    double d, g;
} ks_cover_key;

/* Per operand, the cover p_X over reduction tile t's pairs for a tile of
 * d lines split in g groups, in KS_SLOTS direct-mapped slots of tk values:
 * the visits of one tile row (A) or column (B) share it across the other
 * side, so a visit is mostly one dot product. */
typedef struct ks_covers {
    ks_cover_key *key; /* per slot, the first `used` set */
    double *p;      /* slots x tk */
    unsigned slots; /* a power of two, at most KS_SLOTS, within KS_CACHE_VALUES */
    /* the slots in use, from KS_COVERS_START doubled (covers_grow) as the
     * misses reach them, so a few covers touch a few pages of p; the
     * misses so far */
    unsigned used;
    uint64_t misses;
    /* c_X per (t, whole d): at t (tk + 1) + d, NaN until solved; per t, the
     * saturated tile's c in groups (sat, NaN until solved) for the d it was
     * solved at (satd) */
    double *c, *sat, *satd;
} ks_covers;

enum { KS_TABLES, KS_GEOM, KS_TILES, KS_VEC };

/* What a stat_ks_cache keeps: its kind, its bytes, when it was last taken
 * (the cache's clock) and how many live stat_ksteps hold it (a thread's
 * tables: at most one; a pool's entry: any number, read-only). A pool's
 * entry is ready once built; until then only the thread that claimed it
 * holds it. */
typedef struct ks_item {
    int kind;
    size_t bytes;
    uint64_t used;
    unsigned busy;
    int ready;
} ks_item;

struct stat_ks_cache;

/* The per-reduction-tile tables of ks_tables below (lens, tab, bw, nbw,
 * bix), built whole by the first thread that needs them and read-only
 * from then on: kept in the pool the threads of a sweep share. */
typedef struct ks_tiles {
    ks_item it;
    const uint64_t *wa, *wb;
    uint64_t K, tk, ext_k;
    uint32_t *lens;
    ks_val *tab;
    uint32_t *bw, *nbw, *bix;
} ks_tiles;

/* What the step count keeps per reduction tile: a function of the k tile
 * edge, the extent and the matrices' counts per k alone, so the design
 * points of one k edge share it (stat_ks_cache). Every value in it,
 * built on first use, depends only on its own inputs (the key of its
 * slot), never on which point or visit asked first: results are the same
 * whether it is new or shared. */
typedef struct ks_tables {
    ks_item it;
    const uint64_t *wa, *wb;
    uint64_t K, tk, ext_k;
    /* per reduction tile t, built on first use: at tab + 3 tk t the
     * distinct w_A (lens[3t]), the distinct w_B (lens[3t+1]) and the
     * distinct pairs with both non-zero (lens[3t+2]) */
    uint32_t *lens;
    ks_val *tab;
    uint64_t *keys;       /* tk words of scratch */
    /* per reduction tile t, at tk t: the distinct w_B among its pairs
     * (nbw[t] of them, ascending) and each pair's index in them, so B's
     * cover takes one exponential per distinct weight, not per pair */
    uint32_t *bw, *nbw;
    uint32_t *bix;
    double *q;            /* tk doubles of scratch: B's cover per distinct weight */
    ks_memo *memo;        /* memo_slots / KS_WIDE slots: inputs ks_pack cannot pack */
    ks_pmemo *pmemo;      /* memo_slots slots, at a cache line in pmemo_mem */
    void *pmemo_mem;
    uint64_t memo_slots;
    /* the slots in use, a prefix of each memo doubled in place (pmemo_grow, umemo_grow)
     * as visits are memoised, so a few visits touch a few pages of the
     * zeroed arrays; and how many visits each has memoised */
    uint64_t pm_slots, pm_fill, um_slots, um_fill;
    ks_covers cov[2];     /* A's, B's */
    ks_tiles *tiles;      /* lens .. bix are these shared ones (NULL: its own) */
    struct stat_ks_cache *pool; /* which holds tiles */
} ks_tables;

/* A point's operand tiles along k: A's tiles with k on rows (its grid
 * transposed: (k tile, i tile)) and the distinct k of each of them and of
 * B's tiles (on the point's own grid of B, (k tile, j tile)). A function
 * of the stored inputs, their tile edges and the mirror, so the points of
 * one tile shape share it; the grids' sizes are checked against the
 * point's as well. */
typedef struct ks_geom {
    ks_item it;
    const stat_input *src[2];
    uint64_t edge[2][2], tk, ext_k, a_rows, a_n, b_rows, b_n;
    int mirror;
    stat_grid ga;
    double *da, *db;
    /* B is A (geom_sym): per tile of ga and of the point's B grid, the
     * share of its nonzeros whose transpose is one too; the canonical
     * output tile's edges and the matrix's order. NULL: not known. */
    double *ra, *rb;
    uint64_t ti, tj, n;
} ks_geom;

struct stat_ksteps {
    const tessel_allocator *alloc;
    const stat_grid *gb;  /* the point's B grid, which gm->db follows */
    ks_geom *gm;
    ks_tables *tb;
    int gm_owned, tb_owned; /* this point's alone (no cache, or they did not fit in it) */
    struct stat_ks_cache *gm_pool; /* which holds gm (shared with other threads) */
};

#define KS_CACHE_ENTRIES 32u
#define KS_CACHE_BUDGET ((size_t)96 << 20) /* per cache (a sweep's thread); twice per pool */
#define KS_POOL_SCALE 2u /* a pool keeps the tables too, which the caches kept */

/* A thread's cache (a tessel_stat_cache's, never used by two threads):
 * the least recently used dropped past KS_CACHE_ENTRIES or KS_CACHE_BUDGET
 * bytes. The geometries, the tables' per-reduction-tile parts and (stop
 * 32) the tables themselves are in `pool`, which the caches of a sweep's
 * threads share: a pool is a stat_ks_cache too, with KS_POOL_SCALE times
 * the limits, its entries (ks_geom, ks_tiles, ks_tables) taken and
 * released under mu; a ks_tables by one point at a time. */
struct stat_ks_cache {
    const tessel_allocator *alloc;
    ks_item *entry[KS_POOL_SCALE * KS_CACHE_ENTRIES];
    unsigned n;
    size_t bytes;
    uint64_t clock, hits, misses;
    struct stat_ks_cache *pool; /* NULL: none (geometries and tables its own) */
    uint64_t built[2];          /* pool entries this cache's thread built: tiles, geometries */
    uint64_t built_vecs;        /* and vectors (stat_ks_vec) */
    uint64_t passed;            /* points that built their own: another thread was building */
    int shared;                 /* a pool: mu guards everything above */
    pthread_mutex_t mu;
};

static void tiles_free(const tessel_allocator *a, ks_tiles *ti)
{
    if (!ti)
        return;
    tessel_dealloc(a, ti->lens);
    tessel_dealloc(a, ti->tab);
    tessel_dealloc(a, ti->bw);
    tessel_dealloc(a, ti->nbw);
    tessel_dealloc(a, ti->bix);
    tessel_dealloc(a, ti);
}

/* A pool's entry it given back by a point or a thread's tables. */
static void pool_release(struct stat_ks_cache *pool, ks_item *it)
{
    pthread_mutex_lock(&pool->mu);
    it->busy--;
    pthread_mutex_unlock(&pool->mu);
}

/* tb and what it holds; `locked`: its pool's lock is held (an eviction
 * from the pool), so its tiles are given back without taking it. */
static void tables_free(const tessel_allocator *a, ks_tables *tb, int locked)
{
    if (!tb)
        return;
    if (tb->tiles && locked) {
        tb->tiles->it.busy--;
    } else if (tb->tiles) {
        pool_release(tb->pool, &tb->tiles->it);
    } else {
        tessel_dealloc(a, tb->lens);
        tessel_dealloc(a, tb->tab);
        tessel_dealloc(a, tb->bw);
        tessel_dealloc(a, tb->nbw);
        tessel_dealloc(a, tb->bix);
    }
    tessel_dealloc(a, tb->keys);
    tessel_dealloc(a, tb->q);
    tessel_dealloc(a, tb->memo);
    tessel_dealloc(a, tb->pmemo_mem);
    for (unsigned x = 0; x < 2; x++) {
        tessel_dealloc(a, tb->cov[x].key);
        tessel_dealloc(a, tb->cov[x].p);
        tessel_dealloc(a, tb->cov[x].c);
        tessel_dealloc(a, tb->cov[x].sat);
        tessel_dealloc(a, tb->cov[x].satd);
    }
    tessel_dealloc(a, tb);
}

static void geom_free(const tessel_allocator *a, ks_geom *gm)
{
    if (!gm)
        return;
    stat_grid_free(a, &gm->ga);
    tessel_dealloc(a, gm->da);
    tessel_dealloc(a, gm->db);
    tessel_dealloc(a, gm->ra);
    tessel_dealloc(a, gm->rb);
    tessel_dealloc(a, gm);
}

/* A vector kept for stat_ks_vec: its key and its n values. */
typedef struct ks_vec {
    ks_item it;
    stat_ks_vec_key key;
    double *v;
} ks_vec;

static void item_free(const tessel_allocator *a, ks_item *it, int locked)
{
    if (it && it->kind == KS_VEC) {
        tessel_dealloc(a, ((ks_vec *)it)->v);
        tessel_dealloc(a, it);
    } else if (it && it->kind == KS_GEOM)
        geom_free(a, (ks_geom *)it);
    else if (it && it->kind == KS_TILES)
        tiles_free(a, (ks_tiles *)it);
    else if (it)
        tables_free(a, (ks_tables *)it, locked);
}

void stat_ksteps_free(stat_ksteps **ksp)
{
    if (!ksp || !*ksp)
        return;
    stat_ksteps *ks = *ksp;
    *ksp = NULL;
    if (ks->gm_owned)
        geom_free(ks->alloc, ks->gm);
    else if (ks->gm)
        pool_release(ks->gm_pool, &ks->gm->it);
    if (ks->tb_owned)
        tables_free(ks->alloc, ks->tb, 0);
    else if (ks->tb) /* back to the pool, for whichever thread needs them next */
        pool_release(ks->tb->pool, &ks->tb->it);
    tessel_dealloc(ks->alloc, ks);
}

/* Where canonical operand X's reduction lines live: the statistic, the
 * base grid it is indexed by, whether k runs along that grid's columns
 * (then walked through a transient transpose), the merge factors along k
 * and along the other side, and the per-k counts. Canonical A is the
 * stored A (its columns) or, mirrored, the stored B transposed (its
 * rows); B likewise. */
typedef struct ks_side {
    const tessel_tile_rows *st;
    const stat_grid *base;
    int k_cols;
    uint64_t fk, fo;
    const uint64_t *w;
} ks_side;

static ks_side side_of(const stat_problem *p, int stored)
{
    const stat_input *in = p->src[stored];
    const uint64_t *tile = in->grid->tile, *edge = p->src_edge[stored];
    if (stored == 0) /* A[i,k]: k is its columns */
        return (ks_side){ in->cols, in->base, 1, edge[1] / tile[1], edge[0] / tile[0],
                          in->line_nnz[1] };
    return (ks_side){ in->rows, in->base, 0, edge[0] / tile[0], edge[1] / tile[1],
                      in->line_nnz[0] };
}

/* Whether the lines of side x's tiles can be had on a grid of g_rows rows
 * (its k tiles): its lines statistic, base grid and counts per k are
 * known, the grid's rows are x's base tiles merged by fk, and A's base
 * grid has an index (stat_grid_transpose_index: at most 2^32 tiles). A
 * function of the statistics and the point alone, checked before anything
 * is allocated, so that a failed build is out of memory, nothing else. */
static int side_applies(const ks_side *x, uint64_t g_rows)
{
    return x->st && x->base && x->w && x->fk && x->fo &&
           g_rows == ((x->k_cols ? x->base->cols : x->base->rows) + x->fk - 1) / x->fk &&
           (!x->k_cols || x->base->n <= UINT32_MAX);
}

/* The lines of g's tiles from side x (side_applies on g's rows); NULL: out
 * of memory. A's columns statistic is indexed by its base tiles, read in
 * the transposed base grid's order through its index
 * (stat_grid_transpose_index), held only here. */
static double *side_lines(const tessel_allocator *a, const ks_side *x, const stat_grid *g)
{
    stat_grid bt;
    memset(&bt, 0, sizeof(bt));
    if (x->k_cols && stat_grid_transpose_index(x->base, a, &bt))
        return NULL;
    const stat_grid *walk = x->k_cols ? &bt : x->base;
    double *d = tessel_alloc_array(a, g->n ? g->n : 1, sizeof(double));
    if (d && stat_tiledfmt_lines(walk, x->st, x->k_cols ? bt.nnz : NULL, x->fk, x->fo, g, a, d)) {
        tessel_dealloc(a, d);
        d = NULL;
    }
    stat_grid_free(a, &bt);
    return d;
}

/* Per tile of g (its rows the k tiles), the share of its nonzeros whose
 * transpose is a nonzero too: side x's base tiles' transposed pairs (sym)
 * and nonzeros summed into the tile holding each; NULL: out of memory. */
static double *side_sym(const tessel_allocator *a, const ks_side *x, const tessel_tile_sym *sym,
                        const stat_grid *g)
{
    const stat_grid *b = x->base;
    uint64_t n = g->n ? g->n : 1;
    double *r = tessel_alloc_zeroed(a, 2 * n, sizeof(double)), *nz = r + n;
    for (uint64_t br = 0; r && br < b->rows; br++)
        for (uint64_t t = b->ptr[br]; t < b->ptr[br + 1]; t++) {
            uint64_t bc = b->col[t];
            uint64_t row = (x->k_cols ? bc : br) / x->fk, col = (x->k_cols ? br : bc) / x->fo;
            uint64_t lo = row < g->rows ? stat_grid_lower(g, row, col) : 0;
            if (row >= g->rows || lo >= g->ptr[row + 1] || g->col[lo] != col)
                continue;
            r[lo] += tessel_tile_sym_at(sym, t);
            nz[lo] += b->nnz[t];
        }
    for (uint64_t t = 0; r && t < g->n; t++)
        r[t] = nz[t] > 0 ? r[t] / nz[t] : 0;
    return r;
}

/* The transposed pairs' shares of gm's tiles (gm->ra, gm->rb) where B is
 * A: one stored matrix in both roles with its pairs counted (both or
 * neither are then known); 0 when they are wanted and memory runs out (the
 * geometry is then not built, as for its lines: a point prices the same
 * whichever allocation fails). */
static int geom_sym(const tessel_allocator *a, ks_geom *gm, const stat_problem *p,
                    const ks_side *sa, const ks_side *sb)
{
    const stat_input *in = p->src[0];
    if (p->src[1] != in || !in->sym || !in->sym->total || in->dims[0] != in->dims[1] ||
        !in->base || !in->base->nnz || in->sym->n != in->base->n || !sa->fk || !sa->fo ||
        !sb->fk || !sb->fo)
        return 1;
    int mirror = p->sample_mirrored;
    gm->ti = mirror ? p->src_edge[1][1] : p->src_edge[0][0];
    gm->tj = mirror ? p->src_edge[0][0] : p->src_edge[1][1];
    gm->n = in->dims[0];
    gm->ra = side_sym(a, sa, in->sym, &gm->ga);
    gm->rb = gm->ra ? side_sym(a, sb, in->sym, &p->b) : NULL;
    if (gm->rb)
        return 1;
    tessel_dealloc(a, gm->ra);
    gm->ra = NULL;
    return 0;
}

/* The covers' arrays of tb (NaN: not solved); 0 when out of memory. */
static int covers_alloc(const tessel_allocator *a, ks_tables *tb)
{
    int got = 1;
    for (unsigned x = 0; x < 2; x++) {
        ks_covers *cv = &tb->cov[x];
        uint64_t fit = KS_CACHE_VALUES / tb->tk, nc = tb->ext_k * (tb->tk + 1);
        /* a power of two (covers_grow doubles the slots in use up to it) */
        cv->slots = KS_SLOTS;
        while (cv->slots > 16 && cv->slots > fit)
            cv->slots /= 2;
        cv->used = KS_COVERS_START < cv->slots ? KS_COVERS_START : cv->slots;
        cv->key = tessel_alloc_array(a, cv->slots, sizeof(ks_cover_key));
        cv->p = tessel_alloc_array(a, cv->slots * tb->tk, sizeof(double));
        cv->c = tessel_alloc_array(a, nc, sizeof(double));
        cv->sat = tessel_alloc_array(a, tb->ext_k, sizeof(double));
        cv->satd = tessel_alloc_array(a, tb->ext_k, sizeof(double));
        got = got && cv->key && cv->p && cv->c && cv->sat && cv->satd;
        tb->it.bytes += (cv->slots * tb->tk + nc + 2 * tb->ext_k) * sizeof(double) +
                        cv->slots * sizeof(ks_cover_key);
        for (unsigned h = 0; cv->key && h < cv->used; h++)
            cv->key[h].t = UINT64_MAX;
        for (uint64_t n = 0; cv->c && n < nc; n++)
            cv->c[n] = NAN;
        for (uint64_t n = 0; cv->sat && cv->satd && n < tb->ext_k; n++)
            cv->sat[n] = cv->satd[n] = NAN;
    }
    return got;
}

/* The per-reduction-tile arrays of tb: ti's (held, released with tb),
 * else its own, built on first use; 0 when out of memory. */
static int tables_tiles(const tessel_allocator *a, ks_tables *tb, ks_tiles *ti)
{
    uint64_t tk = tb->tk, ext_k = tb->ext_k;
    if (ti) {
        tb->lens = ti->lens;
        tb->tab = ti->tab;
        tb->bw = ti->bw;
        tb->nbw = ti->nbw;
        tb->bix = ti->bix;
        return 1;
    }
    tb->lens = tessel_alloc_array(a, 3 * ext_k, sizeof(uint32_t));
    /* tk per list and reduction tile, the last one cut by the extent too */
    tb->tab = tessel_alloc_array(a, 3 * tk * ext_k, sizeof(ks_val));
    tb->bw = tessel_alloc_array(a, tk * ext_k, sizeof(uint32_t));
    tb->nbw = tessel_alloc_array(a, ext_k, sizeof(uint32_t));
    tb->bix = tessel_alloc_array(a, tk * ext_k, sizeof(uint32_t));
    tb->it.bytes += 3 * ext_k * 4 + 3 * tk * ext_k * sizeof(ks_val) + 2 * tk * ext_k * 4 +
                    ext_k * 4;
    if (!tb->lens || !tb->tab || !tb->bw || !tb->nbw || !tb->bix)
        return 0;
    for (uint64_t t = 0; t < 3 * ext_k; t++)
        tb->lens[t] = KS_UNBUILT;
    return 1;
}

/* Empty tables for counts wa, wb along K, k edge tk in ext_k reduction
 * tiles, with a memo of memo_slots visits (a power of two); their
 * per-reduction-tile parts ti's, held from pool (NULL: their own). NULL
 * when out of memory (ti released). */
static ks_tables *tables_create(const tessel_allocator *a, const uint64_t *wa,
                                const uint64_t *wb, uint64_t tk, uint64_t K, uint64_t ext_k,
                                uint64_t memo_slots, ks_tiles *ti, struct stat_ks_cache *pool)
{
    ks_tables *tb = tessel_alloc(a, sizeof(*tb));
    if (!tb) {
        if (ti)
            pool_release(pool, &ti->it);
        return NULL;
    }
    memset(tb, 0, sizeof(*tb));
    *tb = (ks_tables){ .wa = wa, .wb = wb, .K = K, .tk = tk, .ext_k = ext_k,
                       .memo_slots = memo_slots, .tiles = ti, .pool = pool };
    tb->pm_slots = memo_slots < KS_MEMO_START ? memo_slots : KS_MEMO_START;
    tb->um_slots = tb->pm_slots / KS_WIDE;
    tb->keys = tessel_alloc_array(a, tk, sizeof(uint64_t));
    tb->q = tessel_alloc_array(a, tk, sizeof(double));
    /* zeroed: an empty slot's gi (0) matches no visit's (at least 1), an
     * empty packed slot's key (0) none either */
    tb->memo = tessel_alloc_zeroed(a, memo_slots / KS_WIDE, sizeof(ks_memo));
    tb->pmemo_mem = tessel_alloc_zeroed(a, memo_slots + 4, sizeof(ks_pmemo));
    if (tb->pmemo_mem)
        tb->pmemo = (ks_pmemo *)((char *)tb->pmemo_mem + (-(uintptr_t)tb->pmemo_mem & 63));
    tb->it.bytes = sizeof(*tb) + tk * 8 + tk * 8 + memo_slots / KS_WIDE * sizeof(ks_memo) +
                   (memo_slots + 4) * sizeof(ks_pmemo);
    int got = covers_alloc(a, tb);
    got = tables_tiles(a, tb, ti) && got;
    if (!got || !tb->keys || !tb->q || !tb->memo || !tb->pmemo_mem) {
        tables_free(a, tb, 0);
        return NULL;
    }
    return tb;
}

static ks_val *tile_table(ks_tables *tb, uint64_t t);

/* Unbuilt tiles for key's (wa, wb, tk, K, ext_k): the key and the bytes
 * once built; NULL when out of memory. */
static ks_tiles *tiles_key(const tessel_allocator *a, const ks_tiles *key)
{
    ks_tiles *ti = tessel_alloc(a, sizeof(*ti));
    if (!ti)
        return NULL;
    *ti = (ks_tiles){ .it = { .kind = KS_TILES }, .wa = key->wa, .wb = key->wb, .K = key->K,
                      .tk = key->tk, .ext_k = key->ext_k };
    uint64_t tk = ti->tk, ext_k = ti->ext_k;
    ti->it.bytes = sizeof(*ti) + 3 * ext_k * 4 + 3 * tk * ext_k * sizeof(ks_val) +
                   2 * tk * ext_k * 4 + ext_k * 4;
    return ti;
}

/* ti's tables for every reduction tile, as tile_table builds them on first
 * use (through tables that lend ti their arrays); 0 when out of memory. */
static int tiles_build(const tessel_allocator *a, ks_tiles *ti)
{
    ks_tables sh;
    memset(&sh, 0, sizeof(sh));
    sh = (ks_tables){ .wa = ti->wa, .wb = ti->wb, .K = ti->K, .tk = ti->tk,
                      .ext_k = ti->ext_k };
    int ok = tables_tiles(a, &sh, NULL) &&
             (sh.keys = tessel_alloc_array(a, ti->tk, sizeof(uint64_t))) != NULL;
    for (uint64_t t = 0; ok && t < ti->ext_k; t++)
        tile_table(&sh, t);
    tessel_dealloc(a, sh.keys);
    ti->lens = sh.lens;
    ti->tab = sh.tab;
    ti->bw = sh.bw;
    ti->nbw = sh.nbw;
    ti->bix = sh.bix;
    return ok;
}

/* Point p's unbuilt geometry: its key and its bytes once built; NULL when
 * out of memory. */
static ks_geom *geom_key(const tessel_allocator *a, const stat_problem *p)
{
    ks_geom *gm = tessel_alloc(a, sizeof(*gm));
    if (!gm)
        return NULL;
    memset(gm, 0, sizeof(*gm));
    gm->it.kind = KS_GEOM;
    memcpy(gm->src, p->src, sizeof(gm->src));
    memcpy(gm->edge, p->src_edge, sizeof(gm->edge));
    gm->mirror = p->sample_mirrored;
    gm->tk = p->tk;
    gm->ext_k = p->ext_k;
    gm->a_rows = p->a.rows;
    gm->a_n = p->a.n;
    gm->b_rows = p->b.rows;
    gm->b_n = p->b.n;
    /* A's grid transposed: a row per tile column of A, as many tiles */
    gm->it.bytes = sizeof(*gm) + stat_grid_bytes(p->a.cols, p->a.n) +
                   (p->a.n + p->b.n) * sizeof(double) *
                       (p->src[0] == p->src[1] && p->src[0] && p->src[0]->sym ? 3 : 1);
    return gm;
}

/* gm built for point p (sa and sb its canonical operands' sides, which
 * side_applies to A's grid transposed and to B's grid); 0: out of memory. */
static int geom_build(const tessel_allocator *a, ks_geom *gm, const stat_problem *p,
                      const ks_side *sa, const ks_side *sb)
{
    if (!stat_grid_transpose_pattern(&p->a, a, &gm->ga))
        gm->da = side_lines(a, sa, &gm->ga);
    if (gm->da)
        gm->db = side_lines(a, sb, &p->b);
    return gm->db != NULL && geom_sym(a, gm, p, sa, sb);
}

/* Point p's own geometry; NULL as geom_build. */
static ks_geom *geom_create(const tessel_allocator *a, const stat_problem *p, const ks_side *sa,
                            const ks_side *sb)
{
    ks_geom *gm = geom_key(a, p);
    if (gm && !geom_build(a, gm, p, sa, sb)) {
        geom_free(a, gm);
        return NULL;
    }
    return gm;
}

static int geom_fits(const ks_item *it, const void *key)
{
    const ks_geom *gm = (const ks_geom *)it;
    const stat_problem *p = key;
    return gm->src[0] == p->src[0] && gm->src[1] == p->src[1] &&
           !memcmp(gm->edge, p->src_edge, sizeof(gm->edge)) &&
           gm->mirror == p->sample_mirrored && gm->tk == p->tk && gm->ext_k == p->ext_k &&
           gm->a_rows == p->a.rows && gm->a_n == p->a.n && gm->b_rows == p->b.rows &&
           gm->b_n == p->b.n;
}

static int tiles_fit(const ks_item *it, const void *key)
{
    const ks_tiles *ti = (const ks_tiles *)it, *k = key;
    return ti->wa == k->wa && ti->wb == k->wb && ti->tk == k->tk && ti->K == k->K &&
           ti->ext_k == k->ext_k;
}

static int tables_fit(const ks_tables *tb, const uint64_t *wa, const uint64_t *wb, uint64_t tk,
                      uint64_t K, uint64_t ext_k)
{
    return tb->wa == wa && tb->wb == wb && tb->tk == tk && tb->K == K && tb->ext_k == ext_k;
}

static stat_ks_cache *ks_cache_new(const tessel_allocator *a)
{
    stat_ks_cache *c = tessel_alloc(a, sizeof(*c));
    if (c) {
        memset(c, 0, sizeof(*c));
        c->alloc = a;
    }
    return c;
}

int stat_ks_pool_create(const tessel_allocator *a, stat_ks_cache **out)
{
    *out = ks_cache_new(a);
    if (*out && pthread_mutex_init(&(*out)->mu, NULL)) {
        tessel_dealloc(a, *out);
        *out = NULL;
    }
    if (!*out)
        return TESSEL_ENOMEM;
    (*out)->shared = 1;
    return TESSEL_OK;
}

int stat_ks_cache_create(const tessel_allocator *a, stat_ks_cache *pool, stat_ks_cache **out)
{
    *out = ks_cache_new(a);
    if (!*out)
        return TESSEL_ENOMEM;
    (*out)->pool = pool;
    return TESSEL_OK;
}

/* A thread's cache before its pool (its tables hold the pool's tiles); a
 * pool once every cache that shares it is freed. */
void stat_ks_cache_free(stat_ks_cache **c)
{
    if (!c || !*c)
        return;
    /* the tables first: they give back the tiles they hold */
    for (unsigned i = 0; i < (*c)->n; i++)
        if ((*c)->entry[i]->kind == KS_TABLES) {
            item_free((*c)->alloc, (*c)->entry[i], 0);
            (*c)->entry[i] = NULL;
        }
    for (unsigned i = 0; i < (*c)->n; i++)
        item_free((*c)->alloc, (*c)->entry[i], 0);
    if ((*c)->shared)
        pthread_mutex_destroy(&(*c)->mu);
    tessel_dealloc((*c)->alloc, *c);
    *c = NULL;
}

void stat_ks_cache_counts(const stat_ks_cache *c, uint64_t *hits, uint64_t *misses)
{
    *hits = c ? c->hits : 0;
    *misses = c ? c->misses : 0;
}

void stat_ks_cache_built(const stat_ks_cache *c, uint64_t *tiles, uint64_t *geoms,
                         uint64_t *passed)
{
    *tiles = c ? c->built[0] : 0;
    *geoms = c ? c->built[1] : 0;
    *passed = c ? c->passed : 0;
}

/* Drops c's least recently used idle entry; 0 when every entry is busy. */
static int cache_evict(stat_ks_cache *c)
{
    unsigned v = c->n;
    for (unsigned i = 0; i < c->n; i++)
        if (!c->entry[i]->busy && (v == c->n || c->entry[i]->used < c->entry[v]->used))
            v = i;
    if (v == c->n)
        return 0;
    c->bytes -= c->entry[v]->bytes;
    item_free(c->alloc, c->entry[v], c->shared);
    c->entry[v] = c->entry[--c->n];
    return 1;
}

/* it taken from c (busy until its stat_ksteps is freed). */
static void *cache_hold(stat_ks_cache *c, ks_item *it)
{
    it->used = ++c->clock;
    it->busy++;
    return it;
}

/* A new item into c, room made by dropping the least recently used; 0
 * (it freed) when it does not fit. */
static void *cache_insert(stat_ks_cache *c, ks_item *it)
{
    if (!it || it->bytes > KS_CACHE_BUDGET / 2) {
        item_free(c->alloc, it, c->shared);
        return NULL;
    }
    unsigned scale = c->shared ? KS_POOL_SCALE : 1;
    size_t budget = scale * KS_CACHE_BUDGET;
    while ((c->n == scale * KS_CACHE_ENTRIES || c->bytes + it->bytes > budget) &&
           cache_evict(c))
        ;
    if (c->n == scale * KS_CACHE_ENTRIES || c->bytes + it->bytes > budget) {
        item_free(c->alloc, it, c->shared);
        return NULL;
    }
    c->misses++;
    c->entry[c->n++] = it;
    c->bytes += it->bytes;
    return cache_hold(c, it);
}

typedef int (*ks_fits)(const ks_item *it, const void *key);
typedef ks_item *(*ks_make)(const tessel_allocator *a, const void *key);

/* The entry of c's pool of kind that fits key, held; else c's claim on
 * building it (unready, held; *claim set) made by make, NULL when it does
 * not fit in the pool. NULL too when another thread is building it: the
 * point builds its own (counted in c->passed). */
static ks_item *pool_take(stat_ks_cache *c, int kind, ks_fits fits, const void *key,
                          ks_make make, int *claim)
{
    stat_ks_cache *pl = c->pool;
    ks_item *got = NULL;
    *claim = 0;
    pthread_mutex_lock(&pl->mu);
    unsigned i = 0;
    while (i < pl->n && !(pl->entry[i]->kind == kind && fits(pl->entry[i], key)))
        i++;
    if (i < pl->n && pl->entry[i]->ready) {
        pl->hits++;
        got = cache_hold(pl, pl->entry[i]);
    } else if (i < pl->n) {
        c->passed++;
    } else {
        got = cache_insert(pl, make(pl->alloc, key));
        *claim = got != NULL;
    }
    pthread_mutex_unlock(&pl->mu);
    return got;
}

/* The end of c's build of it, claimed from its pool: ready for every
 * thread from now on (it, held), else dropped (NULL). */
static void *pool_built(stat_ks_cache *c, ks_item *it, int ok)
{
    stat_ks_cache *pl = c->pool;
    pthread_mutex_lock(&pl->mu);
    if (ok) {
        it->ready = 1;
        if (it->kind == KS_VEC)
            c->built_vecs++;
        else
            c->built[it->kind == KS_GEOM]++;
    } else {
        unsigned i = 0;
        while (pl->entry[i] != it)
            i++;
        pl->bytes -= it->bytes;
        pl->entry[i] = pl->entry[--pl->n];
        item_free(pl->alloc, it, 1);
    }
    pthread_mutex_unlock(&pl->mu);
    return ok ? it : NULL;
}

static ks_item *make_tiles(const tessel_allocator *a, const void *key)
{
    ks_tiles *ti = tiles_key(a, key);
    return ti ? &ti->it : NULL;
}

static ks_item *make_geom(const tessel_allocator *a, const void *key)
{
    ks_geom *gm = geom_key(a, key);
    return gm ? &gm->it : NULL;
}

/* An idle one of the tables for (wa, wb, tk, K, ext_k) in c's pool, held;
 * NULL when none is. */
static ks_tables *pool_idle_tables(stat_ks_cache *c, const uint64_t *wa, const uint64_t *wb,
                                   uint64_t tk, uint64_t K, uint64_t ext_k)
{
    stat_ks_cache *pl = c->pool;
    ks_tables *got = NULL;
    pthread_mutex_lock(&pl->mu);
    for (unsigned i = 0; i < pl->n && !got; i++) {
        ks_item *it = pl->entry[i];
        if (it->kind == KS_TABLES && !it->busy && tables_fit((const ks_tables *)it, wa, wb, tk,
                                                             K, ext_k))
            got = cache_hold(pl, it);
    }
    pthread_mutex_unlock(&pl->mu);
    return got;
}

/* The tables for (wa, wb, tk, K, ext_k) from c's pool, which the threads
 * of a sweep share and take in turn: a point holds them alone (busy) and
 * gives them back when its stat_ksteps is freed, so a thread's first
 * spilling point of a k edge finds the memo and covers another thread
 * filled (they are caches of functions of their keys: the values are the
 * same whoever filled them). When every such tables is held (threads in
 * points of one k edge at once) new ones go in the pool too, their
 * per-reduction-tile parts from it: a k edge has at most one tables per
 * thread, as when each thread kept its own. NULL when they cannot be
 * kept (the caller builds its own). */
static ks_tables *cache_tables(stat_ks_cache *c, const uint64_t *wa, const uint64_t *wb,
                               uint64_t tk, uint64_t K, uint64_t ext_k)
{
    ks_tables *tb = pool_idle_tables(c, wa, wb, tk, K, ext_k);
    if (tb) {
        c->hits++;
        return tb;
    }
    ks_tiles key = { .wa = wa, .wb = wb, .K = K, .tk = tk, .ext_k = ext_k };
    int claim;
    ks_tiles *ti = (ks_tiles *)pool_take(c, KS_TILES, tiles_fit, &key, make_tiles, &claim);
    if (claim)
        ti = pool_built(c, &ti->it, tiles_build(c->pool->alloc, ti));
    if (!ti)
        return NULL;
    tb = tables_create(c->pool->alloc, wa, wb, tk, K, ext_k, KS_MEMO, ti, c->pool);
    if (!tb)
        return NULL;
    c->misses++;
    pthread_mutex_lock(&c->pool->mu);
    ks_item *it = cache_insert(c->pool, &tb->it);
    pthread_mutex_unlock(&c->pool->mu);
    return (ks_tables *)it;
}

/* Point p's geometry from c's pool, built on a miss by this thread and
 * read by every thread; NULL as pool_take. */
static ks_geom *pool_geom(stat_ks_cache *c, const stat_problem *p, const ks_side *sa,
                          const ks_side *sb)
{
    int claim;
    ks_geom *gm = (ks_geom *)pool_take(c, KS_GEOM, geom_fits, p, make_geom, &claim);
    if (claim)
        gm = pool_built(c, &gm->it, geom_build(c->pool->alloc, gm, p, sa, sb));
    return gm;
}

static int vec_fits(const ks_item *it, const void *key)
{
    const stat_ks_vec_key *a = &((const ks_vec *)it)->key, *b = key;
    return a->p[0] == b->p[0] && a->p[1] == b->p[1] && a->u[0] == b->u[0] &&
           a->u[1] == b->u[1] && a->n == b->n;
}

static ks_item *make_vec(const tessel_allocator *a, const void *key)
{
    ks_vec *v = tessel_alloc(a, sizeof(*v));
    if (!v)
        return NULL;
    memset(v, 0, sizeof(*v));
    v->it.kind = KS_VEC;
    memcpy(&v->key, key, sizeof(v->key));
    v->it.bytes = sizeof(*v) + v->key.n * sizeof(double);
    return &v->it;
}

const double *stat_ks_vec(stat_ks_cache *c, const stat_ks_vec_key *key, stat_ks_vec_fn build,
                          const void *arg, void **hold)
{
    *hold = NULL;
    if (!c || !c->pool)
        return NULL;
    int claim;
    ks_vec *x = (ks_vec *)pool_take(c, KS_VEC, vec_fits, key, make_vec, &claim);
    if (claim) {
        const tessel_allocator *a = c->pool->alloc;
        x->v = tessel_alloc_array(a, key->n ? key->n : 1, sizeof(double));
        x = pool_built(c, &x->it, x->v && !build(arg, a, x->v));
    }
    *hold = x;
    return x ? x->v : NULL;
}

void stat_ks_vec_release(stat_ks_cache *c, void *hold)
{
    if (hold)
        pool_release(c->pool, hold);
}

uint64_t stat_ks_cache_built_vecs(const stat_ks_cache *c)
{
    return c ? c->built_vecs : 0;
}

/* A point's own memo for about `visits` visits: a power of two from 1,024
 * to KS_MEMO_POINT slots (0: KS_MEMO_POINT). */
static uint64_t memo_slots_for(uint64_t visits)
{
    uint64_t n = 1024;
    while (visits && n < KS_MEMO_POINT && n < 2 * visits)
        n *= 2;
    return visits ? n : KS_MEMO_POINT;
}

int stat_ksteps_create_sized(const stat_problem *p, uint64_t visits, stat_ksteps **out)
{
    *out = NULL;
    if (!p->src[0] || !p->src[1] || p->step_k > 1 || !p->tk || !p->ext_k)
        return TESSEL_OK;
    int mirror = p->sample_mirrored;
    ks_side sa = side_of(p, mirror ? 1 : 0), sb = side_of(p, mirror ? 0 : 1);
    /* A's grid transposed has a row per tile column of A */
    if (!side_applies(&sa, p->a.cols) || !side_applies(&sb, p->b.rows))
        return TESSEL_OK;
    const tessel_allocator *a = p->alloc;
    stat_ksteps *ks = tessel_alloc(a, sizeof(*ks));
    if (!ks)
        return TESSEL_ENOMEM;
    memset(ks, 0, sizeof(*ks));
    ks->alloc = a;
    ks->gb = &p->b;
    uint64_t K = p->extent_k ? p->extent_k : p->tk * p->ext_k;
    if (K > p->tk * p->ext_k)
        K = p->tk * p->ext_k;
    stat_ks_cache *c = p->ks_cache;
    if (c && c->pool && (ks->gm = pool_geom(c, p, &sa, &sb)))
        ks->gm_pool = c->pool;
    if (c && c->pool && ks->gm)
        ks->tb = cache_tables(c, sa.w, sb.w, p->tk, K, p->ext_k);
    /* no cache, or what the point needs did not fit in it: its own */
    if (!ks->gm && (ks->gm_owned = 1))
        ks->gm = geom_create(a, p, &sa, &sb);
    if (ks->gm && !ks->tb && (ks->tb_owned = 1))
        ks->tb = tables_create(a, sa.w, sb.w, p->tk, K, p->ext_k, memo_slots_for(visits),
                               NULL, NULL);
    if (!ks->tb) { /* the pool's failures fall to the point's own: these are out of memory */
        stat_ksteps_free(&ks);
        return TESSEL_ENOMEM;
    }
    *out = ks;
    return TESSEL_OK;
}

int stat_ksteps_create(const stat_problem *p, stat_ksteps **out)
{
    return stat_ksteps_create_sized(p, 0, out);
}

/* keys[0 .. n) sorted and run-length coded into out (wa = key >> 32, wb
 * its low half); the runs. */
static int key_order(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static uint32_t runs_of(uint64_t *keys, uint64_t n, ks_val *out)
{
    qsort(keys, n, sizeof(*keys), key_order); /* a tile's k: small, full 64-bit keys */
    uint32_t m = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (m && ((uint64_t)out[m - 1].wa << 32 | out[m - 1].wb) == keys[i]) {
            out[m - 1].n++;
            continue;
        }
        out[m++] = (ks_val){ (uint32_t)(keys[i] >> 32), (uint32_t)keys[i], 1 };
    }
    return m;
}

static uint32_t clamp32(uint64_t w)
{
    return w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
}

/* Reduction tile t's distinct w_B among its np pairs pr, ascending, and
 * each pair's index in them (tb->bw, tb->nbw, tb->bix). */
static void pair_weights_b(ks_tables *tb, uint64_t t, const ks_val *pr, uint32_t np)
{
    uint32_t *bw = tb->bw + tb->tk * t, nb = 0;
    uint32_t *bix = tb->bix + tb->tk * t;
    for (uint32_t i = 0; i < np; i++)
        tb->keys[i] = pr[i].wb;
    qsort(tb->keys, np, sizeof(*tb->keys), key_order);
    for (uint32_t i = 0; i < np; i++)
        if (!nb || bw[nb - 1] != tb->keys[i])
            bw[nb++] = (uint32_t)tb->keys[i];
    tb->nbw[t] = nb;
    for (uint32_t i = 0; i < np; i++) {
        uint32_t lo = 0, hi = nb; /* bw[lo] == pr[i].wb */
        while (hi - lo > 1) {
            uint32_t mid = (lo + hi) / 2;
            if (bw[mid] <= pr[i].wb)
                lo = mid;
            else
                hi = mid;
        }
        bix[i] = lo;
    }
}

/* Reduction tile t's distinct weights and pairs (built once). */
static ks_val *tile_table(ks_tables *tb, uint64_t t)
{
    ks_val *tab = tb->tab + 3 * tb->tk * t;
    if (tb->lens[3 * t] != KS_UNBUILT)
        return tab;
    uint64_t lo = t * tb->tk, hi = lo + tb->tk < tb->K ? lo + tb->tk : tb->K, n = 0;
    for (uint64_t k = lo; k < hi; k++)
        if (tb->wa[k])
            tb->keys[n++] = (uint64_t)clamp32(tb->wa[k]) << 32;
    tb->lens[3 * t] = runs_of(tb->keys, n, tab);
    n = 0;
    for (uint64_t k = lo; k < hi; k++)
        if (tb->wb[k])
            tb->keys[n++] = clamp32(tb->wb[k]);
    tb->lens[3 * t + 1] = runs_of(tb->keys, n, tab + tb->tk);
    n = 0;
    for (uint64_t k = lo; k < hi; k++)
        if (tb->wa[k] && tb->wb[k])
            tb->keys[n++] = (uint64_t)clamp32(tb->wa[k]) << 32 | clamp32(tb->wb[k]);
    tb->lens[3 * t + 2] = runs_of(tb->keys, n, tab + 2 * tb->tk);
    pair_weights_b(tb, t, tab + 2 * tb->tk, tb->lens[3 * t + 2]);
    return tab;
}

/* c with sum over the weights v (low: wb, else wa) of n (1 - e^(-c w)) = d:
 * Newton from the root for the weights' mean, below the root (the sum is
 * concave in w: Jensen), from where the concave sum makes it rise
 * monotonically to it. Infinite when d reaches the k with a weight: every
 * one covered. */
static double solve_scale(const ks_val *v, uint32_t len, int low, double d)
{
    double N = 0, W = 0;
    for (uint32_t i = 0; i < len; i++) {
        N += v[i].n;
        W += (double)v[i].n * (low ? v[i].wb : v[i].wa);
    }
    if (d >= N)
        return INFINITY;
    if (d <= 0 || W <= 0)
        return 0;
    double c = -log1p(-d / N) / (W / N);
    for (int it = 0; it < 100; it++) {
        double f = -d, fp = 0;
        for (uint32_t i = 0; i < len; i++) {
            double w = low ? v[i].wb : v[i].wa, e = exp(-c * w);
            f += v[i].n * (1 - e);
            fp += v[i].n * w * e;
        }
        if (fp <= 0 || f > -1e-7 * d) /* a count: far below its rounding */
            break;
        c -= f / fp;
    }
    return c;
}

/* The covers' slot of (t, d) among n. */
static unsigned cover_slot(uint64_t t, double d, unsigned n)
{
    return (unsigned)((t * 0x9E3779B1u + (uint64_t)(d * 8) * 0x85EBCA77u) % n);
}

/* cv's slots in use doubled in place (both powers of two): a kept cover's
 * slot h of n becomes h or h + n, the latter empty, where it moves with
 * its values. The covers are a cache of a function of their key: their
 * size changes no value. */
static void covers_grow(const ks_tables *tb, ks_covers *cv)
{
    unsigned n = cv->used;
    for (unsigned h = n; h < 2 * n; h++)
        cv->key[h].t = UINT64_MAX;
    for (unsigned h = 0; h < n; h++) {
        ks_cover_key *k = &cv->key[h];
        unsigned to = k->t == UINT64_MAX ? h : cover_slot(k->t, k->d, 2 * n);
        if (to == h)
            continue;
        cv->key[to] = *k;
        memcpy(cv->p + (uint64_t)to * tb->tk, cv->p + (uint64_t)h * tb->tk,
               tb->lens[3 * k->t + 2] * sizeof(double));
        k->t = UINT64_MAX;
    }
    cv->used = 2 * n;
}

/* 1 - e^(-c w / g): a group of 1 / g of the tile's lines covers k. */
static double cover(double c, double w, double g)
{
    return isinf(c) ? 1 : -expm1(-c * w / g);
}

/* Operand x's (0 A, 1 B) cover of reduction tile t's pairs for a tile of d
 * lines in g groups: c_X / g per group; a saturated side split in groups
 * covers a little less than every k. */
static const double *covers_of(ks_tables *tb, unsigned x, uint64_t t, double d, double g)
{
    ks_covers *cv = &tb->cov[x];
    unsigned h = cover_slot(t, d, cv->used);
    double *p = cv->p + (uint64_t)h * tb->tk;
    ks_cover_key *k = &cv->key[h];
    if (k->t == t && k->d == d && k->g == g)
        return p;
    if (++cv->misses >= cv->used && cv->used < cv->slots) {
        covers_grow(tb, cv);
        h = cover_slot(t, d, cv->used);
        p = cv->p + (uint64_t)h * tb->tk;
        k = &cv->key[h];
    }
    ks_val *tab = tile_table(tb, t);
    const ks_val *marg = tab + x * tb->tk, *pr = tab + 2 * tb->tk;
    uint32_t len = tb->lens[3 * t + x], np = tb->lens[3 * t + 2];
    /* a whole d (exact counts) keeps its c; a fractional one (estimated
     * lines) is solved each time */
    int whole = d == floor(d) && d <= (double)tb->tk;
    double *keep = whole ? &cv->c[t * (tb->tk + 1) + (uint64_t)d] : NULL;
    double c = keep && !isnan(*keep) ? *keep : solve_scale(marg, len, (int)x, d);
    if (keep)
        *keep = c;
    if (isinf(c) && g > 1) { /* kept for the d it was solved at: a function of (t, d) */
        if (isnan(cv->sat[t])) {
            cv->sat[t] = solve_scale(marg, len, (int)x, d - 0.5);
            cv->satd[t] = d;
        }
        c = cv->satd[t] == d ? cv->sat[t] : solve_scale(marg, len, (int)x, d - 0.5);
    }
    /* pairs come sorted by w_A: A's cover once per run of one weight; B's
     * once per distinct w_B (the same values: cover is a function of w) */
    if (x == 0) {
        for (uint32_t i = 0; i < np; i++)
            p[i] = i && pr[i].wa == pr[i - 1].wa ? p[i - 1] : cover(c, pr[i].wa, g);
    } else {
        const uint32_t *bw = tb->bw + tb->tk * t;
        const uint32_t *bix = tb->bix + tb->tk * t;
        for (uint32_t j = 0; j < tb->nbw[t]; j++)
            tb->q[j] = cover(c, bw[j], g);
        for (uint32_t i = 0; i < np; i++)
            p[i] = tb->q[bix[i]];
    }
    *k = (ks_cover_key){ t, d, g };
    return p;
}

static int memo_is(const ks_memo *mo, uint64_t t, double da, double db, double gi, double gj)
{
    return mo->t == t && mo->da == da && mo->db == db && mo->gi == gi && mo->gj == gj;
}

/* splitmix64's finaliser: every bit of x in every bit of the hash */
static uint64_t mix64(uint64_t x)
{
    x = (x ^ x >> 30) * 0xBF58476D1CE4E5B9u;
    x = (x ^ x >> 27) * 0x94D049BB133111EBu;
    return x ^ x >> 31;
}

/* A visit's inputs in 64 bits, never 0: a flag, t (17 bits), da and db
 * (16 bits each), gi and gj (7 bits each); 0 when one is fractional or
 * does not fit (the unpacked memo keeps those). */
static uint64_t ks_pack(uint64_t t, double da, double db, double gi, double gj)
{
    if (t >= (1u << 17) || !(da < 65536) || !(db < 65536) || !(gi < 128) || !(gj < 128) ||
        da != floor(da) || db != floor(db) || gi != floor(gi) || gj != floor(gj))
        return 0;
    return UINT64_C(1) << 63 | t << 46 | (uint64_t)da << 30 | (uint64_t)db << 14 |
           (uint64_t)gi << 7 | (uint64_t)gj;
}

/* The unpacked memo's hash of a visit's inputs. */
static uint64_t memo_hash(uint64_t t, double da, double db, double gi, double gj)
{
    return mix64(t * 0x9E3779B97F4A7C15u ^ (uint64_t)(da * 8) * 0x85EBCA77u ^
                 (uint64_t)(db * 8) * 0xC2B2AE3Du ^ (uint64_t)(gi * 3 + gj));
}

/* Before a new m goes in: once the memoised visits reach half the slots in
 * use (and these are fewer than all), the slots in use double in place. A
 * kept visit's pair is its hash masked by the slots: the same pair p or
 * p + n (n the slots before), which is empty (never used, zeroed), so the
 * visits of each pair move up or stay, in their order. The memos are
 * caches of a function: their size changes no m, only its cost. 1: the
 * slots doubled. */
static int pmemo_grow(ks_tables *tb)
{
    uint64_t n = tb->pm_slots;
    if (++tb->pm_fill < n / 2 || n >= tb->memo_slots)
        return 0;
    for (uint64_t p = 0; p < n; p += 2) {
        ks_pmemo *lo = &tb->pmemo[p], *hi = &tb->pmemo[p + n];
        ks_pmemo keep[2] = { lo[0], lo[1] };
        unsigned nl = 0, nh = 0;
        lo[0] = lo[1] = (ks_pmemo){ 0, 0 };
        for (unsigned e = 0; e < 2; e++) {
            if (!keep[e].key)
                continue;
            if (mix64(keep[e].key) & n)
                hi[nh++] = keep[e];
            else
                lo[nl++] = keep[e];
        }
    }
    tb->pm_slots = 2 * n;
    return 1;
}

/* The same for the unpacked memo (an empty slot: gi 0). */
static int umemo_grow(ks_tables *tb)
{
    uint64_t n = tb->um_slots;
    if (++tb->um_fill < n / 2 || n >= tb->memo_slots / KS_WIDE)
        return 0;
    for (uint64_t p = 0; p < n; p += 2) {
        ks_memo *lo = &tb->memo[p], *hi = &tb->memo[p + n];
        ks_memo keep[2] = { lo[0], lo[1] };
        unsigned nl = 0, nh = 0;
        memset(lo, 0, 2 * sizeof(*lo));
        for (unsigned e = 0; e < 2; e++) {
            const ks_memo *k = &keep[e];
            if (k->gi == 0)
                continue;
            if (memo_hash(k->t, k->da, k->db, k->gi, k->gj) & n)
                hi[nh++] = *k;
            else
                lo[nl++] = *k;
        }
    }
    tb->um_slots = 2 * n;
    return 1;
}

/* m for reduction tile t by its dot product, without the memos. */
static double steps_dot(ks_tables *tb, uint64_t t, double da, double db, double gi, double gj)
{
    const double *pa = covers_of(tb, 0, t, da, gi), *pb = covers_of(tb, 1, t, db, gj);
    const ks_val *pr = tb->tab + 3 * tb->tk * t + 2 * tb->tk;
    uint32_t np = tb->lens[3 * t + 2];
    double m = 0;
    for (uint32_t i = 0; i < np; i++)
        m += pr[i].n * pa[i] * pb[i];
    return m < 1 ? 1 : m;
}

/* m for reduction tile t whose A tile covers da k and B tile db, split
 * into gi and gj groups (stat_live_groups). The memos are two-way: a visit
 * looks in a pair of slots, and a new m goes first in its pair, the older
 * one second (two keys of one pair taken in turn, common over a sweep's
 * points, both stay). Whole inputs go to the packed memo (a pair is 32
 * bytes in one cache line), the others to the unpacked one. The slots are
 * a power of two: a mask, not a division, picks the pair. */
static double steps_of(ks_tables *tb, uint64_t t, double da, double db, double gi, double gj)
{
    uint64_t pk = ks_pack(t, da, db, gi, gj);
    if (pk) {
        ks_pmemo *po = &tb->pmemo[mix64(pk) & (tb->pm_slots - 2)];
        if (po[0].key == pk)
            return po[0].m;
        if (po[1].key == pk)
            return po[1].m;
        if (pmemo_grow(tb))
            po = &tb->pmemo[mix64(pk) & (tb->pm_slots - 2)];
        po[1] = po[0];
        po[0] = (ks_pmemo){ pk, steps_dot(tb, t, da, db, gi, gj) };
        return po[0].m;
    }
    ks_memo *mo = &tb->memo[memo_hash(t, da, db, gi, gj) & (tb->um_slots - 2)];
    if (memo_is(&mo[0], t, da, db, gi, gj))
        return mo[0].m;
    if (memo_is(&mo[1], t, da, db, gi, gj))
        return mo[1].m;
    if (umemo_grow(tb))
        mo = &tb->memo[memo_hash(t, da, db, gi, gj) & (tb->um_slots - 2)];
    mo[1] = mo[0];
    mo[0] = (ks_memo){ t, da, db, gi, gj, steps_dot(tb, t, da, db, gi, gj) };
    return mo[0].m;
}

/* Lines of tile (row, col) of g from d (-1 when the tile is empty), its
 * index in g at *at. */
static double lines_at(const stat_grid *g, const double *d, uint64_t row, uint64_t col,
                       uint64_t *at)
{
    if (row >= g->rows)
        return -1;
    uint64_t lo = stat_grid_lower(g, row, col);
    *at = lo;
    return lo < g->ptr[row + 1] && g->col[lo] == col ? d[lo] : -1;
}

/* Where B is A, a visit to output tile (r, q) whose rows I meet its
 * columns J: an entry (i, k) of A's tile, i in I and J, whose transpose
 * (k, i) is a nonzero puts k in B's tile's k too, and so does an entry
 * (k, j) of B's, j in I and J, in A's. So about s = max(ov_A rho_A d_A,
 * ov_B rho_B d_B) of the k are shared for sure (ov_X: the share of the
 * tile's rows, resp. columns, in the overlap; rho_X: its nonzeros' share
 * with their transpose), s <= min(d_A, d_B); the others are taken as
 * independent: m moves from the independent count toward min(d_A, d_B) in
 * proportion, m' = s + (1 - s / min) m (docs/models/stat.md, "The step
 * count on near-symmetric tiles"). Tiles split in live groups keep m. */
static double sym_steps(const ks_geom *gm, uint64_t r, uint64_t q, uint64_t ia, uint64_t ib,
                        double da, double db, double gi, double gj, double m)
{
    if (gi > 1 || gj > 1)
        return m;
    uint64_t i0 = r * gm->ti, j0 = q * gm->tj;
    uint64_t i1 = i0 + gm->ti < gm->n ? i0 + gm->ti : gm->n;
    uint64_t j1 = j0 + gm->tj < gm->n ? j0 + gm->tj : gm->n;
    uint64_t lo = i0 > j0 ? i0 : j0, hi = i1 < j1 ? i1 : j1;
    if (hi <= lo || i1 <= i0 || j1 <= j0)
        return m;
    double ov = (double)(hi - lo), mn = da < db ? da : db;
    double sa = ov / (double)(i1 - i0) * gm->ra[ia] * da;
    double sb = ov / (double)(j1 - j0) * gm->rb[ib] * db;
    double sh = sa > sb ? sa : sb;
    if (sh > mn)
        sh = mn;
    double out = sh + (1 - sh / mn) * m;
    return out > m ? out : m;
}

double stat_ksteps_steps(stat_ksteps *ks, uint64_t r, uint64_t k, uint64_t q, double gi,
                         double gj)
{
    if (!ks || k >= ks->tb->ext_k)
        return -1;
    uint64_t ia = 0, ib = 0;
    double da = lines_at(&ks->gm->ga, ks->gm->da, k, r, &ia);
    double db = lines_at(ks->gb, ks->gm->db, k, q, &ib);
    if (da < 1 || db < 1)
        return -1;
    double m = steps_of(ks->tb, k, da, db, gi > 1 ? gi : 1, gj > 1 ? gj : 1);
    return ks->gm->ra ? sym_steps(ks->gm, r, q, ia, ib, da, db, gi, gj, m) : m;
}

double stat_spill_visit_at(stat_ksteps *ks, uint64_t r, uint64_t k, uint64_t q, double slots,
                           double na, double nb, double b0, double b1, double full, double gi,
                           double gj, double part)
{
    double n = gi * gj > 1 ? gi * gj : 1;
    if (!stat_spill_visit_over(b1, gi, gj, part))
        return 0;
    double m = slots > 1 ? stat_ksteps_steps(ks, r, k, q, gi, gj) : -1;
    if (m < 0)
        return stat_spill_visit(slots, na, nb, b0, b1, full, gi, gj, part);
    /* a fractional count of steps: between the charges of its two whole
     * neighbours, as an expectation over them */
    double lo = floor(m), f = m - lo;
    double c = stat_spill_inside(b0 / n, b1 / n, full / n, lo, part);
    if (f > 0)
        c = (1 - f) * c + f * stat_spill_inside(b0 / n, b1 / n, full / n, lo + 1, part);
    return n * c;
}

/* The output side of the stat estimator's closed form at nested
 * boundaries (stat_nested.c has the inputs and the entry point): output
 * pairs visited, their runs, the write-backs and the nonzeros they carry,
 * and rule 4's spill of output tiles that outgrow Z's partition, from A's
 * and B's tile grids and the output sample.
 *
 * Runs (DESIGN.md rule 2, as exact_walk.c defines them): a run is a
 * maximal sequence of consecutive effectual iterations, in the composite
 * loop order of levels 1 .. b, on one output tile. Every iteration of
 * Z(I, J) inside one coarse k block (the k digits placed before Z's
 * innermost digit, stat_nested_block) shares the key prefix up to that
 * digit, and only k digits follow it: such a "group" is contiguous in
 * the composite order. Two groups merge into one run when they are
 * adjacent among the non-empty groups and belong to the same tile (only
 * non-effectual iterations lie between them). The groups come from a
 * symbolic product of the level-b tile grids (cost: the tile-level
 * multiplies, never the nonzero-level ones), sorted by composite key. */
#include <math.h>
#include <string.h>

#include "stat_closed.h"
#include "stat_nested.h"

/* Tile-level multiplies above which the groups are not enumerated: the
 * runs then come from the pair walk (no merges) or the independence
 * estimate, both upper bounds. */
#define NESTED_GROUP_BUDGET (UINT64_C(1) << 27)

/* The groups in pair-major order: ((pair * nblk + blk) << 1) | 1 when the
 * group ends its run (the next non-empty group in the composite order
 * belongs to another tile, or there is none). */
typedef struct out_runs {
    uint64_t n, nblk;
    uint64_t *pk;
    double pairs, merges;
} out_runs;

/* Rule 4 for the output: what the spill adds and reports. */
typedef struct out_spill {
    double data, meta;       /* spilled bytes, written out and read back each */
    double overflow_wb;      /* write-backs of a tile larger than the partition */
    double worst;            /* the largest tile written back (bytes) */
} out_spill;

/* Output tiles are priced affinely between an empty and a full tile, as
 * stat_spmspm.c's output (exact for the single-name formats). */
typedef struct zprice {
    double d0, m0, per_d, per_m;
    double cells; /* a tile holds at most this many nonzeros */
    uint64_t part;
} zprice;

/* A sampled pair's weighted nonzeros can exceed its tile's cells when the
 * sample is partial (weights above 1): the tile is full then. */
static double znnz(const zprice *z, double nnz)
{
    return nnz < z->cells ? nnz : z->cells;
}

static double zbytes(const zprice *z, double nnz)
{
    return z->d0 + z->m0 + znnz(z, nnz) * (z->per_d + z->per_m);
}

static uint64_t blk_of(const nested *n, uint64_t k)
{
    return n->cf_k == UINT64_MAX ? 0 : k / n->cf_k;
}

static int bitsets_init(nested *n)
{
    const tessel_allocator *a = n->e->alloc;
    n->words = (n->ext_k + 63) / 64;
    n->arows = stat_zeroed(a, n->ext_i * n->words, sizeof(uint64_t));
    n->bcols = stat_zeroed(a, n->ext_j * n->words, sizeof(uint64_t));
    if (!n->arows || !n->bcols)
        return TESSEL_ENOMEM;
    for (uint64_t i = 0; i < n->a.rows; i++)
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t];
            n->arows[i * n->words + k / 64] |= UINT64_C(1) << (k % 64);
        }
    for (uint64_t k = 0; k < n->b.rows && k < n->ext_k; k++)
        for (uint64_t t = n->b.ptr[k]; t < n->b.ptr[k + 1]; t++) {
            uint64_t j = n->b.col[t];
            n->bcols[j * n->words + k / 64] |= UINT64_C(1) << (k % 64);
        }
    return TESSEL_OK;
}

/* Effectual coarse k blocks of output pair (i, j), ascending, into blk;
 * returns how many. One step per block, not per effectual K. */
static uint64_t pair_blocks(const nested *n, uint64_t i, uint64_t j, uint64_t *blk)
{
    const uint64_t *x = &n->arows[i * n->words], *y = &n->bcols[j * n->words];
    uint64_t cnt = 0, k = stat_nested_next_common(x, y, n->words, 0);
    while (k != UINT64_MAX) {
        uint64_t b = blk_of(n, k);
        blk[cnt++] = b;
        if (n->cf_k == UINT64_MAX || (b + 1) * n->cf_k >= n->ext_k)
            break;
        k = stat_nested_next_common(x, y, n->words, (b + 1) * n->cf_k);
    }
    return cnt;
}

/* Output pairs visited and their runs, without the bitsets: per A tile
 * row and coarse k block, the output columns are the union of the B tile
 * rows met, taken as independent (as stat_estimate_pairs). */
static void estimate_runs(const nested *n, double *pairs, double *runs)
{
    double J = (double)n->ext_j;
    *pairs = *runs = 0;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        double empty = 1, sum = 0, bempty = 1, bsum = 0;
        uint64_t blk = UINT64_MAX;
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t], b = blk_of(n, k);
            double r = (double)n->n_b[k];
            if (b != blk) {
                double u = J * (1 - bempty);
                *runs += u < bsum ? u : bsum;
                bempty = 1, bsum = 0, blk = b;
            }
            empty *= 1 - r / J;
            sum += r;
            bempty *= 1 - r / J;
            bsum += r;
        }
        double u = J * (1 - bempty);
        *runs += u < bsum ? u : bsum;
        u = J * (1 - empty);
        *pairs += u < sum ? u : sum;
    }
}

/* The runs of every pair walked over all i x j pairs (no merges): the
 * fallback when the symbolic product is over budget. */
static void walk_runs(const nested *n, uint64_t *blk, double *pairs, double *runs)
{
    *pairs = *runs = 0;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        if (n->a.ptr[i] == n->a.ptr[i + 1])
            continue;
        for (uint64_t j = 0; j < n->ext_j; j++) {
            uint64_t c = pair_blocks(n, i, j, blk);
            *pairs += c ? 1 : 0;
            *runs += (double)c;
        }
    }
}

/* The groups (output pair, coarse k block holding an effectual K) by a
 * symbolic product of A's tile rows with B's: per tile row I, the k
 * ascend, so a pair's blocks arrive in order and one stamp per column J
 * finds a new group. Each group as the composite loop key of its block's
 * start, which orders the groups as the walk meets them. */
static int collect_groups(const nested *n, model_vec *keys, double *pairs)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t *stamp = stat_zeroed(a, n->ext_j + 1, sizeof(uint64_t));
    uint64_t *last = stat_zeroed(a, n->ext_j + 1, sizeof(uint64_t));
    int rc = stamp && last ? TESSEL_OK : TESSEL_ENOMEM;
    uint64_t np = 0;
    for (uint64_t i = 0; !rc && i < n->a.rows; i++)
        for (uint64_t t = n->a.ptr[i]; !rc && t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t];
            if (k >= n->b.rows)
                continue;
            uint64_t b = blk_of(n, k), c[NX] = { 0 };
            c[XI] = i;
            c[XK] = n->cf_k == UINT64_MAX ? 0 : b * n->cf_k;
            for (uint64_t u = n->b.ptr[k]; !rc && u < n->b.ptr[k + 1]; u++) {
                uint64_t j = n->b.col[u];
                if (stamp[j] != i + 1) {
                    stamp[j] = i + 1;
                    np++;
                } else if (last[j] == b) {
                    continue;
                }
                last[j] = b;
                c[XJ] = j;
                rc = model_vec_push(keys, exact_loop_key(&n->bd, c));
            }
        }
    tessel_dealloc(a, stamp);
    tessel_dealloc(a, last);
    *pairs = (double)np;
    return rc;
}

/* Sorts the groups into the composite order, marks the ones whose run
 * continues into the next group (the same tile, nothing effectual in
 * between) and lays them out pair-major in r->pk. */
static int order_runs(const nested *n, model_vec *keys, out_runs *r)
{
    uint64_t max = 0;
    for (uint64_t g = 0; g < keys->n; g++)
        max = keys->v[g] > max ? keys->v[g] : max;
    tessel_sort_u64_inplace(keys->v, keys->n, max);
    r->n = keys->n;
    r->pk = tessel_alloc_array(n->e->alloc, keys->n + 1, sizeof(uint64_t));
    if (!r->pk)
        return TESSEL_ENOMEM;
    uint64_t c[NX], pair = 0, blk = 0;
    if (keys->n) {
        exact_loop_decode(&n->bd, keys->v[0], c);
        pair = c[XI] * n->ext_j + c[XJ];
        blk = blk_of(n, c[XK]);
    }
    uint64_t maxpk = 0;
    for (uint64_t g = 0; g < keys->n; g++) {
        uint64_t next = UINT64_MAX, nblk = 0;
        if (g + 1 < keys->n) {
            exact_loop_decode(&n->bd, keys->v[g + 1], c);
            next = c[XI] * n->ext_j + c[XJ];
            nblk = blk_of(n, c[XK]);
        }
        int ends = next != pair;
        r->merges += ends ? 0 : 1;
        r->pk[g] = ((pair * r->nblk + blk) << 1) | (uint64_t)ends;
        maxpk = r->pk[g] > maxpk ? r->pk[g] : maxpk;
        pair = next, blk = nblk;
    }
    tessel_sort_u64_inplace(r->pk, r->n, maxpk);
    return TESSEL_OK;
}

/* The runs, merges included; 1 when they were found, 0 when over budget
 * (r untouched). */
static int find_runs(const nested *n, out_runs *r, int *found)
{
    double E = 0;
    for (uint64_t k = 0; k < n->ext_k; k++)
        E += (double)n->n_a[k] * (double)n->n_b[k];
    r->nblk = n->cf_k == UINT64_MAX ? 1 : (n->ext_k + n->cf_k - 1) / n->cf_k;
    /* pk's packing needs pairs x blocks x 2 below 2^64 */
    long double space = (long double)n->ext_i * (long double)n->ext_j * (long double)r->nblk;
    *found = 0;
    if (E > (double)NESTED_GROUP_BUDGET || space >= 9.2e18L)
        return TESSEL_OK;
    model_vec keys = { .alloc = n->e->alloc };
    int rc = collect_groups(n, &keys, &r->pairs);
    if (!rc)
        rc = order_runs(n, &keys, r);
    model_vec_free(&keys);
    *found = !rc;
    return rc;
}

/* First index in pk[0 .. n) with pk >= v. */
static uint64_t lower(const uint64_t *pk, uint64_t n, uint64_t v)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (pk[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A pair's groups: their blocks and, per group, the runs that end at or
 * after it (blk and suf hold nblk + 1 entries). Returns how many. */
static uint64_t pair_groups(const out_runs *r, uint64_t pair, uint64_t *blk, uint64_t *suf)
{
    uint64_t from = lower(r->pk, r->n, (pair * r->nblk) << 1);
    uint64_t to = lower(r->pk, r->n, ((pair + 1) * r->nblk) << 1), cnt = to - from;
    suf[cnt] = 0;
    for (uint64_t g = cnt; g-- > 0;) {
        blk[g] = (r->pk[from + g] >> 1) % r->nblk;
        suf[g] = suf[g + 1] + (r->pk[from + g] & 1u);
    }
    return cnt;
}

/* First of blk[0 .. cnt) >= b. */
static uint64_t first_at(const uint64_t *blk, uint64_t cnt, uint64_t b)
{
    uint64_t lo = 0, hi = cnt;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (blk[mid] < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The sample's cell c as a level-b output pair and reduction tile K;
 * 0 when it falls outside the level-b grids. */
static int cell_at(const nested *n, const stat_output_sample *s, uint64_t c, uint64_t *pair,
                   uint64_t *k)
{
    uint64_t fi = n->ea[0] / s->base[0], fj = n->eb[1] / s->base[1], fk = n->ea[1] / s->base[2];
    uint64_t i = s->ci[c] / fi, j = s->cj[c] / fj;
    if (i >= n->ext_i || j >= n->ext_j)
        return 0;
    *pair = i * n->ext_j + j;
    *k = s->ck[c] / fk;
    return 1;
}

/* Runs of its tile from the block of its first multiply on, summed over
 * the sample's nonzeros (weighted): the nonzeros the write-backs carry.
 * With r, the runs (merges included); else the pair walk's blocks. */
static double sample_written(const nested *n, const stat_output_sample *s, const out_runs *r,
                             uint64_t *blk, uint64_t *suf)
{
    uint64_t last = UINT64_MAX, cnt = 0;
    double sum = 0;
    for (uint64_t g = 0; g < s->ngroups; g++) {
        uint64_t c = s->gstart[g], pair, k;
        if (!cell_at(n, s, c, &pair, &k))
            continue;
        if (pair != last) {
            if (r) {
                cnt = pair_groups(r, pair, blk, suf);
            } else {
                cnt = pair_blocks(n, pair / n->ext_j, pair % n->ext_j, blk);
                for (uint64_t q = 0; q <= cnt; q++)
                    suf[q] = cnt - q;
            }
        }
        last = pair;
        for (; c < s->gstart[g + 1]; c++)
            if (cell_at(n, s, c, &pair, &k))
                sum += (double)suf[first_at(blk, cnt, blk_of(n, k))] * s->weight[c];
    }
    return sum;
}

/* A visit that leaves its run open with a tile of `bytes` (meta of them
 * metadata) over the partition: the excess spills out and comes back at
 * the next visit, with exact_walk.c's truncation (price_spills). */
static void spill_visit(const zprice *z, double nnz, out_spill *sp)
{
    nnz = znnz(z, nnz);
    double meta = z->m0 + nnz * z->per_m, total = z->d0 + nnz * z->per_d + meta;
    if (total <= (double)z->part)
        return;
    double extra = total - (double)z->part, m = floor(extra * meta / total);
    sp->data += extra - m;
    sp->meta += m;
}

/* One pair whose final tile overflows: its effectual K in order (A's
 * tile row I against B's tile column J), the partial nonzeros after each
 * from the sample's steps st / wt (sorted, ns entries). A visit ends its
 * run when it is its block's last and the group's run ends there. */
static void pair_spills(const nested *n, const stat_grid *bt, const out_runs *r, uint64_t pair,
                        const uint64_t *st, const double *wt, uint64_t ns, uint64_t *blk,
                        uint64_t *suf, const zprice *z, out_spill *sp)
{
    uint64_t i = pair / n->ext_j, j = pair % n->ext_j, cnt = pair_groups(r, pair, blk, suf);
    const uint64_t *x = &n->a.col[n->a.ptr[i]], *y = &bt->col[bt->ptr[j]];
    uint64_t nx = n->a.ptr[i + 1] - n->a.ptr[i], ny = bt->ptr[j + 1] - bt->ptr[j];
    uint64_t p = 0, q = 0, c = 0, g = 0;
    double cum = 0;
    while (p < nx && q < ny) {
        if (x[p] < y[q]) {
            p++;
            continue;
        }
        if (y[q] < x[p]) {
            q++;
            continue;
        }
        uint64_t k = x[p++];
        q++;
        while (c < ns && st[c] <= k)
            cum += wt[c++];
        /* the next effectual K, to see whether this one closes its block */
        uint64_t p2 = p, q2 = q, next = UINT64_MAX;
        while (p2 < nx && q2 < ny && next == UINT64_MAX) {
            if (x[p2] < y[q2])
                p2++;
            else if (y[q2] < x[p2])
                q2++;
            else
                next = x[p2];
        }
        uint64_t b = blk_of(n, k);
        while (g < cnt && blk[g] < b)
            g++;
        int closes = next == UINT64_MAX || blk_of(n, next) != b;
        int ends = closes && g < cnt && suf[g] != suf[g + 1];
        if (ends) {
            if (zbytes(z, cum) > (double)z->part)
                sp->overflow_wb += 1;
        } else {
            spill_visit(z, cum, sp);
        }
    }
}

/* The sample's weight per output pair; the largest final tile, and the
 * pairs whose final tile outgrows the partition (partial tiles are never
 * larger than their final one, so only those can spill). */
static int pair_totals(const nested *n, const stat_output_sample *s, model_map *final)
{
    int rc = TESSEL_OK;
    for (uint64_t c = 0; !rc && c < s->ncells; c++) {
        uint64_t pair, k;
        if (cell_at(n, s, c, &pair, &k))
            rc = model_map_add(final, pair, s->weight[c]);
    }
    return rc;
}

/* Groups the overflowing pairs' sampled weights by (pair, K), sorted,
 * into keys / steps. */
static int overflow_steps(const nested *n, const stat_output_sample *s, const model_map *final,
                          const zprice *z, model_vec *keys, model_map *steps)
{
    int rc = TESSEL_OK;
    for (uint64_t c = 0; !rc && c < s->ncells; c++) {
        uint64_t pair, k;
        if (!cell_at(n, s, c, &pair, &k) ||
            zbytes(z, model_map_weight(final, pair)) <= (double)z->part)
            continue;
        uint64_t key = pair * n->ext_k + k;
        if (model_map_find(steps, key) == UINT64_MAX && model_vec_push(keys, key))
            rc = TESSEL_ENOMEM;
        if (!rc)
            rc = model_map_add(steps, key, s->weight[c]);
    }
    if (!rc && keys->n)
        tessel_sort_u64_inplace(keys->v, keys->n, UINT64_MAX);
    return rc;
}

/* Rule 4 for output tiles at boundary b (DESIGN.md rule 4; Tailors §3.3,
 * §6.2), from the output sample as stat_spmspm.c does at boundary 1: the
 * largest tile, the write-backs of tiles over the partition and, with the
 * runs known, the spill after every visit that does not end its run.
 * Without the runs (over budget) only the final write-backs are counted
 * and no spill is priced: a lower bound. */
static int output_spills(nested *n, const stat_output_sample *s, const out_runs *r,
                         const zprice *z, uint64_t *blk, uint64_t *suf, out_spill *sp)
{
    const tessel_allocator *a = n->e->alloc;
    model_map final = { .alloc = a }, steps = { .alloc = a };
    model_vec keys = { .alloc = a };
    int rc = pair_totals(n, s, &final);
    double most = 0, over = 0;
    for (uint64_t q = 0; !rc && q < final.cap; q++) {
        if (final.keys[q] == UINT64_MAX)
            continue;
        double w = model_bits_double(final.vals[q]);
        most = w > most ? w : most;
        over += zbytes(z, w) > (double)z->part ? 1 : 0;
    }
    if (!rc && final.n)
        sp->worst = zbytes(z, most);
    if (!rc && over > 0 && !r)
        sp->overflow_wb = over;
    if (!rc && over > 0 && r)
        rc = overflow_steps(n, s, &final, z, &keys, &steps);
    stat_grid bt;
    memset(&bt, 0, sizeof(bt));
    uint64_t *st = NULL;
    double *wt = NULL;
    if (!rc && keys.n) {
        rc = stat_grid_transpose(&n->b, a, &bt);
        st = tessel_alloc_array(a, keys.n, sizeof(uint64_t));
        wt = tessel_alloc_array(a, keys.n, sizeof(double));
        if (!rc && (!st || !wt))
            rc = TESSEL_ENOMEM;
    }
    for (uint64_t b = 0; !rc && b < keys.n;) {
        uint64_t pair = keys.v[b] / n->ext_k, e = b;
        for (; e < keys.n && keys.v[e] / n->ext_k == pair; e++) {
            st[e - b] = keys.v[e] % n->ext_k;
            wt[e - b] = model_map_weight(&steps, keys.v[e]);
        }
        pair_spills(n, &bt, r, pair, st, wt, e - b, blk, suf, z, sp);
        b = e;
    }
    tessel_dealloc(a, st);
    tessel_dealloc(a, wt);
    stat_grid_free(a, &bt);
    model_vec_free(&keys);
    model_map_free(&final);
    model_map_free(&steps);
    return rc;
}

static void zprice_init(nested *n, zprice *z)
{
    engine *e = n->e;
    tile_cost cz;
    exact_tile_cost_init(e, &n->bd, &e->out, &cz);
    uint64_t cells = n->bd.tile[XI] * n->bd.tile[XJ], d0, m0, d1, m1;
    exact_tile_bytes(&cz, 0, NULL, &d0, &m0);
    exact_tile_bytes(&cz, cells ? cells : 1, NULL, &d1, &m1);
    z->d0 = (double)d0;
    z->m0 = (double)m0;
    z->per_d = ((double)d1 - (double)d0) / (double)(cells ? cells : 1);
    z->per_m = ((double)m1 - (double)m0) / (double)(cells ? cells : 1);
    z->cells = (double)(cells ? cells : 1);
    z->part = exact_partition_bytes(e, n->bd.b, e->out.spec_tensor);
}

/* The write-backs, read-backs and the bytes they move, the spill added
 * to both directions (as stat_spmspm.c's output_spills). */
static void output_traffic(const zprice *z, const stat_output_sample *s, const out_spill *sp,
                           stat_outcome *o)
{
    double pairs = o->out_pairs, runs = o->z_writebacks, nnz = s->nnz, written = o->out_nnz;
    if (written < nnz)
        written = nnz;
    double read = written - nnz;
    o->z_updates = runs - pairs;
    o->z_out_data = written * z->per_d + sp->data;
    o->z_out_meta = runs * z->m0 + written * z->per_m + sp->meta;
    o->z_in_data = read * z->per_d + sp->data;
    o->z_in_meta = o->z_updates * z->m0 + read * z->per_m + sp->meta;
    o->z_spill_data = sp->data;
    o->z_spill_meta = sp->meta;
    o->z_overflow_writebacks = sp->overflow_wb;
    o->z_worst = sp->worst;
    o->out_nnz = nnz;
}

/* Rule 4's report for Z at boundary b (stat_nested.c's store leaves
 * these fields to this file): as exact_walk.c fills them. */
static void store_spill(nested *n, const zprice *z, const stat_outcome *o)
{
    tessel_traffic *tz = &n->e->res->traffic[n->bd.b][0];
    tz->bumped_bytes = model_count(o->z_spill_data + o->z_spill_meta);
    tz->overflow_bytes = 2 * tz->bumped_bytes;
    tz->overflow_tiles = model_count(o->z_overflow_writebacks);
    tz->worst_tile_bytes = model_count(o->z_worst);
    tz->partition_bytes = z->part;
}

/* Pairs, runs and written nonzeros the old way (no merges): the pair
 * walk within its budget, else the independence estimate. */
static int runs_without_groups(nested *n, const stat_output_sample *s, uint64_t *blk,
                               uint64_t *suf, double *pairs, double *runs, double *written)
{
    long double cost = (long double)n->ext_i * (long double)n->ext_j *
                       (long double)((n->ext_k + 63) / 64);
    if (cost <= (long double)NESTED_BITSET_BUDGET) {
        if (bitsets_init(n))
            return TESSEL_ENOMEM;
        walk_runs(n, blk, pairs, runs);
        *written = sample_written(n, s, NULL, blk, suf);
        return TESSEL_OK;
    }
    /* linear growth of a pair's partial tile over its runs (eq. 19) */
    estimate_runs(n, pairs, runs);
    *written = *pairs > 0 ? s->nnz * (*runs / *pairs + 1) / 2 : s->nnz;
    return TESSEL_OK;
}

int stat_nested_output(nested *n, const stat_output_sample *s, stat_outcome *o)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t *blk = tessel_alloc_array(a, n->ext_k + 2, sizeof(uint64_t));
    uint64_t *suf = tessel_alloc_array(a, n->ext_k + 2, sizeof(uint64_t));
    out_runs r;
    memset(&r, 0, sizeof(r));
    int found = 0, rc = blk && suf ? find_runs(n, &r, &found) : TESSEL_ENOMEM;
    double pairs = 0, runs = 0, written = 0;
    if (!rc && found) {
        pairs = r.pairs;
        runs = (double)r.n - r.merges;
        written = sample_written(n, s, &r, blk, suf);
    } else if (!rc) {
        rc = runs_without_groups(n, s, blk, suf, &pairs, &runs, &written);
    }
    zprice z;
    zprice_init(n, &z);
    out_spill sp;
    memset(&sp, 0, sizeof(sp));
    /* partial tiles never outgrow the full tile: nothing can spill */
    int may_spill = z.part && zbytes(&z, z.cells) > (double)z.part;
    if (!rc && may_spill)
        rc = output_spills(n, s, found ? &r : NULL, &z, blk, suf, &sp);
    if (!rc) {
        o->out_pairs = pairs;
        o->z_writebacks = runs;
        o->out_nnz = written; /* output_traffic sets the nonzeros */
        output_traffic(&z, s, &sp, o);
        store_spill(n, &z, o);
    }
    tessel_dealloc(a, r.pk);
    tessel_dealloc(a, blk);
    tessel_dealloc(a, suf);
    return rc;
}

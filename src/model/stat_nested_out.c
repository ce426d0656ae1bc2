/* The output side of the stat estimator's closed form at nested
 * boundaries (stat_nested.c has the inputs and the entry point): output
 * pairs visited, their runs, the write-backs and the nonzeros they carry,
 * and rule 4's spill of output tiles that outgrow Z's partition, from A's
 * and B's tile grids and the output sample.
 *
 * Runs (docs/semantics.md rule 2, as exact_walk.c defines them): a run is a
 * maximal sequence of consecutive effectual iterations, in the composite
 * loop order of levels 1 .. b, on one output tile. Every iteration of
 * Z(I, J) inside one coarse k block (the k digits placed before Z's
 * innermost digit, stat_nested_block) shares the key prefix up to that
 * digit, and only k digits follow it: such a "group" is contiguous in
 * the composite order. Two groups merge into one run when they are
 * adjacent among the non-empty groups and belong to the same tile (only
 * non-effectual iterations lie between them). The groups come from a
 * symbolic product of the level-b tile grids (cost: the tile-level
 * multiplies, never the nonzero-level ones) and are not stored: two
 * groups are neighbours exactly when one is the last group under a key
 * prefix and the other the first under the next non-empty sibling
 * prefix, so the first and last group per prefix of each splitting k
 * digit (outer tiles: few) find every merge (join_splits). */
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "stat_closed.h"
#include "stat_nested.h"

/* Tile-level multiplies above which the groups are not enumerated, and
 * bitset words above which the pairs' blocks are not walked: the runs
 * then come from the pair walk (no merges) or the independence estimate,
 * both upper bounds. */
#define NESTED_GROUP_BUDGET (UINT64_C(1) << 28)
#define NESTED_WORDS_BUDGET (UINT64_C(1) << 25)
/* Outer prefixes up to which a splitting k digit keeps dense arrays over
 * its whole prefix space; past it the split keeps only the prefixes that
 * hold a group (a hash of them, sparse_see), up to NESTED_SPARSE_BUDGET
 * of them (24-48 B each while collected: 200-400 MB at the budget), past
 * which the runs fall back to the upper bounds. */
#define NESTED_PREFIX_BUDGET (UINT64_C(1) << 24)
#define NESTED_SPARSE_BUDGET (UINT64_C(1) << 23)
/* Prefixes up to which a split also keeps the output pair of its least
 * and greatest group, so that join_splits compares them instead of
 * decoding the keys. */
#define NESTED_PAIR_BUDGET (UINT64_C(1) << 18)
/* Output pairs up to which join_splits keeps a bitset of the pairs that
 * hold a merged group (8 MiB). */
#define NESTED_MERGED_PAIRS_BUDGET (UINT64_C(1) << 26)

/* One k digit placed before Z's innermost digit: the prefix of the
 * composite key through it is key / below; prefix / radix is its parent.
 * lo / hi: the smallest and largest group key per prefix. */
typedef struct split {
    uint64_t below, radix, space;
    uint64_t *nlo, *hi; /* nlo: ~ the lowest key (0: none yet), so both start zeroed
                         * and the pages of unseen prefixes are never touched */
    /* Narrow (below < 2^32, so a key under prefix p is p * below plus a
     * 32-bit remainder): nlo32 = UINT32_MAX - the lowest remainder, hi32 =
     * 1 + the highest (0: none yet), 8 B per prefix instead of 16; nlo and
     * hi are then NULL. */
    uint32_t *nlo32, *hi32;
    uint64_t *lo_pair, *hi_pair;     /* their pairs i * ext_j + j (NULL: decode) */
    uint64_t *pre_i, *pre_j, *pre_k; /* the prefix as a sum of parts, as the key */
    /* Sparse (space past NESTED_PREFIX_BUDGET; the dense arrays are then
     * NULL): one entry per prefix that holds a group, ew words each in
     * ent (nent of them, room for cent): the prefix, then (ew 2, narrow)
     * the least and greatest key's remainders as the low and high 32 bits
     * of one word, or (ew 3) the two keys; found from the prefix by a hash
     * of 32-bit entry indices (slot, nslot a power of two, at most half
     * full, UINT32_MAX empty). err: 1 past NESTED_SPARSE_BUDGET entries,
     * TESSEL_ENOMEM when out of memory (the collection goes on unrecorded). */
    int sparse, err;
    unsigned ew;
    const tessel_allocator *alloc;
    uint64_t *ent, nent, cent;
    uint32_t *slot;
    uint64_t nslot;
} split;

/* The runs of Z at boundary b: groups (a pair's iterations in one coarse
 * k block), the groups whose run continues into the next group (keys in
 * `merged`), and the composite key of a group as key_i[I] + key_j[J] +
 * key_k[block]. */
typedef struct out_runs {
    double groups, pairs, merges;
    model_map merged;
    uint64_t *key_i, *key_j, *key_k, nblk, ext_j;
    /* per tile row I: its groups, pairs and merges (written_ratio's
     * covariate); NULL past the memory of ext_i doubles */
    double *row_groups, *row_pairs, *row_merges;
    /* bit i * ext_j + j: pair (i, j) has a merged group (NULL: not kept,
     * every pair's groups are looked up in `merged`) */
    uint64_t *merged_pairs;
    unsigned nsplit;
    split sp[NX * NLEV];
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

/* u[w] |= row[w] for w < wj (row apart from u). */
static inline void or_row(uint64_t *restrict u, const uint64_t *restrict row, uint64_t wj)
{
    for (uint64_t w = 0; w < wj; w++)
        u[w] |= row[w];
}

/* ORs into u (wj words) the j bitsets bb of A's row-i tiles from *t on
 * whose k falls in block b (below kr), and moves *t past them. */
static void or_block(const nested *n, uint64_t i, uint64_t *t, uint64_t b, const uint64_t *bb,
                     uint64_t wj, uint64_t kr, uint64_t *u)
{
    for (; *t < n->a.ptr[i + 1] && blk_of(n, n->a.col[*t]) == b; (*t)++) {
        uint64_t k = n->a.col[*t];
        if (k >= kr)
            continue;
        or_row(u, bb + k * wj, wj);
    }
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
    uint64_t cnt = 0;
    if (n->cf_k != UINT64_MAX && n->cf_k % 64 == 0) {
        /* blocks of whole words: a block is effectual when any word is */
        uint64_t per = n->cf_k / 64;
        for (uint64_t w0 = 0, b = 0; w0 < n->words; w0 += per, b++) {
            uint64_t end = w0 + per < n->words ? w0 + per : n->words, any = 0;
            for (uint64_t w = w0; w < end && !any; w++)
                any = x[w] & y[w];
            if (any)
                blk[cnt++] = b;
        }
        return cnt;
    }
    uint64_t k = stat_nested_next_common(x, y, n->words, 0);
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

/* The composite key's part from engine index x at level-b tile v: x's
 * digits weighted by the radices after them. exact_loop_key is the sum
 * of the parts of i, j and k. */
static uint64_t key_part(const boundary *bd, unsigned x, uint64_t v)
{
    uint64_t k = 0;
    for (unsigned i = 0; i < bd->ndigits; i++) {
        const digit *d = &bd->d[i];
        uint64_t w = 0;
        if (d->x == x) {
            w = v / d->div;
            if (!d->first)
                w %= d->radix;
        }
        k = k * d->radix + w;
    }
    return k;
}

static void runs_free(const tessel_allocator *a, out_runs *r)
{
    tessel_dealloc(a, r->key_i);
    tessel_dealloc(a, r->key_j);
    tessel_dealloc(a, r->key_k);
    tessel_dealloc(a, r->row_groups);
    tessel_dealloc(a, r->merged_pairs);
    for (unsigned q = 0; q < r->nsplit; q++) {
        tessel_dealloc(a, r->sp[q].nlo);
        tessel_dealloc(a, r->sp[q].hi);
        tessel_dealloc(a, r->sp[q].nlo32);
        tessel_dealloc(a, r->sp[q].hi32);
        tessel_dealloc(a, r->sp[q].lo_pair);
        tessel_dealloc(a, r->sp[q].hi_pair);
        tessel_dealloc(a, r->sp[q].pre_i);
        tessel_dealloc(a, r->sp[q].pre_j);
        tessel_dealloc(a, r->sp[q].pre_k);
        tessel_dealloc(a, r->sp[q].ent);
        tessel_dealloc(a, r->sp[q].slot);
    }
    model_map_free(&r->merged);
}

/* The key tables and one split per k digit placed before Z's innermost
 * digit (the digits whose change can end a run of Z); *ok = 0 when a
 * split's prefixes are too many to track. */
static int runs_init(const nested *n, out_runs *r, int *ok)
{
    const tessel_allocator *a = n->e->alloc;
    const boundary *bd = &n->bd;
    r->merged.alloc = a;
    *ok = 0;
    int last = -1;
    for (unsigned d = 0; d < bd->ndigits; d++)
        if ((bd->d[d].x == XI || bd->d[d].x == XJ) && bd->d[d].radix > 1)
            last = (int)d;
    for (int d = 0; d < last; d++) {
        if (bd->d[d].x != XK || bd->d[d].radix <= 1)
            continue;
        long double space = 1;
        uint64_t below = 1;
        for (int e = 0; e <= d; e++)
            space *= (long double)bd->d[e].radix;
        for (unsigned e = (unsigned)d + 1; e < bd->ndigits; e++)
            below *= bd->d[e].radix;
        if (space >= (long double)UINT64_MAX)
            return TESSEL_OK;
        split *sp = &r->sp[r->nsplit++];
        sp->below = below;
        sp->radix = bd->d[d].radix;
        sp->space = (uint64_t)space;
        if (space > (long double)NESTED_PREFIX_BUDGET) {
            sp->sparse = 1;
            sp->ew = below < UINT32_MAX ? 2 : 3;
            sp->alloc = a;
        } else if (below < UINT32_MAX) {
            sp->nlo32 = stat_zeroed(a, sp->space, sizeof(uint32_t));
            sp->hi32 = stat_zeroed(a, sp->space, sizeof(uint32_t));
            if (!sp->nlo32 || !sp->hi32)
                return TESSEL_ENOMEM;
        } else {
            sp->nlo = stat_zeroed(a, sp->space, sizeof(uint64_t));
            sp->hi = stat_zeroed(a, sp->space, sizeof(uint64_t));
            if (!sp->nlo || !sp->hi)
                return TESSEL_ENOMEM;
        }
        if (!sp->sparse && sp->space <= NESTED_PAIR_BUDGET) {
            sp->lo_pair = tessel_alloc_array(a, sp->space, sizeof(uint64_t));
            sp->hi_pair = stat_zeroed(a, sp->space, sizeof(uint64_t));
            if (!sp->lo_pair || !sp->hi_pair)
                return TESSEL_ENOMEM;
        }
    }
    r->ext_j = n->ext_j;
    r->key_i = tessel_alloc_array(a, n->ext_i + 1, sizeof(uint64_t));
    r->key_j = tessel_alloc_array(a, n->ext_j + 1, sizeof(uint64_t));
    r->key_k = tessel_alloc_array(a, r->nblk + 1, sizeof(uint64_t));
    r->row_groups = stat_zeroed(a, 3 * n->ext_i + 1, sizeof(double));
    if (!r->key_i || !r->key_j || !r->key_k || !r->row_groups)
        return TESSEL_ENOMEM;
    r->row_pairs = r->row_groups + n->ext_i;
    r->row_merges = r->row_pairs + n->ext_i;
    for (uint64_t i = 0; i < n->ext_i; i++)
        r->key_i[i] = key_part(bd, XI, i);
    for (uint64_t j = 0; j < n->ext_j; j++)
        r->key_j[j] = key_part(bd, XJ, j);
    for (uint64_t b = 0; b < r->nblk; b++)
        r->key_k[b] = key_part(bd, XK, n->cf_k == UINT64_MAX ? 0 : b * n->cf_k);
    /* a prefix is the key's leading digits: each part's own leading
     * digits, summed, so no division per group */
    for (unsigned q = 0; q < r->nsplit; q++) {
        split *sp = &r->sp[q];
        sp->pre_i = tessel_alloc_array(a, n->ext_i + 1, sizeof(uint64_t));
        sp->pre_j = tessel_alloc_array(a, n->ext_j + 1, sizeof(uint64_t));
        sp->pre_k = tessel_alloc_array(a, r->nblk + 1, sizeof(uint64_t));
        if (!sp->pre_i || !sp->pre_j || !sp->pre_k)
            return TESSEL_ENOMEM;
        for (uint64_t i = 0; i < n->ext_i; i++)
            sp->pre_i[i] = r->key_i[i] / sp->below;
        for (uint64_t j = 0; j < n->ext_j; j++)
            sp->pre_j[j] = r->key_j[j] / sp->below;
        for (uint64_t b = 0; b < r->nblk; b++)
            sp->pre_k[b] = r->key_k[b] / sp->below;
    }
    *ok = 1;
    return TESSEL_OK;
}

/* Whether prefix p of split sp holds a group; its least and greatest key. */
static inline int split_seen(const split *sp, uint64_t p)
{
    return sp->nlo32 ? sp->nlo32[p] != 0 : sp->nlo[p] != 0;
}

static inline uint64_t split_lo(const split *sp, uint64_t p)
{
    return sp->nlo32 ? p * sp->below + (UINT32_MAX - sp->nlo32[p]) : ~sp->nlo[p];
}

static inline uint64_t split_hi(const split *sp, uint64_t p)
{
    return sp->hi32 ? p * sp->below + sp->hi32[p] - 1 : sp->hi[p];
}

static uint64_t sparse_hash(uint64_t p)
{
    p ^= p >> 33;
    p *= UINT64_C(0xff51afd7ed558ccd);
    p ^= p >> 33;
    return p;
}

/* The hash's slot for prefix p: its entry's, or the empty one where it
 * goes. */
static uint64_t sparse_slot(const split *sp, uint64_t p)
{
    uint64_t mask = sp->nslot - 1, s = sparse_hash(p) & mask;
    for (uint32_t e; (e = sp->slot[s]) != UINT32_MAX; s = (s + 1) & mask)
        if (sp->ent[(uint64_t)e * sp->ew] == p)
            break;
    return s;
}

/* Room for one more entry: the hash doubled (the entries hashed again
 * from their prefixes) and the entries' array grown as needed. */
static int sparse_room(split *sp)
{
    const tessel_allocator *a = sp->alloc;
    if (2 * (sp->nent + 1) > sp->nslot) {
        uint64_t cap = sp->nslot ? 2 * sp->nslot : 1024;
        uint32_t *slot = tessel_alloc_array(a, cap, sizeof(uint32_t));
        if (!slot)
            return TESSEL_ENOMEM;
        memset(slot, 0xff, cap * sizeof(uint32_t));
        tessel_dealloc(a, sp->slot);
        sp->slot = slot;
        sp->nslot = cap;
        for (uint64_t e = 0; e < sp->nent; e++)
            sp->slot[sparse_slot(sp, sp->ent[e * sp->ew])] = (uint32_t)e;
    }
    if (sp->nent == sp->cent) {
        uint64_t cap = sp->cent ? 2 * sp->cent : 1024;
        uint64_t *ent = tessel_realloc_array(a, sp->ent, cap * sp->ew, sizeof(uint64_t));
        if (!ent)
            return TESSEL_ENOMEM;
        sp->ent = ent;
        sp->cent = cap;
    }
    return TESSEL_OK;
}

/* split_see for a sparse split: prefix p's entry, made on its first
 * group; sp->err set (and nothing recorded) past the budget or memory. */
static void sparse_see(split *sp, uint64_t p, uint64_t lo, uint64_t hi)
{
    if (sp->err)
        return;
    if (sparse_room(sp)) {
        sp->err = TESSEL_ENOMEM;
        return;
    }
    uint64_t s = sparse_slot(sp, p), *x;
    if (sp->slot[s] == UINT32_MAX) {
        if (sp->nent >= NESTED_SPARSE_BUDGET) {
            sp->err = 1;
            return;
        }
        sp->slot[s] = (uint32_t)sp->nent;
        x = sp->ent + sp->nent++ * sp->ew;
        x[0] = p;
        if (sp->ew == 2) {
            x[1] = (lo - p * sp->below) | (hi - p * sp->below) << 32;
        } else {
            x[1] = lo;
            x[2] = hi;
        }
        return;
    }
    x = sp->ent + (uint64_t)sp->slot[s] * sp->ew;
    if (sp->ew == 2) {
        uint64_t l = x[1] & UINT32_MAX, h = x[1] >> 32;
        l = lo - p * sp->below < l ? lo - p * sp->below : l;
        h = hi - p * sp->below > h ? hi - p * sp->below : h;
        x[1] = l | h << 32;
        return;
    }
    x[1] = lo < x[1] ? lo : x[1];
    x[2] = hi > x[2] ? hi : x[2];
}

/* Keys lo and hi (pairs plo and phi) under prefix p of split sp. */
static void split_see(split *sp, uint64_t p, uint64_t lo, uint64_t hi, uint64_t plo, uint64_t phi)
{
    if (sp->sparse) {
        sparse_see(sp, p, lo, hi);
        return;
    }
    if (sp->nlo32) { /* lo and hi are p * below plus their remainders */
        uint32_t nlo = (uint32_t)(UINT32_MAX - (lo - p * sp->below));
        uint32_t hi1 = (uint32_t)(hi - p * sp->below + 1);
        if (nlo > sp->nlo32[p]) {
            sp->nlo32[p] = nlo;
            if (sp->lo_pair)
                sp->lo_pair[p] = plo;
        }
        if (hi1 > sp->hi32[p]) {
            sp->hi32[p] = hi1;
            if (sp->hi_pair)
                sp->hi_pair[p] = phi;
        }
        return;
    }
    if (~lo > sp->nlo[p]) {
        sp->nlo[p] = ~lo;
        if (sp->lo_pair)
            sp->lo_pair[p] = plo;
    }
    if (hi > sp->hi[p]) { /* a key of 0 is pair 0, as hi_pair starts */
        sp->hi[p] = hi;
        if (sp->hi_pair)
            sp->hi_pair[p] = phi;
    }
}

/* One group (tile row i, column j, block b): the first and last group
 * under each prefix of every split, by the composite key of its block's
 * start. */
static void visit_group(out_runs *r, uint64_t i, uint64_t j, uint64_t b)
{
    uint64_t key = r->key_i[i] + r->key_j[j] + r->key_k[b];
    r->groups += 1;
    r->row_groups[i] += 1;
    for (unsigned q = 0; q < r->nsplit; q++) {
        split *sp = &r->sp[q];
        uint64_t p = sp->pre_i[i] + sp->pre_j[j] + sp->pre_k[b];
        split_see(sp, p, key, key, r->ext_j * i + j, r->ext_j * i + j);
    }
}

/* The groups (output pair, coarse k block holding an effectual K) by a
 * symbolic product of A's tile rows with B's: per tile row I, the k
 * ascend, so a pair's blocks arrive in order and one stamp per column J
 * finds a new group. Cost: the tile-level multiplies. */
static int groups_by_stamps(const nested *n, out_runs *r)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t *stamp = stat_zeroed(a, n->ext_j + 1, sizeof(uint64_t));
    uint64_t *last = stat_zeroed(a, n->ext_j + 1, sizeof(uint64_t));
    if (!stamp || !last) {
        tessel_dealloc(a, stamp);
        tessel_dealloc(a, last);
        return TESSEL_ENOMEM;
    }
    uint64_t np = 0;
    for (uint64_t i = 0; i < n->a.rows; i++)
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t];
            if (k >= n->b.rows)
                continue;
            uint64_t b = blk_of(n, k);
            for (uint64_t u = n->b.ptr[k]; u < n->b.ptr[k + 1]; u++) {
                uint64_t j = n->b.col[u];
                if (stamp[j] != i + 1) {
                    stamp[j] = i + 1;
                    np++;
                    r->row_pairs[i] += 1;
                } else if (last[j] == b) {
                    continue;
                }
                last[j] = b;
                visit_group(r, i, j, b);
            }
        }
    tessel_dealloc(a, stamp);
    tessel_dealloc(a, last);
    r->pairs = (double)np;
    return TESSEL_OK;
}

/* Whether key_j (and so every split's prefix of it) never decreases in j:
 * then a run of columns with one prefix is a contiguous range whose least
 * key is its first column and its greatest its last. */
static int keys_monotone(const nested *n, const out_runs *r)
{
    for (uint64_t j = 1; j < n->ext_j; j++)
        if (r->key_j[j] < r->key_j[j - 1])
            return 0;
    return 1;
}

/* Last set bit of u in [from, to), to > from, known to hold one. */
static uint64_t last_set(const uint64_t *u, uint64_t from, uint64_t to)
{
    uint64_t w = (to - 1) / 64;
    uint64_t m = u[w] & (~UINT64_C(0) >> (63 - (to - 1) % 64));
    while (!m && w > from / 64)
        m = u[--w];
    return w * 64 + 63 - (uint64_t)__builtin_clzll(m);
}

/* First set bit of u at or after from (wj words), UINT64_MAX when none:
 * stat_nested_next_common(u, u, ...), inlined for visit_union's ranges. */
static inline uint64_t next_set(const uint64_t *u, uint64_t wj, uint64_t from)
{
    uint64_t w = from / 64;
    if (w >= wj)
        return UINT64_MAX;
    uint64_t m = u[w] & (~UINT64_C(0) << (from % 64));
    while (!m) {
        if (++w >= wj)
            return UINT64_MAX;
        m = u[w];
    }
    return w * 64 + (uint64_t)__builtin_ctzll(m);
}

/* First set bit of u in [from, to), to > from; UINT64_MAX when none.
 * Reads only the words of the range. */
static inline uint64_t first_in(const uint64_t *u, uint64_t from, uint64_t to)
{
    uint64_t w = from / 64, wl = (to - 1) / 64;
    uint64_t m = u[w] & (~UINT64_C(0) << (from % 64));
    for (;;) {
        if (w == wl)
            m &= ~UINT64_C(0) >> (63 - (to - 1) % 64);
        if (m)
            return w * 64 + (uint64_t)__builtin_ctzll(m);
        if (w == wl)
            return UINT64_MAX;
        m = u[++w];
    }
}

/* Last set bit of u in [from, to), to > from; UINT64_MAX when none. */
static inline uint64_t last_in(const uint64_t *u, uint64_t from, uint64_t to)
{
    uint64_t w = (to - 1) / 64, wf = from / 64;
    uint64_t m = u[w] & (~UINT64_C(0) >> (63 - (to - 1) % 64));
    for (;;) {
        if (w == wf)
            m &= ~UINT64_C(0) << (from % 64);
        if (m)
            return w * 64 + 63 - (uint64_t)__builtin_clzll(m);
        if (w == wf)
            return UINT64_MAX;
        m = u[--w];
    }
}

/* The groups of tile row i and block b, the columns of union u (wj
 * words): their count, and per split the least and greatest key under
 * each prefix, one range of columns with one prefix at a time (segment
 * ends seg[q][j]). */
static void visit_union(out_runs *r, uint64_t i, uint64_t b, const uint64_t *u, uint64_t wj,
                        uint64_t *const *seg)
{
    uint64_t cnt = 0;
    for (uint64_t w = 0; w < wj; w++)
        cnt += stat_bits_set(u[w]);
    if (!cnt)
        return;
    r->groups += (double)cnt;
    r->row_groups[i] += (double)cnt;
    for (unsigned q = 0; q < r->nsplit; q++) {
        split *sp = &r->sp[q];
        uint64_t base = r->key_i[i] + r->key_k[b], pbase = sp->pre_i[i] + sp->pre_k[b];
        const uint64_t *sg = seg[q], *pj = sp->pre_j, *kj = r->key_j;
        uint64_t row = r->ext_j * i;
        for (uint64_t j = next_set(u, wj, 0); j != UINT64_MAX;) {
            uint64_t end = sg[j], jl = last_set(u, j, end);
            split_see(sp, pbase + pj[j], base + kj[j], base + kj[jl], row + j, row + jl);
            j = next_set(u, wj, end);
        }
    }
}

/* Words of one strip's unions (strip_rows): past them, row by row. */
#define NESTED_STRIP_WORDS (UINT64_C(1) << 20)

/* Tile rows that one split may take as a strip (visit_strip): the first
 * row of each strip of rows sharing the split's prefix of i into
 * start[], *ns strips; 0 when the keys do not order a strip's groups
 * under a prefix by (row, column), or a strip's unions would pass
 * NESTED_STRIP_WORDS (then the rows go one by one). With one split, under
 * one prefix a row's keys all lie below the next row's when key_i grows
 * within the strip by more than key_j spans inside any segment. */
static int strip_rows(const nested *n, const out_runs *r, uint64_t *const *seg, uint64_t wj,
                      uint64_t *start, uint64_t *ns)
{
    if (r->nsplit != 1)
        return 0;
    const split *sp = &r->sp[0];
    uint64_t span = 0;
    for (uint64_t j = 0; j < n->ext_j; j++) {
        uint64_t d = r->key_j[seg[0][j] - 1] - r->key_j[j];
        span = d > span ? d : span;
    }
    uint64_t nblk = r->nblk, most = 0;
    *ns = 0;
    for (uint64_t i = 0; i < n->ext_i; i++) {
        if (!i || sp->pre_i[i] != sp->pre_i[i - 1]) {
            start[(*ns)++] = i;
            continue;
        }
        if (r->key_i[i] <= r->key_i[i - 1] || r->key_i[i] - r->key_i[i - 1] <= span)
            return 0;
        uint64_t rows = i - start[*ns - 1] + 1;
        most = rows > most ? rows : most;
    }
    start[*ns] = n->ext_i;
    return (long double)most * (long double)nblk * (long double)wj <=
           (long double)NESTED_STRIP_WORDS;
}

/* visit_union's split work for a strip of tile rows i0 .. i1 (strip_rows)
 * at block b, their unions at buf + (i - i0) * stride: per segment of
 * columns met by any row, the least key is the first row's (with a
 * column there) first column, the greatest the last row's last column, so
 * one split_see per segment and strip instead of per segment and row. */
static void visit_strip(out_runs *r, uint64_t i0, uint64_t i1, uint64_t b, const uint64_t *buf,
                        uint64_t stride, uint64_t *any, uint64_t wj, const uint64_t *seg)
{
    split *sp = &r->sp[0];
    memset(any, 0, wj * sizeof(uint64_t));
    for (uint64_t i = i0; i < i1; i++)
        for (uint64_t w = 0; w < wj; w++)
            any[w] |= buf[(i - i0) * stride + w];
    uint64_t pbase = sp->pre_i[i0] + sp->pre_k[b];
    for (uint64_t j = next_set(any, wj, 0); j != UINT64_MAX;) {
        uint64_t end = seg[j], il = i0, ih = i1 - 1, jl, jh;
        while ((jl = first_in(buf + (il - i0) * stride, j, end)) == UINT64_MAX)
            il++;
        while ((jh = last_in(buf + (ih - i0) * stride, j, end)) == UINT64_MAX)
            ih--;
        split_see(sp, pbase + sp->pre_j[j], r->key_i[il] + r->key_k[b] + r->key_j[jl],
                  r->key_i[ih] + r->key_k[b] + r->key_j[jh], r->ext_j * il + jl,
                  r->ext_j * ih + jh);
        j = next_set(any, wj, end);
    }
}

/* groups_by_unions by strips of tile rows (strip_rows): the rows' unions
 * per block kept for the strip (buf), the groups and pairs counted per
 * row as visit_union does, the split's least and greatest keys per strip
 * (visit_strip). */
static int unions_by_strips(const nested *n, out_runs *r, const uint64_t *bb, uint64_t kr,
                            uint64_t wj, uint64_t *const *seg, const uint64_t *start, uint64_t ns)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t nblk = r->nblk, most = 0;
    for (uint64_t q = 0; q < ns; q++)
        most = start[q + 1] - start[q] > most ? start[q + 1] - start[q] : most;
    uint64_t stride = wj, rowlen = nblk * wj;
    uint64_t *buf = stat_zeroed(a, most * rowlen + 1, sizeof(uint64_t));
    uint64_t *row = stat_zeroed(a, 2 * wj + 1, sizeof(uint64_t)), *any = row ? row + wj : NULL;
    /* per block: whether the strip met it, and the blocks it met */
    uint64_t *met = stat_zeroed(a, 2 * nblk + 1, sizeof(uint64_t)), *list = met ? met + nblk : NULL;
    uint64_t *col = stat_zeroed(a, most * wj + 1, sizeof(uint64_t)); /* one block's column */
    if (!buf || !row || !met || !col) {
        tessel_dealloc(a, buf);
        tessel_dealloc(a, row);
        tessel_dealloc(a, met);
        tessel_dealloc(a, col);
        return TESSEL_ENOMEM;
    }
    double np = 0;
    for (uint64_t q = 0; q < ns; q++) {
        uint64_t i0 = start[q], i1 = start[q + 1], nmet = 0;
        for (uint64_t i = i0; i < i1; i++) {
            memset(row, 0, wj * sizeof(uint64_t));
            uint64_t *ub = buf + (i - i0) * rowlen;
            for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1];) {
                uint64_t b = blk_of(n, n->a.col[t]);
                uint64_t *u = ub + b * wj;
                or_block(n, i, &t, b, bb, wj, kr, u);
                uint64_t cnt = 0;
                for (uint64_t w = 0; w < wj; w++) {
                    cnt += stat_bits_set(u[w]);
                    row[w] |= u[w];
                }
                r->groups += (double)cnt;
                r->row_groups[i] += (double)cnt;
                if (cnt && !met[b]) {
                    met[b] = 1;
                    list[nmet++] = b;
                }
            }
            double row_np = 0;
            for (uint64_t w = 0; w < wj; w++)
                row_np += (double)stat_bits_set(row[w]);
            np += row_np;
            r->row_pairs[i] = row_np;
        }
        for (uint64_t m = 0; m < nmet; m++) {
            uint64_t b = list[m];
            for (uint64_t i = i0; i < i1; i++)
                memcpy(col + (i - i0) * stride, buf + (i - i0) * rowlen + b * wj,
                       wj * sizeof(uint64_t));
            visit_strip(r, i0, i1, b, col, stride, any, wj, seg[0]);
            met[b] = 0;
            /* the only non-zero unions of the strip: blocks it met */
            for (uint64_t i = i0; i < i1; i++)
                memset(buf + (i - i0) * rowlen + b * wj, 0, wj * sizeof(uint64_t));
        }
    }
    r->pairs = np;
    tessel_dealloc(a, buf);
    tessel_dealloc(a, row);
    tessel_dealloc(a, met);
    tessel_dealloc(a, col);
    return TESSEL_OK;
}

/* The groups by unions of B's tile rows as bitsets over J: per tile row
 * I and coarse k block, the columns J met are the union of the rows of B
 * at the block's K. Cost: A's tiles times the words of a row of J (plus
 * the column ranges per split, per strip of rows where strip_rows allows),
 * not the tile-level multiplies. Needs keys_monotone. */
static int groups_by_unions(const nested *n, out_runs *r)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t wj = (n->ext_j + 63) / 64, kr = n->b.rows < n->ext_k ? n->b.rows : n->ext_k;
    uint64_t *bb = stat_zeroed(a, kr * wj + 1, sizeof(uint64_t));
    uint64_t *u = stat_zeroed(a, 2 * wj + 1, sizeof(uint64_t)), *row = u ? u + wj : NULL;
    uint64_t *seg[NX * NLEV];
    unsigned nseg = 0;
    int rc = bb && u ? TESSEL_OK : TESSEL_ENOMEM;
    for (; !rc && nseg < r->nsplit; nseg++) {
        const split *sp = &r->sp[nseg];
        if (!(seg[nseg] = tessel_alloc_array(a, n->ext_j + 1, sizeof(uint64_t)))) {
            rc = TESSEL_ENOMEM;
            break;
        }
        for (uint64_t j = n->ext_j; j-- > 0;)
            seg[nseg][j] = j + 1 < n->ext_j && sp->pre_j[j + 1] == sp->pre_j[j]
                               ? seg[nseg][j + 1] : j + 1;
    }
    for (uint64_t k = 0; !rc && k < kr; k++)
        for (uint64_t t = n->b.ptr[k]; t < n->b.ptr[k + 1]; t++)
            bb[k * wj + n->b.col[t] / 64] |= UINT64_C(1) << (n->b.col[t] % 64);
    uint64_t *start = rc ? NULL : stat_zeroed(a, n->ext_i + 2, sizeof(uint64_t)), ns = 0;
    if (!rc && !start)
        rc = TESSEL_ENOMEM;
    if (!rc && strip_rows(n, r, seg, wj, start, &ns)) {
        rc = unions_by_strips(n, r, bb, kr, wj, seg, start, ns);
        tessel_dealloc(a, start);
        for (unsigned q = 0; q < nseg; q++)
            tessel_dealloc(a, seg[q]);
        tessel_dealloc(a, bb);
        tessel_dealloc(a, u);
        return rc;
    }
    tessel_dealloc(a, start);
    double np = 0;
    for (uint64_t i = 0; !rc && i < n->a.rows; i++) {
        memset(row, 0, wj * sizeof(uint64_t));
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1];) {
            uint64_t b = blk_of(n, n->a.col[t]);
            memset(u, 0, wj * sizeof(uint64_t));
            or_block(n, i, &t, b, bb, wj, kr, u);
            visit_union(r, i, b, u, wj, seg);
            for (uint64_t w = 0; w < wj; w++)
                row[w] |= u[w];
        }
        double row_np = 0;
        for (uint64_t w = 0; w < wj; w++)
            row_np += (double)stat_bits_set(row[w]);
        np += row_np;
        r->row_pairs[i] = row_np;
    }
    r->pairs = np;
    for (unsigned q = 0; q < nseg; q++)
        tessel_dealloc(a, seg[q]);
    tessel_dealloc(a, bb);
    tessel_dealloc(a, u);
    return rc;
}

/* The groups by whichever of the two costs less: the tile-level
 * multiplies (stamps) or A's tiles times the words of J (unions). */
static int collect_groups(const nested *n, out_runs *r, double multiplies)
{
    double words = (double)((n->ext_j + 63) / 64) + 2;
    if ((double)n->a.n * words < multiplies && keys_monotone(n, r))
        return groups_by_unions(n, r);
    return groups_by_stamps(n, r);
}

static int same_tile(const nested *n, uint64_t k1, uint64_t k2)
{
    uint64_t c1[NX], c2[NX];
    exact_loop_decode(&n->bd, k1, c1);
    exact_loop_decode(&n->bd, k2, c2);
    return c1[XI] == c2[XI] && c1[XJ] == c2[XJ];
}

/* The tile row I of the greatest group under prefix p of split sp. */
static uint64_t tile_row(const nested *n, const split *sp, uint64_t p)
{
    if (sp->hi_pair)
        return sp->hi_pair[p] / n->ext_j;
    uint64_t c[NX];
    exact_loop_decode(&n->bd, split_hi(sp, p), c);
    return c[XI] < n->ext_i ? c[XI] : n->ext_i - 1;
}

/* The output pair i * ext_j + j of the greatest group under prefix p of
 * split sp. */
static uint64_t tile_pair(const nested *n, const split *sp, uint64_t p)
{
    if (sp->hi_pair)
        return sp->hi_pair[p];
    uint64_t c[NX];
    exact_loop_decode(&n->bd, split_hi(sp, p), c);
    uint64_t i = c[XI] < n->ext_i ? c[XI] : n->ext_i - 1;
    uint64_t j = c[XJ] < n->ext_j ? c[XJ] : n->ext_j - 1;
    return i * n->ext_j + j;
}

/* Marks merged the group of key `hi`, the greatest under a prefix whose
 * next non-empty sibling's least group is of the same tile (row: its
 * tile row, pair: its output pair). */
static int mark_merged(out_runs *r, uint64_t hi, uint64_t row, uint64_t pair)
{
    if (!model_map_slot(&r->merged, hi, 1))
        return TESSEL_ENOMEM;
    r->merges += 1;
    r->row_merges[row] += 1;
    if (r->merged_pairs)
        r->merged_pairs[pair / 64] |= UINT64_C(1) << (pair % 64);
    return TESSEL_OK;
}

/* join_splits for a dense split: its prefixes in order, unseen skipped. */
static int join_dense(const nested *n, out_runs *r, const split *sp)
{
    uint64_t prev = UINT64_MAX;
    for (uint64_t p = 0; p < sp->space; p++) {
        if (!split_seen(sp, p))
            continue;
        if (prev != UINT64_MAX && prev / sp->radix == p / sp->radix &&
            (sp->lo_pair ? sp->hi_pair[prev] == sp->lo_pair[p]
                         : same_tile(n, split_hi(sp, prev), split_lo(sp, p))) &&
            mark_merged(r, split_hi(sp, prev), tile_row(n, sp, prev), tile_pair(n, sp, prev)))
            return TESSEL_ENOMEM;
        prev = p;
    }
    return TESSEL_OK;
}

/* A sparse split's entries (sparse_see: ew words each, the prefix first,
 * prefixes < space, one entry each) sorted by prefix into ascending order:
 * LSD radix sort by 16 bits a pass (tmp: as many words as the entries,
 * cnt: 2^16), where qsort's comparisons cost a second on millions of
 * prefixes. */
static void sort_entries(split *sp, uint64_t *tmp, uint64_t *cnt)
{
    uint64_t m = sp->nent, ew = sp->ew, *e = sp->ent;
    for (unsigned sh = 0; sh < 64 && (sp->space - 1) >> sh; sh += 16) {
        memset(cnt, 0, (UINT64_C(1) << 16) * sizeof(uint64_t));
        for (uint64_t q = 0; q < m; q++)
            cnt[e[q * ew] >> sh & 0xffff]++;
        for (uint64_t d = 0, sum = 0; d < (UINT64_C(1) << 16); d++) {
            uint64_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (uint64_t q = 0; q < m; q++) {
            uint64_t at = cnt[e[q * ew] >> sh & 0xffff]++;
            memcpy(tmp + at * ew, e + q * ew, ew * sizeof(uint64_t));
        }
        memcpy(e, tmp, m * ew * sizeof(uint64_t));
    }
}

/* Entry q's least (end 0) or greatest (end 1) key. */
static uint64_t entry_key(const split *sp, uint64_t q, unsigned end)
{
    const uint64_t *x = sp->ent + q * sp->ew;
    if (sp->ew == 3)
        return x[1 + end];
    return x[0] * sp->below + (end ? x[1] >> 32 : x[1] & UINT32_MAX);
}

/* join_splits for a sparse split: its entries sorted by prefix, then as
 * join_dense, the tiles decoded from the keys. */
static int join_sparse(const nested *n, out_runs *r, split *sp)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t m = sp->nent;
    uint64_t *tmp = tessel_alloc_array(a, m * sp->ew + (UINT64_C(1) << 16), sizeof(uint64_t));
    if (!tmp)
        return TESSEL_ENOMEM;
    sort_entries(sp, tmp, tmp + m * sp->ew);
    tessel_dealloc(a, tmp);
    int rc = TESSEL_OK;
    for (uint64_t q = 1; q < m && !rc; q++) {
        uint64_t prev = sp->ent[(q - 1) * sp->ew], p = sp->ent[q * sp->ew], c[NX];
        uint64_t hi = entry_key(sp, q - 1, 1);
        if (prev / sp->radix != p / sp->radix || !same_tile(n, hi, entry_key(sp, q, 0)))
            continue;
        exact_loop_decode(&n->bd, hi, c);
        uint64_t i = c[XI] < n->ext_i ? c[XI] : n->ext_i - 1;
        uint64_t j = c[XJ] < n->ext_j ? c[XJ] : n->ext_j - 1;
        rc = mark_merged(r, hi, i, i * n->ext_j + j);
    }
    return rc;
}

/* Two groups are neighbours among the non-empty groups exactly when they
 * are the last group under one prefix of a split and the first under the
 * next non-empty prefix of the same parent (the digit they first differ
 * in). Neighbours of one tile are one run: the first is marked merged. */
static int join_splits(const nested *n, out_runs *r)
{
    /* which pairs hold a merged group, so that sample_written looks up
     * only theirs (not kept past 2^26 pairs or without memory: every
     * pair is looked up, the same result) */
    uint64_t npairs = n->ext_i * n->ext_j;
    if (n->ext_j && npairs / n->ext_j == n->ext_i && npairs <= NESTED_MERGED_PAIRS_BUDGET)
        r->merged_pairs = stat_zeroed(n->e->alloc, npairs / 64 + 1, sizeof(uint64_t));
    /* the sparse splits' hashes have served: their memory to the sort */
    for (unsigned q = 0; q < r->nsplit; q++) {
        tessel_dealloc(n->e->alloc, r->sp[q].slot);
        r->sp[q].slot = NULL;
    }
    for (unsigned q = 0; q < r->nsplit; q++) {
        int rc = r->sp[q].sparse ? join_sparse(n, r, &r->sp[q]) : join_dense(n, r, &r->sp[q]);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* A sparse split's error after the groups: TESSEL_ENOMEM, 1 past its
 * budget, 0 when every split recorded every group. */
static int splits_err(const out_runs *r)
{
    for (unsigned q = 0; q < r->nsplit; q++)
        if (r->sp[q].err == TESSEL_ENOMEM)
            return TESSEL_ENOMEM;
    for (unsigned q = 0; q < r->nsplit; q++)
        if (r->sp[q].err)
            return 1;
    return 0;
}

/* The runs, merges included; *found = 0 when over budget. */
static int find_runs(nested *n, out_runs *r, int *found)
{
    double E = 0;
    for (uint64_t k = 0; k < n->ext_k; k++)
        E += (double)n->n_a[k] * (double)n->n_b[k];
    r->nblk = n->cf_k == UINT64_MAX ? 1 : (n->ext_k + n->cf_k - 1) / n->cf_k;
    long double words = (long double)(n->ext_i + n->ext_j) * (long double)((n->ext_k + 63) / 64);
    *found = 0;
    if (E > (double)NESTED_GROUP_BUDGET || words > (long double)NESTED_WORDS_BUDGET)
        return TESSEL_OK;
    int ok = 0, rc = runs_init(n, r, &ok);
    if (rc || !ok)
        return rc;
    rc = bitsets_init(n);
    if (!rc)
        rc = collect_groups(n, r, E);
    int err = rc ? 0 : splits_err(r);
    if (err == 1) {
        /* a sparse split past its budget: the upper bounds, which
         * set the bitsets up again */
        tessel_dealloc(n->e->alloc, n->arows);
        tessel_dealloc(n->e->alloc, n->bcols);
        n->arows = n->bcols = NULL;
        return TESSEL_OK;
    }
    if (!rc)
        rc = err;
    if (!rc)
        rc = join_splits(n, r);
    *found = !rc;
    return rc;
}

/* Pair (i, j)'s effectual blocks into blk and, per block, the runs that
 * end at or after it into suf (nblk + 1 entries each); returns how many
 * blocks. A block ends its run unless its group is marked merged. */
static uint64_t pair_runs(const nested *n, const out_runs *r, uint64_t i, uint64_t j,
                          uint64_t *blk, uint64_t *suf)
{
    uint64_t cnt = pair_blocks(n, i, j, blk);
    suf[cnt] = 0;
    for (uint64_t g = cnt; g-- > 0;) {
        int ends = 1;
        if (r && r->merged.n)
            ends = model_map_find(&r->merged, r->key_i[i] + r->key_j[j] + r->key_k[blk[g]]) ==
                   UINT64_MAX;
        suf[g] = suf[g + 1] + (uint64_t)ends;
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

/* The sample's base cells per level-b tile along i, j and k. */
typedef struct cell_map {
    uint64_t fi, fj, fk;
} cell_map;

static cell_map cell_map_of(const nested *n, const stat_output_sample *s)
{
    cell_map m = { n->ea[0] / s->base[0], n->eb[1] / s->base[1], n->ea[1] / s->base[2] };
    return m;
}

/* The sample's cell c as a level-b output pair and reduction tile K;
 * 0 when it falls outside the level-b grids. */
static int cell_at(const nested *n, const stat_output_sample *s, const cell_map *m, uint64_t c,
                   uint64_t *pair, uint64_t *k)
{
    uint64_t i = s->ci[c] / m->fi, j = s->cj[c] / m->fj;
    if (i >= n->ext_i || j >= n->ext_j)
        return 0;
    *pair = i * n->ext_j + j;
    *k = s->ck[c] / m->fk;
    return 1;
}

/* Tile row i's non-zero words of A's bitset over k: their indices into nz
 * and their bits into xw (n->words each); returns how many. */
static unsigned row_words(const nested *n, uint64_t i, uint64_t *nz, uint64_t *xw)
{
    const uint64_t *x = &n->arows[i * n->words];
    unsigned cnt = 0;
    for (uint64_t w = 0; w < n->words; w++)
        if (x[w]) {
            xw[cnt] = x[w];
            nz[cnt++] = w;
        }
    return cnt;
}

/* Bit w set where x[w] & y[w] != 0, for w < words (at most 64): eight,
 * then two words per step with SSE2 where the compiler has it. */
static uint64_t and_nonzero(const uint64_t *x, const uint64_t *y, uint64_t words)
{
    uint64_t m = 0, w = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (; w + 8 <= words; w += 8) {
        __m128i z[4];
        for (unsigned v = 0; v < 4; v++)
            z[v] = _mm_cmpeq_epi32(
                _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(x + w + 2 * v)),
                              _mm_loadu_si128((const __m128i *)(const void *)(y + w + 2 * v))),
                zero);
        /* one byte per 32-bit half, in order: bits 2q, 2q + 1 are word q's */
        __m128i b = _mm_packs_epi16(_mm_packs_epi32(z[0], z[1]), _mm_packs_epi32(z[2], z[3]));
        uint64_t h = (uint64_t)_mm_movemask_epi8(b);
        h = h & (h >> 1) & 0x5555; /* bit 2q: word q is zero */
        h = (h | (h >> 1)) & 0x3333;
        h = (h | (h >> 2)) & 0x0f0f;
        h = (h | (h >> 4)) & 0x00ff;
        m |= (~h & 0xff) << w;
    }
    for (; w + 2 <= words; w += 2) {
        __m128i t = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)(x + w)),
                                  _mm_loadu_si128((const __m128i *)(const void *)(y + w)));
        /* a 64-bit lane is zero when both its 32-bit halves are */
        __m128i z = _mm_cmpeq_epi32(t, zero);
        z = _mm_and_si128(z, _mm_shuffle_epi32(z, _MM_SHUFFLE(2, 3, 0, 1)));
        unsigned zero_lanes = (unsigned)_mm_movemask_pd(_mm_castsi128_pd(z));
        m |= (uint64_t)(~zero_lanes & 3u) << w;
    }
#endif
    for (; w < words; w++)
        m |= (uint64_t)((x[w] & y[w]) != 0) << w;
    return m;
}

/* Pair (i, j)'s effectual coarse k blocks as bits (at most 64 blocks):
 * pair_blocks' blocks. When a block is a whole number of words, one AND
 * per non-zero word of A's row (nz, cnt: row_words). */
static uint64_t pair_mask(const nested *n, uint64_t i, uint64_t j, const uint64_t *nz,
                          const uint64_t *xw, unsigned cnt, uint64_t *blk)
{
    const uint64_t *y = &n->bcols[j * n->words];
    uint64_t m = 0;
    if (n->cf_k == 64 && 4 * (uint64_t)cnt >= 3 * n->words)
        return and_nonzero(&n->arows[i * n->words], y, n->words);
    if (n->cf_k == 64) {
        for (unsigned q = 0; q < cnt; q++)
            m |= (uint64_t)((xw[q] & y[nz[q]]) != 0) << nz[q];
        return m;
    }
    if (n->cf_k != UINT64_MAX && n->cf_k % 64 == 0) {
        uint64_t per = n->cf_k / 64;
        for (unsigned q = 0; q < cnt; q++)
            if (xw[q] & y[nz[q]])
                m |= UINT64_C(1) << (nz[q] / per);
        return m;
    }
    uint64_t nb = pair_blocks(n, i, j, blk);
    for (uint64_t g = 0; g < nb; g++)
        m |= UINT64_C(1) << blk[g];
    return m;
}

/* Of pair (i, j)'s blocks `m`, those whose group ends its run (is not
 * marked merged): pair_runs' ends as bits. */
static uint64_t pair_ends(const out_runs *r, uint64_t i, uint64_t j, uint64_t m)
{
    if (!r || !r->merged.n)
        return m;
    uint64_t pair = i * r->ext_j + j;
    if (r->merged_pairs && !(r->merged_pairs[pair / 64] >> (pair % 64) & 1))
        return m;
    uint64_t ends = m, base = r->key_i[i] + r->key_j[j];
    for (uint64_t left = m; left; left &= left - 1) {
        unsigned b = (unsigned)__builtin_ctzll(left);
        if (model_map_find(&r->merged, base + r->key_k[b]) != UINT64_MAX)
            ends &= ~(UINT64_C(1) << b);
    }
    return ends;
}

/* sample_written with at most 64 coarse k blocks: a pair's ends as one
 * word, and a nonzero's runs from its block on as the ends at or above
 * it (the same counts, summed in the same order, as the list walk). */
static double sample_written_mask(const nested *n, const stat_output_sample *s,
                                  const out_runs *r, uint64_t *blk, uint64_t *suf)
{
    /* with whole-word blocks pair_blocks is not called: blk and suf
     * (ext_k + 2 >= words entries each) hold the row's words */
    uint64_t *nz = blk, *xw = suf;
    unsigned nnz = 0;
    uint64_t last = UINT64_MAX, last_i = UINT64_MAX, ends = 0;
    double sum = 0;
    cell_map m = cell_map_of(n, s);
    int words = n->cf_k != UINT64_MAX && n->cf_k % 64 == 0;
    /* floor(floor(ck / fk) / cf_k) = floor(ck / (fk cf_k)); 0: one block */
    uint64_t kdiv = n->cf_k == UINT64_MAX || n->cf_k > UINT64_MAX / (m.fk ? m.fk : 1)
                        ? 0 : m.fk * n->cf_k;
    for (uint64_t g = 0; g < s->ngroups; g++) {
        uint64_t c = s->gstart[g], pair, k;
        if (!cell_at(n, s, &m, c, &pair, &k))
            continue;
        if (pair != last) {
            uint64_t i = pair / n->ext_j, j = pair % n->ext_j;
            if (words && i != last_i)
                nnz = row_words(n, i, nz, xw);
            last_i = i;
            ends = pair_ends(r, i, j, pair_mask(n, i, j, nz, xw, nnz, blk));
        }
        last = pair;
        /* a group's cells share their (i, j) cell, so its pair; a cell's
         * block is its k cell over fk cells per tile, cf_k tiles per block */
        for (; c < s->gstart[g + 1]; c++) {
            uint64_t b = kdiv ? s->ck[c] / kdiv : 0;
            uint64_t runs = b < 64 ? (uint64_t)stat_bits_set(ends >> b) : 0;
            sum += (double)runs * s->weight[c];
        }
    }
    return sum;
}

/* Runs of its tile from the block of its first multiply on, summed over
 * the sample's nonzeros (weighted): the nonzeros the write-backs carry.
 * With r, the runs (merges included); else the pair walk's blocks. */
static double sample_written(const nested *n, const stat_output_sample *s, const out_runs *r,
                             uint64_t *blk, uint64_t *suf)
{
    uint64_t nblk = n->cf_k == UINT64_MAX ? 1 : (n->ext_k + n->cf_k - 1) / n->cf_k;
    if (nblk <= 64)
        return sample_written_mask(n, s, r, blk, suf);
    uint64_t last = UINT64_MAX, cnt = 0;
    double sum = 0;
    cell_map m = cell_map_of(n, s);
    for (uint64_t g = 0; g < s->ngroups; g++) {
        uint64_t c = s->gstart[g], pair, k;
        if (!cell_at(n, s, &m, c, &pair, &k))
            continue;
        if (pair != last)
            cnt = pair_runs(n, r, pair / n->ext_j, pair % n->ext_j, blk, suf);
        last = pair;
        for (; c < s->gstart[g + 1]; c++)
            if (cell_at(n, s, &m, c, &pair, &k))
                sum += (double)suf[first_at(blk, cnt, blk_of(n, k))] * s->weight[c];
    }
    return sum;
}

/* The written nonzeros as a ratio estimate (issue 18 item 3; docs/models/
 * stat.md "The written nonzeros: a ratio on the tile rows' runs"). The
 * sample's sum weights each sampled row by the runs its nonzeros are
 * carried through, which depend on its tile row: rows of I whose pairs
 * have many runs carry each nonzero many times. With the rows' exact
 * nonzeros known (s->xexact), every tile row's nonzeros X_I are known,
 * and so is the covariate z_I = X_I h_I, h_I = (runs_I + pairs_I) /
 * (2 pairs_I) the mean runs carrying a nonzero whose first multiply is
 * uniform over its pair's runs (eq. 19's linear growth). The ratio
 * estimator W^ Z / Z^ (Z = sum z_I, Z^ its estimate from the sampled
 * nonzeros of each tile row, weighted as W^'s) is approximately unbiased
 * (bias O(1/n) in the drawn rows) whatever h_I's own error, and removes
 * the part of W^'s variance that follows z: which tile rows the draw
 * happened to hit. Unchanged with a whole sample, sketch predictions,
 * or no runs per tile row. */
static void written_ratio(const nested *n, const stat_output_sample *s, const out_runs *r,
                          double *written)
{
    uint64_t fi = s->base[0] ? n->ea[0] / s->base[0] : 0;
    if (s->whole || !s->xexact || !s->scell || !r || !r->row_groups || !fi || *written <= 0)
        return;
    double z = 0, zhat = 0;
    for (uint64_t i = 0; i < n->ext_i; i++) {
        double pairs = r->row_pairs[i], x = 0, shat = 0;
        if (pairs <= 0)
            continue;
        for (uint64_t c = i * fi; c < (i + 1) * fi && c < s->nxcell; c++) {
            x += s->xcell[c];
            shat += s->scell[c];
        }
        double h = (r->row_groups[i] - r->row_merges[i] + pairs) / (2 * pairs);
        z += x * h;
        zhat += shat * h;
    }
    if (zhat > 0 && z > 0)
        *written *= z / zhat;
}

/* Row i's effectual output tile columns J (the tile-level symbolic
 * product of A's tile row with B's tile rows, stamp marked i + 1) into js;
 * returns how many. */
static uint64_t row_pairs_of(const nested *n, uint64_t i, uint64_t *stamp, uint64_t *js)
{
    uint64_t nj = 0;
    for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
        uint64_t k = n->a.col[t];
        if (k >= n->b.rows)
            continue;
        for (uint64_t q = n->b.ptr[k]; q < n->b.ptr[k + 1]; q++) {
            uint64_t j = n->b.col[q];
            if (j < n->ext_j && stamp[j] != i + 1) {
                stamp[j] = i + 1;
                js[nj++] = j;
            }
        }
    }
    return nj;
}

/* Scratch of written_cells, per coarse block b of the current tile row
 * (valid where at[b] is the row + 1): g the runs from b on summed over
 * the row's pairs with a group in b, c how many such pairs. */
typedef struct cells_row {
    double *g, *c;
    uint64_t *at, nblk;
    uint64_t *stamp, *js; /* ext_j each */
} cells_row;

static void cells_add(cells_row *w, uint64_t i, uint64_t b, double runs)
{
    if (w->at[b] != i + 1) {
        w->at[b] = i + 1;
        w->g[b] = w->c[b] = 0;
    }
    w->g[b] += runs;
    w->c[b] += 1;
}

/* The mean runs from block b on of tile row i's pairs with a group in b
 * (0: none). */
static double cells_g(const cells_row *w, uint64_t i, uint64_t b)
{
    return b < w->nblk && w->at[b] == i + 1 && w->c[b] > 0 ? w->g[b] / w->c[b] : 0;
}

/* Tile row i's g (written_cells): over its occupied pairs only, each
 * pair's run ends counted from each of its blocks on (pair_ends with at
 * most 64 blocks, else pair_runs). */
static void row_block_runs(const nested *n, const out_runs *r, uint64_t i, cells_row *w,
                           uint64_t *blk, uint64_t *suf)
{
    uint64_t *nz = blk, *xw = suf; /* as sample_written_mask */
    int mask = w->nblk <= 64, words = n->cf_k != UINT64_MAX && n->cf_k % 64 == 0;
    unsigned nnz = mask && words ? row_words(n, i, nz, xw) : 0;
    uint64_t nj = row_pairs_of(n, i, w->stamp, w->js);
    for (uint64_t q = 0; q < nj; q++) {
        uint64_t j = w->js[q];
        if (!mask) {
            uint64_t cnt = pair_runs(n, r, i, j, blk, suf);
            for (uint64_t g = 0; g < cnt; g++)
                cells_add(w, i, blk[g], (double)suf[g]);
            continue;
        }
        uint64_t m = pair_mask(n, i, j, nz, xw, nnz, blk), ends = pair_ends(r, i, j, m);
        for (uint64_t left = m; left; left &= left - 1) {
            unsigned b = (unsigned)__builtin_ctzll(left);
            cells_add(w, i, b, (double)stat_bits_set(ends >> b));
        }
    }
}

/* Sum over tile row i's exact (i cell, first k cell) counts (s->fc's i
 * cells [i fi, (i + 1) fi)) of the count times g of its block. */
static double row_cells_z(const stat_output_sample *s, const cells_row *w, uint64_t i,
                          uint64_t fi, uint64_t kdiv)
{
    const tessel_first_cells *fc = &s->fc;
    double z = 0;
    for (uint64_t c = i * fi; c < (i + 1) * fi && c < fc->ni; c++)
        for (uint64_t e = fc->ptr[c]; e < fc->ptr[c + 1]; e++)
            z += fc->nnz[e] * cells_g(w, i, kdiv ? fc->kcell[e] / kdiv : 0);
    return z;
}

/* Whether written_cells applies: a partial sample with the (i cell,
 * first k cell) counts on its cells, the runs found. Its k cells per
 * coarse block into *kdiv (0: one block). */
static int cells_apply(const nested *n, const stat_output_sample *s, const out_runs *r,
                       uint64_t *kdiv)
{
    if (s->whole || !s->xexact || !s->fc.ptr || !r || !s->base[0] ||
        s->fc.edge_i != s->base[0] || s->fc.edge_k != s->base[2] || n->ea[0] % s->base[0] ||
        n->a.rows > n->ext_i)
        return 0;
    cell_map m = cell_map_of(n, s);
    *kdiv = n->cf_k == UINT64_MAX || n->cf_k > UINT64_MAX / (m.fk ? m.fk : 1) ? 0
                                                                              : m.fk * n->cf_k;
    return m.fi > 0;
}

static void cells_free(const tessel_allocator *a, cells_row *w)
{
    tessel_dealloc(a, w->g);
    tessel_dealloc(a, w->c);
    tessel_dealloc(a, w->at);
    tessel_dealloc(a, w->stamp);
    tessel_dealloc(a, w->js);
}

static int cells_init(const nested *n, cells_row *w)
{
    const tessel_allocator *a = n->e->alloc;
    w->nblk = n->cf_k == UINT64_MAX ? 1 : (n->ext_k + n->cf_k - 1) / n->cf_k;
    w->g = tessel_alloc_array(a, w->nblk + 1, sizeof(double));
    w->c = tessel_alloc_array(a, w->nblk + 1, sizeof(double));
    w->at = stat_zeroed(a, w->nblk + 1, sizeof(uint64_t));
    w->stamp = stat_zeroed(a, n->ext_j + 1, sizeof(uint64_t));
    w->js = tessel_alloc_array(a, n->ext_j + 1, sizeof(uint64_t));
    if (w->g && w->c && w->at && w->stamp && w->js)
        return TESSEL_OK;
    cells_free(a, w);
    return TESSEL_ENOMEM;
}

/* The written nonzeros as a ratio estimate on the exact (i cell, first k
 * cell) counts (docs/models/stat.md, "The written nonzeros on the (i
 * cell, first k cell) counts"): the covariate z = sum over tile rows I
 * and coarse blocks b of X_{I,b} g_{I,b}, X_{I,b} the nonzeros of I first
 * made in b (s->fc, exact), g_{I,b} the mean runs from b on of I's pairs
 * with a group in b (exact from the runs); its estimate z^ from the
 * sample's nonzeros in (I, b) weighted as W^'s. W^ z / z^ in place of
 * written_ratio. *used = 0 where it does not apply (written unchanged). */
static int written_cells(const nested *n, const stat_output_sample *s, const out_runs *r,
                         uint64_t *blk, uint64_t *suf, double *written, int *used)
{
    uint64_t kdiv = 0;
    *used = 0;
    if (*written <= 0 || !cells_apply(n, s, r, &kdiv))
        return TESSEL_OK;
    cells_row w;
    if (cells_init(n, &w))
        return TESSEL_ENOMEM;
    cell_map m = cell_map_of(n, s);
    double z = 0, zhat = 0;
    uint64_t c = 0;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        if (n->a.ptr[i] < n->a.ptr[i + 1]) {
            row_block_runs(n, r, i, &w, blk, suf);
            z += row_cells_z(s, &w, i, m.fi, kdiv);
        }
        for (; c < s->ncells && s->ci[c] / m.fi <= i; c++)
            if (s->ci[c] / m.fi == i && s->cj[c] / m.fj < n->ext_j)
                zhat += s->weight[c] * cells_g(&w, i, kdiv ? s->ck[c] / kdiv : 0);
    }
    cells_free(n->e->alloc, &w);
    if (zhat > 0 && z > 0) {
        *written *= z / zhat;
        *used = 1;
    }
    return TESSEL_OK;
}

/* A visit that leaves its run open with a tile of `bytes` (meta of them
 * metadata) over the partition: the excess spills out and comes back at
 * the next visit, with exact_walk.c's truncation (price_spills). */
static void spill_visit(const zprice *z, double nnz, double w, out_spill *sp)
{
    nnz = znnz(z, nnz);
    double meta = z->m0 + nnz * z->per_m, total = z->d0 + nnz * z->per_d + meta;
    if (total <= (double)z->part)
        return;
    double extra = total - (double)z->part, m = floor(extra * meta / total);
    sp->data += w * (extra - m);
    sp->meta += w * m;
}

/* A visit that holds a multiply with probability `live` (stat_visit_live)
 * ends the spill of the run's earlier visits: exact charges a visit's
 * spill only when a later visit of the same run holds a multiply, so the
 * last visit with one before the run's end spills nothing. `last` holds
 * the run's charges so far weighted by the chance that no later visit
 * has held a multiply yet; each visit scales them by 1 - live, and the
 * run's end takes what remains back out of sp. With every visit live
 * (one step per visit, or the sample saw each grow) it stays 0. */
static void run_spill_step(double live, out_spill *last)
{
    last->data *= 1 - live;
    last->meta *= 1 - live;
}

/* Reduction steps of the child's width in level b's reduction tile k. */
static double slots_of(const nested *n, uint64_t k)
{
    return stat_visit_slots(k, n->bd.tile[XK], n->e->extent[XK], stat_step_width(n->e, n->bd.b));
}

/* A visit's terms of rule 4 inside (stat_outspill.c) that do not depend
 * on the tile's sizes: its tiles' nonzeros, reduction slots, live groups
 * and step count m, asked of n->ks once, when a size first overflows
 * (one walk prices a pair at every node of its occupancy). */
typedef struct visit_terms {
    uint64_t i, k, j;
    double na, nb, slots, gi, gj, m, live;
    int asked, grew; /* live: < 0 until asked */
} visit_terms;

static void visit_terms_at(const nested *n, uint64_t i, uint64_t k, uint64_t j, double na,
                           double nb, const double *g, visit_terms *v)
{
    v->i = i;
    v->k = k;
    v->j = j;
    v->na = na;
    v->nb = nb;
    v->slots = slots_of(n, k);
    v->gi = g[0];
    v->gj = g[1];
    v->m = -1;
    v->asked = 0;
    v->live = -1;
}

/* The chance the visit holds a multiply (stat_visit_live; grew: the
 * sample saw a nonzero first appear in it), asked once. */
static double visit_live(visit_terms *v)
{
    if (v->live < 0)
        v->live = stat_visit_live(v->slots, v->na, v->nb, v->grew);
    return v->live;
}

/* stat_spill_visit_at's extra bytes with v's step count (taken once). */
static double visit_extra(const nested *n, visit_terms *v, double b0, double b1, double full,
                          double part)
{
    double g = v->gi * v->gj > 1 ? v->gi * v->gj : 1;
    if (!stat_spill_visit_over(b1, v->gi, v->gj, part))
        return 0;
    if (!v->asked) {
        v->m = v->slots > 1 ? stat_ksteps_steps(n->ks, v->i, v->k, v->j, v->gi, v->gj) : -1;
        v->asked = 1;
    }
    if (v->m < 0)
        return stat_spill_visit(v->slots, v->na, v->nb, b0, b1, full, v->gi, v->gj, part);
    /* a fractional count of steps: between the charges of its two whole
     * neighbours, as an expectation over them */
    double lo = floor(v->m), f = v->m - lo;
    double c = stat_spill_inside(b0 / g, b1 / g, full / g, lo, part);
    if (f > 0)
        c = (1 - f) * c + f * stat_spill_inside(b0 / g, b1 / g, full / g, lo + 1, part);
    return g * c;
}

/* Rule 4 inside one visit v: the tile growing from n0 to n1 nonzeros
 * over the visit's update steps of the child's reduction width; every
 * step before the last spills. */
static void spill_inside(const nested *n, const zprice *z, visit_terms *v, double n0, double n1,
                         out_spill *sp)
{
    n0 = znnz(z, n0);
    n1 = znnz(z, n1);
    double meta = z->m0 + n1 * z->per_m, b1 = z->d0 + n1 * z->per_d + meta;
    double extra = visit_extra(n, v, z->d0 + n0 * (z->per_d + z->per_m) + z->m0, b1,
                               zbytes(z, z->cells), (double)z->part);
    if (extra <= 0)
        return;
    sp->data += extra * (1 - meta / b1);
    sp->meta += extra * meta / b1;
}

/* One pair's walk priced at one scale z of its occupancy: its partial
 * nonzeros, the spill it adds (into *sp) and `last`, the run's charges
 * were their visit its last live one. */
typedef struct node_walk {
    double z, cum;
    out_spill last, *sp;
} node_walk;

/* One visit v at one scale: the tile grows to cum (prior: on the prior's
 * path). A visit that ends its run charges the write-back and takes back
 * the run's charges since its last live visit. The live chance only
 * scales charges: asked where there are some. */
static void node_visit(const nested *n, const zprice *z, visit_terms *v, double cum, int ends,
                       int prior, node_walk *w)
{
    double cum0 = w->cum;
    out_spill *sp = w->sp, one = { 0, 0, 0, 0 };
    w->cum = cum;
    spill_inside(n, z, v, cum0, cum, sp);
    if (!ends)
        spill_visit(z, cum, 1, &one);
    /* a prior's path grows by some expected d nonzeros at every effectual
     * visit, and the whole sample's rule (live when a nonzero first
     * appears, else the chance of a multiply h) is taken in expectation
     * over that growth, a Poisson count of mean d: 1 - (1 - h) e^-d.
     * Until stop 26 max(h, 1 - e^-d), a lower bound (docs/models/stat.md
     * "The strata's evidence") */
    double live = 1;
    if (w->last.data != 0 || w->last.meta != 0 || one.data != 0 || one.meta != 0) {
        live = visit_live(v);
        if (prior && live < 1)
            live = 1 - (1 - live) * exp(cum0 - cum);
    }
    run_spill_step(live, &w->last);
    if (ends) {
        if (zbytes(z, cum) > (double)z->part)
            sp->overflow_wb += 1;
        sp->data -= w->last.data;
        sp->meta -= w->last.meta;
        w->last.data = w->last.meta = 0;
    } else {
        sp->data += live * one.data;
        sp->meta += live * one.meta;
        w->last.data += live * one.data;
        w->last.meta += live * one.meta;
    }
}

/* A pair whose final tile overflows, at the nw scales of its occupancy
 * (one walk: the visits' steps, slots and live chance are the same at
 * each): its effectual K in order (A's tile row I against B's tile
 * column J), the partial nonzeros after each from the sample's steps
 * st / wt (sorted, ns entries), blended with the prior's path when pp
 * is given (stat_nested_prior.c). A visit ends its run when it is its
 * block's last and the group's run ends there. */
static void pair_spills(const nested *n, const stat_grid *bt, const out_runs *r, uint64_t pair,
                        const uint64_t *st, const double *wt, uint64_t ns, uint64_t *blk,
                        uint64_t *suf, const zprice *z, prior_pair *pp, node_walk *nw,
                        unsigned nn)
{
    uint64_t i = pair / n->ext_j, j = pair % n->ext_j, cnt = pair_runs(n, r, i, j, blk, suf);
    uint64_t c = 0, g = 0;
    double sampled = 0, mcum = 0, na, nb, prod, na2, nb2, prod2, groups[2];
    pair_walk w;
    stat_pair_walk(n, bt, i, j, &w);
    stat_live_groups(n->e, &n->bd, 0, &groups[0], &groups[1]);
    if (pp)
        pp->z = 1; /* the path at scale 1; each node's is z times it */
    uint64_t k = stat_pair_next(n, &w, &na, &nb, &prod);
    while (k != UINT64_MAX) {
        /* the next effectual K, to see whether this one closes its block */
        uint64_t next = stat_pair_next(n, &w, &na2, &nb2, &prod2);
        double seen = sampled, path;
        while (c < ns && st[c] <= k)
            sampled += wt[c++];
        mcum += prod;
        path = pp ? stat_prior_path(pp, sampled, mcum) : sampled;
        uint64_t b = blk_of(n, k);
        while (g < cnt && blk[g] < b)
            g++;
        int closes = next == UINT64_MAX || blk_of(n, next) != b;
        int ends = closes && g < cnt && suf[g] != suf[g + 1];
        visit_terms v;
        visit_terms_at(n, i, k, j, na, nb, groups, &v);
        v.grew = sampled > seen;
        for (unsigned q = 0; q < nn; q++)
            node_visit(n, z, &v, pp ? nw[q].z * path : path, ends, pp != NULL, &nw[q]);
        k = next;
        na = na2;
        nb = nb2;
        prod = prod2;
    }
}

/* The sample's weight per output pair; the largest final tile, and the
 * pairs whose final tile outgrows the partition (partial tiles are never
 * larger than their final one, so only those can spill). */
static int pair_totals(const nested *n, const stat_output_sample *s, model_map *final)
{
    int rc = TESSEL_OK;
    cell_map m = cell_map_of(n, s);
    for (uint64_t c = 0; !rc && c < s->ncells; c++) {
        uint64_t pair, k;
        if (cell_at(n, s, &m, c, &pair, &k))
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
    cell_map m = cell_map_of(n, s);
    for (uint64_t c = 0; !rc && c < s->ncells; c++) {
        uint64_t pair, k;
        if (!cell_at(n, s, &m, c, &pair, &k) ||
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

/* Tile-level multiplies of the level-b grids (pairs of non-empty tiles
 * that meet on K). */
static double tile_multiplies(const nested *n)
{
    double t = 0;
    for (uint64_t p = 0; p < n->a.n; p++) {
        uint64_t k = n->a.col[p];
        t += (double)(n->b.ptr[k + 1] - n->b.ptr[k]);
    }
    return t;
}

/* One effectual pair priced at every node of its occupancy (the mean of
 * the spill over them) in one walk: steps st / wt of its sampled
 * nonzeros. */
static void prior_pair_spills(const nested *n, const stat_grid *bt, const out_runs *r,
                              uint64_t pair, const uint64_t *st, const double *wt, uint64_t ns,
                              uint64_t *blk, uint64_t *suf, const zprice *z, prior_pair *pp,
                              out_spill *sp)
{
    double zs[5], ws[5];
    out_spill t[5];
    node_walk nw[5];
    unsigned nodes = stat_prior_nodes(pp, zs, ws), nn = 0, at[5];
    for (unsigned q = 0; q < nodes; q++) {
        if (zbytes(z, zs[q] * pp->mean) <= (double)z->part)
            continue; /* as prior_spills' pairs: this tile never outgrows it */
        memset(&t[nn], 0, sizeof(t[nn]));
        memset(&nw[nn], 0, sizeof(nw[nn]));
        nw[nn].z = zs[q];
        nw[nn].sp = &t[nn];
        at[nn++] = q;
    }
    if (!nn)
        return;
    pair_spills(n, bt, r, pair, st, wt, ns, blk, suf, z, pp, nw, nn);
    for (unsigned q = 0; q < nn; q++) {
        sp->data += ws[at[q]] * t[q].data;
        sp->meta += ws[at[q]] * t[q].meta;
        sp->overflow_wb += ws[at[q]] * t[q].overflow_wb;
    }
}

/* Rule 4 for output tiles with a partial sample: every effectual pair
 * (not only the sampled ones) from its blended occupancy (prior). */
static int prior_spills(nested *n, const stat_output_sample *s, const out_runs *r,
                        const zprice *z, const model_map *final, out_prior *pr,
                        uint64_t *blk, uint64_t *suf, out_spill *sp)
{
    const tessel_allocator *a = n->e->alloc;
    model_map steps = { .alloc = a };
    model_vec keys = { .alloc = a };
    int rc = TESSEL_OK;
    cell_map m = cell_map_of(n, s);
    for (uint64_t c = 0; !rc && c < s->ncells; c++) {
        uint64_t pair, k;
        if (!cell_at(n, s, &m, c, &pair, &k))
            continue;
        uint64_t key = pair * n->ext_k + k;
        if (model_map_find(&steps, key) == UINT64_MAX && model_vec_push(&keys, key))
            rc = TESSEL_ENOMEM;
        if (!rc)
            rc = model_map_add(&steps, key, s->weight[c]);
    }
    if (!rc && keys.n)
        tessel_sort_u64_inplace(keys.v, keys.n, UINT64_MAX);
    stat_grid bt;
    memset(&bt, 0, sizeof(bt));
    uint64_t nj = n->ext_j ? n->ext_j : 1, ns = keys.n ? keys.n : 1;
    uint64_t *st = tessel_alloc_array(a, ns, sizeof(uint64_t));
    double *wt = tessel_alloc_array(a, ns, sizeof(double));
    double *acc = tessel_alloc_array(a, nj, sizeof(double));
    double *raw = tessel_alloc_array(a, nj, sizeof(double));
    uint64_t *touched = tessel_alloc_array(a, nj, sizeof(uint64_t));
    if (!rc && (!st || !wt || !acc || !raw || !touched))
        rc = TESSEL_ENOMEM;
    if (!rc)
        rc = stat_grid_transpose(&n->b, a, &bt);
    if (!rc)
        rc = stat_prior_curves(n, &bt, &keys, &steps, pr);
    if (!rc)
        memset(acc, 0, nj * sizeof(double));
    double worst = 0;
    for (uint64_t i = 0; !rc && i < n->ext_i; i++) {
        uint64_t nt;
        stat_prior_row(n, i, acc, touched, &nt);
        double v = stat_prior_raw(n, pr, i, acc, touched, nt, raw);
        for (uint64_t t = 0; t < nt; t++) {
            uint64_t j = touched[t], pair = i * n->ext_j + j, e = 0;
            double shat = model_map_find(final, pair) != UINT64_MAX ? model_map_weight(final, pair)
                                                                    : 0;
            prior_pair pp;
            stat_prior_pair(pr, acc[j], raw[t], v, shat, z->cells, &pp);
            acc[j] = 0;
            worst = pp.mean > worst ? pp.mean : worst;
            if (zbytes(z, stat_prior_top(&pp) * pp.mean) <= (double)z->part)
                continue;
            for (uint64_t b = first_at(keys.v, keys.n, pair * n->ext_k);
                 b < keys.n && keys.v[b] / n->ext_k == pair; b++, e++) {
                st[e] = keys.v[b] % n->ext_k;
                wt[e] = model_map_weight(&steps, keys.v[b]);
            }
            prior_pair_spills(n, &bt, r, pair, st, wt, e, blk, suf, z, &pp, sp);
        }
    }
    if (!rc)
        sp->worst = zbytes(z, worst);
    tessel_dealloc(a, st);
    tessel_dealloc(a, wt);
    tessel_dealloc(a, acc);
    tessel_dealloc(a, raw);
    tessel_dealloc(a, touched);
    stat_grid_free(a, &bt);
    model_vec_free(&keys);
    model_map_free(&steps);
    return rc;
}

/* Rule 4 for output tiles at boundary b (docs/semantics.md rule 4; Tailors §3.3,
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
    /* a partial sample: the prior's occupancies (stat_nested_prior.c) */
    out_prior pr;
    memset(&pr, 0, sizeof(pr));
    if (!rc && r && !s->whole && tile_multiplies(n) <= (double)NESTED_GROUP_BUDGET)
        rc = stat_prior_init(n, s, &final, z->cells, &pr);
    if (!rc && pr.on) {
        rc = prior_spills(n, s, r, z, &final, &pr, blk, suf, sp);
        model_map_free(&final);
        return rc;
    }
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
        node_walk one;
        memset(&one, 0, sizeof(one));
        one.z = 1;
        one.sp = sp;
        pair_spills(n, &bt, r, pair, st, wt, e - b, blk, suf, z, NULL, &one, 1);
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
    stat_nested_cost(n, NESTED_OUT, &cz);
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

int stat_nested_output_known(nested *n, const stat_output_sample *s, const nested_summary *sm,
                             stat_outcome *o)
{
    zprice z;
    zprice_init(n, &z);
    if (z.part && zbytes(&z, z.cells) > (double)z.part)
        return STAT_NESTED_KNOWN_DECLINED; /* the spill walks the pairs */
    out_spill sp;
    memset(&sp, 0, sizeof(sp));
    o->out_pairs = sm->out_pairs;
    o->z_writebacks = sm->out_runs;
    o->out_nnz = sm->out_written;
    output_traffic(&z, s, &sp, o);
    store_spill(n, &z, o);
    return TESSEL_OK;
}

int stat_nested_output(nested *n, const stat_output_sample *s, stat_outcome *o)
{
    const tessel_allocator *a = n->e->alloc;
    uint64_t *blk = tessel_alloc_array(a, n->ext_k + 2, sizeof(uint64_t));
    uint64_t *suf = tessel_alloc_array(a, n->ext_k + 2, sizeof(uint64_t));
    out_runs r;
    memset(&r, 0, sizeof(r));
    r.merged.alloc = a;
    int found = 0, rc = blk && suf ? find_runs(n, &r, &found) : TESSEL_ENOMEM;
    double pairs = 0, runs = 0, written = 0;
    if (!rc && found) {
        pairs = r.pairs;
        runs = r.groups - r.merges;
        written = sample_written(n, s, &r, blk, suf);
        int used = 0;
        rc = written_cells(n, s, &r, blk, suf, &written, &used);
        if (!used)
            written_ratio(n, s, &r, &written);
    } else if (!rc) {
        rc = runs_without_groups(n, s, blk, suf, &pairs, &runs, &written);
    }
    zprice z;
    zprice_init(n, &z);
    out_spill sp;
    memset(&sp, 0, sizeof(sp));
    /* partial tiles never outgrow the full tile: nothing can spill */
    int may_spill = z.part && zbytes(&z, z.cells) > (double)z.part;
    if (!rc && may_spill) {
        /* the in-visit steps from the tiles' distinct k (stat_outspill.c):
         * its problem holds what stat_ksteps_create reads, alive with it */
        stat_problem kp;
        memset(&kp, 0, sizeof(kp));
        kp.alloc = a;
        kp.a = n->a;
        kp.b = n->b;
        kp.tk = n->ea[1];
        kp.ext_k = n->ext_k;
        kp.extent_k = n->e->extent[XK];
        kp.step_k = stat_step_width(n->e, n->bd.b);
        kp.src[0] = n->src[0];
        kp.src[1] = n->src[1];
        memcpy(kp.src_edge[0], n->ea, sizeof(n->ea));
        memcpy(kp.src_edge[1], n->eb, sizeof(n->eb));
        rc = stat_ksteps_create(&kp, &n->ks);
        if (!rc)
            rc = output_spills(n, s, found ? &r : NULL, &z, blk, suf, &sp);
        stat_ksteps_free(&n->ks);
    }
    if (!rc) {
        o->out_pairs = pairs;
        o->z_writebacks = runs;
        o->out_nnz = written; /* output_traffic sets the nonzeros */
        n->out_written = written;
        output_traffic(&z, s, &sp, o);
        store_spill(n, &z, o);
    }
    runs_free(a, &r);
    tessel_dealloc(a, blk);
    tessel_dealloc(a, suf);
    return rc;
}

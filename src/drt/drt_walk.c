/* The DRT walker: forms the Einsum tasks of drt §3 (Algorithm 1, with
 * Algorithm 2's growDims growing one micro tile at a time, n = 1) on the
 * micro-tile grid, and applies docs/semantics.md's traffic rules 1-4 to the
 * dynamic tiles.
 *
 * Roles. The loop order at the buffer level is (x0, x1, x2), outermost
 * first. U is the most stationary input (sortByStationarity, Alg. 1
 * line 10), V the other:
 *   - x2 uncontracted (IKJ, KIJ: U = A; JKI, KJI: U = B, drt §3.3): U is
 *     the input not indexed by x2, so it stays resident over the whole
 *     x2 loop; V is indexed by k and x2.
 *   - x2 = k (IJK, JIK: output stationary): U is the input indexed by x0
 *     (A for IJK, B for JIK), V the one indexed by x1.
 * Growth (Alg. 2): from a one-micro-tile base (Alg. 1 line 5), the
 * contracted index k first in a single pass, then the uncontracted one
 * (contracted-first); or one step along k, one along the other, and so on,
 * each index dropping out when a step fails (alternating, drt §3.2 and
 * §6.3). A step adds the strip of micro tiles one micro tile further
 * along the index; it succeeds when the strip is empty or the tile still
 * fits its partition, and a failed step constrains that index (Alg. 2
 * lines 14-16, the fallback "continue").
 *
 * How successive tasks' base points advance (the "K_1 of the first call
 * becomes the starting index of the second", drt §3.2), per order:
 *   x2 uncontracted: IKJ, KIJ, JKI, KJI.
 *     Panels along x0: a panel starts at P0 (0, then the previous panel's
 *     end P1). Its first U tile grows from base (x0 = P0, x1 = 0) along
 *     both of U's indices (k first); the x0 range [P0, P1) it reaches is
 *     fixed for the whole panel. Each later middle step starts at M0 =
 *     the previous step's end M1 and grows U along x1 only, from base
 *     (P0, M0). Within a middle step the tasks sweep x2 from 0: V is
 *     co-tiled to U's k range (constraint[k]) and grows along x2 from
 *     W0 = the previous task's W1. So for IKJ: i panels, k steps inside a
 *     panel, j tasks inside a k step; for KJI: k panels, j steps, i tasks.
 *   x2 = k: IJK, JIK.
 *     Panels along x0 as above; the first task of the first middle step
 *     grows U from (P0, k = 0) along k then x0, fixing [P0, P1). Each
 *     middle step starts at M0 = previous M1 with k = 0: its first task
 *     grows U along k only (x0 fixed), then V, co-tiled to that k range,
 *     grows along x1 from M0, fixing [M0, M1) for the step. Every later
 *     task of the step starts at K0 = the previous task's K1 and grows k
 *     while both U (x0 fixed) and V (x1 fixed) fit.
 * The output tile of a task is its i range x j range.
 *
 * Fallback (Alg. 1 line 13, "subdivide the most recent dimension"): when
 * V's first strip (one micro tile along its free index over U's k range)
 * overflows V's partition, the k range is subdivided at micro-tile
 * granularity: for x2 uncontracted the task splits into consecutive
 * sub-tasks along k, each the longest run that fits (U stays resident, the
 * output tile too); for x2 = k the task's k range shrinks to that run (and
 * U's tile with it). A single micro tile that alone overflows its partition
 * is not subdivided below the micro tile: it is overbooked like Tailors
 * (docs/semantics.md rule 4): the partition's worth stays resident and the rest is
 * streamed again on every reuse; overflow_tiles counts such fills.
 *
 * Loading rule (partner-aware, drt §3.2.1 and §4.1: macro tiles are
 * logical sets of micro tiles, collected into fast memory by a tile
 * extractor that knows each micro tile's footprint from its metadata).
 * A micro tile on k micro line x is loaded only when the partner's tile
 * holds a non-empty micro tile on line x, for U and V alike:
 *   - Statically, micro tiles whose k line is empty in the other input
 *     never meet a partner; drt_data_build drops them from both grids, so
 *     every box sum below counts partnered micro tiles only.
 *   - x2 uncontracted: U stays resident over the whole x2 sweep, whose V
 *     tiles cover all of x2 on U's k range; the union of U's partners over
 *     its residency is every k line where V is non-empty at all, so U
 *     loads exactly its box's partnered micro tiles (a micro tile asked for
 *     later in the sweep would only be added to the resident set: counted
 *     once, at the fill). V's tile loads its micro tiles on the k lines of
 *     U's resident tile.
 *   - x2 = k: U's and V's tiles of a task load their micro tiles on the k
 *     lines where both hold one.
 * Footprints, fills and partition checks count loaded micro tiles only.
 * Growth checks are exact except for U's growth in an output-stationary
 * step's first task: it runs before V's tile exists (Alg. 1 sizes U
 * first), so it counts U's partnered micro tiles over its whole box, a
 * superset of what the task loads once V is known; the check is
 * conservative there and the load still fits. Empty and unpartnered lines
 * cost nothing and are crossed for free. A resident tile is reused when
 * the next task needs the same box with the same loaded micro tiles
 * (micro-tile and nonzero counts and a 64-bit signature of the set, see
 * tile_id); one box with another subset is a new fill.
 *
 * Visiting only loaded lines. A sweep collects U's k lines once, then V's
 * micro tiles on those lines per x2 line; an output-stationary panel
 * buckets V's micro tiles on the panel's U lines by x1 line once, and a
 * step merges its buckets per k line: the walks never step through a
 * micro line that loads nothing.
 *
 * Bytes. The footprint of a macro tile is the sum of its loaded micro
 * tiles' footprints in the level's format at the micro shape: m * fixed +
 * n * per bits for m micro tiles and n nonzeros, rounded up to bytes once
 * per macro tile. The output tile likewise, from its partial nonzeros and
 * non-empty micro tiles (output rules unchanged: docs/semantics.md rule 2).
 *
 * In-task dataflow (mapping.strategy_options.dataflow). merged (default):
 * every product is reduced into the output tile as it is made (ExTensor's
 * inner product, MatRaptor's row-wise Gustavson merging a row in its
 * sorting queues), so Z's partition holds the tile's partial sums only.
 * outer-product (OuterSPACE): a task's products are held unmerged until
 * its merge phase, beside the resident tile; what exceeds Z's partition
 * spills (drt_walk_out.c, drt_w_partials). */
#include <math.h>
#include <string.h>

#include "drt_walk_internal.h"

/* ------------------------------------------------------------------ */
/* Tasks. */

/* Rule 4 per child read (docs/semantics.md; Tailors §4, §6.2) for the
 * resident tile of `role` whose residency ends, at a level with a child
 * level (on_task): the child filled R = child_nnz / n whole reads of it,
 * the fill streamed it once, and its bumped part S - P moves again for
 * each read beyond the first, max(0, R - 1) (S - P), split into data and
 * metadata like the tile and truncated as exact_bumped.c does. Counted
 * per residency: a tile evicted and filled again starts a new count. */
static void settle_reads(walker *w, unsigned role)
{
    double reads = w->child_nnz[role];
    w->child_nnz[role] = 0;
    if (!w->on_task || !w->has_res[role])
        return;
    const tile *t = &w->res[role];
    uint64_t part = w->c[role].part, total = t->data + t->meta;
    if (!part || total <= part || !t->n)
        return;
    double r = reads / (double)t->n;
    if (!(r > 1))
        return;
    uint64_t extra = (uint64_t)((r - 1) * (double)(total - part));
    uint64_t meta = (uint64_t)((double)extra * (double)t->meta / (double)total);
    tessel_traffic *tr = &w->r->traffic[1][w->d->roles.tensor[role]];
    tr->in_data += extra - meta;
    tr->in_metadata += meta;
    tr->bumped_bytes += extra;
    tr->overflow_bytes += extra;
}

/* Rule 1 (and rule 4 for an overbooked resident tile: per use at the
 * innermost level, where the compute reads the tile once per task; per
 * child read, settle_reads, where a child level runs each task). */
static void use_input(walker *w, unsigned role, const tile *t)
{
    tessel_result *r = w->r;
    tessel_traffic *tr = &r->traffic[1][w->d->roles.tensor[role]];
    uint64_t part = w->c[role].part, total = t->data + t->meta;
    if (!w->has_res[role] || !drt_w_same_tile(&w->res[role], t)) {
        settle_reads(w, role);
        w->res[role] = *t;
        w->has_res[role] = 1;
        w->fill_nnz[role] += (double)t->n;
        tr->fills++;
        tr->in_data += t->data;
        tr->in_metadata += t->meta;
        tr->partition_bytes = part;
        if (total > tr->worst_tile_bytes)
            tr->worst_tile_bytes = total;
        if (part) {
            if (total > part) {
                r->overflow_tiles++;
                tr->overflow_tiles++;
            }
            w->util_sum += (double)total / (double)part;
            w->util_n++;
        }
        return;
    }
    if (part && total > part && !w->on_task) {
        uint64_t extra = total - part;
        uint64_t meta = (uint64_t)((double)extra * (double)t->meta / (double)total);
        tr->in_data += extra - meta;
        tr->in_metadata += meta;
        tr->bumped_bytes += extra;
        tr->overflow_bytes += extra;
    }
}

/* One Einsum task (drt §3, Eq. 2): A's tile, B's tile, the k range. */
static void task(walker *w, const tile *ta, const tile *tb, uint64_t k0, uint64_t k1)
{
    const tile *ts[3] = { NULL, ta, tb };
    for (unsigned role = DRT_A; role <= DRT_B; role++) {
        if (!w->has_prev[role] || !drt_w_same_tile(&w->prev[role], ts[role]))
            w->alg[role]++;
        w->prev[role] = *ts[role];
        w->has_prev[role] = 1;
    }
    if (!ta->use || !tb->use)
        return; /* not effectual: an empty macro tile */
    const drt_data *d = w->d;
    tessel_result *r = w->r;
    w->tasks++;
    r->effectual_tiles[1]++;
    w->edge_sum[DRT_I] += drt_w_span(d, DRT_I, ta->lo[DRT_I], ta->hi[DRT_I]);
    w->edge_sum[DRT_J] += drt_w_span(d, DRT_J, tb->lo[DRT_J], tb->hi[DRT_J]);
    w->edge_sum[DRT_K] += drt_w_span(d, DRT_K, k0, k1);
    for (unsigned role = DRT_A; role <= DRT_B; role++) {
        use_input(w, role, ts[role]);
        /* the innermost level: the MACs' intersection reads coordinates */
        r->intersections += ts[role]->use;
        r->traffic[1][d->roles.tensor[role]].child_read_metadata +=
            ts[role]->use * w->spec->level[w->lv].coord_bits / 8;
    }
    uint64_t lo[2] = { ta->lo[DRT_I], tb->lo[DRT_J] }, hi[2] = { ta->hi[DRT_I], tb->hi[DRT_J] };
    if (!w->zres || memcmp(lo, w->zlo, sizeof(lo)) || memcmp(hi, w->zhi, sizeof(hi))) {
        if (w->zres)
            drt_w_write_back(w);
        memcpy(w->zlo, lo, sizeof(lo));
        memcpy(w->zhi, hi, sizeof(hi));
        w->zres = 1;
        drt_w_read_back(w, k0);
    } else {
        drt_w_spill(w);
    }
    w->zk = k1;
    if (w->spec->strategy.dataflow)
        drt_w_partials(w, k0, k1);
    if (w->on_task && !w->err) {
        drt_task_box b;
        memset(&b, 0, sizeof(b));
        b.lo[DRT_I] = ta->lo[DRT_I], b.hi[DRT_I] = ta->hi[DRT_I];
        b.lo[DRT_J] = tb->lo[DRT_J], b.hi[DRT_J] = tb->hi[DRT_J];
        b.lo[DRT_K] = k0, b.hi[DRT_K] = k1;
        w->err = w->on_task(w->ctx, &b);
        w->child_nnz[DRT_A] += b.child_fill_nnz[DRT_A];
        w->child_nnz[DRT_B] += b.child_fill_nnz[DRT_B];
    }
}

static void run_task(walker *w, unsigned u, const tile *tu, const tile *tv, uint64_t k0,
                     uint64_t k1)
{
    if (u == DRT_A)
        task(w, tu, tv, k0, k1);
    else
        task(w, tv, tu, k0, k1);
}

/* Output stationary: V's micro tiles partnered with the panel's U tile
 * (on one of its k lines), bucketed by V's x1 line, k ascending in each
 * bucket (a stable counting sort over U's sorted k lines). */
static void bucket_partners(walker *w, const drt_lines *vk, uint64_t nx1)
{
    const acc *ka = &w->ka;
    uint64_t *off = w->boff;
    memset(off, 0, (nx1 + 1) * sizeof(uint64_t));
    for (uint64_t t = 0; t < ka->len; t++) {
        uint64_t kx = ka->list[t];
        if (kx < vk->nlines)
            for (uint64_t p = vk->ptr[kx]; p < vk->ptr[kx + 1]; p++)
                off[vk->other[p] + 1]++;
    }
    for (uint64_t c = 0; c < nx1; c++)
        off[c + 1] += off[c];
    for (uint64_t t = 0; t < ka->len; t++) {
        uint64_t kx = ka->list[t];
        if (kx < vk->nlines)
            for (uint64_t p = vk->ptr[kx]; p < vk->ptr[kx + 1]; p++) {
                uint64_t q = off[vk->other[p]]++;
                w->bk[q] = (uint32_t)kx;
                w->bn[q] = vk->cnz[p + 1] - vk->cnz[p];
            }
    }
    for (uint64_t c = nx1; c > 0; c--) /* back to bucket starts */
        off[c] = off[c - 1];
    off[0] = 0;
}

/* Bucket c's micro tiles on k lines below k1. */
static void bucket_strip(const walker *w, uint64_t c, uint64_t k1, uint64_t *m, uint64_t *n)
{
    *m = *n = 0;
    for (uint64_t q = w->boff[c]; q < w->boff[c + 1] && w->bk[q] < k1; q++)
        ++*m, *n += w->bn[q];
}

/* x2 uncontracted: the x2 sweep of one middle step, U resident. Only the
 * x2 micro lines where V has a micro tile partnered with U's tile are
 * visited: U's k lines are collected once, then V's micro tiles on those
 * k lines are merged per x2 line (the walk never looks at a line that
 * would load nothing). */
static void sweep_stationary(walker *w, unsigned u, unsigned v, const tile *tu)
{
    const drt_data *d = w->d;
    unsigned x2 = w->order[2], y = drt_w_other_index(w, u, DRT_K);
    const drt_grid *gu = &d->grid[u], *gv = &d->grid[v];
    uint64_t k0 = tu->lo[DRT_K], k1 = tu->hi[DRT_K];
    acc *ka = &w->ka, *wa = &w->wa;
    /* U's micro tiles per k line (its lines along y, entries over k) */
    const drt_lines *uy = &gu->by[gu->x[0] == y ? 0 : 1];
    for (uint64_t c = tu->lo[y]; c < tu->hi[y] && c < uy->nlines; c++) {
        uint64_t b = uy->ptr[c + 1];
        for (uint64_t p = drt_lower_bound(uy->other, uy->ptr[c], b, k0); p < b && uy->other[p] < k1;
             p++)
            drt_w_acc_add(ka, uy->other[p], uy->cnz[p + 1] - uy->cnz[p], 0);
    }
    /* V's micro tiles on those k lines, per x2 line (V's lines along k) */
    const drt_lines *vk = &gv->by[gv->x[0] == DRT_K ? 0 : 1];
    for (uint64_t t = 0; t < ka->len; t++) {
        uint64_t kx = ka->list[t];
        if (kx >= vk->nlines)
            continue;
        for (uint64_t p = vk->ptr[kx]; p < vk->ptr[kx + 1]; p++)
            drt_w_acc_add(wa, vk->other[p], vk->cnz[p + 1] - vk->cnz[p],
                          drt_w_tile_id(kx, vk->other[p]));
    }
    drt_w_acc_sort(wa, d->mext[x2]);
    uint64_t lo[DRT_NX] = { 0 }, hi[DRT_NX] = { 0 };
    lo[DRT_K] = k0, hi[DRT_K] = k1;
    uint64_t w0 = 0;
    for (uint64_t i = 0; i < wa->len;) {
        uint64_t t = wa->list[i], m = wa->m[t], n = wa->n[t], h = wa->h[t];
        tile tv;
        if (drt_w_fits(w, v, m, n)) {
            /* grow along x2 (Alg. 2); lines without a partnered micro
             * tile load nothing and are crossed for free, but widen the
             * output tile (U's y range x V's x2 range, holding the
             * reduction up to k1), which must fit Z's partition */
            drt_w_zg_rect(w, x2, tu->lo[y], tu->hi[y], k1);
            uint64_t zend = w0 + drt_w_zg_add(w, w0, t + 1, 1);
            int zstop = 0;
            for (i++; i < wa->len; i++) {
                uint64_t c = wa->list[i];
                if (!drt_w_fits(w, v, m + wa->m[c], n + wa->n[c]))
                    break; /* TooLarge: constraint[x2] (Alg. 2 line 15) */
                uint64_t got = drt_w_zg_add(w, zend, c + 1, 0);
                zend += got;
                if (zend < c + 1) {
                    zstop = 1; /* the output tile is TooLarge */
                    break;
                }
                m += wa->m[c], n += wa->n[c], h += wa->h[c];
            }
            uint64_t end = i < wa->len ? wa->list[i] : d->mext[x2];
            if (!zstop)
                zend += drt_w_zg_add(w, zend, end, 0);
            drt_w_zg_end(w);
            lo[x2] = w0, hi[x2] = zend < end ? zend : end;
            drt_w_make_tile(w, v, lo, hi, m, n, h, &tv);
            run_task(w, u, tu, &tv, k0, k1);
            w0 = hi[x2];
            continue;
        }
        /* Fallback (Alg. 1 line 13): subdivide k into runs whose V strip
         * fits, walking V's partnered micro tiles of line t (unpartnered
         * ones join a run for free; the first tile of a run is taken even
         * when it alone overflows: overbooked). */
        const drt_lines *l = &gv->by[gv->x[0] == x2 ? 0 : 1];
        uint64_t b = l->ptr[t + 1], p = drt_lower_bound(l->other, l->ptr[t], b, k0);
        lo[x2] = w0, hi[x2] = t + 1;
        for (uint64_t c0 = k0, c1; c0 < k1; c0 = c1) {
            while (p < b && l->other[p] < k1 && !ka->m[l->other[p]])
                p++;
            if (!(p < b && l->other[p] < k1))
                break;
            m = 1, n = l->cnz[p + 1] - l->cnz[p], h = drt_w_tile_id(l->other[p], t);
            for (p++; p < b && l->other[p] < k1; p++) {
                uint64_t kx = l->other[p], cnt = l->cnz[p + 1] - l->cnz[p];
                if (!ka->m[kx])
                    continue;
                if (!drt_w_fits(w, v, m + 1, n + cnt))
                    break;
                m++, n += cnt, h += drt_w_tile_id(kx, t);
            }
            c1 = p < b && l->other[p] < k1 ? l->other[p] : k1;
            lo[DRT_K] = c0, hi[DRT_K] = c1;
            drt_w_make_tile(w, v, lo, hi, m, n, h, &tv);
            tile tu2 = *tu;
            uint64_t ulo[DRT_NX], uhi[DRT_NX], um, un;
            memcpy(ulo, tu->lo, sizeof(ulo));
            memcpy(uhi, tu->hi, sizeof(uhi));
            ulo[DRT_K] = c0, uhi[DRT_K] = c1;
            drt_w_rect_sum(w, u, ulo, uhi, &um, &un);
            tu2.use = un;
            run_task(w, u, &tu2, &tv, c0, c1);
        }
        lo[DRT_K] = k0, hi[DRT_K] = k1;
        w0 = t + 1;
        i++;
    }
    drt_w_acc_clear(ka);
    drt_w_acc_clear(wa);
}

/* Bounds the output index y of the tile growing in [lo, hi) by Z's
 * partition (lines mode, drt_walk_out.c), its current lines taken. */
static void out_lines(walker *w, unsigned y, uint64_t k, const uint64_t *lo, const uint64_t *hi)
{
    drt_w_zg_lines(w, y, k);
    drt_w_zg_add(w, lo[y], hi[y], 1);
}

static void walk_stationary(walker *w)
{
    const drt_data *d = w->d;
    unsigned x0 = w->order[0], x1 = w->order[1], x2 = w->order[2];
    unsigned u = x2 == DRT_J ? DRT_A : DRT_B, v = u == DRT_A ? DRT_B : DRT_A;
    unsigned y = x0 == DRT_K ? x1 : x0; /* U's uncontracted index */
    for (uint64_t p0 = 0, p1; p0 < d->mext[x0]; p0 = p1) {
        p1 = p0 + 1;
        int first = 1;
        for (uint64_t m0 = 0; m0 < d->mext[x1];) {
            uint64_t lo[DRT_NX] = { 0 }, hi[DRT_NX] = { 0 }, m, n;
            lo[x0] = p0, hi[x0] = first ? p0 + 1 : p1;
            lo[x1] = m0, hi[x1] = m0 + 1;
            drt_w_rect_sum(w, u, lo, hi, &m, &n);
            if (first) {
                /* U's y range spans the output tiles: bounded by Z at the
                 * reduction prefix they hold when written back (all of k
                 * when the panel's y range is kept across k steps, x1 = k) */
                unsigned dims[2] = { DRT_K, y };
                if (w->growth == TESSEL_DRT_GROW_CONTRACTED_FIRST) {
                    drt_w_grow(w, u, lo, hi, dims, 1, &m, &n);
                    out_lines(w, y, x1 == DRT_K ? d->mext[DRT_K] : hi[DRT_K], lo, hi);
                    drt_w_grow(w, u, lo, hi, dims + 1, 1, &m, &n);
                } else {
                    out_lines(w, y, d->mext[DRT_K], lo, hi);
                    drt_w_grow(w, u, lo, hi, dims, 2, &m, &n);
                }
                drt_w_zg_end(w);
                p1 = hi[x0];
                first = 0;
            } else {
                unsigned dims[1] = { x1 };
                if (x1 == y)
                    out_lines(w, y, hi[DRT_K], lo, hi);
                drt_w_grow(w, u, lo, hi, dims, 1, &m, &n);
                drt_w_zg_end(w);
            }
            if (n) {
                /* U's partnered micro tiles: its content is fixed by
                 * its box (the grid holds partnered tiles only), h = 0 */
                tile tu;
                drt_w_make_tile(w, u, lo, hi, m, n, 0, &tu);
                sweep_stationary(w, u, v, &tu);
            }
            m0 = hi[x1];
        }
    }
}

/* x2 = k: output stationary. Per panel, U's micro tiles are merged per k
 * line once; per middle step, V's micro tiles on U's k lines likewise, so
 * the tasks of the step visit only the k lines where both hold a micro
 * tile: exactly the lines that are loaded. */
static void walk_output_stationary(walker *w)
{
    const drt_data *d = w->d;
    unsigned x0 = w->order[0], x1 = w->order[1];
    unsigned u = x0 == DRT_I ? DRT_A : DRT_B, v = u == DRT_A ? DRT_B : DRT_A;
    const drt_grid *gu = &d->grid[u], *gv = &d->grid[v];
    const drt_lines *ux = &gu->by[gu->x[0] == x0 ? 0 : 1]; /* U along x0, entries over k */
    const drt_lines *vk = &gv->by[gv->x[0] == DRT_K ? 0 : 1]; /* V along k, entries over x1 */
    acc *ka = &w->ka, *wa = &w->wa;
    uint64_t mk = d->mext[DRT_K];
    for (uint64_t p0 = 0, p1; p0 < d->mext[x0]; p0 = p1) {
        /* The panel's first U tile grows from (P0, k = 0) along k, then
         * x0, fixing [P0, P1). */
        uint64_t ulo[DRT_NX] = { 0 }, uhi[DRT_NX] = { 0 }, vlo[DRT_NX] = { 0 },
                 vhi[DRT_NX] = { 0 }, um, un;
        ulo[x0] = p0, uhi[x0] = p0 + 1;
        ulo[DRT_K] = 0, uhi[DRT_K] = 1;
        drt_w_rect_sum(w, u, ulo, uhi, &um, &un);
        unsigned dims[2] = { DRT_K, x0 };
        out_lines(w, x0, mk, ulo, uhi); /* the panel spans the step's output tiles */
        drt_w_grow(w, u, ulo, uhi, dims, 2, &um, &un);
        drt_w_zg_end(w);
        p1 = uhi[x0];
        uint64_t first_k1 = uhi[DRT_K];
        for (uint64_t c = p0; c < p1 && c < ux->nlines; c++)
            for (uint64_t p = ux->ptr[c]; p < ux->ptr[c + 1]; p++)
                drt_w_acc_add(ka, ux->other[p], ux->cnz[p + 1] - ux->cnz[p],
                              drt_w_tile_id(ux->other[p], c));
        if (!ka->len)
            continue; /* nothing of U here has a partner: no effectual task */
        drt_w_acc_sort(ka, mk);
        /* Every later middle step's first U tile grows from (P0, k = 0)
         * along k only, x0 fixed: the same for all of them (partnered
         * micro tiles of the panel, line by line; the first line is taken
         * even when it alone overflows). */
        uint64_t cached_k1, cm = 0, cn = 0, ci = 0;
        if (ka->list[0] == 0)
            cm = ka->m[0], cn = ka->n[0], ci = 1;
        while (ci < ka->len && drt_w_fits(w, u, cm + ka->m[ka->list[ci]], cn + ka->n[ka->list[ci]]))
            cm += ka->m[ka->list[ci]], cn += ka->n[ka->list[ci]], ci++;
        cached_k1 = ci < ka->len ? ka->list[ci] : mk;
        bucket_partners(w, vk, d->mext[x1]);
        const uint64_t *off = w->boff;
        int first_mid = 1;
        for (uint64_t m0 = 0, m1; m0 < d->mext[x1]; m0 = m1) {
            uint64_t k1 = first_mid ? first_k1 : cached_k1, vm, vn, sm, sn;
            first_mid = 0;
            /* V co-tiled to [0, k1) grows along x1 from M0, counting only
             * its micro tiles on U's k lines (what it will load). */
            bucket_strip(w, m0, k1, &vm, &vn);
            if (vm && !drt_w_fits(w, v, vm, vn)) {
                /* Fallback: shrink the k range to the run of line M0 that
                 * V fits (its first micro tile taken even if it alone
                 * overflows: overbooked). */
                uint64_t q = off[m0];
                vm = vn = 0;
                for (; q < off[m0 + 1] && w->bk[q] < k1; q++) {
                    if (vm && !drt_w_fits(w, v, vm + 1, vn + w->bn[q]))
                        break;
                    vm++, vn += w->bn[q];
                }
                if (q < off[m0 + 1] && w->bk[q] < k1)
                    k1 = w->bk[q];
            }
            /* the step's output tile, [P0, P1) x [M0, M1), holds all of
             * k when written back: it must fit Z's partition too */
            drt_w_zg_rect(w, x1, p0, p1, mk);
            drt_w_zg_add(w, m0, m0 + 1, 1);
            for (m1 = m0 + 1; m1 < d->mext[x1]; m1++) {
                bucket_strip(w, m1, k1, &sm, &sn);
                if (sm && !drt_w_fits(w, v, vm + sm, vn + sn))
                    break;
                if (!drt_w_zg_add(w, m1, m1 + 1, 0))
                    break;
                vm += sm, vn += sn;
            }
            drt_w_zg_end(w);
            /* V's partnered micro tiles of the step, per k line: their
             * lines are those where both hold a micro tile. */
            for (uint64_t c = m0; c < m1; c++)
                for (uint64_t q = off[c]; q < off[c + 1]; q++)
                    drt_w_acc_add(wa, w->bk[q], w->bn[q], drt_w_tile_id(w->bk[q], c));
            drt_w_acc_sort_within(wa, ka, mk);
            ulo[x0] = p0, uhi[x0] = p1;
            vlo[x1] = m0, vhi[x1] = m1;
            uint64_t k0 = 0, i = 0;
            int first_task = 1;
            while (i < wa->len) {
                uint64_t a[3] = { 0 }, b[3] = { 0 }; /* U's and V's m, n, h */
                if (!first_task) {
                    /* k grows while both co-tiled inputs fit (the first
                     * line is taken even when it overflows: overbooked) */
                    uint64_t kx = wa->list[i++];
                    a[0] = ka->m[kx], a[1] = ka->n[kx], a[2] = ka->h[kx];
                    b[0] = wa->m[kx], b[1] = wa->n[kx], b[2] = wa->h[kx];
                    for (; i < wa->len; i++) {
                        kx = wa->list[i];
                        if (!drt_w_fits(w, u, a[0] + ka->m[kx], a[1] + ka->n[kx]) ||
                            !drt_w_fits(w, v, b[0] + wa->m[kx], b[1] + wa->n[kx]))
                            break;
                        a[0] += ka->m[kx], a[1] += ka->n[kx], a[2] += ka->h[kx];
                        b[0] += wa->m[kx], b[1] += wa->n[kx], b[2] += wa->h[kx];
                    }
                    k1 = i < wa->len ? wa->list[i] : mk;
                } else {
                    /* the first task's k range was fixed by U's growth */
                    for (; i < wa->len && wa->list[i] < k1; i++) {
                        uint64_t kx = wa->list[i];
                        a[0] += ka->m[kx], a[1] += ka->n[kx], a[2] += ka->h[kx];
                        b[0] += wa->m[kx], b[1] += wa->n[kx], b[2] += wa->h[kx];
                    }
                    first_task = 0;
                }
                if (a[0]) {
                    tile tu, tv;
                    ulo[DRT_K] = vlo[DRT_K] = k0;
                    uhi[DRT_K] = vhi[DRT_K] = k1;
                    drt_w_make_tile(w, u, ulo, uhi, a[0], a[1], a[2], &tu);
                    drt_w_make_tile(w, v, vlo, vhi, b[0], b[1], b[2], &tv);
                    run_task(w, u, &tu, &tv, k0, k1);
                }
                k0 = k1;
            }
            drt_w_acc_clear(wa);
        }
        drt_w_acc_clear(ka);
    }
}

int drt_walk(const tessel_spec *spec, const drt_data *d, tessel_drt_growth growth,
             tessel_result *out, tessel_drt_summary *summary, tessel_diag *diag)
{
    drt_walk_args a;
    memset(&a, 0, sizeof(a));
    a.spec = spec;
    a.level = 1;
    a.d = a.od = d;
    a.growth = growth;
    return drt_walk_run(&a, out, summary, diag);
}

/* Traffic of one DRT walk at args->level: setup, the walk in the spec's loop order, the result. */
int drt_walk_run(drt_walk_args *args, tessel_result *out, tessel_drt_summary *summary,
                 tessel_diag *diag)
{
    const tessel_spec *spec = args->spec;
    const drt_data *d = args->d;
    walker w;
    memset(&w, 0, sizeof(w));
    w.d = d;
    w.od = args->od ? args->od : d;
    memcpy(w.off, args->off, sizeof(w.off));
    w.lv = args->level;
    w.on_task = args->on_task;
    w.ctx = args->ctx;
    w.spec = spec;
    w.r = out;
    w.growth = args->growth;
    int rc = drt_w_setup_costs(&w, diag);
    if (rc)
        return rc;
    drt_w_setup_order(&w);
    uint64_t nzt = w.od->out.ntiles ? w.od->out.ntiles : 1;
    w.cursor = args->cursor;
    if (!w.cursor) {
        w.cursor = tessel_alloc_array(d->alloc, nzt, sizeof(uint32_t));
        if (!w.cursor)
            return drt_oom(diag);
        memset(w.cursor, 0, nzt * sizeof(uint32_t));
    }
    /* the accumulators: one block (ka over k; wa over the longest index) */
    uint64_t nk = d->mext[DRT_K] ? d->mext[DRT_K] : 1, nw = nk;
    for (unsigned x = 0; x < DRT_NX; x++)
        if (d->mext[x] > nw)
            nw = d->mext[x];
    uint64_t nt = d->grid[DRT_A].ntiles > d->grid[DRT_B].ntiles ? d->grid[DRT_A].ntiles
                                                                  : d->grid[DRT_B].ntiles;
    nt = nt ? nt : 1;
    w.scratch = tessel_alloc_array(d->alloc, 5 * nk + 8 * nw, sizeof(uint64_t));
    w.boff = tessel_alloc_array(d->alloc, nw + 1, sizeof(uint64_t));
    w.bn = tessel_alloc_array(d->alloc, nt, sizeof(uint64_t));
    w.bk = tessel_alloc_array(d->alloc, nt, sizeof(uint32_t));
    if (!w.scratch || !w.boff || !w.bn || !w.bk) {
        tessel_dealloc(d->alloc, w.bk);
        tessel_dealloc(d->alloc, w.bn);
        tessel_dealloc(d->alloc, w.boff);
        tessel_dealloc(d->alloc, w.scratch);
        if (!args->cursor)
            tessel_dealloc(d->alloc, w.cursor);
        return drt_oom(diag);
    }
    memset(w.scratch, 0, (5 * nk + 8 * nw) * sizeof(uint64_t));
    uint64_t *q = w.scratch;
    /* the output growth bound's per-line sums (zero bits are 0.0) */
    w.zg.lm = (double *)(void *)q, q += nw;
    w.zg.ln = (double *)(void *)q, q += nw;
    w.zg.touched = q, q += nw;
    acc *as[2] = { &w.ka, &w.wa };
    for (unsigned i = 0; i < 2; i++) {
        uint64_t len = i ? nw : nk;
        as[i]->m = q, q += len;
        as[i]->n = q, q += len;
        as[i]->h = q, q += len;
        as[i]->list = q, q += len;
        as[i]->scratch = q, q += len;
    }
    if (w.order[2] == DRT_K)
        walk_output_stationary(&w);
    else
        walk_stationary(&w);
    if (w.zres)
        drt_w_write_back(&w);
    settle_reads(&w, DRT_A);
    settle_reads(&w, DRT_B);
    drt_w_finish(&w, summary);
    drt_walk_raw *raw = &args->raw;
    raw->updates = w.updates, raw->in_data = w.in_data, raw->in_meta = w.in_meta;
    raw->out_data = w.out_data, raw->out_meta = w.out_meta;
    raw->tasks = w.tasks;
    memcpy(raw->edge_sum, w.edge_sum, sizeof(raw->edge_sum));
    raw->util_sum = w.util_sum;
    raw->util_n = w.util_n;
    memcpy(raw->fill_nnz, w.fill_nnz, sizeof(raw->fill_nnz));
    tessel_dealloc(d->alloc, w.bk);
    tessel_dealloc(d->alloc, w.bn);
    tessel_dealloc(d->alloc, w.boff);
    tessel_dealloc(d->alloc, w.scratch);
    if (!args->cursor)
        tessel_dealloc(d->alloc, w.cursor);
    if (w.err)
        return w.err;
    for (unsigned l = 0; l < out->nlevels; l++)
        for (unsigned t = 0; t < out->ntensors; t++)
            if (out->traffic[l][t].data_bytes == UINT64_MAX ||
                out->traffic[l][t].metadata_bytes == UINT64_MAX)
                return tessel_diag_set(diag, TESSEL_ERANGE, spec->path, 0, 0, NULL,
                                       "a DRT count reaches 2^64 and would overflow");
    return TESSEL_OK;
}

/* The DRT walker's output side (the model: drt_walk.c): partial nonzeros
 * of an output rectangle after a reduction prefix, the resident output
 * tile's write-backs, spills and read-backs (docs/semantics.md rules 2
 * and 4), and the bound Z's partition sets on the tiles' growth. */
#include <math.h>
#include <string.h>

#include "drt_walk_internal.h"

/* ------------------------------------------------------------------ */
/* The output: partial nonzeros of a rectangle after a reduction prefix. */

static double elems(const drt_data *d, unsigned x, uint64_t c)
{
    uint64_t lo = c * d->mu[x], e = d->roles.extent[x];
    return (double)(e - lo < d->mu[x] ? e - lo : d->mu[x]);
}

static void tile_at(walker *w, uint64_t t, uint64_t k, oq *q)
{
    const drt_otable *o = &w->od->out;
    uint64_t s = o->start[t], e = o->start[t + 1], c = w->cursor[t];
    /* c = entries with kq < k, from the last one by galloping: O(1) for
     * the short moves of the stationary orders, O(log) for the long ones
     * of the output-stationary orders */
    if (c > 0 && o->kq[s + c - 1] >= k) {
        uint64_t step = 1, hi = c - 1; /* kq[s + hi] >= k */
        while (hi >= step && o->kq[s + hi - step] >= k)
            hi -= step, step *= 2;
        uint64_t lo = hi >= step ? hi - step + 1 : 0; /* kq[s + lo - 1] < k */
        c = drt_lower_bound(o->kq, s + lo, s + hi, k) - s;
    } else if (s + c < e && o->kq[s + c] < k) {
        uint64_t step = 1, lo = c + 1; /* kq[s + lo - 1] < k */
        while (s + lo + step - 1 < e && o->kq[s + lo + step - 1] < k)
            lo += step, step *= 2;
        uint64_t hi = s + lo + step - 1 < e ? s + lo + step - 1 : e;
        c = drt_lower_bound(o->kq, s + lo, hi, k) - s;
    }
    w->cursor[t] = (uint32_t)c;
    double v = c ? o->cum[s + c - 1] : 0;
    if (c && o->mul)
        q->mul += o->mul[s + c - 1];
    if (!o->stat) {
        q->n += v;
        if (c) {
            q->m += 1;
            q->logempty = -INFINITY;
        }
        return;
    }
    if (!c)
        return;
    double area = elems(w->od, DRT_I, o->tile_i[t]) * elems(w->od, DRT_J, o->tile_j[t]);
    q->n += area * -expm1(-v);
    q->m += -expm1(-area * v);
    q->logempty -= area * v;
}

static void query(walker *w, const uint64_t *llo, const uint64_t *lhi, uint64_t k, oq *q)
{
    const drt_otable *o = &w->od->out;
    memset(q, 0, sizeof(*q));
    /* to the output table's coordinates */
    uint64_t lo[2] = { llo[0] + w->off[DRT_I], llo[1] + w->off[DRT_J] };
    uint64_t hi[2] = { lhi[0] + w->off[DRT_I], lhi[1] + w->off[DRT_J] };
    k += w->off[DRT_K];
    if (hi[0] - lo[0] <= hi[1] - lo[1]) {
        uint64_t end = hi[0] < o->rows ? hi[0] : o->rows;
        for (uint64_t i = lo[0]; i < end; i++) {
            uint64_t b = o->row_ptr[i + 1];
            for (uint64_t p = drt_lower_bound(o->tile_j, o->row_ptr[i], b, lo[1]);
                 p < b && o->tile_j[p] < hi[1]; p++)
                tile_at(w, p, k, q);
        }
        return;
    }
    uint64_t end = hi[1] < o->cols ? hi[1] : o->cols;
    for (uint64_t j = lo[1]; j < end; j++) {
        uint64_t a = o->col_ptr[j], b = o->col_ptr[j + 1];
        while (a < b) { /* first tile of column j with I >= lo[0] */
            uint64_t mid = a + (b - a) / 2;
            if (o->tile_i[o->col_tile[mid]] < lo[0])
                a = mid + 1;
            else
                b = mid;
        }
        for (uint64_t p = a; p < o->col_ptr[j + 1] && o->tile_i[o->col_tile[p]] < hi[0]; p++)
            tile_at(w, o->col_tile[p], k, q);
    }
}

void drt_w_out_bytes(const walker *w, const oq *q, double *data, double *meta)
{
    const cost *c = &w->c[DRT_Z];
    if (!w->od->out.stat) {
        uint64_t d, m;
        drt_w_bytes_of(c, (uint64_t)q->m, (uint64_t)q->n, &d, &m);
        *data = (double)d;
        *meta = (double)m;
        return;
    }
    double total = (q->m * (double)c->fixed_bits + q->n * (double)c->per_bits) / 8;
    if (c->seg_num) /* tiled-csf: the row segments at their mean (drt_w_bits) */
        total += q->m * (double)c->seg_num / ((double)c->seg_den * 8);
    double d = q->n * (double)c->value_bits / 8;
    *data = d < total ? d : total;
    *meta = total - *data;
}

/* Rule 2: the resident output tile goes back with its partial count. */
void drt_w_write_back(walker *w)
{
    oq q;
    double d, m;
    query(w, w->zlo, w->zhi, w->zk, &q);
    drt_w_out_bytes(w, &q, &d, &m);
    w->r->traffic[1][w->d->roles.tensor[DRT_Z]].writebacks++;
    w->out_data += d;
    w->out_meta += m;
    if (d + m > w->z_worst)
        w->z_worst = d + m;
    if (w->c[DRT_Z].part && d + m > (double)w->c[DRT_Z].part)
        w->overflow_wb += 1;
}

/* Whether the resident output tile could outgrow Z's partition at all:
 * its bytes when every element of the rectangle is a nonzero. */
static int output_may_spill(const walker *w)
{
    const cost *c = &w->c[DRT_Z];
    if (!c->part)
        return 0;
    double cells = 1, micro = 1;
    for (unsigned x = 0; x < 2; x++) {
        unsigned ix = x ? DRT_J : DRT_I;
        micro *= (double)(w->zhi[x] - w->zlo[x]);
        cells *= drt_w_span(w->d, ix, w->zlo[x], w->zhi[x]);
    }
    double bytes = (micro * (double)c->fixed_bits + cells * (double)c->per_bits) / 8;
    bytes += cells * (double)c->seg_bits / 8; /* tiled-csf: a segment per element at most */
    return bytes > (double)c->part;
}

/* Rule 4 for the output (docs/semantics.md rule 4; Tailors §3.3, §6.2), as the exact
 * walk prices it: the resident tile is used again by the next task, so
 * the part of its partial results beyond Z's partition was spilled to
 * the parent after this task and is read back by the next one. */
void drt_w_spill(walker *w)
{
    if (!output_may_spill(w))
        return;
    oq q;
    double d, m;
    query(w, w->zlo, w->zhi, w->zk, &q);
    drt_w_out_bytes(w, &q, &d, &m);
    double total = d + m, part = (double)w->c[DRT_Z].part;
    if (total <= part)
        return;
    double extra = total - part, em = floor(extra * m / total);
    w->out_data += extra - em;
    w->out_meta += em;
    w->in_data += extra - em;
    w->in_meta += em;
    w->spill += extra;
}

/* dataflow: outer-product (OuterSPACE's multiply and merge phases inside
 * each task: drt §6.2, Fig. 10 top; gamma §2.2-2.3). The task's multiply
 * phase writes one partial product per multiply, unmerged, beside the
 * resident output tile (its partial sums at k0); the merge phase then
 * reduces them into it. Both share Z's partition: the products that do
 * not fit go to the parent in the multiply phase and come back for the
 * merge (rule 4 for the output), at Z's bits per nonzero. The resident
 * tile's own overflow is drt_w_spill's, so at most the products spill
 * here. The merged dataflow (inner product, Gustavson's row merge) reduces
 * each product as it is made and pays nothing here. */
void drt_w_partials(walker *w, uint64_t k0, uint64_t k1)
{
    const cost *c = &w->c[DRT_Z];
    if (!w->od->out.mul || !c->part || !c->per_bits)
        return;
    oq a, b;
    query(w, w->zlo, w->zhi, k0, &a);
    query(w, w->zlo, w->zhi, k1, &b);
    double products = b.mul - a.mul;
    if (!(products > 0))
        return;
    double d, m;
    drt_w_out_bytes(w, &a, &d, &m);
    double pbytes = products * (double)c->per_bits / 8, part = (double)c->part;
    double extra = d + m + pbytes - part;
    if (!(extra > 0))
        return;
    if (extra > pbytes)
        extra = pbytes;
    if (!w->od->out.stat)
        extra = ceil(extra);
    /* a product's metadata share: its bits beyond the value */
    double vb = (double)(c->value_bits < c->per_bits ? c->value_bits : c->per_bits);
    double em = floor(extra * ((double)c->per_bits - vb) / (double)c->per_bits);
    w->out_data += extra - em;
    w->out_meta += em;
    w->in_data += extra - em;
    w->in_meta += em;
    w->spill += extra;
}

/* Rule 2: a tile that holds partial results written back before is read
 * back (stat: with the probability that it holds any). */
void drt_w_read_back(walker *w, uint64_t k0)
{
    oq q;
    double d, m;
    query(w, w->zlo, w->zhi, k0, &q);
    if (!(q.n > 0))
        return;
    drt_w_out_bytes(w, &q, &d, &m);
    w->updates += w->od->out.stat ? -expm1(q.logempty) : 1.0;
    w->in_data += d;
    w->in_meta += m;
}

/* ------------------------------------------------------------------ */
/* The output tile's growth bound (rule 4 for the output, issue 20): an
 * input index that spans the output (i of A, j of B) grows only while the
 * output tile it widens still fits Z's partition, counted with the
 * output table at the reduction prefix the tile holds when it is written
 * back (drt §3.1: growing an uncontracted dimension grows the tiles of
 * every tensor indexed by it, "including the output"). The paper's
 * hardware cannot see the output before the intersections (§3.1), so it
 * spills; tessel's DRT reads the output table instead, so that its tiles
 * keep the promise every non-overbooking strategy makes (docs/semantics.md
 * rule 4). A line that must be taken (a tile's first) may still overflow:
 * that overflow is priced as before (spills, write-backs). */

static int z_fits(const walker *w, double m, double n)
{
    const cost *c = &w->c[DRT_Z];
    double bits = m * (double)c->fixed_bits + n * (double)c->per_bits;
    if (c->seg_num) /* tiled-csf: the row segments at their mean (drt_w_bits) */
        bits += ceil(m * (double)c->seg_num / (double)c->seg_den);
    double bytes = w->od->out.stat ? bits / 8 : ceil(bits / 8);
    return bytes <= (double)c->part;
}

static void zg_begin(walker *w, int lines, unsigned x, uint64_t lo, uint64_t hi, uint64_t k)
{
    zgrow *z = &w->zg;
    drt_w_zg_end(w);
    z->active = w->c[DRT_Z].part != 0;
    z->lines = lines;
    z->x = x;
    z->lo = lo;
    z->hi = hi;
    z->k = k;
    z->m = z->n = 0;
}

/* Lines mode: every micro line of the other output index must fit alone. */
void drt_w_zg_lines(walker *w, unsigned x, uint64_t k)
{
    unsigned y = x == DRT_I ? DRT_J : DRT_I;
    zg_begin(w, 1, x, 0, w->d->mext[y], k);
}

/* Rect mode: the other output index spans [lo, hi) (local micro lines). */
void drt_w_zg_rect(walker *w, unsigned x, uint64_t lo, uint64_t hi, uint64_t k)
{
    zg_begin(w, 0, x, lo, hi, k);
}

void drt_w_zg_end(walker *w)
{
    zgrow *z = &w->zg;
    for (uint64_t t = 0; t < z->ntouched; t++)
        z->lm[z->touched[t]] = z->ln[z->touched[t]] = 0;
    z->ntouched = 0;
    z->active = 0;
}

/* Output micro line c (local, along zg.x) within the other index's range:
 * adds each tile's partial counts at zg.k to the sums when `add`, else
 * checks that they fit. Returns whether the line fits. */
static int zg_line(walker *w, uint64_t c, int add)
{
    zgrow *z = &w->zg;
    const drt_otable *o = &w->od->out;
    unsigned x = z->x, y = x == DRT_I ? DRT_J : DRT_I;
    uint64_t gc = c + w->off[x], glo = z->lo + w->off[y], ghi = z->hi + w->off[y];
    uint64_t k = z->k + w->off[DRT_K];
    double m = z->m, n = z->n;
    int ok = 1;
    uint64_t p, e;
    if (x == DRT_I) {
        if (gc >= o->rows)
            return 1;
        e = o->row_ptr[gc + 1];
        p = drt_lower_bound(o->tile_j, o->row_ptr[gc], e, glo);
    } else {
        if (gc >= o->cols)
            return 1;
        uint64_t a = o->col_ptr[gc], b = o->col_ptr[gc + 1];
        e = b;
        while (a < b) { /* first tile of column gc with I >= glo */
            uint64_t mid = a + (b - a) / 2;
            if (o->tile_i[o->col_tile[mid]] < glo)
                a = mid + 1;
            else
                b = mid;
        }
        p = a;
    }
    for (; p < e; p++) {
        uint64_t t = x == DRT_I ? p : o->col_tile[p];
        uint64_t other = x == DRT_I ? o->tile_j[t] : o->tile_i[t];
        if (other >= ghi)
            break;
        oq q;
        memset(&q, 0, sizeof(q));
        tile_at(w, t, k, &q);
        if (!z->lines) {
            m += q.m, n += q.n;
            continue;
        }
        uint64_t l = other - w->off[y];
        if (add) {
            if (!(q.m > 0 || q.n > 0))
                continue; /* nothing yet at this prefix: l stays untouched */
            if (!z->lm[l] && !z->ln[l])
                z->touched[z->ntouched++] = l;
            z->lm[l] += q.m, z->ln[l] += q.n;
        } else if (!z_fits(w, z->lm[l] + q.m, z->ln[l] + q.n)) {
            ok = 0;
            break;
        }
    }
    if (!z->lines) {
        if (!add)
            return z_fits(w, m, n);
        z->m = m, z->n = n;
    }
    return ok;
}

/* Adds output lines [from, to) along zg.x while they fit (all of them
 * with `force`); returns how many were added. */
uint64_t drt_w_zg_add(walker *w, uint64_t from, uint64_t to, int force)
{
    if (!w->zg.active)
        return to - from;
    for (uint64_t c = from; c < to; c++) {
        if (!force && !zg_line(w, c, 0))
            return c - from;
        zg_line(w, c, 1);
    }
    return to - from;
}

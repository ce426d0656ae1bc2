/* DRT output tables: per output micro tile, how many of its nonzeros exist
 * after each prefix of the reduction (micro k index). DRT tasks cut k only
 * at micro-tile boundaries (drt §3.2.1), so this is all the walker needs
 * to price a partial output tile (docs/semantics.md rule 2).
 *
 * Exact: row-wise symbolic multiplication (Gustavson); k ascends along a
 * row of A, so the first product reaching Z[i,j] has the smallest k.
 *
 * Stat: no multiplication. For output micro tile (I,J) and reduction
 * micro block Kb with micro-tile counts nA = |A(I,Kb)|, nB = |B(Kb,J)| and
 * the nonzeros uniform inside their micro tiles (d2t2 §5, eqs. 19-20 with
 * densities pA = nA / (h_I w_Kb), pB = nB / (w_Kb w_J)), an element of the
 * tile receives no product from Kb with probability (1 - pA pB)^w_Kb. With
 * the hazard lambda(Kb) = -w_Kb log(1 - pA pB), an element is non-zero
 * after the reduction prefix K with probability 1 - exp(-sum_{Kb<K}
 * lambda): the table stores the running hazard. This is a join of the two
 * micro grids, done once when the statistics are collected.
 *
 * Multiplies (the `mul` column, for dataflow: outer-product, whose tasks
 * hold their products unmerged: drt_walk.c): exact, every product counted
 * at its micro k line; stat, nA nB / w_Kb per pair of micro tiles (the
 * nonzeros uniform inside them, as above). */
#include <math.h>
#include <string.h>

#include "drt_internal.h"

typedef struct vec64 {
    uint64_t *v;
    uint64_t n, cap;
} vec64;

static int grow_array(const tessel_allocator *a, void **p, uint64_t *cap, uint64_t need,
                      size_t size)
{
    if (need <= *cap)
        return TESSEL_OK;
    uint64_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *q = tessel_realloc_array(a, *p, c, size);
    if (!q)
        return TESSEL_ENOMEM;
    *p = q;
    *cap = c;
    return TESSEL_OK;
}

static int vec_push(const tessel_allocator *a, vec64 *v, uint64_t x)
{
    if (v->n == v->cap && grow_array(a, (void **)&v->v, &v->cap, v->n + 1, sizeof(uint64_t)))
        return TESSEL_ENOMEM;
    v->v[v->n++] = x;
    return TESSEL_OK;
}

/* The table being appended to, tile by tile in (I, J) order. */
typedef struct builder {
    const tessel_allocator *a;
    drt_otable *o;
    uint64_t cap_tiles, cap_ent;
    int with_mul; /* fill o->mul beside o->cum */
} builder;

static int add_tile(builder *b, uint64_t i, uint64_t j)
{
    drt_otable *o = b->o;
    /* the three arrays grow in step: the same need from the same capacity */
    uint64_t cap = b->cap_tiles;
    if (grow_array(b->a, (void **)&o->tile_i, &cap, o->ntiles + 2, sizeof(uint32_t)))
        return TESSEL_ENOMEM;
    cap = b->cap_tiles;
    if (grow_array(b->a, (void **)&o->tile_j, &cap, o->ntiles + 2, sizeof(uint32_t)))
        return TESSEL_ENOMEM;
    cap = b->cap_tiles;
    if (grow_array(b->a, (void **)&o->start, &cap, o->ntiles + 2, sizeof(uint64_t)))
        return TESSEL_ENOMEM;
    b->cap_tiles = cap;
    o->tile_i[o->ntiles] = (uint32_t)i;
    o->tile_j[o->ntiles] = (uint32_t)j;
    o->start[o->ntiles] = o->nent;
    o->ntiles++;
    o->start[o->ntiles] = o->nent;
    return TESSEL_OK;
}

static int add_entry(builder *b, uint64_t kq, double cum, double mul)
{
    drt_otable *o = b->o;
    uint64_t cap = b->cap_ent;
    if (grow_array(b->a, (void **)&o->kq, &cap, o->nent + 1, sizeof(uint32_t)))
        return TESSEL_ENOMEM;
    cap = b->cap_ent;
    if (grow_array(b->a, (void **)&o->cum, &cap, o->nent + 1, sizeof(double)))
        return TESSEL_ENOMEM;
    if (b->with_mul) {
        cap = b->cap_ent;
        if (grow_array(b->a, (void **)&o->mul, &cap, o->nent + 1, sizeof(double)))
            return TESSEL_ENOMEM;
        o->mul[o->nent] = mul;
    }
    b->cap_ent = cap;
    o->kq[o->nent] = (uint32_t)kq;
    o->cum[o->nent] = cum;
    o->nent++;
    o->start[o->ntiles] = o->nent;
    return TESSEL_OK;
}

/* Row pointers over I and the column-major index over J. */
static int finish_table(const drt_data *d, drt_otable *o)
{
    const tessel_allocator *a = d->alloc;
    o->rows = d->mext[DRT_I];
    o->cols = d->mext[DRT_J];
    if (!o->start) {
        o->start = tessel_alloc(a, sizeof(uint64_t));
        if (!o->start)
            return TESSEL_ENOMEM;
        o->start[0] = 0;
    }
    o->row_ptr = tessel_alloc_array(a, o->rows + 1, sizeof(uint64_t));
    o->col_ptr = tessel_alloc_array(a, o->cols + 1, sizeof(uint64_t));
    o->col_tile = tessel_alloc_array(a, o->ntiles ? o->ntiles : 1, sizeof(uint64_t));
    if (!o->row_ptr || !o->col_ptr || !o->col_tile)
        return TESSEL_ENOMEM;
    memset(o->row_ptr, 0, (o->rows + 1) * sizeof(uint64_t));
    memset(o->col_ptr, 0, (o->cols + 1) * sizeof(uint64_t));
    for (uint64_t t = 0; t < o->ntiles; t++) {
        o->row_ptr[o->tile_i[t] + 1]++;
        o->col_ptr[o->tile_j[t] + 1]++;
    }
    for (uint64_t r = 0; r < o->rows; r++)
        o->row_ptr[r + 1] += o->row_ptr[r];
    for (uint64_t c = 0; c < o->cols; c++)
        o->col_ptr[c + 1] += o->col_ptr[c];
    for (uint64_t t = 0; t < o->ntiles; t++)
        o->col_tile[o->col_ptr[o->tile_j[t]]++] = t;
    for (uint64_t c = o->cols; c > 0; c--)
        o->col_ptr[c] = o->col_ptr[c - 1];
    o->col_ptr[0] = 0;
    return TESSEL_OK;
}

void drt_otable_free(const tessel_allocator *a, drt_otable *o)
{
    tessel_dealloc(a, o->row_ptr);
    tessel_dealloc(a, o->tile_i);
    tessel_dealloc(a, o->tile_j);
    tessel_dealloc(a, o->col_ptr);
    tessel_dealloc(a, o->col_tile);
    tessel_dealloc(a, o->start);
    tessel_dealloc(a, o->kq);
    tessel_dealloc(a, o->cum);
    tessel_dealloc(a, o->mul);
    memset(o, 0, sizeof(*o));
}

/* ------------------------------------------------------------------ */
/* Exact. */

/* Sorted keys J * mext_k + kq of one micro row of Z become its tiles.
 * With b->with_mul every product has a key, (J * mext_k + kq) * 2 + 1 for
 * the first product reaching its element of Z and * 2 for the others. */
static int flush_slab(builder *b, const drt_data *d, uint64_t slab, vec64 *keys)
{
    if (!keys->n)
        return TESSEL_OK;
    uint64_t mk = d->mext[DRT_K], sh = b->with_mul ? 1 : 0;
    uint64_t max = (d->mext[DRT_J] * mk) << sh;
    uint64_t *scratch = tessel_alloc_array(b->a, keys->n, sizeof(uint64_t));
    if (!scratch)
        return TESSEL_ENOMEM;
    tessel_sort_u64(keys->v, scratch, keys->n, max ? max - 1 : 0);
    tessel_dealloc(b->a, scratch);
    uint64_t cum = 0, mul = 0;
    for (uint64_t p = 0; p < keys->n;) {
        uint64_t key = keys->v[p] >> sh, q = p, first = 0;
        for (; q < keys->n && keys->v[q] >> sh == key; q++)
            first += sh ? keys->v[q] & 1 : 1;
        uint64_t j = key / mk, kq = key % mk;
        if (p == 0 || (keys->v[p - 1] >> sh) / mk != j) {
            if (add_tile(b, slab, j))
                return TESSEL_ENOMEM;
            cum = mul = 0;
        }
        cum += first;
        mul += q - p;
        if (add_entry(b, kq, (double)cum, (double)mul))
            return TESSEL_ENOMEM;
        p = q;
    }
    keys->n = 0;
    return TESSEL_OK;
}

/* The final output (after the whole reduction): nonzeros and non-empty
 * micro tiles, the same for every design point (stat: expected values
 * over the tiles' elements). */
static void totals(const drt_data *d, drt_otable *o)
{
    o->total_n = o->total_m = 0;
    if (o->stat)
        o->segs = 0;
    for (uint64_t t = 0; t < o->ntiles; t++) {
        double v = o->cum[o->start[t + 1] - 1];
        if (!o->stat) {
            o->total_n += v;
            o->total_m += 1;
            continue;
        }
        double area = 1, edge_of[2];
        const unsigned xs[2] = { DRT_I, DRT_J };
        const uint32_t c[2] = { o->tile_i[t], o->tile_j[t] };
        for (unsigned i = 0; i < 2; i++) {
            uint64_t lo = c[i] * d->mu[xs[i]], e = d->roles.extent[xs[i]];
            edge_of[i] = (double)(e - lo < d->mu[xs[i]] ? e - lo : d->mu[xs[i]]);
            area *= edge_of[i];
        }
        o->total_n += area * -expm1(-v);
        o->total_m += -expm1(-area * v);
        /* tiled-csf's row segments: a row of the tile is non-empty when one
         * of its elements is, each independently (the same hazard model) */
        o->segs += edge_of[0] * -expm1(-edge_of[1] * v);
    }
}

/* The exact output table: Z's micro tiles with their nonzeros per micro k prefix
 * (symbolic multiplication, row by row of A), and the final output's row segments. */
int drt_output_exact(drt_data *d, const tessel_workload_data *w, tessel_diag *diag)
{
    const tessel_allocator *a = d->alloc;
    drt_otable *o = &d->out;
    memset(o, 0, sizeof(*o));
    builder b = { .a = a, .o = o, .with_mul = d->partials };
    drt_csr va, vb;
    vec64 keys = { 0 };
    uint64_t ej = d->roles.extent[DRT_J];
    uint64_t *mark = NULL, *segmark = NULL;
    int rc = drt_csr_view(d, w, DRT_A, DRT_I, &va);
    if (rc)
        return drt_oom(diag);
    rc = drt_csr_view(d, w, DRT_B, DRT_K, &vb);
    if (rc) {
        drt_csr_free(a, &va);
        return drt_oom(diag);
    }
    uint64_t mj = d->mu[DRT_J], mjt = d->mext[DRT_J] ? d->mext[DRT_J] : 1;
    mark = tessel_alloc_array(a, ej ? ej : 1, sizeof(uint64_t));
    segmark = tessel_alloc_array(a, mjt, sizeof(uint64_t));
    if (!mark || !segmark) {
        rc = TESSEL_ENOMEM;
    } else {
        memset(mark, 0, (ej ? ej : 1) * sizeof(uint64_t));
        memset(segmark, 0, mjt * sizeof(uint64_t));
    }
    uint64_t mi = d->mu[DRT_I], mkk = d->mu[DRT_K], mk = d->mext[DRT_K], segs = 0;
    uint64_t slab = 0;
    for (uint64_t i = 0; !rc && i < va.rows; i++) {
        if (i / mi != slab) {
            rc = flush_slab(&b, d, slab, &keys);
            slab = i / mi;
        }
        uint64_t stamp = i + 1;
        for (uint64_t p = va.ptr[i]; !rc && p < va.ptr[i + 1]; p++) {
            uint64_t k = va.col[p], kq = k / mkk;
            for (uint64_t q = vb.ptr[k]; q < vb.ptr[k + 1]; q++) {
                uint64_t j = vb.col[q], key = j / mj * mk + kq, first = mark[j] != stamp;
                if (!first && !b.with_mul)
                    continue;
                mark[j] = stamp;
                /* a row segment: row i's first nonzero in micro column j / mj */
                if (first && segmark[j / mj] != stamp) {
                    segmark[j / mj] = stamp;
                    segs++;
                }
                if (vec_push(a, &keys, b.with_mul ? key * 2 + first : key)) {
                    rc = TESSEL_ENOMEM;
                    break;
                }
            }
        }
    }
    if (!rc)
        rc = flush_slab(&b, d, slab, &keys);
    if (!rc)
        rc = finish_table(d, o);
    if (!rc)
        totals(d, o);
    o->segs = (double)segs;
    tessel_dealloc(a, keys.v);
    tessel_dealloc(a, mark);
    tessel_dealloc(a, segmark);
    drt_csr_free(a, &va);
    drt_csr_free(a, &vb);
    return rc ? drt_oom(diag) : TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Stat. */

/* Extent of micro tile c along engine index x (edge tiles are cut). */
static double edge(const drt_data *d, unsigned x, uint64_t c)
{
    uint64_t lo = c * d->mu[x], e = d->roles.extent[x];
    return (double)(e - lo < d->mu[x] ? e - lo : d->mu[x]);
}

typedef struct triple {
    uint64_t j, kb;
    double lambda, mul;
} triple;

/* Calibration (the sampled output of d2t2 §5 / tessel_stat_options): the
 * independence model above overestimates collisions' absence where
 * nonzeros cluster inside micro tiles (banded, FEM blocks). A sample of
 * output micro rows, chosen by a stride so that it costs about
 * DRT_SAMPLE_FLOPS multiplies, is multiplied out once when the statistics
 * are collected; the hazards are then scaled by the c that makes the
 * model's final nonzeros of the sampled tiles equal their true count
 * (sum area (1 - exp(-c L)) is increasing in c: bisection). Evaluations
 * never multiply. */
#define DRT_SAMPLE_FLOPS (UINT64_C(1) << 20)

static double model_sum(const drt_data *d, const double *area, const double *lam, uint64_t n,
                        double c)
{
    (void)d;
    double s = 0;
    for (uint64_t t = 0; t < n; t++)
        s += area[t] * -expm1(-c * lam[t]);
    return s;
}

/* Scales the statistical output-tile table so that its multiply count matches the
 * exact count on a sample of output tiles. Z's nonzeros over every row, for
 * rule 3 (compulsory Z as the other estimators count it: docs/models/stat.md,
 * "The output count of rule 3"), are the workload data's one count. */
static int calibrate(drt_data *d, const tessel_spec *spec, const tessel_workload_data *w,
                     tessel_diag *diag)
{
    const tessel_allocator *a = d->alloc;
    drt_otable *o = &d->out;
    d->scale = 1;
    d->out_count = -1;
    if (!o->ntiles || !d->macs)
        return TESSEL_OK;
    uint64_t stride = d->macs <= DRT_SAMPLE_FLOPS ? 1 : (d->macs + DRT_SAMPLE_FLOPS - 1) / DRT_SAMPLE_FLOPS;
    uint64_t ns = 0;
    for (uint64_t t = 0; t < o->ntiles; t++)
        ns += o->tile_i[t] % stride == 0;
    if (!ns)
        return TESSEL_OK;
    drt_csr va, vb;
    if (drt_csr_view(d, w, DRT_A, DRT_I, &va))
        return TESSEL_ENOMEM;
    if (drt_csr_view(d, w, DRT_B, DRT_K, &vb)) {
        drt_csr_free(a, &va);
        return TESSEL_ENOMEM;
    }
    uint64_t ej = d->roles.extent[DRT_J], mj = d->mext[DRT_J];
    uint64_t *mark = tessel_alloc_array(a, ej ? ej : 1, sizeof(uint64_t));
    uint64_t *truth = tessel_alloc_array(a, mj ? mj : 1, sizeof(uint64_t));
    double *area = tessel_alloc_array(a, ns, sizeof(double));
    double *lam = tessel_alloc_array(a, ns, sizeof(double));
    int rc = TESSEL_OK;
    if (!mark || !truth || !area || !lam) {
        rc = TESSEL_ENOMEM;
        goto done;
    }
    memset(mark, 0, (ej ? ej : 1) * sizeof(uint64_t));
    memset(truth, 0, (mj ? mj : 1) * sizeof(uint64_t));
    double want = 0;
    uint64_t k = 0;
    for (uint64_t I = 0; I < o->rows; I += stride) {
        uint64_t i0 = I * d->mu[DRT_I], i1 = i0 + d->mu[DRT_I];
        if (i1 > va.rows)
            i1 = va.rows;
        for (uint64_t i = i0; i < i1; i++)
            for (uint64_t p = va.ptr[i]; p < va.ptr[i + 1]; p++)
                for (uint64_t q = vb.ptr[va.col[p]]; q < vb.ptr[va.col[p] + 1]; q++) {
                    uint64_t j = vb.col[q];
                    if (mark[j] != i + 1) {
                        mark[j] = i + 1;
                        truth[j / d->mu[DRT_J]]++;
                    }
                }
        for (uint64_t t = o->row_ptr[I]; t < o->row_ptr[I + 1]; t++) {
            area[k] = edge(d, DRT_I, I) * edge(d, DRT_J, o->tile_j[t]);
            lam[k] = o->cum[o->start[t + 1] - 1];
            want += (double)truth[o->tile_j[t]];
            truth[o->tile_j[t]] = 0;
            k++;
        }
    }
    if (stride == 1)
        d->out_count = want;
    else if ((double)d->macs <= TESSEL_STAT_OUTPUT_COUNT_BUDGET) {
        tessel_output_count n;
        int counted = 0;
        rc = tessel_workload_output_count(spec, w, TESSEL_STAT_OUTPUT_COUNT_BUDGET, &n, &counted,
                                          diag);
        if (!rc && counted)
            d->out_count = (double)n.nnz;
    }
    if (want > 0) {
        double lo = 1e-6, hi = 1e3;
        if (model_sum(d, area, lam, k, hi) <= want) {
            d->scale = hi;
        } else {
            for (int it = 0; it < 100; it++) {
                double mid = sqrt(lo * hi);
                if (model_sum(d, area, lam, k, mid) < want)
                    lo = mid;
                else
                    hi = mid;
            }
            d->scale = sqrt(lo * hi);
        }
        for (uint64_t e = 0; e < o->nent; e++)
            o->cum[e] *= d->scale;
    }
done:
    tessel_dealloc(a, mark);
    tessel_dealloc(a, truth);
    tessel_dealloc(a, area);
    tessel_dealloc(a, lam);
    drt_csr_free(a, &va);
    drt_csr_free(a, &vb);
    return rc;
}

/* The multiplies' total is known exactly (d->macs, from the micro grids'
 * lines): the estimates nA nB / w_Kb are scaled to it, so that only their
 * spread over the tiles is modelled (clustered matrices, where the
 * independence inside a micro tile undercounts, keep their true total). */
static void scale_mul(const drt_data *d, drt_otable *o)
{
    double sum = 0;
    for (uint64_t t = 0; t < o->ntiles; t++)
        if (o->start[t + 1] > o->start[t])
            sum += o->mul[o->start[t + 1] - 1];
    if (!(sum > 0) || !d->macs)
        return;
    double s = (double)d->macs / sum;
    for (uint64_t e = 0; e < o->nent; e++)
        o->mul[e] *= s;
}

/* The DRT output-tile table from line statistics: for each pair of A and B micro-tile
 * lines, the output micro tiles touched and their estimated nonzeros. */
int drt_output_stat(drt_data *d, const tessel_spec *spec, const tessel_workload_data *w,
                    tessel_diag *diag)
{
    const tessel_allocator *a = d->alloc;
    drt_otable *o = &d->out;
    memset(o, 0, sizeof(*o));
    o->stat = 1;
    builder b = { .a = a, .o = o, .with_mul = 1 };
    const drt_grid *ga = &d->grid[DRT_A], *gb = &d->grid[DRT_B];
    const drt_lines *la = &ga->by[ga->x[0] == DRT_I ? 0 : 1]; /* lines along i, entries over k */
    const drt_lines *lb = &gb->by[gb->x[0] == DRT_K ? 0 : 1]; /* lines along k, entries over j */
    uint64_t mj = d->mext[DRT_J];
    triple *tr = NULL, *sorted = NULL;
    uint64_t ntr = 0, cap = 0, cap2 = 0;
    uint64_t *cnt = tessel_alloc_array(a, mj ? mj : 1, sizeof(uint64_t));
    vec64 touched = { 0 };
    int rc = cnt ? TESSEL_OK : TESSEL_ENOMEM;
    if (cnt)
        memset(cnt, 0, (mj ? mj : 1) * sizeof(uint64_t));
    for (uint64_t I = 0; !rc && I < la->nlines; I++) {
        double hi = edge(d, DRT_I, I);
        ntr = 0;
        for (uint64_t p = la->ptr[I]; !rc && p < la->ptr[I + 1]; p++) {
            uint64_t kb = la->other[p];
            double wk = edge(d, DRT_K, kb);
            double pa = (double)(la->cnz[p + 1] - la->cnz[p]) / (hi * wk);
            if (kb >= lb->nlines)
                continue;
            for (uint64_t q = lb->ptr[kb]; q < lb->ptr[kb + 1]; q++) {
                uint64_t j = lb->other[q];
                double pb = (double)(lb->cnz[q + 1] - lb->cnz[q]) / (wk * edge(d, DRT_J, j));
                double pp = pa * pb;
                double lambda = pp >= 1 ? 64.0 : -wk * log1p(-pp);
                if (grow_array(a, (void **)&tr, &cap, ntr + 1, sizeof(triple))) {
                    rc = TESSEL_ENOMEM;
                    break;
                }
                tr[ntr].j = j;
                tr[ntr].kb = kb;
                tr[ntr].lambda = lambda;
                /* expected products: nA nB / w_Kb (uniform k in the micro tiles) */
                tr[ntr].mul = (double)(la->cnz[p + 1] - la->cnz[p]) *
                              (double)(lb->cnz[q + 1] - lb->cnz[q]) / wk;
                ntr++;
                if (!cnt[j]++ && vec_push(a, &touched, j)) {
                    rc = TESSEL_ENOMEM;
                    break;
                }
            }
        }
        if (rc || !ntr)
            continue;
        /* group by J (a counting sort: Kb stays ascending in each group) */
        if (touched.n > 1) {
            uint64_t *scratch = tessel_alloc_array(a, touched.n, sizeof(uint64_t));
            if (!scratch) {
                rc = TESSEL_ENOMEM;
                break;
            }
            tessel_sort_u64(touched.v, scratch, touched.n, mj - 1);
            tessel_dealloc(a, scratch);
        }
        if (grow_array(a, (void **)&sorted, &cap2, ntr, sizeof(triple))) {
            rc = TESSEL_ENOMEM;
            break;
        }
        uint64_t pos = 0;
        for (uint64_t t = 0; t < touched.n; t++) {
            uint64_t j = touched.v[t], c = cnt[j];
            cnt[j] = pos; /* now the next free slot of group j */
            pos += c;
        }
        for (uint64_t t = 0; t < ntr; t++)
            sorted[cnt[tr[t].j]++] = tr[t];
        for (uint64_t t = 0; t < ntr && !rc; t++) {
            if (t == 0 || sorted[t].j != sorted[t - 1].j) {
                if (add_tile(&b, I, sorted[t].j)) {
                    rc = TESSEL_ENOMEM;
                    break;
                }
            }
            int fresh = t == 0 || sorted[t].j != sorted[t - 1].j;
            double cum = (fresh ? 0 : o->cum[o->nent - 1]) + sorted[t].lambda;
            double mul = (fresh ? 0 : o->mul[o->nent - 1]) + sorted[t].mul;
            if (add_entry(&b, sorted[t].kb, cum, mul))
                rc = TESSEL_ENOMEM;
        }
        for (uint64_t t = 0; t < touched.n; t++)
            cnt[touched.v[t]] = 0;
        touched.n = 0;
    }
    if (!rc)
        rc = finish_table(d, o);
    if (!rc)
        scale_mul(d, o);
    if (!rc)
        rc = calibrate(d, spec, w, diag);
    if (!rc)
        totals(d, o);
    tessel_dealloc(a, tr);
    tessel_dealloc(a, sorted);
    tessel_dealloc(a, cnt);
    tessel_dealloc(a, touched.v);
    return rc ? drt_oom(diag) : TESSEL_OK;
}

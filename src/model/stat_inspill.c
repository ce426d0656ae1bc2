/* Rule 4 for inputs per read of the compute, in the stat estimator
 * (docs/semantics.md rule 4, "The compute's reads"; Tailors §4, §6.2):
 * at the innermost level the compute reads an overbooked tile T again
 * inside a use where the level's order puts an index T does not carry
 * outside T's innermost own index (exact_inspill.c has the cases and the
 * scan convention). The closed sums charge S - P per use after a fill;
 * stat_bumped.c records every overbooked tile of the innermost level with
 * its fills and uses, as at inner levels, and here its R, the compute's
 * whole reads of T over the run, is estimated per line (row or column)
 * from the statistics every stat input keeps: the base grid (nonzeros per
 * base cell) and the nonzeros of each row and column.
 *   - fibres (A under IJK/JIK: each row of T scanned per non-empty column
 *     of B in T's k band): R = the band's expected non-empty columns of B.
 *     A column f of B with L_f nonzeros, in a base strip whose nonzeros
 *     fall a share q into the band, is non-empty there with probability
 *     1 - (1 - q)^L_f (its nonzeros placed over the strip's k like the
 *     strip's). Summed per column, a clustered graph's few long columns
 *     count once each, where spreading a tile's nonzeros uniformly over
 *     its columns counted most columns of the tile (+23 to +28 % on
 *     ca-GrQc before this estimate, docs/models/stat.md).
 *   - elements (A under JKI/KJI: each A(i, k) read once per nonzero of B's
 *     row k): the nonzeros of a base cell of T fall on its k lines like
 *     the strip's line counts, so the cell's reads are n x sum_k a_k b_k /
 *     sum_k a_k over the cell's k (a_k T's own line counts, b_k the other
 *     operand's). Summed over every cell this is the exact flops.
 * B mirrored. exact_ob_settle then replaces (U - F)(S - P) with
 * max(0, R - F)(S - P), as for the child level's reads. */
#include <math.h>
#include <string.h>

#include "stat_bumped.h"
#include "stat_inspill.h"
#include "stat_tiledfmt.h"

int stat_inspill_on(const engine *e, unsigned b)
{
    if (!e->inspill || b + 1 != e->nlev ||
        (e->kind != TESSEL_WORKLOAD_SPMSPM && e->kind != TESSEL_WORKLOAD_SPMV))
        return 0;
    if (b >= 2)
        return 1; /* the reads beyond the fills cascade to the parent tile */
    for (unsigned i = 0; i < e->nin && i < 2; i++)
        if (exact_inspill_reads(e, b, i) != EXACT_READS_ONCE)
            return 1;
    return 0;
}

/* Which of operand i's two modes is k (0 or 1). */
static unsigned k_mode(const engine *e, unsigned i)
{
    return e->in[i].x[0] == 2 ? 0 : 1;
}

/* Adds to *c the expected non-empty fibres of strip sidx (base width bf)
 * whose strip holds `part` of its `all` nonzeros in the band. */
static void strip_fibres(const stat_input *in, unsigned mf, uint64_t sidx, uint64_t bf,
                         double part, double all, double *c)
{
    double lq = part < all ? log1p(-part / all) : -INFINITY;
    uint64_t f0 = sidx * bf, f1 = f0 + bf < in->dims[mf] ? f0 + bf : in->dims[mf];
    for (uint64_t f = f0; f < f1; f++)
        if (in->line_nnz[mf][f])
            *c += isinf(lq) ? 1 : -expm1((double)in->line_nnz[mf][f] * lq);
}

/* Per k band of level b (nb bands) that holds a recorded tile (need[K]),
 * the expected non-empty fibres of operand o (its lines along its output
 * index) with a nonzero in the band, from o's base grid; the other bands'
 * counts are never read, so their exponentials are skipped. `scratch`
 * holds 2 x the fibre strips. */
static void band_fibres(const engine *e, unsigned b, unsigned o, const stat_input *in,
                        double *cnt, uint64_t nb, const unsigned char *need, double *scratch)
{
    unsigned mk = k_mode(e, o), mf = 1 - mk;
    const stat_grid *g = in->base;
    uint64_t bf = in->grid->tile[mf], bk = in->grid->tile[mk], ek = exact_level_edge(e, b, 2);
    if (mk) { /* fibres along the rows: a row's cells in band order */
        for (uint64_t r = 0; r < g->rows; r++) {
            double all = 0;
            for (uint64_t n = g->ptr[r]; n < g->ptr[r + 1]; n++)
                all += (double)g->nnz[n];
            for (uint64_t n = g->ptr[r]; n < g->ptr[r + 1];) {
                uint64_t K = g->col[n] * bk / ek;
                double part = 0;
                for (; n < g->ptr[r + 1] && g->col[n] * bk / ek == K; n++)
                    part += (double)g->nnz[n];
                if (K < nb && need[K])
                    strip_fibres(in, mf, r, bf, part, all, &cnt[K]);
            }
        }
        return;
    }
    /* k along the rows: the rows of one band are consecutive */
    uint64_t ns = g->cols;
    double *all = scratch, *part = scratch + ns;
    memset(scratch, 0, 2 * ns * sizeof(double));
    for (uint64_t n = 0; n < g->ptr[g->rows]; n++)
        all[g->col[n]] += (double)g->nnz[n];
    for (uint64_t r = 0; r < g->rows;) {
        uint64_t K = r * bk / ek;
        for (; r < g->rows && r * bk / ek == K; r++)
            for (uint64_t n = g->ptr[r]; n < g->ptr[r + 1]; n++)
                part[g->col[n]] += (double)g->nnz[n];
        for (uint64_t c = 0; c < ns; c++) {
            if (part[c] > 0 && K < nb && need[K])
                strip_fibres(in, mf, c, bf, part[c], all[c], &cnt[K]);
            part[c] = 0;
        }
    }
}

/* band_fibres from the lines statistic where `in` keeps it along o's
 * fibres (src/stats/tilerows.c: per base tile its non-empty lines, per
 * aligned block of 2^l tiles of a strip their union): A's rows per k band
 * of a strip of rows, B's columns per k band of a strip of columns, exact
 * when a band is 2^l whole base tiles (stat_tiledfmt_lines reads the
 * block's union). Other bands are left to band_fibres: the union of
 * several blocks, drawn independently from the strip's lines, counted a
 * clustered graph's columns too high (clustered-4k, PEB bands of 1000 =
 * 125 base tiles: +31.7 %, against -0.3 % from band_fibres).
 * The per-column estimate above spreads a column's nonzeros over k like
 * its strip's: a banded matrix's columns each hold a different stretch of
 * k, so it counts a band's columns too high (bcsstk11, REG bands of 16:
 * +30 %, docs/models/stat.md "Accuracy at 1, 2 and 3 buffer levels").
 * The per-band sums are a function of the input, k's mode and the band
 * (f base tiles) alone: with a cache they are kept in its pool
 * (stat_ks_vec), so the sweep's threads transpose and coarsen the base
 * grid once per (input, band), not per point (docs/models/stat.md,
 * "band_lines once per band").
 * 0 done, 1 the statistic is not kept or the band is not 2^l base tiles,
 * TESSEL_ENOMEM, TESSEL_ERANGE (band_sums). */
typedef struct band_key {
    const stat_input *in;
    unsigned mk;
    uint64_t f, n; /* base tiles a band, bands */
} band_key;

/* The lines of k's bands of f base tiles, summed over the strips in the
 * coarsened grid's order into sum[0 .. n) (zeroed here); 0,
 * TESSEL_ENOMEM, or TESSEL_ERANGE when A's base grid has 2^32 tiles or
 * more (its transposed index, stat_grid_transpose_index). */
static int band_sums(const void *arg, const tessel_allocator *a, double *sum)
{
    const band_key *k = arg;
    const stat_input *in = k->in;
    unsigned mk = k->mk;
    const tessel_tile_rows *st = mk ? in->rows : in->cols;
    /* A's columns statistic is indexed by its own base tiles: walked in
     * the transposed order through bt's index (bt.nnz holds it), the
     * bands merged from the transposed counts (tc) */
    stat_grid bt, tc, c;
    memset(&bt, 0, sizeof(bt));
    memset(&tc, 0, sizeof(tc));
    memset(&c, 0, sizeof(c));
    memset(sum, 0, (k->n ? k->n : 1) * sizeof(double));
    int rc = mk ? TESSEL_OK : stat_grid_transpose_index(in->base, a, &bt);
    if (!rc && !mk)
        rc = stat_grid_transpose(in->base, a, &tc);
    const stat_grid *g = mk ? in->base : &bt;
    if (!rc)
        rc = stat_grid_coarsen(mk ? in->base : &tc, 1, k->f, a, &c);
    if (c.borrowed) /* one band a base tile: c is the grid itself, whose occ is not c's */
        c.occ = NULL;
    double *lines = rc ? NULL : tessel_alloc_array(a, c.n ? c.n : 1, sizeof(double));
    if (!rc)
        rc = lines ? stat_tiledfmt_lines(g, st, mk ? NULL : bt.nnz, 1, k->f, &c, a, lines)
                   : TESSEL_ENOMEM;
    for (uint64_t t = 0; !rc && t < c.n; t++)
        if (c.col[t] < k->n)
            sum[c.col[t]] += lines[t];
    tessel_dealloc(a, lines);
    stat_grid_free(a, &c);
    stat_grid_free(a, &tc);
    stat_grid_free(a, &bt);
    return rc;
}

static int band_lines(const engine *e, unsigned b, unsigned o, const stat_input *in,
                      double *cnt, uint64_t nb, stat_ks_cache *kc)
{
    unsigned mk = k_mode(e, o);
    const tessel_tile_rows *st = mk ? in->rows : in->cols;
    uint64_t bk = in->grid->tile[mk], ek = exact_level_edge(e, b, 2);
    uint64_t f = bk ? ek / bk : 0;
    if (!st || !in->base || !f || ek % bk || (f & (f - 1)))
        return 1;
    /* the bands: the coarsened grid's columns (k on A's columns, on the
     * transposed grid's for B) */
    uint64_t kcells = mk ? in->base->cols : in->base->rows;
    band_key key = { in, mk, f, (kcells + f - 1) / f };
    void *hold;
    stat_ks_vec_key vk = { { in, st }, { mk, f }, key.n };
    const double *sum = stat_ks_vec(kc, &vk, band_sums, &key, &hold);
    double *own = NULL;
    int rc = TESSEL_OK;
    if (!sum) { /* not kept: this point's own */
        own = tessel_alloc_array(e->alloc, key.n ? key.n : 1, sizeof(double));
        rc = own ? band_sums(&key, e->alloc, own) : TESSEL_ENOMEM;
        sum = own;
    }
    for (uint64_t K = 0; !rc && K < key.n && K < nb; K++)
        cnt[K] += sum[K];
    stat_ks_vec_release(kc, hold);
    tessel_dealloc(e->alloc, own);
    return rc;
}

/* Reads of input i's recorded tiles under the fibres case: nnz(T) times
 * the other operand's non-empty fibres in T's band. */
static int fibre_reads(engine *e, unsigned b, unsigned i, const stat_input *other,
                       stat_ks_cache *kc)
{
    ob_table *t = &e->ob[b % 2][i];
    uint64_t ek = exact_level_edge(e, b, 2), nb = (e->extent[2] + ek - 1) / ek;
    const stat_grid *g = other->base;
    uint64_t ns = k_mode(e, 1 - i) ? 0 : g->cols;
    double *cnt = tessel_alloc_array(e->alloc, (nb ? nb : 1) + 2 * ns, sizeof(double));
    unsigned char *need = tessel_alloc_array(e->alloc, nb ? nb : 1, 1);
    if (!cnt || !need) {
        tessel_dealloc(e->alloc, cnt);
        tessel_dealloc(e->alloc, need);
        return TESSEL_ENOMEM;
    }
    memset(cnt, 0, (nb ? nb : 1) * sizeof(double));
    memset(need, 0, nb ? nb : 1);
    for (uint64_t s = 0; s < t->n; s++)
        if (t->t[s].band < nb)
            need[t->t[s].band] = 1;
    int rc = band_lines(e, b, 1 - i, other, cnt, nb, kc);
    if (rc == 1)
        band_fibres(e, b, 1 - i, other, cnt, nb, need, cnt + (nb ? nb : 1));
    if (rc > 0)
        rc = TESSEL_OK;
    for (uint64_t s = 0; s < t->n; s++) {
        ob_tile *n = &t->t[s];
        double v = n->band < nb ? cnt[n->band] * (double)n->nnz : 0;
        n->child_nnz = v > 0 ? (uint64_t)llround(v) : 0;
    }
    tessel_dealloc(e->alloc, cnt);
    tessel_dealloc(e->alloc, need);
    return rc;
}

/* Reads of input i's recorded tiles under the elements case, summed over
 * its base cells: a cell of n nonzeros on k lines [k0, k1) reads n x
 * sum a_k b_k / sum a_k. */
static int element_reads(engine *e, unsigned b, unsigned i, const stat_input *own,
                         const stat_input *other)
{
    ob_table *t = &e->ob[b % 2][i];
    unsigned mk = k_mode(e, i), mo = k_mode(e, 1 - i);
    uint64_t bk = own->grid->tile[mk], nk = own->grid->extent[mk];
    uint64_t K = own->dims[mk] < other->dims[mo] ? own->dims[mk] : other->dims[mo];
    double *w = tessel_alloc_array(e->alloc, nk ? nk : 1, sizeof(double));
    double *acc = tessel_alloc_array(e->alloc, t->n ? t->n : 1, sizeof(double));
    if (!w || !acc) {
        tessel_dealloc(e->alloc, w);
        tessel_dealloc(e->alloc, acc);
        return TESSEL_ENOMEM;
    }
    memset(acc, 0, (t->n ? t->n : 1) * sizeof(double));
    for (uint64_t c = 0; c < nk; c++) {
        double ab = 0, a = 0;
        for (uint64_t k = c * bk; k < (c + 1) * bk && k < K; k++) {
            ab += (double)own->line_nnz[mk][k] * (double)other->line_nnz[mo][k];
            a += (double)own->line_nnz[mk][k];
        }
        w[c] = a > 0 ? ab / a : 0;
    }
    const stat_grid *g = own->base;
    const operand *o = &e->in[i];
    uint64_t e0 = exact_level_edge(e, b, o->x[0]), e1 = exact_level_edge(e, b, o->x[1]);
    for (uint64_t r = 0; r < g->rows; r++)
        for (uint64_t n = g->ptr[r]; n < g->ptr[r + 1]; n++) {
            uint64_t c = g->col[n];
            uint64_t key = stat_ob_pack(e, b, i, r * own->grid->tile[0] / e0,
                                        c * own->grid->tile[1] / e1);
            uint64_t s = model_map_find(&t->index, key);
            if (s != UINT64_MAX)
                acc[s] += (double)g->nnz[n] * w[mk ? c : r];
        }
    for (uint64_t s = 0; s < t->n; s++)
        t->t[s].child_nnz = acc[s] > 0 ? (uint64_t)llround(acc[s]) : 0;
    tessel_dealloc(e->alloc, w);
    tessel_dealloc(e->alloc, acc);
    return TESSEL_OK;
}

int stat_inspill_count(engine *e, unsigned b, const stat_input *const *in, stat_ks_cache *kc)
{
    int rc = TESSEL_OK;
    for (unsigned i = 0; i < e->nin && i < 2 && !rc; i++) {
        ob_table *t = &e->ob[b % 2][i];
        int kind = exact_inspill_reads(e, b, i);
        /* once per use: the closed sums' charge; TTM's and MTTKRP's join
         * (exact_inspill.c) has no estimate here yet (docs/semantics.md) */
        if (kind == EXACT_READS_ONCE || kind == EXACT_READS_JOIN)
            for (uint64_t k = 0; k < t->n; k++)
                t->t[k].child_nnz = t->t[k].uses * t->t[k].nnz;
        else if (t->n && kind == EXACT_READS_FIBRES)
            rc = fibre_reads(e, b, i, in[1 - i], kc);
        else if (t->n)
            rc = element_reads(e, b, i, in[i], in[1 - i]);
    }
    if (rc)
        return exact_oom_step(e, "estimating the compute's reads of overbooked tiles",
                              (e->extent[2] + 1) * sizeof(double));
    exact_ob_cascade(e, b);
    return TESSEL_OK;
}

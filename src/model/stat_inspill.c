/* Rule 4 for inputs per read of the compute, in the stat estimator
 * (docs/semantics.md rule 4, "The compute's reads"; Tailors §4, §6.2):
 * at the innermost level the compute reads an overbooked tile T again
 * inside a use where the level's order puts an index T does not carry
 * outside T's innermost own index (exact_inspill.c has the cases and the
 * scan convention). The closed sums charge S - P per use after a fill;
 * stat_bumped.c records every overbooked tile of the innermost level with
 * its fills and uses, as at inner levels, and here its R, the compute's
 * whole reads of T over the run, is estimated from the tiles the closed
 * sums price, gathered per k band of the innermost level:
 *   - fibres (A under IJK/JIK: each row of T scanned per non-empty column
 *     of B in T's k band): R = the band's expected non-empty columns, per
 *     B tile w (1 - (1 - 1/w)^n) for n nonzeros over its w columns
 *     (nonzeros spread uniformly over a tile's columns);
 *   - elements (A under JKI/KJI: each A(i, k) read once per nonzero of B's
 *     row k): R = B's nonzeros in the band over the band's width (uniform
 *     over k), scaled so that the sum over tiles of nnz(T) R, the
 *     multiplies, equals the exact flops of the statistics (the
 *     correlation of A's columns with B's rows that band means lose).
 * B mirrored. exact_ob_settle then replaces (U - F)(S - P) with
 * max(0, R - F)(S - P), as for the child level's reads. */
#include <math.h>
#include <string.h>

#include "stat_inspill.h"

/* Width of tile t along engine index x at level b. */
static double width(const engine *e, unsigned b, unsigned x, uint64_t t)
{
    uint64_t ed = exact_level_edge(e, b, x), lo = t * ed;
    uint64_t hi = lo + ed < e->extent[x] ? lo + ed : e->extent[x];
    return hi > lo ? (double)(hi - lo) : 1;
}

int stat_inspill_on(const engine *e, unsigned b)
{
    if (!e->inspill || b + 1 != e->nlev || e->kind != TESSEL_WORKLOAD_SPMSPM)
        return 0;
    if (b >= 2)
        return 1; /* the reads beyond the fills cascade to the parent tile */
    for (unsigned i = 0; i < e->nin && i < 2; i++)
        if (exact_inspill_reads(e, b, i) != EXACT_READS_ONCE)
            return 1;
    return 0;
}

int stat_inspill_tile(engine *e, unsigned b, unsigned i, uint64_t m0, uint64_t m1, uint64_t nnz)
{
    if (i >= 2 || !stat_inspill_on(e, b))
        return TESSEL_OK;
    if (!e->inband) {
        uint64_t ek = exact_level_edge(e, b, 2), nb = (e->extent[2] + ek - 1) / ek;
        e->nband = nb ? nb : 1;
        e->inband = tessel_alloc_array(e->alloc, 4 * e->nband, sizeof(double));
        if (!e->inband)
            return TESSEL_ENOMEM;
        memset(e->inband, 0, 4 * e->nband * sizeof(double));
    }
    /* A (i, k): k is its second mode and i its output index; B (k, j) */
    uint64_t K = i ? m0 : m1;
    if (K >= e->nband)
        return TESSEL_OK;
    double w = i ? width(e, b, 1, m1) : width(e, b, 0, m0), n = (double)nnz;
    double *s = &e->inband[(i * e->nband + K) * 2];
    s[0] += n;
    s[1] += w <= 1 ? (n > 0 ? 1 : 0) : w * -expm1(n * log1p(-1 / w));
    return TESSEL_OK;
}

/* R of every recorded tile of input i, as the nonzeros read. */
static void reads_of(engine *e, unsigned b, unsigned i, double flops)
{
    ob_table *t = &e->ob[b % 2][i];
    const double *own = &e->inband[i * e->nband * 2], *oth = &e->inband[(1 - i) * e->nband * 2];
    int fibres = exact_inspill_reads(e, b, i) == EXACT_READS_FIBRES;
    double scale = 1;
    if (!fibres) {
        double est = 0;
        for (uint64_t K = 0; K < e->nband; K++)
            est += own[2 * K] * oth[2 * K] / width(e, b, 2, K);
        scale = est > 0 && flops > 0 ? flops / est : 1;
    }
    for (uint64_t s = 0; s < t->n; s++) {
        ob_tile *n = &t->t[s];
        uint64_t K = n->band < e->nband ? n->band : e->nband - 1;
        double R = fibres ? oth[2 * K + 1] : scale * oth[2 * K] / width(e, b, 2, K);
        double v = R * (double)n->nnz;
        n->child_nnz = v > 0 ? (uint64_t)llround(v) : 0;
    }
}

void stat_inspill_count(engine *e, unsigned b, double flops)
{
    for (unsigned i = 0; i < e->nin && i < 2; i++) {
        ob_table *t = &e->ob[b % 2][i];
        if (e->inband && exact_inspill_reads(e, b, i) != EXACT_READS_ONCE)
            reads_of(e, b, i, flops);
        else /* once per use: the closed sums' charge */
            for (uint64_t k = 0; k < t->n; k++)
                t->t[k].child_nnz = t->t[k].uses * t->t[k].nnz;
    }
    exact_ob_cascade(e, b);
    tessel_dealloc(e->alloc, e->inband);
    e->inband = NULL;
    e->nband = 0;
}

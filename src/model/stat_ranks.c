/* Per-rank formats (docs/spec.md, `format`) under the stat estimator
 * (docs/models/stat.md, "Per-rank format lists").
 *
 * A per-rank list prices a tile from its prefix counts: occupied[d], the
 * non-empty coordinate prefixes of length d + 1 (tessel_rank_footprint_bits).
 When no rank reads a prefix count (model_ranks_need_prefixes: ranks above
 * the leaf UOP or UB, or a B rank right above a CP or RLE leaf) and the
 * leaf is compressed, only the leaf depends on the data, through the
 * nonzero count n alone: the footprint is fixed + n * per bits, as a
 * single-name format's, and the tiles' nonzero counts price it exactly
 * ([UOP, CP] is csr; [UB, CP], [B, CP], [UOP, B], [UOP, RLE] ...). An
 * uncompressed leaf ([UOP, UB], [UB, UB]) is exact too, its values every
 * position's (stat_rows_price).
 *
 * Other lists of an input ([CP, CP], [CP, UOP], [B, B] ...) need each
 * tile's non-empty rows (fibres): a matrix's come from the statistics'
 * per-tile rows (stat_tiledfmt.c, model_ranks_bits_at); without them (a
 * 3-tensor, statistics saved before them) they are estimated from the
 * tile's nonzeros as if these fell independently on its positions
 * (model_ranks_estimated_bits). An output's tiles have only estimated
 * nonzeros, so its lists are priced only when affine, or when they store
 * every position ([UB, UB], [UOP, UB]: whole tiles per write-back and
 * read-back, stat_dense.c). */
#include <math.h>
#include <stdio.h>

#include "exact_internal.h"
#include "stat_closed.h"
#include "stat_dense.h"

static int compressed(unsigned char r)
{
    return r == TESSEL_RANK_CP || r == TESSEL_RANK_B || r == TESSEL_RANK_RLE;
}

int model_ranks_need_prefixes(const unsigned char *ranks, unsigned n)
{
    /* rank d's prefix count is read by a CP or RLE rank d (its coordinates,
     * and offsets to its children), and by the rank below a B rank d when
     * that rank works per fibre (UOP, UB, B) */
    for (unsigned d = 0; d + 1 < n; d++) {
        if (ranks[d] == TESSEL_RANK_CP || ranks[d] == TESSEL_RANK_RLE)
            return 1;
        if (ranks[d] == TESSEL_RANK_B && !(d + 2 == n && ranks[d + 1] != TESSEL_RANK_B &&
                                            compressed(ranks[d + 1])))
            return 1;
    }
    return 0;
}

int model_ranks_affine(const unsigned char *ranks, unsigned n)
{
    return n > 0 && !model_ranks_need_prefixes(ranks, n) && compressed(ranks[n - 1]);
}

/* The spelling of a list for messages: "[UOP, CP]". */
static void list_name(const unsigned char *ranks, unsigned n, char *buf, size_t size)
{
    size_t k = 0;
    buf[0] = '\0';
    for (unsigned d = 0; d < n && k + 1 < size; d++) {
        int w = snprintf(buf + k, size - k, "%s%s", d ? ", " : "[",
                         tessel_rank_format_name((tessel_rank_format)ranks[d]));
        k += w > 0 ? (size_t)w : 0;
    }
    if (k + 1 < size)
        snprintf(buf + k, size - k, "]");
}

int stat_ranks_check(const tessel_spec *s, unsigned l, unsigned t, tessel_diag *diag)
{
    const tessel_spec_level *lv = &s->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[t];
    const tessel_spec_pos *pos = tl->pos.file ? &tl->pos : &lv->pos;
    unsigned n = tl->format >= 0 ? tl->nranks : lv->nranks;
    const unsigned char *r = tl->format >= 0 ? tl->ranks : lv->ranks;
    const char *name = s->workload.tensor[t].name;
    char list[64];
    list_name(r, n, list, sizeof(list));
    if (model_ranks_affine(r, n))
        return TESSEL_OK; /* affine in n: priced exactly */
    if (t == 0 && stat_dense_list(r, n))
        return stat_dense_check(s, l, diag); /* every position stored: stat_dense.c */
    if (t == 0)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, pos->file, pos->line, pos->column,
                               "format",
                               "level %s: the stat estimator prices an output's per-rank list "
                               "when its ranks above the leaf are uncompressed (UOP, UB) and its "
                               "leaf compressed (CP, B, RLE); %s's %s needs each output tile's "
                               "non-empty rows or stores every position: use -e exact",
                               lv->name, name, list);
    for (unsigned q = 0; q < s->workload.ntensors; q++)
        if (lv->tensor[q].sparse.scalar_skip_on | lv->tensor[q].sparse.scalar_gate_on)
            return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, pos->file, pos->line, pos->column,
                                   "format",
                                   "level %s: the stat estimator prices scalar skipping and "
                                   "gating with a per-rank list affine in a tile's nonzeros "
                                   "only (compressed leaf, no prefix count read); %s's %s is "
                                   "not (docs/models/stat.md): use -e exact",
                                   lv->name, name, list);
    /* an input: priced by stat_rows_price, exactly without prefixes
     * ([UOP, UB]), else with them estimated per tile */
    return TESSEL_OK;
}

/* Expected distinct non-empty prefixes of length d + 1 among n nonzeros
 * spread independently and uniformly over a tile's positions: P (1 - (1 -
 * 1/P)^n) with P the prefix's positions (balls in bins). It is exact for
 * n <= 1 and for a full tile; it is high where a tile's nonzeros crowd into
 * few rows (docs/models/stat.md, "Per-rank format lists"). */
static double prefix_estimate(const tile_cost *tc, unsigned d, uint64_t n)
{
    double p = 1;
    for (unsigned q = 0; q <= d; q++)
        p *= (double)tc->shape[q];
    if (n == 0 || p <= 1)
        return n ? 1 : 0;
    double e = -p * expm1((double)n * log1p(-1 / p));
    return e < (double)n ? e : (double)n;
}

void model_ranks_bits_at(const tile_cost *tc, uint64_t n, const double *est, double *data_bits,
                         double *meta_bits)
{
    /* the footprint is affine in each prefix count (tessel_rank_footprint_bits
     * multiplies none of them together), so a fractional count is priced by
     * interpolating between whole ones */
    uint64_t lo[3] = { 0, 0, 0 };
    for (unsigned d = 0; d + 1 < tc->nranks; d++)
        lo[d] = (uint64_t)floor(est[d]);
    lo[tc->nranks - 1] = n;
    double d0, m0;
    tessel_rank_footprint_bits(tc->ranks, tc->nranks, tc->shape, lo, &tc->widths, &d0, &m0);
    *data_bits = d0;
    *meta_bits = m0;
    for (unsigned d = 0; d + 1 < tc->nranks; d++) {
        double frac = est[d] - (double)lo[d];
        if (frac <= 0)
            continue;
        uint64_t up[3] = { lo[0], lo[1], lo[2] };
        up[d]++;
        double d1, m1;
        tessel_rank_footprint_bits(tc->ranks, tc->nranks, tc->shape, up, &tc->widths, &d1, &m1);
        *data_bits += frac * (d1 - d0);
        *meta_bits += frac * (m1 - m0);
    }
}

void model_ranks_estimated_bits(const tile_cost *tc, uint64_t n, double *data_bits,
                                double *meta_bits)
{
    double est[3] = { 0, 0, 0 };
    for (unsigned d = 0; d + 1 < tc->nranks; d++)
        est[d] = prefix_estimate(tc, d, n);
    model_ranks_bits_at(tc, n, est, data_bits, meta_bits);
}

void model_cost_footprint_bits(const tile_cost *tc, double *fixed, double *per)
{
    if (!tc->ranked) {
        tessel_format_footprint_bits(tc->format, tc->order, tc->shape, &tc->widths, fixed, per);
        return;
    }
    /* exact for an affine list (model_ranks_affine); for the others the
     * slope of the first nonzero, which only the bound of
     * stat_ob_may_overflow reads (its sign) */
    double d0, m0, d1, m1;
    model_ranks_estimated_bits(tc, 0, &d0, &m0);
    model_ranks_estimated_bits(tc, 1, &d1, &m1);
    *fixed = d0 + m0;
    *per = d1 + m1 - *fixed;
}

price stat_rows_price(const pricer *pr, uint64_t nnz)
{
    uint64_t d, m;
    exact_tile_bytes(&pr->cost, nnz, NULL, &d, &m);
    return (price){ (double)d, (double)m };
}

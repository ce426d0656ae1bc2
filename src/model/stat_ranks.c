/* Per-rank formats (docs/spec.md, `format`) under the stat estimator.
 *
 * A per-rank list prices a tile from its prefix counts: occupied[d], the
 * non-empty coordinate prefixes of length d + 1 (tessel_rank_footprint_bits).
 * When every rank above the leaf stores every position (UOP or UB), the
 * fibres of each rank are fixed by the tile's shape, and only the leaf
 * depends on the data: through the nonzero count n alone. The footprint is
 * then fixed + n * per bits, exactly as a single-name format's, and the
 * statistics (nonzeros per tile) price it without error: [UOP, CP] is csr,
 * [UB, CP], [UOP, B], [UOP, RLE], [UOP, UOP, CP] ... are priced the same way.
 *
 * A compressed rank above the leaf (B, CP or RLE: [CP, CP], [B, CP] ...)
 * stores only the occupied prefixes, so a tile's price needs its own
 * non-empty rows (fibres). The statistics hold those only as a mean over
 * the base tiles (d2t2 size_tile_rows), not per tile at the boundary's
 * shape, so such lists stay refused. So does a leaf that stores every
 * position (an uncompressed tile, [UOP, UB], [UB, UB]): its values are not
 * n x value bits, which the pricers' data/metadata split assumes, and for
 * an uncompressed output the compute's read-modify-write of its partial
 * sums (docs/semantics.md rule 2) is counted from the data only. */
#include <stdio.h>

#include "exact_internal.h"
#include "stat_internal.h"

/* Whether ranks[0 .. n-1] price as fixed + n * per bits with n values:
 * every rank above the leaf uncompressed, the leaf compressed. 0 when
 * priced; else 1 + the first rank that is not (a prefix rank), or
 * 1 + n (the leaf). */
static unsigned rank_obstacle(const unsigned char *ranks, unsigned n)
{
    for (unsigned d = 0; d + 1 < n; d++)
        if (ranks[d] != TESSEL_RANK_UOP && ranks[d] != TESSEL_RANK_UB)
            return d + 1;
    if (n && (ranks[n - 1] == TESSEL_RANK_UOP || ranks[n - 1] == TESSEL_RANK_UB))
        return n + 1;
    return 0;
}

int model_ranks_affine(const unsigned char *ranks, unsigned n)
{
    return rank_obstacle(ranks, n) == 0;
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
    unsigned at = rank_obstacle(r, n);
    if (at == 0)
        return TESSEL_OK;
    if (at <= n - 1)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, pos->file, pos->line, pos->column,
                               "format",
                               "level %s: the stat estimator prices a per-rank list whose ranks "
                               "above the leaf are uncompressed (UOP, UB); %s's %s has %s at rank "
                               "%u, which stores only the occupied coordinates, so each tile's "
                               "price needs its own non-empty rows (fibres), which the "
                               "statistics do not hold per tile: use -e exact",
                               lv->name, name, list,
                               tessel_rank_format_name((tessel_rank_format)r[at - 1]), at - 1);
    if (model_tensor_uncompressed(s, l, t) && t == 0 /* the output */)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, pos->file, pos->line, pos->column,
                               "format",
                               "level %s: the stat estimator does not price an uncompressed "
                               "output (%s %s): its write-backs carry every position and the "
                               "compute reads its partial sums before each update "
                               "(docs/semantics.md rule 2), counted from the data: use -e "
                               "exact, or a compressed leaf rank",
                               lv->name, name, list);
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, pos->file, pos->line, pos->column,
                           "format",
                           "level %s: the stat estimator prices a per-rank list whose leaf rank "
                           "is compressed (CP, B, RLE); %s's %s stores every position of its "
                           "leaf (an uncompressed tile): use -e exact",
                           lv->name, name, list);
}

void model_cost_footprint_bits(const tile_cost *tc, double *fixed, double *per)
{
    if (!tc->ranked) {
        tessel_format_footprint_bits(tc->format, tc->order, tc->shape, &tc->widths, fixed, per);
        return;
    }
    /* affine lists only (stat_ranks_check): the prefix counts are unused */
    uint64_t occ[3] = { 0, 0, 0 };
    double d0, m0, d1, m1;
    tessel_rank_footprint_bits(tc->ranks, tc->nranks, tc->shape, occ, &tc->widths, &d0, &m0);
    occ[tc->nranks - 1] = 1;
    tessel_rank_footprint_bits(tc->ranks, tc->nranks, tc->shape, occ, &tc->widths, &d1, &m1);
    *fixed = d0 + m0;
    *per = d1 + m1 - *fixed;
}

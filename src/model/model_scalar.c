/* Scalar skipping and gating at the compute: a level's `action_optimization`
 * (Sparseloop's `action-optimization` of type skipping / gating with a
 * target and `condition-on`, docs/semantics.md "Scalar skipping and
 * gating"), priced as Sparseloop prices it.
 *
 * The compute walks every point of the loop nest inside an effectual
 * innermost tile iteration and reads each operand there; a compressed
 * operand's zeros are never visited (its format skips them), so input X
 * is traversed once per nonzero of its tile per point of the indices X
 * does not carry (for A[i,k] of SpMSpM: nnz(A tile) x the tile's j
 * extent). Of those reads, the ones whose condition operands are all
 * nonzero are the multiplies (actual reads); the rest are skipped (or
 * gated). Each traversal reads the tile's format once per scalar, so the
 * format bytes read are the traversals' share of the tile's metadata:
 * per tile iteration, meta(T) x the non-carried extent, split between
 * actual and skipped reads in proportion, as Sparseloop splits its
 * "actual" and "skipped scalar format reads". The actual share replaces
 * the intersection's coordinate reads the level is charged otherwise.
 *
 * The output conditions on every input: its reads at the compute are the
 * multiplies' (rule 2), and the dense loop nest's other reads (M·N·K,
 * less M·N for an uncompressed output whose first reduction step reads
 * nothing) are skipped or gated. */
#include "exact_internal.h"

void model_scalar_split(tessel_traffic *tr, const tessel_spec_sparse *sp, double traversed,
                        double format_bytes, double actual)
{
    double rest = traversed > actual ? traversed - actual : 0;
    double share = traversed > 0 ? rest / traversed : 0;
    double skipped_meta = format_bytes * share;
    int skip = sp->scalar_skip_on != 0;
    if (skip) {
        tr->skipped_reads = model_count(rest);
        tr->skipped_metadata_bytes = model_count(skipped_meta);
    } else {
        tr->gated_reads = model_count(rest);
        tr->gated_metadata_bytes = model_count(skipped_meta);
    }
    tr->child_read_metadata = model_count(format_bytes - skipped_meta);
}

void model_scalar_output(tessel_traffic *tz, const tessel_spec_sparse *sp, double dense_reads)
{
    double rest = dense_reads > (double)tz->reads ? dense_reads - (double)tz->reads : 0;
    if (sp->scalar_skip_on)
        tz->skipped_reads = model_count(rest);
    else
        tz->gated_reads = model_count(rest);
}

int exact_scalar_on(const engine *e, unsigned i)
{
    const tessel_spec_sparse *sp = &e->spec->level[e->nlev - 1].tensor[e->in[i].spec_tensor].sparse;
    return (sp->scalar_skip_on | sp->scalar_gate_on) != 0;
}

/* The points of the innermost tile at coordinates c along the indices
 * operand o does not carry (an edge clipped at the extent). */
static double other_points(const engine *e, const operand *o, const uint64_t *c)
{
    unsigned L = e->nlev - 1;
    double n = 1;
    for (unsigned x = 0; x < e->nx; x++) {
        int carried = e->spec_index[x] < 0; /* SpMV's unit index has no loop */
        for (unsigned m = 0; m < o->order; m++)
            carried |= o->x[m] == x;
        if (carried)
            continue;
        uint64_t edge = exact_level_edge(e, L, x), lo = c[x] * edge;
        uint64_t hi = lo + edge < e->extent[x] ? lo + edge : e->extent[x];
        n *= hi > lo ? (double)(hi - lo) : 0;
    }
    return n;
}

void exact_scalar_note(engine *e, unsigned i, const uint64_t *c, uint64_t nnz, uint64_t meta)
{
    double n = other_points(e, &e->in[i], c);
    e->scalar_reads[i] += (double)nnz * n;
    e->scalar_format[i] += (double)meta * n;
}

void exact_scalar_finish(engine *e)
{
    unsigned L = e->nlev - 1;
    tessel_result *r = e->res;
    for (unsigned i = 0; i < e->nin; i++)
        if (exact_scalar_on(e, i))
            model_scalar_split(&r->traffic[L][e->in[i].spec_tensor],
                               &e->spec->level[L].tensor[e->in[i].spec_tensor].sparse,
                               e->scalar_reads[i], e->scalar_format[i], (double)r->macs);
    const tessel_spec_sparse *sz = &e->spec->level[L].tensor[e->out.spec_tensor].sparse;
    if (!(sz->scalar_skip_on | sz->scalar_gate_on))
        return;
    double dense = 1, cells = 1;
    for (unsigned x = 0; x < e->nx; x++)
        dense *= e->spec_index[x] < 0 ? 1 : (double)e->extent[x];
    for (unsigned m = 0; m < e->out.order; m++)
        cells *= e->spec_index[e->out.x[m]] < 0 ? 1 : (double)e->extent[e->out.x[m]];
    if (model_tensor_uncompressed(e->spec, L, e->out.spec_tensor))
        dense -= cells;
    model_scalar_output(&r->traffic[L][e->out.spec_tensor], sz, dense);
}

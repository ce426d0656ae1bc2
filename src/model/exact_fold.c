/* `timing: pipeline`'s per-step network count packed as STONNE's SIGMA
 * controller packs its folds (docs/models/timing.md, "Per step"): whole rows
 * of the stationary input, in row order, as many as fit into the compute's
 * lanes (STONNE src/SparseSDMemory.cpp, state CONFIGURING: a fold is cut when
 * the next row's nonzeros no longer fit into the ms_size multipliers). */
#include "exact_internal.h"

static uint64_t fold_cycles(uint64_t values, uint64_t width)
{
    return values ? (values + width - 1) / width : 0;
}

/* Sum over the folds of ceil(values / width). Rows pack greedily in order;
 * an empty row takes no lane. A row of more values than lanes is folded
 * across k on its own (STONNE's folding VN): its first fold takes `lanes`
 * values, each later one lanes - 1 values and one lane for the partial sum
 * read back. */
uint64_t exact_fold_pack(const uint64_t *row_values, uint64_t nrows, uint64_t lanes,
                         uint64_t width)
{
    uint64_t sum = 0, open = 0;
    if (!lanes || !width)
        return 0;
    for (uint64_t r = 0; r < nrows; r++) {
        uint64_t v = row_values[r];
        if (open + v <= lanes) {
            open += v;
            continue;
        }
        sum += fold_cycles(open, width);
        open = 0;
        if (v <= lanes) {
            open = v;
            continue;
        }
        sum += fold_cycles(lanes, width);
        uint64_t room = lanes > 1 ? lanes - 1 : 1; /* one lane: no room for a partial sum */
        for (v -= lanes; v > 0;) {
            uint64_t take = v < room ? v : room;
            sum += fold_cycles(take + (lanes > 1), width);
            v -= take;
        }
    }
    return sum + fold_cycles(open, width);
}

/* After boundary b's walk, when level b-1's network is dense and delivers to
 * the compute: an input matrix whose tiles at b hold whole rows (every other
 * mode whole) and whose nonzeros were each filled once as one value (a
 * compressed format, read once: SIGMA's stationary matrix) gets its packed
 * count in place of the sum over its fixed tiles. Otherwise the per-fill sum
 * (exact_note_network) stays. */
int exact_fold_note(engine *e, const boundary *bd)
{
    const tessel_spec *spec = e->spec;
    unsigned b = bd->b;
    if (!b || b + 1 != spec->nlevels)
        return TESSEL_OK;
    const tessel_spec_level *up = &spec->level[b - 1];
    uint64_t lanes = (uint64_t)spec->compute.pes *
                     (spec->compute.macs_per_pe ? spec->compute.macs_per_pe : 1);
    if (!up->network_width || !up->network_dense || !lanes)
        return TESSEL_OK;
    unsigned vb = spec->level[b].value_bits ? spec->level[b].value_bits : 64;
    for (unsigned i = 0; i < e->nin; i++) {
        const operand *o = &e->in[i];
        const tessel_tensor *t = o->t;
        tessel_traffic *tr = &e->res->traffic[b][o->spec_tensor];
        int whole = o->order == 2 && t && t->order == 2 && t->ptr;
        for (unsigned m = 1; whole && m < o->order; m++)
            whole = bd->tile[o->x[m]] >= e->extent[o->x[m]];
        if (!whole || !tr->fills || tr->in_data * 8 != t->nnz * vb)
            continue;
        uint64_t rows = t->dims[0];
        uint64_t *v = tessel_alloc(e->alloc, rows ? rows * sizeof(uint64_t) : 1);
        if (!v)
            return TESSEL_ENOMEM;
        for (uint64_t r = 0; r < rows; r++)
            v[r] = t->ptr[r + 1] - t->ptr[r];
        tr->fill_network_cycles = exact_fold_pack(v, rows, lanes, up->network_width);
        tessel_dealloc(e->alloc, v);
    }
    return TESSEL_OK;
}

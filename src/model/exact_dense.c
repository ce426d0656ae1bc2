/* Rule 2 for an uncompressed output at the compute (docs/semantics.md rule
 * 2, "Dense outputs: read-modify-write"): the MACs read a dense output's
 * partial sum before every update but those of the first reduction
 * coordinate, as Sparseloop counts an uncompressed read-write tensor. */
#include "exact_internal.h"

/* Level l holds workload tensor t uncompressed: a per-rank format whose
 * ranks are all UB (docs/spec.md, `format`), Sparseloop's uncompressed
 * (format-less) tensor. */
int model_tensor_uncompressed(const tessel_spec *spec, unsigned l, unsigned t)
{
    const tessel_spec_level *lv = &spec->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[t];
    int own = tl->format >= 0;
    if ((own ? tl->format : lv->format) != TESSEL_SPEC_FORMAT_RANKS)
        return 0;
    unsigned n = own ? tl->nranks : lv->nranks;
    const unsigned char *r = own ? tl->ranks : lv->ranks;
    for (unsigned d = 0; d < n; d++)
        if (r[d] != TESSEL_RANK_UB)
            return 0;
    return n > 0;
}

static int is_reduction(const engine *e, unsigned x)
{
    for (unsigned q = 0; q < e->nred; q++)
        if (e->red[q] == x)
            return 1;
    return 0;
}

/* Nonzeros of operand o whose reduction coordinates are all 0. Mode 0 is
 * the compressed one (ptr), the others are idx[m]. */
static uint64_t at_first_step(const engine *e, const operand *o)
{
    const tessel_tensor *t = o->t;
    uint64_t rows = is_reduction(e, o->x[0]) ? (t->dims[0] ? 1 : 0) : t->dims[0];
    uint64_t n = 0;
    for (uint64_t r = 0; r < rows; r++)
        for (uint64_t p = t->ptr[r]; p < t->ptr[r + 1]; p++) {
            int first = 1;
            for (unsigned m = 1; m < o->order; m++)
                if (is_reduction(e, o->x[m]) && t->idx[m][p] != 0)
                    first = 0;
            n += (uint64_t)first;
        }
    return n;
}

/* MTTKRP's factors share r: the r where row 0 of both B and C (j = 0 and
 * k = 0) hold a nonzero. Rows are sorted by the tensor builder. */
static uint64_t shared_r_at_first_step(const tessel_tensor *b, const tessel_tensor *c)
{
    uint64_t p = b->ptr[0], pe = b->ptr[1], q = c->ptr[0], qe = c->ptr[1], n = 0;
    while (p < pe && q < qe) {
        if (b->idx[1][p] < c->idx[1][q])
            p++;
        else if (b->idx[1][p] > c->idx[1][q])
            q++;
        else
            n++, p++, q++;
    }
    return n;
}

/* The effectual multiplies at the first reduction coordinate (every
 * reduction index 0), counted from the data. In expectation over uniform
 * data this is macs / K, Sparseloop's own count (its algorithmic reads
 * M·N·(K-1) scaled by the share of actual computes). */
static uint64_t first_step_macs(const engine *e)
{
    uint64_t macs = e->res->macs;
    if (e->kind == TESSEL_WORKLOAD_MTTKRP && e->nin == 3)
        return at_first_step(e, &e->in[0]) * shared_r_at_first_step(e->in[1].t, e->in[2].t);
    /* SpMSpM, SpMV, TTM: the inputs share only reduction indices, so the
     * multiplies at the origin pair every such nonzero of one input with
     * every such nonzero of the other */
    uint64_t n = 1;
    for (unsigned i = 0; i < e->nin; i++)
        n *= at_first_step(e, &e->in[i]);
    return n < macs ? n : macs;
}

void exact_dense_output_reads(engine *e)
{
    unsigned L = e->nlev - 1;
    /* analytic refuses per-rank formats (its operand check); stat sets
     * dense_first from its line counts (stat_dense.c); exact has the data */
    if (!model_tensor_uncompressed(e->spec, L, e->out.spec_tensor))
        return;
    for (unsigned i = 0; !e->dense_first_set && i < e->nin; i++)
        if (!e->in[i].t)
            return;
    tessel_traffic *tr = &e->res->traffic[L][e->out.spec_tensor];
    uint64_t value_bytes = e->spec->level[L].value_bits / 8;
    uint64_t first = e->dense_first_set ? e->dense_first : first_step_macs(e);
    tr->reads = e->res->macs - (first < e->res->macs ? first : e->res->macs);
    tr->child_read_data = tr->reads * value_bytes;
}

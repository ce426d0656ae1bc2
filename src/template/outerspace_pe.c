/* OuterSPACE as the DRT simulator schedules it (FPSG-UIUC/DRT
 * src/scheduler_9.cpp, Scheduler_9::Run; docs/models/templates.md,
 * "OuterSPACE's PEs and merge"): the columns k of A in order, each nonzero
 * of column k handed to the next PE round-robin (PickPEsAccordingToPolicy:
 * PE (slot + i) mod P, the slot advancing by the column's nonzeros), which
 * spends nnz(B row k) cycles on its partial row (pe_time + macc_count_per_pe,
 * one multiply a cycle). This file keeps the per-PE totals of that deal in
 * O(K + P): a column of a nonzeros adds floor(a / P) x b to every PE and b
 * to the a mod P PEs from the slot on (a circular range, kept as a
 * difference array). */
#include <math.h>
#include <string.h>

#include "template_internal.h"

int tpl_pe_deal_begin(tpl_pe_deal_state *s, uint64_t pes, const tessel_allocator *a)
{
    memset(s, 0, sizeof(*s));
    s->pes = pes ? pes : 1;
    s->alloc = a;
    s->diff = tessel_alloc_array(a, s->pes + 1, sizeof(double));
    if (!s->diff)
        return TESSEL_ENOMEM;
    memset(s->diff, 0, (s->pes + 1) * sizeof(double));
    return TESSEL_OK;
}

static void range_add(tpl_pe_deal_state *s, uint64_t from, uint64_t count, double v)
{
    uint64_t end = from + count;
    if (end <= s->pes) {
        s->diff[from] += v;
        s->diff[end] -= v;
    } else { /* wraps: [from, P) and [0, end - P) */
        s->diff[from] += v;
        s->diff[s->pes] -= v;
        s->diff[0] += v;
        s->diff[end - s->pes] -= v;
    }
}

/* Column k: a nonzeros of A, each meeting a row of B of b nonzeros. */
void tpl_pe_deal_column(tpl_pe_deal_state *s, uint64_t a, uint64_t b)
{
    if (a && b) {
        s->all += (double)(a / s->pes) * (double)b;
        if (a % s->pes)
            range_add(s, s->slot, a % s->pes, (double)b);
    }
    s->slot = (s->slot + a % s->pes) % s->pes;
}

/* The per-PE totals; the PE the round robin points at after the last
 * column is the one the merge runs on (Scheduler_9::Run picks one PE with
 * PickPEsAccordingToPolicy(1) after the loop over the columns). */
void tpl_pe_deal_end(tpl_pe_deal_state *s, tpl_pe_deal *out)
{
    memset(out, 0, sizeof(*out));
    out->pes = s->pes;
    out->last = s->slot;
    double run = 0;
    for (uint64_t p = 0; p < s->pes; p++) {
        run += s->diff[p];
        double w = s->all + run;
        out->sum += w;
        out->sumsq += w * w;
        if (w > out->max)
            out->max = w;
        if (p == s->slot)
            out->last_work = w;
        else if (w > out->max_other)
            out->max_other = w;
    }
    tessel_dealloc(s->alloc, s->diff);
    s->diff = NULL;
}

void tpl_pe_deal_free(tpl_pe_deal_state *s)
{
    if (s->diff)
        tessel_dealloc(s->alloc, s->diff);
    s->diff = NULL;
}

/* merge: single-pe. After the columns, Scheduler_9::Run reduces every
 * partial product on one PE: reduce_accumulate_cycles = pproduct_count -
 * nnz(Z) (one accumulate a cycle; pproduct_count is the MACs), on the PE the
 * round robin points at next. tessel makes it a second step (a barrier: the
 * merge needs every partial row) and the template's tail, which
 * `timing: pipeline` starts after every other transfer (the simulator
 * starts its DRAM read of the partial rows at that PE's time and its final
 * write after the merge). */
void tpl_outerspace_merge(const tpl_counts *c, tessel_result *out)
{
    const tpl_pe_deal *d = &c->deal;
    double m = c->multiplies > c->nnz_z ? (double)(c->multiplies - c->nnz_z) : 0;
    double p = (double)d->pes;
    tessel_spatial *sp = &out->spatial;
    memset(sp, 0, sizeof(*sp));
    sp->present = 1;
    sp->level = out->nlevels ? out->nlevels - 1 : 0;
    sp->used = (unsigned)(d->pes < UINT32_MAX ? d->pes : UINT32_MAX);
    sp->steps = 2;
    sp->units = c->nnz_a;
    sp->step_max_macs = d->max;
    sp->max_macs = d->max;
    sp->mean_macs = d->sum / p;
    sp->stdev_macs = sqrt(fmax(0, d->sumsq / p - sp->mean_macs * sp->mean_macs));
    sp->step_max_work = d->max + m;
    sp->max_work = fmax(d->max_other, d->last_work + m);
    sp->mean_work = (d->sum + m) / p;
    double sumsq = d->sumsq - d->last_work * d->last_work + (d->last_work + m) * (d->last_work + m);
    sp->stdev_work = sqrt(fmax(0, sumsq / p - sp->mean_work * sp->mean_work));
    out->tail.present = 1;
    out->tail.cycles = m;
}

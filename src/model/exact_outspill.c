/* The exact estimator: rule 4 for an output tile inside its visits
 * (docs/semantics.md rule 4, "Outputs"): the update steps of a run. */
#include <string.h>

#include "exact_internal.h"

/* Presence bitsets above this many words fall back to the per-visit rule
 * (price_spills in exact_walk.c): 2^25 words is 256 MiB. */
#define MAX_STEP_WORDS (UINT64_C(1) << 25)

/* Width of one update step along the reduction index at boundary b: the
 * child's reduction tile (level b+1's edge), or one coordinate when the
 * child is the compute, which accumulates the tile one k at a time (it
 * reads each operand tile once per visit, rule 4's `intersections`). */
static uint64_t step_width(const engine *e, const boundary *bd, unsigned kx)
{
    if (bd->b + 1 >= e->nlev)
        return 1;
    uint64_t t = e->spec_index[kx] < 0 ? 0 : e->spec->level[bd->b + 1].tile[e->spec_index[kx]];
    return t && t < bd->tile[kx] ? t : bd->tile[kx];
}

void exact_outspill_free(engine *e, exact_outspill *os)
{
    for (unsigned d = 0; d < os->fine.ntables; d++)
        exact_table_free(e->alloc, &os->fine.table[d]);
    tessel_dealloc(e->alloc, os->arow);
    tessel_dealloc(e->alloc, os->bcol);
    memset(os, 0, sizeof(*os));
}

/* Bit s of row tile I of A (and of column tile J of B) when it holds a
 * nonzero in step s: a step of output tile (I, J) has products exactly
 * when both bits are set. */
static int presence(engine *e, const boundary *bd, exact_outspill *os)
{
    const tessel_tensor *a = e->in[0].t, *b = e->in[1].t;
    uint64_t ni = bd->ntiles[e->out.x[0]], nj = bd->ntiles[e->out.x[1]];
    os->words = (os->nsteps + 63) / 64;
    if ((ni + nj) > MAX_STEP_WORDS / os->words)
        return TESSEL_OK; /* os->on stays 0 */
    os->arow = tessel_alloc_array(e->alloc, ni * os->words, sizeof(uint64_t));
    os->bcol = tessel_alloc_array(e->alloc, nj * os->words, sizeof(uint64_t));
    if (!os->arow || !os->bcol)
        return exact_oom(e);
    memset(os->arow, 0, ni * os->words * sizeof(uint64_t));
    memset(os->bcol, 0, nj * os->words * sizeof(uint64_t));
    uint64_t ti = bd->tile[e->out.x[0]], tj = bd->tile[e->out.x[1]];
    for (uint64_t i = 0; i < a->dims[0]; i++)
        for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
            uint64_t s = a->idx[1][p] / os->g;
            os->arow[i / ti * os->words + s / 64] |= UINT64_C(1) << (s % 64);
        }
    for (uint64_t k = 0; k < b->dims[0]; k++)
        for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
            uint64_t s = k / os->g, j = b->idx[1][q];
            os->bcol[j / tj * os->words + s / 64] |= UINT64_C(1) << (s % 64);
        }
    os->on = 1;
    return TESSEL_OK;
}

/* Sets os up for boundary bd when the output may spill (SpMSpM and SpMV:
 * one reduction index); otherwise os->on is 0 and the walk keeps the
 * per-visit rule. The fine boundary shares bd's output tiles and takes
 * one reduction digit of the step width, so exact_build_output gives the
 * tile's nonzeros (and fibres) after every step. */
int exact_outspill_prepare(engine *e, const boundary *bd, exact_outspill *os)
{
    memset(os, 0, sizeof(*os));
    if ((e->kind != TESSEL_WORKLOAD_SPMSPM && e->kind != TESSEL_WORKLOAD_SPMV) || e->nred != 1)
        return TESSEL_OK;
    /* the stat walk (stat_walk.c) runs this walk on statistics: no data to
     * count steps in, no row markers */
    if (!e->mark || !e->in[0].t || !e->in[1].t)
        return TESSEL_OK;
    unsigned kx = e->red[0];
    os->g = step_width(e, bd, kx);
    os->nsteps = (e->extent[kx] + os->g - 1) / os->g;
    int rc = presence(e, bd, os);
    if (rc || !os->on)
        return rc;
    boundary *f = &os->fine;
    *f = *bd;
    memset(f->table, 0, sizeof(f->table));
    f->ntables = 0;
    f->tile[kx] = os->g;
    f->ntiles[kx] = os->nsteps;
    f->ndigits = 1;
    f->d[0] = (digit){ .x = kx, .div = 1, .radix = os->nsteps, .first = 1 };
    f->red_space = os->nsteps;
    uint64_t macs = 0, n = e->extent[e->out.x[e->out.order - 1]] + 1;
    memset(e->mark, 0, n * sizeof(uint64_t)); /* the pass stamps rows anew */
    rc = exact_build_output(e, f, bd->out_cost.ranked, &macs);
    memset(e->mark, 0, n * sizeof(uint64_t));
    return rc;
}

/* Step s's reduction key at boundary bd (the visit it belongs to). */
static uint64_t step_visit(const engine *e, const boundary *bd, const exact_outspill *os,
                           uint64_t s)
{
    uint64_t c[NX] = { 0 };
    c[e->red[0]] = s * os->g / bd->tile[e->red[0]];
    return exact_reduction_key(e, bd, c);
}

/* The spill after one update step: the tile's bytes beyond the partition
 * written to the parent and read back by the next step, split into data
 * and metadata as the tile's own bytes (the input rule's truncation). */
void exact_spill_charge(tessel_traffic *tr, uint64_t data, uint64_t meta, uint64_t part)
{
    uint64_t total = data + meta;
    if (total <= part)
        return;
    uint64_t extra = total - part;
    uint64_t m = (uint64_t)((double)extra * (double)meta / (double)total);
    tr->out_data += extra - m;
    tr->out_metadata += m;
    tr->in_data += extra - m;
    tr->in_metadata += m;
    tr->bumped_bytes += extra;
    tr->overflow_bytes += 2 * extra;
}

/* One output tile: its update steps in order, each assigned to the run
 * whose reduction keys (after run r - 1's end, up to run r's end; ev: the
 * tile's sorted run-end events) hold it; every step but a
 * run's last spills. */
static void price_tile(const engine *e, const boundary *bd, exact_outspill *os, uint64_t key,
                       const uint64_t *ev, uint64_t nruns, tessel_traffic *tr, uint64_t part)
{
    uint64_t nj = bd->ntiles[e->out.x[1]];
    const uint64_t *x = &os->arow[key / nj * os->words], *y = &os->bcol[key % nj * os->words];
    uint64_t cursors[3] = { 0 }, r = 0, prev = UINT64_MAX, prev_run = 0;
    for (uint64_t wd = 0; wd < os->words; wd++)
        for (uint64_t m = x[wd] & y[wd]; m; m &= m - 1) {
            uint64_t s = wd * 64 + (uint64_t)__builtin_ctzll(m);
            uint64_t v = step_visit(e, bd, os, s);
            while (r + 1 < nruns && v > ev[r] % bd->red_space)
                r++;
            if (prev != UINT64_MAX && r == prev_run) { /* prev is not its run's last */
                uint64_t occ[3], data, meta;
                exact_output_occupancy(&os->fine, key, prev, cursors, occ);
                exact_tile_bytes(&bd->out_cost, occ[os->fine.ntables - 1], occ, &data, &meta);
                exact_spill_charge(tr, data, meta, part);
            }
            prev = s;
            prev_run = r;
        }
}

/* Rule 4 for the output over every update step (docs/semantics.md rule 4):
 * events are the walk's run ends, sorted by tile and reduction key. It
 * replaces price_spills, whose per-visit charge is the last step of each
 * visit here. */
void exact_outspill_price(engine *e, const boundary *bd, exact_outspill *os,
                          const model_vec *events)
{
    tessel_traffic *tr = &e->res->traffic[bd->b][0];
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    for (uint64_t i = 0; i < events->n;) {
        uint64_t key = events->v[i] / bd->red_space, n = i;
        while (n < events->n && events->v[n] / bd->red_space == key)
            n++;
        uint64_t data, meta, occ[3];
        exact_output_occupancy(&os->fine, key, UINT64_MAX, NULL, occ);
        exact_tile_bytes(&bd->out_cost, occ[os->fine.ntables - 1], occ, &data, &meta);
        if (data + meta > part) { /* partial tiles are never larger than the final one */
            price_tile(e, bd, os, key, &events->v[i], n - i, tr, part);
        }
        i = n;
    }
}

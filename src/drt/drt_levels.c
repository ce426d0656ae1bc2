/* DRT on two or more buffer levels (drt §4.1: "multiple S-DOP levels apply DRT
 * hierarchically"; §5.2.1: ExTensor-OP-DRT "subdivides tiles twice", the
 * global buffer's macro tiles being "broken down into macro sub-tiles to
 * be distributed to the PE buffers"). Below the PE level the same step
 * repeats: each task of level l is cut again by DRT with level l + 1's
 * partitions, formats and loop order.
 *
 * Level 1 (the LLB) is the one-level walk of drt_walk.c on the whole
 * micro-tile grid, unchanged: its traffic with DRAM is exactly
 * tessel_drt_exact's on the spec cut to two levels. After each effectual
 * LLB task the walker calls back here with the task's box (A's i range,
 * B's j range, the task's k range), and DRT runs again on that task's
 * data with the PE buffer's partitions, formats and loop order (level 2 of
 * the spec):
 *
 *   - The sub-problem holds the micro tiles of A and B inside the box that
 *     take part in an effectual intersection within it (a micro tile whose
 *     k line holds a micro tile of the other input in the box): the LLB
 *     S-DOP's tile extractor forms sub-tiles from the micro tiles of the
 *     resident macro tiles (drt §4.3 Fig. 5, "schedules pairs of micro
 *     tiles to PEs"), and, as at the DRAM level, never extracts a micro
 *     tile without a partner (drt §4.1). The micro tiles are the same
 *     ones (drt §5.2.4: one micro shape for all levels).
 *   - Coordinates are local to the box; the output table stays the whole
 *     run's, queried at the box's origin, so a PE output tile's partial
 *     count is the exact union of the products of every reduction step
 *     before it, including the LLB tasks before this one (docs/semantics.md rule
 *     2 with the LLB as backing store: the LLB's copy holds them).
 *   - docs/semantics.md's rules 1-4 then apply at the LLB -> PE boundary exactly
 *     as drt_walk.c applies them at DRAM -> LLB: fills of A and B
 *     sub-tiles, Z read-backs when a PE output tile was written back
 *     before (any partial products before the sub-task's k start), Z
 *     write-backs, overbooking of a micro tile larger than a PE partition.
 *   - The PE buffers start each LLB task empty and write their output
 *     tile back at its end: an LLB task is one batch of sub-tasks handed
 *     to the PEs, and the next LLB task may replace the macro tiles they
 *     were cut from.
 *   - The PE count (the level's instances) replicates the buffer: the
 *     sub-tasks' traffic is counted as one buffer running them in turn
 *     (how the uniform estimator counts a level with instances too).
 *
 * The statistical path is the same walk on the statistics: the micro
 * grids are exact counts collected in one pass (drt_grid.c), and only the
 * output table is estimated (drt_output.c), so both levels' output
 * traffic is the expected value under that estimate. */
#include <string.h>
#include <time.h>

#include "drt_internal.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One kept micro tile of a sub-problem: local coordinates along the
 * grid's x[0] and x[1], nonzeros. */
typedef struct ent {
    uint32_t a, b;
    uint64_t n;
} ent;

/* The walks at one buffer level below the first (2, 3, ...): the data
 * the level above walks (whose tasks call on_task) and the sums of this
 * level's sub-walks. */
typedef struct lv_level {
    struct lv_ctx *root;
    unsigned level;        /* the level of the sub-walks summed here */
    const drt_data *d;     /* the data walked one level up (its tasks' boxes are in it) */
    uint64_t off[DRT_NX];  /* d's micro origin in the whole run's coordinates */
    uint32_t *cursor;      /* this level's sub-walks' cursors over the output tiles */
    tessel_traffic pe[TESSEL_SPEC_MAX_TENSORS];
    drt_walk_raw raw;
    uint64_t intersections, effectual, overflow;
} lv_level;

typedef struct lv_ctx {
    const tessel_spec *spec;
    const drt_data *d; /* the whole run's grids and output table */
    tessel_drt_growth growth;
    tessel_diag *diag;
    lv_level lv[TESSEL_SPEC_MAX_LEVELS]; /* lv[l]: the sub-walks at level l >= 2 */
} lv_ctx;

/* Frees the line arrays of a sub-problem's grids. */
static void sub_free(const tessel_allocator *a, drt_data *s)
{
    for (unsigned g = DRT_A; g <= DRT_B; g++)
        for (unsigned m = 0; m < 2; m++) {
            drt_lines *l = &s->grid[g].by[m];
            tessel_dealloc(a, l->ptr);
            tessel_dealloc(a, l->other);
            tessel_dealloc(a, l->cnz);
            memset(l, 0, sizeof(*l));
        }
}

/* Lines of `e` (n entries, sorted by (a, b)) along a (m = 0) or b (m = 1). */
static int sub_lines(const tessel_allocator *al, const ent *e, uint64_t n, unsigned m,
                     uint64_t nlines, drt_lines *l)
{
    l->nlines = nlines;
    l->ptr = tessel_alloc_array(al, nlines + 1, sizeof(uint64_t));
    l->other = tessel_alloc_array(al, n ? n : 1, sizeof(uint32_t));
    l->cnz = tessel_alloc_array(al, n + 1, sizeof(uint64_t));
    if (!l->ptr || !l->other || !l->cnz)
        return TESSEL_ENOMEM;
    memset(l->ptr, 0, (nlines + 1) * sizeof(uint64_t));
    for (uint64_t p = 0; p < n; p++)
        l->ptr[(m ? e[p].b : e[p].a) + 1]++;
    for (uint64_t c = 0; c < nlines; c++)
        l->ptr[c + 1] += l->ptr[c];
    /* a stable counting sort keeps each line's entries ordered by the
     * other coordinate (the input is sorted by (a, b)); cnz holds counts
     * first, running sums after */
    for (uint64_t p = 0; p < n; p++) {
        uint64_t line = m ? e[p].b : e[p].a, q = l->ptr[line]++;
        l->other[q] = m ? e[p].a : e[p].b;
        l->cnz[q + 1] = e[p].n;
    }
    for (uint64_t c = nlines; c > 0; c--)
        l->ptr[c] = l->ptr[c - 1];
    l->ptr[0] = 0;
    l->cnz[0] = 0;
    for (uint64_t q = 0; q < n; q++)
        l->cnz[q + 1] += l->cnz[q];
    return TESSEL_OK;
}

/* The micro tiles of input `role` inside the box, in local coordinates,
 * sorted by (x[0], x[1]); *out is allocated (NULL when none). */
static int sub_collect(const drt_data *d, unsigned role, const drt_task_box *b, ent **out,
                       uint64_t *count)
{
    const drt_grid *g = &d->grid[role];
    const drt_lines *l = &g->by[0];
    unsigned x0 = g->x[0], x1 = g->x[1];
    uint64_t n = 0, end = b->hi[x0] < l->nlines ? b->hi[x0] : l->nlines;
    *out = NULL;
    *count = 0;
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (uint64_t c = b->lo[x0]; c < end; c++) {
            uint64_t q = l->ptr[c + 1];
            for (uint64_t p = drt_lower_bound(l->other, l->ptr[c], q, b->lo[x1]);
                 p < q && l->other[p] < b->hi[x1]; p++) {
                if (pass)
                    (*out)[n] = (ent){ (uint32_t)(c - b->lo[x0]),
                                       (uint32_t)(l->other[p] - b->lo[x1]),
                                       l->cnz[p + 1] - l->cnz[p] };
                n++;
            }
        }
        if (pass || !n)
            break;
        *out = tessel_alloc_array(d->alloc, n, sizeof(ent));
        if (!*out)
            return TESSEL_ENOMEM;
    }
    *count = n;
    return TESSEL_OK;
}

/* Keeps the entries whose k line is marked in `partner` (drt §4.1: a
 * micro tile without a partner in the task is never extracted) and marks
 * nothing; returns the kept count. */
static uint64_t sub_keep(ent *e, uint64_t n, int k_is_a, const uint8_t *partner)
{
    uint64_t q = 0;
    for (uint64_t p = 0; p < n; p++)
        if (partner[k_is_a ? e[p].a : e[p].b])
            e[q++] = e[p];
    return q;
}

static void add_traffic(tessel_traffic *to, const tessel_traffic *t)
{
    to->fills += t->fills;
    to->updates += t->updates;
    to->writebacks += t->writebacks;
    to->in_data += t->in_data;
    to->in_metadata += t->in_metadata;
    to->out_data += t->out_data;
    to->out_metadata += t->out_metadata;
    to->child_read_metadata += t->child_read_metadata;
    to->algorithmic += t->algorithmic;
    to->skipped += t->skipped;
    to->bumped_bytes += t->bumped_bytes;
    to->overflow_tiles += t->overflow_tiles;
    to->overflow_bytes += t->overflow_bytes;
    if (t->partition_bytes)
        to->partition_bytes = t->partition_bytes;
    if (t->worst_tile_bytes > to->worst_tile_bytes)
        to->worst_tile_bytes = t->worst_tile_bytes;
}

/* The DRT of one task of the level above at level lv->level (drt_task_fn):
 * the PE level of one LLB task, and so on down the hierarchy. */
static int on_llb_task(void *vctx, drt_task_box *b)
{
    lv_level *lv = vctx;
    lv_ctx *cx = lv->root;
    const drt_data *d = lv->d;
    const tessel_allocator *al = d->alloc;
    drt_data s;
    memset(&s, 0, sizeof(s));
    s.alloc = al;
    s.roles = d->roles;
    memcpy(s.micro, d->micro, sizeof(s.micro));
    memcpy(s.mu, d->mu, sizeof(s.mu));
    for (unsigned x = 0; x < DRT_NX; x++) {
        uint64_t e = d->roles.extent[x], lo = b->lo[x] * d->mu[x], hi = b->hi[x] * d->mu[x];
        s.mext[x] = b->hi[x] - b->lo[x];
        s.roles.extent[x] = (hi < e ? hi : e) - (lo < e ? lo : e);
    }
    ent *e[3] = { NULL, NULL, NULL };
    uint64_t n[3] = { 0, 0, 0 };
    uint8_t *mark = NULL;
    int rc = sub_collect(d, DRT_A, b, &e[DRT_A], &n[DRT_A]);
    if (!rc)
        rc = sub_collect(d, DRT_B, b, &e[DRT_B], &n[DRT_B]);
    uint64_t nk = s.mext[DRT_K] ? s.mext[DRT_K] : 1;
    if (!rc) {
        mark = tessel_alloc_array(al, 2 * nk, 1);
        if (!mark)
            rc = TESSEL_ENOMEM;
    }
    if (!rc) {
        /* k lines holding a micro tile of A (mark[0..nk)) and of B */
        memset(mark, 0, 2 * nk);
        int ka[3];
        for (unsigned r = DRT_A; r <= DRT_B; r++) {
            ka[r] = d->grid[r].x[0] == DRT_K;
            for (uint64_t p = 0; p < n[r]; p++)
                mark[(r == DRT_B ? nk : 0) + (ka[r] ? e[r][p].a : e[r][p].b)] = 1;
        }
        n[DRT_A] = sub_keep(e[DRT_A], n[DRT_A], ka[DRT_A], mark + nk);
        n[DRT_B] = sub_keep(e[DRT_B], n[DRT_B], ka[DRT_B], mark);
        for (unsigned r = DRT_A; r <= DRT_B && !rc; r++) {
            drt_grid *g = &s.grid[r];
            g->x[0] = d->grid[r].x[0];
            g->x[1] = d->grid[r].x[1];
            g->ntiles = g->ntiles_all = n[r];
            for (uint64_t p = 0; p < n[r]; p++)
                g->nnz += e[r][p].n;
            g->nnz_all = g->nnz;
            memcpy(g->segs, d->grid[r].segs, sizeof(g->segs));
            g->segs_tiles = d->grid[r].segs_tiles;
            for (unsigned m = 0; m < 2 && !rc; m++)
                rc = sub_lines(al, e[r], n[r], m, s.mext[g->x[m]], &g->by[m]);
        }
    }
    tessel_dealloc(al, mark);
    tessel_dealloc(al, e[DRT_B]);
    tessel_dealloc(al, e[DRT_A]);
    if (rc) {
        sub_free(al, &s);
        return drt_oom(cx->diag);
    }
    drt_walk_args a;
    memset(&a, 0, sizeof(a));
    a.spec = cx->spec;
    a.level = lv->level;
    a.d = &s;
    a.od = cx->d;
    for (unsigned x = 0; x < DRT_NX; x++)
        a.off[x] = lv->off[x] + b->lo[x];
    a.cursor = lv->cursor;
    a.growth = cx->growth;
    if (lv->level + 1 < cx->spec->nlevels) { /* DRT again inside each of these tasks */
        lv_level *inner = &cx->lv[lv->level + 1];
        inner->d = &s;
        memcpy(inner->off, a.off, sizeof(inner->off));
        a.on_task = on_llb_task;
        a.ctx = inner;
    }
    tessel_result r;
    memset(&r, 0, sizeof(r));
    r.nlevels = 2;
    r.ntensors = cx->spec->workload.ntensors;
    rc = drt_walk_run(&a, &r, NULL, cx->diag);
    sub_free(al, &s);
    if (rc)
        return rc;
    for (unsigned t = 0; t < r.ntensors; t++)
        add_traffic(&lv->pe[t], &r.traffic[1][t]);
    drt_walk_raw *w = &lv->raw;
    w->updates += a.raw.updates;
    w->in_data += a.raw.in_data;
    w->in_meta += a.raw.in_meta;
    w->out_data += a.raw.out_data;
    w->out_meta += a.raw.out_meta;
    w->tasks += a.raw.tasks;
    for (unsigned x = 0; x < DRT_NX; x++)
        w->edge_sum[x] += a.raw.edge_sum[x];
    w->util_sum += a.raw.util_sum;
    w->util_n += a.raw.util_n;
    /* what this level read of the task's A and B tiles (rule 4 per read above) */
    b->child_fill_nnz[DRT_A] = a.raw.fill_nnz[DRT_A];
    b->child_fill_nnz[DRT_B] = a.raw.fill_nnz[DRT_B];
    lv->intersections += r.intersections;
    lv->effectual += r.effectual_tiles[1];
    lv->overflow += r.overflow_tiles;
    return TESSEL_OK;
}

static uint64_t rounded(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 1.8e19)
        return UINT64_MAX;
    return (uint64_t)(x + 0.5);
}

/* Level l's traffic from its sub-walks' sums: the output's counts are
 * expected values on the stat path, summed unrounded over the sub-walks
 * and rounded once. */
static void level_sums(const lv_ctx *cx, unsigned l, tessel_traffic *pe)
{
    const lv_level *lv = &cx->lv[l];
    unsigned tz = cx->d->roles.tensor[DRT_Z];
    memcpy(pe, lv->pe, sizeof(lv->pe));
    pe[tz].updates = rounded(lv->raw.updates);
    pe[tz].in_data = rounded(lv->raw.in_data);
    pe[tz].in_metadata = rounded(lv->raw.in_meta);
    pe[tz].out_data = rounded(lv->raw.out_data);
    pe[tz].out_metadata = rounded(lv->raw.out_meta);
    pe[tz].algorithmic = pe[tz].updates;
}

/* The whole result: DRAM and the LLB's DRAM side from the LLB walk
 * (`llb`, two levels), every boundary below from the sub-walks; a level's
 * reads are its child's fills and updates, the innermost's the MACs. */
static void compose(const lv_ctx *cx, const tessel_result *llb, tessel_result *out)
{
    const tessel_spec *spec = cx->spec;
    unsigned tz = cx->d->roles.tensor[DRT_Z], nl = spec->nlevels;
    tessel_traffic pe[TESSEL_SPEC_MAX_LEVELS][TESSEL_SPEC_MAX_TENSORS];
    for (unsigned l = 2; l < nl; l++)
        level_sums(cx, l, pe[l]);
    out->nlevels = nl;
    out->ntensors = llb->ntensors;
    out->overflow_tiles = llb->overflow_tiles;
    for (unsigned t = 0; t < out->ntensors; t++) {
        out->traffic[0][t] = llb->traffic[0][t];
        out->traffic[1][t] = llb->traffic[1][t];
    }
    for (unsigned l = 1; l < nl; l++) {
        uint64_t vb = spec->level[l].value_bits / 8;
        for (unsigned t = 0; t < out->ntensors; t++) {
            tessel_traffic *x = &out->traffic[l][t];
            if (l >= 2) {
                *x = pe[l][t];
                x->data_bytes = x->in_data + x->out_data;
                x->metadata_bytes = x->in_metadata + x->out_metadata;
            }
            if (l + 1 < nl) {
                const tessel_traffic *c = &pe[l + 1][t];
                x->reads = c->fills + c->updates;
                x->child_read_data = c->in_data;
                x->child_read_metadata = c->in_metadata;
                x->child_write_data = c->out_data;
                x->child_write_metadata = c->out_metadata;
            } else {
                x->reads = llb->macs;
                x->child_read_data = llb->macs * vb;
                x->child_write_data = t == tz ? llb->macs * vb : 0;
            }
        }
        if (l >= 2) {
            out->effectual_tiles[l] = cx->lv[l].effectual;
            out->overflow_tiles += cx->lv[l].overflow;
        }
    }
    out->macs = llb->macs;
    out->intersections = nl > 2 ? cx->lv[nl - 1].intersections : llb->intersections;
    out->effectual_tiles[1] = llb->effectual_tiles[1];
    out->output_nnz = llb->output_nnz;
    out->compulsory_bytes = llb->compulsory_bytes;
    out->dram_bytes = llb->dram_bytes;
}

static void pe_summary(const lv_level *lv, const drt_data *d, tessel_drt_summary *s)
{
    memset(s, 0, sizeof(*s));
    const drt_walk_raw *w = &lv->raw;
    s->tasks = w->tasks;
    for (unsigned x = 0; x < DRT_NX; x++) {
        int si = d->roles.spec_index[x];
        if (si >= 0 && w->tasks)
            s->mean_edge[si] = w->edge_sum[x] / (double)w->tasks;
    }
    s->buffer_utilization = w->util_n ? w->util_sum / (double)w->util_n : 0;
}

int drt_check_levels(const tessel_spec *spec, tessel_spec *cut, tessel_diag *diag)
{
    if (spec->nlevels < 3)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->path, 0, 0, "architecture.levels",
                               "hierarchical DRT needs a backing store and at least two buffer "
                               "levels (LLB and PE buffers); this architecture has %u storage "
                               "levels",
                               spec->nlevels);
    *cut = *spec;
    cut->nlevels = 2;
    return TESSEL_OK;
}

/* Every level on built data d (exact or stat output table). */
int drt_levels_walk(const tessel_spec *spec, const drt_data *d, tessel_drt_growth growth,
                    tessel_result *out, tessel_drt_summary summary[2], tessel_diag *diag)
{
    lv_ctx *cx = tessel_alloc(d->alloc, sizeof(*cx));
    if (!cx)
        return drt_oom(diag);
    memset(cx, 0, sizeof(*cx));
    cx->spec = spec;
    cx->d = d;
    cx->growth = growth;
    cx->diag = diag;
    uint64_t nzt = d->out.ntiles ? d->out.ntiles : 1;
    int rc = TESSEL_OK;
    for (unsigned l = 2; l < spec->nlevels && !rc; l++) {
        cx->lv[l].root = cx;
        cx->lv[l].level = l;
        cx->lv[l].cursor = tessel_alloc_array(d->alloc, nzt, sizeof(uint32_t));
        if (!cx->lv[l].cursor)
            rc = drt_oom(diag);
        else
            memset(cx->lv[l].cursor, 0, nzt * sizeof(uint32_t));
    }
    cx->lv[2].d = d;
    drt_walk_args a;
    memset(&a, 0, sizeof(a));
    a.spec = spec;
    a.level = 1;
    a.d = a.od = d;
    a.growth = growth;
    a.on_task = on_llb_task;
    a.ctx = &cx->lv[2];
    tessel_result llb;
    memset(&llb, 0, sizeof(llb));
    llb.nlevels = 2;
    llb.ntensors = spec->workload.ntensors;
    tessel_drt_summary s1;
    if (!rc)
        rc = drt_walk_run(&a, &llb, &s1, diag);
    if (!rc) {
        compose(cx, &llb, out);
        if (summary) {
            summary[0] = s1;
            pe_summary(&cx->lv[spec->nlevels - 1], d, &summary[1]);
        }
    }
    for (unsigned l = 2; l < spec->nlevels; l++)
        tessel_dealloc(d->alloc, cx->lv[l].cursor);
    tessel_dealloc(d->alloc, cx);
    if (rc)
        return rc;
    for (unsigned l = 2; l < out->nlevels; l++)
        for (unsigned t = 0; t < out->ntensors; t++)
            if (out->traffic[l][t].data_bytes == UINT64_MAX ||
                out->traffic[l][t].metadata_bytes == UINT64_MAX)
                return tessel_diag_set(diag, TESSEL_ERANGE, spec->path, 0, 0, NULL,
                                       "a DRT count reaches 2^64 and would overflow");
    return TESSEL_OK;
}

static void levels_result_init(const tessel_spec *spec, tessel_result *out, const char *est)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->estimator, sizeof(out->estimator), "%s", est);
    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
}

int tessel_drt_levels_exact(const tessel_spec *spec, const tessel_workload_data *data,
                            const tessel_drt_options *opt, const tessel_allocator *a,
                            tessel_result *out, tessel_drt_summary summary[2],
                            tessel_diag *diag)
{
    double t0 = now_seconds();
    tessel_drt_options defaults;
    if (!opt) {
        tessel_drt_options_init(&defaults);
        opt = &defaults;
    }
    levels_result_init(spec, out, "exact");
    if (summary)
        memset(summary, 0, 2 * sizeof(*summary));
    tessel_spec cut;
    int rc = drt_check_levels(spec, &cut, diag);
    if (!rc)
        rc = drt_check_options(opt, diag);
    if (rc)
        return rc;
    drt_data d;
    rc = drt_data_build(&cut, data, opt, a, &d, diag);
    d.partials = spec->strategy.dataflow != 0; /* out.mul for the outer product's tasks */
    if (!rc)
        rc = drt_output_exact(&d, data, diag);
    if (!rc)
        rc = drt_levels_walk(spec, &d, opt->growth, out, summary, diag);
    drt_data_free(&d);
    snprintf(out->estimator, sizeof(out->estimator), "exact");
    out->seconds = now_seconds() - t0;
    return rc;
}

int tessel_drt_levels_stat(const tessel_spec *spec, const tessel_drt_stats *s,
                           tessel_drt_growth growth, tessel_result *out,
                           tessel_drt_summary summary[2], tessel_diag *diag)
{
    double t0 = now_seconds();
    levels_result_init(spec, out, "stat");
    if (summary)
        memset(summary, 0, 2 * sizeof(*summary));
    tessel_spec cut;
    int rc = drt_check_levels(spec, &cut, diag);
    if (!rc)
        rc = drt_check_stats(&cut, s, growth, diag);
    if (!rc)
        rc = drt_levels_walk(spec, &s->d, growth, out, summary, diag);
    snprintf(out->estimator, sizeof(out->estimator), "stat");
    out->seconds = now_seconds() - t0;
    out->stats_seconds = s->d.seconds;
    return rc;
}

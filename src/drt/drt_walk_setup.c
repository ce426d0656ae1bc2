/* The DRT walker's setup and result (the model: drt_walk.c): partitions,
 * per-tensor costs and the loop order at the buffer level, then the
 * counts into tessel_result and the summary. */
#include <math.h>
#include <string.h>

#include "drt_walk_internal.h"

/* ------------------------------------------------------------------ */
/* Setup and the result. */

uint64_t drt_w_partition_bytes(const tessel_spec *s, unsigned level, unsigned t)
{
    return tessel_spec_partition_bytes(s, level, t);
}

/* The engine index rank 0 of role's format runs along at the level: the
 * tensor's rank_order there, else the canonical shape_x order. */
static unsigned rank0_index(const drt_data *d, const tessel_spec_tensor_level *tl, unsigned canon)
{
    if (tl->nrank_order == 2)
        for (unsigned x = 0; x < DRT_NX; x++)
            if (d->roles.spec_index[x] == (int)tl->rank_order[0])
                return x;
    return canon;
}

/* Per-micro-tile and per-nonzero bits of each role at the walker's level:
 * single-name formats affine in (micro tiles, nonzeros); tiled-csf with
 * each micro tile's row segments at the input's mean (docs/spec.md). */
int drt_w_setup_costs(walker *w, tessel_diag *diag)
{
    const tessel_spec *s = w->spec;
    const tessel_spec_level *lv = &s->level[w->lv];
    const drt_data *d = w->d;
    const unsigned shape_x[3][2] = { { DRT_I, DRT_J }, { DRT_I, DRT_K }, { DRT_K, DRT_J } };
    tessel_format_widths wd;
    tessel_format_widths_init(&wd);
    wd.value_bits = lv->value_bits;
    wd.coord_bits = lv->coord_bits;
    wd.offset_bits = lv->offset_bits;
    wd.run_bits = lv->run_bits;
    for (unsigned role = 0; role < 3; role++) {
        unsigned t = d->roles.tensor[role];
        const tessel_spec_tensor_level *tl = &lv->tensor[t];
        int f = tl->format >= 0 ? tl->format : lv->format;
        const tessel_spec_pos *pos = tl->pos.file ? &tl->pos : &lv->pos;
        const drt_grid *g = &d->grid[role];
        int tiled = f == TESSEL_SPEC_FORMAT_TILED_CSF;
        unsigned r0 = rank0_index(d, tl, shape_x[role][0]);
        /* Z in tiled-csf: its row segments come with the output table
         * (drt_output.c: counted, or expected under stat), rows along i only */
        const drt_otable *zo = &w->od->out;
        int zbad = role == DRT_Z && r0 != DRT_I;
        if (f == TESSEL_SPEC_FORMAT_RANKS || (tiled && (zbad || (role != DRT_Z && !g->segs_tiles))))
            return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, pos->file, pos->line, pos->column,
                                   "format", "level %s: DRT needs a single-name format for %s "
                                   "(%s)", lv->name, s->workload.tensor[t].name,
                                   !tiled ? "a per-rank format is not affine in micro-tile "
                                            "counts"
                                   : "tiled-csf of the output is priced with rows along "
                                     "its first index only");
        unsigned r1 = r0 == shape_x[role][0] ? shape_x[role][1] : shape_x[role][0];
        uint64_t shape[2] = { d->mu[r0], d->mu[r1] };
        double fixed, per;
        w->c[role].seg_num = 0;
        w->c[role].seg_den = 1;
        w->c[role].seg_bits = 0;
        if (tiled) {
            /* per micro tile its two coordinates and an offset; per nonzero
             * its column and value; per row segment a coordinate and an offset */
            fixed = 2.0 * wd.coord_bits + wd.offset_bits;
            per = (double)wd.coord_bits + wd.value_bits;
            uint64_t sbits = (uint64_t)wd.coord_bits + wd.offset_bits;
            w->c[role].seg_bits = sbits;
            if (role == DRT_Z) {
                /* the final output's segments at their mean per micro tile */
                w->c[role].seg_num = (uint64_t)llround(zo->segs) * sbits;
                w->c[role].seg_den = zo->total_m >= 1 ? (uint64_t)llround(zo->total_m) : 1;
            } else {
                w->c[role].seg_num = g->segs[r0 == g->x[0] ? 0 : 1] * sbits;
                w->c[role].seg_den = g->segs_tiles;
            }
        } else {
            tessel_format_footprint_bits(tessel_model_format(f), 2, shape, &wd, &fixed, &per);
        }
        w->c[role].fixed_bits = (uint64_t)ceil(fixed);
        w->c[role].per_bits = (uint64_t)ceil(per);
        w->c[role].value_bits = lv->value_bits;
        w->c[role].part = drt_w_partition_bytes(s, w->lv, t);
    }
    return TESSEL_OK;
}

/* Loop order at the buffer level over the engine indices, outermost
 * first; SpMV's unit j is innermost (it never changes). */
void drt_w_setup_order(walker *w)
{
    const tessel_spec *s = w->spec;
    unsigned pos[DRT_NX];
    for (unsigned x = 0; x < DRT_NX; x++) {
        int si = w->d->roles.spec_index[x];
        pos[x] = 2 * TESSEL_SPEC_MAX_INDICES;
        if (si < 0)
            continue;
        pos[x] = TESSEL_SPEC_MAX_INDICES + (unsigned)si;
        for (unsigned p = 0; p < s->workload.nindices; p++)
            if ((int)s->level[w->lv].order[p] == si) {
                pos[x] = p;
                break;
            }
    }
    for (unsigned x = 0; x < DRT_NX; x++)
        w->order[x] = x;
    for (unsigned a = 0; a < DRT_NX; a++)
        for (unsigned b = a + 1; b < DRT_NX; b++)
            if (pos[w->order[b]] < pos[w->order[a]]) {
                unsigned t = w->order[a];
                w->order[a] = w->order[b];
                w->order[b] = t;
            }
}

static uint64_t count_of(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= 1.8e19)
        return UINT64_MAX;
    return (uint64_t)llround(x);
}

/* The walk's counts into tessel_result (rules 1-4 per level and tensor) and the summary. */
void drt_w_finish(walker *w, tessel_drt_summary *summary)
{
    const drt_data *d = w->d;
    tessel_result *r = w->r;
    const drt_otable *o = &w->od->out;
    unsigned tz = d->roles.tensor[DRT_Z];
    tessel_traffic *z = &r->traffic[1][tz];
    z->updates = count_of(w->updates);
    z->in_data = count_of(w->in_data);
    z->in_metadata = count_of(w->in_meta);
    z->out_data = count_of(w->out_data);
    z->out_metadata = count_of(w->out_meta);
    z->bumped_bytes = count_of(w->spill);
    z->overflow_bytes = 2 * z->bumped_bytes;
    z->overflow_tiles = count_of(w->overflow_wb);
    z->partition_bytes = w->c[DRT_Z].part;
    z->worst_tile_bytes = count_of(w->z_worst);
    z->algorithmic = z->updates;
    for (unsigned role = DRT_A; role <= DRT_B; role++) {
        tessel_traffic *tr = &r->traffic[1][d->roles.tensor[role]];
        tr->algorithmic = w->alg[role];
        tr->skipped = w->alg[role] > tr->fills ? w->alg[role] - tr->fills : 0;
    }
    r->macs = d->macs;
    /* the final output, and compulsory traffic (rule 3) */
    double nnz = o->total_n;
    r->output_nnz = count_of(nnz);
    /* every micro tile once, in the level's format: the tiled floor */
    oq fq = { .n = nnz, .m = o->total_m };
    double od, om;
    drt_w_out_bytes(w, &fq, &od, &om);
    double tiled = od + om;
    for (unsigned role = DRT_A; role <= DRT_B; role++) {
        uint64_t a, b;
        drt_w_bytes_of(&w->c[role], d->grid[role].ntiles_all, d->grid[role].nnz_all, &a, &b);
        tiled += (double)a + (double)b;
    }
    /* rule 3 as in every estimator: each tensor once, untiled, in the
     * backing store's format (per-rank formats there: rows not counted);
     * what the micro tiles add over the untiled tensors in the level's
     * format is the tiled metadata */
    double comp = 0, flat = 0;
    for (unsigned role = DRT_Z; role <= DRT_B; role++) {
        unsigned rows = role == DRT_B ? DRT_K : DRT_I, cols = role == DRT_A ? DRT_K : DRT_J;
        /* Z as the output_nnz column has it: stat's expected count is
         * rounded there, so compulsory_bytes matches other estimators' */
        double b0 = 1.8e19, b1 = 1.8e19;
        double n = role == DRT_Z ? (double)r->output_nnz : (double)d->grid[role].nnz_all;
        if (role == DRT_Z && d->out.stat && d->out_count >= 0)
            n = d->out_count; /* the exact count, as every estimator's rule 3 */
        unsigned t = d->roles.tensor[role];
        for (unsigned l = 0; l < 2; l++) {
            unsigned lvl = l ? w->lv : 0;
            unsigned r0 = rank0_index(d, &w->spec->level[lvl].tensor[t], rows);
            uint64_t dims[2] = { d->roles.extent[r0], d->roles.extent[r0 == rows ? cols : rows] };
            if (tessel_model_untiled_bytes(w->spec, lvl, t, 2, dims, NULL, n, l ? &b1 : &b0, NULL))
                *(l ? &b1 : &b0) = 1.8e19;
        }
        comp += b0;
        flat += b1;
    }
    r->compulsory_bytes = count_of(comp);
    r->tiled_metadata_bytes = fabs(tiled - flat) < 9e18 ? (int64_t)llround(tiled - flat) : 0;
    /* derived counts, as the exact estimator's (one buffer level) */
    uint64_t value_bytes = w->spec->level[w->lv].value_bits / 8;
    for (unsigned t = 0; t < r->ntensors; t++) {
        tessel_traffic *top = &r->traffic[0][t], *lv = &r->traffic[1][t];
        top->reads = lv->fills + lv->updates;
        top->child_read_data = lv->in_data;
        top->child_read_metadata = lv->in_metadata;
        top->child_write_data = lv->out_data;
        top->child_write_metadata = lv->out_metadata;
        lv->reads = r->macs;
        lv->child_read_data = r->macs * value_bytes;
        if (t == tz)
            lv->child_write_data = r->macs * value_bytes;
        top->data_bytes = top->child_read_data + top->child_write_data;
        top->metadata_bytes = top->child_read_metadata + top->child_write_metadata;
        lv->data_bytes = lv->in_data + lv->out_data;
        lv->metadata_bytes = lv->in_metadata + lv->out_metadata;
    }
    r->dram_bytes = 0;
    for (unsigned t = 0; t < r->ntensors; t++)
        r->dram_bytes += r->traffic[0][t].data_bytes + r->traffic[0][t].metadata_bytes;
    if (summary) {
        memset(summary, 0, sizeof(*summary));
        summary->tasks = w->tasks;
        for (unsigned x = 0; x < DRT_NX; x++) {
            int si = d->roles.spec_index[x];
            if (si >= 0 && w->tasks)
                summary->mean_edge[si] = w->edge_sum[x] / (double)w->tasks;
        }
        summary->buffer_utilization = w->util_n ? w->util_sum / (double)w->util_n : 0;
    }
}

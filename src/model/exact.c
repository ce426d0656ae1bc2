/* The exact estimator: walks the real tile grid of the data in the
 * mapping's loop order and applies the traffic rules of docs/semantics.md
 * literally, one storage boundary (level b-1 -> level b) at a time.
 *
 * Per boundary b:
 *  1. The output table: one Gustavson-style pass over the data records, for
 *     every output nonzero, the first reduction step (in loop order, at
 *     level-b tile granularity) that produces it. Per output tile this gives
 *     the exact partial nonzero count after any reduction prefix (rule 2).
 *  2. The effectual tile iterations (every input tile non-empty), plus the
 *     iterations inputs that do not skip need, each as a composite key whose
 *     order is the loop order of every level down to b; sorted, a chunk of
 *     keys at a time (exact_stream.c).
 *  3. The walk: resident tile per tensor; fills on change (rule 1),
 *     write-backs and read-backs of output tiles (rule 2), overbooked
 *     streaming (rule 4), skipping and gating.
 * Cost: O(multiplies + iterations log tiles) per boundary. */
#include <string.h>

#include "exact_internal.h"

void exact_boundary_free(engine *e, boundary *bd)
{
    for (unsigned i = 0; i < NIN; i++) {
        tessel_tile_grid_free(&bd->grid[i]);
        tessel_dealloc(e->alloc, bd->rowptr[i]);
    }
    for (unsigned i = 0; i < NIN; i++)
        tessel_dealloc(e->alloc, bd->occ[i]);
    for (unsigned d = 0; d < 3; d++)
        exact_table_free(e->alloc, &bd->table[d]);
    memset(bd, 0, sizeof(*bd));
}

int exact_boundary_prepare(engine *e, unsigned b, boundary *bd)
{
    memset(bd, 0, sizeof(*bd));
    bd->b = b;
    int rc = exact_geometry(e, bd);
    if (!rc)
        rc = exact_build_grids(e, bd);
    for (unsigned i = 0; !rc && i < e->nin; i++) {
        rc = exact_tile_cost_init(e, bd, &e->in[i], &bd->cost[i]);
        if (!rc && (bd->cost[i].ranked || bd->cost[i].tiled) && e->in[i].order > 1)
            rc = exact_input_occupancy(e, bd, i);
    }
    return rc;
}

static int run_boundary(engine *e, unsigned b)
{
    boundary bd;
    uint64_t macs = 0;
    int rc = exact_boundary_prepare(e, b, &bd);
    if (!rc)
        rc = exact_tile_cost_init(e, &bd, &e->out, &bd.out_cost);
    if (!rc)
        rc = exact_output_and_walk(e, &bd, &macs);
    if (!rc) {
        exact_algorithmic_counts(e, &bd);
        e->res->macs = macs;
        rc = exact_fold_note(e, &bd);
        if (!rc && b == 1) {
            exact_compulsory(e, &bd);
            rc = exact_untiled_compulsory(e, &bd);
            e->res->output_nnz = bd.rows_nnz;
        }
    }
    exact_boundary_free(e, &bd);
    return rc;
}

/* Derived counts: the backing side of each boundary, the MACs' reads at
 * the innermost level, and the summary totals. */
void exact_finish_counts(engine *e)
{
    tessel_result *r = e->res;
    unsigned L = e->nlev - 1;
    for (unsigned l = 0; l < L; l++) {
        for (unsigned t = 0; t < r->ntensors; t++) {
            tessel_traffic *tr = &r->traffic[l][t], *child = &r->traffic[l + 1][t];
            tr->reads = child->fills + child->updates;
            tr->child_read_data = child->in_data;
            tr->child_read_metadata = child->in_metadata;
            tr->child_write_data = child->out_data;
            tr->child_write_metadata = child->out_metadata;
        }
    }
    uint64_t value_bytes = e->spec->level[L].value_bits / 8;
    for (unsigned t = 0; t < r->ntensors; t++) {
        tessel_traffic *tr = &r->traffic[L][t];
        tr->reads = r->macs;
        tr->child_read_data = r->macs * value_bytes;
        if (t == 0)
            tr->child_write_data = r->macs * value_bytes;
    }
    exact_dense_output_reads(e);
    exact_scalar_finish(e);
    exact_compute_finish(e);
    exact_bypass(e);
    for (unsigned l = 0; l <= L; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            tessel_traffic *tr = &r->traffic[l][t];
            if (l == 0) {
                tr->data_bytes = tr->child_read_data + tr->child_write_data;
                tr->metadata_bytes = tr->child_read_metadata + tr->child_write_metadata;
            } else {
                tr->data_bytes = tr->in_data + tr->out_data;
                tr->metadata_bytes = tr->in_metadata + tr->out_metadata;
            }
        }
    r->dram_bytes = 0;
    for (unsigned t = 0; t < r->ntensors; t++)
        r->dram_bytes += r->traffic[0][t].data_bytes + r->traffic[0][t].metadata_bytes;
    exact_record_tiles(e, r);
}

/* The tiles as priced into r->tile: a whole mode (0) or an edge past it
 * is the extent. */
void exact_record_tiles(const engine *e, tessel_result *r)
{
    for (unsigned l = 1; l < e->spec->nlevels; l++)
        for (unsigned x = 0; x < e->nx; x++) {
            int w = e->spec_index[x];
            if (w < 0 || (unsigned)w >= TESSEL_SPEC_MAX_INDICES)
                continue;
            uint64_t edge = e->spec->level[l].tile[w];
            r->tile[l][w] = edge && edge < e->extent[x] ? edge : e->extent[x];
        }
}

void exact_engine_free(engine *e)
{
    for (unsigned i = 0; i < NIN; i++)
        if (e->in[i].owned)
            tessel_tensor_free(&e->in[i].t);
    tessel_dealloc(e->alloc, e->mark);
    tessel_dealloc(e->alloc, e->minkey);
    tessel_dealloc(e->alloc, e->touched);
    exact_ob_free(e);
}

int tessel_model_exact(const tessel_spec *spec, const tessel_workload_data *data,
                       const tessel_allocator *a, tessel_result *out, tessel_diag *diag)
{
    return tessel_model_exact_progress(spec, data, a, NULL, NULL, out, diag);
}

int tessel_model_exact_progress(const tessel_spec *spec, const tessel_workload_data *data,
                                const tessel_allocator *a, tessel_progress_fn progress,
                                void *progress_ud, tessel_result *out, tessel_diag *diag)
{
    return tessel_model_exact_opts(spec, data, a, NULL, progress, progress_ud, out, diag);
}

/* The exact estimate: every boundary's output tables and walk, then the
 * derived counts (see the header). */
int tessel_model_exact_opts(const tessel_spec *spec, const tessel_workload_data *data,
                            const tessel_allocator *a, const tessel_exact_options *opt,
                            tessel_progress_fn progress, void *progress_ud, tessel_result *out,
                            tessel_diag *diag)
{
    double start = model_now();
    memset(out, 0, sizeof(*out));
    snprintf(out->estimator, sizeof(out->estimator), "exact");
    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
    if (spec->nlevels < 2)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "architecture.levels",
                               "the architecture needs a backing store and at least one buffer");
    engine e;
    memset(&e, 0, sizeof(e));
    e.spec = spec;
    e.alloc = a;
    e.diag = diag;
    e.res = out;
    e.progress = progress;
    e.progress_ud = progress_ud;
    if (opt)
        e.walk = *opt;
    e.nlev = spec->nlevels;
    e.inspill = 1;
    int rc = model_scalar_outer_refuse(spec, diag, NULL);
    if (!rc)
        rc = exact_setup_roles(&e, data);
    if (!rc)
        exact_outer_setup(&e);
    if (!rc) {
        /* markers over the output's last engine index */
        uint64_t n = e.extent[e.out.x[e.out.order - 1]] + 1;
        e.mark = tessel_alloc_array(a, n, sizeof(uint64_t));
        e.minkey = tessel_alloc_array(a, n, sizeof(uint64_t));
        e.touched = tessel_alloc_array(a, n, sizeof(uint64_t));
        if (!e.mark || !e.minkey || !e.touched)
            rc = exact_oom_step(&e, "allocating the output's row markers", n * sizeof(uint64_t));
        else
            memset(e.mark, 0, n * sizeof(uint64_t));
    }
    for (unsigned b = 1; !rc && b < spec->nlevels; b++) {
        if (e.progress)
            e.progress(e.progress_ud, b, 0.0);
        rc = run_boundary(&e, b);
        if (!rc && b + 1 == spec->nlevels)
            rc = exact_inspill_count(&e, b); /* rule 4 per read of the compute */
        if (!rc && b >= 2)
            exact_ob_settle(&e, b - 1);
        if (!rc && b + 1 == spec->nlevels)
            exact_ob_settle(&e, b);
        if (!rc && e.progress)
            e.progress(e.progress_ud, b, 1.0);
        if (!rc && b + 1 < spec->nlevels)
            memset(e.mark, 0, (e.extent[e.out.x[e.out.order - 1]] + 1) * sizeof(uint64_t));
    }
    if (!rc)
        exact_finish_counts(&e);
    if (!rc)
        rc = model_result_check(out, spec, diag);
    exact_engine_free(&e);
    out->seconds = model_now() - start;
    return rc;
}


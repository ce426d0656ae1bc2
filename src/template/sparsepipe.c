/* Sparsepipe (Zhang, Tsai, Tseng): iterative vector applications
 * y = f(A x) repeated N times, run with the OEI dataflow (sparsepipe §III)
 * on one shared on-chip buffer (§IV). The model and its choices:
 *
 * Steps. The workload is SpMV y[i] = A[i,k] * x[k] with A square (the
 * output of one iteration feeds the next). The OS core of iteration t
 * produces y in sub-tensors of T consecutive outputs (rows of A[i,k], the
 * paper's vxm columns; `subtensor`, default 1024, one per OS-core PE,
 * sparsepipe §V-A), one sub-tensor per step, S = ceil(n / T) steps. The
 * fused e-wise stage turns them into the next iteration's input x', and
 * the IS core of iteration t+1 scatters x'[k] along column k of A. The IS
 * stage of sub-tensor I runs two steps after its OS stage (sparsepipe
 * §IV-D.1 / Fig. 13: CSC load, OS, e-wise, IS), so nonzero a_ik is loaded
 * for the OS at step o = i / T and used by the IS at p = k / T + 2.
 *
 * Hold. When p > o the nonzero must stay on chip (in the CSR space of the
 * dual storage, §IV-B) from step o until step p; when p <= o the IS input
 * is ready when the OS loads it and it is used at once. The pending
 * nonzeros at each step, with an unbounded buffer, are the paper's
 * Table I figure (max and mean over the steps, as a share of nnz(A)).
 *
 * Buffer. The held nonzeros get what is left of the buffer (`buffer_bytes`,
 * default level 1's capacity, 0 = unbounded) after our reserve: two
 * sub-tensors in CSC space (the one loading and the one in the OS stage,
 * Fig. 13) at the largest sub-tensor's size, and one sub-tensor's segment
 * of every vector the pipeline touches (the OS input and output, the IS
 * input and output, the e-wise vectors). A held nonzero takes a value and
 * an in-block coordinate. When the buffer is full the nonzeros needed
 * furthest in the future are evicted (sparsepipe §IV-D.3: rows with the
 * higher index go first) and the IS re-fetches them from DRAM when it
 * needs them; for single-use items this farthest-first rule keeps the most
 * (Belady). The share of A kept on chip across the pair of iterations is
 * 1 - refetched / nnz(A).
 *
 * Format. A is stored blocked (sparsepipe §IV-E.2, UOP-CP-CP): b x b
 * blocks (`block`, default 16: 256 positions, a one-byte in-block
 * coordinate as the paper states), per nonzero a value and a
 * ceil(log2(b^2))-bit in-block coordinate, per nonzero block a block
 * coordinate and a pointer (coord_bits + offset_bits), per block row an
 * offset. The CSC and CSR views share the data and in-block arrays, so one
 * pass over A moves one view's block index. `block: 1` is plain CSR:
 * value + coordinate per nonzero, an offset per row.
 *
 * Traffic per pair of iterations (t, t+1) fused by OEI: A once plus the
 * IS re-fetches (at A's bytes per nonzero, times the frontier share), the
 * input x_t read once, the vxm output and the IS input stay on chip
 * (producer-consumer reuse), the e-wise vectors read and written once per
 * iteration, and the IS output written once, the next pair's input (the
 * e-wise between two pairs is applied as the IS completes each element).
 * An iteration not fused (apps without cross-iteration reuse, Table III's
 * cg; the last of an odd count): A once, x read, x' written, e-wise
 * vectors. The baseline (an accelerator without inter-operator reuse,
 * sparsepipe §V-B) per iteration: A once (`baseline: stream`, the default)
 * or only the frontier's share of it (`baseline: frontier`, a push SpMSpV),
 * x read, y written, y read back and x' written by the e-wise, plus the
 * e-wise vectors. A at the same format in both, so the saving is the
 * dataflow's alone. Wherever x is read, only its entries at the non-empty
 * columns of A are: the front-end data fetcher intersects the loaded
 * coordinates and "retrieves the necessary vector data" (sparsepipe
 * §IV-D.2); an entry no nonzero of A multiplies is not fetched. The
 * vectors written (y, x') and the e-wise ones are whole: every element
 * is produced or used ("e-wise PEs use all e-wise" data, §IV-D.2).
 *
 * Frontier (SpMSpV apps, bfs and sssp): vertex-centric apps touch only the
 * active vertices. Our documented model: every vertex is active in exactly
 * one of the N iterations, evenly (a BFS whose N levels partition the
 * reachable graph), so each iteration's vector holds n / N entries, sent
 * as value + coordinate; `frontier: <share>` sets another share, `dense`
 * none. The OS pulls every column whatever the frontier (it is
 * output-stationary); the IS needs only the active rows. So in an SpMSpV
 * app the OS fetches the nonzeros of A in inactive rows, whose products
 * are zero: that is what the hardware does, since the CSC loader fetches
 * whole columns of the sub-tensor by index before the data fetcher sees
 * which vector entries are active (sparsepipe §IV-D.2, §III-B Fig. 6(a):
 * the OS dataflow requires "access to all input vector elements").
 *
 * Exact: one pass over A by rows (O(nnz log S)). Stat: the base tile grid
 * of A (per-tile nonzero counts), each tile's nonzeros spread evenly over
 * its rows and columns (O(tiles x (tile / T + 1)^2 log S)); nonzero blocks
 * from the grid derived at the block size when the block is a multiple of
 * the base tile, else from uniform occupancy within each tile. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "sparsepipe_internal.h"

/* The presets. Vectors read / written by the fused e-wise stage per
 * iteration besides the vxm's own input and output; our reading of the
 * GraphBLAS formulations the paper runs (sparsepipe §V-B, ALP/GraphBLAS):
 *   pagerank  mul-add; reads the old rank (residual) and the out-degree
 *             scaling, writes the new rank (sparsepipe Fig. 1, Fig. 2)
 *   bfs       and-or; reads and updates the visited mask (Table III)
 *   sssp      min-add; reads and updates the distances (Table III)
 *   label     mul-add; reads and updates the labels (Table III)
 *   cg        mul-add; reads and updates x, r and p; producer-consumer
 *             reuse only: its dot products need the whole vector before
 *             the next vxm (Table III), so no pair is fused
 * Iterations default to 10 for every app (our choice; the paper gives
 * none). */
static const sp_app sp_apps[] = {
    { "pagerank", 1, 0, 2, 1 }, { "bfs", 1, 1, 1, 1 }, { "sssp", 1, 1, 1, 1 },
    { "label", 1, 0, 1, 1 },    { "cg", 0, 0, 3, 3 },
};
#define SP_NAPPS (sizeof(sp_apps) / sizeof(sp_apps[0]))

/* ------------------------------------------------------------------ */
/* Helpers (the conventions of template_traffic.c). */

/* ------------------------------------------------------------------ */
/* template_options. */

static int read_u64_in(const tessel_yaml_node *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t x = 0;
    if (!v || v->kind != TESSEL_YAML_SCALAR || tessel_yaml_u64(v, &x) != 0 || x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

/* One Sparsepipe template option (app, iterations, buffer sizes, ...) checked and stored. */
static int read_option(const tessel_spec *spec, const tessel_yaml_node *k,
                       const tessel_yaml_node *v, sp_options *o, tessel_diag *diag)
{
    const char *key = k->value;
    const char *val = v && v->kind == TESSEL_YAML_SCALAR ? v->value : NULL;
    const char *shown = val ? val : "(not a scalar)";
    char what[240];
    if (strcmp(key, "app") == 0) {
        for (size_t i = 0; val && i < SP_NAPPS; i++)
            if (strcmp(val, sp_apps[i].name) == 0) {
                o->app = &sp_apps[i];
                return TESSEL_OK;
            }
        snprintf(what, sizeof(what),
                 "app must be pagerank, bfs, sssp, label or cg, not '%s'", shown);
    } else if (strcmp(key, "iterations") == 0) {
        if (read_u64_in(v, 1, UINT64_C(1) << 32, &o->iterations) == 0)
            return TESSEL_OK;
        snprintf(what, sizeof(what), "iterations must be an integer from 1 to 2^32, not '%s'",
                 shown);
    } else if (strcmp(key, "buffer_bytes") == 0) {
        uint64_t b = 0;
        if (val && (strcmp(val, "unbounded") == 0 || (tessel_parse_size(val, &b) == 0 && b > 0))) {
            o->buffer_bytes = b;
            return TESSEL_OK;
        }
        snprintf(what, sizeof(what),
                 "buffer_bytes must be a positive size (e.g. 64MiB) or unbounded, not '%s'", shown);
    } else if (strcmp(key, "block") == 0) {
        if (read_u64_in(v, 1, 65536, &o->block) == 0)
            return TESSEL_OK;
        snprintf(what, sizeof(what),
                 "block must be an integer from 1 (unblocked) to 65536, not '%s'", shown);
    } else if (strcmp(key, "subtensor") == 0) {
        if (read_u64_in(v, 1, UINT64_C(1) << 32, &o->subtensor) == 0)
            return TESSEL_OK;
        snprintf(what, sizeof(what), "subtensor must be an integer from 1 to 2^32, not '%s'",
                 shown);
    } else if (strcmp(key, "frontier") == 0) {
        double f = 0;
        if (val && strcmp(val, "auto") == 0) {
            o->frontier = -1;
            return TESSEL_OK;
        }
        if (val && strcmp(val, "dense") == 0) {
            o->frontier = 1;
            return TESSEL_OK;
        }
        if (val && tessel_yaml_double(v, &f) == 0 && f > 0 && f <= 1) {
            o->frontier = f;
            return TESSEL_OK;
        }
        snprintf(what, sizeof(what),
                 "frontier must be auto, dense or a share in (0, 1], not '%s'", shown);
    } else if (strcmp(key, "baseline") == 0) {
        if (val && (strcmp(val, "stream") == 0 || strcmp(val, "frontier") == 0)) {
            o->baseline_frontier = strcmp(val, "frontier") == 0;
            return TESSEL_OK;
        }
        snprintf(what, sizeof(what), "baseline must be stream or frontier, not '%s'", shown);
    } else {
        /* the keys are the descriptor's (template_desc.c) */
        const char *keys[16];
        size_t nkeys = tpl_option_keys(TESSEL_TEMPLATE_SPARSEPIPE, keys, 16);
        const char *near = tessel_nearest_word(key, keys, nkeys);
        if (near)
            snprintf(what, sizeof(what), "unknown option '%s' (did you mean '%s'?)", key, near);
        else {
            char list[160];
            tpl_option_list(TESSEL_TEMPLATE_SPARSEPIPE, list, sizeof(list));
            if (snprintf(what, sizeof(what), "unknown option '%s' (options: %s)", key, list) < 0)
                what[0] = '\0';
        }
        return tpl_option_error(spec, k, key, what, diag);
    }
    return tpl_option_error(spec, v ? v : k, key, what, diag);
}

static int read_options(const tessel_spec *spec, sp_options *o, tessel_diag *diag)
{
    o->app = &sp_apps[0];
    o->iterations = 10;
    o->buffer_bytes = spec->level[1].capacity; /* 0: unbounded */
    o->block = 16;                             /* sparsepipe §IV-E.2: one-byte in-block coords */
    o->subtensor = 1024;                       /* sparsepipe §V-A: 1024 PEs per core */
    o->frontier = -1;
    o->baseline_frontier = 0;
    const tessel_yaml_node *m = spec->template_.options;
    if (!m || tessel_yaml_is_null(m))
        return TESSEL_OK;
    if (m->kind != TESSEL_YAML_MAPPING)
        return tessel_diag_set(diag, TESSEL_EINVAL, m->file, m->line, m->column,
                               "template_options", "template_options must be a mapping");
    for (size_t i = 0; i < m->count; i++) {
        int rc = read_option(spec, m->keys[i], m->items[i], o, diag);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

/* The stat path counts A's nonzero blocks exactly when they are unions
 * of base tiles (stat_blocks) and its steps of T rows hold whole tiles
 * when T is a multiple of the base edge: gcd(block, T) gives both (the
 * default 128 grid estimated 16 x 16 blocks by uniform placement: +43 %
 * on jagmesh7's metadata). Unblocked A needs no grid of its own. */
uint64_t tpl_sparsepipe_stat_base(const tessel_spec *spec)
{
    sp_options o;
    tessel_diag d;
    if (read_options(spec, &o, &d) || o.block <= 1)
        return 0;
    return tessel_gcd(o.block, o.subtensor);
}

/* ------------------------------------------------------------------ */
/* Exact: A by rows. */

/* The non-empty columns of A: the entries of x that some multiply uses,
 * the only ones the front-end data fetcher reads (sparsepipe §IV-D.2). */
static int count_columns(const tpl_csr_view *A, const tessel_allocator *a, uint64_t *out)
{
    *out = 0;
    unsigned char *seen = tessel_alloc_array(a, A->cols ? A->cols : 1, 1);
    if (!seen)
        return TESSEL_ENOMEM;
    memset(seen, 0, A->cols ? A->cols : 1);
    for (uint64_t p = 0; p < A->nnz; p++)
        if (!seen[A->idx[p]]) {
            seen[A->idx[p]] = 1;
            (*out)++;
        }
    tessel_dealloc(a, seen);
    return TESSEL_OK;
}

/* The exact path: sizes, nonzero blocks, x's needed entries and the OEI
 * hold simulation from A by rows. */
static int analyse_exact(const tessel_spec *spec, const tpl_roles *r,
                         const tessel_workload_data *data, const sp_options *o,
                         const tessel_allocator *a, sp_matrix *m, tessel_diag *diag)
{
    const tessel_tensor *ta = data->tensor[r->ta];
    if (!ta || ta->order != 2)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->workload.pos.file,
                               spec->workload.pos.line, spec->workload.pos.column,
                               "workload.data", "template sparsepipe: %s must be a matrix",
                               spec->workload.tensor[r->ta].name);
    tpl_csr_view A;
    int rc = tpl_csr_of(ta, tpl_mode_of(&spec->workload.tensor[r->ta], r->xi) == 0 ? 0 : 1, a, &A);
    if (rc) {
        tpl_csr_view_free(a, &A);
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    }
    if (A.rows != A.cols) {
        tpl_csr_view_free(a, &A);
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->workload.pos.file,
                               spec->workload.pos.line, spec->workload.pos.column,
                               "workload.data",
                               "template sparsepipe: %s is %llu x %llu; an iterative app needs "
                               "a square matrix (y feeds the next iteration's x)",
                               spec->workload.tensor[r->ta].name, (unsigned long long)A.rows,
                               (unsigned long long)A.cols);
    }
    uint64_t n = A.rows, T = o->subtensor, b = o->block;
    m->n = n;
    m->nnz = A.nnz;
    rc = count_columns(&A, a, &m->x_needed);
    if (rc) {
        tpl_csr_view_free(a, &A);
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    }
    m->steps = n ? (n - 1) / T + 1 : 0;
    for (uint64_t s = 0; s < m->steps; s++) {
        uint64_t hi = (s + 1) * T < n ? (s + 1) * T : n;
        uint64_t len = A.ptr[hi] - A.ptr[s * T];
        if (len > m->max_step_nnz)
            m->max_step_nnz = len;
    }
    sp_sim sim;
    memset(&sim, 0, sizeof(sim));
    uint64_t *stamp = NULL;
    uint64_t nb = n ? (n - 1) / b + 1 : 0;
    if (b > 1) {
        stamp = tessel_alloc_array(a, nb ? nb : 1, sizeof(uint64_t));
        if (!stamp) {
            rc = TESSEL_ENOMEM;
            goto out;
        }
        memset(stamp, 0, (nb ? nb : 1) * sizeof(uint64_t));
        uint64_t blocks = 0;
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t p = A.ptr[i]; p < A.ptr[i + 1]; p++) {
                uint64_t kb = A.idx[p] / b;
                if (stamp[kb] != i / b + 1) {
                    stamp[kb] = i / b + 1;
                    blocks++;
                }
            }
        m->blocks = (double)blocks;
    } else {
        m->blocks = (double)A.nnz;
    }
    uint64_t cap = sp_hold_capacity(spec, o, m, &m->capacity);
    rc = sp_sim_init(a, m->steps + SP_LAG, cap, &sim);
    if (rc)
        goto out;
    for (uint64_t s = 0; s < m->steps; s++) {
        sp_sim_release(&sim, s);
        uint64_t hi = (s + 1) * T < n ? (s + 1) * T : n;
        for (uint64_t q = A.ptr[s * T]; q < A.ptr[hi]; q++) {
            uint64_t p = A.idx[q] / T + SP_LAG;
            if (p > s)
                sp_sim_arrive(&sim, p, SP_ONE);
        }
        sp_sim_evict(&sim, s);
    }
    sp_sim_profile(&sim, m->steps, m);
out:
    sp_sim_free(a, &sim);
    tessel_dealloc(a, stamp);
    tpl_csr_view_free(a, &A);
    if (rc)
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Stat: A's base tile grid. */

static int stat_mismatch(const tessel_spec *spec, tessel_diag *diag, const char *why)
{
    return tessel_diag_set(diag, TESSEL_EINVAL, spec->workload.pos.file, spec->workload.pos.line,
                           spec->workload.pos.column, "workload.einsum",
                           "template sparsepipe: these statistics %s", why);
}

/* The share of a tile's rows (or columns) [lo, hi) that falls in step
 * `step` of T rows. */
static double step_share(uint64_t lo, uint64_t hi, uint64_t T, uint64_t step)
{
    uint64_t a = step * T > lo ? step * T : lo;
    uint64_t b = (step + 1) * T < hi ? (step + 1) * T : hi;
    return b > a ? (double)(b - a) / (double)(hi - lo) : 0;
}

/* Expected nonzero b x b blocks: the grid at the block size when b is a
 * multiple of the base tile; else, within each tile of c nonzeros over
 * nb blocks, nb (1 - (1 - 1/nb)^c) (uniform independent placement). */
static int stat_blocks(const tessel_spec *spec, const tessel_tile_grid *g, uint64_t b,
                       double *out, tessel_diag *diag)
{
    if (b <= 1) {
        *out = (double)g->nnz;
        return TESSEL_OK;
    }
    if (b % g->tile[0] == 0 && b % g->tile[1] == 0) {
        uint64_t tile[2] = { b, b };
        tessel_tile_grid *d = NULL;
        int rc = tessel_tile_grid_derive(g, tile, &d, diag);
        if (rc)
            return rc;
        *out = (double)d->nonempty;
        tessel_tile_grid_free(&d);
        return TESSEL_OK;
    }
    if (g->tile[0] % b != 0 || g->tile[1] % b != 0)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->template_.pos.file,
                               spec->template_.pos.line, spec->template_.pos.column,
                               "template_options.block",
                               "template sparsepipe: the stat path needs a block that divides "
                               "the statistics' base tile (%llu x %llu) or is a multiple of it, "
                               "not %llu",
                               (unsigned long long)g->tile[0], (unsigned long long)g->tile[1],
                               (unsigned long long)b);
    double blocks = 0;
    for (uint64_t t = 0; t < g->nonempty; t++) {
        uint64_t r0 = tessel_tile_grid_group(g, t) * g->tile[0];
        uint64_t c0 = tessel_tile_grid_key(g, t) * g->tile[1];
        uint64_t rows = g->dims[0] - r0 < g->tile[0] ? g->dims[0] - r0 : g->tile[0];
        uint64_t cols = g->dims[1] - c0 < g->tile[1] ? g->dims[1] - c0 : g->tile[1];
        double nb = (double)((rows + b - 1) / b) * (double)((cols + b - 1) / b);
        double c = (double)tessel_tile_grid_count(g, t);
        blocks += nb > 1 ? nb * -expm1(c * log1p(-1 / nb)) : 1;
    }
    *out = blocks;
    return TESSEL_OK;
}

/* Tile t's rows (of i) and columns (of k), whatever the grid's mode order. */
static void tile_ranges(const tessel_tile_grid *g, uint64_t t, int swapped, uint64_t *r0,
                        uint64_t *r1, uint64_t *c0, uint64_t *c1)
{
    uint64_t a0 = tessel_tile_grid_group(g, t) * g->tile[0];
    uint64_t b0 = tessel_tile_grid_key(g, t) * g->tile[1];
    uint64_t a1 = a0 + g->tile[0] < g->dims[0] ? a0 + g->tile[0] : g->dims[0];
    uint64_t b1 = b0 + g->tile[1] < g->dims[1] ? b0 + g->tile[1] : g->dims[1];
    if (swapped) {
        *r0 = b0, *r1 = b1, *c0 = a0, *c1 = a1;
    } else {
        *r0 = a0, *r1 = a1, *c0 = b0, *c1 = b1;
    }
}

/* The tiles by block of rows of i: ord[first[b] .. first[b + 1]) are the
 * tiles of row block b (the grid's own order, or a counting sort by its
 * column block when the grid is stored k-major). */
static int tiles_by_row_block(const tessel_tile_grid *g, int swapped, const tessel_allocator *a,
                              uint64_t **first_out, uint64_t **ord_out)
{
    uint64_t nb = g->extent[swapped ? 1 : 0];
    uint64_t *first = tessel_alloc_array(a, nb + 2, sizeof(uint64_t));
    uint64_t *ord = tessel_alloc_array(a, g->nonempty ? g->nonempty : 1, sizeof(uint64_t));
    if (!first || !ord) {
        tessel_dealloc(a, first);
        tessel_dealloc(a, ord);
        return TESSEL_ENOMEM;
    }
    memset(first, 0, (nb + 2) * sizeof(uint64_t));
    for (uint64_t t = 0; t < g->nonempty; t++)
        first[(swapped ? tessel_tile_grid_key(g, t) : tessel_tile_grid_group(g, t)) + 2]++;
    for (uint64_t b = 0; b < nb; b++)
        first[b + 2] += first[b + 1];
    for (uint64_t t = 0; t < g->nonempty; t++)
        ord[first[(swapped ? tessel_tile_grid_key(g, t) : tessel_tile_grid_group(g, t)) + 1]++] = t;
    *first_out = first;
    *ord_out = ord;
    return TESSEL_OK;
}

/* Step o's arrivals from the tiles overlapping it: each tile's nonzeros
 * spread evenly over its rows and columns. */
static void stat_step(sp_sim *sim, const tessel_tile_grid *g, int swapped, uint64_t T,
                      uint64_t o, const uint64_t *first, const uint64_t *ord)
{
    uint64_t th = g->tile[swapped ? 1 : 0], nb = g->extent[swapped ? 1 : 0];
    uint64_t b_end = ((o + 1) * T + th - 1) / th;
    for (uint64_t b = o * T / th; b < b_end && b < nb; b++)
        for (uint64_t e = first[b]; e < first[b + 1]; e++) {
            uint64_t t = ord[e], r0, r1, c0, c1;
            tile_ranges(g, t, swapped, &r0, &r1, &c0, &c1);
            double fr = step_share(r0, r1, T, o);
            if (fr <= 0)
                continue;
            for (uint64_t pk = c0 / T; pk <= (c1 - 1) / T; pk++) {
                uint64_t p = pk + SP_LAG;
                if (p <= o)
                    continue;
                double c =
                    (double)tessel_tile_grid_count(g, t) * fr * step_share(c0, c1, T, pk) * SP_ONE;
                uint64_t ci = tpl_round_count(c);
                if (ci)
                    sp_sim_arrive(sim, p, ci);
            }
        }
}

/* The stat path: the same figures from the line counts and A's base tile grid. */
static int analyse_stat(const tessel_spec *spec, const tpl_roles *r, const tessel_stat_data *stats,
                        const sp_options *o, const tessel_allocator *a, sp_matrix *m,
                        tessel_diag *diag)
{
    uint64_t n_rows = 0, n_cols = 0;
    int x_rows = -1, x_cols = -1;
    const uint64_t *rows = tessel_stat_data_line_nnz(stats, r->ta, 0, &n_rows, &x_rows);
    const uint64_t *cols = tessel_stat_data_line_nnz(stats, r->ta, 1, &n_cols, &x_cols);
    int idx[2] = { -1, -1 };
    const tessel_tile_grid *g = tessel_stat_data_grid(stats, r->ta, idx);
    if (!rows || !cols || x_rows != (int)r->xi || x_cols != (int)r->xk || !g || g->order != 2)
        return stat_mismatch(spec, diag, "do not hold the matrix of this einsum");
    int swapped = idx[0] == (int)r->xk && idx[1] == (int)r->xi;
    if (!swapped && !(idx[0] == (int)r->xi && idx[1] == (int)r->xk))
        return stat_mismatch(spec, diag, "hold a tile grid of another einsum");
    if (n_rows != n_cols)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->workload.pos.file,
                               spec->workload.pos.line, spec->workload.pos.column,
                               "workload.data",
                               "template sparsepipe: %s is %llu x %llu; an iterative app needs "
                               "a square matrix (y feeds the next iteration's x)",
                               spec->workload.tensor[r->ta].name, (unsigned long long)n_rows,
                               (unsigned long long)n_cols);
    uint64_t n = n_rows, T = o->subtensor;
    m->n = n;
    m->nnz = 0;
    for (uint64_t i = 0; i < n; i++) {
        m->nnz += rows[i];
        m->x_needed += cols[i] > 0; /* exact from the line counts */
    }
    m->steps = n ? (n - 1) / T + 1 : 0;
    for (uint64_t s = 0, i = 0; s < m->steps; s++) {
        uint64_t len = 0;
        for (; i < n && i < (s + 1) * T; i++)
            len += rows[i];
        if (len > m->max_step_nnz)
            m->max_step_nnz = len;
    }
    int rc = stat_blocks(spec, g, o->block, &m->blocks, diag);
    if (rc)
        return rc;
    uint64_t cap = sp_hold_capacity(spec, o, m, &m->capacity);
    sp_sim sim;
    memset(&sim, 0, sizeof(sim));
    uint64_t *first = NULL, *ord = NULL;
    rc = tiles_by_row_block(g, swapped, a, &first, &ord);
    if (!rc)
        rc = sp_sim_init(a, m->steps + SP_LAG, cap, &sim);
    if (!rc) {
        for (uint64_t s = 0; s < m->steps; s++) {
            sp_sim_release(&sim, s);
            stat_step(&sim, g, swapped, T, s, first, ord);
            sp_sim_evict(&sim, s);
        }
        sp_sim_profile(&sim, m->steps, m);
    }
    sp_sim_free(a, &sim);
    tessel_dealloc(a, first);
    tessel_dealloc(a, ord);
    if (rc)
        return tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Traffic. */

typedef struct sp_bytes {
    uint64_t data, meta;
} sp_bytes;

static sp_bytes add_bytes(sp_bytes x, sp_bytes y)
{
    return (sp_bytes){ tpl_sat_add(x.data, y.data), tpl_sat_add(x.meta, y.meta) };
}

static sp_bytes times(sp_bytes x, uint64_t k)
{
    return (sp_bytes){ tpl_sat_mul(x.data, k), tpl_sat_mul(x.meta, k) };
}

static sp_bytes scale(sp_bytes x, double f)
{
    return (sp_bytes){ tpl_round_count((double)x.data * f), tpl_round_count((double)x.meta * f) };
}

static uint64_t total_of(sp_bytes x)
{
    return tpl_sat_add(x.data, x.meta);
}

/* A read once in its format (see the top comment). */
static sp_bytes a_pass(const tessel_spec_level *lv, const sp_matrix *m, uint64_t b)
{
    sp_bytes x = { tpl_bytes(m->nnz, lv->value_bits), 0 };
    if (b <= 1) {
        x.meta =
            tpl_sat_add(tpl_bytes(m->nnz, lv->coord_bits), tpl_bytes(m->n + 1, lv->offset_bits));
        return x;
    }
    uint64_t block_rows = m->n ? (m->n - 1) / b + 1 : 0;
    x.meta = tpl_sat_add(
        tpl_sat_add(tpl_bytes(m->nnz, sp_coord_bits_in_block(lv, b)),
                    tpl_bytes(tpl_round_count(m->blocks), lv->coord_bits + lv->offset_bits)),
        tpl_bytes(block_rows + 1, lv->offset_bits));
    return x;
}

/* One tensor's transfers at one level. */
static void put(tessel_result *r, unsigned l, unsigned t, uint64_t fills, uint64_t updates,
                uint64_t writebacks, sp_bytes in, sp_bytes outb)
{
    tessel_traffic *tr = &r->traffic[l][t];
    tr->fills = fills;
    tr->updates = updates;
    tr->writebacks = writebacks;
    tr->in_data = in.data;
    tr->in_metadata = in.meta;
    tr->out_data = outb.data;
    tr->out_metadata = outb.meta;
    tr->algorithmic = tpl_sat_add(fills, updates);
}

/* DRAM traffic per tensor over the N iterations, and the baseline's, into *out and *f. */
static void traffic(const tessel_spec *spec, const tpl_roles *r, const sp_options *o,
                    const sp_matrix *m, tessel_result *out, tessel_sparsepipe_figures *f)
{
    const tessel_spec_level *lv = &spec->level[1];
    const sp_app *app = o->app;
    uint64_t N = o->iterations, n = m->n, S = m->steps;
    double share = o->frontier >= 0 ? o->frontier : app->sparse_frontier ? 1.0 / (double)N : 1;
    uint64_t pairs = app->oei ? N / 2 : 0, singles = N - 2 * pairs, passes = pairs + singles;
    uint64_t active = share >= 1 ? n : tpl_round_count(share * (double)n);
    /* the frontier vector: dense values, or value + coordinate per active entry */
    sp_bytes vec = share >= 1 ? (sp_bytes){ tpl_bytes(n, lv->value_bits), 0 }
                              : (sp_bytes){ tpl_bytes(active, lv->value_bits),
                                            tpl_bytes(active, lv->coord_bits) };
    /* the vxm's input as read: only the entries of the non-empty columns of
     * A, which the front-end data fetcher finds by intersecting the loaded
     * coordinates (sparsepipe §IV-D.2: "retrieves the necessary vector
     * data"); the vectors written and the e-wise ones stay whole */
    uint64_t used = share >= 1 ? m->x_needed : tpl_round_count(share * (double)m->x_needed);
    sp_bytes vec_in = share >= 1 ? (sp_bytes){ tpl_bytes(used, lv->value_bits), 0 }
                                 : (sp_bytes){ tpl_bytes(used, lv->value_bits),
                                               tpl_bytes(used, lv->coord_bits) };
    sp_bytes dense = { tpl_bytes(n, lv->value_bits), 0 };
    sp_bytes ew_r = times(dense, app->reads), ew_w = times(dense, app->writes);
    sp_bytes pass = a_pass(lv, m, o->block);
    double refetch_share = m->nnz ? m->refetched / (double)m->nnz : 0;
    sp_bytes refetch = scale(pass, refetch_share * share);
    /* DRAM bytes per tensor over the N iterations */
    sp_bytes a_in = add_bytes(times(pass, passes), times(refetch, pairs));
    sp_bytes x_in = times(vec_in, passes);
    uint64_t ewise_iters = tpl_sat_add(tpl_sat_mul(2, pairs), singles); /* = N */
    sp_bytes y_in = times(ew_r, ewise_iters);
    sp_bytes y_out = add_bytes(times(vec, passes), times(ew_w, ewise_iters));
    out->macs = tpl_sat_add(tpl_sat_mul(passes, m->nnz),
                            tpl_sat_mul(pairs, tpl_round_count(share * (double)m->nnz)));
    out->output_nnz = active;
    for (unsigned l = 1; l < out->nlevels; l++) {
        put(out, l, r->ta, tpl_sat_mul(passes, S), 0, 0, a_in, (sp_bytes){ 0, 0 });
        put(out, l, r->tb, tpl_sat_mul(passes, S), 0, 0, x_in, (sp_bytes){ 0, 0 });
        put(out, l, 0, 0, tpl_sat_mul(tpl_sat_mul(ewise_iters, app->reads), S),
            tpl_sat_mul(tpl_sat_add(passes, tpl_sat_mul(ewise_iters, app->writes)), S), y_in,
            y_out);
        out->effectual_tiles[l] = tpl_sat_mul(passes, S);
    }
    out->compulsory_bytes = tpl_sat_add(total_of(pass), tpl_sat_mul(2, total_of(vec)));
    tpl_finish(spec, out);

    /* the baseline: every operator reads its inputs and writes its outputs */
    sp_bytes base_a = o->baseline_frontier ? scale(pass, share) : pass;
    uint64_t x_vec = tpl_sat_add(total_of(vec_in), total_of(vec)); /* x read, x' written */
    uint64_t y_vec = tpl_sat_mul(2, total_of(vec)); /* y written and read back */
    uint64_t base_iter = tpl_sat_add(tpl_sat_add(total_of(base_a), tpl_sat_add(x_vec, y_vec)),
                                     tpl_sat_add(total_of(ew_r), total_of(ew_w)));
    uint64_t vec_pair =
        tpl_sat_add(x_vec, tpl_sat_mul(2, tpl_sat_add(total_of(ew_r), total_of(ew_w))));
    uint64_t vec_single = tpl_sat_add(x_vec, tpl_sat_add(total_of(ew_r), total_of(ew_w)));
    memset(f, 0, sizeof(*f));
    snprintf(f->app, sizeof(f->app), "%s", app->name);
    f->iterations = N;
    f->pairs = pairs;
    f->rows = n;
    f->nnz = m->nnz;
    f->subtensor = o->subtensor;
    f->steps = S;
    f->block = o->block;
    f->nonzero_blocks = m->blocks;
    f->frontier = share;
    f->hold_max = m->hold_max;
    f->hold_avg = m->hold_avg;
    f->hold_capacity = m->capacity;
    f->refetched = m->refetched;
    f->onchip_fraction = app->oei && pairs && m->nnz ? 1 - refetch_share : 0;
    f->a_pass_bytes = total_of(pass);
    f->pair_bytes =
        pairs ? tpl_sat_add(tpl_sat_add(total_of(pass), total_of(refetch)), vec_pair) : 0;
    f->single_bytes = tpl_sat_add(total_of(pass), vec_single);
    f->total_bytes = out->dram_bytes;
    f->baseline_iteration_bytes = base_iter;
    f->baseline_total_bytes = tpl_sat_mul(base_iter, N);
    f->saving = f->baseline_total_bytes
                    ? 1 - (double)f->total_bytes / (double)f->baseline_total_bytes
                    : 0;
}

static int check_range(const tessel_spec *spec, const tessel_result *r, tessel_diag *diag)
{
    if (r->dram_bytes == UINT64_MAX || r->macs == UINT64_MAX || r->compulsory_bytes == UINT64_MAX)
        return tessel_diag_set(diag, TESSEL_ERANGE, spec->path, 0, 0, NULL,
                               "template sparsepipe: a total reaches 2^64 and would overflow");
    return TESSEL_OK;
}

int tessel_template_sparsepipe(const tessel_spec *spec, const tessel_workload_data *data,
                               const tessel_stat_data *stats, const tessel_allocator *a,
                               tessel_result *out, tessel_sparsepipe_figures *fig,
                               tessel_diag *diag)
{
    double start = tpl_now();
    tessel_sparsepipe_figures own;
    if (!fig)
        fig = &own;
    memset(fig, 0, sizeof(*fig));
    memset(out, 0, sizeof(*out));
    out->nlevels = spec->nlevels;
    out->ntensors = spec->workload.ntensors;
    snprintf(out->estimator, sizeof(out->estimator), "%s", data ? "exact" : "stat");
    if (tessel_template_of(spec) != TESSEL_TEMPLATE_SPARSEPIPE)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "template",
                               "the spec's template is '%s', not sparsepipe",
                               spec->template_.name);
    if (spec->nlevels < 2)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "architecture.levels",
                               "template sparsepipe needs a backing store and a buffer");
    tpl_roles roles;
    int rc = tpl_roles_of(spec, &roles, diag);
    if (!rc && !roles.spmv)
        rc = tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->workload.pos.file,
                             spec->workload.pos.line, spec->workload.pos.column,
                             "workload.einsum",
                             "template sparsepipe models iterative SpMV (y[i] = A[i,k] * x[k]); "
                             "'%s' is not one",
                             spec->workload.einsum ? spec->workload.einsum : "");
    sp_options opt;
    if (!rc)
        rc = read_options(spec, &opt, diag);
    if (rc)
        return rc;
    if (!data && !stats)
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, NULL,
                               "template sparsepipe needs the data or its statistics");
    sp_matrix m;
    memset(&m, 0, sizeof(m));
    rc = data ? analyse_exact(spec, &roles, data, &opt, a, &m, diag)
              : analyse_stat(spec, &roles, stats, &opt, a, &m, diag);
    if (rc)
        return rc;
    traffic(spec, &roles, &opt, &m, out, fig);
    rc = check_range(spec, out, diag);
    out->seconds = tpl_now() - start;
    if (!data)
        out->stats_seconds = tessel_stat_data_seconds(stats);
    return rc;
}

/* Closed sums for MTTKRP Y[i,r] = T[i,j,k] B[j,r] C[k,r] at one buffer
 * level (docs/models/stat.md, "MTTKRP in closed form"), in place of the
 * walk of stat_walk.c for the loop orders whose output loops i and r are
 * outside the reduction loops j and k (engine indices 0 i, 1 r, 2 j,
 * 3 k; a loop of one tile is no loop).
 *
 * In those orders the effectual tile iterations come in blocks, one per
 * output tile (ti, tr): the non-empty tiles of T's tile row ti, in the
 * inner order (j then k, or k then j), kept where B(tj, tr) and C(tk, tr)
 * are non-empty. So the iterations are enumerated block by block from T's
 * grid, already in the walk's order: no loop keys are generated, sorted or
 * decoded, and each output tile is one run (rule 2): one write-back of its
 * final contents, no update. Inputs follow rule 1 as in the walk: a fill
 * where the tile differs from the resident one, a reuse otherwise (rule 4:
 * an overbooked tile's excess streams again on each reuse). Every count is
 * the walk's integer sum over the same iterations, so the results equal
 * the walk's, and -e exact's with the whole output in the sample. */
#include <string.h>

#include "stat_mttkrp.h"

/* Position of engine index x among boundary bd's loops of more than one
 * tile, -1 when x has none (it takes one value: outermost). */
static int looped_position(const boundary *bd, unsigned x)
{
    int p = 0;
    for (unsigned d = 0; d < bd->ndigits; d++) {
        if (bd->d[d].radix <= 1)
            continue;
        if (bd->d[d].x == x)
            return p;
        p++;
    }
    return -1;
}

/* Whether some final output tile outgrows Y's partition (rule 4): the
 * walk then prices spills per update step, which these sums do not. */
static int output_spills(const engine *e, const boundary *bd)
{
    uint64_t part = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    const out_table *t = &bd->table[bd->ntables - 1];
    for (uint64_t o = 0; part && o < t->nout; o++) {
        uint64_t data, meta;
        exact_output_bytes(bd, t->key[o], UINT64_MAX, NULL, &data, &meta);
        if (data + meta > part)
            return 1;
    }
    return 0;
}

int stat_mttkrp_applies(const engine *e, const boundary *bd)
{
    if (e->kind != TESSEL_WORKLOAD_MTTKRP || e->nin != 3 || e->nlev != 2 || bd->b != 1 ||
        e->inspill || e->outer_any[1] || bd->by_rows || bd->spill_known || bd->ntables < 1)
        return 0;
    if (!exact_all_effectual(e, bd))
        return 0; /* gated or non-skipping inputs walk iterations with an empty partner */
    int pos[NX];
    for (unsigned x = 0; x < NX; x++)
        pos[x] = looped_position(bd, x);
    for (unsigned o = 0; o < 2; o++)
        for (unsigned q = 2; q < 4; q++)
            if (pos[o] >= 0 && pos[q] >= 0 && pos[o] > pos[q])
                return 0;
    return !output_spills(e, bd);
}

/* The state carried from iteration to iteration, as the walk's. */
typedef struct mk_state {
    engine *e;
    const boundary *bd;
    exact_resident res[NIN];
    uint64_t part[NIN], part_z;
    unsigned coord_bits;
} mk_state;

/* Rule 1 (and rule 4's overbooked excess) for input i's tile idx of nnz
 * nonzeros in one effectual iteration, as walk_inputs (exact_walk.c). */
static void use_input(mk_state *s, unsigned i, uint64_t idx, uint64_t nnz)
{
    engine *e = s->e;
    tessel_result *r = e->res;
    tessel_traffic *tr = &r->traffic[s->bd->b][e->in[i].spec_tensor];
    exact_resident *res = &s->res[i];
    uint64_t part = s->part[i];
    if (idx != res->idx) {
        const uint64_t *occ =
            s->bd->occ[i] ? &s->bd->occ[i][idx * s->bd->occ_stride[i]] : NULL;
        res->idx = idx;
        res->nnz = nnz;
        exact_tile_bytes(&s->bd->cost[i], nnz, occ, &res->data, &res->meta);
        tr->fills++;
        tr->in_data += res->data;
        tr->in_metadata += res->meta;
        exact_note_tile(tr, part, res->data + res->meta);
        exact_note_network(e->spec, s->bd->b, tr, res->data);
        if (part && res->data + res->meta > part) {
            r->overflow_tiles++;
            tr->overflow_tiles++;
        }
        return;
    }
    uint64_t total = res->data + res->meta;
    if (part && total > part) {
        uint64_t extra = total - part;
        uint64_t meta = (uint64_t)((double)extra * (double)res->meta / (double)total);
        tr->in_data += extra - meta;
        tr->in_metadata += meta;
        tr->bumped_bytes += extra;
        tr->overflow_bytes += extra;
    }
}

/* One effectual iteration at tile coordinates c with input tiles idx[]:
 * the fills, then the compute's reads at the innermost level. */
static void iterate(mk_state *s, const uint64_t *c, const uint64_t *idx)
{
    engine *e = s->e;
    unsigned b = s->bd->b;
    uint64_t nnz[NIN];
    for (unsigned i = 0; i < NIN; i++)
        nnz[i] = tessel_tile_grid_count(s->bd->grid[i], idx[i]);
    for (unsigned i = 0; i < NIN; i++)
        use_input(s, i, idx[i], nnz[i]);
    e->res->effectual_tiles[b]++;
    for (unsigned i = 0; i < NIN; i++) { /* b is the innermost level (nlev 2) */
        e->res->intersections += nnz[i];
        if (exact_scalar_on(e, i))
            exact_scalar_note(e, i, c, nnz[i], s->res[i].meta);
        else
            e->res->traffic[b][e->in[i].spec_tensor].child_read_metadata +=
                nnz[i] * s->coord_bits / 8;
    }
    if (e->spec->compute.optimization)
        exact_compute_note(e, c, nnz);
}

/* The one run of output tile c[0], c[1] ends at reduction coordinates c:
 * its write-back (rule 2), as price_output (exact_walk.c). */
static void write_back(mk_state *s, const uint64_t *c)
{
    const boundary *bd = s->bd;
    tessel_traffic *tz = &s->e->res->traffic[bd->b][0];
    uint64_t cursors[3] = { 0, 0, 0 }, data, meta;
    exact_output_bytes(bd, exact_tile_key(bd, &s->e->out, c), exact_reduction_key(s->e, bd, c),
                       cursors, &data, &meta);
    tz->writebacks++;
    tz->out_data += data;
    tz->out_metadata += meta;
    exact_note_tile(tz, s->part_z, data + meta);
    if (s->part_z && data + meta > s->part_z)
        tz->overflow_tiles++;
}

/* T's non-empty tiles as packed (ti, inner, innermost) coordinates in the
 * walk's order: (j, k) or, kj set, (k, j) inside each tile row. */
static int t_order(const engine *e, const boundary *bd, int kj, uint64_t **out)
{
    const tessel_tile_grid *g = bd->grid[0];
    uint64_t n = g->nonempty, nj = bd->ntiles[2], nk = bd->ntiles[3];
    uint64_t *v = tessel_alloc_array(e->alloc, n ? n : 1, sizeof(uint64_t));
    if (!v)
        return TESSEL_ENOMEM;
    uint64_t row = 0;
    for (uint64_t t = 0; t < n; t++) {
        row = tessel_tile_grid_group_from(g, t, row);
        uint64_t key = tessel_tile_grid_key(g, t), tj = key / nk, tk = key % nk;
        v[t] = kj ? (row * nk + tk) * nj + tj : (row * nj + tj) * nk + tk;
    }
    if (kj) /* the grid's own order is (ti, tj, tk) */
        tessel_sort_u64_inplace(v, n, n ? bd->ntiles[0] * nj * nk - 1 : 0);
    *out = v;
    return TESSEL_OK;
}

/* Block (ti, tr): T's packed tiles v[p0, p1) of row ti, kept where B and
 * C have tiles at (tj, tr) and (tk, tr), then the output's write-back. */
static void block(mk_state *s, const uint64_t *v, uint64_t p0, uint64_t p1, uint64_t tr, int kj)
{
    engine *e = s->e;
    const boundary *bd = s->bd;
    uint64_t nj = bd->ntiles[2], nk = bd->ntiles[3], last[NX];
    int any = 0;
    for (uint64_t p = p0; p < p1; p++) {
        uint64_t c[NX], idx[NIN], inner = kj ? nj : nk, mid = kj ? nk : nj;
        c[0] = v[p] / inner / mid;
        c[1] = tr;
        c[kj ? 3 : 2] = v[p] / inner % mid;
        c[kj ? 2 : 3] = v[p] % inner;
        idx[1] = exact_tile_index(e, bd, 1, c);
        idx[2] = idx[1] == UINT64_MAX ? UINT64_MAX : exact_tile_index(e, bd, 2, c);
        if (idx[2] == UINT64_MAX)
            continue;
        idx[0] = exact_tile_index(e, bd, 0, c);
        iterate(s, c, idx);
        memcpy(last, c, sizeof(last));
        any = 1;
    }
    if (any)
        write_back(s, last);
}

int stat_mttkrp_sums(engine *e, const boundary *bd)
{
    int kj = looped_position(bd, 3) >= 0 && looped_position(bd, 2) >= 0 &&
             looped_position(bd, 3) < looped_position(bd, 2);
    int r_outer = looped_position(bd, 1) >= 0 && looped_position(bd, 0) >= 0 &&
                  looped_position(bd, 1) < looped_position(bd, 0);
    uint64_t *v = NULL;
    if (t_order(e, bd, kj, &v))
        return exact_oom_step(e, "ordering the 3-tensor's tiles",
                              bd->grid[0]->nonempty * sizeof(uint64_t));
    mk_state s;
    memset(&s, 0, sizeof(s));
    s.e = e;
    s.bd = bd;
    s.coord_bits = e->spec->level[bd->b].coord_bits;
    for (unsigned i = 0; i < NIN; i++) {
        s.res[i].idx = UINT64_MAX;
        s.part[i] = exact_partition_bytes(e, bd->b, e->in[i].spec_tensor);
    }
    s.part_z = exact_partition_bytes(e, bd->b, e->out.spec_tensor);
    const tessel_tile_grid *g = bd->grid[0];
    uint64_t nr = bd->ntiles[1], nrows = g->extent[0];
    for (uint64_t outer = 0; outer < (r_outer ? nr : nrows); outer++)
        for (uint64_t in = 0; in < (r_outer ? nrows : nr); in++) {
            uint64_t ti = r_outer ? in : outer, tr = r_outer ? outer : in;
            block(&s, v, tessel_tile_grid_row_begin(g, ti), tessel_tile_grid_row_begin(g, ti + 1),
                  tr, kj);
        }
    tessel_dealloc(e->alloc, v);
    return TESSEL_OK;
}

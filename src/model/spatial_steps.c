/* A spatial split's intersection steps per work unit (docs/models/spatial.md,
 * issue 22). Inside its unit an instance walks the child tiles in time; for
 * every child tile whose operand tiles are both non-empty (an effectual
 * iteration) its intersection unit merges the two tiles' coordinates, one
 * step per coordinate scanned: nnz(A tile) + nnz(B tile) steps, as the
 * `intersections` column counts per effectual innermost tile
 * (docs/outputs.md). A serial merger consumes one coordinate a cycle (gamma
 * §3: merge units that "consume one input per cycle"; ExTensor's serial
 * skip-based unit, drt §6.4); the spec's intersect.step_cycles prices a step. */
#include <stdlib.h>
#include <string.h>

#include "spatial_internal.h"

uint64_t sp_child_of(const sp_axis *ax, uint64_t x)
{
    if (ax->index < 0)
        return 0;
    return (x / ax->edge) * ax->ctiles + (x % ax->edge) / ax->cedge;
}

uint64_t sp_children(const sp_axis *ax)
{
    return ax->index < 0 ? 1 : ax->tiles * ax->ctiles;
}

/* Tensor t's non-empty child tiles along (ax_k, ax_o), each as an entry of
 * key k_child * sp_children(ax_o) + o_child and macs = its nonzeros, sorted. */
static int tile_counts(const tessel_spec *spec, unsigned t, const tessel_tensor *x,
                       const sp_axis *ax_k, const sp_axis *ax_o, sp_map *m, uint64_t *n)
{
    uint64_t no = sp_children(ax_o);
    for (uint64_t r = 0; r < x->dims[0]; r++)
        for (uint64_t e = x->ptr[r]; e < x->ptr[r + 1]; e++) {
            uint64_t ck, co;
            sp_coords(spec, t, x, r, e, ax_k->index, ax_o->index, &ck, &co);
            int rc = sp_map_add(m, sp_child_of(ax_k, ck) * no + sp_child_of(ax_o, co), 1, 0);
            if (rc)
                return rc;
        }
    *n = sp_map_sorted(m);
    return TESSEL_OK;
}

/* The (level tile, unit) key of the child tile c[] (i, k, j child numbers). */
static uint64_t unit_key(const sp_axis ax[3], const uint64_t c[3], uint64_t per_tile)
{
    uint64_t t[3], u[3];
    for (unsigned d = 0; d < 3; d++) {
        t[d] = ax[d].index < 0 ? 0 : c[d] / ax[d].ctiles;
        u[d] = ax[d].factor > 1 ? c[d] % ax[d].ctiles : 0;
    }
    uint64_t tile = (t[0] * ax[1].tiles + t[1]) * ax[2].tiles + t[2];
    return tile * per_tile + (u[0] * ax[1].units + u[1]) * ax[2].units + u[2];
}

/* The length of k child gk (cut at its level tile and the extent). */
static double k_length(const sp_axis *k, uint64_t gk)
{
    uint64_t t = gk / k->ctiles, start = t * k->edge + (gk % k->ctiles) * k->cedge;
    uint64_t end = start + k->cedge, tend = t * k->edge + k->edge;
    end = end < tend ? end : tend;
    end = end < k->extent ? end : k->extent;
    return end > start ? (double)(end - start) : 1.0;
}

int sp_pair_up(const sp_entry *A, uint64_t na, const sp_entry *B, uint64_t nb,
               const sp_axis ax[3], uint64_t per_tile, int estimate, int steps, sp_map *m)
{
    uint64_t ni = sp_children(&ax[0]), nj = sp_children(&ax[2]);
    uint64_t p = 0, q = 0;
    while (p < na && q < nb) {
        uint64_t ka = A[p].key / ni, kb = B[q].key / nj;
        uint64_t pe = p, qe = q;
        while (pe < na && A[pe].key / ni == ka)
            pe++;
        while (qe < nb && B[qe].key / nj == kb)
            qe++;
        if (ka == kb)
            for (uint64_t x = p; x < pe; x++)
                for (uint64_t y = q; y < qe; y++) {
                    uint64_t c[3] = { A[x].key % ni, ka, B[y].key % nj };
                    uint64_t key = unit_key(ax, c, per_tile);
                    int rc = sp_map_add(m, key, 0, steps ? A[x].macs + B[y].macs : 0);
                    if (!rc && estimate)
                        rc = sp_map_add_expected(
                            m, key, (double)A[x].macs * (double)B[y].macs / k_length(&ax[1], ka));
                    if (rc)
                        return rc;
                }
        if (ka <= kb)
            p = pe;
        if (kb <= ka)
            q = qe;
    }
    return TESSEL_OK;
}

int sp_steps_add(const tessel_spec *spec, const tessel_workload_data *data, unsigned ta,
                 unsigned tb, const sp_axis ax[3], uint64_t per_tile, const tessel_allocator *a,
                 sp_map *m)
{
    if (!sp_mul63(sp_children(&ax[1]), sp_children(&ax[0])) ||
        !sp_mul63(sp_children(&ax[1]), sp_children(&ax[2])))
        return TESSEL_ERANGE;
    sp_map ma = { a, NULL, 0, 0, 0 }, mb = { a, NULL, 0, 0, 0 };
    uint64_t na = 0, nb = 0;
    int rc = tile_counts(spec, ta, data->tensor[ta], &ax[1], &ax[0], &ma, &na);
    if (!rc)
        rc = tile_counts(spec, tb, data->tensor[tb], &ax[1], &ax[2], &mb, &nb);
    if (!rc)
        rc = sp_pair_up(ma.slot, na, mb.slot, nb, ax, per_tile, 0, 1, m);
    tessel_dealloc(a, ma.slot);
    tessel_dealloc(a, mb.slot);
    return rc;
}

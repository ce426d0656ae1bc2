/* The output side of the stat estimator's closed form at nested
 * boundaries (stat_nested.c has the inputs and the entry point): output
 * pairs visited, their runs per coarse k block, the write-backs and the
 * nonzeros they carry, from A's and B's tile grids and the output sample. */
#include <math.h>
#include <string.h>

#include "stat_closed.h"
#include "stat_nested.h"

static int bitsets_init(nested *n)
{
    const tessel_allocator *a = n->e->alloc;
    n->words = (n->ext_k + 63) / 64;
    n->arows = stat_zeroed(a, n->ext_i * n->words, sizeof(uint64_t));
    n->bcols = stat_zeroed(a, n->ext_j * n->words, sizeof(uint64_t));
    if (!n->arows || !n->bcols)
        return TESSEL_ENOMEM;
    for (uint64_t i = 0; i < n->a.rows; i++)
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t];
            n->arows[i * n->words + k / 64] |= UINT64_C(1) << (k % 64);
        }
    for (uint64_t k = 0; k < n->b.rows && k < n->ext_k; k++)
        for (uint64_t t = n->b.ptr[k]; t < n->b.ptr[k + 1]; t++) {
            uint64_t j = n->b.col[t];
            n->bcols[j * n->words + k / 64] |= UINT64_C(1) << (k % 64);
        }
    return TESSEL_OK;
}

/* Effectual coarse k blocks of output pair (i, j), ascending, into blk;
 * returns how many. One step per block, not per effectual K. */
static uint64_t pair_blocks(const nested *n, uint64_t i, uint64_t j, uint64_t *blk)
{
    const uint64_t *x = &n->arows[i * n->words], *y = &n->bcols[j * n->words];
    uint64_t cnt = 0, k = stat_nested_next_common(x, y, n->words, 0);
    while (k != UINT64_MAX) {
        uint64_t b = n->cf_k == UINT64_MAX ? 0 : k / n->cf_k;
        blk[cnt++] = b;
        if (n->cf_k == UINT64_MAX || (b + 1) * n->cf_k >= n->ext_k)
            break;
        k = stat_nested_next_common(x, y, n->words, (b + 1) * n->cf_k);
    }
    return cnt;
}

/* Output pairs visited and their runs, without the bitsets: per A tile
 * row and coarse k block, the output columns are the union of the B tile
 * rows met, taken as independent (as stat_estimate_pairs). */
static void estimate_runs(const nested *n, double *pairs, double *runs)
{
    double J = (double)n->ext_j;
    *pairs = *runs = 0;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        double empty = 1, sum = 0, bempty = 1, bsum = 0;
        uint64_t blk = UINT64_MAX;
        for (uint64_t t = n->a.ptr[i]; t < n->a.ptr[i + 1]; t++) {
            uint64_t k = n->a.col[t], b = n->cf_k == UINT64_MAX ? 0 : k / n->cf_k;
            double r = (double)n->n_b[k];
            if (b != blk) {
                double u = J * (1 - bempty);
                *runs += u < bsum ? u : bsum;
                bempty = 1, bsum = 0, blk = b;
            }
            empty *= 1 - r / J;
            sum += r;
            bempty *= 1 - r / J;
            bsum += r;
        }
        double u = J * (1 - bempty);
        *runs += u < bsum ? u : bsum;
        u = J * (1 - empty);
        *pairs += u < sum ? u : sum;
    }
}

static void walk_runs(const nested *n, uint64_t *blk, double *pairs, double *runs)
{
    *pairs = *runs = 0;
    for (uint64_t i = 0; i < n->a.rows; i++) {
        if (n->a.ptr[i] == n->a.ptr[i + 1])
            continue;
        for (uint64_t j = 0; j < n->ext_j; j++) {
            uint64_t c = pair_blocks(n, i, j, blk);
            *pairs += c ? 1 : 0;
            *runs += (double)c;
        }
    }
}

/* Runs of its tile from the block of its first multiply on, summed over
 * the sample's nonzeros (weighted): the nonzeros the write-backs carry. */
static double sample_written(const nested *n, const stat_output_sample *s, uint64_t *blk)
{
    uint64_t fi = n->ea[0] / s->base[0], fj = n->eb[1] / s->base[1], fk = n->ea[1] / s->base[2];
    uint64_t last_i = UINT64_MAX, last_j = UINT64_MAX, cnt = 0;
    double sum = 0;
    for (uint64_t g = 0; g < s->ngroups; g++) {
        uint64_t c = s->gstart[g];
        uint64_t i = s->ci[c] / fi, j = s->cj[c] / fj;
        if (i >= n->ext_i || j >= n->ext_j)
            continue;
        if (i != last_i || j != last_j)
            cnt = pair_blocks(n, i, j, blk);
        last_i = i, last_j = j;
        for (; c < s->gstart[g + 1]; c++) {
            uint64_t k = s->ck[c] / fk;
            uint64_t b = n->cf_k == UINT64_MAX ? 0 : k / n->cf_k;
            uint64_t lo = 0, hi = cnt; /* first block >= b */
            while (lo < hi) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (blk[mid] < b)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            sum += (double)(cnt - lo) * s->weight[c];
        }
    }
    return sum;
}

/* Output tiles are priced affinely between an empty and a full tile, as
 * stat_spmspm.c's output (exact for the single-name formats). */
static void output_traffic(nested *n, const stat_output_sample *s, stat_outcome *o)
{
    engine *e = n->e;
    tile_cost cz;
    exact_tile_cost_init(e, &n->bd, &e->out, &cz);
    uint64_t cells = n->bd.tile[XI] * n->bd.tile[XJ], d0, m0, d1, m1;
    exact_tile_bytes(&cz, 0, NULL, &d0, &m0);
    exact_tile_bytes(&cz, cells ? cells : 1, NULL, &d1, &m1);
    double per_d = ((double)d1 - (double)d0) / (double)(cells ? cells : 1);
    double per_m = ((double)m1 - (double)m0) / (double)(cells ? cells : 1);
    double pairs = o->out_pairs, runs = o->z_writebacks, nnz = s->nnz, written = o->out_nnz;
    if (written < nnz)
        written = nnz;
    double read = written - nnz;
    o->z_updates = runs - pairs;
    o->z_out_data = written * per_d;
    o->z_out_meta = runs * (double)m0 + written * per_m;
    o->z_in_data = read * per_d;
    o->z_in_meta = o->z_updates * (double)m0 + read * per_m;
    o->out_nnz = nnz;
}

int stat_nested_output(nested *n, const stat_output_sample *s, stat_outcome *o)
{
    long double cost = (long double)n->ext_i * (long double)n->ext_j *
                       (long double)((n->ext_k + 63) / 64);
    double pairs, runs, written;
    if (cost <= (long double)NESTED_BITSET_BUDGET) {
        uint64_t *blk = tessel_alloc_array(n->e->alloc, n->ext_k + 1, sizeof(uint64_t));
        if (!blk || bitsets_init(n)) {
            tessel_dealloc(n->e->alloc, blk);
            return TESSEL_ENOMEM;
        }
        walk_runs(n, blk, &pairs, &runs);
        written = sample_written(n, s, blk);
        tessel_dealloc(n->e->alloc, blk);
    } else {
        /* linear growth of a pair's partial tile over its runs (eq. 19) */
        estimate_runs(n, &pairs, &runs);
        written = pairs > 0 ? s->nnz * (runs / pairs + 1) / 2 : s->nnz;
    }
    o->out_pairs = pairs;
    o->z_writebacks = runs;
    o->out_nnz = written; /* output_traffic sets the nonzeros */
    output_traffic(n, s, o);
    return TESSEL_OK;
}


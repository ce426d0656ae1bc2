/* Spatial mapping (docs/models/spatial.md, issue 22): a level whose mapping
 * has `spatial: {i: 8, j: 16}` deals the work of each of its tiles to its
 * child's instances under a distribution policy. From the data: every
 * instance's work per tile of the level (its effectual MACs, and with an
 * intersection unit its intersection steps, spatial_steps.c), the busiest
 * instance per tile (the tiles are synchronised steps: the next starts when
 * the slowest instance is done), and the spread of the instances' work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spatial_internal.h"

int tessel_spatial_level(const tessel_spec *spec)
{
    for (unsigned l = 1; l < spec->nlevels && l < TESSEL_SPEC_MAX_LEVELS; l++)
        for (unsigned x = 0; x < spec->workload.nindices; x++)
            if (spec->level[l].spatial[x])
                return (int)l;
    return -1;
}

static int by_key(const void *x, const void *y)
{
    uint64_t a = ((const sp_entry *)x)->key, b = ((const sp_entry *)y)->key;
    return a < b ? -1 : a > b;
}

static uint64_t hash_of(uint64_t key, uint64_t mask)
{
    key ^= key >> 31;
    key *= 0x9E3779B97F4A7C15ull;
    return (key ^ (key >> 29)) & mask;
}

static int map_grow(sp_map *m)
{
    uint64_t cap = m->cap ? m->cap * 2 : 1024;
    sp_entry *s = tessel_alloc_array(m->a, (size_t)cap, sizeof(*s));
    if (!s)
        return TESSEL_ENOMEM;
    memset(s, 0, (size_t)cap * sizeof(*s));
    for (uint64_t i = 0; i < m->cap; i++) {
        if (!m->slot[i].key)
            continue;
        uint64_t h = hash_of(m->slot[i].key, cap - 1);
        while (s[h].key)
            h = (h + 1) & (cap - 1);
        s[h] = m->slot[i];
    }
    tessel_dealloc(m->a, m->slot);
    m->slot = s;
    m->cap = cap;
    return TESSEL_OK;
}

/* key's entry, added empty when new (NULL: out of memory). */
static sp_entry *map_entry(sp_map *m, uint64_t key)
{
    if (m->dense) {
        sp_entry *e = &m->slot[key];
        if (!e->key) {
            e->key = key + 1;
            m->n++;
        }
        return e;
    }
    if ((m->n + 1) * 2 > m->cap && map_grow(m))
        return NULL;
    uint64_t k = key + 1, h = hash_of(k, m->cap - 1);
    while (m->slot[h].key && m->slot[h].key != k)
        h = (h + 1) & (m->cap - 1);
    if (!m->slot[h].key) {
        m->slot[h].key = k;
        m->n++;
    }
    return &m->slot[h];
}

int sp_map_add(sp_map *m, uint64_t key, uint64_t macs, uint64_t steps)
{
    sp_entry *e = map_entry(m, key);
    if (!e)
        return TESSEL_ENOMEM;
    e->macs += macs;
    e->steps += steps;
    return TESSEL_OK;
}

int sp_map_add_expected(sp_map *m, uint64_t key, double emacs)
{
    sp_entry *e = map_entry(m, key);
    if (!e)
        return TESSEL_ENOMEM;
    e->emacs += emacs;
    return TESSEL_OK;
}

uint64_t sp_map_sorted(sp_map *m)
{
    uint64_t n = 0, cap = m->dense ? m->dense : m->cap;
    for (uint64_t s = 0; s < cap; s++)
        if (m->slot[s].key) {
            m->slot[n] = m->slot[s];
            m->slot[n++].key--;
        }
    if (n && !m->dense)
        qsort(m->slot, (size_t)n, sizeof(sp_entry), by_key);
    return n;
}

uint64_t sp_mul63(uint64_t a, uint64_t b)
{
    if (a && b > (UINT64_C(1) << 63) / a)
        return 0;
    return a * b;
}

/* The edge of the tile an instance walks in time along role d (0 i, 1 k,
 * 2 j) inside level l's tiles: level l+1's tile; below the innermost level
 * under the drt strategy its micro tile (rows along i, columns along k and j:
 * DRT's PEs take micro-tile tasks, drt §3.2.1); else one coordinate along a
 * split index and the whole level tile along the others. */
static uint64_t child_edge(const tessel_spec *spec, unsigned l, unsigned d, int index,
                           uint64_t edge)
{
    uint64_t c;
    if (l + 1 < spec->nlevels)
        c = spec->level[l + 1].tile[index];
    else if (strcmp(spec->strategy.name, "drt") == 0)
        c = spec->strategy.micro[d == 0 ? 0 : 1];
    else
        c = spec->level[l].spatial[index] ? 1 : edge;
    return c && c < edge ? c : edge;
}

/* The level's geometry along role d's index. */
static void axis_init(const tessel_spec *spec, const uint64_t *extent, unsigned l, unsigned d,
                      int index, sp_axis *ax)
{
    memset(ax, 0, sizeof(*ax));
    ax->index = index;
    ax->extent = 1;
    ax->edge = ax->unit = ax->tiles = ax->units = ax->cedge = ax->ctiles = 1;
    ax->factor = 1;
    if (index < 0)
        return;
    ax->extent = extent[index] ? extent[index] : 1;
    uint64_t e = spec->level[l].tile[index];
    ax->edge = e && e < ax->extent ? e : ax->extent;
    ax->tiles = (ax->extent + ax->edge - 1) / ax->edge;
    ax->cedge = child_edge(spec, l, d, index, ax->edge);
    ax->ctiles = (ax->edge + ax->cedge - 1) / ax->cedge;
    if (!spec->level[l].spatial[index])
        return;
    ax->factor = spec->level[l].spatial[index];
    ax->unit = ax->cedge;
    ax->units = ax->ctiles;
}

/* The slot of unit u along ax inside level tile t (border tiles hold fewer units). */
static unsigned slot_of(const sp_axis *ax, uint64_t t, uint64_t u, int policy)
{
    if (ax->factor <= 1)
        return 0;
    if (policy == TESSEL_SPEC_SPATIAL_ROUND_ROBIN)
        return (unsigned)(u % ax->factor);
    uint64_t rest = ax->extent - t * ax->edge;
    uint64_t len = rest < ax->edge ? rest : ax->edge;
    uint64_t n = (len + ax->unit - 1) / ax->unit;
    uint64_t block = (n + ax->factor - 1) / ax->factor;
    return (unsigned)(u / block);
}

/* B's nonzeros grouped by k: per k, runs of (tile J, unit uj) with their counts. */
typedef struct sp_runs {
    uint64_t *ptr;  /* extent(k) + 1 */
    uint64_t *code; /* J * units_j + uj */
    uint64_t *count;
} sp_runs;

void sp_coords(const tessel_spec *spec, unsigned t, const tessel_tensor *x, uint64_t r,
               uint64_t e, int ia, int ib, uint64_t *a, uint64_t *b)
{
    *a = *b = 0;
    for (unsigned m = 0; m < x->order && m < 2; m++) {
        uint64_t c = m == 0 ? r : x->idx[m][e];
        if ((int)spec->workload.tensor[t].index[m] == ia)
            *a = c;
        else if ((int)spec->workload.tensor[t].index[m] == ib)
            *b = c;
    }
}

static void runs_free(const tessel_allocator *a, sp_runs *r)
{
    tessel_dealloc(a, r->ptr);
    tessel_dealloc(a, r->code);
    tessel_dealloc(a, r->count);
}

/* Builds B's runs by k (counting sort: j stays ascending within each k). */
static int runs_build(const tessel_spec *spec, unsigned tb, const tessel_tensor *B,
                      const sp_axis *k, const sp_axis *j, const tessel_allocator *a, sp_runs *out)
{
    uint64_t nk = k->extent, nnz = B->nnz;
    memset(out, 0, sizeof(*out));
    out->ptr = tessel_alloc_array(a, (size_t)nk + 1, sizeof(uint64_t));
    uint64_t *code = tessel_alloc_array(a, (size_t)(nnz ? nnz : 1), sizeof(uint64_t));
    out->code = tessel_alloc_array(a, (size_t)(nnz ? nnz : 1), sizeof(uint64_t));
    out->count = tessel_alloc_array(a, (size_t)(nnz ? nnz : 1), sizeof(uint64_t));
    if (!out->ptr || !code || !out->code || !out->count) {
        tessel_dealloc(a, code);
        runs_free(a, out);
        return TESSEL_ENOMEM;
    }
    memset(out->ptr, 0, ((size_t)nk + 1) * sizeof(uint64_t));
    for (uint64_t r = 0; r < B->dims[0]; r++)
        for (uint64_t e = B->ptr[r]; e < B->ptr[r + 1]; e++) {
            uint64_t kk, jj;
            sp_coords(spec, tb, B, r, e, k->index, j->index, &kk, &jj);
            out->ptr[kk + 1]++;
        }
    for (uint64_t x = 0; x < nk; x++)
        out->ptr[x + 1] += out->ptr[x];
    uint64_t *fill = tessel_alloc_array(a, (size_t)nk + 1, sizeof(uint64_t));
    if (!fill) {
        tessel_dealloc(a, code);
        runs_free(a, out);
        return TESSEL_ENOMEM;
    }
    memcpy(fill, out->ptr, ((size_t)nk + 1) * sizeof(uint64_t));
    for (uint64_t r = 0; r < B->dims[0]; r++)
        for (uint64_t e = B->ptr[r]; e < B->ptr[r + 1]; e++) {
            uint64_t kk, jj;
            sp_coords(spec, tb, B, r, e, k->index, j->index, &kk, &jj);
            uint64_t J = jj / j->edge, uj = j->factor > 1 ? (jj % j->edge) / j->unit : 0;
            code[fill[kk]++] = J * j->units + uj;
        }
    /* Merge equal neighbours into runs, in place over the same positions. */
    uint64_t w = 0, start = 0;
    for (uint64_t x = 0; x < nk; x++) {
        uint64_t end = out->ptr[x + 1];
        out->ptr[x] = w;
        for (uint64_t e = start; e < end; e++) {
            if (w > out->ptr[x] && out->code[w - 1] == code[e]) {
                out->count[w - 1]++;
                continue;
            }
            out->code[w] = code[e];
            out->count[w++] = 1;
        }
        start = end;
    }
    out->ptr[nk] = w;
    tessel_dealloc(a, fill);
    tessel_dealloc(a, code);
    return TESSEL_OK;
}

/* The instance of an entry under a static policy. */
static unsigned static_instance(const sp_axis ax[3], const uint64_t t[3], const uint64_t u[3],
                                int policy)
{
    unsigned inst = 0;
    for (unsigned d = 0; d < 3; d++)
        inst = inst * ax[d].factor + slot_of(&ax[d], t[d], u[d], policy);
    return inst;
}

/* How long a unit keeps its instance busy: its intersection steps at the
 * spec's cycles per step, then its MACs at the instance's MAC rate. */
typedef struct sp_price {
    double step_cycles, rate;
} sp_price;

static double work_of(const sp_entry *e, const sp_price *pr)
{
    return (double)e->steps * pr->step_cycles + ((double)e->macs + e->emacs) / pr->rate;
}

/* Deals the sorted entries, level tile by level tile, to the instances and
 * sums the busiest instance per tile; buf holds 5 x used doubles: the step's
 * work and MACs per instance, their totals over the run, and the step's
 * work variance per instance (expected MACs counted as Poisson: variance =
 * mean; the busiest is then the expected maximum, spatial_stat.c). */
static void schedule(const sp_entry *e, uint64_t n, const sp_axis ax[3], uint64_t per_tile,
                     int policy, const sp_price *pr, unsigned used, double *buf,
                     tessel_spatial *out)
{
    double *load = buf, *loadm = buf + used, *tot = buf + 2 * used, *totm = buf + 3 * used;
    double *loadv = buf + 4 * used;
    for (unsigned p = 0; p < 2 * used; p++)
        tot[p] = 0;
    uint64_t i = 0;
    while (i < n) {
        uint64_t tile = e[i].key / per_tile, end = i;
        while (end < n && e[end].key / per_tile == tile)
            end++;
        uint64_t t[3] = { tile / (ax[1].tiles * ax[2].tiles), (tile / ax[2].tiles) % ax[1].tiles,
                          tile % ax[2].tiles };
        for (unsigned p = 0; p < used; p++)
            load[p] = loadm[p] = loadv[p] = 0;
        for (; i < end; i++) {
            uint64_t unit = e[i].key % per_tile;
            uint64_t u[3] = { unit / (ax[1].units * ax[2].units), (unit / ax[2].units) % ax[1].units,
                              unit % ax[2].units };
            unsigned inst = 0;
            if (policy == TESSEL_SPEC_SPATIAL_DYNAMIC) {
                /* A work queue: the next unit goes to the instance free first
                 * (the least loaded; the lowest number on a tie). */
                for (unsigned p = 1; p < used; p++)
                    if (load[p] < load[inst])
                        inst = p;
            } else {
                inst = static_instance(ax, t, u, policy);
            }
            load[inst] += work_of(&e[i], pr);
            loadm[inst] += (double)e[i].macs + e[i].emacs;
            loadv[inst] += e[i].emacs / (pr->rate * pr->rate);
            out->intersect_steps += e[i].steps;
        }
        double busiest = sp_expected_max(load, loadv, used), busiest_macs = 0;
        for (unsigned p = 0; p < used; p++) {
            busiest_macs = loadm[p] > busiest_macs ? loadm[p] : busiest_macs;
            tot[p] += load[p];
            totm[p] += loadm[p];
        }
        out->step_max_work += busiest;
        out->step_max_macs += busiest_macs;
        out->steps++;
    }
}

/* The maximum, mean and population standard deviation of x[0..n). */
static void spread(const double *x, unsigned n, double *max, double *mean, double *stdev)
{
    double sum = 0, top = 0;
    for (unsigned p = 0; p < n; p++) {
        sum += x[p];
        top = x[p] > top ? x[p] : top;
    }
    double m = sum / n, var = 0;
    for (unsigned p = 0; p < n; p++)
        var += (x[p] - m) * (x[p] - m);
    *max = top;
    *mean = m;
    *stdev = sqrt(var / n);
}

/* Which inputs play A[i,k] and B[k,j] (SpMV: x[k]); the axes' indices. */
static int roles(const tessel_spec *spec, unsigned *ta, unsigned *tb, int idx[3],
                 tessel_diag *diag)
{
    const tessel_spec_workload *w = &spec->workload;
    if ((w->kind != TESSEL_WORKLOAD_SPMSPM && w->kind != TESSEL_WORKLOAD_SPMV) ||
        w->ntensors != 3)
        return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->path, 0, 0, "mapping",
                               "spatial mapping: only SpMSpM and SpMV are modelled so far "
                               "(issue 22, first slice)");
    idx[0] = (int)w->tensor[0].index[0];
    idx[2] = w->tensor[0].rank > 1 ? (int)w->tensor[0].index[1] : -1;
    *ta = 1;
    for (unsigned m = 0; m < w->tensor[2].rank; m++)
        if ((int)w->tensor[2].index[m] == idx[0])
            *ta = 2;
    *tb = *ta == 1 ? 2 : 1;
    idx[1] = -1;
    for (unsigned m = 0; m < w->tensor[*ta].rank; m++)
        if ((int)w->tensor[*ta].index[m] != idx[0])
            idx[1] = (int)w->tensor[*ta].index[m];
    return TESSEL_OK;
}

/* Accumulates every (level tile, unit)'s MACs: per nonzero of A, B's runs
 * of its k. */
static int accumulate(const tessel_spec *spec, const tessel_workload_data *data, unsigned ta,
                      unsigned tb, const sp_axis ax[3], uint64_t per_tile,
                      const tessel_allocator *a, sp_map *m)
{
    sp_runs runs;
    int rc = runs_build(spec, tb, data->tensor[tb], &ax[1], &ax[2], a, &runs);
    if (rc)
        return rc;
    const tessel_tensor *A = data->tensor[ta];
    for (uint64_t r = 0; r < A->dims[0] && !rc; r++)
        for (uint64_t e = A->ptr[r]; e < A->ptr[r + 1] && !rc; e++) {
            uint64_t i, k;
            sp_coords(spec, ta, A, r, e, ax[0].index, ax[1].index, &i, &k);
            uint64_t I = i / ax[0].edge, K = k / ax[1].edge;
            uint64_t ui = ax[0].factor > 1 ? (i % ax[0].edge) / ax[0].unit : 0;
            uint64_t uk = ax[1].factor > 1 ? (k % ax[1].edge) / ax[1].unit : 0;
            uint64_t base = (I * ax[1].tiles + K) * ax[2].tiles;
            for (uint64_t x = runs.ptr[k]; x < runs.ptr[k + 1] && !rc; x++) {
                uint64_t J = runs.code[x] / ax[2].units, uj = runs.code[x] % ax[2].units;
                uint64_t unit = (ui * ax[1].units + uk) * ax[2].units + uj;
                rc = sp_map_add(m, (base + J) * per_tile + unit, runs.count[x], 0);
            }
        }
    runs_free(a, &runs);
    return rc;
}

/* Where the units' work comes from: the data (exact) or the statistics. */
typedef struct sp_source {
    const tessel_workload_data *data;
    const tessel_stat_data *stats;
} sp_source;

/* Refuses a second split level; the roles and the extents of i, k, j. */
static int sp_setup(const tessel_spec *spec, int l, const sp_source *src, unsigned *ta,
                    unsigned *tb, int idx[3], uint64_t *extent, tessel_diag *diag)
{
    for (unsigned o = (unsigned)l + 1; o < spec->nlevels; o++)
        for (unsigned x = 0; x < spec->workload.nindices; x++)
            if (spec->level[o].spatial[x])
                return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, spec->level[o].spatial_pos.file,
                                       spec->level[o].spatial_pos.line,
                                       spec->level[o].spatial_pos.column, "spatial",
                                       "spatial mapping at more than one level (%s and %s) is "
                                       "not modelled yet (issue 22, first slice)",
                                       spec->level[l].name, spec->level[o].name);
    int rc = roles(spec, ta, tb, idx, diag);
    if (rc)
        return rc;
    if (src->stats)
        return sp_stat_extents(spec, src->stats, *ta, *tb, extent, diag);
    const tessel_workload_data *data = src->data;
    if (!data || !data->tensor[*ta] || !data->tensor[*tb])
        return tessel_diag_set(diag, TESSEL_EINVAL, spec->path, 0, 0, "spatial",
                               "spatial mapping needs the data of both inputs");
    memcpy(extent, data->extent, sizeof(data->extent));
    return TESSEL_OK;
}

/* Every instance's work under the split from src, the busiest per tile and
 * their spread (model.h). */
static int sp_run(const tessel_spec *spec, const sp_source *src, const tessel_allocator *a,
                  tessel_spatial *out, tessel_diag *diag)
{
    memset(out, 0, sizeof(*out));
    int l = tessel_spatial_level(spec);
    if (l < 0)
        return TESSEL_OK;
    unsigned ta = 0, tb = 0;
    int idx[3];
    uint64_t extent[TESSEL_SPEC_MAX_INDICES] = { 0 };
    int rc = sp_setup(spec, l, src, &ta, &tb, idx, extent, diag);
    if (rc)
        return rc;
    sp_axis ax[3];
    unsigned used = 1;
    for (unsigned d = 0; d < 3; d++) {
        axis_init(spec, extent, (unsigned)l, d, idx[d], &ax[d]);
        used *= ax[d].factor;
    }
    uint64_t per_tile = sp_mul63(sp_mul63(ax[0].units, ax[1].units), ax[2].units);
    uint64_t all = sp_mul63(sp_mul63(sp_mul63(ax[0].tiles, ax[1].tiles), ax[2].tiles), per_tile);
    if (!all || !used)
        return tessel_diag_set(diag, TESSEL_ERANGE, spec->level[l].spatial_pos.file,
                               spec->level[l].spatial_pos.line, spec->level[l].spatial_pos.column,
                               "spatial",
                               "spatial mapping at %s: its tiles times the units per tile pass "
                               "2^63", spec->level[l].name);
    /* Up to 2^20 (level tile, unit) keys, a direct table (32 MiB at most):
     * no hashing and no sort. */
    sp_map m = { a, NULL, 0, 0, 0 };
    if (all <= (UINT64_C(1) << 20)) {
        m.slot = tessel_alloc_array(a, (size_t)all, sizeof(sp_entry));
        if (!m.slot)
            return tessel_diag_set(diag, TESSEL_ENOMEM, spec->path, 0, 0, "spatial",
                                   "spatial mapping: out of memory");
        memset(m.slot, 0, (size_t)all * sizeof(sp_entry));
        m.dense = all;
    }
    if (src->stats) {
        rc = sp_stat_fill(spec, src->stats, ta, tb, ax, per_tile, a, &m, diag);
        if (rc) {
            tessel_dealloc(a, m.slot);
            return rc;
        }
    } else {
        rc = accumulate(spec, src->data, ta, tb, ax, per_tile, a, &m);
        if (!rc && spec->compute.intersect.cls[0])
            rc = sp_steps_add(spec, src->data, ta, tb, ax, per_tile, a, &m);
    }
    double *buf = rc ? NULL : tessel_alloc_array(a, (size_t)used * 5, sizeof(double));
    if (!rc && !buf)
        rc = TESSEL_ENOMEM;
    if (rc) {
        tessel_dealloc(a, m.slot);
        return tessel_diag_set(diag, rc, spec->path, 0, 0, "spatial",
                               rc == TESSEL_ERANGE
                                   ? "spatial mapping: the child tiles' numbers pass 2^63"
                                   : "spatial mapping: out of memory");
    }
    uint64_t n = sp_map_sorted(&m);
    /* Each instance runs the child's share of the compute's MACs a cycle. */
    double inst = (unsigned)l + 1 < spec->nlevels ? (double)spec->level[l + 1].instances
                                                  : (double)spec->compute.pes;
    sp_price pr = { spec->compute.intersect_step_cycles > 0 ? spec->compute.intersect_step_cycles
                                                            : 1.0,
                    (double)spec->compute.pes * (double)spec->compute.macs_per_pe /
                        (inst > 0 ? inst : 1.0) };
    if (!(pr.rate > 0))
        pr.rate = 1.0;
    out->present = 1;
    out->level = (unsigned)l;
    out->used = used;
    out->units = n;
    schedule(m.slot, n, ax, per_tile, spec->level[l].spatial_policy, &pr, used, buf, out);
    spread(buf + 3 * used, used, &out->max_macs, &out->mean_macs, &out->stdev_macs);
    spread(buf + 2 * used, used, &out->max_work, &out->mean_work, &out->stdev_work);
    tessel_dealloc(a, buf);
    tessel_dealloc(a, m.slot);
    return TESSEL_OK;
}

int tessel_model_spatial(const tessel_spec *spec, const tessel_workload_data *data,
                         const tessel_allocator *a, tessel_spatial *out, tessel_diag *diag)
{
    sp_source src = { data, NULL };
    return sp_run(spec, &src, a, out, diag);
}

int tessel_model_spatial_stat(const tessel_spec *spec, const tessel_stat_data *stats,
                              const tessel_allocator *a, tessel_spatial *out, tessel_diag *diag)
{
    sp_source src = { NULL, stats };
    return sp_run(spec, &src, a, out, diag);
}

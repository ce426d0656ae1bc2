/* DRT micro tiles (drt §3.2.1, §4.1): each input is physically tiled
 * into uniform micro tiles, and only their nonzero counts are kept, in
 * two orientations (by rows and by columns) with running sums, so that
 * the footprint of any run of micro tiles along a line is two binary
 * searches away. One pass over each input (tessel_tile_grid_build). */
#include <string.h>

#include "drt_internal.h"

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

static void lines_free(const tessel_allocator *a, drt_lines *l)
{
    tessel_dealloc(a, l->ptr);
    tessel_dealloc(a, l->other);
    tessel_dealloc(a, l->cnz);
    memset(l, 0, sizeof(*l));
}

static int lines_alloc(const tessel_allocator *a, drt_lines *l, uint64_t nlines, uint64_t n)
{
    l->nlines = nlines;
    l->ptr = tessel_alloc_array(a, nlines + 1, sizeof(uint64_t));
    l->other = tessel_alloc_array(a, n ? n : 1, sizeof(uint32_t));
    l->cnz = tessel_alloc_array(a, n + 1, sizeof(uint64_t));
    if (!l->ptr || !l->other || !l->cnz)
        return TESSEL_ENOMEM;
    memset(l->ptr, 0, (nlines + 1) * sizeof(uint64_t));
    return TESSEL_OK;
}

/* The grid of input `role` from its tile grid (mode 0 = group, mode 1 =
 * key; a vector has only mode 0 and its unit column). */
static int grid_from(drt_data *d, unsigned role, const tessel_spec_tensor *st,
                     const tessel_tile_grid *tg)
{
    drt_grid *g = &d->grid[role];
    const tessel_allocator *a = d->alloc;
    for (unsigned m = 0; m < 2; m++) {
        g->x[m] = DRT_J; /* a vector's missing column */
        if (m < st->rank)
            for (unsigned x = 0; x < DRT_NX; x++)
                if (d->roles.spec_index[x] == (int)st->index[m])
                    g->x[m] = x;
    }
    uint64_t n = tg->nonempty;
    g->ntiles = n;
    g->nnz = tg->nnz;
    if (lines_alloc(a, &g->by[0], d->mext[g->x[0]], n) ||
        lines_alloc(a, &g->by[1], d->mext[g->x[1]], n))
        return TESSEL_ENOMEM;
    drt_lines *r = &g->by[0], *c = &g->by[1];
    /* by rows: the tile grid's own order */
    r->cnz[0] = 0;
    for (uint64_t t = 0, gr = 0; t < n; t++) {
        r->ptr[(gr = tessel_tile_grid_group_from(tg, t, gr)) + 1]++;
        r->other[t] = (uint32_t)(st->rank > 1 ? tessel_tile_grid_key(tg, t) : 0);
        r->cnz[t + 1] = r->cnz[t] + tessel_tile_grid_count(tg, t);
    }
    for (uint64_t l = 0; l < r->nlines; l++)
        r->ptr[l + 1] += r->ptr[l];
    /* by columns: a stable counting sort keeps rows ascending per column */
    uint64_t *fill = tessel_alloc_array(a, c->nlines + 1, sizeof(uint64_t));
    if (!fill)
        return TESSEL_ENOMEM;
    for (uint64_t t = 0; t < n; t++)
        c->ptr[r->other[t] + 1]++;
    for (uint64_t l = 0; l < c->nlines; l++)
        c->ptr[l + 1] += c->ptr[l];
    memcpy(fill, c->ptr, (c->nlines + 1) * sizeof(uint64_t));
    uint64_t *cnt = tessel_alloc_array(a, n ? n : 1, sizeof(uint64_t));
    if (!cnt) {
        tessel_dealloc(a, fill);
        return TESSEL_ENOMEM;
    }
    for (uint64_t t = 0, gr = 0; t < n; t++) {
        uint64_t p = fill[r->other[t]]++;
        c->other[p] = (uint32_t)(gr = tessel_tile_grid_group_from(tg, t, gr));
        cnt[p] = tessel_tile_grid_count(tg, t);
    }
    c->cnz[0] = 0;
    for (uint64_t p = 0; p < n; p++)
        c->cnz[p + 1] = c->cnz[p] + cnt[p];
    tessel_dealloc(a, cnt);
    tessel_dealloc(a, fill);
    return TESSEL_OK;
}

uint64_t drt_lower_bound(const uint32_t *v, uint64_t lo, uint64_t hi, uint64_t key)
{
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void drt_strip(const drt_grid *g, unsigned x, uint64_t c, uint64_t lo, uint64_t hi, uint64_t *m,
               uint64_t *n)
{
    const drt_lines *l = &g->by[g->x[0] == x ? 0 : 1];
    *m = *n = 0;
    if (c >= l->nlines || lo >= hi)
        return;
    uint64_t a = l->ptr[c], b = l->ptr[c + 1];
    if (a == b)
        return;
    uint64_t p = drt_lower_bound(l->other, a, b, lo), q = drt_lower_bound(l->other, p, b, hi);
    *m = q - p;
    *n = l->cnz[q] - l->cnz[p];
}

/* Drops from l the entries of lines with keep_line[line] == 0 and those
 * with keep_other[other] == 0 (either may be NULL: keep all), in place;
 * cnz is rebuilt from the kept entries' counts. */
static void lines_filter(drt_lines *l, const uint8_t *keep_line, const uint8_t *keep_other)
{
    uint64_t q = 0, prev = 0, a = l->ptr[0];
    for (uint64_t c = 0; c < l->nlines; c++) {
        uint64_t b = l->ptr[c + 1];
        l->ptr[c] = q;
        int line = !keep_line || keep_line[c];
        for (uint64_t p = a; p < b; p++) {
            uint64_t next = l->cnz[p + 1], cnt = next - prev;
            prev = next;
            if (line && (!keep_other || keep_other[l->other[p]])) {
                l->other[q] = l->other[p];
                l->cnz[q + 1] = l->cnz[q] + cnt;
                q++;
            }
        }
        a = b;
    }
    l->ptr[l->nlines] = q;
}

/* Partner filter (drt §3.2.1, §4.1): a micro tile of A on k micro line x
 * can only meet a micro tile of B on the same line, so when B has none
 * there it is never part of an effectual intersection and no macro tile
 * ever loads it; likewise for B. Both grids keep only partnered micro
 * tiles (the walker's loading rule, drt_walk.c, starts from these). */
static int keep_partnered(drt_data *d)
{
    uint64_t mk = d->mext[DRT_K];
    uint8_t *has[2];
    has[0] = tessel_alloc_array(d->alloc, mk ? mk : 1, 1);
    has[1] = tessel_alloc_array(d->alloc, mk ? mk : 1, 1);
    if (!has[0] || !has[1]) {
        tessel_dealloc(d->alloc, has[0]);
        tessel_dealloc(d->alloc, has[1]);
        return TESSEL_ENOMEM;
    }
    for (unsigned r = 0; r < 2; r++) {
        const drt_grid *g = &d->grid[DRT_A + r];
        const drt_lines *l = &g->by[g->x[0] == DRT_K ? 0 : 1]; /* lines along k */
        for (uint64_t c = 0; c < mk; c++)
            has[r][c] = c < l->nlines && l->ptr[c + 1] > l->ptr[c];
    }
    for (unsigned r = 0; r < 2; r++) {
        drt_grid *g = &d->grid[DRT_A + r];
        const uint8_t *partner = has[1 - r];
        g->ntiles_all = g->ntiles;
        g->nnz_all = g->nnz;
        for (unsigned m = 0; m < 2; m++) {
            if (g->x[m] == DRT_K)
                lines_filter(&g->by[m], partner, NULL);
            else
                lines_filter(&g->by[m], NULL, partner);
        }
        const drt_lines *l = &g->by[0];
        g->ntiles = l->ptr[l->nlines];
        g->nnz = l->cnz[g->ntiles];
    }
    tessel_dealloc(d->alloc, has[0]);
    tessel_dealloc(d->alloc, has[1]);
    return TESSEL_OK;
}

/* Coordinate of entry p (in slice r) of t along mode m. */
static uint64_t coord(const tessel_tensor *t, unsigned m, uint64_t r, uint64_t p)
{
    return m == 0 ? r : t->idx[m][p];
}

/* Effectual multiplies: sum over k of A's nonzeros in column k times B's
 * in row k (exact from one pass over each input). */
static int count_macs(drt_data *d, const tessel_tensor *ta, const tessel_tensor *tb)
{
    uint64_t ek = d->roles.extent[DRT_K];
    uint64_t *ca = tessel_alloc_array(d->alloc, ek ? ek : 1, sizeof(uint64_t));
    uint64_t *cb = tessel_alloc_array(d->alloc, ek ? ek : 1, sizeof(uint64_t));
    if (!ca || !cb) {
        tessel_dealloc(d->alloc, ca);
        tessel_dealloc(d->alloc, cb);
        return TESSEL_ENOMEM;
    }
    memset(ca, 0, (ek ? ek : 1) * sizeof(uint64_t));
    memset(cb, 0, (ek ? ek : 1) * sizeof(uint64_t));
    const tessel_tensor *ts[2] = { ta, tb };
    uint64_t *cs[2] = { ca, cb };
    for (unsigned r = 0; r < 2; r++) {
        const drt_grid *g = &d->grid[DRT_A + r];
        unsigned mk = g->x[0] == DRT_K ? 0 : 1;
        const tessel_tensor *t = ts[r];
        for (uint64_t s = 0; s < t->dims[0]; s++)
            for (uint64_t p = t->ptr[s]; p < t->ptr[s + 1]; p++)
                cs[r][coord(t, mk, s, p)]++;
    }
    d->macs = 0;
    for (uint64_t k = 0; k < ek; k++)
        d->macs += ca[k] * cb[k];
    tessel_dealloc(d->alloc, ca);
    tessel_dealloc(d->alloc, cb);
    return TESSEL_OK;
}

/* Workload tensor t is tiled-csf at some buffer level of spec. */
static int uses_tiled(const tessel_spec *spec, unsigned t)
{
    for (unsigned l = 1; l < spec->nlevels; l++) {
        const tessel_spec_level *lv = &spec->level[l];
        int f = lv->tensor[t].format >= 0 ? lv->tensor[t].format : lv->format;
        if (f == TESSEL_SPEC_FORMAT_TILED_CSF)
            return 1;
    }
    return 0;
}

/* tiled-csf's row segments (a row inside one micro tile) of input role,
 * with rows along either of its indices (drt_grid.segs). */
static int count_segments(drt_data *d, const tessel_workload_data *w, unsigned role)
{
    drt_grid *g = &d->grid[role];
    g->segs_tiles = g->ntiles;
    for (unsigned o = 0; o < 2; o++) {
        drt_csr v;
        if (drt_csr_view(d, w, role, g->x[o], &v))
            return TESSEL_ENOMEM;
        uint64_t mu = d->mu[g->x[1 - o]], segs = 0;
        for (uint64_t r = 0; r < v.rows; r++)
            for (uint64_t p = v.ptr[r]; p < v.ptr[r + 1]; p++)
                segs += p == v.ptr[r] || v.col[p] / mu != v.col[p - 1] / mu;
        g->segs[o] = segs;
        drt_csr_free(d->alloc, &v);
    }
    return TESSEL_OK;
}

/* Roles, micro shape, both inputs' micro grids (and their row segments for
 * tiled-csf), the effectual multiplies and the partnered micro tiles. */
int drt_data_build(const tessel_spec *spec, const tessel_workload_data *w,
                   const tessel_drt_options *opt, const tessel_allocator *a, drt_data *d,
                   tessel_diag *diag)
{
    memset(d, 0, sizeof(*d));
    d->alloc = a;
    int rc = drt_roles_of(spec, &d->roles, diag);
    if (rc)
        return rc;
    drt_roles *r = &d->roles;
    for (unsigned x = 0; x < DRT_NX; x++)
        r->extent[x] = r->spec_index[x] < 0 ? 1 : w->extent[r->spec_index[x]];
    d->micro[0] = opt->micro[0];
    d->micro[1] = opt->micro[1];
    /* micro[0] along i (A's and Z's rows), micro[1] along k and j */
    const uint64_t want[DRT_NX] = { opt->micro[0], opt->micro[1], opt->micro[1] };
    for (unsigned x = 0; x < DRT_NX; x++) {
        uint64_t e = r->extent[x];
        d->mu[x] = e == 0 ? 1 : (want[x] < e ? want[x] : e);
        d->mext[x] = ceil_div(e, d->mu[x]);
    }
    for (unsigned role = DRT_A; role <= DRT_B; role++) {
        unsigned t = r->tensor[role];
        const tessel_spec_tensor *st = &spec->workload.tensor[t];
        const tessel_tensor *ten = w->tensor[t];
        if (!ten)
            return tessel_diag_set(diag, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                   st->pos.column, "workload.data",
                                   "%s has no data bound", st->name);
        if (ten->order != st->rank)
            return tessel_diag_set(diag, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                   st->pos.column, "workload.data",
                                   "%s: the data has %u modes, the einsum %u", st->name,
                                   ten->order, st->rank);
        uint64_t tile[2];
        for (unsigned m = 0; m < st->rank; m++) {
            unsigned x = DRT_NX;
            for (unsigned e = 0; e < DRT_NX; e++)
                if (r->spec_index[e] == (int)st->index[m])
                    x = e;
            if (x == DRT_NX || ten->dims[m] != r->extent[x])
                return tessel_diag_set(diag, TESSEL_EINVAL, st->pos.file, st->pos.line,
                                       st->pos.column, "workload.data",
                                       "%s: mode %u has %llu entries, the einsum needs %llu",
                                       st->name, m + 1, (unsigned long long)ten->dims[m],
                                       (unsigned long long)(x == DRT_NX ? 0 : r->extent[x]));
            tile[m] = d->mu[x];
        }
        tessel_tile_grid *tg = NULL;
        rc = tessel_tile_grid_build(ten, tile, a, &tg, diag);
        if (rc)
            return rc;
        rc = grid_from(d, role, st, tg);
        tessel_tile_grid_free(&tg);
        if (!rc && uses_tiled(spec, t))
            rc = count_segments(d, w, role);
        if (rc)
            return drt_oom(diag);
    }
    if (count_macs(d, w->tensor[r->tensor[DRT_A]], w->tensor[r->tensor[DRT_B]]))
        return drt_oom(diag);
    if (keep_partnered(d))
        return drt_oom(diag);
    return TESSEL_OK;
}

void drt_data_free(drt_data *d)
{
    for (unsigned g = 0; g < 3; g++)
        for (unsigned m = 0; m < 2; m++)
            lines_free(d->alloc, &d->grid[g].by[m]);
    drt_otable_free(d->alloc, &d->out);
}

int drt_csr_view(const drt_data *d, const tessel_workload_data *w, unsigned role, unsigned rowx,
                 drt_csr *v)
{
    memset(v, 0, sizeof(*v));
    const tessel_tensor *t = w->tensor[d->roles.tensor[role]];
    const drt_grid *g = &d->grid[role];
    v->rows = d->roles.extent[rowx];
    if (t->order == 1) { /* SpMV's vector: K x 1 */
        v->ptr = t->ptr;
        v->own_col = tessel_alloc_array(d->alloc, t->nnz ? t->nnz : 1, sizeof(uint32_t));
        if (!v->own_col)
            return TESSEL_ENOMEM;
        memset(v->own_col, 0, (t->nnz ? t->nnz : 1) * sizeof(uint32_t));
        v->col = v->own_col;
        return TESSEL_OK;
    }
    if (g->x[0] == rowx) {
        v->ptr = t->ptr;
        v->col = t->idx[1];
        return TESSEL_OK;
    }
    /* stored the other way round: transpose by a counting sort */
    v->own_ptr = tessel_alloc_array(d->alloc, v->rows + 1, sizeof(uint64_t));
    v->own_col = tessel_alloc_array(d->alloc, t->nnz ? t->nnz : 1, sizeof(uint32_t));
    if (!v->own_ptr || !v->own_col) {
        drt_csr_free(d->alloc, v);
        return TESSEL_ENOMEM;
    }
    memset(v->own_ptr, 0, (v->rows + 1) * sizeof(uint64_t));
    for (uint64_t p = 0; p < t->nnz; p++)
        v->own_ptr[t->idx[1][p] + 1]++;
    for (uint64_t r = 0; r < v->rows; r++)
        v->own_ptr[r + 1] += v->own_ptr[r];
    for (uint64_t s = 0; s < t->dims[0]; s++)
        for (uint64_t p = t->ptr[s]; p < t->ptr[s + 1]; p++)
            v->own_col[v->own_ptr[t->idx[1][p]]++] = (uint32_t)s;
    for (uint64_t r = v->rows; r > 0; r--)
        v->own_ptr[r] = v->own_ptr[r - 1];
    v->own_ptr[0] = 0;
    v->ptr = v->own_ptr;
    v->col = v->own_col;
    return TESSEL_OK;
}

void drt_csr_free(const tessel_allocator *a, drt_csr *v)
{
    tessel_dealloc(a, v->own_ptr);
    tessel_dealloc(a, v->own_col);
    memset(v, 0, sizeof(*v));
}

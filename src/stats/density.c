/* Analytic density models and the tile occupancy they imply, without data.
 * The vocabulary is Sparseloop's density models (hypergeometric, banded,
 * structured); the answer is the expected occupancy distribution over the
 * tiles of a shape: a mixture, over tile positions, of each tile's exact
 * distribution. Edge tiles are cut at the matrix edge and hold fewer
 * positions, so their distributions differ from the full tiles'.
 *
 *   uniform  nnz positions without replacement over N = rows * cols: a tile
 *            with P positions holds X ~ Hypergeometric(N, K = nnz, P):
 *              P(X = k) = C(K, k) C(N - K, P - k) / C(N, P)
 *   banded   each position with |i - j| <= w kept with probability d: a tile
 *            holding B in-band positions holds X ~ Binomial(B, d):
 *              P(X = k) = C(B, k) d^k (1 - d)^(B - k)
 *   N:M      every aligned group of m columns of a row holds exactly n
 *            nonzeros at uniformly random places (the last group of a row,
 *            of width W = cols mod m, holds min(n, W), as tessel_generate).
 *            A tile row overlapping `ov` columns of a group of width W with
 *            k kept holds Hypergeometric(W, k, ov) of them; groups inside
 *            the tile give exactly k. Rows are independent, so a tile of h
 *            rows holds the h-fold convolution of one row's distribution.
 *
 * Evaluating the pmfs. GSL's gsl_ran_hypergeometric_pdf and
 * gsl_ran_binomial_pdf take unsigned int parameters (N = rows * cols reaches
 * 2^64) and evaluate exp(lnchoose sums), whose cancellation for large N
 * costs digits. Both distributions are log-concave with rational successive
 * ratios instead:
 *   hypergeometric  P(k+1)/P(k) = (K - k)(P - k) / ((k + 1)(N - K - P + k + 1))
 *   binomial        P(k+1)/P(k) = (B - k)/(k + 1) * d/(1 - d)
 * so each pmf is computed from its mode outwards by these ratios (relative
 * error about |k - mode| ulps), kept while a term is at least WINDOW_TINY
 * times the mode's, and normalised by the sum of the kept terms. The mass
 * left out is below 1e-20 of the total, far under the 1e-12 tail cut. The
 * unit tests compare these pmfs with GSL's on small parameters.
 *
 * Cost. uniform: at most four tile classes (full, last row, last column,
 * corner). banded: tile rows away from the matrix edges repeat every
 * tc / gcd(tr, tc) tile rows, so only one period of them and the edge rows
 * are enumerated; tiles are then grouped by B (one pmf per distinct B).
 * N:M: tile columns repeat every m / gcd(tc, m) tiles the same way; each
 * class costs O(log h) convolutions of significant windows, about
 * (23 sd)^2 for a tile of h rows with sd = sqrt(h) * (the row's sd). That
 * is milliseconds for the usual m <= 32, but tall tiles cut by wide groups
 * are slow (5:1000 with 100000 x 333 tiles: 1000 classes, about a minute).
 * Memory: the mixture is indexed by occupancy, so it holds (largest
 * plausible tile occupancy + 1) doubles; more than DENSITY_MAX_PMF is
 * refused. */
#include <math.h>
#include <string.h>

#include "tessel/stats.h"

/* A pmf term below this fraction of the mode's term is left out. */
#define WINDOW_TINY 1e-25
/* Convolved pmfs drop leading/trailing terms below this (pmfs sum to 1). */
#define CONV_TINY 1e-30
/* The reported pmf stops where the remaining upper tail is below this. */
#define TAIL_CUT 1e-12
/* Largest number of pmf entries (occupancies 0 .. DENSITY_MAX_PMF - 1). */
#define DENSITY_MAX_PMF (1ull << 26)

static const char *const kind_names[] = { "uniform", "banded", "nm", "fixed-structured" };
#define KIND_COUNT (sizeof(kind_names) / sizeof(kind_names[0]))

int tessel_density_kind_from_name(const char *name)
{
    if (!name)
        return -1;
    for (unsigned k = 0; k < KIND_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return (int)k;
    return -1;
}

static uint64_t min_u64(uint64_t x, uint64_t y)
{
    return x < y ? x : y;
}

/* ------------------------------------------------------------------ */
/* A pmf on lo .. lo + len - 1, in a buffer that grows through the hook. */

typedef struct pmf {
    double *p;
    uint64_t lo, len, cap;
} pmf;

static int pmf_reserve(const tessel_allocator *a, pmf *f, uint64_t len)
{
    if (len <= f->cap)
        return TESSEL_OK;
    if (len > DENSITY_MAX_PMF)
        return TESSEL_ERANGE;
    uint64_t cap = f->cap ? f->cap : 64;
    while (cap < len)
        cap *= 2;
    double *p = tessel_realloc_array(a, f->p, (size_t)cap, sizeof(double));
    if (!p)
        return TESSEL_ENOMEM;
    f->p = p;
    f->cap = cap;
    return TESSEL_OK;
}

static void pmf_release(const tessel_allocator *a, pmf *f)
{
    tessel_dealloc(a, f->p);
    memset(f, 0, sizeof(*f));
}

static void pmf_swap(pmf *x, pmf *y)
{
    pmf t = *x;
    *x = *y;
    *y = t;
}

/* ------------------------------------------------------------------ */
/* Log-concave pmfs by successive ratios (see the top of the file). */

typedef struct ratio_dist {
    int binomial;     /* 1: Binomial(B = hi, odds); 0: Hypergeometric(N, K, P) */
    double odds;      /* d / (1 - d) */
    uint64_t N, K, P; /* hypergeometric */
    uint64_t lo, hi;  /* support */
    double mode_guess;
} ratio_dist;

static ratio_dist binomial_dist(uint64_t B, double d)
{
    ratio_dist r = { 1, 0, 0, 0, 0, 0, B, 0 };
    if (d >= 1)
        r.lo = B; /* all kept: a point mass */
    else {
        r.odds = d / (1 - d);
        r.mode_guess = floor(((double)B + 1) * d); /* mode of Binomial(B, d) */
    }
    return r;
}

static ratio_dist hyper_dist(uint64_t N, uint64_t K, uint64_t P)
{
    ratio_dist r = { 0, 0, N, K, P, 0, 0, 0 };
    r.lo = P > N - K ? P - (N - K) : 0;
    r.hi = min_u64(P, K);
    /* mode of Hypergeometric(N, K, P): floor((P + 1)(K + 1) / (N + 2)) */
    r.mode_guess = floor(((double)P + 1) * ((double)K + 1) / ((double)N + 2));
    return r;
}

/* P(k+1) / P(k) for lo <= k < hi (positive: both are in the support). */
static double ratio_at(const ratio_dist *r, uint64_t k)
{
    if (r->binomial)
        return (double)(r->hi - k) / (double)(k + 1) * r->odds;
    /* k >= lo makes P - k <= N - K, so the last factor cannot wrap. */
    double num = (double)(r->K - k) * (double)(r->P - k);
    double den = (double)(k + 1) * (double)((r->N - r->K) - (r->P - k) + 1);
    return num / den;
}

/* The significant window of r's pmf into f, normalised. */
static int ratio_pmf(const tessel_allocator *a, const ratio_dist *r, pmf *f)
{
    uint64_t mode = r->lo;
    if (r->mode_guess > (double)r->lo)
        mode = r->mode_guess >= (double)r->hi ? r->hi : (uint64_t)r->mode_guess;
    /* Log-concave: ratios fall with k, so the mode is where they cross 1. */
    while (mode < r->hi && ratio_at(r, mode) > 1)
        mode++;
    while (mode > r->lo && ratio_at(r, mode - 1) < 1)
        mode--;
    /* Down from the mode (term 1) to the first k whose term stays above
     * WINDOW_TINY. */
    uint64_t first = mode;
    double u = 1;
    while (first > r->lo) {
        double prev = u / ratio_at(r, first - 1);
        if (prev < WINDOW_TINY)
            break;
        u = prev;
        first--;
    }
    /* Up from there, storing terms, until past the mode and tiny. */
    f->lo = first;
    f->len = 0;
    uint64_t k = first;
    for (;;) {
        int rc = pmf_reserve(a, f, f->len + 1);
        if (rc)
            return rc;
        f->p[f->len++] = u;
        if (k == r->hi)
            break;
        double next = u * ratio_at(r, k);
        if (k >= mode && next < WINDOW_TINY)
            break;
        u = next;
        k++;
    }
    double sum = 0;
    for (uint64_t i = 0; i < f->len; i++)
        sum += f->p[i];
    for (uint64_t i = 0; i < f->len; i++)
        f->p[i] /= sum;
    return TESSEL_OK;
}

static int point_mass(const tessel_allocator *a, uint64_t at, pmf *f)
{
    int rc = pmf_reserve(a, f, 1);
    if (rc)
        return rc;
    f->lo = at;
    f->len = 1;
    f->p[0] = 1;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Convolutions (N:M rows). */

/* Drops leading and trailing terms below CONV_TINY. */
static void pmf_trim(pmf *f)
{
    uint64_t s = 0, e = f->len;
    while (e > 1 && f->p[e - 1] < CONV_TINY)
        e--;
    while (s + 1 < e && f->p[s] < CONV_TINY)
        s++;
    if (s)
        memmove(f->p, f->p + s, (size_t)(e - s) * sizeof(double));
    f->lo += s;
    f->len = e - s;
}

/* out = x * y (distribution of the sum of independent draws). */
static int pmf_convolve(const tessel_allocator *a, const pmf *x, const pmf *y, pmf *out)
{
    uint64_t len = x->len + y->len - 1;
    if (x->lo + y->lo + len > DENSITY_MAX_PMF)
        return TESSEL_ERANGE;
    int rc = pmf_reserve(a, out, len);
    if (rc)
        return rc;
    memset(out->p, 0, (size_t)len * sizeof(double));
    for (uint64_t i = 0; i < x->len; i++)
        for (uint64_t j = 0; j < y->len; j++)
            out->p[i + j] += x->p[i] * y->p[j];
    out->lo = x->lo + y->lo;
    out->len = len;
    pmf_trim(out);
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Tile classes: tiles whose occupancy has the same distribution, and how
 * many tiles share it. key[0] names the distribution's parameters:
 *   uniform  {P}                     banded  {B}
 *   N:M      {h, c, W1, k1, ov1, W2, k2, ov2}: h rows, each holding
 *            c + Hyp(W1, k1, ov1) + Hyp(W2, k2, ov2) (W = 0: no such part) */
#define CLASS_KEYS 8

typedef struct tile_class {
    uint64_t key[CLASS_KEYS];
    uint64_t count;
} tile_class;

typedef struct class_list {
    const tessel_allocator *alloc;
    tile_class *v;
    size_t n, cap;
} class_list;

static int class_push(class_list *l, const uint64_t *key, uint64_t count)
{
    if (count == 0)
        return TESSEL_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        tile_class *v = tessel_realloc_array(l->alloc, l->v, cap, sizeof(*v));
        if (!v)
            return TESSEL_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    memcpy(l->v[l->n].key, key, sizeof(l->v[l->n].key));
    l->v[l->n].count = count;
    l->n++;
    return TESSEL_OK;
}

static int class_less(const tile_class *x, const tile_class *y)
{
    for (unsigned i = 0; i < CLASS_KEYS; i++)
        if (x->key[i] != y->key[i])
            return x->key[i] < y->key[i];
    return 0;
}

static void class_sift(tile_class *v, size_t root, size_t n)
{
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n)
            return;
        if (child + 1 < n && class_less(&v[child], &v[child + 1]))
            child++;
        if (!class_less(&v[root], &v[child]))
            return;
        tile_class t = v[root];
        v[root] = v[child];
        v[child] = t;
        root = child;
    }
}

/* Heapsort (no allocation, unlike some qsort implementations), then equal
 * keys merged with their counts added. */
static void class_merge(class_list *l)
{
    tile_class *v = l->v;
    size_t n = l->n;
    if (n < 2)
        return;
    for (size_t i = n / 2; i-- > 0;)
        class_sift(v, i, n);
    for (size_t end = n - 1; end > 0; end--) {
        tile_class t = v[0];
        v[0] = v[end];
        v[end] = t;
        class_sift(v, 0, end);
    }
    size_t out = 0;
    for (size_t i = 1; i < n; i++) {
        if (memcmp(v[i].key, v[out].key, sizeof(v[i].key)) == 0)
            v[out].count += v[i].count;
        else
            v[++out] = v[i];
    }
    l->n = out + 1;
}

/* ------------------------------------------------------------------ */
/* The mixture: acc[k] = sum over tiles of P_t(X = k). */

typedef struct mixture {
    const tessel_allocator *alloc;
    pmf acc; /* lo = 0 */
    double nonempty, nonempty_var;
} mixture;

static int mix_add(mixture *mx, const pmf *f, uint64_t count)
{
    uint64_t end = f->lo + f->len;
    if (end > DENSITY_MAX_PMF)
        return TESSEL_ERANGE;
    if (end > mx->acc.len) {
        int rc = pmf_reserve(mx->alloc, &mx->acc, end);
        if (rc)
            return rc;
        memset(mx->acc.p + mx->acc.len, 0, (size_t)(end - mx->acc.len) * sizeof(double));
        mx->acc.len = end;
    }
    double w = (double)count, nonempty = 0;
    for (uint64_t i = 0; i < f->len; i++) {
        mx->acc.p[f->lo + i] += w * f->p[i];
        if (f->lo + i > 0)
            nonempty += f->p[i];
    }
    /* 1 - P(0) as the sum of the other terms: no cancellation when P(0) is
     * close to 1. */
    mx->nonempty += w * nonempty;
    double p0 = f->lo == 0 ? f->p[0] : 0;
    mx->nonempty_var += w * p0 * nonempty;
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* Validation. */

static int bad(tessel_diag *diag, int code, const char *field, const char *fmt, unsigned long long v)
{
    return tessel_diag_set(diag, code, NULL, 0, 0, field, fmt, v);
}

static int check_extent(tessel_diag *diag, const char *field, const char *what, uint64_t v)
{
    if (v == 0 || v > TESSEL_MAX_DIM)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, field,
                               "%s must be in 1..%llu, not %llu", what,
                               (unsigned long long)TESSEL_MAX_DIM, (unsigned long long)v);
    return TESSEL_OK;
}

static int check_density(const tessel_density_model *d, tessel_diag *diag)
{
    if (!(d->density > 0 && d->density <= 1)) /* also refuses NaN */
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "density",
                               "density must be in (0, 1], not %g", d->density);
    return TESSEL_OK;
}

static int validate(const tessel_density_model *d, const uint64_t *tile, tessel_diag *diag)
{
    if ((unsigned)d->kind >= KIND_COUNT)
        return bad(diag, TESSEL_EINVAL, "kind", "unknown density model kind %llu",
                   (unsigned long long)(unsigned)d->kind);
    int rc = check_extent(diag, "rows", "rows", d->rows);
    if (!rc)
        rc = check_extent(diag, "cols", "cols", d->cols);
    if (!rc && tile[0] == 0)
        rc = bad(diag, TESSEL_EINVAL, "tile", "tile rows must be >= 1, not %llu", 0ull);
    if (!rc && tile[1] == 0)
        rc = bad(diag, TESSEL_EINVAL, "tile", "tile columns must be >= 1, not %llu", 0ull);
    if (rc)
        return rc;
    uint64_t positions = d->rows * d->cols; /* both < 2^32: no wrap */
    switch (d->kind) {
    case TESSEL_DENSITY_UNIFORM:
        if (d->nnz > positions)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "nnz",
                                   "nnz %llu exceeds rows * cols = %llu",
                                   (unsigned long long)d->nnz, (unsigned long long)positions);
        if (d->nnz == 0)
            return check_density(d, diag);
        return TESSEL_OK;
    case TESSEL_DENSITY_BANDED:
    case TESSEL_DENSITY_FIXED:
        return check_density(d, diag);
    case TESSEL_DENSITY_NM:
        if (d->m == 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "m",
                                   "N:M needs m >= 1, not %u", d->m);
        if (d->n == 0 || d->n > d->m)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "n",
                                   "N:M needs 1 <= n <= m, not %u:%u", d->n, d->m);
        return TESSEL_OK;
    }
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* The tile grid: extent e = ceil(dims / t); `full` whole tiles per mode and
 * an edge tile of `rest` (0: none). */

typedef struct grid_shape {
    uint64_t dims[2], t[2], e[2], full[2], rest[2];
} grid_shape;

static grid_shape shape_of(const tessel_density_model *d, const uint64_t *tile)
{
    grid_shape g;
    g.dims[0] = d->rows;
    g.dims[1] = d->cols;
    for (int m = 0; m < 2; m++) {
        g.t[m] = min_u64(tile[m], g.dims[m]); /* a tile larger than the mode is cut to it */
        g.full[m] = g.dims[m] / g.t[m];
        g.rest[m] = g.dims[m] % g.t[m];
        g.e[m] = g.full[m] + (g.rest[m] != 0);
    }
    return g;
}

/* ------------------------------------------------------------------ */
/* uniform: four classes by tile positions P. */

static int uniform_classes(const grid_shape *g, class_list *l)
{
    const uint64_t h[2] = { g->t[0], g->rest[0] }, hn[2] = { g->full[0], g->rest[0] != 0 };
    const uint64_t w[2] = { g->t[1], g->rest[1] }, wn[2] = { g->full[1], g->rest[1] != 0 };
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            uint64_t key[CLASS_KEYS] = { h[i] * w[j] };
            int rc = class_push(l, key, hn[i] * wn[j]);
            if (rc)
                return rc;
        }
    return TESSEL_OK;
}

/* ------------------------------------------------------------------ */
/* banded: in-band positions per tile. */

/* sum_{k=0}^{n-1} clamp(a + k, 0, W), W >= 1. */
static uint64_t clamp_sum(int64_t a, uint64_t n, uint64_t W)
{
    uint64_t k0 = a >= 1 ? 0 : (uint64_t)(1 - a);                 /* first a + k >= 1 */
    uint64_t k1 = a >= (int64_t)W ? 0 : (uint64_t)((int64_t)W - a); /* first a + k >= W */
    k0 = min_u64(k0, n);
    k1 = min_u64(k1, n);
    uint64_t c = k1 - k0, sum = (n - k1) * W;
    if (c) {
        /* v0 + ... + v1 with c terms: halve the even factor first. */
        uint64_t v0 = (uint64_t)(a + (int64_t)k0), v1 = (uint64_t)(a + (int64_t)k1 - 1);
        sum += c % 2 == 0 ? c / 2 * (v0 + v1) : c * ((v0 + v1) / 2);
    }
    return sum;
}

/* #{(i, j) in [r0, r1) x [c0, c1) : j - i <= t}: row i holds the columns
 * c0 .. min(c1 - 1, i + t), i.e. clamp(i + t - c0 + 1, 0, c1 - c0) of them. */
static uint64_t below_diag(uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1, int64_t t)
{
    return clamp_sum((int64_t)r0 + t - (int64_t)c0 + 1, r1 - r0, c1 - c0);
}

/* B = #{(i, j) in the tile : |i - j| <= w} = F(w) - F(-w - 1). */
static uint64_t band_in_tile(uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1, uint64_t w)
{
    return below_diag(r0, r1, c0, c1, (int64_t)w) - below_diag(r0, r1, c0, c1, -(int64_t)w - 1);
}

/* The tiles of tile row I that meet the band, `times` times each. Runs of
 * equal counts (the tiles wholly inside a wide band) are pushed once. */
static int band_row(const grid_shape *g, uint64_t w, uint64_t I, uint64_t times, class_list *l)
{
    uint64_t r0 = I * g->t[0], r1 = min_u64(r0 + g->t[0], g->dims[0]);
    uint64_t jlo = r0 > w ? r0 - w : 0, jhi = min_u64(g->dims[1] - 1, r1 - 1 + w);
    uint64_t key[CLASS_KEYS] = { 0 }, run = 0;
    for (uint64_t J = jlo / g->t[1]; J <= jhi / g->t[1]; J++) {
        uint64_t c0 = J * g->t[1], c1 = min_u64(c0 + g->t[1], g->dims[1]);
        uint64_t B = band_in_tile(r0, r1, c0, c1, w);
        if (B == key[0]) {
            run++;
            continue;
        }
        int rc = key[0] ? class_push(l, key, run * times) : TESSEL_OK;
        if (rc)
            return rc;
        key[0] = B;
        run = 1;
    }
    return key[0] ? class_push(l, key, run * times) : TESSEL_OK;
}

/* Tile rows whose band tiles are all whole and away from column 0 and the
 * last column tile ("interior") see the band at the same offsets as the row
 * P = tc / gcd(tr, tc) further down (the rows move by lcm(tr, tc), a whole
 * number of tile columns), so one period of them stands for all. */
static int banded_classes(const tessel_density_model *d, const grid_shape *g, class_list *l)
{
    uint64_t w = min_u64(d->bandwidth, g->dims[0] > g->dims[1] ? g->dims[0] : g->dims[1]);
    uint64_t tr = g->t[0], tc = g->t[1];
    /* Rows from cols + w on hold no band position. */
    uint64_t rows_used = min_u64(g->dims[0], g->dims[1] + w);
    uint64_t last = (rows_used + tr - 1) / tr; /* tile rows that can meet the band */
    /* Interior: r0 >= w, I < full[0], r0 + tr - 1 + w < full[1] * tc. */
    uint64_t ia = (w + tr - 1) / tr, ib = 0;
    uint64_t right = g->full[1] * tc;
    if (right >= tr + w)
        ib = min_u64(g->full[0], (right - tr - w) / tr + 1);
    ib = min_u64(ib, last);
    if (ib < ia)
        ib = ia;
    uint64_t period = tc / tessel_gcd(tr, tc);
    int rc = TESSEL_OK;
    for (uint64_t I = 0; I < ia && I < last && !rc; I++)
        rc = band_row(g, w, I, 1, l);
    for (uint64_t r = 0; r < period && ia + r < ib && !rc; r++)
        rc = band_row(g, w, ia + r, (ib - ia - r + period - 1) / period, l);
    for (uint64_t I = ib > ia ? ib : ia; I < last && !rc; I++)
        rc = band_row(g, w, I, 1, l);
    return rc;
}

/* ------------------------------------------------------------------ */
/* N:M: one key per tile column class and tile height. */

/* The row descriptor of columns [c0, c1): constant plus up to two groups
 * cut by the tile (the first and the last group it meets). */
static void nm_row(const tessel_density_model *d, uint64_t c0, uint64_t c1, uint64_t *key)
{
    uint64_t m = d->m, cols = d->cols;
    uint64_t g0 = c0 / m, g1 = (c1 - 1) / m;
    uint64_t c = 0, part = 0;
    for (uint64_t gi = 0; gi < 2; gi++) {
        uint64_t grp = gi == 0 ? g0 : g1;
        if (gi == 1 && g1 == g0)
            break;
        uint64_t gs = grp * m, ge = min_u64(gs + m, cols);
        uint64_t width = ge - gs, keep = min_u64(d->n, width);
        uint64_t ov = min_u64(ge, c1) - (gs > c0 ? gs : c0);
        if (ov == width || keep == width)
            c += ov == width ? keep : ov; /* whole group, or a dense one */
        else {
            key[2 + 3 * part] = width;
            key[3 + 3 * part] = keep;
            key[4 + 3 * part] = ov;
            part++;
        }
    }
    /* Groups strictly between the first and last are whole (and full width:
     * only a row's last group is short). */
    if (g1 > g0 + 1)
        c += (g1 - g0 - 1) * d->n;
    key[1] = c;
}

static int nm_column(const tessel_density_model *d, const grid_shape *g, uint64_t J,
                     uint64_t times, class_list *l)
{
    uint64_t c0 = J * g->t[1], c1 = min_u64(c0 + g->t[1], g->dims[1]);
    uint64_t key[CLASS_KEYS] = { 0 };
    nm_row(d, c0, c1, key);
    key[0] = g->t[0];
    int rc = class_push(l, key, times * g->full[0]);
    if (!rc && g->rest[0]) {
        key[0] = g->rest[0];
        rc = class_push(l, key, times);
    }
    return rc;
}

/* Tile columns inside the whole groups (c1 <= (cols / m) * m) repeat every
 * m / gcd(tc, m) tiles; the rest (at most the last group's tiles and the
 * edge tile) are taken one by one. */
static int nm_classes(const tessel_density_model *d, const grid_shape *g, class_list *l)
{
    uint64_t tc = g->t[1], m = d->m;
    uint64_t whole = g->dims[1] / m * m;
    uint64_t jint = min_u64(whole / tc, g->full[1]);
    uint64_t period = m / tessel_gcd(tc, m);
    int rc = TESSEL_OK;
    for (uint64_t r = 0; r < period && r < jint && !rc; r++)
        rc = nm_column(d, g, r, (jint - r + period - 1) / period, l);
    for (uint64_t J = jint; J < g->e[1] && !rc; J++)
        rc = nm_column(d, g, J, 1, l);
    return rc;
}

/* One tile's pmf: the h-fold convolution of c + Hyp(...) + Hyp(...),
 * by repeated squaring. work holds three scratch pmfs. */
static int nm_tile_pmf(const tessel_allocator *a, const uint64_t *key, pmf *out, pmf *work)
{
    pmf *row = &work[0], *part = &work[1], *tmp = &work[2];
    int rc = point_mass(a, key[1], row);
    for (unsigned p = 0; p < 2 && !rc && key[2 + 3 * p]; p++) {
        ratio_dist r = hyper_dist(key[2 + 3 * p], key[3 + 3 * p], key[4 + 3 * p]);
        rc = ratio_pmf(a, &r, part);
        if (!rc)
            rc = pmf_convolve(a, row, part, tmp);
        if (!rc)
            pmf_swap(row, tmp);
    }
    if (rc)
        return rc;
    uint64_t h = key[0];
    if (row->len == 1) /* every row holds exactly c: no convolution */
        return (row->lo > DENSITY_MAX_PMF / h) ? TESSEL_ERANGE : point_mass(a, row->lo * h, out);
    rc = point_mass(a, 0, out);
    /* out = row^h: the squares of row are built in place. */
    while (!rc) {
        if (h & 1) {
            rc = pmf_convolve(a, out, row, tmp);
            if (rc)
                break;
            pmf_swap(out, tmp);
        }
        h >>= 1;
        if (!h)
            break;
        rc = pmf_convolve(a, row, row, tmp);
        if (!rc)
            pmf_swap(row, tmp);
    }
    return rc;
}

/* ------------------------------------------------------------------ */

/* fixed-structured: a tile of P positions holds P x d nonzeros, the ceiling
 * with probability frac(P x d) and the floor otherwise (Sparseloop's
 * fixed-structured model mixes floor and ceil so the mean is exact). */
static int fixed_pmf(const tessel_allocator *a, uint64_t P, double d, pmf *f)
{
    double x = (double)P * d, lo = floor(x), frac = x - lo;
    int rc = pmf_reserve(a, f, 2);
    if (rc)
        return rc;
    f->lo = (uint64_t)lo;
    f->p[0] = 1 - frac;
    f->p[1] = frac;
    f->len = frac > 0 ? 2 : 1;
    return TESSEL_OK;
}

static int fill_mixture(const tessel_density_model *d, uint64_t K, const class_list *l,
                        mixture *mx)
{
    const tessel_allocator *a = mx->alloc;
    pmf f = { 0 }, work[3] = { { 0 } };
    int rc = TESSEL_OK;
    uint64_t N = d->rows * d->cols;
    for (size_t i = 0; i < l->n && !rc; i++) {
        const uint64_t *key = l->v[i].key;
        if (d->kind == TESSEL_DENSITY_UNIFORM) {
            ratio_dist r = hyper_dist(N, K, key[0]);
            rc = ratio_pmf(a, &r, &f);
        } else if (d->kind == TESSEL_DENSITY_BANDED) {
            ratio_dist r = binomial_dist(key[0], d->density);
            rc = ratio_pmf(a, &r, &f);
        } else if (d->kind == TESSEL_DENSITY_FIXED) {
            rc = fixed_pmf(a, key[0], d->density, &f);
        } else {
            rc = nm_tile_pmf(a, key, &f, work);
        }
        if (!rc)
            rc = mix_add(mx, &f, l->v[i].count);
    }
    pmf_release(a, &f);
    for (int i = 0; i < 3; i++)
        pmf_release(a, &work[i]);
    return rc;
}

/* Expected nonzeros: uniform K; fixed-structured d per position; banded d times the band positions; N:M
 * rows times n per whole group plus min(n, width) of the short group. */
static double expected_nnz(const tessel_density_model *d, uint64_t K, const class_list *l)
{
    if (d->kind == TESSEL_DENSITY_UNIFORM)
        return (double)K;
    if (d->kind == TESSEL_DENSITY_FIXED)
        return (double)d->rows * (double)d->cols * d->density;
    if (d->kind == TESSEL_DENSITY_BANDED) {
        double band = 0;
        for (size_t i = 0; i < l->n; i++)
            band += (double)l->v[i].key[0] * (double)l->v[i].count;
        return band * d->density;
    }
    uint64_t per_row = d->cols / d->m * d->n + min_u64(d->n, d->cols % d->m);
    return (double)d->rows * (double)per_row;
}

static int fail(int rc, const grid_shape *g, tessel_diag *diag)
{
    if (rc == TESSEL_ENOMEM)
        return tessel_diag_oom(diag, NULL, "computing a density model's tile occupancy", 0);
    return tessel_diag_set(diag, rc, NULL, 0, 0, "tile",
                           "tiles of %llu x %llu can hold more nonzeros than the occupancy "
                           "distribution's limit of %llu values; use smaller tiles",
                           (unsigned long long)g->t[0], (unsigned long long)g->t[1],
                           (unsigned long long)DENSITY_MAX_PMF);
}

/* The per-tile occupancy distribution (pmf of nonzeros per tile) that a density model
 * implies for a tile shape. */
int tessel_density_occupancy_create(const tessel_density_model *d, const uint64_t *tile,
                                    const tessel_allocator *a, tessel_density_occupancy **out,
                                    tessel_diag *diag)
{
    if (!out)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL, "no output pointer");
    *out = NULL;
    if (!d || !tile)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, NULL,
                               d ? "no tile shape" : "no density model");
    int rc = validate(d, tile, diag);
    if (rc)
        return rc;
    grid_shape g = shape_of(d, tile);
    uint64_t N = d->rows * d->cols, K = d->nnz;
    if (d->kind == TESSEL_DENSITY_UNIFORM && K == 0) {
        /* round(density * N); density <= 1 keeps it within N (clamped
         * against the double rounding of N itself). */
        double x = floor(d->density * (double)N + 0.5);
        K = x >= (double)N ? N : (uint64_t)x;
    }

    tessel_density_occupancy *o = tessel_alloc(a, sizeof(*o));
    if (!o)
        return fail(TESSEL_ENOMEM, &g, diag);
    memset(o, 0, sizeof(*o));
    o->alloc = a;
    o->tiles = g.e[0] * g.e[1];

    class_list l = { a, NULL, 0, 0 };
    mixture mx = { a, { 0 }, 0, 0 };
    if (d->kind == TESSEL_DENSITY_UNIFORM || d->kind == TESSEL_DENSITY_FIXED)
        rc = uniform_classes(&g, &l);
    else if (d->kind == TESSEL_DENSITY_BANDED)
        rc = banded_classes(d, &g, &l);
    else
        rc = nm_classes(d, &g, &l);
    if (!rc) {
        class_merge(&l);
        rc = fill_mixture(d, K, &l, &mx);
    }
    if (!rc) {
        o->nnz = expected_nnz(d, K, &l);
        o->nonempty = mx.nonempty;
        o->nonempty_var = mx.nonempty_var;
    }
    tessel_dealloc(a, l.v);
    if (rc) {
        pmf_release(a, &mx.acc);
        tessel_density_occupancy_free(&o);
        return fail(rc, &g, diag);
    }
    if (o->nonempty > 0 && mx.acc.len > 1) {
        /* pmf[n] = sum_t P_t(n) / nonempty for n >= 1; cut where the upper
         * tail left out is below TAIL_CUT. */
        double *p = mx.acc.p;
        p[0] = 0;
        for (uint64_t k = 1; k < mx.acc.len; k++)
            p[k] /= o->nonempty;
        uint64_t len = mx.acc.len;
        double tail = 0;
        while (len > 1 && tail + p[len - 1] < TAIL_CUT)
            tail += p[--len];
        o->pmf = p;
        o->npmf = len;
        o->mean = o->nnz / o->nonempty;
    } else {
        pmf_release(a, &mx.acc);
        o->nonempty = o->nonempty_var = 0;
    }
    *out = o;
    return TESSEL_OK;
}

void tessel_density_occupancy_free(tessel_density_occupancy **op)
{
    if (!op || !*op)
        return;
    tessel_density_occupancy *o = *op;
    *op = NULL;
    tessel_dealloc(o->alloc, o->pmf);
    tessel_dealloc(o->alloc, o);
}

/* Cumulative probabilities within QUANTILE_SLACK of q count as reaching it,
 * so a q that the pmf reaches exactly in real arithmetic is not pushed one
 * value up by rounding (the same concern as tessel_occupancy_quantile's). */
#define QUANTILE_SLACK 1e-12

uint64_t tessel_density_quantile(const tessel_density_occupancy *o, double q)
{
    if (!o || o->npmf < 2)
        return 0;
    if (!(q > 0)) {
        for (uint64_t n = 1; n < o->npmf; n++)
            if (o->pmf[n] > 0)
                return n;
    }
    if (q >= 1)
        return o->npmf - 1;
    double cum = 0;
    for (uint64_t n = 1; n < o->npmf; n++) {
        cum += o->pmf[n];
        if (cum >= q - QUANTILE_SLACK)
            return n;
    }
    return o->npmf - 1;
}

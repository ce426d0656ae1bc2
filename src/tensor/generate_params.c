/* The parameters of tessel gen's kinds (generate.c draws the matrices):
 * names, defaults, the exact number of positions each kind may fill, and
 * validation of every parameter before anything is drawn. */
#include <math.h>
#include <string.h>

#include "generate_internal.h"

static const char *const kind_names[] = { "uniform", "banded", "rmat", "blockdiag", "nm", "clustered",
                                          "fixed-structured" };
#define KIND_COUNT (sizeof(kind_names) / sizeof(kind_names[0]))

void tessel_gen_params_init(tessel_gen_params *p, tessel_gen_kind kind)
{
    memset(p, 0, sizeof(*p));
    p->kind = kind;
    p->density = 1.0;
    p->a = 0.57;
    p->b = 0.19;
    p->c = 0.19;
    p->d = 0.05;
    p->n = 2;
    p->m = 4;
    p->seed = 1;
    p->values = 1;
    p->clique_max = 32;
    p->alpha = 2.5;
    p->skew = 0.8;
}

int tessel_gen_kind_from_name(const char *name)
{
    if (!name)
        return -1;
    for (unsigned k = 0; k < KIND_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return (int)k;
    if (strcmp(name, "powerlaw") == 0)
        return TESSEL_GEN_RMAT;
    return -1;
}

const char *tessel_gen_kind_name(tessel_gen_kind kind)
{
    return (unsigned)kind < KIND_COUNT ? kind_names[kind] : "?";
}

/* ------------------------------------------------------------------ */
/* Exact position counts (validation and the tests' expectations). */

/* 0 + 1 + ... + (n - 1), halving before the product so it cannot wrap for
 * n <= 2^32. */
static uint64_t triangle(uint64_t n)
{
    if (n == 0)
        return 0;
    return n % 2 == 0 ? n / 2 * (n - 1) : n * ((n - 1) / 2);
}

/* A band wider than the matrix is the whole matrix; clamping keeps i + w + 1
 * from wrapping. */
uint64_t gen_band_clamp(const tessel_gen_params *p)
{
    uint64_t span = p->rows > p->cols ? p->rows : p->cols;
    return gen_min_u64(p->bandwidth, span);
}

/* Positions with |i - j| <= w in rows x cols: row i holds [lo, hi) with
 * lo = max(0, i - w), hi = min(cols, i + w + 1); rows from cols + w on are
 * empty. Sum of hi minus sum of lo over the non-empty rows. */
uint64_t gen_band_positions(const tessel_gen_params *p)
{
    uint64_t w = gen_band_clamp(p), rows = p->rows, cols = p->cols;
    uint64_t nonempty = gen_min_u64(rows, cols + w);
    /* hi = i + w + 1 while i < cols - w, cols afterwards. */
    uint64_t rising = cols > w ? gen_min_u64(nonempty, cols - w) : 0;
    uint64_t sum_hi = triangle(rising) + rising * (w + 1) + (nonempty - rising) * cols;
    /* lo = i - w for i > w. */
    uint64_t sum_lo = nonempty > w + 1 ? triangle(nonempty - w) : 0;
    return sum_hi - sum_lo;
}

/* A block larger than the matrix is one block covering it. */
uint64_t gen_block_clamp(const tessel_gen_params *p)
{
    uint64_t span = p->rows > p->cols ? p->rows : p->cols;
    return gen_min_u64(p->block, span);
}

/* Block q covers rows [qB, min((q+1)B, rows)) x cols [qB, min((q+1)B, cols)):
 * full blocks, then at most one block cut by a border. */
uint64_t gen_block_positions(const tessel_gen_params *p)
{
    uint64_t bs = gen_block_clamp(p);
    uint64_t full = gen_min_u64(p->rows / bs, p->cols / bs);
    uint64_t area = full * bs * bs;
    uint64_t rest_r = p->rows - full * bs, rest_c = p->cols - full * bs;
    if (rest_r && rest_c)
        area += gen_min_u64(bs, rest_r) * gen_min_u64(bs, rest_c);
    return area;
}

static uint64_t nm_entries(const tessel_gen_params *p)
{
    uint64_t per_row = p->cols / p->m * p->n + gen_min_u64(p->n, p->cols % p->m);
    return p->rows * per_row;
}

/* Mean entries of one clique of size s in [2, smax], P(s) ~ s^-alpha:
 * E[s (s - 1)]. */
static double clique_mean_entries(uint64_t smax, double alpha)
{
    double z = 0, m = 0;
    for (uint64_t s = 2; s <= smax; s++) {
        double w = pow((double)s, -alpha);
        z += w;
        m += w * (double)s * (double)(s - 1);
    }
    return z > 0 ? m / z : 0;
}

/* ------------------------------------------------------------------ */
/* Validation: every parameter the kind uses, before anything is drawn. */

static int invalid(tessel_diag *diag, const char *field, const char *fmt, double value)
{
    return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, field, fmt, value);
}

static int check_extent(tessel_diag *diag, const char *field, uint64_t v)
{
    if (v == 0 || v > TESSEL_MAX_DIM)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, field,
                               "%s must be in 1..%llu, not %llu", field,
                               (unsigned long long)TESSEL_MAX_DIM, (unsigned long long)v);
    return TESSEL_OK;
}

static int check_density(const tessel_gen_params *p, tessel_diag *diag)
{
    if (!(p->density > 0 && p->density <= 1)) /* also refuses NaN */
        return invalid(diag, "density", "density must be in (0, 1], not %g", p->density);
    return TESSEL_OK;
}

static int check_rmat(const tessel_gen_params *p, tessel_diag *diag)
{
    const double q[4] = { p->a, p->b, p->c, p->d };
    static const char *const names[4] = { "a", "b", "c", "d" };
    for (int i = 0; i < 4; i++)
        if (!(q[i] >= 0 && q[i] <= 1))
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, names[i],
                                   "R-MAT probability %s must be in [0, 1], not %g", names[i],
                                   q[i]);
    double sum = q[0] + q[1] + q[2] + q[3];
    if (fabs(sum - 1) > 1e-9)
        return invalid(diag, "a", "R-MAT probabilities a + b + c + d must sum to 1, not %.12g",
                       sum);
    return TESSEL_OK;
}

static int check_clustered(const tessel_gen_params *p, tessel_diag *diag)
{
    if (p->rows != p->cols)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "cols",
                               "clustered graphs are square: rows %llu != cols %llu",
                               (unsigned long long)p->rows, (unsigned long long)p->cols);
    if (p->rows < 2)
        return invalid(diag, "rows", "clustered graphs need at least 2 vertices, not %g",
                       (double)p->rows);
    if (p->clique_max < 2 || p->clique_max > p->rows || p->clique_max > CLIQUE_MAX_SIZE)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "clique_max",
                               "clique_max must be in 2..min(rows, %u), not %llu",
                               CLIQUE_MAX_SIZE, (unsigned long long)p->clique_max);
    if (!(p->alpha >= 0 && p->alpha <= 10)) /* also refuses NaN */
        return invalid(diag, "alpha", "alpha (clique size exponent) must be in [0, 10], not %g",
                       p->alpha);
    if (!(p->skew >= 0 && p->skew <= 4))
        return invalid(diag, "skew", "skew (popularity exponent) must be in [0, 4], not %g",
                       p->skew);
    return TESSEL_OK;
}

/* Every parameter of the kind, and the expected entries (at most 2^32). */
int gen_validate(const tessel_gen_params *p, uint64_t *expected_out, tessel_diag *diag)
{
    if ((unsigned)p->kind >= KIND_COUNT)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "kind",
                               "unknown generator kind %d", (int)p->kind);
    int rc = check_extent(diag, "rows", p->rows);
    if (!rc)
        rc = check_extent(diag, "cols", p->cols);
    if (rc)
        return rc;
    /* MT19937 takes a 32-bit seed; larger ones would silently repeat. */
    if (p->seed > UINT32_MAX)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "seed",
                               "seed must be in 0..%lu (a 32-bit seed), not %llu",
                               (unsigned long)UINT32_MAX, (unsigned long long)p->seed);
    uint64_t positions = p->rows * p->cols; /* < 2^64: both are < 2^32 */
    double expected = 0;
    switch (p->kind) {
    case TESSEL_GEN_UNIFORM:
        if (p->nnz > positions)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "nnz",
                                   "nnz %llu exceeds rows * cols", (unsigned long long)p->nnz);
        expected = (double)p->nnz;
        break;
    case TESSEL_GEN_BANDED:
        if ((rc = check_density(p, diag)))
            return rc;
        expected = (double)gen_band_positions(p) * p->density;
        break;
    case TESSEL_GEN_BLOCKDIAG:
        if (p->block == 0)
            return invalid(diag, "block", "block must be >= 1, not %g", 0.0);
        if ((rc = check_density(p, diag)))
            return rc;
        expected = (double)gen_block_positions(p) * p->density;
        break;
    case TESSEL_GEN_RMAT:
        if ((rc = check_rmat(p, diag)))
            return rc;
        expected = (double)p->nnz;
        break;
    case TESSEL_GEN_NM:
        if (p->m == 0)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "m",
                                   "N:M needs m >= 1, not %u", p->m);
        if (p->n == 0 || p->n > p->m)
            return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "n",
                                   "N:M needs 1 <= n <= m, not %u:%u", p->n, p->m);
        expected = (double)nm_entries(p);
        break;
    case TESSEL_GEN_FIXED:
        if ((rc = check_density(p, diag)))
            return rc;
        expected = (double)positions * p->density + (double)p->rows;
        break;
    case TESSEL_GEN_CLUSTERED:
        if ((rc = check_clustered(p, diag)))
            return rc;
        expected = (double)p->cliques * clique_mean_entries(p->clique_max, p->alpha) +
                   2 * (double)p->tail;
        break;
    }
    if (expected > (double)GEN_MAX_ENTRIES)
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                               "%s would give about %.4g entries; generated tensors are limited "
                               "to 2^32 entries",
                               kind_names[p->kind], expected);
    *expected_out = (uint64_t)expected;
    return TESSEL_OK;
}

/* Seeded synthetic sparse matrices (GSL's MT19937): the same parameters and
 * seed give the same matrix on every machine.
 *
 *   uniform    exactly nnz distinct positions: draw linear positions, sort,
 *              drop repeats, redraw the shortfall; above half the positions
 *              the excluded set is drawn instead
 *   banded     each position with |i - j| <= bandwidth kept with `density`
 *   blockdiag  each position of the diagonal blocks kept with `density`
 *   rmat       nnz R-MAT draws (a, b, c, d), repeats merged
 *   nm         every aligned group of m columns of a row holds exactly n
 *
 * Bernoulli selections walk geometric gaps, so their cost follows the kept
 * entries, not the positions considered. GSL reports failures through its
 * error handler: the CLI turns it off, and all inputs are checked here so
 * GSL is never handed an invalid argument. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "tessel/tensor.h"

/* Generated tensors stay within what the builder indexes comfortably. */
#define GEN_MAX_ENTRIES (1ull << 32)

static const char *const kind_names[] = { "uniform", "banded", "rmat", "blockdiag", "nm" };

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
}

int tessel_gen_kind_from_name(const char *name)
{
    for (int k = 0; k < (int)(sizeof(kind_names) / sizeof(kind_names[0])); k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    if (strcmp(name, "powerlaw") == 0)
        return TESSEL_GEN_RMAT;
    return -1;
}

const char *tessel_gen_kind_name(tessel_gen_kind kind)
{
    return (unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

static int invalid(tessel_diag *diag, const char *field, const char *fmt, double value)
{
    return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, field, fmt, value);
}

static int probability_ok(double p)
{
    return p >= 0 && p <= 1; /* false for NaN */
}

/* Expected entry count, for the size cap. */
static double expected_entries(const tessel_gen_params *p)
{
    double rows = (double)p->rows, cols = (double)p->cols;
    switch (p->kind) {
    case TESSEL_GEN_UNIFORM:
    case TESSEL_GEN_RMAT:
        return (double)p->nnz;
    case TESSEL_GEN_BANDED:
        return rows * fmin(cols, 2.0 * (double)p->bandwidth + 1) * p->density;
    case TESSEL_GEN_BLOCKDIAG:
        return fmin(rows, cols) * (double)p->block * p->density;
    case TESSEL_GEN_NM:
        return rows * cols * (double)p->n / (double)p->m;
    }
    return 0;
}

static int validate(const tessel_gen_params *p, tessel_diag *diag)
{
    if ((unsigned)p->kind > TESSEL_GEN_NM)
        return invalid(diag, "kind", "unknown generator kind %g", (double)p->kind);
    if (p->rows == 0 || p->cols == 0 || p->rows > TESSEL_MAX_DIM || p->cols > TESSEL_MAX_DIM)
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "rows",
                               "rows and cols must be in 1..%llu",
                               (unsigned long long)TESSEL_MAX_DIM);
    int bernoulli = p->kind == TESSEL_GEN_BANDED || p->kind == TESSEL_GEN_BLOCKDIAG;
    if (bernoulli && !(p->density > 0 && p->density <= 1))
        return invalid(diag, "density", "density must be in (0, 1], not %g", p->density);
    if (p->kind == TESSEL_GEN_UNIFORM && (double)p->nnz > (double)p->rows * (double)p->cols)
        return invalid(diag, "nnz", "nnz %g exceeds rows * cols", (double)p->nnz);
    if (p->kind == TESSEL_GEN_BLOCKDIAG && p->block == 0)
        return invalid(diag, "block", "block must be >= 1, not %g", 0.0);
    if (p->kind == TESSEL_GEN_NM && (p->m == 0 || p->n == 0 || p->n > p->m))
        return tessel_diag_set(diag, TESSEL_EINVAL, NULL, 0, 0, "n",
                               "N:M needs 1 <= n <= m, not %u:%u", p->n, p->m);
    if (p->kind == TESSEL_GEN_RMAT) {
        double q[4] = { p->a, p->b, p->c, p->d };
        for (int i = 0; i < 4; i++)
            if (!probability_ok(q[i]))
                return invalid(diag, "a", "R-MAT probabilities must be in [0, 1], not %g", q[i]);
        if (fabs(q[0] + q[1] + q[2] + q[3] - 1) > 1e-9)
            return invalid(diag, "a", "R-MAT probabilities must sum to 1, not %g",
                           q[0] + q[1] + q[2] + q[3]);
    }
    if (expected_entries(p) > (double)GEN_MAX_ENTRIES)
        return tessel_diag_set(diag, TESSEL_ERANGE, NULL, 0, 0, NULL,
                               "about %.3g entries requested; the generators stop at 2^32",
                               expected_entries(p));
    return TESSEL_OK;
}

typedef struct generator {
    const tessel_allocator *alloc;
    const tessel_gen_params *p;
    gsl_rng *rng;
    tessel_coo_builder *b;
} generator;

static double draw_value(generator *g)
{
    return 1.0 - gsl_rng_uniform(g->rng); /* (0, 1] */
}

static int emit(generator *g, uint64_t i, uint64_t j)
{
    uint32_t c[2] = { (uint32_t)i, (uint32_t)j };
    return tessel_coo_builder_add(g->b, c, g->p->values ? draw_value(g) : 1.0);
}

/* Uniform 64-bit integer in [0, n), n >= 1, without modulo bias. */
static uint64_t draw_below(gsl_rng *rng, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
        uint64_t x = ((uint64_t)gsl_rng_get(rng) << 32) | (uint64_t)gsl_rng_get(rng);
        if (x < limit)
            return x % n;
    }
}

/* Keeps every position in [lo, hi] of row i with probability density,
 * jumping over geometric gaps (a Bernoulli process may restart per row). */
static int bernoulli_row(generator *g, uint64_t i, uint64_t lo, uint64_t hi)
{
    double p = g->p->density;
    for (uint64_t j = lo; j <= hi; j++) {
        if (p < 1) {
            unsigned gap = gsl_ran_geometric(g->rng, p) - 1;
            if (gap > hi - j)
                return TESSEL_OK;
            j += gap;
        }
        int rc = emit(g, i, j);
        if (rc)
            return rc;
    }
    return TESSEL_OK;
}

static int gen_banded(generator *g)
{
    const tessel_gen_params *p = g->p;
    int rc = TESSEL_OK;
    for (uint64_t i = 0; i < p->rows && !rc; i++) {
        uint64_t lo = i > p->bandwidth ? i - p->bandwidth : 0;
        uint64_t hi = i + p->bandwidth < p->cols - 1 ? i + p->bandwidth : p->cols - 1;
        if (lo <= hi && lo < p->cols)
            rc = bernoulli_row(g, i, lo, hi);
    }
    return rc;
}

static int gen_blockdiag(generator *g)
{
    const tessel_gen_params *p = g->p;
    int rc = TESSEL_OK;
    for (uint64_t i = 0; i < p->rows && !rc; i++) {
        uint64_t lo = i / p->block * p->block;
        uint64_t hi = lo + p->block - 1 < p->cols - 1 ? lo + p->block - 1 : p->cols - 1;
        if (lo < p->cols)
            rc = bernoulli_row(g, i, lo, hi);
    }
    return rc;
}

static int gen_nm(generator *g)
{
    const tessel_gen_params *p = g->p;
    uint32_t *all = tessel_alloc_array(g->alloc, p->m, sizeof(uint32_t));
    uint32_t *pick = tessel_alloc_array(g->alloc, p->n, sizeof(uint32_t));
    int rc = all && pick ? TESSEL_OK : TESSEL_ENOMEM;
    for (uint64_t i = 0; i < p->rows && !rc; i++)
        for (uint64_t base = 0; base < p->cols && !rc; base += p->m) {
            unsigned width = p->cols - base < p->m ? (unsigned)(p->cols - base) : p->m;
            unsigned keep = p->n < width ? p->n : width;
            for (unsigned k = 0; k < width; k++)
                all[k] = k;
            gsl_ran_choose(g->rng, pick, keep, all, width, sizeof(uint32_t));
            for (unsigned k = 0; k < keep && !rc; k++)
                rc = emit(g, i, base + pick[k]);
        }
    tessel_dealloc(g->alloc, all);
    tessel_dealloc(g->alloc, pick);
    return rc;
}

static unsigned bits_to_cover(uint64_t n)
{
    unsigned bits = 0;
    while (bits < 64 && (1ull << bits) < n)
        bits++;
    return bits;
}

/* One R-MAT draw: each level picks a quadrant with (a, b, c, d); where only
 * one of the two dimensions still has bits, it picks a half with the
 * marginal probabilities. Returns 0 when the draw falls outside. */
static int rmat_draw(generator *g, unsigned row_bits, unsigned col_bits, uint64_t *i, uint64_t *j)
{
    const tessel_gen_params *p = g->p;
    uint64_t r = 0, c = 0;
    unsigned levels = row_bits > col_bits ? row_bits : col_bits;
    for (unsigned level = 0; level < levels; level++) {
        int has_row = level < row_bits, has_col = level < col_bits;
        double u = gsl_rng_uniform(g->rng);
        int down, right;
        if (has_row && has_col) {
            down = u >= p->a + p->b;
            right = down ? u >= p->a + p->b + p->c : u >= p->a;
        } else if (has_row) {
            down = u >= p->a + p->b;
            right = 0;
        } else {
            down = 0;
            right = u >= p->a + p->c;
        }
        if (has_row)
            r = (r << 1) | (uint64_t)down;
        if (has_col)
            c = (c << 1) | (uint64_t)right;
    }
    *i = r;
    *j = c;
    return r < p->rows && c < p->cols;
}

static int gen_rmat(generator *g)
{
    const tessel_gen_params *p = g->p;
    unsigned row_bits = bits_to_cover(p->rows), col_bits = bits_to_cover(p->cols);
    int rc = tessel_coo_builder_reserve(g->b, p->nnz);
    for (uint64_t k = 0; k < p->nnz && !rc; k++) {
        uint64_t i, j;
        while (!rmat_draw(g, row_bits, col_bits, &i, &j))
            ;
        rc = emit(g, i, j);
    }
    return rc;
}

/* `count` distinct positions in [0, positions), ascending, into *out. */
static int distinct_positions(generator *g, uint64_t positions, uint64_t count, uint64_t **out)
{
    *out = NULL;
    if (count == 0)
        return TESSEL_OK;
    uint64_t *pos = tessel_alloc_array(g->alloc, count, sizeof(uint64_t));
    uint64_t *scratch = tessel_alloc_array(g->alloc, count, sizeof(uint64_t));
    if (!pos || !scratch) {
        tessel_dealloc(g->alloc, pos);
        tessel_dealloc(g->alloc, scratch);
        return TESSEL_ENOMEM;
    }
    uint64_t have = 0;
    while (have < count) {
        for (uint64_t k = have; k < count; k++)
            pos[k] = draw_below(g->rng, positions);
        tessel_sort_u64(pos, scratch, count, positions - 1);
        have = 1;
        for (uint64_t k = 1; k < count; k++)
            if (pos[k] != pos[have - 1])
                pos[have++] = pos[k];
    }
    tessel_dealloc(g->alloc, scratch);
    *out = pos;
    return TESSEL_OK;
}

static int gen_uniform(generator *g)
{
    const tessel_gen_params *p = g->p;
    uint64_t positions = p->rows * p->cols;
    int complement = p->nnz > positions / 2;
    uint64_t *pos = NULL;
    uint64_t count = complement ? positions - p->nnz : p->nnz;
    int rc = distinct_positions(g, positions, count, &pos);
    if (!rc)
        rc = tessel_coo_builder_reserve(g->b, p->nnz);
    if (!complement) {
        for (uint64_t k = 0; k < count && !rc; k++)
            rc = emit(g, pos[k] / p->cols, pos[k] % p->cols);
    } else {
        uint64_t next = 0;
        for (uint64_t x = 0; x < positions && !rc; x++) {
            if (next < count && pos[next] == x) {
                next++;
                continue;
            }
            rc = emit(g, x / p->cols, x % p->cols);
        }
    }
    tessel_dealloc(g->alloc, pos);
    return rc;
}

int tessel_generate(const tessel_gen_params *p, const tessel_allocator *a, tessel_tensor **out,
                    tessel_diag *diag)
{
    *out = NULL;
    int rc = validate(p, diag);
    if (rc)
        return rc;
    generator g = { a, p, gsl_rng_alloc(gsl_rng_mt19937), NULL };
    if (!g.rng)
        return tessel_diag_set(diag, TESSEL_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    gsl_rng_set(g.rng, (unsigned long)p->seed);
    uint64_t dims[2] = { p->rows, p->cols };
    rc = tessel_coo_builder_create(2, dims, p->values, a, &g.b, diag);
    if (!rc) {
        switch (p->kind) {
        case TESSEL_GEN_UNIFORM: rc = gen_uniform(&g); break;
        case TESSEL_GEN_BANDED: rc = gen_banded(&g); break;
        case TESSEL_GEN_RMAT: rc = gen_rmat(&g); break;
        case TESSEL_GEN_BLOCKDIAG: rc = gen_blockdiag(&g); break;
        case TESSEL_GEN_NM: rc = gen_nm(&g); break;
        }
        if (rc)
            rc = tessel_diag_set(diag, rc, NULL, 0, 0, NULL, "out of memory");
        else
            rc = tessel_coo_builder_finish(g.b, 0, out, diag);
    }
    tessel_coo_builder_free(&g.b);
    gsl_rng_free(g.rng);
    return rc;
}

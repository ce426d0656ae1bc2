/* The statistics pass (tessel_tile_grid_build, 128 per mode) in ns per
 * nonzero on each file given and on synthetic matrices built in-process,
 * beside a plain memcpy of the same CSR arrays (ptr, idx[1], values) in the
 * same run: the pass reads those arrays once, so memcpy is its floor.
 * Best of 5 each.
 *
 * usage: bench_stats [--synthetic-nnz N] [--synthetic-size N] FILE...
 * (--synthetic-nnz 0 skips the synthetic matrices; defaults 20M on 2M x 2M) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/stats.h"

#define RUNS 5
#define TILE 128
#define TARGET_RATIO 5.0

typedef struct stats_ctx {
    const tessel_tensor *t;
    uint64_t tile[TESSEL_MAX_ORDER];
    uint64_t nonempty;
    /* memcpy destinations, touched once before timing (no page faults) */
    void *dst[3];
    const void *src[3];
    size_t bytes[3];
} stats_ctx;

static int run_grid(void *p)
{
    stats_ctx *c = p;
    tessel_tile_grid *g = NULL;
    int rc = tessel_tile_grid_build(c->t, c->tile, NULL, &g, NULL);
    if (!rc)
        c->nonempty = g->nonempty;
    tessel_tile_grid_free(&g);
    return rc;
}

static int run_memcpy(void *p)
{
    stats_ctx *c = p;
    for (int i = 0; i < 3; i++)
        if (c->bytes[i])
            memcpy(c->dst[i], c->src[i], c->bytes[i]);
    return 0;
}

static int ctx_init(stats_ctx *c, const tessel_tensor *t)
{
    memset(c, 0, sizeof(*c));
    c->t = t;
    for (unsigned m = 0; m < TESSEL_MAX_ORDER; m++)
        c->tile[m] = TILE;
    c->src[0] = t->ptr;
    c->bytes[0] = (t->dims[0] + 1) * sizeof(uint64_t);
    if (t->order > 1 && t->nnz) {
        c->src[1] = t->idx[1];
        c->bytes[1] = t->nnz * sizeof(uint32_t);
    }
    if (t->values) {
        c->src[2] = t->values;
        c->bytes[2] = t->nnz * sizeof(double);
    }
    for (int i = 0; i < 3; i++) {
        if (!c->bytes[i])
            continue;
        if (!(c->dst[i] = malloc(c->bytes[i])))
            return -1;
        memset(c->dst[i], 0, c->bytes[i]);
    }
    return 0;
}

static void ctx_free(stats_ctx *c)
{
    for (int i = 0; i < 3; i++)
        free(c->dst[i]);
}

static void bench_one(const char *name, const tessel_tensor *t)
{
    stats_ctx c;
    if (ctx_init(&c, t)) {
        fprintf(stderr, "bench_stats: %s: out of memory\n", name);
        ctx_free(&c);
        return;
    }
    double t_grid = bench_best_of(RUNS, run_grid, &c);
    double t_copy = bench_best_of(RUNS, run_memcpy, &c);
    ctx_free(&c);
    if (t_grid < 0) {
        fprintf(stderr, "bench_stats: %s: the grid could not be built\n", name);
        return;
    }
    double n = t->nnz ? (double)t->nnz : 1;
    double ratio = t_copy > 0 ? t_grid / t_copy : 0;
    printf("%-26s %10llu %10llu %10llu %9.3f %8.2f %9.3f %8.2f %7.2fx\n", name,
           (unsigned long long)t->dims[0], (unsigned long long)t->nnz,
           (unsigned long long)c.nonempty, t_grid * 1e3, t_grid * 1e9 / n, t_copy * 1e3,
           t_copy * 1e9 / n, ratio);
    printf("SUMMARY|stats pass %s|%.2f ns/nnz, %.2fx memcpy|<= %.0fx memcpy\n", name,
           t_grid * 1e9 / n, ratio, TARGET_RATIO);
}

static void header(void)
{
    printf("%-26s %10s %10s %10s %9s %8s %9s %8s %8s\n", "matrix", "rows", "nnz", "tiles>0",
           "grid ms", "ns/nnz", "copy ms", "ns/nnz", "ratio");
}

int main(int argc, char **argv)
{
    uint64_t synth_nnz = 20000000, synth_size = 2000000;
    int first = 1;
    while (first + 1 < argc && strncmp(argv[first], "--synthetic-", 12) == 0) {
        uint64_t v = strtoull(argv[first + 1], NULL, 10);
        if (strcmp(argv[first], "--synthetic-nnz") == 0)
            synth_nnz = v;
        else if (strcmp(argv[first], "--synthetic-size") == 0)
            synth_size = v;
        else
            break;
        first += 2;
    }
    printf("Statistics pass, %dx%d tiles, vs memcpy of the CSR arrays (best of %d)\n", TILE,
           TILE, RUNS);
    header();
    for (int i = first; i < argc; i++) {
        tessel_tensor *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        if (tessel_tensor_load(argv[i], NULL, NULL, &t, NULL, &d)) {
            fprintf(stderr, "bench_stats: %s: %s\n", argv[i], d.message);
            continue;
        }
        bench_one(bench_basename(argv[i]), t);
        tessel_tensor_free(&t);
    }
    if (synth_nnz == 0)
        return 0;
    static const struct {
        bench_synth_kind kind;
        const char *name;
    } synth[] = { { BENCH_SYNTH_UNIFORM, "synthetic-uniform" }, { BENCH_SYNTH_RMAT, "synthetic-rmat" } };
    for (size_t s = 0; s < sizeof(synth) / sizeof(synth[0]); s++) {
        tessel_tensor *t = NULL;
        double t0 = bench_now();
        if (bench_synthetic(synth[s].kind, synth_size, synth_nnz, 7, NULL, &t)) {
            fprintf(stderr, "bench_stats: %s: could not build\n", synth[s].name);
            continue;
        }
        fprintf(stderr, "bench_stats: built %s (%llu nnz) in %.1f s\n", synth[s].name,
                (unsigned long long)t->nnz, bench_now() - t0);
        bench_one(synth[s].name, t);
        tessel_tensor_free(&t);
    }
    return 0;
}

/* Peak memory of the statistics pass next to the matrix itself: a counting
 * allocator around tessel_tile_grid_build (128 per mode) and
 * tessel_occupancy_create, on each file given and on synthetic matrices.
 * Reported: (tensor bytes + peak bytes of the pass) / CSR bytes, CSR bytes
 * being 8*(rows+1) + 4*nnz + 8*nnz (plain CSR with values).
 *
 * usage: bench_memory [--synthetic-nnz N] [--synthetic-size N] FILE... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/stats.h"

#define TILE 128
#define TARGET_RATIO 1.5

static void measure(const char *name, const tessel_tensor *t)
{
    bench_alloc ba;
    bench_alloc_init(&ba);
    uint64_t tile[TESSEL_MAX_ORDER];
    for (unsigned m = 0; m < TESSEL_MAX_ORDER; m++)
        tile[m] = TILE;
    tessel_tile_grid *g = NULL;
    tessel_occupancy *o = NULL;
    int rc = tessel_tile_grid_build(t, tile, &ba.allocator, &g, NULL);
    if (!rc)
        rc = tessel_occupancy_create(g, &o, NULL);
    uint64_t nonempty = g ? g->nonempty : 0;
    size_t held = ba.live; /* grid + occupancy, kept for the statistics */
    tessel_occupancy_free(&o);
    tessel_tile_grid_free(&g);
    if (rc) {
        fprintf(stderr, "bench_memory: %s: %s\n", name, tessel_strerror(rc));
        return;
    }
    uint64_t tensor = tessel_tensor_bytes(t);
    uint64_t csr = bench_csr_bytes(t);
    double ratio = (double)(tensor + ba.peak) / (double)csr;
    printf("%-26s %10llu %10llu %10.2f %10.2f %10.2f %10.2f %7.3f\n", name,
           (unsigned long long)t->nnz, (unsigned long long)nonempty, (double)csr / 1e6,
           (double)tensor / 1e6, (double)ba.peak / 1e6, (double)held / 1e6, ratio);
    printf("SUMMARY|memory %s|%.3f x CSR (pass peak %.1f MB)|<= %.1f\n", name, ratio,
           (double)ba.peak / 1e6, TARGET_RATIO);
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
    printf("Peak memory of the statistics pass (grid %dx%d + occupancy), MB = 10^6 bytes\n",
           TILE, TILE);
    printf("%-26s %10s %10s %10s %10s %10s %10s %7s\n", "matrix", "nnz", "tiles>0", "CSR MB",
           "tensor MB", "peak MB", "kept MB", "ratio");
    for (int i = first; i < argc; i++) {
        tessel_tensor *t = NULL;
        tessel_diag d;
        tessel_diag_clear(&d);
        if (tessel_tensor_load(argv[i], NULL, NULL, &t, NULL, &d)) {
            fprintf(stderr, "bench_memory: %s: %s\n", argv[i], d.message);
            continue;
        }
        measure(bench_basename(argv[i]), t);
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
        if (bench_synthetic(synth[s].kind, synth_size, synth_nnz, 7, NULL, &t)) {
            fprintf(stderr, "bench_memory: %s: could not build\n", synth[s].name);
            continue;
        }
        measure(synth[s].name, t);
        tessel_tensor_free(&t);
    }
    return 0;
}

/* One exact estimate as bench/exact_memory.py measures it: the spec with its
 * overrides and matrix A (B = A), walked once; prints the estimator's
 * seconds, the effectual tile iterations per buffer level and their sum, so
 * the driver can relate time to iterations (the figure the CLI's reports do
 * not carry). --old runs the old walk (every key in memory at once).
 *
 *   bench_exact_walk [--old] SPEC MATRIX [PATH=VALUE ...]
 * prints: seconds S iterations N levels N1,N2,... dram_bytes D */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/model.h"

int main(int argc, char **argv)
{
    tessel_exact_options opt = { 0 };
    if (argc > 1 && !strcmp(argv[1], "--old")) {
        opt.old_walk = 1;
        argv++;
        argc--;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: bench_exact_walk [--old] SPEC MATRIX [PATH=VALUE ...]\n");
        return 2;
    }
    char bind[PATH_MAX + 32];
    if (bench_bind_matrix(bind, sizeof(bind), "A", argv[2]))
        return 1;
    const char *sets[32] = { bind, "workload.data.B=A" };
    size_t n = 2;
    for (int i = 3; i < argc && n < 32; i++)
        sets[n++] = argv[i];
    tessel_spec *spec = bench_spec_load(argv[1], sets, n, argv[2]);
    tessel_workload_data *data = spec ? bench_data_load(spec, argv[2]) : NULL;
    if (!data) {
        tessel_spec_free(&spec);
        return 1;
    }
    tessel_result r;
    tessel_diag diag;
    int rc = tessel_model_exact_opts(spec, data, NULL, &opt, NULL, NULL, &r, &diag);
    if (rc) {
        fprintf(stderr, "%s: %s\n", argv[2], diag.message);
    } else {
        uint64_t total = 0;
        char levels[256] = "";
        for (unsigned l = 1; l < spec->nlevels; l++) {
            size_t used = strlen(levels);
            snprintf(levels + used, sizeof(levels) - used, "%s%llu", l > 1 ? "," : "",
                     (unsigned long long)r.effectual_tiles[l]);
            total += r.effectual_tiles[l];
        }
        printf("seconds %.6f iterations %llu levels %s dram_bytes %llu\n", r.seconds,
               (unsigned long long)total, levels, (unsigned long long)r.dram_bytes);
    }
    tessel_workload_free(&data);
    tessel_spec_free(&spec);
    return rc ? 1 : 0;
}

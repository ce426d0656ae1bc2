/* The C side of bench/python_point.py: the design points a Python loop over
 * tessel.run(spec, stats=..., set=...) prices, priced from C through the same
 * calls (tessel_spec_derive, tessel_sweep_record_create with the statistics,
 * per-shape cache and strategy statistics collected once). Prints the best
 * mean seconds per point over the rounds:
 *   bench_binding SPEC MATRIX [ROUNDS] [text | values]
 * With `text`, each point's summary.csv text is written too (what a C
 * program writing the row pays). With `values`, each point is priced by
 * tessel_sweep_point_values, the one call tessel.run makes (derive,
 * record, numbers and text cells into arrays).
 * The grid (LLB size with its tile edge x loop order) is python_point.py's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/sweep.h"

static const char *const sizes[] = { "256KiB", "512KiB", "1MiB", "2MiB", "4MiB", "8MiB" };
static const unsigned edges[] = { 128, 128, 256, 256, 512, 512 };
static const char *const orders[] = { "IJK", "IKJ", "JIK", "JKI", "KIJ", "KJI" };

typedef struct ctx {
    const tessel_spec *spec;
    const tessel_workload_data *data;
    const tessel_stat_data *stats;
    tessel_stat_cache *cache;
    tessel_strategy_shared *shared;
    const tessel_energy_db *db;
    double checksum;
    int text;   /* also write each point's summary.csv text */
    int values; /* price through tessel_sweep_point_values (Python's fast path) */
    int64_t ints[TESSEL_SWEEP_VALUES_INTS];
    double doubles[TESSEL_SWEEP_VALUES_DOUBLES];
    char cells[TESSEL_REPORT_TEXTS_MAX];
} ctx;

static int one(ctx *c, size_t s, size_t o)
{
    char cap[64], ord[64], tile[96];
    snprintf(cap, sizeof(cap), "LLB.capacity=%s", sizes[s]);
    snprintf(ord, sizeof(ord), "mapping.LLB.order=%s", orders[o]);
    snprintf(tile, sizeof(tile), "mapping.LLB.tile=i:%u,k:%u,j:%u", edges[s], edges[s], edges[s]);
    const char *sets[3] = { cap, ord, tile };
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    if (c->values) { /* one call, as tessel.run makes it */
        int rc = tessel_sweep_point_values(c->spec, sets, 3, 1, c->data, c->stats, c->shared,
                                           c->cache, c->db, NULL, 0, NULL, c->ints, c->doubles,
                                           c->cells, NULL, &errors);
        if (!rc)
            c->checksum += c->doubles[1]; /* energy_pj */
        else if (errors.count)
            fprintf(stderr, "bench_binding: %s\n", errors.items[0].message);
        tessel_diag_list_free(&errors);
        return rc;
    }
    tessel_spec *p = NULL;
    tessel_sweep_record *r = NULL;
    int rc = tessel_spec_derive(c->spec, sets, 3, NULL, &p, &errors);
    if (!rc)
        rc = tessel_sweep_record_create(p, 1, c->data, c->stats, c->shared, c->cache, c->db, NULL,
                                        0, NULL, &r, &errors);
    if (!rc && c->text && !tessel_sweep_record_text(r, 0, NULL))
        rc = TESSEL_ENOMEM;
    if (!rc)
        c->checksum += tessel_sweep_record_point(r)->energy_pj;
    else if (errors.count)
        fprintf(stderr, "bench_binding: %s\n", errors.items[0].message);
    tessel_sweep_record_free(&r);
    tessel_spec_free(&p);
    tessel_diag_list_free(&errors);
    return rc;
}

static int grid(void *arg)
{
    ((ctx *)arg)->checksum = 0; /* one round's sum */
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++)
            if (one(arg, s, o))
                return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_binding SPEC MATRIX [ROUNDS] [text | values]\n");
        return 2;
    }
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_spec *spec = NULL;
    tessel_workload_data *data = NULL;
    tessel_energy_db *db = NULL;
    tessel_stat_data *stats = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_tensor *a = NULL;
    if (tessel_spec_load(argv[1], NULL, 0, NULL, &spec, &errors) ||
        tessel_energy_db_load(spec, NULL, &db, &errors) ||
        tessel_tensor_load(argv[2], NULL, NULL, &a, NULL, &d)) {
        fprintf(stderr, "bench_binding: %s or %s does not load\n", argv[1], argv[2]);
        return 1;
    }
    tessel_tensor *given[TESSEL_SPEC_MAX_TENSORS] = { NULL, a };
    ctx c = { 0 };
    if (tessel_workload_bind(spec, given, NULL, NULL, NULL, &data, &errors) ||
        tessel_sweep_stats_create(spec, data, 0, 0, 0, 1, -1, NULL, &stats, &d) ||
        tessel_stat_cache_create(stats, NULL, &c.cache) ||
        tessel_strategy_shared_create(NULL, &c.shared)) {
        fprintf(stderr, "bench_binding: statistics failed\n");
        return 1;
    }
    c.spec = spec;
    c.data = data;
    c.stats = stats;
    c.db = db;
    c.text = argc > 4 && strcmp(argv[4], "text") == 0;
    c.values = argc > 4 && strcmp(argv[4], "values") == 0;
    double best = bench_best_of(rounds, grid, &c);
    size_t n = (sizeof(sizes) / sizeof(sizes[0])) * (sizeof(orders) / sizeof(orders[0]));
    printf("points %zu\nseconds_per_point %.9g\nchecksum %.17g\n", n, best / (double)n,
           c.checksum);
    tessel_strategy_shared_free(&c.shared);
    tessel_stat_cache_free(&c.cache);
    tessel_stat_data_free(&stats);
    tessel_workload_free(&data);
    tessel_tensor_free(&a);
    tessel_energy_db_free(&db);
    tessel_spec_free(&spec);
    tessel_diag_list_free(&errors);
    return best < 0;
}

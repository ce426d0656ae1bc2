/* A program that links libtessel.so (not the static library) and uses only the
 * installed headers: loads a spec and its bundled matrix, runs the exact and the
 * stat estimator, prints the resolved spec's size. It fails when the shared
 * library misses a public symbol or the two estimators disagree on the bundled
 * example, where the statistics cover every tile (docs/library.md). */
#include <stdio.h>
#include <stdlib.h>

#include <tessel/model.h>
#include <tessel/spec.h>

static int fail(const char *what, const tessel_diag *d)
{
    char buf[1200];
    tessel_diag_format(d, buf, sizeof(buf));
    fprintf(stderr, "test_shared: %s: %s\n", what, buf);
    return 1;
}

static int estimate(const tessel_spec *s, const tessel_workload_data *w, uint64_t dram[2])
{
    tessel_diag d;
    tessel_result *r = calloc(2, sizeof(*r));
    if (!r)
        return 1;
    int bad = 0;
    if (tessel_model_exact(s, w, NULL, &r[0], &d))
        bad = fail("exact", &d);
    else if (tessel_model_stat(s, w, NULL, NULL, &r[1], &d))
        bad = fail("stat", &d);
    dram[0] = r[0].dram_bytes;
    dram[1] = r[1].dram_bytes;
    free(r);
    return bad;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "specs/extensor-llb.yaml";
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_spec *s = NULL;
    if (tessel_spec_load(path, NULL, 0, NULL, &s, &errors)) {
        fprintf(stderr, "test_shared: %s: %zu spec errors\n", path, errors.count);
        tessel_diag_list_free(&errors);
        return 1;
    }
    tessel_workload_data *w = NULL;
    int bad = tessel_workload_load(s, NULL, NULL, &w, &errors) != 0;
    uint64_t dram[2] = { 0, 0 };
    if (!bad)
        bad = estimate(s, w, dram);
    char *yaml = NULL;
    size_t len = 0;
    tessel_diag d;
    if (!bad && tessel_spec_resolved_yaml(s, NULL, &yaml, &len, &d))
        bad = fail("resolved spec", &d);
    if (!bad && (dram[0] == 0 || dram[0] != dram[1])) {
        fprintf(stderr, "test_shared: DRAM bytes exact %llu, stat %llu\n",
                (unsigned long long)dram[0], (unsigned long long)dram[1]);
        bad = 1;
    }
    if (!bad)
        printf("libtessel.so: %s DRAM %llu B (exact = stat), resolved spec %zu B\n", path,
               (unsigned long long)dram[0], len);
    tessel_dealloc(NULL, yaml);
    tessel_workload_free(&w);
    tessel_spec_free(&s);
    tessel_diag_list_free(&errors);
    return bad;
}

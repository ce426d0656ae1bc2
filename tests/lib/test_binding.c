/* The flat calls language bindings use (include/tessel/sweep.h "Flat calls",
 * tessel_tensor_from_coo, tessel_workload_bind), linked against libtessel.so:
 * a tensor rebuilt from shuffled COO arrays equals the file's; a workload
 * given that tensor prices the bundled spec exactly as the file-bound one;
 * a record's CSV and JSON text equal what tessel_report_write_dir writes; a bad
 * coordinate is an error naming its entry; a sweep reports its progress. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tessel/model.h>
#include <tessel/report.h>
#include <tessel/spec.h>
#include <tessel/sweep.h>

#define SPEC "examples/sweep/spmspm-llb.yaml"

static int failed;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "test_binding: FAILED: %s\n", what);
        failed = 1;
    }
}

/* The COO arrays of t (a matrix), entries reversed and the first one split
 * into two halves that the builder must sum again. */
static tessel_tensor *rebuild(const tessel_tensor *t)
{
    uint64_t n = t->nnz + 1;
    int64_t *row = calloc(n, sizeof(*row)), *col = calloc(n, sizeof(*col));
    double *val = calloc(n, sizeof(*val));
    tessel_tensor *out = NULL;
    if (!row || !col || !val)
        goto done;
    for (uint64_t r = 0; r < t->dims[0]; r++)
        for (uint64_t k = t->ptr[r]; k < t->ptr[r + 1]; k++) {
            uint64_t at = t->nnz - 1 - k; /* reversed */
            row[at] = (int64_t)r;
            col[at] = t->idx[1][k];
            val[at] = t->values ? t->values[k] : 1.0;
        }
    row[t->nnz] = row[0];
    col[t->nnz] = col[0];
    val[t->nnz] = val[0] / 2;
    val[0] -= val[t->nnz];
    const int64_t *coords[2] = { row, col };
    tessel_diag d;
    tessel_diag_clear(&d);
    check(tessel_tensor_from_coo(2, t->dims, n, coords, val, 0, NULL, &out, &d) == 0,
          "tensor from COO arrays");
    /* a coordinate outside the matrix names its entry */
    tessel_tensor *bad = NULL;
    col[3] = (int64_t)t->dims[1];
    check(tessel_tensor_from_coo(2, t->dims, n, coords, val, 0, NULL, &bad, &d) ==
                  TESSEL_ERANGE && strstr(d.message, "entry 3") && !bad,
          "out-of-range coordinate refused, naming entry 3");
done:
    free(row);
    free(col);
    free(val);
    return out;
}

static int same_tensor(const tessel_tensor *a, const tessel_tensor *b)
{
    if (a->nnz != b->nnz || a->dims[0] != b->dims[0] || a->dims[1] != b->dims[1])
        return 0;
    return memcmp(a->ptr, b->ptr, (a->dims[0] + 1) * sizeof(*a->ptr)) == 0 &&
           memcmp(a->idx[1], b->idx[1], a->nnz * sizeof(*a->idx[1])) == 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = f ? calloc(1, 1 << 20) : NULL;
    if (buf)
        buf[fread(buf, 1, (1 << 20) - 1, f)] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* The record's texts (CSV or JSON) against the files tessel_report_write_dir writes. */
static void compare_files(tessel_sweep_record *r, int json)
{
    char dir[] = "/tmp/tessel-binding-XXXXXX";
    tessel_diag d;
    tessel_diag_clear(&d);
    if (!mkdtemp(dir) || tessel_report_write_dir(dir, json ? TESSEL_REPORT_JSON : TESSEL_REPORT_CSV,
                                                 tessel_sweep_record_point(r), 1, NULL, &d)) {
        check(0, "report directory written");
        return;
    }
    char path[128];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s.%s", dir, i ? "traffic" : "summary",
                 json ? "json" : "csv");
        char *text = slurp(path);
        const char *mine = tessel_sweep_record_text(r, 2 * json + i, NULL);
        check(text && mine && strcmp(text, mine) == 0, "record text equals the file");
        free(text);
        remove(path);
    }
    remove(dir);
}

/* The record of the spec on w. */
static tessel_sweep_record *price(const tessel_spec *s, const tessel_workload_data *w,
                                  const tessel_energy_db *db)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_sweep_record *r = NULL;
    check(tessel_sweep_record_create(s, 0, w, NULL, NULL, NULL, db, NULL, 0, NULL, &r,
                                     &errors) == 0,
          "record of the exact estimate");
    tessel_diag_list_free(&errors);
    return r;
}

/* Entries in a comma-separated list. */
static unsigned count_columns(const char *list)
{
    unsigned n = list && *list ? 1 : 0;
    for (const char *c = list; c && *c; c++)
        n += *c == ',';
    return n;
}

/* The numeric fast path: a point's arrays hold its record's numbers and
 * names, the context's list call gives the single calls' numbers, and a bad
 * override fails naming how many points were filled. */
static void values_path(const tessel_spec *s, const tessel_workload_data *w,
                        const tessel_energy_db *db, const tessel_sweep_record *plain)
{
    check(count_columns(tessel_report_value_columns(0)) == TESSEL_REPORT_SUMMARY_INTS &&
              count_columns(tessel_report_value_columns(1)) == TESSEL_REPORT_SUMMARY_DOUBLES &&
              count_columns(tessel_report_value_columns(2)) == TESSEL_REPORT_SUMMARY_TEXTS &&
              count_columns(tessel_report_value_columns(3)) == TESSEL_REPORT_TRAFFIC_INTS &&
              count_columns(tessel_report_value_columns(4)) == TESSEL_REPORT_TRAFFIC_DOUBLES &&
              !tessel_report_value_columns(5),
          "value column lists match their sizes");
    static int64_t ints[2 * TESSEL_SWEEP_VALUES_INTS];
    static double doubles[2 * TESSEL_SWEEP_VALUES_DOUBLES];
    static char text[2 * TESSEL_REPORT_TEXTS_MAX];
    const char *sets[] = { "LLB.capacity=1MiB", "mapping.LLB.order=KIJ" };
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_sweep_record *r = NULL;
    int rc = tessel_sweep_point_values(s, sets, 2, 0, w, NULL, NULL, NULL, db, NULL, 0, NULL,
                                       ints, doubles, text, &r, &errors);
    check(rc == 0 && r, "a point's values with two overrides");
    if (rc || !r) {
        tessel_diag_list_free(&errors);
        return;
    }
    const tessel_report_point *p = tessel_sweep_record_point(r);
    unsigned h = TESSEL_SWEEP_VALUES_HEAD, last = p->nlevels * p->ntensors - 1;
    check(ints[0] == (int64_t)p->dram_bytes && ints[2] == (int64_t)p->macs &&
              doubles[1] == p->energy_pj && doubles[2] == p->roofline.cycles,
          "summary numbers are the record's");
    /* the head after the summary ints: feasible, overflow level and tensor,
     * nlevels, ntensors (tessel/sweep.h) */
    const unsigned s0 = TESSEL_REPORT_SUMMARY_INTS;
    check(ints[s0] == tessel_sweep_record_feasible(r, NULL, NULL) &&
              ints[s0 + 3] == p->nlevels && ints[s0 + 4] == p->ntensors,
          "feasible and the row count");
    check(ints[h] == (int64_t)p->traffic[0][0].fills &&
              ints[h + TESSEL_REPORT_TRAFFIC_INTS * last + 4] ==
                  (int64_t)p->traffic[p->nlevels - 1][p->ntensors - 1].data_bytes &&
              doubles[TESSEL_REPORT_SUMMARY_DOUBLES + 2 * last] ==
                  p->access[p->nlevels - 1][p->ntensors - 1].energy_pj,
          "first and last traffic rows are the record's");
    /* the text cells: design first, the level names after the summary's */
    const char *cell = text;
    for (unsigned i = 0; i < TESSEL_REPORT_SUMMARY_TEXTS; i++)
        cell += strlen(cell) + 1;
    check(strcmp(text, p->design) == 0 && strcmp(cell, p->level_name[0]) == 0 &&
              strcmp(text + strlen(text) + 1, p->workload) == 0,
          "text cells: design, ..., the level names");
    double energy = doubles[1];
    tessel_sweep_record_free(&r);

    tessel_sweep_values *v = NULL;
    check(tessel_sweep_values_create(s, 0, w, NULL, NULL, NULL, db, NULL, 0, ints, doubles,
                                     text, NULL, &v) == 0,
          "values context");
    static const char both[] = "LLB.capacity=1MiB\0mapping.LLB.order=KIJ";
    const size_t counts[2] = { 2, 0 };
    size_t done = 9;
    rc = v ? tessel_sweep_values_points(v, both, counts, 2, ints, doubles, text, &done, &errors)
           : -1;
    check(rc == 0 && done == 2 && doubles[1] == energy &&
              doubles[TESSEL_SWEEP_VALUES_DOUBLES + 1] ==
                  tessel_sweep_record_point(plain)->energy_pj,
          "two points in one call: the overridden one, then the spec itself");
    rc = v ? tessel_sweep_values_point(v, "mapping.LLB.order=KIJ\0LLB.capacity=1MiB", 2, NULL,
                                       &errors)
           : -1;
    check(rc == 0 && doubles[1] == energy, "one point through the context");
    static const char bad[] = "LLB.capacity=1MiB\0mapping.LLB.order=IXJ";
    const size_t one_each[2] = { 1, 1 };
    rc = v ? tessel_sweep_values_points(v, bad, one_each, 2, ints, doubles, text, &done,
                                        &errors)
           : 0;
    check(rc < 0 && done == 1 && errors.count > 0, "a bad override stops at its point");
    tessel_sweep_values_free(&v);
    check(v == NULL, "context freed");
    tessel_diag_list_free(&errors);
}

static void progress(void *ud, uint64_t done, uint64_t total, double seconds)
{
    (void)seconds;
    uint64_t *seen = ud;
    if (done <= total)
        seen[0]++;
    seen[1] = done;
}

static void sweep_progress(void)
{
    static const char text[] = "spec: " SPEC "\nestimator: stat\n"
                               "axes: {mapping.LLB.order: [IJK, KIJ, IKJ]}\n";
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_sweep *sw = NULL;
    check(tessel_sweep_parse("inline.yaml", text, sizeof(text) - 1, NULL, &sw, &errors) == 0,
          "sweep parsed");
    tessel_diag_list_free(&errors);
    uint64_t seen[2] = { 0, 0 }, points = 0;
    double secs = -1;
    tessel_diag d;
    tessel_diag_clear(&d);
    char dir[] = "/tmp/tessel-binding-XXXXXX";
    int rc = sw && mkdtemp(dir) ? tessel_sweep_run_flat(sw, dir, 1, 0, 0, 1, progress, seen,
                                                         NULL, &points, &secs, &d)
                                : -1;
    check(rc == 0 && points == 3 && seen[0] >= 1 && seen[1] == 3 && secs >= 0,
          "sweep of 3 points with progress to 3");
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_binding: could not remove %s\n", dir);
    tessel_sweep_free(&sw);
}

int main(void)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_spec *s = NULL;
    tessel_workload_data *file_w = NULL, *mem_w = NULL;
    tessel_energy_db *db = NULL;
    if (tessel_spec_load(SPEC, NULL, 0, NULL, &s, &errors) ||
        tessel_workload_load(s, NULL, NULL, &file_w, &errors) ||
        tessel_energy_db_load(s, NULL, &db, &errors)) {
        fprintf(stderr, "test_binding: %s does not load (%zu errors)\n", SPEC, errors.count);
        return 1;
    }
    tessel_tensor *a = rebuild(file_w->tensor[1]);
    check(a && same_tensor(a, file_w->tensor[1]), "rebuilt tensor equals the file's");
    tessel_tensor *given[TESSEL_SPEC_MAX_TENSORS] = { NULL, a };
    const char *labels[TESSEL_SPEC_MAX_TENSORS] = { NULL, "G51" };
    check(a && tessel_workload_bind(s, given, labels, NULL, NULL, &mem_w, &errors) == 0,
          "workload with the tensor given in memory");
    tessel_sweep_record *rf = price(s, file_w, db), *rm = mem_w ? price(s, mem_w, db) : NULL;
    if (rf && rm) {
        for (int i = 0; i < 4; i++) {
            const char *f = tessel_sweep_record_text(rf, i, NULL);
            const char *m = tessel_sweep_record_text(rm, i, NULL);
            check(f && m && strcmp(f, m) == 0, "memory and file give the same report text");
        }
        check(!tessel_sweep_record_text(rf, 4, NULL), "report text 4 refused");
        for (int json = 0; json < 2; json++)
            compare_files(rf, json);
        check(tessel_sweep_record_feasible(rf, NULL, NULL) == 1, "the example is feasible");
        values_path(s, file_w, db, rf);
    }
    tessel_sweep_record_free(&rf);
    tessel_sweep_record_free(&rm);
    sweep_progress();
    tessel_workload_free(&mem_w);
    tessel_tensor_free(&a);
    tessel_workload_free(&file_w);
    tessel_energy_db_free(&db);
    tessel_spec_free(&s);
    tessel_diag_list_free(&errors);
    if (!failed)
        printf("test_binding: ok\n");
    return failed;
}

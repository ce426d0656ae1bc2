/* Out of memory along the whole `tessel run` path, through the public API
 * in the order tools/cmd_run.c calls it: spec load -> output directory check
 * -> energy tables -> component energies -> workload data -> exact estimate
 * -> report record -> traffic/summary files.  Allocation n fails, for every
 * n from 1 until the run succeeds (SQLite-style); each failure must return
 * TESSEL_ENOMEM with a diagnostic, free every block (the allocator counts
 * them; ASan's leak checker sees the rest) and leave no output file.  The
 * run that finally succeeds must write exactly what a run without the
 * hook writes.  Runs from the project root (meson test workdir). */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tessel/energy.h"
#include "tessel/model.h"
#include "tessel/report.h"
#include "tessel/spec.h"
#include "test_alloc.h"

/* A failing allocator that, once it has failed, keeps failing (a real
 * out-of-memory condition rarely lifts by itself): the error paths must
 * not depend on allocating. */
static void *sticky_alloc_fn(void *ud, void *ptr, size_t size)
{
    test_alloc *t = ud;
    if (size != 0 && t->fail_at && t->calls + 1 >= t->fail_at) {
        t->calls++;
        return NULL;
    }
    return test_alloc_fn(ud, ptr, size);
}

/* What one run did. */
typedef struct run_outcome {
    int rc;
    const char *step;   /* the step that failed, or "done" */
    int has_diag;       /* the failure came with a diagnostic of its code */
    char message[1400]; /* the first diagnostic, formatted */
} run_outcome;

static int list_outcome(run_outcome *o, const char *step, tessel_diag_list *errors, int rc)
{
    o->rc = rc;
    o->step = step;
    /* A list that could not store the diagnostic says so in `dropped`. */
    o->has_diag = errors->count > 0 || errors->dropped > 0;
    if (errors->count) {
        tessel_diag_format(&errors->items[0], o->message, sizeof(o->message));
        if (errors->items[0].code != rc)
            o->has_diag = 0;
    } else {
        snprintf(o->message, sizeof(o->message), "(%zu dropped)", errors->dropped);
    }
    return rc;
}

static int diag_outcome(run_outcome *o, const char *step, const tessel_diag *d, int rc)
{
    o->rc = rc;
    o->step = step;
    o->has_diag = d->code == rc && d->message[0] != '\0';
    tessel_diag_format(d, o->message, sizeof(o->message));
    return rc;
}

/* tools/cmd_run.c's run(), with every allocation through `a` (the diagnostic
 * list included) and everything freed before returning. */
static int run_path(const char *spec_path, const char *const *sets, size_t nsets,
                    const tessel_load_options *opt, const char *out_dir,
                    tessel_report_format format, int stat, const tessel_allocator *a,
                    run_outcome *o)
{
    memset(o, 0, sizeof(*o));
    tessel_spec *spec = NULL;
    tessel_energy_db *db = NULL;
    tessel_workload_data *data = NULL;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, a);
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_design_energy energy;
    tessel_result result;
    tessel_report_point *point = NULL;
    int rc;

    rc = tessel_spec_load(spec_path, sets, nsets, a, &spec, &errors);
    if (rc) {
        list_outcome(o, "spec", &errors, rc);
        ck_assert_ptr_null(spec);
        goto done;
    }
    rc = tessel_report_check_dir(out_dir, &d);
    if (rc) {
        diag_outcome(o, "check_dir", &d, rc);
        goto done;
    }
    rc = tessel_energy_db_load(spec, a, &db, &errors);
    if (rc) {
        list_outcome(o, "energy tables", &errors, rc);
        ck_assert_ptr_null(db);
        goto done;
    }
    rc = tessel_energy_design(db, spec, &energy, &errors);
    if (rc) {
        list_outcome(o, "energy design", &errors, rc);
        goto done;
    }
    rc = tessel_workload_load(spec, opt, a, &data, &errors);
    if (rc) {
        list_outcome(o, "workload", &errors, rc);
        ck_assert_ptr_null(data);
        goto done;
    }
    if (stat) {
        tessel_stat_options so;
        tessel_stat_options_init(&so);
        rc = tessel_model_stat(spec, data, &so, a, &result, &d);
    } else {
        rc = tessel_model_exact(spec, data, a, &result, &d);
    }
    if (rc) {
        diag_outcome(o, "model", &d, rc);
        goto done;
    }
    result.seconds = 0; /* --no-timing */
    char label[TESSEL_REPORT_LABEL_MAX];
    tessel_workload_data_label(data, label, sizeof(label));
    /* The record is large; on the heap, as cmd_run keeps it. */
    point = tessel_alloc(a, sizeof(*point));
    if (!point) {
        rc = diag_outcome(o, "point alloc", &d,
                          tessel_diag_oom(&d, NULL, "allocating the report record",
                                          sizeof(*point)));
        goto done;
    }
    rc = tessel_report_point_build(spec, &result, &energy, label, "fixed", point, &d);
    if (rc) {
        diag_outcome(o, "point", &d, rc);
        goto done;
    }
    rc = tessel_report_write_dir(out_dir, format, point, 1, a, &d);
    if (rc) {
        diag_outcome(o, "write", &d, rc);
        goto done;
    }
    o->rc = 0;
    o->step = "done";
done:
    tessel_dealloc(a, point);
    tessel_workload_free(&data);
    tessel_energy_db_free(&db);
    tessel_spec_free(&spec);
    tessel_diag_list_free(&errors);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Files */

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 > cap) {
            cap = cap ? 2 * cap : 65536;
            char *grown = realloc(buf, cap);
            ck_assert_ptr_nonnull(grown);
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *size = n;
    return buf;
}

/* Number of entries in dir (0 when it does not exist). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[1024];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            remove_tree(path);
            remove(path);
        }
        closedir(d);
    }
    remove(dir);
}

static void assert_same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    ck_assert_msg(x != NULL, "%s missing", a);
    ck_assert_msg(y != NULL, "%s missing", b);
    ck_assert_msg(na == nb && memcmp(x, y, na) == 0, "%s and %s differ", a, b);
    free(x);
    free(y);
}

/* traffic.EXT and summary.EXT in out_dir are those of ref_dir, and alone. */
static void assert_same_outputs(const char *ref_dir, const char *out_dir, const char *ext)
{
    char a[1200], b[1200];
    const char *names[2] = { "traffic", "summary" };
    for (int i = 0; i < 2; i++) {
        snprintf(a, sizeof(a), "%s/%s.%s", ref_dir, names[i], ext);
        snprintf(b, sizeof(b), "%s/%s.%s", out_dir, names[i], ext);
        assert_same_file(a, b);
    }
    ck_assert_int_eq(entries(out_dir), 2);
}

/* ------------------------------------------------------------------ */
/* The OOM loop */

typedef struct oom_case {
    const char *name;
    const char *spec;
    /* With `tiny`, a small input written into the temporary directory
     * ("mtx" or "tns") is bound to tensor `tiny_tensor` (keeps the loop
     * fast under the sanitizers; the bundled files are larger). */
    const char *tiny;
    const char *tiny_tensor;
    const char *sets[3];
    int format; /* tessel_report_format */
    int cache;  /* load through a binary cache in a temporary directory: 1 use, 2 rebuild */
    int sticky; /* keep failing once the first allocation failed */
    int stat;   /* the stat estimator instead of exact */
} oom_case;

static const oom_case oom_cases[] = {
    /* ExTensor (3 levels) on the bundled G51, B = A, as `make example`. */
    { "extensor-G51", "specs/extensor.yaml", NULL, NULL, { NULL }, TESSEL_REPORT_CSV, 0, 0, 0 },
    /* A transposed operand, Gamma's spec, JSON output. */
    { "gamma-tiny-json", "specs/gamma.yaml", "mtx", "A", { "workload.data.B='A^T'" },
      TESSEL_REPORT_JSON, 0, 0, 0 },
    /* A density model instead of a file (the generator path). */
    { "extensor-uniform-model", "specs/extensor.yaml", NULL, NULL,
      { "workload.data.A={model: uniform, rows: 300, cols: 300, nnz: 900, seed: 3}" },
      TESSEL_REPORT_CSV, 0, 0, 0 },
    /* MTTKRP on a FROSTT tensor with dense factors. */
    { "mttkrp-tiny", "examples/specs/mttkrp-bitcoin.yaml", "tns", "T", { NULL },
      TESSEL_REPORT_CSV, 0, 0, 0 },
    /* The tensor through a binary cache (written by the reference run). */
    { "extensor-tiny-cache", "specs/extensor.yaml", "mtx", "A", { NULL }, TESSEL_REPORT_CSV, 1,
      0, 0 },
    /* The cache rewritten by every run: a failed write is no error, and
     * leaves the old cache. */
    { "extensor-tiny-cache-rebuild", "specs/extensor.yaml", "mtx", "A", { NULL },
      TESSEL_REPORT_CSV, 2, 0, 0 },
    /* Failures that persist. */
    { "extensor-tiny-sticky", "specs/extensor.yaml", "mtx", "A", { NULL }, TESSEL_REPORT_CSV, 0,
      1, 0 },
    /* The stat estimator: tile grids, Corrs statistics, the output sample. */
    { "extensor-tiny-stat", "specs/extensor.yaml", "mtx", "A", { NULL }, TESSEL_REPORT_CSV, 0, 0,
      1 },
};
#define NCASES ((int)(sizeof(oom_cases) / sizeof(oom_cases[0])))

/* A 60x60 symmetric matrix (general storage would do too) with a band
 * and a few far entries, or a 3-way tensor of 20x30x10. */
static void write_tiny(const char *path, const char *kind)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    if (strcmp(kind, "mtx") == 0) {
        fprintf(f, "%%%%MatrixMarket matrix coordinate real symmetric\n%% tiny\n60 60 %d\n",
                60 + 59 + 10);
        for (int i = 1; i <= 60; i++)
            fprintf(f, "%d %d %d.5\n", i, i, i);
        for (int i = 2; i <= 60; i++)
            fprintf(f, "%d %d -1\n", i, i - 1);
        for (int i = 0; i < 10; i++)
            fprintf(f, "%d %d 2\n", 60 - i, 3 + 2 * i);
    } else {
        for (int i = 1; i <= 20; i++)
            for (int j = 1; j <= 30; j += 1 + i % 4)
                fprintf(f, "%d %d %d %g\n", i, j, 1 + (i * j) % 10, 0.5 * j);
    }
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(oom_every_allocation_of_a_run)
{
    const oom_case *c = &oom_cases[_i];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char tmp[] = "/tmp/tessel-run-oom-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    char ref_dir[1100], out_dir[1100], cache_dir[1100];
    snprintf(ref_dir, sizeof(ref_dir), "%s/ref", tmp);
    snprintf(out_dir, sizeof(out_dir), "%s/out", tmp);
    snprintf(cache_dir, sizeof(cache_dir), "%s/cache", tmp);
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    if (c->cache) {
        ck_assert_int_eq(mkdir(cache_dir, 0700), 0);
        opt.cache_policy = c->cache == 2 ? TESSEL_CACHE_REBUILD : TESSEL_CACHE_USE;
        opt.cache_dir = cache_dir;
    }
    const char *sets[4] = { NULL };
    size_t nsets = 0;
    char tiny_path[1100], tiny_set[1300];
    if (c->tiny) {
        snprintf(tiny_path, sizeof(tiny_path), "%s/tiny.%s", tmp, c->tiny);
        write_tiny(tiny_path, c->tiny);
        snprintf(tiny_set, sizeof(tiny_set), "workload.data.%s='%s'", c->tiny_tensor, tiny_path);
        sets[nsets++] = tiny_set;
    }
    for (size_t i = 0; i < 3 && c->sets[i]; i++)
        sets[nsets++] = c->sets[i];
    const char *ext = c->format == TESSEL_REPORT_JSON ? "json" : "csv";

    /* The reference: no hook (with a cache: this pass writes it, so the
     * loop below reads it). */
    run_outcome o;
    int rc = run_path(c->spec, sets, nsets, &opt, ref_dir, c->format, c->stat, NULL, &o);
    ck_assert_msg(rc == 0, "%s: reference run failed at %s: %s", c->name, o.step, o.message);
    if (c->cache)
        ck_assert_int_eq(entries(cache_dir), 1);

    long n, failures = 0, absorbed = 0, with_bytes = 0;
    for (n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        if (c->sticky)
            ta.allocator.fn = sticky_alloc_fn;
        rc = run_path(c->spec, sets, nsets, &opt, out_dir, c->format, c->stat, &ta.allocator, &o);
        ck_assert_msg(ta.live == 0, "%s: allocation %ld failed (%s): %ld blocks leaked",
                      c->name, n, o.step, ta.live);
        if (c->cache)
            ck_assert_msg(entries(cache_dir) == 1, "%s: allocation %ld failed (%s): %d files in %s",
                          c->name, n, o.step, entries(cache_dir), cache_dir);
        if (rc == 0 && ta.calls < n)
            break; /* every allocation of the run has failed once */
        if (rc == 0) {
            /* A failure the library may absorb (a shrinking realloc): the
             * result must be the same. */
            assert_same_outputs(ref_dir, out_dir, ext);
            remove_tree(out_dir);
            absorbed++;
            continue;
        }
        failures++;
        ck_assert_msg(rc == TESSEL_ENOMEM, "%s: allocation %ld failed (%s): rc %d (%s): %s",
                      c->name, n, o.step, rc, tessel_strerror(rc), o.message);
        ck_assert_msg(o.has_diag, "%s: allocation %ld failed (%s) without a diagnostic: %s",
                      c->name, n, o.step, o.message);
        /* Issue 25 item 9: the message names the step that ran out (a
         * dropped diagnostic, when the list itself could not grow, has
         * none to check). */
        ck_assert_msg(strstr(o.message, "out of memory while ") || strstr(o.message, "dropped"),
                      "%s: allocation %ld failed (%s) naming no step: %s", c->name, n, o.step,
                      o.message);
        if (strstr(o.message, " bytes"))
            with_bytes++;
        ck_assert_msg(entries(out_dir) == 0, "%s: allocation %ld failed (%s): output left in %s",
                      c->name, n, o.step, out_dir);
        remove(out_dir); /* write_dir may have created it before failing */
        ck_assert_msg(n < 200000, "%s: no end in sight", c->name);
    }
    ck_assert_int_gt(failures, 20);
    assert_same_outputs(ref_dir, out_dir, ext);
    if (c->cache)
        ck_assert_int_eq(entries(cache_dir), 1); /* no temporary cache left behind */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    /* Where one allocation failed the size is given; steps of many
     * allocations (the spec's YAML tree, the exact estimator's output
     * walk) name the step alone. */
    ck_assert_msg(with_bytes > 0, "%s: none of %ld messages gives a size", c->name, failures);
    fprintf(stderr, "run-oom %s: %ld allocations failed in turn (%ld absorbed, %ld messages "
            "with a size), %.1f s\n",
            c->name, failures + absorbed, absorbed, with_bytes,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    remove_tree(tmp);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("run-oom");
    TCase *tc = tcase_create("oom");
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, oom_every_allocation_of_a_run, 0, NCASES);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

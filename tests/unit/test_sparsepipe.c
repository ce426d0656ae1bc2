/* The Sparsepipe template (src/template/sparsepipe.c): the OEI hold and
 * farthest-first eviction on a hand-made matrix worked out by hand, the
 * traffic and baseline bytes of that case, the statistical path against
 * the exact one (equal when the base tile divides the steps and the
 * blocks, close otherwise), the presets, bad options and workloads, and
 * every allocation failing in turn. All through specs/sparsepipe.yaml. */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/point.h"
#include "tessel/template.h"
#include "test_alloc.h"

typedef struct loaded {
    tessel_spec *spec;
    tessel_workload_data *data;
} loaded;

/* specs/sparsepipe.yaml with A bound to `matrix` and up to 6 more --set's
 * (NULL-terminated); 0 when the matrix is missing (a shared one). */
static int load(loaded *l, const char *matrix, const char *const *extra)
{
    memset(l, 0, sizeof(*l));
    char real[PATH_MAX];
    if (!realpath(matrix, real))
        return 0;
    char bind[PATH_MAX + 32];
    snprintf(bind, sizeof(bind), "workload.data.A='%s'", real);
    const char *sets[8] = { bind };
    size_t n = 1;
    for (size_t i = 0; extra && extra[i] && n < 8; i++)
        sets[n++] = extra[i];
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = tessel_spec_load("specs/sparsepipe.yaml", sets, n, NULL, &l->spec, &errors);
    if (!rc) {
        tessel_load_options opt;
        tessel_load_options_init(&opt);
        opt.cache_policy = TESSEL_CACHE_OFF;
        rc = tessel_workload_load(l->spec, &opt, NULL, &l->data, &errors);
    }
    ck_assert_msg(rc == 0, "%s: %s", matrix, errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    return 1;
}

static void unload(loaded *l)
{
    tessel_workload_free(&l->data);
    tessel_spec_free(&l->spec);
}

/* The hand matrix, 6 x 6, 0-based (row, column):
 *   (0,5) (1,4) (2,0) (3,3) (4,5) (5,0)
 * With one row per step (subtensor 1) the IS uses a_ik at step k + 2, so
 * a nonzero is held from step i to k + 2 when k + 2 > i:
 *   (0,5) steps 0..5 (released at 7), (1,4) 1..5 (at 6), (3,3) 3..4 (at 5),
 *   (4,5) 4..5 (at 7); (2,0) and (5,0) are used at once.
 * Held per step: 1 2 2 3 4 3: max 4, mean 15/6 = 2.5.
 * With room for 2: step 3 brings (3,3) -> 3 held, the farthest (0,5) is
 * evicted; step 4 brings (4,5) (release 7) -> evicted itself: 2 re-fetched,
 * 4 of 6 served from chip. */
static char hand_path[PATH_MAX];

static void write_hand(void)
{
    char dir[] = "/tmp/tessel-sparsepipe-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(hand_path, sizeof(hand_path), "%s/hand.mtx", dir);
    FILE *f = fopen(hand_path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("%%MatrixMarket matrix coordinate pattern general\n6 6 6\n"
          "1 6\n2 5\n3 1\n4 4\n5 6\n6 1\n",
          f);
    ck_assert_int_eq(fclose(f), 0);
}

static void remove_hand(void)
{
    unlink(hand_path);
    char *slash = strrchr(hand_path, '/');
    *slash = '\0';
    rmdir(hand_path);
}

/* 8-byte values, 4-byte coordinates (specs/sparsepipe.yaml): a held
 * nonzero unblocked is 12 bytes. The reserve with subtensor 1: 2 sub-
 * tensors of 1 nonzero (24 B) + pagerank's 7 vector segments of 8 B (56 B)
 * = 80 B; 104 B leaves room for 2 held nonzeros. */
static const char *const HAND[] = { "template_options.subtensor=1", "template_options.block=1",
                                    "template_options.buffer_bytes=104",
                                    "template_options.iterations=2", NULL };

START_TEST(test_hold_hand)
{
    write_hand();
    loaded l;
    ck_assert(load(&l, hand_path, HAND));
    tessel_result r;
    tessel_sparsepipe_figures f;
    tessel_diag d;
    int rc = tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &f, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_uint_eq(f.nnz, 6);
    ck_assert_uint_eq(f.steps, 6);
    ck_assert_double_eq_tol(f.hold_max, 4, 1e-9);
    ck_assert_double_eq_tol(f.hold_avg, 2.5, 1e-9);
    ck_assert_double_eq_tol(f.hold_capacity, 2, 1e-9);
    ck_assert_double_eq_tol(f.refetched, 2, 1e-9);
    ck_assert_double_eq_tol(f.onchip_fraction, 4.0 / 6, 1e-9);
    ck_assert_uint_eq(f.pairs, 1);
    /* A in CSR: 6 x 8 B values, 6 x 4 B columns + 7 x 4 B offsets = 100 B;
     * the re-fetch a third of it: 16 + 17 (rounded) */
    ck_assert_uint_eq(f.a_pass_bytes, 100);
    ck_assert_uint_eq(r.traffic[0][1].data_bytes + r.traffic[0][1].metadata_bytes, 133);
    /* x_0 read once at the non-empty columns of A, 0 3 4 5 (4 x 8 = 32 B;
     * x_1 and x_2 meet no nonzero and are not fetched, sparsepipe §IV-D.2;
     * the old model read all 6, 48 B), x_2 written once (48 B), pagerank's
     * e-wise: 2 vectors read and 1 written per iteration (2 x 144 B) */
    ck_assert_uint_eq(r.traffic[0][2].data_bytes, 32);
    ck_assert_uint_eq(r.traffic[0][0].data_bytes, 48 + 2 * 144);
    ck_assert_uint_eq(r.dram_bytes, 133 + 32 + 48 + 288);
    ck_assert_uint_eq(f.total_bytes, r.dram_bytes);
    ck_assert_uint_eq(f.pair_bytes, r.dram_bytes);
    /* the baseline: A, x read (32), y written, y read, x' written, e-wise */
    ck_assert_uint_eq(f.baseline_iteration_bytes, 100 + 32 + 3 * 48 + 144);
    ck_assert_uint_eq(f.baseline_total_bytes, 2 * 420);
    ck_assert_double_eq_tol(f.saving, 1 - 501.0 / 840, 1e-12);
    ck_assert_uint_eq(r.compulsory_bytes, 100 + 2 * 48);
    ck_assert_str_eq(r.estimator, "exact");
    unload(&l);

    /* unbounded: nothing re-fetched; 3 iterations: one pair and one single */
    const char *const unb[] = { "template_options.subtensor=1", "template_options.block=1",
                                "template_options.buffer_bytes=unbounded",
                                "template_options.iterations=3", NULL };
    ck_assert(load(&l, hand_path, unb));
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &f, &d), 0);
    ck_assert_double_eq_tol(f.refetched, 0, 1e-12);
    ck_assert_double_eq_tol(f.onchip_fraction, 1, 1e-12);
    ck_assert(isinf(f.hold_capacity));
    ck_assert_uint_eq(f.pairs, 1);
    ck_assert_uint_eq(r.dram_bytes, f.pair_bytes + f.single_bytes);
    ck_assert_uint_eq(f.single_bytes, 100 + 32 + 48 + 144);
    /* tessel_template_run gives the same result */
    tessel_result r2;
    ck_assert_int_eq(tessel_template_run(l.spec, l.data, NULL, NULL, &r2, &d), 0);
    ck_assert_uint_eq(r2.dram_bytes, r.dram_bytes);
    unload(&l);
    remove_hand();
}
END_TEST

/* No fetch without a multiply (issue 20), the smallest case: A 3 x 3 with
 * a_01 and a_20 (columns 0 and 1 non-empty, column 2 empty), one PageRank
 * iteration (no pair: A once, x read, x' written, the e-wise vectors),
 * CSR, 8-byte values, 4-byte coordinates and offsets:
 *   A  2 x 8 + 2 x 4 + 4 offsets x 4 = 40
 *   x  x_0 and x_1 only, 2 x 8 = 16 (x_2 meets no nonzero; the old model
 *      read all 3, 24)
 *   y  x' written 3 x 8 = 24, e-wise 2 read + 1 written, 3 x 24 = 72
 *   DRAM 40 + 16 + 96 = 152. The stat path reads the same columns from
 *   the line counts. */
START_TEST(test_unused_hand)
{
    char dir[] = "/tmp/tessel-sparsepipe-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/tiny.mtx", dir);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 1\n", fp);
    ck_assert_int_eq(fclose(fp), 0);
    const char *const sets[] = { "template_options.block=1", "template_options.iterations=1",
                                 NULL };
    loaded l;
    ck_assert(load(&l, path, sets));
    tessel_result r, sr;
    tessel_sparsepipe_figures f;
    tessel_diag d;
    int rc = tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &f, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_uint_eq(f.a_pass_bytes, 40);
    ck_assert_uint_eq(r.traffic[0][2].data_bytes + r.traffic[0][2].metadata_bytes, 16);
    ck_assert_uint_eq(r.traffic[0][0].data_bytes + r.traffic[0][0].metadata_bytes, 96);
    ck_assert_uint_eq(r.dram_bytes, 152);
    ck_assert_uint_eq(f.single_bytes, 152);
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    tessel_stat_data *st = NULL;
    rc = tessel_stat_data_create(l.spec, l.data, &opt, NULL, &st, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    rc = tessel_template_sparsepipe(l.spec, NULL, st, NULL, &sr, &f, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_uint_eq(sr.traffic[0][2].data_bytes, 16);
    ck_assert_uint_eq(sr.dram_bytes, 152);
    tessel_stat_data_free(&st);
    unload(&l);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* The presets and knobs move the figures the way the model says. */
START_TEST(test_presets)
{
    loaded l;
    tessel_result r;
    tessel_sparsepipe_figures pr, cg, bfs, bfsf, blk1;
    tessel_diag d;
    const char *const s_pr[] = { NULL };
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", s_pr));
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &pr, &d), 0);
    unload(&l);
    const char *const s_cg[] = { "template_options.app=cg", NULL };
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", s_cg));
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &cg, &d), 0);
    unload(&l);
    const char *const s_bfs[] = { "template_options.app=bfs", NULL };
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", s_bfs));
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &bfs, &d), 0);
    unload(&l);
    const char *const s_bfsf[] = { "template_options.app=bfs", "template_options.baseline=frontier",
                                   NULL };
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", s_bfsf));
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &bfsf, &d), 0);
    unload(&l);
    const char *const s_b1[] = { "template_options.block=1", NULL };
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", s_b1));
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &blk1, &d), 0);
    unload(&l);
    /* pagerank: 5 fused pairs, A everywhere on chip in 64 MiB */
    ck_assert_uint_eq(pr.pairs, 5);
    ck_assert_double_eq_tol(pr.onchip_fraction, 1, 1e-12);
    ck_assert(pr.saving > 0.4 && pr.saving < 0.5);
    /* cg: producer-consumer reuse only: A streamed every iteration */
    ck_assert_uint_eq(cg.pairs, 0);
    ck_assert_uint_eq(cg.total_bytes, 10 * cg.single_bytes);
    ck_assert(cg.saving > 0 && cg.saving < pr.saving);
    /* bfs: frontier 1/N; against a push baseline the full OS pull loses */
    ck_assert_double_eq_tol(bfs.frontier, 0.1, 1e-12);
    ck_assert_uint_eq(bfsf.total_bytes, bfs.total_bytes);
    ck_assert(bfsf.baseline_total_bytes < bfs.baseline_total_bytes);
    ck_assert(bfsf.saving < 0);
    /* blocking: 16 x 16 blocks with 1-byte in-block coordinates beat CSR */
    ck_assert_uint_lt(pr.a_pass_bytes, blk1.a_pass_bytes);
    ck_assert_uint_eq(blk1.a_pass_bytes, 7450 * 12 + 1139 * 4);
}
END_TEST

static void stat_and_exact(const char *matrix, const char *const *sets, uint64_t base,
                           tessel_sparsepipe_figures *ex, tessel_sparsepipe_figures *st)
{
    loaded l;
    ck_assert(load(&l, matrix, sets));
    tessel_result r, rs;
    tessel_diag d;
    int rc = tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, ex, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    opt.base[0] = opt.base[1] = base;
    tessel_stat_data *s = NULL;
    rc = tessel_stat_data_create(l.spec, l.data, &opt, NULL, &s, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    rc = tessel_template_sparsepipe(l.spec, NULL, s, NULL, &rs, st, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_str_eq(rs.estimator, "stat");
    ck_assert_uint_eq(st->total_bytes, rs.dram_bytes);
    tessel_stat_data_free(&s);
    unload(&l);
}

START_TEST(test_stat_vs_exact)
{
    tessel_sparsepipe_figures ex, st;
    /* 16 x 16 base tiles: every tile inside one step of 1024 rows and one
     * 16 x 16 block: the stat path is exact */
    const char *const dflt[] = { NULL };
    stat_and_exact("examples/data/jagmesh7.mtx.gz", dflt, 16, &ex, &st);
    ck_assert_uint_eq(st.total_bytes, ex.total_bytes);
    ck_assert_double_eq_tol(st.hold_avg, ex.hold_avg, 1e-6);
    ck_assert_double_eq_tol(st.nonzero_blocks, ex.nonzero_blocks, 1e-9);
    /* A[k,i] of a non-symmetric graph: the CSR view over i is a transpose
     * (exact) and the grid is stored k-major (stat); still equal */
    char p2p[] = "../shared/data/mtx/p2p-Gnutella08.mtx.gz";
    if (access(p2p, R_OK) == 0) {
        const char *const kmajor[] = { "workload.einsum='y[i] = A[k,i] * x[k]'",
                                       "template_options.buffer_bytes=64KiB", NULL };
        stat_and_exact(p2p, kmajor, 16, &ex, &st);
        ck_assert(ex.refetched > 0);
        ck_assert_uint_eq(st.total_bytes, ex.total_bytes);
        ck_assert_double_eq_tol(st.refetched, ex.refetched, 1e-6);
        tessel_sparsepipe_figures ex2, st2;
        const char *const imajor[] = { "template_options.buffer_bytes=64KiB", NULL };
        stat_and_exact(p2p, imajor, 16, &ex2, &st2);
        /* the transpose is another matrix: other held nonzeros */
        ck_assert(fabs(ex2.hold_avg - ex.hold_avg) > 1);
        ck_assert_uint_eq(st2.total_bytes, ex2.total_bytes);
    }
    /* a shared graph, buffer tight enough to evict, steps of 64 rows: the
     * default 128 x 128 tiles spread over two steps each */
    const char *const tight[] = { "template_options.subtensor=64",
                                  "template_options.buffer_bytes=32KiB", NULL };
    char path[] = "../shared/data/mtx/ca-GrQc.mtx.gz";
    if (access(path, R_OK) != 0)
        return;
    stat_and_exact(path, tight, 128, &ex, &st);
    ck_assert(ex.refetched > 0);
    ck_assert_msg(fabs(st.hold_avg / ex.hold_avg - 1) < 0.05, "hold %g vs %g", st.hold_avg,
                  ex.hold_avg);
    ck_assert_msg(fabs(st.onchip_fraction - ex.onchip_fraction) < 0.05, "on chip %g vs %g",
                  st.onchip_fraction, ex.onchip_fraction);
    ck_assert_msg(fabs((double)st.total_bytes / (double)ex.total_bytes - 1) < 0.05,
                  "total %llu vs %llu", (unsigned long long)st.total_bytes,
                  (unsigned long long)ex.total_bytes);
    /* the same at 16 x 16 tiles: blocks exact, the hold still spread */
    stat_and_exact(path, tight, 16, &ex, &st);
    ck_assert_double_eq_tol(st.nonzero_blocks, ex.nonzero_blocks, 1e-9);
    ck_assert_msg(fabs(st.onchip_fraction - ex.onchip_fraction) < 0.02, "on chip %g vs %g",
                  st.onchip_fraction, ex.onchip_fraction);
}
END_TEST

/* The template sets the base grid its stat path needs (no --base): its
 * 16 x 16 blocks, so the nonzero blocks and A's DRAM bytes are exact; on
 * the default 128 grid they were estimated by uniform placement (+43 % on
 * A's metadata). A caller's base is kept. */
START_TEST(test_own_base_grid)
{
    loaded l;
    const char *const dflt[] = { NULL };
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", dflt));
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    tessel_template_stat_options(l.spec, &opt);
    ck_assert_uint_eq(opt.own_base[0], 16);
    ck_assert_uint_eq(opt.own_base[1], 16);
    tessel_result r, rs, r128;
    tessel_sparsepipe_figures ex, st, st128;
    tessel_diag d;
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &ex, &d), 0);
    tessel_stat_data *s = NULL;
    ck_assert_msg(tessel_stat_data_create(l.spec, l.data, &opt, NULL, &s, &d) == 0, "%s",
                  d.message);
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, NULL, s, NULL, &rs, &st, &d), 0);
    tessel_stat_data_free(&s);
    ck_assert_double_eq_tol(st.nonzero_blocks, ex.nonzero_blocks, 1e-9);
    ck_assert_uint_eq(rs.traffic[0][1].metadata_bytes, r.traffic[0][1].metadata_bytes);
    ck_assert_uint_eq(rs.dram_bytes, r.dram_bytes);
    /* without the template's grid: the estimate this replaces */
    tessel_stat_options_init(&opt);
    ck_assert_int_eq(tessel_stat_data_create(l.spec, l.data, &opt, NULL, &s, &d), 0);
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, NULL, s, NULL, &r128, &st128, &d), 0);
    tessel_stat_data_free(&s);
    ck_assert(st128.nonzero_blocks > 1.2 * ex.nonzero_blocks);
    /* a caller's --base wins */
    tessel_stat_options_init(&opt);
    opt.base[0] = opt.base[1] = 32;
    tessel_template_stat_options(l.spec, &opt);
    ck_assert_uint_eq(opt.own_base[0], 0);
    unload(&l);
}
END_TEST

/* tessel_point_stats_create, through which run, compare, map, sweep and
 * the bindings collect the statistics, puts sparsepipe's blocks (16 x 16
 * on jagmesh7) on the grid without the caller asking; a caller's base
 * (--base 32) is kept; and the stat figures equal exact's nonzero blocks. */
START_TEST(test_point_stats_own_grid)
{
    loaded l;
    const char *const dflt[] = { NULL };
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", dflt));
    tessel_diag d;
    tessel_stat_data *s = NULL;
    int index[TESSEL_MAX_ORDER];
    ck_assert_msg(tessel_point_stats_create(l.spec, l.data, NULL, NULL, &s, &d) == 0, "%s",
                  d.message);
    const tessel_tile_grid *g = tessel_stat_data_grid(s, 1, index);
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->tile[0], 16);
    ck_assert_uint_eq(g->tile[1], 16);
    tessel_result r, rs;
    tessel_sparsepipe_figures ex, st;
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &ex, &d), 0);
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, NULL, s, NULL, &rs, &st, &d), 0);
    ck_assert_double_eq_tol(st.nonzero_blocks, ex.nonzero_blocks, 1e-9);
    tessel_stat_data_free(&s);
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    opt.base[0] = opt.base[1] = 32;
    ck_assert_int_eq(tessel_point_stats_create(l.spec, l.data, &opt, NULL, &s, &d), 0);
    g = tessel_stat_data_grid(s, 1, index);
    ck_assert_uint_eq(g->tile[0], 32);
    /* the caller's options are read, not changed */
    ck_assert_uint_eq(opt.own_base[0], 0);
    tessel_stat_data_free(&s);
    unload(&l);
}
END_TEST

/* Table I's figure on ca-GrQc (one step per row, unbounded): the SNAP
 * collaboration graphs hold a quarter of the entries at most and a sixth
 * on average, as a random order's cut does (sparsepipe Table I, "ca":
 * 49.9 % and 32.9 % of its edge count, half the entries). */
START_TEST(test_table_one)
{
    char path[] = "../shared/data/mtx/ca-GrQc.mtx.gz";
    if (access(path, R_OK) != 0)
        return;
    const char *const t1[] = { "template_options.subtensor=1",
                               "template_options.buffer_bytes=unbounded", NULL };
    loaded l;
    ck_assert(load(&l, path, t1));
    tessel_result r;
    tessel_sparsepipe_figures f;
    tessel_diag d;
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, l.data, NULL, NULL, &r, &f, &d), 0);
    double mx = f.hold_max / (double)f.nnz, avg = f.hold_avg / (double)f.nnz;
    ck_assert_msg(mx > 0.23 && mx < 0.27, "max %g", mx);
    ck_assert_msg(avg > 0.15 && avg < 0.18, "avg %g", avg);
    unload(&l);
}
END_TEST

static void bad(const char *set, int code, const char *field)
{
    const char *const sets[] = { set, NULL };
    loaded l;
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", sets));
    tessel_result r;
    tessel_diag d;
    int rc = tessel_template_run(l.spec, l.data, NULL, NULL, &r, &d);
    ck_assert_msg(rc == code, "%s: %d (%s)", set, rc, d.message);
    ck_assert_msg(strcmp(d.field, field) == 0, "%s: field %s (%s)", set, d.field, d.message);
    ck_assert(strstr(d.message, "sparsepipe") != NULL);
    unload(&l);
}

START_TEST(test_bad_options)
{
    bad("template_options.app=spmm", TESSEL_EINVAL, "template_options.app");
    bad("template_options.iterations=0", TESSEL_EINVAL, "template_options.iterations");
    bad("template_options.iterations=ten", TESSEL_EINVAL, "template_options.iterations");
    bad("template_options.buffer_bytes=0", TESSEL_EINVAL, "template_options.buffer_bytes");
    bad("template_options.buffer_bytes=lots", TESSEL_EINVAL, "template_options.buffer_bytes");
    bad("template_options.block=0", TESSEL_EINVAL, "template_options.block");
    bad("template_options.block=100000", TESSEL_EINVAL, "template_options.block");
    bad("template_options.subtensor=-3", TESSEL_EINVAL, "template_options.subtensor");
    bad("template_options.frontier=0", TESSEL_EINVAL, "template_options.frontier");
    bad("template_options.frontier=1.5", TESSEL_EINVAL, "template_options.frontier");
    bad("template_options.baseline=cache", TESSEL_EINVAL, "template_options.baseline");
    bad("template_options.iteration=3", TESSEL_EINVAL, "template_options.iteration");
    /* the nearest key is suggested */
    const char *const sets[] = { "template_options.iteration=3", NULL };
    loaded l;
    ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", sets));
    tessel_result r;
    tessel_diag d;
    ck_assert_int_eq(tessel_template_run(l.spec, l.data, NULL, NULL, &r, &d), TESSEL_EINVAL);
    ck_assert(strstr(d.message, "did you mean 'iterations'") != NULL);
    unload(&l);
}
END_TEST

START_TEST(test_bad_workloads)
{
    /* not square: y feeds the next x */
    char dir[] = "/tmp/tessel-sparsepipe-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char rect[PATH_MAX];
    snprintf(rect, sizeof(rect), "%s/rect.mtx", dir);
    FILE *f = fopen(rect, "w");
    ck_assert_ptr_nonnull(f);
    fputs("%%MatrixMarket matrix coordinate pattern general\n3 4 2\n1 4\n3 2\n", f);
    ck_assert_int_eq(fclose(f), 0);
    const char *const none[] = { NULL };
    loaded l;
    ck_assert(load(&l, rect, none));
    tessel_result r;
    tessel_diag d;
    ck_assert_int_eq(tessel_template_run(l.spec, l.data, NULL, NULL, &r, &d), TESSEL_EUNSUPPORTED);
    ck_assert_str_eq(d.field, "workload.data");
    ck_assert(strstr(d.message, "square") != NULL);
    tessel_stat_data *s = NULL;
    ck_assert_int_eq(tessel_stat_data_create(l.spec, l.data, NULL, NULL, &s, NULL), 0);
    ck_assert_int_eq(tessel_template_run(l.spec, NULL, s, NULL, &r, &d), TESSEL_EUNSUPPORTED);
    ck_assert(strstr(d.message, "square") != NULL);
    tessel_stat_data_free(&s);
    /* neither data nor statistics */
    ck_assert_int_eq(tessel_template_sparsepipe(l.spec, NULL, NULL, NULL, &r, NULL, &d),
                     TESSEL_EINVAL);
    unload(&l);
    unlink(rect);
    rmdir(dir);
    /* SpMSpM is not an iterative vector app */
    const char *const spmspm[] = { "template=sparsepipe" };
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_spec *spec = NULL;
    int rc = tessel_spec_load("specs/gamma.yaml", spmspm, 1, NULL, &spec, &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    rc = tessel_template_sparsepipe(spec, NULL, NULL, NULL, &r, NULL, &d);
    ck_assert_int_eq(rc, TESSEL_EUNSUPPORTED);
    ck_assert_str_eq(d.field, "workload.einsum");
    tessel_spec_free(&spec);
}
END_TEST

static void oom_run(const tessel_spec *spec, const tessel_workload_data *data,
                    const tessel_stat_data *stats)
{
    tessel_result good, r;
    tessel_sparsepipe_figures fg, f;
    tessel_diag d;
    ck_assert_int_eq(tessel_template_sparsepipe(spec, data, stats, NULL, &good, &fg, &d), 0);
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        int rc = tessel_template_sparsepipe(spec, data, stats, &ta.allocator, &r, &f, &d);
        ck_assert_msg(ta.live == 0, "%ld blocks leaked failing allocation %ld", ta.live, n);
        if (rc == 0) {
            ck_assert_uint_eq(r.dram_bytes, good.dram_bytes);
            ck_assert_double_eq(f.refetched, fg.refetched);
            if (ta.calls < n) {
                /* every allocation of the run has been failed once */
                ck_assert_msg(n > 4, "only %ld allocations", n);
                break;
            }
            continue;
        }
        ck_assert_msg(rc == TESSEL_ENOMEM, "allocation %ld: %s", n, d.message);
    }
}

START_TEST(test_oom)
{
    /* A[k,i] (its CSR view over i is a transpose built here),
     * a tight buffer so that the eviction runs, blocked and unblocked */
    const char *const v1[] = { "template_options.buffer_bytes=100KiB",
                               "template_options.subtensor=64", NULL };
    const char *const v2[] = { "template_options.block=1", "template_options.subtensor=16",
                               "workload.einsum='y[i] = A[k,i] * x[k]'", NULL };
    const char *const *variants[] = { v1, v2 };
    for (int v = 0; v < 2; v++) {
        loaded l;
        ck_assert(load(&l, "examples/data/jagmesh7.mtx.gz", variants[v]));
        oom_run(l.spec, l.data, NULL);
        tessel_stat_options opt;
        tessel_stat_options_init(&opt);
        tessel_stat_data *s = NULL;
        ck_assert_int_eq(tessel_stat_data_create(l.spec, l.data, &opt, NULL, &s, NULL), 0);
        oom_run(l.spec, NULL, s);
        tessel_stat_data_free(&s);
        unload(&l);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sparsepipe");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_hold_hand);
    tcase_add_test(tc, test_unused_hand);
    tcase_add_test(tc, test_presets);
    tcase_add_test(tc, test_stat_vs_exact);
    tcase_add_test(tc, test_own_base_grid);
    tcase_add_test(tc, test_point_stats_own_grid);
    tcase_add_test(tc, test_table_one);
    tcase_add_test(tc, test_bad_options);
    tcase_add_test(tc, test_bad_workloads);
    tcase_add_test(tc, test_oom);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

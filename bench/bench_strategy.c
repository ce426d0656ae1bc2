/* The tiling strategies against the papers' trends, on every shared matrix
 * (A x A, the one-level spec bench/strategy/one-level.yaml unless named):
 *
 *   swiftiles   achieved overbooking rate vs the 10 % target: mean absolute
 *               error over the matrices for k = 1 .. 50 tail samples
 *               (k / y tiles sampled), the paper's one shot (rounds 1) and
 *               tessel's default (rounds 8), 5 seeds each
 *   tailors     DRAM bytes and cycles of ExTensor-N (dense conservative),
 *               conservative (statistics), prescient and Swiftiles on the
 *               ExTensor spec, relative to ExTensor-N
 *   drt         DRAM bytes of DRT over S-U-C (conservative, dense: the
 *               static tiles a DRT-less accelerator uses) on ExTensor's DRAM ->
 *               LLB boundary (specs/extensor-llb.yaml) with a 256 KiB LLB
 *   d2t2        DRAM bytes of d2t2's choice vs the square conservative tile
 *               and vs the best of an exhaustive exact search over every
 *               tile (powers of two times 8 per index) whose worst tiles fit
 *
 *   extensor3   the extensor template's variants N, P, OB and DRT
 *               (specs/extensor-*.yaml) on the full three-level hierarchy,
 *               at the spec's 30 MiB LLB and at 256 KiB: traffic ratio,
 *               cycles and energy relative to N, stat error of DRAM bytes
 *
 * usage: bench_strategy [DATA_DIR] [swiftiles|tailors|drt|d2t2|extensor3|all]
 * Figures only; nothing passes or fails. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tessel/energy.h"
#include "tessel/report.h"
#include "tessel/strategy.h"
#include "tessel/template.h"

#define MAX_MATRICES 64

typedef struct bench_case {
    tessel_spec *spec;
    tessel_workload_data *data;
} bench_case;

static int case_load(bench_case *c, const char *spec_path, const char *matrix, const char **extra,
                     size_t nextra)
{
    char bind[1024];
    snprintf(bind, sizeof(bind), "workload.data.A='%.1000s'", matrix);
    const char *sets[16] = { bind, "workload.data.B=A" };
    size_t n = 2;
    for (size_t i = 0; i < nextra && n < 16; i++)
        sets[n++] = extra[i];
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    memset(c, 0, sizeof(*c));
    int rc = tessel_spec_load(spec_path, sets, n, NULL, &c->spec, &errors);
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    if (!rc)
        rc = tessel_workload_load(c->spec, &opt, NULL, &c->data, &errors);
    if (rc)
        fprintf(stderr, "bench_strategy: %s: %s\n", matrix,
                errors.count ? errors.items[0].message : "error");
    tessel_diag_list_free(&errors);
    return rc;
}

static void case_free(bench_case *c)
{
    tessel_workload_free(&c->data);
    tessel_spec_free(&c->spec);
}

/* A derived spec with `set` applied (the case's spec stays). */
static tessel_spec *derive(const bench_case *c, const char *const *sets, size_t n)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_spec *s = NULL;
    if (tessel_spec_derive(c->spec, sets, n, NULL, &s, &errors))
        fprintf(stderr, "bench_strategy: %s\n", errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    return s;
}

static int run(const bench_case *c, const char *const *sets, size_t n,
               tessel_strategy_estimator est, tessel_result *r, tessel_strategy_choice *ch)
{
    tessel_spec *s = derive(c, sets, n);
    if (!s)
        return -1;
    tessel_strategy_inputs in = { c->data, NULL, NULL };
    tessel_diag d;
    int rc = tessel_strategy_run(s, &in, est, NULL, r, ch, &d);
    if (rc)
        fprintf(stderr, "bench_strategy: %s: %s\n", s->strategy.name, d.message);
    tessel_spec_free(&s);
    return rc;
}

static unsigned read_manifest(const char *dir, char paths[][512], char names[][64])
{
    char mpath[600];
    snprintf(mpath, sizeof(mpath), "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(mpath, "r");
    if (!f) {
        fprintf(stderr, "bench_strategy: cannot open %s\n", mpath);
        return 0;
    }
    char line[4096];
    unsigned n = 0;
    while (fgets(line, sizeof(line), f) && n < MAX_MATRICES) {
        char name[64], file[256], kind[32];
        if (sscanf(line, "%63s %255s %31s", name, file, kind) != 3 || strcmp(kind, "matrix"))
            continue;
        snprintf(paths[n], 512, "%s/%s", dir, file);
        snprintf(names[n], 64, "%s", name);
        n++;
    }
    fclose(f);
    return n;
}

/* ------------------------------------------------------------------ */

static void bench_swiftiles(char paths[][512], char names[][64], unsigned n)
{
    static const unsigned ks[] = { 1, 2, 5, 10, 20, 50 };
    static const unsigned rounds[] = { 1, 8 };
    printf("\n== swiftiles: achieved overbooking vs target 10 %% (one-level spec, A x A)\n");
    printf("mean absolute error over %u matrices x 5 seeds\n", n);
    printf("%8s %10s %12s %12s\n", "k", "samples", "rounds=1", "rounds=8");
    double per_matrix[MAX_MATRICES][2];
    for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
        double mae[2] = { 0, 0 };
        unsigned count[2] = { 0, 0 };
        for (unsigned m = 0; m < n; m++) {
            bench_case c;
            if (case_load(&c, "bench/strategy/one-level.yaml", paths[m], NULL, 0))
                continue;
            for (int r = 0; r < 2; r++) {
                double sum = 0;
                for (unsigned seed = 1; seed <= 5; seed++) {
                    char k[64], rs[64], sd[64];
                    snprintf(k, sizeof(k), "mapping.strategy_options.tail_samples=%u", ks[ki]);
                    snprintf(rs, sizeof(rs), "mapping.strategy_options.rounds=%u", rounds[r]);
                    snprintf(sd, sizeof(sd), "mapping.strategy_options.seed=%u", seed);
                    const char *sets[4] = { "mapping.strategy=swiftiles", k, rs, sd };
                    tessel_spec *s = derive(&c, sets, 4);
                    tessel_strategy_inputs in = { c.data, NULL, NULL };
                    tessel_strategy_choice ch;
                    tessel_diag d;
                    if (s && !tessel_strategy_choose(s, &in, TESSEL_STRATEGY_EXACT, NULL, &ch, &d)) {
                        mae[r] += fabs(ch.overbooking_rate - 0.10);
                        sum += ch.overbooking_rate;
                        count[r]++;
                    }
                    tessel_spec_free(&s);
                }
                if (ks[ki] == 10)
                    per_matrix[m][r] = sum / 5;
            }
            case_free(&c);
        }
        printf("%8u %10u %11.2f%% %11.2f%%\n", ks[ki], ks[ki] * 10,
               count[0] ? 100 * mae[0] / count[0] : NAN, count[1] ? 100 * mae[1] / count[1] : NAN);
    }
    printf("per matrix at k = 10 (mean achieved rate over 5 seeds):\n");
    for (unsigned m = 0; m < n; m++)
        printf("  %-24s rounds=1 %6.2f%%   rounds=8 %6.2f%%\n", names[m], 100 * per_matrix[m][0],
               100 * per_matrix[m][1]);
}

static void bench_tailors(const char *spec, char paths[][512], char names[][64], unsigned n)
{
    printf("\n== tailors: %s, exact estimator, relative to ExTensor-N (dense conservative)\n",
           spec);
    printf("%-24s %13s | %9s %9s %9s | %9s %9s %9s | %7s\n", "matrix", "N dram_bytes",
           "cons", "presc", "swift", "cons cyc", "presc cyc", "swift cyc", "swift ob");
    static const char *const names_s[] = { "conservative", "conservative", "prescient",
                                           "swiftiles" };
    double gsum[2][3] = { { 0 } };
    unsigned counted = 0;
    for (unsigned m = 0; m < n; m++) {
        bench_case c;
        if (case_load(&c, spec, paths[m], NULL, 0))
            continue;
        tessel_result r[4];
        tessel_strategy_choice ch[4];
        int ok = 1;
        for (int k = 0; k < 4 && ok; k++) {
            char strat[64];
            snprintf(strat, sizeof(strat), "mapping.strategy=%s", names_s[k]);
            const char *sets[2] = { strat, k == 0 ? "mapping.strategy_options.worst=dense"
                                                  : "mapping.strategy_options.worst=stats" };
            ok = !run(&c, sets, 2, TESSEL_STRATEGY_EXACT, &r[k], &ch[k]);
        }
        if (ok) {
            double b0 = (double)r[0].dram_bytes;
            printf("%-24s %13llu | %9.3f %9.3f %9.3f |", names[m], (unsigned long long)r[0].dram_bytes,
                   (double)r[1].dram_bytes / b0, (double)r[2].dram_bytes / b0,
                   (double)r[3].dram_bytes / b0);
            /* cycles: the roofline of DRAM and compute alone (68.25 GB/s at 1 GHz, 128
             * MACs per cycle, drt §5.2.1); the on-chip levels are not the bound here */
            double cyc[4];
            for (int k = 0; k < 4; k++) {
                double bytes = (double)r[k].dram_bytes;
                double mem = bytes / 68.25; /* DRAM GB/s at 1 GHz = bytes per cycle (drt §5.2.1) */
                double comp = (double)r[k].macs / 128.0;
                cyc[k] = mem > comp ? mem : comp;
            }
            printf(" %9.3f %9.3f %9.3f | %6.1f%%\n", cyc[1] / cyc[0], cyc[2] / cyc[0], cyc[3] / cyc[0],
                   100 * ch[3].overbooking_rate);
            for (int k = 1; k < 4; k++) {
                gsum[0][k - 1] += log((double)r[k].dram_bytes / b0);
                gsum[1][k - 1] += log(cyc[k] / cyc[0]);
            }
            counted++;
        }
        case_free(&c);
    }
    if (counted)
        printf("%-24s %13s | %9.3f %9.3f %9.3f | %9.3f %9.3f %9.3f |  (geometric means)\n", "all",
               "", exp(gsum[0][0] / counted), exp(gsum[0][1] / counted), exp(gsum[0][2] / counted),
               exp(gsum[1][0] / counted), exp(gsum[1][1] / counted), exp(gsum[1][2] / counted));
}

static void bench_drt(char paths[][512], char names[][64], unsigned n)
{
    printf("\n== drt vs S-U-C: specs/extensor-llb.yaml with a 256 KiB LLB (A 5 %%, B 45 %%, Z 50 %%), "
           "order JKI, exact: DRAM bytes, DRT / S-U-C (dense conservative, ExTensor-N)\n");
    printf("%-24s %14s %14s %9s %14s %9s\n", "matrix", "S-U-C (dense)", "DRT", "ratio",
           "prescient", "ratio");
    double g = 0, gp = 0;
    unsigned counted = 0;
    for (unsigned m = 0; m < n; m++) {
        bench_case c;
        const char *llb[1] = { "architecture.levels.LLB.capacity=256KiB" };
        if (case_load(&c, "specs/extensor-llb.yaml", paths[m], llb, 1))
            continue;
        tessel_result r[3];
        tessel_strategy_choice ch[3];
        const char *s0[2] = { "mapping.strategy=conservative", "mapping.strategy_options.worst=dense" };
        const char *s1[1] = { "mapping.strategy=drt" };
        const char *s2[1] = { "mapping.strategy=prescient" };
        if (!run(&c, s0, 2, TESSEL_STRATEGY_EXACT, &r[0], &ch[0]) &&
            !run(&c, s1, 1, TESSEL_STRATEGY_EXACT, &r[1], &ch[1]) &&
            !run(&c, s2, 1, TESSEL_STRATEGY_EXACT, &r[2], &ch[2])) {
            double a = (double)r[1].dram_bytes / (double)r[0].dram_bytes;
            double b = (double)r[1].dram_bytes / (double)r[2].dram_bytes;
            printf("%-24s %14llu %14llu %9.3f %14llu %9.3f\n", names[m],
                   (unsigned long long)r[0].dram_bytes, (unsigned long long)r[1].dram_bytes, a,
                   (unsigned long long)r[2].dram_bytes, b);
            g += log(a);
            gp += log(b);
            counted++;
        }
        case_free(&c);
    }
    if (counted)
        printf("%-24s %14s %14s %9.3f %14s %9.3f  (geometric means)\n", "all", "", "",
               exp(g / counted), "", exp(gp / counted));
}

/* ------------------------------------------------------------------ */
/* extensor3: the extensor template's variants on the full hierarchy. */

typedef struct ext_point {
    int ok;
    tessel_result r;
    double cycles, energy_pj;
    char shape[160];
} ext_point;

/* One variant: specs/extensor-VARIANT.yaml on the matrix (LLB capacity
 * `llb`, NULL: the spec's 30 MiB), priced with the spec's energy tables. */
static void ext_run(const char *variant, const char *matrix, const char *llb,
                    tessel_strategy_estimator est, ext_point *p)
{
    memset(p, 0, sizeof(*p));
    char spec[64];
    snprintf(spec, sizeof(spec), "specs/extensor-%s.yaml", variant);
    bench_case c;
    const char *extra[1] = { llb };
    if (case_load(&c, spec, matrix, extra, llb ? 1 : 0))
        return;
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    tessel_energy_db *db = NULL;
    tessel_design_energy energy;
    int rc = tessel_energy_db_load(c.spec, NULL, &db, &errors);
    if (!rc)
        rc = tessel_energy_design(db, c.spec, &energy, &errors);
    tessel_diag d;
    tessel_diag_clear(&d);
    if (rc && errors.count)
        d = errors.items[0];
    tessel_diag_list_free(&errors);
    tessel_strategy_inputs in = { c.data, NULL, NULL };
    tessel_strategy_choice ch;
    if (!rc)
        rc = tessel_template_extensor_run(c.spec, &in, est, NULL, &p->r, &ch, &d);
    tessel_report_point *pt = NULL;
    if (!rc && !(pt = malloc(sizeof(*pt))))
        rc = TESSEL_ENOMEM;
    if (!rc)
        rc = tessel_report_point_build(c.spec, &p->r, &energy, "bench", variant, pt, &d);
    if (rc) {
        fprintf(stderr, "bench_strategy: extensor-%s: %s\n", variant, d.message);
    } else {
        p->ok = 1;
        p->cycles = pt->roofline.cycles;
        p->energy_pj = pt->energy_pj;
        snprintf(p->shape, sizeof(p->shape), "%s", ch.shape);
    }
    free(pt);
    tessel_energy_db_free(&db);
    case_free(&c);
}

static double rel_err(uint64_t stat, uint64_t exact)
{
    return exact ? ((double)stat - (double)exact) / (double)exact : 0;
}

static void bench_extensor3(char paths[][512], char names[][64], unsigned n, const char *llb)
{
    static const char *const variant[4] = { "n", "p", "ob", "drt" };
    printf("\n== extensor3: template extensor, variants N / P / OB / DRT on DRAM -> LLB -> PEB "
           "(%s), A x A\n", llb ? llb : "LLB 30 MiB as specs/extensor.yaml");
    printf("   exact: DRAM bytes of N; traffic ratio (DRAM / compulsory) per variant; cycles and "
           "energy relative to N;\n   stat: relative error of the stat DRAM bytes against exact\n");
    printf("%-21s %12s | %6s %6s %6s %6s | %6s %6s %6s | %6s %6s %6s | %7s %7s %7s %7s\n",
           "matrix", "N dram", "N x", "P x", "OB x", "DRT x", "P cyc", "OB cyc", "DRT cy", "P en",
           "OB en", "DRT en", "N err", "P err", "OB err", "DRT err");
    double gcyc[4] = { 0 }, gen[4] = { 0 }, gx[4] = { 0 }, maxerr[4] = { 0 };
    unsigned counted = 0;
    for (unsigned m = 0; m < n; m++) {
        ext_point ex[4], st[4];
        int ok = 1;
        for (int v = 0; v < 4; v++) {
            ext_run(variant[v], paths[m], llb, TESSEL_STRATEGY_EXACT, &ex[v]);
            ext_run(variant[v], paths[m], llb, TESSEL_STRATEGY_STAT, &st[v]);
            ok &= ex[v].ok && st[v].ok;
        }
        if (!ok)
            continue;
        double x[4];
        for (int v = 0; v < 4; v++)
            x[v] = ex[v].r.compulsory_bytes
                       ? (double)ex[v].r.dram_bytes / (double)ex[v].r.compulsory_bytes
                       : 0;
        printf("%-21s %12llu | %6.2f %6.2f %6.2f %6.2f | %6.3f %6.3f %6.3f | %6.3f %6.3f %6.3f |",
               names[m], (unsigned long long)ex[0].r.dram_bytes, x[0], x[1], x[2], x[3],
               ex[1].cycles / ex[0].cycles, ex[2].cycles / ex[0].cycles,
               ex[3].cycles / ex[0].cycles, ex[1].energy_pj / ex[0].energy_pj,
               ex[2].energy_pj / ex[0].energy_pj, ex[3].energy_pj / ex[0].energy_pj);
        for (int v = 0; v < 4; v++) {
            double e = rel_err(st[v].r.dram_bytes, ex[v].r.dram_bytes);
            printf(" %+6.1f%%", 100 * e);
            if (fabs(e) > maxerr[v])
                maxerr[v] = fabs(e);
            gx[v] += log(x[v] > 0 ? x[v] : 1);
            gcyc[v] += log(ex[v].cycles / ex[0].cycles);
            gen[v] += log(ex[v].energy_pj / ex[0].energy_pj);
        }
        printf("\n");
        counted++;
    }
    if (!counted)
        return;
    printf("%-21s %12s | %6.2f %6.2f %6.2f %6.2f | %6.3f %6.3f %6.3f | %6.3f %6.3f %6.3f |",
           "geomean", "", exp(gx[0] / counted), exp(gx[1] / counted), exp(gx[2] / counted),
           exp(gx[3] / counted), exp(gcyc[1] / counted), exp(gcyc[2] / counted),
           exp(gcyc[3] / counted), exp(gen[1] / counted), exp(gen[2] / counted),
           exp(gen[3] / counted));
    printf(" max |err| %.1f%% %.1f%% %.1f%% %.1f%%\n", 100 * maxerr[0], 100 * maxerr[1],
           100 * maxerr[2], 100 * maxerr[3]);
}

/* Whether A's and B's worst tiles at (ti, tk, tj) fit their partitions. */
static int fits(const bench_case *c, const uint64_t *t)
{
    const tessel_spec_level *lv = &c->spec->level[1];
    tessel_format_widths w;
    tessel_format_widths_init(&w);
    for (int in = 1; in <= 2; in++) {
        const tessel_tensor *x = c->data->tensor[in];
        uint64_t shape[2] = { in == 1 ? t[0] : t[2], in == 1 ? t[2] : t[1] };
        tessel_tile_grid *g = NULL;
        if (tessel_tile_grid_build(x, shape, NULL, &g, NULL))
            return 0;
        uint64_t mx = 0;
        for (uint64_t k = 0; k < g->nonempty; k++)
            mx = tessel_tile_grid_count(g, k) > mx ? tessel_tile_grid_count(g, k) : mx;
        tessel_tile_grid_free(&g);
        uint64_t part = (uint64_t)(lv->tensor[in].partition_fraction * (double)lv->capacity);
        if (tessel_format_footprint(TESSEL_FORMAT_CSR, 2, shape, mx, &w) > part)
            return 0;
    }
    return 1;
}

static void bench_d2t2(char paths[][512], char names[][64], unsigned n)
{
    printf("\n== d2t2 (one-level spec, exact DRAM bytes): d2t2's choice vs square vs the best "
           "fitting tile of an exhaustive search (edges 8 x 2^a)\n");
    printf("%-24s %12s %12s %12s %8s %8s %6s  %s\n", "matrix", "square", "d2t2", "best",
           "d2t2/sq", "d2t2/bst", "tried", "best tile");
    unsigned within = 0, counted = 0;
    for (unsigned m = 0; m < n; m++) {
        bench_case c;
        if (case_load(&c, "bench/strategy/one-level.yaml", paths[m], NULL, 0))
            continue;
        tessel_result rs, rd;
        tessel_strategy_choice cs, cd;
        const char *ss[1] = { "mapping.strategy=conservative" };
        const char *sd[1] = { "mapping.strategy=d2t2" };
        if (run(&c, ss, 1, TESSEL_STRATEGY_EXACT, &rs, &cs) ||
            run(&c, sd, 1, TESSEL_STRATEGY_EXACT, &rd, &cd)) {
            case_free(&c);
            continue;
        }
        uint64_t edges[24], ne = 0;
        for (uint64_t e = 8; ne < 24; e *= 2) {
            int last = 0;
            edges[ne++] = e;
            for (unsigned x = 0; x < 3; x++)
                last |= e >= c.data->extent[x];
            if (last && e >= c.data->extent[0] && e >= c.data->extent[2])
                break;
        }
        double best = INFINITY, t0 = bench_now();
        uint64_t bt[3] = { 0, 0, 0 };
        unsigned tried = 0;
        int partial = 0;
        /* largest tiles first: they are the cheap ones to walk, and a budget of 60 s
         * per matrix keeps the largest graphs from taking hours */
        for (uint64_t a = ne; a-- > 0;)
            for (uint64_t b = ne; b-- > 0;)
                for (uint64_t k = ne; k-- > 0;) {
                    if (bench_now() - t0 > 60) {
                        partial = 1;
                        continue;
                    }
                    uint64_t t[3] = { edges[a], edges[b], edges[k] }; /* i, j, k */
                    if (!fits(&c, t))
                        continue;
                    tessel_spec s = *c.spec;
                    for (int x = 0; x < 3; x++)
                        s.level[1].tile[x] = t[x] >= c.data->extent[x] ? 0 : t[x];
                    tessel_result r;
                    tessel_diag d;
                    if (tessel_model_exact(&s, c.data, NULL, &r, &d))
                        continue;
                    tried++;
                    if ((double)r.dram_bytes < best) {
                        best = (double)r.dram_bytes;
                        memcpy(bt, t, sizeof(bt));
                    }
                }
        double ratio = (double)rd.dram_bytes / best;
        within += ratio <= 1.10;
        counted++;
        printf("%-24s %12llu %12llu %12.0f %8.3f %8.3f %5u%s  i:%llu,j:%llu,k:%llu (d2t2 %s)\n",
               names[m], (unsigned long long)rs.dram_bytes, (unsigned long long)rd.dram_bytes,
               best, (double)rd.dram_bytes / (double)rs.dram_bytes, ratio, tried,
               partial ? "+" : " ",
               (unsigned long long)bt[0], (unsigned long long)bt[1], (unsigned long long)bt[2],
               cd.shape);
        case_free(&c);
    }
    printf("d2t2 within 10 %% of the exhaustive best on %u of %u matrices (%.0f %%); "
           "tried+ = the 60 s budget ended the search\n",
           within, counted, counted ? 100.0 * within / counted : 0);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/data";
    const char *what = argc > 2 ? argv[2] : "all";
    setvbuf(stdout, NULL, _IOLBF, 0); /* a row at a time: some tables take minutes */
    static char paths[MAX_MATRICES][512];
    static char names[MAX_MATRICES][64];
    unsigned n = read_manifest(dir, paths, names);
    if (!n)
        return 1;
    int all = strcmp(what, "all") == 0;
    if (all || !strcmp(what, "swiftiles"))
        bench_swiftiles(paths, names, n);
    if (all || !strcmp(what, "tailors")) {
        bench_tailors("specs/extensor.yaml", paths, names, n);
        bench_tailors("bench/strategy/one-level.yaml", paths, names, n);
    }
    if (all || !strcmp(what, "drt"))
        bench_drt(paths, names, n);
    if (all || !strcmp(what, "d2t2"))
        bench_d2t2(paths, names, n);
    if (all || !strcmp(what, "extensor3")) {
        bench_extensor3(paths, names, n, NULL);
        bench_extensor3(paths, names, n, "architecture.levels.LLB.capacity=256KiB");
    }
    return 0;
}

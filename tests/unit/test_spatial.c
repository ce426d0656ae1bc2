/* Spatial mapping (src/model/spatial.c, docs/models/spatial.md): each
 * distribution policy on hand-checked small matrices, a split over a child
 * storage level's tiles, steps that wait for their busiest instance, and the
 * static policies against a brute-force per-PE schedule over the dense loop
 * nest; intersection work by hand, on DRT micro tiles and against a brute
 * force over the PE tiles. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "tessel/report.h"
#include "test_data.h"
#include "test_specs.h"

/* Index numbers in test_spec_spmspm: i 0, j 1, k 2. */
enum { I = 0, J = 1, K = 2 };

/* n x n identity: every MAC of row i of A x I is one nonzero of A's row i. */
static tessel_tensor *identity(uint32_t n)
{
    uint32_t(*e)[2] = calloc(n, sizeof(*e));
    for (uint32_t x = 0; x < n; x++)
        e[x][0] = e[x][1] = x;
    tessel_tensor *t = test_coo_matrix(n, n, 0, (const uint32_t(*)[2])e, n);
    free(e);
    return t;
}

/* A 6x6 whose rows hold w[r] nonzeros (columns 0..w[r]-1). */
static tessel_tensor *rows_of(const unsigned w[6])
{
    uint32_t e[36][2];
    size_t n = 0;
    for (uint32_t r = 0; r < 6; r++)
        for (uint32_t c = 0; c < w[r]; c++) {
            e[n][0] = r;
            e[n][1] = c;
            n++;
        }
    return test_coo_matrix(6, 6, 0, (const uint32_t(*)[2])e, n);
}

static tessel_spatial split(tessel_spec *s, const tessel_workload_data *d)
{
    tessel_spatial sp;
    tessel_diag diag;
    int rc = tessel_model_spatial(s, d, NULL, &sp, &diag);
    ck_assert_msg(rc == 0, "spatial failed: %s", diag.message);
    ck_assert_int_eq(sp.present, 1);
    return sp;
}

/* Rows of A x I with work w = 3,1,1,1,2,0 MACs, one LLB tile, i split over
 * 2 PEs (the child of the innermost level is the compute: one row a unit).
 *   blocked (3 rows each):       {3+1+1, 1+2+0} = {5, 3}
 *   static-round-robin (i mod 2): {3+1+2, 1+1+0} = {6, 2}
 *   dynamic (next row to the least loaded, ties to the lower number):
 *     r0 -> 0 (3), r1 -> 1 (1), r2 -> 1 (2), r3 -> 1 (3), r4 -> 0 (5) = {5, 3}
 * One step, so the cycles are the busiest instance's MACs (1 MAC a cycle
 * per PE). Mean 4: imbalance 5/4 or 6/4, stdev 1 or 2. */
START_TEST(policies_by_hand)
{
    static const unsigned w[6] = { 3, 1, 1, 1, 2, 0 };
    static const double want_max[3] = { 5, 6, 5 }, want_sd[3] = { 1, 2, 1 };
    tessel_tensor *a = rows_of(w), *b = identity(6);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    for (int policy = 0; policy < 3; policy++) {
        tessel_spec s;
        test_spec_spmspm(&s, "IKJ", 0, 0, 0, 0, 8, 8);
        s.compute.pes = 2;
        s.level[1].spatial[I] = 2;
        s.level[1].spatial_policy = policy;
        tessel_spatial sp = split(&s, &d);
        ck_assert_uint_eq(sp.used, 2);
        ck_assert_uint_eq(sp.steps, 1);
        ck_assert_uint_eq(sp.units, 5); /* row 5 has no work */
        ck_assert_double_eq_tol(sp.step_max_macs, want_max[policy], 1e-12);
        ck_assert_double_eq_tol(sp.max_macs, want_max[policy], 1e-12);
        ck_assert_double_eq_tol(sp.mean_macs, 4, 1e-12);
        ck_assert_double_eq_tol(sp.stdev_macs, want_sd[policy], 1e-12);
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* w = 1,1,3,1,1,1: blocked {1+1+3, 1+1+1} = {5, 3}, round robin {1+3+1,
 * 1+1+1} = {5, 3}, dynamic r0 -> 0, r1 -> 1, r2 -> 0 (4), r3 -> 1 (2),
 * r4 -> 1 (3), r5 -> 1 (4) = {4, 4}: the work queue balances what a static
 * deal cannot. */
START_TEST(dynamic_balances)
{
    static const unsigned w[6] = { 1, 1, 3, 1, 1, 1 };
    static const double want_max[3] = { 5, 5, 4 };
    tessel_tensor *a = rows_of(w), *b = identity(6);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    for (int policy = 0; policy < 3; policy++) {
        tessel_spec s;
        test_spec_spmspm(&s, "IKJ", 0, 0, 0, 0, 8, 8);
        s.compute.pes = 2;
        s.level[1].spatial[I] = 2;
        s.level[1].spatial_policy = policy;
        tessel_spatial sp = split(&s, &d);
        ck_assert_double_eq_tol(sp.max_macs, want_max[policy], 1e-12);
        ck_assert_double_eq_tol(sp.step_max_macs, want_max[policy], 1e-12);
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Exact, the split (none when the spec has none) and the report of A (rows
 * holding w nonzeros) x I on s. */
static void priced(const tessel_spec *s, const unsigned w[6], tessel_result *r,
                   tessel_report_point *p)
{
    tessel_tensor *a = rows_of(w), *b = identity(6);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_exact(s, &d, NULL, r, &diag), 0);
    ck_assert_int_eq(tessel_model_spatial(s, &d, NULL, &r->spatial, &diag), 0);
    tessel_design_energy e;
    memset(&e, 0, sizeof(e));
    ck_assert_int_eq(tessel_report_point_build(s, r, &e, "x", "fixed", p, &diag), 0);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}

/* Steps wait for their busiest instance. w = 1,1,3,1,1,1 with LLB tiles of
 * 3 rows (two steps), blocked over 2 PEs inside each (blocks of 2 rows):
 *   step 0: rows 0,1 -> PE 0 (2), row 2 -> PE 1 (3): waits 3
 *   step 1: rows 3,4 -> PE 0 (2), row 5 -> PE 1 (1): waits 2
 * The totals are even (4 and 4: imbalance 1) but the run takes 5 cycles,
 * not 4: pe_utilization 4 / 5. Through the report: cycles 5 (no bandwidth
 * bound), compute_cycles 8 / 2 = 4. Without the split the columns are
 * empty (NaN) and cycles the roofline's 4. */
START_TEST(steps_wait_for_the_slowest)
{
    static const unsigned w[6] = { 1, 1, 3, 1, 1, 1 };
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", 3, 0, 0, 0, 8, 8);
    s.compute.pes = 2;
    s.level[1].spatial[I] = 2;
    tessel_result r;
    tessel_report_point p;
    priced(&s, w, &r, &p);
    ck_assert_int_eq(r.spatial.present, 1);
    ck_assert_uint_eq(r.spatial.steps, 2);
    ck_assert_double_eq_tol(r.spatial.step_max_macs, 5, 1e-12);
    ck_assert_double_eq_tol(r.spatial.max_macs, 4, 1e-12);
    ck_assert_double_eq_tol(r.spatial.stdev_macs, 0, 1e-12);
    ck_assert_double_eq_tol(p.spatial_cycles, 5, 1e-12);
    ck_assert_double_eq_tol(p.roofline.cycles, 5, 1e-12);
    ck_assert_double_eq_tol(p.roofline.compute_cycles, 4, 1e-12);
    ck_assert_double_eq_tol(p.imbalance, 1, 1e-12);
    ck_assert_double_eq_tol(p.pe_utilization, 0.8, 1e-12);
    ck_assert_str_eq(p.bound, "compute");

    s.level[1].spatial[I] = 0;
    ck_assert_int_eq(tessel_spatial_level(&s), -1);
    priced(&s, w, &r, &p);
    ck_assert_int_eq(r.spatial.present, 0);
    ck_assert(isnan(p.spatial_cycles) && isnan(p.imbalance));
    ck_assert_double_eq_tol(p.roofline.cycles, 4, 1e-12);
}
END_TEST

/* The brute forces' state: the split's geometry, the dense operands and
 * every (level tile, instance)'s load. */
typedef struct bf {
    const tessel_spec_level *L;
    unsigned f[3], used;
    uint64_t n, nt, edge[3], unit[3];
    char *dA, *dB;
    double *load;
} bf;

static void bf_init(bf *w, const tessel_spec *s, const tessel_tensor *a, const tessel_tensor *b,
                    uint64_t n, double *tot)
{
    const tessel_spec_level *C = &s->level[2];
    w->L = &s->level[1];
    w->n = n;
    w->used = 1;
    for (unsigned x = 0; x < 3; x++) {
        w->f[x] = w->L->spatial[x] ? w->L->spatial[x] : 1;
        w->edge[x] = w->L->tile[x] ? w->L->tile[x] : n;
        w->unit[x] = C->tile[x] ? C->tile[x] : w->edge[x];
        w->used *= w->f[x];
    }
    w->nt = (n + w->edge[0] - 1) / w->edge[0];
    w->load = calloc((size_t)(w->nt * w->nt * w->nt) * w->used, sizeof(double));
    for (unsigned p = 0; p < w->used; p++)
        tot[p] = 0;
    w->dA = calloc(n * n, 1);
    w->dB = calloc(n * n, 1);
    for (uint64_t r = 0; r < n; r++) {
        for (uint64_t e = a->ptr[r]; e < a->ptr[r + 1]; e++)
            w->dA[r * n + a->idx[1][e]] = 1;
        for (uint64_t e = b->ptr[r]; e < b->ptr[r + 1]; e++)
            w->dB[r * n + b->idx[1][e]] = 1;
    }
}

/* Adds work x at coordinates c (i, j, k) to the instance they name. */
static void bf_add(bf *w, const uint64_t c[3], double x, double *tot)
{
    uint64_t tile = 0;
    unsigned inst = 0;
    /* instance digits in the order i, k, j (the model's axes) */
    static const unsigned axis[3] = { 0, 2, 1 };
    for (unsigned q = 0; q < 3; q++) {
        unsigned d = axis[q];
        uint64_t t = c[d] / w->edge[d], u = (c[d] % w->edge[d]) / w->unit[d];
        uint64_t len = w->n - t * w->edge[d] < w->edge[d] ? w->n - t * w->edge[d] : w->edge[d];
        uint64_t units = (len + w->unit[d] - 1) / w->unit[d];
        uint64_t block = (units + w->f[d] - 1) / w->f[d];
        unsigned slot = w->L->spatial_policy == TESSEL_SPEC_SPATIAL_ROUND_ROBIN
                            ? (unsigned)(u % w->f[d])
                            : (unsigned)(u / block);
        inst = inst * w->f[d] + slot;
        tile = tile * w->nt + t;
    }
    w->load[tile * w->used + inst] += x;
    tot[inst] += x;
}

/* The busiest instance per level tile, summed; frees w. */
static double bf_end(bf *w)
{
    double step_max = 0;
    for (uint64_t t = 0; t < w->nt * w->nt * w->nt; t++) {
        double m = 0;
        for (unsigned p = 0; p < w->used; p++)
            m = w->load[t * w->used + p] > m ? w->load[t * w->used + p] : m;
        step_max += m;
    }
    free(w->dA);
    free(w->dB);
    free(w->load);
    return step_max;
}

/* Brute force: every (i, k, j) of the dense loop nest with A(i,k) and
 * B(k,j) nonzero goes to the instance its child-tile coordinates inside its
 * level tile name (blocked or modulo per split index); per level tile the
 * busiest instance, over the run each instance's total. */
static void brute(const tessel_spec *s, const tessel_tensor *a, const tessel_tensor *b,
                  uint64_t n, double *step_max, double *tot)
{
    bf w;
    bf_init(&w, s, a, b, n, tot);
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++)
            for (uint64_t k = 0; k < n; k++)
                if (w.dA[i * n + k] && w.dB[k * n + j]) {
                    uint64_t c[3] = { i, j, k };
                    bf_add(&w, c, 1, tot);
                }
    *step_max = bf_end(&w);
}

/* LLB tiles of edge e over a PE level of 8 instances with tiles of 3,
 * split (i, j, k factors; 0 = not split) at the LLB under policy. */
static void pe_spec(tessel_spec *s, uint64_t e, const unsigned split[3], int policy)
{
    test_spec_spmspm(s, "IKJ", e, e, e, 0, 8, 8);
    s->nlevels = 3;
    s->level[2] = s->level[1];
    snprintf(s->level[2].name, sizeof(s->level[2].name), "PE");
    s->level[2].instances = 8;
    for (unsigned x = 0; x < 3; x++) {
        s->level[2].tile[x] = 3;
        s->level[1].spatial[x] = split[x];
    }
    s->level[1].spatial_policy = policy;
    s->compute.pes = 8;
}

/* A PE level (instances 8) below the LLB: LLB tiles of 10 (border tiles of
 * 7 along each index of 37), PE tiles of 3, split {i: 2, j: 4} and
 * {k: 2, i: 4}, both static policies, against the brute force. */
START_TEST(static_policies_match_brute_force)
{
    const uint64_t n = 37;
    tessel_tensor *a = test_random_matrix(n, n, 0.15, 7), *b = test_random_matrix(n, n, 0.2, 11);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    static const unsigned splits[2][3] = { { 2, 4, 0 }, { 4, 0, 2 } }; /* i, j, k */
    for (int policy = 0; policy < 2; policy++)
        for (int v = 0; v < 2; v++) {
            tessel_spec s;
            pe_spec(&s, 10, splits[v], policy);
            tessel_spatial sp = split(&s, &d);
            double want_step = 0, tot[8];
            brute(&s, a, b, n, &want_step, tot);
            double max = 0, sum = 0;
            for (unsigned p = 0; p < 8; p++) {
                max = tot[p] > max ? tot[p] : max;
                sum += tot[p];
            }
            ck_assert_uint_eq(sp.used, 8);
            ck_assert_msg(sum > 0, "no work: the test could not check anything");
            ck_assert_double_eq_tol(sp.step_max_macs, want_step, 1e-9);
            ck_assert_double_eq_tol(sp.max_macs, max, 1e-9);
            ck_assert_double_eq_tol(sp.mean_macs * 8, sum, 1e-9);
        }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* An intersection unit at one cycle a step. */
static void intersect_on(tessel_spec *s)
{
    snprintf(s->compute.intersect.cls, sizeof(s->compute.intersect.cls), "intersect");
    s->compute.intersect_step_cycles = 1;
}

/* With an intersection unit a unit's work is its merged coordinates plus
 * its MACs (docs/models/spatial.md). Rows w = 3,1,1,1,2,0 of A x I, one LLB
 * tile, {i: 2} over 2 PEs: below the innermost level a unit is one row of A
 * against the whole of B, one child tile: nnz(A row) + nnz(I) = w + 6 steps
 * where the row is non-empty, so rows 0-4 take 9,7,7,7,8 steps and
 * 3,1,1,1,2 MACs: work 12,8,8,8,10 (38 steps in all).
 *   blocked {12+8+8, 8+10} = {28, 18}; round robin {12+8+10, 8+8} = {30, 16};
 *   dynamic r0 -> 0 (12), r1 -> 1 (8), r2 -> 1 (16), r3 -> 0 (20),
 *   r4 -> 1 (26) = {20, 26}.
 * Mean 23: stdev 5, 7, 3. At 2 cycles a step, blocked: {21+15+15, 15+18}. */
START_TEST(intersection_work_by_hand)
{
    static const unsigned w[6] = { 3, 1, 1, 1, 2, 0 };
    static const double want_max[3] = { 28, 30, 26 }, want_sd[3] = { 5, 7, 3 };
    tessel_tensor *a = rows_of(w), *b = identity(6);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    for (int policy = 0; policy < 3; policy++) {
        tessel_spec s;
        test_spec_spmspm(&s, "IKJ", 0, 0, 0, 0, 8, 8);
        s.compute.pes = 2;
        intersect_on(&s);
        s.level[1].spatial[I] = 2;
        s.level[1].spatial_policy = policy;
        tessel_spatial sp = split(&s, &d);
        ck_assert_uint_eq(sp.intersect_steps, 38);
        ck_assert_double_eq_tol(sp.step_max_work, want_max[policy], 1e-12);
        ck_assert_double_eq_tol(sp.max_work, want_max[policy], 1e-12);
        ck_assert_double_eq_tol(sp.mean_work, 23, 1e-12);
        ck_assert_double_eq_tol(sp.stdev_work, want_sd[policy], 1e-12);
        if (policy == 0) {
            s.compute.intersect_step_cycles = 2;
            sp = split(&s, &d);
            ck_assert_double_eq_tol(sp.step_max_work, 51, 1e-12);
            ck_assert_double_eq_tol(sp.mean_work, (51.0 + 33.0) / 2, 1e-12);
        }
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Under the drt strategy the units below the innermost level are its micro
 * tiles. Same A x I with 2x2 micro tiles, {i: 2} blocked over 2 PEs: units
 * of 2 rows (3 of them, blocks of 2 units). Effectual child tiles (ci, ck,
 * cj) with A's and I's nonzeros: (0,0,0) 3 + 2, (0,1,1) 1 + 2, (1,0,0)
 * 2 + 2, (2,0,0) 2 + 2. Unit 0: 8 steps + 4 MACs = 12; units 1 and 2:
 * 4 + 2 = 6 each. PE 0 gets units 0 and 1 (18), PE 1 unit 2 (6). */
START_TEST(drt_micro_tile_units)
{
    static const unsigned w[6] = { 3, 1, 1, 1, 2, 0 };
    tessel_tensor *a = rows_of(w), *b = identity(6);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", 0, 0, 0, 0, 8, 8);
    s.compute.pes = 2;
    intersect_on(&s);
    snprintf(s.strategy.name, sizeof(s.strategy.name), "drt");
    s.strategy.micro[0] = s.strategy.micro[1] = 2;
    s.level[1].spatial[I] = 2;
    tessel_spatial sp = split(&s, &d);
    ck_assert_uint_eq(sp.units, 3);
    ck_assert_uint_eq(sp.intersect_steps, 16);
    ck_assert_double_eq_tol(sp.step_max_work, 18, 1e-12);
    ck_assert_double_eq_tol(sp.max_work, 18, 1e-12);
    ck_assert_double_eq_tol(sp.mean_work, 12, 1e-12);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Brute force of the intersection work: every child tile (PE tile) of the
 * dense grid whose A and B tiles both hold nonzeros costs their nonzeros
 * plus its products, on the instance its first coordinates name. */
static void brute_work(const tessel_spec *s, const tessel_tensor *a, const tessel_tensor *b,
                       uint64_t n, double *step_max, double *tot, double *steps)
{
    bf w;
    bf_init(&w, s, a, b, n, tot);
    const uint64_t *u = w.unit, nc = (n + u[0] - 1) / u[0];
    *steps = 0;
    for (uint64_t ci = 0; ci < nc; ci++)
        for (uint64_t cj = 0; cj < nc; cj++)
            for (uint64_t ck = 0; ck < nc; ck++) {
                double na = 0, nb = 0, macs = 0;
                uint64_t c0[3] = { ci * u[0], cj * u[1], ck * u[2] };
                for (uint64_t i = c0[0]; i < c0[0] + u[0] && i < n; i++)
                    for (uint64_t k = c0[2]; k < c0[2] + u[2] && k < n; k++)
                        na += w.dA[i * n + k];
                for (uint64_t k = c0[2]; k < c0[2] + u[2] && k < n; k++)
                    for (uint64_t j = c0[1]; j < c0[1] + u[1] && j < n; j++)
                        nb += w.dB[k * n + j];
                if (!na || !nb)
                    continue;
                for (uint64_t i = c0[0]; i < c0[0] + u[0] && i < n; i++)
                    for (uint64_t k = c0[2]; k < c0[2] + u[2] && k < n; k++)
                        for (uint64_t j = c0[1]; j < c0[1] + u[1] && j < n; j++)
                            macs += w.dA[i * n + k] && w.dB[k * n + j];
                bf_add(&w, c0, na + nb + macs, tot);
                *steps += na + nb;
            }
    *step_max = bf_end(&w);
}

/* A PE level of 8 instances (tiles of 3) below LLB tiles of 12 on 37 x 37
 * (border tiles of 1), intersection work under both static policies, against
 * the brute force; the steps summed over the units are exact's
 * `intersections` (both count the merged nonzeros of the effectual PE tiles). */
START_TEST(intersection_work_matches_brute_force)
{
    const uint64_t n = 37;
    tessel_tensor *a = test_random_matrix(n, n, 0.15, 7), *b = test_random_matrix(n, n, 0.2, 11);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    static const unsigned splits[2][3] = { { 2, 4, 0 }, { 4, 0, 2 } }; /* i, j, k */
    for (int policy = 0; policy < 2; policy++)
        for (int v = 0; v < 2; v++) {
            tessel_spec s;
            pe_spec(&s, 12, splits[v], policy);
            intersect_on(&s);
            tessel_spatial sp = split(&s, &d);
            double want_step = 0, tot[8], steps = 0;
            brute_work(&s, a, b, n, &want_step, tot, &steps);
            double max = 0, sum = 0;
            for (unsigned p = 0; p < 8; p++) {
                max = tot[p] > max ? tot[p] : max;
                sum += tot[p];
            }
            ck_assert_msg(steps > 0, "no intersections: the test could not check anything");
            ck_assert_double_eq_tol((double)sp.intersect_steps, steps, 1e-9);
            ck_assert_double_eq_tol(sp.step_max_work, want_step, 1e-9);
            ck_assert_double_eq_tol(sp.max_work, max, 1e-9);
            ck_assert_double_eq_tol(sp.mean_work * 8, sum, 1e-9);
            if (policy == 0 && v == 0) {
                tessel_result r;
                tessel_diag diag;
                ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &r, &diag), 0);
                ck_assert_uint_eq(r.intersections, sp.intersect_steps);
            }
        }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* The split from statistics collected for s (base grid chosen from its tiles). */
static tessel_spatial split_stat(tessel_spec *s, const tessel_workload_data *d,
                                 const uint64_t base[2])
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    if (base) {
        o.base[0] = base[0];
        o.base[1] = base[1];
    }
    tessel_stat_data *st = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(s, d, &o, NULL, &st, &diag) == 0, "stats: %s",
                  diag.message);
    tessel_spatial sp;
    int rc = tessel_model_spatial_stat(s, st, NULL, &sp, &diag);
    ck_assert_msg(rc == 0, "spatial stat failed: %s", diag.message);
    ck_assert_int_eq(sp.present, 1);
    tessel_stat_data_free(&st);
    return sp;
}

/* E[max(X, Y)] of independent normals (Clark 1961), the hand formula the
 * integral must reproduce for two instances. */
static double clark(double m1, double v1, double m2, double v2)
{
    double th = sqrt(v1 + v2), al = (m1 - m2) / th;
    double Phi = 0.5 * erfc(-al / sqrt(2.0)), phi = exp(-al * al / 2) / sqrt(2 * M_PI);
    return m1 * Phi + m2 * (1 - Phi) + th * phi;
}

/* Stat on 1x1 base cells: A x I with rows w = 3,1,1,1,2,0, {i: 2} over 2
 * PEs. A unit is a row against the whole of I (k spans 6), so its expected
 * MACs are w x 6 / 6 = w, exact's, and its steps are exact's (38 in all);
 * the MACs' Poisson variance is w. Blocked: PE 0 rows 0-2 (mean 28, variance
 * 5), PE 1 rows 3-5 (18, 3); dynamic (by mean, as exact deals): PE 0 rows 0
 * and 3 (20, 4), PE 1 rows 1, 2, 4 (26, 4). The step waits for the expected
 * maximum of the two normal loads, Clark's formula. */
START_TEST(stat_expected_busiest_by_hand)
{
    static const unsigned w[6] = { 3, 1, 1, 1, 2, 0 };
    tessel_tensor *a = rows_of(w), *b = identity(6);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    static const uint64_t base[2] = { 1, 1 };
    const double want[3] = { clark(28, 5, 18, 3), 0, clark(26, 4, 20, 4) };
    for (int policy = 0; policy < 3; policy += 2) {
        tessel_spec s;
        test_spec_spmspm(&s, "IKJ", 0, 0, 0, 0, 8, 8);
        s.compute.pes = 2;
        intersect_on(&s);
        s.level[1].spatial[I] = 2;
        s.level[1].spatial_policy = policy;
        tessel_spatial sp = split_stat(&s, &d, base), ex = split(&s, &d);
        ck_assert_uint_eq(sp.intersect_steps, 38);
        ck_assert_double_eq_tol(sp.mean_work, ex.mean_work, 1e-9);
        ck_assert_double_eq_tol(sp.max_work, ex.max_work, 1e-9);
        ck_assert_double_eq_tol(sp.step_max_work, want[policy], 1e-6);
        ck_assert(sp.step_max_work > ex.step_max_work);
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Stat against exact on random 37 x 37 operands (LLB tiles of 12, a PE
 * level of tiles of 3, base grid 3): the intersection steps are exact's
 * (the child tiles' nonzeros read off the grid); the expected MACs and the
 * expected busiest instance per step are near exact's. */
START_TEST(stat_matches_exact)
{
    const uint64_t n = 37;
    tessel_tensor *a = test_random_matrix(n, n, 0.15, 7), *b = test_random_matrix(n, n, 0.2, 11);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    static const unsigned splits[2][3] = { { 2, 4, 0 }, { 4, 0, 2 } }; /* i, j, k */
    static const uint64_t base[2] = { 3, 3 };
    for (int policy = 0; policy < 3; policy++)
        for (int v = 0; v < 2; v++) {
            tessel_spec s;
            pe_spec(&s, 12, splits[v], policy);
            intersect_on(&s);
            tessel_spatial ex = split(&s, &d), st = split_stat(&s, &d, base);
            ck_assert_uint_eq(st.intersect_steps, ex.intersect_steps);
            ck_assert_msg(fabs(st.mean_work / ex.mean_work - 1) < 0.02,
                          "mean work: stat %g exact %g", st.mean_work, ex.mean_work);
            ck_assert_msg(fabs(st.step_max_work / ex.step_max_work - 1) < 0.05,
                          "busiest per step: stat %g exact %g (policy %d split %d)",
                          st.step_max_work, ex.step_max_work, policy, v);
        }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* timing: pipeline's per-step network count under -e stat
 * (tessel_model_network_stat, docs/models/timing.md "Per step") against
 * exact's. A = rows 3,1,1,1,2,0 (8 nonzeros), B = I; LLB tiles i:2, k
 * whole, j:1; DRAM's dense network delivers 2 values a cycle to 3 lanes.
 *   IJK: A is stationary (3 fills, one per i tile, each nonzero once).
 *     1x1 cells: folds as STONNE packs them, {3} {1+1+1} {2+0}:
 *       ceil(3/2) + ceil(3/2) + ceil(2/2) = 5, exact's count;
 *     2x2 cells: no row counts to pack, 0 (the pipeline keeps the mean);
 *     3x3 cells cross the i:2 tiles: 0 as well.
 *   JIK with B = A: B is stationary (3 fills: its non-empty columns hold
 *     5, 2 and 1 values) and its j:1 tiles are not whole rows: the sum
 *     over its tiles, ceil(5/2) + ceil(2/2) + ceil(1/2) = 5 on 1x1 cells,
 *     exact's (the mean tile would give 3 x ceil(8/3/2) = 6); 2x2 cells
 *     cross the j:1 tiles: 0. */
static uint64_t network_stat(tessel_spec *s, const tessel_workload_data *d, tessel_result *r,
                             unsigned t, uint64_t cell)
{
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.base[0] = o.base[1] = cell;
    tessel_stat_data *st = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(s, d, &o, NULL, &st, &diag) == 0, "stats: %s",
                  diag.message);
    for (unsigned u = 0; u < r->ntensors; u++)
        r->traffic[1][u].fill_network_cycles = 0;
    int rc = tessel_model_network_stat(s, st, NULL, r, &diag);
    ck_assert_msg(rc == 0, "network stat failed: %s", diag.message);
    tessel_stat_data_free(&st);
    return r->traffic[1][t].fill_network_cycles;
}

START_TEST(network_stat_matches_exact)
{
    static const unsigned w[6] = { 3, 1, 1, 1, 2, 0 };
    tessel_tensor *a = rows_of(w);
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    static const char *const orders[2] = { "IJK", "JIK" };
    for (int v = 0; v < 2; v++) {
        tessel_spec s;
        test_spec_spmspm(&s, orders[v], 2, 0, 1, 0, 8, 8);
        s.compute.pes = 3;
        s.level[0].network_width = 2;
        s.level[0].network_dense = 1;
        tessel_result r;
        tessel_diag diag;
        ck_assert_msg(tessel_model_exact(&s, &d, NULL, &r, &diag) == 0, "exact: %s",
                      diag.message);
        unsigned t = v == 0 ? 1 : 2; /* the stationary input */
        ck_assert_uint_eq(r.traffic[1][t].fills, 3);
        uint64_t want = r.traffic[1][t].fill_network_cycles;
        ck_assert_uint_eq(want, 5);
        ck_assert_uint_eq(network_stat(&s, &d, &r, t, 1), want);
        ck_assert_uint_eq(network_stat(&s, &d, &r, t, 2), 0);
        ck_assert_uint_eq(network_stat(&s, &d, &r, t, 3), 0);
    }
    tessel_tensor_free(&a);
}
END_TEST

/* Splits the model does not price are refused with a reason. */
START_TEST(refusals)
{
    static const unsigned w[6] = { 1, 1, 3, 1, 1, 1 };
    tessel_tensor *a = rows_of(w), *b = identity(6);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", 3, 0, 0, 0, 8, 8);
    s.nlevels = 3;
    s.level[2] = s.level[1];
    s.level[1].spatial[I] = 1;
    s.level[2].spatial[J] = 1;
    tessel_spatial sp;
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_spatial(&s, &d, NULL, &sp, &diag), TESSEL_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(diag.message, "more than one level"));
    s.nlevels = 2;
    s.workload.kind = TESSEL_WORKLOAD_TTM;
    ck_assert_int_eq(tessel_model_spatial(&s, &d, NULL, &sp, &diag), TESSEL_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(diag.message, "SpMSpM and SpMV"));
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

static Suite *spatial_suite(void)
{
    Suite *s = suite_create("spatial");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, policies_by_hand);
    tcase_add_test(tc, dynamic_balances);
    tcase_add_test(tc, steps_wait_for_the_slowest);
    tcase_add_test(tc, static_policies_match_brute_force);
    tcase_add_test(tc, intersection_work_by_hand);
    tcase_add_test(tc, drt_micro_tile_units);
    tcase_add_test(tc, intersection_work_matches_brute_force);
    tcase_add_test(tc, stat_expected_busiest_by_hand);
    tcase_add_test(tc, stat_matches_exact);
    tcase_add_test(tc, network_stat_matches_exact);
    tcase_add_test(tc, refusals);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(spatial_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

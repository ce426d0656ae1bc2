/* The exact estimator: hand-computed traffic, invariants, and a literal
 * brute-force simulation of docs/semantics.md's rules over the dense loop nest. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessel/model.h"
#include "test_alloc.h"
#include "test_specs.h"
#include "test_data.h"

/* ------------------------------------------------------------------ */
/* Fixtures: a hand-built spec (independent of the YAML loader). */

static void spec_spmspm(tessel_spec *s, const char *order, uint64_t ti, uint64_t tk, uint64_t tj,
                        int format)
{
    test_spec_spmspm(s, order, ti, tk, tj, format, 8, 8);
}

/* spec_spmspm with a 1000-byte buffer whose Z partition is `part` bytes
 * (A and B fit): the output spill tests. */
static void spec_zpart(tessel_spec *s, const char *order, uint64_t ti, uint64_t tk, uint64_t tj,
                       uint64_t part)
{
    spec_spmspm(s, order, ti, tk, tj, 0);
    s->level[1].capacity = 1000;
    s->level[1].tensor[0].partition_bytes = part;
}

static tessel_tensor *matrix(uint64_t rows, uint64_t cols, const uint32_t (*e)[2], size_t n)
{
    return test_coo_matrix(rows, cols, 0, e, n);
}

static tessel_tensor *random_matrix(uint64_t rows, uint64_t cols, double density, unsigned seed)
{
    return test_random_matrix(rows, cols, density, seed);
}

static void data_of(tessel_workload_data *d, tessel_tensor *a, tessel_tensor *b)
{
    test_spmspm_data(d, a, b);
}

static const uint64_t Z = 0, A = 1, B = 2;

static tessel_result run(const tessel_spec *s, const tessel_workload_data *d)
{
    tessel_result r;
    tessel_diag diag;
    int rc = tessel_model_exact(s, d, NULL, &r, &diag);
    ck_assert_msg(rc == 0, "exact failed: %s", diag.message);
    return r;
}

static uint64_t bytes(const tessel_result *r, unsigned l, uint64_t t)
{
    return r->traffic[l][t].data_bytes + r->traffic[l][t].metadata_bytes;
}

/* ------------------------------------------------------------------ */
/* Hand-computed: 4x4 A and B, 2x2x2 tiles, COO with 8-bit coordinates and
 * values (3 bytes per nonzero, nothing fixed).
 *   A: (0,0) (1,2) (2,1) (3,3)     every A tile (I,K) holds one nonzero
 *   B: (0,1) (2,0) (1,3) (3,2)     every B tile (K,J) holds one nonzero
 *   Z = A B: (0,1) (1,0) (2,3) (3,2); Z(0,0) and Z(1,1) hold two each,
 *   one from K=0 and one from K=1; Z(0,1) and Z(1,0) stay empty (their
 *   tile pairs are effectual but no coordinates meet).
 * All 8 tile iterations are effectual. Compulsory: 12 + 12 + 12 = 36. */
static const uint32_t hand_a[4][2] = { { 0, 0 }, { 1, 2 }, { 2, 1 }, { 3, 3 } };
static const uint32_t hand_b[4][2] = { { 0, 1 }, { 2, 0 }, { 1, 3 }, { 3, 2 } };

static tessel_result hand_run(const char *order)
{
    tessel_tensor *a = matrix(4, 4, hand_a, 4), *b = matrix(4, 4, hand_b, 4);
    tessel_spec s;
    spec_spmspm(&s, order, 2, 2, 2, 0 /* coo */);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_result r = run(&s, &d);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    ck_assert_uint_eq(r.compulsory_bytes, 36);
    ck_assert_uint_eq(r.macs, 4);
    ck_assert_uint_eq(r.output_nnz, 4);
    ck_assert_uint_eq(r.effectual_tiles[1], 8);
    return r;
}

/* ------------------------------------------------------------------ */
/* `timing: pipeline`'s per-step network count under a dense network: the
 * stationary rows packed into folds of at most the compute's lanes, as
 * STONNE's SIGMA controller packs them (docs/models/timing.md, "Per step").
 * A is 7x8 with row counts 3 3 2 4 1 0 7 (COO, one byte a value), B 8x2
 * full; LLB tiles i:2, k whole, j:1, order IJK; DRAM's network delivers 2
 * values a cycle; 5 lanes.
 *   packed: {3} {3+2} {4+1+0} {7: 5, then 2 + the partial sum = 3}
 *           ceil(3/2) + ceil(5/2) + ceil(5/2) + ceil(5/2) + ceil(3/2) = 2+3+3+3+2 = 13
 *   fixed tiles (the sum over A's 4 fills, rows {0,1} {2,3} {4,5} {6}):
 *           ceil(6/2) + ceil(6/2) + ceil(1/2) + ceil(7/2) = 3+3+1+4 = 11
 * B's tiles (j:1) are not whole along j: they keep the sum over their fills,
 * 4 A tiles x 2 columns x ceil(8/2). */
START_TEST(network_folds_packed)
{
    static const unsigned counts[7] = { 3, 3, 2, 4, 1, 0, 7 };
    uint32_t ae[20][2], be[16][2];
    size_t na = 0;
    for (uint32_t r = 0; r < 7; r++)
        for (uint32_t k = 0; k < counts[r]; k++) {
            ae[na][0] = r;
            ae[na++][1] = k;
        }
    for (uint32_t k = 0; k < 8; k++)
        for (uint32_t j = 0; j < 2; j++) {
            be[2 * k + j][0] = k;
            be[2 * k + j][1] = j;
        }
    ck_assert_uint_eq(na, 20);
    tessel_tensor *a = matrix(7, 8, (const uint32_t (*)[2])ae, na);
    tessel_tensor *b = matrix(8, 2, (const uint32_t (*)[2])be, 16);
    tessel_spec s;
    spec_spmspm(&s, "IJK", 2, 0, 1, 0 /* coo */);
    s.compute.pes = 5;
    s.level[0].network_width = 2;
    s.level[0].network_dense = 1;
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_result r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].fills, 4);
    ck_assert_uint_eq(r.traffic[1][A].fill_network_cycles, 13);
    ck_assert_uint_eq(r.traffic[1][B].fill_network_cycles, 4 * 2 * 4);
    /* more lanes: {3+3+2} {4+1+0} {7} = 4 + 3 + 4 */
    s.compute.pes = 8;
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].fill_network_cycles, 11);
    s.compute.pes = 9;
    s.compute.macs_per_pe = 2; /* 18 lanes: {3+3+2+4+1+0} {7} = 7 + 4 */
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].fill_network_cycles, 11);
    s.compute.pes = 10; /* 20 lanes: one fold of 20 values */
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].fill_network_cycles, 10);
    /* effectual delivery: the sum over A's fixed tiles */
    s.level[0].network_dense = 0;
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].fill_network_cycles, 11);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* IJK (inner product): A(I,K) and B(K,J) change on every iteration:
 * 8 fills each (24 bytes). Z(I,J) stays for its two K steps: 4 write-backs
 * (2+0+0+2 nonzeros = 12 bytes), no read-backs. DRAM: 60 bytes. */
START_TEST(hand_inner_product)
{
    tessel_result r = hand_run("IJK");
    ck_assert_uint_eq(r.traffic[1][A].fills, 8);
    ck_assert_uint_eq(r.traffic[1][B].fills, 8);
    ck_assert_uint_eq(bytes(&r, 1, A), 24);
    ck_assert_uint_eq(r.traffic[1][Z].writebacks, 4);
    ck_assert_uint_eq(r.traffic[1][Z].updates, 0);
    ck_assert_uint_eq(bytes(&r, 1, Z), 12);
    ck_assert_uint_eq(r.dram_bytes, 60);
    ck_assert_uint_eq(r.traffic[0][A].reads, 8);
    ck_assert_uint_eq(bytes(&r, 0, A), 24);
}
END_TEST

/* KIJ (outer product): A(I,K) stays across J: 4 fills (12 bytes); B(K,J)
 * changes every iteration: 8 fills. Z changes every iteration: 8
 * write-backs; after K=0 the counts are 1,0,0,1 (6 bytes), after K=1
 * 2,0,0,2 (12 bytes): 18 bytes; the K=1 sweep reads each tile back with
 * its K=0 count: 4 updates, 6 bytes. DRAM: 12 + 24 + 24 = 60. */
START_TEST(hand_outer_product)
{
    tessel_result r = hand_run("KIJ");
    ck_assert_uint_eq(r.traffic[1][A].fills, 4);
    ck_assert_uint_eq(r.traffic[1][B].fills, 8);
    ck_assert_uint_eq(r.traffic[1][Z].writebacks, 8);
    ck_assert_uint_eq(r.traffic[1][Z].out_data + r.traffic[1][Z].out_metadata, 18);
    ck_assert_uint_eq(r.traffic[1][Z].updates, 4);
    ck_assert_uint_eq(r.traffic[1][Z].in_data + r.traffic[1][Z].in_metadata, 6);
    ck_assert_uint_eq(r.dram_bytes, 60);
}
END_TEST

/* IKJ (Gustavson): A(I,K) stays across J: 4 fills; B: 8 fills. Z
 * alternates Z(I,0), Z(I,1) within each K: 8 write-backs with counts
 * 1,0,2,0 | 0,1,0,2 (18 bytes) and 4 read-backs with counts 1,0 | 0,1
 * (6 bytes). DRAM: 60. */
START_TEST(hand_gustavson)
{
    tessel_result r = hand_run("IKJ");
    ck_assert_uint_eq(r.traffic[1][A].fills, 4);
    ck_assert_uint_eq(r.traffic[1][B].fills, 8);
    ck_assert_uint_eq(r.traffic[1][Z].writebacks, 8);
    ck_assert_uint_eq(r.traffic[1][Z].out_data + r.traffic[1][Z].out_metadata, 18);
    ck_assert_uint_eq(r.traffic[1][Z].updates, 4);
    ck_assert_uint_eq(r.traffic[1][Z].in_data + r.traffic[1][Z].in_metadata, 6);
    ck_assert_uint_eq(r.dram_bytes, 60);
    /* dense loop nest: A changes 2*2 times, B 2*2*2, Z read back 8-4 times */
    ck_assert_uint_eq(r.traffic[1][A].algorithmic, 4);
    ck_assert_uint_eq(r.traffic[1][B].algorithmic, 8);
    ck_assert_uint_eq(r.traffic[1][Z].algorithmic, 4);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Brute force: the dense tile loop nest, element-level partial products
 * in a dense boolean matrix, docs/semantics.md rules 1-3 applied literally. */

typedef struct brute {
    uint64_t fills[3], updates, writebacks, bytes[3];
} brute;

static uint64_t coo_bytes(uint64_t n, uint64_t rows)
{
    (void)rows;
    return 3 * n;
}

/* [CP, CP] with 8-bit values, coordinates and offsets: rows r: r coordinates
 * and r + 1 child offsets; n coordinates; n values. */
static uint64_t cpcp_bytes(uint64_t n, uint64_t rows)
{
    return 2 * rows + 1 + 2 * n;
}

static uint64_t (*brute_bytes)(uint64_t n, uint64_t rows) = coo_bytes;

static uint64_t rows_of(const tessel_tensor *m, uint64_t r0, uint64_t r1, uint64_t c0, uint64_t c1)
{
    uint64_t rows = 0;
    for (uint64_t r = r0; r < r1 && r < m->dims[0]; r++) {
        int any = 0;
        for (uint64_t p = m->ptr[r]; p < m->ptr[r + 1]; p++)
            any |= m->idx[1][p] >= c0 && m->idx[1][p] < c1;
        rows += (uint64_t)any;
    }
    return rows;
}

static uint64_t count_tile(const tessel_tensor *m, uint64_t r0, uint64_t r1, uint64_t c0,
                           uint64_t c1)
{
    uint64_t n = 0;
    for (uint64_t r = r0; r < r1 && r < m->dims[0]; r++)
        for (uint64_t p = m->ptr[r]; p < m->ptr[r + 1]; p++)
            n += m->idx[1][p] >= c0 && m->idx[1][p] < c1;
    return n;
}

/* Bytes of output tile `key` as the partial products stand now. */
static uint64_t z_tile_bytes(const unsigned char *z, uint64_t key, uint64_t ntj, uint64_t ti,
                             uint64_t tj, uint64_t n_i, uint64_t n_j, uint64_t *cnt, uint64_t *rows)
{
    uint64_t rI = key / ntj, rJ = key % ntj;
    *cnt = *rows = 0;
    for (uint64_t i = rI * ti; i < rI * ti + ti && i < n_i; i++) {
        uint64_t in_row = 0;
        for (uint64_t j = rJ * tj; j < rJ * tj + tj && j < n_j; j++)
            in_row += z[i * n_j + j];
        *cnt += in_row;
        *rows += in_row != 0;
    }
    return brute_bytes(*cnt, *rows);
}

static brute brute_force(const tessel_tensor *a, const tessel_tensor *b, const char *order,
                         uint64_t ti, uint64_t tk, uint64_t tj)
{
    brute out;
    memset(&out, 0, sizeof(out));
    uint64_t n_i = a->dims[0], n_k = a->dims[1], n_j = b->dims[1];
    uint64_t nt[3] = { (n_i + ti - 1) / ti, (n_j + tj - 1) / tj, (n_k + tk - 1) / tk };
    unsigned char *z = calloc(n_i * n_j, 1);
    uint64_t ntz = nt[0] * nt[1];
    uint64_t *written = calloc(ntz, sizeof(uint64_t)); /* 1 + count at last write-back */
    uint64_t res_a = UINT64_MAX, res_b = UINT64_MAX, res_z = UINT64_MAX;
    unsigned pos[3];
    for (unsigned p = 0; p < 3; p++)
        pos[p] = order[p] == 'I' ? 0 : order[p] == 'J' ? 1 : 2;
    uint64_t it[3];
    for (it[0] = 0; it[0] < nt[pos[0]]; it[0]++)
        for (it[1] = 0; it[1] < nt[pos[1]]; it[1]++)
            for (it[2] = 0; it[2] < nt[pos[2]]; it[2]++) {
                uint64_t c[3];
                for (unsigned p = 0; p < 3; p++)
                    c[pos[p]] = it[p];
                uint64_t I = c[0], J = c[1], K = c[2];
                uint64_t na = count_tile(a, I * ti, I * ti + ti, K * tk, K * tk + tk);
                uint64_t nb = count_tile(b, K * tk, K * tk + tk, J * tj, J * tj + tj);
                if (!na || !nb)
                    continue;
                uint64_t ka = I * nt[2] + K, kb = K * nt[1] + J, kz = I * nt[1] + J;
                if (ka != res_a) {
                    res_a = ka;
                    out.fills[1]++;
                    out.bytes[1] += brute_bytes(na, rows_of(a, I * ti, I * ti + ti, K * tk, K * tk + tk));
                }
                if (kb != res_b) {
                    res_b = kb;
                    out.fills[2]++;
                    out.bytes[2] += brute_bytes(nb, rows_of(b, K * tk, K * tk + tk, J * tj, J * tj + tj));
                }
                if (kz != res_z) {
                    if (res_z != UINT64_MAX) {
                        uint64_t cnt, zr, zb = z_tile_bytes(z, res_z, nt[1], ti, tj, n_i, n_j, &cnt, &zr);
                        out.writebacks++;
                        out.bytes[0] += zb;
                        written[res_z] = zb + 1;
                    }
                    if (written[kz]) {
                        out.updates++;
                        out.bytes[0] += written[kz] - 1;
                    }
                    res_z = kz;
                }
                /* partial products of this tile pair */
                for (uint64_t i = I * ti; i < I * ti + ti && i < n_i; i++)
                    for (uint64_t p = a->ptr[i]; p < a->ptr[i + 1]; p++) {
                        uint64_t k = a->idx[1][p];
                        if (k < K * tk || k >= K * tk + tk)
                            continue;
                        for (uint64_t q = b->ptr[k]; q < b->ptr[k + 1]; q++) {
                            uint64_t j = b->idx[1][q];
                            if (j >= J * tj && j < J * tj + tj)
                                z[i * n_j + j] = 1;
                        }
                    }
            }
    if (res_z != UINT64_MAX) {
        uint64_t cnt, zr;
        out.writebacks++;
        out.bytes[0] += z_tile_bytes(z, res_z, nt[1], ti, tj, n_i, n_j, &cnt, &zr);
    }
    free(z);
    free(written);
    return out;
}

START_TEST(matches_brute_force_every_order)
{
    static const char *orders[6] = { "IJK", "IKJ", "JIK", "JKI", "KIJ", "KJI" };
    static const uint64_t tiles[4][3] = { { 4, 4, 4 }, { 3, 5, 7 }, { 8, 2, 6 }, { 40, 40, 40 } };
    tessel_tensor *a = random_matrix(37, 29, 0.08, 11 + (unsigned)_i);
    tessel_tensor *b = random_matrix(29, 33, 0.1, 101 + (unsigned)_i);
    for (unsigned o = 0; o < 6; o++)
        for (unsigned t = 0; t < 4; t++) {
            tessel_spec s;
            spec_spmspm(&s, orders[o], tiles[t][0], tiles[t][1], tiles[t][2], 0);
            tessel_workload_data d;
            data_of(&d, a, b);
            tessel_result r = run(&s, &d);
            brute bf = brute_force(a, b, orders[o], tiles[t][0], tiles[t][1], tiles[t][2]);
            ck_assert_msg(r.traffic[1][A].fills == bf.fills[1] && bytes(&r, 1, A) == bf.bytes[1],
                          "A %s tile %u: %llu fills vs %llu", orders[o], t,
                          (unsigned long long)r.traffic[1][A].fills,
                          (unsigned long long)bf.fills[1]);
            ck_assert_uint_eq(r.traffic[1][B].fills, bf.fills[2]);
            ck_assert_uint_eq(bytes(&r, 1, B), bf.bytes[2]);
            ck_assert_msg(r.traffic[1][Z].writebacks == bf.writebacks &&
                              r.traffic[1][Z].updates == bf.updates &&
                              bytes(&r, 1, Z) == bf.bytes[0],
                          "Z %s tile %u: wb %llu/%llu upd %llu/%llu bytes %llu/%llu", orders[o],
                          t, (unsigned long long)r.traffic[1][Z].writebacks,
                          (unsigned long long)bf.writebacks,
                          (unsigned long long)r.traffic[1][Z].updates,
                          (unsigned long long)bf.updates, (unsigned long long)bytes(&r, 1, Z),
                          (unsigned long long)bf.bytes[0]);
            ck_assert_uint_ge(r.dram_bytes, r.compulsory_bytes);
            if (t == 3) /* one tile covers everything: exactly compulsory */
                ck_assert_uint_eq(r.dram_bytes, r.compulsory_bytes);
        }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Z^T = B^T A^T: swapping the operands (transposed) and the roles of I and
 * J in the loop order mirrors every count. Square tiles, COO. */

/* Per-rank formats: [CP, CP] for every tensor needs each tile's non-empty
 * row count (and, for Z, the partial one at every write-back). */
START_TEST(rank_formats_match_brute_force)
{
    static const char *orders[3] = { "IJK", "IKJ", "KIJ" };
    tessel_tensor *a = random_matrix(37, 29, 0.08, 41), *b = random_matrix(29, 33, 0.1, 42);
    brute_bytes = cpcp_bytes;
    for (unsigned o = 0; o < 3; o++) {
        tessel_spec s;
        spec_spmspm(&s, orders[o], 4, 5, 6, 0);
        s.level[1].format = TESSEL_SPEC_FORMAT_RANKS;
        s.level[1].nranks = 2;
        s.level[1].ranks[0] = s.level[1].ranks[1] = 1; /* CP */
        tessel_workload_data d;
        data_of(&d, a, b);
        tessel_result r = run(&s, &d);
        brute bf = brute_force(a, b, orders[o], 4, 5, 6);
        ck_assert_uint_eq(bytes(&r, 1, A), bf.bytes[1]);
        ck_assert_uint_eq(bytes(&r, 1, B), bf.bytes[2]);
        ck_assert_msg(bytes(&r, 1, Z) == bf.bytes[0], "%s: Z %llu vs %llu", orders[o],
                      (unsigned long long)bytes(&r, 1, Z), (unsigned long long)bf.bytes[0]);
        /* a rank list that does not match the tensor's modes is refused */
        s.level[1].nranks = 3;
        tessel_result bad;
        tessel_diag diag;
        ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &bad, &diag), TESSEL_EINVAL);
        ck_assert_ptr_nonnull(strstr(diag.message, "ranks"));
    }
    brute_bytes = coo_bytes;
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

START_TEST(transposed_swap_mirrors)
{
    tessel_tensor *a = random_matrix(31, 23, 0.1, 5), *b = random_matrix(23, 41, 0.1, 6);
    tessel_tensor *at = NULL, *bt = NULL;
    tessel_spec s;
    spec_spmspm(&s, "IKJ", 5, 5, 5, 0);
    /* transpose through the public clone + builder: rebuild by hand */
    uint64_t dims_a[2] = { a->dims[1], a->dims[0] }, dims_b[2] = { b->dims[1], b->dims[0] };
    tessel_coo_builder *ba = NULL, *bb = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(2, dims_a, 0, NULL, &ba, NULL), 0);
    ck_assert_int_eq(tessel_coo_builder_create(2, dims_b, 0, NULL, &bb, NULL), 0);
    for (uint32_t r = 0; r < a->dims[0]; r++)
        for (uint64_t p = a->ptr[r]; p < a->ptr[r + 1]; p++) {
            uint32_t c[2] = { a->idx[1][p], r };
            ck_assert_int_eq(tessel_coo_builder_add(ba, c, 1.0), 0);
        }
    for (uint32_t r = 0; r < b->dims[0]; r++)
        for (uint64_t p = b->ptr[r]; p < b->ptr[r + 1]; p++) {
            uint32_t c[2] = { b->idx[1][p], r };
            ck_assert_int_eq(tessel_coo_builder_add(bb, c, 1.0), 0);
        }
    ck_assert_int_eq(tessel_coo_builder_finish(ba, 0, &at, NULL), 0);
    ck_assert_int_eq(tessel_coo_builder_finish(bb, 0, &bt, NULL), 0);
    tessel_coo_builder_free(&ba);
    tessel_coo_builder_free(&bb);
    tessel_workload_data d1, d2;
    data_of(&d1, a, b);
    data_of(&d2, bt, at);
    tessel_result r1 = run(&s, &d1);
    spec_spmspm(&s, "JKI", 5, 5, 5, 0);
    tessel_result r2 = run(&s, &d2);
    ck_assert_uint_eq(r1.traffic[1][A].fills, r2.traffic[1][B].fills);
    ck_assert_uint_eq(r1.traffic[1][B].fills, r2.traffic[1][A].fills);
    ck_assert_uint_eq(bytes(&r1, 1, A), bytes(&r2, 1, B));
    ck_assert_uint_eq(r1.traffic[1][Z].writebacks, r2.traffic[1][Z].writebacks);
    ck_assert_uint_eq(r1.traffic[1][Z].updates, r2.traffic[1][Z].updates);
    ck_assert_uint_eq(bytes(&r1, 1, Z), bytes(&r2, 1, Z));
    ck_assert_uint_eq(r1.dram_bytes, r2.dram_bytes);
    ck_assert_uint_eq(r1.macs, r2.macs);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    tessel_tensor_free(&at);
    tessel_tensor_free(&bt);
}
END_TEST

/* Two on-chip levels: the inner boundary walks the inner tiles inside each
 * outer tile; with inner tiles equal to the outer ones it sees exactly the
 * outer boundary's fills. */
START_TEST(nested_levels)
{
    tessel_tensor *a = random_matrix(40, 40, 0.1, 9), *b = random_matrix(40, 40, 0.1, 10);
    tessel_spec s;
    spec_spmspm(&s, "IKJ", 8, 8, 8, 0);
    s.nlevels = 3;
    s.level[2] = s.level[1];
    snprintf(s.level[2].name, sizeof(s.level[2].name), "PE");
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_result r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[2][A].fills, r.traffic[1][A].fills);
    ck_assert_uint_eq(r.traffic[2][Z].writebacks, r.traffic[1][Z].writebacks);
    ck_assert_uint_eq(r.traffic[1][A].reads, r.traffic[2][A].fills);
    /* finer inner tiles: more, smaller fills, never fewer bytes than
     * the outer level moves */
    s.level[2].tile[0] = s.level[2].tile[1] = s.level[2].tile[2] = 4;
    r = run(&s, &d);
    ck_assert_uint_ge(r.traffic[2][A].fills, r.traffic[1][A].fills);
    ck_assert_uint_ge(bytes(&r, 2, A), bytes(&r, 1, A));
    /* tiles that do not nest are refused */
    s.level[2].tile[0] = 3;
    tessel_result bad;
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &bad, &diag), TESSEL_EINVAL);
    ck_assert_ptr_nonnull(strstr(diag.message, "nest"));
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Without skipping on B, A is filled even where B's tile is empty; with
 * gating those fills are counted as gated and move nothing. */
START_TEST(skipping_and_gating)
{
    static const uint32_t ea[2][2] = { { 0, 0 }, { 0, 2 } };
    static const uint32_t eb[1][2] = { { 0, 0 } };
    tessel_tensor *a = matrix(4, 4, ea, 2), *b = matrix(4, 4, eb, 1);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_spec s;
    spec_spmspm(&s, "IKJ", 2, 2, 2, 0);
    /* default: only A(0,0)xB(0,0) is effectual */
    tessel_result r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].fills, 1);
    ck_assert_uint_eq(r.traffic[1][A].algorithmic, 4);
    ck_assert_uint_eq(r.traffic[1][A].skipped, 3);
    /* A skips on nothing: A(0,0) and A(0,1) are filled (B(1,*) is empty) */
    s.level[1].tensor[1].sparse.skip_on = 0;
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].fills, 2);
    ck_assert_uint_eq(bytes(&r, 1, A), 6);
    /* gating on B instead: the second fill is gated */
    s.level[1].tensor[1].sparse.gate_on = 1u << 2;
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].fills, 1);
    ck_assert_uint_eq(r.traffic[1][A].gated, 1);
    ck_assert_uint_eq(r.traffic[1][A].skipped, 2);
    ck_assert_uint_eq(bytes(&r, 1, A), 3);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Rule 4: a tile larger than its partition streams the excess on every use. */
START_TEST(overbooked_tiles_stream)
{
    tessel_tensor *a = matrix(4, 4, hand_a, 4), *b = matrix(4, 4, hand_b, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_spec s;
    spec_spmspm(&s, "IKJ", 4, 4, 4, 0); /* one tile: A holds 12 bytes */
    s.level[1].capacity = 1000;
    s.level[1].tensor[1].partition_bytes = 10;
    tessel_result r = run(&s, &d);
    ck_assert_uint_eq(r.overflow_tiles, 1);
    ck_assert_uint_eq(bytes(&r, 1, A), 12); /* one use: no re-streaming */
    /* 2x4 tiles along J: A(0,0) is used twice; the second use streams 2 bytes */
    s.level[1].tile[1] = 2;
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][A].bumped_bytes, 2);
    ck_assert_uint_eq(bytes(&r, 1, A), 14);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Rule 4 at an inner level, worked by hand (docs/semantics.md rule 4):
 * the bumped part of an overbooked LLB tile is re-fetched at every read of
 * it by the PE level. hand_a and hand_b (COO, 3 bytes per nonzero: a 1-byte
 * value and two 1-byte coordinates), LLB tiles i:4,k:4,j:4 (one tile per
 * tensor, A: 4 nonzeros, S = 12 bytes, 8 of them metadata), A's LLB
 * partition P = 9 bytes: 3 bytes bumped. PE tiles 2x2x2: every A and B
 * sub-tile holds one nonzero, so all 8 PE iterations are effectual.
 *   PE order IJK: A(I,K) changes at every iteration, so each of A's four
 *   sub-tiles is filled twice (once per J): the PEs read 8 nonzeros from
 *   the LLB tile, R = 8 / 4 = 2 whole reads in its one residency (F = 1
 *   fill, U = 1 use). Bumped traffic (R - F) (S - P) = 3 bytes (metadata
 *   floor(3 * 8 / 12) = 2, data 1): the LLB takes 12 + 3 = 15 bytes of A
 *   from DRAM. The per-use rule charged 12 (one use, nothing again).
 *   PE order IKJ: A(I,K) stays while J runs, each sub-tile filled once,
 *   R = 1: nothing bumped, 12 bytes. */
START_TEST(overbooked_inner_level_per_child_read)
{
    tessel_tensor *a = matrix(4, 4, hand_a, 4), *b = matrix(4, 4, hand_b, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_spec s;
    spec_spmspm(&s, "IJK", 4, 4, 4, 0);
    s.level[1].capacity = 1000;
    s.level[1].tensor[1].partition_bytes = 9;
    s.nlevels = 3;
    s.level[2] = s.level[1];
    snprintf(s.level[2].name, sizeof(s.level[2].name), "PE");
    s.level[2].tensor[1].partition_bytes = 0;
    s.level[2].tile[0] = s.level[2].tile[1] = s.level[2].tile[2] = 2;
    tessel_result r = run(&s, &d);
    const tessel_traffic *t = &r.traffic[1][A];
    ck_assert_uint_eq(r.traffic[2][A].fills, 8);
    ck_assert_uint_eq(t->fills, 1);
    ck_assert_uint_eq(t->bumped_bytes, 3);
    ck_assert_uint_eq(t->overflow_bytes, 3);
    ck_assert_uint_eq(t->in_data, 4 + 1);
    ck_assert_uint_eq(t->in_metadata, 8 + 2);
    ck_assert_uint_eq(bytes(&r, 1, A), 15);
    ck_assert_uint_eq(bytes(&r, 0, A), 15);
    ck_assert_uint_eq(bytes(&r, 2, A), 8 * 3); /* what the PEs read is unchanged */
    s.level[2].order[1] = 2; /* IKJ */
    s.level[2].order[2] = 1;
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[2][A].fills, 4);
    ck_assert_uint_eq(r.traffic[1][A].bumped_bytes, 0);
    ck_assert_uint_eq(bytes(&r, 1, A), 12);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Rule 4 per read of the compute (docs/semantics.md rule 4, "The compute's
 * reads"), worked by hand: M = {(0,0) (0,1) (1,0) (2,3)}, Z = M M, one
 * tile i:4,k:4,j:4, COO with 8-bit values and coordinates: 12 bytes per
 * input (4 data, 8 metadata); A's and B's partitions 8 bytes, 4 bumped.
 * M's non-empty columns are 0, 1, 3 and rows 0, 1, 2; the multiplies
 * sum over k of nnz(column k) nnz(row k) = 2x2 + 1x1 + 0x1 + 1x0 = 5.
 * Reads R of the one tile: A under IJK/JIK 3 (each row per non-empty B
 * column), under JKI/KJI 5/4 (column k per nonzero of B's row k), once
 * under IKJ/KIJ; B mirrored. Bumped (R - 1) x 4 bytes (truncated). */
static const uint32_t hand_m[4][2] = { { 0, 0 }, { 0, 1 }, { 1, 0 }, { 2, 3 } };

START_TEST(overbooked_compute_reads_in_order)
{
    static const struct {
        const char *order;
        uint64_t a, b;
    } want[] = { { "IJK", 8, 8 }, { "JIK", 8, 8 }, { "IKJ", 0, 1 },
                 { "KIJ", 0, 1 }, { "JKI", 1, 0 }, { "KJI", 1, 0 } };
    tessel_tensor *a = matrix(4, 4, hand_m, 4), *b = matrix(4, 4, hand_m, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    for (size_t n = 0; n < sizeof(want) / sizeof(want[0]); n++) {
        tessel_spec s;
        spec_spmspm(&s, want[n].order, 4, 4, 4, 0);
        s.level[1].capacity = 1000;
        s.level[1].tensor[1].partition_bytes = 12; /* fits: nothing bumped */
        s.level[1].tensor[2].partition_bytes = 12;
        tessel_result r = run(&s, &d);
        ck_assert_uint_eq(r.traffic[1][A].bumped_bytes + r.traffic[1][B].bumped_bytes, 0);
        ck_assert_uint_eq(bytes(&r, 1, A), 12);
        s.level[1].tensor[1].partition_bytes = 8;
        s.level[1].tensor[2].partition_bytes = 8;
        r = run(&s, &d);
        ck_assert_msg(r.traffic[1][A].bumped_bytes == want[n].a, "%s: A bumped %llu", want[n].order,
                      (unsigned long long)r.traffic[1][A].bumped_bytes);
        ck_assert_msg(r.traffic[1][B].bumped_bytes == want[n].b, "%s: B bumped %llu", want[n].order,
                      (unsigned long long)r.traffic[1][B].bumped_bytes);
        ck_assert_uint_eq(r.traffic[1][A].fills, 1);
        ck_assert_uint_eq(bytes(&r, 1, A), 12 + want[n].a);
        ck_assert_uint_eq(bytes(&r, 0, B), 12 + want[n].b);
        ck_assert_uint_eq(r.traffic[1][A].overflow_bytes, want[n].a);
        if (want[n].a == 8) { /* 8 x 8 / 12 = 5.3: 5 bytes of metadata */
            ck_assert_uint_eq(r.traffic[1][A].in_data, 4 + 3);
            ck_assert_uint_eq(r.traffic[1][A].in_metadata, 8 + 5);
        }
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* SpMV's compute reads (docs/semantics.md rule 4, "The compute's reads"):
 * y = M x with the hand M above (rows 0, 1 and 2 non-empty) and x = {x0,
 * x1, x3}, one buffer level with one tile of i:4,k:4, so x is filled once
 * and used once. Under IK each non-empty row of M scans x's band: x is
 * read 3 times, (3 - 1) x (S - P) bumped. Under KI x(k) stays while M's
 * column k runs: read once, nothing bumped. M is read once in both. */
START_TEST(spmv_compute_reads)
{
    tessel_tensor *a = matrix(4, 4, hand_m, 4), *x = NULL;
    uint64_t dims[1] = { 4 };
    tessel_coo_builder *bl = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(1, dims, 0, NULL, &bl, NULL), 0);
    static const uint32_t xs[3][1] = { { 0 }, { 1 }, { 3 } };
    for (int n = 0; n < 3; n++)
        ck_assert_int_eq(tessel_coo_builder_add(bl, xs[n], 1.0), 0);
    ck_assert_int_eq(tessel_coo_builder_finish(bl, 0, &x, NULL), 0);
    tessel_coo_builder_free(&bl);
    tessel_workload_data d;
    data_of(&d, a, a);
    d.tensor[2] = x;
    d.extent[1] = 4; /* k */
    static const struct {
        unsigned order[2];
        uint64_t reads; /* of x's tile by the compute */
    } want[] = { { { 0, 1 }, 3 }, { { 1, 0 }, 1 } };
    for (size_t n = 0; n < 2; n++) {
        tessel_spec s;
        spec_spmspm(&s, "IKJ", 4, 4, 4, 0);
        tessel_spec_workload *w = &s.workload;
        w->kind = TESSEL_WORKLOAD_SPMV;
        w->einsum = "y[i] = A[i,k] * x[k]";
        w->nindices = 2;
        strcpy(w->index_name[1], "k");
        w->tensor[0].rank = 1;
        w->tensor[1].index[1] = 1;
        w->tensor[2].rank = 1;
        w->tensor[2].index[0] = 1;
        s.level[1].tile[0] = 4, s.level[1].tile[1] = 4, s.level[1].tile[2] = 0;
        s.level[1].order[0] = want[n].order[0], s.level[1].order[1] = want[n].order[1];
        s.level[1].capacity = 1000;
        tessel_result r = run(&s, &d);
        uint64_t S = bytes(&r, 1, B), P = S - 2;
        ck_assert_uint_eq(r.traffic[1][B].bumped_bytes + r.traffic[1][A].bumped_bytes, 0);
        s.level[1].tensor[1].partition_bytes = 6; /* M: 12 bytes, 6 bumped */
        s.level[1].tensor[2].partition_bytes = P;
        r = run(&s, &d);
        ck_assert_msg(r.traffic[1][B].bumped_bytes == (want[n].reads - 1) * (S - P),
                      "order %u%u: x bumped %llu of %llu bytes", want[n].order[0],
                      want[n].order[1], (unsigned long long)r.traffic[1][B].bumped_bytes,
                      (unsigned long long)S);
        ck_assert_uint_eq(r.traffic[1][A].bumped_bytes, 0);
        ck_assert_uint_eq(bytes(&r, 1, B), S + (want[n].reads - 1) * (S - P));
        tessel_stat_options o;
        tessel_stat_options_init(&o);
        o.output_fraction = 1;
        tessel_result rs;
        tessel_diag diag;
        ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &rs, &diag) == 0, "%s", diag.message);
        ck_assert_uint_eq(rs.traffic[1][B].bumped_bytes, r.traffic[1][B].bumped_bytes);
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&x);
}
END_TEST

/* The compute's re-reads cascade (docs/semantics.md rule 4, "The
 * compute's reads"): the same M, DRAM -> LLB -> PE, one tile i:4,k:4,j:4
 * at both, A's partition 8 of 12 bytes at both, PE order IJK. The PE reads
 * A 3 times (fills it once): (3 - 1) x 4 = 8 bytes bumped at the PE, read
 * again from the LLB tile, a third of whose bytes are bumped: 2 extra
 * reads x 1/3 x 4 nonzeros = 2.67, 2 whole nonzeros, so the LLB tile is
 * read (4 + 2) / 4 = 1.5 times: 0.5 x 4 = 2 bytes from DRAM. Under PE
 * order IKJ nothing is re-read at either level. */
START_TEST(overbooked_compute_reads_cascade)
{
    tessel_tensor *a = matrix(4, 4, hand_m, 4), *b = matrix(4, 4, hand_m, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_spec s;
    spec_spmspm(&s, "IJK", 4, 4, 4, 0);
    s.level[1].capacity = 1000;
    s.level[1].tensor[1].partition_bytes = 8;
    s.nlevels = 3;
    s.level[2] = s.level[1];
    snprintf(s.level[2].name, sizeof(s.level[2].name), "PE");
    tessel_result r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[2][A].bumped_bytes, 8);
    ck_assert_uint_eq(bytes(&r, 2, A), 12 + 8);
    ck_assert_uint_eq(r.traffic[1][A].bumped_bytes, 2);
    ck_assert_uint_eq(bytes(&r, 0, A), 12 + 2);
    s.level[2].order[1] = 2; /* IKJ */
    s.level[2].order[2] = 1;
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[2][A].bumped_bytes, 0);
    ck_assert_uint_eq(r.traffic[1][A].bumped_bytes, 0);
    ck_assert_uint_eq(bytes(&r, 0, A), 12);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Rule 4 for outputs, worked by hand (docs/semantics.md rule 4): the
 * 4x4 example, KIJ (outer product: the whole tile is one live group)
 * with tiles i:4, k:2, j:4: one output tile, two
 * reduction steps, one run. A's tiles (k 0-1, 2-3) hold (0,0) (2,1) and
 * (1,2) (3,3); B's hold (0,1) (1,3) and (2,0) (3,2): 6 bytes each. The
 * compute updates Z one k at a time: after k = 0, 1, 2, 3 it holds 1, 2,
 * 3, 4 nonzeros (3, 6, 9, 12 bytes). With a 4-byte partition every step
 * but the run's last leaves max(0, S - 4) bytes beyond it, spilled and
 * read back by the next step: 0 + 2 + 5 = 7 bytes each way. k = 1 ends
 * the first visit (the per-visit rule's 2 bytes); k = 2 is inside the
 * second. The run's write-back moves the whole tile (12 bytes), larger
 * than the partition: 1 overflowing write-back of 1. Z: 12 + 14 = 26
 * bytes; overflow_bytes 14, bumped_bytes 7 (streamed from DRAM). */
START_TEST(output_tiles_spill)
{
    tessel_tensor *a = matrix(4, 4, hand_a, 4), *b = matrix(4, 4, hand_b, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_spec s;
    spec_spmspm(&s, "KIJ", 4, 2, 4, 0);
    s.level[1].capacity = 1000; /* A and B: 333 bytes each, they fit */
    s.level[1].tensor[0].partition_bytes = 100;
    tessel_result r = run(&s, &d);
    ck_assert_uint_eq(bytes(&r, 1, Z), 12); /* fits: rule 2 alone */
    ck_assert_uint_eq(r.traffic[1][Z].overflow_tiles, 0);
    ck_assert_uint_eq(r.traffic[1][Z].worst_tile_bytes, 12);
    s.level[1].tensor[0].partition_bytes = 4;
    r = run(&s, &d);
    const tessel_traffic *z = &r.traffic[1][Z];
    ck_assert_uint_eq(z->writebacks, 1);
    ck_assert_uint_eq(z->updates, 0);
    ck_assert_uint_eq(z->out_data + z->out_metadata, 12 + 7);
    ck_assert_uint_eq(z->in_data + z->in_metadata, 7);
    ck_assert_uint_eq(bytes(&r, 1, Z), 26);
    ck_assert_uint_eq(z->bumped_bytes, 7);
    ck_assert_uint_eq(z->overflow_bytes, 14);
    ck_assert_uint_eq(z->overflow_tiles, 1);
    ck_assert_uint_eq(z->partition_bytes, 4);
    ck_assert_uint_eq(z->worst_tile_bytes, 12);
    ck_assert_uint_eq(r.dram_bytes, 12 + 12 + 26);
    uint64_t tiles, over;
    tessel_result_overflow(&r, &tiles, &over);
    ck_assert_uint_eq(tiles, 1);
    ck_assert_uint_eq(over, 14);
    /* k whole (i:4,k:4,j:4): one visit, in which the same four steps
     * spill the same 7 bytes (the per-visit rule priced 0 here) */
    spec_zpart(&s, "KIJ", 4, 4, 4, 4);
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][Z].bumped_bytes, 7);
    ck_assert_uint_eq(bytes(&r, 1, Z), 26);
    /* A PE level with k:2 below (KIJ too): the LLB tile's steps are the
     * PEs' reduction tiles, k 0-1 (6 bytes after it) and k 2-3 (12): 2
     * bytes spill at the LLB; the PE tiles (2x2, at most 2 nonzeros) fit
     * 100 */
    s.nlevels = 3;
    s.level[2] = s.level[1];
    snprintf(s.level[2].name, sizeof(s.level[2].name), "PE");
    s.level[2].tensor[0].partition_bytes = 100;
    s.level[2].tile[0] = s.level[2].tile[1] = s.level[2].tile[2] = 2;
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][Z].bumped_bytes, 2);
    ck_assert_uint_eq(r.traffic[1][Z].overflow_bytes, 4);
    ck_assert_uint_eq(r.traffic[2][Z].bumped_bytes, 0);
    /* the PE level in IJK order: the LLB's live groups are the PEs' 2x2
     * output tiles, each 3 bytes after its first step: nothing spills */
    memcpy(s.level[2].order, (unsigned[]){ 0, 1, 2 }, 3 * sizeof(unsigned));
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][Z].bumped_bytes, 0);
    s.nlevels = 2;
    /* IJK (inner product) at the only buffer level: the live groups are
     * elements, each with one product here; with k:2 only the end of
     * visit K=0 spills (6 - 4 = 2 bytes), with k:4 nothing */
    spec_zpart(&s, "IJK", 4, 2, 4, 4);
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][Z].bumped_bytes, 2);
    ck_assert_uint_eq(bytes(&r, 1, Z), 16);
    spec_zpart(&s, "IJK", 4, 4, 4, 4);
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][Z].bumped_bytes, 0);
    ck_assert_uint_eq(bytes(&r, 1, Z), 12);
    /* hand_outer_product (KIJ, 2x2x2 tiles): every visit is its own run,
     * which rule 2 moves whole, so nothing spills; of the 8 write-backs
     * the two of 2 nonzeros (6 bytes) overflow the 4-byte partition */
    spec_zpart(&s, "KIJ", 2, 2, 2, 4);
    r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][Z].overflow_bytes, 0);
    ck_assert_uint_eq(r.traffic[1][Z].writebacks, 8);
    ck_assert_uint_eq(r.traffic[1][Z].overflow_tiles, 2);
    ck_assert_uint_eq(bytes(&r, 1, Z), 18 + 6);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* The order inside a tile (docs/semantics.md rule 4), by hand: A = B =
 * the 2x2 block {(0,0) (0,1) (1,0) (1,1)} of a 4x4 matrix, one tile
 * i:4,k:4,j:4, Z's partition 4 bytes (COO, 3 bytes per nonzero). Every
 * output is the sum of two products (k = 0, 1). KIJ: the whole tile is
 * live, 4 nonzeros (12 bytes) after k = 0: 8 bytes each way. IKJ: one
 * row is live, 2 nonzeros (6 bytes) after its k = 0: 2 per row, 4. IJK:
 * one element is live (3 bytes): nothing spills. */
START_TEST(output_spill_order)
{
    static const uint32_t blk[4][2] = { { 0, 0 }, { 0, 1 }, { 1, 0 }, { 1, 1 } };
    tessel_tensor *a = matrix(4, 4, blk, 4), *b = matrix(4, 4, blk, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    static const char *orders[] = { "KIJ", "IKJ", "IJK", "KJI", "JKI", "JIK" };
    static const uint64_t bumped[] = { 8, 4, 0, 8, 4, 0 };
    for (unsigned q = 0; q < 6; q++) {
        tessel_spec s;
        spec_zpart(&s, orders[q], 4, 4, 4, 4);
        tessel_result r = run(&s, &d);
        const tessel_traffic *z = &r.traffic[1][Z];
        ck_assert_msg(z->bumped_bytes == bumped[q], "%s: %llu", orders[q],
                      (unsigned long long)z->bumped_bytes);
        ck_assert_uint_eq(z->overflow_bytes, 2 * bumped[q]);
        ck_assert_uint_eq(bytes(&r, 1, Z), 12 + 2 * bumped[q]);
        ck_assert_uint_eq(z->overflow_tiles, 1);
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Rule 4 before the estimate (tessel_model_feasibility), by hand on the
 * 4x4 example (COO, 3 bytes per nonzero). One tile i:4,k:4,j:4: A's tile
 * holds 4 nonzeros, 12 bytes, over a 10-byte partition: 1 of 1 tiles
 * overflows, certainly, its worst tile i 0..3 x k 0..3. Z's bound: every
 * row of A meets one nonzero of B (U_i = 1) and every column of B one of
 * A (V_j = 1), so a 4x4 tile holds at most min(4, 4, 16) = 4 nonzeros,
 * 12 bytes, exactly Z's final tile: it fits 12 bytes and "may overflow"
 * 11. Tiles 2x2x2: every A tile holds 3 bytes, all 4 overflow a 2-byte
 * partition; Z's 2x2 tiles are bounded by 2 nonzeros (6 bytes), which is
 * what Z(0,0) holds. */
START_TEST(feasibility_before_estimate)
{
    tessel_tensor *a = matrix(4, 4, hand_a, 4), *b = matrix(4, 4, hand_b, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_spec s;
    spec_spmspm(&s, "IJK", 4, 4, 4, 0);
    s.level[1].capacity = 1000;
    s.level[1].tensor[A].partition_bytes = 10;
    s.level[1].tensor[B].partition_bytes = 100;
    s.level[1].tensor[Z].partition_bytes = 12;
    tessel_feasibility f;
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_feasibility(&s, &d, NULL, &f, &diag), 0);
    ck_assert_uint_eq(f.n, 1);
    ck_assert_int_eq(f.output_unchecked, 0);
    const tessel_overflow_check *c = &f.item[0];
    ck_assert_uint_eq(c->level, 1);
    ck_assert_uint_eq(c->tensor, A);
    ck_assert_int_eq(c->certain, 1);
    ck_assert_uint_eq(c->partition_bytes, 10);
    ck_assert_uint_eq(c->worst_tile_bytes, 12);
    ck_assert_uint_eq(c->overflow_tiles, 1);
    ck_assert_uint_eq(c->tiles, 1);
    ck_assert_uint_eq(c->order, 2);
    ck_assert_int_eq(c->index[0], 0); /* i */
    ck_assert_int_eq(c->index[1], 2); /* k */
    ck_assert_uint_eq(c->first[0], 0);
    ck_assert_uint_eq(c->last[0], 3);
    ck_assert_uint_eq(c->last[1], 3);
    s.level[1].tensor[Z].partition_bytes = 11;
    ck_assert_int_eq(tessel_model_feasibility(&s, &d, NULL, &f, &diag), 0);
    ck_assert_uint_eq(f.n, 2);
    ck_assert_uint_eq(f.item[1].tensor, Z);
    ck_assert_int_eq(f.item[1].certain, 0);
    ck_assert_uint_eq(f.item[1].worst_tile_bytes, 12);
    /* the estimate agrees: Z's one tile holds 12 bytes */
    tessel_result r = run(&s, &d);
    ck_assert_uint_eq(r.traffic[1][Z].worst_tile_bytes, 12);

    spec_spmspm(&s, "IJK", 2, 2, 2, 0);
    s.level[1].capacity = 1000;
    s.level[1].tensor[A].partition_bytes = 2;
    s.level[1].tensor[B].partition_bytes = 3;
    s.level[1].tensor[Z].partition_bytes = 5;
    ck_assert_int_eq(tessel_model_feasibility(&s, &d, NULL, &f, &diag), 0);
    ck_assert_uint_eq(f.n, 2);
    ck_assert_uint_eq(f.item[0].tensor, A);
    ck_assert_uint_eq(f.item[0].overflow_tiles, 4);
    ck_assert_uint_eq(f.item[0].tiles, 4);
    ck_assert_uint_eq(f.item[0].worst_tile_bytes, 3);
    ck_assert_uint_eq(f.item[0].last[0], 1);
    ck_assert_uint_eq(f.item[1].tensor, Z);
    ck_assert_int_eq(f.item[1].certain, 0);
    ck_assert_uint_eq(f.item[1].worst_tile_bytes, 6);
    s.level[1].tensor[Z].partition_bytes = 6; /* the bound fits: nothing on Z */
    ck_assert_int_eq(tessel_model_feasibility(&s, &d, NULL, &f, &diag), 0);
    ck_assert_uint_eq(f.n, 1);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* TTM and MTTKRP against a generic brute force over dense arrays. */

typedef struct dense_case {
    unsigned nidx;
    uint64_t ext[4];
    unsigned ntensors;          /* output + inputs */
    unsigned rank[4];
    unsigned idx[4][3];
    unsigned char *val[4];      /* inputs: dense 0/1, row-major over their indices */
    tessel_tensor *t[4];
} dense_case;

static uint64_t dense_offset(const dense_case *dc, unsigned t, const uint64_t *c)
{
    uint64_t o = 0;
    for (unsigned m = 0; m < dc->rank[t]; m++)
        o = o * dc->ext[dc->idx[t][m]] + c[dc->idx[t][m]];
    return o;
}

static void dense_case_fill(dense_case *dc, const double *density, unsigned seed)
{
    srand(seed);
    for (unsigned t = 1; t < dc->ntensors; t++) {
        uint64_t size = 1, dims[3];
        for (unsigned m = 0; m < dc->rank[t]; m++) {
            dims[m] = dc->ext[dc->idx[t][m]];
            size *= dims[m];
        }
        dc->val[t] = calloc(size, 1);
        tessel_coo_builder *b = NULL;
        ck_assert_int_eq(tessel_coo_builder_create(dc->rank[t], dims, 0, NULL, &b, NULL), 0);
        for (uint64_t o = 0; o < size; o++) {
            if ((double)rand() / RAND_MAX >= density[t])
                continue;
            dc->val[t][o] = 1;
            uint32_t c[3];
            uint64_t r = o;
            for (unsigned m = dc->rank[t]; m-- > 0;) {
                c[m] = (uint32_t)(r % dims[m]);
                r /= dims[m];
            }
            ck_assert_int_eq(tessel_coo_builder_add(b, c, 1.0), 0);
        }
        ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &dc->t[t], NULL), 0);
        tessel_coo_builder_free(&b);
    }
}

static void dense_case_free(dense_case *dc)
{
    for (unsigned t = 1; t < dc->ntensors; t++) {
        free(dc->val[t]);
        tessel_tensor_free(&dc->t[t]);
    }
}

/* Odometer over the element box [lo, hi) of all indices. */
static int box_next(unsigned n, const uint64_t *lo, const uint64_t *hi, uint64_t *c)
{
    for (unsigned x = n; x-- > 0;) {
        if (++c[x] < hi[x])
            return 1;
        c[x] = lo[x];
    }
    return 0;
}

static void tile_box(const dense_case *dc, const uint64_t *tile, const uint64_t *tc, uint64_t *lo,
                     uint64_t *hi)
{
    for (unsigned x = 0; x < dc->nidx; x++) {
        lo[x] = tc[x] * tile[x];
        hi[x] = lo[x] + tile[x] < dc->ext[x] ? lo[x] + tile[x] : dc->ext[x];
    }
}

/* nonzeros of tensor t inside the box */
static uint64_t box_count(const dense_case *dc, unsigned t, const uint64_t *lo, const uint64_t *hi,
                          const unsigned char *zval)
{
    uint64_t n = 0, c[4];
    uint64_t l2[4], h2[4];
    for (unsigned x = 0; x < dc->nidx; x++) {
        int used = 0;
        for (unsigned m = 0; m < dc->rank[t]; m++)
            used |= dc->idx[t][m] == x;
        l2[x] = used ? lo[x] : 0;
        h2[x] = used ? hi[x] : 1;
        c[x] = l2[x];
    }
    do {
        n += t == 0 ? zval[dense_offset(dc, 0, c)] : dc->val[t][dense_offset(dc, t, c)];
    } while (box_next(dc->nidx, l2, h2, c));
    return n;
}

static void brute_generic(const dense_case *dc, const unsigned *order, const uint64_t *tile,
                          uint64_t *fills, uint64_t *ibytes, uint64_t *wb, uint64_t *upd,
                          uint64_t *zbytes)
{
    uint64_t nt[4], zsize = 1;
    for (unsigned x = 0; x < dc->nidx; x++)
        nt[x] = (dc->ext[x] + tile[x] - 1) / tile[x];
    for (unsigned m = 0; m < dc->rank[0]; m++)
        zsize *= dc->ext[dc->idx[0][m]];
    unsigned char *z = calloc(zsize, 1);
    uint64_t *written = calloc(4096, sizeof(uint64_t));
    uint64_t res[4] = { UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX };
    uint64_t it[4] = { 0 }, zero[4] = { 0 }, ntord[4];
    for (unsigned p = 0; p < dc->nidx; p++)
        ntord[p] = nt[order[p]];
    *wb = *upd = *zbytes = 0;
    for (unsigned t = 0; t < 4; t++)
        fills[t] = ibytes[t] = 0;
    do {
        uint64_t tc[4], lo[4], hi[4];
        for (unsigned p = 0; p < dc->nidx; p++)
            tc[order[p]] = it[p];
        tile_box(dc, tile, tc, lo, hi);
        uint64_t cnt[4];
        int eff = 1;
        for (unsigned t = 1; t < dc->ntensors; t++) {
            cnt[t] = box_count(dc, t, lo, hi, NULL);
            eff &= cnt[t] != 0;
        }
        if (!eff)
            continue;
        for (unsigned t = 0; t < dc->ntensors; t++) {
            uint64_t key = 0;
            for (unsigned m = 0; m < dc->rank[t]; m++)
                key = key * nt[dc->idx[t][m]] + tc[dc->idx[t][m]];
            if (key == res[t])
                continue;
            if (t > 0) {
                fills[t]++;
                ibytes[t] += cnt[t] * (dc->rank[t] + 1);
            }
            if (t == 0) {
                /* write back the resident output tile */
                if (res[0] != UINT64_MAX) {
                    uint64_t rc[4] = { 0 }, r = res[0], rlo[4], rhi[4];
                    for (unsigned m = dc->rank[0]; m-- > 0;) {
                        rc[dc->idx[0][m]] = r % nt[dc->idx[0][m]];
                        r /= nt[dc->idx[0][m]];
                    }
                    tile_box(dc, tile, rc, rlo, rhi);
                    uint64_t n = box_count(dc, 0, rlo, rhi, z);
                    (*wb)++;
                    *zbytes += n * (dc->rank[0] + 1);
                    written[res[0]] = n + 1;
                }
                if (written[key]) {
                    (*upd)++;
                    *zbytes += (written[key] - 1) * (dc->rank[0] + 1);
                }
            }
            res[t] = key;
        }
        uint64_t c[4];
        memcpy(c, lo, sizeof(c));
        do {
            int all = 1;
            for (unsigned t = 1; t < dc->ntensors && all; t++)
                all = dc->val[t][dense_offset(dc, t, c)];
            if (all)
                z[dense_offset(dc, 0, c)] = 1;
        } while (box_next(dc->nidx, lo, hi, c));
    } while (box_next(dc->nidx, zero, ntord, it));
    if (res[0] != UINT64_MAX) {
        uint64_t rc[4] = { 0 }, r = res[0], rlo[4], rhi[4];
        for (unsigned m = dc->rank[0]; m-- > 0;) {
            rc[dc->idx[0][m]] = r % nt[dc->idx[0][m]];
            r /= nt[dc->idx[0][m]];
        }
        tile_box(dc, tile, rc, rlo, rhi);
        (*wb)++;
        *zbytes += box_count(dc, 0, rlo, rhi, z) * (dc->rank[0] + 1);
    }
    free(z);
    free(written);
}

static void spec_from_case(tessel_spec *s, const dense_case *dc, tessel_workload_kind kind,
                           const unsigned *order, const uint64_t *tile)
{
    spec_spmspm(s, "IJK", 1, 1, 1, 0);
    tessel_spec_workload *w = &s->workload;
    w->kind = kind;
    w->nindices = dc->nidx;
    static const char *names[4] = { "a", "b", "c", "d" };
    for (unsigned x = 0; x < dc->nidx; x++)
        snprintf(w->index_name[x], sizeof(w->index_name[x]), "%s", names[x]);
    w->ntensors = dc->ntensors;
    uint32_t inputs = 0;
    for (unsigned t = 1; t < dc->ntensors; t++)
        inputs |= 1u << t;
    for (unsigned t = 0; t < dc->ntensors; t++) {
        snprintf(w->tensor[t].name, sizeof(w->tensor[t].name), "T%u", t);
        w->tensor[t].rank = dc->rank[t];
        for (unsigned m = 0; m < dc->rank[t]; m++)
            w->tensor[t].index[m] = dc->idx[t][m];
        for (unsigned l = 0; l < 2; l++)
            s->level[l].tensor[t].sparse.skip_on = inputs & ~(1u << t);
    }
    for (unsigned x = 0; x < dc->nidx; x++) {
        s->level[1].tile[x] = tile[x];
        s->level[1].order[x] = order[x];
    }
}

static void check_generic(dense_case *dc, tessel_workload_kind kind)
{
    static const unsigned orders[5][4] = {
        { 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 1, 3, 0, 2 }, { 2, 0, 3, 1 }, { 0, 3, 1, 2 }
    };
    static const uint64_t tiles[3][4] = { { 2, 3, 2, 3 }, { 3, 2, 4, 1 }, { 64, 64, 64, 64 } };
    tessel_workload_data d;
    memset(&d, 0, sizeof(d));
    d.ntensors = dc->ntensors;
    for (unsigned t = 1; t < dc->ntensors; t++)
        d.tensor[t] = dc->t[t];
    for (unsigned x = 0; x < dc->nidx; x++)
        d.extent[x] = dc->ext[x];
    for (unsigned o = 0; o < 5; o++)
        for (unsigned ti = 0; ti < 3; ti++) {
            tessel_spec s;
            spec_from_case(&s, dc, kind, orders[o], tiles[ti]);
            tessel_result r = run(&s, &d);
            uint64_t fills[4], ib[4], wb, upd, zb, tile[4];
            for (unsigned x = 0; x < 4; x++)
                tile[x] = tiles[ti][x] < dc->ext[x] ? tiles[ti][x] : dc->ext[x];
            brute_generic(dc, orders[o], tile, fills, ib, &wb, &upd, &zb);
            for (unsigned t = 1; t < dc->ntensors; t++) {
                ck_assert_msg(r.traffic[1][t].fills == fills[t],
                              "order %u tiles %u tensor %u: %llu fills vs %llu", o, ti, t,
                              (unsigned long long)r.traffic[1][t].fills,
                              (unsigned long long)fills[t]);
                ck_assert_uint_eq(bytes(&r, 1, t), ib[t]);
            }
            ck_assert_msg(r.traffic[1][0].writebacks == wb && r.traffic[1][0].updates == upd &&
                              bytes(&r, 1, 0) == zb,
                          "order %u tiles %u: wb %llu/%llu upd %llu/%llu bytes %llu/%llu", o, ti,
                          (unsigned long long)r.traffic[1][0].writebacks,
                          (unsigned long long)wb, (unsigned long long)r.traffic[1][0].updates,
                          (unsigned long long)upd, (unsigned long long)bytes(&r, 1, 0),
                          (unsigned long long)zb);
            if (ti == 2)
                ck_assert_uint_eq(r.dram_bytes, r.compulsory_bytes);
            /* per-rank formats (all CP, one rank per mode): invariants. The
             * backing store holds the same format, so that compulsory traffic
             * (rule 3: untiled, in level 0's format) is comparable. */
            tessel_spec sr = s;
            for (unsigned t = 0; t < dc->ntensors; t++)
                for (unsigned l = 0; l < 2; l++) {
                    sr.level[l].tensor[t].format = TESSEL_SPEC_FORMAT_RANKS;
                    sr.level[l].tensor[t].nranks = dc->rank[t];
                    memset(sr.level[l].tensor[t].ranks, 1, dc->rank[t]);
                }
            tessel_result rr = run(&sr, &d);
            ck_assert_uint_ge(rr.dram_bytes, rr.compulsory_bytes);
            ck_assert_uint_eq(rr.traffic[1][0].writebacks, wb);
            if (ti == 2)
                ck_assert_uint_eq(rr.dram_bytes, rr.compulsory_bytes);
            if (getenv("TESSEL_TEST_VERBOSE"))
                printf("kind %d order %u tiles %u: fills %llu %llu wb %llu upd %llu macs %llu\n",
                       (int)kind, o, ti, (unsigned long long)fills[1],
                       (unsigned long long)fills[2], (unsigned long long)wb,
                       (unsigned long long)upd, (unsigned long long)r.macs);
        }
}

/* TTM: Y[a,b,c] = T[a,b,d] * M[d,c] */
START_TEST(ttm_matches_brute_force)
{
    dense_case dc = { .nidx = 4, .ext = { 6, 7, 5, 8 }, .ntensors = 3,
                      .rank = { 3, 3, 2 },
                      .idx = { { 0, 1, 2 }, { 0, 1, 3 }, { 3, 2 } } };
    const double density[3] = { 0, 0.15, 0.4 };
    dense_case_fill(&dc, density, 21 + (unsigned)_i);
    check_generic(&dc, TESSEL_WORKLOAD_TTM);
    dense_case_free(&dc);
}
END_TEST

/* MTTKRP: Y[a,b] = T[a,c,d] * B[c,b] * C[d,b] */
START_TEST(mttkrp_matches_brute_force)
{
    dense_case dc = { .nidx = 4, .ext = { 6, 5, 7, 8 }, .ntensors = 4,
                      .rank = { 2, 3, 2, 2 },
                      .idx = { { 0, 1 }, { 0, 2, 3 }, { 2, 1 }, { 3, 1 } } };
    const double density[4] = { 0, 0.15, 0.5, 0.5 };
    dense_case_fill(&dc, density, 31 + (unsigned)_i);
    check_generic(&dc, TESSEL_WORKLOAD_MTTKRP);
    dense_case_free(&dc);
}
END_TEST

/* TTM and MTTKRP: the compute's re-reads of an overbooked input in the
 * level's order (docs/semantics.md rule 4, "The compute's reads"). */

/* Input t of dc from n coordinate tuples in its mode order. */
static void case_from_list(dense_case *dc, unsigned t, const uint32_t *c, unsigned n)
{
    uint64_t size = 1, dims[3];
    for (unsigned m = 0; m < dc->rank[t]; m++) {
        dims[m] = dc->ext[dc->idx[t][m]];
        size *= dims[m];
    }
    dc->val[t] = calloc(size, 1);
    tessel_coo_builder *b = NULL;
    ck_assert_int_eq(tessel_coo_builder_create(dc->rank[t], dims, 0, NULL, &b, NULL), 0);
    for (unsigned e = 0; e < n; e++) {
        uint64_t o = 0;
        for (unsigned m = 0; m < dc->rank[t]; m++)
            o = o * dims[m] + c[e * dc->rank[t] + m];
        dc->val[t][o] = 1;
        ck_assert_int_eq(tessel_coo_builder_add(b, c + e * dc->rank[t], 1.0), 0);
    }
    ck_assert_int_eq(tessel_coo_builder_finish(b, 0, &dc->t[t], NULL), 0);
    tessel_coo_builder_free(&b);
}

static int case_carries(const dense_case *dc, unsigned t, unsigned x)
{
    for (unsigned m = 0; m < dc->rank[t]; m++)
        if (dc->idx[t][m] == x)
            return 1;
    return 0;
}

/* Whether input o holds a nonzero agreeing with w on the indices in `fix`. */
static int case_meets(const dense_case *dc, unsigned o, const uint64_t *w, unsigned fix)
{
    uint64_t lo[4], hi[4], c[4];
    for (unsigned x = 0; x < dc->nidx; x++) {
        int pin = case_carries(dc, o, x) && (fix >> x & 1u);
        lo[x] = pin ? w[x] : 0;
        hi[x] = pin ? w[x] + 1 : case_carries(dc, o, x) ? dc->ext[x] : 1;
        c[x] = lo[x];
    }
    do {
        if (dc->val[o][dense_offset(dc, o, c)])
            return 1;
    } while (box_next(dc->nidx, lo, hi, c));
    return 0;
}

/* The reads of input t by the rule's definition, one tile per index (so
 * a band or a tile is the whole extent): per nonzero of t, the
 * coordinates of the indices t does not carry that the order puts outside
 * t's innermost own index, for which every other input holds a nonzero
 * agreeing on them and on t's own indices outside that innermost one. */
static uint64_t brute_join_reads(const dense_case *dc, unsigned t, const unsigned *order)
{
    unsigned pos[4] = { 0 }, ps = 0, fix = 0, free_ = 0;
    for (unsigned p = 0; p < dc->nidx; p++)
        pos[order[p]] = p;
    for (unsigned m = 0; m < dc->rank[t]; m++)
        ps = pos[dc->idx[t][m]] > ps ? pos[dc->idx[t][m]] : ps;
    for (unsigned x = 0; x < dc->nidx; x++)
        if (pos[x] < ps) {
            fix |= 1u << x;
            free_ |= case_carries(dc, t, x) ? 0 : 1u << x;
        }
    uint64_t reads = 0, w[4] = { 0 }, lo[4] = { 0 }, hi[4];
    for (unsigned x = 0; x < dc->nidx; x++)
        hi[x] = dc->ext[x];
    do { /* every w: t's nonzero on its indices, z on the free ones */
        int skip = !dc->val[t][dense_offset(dc, t, w)];
        for (unsigned x = 0; x < dc->nidx && !skip; x++)
            skip = !case_carries(dc, t, x) && !(free_ >> x & 1u) && w[x] != 0;
        for (unsigned o = 1; o < dc->ntensors && !skip; o++)
            skip = o != t && !case_meets(dc, o, w, fix);
        reads += !skip;
    } while (box_next(dc->nidx, lo, hi, w));
    return free_ ? reads : 0; /* no free index: once per use */
}

/* Every loop order at one tile per index: each input's bumped bytes are
 * (R - 1)(S - P) with R its reads by the definition over its nonzeros. */
static void check_join(dense_case *dc, tessel_workload_kind kind, unsigned *again)
{
    tessel_workload_data d;
    memset(&d, 0, sizeof(d));
    d.ntensors = dc->ntensors;
    for (unsigned t = 1; t < dc->ntensors; t++)
        d.tensor[t] = dc->t[t];
    for (unsigned x = 0; x < dc->nidx; x++)
        d.extent[x] = dc->ext[x];
    unsigned order[4] = { 0, 1, 2, 3 };
    const uint64_t tile[4] = { 64, 64, 64, 64 };
    for (unsigned n = 0; n < 24; n++) {
        unsigned rest[4] = { 0, 1, 2, 3 }, k = n;
        for (unsigned p = 0; p < 4; p++) { /* permutation n, outermost first */
            unsigned q = k % (4 - p);
            k /= 4 - p;
            order[p] = rest[q];
            for (unsigned m = q; m + 1 < 4 - p; m++)
                rest[m] = rest[m + 1];
        }
        tessel_spec s;
        spec_from_case(&s, dc, kind, order, tile);
        s.level[1].capacity = 100000;
        tessel_result r = run(&s, &d);
        uint64_t S[4], P[4];
        for (unsigned t = 1; t < dc->ntensors; t++) {
            S[t] = bytes(&r, 1, t);
            P[t] = S[t] > 8 ? S[t] - 8 : S[t] / 2;
            s.level[1].tensor[t].partition_bytes = P[t];
        }
        r = run(&s, &d);
        for (unsigned t = 1; t < dc->ntensors; t++) {
            double R = (double)brute_join_reads(dc, t, order) / (double)dc->t[t]->nnz;
            uint64_t want = R > 1 ? (uint64_t)((R - 1) * (double)(S[t] - P[t])) : 0;
            *again += R > 1;
            ck_assert_msg(r.traffic[1][t].bumped_bytes == want,
                          "order %u%u%u%u input %u: bumped %llu, want %llu (R %.3f)", order[0],
                          order[1], order[2], order[3], t,
                          (unsigned long long)r.traffic[1][t].bumped_bytes,
                          (unsigned long long)want, R);
            ck_assert_uint_eq(bytes(&r, 1, t), S[t] + want);
        }
    }
}

/* TTM Y[a,b,c] = T[a,b,d] M[d,c] (a = i, b = x, c = r, d = k), the hand
 * case of docs/semantics.md: T = {(0,0,0) (0,1,0) (1,0,1) (1,1,3)},
 * M = {(0,0) (0,1) (1,0) (2,3)}. */
START_TEST(ttm_compute_reads)
{
    dense_case dc = { .nidx = 4, .ext = { 2, 2, 4, 4 }, .ntensors = 3, .rank = { 3, 3, 2 },
                      .idx = { { 0, 1, 2 }, { 0, 1, 3 }, { 3, 2 } } };
    static const uint32_t t[] = { 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 3 };
    static const uint32_t m[] = { 0, 0, 0, 1, 1, 0, 2, 3 };
    case_from_list(&dc, 1, t, 4);
    case_from_list(&dc, 2, m, 4);
    /* by hand (the table in docs/semantics.md): reads of T and of M */
    static const struct {
        unsigned order[4];
        uint64_t t, m;
    } hand[] = {
        { { 0, 1, 3, 2 }, 0, 5 },   /* IXKR: T once; M(k,r) per (i,x) on k: 2+2+1+0 */
        { { 2, 0, 1, 3 }, 12, 16 }, /* RIXK: T per non-empty column of M (3), M per
                                       non-empty fibre T(i,x,:) (4) */
        { { 2, 3, 0, 1 }, 5, 0 },   /* RKIX: T(i,x,k) per nonzero of M's row k */
        { { 0, 1, 2, 3 }, 12, 16 }, /* IXRK: both scan along k: M per non-empty fibre (4) */
        { { 0, 3, 2, 1 }, 5, 3 },   /* IKRX: T per nonzero of M's row k; M per i with
                                       T(i,:,k), x inside: 1+1+1+0 */
    };
    for (size_t n = 0; n < sizeof(hand) / sizeof(hand[0]); n++) {
        ck_assert_uint_eq(brute_join_reads(&dc, 1, hand[n].order), hand[n].t);
        ck_assert_uint_eq(brute_join_reads(&dc, 2, hand[n].order), hand[n].m);
    }
    unsigned again = 0;
    check_join(&dc, TESSEL_WORKLOAD_TTM, &again);
    ck_assert_uint_gt(again, 0);
    dense_case_free(&dc);
}
END_TEST

/* MTTKRP Y[a,b] = T[a,c,d] B[c,b] C[d,b] (a = i, b = r, c = j, d = k):
 * random cases, every order, against the definition. */
START_TEST(mttkrp_compute_reads)
{
    dense_case dc = { .nidx = 4, .ext = { 3, 4, 3, 4 }, .ntensors = 4,
                      .rank = { 2, 3, 2, 2 },
                      .idx = { { 0, 1 }, { 0, 2, 3 }, { 2, 1 }, { 3, 1 } } };
    const double density[4] = { 0, 0.3, 0.5, 0.5 };
    dense_case_fill(&dc, density, 41 + (unsigned)_i);
    unsigned again = 0;
    check_join(&dc, TESSEL_WORKLOAD_MTTKRP, &again);
    ck_assert_uint_gt(again, 0);
    dense_case_free(&dc);
}
END_TEST

/* Empty rows and columns add no effectual iterations: a small matrix
 * embedded in a huge empty one moves exactly the same tiles. With tile
 * edge 1 the big output grid has 9M tiles, which takes the hashed
 * (not direct-indexed) output state. */
START_TEST(padding_changes_nothing)
{
    tessel_tensor *a = random_matrix(20, 20, 0.2, 77), *b = random_matrix(20, 20, 0.2, 78);
    uint64_t dims[2] = { 3000, 3000 };
    tessel_tensor *big[2] = { NULL, NULL };
    const tessel_tensor *small[2] = { a, b };
    for (unsigned m = 0; m < 2; m++) {
        tessel_coo_builder *bl = NULL;
        ck_assert_int_eq(tessel_coo_builder_create(2, dims, 0, NULL, &bl, NULL), 0);
        for (uint32_t r = 0; r < 20; r++)
            for (uint64_t p = small[m]->ptr[r]; p < small[m]->ptr[r + 1]; p++) {
                uint32_t c[2] = { r, small[m]->idx[1][p] };
                ck_assert_int_eq(tessel_coo_builder_add(bl, c, 1.0), 0);
            }
        ck_assert_int_eq(tessel_coo_builder_finish(bl, 0, &big[m], NULL), 0);
        tessel_coo_builder_free(&bl);
    }
    static const char *orders[3] = { "IJK", "IKJ", "KIJ" };
    for (unsigned o = 0; o < 3; o++) {
        tessel_spec s;
        spec_spmspm(&s, orders[o], 1, 1, 1, 0);
        tessel_workload_data d1, d2;
        data_of(&d1, a, b);
        data_of(&d2, big[0], big[1]);
        tessel_result r1 = run(&s, &d1), r2 = run(&s, &d2);
        for (unsigned t = 0; t < 3; t++) {
            ck_assert_uint_eq(r1.traffic[1][t].fills, r2.traffic[1][t].fills);
            ck_assert_uint_eq(r1.traffic[1][t].updates, r2.traffic[1][t].updates);
            ck_assert_uint_eq(r1.traffic[1][t].writebacks, r2.traffic[1][t].writebacks);
            ck_assert_uint_eq(bytes(&r1, 1, t), bytes(&r2, 1, t));
        }
        ck_assert_uint_eq(r1.macs, r2.macs);
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
    tessel_tensor_free(&big[0]);
    tessel_tensor_free(&big[1]);
}
END_TEST

START_TEST(out_of_memory_every_allocation)
{
    tessel_tensor *a = random_matrix(30, 30, 0.1, 3), *b = random_matrix(30, 30, 0.1, 4);
    tessel_workload_data d;
    data_of(&d, a, b);
    tessel_spec s;
    spec_spmspm(&s, "KIJ", 4, 4, 4, 1);
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        tessel_result r;
        tessel_diag diag;
        int rc = tessel_model_exact(&s, &d, &ta.allocator, &r, &diag);
        ck_assert_int_eq(ta.live, 0);
        if (rc == 0)
            break;
        ck_assert_int_eq(rc, TESSEL_ENOMEM);
        ck_assert_int_lt(n, 10000);
    }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, hand_inner_product);
    tcase_add_test(tc, hand_outer_product);
    tcase_add_test(tc, hand_gustavson);
    tcase_add_loop_test(tc, matches_brute_force_every_order, 0, 3);
    tcase_add_test(tc, rank_formats_match_brute_force);
    tcase_add_test(tc, transposed_swap_mirrors);
    tcase_add_test(tc, nested_levels);
    tcase_add_test(tc, skipping_and_gating);
    tcase_add_test(tc, overbooked_tiles_stream);
    tcase_add_test(tc, output_tiles_spill);
    tcase_add_test(tc, output_spill_order);
    tcase_add_test(tc, overbooked_inner_level_per_child_read);
    tcase_add_test(tc, overbooked_compute_reads_in_order);
    tcase_add_test(tc, overbooked_compute_reads_cascade);
    tcase_add_test(tc, spmv_compute_reads);
    tcase_add_test(tc, feasibility_before_estimate);
    tcase_add_loop_test(tc, ttm_matches_brute_force, 0, 3);
    tcase_add_loop_test(tc, mttkrp_matches_brute_force, 0, 3);
    tcase_add_test(tc, ttm_compute_reads);
    tcase_add_loop_test(tc, mttkrp_compute_reads, 0, 3);
    tcase_add_test(tc, padding_changes_nothing);
    tcase_add_test(tc, network_folds_packed);
    tcase_add_test(tc, out_of_memory_every_allocation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

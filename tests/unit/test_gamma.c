/* The Gamma template (src/template/gamma.c): the FiberCache's LRU on
 * hand-made traces worked out by hand, the merger's spills (partial
 * fibers to memory, or through the FiberCache and evicted or not), the
 * statistical (Che) path against the exact one on real matrices, bad
 * options, and every allocation failing in turn.
 *
 * TESSEL_GAMMA_TABLE=1 in the environment prints, for the shared matrices
 * (../shared/data/mtx), exact DRAM / compulsory with and without affinity
 * reordering, the stat error and the times, at several cache sizes. */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/template.h"
#include "test_alloc.h"
#include "test_specs.h"
#include "test_data.h"

static tessel_tensor *matrix(uint64_t rows, uint64_t cols, const uint32_t (*rc)[2], size_t n)
{
    return test_coo_matrix(rows, cols, 1, rc, n);
}

static uint64_t bytes_of(const tessel_traffic *t)
{
    return t->data_bytes + t->metadata_bytes;
}

typedef struct hand {
    tessel_spec spec;
    tessel_workload_data data;
    tessel_yaml_doc *doc;
} hand;

/* 8-byte values, 4-byte coordinates and offsets: a fiber of one nonzero is
 * 8 + 4 + 4 = 16 bytes. options: YAML flow mapping or NULL. */
static void hand_init(hand *h, uint64_t rows_a, uint64_t k, uint64_t cols_b,
                      const uint32_t (*a)[2], size_t na, const uint32_t (*b)[2], size_t nb,
                      uint64_t capacity, const char *options)
{
    test_spec_spmspm(&h->spec, "IKJ", 1, 1, 0, 1, 64, 32);
    snprintf(h->spec.template_.name, sizeof(h->spec.template_.name), "gamma");
    h->spec.level[1].capacity = capacity;
    h->doc = NULL;
    if (options) {
        ck_assert_int_eq(tessel_yaml_parse("opts", options, strlen(options), NULL, &h->doc, NULL),
                         0);
        h->spec.template_.options = tessel_yaml_root(h->doc);
    }
    memset(&h->data, 0, sizeof(h->data));
    h->data.ntensors = 3;
    h->data.tensor[1] = matrix(rows_a, k, a, na);
    h->data.tensor[2] = matrix(k, cols_b, b, nb);
    h->data.extent[0] = rows_a, h->data.extent[1] = cols_b, h->data.extent[2] = k;
}

static void hand_free(hand *h)
{
    tessel_tensor_free(&h->data.tensor[1]);
    tessel_tensor_free(&h->data.tensor[2]);
    tessel_yaml_free(&h->doc);
}

/* B: 4 rows of one nonzero each (row k in column k % 3), 16 bytes a fiber.
 * A: row 0 {k0, k1}, row 1 {k0, k2}, row 2 {k0, k1}: the trace
 * 0 1 0 2 0 1. With room for exactly 2 fibers (32 bytes), LRU:
 *   0 miss [0]; 1 miss [1 0]; 0 hit [0 1]; 2 miss, evicts 1 [2 0];
 *   0 hit [0 2]; 1 miss, evicts 2 [1 0]  -> 4 misses, 2 hits.
 * With room for 1 fiber: all 6 miss; with 3: the 3 compulsory. */
static const uint32_t LA[6][2] = { { 0, 0 }, { 0, 1 }, { 1, 0 }, { 1, 2 }, { 2, 0 }, { 2, 1 } };
static const uint32_t LB[4][2] = { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 0 } };

static void lru_case(uint64_t capacity, const char *options, uint64_t misses)
{
    hand h;
    hand_init(&h, 3, 4, 3, LA, 6, LB, 4, capacity, options);
    tessel_result r;
    tessel_diag d;
    int rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_str_eq(r.estimator, "exact");
    const tessel_traffic *b = &r.traffic[0][2], *b1 = &r.traffic[1][2];
    ck_assert_uint_eq(b1->fills, misses);
    ck_assert_uint_eq(bytes_of(b), misses * 16);
    ck_assert_uint_eq(b->data_bytes, misses * 8);
    /* A: 6 x 12 + 3 x 4 = 84; Z (csr): rows {j0,j1}, {j0,j2}, {j0,j1}: 6 x 12 + 3 x 4 */
    ck_assert_uint_eq(bytes_of(&r.traffic[0][1]), 84);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][0]), 84);
    ck_assert_uint_eq(r.dram_bytes, 84 + 84 + misses * 16);
    /* compulsory (rule 3: untiled csr, rows + 1 offsets): A 6 x 12 + 4 x 4 = 88,
     * B 4 x 12 + 5 x 4 = 68, Z 6 x 12 + 4 x 4 = 88 */
    ck_assert_uint_eq(r.compulsory_bytes, 88 + 68 + 88);
    ck_assert_uint_eq(r.macs, 6);
    ck_assert_uint_eq(r.output_nnz, 6);
    hand_free(&h);
}

START_TEST(test_lru_hand)
{
    lru_case(32, NULL, 4);
    lru_case(16, NULL, 6);
    lru_case(48, NULL, 3);
    lru_case(0, NULL, 3);  /* unbounded */
    lru_case(31, NULL, 6); /* one byte short of two fibers */
    /* cache_bytes overrides the level's capacity */
    lru_case(1 << 20, "{cache_bytes: 32}", 4);
    lru_case(32, "{cache_bytes: 1MiB, policy: lru}", 3);
    /* fibers larger than the cache are fetched every time, never kept */
    lru_case(15, NULL, 6);
}
END_TEST

/* The merger's spills with radix 2. A row 0 = {k0 .. k4}; B rows k0 {j0},
 * k1 {j1}, k2 {j0}, k3 {j2}, k4 {j2}. n = 5 > 2: groups of 2 {k0,k1} ->
 * {j0,j1} 2, {k2,k3} -> {j0,j2} 2, {k4} -> 1; n > 4: groups of 4
 * {k0..k3} -> 3, {k4} -> 1: 5 intermediate fibers of 9 nonzeros,
 * 9 x 12 + 5 x 4 = 128 bytes, all written and read back under `partials:
 * memory`. Z row 0 = {j0,j1,j2}: 3 x 12 + 1 x 4 = 40. */
static const uint32_t SA_[5][2] = { { 0, 0 }, { 0, 1 }, { 0, 2 }, { 0, 3 }, { 0, 4 } };
static const uint32_t SB_[5][2] = { { 0, 0 }, { 1, 1 }, { 2, 0 }, { 3, 2 }, { 4, 2 } };

START_TEST(test_spills)
{
    const uint32_t(*a)[2] = SA_, (*b)[2] = SB_;
    hand h;
    hand_init(&h, 1, 5, 3, a, 5, b, 5, 0, "{radix: 2, partials: memory}");
    tessel_result r;
    tessel_diag d;
    int rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    const tessel_traffic *z = &r.traffic[1][0];
    ck_assert_uint_eq(z->updates, 5);
    ck_assert_uint_eq(z->writebacks, 1 + 5);
    ck_assert_uint_eq(z->in_data + z->in_metadata, 128);
    ck_assert_uint_eq(z->out_data + z->out_metadata, 128 + 40);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][0]), 256 + 40);
    hand_free(&h);
    /* radix 64 (default): no spill */
    hand_init(&h, 1, 5, 3, a, 5, b, 5, 0, NULL);
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d), 0);
    ck_assert_uint_eq(r.traffic[1][0].updates, 0);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][0]), 40);
    hand_free(&h);
    /* radix 5: n = 5 is not more than the radix */
    hand_init(&h, 1, 5, 3, a, 5, b, 5, 0, "{radix: 5}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d), 0);
    ck_assert_uint_eq(r.traffic[1][0].updates, 0);
    hand_free(&h);
}
END_TEST

/* `partials: cache` (the default) on test_spills' row. The walk (higher
 * levels first): k0 k1 -> P1 {j0,j1} (28 bytes); k2 k3 -> P2 {j0,j2} (28);
 * P1 P2 -> P3 {j0,j1,j2} (40); k4 -> P4 {j2} (16); P4 -> P5 {j2} (16);
 * P3 P5 -> Z's row. An unbounded cache keeps every partial fiber: no
 * spill. At 64 bytes (LRU, B fibers 16 bytes):
 *   k0 [k0] 16; k1 [k1 k0] 32; P1 [P1 k1 k0] 60; k2 evicts k0 [k2 P1 k1];
 *   k3 evicts k1 [k3 k2 P1] 60; P2 evicts P1 (dirty: 28 bytes written)
 *   [P2 k3 k2]; P1 consumed: read back; P2 hit [k3 k2] 32; P3 evicts k2
 *   [P3 k3] 56; k4 evicts k3 [k4 P3]; P4 evicts P3 (dirty: 40 written)
 *   [P4 k4]; P4 hit; P5 [P5 k4]; P3 read back; P5 hit.
 * -> 2 fibers of 5 nonzeros spilled (68 bytes written and read back), and
 * B still 5 compulsory misses. */
START_TEST(test_partials_cache)
{
    hand h;
    tessel_result r, rm;
    tessel_diag d;
    hand_init(&h, 1, 5, 3, SA_, 5, SB_, 5, 0, "{radix: 2}");
    int rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    hand_free(&h);
    ck_assert_uint_eq(r.traffic[1][0].updates, 0);
    ck_assert_uint_eq(r.traffic[1][0].writebacks, 1);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][0]), 40);
    /* the same, the partials in cache said explicitly */
    hand_init(&h, 1, 5, 3, SA_, 5, SB_, 5, 0, "{radix: 2, partials: cache}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &rm, &d), 0);
    hand_free(&h);
    ck_assert_uint_eq(rm.dram_bytes, r.dram_bytes);
    /* 64 bytes: P1 and P3 evicted dirty, read back */
    hand_init(&h, 1, 5, 3, SA_, 5, SB_, 5, 64, "{radix: 2}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d), 0);
    hand_free(&h);
    const tessel_traffic *z = &r.traffic[1][0];
    ck_assert_uint_eq(z->updates, 2);
    ck_assert_uint_eq(z->writebacks, 1 + 2);
    ck_assert_uint_eq(z->in_data + z->in_metadata, 68);
    ck_assert_uint_eq(z->in_data, 5 * 8);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][0]), 2 * 68 + 40);
    ck_assert_uint_eq(r.traffic[1][2].fills, 5);
    /* partials: memory at 64 bytes: all 5 (128 bytes), B unchanged */
    hand_init(&h, 1, 5, 3, SA_, 5, SB_, 5, 64, "{radix: 2, partials: memory}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &rm, &d), 0);
    hand_free(&h);
    ck_assert_uint_eq(rm.traffic[1][0].updates, 5);
    ck_assert_uint_eq(rm.dram_bytes, r.dram_bytes + 2 * (128 - 68));
    /* a partial fiber larger than the cache goes straight to memory: at
     * 27 bytes P1 (28) and P2 (28) and P3 (40) never fit; P4 and P5 (16)
     * do (B's fibers, clean, make way): 3 fibers of 7 nonzeros, 96 bytes */
    hand_init(&h, 1, 5, 3, SA_, 5, SB_, 5, 27, "{radix: 2}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d), 0);
    hand_free(&h);
    ck_assert_uint_eq(r.traffic[1][0].updates, 3);
    ck_assert_uint_eq(r.traffic[1][0].in_data + r.traffic[1][0].in_metadata, 96);
    /* set-associative, one set of four 16-byte lines (64 bytes), B's
     * entries 12 bytes from address 0 (k0 line 0, k1 lines 0-1, k2 lines
     * 1-2, k3 line 2, k4 line 3), partial fibers from line 4 on: P1 (24 B)
     * lines 4-5, P2 6-7, P3 (36 B) 8-10, P4 11, P5 12. LRU over lines:
     *   k0: 0; k1: 0 1; P1: 4 5 -> [5 4 1 0]; k2: 1 hit, 2 evicts 0 ->
     *   [2 1 5 4]; k3: 2 hit; P2: 6 7 evict 4 5 (P1's, dirty); P1 read
     *   back (2 lines); P2 taken -> [2 1]; P3: 8 9 10 evict 1 ->
     *   [10 9 8 2]; k4: 3 evicts 2; P4: 11 evicts 8; P4 taken; P5: 12 in
     *   the free way; P5 taken; P3: 9 10 there, 8 read back.
     * -> P1 (2 lines: its 2 nonzeros) and P3 (1 line of 16 bytes: 1 whole
     * entry of its 3): 2 fibers, 3 nonzeros: 3 x 12 + 2 x 4 = 44. */
    hand_init(&h, 1, 5, 3, SA_, 5, SB_, 5, 64,
              "{radix: 2, policy: set-associative, ways: 4, banks: 1, line_bytes: 16}");
    rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    hand_free(&h);
    ck_assert_uint_eq(r.traffic[1][0].updates, 2);
    ck_assert_uint_eq(r.traffic[1][0].in_data + r.traffic[1][0].in_metadata, 44);
}
END_TEST

/* Affinity reordering on a trace where it pays: rows alternate between
 * two disjoint column sets {k0,k1} and {k2,k3}; with room for 2 fibers
 * the original order misses every reference (8 rows x 2 = 16), grouping
 * the rows of each set leaves 4 compulsory misses. */
START_TEST(test_reorder)
{
    uint32_t a[16][2];
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t base = (i % 2) * 2;
        a[2 * i][0] = i, a[2 * i][1] = base;
        a[2 * i + 1][0] = i, a[2 * i + 1][1] = base + 1;
    }
    hand h;
    tessel_result r0, r1;
    tessel_diag d;
    hand_init(&h, 8, 4, 3, (const uint32_t(*)[2])a, 16, LB, 4, 32, NULL);
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r0, &d), 0);
    hand_free(&h);
    hand_init(&h, 8, 4, 3, (const uint32_t(*)[2])a, 16, LB, 4, 32, "{reorder: affinity}");
    int rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r1, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_uint_eq(r0.traffic[1][2].fills, 16);
    ck_assert_uint_eq(r1.traffic[1][2].fills, 4);
    ck_assert_uint_eq(r1.output_nnz, r0.output_nnz);
    hand_free(&h);
    /* reorder: none is the default */
    hand_init(&h, 8, 4, 3, (const uint32_t(*)[2])a, 16, LB, 4, 32, "{reorder: none}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r1, &d), 0);
    ck_assert_uint_eq(r1.traffic[1][2].fills, 16);
    hand_free(&h);
}
END_TEST

/* The set-associative FiberCache by hand. B's entries are 12 bytes (8 + 4),
 * laid out in one array from address 0: with 24-byte lines, fibers k0 and
 * k1 share line 0, k2 and k3 line 1. One set of one way (24 bytes), the
 * trace 0 1 0 2 0 1:
 *   k0 line 0 miss; k1 line 0 hit, first reference (its offset is read);
 *   k0 hit; k2 line 1 miss, evicts line 0; k0 line 0 miss, evicts line 1;
 *   k1 hit  -> 3 lines (72 bytes: 48 of values, 24 of coordinates) and 4
 *   offsets (16 bytes) = 88 bytes of B; 3 fills. */
static void sa_case(uint64_t capacity, const char *options, uint64_t fills, uint64_t b_bytes,
                    uint64_t b_data)
{
    hand h;
    hand_init(&h, 3, 4, 3, LA, 6, LB, 4, capacity, options);
    tessel_result r;
    tessel_diag d;
    int rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d);
    ck_assert_msg(rc == 0, "%s: %s", options, d.message);
    ck_assert_uint_eq(r.traffic[1][2].fills, fills);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][2]), b_bytes);
    ck_assert_uint_eq(r.traffic[0][2].data_bytes, b_data);
    ck_assert_uint_eq(r.dram_bytes, 84 + 84 + b_bytes); /* A and Z as in lru_case */
    hand_free(&h);
}

START_TEST(test_set_associative_hand)
{
    sa_case(24, "{policy: set-associative, ways: 1, banks: 1, line_bytes: 24}", 3, 88, 48);
    /* two sets (line l in set l mod 2): lines 0 and 1 both stay, 2 fills;
     * offsets: k0 miss, k1 first, k2 miss = 3 -> 48 + 12 */
    sa_case(48, "{policy: set-associative, ways: 1, banks: 1, line_bytes: 24}", 2, 60, 32);
    /* the same two sets as two banks of one set: the same traffic */
    sa_case(48, "{policy: set-associative, ways: 1, banks: 2, line_bytes: 24}", 2, 60, 32);
    /* one set of two ways: LRU within the set keeps both lines */
    sa_case(48, "{policy: set-associative, ways: 2, banks: 1, line_bytes: 24}", 2, 60, 32);
    /* 12-byte lines, one fiber a line, one set of 2 ways: the fiber LRU of
     * lru_case at 32 bytes (4 misses), 4 x 12 + 4 x 4 */
    sa_case(24, "{policy: set-associative, ways: 2, banks: 1, line_bytes: 12}", 4, 64, 32);
    /* direct-mapped, 2 sets: lines 0 2 collide in set 0: 0 m, 1 m, 0 h,
     * 2 m (evicts 0), 0 m (evicts 2), 1 h: 4 misses again */
    sa_case(24, "{policy: set-associative, ways: 1, banks: 1, line_bytes: 12}", 4, 64, 32);
    /* 3 sets: no conflict, the 3 compulsory lines */
    sa_case(36, "{policy: set-associative, ways: 1, banks: 1, line_bytes: 12}", 3, 48, 24);
}
END_TEST

/* No fetch without a multiply (issue 20), the smallest case: A 3 x 3 with
 * a_01 and a_20, Z = A * A (B = A: rows 0 {b_01}, 1 {}, 2 {b_20}). a_01
 * selects row 1 of B (empty), a_20 row 0: one multiply, Z = {z_21}. No
 * nonzero of A selects row 2 of B: the FiberCache never asks for it.
 *   A  streamed whole: 2 x 12 + 3 x 4 = 36 (a_01 included: the scheduler
 *      fetches A's row fibers before it looks their B rows up, gamma §3)
 *   B  lru: row 1 misses at its offset alone (4), row 0 misses 8 + 4 + 4:
 *      20 bytes, data 8, 2 fills
 *      set-associative, one 24-byte line: row 0 sits in line 0 with row 2's
 *      entry, and the line comes whole (gamma §3.2's lines): 24 + row 0's
 *      offset 4 = 28, data 16 (8 of them row 2's); row 1, empty, needs no
 *      line (its offset says so)
 *   Z  csr 1 x 12 + 3 x 4 = 24;  DRAM 36 + 20 + 24 = 80 (lru).
 * The stat path (Che, every fiber fits) gives the same. */
static const uint32_t TINY[2][2] = { { 0, 1 }, { 2, 0 } };

START_TEST(test_unused_hand)
{
    hand h;
    hand_init(&h, 3, 3, 3, TINY, 2, TINY, 2, 0, NULL);
    tessel_result r, sr;
    tessel_diag d;
    int rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][1]), 36);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][2]), 20);
    ck_assert_uint_eq(r.traffic[0][2].data_bytes, 8);
    ck_assert_uint_eq(r.traffic[1][2].fills, 2);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][0]), 24);
    ck_assert_uint_eq(r.dram_bytes, 80);
    ck_assert_uint_eq(r.macs, 1);
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    tessel_stat_data *st = NULL;
    rc = tessel_stat_data_create(&h.spec, &h.data, &opt, NULL, &st, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    rc = tessel_template_run(&h.spec, NULL, st, NULL, &sr, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_str_eq(sr.estimator, "stat");
    ck_assert_uint_eq(bytes_of(&sr.traffic[0][1]), 36);
    ck_assert_uint_eq(bytes_of(&sr.traffic[0][2]), 20);
    ck_assert_uint_eq(sr.dram_bytes, 80);
    tessel_stat_data_free(&st);
    hand_free(&h);
    hand_init(&h, 3, 3, 3, TINY, 2, TINY, 2, 24,
              "{policy: set-associative, ways: 1, banks: 1, line_bytes: 24}");
    rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_uint_eq(r.traffic[1][2].fills, 1);
    ck_assert_uint_eq(bytes_of(&r.traffic[0][2]), 28);
    ck_assert_uint_eq(r.traffic[0][2].data_bytes, 16);
    hand_free(&h);
}
END_TEST

/* Selective tiling by hand: A row 0 = {k0 .. k3}, B fibers of one entry
 * (16 bytes with the offset). cache 64 bytes, tile_fraction 0.5: rows of
 * more than 0.5 x 64 / 16 = 2 entries are split, radix 4 gives 4 parts
 * {k0} {k1} {k2} {k3}: 4 subrows whose partial fibers (1 column each) are
 * spilled: 4 x 12 + 4 x 4 = 64 bytes written and read back. Untiled, 4
 * fibers are not more than the radix: no spill. */
START_TEST(test_tiling_hand)
{
    static const uint32_t a[4][2] = { { 0, 0 }, { 0, 1 }, { 0, 2 }, { 0, 3 } };
    static const uint32_t b[4][2] = { { 0, 0 }, { 1, 1 }, { 2, 0 }, { 3, 2 } };
    hand h;
    tessel_result r0, r1;
    tessel_diag d;
    hand_init(&h, 1, 4, 3, a, 4, b, 4, 64, "{radix: 4, tile_fraction: 0.5}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r0, &d), 0);
    hand_free(&h);
    ck_assert_uint_eq(r0.traffic[1][0].updates, 0);
    hand_init(&h, 1, 4, 3, a, 4, b, 4, 64,
              "{radix: 4, tile_fraction: 0.5, tiling: selective, partials: memory}");
    int rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r1, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    hand_free(&h);
    const tessel_traffic *z = &r1.traffic[1][0];
    ck_assert_uint_eq(z->updates, 4);
    ck_assert_uint_eq(z->in_data + z->in_metadata, 64);
    /* Z row 0 = {j0, j1, j2}: 3 x 12 + 4 */
    ck_assert_uint_eq(bytes_of(&r1.traffic[0][0]), 2 * 64 + 40);
    /* the subrows are consecutive slices of the row: B's trace is unchanged */
    ck_assert_uint_eq(bytes_of(&r1.traffic[0][2]), bytes_of(&r0.traffic[0][2]));
    ck_assert_uint_eq(r1.output_nnz, r0.output_nnz);
    /* radix 2: parts [k0,k2) and [k2,k4), 2 entries each, not over the
     * limit: 2 subrows of unions {j0,j1}, {j0,j2}: 4 x 12 + 2 x 4 = 56 */
    hand_init(&h, 1, 4, 3, a, 4, b, 4, 64,
              "{radix: 2, tile_fraction: 0.5, tiling: selective, partials: memory}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r1, &d), 0);
    hand_free(&h);
    ck_assert_uint_eq(r1.traffic[1][0].updates, 2);
    ck_assert_uint_eq(r1.traffic[1][0].in_data + r1.traffic[1][0].in_metadata, 56);
    /* narrowing: row {k0, k1} of K = 8, radix 2, limit 1 entry: [0,8) and
     * [0,4) hold it whole (narrowed, no subrow), [0,2) splits into {k0}
     * {k1}: 2 subrows of one column, 2 x 12 + 2 x 4 = 32 */
    static const uint32_t a2[2][2] = { { 0, 0 }, { 0, 1 } };
    static const uint32_t b2[8][2] = { { 0, 0 }, { 1, 1 }, { 2, 0 }, { 3, 2 },
                                       { 4, 0 }, { 5, 1 }, { 6, 0 }, { 7, 2 } };
    hand_init(&h, 1, 8, 3, a2, 2, b2, 8, 64,
              "{radix: 2, tile_fraction: 0.25, tiling: selective, partials: memory}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r1, &d), 0);
    hand_free(&h);
    ck_assert_uint_eq(r1.traffic[1][0].updates, 2);
    ck_assert_uint_eq(r1.traffic[1][0].in_data + r1.traffic[1][0].in_metadata, 32);
    /* partials: cache, the 4 subrows of radix 4 at 64 bytes (16-byte
     * fibers, subrow partials of one column 16 bytes): k0 [k0]; S0 [S0 k0];
     * k1 [k1 S0 k0]; S1 [S1 k1 S0 k0] 64; k2 evicts k0; S2 evicts S0
     * (dirty); k3 evicts k1; S3 evicts S1 (dirty); the row's merge reads
     * S0 and S1 back, S2 and S3 hit: 2 x 12 + 2 x 4 = 32 */
    hand_init(&h, 1, 4, 3, a, 4, b, 4, 64, "{radix: 4, tile_fraction: 0.5, tiling: selective}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r1, &d), 0);
    hand_free(&h);
    ck_assert_uint_eq(r1.traffic[1][0].updates, 2);
    ck_assert_uint_eq(r1.traffic[1][0].in_data + r1.traffic[1][0].in_metadata, 32);
    ck_assert_uint_eq(bytes_of(&r1.traffic[0][2]), bytes_of(&r0.traffic[0][2]));
    /* ... and with room for them all (128 bytes): none reaches DRAM */
    hand_init(&h, 1, 4, 3, a, 4, b, 4, 128, "{radix: 4, tile_fraction: 0.25, tiling: selective}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r1, &d), 0);
    hand_free(&h);
    ck_assert_uint_eq(r1.traffic[1][0].updates, 0);
    ck_assert_uint_eq(bytes_of(&r1.traffic[0][0]), 40);
}
END_TEST

/* `subrows: together` by hand (partials: cache). A rows 0 and 1 = {k0, k2};
 * B k0 {j0}, k2 {j1} (k1, k3 unused): 16-byte fibers and one-column partials.
 * cache 48 bytes (3 fibers), tile_fraction 0.25: limit 0.75 entries, so both
 * rows split, radix 2 over K = 4 into {k0} {k2}: tasks T0 = (0, k0),
 * T1 = (0, k2), T2 = (1, k0), T3 = (1, k2). The affinity window is 3 tasks;
 * its order: T0; T2 (shares k0); nothing shares k0 now, so the next unvisited
 * T1; T3 (shares k2). Scattered (that order), LRU first at the right:
 *   T0 k0 miss [k0]; S00 [S00 k0]; T2 k0 hit [k0 S00]; S10 [S10 k0 S00];
 *   T1 k2 miss, evicts S00 (written back) [k2 S10 k0]; S01 evicts k0
 *   [S01 k2 S10]; row 0's merge reads S00 back, S01 hits; T3 k2 hit; S11;
 *   row 1's merge hits both -> B 2 misses, 1 partial spilled (12 + 4 bytes).
 * Together (T0 T1 T2 T3): T0 k0 miss, S00; T1 k2 miss [k2 S00 k0], S01
 * evicts k0; row 0 merges from the cache [k2]; T2 k0 miss [k0 k2], S10
 * [S10 k0 k2]; T3 k2 hit, S11 evicts k0; row 1 merges from the cache ->
 * B 3 misses, no spill. Without reordering the tasks are already in row
 * order, so `together` changes nothing. */
START_TEST(test_subrows_together)
{
    static const uint32_t a[4][2] = { { 0, 0 }, { 0, 2 }, { 1, 0 }, { 1, 2 } };
    static const uint32_t b[4][2] = { { 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 2 } };
    static const struct {
        const char *opts;
        uint64_t misses, spills;
    } cases[] = {
        { "{radix: 2, tile_fraction: 0.25, tiling: selective, reorder: affinity}", 2, 1 },
        { "{radix: 2, tile_fraction: 0.25, tiling: selective, reorder: affinity, "
          "subrows: scattered}", 2, 1 },
        { "{radix: 2, tile_fraction: 0.25, tiling: selective, reorder: affinity, "
          "subrows: together}", 3, 0 },
        { "{radix: 2, tile_fraction: 0.25, tiling: selective, subrows: together}", 3, 0 },
        { "{radix: 2, tile_fraction: 0.25, tiling: selective}", 3, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hand h;
        tessel_result r;
        tessel_diag d;
        hand_init(&h, 2, 4, 3, a, 4, b, 4, 48, cases[i].opts);
        int rc = tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d);
        ck_assert_msg(rc == 0, "%s", d.message);
        hand_free(&h);
        ck_assert_msg(r.traffic[1][2].fills == cases[i].misses, "%s: %llu misses", cases[i].opts,
                      (unsigned long long)r.traffic[1][2].fills);
        ck_assert_msg(r.traffic[1][0].updates == cases[i].spills, "%s: %llu spills",
                      cases[i].opts, (unsigned long long)r.traffic[1][0].updates);
        ck_assert_uint_eq(r.traffic[1][0].in_data + r.traffic[1][0].in_metadata,
                          cases[i].spills * 16);
        ck_assert_uint_eq(bytes_of(&r.traffic[0][2]), cases[i].misses * 16);
        ck_assert_uint_eq(r.output_nnz, 4);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* Real matrices. */

typedef struct loaded {
    tessel_spec *spec;
    tessel_workload_data *data;
} loaded;

static int load3(loaded *l, const char *matrix, const char *extra, const char *extra2,
                 const char *extra3)
{
    memset(l, 0, sizeof(*l));
    char real[PATH_MAX];
    if (access(matrix, R_OK) != 0 || !realpath(matrix, real))
        return 0;
    char bind[PATH_MAX + 32];
    snprintf(bind, sizeof(bind), "workload.data.A='%s'", real);
    const char *sets[5] = { bind, "template=gamma", extra, extra2, extra3 };
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    int rc = tessel_spec_load("specs/gamma.yaml", sets,
                              extra ? (extra2 ? (extra3 ? 5 : 4) : 3) : 2, NULL, &l->spec,
                              &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_load_options opt;
    tessel_load_options_init(&opt);
    rc = tessel_workload_load(l->spec, &opt, NULL, &l->data, &errors);
    ck_assert_msg(rc == 0, "%s", errors.count ? errors.items[0].message : "?");
    tessel_diag_list_free(&errors);
    return 1;
}

static int load2(loaded *l, const char *matrix, const char *extra, const char *extra2)
{
    return load3(l, matrix, extra, extra2, NULL);
}

static int load(loaded *l, const char *matrix, const char *extra)
{
    return load2(l, matrix, extra, NULL);
}

static void unload(loaded *l)
{
    tessel_workload_free(&l->data);
    tessel_spec_free(&l->spec);
}

/* exact and stat on one matrix; relative error of stat's B misses bytes,
 * or -1 when the matrix is missing */
static double stat_error3(const char *matrix, const char *extra, const char *extra2,
                          const char *extra3, tessel_result *ex, tessel_result *st)
{
    loaded l;
    if (!load3(&l, matrix, extra, extra2, extra3))
        return -1;
    tessel_diag d;
    int rc = tessel_template_run(l.spec, l.data, NULL, NULL, ex, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    tessel_stat_data *s = NULL;
    rc = tessel_stat_data_create(l.spec, l.data, &opt, NULL, &s, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    rc = tessel_template_run(l.spec, NULL, s, NULL, st, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_str_eq(st->estimator, "stat");
    ck_assert_uint_eq(st->macs, ex->macs);
    ck_assert_uint_eq(bytes_of(&st->traffic[0][1]), bytes_of(&ex->traffic[0][1]));
    tessel_stat_data_free(&s);
    unload(&l);
    double e = (double)bytes_of(&ex->traffic[0][2]);
    return fabs((double)bytes_of(&st->traffic[0][2]) - e) / e;
}

static double stat_error2(const char *matrix, const char *extra, const char *extra2,
                          tessel_result *ex, tessel_result *st)
{
    return stat_error3(matrix, extra, extra2, NULL, ex, st);
}

static double stat_error(const char *matrix, const char *extra, tessel_result *ex,
                         tessel_result *st)
{
    return stat_error2(matrix, extra, NULL, ex, st);
}

START_TEST(test_stat_vs_exact)
{
    tessel_result ex, st;
    /* everything fits (3 MiB): compulsory misses only, exact on both paths */
    double e = stat_error("examples/data/G51.mtx.gz", NULL, &ex, &st);
    if (e < 0)
        return;
    ck_assert_msg(e == 0, "G51 3MiB: %.4f", e);
    ck_assert_uint_eq(ex.traffic[1][2].fills, st.traffic[1][2].fills);
    /* a small FiberCache: Che's approximation ignores the row order.
     * G51 (1000 rows, 11818 references) at 16 KiB: 10780 misses exact,
     * stat measured +4.6 % on B's bytes (with the partial fibers'
     * occupancy in T; +5.3 % without); 10 % bounds it with room */
    e = stat_error("examples/data/G51.mtx.gz", "template_options.cache_bytes=16KiB", &ex, &st);
    printf("gamma stat vs exact, G51 16KiB: |B bytes error| %.4f (fills %llu exact)\n", e,
           (unsigned long long)ex.traffic[1][2].fills);
    ck_assert_msg(e <= 0.10, "G51 16KiB: %.4f", e);
    ck_assert_uint_gt(ex.traffic[1][2].fills, 1000);  /* more than compulsory */
    ck_assert_uint_lt(ex.traffic[1][2].fills, 11818); /* fewer than no reuse */
    /* a banded matrix: its row order has locality the independent
     * reference model does not see, so stat overestimates (jagmesh7 at
     * 32 KiB measured +341 % on B's bytes, +79 % on DRAM): stat is an
     * upper side here, and stays within 5x */
    e = stat_error("examples/data/jagmesh7.mtx.gz", "template_options.cache_bytes=32KiB", &ex,
                   &st);
    ck_assert_uint_ge(bytes_of(&st.traffic[0][2]), bytes_of(&ex.traffic[0][2]));
    ck_assert_msg(e <= 4.0, "jagmesh7 32KiB: %.4f", e);
    /* stat_model: banded (the row bands of A's base grid) sees that
     * locality: measured +1.4 % on jagmesh7 and -1.8 % .. -4.9 % on the
     * bcspwr and nnc1374 matrices at 32 KiB */
    e = stat_error2("examples/data/jagmesh7.mtx.gz", "template_options.cache_bytes=32KiB",
                    "template_options.stat_model=banded", &ex, &st);
    printf("gamma stat (banded) vs exact, jagmesh7 32KiB: |B bytes error| %.4f\n", e);
    ck_assert_msg(e <= 0.10, "jagmesh7 32KiB banded: %.4f", e);
    /* spills on both paths (radix 4: G51 rows reach 156 nonzeros), all to
     * memory */
    e = stat_error2("examples/data/G51.mtx.gz", "template_options.radix=4",
                    "template_options.partials=memory", &ex, &st);
    ck_assert_uint_gt(ex.traffic[1][0].updates, 0);
    double se = fabs((double)bytes_of(&st.traffic[0][0]) - (double)bytes_of(&ex.traffic[0][0])) /
                (double)bytes_of(&ex.traffic[0][0]);
    /* measured 2.7 % (the output estimate is exact on G51: the spill
     * occupancy estimate is the error) */
    printf("gamma stat vs exact, G51 radix 4: |Z bytes error| %.4f\n", se);
    ck_assert_msg(se <= 0.10, "G51 radix 4: Z bytes %.4f", se);
    /* partials: cache: at 3 MiB they all stay on chip on both paths */
    e = stat_error("examples/data/G51.mtx.gz", "template_options.radix=4", &ex, &st);
    ck_assert_uint_eq(ex.traffic[1][0].updates, 0);
    ck_assert_uint_eq(st.traffic[1][0].updates, 0);
    /* at 16 KiB some reach DRAM: the stat path's DRAM share of the
     * partial fibers (reuse distance against Che's characteristic time)
     * against the exact trace, as a share of the DRAM traffic */
    e = stat_error2("examples/data/G51.mtx.gz", "template_options.radix=4",
                    "template_options.cache_bytes=16KiB", &ex, &st);
    double sx = (double)(ex.traffic[1][0].in_data + ex.traffic[1][0].in_metadata),
           ss = (double)(st.traffic[1][0].in_data + st.traffic[1][0].in_metadata);
    printf("gamma partials in cache, G51 radix 4 16KiB: spilled bytes exact %.0f stat %.0f "
           "(%.4f of DRAM)\n",
           sx, ss, fabs(ss - sx) / (double)ex.dram_bytes);
    ck_assert_msg(fabs(ss - sx) / (double)ex.dram_bytes <= 0.10, "G51 radix 4 16KiB spills");
}
END_TEST

/* Set-associative and tiling on the stat path against the exact one. */
START_TEST(test_stat_set_associative_tiling)
{
    tessel_result ex, st;
    const char *sa = "template_options.policy=set-associative";
    /* uniform random (rand1k, the DRT simulator's input): the independent
     * reference model holds, and Che per set is measured at 0.5 % on
     * B's bytes (48 KiB: one set per bank, 48 sets of 16 lines) */
    double e = stat_error2("../shared/reference/simulator-outputs/rand1k_d1_A.mtx.gz",
                           "template_options.cache_bytes=48KiB", sa, &ex, &st);
    if (e >= 0) {
        printf("gamma set-associative stat vs exact, rand1k 48KiB: |B bytes error| %.4f\n", e);
        ck_assert_msg(e <= 0.02, "rand1k 48KiB set-associative: %.4f", e);
        ck_assert_uint_gt(ex.traffic[1][2].fills, 0);
    }
    /* G51 at 96 KiB: measured ~2 % */
    e = stat_error2("examples/data/G51.mtx.gz", "template_options.cache_bytes=96KiB", sa, &ex,
                    &st);
    if (e < 0)
        return;
    printf("gamma set-associative stat vs exact, G51 96KiB: |B bytes error| %.4f\n", e);
    ck_assert_msg(e <= 0.10, "G51 96KiB set-associative: %.4f", e);
    /* selective tiling: G51 at 16 KiB with tile_fraction 0.25 splits the
     * rows of more than 0.25 x 16 KiB / 160 B (average fiber) = 25 entries;
     * the B trace is unchanged without reordering, Z's spills grow (27 ->
     * 1434 intermediate fibers exact, 1357 stat), and the stat path's Z
     * bytes are measured 11.1 % over the exact ones (4.7 % untiled: the
     * occupancy estimate of a subrow's union is the error) */
    tessel_result ex0, st0;
    const char *mem = "template_options.partials=memory";
    stat_error2("examples/data/G51.mtx.gz", "template_options.cache_bytes=16KiB", mem, &ex0,
                &st0);
    e = stat_error3("examples/data/G51.mtx.gz", "template_options.cache_bytes=16KiB",
                    "template_options.tiling=selective", mem, &ex, &st);
    ck_assert_uint_eq(bytes_of(&ex.traffic[0][2]), bytes_of(&ex0.traffic[0][2]));
    ck_assert_uint_gt(ex.traffic[1][0].updates, ex0.traffic[1][0].updates);
    double zx = (double)bytes_of(&ex.traffic[0][0]), zs = (double)bytes_of(&st.traffic[0][0]);
    printf("gamma tiling G51 16KiB: Z spills exact %llu stat %llu, Z bytes error %.4f\n",
           (unsigned long long)ex.traffic[1][0].updates,
           (unsigned long long)st.traffic[1][0].updates, fabs(zs - zx) / zx);
    ck_assert_msg(fabs(zs - zx) / zx <= 0.15, "G51 16KiB tiling: Z bytes %.4f", fabs(zs - zx) / zx);
    ck_assert_uint_gt(bytes_of(&st.traffic[0][0]), bytes_of(&st0.traffic[0][0]));
}
END_TEST

START_TEST(test_print_table)
{
    static const char *const mats[] = {
        "G51",        "Pd",           "adder_dcop_05", "bcspwr06",       "bcspwr07",
        "bcspwr08",   "bcspwr09",     "bcsstk11",      "bcsstk13",       "bcsstk16",
        "ca-CondMat", "ca-GrQc",      "ca-HepTh",      "hangGlider_2",   "jagmesh7",
        "nnc1374",    "olm1000",      "p2p-Gnutella04", "p2p-Gnutella05", "p2p-Gnutella08",
        "p2p-Gnutella09", "p2p-Gnutella24", "rajat19", "soc-sign-bitcoin-otc", "wiki-Vote",
        "zenios"
    };
    static const char *const caches[] = { "3MiB", "256KiB", "32KiB" };
    printf("%-22s %-7s %10s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "matrix", "cache",
           "compulsory", "exact/c", "affin/c", "stat/c", "staterr", "B err", "B band", "Z err",
           "t_ex ms", "t_st ms");
    for (size_t m = 0; m < sizeof(mats) / sizeof(mats[0]); m++)
        for (size_t c = 0; c < 3; c++) {
            char path[256], set[128], set2[160];
            snprintf(path, sizeof(path), "../shared/data/mtx/%s.mtx.gz", mats[m]);
            snprintf(set, sizeof(set), "template_options.cache_bytes=%s", caches[c]);
            tessel_result ex, st, af;
            double e = stat_error(path, set, &ex, &st);
            if (e < 0)
                continue;
            tessel_result ex2, st2;
            double eirm = stat_error2(path, set, "template_options.stat_model=banded", &ex2, &st2);
            snprintf(set2, sizeof(set2), "template_options.reorder=affinity");
            loaded l;
            tessel_diag d;
            double afr = -1;
            if (load2(&l, path, set, set2)) {
                if (tessel_template_run(l.spec, l.data, NULL, NULL, &af, &d) == 0)
                    afr = (double)af.dram_bytes / (double)af.compulsory_bytes;
                unload(&l);
            }
            double sd = ((double)st.dram_bytes - (double)ex.dram_bytes) / (double)ex.dram_bytes;
            double zx = (double)bytes_of(&ex.traffic[0][0]);
            double ze = ((double)bytes_of(&st.traffic[0][0]) - zx) / zx;
            double sb = (double)bytes_of(&st.traffic[0][2]) - (double)bytes_of(&ex.traffic[0][2]);
            double si = (double)bytes_of(&st2.traffic[0][2]) - (double)bytes_of(&ex.traffic[0][2]);
            printf("%-22s %-7s %10llu %8.3f %8.3f %8.3f %+7.1f%% %+7.1f%% %+7.1f%% %+7.1f%% %8.2f "
                   "%8.3f\n",
                   mats[m], caches[c], (unsigned long long)ex.compulsory_bytes,
                   (double)ex.dram_bytes / (double)ex.compulsory_bytes, afr,
                   (double)st.dram_bytes / (double)ex.compulsory_bytes, 100 * sd,
                   sb < 0 ? -100 * e : 100 * e, si < 0 ? -100 * eirm : 100 * eirm, 100 * ze,
                   ex.seconds * 1e3, st.seconds * 1e3);
            fflush(stdout);
        }
}
END_TEST

/* ------------------------------------------------------------------ */

/* field NULL: the option is valid on its own (the default policy) */
static void bad_option(const char *set, const char *field)
{
    loaded l;
    if (!load(&l, "examples/data/G51.mtx.gz", set))
        return;
    tessel_result r;
    tessel_diag d;
    if (!field) {
        int rc = tessel_template_run(l.spec, l.data, NULL, NULL, &r, &d);
        ck_assert_msg(rc == 0, "%s: %s", set, d.message);
        unload(&l);
        return;
    }
    ck_assert_int_eq(tessel_template_run(l.spec, l.data, NULL, NULL, &r, &d), TESSEL_EINVAL);
    ck_assert_msg(strcmp(d.field, field) == 0, "%s: field %s (%s)", set, d.field, d.message);
    unload(&l);
}

START_TEST(test_bad_options)
{
    bad_option("template_options.cache_bytes=lots", "template_options.cache_bytes");
    bad_option("template_options.cache_bytes=0", "template_options.cache_bytes");
    bad_option("template_options.radix=1", "template_options.radix");
    bad_option("template_options.radix=x", "template_options.radix");
    bad_option("template_options.policy=fifo", "template_options.policy");
    bad_option("template_options.reorder=random", "template_options.reorder");
    bad_option("template_options.stat_model=lru", "template_options.stat_model");
    bad_option("template_options.partial_format=coo", "template_options.partial_format");
    bad_option("template_options.cache_byte=1MiB", "template_options.cache_byte");
    bad_option("template_options.output_format=csc", "template_options.output_format");
    bad_option("template_options.ways=0", "template_options.ways");
    bad_option("template_options.banks=many", "template_options.banks");
    bad_option("template_options.line_bytes=0", "template_options.line_bytes");
    bad_option("template_options.tiling=all", "template_options.tiling");
    bad_option("template_options.tile_fraction=0", "template_options.tile_fraction");
    bad_option("template_options.tile_fraction=1.5", "template_options.tile_fraction");
    bad_option("template_options.tile_fraction=half", "template_options.tile_fraction");
    bad_option("template_options.partials=dram", "template_options.partials");
    bad_option("template_options.subrows=mixed", "template_options.subrows");
    bad_option("template_options.partials=[cache]", "template_options.partials");
    bad_option("template_options.partial=cache", "template_options.partial");
    bad_option("template_options.partials=memory", NULL);
    bad_option("template_options.partials=cache", NULL);
    /* 3 MiB is not a whole number of 48 banks x 16 ways x 100-byte lines */
    bad_option("template_options.line_bytes=100", NULL);
    loaded l;
    if (!load2(&l, "examples/data/G51.mtx.gz", "template_options.policy=set-associative",
               "template_options.line_bytes=100"))
        return;
    tessel_result r;
    tessel_diag d;
    ck_assert_int_eq(tessel_template_run(l.spec, l.data, NULL, NULL, &r, &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.field, "template_options.cache_bytes");
    ck_assert_msg(strstr(d.message, "48 x 16 x 100") != NULL, "%s", d.message);
    unload(&l);
    /* set-associative needs a bounded cache */
    hand h;
    hand_init(&h, 3, 4, 3, LA, 6, LB, 4, 0, "{policy: set-associative}");
    ck_assert_int_eq(tessel_template_run(&h.spec, &h.data, NULL, NULL, &r, &d), TESSEL_EINVAL);
    ck_assert_str_eq(d.field, "template_options.cache_bytes");
    hand_free(&h);
}
END_TEST

static void oom_run(const tessel_spec *spec, const tessel_workload_data *data,
                    const tessel_stat_data *stats)
{
    tessel_result good, r;
    tessel_diag d;
    ck_assert_int_eq(tessel_template_run(spec, data, stats, NULL, &good, &d), 0);
    for (long n = 1;; n++) {
        test_alloc ta;
        test_alloc_init(&ta, n);
        int rc = tessel_template_run(spec, data, stats, &ta.allocator, &r, &d);
        ck_assert_msg(ta.live == 0, "%ld blocks leaked failing allocation %ld", ta.live, n);
        if (rc == 0) {
            ck_assert_uint_eq(r.dram_bytes, good.dram_bytes);
            ck_assert_uint_eq(r.output_nnz, good.output_nnz);
            if (ta.calls < n)
                break;
            continue;
        }
        ck_assert_msg(rc == TESSEL_ENOMEM, "allocation %ld: %s", n, d.message);
    }
}

START_TEST(test_oom)
{
    const char *opts[] = { NULL, "{reorder: affinity}", "{radix: 2}",
                           "{policy: set-associative, ways: 2, banks: 2, line_bytes: 8}",
                           "{tiling: selective, radix: 2, tile_fraction: 0.1}",
                           "{tiling: selective, radix: 2, tile_fraction: 0.1, reorder: affinity, "
                           "policy: set-associative, ways: 1, banks: 1, line_bytes: 16}",
                           "{tiling: selective, radix: 2, tile_fraction: 0.1, reorder: affinity, "
                           "subrows: together}" };
    /* the banded stat model allocates: run the stat OOM with it too */
    for (int v = 0; v < 7; v++) {
        hand h;
        hand_init(&h, 3, 4, 3, LA, 6, LB, 4, 32, opts[v]);
        oom_run(&h.spec, &h.data, NULL);
        hand_free(&h);
    }
    /* partial fibers through the cache: merge rounds (lru, set-associative,
     * evicted or not), tiled subrows, each policy, and partials: memory */
    const char *popts[] = { "{radix: 2}",
                            "{radix: 2, partials: memory}",
                            "{radix: 2, policy: set-associative, ways: 4, banks: 1, line_bytes: 16}",
                            "{radix: 2, tiling: selective, tile_fraction: 0.25, reorder: affinity}",
                            "{radix: 2, tiling: selective, tile_fraction: 0.25, policy: "
                            "set-associative, ways: 2, banks: 2, line_bytes: 16}" };
    for (int v = 0; v < 5; v++) {
        hand h;
        hand_init(&h, 1, 5, 3, SA_, 5, SB_, 5, 64, popts[v]);
        oom_run(&h.spec, &h.data, NULL);
        hand_free(&h);
    }
    loaded l;
    if (!load(&l, "examples/data/jagmesh7.mtx.gz", "template_options.cache_bytes=8KiB"))
        return;
    tessel_stat_options opt;
    tessel_stat_options_init(&opt);
    opt.output_min_flops = 0;
    tessel_stat_data *s = NULL;
    ck_assert_int_eq(tessel_stat_data_create(l.spec, l.data, &opt, NULL, &s, NULL), 0);
    oom_run(l.spec, NULL, s);
    tessel_stat_data_free(&s);
    unload(&l);
    static const char *const stat_opts[][2] = {
        { "template_options.cache_bytes=8KiB", "template_options.stat_model=banded" },
        { "template_options.cache_bytes=48KiB", "template_options.policy=set-associative" },
        { "template_options.cache_bytes=8KiB", "template_options.tiling=selective" },
        { "template_options.cache_bytes=8KiB", "template_options.radix=2" },
        { "template_options.radix=2", "template_options.partials=memory" },
    };
    for (int v = 0; v < 5; v++) {
        if (!load2(&l, "examples/data/jagmesh7.mtx.gz", stat_opts[v][0], stat_opts[v][1]))
            return;
        ck_assert_int_eq(tessel_stat_data_create(l.spec, l.data, &opt, NULL, &s, NULL), 0);
        oom_run(l.spec, NULL, s);
        tessel_stat_data_free(&s);
        unload(&l);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gamma");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 3000);
    if (getenv("TESSEL_GAMMA_TABLE"))
        tcase_add_test(tc, test_print_table);
    else {
    tcase_add_test(tc, test_lru_hand);
    tcase_add_test(tc, test_unused_hand);
    tcase_add_test(tc, test_spills);
    tcase_add_test(tc, test_partials_cache);
    tcase_add_test(tc, test_reorder);
    tcase_add_test(tc, test_set_associative_hand);
    tcase_add_test(tc, test_tiling_hand);
    tcase_add_test(tc, test_subrows_together);
    tcase_add_test(tc, test_stat_set_associative_tiling);
    tcase_add_test(tc, test_stat_vs_exact);
    tcase_add_test(tc, test_bad_options);
    tcase_add_test(tc, test_oom);
    }
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

/* Per-tile non-empty rows (src/stats/tilerows.c) and what the stat
 * estimator prices from them (src/model/stat_tiledfmt.c, docs/models/stat.md
 * "Per-tile non-empty rows"): the per-rank lists that read a tile's rows
 * and tiled-csf, hand-counted, then against exact on banded matrices at one
 * and two buffer levels. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/model.h"
#include "tessel/stats.h"
#include "test_data.h"
#include "test_specs.h"

/* A 4 x 8 matrix on 2 x 2 tiles (2 rows of 4 tiles):
 *   strip 0 (rows 0-1): (0,0) (1,1) in tile 0, (1,2) in tile 1, (0,5) in tile 2;
 *   strip 1 (rows 2-3): (3,3) in tile 1, (2,7) (3,6) in tile 3.
 * Tiles' rows, grid order: 2 (rows 0, 1), 1, 1 | 1, 2. Strips: 2, 2.
 * Trie nodes, one between each two neighbouring tiles of a strip (the
 * smallest aligned block holding both): strip 0, tiles 0|1 the 2-tile
 * block 0, rows 0 and 1: 2 (not 2 + 1: row 1 is in both); tiles 1|2 the
 * 4-tile block, rows 0 and 1: 2; strip 1, tiles 1|3 the 4-tile block,
 * rows 2 and 3: 2; a strip's last tile 0. */
static const uint32_t hand[7][2] = { { 0, 0 }, { 0, 5 }, { 1, 1 }, { 1, 2 },
                                     { 2, 7 }, { 3, 3 }, { 3, 6 } };

START_TEST(rows_hand_counted)
{
    tessel_tensor *t = test_coo_matrix(4, 8, 0, hand, 7);
    uint64_t tile[2] = { 2, 2 };
    tessel_tile_grid *g = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), 0);
    tessel_tile_rows *tr = NULL;
    ck_assert_int_eq(tessel_tile_grid_rows(t, g, NULL, &tr, NULL), 0);
    static const uint32_t rows[5] = { 2, 1, 1, 1, 2 }, node[5] = { 2, 2, 0, 2, 0 };
    ck_assert_uint_eq(tr->n, 5);
    for (unsigned q = 0; q < 5; q++) {
        ck_assert_uint_eq(tessel_tile_rows_tile(tr, q), rows[q]);
        ck_assert_uint_eq(tessel_tile_rows_node(tr, q), node[q]);
    }
    ck_assert_uint_eq(tr->width, 1); /* 2-row tiles: 8-bit counts */
    ck_assert_uint_eq(tr->nstrips, 2);
    ck_assert_uint_eq(tr->strip[0], 2);
    ck_assert_uint_eq(tr->strip[1], 2);
    ck_assert_uint_eq(tessel_tile_rows_level(1, 2), 2);
    ck_assert_uint_eq(tessel_tile_rows_bytes(tr), 2 * 5 * 1 + 2 * 4);
    tessel_tile_rows_free(&tr);
    /* a grid of another matrix is refused */
    tessel_tensor *u = test_coo_matrix(4, 8, 0, hand, 6);
    tessel_diag diag;
    ck_assert_int_eq(tessel_tile_grid_rows(u, g, NULL, &tr, &diag), TESSEL_EINVAL);
    ck_assert_ptr_null(tr);
    tessel_tile_grid_free(&g);
    tessel_tensor_free(&t);
    tessel_tensor_free(&u);
}
END_TEST

/* The hand matrix as A (4 x 8) against an 8 x 4 B of its transpose's
 * pattern, A in [CP, CP] at the LLB in i:4 x k:4 tiles over the 2 x 2 base
 * grid, 8-bit values, coordinates and offsets; each A tile filled once.
 * Tile k 0-3 holds (0,0) (1,1) (1,2) (3,3): strip 0's base tiles 0-1 are
 * all the tiles of the 2-tile block 0 (tile 2 is outside it), whose node
 * says 2 rows (their own 2 + 1 would say 3), strip 1's
 * tile 1 one row: 3 rows; rank 0 a coordinate per row and 3 + 1 offsets,
 * rank 1 a coordinate per nonzero: 24 + 32 + 32 = 88 bits, 11 B. Tile k
 * 4-7 holds (0,5) | (2,7) (3,6): 1 + 2 rows, 24 + 32 + 24 = 80 bits, 10 B.
 * 21 B of metadata, 4 + 3 B of values. From the nonzeros alone (4 (1 -
 * (3/4)^n) rows) the second tile would be 9 B. */
START_TEST(list_rows_from_blocks)
{
    tessel_tensor *a = test_coo_matrix(4, 8, 0, hand, 7);
    uint32_t bt[7][2];
    for (unsigned q = 0; q < 7; q++) {
        bt[q][0] = hand[q][1];
        bt[q][1] = hand[q][0];
    }
    tessel_tensor *b = test_coo_matrix(8, 4, 0, (const uint32_t(*)[2])bt, 7);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1;
    o.base[0] = o.base[1] = 2;
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 4, 4, 4, 1, 8, 8);
    test_set_ranks(&s.level[1].tensor[1], TESSEL_RANK_CP, TESSEL_RANK_CP);
    tessel_result r, x;
    tessel_diag diag;
    ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &r, &diag) == 0, "%s", diag.message);
    ck_assert_int_eq(tessel_model_exact(&s, &d, NULL, &x, &diag), 0);
    ck_assert_uint_eq(x.traffic[1][1].fills, 2);
    ck_assert_uint_eq(x.traffic[1][1].data_bytes, 7);
    ck_assert_uint_eq(x.traffic[1][1].metadata_bytes, 21);
    ck_assert_uint_eq(r.traffic[1][1].fills, 2);
    ck_assert_uint_eq(r.traffic[1][1].data_bytes, 7);
    ck_assert_uint_eq(r.traffic[1][1].metadata_bytes, 21);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

static const char *const orders[6] = { "IJK", "IKJ", "KIJ", "JIK", "JKI", "KJI" };

/* A and B in [CP, CP], [B, B] or [CP, UOP] at the LLB (one buffer level)
 * or at the LLB and a PE level of 8-wide tiles (two), or in tiled-csf at
 * the LLB over the PE tiles: every tile 2^l base tiles wide along its
 * columns, so stat's bytes are exact's, every tensor, level and order. */
START_TEST(rows_formats_equal_exact)
{
    tessel_tensor *a = test_band_matrix(96, 80, 1, 3, 7), *b = test_band_matrix(80, 72, 2, 3, 7);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1;
    static const unsigned char lists[3][2] = {
        { TESSEL_RANK_CP, TESSEL_RANK_CP }, { TESSEL_RANK_B, TESSEL_RANK_B },
        { TESSEL_RANK_CP, TESSEL_RANK_UOP } };
    static const uint64_t shapes[2][3] = { { 24, 32, 16 }, { 0, 64, 32 } }; /* i, j, k */
    for (unsigned f = 0; f < 4; f++)
        for (unsigned n = 0; n < 2; n++)
            for (unsigned q = 0; q < 6; q++)
                for (unsigned nested = f == 3; nested < 2; nested++) {
                    tessel_spec s;
                    test_spec_spmspm(&s, orders[q], shapes[n][0], shapes[n][2], shapes[n][1],
                                     1, 32, 16);
                    for (unsigned t = 1; t < 3; t++) {
                        if (f < 3)
                            test_set_ranks(&s.level[1].tensor[t], lists[f][0], lists[f][1]);
                        else
                            s.level[1].tensor[t].format = TESSEL_SPEC_FORMAT_TILED_CSF;
                    }
                    if (nested) {
                        test_spec_nest(&s, "PE", 8);
                        s.level[2].tensor[1].format = f < 3 ? s.level[2].tensor[1].format : -1;
                        s.level[2].tensor[2].format = f < 3 ? s.level[2].tensor[2].format : -1;
                    }
                    tessel_result r, x;
                    tessel_diag diag;
                    ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &r, &diag) == 0, "%s",
                                  diag.message);
                    ck_assert_msg(tessel_model_exact(&s, &d, NULL, &x, &diag) == 0, "%s",
                                  diag.message);
                    for (unsigned l = 0; l < x.nlevels; l++)
                        for (unsigned t = 1; t < 3; t++) {
                            const tessel_traffic *e = &x.traffic[l][t], *g = &r.traffic[l][t];
                            ck_assert_msg(e->fills == g->fills &&
                                              e->data_bytes == g->data_bytes &&
                                              e->metadata_bytes == g->metadata_bytes,
                                          "format %u shape %u %s nested %u level %u tensor %u: "
                                          "exact %llu fills %llu+%llu B, stat %llu fills "
                                          "%llu+%llu B",
                                          f, n, orders[q], nested, l, t,
                                          (unsigned long long)e->fills,
                                          (unsigned long long)e->data_bytes,
                                          (unsigned long long)e->metadata_bytes,
                                          (unsigned long long)g->fills,
                                          (unsigned long long)g->data_bytes,
                                          (unsigned long long)g->metadata_bytes);
                        }
                    ck_assert_uint_eq(x.dram_bytes, r.dram_bytes);
                }
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* Tiled-csf that the statistics cannot count: ranks along the columns
 * (rank_order k, i), refused with the reason. */
START_TEST(tiled_refusals)
{
    tessel_tensor *a = test_band_matrix(32, 32, 3, 3, 7);
    tessel_workload_data d;
    test_spmspm_data(&d, a, a);
    tessel_spec s;
    test_spec_spmspm(&s, "IJK", 16, 16, 16, 1, 32, 32);
    test_spec_nest(&s, "PE", 8);
    s.level[1].tensor[1].format = TESSEL_SPEC_FORMAT_TILED_CSF;
    s.level[1].tensor[1].nrank_order = 2;
    s.level[1].tensor[1].rank_order[0] = 2; /* k */
    s.level[1].tensor[1].rank_order[1] = 0; /* i */
    tessel_result r;
    tessel_diag diag;
    ck_assert_int_eq(tessel_model_stat(&s, &d, NULL, NULL, &r, &diag), TESSEL_EUNSUPPORTED);
    ck_assert_msg(strstr(diag.message, "rank order other than the canonical"), "%s",
                  diag.message);
    tessel_tensor_free(&a);
}
END_TEST

/* A and B in tiled-csf at the LLB over 8-wide PE tiles, from statistics
 * saved (.tsd version 7, the rows included) and read back: the same
 * bytes. Statistics collected for csr (no rows) refuse tiled-csf with the
 * reason, and price [CP, CP] from the tiles' nonzeros alone. */
START_TEST(saved_rows_roundtrip)
{
    tessel_tensor *a = test_band_matrix(96, 80, 1, 3, 7), *b = test_band_matrix(80, 72, 2, 3, 7);
    tessel_workload_data d;
    test_spmspm_data(&d, a, b);
    tessel_stat_options o;
    tessel_stat_options_init(&o);
    o.output_fraction = 1;
    tessel_spec s;
    test_spec_spmspm(&s, "IKJ", 24, 32, 16, 1, 32, 16);
    test_spec_nest(&s, "PE", 8);
    s.level[1].tensor[1].format = s.level[1].tensor[2].format = TESSEL_SPEC_FORMAT_TILED_CSF;
    tessel_stat_data *sd = NULL, *back = NULL;
    tessel_diag diag;
    ck_assert_msg(tessel_stat_data_create(&s, &d, &o, NULL, &sd, &diag) == 0, "%s", diag.message);
    back = test_stat_reload(sd);
    tessel_result x, y;
    ck_assert_msg(tessel_model_stat_eval(&s, sd, &x, &diag) == 0, "%s", diag.message);
    ck_assert_msg(tessel_model_stat_eval(&s, back, &y, &diag) == 0, "%s", diag.message);
    for (unsigned l = 0; l < x.nlevels; l++)
        for (unsigned t = 0; t < x.ntensors; t++) {
            ck_assert_uint_eq(x.traffic[l][t].data_bytes, y.traffic[l][t].data_bytes);
            ck_assert_uint_eq(x.traffic[l][t].metadata_bytes, y.traffic[l][t].metadata_bytes);
        }
    tessel_stat_data_free(&sd);
    tessel_stat_data_free(&back);
    /* collected for csr: no rows */
    tessel_spec c = s;
    c.level[1].tensor[1].format = c.level[1].tensor[2].format = -1;
    ck_assert_int_eq(tessel_stat_data_create(&c, &d, &o, NULL, &sd, &diag), 0);
    ck_assert_int_eq(tessel_model_stat_eval(&s, sd, &x, &diag), TESSEL_EUNSUPPORTED);
    ck_assert_msg(strstr(diag.message, "these statistics lack them"), "%s", diag.message);
    c.level[1].tensor[1].format = TESSEL_SPEC_FORMAT_RANKS;
    c.level[1].tensor[1].nranks = 2;
    c.level[1].tensor[1].ranks[0] = c.level[1].tensor[1].ranks[1] = TESSEL_RANK_CP;
    ck_assert_msg(tessel_model_stat_eval(&c, sd, &x, &diag) == 0, "%s", diag.message);
    tessel_stat_data_free(&sd);
    /* tile_rows collects them for any spec */
    o.tile_rows = 1;
    c.level[1].tensor[1].format = -1;
    ck_assert_int_eq(tessel_stat_data_create(&c, &d, &o, NULL, &sd, &diag), 0);
    ck_assert_msg(tessel_model_stat_eval(&s, sd, &y, &diag) == 0, "%s", diag.message);
    tessel_stat_data_free(&sd);
    tessel_tensor_free(&a);
    tessel_tensor_free(&b);
}
END_TEST

/* The columns statistic (tessel_tile_grid_cols) of the hand matrix, in its
 * own grid's order (A's tiles: strip 0 tiles 0-2 at tile columns 0, 1, 2;
 * strip 1 tiles 3-4 at tile columns 1, 3):
 *   columns 0-1: tile 0 holds (0,0) (1,1): 2 columns;
 *   columns 2-3: tile 1 (1,2): 1, tile 3 (3,3): 1, the node of the
 *     2-strip block holding both: columns 2 and 3, 2, stored with tile 1;
 *   columns 4-5: tile 2 (0,5): 1;
 *   columns 6-7: tile 4 (2,7) (3,6): 2.
 * Columns of tiles: 2, 2, 1, 2. (The transposed grid's order holds the same
 * arrays here; the second matrix tells them apart.) */
START_TEST(cols_hand_counted)
{
    tessel_tensor *t = test_coo_matrix(4, 8, 0, hand, 7);
    uint64_t tile[2] = { 2, 2 };
    tessel_tile_grid *g = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), 0);
    tessel_tile_rows *tc = NULL;
    ck_assert_int_eq(tessel_tile_grid_cols(t, g, NULL, &tc, NULL), 0);
    static const uint32_t cols[5] = { 2, 1, 1, 1, 2 }, node[5] = { 0, 2, 0, 0, 0 },
                          strip[4] = { 2, 2, 1, 2 };
    ck_assert_uint_eq(tc->n, 5);
    ck_assert_uint_eq(tc->width, 1);
    for (unsigned q = 0; q < 5; q++) {
        ck_assert_uint_eq(tessel_tile_rows_tile(tc, q), cols[q]);
        ck_assert_uint_eq(tessel_tile_rows_node(tc, q), node[q]);
    }
    ck_assert_uint_eq(tc->nstrips, 4);
    for (unsigned q = 0; q < 4; q++)
        ck_assert_uint_eq(tc->strip[q], strip[q]);
    tessel_tile_rows_free(&tc);
    tessel_tensor *u = test_coo_matrix(4, 8, 0, hand, 6);
    tessel_diag diag;
    ck_assert_int_eq(tessel_tile_grid_cols(u, g, NULL, &tc, &diag), TESSEL_EINVAL);
    ck_assert_ptr_null(tc);
    tessel_tile_grid_free(&g);
    tessel_tensor_free(&t);
    tessel_tensor_free(&u);
    /* 4 x 4 on 2 x 2: tile 0 (strip 0, tile column 1) holds (0,2); tile 1
     * (strip 1, column 0) (2,0) (3,1); tile 2 (strip 1, column 1) (2,3).
     * Own order: columns 1, 2, 1; the node of tile column 1 (tiles 0 and 2,
     * columns 2 and 3: 2) with tile 0. (The transposed order would read
     * 2, 1, 1 and nodes 0, 2, 0.) */
    static const uint32_t e2[4][2] = { { 0, 2 }, { 2, 0 }, { 2, 3 }, { 3, 1 } };
    t = test_coo_matrix(4, 4, 0, e2, 4);
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), 0);
    ck_assert_int_eq(tessel_tile_grid_cols(t, g, NULL, &tc, NULL), 0);
    static const uint32_t cols2[3] = { 1, 2, 1 }, node2[3] = { 2, 0, 0 };
    for (unsigned q = 0; q < 3; q++) {
        ck_assert_uint_eq(tessel_tile_rows_tile(tc, q), cols2[q]);
        ck_assert_uint_eq(tessel_tile_rows_node(tc, q), node2[q]);
    }
    ck_assert_uint_eq(tc->strip[0], 2);
    ck_assert_uint_eq(tc->strip[1], 2);
    tessel_tile_rows_free(&tc);
    tessel_tile_grid_free(&g);
    tessel_tensor_free(&t);
}
END_TEST

/* Tiles wider (taller) than 65535: the columns (rows) statistic falls back
 * to 32-bit counts and holds counts past 16 bits (and 16 bits past 255). A 2 x 70000 matrix on
 * one 1 x 70000 tile a row: row 0 holds columns 0-65999, row 1 columns
 * 0-9: tile columns 66000 and 10, the node between them (the 2-strip
 * block) 66000, the column of tiles 66000. Its transpose on 70000 x 1
 * tiles: the same as rows. */
START_TEST(counts_wide_fallback)
{
    const uint32_t n = 66010;
    uint32_t(*e)[2] = malloc(n * sizeof(*e)), (*et)[2] = malloc(n * sizeof(*et));
    for (uint32_t q = 0; q < n; q++) {
        e[q][0] = et[q][1] = q < 66000 ? 0 : 1;
        e[q][1] = et[q][0] = q < 66000 ? q : q - 66000;
    }
    tessel_tensor *t = test_coo_matrix(2, 70000, 0, (const uint32_t(*)[2])e, n);
    tessel_tensor *tt = test_coo_matrix(70000, 2, 0, (const uint32_t(*)[2])et, n);
    uint64_t tile[2] = { 1, 70000 }, tilet[2] = { 70000, 1 };
    tessel_tile_grid *g = NULL, *gt = NULL;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), 0);
    ck_assert_int_eq(tessel_tile_grid_build(tt, tilet, NULL, &gt, NULL), 0);
    tessel_tile_rows *tc = NULL, *tr = NULL, *narrow = NULL;
    ck_assert_int_eq(tessel_tile_grid_cols(t, g, NULL, &tc, NULL), 0);
    ck_assert_int_eq(tessel_tile_grid_rows(tt, gt, NULL, &tr, NULL), 0);
    ck_assert_int_eq(tessel_tile_grid_rows(t, g, NULL, &narrow, NULL), 0);
    ck_assert_uint_eq(tc->width, 4);
    ck_assert_uint_eq(tr->width, 4);
    ck_assert_uint_eq(narrow->width, 1); /* its rows: 1-row tiles */
    static const uint32_t tiles[2] = { 66000, 10 }, nodes[2] = { 66000, 0 };
    for (unsigned q = 0; q < 2; q++) {
        ck_assert_uint_eq(tessel_tile_rows_tile(tc, q), tiles[q]);
        ck_assert_uint_eq(tessel_tile_rows_node(tc, q), nodes[q]);
        ck_assert_uint_eq(tessel_tile_rows_tile(tr, q), tiles[q]);
        ck_assert_uint_eq(tessel_tile_rows_node(tr, q), nodes[q]);
        ck_assert_uint_eq(tessel_tile_rows_tile(narrow, q), 1);
    }
    ck_assert_uint_eq(tc->strip[0], 66000);
    ck_assert_uint_eq(tr->strip[0], 66000);
    ck_assert_uint_eq(tessel_tile_rows_bytes(tc), 2 * 2 * 4 + 1 * 4);
    tessel_tile_rows_free(&tc);
    tessel_tile_grid_free(&g);
    /* 1 x 300 tiles: 16-bit counts, 300 in each full tile of row 0 */
    tile[1] = 300;
    ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), 0);
    ck_assert_int_eq(tessel_tile_grid_cols(t, g, NULL, &tc, NULL), 0);
    ck_assert_uint_eq(tc->width, 2);
    ck_assert_uint_eq(tessel_tile_rows_tile(tc, 0), 300);
    ck_assert_uint_eq(tessel_tile_rows_node(tc, 0), 300); /* with row 1's tile 0 */
    ck_assert_uint_eq(tessel_tile_rows_tile(tc, g->nonempty - 1), 10);
    ck_assert_uint_eq(tc->strip[0], 300);
    tessel_tile_rows_free(&tc);
    tessel_tile_rows_free(&tr);
    tessel_tile_rows_free(&narrow);
    tessel_tile_grid_free(&g);
    tessel_tile_grid_free(&gt);
    tessel_tensor_free(&t);
    tessel_tensor_free(&tt);
    free(e);
    free(et);
}
END_TEST

/* Where tile (r, c) of g (its index there) sits in gt, g transposed: the
 * tile (c, r). */
static uint64_t transposed_at(const tessel_tile_grid *gt, const uint64_t *rc)
{
    uint64_t x[2];
    for (uint64_t q = 0; q < gt->nonempty; q++) {
        tessel_tile_grid_coords(gt, q, x);
        if (x[0] == rc[1] && x[1] == rc[0])
            return q;
    }
    return UINT64_MAX;
}

/* The columns statistic, counted straight from the CSR (tilerows.c), is the
 * rows statistic of the transpose on the transposed grid, tile for tile
 * (each at its index in the matrix's own grid), node for node and strip
 * for strip: random patterns with empty rows and
 * columns, tile edges that cut the extent, grids 1 to 37 tiles tall (odd
 * ones, where a strip's trie has blocks with one half empty). */
START_TEST(cols_equal_rows_of_transpose)
{
    static const uint64_t shapes[][4] = { { 40, 60, 3, 5 },   { 97, 33, 8, 4 }, { 64, 64, 64, 1 },
                                          { 150, 90, 4, 16 }, { 1, 50, 1, 7 },  { 50, 1, 2, 1 } };
    uint32_t x = 7;
    for (unsigned s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        uint64_t R = shapes[s][0], C = shapes[s][1];
        uint32_t(*e)[2] = malloc(R * C * sizeof(*e)), (*et)[2] = malloc(R * C * sizeof(*et));
        size_t n = 0;
        for (uint32_t r = 0; r < R; r++)
            for (uint32_t c = 0; c < C; c++) {
                x = x * 1103515245u + 12345u;
                if ((x >> 16) % (r % 5 == 3 || c % 7 == 2 ? 50 : 6) == 0) {
                    e[n][0] = et[n][1] = r;
                    e[n][1] = et[n][0] = c;
                    n++;
                }
            }
        tessel_tensor *t = test_coo_matrix(R, C, 0, e, n), *tt = test_coo_matrix(C, R, 0, et, n);
        uint64_t tile[2] = { shapes[s][2], shapes[s][3] }, tilet[2] = { tile[1], tile[0] };
        tessel_tile_grid *g = NULL, *gt = NULL;
        ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), 0);
        ck_assert_int_eq(tessel_tile_grid_build(tt, tilet, NULL, &gt, NULL), 0);
        tessel_tile_rows *tc = NULL, *tr = NULL;
        ck_assert_int_eq(tessel_tile_grid_cols(t, g, NULL, &tc, NULL), 0);
        ck_assert_int_eq(tessel_tile_grid_rows(tt, gt, NULL, &tr, NULL), 0);
        ck_assert_uint_eq(tc->n, tr->n);
        ck_assert_uint_eq(tc->nstrips, tr->nstrips);
        for (uint64_t q = 0; q < g->nonempty; q++) {
            uint64_t rc[2];
            tessel_tile_grid_coords(g, q, rc);
            uint64_t p = transposed_at(gt, rc);
            ck_assert_uint_ne(p, UINT64_MAX);
            ck_assert_uint_eq(tessel_tile_rows_tile(tc, q), tessel_tile_rows_tile(tr, p));
            ck_assert_uint_eq(tessel_tile_rows_node(tc, q), tessel_tile_rows_node(tr, p));
        }
        for (uint64_t q = 0; q < tr->nstrips; q++)
            ck_assert_uint_eq(tc->strip[q], tr->strip[q]);
        tessel_tile_rows_free(&tc);
        tessel_tile_rows_free(&tr);
        tessel_tile_grid_free(&g);
        tessel_tile_grid_free(&gt);
        tessel_tensor_free(&t);
        tessel_tensor_free(&tt);
        free(e);
        free(et);
    }
}
END_TEST

/* Lines of pattern e (n entries) inside the block of tiles: coordinate a
 * (0 rows, 1 columns) in tile strip s, the other coordinate's tile >> l
 * equal to b; distinct lines along mode 1 - a counted (the rows
 * statistic's rows, or the columns statistic's columns). */
static uint64_t lines_in_block(const uint32_t (*e)[2], size_t n, const uint64_t *tile,
                               unsigned a, uint64_t s, unsigned l, uint64_t b, uint64_t extent)
{
    uint64_t seen = 0;
    unsigned char *hit = calloc(extent, 1);
    for (size_t q = 0; q < n; q++) {
        uint32_t x = e[q][a], y = e[q][1 - a];
        if (x / tile[a] == s && (y / tile[1 - a]) >> l == b && !hit[x]) {
            hit[x] = 1;
            seen++;
        }
    }
    free(hit);
    return seen;
}

/* The rows and columns statistics (tilerows.c) against their definition,
 * counted entry by entry: each tile's lines, and each node's, the
 * distinct lines of the aligned block of 2^l tiles holding a tile and the
 * next one of its strip (rows) or column of tiles (columns), on random
 * patterns with tries up to 9 levels deep and empty blocks. */
START_TEST(lines_equal_definition)
{
    static const uint64_t shapes[][4] = { { 12, 400, 2, 1 }, { 300, 20, 1, 2 }, { 64, 96, 4, 3 } };
    uint32_t x = 11;
    for (unsigned sh = 0; sh < 3; sh++) {
        uint64_t R = shapes[sh][0], C = shapes[sh][1], tile[2] = { shapes[sh][2], shapes[sh][3] };
        uint32_t(*e)[2] = malloc(R * C * sizeof(*e));
        size_t n = 0;
        for (uint32_t r = 0; r < R; r++)
            for (uint32_t c = 0; c < C; c++) {
                x = x * 1103515245u + 12345u;
                if ((x >> 16) % ((r / 3 + c / 5) % 4 == 0 ? 3 : 40) == 0) {
                    e[n][0] = r;
                    e[n][1] = c;
                    n++;
                }
            }
        tessel_tensor *t = test_coo_matrix(R, C, 0, e, n);
        tessel_tile_grid *g = NULL;
        ck_assert_int_eq(tessel_tile_grid_build(t, tile, NULL, &g, NULL), 0);
        tessel_tile_rows *tr = NULL, *tc = NULL;
        ck_assert_int_eq(tessel_tile_grid_rows(t, g, NULL, &tr, NULL), 0);
        ck_assert_int_eq(tessel_tile_grid_cols(t, g, NULL, &tc, NULL), 0);
        for (uint64_t q = 0; q < g->nonempty; q++) {
            uint64_t at[2], nx[2], dims[2] = { R, C };
            tessel_tile_grid_coords(g, q, at);
            for (unsigned a = 0; a < 2; a++) {
                tessel_tile_rows *st = a ? tc : tr;
                ck_assert_uint_eq(tessel_tile_rows_tile(st, q),
                                  lines_in_block(e, n, tile, a, at[a], 0, at[1 - a], dims[a]));
                uint64_t next = UINT64_MAX, node = 0; /* the next tile along, grid order */
                for (uint64_t v = 0; v < g->nonempty && next == UINT64_MAX; v++) {
                    tessel_tile_grid_coords(g, v, nx);
                    if (nx[a] == at[a] && nx[1 - a] > at[1 - a])
                        next = nx[1 - a];
                }
                if (next != UINT64_MAX) {
                    unsigned l = tessel_tile_rows_level(a ? at[0] : at[1], next);
                    node = a ? lines_in_block(e, n, tile, 1, at[1], l, at[0] >> l, C)
                             : lines_in_block(e, n, tile, 0, at[0], l, at[1] >> l, R);
                }
                ck_assert_uint_eq(tessel_tile_rows_node(st, q), node);
            }
        }
        tessel_tile_rows_free(&tr);
        tessel_tile_rows_free(&tc);
        tessel_tile_grid_free(&g);
        tessel_tensor_free(&t);
        free(e);
    }
}
END_TEST

/* The in-visit step count from the tiles' reduction lines (stat_outspill.c,
 * docs/models/stat.md "Why KIJ is off"), hand-counted. A 8x8: column 0 rows
 * 0 and 4, column 1 rows 1 and 5, column 2 rows 6 and 7; B its transpose
 * (row 0 columns 0 and 4, ...). Every k carries 2 nonzeros of A and 2 of B
 * (w_A = w_B = 2 on k 0-2, 0 elsewhere). LLB tiles i:4 k:8 j:4 in KIJ, one
 * reduction tile, so each of the four output tiles is visited once and
 * only its steps inside the visit spill: Z in [UB, UB] is the same D + M
 * bytes from its first step, over a 16 B partition, so each visit spills
 * (m - 1)(D + M - P) = (m - 1) X.
 *   A's tile I0 (rows 0-3) holds columns {0, 1} (d_A = 2 of the 3 weighted
 *   k), I1 all three; B's J0 rows {0, 1}, J1 all three.
 *   exact: m = |A's k & B's k|: (I0,J0) 2, (I0,J1) 2, (I1,J0) 2, (I1,J1) 3:
 *   sum (m - 1) = 5.
 *   stat: a tile covering all its weighted k covers each (p = 1); I0's
 *   covers each of three equal weights with p = 2/3 (3 (1 - e^-c w) = 2).
 *   (I0,J0): 3 (2/3)^2 = 4/3; (I0,J1), (I1,J0): 2; (I1,J1): 3. A fractional
 *   m charges between its whole neighbours: 1/3 of (2 - 1) X. Sum 13/3.
 *   (The uniform spread over the 8 slots, m = round(8 (1 - (7/8)^n_A)
 *   (1 - (7/8)^n_B)) with 2 or 4 nonzeros a tile: 1, 1, 1, 1, sum 0: no
 *   spill at all.)
 * So stat's Z bumped bytes are 13/15 of exact's; both halves positive. */
START_TEST(steps_from_lines_hand_counted)
{
    /* shift 8: the same k moved to 8-10 of 12, the second reduction tile,
     * cut by the extent to 4 (its tables sized by tk, not by K) */
    for (unsigned v = 0; v < 4; v++) {
        unsigned mirror = v & 1, shift = v < 2 ? 0 : 8, K = 8 + shift / 2;
        uint32_t ae[6][2] = { { 0, 0 }, { 1, 1 }, { 4, 0 }, { 5, 1 }, { 6, 2 }, { 7, 2 } };
        uint32_t be[6][2];
        for (unsigned q = 0; q < 6; q++) {
            ae[q][1] += shift;
            be[q][0] = ae[q][1];
            be[q][1] = ae[q][0];
        }
        tessel_tensor *a = test_coo_matrix(8, K, 0, (const uint32_t(*)[2])ae, 6);
        tessel_tensor *b = test_coo_matrix(K, 8, 0, (const uint32_t(*)[2])be, 6);
        tessel_workload_data d;
        test_spmspm_data(&d, a, b);
        tessel_stat_options o;
        tessel_stat_options_init(&o);
        o.output_fraction = 1;
        o.base[0] = o.base[1] = 4;
        tessel_spec s;
        test_spec_spmspm(&s, mirror ? "KJI" : "KIJ", 4, 8, 4, 1, 32, 8);
        test_set_ranks(&s.level[1].tensor[0], TESSEL_RANK_UB, TESSEL_RANK_UB);
        s.level[1].capacity = 1u << 20;
        s.level[1].tensor[0].partition_bytes = 16;
        tessel_result r, x;
        tessel_diag diag;
        ck_assert_msg(tessel_model_stat(&s, &d, &o, NULL, &r, &diag) == 0, "%s", diag.message);
        ck_assert_msg(tessel_model_exact(&s, &d, NULL, &x, &diag) == 0, "%s", diag.message);
        double ex = (double)x.traffic[1][0].bumped_bytes, st = (double)r.traffic[1][0].bumped_bytes;
        ck_assert_msg(ex > 0 && (uint64_t)ex % 5 == 0, "exact bumped %.0f", ex);
        ck_assert_msg(fabs(st - ex * 13 / 15) <= 1,
                      "v%u: stat bumped %.0f, exact %.0f (13/15: %.1f)", v, st, ex, ex * 13 / 15);
        tessel_tensor_free(&a);
        tessel_tensor_free(&b);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stat_tiledfmt");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, rows_hand_counted);
    tcase_add_test(tc, list_rows_from_blocks);
    tcase_add_test(tc, rows_formats_equal_exact);
    tcase_add_test(tc, tiled_refusals);
    tcase_add_test(tc, saved_rows_roundtrip);
    tcase_add_test(tc, cols_hand_counted);
    tcase_add_test(tc, cols_equal_rows_of_transpose);
    tcase_add_test(tc, lines_equal_definition);
    tcase_add_test(tc, counts_wide_fallback);
    tcase_add_test(tc, steps_from_lines_hand_counted);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

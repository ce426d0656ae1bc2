/* Fuzz target: statistics file from memory (tessel_statfile_parse).
 *
 * As for the cache (fuzz_cache.c), random mutation practically never gets
 * the two 64-bit checksums right, so each input is parsed twice: as given,
 * and with the payload checksum and the header checksum recomputed over
 * the mutated bytes, which lets the fuzzer reach the structure checks
 * behind them (counts, grid order, curve ranges). The offsets are those of
 * the layout documented in src/stats/statfile.c.
 *
 * An accepted file is checked against the contract in stats.h: checksums
 * right, every curve in [0, 1] starting at 1 (0 without nonzeros), the
 * grid sorted, in range, summing to nnz with MaxTile its largest count,
 * and eq. 9's product equal to the non-empty tile fraction. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

#define STATFILE_HEADER_BYTES 256u
#define OFF_PAYLOAD_SUM 216u
#define OFF_HEADER_SUM 248u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_curve(const double *v, uint64_t n, uint64_t nnz)
{
    for (uint64_t s = 0; s < n; s++)
        FUZZ_REQUIRE(v[s] >= 0 && v[s] <= 1, "an accepted curve lies in [0, 1]");
    if (n)
        FUZZ_REQUIRE(v[0] == (nnz ? 1.0 : 0.0), "an accepted curve starts at 1 (0 if empty)");
}

static void check_accepted(const uint8_t *data, size_t size, const tessel_d2t2_stats *s,
                           const tessel_tile_grid *g, const char *source, size_t source_size)
{
    uint64_t stored_header, stored_payload;
    FUZZ_REQUIRE(size >= STATFILE_HEADER_BYTES, "an accepted file holds a whole header");
    memcpy(&stored_header, data + OFF_HEADER_SUM, sizeof(stored_header));
    memcpy(&stored_payload, data + OFF_PAYLOAD_SUM, sizeof(stored_payload));
    FUZZ_REQUIRE(stored_header == fuzz_checksum(data, OFF_HEADER_SUM),
                 "an accepted file has a correct header checksum");
    FUZZ_REQUIRE(stored_payload == fuzz_checksum(data + STATFILE_HEADER_BYTES,
                                            size - STATFILE_HEADER_BYTES),
                 "an accepted file has a correct payload checksum");
    FUZZ_REQUIRE(memchr(source, '\0', source_size) != NULL, "the source is NUL-terminated");
    FUZZ_REQUIRE(g->order == 2 && g->nnz == s->nnz && g->nonempty == s->nonempty_tiles,
                 "the grid is the statistics' base grid");
    uint64_t sum = 0, most = 0;
    for (uint64_t i = 0; i < g->nonempty; i++) {
        FUZZ_REQUIRE(tessel_tile_grid_group(g, i) < g->extent[0] &&
                         tessel_tile_grid_key(g, i) < g->extent[1],
                     "every tile lies inside the grid");
        FUZZ_REQUIRE(i == 0 || tessel_tile_grid_group(g, i) > tessel_tile_grid_group(g, i - 1) ||
                         (tessel_tile_grid_group(g, i) == tessel_tile_grid_group(g, i - 1) &&
                          tessel_tile_grid_key(g, i) > tessel_tile_grid_key(g, i - 1)),
                     "tiles are sorted and unique");
        FUZZ_REQUIRE(tessel_tile_grid_count(g, i) >= 1, "stored tiles are non-empty");
        sum += tessel_tile_grid_count(g, i);
        most = tessel_tile_grid_count(g, i) > most ? tessel_tile_grid_count(g, i) : most;
    }
    FUZZ_REQUIRE(sum == s->nnz, "tile counts sum to nnz");
    FUZZ_REQUIRE(most == s->max_tile, "MaxTile is the largest count");
    FUZZ_REQUIRE(s->sampled_tiles <= s->nonempty_tiles, "the sample is among the tiles");
    double tiles = (double)s->extent[0] * (double)s->extent[1];
    if (s->nonempty_tiles)
        FUZZ_REQUIRE(fabs(s->pr_tile_idx[0] * s->pr_tile_idx[1] * tiles -
                          (double)s->nonempty_tiles) <= 1e-6 * (double)s->nonempty_tiles,
                     "eq. 9's product is the non-empty tile fraction");
    for (unsigned m = 0; m < 2; m++) {
        FUZZ_REQUIRE(s->ncorrs[m] == s->base[m], "ncorrs is the base tile extent");
        FUZZ_REQUIRE(s->base[m] >= 1 && g->tile[m] == s->base[m], "base tiles agree");
        check_curve(s->corrs[m], s->ncorrs[m], s->nnz);
        check_curve(s->tile_corrs[m], s->ntile_corrs[m], s->nnz);
        FUZZ_REQUIRE(s->prob_index[m] >= 0 && s->prob_index[m] <= 1, "ProbIndex in [0, 1]");
    }
}

static void parse_checked(const uint8_t *data, size_t size, const char *what)
{
    fuzz_alloc fa;
    fuzz_alloc_init(&fa, FUZZ_ALLOC_LIMIT);
    tessel_d2t2_stats *s = NULL;
    tessel_tile_grid *g = NULL;
    char source[64];
    tessel_diag diag;
    tessel_diag_clear(&diag);
    int rc = tessel_statfile_parse("fuzz.tstat", data, size, &fa.allocator, &s, &g, source,
                                   sizeof(source), &diag);
    if (rc) {
        FUZZ_REQUIRE(s == NULL && g == NULL, "a failed parse returns nothing");
        fuzz_check_failure(rc, NULL, &diag);
    } else {
        check_accepted(data, size, s, g, source, sizeof(source));
        tessel_d2t2_free(&s);
        tessel_tile_grid_free(&g);
    }
    fuzz_alloc_check_released(&fa, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_checked(data, size, "parsing a statistics file");
    uint8_t *copy =
        fuzz_repaired_copy(data, size, STATFILE_HEADER_BYTES, SIZE_MAX,
                           OFF_PAYLOAD_SUM, OFF_HEADER_SUM);
    if (copy) {
        parse_checked(copy, size, "parsing a statistics file with repaired checksums");
        free(copy);
    }
    return 0;
}

/* Private to the stat estimator: the partial output sample's tile
 * occupancies shrunk toward the mean tile before rule 4's spill is priced
 * (stat_shrink.c), shared by boundary 1 (stat_spmspm_out.c) and the nested
 * boundaries (stat_nested_out.c). */
#ifndef TESSEL_MODEL_STAT_SHRINK_H
#define TESSEL_MODEL_STAT_SHRINK_H

#include <stdint.h>

#include "stat_internal.h"

typedef struct stat_shrink {
    int on;             /* 0: a whole sample, estimates taken as they are */
    double mean;        /* mean occupancy over every effectual tile pair */
    double tau2, kappa; /* true variance of occupancies; noise per unit of drawn X^ */
    model_map drawn;    /* per sampled pair: the part of X^ from rows drawn at random */
    /* band (pairs per row of tiles), 0: every pair shrinks toward the
     * level's mean; else toward its row of tiles' mean sampled pair */
    uint64_t band;
    model_map band_sum, band_n;
} stat_shrink;

/* The output tile pair of sample cell c at the caller's level (0: the
 * cell lies outside it). */
typedef int (*stat_cell_pair_fn)(const void *ctx, uint64_t c, uint64_t *pair);
/* Fits sh for sample s at one level: final maps each sampled pair to X^
 * (its cells' weights summed), pairs is the level's effectual tile pairs
 * (the unsampled ones count as X^ = 0 when band is 0). halves: the noise
 * from two half samples of every row (boundary 1, as issue 20 fitted it),
 * else per drawn unit. A whole sample leaves sh off. */
int stat_shrink_init(stat_shrink *sh, const stat_output_sample *s, const model_map *final,
                     double pairs, uint64_t band, int halves, stat_cell_pair_fn pair_of,
                     const void *ctx, const tessel_allocator *alloc);
/* The row-of-tiles target pays off when a tile spans this many base cells
 * along its rows (independently drawn units): fewer, and its tiles share
 * the few drawn rows, whose noise the row's mean would keep. */
#define STAT_SHRINK_BAND_UNITS 8
void stat_shrink_free(stat_shrink *sh);
/* The shrunk occupancy of a pair whose sampled estimate is x, as a scale
 * of x. */
double stat_shrink_scale(const stat_shrink *sh, uint64_t pair, double x);

#endif

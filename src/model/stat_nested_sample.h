/* Private to the stat estimator: the nested boundaries on a sample of
 * level 1's i strips when their work exceeds a budget
 * (stat_nested_sample.c). */
#ifndef TESSEL_MODEL_STAT_NESTED_SAMPLE_H
#define TESSEL_MODEL_STAT_NESTED_SAMPLE_H

#include "stat_internal.h"

/* The point does not qualify or fits the budget: the full path prices it. */
#define STAT_NESTED_DECLINED 1

typedef struct stat_nested_sample_info {
    int sampled;       /* 1: the nested boundaries were estimated from strips */
    double fraction;   /* of the strips' weight (base-level tile multiplies) evaluated */
    double stderr_rel; /* relative standard error of the inner levels' bytes */
} stat_nested_sample_info;

/* Boundaries 2 .. nlev-1 of SpMSpM, with rule 4's per-read charge settled
 * at level 1, from a sample of strips costing about `budget` base-level
 * tile multiplies; STAT_NESTED_DECLINED when budget is 0, the point fits
 * it or does not qualify (the caller evaluates the full closed form). */
int stat_nested_sampled(engine *e, const stat_input *const *in, const stat_output_sample *s,
                        double budget, uint64_t seed, stat_nested_sample_info *info,
                        tessel_diag *diag);

#endif

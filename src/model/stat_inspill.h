/* Private to the stat estimator: rule 4 for inputs per read of the compute
 * at the innermost level (stat_inspill.c). */
#ifndef TESSEL_MODEL_STAT_INSPILL_H
#define TESSEL_MODEL_STAT_INSPILL_H

#include "stat_closed.h"

/* Whether boundary b is the innermost level and the compute reads one of
 * its inputs more than once per tile use (exact_inspill_reads), with the
 * rule switched on for this evaluation (engine.inspill). */
int stat_inspill_on(const engine *e, unsigned b);

/* The compute's expected reads of boundary b's recorded overbooked tiles
 * (child_nnz), from the inputs' statistics in[0] (A) and in[1] (B),
 * cascaded to level b-1 (exact_ob_cascade). exact_ob_settle(e, b) follows.
 * TESSEL_ENOMEM when a scratch array cannot be had. With kc (a sweep
 * thread's stat_cache_ksteps; NULL: none) what a band's reads take from
 * the statistics alone is kept in kc's pool and shared (stat_ks_vec). */
int stat_inspill_count(engine *e, unsigned b, const stat_input *const *in, stat_ks_cache *kc);

#endif

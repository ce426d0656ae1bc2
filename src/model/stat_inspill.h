/* Private to the stat estimator: rule 4 for inputs per read of the compute
 * at the innermost level (stat_inspill.c). */
#ifndef TESSEL_MODEL_STAT_INSPILL_H
#define TESSEL_MODEL_STAT_INSPILL_H

#include "stat_closed.h"

/* Whether boundary b is the innermost level and the compute reads one of
 * its inputs more than once per tile use (exact_inspill_reads), with the
 * rule switched on for this evaluation (engine.inspill). */
int stat_inspill_on(const engine *e, unsigned b);

/* One input tile as the closed sums price it at boundary b (operand i,
 * tile (m0, m1) in the operand's mode order, nnz nonzeros), gathered per
 * k band for the estimate of the other operand's reads. */
int stat_inspill_tile(engine *e, unsigned b, unsigned i, uint64_t m0, uint64_t m1, uint64_t nnz);

/* The compute's expected reads of boundary b's recorded overbooked tiles
 * (child_nnz), flops the exact multiplies, cascaded to level b-1
 * (exact_ob_cascade); frees the band sums. exact_ob_settle(e, b) follows. */
void stat_inspill_count(engine *e, unsigned b, double flops);

#endif

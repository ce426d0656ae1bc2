/* Private to the stat estimator: the closed form of nested boundaries
 * (stat_nested.c). */
#ifndef TESSEL_MODEL_STAT_NESTED_H
#define TESSEL_MODEL_STAT_NESTED_H

#include "stat_internal.h"

/* Boundary b >= 2 of SpMSpM / SpMV from the statistics into e->res:
 * fills, write-backs and updates per tensor at level b, without walking
 * the effectual iterations. Needs the output sample. */
int stat_nested_evaluate(engine *e, unsigned b, const stat_input *const *in,
                         const stat_output_sample *s, tessel_diag *diag);

/* The coarse block (in level-b tiles of engine index f) whose change
 * splits the runs of uses of a tensor over engine indices x0, x1 at
 * boundary bd; UINT64_MAX when nothing splits them. */
uint64_t stat_nested_block(const boundary *bd, unsigned x0, unsigned x1, unsigned f);

#endif

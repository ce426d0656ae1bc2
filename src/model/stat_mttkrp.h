/* Private to the stat estimator: closed sums for MTTKRP at one buffer
 * level (stat_mttkrp.c), in place of the walk of stat_walk.c. */
#ifndef TESSEL_MODEL_STAT_MTTKRP_H
#define TESSEL_MODEL_STAT_MTTKRP_H

#include "stat_internal.h"

/* Whether boundary bd of MTTKRP Y[i,r] = T[i,j,k] B[j,r] C[k,r] (its
 * geometry set) is one the closed sums price: one buffer level, every
 * iteration effectual (each input skips on both partners), no outer
 * action_optimization, and the output's loops i and r outside the
 * reduction loops j and k. Its output table then needs only each tile's
 * final count (stat_walk.c builds it so). */
int stat_mttkrp_applies(const engine *e, const boundary *bd);

/* Once the output table is built: whether no final output tile outgrows
 * Y's partition. An output that spills takes the walk, which prices its
 * spills per update step. */
int stat_mttkrp_fits(const engine *e, const boundary *bd);

/* The boundary's input fills, output write-backs and per-iteration counts
 * into e->res, equal to the walk's (exact_walk_boundary) on the same
 * grids and table. */
int stat_mttkrp_sums(engine *e, const boundary *bd);

#endif

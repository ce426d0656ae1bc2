/* Private to the stat estimator: closed sums for MTTKRP at every buffer
 * level (stat_mttkrp.c), in place of the walk of stat_walk.c. */
#ifndef TESSEL_MODEL_STAT_MTTKRP_H
#define TESSEL_MODEL_STAT_MTTKRP_H

#include "stat_internal.h"

/* Whether boundary bd of MTTKRP Y[i,r] = T[i,j,k] B[j,r] C[k,r] (its
 * geometry set) is one the closed sums price: every iteration effectual
 * (each input skips on both partners), no action_optimization above the
 * innermost level, no rule 4 per read of the compute (e->inspill). Any
 * loop order, any number of buffer levels. */
int stat_mttkrp_applies(const engine *e, const boundary *bd);

/* Whether, in bd's loop order, every digit of the output's loops i and r
 * (one per level that tiles it) is outside every digit of the reduction
 * loops j and k: each output tile is then one run, and the
 * output table needs only each tile's final count (stat_walk.c builds it
 * so); else each sampled nonzero's first reduction step. */
int stat_mttkrp_final_only(const engine *e, const boundary *bd);

/* The level-b reduction key of the MTTKRP sample's multiplies as
 * gj[j cell] + gk[k cell] (stat_walk.c's first reduction step per output
 * nonzero, in place of exact_reduction_key per multiply). Both NULL with
 * TESSEL_OK where a table would pass 2^24 cells: the key per multiply. */
int stat_mttkrp_red_terms(const engine *e, const boundary *bd, const stat_output_sample *s,
                          uint64_t **gj, uint64_t **gk);

/* Once the output table is built: whether no final output tile outgrows
 * Y's partition. An output that spills takes the walk, which prices its
 * spills per update step. */
int stat_mttkrp_fits(const engine *e, const boundary *bd);

/* The boundary's input fills, output write-backs and per-iteration counts
 * into e->res, equal to the walk's (exact_walk_boundary) on the same
 * grids and table. */
int stat_mttkrp_sums(engine *e, const boundary *bd);

#endif

/* Private to the stat estimator: rule 4 for inputs per read of the child
 * level (stat_bumped.c), at levels with a buffer level below them. */
#ifndef TESSEL_MODEL_STAT_BUMPED_H
#define TESSEL_MODEL_STAT_BUMPED_H

#include "stat_closed.h"

/* Operand i's tile (m0, m1) of level l, packed: the key of the tables. */
uint64_t stat_ob_pack(const engine *e, unsigned l, unsigned i, uint64_t m0, uint64_t m1);

/* One input tile as the closed sums price it at boundary b: operand i's
 * tile (m0, m1) in the operand's mode order, in level-b tiles, of nnz
 * nonzeros at price pr, partition part (0: unbounded), filled `fills`
 * times over `uses` uses. Its fills are reads of its level-(b-1) tile
 * (when b >= 2 and that tile is overbooked there), and the tile itself is
 * kept for the per-read charge when level b is inner and it overflows. */
int stat_ob_tile(engine *e, unsigned b, unsigned i, uint64_t m0, uint64_t m1, uint64_t nnz,
                 price pr, uint64_t part, double fills, double uses);

/* Whether some tile of grid g can exceed partition part (0: unbounded) at
 * the price of cost: a tile's bytes (fixed + nnz x per bits, rounded up)
 * do not decrease with its nonzeros, so the largest tile answers for every
 * tile, and a level whose largest tile fits skips stat_ob_tile's per-tile
 * test and keeps no per-tile fills. */
int stat_ob_may_overflow(const stat_grid *g, const tile_cost *cost, uint64_t part);

/* Boundary 1's input tiles after stat_spmspm_evaluate, canonical roles
 * (mirror: p->a is B^T, p->b is A^T), each tile's fills in fills[0] (p->a)
 * and fills[1] (p->b), through stat_ob_tile. */
int stat_ob_level1(engine *e, const stat_problem *p, int mirror, double *const fills[2]);

#endif

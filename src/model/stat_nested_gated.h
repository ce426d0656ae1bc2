/* Private to the stat estimator: inputs that read or gate their tiles where
 * the partner's tile is empty, at a nested boundary (stat_nested_gated.c). */
#ifndef TESSEL_MODEL_STAT_NESTED_GATED_H
#define TESSEL_MODEL_STAT_NESTED_GATED_H

#include "stat_nested.h"

/* Whether some input reads or gates its tiles at level b where its
 * partner's tile is empty (stat_input_mode not STAT_MODE_SKIP). */
int stat_nested_gated_any(const engine *e, unsigned b);

/* The same at some nested level (b >= 2). */
int stat_nested_gated_nested(const engine *e);

/* The fills, gated fills and rule 4 uses at n's boundary of each input
 * that reads or gates its tiles where the partner's is empty, into o->a
 * (o->b), which the caller left unset for it; n->rec is marked unrecorded.
 * Each tile goes through stat_ob_tile (rule 4 per read: its fills read an
 * overbooked level b-1 tile, and it is kept where it overbooks at level
 * b). STAT_NESTED_KNOWN_DECLINED (the walk) only under TTM's unfolding. */
int stat_nested_gated_inputs(nested *n, stat_outcome *o);

#endif

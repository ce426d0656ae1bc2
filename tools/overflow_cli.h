/* Rule 4 feasibility on the command line: warnings for fixed mappings
 * whose tiles overflow their partitions, and --strict (tessel run, sweep,
 * map, compare). */
#ifndef TESSEL_TOOLS_OVERFLOW_CLI_H
#define TESSEL_TOOLS_OVERFLOW_CLI_H

#include "tessel/model.h"
#include "tessel/spec.h"

/* Whether the spec allows tiles larger than their partitions: only an
 * overbooking strategy (swiftiles, whose `overbooking:` target sets how
 * many) or the template variant that runs it does; a fixed mapping or
 * any other strategy promises tiles that fit. */
int cli_overflow_allowed(const tessel_spec *spec, const char *strategy);

/* Per (level, tensor) of r that overflows: with strict and an overflow
 * the spec does not allow, "tessel CMD: error: ..." on stderr and
 * returns 1; otherwise, when warn is set, "tessel CMD: warning: ..."
 * naming level, tensor, the share of tiles, the worst tile and what the
 * overflow costs, and returns 0. */
int cli_overflow_check(const char *cmd, const tessel_spec *spec, const char *strategy,
                       const tessel_result *r, int strict, int warn);

/* --strict before the estimate: prints each check of f (tessel_model_feasibility)
 * the spec does not allow: an input that overflows as "tessel CMD: error:"
 * naming level, tensor, its worst tile and the partition; an output whose
 * bound overflows as a note ("may overflow": the estimate decides).
 * Returns 1 when some certain overflow fails the run. */
int cli_overflow_precheck(const char *cmd, const tessel_spec *spec, const char *strategy,
                          const tessel_feasibility *f);

#endif

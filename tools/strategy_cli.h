/* Strategy helpers shared by tessel run and tessel compare. */
#ifndef TESSEL_TOOLS_STRATEGY_CLI_H
#define TESSEL_TOOLS_STRATEGY_CLI_H

#include <stdio.h>

#include "cli.h"
#include "tessel/strategy.h"

/* --strategy NAME -> "mapping.strategy=NAME" (malloc'd), after checking
 * the name; usage error (exit status) otherwise. */
int cli_strategy_set(const char *cmd, const char *name, char **out);
/* "strategy swiftiles: LLB i:..  overbooking 9.8 % of tiles (target 10 %) ..." */
void cli_print_choice(FILE *f, const tessel_strategy_choice *c, int no_timing);
/* The --set, --tensor and (when opt_strategy >= 0) --strategy arguments of
 * args as spec overrides, in command-line order so that a later one wins:
 * *sets is a malloc'd array with room for every argument (the caller frees
 * it and its first *n strings, also after an error), *n their count. 0, or
 * the exit status after printing the error. */
int cli_overrides(const char *cmd, const cli_args *args, int opt_set, int opt_tensor,
                  int opt_strategy, char ***sets, size_t *n);

#endif

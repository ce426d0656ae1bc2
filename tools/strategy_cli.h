/* Strategy helpers shared by tessel run and tessel compare. */
#ifndef TESSEL_TOOLS_STRATEGY_CLI_H
#define TESSEL_TOOLS_STRATEGY_CLI_H

#include <stdio.h>

#include "tessel/strategy.h"

/* --strategy NAME -> "mapping.strategy=NAME" (malloc'd), after checking
 * the name; usage error (exit status) otherwise. */
int cli_strategy_set(const char *cmd, const char *name, char **out);
/* "strategy swiftiles: LLB i:..  overbooking 9.8 % of tiles (target 10 %) ..." */
void cli_print_choice(FILE *f, const tessel_strategy_choice *c, int no_timing);

#endif

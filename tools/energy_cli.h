/* Energy resolution on the command line (tessel run, run -n, energy):
 * every component of a spec priced from its tables, warnings printed,
 * and on failure the list of what was and was not priced. */
#ifndef TESSEL_TOOLS_ENERGY_CLI_H
#define TESSEL_TOOLS_ENERGY_CLI_H

#include "tessel/energy.h"
#include "tessel/spec.h"

/* Loads the spec's energy tables into *db and resolves every component
 * into *de. Prints the spec's plausibility warnings and the energy
 * warnings (unmatched ERT entries, ...) as "file:line: warning: ..." on
 * stderr. On failure prints the errors, then "tessel CMD: priced: ...;
 * not priced: ...", frees *db and returns the exit status; 0 on success. */
int cli_energy_resolve(const char *cmd, const tessel_spec *spec, tessel_energy_db **db,
                       tessel_design_energy *de);

/* The instances a component's energy is multiplied by: level copies, PEs x
 * MACs per PE for "MAC", PEs for "intersect". */
double cli_energy_instances(const tessel_spec *spec, int level, const char *what);

#endif

/* Energy resolution on the command line (tessel run, run -n, energy; the
 * warnings also in map, compare and sweep):
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

/* Prints the spec's plausibility warnings and, with `db`, its energy
 * warnings (`de` may be NULL: then not the per-level ones) on stderr,
 * once per spec: tessel run, energy, map, compare and sweep print the same
 * lines. */
void cli_energy_warn(const tessel_spec *spec, const tessel_energy_db *db,
                     const tessel_design_energy *de);

/* cli_energy_warn after resolving the design itself (tessel map, sweep):
 * a component that does not resolve drops only the per-level warnings. */
void cli_energy_warn_design(const tessel_spec *spec, const tessel_energy_db *db);

/* The instances a component's energy is multiplied by: level copies, PEs x
 * MACs per PE for "MAC", PEs for "intersect". */
double cli_energy_instances(const tessel_spec *spec, int level, const char *what);

#endif

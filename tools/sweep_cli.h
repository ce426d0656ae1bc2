/* Pieces shared by tessel sweep, merge and map. */
#ifndef TESSEL_TOOLS_SWEEP_CLI_H
#define TESSEL_TOOLS_SWEEP_CLI_H

#include <stddef.h>

#include "tessel/sweep.h"

/* Up to three comma-separated names pointing into one copy. */
typedef struct sweep_cli_names {
    const char *item[TESSEL_SWEEP_MAX_OBJECTIVES];
    size_t n;
    char *copy;
} sweep_cli_names;

/* --pareto A,B[,C] (text may be NULL: no names). Usage errors are printed. */
int sweep_cli_objectives(const char *cmd, const char *text, sweep_cli_names *out);
void sweep_cli_names_free(sweep_cli_names *n);

/* SVG figures of a finished sweep directory: roofline.svg, traffic.svg
 * (the first points) and, with two minimised objectives, pareto.svg (one
 * data set) or pareto-DATA.svg per data set. Returns an exit status. */
int sweep_cli_plots(const char *dir, int quiet);

#endif

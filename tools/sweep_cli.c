/* Pieces shared by tessel sweep, merge and map. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sweep_cli.h"

int sweep_cli_objectives(const char *cmd, const char *text, sweep_cli_names *out)
{
    memset(out, 0, sizeof(*out));
    if (!text)
        return CLI_EXIT_OK;
    if (!(out->copy = strdup(text))) {
        fprintf(stderr, "tessel %s: error: out of memory\n", cmd);
        return CLI_EXIT_FAILURE;
    }
    for (char *p = out->copy, *next; p; p = next) {
        next = strchr(p, ',');
        if (next)
            *next++ = '\0';
        if (!*p || out->n == TESSEL_SWEEP_MAX_OBJECTIVES)
            return cli_usage_error(cmd, "--pareto names two or three summary.csv columns "
                                        "separated by commas, not '%s'", text);
        out->item[out->n++] = p;
    }
    if (out->n < 2)
        return cli_usage_error(cmd, "--pareto needs two or three objectives, not '%s'", text);
    return CLI_EXIT_OK;
}

void sweep_cli_names_free(sweep_cli_names *n)
{
    free(n->copy);
    memset(n, 0, sizeof(*n));
}

int sweep_cli_plots(const char *dir, int quiet)
{
    (void)dir;
    (void)quiet;
    fprintf(stderr, "tessel: error: --plot is not built yet\n");
    return CLI_EXIT_FAILURE;
}

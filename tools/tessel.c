/* tessel: analytical modelling of sparse tensor accelerators. */
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

/* The version comes from meson.build (project version) alone: tools/meson.build
 * defines TESSEL_VERSION_STRING. */
#ifndef TESSEL_VERSION_STRING
#error "TESSEL_VERSION_STRING must come from meson (tools/meson.build)"
#endif

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    { "run", cmd_run, "model a design point: traffic per level, energy, cycles (CSV/JSON)" },
    { "stats", cmd_stats, "tile-occupancy statistics of a tensor for a tile shape" },
    { "convert", cmd_convert, "convert a tensor file (e.g. .mtx -> binary cache .tsl)" },
    { "gen", cmd_gen, "generate a synthetic sparse matrix (uniform, banded, rmat, ...)" },
    { "validate", cmd_validate, "compare predicted CSV numbers with a reference (relative errors)" },
    { "sweep", cmd_sweep, "evaluate a design-space sweep (axes over spec paths) into one CSV" },
    { "merge", cmd_merge, "combine the outputs of sweep shards into one sweep's files" },
    { "compare", cmd_compare, "run every tiling strategy on one spec and data: one table" },
    { "map", cmd_map, "search mappings for the best design point under an objective" },
    { "energy", cmd_energy, "price every component of a spec per action, with its source" },
    { "plot", cmd_plot, "SVG figures: traffic breakdown, roofline, Pareto front, stat vs exact" },
    { "spec", cmd_spec, "print the resolved spec (defaults filled in) or each value's origin" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: tessel COMMAND [ARGS...]\n\n"
               "tessel models sparse tensor accelerators analytically: traffic per memory\n"
               "level and tensor, energy and cycles, from statistics of real tensors.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'tessel COMMAND --help' describes a command; 'tessel --version' prints the "
               "version.\n");
}

int main(int argc, char **argv)
{
    /* GSL's default handler aborts; tessel checks return codes instead. */
    gsl_set_error_handler_off();
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("tessel %s\n", TESSEL_VERSION_STRING);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    fprintf(stderr, "tessel: error: unknown command '%s'\n\n", name);
    usage(stderr);
    return CLI_EXIT_USAGE;
}

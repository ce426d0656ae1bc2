/* tessel merge: combine the directories of a sweep's shards into the
 * files a single run would have written. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "sweep_cli.h"
#include "tessel/sweep.h"

enum { OPT_HELP, OPT_OUTPUT, OPT_PARETO, OPT_PLOT, OPT_QUIET, OPT_COUNT };

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_PARETO] = { "--pareto", NULL, 1 },
    [OPT_PLOT] = { "--plot", NULL, 0 },
    [OPT_QUIET] = { "--quiet", "-q", 0 },
};

static void help(void)
{
    printf(
        "usage: tessel merge -o DIR SHARD_DIR...\n\n"
        "Combines the output directories of every shard of one sweep (tessel sweep\n"
        "--shard I/N, in any order) into DIR: summary.csv, traffic.csv, pareto.csv and\n"
        "sweep.state, byte for byte what one run of the whole sweep writes. Refuses\n"
        "shards of different sweeps, a missing or repeated shard, an unfinished shard,\n"
        "shards whose rows overlap or leave a gap (naming the points). All or nothing:\n"
        "the files are written aside and renamed into DIR only when every shard checks\n"
        "out, so a refused merge leaves DIR as it was. DIR is locked while it runs.\n\n"
        "options:\n"
        "  -o, --output DIR      the merged directory (required; created when missing)\n"
        "      --pareto A,B[,C]  Pareto objectives (default: those the shards ran with)\n"
        "      --plot            also write SVG figures into DIR\n"
        "  -q, --quiet           print nothing\n\n"
        "example:\n"
        "  tessel merge -o sweep-all shard-0 shard-1 shard-2 shard-3\n");
}

static int run(const cli_args *args)
{
    const char *dir = cli_value(args, OPT_OUTPUT);
    if (!dir || !dir[0])
        return cli_usage_error("merge", "-o DIR is required (see tessel merge --help)");
    int n = cli_positionals(args);
    if (n == 0)
        return cli_usage_error("merge", "no shard directories");
    const char *shards[CLI_MAX_ARGS];
    for (int i = 0; i < n; i++)
        shards[i] = cli_positional(args, i);
    sweep_cli_names names;
    if (sweep_cli_objectives("merge", cli_value(args, OPT_PARETO), &names))
        return CLI_EXIT_USAGE;
    uint64_t points = 0;
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = tessel_sweep_merge(shards, (size_t)n, dir, names.n ? names.item : NULL, names.n,
                                NULL, &points, &d);
    sweep_cli_names_free(&names);
    if (rc)
        return cli_report(&d);
    int quiet = cli_has(args, OPT_QUIET);
    if (cli_has(args, OPT_PLOT) && (rc = sweep_cli_plots(dir, quiet)))
        return rc;
    if (!quiet)
        printf("merged %d shards: %llu points in %s/summary.csv and %s/traffic.csv\n", n,
               (unsigned long long)points, dir, dir);
    return CLI_EXIT_OK;
}

int cmd_merge(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("merge", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    return run(&args);
}

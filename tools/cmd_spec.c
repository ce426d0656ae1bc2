/* tessel spec: print the resolved spec (includes merged, overrides applied,
 * every default filled in), or where each value came from (--origins). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "strategy_cli.h"
#include "tessel/spec.h"

enum { OPT_HELP, OPT_SET, OPT_TENSOR, OPT_STRATEGY, OPT_ORIGINS, OPT_OUTPUT, OPT_COUNT };

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_SET] = { "--set", NULL, 1 },
    [OPT_TENSOR] = { "--tensor", NULL, 1 },
    [OPT_STRATEGY] = { "--strategy", NULL, 1 },
    [OPT_ORIGINS] = { "--origins", NULL, 0 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
};

static void help(void)
{
    printf(
        "usage: tessel spec SPEC [--set PATH=VALUE]... [--tensor NAME=FILE]... [--origins]\n"
        "                   [-o FILE]\n\n"
        "Prints the spec tessel uses for SPEC: includes merged, --set/--tensor/--strategy\n"
        "applied in command-line order, every default filled in (level widths, formats,\n"
        "each tensor's partition in bytes, strategy options). The YAML is written through\n"
        "a libcyaml schema of the resolved spec and read back through it before it is\n"
        "printed, so it always loads with that schema (docs/spec.md, \"The resolved\n"
        "spec\"). It is a record of a design, not an input for tessel run.\n\n"
        "options:\n"
        "      --set PATH=VALUE     override a spec value, as for tessel run\n"
        "      --tensor NAME=FILE   bind a tensor to a data file, as for tessel run\n"
        "      --strategy NAME      the tiling strategy, as for tessel run\n"
        "      --origins            instead of the YAML, one line per value: PATH, the\n"
        "                           value used, and FILE:LINE:COL of the node that set it\n"
        "                           (--set:N:COL for the Nth override) or 'default'\n"
        "  -o, --output FILE        write to FILE instead of standard output\n\n"
        "examples:\n"
        "  tessel spec specs/extensor.yaml\n"
        "  tessel spec specs/extensor.yaml --set PEB.capacity=64KiB --origins\n");
}

static int write_origins(const tessel_spec *s, FILE *f)
{
    tessel_spec_origin *items = NULL;
    size_t n = 0;
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_spec_origins(s, NULL, &items, &n, &d))
        return cli_report(&d);
    size_t width = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(items[i].path) > width)
            width = strlen(items[i].path);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%-*s  %-20s  %s\n", (int)width, items[i].path, items[i].value,
                items[i].origin);
    tessel_spec_origins_free(items, n, NULL);
    return CLI_EXIT_OK;
}

static int emit(const cli_args *args, const tessel_spec *s)
{
    cli_output out;
    int rc = cli_output_open(&out, cli_value(args, OPT_OUTPUT));
    if (rc)
        return rc;
    rc = cli_has(args, OPT_ORIGINS) ? write_origins(s, out.stream) : cli_write_resolved(s, out.stream);
    int rc2 = cli_output_close(&out, rc == CLI_EXIT_OK);
    return rc ? rc : rc2;
}

static int run(const cli_args *args)
{
    if (cli_positionals(args) != 1)
        return cli_usage_error("spec", "expected one SPEC file (see tessel spec --help)");
    char **sets = NULL;
    size_t n = 0;
    int rc = cli_overrides("spec", args, OPT_SET, OPT_TENSOR, OPT_STRATEGY, &sets, &n);
    tessel_spec *s = NULL;
    if (!rc) {
        tessel_diag_list errors;
        tessel_diag_list_init(&errors, NULL);
        int lrc = tessel_spec_load(cli_positional(args, 0), (const char *const *)sets, n, NULL,
                                   &s, &errors);
        if (lrc)
            rc = cli_report_list("spec", &errors, lrc);
        else
            tessel_diag_list_free(&errors);
    }
    if (!rc)
        rc = emit(args, s);
    tessel_spec_free(&s);
    for (size_t i = 0; i < n; i++)
        free(sets[i]);
    free(sets);
    return rc;
}

int cmd_spec(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("spec", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    return run(&args);
}

/* tessel energy: every component of a spec priced per action, with the
 * table and entry or fitted model that priced it (provenance). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "energy_cli.h"
#include "tessel/energy.h"
#include "tessel/spec.h"

enum { OPT_HELP, OPT_SET, OPT_OUTPUT, OPT_COUNT };

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_SET] = { "--set", "-s", 1 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
};

static void help(void)
{
    printf("usage: tessel energy SPEC [options]\n\n"
           "Prices every component of SPEC (each storage level, each level's network\n"
           "where priced, the MAC and the intersection unit) from the energy tables\n"
           "the spec names, as tessel run does, and prints per component and action\n"
           "the energy (pJ) and the area, the table and entry or fitted model that\n"
           "priced it and the attributes used\n"
           "(docs/models/energy.md). Warnings (ERT entries that match no component,\n"
           "implausible clocks, widths or partitions) go to standard error.\n\n"
           "options:\n"
           "  -s, --set PATH=VALUE  override one spec key before validation, e.g.\n"
           "                        GLB.capacity=1MiB (repeatable)\n"
           "  -o, --output FILE     also write the table as CSV to FILE (columns in\n"
           "                        docs/outputs.md, energy.csv)\n\n"
           "An unpriced component is an error (exit 2) that lists what was priced.\n");
}

/* One component: its name, energy class and resolved energy. */
typedef struct energy_row {
    char name[TESSEL_SPEC_NAME_MAX + 16];
    const char *cls;
    const tessel_component_energy *e;
    double instances;
} energy_row;

static energy_row row_of(const char *name, const char *cls, const tessel_component_energy *e,
                         double instances)
{
    energy_row r;
    snprintf(r.name, sizeof(r.name), "%s", name);
    r.cls = cls;
    r.e = e;
    r.instances = instances;
    return r;
}

static size_t rows_of(const tessel_spec *spec, const tessel_design_energy *de, energy_row *rows,
                      size_t cap)
{
    size_t n = 0;
    unsigned nl = spec->nlevels < TESSEL_SPEC_MAX_LEVELS ? spec->nlevels : TESSEL_SPEC_MAX_LEVELS;
    for (unsigned l = 0; l < nl && n < cap; l++)
        rows[n++] = row_of(spec->level[l].name, spec->level[l].energy.cls, &de->level[l],
                           cli_energy_instances(spec, (int)l, NULL));
    /* A level's network to its child, where priced (a `network` or a spatial
     * split, docs/models/energy.md "Network energy"): one wire per boundary,
     * read = the energy of one delivered value over the hop. */
    for (unsigned l = 0; l < nl && n < cap; l++)
        if (de->network[l].method[0]) {
            char name[TESSEL_SPEC_NAME_MAX + 16];
            snprintf(name, sizeof(name), "%s:network", spec->level[l].name);
            rows[n++] = row_of(name, spec->level[l].network_class[0] ? spec->level[l].network_class
                                                                     : "wire",
                               &de->network[l], 1);
        }
    if (n < cap)
        rows[n++] = row_of("MAC", spec->compute.mac.cls, &de->mac,
                           cli_energy_instances(spec, -1, "MAC"));
    if (spec->compute.intersect.cls[0] && n < cap)
        rows[n++] = row_of("intersect", spec->compute.intersect.cls, &de->intersect,
                           cli_energy_instances(spec, -1, "intersect"));
    return n;
}

static void write_csv(FILE *f, const energy_row *rows, size_t n)
{
    fprintf(f, "component,class,instances,action,pj,area_um2,table,entry,method,width_bits,"
               "depth_words,banks,technology,source\n");
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < TESSEL_ACTION_COUNT; a++) {
            const tessel_component_energy *e = rows[i].e;
            fprintf(f, "%s,%s,%.17g,%s,%.17g,%.17g,", rows[i].name, rows[i].cls,
                    rows[i].instances, tessel_action_name((tessel_action)a), e->pj[a],
                    e->area_um2);
            tessel_csv_field(f, e->table);
            fputc(',', f);
            tessel_csv_field(f, e->entry);
            fprintf(f, ",%s,%u,%.17g,%u,%s,", e->method, e->width_bits, e->depth_words,
                    e->banks, e->technology);
            tessel_csv_field(f, e->source);
            fputc('\n', f);
        }
}

static void print_table(const energy_row *rows, size_t n, double total_area)
{
    for (size_t i = 0; i < n; i++) {
        const tessel_component_energy *e = rows[i].e;
        printf("%s: class %s x %.0f, priced by %s entry %s (%s)\n", rows[i].name, rows[i].cls,
               rows[i].instances, e->table, e->entry, e->method);
        printf("  attributes: width %u bits", e->width_bits);
        if (e->depth_words > 0)
            printf(", depth %.0f words (%.0f bytes)", e->depth_words,
                   e->depth_words * e->width_bits / 8.0);
        if (e->banks)
            printf(", %u bank%s", e->banks, e->banks == 1 ? "" : "s");
        if (e->technology[0])
            printf(", %s", e->technology);
        printf("\n  area %.6g um^2 each\n ", e->area_um2);
        for (int a = 0; a < TESSEL_ACTION_COUNT; a++)
            printf(" %s %.6g", tessel_action_name((tessel_action)a), e->pj[a]);
        printf(" pJ\n  source: %s\n", e->source);
    }
    printf("total area %.6g um^2 (%.4g mm^2)\n", total_area, total_area * 1e-6);
}

int cmd_energy(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("energy", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    if (cli_positionals(&args) != 1)
        return cli_usage_error("energy", "expected one SPEC (see tessel energy --help)");
    const char *out = cli_value(&args, OPT_OUTPUT);
    if (out && !out[0])
        return cli_usage_error("energy", "--output needs a file name");
    char *sets[CLI_MAX_ARGS];
    size_t nsets = 0;
    int rc = CLI_EXIT_OK;
    for (int i = 0; i < args.count && !rc; i++)
        if (args.option[i] == OPT_SET && (rc = cli_set_arg("energy", args.value[i],
                                                            &sets[nsets])) == CLI_EXIT_OK)
            nsets++;
    tessel_spec *spec = NULL;
    tessel_energy_db *db = NULL;
    if (!rc) {
        tessel_diag_list errors;
        tessel_diag_list_init(&errors, NULL);
        int lrc = tessel_spec_load(cli_positional(&args, 0), (const char *const *)sets, nsets,
                                   NULL, &spec, &errors);
        rc = lrc ? cli_report_list("energy", &errors, lrc) : CLI_EXIT_OK;
        if (!lrc)
            tessel_diag_list_free(&errors);
    }
    tessel_design_energy de;
    if (!rc)
        rc = cli_energy_resolve("energy", spec, &db, &de);
    if (!rc) {
        energy_row rows[2 * TESSEL_SPEC_MAX_LEVELS + 2];
        size_t n = rows_of(spec, &de, rows, sizeof(rows) / sizeof(rows[0]));
        print_table(rows, n, de.area_um2);
        if (out) {
            cli_output o;
            rc = cli_output_open(&o, out);
            if (!rc) {
                write_csv(o.stream, rows, n);
                rc = cli_output_close(&o, !ferror(o.stream));
            }
        }
    }
    tessel_energy_db_free(&db);
    tessel_spec_free(&spec);
    for (size_t i = 0; i < nsets; i++)
        free(sets[i]);
    return rc;
}

/* Energy resolution on the command line: see energy_cli.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "energy_cli.h"

double cli_energy_instances(const tessel_spec *spec, int level, const char *what)
{
    double pes = spec->compute.pes ? spec->compute.pes : 1;
    if (level >= 0)
        return spec->level[level].instances ? spec->level[level].instances : 1;
    if (strcmp(what, "MAC") == 0)
        return pes * (spec->compute.macs_per_pe ? spec->compute.macs_per_pe : 1);
    return pes;
}

/* "priced: DRAM (LPDDR4), ...; not priced: PEB" after a failed resolution:
 * a component that resolved has its method set. */
static void print_priced(const char *cmd, const tessel_spec *spec, const tessel_design_energy *de)
{
    char ok[1024] = "", bad[512] = "";
    size_t no = 0, nb = 0;
    unsigned nl = spec->nlevels < TESSEL_SPEC_MAX_LEVELS ? spec->nlevels : TESSEL_SPEC_MAX_LEVELS;
    for (unsigned l = 0; l <= nl + 1; l++) {
        const tessel_component_energy *ce = l < nl ? &de->level[l] : l == nl ? &de->mac
                                                                               : &de->intersect;
        const char *name = l < nl ? spec->level[l].name : l == nl ? "MAC" : "intersect";
        if (l == nl + 1 && !spec->compute.intersect.cls[0])
            break;
        if (ce->method[0] && no < sizeof(ok))
            no += (size_t)snprintf(ok + no, sizeof(ok) - no, "%s%s (%s, %s)", no ? ", " : "",
                                   name, ce->entry, ce->method);
        else if (!ce->method[0] && nb < sizeof(bad))
            nb += (size_t)snprintf(bad + nb, sizeof(bad) - nb, "%s%s", nb ? ", " : "", name);
    }
    fprintf(stderr, "tessel %s: priced: %s; not priced: %s\n", cmd, no ? ok : "nothing",
            nb ? bad : "nothing");
}

void cli_energy_warn(const tessel_spec *spec, const tessel_energy_db *db,
                     const tessel_design_energy *de)
{
    tessel_diag_list warnings;
    tessel_diag_list_init(&warnings, NULL);
    tessel_spec_plausibility(spec, &warnings);
    if (db)
        tessel_energy_warnings(db, spec, de, &warnings);
    cli_print_warnings(&warnings);
    tessel_diag_list_free(&warnings);
}

void cli_energy_warn_design(const tessel_spec *spec, const tessel_energy_db *db)
{
    tessel_design_energy *de = malloc(sizeof(*de));
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    /* a component that does not resolve is the command's own error later;
     * here it only drops the per-level warnings */
    int ok = de && tessel_energy_design(db, spec, de, &errors) == 0;
    tessel_diag_list_free(&errors);
    cli_energy_warn(spec, db, ok ? de : NULL);
    free(de);
}

int cli_energy_resolve(const char *cmd, const tessel_spec *spec, tessel_energy_db **db,
                       tessel_design_energy *de)
{
    tessel_diag_list errors;
    tessel_diag_list_init(&errors, NULL);
    memset(de, 0, sizeof(*de));
    int rc = tessel_energy_db_load(spec, NULL, db, &errors);
    if (rc) {
        cli_energy_warn(spec, NULL, NULL);
        return cli_report_list(cmd, &errors, rc);
    }
    rc = tessel_energy_design(*db, spec, de, &errors);
    cli_energy_warn(spec, *db, rc ? NULL : de);
    if (rc) {
        char buf[1400];
        for (size_t i = 0; i < errors.count; i++) {
            tessel_diag_format(&errors.items[i], buf, sizeof(buf));
            fprintf(stderr, "%s\n", buf);
        }
        print_priced(cmd, spec, de);
        size_t n = errors.count + errors.dropped;
        fprintf(stderr, "tessel %s: %zu error%s\n", cmd, n, n == 1 ? "" : "s");
        tessel_diag_list_free(&errors);
        tessel_energy_db_free(db);
        return cli_exit_status(rc);
    }
    tessel_diag_list_free(&errors);
    return 0;
}
